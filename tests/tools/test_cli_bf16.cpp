// test_cli_bf16.cpp - tpusim gemm --dtype bf16 run as a program: random operands (edge values
// too) passing the tool's own checks, and bfloat16 or float32 .npy operands whose C, read back
// from --out (float32 or bfloat16), matches bf16_ref.h's plain loop here; tpusim bench's int8
// and bf16 rows side by side; a model with a bf16 input and output through tpuc and tpusim run;
// the usage errors of the bf16 options. The runs need the verilated
// core's bf16 path (ISA 1.3).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "io/npy.h"
#include "sim/fp.h"
#include "sim/tpusim.h"
#include "tests/support/bf16_ref.h"
#include "tests/support/fp_values.h"
#include "tests/support/io_test.h"
#include "tests/support/progs.h"
#include "tests/support/tool_test.h"

namespace
{

using io_test::encode;
using tool_test::Result;
using tool_test::spit;

// The smallest array size built (fast runs).
uint32_t small_n()
{
    uint32_t sizes[64];
    return tpusim_arrays(sizes, 64) > 0 ? sizes[0] : 16;
}

class CliBf16 : public tool_test::ToolTest
{
  protected:
    CliBf16() : ToolTest("test_cli_bf16") {}
    Result gemm(const std::string &args) const
    {
        return tool("gemm --dtype bf16 --array " + std::to_string(small_n()) + " " + args);
    }
};

// Shapes not multiples of N, K = 1 and K tails of at most N/2, edge values: the tool's checks
// (golden model and its reference) pass.
TEST_F(CliBf16, RandomGemmsPass)
{
    const uint32_t n = small_n();
    const std::string h = std::to_string(n / 2), h1 = std::to_string(n + n / 2);
    const std::vector<std::string> runs = {
        "--m 1 --k 1 --n 1",
        "--m 5 --k 1 --n 7 --bias --relu",
        "--m 9 --k " + h + " --n 6 --out-dtype bf16",
        "--m 13 --k " + h1 + " --n 11 --bias",
        "--m 20 --k 37 --n 9 --edge-values --bias --relu",
        "--m 7 --k 3 --n 21 --edge-values --out-dtype bf16 --seed 5",
    };
    for (const std::string &args : runs) {
        SCOPED_TRACE(args);
        const Result r = gemm(args);
        EXPECT_EQ(r.code, 0) << r.err;
        EXPECT_NE(r.out.find("(A bfloat16, B bfloat16, C "), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("\nC reference:               match\n"), std::string::npos) << r.out;
    }
}

struct FileCase {
    const char *name;
    uint32_t m, k, n;
    bool f32_in, bias, relu, out_bf16;
};

void PrintTo(const FileCase &c, std::ostream *os) { *os << c.name; }

class CliBf16Files : public CliBf16, public ::testing::WithParamInterface<FileCase>
{
};

// A and B as bfloat16 ('<V2') or float32 (the tool rounds them to nearest even), C from --out
// against the reference computed here.
TEST_P(CliBf16Files, MatchesReference)
{
    const FileCase &fc = GetParam();
    const uint32_t n = small_n();
    tpu_rng rng{fc.m * 1000003ull + fc.k * 1009 + fc.n};
    std::vector<uint16_t> a(size_t{fc.m} * fc.k), b(size_t{fc.k} * fc.n);
    std::vector<uint32_t> af(a.size()), bf(b.size()), bias(fc.n);
    // bfloat16 files hold the bits as drawn (NaN payloads and subnormals too); float32 files any
    // bits, which the tool rounds to nearest even as sim/fp.h does.
    for (size_t i = 0; i < a.size(); i++)
        a[i] = fc.f32_in ? tpusim_fp32_to_bf16(af[i] = rng_fp32(&rng)) : rng_bf16(&rng);
    for (size_t i = 0; i < b.size(); i++)
        b[i] = fc.f32_in ? tpusim_fp32_to_bf16(bf[i] = rng_fp32(&rng)) : rng_bf16(&rng);
    for (uint32_t &x : bias)
        x = rng_fp32(&rng);
    if (fc.f32_in) {
        spit(dir / "a.npy", encode(NPY_FLOAT32, {fc.m, fc.k}, af.data()));
        spit(dir / "b.npy", encode(NPY_FLOAT32, {fc.k, fc.n}, bf.data()));
    } else {
        spit(dir / "a.npy", encode(NPY_BFLOAT16, {fc.m, fc.k}, a.data()));
        spit(dir / "b.npy", encode(NPY_BFLOAT16, {fc.k, fc.n}, b.data(), 2));
    }
    std::string args =
        "--a " + quoted("a.npy") + " --b " + quoted("b.npy") + " --out " + quoted("c.npy");
    if (fc.bias) {
        spit(dir / "bias.npy", encode(NPY_FLOAT32, {fc.n}, bias.data()));
        args += " --bias " + quoted("bias.npy");
    }
    if (fc.relu)
        args += " --relu";
    if (fc.out_bf16)
        args += " --out-dtype bf16";
    const Result r = gemm(args);
    ASSERT_EQ(r.code, 0) << r.err;

    npy_array c;
    char err[256] = "";
    ASSERT_EQ(npy_load(path("c.npy").c_str(), &c, err, sizeof err), 0) << err;
    EXPECT_EQ(c.dtype, fc.out_bf16 ? NPY_V2 : NPY_FLOAT32); // '<V2' reads as void16
    ASSERT_EQ(c.ndim, 2);
    ASSERT_EQ(c.shape[0], fc.m);
    ASSERT_EQ(c.shape[1], fc.n);
    auto av = [&](uint32_t i, uint32_t k) { return a[size_t{i} * fc.k + k]; };
    auto bv = [&](uint32_t k, uint32_t j) { return b[size_t{k} * fc.n + j]; };
    size_t bad = 0;
    for (uint32_t i = 0; i < fc.m; i++)
        for (uint32_t j = 0; j < fc.n; j++) {
            const uint32_t want =
                bf16_ref::gemm_elem(av, bv, fc.k, n, i, j, fc.bias, bias[j], fc.relu);
            const size_t idx = size_t{i} * fc.n + j;
            const uint32_t got = fc.out_bf16 ? static_cast<const uint16_t *>(c.data)[idx]
                                             : static_cast<const uint32_t *>(c.data)[idx];
            bad += got != (fc.out_bf16 ? tpusim_fp32_to_bf16(want) : want);
        }
    EXPECT_EQ(bad, 0u);
    npy_free(&c);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CliBf16Files,
    ::testing::Values(FileCase{"plain", 7, 9, 5, false, false, false, false},
                      FileCase{"k1", 6, 1, 11, false, true, false, false},
                      FileCase{"bias_relu_bf16_out", 19, 10, 13, false, true, true, true},
                      FileCase{"f32_in", 16, 21, 16, true, false, true, false},
                      FileCase{"f32_in_bf16_out", 9, 33, 3, true, true, false, true}),
    [](const ::testing::TestParamInfo<FileCase> &i) { return std::string(i.param.name); });

// tpusim bench --dtype int8,bf16: each size's int8 row, then its bf16 row ending in the ratio
// of their cycles/s.
TEST_F(CliBf16, BenchRowsSideBySide)
{
    const Result r = tool("bench --array " + std::to_string(small_n()) +
                          " --sizes 5,16 --dtype int8,bf16 --repeat 1");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find(" bf16/int8\n"), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 5) << r.out;
    std::istringstream lines(r.out);
    std::string line;
    std::getline(lines, line); // the header
    for (const char *size : {" 5 x 5 x 5 ", " 16 x 16 x 16 "}) {
        std::string int8_row, bf16_row;
        std::getline(lines, int8_row);
        std::getline(lines, bf16_row);
        EXPECT_NE(int8_row.find(" int8 "), std::string::npos) << int8_row;
        EXPECT_NE(int8_row.find(size), std::string::npos) << int8_row;
        EXPECT_NE(bf16_row.find(" bf16 "), std::string::npos) << bf16_row;
        EXPECT_NE(bf16_row.find(size), std::string::npos) << bf16_row;
        // bf16 rows end in the speed ratio: one more column than int8 rows.
        std::istringstream a(int8_row), b(bf16_row);
        const auto words = [](std::istringstream &s) {
            return std::distance(std::istream_iterator<std::string>(s),
                                 std::istream_iterator<std::string>());
        };
        EXPECT_EQ(words(b), words(a) + 1) << int8_row << "\n" << bf16_row;
    }
}

// The int8 options, a wrong dtype or a bf16 option without --dtype bf16: usage errors (exit 2)
// naming what is wrong, before any device runs.
// A model whose input and output are bf16 (package version 3), compiled by tpuc --precision bf16
// and run by tpusim run in two batches: its input from a bfloat16 .npy ('<V2', as ml_dtypes saves
// it) or from float32 (rounded to nearest even, with a note), its output written as bfloat16; the
// device's dot is bf16_ref's, the host program's convert rounds it to nearest even.
TEST_F(CliBf16, ModelWithBf16InputAndOutput)
{
    const uint32_t n = small_n(), rows = 10, batch = 5, k = n + 3, cols = 3;
    tpu_rng rng{77};
    // Values in [-2, 2] with three decimals: the float32 file's are rounded to bf16 by the run.
    auto draw = [&](float *f) {
        *f = (float)rng_below(&rng, 4001) / 1000.0f - 2;
        uint32_t bits;
        memcpy(&bits, f, 4);
        return tpusim_fp32_to_bf16(bits);
    };
    std::vector<uint16_t> x(size_t{rows} * k), w(size_t{k} * cols);
    std::vector<float> xf(x.size());
    for (size_t i = 0; i < x.size(); i++)
        x[i] = draw(&xf[i]);
    std::string lit;
    for (size_t i = 0; i < w.size(); i++) {
        float f;
        w[i] = draw(&f);
        const uint32_t bits = uint32_t{w[i]} << 16; // the bf16 value, printed exactly
        memcpy(&f, &bits, 4);
        char v[32];
        snprintf(v, sizeof v, "%.9g", (double)f);
        lit += (i % cols ? ", " : i ? "}, {" : "{") + std::string(v);
    }
    const std::string shape = "[" + std::to_string(batch) + "," + std::to_string(k) + "]";
    spit(dir / "m.hlo", "HloModule m\nENTRY e {\n  x = bf16" + shape + " parameter(0)\n" +
                            "  w = bf16[" + std::to_string(k) + ",3] constant({" + lit + "}})\n" +
                            "  d = f32[" + std::to_string(batch) + ",3] dot(x, w), " +
                            "lhs_contracting_dims={1}, rhs_contracting_dims={0}\n" +
                            "  ROOT y = bf16[" + std::to_string(batch) + ",3] convert(d)\n}\n");
    const std::string tpuc = std::string(TPU_BINARY_DIR "/bin/tpuc ") + quoted("m.hlo") +
                             " --precision bf16 --quiet --array " + std::to_string(n) + " -o " +
                             quoted("m.tpub");
    ASSERT_EQ(std::system(tpuc.c_str()), 0) << tpuc;
    spit(dir / "x.npy", encode(NPY_BFLOAT16, {rows, k}, x.data()));
    spit(dir / "xf.npy", encode(NPY_FLOAT32, {rows, k}, xf.data()));
    auto av = [&](uint32_t i, uint32_t kk) { return x[size_t{i} * k + kk]; };
    auto bv = [&](uint32_t kk, uint32_t j) { return w[size_t{kk} * cols + j]; };
    for (const char *in : {"x.npy", "xf.npy"}) {
        SCOPED_TRACE(in);
        const Result r = tool("run " + quoted("m.tpub") + " --input " + quoted(in) + " --output " +
                              quoted("y.npy") + " --quiet");
        ASSERT_EQ(r.code, 0) << r.err;
        EXPECT_EQ(r.err.find("float32 rounded to nearest even") != std::string::npos,
                  std::string(in) == "xf.npy")
            << r.err;
        npy_array y;
        char err[256] = "";
        ASSERT_EQ(npy_load(path("y.npy").c_str(), &y, err, sizeof err), 0) << err;
        EXPECT_EQ(y.dtype, NPY_V2);
        ASSERT_EQ(y.count, size_t{rows} * cols);
        size_t bad = 0;
        for (uint32_t i = 0; i < rows; i++)
            for (uint32_t j = 0; j < cols; j++) {
                // Each batch is its own GEMM: row i is row i % batch of one.
                const uint32_t c = bf16_ref::gemm_elem(
                    [&](uint32_t ii, uint32_t kk) { return av(i - i % batch + ii, kk); }, bv, k, n,
                    i % batch, j, false, 0, false);
                bad += static_cast<const uint16_t *>(y.data)[size_t{i} * cols + j] !=
                       tpusim_fp32_to_bf16(c);
            }
        EXPECT_EQ(bad, 0u);
        npy_free(&y);
    }
    // An int8 file for it: its dtype and the one taken named.
    const std::vector<int8_t> bytes(size_t{rows} * k);
    spit(dir / "i.npy", encode(NPY_INT8, {rows, k}, bytes.data()));
    const Result r = tool("run " + quoted("m.tpub") + " --input " + quoted("i.npy"));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("dtype int8, but input 0 'x' bf16" + shape +
                         " is bfloat16 (--input-divide D converts integers)"),
              std::string::npos)
        << r.err;
}

TEST_F(CliBf16, UsageErrors)
{
    const struct {
        std::string args, what;
    } cases[] = {
        {"gemm --dtype bf16 --m 1 --k 1 --n 1 --requant 1,1", "usage"},
        {"gemm --dtype bf16 --m 1 --k 1 --n 1 --unsigned-a", "usage"},
        {"gemm --dtype fp8 --m 1 --k 1 --n 1", "--dtype"},
        {"gemm --dtype bf16 --m 1 --k 1 --n 1 --out-dtype int32", "--out-dtype"},
        {"gemm --m 1 --k 1 --n 1 --out-dtype bf16", "usage"},
        {"gemm --m 1 --k 1 --n 1 --edge-values", "usage"},
        {"gemm --dtype bf16 --a x.npy --b y.npy --edge-values", "usage"},
        {"bench --dtype fp8", "--dtype"},
        {"bench --dtype int8,", "--dtype"},
        {"bench --conv --dtype bf16", "usage"},
    };
    for (const auto &c : cases) {
        SCOPED_TRACE(c.args);
        const Result r = tool(c.args);
        EXPECT_EQ(r.code, 2) << r.err;
        EXPECT_EQ(r.err.rfind("tpusim: " + c.what + ": ", 0), 0u) << r.err;
    }
    // An int8 file where bf16 is wanted names its dtype and the ones taken.
    const int8_t x = 1;
    spit(dir / "a.npy", encode(NPY_INT8, {1, 1}, &x));
    const Result r = tool("gemm --dtype bf16 --a " + quoted("a.npy") + " --b " + quoted("a.npy"));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("expected bfloat16 or float32"), std::string::npos) << r.err;
}

} // namespace

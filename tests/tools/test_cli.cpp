// test_cli.cpp - the tpusim command-line tool (tools/tpusim), run as a program: GEMMs from files
// and random operands against a reference computed here, the JSON report, and every error class
// with its exit code and no output file left behind.
#include <gtest/gtest.h>
#include <jansson.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "io/npy.h"
#include "tests/support/io_test.h"
#include "tests/support/progs.h"
#include "tests/support/tool_test.h"

namespace fs = std::filesystem;

namespace
{

using io_test::encode;
using io_test::raw_npy;
using tool_test::Result;
using tool_test::slurp;
using tool_test::spit;

// The array sizes built in (make ARRAY=... chooses them), ascending.
std::vector<uint32_t> built_arrays()
{
    uint32_t sizes[64];
    const int n = tpusim_arrays(sizes, 64);
    return std::vector<uint32_t>(sizes, sizes + n);
}

// The smallest built array size (fast runs) and the next one, as "--array N" options.
uint32_t small_n() { return built_arrays().front(); }

std::string small_array() { return " --array " + std::to_string(small_n()) + " "; }

std::string next_array()
{
    const std::vector<uint32_t> b = built_arrays();
    return " --array " + std::to_string(b.size() > 1 ? b[1] : b[0]) + " ";
}

class Cli : public tool_test::ToolTest
{
  protected:
    Cli() : ToolTest("test_cli") {}
    std::string arg(const std::string &file) const { return quoted(file); }
    Result run(const std::string &args) const { return tool(args); }
};

// One line "tpusim: <what>: <why>\n" naming `what`, with `why` somewhere in it.
void expect_error_line(const Result &r, int code, const std::string &what, const std::string &why)
{
    EXPECT_EQ(r.code, code) << r.err;
    EXPECT_EQ(r.err.rfind("tpusim: " + what + ": ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(why), std::string::npos) << "want '" << why << "' in: " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_F(Cli, MalformedOperandsAreInputErrors)
{
    const std::vector<int8_t> a(12, 1), b(12, 2);
    const std::vector<int32_t> bias(4, 3);
    const std::string good_a = encode(NPY_INT8, {3, 4}, a.data());
    const std::string good_b = encode(NPY_INT8, {4, 3}, b.data());
    spit(dir / "a.npy", good_a);
    spit(dir / "b.npy", good_b);
    const std::vector<int32_t> a32(12, 1);
    const std::vector<uint8_t> au(12, 200);
    const std::vector<float> af(12, 1.0f);
    const std::vector<uint16_t> a16(12, 0x3c00); // 1.0 in float16, 0.0078 in bfloat16

    struct Case {
        std::string role, bytes, why;
    };
    const std::vector<Case> cases = {
        {"a", "\x93NUMPX" + good_a.substr(6), "bad magic"},
        {"a", good_a.substr(0, 30), "truncated header"},
        {"b", good_b.substr(0, good_b.size() - 1), "truncated data"},
        {"a", encode(NPY_INT32, {3, 4}, a32.data()), "dtype int32, expected int8"},
        {"a", encode(NPY_FLOAT32, {3, 4}, af.data()), "dtype float32, expected int8"},
        {"a", encode(NPY_UINT8, {3, 4}, au.data()), "--unsigned-a"},
        {"a", encode(NPY_FLOAT16, {3, 4}, a16.data()), "dtype float16, expected int8 for A [M,K]"},
        {"b", encode(NPY_BFLOAT16, {4, 3}, a16.data()),
         "dtype void16 (as ml_dtypes saves bfloat16), expected int8 for B [K,N]"},
        {"bias", raw_npy("{'descr': '|V2', 'fortran_order': False, 'shape': (3,), }", "abcdef"),
         "dtype void16 (as ml_dtypes saves bfloat16), expected int32 for the bias [N]"},
        {"a",
         raw_npy("{'descr': '<i2', 'fortran_order': False, 'shape': (3, 4), }",
                 std::string(24, '\0')),
         "unsupported dtype '<i2'"},
        {"b",
         raw_npy("{'descr': '|i1', 'fortran_order': True, 'shape': (4, 3), }",
                 std::string(12, '\0')),
         "Fortran"},
        {"bias",
         raw_npy("{'descr': '>i4', 'fortran_order': False, 'shape': (3,), }",
                 std::string(12, '\0')),
         "big-endian"},
        {"a", encode(NPY_INT8, {12}, a.data()), "has 1 dimension, expected 2"},
        {"bias", encode(NPY_INT32, {3, 1}, bias.data()), "has 2 dimensions, expected 1"},
        {"a", encode(NPY_INT8, {0, 4}, a.data()), "every dimension must be 1"},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.why);
        spit(dir / "bad.npy", c.bytes);
        std::string args = "gemm --a " + arg(c.role == "a" ? "bad.npy" : "a.npy") + " --b " +
                           arg(c.role == "b" ? "bad.npy" : "b.npy") + " --out " + arg("c.npy") +
                           " --json " + arg("r.json") + small_array();
        if (c.role == "bias")
            args += " --bias " + arg("bad.npy");
        const Result r = run(args);
        expect_error_line(r, 2, path("bad.npy"), c.why);
        EXPECT_TRUE(r.out.empty()) << r.out;
        EXPECT_EQ(leftovers({"a.npy", "b.npy", "bad.npy"}), std::vector<std::string>{});
    }
    const Result r = run("gemm --a " + arg("missing.npy") + " --b " + arg("b.npy"));
    expect_error_line(r, 2, path("missing.npy"), "cannot open");
}

TEST_F(Cli, MismatchedShapesNameBothFiles)
{
    const std::vector<int8_t> v(64, 1);
    const std::vector<int32_t> w(64, 1);
    spit(dir / "a.npy", encode(NPY_INT8, {3, 5}, v.data()));
    spit(dir / "b.npy", encode(NPY_INT8, {4, 7}, v.data()));
    spit(dir / "b5.npy", encode(NPY_INT8, {5, 7}, v.data()));
    spit(dir / "bias.npy", encode(NPY_INT32, {6}, w.data()));
    spit(dir / "p.npy", encode(NPY_INT32, {3, 7}, w.data()));
    std::vector<int32_t> p(14, 1);
    p[7 + 2] = 64; // column 2's shift
    spit(dir / "pbad.npy", encode(NPY_INT32, {2, 7}, p.data()));
    const std::string ab5 =
        "gemm" + small_array() + "--a " + arg("a.npy") + " --b " + arg("b5.npy");

    Result r = run("gemm" + small_array() + "--a " + arg("a.npy") + " --b " + arg("b.npy"));
    expect_error_line(r, 2, "shapes",
                      path("a.npy") + " is [3, 5] but " + path("b.npy") + " is [4, 7]");
    r = run(ab5 + " --bias " + arg("bias.npy"));
    expect_error_line(r, 2, "shapes", path("bias.npy") + " is [6] but " + path("b5.npy"));
    r = run(ab5 + " --requant-params " + arg("p.npy"));
    expect_error_line(r, 2, "shapes", path("p.npy") + " is [3, 7]");
    r = run(ab5 + " --requant-params " + arg("pbad.npy"));
    expect_error_line(r, 2, path("pbad.npy"), "shift of column 2 is 64");
}

// ------------------------------------------------------------ tool: runs --

// Random operands: the tool's own checks (golden model and reference) must pass.
TEST_F(Cli, RandomGemmsPass)
{
    std::vector<std::string> runs = {
        small_array() + "--m 1 --k 1 --n 1",
        small_array() + "--m 5 --k 1 --n 7",
        small_array() + "--m 9 --k 13 --n 6 --bias --relu",
        small_array() + "--m 8 --k 8 --n 8 --seed 7 --unsigned-a",
        next_array() + "--m 33 --k 17 --n 40 --bias --relu --requant 77,10",
        next_array() + "--m 3 --k 100 --n 9 --requant -5,3 --unsigned-a",
        next_array() + "--m 64 --k 1 --n 64 --mem-latency 3 --mem-bandwidth 8",
    };
    const std::vector<uint32_t> b = built_arrays();
    if (std::find(b.begin(), b.end(), 16u) != b.end())
        runs.push_back("--m 20 --k 50 --n 30 --bias"); // the default array size
    for (const std::string &args : runs) {
        SCOPED_TRACE(args);
        const Result r = run("gemm " + args);
        EXPECT_EQ(r.code, 0) << r.err;
        EXPECT_TRUE(r.err.empty()) << r.err; // no progress bar without a terminal
        EXPECT_NE(r.out.find("\nbit-exact vs golden model: yes\n"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("\nC reference:               match\n"), std::string::npos) << r.out;
    }
    const Result q = run("gemm" + small_array() + "--m 4 --k 4 --n 4 --quiet");
    EXPECT_EQ(q.code, 0) << q.err;
    EXPECT_EQ(q.out + q.err, "");
}

struct FileCase {
    const char *name;
    uint32_t m, k, n;
    int next_array; // the second smallest array size built, else the smallest
    int unsigned_a, bias, relu;
    int requant; // 0 int32 out, 1 --requant MULT,SHIFT, 2 --requant-params
};

void PrintTo(const FileCase &c, std::ostream *os) { *os << c.name; }

class CliFiles : public Cli, public ::testing::WithParamInterface<FileCase>
{
};

// Operands written as .npy, C read back from --out and compared with gemm_reference.
TEST_P(CliFiles, MatchesReference)
{
    const FileCase &fc = GetParam();
    tpu_rng rng{fc.m * 1000003ull + fc.k * 1009 + fc.n};
    gemm_desc d{};
    d.m = fc.m;
    d.k = fc.k;
    d.n = fc.n;
    d.unsigned_a = fc.unsigned_a;
    d.bias = fc.bias;
    d.relu = fc.relu;
    d.out_int8 = fc.requant != 0;
    std::vector<int8_t> a((size_t)d.m * d.k), b((size_t)d.k * d.n);
    rng_fill_int8(&rng, a.data(), a.size());
    rng_fill_int8(&rng, b.data(), b.size());
    std::vector<int32_t> params(3 * d.n, 0);
    for (uint32_t j = 0; j < d.n; j++) {
        params[j] = (int32_t)rng_range(&rng, -40000, 40000);
        params[d.n + j] = fc.requant == 2 ? (int32_t)rng_range(&rng, -300, 300) : 93;
        params[2 * d.n + j] = fc.requant == 2 ? (int32_t)rng_below(&rng, 64) : 12;
    }
    if (fc.requant == 2)
        params[2 * d.n] = 0; // a column without rounding

    spit(dir / "a.npy", encode(fc.unsigned_a ? NPY_UINT8 : NPY_INT8, {d.m, d.k}, a.data()));
    spit(dir / "b.npy", encode(NPY_INT8, {d.k, d.n}, b.data(), 2));
    std::string args = "gemm" + (fc.next_array ? next_array() : small_array()) + "--a " +
                       arg("a.npy") + " --b " + arg("b.npy") + " --out " + arg("c.npy");
    if (fc.bias) {
        spit(dir / "bias.npy", encode(NPY_INT32, {d.n}, params.data()));
        args += " --bias " + arg("bias.npy");
    }
    if (fc.relu)
        args += " --relu";
    if (fc.unsigned_a)
        args += " --unsigned-a";
    if (fc.requant == 1)
        args += " --requant 93,12";
    if (fc.requant == 2) {
        spit(dir / "p.npy", encode(NPY_INT32, {2, d.n}, params.data() + d.n));
        args += " --requant-params " + arg("p.npy");
    }
    const Result r = run(args);
    ASSERT_EQ(r.code, 0) << r.err;

    npy_array c;
    char err[256] = "";
    ASSERT_EQ(npy_load(path("c.npy").c_str(), &c, err, sizeof err), 0) << err;
    EXPECT_EQ(c.dtype, fc.requant ? NPY_INT8 : NPY_INT32);
    ASSERT_EQ(c.ndim, 2);
    EXPECT_EQ(c.shape[0], d.m);
    EXPECT_EQ(c.shape[1], d.n);
    const size_t esize = fc.requant ? 1 : 4;
    std::vector<uint8_t> want((size_t)d.m * d.n * esize);
    gemm_reference(&d, a.data(), b.data(), params.data(), want.data());
    EXPECT_EQ(std::memcmp(c.data, want.data(), want.size()), 0);
    npy_free(&c);
    EXPECT_EQ(leftovers({"a.npy", "b.npy", "bias.npy", "p.npy", "c.npy"}),
              std::vector<std::string>{});
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CliFiles,
    ::testing::Values(FileCase{"plain", 7, 9, 5, 0, 0, 0, 0, 0},
                      FileCase{"k1", 6, 1, 11, 0, 0, 1, 0, 0},
                      FileCase{"bias_relu", 19, 10, 13, 0, 0, 1, 1, 0},
                      FileCase{"relu_only", 16, 16, 16, 1, 0, 0, 1, 0},
                      FileCase{"requant", 21, 30, 9, 1, 0, 1, 1, 1},
                      FileCase{"requant_nobias", 9, 8, 17, 1, 0, 0, 0, 1},
                      FileCase{"per_column", 10, 20, 30, 1, 0, 1, 0, 2},
                      FileCase{"unsigned", 12, 25, 7, 0, 1, 1, 1, 0},
                      FileCase{"unsigned_per_column", 40, 8, 20, 1, 1, 0, 1, 2}),
    [](const ::testing::TestParamInfo<FileCase> &i) { return std::string(i.param.name); });

TEST_F(Cli, JsonReportHasTheFigures)
{
    const double n2 = small_n() * small_n();
    const Result r = run("gemm" + small_array() +
                         "--m 24 --k 20 --n 12 --bias --requant 5,4 --json " + arg("r.json"));
    ASSERT_EQ(r.code, 0) << r.err;
    json_error_t jerr;
    json_t *j = json_load_file(path("r.json").c_str(), 0, &jerr);
    ASSERT_NE(j, nullptr) << jerr.text;
    auto num = [&](const char *obj, const char *key) {
        json_t *o = obj ? json_object_get(j, obj) : j;
        json_t *v = json_object_get(o, key);
        EXPECT_TRUE(json_is_number(v)) << (obj ? obj : "") << "." << key;
        return json_number_value(v);
    };
    EXPECT_EQ(num("gemm", "m"), 24);
    EXPECT_EQ(num("gemm", "k"), 20);
    EXPECT_EQ(num("gemm", "n"), 12);
    EXPECT_STREQ(json_string_value(json_object_get(json_object_get(j, "gemm"), "c_dtype")), "int8");
    EXPECT_EQ(num(nullptr, "array_n"), small_n());
    tpusim_config defaults;
    tpusim_config_default(&defaults);
    EXPECT_EQ(num("memory", "latency_cycles"), defaults.mem_latency);
    const double bw = defaults.mem_bytes_per_cycle;
    EXPECT_EQ(num("memory", "bytes_per_cycle"), bw);
    const double cycles = num("cycles", "total");
    EXPECT_EQ(num(nullptr, "macs"), 24 * 20 * 12);
    EXPECT_EQ(num(nullptr, "ideal_cycles"), 24 * 20 * 12 / n2);
    EXPECT_GE(cycles, num(nullptr, "ideal_cycles"));
    EXPECT_NEAR(num(nullptr, "mxu_utilization_percent"), 100 * 24 * 20 * 12 / n2 / cycles, 1e-9);
    EXPECT_GT(num("cycles", "firmware_overhead"), 0);
    EXPECT_GT(num("cycles", "control_processor"), 0);
    EXPECT_EQ(num("lower_bound", "compute_cycles"), 24 * 20 * 12 / n2);
    const double bytes = 24 * 20 + 20 * 12 + 24 * 12 + 12 * 12; // A, B, C int8, params
    EXPECT_EQ(num("lower_bound", "memory_bytes"), bytes);
    EXPECT_EQ(num("lower_bound", "memory_cycles"), bytes / bw);
    EXPECT_NEAR(num("lower_bound", "cycles_over_bound"),
                cycles / std::max(24 * 20 * 12 / n2, bytes / bw), 1e-9);
    for (const char *s : {"hazard", "unit", "weight", "mem", "issue"})
        num("stall_cycles", s);
    EXPECT_GE(num("dma", "read_bytes"), 24 * 20 + 20 * 12);
    EXPECT_GE(num("dma", "written_bytes"), 24 * 12);
    EXPECT_EQ(num("counters", "retired"), num(nullptr, "instructions"));
    EXPECT_GT(num("simulation", "wall_seconds"), 0);
    EXPECT_GT(num("simulation", "cycles_per_second"), 0);
    EXPECT_TRUE(json_is_true(json_object_get(j, "bit_exact_vs_golden")));
    EXPECT_TRUE(json_is_true(json_object_get(j, "matches_reference")));
    // The text report shows the same run.
    EXPECT_NE(r.out.find("\nMACs:                      5,760\n"), std::string::npos) << r.out;
    std::string total = std::to_string((long long)cycles);
    for (int i = (int)total.size() - 3; i > 0; i -= 3)
        total.insert((size_t)i, ",");
    EXPECT_NE(r.out.find("\ncycles:                    " + total + "\n"), std::string::npos)
        << r.out;
    json_decref(j);
}

TEST_F(Cli, TraceIsWritten)
{
    for (const char *file : {"t.vcd", "t.fst"}) {
        const Result r = run("gemm" + small_array() + "--m 8 --k 8 --n 8 --quiet --trace " +
                             arg(file) + " --trace-window 10:200");
        EXPECT_EQ(r.code, 0) << r.err;
        EXPECT_EQ(r.err, "");
        EXPECT_TRUE(fs::exists(dir / file) && fs::file_size(dir / file) > 0) << file;
    }
    EXPECT_EQ(slurp(dir / "t.vcd").rfind("$", 0), 0u); // VCD starts with a $ keyword
    // A window after the run: an empty trace, with a warning.
    const Result r = run("gemm" + small_array() + "--m 8 --k 8 --n 8 --quiet --trace " +
                         arg("late.fst") + " --trace-window 1000000:");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err, "tpusim: warning: --trace-window starts at cycle 1000000, after the run "
                     "ended: " +
                         path("late.fst") + " holds no cycles\n");
    EXPECT_TRUE(fs::exists(dir / "late.fst"));
}

// ----------------------------------------------------------- tool: errors --

TEST_F(Cli, UsageErrorsExit2)
{
    const char *cases[][2] = {
        {"", "usage"},
        {"frob", "usage"},
        {"gemm", "usage"},
        {"gemm --m 4 --k 4", "usage"},
        {"gemm --m 0 --k 1 --n 1", "--m"},
        {"gemm --m x --k 1 --n 1", "--m"},
        {"gemm --m -3 --k 1 --n 1", "--m"},
        {"gemm --m 1 --k 1 --n 99999999999", "--n"},
        {"gemm --a a.npy", "usage"},
        {"gemm --a a.npy --b b.npy --m 3", "usage"},
        {"gemm --m 1 --k 1 --n 1 --requant 3", "--requant"},
        {"gemm --m 1 --k 1 --n 1 --requant 3,64", "--requant"},
        {"gemm --m 1 --k 1 --n 1 --requant 3000000000,1", "--requant"},
        {"gemm --m 1 --k 1 --n 1 --requant-params p.npy", "usage"},
        {"gemm --a a.npy --b b.npy --requant 1,1 --requant-params p.npy", "usage"},
        {"gemm --m 1 --k 1 --n 1 --bogus", "usage"},
        {"gemm --m 1 --k 1 --n 1 --trace-window 5:10", "usage"},
        {"gemm --m 1 --k 1 --n 1 --trace t.txt", "--trace"},
        {"gemm --m 1 --k 1 --n 1 --trace t.vcd --trace-window 10:5", "--trace-window"},
        {"gemm --m 1 --k 1 --n 1 --array 0", "--array"},
        {"gemm --m 1 --k 1 --n 1 --mem-latency 0", "--mem-latency"},
        {"gemm --m 1 --k 1 --n 1 --mem-bandwidth 0", "--mem-bandwidth"},
        // Limits with sense: no access that takes hours, no bandwidth past the port's.
        {"gemm --m 1 --k 1 --n 1 --mem-latency 4294967295", "--mem-latency"},
        {"gemm --m 1 --k 1 --n 1 --mem-latency 65537", "--mem-latency"},
        {"gemm --m 1 --k 1 --n 1 --mem-bandwidth 4097", "--mem-bandwidth"},
        {"gemm --m 1 --k 1 --n 1 --max-cycles 1000000000001", "--max-cycles"},
        {"bench --mem-latency 70000", "--mem-latency"},
        {"gemm --m 1 --k 1 --n 1 --relu=1", "--relu"},
        {"gemm --m 1 --k 1 --n 1 --max-cycles", "--max-cycles"},
        {"gemm --m 1 --k 1 --n 1 stray", "usage"},
        {"gemm --m 100000 --k 100000 --n 100000", "shapes"},
        {"bench --sizes 0", "--sizes"},
        {"bench --sizes 8,x", "--sizes"},
        {"bench --sizes ,", "--sizes"},
        {"bench --array 0", "--array"},
        {"bench --repeat 0", "--repeat"},
        {"bench --repeat", "--repeat"},
        {"bench --bogus 1", "usage"},
    };
    for (const auto &c : cases) {
        SCOPED_TRACE(c[0]);
        const Result r = run(c[0]);
        EXPECT_EQ(r.code, 2) << r.err;
        EXPECT_EQ(r.err.rfind(std::string("tpusim: ") + c[1] + ": ", 0), 0u) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_TRUE(r.out.empty());
    }
}

TEST_F(Cli, BenchPrintsARowPerSize)
{
    const uint32_t n = small_n();
    const Result r = run("bench --array " + std::to_string(n) + " --sizes 5,16 --repeat 2");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    EXPECT_NE(r.out.find("cycles/s"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" 5 x 5 x 5 "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" 16 x 16 x 16 "), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3) << r.out;
}

TEST_F(Cli, HelpAndVersion)
{
    for (const char *args : {"--help", "gemm --help"}) {
        const Result r = run(args);
        EXPECT_EQ(r.code, 0);
        EXPECT_NE(r.out.find("exit codes: 0 success, 1 result mismatch"), std::string::npos);
        EXPECT_NE(r.out.find("--requant-params"), std::string::npos);
        EXPECT_NE(r.out.find("--trace-window"), std::string::npos);
    }
    const Result r = run("--version");
    EXPECT_EQ(r.code, 0);
    EXPECT_EQ(r.out.rfind("tpusim ", 0), 0u);
    EXPECT_NE(r.out.find("array sizes built: " + std::to_string(small_n())), std::string::npos)
        << r.out;
}

TEST_F(Cli, UnbuiltArraySizeIsADeviceError)
{
    const std::vector<uint32_t> b = built_arrays();
    uint32_t n = 2;
    while (std::find(b.begin(), b.end(), n) != b.end())
        n++;
    const Result r =
        run("gemm --array " + std::to_string(n) + " --m 4 --k 4 --n 4 --out " + arg("c.npy"));
    expect_error_line(r, 3, "device", std::to_string(n));
    EXPECT_EQ(leftovers({}), std::vector<std::string>{});
}

TEST_F(Cli, TimeoutIsADeviceErrorAndLeavesNoOutput)
{
    const Result r = run("gemm" + small_array() + "--m 64 --k 64 --n 64 --max-cycles 100 --out " +
                         arg("c.npy") + " --json " + arg("r.json"));
    expect_error_line(r, 3, "timeout", "");
    EXPECT_EQ(leftovers({}), std::vector<std::string>{});
}

TEST_F(Cli, UnwritableOutputLeavesNothing)
{
    // C can be written, the report cannot: neither is left.
    Result r = run("gemm" + small_array() + "--m 4 --k 4 --n 4 --out " + arg("c.npy") + " --json " +
                   arg("nodir/r.json"));
    expect_error_line(r, 2, path("nodir/r.json"), "cannot create");
    EXPECT_EQ(leftovers({}), std::vector<std::string>{});
    // The report's name is taken by a directory: the rename fails after C's went through.
    fs::create_directory(dir / "r.json");
    r = run("gemm" + small_array() + "--m 4 --k 4 --n 4 --out " + arg("c.npy") + " --json " +
            arg("r.json"));
    expect_error_line(r, 2, path("r.json"), "cannot rename");
    EXPECT_EQ(leftovers({"r.json"}), std::vector<std::string>{});
}

} // namespace

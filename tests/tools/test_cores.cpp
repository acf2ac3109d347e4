// test_cores.cpp - `tpusim gemm --cores` and `tpusim run --cores`, run as a program on the
// smallest array built (its chips N x 1, 2, 4, 8 are in the default build): a GEMM split by rows
// over the cores gives the lone core's C on ragged shapes, with consistent per-core figures; a
// package's batches side by side give the lone core's outputs byte for byte; usage errors.
#include <gtest/gtest.h>
#include <jansson.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/io_test.h"
#include "tests/support/runtime_models.h"
#include "tests/support/tool_test.h"

namespace
{

using io_test::encode;
using runtime_models::array_n;
using runtime_models::ModelA;
using tool_test::Result;
using tool_test::slurp;
using tool_test::spit;

class Cores : public tool_test::ToolTest
{
  protected:
    Cores() : ToolTest("test_cores") {}
    std::string arg(const std::string &file) const { return " " + quoted(file) + " "; }
    std::string array() const { return " --array " + std::to_string(array_n()) + " "; }
};

// One line "tpusim: <what>: <why>\n" naming `what`, with `why` in it; stdout empty.
void expect_error(const Result &r, int code, const std::string &what, const std::string &why)
{
    EXPECT_EQ(r.code, code) << r.err;
    EXPECT_EQ(r.err.rfind("tpusim: " + what + ": ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(why), std::string::npos) << "want '" << why << "' in: " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
}

// A JSON file, freed with the object.
struct Json {
    json_t *j = nullptr;
    explicit Json(const std::string &path)
    {
        json_error_t e;
        j = json_load_file(path.c_str(), 0, &e);
        EXPECT_NE(j, nullptr) << path << ": " << e.text;
    }
    ~Json() { json_decref(j); }
    Json(const Json &) = delete;
    Json &operator=(const Json &) = delete;
    json_t *at(const char *a, const char *b = nullptr) const
    {
        json_t *v = json_object_get(j, a);
        return b ? json_object_get(v, b) : v;
    }
    int64_t integer(const char *a, const char *b = nullptr) const
    {
        return (int64_t)json_integer_value(at(a, b));
    }
};

// The per-core figures of a gemm --cores report: C entries, rows split evenly over them (M < C
// leaves the last cores none), summing to M; the chip's clock no longer than the cores' cycles
// summed and no shorter than the slowest core's; every core with rows busy.
void expect_split(const Json &r, uint32_t m, uint32_t cores)
{
    ASSERT_EQ(r.integer("cores"), cores);
    json_t *per_core = r.at("per_core");
    ASSERT_EQ(json_array_size(per_core), cores);
    int64_t rows = 0, cycles = 0, slowest = 0;
    for (uint32_t k = 0; k < cores; k++) {
        json_t *c = json_array_get(per_core, k);
        const int64_t want = m / cores + (k < m % cores);
        EXPECT_EQ(json_integer_value(json_object_get(c, "rows")), want) << "core " << k;
        const int64_t cyc = json_integer_value(json_object_get(c, "cycles"));
        EXPECT_EQ(cyc > 0, want > 0) << "core " << k;
        EXPECT_EQ(json_integer_value(json_object_get(c, "mxu_busy")) > 0, want > 0);
        EXPECT_LE(json_integer_value(json_object_get(c, "mem_stall_cycles")), cyc);
        rows += want;
        cycles += cyc;
        slowest = std::max(slowest, cyc);
    }
    EXPECT_EQ(rows, m);
    const int64_t elapsed = r.integer("chip", "elapsed_cycles");
    EXPECT_LE(elapsed, cycles);
    EXPECT_GE(elapsed, slowest);
    EXPECT_EQ(r.integer("chip", "core_cycles"), cycles);
    EXPECT_EQ(json_is_true(r.at("bit_exact_vs_golden")), true);
}

// ---------------------------------------------------------------- gemm --

// Ragged shapes (M not a multiple of C x N, K = 1, M below C) with every epilogue: C as the
// lone core's, byte for byte, on 1, 2 and 4 cores.
TEST_F(Cores, GemmSplitByRowsEqualsTheLoneCore)
{
    const uint32_t n = array_n();
    struct Case {
        uint32_t m, k, n;
        const char *flags;
    } cases[] = {
        {4 * n + 3, 2 * n + 1, n + 2, ""},
        {2 * n + 1, 1, 3, " --bias --relu"},
        {3, n + 5, 2 * n - 1, " --bias --requant 1000,12"},
        {9 * n + 7, n, n, " --unsigned-a --bias --relu --requant 77,9"},
    };
    for (const Case &c : cases) {
        const std::string args = "gemm" + array() + "--m " + std::to_string(c.m) + " --k " +
                                 std::to_string(c.k) + " --n " + std::to_string(c.n) + c.flags +
                                 " --seed 7 --out" + arg("c1.npy");
        SCOPED_TRACE(args);
        const Result one = tool(args + "--quiet");
        ASSERT_EQ(one.code, 0) << one.err;
        for (uint32_t cores : {1u, 2u, 4u}) {
            SCOPED_TRACE(cores);
            const Result r = tool(args + "--cores " + std::to_string(cores) + " --out" +
                                  arg("c.npy") + "--json" + arg("r.json"));
            ASSERT_EQ(r.code, 0) << r.err;
            EXPECT_EQ(slurp(dir / "c.npy"), slurp(dir / "c1.npy"));
            expect_split(Json(path("r.json")), c.m, cores);
            EXPECT_NE(r.out.find("\nMXU utilization:  "), std::string::npos) << r.out;
            EXPECT_NE(r.out.find("\nper core:\n"), std::string::npos) << r.out;
            EXPECT_NE(r.out.find("\nC reference:               match\n"), std::string::npos);
        }
    }
}

// int8's extremes everywhere (the largest products, the sums' signs) from files.
TEST_F(Cores, GemmOfExtremesFromFiles)
{
    const uint32_t m = 2 * array_n() + 3, k = 3 * array_n() + 1, nc = array_n() + 1;
    std::vector<int8_t> a((size_t)m * k), b((size_t)k * nc);
    for (size_t i = 0; i < a.size(); i++)
        a[i] = i % 3 ? -128 : 127;
    for (size_t i = 0; i < b.size(); i++)
        b[i] = i % 5 ? -128 : 127;
    spit(dir / "a.npy", encode(NPY_INT8, {m, k}, a.data()));
    spit(dir / "b.npy", encode(NPY_INT8, {k, nc}, b.data()));
    const std::string args = "gemm" + array() + "--a" + arg("a.npy") + "--b" + arg("b.npy");
    ASSERT_EQ(tool(args + "--out" + arg("c1.npy")).code, 0);
    for (uint32_t cores : {2u, 4u, 8u}) {
        SCOPED_TRACE(cores);
        const Result r = tool(args + "--cores " + std::to_string(cores) + " --out" + arg("c.npy") +
                              "--json" + arg("r.json"));
        ASSERT_EQ(r.code, 0) << r.err;
        EXPECT_EQ(slurp(dir / "c.npy"), slurp(dir / "c1.npy"));
        expect_split(Json(path("r.json")), m, cores);
    }
}

// The one-core report is the lone core's: no chip lines or keys without --cores.
TEST_F(Cores, WithoutCoresTheReportIsTheLoneCores)
{
    const Result r = tool("gemm" + array() + "--m 5 --k 6 --n 7 --json" + arg("r.json"));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out.find("per core"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\ncycles:  "), std::string::npos) << r.out;
    const Json j(path("r.json"));
    EXPECT_EQ(j.at("cores"), nullptr);
    EXPECT_GT(j.integer("cycles", "total"), 0);
}

// ----------------------------------------------------------------- run --

// Model A's batches dealt to 2 and 4 cores (8 batches, the last padded; uint8 pixels converted
// in each core's staging), constants shared or per core: outputs byte-equal to the lone core's,
// the same accuracy, and the chip's figures.
TEST_F(Cores, RunGivesTheLoneCoresOutputs)
{
    ModelA model;
    model.p.save(dir / "a.tpub");
    tpu_rng rng{11};
    const uint64_t rows = 29;
    std::vector<uint8_t> pixels(rows * ModelA::kIn);
    rng_fill(&rng, pixels.data(), pixels.size());
    std::vector<int32_t> labels(rows);
    for (uint64_t i = 0; i < rows; i++)
        labels[i] = (int32_t)(i % ModelA::kClasses);
    spit(dir / "x.npy", encode(NPY_UINT8, {rows, ModelA::kIn}, pixels.data()));
    spit(dir / "labels.npy", encode(NPY_INT32, {rows}, labels.data()));
    const std::string args = "run" + arg("a.tpub") + "--input" + arg("x.npy") +
                             "--input-divide 255 --labels" + arg("labels.npy");
    const Result one = tool(args + "--output" + arg("y1.npy") + "--json" + arg("r1.json"));
    ASSERT_EQ(one.code, 0) << one.err;
    EXPECT_EQ(one.out.find("images per second"), std::string::npos) << one.out;
    const Json j1(path("r1.json"));
    EXPECT_EQ(j1.at("chip"), nullptr);
    for (const char *opts : {"--cores 2", "--cores 4", "--cores 4 --weights-per-core"}) {
        SCOPED_TRACE(opts);
        const uint32_t cores = opts[8] - '0';
        const Result r = tool(args + opts + " --output" + arg("y.npy") + "--json" + arg("r.json"));
        ASSERT_EQ(r.code, 0) << r.err;
        EXPECT_EQ(slurp(dir / "y.npy"), slurp(dir / "y1.npy"));
        const Json j(path("r.json"));
        EXPECT_TRUE(json_equal(j.at("accuracy"), j1.at("accuracy")));
        EXPECT_EQ(j.integer("cores"), cores);
        EXPECT_EQ(json_is_true(j.at("weights_per_core")), std::string(opts).size() > 9);
        const int64_t elapsed = j.integer("chip", "elapsed_cycles");
        EXPECT_GT(elapsed, 0);
        EXPECT_LT(elapsed, j.integer("cycles", "total")); // side by side
        EXPECT_DOUBLE_EQ(json_real_value(j.at("chip", "cycles_per_image")),
                         (double)elapsed / (double)rows);
        EXPECT_DOUBLE_EQ(json_real_value(j.at("chip", "images_per_second")),
                         (double)rows * 940e6 / (double)elapsed);
        // 8 batches of two GEMMs, batch b on core b % C.
        json_t *per_core = j.at("per_core");
        ASSERT_EQ(json_array_size(per_core), cores);
        int64_t cycles = 0;
        for (uint32_t k = 0; k < cores; k++) {
            json_t *c = json_array_get(per_core, k);
            EXPECT_EQ(json_integer_value(json_object_get(c, "submissions")), 2 * 8 / cores);
            cycles += json_integer_value(json_object_get(c, "cycles"));
        }
        EXPECT_EQ(cycles, j.integer("cycles", "total"));
        EXPECT_EQ(j.integer("bit_exact_submissions"), 16);
        EXPECT_NE(r.out.find(" at 940 MHz\n"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("\nchip elapsed cycles:       "), std::string::npos) << r.out;
    }
}

// ---------------------------------------------------------------- errors --

TEST_F(Cores, UsageErrors)
{
    const std::string gemm = "gemm" + array() + "--m 8 --k 8 --n 8 --out" + arg("c.npy");
    for (const char *bad : {"0", "9", "two", ""}) {
        SCOPED_TRACE(bad);
        if (*bad)
            expect_error(tool(gemm + "--cores " + bad), 2, "--cores",
                         std::string("'") + bad + "' is not a number of cores (1..8)");
        else
            expect_error(tool(gemm + "--cores"), 2, "--cores", "needs a value");
    }
    // A chip that is not built (3 cores never are by default): the driver says which are.
    const Result r = tool(gemm + "--cores 3");
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_EQ(r.err.rfind("tpusim: device: ", 0), 0u) << r.err;

    ModelA model;
    model.p.save(dir / "a.tpub");
    std::vector<float> x(ModelA::kBatch * ModelA::kIn, 0.5f);
    spit(dir / "x.npy", encode(NPY_FLOAT32, {ModelA::kBatch, ModelA::kIn}, x.data()));
    const std::string run =
        "run" + arg("a.tpub") + "--input" + arg("x.npy") + "--output" + arg("y.npy");
    expect_error(tool(run + "--cores 2 --jobs 2"), 2, "usage",
                 "--jobs and --cores exclude each other");
    expect_error(tool(run + "--jobs 1 --cores 2"), 2, "usage",
                 "--jobs and --cores exclude each other");
    expect_error(tool(run + "--weights-per-core"), 2, "usage", "--weights-per-core needs --cores");
    expect_error(tool(run + "--cores 2 --weights-per-core=1"), 2, "--weights-per-core",
                 "takes no value");
    expect_error(tool(run + "--cores 9"), 2, "--cores", "'9' is not a number of cores (1..8)");
    EXPECT_EQ(leftovers({"a.tpub", "x.npy"}), std::vector<std::string>{});
}

TEST_F(Cores, HelpListsTheOption)
{
    for (const char *cmd : {"gemm", "run"}) {
        const Result r = tool(std::string(cmd) + " --help");
        EXPECT_EQ(r.code, 0);
        EXPECT_NE(r.out.find("\n  --cores C"), std::string::npos) << r.out;
    }
    const Result r = tool("run --help");
    EXPECT_NE(r.out.find("\n  --weights-per-core "), std::string::npos) << r.out;
}

} // namespace

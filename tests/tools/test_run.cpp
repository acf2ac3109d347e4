// test_run.cpp - `tpusim run`, run as a program on packages built here (tpub_save): outputs
// bit-exact against a C reference of the same quantized arithmetic, batching (padding trimmed,
// --limit), --input-divide, two segments with a tuple result and copies, the classification
// extras, the JSON report (an unrolled loop's dot as one layer), the trace, and every error
// class with its exit code and no output file left behind.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <jansson.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "driver/tpu.h"
#include "io/npy.h"
#include "package/tpub.h"
#include "tests/support/hlo_test.h"
#include "tests/support/pkg_build.h"
#include "tests/support/progs.h"
#include "tests/support/runtime_models.h"
#include "tests/support/tool_test.h"

namespace fs = std::filesystem;

// Built with AddressSanitizer (gcc says so in __SANITIZE_ADDRESS__, clang in __has_feature).
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TPU_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(TPU_TEST_ASAN)
#define TPU_TEST_ASAN 1
#endif

namespace
{

using tool_test::Result;
using tool_test::save_npy;
using tool_test::slurp;
using tool_test::spit;
using namespace runtime_models;

// An .npy file's array (empty data on failure, with a test failure).
struct Npy {
    npy_array a{};
    explicit Npy(const fs::path &p)
    {
        char err[256] = "";
        EXPECT_EQ(npy_load(p.string().c_str(), &a, err, sizeof err), 0) << p << ": " << err;
    }
    ~Npy() { npy_free(&a); }
    std::vector<uint64_t> shape() const { return std::vector<uint64_t>(a.shape, a.shape + a.ndim); }
    template <typename T> std::vector<T> values() const
    {
        const T *p = static_cast<const T *>(a.data);
        return p ? std::vector<T>(p, p + a.count) : std::vector<T>();
    }
};

// ----------------------------------------------------------- packages --

// Rows of model A inputs: mostly in the quantizer's range, some clamped.
std::vector<float> random_x(uint64_t rows, uint64_t seed)
{
    tpu_rng rng{seed};
    std::vector<float> x(rows * ModelA::kIn);
    for (float &v : x)
        v = (float)rng_range(&rng, -4500, 4500) / 1000.0f;
    return x;
}

// numpy's argmax of each row.
std::vector<int32_t> argmax_rows(const std::vector<float> &v, size_t cols)
{
    std::vector<int32_t> r;
    for (size_t i = 0; i < v.size(); i += cols)
        r.push_back((int32_t)(std::max_element(v.begin() + (long)i, v.begin() + (long)(i + cols)) -
                              (v.begin() + (long)i)));
    return r;
}

// ------------------------------------------------------------- fixture --

class Run : public tool_test::ToolTest
{
  protected:
    ModelA a;

    Run() : ToolTest("test_run") {}
    // A quoted path with a space on either side.
    std::string arg(const std::string &file) const { return " " + quoted(file) + " "; }
    Result run(const std::string &args) const { return tool("run " + args); }

    // Model A's package and an input of `rows` rows; returns the input.
    std::vector<float> setup_a(uint64_t rows, uint64_t seed = 1)
    {
        a.save(dir / "a.tpub", array_n());
        std::vector<float> x = random_x(rows, seed);
        save_npy(dir / "x.npy", NPY_FLOAT32, {rows, ModelA::kIn}, x.data());
        return x;
    }
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

// ---------------------------------------------------------------- runs --

TEST_F(Run, OneBatchMatchesTheQuantizedReference)
{
    std::vector<float> x = setup_a(ModelA::kBatch);
    x[3] = NAN; // quantizes to 0
    x[40] = INFINITY;
    x[41] = -INFINITY;
    x[42] = 100.0f;
    save_npy(dir / "x.npy", NPY_FLOAT32, {ModelA::kBatch, ModelA::kIn}, x.data());
    const Result r = run(arg("a.tpub") + "--input" + arg("x.npy") + "--output" + arg("y.npy"));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    const Npy y(dir / "y.npy");
    EXPECT_EQ(y.a.dtype, NPY_FLOAT32);
    EXPECT_EQ(y.shape(), (std::vector<uint64_t>{ModelA::kBatch, ModelA::kClasses}));
    const std::vector<float> want = a.reference(x);
    EXPECT_TRUE(same_bits(y.values<float>(), want));
    EXPECT_GT(*std::max_element(want.begin(), want.end()), 0.0f); // not all clamped away
    EXPECT_NE(r.out.find("\nbatches:                   1 (4 images)\n"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("\nbit-exact vs golden model: 2/2 submissions\n"), std::string::npos)
        << r.out;
    for (const char *layer : {"\n  dot.1 ", "\n  dot.2 ", " 4 x 36 x 12 ", " 4 x 12 x 10 "})
        EXPECT_NE(r.out.find(layer), std::string::npos) << layer << " in " << r.out;
    EXPECT_EQ(leftovers({"a.tpub", "x.npy", "y.npy"}), std::vector<std::string>{});
}

TEST_F(Run, BatchesArePaddedAndTrimmed)
{
    const std::vector<float> x = setup_a(10, 5);
    Result r = run(arg("a.tpub") + "--input" + arg("x.npy") + "--output" + arg("y.npy"));
    ASSERT_EQ(r.code, 0) << r.err;
    {
        const Npy y(dir / "y.npy");
        EXPECT_EQ(y.shape(), (std::vector<uint64_t>{10, ModelA::kClasses}));
        EXPECT_TRUE(same_bits(y.values<float>(), a.reference(x)));
    }
    EXPECT_NE(r.out.find("\nbatches:                   3 of 4 rows each (10 images; the last "
                         "batch padded with 2 rows)\n"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("\nbit-exact vs golden model: 6/6 submissions\n"), std::string::npos)
        << r.out;

    // --limit: the first 5 rows, two batches; an exact batch with --limit 3 is padded too.
    r = run(arg("a.tpub") + "--input" + arg("x.npy") + "--output" + arg("y.npy") + "--limit 5");
    ASSERT_EQ(r.code, 0) << r.err;
    {
        const Npy y(dir / "y.npy");
        EXPECT_EQ(y.shape(), (std::vector<uint64_t>{5, ModelA::kClasses}));
        const std::vector<float> x5(x.begin(), x.begin() + 5 * ModelA::kIn);
        EXPECT_TRUE(same_bits(y.values<float>(), a.reference(x5)));
    }
    EXPECT_NE(r.out.find("2 of 4 rows each (5 images; the last batch padded with 3 rows)"),
              std::string::npos)
        << r.out;
    const std::vector<float> x4(x.begin(), x.begin() + 4 * ModelA::kIn);
    save_npy(dir / "x4.npy", NPY_FLOAT32, {4, ModelA::kIn}, x4.data());
    r = run(arg("a.tpub") + "--input" + arg("x4.npy") + "--output" + arg("y.npy") +
            "--limit 3 --quiet");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, "");
    const Npy y(dir / "y.npy");
    EXPECT_EQ(y.shape(), (std::vector<uint64_t>{3, ModelA::kClasses}));
    const std::vector<float> x3(x.begin(), x.begin() + 3 * ModelA::kIn);
    EXPECT_TRUE(same_bits(y.values<float>(), a.reference(x3)));
}

// --jobs shares the batches among devices: outputs, cycles and every figure but the times are
// those of one job; uint8 inputs converted in each job's own staging, the padded last batch in
// the last job.
TEST_F(Run, JobsGiveTheSameRun)
{
    a.save(dir / "a.tpub", array_n());
    tpu_rng rng{5};
    std::vector<uint8_t> pixels(29 * ModelA::kIn); // 8 batches, the last one padded
    rng_fill(&rng, pixels.data(), pixels.size());
    save_npy(dir / "x.npy", NPY_UINT8, {29, ModelA::kIn}, pixels.data());
    const std::string args = arg("a.tpub") + "--input" + arg("x.npy") + "--input-divide 255 ";
    const Result one = run(args + "--output" + arg("y1.npy") + "--json" + arg("r1.json"));
    ASSERT_EQ(one.code, 0) << one.err;
    for (const char *jobs : {"2", "3", "64"}) {
        SCOPED_TRACE(std::string("--jobs ") + jobs);
        const Result r =
            run(args + "--jobs " + jobs + " --output" + arg("y.npy") + "--json" + arg("r.json"));
        ASSERT_EQ(r.code, 0) << r.err;
        EXPECT_EQ(slurp(dir / "y.npy"), slurp(dir / "y1.npy"));
        json_error_t je;
        json_t *j1 = json_load_file(path("r1.json").c_str(), 0, &je);
        json_t *j = json_load_file(path("r.json").c_str(), 0, &je);
        ASSERT_TRUE(j1 && j);
        // The times differ; so do the job counts (64 jobs for 8 batches are 8).
        EXPECT_EQ(json_integer_value(json_object_get(json_object_get(j, "simulation"), "jobs")),
                  std::min(8, std::atoi(jobs)));
        json_object_del(j1, "simulation");
        json_object_del(j, "simulation");
        EXPECT_TRUE(json_equal(j1, j)) << json_dumps(j, JSON_INDENT(1));
        json_decref(j1);
        json_decref(j);
        const std::string line =
            "\njobs:                      " + std::to_string(std::min(8, std::atoi(jobs))) + ", ";
        EXPECT_NE(r.out.find(line), std::string::npos) << r.out;
    }
    // Errors name the batch as one job would: the earliest failing one.
    expect_error(run(args + "--jobs 3 --max-cycles 40"), 3, "timeout",
                 "batch 0, segment 0, gemm 0 'dot.1': ");
    expect_error(run(args + "--jobs 0"), 2, "--jobs", "'0' is not a number of jobs (1..64)");
    expect_error(run(args + "--jobs 65"), 2, "--jobs", "'65' is not a number of jobs (1..64)");
    EXPECT_EQ(leftovers({"a.tpub", "x.npy", "y1.npy", "r1.json", "y.npy", "r.json"}),
              std::vector<std::string>{});
}

TEST_F(Run, IntegerInputsAreDividedAsNumpyDoes)
{
    a.save(dir / "a.tpub", array_n());
    tpu_rng rng{9};
    std::vector<uint8_t> pixels(7 * ModelA::kIn);
    rng_fill(&rng, pixels.data(), pixels.size());
    save_npy(dir / "x.npy", NPY_UINT8, {7, ModelA::kIn}, pixels.data());
    const Result r = run(arg("a.tpub") + "--input" + arg("x.npy") + "--input-divide 255 " +
                         "--output" + arg("y.npy"));
    ASSERT_EQ(r.code, 0) << r.err;
    std::vector<float> x(pixels.size());
    for (size_t i = 0; i < x.size(); i++)
        x[i] = (float)pixels[i] / 255.0f;
    const Npy y(dir / "y.npy");
    EXPECT_TRUE(same_bits(y.values<float>(), a.reference(x)));

    // Without --input-divide the dtype is wrong, and the message says what converts it.
    fs::remove(dir / "y.npy");
    expect_error(run(arg("a.tpub") + "--input" + arg("x.npy") + "--output" + arg("y.npy")), 2,
                 path("x.npy"),
                 "dtype uint8, but input 0 'x' f32[4,36] is float32 "
                 "(--input-divide D converts integers)");
    EXPECT_EQ(leftovers({"a.tpub", "x.npy"}), std::vector<std::string>{});
}

TEST_F(Run, TwoSegmentsWithATupleAndCopies)
{
    ModelB b;
    b.save(dir / "b.tpub", array_n());
    tpu_rng rng{3};
    std::vector<uint8_t> x(6 * ModelB::kIn);
    rng_fill(&rng, x.data(), x.size());
    save_npy(dir / "x.npy", NPY_UINT8, {6, ModelB::kIn}, x.data());
    const Result r = run(arg("b.tpub") + "--input" + arg("x.npy") + "--output" + arg("y.npy") +
                         "--output" + arg("h.npy"));
    ASSERT_EQ(r.code, 0) << r.err;
    std::vector<int32_t> want_y;
    std::vector<int8_t> want_h;
    b.reference(x, want_y, want_h);
    const Npy y(dir / "y.npy"), h(dir / "h.npy");
    EXPECT_EQ(y.a.dtype, NPY_INT32);
    EXPECT_EQ(h.a.dtype, NPY_INT8);
    EXPECT_EQ(y.shape(), (std::vector<uint64_t>{6, ModelB::kOut}));
    EXPECT_EQ(h.shape(), (std::vector<uint64_t>{6, ModelB::kHidden}));
    EXPECT_EQ(y.values<int32_t>(), want_y);
    EXPECT_EQ(h.values<int8_t>(), want_h);
    EXPECT_GT(std::count_if(want_y.begin(), want_y.end(), [](int32_t v) { return v > 0; }), 0);
    EXPECT_NE(r.out.find("\nbit-exact vs golden model: 4/4 submissions\n"), std::string::npos)
        << r.out;

    // Only the first output is written when only one --output is given.
    fs::remove(dir / "h.npy");
    ASSERT_EQ(run(arg("b.tpub") + "--input" + arg("x.npy") + "--output" + arg("y.npy")).code, 0);
    EXPECT_EQ(leftovers({"b.tpub", "x.npy", "y.npy"}), std::vector<std::string>{});
}

TEST_F(Run, ClassificationFigures)
{
    const std::vector<float> x = setup_a(10, 11);
    const std::vector<int32_t> pred = argmax_rows(a.reference(x), ModelA::kClasses);
    std::vector<int32_t> labels = pred, expect = pred;
    for (int i : {0, 4, 9})
        labels[i] = (labels[i] + 1) % 10; // 7 of 10 right
    for (int i : {4, 6})
        expect[i] = (expect[i] + 3) % 10; // agree on 8; the reference gets 6 right
    labels.push_back(5);                  // more labels than images: the rest unused
    std::vector<uint8_t> labels_u8(labels.begin(), labels.end());
    save_npy(dir / "y.npy", NPY_UINT8, {labels.size()}, labels_u8.data());
    save_npy(dir / "p.npy", NPY_INT32, {expect.size()}, expect.data());
    const Result r = run(arg("a.tpub") + "--input" + arg("x.npy") + "--labels" + arg("y.npy") +
                         "--expect" + arg("p.npy") + "--show 6 --json" + arg("r.json"));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(
        r.out.find("\naccuracy:                  7/10 = 70.00 %  (labels " + path("y.npy") + ")\n"),
        std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("\nagreement:                 8/10 = 80.00 %  (reference " +
                         path("p.npy") + ")\n"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("\nreference accuracy:        6/10 = 60.00 %\n"), std::string::npos)
        << r.out;

    // Sample 6 as a 6x6 picture scaled to its maximum, then the three classes.
    const size_t at = r.out.find("sample 6 of " + path("x.npy") + ":\n");
    ASSERT_NE(at, std::string::npos) << r.out;
    std::istringstream lines(r.out.substr(at));
    std::string line;
    std::getline(lines, line);
    const float *s = &x[6 * ModelA::kIn];
    const float max = *std::max_element(s, s + ModelA::kIn);
    for (int row = 0; row < 6; row++) {
        std::getline(lines, line);
        ASSERT_EQ(line.size(), 6u) << line;
        for (int col = 0; col < 6; col++) {
            const float v = s[row * 6 + col];
            const long level = v > 0 ? std::lround((double)v / max * 9) : 0;
            EXPECT_EQ(line[col], " .:-=+*#%@"[level]) << row << "," << col;
        }
    }
    std::getline(lines, line);
    EXPECT_EQ(line, "predicted " + std::to_string(pred[6]) + ", label " +
                        std::to_string(labels[6]) + ", reference " + std::to_string(expect[6]));

    json_error_t jerr;
    json_t *j = json_load_file(path("r.json").c_str(), 0, &jerr);
    ASSERT_NE(j, nullptr) << jerr.text;
    for (const char *key : {"accuracy", "agreement", "reference_accuracy"})
        EXPECT_EQ(json_integer_value(json_object_get(json_object_get(j, key), "total")), 10);
    EXPECT_EQ(json_integer_value(json_object_get(json_object_get(j, "accuracy"), "correct")), 7);
    EXPECT_EQ(json_integer_value(json_object_get(json_object_get(j, "agreement"), "correct")), 8);
    EXPECT_EQ(json_real_value(json_object_get(json_object_get(j, "accuracy"), "percent")), 70.0);
    json_decref(j);

    // --show alone prints with --quiet; no labels, no reference.
    const Result q = run(arg("a.tpub") + "--input" + arg("x.npy") + "--show 0 --quiet");
    ASSERT_EQ(q.code, 0) << q.err;
    EXPECT_EQ(q.out.rfind("sample 0 of ", 0), 0u) << q.out;
    EXPECT_NE(q.out.find("\npredicted " + std::to_string(pred[0]) + "\n"), std::string::npos)
        << q.out;
}

TEST_F(Run, JsonReportHasTheFigures)
{
    setup_a(10);
    const Result r = run(arg("a.tpub") + "--input" + arg("x.npy") + "--json" + arg("r.json"));
    ASSERT_EQ(r.code, 0) << r.err;
    json_error_t jerr;
    json_t *j = json_load_file(path("r.json").c_str(), 0, &jerr);
    ASSERT_NE(j, nullptr) << jerr.text;
    auto num = [&](json_t *o, const char *key) {
        json_t *v = json_object_get(o, key);
        EXPECT_TRUE(json_is_number(v)) << key;
        return json_number_value(v);
    };
    EXPECT_STREQ(json_string_value(json_object_get(j, "package")), path("a.tpub").c_str());
    EXPECT_EQ(num(j, "array_n"), array_n());
    EXPECT_EQ(num(j, "batches"), 3);
    EXPECT_EQ(num(j, "batch_rows"), 4);
    EXPECT_EQ(num(j, "images"), 10);
    EXPECT_EQ(num(j, "submissions"), 6);
    EXPECT_EQ(num(j, "bit_exact_submissions"), 6);
    json_t *layers = json_object_get(j, "layers");
    ASSERT_EQ(json_array_size(layers), 2u);
    const double n2 = (double)array_n() * array_n();
    double per_batch = 0, ideal = 0;
    const uint32_t shapes[2][3] = {{4, 36, 12}, {4, 12, 10}};
    for (size_t i = 0; i < 2; i++) {
        json_t *l = json_array_get(layers, i);
        EXPECT_STREQ(json_string_value(json_object_get(l, "name")), i ? "dot.2" : "dot.1");
        EXPECT_EQ(num(l, "m"), shapes[i][0]);
        EXPECT_EQ(num(l, "k"), shapes[i][1]);
        EXPECT_EQ(num(l, "n"), shapes[i][2]);
        EXPECT_EQ(num(l, "macs"), shapes[i][0] * shapes[i][1] * shapes[i][2]);
        EXPECT_EQ(num(l, "submissions"), 3);
        // The driver's tpu_gemm_cost bytes of one submission (tpurt_layer's bytes).
        const uint32_t m = shapes[i][0], k = shapes[i][1], n = shapes[i][2];
        EXPECT_EQ(num(l, "bytes"),
                  i ? m * k + k * n + m * n * 4 + 12 * n : m * k + k * n + m * n + 12 * n);
        const double cycles = num(l, "cycles_per_batch");
        EXPECT_GT(cycles, 0);
        EXPECT_NEAR(num(l, "mxu_utilization_percent"), 100 * num(l, "macs") / n2 / cycles, 1e-9);
        EXPECT_GE(num(l, "cycles_over_bound"), 1.0);
        per_batch += cycles;
        ideal += num(l, "macs") / n2;
    }
    EXPECT_STREQ(
        json_string_value(json_array_get(json_object_get(json_array_get(layers, 0), "flags"), 2)),
        "out_int8");
    json_t *cycles = json_object_get(j, "cycles");
    EXPECT_NEAR(num(cycles, "per_batch"), per_batch, 1e-6);
    EXPECT_NEAR(num(cycles, "total"), 3 * per_batch, 1e-6);
    EXPECT_NEAR(num(cycles, "per_image"), 3 * per_batch / 10, 1e-6);
    EXPECT_NEAR(num(j, "mxu_utilization_percent"), 100 * ideal / per_batch, 1e-9);
    json_t *sim = json_object_get(j, "simulation");
    EXPECT_GT(num(sim, "device_seconds"), 0);
    EXPECT_GE(num(sim, "wall_seconds"), num(sim, "device_seconds"));
    EXPECT_GE(num(sim, "host_seconds"), 0);
    EXPECT_NEAR(num(sim, "cycles_per_second"), num(cycles, "total") / num(sim, "device_seconds"),
                1e-6 * num(sim, "cycles_per_second"));
    EXPECT_EQ(json_object_get(j, "accuracy"), nullptr);
    // The host program's own work, all batches: the maximum and the broadcast of 4 x 10 floats
    // per batch; the model's MACs all on the device.
    json_t *host = json_object_get(j, "host_ops");
    ASSERT_EQ(json_array_size(host), 2u);
    for (size_t i = 0; i < 2; i++) {
        json_t *h = json_array_get(host, i);
        EXPECT_STREQ(json_string_value(json_object_get(h, "opcode")), i ? "broadcast" : "maximum");
        EXPECT_EQ(num(h, "count"), 3);
        EXPECT_EQ(num(h, "macs"), 0);
        EXPECT_EQ(num(h, "bytes"), 3 * 4 * 10 * 4);
    }
    json_t *macs = json_object_get(j, "macs");
    EXPECT_EQ(num(macs, "device"), 3 * (4 * 36 * 12 + 4 * 12 * 10));
    EXPECT_EQ(num(macs, "host"), 0);
    EXPECT_EQ(num(macs, "device_percent"), 100);
    // The text report shows the same run.
    std::string total = std::to_string(std::llround(per_batch));
    for (int i = (int)total.size() - 3; i > 0; i -= 3)
        total.insert((size_t)i, ",");
    EXPECT_NE(r.out.find("\ncycles per batch:          " + total + "\n"), std::string::npos)
        << r.out;
    json_decref(j);
}

// A model whose work is mostly on the host says so: a dot on the device, then a recurrence of
// five dots in a while loop (on the host: its trip count comes from x, as 0 * x[0][0] + 5).
TEST_F(Run, HostWorkIsReported)
{
    std::string eye = "{";
    for (int r = 0; r < 8; r++) {
        eye += r ? ",{" : "{";
        for (int c = 0; c < 8; c++)
            eye += std::string(c ? "," : "") + (r == c ? "0.5" : "0");
        eye += "}";
    }
    eye += "}";
    std::ofstream(dir / "m.hlo")
        << "HloModule m\n\ncond {\n  p = (s32[], f32[4,8], s32[]) parameter(0)\n"
           "  i = s32[] get-tuple-element(p), index=0\n  n = s32[] get-tuple-element(p), index=2\n"
           "  ROOT lt = pred[] compare(i, n), direction=LT\n}\n\nbody {\n"
           "  p = (s32[], f32[4,8], s32[]) parameter(0)\n  i = s32[] get-tuple-element(p), "
           "index=0\n"
           "  n = s32[] get-tuple-element(p), index=2\n"
           "  h = f32[4,8] get-tuple-element(p), index=1\n  w = f32[8,8] constant("
        << eye
        << ")\n  y = f32[4,8] dot(h, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
           "  t = f32[4,8] tanh(y)\n  one = s32[] constant(1)\n  j = s32[] add(i, one)\n"
           "  ROOT r = (s32[], f32[4,8], s32[]) tuple(j, t, n)\n}\n\nENTRY main {\n"
           "  x = f32[4,8] parameter(0)\n  w0 = f32[8,8] constant("
        << eye
        << ")\n  h0 = f32[4,8] dot(x, w0), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
           "  x00 = f32[1,1] slice(x), slice={[0:1], [0:1]}\n  x0 = f32[] reshape(x00)\n"
           "  fz = f32[] constant(0)\n  x0z = f32[] multiply(x0, fz)\n  nz = s32[] convert(x0z)\n"
           "  five = s32[] constant(5)\n  n = s32[] add(nz, five)\n"
           "  zero = s32[] constant(0)\n  s = (s32[], f32[4,8], s32[]) tuple(zero, h0, n)\n"
           "  w = (s32[], f32[4,8], s32[]) while(s), condition=cond, body=body\n"
           "  ROOT out = f32[4,8] get-tuple-element(w), index=1\n}\n";
    std::vector<float> x = random_x(1, 7); // ModelA::kIn >= 32 values
    x.resize(4 * 8);
    save_npy(dir / "x.npy", NPY_FLOAT32, {4, 8}, x.data());
    const std::string tpuc = "'" TPU_BINARY_DIR "/bin/tpuc'" + arg("m.hlo") + "--calibrate" +
                             arg("x.npy") + "--array " + std::to_string(array_n()) + " --quiet -o" +
                             arg("m.tpub") + ">/dev/null";
    ASSERT_EQ(std::system(tpuc.c_str()), 0) << tpuc;
    const Result r = run(arg("m.tpub") + "--input" + arg("x.npy"));
    ASSERT_EQ(r.code, 0) << r.err;
    for (const char *line :
         {"\nhost program, per batch:\n  op                          count             MACs"
          "          bytes\n  dot                             5            1,280            640\n"
          "  tanh                            5                0            640\n",
          "\n  compare                         6                0              6\n",
          "\nMACs on the device:        16.7 %  (256 per batch; 1,280 on the host)  most of the "
          "model's MACs run on the host\n"})
        EXPECT_NE(r.out.find(line), std::string::npos) << line << "\nin:\n" << r.out;
}

TEST_F(Run, AnUnrolledLoopsDotIsOneLayer)
{
    // Six trips of h = tanh(h . w) unrolled: six GEMMs named after the body's dot "d", one line
    // with their iterations in the text report, one layer in the JSON one.
    std::ofstream(dir / "m.hlo") << hlo_test::scan_hlo(6, 8, 4);
    std::vector<float> x = random_x(1, 7);
    x.resize(4 * 8);
    save_npy(dir / "x.npy", NPY_FLOAT32, {4, 8}, x.data());
    const std::string tpuc = "'" TPU_BINARY_DIR "/bin/tpuc'" + arg("m.hlo") + "--calibrate" +
                             arg("x.npy") + "--array " + std::to_string(array_n()) + " --quiet -o" +
                             arg("m.tpub") + ">/dev/null";
    ASSERT_EQ(std::system(tpuc.c_str()), 0) << tpuc;
    const Result r = run(arg("m.tpub") + "--input" + arg("x.npy") + "--json" + arg("r.json"));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("\n  name             m x k x n iterations         cycles  MXU util %  "
                         "cycles/bound\n  d                4 x 8 x 8          6 "),
              std::string::npos)
        << r.out;
    json_error_t jerr;
    json_t *j = json_load_file(path("r.json").c_str(), 0, &jerr);
    ASSERT_NE(j, nullptr) << jerr.text;
    json_t *layers = json_object_get(j, "layers");
    ASSERT_EQ(json_array_size(layers), 1u);
    json_t *l = json_array_get(layers, 0);
    EXPECT_STREQ(json_string_value(json_object_get(l, "name")), "d");
    EXPECT_EQ(json_integer_value(json_object_get(l, "iterations")), 6);
    EXPECT_EQ(json_integer_value(json_object_get(l, "submissions")), 6);
    EXPECT_EQ(json_real_value(json_object_get(l, "cycles_per_batch")),
              (double)json_integer_value(json_object_get(json_object_get(j, "cycles"), "total")));
    json_decref(j);
}

TEST_F(Run, TraceOfTheFirstBatch)
{
    setup_a(6);
    const Result r = run(arg("a.tpub") + "--input" + arg("x.npy") + "--quiet --trace" +
                         arg("t.fst") + "--trace-window 0:400");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(fs::exists(dir / "t.fst") && fs::file_size(dir / "t.fst") > 0);
    EXPECT_NE(slurp(dir / "t.gtkw").find("t.fst"), std::string::npos);
    EXPECT_EQ(r.err, "");
    // A window after the first batch: an empty trace, with a warning.
    const Result late = run(arg("a.tpub") + "--input" + arg("x.npy") + "--quiet --trace" +
                            arg("late.fst") + "--trace-window 1000000:");
    ASSERT_EQ(late.code, 0) << late.err;
    EXPECT_NE(late.err.find("tpusim: warning: --trace-window starts at cycle 1000000, after the "
                            "run ended: "),
              std::string::npos)
        << late.err;
}

// ------------------------------------------------------------- errors --

TEST_F(Run, InputErrorsExit2AndWriteNothing)
{
    setup_a(4);
    const std::vector<float> f(8 * 36, 0.5f);
    const std::vector<int32_t> i32(8 * 36, 1);
    save_npy(dir / "x35.npy", NPY_FLOAT32, {4, 35}, f.data());
    save_npy(dir / "x3d.npy", NPY_FLOAT32, {2, 4, 36}, f.data());
    save_npy(dir / "xi.npy", NPY_INT32, {4, 36}, i32.data());
    save_npy(dir / "flt.npy", NPY_FLOAT32, {4}, f.data());
    save_npy(dir / "short.npy", NPY_INT32, {3}, i32.data());
    save_npy(dir / "empty.npy", NPY_FLOAT32, {0, 36}, f.data());
    const std::vector<uint16_t> h(8 * 36, 0x3c00); // 1.0 in float16, 0.0078 in bfloat16
    save_npy(dir / "xh.npy", NPY_FLOAT16, {4, 36}, h.data());
    save_npy(dir / "xbf.npy", NPY_BFLOAT16, {4, 36}, h.data());
    save_npy(dir / "lh.npy", NPY_FLOAT16, {4}, h.data());
    spit(dir / "bad.npy", slurp(dir / "x.npy").substr(0, 100));
    spit(dir / "junk.tpub", "TPUB\x02\0\0\0");
    // Hostile inputs: a FIFO nobody writes (must not block), a 1 TB sparse file, /dev/zero.
    ASSERT_EQ(mkfifo((dir / "fifo").c_str(), 0600), 0);
    std::ofstream(dir / "sparse").close();
    fs::resize_file(dir / "sparse", uintmax_t{1} << 40);
    const std::string x = "--input" + arg("x.npy"),
                      out = "--output" + arg("y.npy") + "--json" + arg("r.json");
    struct Case {
        std::string args, what, why;
    };
    const std::vector<Case> cases = {
        {arg("junk.tpub") + x, path("junk.tpub"), "header"},
        {arg("missing.tpub") + x, path("missing.tpub"), "cannot open"},
        {arg("a.tpub") + "--input" + arg("bad.npy"), path("bad.npy"), "truncated"},
        {arg("a.tpub") + "--input" + arg("missing.npy"), path("missing.npy"), "cannot open"},
        {arg("a.tpub") + "--input" + arg("x35.npy"), path("x35.npy"),
         "shape [4, 35] fits neither input 0 'x' f32[4,36] nor [count, ...] batches of it"},
        {arg("a.tpub") + "--input" + arg("x3d.npy"), path("x3d.npy"), "fits neither"},
        {arg("a.tpub") + "--input" + arg("empty.npy"), path("empty.npy"), "has no rows"},
        {arg("a.tpub") + "--input" + arg("xi.npy"), path("xi.npy"),
         "dtype int32, but input 0 'x' f32[4,36] is float32"},
        // float16 and bfloat16 are read, but no package takes them yet; --input-divide converts
        // only integers.
        {arg("a.tpub") + "--input" + arg("xh.npy") + "--input-divide 2", path("xh.npy"),
         "dtype float16, but input 0 'x' f32[4,36] is float32\n"},
        {arg("a.tpub") + "--input" + arg("xbf.npy"), path("xbf.npy"),
         "dtype void16 (as ml_dtypes saves bfloat16), but input 0 'x' f32[4,36] is float32\n"},
        {arg("a.tpub") + x + "--expect" + arg("lh.npy"), path("lh.npy"),
         "dtype float16; --expect needs integer classes (int8, uint8 or int32)"},
        {arg("a.tpub"), "--input", "0 given, but the package takes 1: 'x' f32[4,36]"},
        {arg("a.tpub") + x + x, "--input", "2 given"},
        {arg("a.tpub") + x + "--output" + arg("z.npy"), "--output",
         "2 given, but the package has 1 output"},
        {arg("a.tpub") + x + "--array " + std::to_string(array_n() + 1), "--array",
         "is compiled for the " + std::to_string(array_n()) + " x"},
        {arg("a.tpub") + x + "--labels" + arg("flt.npy"), path("flt.npy"), "dtype float32"},
        {arg("a.tpub") + x + "--expect" + arg("short.npy"), path("short.npy"),
         "shape [3]; --expect needs one class per image: [4]"},
        {arg("a.tpub") + x + "--show 4", "--show", "sample 4, but there are 4 images"},
        {arg("a.tpub") + x + "--limit 0", "--limit", "'0' is not"},
        {arg("a.tpub") + x + "--input-divide 0", "--input-divide", "'0' is not"},
        {arg("a.tpub") + x + "--trace-window 1:5", "usage", "--trace-window needs --trace"},
        {arg("a.tpub") + x + "--trace" + arg("t.txt"), "--trace", "does not end in .fst"},
        {arg("a.tpub") + x + "--bogus", "usage", "unknown option '--bogus'"},
        {arg("a.tpub") + x + arg("stray"), "usage", "unexpected argument"},
        {x, "usage", "no package"},
        {arg("a.tpub") + x + "--output", "--output", "needs a value"},
        {arg("fifo") + x, path("fifo"), "truncated"},
        {arg("sparse") + x, path("sparse"), "1099511627776 bytes, more than the 4294967296"},
        {"/dev/zero " + x, "/dev/zero", "not a regular file, and more than the 67108864 bytes"},
        {arg("a.tpub") + "--input" + arg("fifo"), path("fifo"), "not a .npy file"},
        {arg("a.tpub") + "--input" + arg("sparse"), path("sparse"), "1099511627776 bytes"},
        {arg("a.tpub") + "--input /dev/zero", "/dev/zero", "not a regular file"},
        {arg("a.tpub") + x + "--labels /dev/zero", "/dev/zero", "not a regular file"},
    };
    const std::vector<std::string> mine = {
        "a.tpub",  "x.npy",     "x35.npy", "x3d.npy", "xi.npy", "flt.npy", "short.npy", "empty.npy",
        "bad.npy", "junk.tpub", "fifo",    "sparse",  "xh.npy", "xbf.npy", "lh.npy"};
    for (const Case &c : cases) {
        SCOPED_TRACE(c.args);
        expect_error(run(out + c.args), 2, c.what, c.why);
        EXPECT_EQ(leftovers(mine), std::vector<std::string>{});
    }
}

// The peak resident memory (KiB) and exit code of `tpusim args`, started without a shell so that
// wait4 reports the tool's own usage.
std::pair<int, long> peak_kib(const std::vector<std::string> &args)
{
    std::string bin = TPU_BINARY_DIR "/bin/tpusim";
    std::vector<char *> argv = {bin.data()};
    for (const std::string &a : args)
        argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
        const int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 1);
        dup2(fd, 2);
        execv(bin.c_str(), argv.data());
        _exit(127);
    }
    int st = 0;
    struct rusage ru {
    };
    if (pid < 0 || wait4(pid, &st, 0, &ru) != pid)
        return {-1, 0};
    return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, ru.ru_maxrss};
}

// /dev/zero as any .npy of a run is refused at its 64 MiB ceiling before a device is opened (the
// device and its golden mirror take as much again), so the run stays under 100 MB. Sanitizers
// change what memory costs; the bound is for the plain build.
TEST_F(Run, EndlessInputsStayUnder100MB)
{
#ifdef TPU_TEST_ASAN
    GTEST_SKIP() << "memory bound of the plain build";
#endif
    setup_a(4);
    const std::string pkg = path("a.tpub"), x = path("x.npy");
    for (const std::vector<std::string> &args : std::vector<std::vector<std::string>>{
             {"run", pkg, "--input", "/dev/zero"},
             {"run", pkg, "--input", x, "--labels", "/dev/zero"},
             {"run", pkg, "--input", x, "--expect", "/dev/zero"}}) {
        SCOPED_TRACE(args.back() + " as " + args[args.size() - 2]);
        const auto [code, kib] = peak_kib(args);
        EXPECT_EQ(code, 2);
        EXPECT_LT(kib, 100 * 1000);
    }
}

TEST_F(Run, PackageErrorsExit2)
{
    // A custom-call the package has no segment for: located in the host program.
    a.save(dir / "t.tpub", array_n(), "tpu.segment.5");
    std::vector<float> x = random_x(8, 2);
    save_npy(dir / "x.npy", NPY_FLOAT32, {8, ModelA::kIn}, x.data());
    const std::string out = "--output" + arg("y.npy") + "--json" + arg("r.json");
    expect_error(run(arg("t.tpub") + "--input" + arg("x.npy") + out), 2, path("t.tpub"),
                 "host program:4:3: custom-call: custom_call_target \"tpu.segment.5\" is not a "
                 "segment of the package");
    a.save(dir / "t.tpub", array_n(), "my.kernel");
    expect_error(run(arg("t.tpub") + "--input" + arg("x.npy") + out), 2, path("t.tpub"),
                 "\"my.kernel\"");

    // An output whose first dimension is not the batch: no batches, and the host program's
    // result differs from the signature.
    a.save(dir / "t.tpub", array_n(), "tpu.segment.0", 2);
    expect_error(run(arg("t.tpub") + "--input" + arg("x.npy") + out), 2, path("t.tpub"),
                 "output 0 'r' f32[2,10]: to run the inputs in batches of 4 rows, the first "
                 "dimension of every output must be 4");
    save_npy(dir / "x4.npy", NPY_FLOAT32, {4, ModelA::kIn}, x.data());
    expect_error(run(arg("t.tpub") + "--input" + arg("x4.npy") + out), 2, path("t.tpub"),
                 "host program: result 0 is f32[4,10], but output 0 is 'r' f32[2,10]");
    EXPECT_EQ(leftovers({"t.tpub", "x.npy", "x4.npy"}), std::vector<std::string>{});
}

TEST_F(Run, DeviceErrorsExit3)
{
    // No model of the package's array size is built.
    uint32_t sizes[64];
    const int n = tpusim_arrays(sizes, 64);
    uint32_t unbuilt = 3;
    while (std::find(sizes, sizes + n, unbuilt) != sizes + n)
        unbuilt++;
    a.save(dir / "u.tpub", unbuilt);
    setup_a(8);
    const std::string out = "--output" + arg("y.npy") + "--json" + arg("r.json");
    expect_error(run(arg("u.tpub") + "--input" + arg("x.npy") + out), 3, "device",
                 std::to_string(unbuilt));

    // The first GEMM runs out of cycles (the firmware alone needs more).
    expect_error(run(arg("a.tpub") + "--input" + arg("x.npy") + out + "--max-cycles 40"), 3,
                 "timeout", "batch 0, segment 0, gemm 0 'dot.1': ");
    EXPECT_EQ(leftovers({"u.tpub", "a.tpub", "x.npy"}), std::vector<std::string>{});
}

TEST_F(Run, UnwritableOutputsLeaveNothing)
{
    setup_a(4);
    Result r = run(arg("a.tpub") + "--input" + arg("x.npy") + "--output" + arg("y.npy") + "--json" +
                   arg("nodir/r.json"));
    expect_error(r, 2, path("nodir/r.json"), "cannot create");
    EXPECT_EQ(leftovers({"a.tpub", "x.npy"}), std::vector<std::string>{});
    fs::create_directory(dir / "r.json");
    r = run(arg("a.tpub") + "--input" + arg("x.npy") + "--output" + arg("y.npy") + "--json" +
            arg("r.json"));
    expect_error(r, 2, path("r.json"), "cannot rename");
    EXPECT_EQ(leftovers({"a.tpub", "x.npy", "r.json"}), std::vector<std::string>{});
}

TEST_F(Run, Help)
{
    const Result r = run("--help");
    EXPECT_EQ(r.code, 0);
    EXPECT_EQ(r.out.rfind("usage: tpusim run PKG.tpub", 0), 0u) << r.out;
    const Result all = run("");
    EXPECT_EQ(all.code, 2);
    const Result top = tool("--help");
    ASSERT_EQ(top.code, 0);
    EXPECT_NE(top.out.find("--input-divide"), std::string::npos);
}

} // namespace

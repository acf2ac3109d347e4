// test_tpuc_conv.cpp - CNNs end to end: the nets of tests/support/cnn_hlo.h compiled by the tpuc
// command for the smallest built array, run by `tpusim run` on the cycle-accurate device (every
// submission checked against the golden model), against the reference evaluator on the same
// HLO: exact for the integer net, within the int8 quantization error for the float ones; the
// report's convolution layers, as text and JSON. Every test runs CONV2D on the device, so the
// suite (ConvOnDevice.*) needs the RTL of ISA 1.1; tests/runtime/test_golden_run.cpp checks the
// same packages on the golden model without it.
#include <gtest/gtest.h>
#include <jansson.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "hlo/hlo.h"
#include "io/npy.h"
#include "sim/tpusim.h"
#include "tests/support/cnn_hlo.h"

namespace fs = std::filesystem;

namespace
{

const std::string kBin = TPU_BINARY_DIR "/bin/";

uint32_t small_n()
{
    uint32_t sizes[64];
    return tpusim_arrays(sizes, 64) > 0 ? sizes[0] : 8;
}

hlo_array *random_array(std::mt19937 &rng, hlo_type t, std::vector<int64_t> dims, double lo,
                        double hi)
{
    hlo_array *a = hlo_array_new(t, (int)dims.size(), dims.data());
    std::uniform_real_distribution<double> u(lo, hi);
    for (int64_t i = 0; i < a->shape.elements; i++) {
        if (t == HLO_F32)
            ((float *)a->data)[i] = (float)u(rng);
        else
            ((int8_t *)a->data)[i] = (int8_t)std::lround(u(rng));
    }
    return a;
}

void save_npy(const fs::path &p, const hlo_array *a)
{
    npy_array n{};
    n.dtype = a->shape.type == HLO_F32 ? NPY_FLOAT32 : NPY_INT8;
    n.ndim = a->shape.rank;
    n.count = (uint64_t)a->shape.elements;
    for (int i = 0; i < n.ndim; i++)
        n.shape[i] = (uint64_t)a->shape.dims[i];
    n.data = a->data;
    size_t len = 0;
    void *img = npy_encode(&n, 0, &len);
    ASSERT_NE(img, nullptr);
    std::ofstream(p, std::ios::binary).write((const char *)img, (std::streamsize)len);
    free(img);
}

std::string slurp(const fs::path &p)
{
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

int sh(const std::string &cmd)
{
    const int st = std::system(cmd.c_str());
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

struct Outcome {
    std::vector<double> device, reference;
    fs::path dir;
};

// Compiles the net with tpuc (calibrated on 8 random batches, the first the one it runs), runs
// that batch with `tpusim run` (JSON report in run.json, text in run.txt) and on the reference
// evaluator.
Outcome compile_and_run(const cnn_hlo::Case &c, std::mt19937 &rng)
{
    Outcome o;
    o.dir = fs::path(TPU_BINARY_DIR) / "test_tpuc_conv" / c.name;
    fs::remove_all(o.dir);
    fs::create_directories(o.dir);
    const std::string text = cnn_hlo::hlo(c.net, rng);
    std::ofstream(o.dir / "m.hlo") << text;
    const hlo_type t = c.net.integer ? HLO_S8 : HLO_F32;
    const double lo = c.net.integer ? -128 : -1, hi = c.net.integer ? 127 : 1;
    std::vector<int64_t> dims = cnn_hlo::input_dims(c.net), cdims = dims;
    cdims[0] *= 8;
    hlo_array *calib = random_array(rng, t, cdims, lo, hi);
    hlo_array *in = random_array(rng, t, dims, lo, hi);
    // The run's batch is calibrated too (as tests/runtime/test_golden_run.cpp does).
    memcpy(calib->data, in->data, (size_t)in->shape.elements * hlo_type_size(t));
    save_npy(o.dir / "calib.npy", calib);
    save_npy(o.dir / "in.npy", in);
    const std::string d = o.dir.string() + "/";
    const std::string compile = kBin + "tpuc " + d + "m.hlo --calibrate " + d + "calib.npy" +
                                " --array " + std::to_string(small_n()) + " --quiet -o " + d +
                                "m.tpub";
    EXPECT_EQ(sh(compile), 0) << compile;
    const std::string run = kBin + "tpusim run " + d + "m.tpub --input " + d + "in.npy" +
                            " --output " + d + "out.npy --json " + d + "run.json > " + d +
                            "run.txt 2>&1";
    EXPECT_EQ(sh(run), 0) << run << "\n" << slurp(o.dir / "run.txt");
    hlo_error e;
    hlo_module *m = hlo_parse(text.data(), text.size(), "m.hlo", &e);
    hlo_array **ref = nullptr;
    int n_ref = 0;
    EXPECT_EQ(hlo_eval(m, "m.hlo", &in, 1, &ref, &n_ref, &e), 0) << e.msg;
    npy_array y{};
    char err[256];
    if (n_ref == 1 && npy_load((d + "out.npy").c_str(), &y, err, sizeof err) == 0) {
        EXPECT_EQ((int64_t)y.count, ref[0]->shape.elements);
        for (int64_t i = 0; i < ref[0]->shape.elements && (uint64_t)i < y.count; i++) {
            const bool f = ref[0]->shape.type == HLO_F32;
            o.reference.push_back(f ? ((const float *)ref[0]->data)[i]
                                    : ((const int32_t *)ref[0]->data)[i]);
            o.device.push_back(f ? ((const float *)y.data)[i] : ((const int32_t *)y.data)[i]);
        }
        npy_free(&y);
    }
    hlo_arrays_free(ref, n_ref);
    hlo_module_free(m);
    hlo_array_free(calib);
    hlo_array_free(in);
    return o;
}

// Within tol of the largest reference magnitude (0: exactly).
void expect_close(const Outcome &o, double tol)
{
    ASSERT_FALSE(o.device.empty());
    double mx = 1e-6;
    for (double v : o.reference)
        mx = std::max(mx, std::fabs(v));
    for (size_t i = 0; i < o.device.size(); i++)
        ASSERT_NEAR(o.device[i], o.reference[i], tol * mx) << "element " << i;
}

TEST(ConvOnDevice, NetsMatchTheReference)
{
    std::mt19937 rng(2027);
    for (const cnn_hlo::Case &c : cnn_hlo::cases(small_n())) {
        SCOPED_TRACE(c.name);
        expect_close(compile_and_run(c, rng), c.tol);
    }
}

TEST(ConvOnDevice, RandomNetsMatchTheReference)
{
    std::mt19937 rng(2028);
    for (int i = 0; i < 12; i++) {
        const cnn_hlo::Case c = {"random_" + std::to_string(i), cnn_hlo::random_net(rng, small_n()),
                                 0.1};
        SCOPED_TRACE(c.name);
        expect_close(compile_and_run(c, rng), c.net.integer ? 0 : c.tol);
    }
}

// The report's convolution layers: the table's input -> output shapes and the geometry lines;
// JSON's kind and geometry keys beside the keys every layer has.
TEST(ConvOnDevice, ReportShowsConvolutionLayers)
{
    std::mt19937 rng(5);
    const cnn_hlo::Case c = cnn_hlo::cases(small_n())[1]; // two convolutions, pooled, a dot
    const Outcome o = compile_and_run(c, rng);
    const std::string text = slurp(o.dir / "run.txt");
    EXPECT_NE(text.find("2x12x12x1 -> 2x10x10x4"), std::string::npos) << text;
    EXPECT_NE(text.find("convolutions (NHWC):\n"), std::string::npos) << text;
    EXPECT_NE(text.find("kernel 3x3, stride 1x1, pad 0,0,0,0, max pool 2x2 stride 2x2\n"),
              std::string::npos)
        << text;
    json_error_t je;
    json_t *r = json_load_file((o.dir / "run.json").c_str(), 0, &je);
    ASSERT_NE(r, nullptr) << je.text;
    json_t *layers = json_object_get(r, "layers");
    ASSERT_EQ(json_array_size(layers), 3u);
    json_t *c1 = json_array_get(layers, 1), *d = json_array_get(layers, 2);
    EXPECT_STREQ(json_string_value(json_object_get(c1, "kind")), "conv2d");
    EXPECT_STREQ(json_string_value(json_object_get(c1, "name")), "c1");
    EXPECT_EQ(json_integer_value(json_object_get(c1, "op")), 1);
    EXPECT_EQ(json_integer_value(json_array_get(json_object_get(c1, "input"), 3)), 4);
    EXPECT_EQ(json_integer_value(json_object_get(c1, "cout")), 6);
    EXPECT_EQ(json_integer_value(json_array_get(json_object_get(c1, "output"), 1)), 4);
    EXPECT_EQ(json_integer_value(
                  json_array_get(json_object_get(json_object_get(c1, "pool"), "window"), 0)),
              2);
    EXPECT_EQ(json_integer_value(json_object_get(c1, "macs")), 2 * 8 * 8 * 6 * 9 * 4);
    EXPECT_EQ(json_object_get(c1, "m"), nullptr);
    EXPECT_STREQ(json_string_value(json_object_get(d, "kind")), "gemm");
    EXPECT_EQ(json_integer_value(json_object_get(d, "gemm")), 2);
    EXPECT_EQ(json_integer_value(json_object_get(d, "k")), 96);
    EXPECT_EQ(json_integer_value(json_object_get(r, "submissions")),
              json_integer_value(json_object_get(r, "bit_exact_submissions")));
    json_decref(r);
}

} // namespace

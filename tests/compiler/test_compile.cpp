// test_compile.cpp - tpuc_compile in process, without a device: numerics checked at compile time
// (non-finite weights, biases and calibration samples, scales that overflow float32), each an
// error located at the tensor that caused it, or with allow_nonfinite a warning in the report;
// a bf16 model's dot on the device; the MNIST MLP's StableHLO with its weights bound by name, and
// from text in memory with its weights as arrays by parameter number.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "compiler/tpuc.h"
#include "io/safetensors.h"
#include "tests/support/hlo_test.h"

namespace fs = std::filesystem;

namespace
{

using hlo_test::kInf;
using hlo_test::kNaN;
using hlo_test::make;

struct Compiled {
    int rc;
    std::string err, report;
};

class Compile : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/test_compile.XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir = tmpl;
    }
    void TearDown() override { fs::remove_all(dir); }

    // Compiles module text (a float dot of x [4,3] and weights w, plus bias) calibrated on calib.
    Compiled compile(const std::string &text, std::vector<double> calib, bool allow = false)
    {
        const std::string path = dir + "/m.hlo";
        std::ofstream(path) << text;
        hlo_array *c = make(HLO_F32, {(int64_t)calib.size() / 3, 3}, calib);
        tpuc_options o = {};
        o.hlo_path = path.c_str();
        o.array_n = 4;
        o.calib = &c;
        o.n_calib = calib.empty() ? 0 : 1;
        o.allow_nonfinite = allow;
        tpub_package p;
        hlo_error err{};
        Compiled r;
        r.rc = tpuc_compile(&o, &p, &err);
        r.err = err.msg;
        if (r.rc == 0) {
            r.report = p.report;
            tpub_free(&p);
        }
        hlo_array_free(c);
        return r;
    }

    std::string dir;
};

// x . w + b with w and b as literals (already HLO-formatted).
std::string model(const std::string &w, const std::string &b = "{0, 0, 0, 0}")
{
    return "HloModule m\n\n"
           "ENTRY e {\n"
           "  x = f32[4,3] parameter(0)\n"
           "  w = f32[3,4] constant(" +
           w +
           ")\n"
           "  d = f32[4,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
           "  b = f32[4] constant(" +
           b +
           ")\n"
           "  bb = f32[4,4] broadcast(b), dimensions={1}\n"
           "  ROOT y = f32[4,4] add(d, bb)\n"
           "}\n";
}

const std::string kGoodW = "{{1, 2, 3, 4}, {-1, 0.5, 2, 1}, {0, 1, -3, 2}}";
const std::vector<double> kCalib = {0.1, -0.5, 1, 0.3, 0.2, -1, 1, 1, 0, -0.2, 0.4, 0.6};

TEST_F(Compile, FiniteModelCompiles)
{
    const Compiled r = compile(model(kGoodW), kCalib);
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.report.find("warning"), std::string::npos) << r.report;
}

TEST_F(Compile, NonFiniteWeightsAreLocatedErrors)
{
    Compiled r = compile(model("{{1, 2, 3, 4}, {-1, 0.5, nan, 1}, {0, 1, -3, 2}}"), kCalib);
    EXPECT_EQ(r.rc, -1);
    EXPECT_EQ(r.err, dir + "/m.hlo:5:3: constant: 'd': weights 'w' (as k x n: row 1, column 2): "
                           "element 6 is nan (--allow-nonfinite to go on with a warning)");
    r = compile(model("{{1, 2, 3, 4}, {-1, 0.5, 2, 1}, {0, -inf, -3, 2}}"), kCalib);
    EXPECT_EQ(r.rc, -1);
    EXPECT_NE(r.err.find("weights 'w' (as k x n: row 2, column 1): element 9 is -inf"),
              std::string::npos)
        << r.err;

    r = compile(model(kGoodW, "{0, inf, 0, 0}"), kCalib);
    EXPECT_EQ(r.rc, -1);
    EXPECT_EQ(r.err, dir + "/m.hlo:8:3: broadcast: 'd': bias 'bb' (column 1): element 1 is inf "
                           "(--allow-nonfinite to go on with a warning)");
}

TEST_F(Compile, AllowNonFiniteWarnsAndReplaces)
{
    const Compiled r =
        compile(model("{{1, 2, 3, 4}, {-1, 0.5, nan, 1}, {0, inf, -3, 2}}", "{nan, 0, 0, 0}"),
                kCalib, true);
    ASSERT_EQ(r.rc, 0) << r.err;
    // Warnings lead the report, column by column; an infinity takes its column's largest |w|.
    EXPECT_EQ(r.report.rfind("warning: 'd': weights 'w' (as k x n: row 2, column 1): element 9 "
                             "is inf; taken as 2\n",
                             0),
              0u)
        << r.report;
    EXPECT_NE(r.report.find("(as k x n: row 1, column 2): element 6 is nan; taken as 0\n"),
              std::string::npos)
        << r.report;
    EXPECT_NE(r.report.find("warning: 'd': bias 'bb' (column 0): element 0 is nan; taken as 0\n"),
              std::string::npos)
        << r.report;
}

TEST_F(Compile, NonFiniteCalibrationSamples)
{
    std::vector<double> calib = kCalib;
    calib[5] = kNaN;
    Compiled r = compile(model(kGoodW), calib);
    EXPECT_EQ(r.rc, -1);
    EXPECT_EQ(r.err, dir + "/m.hlo: calibration array 0 (input 'x'): element 5 is nan "
                           "(--allow-nonfinite to go on with a warning)");
    r = compile(model(kGoodW), calib, true);
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.report.find("warning: calibration array 0 (input 'x'): element 5 is nan; "
                            "non-finite samples are left out\n"),
              std::string::npos)
        << r.report;
    calib[5] = -kInf;
    EXPECT_EQ(compile(model(kGoodW), calib).rc, -1);
}

TEST_F(Compile, OverflowingScaleNamesItsTensor)
{
    // Inputs near 1e36 and weights near 3e38: one accumulator unit is worth more than float32.
    std::vector<double> calib = kCalib;
    for (double &v : calib)
        v *= 1e36;
    const Compiled r = compile(model("{{3e38, 2, 3, 4}, {-1, 0.5, 2, 1}, {0, 1, -3, 2}}"), calib);
    EXPECT_EQ(r.rc, -1);
    EXPECT_EQ(r.err.rfind(dir + "/m.hlo:5:3: constant: 'd': column 0 of weights 'w' (max |w| "
                                "3e+38) times the input scale",
                          0),
              0u)
        << r.err;
    EXPECT_NE(r.err.find("overflows float32"), std::string::npos) << r.err;
}

// A scalar broadcast to 46000 x 46000 (8.5 GB of f32) as dot weights: not folded at compile time
// (it would be materialized), and too large for a run-time B (2 GB as int8), so the dot stays on
// the host, and compiling takes no time.
TEST_F(Compile, HugeBroadcastIsNotFolded)
{
    const std::string text = "HloModule m\n\n"
                             "ENTRY e {\n"
                             "  x = f32[4,46000] parameter(0)\n"
                             "  c = f32[] constant(0.5)\n"
                             "  w = f32[46000,46000] broadcast(c), dimensions={}\n"
                             "  ROOT d = f32[4,46000] dot(x, w), lhs_contracting_dims={1}, "
                             "rhs_contracting_dims={0}\n"
                             "}\n";
    const auto t0 = std::chrono::steady_clock::now();
    const Compiled r = compile(text, {});
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.report.find("w stays on the host: folding it would build more than the "
                            "compile-time budget of 1 GiB"),
              std::string::npos)
        << r.report;
    EXPECT_NE(r.report.find("d stays on the host: its right-hand side is computed at run time and "
                            "larger than the 1 GiB a transfer may write"),
              std::string::npos)
        << r.report;
}

// A bf16 model compiles like an f32 one: its dot with constant weights runs on the device,
// quantized from the bf16 values, and the transfers convert from and to bf16.
TEST(CompileTypes, Bf16DotRunsOnTheDevice)
{
    char tmpl[] = "/tmp/test_compile.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const std::string path = std::string(tmpl) + "/m.hlo";
    std::ofstream(path) << "HloModule m\n\nENTRY e {\n"
                           "  x = f32[4,3] parameter(0)\n  xb = bf16[4,3] convert(x)\n"
                           "  w = bf16[3,4] constant({ {1, 2, 3, 4}, {-1, 0.5, 2, 1}, {0, 1, -3, "
                           "2} })\n"
                           "  d = bf16[4,4] dot(xb, w), lhs_contracting_dims={1}, "
                           "rhs_contracting_dims={0}\n"
                           "  b = bf16[4] constant({0.5, 0, -1, 2})\n"
                           "  bb = bf16[4,4] broadcast(b), dimensions={1}\n"
                           "  y = bf16[4,4] add(d, bb)\n  ROOT o = f32[4,4] convert(y)\n}\n";
    hlo_array *c = make(HLO_F32, {4, 3}, {0.1, -0.5, 1, 0.3, 0.2, -1, 1, 1, 0, -0.2, 0.4, 0.6});
    tpuc_options o = {};
    o.hlo_path = path.c_str();
    o.array_n = 4;
    o.calib = &c;
    o.n_calib = 1;
    tpub_package p;
    hlo_error err{};
    ASSERT_EQ(tpuc_compile(&o, &p, &err), 0) << err.msg;
    std::string report = p.report;
    ASSERT_EQ(p.n_segments, 1u) << report;
    const tpub_segment &s = p.segments[0];
    ASSERT_EQ(s.n_ops, 1u);
    EXPECT_EQ(s.inputs[0].host_type, HLO_BF16);
    EXPECT_EQ(s.outputs[0].host_type, HLO_BF16);
    EXPECT_EQ(s.inputs[0].dev_type, HLO_S8);
    tpub_free(&p);
    hlo_array_free(c);
    std::filesystem::remove_all(tmpl);
}

// tpuc compiles models/mnist's MLP from StableHLO as from HLO: the weights bind by the argument
// names (w1 binds the tensor "w1.1"), the device gets the same constant image.
TEST(CompileStableHlo, MnistWithWeightsByName)
{
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<double> calib(32 * 784);
    for (double &x : calib)
        x = u(rng);
    hlo_array *c = make(HLO_F32, {32, 784}, calib);
    std::vector<std::vector<uint8_t>> images;
    for (const std::string &path : {hlo_test::kSrc + "models/mnist/mlp.hlo",
                                    hlo_test::kSrc + "tests/hlo/stablehlo/mnist_mlp.loc.mlir"}) {
        const std::string weights = hlo_test::kSrc + "models/mnist/mlp.safetensors";
        tpuc_options o = {};
        o.hlo_path = path.c_str();
        o.weights_path = weights.c_str();
        o.array_n = 4;
        o.calib = &c;
        o.n_calib = 1;
        tpub_package p;
        hlo_error err{};
        ASSERT_EQ(tpuc_compile(&o, &p, &err), 0) << err.msg;
        EXPECT_EQ(p.n_inputs, 1u) << path;
        images.emplace_back(p.const_image, p.const_image + p.const_bytes);
        tpub_free(&p);
    }
    hlo_array_free(c);
    EXPECT_EQ(images[0], images[1]);
}

// The MLP's StableHLO text from memory with its weights as arrays by parameter number (as the
// Python package binds them) compiles to the constant image of the file with its safetensors;
// a weight of the wrong shape is located at its parameter, and extra weights are an error.
TEST(CompileStableHlo, MnistFromTextWithWeightArrays)
{
    const std::string path = hlo_test::kSrc + "tests/hlo/stablehlo/mnist_mlp.loc.mlir";
    const std::string weights = hlo_test::kSrc + "models/mnist/mlp.safetensors";
    const std::string text = hlo_test::slurp(path);
    std::vector<double> calib(32 * 784, 0.5);
    hlo_array *c = make(HLO_F32, {32, 784}, calib);
    tpuc_options o = {};
    o.hlo_path = path.c_str();
    o.weights_path = weights.c_str();
    o.array_n = 4;
    o.calib = &c;
    o.n_calib = 1;
    tpub_package want, got;
    hlo_error err{};
    ASSERT_EQ(tpuc_compile(&o, &want, &err), 0) << err.msg;

    // The arrays by number: what the file binds to.
    hlo_module *m = hlo_parse(text.data(), text.size(), "model", &err);
    ASSERT_NE(m, nullptr) << err.msg;
    st_file st;
    char serr[256];
    ASSERT_EQ(st_load(weights.c_str(), &st, serr, sizeof serr), 0) << serr;
    hlo_array *w[5];
    ASSERT_EQ(tpuc_bind_safetensors(m, "model", &st, w, 5, &err), 0) << err.msg;
    st_free(&st);
    hlo_module_free(m);
    ASSERT_EQ(w[4], nullptr); // the input

    o.hlo_path = "model.mlir";
    o.hlo_text = text.data();
    o.hlo_len = text.size();
    o.weights_path = nullptr;
    o.weights = w;
    o.n_weights = 4;
    ASSERT_EQ(tpuc_compile(&o, &got, &err), 0) << err.msg;
    EXPECT_EQ(std::vector<uint8_t>(got.const_image, got.const_image + got.const_bytes),
              std::vector<uint8_t>(want.const_image, want.const_image + want.const_bytes));
    EXPECT_EQ(std::string(got.report), std::string(want.report));
    tpub_free(&got);
    tpub_free(&want);

    hlo_array *b = make(HLO_F32, {10}, std::vector<double>(10, 0));
    hlo_array *swapped[4] = {w[0], w[1], b, w[3]};
    o.weights = swapped;
    EXPECT_EQ(tpuc_compile(&o, &got, &err), -1);
    const std::string msg = err.msg;
    EXPECT_EQ(msg.rfind("model.mlir:", 0), 0u) << msg;
    EXPECT_NE(msg.find("parameter: '"), std::string::npos) << msg;
    EXPECT_NE(msg.find("' is f32[256,10] but its weight is f32[10]"), std::string::npos) << msg;
    hlo_array *extra[6] = {w[0], w[1], w[2], w[3], nullptr, b};
    o.weights = extra;
    o.n_weights = 6;
    EXPECT_EQ(tpuc_compile(&o, &got, &err), -1);
    EXPECT_STREQ(err.msg, "model.mlir: 6 weights but 5 parameters");
    o.weights_path = weights.c_str();
    o.n_weights = 4;
    EXPECT_EQ(tpuc_compile(&o, &got, &err), -1);
    EXPECT_STREQ(err.msg, "model.mlir: weights given both as a file and as arrays");
    for (hlo_array *a : w)
        hlo_array_free(a);
    hlo_array_free(b);
    hlo_array_free(c);
}

} // namespace

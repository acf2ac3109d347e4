// test_runtime.cpp - the runtime (runtime/tpurt.h) in process, on packages built here (and a JAX
// training step and a scanned loop tpuc compiles, the step's outputs that update its inputs):
// outputs bit-exact against a C reference of the same quantized arithmetic, the signatures, the
// statistics, the options (memory timing, verify off, cycle budget), tpurt_load, traces, and
// every error tpurt can return with its message, the runtime staying usable or closable after it.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/tpuc.h"
#include "runtime/tpurt.h"
#include "tests/support/hlo_test.h"
#include "tests/support/pkg_build.h"
#include "tests/support/progs.h"
#include "tests/support/runtime_models.h"

namespace fs = std::filesystem;

namespace
{
std::string slurp(const fs::path &p)
{
    std::ifstream f(p, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

using namespace runtime_models;

// A scratch directory, removed afterwards.
class Runtime : public ::testing::Test
{
  protected:
    fs::path dir;
    void SetUp() override
    {
        char tmpl[] = "/tmp/test_runtime.XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir = tmpl;
    }
    void TearDown() override { fs::remove_all(dir); }
};

// ---------------------------------------------------------------- runs --

TEST_F(Runtime, RunsMatchTheQuantizedReference)
{
    ModelA a;
    Rt rt(a.p.pkg);
    ASSERT_EQ(rt.st, TPURT_OK) << rt.err;
    EXPECT_STREQ(tpurt_last_error(rt), "");
    for (uint64_t batch = 0; batch < 3; batch++) {
        std::vector<float> x = random_x(10 + batch), r;
        if (batch == 1) {
            x[3] = NAN; // quantizes to 0
            x[40] = INFINITY;
            x[41] = -INFINITY;
            x[42] = 100.0f;
        }
        ASSERT_EQ(run_a(rt, x, &r), TPURT_OK) << tpurt_last_error(rt);
        const std::vector<float> want = a.reference(x);
        EXPECT_TRUE(same_bits(r, want)) << "batch " << batch;
        EXPECT_GT(*std::max_element(want.begin(), want.end()), 0.0f); // not all clamped away
    }
}

TEST_F(Runtime, TwoSegmentsWithATupleAndCopies)
{
    ModelB b;
    Rt rt(b.p.pkg);
    ASSERT_EQ(rt.st, TPURT_OK) << rt.err;
    tpu_rng rng{3};
    std::vector<uint8_t> x(ModelB::kBatch * ModelB::kIn);
    rng_fill(&rng, x.data(), x.size());
    std::vector<int32_t> y(ModelB::kBatch * ModelB::kOut);
    std::vector<int8_t> h(ModelB::kBatch * ModelB::kHidden);
    const void *in[] = {x.data()};
    void *out[] = {y.data(), h.data()};
    ASSERT_EQ(tpurt_run(rt, in, 1, out, 2), TPURT_OK) << tpurt_last_error(rt);
    std::vector<int32_t> want_y;
    std::vector<int8_t> want_h;
    b.reference(x, want_y, want_h);
    EXPECT_EQ(y, want_y);
    EXPECT_EQ(h, want_h);
    EXPECT_GT(std::count_if(want_y.begin(), want_y.end(), [](int32_t v) { return v > 0; }), 0);
    tpurt_stats s;
    ASSERT_EQ(tpurt_get_stats(rt, &s), TPURT_OK);
    EXPECT_EQ(s.submissions, 2u);
    ASSERT_EQ(tpurt_n_layers(rt), 2u);
    tpurt_layer l;
    ASSERT_EQ(tpurt_get_layer(rt, 1, &l), TPURT_OK);
    EXPECT_STREQ(l.name, "dot.1");
    EXPECT_STREQ(l.fused, "");
    EXPECT_EQ(l.segment, 1u);
    EXPECT_EQ(l.index, 0u);
}

TEST_F(Runtime, SignaturesAreDescribed)
{
    ModelB b;
    Rt rt(b.p.pkg);
    ASSERT_EQ(rt.st, TPURT_OK) << rt.err;
    ASSERT_EQ(tpurt_n_inputs(rt), 1u);
    ASSERT_EQ(tpurt_n_outputs(rt), 2u);
    tpurt_tensor t;
    ASSERT_EQ(tpurt_get_input(rt, 0, &t), TPURT_OK);
    EXPECT_STREQ(t.name, "x");
    EXPECT_EQ(t.type, HLO_U8);
    EXPECT_EQ(t.rank, 2);
    EXPECT_EQ(t.dims[0], 4);
    EXPECT_EQ(t.dims[1], 20);
    EXPECT_EQ(t.elements, 80u);
    EXPECT_EQ(t.bytes, 80u);
    ASSERT_EQ(tpurt_get_output(rt, 0, &t), TPURT_OK);
    EXPECT_STREQ(t.name, "y");
    EXPECT_EQ(t.type, HLO_S32);
    EXPECT_EQ(t.elements, 32u);
    EXPECT_EQ(t.bytes, 128u);
    ASSERT_EQ(tpurt_get_output(rt, 1, &t), TPURT_OK);
    EXPECT_STREQ(t.name, "h");
    EXPECT_EQ(t.type, HLO_S8);
    EXPECT_EQ(t.bytes, 64u);
    // A scalar output: rank 0, one element.
    ModelA a;
    tpub_sig scalar = a.p.pkg.outputs[0];
    scalar.rank = 0;
    a.p.pkg.outputs = &scalar;
    Rt rt_a(a.p.pkg);
    ASSERT_EQ(rt_a.st, TPURT_OK) << rt_a.err;
    ASSERT_EQ(tpurt_get_output(rt_a, 0, &t), TPURT_OK);
    EXPECT_EQ(t.rank, 0);
    EXPECT_EQ(t.elements, 1u);
    EXPECT_EQ(t.bytes, 4u);
    ASSERT_EQ(tpurt_get_input(rt_a, 0, &t), TPURT_OK);
    EXPECT_EQ(t.type, HLO_F32);
    EXPECT_EQ(t.bytes, 4u * 36 * 4);
}

// A training step of tests/hlo/stablehlo/ compiled in bf16 at N = 4, and one step of it run on
// the device and by the reference evaluator: its state inputs (the first `state`) are the
// parameters (the first `params`) in [-1, 1] and the optimizer's state zero (step 0); then the
// data in [-1, 1] and labels 0..2.
struct TrainStep {
    std::string file, path;
    tpub_package pkg{};
    std::vector<hlo_array *> in, ref, got;
    explicit TrainStep(const std::string &f)
        : file(f), path(std::string(TPU_SOURCE_DIR "/tests/hlo/stablehlo/") + f)
    {
    }
    ~TrainStep()
    {
        for (auto *v : {&in, &ref, &got})
            for (hlo_array *a : *v)
                hlo_array_free(a);
        tpub_free(&pkg);
    }
    TrainStep(const TrainStep &) = delete;
    TrainStep &operator=(const TrainStep &) = delete;

    void compile()
    {
        tpuc_options o{};
        o.hlo_path = path.c_str();
        o.array_n = 4;
        o.precision = TPUC_BF16;
        hlo_error e{};
        ASSERT_EQ(tpuc_compile(&o, &pkg, &e), 0) << e.msg;
    }

    void run(tpurt *rt, uint32_t params, uint32_t state)
    {
        hlo_error e{};
        hlo_module *m = hlo_parse_file(path.c_str(), &e);
        ASSERT_NE(m, nullptr) << e.msg;
        std::vector<const void *> in_ptr;
        for (uint32_t k = 0; k < tpurt_n_inputs(rt); k++) {
            tpurt_tensor t;
            ASSERT_EQ(tpurt_get_input(rt, k, &t), TPURT_OK);
            hlo_array *a = hlo_array_new(t.type, t.rank, t.dims);
            const bool zero = k >= params && k < state;
            for (uint64_t i = 0; i < t.elements; i++)
                if (t.type == HLO_S32)
                    ((int32_t *)a->data)[i] = zero ? 0 : (int32_t)((i * 7 + k) % 3);
                else
                    ((float *)a->data)[i] =
                        zero ? 0.0f : (float)std::sin(1.0 + (double)(i * 13 + k * 5));
            in.push_back(a);
            in_ptr.push_back(a->data);
        }
        hlo_array **outs = nullptr;
        int n_outs = 0;
        const int rc = hlo_eval(m, file.c_str(), in.data(), (int)in.size(), &outs, &n_outs, &e);
        hlo_module_free(m);
        ASSERT_EQ(rc, 0) << e.msg;
        ref.assign(outs, outs + n_outs);
        free(outs);
        ASSERT_EQ((uint32_t)n_outs, tpurt_n_outputs(rt));
        std::vector<void *> out_ptr;
        for (hlo_array *r : ref) {
            got.push_back(hlo_array_new(r->shape.type, r->shape.rank, r->shape.dims));
            out_ptr.push_back(got.back()->data);
        }
        ASSERT_EQ(tpurt_run(rt, in_ptr.data(), (uint32_t)in.size(), out_ptr.data(),
                            (uint32_t)out_ptr.size()),
                  TPURT_OK)
            << tpurt_last_error(rt);
    }
};

// A JAX SGD step (tests/hlo/stablehlo/sgd_step.*, its parameters donated) compiled in bf16: the
// outputs that update the parameters say which input they update, and one step on the device
// agrees with the reference evaluator within bf16's rounding.
TEST_F(Runtime, TrainingStepOutputsUpdateItsInputs)
{
    for (const char *file : {"sgd_step.hlo", "sgd_step.mlir"}) {
        SCOPED_TRACE(file);
        TrainStep s(file);
        ASSERT_NO_FATAL_FAILURE(s.compile());
        EXPECT_NE(std::string(s.pkg.report).find("5 on the device"), std::string::npos)
            << s.pkg.report;
        Rt rt(s.pkg);
        ASSERT_EQ(rt.st, TPURT_OK) << rt.err;
        ASSERT_EQ(tpurt_n_inputs(rt), 6u);
        ASSERT_EQ(tpurt_n_outputs(rt), 5u);
        for (uint32_t k = 0; k < 4; k++)
            EXPECT_EQ(tpurt_output_updates(rt, k), (int32_t)k);
        EXPECT_EQ(tpurt_output_updates(rt, 4), -1); // the loss
        EXPECT_EQ(tpurt_output_updates(rt, 5), -1);
        EXPECT_EQ(tpurt_output_updates(nullptr, 0), -1);
        ASSERT_NO_FATAL_FAILURE(s.run(rt, 4, 4));
        // bf16 operands (8 significant bits) in sums of at most 8 products: within 2 % of the
        // largest magnitude of each output.
        for (size_t k = 0; k < s.ref.size(); k++) {
            const float *want = (const float *)s.ref[k]->data, *got = (const float *)s.got[k]->data;
            float mx = 1e-6f;
            for (int64_t i = 0; i < s.ref[k]->shape.elements; i++)
                mx = std::max(mx, std::fabs(want[i]));
            for (int64_t i = 0; i < s.ref[k]->shape.elements; i++)
                EXPECT_NEAR(got[i], want[i], 0.02 * mx) << "output " << k << " " << i;
        }
    }
}

// tests/jax/train_steps.py's steps (params, opt_state, x, y) -> (params', opt_state', loss), SGD
// with momentum and Adam for an MLP and a CNN, as generate.py lowers them (params and opt_state
// donated), from HLO and StableHLO in bf16: every dot and convolution (forward and gradients) on
// the device, each state output updating its input, one step from zero optimizer state near the
// reference evaluator's. Several steps against JAX: tests/jax/train_steps.py.
TEST_F(Runtime, TrainingStepsRunEveryDotAndConvolutionOnTheDevice)
{
    const struct {
        const char *name;
        uint32_t params, state; // state: params and optimizer state, the inputs that outputs update
        const char *placed;
        size_t device_ops;
    } steps[] = {
        {"train_mlp_momentum", 4, 8, "(GEMMs: 5, segments", 5},
        {"train_mlp_adam", 4, 13, "(GEMMs: 5, segments", 5},
        {"train_cnn_momentum", 6, 12, "(GEMMs: 3, convolutions: 5, segments", 8},
        {"train_cnn_adam", 6, 19, "(GEMMs: 3, convolutions: 5, segments", 8},
    };
    for (const auto &st : steps)
        for (const char *ext : {".hlo", ".mlir"}) {
            TrainStep s(std::string(st.name) + ext);
            SCOPED_TRACE(s.file);
            ASSERT_NO_FATAL_FAILURE(s.compile());
            const std::string report = s.pkg.report;
            EXPECT_NE(report.find(st.placed), std::string::npos) << report;
            size_t in_bf16 = 0;
            for (size_t at = 0; (at = report.find("bf16 on the device", at)) != std::string::npos;
                 at++)
                in_bf16++;
            EXPECT_EQ(in_bf16, st.device_ops) << report;
            const std::string host = report.substr(report.find("  on the host:"));
            const std::string host_ops = host.substr(0, host.find('\n'));
            EXPECT_EQ(host_ops.find("(dot)"), std::string::npos) << host_ops;
            EXPECT_EQ(host_ops.find("(convolution)"), std::string::npos) << host_ops;
            if (std::string(st.name).find("cnn") != std::string::npos) { // max pooling's gradient
                EXPECT_NE(host_ops.find("(select-and-scatter)"), std::string::npos) << host_ops;
            }
            Rt rt(s.pkg);
            ASSERT_EQ(rt.st, TPURT_OK) << rt.err;
            ASSERT_EQ(tpurt_n_inputs(rt), st.state + 2);
            ASSERT_EQ(tpurt_n_outputs(rt), st.state + 1);
            for (uint32_t k = 0; k < st.state; k++)
                EXPECT_EQ(tpurt_output_updates(rt, k), (int32_t)k);
            EXPECT_EQ(tpurt_output_updates(rt, st.state), -1); // the loss
            ASSERT_NO_FATAL_FAILURE(s.run(rt, st.params, st.state));
            // bf16 operands (8 significant bits) in sums of at most 72 products: gradients
            // within 2 % relative RMS of the reference's (the SGD step's bound above, of its
            // largest magnitude), and Adam's v, their squares, within twice that (measured: at
            // most 2.6 %); the step counter exact.
            for (size_t k = 0; k < s.ref.size(); k++) {
                double err = 0, norm = 0;
                for (int64_t i = 0; i < s.ref[k]->shape.elements; i++) {
                    const double w = hlo_array_get(s.ref[k], i), g = hlo_array_get(s.got[k], i);
                    err += (g - w) * (g - w);
                    norm += w * w;
                }
                if (s.ref[k]->shape.type == HLO_S32)
                    EXPECT_EQ(err, 0) << "output " << k;
                else
                    EXPECT_LE(std::sqrt(err / std::max(norm, 1e-30)), 0.04) << "output " << k;
            }
        }
}

TEST_F(Runtime, StatisticsPerLayerAndInAll)
{
    ModelA a;
    Rt rt(a.p.pkg);
    ASSERT_EQ(rt.st, TPURT_OK) << rt.err;
    std::vector<float> r;
    for (uint64_t batch = 0; batch < 3; batch++)
        ASSERT_EQ(run_a(rt, random_x(batch), &r), TPURT_OK) << tpurt_last_error(rt);
    tpu_info info;
    ASSERT_EQ(tpurt_get_info(rt, &info), TPURT_OK);
    EXPECT_EQ(info.array_n, array_n());
    EXPECT_EQ(info.mem_size, 64u << 20);
    tpurt_stats s;
    ASSERT_EQ(tpurt_get_stats(rt, &s), TPURT_OK);
    EXPECT_EQ(s.runs, 3u);
    EXPECT_EQ(s.submissions, 6u);
    EXPECT_EQ(s.verified, 6u);
    EXPECT_GT(s.device_seconds, 0);
    EXPECT_GE(s.host_seconds, 0);
    ASSERT_EQ(tpurt_n_layers(rt), 2u);
    const uint32_t shapes[2][3] = {{4, 36, 12}, {4, 12, 10}};
    const uint32_t flags[2] = {ModelA::kFlags1, ModelA::kFlags2};
    uint64_t cycles = 0;
    for (uint32_t i = 0; i < 2; i++) {
        tpurt_layer l;
        ASSERT_EQ(tpurt_get_layer(rt, i, &l), TPURT_OK);
        EXPECT_STREQ(l.name, i ? "dot.2" : "dot.1");
        EXPECT_STREQ(l.fused, i ? "add.2" : "add.1,maximum.1");
        EXPECT_EQ(l.segment, 0u);
        EXPECT_EQ(l.index, i);
        EXPECT_EQ(l.m, shapes[i][0]);
        EXPECT_EQ(l.k, shapes[i][1]);
        EXPECT_EQ(l.n, shapes[i][2]);
        EXPECT_EQ(l.flags, flags[i] | TPU_GEMM_B_TILED);
        EXPECT_EQ(l.macs, (uint64_t)shapes[i][0] * shapes[i][1] * shapes[i][2]);
        EXPECT_EQ(l.submissions, 3u);
        EXPECT_EQ(l.iterations, 1u);
        EXPECT_GT(l.cycles, 0u);
        // The driver's cost of one submission, three times.
        tpu_gemm g{};
        g.m = l.m;
        g.k = l.k;
        g.n = l.n;
        g.flags = l.flags;
        tpu_cost c;
        ASSERT_EQ(tpu_gemm_cost(&info, &g, &c), TPU_OK);
        EXPECT_DOUBLE_EQ(l.ideal_cycles, 3 * (double)l.macs / (info.array_n * info.array_n));
        EXPECT_DOUBLE_EQ(l.bound_cycles, 3 * c.bound_cycles);
        EXPECT_EQ(l.bytes, c.bytes);
        EXPECT_GE(l.bound_cycles, l.ideal_cycles);
        EXPECT_GE((double)l.cycles, l.bound_cycles);
        cycles += l.cycles;
    }
    EXPECT_EQ(s.cycles, cycles);
}

TEST_F(Runtime, AnUnrolledLoopsDotIsOneLayer)
{
    // Six trips of h = tanh(h . w): six GEMMs of one name in six segments, one layer.
    const std::string text = hlo_test::scan_hlo(6, 12, 4);
    tpuc_options o{};
    o.hlo_path = "scan.hlo";
    o.hlo_text = text.c_str();
    o.hlo_len = text.size();
    o.array_n = array_n();
    o.precision = TPUC_BF16;
    tpub_package pkg;
    hlo_error e{};
    ASSERT_EQ(tpuc_compile(&o, &pkg, &e), 0) << e.msg;
    {
        Rt rt(pkg);
        ASSERT_EQ(rt.st, TPURT_OK) << rt.err;
        std::vector<float> x(4 * 12, 0.5f), y(4 * 12);
        const void *in[] = {x.data()};
        void *out[] = {y.data()};
        for (int run = 0; run < 2; run++)
            ASSERT_EQ(tpurt_run(rt, in, 1, out, 1), TPURT_OK) << tpurt_last_error(rt);
        tpurt_stats s;
        ASSERT_EQ(tpurt_get_stats(rt, &s), TPURT_OK);
        EXPECT_EQ(s.submissions, 12u);
        ASSERT_EQ(tpurt_n_layers(rt), 1u);
        tpurt_layer l;
        ASSERT_EQ(tpurt_get_layer(rt, 0, &l), TPURT_OK);
        EXPECT_STREQ(l.name, "d");
        EXPECT_EQ(l.segment, 0u);
        EXPECT_EQ(l.iterations, 6u);
        EXPECT_EQ(l.submissions, 12u);
        EXPECT_EQ(l.macs, 4u * 12 * 12);
        EXPECT_EQ(l.cycles, s.cycles);
        EXPECT_DOUBLE_EQ(l.ideal_cycles, 12.0 * (double)l.macs / (array_n() * array_n()));
        EXPECT_EQ(tpurt_get_layer(rt, 1, &l), TPURT_E_ARG);
        EXPECT_STREQ(tpurt_last_error(rt), "tpurt_get_layer: 1, but there are 1");
    }
    tpub_free(&pkg);
}

TEST_F(Runtime, OptionsReachTheDevice)
{
    ModelA a;
    tpurt_options o;
    tpurt_options_default(&o);
    EXPECT_EQ(o.verify, 1);
    EXPECT_EQ(o.max_cycles, 0u);
    EXPECT_EQ(o.device, nullptr);
    tpusim_config device{};
    device.mem_latency = 100;
    device.mem_bytes_per_cycle = 4;
    o.device = &device;
    o.verify = 0;
    Rt rt(a.p.pkg, &o);
    ASSERT_EQ(rt.st, TPURT_OK) << rt.err;
    tpu_info info;
    ASSERT_EQ(tpurt_get_info(rt, &info), TPURT_OK);
    EXPECT_EQ(info.mem_latency, 100u);
    EXPECT_EQ(info.mem_bytes_per_cycle, 4u);
    // Verify off: the same results, no submission verified.
    const std::vector<float> x = random_x(5);
    std::vector<float> r;
    ASSERT_EQ(run_a(rt, x, &r), TPURT_OK) << tpurt_last_error(rt);
    EXPECT_TRUE(same_bits(r, a.reference(x)));
    tpurt_stats s;
    ASSERT_EQ(tpurt_get_stats(rt, &s), TPURT_OK);
    EXPECT_EQ(s.submissions, 2u);
    EXPECT_EQ(s.verified, 0u);
    // The slower memory took more cycles than the default's.
    Rt fast(a.p.pkg);
    ASSERT_EQ(fast.st, TPURT_OK) << fast.err;
    ASSERT_EQ(run_a(fast, x, &r), TPURT_OK) << tpurt_last_error(fast);
    tpurt_stats f;
    ASSERT_EQ(tpurt_get_stats(fast, &f), TPURT_OK);
    EXPECT_LT(f.cycles, s.cycles);
}

TEST_F(Runtime, LoadOwnsThePackage)
{
    const fs::path path = dir / "a.tpub";
    std::vector<float> x = random_x(8), r;
    std::vector<float> want;
    {
        ModelA a;
        a.p.save(path);
        want = a.reference(x);
    } // the builder is gone: the runtime reads its own copy
    tpurt *rt = nullptr;
    char err[512] = "";
    ASSERT_EQ(tpurt_load(path.c_str(), nullptr, &rt, err, sizeof err), TPURT_OK) << err;
    ASSERT_EQ(run_a(rt, x, &r), TPURT_OK) << tpurt_last_error(rt);
    EXPECT_TRUE(same_bits(r, want));
    tpurt_tensor t;
    ASSERT_EQ(tpurt_get_input(rt, 0, &t), TPURT_OK);
    EXPECT_STREQ(t.name, "x");
    tpurt_close(rt);
}

TEST_F(Runtime, TraceOfTheNextRun)
{
    ModelA a;
    Rt rt(a.p.pkg);
    ASSERT_EQ(rt.st, TPURT_OK) << rt.err;
    const fs::path fst = dir / "t.fst";
    ASSERT_EQ(tpurt_trace(rt, fst.c_str(), 0, 400), TPURT_OK) << tpurt_last_error(rt);
    std::vector<float> r;
    ASSERT_EQ(run_a(rt, random_x(1), &r), TPURT_OK) << tpurt_last_error(rt);
    ASSERT_TRUE(fs::exists(fst));
    const auto size = fs::file_size(fst);
    EXPECT_GT(size, 0u);
    EXPECT_NE(slurp(dir / "t.gtkw").find(fst.string()), std::string::npos);
    // Only that run: the next one leaves the trace alone.
    fs::remove(dir / "t.gtkw");
    ASSERT_EQ(run_a(rt, random_x(2), &r), TPURT_OK) << tpurt_last_error(rt);
    EXPECT_EQ(fs::file_size(fst), size);
    EXPECT_FALSE(fs::exists(dir / "t.gtkw"));
    // A VCD by its extension.
    const fs::path vcd = dir / "t.vcd";
    ASSERT_EQ(tpurt_trace(rt, vcd.c_str(), 0, 0), TPURT_OK) << tpurt_last_error(rt);
    ASSERT_EQ(run_a(rt, random_x(3), &r), TPURT_OK) << tpurt_last_error(rt);
    EXPECT_EQ(slurp(vcd).rfind("$", 0), 0u);
}

// ------------------------------------------------------------- errors --

TEST_F(Runtime, NullAndBadArguments)
{
    EXPECT_STREQ(tpurt_status_name(TPURT_OK), "TPURT_OK");
    EXPECT_STREQ(tpurt_status_name(TPURT_E_FIRMWARE), "TPURT_E_FIRMWARE");
    EXPECT_STREQ(tpurt_status_name(TPURT_E_IO), "TPURT_E_IO");
    EXPECT_STREQ(tpurt_status_name(static_cast<tpurt_status>(99)), "?");
    EXPECT_STREQ(tpurt_last_error(nullptr), "no runtime");
    tpurt_close(nullptr);
    tpurt_options_default(nullptr);

    ModelA a;
    tpurt *rt = reinterpret_cast<tpurt *>(&a); // must be overwritten
    char err[256] = "";
    EXPECT_EQ(tpurt_open(nullptr, nullptr, &rt, err, sizeof err), TPURT_E_ARG);
    EXPECT_EQ(rt, nullptr);
    EXPECT_TRUE(has(err, "tpurt_open: no package")) << err;
    EXPECT_EQ(tpurt_open(&a.p.pkg, nullptr, nullptr, err, sizeof err), TPURT_E_ARG);
    EXPECT_TRUE(has(err, "tpurt_open: NULL rt")) << err;
    EXPECT_EQ(tpurt_open(&a.p.pkg, nullptr, nullptr, nullptr, 0), TPURT_E_ARG); // no buffer
    EXPECT_EQ(tpurt_load(nullptr, nullptr, &rt, err, sizeof err), TPURT_E_ARG);
    EXPECT_TRUE(has(err, "tpurt_load: no path")) << err;

    EXPECT_EQ(tpurt_n_inputs(nullptr), 0u);
    EXPECT_EQ(tpurt_n_outputs(nullptr), 0u);
    EXPECT_EQ(tpurt_n_layers(nullptr), 0u);
    tpurt_tensor t;
    tpurt_layer l;
    tpurt_stats s;
    tpu_info info;
    EXPECT_EQ(tpurt_get_input(nullptr, 0, &t), TPURT_E_ARG);
    EXPECT_EQ(tpurt_get_output(nullptr, 0, &t), TPURT_E_ARG);
    EXPECT_EQ(tpurt_get_layer(nullptr, 0, &l), TPURT_E_ARG);
    EXPECT_EQ(tpurt_get_stats(nullptr, &s), TPURT_E_ARG);
    EXPECT_EQ(tpurt_get_info(nullptr, &info), TPURT_E_ARG);
    EXPECT_EQ(tpurt_run(nullptr, nullptr, 0, nullptr, 0), TPURT_E_ARG);
    EXPECT_EQ(tpurt_trace(nullptr, "t.fst", 0, 0), TPURT_E_ARG);

    Rt open(a.p.pkg);
    ASSERT_EQ(open.st, TPURT_OK) << open.err;
    // Each call's status and then its message.
    auto expect_arg = [&](tpurt_status st, const std::string &msg) {
        EXPECT_EQ(st, TPURT_E_ARG) << msg;
        EXPECT_TRUE(has(tpurt_last_error(open), msg))
            << "want '" << msg << "' in: " << tpurt_last_error(open);
    };
    const std::vector<float> x = random_x(1);
    std::vector<float> r(40);
    const void *in[] = {x.data(), x.data()}, *null_in[] = {nullptr};
    void *out[] = {r.data()}, *null_out[] = {nullptr};
    expect_arg(tpurt_get_input(open, 1, &t), "tpurt_get_input: 1, but there are 1");
    expect_arg(tpurt_get_input(open, 0, nullptr), "tpurt_get_input: NULL tensor");
    expect_arg(tpurt_get_output(open, 7, &t), "tpurt_get_output: 7, but there are 1");
    expect_arg(tpurt_get_layer(open, 2, &l), "tpurt_get_layer: 2, but there are 2");
    expect_arg(tpurt_get_layer(open, 0, nullptr), "tpurt_get_layer: NULL layer");
    expect_arg(tpurt_get_stats(open, nullptr), "tpurt_get_stats: NULL stats");
    expect_arg(tpurt_get_info(open, nullptr), "tpurt_get_info: NULL info");
    expect_arg(tpurt_run(open, in, 2, out, 1), "tpurt_run: 2 inputs given, but the package has 1");
    expect_arg(tpurt_run(open, in, 1, out, 0), "tpurt_run: 0 outputs given, but the package has 1");
    expect_arg(tpurt_run(open, nullptr, 1, out, 1), "tpurt_run: inputs 0 is NULL");
    expect_arg(tpurt_run(open, null_in, 1, out, 1), "tpurt_run: inputs 0 is NULL");
    expect_arg(tpurt_run(open, in, 1, null_out, 1), "tpurt_run: outputs 0 is NULL");
    expect_arg(tpurt_run(open, in, 1, nullptr, 1), "tpurt_run: outputs 0 is NULL");
    expect_arg(tpurt_trace(open, nullptr, 0, 0), "tpu_trace_open: no path");
    expect_arg(tpurt_trace(open, (dir / "t.fst").c_str(), 9, 9), "empty window [9, 9)");
    // None of them ran anything, and the runtime runs.
    tpurt_stats before;
    ASSERT_EQ(tpurt_get_stats(open, &before), TPURT_OK);
    EXPECT_EQ(before.runs, 0u);
    EXPECT_EQ(before.submissions, 0u);
    ASSERT_EQ(run_a(open, x, &r), TPURT_OK) << tpurt_last_error(open);
    EXPECT_TRUE(same_bits(r, a.reference(x)));
}

TEST_F(Runtime, PackagesThatCannotRun)
{
    const std::string size = std::to_string(array_n());
    struct Case {
        const char *what;
        void (*spoil)(ModelA &);
        tpurt_status st;
        std::string msg;
    };
    const Case cases[] = {
        {"no model of the array size",
         [](ModelA &a) {
             uint32_t sizes[64];
             const int n = tpu_array_sizes(sizes, 64);
             a.p.pkg.array_n = 3;
             while (std::find(sizes, sizes + n, a.p.pkg.array_n) != sizes + n)
                 a.p.pkg.array_n++;
         },
         TPURT_E_DEVICE, "array_n"},
        {"an arena beyond the device's addresses",
         [](ModelA &a) { a.p.pkg.arena_bytes = (3ull << 30) + 1; }, TPURT_E_PACKAGE,
         "an arena of 3221225473 bytes; at most 3 GiB fit the device's addresses"},
        {"a host program that does not parse",
         [](ModelA &a) { a.p.pkg.host_hlo = const_cast<char *>("HloModule m\nENTRY {"); },
         TPURT_E_PACKAGE, "host program:2:"},
        {"a host program that does not check",
         [](ModelA &a) {
             static std::string h = ModelA::host("tpu.segment.0");
             h.replace(h.find("maximum(s, zeros)"), 17, "maximum(s, x)");
             a.p.pkg.host_hlo = h.data();
         },
         TPURT_E_PACKAGE, "host program:7:"},
        {"a custom-call target past the segments",
         [](ModelA &a) {
             static std::string h = ModelA::host("tpu.segment.5");
             a.p.pkg.host_hlo = h.data();
         },
         TPURT_E_PACKAGE,
         "host program:4:3: custom-call: custom_call_target \"tpu.segment.5\" is not a segment of "
         "the package (tpu.segment.K, K < 1)"},
        {"a custom-call target that is no segment",
         [](ModelA &a) {
             static std::string h = ModelA::host("my.kernel");
             a.p.pkg.host_hlo = h.data();
         },
         TPURT_E_PACKAGE, "custom_call_target \"my.kernel\" is not a segment"},
        {"a segment with another number of inputs",
         [](ModelA &a) { a.p.pkg.segments[0].n_inputs = 2; }, TPURT_E_PACKAGE,
         "host program:4:3: custom-call: segment 0 has 2 inputs and 1 outputs, the custom-call "
         "1 operands and 1 results"},
        {"an operand that is not the segment's input",
         [](ModelA &a) { a.p.pkg.segments[0].inputs[0].cols = 35; }, TPURT_E_PACKAGE,
         "operand 0 is f32[4,36], segment 0 input 0 takes 4 x 35 f32"},
        {"a result that is not the segment's output",
         [](ModelA &a) { a.p.pkg.segments[0].outputs[0].host_type = HLO_S32; }, TPURT_E_PACKAGE,
         "result 0 is f32[4,10], segment 0 output 0 gives 4 x 10 s32"},
        {"a parameter that is not the input", [](ModelA &a) { a.p.pkg.inputs[0].dims[1] = 35; },
         TPURT_E_PACKAGE,
         "host program:3:3: parameter: 'x' is f32[4,36], but input 0 is 'x' f32[4,35]"},
        {"more inputs than parameters", [](ModelA &a) { a.p.pkg.n_inputs = 0; }, TPURT_E_PACKAGE,
         "ENTRY 'main' has 1 parameters, but the package has 0 inputs"},
        {"a GEMM flag the driver does not know",
         [](ModelA &a) { a.p.pkg.segments[0].ops[1].gemm.flags |= 1u << 5; }, TPURT_E_PACKAGE,
         "segment 0 gemm 1 'dot.2': the driver refuses the command: TPU_E_ARG"},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.what);
        ModelA a;
        c.spoil(a);
        tpurt *rt = reinterpret_cast<tpurt *>(&a);
        char err[512] = "";
        EXPECT_EQ(tpurt_open(&a.p.pkg, nullptr, &rt, err, sizeof err), c.st) << err;
        EXPECT_EQ(rt, nullptr);
        EXPECT_TRUE(has(err, c.msg)) << "want '" << c.msg << "' in: " << err;
    }
    // tpurt_load: what tpub_load refuses, with the path.
    const fs::path junk = dir / "junk.tpub", missing = dir / "missing.tpub";
    std::ofstream(junk) << "TPUB\x02";
    for (const fs::path &p : {junk, missing}) {
        tpurt *rt = nullptr;
        char err[512] = "";
        EXPECT_EQ(tpurt_load(p.c_str(), nullptr, &rt, err, sizeof err), TPURT_E_PACKAGE);
        EXPECT_EQ(rt, nullptr);
        EXPECT_EQ(std::string(err).rfind(p.string() + ": ", 0), 0u) << err;
    }
    // A loadable package that cannot run: tpurt_load frees it again.
    ModelA a("tpu.segment.3");
    a.p.save(dir / "bad.tpub");
    tpurt *rt = nullptr;
    char err[512] = "";
    EXPECT_EQ(tpurt_load((dir / "bad.tpub").c_str(), nullptr, &rt, err, sizeof err),
              TPURT_E_PACKAGE);
    EXPECT_TRUE(has(err, "\"tpu.segment.3\" is not a segment")) << err;
}

TEST_F(Runtime, ResultsThatAreNotTheOutputs)
{
    ModelA a("tpu.segment.0", 2); // the host program gives f32[4,10]
    Rt rt(a.p.pkg);
    ASSERT_EQ(rt.st, TPURT_OK) << rt.err;
    std::vector<float> x = random_x(1), r(2 * ModelA::kClasses, -1.0f);
    const void *in[] = {x.data()};
    void *out[] = {r.data()};
    for (int batch = 0; batch < 2; batch++) {
        EXPECT_EQ(tpurt_run(rt, in, 1, out, 1), TPURT_E_PACKAGE);
        EXPECT_TRUE(has(tpurt_last_error(rt), "batch " + std::to_string(batch) +
                                                  ": host program: result 0 is f32[4,10], but "
                                                  "output 0 is 'r' f32[2,10]"))
            << tpurt_last_error(rt);
        EXPECT_TRUE(std::all_of(r.begin(), r.end(), [](float v) { return v == -1.0f; }));
    }
    tpurt_stats s;
    ASSERT_EQ(tpurt_get_stats(rt, &s), TPURT_OK);
    EXPECT_EQ(s.runs, 0u);
    EXPECT_EQ(s.submissions, 4u); // the segments ran
}

TEST_F(Runtime, HostProgramThatFailsToEvaluate)
{
    // An elided constant checks but has no value to evaluate.
    ModelA a;
    std::string host = ModelA::host("tpu.segment.0");
    host.replace(host.find("constant(0)"), 11, "constant({...})");
    a.p.pkg.host_hlo = host.data();
    Rt rt(a.p.pkg);
    ASSERT_EQ(rt.st, TPURT_OK) << rt.err;
    std::vector<float> r;
    EXPECT_EQ(run_a(rt, random_x(1), &r), TPURT_E_EVAL);
    EXPECT_TRUE(has(tpurt_last_error(rt), "batch 0: host program:5:")) << tpurt_last_error(rt);
}

TEST_F(Runtime, GemmTheFirmwareRejects)
{
    // lda < k: a package tpub_load would refuse, built in memory; the firmware is the last check.
    ModelB b;
    b.p.pkg.segments[1].ops[0].gemm.lda = ModelB::kHidden - 1;
    Rt rt(b.p.pkg);
    ASSERT_EQ(rt.st, TPURT_OK) << rt.err;
    std::vector<uint8_t> x(ModelB::kBatch * ModelB::kIn, 1);
    std::vector<int32_t> y(ModelB::kBatch * ModelB::kOut);
    std::vector<int8_t> h(ModelB::kBatch * ModelB::kHidden);
    const void *in[] = {x.data()};
    void *out[] = {y.data(), h.data()};
    for (int batch = 0; batch < 2; batch++) {
        EXPECT_EQ(tpurt_run(rt, in, 1, out, 2), TPURT_E_FIRMWARE);
        const std::string want = "batch " + std::to_string(batch) +
                                 ", segment 1, gemm 0 'dot.1': command 0: field 'lda'";
        EXPECT_EQ(std::string(tpurt_last_error(rt)).rfind(want, 0), 0u) << tpurt_last_error(rt);
    }
    // Segment 0 ran each time.
    tpurt_stats s;
    ASSERT_EQ(tpurt_get_stats(rt, &s), TPURT_OK);
    EXPECT_EQ(s.submissions, 2u);
    EXPECT_EQ(s.runs, 0u);
}

TEST_F(Runtime, CycleBudgetTooSmall)
{
    ModelA a;
    tpurt_options o;
    tpurt_options_default(&o);
    o.max_cycles = 40; // the firmware alone needs more
    Rt rt(a.p.pkg, &o);
    ASSERT_EQ(rt.st, TPURT_OK) << rt.err;
    std::vector<float> r;
    for (int batch = 0; batch < 2; batch++) {
        EXPECT_EQ(run_a(rt, random_x(1), &r), TPURT_E_TIMEOUT);
        const std::string want =
            "batch " + std::to_string(batch) + ", segment 0, gemm 0 'dot.1': tpu_wait: ";
        EXPECT_EQ(std::string(tpurt_last_error(rt)).rfind(want, 0), 0u) << tpurt_last_error(rt);
        EXPECT_TRUE(has(tpurt_last_error(rt), "40 cycles")) << tpurt_last_error(rt);
    }
    // A budget that fits runs the same package.
    o.max_cycles = 1000000;
    Rt enough(a.p.pkg, &o);
    ASSERT_EQ(enough.st, TPURT_OK) << enough.err;
    const std::vector<float> x = random_x(2);
    ASSERT_EQ(run_a(enough, x, &r), TPURT_OK) << tpurt_last_error(enough);
    EXPECT_TRUE(same_bits(r, a.reference(x)));
}

TEST_F(Runtime, TraceErrors)
{
    ModelA a;
    Rt rt(a.p.pkg);
    ASSERT_EQ(rt.st, TPURT_OK) << rt.err;
    // A path that cannot be written: at once, and the next run is not traced.
    const fs::path nowhere = dir / "nodir" / "t.fst";
    EXPECT_EQ(tpurt_trace(rt, nowhere.c_str(), 0, 0), TPURT_E_IO);
    EXPECT_TRUE(has(tpurt_last_error(rt), "tpu_trace_open: cannot write " + nowhere.string()))
        << tpurt_last_error(rt);
    const std::vector<float> x = random_x(4);
    std::vector<float> r;
    ASSERT_EQ(run_a(rt, x, &r), TPURT_OK) << tpurt_last_error(rt);
    EXPECT_TRUE(same_bits(r, a.reference(x)));

    // The save file cannot be written (a directory in its place): the run fails, its outputs
    // untouched, the trace kept.
    const fs::path fst = dir / "t.fst";
    fs::create_directory(dir / "t.gtkw");
    ASSERT_EQ(tpurt_trace(rt, fst.c_str(), 0, 0), TPURT_OK) << tpurt_last_error(rt);
    EXPECT_EQ(run_a(rt, x, &r), TPURT_E_IO);
    EXPECT_TRUE(has(tpurt_last_error(rt), "batch 1: trace: tpu_trace_close: save file: "))
        << tpurt_last_error(rt);
    EXPECT_TRUE(std::all_of(r.begin(), r.end(), [](float v) { return v == -1.0f; }));
    EXPECT_GT(fs::file_size(fst), 0u);
    // And then runs on, untraced.
    ASSERT_EQ(run_a(rt, x, &r), TPURT_OK) << tpurt_last_error(rt);
    EXPECT_TRUE(same_bits(r, a.reference(x)));
    tpurt_stats s;
    ASSERT_EQ(tpurt_get_stats(rt, &s), TPURT_OK);
    EXPECT_EQ(s.runs, 2u);
    EXPECT_EQ(s.submissions, 6u);
}

TEST_F(Runtime, ATraceArmedAtCloseIsNoLeak)
{
    ModelA a;
    Rt rt(a.p.pkg);
    ASSERT_EQ(rt.st, TPURT_OK) << rt.err;
    ASSERT_EQ(tpurt_trace(rt, (dir / "t.fst").c_str(), 0, 0), TPURT_OK);
    // Closed by ~Rt without a run: nothing was traced, so no save file.
}

} // namespace

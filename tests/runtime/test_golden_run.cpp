// test_golden_run.cpp - packages tpuc compiles from CNNs (tests/support/cnn_hlo.h), run on the
// golden model through the firmware (tests/support/golden_run.h), against the reference
// evaluator on the same HLO: exact for integer models, within the int8 quantization error for
// float ones, or within bf16's rounding with --precision bf16. Everything the compiler decides is
// checked here, the kernels' tile order, the layouts, the fused pooling and the int8 hand-offs
// included, without the cycle-accurate device (whose CONV2D the end-to-end tests of tests/tools and
// tests/runtime run).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "compiler/tpuc.h"
#include "tests/support/cnn_hlo.h"
#include "tests/support/golden_run.h"

namespace fs = std::filesystem;

namespace
{

hlo_array *random_array(std::mt19937 &rng, hlo_type t, std::vector<int64_t> dims, double lo,
                        double hi)
{
    hlo_array *a = hlo_array_new(t, (int)dims.size(), dims.data());
    std::uniform_real_distribution<double> u(lo, hi);
    for (int64_t i = 0; i < a->shape.elements; i++) {
        const double v = u(rng);
        if (t == HLO_F32)
            ((float *)a->data)[i] = (float)v;
        else
            ((int8_t *)a->data)[i] = (int8_t)std::lround(v);
    }
    return a;
}

double value(const hlo_array *a, int64_t i)
{
    switch (a->shape.type) {
    case HLO_F32: return ((const float *)a->data)[i];
    case HLO_S8: return ((const int8_t *)a->data)[i];
    default: return ((const int32_t *)a->data)[i];
    }
}

struct Golden {
    std::vector<double> input; // the batch it ran
    std::string report;
    std::vector<std::vector<double>> got, want;
    uint64_t ops = 0;
};

// Compiles text for array size n (calibrated on 8 batches of random inputs in [lo, hi], the first
// the one it runs; in bf16 the samples are given too, and ignored), saves and reloads the
// package, and runs that batch on the golden model and on the reference evaluator.
Golden compile_and_run(const std::string &name, const std::string &text, uint32_t n, double lo,
                       double hi, uint8_t precision = TPUC_INT8, bool packing = true)
{
    Golden r;
    const fs::path dir = fs::path(TPU_BINARY_DIR) / "test_golden_run" / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string hlo = (dir / "m.hlo").string(), pkg = (dir / "m.tpub").string();
    std::ofstream(hlo) << text;
    hlo_error e;
    hlo_module *m = hlo_parse_file(hlo.c_str(), &e);
    EXPECT_NE(m, nullptr) << e.msg;
    if (!m)
        return r;
    const hlo_instr *x = nullptr;
    for (int i = 0; i < hlo_entry(m)->n_instrs; i++)
        if (hlo_entry(m)->instrs[i].opcode == HLO_OP_PARAMETER)
            x = &hlo_entry(m)->instrs[i];
    std::vector<int64_t> dims(x->shape.dims, x->shape.dims + x->shape.rank);
    const hlo_type type = x->shape.type;
    std::mt19937 rng(11);
    std::vector<int64_t> cdims = dims;
    cdims[0] *= 8;
    hlo_array *calib = random_array(rng, type, cdims, lo, hi);
    hlo_array *in = random_array(rng, type, dims, lo, hi);
    // The run's batch is calibrated too: no value beyond the ranges the scales cover, so what
    // differs is the compiler's doing, not the calibration's.
    memcpy(calib->data, in->data, (size_t)in->shape.elements * hlo_type_size(type));
    for (int64_t i = 0; i < in->shape.elements; i++)
        r.input.push_back(value(in, i));
    tpuc_options o{};
    o.hlo_path = hlo.c_str();
    o.array_n = n;
    o.calib = &calib;
    o.n_calib = 1;
    o.precision = precision;
    o.no_conv_packing = !packing;
    tpub_package p, q;
    hlo_error err{};
    if (tpuc_compile(&o, &p, &err)) {
        ADD_FAILURE() << name << ": " << err.msg;
    } else {
        r.report = p.report;
        EXPECT_EQ(tpub_save(&p, pkg.c_str(), &err), 0) << err.msg;
        tpub_free(&p);
        EXPECT_EQ(tpub_load(pkg.c_str(), &q, &err), 0) << err.msg;
        golden_run::Runner run(q);
        std::vector<hlo_array *> outs = run.run({in});
        EXPECT_FALSE(outs.empty()) << name << ": " << run.error();
        r.ops = run.ops();
        hlo_array **ref = nullptr;
        int n_ref = 0;
        EXPECT_EQ(hlo_eval(m, "m.hlo", &in, 1, &ref, &n_ref, &e), 0) << e.msg;
        for (size_t k = 0; k < outs.size() && (int)k < n_ref; k++) {
            std::vector<double> g, w;
            EXPECT_EQ(outs[k]->shape.elements, ref[k]->shape.elements);
            for (int64_t i = 0; i < ref[k]->shape.elements; i++) {
                g.push_back(value(outs[k], i));
                w.push_back(value(ref[k], i));
            }
            r.got.push_back(g);
            r.want.push_back(w);
            hlo_array_free(outs[k]);
        }
        hlo_arrays_free(ref, n_ref);
        tpub_free(&q);
    }
    hlo_array_free(calib);
    hlo_array_free(in);
    hlo_module_free(m);
    return r;
}

// Within tol of the largest reference magnitude (0: exactly).
void expect_close(const Golden &r, double tol)
{
    ASSERT_FALSE(r.got.empty());
    for (size_t k = 0; k < r.got.size(); k++) {
        double mx = 1e-6;
        for (double v : r.want[k])
            mx = std::max(mx, std::fabs(v));
        for (size_t i = 0; i < r.got[k].size(); i++)
            ASSERT_NEAR(r.got[k][i], r.want[k][i], tol * mx) << "output " << k << " element " << i;
    }
}

class Nets : public ::testing::TestWithParam<uint32_t>
{
};

TEST_P(Nets, MatchTheReference)
{
    const uint32_t n = GetParam();
    std::mt19937 rng(2026 + n);
    for (const cnn_hlo::Case &c : cnn_hlo::cases(n)) {
        SCOPED_TRACE(c.name);
        const std::string text = cnn_hlo::hlo(c.net, rng);
        const Golden r = compile_and_run(c.name + "_n" + std::to_string(n), text, n,
                                         c.net.integer ? -128 : -1, c.net.integer ? 127 : 1);
        EXPECT_NE(r.report.find("convolutions: "), std::string::npos) << r.report;
        for (const cnn_hlo::Layer &l : c.net.layers) {
            if (l.bn) { // the chain up to the pooling on the device, nothing on the host
                EXPECT_NE(r.report.find("(scale) + " + std::string("bn0_2") +
                                        " (scale) + bn0_3 (bias) + "),
                          std::string::npos)
                    << r.report;
                EXPECT_NE(r.report.find("on the host: nothing"), std::string::npos) << r.report;
            }
            if (l.batch_groups > 1) {
                EXPECT_NE(r.report.find(std::to_string(l.batch_groups) +
                                        " batch groups as channel groups"),
                          std::string::npos)
                    << r.report;
            }
        }
        EXPECT_GT(r.ops, 0u);
        expect_close(r, c.tol);
    }
}

// Random nets (cnn_hlo::random_net), within the tolerance of the deepest fixed net.
TEST_P(Nets, RandomNetsMatchTheReference)
{
    const uint32_t n = GetParam();
    std::mt19937 rng(17 + n);
    for (int i = 0; i < 40; i++) {
        const cnn_hlo::Net net = cnn_hlo::random_net(rng, n);
        const std::string name = "random_" + std::to_string(i) + "_n" + std::to_string(n);
        SCOPED_TRACE(name);
        const Golden r = compile_and_run(name, cnn_hlo::hlo(net, rng), n, net.integer ? -128 : -1,
                                         net.integer ? 127 : 1);
        expect_close(r, net.integer ? 0 : 0.1);
    }
}

INSTANTIATE_TEST_SUITE_P(Arrays, Nets, ::testing::Values(4u, 8u));

// A GRU scanned with lax.scan (tests/hlo/stablehlo/gru_scan.py), in HLO and StableHLO: the loop
// unrolled (its trip count is a constant), each step's dots on the device (the first step's
// h . Wh folded, h being zeros), against the reference evaluator running the while, in int8
// (calibrated on the batch run: the ranges each unrolled dot sees) and in bf16.
TEST(Loops, ScannedGruMatchesTheReference)
{
    for (uint32_t n : {4u, 8u, 16u})
        for (const char *ext : {".hlo", ".mlir"})
            for (uint8_t precision : {TPUC_INT8, TPUC_BF16}) {
                const std::string name = "gru_scan_n" + std::to_string(n) + ext +
                                         (precision == TPUC_BF16 ? "_bf16" : "");
                SCOPED_TRACE(name);
                std::ifstream f(std::string(TPU_SOURCE_DIR "/tests/hlo/stablehlo/gru_scan") + ext);
                const std::string text((std::istreambuf_iterator<char>(f)),
                                       std::istreambuf_iterator<char>());
                const Golden r = compile_and_run(name, text, n, -2, 2, precision);
                EXPECT_NE(r.report.find("(GEMMs: 9, segments: 5)"), std::string::npos) << r.report;
                EXPECT_EQ(r.report.find("(while)"), std::string::npos) << r.report;
                expect_close(r, precision == TPUC_BF16 ? 0.01 : 0.05);
            }
}

// --precision bf16. A bf16 operand is its f32 value within a relative 2^-8 (8 significant bits,
// round to nearest even), so a product within 2^-7 + 2^-16; the fp32 sums of the device and of
// the reference evaluator add at most K * 2^-24 of the sum of magnitudes each, the bias add and
// the reference's product 2^-24 more each. One layer is therefore within
// (2^-7 + 2^-16 + (2K + 4) * 2^-24) * (sum over k of |x_k w_kj| + |b_j|) of the reference, and
// ReLU does not widen that: Bf16.DenseWithinTheRoundingBound checks it element by element.
// Deeper nets compound it, and host ops after them (softmax) amplify it, so they are checked
// against a share of their largest reference magnitude: a quarter of int8's tolerance, chosen
// from the errors measured (not derived), tight enough that an int8-sized error would fail.
constexpr double kBf16Share = 0.25;

// A literal of the values v (f32, printed exactly) as dims rows x cols, or a vector (rows 0).
std::string f32_literal(const std::vector<float> &v, size_t rows)
{
    std::string t = "{";
    const size_t cols = rows ? v.size() / rows : v.size();
    for (size_t i = 0; i < v.size(); i++) {
        char b[32];
        snprintf(b, sizeof b, "%.9g", (double)v[i]);
        t += std::string(i % cols == 0 && rows ? (i ? "}, {" : "{") : i ? ", " : "") + b;
    }
    return t + (rows ? "}}" : "}");
}

// x . W + b, ReLU, for random shapes around the array size, in bf16: every element within the
// bound above (the weights' bf16 rounding and the fp32 bias are the compiler's, the transfers
// as golden_run.h applies docs/package.md).
TEST(Bf16, DenseWithinTheRoundingBound)
{
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-1, 1);
    for (uint32_t n : {4u, 8u}) {
        for (int t = 0; t < 8; t++) {
            std::uniform_int_distribution<int> d(1, 2 * (int)n + 3);
            const int m = d(rng), k = d(rng), nn = d(rng);
            std::vector<float> w((size_t)k * nn), b((size_t)nn);
            for (float &v : w)
                v = u(rng);
            for (float &v : b)
                v = u(rng);
            const std::string mk = std::to_string(m) + "," + std::to_string(k),
                              kn = std::to_string(k) + "," + std::to_string(nn),
                              mn = std::to_string(m) + "," + std::to_string(nn);
            const std::string text =
                "HloModule dense\n\nENTRY main {\n  x = f32[" + mk + "] parameter(0)\n  w = f32[" +
                kn + "] constant(" + f32_literal(w, k) + ")\n  d = f32[" + mn +
                "] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  b = f32[" +
                std::to_string(nn) + "] constant(" + f32_literal(b, 0) + ")\n  bb = f32[" + mn +
                "] broadcast(b), dimensions={1}\n  a = f32[" + mn +
                "] add(d, bb)\n  z = f32[] constant(0)\n  zb = f32[" + mn +
                "] broadcast(z), dimensions={}\n  ROOT r = f32[" + mn + "] maximum(a, zb)\n}\n";
            const std::string name = "bf16_dense_" + std::to_string(n) + "_" + std::to_string(t);
            SCOPED_TRACE(name + ": " + mk + " x " + kn);
            const Golden r = compile_and_run(name, text, n, -1, 1, TPUC_BF16);
            ASSERT_EQ(r.got.size(), 1u);
            EXPECT_NE(r.report.find("d: bf16 on the device: A bf16, weights bf16 (rounded to "
                                    "nearest even), fp32 sums and bias, f32 out"),
                      std::string::npos)
                << r.report;
            EXPECT_NE(r.report.find("the 1 calibration arrays are ignored"), std::string::npos)
                << r.report;
            const double eps =
                std::ldexp(1.0, -7) + std::ldexp(1.0, -16) + (2.0 * k + 4) * std::ldexp(1.0, -24);
            for (int i = 0; i < m; i++)
                for (int j = 0; j < nn; j++) {
                    double mag = std::fabs(b[j]);
                    for (int kk = 0; kk < k; kk++)
                        mag += std::fabs(r.input[(size_t)i * k + kk] * w[(size_t)kk * nn + j]);
                    ASSERT_NEAR(r.got[0][(size_t)i * nn + j], r.want[0][(size_t)i * nn + j],
                                eps * mag)
                        << "element " << i << "," << j;
                }
        }
    }
}

// The CNN suite's nets in bf16, no calibration.
TEST_P(Nets, Bf16MatchesTheReference)
{
    const uint32_t n = GetParam();
    std::mt19937 rng(2026 + n);
    for (const cnn_hlo::Case &c : cnn_hlo::cases(n)) {
        if (c.net.integer)
            continue;
        SCOPED_TRACE(c.name);
        const std::string text = cnn_hlo::hlo(c.net, rng);
        const Golden r =
            compile_and_run(c.name + "_bf16_n" + std::to_string(n), text, n, -1, 1, TPUC_BF16);
        EXPECT_NE(r.report.find("bf16 on the device: input bf16, kernel bf16"), std::string::npos)
            << r.report;
        EXPECT_GT(r.ops, 0u);
        expect_close(r, c.tol * kBf16Share);
    }
}

// The random nets in bf16 (the float ones), within int8's tolerance: some end in a dot whose
// result cancels to a few hundredths of its sum of magnitudes, where bf16's 2^-8 per operand is
// as coarse, relative to the output, as int8's steps (random_bf16_5_n8: 4% of the largest output).
TEST_P(Nets, Bf16RandomNetsMatchTheReference)
{
    const uint32_t n = GetParam();
    std::mt19937 rng(17 + n);
    for (int i = 0; i < 40; i++) {
        const cnn_hlo::Net net = cnn_hlo::random_net(rng, n);
        const std::string text = cnn_hlo::hlo(net, rng);
        if (net.integer)
            continue;
        const std::string name = "random_bf16_" + std::to_string(i) + "_n" + std::to_string(n);
        SCOPED_TRACE(name);
        expect_close(compile_and_run(name, text, n, -1, 1, TPUC_BF16), 0.1);
    }
}

// Small-channel first layers packed (cnn_hlo::packing_cases), at N = 4, 8 and 16: the report says
// so, and the results are the unpacked ones' (--no-conv-packing) bit for bit in int8 and in
// integers (the same scales, integer sums), and in bf16 where the packed K (kh * kw * c) fits one
// tile, whose column the array sums in the order the unpacked K tiles accumulate; with more
// tiles, bf16's fp32 partial sums round in another order, so both are held to the reference.
class Packing : public ::testing::TestWithParam<uint32_t>
{
};

TEST_P(Packing, BitExactWithUnpacked)
{
    const uint32_t n = GetParam();
    std::mt19937 rng(7 + n);
    for (const cnn_hlo::Case &c : cnn_hlo::packing_cases(n)) {
        const std::string text = cnn_hlo::hlo(c.net, rng);
        const cnn_hlo::Layer &l = c.net.layers[0];
        const bool one_tile = cnn_hlo::span(l.kh, l.dh) * cnn_hlo::span(l.kw, l.dw) * c.net.c <= n;
        for (uint8_t precision : {TPUC_INT8, TPUC_BF16}) {
            if (c.net.integer && precision == TPUC_BF16)
                continue;
            const std::string name =
                c.name + (precision == TPUC_BF16 ? "_bf16" : "") + "_n" + std::to_string(n);
            SCOPED_TRACE(name);
            const double lo = c.net.integer ? -128 : -1, hi = c.net.integer ? 127 : 1;
            const Golden p = compile_and_run(name, text, n, lo, hi, precision);
            const Golden u = compile_and_run(name + "_unpacked", text, n, lo, hi, precision, false);
            EXPECT_NE(p.report.find("      packed: "), std::string::npos) << p.report;
            EXPECT_NE(u.report.find(" (packing off)"), std::string::npos) << u.report;
            const double tol = precision == TPUC_BF16 ? c.tol * kBf16Share : c.tol;
            expect_close(p, tol);
            expect_close(u, tol);
            if (precision == TPUC_BF16 && !one_tile)
                continue;
            ASSERT_EQ(p.got.size(), u.got.size());
            for (size_t k = 0; k < p.got.size(); k++)
                EXPECT_EQ(p.got[k], u.got[k]) << "output " << k;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Arrays, Packing, ::testing::Values(4u, 8u, 16u));

// The head of a pooling test's module: the add reducer, then its input of type img (8x8, 6
// channels): parameter x, or with conv a 3x3 convolution of a 10x10x3 parameter x and ReLU, u.
std::string pool_input(std::mt19937 &rng, const std::string &img, bool conv)
{
    std::string t = "HloModule m\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                    "  ROOT s = f32[] add(a, b)\n}\n\nENTRY main {\n";
    if (!conv)
        return t + "  x = " + img + " parameter(0)\n";
    return t + "  x = f32[2,10,10,3] parameter(0)\n  k = f32[3,3,3,6] constant(" +
           cnn_hlo::literal(rng, {3, 3, 3, 6}, false, -1, 1) +
           ")\n  cv = f32[2,8,8,6] convolution(x, k), window={size=3x3}, "
           "dim_labels=b01f_01io->b01f\n  z = f32[] constant(0)\n  zb = " +
           img + " broadcast(z), dimensions={}\n  u = " + img + " maximum(cv, zb)\n";
}

// Average pooling as JAX (flax avg_pool: reduce-window add from 0, divided by the window's size
// padding included) and PyTorch/XLA (NCHW) spell it, windowed and global, on the input and after
// a convolution + ReLU: each reduce-window runs on the device as a depthwise convolution with a
// kernel of ones (its sums exact in the accumulators), the division on the host. Within int8's
// quantization of the input and of the sums, and bf16's rounding of the input.
TEST(AvgPool, OnTheDeviceMatchesTheReference)
{
    struct Case {
        const char *name, *window;
        int oh, ow, size;
        bool nchw, conv;
    } cases[] = {
        {"2x2_s2", "size=1x2x2x1 stride=1x2x2x1", 4, 4, 4, false, false},
        {"3x3_s1_pad1", "size=1x3x3x1 pad=0_0x1_1x1_1x0_0", 8, 8, 9, false, false},
        {"3x3_s2", "size=1x3x3x1 stride=1x2x2x1", 3, 3, 9, false, false},
        {"global", "size=1x8x8x1", 1, 1, 64, false, false},
        {"2x2_s2_nchw", "size=1x1x2x2 stride=1x1x2x2", 4, 4, 4, true, false},
        {"conv_relu_2x2_s2", "size=1x2x2x1 stride=1x2x2x1", 4, 4, 4, false, true},
        {"conv_relu_3x3_s1_pad1", "size=1x3x3x1 pad=0_0x1_1x1_1x0_0", 8, 8, 9, false, true},
    };
    for (uint32_t n : {4u, 8u, 16u})
        for (const Case &c : cases)
            for (uint8_t precision : {TPUC_INT8, TPUC_BF16}) {
                const std::string name = std::string("avgpool_") + c.name +
                                         (precision == TPUC_BF16 ? "_bf16" : "") + "_n" +
                                         std::to_string(n);
                SCOPED_TRACE(name);
                std::mt19937 rng(3 + n);
                auto dims = [&](int h, int w) {
                    const std::string hw = std::to_string(h) + "," + std::to_string(w);
                    return c.nchw ? "f32[2,6," + hw + "]" : "f32[2," + hw + ",6]";
                };
                std::string t = pool_input(rng, dims(8, 8), c.conv), v = c.conv ? "u" : "x";
                const std::string out = dims(c.oh, c.ow);
                t += "  zero = f32[] constant(0)\n  rw = " + out + " reduce-window(" + v +
                     ", zero), window={" + c.window + "}, to_apply=add\n  size = f32[] constant(" +
                     std::to_string(c.size) + ")\n  sb = " + out +
                     " broadcast(size), dimensions={}\n  ROOT d = " + out + " divide(rw, sb)\n}\n";
                const Golden r = compile_and_run(name, t, n, -1, 1, precision);
                EXPECT_EQ(r.report.find("rw stays on the host"), std::string::npos) << r.report;
                EXPECT_NE(r.report.find("6 groups as one block-diagonal kernel"), std::string::npos)
                    << r.report;
                expect_close(r, precision == TPUC_BF16 ? 0.01 : 0.03);
            }
}

// jnp.mean over H and W (a reduce add from 0 over the spatial dims, then a divide), NHWC and
// NCHW, on the input and after a convolution + ReLU: the reduce runs on the device as the
// depthwise convolution of ones over the whole plane, the division on the host.
TEST(AvgPool, GlobalMeanOnTheDeviceMatchesTheReference)
{
    struct Case {
        const char *name;
        bool nchw, conv;
    } cases[] = {{"nhwc", false, false}, {"nchw", true, false}, {"conv_relu_nhwc", false, true}};
    for (uint32_t n : {4u, 8u, 16u})
        for (const Case &c : cases)
            for (uint8_t precision : {TPUC_INT8, TPUC_BF16}) {
                const std::string name = std::string("mean_") + c.name +
                                         (precision == TPUC_BF16 ? "_bf16" : "") + "_n" +
                                         std::to_string(n);
                SCOPED_TRACE(name);
                std::mt19937 rng(5 + n);
                const std::string in = c.nchw ? "f32[2,6,8,8]" : "f32[2,8,8,6]";
                std::string t = pool_input(rng, in, c.conv), v = c.conv ? "u" : "x";
                t += "  zero = f32[] constant(0)\n  mean = f32[2,6] reduce(" + v +
                     ", zero), dimensions={" + (c.nchw ? "2,3" : "1,2") +
                     "}, to_apply=add\n  size = f32[] constant(64)\n  sb = f32[2,6] "
                     "broadcast(size), "
                     "dimensions={}\n  ROOT d = f32[2,6] divide(mean, sb)\n}\n";
                const Golden r = compile_and_run(name, t, n, -1, 1, precision);
                EXPECT_NE(r.report.find(" mean  2 x 8x8x6 -> 1x1x6, kernel 8x8"), std::string::npos)
                    << r.report;
                EXPECT_NE(r.report.find("on the host: mean_"), std::string::npos) << r.report;
                expect_close(r, precision == TPUC_BF16 ? 0.01 : 0.03);
            }
}

// Two dense layers: the first's result stays on the device as bf16 (OUT_BF16) for the second.
TEST(Bf16, MlpHandsOnBf16)
{
    std::mt19937 rng(31);
    const std::string text =
        "HloModule mlp\n\nENTRY main {\n  x = f32[6,20] parameter(0)\n  w1 = f32[20,12] constant(" +
        cnn_hlo::literal(rng, {20, 12}, false, -0.5, 0.5) +
        ")\n  d1 = f32[6,12] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
        "  z = f32[] constant(0)\n  zb = f32[6,12] broadcast(z), dimensions={}\n"
        "  r1 = f32[6,12] maximum(d1, zb)\n  w2 = f32[12,7] constant(" +
        cnn_hlo::literal(rng, {12, 7}, false, -0.5, 0.5) +
        ")\n  ROOT d2 = f32[6,7] dot(r1, w2), lhs_contracting_dims={1}, "
        "rhs_contracting_dims={0}\n}\n";
    for (uint32_t n : {4u, 8u}) {
        const Golden r =
            compile_and_run("bf16_mlp_n" + std::to_string(n), text, n, -1, 1, TPUC_BF16);
        EXPECT_NE(r.report.find("(GEMMs: 2, segments: 1)"), std::string::npos) << r.report;
        EXPECT_NE(r.report.find("+ r1 (relu) -> bf16, stays on the device"), std::string::npos)
            << r.report;
        EXPECT_NE(r.report.find("reads d1's bf16 result in place"), std::string::npos) << r.report;
        EXPECT_EQ(r.ops, 2u);
        expect_close(r, 0.05 * kBf16Share);
    }
}

// Any dim_labels: an input [h, b, c, w], a kernel [kh, i, o, kw], a result [o, h, w, b] biased,
// pooled and rectified on the device, written and read back through permuted transfers (unpacked:
// packed, the input's transfer would gather it).
TEST(Labels, AnyOrderOfDimensions)
{
    std::mt19937 rng(8);
    const std::string text =
        "HloModule labels\n\nmaxf {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT m = f32[] maximum(a, b)\n}\n\nENTRY main {\n  x = f32[5,2,3,6] parameter(0)\n"
        "  k = f32[3,3,4,2] constant(" +
        cnn_hlo::literal(rng, {3, 3, 4, 2}, false, -0.5, 0.5) +
        ")\n  c = f32[4,3,5,2] convolution(x, k), window={size=3x2}, "
        "dim_labels=0bf1_0io1->f01b\n  bc = f32[4] constant({0.1, -0.2, 0.3, 0})\n"
        "  bb = f32[4,3,5,2] broadcast(bc), dimensions={0}\n  a = f32[4,3,5,2] add(c, bb)\n"
        "  low = f32[] constant(-inf)\n  p = f32[4,2,2,2] reduce-window(a, low), "
        "window={size=1x2x2x1 stride=1x1x2x1}, to_apply=maxf\n  zero = f32[] constant(0)\n"
        "  z = f32[4,2,2,2] broadcast(zero), dimensions={}\n"
        "  ROOT r = f32[4,2,2,2] maximum(p, z)\n}\n";
    for (uint32_t n : {4u, 8u}) {
        const Golden r =
            compile_and_run("labels_n" + std::to_string(n), text, n, -1, 1, TPUC_INT8, false);
        EXPECT_NE(r.report.find("+ a (bias) + p (max pool 2x2 stride 1x2) + r (relu)"),
                  std::string::npos)
            << r.report;
        EXPECT_NE(r.report.find("input 'x' written NHWC: its dims (1,0,3,2) on the device"),
                  std::string::npos)
            << r.report;
        EXPECT_NE(r.report.find("returned as its dims (3,1,2,0)"), std::string::npos) << r.report;
        expect_close(r, 0.05);
    }
}

// One input read by two convolutions in two layouts (as NCHW and as NHWC): two transfers of it,
// each in its convolution's order, in one segment.
TEST(Labels, OneInputTwoLayouts)
{
    std::mt19937 rng(9);
    const std::string text =
        "HloModule two\n\nENTRY main {\n  x = f32[2,3,4,4] parameter(0)\n"
        "  k1 = f32[5,3,2,2] constant(" +
        cnn_hlo::literal(rng, {5, 3, 2, 2}, false, -0.5, 0.5) +
        ")\n  c1 = f32[2,5,3,3] convolution(x, k1), window={size=2x2}, "
        "dim_labels=bf01_oi01->bf01\n  k2 = f32[2,2,4,5] constant(" +
        cnn_hlo::literal(rng, {2, 2, 4, 5}, false, -0.5, 0.5) +
        ")\n  c2 = f32[2,2,3,5] convolution(x, k2), window={size=2x2}, "
        "dim_labels=b01f_01io->b01f\n  ROOT t = (f32[2,5,3,3], f32[2,2,3,5]) tuple(c1, c2)\n}\n";
    const Golden r = compile_and_run("two_layouts", text, 4, -1, 1);
    EXPECT_NE(r.report.find("(GEMMs: 0, convolutions: 2, segments: 1)"), std::string::npos)
        << r.report;
    ASSERT_EQ(r.got.size(), 2u);
    expect_close(r, 0.03);
}

// Self-attention with two heads: Q, K and V projections, scores Q . K^T per (batch, head) with
// the batch dims in the middle of both operands, a softmax on the host, then softmax . V. Every
// dot runs on the device: the two attention dots with a B computed at run time, gathered in
// tile order by its transfer (its dims permuted) and quantized per tensor, and their A permuted.
TEST(RuntimeDots, AttentionRunsEveryDotOnTheDevice)
{
    std::mt19937 rng(21);
    auto w = [&](const char *name) {
        return std::string("  ") + name + " = f32[8,8] constant(" +
               cnn_hlo::literal(rng, {8, 8}, false, -0.5, 0.5) + ")\n";
    };
    auto proj = [](const char *name, const char *wname) {
        return std::string("  ") + name + " = f32[2,6,8] dot(x, " + wname +
               "), lhs_contracting_dims={2}, rhs_contracting_dims={0}\n  " + name +
               "4 = f32[2,6,2,4] reshape(" + name + ")\n";
    };
    const std::string text =
        "HloModule attention\n\nmaxf {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT m = f32[] maximum(a, b)\n}\n\naddf {\n  a = f32[] parameter(0)\n"
        "  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\nENTRY main {\n"
        "  x = f32[2,6,8] parameter(0)\n" +
        w("wq") + w("wk") + w("wv") + proj("q", "wq") + proj("k", "wk") + proj("v", "wv") +
        "  s = f32[2,2,6,6] dot(q4, k4), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, "
        "rhs_batch_dims={0,2}, rhs_contracting_dims={3}\n"
        "  low = f32[] constant(-inf)\n"
        "  mx = f32[2,2,6] reduce(s, low), dimensions={3}, to_apply=maxf\n"
        "  mb = f32[2,2,6,6] broadcast(mx), dimensions={0,1,2}\n"
        "  d = f32[2,2,6,6] subtract(s, mb)\n  e = f32[2,2,6,6] exponential(d)\n"
        "  zero = f32[] constant(0)\n"
        "  sum = f32[2,2,6] reduce(e, zero), dimensions={3}, to_apply=addf\n"
        "  sb = f32[2,2,6,6] broadcast(sum), dimensions={0,1,2}\n"
        "  p = f32[2,2,6,6] divide(e, sb)\n"
        "  ROOT o = f32[2,2,6,4] dot(p, v4), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, "
        "rhs_batch_dims={0,2}, rhs_contracting_dims={1}\n}\n";
    for (uint32_t n : {4u, 8u}) {
        const Golden r = compile_and_run("attention_n" + std::to_string(n), text, n, -1, 1);
        EXPECT_NE(r.report.find("(GEMMs: 5, segments: 3)"), std::string::npos) << r.report;
        EXPECT_NE(r.report.find("A 'q4' written with its dims in the order (0,2,1,3)"),
                  std::string::npos)
            << r.report;
        EXPECT_NE(
            r.report.find(
                "B computed at run time, 'k4' gathered in tile order with its dims in the order "
                "(0,2,3,1)"),
            std::string::npos)
            << r.report;
        EXPECT_NE(
            r.report.find(
                "B computed at run time, 'v4' gathered in tile order with its dims in the order "
                "(0,2,1,3)"),
            std::string::npos)
            << r.report;
        EXPECT_NE(r.report.find("s: B = 'k4' f32 -> s8 per tensor"), std::string::npos) << r.report;
        EXPECT_EQ(r.report.find("stays on the host"), std::string::npos) << r.report;
        expect_close(r, 0.05);
        // In bf16: the run-time B's are rounded to bf16 by their transfers, no calibration.
        const Golden h =
            compile_and_run("attention_bf16_n" + std::to_string(n), text, n, -1, 1, TPUC_BF16);
        EXPECT_NE(h.report.find("(GEMMs: 5, segments: 3)"), std::string::npos) << h.report;
        EXPECT_NE(h.report.find("s: bf16 on the device: A bf16, B bf16"), std::string::npos)
            << h.report;
        expect_close(h, 0.05 * kBf16Share);
    }
}

// x . x^T, one value as A and as B (two transfers of it, in one segment), and the integer form
// with both operands at run time: exact.
TEST(RuntimeDots, OneValueAsBothOperandsAndIntegers)
{
    const std::string gram = "HloModule gram\n\nENTRY main {\n  x = f32[5,7] parameter(0)\n"
                             "  ROOT g = f32[5,5] dot(x, x), lhs_contracting_dims={1}, "
                             "rhs_contracting_dims={1}\n}\n";
    const Golden r = compile_and_run("gram", gram, 4, -1, 1);
    EXPECT_NE(r.report.find("(GEMMs: 1, segments: 1)"), std::string::npos) << r.report;
    EXPECT_NE(
        r.report.find(
            "B computed at run time, 'x' gathered in tile order with its dims in the order (1,0)"),
        std::string::npos)
        << r.report;
    expect_close(r, 0.03);
    const std::string ints =
        "HloModule ints\n\nENTRY main {\n  x = s8[3,5,6] parameter(0)\n"
        "  t = s8[3,6,5] transpose(x), dimensions={0,2,1}\n"
        "  ROOT g = s32[3,5,5] dot(x, t), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
        "rhs_batch_dims={0}, rhs_contracting_dims={1}\n}\n";
    const Golden e = compile_and_run("gram_s8", ints, 8, -128, 127);
    EXPECT_NE(e.report.find("(GEMMs: 1, segments: 1)"), std::string::npos) << e.report;
    expect_close(e, 0);
}

// A convolution's gradients as jax.grad writes them, for a forward convolution of kernel k,
// stride st and padding p on each side over x [b, h, w, c] to cout channels, its kernel scaled
// by an element of x (computed at run time, as a trained kernel is), dy = y: the input gradient
// (dy dilated by st, the kernel reversed, its in and out features swapped: b01f_01oi->b01f,
// padding that may be negative) and the weight gradient (dy the kernel, contracted over the
// batch: f01b_i01o->01bf, dilated by st).
std::string conv_grads(std::mt19937 &rng, int b, int h, int w, int c, int cout, int k, int st,
                       int p)
{
    const int oh = (h + 2 * p - k) / st + 1, ow = (w + 2 * p - k) / st + 1;
    const int dh = (oh - 1) * st + 1, dw = (ow - 1) * st + 1; // dy dilated
    auto s = [](std::vector<int64_t> d) { return cnn_hlo::shape("f32", d); };
    auto i = [](int v) { return std::to_string(v); };
    const std::string ks = s({k, k, c, cout}), ys = s({b, oh, ow, cout});
    return "HloModule grads\n\nENTRY main {\n  x = " + s({b, h, w, c}) +
           " parameter(0)\n  k0 = " + ks + " constant(" +
           cnn_hlo::literal(rng, {k, k, c, cout}, false, -0.5, 0.5) +
           ")\n  x0 = f32[1,1,1,1] slice(x), slice={[0:1],[0:1],[0:1],[0:1]}\n"
           "  s0 = f32[] reshape(x0)\n  one = f32[] constant(1.5)\n  sc = f32[] add(s0, one)\n"
           "  sb = " +
           ks + " broadcast(sc), dimensions={}\n  kr = " + ks + " multiply(k0, sb)\n  y = " + ys +
           " convolution(x, kr), window={size=" + i(k) + "x" + i(k) + " stride=" + i(st) + "x" +
           i(st) + " pad=" + i(p) + "_" + i(p) + "x" + i(p) + "_" + i(p) +
           "}, dim_labels=b01f_01io->b01f\n  rk = " + ks +
           " reverse(kr), dimensions={0,1}\n  dx = " + s({b, h, w, c}) +
           " convolution(y, rk), window={size=" + i(k) + "x" + i(k) + " pad=" + i(k - 1 - p) + "_" +
           i(h + p - dh) + "x" + i(k - 1 - p) + "_" + i(w + p - dw) + " lhs_dilate=" + i(st) + "x" +
           i(st) + "}, dim_labels=b01f_01oi->b01f\n  dk = " + ks +
           " convolution(x, y), window={size=" + i(oh) + "x" + i(ow) + " pad=" + i(p) + "_" +
           i(k + dh - 1 - h - p) + "x" + i(p) + "_" + i(k + dw - 1 - w - p) +
           " rhs_dilate=" + i(st) + "x" + i(st) + "}, dim_labels=f01b_i01o->01bf\n  ROOT g = (" +
           s({b, h, w, c}) + ", " + ks + ") tuple(dx, dk)\n}\n";
}

// Every convolution of the gradients on the device, against the reference evaluator: strides
// 1..3 (negative padding where the stride leaves pixels out), odd sizes, in int8 and bf16.
TEST(ConvGrads, InputAndWeightGradientsOnTheDevice)
{
    std::mt19937 rng(21);
    struct G {
        int b, h, w, c, cout, k, st, p;
    };
    const G cases[] = {{2, 7, 7, 3, 4, 3, 2, 1},
                       {3, 6, 5, 2, 5, 3, 1, 1},
                       {2, 8, 7, 1, 3, 3, 3, 0},
                       {1, 9, 6, 5, 2, 2, 2, 0}};
    for (uint32_t n : {4u, 8u, 16u})
        for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
            const G &g = cases[t];
            const std::string text = conv_grads(rng, g.b, g.h, g.w, g.c, g.cout, g.k, g.st, g.p);
            for (uint8_t prec : {TPUC_INT8, TPUC_BF16}) {
                const std::string name = "grads_" + std::to_string(t) +
                                         (prec == TPUC_BF16 ? "_bf16" : "") + "_n" +
                                         std::to_string(n);
                SCOPED_TRACE(name);
                const Golden r = compile_and_run(name, text, n, -1, 1, prec);
                EXPECT_NE(r.report.find("convolutions: 3, "), std::string::npos) << r.report;
                EXPECT_EQ(r.ops, 3u);
                expect_close(r, prec == TPUC_BF16 ? 0.1 * kBf16Share : 0.1);
            }
        }
}

// The compiler places a convolution on the device exactly when the firmware can schedule it
// (one output row in the unified buffer and accumulators, docs/compiler.md): random integer
// geometries around the limits, compiled, and their CONV2D commands validated by the firmware
// (with OUT_INT8 when the compiler kept them on the host, as its check assumes); in bf16 too
// (float convolutions with --precision bf16, checked with BF16 and OUT_BF16).
TEST(CoreFit, IsTheFirmwares)
{
    for (const bool bf16 : {false, true}) {
        SCOPED_TRACE(bf16 ? "bf16" : "int8");
        std::mt19937 rng(77);
        auto u = [&](uint32_t lo, uint32_t hi) {
            return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
        };
        const fs::path dir = fs::path(TPU_BINARY_DIR) / "test_golden_run" / "core_fit";
        fs::create_directories(dir);
        const std::string path = (dir / "m.hlo").string();
        int placed = 0, kept = 0;
        for (int i = 0; i < 150; i++) {
            const uint32_t n = u(0, 1) ? 4 : 8, h = u(1, 6), w = u(100, 2300), c = u(1, 40);
            const uint32_t kh = u(1, std::min(h, 3u)), kw = u(1, 3), sh = u(1, 3);
            const uint32_t pl = u(0, 1) ? 0 : u(0, 2), pr = u(0, 2);
            const uint32_t oh = (h - kh) / sh + 1, ow = (w + pl + pr - kw) + 1;
            const std::string in_t = bf16 ? "f32" : "s8", out_t = bf16 ? "f32" : "s32";
            const std::string x = in_t + "[1," + std::to_string(h) + "," + std::to_string(w) + "," +
                                  std::to_string(c) + "]";
            const std::string k = in_t + "[" + std::to_string(kh) + "," + std::to_string(kw) + "," +
                                  std::to_string(c) + ",1]";
            std::ofstream(path) << "HloModule m\nENTRY main {\n  x = " << x
                                << " parameter(0)\n  one = " << in_t
                                << "[] constant(1)\n  k = " << k
                                << " broadcast(one), dimensions={}\n  ROOT c = " << out_t << "[1,"
                                << oh << "," << ow << ",1] convolution(x, k), window={size=" << kh
                                << "x" << kw << " stride=" << sh << "x1 pad=0_0x" << pl << "_" << pr
                                << "}, dim_labels=b01f_01io->b01f\n}\n";
            tpuc_options o{};
            o.hlo_path = path.c_str();
            o.array_n = n;
            o.precision = bf16 ? TPUC_BF16 : TPUC_INT8;
            tpub_package p;
            hlo_error err{};
            ASSERT_EQ(tpuc_compile(&o, &p, &err), 0) << err.msg;
            const std::string report = p.report;
            const bool on_device = p.n_segments == 1;
            if (!on_device) {
                EXPECT_NE(report.find("does not fit the core's unified buffer"), std::string::npos)
                    << report;
            }
            tpub_conv v{};
            if (on_device) {
                v = p.segments[0].ops[0].conv;
            } else {
                v = tpub_conv{bf16 ? uint32_t{TPUB_GEMM_BF16 | TPUB_GEMM_OUT_BF16}
                                   : uint32_t{TPUB_GEMM_OUT_INT8},
                              1,
                              h,
                              w,
                              c,
                              kh,
                              kw,
                              1,
                              sh,
                              1,
                              0,
                              0,
                              pl,
                              pr,
                              0,
                              0,
                              0,
                              0,
                              0,
                              0,
                              1u << 24,
                              0,
                              nullptr,
                              nullptr};
            }
            tpub_free(&p);
            fw_test::GoldenHal hal(tpusim_hwcfg{n, 16384, 4096, 4, 32, 64u << 20});
            hal.fail_after = 0; // validation only: the first push stops the core
            const auto stream = fw_test::stream_bytes({{golden_run::kArena, 48u << 20}},
                                                      {golden_run::conv_command(v)});
            memcpy(hal.mem(), stream.data(), stream.size());
            const fw_hal fh = hal.hal();
            fw_result res;
            fw_run(&fh, 0, (uint32_t)stream.size(), &res);
            const std::string what = "n " + std::to_string(n) + " " + x + " kernel " + k +
                                     " stride " + std::to_string(sh) + " pad " +
                                     std::to_string(pl) + "," + std::to_string(pr);
            if (on_device) {
                EXPECT_EQ(res.code, FW_ERR_CORE) << what << ": " << res.field;
                placed++;
            } else {
                EXPECT_EQ(res.code, FW_ERR_COMMAND) << what;
                EXPECT_STREQ(res.field, "w") << what;
                kept++;
            }
        }
        EXPECT_GT(placed, 20);
        EXPECT_GT(kept, 20);
    }
}

} // namespace

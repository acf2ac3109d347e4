// test_compile_conv.cpp - convolutions through tpuc_compile, without a device: which ones the
// device runs and what it fuses (bias, ReLU, max pooling in either order), the layouts (NCHW
// inputs written NHWC by a permuted transfer, NHWC results returned in HLO order, views read in
// place with the weight rows permuted), per-channel quantization, the package's operations and
// kernels in tile order (checked against conv_ref.h's definition), round trips, and every
// convolution or pooling the device cannot run kept on the host with its reason.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "compiler/tpuc.h"
#include "tests/support/cnn_hlo.h"
#include "tests/support/conv_ref.h"
#include "tests/support/hlo_test.h"
#include "tests/support/weights_test.h"

namespace fs = std::filesystem;

namespace
{

using hlo_test::make;
using weights_test::save_weights;

class CompileConv : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/test_compile_conv.XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir = tmpl;
    }
    void TearDown() override
    {
        if (ok)
            tpub_free(&pkg);
        fs::remove_all(dir);
    }

    // Compiles text for array size n, calibrated on 4 batches of values in [lo, hi] when its
    // input (parameter 0, of dims) is float, with weights from a safetensors file when given,
    // unpacked with no_packing. The package stays in pkg.
    void compile(const std::string &text, std::vector<int64_t> dims, uint32_t n = 8, double lo = -1,
                 double hi = 1, const std::string &weights = "")
    {
        if (ok)
            tpub_free(&pkg);
        const std::string path = dir + "/m.hlo";
        std::ofstream(path) << text;
        std::mt19937 rng(5);
        std::uniform_real_distribution<double> u(lo, hi);
        dims[0] *= 4;
        int64_t count = 1;
        for (int64_t d : dims)
            count *= d;
        std::vector<double> v((size_t)count);
        for (double &x : v)
            x = u(rng);
        hlo_array *c = make(HLO_F32, dims, v);
        tpuc_options o = {};
        o.hlo_path = path.c_str();
        o.weights_path = weights.empty() ? nullptr : weights.c_str();
        o.array_n = n;
        o.calib = &c;
        o.n_calib = 1;
        o.no_conv_packing = no_packing;
        hlo_error e{};
        ok = tpuc_compile(&o, &pkg, &e) == 0;
        err = e.msg;
        report = ok ? pkg.report : "";
        hlo_array_free(c);
    }

    bool has(const std::string &line) const { return report.find(line) != std::string::npos; }

    std::string dir, err, report;
    tpub_package pkg{};
    bool ok = false;
    bool no_packing = false; // tpuc_options.no_conv_packing: the unpacked layouts' tests
};

// The kernel literal of a module's constant `name` as K[dy][dx][ci][o] (from its OIHW or HWIO
// values).
std::vector<int8_t> kernel_of(const std::string &text, const char *name, bool oihw, uint32_t kh,
                              uint32_t kw, uint32_t c, uint32_t o)
{
    hlo_test::Parsed p(text);
    const hlo_instr &k = p.instr("main", name);
    std::vector<int8_t> out((size_t)kh * kw * c * o);
    for (uint32_t dy = 0; dy < kh; dy++)
        for (uint32_t dx = 0; dx < kw; dx++)
            for (uint32_t ci = 0; ci < c; ci++)
                for (uint32_t oc = 0; oc < o; oc++) {
                    const size_t at = oihw ? ((size_t)(oc * c + ci) * kh + dy) * kw + dx
                                           : ((size_t)(dy * kw + dx) * c + ci) * o + oc;
                    out[((size_t)(dy * kw + dx) * c + ci) * o + oc] = (int8_t)k.literal[at];
                }
    return out;
}

const std::string kMaxF = "maxf {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                          "  ROOT m = f32[] maximum(a, b)\n}\n\n";

// ------------------------------------------------------- placement --

TEST_F(CompileConv, TorchNetOnTheDevice)
{
    // PyTorch's MNIST net in small (NCHW, one channel): both convolutions, the pooling and the
    // dot in one segment, every hand-off int8 in place, the NCHW flatten folded into the dot's
    // weight rows.
    no_packing = true;
    std::mt19937 rng(1);
    cnn_hlo::Layer a = {4, 3, 3}, b = {6, 3, 3};
    b.ph = b.pw = b.psh = b.psw = 2;
    const cnn_hlo::Net net = {2, 12, 12, 1, {a, b}, true, 5};
    compile(cnn_hlo::hlo(net, rng), cnn_hlo::input_dims(net));
    ASSERT_TRUE(ok) << err;
    EXPECT_TRUE(has("(GEMMs: 1, convolutions: 2, segments: 1), 0 on the host")) << report;
    EXPECT_TRUE(has("    conv 0  c0  2 x 12x12x1 -> 10x10x4, kernel 3x3, stride 1x1, pad "
                    "0,0,0,0 + a0 (bias) + r0 (relu) -> s8, stays on the device\n"))
        << report;
    EXPECT_TRUE(has("    conv 1  c1  2 x 10x10x4 -> 8x8x6, kernel 3x3, stride 1x1, pad 0,0,0,0 "
                    "+ a1 (bias) + r1 (relu) + p1 (max pool 2x2 stride 2x2) -> s8, stays on the "
                    "device\n      reads c0's int8 result in place\n"))
        << report;
    EXPECT_TRUE(has("    gemm 2  d  2 x 96 x 5 + y (bias) -> s32, dequantized on the host\n"
                    "      reads c1's int8 result in place through flat; weight rows permuted "
                    "to its device order\n"))
        << report;
    EXPECT_TRUE(has("  c0: input = 'x' f32 -> s8, scale ")) << report;
    EXPECT_TRUE(has("  c0: kernel s8 per output channel, scale ")) << report;
    EXPECT_TRUE(has("  c1: input = s8 result of c0, scale ")) << report;
    EXPECT_TRUE(has("  d: A = s8 result of c1, scale ")) << report;
    // One channel: NCHW and NHWC are the same bytes, so no permutation.
    EXPECT_FALSE(has("written NHWC")) << report;

    ASSERT_EQ(pkg.n_segments, 1u);
    const tpub_segment &s = pkg.segments[0];
    ASSERT_EQ(s.n_ops, 3u);
    ASSERT_EQ(s.n_inputs, 1u);
    ASSERT_EQ(s.n_outputs, 1u);
    EXPECT_EQ(s.inputs[0].rank, 0u);
    EXPECT_EQ(s.inputs[0].rows, 2u * 12 * 12);
    EXPECT_EQ(s.inputs[0].cols, 1u);
    const tpub_conv &c0 = s.ops[0].conv, &c1 = s.ops[1].conv;
    const tpub_gemm &d = s.ops[2].gemm;
    ASSERT_EQ(s.ops[0].kind, TPUB_OP_CONV2D);
    ASSERT_EQ(s.ops[1].kind, TPUB_OP_CONV2D);
    ASSERT_EQ(s.ops[2].kind, TPUB_OP_GEMM);
    EXPECT_EQ(c0.flags, (uint32_t)(TPUB_GEMM_BIAS | TPUB_GEMM_RELU | TPUB_GEMM_OUT_INT8));
    EXPECT_EQ(c1.flags,
              (uint32_t)(TPUB_GEMM_BIAS | TPUB_GEMM_RELU | TPUB_GEMM_OUT_INT8 | TPUB_CONV_POOL));
    EXPECT_EQ(c0.in_off, s.inputs[0].off);
    EXPECT_EQ(c1.in_off, c0.out_off);
    EXPECT_EQ(d.a_off, c1.out_off);
    EXPECT_EQ(c1.pool_h, 2u);
    EXPECT_EQ(c1.pool_stride_w, 2u);
    EXPECT_STREQ(c1.fused, "a1,r1,p1");
    EXPECT_EQ(d.m, 2u);
    EXPECT_EQ(d.k, 96u);
    EXPECT_EQ(s.outputs[0].off, d.c_off);
}

TEST_F(CompileConv, JaxSamples)
{
    // tests/hlo's JAX CNN in both printing styles: the SAME convolution with its bias, ReLU and
    // pooling on the device, the grouped convolution after it reading its result in place (a
    // block-diagonal kernel), the average pooling's sum after it as a depthwise convolution of
    // ones (its division on the host), the dense layer on the device in a second segment.
    const std::string w = dir + "/w.safetensors";
    save_weights(w, {{"w1.1", {3, 3, 1, 4}},
                     {"b1.1", {4}},
                     {"w2.1", {3, 3, 2, 6}},
                     {"w3.1", {6, 3}},
                     {"b3.1", {3}}});
    compile(hlo_test::slurp(hlo_test::kSrc + "tests/hlo/conv_jax.hlo"), {2, 8, 8, 1}, 8, 0, 1, w);
    ASSERT_TRUE(ok) << err;
    EXPECT_TRUE(has("(GEMMs: 1, convolutions: 3, segments: 2)")) << report;
    EXPECT_TRUE(has("    conv 0  conv_general_dilated.2  2 x 8x8x1 -> 8x8x4, kernel 3x3, stride "
                    "1x1, pad 1,1,1,1 + add.11 (bias) + max.3 (relu) + reduce_window_max.7 (max "
                    "pool 2x2 stride 2x2) -> s8, stays on the device\n"))
        << report;
    EXPECT_TRUE(has("    conv 1  conv_general_dilated.3  2 x 4x4x4 -> 2x2x6, kernel 3x3, stride "
                    "2x2, pad 1,0,0,1, 2 groups as one block-diagonal kernel -> s8, stays on the "
                    "device\n      reads conv_general_dilated.2's int8 result in place\n"))
        << report;
    EXPECT_TRUE(has("    conv 2  reduce_window_sum.7  2 x 2x2x6 -> 1x1x6, kernel 3x3, stride 2x2, "
                    "pad 1,1,1,1, 6 groups as one block-diagonal kernel -> s32, dequantized on "
                    "the host\n      reads conv_general_dilated.3's int8 result in place\n"))
        << report;
    EXPECT_TRUE(has("  on the host: div.1 (divide)")) << report;
    EXPECT_TRUE(has("    gemm 3  dot_general.1  2 x 6 x 3 + add.15 (bias)")) << report;
    compile(hlo_test::slurp(hlo_test::kSrc + "tests/hlo/conv_jax_dump.hlo"), {2, 8, 8, 1}, 8, 0, 1,
            w);
    ASSERT_TRUE(ok) << err;
    EXPECT_TRUE(has("(GEMMs: 1, convolutions: 3, segments: 2)")) << report;
    EXPECT_TRUE(has("(max pool 2x2 stride 2x2) -> s8")) << report;
    EXPECT_TRUE(has("2 groups as one block-diagonal kernel")) << report;
    // Argmax pooling (a variadic reduce-window) runs on the host.
    compile(hlo_test::slurp(hlo_test::kSrc + "tests/hlo/conv_jax_argmax.hlo"), {2, 6, 6});
    ASSERT_TRUE(ok) << err;
    EXPECT_TRUE(has("on the host: reduce_window.11_0 (reduce-window), reduce_window.11_1 "
                    "(reduce-window)"))
        << report;
}

TEST_F(CompileConv, JaxTransposeBeforeTheFlattenIsFree)
{
    // JAX's port of a PyTorch model: NHWC transposed to NCHW, then flattened. The transpose and
    // the reshape are views the dot reads in place.
    std::mt19937 rng(2);
    cnn_hlo::Layer a = {3, 3, 3};
    a.ph = a.pw = a.psh = a.psw = 2;
    cnn_hlo::Net net = {2, 8, 8, 2, {a}, false, 4};
    net.to_nchw = true;
    compile(cnn_hlo::hlo(net, rng), cnn_hlo::input_dims(net));
    ASSERT_TRUE(ok) << err;
    EXPECT_TRUE(has("reads c0's int8 result in place through flat, t; weight rows permuted"))
        << report;
    EXPECT_TRUE(has("(GEMMs: 1, convolutions: 1, segments: 1), 0 on the host")) << report;
    // Without the transpose the NHWC flatten is the device's order: nothing to permute.
    net.to_nchw = false;
    compile(cnn_hlo::hlo(net, rng), cnn_hlo::input_dims(net));
    ASSERT_TRUE(ok) << err;
    EXPECT_TRUE(has("reads c0's int8 result in place through flat\n")) << report;
}

TEST_F(CompileConv, NchwInputAndResultArePermutedTransfers)
{
    // Three channels: the NCHW input is written NHWC and the NCHW result read back from NHWC,
    // with no host transpose.
    no_packing = true;
    std::mt19937 rng(3);
    cnn_hlo::Layer l = {5, 3, 3};
    l.relu = false;
    const cnn_hlo::Net net = {2, 6, 7, 3, {l}, true};
    compile(cnn_hlo::hlo(net, rng), cnn_hlo::input_dims(net));
    ASSERT_TRUE(ok) << err;
    EXPECT_TRUE(has("      input 'x' written NHWC: its dims (0,2,3,1) on the device\n"
                    "      result NHWC on the device, returned as its dims (0,2,3,1)\n"))
        << report;
    EXPECT_TRUE(has("c0: output s32, dequantized per channel")) << report;
    const tpub_segment &s = pkg.segments[0];
    ASSERT_EQ(s.inputs[0].rank, 4u);
    EXPECT_EQ(std::vector<uint32_t>(s.inputs[0].perm, s.inputs[0].perm + 4),
              (std::vector<uint32_t>{0, 2, 3, 1}));
    EXPECT_EQ(std::vector<int64_t>(s.inputs[0].dims, s.inputs[0].dims + 4),
              (std::vector<int64_t>{2, 3, 6, 7}));
    EXPECT_EQ(s.inputs[0].cols, 3u);
    EXPECT_EQ(s.inputs[0].rows, 2u * 6 * 7);
    ASSERT_EQ(s.outputs[0].rank, 4u);
    EXPECT_EQ(std::vector<int64_t>(s.outputs[0].dims, s.outputs[0].dims + 4),
              (std::vector<int64_t>{2, 5, 4, 5}));
    EXPECT_EQ(s.outputs[0].cols, 5u);
    EXPECT_EQ(s.outputs[0].n_scale, 5u); // per channel
    EXPECT_EQ(s.outputs[0].dev_type, HLO_S32);
    EXPECT_EQ(s.ops[0].conv.flags, (uint32_t)TPUB_GEMM_BIAS);
}

TEST_F(CompileConv, IntegerKernelsInTileOrder)
{
    // Exact convolutions: the kernel bytes are the literal's, in the tile order of
    // firmware.h: packed runs (no horizontal padding, 3 channels) and pixel by pixel (padding
    // left), for both labels, at N = 4 and 8.
    no_packing = true;
    for (uint32_t n : {4u, 8u})
        for (bool nchw : {false, true})
            for (uint32_t pl : {0u, 1u}) {
                SCOPED_TRACE("n " + std::to_string(n) + (nchw ? " NCHW" : " NHWC") + " pl " +
                             std::to_string(pl));
                std::mt19937 rng(n + pl);
                cnn_hlo::Layer l = {n + 1, 3, 2};
                l.pl = pl;
                l.pt = 1;
                cnn_hlo::Net net = {2, 5, 6, 3, {l}, nchw};
                net.integer = true;
                const std::string text = cnn_hlo::hlo(net, rng);
                compile(text, cnn_hlo::input_dims(net), n, -128, 127);
                ASSERT_TRUE(ok) << err;
                EXPECT_TRUE(has("c0: integer convolution, exact on the device (input s8, "
                                "kernel s8, s32 out)"))
                    << report;
                const tpub_conv &v = pkg.segments[0].ops[0].conv;
                const conv_ref::ConvShape cs = {2, 5, 6, 3, 3, 2, n + 1, 1, 1, 1, 0, pl, 0};
                const std::vector<int8_t> want =
                    conv_ref::tile_kernel(cs, kernel_of(text, "k0", nchw, 3, 2, 3, n + 1), n);
                ASSERT_LE(v.k_off + want.size(), pkg.const_bytes);
                EXPECT_EQ(std::vector<int8_t>(pkg.const_image + v.k_off,
                                              pkg.const_image + v.k_off + want.size()),
                          want);
                EXPECT_EQ(tpub_conv_packed(&v, n), pl == 0);
                // The bias, mult 1, shift 0 per channel after the kernel.
                EXPECT_EQ(v.flags, (uint32_t)(TPUB_GEMM_BIAS | TPUB_GEMM_RELU));
            }
}

TEST_F(CompileConv, SmallChannelInputsRunPacked)
{
    // A 5x5 kernel on one channel, padded on the left, stride 2 (N = 8): the input's transfer
    // gathers each output pixel's 25 taps as one pixel, zeros for the padding, and CONV2D
    // convolves them 1x1; the kernel keeps its (dy, dx, c) rows, in K tiles of N. Unpacked it
    // takes 5 x 5 K tiles (pixel by pixel: the padding), packed 4.
    std::mt19937 rng(4);
    cnn_hlo::Layer l = {3, 5, 5};
    l.sh = l.sw = 2;
    l.pl = 2;
    cnn_hlo::Net net = {2, 9, 8, 1, {l}, false};
    net.integer = true;
    const std::string text = cnn_hlo::hlo(net, rng);
    compile(text, cnn_hlo::input_dims(net), 8, -128, 127);
    ASSERT_TRUE(ok) << err;
    EXPECT_TRUE(has("    conv 0  c0  2 x 9x8x1 -> 3x3x3, kernel 5x5, stride 2x2, pad 0,0,2,0"))
        << report;
    EXPECT_TRUE(has("      packed: 72 MXU slots, unpacked 450; input 'x' gathered as its 5x5x1 "
                    "receptive fields, 2 x 3x3x25 (450 bytes, unpacked 144), convolved 1x1\n"))
        << report;
    const tpub_segment &s = pkg.segments[0];
    const tpub_xfer &x = s.inputs[0];
    EXPECT_EQ(x.rank, 0u);
    EXPECT_EQ(x.rows, 2u * 3 * 3);
    EXPECT_EQ(x.cols, 25u);
    ASSERT_NE(x.gather, nullptr);
    EXPECT_EQ(x.host_elements, 2u * 9 * 8);
    // Output pixel (0, 1) of image 1: tap (dy, dx) reads input pixel (dy, 2 + dx - 2).
    for (uint32_t t = 0; t < 25; t++)
        EXPECT_EQ(x.gather[(9 + 1) * 25 + t], 72u + t / 5 * 8 + t % 5) << t;
    // Output pixel (0, 0): the two left columns of taps are padding.
    EXPECT_EQ(x.gather[0], TPUB_GATHER_ZERO);
    EXPECT_EQ(x.gather[2], 0u);
    const tpub_conv &v = s.ops[0].conv;
    EXPECT_EQ(std::vector<uint32_t>({v.h, v.w, v.c, v.kh, v.kw, v.stride_h, v.pad_left}),
              (std::vector<uint32_t>{3, 3, 25, 1, 1, 1, 0}));
    const conv_ref::ConvShape cs = {2, 3, 3, 25, 1, 1, 3, 1, 1, 0, 0, 0, 0};
    const std::vector<int8_t> want =
        conv_ref::tile_kernel(cs, kernel_of(text, "k0", false, 5, 5, 1, 3), 8);
    ASSERT_LE(v.k_off + want.size(), pkg.const_bytes);
    EXPECT_EQ(
        std::vector<int8_t>(pkg.const_image + v.k_off, pkg.const_image + v.k_off + want.size()),
        want);
    // Unpacked, the report says what packing would take.
    no_packing = true;
    compile(text, cnn_hlo::input_dims(net), 8, -128, 127);
    ASSERT_TRUE(ok) << err;
    EXPECT_TRUE(has("      unpacked: 450 MXU slots, packed 72 (packing off)\n")) << report;
}

TEST_F(CompileConv, GroupedAndDilatedKernelsRunDense)
{
    // A grouped convolution with a dilated kernel runs as one dense CONV2D: its kernel is the
    // literal's taps at (dy * dh, dx * dw) of a (kh - 1) * dh + 1 by (kw - 1) * dw + 1 window,
    // output channel o reading input channels g * cg.. (g = o / (cout / groups)), zeros elsewhere.
    no_packing = true;
    for (uint32_t groups : {2u, 6u})
        for (bool nchw : {false, true}) {
            SCOPED_TRACE(std::to_string(groups) + (nchw ? " groups NCHW" : " groups NHWC"));
            std::mt19937 rng(groups);
            cnn_hlo::Layer l = {groups * 2, 2, 3};
            l.groups = groups;
            l.dh = 3;
            l.dw = 2;
            cnn_hlo::Net net = {2, 9, 8, 6, {l}, nchw};
            net.integer = true;
            const std::string text = cnn_hlo::hlo(net, rng);
            compile(text, cnn_hlo::input_dims(net), 4, -128, 127);
            ASSERT_TRUE(ok) << err;
            EXPECT_TRUE(has("kernel 4x5, stride 1x1, pad 0,0,0,0, " + std::to_string(groups) +
                            " groups as one block-diagonal kernel, dilation 3x2 as zeros in the "
                            "kernel"))
                << report;
            const uint32_t cg = 6 / groups, cout = l.cout, kh = 4, kw = 5;
            const std::vector<int8_t> taps = kernel_of(text, "k0", nchw, 2, 3, cg, cout);
            std::vector<int8_t> dense((size_t)kh * kw * 6 * cout);
            for (uint32_t dy = 0; dy < 2; dy++)
                for (uint32_t dx = 0; dx < 3; dx++)
                    for (uint32_t ci = 0; ci < cg; ci++)
                        for (uint32_t o = 0; o < cout; o++)
                            dense[((size_t)(dy * 3 * kw + dx * 2) * 6 + o / (cout / groups) * cg +
                                   ci) *
                                      cout +
                                  o] = taps[((size_t)(dy * 3 + dx) * cg + ci) * cout + o];
            const tpub_conv &v = pkg.segments[0].ops[0].conv;
            EXPECT_EQ(v.kh, kh);
            EXPECT_EQ(v.kw, kw);
            const conv_ref::ConvShape cs = {2, 9, 8, 6, kh, kw, cout, 1, 1, 0, 0, 0, 0};
            const std::vector<int8_t> want = conv_ref::tile_kernel(cs, dense, 4);
            ASSERT_LE(v.k_off + want.size(), pkg.const_bytes);
            EXPECT_EQ(std::vector<int8_t>(pkg.const_image + v.k_off,
                                          pkg.const_image + v.k_off + want.size()),
                      want);
        }
}

TEST_F(CompileConv, PoolingFusesInEitherOrder)
{
    // Max pooling before the ReLU, after the ReLU, before the bias: requant(max(relu(acc + b)))
    // is each of them.
    for (int order = 0; order < 3; order++) {
        SCOPED_TRACE(order);
        const std::string conv = "  c = f32[1,6,6,4] convolution(x, k), window={size=3x3}, "
                                 "dim_labels=b01f_01io->b01f\n";
        const std::string bias = "  bc = f32[4] constant({0.1, -0.2, 0.3, 0})\n";
        std::mt19937 rng(4);
        std::string body = "  x = f32[1,8,8,2] parameter(0)\n  k = f32[3,3,2,4] constant(" +
                           cnn_hlo::literal(rng, {3, 3, 2, 4}, false, -1, 1) + ")\n" + conv + bias +
                           "  zero = f32[] constant(0)\n  low = f32[] constant(-inf)\n";
        const std::string win = "window={size=1x2x2x1 stride=1x2x2x1}, to_apply=maxf\n";
        if (order == 0)
            body += "  bb = f32[1,6,6,4] broadcast(bc), dimensions={3}\n"
                    "  a = f32[1,6,6,4] add(c, bb)\n"
                    "  p = f32[1,3,3,4] reduce-window(a, low), " +
                    win +
                    "  z = f32[1,3,3,4] broadcast(zero), dimensions={}\n"
                    "  ROOT r = f32[1,3,3,4] maximum(p, z)\n";
        else if (order == 1)
            body += "  bb = f32[1,6,6,4] broadcast(bc), dimensions={3}\n"
                    "  a = f32[1,6,6,4] add(c, bb)\n"
                    "  z = f32[1,6,6,4] broadcast(zero), dimensions={}\n"
                    "  r = f32[1,6,6,4] maximum(a, z)\n"
                    "  ROOT p = f32[1,3,3,4] reduce-window(r, zero), " +
                    win;
        else
            body += "  p = f32[1,3,3,4] reduce-window(c, low), " + win +
                    "  bb = f32[1,3,3,4] broadcast(bc), dimensions={3}\n"
                    "  ROOT a = f32[1,3,3,4] add(p, bb)\n";
        compile("HloModule m\n\n" + kMaxF + "ENTRY main {\n" + body + "}\n", {1, 8, 8, 2});
        ASSERT_TRUE(ok) << err;
        EXPECT_TRUE(has("(max pool 2x2 stride 2x2)")) << report;
        EXPECT_TRUE(has("-> s8, dequantized on the host\n")) << report;
        EXPECT_TRUE(has(order == 2 ? "+ p (max pool 2x2 stride 2x2) + a (bias)" : "+ a (bias)"))
            << report;
        EXPECT_TRUE(has("0 on the host")) << report;
        const tpub_segment &s = pkg.segments[0];
        EXPECT_TRUE(s.ops[0].conv.flags & TPUB_CONV_POOL);
        EXPECT_EQ(s.outputs[0].dev_type, HLO_S8);
        EXPECT_EQ(s.outputs[0].n_scale, 1u); // the requantized scale
    }
}

// Identities between the ReLU and the pooling (PyTorch/XLA pads by nothing before max pooling;
// a copy, an identity transpose, a reshape or convert to the same shape and type) are seen
// through: the pooling still fuses. A pad by something is not an identity.
TEST_F(CompileConv, IdentitiesAreSeenThrough)
{
    for (int real_pad = 0; real_pad < 2; real_pad++) {
        SCOPED_TRACE(real_pad);
        std::mt19937 rng(6);
        const std::string pad = real_pad ? "0_0x1_1x0_0x0_0" : "0_0x0_0x0_0x0_0";
        const std::string padded = real_pad ? "f32[1,8,6,4]" : "f32[1,6,6,4]";
        const std::string pooled = real_pad ? "f32[1,4,3,4]" : "f32[1,3,3,4]";
        const std::string body = "  x = f32[1,8,8,2] parameter(0)\n  k = f32[3,3,2,4] constant(" +
                                 cnn_hlo::literal(rng, {3, 3, 2, 4}, false, -1, 1) +
                                 ")\n"
                                 "  c = f32[1,6,6,4] convolution(x, k), window={size=3x3}, "
                                 "dim_labels=b01f_01io->b01f\n"
                                 "  zero = f32[] constant(0)\n  low = f32[] constant(-inf)\n"
                                 "  z = f32[1,6,6,4] broadcast(zero), dimensions={}\n"
                                 "  r = f32[1,6,6,4] maximum(c, z)\n"
                                 "  cp = f32[1,6,6,4]{3,2,1,0} copy(r)\n"
                                 "  t = f32[1,6,6,4] transpose(cp), dimensions={0,1,2,3}\n"
                                 "  rs = f32[1,6,6,4] reshape(t)\n"
                                 "  cv = f32[1,6,6,4] convert(rs)\n"
                                 "  pd = " +
                                 padded + " pad(cv, low), padding=" + pad +
                                 "\n"
                                 "  ROOT p = " +
                                 pooled +
                                 " reduce-window(pd, low), "
                                 "window={size=1x2x2x1 stride=1x2x2x1}, to_apply=maxf\n";
        compile("HloModule m\n\n" + kMaxF + "ENTRY main {\n" + body + "}\n", {1, 8, 8, 2});
        ASSERT_TRUE(ok) << err;
        if (!real_pad) {
            EXPECT_TRUE(has("+ r (relu) + p (max pool 2x2 stride 2x2) -> s8")) << report;
            EXPECT_TRUE(has("0 on the host")) << report;
        } else {
            EXPECT_TRUE(has("on the host: pd (pad), p (reduce-window)")) << report;
        }
    }
}

// ------------------------------------------------------------ host --

// A module of one convolution of x by a constant kernel of kelems values, its attributes given.
std::string one_conv(const std::string &x, const std::string &k, const std::string &out,
                     const std::string &attrs, int kelems)
{
    std::string lit = "{";
    for (int i = 0; i < kelems; i++)
        lit += (i ? ", " : "") + std::to_string(((i * 7) % 5 - 2) * 0.25);
    return "HloModule m\nENTRY main {\n  x = " + x + " parameter(0)\n  kf = f32[" +
           std::to_string(kelems) + "] constant(" + lit + "})\n  k = " + k +
           " reshape(kf)\n  ROOT c = " + out + " convolution(x, k), " + attrs + "\n}\n";
}

TEST_F(CompileConv, WhatTheDeviceCannotRunStaysOnTheHost)
{
    struct Case {
        const char *what;
        std::string x, k, out, attrs;
        int kelems;
        std::vector<int64_t> dims;
        const char *reason;
    } cases[] = {
        {"stride",
         "f32[1,300,5,2]",
         "f32[3,3,2,4]",
         "f32[1,2,3,4]",
         "window={size=3x3 stride=256x1}, dim_labels=b01f_01io->b01f",
         72,
         {1, 300, 5, 2},
         "a stride beyond the device's 1..255"},
        {"large padding",
         "f32[1,2,2,2]",
         "f32[3,3,2,4]",
         "f32[1,257,2,4]",
         "window={size=3x3 pad=256_1x1_1}, dim_labels=b01f_01io->b01f",
         72,
         {1, 2, 2, 2},
         "padding beyond the device's 255 on a side"},
        {"3-D",
         "f32[1,4,4,4,2]",
         "f32[2,2,2,2,4]",
         "f32[1,3,3,3,4]",
         "window={size=2x2x2}, dim_labels=b012f_012io->b012f",
         64,
         {1, 4, 4, 4, 2},
         "not a 1-D or 2-D convolution"},
        {"too wide for the core",
         "f32[1,1,2049,1]",
         "f32[1,1,1,1]",
         "f32[1,1,2049,1]",
         "window={size=1x1}, dim_labels=b01f_01io->b01f",
         1,
         {1, 1, 2049, 1},
         "a row of its output does not fit the core's unified buffer and accumulators"},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.what);
        compile(one_conv(c.x, c.k, c.out, c.attrs, c.kelems), c.dims, 4);
        ASSERT_TRUE(ok) << err;
        EXPECT_TRUE(has("(GEMMs: 0, segments: 0)")) << report;
        EXPECT_TRUE(has(std::string("  c stays on the host: ") + c.reason)) << report;
        EXPECT_EQ(pkg.n_segments, 0u);
    }
    // As wide as fits: on the device.
    compile(one_conv("f32[1,1,2048,1]", "f32[1,1,1,1]", "f32[1,1,2048,1]",
                     "window={size=1x1}, dim_labels=b01f_01io->b01f", 1),
            {1, 1, 2048, 1}, 4);
    ASSERT_TRUE(ok) << err;
    EXPECT_TRUE(has("(GEMMs: 0, convolutions: 1, segments: 1)")) << report;
    // A kernel computed at run time (a second input) runs on the device, gathered by its
    // transfer; element types the device does not multiply stay on the host.
    compile("HloModule m\nENTRY main {\n  x = s8[1,5,5,2] parameter(0)\n"
            "  k = s8[3,3,2,4] parameter(1)\n  ROOT c = s32[1,3,3,4] convolution(x, k), "
            "window={size=3x3}, dim_labels=b01f_01io->b01f\n}\n",
            {1, 5, 5, 2});
    ASSERT_TRUE(ok) << err;
    EXPECT_TRUE(has("(GEMMs: 0, convolutions: 1, segments: 1)")) << report;
    EXPECT_TRUE(has("kernel 'k' computed at run time, gathered in tile order")) << report;
    compile("HloModule m\nENTRY main {\n  x = s8[1,3,3,1] parameter(0)\n"
            "  k = s8[1,1,1,2] constant({{{{1, -1}}}})\n  ROOT c = s8[1,3,3,2] convolution(x, "
            "k), window={size=1x1}, dim_labels=b01f_01io->b01f\n}\n",
            {1, 3, 3, 1});
    ASSERT_TRUE(ok) << err;
    EXPECT_TRUE(has("c stays on the host: element types the device does not multiply")) << report;
}

TEST_F(CompileConv, PoolingsThatDoNotFuse)
{
    struct Case {
        const char *what, *reducer, *init, *window;
        bool relu;
        const char *reason;
    } cases[] = {
        {"sum from 1", "add", "1", "size=1x2x2x1 stride=1x2x2x1", false,
         "only max pooling fuses into a convolution (its reducer is not maximum)"},
        {"padded", "maximum", "-inf", "size=1x2x2x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0", false,
         "padded pooling"},
        {"across channels", "maximum", "-inf", "size=1x2x2x2 stride=1x2x2x2", false,
         "pooling across images or channels"},
        {"window beyond 15", "maximum", "-inf", "size=1x16x1x1 stride=1x1x1x1", false,
         "a pooling window beyond the device's 1..15"},
        {"init 0 without a ReLU", "maximum", "0", "size=1x2x2x1 stride=1x2x2x1", false,
         "its initial value could exceed a window's maximum"},
        {"init 1 after a ReLU", "maximum", "1", "size=1x2x2x1 stride=1x2x2x1", true,
         "its initial value could exceed a window's maximum"},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.what);
        // The pooled shape from the window: padded 2x2 / 2 gives 9 of 16; 1x16 gives 1 x 16.
        const bool padded = std::string(c.what) == "padded";
        const bool tall = std::string(c.what) == "window beyond 15";
        const bool chans = std::string(c.what) == "across channels";
        const std::string pooled = padded  ? "f32[1,9,9,4]"
                                   : tall  ? "f32[1,1,16,4]"
                                   : chans ? "f32[1,8,8,2]"
                                           : "f32[1,8,8,4]";
        const std::string red = std::string("r {\n  a = f32[] parameter(0)\n  b = f32[] "
                                            "parameter(1)\n  ROOT m = f32[] ") +
                                c.reducer + "(a, b)\n}\n\n";
        std::mt19937 rng(9);
        std::string body = "  x = f32[1,18,16,2] parameter(0)\n  k = f32[3,1,2,4] constant(" +
                           cnn_hlo::literal(rng, {3, 1, 2, 4}, false, -1, 1) +
                           ")\n  c = f32[1,16,16,4] convolution(x, k), window={size=3x1}, "
                           "dim_labels=b01f_01io->b01f\n  init = f32[] constant(" +
                           c.init + ")\n";
        std::string v = "c";
        if (c.relu) {
            body += "  zero = f32[] constant(0)\n  z = f32[1,16,16,4] broadcast(zero), "
                    "dimensions={}\n  u = f32[1,16,16,4] maximum(c, z)\n";
            v = "u";
        }
        body += "  ROOT p = " + pooled + " reduce-window(" + v + ", init), window={" + c.window +
                "}, to_apply=r\n";
        compile("HloModule m\n\n" + red + "ENTRY main {\n" + body + "}\n", {1, 18, 16, 2}, 4);
        ASSERT_TRUE(ok) << err;
        EXPECT_TRUE(has(std::string("  p stays on the host: ") + c.reason)) << report;
        EXPECT_TRUE(has("convolutions: 1")) << report;
    }
}

TEST_F(CompileConv, IntegerPoolingStaysOnTheHost)
{
    std::mt19937 rng(6);
    cnn_hlo::Layer l = {3, 2, 2};
    l.ph = l.pw = l.psh = l.psw = 2;
    cnn_hlo::Net net = {1, 5, 5, 2, {l}};
    net.integer = true;
    compile(cnn_hlo::hlo(net, rng), cnn_hlo::input_dims(net), 4, -128, 127);
    ASSERT_TRUE(ok) << err;
    EXPECT_TRUE(has("p0 stays on the host: max pooling on the device requantizes to int8: an "
                    "integer convolution's exact s32 result is pooled on the host"))
        << report;
    EXPECT_TRUE(has("+ a0 (bias) + r0 (relu) -> s32\n")) << report;
}

// Scales fuse where the device's (acc * s + b) is the HLO's value: into a float operation's
// constant kernel before any ReLU or pooling. A scale after a fused pooling (a negative one
// would not commute with the maximum) and an integer convolution's (its kernel is not scaled)
// stay on the host.
TEST_F(CompileConv, ScalesFuseWhereTheyCommute)
{
    const std::string head = "HloModule m\n\n" + kMaxF +
                             "ENTRY main {\n  x = f32[1,4,4,1] parameter(0)\n"
                             "  k = f32[1,1,1,2] constant({{{{0.5, -1}}}})\n"
                             "  c = f32[1,4,4,2] convolution(x, k), window={size=1x1}, "
                             "dim_labels=b01f_01io->b01f\n"
                             "  s = f32[2] constant({2, -3})\n"
                             "  sb = f32[1,4,4,2] broadcast(s), dimensions={3}\n"
                             "  low = f32[] constant(-inf)\n";
    compile(head + "  m = f32[1,4,4,2] multiply(sb, c)\n"
                   "  ROOT p = f32[1,2,2,2] reduce-window(m, low), window={size=1x2x2x1 "
                   "stride=1x2x2x1}, to_apply=maxf\n}\n",
            {1, 4, 4, 1});
    ASSERT_TRUE(ok) << err;
    EXPECT_TRUE(has("+ m (scale) + p (max pool 2x2 stride 2x2) -> s8")) << report;
    EXPECT_TRUE(has("on the host: nothing")) << report;
    compile(head + "  p = f32[1,2,2,2] reduce-window(c, low), window={size=1x2x2x1 "
                   "stride=1x2x2x1}, to_apply=maxf\n"
                   "  sp = f32[1,2,2,2] broadcast(s), dimensions={3}\n"
                   "  ROOT m = f32[1,2,2,2] multiply(p, sp)\n}\n",
            {1, 4, 4, 1});
    ASSERT_TRUE(ok) << err;
    EXPECT_TRUE(has("pad 0,0,0,0 + p (max pool 2x2 stride 2x2) -> s8")) << report;
    EXPECT_TRUE(has("on the host: m (multiply)")) << report;
    compile("HloModule m\nENTRY main {\n  x = s8[1,4,4,1] parameter(0)\n"
            "  k = s8[1,1,1,2] constant({{{{5, -1}}}})\n"
            "  c = s32[1,4,4,2] convolution(x, k), window={size=1x1}, "
            "dim_labels=b01f_01io->b01f\n  s = s32[2] constant({2, 3})\n"
            "  sb = s32[1,4,4,2] broadcast(s), dimensions={3}\n"
            "  ROOT m = s32[1,4,4,2] multiply(c, sb)\n}\n",
            {1, 4, 4, 1}, 8, -128, 127);
    ASSERT_TRUE(ok) << err;
    EXPECT_TRUE(has("pad 0,0,0,0 -> s32\n")) << report;
    EXPECT_TRUE(has("on the host: m (multiply)")) << report;
}

TEST_F(CompileConv, BiasMustBeOnePerChannel)
{
    // A bias varying along a spatial dimension is not a channel bias: the add stays on the
    // host; a subtracted one is a negated bias.
    const std::string head = "HloModule m\nENTRY main {\n  x = f32[1,4,4,1] parameter(0)\n"
                             "  k = f32[1,1,1,2] constant({{{{0.5, -1}}}})\n"
                             "  c = f32[1,4,4,2] convolution(x, k), window={size=1x1}, "
                             "dim_labels=b01f_01io->b01f\n";
    compile(head + "  b = f32[4,2] constant({{1, 2}, {1, 2}, {1, 2}, {3, 2}})\n"
                   "  bb = f32[1,4,4,2] broadcast(b), dimensions={1,3}\n"
                   "  ROOT a = f32[1,4,4,2] add(c, bb)\n}\n",
            {1, 4, 4, 1});
    ASSERT_TRUE(ok) << err;
    EXPECT_TRUE(has("pad 0,0,0,0 -> s32, dequantized on the host")) << report;
    EXPECT_TRUE(has("on the host: a (add)")) << report;
    compile(head + "  b = f32[2] constant({1, 2})\n"
                   "  bb = f32[1,4,4,2] broadcast(b), dimensions={3}\n"
                   "  ROOT a = f32[1,4,4,2] subtract(c, bb)\n}\n",
            {1, 4, 4, 1});
    ASSERT_TRUE(ok) << err;
    EXPECT_TRUE(has("+ a (bias) -> s32")) << report;
}

TEST_F(CompileConv, PackageRoundTripsAndLists)
{
    std::mt19937 rng(7);
    for (const cnn_hlo::Case &c : cnn_hlo::cases(4)) {
        SCOPED_TRACE(c.name);
        compile(cnn_hlo::hlo(c.net, rng), cnn_hlo::input_dims(c.net), 4, c.net.integer ? -128 : -1,
                c.net.integer ? 127 : 1);
        ASSERT_TRUE(ok) << err;
        const std::string a = dir + "/a.tpub", b = dir + "/b.tpub";
        hlo_error e{};
        ASSERT_EQ(tpub_save(&pkg, a.c_str(), &e), 0) << e.msg;
        tpub_package q;
        ASSERT_EQ(tpub_load(a.c_str(), &q, &e), 0) << e.msg;
        ASSERT_EQ(tpub_save(&q, b.c_str(), &e), 0) << e.msg;
        EXPECT_EQ(hlo_test::slurp(a), hlo_test::slurp(b));
        char *text = nullptr;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        EXPECT_EQ(tpub_dump(&q, f), 0);
        fclose(f);
        EXPECT_NE(std::string(text, len).find("conv2d 0: c0"), std::string::npos) << text;
        free(text);
        tpub_free(&q);
    }
}

} // namespace

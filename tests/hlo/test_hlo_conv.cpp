// test_hlo_conv.cpp - convolution and reduce-window in the reference evaluator (hlo_eval,
// hlo_eval_instr): hand-computed results for every window field, groups and types, the
// documented accumulation order, and random convolutions of many shapes and dim_labels against
// a naive reference that builds the padded, dilated input explicitly (bit for bit); pooling,
// padding filled with the init value, a variadic argmax-style reduce-window; the JAX samples of
// tests/hlo against JAX's results.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "hlo/hlo.h"
#include "tests/support/hlo_test.h"

namespace
{

using namespace hlo_test;

// One convolution of `ops` (a parameter line each) with the given attributes.
std::string conv(const std::string &ops, const std::string &result, const std::string &attrs)
{
    return entry(ops + "  ROOT c = " + result + " convolution(x, w), " + attrs + "\n");
}

// ======================================================= hand-computed --

TEST(HloConv, WindowFields)
{
    const std::string xw = "  x = f32[1,4,1] parameter(0)\n  w = f32[2,1,1] parameter(1)\n";
    auto x = [] { return make(HLO_F32, {1, 4, 1}, {1, 2, 3, 4}); };
    auto w = [] { return make(HLO_F32, {2, 1, 1}, {1, 10}); };
    const std::string labels = ", dim_labels=b0f_0io->b0f";
    // out[i] = x[i] + 10 x[i + 1]
    expect_same(run1(conv(xw, "f32[1,3,1]", "window={size=2}" + labels), {x(), w()}), {21, 32, 43});
    // Padded [_, 1, 2, 3, 4] at stride 2: the padding contributes nothing.
    expect_same(
        run1(conv(xw, "f32[1,2,1]", "window={size=2 stride=2 pad=1_0}" + labels), {x(), w()}),
        {10, 32});
    // Negative padding drops elements: [2, 3], or [3, 4] and one of padding.
    expect_same(run1(conv(xw, "f32[1,1,1]", "window={size=2 pad=-1_-1}" + labels), {x(), w()}),
                {32});
    expect_same(run1(conv(xw, "f32[1,2,1]", "window={size=2 pad=-2_1}" + labels), {x(), w()}),
                {43, 4});
    // rhs_dilate 2: out[i] = x[i] + 10 x[i + 2].
    expect_same(run1(conv(xw, "f32[1,2,1]", "window={size=2 rhs_dilate=2}" + labels), {x(), w()}),
                {31, 42});
    // lhs_dilate 2: [1, _, 2, _, 3, _, 4], the holes contribute nothing.
    expect_same(run1(conv(xw, "f32[1,6,1]", "window={size=2 lhs_dilate=2}" + labels), {x(), w()}),
                {1, 20, 2, 30, 3, 40});
    // All of them: padded and dilated [_, 1, _, 2, _, 3, _, 4, _, _], window 1 _ 10, stride 3.
    expect_same(run1(conv(xw, "f32[1,3,1]",
                          "window={size=2 stride=3 pad=1_2 lhs_dilate=2 rhs_dilate=2}" + labels),
                     {x(), w()}),
                {0, 32, 0});
}

TEST(HloConv, ChannelsGroupsAndLabels)
{
    // NCHW/OIHW: two 2x2 channels, one output: 1*1 + 4*1 + 6*1 + 7*1.
    expect_same(run1(conv("  x = f32[1,2,2,2] parameter(0)\n  w = f32[1,2,2,2] parameter(1)\n",
                          "f32[1,1,1,1]", "window={size=2x2}, dim_labels=bf01_oi01->bf01"),
                     {make(HLO_F32, {1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}),
                      make(HLO_F32, {1, 2, 2, 2}, {1, 0, 0, 1, 0, 1, 1, 0})}),
                {18});
    // The same in NHWC/HWIO, and a second output whose kernel is [1 2; 2 1], [2 1; 1 2].
    expect_same(
        run1(conv("  x = f32[1,2,2,2] parameter(0)\n  w = f32[2,2,2,2] parameter(1)\n",
                  "f32[1,1,1,2]", "window={size=2x2}, dim_labels=b01f_01io->b01f"),
             {make(HLO_F32, {1, 2, 2, 2}, {1, 5, 2, 6, 3, 7, 4, 8}),
              make(HLO_F32, {2, 2, 2, 2}, {1, 1, 0, 2, 0, 2, 1, 1, 0, 2, 1, 1, 1, 1, 0, 2})}),
        {18, 1 * 1 + 2 * 2 + 3 * 2 + 4 * 1 + 5 * 2 + 6 * 1 + 7 * 1 + 8 * 2});
    // feature_group_count 2: output 0 sees input channel 0 (x 2), output 1 channel 1 (x 10).
    const std::string ab = "  x = f32[1,2,2] parameter(0)\n  w = f32[1,1,2] parameter(1)\n";
    expect_same(run1(conv(ab, "f32[1,2,2]",
                          "window={size=1}, dim_labels=b0f_0io->b0f, feature_group_count=2"),
                     {make(HLO_F32, {1, 2, 2}, {1, 3, 2, 4}), make(HLO_F32, {1, 1, 2}, {2, 10})}),
                {2, 30, 4, 40});
    // Depthwise with a multiplier of 2: output channels 0, 1 from input 0, 2, 3 from input 1.
    expect_same(
        run1(conv("  x = f32[1,1,2] parameter(0)\n  w = f32[1,1,4] parameter(1)\n", "f32[1,1,4]",
                  "window={size=1}, dim_labels=b0f_0io->b0f, feature_group_count=2"),
             {make(HLO_F32, {1, 1, 2}, {3, 5}), make(HLO_F32, {1, 1, 4}, {1, 2, 3, 4})}),
        {3, 6, 15, 20});
    // batch_group_count 2: output feature 0 from batch 0 (x 2), feature 1 from batch 1 (x 10).
    expect_same(
        run1(conv("  x = f32[2,2,1] parameter(0)\n  w = f32[1,1,2] parameter(1)\n", "f32[1,2,2]",
                  "window={size=1}, dim_labels=b0f_0io->b0f, batch_group_count=2"),
             {make(HLO_F32, {2, 2, 1}, {1, 2, 3, 4}), make(HLO_F32, {1, 1, 2}, {2, 10})}),
        {2, 30, 4, 40});
    // No spatial dims: a matrix product [2,3] x [3,2], transposed by the output labels.
    expect_same(run1(conv("  x = f32[2,3] parameter(0)\n  w = f32[3,2] parameter(1)\n", "f32[2,2]",
                          "dim_labels=bf_io->fb"),
                     {make(HLO_F32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                      make(HLO_F32, {3, 2}, {1, 0, 0, 1, 1, 1})}),
                {4, 10, 5, 11});
    // A window that does not fit: no positions, an empty result.
    Result r = run(conv("  x = f32[1,2,1] parameter(0)\n  w = f32[3,1,1] parameter(1)\n",
                        "f32[1,0,1]", "window={size=3}, dim_labels=b0f_0io->b0f"),
                   {make(HLO_F32, {1, 2, 1}, {1, 2}), make(HLO_F32, {3, 1, 1}, {1, 1, 1})});
    ASSERT_EQ(r.err, "");
    EXPECT_EQ(r.dims[0], (std::vector<int64_t>{1, 0, 1}));
}

TEST(HloConv, IntegersExactAndWrapping)
{
    const std::string labels = "window={size=2}, dim_labels=b0f_0io->b0f";
    // s8 x s8 -> s32 and u8 x s8 -> s32 exactly at the extremes.
    expect_same(run1(conv("  x = s8[1,2,1] parameter(0)\n  w = s8[2,1,1] parameter(1)\n",
                          "s32[1,1,1]", labels),
                     {make(HLO_S8, {1, 2, 1}, {-128, 127}), make(HLO_S8, {2, 1, 1}, {-128, -128})}),
                {16384 - 16256});
    expect_same(run1(conv("  x = u8[1,2,1] parameter(0)\n  w = s8[2,1,1] parameter(1)\n",
                          "s32[1,1,1]", labels),
                     {make(HLO_U8, {1, 2, 1}, {255, 255}), make(HLO_S8, {2, 1, 1}, {-128, 127})}),
                {-255});
    // Sums beyond 2^24 stay exact: 1024 terms of (-128)^2 = 2^24, plus 1.
    std::vector<double> xs(1025, -128), ws(1025, -128);
    xs[1024] = ws[1024] = 1;
    expect_same(run1(conv("  x = s8[1,1,1025] parameter(0)\n  w = s8[1,1025,1] parameter(1)\n",
                          "s32[1,1,1]", "window={size=1}, dim_labels=b0f_0io->b0f"),
                     {make(HLO_S8, {1, 1, 1025}, xs), make(HLO_S8, {1, 1025, 1}, ws)}),
                {16777217});
    // s32 wraps modulo 2^32; s8 results wrap too.
    expect_same(run1(conv("  x = s32[1,2,1] parameter(0)\n  w = s32[2,1,1] parameter(1)\n",
                          "s32[1,1,1]", labels),
                     {make(HLO_S32, {1, 2, 1}, {2147483647, 1}), make(HLO_S32, {2, 1, 1}, {2, 1})}),
                {-1});
    expect_same(run1(conv("  x = s8[1,2,1] parameter(0)\n  w = s8[2,1,1] parameter(1)\n",
                          "s8[1,1,1]", labels),
                     {make(HLO_S8, {1, 2, 1}, {100, 100}), make(HLO_S8, {2, 1, 1}, {1, 1})}),
                {-56});
}

TEST(HloConv, F32AccumulatesKernelPositionsThenFeatures)
{
    // Products in order (position 0: features 0, 1; position 1: features 0, 1) are 1e8, 1,
    // -1e8, 1: in float 1e8 + 1 is 1e8, so the result is 1. Features outermost would give 2.
    Result r =
        run(conv("  x = f32[1,2,2] parameter(0)\n  w = f32[2,2,1] parameter(1)\n", "f32[1,1,1]",
                 "window={size=2}, dim_labels=b0f_0io->b0f"),
            {make(HLO_F32, {1, 2, 2}, {1e8, 1, -1e8, 1}), make(HLO_F32, {2, 2, 1}, {1, 1, 1, 1})});
    ASSERT_EQ(r.err, "");
    EXPECT_EQ(r.out[0][0], 1.0);
    // Products are rounded before they are added (no fused multiply-add): a * a is
    // 1 + 2^-11 + 2^-24, which rounds to 1 + 2^-11.
    const float a = 1.0f + 0x1p-12f;
    r = run(conv("  x = f32[1,1,2] parameter(0)\n  w = f32[1,2,1] parameter(1)\n", "f32[1,1,1]",
                 "window={size=1}, dim_labels=b0f_0io->b0f"),
            {make(HLO_F32, {1, 1, 2}, {a, -(1.0 + 0x1p-11)}), make(HLO_F32, {1, 2, 1}, {a, 1})});
    ASSERT_EQ(r.err, "");
    EXPECT_EQ(r.out[0][0], 0.0);
}

// ==================================================== random vs naive --

// A convolution problem in logical coordinates: input [B][C][H][W], kernel [O][I][KH][KW],
// output [B / bg][O][OH][OW]; labels place them in memory.
struct Problem {
    hlo_type in_type = HLO_F32, w_type = HLO_F32, out_type = HLO_F32;
    int64_t B = 1, C = 1, H = 1, W = 1, O = 1, K[2] = {1, 1};
    int64_t stride[2] = {1, 1}, lo[2] = {0, 0}, hi[2] = {0, 0}, ld[2] = {1, 1}, rd[2] = {1, 1};
    int64_t groups = 1, batch_groups = 1;
    std::string in_labels = "b01f", w_labels = "01io", out_labels = "b01f";
};

int64_t out_size(int64_t n, int64_t k, int64_t s, int64_t lo, int64_t hi, int64_t ld, int64_t rd)
{
    int64_t padded = (n ? (n - 1) * ld + 1 : 0) + lo + hi, span = (k - 1) * rd + 1;
    return span > padded ? 0 : (padded - span) / s + 1;
}

// Physical dims and the offset of a logical index, for labels over the logical letters.
struct Layout {
    std::string labels;
    std::vector<int64_t> dims;
    Layout(const std::string &l, const std::map<char, int64_t> &size) : labels(l)
    {
        for (char c : l)
            dims.push_back(size.at(c));
    }
    int64_t offset(const std::map<char, int64_t> &idx) const
    {
        int64_t o = 0;
        for (size_t d = 0; d < labels.size(); d++)
            o = o * dims[d] + idx.at(labels[d]);
        return o;
    }
    std::string shape(hlo_type t) const
    {
        std::string s = std::string(hlo_type_name(t)) + "[";
        for (size_t d = 0; d < dims.size(); d++)
            s += (d ? "," : "") + std::to_string(dims[d]);
        return s + "]";
    }
};

std::string join(const int64_t *v, const char *sep, const int64_t *v2 = nullptr)
{
    std::string s;
    for (int i = 0; i < 2; i++)
        s += (i ? "x" : "") + std::to_string(v[i]) + (v2 ? sep + std::to_string(v2[i]) : "");
    return s;
}

// The naive reference: the padded, dilated input built explicitly (holes and padding marked
// absent), then each output element summed over kernel rows, columns, then input features of
// its group, in the result type (float, or modulo 2^64 and then wrapped to 32 bits).
std::vector<double> reference(const Problem &p, const std::vector<double> &x,
                              const std::vector<double> &w)
{
    int64_t PH = (p.H - 1) * p.ld[0] + 1 + p.lo[0] + p.hi[0];
    int64_t PW = (p.W - 1) * p.ld[1] + 1 + p.lo[1] + p.hi[1];
    // padded[b][c][y][x]: the input element's index, or -1.
    std::vector<int64_t> padded(p.B * p.C * std::max<int64_t>(PH, 0) * std::max<int64_t>(PW, 0),
                                -1);
    for (int64_t b = 0; b < p.B; b++)
        for (int64_t c = 0; c < p.C; c++)
            for (int64_t y = 0; y < p.H; y++)
                for (int64_t xx = 0; xx < p.W; xx++) {
                    int64_t py = y * p.ld[0] + p.lo[0], px = xx * p.ld[1] + p.lo[1];
                    if (py >= 0 && py < PH && px >= 0 && px < PW)
                        padded[((b * p.C + c) * PH + py) * PW + px] =
                            ((b * p.C + c) * p.H + y) * p.W + xx;
                }
    int64_t OH = out_size(p.H, p.K[0], p.stride[0], p.lo[0], p.hi[0], p.ld[0], p.rd[0]);
    int64_t OW = out_size(p.W, p.K[1], p.stride[1], p.lo[1], p.hi[1], p.ld[1], p.rd[1]);
    int64_t OB = p.B / p.batch_groups, cin = p.C / p.groups;
    std::vector<double> out;
    for (int64_t ob = 0; ob < OB; ob++)
        for (int64_t o = 0; o < p.O; o++)
            for (int64_t oy = 0; oy < OH; oy++)
                for (int64_t ox = 0; ox < OW; ox++) {
                    int64_t g = o / (p.O / p.groups);
                    int64_t b = o / (p.O / p.batch_groups) * OB + ob;
                    float facc = 0;
                    uint64_t iacc = 0; // modulo 2^64: s32 products reach 2^62
                    for (int64_t ky = 0; ky < p.K[0]; ky++)
                        for (int64_t kx = 0; kx < p.K[1]; kx++)
                            for (int64_t c = 0; c < cin; c++) {
                                int64_t py = oy * p.stride[0] + ky * p.rd[0];
                                int64_t px = ox * p.stride[1] + kx * p.rd[1];
                                int64_t at = padded[((b * p.C + g * cin + c) * PH + py) * PW + px];
                                if (at < 0)
                                    continue;
                                double wv = w[((o * cin + c) * p.K[0] + ky) * p.K[1] + kx];
                                if (p.in_type == HLO_F32) {
                                    float prod = (float)x[at] * (float)wv;
                                    facc += prod;
                                } else {
                                    iacc += (uint64_t)((int64_t)x[at] * (int64_t)wv);
                                }
                            }
                    out.push_back(p.in_type == HLO_F32 ? (double)facc
                                                       : (double)(int32_t)(uint32_t)iacc);
                }
    return out;
}

// Evaluates p on random data with hlo_eval and hlo_eval_instr; both must equal the reference
// bit for bit. Returns the number of output elements.
int64_t check_problem(const Problem &p, std::mt19937 &rng, const std::string &what)
{
    SCOPED_TRACE(what);
    int64_t OH = out_size(p.H, p.K[0], p.stride[0], p.lo[0], p.hi[0], p.ld[0], p.rd[0]);
    int64_t OW = out_size(p.W, p.K[1], p.stride[1], p.lo[1], p.hi[1], p.ld[1], p.rd[1]);
    Layout in(p.in_labels, {{'b', p.B}, {'f', p.C}, {'0', p.H}, {'1', p.W}});
    Layout ker(p.w_labels, {{'o', p.O}, {'i', p.C / p.groups}, {'0', p.K[0]}, {'1', p.K[1]}});
    Layout out(p.out_labels, {{'b', p.B / p.batch_groups}, {'f', p.O}, {'0', OH}, {'1', OW}});
    std::string text = entry(
        "  x = " + in.shape(p.in_type) + " parameter(0)\n  w = " + ker.shape(p.w_type) +
        " parameter(1)\n  ROOT c = " + out.shape(p.out_type) +
        " convolution(x, w), window={size=" + join(p.K, "") + " stride=" + join(p.stride, "") +
        " pad=" + join(p.lo, "_", p.hi) + " lhs_dilate=" + join(p.ld, "") +
        " rhs_dilate=" + join(p.rd, "") + "}, dim_labels=" + p.in_labels + "_" + p.w_labels + "->" +
        p.out_labels + ", feature_group_count=" + std::to_string(p.groups) +
        ", batch_group_count=" + std::to_string(p.batch_groups) + "\n");
    // Logical data, then the same values at their physical places.
    auto fill = [&](hlo_type t, size_t n) {
        std::normal_distribution<float> normal(0, 1);
        std::vector<double> v(n);
        for (double &e : v)
            e = t == HLO_F32  ? normal(rng)
                : t == HLO_S8 ? (double)(int8_t)rng()
                : t == HLO_U8 ? (double)(uint8_t)rng()
                              : (double)(int32_t)rng();
        return v;
    };
    int64_t cin = p.C / p.groups;
    std::vector<double> x = fill(p.in_type, p.B * p.C * p.H * p.W);
    std::vector<double> w = fill(p.w_type, p.O * cin * p.K[0] * p.K[1]);
    std::vector<double> xp(x.size()), wp(w.size());
    for (int64_t b = 0, i = 0; b < p.B; b++)
        for (int64_t c = 0; c < p.C; c++)
            for (int64_t y = 0; y < p.H; y++)
                for (int64_t xx = 0; xx < p.W; xx++)
                    xp[in.offset({{'b', b}, {'f', c}, {'0', y}, {'1', xx}})] = x[i++];
    for (int64_t o = 0, i = 0; o < p.O; o++)
        for (int64_t c = 0; c < cin; c++)
            for (int64_t y = 0; y < p.K[0]; y++)
                for (int64_t xx = 0; xx < p.K[1]; xx++)
                    wp[ker.offset({{'o', o}, {'i', c}, {'0', y}, {'1', xx}})] = w[i++];
    std::vector<double> want = reference(p, x, w), want_p(want.size());
    for (int64_t b = 0, i = 0; b < p.B / p.batch_groups; b++)
        for (int64_t o = 0; o < p.O; o++)
            for (int64_t y = 0; y < OH; y++)
                for (int64_t xx = 0; xx < OW; xx++)
                    want_p[out.offset({{'b', b}, {'f', o}, {'0', y}, {'1', xx}})] = want[i++];

    Parsed parsed(text);
    EXPECT_NE(parsed.m, nullptr) << parsed.err.msg;
    if (!parsed.m)
        return 0;
    hlo_array *args[2] = {make(p.in_type, in.dims, xp), make(p.w_type, ker.dims, wp)};
    hlo_array **outs = nullptr, *one = nullptr;
    int n = 0;
    hlo_error err{};
    EXPECT_EQ(hlo_eval(parsed.m, "t.hlo", args, 2, &outs, &n, &err), 0) << err.msg << "\n" << text;
    if (n == 1) {
        EXPECT_EQ(dims_of(outs[0]), out.dims) << text;
        // Bit for bit: through the result type, so that -0 differs from +0.
        hlo_array *expected = make(p.out_type, out.dims, want_p);
        EXPECT_EQ(std::memcmp(expected->data, outs[0]->data,
                              (size_t)outs[0]->shape.elements * hlo_type_size(p.out_type)),
                  0)
            << text;
        hlo_array_free(expected);
        const hlo_computation *c = hlo_entry(parsed.m);
        EXPECT_EQ(hlo_eval_instr(parsed.m, "t.hlo", &c->instrs[c->root], args, &one, &err), 0)
            << err.msg;
        if (one) {
            EXPECT_EQ(std::memcmp(one->data, outs[0]->data,
                                  (size_t)outs[0]->shape.elements * hlo_type_size(p.out_type)),
                      0);
        }
    }
    hlo_array_free(one);
    hlo_arrays_free(outs, n);
    hlo_array_free(args[0]);
    hlo_array_free(args[1]);
    return (int64_t)want.size();
}

TEST(HloConv, RandomShapesAgreeWithNaiveReference)
{
    std::mt19937 rng(2024);
    auto pick = [&](std::initializer_list<int64_t> l) { return l.begin()[rng() % l.size()]; };
    const std::vector<std::vector<std::string>> labels = {
        {"b01f", "01io", "b01f"}, // JAX, TF: NHWC, HWIO
        {"bf01", "oi01", "bf01"}, // PyTorch/XLA: NCHW, OIHW
        {"f0b1", "1o0i", "1fb0"}, // anything else
    };
    int64_t elements = 0, empty = 0;
    int cases = 0;
    for (; cases < 1500; cases++) {
        Problem p;
        const auto &l = labels[cases % 3];
        p.in_labels = l[0];
        p.w_labels = l[1];
        p.out_labels = l[2];
        p.B = pick({1, 5});
        p.C = pick({1, 3, 4, 5, 17});
        p.H = 1 + rng() % 12;
        p.W = 1 + rng() % 12;
        p.O = pick({1, 2, 3, 4});
        switch (rng() % 5) {
        case 0: // grouped: 2 groups
            p.groups = 2;
            p.C *= 2;
            p.O *= 2;
            break;
        case 1: // depthwise, multiplier 1 or 2
            p.groups = p.C;
            p.O = p.C * pick({1, 2});
            break;
        case 2: // batch groups: one per batch element
            p.batch_groups = p.B;
            p.O *= p.B;
            break;
        default: break;
        }
        for (int d = 0; d < 2; d++) {
            int64_t n = d ? p.W : p.H;
            p.stride[d] = pick({1, 2});
            p.ld[d] = rng() % 4 == 0 ? 2 : 1;
            p.rd[d] = rng() % 4 == 0 ? 2 : 1;
            p.lo[d] = (int64_t)(rng() % 6) - 2; // -2..3: asymmetric, negative
            p.hi[d] = (int64_t)(rng() % 6) - 2;
            int64_t padded = (n - 1) * p.ld[d] + 1 + p.lo[d] + p.hi[d];
            int64_t whole = padded >= 1 ? (padded - 1) / p.rd[d] + 1 : 1; // as large as fits
            p.K[d] = pick({1, 3, 5, whole});
            if (p.K[d] > whole && rng() % 4) // mostly windows that fit
                p.K[d] = whole;
        }
        if (cases % 4 == 3) { // integer types
            const hlo_type types[] = {HLO_S8, HLO_U8, HLO_S32};
            p.in_type = types[rng() % 3];
            p.w_type = p.in_type == HLO_S32 ? HLO_S32 : HLO_S8;
            p.out_type = HLO_S32;
        }
        int64_t n = check_problem(p, rng, "case " + std::to_string(cases));
        elements += n;
        empty += n == 0;
        if (HasFatalFailure() || HasNonfatalFailure())
            break;
    }
    EXPECT_EQ(cases, 1500);
    // Enough work done, not mostly windows that do not fit.
    EXPECT_GT(elements, 300000);
    EXPECT_LT(empty, 300);
}

// ======================================================== reduce-window --

const std::string kReducers = R"(HloModule m
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] maximum(x, y)
}
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
sub {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] subtract(x, y)
}
argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  ne = pred[] compare(a, a), direction=NE
  o = pred[] or(gt, ne)
  v = f32[] select(o, a, b)
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  n = pred[] and(eq, lt)
  o2 = pred[] or(o, n)
  i = s32[] select(o2, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
)";

std::string window_module(const std::string &body)
{
    return kReducers + "ENTRY main {\n" + body + "}\n";
}

TEST(HloReduceWindow, Pooling)
{
    std::vector<double> x(16);
    for (int i = 0; i < 16; i++)
        x[i] = (i * 7) % 16 - 5; // a 4x4 image
    // rows: -5 2 9 0 / 7 -2 5 -4 / 3 10 1 8 / -1 6 -3 4
    const std::string p = "  x = f32[1,4,4,1] parameter(0)\n  k = f32[] constant(-inf)\n"
                          "  z = f32[] constant(0)\n";
    expect_same(run1(window_module(p + "  ROOT r = f32[1,2,2,1] reduce-window(x, k), "
                                       "window={size=1x2x2x1 stride=1x2x2x1}, to_apply=max\n"),
                     {make(HLO_F32, {1, 4, 4, 1}, x)}),
                {7, 9, 10, 8});
    // 3x3 stride 2 pad 1: windows at rows/cols -1..1 and 1..3.
    expect_same(run1(window_module(p + "  ROOT r = f32[1,2,2,1] reduce-window(x, k), "
                                       "window={size=1x3x3x1 stride=1x2x2x1 "
                                       "pad=0_0x1_1x1_1x0_0}, to_apply=max\n"),
                     {make(HLO_F32, {1, 4, 4, 1}, x)}),
                {7, 9, 10, 10});
    // Sum pooling with the same padding: padding adds the init value 0.
    expect_same(run1(window_module(p + "  ROOT r = f32[1,2,2,1] reduce-window(x, z), "
                                       "window={size=1x3x3x1 stride=1x2x2x1 "
                                       "pad=0_0x1_1x1_1x0_0}, to_apply=add\n"),
                     {make(HLO_F32, {1, 4, 4, 1}, x)}),
                {2, 10, 23, 25});
    // Global max and sum.
    expect_same(run1(window_module(p + "  ROOT r = f32[1,1,1,1] reduce-window(x, k), "
                                       "window={size=1x4x4x1}, to_apply=max\n"),
                     {make(HLO_F32, {1, 4, 4, 1}, x)}),
                {10});
    expect_same(run1(window_module(p + "  ROOT r = f32[1,1,1,1] reduce-window(x, z), "
                                       "window={size=1x4x4x1}, to_apply=add\n"),
                     {make(HLO_F32, {1, 4, 4, 1}, x)}),
                {40});
    // Dilations: [1, _, 2, _, 4] padded to [_, 1, _, 2, _, 4, _], a window of 2 spaced 2;
    // padding and holes add the init value 0.5.
    expect_same(run1(window_module("  x = f32[3] parameter(0)\n  z = f32[] constant(0.5)\n"
                                   "  ROOT r = f32[5] reduce-window(x, z), window={size=2 "
                                   "pad=1_1 lhs_dilate=2 rhs_dilate=2}, to_apply=add\n"),
                     {make(HLO_F32, {3}, {1, 2, 4})}),
                {1.5, 3.5, 1.5, 6.5, 1.5});
    // A scalar: the init value folded with it once.
    expect_same(run1(window_module("  x = f32[] parameter(0)\n  z = f32[] constant(2)\n"
                                   "  ROOT r = f32[] reduce-window(x, z), window={}, "
                                   "to_apply=sub\n"),
                     {make(HLO_F32, {}, {5})}),
                {-3});
}

TEST(HloReduceWindow, FoldOrderAndPaddingAreInitValues)
{
    // acc - x from the init value over the window in row-major order; the padding position
    // is the init value: [pad, 1] -> 100 - 100 - 1.
    expect_same(run1(window_module("  x = f32[3] parameter(0)\n  z = f32[] constant(100)\n"
                                   "  ROOT r = f32[3] reduce-window(x, z), window={size=2 "
                                   "pad=1_0}, to_apply=sub\n"),
                     {make(HLO_F32, {3}, {1, 2, 3})}),
                {-1, 97, 95});
    // 2-D: row-major over the window: 0 - a - b - c - d.
    expect_same(run1(window_module("  x = f32[2,2] parameter(0)\n  z = f32[] constant(0)\n"
                                   "  ROOT r = f32[1,1] reduce-window(x, z), window={size=2x2}, "
                                   "to_apply=sub\n"),
                     {make(HLO_F32, {2, 2}, {1e8, 1, -1e8, 1})}),
                {-1}); // 1 vanishes against -1e8 in float
}

TEST(HloReduceWindow, VariadicArgmaxPooling)
{
    // (value, index) pairs: the maximum of each 2x2 window with stride 1 and its flat index,
    // the lowest index on ties, NaN winning; padding is (-inf, -1).
    const std::string text =
        window_module("  x = f32[3,4] parameter(0)\n  i = s32[3,4] iota(), iota_dimension=1\n"
                      "  r = s32[3,4] iota(), iota_dimension=0\n  c4 = s32[] constant(4)\n"
                      "  b4 = s32[3,4] broadcast(c4), dimensions={}\n"
                      "  m = s32[3,4] multiply(r, b4)\n  idx = s32[3,4] add(m, i)\n"
                      "  k = f32[] constant(-inf)\n  n = s32[] constant(-1)\n"
                      "  ROOT w = (f32[3,4], s32[3,4]) reduce-window(x, idx, k, n), "
                      "window={size=2x2 pad=0_1x0_1}, to_apply=argmax\n");
    std::mt19937 rng(9);
    const float pool[] = {-1, 0, 1, 2, -INFINITY, NAN};
    for (int run_ = 0; run_ < 50; run_++) {
        std::vector<float> x(12);
        for (float &v : x)
            v = pool[rng() % (run_ % 2 ? 6 : 4)];
        std::vector<double> want_v, want_i;
        for (int y = 0; y < 3; y++)
            for (int c = 0; c < 4; c++) {
                float best = -INFINITY;
                int bi = -1; // the init value's index
                for (int dy = 0; dy < 2; dy++)
                    for (int dx = 0; dx < 2; dx++) {
                        bool in = y + dy < 3 && c + dx < 4;
                        float v = in ? x[(y + dy) * 4 + c + dx] : -INFINITY;
                        int vi = in ? (y + dy) * 4 + c + dx : -1;
                        bool take = std::isnan(best)
                                        ? false
                                        : std::isnan(v) || v > best || (v == best && vi < bi);
                        if (take) {
                            best = v;
                            bi = vi;
                        }
                    }
                want_v.push_back(best);
                want_i.push_back(bi);
            }
        Result r = run(text, {make(HLO_F32, {3, 4}, std::vector<double>(x.begin(), x.end()))});
        ASSERT_EQ(r.err, "");
        ASSERT_EQ(r.out.size(), 2u);
        EXPECT_EQ(r.types[1], HLO_S32);
        expect_same(r.out[0], want_v);
        expect_same(r.out[1], want_i);
    }
    // hlo_eval_instr fills one slot per result.
    Parsed p(text);
    ASSERT_NE(p.m, nullptr) << p.err.msg;
    const hlo_computation *c = hlo_entry(p.m);
    hlo_array *x = make(HLO_F32, {3, 4}, {1, 5, 2, 0, 3, 3, 9, 1, 0, 0, 0, 7});
    hlo_array *idx = make(HLO_S32, {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
    hlo_array *k = make(HLO_F32, {}, {-INFINITY}), *n = make(HLO_S32, {}, {-1});
    hlo_array *ops[4] = {x, idx, k, n}, *outs[2] = {nullptr, nullptr};
    hlo_error err{};
    ASSERT_EQ(hlo_eval_instr(p.m, "t.hlo", &c->instrs[c->root], ops, outs, &err), 0) << err.msg;
    expect_same(values(outs[0]), {5, 9, 9, 1, 3, 9, 9, 7, 0, 0, 7, 7});
    expect_same(values(outs[1]), {1, 6, 6, 7, 4, 6, 6, 11, 8, 9, 11, 11});
    for (hlo_array *a : {x, idx, k, n, outs[0], outs[1]})
        hlo_array_free(a);
}

// ============================================================== samples --

// Parameter k of the samples as tests/jax/conv_fixtures.py makes it: element i is
// ((i * 37 + k * 11) % 23 - 11) / 8.
hlo_array *sample_param(int k, std::vector<int64_t> dims)
{
    int64_t n = 1;
    for (int64_t d : dims)
        n *= d;
    std::vector<double> v((size_t)n);
    for (int64_t i = 0; i < n; i++)
        v[(size_t)i] = (double)((i * 37 + k * 11) % 23 - 11) / 8;
    return make(HLO_F32, dims, v);
}

TEST(HloConvSamples, AgreeWithJax)
{
    // What JAX printed for them (conv_fixtures.py). XLA's CPU convolutions add in another
    // order: float results agree to a few ulps, the argmax exactly.
    const std::vector<double> logits = {-0.978047311, -9.64034653, -0.471780717,
                                        -0.776615381, -9.80089378, -0.616214991};
    for (const char *name : {"conv_jax.hlo", "conv_jax_dump.hlo"}) {
        SCOPED_TRACE(name);
        Result r =
            run(slurp(kSrc + "tests/hlo/" + name),
                {sample_param(0, {2, 8, 8, 1}), sample_param(1, {3, 3, 1, 4}), sample_param(2, {4}),
                 sample_param(3, {3, 3, 2, 6}), sample_param(4, {6, 3}), sample_param(5, {3})});
        ASSERT_EQ(r.err, "");
        ASSERT_EQ(r.out.size(), 1u);
        ASSERT_EQ(r.out[0].size(), logits.size());
        for (size_t i = 0; i < logits.size(); i++)
            EXPECT_NEAR(r.out[0][i], logits[i], 1e-5) << i;
    }
    Result r = run(slurp(kSrc + "tests/hlo/conv_jax_argmax.hlo"), {sample_param(0, {2, 6, 6})});
    ASSERT_EQ(r.err, "");
    ASSERT_EQ(r.out.size(), 2u);
    expect_same(r.out[0], {0.5, 1.125, 0.625, 1.375, 0.875, 0.75, 1.125, 1, 0.625, 1.25, 0.875,
                           1.375, 1.125, 0.625, 1.25, 0.875, 0.75, 1.375});
    expect_same(r.out[1], {6, 8, 11, 18, 21, 16, 31, 26, 34, 0, 8, 5, 18, 21, 23, 31, 26, 28});
}

} // namespace

// test_hlo_eval.cpp - the reference evaluator (hlo_eval): hand-computed results and located
// errors for every op, exact int8 dots, logical ops, iota, variadic reduce against an argmax
// reference. Its hooks and hlo_eval_instr: test_hlo_eval_hooks.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hlo/hlo.h"
#include "tests/support/hlo_test.h"

namespace
{

using namespace hlo_test;

// ============================================================ evaluator --

// hlo_bf16_bits, the one f32 -> bf16 rounding of the host side (a `convert` to bf16, and the
// runtime's bf16 transfers): round to nearest even at every edge, once from a double.
TEST(HloEval, Bf16Rounding)
{
    const struct {
        double v;
        uint16_t bits;
    } cases[] = {
        {1.0, 0x3f80},
        {1 + std::ldexp(1, -8), 0x3f80},                      // a tie: to the even mantissa
        {1 + 3 * std::ldexp(1, -8), 0x3f82},                  // a tie: up to the even one
        {1 + std::ldexp(1, -8) + std::ldexp(1, -40), 0x3f81}, // above the tie (f64: once)
        {-1 - std::ldexp(1, -7), 0xbf81},
        {0.0, 0x0000},
        {-0.0, 0x8000},
        {3.3895313892515355e38, 0x7f7f}, // the largest finite bf16
        {3.4028234663852886e38, 0x7f80}, // FLT_MAX rounds to inf
        {-3.4028234663852886e38, 0xff80},
        {HUGE_VAL, 0x7f80},
        {-HUGE_VAL, 0xff80},
        {NAN, 0x7fc0}, // quiet, of its sign
        {-NAN, 0xffc0},
        {std::ldexp(1, -126), 0x0080}, // the smallest normal
        {std::ldexp(1, -130), 0x0008}, // an f32 subnormal stays a bf16 subnormal
        {std::ldexp(1, -134), 0x0000}, // half the smallest bf16 subnormal: a tie, to 0
        {3 * std::ldexp(1, -134), 0x0002},
        {std::ldexp(1, -149), 0x0000}, // the smallest f32 subnormal
        {-std::ldexp(1, -149), 0x8000},
        {std::ldexp(255, -133), 0x00ff},   // the largest bf16 subnormal
        {std::ldexp(255.5, -133), 0x0100}, // a tie that carries into the exponent
    };
    for (const auto &c : cases) {
        EXPECT_EQ(hlo_bf16_bits(c.v), c.bits) << c.v;
        const double back = hlo_bf16_value(c.bits);
        if (std::isnan(c.v))
            EXPECT_TRUE(std::isnan(back));
        else
            EXPECT_EQ(hlo_bf16_bits(back), c.bits) << c.v; // exact both ways
    }
}

TEST(HloEval, ElementwiseF32)
{
    std::vector<double> x = {1.5, -2, 0, kNaN, 3, -0.25};
    std::vector<double> y = {0.5, 4, -1, 1, kNaN, 8};
    auto bin = [&](const char *op) {
        return run1(entry(std::string("  a = f32[2,3] parameter(0)\n  b = f32[2,3] parameter(1)\n"
                                      "  ROOT r = f32[2,3] ") +
                          op + "(a, b)\n"),
                    {make(HLO_F32, {2, 3}, x), make(HLO_F32, {2, 3}, y)});
    };
    expect_same(bin("add"), {2, 2, -1, kNaN, kNaN, 7.75});
    expect_same(bin("subtract"), {1, -6, 1, kNaN, kNaN, -8.25});
    expect_same(bin("multiply"), {0.75, -8, -0, kNaN, kNaN, -2});
    expect_same(bin("divide"), {3, -0.5, -0., kNaN, kNaN, -0.03125});
    expect_same(bin("maximum"), {1.5, 4, 0, kNaN, kNaN, 8});
    expect_same(bin("minimum"), {0.5, -2, -1, kNaN, kNaN, -0.25});
    // f32 rounding: 0.1f + 0.2f is computed in float.
    auto sum = run1(entry("  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                          "  ROOT r = f32[] add(a, b)\n"),
                    {make(HLO_F32, {}, {0.1}), make(HLO_F32, {}, {0.2})});
    EXPECT_EQ(sum[0], (double)(0.1f + 0.2f));

    auto un = [&](const char *op) {
        return run1(
            entry(std::string("  a = f32[4] parameter(0)\n  ROOT r = f32[4] ") + op + "(a)\n"),
            {make(HLO_F32, {4}, {0, 1, -2, kInf})});
    };
    expect_same(un("negate"), {-0., -1, 2, -kInf});
    expect_same(un("exponential"), {1, (double)expf(1), (double)expf(-2), kInf});
    expect_same(un("log"), {-kInf, 0, kNaN, kInf});
    expect_same(run1(entry("  a = f32[4] parameter(0)\n  ROOT r = pred[4] is-finite(a)\n"),
                     {make(HLO_F32, {4}, {0, kNaN, -kInf, 1e30})}),
                {1, 0, 0, 1});
}

TEST(HloEval, CompareAndSelect)
{
    std::vector<double> x = {1, 2, 3, kNaN}, y = {2, 2, 1, 1};
    const char *dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
    std::vector<std::vector<double>> want = {{0, 1, 0, 0}, {1, 0, 1, 1}, {1, 0, 0, 0},
                                             {1, 1, 0, 0}, {0, 0, 1, 0}, {0, 1, 1, 0}};
    for (int d = 0; d < 6; d++)
        expect_same(run1(entry(std::string("  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n"
                                           "  ROOT r = pred[4] compare(a, b), "
                                           "comparison_direction=") +
                               dirs[d] + "\n"),
                         {make(HLO_F32, {4}, x), make(HLO_F32, {4}, y)}),
                    want[d]);
    expect_same(run1(entry("  a = s32[3] parameter(0)\n  b = s32[3] parameter(1)\n"
                           "  c = pred[3] compare(a, b), comparison_direction=LT\n"
                           "  ROOT r = s32[3] select(c, a, b)\n"),
                     {make(HLO_S32, {3}, {-5, 7, 2147483647}), make(HLO_S32, {3}, {3, -7, 0})}),
                {-5, -7, 0});
    expect_same(
        run1(entry("  p = pred[] parameter(0)\n  a = f32[2] parameter(1)\n"
                   "  b = f32[2] parameter(2)\n  ROOT r = f32[2] select(p, a, b)\n"),
             {make(HLO_PRED, {}, {1}), make(HLO_F32, {2}, {1, 2}), make(HLO_F32, {2}, {3, 4})}),
        {1, 2});
}

TEST(HloEval, IntegerArithmeticWraps)
{
    auto bin = [&](hlo_type t, const char *ty, const char *op, std::vector<double> a,
                   std::vector<double> b) {
        std::string s = std::string("  a = ") + ty + "[4] parameter(0)\n  b = " + ty +
                        "[4] parameter(1)\n  ROOT r = " + ty + "[4] " + op + "(a, b)\n";
        return run1(entry(s), {make(t, {4}, a), make(t, {4}, b)});
    };
    const double mn = -2147483648.0, mx = 2147483647.0;
    expect_same(bin(HLO_S32, "s32", "add", {mx, mn, 5, -5}, {1, -1, -7, 7}), {mn, mx, -2, 2});
    expect_same(bin(HLO_S32, "s32", "multiply", {65536, mx, -3, mn}, {65536, 2, 5, -1}),
                {0, -2, -15, mn});
    expect_same(bin(HLO_S32, "s32", "divide", {7, -7, 5, mn}, {2, 2, 0, -1}), {3, -3, -1, mn});
    expect_same(bin(HLO_S8, "s8", "add", {127, -128, 100, -1}, {1, -1, 100, 1}),
                {-128, 127, -56, 0});
    expect_same(bin(HLO_S8, "s8", "subtract", {-128, 0, 5, 1}, {1, -128, 7, 1}),
                {127, -128, -2, 0});
    expect_same(bin(HLO_U8, "u8", "add", {255, 0, 200, 1}, {1, 0, 100, 2}), {0, 0, 44, 3});
    expect_same(bin(HLO_U8, "u8", "divide", {9, 0, 255, 7}, {2, 0, 0, 7}), {4, 255, 255, 1});
    expect_same(bin(HLO_S32, "s32", "maximum", {mn, 3, -1, 0}, {mx, 2, -2, 0}), {mx, 3, -1, 0});
    expect_same(run1(entry("  a = s8[3] parameter(0)\n  ROOT r = s8[3] negate(a)\n"),
                     {make(HLO_S8, {3}, {-128, 127, 0})}),
                {-128, -127, 0});
}

TEST(HloEval, DataMovement)
{
    std::vector<double> a23 = {1, 2, 3, 4, 5, 6};
    expect_same(run1(entry("  a = f32[2,3] parameter(0)\n  ROOT r = f32[3,2] transpose(a), "
                           "dimensions={1,0}\n"),
                     {make(HLO_F32, {2, 3}, a23)}),
                {1, 4, 2, 5, 3, 6});
    // [2,3,4] -> dims {2,0,1}: result[k][i][j] = a[i][j][k].
    std::vector<double> a234(24), want(24);
    for (int i = 0; i < 24; i++)
        a234[i] = i;
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++)
                want[(k * 2 + i) * 3 + j] = (i * 3 + j) * 4 + k;
    expect_same(run1(entry("  a = s32[2,3,4] parameter(0)\n  ROOT r = s32[4,2,3] transpose(a), "
                           "dimensions={2,0,1}\n"),
                     {make(HLO_S32, {2, 3, 4}, a234)}),
                want);
    expect_same(run1(entry("  a = f32[3] parameter(0)\n  ROOT r = f32[2,3] broadcast(a), "
                           "dimensions={1}\n"),
                     {make(HLO_F32, {3}, {7, 8, 9})}),
                {7, 8, 9, 7, 8, 9});
    expect_same(run1(entry("  a = f32[2] parameter(0)\n  ROOT r = f32[2,3] broadcast(a), "
                           "dimensions={0}\n"),
                     {make(HLO_F32, {2}, {7, 8})}),
                {7, 7, 7, 8, 8, 8});
    expect_same(run1(entry("  a = u8[] parameter(0)\n  ROOT r = u8[2,2] broadcast(a), "
                           "dimensions={}\n"),
                     {make(HLO_U8, {}, {200})}),
                {200, 200, 200, 200});
    // A transposing broadcast: operand dim 0 goes to result dim 1.
    expect_same(run1(entry("  a = f32[2,3] parameter(0)\n  ROOT r = f32[3,2] broadcast(a), "
                           "dimensions={1,0}\n"),
                     {make(HLO_F32, {2, 3}, a23)}),
                {1, 4, 2, 5, 3, 6});
    Result r = run(entry("  a = f32[2,3] parameter(0)\n  ROOT r = f32[3,1,2] reshape(a)\n"),
                   {make(HLO_F32, {2, 3}, a23)});
    ASSERT_EQ(r.err, "");
    expect_same(r.out[0], a23);
    EXPECT_EQ(r.dims[0], (std::vector<int64_t>{3, 1, 2}));
    expect_same(run1(entry("  ROOT c = s8[2,2] constant({{-128, 127}, {0, 5}})\n"), {}),
                {-128, 127, 0, 5});
    // A copy to another layout is the same value (layouts are not modelled).
    expect_same(run1(entry("  a = f32[2,3]{1,0} parameter(0)\n  ROOT r = f32[2,3]{0,1} copy(a)\n"),
                     {make(HLO_F32, {2, 3}, a23)}),
                a23);
}

TEST(HloEval, Pad)
{
    // Low 1, high 2, interior 1 on [3]: v a v b v c v v.
    expect_same(run1(entry("  a = f32[3] parameter(0)\n  v = f32[] parameter(1)\n"
                           "  ROOT r = f32[8] pad(a, v), padding=1_2_1\n"),
                     {make(HLO_F32, {3}, {1, 2, 3}), make(HLO_F32, {}, {-1})}),
                {-1, 1, -1, 2, -1, 3, -1, -1});
    // Negative padding crops; zero padding (as torch_xla's max-pool prints it) is the identity.
    expect_same(run1(entry("  a = s32[2,3] parameter(0)\n  v = s32[] parameter(1)\n"
                           "  ROOT r = s32[2,2] pad(a, v), padding=0_0x-1_0\n"),
                     {make(HLO_S32, {2, 3}, {1, 2, 3, 4, 5, 6}), make(HLO_S32, {}, {0})}),
                {2, 3, 5, 6});
    expect_same(run1(entry("  a = f32[2,2] parameter(0)\n  v = f32[] parameter(1)\n"
                           "  ROOT r = f32[2,2] pad(a, v), padding=0_0x0_0\n"),
                     {make(HLO_F32, {2, 2}, {1, 2, 3, 4}), make(HLO_F32, {}, {-kInf})}),
                {1, 2, 3, 4});
    expect_same(run1(entry("  a = u8[1,2] parameter(0)\n  v = u8[] parameter(1)\n"
                           "  ROOT r = u8[3,4] pad(a, v), padding=1_1x1_1\n"),
                     {make(HLO_U8, {1, 2}, {7, 8}), make(HLO_U8, {}, {9})}),
                {9, 9, 9, 9, 9, 7, 8, 9, 9, 9, 9, 9});
}

TEST(HloEval, Convert)
{
    auto cv = [&](hlo_type ft, const char *from, const char *to, std::vector<double> v) {
        return run1(entry(std::string("  a = ") + from + "[6] parameter(0)\n  ROOT r = " + to +
                          "[6] convert(a)\n"),
                    {make(ft, {6}, v)});
    };
    expect_same(cv(HLO_F32, "f32", "s32", {2.9, -2.9, kNaN, 1e10, -1e10, -0.5}),
                {2, -2, 0, 2147483647, -2147483648.0, 0});
    expect_same(cv(HLO_F32, "f32", "s8", {300, -300, 127.9, -128.9, kNaN, 1}),
                {127, -128, 127, -128, 0, 1});
    expect_same(cv(HLO_F32, "f32", "u8", {-1, 255.5, 256, 3.7, kInf, -kInf}),
                {0, 255, 255, 3, 255, 0});
    expect_same(cv(HLO_S32, "s32", "s8", {128, -129, 255, 256, -1, 1000}),
                {-128, 127, -1, 0, -1, -24});
    expect_same(cv(HLO_S32, "s32", "f32", {16777217, -3, 0, 1, 2147483647, 5}),
                {16777216, -3, 0, 1, 2147483648.0, 5});
    expect_same(cv(HLO_F32, "f32", "pred", {0, -0., 0.5, kNaN, -3, 1}), {0, 0, 1, 1, 1, 1});
    expect_same(cv(HLO_PRED, "pred", "s32", {0, 1, 1, 0, 0, 1}), {0, 1, 1, 0, 0, 1});
    expect_same(cv(HLO_U8, "u8", "s8", {255, 128, 127, 0, 1, 200}), {-1, -128, 127, 0, 1, -56});
}

TEST(HloEval, TuplesAndCalls)
{
    std::string text = R"(HloModule m
sq {
  x = f32[2] parameter(0)
  y = f32[2] parameter(1)
  m = f32[2] multiply(x, x)
  ROOT t = (f32[2], f32[2]) tuple(m, y)
}
outer {
  p = f32[2] parameter(0)
  c = (f32[2], f32[2]) call(p, p), to_apply=sq
  g = f32[2] get-tuple-element(c), index=0
  ROOT n = f32[2] negate(g)
}
ENTRY main {
  a = f32[2] parameter(0)
  b = s32[] parameter(1)
  o = f32[2] call(a), to_apply=outer
  u = f32[2] call(o), calls=outer
  inner = (s32[], f32[2]) tuple(b, u)
  ROOT r = (f32[2], (s32[], f32[2])) tuple(o, inner)
}
)";
    Result r = run(text, {make(HLO_F32, {2}, {3, -2}), make(HLO_S32, {}, {42})});
    ASSERT_EQ(r.err, "");
    ASSERT_EQ(r.out.size(), 3u);
    expect_same(r.out[0], {-9, -4});
    expect_same(r.out[1], {42});
    expect_same(r.out[2], {-81, -16});
    EXPECT_EQ(r.types[1], HLO_S32);
}

// Reference dot: result index -> sum over the contracting positions, by explicit index maps.
TEST(HloEval, DotLayouts)
{
    // 2x3 . 3x2 by hand.
    expect_same(run1(entry("  a = f32[2,3] parameter(0)\n  b = f32[3,2] parameter(1)\n"
                           "  ROOT r = f32[2,2] dot(a, b), lhs_contracting_dims={1}, "
                           "rhs_contracting_dims={0}\n"),
                     {make(HLO_F32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                      make(HLO_F32, {3, 2}, {7, 8, 9, 10, 11, 12})}),
                {58, 64, 139, 154});
    // Transposed lhs (contract its dim 0) and rhs contracting dim 1: a^T . b^T.
    expect_same(run1(entry("  a = f32[3,2] parameter(0)\n  b = f32[2,3] parameter(1)\n"
                           "  ROOT r = f32[2,2] dot(a, b), lhs_contracting_dims={0}, "
                           "rhs_contracting_dims={1}\n"),
                     {make(HLO_F32, {3, 2}, {1, 4, 2, 5, 3, 6}),
                      make(HLO_F32, {2, 3}, {7, 9, 11, 8, 10, 12})}),
                {58, 64, 139, 154});
    // Batch dims: [2,2,3] . [2,3,1] batch 0, contract 2 with 1.
    expect_same(run1(entry("  a = s32[2,2,3] parameter(0)\n  b = s32[2,3,1] parameter(1)\n"
                           "  ROOT r = s32[2,2,1] dot(a, b), lhs_batch_dims={0}, "
                           "rhs_batch_dims={0}, lhs_contracting_dims={2}, "
                           "rhs_contracting_dims={1}\n"),
                     {make(HLO_S32, {2, 2, 3}, {1, 2, 3, 4, 5, 6, 1, 0, 0, 0, 1, 0}),
                      make(HLO_S32, {2, 3, 1}, {1, 1, 1, 7, 8, 9})}),
                {6, 15, 7, 8});
    // Batch dim not leading (lhs dim 1, rhs dim 2) and two contracting dims, against loops.
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> d(-9, 9);
    std::vector<double> A(3 * 2 * 4 * 5), B(4 * 5 * 2 * 6);
    for (auto &v : A)
        v = d(rng);
    for (auto &v : B)
        v = d(rng);
    // A [i=3][b=2][k1=4][k2=5], B [k1=4][k2=5][b=2][j=6]; result [b][i][j].
    std::vector<double> want(2 * 3 * 6, 0);
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 6; j++)
                for (int k1 = 0; k1 < 4; k1++)
                    for (int k2 = 0; k2 < 5; k2++)
                        want[(b * 3 + i) * 6 + j] +=
                            A[((i * 2 + b) * 4 + k1) * 5 + k2] * B[((k1 * 5 + k2) * 2 + b) * 6 + j];
    expect_same(run1(entry("  a = f32[3,2,4,5] parameter(0)\n  b = f32[4,5,2,6] parameter(1)\n"
                           "  ROOT r = f32[2,3,6] dot(a, b), lhs_batch_dims={1}, "
                           "rhs_batch_dims={2}, lhs_contracting_dims={2,3}, "
                           "rhs_contracting_dims={0,1}\n"),
                     {make(HLO_F32, {3, 2, 4, 5}, A), make(HLO_F32, {4, 5, 2, 6}, B)}),
                want);
    // Contracting dims listed in the other order (k2 then k1) give the same sums.
    expect_same(run1(entry("  a = f32[3,2,4,5] parameter(0)\n  b = f32[4,5,2,6] parameter(1)\n"
                           "  ROOT r = f32[2,3,6] dot(a, b), lhs_batch_dims={1}, "
                           "rhs_batch_dims={2}, lhs_contracting_dims={3,2}, "
                           "rhs_contracting_dims={1,0}\n"),
                     {make(HLO_F32, {3, 2, 4, 5}, A), make(HLO_F32, {4, 5, 2, 6}, B)}),
                want);
    // No contracting dims: an outer product.
    expect_same(run1(entry("  a = f32[2] parameter(0)\n  b = f32[3] parameter(1)\n"
                           "  ROOT r = f32[2,3] dot(a, b)\n"),
                     {make(HLO_F32, {2}, {1, 2}), make(HLO_F32, {3}, {3, 4, 5})}),
                {3, 4, 5, 6, 8, 10});
}

TEST(HloEval, DotF32AccumulatesInFloatInOrder)
{
    // 1 + 1e-8 * 4 is 1 in float at every step; a double accumulator would not round it away.
    auto r = run1(entry("  a = f32[1,5] parameter(0)\n  b = f32[5,1] parameter(1)\n"
                        "  ROOT r = f32[1,1] dot(a, b), lhs_contracting_dims={1}, "
                        "rhs_contracting_dims={0}\n"),
                  {make(HLO_F32, {1, 5}, {1, 1e-8, 1e-8, 1e-8, 1e-8}),
                   make(HLO_F32, {5, 1}, {1, 1, 1, 1, 1})});
    EXPECT_EQ(r[0], 1.0);
    // The reverse order accumulates the small terms first.
    r = run1(entry("  a = f32[1,5] parameter(0)\n  b = f32[5,1] parameter(1)\n"
                   "  ROOT r = f32[1,1] dot(a, b), lhs_contracting_dims={1}, "
                   "rhs_contracting_dims={0}\n"),
             {make(HLO_F32, {1, 5}, {1e-8, 1e-8, 1e-8, 1e-8, 1}),
              make(HLO_F32, {5, 1}, {1, 1, 1, 1, 1})});
    float acc = 0;
    for (int i = 0; i < 4; i++)
        acc += 1e-8f;
    acc += 1.0f;
    EXPECT_EQ(r[0], (double)acc);
}

TEST(HloEval, DotS8ExactOnExtremes)
{
    const int M = 3, K = 2048, N = 4; // sums beyond 2^24: a float accumulator would round
    std::mt19937 rng(11);
    const int ext[] = {-128, 127, -127, 1, -1, 0};
    std::vector<double> A(M * K), B(K * N);
    for (auto &v : A)
        v = ext[rng() % 6];
    for (auto &v : B)
        v = ext[rng() % 6];
    for (int k = 0; k < K; k++) { // row 0 and column 0 all -128: 2048 * 16384 = 2^25
        A[k] = -128;
        B[k * N] = -128;
    }
    std::vector<double> want(M * N);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            int64_t s = 0;
            for (int k = 0; k < K; k++)
                s += (int64_t)A[i * K + k] * (int64_t)B[k * N + j];
            want[i * N + j] = (double)s;
        }
    EXPECT_EQ(want[0], 33554432.0);
    Result r = run(entry("  a = s8[3,2048] parameter(0)\n  b = s8[2048,4] parameter(1)\n"
                         "  ROOT r = s32[3,4] dot(a, b), lhs_contracting_dims={1}, "
                         "rhs_contracting_dims={0}\n"),
                   {make(HLO_S8, {M, K}, A), make(HLO_S8, {K, N}, B)});
    ASSERT_EQ(r.err, "");
    EXPECT_EQ(r.types[0], HLO_S32);
    expect_same(r.out[0], want);
    // s32 accumulation wraps modulo 2^32: 2 * (2^30 + 2^30) = 2^32 -> 0; plus 1.
    expect_same(run1(entry("  a = s32[1,3] parameter(0)\n  b = s32[3,1] parameter(1)\n"
                           "  ROOT r = s32[1,1] dot(a, b), lhs_contracting_dims={1}, "
                           "rhs_contracting_dims={0}\n"),
                     {make(HLO_S32, {1, 3}, {1073741824, 1073741824, 1}),
                      make(HLO_S32, {3, 1}, {2, 2, 1})}),
                {1});
}

TEST(HloEval, Reduce)
{
    const std::string comps = R"(HloModule m
mx {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT r = f32[] maximum(x, y)
}
ad {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT r = f32[] add(y, x)
}
sumsq {
  acc = f32[] parameter(0)
  v = f32[] parameter(1)
  sq = f32[] multiply(v, v)
  ROOT r = f32[] add(acc, sq)
}
argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(b, a), comparison_direction=GT
  v = f32[] select(gt, b, a)
  i = s32[] select(gt, bi, ai)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY main {
  a = f32[2,3] parameter(0)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
)";
    std::vector<double> a = {1, 5, -2, 7, 0, 3};
    auto red = [&](const std::string &lines) {
        return run(comps + lines + "}\n", {make(HLO_F32, {2, 3}, a)});
    };
    Result r = red("  ROOT r = f32[2] reduce(a, ninf), dimensions={1}, to_apply=mx\n");
    ASSERT_EQ(r.err, "");
    expect_same(r.out[0], {5, 7});
    r = red("  ROOT r = f32[3] reduce(a, zero), dimensions={0}, to_apply=ad\n");
    expect_same(r.out[0], {8, 5, 1});
    r = red("  ROOT r = f32[] reduce(a, zero), dimensions={0,1}, to_apply=ad\n");
    expect_same(r.out[0], {14});
    EXPECT_TRUE(r.dims[0].empty());
    r = red("  ROOT r = f32[2] reduce(a, zero), dimensions={1}, to_apply=sumsq\n");
    ASSERT_EQ(r.err, "");
    expect_same(r.out[0], {30, 58});
    r = red("  ROOT r = f32[2,3] reduce(a, zero), dimensions={}, to_apply=ad\n");
    expect_same(r.out[0], a);
    r = red("  iota = s32[2,3] constant({{0, 1, 2}, {0, 1, 2}})\n  m1 = s32[] constant(-1)\n"
            "  ROOT r = (f32[2], s32[2]) reduce(a, iota, ninf, m1), dimensions={1}, "
            "to_apply=argmax\n");
    ASSERT_EQ(r.err, "");
    ASSERT_EQ(r.out.size(), 2u);
    expect_same(r.out[0], {5, 7});
    expect_same(r.out[1], {1, 0});
    // Float addition in row-major order from the init value: (1e8 + 1) + ... stays 1e8 in float.
    Result big =
        run(comps.substr(0, comps.find("ENTRY")) +
                "ENTRY main {\n  a = f32[4] parameter(0)\n  z = f32[] constant(100000000)\n"
                "  ROOT r = f32[] reduce(a, z), dimensions={0}, to_apply=ad\n}\n",
            {make(HLO_F32, {4}, {1, 1, 1, 1})});
    ASSERT_EQ(big.err, "");
    EXPECT_EQ(big.out[0][0], 1e8);
}

TEST(HloEval, Errors)
{
    // An elided constant that is needed: located; one that is not needed is fine.
    std::string text = entry("  a = f32[2] parameter(0)\n  c = f32[2] constant({...})\n"
                             "  ROOT r = f32[2] add(a, c)\n");
    Result r = run(text, {make(HLO_F32, {2}, {1, 2})});
    EXPECT_EQ(r.err, at(text, "c =") + "constant: value of 'c' is elided ({...}) but needed");
    r = run(entry("  a = f32[2] parameter(0)\n  c = f32[2] constant({...})\n"
                  "  ROOT r = f32[2] negate(a)\n"),
            {make(HLO_F32, {2}, {1, 2})});
    EXPECT_EQ(r.err, "");
    // Parameters: count and shapes.
    text = entry("  a = f32[2] parameter(0)\n  ROOT r = f32[2] negate(a)\n");
    r = run(text, {make(HLO_F32, {3}, {1, 2, 3})});
    EXPECT_EQ(r.err, at(text, "a =") + "parameter: 'a' is f32[2] but the array given is f32[3]");
    r = run(text, {make(HLO_S32, {2}, {1, 2})});
    EXPECT_EQ(r.err, at(text, "a =") + "parameter: 'a' is f32[2] but the array given is s32[2]");
    r = run(text, {});
    EXPECT_EQ(r.err, "t.hlo: ENTRY 'main' has 1 parameters, 0 arrays given");
    // A type the evaluator does not handle, and a shape error found by the checker first.
    text = entry("  ROOT t = token[] constant(0)\n");
    r = run(text, {});
    EXPECT_EQ(r.err, at(text, "t =") + "constant: shape token[] of 't' has an element type the "
                                       "evaluator does not support");
    text = entry("  a = f32[2] parameter(0)\n  ROOT r = f32[3] negate(a)\n");
    r = run(text, {make(HLO_F32, {2}, {1, 2})});
    EXPECT_EQ(r.err.rfind(at(text, "r =") + "negate: ", 0), 0u) << r.err;
    text = entry("  ROOT c = s8[2] constant({1, 300})\n");
    r = run(text, {});
    EXPECT_EQ(r.err, at(text, "c =") + "constant: value 300 of 'c' is not a s8");
}

// Batch normalization as PyTorch/XLA lowers torch's layer_norm (batch-norm-training over the
// features of a reshaped input) and BatchNorm2d in eval mode (batch-norm-inference): per feature,
// the mean and the biased variance of the other positions, hand-computed here.
TEST(HloEval, BatchNorm)
{
    // x [2, 2] with feature_index=1: feature 0 holds {1, 3} (mean 2, variance 1), feature 1
    // {2, 6} (mean 4, variance 4); epsilon 0 keeps the numbers exact.
    const std::string training =
        entry("  x = f32[2,2] parameter(0)\n  s = f32[2] constant({1, 2})\n"
              "  o = f32[2] constant({0, 10})\n"
              "  ROOT b = (f32[2,2], f32[2], f32[2]) batch-norm-training(x, s, o), epsilon=0, "
              "feature_index=1\n");
    Result r = run(training, {make(HLO_F32, {2, 2}, {1, 2, 3, 6})});
    ASSERT_EQ(r.err, "");
    ASSERT_EQ(r.out.size(), 3u);
    expect_same(r.out[0], {-1, 8, 1, 12}); // (x - mean) / sqrt(var) * scale + offset
    expect_same(r.out[1], {2, 4});
    expect_same(r.out[2], {1, 4});
    const std::string inference = entry(
        "  x = f32[1,2,2] parameter(0)\n  s = f32[2] constant({1, 1})\n"
        "  o = f32[2] constant({0, 0})\n  m = f32[2] constant({1, 2})\n"
        "  v = f32[2] constant({3, 0})\n"
        "  ROOT y = f32[1,2,2] batch-norm-inference(x, s, o, m, v), epsilon=1, feature_index=1\n");
    expect_same(run1(inference, {make(HLO_F32, {1, 2, 2}, {3, 5, 2, 4})}), {1, 2, 0, 2});
    // Located errors: the feature dim, an operand of other dims, an integer input.
    std::string bad = entry("  x = f32[2,2] parameter(0)\n  s = f32[3] constant({1, 2, 3})\n"
                            "  ROOT y = f32[2,2] batch-norm-inference(x, s, s, s, s), epsilon=0, "
                            "feature_index=1\n");
    r = run(bad, {make(HLO_F32, {2, 2}, {1, 2, 3, 4})});
    EXPECT_EQ(r.err, at(bad, "y =") + "batch-norm-inference: operand 1 is f32[3], expected f32[2]");
    bad = entry("  x = f32[2,2] parameter(0)\n  s = f32[2] constant({1, 2})\n"
                "  ROOT y = f32[2,2] batch-norm-inference(x, s, s, s, s), epsilon=0, "
                "feature_index=2\n");
    r = run(bad, {make(HLO_F32, {2, 2}, {1, 2, 3, 4})});
    EXPECT_EQ(r.err,
              at(bad, "y =") + "batch-norm-inference: feature_index 2 out of range for rank 2");
}

// ============================================== logical ops, iota, variadic reduce --

TEST(HloEval, LogicalOps)
{
    auto bin = [&](hlo_type t, const char *ty, const char *op, std::vector<double> a,
                   std::vector<double> b) {
        std::string s = std::string("  a = ") + ty + "[4] parameter(0)\n  b = " + ty +
                        "[4] parameter(1)\n  ROOT r = " + ty + "[4] " + op + "(a, b)\n";
        return run1(entry(s), {make(t, {4}, a), make(t, {4}, b)});
    };
    auto un = [&](hlo_type t, const char *ty, std::vector<double> a) {
        return run1(entry(std::string("  a = ") + ty + "[4] parameter(0)\n  ROOT r = " + ty +
                          "[4] not(a)\n"),
                    {make(t, {4}, a)});
    };
    // pred: logical, every combination.
    const std::vector<double> p = {0, 0, 1, 1}, q = {0, 1, 0, 1};
    expect_same(bin(HLO_PRED, "pred", "and", p, q), {0, 0, 0, 1});
    expect_same(bin(HLO_PRED, "pred", "or", p, q), {0, 1, 1, 1});
    expect_same(bin(HLO_PRED, "pred", "xor", p, q), {0, 1, 1, 0});
    expect_same(un(HLO_PRED, "pred", p), {1, 1, 0, 0});
    // Integers: bitwise on the two's complement bits, in the element type.
    const double mn = -2147483648.0, mx = 2147483647.0;
    expect_same(bin(HLO_S32, "s32", "and", {-1, mn, 12, -6}, {mx, -1, 10, 7}), {mx, mn, 8, 2});
    expect_same(bin(HLO_S32, "s32", "or", {mn, 0, 12, -8}, {mx, 0, 10, 3}), {-1, 0, 14, -5});
    expect_same(bin(HLO_S32, "s32", "xor", {-1, mn, 12, -1}, {mx, mx, 10, -1}), {mn, -1, 6, 0});
    expect_same(un(HLO_S32, "s32", {0, -1, mx, mn}), {-1, 0, mn, mx});
    expect_same(bin(HLO_S8, "s8", "and", {-128, -1, 127, -3}, {-1, 127, -128, 6}),
                {-128, 127, 0, 4});
    expect_same(bin(HLO_S8, "s8", "xor", {-128, -1, 127, 5}, {127, 1, -1, 5}), {-1, -2, -128, 0});
    expect_same(un(HLO_S8, "s8", {0, -128, 127, 5}), {-1, 127, -128, -6});
    expect_same(bin(HLO_U8, "u8", "or", {128, 0, 255, 3}, {127, 0, 1, 12}), {255, 0, 255, 15});
    expect_same(bin(HLO_U8, "u8", "xor", {255, 0, 170, 3}, {1, 0, 85, 12}), {254, 0, 255, 15});
    expect_same(un(HLO_U8, "u8", {0, 255, 1, 170}), {255, 0, 254, 85});
}

TEST(HloEval, Iota)
{
    expect_same(run1(entry("  ROOT r = s32[2,3] iota(), iota_dimension=0\n"), {}),
                {0, 0, 0, 1, 1, 1});
    expect_same(run1(entry("  ROOT r = f32[2,3] iota(), iota_dimension=1\n"), {}),
                {0, 1, 2, 0, 1, 2});
    // [2,3,4] along the middle dim: element (i,j,k) is j.
    std::vector<double> want;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 4; k++)
                want.push_back(j);
    Result r = run(entry("  ROOT r = s8[2,3,4] iota(), iota_dimension=1\n"), {});
    ASSERT_EQ(r.err, "");
    EXPECT_EQ(r.types[0], HLO_S8);
    EXPECT_EQ(r.dims[0], (std::vector<int64_t>{2, 3, 4}));
    expect_same(r.out[0], want);
    // Converted to the element type: u8 and s8 wrap past their range, as XLA's convert does.
    std::vector<double> u = run1(entry("  ROOT r = u8[300] iota(), iota_dimension=0\n"), {});
    std::vector<double> s = run1(entry("  ROOT r = s8[300] iota(), iota_dimension=0\n"), {});
    ASSERT_EQ(u.size(), 300u);
    ASSERT_EQ(s.size(), 300u);
    for (int i = 0; i < 300; i++) {
        EXPECT_EQ(u[i], i % 256) << i;
        EXPECT_EQ(s[i], (int8_t)(uint8_t)i) << i;
    }
    // Empty dims give no elements.
    r = run(entry("  ROOT r = f32[0,3] iota(), iota_dimension=1\n"), {});
    ASSERT_EQ(r.err, "");
    EXPECT_TRUE(r.out[0].empty());
}

TEST(HloEval, JaxArgmaxAgainstReference)
{
    const std::string text = slurp(kSrc + "tests/hlo/jax_argmax.hlo");
    ASSERT_FALSE(text.empty());
    const int R = 4, C = 10;
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = INFINITY;
    auto check = [&](const std::vector<float> &x, const char *what) {
        std::vector<double> xd(x.begin(), x.end());
        Result r = run(text, {make(HLO_F32, {R, C}, xd)});
        ASSERT_EQ(r.err, "") << what;
        ASSERT_EQ(r.out.size(), 1u);
        EXPECT_EQ(r.types[0], HLO_S32);
        EXPECT_EQ(r.dims[0], std::vector<int64_t>{R});
        EXPECT_EQ(r.out[0], argmax_rows(x, R, C)) << what;
    };
    // Edge rows: all -inf (index 0: the init value's index wins a tie), a late NaN, several
    // NaNs, -0 before +0 (a tie), +inf after NaN.
    std::vector<float> edge(R * C, -inf);
    for (int c = 0; c < C; c++) {
        edge[C + c] = (float)(c % 3);
        edge[2 * C + c] = c == 4 || c == 7 ? nan : (float)c;
        edge[3 * C + c] = c == 2 ? -0.0f : c == 5 ? 0.0f : c == 6 ? nan : c == 8 ? inf : -1;
    }
    edge[C + C - 1] = nan;
    check(edge, "edges");
    EXPECT_EQ(argmax_rows(edge, R, C), (std::vector<double>{0, 9, 4, 6}));
    // Random rows from a few values: many ties, some NaN and infinities.
    std::mt19937 rng(5);
    const float pool[] = {-2, -1, -0.0f, 0, 1, 2, inf, -inf, nan};
    for (int run = 0; run < 300; run++) {
        std::vector<float> x(R * C);
        int kinds = run % 3 == 0 ? 9 : 6; // a third of the runs with NaN and infinities
        for (float &v : x)
            v = pool[rng() % kinds];
        check(x, "random");
    }
}

TEST(HloEval, VariadicReduceFoldOrder)
{
    // Two folds in one reduce over dims {0,2} of [2,3,4]: acc - x (order matters in float, and
    // for its sign) and the index of the element folded last: row-major over the reduced dims,
    // from the init values.
    const std::string text = R"(HloModule m
fold {
  acc = f32[] parameter(0)
  last = s32[] parameter(1)
  x = f32[] parameter(2)
  xi = s32[] parameter(3)
  d = f32[] subtract(acc, x)
  ROOT t = (f32[], s32[]) tuple(d, xi)
}
ENTRY main {
  a = f32[2,3,4] parameter(0)
  i = s32[2,3,4] parameter(1)
  k = f32[] constant(100000000)
  m = s32[] constant(-7)
  ROOT r = (f32[3], s32[3]) reduce(a, i, k, m), dimensions={0,2}, to_apply=fold
}
)";
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-4, 4);
    std::vector<double> a(24), ids(24);
    for (int n = 0; n < 24; n++) {
        a[n] = n % 5 == 0 ? 1 : u(rng); // the 1s vanish against 1e8 in float
        ids[n] = 1000 + (int)(rng() % 1000);
    }
    std::vector<double> want_v, want_i;
    for (int j = 0; j < 3; j++) {
        float acc = 1e8f;
        double last = -7;
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < 4; k++) {
                acc -= (float)a[(i * 3 + j) * 4 + k];
                last = ids[(i * 3 + j) * 4 + k];
            }
        want_v.push_back(acc);
        want_i.push_back(last);
    }
    Result r = run(text, {make(HLO_F32, {2, 3, 4}, a), make(HLO_S32, {2, 3, 4}, ids)});
    ASSERT_EQ(r.err, "");
    ASSERT_EQ(r.out.size(), 2u);
    EXPECT_EQ(r.types[1], HLO_S32);
    expect_same(r.out[0], want_v);
    expect_same(r.out[1], want_i);
    // With nothing to fold, the init values: reduce of a [2,0] array over dim 1.
    r = run(
        "HloModule m\n" +
            text.substr(text.find("fold {"), text.find("ENTRY") - text.find("fold {")) +
            "ENTRY main {\n  a = f32[2,0] parameter(0)\n  i = s32[2,0] parameter(1)\n"
            "  k = f32[] constant(1.5)\n  m = s32[] constant(-7)\n"
            "  ROOT r = (f32[2], s32[2]) reduce(a, i, k, m), dimensions={1}, to_apply=fold\n}\n",
        {make(HLO_F32, {2, 0}, {}), make(HLO_S32, {2, 0}, {})});
    ASSERT_EQ(r.err, "");
    expect_same(r.out[0], {1.5, 1.5});
    expect_same(r.out[1], {-7, -7});
}

} // namespace

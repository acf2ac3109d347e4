// test_fp.cpp - the float arithmetic's golden model (sim/fp.h) against an independent reference:
// every value read into a double exactly, the exact result computed in double, rounded to 24 or
// 8 significant bits by hand (floor and compare, round half to even) with the rules' flushing,
// overflow and NaN; then docs/isa.md's edge cases one by one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "sim/fp.h"
#include "tests/support/fp_values.h"

namespace
{

constexpr uint32_t kQNaN = TPUSIM_FP32_QNAN;
constexpr uint32_t kInf = 0x7f800000, kNegInf = 0xff800000, kNegZero = 0x80000000;
constexpr uint32_t kMax = 0x7f7fffff, kMinNormal = 0x00800000;

// An fp32 as the rules read it (a subnormal is a zero of its sign), exactly.
double value(uint32_t x)
{
    const double sign = x >> 31 ? -1.0 : 1.0;
    const uint32_t e = x >> 23 & 0xff, f = x & 0x7fffff;
    if (e == 255)
        return f ? NAN : sign * INFINITY;
    if (e == 0)
        return sign * 0.0;
    return sign * std::ldexp(double(f | 0x800000), int(e) - 150);
}

// v (exact) rounded to p significant bits, round half to even, as an fp32 bit pattern: below the
// smallest normal a zero of v's sign, from 2^128 on (after rounding) inf.
uint32_t round_to(double v, int p)
{
    if (std::isnan(v))
        return kQNaN;
    const uint32_t sign = std::signbit(v) ? kNegZero : 0;
    const double a = std::fabs(v);
    if (a == 0)
        return sign;
    if (std::isinf(a))
        return sign | kInf;
    int e;
    std::frexp(a, &e);
    e -= 1; // 2^e <= a < 2^(e+1)
    if (e < -126)
        return sign;
    const double m = std::ldexp(a, p - 1 - e); // in [2^(p-1), 2^p), exact
    double q = std::floor(m);
    const double rest = m - q;
    if (rest > 0.5 || (rest == 0.5 && std::fmod(q, 2.0) == 1.0))
        q += 1;
    if (q == std::ldexp(1.0, p)) {
        q /= 2;
        e += 1;
    }
    if (e > 127)
        return sign | kInf;
    return sign | uint32_t(e + 127) << 23 | (uint32_t(q) - (1u << (p - 1))) << (24 - p);
}

uint32_t ref_mul(uint16_t a, uint16_t w)
{
    return round_to(value(uint32_t(a) << 16) * value(uint32_t(w) << 16), 24); // product exact
}

uint32_t ref_add(uint32_t x, uint32_t y)
{
    const double a = value(x), b = value(y);
    const int ea = int(x >> 23 & 0xff), eb = int(y >> 23 & 0xff);
    // In double the sum is exact when the exponents are at most 28 apart (24 + 28 + 1 bits).
    // Farther apart the smaller is below a quarter of the larger's last place (or of its binade
    // below), so the larger is the result.
    if (std::isfinite(a) && std::isfinite(b) && a != 0 && b != 0 && std::abs(ea - eb) > 28)
        return round_to(std::fabs(a) > std::fabs(b) ? a : b, 24);
    return round_to(a + b, 24);
}

uint16_t ref_to_bf16(uint32_t x) { return uint16_t(round_to(value(x), 8) >> 16); }

// A total order of the values as read, -0 below +0.
int64_t order(uint32_t x)
{
    const int64_t mag = x >> 23 & 0xff ? x & 0x7fffffff : 0;
    return x >> 31 ? -mag - 1 : mag;
}

uint32_t ref_max(uint32_t x, uint32_t y)
{
    if (std::isnan(value(x)) || std::isnan(value(y)))
        return kQNaN;
    return round_to(value(order(x) >= order(y) ? x : y), 24);
}

uint32_t ref_relu(uint32_t x)
{
    if (std::isnan(value(x)))
        return kQNaN;
    return order(x) > 0 ? round_to(value(x), 24) : 0;
}

// ------------------------------------------------------------- against the reference --

TEST(FpReference, Bf16ToFp32AllValues)
{
    for (uint32_t a = 0; a < 0x10000; a++)
        ASSERT_EQ(tpusim_bf16_to_fp32(uint16_t(a)), round_to(value(a << 16), 24)) << std::hex << a;
}

// The product of normals depends on their exponents only through the sum: every bf16 a against
// every w of exponent 1, 127 and 254 (all fractions, both signs) meets every exponent sum with
// every pair of fractions; and zeros, subnormals, infs and NaNs on either side.
TEST(FpReference, Bf16MulEveryFractionPairAndExponentSum)
{
    std::vector<uint16_t> ws;
    for (uint32_t e : {1u, 127u, 254u})
        for (uint32_t sf = 0; sf < 0x100; sf++)
            ws.push_back(uint16_t((sf >> 7) << 15 | e << 7 | (sf & 0x7f)));
    for (uint32_t e : {0u, 255u})
        for (uint32_t sf : {0x00u, 0x01u, 0x40u, 0x7fu, 0x80u, 0xc0u})
            ws.push_back(uint16_t((sf >> 7) << 15 | e << 7 | (sf & 0x7f)));
    for (uint16_t w : ws)
        for (uint32_t a = 0; a < 0x10000; a++)
            ASSERT_EQ(tpusim_bf16_mul(uint16_t(a), w), ref_mul(uint16_t(a), w))
                << std::hex << a << " * " << w;
}

TEST(FpReference, Fp32AddRandom)
{
    tpu_rng r = {2024};
    for (int i = 0; i < 2000000; i++) {
        const uint32_t x = rng_fp32(&r), y = rng_fp32_near(&r, x);
        ASSERT_EQ(tpusim_fp32_add(x, y), ref_add(x, y)) << std::hex << x << " + " << y;
        ASSERT_EQ(tpusim_fp32_add(y, x), ref_add(x, y)) << std::hex << y << " + " << x;
    }
}

TEST(FpReference, Fp32AddEdgePairs)
{
    for (size_t i = 0; i < fp32_edge_count; i++)
        for (size_t j = 0; j < fp32_edge_count; j++) {
            const uint32_t x = fp32_edges[i], y = fp32_edges[j];
            ASSERT_EQ(tpusim_fp32_add(x, y), ref_add(x, y)) << std::hex << x << " + " << y;
        }
}

// Every bf16-sized upper half with the low halves that decide the rounding.
TEST(FpReference, Fp32ToBf16UpperHalvesWithEveryRoundingCase)
{
    for (uint32_t hi = 0; hi < 0x10000; hi++)
        for (uint32_t lo : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu, 0x5a5au})
            ASSERT_EQ(tpusim_fp32_to_bf16(hi << 16 | lo), ref_to_bf16(hi << 16 | lo))
                << std::hex << (hi << 16 | lo);
}

TEST(FpReference, Fp32MaxAndReluRandom)
{
    tpu_rng r = {7};
    for (int i = 0; i < 1000000; i++) {
        const uint32_t x = rng_fp32(&r), y = rng_fp32_near(&r, x);
        ASSERT_EQ(tpusim_fp32_max(x, y), ref_max(x, y)) << std::hex << x << ", " << y;
        ASSERT_EQ(tpusim_fp32_relu(x), ref_relu(x)) << std::hex << x;
    }
    for (size_t i = 0; i < fp32_edge_count; i++)
        for (size_t j = 0; j < fp32_edge_count; j++)
            ASSERT_EQ(tpusim_fp32_max(fp32_edges[i], fp32_edges[j]),
                      ref_max(fp32_edges[i], fp32_edges[j]));
}

// ------------------------------------------------------------------- edge cases --

TEST(FpEdges, Bf16SubnormalInputsReadAsSignedZeros)
{
    EXPECT_EQ(tpusim_bf16_to_fp32(0x0001), 0u);
    EXPECT_EQ(tpusim_bf16_to_fp32(0x807f), kNegZero);
    EXPECT_EQ(tpusim_bf16_mul(0x0040, 0x3f80), 0u);       // subnormal * 1
    EXPECT_EQ(tpusim_bf16_mul(0x0040, 0xbf80), kNegZero); // subnormal * -1
    EXPECT_EQ(tpusim_bf16_mul(0x8001, 0x7f80), kQNaN);    // subnormal * inf = 0 * inf
}

TEST(FpEdges, Bf16MulZeroTimesInfIsNaN)
{
    EXPECT_EQ(tpusim_bf16_mul(0x0000, 0x7f80), kQNaN);
    EXPECT_EQ(tpusim_bf16_mul(0xff80, 0x8000), kQNaN);
}

TEST(FpEdges, Bf16MulNaNPayloadsBecomeTheCanonicalNaN)
{
    for (uint16_t nan : {0x7fc0, 0xffc0, 0x7f81, 0xffff, 0x7fa5})
        for (uint16_t w : {0x0000, 0x3f80, 0x7f80, 0xff80, 0x7fc1}) {
            EXPECT_EQ(tpusim_bf16_mul(nan, w), kQNaN);
            EXPECT_EQ(tpusim_bf16_mul(w, nan), kQNaN);
        }
    EXPECT_EQ(tpusim_bf16_to_fp32(0xff81), kQNaN);
}

TEST(FpEdges, Bf16MulInfTimesFiniteIsSignedInf)
{
    EXPECT_EQ(tpusim_bf16_mul(0x7f80, 0x3f80), kInf);
    EXPECT_EQ(tpusim_bf16_mul(0x7f80, 0x8080), kNegInf); // times the smallest negative normal
    EXPECT_EQ(tpusim_bf16_mul(0xff80, 0xff80), kInf);
}

TEST(FpEdges, Bf16MulSignsAndZeros)
{
    EXPECT_EQ(tpusim_bf16_mul(0x8000, 0x3f80), kNegZero);
    EXPECT_EQ(tpusim_bf16_mul(0x8000, 0xbf80), 0u);
    EXPECT_EQ(tpusim_bf16_mul(0xc000, 0x4040), 0xc0c00000u); // -2 * 3 = -6
}

TEST(FpEdges, Bf16MulIsExact)
{
    // (255/128)^2 = 65025/16384: all 16 product bits kept.
    EXPECT_EQ(tpusim_bf16_mul(0x3fff, 0x3fff), 0x407e0100u);
    // The largest finite bf16 squared overflows; 2^63 * 2^64 is the largest power of two.
    EXPECT_EQ(tpusim_bf16_mul(0x7f7f, 0x7f7f), kInf);
    EXPECT_EQ(tpusim_bf16_mul(0x5f00, 0x5f80), 0x7f000000u);
    EXPECT_EQ(tpusim_bf16_mul(0xdf80, 0x5f80), kNegInf); // -2^64 * 2^64 = -2^128
}

TEST(FpEdges, Bf16MulBelowTheSmallestNormalIsASignedZero)
{
    EXPECT_EQ(tpusim_bf16_mul(0x2000, 0x2000), 0x00800000u); // 2^-63 * 2^-63 = 2^-126, kept
    EXPECT_EQ(tpusim_bf16_mul(0x2000, 0x1fff), 0u);          // just below 2^-126
    EXPECT_EQ(tpusim_bf16_mul(0xa000, 0x1f80), kNegZero);    // -2^-63 * 2^-64
    EXPECT_EQ(tpusim_bf16_mul(0x0080, 0x0080), 0u);          // smallest normals
}

TEST(FpEdges, Fp32AddSignedZeros)
{
    EXPECT_EQ(tpusim_fp32_add(kNegZero, kNegZero), kNegZero);
    EXPECT_EQ(tpusim_fp32_add(0, kNegZero), 0u);
    EXPECT_EQ(tpusim_fp32_add(kNegZero, 0), 0u);
    EXPECT_EQ(tpusim_fp32_add(kNegZero, 0x3f800000), 0x3f800000u);
    EXPECT_EQ(tpusim_fp32_add(0x80000001, kNegZero), kNegZero); // subnormal reads as -0
}

TEST(FpEdges, Fp32AddCancellationIsPositiveZero)
{
    for (uint32_t x : {0x3f800000u, kMax, kMinNormal, 0x12345678u})
        EXPECT_EQ(tpusim_fp32_add(x | kNegZero, x), 0u) << std::hex << x;
}

TEST(FpEdges, Fp32AddInfAndNaN)
{
    EXPECT_EQ(tpusim_fp32_add(kInf, kNegInf), kQNaN);
    EXPECT_EQ(tpusim_fp32_add(kNegInf, kInf), kQNaN);
    EXPECT_EQ(tpusim_fp32_add(kInf, kInf), kInf);
    EXPECT_EQ(tpusim_fp32_add(kNegInf, kMax), kNegInf);
    EXPECT_EQ(tpusim_fp32_add(0x7f800001, 0x3f800000), kQNaN);
    EXPECT_EQ(tpusim_fp32_add(0xffc00000, kInf), kQNaN);
}

TEST(FpEdges, Fp32AddSubnormalInputsReadAsZeros)
{
    EXPECT_EQ(tpusim_fp32_add(0x00000001, 0x00000001), 0u);
    EXPECT_EQ(tpusim_fp32_add(0x007fffff, kMinNormal), kMinNormal);
    EXPECT_EQ(tpusim_fp32_add(0x807fffff, 0x807fffff), kNegZero);
}

TEST(FpEdges, Fp32AddSubnormalResultIsASignedZero)
{
    EXPECT_EQ(tpusim_fp32_add(0x00c00000, 0x80800000), 0u);         // 1.5 * 2^-126 - 2^-126
    EXPECT_EQ(tpusim_fp32_add(0x80c00000, 0x00800000), kNegZero);   // its negation
    EXPECT_EQ(tpusim_fp32_add(0x00800001, 0x80800000), 0u);         // 2^-149
    EXPECT_EQ(tpusim_fp32_add(0x01000000, 0x80800000), kMinNormal); // 2^-125 - 2^-126, normal
}

TEST(FpEdges, Fp32AddRoundsTiesToEven)
{
    // 1 + 2^-24 is a tie between 1 and 1 + 2^-23: even is 1. 1 + 3 * 2^-24: even is 1 + 2^-22.
    EXPECT_EQ(tpusim_fp32_add(0x3f800000, 0x33800000), 0x3f800000u);
    EXPECT_EQ(tpusim_fp32_add(0x3f800001, 0x33800000), 0x3f800002u);
    // Just above the tie rounds up: the sticky bits count.
    EXPECT_EQ(tpusim_fp32_add(0x3f800000, 0x33800001), 0x3f800001u);
    // 2 - 2^-25: the exact difference lies a quarter ulp below 2 and rounds to 2.
    EXPECT_EQ(tpusim_fp32_add(0x40000000, 0xb3000000), 0x40000000u);
    // 2 - 3 * 2^-25 rounds to the largest float below 2.
    EXPECT_EQ(tpusim_fp32_add(0x40000000, 0xb3c00000), 0x3fffffffu);
}

TEST(FpEdges, Fp32AddFarApartKeepsTheLarger)
{
    EXPECT_EQ(tpusim_fp32_add(0x3f800000, 0x00800000), 0x3f800000u);
    EXPECT_EQ(tpusim_fp32_add(0xbf800000, 0x2f800000), 0xbf800000u); // -1 + 2^-32
}

TEST(FpEdges, Fp32AddOverflowRoundsToInf)
{
    // The largest finite plus half its ulp (2^103) is a tie that rounds to even: 2^128, inf.
    EXPECT_EQ(tpusim_fp32_add(kMax, 0x73000000), kInf);
    // Just below the tie stays finite.
    EXPECT_EQ(tpusim_fp32_add(kMax, 0x72ffffff), kMax);
    EXPECT_EQ(tpusim_fp32_add(0xff7fffff, 0xff7fffff), kNegInf);
}

TEST(FpEdges, Fp32ToBf16)
{
    EXPECT_EQ(tpusim_fp32_to_bf16(0x3f808000), 0x3f80);           // tie, even below
    EXPECT_EQ(tpusim_fp32_to_bf16(0x3f818000), 0x3f82);           // tie, even above
    EXPECT_EQ(tpusim_fp32_to_bf16(0x3f808001), 0x3f81);           // above the tie
    EXPECT_EQ(tpusim_fp32_to_bf16(0xbf807fff), 0xbf80);           // below the tie
    EXPECT_EQ(tpusim_fp32_to_bf16(kMax), 0x7f80);                 // overflows to inf
    EXPECT_EQ(tpusim_fp32_to_bf16(0x7f7f7fff), 0x7f7f);           // the largest finite bf16
    EXPECT_EQ(tpusim_fp32_to_bf16(0xff7f8000), 0xff80);           // tie to even: -inf
    EXPECT_EQ(tpusim_fp32_to_bf16(kMinNormal), 0x0080);           // the smallest normal
    EXPECT_EQ(tpusim_fp32_to_bf16(0x007fffff), 0x0000);           // subnormal
    EXPECT_EQ(tpusim_fp32_to_bf16(0x80400000), 0x8000);           // negative subnormal
    EXPECT_EQ(tpusim_fp32_to_bf16(0x7f800001), TPUSIM_BF16_QNAN); // NaN whose payload is all low
    EXPECT_EQ(tpusim_fp32_to_bf16(0xffc00000), TPUSIM_BF16_QNAN);
    EXPECT_EQ(tpusim_fp32_to_bf16(kNegInf), 0xff80);
    EXPECT_EQ(tpusim_fp32_to_bf16(kNegZero), 0x8000);
}

TEST(FpEdges, Fp32MaxOrdersZerosAndPropagatesNaN)
{
    EXPECT_EQ(tpusim_fp32_max(kNegZero, 0), 0u);
    EXPECT_EQ(tpusim_fp32_max(0, kNegZero), 0u);
    EXPECT_EQ(tpusim_fp32_max(kNegZero, kNegZero), kNegZero);
    EXPECT_EQ(tpusim_fp32_max(0x80000001, kNegZero), kNegZero); // subnormal reads as -0
    EXPECT_EQ(tpusim_fp32_max(0x00000001, kNegZero), 0u);       // +subnormal reads as +0
    EXPECT_EQ(tpusim_fp32_max(0xbf800000, 0xc0000000), 0xbf800000u);
    EXPECT_EQ(tpusim_fp32_max(kNegInf, kMax), kMax);
    EXPECT_EQ(tpusim_fp32_max(0x7fc00001, kInf), kQNaN);
    EXPECT_EQ(tpusim_fp32_max(kInf, 0xff800001), kQNaN);
}

TEST(FpEdges, Fp32ReluIsMaxWithPositiveZero)
{
    EXPECT_EQ(tpusim_fp32_relu(kNegZero), 0u);
    EXPECT_EQ(tpusim_fp32_relu(0xbf800000), 0u);
    EXPECT_EQ(tpusim_fp32_relu(kNegInf), 0u);
    EXPECT_EQ(tpusim_fp32_relu(kInf), kInf);
    EXPECT_EQ(tpusim_fp32_relu(0x00000001), 0u); // subnormal
    EXPECT_EQ(tpusim_fp32_relu(kMinNormal), kMinNormal);
    EXPECT_EQ(tpusim_fp32_relu(0xffc00001), kQNaN);
}

} // namespace

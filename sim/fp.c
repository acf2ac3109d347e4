/* fp.c - the bf16/fp32 arithmetic of docs/isa.md "Floating point (bf16)" (sim/fp.h), on the
 * host's IEEE binary32 arithmetic: round to nearest even, subnormals kept, evaluated in float
 * (FLT_EVAL_METHOD 0, as SSE does; never -ffast-math, whose FTZ/DAZ would change results). The
 * rules' flushing and NaN canonicalization are done here explicitly, so this is a reference
 * independent of the bit-level RTL (rtl/tpu_fp.vh). Why each native operation is exact where the
 * rules need it is said at the operation. */
#include <float.h>

#include "sim/fp.h"

#if FLT_EVAL_METHOD != 0 || defined(__FAST_MATH__)
#error "sim/fp.c needs float arithmetic evaluated in float, with IEEE subnormals"
#endif

#define SIGN 0x80000000u
#define EXP 0x7f800000u

static float f32(uint32_t x)
{
    union {
        uint32_t u;
        float f;
    } v = {x};
    return v.f;
}

static uint32_t bits(float f)
{
    union {
        float f;
        uint32_t u;
    } v = {f};
    return v.u;
}

static int is_nan(uint32_t x) { return (x & ~SIGN) > EXP; }

/* A subnormal as a zero of its sign: how every operation reads its inputs and writes results. */
static uint32_t ftz(uint32_t x) { return x & EXP ? x : x & SIGN; }

/* A native result as the rules return it. */
static uint32_t result(float r) { return r != r ? TPUSIM_FP32_QNAN : ftz(bits(r)); }

uint32_t tpusim_bf16_to_fp32(uint16_t a)
{
    const uint32_t x = (uint32_t)a << 16;
    return is_nan(x) ? TPUSIM_FP32_QNAN : ftz(x);
}

/* The exact product of two 8-bit significands has at most 16 bits, so the native multiply rounds
 * only outside the normal range. Above it, the product is inf exactly when the exact one is at
 * least 2^128 (anything smaller is representable). Below it, the rounded product stays below
 * 2^-126 (an exact product in [2^-127, 2^-126) is a multiple of 2^-142, so it cannot round up to
 * 2^-126) and is flushed with the product's sign. 0 * inf is NaN, NaN propagates. */
uint32_t tpusim_bf16_mul(uint16_t a, uint16_t w)
{
    return result(f32(tpusim_bf16_to_fp32(a)) * f32(tpusim_bf16_to_fp32(w)));
}

/* Normal operands are multiples of 2^-149, so a sum below 2^-126 is exactly representable (a
 * subnormal): flushing the native sum equals flushing the exact one. Rounding, overflow to inf,
 * inf - inf = NaN, x + (-x) = +0 and -0 + -0 = -0 are IEEE's round-to-nearest-even. */
uint32_t tpusim_fp32_add(uint32_t x, uint32_t y) { return result(f32(ftz(x)) + f32(ftz(y))); }

/* Round to nearest even at bit 16: adding 0x7fff plus the kept last bit carries into bit 16
 * exactly when the dropped half is above the tie, or a tie with an odd last bit. The carry may
 * run into the exponent, up to inf from the largest values, which is the right rounding; inf and
 * zeros have nothing to drop. */
uint16_t tpusim_fp32_to_bf16(uint32_t x)
{
    if (is_nan(x))
        return TPUSIM_BF16_QNAN;
    x = ftz(x);
    return (uint16_t)((x + 0x7fffu + (x >> 16 & 1u)) >> 16);
}

uint32_t tpusim_fp32_max(uint32_t x, uint32_t y)
{
    if (is_nan(x) || is_nan(y))
        return TPUSIM_FP32_QNAN;
    x = ftz(x);
    y = ftz(y);
    if (f32(x) != f32(y))
        return f32(x) > f32(y) ? x : y;
    return x & SIGN ? y : x; /* equal: the same bits, or -0 and +0 */
}

uint32_t tpusim_fp32_relu(uint32_t x) { return tpusim_fp32_max(x, 0); }

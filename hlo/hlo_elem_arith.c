/* hlo_elem_arith.c - the evaluator's arithmetic on one element, with XLA's semantics
 * (hlo_eval_internal.h): float ops in float for f16, bf16 and f32 (each result rounded to the
 * element type when stored), in double for f64; integer ops exact modulo 2^bits. */
#include "hlo/hlo_eval_internal.h"

#include <float.h>
#include <stdint.h>
#include <tgmath.h> /* exp(x) is expf for a float x: one body serves float and double */

/* The float ops of one precision T (subnormals are flushed around them: he_binop). XLA's
 * maximum and minimum are IEEE 754-2019's: NaN propagates and -0 < +0. sign keeps NaN and
 * signed zeros; logistic 1 / (1 + e^-x) tends to 0 and 1 without a NaN. */
#define FLOAT_OPS(T)                                               \
    static T max_##T(T x, T y)                                     \
    {                                                              \
        if (isnan(x) || isnan(y))                                  \
            return (T)NAN;                                         \
        return x > y || (x == y && !signbit(x)) ? x : y;           \
    }                                                              \
    static T min_##T(T x, T y)                                     \
    {                                                              \
        if (isnan(x) || isnan(y))                                  \
            return (T)NAN;                                         \
        return x < y || (x == y && signbit(x)) ? x : y;            \
    }                                                              \
    static T binary_##T(hlo_opcode op, T x, T y)                   \
    {                                                              \
        switch (op) {                                              \
        case HLO_OP_ADD: return x + y;                             \
        case HLO_OP_SUBTRACT: return x - y;                        \
        case HLO_OP_MULTIPLY: return x * y;                        \
        case HLO_OP_DIVIDE: return x / y;                          \
        case HLO_OP_REMAINDER: return fmod(x, y);                  \
        case HLO_OP_POWER: return pow(x, y);                       \
        case HLO_OP_ATAN2: return atan2(x, y);                     \
        case HLO_OP_MAXIMUM: return max_##T(x, y);                 \
        default: /* minimum */ return min_##T(x, y);               \
        }                                                          \
    }                                                              \
    static T unary_##T(hlo_opcode op, T x)                         \
    {                                                              \
        switch (op) {                                              \
        case HLO_OP_NEGATE: return -x;                             \
        case HLO_OP_ABS: return fabs(x);                           \
        case HLO_OP_SIGN: return x > 0 ? (T)1 : x < 0 ? (T)-1 : x; \
        case HLO_OP_FLOOR: return floor(x);                        \
        case HLO_OP_CEIL: return ceil(x);                          \
        case HLO_OP_ROUND_NEAREST_AFZ: return round(x);            \
        case HLO_OP_ROUND_NEAREST_EVEN: return nearbyint(x);       \
        case HLO_OP_EXPONENTIAL: return exp(x);                    \
        case HLO_OP_EXPONENTIAL_MINUS_ONE: return expm1(x);        \
        case HLO_OP_LOG: return log(x);                            \
        case HLO_OP_LOG_PLUS_ONE: return log1p(x);                 \
        case HLO_OP_LOGISTIC: return (T)1 / ((T)1 + exp(-x));      \
        case HLO_OP_TANH: return tanh(x);                          \
        case HLO_OP_SQRT: return sqrt(x);                          \
        case HLO_OP_RSQRT: return (T)1 / sqrt(x);                  \
        case HLO_OP_CBRT: return cbrt(x);                          \
        case HLO_OP_ERF: return erf(x);                            \
        case HLO_OP_SINE: return sin(x);                           \
        case HLO_OP_COSINE: return cos(x);                         \
        default: /* tan */ return tan(x);                          \
        }                                                          \
    }

FLOAT_OPS(float)
FLOAT_OPS(double)

/* Integers as their values (u64 as its bits) and results as uint64, stored by their low bits:
 * arithmetic modulo 2^64 without signed overflow, which wraps to the type by truncation. */
static bool less(hlo_type t, int64_t x, int64_t y)
{
    return t == HLO_U64 ? (uint64_t)x < (uint64_t)y : x < y;
}

/* x^y as XLA's CPU backend computes it: by squaring over the exponent's low 6 bits (any
 * larger exponent overflows but for the bases 0, 1 and -1); an exponent with its sign bit set
 * (also in an unsigned type) gives 0, but 1 for the base 1 and +-1 for the base with every bit
 * set (-1, also in an unsigned type). */
static uint64_t int_power(hlo_type t, int64_t x, int64_t y)
{
    uint64_t r = 1, b = (uint64_t)x;
    for (int i = 0; i < 6; i++, b *= b)
        if ((uint64_t)y >> i & 1)
            r *= b;
    const int bits = he_bits(t);
    const uint64_t mask = bits == 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
    if (!((uint64_t)y >> (bits - 1) & 1))
        return r;
    return x == 1 ? 1 : ((uint64_t)x & mask) == mask ? (y & 1 ? mask : 1) : 0;
}

/* Shifts as XLA: the amount is unsigned, and one of at least the type's bits gives 0, or the
 * sign bit in every bit for an arithmetic right shift, which takes the top bit as the sign also
 * in an unsigned type. */
static uint64_t shift(hlo_opcode op, hlo_type t, int64_t x, int64_t y)
{
    const int b = he_bits(t);
    const uint64_t mask = b == 64 ? ~(uint64_t)0 : ((uint64_t)1 << b) - 1, n = (uint64_t)y & mask;
    const bool neg = (uint64_t)x >> (b - 1) & 1;
    switch (op) {
    case HLO_OP_SHIFT_LEFT: return n >= (uint64_t)b ? 0 : (uint64_t)x << n;
    case HLO_OP_SHIFT_RIGHT_LOGICAL: return n >= (uint64_t)b ? 0 : ((uint64_t)x & mask) >> n;
    default: { /* arithmetic: on x sign-extended from its top bit */
        const uint64_t sx = neg ? (uint64_t)x | ~mask : (uint64_t)x & mask;
        if (n >= (uint64_t)b)
            return neg ? ~(uint64_t)0 : 0;
        return neg ? ~(~sx >> n) : sx >> n;
    }
    }
}

/* Division and remainder as XLA: x / 0 is -1 (all bits set) and x % 0 is x; signed INT_MIN / -1
 * wraps to INT_MIN and INT_MIN % -1 is 0. */
static uint64_t divide(hlo_opcode op, hlo_type t, int64_t x, int64_t y)
{
    const bool rem = op == HLO_OP_REMAINDER;
    if (y == 0)
        return rem ? (uint64_t)x : ~(uint64_t)0;
    if (he_is_unsigned(t))
        return rem ? (uint64_t)x % (uint64_t)y : (uint64_t)x / (uint64_t)y;
    if (y == -1)
        return rem ? 0 : -(uint64_t)x;
    return rem ? (uint64_t)(x % y) : (uint64_t)(x / y);
}

static uint64_t int_binary(hlo_opcode op, hlo_type t, int64_t x, int64_t y)
{
    switch (op) {
    case HLO_OP_ADD: return (uint64_t)x + (uint64_t)y;
    case HLO_OP_SUBTRACT: return (uint64_t)x - (uint64_t)y;
    case HLO_OP_MULTIPLY: return (uint64_t)x * (uint64_t)y;
    case HLO_OP_DIVIDE:
    case HLO_OP_REMAINDER: return divide(op, t, x, y);
    case HLO_OP_POWER: return int_power(t, x, y);
    case HLO_OP_MAXIMUM: return (uint64_t)(less(t, x, y) ? y : x);
    case HLO_OP_MINIMUM: return (uint64_t)(less(t, y, x) ? y : x);
    case HLO_OP_AND: return (uint64_t)(x & y);
    case HLO_OP_OR: return (uint64_t)(x | y);
    case HLO_OP_XOR: return (uint64_t)(x ^ y);
    default: return shift(op, t, x, y);
    }
}

static uint64_t int_unary(hlo_opcode op, hlo_type t, int64_t x)
{
    const int b = he_bits(t);
    const uint64_t u = b == 64 ? (uint64_t)x : (uint64_t)x & (((uint64_t)1 << b) - 1);
    switch (op) {
    case HLO_OP_NEGATE: return -(uint64_t)x;
    case HLO_OP_ABS: return x < 0 && !he_is_unsigned(t) ? -(uint64_t)x : (uint64_t)x;
    case HLO_OP_SIGN: return he_is_unsigned(t) ? x != 0 : (uint64_t)((x > 0) - (x < 0));
    case HLO_OP_NOT: return t == HLO_PRED ? !x : ~(uint64_t)x; /* pred is logical */
    case HLO_OP_POPCNT: {
        uint64_t n = 0;
        for (uint64_t v = u; v; v &= v - 1)
            n++;
        return n;
    }
    default: { /* count-leading-zeros */
        uint64_t n = (uint64_t)b;
        for (uint64_t v = u; v; v >>= 1)
            n--;
        return n;
    }
    }
}

/* XLA's CPU backend runs with subnormals flushed to zero (the FTZ and DAZ modes): subnormal
 * operands of arithmetic read as zero of their sign and subnormal results are zero. Negate and
 * abs only touch the sign bit; XLA's remainder returns x itself when |x| < |y| (unflushed: only
 * y is flushed); power and atan2 read their operands' bits (only the result is flushed). */
typedef enum { FLUSH_ALL, FLUSH_NONE, FLUSH_Y, FLUSH_RESULT } flushing;

static flushing flushes(hlo_opcode op)
{
    switch (op) {
    case HLO_OP_NEGATE:
    case HLO_OP_ABS: return FLUSH_NONE;
    case HLO_OP_REMAINDER: return FLUSH_Y;
    case HLO_OP_POWER:
    case HLO_OP_ATAN2: return FLUSH_RESULT;
    default: return FLUSH_ALL;
    }
}

double he_flush(hlo_type t, double v)
{
    return fabs(v) < (t == HLO_F64 ? DBL_MIN : FLT_MIN) ? copysign(0.0, v) : v;
}

void he_binop(hlo_opcode op, hlo_array *o, int64_t oi, const hlo_array *a, int64_t ai,
              const hlo_array *b, int64_t bi)
{
    const hlo_type t = a->shape.type;
    if (!hlo_is_float(t)) {
        he_seti(o, oi, (int64_t)int_binary(op, t, he_geti(a, ai), he_geti(b, bi)));
        return;
    }
    const flushing f = flushes(op);
    double x = hlo_array_get(a, ai), y = hlo_array_get(b, bi);
    if (f == FLUSH_ALL)
        x = he_flush(t, x);
    if (f == FLUSH_ALL || f == FLUSH_Y)
        y = he_flush(t, y);
    double r = t == HLO_F64 ? binary_double(op, x, y) : binary_float(op, (float)x, (float)y);
    hlo_array_set(o, oi, f == FLUSH_ALL || f == FLUSH_RESULT ? he_flush(t, r) : r);
}

void he_unop(hlo_opcode op, hlo_array *o, int64_t oi, const hlo_array *a, int64_t ai)
{
    const hlo_type t = a->shape.type;
    if (!hlo_is_float(t)) {
        he_seti(o, oi, (int64_t)int_unary(op, t, he_geti(a, ai)));
        return;
    }
    const bool f = flushes(op) == FLUSH_ALL;
    double x = f ? he_flush(t, hlo_array_get(a, ai)) : hlo_array_get(a, ai);
    double r = t == HLO_F64 ? unary_double(op, x) : unary_float(op, (float)x);
    hlo_array_set(o, oi, f ? he_flush(t, r) : r);
}

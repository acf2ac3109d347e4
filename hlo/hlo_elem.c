/* hlo_elem.c - the evaluator's element types: reading and writing elements of every type
 * (f16 and bf16 as their bit patterns), conversions between types, comparisons, and the
 * dispatch of the ops computed element by element (the arithmetic is hlo_elem_arith.c). */
#include "hlo/hlo_eval_internal.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* A 16-bit float with mbits mantissa and ebits exponent bits (f16 10 and 5, bf16 7 and 8). */
#define F16_FORMAT 10, 5
#define BF16_FORMAT 7, 8

/* v rounded to nearest even into the format, NaN kept as a quiet NaN of the same sign. */
static uint16_t half_bits(double v, int mbits, int ebits)
{
    const uint32_t sign = signbit(v) ? 1u << (mbits + ebits) : 0;
    const uint32_t inf = ((1u << ebits) - 1) << mbits;
    const int bias = (1 << (ebits - 1)) - 1;
    if (isnan(v))
        return (uint16_t)(sign | inf | 1u << (mbits - 1));
    if (v == 0)
        return (uint16_t)sign;
    v = fabs(v);
    int e;
    frexp(v, &e);
    /* The exponent of v's leading bit, or the smallest normal one (subnormals: a fixed step). */
    int exp = e - 1 < 1 - bias ? 1 - bias : e - 1;
    /* v in steps of its last mantissa bit: an exact scaling; rint rounds to nearest even. A
     * carry out of the mantissa moves into the exponent field by the addition below. */
    double sig = isinf(v) ? 0 : rint(ldexp(v, mbits - exp));
    uint64_t bits = ((uint64_t)(exp + bias - 1) << mbits) + (uint64_t)sig;
    return (uint16_t)(sign | (isinf(v) || bits >= inf ? inf : (uint32_t)bits));
}

static double half_value(uint16_t h, int mbits, int ebits)
{
    const uint32_t m = h & ((1u << mbits) - 1), e = (uint32_t)h >> mbits & ((1u << ebits) - 1);
    const int bias = (1 << (ebits - 1)) - 1;
    double v = e == 0                   ? ldexp(m, 1 - bias - mbits)
               : e == (1u << ebits) - 1 ? (m ? NAN : INFINITY)
                                        : ldexp(m | 1u << mbits, (int)e - bias - mbits);
    return h >> (mbits + ebits) ? -v : v;
}

uint16_t hlo_bf16_bits(double v) { return half_bits(v, BF16_FORMAT); }

double hlo_bf16_value(uint16_t h) { return half_value(h, BF16_FORMAT); }

double hlo_array_get(const hlo_array *a, int64_t i)
{
    switch (a->shape.type) {
    case HLO_F32: return ((const float *)a->data)[i];
    case HLO_F64: return ((const double *)a->data)[i];
    case HLO_F16: return half_value(((const uint16_t *)a->data)[i], F16_FORMAT);
    case HLO_BF16: return hlo_bf16_value(((const uint16_t *)a->data)[i]);
    case HLO_U64: return (double)(uint64_t)he_geti(a, i);
    default: return (double)he_geti(a, i);
    }
}

void hlo_array_set(hlo_array *a, int64_t i, double v)
{
    switch (a->shape.type) {
    case HLO_F32: ((float *)a->data)[i] = (float)v; break;
    case HLO_F64: ((double *)a->data)[i] = v; break;
    case HLO_F16: ((uint16_t *)a->data)[i] = half_bits(v, F16_FORMAT); break;
    case HLO_BF16: ((uint16_t *)a->data)[i] = hlo_bf16_bits(v); break;
    case HLO_U64: he_seti(a, i, (int64_t)(uint64_t)v); break;
    default: he_seti(a, i, (int64_t)v); break;
    }
}

int64_t he_geti(const hlo_array *a, int64_t i)
{
    const void *d = a->data;
    switch (a->shape.type) {
    case HLO_S8: return ((const int8_t *)d)[i];
    case HLO_S16:
    case HLO_F16:
    case HLO_BF16: return ((const int16_t *)d)[i];
    case HLO_S32:
    case HLO_F32: return ((const int32_t *)d)[i];
    case HLO_S64:
    case HLO_U64:
    case HLO_F64: return ((const int64_t *)d)[i];
    case HLO_U16: return ((const uint16_t *)d)[i];
    case HLO_U32: return ((const uint32_t *)d)[i];
    default: /* u8, pred */ return ((const uint8_t *)d)[i];
    }
}

void he_seti(hlo_array *a, int64_t i, int64_t v)
{
    void *d = a->data;
    switch (a->shape.type) {
    case HLO_PRED: ((uint8_t *)d)[i] = v != 0; break;
    case HLO_S8:
    case HLO_U8: ((uint8_t *)d)[i] = (uint8_t)v; break;
    case HLO_S16:
    case HLO_U16:
    case HLO_F16:
    case HLO_BF16: ((uint16_t *)d)[i] = (uint16_t)v; break;
    case HLO_S32:
    case HLO_U32:
    case HLO_F32: ((uint32_t *)d)[i] = (uint32_t)v; break;
    default: /* s64, u64, f64 */ ((uint64_t *)d)[i] = (uint64_t)v; break;
    }
}

int he_bits(hlo_type t)
{
    switch (t) {
    case HLO_PRED: return 1;
    case HLO_S8:
    case HLO_U8: return 8;
    case HLO_S16:
    case HLO_U16:
    case HLO_F16:
    case HLO_BF16: return 16;
    case HLO_S32:
    case HLO_U32:
    case HLO_F32: return 32;
    default: return 64;
    }
}

bool he_is_unsigned(hlo_type t) { return t >= HLO_U8 && t <= HLO_U64; }

int64_t he_wrap(hlo_type t, int64_t v)
{
    const int b = he_bits(t);
    if (t == HLO_PRED)
        return v != 0;
    if (b == 64)
        return v;
    const uint64_t u = (uint64_t)v & (((uint64_t)1 << b) - 1), sign = (uint64_t)1 << (b - 1);
    /* Signed: minus 2^b when the sign bit is set, as (u ^ sign) - sign, without overflow. */
    return he_is_unsigned(t) ? (int64_t)u : (int64_t)(u ^ sign) - (int64_t)sign;
}

/* Float to integer type t: truncated toward zero and saturated, NaN giving 0 (XLA's CPU
 * backend). 2^(bits-1) and 2^bits are exact doubles, so the bounds compare exactly. */
static int64_t float_to_int(hlo_type t, double v)
{
    const int b = he_bits(t);
    const bool uns = he_is_unsigned(t);
    const double hi = ldexp(1, uns ? b : b - 1), lo = uns ? 0 : -hi;
    if (isnan(v))
        return 0;
    if (v >= hi) /* the largest value: its bits, which he_seti stores (u64: all bits set) */
        return uns ? -1 : (int64_t)(((uint64_t)1 << (b - 1)) - 1);
    if (v <= lo)
        return (int64_t)lo;
    return uns && b == 64 ? (int64_t)(uint64_t)v : (int64_t)v;
}

/* o[i] = convert(a[i]). Integers wrap; integers round to nearest into floats, through f32 for
 * f16 and bf16 (as XLA), directly for f32 and f64; f64 to f16 and bf16 rounds through f32 too,
 * as XLA's CPU backend does; to pred is x != 0. */
static void convert(const hlo_array *a, hlo_array *o, int64_t i)
{
    hlo_type from = a->shape.type, to = o->shape.type;
    if (!hlo_is_float(from)) {
        const int64_t x = he_geti(a, i);
        if (!hlo_is_float(to))
            he_seti(o, i, x); /* low bits: wraps; pred takes x != 0 */
        else if (to == HLO_F64)
            hlo_array_set(o, i, from == HLO_U64 ? (double)(uint64_t)x : (double)x);
        else
            hlo_array_set(o, i, from == HLO_U64 ? (float)(uint64_t)x : (float)x);
        return;
    }
    /* Subnormals flushed as arithmetic reads them, but for bf16 to f32 (a shift of the bits)
     * and to pred (XLA tests the bits). */
    const double v = from == HLO_BF16 && (to == HLO_F32 || to == HLO_PRED)
                         ? hlo_array_get(a, i)
                         : he_flush(from, hlo_array_get(a, i));
    if (to == HLO_PRED)
        he_seti(o, i, v != 0);
    else if (!hlo_is_float(to))
        he_seti(o, i, float_to_int(to, v));
    else
        hlo_array_set(o, i, from == HLO_F64 && he_bits(to) == 16 ? (double)(float)v : v);
}

/* -1, 0 or 1 as a[i] is below, equal to or above b[i], or 2 when they are unordered (a NaN).
 * total: XLA's total order of floats, -NaN < -inf < ... < -0 < +0 < ... < inf < NaN, which is
 * the order of the sign-magnitude bit patterns read as two's complement with the magnitude
 * bits of negative ones flipped. */
static int order(const hlo_array *a, const hlo_array *b, int64_t i, bool total)
{
    hlo_type t = a->shape.type;
    if (hlo_is_float(t) && !total) {
        double x = he_flush(t, hlo_array_get(a, i)), y = he_flush(t, hlo_array_get(b, i));
        return isnan(x) || isnan(y) ? 2 : (x > y) - (x < y);
    }
    int64_t x = he_geti(a, i), y = he_geti(b, i);
    if (hlo_is_float(t)) {
        const int64_t mag = (int64_t)(((uint64_t)1 << (he_bits(t) - 1)) - 1);
        x = x < 0 ? x ^ mag : x;
        y = y < 0 ? y ^ mag : y;
    }
    if (t == HLO_U64)
        return ((uint64_t)x > (uint64_t)y) - ((uint64_t)x < (uint64_t)y);
    return (x > y) - (x < y);
}

static bool compare(hlo_cmp d, int ord)
{
    switch (d) {
    case HLO_CMP_EQ: return ord == 0;
    case HLO_CMP_NE: return ord != 0;
    case HLO_CMP_LT: return ord == -1;
    case HLO_CMP_LE: return ord == -1 || ord == 0;
    case HLO_CMP_GT: return ord == 1;
    default: return ord == 1 || ord == 0;
    }
}

void he_copy(hlo_array *o, int64_t oi, const hlo_array *a, int64_t ai)
{
    he_seti(o, oi, he_geti(a, ai));
}

void he_elementwise(const hlo_instr *in, const hlo_array *const *ops, hlo_array *o)
{
    const int64_t n = o->shape.elements;
    const hlo_array *a = in->n_operands ? ops[0] : NULL;
    switch (in->opcode) {
    case HLO_OP_IOTA: {
        int64_t idx[HLO_MAX_RANK] = {0};
        for (int64_t i = 0; i < n; i++) {
            if (hlo_is_float(o->shape.type))
                hlo_array_set(o, i, (double)idx[in->iota_dimension]);
            else
                he_seti(o, i, idx[in->iota_dimension]);
            he_odometer(idx, o->shape.dims, o->shape.rank);
        }
        return;
    }
    case HLO_OP_COMPARE:
        for (int64_t i = 0; i < n; i++)
            he_seti(o, i, compare(in->comparison_direction, order(a, ops[1], i, in->total_order)));
        return;
    case HLO_OP_SELECT:
        for (int64_t i = 0; i < n; i++)
            he_copy(o, i, he_geti(a, a->shape.rank ? i : 0) ? ops[1] : ops[2], i);
        return;
    case HLO_OP_CONVERT:
        for (int64_t i = 0; i < n; i++)
            convert(a, o, i);
        return;
    case HLO_OP_IS_FINITE:
        for (int64_t i = 0; i < n; i++)
            he_seti(o, i, isfinite(hlo_array_get(a, i)));
        return;
    case HLO_OP_CLAMP: /* min(max(x, lo), hi); the bounds may be scalars */
        for (int64_t i = 0; i < n; i++) {
            he_binop(HLO_OP_MAXIMUM, o, i, ops[1], i, a, a->shape.rank ? i : 0);
            he_binop(HLO_OP_MINIMUM, o, i, o, i, ops[2], ops[2]->shape.rank ? i : 0);
        }
        return;
    default:
        if (in->n_operands == 2)
            for (int64_t i = 0; i < n; i++)
                he_binop(in->opcode, o, i, a, i, ops[1], i);
        else
            for (int64_t i = 0; i < n; i++)
                he_unop(in->opcode, o, i, a, i);
        return;
    }
}

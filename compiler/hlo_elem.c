/* hlo_elem.c - the evaluator's element types and element-wise ops: reading and writing
 * elements, XLA's scalar semantics (rounding, wrapping, NaN), and the ops computed element by
 * element (hlo_eval_internal.h). */
#include "compiler/hlo_eval_internal.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

double he_get(const hlo_array *a, int64_t i)
{
    switch (a->shape.type) {
    case HLO_F32: return ((const float *)a->data)[i];
    case HLO_S32: return ((const int32_t *)a->data)[i];
    case HLO_S8: return ((const int8_t *)a->data)[i];
    default: /* u8, pred */ return ((const uint8_t *)a->data)[i];
    }
}

void he_set(hlo_array *a, int64_t i, double v)
{
    switch (a->shape.type) {
    case HLO_F32: ((float *)a->data)[i] = (float)v; break;
    case HLO_S32: ((int32_t *)a->data)[i] = (int32_t)v; break;
    case HLO_S8: ((int8_t *)a->data)[i] = (int8_t)v; break;
    default: ((uint8_t *)a->data)[i] = (uint8_t)v; break;
    }
}

int64_t he_wrap(hlo_type t, int64_t v)
{
    uint64_t u = (uint64_t)v;
    switch (t) {
    case HLO_S32: return (int64_t)(u & 0xffffffffu) - (int64_t)((u & 0x80000000u) << 1);
    case HLO_S8: return (int64_t)(u & 0xffu) - (int64_t)((u & 0x80u) << 1);
    case HLO_U8: return (int64_t)(u & 0xffu);
    default: return v != 0;
    }
}

bool he_is_float(hlo_type t) { return t == HLO_F32; }

double he_binop(hlo_opcode op, hlo_type t, double a, double b)
{
    if (he_is_float(t)) {
        float x = (float)a, y = (float)b;
        switch (op) {
        case HLO_OP_ADD: return x + y;
        case HLO_OP_SUBTRACT: return x - y;
        case HLO_OP_MULTIPLY: return x * y;
        case HLO_OP_DIVIDE: return x / y;
        case HLO_OP_MAXIMUM: /* XLA's maximum and minimum propagate NaN */
            return isnan(x) || isnan(y) ? NAN : x > y ? x : y;
        default: return isnan(x) || isnan(y) ? NAN : x < y ? x : y;
        }
    }
    int64_t x = (int64_t)a, y = (int64_t)b, r; /* 32-bit values: no int64 overflow below */
    switch (op) {
    case HLO_OP_ADD: r = x + y; break;
    case HLO_OP_SUBTRACT: r = x - y; break;
    case HLO_OP_MULTIPLY: r = x * y; break;
    case HLO_OP_DIVIDE: /* XLA: x / 0 is -1 (all bits set); INT_MIN / -1 wraps to INT_MIN */
        r = y ? x / y : -1;
        break;
    case HLO_OP_MAXIMUM: r = x > y ? x : y; break;
    default: r = x < y ? x : y; break;
    }
    return (double)he_wrap(t, r);
}

/* and, or, xor: bitwise on integers, which on pred's 0 and 1 is logical. */
static double bitop(hlo_opcode op, hlo_type t, double a, double b)
{
    int64_t x = (int64_t)a, y = (int64_t)b;
    return (double)he_wrap(t, op == HLO_OP_AND ? x & y : op == HLO_OP_OR ? x | y : x ^ y);
}

/* An f32's place in the total order, as an integer: the sign-magnitude bits made monotonic. */
static double total_order_key(double v)
{
    const float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (double)(u & 0x80000000u ? ~u : u | 0x80000000u);
}

static bool compare(hlo_cmp d, double a, double b)
{
    switch (d) {
    case HLO_CMP_EQ: return a == b;
    case HLO_CMP_NE: return a != b;
    case HLO_CMP_LT: return a < b;
    case HLO_CMP_LE: return a <= b;
    case HLO_CMP_GT: return a > b;
    default: return a >= b;
    }
}

static double convert(hlo_type from, hlo_type to, double v)
{
    if (to == HLO_PRED)
        return v != 0;
    if (he_is_float(to))
        return (float)v;
    if (he_is_float(from)) { /* truncate toward zero, saturate, NaN -> 0 */
        double lo = to == HLO_S32 ? -2147483648.0 : to == HLO_S8 ? -128 : 0;
        double hi = to == HLO_S32 ? 2147483647.0 : to == HLO_S8 ? 127 : 255;
        return isnan(v) ? 0 : v < lo ? lo : v > hi ? hi : trunc(v);
    }
    return (double)he_wrap(to, (int64_t)v);
}

void he_elementwise(const hlo_instr *in, const hlo_array *const *ops, hlo_array *o)
{
    hlo_type t = o->shape.type;
    int64_t n = o->shape.elements;
    const hlo_array *a = in->n_operands ? ops[0] : NULL;
    switch (in->opcode) {
    case HLO_OP_ADD:
    case HLO_OP_SUBTRACT:
    case HLO_OP_MULTIPLY:
    case HLO_OP_DIVIDE:
    case HLO_OP_MAXIMUM:
    case HLO_OP_MINIMUM:
        for (int64_t i = 0; i < n; i++)
            he_set(o, i, he_binop(in->opcode, t, he_get(a, i), he_get(ops[1], i)));
        return;
    case HLO_OP_NEGATE:
        for (int64_t i = 0; i < n; i++)
            he_set(o, i,
                   he_is_float(t) ? -(float)he_get(a, i)
                                  : (double)he_wrap(t, -(int64_t)he_get(a, i)));
        return;
    case HLO_OP_AND:
    case HLO_OP_OR:
    case HLO_OP_XOR:
        for (int64_t i = 0; i < n; i++)
            he_set(o, i, bitop(in->opcode, t, he_get(a, i), he_get(ops[1], i)));
        return;
    case HLO_OP_NOT: /* ~ on pred's 1 would be -2, still true: pred is logical */
        for (int64_t i = 0; i < n; i++)
            he_set(o, i,
                   t == HLO_PRED ? he_get(a, i) == 0 : (double)he_wrap(t, ~(int64_t)he_get(a, i)));
        return;
    case HLO_OP_IOTA: {
        int64_t idx[HLO_MAX_RANK] = {0};
        for (int64_t i = 0; i < n; i++) {
            he_set(o, i, convert(HLO_S64, t, (double)idx[in->iota_dimension]));
            he_odometer(idx, o->shape.dims, o->shape.rank);
        }
        return;
    }
    case HLO_OP_EXPONENTIAL:
    case HLO_OP_LOG:
        for (int64_t i = 0; i < n; i++) {
            float x = (float)he_get(a, i);
            he_set(o, i, in->opcode == HLO_OP_LOG ? logf(x) : expf(x));
        }
        return;
    case HLO_OP_COMPARE:
        for (int64_t i = 0; i < n; i++) {
            double x = he_get(a, i), y = he_get(ops[1], i);
            if (in->total_order && he_is_float(a->shape.type)) {
                x = total_order_key(x);
                y = total_order_key(y);
            }
            he_set(o, i, compare(in->comparison_direction, x, y));
        }
        return;
    case HLO_OP_SELECT:
        for (int64_t i = 0; i < n; i++)
            he_set(o, i,
                   he_get(a, a->shape.rank ? i : 0) != 0 ? he_get(ops[1], i) : he_get(ops[2], i));
        return;
    case HLO_OP_CLAMP: /* min(max(x, lo), hi) as XLA, NaN propagating */
        for (int64_t i = 0; i < n; i++) {
            const double lo = he_get(a, a->shape.rank ? i : 0);
            const double hi = he_get(ops[2], ops[2]->shape.rank ? i : 0);
            he_set(o, i,
                   he_binop(HLO_OP_MINIMUM, t, he_binop(HLO_OP_MAXIMUM, t, he_get(ops[1], i), lo),
                            hi));
        }
        return;
    case HLO_OP_CONVERT:
        for (int64_t i = 0; i < n; i++)
            he_set(o, i, convert(a->shape.type, t, he_get(a, i)));
        return;
    default: /* is-finite, the only other op hlo_check lets through */
        for (int64_t i = 0; i < n; i++)
            he_set(o, i, isfinite(he_get(a, i)));
        return;
    }
}

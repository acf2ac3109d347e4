/* hlo_check_elem.c - shape and type checking of the element-wise ops (hlo_check_internal.h),
 * after XLA's shape_inference.cc: operands of the result's shape, float functions on floats,
 * bit operations on integers, compare and is-finite giving pred, clamp's bounds scalars or of
 * the operand's shape. */
#include "hlo/hlo_check_internal.h"

int hc_check_elementwise(checker *k)
{
    if (hc_arity(k) || hc_need_array(k, &k->in->shape, "the result"))
        return -1;
    for (int i = 0; i < k->in->n_operands; i++) {
        const hlo_shape *s = hc_operand(k, i);
        if (!hlo_shape_equal(s, &k->in->shape)) {
            shape_strs t = hc_strs(s, &k->in->shape);
            return hc_fail(k, "operand %d has shape %s but the result has %s", i, t.a, t.b);
        }
    }
    return 0;
}

/* The float functions and atan2. */
static int check_float(checker *k)
{
    if (hc_check_elementwise(k))
        return -1;
    if (!hlo_is_float(k->in->shape.type))
        return hc_fail(k, "element type %s is not floating point",
                       hlo_type_name(k->in->shape.type));
    return 0;
}

/* and, or, xor and not: logical on pred, bitwise on integers. */
static int check_logical(checker *k)
{
    if (hc_check_elementwise(k))
        return -1;
    hlo_type t = k->in->shape.type;
    if (t != HLO_PRED && !hc_is_int(t))
        return hc_fail(k, "element type %s is not pred or integral", hlo_type_name(t));
    return 0;
}

static int check_iota(checker *k)
{
    const hlo_shape *s = &k->in->shape;
    if (hc_arity(k) || hc_need_array(k, s, "the result"))
        return -1;
    if (s->rank == 0)
        return hc_fail(k, "the result must not be a scalar");
    if (k->in->iota_dimension < 0)
        return hc_fail(k, "missing iota_dimension");
    if (k->in->iota_dimension >= s->rank)
        return hc_fail(k, "iota_dimension %lld out of range for rank %d",
                       (long long)k->in->iota_dimension, s->rank);
    if (!hc_is_int(s->type) && !hlo_is_float(s->type))
        return hc_fail(k, "element type %s is not integral or floating point",
                       hlo_type_name(s->type));
    return 0;
}

static int check_is_finite(checker *k)
{
    const hlo_shape *s;
    if (hc_arity(k) || hc_need_array(k, s = hc_operand(k, 0), "the operand"))
        return -1;
    if (!hlo_is_float(s->type))
        return hc_fail(k, "operand element type %s is not floating point", hlo_type_name(s->type));
    if (k->in->shape.type != HLO_PRED || !hc_same_dims(s, &k->in->shape)) {
        shape_strs t = hc_strs(&k->in->shape, s);
        return hc_fail(k, "result %s must be pred with the dims of the operand %s", t.a, t.b);
    }
    return 0;
}

static int check_compare(checker *k)
{
    if (hc_arity(k) || hc_need_array(k, hc_operand(k, 0), "operand 0"))
        return -1;
    const hlo_shape *a = hc_operand(k, 0), *b = hc_operand(k, 1);
    if (!hlo_shape_equal(a, b)) {
        shape_strs t = hc_strs(a, b);
        return hc_fail(k, "operand 0 has shape %s but operand 1 has %s", t.a, t.b);
    }
    if (k->in->shape.type != HLO_PRED || !hc_same_dims(a, &k->in->shape)) {
        shape_strs t = hc_strs(&k->in->shape, a);
        return hc_fail(k, "result %s must be pred with the dims of the operands %s", t.a, t.b);
    }
    if (k->in->comparison_direction == HLO_CMP_NONE)
        return hc_fail(k, "missing comparison_direction");
    return 0;
}

static int check_select(checker *k)
{
    if (hc_arity(k))
        return -1;
    const hlo_shape *p = hc_operand(k, 0);
    if (p->type != HLO_PRED || (p->rank && !hc_same_dims(p, &k->in->shape))) {
        shape_strs t = hc_strs(p, &k->in->shape);
        return hc_fail(k, "predicate %s must be pred[] or pred with the dims of the result %s", t.a,
                       t.b);
    }
    for (int i = 1; i < 3; i++) {
        const hlo_shape *s = hc_operand(k, i);
        if (!hlo_shape_equal(s, &k->in->shape)) {
            shape_strs t = hc_strs(s, &k->in->shape);
            return hc_fail(k, "operand %d has shape %s but the result has %s", i, t.a, t.b);
        }
    }
    return hc_need_array(k, &k->in->shape, "the result");
}

static int check_convert(checker *k)
{
    const hlo_shape *s;
    if (hc_arity(k) || hc_need_array(k, s = hc_operand(k, 0), "the operand") ||
        hc_need_array(k, &k->in->shape, "the result"))
        return -1;
    if (!hc_same_dims(s, &k->in->shape)) {
        shape_strs t = hc_strs(s, &k->in->shape);
        return hc_fail(k, "operand %s and result %s differ in dims", t.a, t.b);
    }
    return 0;
}

/* Ops on numbers (integers or floats, not pred): negate, abs, sign. */
static int check_number(checker *k)
{
    if (hc_check_elementwise(k))
        return -1;
    hlo_type t = k->in->shape.type;
    if (!hc_is_int(t) && !hlo_is_float(t))
        return hc_fail(k, "element type %s is not integral or floating point", hlo_type_name(t));
    return 0;
}

/* shift-left, shift-right-*, popcnt and count-leading-zeros. */
static int check_integral(checker *k)
{
    if (hc_check_elementwise(k))
        return -1;
    if (!hc_is_int(k->in->shape.type))
        return hc_fail(k, "element type %s is not integral", hlo_type_name(k->in->shape.type));
    return 0;
}

/* clamp(min, x, max): the result is x's shape; each bound is a scalar of its element type or of
 * its shape. */
static int check_clamp(checker *k)
{
    if (hc_arity(k) || hc_need_array(k, &k->in->shape, "the result"))
        return -1;
    const hlo_shape *x = hc_operand(k, 1);
    if (!hlo_shape_equal(x, &k->in->shape)) {
        shape_strs t = hc_strs(x, &k->in->shape);
        return hc_fail(k, "operand 1 has shape %s but the result has %s", t.a, t.b);
    }
    for (int i = 0; i < 3; i += 2) {
        const hlo_shape *b = hc_operand(k, i);
        if (!hc_is_array(b) || b->type != x->type || (b->rank && !hc_same_dims(b, x))) {
            shape_strs t = hc_strs(b, x);
            return hc_fail(k,
                           "bound %s (operand %d) must be a scalar of the operand's element "
                           "type or the operand's shape %s",
                           t.a, i, t.b);
        }
    }
    return 0;
}

/* bitcast-convert, as XLA: the same bytes as another type (not pred); between types of different
 * sizes the smaller one's array has a last dim of the size ratio more. */
static int check_bitcast_convert(checker *k)
{
    const hlo_shape *s, *r = &k->in->shape;
    if (hc_arity(k) || hc_need_array(k, s = hc_operand(k, 0), "the operand") ||
        hc_need_array(k, r, "the result"))
        return -1;
    if (s->type == HLO_PRED || r->type == HLO_PRED)
        return hc_fail(k, "pred cannot be bitcast");
    const size_t from = hlo_type_size(s->type), to = hlo_type_size(r->type);
    const hlo_shape *big = from > to ? s : r, *small = from > to ? r : s;
    bool ok = big->rank + (from != to) == small->rank;
    for (int d = 0; ok && d < big->rank; d++)
        ok = big->dims[d] == small->dims[d];
    if (ok && from != to)
        ok = small->dims[small->rank - 1] == (int64_t)(from > to ? from / to : to / from);
    if (!ok) {
        shape_strs t = hc_strs(s, r);
        return hc_fail(k,
                       "operand %s cannot be bitcast to %s (same dims, or a last dim of the "
                       "size ratio added or removed)",
                       t.a, t.b);
    }
    return 0;
}

/* The element types of each element-wise op: the op list's rule column (hlo.h). */
enum { RULE_OWN, RULE_ANY, RULE_FLOAT, RULE_NUMBER, RULE_LOGICAL, RULE_INT };
#define RULE(name, hlo, stablehlo, operands, rule) [HLO_OP_##name] = RULE_##rule,
static const unsigned char rules[HLO_OP_COUNT_] = {HLO_OPS(RULE)};
#undef RULE

int hc_check_elem(checker *k)
{
    switch (rules[k->in->opcode]) {
    case RULE_ANY: return hc_check_elementwise(k);
    case RULE_FLOAT: return check_float(k);
    case RULE_NUMBER: return check_number(k);
    case RULE_LOGICAL: return check_logical(k);
    case RULE_INT: return check_integral(k);
    default: break;
    }
    switch (k->in->opcode) {
    case HLO_OP_IS_FINITE: return check_is_finite(k);
    case HLO_OP_CLAMP: return check_clamp(k);
    case HLO_OP_IOTA: return check_iota(k);
    case HLO_OP_COMPARE: return check_compare(k);
    case HLO_OP_SELECT: return check_select(k);
    case HLO_OP_CONVERT: return check_convert(k);
    case HLO_OP_BITCAST_CONVERT: return check_bitcast_convert(k);
    default: return hc_fail(k, "unsupported op");
    }
}

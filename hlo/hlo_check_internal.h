/* hlo_check_internal.h - what the shape checker's files share (not a public interface):
 * hlo_check.c walks the module and checks the structural ops (broadcast, reshape, tuples, calls),
 * hlo_check_reduce.c dots, convolutions, reductions and batch norm, hlo_check_elem.c the
 * element-wise ops and their type rules, hlo_check_shape.c data movement, gather, scatter, sort,
 * control flow and all-reduce. */
#ifndef TPU_HLO_HLO_CHECK_INTERNAL_H
#define TPU_HLO_HLO_CHECK_INTERNAL_H

#include <stdbool.h>

#include "hlo/hlo.h"

/* The instruction being checked, in computation c of module m. */
typedef struct {
    const hlo_module *m;
    const char *file;
    hlo_error *err;
    const hlo_computation *c;
    const hlo_instr *in;
} checker;

/* Two shape strings for one message. */
typedef struct {
    char a[160], b[160];
} shape_strs;

/* hlo_fail at the instruction; returns -1. */
int hc_fail(checker *k, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
shape_strs hc_strs(const hlo_shape *a, const hlo_shape *b);
const hlo_shape *hc_operand(const checker *k, int i); /* the shape of operand i */
/* The operands the op list (HLO_OPS, hlo.h) gives the instruction's opcode, -1 for any; exactly
 * that many. */
int hc_operands(const checker *k);
int hc_arity(checker *k);
int hc_need_array(checker *k, const hlo_shape *s, const char *what);
/* Operands (hc_arity) of exactly the result's shape (element-wise add, negate, ...). */
int hc_check_elementwise(checker *k);
int hc_check_same_type(checker *k, const hlo_shape *s); /* of the result's element type */
/* Operand 0 and the result: arrays of one element type. */
int hc_operand_result(checker *k);
/* A list of distinct dims of a rank-`rank` array; what names it in messages. */
int hc_check_dim_list(checker *k, const hlo_ints *l, int rank, const char *what);
/* The parameters of c by number (parameter numbers are checked to be 0..n-1 first). */
int hc_param_count(const hlo_computation *c);
const hlo_shape *hc_param_shape(const hlo_computation *c, int64_t number);
/* hlo_check_reduce.c: dot, convolution, reduce, reduce-window, batch-norm-training and
 * batch-norm-inference. */
int hc_check_reduce_op(checker *k);
/* The window over the n dims base (an operand's dims, or a convolution's input spatial dims;
 * what_n names n in messages): sizes, strides and dilations at least 1. out[i] gets the number
 * of window positions along dim i, as XLA's InferWindowOutputShape: (padded dilated base -
 * dilated window) / stride + 1, or 0 when the window does not fit. */
int hc_check_window(checker *k, const int64_t *base, int n, const char *what_n, int64_t *out);
/* hlo_check_shape.c: slice, concatenate, reverse, dynamic-slice, dynamic-update-slice, gather,
 * scatter, select-and-scatter, sort, while, conditional, map and all-reduce. */
int hc_check_shape_op(checker *k);
/* hlo_check_elem.c: the element-wise ops (by the op list's rules), iota, compare, select, clamp,
 * convert and bitcast-convert; any other opcode is an error naming it. */
int hc_check_elem(checker *k);

static inline bool hc_is_array(const hlo_shape *s)
{
    return s->type != HLO_TUPLE && s->type != HLO_TOKEN;
}
static inline bool hc_is_int(hlo_type t) { return t >= HLO_S8 && t <= HLO_U64; }

static inline bool hc_same_dims(const hlo_shape *a, const hlo_shape *b)
{
    if (a->rank != b->rank)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

#endif

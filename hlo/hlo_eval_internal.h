/* hlo_eval_internal.h - what the evaluator's files share (not a public interface): element
 * access, index arithmetic, and the element-wise (hlo_elem.c, hlo_elem_arith.c) and
 * data-movement (hlo_eval_shape.c) ops, dots, convolutions and reductions (hlo_eval_reduce.c),
 * values and the computation walk for control flow (hlo_eval_control.c: while, conditional,
 * sort, map, scatter, select-and-scatter). hlo_eval.c holds values, the computation walk,
 * constants, custom-calls and the API. */
#ifndef TPU_HLO_HLO_EVAL_INTERNAL_H
#define TPU_HLO_HLO_EVAL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "hlo/hlo.h"

/* Floats are read and written as double (hlo_array_get, hlo_array_set: exact for every f16,
 * bf16, f32 and f64, rounded to the element type when stored), integers and pred as int64
 * (he_geti, he_seti: exact for all of them, so 64-bit integer math is exact modulo 2^64). */
/* Element i: an integer's value (u64: its bits), pred 0 or 1, a float's bit pattern
 * sign-extended (for the total order and copies). */
int64_t he_geti(const hlo_array *a, int64_t i);
/* Stores the low bits of v (pred: v != 0; a float type: v is its bit pattern). */
void he_seti(hlo_array *a, int64_t i, int64_t v);
/* o[oi] = a[ai], of the same type. */
void he_copy(hlo_array *o, int64_t oi, const hlo_array *a, int64_t ai);
/* An integer reduced modulo 2^bits of t into t's range (pred: nonzero is true). */
int64_t he_wrap(hlo_type t, int64_t v);
int he_bits(hlo_type t); /* bits per element (pred 1) */
bool he_is_unsigned(hlo_type t);
/* o[oi] = op(a[ai], b[bi]) for a binary op of hlo_elem_arith.c (add, subtract, multiply,
 * divide, remainder, power, atan2, maximum, minimum, and, or, xor, the shifts) on a's type;
 * o may be a or b. */
void he_binop(hlo_opcode op, hlo_array *o, int64_t oi, const hlo_array *a, int64_t ai,
              const hlo_array *b, int64_t bi);
/* o[oi] = op(a[ai]) for a unary op of hlo_elem_arith.c (negate, abs, sign, not, popcnt,
 * count-leading-zeros, and the float functions). */
void he_unop(hlo_opcode op, hlo_array *o, int64_t oi, const hlo_array *a, int64_t ai);
/* A float value of type t as XLA's CPU backend reads it into arithmetic (hlo_elem_arith.c):
 * subnormals (of f32 for f16, bf16 and f32, which it computes in f32; of f64 for f64) as zero
 * of their sign. */
double he_flush(hlo_type t, double v);

void he_strides(const hlo_shape *s, int64_t *st); /* row-major strides of s, in elements */
/* Advances a row-major multi-index over dims; returns the lowest dim that changed (-1 when it
 * wrapped around). */
int he_odometer(int64_t *idx, const int64_t *dims, int rank);

/* A value: an array, or a tuple of values (a == NULL). */
typedef struct val {
    hlo_array *a;
    int n;
    struct val *t;
} val;

typedef struct {
    const hlo_module *m;
    const char *file;
    hlo_error *err;
    const hlo_eval_hooks *hooks;
    int per_element; /* inside he_apply: an op's reducer or comparator, not the program's */
} evaluator;

/* Reports an error located at in (NULL: none); returns -1. */
int he_fail(evaluator *e, const hlo_instr *in, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void he_val_free(val *v);
int he_val_copy(const val *src, val *dst); /* a deep copy; -1 when out of memory */
/* Evaluates c on args (borrowed, by parameter number) into *out (owned). */
int he_eval_comp(evaluator *e, const hlo_computation *c, const val *args, val *out);
/* he_eval_comp for the to_apply an op calls per element (a reducer, comparator, map or scatter
 * function): its instructions are that op's work, not the program's (hooks.evaluated). */
int he_apply(evaluator *e, const hlo_computation *f, const val *args, val *out);
/* while, conditional, sort, map, scatter and select-and-scatter (hlo_eval_control.c) on operand
 * values op into *out. */
int he_control(evaluator *e, const hlo_instr *in, const val *op, val *out);
/* hlo_eval_reduce.c: reduce, reduce-window, batch-norm-training and batch-norm-inference on
 * operand values op into *out; dot and convolution of l and r into o (allocated with the
 * result shape; he_dot returns -1 when out of memory). */
int he_reduction(evaluator *e, const hlo_instr *in, const val *op, val *out);
int he_dot(const hlo_instr *in, const hlo_array *l, const hlo_array *r, hlo_array *o);
void he_conv(const hlo_instr *in, const hlo_array *l, const hlo_array *r, hlo_array *o);

/* Element-wise ops and iota, convert, compare, select, clamp, is-finite into o (allocated with
 * the result shape); ops are the operand arrays. */
void he_elementwise(const hlo_instr *in, const hlo_array *const *ops, hlo_array *o);
/* Ops that move elements without computing: reshape, copy, bitcast-convert, broadcast,
 * transpose, pad, slice, concatenate, reverse, dynamic-slice, dynamic-update-slice, gather. */
void he_shape(const hlo_instr *in, const hlo_array *const *ops, hlo_array *o);
/* bitcast (hlo_layout.c) of a into o, from and to the shapes of the operand's and the
 * bitcast's instructions (the arrays carry no layout). */
void he_bitcast(const hlo_shape *from, const hlo_shape *to, const hlo_array *a, hlo_array *o);

/* A gather's result or a scatter's updates (hlo.h's hlo_gather_dims), rank dims: per dim, the
 * operand dim a window dim runs along (window_of) or the indices dim a batch dim walks
 * (batch_of), -1 otherwise. */
void he_window_maps(const hlo_gather_dims *g, int rank, int *window_of, int *batch_of);
/* The unclamped start of the window of element idx in every operand dim (HLO_MAX_RANK of
 * them, 0 past the operand's rank): indices ix's vector at idx's batch position, and idx's
 * batch index in operand batching dims. */
void he_window_start(const hlo_gather_dims *g, const hlo_array *ix, const int64_t *idx, int rank,
                     const int *batch_of, int64_t *start);

#endif

/* hlo_eval_internal.h - what the evaluator's files share (not a public interface): element
 * access, index arithmetic, and the element-wise (hlo_elem.c) and data-movement
 * (hlo_eval_shape.c) ops, values and the computation walk for control flow
 * (hlo_eval_control.c: while, conditional, sort, map, scatter). hlo_eval.c holds values, the
 * computation walk, dots, convolutions, reductions and custom-calls. */
#ifndef TPU_COMPILER_HLO_EVAL_INTERNAL_H
#define TPU_COMPILER_HLO_EVAL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler/hlo.h"

/* Elements are read and written as double: it holds every f32, s8, s32, u8 and pred value
 * exactly, and each op rounds or wraps its result to the element type before it is stored, so
 * f32 math is float math and integer math is exact modulo 2^bits (see hlo.h). */
double he_get(const hlo_array *a, int64_t i);
/* v must already be representable in the element type (see he_wrap()). */
void he_set(hlo_array *a, int64_t i, double v);
/* An integer reduced modulo 2^bits of t into t's range (pred: nonzero is true). */
int64_t he_wrap(hlo_type t, int64_t v);
bool he_is_float(hlo_type t);
/* A binary arithmetic op (add, subtract, multiply, divide, maximum, minimum) in type t. */
double he_binop(hlo_opcode op, hlo_type t, double a, double b);

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
/* while, conditional, sort, map and scatter (hlo_eval_control.c) on operand values op into
 * *out. */
int he_control(evaluator *e, const hlo_instr *in, const val *op, val *out);

/* Element-wise ops and iota, convert, compare, select into o (allocated with the result
 * shape); ops are the operand arrays. */
void he_elementwise(const hlo_instr *in, const hlo_array *const *ops, hlo_array *o);
/* Ops that move elements without computing: reshape, copy, broadcast, transpose, pad, slice,
 * concatenate, reverse, dynamic-slice, dynamic-update-slice, gather. */
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

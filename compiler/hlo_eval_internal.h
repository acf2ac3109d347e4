/* hlo_eval_internal.h - what the evaluator's files share (not a public interface): element
 * access, index arithmetic, and the element-wise (hlo_elem.c) and data-movement
 * (hlo_eval_shape.c) ops. hlo_eval.c holds values, the computation walk, dots, convolutions,
 * reductions and custom-calls. */
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

/* Element-wise ops and iota, convert, compare, select into o (allocated with the result
 * shape); ops are the operand arrays. */
void he_elementwise(const hlo_instr *in, const hlo_array *const *ops, hlo_array *o);
/* Ops that move elements without computing: reshape, copy, broadcast, transpose, pad. */
void he_shape(const hlo_instr *in, const hlo_array *const *ops, hlo_array *o);
/* bitcast (hlo_layout.c) of a into o, from and to the shapes of the operand's and the
 * bitcast's instructions (the arrays carry no layout). */
void he_bitcast(const hlo_shape *from, const hlo_shape *to, const hlo_array *a, hlo_array *o);

#endif

/* hlo_check_internal.h - what the shape checker's files share (not a public interface): the
 * checker's state and the helpers its rules use. hlo_check.c holds the walk and the rules of
 * element-wise ops, dots, convolutions and reductions; hlo_check_shape.c those of data movement,
 * gather, sort and control flow. */
#ifndef TPU_COMPILER_HLO_CHECK_INTERNAL_H
#define TPU_COMPILER_HLO_CHECK_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "compiler/hlo.h"

typedef struct {
    const hlo_module *m;
    const char *file;
    hlo_error *err;
    const hlo_computation *c;
    const hlo_instr *in;
} checker;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static inline int
fail(checker *k, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hlo_vfail(k->err, k->file, k->in->line, k->in->col, k->in->opcode_name, fmt, ap);
    va_end(ap);
    return -1;
}

/* Two shape strings for one message. */
typedef struct {
    char a[160], b[160];
} shape_strs;

static inline shape_strs strs(const hlo_shape *a, const hlo_shape *b)
{
    shape_strs s;
    hlo_shape_str(a, s.a, sizeof s.a);
    hlo_shape_str(b, s.b, sizeof s.b);
    return s;
}

static inline bool is_array(const hlo_shape *s)
{
    return s->type != HLO_TUPLE && s->type != HLO_TOKEN;
}
static inline bool is_float(hlo_type t) { return t >= HLO_F16 && t <= HLO_F64; }
static inline bool is_int(hlo_type t) { return t >= HLO_S8 && t <= HLO_U64; }

static inline bool same_dims(const hlo_shape *a, const hlo_shape *b)
{
    if (a->rank != b->rank)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

static inline const hlo_shape *operand(const checker *k, int i)
{
    return &k->c->instrs[k->in->operands[i].index].shape;
}

static inline int arity(checker *k, int n)
{
    if (k->in->n_operands != n)
        return fail(k, "expects %d operand%s, has %d", n, n == 1 ? "" : "s", k->in->n_operands);
    return 0;
}

static inline int need_array(checker *k, const hlo_shape *s, const char *what)
{
    char b[160];
    if (!is_array(s))
        return fail(k, "%s must be an array, is %s", what, hlo_shape_str(s, b, sizeof b));
    return 0;
}

static inline int check_same_type(checker *k, const hlo_shape *s)
{
    if (s->type != k->in->shape.type)
        return fail(k, "operand element type %s differs from the result's %s",
                    hlo_type_name(s->type), hlo_type_name(k->in->shape.type));
    return 0;
}

/* A list of distinct dims of a rank-`rank` array; what names it in messages. */
static inline int check_dim_list(checker *k, const hlo_ints *l, int rank, const char *what)
{
    for (int i = 0; i < l->n; i++) {
        if (l->v[i] < 0 || l->v[i] >= rank)
            return fail(k, "%s %lld out of range for rank %d", what, (long long)l->v[i], rank);
        for (int j = 0; j < i; j++)
            if (l->v[j] == l->v[i])
                return fail(k, "%s %lld repeated", what, (long long)l->v[i]);
    }
    return 0;
}

/* The parameters of c by number (parameter numbers are checked to be 0..n-1 first). */
static inline int param_count(const hlo_computation *c)
{
    int n = 0;
    for (int i = 0; i < c->n_instrs; i++)
        n += c->instrs[i].opcode == HLO_OP_PARAMETER;
    return n;
}

static inline const hlo_shape *param_shape(const hlo_computation *c, int64_t number)
{
    for (int i = 0; i < c->n_instrs; i++)
        if (c->instrs[i].opcode == HLO_OP_PARAMETER && c->instrs[i].parameter_number == number)
            return &c->instrs[i].shape;
    return NULL;
}

/* The rules of hlo_check_shape.c: slice, concatenate, reverse, dynamic-slice,
 * dynamic-update-slice, gather, scatter, sort, while, conditional and map. */
int hc_check_shape_op(checker *k);

#endif

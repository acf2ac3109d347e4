/* hlo_eval.c - reference evaluator for checked HLO modules (hlo.h), with hooks for
 * custom-calls and all-reduces, and single-instruction evaluation for constant folding: values,
 * the walk over a computation, constants, custom-calls, all-reduces, the dispatch of every op.
 * Element-wise ops are hlo_elem.c, data movement hlo_eval_shape.c, dots, convolutions and
 * reductions hlo_eval_reduce.c, ops that run computations hlo_eval_control.c. */
#include "hlo/hlo_eval_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const hlo_eval_hooks no_hooks;

int he_fail(evaluator *e, const hlo_instr *in, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hlo_vfail_at(e->err, e->file, in, fmt, ap);
    va_end(ap);
    return -1;
}

/* --------------------------------------------------------------- values -- */

void he_val_free(val *v)
{
    hlo_array_free(v->a);
    for (int i = 0; i < v->n; i++)
        he_val_free(&v->t[i]);
    free(v->t);
    *v = (val){NULL, 0, NULL};
}

static hlo_array *array_copy(const hlo_array *a)
{
    hlo_array *c = hlo_array_new(a->shape.type, a->shape.rank, a->shape.dims);
    if (c)
        memcpy(c->data, a->data, (size_t)a->shape.elements * hlo_type_size(a->shape.type));
    return c;
}

int he_val_copy(const val *src, val *dst)
{
    *dst = (val){NULL, 0, NULL};
    if (src->a)
        return (dst->a = array_copy(src->a)) ? 0 : -1;
    if (!(dst->t = calloc((size_t)src->n + 1, sizeof *dst->t)))
        return -1;
    dst->n = src->n;
    for (int i = 0; i < src->n; i++)
        if (he_val_copy(&src->t[i], &dst->t[i])) {
            he_val_free(dst);
            return -1;
        }
    return 0;
}

/* ------------------------------------------------------------------ ops -- */

static int eval_constant(evaluator *e, const hlo_instr *in, hlo_array *o)
{
    if (in->literal_elided)
        return he_fail(e, in, "value of '%s' is elided ({...}) but needed", in->name);
    hlo_type t = o->shape.type;
    for (int64_t i = 0; i < o->shape.elements; i++) {
        double v = in->literal[i];
        if (hlo_is_float(t)) {
            hlo_array_set(o, i, v);
            continue;
        }
        /* The exact integer must be the number written: its double is then v (both are v's
         * correctly rounded value), and it must be in t's range (pred: any number). Without
         * literal_int (hand-built, or StableHLO's dense<...>) the double is the number. */
        const bool whole = fabs(v) < 0x1p63 && trunc(v) == v;
        int64_t x = in->literal_int ? in->literal_int[i] : whole ? (int64_t)v : 0;
        bool ok = t == HLO_PRED || (t == HLO_U64 ? v >= 0 && (double)(uint64_t)x == v
                                                 : (double)x == v && he_wrap(t, x) == x);
        if (t == HLO_PRED && !in->literal_int)
            x = v != 0;
        if (!ok)
            return he_fail(e, in, "value %.17g of '%s' is not a %s", v, in->name, hlo_type_name(t));
        he_seti(o, i, x);
    }
    return 0;
}

static int eval_array_op(evaluator *e, const hlo_instr *in, const val *ops, hlo_array *o)
{
    const hlo_array *a[3] = {NULL, NULL, NULL};
    for (int i = 0; i < in->n_operands && i < 3; i++)
        a[i] = ops[i].a;
    switch (in->opcode) {
    case HLO_OP_CONSTANT: return eval_constant(e, in, o);
    case HLO_OP_DOT: return he_dot(in, a[0], a[1], o) ? he_fail(e, in, "out of memory") : 0;
    case HLO_OP_CONVOLUTION: he_conv(in, a[0], a[1], o); return 0;
    case HLO_OP_RESHAPE:
    case HLO_OP_COPY:
    case HLO_OP_BITCAST_CONVERT:
    case HLO_OP_BROADCAST:
    case HLO_OP_TRANSPOSE:
    case HLO_OP_PAD:
    case HLO_OP_SLICE:
    case HLO_OP_CONCATENATE:
    case HLO_OP_REVERSE:
    case HLO_OP_DYNAMIC_SLICE:
    case HLO_OP_DYNAMIC_UPDATE_SLICE:
    case HLO_OP_GATHER: {
        const hlo_array **all = malloc(((size_t)in->n_operands + 1) * sizeof *all);
        if (!all)
            return he_fail(e, in, "out of memory");
        for (int i = 0; i < in->n_operands; i++)
            all[i] = ops[i].a;
        he_shape(in, all, o);
        free(all);
        return 0;
    }
    case HLO_OP_BITCAST: {
        const hlo_computation *c = hlo_instr_owner(e->m, in);
        he_bitcast(&c->instrs[in->operands[0].index].shape, &in->shape, a[0], o);
        return 0;
    }
    default: he_elementwise(in, a, o); return 0;
    }
}

/* The evaluator's element types throughout a shape. */
static bool supported(const hlo_shape *s)
{
    if (s->type == HLO_TUPLE) {
        for (int i = 0; i < s->n_tuple; i++)
            if (!supported(&s->tuple[i]))
                return false;
        return true;
    }
    return hlo_type_size(s->type) != 0;
}

static bool in_list(const hlo_array *a, hlo_array *const *list, int n)
{
    for (int i = 0; i < n; i++)
        if (list[i] == a)
            return true;
    return false;
}

typedef int (*hook_fn)(void *ctx, const hlo_instr *in, hlo_array *const *operands, int n_operands,
                       hlo_array **outs, int n_outs, hlo_error *err);

/* A custom-call or an all-reduce through its hook (what names it in messages): the hook's
 * arrays become out (a tuple of them when the instruction's shape is one) once they prove to be
 * new arrays of the promised shapes. */
static int eval_by_hook(evaluator *e, const hlo_instr *in, const val *op, val *out, hook_fn hook,
                        const char *what)
{
    bool tuple = in->shape.type == HLO_TUPLE;
    int n = tuple ? in->shape.n_tuple : 1, n_ins = in->n_operands, rc = 0;
    hlo_array **ins = malloc(((size_t)n_ins + 1) * sizeof *ins);
    hlo_array **outs = calloc((size_t)n + 1, sizeof *outs);
    if (!ins || !outs || (tuple && !(out->t = calloc((size_t)n + 1, sizeof *out->t)))) {
        rc = he_fail(e, in, "out of memory");
        goto done;
    }
    for (int i = 0; i < n_ins; i++)
        ins[i] = op[i].a;
    hlo_error why = {0};
    if (hook(e->hooks->ctx, in, ins, n_ins, outs, n, &why)) {
        rc = he_fail(e, in, "%s", why.msg[0] ? why.msg : "the hook failed without a message");
        goto done;
    }
    for (int i = 0; i < n && !rc; i++) {
        const hlo_shape *want = tuple ? &in->shape.tuple[i] : &in->shape;
        char b1[160], b2[160];
        if (!outs[i] || !hlo_shape_equal(&outs[i]->shape, want))
            rc = he_fail(e, in, "the hook for %s returned %s for result %d, expected %s", what,
                         outs[i] ? hlo_shape_str(&outs[i]->shape, b1, sizeof b1) : "nothing", i,
                         hlo_shape_str(want, b2, sizeof b2));
        else if (in_list(outs[i], ins, n_ins) || in_list(outs[i], outs, i))
            rc = he_fail(e, in,
                         "the hook for %s returned an operand or one array twice as result %d",
                         what, i);
    }
    if (!rc) {
        for (int i = 0; i < n; i++) {
            *(tuple ? &out->t[i].a : &out->a) = outs[i];
            outs[i] = NULL;
        }
        out->n = tuple ? n : 0;
    }
done:
    /* The hook's arrays are ours even when it failed; operands and repeats are not freed. */
    for (int i = 0; outs && i < n; i++)
        if (outs[i] && !in_list(outs[i], ins, n_ins) && !in_list(outs[i], outs, i))
            hlo_array_free(outs[i]);
    free(ins);
    free(outs);
    return rc;
}

static int eval_custom_call(evaluator *e, const hlo_instr *in, const val *op, val *out)
{
    if (!e->hooks->custom_call)
        return he_fail(e, in, "no custom_call hook to evaluate target \"%s\"",
                       in->custom_call_target);
    char what[HLO_MAX_NAME + 16];
    snprintf(what, sizeof what, "target \"%s\"", in->custom_call_target);
    return eval_by_hook(e, in, op, out, e->hooks->custom_call, what);
}

/* Through the hook; without one, each device on its own is its group's only member. */
static int eval_all_reduce(evaluator *e, const hlo_instr *in, const val *op, val *out)
{
    if (e->hooks->all_reduce)
        return eval_by_hook(e, in, op, out, e->hooks->all_reduce, "all-reduce");
    const int64_t group = hlo_all_reduce_group_size(e->m, in);
    if (group != 1)
        return he_fail(e, in,
                       "groups of %lld devices, but nothing runs the other devices (no "
                       "all_reduce hook)",
                       (long long)group);
    const int n = in->n_operands;
    if (n > 1 && !(out->t = calloc((size_t)n, sizeof *out->t)))
        return he_fail(e, in, "out of memory");
    out->n = n > 1 ? n : 0;
    for (int i = 0; i < n; i++)
        if (he_val_copy(&op[i], n > 1 ? &out->t[i] : out))
            return he_fail(e, in, "out of memory");
    return 0;
}

/* Evaluates in on its operand values op (borrowed) into *out (owned). */
static int eval_instr(evaluator *e, const hlo_instr *in, const val *op, val *out)
{
    char b[160];
    *out = (val){NULL, 0, NULL};
    if (!supported(&in->shape))
        return he_fail(e, in, "shape %s of '%s' has an element type the evaluator does not support",
                       hlo_shape_str(&in->shape, b, sizeof b), in->name);
    int rc = 0;
    switch (in->opcode) {
    case HLO_OP_TUPLE:
        if (!(out->t = calloc((size_t)in->n_operands + 1, sizeof *out->t))) {
            rc = he_fail(e, in, "out of memory");
            break;
        }
        out->n = in->n_operands;
        for (int i = 0; i < in->n_operands && !rc; i++)
            if (he_val_copy(&op[i], &out->t[i]))
                rc = he_fail(e, in, "out of memory");
        break;
    case HLO_OP_GET_TUPLE_ELEMENT:
        if (he_val_copy(&op[0].t[in->index], out))
            rc = he_fail(e, in, "out of memory");
        break;
    case HLO_OP_CALL:
    case HLO_OP_FUSION:
        rc = he_eval_comp(e, &e->m->comps[in->to_apply >= 0 ? in->to_apply : in->calls], op, out);
        break;
    case HLO_OP_REDUCE:
    case HLO_OP_BATCH_NORM_TRAINING:
    case HLO_OP_BATCH_NORM_INFERENCE:
    case HLO_OP_REDUCE_WINDOW: rc = he_reduction(e, in, op, out); break;
    case HLO_OP_CUSTOM_CALL: rc = eval_custom_call(e, in, op, out); break;
    case HLO_OP_ALL_REDUCE: rc = eval_all_reduce(e, in, op, out); break;
    case HLO_OP_WHILE:
    case HLO_OP_CONDITIONAL:
    case HLO_OP_SORT:
    case HLO_OP_MAP:
    case HLO_OP_SCATTER:
    case HLO_OP_SELECT_AND_SCATTER: rc = he_control(e, in, op, out); break;
    default:
        if (in->shape.type == HLO_TUPLE) /* a tuple constant: its literal is never kept */
            rc = he_fail(e, in, "value of '%s' is elided but needed", in->name);
        else if (!(out->a = hlo_array_new(in->shape.type, in->shape.rank, in->shape.dims)))
            rc = he_fail(e, in, "out of memory for the value of '%s', %s (%llu bytes)", in->name,
                         hlo_shape_str(&in->shape, b, sizeof b),
                         (unsigned long long)in->shape.elements * hlo_type_size(in->shape.type));
        else
            rc = eval_array_op(e, in, op, out->a);
        break;
    }
    if (rc)
        he_val_free(out);
    return rc;
}

int he_apply(evaluator *e, const hlo_computation *f, const val *args, val *out)
{
    e->per_element++;
    const int rc = he_eval_comp(e, f, args, out);
    e->per_element--;
    return rc;
}

int he_eval_comp(evaluator *e, const hlo_computation *c, const val *args, val *out)
{
    int n = c->n_instrs, at, rc = 0, max_ops = 0;
    for (int i = 0; i < n; i++)
        max_ops = c->instrs[i].n_operands > max_ops ? c->instrs[i].n_operands : max_ops;
    int *order = malloc(((size_t)n + 1) * sizeof *order);
    int *last = malloc(((size_t)n + 1) * sizeof *last);
    bool *live = calloc((size_t)n + 1, sizeof *live);
    val *v = calloc((size_t)n + 1, sizeof *v);
    val *op = malloc(((size_t)max_ops + 1) * sizeof *op); /* one instruction's operands */
    *out = (val){NULL, 0, NULL};
    if (!order || !last || !live || !v || !op || hlo_topo_order(c, order, &at)) {
        rc = he_fail(e, NULL, "out of memory");
        goto done;
    }
    /* Only what the root needs is evaluated; each value is freed after its last user. */
    live[c->root] = true;
    for (int p = n - 1; p >= 0; p--) {
        const hlo_instr *in = &c->instrs[order[p]];
        last[order[p]] = order[p] == c->root ? n : -1;
        for (int i = 0; live[order[p]] && i < in->n_operands; i++)
            live[in->operands[i].index] = true;
    }
    for (int p = 0; p < n; p++)
        for (int i = 0; live[order[p]] && i < c->instrs[order[p]].n_operands; i++) {
            int o = c->instrs[order[p]].operands[i].index;
            if (last[o] < p)
                last[o] = p;
        }
    for (int p = 0; p < n && !rc; p++) {
        int i = order[p];
        const hlo_instr *in = &c->instrs[i];
        if (!live[i])
            continue;
        if (in->opcode == HLO_OP_PARAMETER) {
            rc = he_val_copy(&args[in->parameter_number], &v[i]) ? he_fail(e, in, "out of memory")
                                                                 : 0;
        } else {
            for (int j = 0; j < in->n_operands; j++)
                op[j] = v[in->operands[j].index]; /* borrowed */
            rc = eval_instr(e, in, op, &v[i]);
            if (!rc && !e->per_element && e->hooks->evaluated)
                e->hooks->evaluated(e->hooks->ctx, c, in);
        }
        for (int j = 0; j < in->n_operands; j++)
            if (last[in->operands[j].index] == p)
                he_val_free(&v[in->operands[j].index]);
    }
    if (!rc) {
        *out = v[c->root];
        v[c->root] = (val){NULL, 0, NULL};
    }
done:
    for (int i = 0; v && i < n; i++)
        he_val_free(&v[i]);
    free(order);
    free(last);
    free(live);
    free(v);
    free(op);
    return rc;
}

/* Moves the arrays of v, depth first, into list[*k...]. */
static void flatten(val *v, hlo_array **list, int *k)
{
    if (v->a) {
        list[(*k)++] = v->a;
        v->a = NULL;
    }
    for (int i = 0; i < v->n; i++)
        flatten(&v->t[i], list, k);
}

static int count_arrays(const val *v)
{
    int n = v->a != NULL;
    for (int i = 0; i < v->n; i++)
        n += count_arrays(&v->t[i]);
    return n;
}

int hlo_eval(const hlo_module *m, const char *file, hlo_array *const *params, int n_params,
             hlo_array ***outs, int *n_outs, hlo_error *err)
{
    return hlo_eval_with(m, file, params, n_params, NULL, outs, n_outs, err);
}

int hlo_eval_with(const hlo_module *m, const char *file, hlo_array *const *params, int n_params,
                  const hlo_eval_hooks *hooks, hlo_array ***outs, int *n_outs, hlo_error *err)
{
    evaluator e = {.m = m, .file = file, .err = err, .hooks = hooks ? hooks : &no_hooks};
    *outs = NULL;
    *n_outs = 0;
    if (hlo_check(m, file, err))
        return -1;
    const hlo_computation *c = hlo_entry(m);
    int np = 0;
    for (int i = 0; i < c->n_instrs; i++)
        np += c->instrs[i].opcode == HLO_OP_PARAMETER;
    if (n_params != np)
        return he_fail(&e, NULL, "ENTRY '%s' has %d parameters, %d arrays given", c->name, np,
                       n_params);
    val *args = calloc((size_t)np + 1, sizeof *args);
    if (!args)
        return he_fail(&e, NULL, "out of memory");
    for (int i = 0; i < c->n_instrs; i++) {
        const hlo_instr *in = &c->instrs[i];
        if (in->opcode != HLO_OP_PARAMETER)
            continue;
        const hlo_array *a = params[in->parameter_number];
        char s1[160], s2[160];
        if (!a || !hlo_shape_equal(&a->shape, &in->shape)) {
            free(args);
            return he_fail(&e, in, "'%s' is %s but the array given is %s", in->name,
                           hlo_shape_str(&in->shape, s1, sizeof s1),
                           a ? hlo_shape_str(&a->shape, s2, sizeof s2) : "missing");
        }
        args[in->parameter_number].a = (hlo_array *)a; /* borrowed: never freed here */
    }
    val r;
    int rc = he_eval_comp(&e, c, args, &r);
    free(args);
    if (rc)
        return -1;
    int n = count_arrays(&r), k = 0;
    hlo_array **list = calloc((size_t)n + 1, sizeof *list);
    if (!list) {
        he_val_free(&r);
        return he_fail(&e, NULL, "out of memory");
    }
    flatten(&r, list, &k);
    he_val_free(&r);
    *outs = list;
    *n_outs = n;
    return 0;
}

/* The arrays of shape s, in flatten()'s order. */
static int count_leaves(const hlo_shape *s)
{
    int n = s->type != HLO_TUPLE;
    for (int i = 0; i < s->n_tuple; i++)
        n += count_leaves(&s->tuple[i]);
    return n;
}

/* A value of shape s over the arrays flat[*k...] (borrowed: release() frees only the tuples),
 * each checked to have its shape. */
static int borrow(evaluator *e, const hlo_instr *in, const hlo_shape *s, hlo_array *const *flat,
                  int *k, val *v)
{
    char s1[160], s2[160];
    *v = (val){NULL, 0, NULL};
    if (s->type != HLO_TUPLE) {
        const hlo_array *a = flat[(*k)++];
        if (!a || !hlo_shape_equal(&a->shape, s))
            return he_fail(e, in, "operand %d of '%s' is %s but the array given is %s", *k - 1,
                           in->name, hlo_shape_str(s, s1, sizeof s1),
                           a ? hlo_shape_str(&a->shape, s2, sizeof s2) : "missing");
        v->a = (hlo_array *)a;
        return 0;
    }
    if (!(v->t = calloc((size_t)s->n_tuple + 1, sizeof *v->t)))
        return he_fail(e, in, "out of memory");
    v->n = s->n_tuple;
    for (int i = 0; i < s->n_tuple; i++)
        if (borrow(e, in, &s->tuple[i], flat, k, &v->t[i]))
            return -1;
    return 0;
}

static void release(val *v)
{
    for (int i = 0; i < v->n; i++)
        release(&v->t[i]);
    free(v->t);
}

int hlo_eval_instr(const hlo_module *m, const char *file, const hlo_instr *in,
                   hlo_array *const *operands, hlo_array **out, hlo_error *err)
{
    evaluator e = {.m = m, .file = file, .err = err, .hooks = &no_hooks};
    const bool tuple_ok = hlo_tuple_result(in->opcode);
    const int n_out = tuple_ok ? count_leaves(&in->shape) : 1;
    for (int i = 0; i < n_out; i++)
        out[i] = NULL;
    const hlo_computation *c = hlo_instr_owner(m, in);
    if (!c)
        return he_fail(&e, NULL, "instruction '%s' is not one of the module's", in->name);
    switch (in->opcode) {
    case HLO_OP_PARAMETER:
    case HLO_OP_TUPLE:
    case HLO_OP_GET_TUPLE_ELEMENT:
    case HLO_OP_CALL:
    case HLO_OP_FUSION:
    case HLO_OP_CUSTOM_CALL:
    case HLO_OP_ALL_REDUCE: return he_fail(&e, in, "'%s' is not evaluated on its own", in->name);
    default: break;
    }
    char s1[160];
    if (in->shape.type == HLO_TUPLE && !tuple_ok)
        return he_fail(&e, in, "'%s' is %s, not an array", in->name,
                       hlo_shape_str(&in->shape, s1, sizeof s1));
    val *op = calloc((size_t)in->n_operands + 1, sizeof *op);
    if (!op)
        return he_fail(&e, in, "out of memory");
    int rc = 0, k = 0;
    for (int i = 0; i < in->n_operands && !rc; i++)
        rc = borrow(&e, in, &c->instrs[in->operands[i].index].shape, operands, &k, &op[i]);
    val r = {NULL, 0, NULL};
    if (!rc)
        rc = eval_instr(&e, in, op, &r);
    for (int i = 0; i < in->n_operands; i++)
        release(&op[i]);
    free(op);
    if (rc)
        return -1;
    k = 0;
    flatten(&r, out, &k);
    he_val_free(&r);
    return 0;
}

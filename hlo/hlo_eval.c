/* hlo_eval.c - reference evaluator for checked HLO modules (hlo.h), with a hook for
 * custom-calls, and single-instruction evaluation for constant folding: values, the walk over a
 * computation, dots, convolutions, reductions, custom-calls. Element-wise ops are hlo_elem.c,
 * data movement hlo_eval_shape.c; binding safetensors weights to ENTRY parameters is
 * hlo_bind.c. */
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
    hlo_vfail(e->err, e->file, in ? in->line : 0, in ? in->col : 0, in ? in->opcode_name : NULL,
              fmt, ap);
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

/* A dot's or convolution's sum of products, in the result type's accumulator: float for f16,
 * bf16 and f32 (rounded to the type once, at the end), double for f64, exactly modulo 2^64 for
 * integers (wrapped to the type at the end). Each product is rounded before it is added: no
 * fused multiply-add. */
typedef struct {
    hlo_type t;
    bool f32; /* f32 x f32 -> f32: the common case, which the callers loop over directly */
    float f;
    double d;
    uint64_t i;
} accumulator;

static accumulator acc_start(const hlo_array *l, const hlo_array *r, const hlo_array *o)
{
    hlo_type t = o->shape.type;
    bool f32 = t == HLO_F32 && l->shape.type == HLO_F32 && r->shape.type == HLO_F32;
    return (accumulator){t, f32, 0, 0, 0};
}

static void acc_add(accumulator *acc, const hlo_array *l, int64_t li, const hlo_array *r,
                    int64_t ri)
{
    if (acc->t == HLO_F64) {
        double p = hlo_array_get(l, li) * hlo_array_get(r, ri);
        acc->d += p;
    } else if (hlo_is_float(acc->t)) {
        float p = (float)hlo_array_get(l, li) * (float)hlo_array_get(r, ri);
        acc->f += p;
    } else {
        acc->i += (uint64_t)he_geti(l, li) * (uint64_t)he_geti(r, ri);
    }
}

static void acc_store(const accumulator *acc, hlo_array *o, int64_t i)
{
    if (hlo_is_float(acc->t))
        hlo_array_set(o, i, acc->t == HLO_F64 ? acc->d : acc->f);
    else
        he_seti(o, i, (int64_t)acc->i);
}

static int eval_dot(const hlo_instr *in, const hlo_array *l, const hlo_array *r, hlo_array *o)
{
    const hlo_ints *lc = &in->lhs_contracting_dims, *rc = &in->rhs_contracting_dims;
    const hlo_ints *lb = &in->lhs_batch_dims, *rb = &in->rhs_batch_dims;
    int64_t ls[HLO_MAX_RANK], rs[HLO_MAX_RANK];
    he_strides(&l->shape, ls);
    he_strides(&r->shape, rs);
    /* Per result dim: the operand strides it moves along (batch dims, lhs free, rhs free). */
    int64_t lstep[HLO_MAX_RANK] = {0}, rstep[HLO_MAX_RANK] = {0};
    bool lused[HLO_MAX_RANK] = {false}, rused[HLO_MAX_RANK] = {false};
    int k = 0;
    for (int i = 0; i < lb->n; i++, k++) {
        lstep[k] = ls[lb->v[i]];
        rstep[k] = rs[rb->v[i]];
        lused[lb->v[i]] = rused[rb->v[i]] = true;
    }
    for (int i = 0; i < lc->n; i++)
        lused[lc->v[i]] = rused[rc->v[i]] = true;
    for (int d = 0; d < l->shape.rank; d++)
        if (!lused[d])
            lstep[k++] = ls[d];
    for (int d = 0; d < r->shape.rank; d++)
        if (!rused[d])
            rstep[k++] = rs[d];
    /* Offsets of every contracting position, row-major over the contracting dims as listed. */
    int64_t cdims[HLO_MAX_RANK], cidx[HLO_MAX_RANK] = {0}, nk = 1;
    for (int i = 0; i < lc->n; i++)
        nk *= cdims[i] = l->shape.dims[lc->v[i]];
    int64_t *loff = malloc(((size_t)nk + 1) * sizeof *loff);
    int64_t *roff = malloc(((size_t)nk + 1) * sizeof *roff);
    if (!loff || !roff) {
        free(loff);
        free(roff);
        return -1;
    }
    for (int64_t j = 0; j < nk; j++) {
        loff[j] = roff[j] = 0;
        for (int i = 0; i < lc->n; i++) {
            loff[j] += cidx[i] * ls[lc->v[i]];
            roff[j] += cidx[i] * rs[rc->v[i]];
        }
        he_odometer(cidx, cdims, lc->n);
    }
    int64_t idx[HLO_MAX_RANK] = {0};
    for (int64_t i = 0; i < o->shape.elements; i++) {
        int64_t lbase = 0, rbase = 0;
        for (int d = 0; d < o->shape.rank; d++) {
            lbase += idx[d] * lstep[d];
            rbase += idx[d] * rstep[d];
        }
        accumulator acc = acc_start(l, r, o);
        if (acc.f32) { /* acc_add's float case on float pointers: 3x faster */
            const float *lp = (const float *)l->data + lbase, *rp = (const float *)r->data + rbase;
            for (int64_t j = 0; j < nk; j++) {
                float p = lp[loff[j]] * rp[roff[j]];
                acc.f += p;
            }
        } else {
            for (int64_t j = 0; j < nk; j++)
                acc_add(&acc, l, lbase + loff[j], r, rbase + roff[j]);
        }
        acc_store(&acc, o, i);
        he_odometer(idx, o->shape.dims, o->shape.rank);
    }
    free(loff);
    free(roff);
    return 0;
}

/* A to_apply that is a plain binary op of its two parameters, or HLO_OP_OTHER. */
static hlo_opcode simple_reducer(const hlo_computation *f)
{
    const hlo_instr *r = &f->instrs[f->root];
    if (r->n_operands != 2 || r->shape.type == HLO_TUPLE)
        return HLO_OP_OTHER;
    const hlo_instr *a = &f->instrs[r->operands[0].index], *b = &f->instrs[r->operands[1].index];
    if (a->opcode != HLO_OP_PARAMETER || b->opcode != HLO_OP_PARAMETER ||
        a->parameter_number == b->parameter_number)
        return HLO_OP_OTHER;
    switch (r->opcode) {
    case HLO_OP_ADD:
    case HLO_OP_MULTIPLY:
    case HLO_OP_MAXIMUM:
    case HLO_OP_MINIMUM: return r->opcode; /* commutative: parameter order does not matter */
    default: return HLO_OP_OTHER;
    }
}

/* The accumulators of a reduce or reduce-window of n = operands / 2 inputs: scalars args[0..n)
 * (the accumulators) and args[n..2n) (the elements folded in next), combined by to_apply (directly
 * when it is a plain binary op of one input). */
typedef struct {
    evaluator *e;
    const hlo_computation *f;
    hlo_opcode fast;
    int n;
    val *args;
} folder;

static int folder_init(folder *fo, evaluator *e, const hlo_instr *in, const val *ops)
{
    fo->e = e;
    fo->f = &e->m->comps[in->to_apply];
    fo->n = in->n_operands / 2;
    fo->fast = fo->n == 1 ? simple_reducer(fo->f) : HLO_OP_OTHER;
    if (!(fo->args = calloc(2 * (size_t)fo->n, sizeof *fo->args)))
        return -1;
    for (int i = 0; i < 2 * fo->n; i++)
        if (!(fo->args[i].a = hlo_array_new(ops[i % fo->n].a->shape.type, 0, NULL)))
            return -1;
    return 0;
}

static void folder_free(folder *fo)
{
    for (int i = 0; fo->args && i < 2 * fo->n; i++)
        he_val_free(&fo->args[i]);
    free(fo->args);
}

/* Sets the accumulators to the init values (operands n..2n-1). */
static void fold_start(folder *fo, const val *ops)
{
    for (int i = 0; i < fo->n; i++)
        he_copy(fo->args[i].a, 0, ops[fo->n + i].a, 0);
}

/* Folds element `at` of src[0..n) (the inputs, or the init values at 0) into the accumulators. */
static int fold(folder *fo, const val *src, int64_t at)
{
    if (fo->fast != HLO_OP_OTHER) {
        he_binop(fo->fast, fo->args[0].a, 0, fo->args[0].a, 0, src[0].a, at);
        return 0;
    }
    for (int i = 0; i < fo->n; i++)
        he_copy(fo->args[fo->n + i].a, 0, src[i].a, at);
    val r;
    if (he_eval_comp(fo->e, fo->f, fo->args, &r))
        return -1;
    for (int i = 0; i < fo->n; i++)
        he_copy(fo->args[i].a, 0, fo->n > 1 ? r.t[i].a : r.a, 0);
    he_val_free(&r);
    return 0;
}

/* *out: n arrays of the inputs' types and the given dims, a tuple of them when n > 1. */
static int reduction_results(val *out, int n, const val *ops, int rank, const int64_t *dims)
{
    if (n > 1 && !(out->t = calloc((size_t)n, sizeof *out->t)))
        return -1;
    out->n = n > 1 ? n : 0;
    for (int i = 0; i < n; i++)
        if (!(*(n > 1 ? &out->t[i].a : &out->a) = hlo_array_new(ops[i].a->shape.type, rank, dims)))
            return -1;
    return 0;
}

/* Stores the accumulators as element o of the results. */
static void fold_store(const folder *fo, val *out, int64_t o)
{
    for (int i = 0; i < fo->n; i++)
        he_copy(fo->n > 1 ? out->t[i].a : out->a, o, fo->args[i].a, 0);
}

/* Batch normalization of each feature over every other position of x (XLA's
 * BatchNormExpander): training computes the mean and the biased variance E[(x - mean)^2] (in
 * double) and returns them with y; inference takes them as operands 3 and 4. y = (x - mean) /
 * sqrt(var + epsilon) * scale + offset, rounded to x's type. */
static int eval_batch_norm(evaluator *e, const hlo_instr *in, const val *op, val *out)
{
    const hlo_array *x = op[0].a;
    const bool training = in->opcode == HLO_OP_BATCH_NORM_TRAINING;
    const int fi = (int)in->feature_index;
    const int64_t nf = x->shape.dims[fi];
    int64_t inner = 1;
    for (int d = fi + 1; d < x->shape.rank; d++)
        inner *= x->shape.dims[d];
    const double count = nf ? (double)(x->shape.elements / nf) : 0;
    hlo_array *y = hlo_array_new(x->shape.type, x->shape.rank, x->shape.dims);
    hlo_array *mean = training ? hlo_array_new(x->shape.type, 1, &nf) : NULL;
    hlo_array *var = training ? hlo_array_new(x->shape.type, 1, &nf) : NULL;
    double *sum = calloc(2 * (size_t)nf + 1, sizeof *sum);
    if (!y || (training && (!mean || !var)) || !sum ||
        (training && !(out->t = calloc(3, sizeof *out->t)))) {
        hlo_array_free(y);
        hlo_array_free(mean);
        hlo_array_free(var);
        free(sum);
        return he_fail(e, in, "out of memory");
    }
    double *m = sum, *v = sum + nf;
    for (int64_t f = 0; training && f < nf; f++) {
        for (int64_t i = f * inner; i < x->shape.elements; i += nf * inner)
            for (int64_t j = i; j < i + inner; j++)
                m[f] += hlo_array_get(x, j);
        m[f] = count ? m[f] / count : 0;
        for (int64_t i = f * inner; i < x->shape.elements; i += nf * inner)
            for (int64_t j = i; j < i + inner; j++)
                v[f] += (hlo_array_get(x, j) - m[f]) * (hlo_array_get(x, j) - m[f]);
        v[f] = count ? v[f] / count : 0;
        hlo_array_set(mean, f, m[f]);
        hlo_array_set(var, f, v[f]);
    }
    for (int64_t f = 0; !training && f < nf; f++) {
        m[f] = hlo_array_get(op[3].a, f);
        v[f] = hlo_array_get(op[4].a, f);
    }
    for (int64_t j = 0; j < x->shape.elements; j++) {
        const int64_t f = j / inner % nf;
        const double norm = (hlo_array_get(x, j) - m[f]) / sqrt(v[f] + in->epsilon);
        hlo_array_set(y, j, norm * hlo_array_get(op[1].a, f) + hlo_array_get(op[2].a, f));
    }
    free(sum);
    if (!training) {
        out->a = y;
        return 0;
    }
    out->n = 3;
    out->t[0].a = y;
    out->t[1].a = mean;
    out->t[2].a = var;
    return 0;
}

static int eval_reduce(evaluator *e, const hlo_instr *in, const val *ops, val *out)
{
    const hlo_array *s0 = ops[0].a;
    bool reduced[HLO_MAX_RANK] = {false};
    for (int j = 0; j < in->dimensions.n; j++)
        reduced[in->dimensions.v[j]] = true;
    /* Result dims and the input strides of kept and reduced dims. */
    int64_t st[HLO_MAX_RANK], kdims[HLO_MAX_RANK], kstep[HLO_MAX_RANK], rdims[HLO_MAX_RANK],
        rstep[HLO_MAX_RANK];
    int nkept = 0, nred = 0;
    int64_t nr = 1, nout = 1;
    he_strides(&s0->shape, st);
    for (int d = 0; d < s0->shape.rank; d++) {
        if (reduced[d]) {
            rdims[nred] = s0->shape.dims[d];
            rstep[nred++] = st[d];
            nr *= s0->shape.dims[d];
        } else {
            kdims[nkept] = s0->shape.dims[d];
            kstep[nkept++] = st[d];
            nout *= s0->shape.dims[d];
        }
    }
    folder fo = {0};
    if (folder_init(&fo, e, in, ops) || reduction_results(out, fo.n, ops, nkept, kdims)) {
        he_fail(e, in, "out of memory");
        goto error;
    }
    int64_t kidx[HLO_MAX_RANK] = {0};
    for (int64_t o = 0; o < nout; o++) {
        int64_t base = 0, ridx[HLO_MAX_RANK] = {0};
        for (int d = 0; d < nkept; d++)
            base += kidx[d] * kstep[d];
        fold_start(&fo, ops);
        for (int64_t j = 0; j < nr; j++) {
            int64_t at = base;
            for (int d = 0; d < nred; d++)
                at += ridx[d] * rstep[d];
            if (fold(&fo, ops, at))
                goto error;
            he_odometer(ridx, rdims, nred);
        }
        fold_store(&fo, out, o);
        he_odometer(kidx, kdims, nkept);
    }
    folder_free(&fo);
    return 0;
error:
    folder_free(&fo);
    he_val_free(out);
    return -1;
}

/* Each result element folds, from the init values, every window position in row-major order:
 * the input element there, or the init values where the position is padding or falls between
 * the elements of a dilated input. */
static int eval_reduce_window(evaluator *e, const hlo_instr *in, const val *ops, val *out)
{
    const hlo_shape *s0 = &ops[0].a->shape;
    const hlo_shape *rs = in->shape.type == HLO_TUPLE ? &in->shape.tuple[0] : &in->shape;
    const hlo_window *w = &in->window;
    int64_t st[HLO_MAX_RANK], size[HLO_MAX_RANK], oidx[HLO_MAX_RANK] = {0};
    he_strides(s0, st);
    for (int d = 0; d < w->rank; d++)
        size[d] = w->dims[d].size;
    folder fo = {0};
    if (folder_init(&fo, e, in, ops) || reduction_results(out, fo.n, ops, rs->rank, rs->dims)) {
        he_fail(e, in, "out of memory");
        goto error;
    }
    for (int64_t o = 0; o < rs->elements; o++) {
        int64_t k[HLO_MAX_RANK] = {0};
        fold_start(&fo, ops);
        do {
            int64_t at = 0;
            bool inside = true;
            for (int d = 0; d < w->rank && inside; d++) {
                const hlo_window_dim *wd = &w->dims[d];
                int64_t u = oidx[d] * wd->stride - wd->pad_lo + k[d] * wd->rhs_dilate;
                inside = u >= 0 && u % wd->lhs_dilate == 0 && u / wd->lhs_dilate < s0->dims[d];
                if (inside)
                    at += u / wd->lhs_dilate * st[d];
            }
            if (inside ? fold(&fo, ops, at) : fold(&fo, ops + fo.n, 0))
                goto error;
        } while (he_odometer(k, size, w->rank) >= 0);
        fold_store(&fo, out, o);
        he_odometer(oidx, rs->dims, rs->rank);
    }
    folder_free(&fo);
    return 0;
error:
    folder_free(&fo);
    he_val_free(out);
    return -1;
}

/* Convolution in the order hlo.h states: per result element, over the kernel's spatial
 * positions row-major (spatial dims in dim_labels order), then over the input features of the
 * element's group, skipping positions in the padding or between the elements of a dilated input.
 * Accumulates like eval_dot. */
static void eval_conv(const hlo_instr *in, const hlo_array *l, const hlo_array *r, hlo_array *o)
{
    const hlo_conv_dims *d = &in->dim_labels;
    const hlo_window *w = &in->window;
    int ns = d->n_spatial;
    int64_t ls[HLO_MAX_RANK], rs[HLO_MAX_RANK], size[HLO_MAX_RANK];
    he_strides(&l->shape, ls);
    he_strides(&r->shape, rs);
    for (int s = 0; s < ns; s++)
        size[s] = w->dims[s].size;
    const int64_t lf = ls[d->input_feature_dim], rf = rs[d->kernel_input_feature_dim];
    const int64_t cin = r->shape.dims[d->kernel_input_feature_dim];
    const int64_t kout = r->shape.dims[d->kernel_output_feature_dim];
    /* Result features per feature group and per batch group; input batch per batch group. */
    const int64_t per_group = kout / in->feature_group_count;
    const int64_t per_batch_group = kout / in->batch_group_count;
    const int64_t group_batch = l->shape.dims[d->input_batch_dim] / in->batch_group_count;
    int64_t idx[HLO_MAX_RANK] = {0};
    for (int64_t i = 0; i < o->shape.elements; i++) {
        int64_t f = idx[d->output_feature_dim];
        int64_t b = f / per_batch_group * group_batch + idx[d->output_batch_dim];
        int64_t lbase = b * ls[d->input_batch_dim] + f / per_group * cin * lf;
        int64_t rbase = f * rs[d->kernel_output_feature_dim];
        int64_t k[HLO_MAX_RANK] = {0};
        accumulator acc = acc_start(l, r, o);
        do {
            int64_t la = lbase, ra = rbase;
            bool inside = true;
            for (int s = 0; s < ns && inside; s++) {
                const hlo_window_dim *wd = &w->dims[s];
                int64_t u = idx[d->output_spatial_dims[s]] * wd->stride - wd->pad_lo +
                            k[s] * wd->rhs_dilate;
                inside = u >= 0 && u % wd->lhs_dilate == 0 &&
                         u / wd->lhs_dilate < l->shape.dims[d->input_spatial_dims[s]];
                if (inside) {
                    la += u / wd->lhs_dilate * ls[d->input_spatial_dims[s]];
                    ra += k[s] * rs[d->kernel_spatial_dims[s]];
                }
            }
            if (inside && acc.f32) { /* acc_add's float case on float pointers */
                const float *lp = (const float *)l->data + la, *rp = (const float *)r->data + ra;
                for (int64_t c = 0; c < cin; c++) {
                    float p = lp[c * lf] * rp[c * rf];
                    acc.f += p;
                }
            } else {
                for (int64_t c = 0; inside && c < cin; c++)
                    acc_add(&acc, l, la + c * lf, r, ra + c * rf);
            }
        } while (he_odometer(k, size, ns) >= 0);
        acc_store(&acc, o, i);
        he_odometer(idx, o->shape.dims, o->shape.rank);
    }
}

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
    case HLO_OP_DOT: return eval_dot(in, a[0], a[1], o) ? he_fail(e, in, "out of memory") : 0;
    case HLO_OP_CONVOLUTION: eval_conv(in, a[0], a[1], o); return 0;
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

/* A custom-call through the hook: the hook's arrays become out (a tuple of them when the
 * instruction's shape is one) once they prove to be new arrays of the promised shapes. */
static int eval_custom_call(evaluator *e, const hlo_instr *in, const val *op, val *out)
{
    if (!e->hooks->custom_call)
        return he_fail(e, in, "no custom_call hook to evaluate target \"%s\"",
                       in->custom_call_target);
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
    if (e->hooks->custom_call(e->hooks->ctx, in, ins, n_ins, outs, n, &why)) {
        rc = he_fail(e, in, "%s", why.msg[0] ? why.msg : "the hook failed without a message");
        goto done;
    }
    for (int i = 0; i < n && !rc; i++) {
        const hlo_shape *want = tuple ? &in->shape.tuple[i] : &in->shape;
        char b1[160], b2[160];
        if (!outs[i] || !hlo_shape_equal(&outs[i]->shape, want))
            rc = he_fail(e, in, "the hook for target \"%s\" returned %s for result %d, expected %s",
                         in->custom_call_target,
                         outs[i] ? hlo_shape_str(&outs[i]->shape, b1, sizeof b1) : "nothing", i,
                         hlo_shape_str(want, b2, sizeof b2));
        else if (in_list(outs[i], ins, n_ins) || in_list(outs[i], outs, i))
            rc = he_fail(e, in,
                         "the hook for target \"%s\" returned an operand or one array twice "
                         "as result %d",
                         in->custom_call_target, i);
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
    case HLO_OP_REDUCE: rc = eval_reduce(e, in, op, out); break;
    case HLO_OP_BATCH_NORM_TRAINING:
    case HLO_OP_BATCH_NORM_INFERENCE: rc = eval_batch_norm(e, in, op, out); break;
    case HLO_OP_REDUCE_WINDOW: rc = eval_reduce_window(e, in, op, out); break;
    case HLO_OP_CUSTOM_CALL: rc = eval_custom_call(e, in, op, out); break;
    case HLO_OP_WHILE:
    case HLO_OP_CONDITIONAL:
    case HLO_OP_SORT:
    case HLO_OP_MAP:
    case HLO_OP_SCATTER: rc = he_control(e, in, op, out); break;
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
    evaluator e = {m, file, err, hooks ? hooks : &no_hooks};
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
    evaluator e = {m, file, err, &no_hooks};
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
    case HLO_OP_CUSTOM_CALL: return he_fail(&e, in, "'%s' is not evaluated on its own", in->name);
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

/* hlo_eval_reduce.c - the evaluator's ops that sum or fold many elements into one
 * (hlo_eval_internal.h): dot and convolution, each result element in one accumulator of XLA's
 * type and order, reduce and reduce-window, which fold with their to_apply (directly when it is a
 * plain binary op), batch norm, and the sum of an all-reduce's replicas. */
#include "hlo/hlo_eval_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

int he_dot(const hlo_instr *in, const hlo_array *l, const hlo_array *r, hlo_array *o)
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

/* Sets up fo for reduction in and its results *out: n arrays of the inputs' types and the
 * given dims, a tuple of them when n > 1. Returns 0, or -1 (reported) when out of memory. */
static int folder_init(folder *fo, evaluator *e, const hlo_instr *in, const val *ops, val *out,
                       int rank, const int64_t *dims)
{
    fo->e = e;
    fo->f = &e->m->comps[in->to_apply];
    const int n = fo->n = in->n_operands / 2;
    fo->fast = n == 1 ? simple_reducer(fo->f) : HLO_OP_OTHER;
    if (!(fo->args = calloc(2 * (size_t)n, sizeof *fo->args)))
        return he_fail(e, in, "out of memory");
    for (int i = 0; i < 2 * n; i++)
        if (!(fo->args[i].a = hlo_array_new(ops[i % n].a->shape.type, 0, NULL)))
            return he_fail(e, in, "out of memory");
    if (n > 1 && !(out->t = calloc((size_t)n, sizeof *out->t)))
        return he_fail(e, in, "out of memory");
    out->n = n > 1 ? n : 0;
    for (int i = 0; i < n; i++)
        if (!(*(n > 1 ? &out->t[i].a : &out->a) = hlo_array_new(ops[i].a->shape.type, rank, dims)))
            return he_fail(e, in, "out of memory");
    return 0;
}

/* Frees fo, and the results too when rc is not 0; returns rc. */
static int folder_end(folder *fo, val *out, int rc)
{
    for (int i = 0; fo->args && i < 2 * fo->n; i++)
        he_val_free(&fo->args[i]);
    free(fo->args);
    if (rc)
        he_val_free(out);
    return rc;
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
    if (he_apply(fo->e, fo->f, fo->args, &r))
        return -1;
    for (int i = 0; i < fo->n; i++)
        he_copy(fo->args[i].a, 0, fo->n > 1 ? r.t[i].a : r.a, 0);
    he_val_free(&r);
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
    if (folder_init(&fo, e, in, ops, out, nkept, kdims))
        return folder_end(&fo, out, -1);
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
                return folder_end(&fo, out, -1);
            he_odometer(ridx, rdims, nred);
        }
        fold_store(&fo, out, o);
        he_odometer(kidx, kdims, nkept);
    }
    return folder_end(&fo, out, 0);
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
    if (folder_init(&fo, e, in, ops, out, rs->rank, rs->dims))
        return folder_end(&fo, out, -1);
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
                return folder_end(&fo, out, -1);
        } while (he_odometer(k, size, w->rank) >= 0);
        fold_store(&fo, out, o);
        he_odometer(oidx, rs->dims, rs->rank);
    }
    return folder_end(&fo, out, 0);
}

/* Convolution in the order hlo.h states: per result element, over the kernel's spatial
 * positions row-major (spatial dims in dim_labels order), then over the input features of the
 * element's group, skipping positions in the padding or between the elements of a dilated input.
 * Accumulates like he_dot. */
void he_conv(const hlo_instr *in, const hlo_array *l, const hlo_array *r, hlo_array *o)
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

int he_reduction(evaluator *e, const hlo_instr *in, const val *op, val *out)
{
    switch (in->opcode) {
    case HLO_OP_REDUCE: return eval_reduce(e, in, op, out);
    case HLO_OP_REDUCE_WINDOW: return eval_reduce_window(e, in, op, out);
    default: return eval_batch_norm(e, in, op, out);
    }
}

/* Element by element, replica by replica in order: the fold hlo.h promises. */
static int combine_one(evaluator *e, const hlo_instr *in, hlo_opcode fast,
                       hlo_array *const *const *replicas, int n_replicas, int k, hlo_array *o)
{
    const hlo_array *r0 = replicas[0][k];
    memcpy(o->data, r0->data, (size_t)r0->shape.elements * hlo_type_size(r0->shape.type));
    if (fast != HLO_OP_OTHER) {
        for (int r = 1; r < n_replicas; r++)
            for (int64_t i = 0; i < o->shape.elements; i++)
                he_binop(fast, o, i, o, i, replicas[r][k], i);
        return 0;
    }
    val args[2] = {{hlo_array_new(o->shape.type, 0, NULL), 0, NULL},
                   {hlo_array_new(o->shape.type, 0, NULL), 0, NULL}};
    int rc = args[0].a && args[1].a ? 0 : he_fail(e, in, "out of memory");
    for (int64_t i = 0; i < o->shape.elements && !rc; i++)
        for (int r = 1; r < n_replicas && !rc; r++) {
            he_copy(args[0].a, 0, o, i);
            he_copy(args[1].a, 0, replicas[r][k], i);
            val res;
            if (!(rc = he_apply(e, &e->m->comps[in->to_apply], args, &res))) {
                he_copy(o, i, res.a, 0);
                he_val_free(&res);
            }
        }
    he_val_free(&args[0]);
    he_val_free(&args[1]);
    return rc;
}

int hlo_all_reduce_combine(const hlo_module *m, const char *file, const hlo_instr *in,
                           hlo_array *const *const *replicas, int n_replicas, hlo_array **outs,
                           hlo_error *err)
{
    static const hlo_eval_hooks no_hooks;
    evaluator e = {.m = m, .file = file, .err = err, .hooks = &no_hooks};
    const hlo_opcode fast = simple_reducer(&m->comps[in->to_apply]);
    int rc = 0;
    for (int k = 0; k < in->n_operands; k++)
        outs[k] = NULL;
    for (int k = 0; k < in->n_operands && !rc; k++) {
        const hlo_shape *s = &replicas[0][k]->shape;
        rc = (outs[k] = hlo_array_new(s->type, s->rank, s->dims))
                 ? combine_one(&e, in, fast, replicas, n_replicas, k, outs[k])
                 : he_fail(&e, in, "out of memory");
    }
    for (int k = 0; k < in->n_operands && rc; k++) {
        hlo_array_free(outs[k]);
        outs[k] = NULL;
    }
    return rc;
}

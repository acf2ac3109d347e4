/* hlo_check_reduce.c - shape checking of the ops that contract or reduce (hlo_check_internal.h):
 * dot, convolution, reduce, reduce-window and batch-norm, after XLA's shape_inference.cc
 * (InferDotOpShape, InferConvolveShape, InferReduceShape, InferReduceWindowShape and the
 * batch-norm shapes): contracting and batch dims, windows, dim_labels, group counts, reducers. */
#include "hlo/hlo_check_internal.h"

#include <stdio.h>
#include <string.h>

/* The rest of a reduce or reduce-window of n = operands / 2 inputs, want holding the result's
 * dims: inputs of input 0's dims, init values that are scalars of their input's type, a to_apply
 * that takes (accumulators, elements) and returns the accumulators, results of the inputs'
 * types (a tuple of them when n > 1). */
static int check_reduction(checker *k, hlo_shape want)
{
    const hlo_instr *in = k->in;
    int n = in->n_operands / 2;
    const hlo_shape *s0 = hc_operand(k, 0);
    const hlo_computation *f = &k->m->comps[in->to_apply];
    if (hc_param_count(f) != 2 * n)
        return hc_fail(k, "to_apply '%s' has %d parameters, needs %d", f->name, hc_param_count(f),
                       2 * n);
    const hlo_shape *root = &f->instrs[f->root].shape;
    if (n > 1 && (root->type != HLO_TUPLE || root->n_tuple != n))
        return hc_fail(k, "to_apply '%s' must return a tuple of %d scalars", f->name, n);
    if (n > 1 && (in->shape.type != HLO_TUPLE || in->shape.n_tuple != n))
        return hc_fail(k, "result must be a tuple of %d arrays", n);
    for (int i = 0; i < n; i++) {
        const hlo_shape *s = hc_operand(k, i), *init = hc_operand(k, n + i);
        if (hc_need_array(k, s, "an input"))
            return -1;
        if (!hc_same_dims(s, s0)) {
            shape_strs t = hc_strs(s, s0);
            return hc_fail(k, "input %d has shape %s but input 0 has %s", i, t.a, t.b);
        }
        if (!hc_is_array(init) || init->rank || init->type != s->type) {
            shape_strs t = hc_strs(init, s);
            return hc_fail(k, "init value %d has shape %s, must be a scalar of input %s's type", i,
                           t.a, t.b);
        }
        for (int j = 0; j < 2; j++)
            if (!hlo_shape_equal(hc_param_shape(f, i + j * n), init)) {
                shape_strs t = hc_strs(hc_param_shape(f, i + j * n), init);
                return hc_fail(k, "parameter %d of to_apply '%s' is %s, must be %s", i + j * n,
                               f->name, t.a, t.b);
            }
        const hlo_shape *r = n > 1 ? &root->tuple[i] : root;
        if (!hlo_shape_equal(r, init)) {
            shape_strs t = hc_strs(r, init);
            return hc_fail(k, "to_apply '%s' returns %s, must be %s", f->name, t.a, t.b);
        }
        want.type = s->type;
        const hlo_shape *res = n > 1 ? &in->shape.tuple[i] : &in->shape;
        if (!hlo_shape_equal(res, &want)) {
            shape_strs t = hc_strs(res, &want);
            return hc_fail(k, "result %s, expected %s", t.a, t.b);
        }
    }
    return 0;
}

/* Operands: n inputs, then n init values; a to_apply. */
static int check_reduction_operands(checker *k)
{
    const hlo_instr *in = k->in;
    if (in->n_operands < 2 || in->n_operands % 2)
        return hc_fail(k, "expects inputs and as many init values, has %d operands",
                       in->n_operands);
    if (in->to_apply < 0)
        return hc_fail(k, "missing to_apply");
    return 0;
}

static int check_reduce(checker *k)
{
    const hlo_instr *in = k->in;
    if (check_reduction_operands(k))
        return -1;
    if (!in->dimensions.present)
        return hc_fail(k, "missing dimensions");
    const hlo_shape *s0 = hc_operand(k, 0);
    if (hc_need_array(k, s0, "operand 0") ||
        hc_check_dim_list(k, &in->dimensions, s0->rank, "dimension"))
        return -1;
    /* Each input keeps the dims not reduced, in order. */
    hlo_shape want = {.type = HLO_PRED, .rank = 0, .elements = 1};
    for (int d = 0; d < s0->rank; d++) {
        bool reduced = false;
        for (int j = 0; j < in->dimensions.n; j++)
            reduced |= in->dimensions.v[j] == d;
        if (!reduced)
            want.dims[want.rank++] = s0->dims[d];
    }
    return check_reduction(k, want);
}

int hc_check_window(checker *k, const int64_t *base, int n, const char *what_n, int64_t *out)
{
    const hlo_window *w = &k->in->window;
    if (!w->present && n > 0)
        return hc_fail(k, "missing window");
    if (w->rank != n)
        return hc_fail(k, "window has %d dims but %s", w->rank, what_n);
    for (int i = 0; i < n; i++) {
        const hlo_window_dim *d = &w->dims[i];
        const struct {
            const char *name;
            int64_t v;
        } at_least_1[] = {{"size", d->size},
                          {"stride", d->stride},
                          {"lhs_dilate", d->lhs_dilate},
                          {"rhs_dilate", d->rhs_dilate}};
        for (int j = 0; j < 4; j++)
            if (at_least_1[j].v < 1)
                return hc_fail(k, "window dim %d has %s %lld, must be at least 1", i,
                               at_least_1[j].name, (long long)at_least_1[j].v);
        /* At most 2^31 * 2^31 + 2^32: no overflow. */
        int64_t padded = (base[i] ? (base[i] - 1) * d->lhs_dilate + 1 : 0) + d->pad_lo + d->pad_hi;
        int64_t span = (d->size - 1) * d->rhs_dilate + 1;
        out[i] = span > padded ? 0 : (padded - span) / d->stride + 1;
    }
    return 0;
}

static int check_reduce_window(checker *k)
{
    if (check_reduction_operands(k))
        return -1;
    const hlo_shape *s0 = hc_operand(k, 0);
    if (hc_need_array(k, s0, "operand 0"))
        return -1;
    char what_n[48];
    snprintf(what_n, sizeof what_n, "the operand has rank %d", s0->rank);
    hlo_shape want = {.type = HLO_PRED, .rank = s0->rank};
    if (hc_check_window(k, s0->dims, s0->rank, what_n, want.dims))
        return -1;
    return check_reduction(k, want);
}

/* One operand's dims in dim_labels: a permutation of its rank's. */
static int check_labels(checker *k, const hlo_shape *s, int a, int b, const int *spatial,
                        const char *operand)
{
    const hlo_conv_dims *d = &k->in->dim_labels;
    int rank = d->n_spatial + 2;
    if (s->rank != rank)
        return hc_fail(k, "%s has rank %d but dim_labels have %d dims", operand, s->rank, rank);
    bool seen[HLO_MAX_RANK] = {false};
    for (int i = 0; i < rank; i++) {
        int dim = i == 0 ? a : i == 1 ? b : spatial[i - 2];
        if (dim < 0 || dim >= rank || seen[dim])
            return hc_fail(k, "dim_labels of the %s are not a permutation of its dims", operand);
        seen[dim] = true;
    }
    return 0;
}

static int type_bits(hlo_type t)
{
    return t == HLO_S8 || t == HLO_U8     ? 8
           : t == HLO_S16 || t == HLO_U16 ? 16
           : t == HLO_S32 || t == HLO_U32 ? 32
                                          : 64;
}

/* After XLA's InferConvolveShape, the result's element type being the preferred one. */
static int check_convolution(checker *k)
{
    const hlo_instr *in = k->in;
    const hlo_conv_dims *d = &in->dim_labels;
    const hlo_shape *l, *r;
    if (hc_arity(k) || hc_need_array(k, l = hc_operand(k, 0), "lhs") ||
        hc_need_array(k, r = hc_operand(k, 1), "rhs") || hc_need_array(k, &in->shape, "the result"))
        return -1;
    hlo_type t = in->shape.type;
    if (l->type != r->type && !(l->type == HLO_U8 && r->type == HLO_S8 && t == HLO_S32))
        return hc_fail(k, "lhs element type %s differs from rhs %s (only u8 x s8 -> s32 may mix)",
                       hlo_type_name(l->type), hlo_type_name(r->type));
    if (!hc_is_int(l->type) && !hlo_is_float(l->type))
        return hc_fail(k, "element type %s is not integral or floating point",
                       hlo_type_name(l->type));
    if (hlo_is_float(l->type) ? !hlo_is_float(t)
                              : !hc_is_int(t) || type_bits(t) < type_bits(l->type))
        return hc_fail(k, "result element type %s cannot accumulate %s", hlo_type_name(t),
                       hlo_type_name(l->type));
    if (!d->present)
        return hc_fail(k, "missing dim_labels");
    if (check_labels(k, l, d->input_batch_dim, d->input_feature_dim, d->input_spatial_dims,
                     "lhs") ||
        check_labels(k, r, d->kernel_input_feature_dim, d->kernel_output_feature_dim,
                     d->kernel_spatial_dims, "rhs") ||
        check_labels(k, &in->shape, d->output_batch_dim, d->output_feature_dim,
                     d->output_spatial_dims, "result"))
        return -1;
    int64_t g = in->feature_group_count, bg = in->batch_group_count;
    int64_t batch = l->dims[d->input_batch_dim], features = l->dims[d->input_feature_dim];
    int64_t kin = r->dims[d->kernel_input_feature_dim];
    int64_t kout = r->dims[d->kernel_output_feature_dim];
    if (g < 1 || bg < 1)
        return hc_fail(k, "feature_group_count %lld and batch_group_count %lld must be at least 1",
                       (long long)g, (long long)bg);
    if (g > 1 && bg > 1)
        return hc_fail(k,
                       "feature_group_count %lld and batch_group_count %lld: at most one may be "
                       "above 1",
                       (long long)g, (long long)bg);
    if (features != kin * g)
        return hc_fail(k,
                       "lhs feature dim %d has size %lld, must be rhs input features %lld x "
                       "feature_group_count %lld",
                       d->input_feature_dim, (long long)features, (long long)kin, (long long)g);
    if (kout % g)
        return hc_fail(k,
                       "rhs output feature dim %d has size %lld, not a multiple of "
                       "feature_group_count %lld",
                       d->kernel_output_feature_dim, (long long)kout, (long long)g);
    if (batch % bg)
        return hc_fail(k,
                       "lhs batch dim %d has size %lld, not a multiple of batch_group_count %lld",
                       d->input_batch_dim, (long long)batch, (long long)bg);
    if (kout % bg)
        return hc_fail(k,
                       "rhs output feature dim %d has size %lld, not a multiple of "
                       "batch_group_count %lld",
                       d->kernel_output_feature_dim, (long long)kout, (long long)bg);
    int64_t base[HLO_MAX_RANK], out[HLO_MAX_RANK];
    for (int i = 0; i < d->n_spatial; i++)
        base[i] = l->dims[d->input_spatial_dims[i]];
    char what_n[48];
    snprintf(what_n, sizeof what_n, "dim_labels have %d spatial dims", d->n_spatial);
    if (hc_check_window(k, base, d->n_spatial, what_n, out))
        return -1;
    for (int i = 0; i < d->n_spatial; i++)
        if (in->window.dims[i].size != r->dims[d->kernel_spatial_dims[i]])
            return hc_fail(k,
                           "window dim %d has size %lld but rhs spatial dim %d (dim %d) has size "
                           "%lld",
                           i, (long long)in->window.dims[i].size, i, d->kernel_spatial_dims[i],
                           (long long)r->dims[d->kernel_spatial_dims[i]]);
    hlo_shape want = {.type = t, .rank = d->n_spatial + 2};
    want.dims[d->output_batch_dim] = batch / bg;
    want.dims[d->output_feature_dim] = kout;
    for (int i = 0; i < d->n_spatial; i++)
        want.dims[d->output_spatial_dims[i]] = out[i];
    if (!hc_same_dims(&in->shape, &want)) {
        shape_strs s = hc_strs(&in->shape, &want);
        return hc_fail(k, "result %s, expected %s", s.a, s.b);
    }
    return 0;
}

/* One side of a dot: contracting and batch dims in range, distinct, not shared. */
static int dot_side(checker *k, const hlo_shape *s, const hlo_ints *con, const hlo_ints *bat,
                    const char *side, bool *used)
{
    char what[64];
    snprintf(what, sizeof what, "%s contracting dim", side);
    if (hc_check_dim_list(k, con, s->rank, what))
        return -1;
    snprintf(what, sizeof what, "%s batch dim", side);
    if (hc_check_dim_list(k, bat, s->rank, what))
        return -1;
    memset(used, 0, sizeof(bool) * HLO_MAX_RANK);
    for (int i = 0; i < con->n; i++)
        used[con->v[i]] = true;
    for (int i = 0; i < bat->n; i++) {
        if (used[bat->v[i]])
            return hc_fail(k, "%s dim %lld is both batch and contracting", side,
                           (long long)bat->v[i]);
        used[bat->v[i]] = true;
    }
    return 0;
}

static int check_dot(checker *k)
{
    const hlo_instr *in = k->in;
    const hlo_shape *l, *r;
    if (hc_arity(k) || hc_need_array(k, l = hc_operand(k, 0), "lhs") ||
        hc_need_array(k, r = hc_operand(k, 1), "rhs") || hc_need_array(k, &in->shape, "the result"))
        return -1;
    const hlo_ints *lc = &in->lhs_contracting_dims, *rc = &in->rhs_contracting_dims;
    const hlo_ints *lb = &in->lhs_batch_dims, *rb = &in->rhs_batch_dims;
    if (l->type != r->type)
        return hc_fail(k, "lhs element type %s differs from rhs %s", hlo_type_name(l->type),
                       hlo_type_name(r->type));
    hlo_type t = in->shape.type;
    if (t != l->type && !(hc_is_int(t) && hc_is_int(l->type)) &&
        !(hlo_is_float(t) && hlo_is_float(l->type)))
        return hc_fail(k, "result element type %s cannot accumulate %s", hlo_type_name(t),
                       hlo_type_name(l->type));
    if (lc->n != rc->n)
        return hc_fail(k, "%d lhs contracting dims but %d rhs", lc->n, rc->n);
    if (lb->n != rb->n)
        return hc_fail(k, "%d lhs batch dims but %d rhs", lb->n, rb->n);
    bool lused[HLO_MAX_RANK], rused[HLO_MAX_RANK];
    if (dot_side(k, l, lc, lb, "lhs", lused) || dot_side(k, r, rc, rb, "rhs", rused))
        return -1;
    for (int i = 0; i < lc->n; i++)
        if (l->dims[lc->v[i]] != r->dims[rc->v[i]])
            return hc_fail(k,
                           "lhs contracting dim %lld has size %lld but rhs contracting dim %lld "
                           "has size %lld",
                           (long long)lc->v[i], (long long)l->dims[lc->v[i]], (long long)rc->v[i],
                           (long long)r->dims[rc->v[i]]);
    for (int i = 0; i < lb->n; i++)
        if (l->dims[lb->v[i]] != r->dims[rb->v[i]])
            return hc_fail(k,
                           "lhs batch dim %lld has size %lld but rhs batch dim %lld has size %lld",
                           (long long)lb->v[i], (long long)l->dims[lb->v[i]], (long long)rb->v[i],
                           (long long)r->dims[rb->v[i]]);
    /* Result: batch dims, then lhs free dims, then rhs free dims, each in order. */
    int rank = l->rank + r->rank - lb->n - 2 * lc->n;
    if (rank != in->shape.rank)
        return hc_fail(k, "result has rank %d, expected %d", in->shape.rank, rank);
    hlo_shape want = {.type = t, .rank = 0};
    for (int i = 0; i < lb->n; i++)
        want.dims[want.rank++] = l->dims[lb->v[i]];
    for (int d = 0; d < l->rank; d++)
        if (!lused[d])
            want.dims[want.rank++] = l->dims[d];
    for (int d = 0; d < r->rank; d++)
        if (!rused[d])
            want.dims[want.rank++] = r->dims[d];
    if (!hc_same_dims(&in->shape, &want)) {
        shape_strs s = hc_strs(&in->shape, &want);
        return hc_fail(k, "result %s, expected %s", s.a, s.b);
    }
    return 0;
}

/* batch-norm-training(x, scale, offset) -> (x's shape, [F], [F]) and batch-norm-inference(x,
 * scale, offset, mean, variance) -> x's shape: x a float array, F its dim feature_index, every
 * other operand of x's type and dims [F]. */
static int check_batch_norm(checker *k)
{
    const bool training = k->in->opcode == HLO_OP_BATCH_NORM_TRAINING;
    if (hc_arity(k))
        return -1;
    const hlo_shape *x = hc_operand(k, 0);
    if (hc_need_array(k, x, "the operand"))
        return -1;
    if (!hlo_is_float(x->type))
        return hc_fail(k, "operand must be floating point, is %s", hlo_type_name(x->type));
    if (k->in->feature_index < 0 || k->in->feature_index >= x->rank)
        return hc_fail(k, "feature_index %lld out of range for rank %d",
                       (long long)k->in->feature_index, x->rank);
    hlo_shape f = {.type = x->type, .rank = 1, .elements = x->dims[k->in->feature_index]};
    f.dims[0] = f.elements;
    for (int i = 1; i < k->in->n_operands; i++)
        if (!hlo_shape_equal(hc_operand(k, i), &f)) {
            shape_strs t = hc_strs(hc_operand(k, i), &f);
            return hc_fail(k, "operand %d is %s, expected %s", i, t.a, t.b);
        }
    const hlo_shape parts[3] = {*x, f, f};
    const hlo_shape want =
        training ? (hlo_shape){.type = HLO_TUPLE, .n_tuple = 3, .tuple = (hlo_shape *)parts} : *x;
    if (!hlo_shape_equal(&k->in->shape, &want)) {
        shape_strs t = hc_strs(&k->in->shape, &want);
        return hc_fail(k, "result %s, expected %s", t.a, t.b);
    }
    return 0;
}

int hc_check_reduce_op(checker *k)
{
    switch (k->in->opcode) {
    case HLO_OP_REDUCE: return check_reduce(k);
    case HLO_OP_DOT: return check_dot(k);
    case HLO_OP_CONVOLUTION: return check_convolution(k);
    case HLO_OP_REDUCE_WINDOW: return check_reduce_window(k);
    default: return check_batch_norm(k);
    }
}

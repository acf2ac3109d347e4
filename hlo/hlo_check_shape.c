/* hlo_check_shape.c - shape checking of data movement (slice, concatenate, reverse,
 * dynamic-slice, dynamic-update-slice), gather, scatter, sort, map, control flow (while,
 * conditional) and all-reduce, after XLA's shape_inference.cc and hlo_verifier.cc
 * (hlo_check_internal.h). */
#include "hlo/hlo_check_internal.h"

#include <stdio.h>

static int check_result(checker *k, const hlo_shape *want)
{
    if (!hlo_shape_equal(&k->in->shape, want)) {
        shape_strs t = hc_strs(&k->in->shape, want);
        return hc_fail(k, "result %s, expected %s", t.a, t.b);
    }
    return 0;
}

/* slice={[start:limit:stride], ...}: 0 <= start <= limit <= dim, ceil((limit - start) / stride)
 * elements per dim. */
static int check_slice(checker *k)
{
    const hlo_instr *in = k->in;
    if (hc_arity(k) || hc_operand_result(k))
        return -1;
    const hlo_shape *s = hc_operand(k, 0);
    if (!in->slice_start.present)
        return hc_fail(k, "missing slice");
    if (in->slice_start.n != s->rank)
        return hc_fail(k, "slice has %d dims but the operand has rank %d", in->slice_start.n,
                       s->rank);
    hlo_shape want = *s;
    for (int d = 0; d < s->rank; d++) {
        const int64_t lo = in->slice_start.v[d], hi = in->slice_limit.v[d];
        if (lo > hi || hi > s->dims[d])
            return hc_fail(k, "dim %d: slice [%lld:%lld] is not within 0..%lld", d, (long long)lo,
                           (long long)hi, (long long)s->dims[d]);
        want.dims[d] = (hi - lo + in->slice_stride.v[d] - 1) / in->slice_stride.v[d];
    }
    return check_result(k, &want);
}

/* Operands of one rank and type, equal but in dimensions={d}, which the result sums. */
static int check_concatenate(checker *k)
{
    const hlo_instr *in = k->in;
    if (in->n_operands < 1)
        return hc_fail(k, "expects at least one operand");
    if (hc_operand_result(k))
        return -1;
    if (!in->dimensions.present || in->dimensions.n != 1)
        return hc_fail(k, "dimensions must name one dimension");
    const hlo_shape *s0 = hc_operand(k, 0);
    if (hc_check_dim_list(k, &in->dimensions, s0->rank, "dimension"))
        return -1;
    const int d = (int)in->dimensions.v[0];
    hlo_shape want = *s0;
    for (int i = 1; i < in->n_operands; i++) {
        const hlo_shape *s = hc_operand(k, i);
        bool same = hc_is_array(s) && s->type == s0->type && s->rank == s0->rank;
        for (int j = 0; same && j < s->rank; j++)
            same = j == d || s->dims[j] == s0->dims[j];
        if (!same) {
            shape_strs t = hc_strs(s, s0);
            return hc_fail(k, "operand %d is %s, does not match operand 0 %s but in dim %d", i, t.a,
                           t.b, d);
        }
        want.dims[d] += s->dims[d];
    }
    want.elements = 1;
    for (int j = 0; j < want.rank; j++)
        want.elements *= want.dims[j];
    return check_result(k, &want);
}

static int check_reverse(checker *k)
{
    if (hc_arity(k) || hc_operand_result(k))
        return -1;
    if (!k->in->dimensions.present)
        return hc_fail(k, "missing dimensions");
    if (hc_check_dim_list(k, &k->in->dimensions, hc_operand(k, 0)->rank, "dimension"))
        return -1;
    return check_result(k, hc_operand(k, 0));
}

/* Operands first.. (one per dim of operand 0): integer scalars of one type. */
static int check_start_indices(checker *k, int first)
{
    const int rank = hc_operand(k, 0)->rank;
    if (k->in->n_operands != first + rank)
        return hc_fail(k, "expects %d start indices (the operand's rank), has %d", rank,
                       k->in->n_operands - first);
    for (int i = first; i < k->in->n_operands; i++) {
        const hlo_shape *s = hc_operand(k, i);
        if (!hc_is_array(s) || s->rank || !hc_is_int(s->type) ||
            s->type != hc_operand(k, first)->type) {
            shape_strs t = hc_strs(s, hc_operand(k, first));
            return hc_fail(k, "start index %d is %s, must be an integer scalar like the first, %s",
                           i - first, t.a, t.b);
        }
    }
    return 0;
}

static int check_dynamic_slice(checker *k)
{
    const hlo_instr *in = k->in;
    if (in->n_operands < 1)
        return hc_fail(k, "expects an operand and start indices");
    if (hc_operand_result(k) || check_start_indices(k, 1))
        return -1;
    const hlo_shape *s = hc_operand(k, 0);
    if (!in->dynamic_slice_sizes.present)
        return hc_fail(k, "missing dynamic_slice_sizes");
    if (in->dynamic_slice_sizes.n != s->rank)
        return hc_fail(k, "dynamic_slice_sizes has %d entries but the operand has rank %d",
                       in->dynamic_slice_sizes.n, s->rank);
    hlo_shape want = *s;
    want.elements = 1;
    for (int d = 0; d < s->rank; d++) {
        if (in->dynamic_slice_sizes.v[d] > s->dims[d])
            return hc_fail(k, "dynamic_slice_sizes[%d] = %lld exceeds the operand's dim %lld", d,
                           (long long)in->dynamic_slice_sizes.v[d], (long long)s->dims[d]);
        want.elements *= want.dims[d] = in->dynamic_slice_sizes.v[d];
    }
    return check_result(k, &want);
}

static int check_dynamic_update_slice(checker *k)
{
    if (k->in->n_operands < 2)
        return hc_fail(k, "expects an operand, an update and start indices");
    if (hc_operand_result(k) || check_start_indices(k, 2))
        return -1;
    const hlo_shape *s = hc_operand(k, 0), *u = hc_operand(k, 1);
    bool fits = hc_is_array(u) && u->type == s->type && u->rank == s->rank;
    for (int d = 0; fits && d < s->rank; d++)
        fits = u->dims[d] <= s->dims[d];
    if (!fits) {
        shape_strs t = hc_strs(u, s);
        return hc_fail(k, "update %s does not fit in the operand %s", t.a, t.b);
    }
    return check_result(k, s);
}

static bool listed(const hlo_ints *l, int64_t v)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i] == v)
            return true;
    return false;
}

/* Dim list i of the instruction's dimension numbers: present unless a batching list, increasing
 * when asked, each in 0..rank-1. */
static int dim_numbers_list(checker *k, int i, int rank, bool sorted)
{
    const bool scatter = k->in->opcode == HLO_OP_SCATTER;
    const char *what = hlo_gather_list_name(scatter, i);
    const hlo_ints *l = hlo_gather_list((hlo_gather_dims *)&k->in->gather, i);
    if (!l->present && i != 3 && i != 4)
        return hc_fail(k, "missing %s", what);
    if (hc_check_dim_list(k, l, rank, what))
        return -1;
    for (int j = 1; sorted && j < l->n; j++)
        if (l->v[j] < l->v[j - 1])
            return hc_fail(k, "%s must be sorted", what);
    return 0;
}

/* A gather's or scatter's dimension numbers (hlo.h's hlo_gather_dims) over operand s and
 * indices ix, its window (a gather's result, a scatter's updates) of rank `rank`, as XLA's
 * InferGatherShape and InferScatterShape check them. */
static int check_dim_numbers(checker *k, const hlo_shape *s, const hlo_shape *ix, int rank)
{
    const hlo_gather_dims *g = &k->in->gather;
    const bool sc = k->in->opcode == HLO_OP_SCATTER;
    if (!hc_is_array(ix) || !hc_is_int(ix->type))
        return hc_fail(k, "the indices must be an integer array");
    if (g->index_vector_dim < 0)
        return hc_fail(k, "missing index_vector_dim");
    if (g->index_vector_dim > ix->rank)
        return hc_fail(k, "index_vector_dim %lld out of range for indices of rank %d",
                       (long long)g->index_vector_dim, ix->rank);
    const int ivd = (int)g->index_vector_dim;
    const int64_t vec = ivd < ix->rank ? ix->dims[ivd] : 1;
    if (dim_numbers_list(k, 0, rank, true) || dim_numbers_list(k, 1, s->rank, true) ||
        dim_numbers_list(k, 3, s->rank, true) || dim_numbers_list(k, 4, ix->rank, false) ||
        dim_numbers_list(k, 2, s->rank, false))
        return -1;
    if (g->start_index_map.n != vec)
        return hc_fail(k, "%s has %d entries but index vectors have %lld",
                       hlo_gather_list_name(sc, 2), g->start_index_map.n, (long long)vec);
    if (g->operand_batching_dims.n != g->start_indices_batching_dims.n)
        return hc_fail(k, "%d %s but %d %s", g->operand_batching_dims.n,
                       hlo_gather_list_name(sc, 3), g->start_indices_batching_dims.n,
                       hlo_gather_list_name(sc, 4));
    const int n = g->offset_dims.n + g->collapsed_slice_dims.n + g->operand_batching_dims.n;
    if (n != s->rank)
        return hc_fail(k, "%s, %s and %s have %d entries together, the operand's rank is %d",
                       hlo_gather_list_name(sc, 0), hlo_gather_list_name(sc, 1),
                       hlo_gather_list_name(sc, 3), n, s->rank);
    for (int d = 0; d < s->rank; d++) {
        const bool batching = listed(&g->operand_batching_dims, d);
        if (batching && listed(&g->collapsed_slice_dims, d))
            return hc_fail(k, "dim %d is in both %s and %s", d, hlo_gather_list_name(sc, 1),
                           hlo_gather_list_name(sc, 3));
        if (batching && listed(&g->start_index_map, d))
            return hc_fail(k, "dim %d is in both %s and %s", d, hlo_gather_list_name(sc, 3),
                           hlo_gather_list_name(sc, 2));
    }
    for (int i = 0; i < g->start_indices_batching_dims.n; i++) {
        const int64_t sd = g->start_indices_batching_dims.v[i];
        const int64_t od = g->operand_batching_dims.v[i];
        if (sd == ivd)
            return hc_fail(k, "%s lists index_vector_dim %d", hlo_gather_list_name(sc, 4), ivd);
        if (ix->dims[sd] != s->dims[od])
            return hc_fail(k, "indices batching dim %lld has size %lld, operand dim %lld %lld",
                           (long long)sd, (long long)ix->dims[sd], (long long)od,
                           (long long)s->dims[od]);
    }
    return 0;
}

/* Per dim of a gather's result or a scatter's updates (rank of them), the operand dim a window
 * dim runs along (window_of) or the indices dim a batch dim walks (batch_of), -1 otherwise. */
static void window_maps(const hlo_gather_dims *g, int rank, int *window_of, int *batch_of)
{
    for (int d = 0, o = 0, b = 0; d < rank; d++) {
        window_of[d] = batch_of[d] = -1;
        if (listed(&g->offset_dims, d)) {
            while (listed(&g->collapsed_slice_dims, o) || listed(&g->operand_batching_dims, o))
                o++;
            window_of[d] = o++;
        } else {
            b += b == g->index_vector_dim;
            batch_of[d] = b++;
        }
    }
}

/* Parameter i of a callee: the shape it must have (buf may hold it); ctx is the caller's. */
typedef const hlo_shape *(*param_want)(checker *k, int i, int ctx, hlo_shape *buf);

/* Computation comp takes n parameters, parameter i of shape want(i), and returns root. */
static int check_callee(checker *k, int comp, const char *what, int n, param_want want, int ctx,
                        const hlo_shape *root)
{
    if (comp < 0)
        return hc_fail(k, "missing %s", what);
    const hlo_computation *f = &k->m->comps[comp];
    if (hc_param_count(f) != n)
        return hc_fail(k, "%s '%s' has %d parameters, needs %d", what, f->name, hc_param_count(f),
                       n);
    for (int i = 0; i < n; i++) {
        hlo_shape buf;
        const hlo_shape *w = want(k, i, ctx, &buf);
        if (!hlo_shape_equal(hc_param_shape(f, i), w)) {
            shape_strs t = hc_strs(hc_param_shape(f, i), w);
            return hc_fail(k, "parameter %d of %s '%s' is %s, must be %s", i, what, f->name, t.a,
                           t.b);
        }
    }
    if (!hlo_shape_equal(&f->instrs[f->root].shape, root)) {
        shape_strs t = hc_strs(&f->instrs[f->root].shape, root);
        return hc_fail(k, "%s '%s' returns %s, must return %s", what, f->name, t.a, t.b);
    }
    return 0;
}

static const hlo_shape pred_scalar = {.type = HLO_PRED, .elements = 1};

/* A scalar of operand i / per's element type (sort: per 2, map: per 1). */
static const hlo_shape *scalar_of(checker *k, int i, int per, hlo_shape *buf)
{
    *buf = (hlo_shape){.type = hc_operand(k, i / per)->type, .elements = 1};
    return buf;
}

/* Operand ctx (while: 0, a conditional's branch b: b + 1). */
static const hlo_shape *operand_at(checker *k, int i, int ctx, hlo_shape *buf)
{
    (void)i;
    (void)buf;
    return hc_operand(k, ctx);
}

/* XLA's InferGatherShape: the result has the kept slice sizes at offset_dims, the indices'
 * batch dims elsewhere. */
static int check_gather(checker *k)
{
    const hlo_gather_dims *g = &k->in->gather;
    if (hc_arity(k) || hc_operand_result(k))
        return -1;
    const hlo_shape *s = hc_operand(k, 0), *ix = hc_operand(k, 1);
    const int rank =
        hc_is_array(ix) ? ix->rank - (g->index_vector_dim < ix->rank) + g->offset_dims.n : 0;
    if (!g->slice_sizes.present || g->slice_sizes.n != s->rank)
        return hc_fail(k, "slice_sizes must have %d entries (the operand's rank)", s->rank);
    if (rank > HLO_MAX_RANK)
        return hc_fail(k, "the result would have rank %d", rank);
    if (check_dim_numbers(k, s, ix, rank))
        return -1;
    for (int d = 0; d < s->rank; d++) {
        const int64_t size = g->slice_sizes.v[d];
        if (size > s->dims[d])
            return hc_fail(k, "slice_sizes[%d] = %lld exceeds the operand's dim %lld", d,
                           (long long)size, (long long)s->dims[d]);
        /* XLA also lets such a dim have slice size 0, leaving nothing to read: refused. */
        if ((listed(&g->collapsed_slice_dims, d) || listed(&g->operand_batching_dims, d)) &&
            size != 1)
            return hc_fail(k, "dim %d is collapsed or batching but its slice size is %lld, not 1",
                           d, (long long)size);
    }
    int window_of[HLO_MAX_RANK], batch_of[HLO_MAX_RANK];
    window_maps(g, rank, window_of, batch_of);
    hlo_shape want = {.type = s->type, .rank = rank, .elements = 1};
    for (int d = 0; d < rank; d++)
        want.elements *= want.dims[d] =
            window_of[d] >= 0 ? g->slice_sizes.v[window_of[d]] : ix->dims[batch_of[d]];
    return check_result(k, &want);
}

/* XLA's InferScatterShape for one operand: updates of its type whose window dims fit in it and
 * whose other dims are the indices' batch dims; to_apply combines two scalars of its type. */
static int check_scatter(checker *k)
{
    const hlo_gather_dims *g = &k->in->gather;
    if (k->in->n_operands != hc_operands(k))
        return hc_fail(k,
                       "expects an operand, indices and updates (variadic scatter is not "
                       "supported), has %d operands",
                       k->in->n_operands);
    if (hc_operand_result(k))
        return -1;
    const hlo_shape *s = hc_operand(k, 0), *ix = hc_operand(k, 1), *up = hc_operand(k, 2);
    if (!hc_is_array(up) || up->type != s->type)
        return hc_fail(k, "updates must be an array of the operand's type");
    hlo_shape scalar = {.type = s->type, .elements = 1};
    if (check_dim_numbers(k, s, ix, up->rank) ||
        check_callee(k, k->in->to_apply, "to_apply", 2, scalar_of, 2, &scalar))
        return -1;
    const int n_batch = ix->rank - (g->index_vector_dim < ix->rank);
    if (up->rank != n_batch + g->offset_dims.n)
        return hc_fail(k, "updates have rank %d, expected %d", up->rank,
                       n_batch + g->offset_dims.n);
    int window_of[HLO_MAX_RANK], batch_of[HLO_MAX_RANK];
    window_maps(g, up->rank, window_of, batch_of);
    for (int d = 0; d < up->rank; d++) {
        const int64_t have = window_of[d] >= 0 ? s->dims[window_of[d]] : ix->dims[batch_of[d]];
        if (window_of[d] >= 0 ? up->dims[d] > have : up->dims[d] != have)
            return hc_fail(k, "updates dim %d has size %lld, %s %lld", d, (long long)up->dims[d],
                           window_of[d] >= 0 ? "more than the operand's" : "not the indices'",
                           (long long)have);
    }
    return check_result(k, s);
}

/* Array operands of one dims; the result: each operand's shape, a tuple of them when several
 * (sort), or the dims with element type t (map). */
static int check_same_dims(checker *k)
{
    if (k->in->n_operands < 1)
        return hc_fail(k, "expects at least one operand");
    for (int i = 0; i < k->in->n_operands; i++)
        if (hc_need_array(k, hc_operand(k, i), "an operand"))
            return -1;
        else if (!hc_same_dims(hc_operand(k, i), hc_operand(k, 0))) {
            shape_strs t = hc_strs(hc_operand(k, i), hc_operand(k, 0));
            return hc_fail(k, "operand %d is %s but operand 0 is %s", i, t.a, t.b);
        }
    return 0;
}

/* Operand, source and init value; select (a pair of elements -> pred[]) and scatter= (-> an
 * element); the source has the shape of the operand's window positions (reduce-window's result),
 * the result the operand's (XLA's InferSelectAndScatterShape). */
static int check_select_and_scatter(checker *k)
{
    const hlo_instr *in = k->in;
    if (hc_arity(k) || hc_operand_result(k))
        return -1;
    const hlo_shape *s = hc_operand(k, 0), *src = hc_operand(k, 1), *init = hc_operand(k, 2);
    hlo_shape scalar = {.type = s->type, .elements = 1};
    if (!hlo_shape_equal(init, &scalar)) {
        shape_strs t = hc_strs(init, &scalar);
        return hc_fail(k, "init value %s, must be %s", t.a, t.b);
    }
    if (check_callee(k, in->select, "select", 2, scalar_of, 2, &pred_scalar) ||
        check_callee(k, in->to_apply, "scatter", 2, scalar_of, 2, &scalar))
        return -1;
    char what_n[48];
    snprintf(what_n, sizeof what_n, "the operand has rank %d", s->rank);
    hlo_shape want = {.type = s->type, .rank = s->rank, .elements = 1};
    if (hc_check_window(k, s->dims, s->rank, what_n, want.dims))
        return -1;
    for (int d = 0; d < want.rank; d++)
        want.elements *= want.dims[d];
    if (!hlo_shape_equal(src, &want)) {
        shape_strs t = hc_strs(src, &want);
        return hc_fail(k, "source %s, expected %s", t.a, t.b);
    }
    return check_result(k, s);
}

static int check_sort(checker *k)
{
    const hlo_instr *in = k->in;
    const int n = in->n_operands;
    if (check_same_dims(k))
        return -1;
    if (!in->dimensions.present || in->dimensions.n != 1)
        return hc_fail(k, "dimensions must name one dimension");
    if (hc_check_dim_list(k, &in->dimensions, hc_operand(k, 0)->rank, "dimension") ||
        check_callee(k, in->to_apply, "to_apply", 2 * n, scalar_of, 2, &pred_scalar))
        return -1;
    if (n == 1)
        return check_result(k, hc_operand(k, 0));
    if (in->shape.type != HLO_TUPLE || in->shape.n_tuple != n)
        return hc_fail(k, "result must be a tuple of %d arrays", n);
    for (int i = 0; i < n; i++)
        if (!hlo_shape_equal(&in->shape.tuple[i], hc_operand(k, i))) {
            shape_strs t = hc_strs(&in->shape.tuple[i], hc_operand(k, i));
            return hc_fail(k, "result element %d is %s but operand %d is %s", i, t.a, i, t.b);
        }
    return 0;
}

/* to_apply maps a scalar of each operand's type to one scalar; dimensions, when given, are
 * all the operands' dims in order. */
static int check_map(checker *k)
{
    const hlo_instr *in = k->in;
    if (check_same_dims(k) || hc_need_array(k, &in->shape, "the result"))
        return -1;
    const int rank = hc_operand(k, 0)->rank;
    bool all = !in->dimensions.present || in->dimensions.n == rank;
    for (int i = 0; all && i < in->dimensions.n; i++)
        all = in->dimensions.v[i] == i;
    if (!all)
        return hc_fail(k, "dimensions must be 0..%d in order", rank - 1);
    hlo_shape root = {.type = in->shape.type, .elements = 1};
    if (check_callee(k, in->to_apply, "to_apply", in->n_operands, scalar_of, 1, &root))
        return -1;
    hlo_shape want = *hc_operand(k, 0);
    want.type = in->shape.type;
    return check_result(k, &want);
}

/* condition and body take the state (the operand), which body returns and the result is. */
static int check_while(checker *k)
{
    if (hc_arity(k) ||
        check_callee(k, k->in->condition, "condition", 1, operand_at, 0, &pred_scalar) ||
        check_callee(k, k->in->body, "body", 1, operand_at, 0, hc_operand(k, 0)))
        return -1;
    return check_result(k, hc_operand(k, 0));
}

/* Operand 0 picks the branch: pred[] with true and false computations, or s32[]; branch b
 * takes operand b + 1 and returns the result. */
static int check_conditional(checker *k)
{
    const hlo_instr *in = k->in;
    const int n = in->n_branches;
    if (n < 1)
        return hc_fail(k, "missing branch_computations or true_computation and false_computation");
    if (in->n_operands != n + 1)
        return hc_fail(k, "expects the branch index and %d branch operands, has %d operands", n,
                       in->n_operands);
    const hlo_shape *p = hc_operand(k, 0);
    const bool pred = p->type == HLO_PRED && p->rank == 0;
    if (!(pred && n == 2) && !(p->type == HLO_S32 && p->rank == 0)) {
        char b[160];
        return hc_fail(k, "branch index %s must be s32[], or pred[] with two branches",
                       hlo_shape_str(p, b, sizeof b));
    }
    for (int b = 0; b < n; b++) {
        char what[48];
        snprintf(what, sizeof what,
                 in->branch_pred ? (b ? "false_computation" : "true_computation")
                                 : "branch_computations[%d]",
                 b);
        if (check_callee(k, in->branches[b], what, 1, operand_at, b + 1, &in->shape))
            return -1;
    }
    return 0;
}

/* XLA's all-reduce: operands of one element type, the result their shape (a tuple of them when
 * there are several), to_apply combining two scalars of that type; replica groups of one size
 * naming each of the module's devices at most once; use_global_device_ids with a channel_id. */
static int check_all_reduce(checker *k)
{
    const hlo_instr *in = k->in;
    const int n = in->n_operands;
    if (n < 1)
        return hc_fail(k, "expects at least one operand");
    if (n > 1 && (in->shape.type != HLO_TUPLE || in->shape.n_tuple != n))
        return hc_fail(k, "result must be a tuple of %d arrays", n);
    for (int i = 0; i < n; i++) {
        const hlo_shape *s = hc_operand(k, i), *r = n > 1 ? &in->shape.tuple[i] : &in->shape;
        if (hc_need_array(k, s, "an operand"))
            return -1;
        if (s->type != hc_operand(k, 0)->type)
            return hc_fail(k, "operand %d is %s, operand 0 %s", i, hlo_type_name(s->type),
                           hlo_type_name(hc_operand(k, 0)->type));
        if (!hlo_shape_equal(r, s)) {
            shape_strs t = hc_strs(r, s);
            return hc_fail(k, "result %d is %s, must be its operand's %s", i, t.a, t.b);
        }
    }
    hlo_shape scalar = {.type = hc_operand(k, 0)->type, .elements = 1};
    if (check_callee(k, in->to_apply, "to_apply", 2, scalar_of, 2, &scalar))
        return -1;
    if (in->use_global_device_ids && !in->channel_id)
        return hc_fail(k, "use_global_device_ids needs a channel_id");
    const int64_t devices = hlo_devices(k->m);
    for (int g = 0; g < in->n_replica_groups; g++) {
        const hlo_ints *l = &in->replica_groups[g];
        if (l->n != in->replica_groups[0].n)
            return hc_fail(k, "replica group %d has %d ids, group 0 has %d", g, l->n,
                           in->replica_groups[0].n);
        for (int i = 0; i < l->n; i++) {
            if (l->v[i] >= devices)
                return hc_fail(k, "replica id %lld, but the module runs on %lld devices",
                               (long long)l->v[i], (long long)devices);
            for (int h = 0; h <= g; h++)
                for (int j = 0; j < (h < g ? in->replica_groups[h].n : i); j++)
                    if (in->replica_groups[h].v[j] == l->v[i])
                        return hc_fail(k, "replica id %lld is in replica_groups twice",
                                       (long long)l->v[i]);
        }
    }
    return 0;
}

int hc_check_shape_op(checker *k)
{
    switch (k->in->opcode) {
    case HLO_OP_ALL_REDUCE: return check_all_reduce(k);
    case HLO_OP_SLICE: return check_slice(k);
    case HLO_OP_CONCATENATE: return check_concatenate(k);
    case HLO_OP_REVERSE: return check_reverse(k);
    case HLO_OP_DYNAMIC_SLICE: return check_dynamic_slice(k);
    case HLO_OP_DYNAMIC_UPDATE_SLICE: return check_dynamic_update_slice(k);
    case HLO_OP_GATHER: return check_gather(k);
    case HLO_OP_SCATTER: return check_scatter(k);
    case HLO_OP_SELECT_AND_SCATTER: return check_select_and_scatter(k);
    case HLO_OP_SORT: return check_sort(k);
    case HLO_OP_MAP: return check_map(k);
    case HLO_OP_WHILE: return check_while(k);
    default: /* conditional */ return check_conditional(k);
    }
}

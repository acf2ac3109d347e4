/* hlo_eval_control.c - the evaluator's ops that run computations: while, conditional, sort
 * (a stable merge sort calling the comparator), map, scatter and select-and-scatter
 * (hlo_eval_internal.h). */
#include "hlo/hlo_eval_internal.h"

#include <stdlib.h>
#include <string.h>

/* Runs body on the state while condition holds, at most HLO_MAX_WHILE_TRIPS times. */
static int eval_while(evaluator *e, const hlo_instr *in, const val *op, val *out)
{
    const hlo_computation *cond = &e->m->comps[in->condition], *body = &e->m->comps[in->body];
    if (he_val_copy(&op[0], out))
        return he_fail(e, in, "out of memory");
    for (long long trips = 0;; trips++) {
        val p, next;
        if (he_eval_comp(e, cond, out, &p))
            goto error;
        const bool go = he_geti(p.a, 0) != 0;
        he_val_free(&p);
        if (!go)
            return 0;
        if (trips == HLO_MAX_WHILE_TRIPS) {
            he_fail(e, in, "'%s' did not finish after %lld iterations (HLO_MAX_WHILE_TRIPS)",
                    in->name, trips);
            goto error;
        }
        if (he_eval_comp(e, body, out, &next))
            goto error;
        he_val_free(out);
        *out = next;
    }
error:
    he_val_free(out);
    return -1;
}

/* Branch index operand 0 (pred: true is branch 0), out of range meaning the last branch. */
static int eval_conditional(evaluator *e, const hlo_instr *in, const val *op, val *out)
{
    const int64_t v = he_geti(op[0].a, 0);
    int64_t b = op[0].a->shape.type == HLO_PRED ? (v != 0 ? 0 : 1) : v;
    if (b < 0 || b >= in->n_branches)
        b = in->n_branches - 1;
    return he_eval_comp(e, &e->m->comps[in->branches[b]], &op[b + 1], out);
}

/* The comparator of a sort of n operands on the scalars args[0..2n): less(a, b) puts operand
 * i's elements at a and b into args[2i] and args[2i + 1]. */
typedef struct {
    evaluator *e;
    const hlo_instr *in;
    const val *ops;
    int n;
    val *args;
} sorter;

static int less(sorter *s, int64_t a, int64_t b, bool *lt)
{
    for (int i = 0; i < s->n; i++) {
        he_copy(s->args[2 * i].a, 0, s->ops[i].a, a);
        he_copy(s->args[2 * i + 1].a, 0, s->ops[i].a, b);
    }
    val r;
    if (he_apply(s->e, &s->e->m->comps[s->in->to_apply], s->args, &r))
        return -1;
    *lt = he_geti(r.a, 0) != 0;
    he_val_free(&r);
    return 0;
}

/* Sorts pos[0..len) (element offsets) stably with tmp as scratch: bottom-up merge sort that
 * takes from the right run only when its element is less than the left's. */
static int merge_sort(sorter *s, int64_t *pos, int64_t *tmp, int64_t len)
{
    for (int64_t w = 1; w < len; w *= 2) {
        for (int64_t lo = 0; lo < len; lo += 2 * w) {
            const int64_t mid = lo + w < len ? lo + w : len;
            const int64_t hi = lo + 2 * w < len ? lo + 2 * w : len;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                bool lt;
                if (less(s, pos[j], pos[i], &lt))
                    return -1;
                tmp[k++] = lt ? pos[j++] : pos[i++];
            }
            while (i < mid)
                tmp[k++] = pos[i++];
            while (j < hi)
                tmp[k++] = pos[j++];
        }
        memcpy(pos, tmp, (size_t)len * sizeof *pos);
    }
    return 0;
}

/* Every line along dimensions={d} sorted by the comparator, all operands permuted alike. */
static int eval_sort(evaluator *e, const hlo_instr *in, const val *op, val *out)
{
    const hlo_shape *s0 = &op[0].a->shape;
    const int n = in->n_operands, d = (int)in->dimensions.v[0];
    const int64_t len = s0->dims[d];
    int64_t st[HLO_MAX_RANK], dims[HLO_MAX_RANK], idx[HLO_MAX_RANK] = {0};
    he_strides(s0, st);
    memcpy(dims, s0->dims, sizeof dims);
    dims[d] = 1; /* the lines' first elements */
    sorter so = {e, in, op, n, calloc(2 * (size_t)n, sizeof(val))};
    int64_t *pos = malloc(((size_t)len + 1) * sizeof *pos);
    int64_t *tmp = malloc(((size_t)len + 1) * sizeof *tmp);
    int rc = so.args && pos && tmp && (n == 1 || (out->t = calloc((size_t)n, sizeof *out->t)))
                 ? 0
                 : he_fail(e, in, "out of memory");
    out->n = n > 1 ? n : 0;
    for (int i = 0; i < n && !rc; i++) {
        hlo_array **res = n > 1 ? &out->t[i].a : &out->a;
        if (!(so.args[2 * i].a = hlo_array_new(op[i].a->shape.type, 0, NULL)) ||
            !(so.args[2 * i + 1].a = hlo_array_new(op[i].a->shape.type, 0, NULL)) ||
            !(*res = hlo_array_new(op[i].a->shape.type, s0->rank, s0->dims)))
            rc = he_fail(e, in, "out of memory");
    }
    for (int64_t line = 0; !rc && len > 0 && line < s0->elements / len; line++) {
        int64_t base = 0;
        for (int k = 0; k < s0->rank; k++)
            base += idx[k] * st[k];
        for (int64_t j = 0; j < len; j++)
            pos[j] = base + j * st[d];
        rc = merge_sort(&so, pos, tmp, len);
        for (int i = 0; i < n && !rc; i++) {
            hlo_array *r = n > 1 ? out->t[i].a : out->a;
            const size_t es = hlo_type_size(r->shape.type);
            for (int64_t j = 0; j < len; j++)
                memcpy((char *)r->data + (size_t)(base + j * st[d]) * es,
                       (const char *)op[i].a->data + (size_t)pos[j] * es, es);
        }
        he_odometer(idx, dims, s0->rank);
    }
    for (int i = 0; so.args && i < 2 * n; i++)
        he_val_free(&so.args[i]);
    free(so.args);
    free(pos);
    free(tmp);
    if (rc)
        he_val_free(out);
    return rc;
}

/* to_apply on the operands' elements at each index. */
static int eval_map(evaluator *e, const hlo_instr *in, const val *op, val *out)
{
    const int n = in->n_operands;
    val *args = calloc((size_t)n + 1, sizeof *args);
    int rc = args && (out->a = hlo_array_new(in->shape.type, in->shape.rank, in->shape.dims))
                 ? 0
                 : he_fail(e, in, "out of memory");
    for (int i = 0; i < n && !rc; i++)
        if (!(args[i].a = hlo_array_new(op[i].a->shape.type, 0, NULL)))
            rc = he_fail(e, in, "out of memory");
    for (int64_t j = 0; j < in->shape.elements && !rc; j++) {
        for (int i = 0; i < n; i++)
            he_copy(args[i].a, 0, op[i].a, j);
        val r;
        if ((rc = he_apply(e, &e->m->comps[in->to_apply], args, &r)))
            break;
        he_copy(out->a, j, r.a, 0);
        he_val_free(&r);
    }
    for (int i = 0; args && i < n; i++)
        he_val_free(&args[i]);
    free(args);
    if (rc)
        he_val_free(out);
    return rc;
}

/* scatter: the operand, with to_apply(element, update) stored for each update in row-major
 * order of the updates; a window that does not lie wholly inside the operand is skipped (XLA's
 * out-of-bounds updates, JAX's mode="drop"). */
static int eval_scatter(evaluator *e, const hlo_instr *in, const val *op, val *out)
{
    const hlo_gather_dims *g = &in->gather;
    const hlo_array *a = op[0].a, *ix = op[1].a, *up = op[2].a;
    const hlo_computation *f = &e->m->comps[in->to_apply];
    const int rank = up->shape.rank;
    int64_t st[HLO_MAX_RANK], size[HLO_MAX_RANK], idx[HLO_MAX_RANK] = {0}, start[HLO_MAX_RANK];
    int window_of[HLO_MAX_RANK], batch_of[HLO_MAX_RANK];
    val args[2] = {{hlo_array_new(a->shape.type, 0, NULL), 0, NULL},
                   {hlo_array_new(a->shape.type, 0, NULL), 0, NULL}};
    int rc = args[0].a && args[1].a &&
                     (out->a = hlo_array_new(a->shape.type, a->shape.rank, a->shape.dims))
                 ? 0
                 : he_fail(e, in, "out of memory");
    if (!rc)
        memcpy(out->a->data, a->data, (size_t)a->shape.elements * hlo_type_size(a->shape.type));
    he_strides(&a->shape, st);
    he_window_maps(g, rank, window_of, batch_of);
    for (int d = 0; d < a->shape.rank; d++)
        size[d] = 1;
    for (int d = 0; d < rank; d++)
        if (window_of[d] >= 0)
            size[window_of[d]] = up->shape.dims[d];
    for (int64_t u = 0; u < up->shape.elements && !rc; u++) {
        he_window_start(g, ix, idx, rank, batch_of, start);
        bool inside = true;
        int64_t at = 0;
        for (int d = 0; d < a->shape.rank && inside; d++) {
            inside = start[d] >= 0 && start[d] <= a->shape.dims[d] - size[d];
            at += start[d] * st[d];
        }
        for (int d = 0; d < rank; d++)
            if (window_of[d] >= 0)
                at += idx[d] * st[window_of[d]];
        if (inside) {
            val r;
            he_copy(args[0].a, 0, out->a, at);
            he_copy(args[1].a, 0, up, u);
            if ((rc = he_apply(e, f, args, &r)))
                break;
            he_copy(out->a, at, r.a, 0);
            he_val_free(&r);
        }
        he_odometer(idx, up->shape.dims, rank);
    }
    he_val_free(&args[0]);
    he_val_free(&args[1]);
    if (rc)
        he_val_free(out);
    return rc;
}

/* select-and-scatter: the result holds the init value everywhere; then for each source element,
 * in row-major order (a window position, as reduce-window's result elements), the window's
 * operand elements (not padding, nor between a dilated operand's elements) are scanned in
 * row-major order, the one selected so far kept while select(selected, next) holds, and
 * scatter(result there, source element) is stored at the selected one (XLA's
 * HandleSelectAndScatter; max pooling's gradient with select a compare GE, scatter an add). */
static int eval_select_and_scatter(evaluator *e, const hlo_instr *in, const val *op, val *out)
{
    const hlo_array *a = op[0].a, *src = op[1].a;
    const hlo_window *w = &in->window;
    const hlo_computation *sel = &e->m->comps[in->select], *f = &e->m->comps[in->to_apply];
    int64_t st[HLO_MAX_RANK], size[HLO_MAX_RANK], oidx[HLO_MAX_RANK] = {0};
    val args[2] = {{hlo_array_new(a->shape.type, 0, NULL), 0, NULL},
                   {hlo_array_new(a->shape.type, 0, NULL), 0, NULL}};
    int rc = args[0].a && args[1].a &&
                     (out->a = hlo_array_new(a->shape.type, a->shape.rank, a->shape.dims))
                 ? 0
                 : he_fail(e, in, "out of memory");
    for (int64_t i = 0; i < a->shape.elements && !rc; i++)
        he_copy(out->a, i, op[2].a, 0);
    he_strides(&a->shape, st);
    for (int d = 0; d < w->rank; d++)
        size[d] = w->dims[d].size;
    for (int64_t o = 0; o < src->shape.elements && !rc; o++) {
        int64_t k[HLO_MAX_RANK] = {0}, best = -1;
        do {
            int64_t at = 0;
            bool inside = true;
            for (int d = 0; d < w->rank && inside; d++) {
                const hlo_window_dim *wd = &w->dims[d];
                int64_t u = oidx[d] * wd->stride - wd->pad_lo + k[d] * wd->rhs_dilate;
                inside = u >= 0 && u % wd->lhs_dilate == 0 && u / wd->lhs_dilate < a->shape.dims[d];
                if (inside)
                    at += u / wd->lhs_dilate * st[d];
            }
            if (!inside)
                continue;
            if (best >= 0) {
                val r;
                he_copy(args[0].a, 0, a, best);
                he_copy(args[1].a, 0, a, at);
                if ((rc = he_apply(e, sel, args, &r)))
                    break;
                const bool keep = he_geti(r.a, 0) != 0;
                he_val_free(&r);
                if (keep)
                    continue;
            }
            best = at;
        } while (he_odometer(k, size, w->rank) >= 0);
        if (!rc && best >= 0) {
            val r;
            he_copy(args[0].a, 0, out->a, best);
            he_copy(args[1].a, 0, src, o);
            if ((rc = he_apply(e, f, args, &r)))
                break;
            he_copy(out->a, best, r.a, 0);
            he_val_free(&r);
        }
        he_odometer(oidx, src->shape.dims, src->shape.rank);
    }
    he_val_free(&args[0]);
    he_val_free(&args[1]);
    if (rc)
        he_val_free(out);
    return rc;
}

int he_control(evaluator *e, const hlo_instr *in, const val *op, val *out)
{
    switch (in->opcode) {
    case HLO_OP_WHILE: return eval_while(e, in, op, out);
    case HLO_OP_CONDITIONAL: return eval_conditional(e, in, op, out);
    case HLO_OP_SORT: return eval_sort(e, in, op, out);
    case HLO_OP_SCATTER: return eval_scatter(e, in, op, out);
    case HLO_OP_SELECT_AND_SCATTER: return eval_select_and_scatter(e, in, op, out);
    default: /* map */ return eval_map(e, in, op, out);
    }
}

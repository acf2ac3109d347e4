/* hlo_eval_shape.c - the evaluator's data-movement ops: elements copied to new places,
 * nothing computed (hlo_eval_internal.h). */
#include "hlo/hlo_eval_internal.h"

#include <string.h>

/* out[i] = in[base + sum idx(i)[d] * step[d]]: broadcast, transpose, slice, reverse,
 * dynamic-slice. */
static void gather(hlo_array *out, const hlo_array *in, int64_t base, const int64_t *step)
{
    int64_t idx[HLO_MAX_RANK] = {0};
    size_t size = hlo_type_size(in->shape.type);
    for (int64_t i = 0; i < out->shape.elements; i++) {
        int64_t src = base;
        for (int d = 0; d < out->shape.rank; d++)
            src += idx[d] * step[d];
        memcpy((char *)out->data + i * (int64_t)size, (const char *)in->data + src * (int64_t)size,
               size);
        he_odometer(idx, out->shape.dims, out->shape.rank);
    }
}

/* v clamped into 0..hi: where XLA moves a start index so that its slice lies inside. */
static int64_t clamp_start(int64_t v, int64_t hi) { return v < 0 ? 0 : v > hi ? hi : v; }

/* Start index ops[first + d] clamped into 0..limit[d] as XLA clamps (any integer type). */
static void clamped_starts(const hlo_array *const *ops, int first, int rank, const int64_t *limit,
                           int64_t *start)
{
    for (int d = 0; d < rank; d++) {
        start[d] = clamp_start(he_geti(ops[first + d], 0), limit[d]);
    }
}

/* concatenate: each operand's rows (everything from dimension d on) after the previous
 * operand's, for every index of the dims before d. */
static void concatenate(const hlo_instr *in, const hlo_array *const *ops, hlo_array *o)
{
    const int d = (int)in->dimensions.v[0];
    const size_t es = hlo_type_size(o->shape.type);
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < d; i++)
        outer *= o->shape.dims[i];
    for (int i = d + 1; i < o->shape.rank; i++)
        inner *= o->shape.dims[i];
    for (int64_t r = 0, at = 0; r < outer; r++)
        for (int k = 0; k < in->n_operands; k++) {
            const int64_t n = ops[k]->shape.dims[d] * inner;
            memcpy((char *)o->data + (size_t)at * es,
                   (const char *)ops[k]->data + (size_t)(r * n) * es, (size_t)n * es);
            at += n;
        }
}

/* dynamic-update-slice: the operand, with the update written at the clamped start. */
static void update_slice(const hlo_array *const *ops, hlo_array *o)
{
    const hlo_array *u = ops[1];
    const size_t es = hlo_type_size(o->shape.type);
    const int rank = o->shape.rank;
    int64_t st[HLO_MAX_RANK], limit[HLO_MAX_RANK], start[HLO_MAX_RANK], idx[HLO_MAX_RANK] = {0};
    memcpy(o->data, ops[0]->data, (size_t)o->shape.elements * es);
    he_strides(&o->shape, st);
    for (int d = 0; d < rank; d++)
        limit[d] = o->shape.dims[d] - u->shape.dims[d];
    clamped_starts(ops, 2, rank, limit, start);
    for (int64_t i = 0; i < u->shape.elements; i++) {
        int64_t at = 0;
        for (int d = 0; d < rank; d++)
            at += (start[d] + idx[d]) * st[d];
        memcpy((char *)o->data + (size_t)at * es, (const char *)u->data + (size_t)i * es, es);
        he_odometer(idx, u->shape.dims, rank);
    }
}

static bool listed(const hlo_ints *l, int64_t v)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i] == v)
            return true;
    return false;
}

void he_window_maps(const hlo_gather_dims *g, int rank, int *window_of, int *batch_of)
{
    for (int d = 0, od = 0, bd = 0; d < rank; d++) {
        window_of[d] = batch_of[d] = -1;
        if (listed(&g->offset_dims, d)) {
            while (listed(&g->collapsed_slice_dims, od) || listed(&g->operand_batching_dims, od))
                od++;
            window_of[d] = od++;
        } else {
            bd += bd == g->index_vector_dim;
            batch_of[d] = bd++;
        }
    }
}

void he_window_start(const hlo_gather_dims *g, const hlo_array *ix, const int64_t *idx, int rank,
                     const int *batch_of, int64_t *start)
{
    const int ivd = (int)g->index_vector_dim;
    int64_t ist[HLO_MAX_RANK], at = 0;
    he_strides(&ix->shape, ist);
    for (int d = 0; d < HLO_MAX_RANK; d++)
        start[d] = 0;
    for (int d = 0; d < rank; d++)
        if (batch_of[d] >= 0)
            at += idx[d] * ist[batch_of[d]];
    for (int k = 0; k < g->start_index_map.n; k++)
        start[g->start_index_map.v[k]] =
            he_geti(ix, at + (ivd < ix->shape.rank ? k * ist[ivd] : 0));
    for (int j = 0; j < g->operand_batching_dims.n; j++)
        for (int d = 0; d < rank; d++)
            if (batch_of[d] == g->start_indices_batching_dims.v[j])
                start[g->operand_batching_dims.v[j]] = idx[d];
}

/* gather as hlo.h's hlo_gather_dims describes it; each slice start is clamped so that the
 * slice lies inside the operand, as XLA does. */
static void eval_gather(const hlo_instr *in, const hlo_array *a, const hlo_array *ix, hlo_array *o)
{
    const hlo_gather_dims *g = &in->gather;
    const size_t es = hlo_type_size(o->shape.type);
    int64_t ast[HLO_MAX_RANK], idx[HLO_MAX_RANK] = {0}, start[HLO_MAX_RANK];
    int window_of[HLO_MAX_RANK], batch_of[HLO_MAX_RANK];
    he_strides(&a->shape, ast);
    he_window_maps(g, o->shape.rank, window_of, batch_of);
    for (int64_t i = 0; i < o->shape.elements; i++) {
        int64_t at = 0;
        he_window_start(g, ix, idx, o->shape.rank, batch_of, start);
        for (int d = 0; d < a->shape.rank; d++)
            at += clamp_start(start[d], a->shape.dims[d] - g->slice_sizes.v[d]) * ast[d];
        for (int d = 0; d < o->shape.rank; d++)
            if (window_of[d] >= 0)
                at += idx[d] * ast[window_of[d]];
        memcpy((char *)o->data + (size_t)i * es, (const char *)a->data + (size_t)at * es, es);
        he_odometer(idx, o->shape.dims, o->shape.rank);
    }
}

/* pad: the value everywhere, then operand element i at lo + i * (interior + 1) per dimension
 * where that lies inside the result (negative padding crops). Element bytes are copied. */
static void pad(const hlo_instr *in, const hlo_array *a, const hlo_array *v, hlo_array *o)
{
    const size_t es = hlo_type_size(o->shape.type);
    int64_t ost[HLO_MAX_RANK], idx[HLO_MAX_RANK] = {0};
    he_strides(&o->shape, ost);
    for (int64_t i = 0; i < o->shape.elements; i++)
        memcpy((char *)o->data + i * es, v->data, es);
    for (int64_t i = 0; i < a->shape.elements; i++) {
        int64_t at = 0;
        bool inside = true;
        for (int d = 0; d < a->shape.rank && inside; d++) {
            const int64_t p = in->pad_low.v[d] + idx[d] * (in->pad_interior.v[d] + 1);
            inside = p >= 0 && p < o->shape.dims[d];
            at += p * ost[d];
        }
        if (inside)
            memcpy((char *)o->data + at * es, (const char *)a->data + i * es, es);
        for (int d = a->shape.rank - 1; d >= 0 && ++idx[d] == a->shape.dims[d]; d--)
            idx[d] = 0;
    }
}

void he_shape(const hlo_instr *in, const hlo_array *const *ops, hlo_array *o)
{
    hlo_type t = o->shape.type;
    int64_t n = o->shape.elements;
    const hlo_array *a = ops[0];
    int64_t st[HLO_MAX_RANK], step[HLO_MAX_RANK] = {0}, base = 0;
    he_strides(&a->shape, st);
    switch (in->opcode) {
    case HLO_OP_RESHAPE:
    case HLO_OP_COPY:
    case HLO_OP_BITCAST_CONVERT: /* the same bytes in row-major order (little-endian host) */
        memcpy(o->data, a->data, (size_t)n * hlo_type_size(t));
        return;
    case HLO_OP_BROADCAST:
    case HLO_OP_TRANSPOSE:
        for (int i = 0; i < in->dimensions.n; i++) {
            if (in->opcode == HLO_OP_BROADCAST)
                step[in->dimensions.v[i]] = st[i]; /* operand dim i is result dim dims[i] */
            else
                step[i] = st[in->dimensions.v[i]]; /* result dim i is operand dim dims[i] */
        }
        break;
    case HLO_OP_SLICE:
        for (int d = 0; d < a->shape.rank; d++) {
            base += in->slice_start.v[d] * st[d];
            step[d] = in->slice_stride.v[d] * st[d];
        }
        break;
    case HLO_OP_REVERSE:
        for (int d = 0; d < a->shape.rank; d++) {
            const bool rev = listed(&in->dimensions, d);
            base += rev ? (a->shape.dims[d] - 1) * st[d] : 0;
            step[d] = rev ? -st[d] : st[d];
        }
        break;
    case HLO_OP_DYNAMIC_SLICE: {
        int64_t limit[HLO_MAX_RANK], start[HLO_MAX_RANK];
        for (int d = 0; d < a->shape.rank; d++)
            limit[d] = a->shape.dims[d] - o->shape.dims[d];
        clamped_starts(ops, 1, a->shape.rank, limit, start);
        for (int d = 0; d < a->shape.rank; d++) {
            base += start[d] * st[d];
            step[d] = st[d];
        }
        break;
    }
    case HLO_OP_CONCATENATE: concatenate(in, ops, o); return;
    case HLO_OP_DYNAMIC_UPDATE_SLICE: update_slice(ops, o); return;
    case HLO_OP_GATHER: eval_gather(in, a, ops[1], o); return;
    default: /* pad */ pad(in, a, ops[1], o); return;
    }
    gather(o, a, base, step);
}

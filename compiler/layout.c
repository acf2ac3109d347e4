/* layout.c - where device values sit, and what reads them in place.
 *
 * A GEMM's result is its HLO array in row-major order; a convolution's is NHWC whatever the
 * HLO's dimension order (the CONV2D command writes NHWC). A transpose or reshape of a device
 * result moves no data on the device (copies and other identities are gone: ir.c forwards
 * them): the operation reading it addresses the result where it is, if it can. Which element
 * of the result each element of the view is follows from the chain of views (a map, one device
 * offset per element of the view, built from the result's layout); then
 *   - a GEMM reads it in place when every row of its A is a row of the result with the columns
 *     permuted the same way: the permutation moves to the weight rows (krow), so PyTorch's NCHW
 *     flatten of an NHWC result feeds a dot with no transpose;
 *   - a convolution reads it in place when the view is exactly its input in NHWC order.
 * Anything else is computed on the host from the result the device returns. */
#include "compiler/tpuc_internal.h"

#include <stdlib.h>
#include <string.h>

/* Views larger than this are not mapped (8 bytes per element): such a consumer reads its input
 * from the host, as it would without the view. */
#define MAP_MAX_ELEMENTS ((int64_t)1 << 24)

/* The core's unified-buffer and accumulator rows (rtl/tpu_core.v's parameters, the same for
 * every array size built; docs/isa.md). */
#define CORE_UB_ROWS 16384u
#define CORE_ACC_ROWS 4096u

bool tc_is_view(const tc_graph *g, int i)
{
    const tc_node *nd = &g->nodes[i];
    const hlo_opcode op = nd->src->opcode;
    return tc_live(g, i) && nd->role == TC_HOST && nd->elem < 0 && nd->n_in == 1 &&
           (op == HLO_OP_TRANSPOSE || op == HLO_OP_RESHAPE ||
            (op == HLO_OP_BITCAST &&
             hlo_bitcast_is_reshape(tc_operand_shape(g, nd->src, 0), &nd->src->shape)));
}

/* Advances the row-major index idx over dims (back to all zeros after the last element). */
static void next_index(int64_t *idx, const int64_t *dims, int rank)
{
    for (int d = rank - 1; d >= 0 && ++idx[d] == dims[d]; d--)
        idx[d] = 0;
}

/* The NHWC offset of element idx of an array whose dims nhwc[] are N, H, W and C (rank 4), or
 * N, W and C (rank 3). */
static int64_t nhwc_offset(const int64_t *idx, const int64_t *dims, const int *nhwc, int rank)
{
    int64_t off = 0;
    for (int k = 0; k < rank; k++)
        off = off * dims[nhwc[k]] + idx[nhwc[k]];
    return off;
}

/* The device offset of each element of operation p's result, in the row-major order of its HLO
 * shape. */
static int64_t *result_map(const tc_graph *g, const tc_op *p)
{
    const hlo_shape *s = &g->nodes[p->out].shape;
    int64_t *map = malloc((size_t)s->elements * sizeof *map), idx[HLO_MAX_RANK] = {0};
    if (!map)
        return NULL;
    for (int64_t e = 0; e < s->elements; e++) {
        map[e] = p->kind == TC_CONV ? nhwc_offset(idx, s->dims, p->out_nhwc, p->conv_rank) : e;
        next_index(idx, s->dims, s->rank);
    }
    return map;
}

/* The map of view u from its operand's: a reshape keeps the row-major order; a
 * transpose's element idx is its operand's element whose index in dimension dimensions[k] is
 * idx[k]. */
static int64_t *view_map(const tc_graph *g, int u, int64_t *in)
{
    const tc_node *nd = &g->nodes[u];
    if (nd->src->opcode != HLO_OP_TRANSPOSE)
        return in;
    const hlo_shape *s = &nd->shape, *from = &g->nodes[nd->in[0]].shape;
    int64_t *map = malloc((size_t)s->elements * sizeof *map);
    int64_t stride[HLO_MAX_RANK], idx[HLO_MAX_RANK] = {0};
    if (!map) {
        free(in);
        return NULL;
    }
    int64_t st = 1;
    for (int d = from->rank - 1; d >= 0; d--) {
        stride[d] = st;
        st *= from->dims[d];
    }
    for (int64_t e = 0; e < s->elements; e++) {
        int64_t at = 0;
        for (int k = 0; k < s->rank; k++)
            at += idx[k] * stride[nd->src->dimensions.v[k]];
        map[e] = in[at];
        next_index(idx, s->dims, s->rank);
    }
    free(in);
    return map;
}

/* A GEMM's A is the map's rows with one column permutation: map[r*K + k] = r*K + krow[k]. */
static bool gemm_reads(const int64_t *map, int64_t elements, uint32_t k)
{
    for (uint32_t j = 0; j < k; j++)
        if (map[j] < 0 || map[j] >= k)
            return false;
    for (int64_t r = 1; r < elements / k; r++)
        for (uint32_t j = 0; j < k; j++)
            if (map[r * k + j] != r * k + map[j])
                return false;
    return true;
}

/* A convolution's input is the map in NHWC order. */
static bool conv_reads(const int64_t *map, const hlo_shape *s, const int *nhwc, int rank)
{
    int64_t idx[HLO_MAX_RANK] = {0};
    for (int64_t e = 0; e < s->elements; e++) {
        if (map[e] != nhwc_offset(idx, s->dims, nhwc, rank))
            return false;
        next_index(idx, s->dims, s->rank);
    }
    return true;
}

int tc_find_via(tc_graph *g, tc_op *op)
{
    int chain[64], n = 0, v = op->x;
    op->via = -1;
    while (tc_is_view(g, v) && n < (int)(sizeof chain / sizeof *chain)) {
        chain[n++] = v;
        v = g->nodes[v].in[0];
    }
    const tc_node *base = &g->nodes[v];
    if (base->role != TC_DEVICE || g->ops[base->op].out != v ||
        g->nodes[op->x].shape.elements > MAP_MAX_ELEMENTS)
        return 0;
    const tc_op *p = &g->ops[base->op];
    int64_t *map = result_map(g, p);
    for (int i = n - 1; i >= 0 && map; i--)
        map = view_map(g, chain[i], map);
    if (!map)
        return tc_oom(g, op->dot, "the layout of its input",
                      (uint64_t)g->nodes[op->x].shape.elements * 8);
    const hlo_shape *s = &g->nodes[op->x].shape;
    bool ok = op->kind == TC_CONV ? conv_reads(map, s, op->in_nhwc, op->conv_rank)
                                  : gemm_reads(map, s->elements, op->k);
    bool identity = true;
    for (uint32_t j = 0; ok && op->kind == TC_GEMM && j < op->k; j++)
        identity &= map[j] == j;
    if (ok && op->kind == TC_GEMM && !identity) {
        if (!(op->krow = malloc(op->k * sizeof *op->krow))) {
            free(map);
            return tc_oom(g, op->dot, "the weight row order", op->k * 8ull);
        }
        memcpy(op->krow, map, op->k * sizeof *op->krow);
    }
    free(map);
    op->via = ok ? base->op : -1;
    return 0;
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

bool tc_conv_fits(const tpub_conv *v, uint32_t n)
{
    tpub_conv unpooled = *v;
    unpooled.flags &= ~(uint32_t)TPUB_CONV_POOL;
    uint32_t oh, ow, ohp, owp;
    tpub_conv_out_size(&unpooled, &oh, &ow);
    tpub_conv_out_size(v, &ohp, &owp);
    if (!ohp || !owp)
        return false;
    const bool packed = tpub_conv_packed(v, n);
    const uint64_t planes = packed ? ceil_div((uint64_t)v->kw * v->c, n) : ceil_div(v->c, n);
    const uint64_t width = packed ? v->w - v->kw + 1 : (uint64_t)v->w + v->pad_left + v->pad_right;
    const uint64_t rows = v->flags & TPUB_CONV_POOL ? v->pool_h : 1; /* conv rows of a band */
    const uint64_t in_rows = (rows - 1) * v->stride_h + v->kh;
    /* UB rows per input element and per staged output element: a bf16 one is a row pair. */
    const uint64_t e = v->flags & TPUB_GEMM_BF16 ? 2 : 1;
    const uint64_t oe = v->flags & TPUB_GEMM_OUT_INT8 ? 1 : v->flags & TPUB_GEMM_OUT_BF16 ? 2 : 0;
    const uint64_t stage = owp * oe, acc = rows * ow;
    /* Two staging buffers beside one plane set; two accumulator buffers (which also keeps a
     * band's rows within the instructions' 16-bit row fields). */
    return planes * in_rows * width * e + 2 * stage <= CORE_UB_ROWS && 2 * acc <= CORE_ACC_ROWS;
}

uint32_t tc_perm(const int *order, int rank, const int64_t *dims, uint32_t *perm)
{
    int last = -1;
    bool moves = false;
    for (int k = 0; k < rank; k++) {
        perm[k] = (uint32_t)order[k];
        if (dims[order[k]] == 1)
            continue;
        moves |= order[k] < last;
        last = order[k];
    }
    return moves ? (uint32_t)rank : 0;
}

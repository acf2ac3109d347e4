/* place.c - the device operations: the dots and convolutions the device runs (conv.c says which
 * convolutions), their fused epilogues (a per-channel affine chain: bias, or batch norm's
 * subtract, multiplies and add; ReLU; max pooling), where each reads its input
 * (layout.c), and their segments: consecutive operations a host value does not separate, with
 * int8 (or bf16) results handed on in device memory inside a segment. */
#include "compiler/tpuc_internal.h"

#include <stdlib.h>
#include <string.h>

/* Whether constant a, its elements grouped as [outer, n, inner] in row-major order, is the same
 * in every group: one value per channel j, at element j * inner. */
static bool per_channel(const hlo_array *a, uint64_t n, uint64_t inner)
{
    const size_t es = hlo_type_size(a->shape.type);
    const char *d = a->data;
    for (uint64_t e = 0; e < (uint64_t)a->shape.elements; e++)
        if (memcmp(d + e * es, d + (e / inner % n) * inner * es, es))
            return false;
    return true;
}

/* If node u is `v + c`, `c + v`, `v - c`, `v * c` or `c * v` with c a constant of one value per
 * channel (n channels, inner elements after each), returns c's node; else -1. */
static int affine_of(const tc_graph *g, int u, int v, uint64_t n, uint64_t inner)
{
    const tc_node *nd = &g->nodes[u];
    int c = -1;
    if (nd->src->opcode == HLO_OP_ADD || nd->src->opcode == HLO_OP_MULTIPLY)
        c = nd->in[0] == v ? nd->in[1] : nd->in[1] == v ? nd->in[0] : -1;
    else if (nd->src->opcode == HLO_OP_SUBTRACT && nd->in[0] == v && nd->in[1] != v)
        c = nd->in[1];
    if (c < 0 || g->nodes[c].role != TC_CONST || !per_channel(g->nodes[c].value, n, inner))
        return -1;
    return c;
}

bool tc_in_affine(const tc_op *op, int node)
{
    for (int i = 0; i < op->n_affine; i++)
        if (op->affine[i] == node)
            return true;
    return false;
}

/* Node u is `maximum(v, 0)` or `maximum(0, v)` with a constant of zeros. */
static bool is_relu(const tc_graph *g, int u, int v)
{
    const tc_node *nd = &g->nodes[u];
    if (nd->src->opcode != HLO_OP_MAXIMUM)
        return false;
    int c = nd->in[0] == v ? nd->in[1] : nd->in[1] == v ? nd->in[0] : -1;
    if (c < 0 || g->nodes[c].role != TC_CONST)
        return false;
    const hlo_array *a = g->nodes[c].value;
    for (int64_t i = 0; i < a->shape.elements; i++)
        if (hlo_array_get(a, i) != 0)
            return false;
    return true;
}

/* The element types the device multiplies, l x r -> nd: floats (f16, bf16, f32, f64 in any
 * mix: quantized or in bf16, *exact false; read and written through their float values) or s8/u8 x
 * s8 -> s32 (*exact true). NULL when they are, else why not. */
const char *tc_device_types(const tc_node *l, const tc_node *r, const tc_node *nd, bool *exact)
{
    const hlo_type lt = l->shape.type, rt = r->shape.type, ot = nd->shape.type;
    if (hlo_is_float(lt) && hlo_is_float(rt) && hlo_is_float(ot))
        *exact = false;
    else if ((lt == HLO_S8 || lt == HLO_U8) && rt == HLO_S8 && ot == HLO_S32)
        *exact = true;
    else
        return "element types the device does not multiply (floats, quantized, or s8/u8 x s8 -> "
               "s32)";
    return NULL;
}

/* The order in which a dot operand's dims reach the device: its batch dims (as listed), then
 * for the left-hand side its free dims and its contracting dims (as listed), for the right-hand
 * side its contracting dims and its free dims: [batch][M][K] and [batch][K][N] row-major. Returns
 * the transfer permutation's rank (tc_perm: 0 when that is the host's order). */
static uint32_t dot_order(const hlo_shape *s, const hlo_ints *bat, const hlo_ints *con, bool lhs,
                          int *order)
{
    bool used[HLO_MAX_RANK] = {false};
    int n = 0, nb = bat->present ? bat->n : 0, nc = con->present ? con->n : 0;
    for (int i = 0; i < nb; i++)
        used[order[n++] = (int)bat->v[i]] = true;
    for (int i = 0; i < nc; i++)
        used[con->v[i]] = true;
    for (int i = 0; !lhs && i < nc; i++)
        order[n++] = (int)con->v[i];
    for (int d = 0; d < s->rank; d++)
        if (!used[d])
            order[n++] = d;
    for (int i = 0; lhs && i < nc; i++)
        order[n++] = (int)con->v[i];
    uint32_t perm[HLO_MAX_RANK];
    return tc_perm(order, s->rank, s->dims, perm);
}

/* Why dot node d stays on the host, or NULL when the device can run it (then op's batch, m, k,
 * n, exact, w and the transfer orders set). A is the left-hand side as [batch][M][K], in place
 * when it already is in that order, else written so by its transfer; B is the constant weights
 * (rearranged at compile time) or a run-time value written as [batch][K][N] by its transfer. */
static const char *device_dot(const tc_graph *g, int d, tc_op *op)
{
    const tc_node *nd = &g->nodes[d];
    const hlo_instr *in = nd->src;
    const tc_node *l = &g->nodes[nd->in[0]], *r = &g->nodes[nd->in[1]];
    const char *why = tc_device_types(l, r, nd, &op->exact);
    if (why)
        return why;
    const hlo_ints *lc = &in->lhs_contracting_dims, *lb = &in->lhs_batch_dims;
    op->a_rank = (int)dot_order(&l->shape, lb, lc, true, op->a_order);
    op->w = r->role == TC_CONST ? -1 : nd->in[1];
    if ((op->w >= 0 &&
         dot_order(&r->shape, &in->rhs_batch_dims, &in->rhs_contracting_dims, false, op->b_order) &&
         r->shape.rank > TPUB_MAX_RANK) ||
        op->a_rank > TPUB_MAX_RANK)
        return "an operand to permute of more dimensions than transfers permute (8)";
    int nc = lc->present ? lc->n : 0, nb = lb->present ? lb->n : 0;
    int64_t bb = 1, kk = 1;
    for (int i = 0; i < nb; i++)
        bb *= l->shape.dims[lb->v[i]];
    for (int i = 0; i < nc; i++)
        kk *= l->shape.dims[lc->v[i]];
    if (bb == 0 || kk == 0 || l->shape.elements == 0 || r->shape.elements == 0)
        return "an empty operand";
    int64_t mm = l->shape.elements / kk / bb, n2 = r->shape.elements / kk / bb;
    if (mm > 65535 * 1024LL || kk > (1 << 24) || n2 > (1 << 24) || bb > 65536)
        return "dimensions beyond what the GEMM commands address";
    if (op->w >= 0 && r->shape.elements > TC_RUNTIME_B_MAX_BYTES)
        return "its right-hand side is computed at run time and larger than the 1 GiB a "
               "transfer may write (TC_RUNTIME_B_MAX_BYTES)";
    op->batch = (uint32_t)bb;
    op->m = (uint32_t)mm;
    op->k = (uint32_t)kk;
    op->n = (uint32_t)n2;
    return NULL;
}

/* The weights of dot op->dot as batch x k x n row-major: the rhs's batch dims (in the listed
 * order) make the batch index, its contracting dims the row, the remaining dims the column. */
static int take_weights(tc_graph *g, tc_op *op)
{
    const tc_node *nd = &g->nodes[op->dot];
    const hlo_array *w = g->nodes[nd->in[1]].value;
    const hlo_ints *rc = &nd->src->rhs_contracting_dims, *rb = &nd->src->rhs_batch_dims;
    int rank = w->shape.rank, nc = rc->present ? rc->n : 0, nb = rb->present ? rb->n : 0;
    int64_t step_b[HLO_MAX_RANK] = {0}, step_k[HLO_MAX_RANK] = {0}, step_n[HLO_MAX_RANK] = {0};
    int64_t idx[HLO_MAX_RANK] = {0};
    bool taken[HLO_MAX_RANK] = {false};
    int64_t s = 1;
    for (int i = nb - 1; i >= 0; i--) {
        step_b[rb->v[i]] = s;
        taken[rb->v[i]] = true;
        s *= w->shape.dims[rb->v[i]];
    }
    s = 1;
    for (int i = nc - 1; i >= 0; i--) {
        step_k[rc->v[i]] = s;
        taken[rc->v[i]] = true;
        s *= w->shape.dims[rc->v[i]];
    }
    s = 1;
    for (int i = rank - 1; i >= 0; i--)
        if (!taken[i]) {
            step_n[i] = s;
            s *= w->shape.dims[i];
        }
    size_t count = (size_t)op->batch * op->k * op->n;
    if (op->exact ? !(op->wq = malloc(count)) : !(op->wf = malloc(count * sizeof(float))))
        return tc_oom(g, op->dot, "the weights", count * (op->exact ? 1 : sizeof(float)));
    for (int64_t e = 0; e < w->shape.elements; e++) {
        int64_t bb = 0, kk = 0, nn = 0;
        for (int i = 0; i < rank; i++) {
            bb += idx[i] * step_b[i];
            kk += idx[i] * step_k[i];
            nn += idx[i] * step_n[i];
        }
        size_t at = ((size_t)bb * op->k + (size_t)kk) * op->n + (size_t)nn;
        if (op->exact)
            op->wq[at] = ((const int8_t *)w->data)[e];
        else
            op->wf[at] = (float)hlo_array_get(w, e);
        for (int i = rank - 1; i >= 0 && ++idx[i] == w->shape.dims[i]; i--)
            idx[i] = 0;
    }
    return 0;
}

/* Takes node u, the affine `v + c`, `v - c` or `v * c` with c per channel (channel j's value at
 * element j * inner), into op: an add or subtract into its bias (int32 for an integer operation,
 * wrapping; float for a float one: quant.c makes int8's integers), a multiply into the weights'
 * columns and the bias so far. Returns 1 when op cannot take it (a multiply of an integer
 * operation, or of one whose weights are computed at run time). */
static int take_affine(tc_graph *g, tc_op *op, int u, int c, uint64_t inner)
{
    const hlo_opcode opc = g->nodes[u].src->opcode;
    const hlo_array *b = g->nodes[c].value;
    if ((opc == HLO_OP_MULTIPLY && !op->wf) || op->n_affine == TC_AFFINE_MAX)
        return 1;
    if (opc != HLO_OP_MULTIPLY && !op->bias_q && !op->bias_f &&
        (op->exact ? !(op->bias_q = calloc(op->n, sizeof *op->bias_q))
                   : !(op->bias_f = calloc(op->n, sizeof *op->bias_f))))
        return tc_oom(g, op->dot, "the bias", 4ull * op->n);
    for (uint32_t j = 0; j < op->n; j++) {
        const uint64_t at = j * inner;
        if (op->exact) { /* two's complement: the HLO's s32 add and subtract wrap too */
            const uint32_t v = (uint32_t)((const int32_t *)b->data)[at];
            op->bias_q[j] = (int32_t)((uint32_t)op->bias_q[j] + (opc == HLO_OP_ADD ? v : 0u - v));
        } else if (opc == HLO_OP_MULTIPLY) {
            const float v = (float)hlo_array_get(b, at);
            for (uint64_t e = j; e < (uint64_t)op->batch * op->k * op->n; e += op->n)
                op->wf[e] *= v;
            if (op->bias_f)
                op->bias_f[j] *= v;
        } else {
            const float v = (float)hlo_array_get(b, at);
            op->bias_f[j] += opc == HLO_OP_ADD ? v : -v;
        }
    }
    op->affine[op->n_affine++] = u;
    if (opc != HLO_OP_MULTIPLY)
        op->bias = u;
    return 0;
}

/* Fuses what follows op's result: before any ReLU, per-channel adds, subtracts and multiplies by
 * constants (a bias; batch norm in inference, as PyTorch and flax spell it), multiplies only
 * before a pooling (a negative scale would not commute with the maximum) and folded into the
 * weights; then a ReLU; for a convolution a max pooling anywhere in the chain (conv.c). The
 * device computes (acc * s + b) for the HLO's ((acc + b1) * s1 + b2) * s2 ...: the same in exact
 * arithmetic, rounded differently in floats (the bias once, the scales into the weights before
 * they are rounded to int8 or bf16). A reduce-window that does not fuse keeps the reason. */
static int fuse(tc_graph *g, tc_op *op)
{
    for (int u = tc_only_user(g, op->out); u >= 0; u = tc_only_user(g, op->out)) {
        const hlo_shape *s = &g->nodes[op->out].shape;
        uint64_t inner = 1;
        if (op->kind == TC_CONV)
            for (int d = op->out_nhwc[op->conv_rank - 1] + 1; d < s->rank; d++)
                inner *= (uint64_t)s->dims[d];
        const int c = op->relu < 0 ? affine_of(g, u, op->out, op->n, inner) : -1;
        const int took = c >= 0 && (op->pool < 0 || g->nodes[u].src->opcode != HLO_OP_MULTIPLY)
                             ? take_affine(g, op, u, c, inner)
                             : 1;
        if (took < 0)
            return -1;
        if (!took) {
            op->out = u;
        } else if (op->relu < 0 && is_relu(g, u, op->out)) {
            op->relu = op->out = u;
        } else if (op->kind == TC_CONV && op->pool < 0 &&
                   g->nodes[u].src->opcode == HLO_OP_REDUCE_WINDOW) {
            if ((g->nodes[u].host_reason = tc_device_pool(g, op, u)))
                break;
            op->pool = op->out = u;
        } else {
            break;
        }
    }
    return 0;
}

/* Operand *node of a GEMM, written by a transfer in the order `order` of its dims: while it is a
 * transpose or copy computed on the host for this operation alone, the transfer reads that
 * one's operand instead, the order composed with the transpose's (the transpose becomes a view:
 * done by addressing, never computed). Returns the order's transfer rank. */
static int look_through(tc_graph *g, int *node, int *order)
{
    const int rank = g->nodes[*node].shape.rank;
    for (tc_node *nd = &g->nodes[*node];
         rank <= TPUB_MAX_RANK && nd->role == TC_HOST && nd->n_in == 1 &&
         tc_only_user(g, *node) >= 0 &&
         (nd->src->opcode == HLO_OP_TRANSPOSE || nd->src->opcode == HLO_OP_COPY);
         nd = &g->nodes[*node]) {
        for (int i = 0; nd->src->opcode == HLO_OP_TRANSPOSE && i < rank; i++)
            order[i] = (int)nd->src->dimensions.v[order[i]];
        nd->role = TC_VIEW;
        *node = nd->in[0];
    }
    uint32_t perm[HLO_MAX_RANK];
    return (int)tc_perm(order, rank, g->nodes[*node].shape.dims, perm);
}

/* Picks the device dots and convolutions and fuses their epilogues. */
static int pick_ops(tc_graph *g)
{
    for (int d = 0; d < g->n_nodes; d++) {
        tc_node *nd = &g->nodes[d];
        const hlo_opcode opc = nd->src->opcode;
        if (!tc_live(g, d) || nd->role != TC_HOST ||
            (opc != HLO_OP_DOT && opc != HLO_OP_CONVOLUTION))
            continue;
        tc_op op = {.kind = opc == HLO_OP_DOT ? TC_GEMM : TC_CONV,
                    .dot = d,
                    .bias = -1,
                    .relu = -1,
                    .pool = -1,
                    .out = d,
                    .x = nd->in[0],
                    .via = -1,
                    .w = -1,
                    .seg = -1};
        if ((nd->host_reason =
                 op.kind == TC_GEMM ? device_dot(g, d, &op) : tc_device_conv(g, d, &op)))
            continue;
        op.bf16 = g->bf16 && !op.exact;
        tc_op *p = realloc(g->ops, ((size_t)g->n_ops + 1) * sizeof *p);
        if (!p)
            return tc_fail(g, NULL, "out of memory");
        g->ops = p;
        /* Owned by the graph from here on, so that tc_graph_free releases it on any failure. */
        tc_op *o = &g->ops[g->n_ops++];
        *o = op;
        /* An input the transfer gathers (dilated, cropped) is never read in place. */
        if ((o->w >= 0            ? 0
             : o->kind == TC_CONV ? tc_take_kernel(g, o)
                                  : take_weights(g, o)) ||
            fuse(g, o) || (!o->a_rank && !o->in_gather && tc_find_via(g, o)))
            return -1;
        if (o->kind == TC_CONV)
            tc_conv_pack(g, o);
        if (o->kind == TC_GEMM && o->via < 0)
            o->a_rank = look_through(g, &o->x, o->a_order);
        if (o->w >= 0 && o->kind == TC_CONV)
            tc_kernel_source(g, o);
        else if (o->w >= 0)
            o->b_rank = look_through(g, &o->w, o->b_order);
        int fused[3 + TC_AFFINE_MAX] = {o->dot, o->relu, o->pool};
        memcpy(fused + 3, o->affine, (size_t)o->n_affine * sizeof *fused);
        for (int i = 0; i < 3 + o->n_affine; i++)
            if (fused[i] >= 0) {
                g->nodes[fused[i]].role = TC_DEVICE;
                g->nodes[fused[i]].op = g->n_ops - 1;
            }
    }
    return 0;
}

/* Does every use of node v (operation p's result, or a view of it) read it in place on the
 * device: a float operation with via p, directly or through more views? */
static bool device_readers_only(const tc_graph *g, int v, int p)
{
    if (g->nodes[v].output)
        return false;
    for (int u = v + 1; u < g->n_nodes; u++) {
        const tc_node *un = &g->nodes[u];
        for (int j = 0; tc_live(g, u) && j < un->n_in; j++) {
            if (un->in[j] != v)
                continue;
            if (tc_is_view(g, u)) {
                if (!device_readers_only(g, u, p))
                    return false;
            } else if (un->role != TC_DEVICE || g->ops[un->op].dot != u || j != 0 ||
                       g->ops[un->op].via != p || g->ops[un->op].exact) {
                return false;
            }
            break;
        }
    }
    return true;
}

/* Could operation p's result stay on the device (int8, or bf16) for the operations reading it? */
static bool int8_candidate(const tc_graph *g, int p)
{
    return !g->ops[p].exact && device_readers_only(g, g->ops[p].out, p);
}

/* The views from operation c's input back to its via's result: TC_VIEW when c reads in place,
 * else host nodes (another reader may have marked them). */
static void mark_views(tc_graph *g, const tc_op *c)
{
    for (int v = c->x; v != g->ops[c->via].out; v = g->nodes[v].in[0])
        if (c->a_dev)
            g->nodes[v].role = TC_VIEW;
        else if (g->nodes[v].role == TC_VIEW)
            g->nodes[v].role = TC_HOST;
}

/* Segments: an operation joins the open segment unless its input is a host value that depends
 * on that segment's results; avail[i] is the last segment node i's value depends on (-1:
 * none). Then what each result becomes: int8 (bf16) on the device where an operation of its segment
 * reads it in place (and always when pooled), back to the host where anything else reads it. */
static int make_segments(tc_graph *g)
{
    int *avail = malloc(((size_t)g->n_nodes + 1) * sizeof *avail);
    if (!avail)
        return tc_fail(g, NULL, "out of memory");
    int open = -1;
    for (int i = 0; i < g->n_nodes; i++) {
        tc_node *nd = &g->nodes[i];
        avail[i] = -1;
        if (!tc_live(g, i) || nd->role == TC_CONST || nd->role == TC_INPUT)
            continue;
        if (nd->role == TC_HOST || nd->role == TC_VIEW) { /* views: look_through's transposes */
            for (int j = 0; j < nd->n_in; j++)
                if (avail[nd->in[j]] > avail[i])
                    avail[i] = avail[nd->in[j]];
            continue;
        }
        tc_op *op = &g->ops[nd->op];
        if (i == op->dot) {
            /* A run-time B computed from the open segment's results needs a new one. */
            const bool b_late = open >= 0 && op->w >= 0 && avail[op->w] >= open;
            op->a_dev = open >= 0 && !b_late && op->via >= 0 && int8_candidate(g, op->via) &&
                        g->ops[op->via].seg == open;
            if (!op->a_dev && (open < 0 || avail[op->x] >= open || b_late))
                open++;
            op->seg = open;
        }
        avail[i] = op->seg;
    }
    g->n_segs = open + 1;
    free(avail);
    for (int p = 0; p < g->n_ops; p++) {
        tc_op *op = &g->ops[p];
        bool in_place = false, elsewhere = false;
        for (int c = p + 1; c < g->n_ops; c++) {
            in_place |= g->ops[c].via == p && g->ops[c].a_dev;
            elsewhere |= g->ops[c].via == p && !g->ops[c].a_dev;
        }
        op->out_int8 = !op->bf16 && (op->pool >= 0 || in_place);
        op->out_bf16 = op->bf16 && (op->pool >= 0 || in_place);
        op->to_host = !int8_candidate(g, p) || elsewhere;
    }
    for (int c = 0; c < g->n_ops; c++)
        if (g->ops[c].via >= 0 && g->ops[c].a_dev)
            mark_views(g, &g->ops[c]);
    for (int c = 0; c < g->n_ops; c++)
        if (g->ops[c].via >= 0 && !g->ops[c].a_dev)
            mark_views(g, &g->ops[c]);
    return 0;
}

int tc_place(tc_graph *g) { return pick_ops(g) || make_segments(g) ? -1 : 0; }

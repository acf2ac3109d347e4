/* ir.c - the compiler's graph: built from the checked module with calls inlined and tuples
 * resolved, constants folded, then the device GEMMs picked, fused and grouped into segments. */
#include "compiler/tpuc_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tc_fail(tc_graph *g, const hlo_instr *at, const char *fmt, ...)
{
    hlo_error e;
    va_list ap;
    va_start(ap, fmt);
    hlo_vfail(&e, g->file, at ? at->line : -1, at ? at->col : 0, at ? at->opcode_name : NULL, fmt,
              ap);
    va_end(ap);
    snprintf(g->err, g->errlen, "%s", e.msg);
    return -1;
}

int tc_oom(tc_graph *g, int node, const char *what, uint64_t bytes)
{
    return tc_fail(g, g->nodes[node].src, "out of memory for %s of '%s' (%llu bytes)", what,
                   g->nodes[node].name, (unsigned long long)bytes);
}

/* --------------------------------------------------------------- building -- */

/* A value while inlining: a node, or a tuple of values (node < 0). */
typedef struct tval {
    int node, n;
    struct tval *t;
} tval;

static void tval_free(tval *v)
{
    for (int i = 0; i < v->n; i++)
        tval_free(&v->t[i]);
    free(v->t);
    *v = (tval){-1, 0, NULL};
}

static int tval_copy(const tval *s, tval *d)
{
    *d = (tval){s->node, 0, NULL};
    if (!s->n)
        return 0;
    if (!(d->t = calloc((size_t)s->n, sizeof *d->t)))
        return -1;
    d->n = s->n;
    for (int i = 0; i < s->n; i++)
        if (tval_copy(&s->t[i], &d->t[i]))
            return -1;
    return 0;
}

static int add_node(tc_graph *g, const hlo_instr *src, int n_in, const int *in)
{
    if (g->n_nodes == g->cap_nodes) {
        int cap = g->cap_nodes ? 2 * g->cap_nodes : 64;
        tc_node *p = realloc(g->nodes, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        g->nodes = p;
        g->cap_nodes = cap;
    }
    tc_node *nd = &g->nodes[g->n_nodes];
    *nd = (tc_node){.src = src, .elem = -1, .shape = src->shape, .n_in = n_in, .role = TC_HOST,
                    .input = -1, .gemm = -1};
    nd->shape.n_tuple = 0;
    nd->shape.tuple = NULL;
    if (n_in && !(nd->in = malloc((size_t)n_in * sizeof *nd->in)))
        return -1;
    if (n_in)
        memcpy(nd->in, in, (size_t)n_in * sizeof *in);
    return g->n_nodes++;
}

/* Inlines computation comp applied to args (by parameter number) into *out. */
static int inline_comp(tc_graph *g, int comp, const tval *args, tval *out)
{
    const hlo_computation *c = &g->m->comps[comp];
    int n = c->n_instrs, at, rc = 0;
    int *order = malloc(((size_t)n + 1) * sizeof *order);
    int *ops = malloc(((size_t)n + 1) * sizeof *ops);
    tval *v = calloc((size_t)n + 1, sizeof *v);
    *out = (tval){-1, 0, NULL};
    if (!order || !ops || !v || hlo_topo_order(c, order, &at)) {
        rc = tc_fail(g, NULL, "out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++)
        v[i] = (tval){-1, 0, NULL};
    for (int p = 0; p < n && !rc; p++) {
        const hlo_instr *in = &c->instrs[order[p]];
        tval *r = &v[order[p]];
        switch (in->opcode) {
        case HLO_OP_PARAMETER:
            rc = tval_copy(&args[in->parameter_number], r);
            break;
        case HLO_OP_TUPLE:
            if (!(r->t = calloc((size_t)in->n_operands + 1, sizeof *r->t))) {
                rc = -1;
                break;
            }
            r->n = in->n_operands;
            for (int i = 0; i < in->n_operands && !rc; i++)
                rc = tval_copy(&v[in->operands[i].index], &r->t[i]);
            break;
        case HLO_OP_GET_TUPLE_ELEMENT:
            rc = tval_copy(&v[in->operands[0].index].t[in->index], r);
            break;
        case HLO_OP_CALL: {
            tval *a = calloc((size_t)in->n_operands + 1, sizeof *a);
            if (!a) {
                rc = -1;
                break;
            }
            for (int i = 0; i < in->n_operands; i++)
                a[i] = v[in->operands[i].index]; /* borrowed */
            rc = inline_comp(g, in->to_apply >= 0 ? in->to_apply : in->calls, a, r);
            free(a);
            if (rc)
                goto done; /* the message is set */
            break;
        }
        case HLO_OP_CUSTOM_CALL:
            rc = tc_fail(g, in, "'%s' (target \"%s\") is not something the compiler can lower",
                         in->name, in->custom_call_target ? in->custom_call_target : "");
            goto done;
        default:
            for (int i = 0; i < in->n_operands; i++)
                ops[i] = v[in->operands[i].index].node;
            if (in->shape.type != HLO_TUPLE) {
                r->node = add_node(g, in, in->n_operands, ops);
                rc = r->node < 0;
                break;
            }
            /* A variadic reduce: one node per element, consecutive, sharing the operands. */
            if (in->opcode != HLO_OP_REDUCE) {
                rc = tc_fail(g, in, "'%s': tuple-valued %s is not supported", in->name,
                             in->opcode_name);
                goto done;
            }
            if (!(r->t = calloc((size_t)in->shape.n_tuple + 1, sizeof *r->t))) {
                rc = -1;
                break;
            }
            r->n = in->shape.n_tuple;
            for (int j = 0; j < r->n && !rc; j++) {
                int id = add_node(g, in, in->n_operands, ops);
                r->t[j] = (tval){id, 0, NULL};
                if ((rc = id < 0))
                    break;
                g->nodes[id].elem = j;
                g->nodes[id].shape = in->shape.tuple[j];
            }
            break;
        }
    }
    if (rc)
        tc_fail(g, NULL, "out of memory");
    else
        rc = tval_copy(&v[c->root], out) ? tc_fail(g, NULL, "out of memory") : 0;
done:
    for (int i = 0; v && i < n; i++)
        tval_free(&v[i]);
    free(v);
    free(order);
    free(ops);
    return rc;
}

/* Appends the arrays of v, depth first, to the outputs. */
static int collect_outputs(tc_graph *g, const tval *v)
{
    if (v->node >= 0) {
        int *p = realloc(g->outputs, ((size_t)g->n_outputs + 1) * sizeof *p);
        if (!p)
            return -1;
        g->outputs = p;
        g->outputs[g->n_outputs++] = v->node;
    }
    for (int i = 0; i < v->n; i++)
        if (collect_outputs(g, &v->t[i]))
            return -1;
    return 0;
}

/* Names unique among nodes: the instruction's, with "_<node>" when an inlined computation
 * repeats it; the elements of a tuple-valued instruction add "_<element>" to theirs. */
static int name_nodes(tc_graph *g)
{
    for (int i = 0; i < g->n_nodes; i++) {
        tc_node *nd = &g->nodes[i];
        const int first = i - (nd->elem > 0 ? nd->elem : 0); /* of its tuple's elements */
        const char *base = nd->src->name;
        bool clash = false;
        for (int j = 0; j < first && !clash; j++)
            clash = !strcmp(g->nodes[j].src->name, base);
        size_t len = strlen(base) + 32;
        if (!(nd->name = malloc(len)))
            return -1;
        int at = clash ? snprintf(nd->name, len, "%s_%d", base, first)
                       : snprintf(nd->name, len, "%s", base);
        if (nd->elem >= 0)
            snprintf(nd->name + at, len - (size_t)at, "_%d", nd->elem);
    }
    return 0;
}

int tc_build(tc_graph *g, hlo_array **params, int n_params)
{
    const hlo_computation *c = hlo_entry(g->m);
    tval *args = calloc((size_t)n_params + 1, sizeof *args);
    if (!args)
        return tc_fail(g, NULL, "out of memory");
    int rc = 0;
    /* Parameters become constants (bound weights) or inputs, in parameter order. */
    for (int k = 0; k < n_params && !rc; k++) {
        const hlo_instr *p = NULL;
        for (int i = 0; i < c->n_instrs && !p; i++)
            if (c->instrs[i].opcode == HLO_OP_PARAMETER && c->instrs[i].parameter_number == k)
                p = &c->instrs[i];
        if (p->shape.type == HLO_TUPLE) {
            rc = tc_fail(g, p, "'%s': tuple-shaped parameters are not supported", p->name);
            break;
        }
        int id = add_node(g, p, 0, NULL);
        if (id < 0) {
            rc = tc_fail(g, NULL, "out of memory");
            break;
        }
        args[k] = (tval){id, 0, NULL};
        if (params[k]) {
            g->nodes[id].role = TC_CONST;
            g->nodes[id].value = params[k];
            params[k] = NULL; /* the graph owns it now */
        } else {
            int *q = realloc(g->inputs, ((size_t)g->n_inputs + 1) * sizeof *q);
            if (!q) {
                rc = tc_fail(g, NULL, "out of memory");
                break;
            }
            g->inputs = q;
            g->nodes[id].role = TC_INPUT;
            g->nodes[id].input = g->n_inputs;
            g->inputs[g->n_inputs++] = id;
        }
    }
    tval root = {-1, 0, NULL};
    if (!rc)
        rc = inline_comp(g, g->m->entry, args, &root);
    if (!rc && collect_outputs(g, &root))
        rc = tc_fail(g, NULL, "out of memory");
    tval_free(&root);
    free(args);
    if (!rc && name_nodes(g))
        rc = tc_fail(g, NULL, "out of memory");
    if (rc)
        return rc;
    /* Users of live nodes (node order is topological: operands come first). */
    for (int i = 0; i < g->n_outputs; i++) {
        g->nodes[g->outputs[i]].n_users++;
        g->nodes[g->outputs[i]].output = true;
    }
    for (int i = g->n_nodes - 1; i >= 0; i--)
        for (int j = 0; g->nodes[i].n_users && j < g->nodes[i].n_in; j++)
            g->nodes[g->nodes[i].in[j]].n_users++;
    for (int i = 0; i < g->n_nodes; i++)
        g->nodes[i].needed = g->nodes[i].n_users > 0;
    return 0;
}

void tc_graph_free(tc_graph *g)
{
    for (int i = 0; i < g->n_nodes; i++) {
        free(g->nodes[i].in);
        free(g->nodes[i].name);
        hlo_array_free(g->nodes[i].value);
    }
    for (int i = 0; i < g->n_gemms; i++) {
        tc_gemm *m = &g->gemms[i];
        free(m->wf);
        free(m->wq);
        free(m->bias_q);
        free(m->mult);
        free(m->shift);
        free(m->acc_scale);
    }
    free(g->nodes);
    free(g->inputs);
    free(g->outputs);
    free(g->gemms);
    free(g->cal_min);
    free(g->cal_max);
    hlo_text_free(&g->warnings);
    hlo_text_free(&g->report);
}

/* ---------------------------------------------------------------- folding -- */

/* Evaluates node nd on its operand values into *out: for an element of a tuple-valued
 * instruction, the whole instruction, keeping that element. */
static int eval_node(tc_graph *g, const tc_node *nd, hlo_array *const *ops, hlo_array **out)
{
    hlo_array *elems[64] = {NULL};
    hlo_error e;
    const int n = nd->elem >= 0 ? nd->src->shape.n_tuple : 1;
    if (n > (int)(sizeof elems / sizeof *elems))
        return tc_fail(g, nd->src, "'%s' has too many results", nd->src->name);
    if (hlo_eval_instr(g->m, g->file, nd->src, ops, elems, &e)) {
        snprintf(g->err, g->errlen, "%s", e.msg);
        return -1;
    }
    *out = elems[nd->elem >= 0 ? nd->elem : 0];
    for (int j = 0; j < n; j++)
        if (j != (nd->elem >= 0 ? nd->elem : 0))
            hlo_array_free(elems[j]);
    return 0;
}

static bool live(const tc_graph *g, int i) { return g->nodes[i].n_users > 0; }

int tc_fold(tc_graph *g)
{
    hlo_array *ops[HLO_MAX_RANK + 8];
    for (int i = 0; i < g->n_nodes; i++) {
        tc_node *nd = &g->nodes[i];
        if (!live(g, i) || nd->role != TC_HOST)
            continue;
        bool all = nd->n_in <= (int)(sizeof ops / sizeof *ops);
        for (int j = 0; all && j < nd->n_in; j++) {
            all = g->nodes[nd->in[j]].role == TC_CONST;
            ops[j] = all ? g->nodes[nd->in[j]].value : NULL;
        }
        if (!all)
            continue;
        const int64_t esize = hlo_type_size(nd->shape.type) ? (int64_t)hlo_type_size(nd->shape.type) : 8;
        if (nd->shape.elements > TC_FOLD_MAX_BYTES / esize) {
            nd->host_reason = "folding it would build more than the compile-time budget of "
                              "1 GiB (docs/compiler.md)";
            continue;
        }
        if (eval_node(g, nd, ops, &nd->value))
            return -1;
        nd->role = TC_CONST;
    }
    /* Constants only constants use are no longer needed. */
    for (int i = g->n_nodes - 1; i >= 0; i--) {
        tc_node *nd = &g->nodes[i];
        if (nd->role == TC_CONST && live(g, i))
            for (int j = 0; j < nd->n_in; j++)
                g->nodes[nd->in[j]].n_users--;
        if (nd->role == TC_CONST)
            nd->n_in = 0;
    }
    for (int i = 0; i < g->n_nodes; i++)
        if (!live(g, i) && g->nodes[i].value && g->nodes[i].role == TC_CONST) {
            hlo_array_free(g->nodes[i].value);
            g->nodes[i].value = NULL;
        }
    return 0;
}

/* ------------------------------------------------------------- placement -- */

/* The single live user of node i, or -1. */
static int only_user(const tc_graph *g, int i)
{
    if (g->nodes[i].n_users != 1 || g->nodes[i].output)
        return -1;
    for (int u = i + 1; u < g->n_nodes; u++)
        for (int j = 0; live(g, u) && j < g->nodes[u].n_in; j++)
            if (g->nodes[u].in[j] == i)
                return u;
    return -1;
}

static double elem(const hlo_array *a, int64_t i)
{
    switch (a->shape.type) {
    case HLO_F32: return ((const float *)a->data)[i];
    case HLO_S32: return ((const int32_t *)a->data)[i];
    case HLO_S8: return ((const int8_t *)a->data)[i];
    case HLO_U8: return ((const uint8_t *)a->data)[i];
    default: return ((const uint8_t *)a->data)[i];
    }
}

/* If node u is `v + c`, `c + v` or `v - c` with c a constant equal in every one of m rows of n,
 * returns c's node and sets *negate; else -1. */
static int bias_of(const tc_graph *g, int u, int v, uint32_t m, uint32_t n, bool *negate)
{
    const tc_node *nd = &g->nodes[u];
    int c = -1;
    if (nd->src->opcode == HLO_OP_ADD)
        c = nd->in[0] == v ? nd->in[1] : nd->in[1] == v ? nd->in[0] : -1;
    else if (nd->src->opcode == HLO_OP_SUBTRACT && nd->in[0] == v && nd->in[1] != v)
        c = nd->in[1];
    if (c < 0 || g->nodes[c].role != TC_CONST)
        return -1;
    const hlo_array *a = g->nodes[c].value;
    for (uint64_t i = 1; i < m; i++)
        if (memcmp((const char *)a->data + i * n * hlo_type_size(a->shape.type), a->data,
                   n * hlo_type_size(a->shape.type)))
            return -1;
    *negate = nd->src->opcode == HLO_OP_SUBTRACT;
    return c;
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
        if (elem(a, i) != 0)
            return false;
    return true;
}

/* Why dot node d stays on the host, or NULL when the device can run it (then batch, m, k, n
 * set): batch dimensions lead the left-hand side, contracting dimensions trail it. */
static const char *device_dot(const tc_graph *g, int d, uint32_t *batch, uint32_t *m, uint32_t *k,
                              uint32_t *n, bool *exact)
{
    const tc_node *nd = &g->nodes[d];
    const hlo_instr *in = nd->src;
    const tc_node *l = &g->nodes[nd->in[0]], *r = &g->nodes[nd->in[1]];
    if (r->role != TC_CONST)
        return "its right-hand side is computed at run time (the device's B operand is weights)";
    hlo_type lt = l->shape.type, rt = r->shape.type, ot = nd->shape.type;
    if (lt == HLO_F32 && rt == HLO_F32 && ot == HLO_F32)
        *exact = false;
    else if ((lt == HLO_S8 || lt == HLO_U8) && rt == HLO_S8 && ot == HLO_S32)
        *exact = true;
    else
        return "element types the device does not multiply (f32 x f32 or s8/u8 x s8 -> s32)";
    const hlo_ints *lc = &in->lhs_contracting_dims, *lb = &in->lhs_batch_dims;
    int lr = l->shape.rank, nc = lc->present ? lc->n : 0, nb = lb->present ? lb->n : 0;
    for (int i = 0; i < nb; i++)
        if (lb->v[i] != i)
            return "its batch dimensions are not the left-hand side's leading ones";
    for (int i = 0; i < nc; i++)
        if (lc->v[i] != lr - nc + i)
            return "its left-hand side does not contract its trailing dimensions in order";
    int64_t bb = 1, kk = 1;
    for (int i = 0; i < nb; i++)
        bb *= l->shape.dims[i];
    for (int i = lr - nc; i < lr; i++)
        kk *= l->shape.dims[i];
    if (bb == 0 || kk == 0 || l->shape.elements == 0 || r->shape.elements == 0)
        return "an empty operand";
    int64_t mm = l->shape.elements / kk / bb, n2 = r->shape.elements / kk / bb;
    if (mm > 65535 * 1024LL || kk > (1 << 24) || n2 > (1 << 24) || bb > 65536)
        return "dimensions beyond what the GEMM commands address";
    *batch = (uint32_t)bb;
    *m = (uint32_t)mm;
    *k = (uint32_t)kk;
    *n = (uint32_t)n2;
    return NULL;
}

/* The weights of dot d as batch x k x n row-major: the rhs's batch dims (in the listed order)
 * make the batch index, its contracting dims the row, the remaining dims (in order) the column. */
static int take_weights(tc_graph *g, tc_gemm *gm)
{
    const tc_node *nd = &g->nodes[gm->dot];
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
    size_t count = (size_t)gm->batch * gm->k * gm->n;
    if (gm->exact ? !(gm->wq = malloc(count)) : !(gm->wf = malloc(count * sizeof(float))))
        return tc_oom(g, gm->dot, "the weights", count * (gm->exact ? 1 : sizeof(float)));
    for (int64_t e = 0; e < w->shape.elements; e++) {
        int64_t bb = 0, kk = 0, nn = 0;
        for (int i = 0; i < rank; i++) {
            bb += idx[i] * step_b[i];
            kk += idx[i] * step_k[i];
            nn += idx[i] * step_n[i];
        }
        size_t at = ((size_t)bb * gm->k + (size_t)kk) * gm->n + (size_t)nn;
        if (gm->exact)
            gm->wq[at] = ((const int8_t *)w->data)[e];
        else
            gm->wf[at] = ((const float *)w->data)[e];
        for (int i = rank - 1; i >= 0 && ++idx[i] == w->shape.dims[i]; i--)
            idx[i] = 0;
    }
    return 0;
}

/* Picks the device dots and fuses bias and ReLU into them. */
static int pick_gemms(tc_graph *g)
{
    for (int d = 0; d < g->n_nodes; d++) {
        tc_node *nd = &g->nodes[d];
        uint32_t batch, m, k, n;
        bool exact;
        if (!live(g, d) || nd->role != TC_HOST || nd->src->opcode != HLO_OP_DOT ||
            (nd->host_reason = device_dot(g, d, &batch, &m, &k, &n, &exact)))
            continue;
        tc_gemm *p = realloc(g->gemms, ((size_t)g->n_gemms + 1) * sizeof *p);
        if (!p)
            return tc_fail(g, NULL, "out of memory");
        g->gemms = p;
        tc_gemm *gm = &g->gemms[g->n_gemms];
        *gm = (tc_gemm){.dot = d, .bias = -1, .relu = -1, .out = d, .x = nd->in[0],
                        .exact = exact, .batch = batch, .m = m, .k = k, .n = n,
                        .seg = -1};
        if (take_weights(g, gm))
            return -1;
        int u = only_user(g, d);
        bool negate = false;
        int c = u >= 0 ? bias_of(g, u, d, batch * m, n, &negate) : -1;
        if (c >= 0) {
            const hlo_array *b = g->nodes[c].value;
            if (!(gm->bias_q = malloc(n * sizeof *gm->bias_q)) ||
                (!exact && !(gm->acc_scale = malloc(n * sizeof(float)))))
                return tc_fail(g, NULL, "out of memory");
            /* Float biases wait in acc_scale until quant.c turns them into integers. */
            for (uint32_t j = 0; j < n; j++) {
                if (exact)
                    gm->bias_q[j] = (int32_t)(negate ? 0u - (uint32_t)((const int32_t *)b->data)[j]
                                                     : (uint32_t)((const int32_t *)b->data)[j]);
                else
                    gm->acc_scale[j] = negate ? -((const float *)b->data)[j]
                                              : ((const float *)b->data)[j];
            }
            gm->bias = gm->out = u;
            u = only_user(g, u);
        }
        if (u >= 0 && is_relu(g, u, gm->out))
            gm->relu = gm->out = u;
        for (int i = d; i <= gm->out; i++)
            if (i == d || i == gm->bias || i == gm->relu) {
                g->nodes[i].role = TC_DEVICE;
                g->nodes[i].gemm = g->n_gemms;
            }
        g->n_gemms++;
    }
    return 0;
}

/* Could node v (a float GEMM's value) stay on the device as int8? Only when every user is a
 * float device GEMM taking it as A. */
static bool int8_candidate(const tc_graph *g, int v)
{
    const tc_node *nd = &g->nodes[v];
    if (nd->role != TC_DEVICE || nd->output || g->gemms[nd->gemm].out != v ||
        g->gemms[nd->gemm].exact)
        return false;
    for (int u = v + 1; u < g->n_nodes; u++)
        for (int j = 0; live(g, u) && j < g->nodes[u].n_in; j++)
            if (g->nodes[u].in[j] == v) {
                const tc_node *un = &g->nodes[u];
                if (un->role != TC_DEVICE || g->gemms[un->gemm].dot != u || j != 0 ||
                    g->gemms[un->gemm].exact)
                    return false;
            }
    return true;
}

/* Segments: a GEMM joins the open segment unless its A is a host value that depends on that
 * segment's results; avail[i] is the last segment node i's value depends on (-1: none). */
static int make_segments(tc_graph *g)
{
    int *avail = malloc(((size_t)g->n_nodes + 1) * sizeof *avail);
    if (!avail)
        return tc_fail(g, NULL, "out of memory");
    int open = -1;
    for (int i = 0; i < g->n_nodes; i++) {
        tc_node *nd = &g->nodes[i];
        avail[i] = -1;
        if (!live(g, i) || nd->role == TC_CONST || nd->role == TC_INPUT)
            continue;
        if (nd->role == TC_HOST) {
            for (int j = 0; j < nd->n_in; j++)
                if (avail[nd->in[j]] > avail[i])
                    avail[i] = avail[nd->in[j]];
            continue;
        }
        tc_gemm *gm = &g->gemms[nd->gemm];
        if (i == gm->dot) {
            const tc_node *x = &g->nodes[gm->x];
            bool on_device = open >= 0 && int8_candidate(g, gm->x) &&
                             g->gemms[x->gemm].seg == open;
            if (!on_device && (open < 0 || avail[gm->x] >= open))
                open++;
            gm->seg = open;
        }
        avail[i] = gm->seg;
    }
    g->n_segs = open + 1;
    free(avail);
    /* int8 between GEMMs only where every consumer ended up in the producer's segment. */
    for (int i = 0; i < g->n_gemms; i++) {
        tc_gemm *gm = &g->gemms[i];
        if (!int8_candidate(g, gm->out))
            continue;
        gm->out_int8 = true;
        for (int j = i + 1; j < g->n_gemms; j++)
            if (g->gemms[j].x == gm->out && g->gemms[j].seg != gm->seg)
                gm->out_int8 = false;
    }
    return 0;
}

int tc_place(tc_graph *g)
{
    if (pick_gemms(g) || make_segments(g))
        return -1;
    return 0;
}

/* ------------------------------------------------------------- evaluation -- */

int tc_eval(tc_graph *g, hlo_array *const *inputs, hlo_array **vals)
{
    hlo_array *ops[64];
    for (int i = 0; i < g->n_nodes; i++) {
        tc_node *nd = &g->nodes[i];
        vals[i] = NULL;
        if (!live(g, i))
            continue;
        if (nd->role == TC_CONST) {
            vals[i] = nd->value;
            continue;
        }
        if (nd->role == TC_INPUT) {
            vals[i] = inputs[nd->input];
            continue;
        }
        if (nd->n_in > (int)(sizeof ops / sizeof *ops))
            return tc_fail(g, nd->src, "'%s' has too many operands", nd->name);
        for (int j = 0; j < nd->n_in; j++)
            ops[j] = vals[nd->in[j]];
        if (eval_node(g, nd, ops, &vals[i]))
            return -1;
    }
    return 0;
}

void tc_values_free(tc_graph *g, hlo_array **vals)
{
    for (int i = 0; i < g->n_nodes; i++)
        if (vals[i] && g->nodes[i].role != TC_CONST && g->nodes[i].role != TC_INPUT)
            hlo_array_free(vals[i]);
}

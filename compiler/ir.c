/* ir.c - the compiler's graph: built from the checked module with calls inlined, tuples
 * resolved, loops with dots unrolled when their trip count is known and within the unroll
 * budget (loop.c keeps their accounts), sum poolings made convolutions (conv.c), constants
 * folded; evaluated on calibration batches. Placement is place.c's. */
#include "compiler/tpuc_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tc_fail(tc_graph *g, const hlo_instr *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hlo_vfail_at(g->err, g->file, at, fmt, ap);
    va_end(ap);
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

int tc_add_node(tc_graph *g, const hlo_instr *src, int n_in, const int *in)
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
    *nd = (tc_node){.src = src,
                    .elem = -1,
                    .shape = src->shape,
                    .n_in = n_in,
                    .role = TC_HOST,
                    .input = -1,
                    .op = -1,
                    .repeats = -1};
    nd->shape.n_tuple = 0;
    nd->shape.tuple = NULL;
    if (n_in && !(nd->in = malloc((size_t)n_in * sizeof *nd->in)))
        return -1;
    if (n_in)
        memcpy(nd->in, in, (size_t)n_in * sizeof *in);
    return g->n_nodes++;
}

/* Inlines computation comp applied to args (by parameter number) into *out. */
static bool all_zero(const hlo_ints *v)
{
    for (int i = 0; i < v->n; i++)
        if (v->v[i])
            return false;
    return true;
}

/* An instruction whose value is its operand's: a copy (values are logical arrays whatever
 * their layout), a bitcast that keeps dims and the row-major order, a pad by
 * nothing (PyTorch/XLA puts one before max pooling), a transpose by the identity, a reshape or
 * convert to the operand's own shape and type. The graph takes its operand's value instead, so
 * what follows (a fusion, an in-place read) sees through it. */
static bool is_identity(const hlo_computation *c, const hlo_instr *in)
{
    if (in->n_operands < 1 || in->shape.type == HLO_TUPLE)
        return false;
    const hlo_shape *from = &c->instrs[in->operands[0].index].shape;
    const bool same = from->type == in->shape.type && from->rank == in->shape.rank &&
                      !memcmp(from->dims, in->shape.dims, sizeof *from->dims * (size_t)from->rank);
    switch (in->opcode) {
    case HLO_OP_COPY:
    case HLO_OP_RESHAPE:
    case HLO_OP_CONVERT: return same;
    case HLO_OP_BITCAST: return same && hlo_bitcast_is_reshape(from, &in->shape);
    case HLO_OP_PAD:
        return same && all_zero(&in->pad_low) && all_zero(&in->pad_high) &&
               all_zero(&in->pad_interior);
    case HLO_OP_TRANSPOSE:
        for (int d = 0; d < in->dimensions.n; d++)
            if (in->dimensions.v[d] != d)
                return false;
        return same;
    default: return false;
    }
}

/* Whether instruction in of c uses or makes a tuple inside a tuple (host.c writes flat ones). */
static bool nested_tuple(const hlo_computation *c, const hlo_instr *in)
{
    for (int i = 0; i < in->shape.n_tuple; i++)
        if (in->shape.tuple[i].type == HLO_TUPLE)
            return true;
    for (int k = 0; k < in->n_operands; k++) {
        const hlo_shape *s = &c->instrs[in->operands[k].index].shape;
        for (int i = 0; i < s->n_tuple; i++)
            if (s->tuple[i].type == HLO_TUPLE)
                return true;
    }
    return false;
}

/* The nodes of instruction in of c, whose operands have values v, into *r: one node, or for a
 * tuple-valued instruction (hlo_tuple_result) one per element,
 * consecutive, sharing the operands. A tuple operand (while's state, a branch's argument)
 * gives the nodes its elements. Returns 0, -1 when out of memory, 1 with the message set. */
static int add_instr_nodes(tc_graph *g, const hlo_computation *c, const hlo_instr *in,
                           const tval *v, tval *r)
{
    const hlo_opcode op = in->opcode;
    if (in->shape.type == HLO_TUPLE && !hlo_tuple_result(op)) {
        tc_fail(g, in, "'%s': tuple-valued %s is not supported", in->name, in->opcode_name);
        return 1;
    }
    if (nested_tuple(c, in)) {
        tc_fail(g, in, "'%s': tuples inside tuples are not supported", in->name);
        return 1;
    }
    int n_in = 0;
    for (int i = 0; i < in->n_operands; i++) {
        const tval *a = &v[in->operands[i].index];
        n_in += a->node >= 0 ? 1 : a->n; /* an empty tuple gives no node */
    }
    int *ops = malloc(((size_t)n_in + 1) * sizeof *ops);
    if (!ops)
        return -1;
    n_in = 0;
    for (int i = 0; i < in->n_operands; i++) {
        const tval *a = &v[in->operands[i].index];
        if (a->node >= 0)
            ops[n_in++] = a->node;
        for (int j = 0; a->node < 0 && j < a->n; j++)
            ops[n_in++] = a->t[j].node;
    }
    int rc =
        op == HLO_OP_REDUCE_WINDOW || op == HLO_OP_REDUCE ? tc_sum_pool(g, in, ops, &r->node) : 0;
    if (rc || r->node >= 0) {
        rc = rc ? 1 : 0; /* the message is set */
    } else if (in->shape.type != HLO_TUPLE) {
        r->node = tc_add_node(g, in, n_in, ops);
        rc = r->node < 0 ? -1 : 0;
    } else if (!(r->t = calloc((size_t)in->shape.n_tuple + 1, sizeof *r->t))) {
        rc = -1;
    } else {
        r->n = in->shape.n_tuple;
        for (int j = 0; j < r->n && !rc; j++) {
            int id = tc_add_node(g, in, n_in, ops);
            r->t[j] = (tval){id, 0, NULL};
            if (id < 0) {
                rc = -1;
                break;
            }
            g->nodes[id].elem = j;
            g->nodes[id].shape = in->shape.tuple[j];
        }
    }
    free(ops);
    return rc;
}

static int inline_comp(tc_graph *g, int comp, const tval *args, tval *out);
static bool fold_fits(tc_node *nd);
static int eval_node(tc_graph *g, int i, hlo_array *const *ops, hlo_array **vals);

/* Node i's value when it depends on constants alone (then i becomes one, as tc_fold would make
 * it), else NULL; no[j] marks the nodes found not constant. */
static const hlo_array *const_value(tc_graph *g, int i, char *no)
{
    tc_node *nd = &g->nodes[i];
    if (nd->role == TC_CONST)
        return nd->value;
    hlo_array *ops[HLO_MAX_RANK + 8];
    bool all = !no[i] && nd->role == TC_HOST && nd->src->opcode != HLO_OP_ALL_REDUCE &&
               nd->n_in <= (int)(sizeof ops / sizeof *ops);
    for (int j = 0; all && j < nd->n_in; j++)
        all = (ops[j] = (hlo_array *)const_value(g, nd->in[j], no)) != NULL;
    if (all && fold_fits(nd) && !eval_node(g, i, ops, NULL))
        return nd->value;
    no[i] = 1;
    return NULL;
}

/* Forgets the nodes from mark on. */
static void drop_nodes(tc_graph *g, int mark)
{
    for (int i = mark; i < g->n_nodes; i++) {
        free(g->nodes[i].in);
        hlo_array_free(g->nodes[i].value);
    }
    g->n_nodes = mark;
}

/* While in, its state init, unrolled into *r: its condition and body inlined in turn for as
 * long as the condition depends on constants alone (a fori_loop's or lax.scan's counter), at
 * most TC_UNROLL_MAX_TRIPS times and while the values its trips compute take at most
 * g->unroll_bytes, so that the body's dots are graph nodes the device can run.
 * Returns 0, 1 when the trip count is not known at compile time or the loop is over budget
 * (the graph as it was; *why says which for the latter), -1 with the message set. */
static int unroll_while(tc_graph *g, const hlo_instr *in, const tval *init, tval *r,
                        const char **why)
{
    const int mark = g->n_nodes;
    int first_end = mark, trip_start = mark;
    uint64_t bytes = 0;
    tval state;
    if (tval_copy(init, &state))
        return tc_fail(g, NULL, "out of memory");
    for (int trip = 0;; trip++) {
        tval pred;
        if (inline_comp(g, in->condition, &state, &pred)) {
            tval_free(&state);
            return -1;
        }
        char *no = calloc((size_t)g->n_nodes + 1, 1);
        const hlo_array *p = no && pred.node >= 0 ? const_value(g, pred.node, no) : NULL;
        const bool more = p && hlo_array_get(p, 0) != 0;
        free(no);
        tval_free(&pred);
        if (more && trip == TC_UNROLL_MAX_TRIPS)
            *why = "unrolled, it would take more than TC_UNROLL_MAX_TRIPS trips "
                   "(docs/compiler.md)";
        if (!p || *why)
            break;
        if (!more) {
            *r = state;
            return 0;
        }
        tval next;
        const int rc = inline_comp(g, in->body, &state, &next);
        tval_free(&state);
        if (rc)
            return -1;
        state = next;
        bytes += tc_trip_bytes(g, trip_start, g->n_nodes);
        if (bytes > g->unroll_bytes)
            *why = "unrolled, its trips would compute more bytes than "
                   "tpuc_options.unroll_bytes (docs/compiler.md)";
        if (trip)
            tc_mark_repeats(g, mark, first_end, trip_start, g->n_nodes);
        first_end = trip ? first_end : g->n_nodes;
        trip_start = g->n_nodes;
    }
    tval_free(&state);
    drop_nodes(g, mark);
    return 1;
}

static int inline_comp(tc_graph *g, int comp, const tval *args, tval *out)
{
    const hlo_computation *c = &g->m->comps[comp];
    int n = c->n_instrs, at, rc = 0;
    const char *why = NULL; /* why a while with dots stays whole */
    int *order = malloc(((size_t)n + 1) * sizeof *order);
    tval *v = calloc((size_t)n + 1, sizeof *v);
    *out = (tval){-1, 0, NULL};
    if (!order || !v || hlo_topo_order(c, order, &at)) {
        rc = tc_fail(g, NULL, "out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++)
        v[i] = (tval){-1, 0, NULL};
    for (int p = 0; p < n && !rc; p++) {
        const hlo_instr *in = &c->instrs[order[p]];
        tval *r = &v[order[p]];
        switch (in->opcode) {
        case HLO_OP_PARAMETER: rc = tval_copy(&args[in->parameter_number], r); break;
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
        case HLO_OP_CALL:
        case HLO_OP_FUSION: {
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
        case HLO_OP_COPY:
        case HLO_OP_RESHAPE:
        case HLO_OP_BITCAST:
        case HLO_OP_CONVERT:
        case HLO_OP_PAD:
        case HLO_OP_TRANSPOSE:
            if (is_identity(c, in)) {
                rc = tval_copy(&v[in->operands[0].index], r);
                break;
            }
            goto node;
        case HLO_OP_WHILE:
            if (!tc_has_dot(g->m, in->body))
                goto node;
            rc = unroll_while(g, in, &v[in->operands[0].index], r, &why);
            if (rc < 0)
                goto done; /* the message is set */
            if (rc == 0)
                break;
            rc = 0;
            goto node;
        case HLO_OP_CUSTOM_CALL:
            rc = tc_fail(g, in, "'%s' (target \"%s\") is not something the compiler can lower",
                         in->name, in->custom_call_target ? in->custom_call_target : "");
            goto done;
        default:
        node:
            rc = add_instr_nodes(g, c, in, v, r);
            if (rc > 0) {
                rc = -1;
                goto done; /* the message is set */
            }
            for (int j = -1; why && j < r->n; j++) /* a while kept whole, over a budget */
                if ((j < 0 ? r->node : r->t[j].node) >= 0)
                    g->nodes[j < 0 ? r->node : r->t[j].node].host_reason = why;
            why = NULL;
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

const hlo_shape *tc_operand_shape(const tc_graph *g, const hlo_instr *in, int i)
{
    return &hlo_instr_owner(g->m, in)->instrs[in->operands[i].index].shape;
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
        int id = tc_add_node(g, p, 0, NULL);
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
    for (int i = 0; i < g->n_ops; i++) {
        tc_op *m = &g->ops[i];
        free(m->krow);
        free(m->wf);
        free(m->wq);
        free(m->wh);
        free(m->bias_f);
        free(m->bias_q);
        free(m->mult);
        free(m->shift);
        free(m->acc_scale);
    }
    for (int i = 0; i < g->n_made; i++) {
        free(g->made[i]->window.dims);
        if (g->made[i]->opcode == HLO_OP_CONSTANT) /* its name; the convolution's is borrowed */
            free(g->made[i]->name);
        free(g->made[i]);
    }
    free(g->made);
    free(g->nodes);
    free(g->inputs);
    free(g->outputs);
    free(g->ops);
    free(g->cal_min);
    free(g->cal_max);
    hlo_text_free(&g->warnings);
    hlo_text_free(&g->report);
}

/* ---------------------------------------------------------------- folding -- */

/* Whether folding node nd stays within the compile-time budget (else it says why not). */
static bool fold_fits(tc_node *nd)
{
    const int64_t esize =
        hlo_type_size(nd->shape.type) ? (int64_t)hlo_type_size(nd->shape.type) : 8;
    if (nd->shape.elements <= TC_FOLD_MAX_BYTES / esize)
        return true;
    nd->host_reason = "folding it would build more than the compile-time budget of "
                      "1 GiB (docs/compiler.md)";
    return false;
}

bool tc_is_made(const tc_graph *g, const hlo_instr *in)
{
    for (int i = 0; i < g->n_made; i++)
        if (g->made[i] == in)
            return true;
    return false;
}

/* Evaluates node i on its operand values into vals[i], or when vals is NULL into its value,
 * making it a constant. An element of a tuple-valued instruction evaluates the whole
 * instruction once for itself and the later live elements still without a value (they share
 * the operands), and stores theirs too. */
static int eval_node(tc_graph *g, int i, hlo_array *const *ops, hlo_array **vals)
{
    const tc_node *nd = &g->nodes[i];
    hlo_array *elems[64] = {NULL};
    const int n = nd->elem >= 0 ? nd->src->shape.n_tuple : 1,
              first = i - (nd->elem > 0 ? nd->elem : 0);
    if (n > (int)(sizeof elems / sizeof *elems))
        return tc_fail(g, nd->src, "'%s' has too many results", nd->src->name);
    /* Made nodes (conv.c's): a convolution evaluates the reduce-window or reduce it equals on
     * in[0] and in[2] (a reduce's sums have its spatial dims of 1 added: the same order), a
     * reshape (of a global one to the reduce's shape) copies its operand. */
    hlo_array *sum_ops[2] = {NULL, NULL};
    if (nd->sum_of) {
        sum_ops[0] = ops[0];
        sum_ops[1] = ops[2];
    }
    if (nd->src->opcode == HLO_OP_RESHAPE && tc_is_made(g, nd->src)) {
        if (!(elems[0] = hlo_array_new(nd->shape.type, nd->shape.rank, nd->shape.dims)))
            return tc_fail(g, nd->src, "out of memory");
        memcpy(elems[0]->data, ops[0]->data,
               (size_t)nd->shape.elements * hlo_type_size(nd->shape.type));
    } else if (hlo_eval_instr(g->m, g->file, nd->sum_of ? nd->sum_of : nd->src,
                              nd->sum_of ? sum_ops : ops, elems, g->err)) {
        return -1;
    }
    if (nd->sum_of && nd->sum_of->opcode == HLO_OP_REDUCE) {
        elems[0]->shape.rank = nd->shape.rank;
        memcpy(elems[0]->shape.dims, nd->shape.dims, sizeof nd->shape.dims);
    }
    for (int j = 0; j < n; j++) {
        const int k = first + j;
        tc_node *to = &g->nodes[k];
        const bool want = k == i || (k > i && tc_live(g, k) &&
                                     (vals ? !vals[k] : to->role == TC_HOST && fold_fits(to)));
        if (!want) {
            hlo_array_free(elems[j]);
        } else if (vals) {
            vals[k] = elems[j];
        } else {
            to->value = elems[j];
            to->role = TC_CONST;
        }
    }
    return 0;
}

bool tc_live(const tc_graph *g, int i) { return g->nodes[i].n_users > 0; }

int tc_only_user(const tc_graph *g, int i)
{
    if (g->nodes[i].n_users != 1 || g->nodes[i].output)
        return -1;
    for (int u = i + 1; u < g->n_nodes; u++)
        for (int j = 0; tc_live(g, u) && j < g->nodes[u].n_in; j++)
            if (g->nodes[u].in[j] == i)
                return u;
    return -1;
}

int tc_fold(tc_graph *g)
{
    hlo_array *ops[HLO_MAX_RANK + 8];
    for (int i = 0; i < g->n_nodes; i++) {
        tc_node *nd = &g->nodes[i];
        /* An all-reduce's value is the other devices' too: never a constant. */
        if (!tc_live(g, i) || nd->role != TC_HOST || nd->src->opcode == HLO_OP_ALL_REDUCE)
            continue;
        bool all = nd->n_in <= (int)(sizeof ops / sizeof *ops);
        for (int j = 0; all && j < nd->n_in; j++) {
            all = g->nodes[nd->in[j]].role == TC_CONST;
            ops[j] = all ? g->nodes[nd->in[j]].value : NULL;
        }
        if (all && fold_fits(nd) && eval_node(g, i, ops, NULL))
            return -1;
    }
    /* Constants only constants use are no longer needed. */
    for (int i = g->n_nodes - 1; i >= 0; i--) {
        tc_node *nd = &g->nodes[i];
        if (nd->role == TC_CONST && tc_live(g, i))
            for (int j = 0; j < nd->n_in; j++)
                g->nodes[nd->in[j]].n_users--;
        if (nd->role == TC_CONST)
            nd->n_in = 0;
    }
    for (int i = 0; i < g->n_nodes; i++)
        if (!tc_live(g, i) && g->nodes[i].value && g->nodes[i].role == TC_CONST) {
            hlo_array_free(g->nodes[i].value);
            g->nodes[i].value = NULL;
        }
    return 0;
}

/* ------------------------------------------------------------- evaluation -- */

int tc_eval(tc_graph *g, hlo_array *const *inputs, hlo_array **vals)
{
    hlo_array *ops[64];
    for (int i = 0; i < g->n_nodes; i++)
        vals[i] = NULL;
    for (int i = 0; i < g->n_nodes; i++) {
        tc_node *nd = &g->nodes[i];
        if (!tc_live(g, i) || vals[i]) /* vals[i]: set with an earlier element of its tuple */
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
        if (nd->src->opcode == HLO_OP_ALL_REDUCE) /* its peers' operands are not here */
            return tc_fail(g, nd->src,
                           "'%s': calibration runs one device alone and cannot evaluate an "
                           "all-reduce (compile with --precision bf16)",
                           nd->src->name);
        for (int j = 0; j < nd->n_in; j++)
            ops[j] = vals[nd->in[j]];
        if (eval_node(g, i, ops, vals))
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

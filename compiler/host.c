/* host.c - the host program: every node the outputs need that the device does not compute,
 * printed as an HLO module in which each device segment is one custom-call "tpu.segment.K"
 * (docs/package.md), parsed and checked again before it goes into the package. */
#include "compiler/tpuc_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    tc_graph *g;
    hlo_text t;
    char *done;     /* per node: printed (or needs no line) */
    char *seg_done; /* per segment */
    bool *reducer;  /* per computation of the module: printed */
} host_writer;

static int emit_node(host_writer *w, int i);

/* The model's input_output_alias in the host program's terms (its outputs are one flat tuple,
 * its parameters the model inputs left after binding): an output that updates a parameter bound
 * as weights, or an element of a tuple parameter, has no input to update and is left out. */
static void print_aliases(hlo_text *t, const tc_graph *g)
{
    const hlo_computation *entry = &g->m->comps[g->m->entry];
    int n = 0;
    for (int i = 0; i < g->m->n_aliases; i++) {
        const hlo_alias *a = &g->m->aliases[i];
        const int out = hlo_tuple_leaf(&entry->instrs[entry->root].shape, &a->output);
        int in = -1;
        for (int k = 0; k < g->n_inputs && a->param_index.n == 0; k++)
            if (g->nodes[g->inputs[k]].src->parameter_number == a->param)
                in = k;
        if (out < 0 || out >= g->n_outputs || in < 0)
            continue;
        hlo_text_printf(t, "%s{%d}: (%d, {}, %s)", n++ ? ", " : ", input_output_alias={ ", out, in,
                        a->must ? "must-alias" : "may-alias");
    }
    if (n)
        hlo_text_printf(t, " }");
}

/* Segment s as one custom-call returning a tuple (its operands: tc_segment_inputs), then one
 * get-tuple-element per result named after the node it carries. */
static int emit_segment(host_writer *w, int s)
{
    tc_graph *g = w->g;
    if (w->seg_done[s])
        return 0;
    w->seg_done[s] = 1;
    int n_ops = 0, n_res = 0;
    tc_seg_input *ops = tc_segment_inputs(g, s, &n_ops);
    int *res = malloc(((size_t)g->n_ops + 1) * sizeof *res);
    int rc = ops && res ? 0 : tc_fail(g, NULL, "out of memory");
    for (int j = 0; j < n_ops && !rc; j++)
        rc = emit_node(w, ops[j].node);
    for (int i = 0; i < g->n_ops && !rc; i++)
        if (g->ops[i].seg == s && g->ops[i].to_host)
            res[n_res++] = g->ops[i].out;
    if (!rc) {
        hlo_text_printf(&w->t, "  segment.%d = (", s);
        for (int j = 0; j < n_res; j++) {
            const tc_op *op = &g->ops[g->nodes[res[j]].op];
            hlo_shape sh = g->nodes[res[j]].shape;
            if (op->exact)
                sh.type = HLO_S32;
            hlo_text_printf(&w->t, "%s", j ? ", " : "");
            hlo_print_shape(&w->t, &sh);
        }
        hlo_text_printf(&w->t, ") custom-call(");
        for (int j = 0; j < n_ops; j++)
            hlo_text_printf(&w->t, "%s%s", j ? ", " : "", g->nodes[ops[j].node].name);
        hlo_text_printf(&w->t, "), custom_call_target=\"tpu.segment.%d\"\n", s);
        for (int j = 0; j < n_res; j++) {
            const tc_node *nd = &g->nodes[res[j]];
            hlo_text_printf(&w->t, "  %s = ", nd->name);
            hlo_print_shape(&w->t, &nd->shape);
            hlo_text_printf(&w->t, " get-tuple-element(segment.%d), index=%d\n", s, j);
            w->done[res[j]] = 1;
        }
    }
    free(ops);
    free(res);
    return rc;
}

static bool is_identity_perm(const int64_t *perm, int rank)
{
    for (int k = 0; k < rank; k++)
        if (perm[k] != k)
            return false;
    return true;
}

/* A bitcast node as the logical ops it stands for, since the host program's text carries no
 * layouts (hlo_bitcast_is_reshape): a reshape, or a transpose into the operand's physical
 * order, a reshape to the result's and a transpose out of it, each left out when it moves
 * nothing. */
static int emit_bitcast(host_writer *w, const tc_node *nd, const char *operand)
{
    const hlo_instr *in = nd->src;
    const hlo_shape *from = tc_operand_shape(w->g, in, 0);
    hlo_instr reshape;
    hlo_instr_init(&reshape);
    reshape.opcode = HLO_OP_RESHAPE;
    if (hlo_bitcast_is_reshape(from, &in->shape)) {
        hlo_print_instr(&w->t, w->g->m, &reshape, false, nd->name, &nd->shape, &operand, 1);
        return 0;
    }
    int order_in[HLO_MAX_RANK], order_out[HLO_MAX_RANK];
    int64_t perm_in[HLO_MAX_RANK], perm_out[HLO_MAX_RANK];
    hlo_layout_order(from, order_in);
    hlo_layout_order(&in->shape, order_out);
    hlo_shape phys_in = *from, phys_out = nd->shape;
    phys_in.has_layout = phys_out.has_layout = false;
    for (int k = 0; k < from->rank; k++) {
        perm_in[k] = order_in[k];
        phys_in.dims[k] = from->dims[order_in[k]];
    }
    for (int k = 0; k < nd->shape.rank; k++) {
        perm_out[order_out[k]] = k;
        phys_out.dims[k] = nd->shape.dims[order_out[k]];
    }
    hlo_instr tr_in = reshape, tr_out;
    tr_in.opcode = HLO_OP_TRANSPOSE;
    tr_out = tr_in;
    tr_in.dimensions = (hlo_ints){true, from->rank, perm_in};
    tr_out.dimensions = (hlo_ints){true, nd->shape.rank, perm_out};
    const struct {
        const hlo_instr *attrs;
        const hlo_shape *shape;
        const char *suffix;
        bool skip;
    } steps[3] = {
        {&tr_in, &phys_in, ".phys_in", is_identity_perm(perm_in, from->rank)},
        {&reshape, &phys_out, ".phys_out",
         phys_in.rank == phys_out.rank &&
             !memcmp(phys_in.dims, phys_out.dims, sizeof *phys_in.dims * (size_t)phys_in.rank)},
        {&tr_out, &nd->shape, "", is_identity_perm(perm_out, nd->shape.rank)},
    };
    int last = 2;
    while (steps[last].skip) /* not all three: the bitcast would be a reshape */
        last--;
    const size_t len = strlen(nd->name) + 16;
    char *names = malloc(3 * len);
    if (!names)
        return tc_fail(w->g, NULL, "out of memory");
    const char *prev = operand;
    for (int k = 0; k <= last; k++) {
        if (steps[k].skip)
            continue;
        char *name = names + (size_t)k * len;
        snprintf(name, len, "%s%s", nd->name, k == last ? "" : steps[k].suffix);
        hlo_print_instr(&w->t, w->g->m, steps[k].attrs, false, name,
                        k == last ? &nd->shape : steps[k].shape, &prev, 1);
        prev = name;
    }
    free(names);
    return 0;
}

/* The names of node nd's instruction's operands (opn, malloc'ed) from its nodes' names: a
 * tuple operand (while's state, a branch's argument; flat: ir.c) becomes a tuple instruction
 * "<base>.arg<k>" of its elements' nodes, printed first. */
static int operand_names(host_writer *w, const tc_node *nd, const char *base,
                         const char *const *names, char **opn)
{
    const hlo_computation *c = hlo_instr_owner(w->g->m, nd->src);
    for (int k = 0, j = 0; k < nd->src->n_operands; k++) {
        const hlo_shape *s = &c->instrs[nd->src->operands[k].index].shape;
        const bool tuple = s->type == HLO_TUPLE;
        const size_t len = (tuple ? strlen(base) : strlen(names[j])) + 32;
        if (!(opn[k] = malloc(len)))
            return tc_fail(w->g, NULL, "out of memory");
        if (!tuple) {
            snprintf(opn[k], len, "%s", names[j++]);
            continue;
        }
        snprintf(opn[k], len, "%s.arg%d", base, k);
        hlo_text_printf(&w->t, "  %s = ", opn[k]);
        hlo_print_shape(&w->t, s);
        hlo_text_printf(&w->t, " tuple(");
        for (int e = 0; e < s->n_tuple; e++)
            hlo_text_printf(&w->t, "%s%s", e ? ", " : "", names[j++]);
        hlo_text_printf(&w->t, ")\n");
    }
    return 0;
}

static int emit_node(host_writer *w, int i)
{
    tc_graph *g = w->g;
    tc_node *nd = &g->nodes[i];
    if (w->done[i])
        return 0;
    if (nd->role == TC_DEVICE)
        return emit_segment(w, g->ops[nd->op].seg);
    w->done[i] = 1;
    if (nd->role == TC_CONST) {
        hlo_print_constant(&w->t, false, nd->name, nd->value);
        return 0;
    }
    if (nd->role == TC_INPUT) {
        hlo_instr p = *nd->src;
        p.parameter_number = nd->input;
        hlo_print_instr(&w->t, g->m, &p, false, nd->name, &nd->shape, NULL, 0);
        return 0;
    }
    const int n_ops = nd->src->n_operands;
    const char **names = malloc(((size_t)nd->n_in + 1) * sizeof *names);
    char **opn = calloc((size_t)n_ops + 1, sizeof *opn);
    char *base = malloc(strlen(nd->name) + 1);
    int rc = names && opn && base ? 0 : tc_fail(g, NULL, "out of memory");
    if (base)
        memcpy(base, nd->name, strlen(nd->name) + 1);
    for (int j = 0; j < nd->n_in && !rc; j++) {
        rc = emit_node(w, nd->in[j]);
        names[j] = g->nodes[nd->in[j]].name;
    }
    if (!rc && nd->elem >= 0) /* the tuple-valued instruction goes under its elements' base */
        *strrchr(base, '_') = 0;
    const bool made = tc_is_made(g, nd->src); /* conv.c's reshape of a global sum pooling */
    if (!rc && nd->src->opcode != HLO_OP_BITCAST && !made)
        rc = operand_names(w, nd, base, names, opn);
    if (!rc && nd->src->opcode == HLO_OP_BITCAST)
        rc = emit_bitcast(w, nd, names[0]);
    else if (!rc && made)
        hlo_print_instr(&w->t, g->m, nd->src, false, base, &nd->shape, names, 1);
    else if (!rc)
        hlo_print_instr(&w->t, g->m, nd->src, false, base,
                        nd->elem >= 0 ? &nd->src->shape : &nd->shape, (const char *const *)opn,
                        n_ops);
    for (int j = 0; !rc && nd->elem >= 0 && j < nd->src->shape.n_tuple; j++) {
        const int first = i - nd->elem;
        const tc_node *e = &g->nodes[first + j];
        hlo_text_printf(&w->t, "  %s = ", e->name);
        hlo_print_shape(&w->t, &e->shape);
        hlo_text_printf(&w->t, " get-tuple-element(%s), index=%d\n", base, j);
        w->done[first + j] = 1;
    }
    for (int k = 0; opn && k < n_ops; k++)
        free(opn[k]);
    free(opn);
    free(base);
    free(names);
    return rc;
}

/* Computation c of m after every computation it calls, each once (printed[] marks them). */
static void print_callee(hlo_text *t, const hlo_module *m, int c, bool *printed)
{
    if (printed[c])
        return;
    printed[c] = true;
    const hlo_computation *comp = &m->comps[c];
    for (int i = 0; i < comp->n_instrs; i++)
        for (int k = 0, f; (f = hlo_callee(&comp->instrs[i], k)) >= 0; k++)
            print_callee(t, m, f, printed);
    hlo_print_computation(t, m, c, NULL);
    hlo_text_printf(t, "\n");
}

int tc_host_program(tc_graph *g, tpub_package *p)
{
    host_writer w = {g,
                     {0},
                     calloc((size_t)g->n_nodes + 1, 1),
                     calloc((size_t)g->n_segs + 1, 1),
                     calloc((size_t)g->m->n_comps + 1, sizeof(bool))};
    hlo_text body = {0};
    int rc = (!w.done || !w.seg_done || !w.reducer) ? tc_fail(g, NULL, "out of memory") : 0;
    /* Inputs first, in parameter order, then everything the outputs need. */
    for (int k = 0; k < g->n_inputs && !rc; k++)
        rc = emit_node(&w, g->inputs[k]);
    for (int k = 0; k < g->n_outputs && !rc; k++)
        rc = emit_node(&w, g->outputs[k]);
    if (!rc) {
        hlo_text_printf(&w.t, "  ROOT outputs = (");
        for (int k = 0; k < g->n_outputs; k++) {
            hlo_text_printf(&w.t, "%s", k ? ", " : "");
            hlo_print_shape(&w.t, &g->nodes[g->outputs[k]].shape);
        }
        hlo_text_printf(&w.t, ") tuple(");
        for (int k = 0; k < g->n_outputs; k++)
            hlo_text_printf(&w.t, "%s%s", k ? ", " : "", g->nodes[g->outputs[k]].name);
        hlo_text_printf(&w.t, ")\n}\n");
        /* The computations the host's ops call (reducers, comparators, loop bodies, branches),
         * before the ENTRY that uses them. */
        hlo_text_printf(&body, "HloModule %s_host", g->m->name);
        print_aliases(&body, g);
        /* The devices the runtime runs the program on side by side (its all-reduces' peers). */
        if (g->m->replica_count > 1)
            hlo_text_printf(&body, ", replica_count=%lld", (long long)g->m->replica_count);
        if (g->m->num_partitions > 1)
            hlo_text_printf(&body, ", num_partitions=%lld", (long long)g->m->num_partitions);
        hlo_text_printf(&body, "\n\n");
        for (int i = 0; i < g->n_nodes; i++)
            for (int k = 0, f; w.done[i] && g->nodes[i].role == TC_HOST &&
                               (f = hlo_callee(g->nodes[i].src, k)) >= 0;
                 k++)
                print_callee(&body, g->m, f, w.reducer);
        hlo_text_printf(&body, "ENTRY host {\n%s", w.t.s ? w.t.s : "");
        if (body.oom || w.t.oom)
            rc = tc_fail(g, NULL, "out of memory");
    }
    free(w.done);
    free(w.seg_done);
    free(w.reducer);
    hlo_text_free(&w.t);
    if (rc) {
        hlo_text_free(&body);
        return rc;
    }
    p->host_hlo = body.s;
    /* The runtime parses this text: make sure it does. */
    hlo_error e;
    hlo_module *hm = hlo_parse(p->host_hlo, strlen(p->host_hlo), "host program", &e);
    if (!hm || hlo_check(hm, "host program", &e)) {
        hlo_module_free(hm);
        return tc_fail(g, NULL, "internal error: the host program does not parse: %s", e.msg);
    }
    hlo_module_free(hm);
    return 0;
}

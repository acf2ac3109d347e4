/* loop.c - what ir.c's unrolling of a while with dots needs beside the inlining: whether a body
 * has dots, which dots of a later trip repeat the first trip's (one report line per dot of the
 * body, emit.c names them so), and what the trips' values weigh against the unroll budget. */
#include "compiler/tpuc_internal.h"

bool tc_has_dot(const hlo_module *m, int comp)
{
    const hlo_computation *c = &m->comps[comp];
    for (int i = 0; i < c->n_instrs; i++) {
        const hlo_instr *in = &c->instrs[i];
        if (in->opcode == HLO_OP_DOT || in->opcode == HLO_OP_CONVOLUTION)
            return true;
        for (int k = 0, callee; (callee = hlo_callee(in, k)) >= 0; k++)
            if (tc_has_dot(m, callee))
                return true;
    }
    return false;
}

/* A dot or convolution node's instruction (a made convolution's: the reduce-window it equals),
 * else NULL. */
static const hlo_instr *dot_src(const tc_node *nd)
{
    const hlo_opcode op = nd->src->opcode;
    return op != HLO_OP_DOT && op != HLO_OP_CONVOLUTION ? NULL : nd->sum_of ? nd->sum_of : nd->src;
}

void tc_mark_repeats(tc_graph *g, int first, int end, int from, int to)
{
    for (int pass = 0; pass < 2; pass++)
        for (int a = first, b = from;; a++, b++) {
            while (a < end && !dot_src(&g->nodes[a]))
                a++;
            while (b < to && !dot_src(&g->nodes[b]))
                b++;
            if (a == end || b == to) {
                if (a != end || b != to)
                    return;
                break;
            }
            if (dot_src(&g->nodes[a]) != dot_src(&g->nodes[b]))
                return;
            if (pass)
                g->nodes[b].repeats = g->nodes[a].repeats >= 0 ? g->nodes[a].repeats : a;
        }
}

uint64_t tc_trip_bytes(const tc_graph *g, int from, int to)
{
    uint64_t bytes = 0;
    for (int i = from; i < to; i++) {
        const hlo_shape *s = &g->nodes[i].shape;
        if (g->nodes[i].src->opcode != HLO_OP_CONSTANT)
            bytes += (uint64_t)s->elements * (hlo_type_size(s->type) ? hlo_type_size(s->type) : 8);
    }
    return bytes;
}

const char *tc_layer_name(const tc_graph *g, int node)
{
    const int first = g->nodes[node].repeats;
    return g->nodes[first >= 0 ? first : node].name;
}

/* shlo_ops_shape.c - the attributes of StableHLO's data-movement and control-flow ops onto
 * hlo_instr as the HLO text parser fills them (hlo_parse.c, hlo_attrs.c): gather's and
 * scatter's dimension numbers, dynamic_slice's sizes, sort's dimension, reverse's and map's
 * dimensions, while's and case's / if's regions. */
#include "hlo/shlo.h"

#include <string.h>

/* `dimension_numbers = #stablehlo.gather<offset_dims = [2], ..., index_vector_dim = 2>` (scatter:
 * scatter_dimension_numbers, #stablehlo.scatter<update_window_dims = ...>). Fields not given are
 * empty (index_vector_dim 0), as StableHLO leaves them out; the batching lists are kept only when
 * not empty, as XLA prints them. */
static void map_dim_numbers(parser *p, const sop *op, hlo_instr *in)
{
    const bool scatter = in->opcode == HLO_OP_SCATTER;
    const char *attr = scatter ? "scatter_dimension_numbers" : "dimension_numbers";
    const char *what = scatter ? "#stablehlo.scatter<...>" : "#stablehlo.gather<...>";
    hlo_gather_dims *g = &in->gather;
    size_t pos = shlo_find_attr(p, op, attr, NULL);
    if (!pos)
        lx_fail_at(p, op->at, "%s without %s", op->name, attr);
    p->pos = pos;
    stok h = sx_expect(p, S_HASH, what);
    if (!(h.len == strlen(what) - 6 && !memcmp(p->s + h.pos, what + 1, h.len)))
        sx_expected(p, h, what);
    sx_expect_punct(p, '<', what);
    bool seen_ivd = false;
    g->index_vector_dim = 0;
    for (int n = 0; !sx_eat_punct(p, '>'); n++) {
        if (n)
            sx_expect_punct(p, ',', "or '>' in the dimension numbers");
        stok key = sx_expect(p, S_WORD, "a dimension numbers field");
        sx_expect_punct(p, '=', "after the field name");
        if (sx_is(p, key, "index_vector_dim")) {
            if (seen_ivd)
                lx_fail_at(p, key.at, "index_vector_dim given twice");
            seen_ivd = true;
            g->index_vector_dim = sx_int(p, "index_vector_dim", 0, HLO_MAX_RANK);
            continue;
        }
        int k = 0;
        while (k < HLO_GATHER_LISTS - 1 && !sx_is(p, key, hlo_gather_list_name(scatter, k)))
            k++;
        if (k == HLO_GATHER_LISTS - 1)
            lx_fail_at(p, key.at, "unknown dimension numbers field '%.*s'", (int)key.len,
                       p->s + key.pos);
        hlo_ints *l = hlo_gather_list(g, k);
        if (l->present)
            lx_fail_at(p, key.at, "%.*s given twice", (int)key.len, p->s + key.pos);
        shlo_dim_list(p, l);
        if (l->n > HLO_MAX_RANK)
            lx_fail_at(p, key.at, "%.*s has more than %d dims", (int)key.len, p->s + key.pos,
                       HLO_MAX_RANK);
    }
    for (int k = 0; k < HLO_GATHER_LISTS - 1; k++) {
        hlo_ints *l = hlo_gather_list(g, k);
        l->present = k < 3 || l->n > 0;
    }
    if (!scatter && !shlo_get_ints(p, op, "slice_sizes", NULL, &g->slice_sizes, 0))
        lx_fail_at(p, op->at, "gather without slice_sizes");
}

/* sort's `dimension = 1` (StableHLO's default -1: the last; negative counts from the end) and
 * `is_stable = true`. */
static void map_sort(shlo *s, const sop *op, hlo_instr *in)
{
    parser *p = s->p;
    int64_t stable = 0;
    hlo_ints l = {true, 1, lx_alloc(p, sizeof(int64_t))};
    size_t pos = shlo_find_attr(p, op, "dimension", NULL);
    if (pos && (!shlo_get_ints(p, op, "dimension", NULL, &l, -HLO_MAX_RANK) || l.n != 1))
        lx_fail_at(p, pos, "dimension: expected one integer");
    if (!pos)
        l.v[0] = -1;
    if (l.v[0] < 0 && in->n_operands > 0)
        l.v[0] += shlo_instr(s, in->operands[0].index)->shape.rank;
    if (l.v[0] < 0) /* hlo_check reports one past the rank */
        lx_fail_at(p, pos ? pos : op->at, "sort dimension out of range");
    in->dimensions = l;
    if (shlo_get_int(p, op, "is_stable", NULL, &stable))
        in->is_stable = stable != 0;
}

void shlo_map_shape_op(shlo *s, const sop *op, hlo_instr *in)
{
    parser *p = s->p;
    switch (in->opcode) {
    case HLO_OP_GATHER:
    case HLO_OP_SCATTER: map_dim_numbers(p, op, in); break;
    case HLO_OP_DYNAMIC_SLICE:
        shlo_get_ints(p, op, "sizes", "slice_sizes", &in->dynamic_slice_sizes, 0);
        break;
    case HLO_OP_SORT: map_sort(s, op, in); break;
    case HLO_OP_REVERSE: shlo_get_ints(p, op, "dims", "dimensions", &in->dimensions, 0); break;
    case HLO_OP_MAP: shlo_get_ints(p, op, "dimensions", NULL, &in->dimensions, 0); break;
    case HLO_OP_WHILE: /* shlo_ctrl_operands checked that there are two */
        in->to_apply = -1;
        in->condition = op->regions[0];
        in->body = op->regions[1];
        break;
    case HLO_OP_CONDITIONAL:
        in->to_apply = -1;
        in->n_branches = op->n_regions;
        in->branches = op->regions;
        in->branch_pred = shlo_is_if(op->name);
        break;
    default: break;
    }
}

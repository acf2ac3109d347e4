/* shlo_region.c - StableHLO regions as computations: reduce's and sort's bodies (a parameter
 * per block argument), while's cond and body (the arguments as XLA's while state) and the
 * branches of case and if, whose values from enclosing regions become the conditional's branch
 * operands, as XLA's converter makes them: one value as is, none or several as a tuple. */
#include "hlo/shlo.h"

#include <string.h>

shlo_region shlo_region_of(parser *p, const char *name)
{
    hlo_opcode op = hlo_opcode_of(shlo_opcode(p, name));
    return op == HLO_OP_WHILE ? SHLO_STATE : op == HLO_OP_CONDITIONAL ? SHLO_CAPTURE : SHLO_PLAIN;
}

/* Is op name StableHLO's if (a pred conditional) rather than case? */
bool shlo_is_if(const char *name)
{
    const char *dot = strrchr(name, '.');
    return !strcmp(dot ? dot + 1 : name, "if");
}

/* A tuple shape of the shapes of instructions idx[0..n) of builder b. */
static hlo_shape tuple_of(parser *p, const shlo_builder *b, const int *idx, int n)
{
    hlo_shape sh = {.type = HLO_TUPLE, .n_tuple = n};
    sh.tuple = lx_alloc(p, (size_t)n * sizeof *sh.tuple);
    for (int i = 0; i < n; i++)
        sh.tuple[i] = b->instrs[idx[i]].shape;
    return sh;
}

/* while's state: one argument is the parameter, several a tuple parameter and a
 * get-tuple-element each. */
static void add_state(shlo *s, const sarg *args, int n, size_t at)
{
    parser *p = s->p;
    if (n == 0)
        lx_fail_at(p, at, "while region without arguments");
    if (n == 1) {
        shlo_add_params(s, args, 1, NULL);
        return;
    }
    hlo_shape sh = {.type = HLO_TUPLE, .n_tuple = n};
    sh.tuple = lx_alloc(p, (size_t)n * sizeof *sh.tuple);
    for (int k = 0; k < n; k++)
        sh.tuple[k] = args[k].shape;
    s->instr_at = at;
    int param = shlo_add_instr(s, "parameter", &sh, NULL, 0);
    s->cur->instrs[param].parameter_number = 0;
    for (int k = 0; k < n; k++) {
        s->instr_at = args[k].name.at;
        int g = shlo_add_instr(s, "get-tuple-element", &args[k].shape, &param, 1);
        s->cur->instrs[g].has_index = true;
        s->cur->instrs[g].index = k;
        shlo_define_val(s, args[k].name, args[k].name.len, g, 1);
    }
}

int shlo_capture(shlo *s, shlo_builder *b, int parent)
{
    for (int i = 0; i < b->n_caps; i++)
        if (b->cap_parent[i] == parent)
            return b->cap_local[i];
    shlo_builder *cur = s->cur;
    const int param = 0;
    s->cur = b;
    int g = shlo_add_instr(s, "get-tuple-element", &b->parent->instrs[parent].shape, &param, 1);
    s->cur = cur;
    b->instrs[g].has_index = true;
    b->instrs[g].index = b->n_caps;
    b->cap_parent = lx_grow(s->p, b->cap_parent, b->n_caps, &b->cap_caps, sizeof(int));
    b->cap_local = lx_grow(s->p, b->cap_local, b->n_caps, &b->cap_locals, sizeof(int));
    b->cap_parent[b->n_caps] = parent;
    b->cap_local[b->n_caps] = g;
    return b->cap_local[b->n_caps++];
}

/* Parameter 0 of CAPTURE region b takes the captured values: a tuple of them, or the one value
 * (its get-tuple-element removed, its users using the parameter); records them for the op. */
static void finish_captures(shlo *s, shlo_builder *b)
{
    parser *p = s->p;
    hlo_instr *param = &b->instrs[0];
    if (b->n_caps != 1) {
        param->shape = tuple_of(p, b->parent, b->cap_parent, b->n_caps);
    } else {
        const int g = b->cap_local[0];
        hlo_computation *c = &s->m->comps[b->comp];
        param->shape = b->instrs[g].shape;
        memmove(&b->instrs[g], &b->instrs[g + 1], (size_t)(b->n - g - 1) * sizeof *b->instrs);
        b->n--;
        for (int i = 0; i < b->n; i++)
            for (int k = 0; k < b->instrs[i].n_operands; k++) {
                int *o = &b->instrs[i].operands[k].index;
                *o = *o == g ? 0 : *o - (*o > g);
            }
        c->root = c->root == g ? 0 : c->root - (c->root > g);
        for (int i = 0; i < s->n_calls; i++)
            if (s->calls[i].comp == b->comp && s->calls[i].instr > g)
                s->calls[i].instr--;
    }
    while (s->n_comp_caps <= b->comp) {
        s->caps = lx_grow(p, s->caps, s->n_comp_caps, &s->cap_comp_caps, sizeof *s->caps);
        s->caps[s->n_comp_caps++] = (struct scaps){NULL, -1}; /* not a CAPTURE region */
    }
    s->caps[b->comp] = (struct scaps){b->cap_parent, b->n_caps};
}

int shlo_parse_region(shlo *s, shlo_region kind, const sarg *pre, int n_pre, const int *number)
{
    parser *p = s->p;
    stok open = sx_expect_punct(p, '{', "to open a region");
    shlo_builder b;
    int comp = shlo_begin_comp(s, &b, open.at);
    b.kind = kind;
    const sarg *args = pre;
    int n = n_pre;
    if (!pre && sx_peek(p).kind == S_CARET) {
        sx_next(p);
        sarg *read = NULL;
        n = sx_punct(sx_peek(p), '(') ? shlo_parse_args(s, &read) : 0;
        args = read;
        sx_expect_punct(p, ':', "after the block label");
    }
    if (kind == SHLO_STATE) {
        add_state(s, args, n, open.at);
    } else if (kind == SHLO_CAPTURE) {
        if (n)
            lx_fail_at(p, args[0].name.at, "case and if regions take no arguments");
        s->instr_at = open.at;
        shlo_add_instr(s, "parameter", &(hlo_shape){.type = HLO_TUPLE}, NULL, 0);
        b.instrs[0].parameter_number = 0;
    } else {
        shlo_add_params(s, args, n, number);
    }
    shlo_parse_ops(s);
    if (kind == SHLO_CAPTURE)
        finish_captures(s, &b);
    shlo_end_comp(s, &b, open.at);
    return comp;
}
int shlo_binary_comp(shlo *s, const char *opcode, const hlo_shape *scalar, size_t at)
{
    shlo_builder b;
    int comp = shlo_begin_comp(s, &b, at);
    const int ops[2] = {0, 1};
    s->instr_at = at;
    for (int k = 0; k < 2; k++) {
        int i = shlo_add_instr(s, "parameter", scalar, NULL, 0);
        s->cur->instrs[i].parameter_number = k;
    }
    hlo_shape sh = *scalar;
    if (hlo_opcode_of(opcode) == HLO_OP_COMPARE)
        sh.type = HLO_PRED;
    s->m->comps[comp].root = shlo_add_instr(s, opcode, &sh, ops, 2);
    shlo_end_comp(s, &b, at);
    return comp;
}

/* Reducer argument pairs (accumulator, element) per
 * input; the body's parameters are the accumulators then the elements. */
int shlo_parse_reducer(shlo *s)
{
    parser *p = s->p;
    sarg *pairs = lx_alloc(p, 2 * 64 * sizeof *pairs), *args;
    int n = 0, *number = lx_alloc(p, 2 * 64 * sizeof *number);
    while (sx_punct(sx_peek(p), '(')) {
        size_t at = p->pos;
        if (shlo_parse_args(s, &args) != 2)
            lx_fail_at(p, lx_skip_space(p, at), "expected two arguments per reducer input");
        if (n == 64)
            lx_fail_at(p, at, "more than 64 reducer inputs");
        pairs[2 * n] = args[0];
        pairs[2 * n + 1] = args[1];
        n++;
    }
    if (!n)
        sx_expected(p, sx_peek(p), "'(' with the reducer's arguments");
    for (int g = 0; g < n; g++)
        number[2 * g] = g, number[2 * g + 1] = n + g;
    return shlo_parse_region(s, SHLO_PLAIN, pairs, 2 * n, number);
}

void shlo_parse_while(shlo *s, sop *op)
{
    parser *p = s->p;
    static const char *const words[2] = {"cond", "do"};
    sarg *args = NULL;
    int n = 0, cap = 0, cap_ops = 0;
    sx_expect_punct(p, '(', "after stablehlo.while");
    while (!sx_eat_punct(p, ')')) {
        if (n)
            sx_expect_punct(p, ',', "or ')' after an iteration argument");
        if (n >= SHLO_MAX_OPERANDS)
            lx_fail_at(p, p->pos, "more than %d operands", SHLO_MAX_OPERANDS);
        args = lx_grow(p, args, n, &cap, sizeof *args);
        memset(&args[n], 0, sizeof *args);
        args[n].name = sx_expect(p, S_VALUE, "an iteration argument such as %iterArg");
        if (memchr(p->s + args[n].name.pos, '#', args[n].name.len))
            lx_fail_at(p, args[n].name.at, "argument name with a result number");
        sx_expect_punct(p, '=', "after the iteration argument");
        op->operands = lx_grow(p, op->operands, n, &cap_ops, sizeof *op->operands);
        op->operands[n++] = shlo_use_val(s, sx_expect(p, S_VALUE, "an operand such as %0"));
    }
    op->n_operands = n;
    sx_expect_punct(p, ':', "and the while's types");
    op->results = lx_alloc(p, (size_t)n * sizeof *op->results);
    for (int k = 0; k < n; k++) {
        if (k)
            sx_expect_punct(p, ',', "and the next iteration argument's type");
        sx_type(p, &args[k].shape, 0);
        op->results[k] = args[k].shape;
    }
    op->n_results = n;
    if (sx_is(p, sx_peek(p), "attributes")) {
        sx_next(p);
        sx_skip_group(p, '{', "while attributes");
    }
    op->regions = lx_alloc(p, 2 * sizeof *op->regions);
    for (int r = 0; r < 2; r++) {
        stok w = sx_next(p);
        if (!sx_is(p, w, words[r]))
            sx_expected(p, w, r ? "'do' and the body" : "'cond' and the condition");
        op->regions[op->n_regions++] = shlo_parse_region(s, SHLO_STATE, args, n, NULL);
    }
    shlo_skip_loc(p);
}

void shlo_ctrl_operands(shlo *s, sop *op)
{
    parser *p = s->p;
    shlo_region kind = shlo_region_of(p, op->name);
    if (kind == SHLO_PLAIN)
        return;
    if (op->n_inits)
        lx_fail_at(p, op->at, "'%s' has no init values", op->name);
    if (kind == SHLO_STATE) {
        if (op->n_regions != 2)
            lx_fail_at(p, op->at, "while needs a cond and a body region");
        if (op->n_operands > 1) {
            hlo_shape sh = tuple_of(p, s->cur, op->operands, op->n_operands);
            int t = shlo_add_instr(s, "tuple", &sh, op->operands, op->n_operands);
            op->operands = lx_alloc(p, sizeof *op->operands);
            op->operands[0] = t;
            op->n_operands = 1;
        }
        return;
    }
    if (op->n_operands != 1)
        lx_fail_at(p, op->at, "'%s' takes one operand, the branch index", op->name);
    if (op->n_regions < 1 || (shlo_is_if(op->name) && op->n_regions != 2))
        lx_fail_at(p, op->at, "'%s' needs %s", op->name,
                   shlo_is_if(op->name) ? "a true and a false region" : "a region per branch");
    int *ops = lx_alloc(p, (size_t)(op->n_regions + 1) * sizeof *ops);
    ops[0] = op->operands[0];
    for (int r = 0; r < op->n_regions; r++) {
        const int comp = op->regions[r];
        if (comp >= s->n_comp_caps || s->caps[comp].n < 0)
            lx_fail_at(p, op->at, "'%s' takes its branches as regions ({...}, ...)", op->name);
        const struct scaps *c = &s->caps[comp];
        if (c->n == 1) {
            ops[r + 1] = c->v[0];
            continue;
        }
        hlo_shape sh = tuple_of(p, s->cur, c->v, c->n);
        ops[r + 1] = shlo_add_instr(s, "tuple", &sh, c->v, c->n);
    }
    op->operands = ops;
    op->n_operands = op->n_regions + 1;
}

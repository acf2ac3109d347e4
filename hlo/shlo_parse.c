/* shlo_parse.c - StableHLO (MLIR text, as jax.jit(f).lower(x).as_text() prints it) to the AST of
 * hlo.h inside a function: SSA values, computations, block arguments and ops in the pretty and
 * the generic syntax (the module around them is shlo_module.c).
 *
 * Each func.func and each region (reduce's body, ...) becomes a computation. Block arguments
 * become parameters (of regions as shlo_region.c says: while's state, case's and if's captured
 * values), an op one instruction (a splat constant a scalar constant and its broadcast), an op
 * with several results one tuple-shaped instruction and a get-tuple-element per result, and the
 * terminator (return, func.return, stablehlo.return) the ROOT (a tuple of several values).
 * Values are resolved as they are read (SSA: defined before use within a block); symbols
 * (@callee) once the module is complete. Errors longjmp out through the HLO parser's arena
 * (hlo_lex.h). */
#include "hlo/shlo.h"

#include <stdio.h>
#include <string.h>

/* What the name table of a builder's values compares. */
typedef struct {
    const parser *p;
    const shlo_builder *b;
} val_names;

static bool same_val(const void *ctx, int v, const char *s, size_t n)
{
    const val_names *c = ctx;
    const sval *sv = &c->b->vals[v];
    return sv->len == n && !memcmp(c->p->s + sv->pos, s, n);
}

/* The value group named s[0..n), or -1. */
static int find_val(const parser *p, const shlo_builder *b, const char *s, size_t n)
{
    const val_names c = {p, b};
    return b->names.slots ? b->names.slots[lx_table_slot(&b->names, s, n, same_val, &c)] - 1 : -1;
}

static void insert_val(const parser *p, shlo_builder *b, int v)
{
    const val_names c = {p, b};
    const sval *sv = &b->vals[v];
    b->names.slots[lx_table_slot(&b->names, p->s + sv->pos, sv->len, same_val, &c)] = v + 1;
}

void shlo_define_val(shlo *s, stok name, size_t len, int first, int count)
{
    parser *p = s->p;
    shlo_builder *b = s->cur;
    if (find_val(p, b, p->s + name.pos, len) >= 0)
        lx_fail_at(p, name.at, "value '%%%.*s' defined twice", (int)len, p->s + name.pos);
    b->vals = lx_grow(p, b->vals, b->n_vals, &b->cap_vals, sizeof *b->vals);
    b->vals[b->n_vals] = (sval){name.pos, len, first, count};
    if ((size_t)b->n_vals * 2 + 2 >= (b->names.slots ? b->names.mask + 1 : 0)) {
        lx_table_init(p, &b->names, (size_t)b->n_vals * 2 + 2);
        for (int v = 0; v < b->n_vals; v++)
            insert_val(p, b, v);
    }
    insert_val(p, b, b->n_vals++);
}

/* The instruction of value name[0..len) result k in builder b. */
static int lookup(shlo *s, shlo_builder *b, stok t, size_t len, int64_t k)
{
    parser *p = s->p;
    int v = find_val(p, b, p->s + t.pos, len);
    if (v < 0 && b->kind == SHLO_CAPTURE && b->parent)
        return shlo_capture(s, b, lookup(s, b->parent, t, len, k));
    if (v < 0) {
        for (const shlo_builder *a = b->parent; a; a = a->parent)
            if (find_val(p, a, p->s + t.pos, len) >= 0)
                lx_fail_at(p, t.at,
                           "value '%%%.*s' of an enclosing region used in a region (only case "
                           "and if regions may use them)",
                           (int)len, p->s + t.pos);
        lx_fail_at(p, t.at, "undefined value '%%%.*s'", (int)len, p->s + t.pos);
    }
    const sval *sv = &b->vals[v];
    if (k >= sv->count)
        lx_fail_at(p, t.at, "value '%%%.*s' has %d result%s, no #%lld", (int)len, p->s + t.pos,
                   sv->count, sv->count == 1 ? "" : "s", (long long)k);
    return sv->first + (int)k;
}

int shlo_use_val(shlo *s, stok t)
{
    parser *p = s->p;
    size_t len = t.len;
    int64_t k = 0;
    const char *hash_at = memchr(p->s + t.pos, '#', t.len);
    if (hash_at) {
        len = (size_t)(hash_at - (p->s + t.pos));
        for (const char *c = hash_at + 1; c < p->s + t.pos + t.len && k <= INT32_MAX; c++)
            k = k * 10 + (*c - '0');
    }
    return lookup(s, s->cur, t, len, k);
}

int shlo_add_instr(shlo *s, const char *opcode, const hlo_shape *shape, const int *operands,
                   int n_operands)
{
    parser *p = s->p;
    shlo_builder *b = s->cur;
    if (b->n >= (1 << 24))
        lx_fail_at(p, p->pos, "too many instructions");
    b->instrs = lx_grow(p, b->instrs, b->n, &b->cap, sizeof *b->instrs);
    hlo_instr *in = &b->instrs[b->n];
    hlo_instr_init(in);
    size_t n = strlen(opcode);
    in->opcode_name = lx_alloc(p, n + 1);
    memcpy(in->opcode_name, opcode, n);
    in->opcode = hlo_opcode_of(opcode);
    in->name = lx_alloc(p, n + 16);
    snprintf(in->name, n + 16, "%s.%d", opcode, b->n);
    lx_locate(p, s->instr_at, &in->line, &in->col);
    in->shape = *shape;
    in->n_operands = n_operands;
    in->operands = lx_alloc(p, (size_t)n_operands * sizeof *in->operands);
    for (int i = 0; i < n_operands; i++)
        in->operands[i].index = operands[i];
    return b->n++;
}

hlo_instr *shlo_instr(shlo *s, int idx) { return &s->cur->instrs[idx]; }

/* ------------------------------------------------------ computations -- */

int shlo_begin_comp(shlo *s, shlo_builder *b, size_t at)
{
    parser *p = s->p;
    if (s->depth >= HLO_MAX_DEPTH)
        lx_fail_at(p, at, "regions nested deeper than %d", HLO_MAX_DEPTH);
    if (s->m->n_comps >= (1 << 24))
        lx_fail_at(p, at, "too many computations");
    s->m->comps = lx_grow(p, s->m->comps, s->m->n_comps, &s->cap_comps, sizeof *s->m->comps);
    memset(b, 0, sizeof *b);
    b->comp = s->m->n_comps++;
    b->parent = s->cur;
    hlo_computation *c = &s->m->comps[b->comp];
    c->root = -1;
    lx_locate(p, at, &c->line, &c->col);
    char name[32];
    snprintf(name, sizeof name, "region_%d", b->comp);
    c->name = lx_alloc(p, strlen(name) + 1);
    memcpy(c->name, name, strlen(name));
    s->cur = b;
    s->depth++;
    return b->comp;
}

void shlo_end_comp(shlo *s, shlo_builder *b, size_t at)
{
    hlo_computation *c = &s->m->comps[b->comp];
    if (c->root < 0)
        lx_fail_at(s->p, at, "region or function without a return");
    c->instrs = b->instrs;
    c->n_instrs = b->n;
    s->cur = b->parent;
    s->depth--;
}

void shlo_add_params(shlo *s, const sarg *args, int n, const int *number)
{
    for (int k = 0; k < n; k++) {
        s->instr_at = args[k].name.at;
        int i = shlo_add_instr(s, "parameter", &args[k].shape, NULL, 0);
        hlo_instr *in = &s->cur->instrs[i];
        in->parameter_number = number ? number[k] : k;
        char name[24];
        snprintf(name, sizeof name, "Arg_%lld", (long long)in->parameter_number);
        in->name = lx_alloc(s->p, strlen(name) + 1);
        memcpy(in->name, name, strlen(name));
        shlo_define_val(s, args[k].name, args[k].name.len, i, 1);
    }
}

size_t shlo_skip_loc(parser *p)
{
    size_t end;
    stok t = sx_lex_at(p, p->pos, &end);
    if (!sx_is(p, t, "loc") || !sx_punct(sx_lex_at(p, end, &end), '('))
        return 0;
    p->pos = end;
    size_t at = lx_skip_space(p, p->pos);
    if (!sx_punct(sx_peek(p), ')'))
        sx_skip_value(p, false, "location");
    sx_expect_punct(p, ')', "to close the location");
    return at;
}

/* An argument's `{name = value, ...}`: tf.aliasing_output kept (JAX's donated arguments), the
 * others (result names, shardings, buffer donors without an output) skipped. */
static void parse_arg_attributes(parser *p, sarg *a)
{
    sx_expect_punct(p, '{', "to open the argument attributes");
    while (!sx_eat_punct(p, '}')) {
        stok name = sx_next(p);
        if (name.kind != S_WORD && name.kind != S_STRING)
            sx_expected(p, name, "an argument attribute's name");
        if (sx_eat_punct(p, '=')) {
            if (sx_is(p, name, "tf.aliasing_output")) {
                a->alias_at = sx_peek(p).at;
                a->alias_output = sx_int(p, "tf.aliasing_output", 0, INT32_MAX);
            }
            if (!sx_punct(sx_peek(p), ',') && !sx_punct(sx_peek(p), '}'))
                sx_skip_value(p, false, "argument attribute value");
        }
        if (!sx_punct(sx_peek(p), '}'))
            sx_expect_punct(p, ',', "or '}' after an argument attribute");
    }
}

/* `%name: type {attrs} loc(...)` (attributes and location optional, in either order). */
static void parse_arg(shlo *s, sarg *a)
{
    parser *p = s->p;
    a->alias_output = -1;
    a->name = sx_expect(p, S_VALUE, "an argument such as %arg0");
    if (memchr(p->s + a->name.pos, '#', a->name.len))
        lx_fail_at(p, a->name.at, "argument name with a result number");
    sx_expect_punct(p, ':', "after the argument name");
    sx_type(p, &a->shape, 0);
    for (int i = 0; i < 2; i++) {
        if (sx_punct(sx_peek(p), '{'))
            parse_arg_attributes(p, a);
        size_t loc = shlo_skip_loc(p);
        if (loc)
            a->loc_pos = loc;
    }
}

int shlo_parse_args(shlo *s, sarg **args)
{
    parser *p = s->p;
    int n = 0, cap = 0;
    *args = NULL;
    sx_expect_punct(p, '(', "to open the arguments");
    while (!sx_eat_punct(p, ')')) {
        if (n)
            sx_expect_punct(p, ',', "or ')' after an argument");
        if (n >= SHLO_MAX_OPERANDS * 16)
            lx_fail_at(p, p->pos, "too many arguments");
        *args = lx_grow(p, *args, n, &cap, sizeof **args);
        parse_arg(s, &(*args)[n++]);
    }
    return n;
}

static void parse_op(shlo *s);

void shlo_parse_ops(shlo *s)
{
    parser *p = s->p;
    for (;;) {
        stok t = sx_peek(p);
        if (sx_punct(t, '}')) {
            sx_next(p);
            return;
        }
        if (t.kind == S_CARET)
            lx_fail_at(p, t.at, "regions of more than one block are not supported");
        if (s->m->comps[s->cur->comp].root >= 0)
            lx_fail_at(p, t.at, "op after the region's return");
        parse_op(s);
    }
}

/* --------------------------------------------------------------- ops -- */

static void push_int(parser *p, int **v, int *n, int *cap, int x)
{
    if (*n >= SHLO_MAX_OPERANDS)
        lx_fail_at(p, p->pos, "more than %d operands", SHLO_MAX_OPERANDS);
    *v = lx_grow(p, *v, *n, cap, sizeof **v);
    (*v)[(*n)++] = x;
}

/* `{name = value, unit_name, ...}` (the '{' is next). */
static void parse_dict(shlo *s, sop *op, int *cap)
{
    parser *p = s->p;
    sx_expect_punct(p, '{', "to open attributes");
    while (!sx_eat_punct(p, '}')) {
        if (op->n_attrs)
            sx_expect_punct(p, ',', "or '}' in attributes");
        stok name = sx_next(p);
        if (name.kind != S_WORD && name.kind != S_STRING)
            sx_expected(p, name, "an attribute name");
        if (!sx_eat_punct(p, '=')) /* a unit attribute */
            continue;
        op->attrs = lx_grow(p, op->attrs, op->n_attrs, cap, sizeof *op->attrs);
        op->attrs[op->n_attrs++] = (sattr){name.pos, name.len, lx_skip_space(p, p->pos)};
        sx_skip_value(p, false, "attribute value");
    }
}

/* (%a, %b) or pretty reduce's (%x init: %c), (%y init: %d). */
static void parse_operand_group(shlo *s, sop *op, int *cap_ops, int *cap_inits)
{
    parser *p = s->p;
    sx_expect_punct(p, '(', "to open operands");
    for (int n = 0; !sx_eat_punct(p, ')'); n++) {
        if (n)
            sx_expect_punct(p, ',', "or ')' after an operand");
        push_int(p, &op->operands, &op->n_operands, cap_ops,
                 shlo_use_val(s, sx_expect(p, S_VALUE, "an operand such as %0")));
        if (sx_is(p, sx_peek(p), "init")) {
            sx_next(p);
            sx_expect_punct(p, ':', "after 'init'");
            push_int(p, &op->inits, &op->n_inits, cap_inits,
                     shlo_use_val(s, sx_expect(p, S_VALUE, "an init value such as %0")));
        }
    }
}

/* Types after ':': `T`, `T, T` (the last is the result's), `(T, ...) -> R` or `T -> R` with R
 * one type or `(T, ...)`. */
static void parse_types(shlo *s, sop *op)
{
    parser *p = s->p;
    hlo_shape sh;
    int cap = 0;
    bool func = sx_punct(sx_peek(p), '(');
    if (func) {
        sx_next(p);
        for (int n = 0; !sx_eat_punct(p, ')'); n++) {
            if (n)
                sx_expect_punct(p, ',', "or ')' in operand types");
            sx_type(p, &sh, 0);
        }
    } else {
        do
            sx_type(p, &sh, 0);
        while (sx_eat_punct(p, ','));
    }
    if (sx_peek(p).kind == S_ARROW) {
        sx_next(p);
        if (sx_eat_punct(p, '(')) {
            while (!sx_eat_punct(p, ')')) {
                if (op->n_results)
                    sx_expect_punct(p, ',', "or ')' in result types");
                if (op->n_results >= SHLO_MAX_OPERANDS)
                    lx_fail_at(p, p->pos, "more than %d results", SHLO_MAX_OPERANDS);
                op->results = lx_grow(p, op->results, op->n_results, &cap, sizeof *op->results);
                sx_type(p, &op->results[op->n_results++], 0);
            }
            return;
        }
        sx_type(p, &sh, 0);
    } else if (func) {
        sx_expected(p, sx_peek(p), "'->' after operand types");
    }
    op->results = lx_alloc(p, sizeof *op->results);
    op->results[0] = sh;
    op->n_results = 1;
}

/* After the op name: operands, attributes, regions and words up to ':' and the types. */
static void parse_op_body(shlo *s, sop *op, bool is_return)
{
    parser *p = s->p;
    int cap_ops = 0, cap_inits = 0, cap_attrs = 0, cap_words = 0, cap_regions = 0;
    for (;;) {
        size_t end;
        stok t = sx_lex_at(p, p->pos, &end);
        if (sx_punct(t, ':')) {
            sx_next(p);
            break;
        }
        if ((sx_punct(t, '}') || t.kind == S_EOF) && is_return)
            return;
        if (sx_punct(t, ',')) { /* between the pretty form's operands and attributes */
            sx_next(p);
        } else if (t.kind == S_VALUE) {
            sx_next(p);
            push_int(p, &op->operands, &op->n_operands, &cap_ops, shlo_use_val(s, t));
        } else if (t.kind == S_SYM) {
            sx_next(p);
            op->has_sym = true;
            op->sym = t;
        } else if (t.kind == S_WORD && sx_punct(sx_lex_at(p, end, &end), '=')) {
            p->pos = end;
            op->attrs = lx_grow(p, op->attrs, op->n_attrs, &cap_attrs, sizeof *op->attrs);
            op->attrs[op->n_attrs++] = (sattr){t.pos, t.len, lx_skip_space(p, p->pos)};
            sx_skip_value(p, true, "attribute value");
        } else if (sx_is(p, t, "dense")) {
            op->dense_pos = t.at;
            sx_skip_value(p, true, "dense literal");
        } else if (sx_is(p, t, "applies")) {
            sx_next(p);
            op->apply_pos = sx_expect(p, S_WORD, "an op after 'applies'").at;
        } else if (sx_is(p, t, "loc") && shlo_skip_loc(p)) {
            continue; /* locations are not kept */
        } else if (t.kind == S_WORD) {
            sx_next(p);
            op->words = lx_grow(p, op->words, op->n_words, &cap_words, sizeof *op->words);
            op->words[op->n_words++] = t;
        } else if (sx_punct(t, '(') && sx_punct(sx_lex_at(p, end, &end), '{')) {
            sx_next(p);
            do {
                op->regions = lx_grow(p, op->regions, op->n_regions, &cap_regions, sizeof(int));
                op->regions[op->n_regions++] =
                    shlo_parse_region(s, shlo_region_of(p, op->name), NULL, 0, NULL);
            } while (sx_eat_punct(p, ','));
            sx_expect_punct(p, ')', "after regions");
        } else if (sx_punct(t, '(')) {
            parse_operand_group(s, op, &cap_ops, &cap_inits);
        } else if (sx_punct(t, '[')) {
            op->bracket_pos = t.at;
            sx_skip_group(p, '[', "list");
        } else if (sx_punct(t, '<')) {
            sx_next(p);
            parse_dict(s, op, &cap_attrs);
            sx_expect_punct(p, '>', "after properties");
        } else if (sx_punct(t, '{')) {
            parse_dict(s, op, &cap_attrs);
        } else {
            sx_expected(p, t, "an operand, attribute or ':' and the op's type");
        }
    }
    parse_types(s, op);
    for (;;) {
        stok t = sx_peek(p);
        if (sx_is(p, t, "reducer")) {
            sx_next(p);
            op->regions = lx_grow(p, op->regions, op->n_regions, &cap_regions, sizeof(int));
            op->regions[op->n_regions++] = shlo_parse_reducer(s);
        } else if (!shlo_skip_loc(p)) {
            return;
        }
    }
}

/* Result names `%a, %b:2 =`: the groups' tokens and counts. */
typedef struct {
    stok name;
    int count;
} sresult;

static void parse_op(shlo *s)
{
    parser *p = s->p;
    sresult *res = NULL;
    int n_res = 0, cap = 0, total = 0;
    size_t at = lx_skip_space(p, p->pos);
    while (sx_peek(p).kind == S_VALUE) {
        if (n_res)
            sx_expect_punct(p, ',', "between result names");
        res = lx_grow(p, res, n_res, &cap, sizeof *res);
        res[n_res].name = sx_next(p);
        res[n_res].count = 1;
        if (memchr(p->s + res[n_res].name.pos, '#', res[n_res].name.len))
            lx_fail_at(p, res[n_res].name.at, "result name with a result number");
        if (sx_eat_punct(p, ':'))
            res[n_res].count = (int)sx_int(p, "result count", 1, SHLO_MAX_OPERANDS);
        total += res[n_res++].count;
        if (total > SHLO_MAX_OPERANDS)
            lx_fail_at(p, at, "more than %d results", SHLO_MAX_OPERANDS);
        if (!sx_punct(sx_peek(p), ','))
            sx_expect_punct(p, '=', "after the result names");
    }
    stok name = sx_next(p);
    sop op;
    memset(&op, 0, sizeof op);
    op.at = name.at;
    if (name.kind == S_STRING)
        op.name = sx_string(p, name);
    else if (name.kind == S_WORD)
        op.name = lx_dup_str(p, name.pos, name.len);
    else
        sx_expected(p, name, "an op name");
    bool is_return = !strcmp(op.name, "return") || !strcmp(op.name, "func.return") ||
                     !strcmp(op.name, "stablehlo.return");
    if (is_return && n_res)
        lx_fail_at(p, at, "'%s' has no results", op.name);
    if (name.kind == S_WORD && !strcmp(op.name, "stablehlo.while")) /* cond { } do { } */
        shlo_parse_while(s, &op);
    else
        parse_op_body(s, &op, is_return);
    if (is_return) {
        if (op.n_operands == 0)
            lx_fail_at(p, op.at, "return of no values");
        hlo_computation *c = &s->m->comps[s->cur->comp];
        if (op.n_operands == 1) {
            c->root = op.operands[0];
            return;
        }
        s->instr_at = op.at;
        hlo_shape sh = {.type = HLO_TUPLE, .n_tuple = op.n_operands};
        sh.tuple = lx_alloc(p, (size_t)op.n_operands * sizeof *sh.tuple);
        for (int i = 0; i < op.n_operands; i++)
            sh.tuple[i] = s->cur->instrs[op.operands[i]].shape;
        c->root = shlo_add_instr(s, "tuple", &sh, op.operands, op.n_operands);
        return;
    }
    if (op.n_results != total)
        lx_fail_at(p, op.at, "'%s' has %d result name%s but %d result type%s", op.name, total,
                   total == 1 ? "" : "s", op.n_results, op.n_results == 1 ? "" : "s");
    if (total == 0)
        lx_fail_at(p, op.at, "'%s' without results is not supported", op.name);
    hlo_shape sh = op.results[0];
    if (total > 1) {
        sh = (hlo_shape){.type = HLO_TUPLE, .n_tuple = total, .tuple = op.results};
        if (!strcmp(op.name, "stablehlo.tuple"))
            lx_fail_at(p, op.at, "'%s' has one result", op.name);
    }
    s->instr_at = at; /* instructions are located at their result names */
    shlo_ctrl_operands(s, &op);
    int *all = op.operands, n_all = op.n_operands + op.n_inits;
    if (op.n_inits) {
        if (op.n_inits != op.n_operands)
            lx_fail_at(p, op.at, "every input needs an init value");
        all = lx_alloc(p, (size_t)n_all * sizeof *all);
        memcpy(all, op.operands, (size_t)op.n_operands * sizeof *all);
        memcpy(all + op.n_operands, op.inits, (size_t)op.n_inits * sizeof *all);
    }
    size_t end = p->pos; /* shlo_map reads the attributes again */
    int idx = shlo_map(s, &op, shlo_add_instr(s, shlo_opcode(p, op.name), &sh, all, n_all));
    p->pos = end;
    int first = idx;
    if (total > 1) {
        first = s->cur->n;
        for (int k = 0; k < total; k++) {
            int g = shlo_add_instr(s, "get-tuple-element", &op.results[k], &idx, 1);
            s->cur->instrs[g].has_index = true;
            s->cur->instrs[g].index = k;
        }
    }
    for (int r = 0, k = 0; r < n_res; k += res[r++].count) {
        size_t len = res[r].name.len;
        shlo_define_val(s, res[r].name, len, first + (total > 1 ? k : 0), res[r].count);
    }
}

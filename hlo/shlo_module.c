/* shlo_module.c - the module level of StableHLO text (shlo.h): `module` and `builtin.module`
 * (nested too), each func.func in the pretty or the generic syntax as a computation, `@main`
 * (else the first function) as the ENTRY with its parameters named from the arguments' locations
 * (#loc aliases) and its input_output_alias from their tf.aliasing_output, calls resolved to
 * their functions once the module is complete. */
#include "hlo/shlo.h"

#include <stdio.h>
#include <string.h>

/* Module-level state besides shlo's: functions' arguments (for the ENTRY's parameter names) and
 * location aliases (#loc1 = loc("x")). */
typedef struct {
    struct sfn_args {
        sarg *args;
        int n;
    } * fn_args; /* parallel to s->funcs */
    struct salias {
        size_t pos, len, loc_pos;
    } * aliases;
    int n_aliases, cap_aliases, cap_fn_args;
} smodule;

/* An identifier for HLO text from name[0..n): characters other than letters, digits and '_'
 * become '_' (as JAX names params['w1'] params__w1__), '_' first when a digit starts it. */
static char *sanitize(parser *p, const char *name, size_t n, const char *suffix)
{
    bool digit = n && name[0] >= '0' && name[0] <= '9';
    char *r = lx_alloc(p, n + digit + strlen(suffix) + 1), *w = r;
    if (digit)
        *w++ = '_';
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        *w++ = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ? c : '_';
    }
    memcpy(w, suffix, strlen(suffix));
    return r;
}

static void add_func(shlo *s, smodule *sm, stok sym, int comp, sarg *args, int n)
{
    parser *p = s->p;
    for (int i = 0; i < s->n_funcs; i++)
        if (s->funcs[i].len == sym.len && !memcmp(p->s + s->funcs[i].pos, p->s + sym.pos, sym.len))
            lx_fail_at(p, sym.at, "function '@%.*s' defined twice", (int)sym.len, p->s + sym.pos);
    s->funcs = lx_grow(p, s->funcs, s->n_funcs, &s->cap_funcs, sizeof *s->funcs);
    sm->fn_args = lx_grow(p, sm->fn_args, s->n_funcs, &sm->cap_fn_args, sizeof *sm->fn_args);
    s->funcs[s->n_funcs] = (struct sfunc){sym.pos, sym.len, comp};
    sm->fn_args[s->n_funcs++] = (struct sfn_args){args, n};
    char suffix[16];
    snprintf(suffix, sizeof suffix, ".%d", comp);
    s->m->comps[comp].name = sanitize(p, p->s + sym.pos, sym.len, suffix);
}

/* '{' [^bb0[(args)]:] ops '}' as function sym's computation; its arguments are *args (*n of
 * them): given before the body (the pretty syntax) or, with label, read from the block label
 * (the generic one). Returns the computation. */
static int parse_body(shlo *s, stok sym, bool label, sarg **args, int *n)
{
    parser *p = s->p;
    stok open = sx_peek(p);
    if (!sx_punct(open, '{'))
        sx_expected(p, open, "'{' to open the function body");
    sx_next(p);
    shlo_builder b;
    int comp = shlo_begin_comp(s, &b, sym.at);
    if (label && sx_peek(p).kind == S_CARET) {
        sx_next(p);
        *n = sx_punct(sx_peek(p), '(') ? shlo_parse_args(s, args) : 0;
        sx_expect_punct(p, ':', "after the block label");
    }
    shlo_add_params(s, *args, *n, NULL);
    shlo_parse_ops(s);
    shlo_end_comp(s, &b, open.at);
    return comp;
}

/* The end of a generic op after its region, what's (`function body`, `module's region`) of the
 * noun's op: ')' [{attributes}] ':' (types) '->' (types). */
static void generic_end(parser *p, const char *what, const char *noun)
{
    char msg[64];
    snprintf(msg, sizeof msg, "after the %s", what);
    sx_expect_punct(p, ')', msg);
    snprintf(msg, sizeof msg, "%s attributes", noun);
    if (sx_punct(sx_peek(p), '{'))
        sx_skip_group(p, '{', msg);
    snprintf(msg, sizeof msg, "before the %s's type", noun);
    sx_expect_punct(p, ':', msg);
    sx_skip_group(p, '(', "operation type");
    sx_expect(p, S_ARROW, "'->' in the operation type");
    sx_skip_group(p, '(', "operation type");
}

/* func.func [public|private] @name(args) [-> results] [attributes {...}] { ops } */
static void parse_func(shlo *s, smodule *sm)
{
    parser *p = s->p;
    stok sym = sx_peek(p);
    while (sym.kind == S_WORD &&
           (sx_is(p, sym, "public") || sx_is(p, sym, "private") || sx_is(p, sym, "nested"))) {
        sx_next(p);
        sym = sx_peek(p);
    }
    sym = sx_expect(p, S_SYM, "a function name such as @main");
    sarg *args;
    int n = shlo_parse_args(s, &args);
    if (sx_peek(p).kind == S_ARROW) {
        sx_next(p);
        if (sx_punct(sx_peek(p), '('))
            sx_skip_group(p, '(', "result types");
        else {
            hlo_shape ignored;
            sx_type(p, &ignored, 0);
        }
    }
    if (sx_is(p, sx_peek(p), "attributes")) {
        sx_next(p);
        sx_skip_group(p, '{', "function attributes");
    }
    int comp = parse_body(s, sym, false, &args, &n);
    add_func(s, sm, sym, comp, args, n);
    shlo_skip_loc(p);
}

/* "func.func"() <{..., sym_name = "main", ...}> ({ ^bb0(args): ops }) : () -> () */
static void parse_generic_func(shlo *s, smodule *sm)
{
    parser *p = s->p;
    stok sym = {S_EOF, 0, 0, 0, 0};
    sx_expect_punct(p, '(', "after \"func.func\"");
    sx_expect_punct(p, ')', "after \"func.func\"(");
    sx_expect_punct(p, '<', "to open the function's properties");
    sx_expect_punct(p, '{', "to open the function's properties");
    for (int n = 0; !sx_eat_punct(p, '}'); n++) {
        if (n)
            sx_expect_punct(p, ',', "or '}' in properties");
        stok key = sx_expect(p, S_WORD, "a property name");
        sx_expect_punct(p, '=', "after the property name");
        if (sx_is(p, key, "sym_name")) {
            sym = sx_expect(p, S_STRING, "the function name as a string");
            sym.pos++;
            sym.len -= 2;
        } else {
            sx_skip_value(p, false, "property value");
        }
    }
    sx_expect_punct(p, '>', "to close the function's properties");
    if (sym.kind == S_EOF)
        lx_fail_at(p, p->pos, "function without sym_name");
    sx_expect_punct(p, '(', "to open the function body");
    sarg *args = NULL;
    int n = 0;
    int comp = parse_body(s, sym, true, &args, &n);
    generic_end(p, "function body", "function");
    add_func(s, sm, sym, comp, args, n);
    shlo_skip_loc(p);
}

static bool is_generic(parser *p, stok t, const char *name)
{
    return t.kind == S_STRING && t.len == strlen(name) + 2 &&
           !memcmp(p->s + t.pos + 1, name, t.len - 2);
}

static void parse_items(shlo *s, smodule *sm, int depth);

/* module [@name] [attributes {...}] { items } | "builtin.module"() [<{...}>] ({ items }) ... */
static void parse_module_op(shlo *s, smodule *sm, int depth)
{
    parser *p = s->p;
    stok t = sx_next(p);
    if (depth >= 4)
        lx_fail_at(p, t.at, "modules nested deeper than 4");
    if (t.kind == S_WORD) {
        stok name = sx_peek(p);
        if (name.kind == S_SYM) {
            sx_next(p);
            if (!s->m->name)
                s->m->name = sanitize(p, p->s + name.pos, name.len, "");
        }
        if (sx_is(p, sx_peek(p), "attributes")) {
            sx_next(p);
            sx_skip_group(p, '{', "module attributes");
        }
        sx_expect_punct(p, '{', "to open the module");
        parse_items(s, sm, depth + 1);
    } else {
        sx_expect_punct(p, '(', "after \"builtin.module\"");
        sx_expect_punct(p, ')', "after \"builtin.module\"(");
        if (sx_punct(sx_peek(p), '<'))
            sx_skip_group(p, '<', "module properties");
        sx_expect_punct(p, '(', "to open the module's region");
        sx_expect_punct(p, '{', "to open the module's region");
        parse_items(s, sm, depth + 1);
        generic_end(p, "module's region", "module");
    }
    shlo_skip_loc(p);
}

/* Functions and modules up to '}' (consumed), or to the end of input at depth 0. */
static void parse_items(shlo *s, smodule *sm, int depth)
{
    parser *p = s->p;
    for (;;) {
        stok t = sx_peek(p);
        if (t.kind == S_EOF && depth == 0)
            return;
        if (sx_punct(t, '}') && depth > 0) {
            sx_next(p);
            return;
        }
        if (t.kind == S_HASH && depth == 0) { /* #loc3 = loc(...) */
            sx_next(p);
            sx_expect_punct(p, '=', "after an alias name");
            size_t loc = shlo_skip_loc(p);
            if (!loc)
                sx_skip_value(p, false, "alias value");
            sm->aliases =
                lx_grow(p, sm->aliases, sm->n_aliases, &sm->cap_aliases, sizeof *sm->aliases);
            sm->aliases[sm->n_aliases++] = (struct salias){t.pos, t.len, loc};
        } else if (sx_is(p, t, "module") || is_generic(p, t, "builtin.module")) {
            parse_module_op(s, sm, depth);
        } else if (sx_is(p, t, "func.func")) {
            sx_next(p);
            parse_func(s, sm);
        } else if (is_generic(p, t, "func.func")) {
            sx_next(p);
            parse_generic_func(s, sm);
        } else {
            sx_expected(p, t, depth ? "a function or '}'" : "a module or function");
        }
    }
}

/* The name a location gives: loc("x"), loc("x"(...)) or an alias of one; NULL otherwise. */
static stok loc_name(parser *p, const smodule *sm, size_t loc_pos)
{
    stok none = {S_EOF, 0, 0, 0, 0};
    for (int hops = 0; loc_pos && hops < 2; hops++) {
        size_t end;
        stok t = sx_lex_at(p, loc_pos, &end);
        if (t.kind == S_STRING)
            return t;
        if (t.kind != S_HASH)
            return none;
        loc_pos = 0;
        for (int i = 0; i < sm->n_aliases; i++)
            if (sm->aliases[i].len == t.len &&
                !memcmp(p->s + sm->aliases[i].pos, p->s + t.pos, t.len))
                loc_pos = sm->aliases[i].loc_pos;
    }
    return none;
}

/* The ENTRY's aliases from its arguments' tf.aliasing_output: result k of several (a tuple), or
 * the one result. */
static void add_aliases(shlo *s, const smodule *sm, int fn)
{
    parser *p = s->p;
    hlo_module *m = s->m;
    const hlo_computation *c = &m->comps[s->funcs[fn].comp];
    const bool several = c->instrs[c->root].shape.type == HLO_TUPLE;
    const struct sfn_args *a = &sm->fn_args[fn];
    int cap = 0;
    for (int k = 0; k < a->n; k++) {
        if (a->args[k].alias_output < 0)
            continue;
        m->aliases = lx_grow(p, m->aliases, m->n_aliases, &cap, sizeof *m->aliases);
        hlo_alias *al = &m->aliases[m->n_aliases++];
        *al =
            (hlo_alias){.output = {.present = true}, .param = k, .param_index = {.present = true}};
        lx_locate(p, a->args[k].alias_at, &al->line, &al->col);
        if (several || a->args[k].alias_output > 0) {
            int ocap = 0;
            lx_ints_push(p, &al->output, &ocap, a->args[k].alias_output);
        }
    }
}

/* The ENTRY's parameters get the names of their locations (JAX's argument names). */
static void name_params(shlo *s, const smodule *sm, int fn)
{
    parser *p = s->p;
    hlo_computation *c = &s->m->comps[s->funcs[fn].comp];
    const struct sfn_args *a = &sm->fn_args[fn];
    for (int k = 0; k < a->n; k++) {
        hlo_instr *in = &c->instrs[k];
        stok t = loc_name(p, sm, a->args[k].loc_pos);
        char *name = t.kind == S_STRING ? sx_string(p, t) : NULL;
        if (name && *name) {
            if (strlen(name) > HLO_MAX_NAME - 16)
                lx_fail_at(p, t.at, "argument name longer than %d bytes", HLO_MAX_NAME - 16);
            in->name = sanitize(p, name, strlen(name), "");
        }
        for (int j = 0; j < k; j++)
            if (!strcmp(c->instrs[j].name, in->name)) {
                char suffix[16];
                snprintf(suffix, sizeof suffix, ".%d", k);
                in->name = sanitize(p, in->name, strlen(in->name), suffix);
                break;
            }
    }
}

void shlo_add_call(shlo *s, int instr, stok sym)
{
    s->calls = lx_grow(s->p, s->calls, s->n_calls, &s->cap_calls, sizeof *s->calls);
    s->calls[s->n_calls++] = (struct scall){s->cur->comp, instr, sym};
}

bool shlo_detect(parser *p)
{
    size_t end;
    stok t = sx_lex_at(p, 0, &end);
    return sx_is(p, t, "module") || sx_is(p, t, "func.func") || t.kind == S_HASH ||
           is_generic(p, t, "builtin.module") || is_generic(p, t, "func.func");
}

void shlo_parse_module(parser *p, hlo_module *m)
{
    shlo s;
    smodule sm;
    memset(&s, 0, sizeof s);
    memset(&sm, 0, sizeof sm);
    s.p = p;
    s.m = m;
    parse_items(&s, &sm, 0);
    if (s.n_funcs == 0)
        lx_fail_at(p, p->pos, "no func.func in the module");
    int fn = 0;
    for (int i = 0; i < s.n_funcs; i++)
        if (s.funcs[i].len == 4 && !memcmp(p->s + s.funcs[i].pos, "main", 4))
            fn = i;
    m->entry = s.funcs[fn].comp;
    m->comps[m->entry].is_entry = true;
    name_params(&s, &sm, fn);
    add_aliases(&s, &sm, fn);
    for (int i = 0; i < s.n_calls; i++) {
        const struct scall *c = &s.calls[i];
        int callee = -1;
        for (int f = 0; f < s.n_funcs && callee < 0; f++)
            if (s.funcs[f].len == c->sym.len &&
                !memcmp(p->s + s.funcs[f].pos, p->s + c->sym.pos, c->sym.len))
                callee = s.funcs[f].comp;
        if (callee < 0)
            lx_fail_at(p, c->sym.at, "unknown function '@%.*s'", (int)c->sym.len,
                       p->s + c->sym.pos);
        m->comps[c->comp].instrs[c->instr].to_apply = callee;
    }
    if (!m->name)
        m->name = sanitize(p, "module_main", 11, "");
}

/* hlo_parse.c - XLA HLO text to the AST of hlo.h.
 *
 * Grammar (after XLA's hlo_parser.cc; whitespace and comments are insignificant):
 *   module      ::= ('HloModule' name attrs)? computation+
 *   computation ::= 'ENTRY'? name ('(' (name ':' shape),* ')' '->' shape)? '{' instr+ '}' attrs
 *   instr       ::= 'ROOT'? name '=' shape opcode '(' operands ')' attrs
 *   operand     ::= shape? name
 *   attrs       ::= (',' attr_name '=' value)*
 * Operand and computation names are resolved after their computation (module) is read, so
 * definition order does not matter. Every allocation comes from one arena owned by the module;
 * an error longjmps out of the parse and drops the arena, so no partial AST survives. */
#include "hlo/hlo_lex.h"
#include "hlo/shlo.h"
#include "io/tpuio.h"

#include <ctype.h>
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ shapes -- */

static int lookup_type(const parser *p, tok t)
{
    if (t.at != t.pos) /* %f32 is a name */
        return -1;
    for (int i = 0; i < HLO_TUPLE; i++)
        if (lx_tok_is(p, t, hlo_type_name((hlo_type)i)))
            return i;
    return -1;
}

/* Does a shape start here (as opposed to a name)? A type name directly followed by '['. */
static bool at_shape(parser *p)
{
    size_t end;
    tok t = lx_lex_at(p, p->pos, &end);
    if (lx_is_punct(t, '('))
        return true;
    if (t.kind != T_NAME || lookup_type(p, t) < 0)
        return false;
    return lx_is_punct(lx_lex_at(p, end, &end), '[');
}

/* {minor_to_major[:suffix]}: the dimension list is kept (a permutation of the dims, or empty:
 * the default); the tiling and memory-space suffix after ':' is skipped. */
static void parse_layout(parser *p, hlo_shape *sh)
{
    tok open = lx_next(p);
    int n = 0;
    bool seen[HLO_MAX_RANK] = {false};
    while (lx_peek(p).kind == T_NUM) {
        tok d = lx_peek(p);
        int64_t v = lx_parse_int(p, "layout dimension", 0, HLO_MAX_RANK - 1);
        if (v >= sh->rank || seen[v])
            lx_fail_at(p, d.pos, "layout dimension %lld is %s", (long long)v,
                       v >= sh->rank ? "not one of the shape's" : "listed twice");
        seen[v] = true;
        sh->minor_to_major[n++] = (int)v;
        if (!lx_eat_punct(p, ','))
            break;
    }
    if (n && n != sh->rank)
        lx_fail_at(p, open.pos, "layout lists %d of the shape's %d dimensions", n, sh->rank);
    sh->has_layout = n > 0;
    if (lx_eat_punct(p, ':'))
        while (!lx_is_punct(lx_peek(p), '}'))
            lx_skip_value(p, "layout");
    lx_expect_punct(p, '}', "after layout");
}

static void parse_shape(parser *p, hlo_shape *sh, int depth)
{
    tok t = lx_next(p);
    if (depth >= HLO_MAX_DEPTH)
        lx_fail_at(p, t.pos, "tuple shape nested deeper than %d", HLO_MAX_DEPTH);
    if (lx_is_punct(t, '(')) {
        sh->type = HLO_TUPLE;
        int cap = 0;
        while (!lx_eat_punct(p, ')')) {
            if (sh->n_tuple > 0)
                lx_expect_punct(p, ',', "or ')' in tuple shape");
            sh->tuple = lx_grow(p, sh->tuple, sh->n_tuple, &cap, sizeof *sh->tuple);
            parse_shape(p, &sh->tuple[sh->n_tuple++], depth + 1);
        }
        return;
    }
    if (t.kind != T_NAME)
        lx_expected(p, t, "a shape");
    int type = lookup_type(p, t);
    if (type < 0 && lx_is_punct(lx_peek(p), '('))
        lx_fail_at(p, t.pos, "expected a shape before opcode '%.*s'", (int)t.len, p->s + t.pos);
    if (type < 0)
        lx_fail_at(p, t.pos, "unknown element type '%.*s'", (int)t.len, p->s + t.pos);
    sh->type = (hlo_type)type;
    if (type == HLO_TOKEN) {
        if (lx_eat_punct(p, '['))
            lx_expect_punct(p, ']', "in token shape");
        return;
    }
    lx_expect_punct(p, '[', "after element type");
    sh->elements = 1;
    if (!lx_eat_punct(p, ']')) {
        do {
            tok d = lx_peek(p);
            if (sh->rank == HLO_MAX_RANK)
                lx_fail_at(p, d.pos, "shape has more than %d dimensions", HLO_MAX_RANK);
            if (d.kind == T_LE)
                lx_next(p); /* bounded dynamic dimension: the bound is the size */
            int64_t n = lx_parse_int(p, "dimension size", 0, HLO_MAX_ELEMENTS);
            if (n && sh->elements > HLO_MAX_ELEMENTS / n)
                lx_fail_at(p, d.pos, "shape has more than %lld elements", HLO_MAX_ELEMENTS);
            sh->elements *= n;
            sh->dims[sh->rank++] = n;
        } while (lx_eat_punct(p, ','));
        lx_expect_punct(p, ']', "in shape");
    }
    /* A layout follows only when its first token is a number or ':'; otherwise the '{' opens
     * something else (an instruction list). */
    size_t end;
    tok b = lx_lex_at(p, p->pos, &end);
    if (lx_is_punct(b, '{')) {
        tok first = lx_lex_at(p, end, &end);
        if (first.kind == T_NUM || lx_is_punct(first, ':') || lx_is_punct(first, '}'))
            parse_layout(p, sh);
    }
}

/* -------------------------------------------------------- attributes -- */

static void parse_int_list(parser *p, hlo_ints *l, const char *what)
{
    int cap = 0;
    lx_expect_punct(p, '{', what);
    if (!lx_eat_punct(p, '}')) {
        do
            lx_ints_push(p, l, &cap, lx_parse_int(p, what, 0, HLO_MAX_ELEMENTS));
        while (lx_eat_punct(p, ','));
        lx_expect_punct(p, '}', what);
    }
}

static void parse_direction(parser *p, hlo_instr *in)
{
    static const char *const names[] = {"", "EQ", "NE", "LT", "LE", "GT", "GE"};
    tok t = lx_expect_name(p, "a comparison direction");
    for (int i = 1; i < 7; i++)
        if (lx_tok_is(p, t, names[i])) {
            in->comparison_direction = (hlo_cmp)i;
            return;
        }
    lx_fail_at(p, t.pos, "unknown comparison_direction '%.*s' (expected EQ NE LT LE GT GE)",
               (int)t.len, p->s + t.pos);
}

/* (',' name '=' value)*; in may be NULL (module and computation attributes: all skipped). */
static void parse_attributes(parser *p, hlo_instr *in, int comp, int instr)
{
    while (lx_eat_punct(p, ',')) {
        tok name = lx_expect_name(p, "an attribute name");
        lx_expect_punct(p, '=', "after attribute name");
        hlo_ints *list = NULL;
        bool dup = false;
        if (!in) {
            lx_skip_value(p, "attribute value");
            continue;
        }
        if (lx_tok_is(p, name, "dimensions"))
            list = &in->dimensions;
        else if (lx_tok_is(p, name, "lhs_contracting_dims"))
            list = &in->lhs_contracting_dims;
        else if (lx_tok_is(p, name, "rhs_contracting_dims"))
            list = &in->rhs_contracting_dims;
        else if (lx_tok_is(p, name, "lhs_batch_dims"))
            list = &in->lhs_batch_dims;
        else if (lx_tok_is(p, name, "rhs_batch_dims"))
            list = &in->rhs_batch_dims;
        else if (lx_tok_is(p, name, "dynamic_slice_sizes"))
            list = &in->dynamic_slice_sizes;
        else if (in->opcode == HLO_OP_GATHER || in->opcode == HLO_OP_SCATTER)
            list = lx_gather_list(p, name, in);
        if (list) {
            dup = list->present;
            list->present = true;
            if (!dup)
                parse_int_list(p, list, "in dimension list");
        } else if (lx_tok_is(p, name, "to_apply") || lx_tok_is(p, name, "calls") ||
                   (in->opcode == HLO_OP_SELECT_AND_SCATTER &&
                    (lx_tok_is(p, name, "select") || lx_tok_is(p, name, "scatter")))) {
            /* select-and-scatter's scatter= is its to_apply */
            bool calls = lx_tok_is(p, name, "calls"), select = lx_tok_is(p, name, "select");
            int *target = calls ? &in->calls : select ? &in->select : &in->to_apply;
            dup = *target != -1;
            *target = 0; /* resolved when the module is complete */
            lx_add_ref(p, comp, instr,
                       calls    ? REF_CALLS
                       : select ? REF_SELECT
                                : REF_TO_APPLY,
                       lx_expect_name(p, "a computation name"));
        } else if (lx_tok_is(p, name, "condition") || lx_tok_is(p, name, "body")) {
            bool body = lx_tok_is(p, name, "body");
            int *target = body ? &in->body : &in->condition;
            dup = *target != -1;
            *target = 0;
            lx_add_ref(p, comp, instr, body ? REF_BODY : REF_CONDITION,
                       lx_expect_name(p, "a computation name"));
        } else if (lx_tok_is(p, name, "true_computation") ||
                   lx_tok_is(p, name, "false_computation") ||
                   lx_tok_is(p, name, "branch_computations")) {
            dup = lx_parse_branches(p, in, name, comp, instr);
        } else if (lx_tok_is(p, name, "index_vector_dim") &&
                   (in->opcode == HLO_OP_GATHER || in->opcode == HLO_OP_SCATTER)) {
            dup = in->gather.index_vector_dim >= 0;
            in->gather.index_vector_dim = lx_parse_int(p, "index_vector_dim", 0, HLO_MAX_RANK);
        } else if (lx_tok_is(p, name, "is_stable") && in->opcode == HLO_OP_SORT) {
            tok v = lx_expect_name(p, "true or false");
            if (!lx_tok_is(p, v, "true") && !lx_tok_is(p, v, "false"))
                lx_expected(p, v, "true or false");
            in->is_stable = lx_tok_is(p, v, "true");
        } else if (lx_tok_is(p, name, "index")) {
            dup = in->has_index;
            in->has_index = true;
            in->index = lx_parse_int(p, "tuple index", 0, INT32_MAX);
        } else if (lx_tok_is(p, name, "slice")) {
            dup = in->slice_start.present;
            in->slice_start.present = in->slice_limit.present = in->slice_stride.present = true;
            if (!dup)
                lx_parse_slice(p, in);
        } else if (lx_tok_is(p, name, "padding")) {
            dup = in->pad_low.present;
            if (!dup)
                lx_parse_padding(p, in);
        } else if (lx_tok_is(p, name, "direction") ||
                   lx_tok_is(p, name, "comparison_direction")) { /* XLA prints direction= */
            dup = in->comparison_direction != HLO_CMP_NONE;
            parse_direction(p, in);
        } else if (lx_tok_is(p, name, "type") && in->opcode == HLO_OP_COMPARE) {
            tok t = lx_expect_name(p, "a comparison type");
            in->total_order = lx_tok_is(p, t, "TOTALORDER");
            if (!in->total_order && !lx_tok_is(p, t, "FLOAT") && !lx_tok_is(p, t, "SIGNED") &&
                !lx_tok_is(p, t, "UNSIGNED"))
                lx_fail_at(p, t.pos,
                           "unknown comparison type '%.*s' (expected FLOAT TOTALORDER SIGNED "
                           "UNSIGNED)",
                           (int)t.len, p->s + t.pos);
        } else if (lx_tok_is(p, name, "feature_index") &&
                   (in->opcode == HLO_OP_BATCH_NORM_TRAINING ||
                    in->opcode == HLO_OP_BATCH_NORM_INFERENCE)) {
            dup = in->feature_index >= 0;
            in->feature_index = lx_parse_int(p, "feature index", 0, HLO_MAX_RANK - 1);
        } else if (lx_tok_is(p, name, "epsilon") && (in->opcode == HLO_OP_BATCH_NORM_TRAINING ||
                                                     in->opcode == HLO_OP_BATCH_NORM_INFERENCE)) {
            in->epsilon = lx_parse_double(p, "epsilon");
        } else if (lx_tok_is(p, name, "iota_dimension") && in->opcode == HLO_OP_IOTA) {
            dup = in->iota_dimension >= 0;
            in->iota_dimension = lx_parse_int(p, "iota dimension", 0, INT32_MAX);
        } else if (lx_tok_is(p, name, "window") &&
                   (in->opcode == HLO_OP_CONVOLUTION || in->opcode == HLO_OP_REDUCE_WINDOW ||
                    in->opcode == HLO_OP_SELECT_AND_SCATTER)) {
            dup = in->window.present;
            if (!dup)
                lx_parse_window(p, in);
        } else if (lx_tok_is(p, name, "dim_labels") && in->opcode == HLO_OP_CONVOLUTION) {
            dup = in->dim_labels.present;
            if (!dup)
                lx_parse_dim_labels(p, in);
        } else if ((lx_tok_is(p, name, "feature_group_count") ||
                    lx_tok_is(p, name, "batch_group_count")) &&
                   in->opcode == HLO_OP_CONVOLUTION) {
            bool batch = lx_tok_is(p, name, "batch_group_count");
            int64_t *count = batch ? &in->batch_group_count : &in->feature_group_count;
            dup = *count != 0; /* 0 until given (parse_instr) */
            *count = lx_parse_int(p, batch ? "batch_group_count" : "feature_group_count", 1,
                                  HLO_MAX_ELEMENTS);
        } else if (lx_tok_is(p, name, "replica_groups") && in->opcode == HLO_OP_ALL_REDUCE) {
            dup = in->n_replica_groups > 0;
            lx_parse_replica_groups(p, in);
        } else if (lx_tok_is(p, name, "channel_id") && in->opcode == HLO_OP_ALL_REDUCE) {
            dup = in->channel_id > 0;
            in->channel_id = lx_parse_int(p, "channel id", 1, INT64_MAX);
        } else if (lx_tok_is(p, name, "use_global_device_ids") && in->opcode == HLO_OP_ALL_REDUCE) {
            tok v = lx_expect_name(p, "true or false");
            if (!lx_tok_is(p, v, "true") && !lx_tok_is(p, v, "false"))
                lx_expected(p, v, "true or false");
            in->use_global_device_ids = lx_tok_is(p, v, "true");
        } else if (lx_tok_is(p, name, "custom_call_target") && in->opcode == HLO_OP_CUSTOM_CALL) {
            dup = in->custom_call_target != NULL;
            tok s = lx_next(p);
            if (s.kind != T_STRING)
                lx_expected(p, s, "a quoted custom_call_target");
            in->custom_call_target = lx_unescape(p, s, "custom_call_target");
        } else {
            lx_skip_value(p, "attribute value");
        }
        if (dup)
            lx_fail_at(p, name.at, "duplicate attribute '%.*s'", (int)name.len, p->s + name.pos);
    }
}

/* -------------------------------------------------------- structure -- */

static void parse_operands(parser *p, hlo_instr *in, int comp, int instr)
{
    int cap = 0;
    if (lx_eat_punct(p, ')'))
        return;
    do {
        in->operands = lx_grow(p, in->operands, in->n_operands, &cap, sizeof *in->operands);
        hlo_operand *op = &in->operands[in->n_operands];
        if (at_shape(p)) {
            op->has_shape = true;
            parse_shape(p, &op->shape, 0);
        }
        lx_add_ref(p, comp, instr, in->n_operands++, lx_expect_name(p, "an operand name"));
    } while (lx_eat_punct(p, ','));
    lx_expect_punct(p, ')', "after operands");
}

/* Returns the position of the instruction's name. */
static size_t parse_instr(parser *p, hlo_instr *in, int comp, int instr)
{
    hlo_instr_init(in);
    in->feature_group_count = in->batch_group_count = 0; /* until given: repeats are errors */
    tok name = lx_next(p);
    if (lx_tok_is(p, name, "ROOT")) {
        in->is_root = true;
        name = lx_next(p);
    }
    if (name.kind != T_NAME)
        lx_expected(p, name, "an instruction name");
    in->name = lx_dup_str(p, name.pos, name.len);
    lx_locate(p, name.at, &in->line, &in->col);
    lx_expect_punct(p, '=', "after instruction name");
    parse_shape(p, &in->shape, 0);
    tok op = lx_expect_name(p, "an opcode");
    in->opcode_name = lx_dup_str(p, op.pos, op.len);
    in->opcode = hlo_opcode_of(in->opcode_name);
    lx_expect_punct(p, '(', "after opcode");
    if (in->opcode == HLO_OP_PARAMETER) {
        in->parameter_number = lx_parse_int(p, "parameter number", 0, INT32_MAX);
        lx_expect_punct(p, ')', "after parameter number");
    } else if (in->opcode == HLO_OP_CONSTANT) {
        lx_parse_literal(p, in);
        lx_expect_punct(p, ')', "after constant");
    } else {
        parse_operands(p, in, comp, instr);
    }
    parse_attributes(p, in, comp, instr);
    if (!in->feature_group_count)
        in->feature_group_count = 1;
    if (!in->batch_group_count)
        in->batch_group_count = 1;
    return name.at;
}

static bool same_name(const void *names, int v, const char *s, size_t n)
{
    const char *name = ((char *const *)names)[v];
    return strlen(name) == n && !memcmp(name, s, n);
}

/* Finds name; returns the index, or -1 after inserting `insert` (if >= 0) in the empty slot. */
static int table_find(lx_table *t, char *const *names, const char *s, size_t n, int insert)
{
    const size_t i = lx_table_slot(t, s, n, same_name, names);
    const int v = t->slots[i] - 1;
    if (v < 0 && insert >= 0)
        t->slots[i] = insert + 1;
    return v;
}

/* Name tables want a names array; instructions and computations keep theirs in structs. */
static char **names_of_instrs(parser *p, const hlo_computation *c)
{
    char **names = lx_alloc(p, ((size_t)c->n_instrs + 1) * sizeof *names);
    for (int i = 0; i < c->n_instrs; i++)
        names[i] = c->instrs[i].name;
    return names;
}

static void resolve_operands(parser *p, hlo_computation *c, int comp, int first_ref,
                             const size_t *name_pos)
{
    lx_table t;
    char **names = names_of_instrs(p, c);
    lx_table_init(p, &t, (size_t)c->n_instrs);
    for (int i = 0; i < c->n_instrs; i++) {
        int prev = table_find(&t, names, names[i], strlen(names[i]), i);
        if (prev >= 0)
            lx_fail_at(p, name_pos[i], "duplicate instruction name '%s' (first defined at %d:%d)",
                       names[i], c->instrs[prev].line, c->instrs[prev].col);
    }
    for (int r = first_ref; r < p->n_refs; r++) {
        ref *f = &p->refs[r];
        if (f->comp != comp || f->slot < 0)
            continue;
        int idx = table_find(&t, names, p->s + f->pos, f->len, -1);
        if (idx < 0)
            lx_fail_at(p, f->at, "unknown operand '%.*s' in computation '%s'", (int)f->len,
                       p->s + f->pos, c->name);
        c->instrs[f->instr].operands[f->slot].index = idx;
    }
}

/* Returns the position of the computation's name. */
static size_t parse_computation(parser *p, hlo_computation *c, int comp)
{
    tok name = lx_next(p);
    if (lx_tok_is(p, name, "ENTRY")) {
        c->is_entry = true;
        name = lx_next(p);
    }
    if (name.kind != T_NAME)
        lx_expected(p, name, "a computation name");
    c->name = lx_dup_str(p, name.pos, name.len);
    lx_locate(p, name.at, &c->line, &c->col);
    if (lx_eat_punct(p, '(')) { /* signature: (name: shape, ...) -> shape, checked and dropped */
        hlo_shape ignored;
        int n = 0;
        while (!lx_eat_punct(p, ')')) {
            if (n++)
                lx_expect_punct(p, ',', "or ')' in computation signature");
            lx_expect_name(p, "a parameter name");
            lx_expect_punct(p, ':', "after parameter name");
            memset(&ignored, 0, sizeof ignored);
            parse_shape(p, &ignored, 0);
        }
        tok arrow = lx_next(p);
        if (arrow.kind != T_ARROW)
            lx_expected(p, arrow, "'->' after computation parameters");
        memset(&ignored, 0, sizeof ignored);
        parse_shape(p, &ignored, 0);
    }
    lx_expect_punct(p, '{', "to open the computation's instructions");
    int cap = 0, pos_cap = 0, first_ref = p->n_refs;
    size_t *name_pos = NULL;
    c->root = -1;
    do {
        c->instrs = lx_grow(p, c->instrs, c->n_instrs, &cap, sizeof *c->instrs);
        name_pos = lx_grow(p, name_pos, c->n_instrs, &pos_cap, sizeof *name_pos);
        hlo_instr *in = &c->instrs[c->n_instrs];
        size_t at = lx_skip_space(p, p->pos);
        name_pos[c->n_instrs] = parse_instr(p, in, comp, c->n_instrs);
        if (in->is_root) {
            if (c->root >= 0)
                lx_fail_at(p, at, "second ROOT in computation '%s' (first is '%s')", c->name,
                           c->instrs[c->root].name);
            c->root = c->n_instrs;
        }
        c->n_instrs++;
    } while (!lx_is_punct(lx_peek(p), '}'));
    lx_next(p);
    if (c->root < 0) /* as XLA: without ROOT the last instruction is the root */
        c->root = c->n_instrs - 1;
    resolve_operands(p, c, comp, first_ref, name_pos);
    parse_attributes(p, NULL, comp, -1);
    return name.at;
}

/* Newer XLA prints a stack-frame table after the header (FileNames 1 "a.py" ... FunctionNames ...
 * FileLocations 1 {...} ... StackFrames 1 {...}) for metadata to refer to; we do not use it. */
static void skip_stack_frames(parser *p)
{
    if (!lx_tok_is(p, lx_peek(p), "FileNames"))
        return;
    for (;;) {
        tok t = lx_peek(p);
        if (t.kind == T_NUM || t.kind == T_STRING || lx_tok_is(p, t, "FileNames") ||
            lx_tok_is(p, t, "FunctionNames") || lx_tok_is(p, t, "FileLocations") ||
            lx_tok_is(p, t, "StackFrames"))
            lx_next(p);
        else if (lx_is_punct(t, '{'))
            lx_skip_value(p, "stack frame table");
        else
            return;
    }
}

/* input_output_alias={ {output}: (param, {param_index}[, may-alias | must-alias]), ... } */
static void parse_aliases(parser *p, hlo_module *m)
{
    int cap = m->n_aliases;
    lx_expect_punct(p, '{', "to open input_output_alias");
    if (lx_eat_punct(p, '}'))
        return;
    do {
        if (m->n_aliases > (1 << 24))
            lx_fail_at(p, p->pos, "too many aliases in input_output_alias");
        m->aliases = lx_grow(p, m->aliases, m->n_aliases, &cap, sizeof *m->aliases);
        hlo_alias *a = &m->aliases[m->n_aliases++];
        *a = (hlo_alias){.output = {.present = true}, .param_index = {.present = true}};
        lx_locate(p, lx_skip_space(p, p->pos), &a->line, &a->col);
        parse_int_list(p, &a->output, "in an alias's output index");
        lx_expect_punct(p, ':', "after an alias's output index");
        lx_expect_punct(p, '(', "to open an alias's parameter");
        a->param = lx_parse_int(p, "parameter number", 0, INT32_MAX);
        lx_expect_punct(p, ',', "after an alias's parameter number");
        parse_int_list(p, &a->param_index, "in an alias's parameter index");
        if (lx_eat_punct(p, ',')) {
            tok kind = lx_expect_name(p, "may-alias or must-alias");
            a->must = lx_tok_is(p, kind, "must-alias");
            if (!a->must && !lx_tok_is(p, kind, "may-alias"))
                lx_fail_at(p, kind.pos,
                           "unknown alias kind '%.*s' (expected may-alias or "
                           "must-alias)",
                           (int)kind.len, p->s + kind.pos);
        }
        lx_expect_punct(p, ')', "to close an alias's parameter");
    } while (lx_eat_punct(p, ','));
    lx_expect_punct(p, '}', "to close input_output_alias");
}

/* The header's attributes: input_output_alias, replica_count and num_partitions kept, the
 * others (layouts, flags) skipped. */
static void parse_module_attributes(parser *p, hlo_module *m)
{
    while (lx_eat_punct(p, ',')) {
        tok name = lx_expect_name(p, "an attribute name");
        lx_expect_punct(p, '=', "after attribute name");
        if (lx_tok_is(p, name, "input_output_alias"))
            parse_aliases(p, m);
        else if (lx_tok_is(p, name, "replica_count"))
            m->replica_count = lx_parse_int(p, "replica count", 1, 1 << 20);
        else if (lx_tok_is(p, name, "num_partitions"))
            m->num_partitions = lx_parse_int(p, "partition count", 1, 1 << 20);
        else
            lx_skip_value(p, "attribute value");
    }
}

static void parse_module(parser *p, hlo_module *m)
{
    tok first = lx_peek(p);
    if (first.kind == T_EOF)
        lx_fail_at(p, first.pos, "empty input: expected 'HloModule' or a computation");
    if (lx_tok_is(p, first, "HloModule")) {
        lx_next(p);
        tok name = lx_expect_name(p, "a module name after 'HloModule'");
        m->name = lx_dup_str(p, name.pos, name.len);
        parse_module_attributes(p, m);
        skip_stack_frames(p);
        if (lx_peek(p).kind == T_EOF)
            lx_fail_at(p, lx_peek(p).pos, "expected a computation after the module header");
    }
    int cap = 0, pos_cap = 0;
    size_t entry_at = 0, *name_pos = NULL;
    m->entry = -1;
    while (lx_peek(p).kind != T_EOF) {
        if (m->n_comps > (1 << 24))
            lx_fail_at(p, p->pos, "too many computations");
        m->comps = lx_grow(p, m->comps, m->n_comps, &cap, sizeof *m->comps);
        name_pos = lx_grow(p, name_pos, m->n_comps, &pos_cap, sizeof *name_pos);
        hlo_computation *c = &m->comps[m->n_comps];
        size_t at = lx_skip_space(p, p->pos);
        name_pos[m->n_comps] = parse_computation(p, c, m->n_comps);
        if (c->is_entry) {
            if (m->entry >= 0) {
                int line, col;
                lx_locate(p, entry_at, &line, &col);
                lx_fail_at(p, at, "second ENTRY computation '%s' (first is '%s' at %d:%d)", c->name,
                           m->comps[m->entry].name, line, col);
            }
            m->entry = m->n_comps;
            entry_at = at;
        }
        m->n_comps++;
    }
    if (m->entry < 0)
        lx_fail_at(p, name_pos[0], "no computation is marked ENTRY");
    lx_table t;
    char **names = lx_alloc(p, (size_t)m->n_comps * sizeof *names);
    for (int i = 0; i < m->n_comps; i++)
        names[i] = m->comps[i].name;
    lx_table_init(p, &t, (size_t)m->n_comps);
    for (int i = 0; i < m->n_comps; i++) {
        int prev = table_find(&t, names, names[i], strlen(names[i]), i);
        if (prev >= 0)
            lx_fail_at(p, name_pos[i], "duplicate computation name '%s' (first defined at %d:%d)",
                       names[i], m->comps[prev].line, m->comps[prev].col);
    }
    for (int r = 0; r < p->n_refs; r++) {
        const ref *f = &p->refs[r];
        if (f->slot >= 0)
            continue;
        int idx = table_find(&t, names, p->s + f->pos, f->len, -1);
        if (idx < 0)
            lx_fail_at(p, f->at, "unknown computation '%.*s'", (int)f->len, p->s + f->pos);
        hlo_instr *in = &m->comps[f->comp].instrs[f->instr];
        *(f->slot == REF_TO_APPLY    ? &in->to_apply
          : f->slot == REF_CALLS     ? &in->calls
          : f->slot == REF_CONDITION ? &in->condition
          : f->slot == REF_BODY      ? &in->body
          : f->slot == REF_SELECT    ? &in->select
                                     : &in->branches[REF_BRANCH - f->slot]) = idx;
    }
    if (!m->name) {
        const char *entry = m->comps[m->entry].name;
        size_t n = strlen(entry);
        m->name = lx_alloc(p, n + 8);
        memcpy(m->name, "module_", 7);
        memcpy(m->name + 7, entry, n);
    }
}

/* --------------------------------------------------------------- API -- */

/* Parses into p's arena; NULL after an error (the arena is left for the caller to free). The
 * setjmp() is here so that nothing it could clobber is live in the caller. */
static hlo_module *run(parser *const p)
{
    if (setjmp(p->fail))
        return NULL;
    hlo_module *m = lx_alloc(p, sizeof *m);
    m->replica_count = m->num_partitions = 1;
    if (shlo_detect(p)) /* StableHLO, as JAX's lower(...).as_text() prints it */
        shlo_parse_module(p, m);
    else
        parse_module(p, m);
    m->arena_ = p->arena;
    return m;
}

hlo_module *hlo_parse(const char *text, size_t len, const char *file, hlo_error *err)
{
    if (err)
        memset(err, 0, sizeof *err);
    parser p;
    memset(&p, 0, sizeof p);
    p.s = text;
    p.len = text ? len : 0;
    p.file = file ? file : "<input>";
    p.err = err;
    p.lc_line = p.lc_col = 1;
    hlo_module *m = run(&p);
    if (!m)
        lx_arena_free(p.arena);
    return m;
}

hlo_module *hlo_parse_file(const char *path, hlo_error *err)
{
    void *buf;
    size_t n;
    char why[256];
    if (tpuio_read_file(path, HLO_MAX_FILE, &buf, &n, why, sizeof why)) {
        hlo_fail(err, path, NULL, "cannot read file: %s", why);
        return NULL;
    }
    hlo_module *m = hlo_parse(buf, n, path, err);
    free(buf);
    return m;
}

void hlo_module_free(hlo_module *m)
{
    if (m)
        lx_arena_free(m->arena_); /* the module itself lives in its arena */
}

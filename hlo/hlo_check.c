/* hlo_check.c - shape checking of a parsed HLO module (hlo.h), after XLA's shape_inference.cc
 * and hlo_verifier.cc for the ops the compiler handles: the walk over the module (parameter
 * numbers, operand and call cycles, what is checked, input_output_alias), the checker's shared
 * helpers, and the structural ops: broadcast, reshape, bitcast, transpose, pad, tuple,
 * get-tuple-element, call, fusion and custom-call (device work for hlo_eval_with's hook). Every
 * rule reports the first mismatch at the instruction's name with the two sizes or shapes that
 * differ. */
#include "hlo/hlo_check_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hc_fail(checker *k, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hlo_vfail(k->err, k->file, k->in->line, k->in->col, k->in->opcode_name, fmt, ap);
    va_end(ap);
    return -1;
}

bool hlo_shape_equal(const hlo_shape *a, const hlo_shape *b)
{
    if (a->type != b->type || a->rank != b->rank || a->n_tuple != b->n_tuple)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    for (int i = 0; i < a->n_tuple; i++)
        if (!hlo_shape_equal(&a->tuple[i], &b->tuple[i]))
            return false;
    return true;
}

static int count_leaves(const hlo_shape *sh)
{
    int n = sh->type == HLO_TUPLE ? 0 : 1;
    for (int i = 0; i < sh->n_tuple; i++)
        n += count_leaves(&sh->tuple[i]);
    return n;
}

int hlo_tuple_leaf(const hlo_shape *sh, const hlo_ints *path)
{
    int leaf = 0;
    for (int d = 0; d < path->n; d++) {
        if (sh->type != HLO_TUPLE || path->v[d] < 0 || path->v[d] >= sh->n_tuple)
            return -1;
        for (int i = 0; i < path->v[d]; i++)
            leaf += count_leaves(&sh->tuple[i]);
        sh = &sh->tuple[path->v[d]];
    }
    return sh->type == HLO_TUPLE ? -1 : leaf;
}

/* The shape at path in sh, or NULL when path leaves it. */
static const hlo_shape *shape_at(const hlo_shape *sh, const hlo_ints *path)
{
    for (int d = 0; d < path->n && sh; d++)
        sh = sh->type == HLO_TUPLE && path->v[d] >= 0 && path->v[d] < sh->n_tuple
                 ? &sh->tuple[path->v[d]]
                 : NULL;
    return sh;
}

#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static int
fail_at(hlo_error *err, const char *file, int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hlo_vfail(err, file, line, col, NULL, fmt, ap);
    va_end(ap);
    return -1;
}

static void print_path(char *buf, size_t n, const hlo_ints *path)
{
    size_t at = (size_t)snprintf(buf, n, "{");
    for (int d = 0; d < path->n && at < n; d++)
        at += (size_t)snprintf(buf + at, n - at, "%s%lld", d ? "," : "", (long long)path->v[d]);
    if (at < n)
        snprintf(buf + at, n - at, "}");
}

/* input_output_alias against the ENTRY: a parameter and an output of one shape each, no output
 * aliased twice (a parameter may be, by outputs that XLA would copy). */
static int check_aliases(const hlo_module *m, const char *file, hlo_error *err)
{
    const hlo_computation *c = &m->comps[m->entry];
    const hlo_shape *root = &c->instrs[c->root].shape;
    for (int i = 0; i < m->n_aliases; i++) {
        const hlo_alias *a = &m->aliases[i];
        char out[96], in[96], os[128], ps[128];
        print_path(out, sizeof out, &a->output);
        print_path(in, sizeof in, &a->param_index);
        const hlo_instr *param = NULL;
        for (int k = 0; k < c->n_instrs && !param; k++)
            if (c->instrs[k].opcode == HLO_OP_PARAMETER &&
                c->instrs[k].parameter_number == a->param)
                param = &c->instrs[k];
        const hlo_shape *o = shape_at(root, &a->output);
        const hlo_shape *s = param ? shape_at(&param->shape, &a->param_index) : NULL;
        const char *why = !param                   ? "the ENTRY has no such parameter"
                          : !o                     ? "the ENTRY's result has no such output"
                          : !s                     ? "the parameter has no such element"
                          : !hlo_shape_equal(o, s) ? "the output and the parameter differ in shape"
                                                   : NULL;
        for (int j = 0; j < i && !why; j++)
            if (m->aliases[j].output.n == a->output.n &&
                !memcmp(m->aliases[j].output.v, a->output.v,
                        (size_t)a->output.n * sizeof *a->output.v))
                why = "the output is aliased twice";
        if (why) {
            hlo_shape_str(o ? o : root, os, sizeof os);
            hlo_shape_str(s ? s : param ? &param->shape : root, ps, sizeof ps);
            return fail_at(err, file, a->line, a->col,
                           "input_output_alias %s: (%lld, %s): %s (output %s, parameter %s)", out,
                           (long long)a->param, in, why, o ? os : "-", s ? ps : "-");
        }
    }
    return 0;
}

/* The printer's text, truncated to the buffer (hlo_print.c). */
char *hlo_shape_str(const hlo_shape *s, char *buf, size_t n)
{
    hlo_text t = {0};
    hlo_print_shape(&t, s);
    if (n)
        snprintf(buf, n, "%s", t.oom || !t.s ? "(out of memory)" : t.s);
    hlo_text_free(&t);
    return buf;
}

shape_strs hc_strs(const hlo_shape *a, const hlo_shape *b)
{
    shape_strs s;
    hlo_shape_str(a, s.a, sizeof s.a);
    hlo_shape_str(b, s.b, sizeof s.b);
    return s;
}

static int out_of_memory(checker *k) { return hlo_fail(k->err, k->file, NULL, "out of memory"); }

const hlo_shape *hc_operand(const checker *k, int i)
{
    return &k->c->instrs[k->in->operands[i].index].shape;
}

/* Operands per opcode (the op list, hlo.h): -1 where the op's own rule counts them. */
#define OPERANDS(name, hlo, stablehlo, operands, rule) [HLO_OP_##name] = operands,
static const signed char op_operands[HLO_OP_COUNT_] = {[HLO_OP_OTHER] = -1, HLO_OPS(OPERANDS)};
#undef OPERANDS

int hc_operands(const checker *k) { return op_operands[k->in->opcode]; }

int hc_arity(checker *k)
{
    const int n = hc_operands(k);
    if (k->in->n_operands != n)
        return hc_fail(k, "expects %d operand%s, has %d", n, n == 1 ? "" : "s", k->in->n_operands);
    return 0;
}

int hc_need_array(checker *k, const hlo_shape *s, const char *what)
{
    char b[160];
    if (!hc_is_array(s))
        return hc_fail(k, "%s must be an array, is %s", what, hlo_shape_str(s, b, sizeof b));
    return 0;
}

int hc_check_same_type(checker *k, const hlo_shape *s)
{
    if (s->type != k->in->shape.type)
        return hc_fail(k, "operand element type %s differs from the result's %s",
                       hlo_type_name(s->type), hlo_type_name(k->in->shape.type));
    return 0;
}

int hc_check_dim_list(checker *k, const hlo_ints *l, int rank, const char *what)
{
    for (int i = 0; i < l->n; i++) {
        if (l->v[i] < 0 || l->v[i] >= rank)
            return hc_fail(k, "%s %lld out of range for rank %d", what, (long long)l->v[i], rank);
        for (int j = 0; j < i; j++)
            if (l->v[j] == l->v[i])
                return hc_fail(k, "%s %lld repeated", what, (long long)l->v[i]);
    }
    return 0;
}

int hc_operand_result(checker *k)
{
    const hlo_shape *s = hc_operand(k, 0);
    if (hc_need_array(k, s, "the operand") || hc_need_array(k, &k->in->shape, "the result"))
        return -1;
    return hc_check_same_type(k, s);
}

static int check_broadcast(checker *k)
{
    const hlo_instr *in = k->in;
    if (hc_arity(k) || hc_operand_result(k))
        return -1;
    const hlo_shape *s = hc_operand(k, 0);
    if (!in->dimensions.present)
        return hc_fail(k, "missing dimensions");
    if (in->dimensions.n != s->rank)
        return hc_fail(k, "dimensions has %d entries but the operand has rank %d", in->dimensions.n,
                       s->rank);
    if (hc_check_dim_list(k, &in->dimensions, in->shape.rank, "dimension"))
        return -1;
    for (int i = 0; i < s->rank; i++) {
        int64_t d = in->dimensions.v[i];
        if (s->dims[i] != in->shape.dims[d])
            return hc_fail(k, "operand dim %d has size %lld but result dim %lld has size %lld", i,
                           (long long)s->dims[i], (long long)d, (long long)in->shape.dims[d]);
    }
    return 0;
}

static int check_reshape(checker *k)
{
    if (hc_arity(k) || hc_operand_result(k))
        return -1;
    const hlo_shape *s = hc_operand(k, 0);
    if (s->elements != k->in->shape.elements) {
        shape_strs t = hc_strs(s, &k->in->shape);
        return hc_fail(k, "operand %s has %lld elements but the result %s has %lld", t.a,
                       (long long)s->elements, t.b, (long long)k->in->shape.elements);
    }
    return 0;
}

static int check_transpose(checker *k)
{
    const hlo_instr *in = k->in;
    if (hc_arity(k) || hc_operand_result(k))
        return -1;
    const hlo_shape *s = hc_operand(k, 0);
    if (!in->dimensions.present)
        return hc_fail(k, "missing dimensions");
    if (in->dimensions.n != s->rank || in->shape.rank != s->rank)
        return hc_fail(k,
                       "dimensions has %d entries, operand rank %d, result rank %d: must be equal",
                       in->dimensions.n, s->rank, in->shape.rank);
    if (hc_check_dim_list(k, &in->dimensions, s->rank, "dimension"))
        return -1;
    for (int i = 0; i < s->rank; i++) {
        int64_t d = in->dimensions.v[i];
        if (in->shape.dims[i] != s->dims[d])
            return hc_fail(k, "result dim %d has size %lld but operand dim %lld has size %lld", i,
                           (long long)in->shape.dims[i], (long long)d, (long long)s->dims[d]);
    }
    return 0;
}

/* pad: out[d] = lo[d] + hi[d] + in[d] + max(in[d] - 1, 0) * interior[d]; negative lo/hi crop. */
static int check_pad(checker *k)
{
    const hlo_instr *in = k->in;
    const hlo_shape *s, *v;
    if (hc_arity(k) || hc_need_array(k, s = hc_operand(k, 0), "the operand") ||
        hc_need_array(k, v = hc_operand(k, 1), "the padding value") ||
        hc_need_array(k, &in->shape, "the result") || hc_check_same_type(k, s) ||
        hc_check_same_type(k, v))
        return -1;
    if (v->rank != 0)
        return hc_fail(k, "the padding value must be a scalar");
    if (!in->pad_low.present || in->pad_low.n != s->rank)
        return hc_fail(k, "padding has %d dimensions, the operand %d",
                       in->pad_low.present ? in->pad_low.n : 0, s->rank);
    if (in->shape.rank != s->rank)
        return hc_fail(k, "result rank %d, operand rank %d: must be equal", in->shape.rank,
                       s->rank);
    for (int i = 0; i < s->rank; i++) {
        const int64_t d = s->dims[i], interior = in->pad_interior.v[i];
        const int64_t want = in->pad_low.v[i] + in->pad_high.v[i] + d + (d ? d - 1 : 0) * interior;
        if (want < 0)
            return hc_fail(k, "dimension %d: padding %lld_%lld_%lld leaves %lld elements", i,
                           (long long)in->pad_low.v[i], (long long)in->pad_high.v[i],
                           (long long)interior, (long long)want);
        if (in->shape.dims[i] != want)
            return hc_fail(k, "result dim %d has size %lld, padding makes it %lld", i,
                           (long long)in->shape.dims[i], (long long)want);
    }
    return 0;
}

static int check_tuple(checker *k)
{
    const hlo_shape *r = &k->in->shape;
    if (r->type != HLO_TUPLE || r->n_tuple != k->in->n_operands)
        return hc_fail(k, "result must be a tuple of %d elements", k->in->n_operands);
    for (int i = 0; i < r->n_tuple; i++)
        if (!hlo_shape_equal(hc_operand(k, i), &r->tuple[i])) {
            shape_strs t = hc_strs(hc_operand(k, i), &r->tuple[i]);
            return hc_fail(k, "operand %d has shape %s but tuple element %d is %s", i, t.a, i, t.b);
        }
    return 0;
}

static int check_gte(checker *k)
{
    if (hc_arity(k))
        return -1;
    const hlo_shape *s = hc_operand(k, 0);
    if (s->type != HLO_TUPLE)
        return hc_fail(k, "operand is not a tuple");
    if (!k->in->has_index)
        return hc_fail(k, "missing index");
    if (k->in->index >= s->n_tuple)
        return hc_fail(k, "index %lld out of range for a tuple of %d", (long long)k->in->index,
                       s->n_tuple);
    const hlo_shape *e = &s->tuple[k->in->index];
    if (!hlo_shape_equal(e, &k->in->shape)) {
        shape_strs t = hc_strs(&k->in->shape, e);
        return hc_fail(k, "result %s differs from tuple element %lld %s", t.a,
                       (long long)k->in->index, t.b);
    }
    return 0;
}

int hc_param_count(const hlo_computation *c)
{
    int n = 0;
    for (int i = 0; i < c->n_instrs; i++)
        n += c->instrs[i].opcode == HLO_OP_PARAMETER;
    return n;
}

const hlo_shape *hc_param_shape(const hlo_computation *c, int64_t number)
{
    for (int i = 0; i < c->n_instrs; i++)
        if (c->instrs[i].opcode == HLO_OP_PARAMETER && c->instrs[i].parameter_number == number)
            return &c->instrs[i].shape;
    return NULL;
}

static int check_call(checker *k)
{
    /* A fusion is a call of its fused computation (calls=); how XLA runs it (kind=, its
     * backend_config) does not change its value. */
    const bool fusion = k->in->opcode == HLO_OP_FUSION;
    int ci = k->in->to_apply >= 0 ? k->in->to_apply : k->in->calls;
    if (fusion && k->in->to_apply >= 0)
        return hc_fail(k, "to_apply on a fusion (its computation is calls=)");
    if (ci < 0)
        return hc_fail(k, fusion ? "missing calls" : "missing to_apply or calls");
    const hlo_computation *callee = &k->m->comps[ci];
    int n = hc_param_count(callee);
    if (n != k->in->n_operands)
        return hc_fail(k, "%d operands but computation '%s' has %d parameters", k->in->n_operands,
                       callee->name, n);
    for (int i = 0; i < n; i++)
        if (!hlo_shape_equal(hc_operand(k, i), hc_param_shape(callee, i))) {
            shape_strs t = hc_strs(hc_operand(k, i), hc_param_shape(callee, i));
            return hc_fail(k, "operand %d has shape %s but parameter %d of '%s' is %s", i, t.a, i,
                           callee->name, t.b);
        }
    const hlo_shape *r = &callee->instrs[callee->root].shape;
    if (!hlo_shape_equal(r, &k->in->shape)) {
        shape_strs t = hc_strs(&k->in->shape, r);
        return hc_fail(k, "result %s differs from the root of '%s' %s", t.a, callee->name, t.b);
    }
    return 0;
}

/* Any array operands; a result that is an array or a tuple of arrays; a target to call. */
static int check_custom_call(checker *k)
{
    const hlo_instr *in = k->in;
    if (!in->custom_call_target)
        return hc_fail(k, "'%s' has no custom_call_target", in->name);
    for (int i = 0; i < in->shape.n_tuple; i++)
        if (hc_need_array(k, &in->shape.tuple[i], "a result tuple element"))
            return -1;
    if (in->shape.type != HLO_TUPLE && hc_need_array(k, &in->shape, "the result"))
        return -1;
    for (int i = 0; i < in->n_operands; i++)
        if (hc_need_array(k, hc_operand(k, i), "an operand"))
            return -1;
    return 0;
}

static int check_instr(checker *k)
{
    const hlo_instr *in = k->in;
    for (int i = 0; i < in->n_operands; i++)
        if (in->operands[i].has_shape &&
            !hlo_shape_equal(&in->operands[i].shape, hc_operand(k, i))) {
            shape_strs t = hc_strs(&in->operands[i].shape, hc_operand(k, i));
            return hc_fail(k, "operand %d is written %s but '%s' is %s", i, t.a,
                           k->c->instrs[in->operands[i].index].name, t.b);
        }
    switch (in->opcode) {
    case HLO_OP_PARAMETER:
    case HLO_OP_CONSTANT:
        return 0; /* the parser checked literal sizes; numbers are checked per computation */
    case HLO_OP_BROADCAST: return check_broadcast(k);
    case HLO_OP_RESHAPE:
    case HLO_OP_BITCAST: /* the same elements, reinterpreted under the result's layout */
        return check_reshape(k);
    case HLO_OP_TRANSPOSE: return check_transpose(k);
    case HLO_OP_PAD: return check_pad(k);
    case HLO_OP_TUPLE: return check_tuple(k);
    case HLO_OP_GET_TUPLE_ELEMENT: return check_gte(k);
    case HLO_OP_CALL:
    case HLO_OP_FUSION: return check_call(k);
    case HLO_OP_CUSTOM_CALL: return check_custom_call(k);
    case HLO_OP_REDUCE:
    case HLO_OP_DOT:
    case HLO_OP_CONVOLUTION:
    case HLO_OP_REDUCE_WINDOW:
    case HLO_OP_BATCH_NORM_TRAINING:
    case HLO_OP_BATCH_NORM_INFERENCE: return hc_check_reduce_op(k);
    case HLO_OP_SLICE:
    case HLO_OP_CONCATENATE:
    case HLO_OP_REVERSE:
    case HLO_OP_DYNAMIC_SLICE:
    case HLO_OP_DYNAMIC_UPDATE_SLICE:
    case HLO_OP_GATHER:
    case HLO_OP_SCATTER:
    case HLO_OP_SELECT_AND_SCATTER:
    case HLO_OP_SORT:
    case HLO_OP_WHILE:
    case HLO_OP_CONDITIONAL:
    case HLO_OP_MAP:
    case HLO_OP_ALL_REDUCE: return hc_check_shape_op(k);
    default: return hc_check_elem(k);
    }
}

int hlo_topo_order(const hlo_computation *c, int *order, int *cycle_at)
{
    int n = c->n_instrs, n_out = 0, rc = 0;
    /* state: 0 unvisited, 1 on the DFS stack, 2 emitted; next: operand to visit next. */
    unsigned char *state = calloc((size_t)n + 1, 1);
    int *stack = malloc(((size_t)n + 1) * sizeof *stack);
    int *next = calloc((size_t)n + 1, sizeof *next);
    if (!state || !stack || !next) {
        rc = -1;
        *cycle_at = -1;
        goto out;
    }
    for (int s = 0; s < n && !rc; s++) {
        if (state[s])
            continue;
        int sp = 0;
        stack[sp++] = s;
        state[s] = 1;
        while (sp) {
            int i = stack[sp - 1];
            const hlo_instr *in = &c->instrs[i];
            if (next[i] < in->n_operands) {
                int o = in->operands[next[i]++].index;
                if (state[o] == 1) {
                    *cycle_at = o;
                    rc = -1;
                    break;
                }
                if (!state[o]) {
                    state[o] = 1;
                    stack[sp++] = o;
                }
            } else {
                state[i] = 2;
                order[n_out++] = i;
                sp--;
            }
        }
    }
out:
    free(state);
    free(stack);
    free(next);
    return rc;
}

/* Parameter numbers of c are 0..n-1, each once. */
static int check_params(checker *k)
{
    int n = hc_param_count(k->c);
    for (int i = 0; i < k->c->n_instrs; i++) {
        const hlo_instr *in = k->in = &k->c->instrs[i];
        if (in->opcode != HLO_OP_PARAMETER)
            continue;
        if (in->parameter_number >= n)
            return hc_fail(k, "number %lld but the computation has %d parameters",
                           (long long)in->parameter_number, n);
        for (int j = 0; j < i; j++)
            if (k->c->instrs[j].opcode == HLO_OP_PARAMETER &&
                k->c->instrs[j].parameter_number == in->parameter_number)
                return hc_fail(k, "number %lld already used by '%s'",
                               (long long)in->parameter_number, k->c->instrs[j].name);
    }
    return 0;
}

/* Calls form no cycle: repeatedly mark computations whose callees are all marked. */
static int check_call_graph(checker *k)
{
    const hlo_module *m = k->m;
    bool *done = calloc((size_t)m->n_comps + 1, sizeof *done);
    if (!done)
        return out_of_memory(k);
    int n_done = 0;
    for (bool progress = true; progress;) {
        progress = false;
        for (int c = 0; c < m->n_comps; c++) {
            bool ready = !done[c];
            for (int i = 0; ready && i < m->comps[c].n_instrs; i++)
                for (int j = 0, f; ready && (f = hlo_callee(&m->comps[c].instrs[i], j)) >= 0; j++)
                    ready = done[f];
            if (ready) {
                done[c] = progress = true;
                n_done++;
            }
        }
    }
    int rc = 0;
    for (int c = 0; c < m->n_comps && n_done < m->n_comps; c++) {
        if (done[c])
            continue;
        for (int i = 0; i < m->comps[c].n_instrs && !rc; i++) {
            const hlo_instr *in = &m->comps[c].instrs[i];
            for (int j = 0, f; !rc && (f = hlo_callee(in, j)) >= 0; j++)
                if (!done[f]) {
                    k->c = &m->comps[c];
                    k->in = in;
                    rc = hc_fail(k, "calls '%s', which is on or leads into a cycle of calls",
                                 m->comps[f].name);
                }
        }
        break;
    }
    free(done);
    return rc;
}

/* Marks in live[c][i] the instructions some result of the module depends on: from the ENTRY
 * root through operands, into the computations live instructions call. Returns 0, or -1 when out
 * of memory. */
static int mark_live(const hlo_module *m, bool **live)
{
    bool *comp = calloc((size_t)m->n_comps + 1, sizeof *comp);
    int *stack = NULL;
    int cap = 0;
    if (!comp)
        return -1;
    comp[m->entry] = true;
    for (bool grew = true; grew;) {
        grew = false;
        for (int c = 0; c < m->n_comps; c++) {
            const hlo_computation *k = &m->comps[c];
            if (!comp[c] || live[c][k->root])
                continue;
            if (cap < k->n_instrs) {
                int *s = realloc(stack, (size_t)k->n_instrs * sizeof *s);
                if (!s) {
                    free(stack);
                    free(comp);
                    return -1;
                }
                stack = s;
                cap = k->n_instrs;
            }
            int top = 0;
            live[c][k->root] = true;
            stack[top++] = k->root;
            while (top) {
                const hlo_instr *in = &k->instrs[stack[--top]];
                for (int o = 0; o < in->n_operands; o++)
                    if (!live[c][in->operands[o].index]) {
                        live[c][in->operands[o].index] = true;
                        stack[top++] = in->operands[o].index;
                    }
                for (int j = 0, f; (f = hlo_callee(in, j)) >= 0; j++)
                    if (!comp[f])
                        comp[f] = grew = true;
            }
        }
    }
    free(stack);
    free(comp);
    return 0;
}

int hlo_check(const hlo_module *m, const char *file, hlo_error *err)
{
    checker k = {m, file, err, NULL, NULL};
    if (check_call_graph(&k))
        return -1;
    /* All parameter lists first: call and reduce look up their callee's parameters by number. */
    for (int c = 0; c < m->n_comps; c++) {
        k.c = &m->comps[c];
        if (check_params(&k))
            return -1;
    }
    bool **live = calloc((size_t)m->n_comps + 1, sizeof *live);
    int rc = live ? 0 : out_of_memory(&k);
    for (int c = 0; c < m->n_comps && !rc; c++)
        if (!(live[c] = calloc((size_t)m->comps[c].n_instrs + 1, sizeof **live)))
            rc = out_of_memory(&k);
    for (int c = 0; c < m->n_comps && !rc; c++) {
        k.c = &m->comps[c];
        int *order = malloc(((size_t)k.c->n_instrs + 1) * sizeof *order), at = -1;
        if (!order) {
            rc = out_of_memory(&k);
        } else if (hlo_topo_order(k.c, order, &at)) {
            if (at < 0) {
                rc = out_of_memory(&k);
            } else {
                k.in = &k.c->instrs[at];
                rc = hc_fail(&k, "operands form a cycle through '%s'", k.in->name);
            }
        }
        free(order);
    }
    if (!rc && mark_live(m, live))
        rc = out_of_memory(&k);
    /* Dead code (what no result depends on, as torch_xla's max-pool indices) is parsed but not
     * checked: nothing evaluates it. */
    for (int c = 0; c < m->n_comps && !rc; c++) {
        k.c = &m->comps[c];
        for (int i = 0; i < k.c->n_instrs && !rc; i++) {
            k.in = &k.c->instrs[i];
            if (live[c][i] || k.in->opcode == HLO_OP_PARAMETER)
                rc = check_instr(&k);
        }
    }
    for (int c = 0; live && c < m->n_comps; c++)
        free(live[c]);
    free(live);
    return rc ? rc : check_aliases(m, file, err);
}

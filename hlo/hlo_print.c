/* hlo_print.c - HLO text from the AST of hlo.h, in JAX's short style (bare names, no layouts,
 * attributes spelled as XLA prints them), such that hlo_parse reads back what was printed:
 * constants exactly (f32 with 9 significant digits), custom_call_target escaped as by XLA's
 * CEscape. */
#include "hlo/hlo_eval_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- text -- */

void hlo_text_printf(hlo_text *t, const char *fmt, ...)
{
    if (t->oom)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        t->oom = true;
        return;
    }
    if (t->len + (size_t)n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + (size_t)n + 1)
            cap *= 2;
        char *s = realloc(t->s, cap);
        if (!s) {
            t->oom = true;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

void hlo_text_free(hlo_text *t)
{
    free(t->s);
    *t = (hlo_text){NULL, 0, 0, false};
}

/* ------------------------------------------------------------ shapes -- */

void hlo_print_shape(hlo_text *t, const hlo_shape *s)
{
    if (s->type == HLO_TUPLE) {
        hlo_text_printf(t, "(");
        for (int i = 0; i < s->n_tuple; i++) {
            hlo_text_printf(t, "%s", i ? ", " : "");
            hlo_print_shape(t, &s->tuple[i]);
        }
        hlo_text_printf(t, ")");
        return;
    }
    hlo_text_printf(t, "%s[", hlo_type_name(s->type));
    for (int i = 0; i < s->rank; i++)
        hlo_text_printf(t, i ? ",%lld" : "%lld", (long long)s->dims[i]);
    hlo_text_printf(t, "]");
}

/* ---------------------------------------------------------- literals -- */

/* The elements of a literal: the parser's numbers, or an evaluator array. */
typedef struct {
    const hlo_instr *in;
    const hlo_array *a;
} elements;

/* One value as XLA spells it: pred true/false, integers exactly, inf/-inf/nan, f32 through
 * float (the type the evaluator computes in) with 9 digits, other floats (the parser's double,
 * or an exact f16, bf16 or f64 element) with 17. */
static void print_value(hlo_text *t, const elements *e, int64_t i)
{
    hlo_type type = e->in ? e->in->shape.type : e->a->shape.type;
    if (type == HLO_PRED || (type >= HLO_S8 && type <= HLO_U64)) {
        /* hand-built attrs may leave literal_int NULL: their doubles are then exact */
        int64_t v = !e->in               ? he_geti(e->a, i)
                    : e->in->literal_int ? e->in->literal_int[i]
                                         : (int64_t)e->in->literal[i];
        if (type == HLO_PRED)
            hlo_text_printf(t, "%s", v ? "true" : "false");
        else if (type == HLO_U64)
            hlo_text_printf(t, "%llu", (unsigned long long)v);
        else
            hlo_text_printf(t, "%lld", (long long)v);
        return;
    }
    double v = e->in ? e->in->literal[i] : hlo_array_get(e->a, i);
    if (isnan(v))
        hlo_text_printf(t, "nan");
    else if (isinf(v))
        hlo_text_printf(t, "%sinf", v < 0 ? "-" : "");
    else if (type == HLO_F32)
        hlo_text_printf(t, "%.9g", (float)v);
    else
        hlo_text_printf(t, "%.17g", v);
}

/* Brace level `level` of an array literal from element *next on: `{1, 2}` innermost,
 * `{ {1, 2}, {3, 4} }` around inner levels, `{}` for no entries, as XLA prints. */
static void print_level(hlo_text *t, const hlo_shape *s, int level, const elements *e,
                        int64_t *next)
{
    int64_t n = s->dims[level];
    bool inner = level + 1 == s->rank;
    hlo_text_printf(t, n == 0 ? "{" : inner ? "{" : "{ ");
    for (int64_t i = 0; i < n; i++) {
        hlo_text_printf(t, "%s", i ? ", " : "");
        if (inner)
            print_value(t, e, (*next)++);
        else
            print_level(t, s, level + 1, e, next);
    }
    hlo_text_printf(t, n == 0 ? "}" : inner ? "}" : " }");
}

static void print_literal(hlo_text *t, const hlo_shape *s, const elements *e)
{
    int64_t next = 0;
    if (s->rank == 0)
        print_value(t, e, 0);
    else
        print_level(t, s, 0, e, &next);
}

/* -------------------------------------------------------- instructions -- */

static void print_head(hlo_text *t, bool root, const char *name, const hlo_shape *shape,
                       const char *opcode)
{
    hlo_text_printf(t, "  %s%s = ", root ? "ROOT " : "", name);
    hlo_print_shape(t, shape);
    hlo_text_printf(t, " %s(", opcode);
}

static void print_ints(hlo_text *t, const char *attr, const hlo_ints *l)
{
    if (!l->present)
        return;
    hlo_text_printf(t, ", %s={", attr);
    for (int i = 0; i < l->n; i++)
        hlo_text_printf(t, i ? ",%lld" : "%lld", (long long)l->v[i]);
    hlo_text_printf(t, "}");
}

/* A quoted string with CEscape's escapes: \" \\ \n \r \t by name, other control and non-ASCII
 * bytes in octal. */
static void print_string(hlo_text *t, const char *s)
{
    hlo_text_printf(t, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        const char *named = c == '"'    ? "\\\""
                            : c == '\\' ? "\\\\"
                            : c == '\n' ? "\\n"
                            : c == '\r' ? "\\r"
                            : c == '\t' ? "\\t"
                                        : NULL;
        if (named)
            hlo_text_printf(t, "%s", named);
        else if (c < 0x20 || c >= 0x7f)
            hlo_text_printf(t, "\\%03o", c);
        else
            hlo_text_printf(t, "%c", c);
    }
    hlo_text_printf(t, "\"");
}

/* window={...} as XLA prints it: size, then stride, pad, lhs_dilate and rhs_dilate each only
 * when some dim differs from the default; `window={}` for no dims. */
static void print_window(hlo_text *t, const hlo_window *w)
{
    static const char *const names[] = {"size", "stride", "pad", "lhs_dilate", "rhs_dilate"};
    bool shown[5] = {w->rank > 0, false, false, false, false};
    for (int i = 0; i < w->rank; i++) {
        const hlo_window_dim *d = &w->dims[i];
        shown[1] |= d->stride != 1;
        shown[2] |= d->pad_lo != 0 || d->pad_hi != 0;
        shown[3] |= d->lhs_dilate != 1;
        shown[4] |= d->rhs_dilate != 1;
    }
    hlo_text_printf(t, ", window={");
    for (int f = 0; f < 5; f++) {
        if (!shown[f])
            continue;
        hlo_text_printf(t, "%s%s=", f ? " " : "", names[f]);
        for (int i = 0; i < w->rank; i++) {
            const hlo_window_dim *d = &w->dims[i];
            int64_t v = f == 0   ? d->size
                        : f == 1 ? d->stride
                        : f == 2 ? d->pad_lo
                        : f == 3 ? d->lhs_dilate
                                 : d->rhs_dilate;
            hlo_text_printf(t, "%s%lld", i ? "x" : "", (long long)v);
            if (f == 2)
                hlo_text_printf(t, "_%lld", (long long)d->pad_hi);
        }
    }
    hlo_text_printf(t, "}");
}

/* One operand's labels: its two letters and the spatial dims '0' + k at their dims. */
static void print_labels(hlo_text *t, int n, char a, int adim, char b, int bdim, const int *spatial)
{
    char s[HLO_MAX_RANK + 1] = {0};
    s[adim] = a;
    s[bdim] = b;
    for (int k = 0; k < n; k++)
        s[spatial[k]] = (char)('0' + k);
    hlo_text_printf(t, "%s", s);
}

static void print_attributes(hlo_text *t, const hlo_module *m, const hlo_instr *a)
{
    static const char *const directions[] = {"", "EQ", "NE", "LT", "LE", "GT", "GE"};
    print_ints(t, "dimensions", &a->dimensions);
    if (a->slice_start.present) {
        hlo_text_printf(t, ", slice={");
        for (int i = 0; i < a->slice_start.n; i++) {
            hlo_text_printf(t, "%s[%lld:%lld", i ? ", " : "", (long long)a->slice_start.v[i],
                            (long long)a->slice_limit.v[i]);
            if (a->slice_stride.v[i] != 1)
                hlo_text_printf(t, ":%lld", (long long)a->slice_stride.v[i]);
            hlo_text_printf(t, "]");
        }
        hlo_text_printf(t, "}");
    }
    if (a->pad_low.present) {
        bool interior = false; /* XLA prints _interior for every dim when any has some */
        for (int i = 0; i < a->pad_interior.n; i++)
            interior |= a->pad_interior.v[i] != 0;
        hlo_text_printf(t, ", padding=");
        for (int i = 0; i < a->pad_low.n; i++) {
            hlo_text_printf(t, "%s%lld_%lld", i ? "x" : "", (long long)a->pad_low.v[i],
                            (long long)a->pad_high.v[i]);
            if (interior)
                hlo_text_printf(t, "_%lld", (long long)a->pad_interior.v[i]);
        }
    }
    if (a->window.present)
        print_window(t, &a->window);
    const hlo_conv_dims *d = &a->dim_labels;
    if (d->present) {
        hlo_text_printf(t, ", dim_labels=");
        print_labels(t, d->n_spatial, 'b', d->input_batch_dim, 'f', d->input_feature_dim,
                     d->input_spatial_dims);
        hlo_text_printf(t, "_");
        print_labels(t, d->n_spatial, 'i', d->kernel_input_feature_dim, 'o',
                     d->kernel_output_feature_dim, d->kernel_spatial_dims);
        hlo_text_printf(t, "->");
        print_labels(t, d->n_spatial, 'b', d->output_batch_dim, 'f', d->output_feature_dim,
                     d->output_spatial_dims);
    }
    if (a->feature_group_count > 1)
        hlo_text_printf(t, ", feature_group_count=%lld", (long long)a->feature_group_count);
    if (a->batch_group_count > 1)
        hlo_text_printf(t, ", batch_group_count=%lld", (long long)a->batch_group_count);
    print_ints(t, "lhs_batch_dims", &a->lhs_batch_dims);
    print_ints(t, "lhs_contracting_dims", &a->lhs_contracting_dims);
    print_ints(t, "rhs_batch_dims", &a->rhs_batch_dims);
    print_ints(t, "rhs_contracting_dims", &a->rhs_contracting_dims);
    if (a->has_index)
        hlo_text_printf(t, ", index=%lld", (long long)a->index);
    /* Only iota's: hand-built attrs of other ops may leave the field 0. */
    if (a->opcode == HLO_OP_IOTA && a->iota_dimension >= 0)
        hlo_text_printf(t, ", iota_dimension=%lld", (long long)a->iota_dimension);
    print_ints(t, "dynamic_slice_sizes", &a->dynamic_slice_sizes);
    /* Only gather's and scatter's: hand-built attrs of other ops may leave these fields 0. */
    const bool scatter = a->opcode == HLO_OP_SCATTER;
    for (int k = 0; k < HLO_GATHER_LISTS && (scatter || a->opcode == HLO_OP_GATHER); k++) {
        if (k == HLO_GATHER_LISTS - 1 && a->gather.index_vector_dim >= 0)
            hlo_text_printf(t, ", index_vector_dim=%lld", (long long)a->gather.index_vector_dim);
        if (hlo_gather_list_name(scatter, k))
            print_ints(t, hlo_gather_list_name(scatter, k),
                       hlo_gather_list((hlo_gather_dims *)&a->gather, k));
    }
    if (a->is_stable)
        hlo_text_printf(t, ", is_stable=true");
    if ((a->opcode == HLO_OP_BATCH_NORM_TRAINING || a->opcode == HLO_OP_BATCH_NORM_INFERENCE) &&
        a->feature_index >= 0)
        hlo_text_printf(t, ", epsilon=%.17g, feature_index=%lld", a->epsilon,
                        (long long)a->feature_index);
    /* Only select-and-scatter's: hand-built attrs of other ops may leave select 0. */
    if (a->opcode == HLO_OP_SELECT_AND_SCATTER && a->select >= 0)
        hlo_text_printf(t, ", select=%s", m->comps[a->select].name);
    if (a->to_apply >= 0)
        hlo_text_printf(t, ", %s=%s",
                        a->opcode == HLO_OP_SELECT_AND_SCATTER ? "scatter" : "to_apply",
                        m->comps[a->to_apply].name);
    if (a->calls >= 0)
        hlo_text_printf(t, ", calls=%s", m->comps[a->calls].name);
    /* Only while's and gather's: hand-built attrs of other ops may leave these fields 0. */
    if (a->opcode == HLO_OP_WHILE && a->condition >= 0)
        hlo_text_printf(t, ", condition=%s", m->comps[a->condition].name);
    if (a->opcode == HLO_OP_WHILE && a->body >= 0)
        hlo_text_printf(t, ", body=%s", m->comps[a->body].name);
    for (int i = 0; a->branch_pred && i < 2; i++)
        if (a->branches[i] >= 0)
            hlo_text_printf(t, ", %s=%s", i ? "false_computation" : "true_computation",
                            m->comps[a->branches[i]].name);
    for (int i = 0; !a->branch_pred && i < a->n_branches; i++)
        hlo_text_printf(t, "%s%s", i ? ", " : ", branch_computations={",
                        m->comps[a->branches[i]].name);
    if (!a->branch_pred && a->n_branches)
        hlo_text_printf(t, "}");
    if (a->comparison_direction != HLO_CMP_NONE)
        hlo_text_printf(t, ", direction=%s", directions[a->comparison_direction]);
    if (a->total_order)
        hlo_text_printf(t, ", type=TOTALORDER");
    if (a->channel_id)
        hlo_text_printf(t, ", channel_id=%lld", (long long)a->channel_id);
    for (int g = 0; g < a->n_replica_groups; g++)
        for (int i = 0; i < a->replica_groups[g].n; i++)
            hlo_text_printf(t, "%s%lld%s",
                            i   ? ","
                            : g ? ",{"
                                : ", replica_groups={{",
                            (long long)a->replica_groups[g].v[i],
                            i + 1 < a->replica_groups[g].n ? ""
                            : g + 1 < a->n_replica_groups  ? "}"
                                                           : "}}");
    if (a->use_global_device_ids)
        hlo_text_printf(t, ", use_global_device_ids=true");
    if (a->custom_call_target) {
        hlo_text_printf(t, ", custom_call_target=");
        print_string(t, a->custom_call_target);
    }
}

void hlo_print_instr(hlo_text *t, const hlo_module *m, const hlo_instr *attrs, bool root,
                     const char *name, const hlo_shape *shape, const char *const *operands,
                     int n_operands)
{
    print_head(t, root, name, shape,
               attrs->opcode_name ? attrs->opcode_name : hlo_opcode_name(attrs->opcode));
    if (attrs->opcode == HLO_OP_PARAMETER) {
        hlo_text_printf(t, "%lld", (long long)attrs->parameter_number);
    } else if (attrs->opcode == HLO_OP_CONSTANT) {
        elements e = {attrs, NULL};
        if (attrs->literal_elided)
            hlo_text_printf(t, "{...}");
        else
            print_literal(t, &attrs->shape, &e);
    } else {
        for (int i = 0; i < n_operands; i++)
            hlo_text_printf(t, "%s%s", i ? ", " : "", operands[i]);
    }
    hlo_text_printf(t, ")");
    print_attributes(t, m, attrs);
    hlo_text_printf(t, "\n");
}

void hlo_print_constant(hlo_text *t, bool root, const char *name, const hlo_array *value)
{
    elements e = {NULL, value};
    print_head(t, root, name, &value->shape, "constant");
    print_literal(t, &value->shape, &e);
    hlo_text_printf(t, ")\n");
}

void hlo_print_computation(hlo_text *t, const hlo_module *m, int comp, const char *as_name)
{
    const hlo_computation *c = &m->comps[comp];
    int max_ops = 0;
    for (int i = 0; i < c->n_instrs; i++)
        max_ops = c->instrs[i].n_operands > max_ops ? c->instrs[i].n_operands : max_ops;
    const char **names = malloc(((size_t)max_ops + 1) * sizeof *names);
    if (!names) {
        t->oom = true;
        return;
    }
    hlo_text_printf(t, "%s%s {\n", c->is_entry ? "ENTRY " : "", as_name ? as_name : c->name);
    for (int i = 0; i < c->n_instrs; i++) {
        const hlo_instr *in = &c->instrs[i];
        for (int j = 0; j < in->n_operands; j++)
            names[j] = c->instrs[in->operands[j].index].name;
        hlo_print_instr(t, m, in, i == c->root, in->name, &in->shape, names, in->n_operands);
    }
    hlo_text_printf(t, "}\n");
    free(names);
}

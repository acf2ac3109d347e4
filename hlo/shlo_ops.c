/* shlo_ops.c - StableHLO ops onto hlo_instr: XLA's opcode names and the attributes hlo_instr
 * keeps, read from either syntax (the pretty `dims = [1]` or the generic
 * `broadcast_dimensions = array<i64: 1>`). */
#include "hlo/shlo.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* StableHLO names that XLA spells differently: the op list's (HLO_OPS, hlo.h), an if (also a
 * conditional) and ops without an enum value; any other loses its dialect prefix and has '_'
 * replaced by '-' (exponential_minus_one -> exponential-minus-one). arith's prefix goes too:
 * torch-mlir writes batch norm's epsilon as an arith.constant, spelled as stablehlo.constant. */
#define RENAME(name, hlo, stablehlo, operands, rule) {stablehlo, hlo},
static const char *const renames[][2] = {
    HLO_OPS(RENAME) /* NULL for the ops spelled alike */
    {"if", "conditional"},
    {"optimization_barrier", "opt-barrier"},
};
#undef RENAME

const char *shlo_opcode(parser *p, const char *name)
{
    static const char *const prefixes[] = {"stablehlo.", "chlo.", "mhlo.", "arith."};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
            name += strlen(prefixes[i]);
    for (size_t i = 0; i < sizeof renames / sizeof *renames; i++)
        if (renames[i][0] && !strcmp(name, renames[i][0]))
            return renames[i][1];
    size_t n = strlen(name);
    if (n > HLO_MAX_NAME - 16) /* the instruction's name adds ".<index>" */
        lx_fail_at(p, p->pos, "op name longer than %d bytes", HLO_MAX_NAME - 16);
    char *r = lx_alloc(p, n + 1);
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            lx_fail_at(p, p->pos, "bad character in op name '%s'", name);
        r[i] = c == '_' ? '-' : c;
    }
    if (!n)
        lx_fail_at(p, p->pos, "empty op name");
    return r;
}

/* ------------------------------------------------------- attribute values -- */

size_t shlo_find_attr(const parser *p, const sop *op, const char *a, const char *b)
{
    for (int i = 0; i < op->n_attrs; i++) {
        const sattr *at = &op->attrs[i];
        const char *name = p->s + at->name_pos;
        size_t n = at->name_len;
        if ((strlen(a) == n && !memcmp(name, a, n)) || (b && strlen(b) == n && !memcmp(name, b, n)))
            return at->value_pos;
    }
    return 0;
}

typedef struct {
    int64_t *v;
    int n, cap;
} ivals;

static void ipush(parser *p, ivals *l, int64_t v)
{
    l->v = lx_grow(p, l->v, l->n, &l->cap, sizeof *l->v);
    l->v[l->n++] = v;
}

static int64_t one_int(parser *p, const char *what)
{
    stok t = sx_peek(p);
    if (sx_is(p, t, "true") || sx_is(p, t, "false")) {
        sx_next(p);
        return t.len == 4;
    }
    return sx_int(p, what, -HLO_MAX_ELEMENTS, HLO_MAX_ELEMENTS);
}

static void int_list(parser *p, ivals *l, int depth, const char *what)
{
    stok open = sx_expect_punct(p, '[', what);
    if (depth >= HLO_MAX_DEPTH)
        lx_fail_at(p, open.at, "%s nested deeper than %d", what, HLO_MAX_DEPTH);
    if (sx_eat_punct(p, ']'))
        return;
    do {
        if (sx_punct(sx_peek(p), '['))
            int_list(p, l, depth + 1, what);
        else
            ipush(p, l, one_int(p, what));
    } while (sx_eat_punct(p, ','));
    sx_expect_punct(p, ']', what);
}

/* The integers of the value at p->pos: [1, 2], [[1, 1], [0, 0]] (flattened), array<i64: 1, 2>,
 * dense<...> : tensor<...>, or one integer; true and false count as 1 and 0. */
static ivals read_ints(parser *p, const char *what)
{
    ivals l = {NULL, 0, 0};
    stok t = sx_peek(p);
    if (sx_punct(t, '[')) {
        int_list(p, &l, 0, what);
    } else if (sx_is(p, t, "array")) {
        sx_next(p);
        sx_expect_punct(p, '<', "after 'array'");
        sx_expect(p, S_WORD, "the array's element type");
        if (sx_eat_punct(p, ':'))
            do
                ipush(p, &l, one_int(p, what));
            while (sx_eat_punct(p, ','));
        sx_expect_punct(p, '>', "to close the array");
    } else if (sx_is(p, t, "dense")) {
        size_t at = p->pos;
        sx_next(p);
        sx_expect_punct(p, '<', "after 'dense'");
        p->pos = at;
        sx_next(p);
        sx_skip_value(p, true, what); /* dense<...>: the type after it says how to read it */
        sx_expect_punct(p, ':', "and the dense literal's type");
        hlo_shape sh;
        sx_type(p, &sh, 0);
        size_t end = p->pos;
        if (sh.elements > SHLO_MAX_OPERANDS)
            lx_fail_at(p, t.at, "%s has more than %d elements", what, SHLO_MAX_OPERANDS);
        p->pos = at;
        double *v;
        bool splat;
        size_t n = sx_dense(p, &sh, &v, &splat);
        for (int64_t i = 0; i < (splat ? sh.elements : (int64_t)n); i++) {
            double x = v[splat ? 0 : i];
            if (!(fabs(x) <= (double)HLO_MAX_ELEMENTS) || x != floor(x))
                lx_fail_at(p, t.at, "%s: value out of range", what);
            ipush(p, &l, (int64_t)x);
        }
        p->pos = end;
    } else {
        ipush(p, &l, one_int(p, what));
    }
    return l;
}

bool shlo_get_ints(parser *p, const sop *op, const char *a, const char *b, hlo_ints *list,
                   int64_t lo)
{
    size_t pos = shlo_find_attr(p, op, a, b);
    if (!pos)
        return false;
    p->pos = pos;
    ivals l = read_ints(p, a);
    for (int i = 0; i < l.n; i++)
        if (l.v[i] < lo)
            lx_fail_at(p, pos, "%s: %lld out of range", a, (long long)l.v[i]);
    *list = (hlo_ints){true, l.n, l.v};
    return true;
}

bool shlo_get_int(parser *p, const sop *op, const char *a, const char *b, int64_t *v)
{
    hlo_ints l;
    if (!shlo_get_ints(p, op, a, b, &l, 0))
        return false;
    if (l.n != 1)
        lx_fail_at(p, shlo_find_attr(p, op, a, b), "%s: expected one integer", a);
    *v = l.v[0];
    return true;
}

/* ------------------------------------------------------------ the ops -- */

static void map_compare(parser *p, const sop *op, hlo_instr *in)
{
    static const char *const names[] = {"", "EQ", "NE", "LT", "LE", "GT", "GE"};
    stok dir = {S_EOF, 0, 0, 0, 0};
    size_t pos = shlo_find_attr(p, op, "comparison_direction", NULL);
    if (pos) { /* #stablehlo<comparison_direction GT> */
        p->pos = pos;
        sx_expect(p, S_HASH, "#stablehlo<comparison_direction ...>");
        sx_expect_punct(p, '<', "in the comparison direction");
        sx_expect(p, S_WORD, "comparison_direction");
        dir = sx_expect(p, S_WORD, "a comparison direction");
    } else if (op->n_words) {
        dir = op->words[0];
    } else {
        return; /* hlo_check reports the missing direction */
    }
    for (int i = 1; i < 7 && !in->comparison_direction; i++)
        if (sx_is(p, dir, names[i]))
            in->comparison_direction = (hlo_cmp)i;
    if (!in->comparison_direction)
        lx_fail_at(p, dir.at, "unknown comparison direction '%.*s' (expected EQ NE LT LE GT GE)",
                   (int)dir.len, p->s + dir.pos);
    stok type = {S_EOF, 0, 0, 0, 0};
    if ((pos = shlo_find_attr(p, op, "compare_type", NULL))) { /* #stablehlo<comparison_type X> */
        p->pos = pos;
        sx_expect(p, S_HASH, "#stablehlo<comparison_type ...>");
        sx_expect_punct(p, '<', "in the comparison type");
        sx_expect(p, S_WORD, "comparison_type");
        type = sx_expect(p, S_WORD, "a comparison type");
    } else if (op->n_words > 1) {
        type = op->words[1];
    } else {
        return;
    }
    in->total_order = sx_is(p, type, "TOTALORDER");
    if (!in->total_order && !sx_is(p, type, "FLOAT") && !sx_is(p, type, "SIGNED") &&
        !sx_is(p, type, "UNSIGNED"))
        lx_fail_at(p, type.at,
                   "unknown comparison type '%.*s' (expected FLOAT TOTALORDER SIGNED UNSIGNED)",
                   (int)type.len, p->s + type.pos);
}

void shlo_dim_list(parser *p, hlo_ints *l)
{
    ivals v = read_ints(p, "dimension list");
    for (int i = 0; i < v.n; i++)
        if (v.v[i] < 0)
            lx_fail_at(p, p->pos, "negative dimension in dimension list");
    *l = (hlo_ints){true, v.n, v.v};
}

/* Pretty `contracting_dims = [1] x [0]`, generic
 * `dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], ...>`; plain
 * stablehlo.dot contracts the lhs's last dimension with the rhs's first. */
static void map_dot(shlo *s, const sop *op, hlo_instr *in)
{
    parser *p = s->p;
    size_t pos;
    const char *pairs[2] = {"batching_dims", "contracting_dims"};
    hlo_ints *lists[2][2] = {{&in->lhs_batch_dims, &in->rhs_batch_dims},
                             {&in->lhs_contracting_dims, &in->rhs_contracting_dims}};
    for (int k = 0; k < 2; k++)
        if ((pos = shlo_find_attr(p, op, pairs[k], NULL))) {
            p->pos = pos;
            shlo_dim_list(p, lists[k][0]);
            stok x = sx_next(p);
            if (!sx_is(p, x, "x"))
                sx_expected(p, x, "'x' between the lhs and rhs dimensions");
            shlo_dim_list(p, lists[k][1]);
        }
    if ((pos = shlo_find_attr(p, op, "dot_dimension_numbers", NULL))) {
        static const char *const keys[4] = {"lhs_batching_dimensions", "rhs_batching_dimensions",
                                            "lhs_contracting_dimensions",
                                            "rhs_contracting_dimensions"};
        p->pos = pos;
        sx_expect(p, S_HASH, "#stablehlo.dot<...>");
        sx_expect_punct(p, '<', "in dot dimension numbers");
        for (int n = 0; !sx_eat_punct(p, '>'); n++) {
            if (n)
                sx_expect_punct(p, ',', "or '>' in dot dimension numbers");
            stok key = sx_expect(p, S_WORD, "a dot dimension field");
            sx_expect_punct(p, '=', "after the field name");
            int k = 0;
            while (k < 4 && !sx_is(p, key, keys[k]))
                k++;
            if (k == 4)
                lx_fail_at(p, key.at, "unknown dot dimension field '%.*s'", (int)key.len,
                           p->s + key.pos);
            shlo_dim_list(p, lists[k / 2][k % 2]);
        }
    }
    if (!strcmp(op->name, "stablehlo.dot") && in->n_operands == 2) {
        int lr = shlo_instr(s, in->operands[0].index)->shape.rank;
        int64_t *v = lx_alloc(p, 2 * sizeof *v);
        v[0] = lr > 0 ? lr - 1 : 0;
        in->lhs_contracting_dims = (hlo_ints){true, 1, v};
        in->rhs_contracting_dims = (hlo_ints){true, 1, v + 1};
    }
}

/* Pretty `[1:3, 0:6:2]`, generic start_indices / limit_indices / strides. */
static void map_slice(parser *p, const sop *op, hlo_instr *in)
{
    if (!op->bracket_pos) {
        if (!shlo_get_ints(p, op, "start_indices", NULL, &in->slice_start, 0) ||
            !shlo_get_ints(p, op, "limit_indices", NULL, &in->slice_limit, 0))
            lx_fail_at(p, op->at, "slice without start_indices and limit_indices");
        if (!shlo_get_ints(p, op, "strides", NULL, &in->slice_stride, 1)) {
            in->slice_stride = (hlo_ints){true, in->slice_start.n, NULL};
            in->slice_stride.v = lx_alloc(p, (size_t)in->slice_start.n * sizeof(int64_t));
            for (int i = 0; i < in->slice_start.n; i++)
                in->slice_stride.v[i] = 1;
        }
        if (in->slice_limit.n != in->slice_start.n || in->slice_stride.n != in->slice_start.n)
            lx_fail_at(p, op->at,
                       "slice start_indices, limit_indices and strides differ in length");
        return;
    }
    ivals st = {NULL, 0, 0}, li = {NULL, 0, 0}, sd = {NULL, 0, 0};
    p->pos = op->bracket_pos;
    sx_expect_punct(p, '[', "to open the slice");
    if (!sx_eat_punct(p, ']')) {
        do {
            ipush(p, &st, sx_int(p, "slice start", 0, HLO_MAX_ELEMENTS));
            sx_expect_punct(p, ':', "in slice");
            ipush(p, &li, sx_int(p, "slice limit", 0, HLO_MAX_ELEMENTS));
            ipush(p, &sd,
                  sx_eat_punct(p, ':') ? sx_int(p, "slice stride", 1, HLO_MAX_ELEMENTS) : 1);
        } while (sx_eat_punct(p, ','));
        sx_expect_punct(p, ']', "to close the slice");
    }
    in->slice_start = (hlo_ints){true, st.n, st.v};
    in->slice_limit = (hlo_ints){true, li.n, li.v};
    in->slice_stride = (hlo_ints){true, sd.n, sd.v};
}

/* Fills window w of rank n: sizes given, the rest from the attributes named in keys (strides,
 * padding pairs, lhs dilations, rhs dilations, reversal). */
static void window_from(parser *p, const sop *op, hlo_window *w, int n, const int64_t *sizes,
                        const char *const keys[5])
{
    w->present = true;
    w->rank = n;
    w->dims = lx_alloc(p, (size_t)n * sizeof *w->dims);
    for (int k = 0; k < n; k++)
        w->dims[k] = (hlo_window_dim){sizes[k], 1, 0, 0, 1, 1};
    for (int f = 0; f < 5; f++) {
        size_t pos = shlo_find_attr(p, op, keys[f], NULL);
        if (!pos)
            continue;
        p->pos = pos;
        ivals v = read_ints(p, keys[f]);
        if (v.n != (f == 1 ? 2 * n : n))
            lx_fail_at(p, pos, "%s has %d values for %d window dims", keys[f], v.n, n);
        for (int k = 0; k < n; k++) {
            hlo_window_dim *d = &w->dims[k];
            if (f == 1) {
                d->pad_lo = v.v[2 * k];
                d->pad_hi = v.v[2 * k + 1];
                continue;
            }
            if (f == 4) {
                if (v.v[k])
                    lx_fail_at(p, pos, "window reversal is not supported");
                continue;
            }
            if (v.v[k] < 0)
                lx_fail_at(p, pos, "%s: negative value", keys[f]);
            *(f == 0 ? &d->stride : f == 2 ? &d->lhs_dilate : &d->rhs_dilate) = v.v[k];
        }
    }
}

/* reduce_window's and select_and_scatter's window (the latter has no dilations). */
static void map_reduce_window(parser *p, const sop *op, hlo_instr *in)
{
    static const char *const keys[5] = {"window_strides", "padding", "base_dilations",
                                        "window_dilations", ""};
    hlo_ints sizes;
    if (!shlo_get_ints(p, op, "window_dimensions", NULL, &sizes, 0))
        lx_fail_at(p, op->at, "%s without window_dimensions",
                   in->opcode == HLO_OP_REDUCE_WINDOW ? "reduce_window" : "select_and_scatter");
    if (sizes.n > HLO_MAX_RANK)
        lx_fail_at(p, op->at, "window has more than %d dims", HLO_MAX_RANK);
    window_from(p, op, &in->window, sizes.n, sizes.v, keys);
}

/* One operand's labels of [b, 0, 1, f]: letters[0] and letters[1]'s dims into dims[0] and
 * dims[1], spatial dim k's into dims[2 + k]. Returns the number of labels. */
static int conv_labels(parser *p, const char *letters, int *dims)
{
    bool seen[HLO_MAX_RANK] = {false};
    int n = 0;
    size_t open = lx_skip_space(p, p->pos);
    sx_expect_punct(p, '[', "in convolution dimension numbers");
    do {
        stok t = sx_next(p);
        int sym = -1;
        if (t.kind == S_WORD && t.len == 1 &&
            (p->s[t.pos] == letters[0] || p->s[t.pos] == letters[1]))
            sym = p->s[t.pos] == letters[1];
        else if (t.kind == S_NUM && t.len <= 2 && p->s[t.pos] != '-') {
            sym = 2 + (p->s[t.pos] - '0');
            if (t.len == 2)
                sym = 2 + (p->s[t.pos] - '0') * 10 + (p->s[t.pos + 1] - '0');
        }
        if (sym < 0 || sym >= HLO_MAX_RANK || n >= HLO_MAX_RANK)
            sx_expected(p, t,
                        letters[0] == 'b' ? "b, f or a spatial dim" : "i, o or a spatial dim");
        if (seen[sym])
            lx_fail_at(p, t.at, "dimension label repeated");
        seen[sym] = true;
        dims[sym] = n++;
    } while (sx_eat_punct(p, ','));
    sx_expect_punct(p, ']', "in convolution dimension numbers");
    for (int k = 0; k < n; k++)
        if (!seen[k])
            lx_fail_at(p, open,
                       "convolution dimension labels are not 2 letters and spatial 0 to %d", n - 3);
    return n;
}

/* dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f] (generic: #stablehlo.conv<...>), the
 * window from the kernel's spatial sizes and the stride / pad / dilation attributes. */
static void map_convolution(shlo *s, const sop *op, hlo_instr *in)
{
    parser *p = s->p;
    size_t pos = shlo_find_attr(p, op, "dim_numbers", NULL);
    bool generic = !pos;
    if (generic && !(pos = shlo_find_attr(p, op, "dimension_numbers", NULL)))
        lx_fail_at(p, op->at, "convolution without dimension numbers");
    p->pos = pos;
    if (generic) {
        sx_expect(p, S_HASH, "#stablehlo.conv<...>");
        sx_expect_punct(p, '<', "in convolution dimension numbers");
    }
    hlo_conv_dims *c = &in->dim_labels;
    int d[3][HLO_MAX_RANK], n[3];
    n[0] = conv_labels(p, "bf", d[0]);
    stok x = sx_next(p);
    if (!sx_is(p, x, "x"))
        sx_expected(p, x, "'x' after the input's dimension labels");
    n[1] = conv_labels(p, "io", d[1]);
    sx_expect(p, S_ARROW, "'->' before the output's dimension labels");
    n[2] = conv_labels(p, "bf", d[2]);
    if (generic)
        sx_expect_punct(p, '>', "to close the dimension numbers");
    if (n[0] != n[1] || n[0] != n[2] || n[0] < 2)
        lx_fail_at(p, pos, "convolution dimension labels of different ranks");
    c->present = true;
    c->n_spatial = n[0] - 2;
    c->input_batch_dim = d[0][0], c->input_feature_dim = d[0][1];
    c->kernel_input_feature_dim = d[1][0], c->kernel_output_feature_dim = d[1][1];
    c->output_batch_dim = d[2][0], c->output_feature_dim = d[2][1];
    memcpy(c->input_spatial_dims, d[0] + 2, (size_t)c->n_spatial * sizeof(int));
    memcpy(c->kernel_spatial_dims, d[1] + 2, (size_t)c->n_spatial * sizeof(int));
    memcpy(c->output_spatial_dims, d[2] + 2, (size_t)c->n_spatial * sizeof(int));
    const hlo_shape *k = in->n_operands == 2 ? &shlo_instr(s, in->operands[1].index)->shape : NULL;
    if (!k || k->type == HLO_TUPLE || k->rank != n[0])
        lx_fail_at(p, op->at, "convolution needs an input and a kernel of rank %d", n[0]);
    int64_t sizes[HLO_MAX_RANK];
    for (int i = 0; i < c->n_spatial; i++)
        sizes[i] = k->dims[c->kernel_spatial_dims[i]];
    static const char *const generic_keys[5] = {"window_strides", "padding", "lhs_dilation",
                                                "rhs_dilation", "window_reversal"};
    static const char *const pretty_keys[5] = {"stride", "pad", "lhs_dilate", "rhs_dilate",
                                               "reverse"};
    size_t wpos = shlo_find_attr(p, op, "window", NULL);
    if (!wpos) {
        window_from(p, op, &in->window, c->n_spatial, sizes, generic_keys);
    } else { /* window = {stride = [1, 1], pad = [[1, 1], [1, 1]], ...}: its own dictionary */
        sop w;
        int cap = 0;
        memset(&w, 0, sizeof w);
        p->pos = wpos;
        sx_expect_punct(p, '{', "to open the window");
        while (!sx_eat_punct(p, '}')) {
            if (w.n_attrs)
                sx_expect_punct(p, ',', "or '}' in the window");
            stok key = sx_expect(p, S_WORD, "a window field");
            sx_expect_punct(p, '=', "after the window field");
            w.attrs = lx_grow(p, w.attrs, w.n_attrs, &cap, sizeof *w.attrs);
            w.attrs[w.n_attrs++] = (sattr){key.pos, key.len, lx_skip_space(p, p->pos)};
            sx_skip_value(p, false, "window field");
        }
        window_from(p, &w, &in->window, c->n_spatial, sizes, pretty_keys);
    }
    if (shlo_get_int(p, op, "feature_group_count", NULL, &in->feature_group_count) &&
        in->feature_group_count < 1)
        lx_fail_at(p, shlo_find_attr(p, op, "feature_group_count", NULL),
                   "feature_group_count < 1");
    if (shlo_get_int(p, op, "batch_group_count", NULL, &in->batch_group_count) &&
        in->batch_group_count < 1)
        lx_fail_at(p, shlo_find_attr(p, op, "batch_group_count", NULL), "batch_group_count < 1");
}

/* dense<...>: the literal; a splat of several elements becomes a scalar constant broadcast to
 * the shape, so that no more values are stored than the text holds. */
static int map_constant(shlo *s, const sop *op, int idx)
{
    parser *p = s->p;
    size_t pos = op->dense_pos ? op->dense_pos : shlo_find_attr(p, op, "value", NULL);
    hlo_instr *in = shlo_instr(s, idx);
    if (!pos)
        lx_fail_at(p, op->at, "constant without a dense<...> value");
    p->pos = pos;
    bool splat;
    in->n_literal = sx_dense(p, &in->shape, &in->literal, &splat);
    if (!splat)
        return idx;
    hlo_shape full = in->shape;
    in->shape.rank = 0;
    in->shape.elements = 1;
    int b = shlo_add_instr(s, "broadcast", &full, &idx, 1);
    shlo_instr(s, b)->dimensions.present = true;
    return b;
}

/* broadcast_in_dim may stretch an operand dim of size 1 to any size, XLA's broadcast may not:
 * such dims are reshaped away first (as XLA's own conversion does). */
static int map_broadcast(shlo *s, int idx)
{
    hlo_instr *in = shlo_instr(s, idx);
    if (in->n_operands != 1)
        return idx; /* hlo_check reports it */
    const hlo_shape *from = &shlo_instr(s, in->operands[0].index)->shape;
    hlo_shape mid = *from;
    int64_t *dims = lx_alloc(s->p, (size_t)in->dimensions.n * sizeof *dims);
    int n = 0;
    if (from->type == HLO_TUPLE || in->shape.type == HLO_TUPLE || from->rank != in->dimensions.n)
        return idx;
    mid.rank = 0;
    for (int k = 0; k < from->rank; k++) {
        int64_t d = in->dimensions.v[k];
        if (d >= in->shape.rank)
            return idx;
        if (from->dims[k] == 1 && in->shape.dims[d] != 1)
            continue;
        mid.dims[mid.rank++] = from->dims[k];
        dims[n++] = d;
    }
    if (mid.rank == from->rank)
        return idx;
    hlo_shape full = in->shape;
    in->opcode = HLO_OP_RESHAPE;
    in->opcode_name = lx_alloc(s->p, sizeof "reshape");
    memcpy(in->opcode_name, "reshape", sizeof "reshape");
    in->name = lx_alloc(s->p, 24);
    snprintf(in->name, 24, "reshape.%d", idx);
    in->shape = mid;
    in->dimensions = (hlo_ints){false, 0, NULL};
    int b = shlo_add_instr(s, "broadcast", &full, &idx, 1);
    shlo_instr(s, b)->dimensions = (hlo_ints){true, n, dims};
    return b;
}

/* chlo.erfc, which HLO has no op for (XLA expands it), as 1 - erf(x): within an f32 ulp of 1
 * to 2 (1.2e-7) absolute, all a GELU asks of it, though in the far positive tail, where erfc(x)
 * falls below that, its relative error grows. */
static int map_erfc(shlo *s, int idx)
{
    hlo_instr *in = shlo_instr(s, idx);
    if (in->n_operands != 1 || !hlo_is_float(in->shape.type))
        return idx; /* hlo_check reports erfc by name */
    in->opcode = HLO_OP_ERF;
    in->opcode_name = lx_alloc(s->p, sizeof "erf");
    memcpy(in->opcode_name, "erf", sizeof "erf");
    const hlo_shape shape = in->shape;
    hlo_shape scalar = shape;
    scalar.rank = 0;
    scalar.elements = 1;
    const int one = shlo_add_instr(s, "constant", &scalar, NULL, 0);
    hlo_instr *c = shlo_instr(s, one);
    c->n_literal = 1;
    c->literal = lx_alloc(s->p, sizeof *c->literal);
    c->literal[0] = 1;
    const int ones = shlo_add_instr(s, "broadcast", &shape, &one, 1);
    shlo_instr(s, ones)->dimensions.present = true;
    const int ops[2] = {ones, idx};
    return shlo_add_instr(s, "subtract", &shape, ops, 2);
}

int shlo_map(shlo *s, const sop *op, int idx)
{
    parser *p = s->p;
    hlo_instr *in = shlo_instr(s, idx);
    int64_t v;
    if (op->n_regions)
        in->to_apply = op->regions[0];
    switch (in->opcode) {
    case HLO_OP_CONSTANT: return map_constant(s, op, idx);
    case HLO_OP_BROADCAST:
        if (shlo_get_ints(p, op, "dims", "broadcast_dimensions", &in->dimensions, 0))
            return map_broadcast(s, idx);
        break;
    case HLO_OP_TRANSPOSE: shlo_get_ints(p, op, "dims", "permutation", &in->dimensions, 0); break;
    case HLO_OP_CONCATENATE: shlo_get_ints(p, op, "dim", "dimension", &in->dimensions, 0); break;
    case HLO_OP_IOTA:
        if (shlo_get_int(p, op, "dim", "iota_dimension", &v))
            in->iota_dimension = v;
        break;
    case HLO_OP_REDUCE:
        shlo_get_ints(p, op, "dimensions", NULL, &in->dimensions, 0);
        if (op->apply_pos && in->n_operands == 2) {
            size_t end;
            stok t = sx_lex_at(p, op->apply_pos, &end);
            char *name = lx_dup_str(p, t.pos, t.len);
            hlo_shape scalar = shlo_instr(s, in->operands[1].index)->shape;
            p->pos = op->apply_pos;
            int comp = shlo_binary_comp(s, shlo_opcode(p, name), &scalar, op->apply_pos);
            shlo_instr(s, idx)->to_apply = comp;
        }
        break;
    case HLO_OP_REDUCE_WINDOW: map_reduce_window(p, op, in); break;
    case HLO_OP_SELECT_AND_SCATTER: /* its regions: select, then scatter (the to_apply) */
        map_reduce_window(p, op, in);
        if (op->n_regions != 2)
            lx_fail_at(p, op->at, "select_and_scatter needs a select and a scatter region");
        in->select = op->regions[0];
        in->to_apply = op->regions[1];
        break;
    case HLO_OP_DOT: map_dot(s, op, in); break;
    case HLO_OP_COMPARE: map_compare(p, op, in); break;
    case HLO_OP_SLICE: map_slice(p, op, in); break;
    case HLO_OP_PAD:
        if (!shlo_get_ints(p, op, "low", "edge_padding_low", &in->pad_low, -HLO_MAX_ELEMENTS) ||
            !shlo_get_ints(p, op, "high", "edge_padding_high", &in->pad_high, -HLO_MAX_ELEMENTS) ||
            !shlo_get_ints(p, op, "interior", "interior_padding", &in->pad_interior, 0))
            lx_fail_at(p, op->at, "pad without low, high and interior padding");
        if (in->pad_high.n != in->pad_low.n || in->pad_interior.n != in->pad_low.n)
            lx_fail_at(p, op->at, "pad's low, high and interior padding differ in length");
        break;
    case HLO_OP_GET_TUPLE_ELEMENT:
        if (op->bracket_pos) {
            p->pos = op->bracket_pos;
            sx_expect_punct(p, '[', "before the tuple index");
            v = sx_int(p, "tuple index", 0, INT32_MAX);
            sx_expect_punct(p, ']', "after the tuple index");
        } else if (!shlo_get_int(p, op, "index", NULL, &v)) {
            break;
        }
        in->has_index = true;
        in->index = v;
        break;
    case HLO_OP_CUSTOM_CALL: {
        size_t pos = shlo_find_attr(p, op, "call_target_name", NULL);
        if (op->has_sym) {
            in->custom_call_target = lx_dup_str(p, op->sym.pos, op->sym.len);
        } else if (pos) {
            p->pos = pos;
            in->custom_call_target = sx_string(p, sx_expect(p, S_STRING, "a target name"));
        }
        break;
    }
    case HLO_OP_CALL: {
        stok sym = op->sym;
        size_t pos = shlo_find_attr(p, op, "callee", NULL);
        if (!op->has_sym && pos) {
            p->pos = pos;
            sym = sx_expect(p, S_SYM, "a function such as @f");
        } else if (!op->has_sym) {
            lx_fail_at(p, op->at, "call without a function");
        }
        shlo_add_call(s, idx, sym);
        break;
    }
    case HLO_OP_CONVOLUTION: map_convolution(s, op, in); break;
    case HLO_OP_OTHER:
        if (!strcmp(in->opcode_name, "erfc"))
            return map_erfc(s, idx);
        break;
    default: shlo_map_shape_op(s, op, in); break;
    }
    return idx;
}

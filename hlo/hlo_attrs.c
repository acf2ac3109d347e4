/* hlo_attrs.c - the HLO parser's attribute values (hlo_lex.h): slice={[s:l:st], ...},
 * padding=lo_hi_in x ..., window={...}, dim_labels=..., a gather's dimension lists, a
 * conditional's branch computations and an all-reduce's replica groups, plus the references to
 * resolve once a scope is complete. */
#include "hlo/hlo_lex.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

void lx_add_ref(parser *p, int comp, int instr, int slot, tok name)
{
    p->refs = lx_grow(p, p->refs, p->n_refs, &p->cap_refs, sizeof *p->refs);
    p->refs[p->n_refs++] = (ref){comp, instr, slot, name.at, name.pos, name.len};
}

void lx_ints_push(parser *p, hlo_ints *l, int *cap, int64_t v)
{
    l->v = lx_grow(p, l->v, l->n, cap, sizeof *l->v);
    l->v[l->n++] = v;
}

void lx_parse_slice(parser *p, hlo_instr *in)
{
    int cs = 0, cl = 0, ct = 0;
    lx_expect_punct(p, '{', "in slice");
    if (!lx_eat_punct(p, '}')) {
        do {
            lx_expect_punct(p, '[', "in slice");
            lx_ints_push(p, &in->slice_start, &cs,
                         lx_parse_int(p, "slice start", 0, HLO_MAX_ELEMENTS));
            lx_expect_punct(p, ':', "in slice");
            lx_ints_push(p, &in->slice_limit, &cl,
                         lx_parse_int(p, "slice limit", 0, HLO_MAX_ELEMENTS));
            int64_t stride = 1;
            if (lx_eat_punct(p, ':'))
                stride = lx_parse_int(p, "slice stride", 1, HLO_MAX_ELEMENTS);
            lx_ints_push(p, &in->slice_stride, &ct, stride);
            lx_expect_punct(p, ']', "in slice");
        } while (lx_eat_punct(p, ','));
        lx_expect_punct(p, '}', "in slice");
    }
}

/* The dims of an atom such as padding's 0_1x-1_1_2 or a window's 3x3: 'x'-separated dims, each
 * of nmin..nmax '_'-separated decimal integers of magnitude at most HLO_MAX_ELEMENTS, negative
 * only in the fields whose bit is set in neg. */
typedef struct {
    int64_t f[3]; /* fields not given are 0 */
} dim_fields;

/* Returns the number of dims, in *dims (arena); anything else is "bad <what> '<atom>'". */
static int parse_dim_atom(parser *p, tok t, int nmin, int nmax, unsigned neg, const char *what,
                          dim_fields **dims)
{
    const char *s = p->s + t.pos, *end = s + t.len;
    int n = 0, cap = 0;
    *dims = NULL;
    while (s < end) {
        dim_fields d = {{0, 0, 0}};
        int nf = 0;
        for (;;) {
            bool minus = s < end && *s == '-';
            const char *q = s + minus;
            int64_t v = 0;
            while (q < end && isdigit((unsigned char)*q) && v <= HLO_MAX_ELEMENTS)
                v = v * 10 + (*q++ - '0');
            if (q == s + minus || v > HLO_MAX_ELEMENTS || nf == nmax || (minus && !(neg >> nf & 1)))
                lx_fail_at(p, t.pos, "bad %s '%.*s'", what, (int)t.len, p->s + t.pos);
            d.f[nf++] = minus ? -v : v;
            s = q;
            if (s < end && *s == '_') {
                s++;
                continue;
            }
            break;
        }
        if (nf < nmin || (s < end && *s != 'x') || (s < end && s + 1 == end))
            lx_fail_at(p, t.pos, "bad %s '%.*s'", what, (int)t.len, p->s + t.pos);
        if (s < end)
            s++;
        *dims = lx_grow(p, *dims, n, &cap, sizeof **dims);
        (*dims)[n++] = d;
    }
    return n;
}

/* padding=lo_hi[_interior]x... : one atom, e.g. 0_0x1_1_0 (negative edges allowed). */
void lx_parse_padding(parser *p, hlo_instr *in)
{
    tok t = lx_next(p);
    if (t.kind != T_NUM)
        lx_expected(p, t, "padding such as 0_0x1_1");
    dim_fields *d;
    int n = parse_dim_atom(p, t, 2, 3, 3, "padding", &d), cl = 0, ch = 0, ci = 0;
    for (int k = 0; k < n; k++) {
        lx_ints_push(p, &in->pad_low, &cl, d[k].f[0]);
        lx_ints_push(p, &in->pad_high, &ch, d[k].f[1]);
        lx_ints_push(p, &in->pad_interior, &ci, d[k].f[2]);
    }
    in->pad_low.present = in->pad_high.present = in->pad_interior.present = true;
}

enum { W_SIZE, W_STRIDE, W_PAD, W_LHS_DILATE, W_RHS_DILATE, W_FIELDS };
static const char *const window_fields[W_FIELDS] = {"size", "stride", "pad", "lhs_dilate",
                                                    "rhs_dilate"};

/* window={size=3x3 stride=2x1 pad=1_1x0_2 lhs_dilate=1x1 rhs_dilate=1x1}: fields in any order,
 * each at most once and with as many dims as size; `window={}` has none. */
void lx_parse_window(parser *p, hlo_instr *in)
{
    dim_fields *v[W_FIELDS] = {NULL};
    int n[W_FIELDS];
    size_t at[W_FIELDS];
    for (int f = 0; f < W_FIELDS; f++)
        n[f] = -1;
    lx_expect_punct(p, '{', "to open the window");
    while (!lx_eat_punct(p, '}')) {
        tok name = lx_next(p);
        if (name.kind != T_NAME)
            lx_expected(p, name,
                        "a window field (size, stride, pad, lhs_dilate, rhs_dilate) or '}'");
        int f = 0;
        while (f < W_FIELDS && !lx_tok_is(p, name, window_fields[f]))
            f++;
        if (f == W_FIELDS)
            lx_fail_at(p, name.at,
                       "unsupported window field '%.*s' (expected size, stride, pad, "
                       "lhs_dilate or rhs_dilate)",
                       (int)name.len, p->s + name.pos);
        if (n[f] >= 0)
            lx_fail_at(p, name.at, "window field '%s' given twice", window_fields[f]);
        lx_expect_punct(p, '=', "after window field");
        tok t = lx_next(p);
        if (t.kind != T_NUM)
            lx_expected(p, t,
                        f == W_PAD ? "window pad such as 1_1x0_2" : "window dims such as 3x3");
        char what[32];
        snprintf(what, sizeof what, "window %s", window_fields[f]);
        n[f] = f == W_PAD ? parse_dim_atom(p, t, 2, 2, 3, what, &v[f])
                          : parse_dim_atom(p, t, 1, 1, 0, what, &v[f]);
        at[f] = t.pos;
    }
    hlo_window *w = &in->window;
    w->rank = n[W_SIZE] < 0 ? 0 : n[W_SIZE];
    for (int f = 0; f < W_FIELDS; f++) {
        if (n[f] >= 0 && n[W_SIZE] < 0)
            lx_fail_at(p, at[f], "window %s without size", window_fields[f]);
        if (n[f] >= 0 && n[f] != w->rank)
            lx_fail_at(p, at[f], "window %s has %d dims but size has %d", window_fields[f], n[f],
                       w->rank);
    }
    if (w->rank > HLO_MAX_RANK)
        lx_fail_at(p, at[W_SIZE], "window has more than %d dims", HLO_MAX_RANK);
    w->present = true;
    w->dims = lx_alloc(p, (size_t)w->rank * sizeof *w->dims);
    for (int k = 0; k < w->rank; k++) {
        hlo_window_dim *d = &w->dims[k];
        d->size = v[W_SIZE][k].f[0];
        d->stride = n[W_STRIDE] < 0 ? 1 : v[W_STRIDE][k].f[0];
        d->pad_lo = n[W_PAD] < 0 ? 0 : v[W_PAD][k].f[0];
        d->pad_hi = n[W_PAD] < 0 ? 0 : v[W_PAD][k].f[1];
        d->lhs_dilate = n[W_LHS_DILATE] < 0 ? 1 : v[W_LHS_DILATE][k].f[0];
        d->rhs_dilate = n[W_RHS_DILATE] < 0 ? 1 : v[W_RHS_DILATE][k].f[0];
    }
}

/* One operand's part of dim_labels, len labels at pos: its two letters (b and f, or i and o)
 * and the spatial dims '0' + k for k < len - 2, each once. dims[0] and dims[1] get the letters'
 * dims, dims[2 + k] spatial dim k's. */
static void parse_label_part(parser *p, size_t pos, int len, const char *letters,
                             const char *operand, int *dims)
{
    bool seen[HLO_MAX_RANK] = {false};
    int n = len - 2;
    for (int i = 0; i < len; i++) {
        char c = p->s[pos + (size_t)i];
        int sym = c == letters[0] ? 0 : c == letters[1] ? 1 : -1;
        if (c >= '0' && c < '0' + n)
            sym = 2 + c - '0';
        if (sym < 0 && n > 0)
            lx_fail_at(p, pos + (size_t)i,
                       "'%c' is not a dim of the %s in dim_labels (%c, %c or "
                       "spatial 0 to %c)",
                       c, operand, letters[0], letters[1], '0' + n - 1);
        if (sym < 0)
            lx_fail_at(p, pos + (size_t)i, "'%c' is not a dim of the %s in dim_labels (%c or %c)",
                       c, operand, letters[0], letters[1]);
        if (seen[sym])
            lx_fail_at(p, pos + (size_t)i, "'%c' repeated in the %s's dim_labels", c, operand);
        seen[sym] = true;
        dims[sym] = i;
    }
}

static bool is_label_char(int c)
{
    return isalnum(c) || c == '_' || c == '-' || c == '>' || (c >= ':' && c <= '=');
}

/* dim_labels=b01f_01io->b01f: input, kernel and output labels, one atom read by characters
 * (spatial dims 10 to 13 are the non-name characters ':' to '='). */
void lx_parse_dim_labels(parser *p, hlo_instr *in)
{
    size_t at = lx_skip_space(p, p->pos), end = at;
    while (end < p->len && is_label_char((unsigned char)p->s[end]))
        end++;
    const char *s = p->s + at;
    size_t len = end - at, u = 0, arrow;
    if (len == 0)
        lx_expected(p, lx_peek(p), "dim_labels such as b01f_01io->b01f");
    while (u < len && s[u] != '_')
        u++;
    for (arrow = u; arrow + 1 < len && !(s[arrow] == '-' && s[arrow + 1] == '>'); arrow++)
        ;
    if (arrow + 1 >= len)
        lx_fail_at(p, at, "expected dim_labels such as b01f_01io->b01f, found '%.*s%s'",
                   len > 40 ? 40 : (int)len, s, len > 40 ? "..." : "");
    size_t nl = u, nk = arrow - u - 1, no = len - arrow - 2;
    if (nl != nk || nl != no)
        lx_fail_at(p, at,
                   "dim_labels have %zu input, %zu kernel and %zu output dims: must be "
                   "equal",
                   nl, nk, no);
    if (nl < 2 || nl > HLO_MAX_RANK)
        lx_fail_at(p, at, "dim_labels have %zu dims per operand, must be 2 to %d", nl,
                   HLO_MAX_RANK);
    hlo_conv_dims *c = &in->dim_labels;
    int d[HLO_MAX_RANK];
    c->present = true;
    c->n_spatial = (int)nl - 2;
    parse_label_part(p, at, (int)nl, "bf", "input", d);
    c->input_batch_dim = d[0];
    c->input_feature_dim = d[1];
    memcpy(c->input_spatial_dims, d + 2, (size_t)c->n_spatial * sizeof *d);
    parse_label_part(p, at + u + 1, (int)nl, "io", "kernel", d);
    c->kernel_input_feature_dim = d[0];
    c->kernel_output_feature_dim = d[1];
    memcpy(c->kernel_spatial_dims, d + 2, (size_t)c->n_spatial * sizeof *d);
    parse_label_part(p, at + arrow + 2, (int)nl, "bf", "output", d);
    c->output_batch_dim = d[0];
    c->output_feature_dim = d[1];
    memcpy(c->output_spatial_dims, d + 2, (size_t)c->n_spatial * sizeof *d);
    p->pos = end;
}

hlo_ints *hlo_gather_list(hlo_gather_dims *g, int k)
{
    hlo_ints *const lists[HLO_GATHER_LISTS] = {
        &g->offset_dims,           &g->collapsed_slice_dims,        &g->start_index_map,
        &g->operand_batching_dims, &g->start_indices_batching_dims, &g->slice_sizes};
    return lists[k];
}

const char *hlo_gather_list_name(bool scatter, int k)
{
    static const char *const names[2][HLO_GATHER_LISTS] = {
        {"offset_dims", "collapsed_slice_dims", "start_index_map", "operand_batching_dims",
         "start_indices_batching_dims", "slice_sizes"},
        {"update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims",
         "input_batching_dims", "scatter_indices_batching_dims", NULL}};
    return names[scatter][k];
}

hlo_ints *lx_gather_list(parser *p, tok name, hlo_instr *in)
{
    for (int k = 0; k < HLO_GATHER_LISTS; k++) {
        const char *n = hlo_gather_list_name(in->opcode == HLO_OP_SCATTER, k);
        if (n && lx_tok_is(p, name, n))
            return hlo_gather_list(&in->gather, k);
    }
    return NULL;
}

/* true_computation=t / false_computation=f (branches 0 and 1 of a pred conditional) or
 * branch_computations={b0, ...}, not both; returns whether the attribute was already given. */
bool lx_parse_branches(parser *p, hlo_instr *in, tok name, int comp, int instr)
{
    if (lx_tok_is(p, name, "branch_computations")) {
        if (in->n_branches)
            return true;
        int cap = 0;
        lx_expect_punct(p, '{', "in branch_computations");
        do {
            in->branches = lx_grow(p, in->branches, in->n_branches, &cap, sizeof *in->branches);
            if (in->n_branches >= (1 << 20))
                lx_fail_at(p, name.at, "too many branch computations");
            in->branches[in->n_branches] = 0;
            lx_add_ref(p, comp, instr, REF_BRANCH - in->n_branches++,
                       lx_expect_name(p, "a computation name"));
        } while (lx_eat_punct(p, ','));
        lx_expect_punct(p, '}', "in branch_computations");
        return false;
    }
    if (in->n_branches && !in->branch_pred)
        return true;
    if (!in->n_branches) {
        in->branches = lx_alloc(p, 2 * sizeof *in->branches);
        in->branches[0] = in->branches[1] = -1;
        in->n_branches = 2;
        in->branch_pred = true;
    }
    int k = lx_tok_is(p, name, "false_computation");
    bool dup = in->branches[k] != -1;
    in->branches[k] = 0;
    lx_add_ref(p, comp, instr, REF_BRANCH - k, lx_expect_name(p, "a computation name"));
    return dup;
}

void lx_parse_replica_groups(parser *p, hlo_instr *in)
{
    int cap = 0;
    if (lx_eat_punct(p, '[')) { /* iota form */
        const int64_t g = lx_parse_int(p, "replica group count", 1, 1 << 20);
        lx_expect_punct(p, ',', "in replica_groups");
        const int64_t n = lx_parse_int(p, "replica group size", 1, 1 << 20);
        lx_expect_punct(p, ']', "in replica_groups");
        tok le = lx_next(p);
        if (le.kind != T_LE)
            lx_expected(p, le, "'<=' in replica_groups");
        lx_expect_punct(p, '[', "in replica_groups");
        const int64_t total = lx_parse_int(p, "replica id count", 1, 1 << 20);
        lx_expect_punct(p, ']', "in replica_groups");
        if (total != g * n)
            lx_fail_at(p, le.pos, "replica_groups [%lld,%lld]<=[%lld]: not %lld ids", (long long)g,
                       (long long)n, (long long)total, (long long)(g * n));
        if (lx_peek(p).kind == T_NAME)
            lx_fail_at(p, lx_peek(p).pos, "replica_groups: a transposed iota is not supported");
        in->replica_groups = lx_alloc(p, (size_t)g * sizeof *in->replica_groups);
        in->n_replica_groups = (int)g;
        for (int64_t i = 0; i < g; i++, cap = 0)
            for (int64_t j = 0; j < n; j++)
                lx_ints_push(p, &in->replica_groups[i], &cap, i * n + j);
        return;
    }
    lx_expect_punct(p, '{', "to open replica_groups");
    if (lx_eat_punct(p, '}'))
        return;
    int groups_cap = 0;
    do {
        if (in->n_replica_groups >= (1 << 20))
            lx_fail_at(p, p->pos, "too many replica groups");
        in->replica_groups = lx_grow(p, in->replica_groups, in->n_replica_groups, &groups_cap,
                                     sizeof *in->replica_groups);
        hlo_ints *l = &in->replica_groups[in->n_replica_groups++];
        *l = (hlo_ints){.present = true};
        cap = 0;
        lx_expect_punct(p, '{', "to open a replica group");
        do
            lx_ints_push(p, l, &cap, lx_parse_int(p, "replica id", 0, 1 << 20));
        while (lx_eat_punct(p, ','));
        lx_expect_punct(p, '}', "to close a replica group");
    } while (lx_eat_punct(p, ','));
    lx_expect_punct(p, '}', "to close replica_groups");
}

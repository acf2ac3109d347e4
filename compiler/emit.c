/* emit.c - device memory plan, constant image, host program and report: the package. */
#include "compiler/tpuc_internal.h"

#include <stdlib.h>
#include <string.h>

#define ALIGN 64u

static uint64_t align_up(uint64_t v) { return (v + ALIGN - 1) / ALIGN * ALIGN; }

static uint32_t tiles(uint32_t v, uint32_t n) { return (v + n - 1) / n; }

/* ------------------------------------------------------------ memory plan -- */

/* A device buffer of one segment: live from GEMM first to GEMM last (segment-local indices;
 * -1: from the start, INT32_MAX: to the end). */
typedef struct {
    int node;
    uint64_t size, off;
    int first, last;
} dbuf;

/* Lowest 64-aligned offset >= base where size bytes overlap no buffer live during [first,last]. */
static uint64_t first_fit(const dbuf *b, int n, uint64_t base, const dbuf *v)
{
    uint64_t off = base;
    for (bool moved = true; moved;) {
        moved = false;
        for (int i = 0; i < n; i++)
            if (b[i].last >= v->first && b[i].first <= v->last && off < b[i].off + b[i].size &&
                b[i].off < off + v->size) {
                off = align_up(b[i].off + b[i].size);
                moved = true;
            }
    }
    return off;
}

static tpub_xfer *new_xfer(tpub_segment *s, bool input)
{
    uint32_t *n = input ? &s->n_inputs : &s->n_outputs;
    tpub_xfer **list = input ? &s->inputs : &s->outputs;
    tpub_xfer *p = realloc(*list, ((size_t)*n + 1) * sizeof *p);
    if (!p)
        return NULL;
    *list = p;
    p = &p[(*n)++];
    memset(p, 0, sizeof *p);
    return p;
}

static int set_scales(tpub_xfer *x, uint32_t n, const float *v)
{
    if (!(x->scale = malloc(n * sizeof(float))))
        return -1;
    memcpy(x->scale, v, n * sizeof(float));
    x->n_scale = n;
    return 0;
}

/* Plans one segment's activations from base (its GEMMs are consecutive); returns the end of
 * what it uses through *end. */
static int plan_segment(tc_graph *g, int s, tpub_segment *seg, uint64_t base, uint64_t *end)
{
    int first = -1, count = 0;
    for (int i = 0; i < g->n_gemms; i++)
        if (g->gemms[i].seg == s) {
            first = first < 0 ? i : first;
            count++;
        }
    dbuf *b = calloc(2 * (size_t)count + 1, sizeof *b);
    if (!b)
        return tc_fail(g, NULL, "out of memory");
    int nb = 0;
    /* Inputs: host values a GEMM reads as A. */
    for (int j = 0; j < count; j++) {
        const tc_gemm *gm = &g->gemms[first + j];
        const tc_node *x = &g->nodes[gm->x];
        bool internal = x->role == TC_DEVICE && g->gemms[x->gemm].out_int8;
        int at = -1;
        for (int i = 0; i < nb && at < 0; i++)
            at = b[i].node == gm->x ? i : -1;
        if (at < 0 && !internal)
            b[at = nb++] = (dbuf){gm->x, (uint64_t)gm->batch * gm->m * gm->k, 0, -1, j};
        if (at >= 0)
            b[at].last = j;
    }
    int n_in = nb;
    /* Results: int8 ones live until their last reader, the rest until the end. */
    for (int j = 0; j < count; j++) {
        const tc_gemm *gm = &g->gemms[first + j];
        int last = INT32_MAX;
        if (gm->out_int8)
            for (int k = j + 1; k < count; k++)
                if (g->gemms[first + k].x == gm->out)
                    last = k;
        b[nb++] = (dbuf){gm->out, (uint64_t)gm->batch * gm->m * gm->n * (gm->out_int8 ? 1 : 4),
                         0, j, last};
    }
    *end = base;
    for (int i = 0; i < nb; i++) {
        b[i].off = first_fit(b, i, base, &b[i]);
        if (b[i].off + b[i].size > *end)
            *end = b[i].off + b[i].size;
    }
    int rc = 0;
    for (int i = 0; i < nb && !rc; i++) {
        const tc_node *nd = &g->nodes[b[i].node];
        if (i < n_in) {
            const tc_gemm *gm = &g->gemms[first + b[i].last];
            tpub_xfer *x = new_xfer(seg, true);
            if (!x) {
                rc = -1;
                break;
            }
            *x = (tpub_xfer){.off = b[i].off, .rows = gm->batch * gm->m, .cols = gm->k,
                             .ld = gm->k, .dev_type = gm->a_unsigned ? HLO_U8 : HLO_S8,
                             .host_type = nd->shape.type};
            for (int k = 0; k < count; k++)
                if (g->gemms[first + k].x == b[i].node)
                    g->gemms[first + k].a_off = b[i].off;
            if (!gm->exact)
                rc = set_scales(x, 1, &gm->a_scale);
            continue;
        }
        tc_gemm *gm = &g->gemms[first + b[i].first];
        gm->c_off = b[i].off;
        for (int k = b[i].first + 1; k < count; k++)
            if (g->gemms[first + k].x == b[i].node)
                g->gemms[first + k].a_off = b[i].off;
        if (gm->out_int8)
            continue;
        tpub_xfer *x = new_xfer(seg, false);
        if (!x) {
            rc = -1;
            break;
        }
        *x = (tpub_xfer){.off = b[i].off, .rows = gm->batch * gm->m, .cols = gm->n,
                         .ld = gm->n, .dev_type = HLO_S32,
                         .host_type = gm->exact ? HLO_S32 : HLO_F32};
        if (!gm->exact)
            rc = set_scales(x, gm->n, gm->acc_scale);
    }
    free(b);
    return rc ? tc_fail(g, NULL, "out of memory") : 0;
}

/* Weights in tile order (docs/command-stream.md, B_TILED) and GEMM parameters. */
static int const_image(tc_graph *g, tpub_package *p)
{
    const uint32_t N = g->array_n;
    uint64_t at = 0;
    for (int i = 0; i < g->n_gemms; i++) {
        tc_gemm *gm = &g->gemms[i];
        gm->b_off = at;
        at = align_up(at + (uint64_t)gm->batch * tiles(gm->k, N) * tiles(gm->n, N) * N * N);
        if (gm->bias_q || gm->out_int8) {
            gm->p_off = at;
            at = align_up(at + 12ull * gm->n);
        }
    }
    p->const_bytes = at;
    if (!(p->const_image = calloc(at ? at : 1, 1)))
        return tc_fail(g, NULL, "out of memory for the package's constant image (%llu bytes of "
                       "weights and parameters)", (unsigned long long)at);
    for (int i = 0; i < g->n_gemms; i++) {
        const tc_gemm *gm = &g->gemms[i];
        const uint32_t KT = tiles(gm->k, N);
        const uint64_t per_batch = (uint64_t)KT * tiles(gm->n, N) * N * N;
        for (uint32_t b = 0; b < gm->batch; b++)
            for (uint32_t k = 0; k < gm->k; k++)
                for (uint32_t n = 0; n < gm->n; n++) {
                    uint64_t tile = (uint64_t)(n / N) * KT + k / N;
                    p->const_image[gm->b_off + b * per_batch + tile * N * N + (k % N) * N +
                                   n % N] = (uint8_t)gm->wq[((size_t)b * gm->k + k) * gm->n + n];
                }
        if (!(gm->bias_q || gm->out_int8))
            continue;
        for (uint32_t j = 0; j < gm->n; j++) {
            int32_t v[3] = {gm->bias_q ? gm->bias_q[j] : 0, gm->out_int8 ? gm->mult[j] : 1,
                            gm->out_int8 ? gm->shift[j] : 0};
            for (int f = 0; f < 3; f++)
                for (int byte = 0; byte < 4; byte++)
                    p->const_image[gm->p_off + 4ull * (f * gm->n + j) + byte] =
                        (uint8_t)((uint32_t)v[f] >> (8 * byte));
        }
    }
    return 0;
}

static char *dup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* One command per GEMM of a batch: batch b's A, B and C follow batch b - 1's. */
static int make_gemms(tc_graph *g, tpub_package *p)
{
    const uint32_t N = g->array_n;
    for (int i = 0; i < g->n_gemms; i++) {
        const tc_gemm *gm = &g->gemms[i];
        tpub_segment *s = &p->segments[gm->seg];
        tpub_op *q = realloc(s->ops, ((size_t)s->n_ops + gm->batch) * sizeof *q);
        if (!q)
            return tc_fail(g, NULL, "out of memory");
        s->ops = q;
        uint32_t flags = TPUB_GEMM_B_TILED;
        flags |= gm->bias_q ? TPUB_GEMM_BIAS : 0;
        flags |= gm->relu >= 0 ? TPUB_GEMM_RELU : 0;
        flags |= gm->out_int8 ? TPUB_GEMM_OUT_INT8 : 0;
        flags |= gm->a_unsigned ? TPUB_GEMM_A_UNSIGNED : 0;
        const uint64_t b_bytes = (uint64_t)tiles(gm->k, N) * tiles(gm->n, N) * N * N;
        const uint64_t c_elt = gm->out_int8 ? 1 : 4;
        for (uint32_t b = 0; b < gm->batch; b++) {
            hlo_text name = {0}, fused = {0};
            hlo_text_printf(&name, "%s", g->nodes[gm->dot].name);
            if (gm->batch > 1)
                hlo_text_printf(&name, "[%u]", b);
            hlo_text_printf(&fused, "%s", "");
            if (gm->bias >= 0)
                hlo_text_printf(&fused, "%s", g->nodes[gm->bias].name);
            if (gm->relu >= 0)
                hlo_text_printf(&fused, "%s%s", fused.len ? "," : "", g->nodes[gm->relu].name);
            const uint64_t rows = (uint64_t)b * gm->m;
            q = &s->ops[s->n_ops++];
            q->kind = TPUB_OP_GEMM;
            q->gemm = (tpub_gemm){gm->m, gm->k, gm->n, flags, gm->a_off + rows * gm->k,
                             gm->b_off + b * b_bytes, gm->c_off + rows * gm->n * c_elt,
                             (flags & (TPUB_GEMM_BIAS | TPUB_GEMM_OUT_INT8)) ? gm->p_off : 0,
                             gm->k, gm->n, name.s, fused.s};
            if (name.oom || fused.oom || !q->gemm.name || !q->gemm.fused)
                return tc_fail(g, NULL, "out of memory");
        }
    }
    return 0;
}

/* ---------------------------------------------------------- host program -- */

typedef struct {
    tc_graph *g;
    hlo_text t;
    char *done;      /* per node: printed (or needs no line) */
    char *seg_done;  /* per segment */
    bool *reducer;   /* per computation of the module: printed */
} host_writer;

static int emit_node(host_writer *w, int i);

/* Segment s as one custom-call returning a tuple, then one get-tuple-element per output named
 * after the node it carries. */
static int emit_segment(host_writer *w, int s)
{
    tc_graph *g = w->g;
    if (w->seg_done[s])
        return 0;
    w->seg_done[s] = 1;
    int n_ops = 0, n_res = 0, cap = g->n_gemms + 1;
    int *ops = malloc((size_t)cap * sizeof *ops), *res = malloc((size_t)cap * sizeof *res);
    if (!ops || !res) {
        free(ops);
        free(res);
        return tc_fail(g, NULL, "out of memory");
    }
    int rc = 0;
    for (int i = 0; i < g->n_gemms; i++) {
        const tc_gemm *gm = &g->gemms[i];
        if (gm->seg != s)
            continue;
        const tc_node *x = &g->nodes[gm->x];
        bool internal = x->role == TC_DEVICE && g->gemms[x->gemm].out_int8;
        bool seen = false;
        for (int j = 0; j < n_ops; j++)
            seen |= ops[j] == gm->x;
        if (!internal && !seen) {
            ops[n_ops++] = gm->x;
            rc |= emit_node(w, gm->x);
        }
        if (!gm->out_int8)
            res[n_res++] = gm->out;
    }
    if (!rc) {
        hlo_text_printf(&w->t, "  segment.%d = (", s);
        for (int j = 0; j < n_res; j++) {
            const tc_gemm *gm = &g->gemms[g->nodes[res[j]].gemm];
            hlo_shape sh = g->nodes[res[j]].shape;
            if (gm->exact)
                sh.type = HLO_S32;
            hlo_text_printf(&w->t, "%s", j ? ", " : "");
            hlo_print_shape(&w->t, &sh);
        }
        hlo_text_printf(&w->t, ") custom-call(");
        for (int j = 0; j < n_ops; j++)
            hlo_text_printf(&w->t, "%s%s", j ? ", " : "", g->nodes[ops[j]].name);
        hlo_text_printf(&w->t, "), custom_call_target=\"tpu.segment.%d\"\n", s);
        for (int j = 0; j < n_res; j++) {
            const tc_node *nd = &g->nodes[res[j]];
            hlo_text_printf(&w->t, "  %s = ", nd->name);
            hlo_print_shape(&w->t, &nd->shape);
            hlo_text_printf(&w->t, " get-tuple-element(segment.%d), index=%d\n", s, j);
            w->done[res[j]] = 1;
        }
    }
    free(ops);
    free(res);
    return rc;
}

static int emit_node(host_writer *w, int i)
{
    tc_graph *g = w->g;
    tc_node *nd = &g->nodes[i];
    if (w->done[i])
        return 0;
    if (nd->role == TC_DEVICE)
        return emit_segment(w, g->gemms[nd->gemm].seg);
    w->done[i] = 1;
    if (nd->role == TC_CONST) {
        hlo_print_constant(&w->t, false, nd->name, nd->value);
        return 0;
    }
    if (nd->role == TC_INPUT) {
        hlo_instr p = *nd->src;
        p.parameter_number = nd->input;
        hlo_print_instr(&w->t, g->m, &p, false, nd->name, &nd->shape, NULL, 0);
        return 0;
    }
    const char **names = malloc(((size_t)nd->n_in + 1) * sizeof *names);
    if (!names)
        return tc_fail(g, NULL, "out of memory");
    int rc = 0;
    for (int j = 0; j < nd->n_in && !rc; j++) {
        rc = emit_node(w, nd->in[j]);
        names[j] = g->nodes[nd->in[j]].name;
    }
    if (!rc && nd->elem < 0)
        hlo_print_instr(&w->t, g->m, nd->src, false, nd->name, &nd->shape, names, nd->n_in);
    if (!rc && nd->elem >= 0) {
        /* The tuple-valued instruction under its elements' base name, then every element. */
        const int first = i - nd->elem;
        const size_t base = strrchr(nd->name, '_') - nd->name;
        char *tuple = malloc(base + 1);
        if (!tuple) {
            free(names);
            return tc_fail(g, NULL, "out of memory");
        }
        memcpy(tuple, nd->name, base);
        tuple[base] = 0;
        hlo_print_instr(&w->t, g->m, nd->src, false, tuple, &nd->src->shape, names, nd->n_in);
        for (int j = 0; j < nd->src->shape.n_tuple; j++) {
            const tc_node *e = &g->nodes[first + j];
            hlo_text_printf(&w->t, "  %s = ", e->name);
            hlo_print_shape(&w->t, &e->shape);
            hlo_text_printf(&w->t, " get-tuple-element(%s), index=%d\n", tuple, j);
            w->done[first + j] = 1;
        }
        free(tuple);
    }
    free(names);
    return rc;
}

/* Computation c of m after every computation it calls, each once (printed[] marks them). */
static void print_callee(hlo_text *t, const hlo_module *m, int c, bool *printed)
{
    if (printed[c])
        return;
    printed[c] = true;
    const hlo_computation *comp = &m->comps[c];
    for (int i = 0; i < comp->n_instrs; i++) {
        if (comp->instrs[i].to_apply >= 0)
            print_callee(t, m, comp->instrs[i].to_apply, printed);
        if (comp->instrs[i].calls >= 0)
            print_callee(t, m, comp->instrs[i].calls, printed);
    }
    hlo_print_computation(t, m, c, NULL);
    hlo_text_printf(t, "\n");
}

static int host_program(tc_graph *g, tpub_package *p)
{
    host_writer w = {g, {0}, calloc((size_t)g->n_nodes + 1, 1),
                     calloc((size_t)g->n_segs + 1, 1),
                     calloc((size_t)g->m->n_comps + 1, sizeof(bool))};
    hlo_text body = {0};
    int rc = (!w.done || !w.seg_done || !w.reducer) ? tc_fail(g, NULL, "out of memory") : 0;
    /* Inputs first, in parameter order, then everything the outputs need. */
    for (int k = 0; k < g->n_inputs && !rc; k++)
        rc = emit_node(&w, g->inputs[k]);
    for (int k = 0; k < g->n_outputs && !rc; k++)
        rc = emit_node(&w, g->outputs[k]);
    if (!rc) {
        hlo_text_printf(&w.t, "  ROOT outputs = (");
        for (int k = 0; k < g->n_outputs; k++) {
            hlo_text_printf(&w.t, "%s", k ? ", " : "");
            hlo_print_shape(&w.t, &g->nodes[g->outputs[k]].shape);
        }
        hlo_text_printf(&w.t, ") tuple(");
        for (int k = 0; k < g->n_outputs; k++)
            hlo_text_printf(&w.t, "%s%s", k ? ", " : "", g->nodes[g->outputs[k]].name);
        hlo_text_printf(&w.t, ")\n}\n");
        /* The reducers the host's reduce ops apply, before the ENTRY that uses them. */
        hlo_text_printf(&body, "HloModule %s_host\n\n", g->m->name);
        for (int i = 0; i < g->n_nodes; i++)
            if (w.done[i] && g->nodes[i].role == TC_HOST && g->nodes[i].src->to_apply >= 0)
                print_callee(&body, g->m, g->nodes[i].src->to_apply, w.reducer);
        hlo_text_printf(&body, "ENTRY host {\n%s", w.t.s ? w.t.s : "");
        if (body.oom || w.t.oom)
            rc = tc_fail(g, NULL, "out of memory");
    }
    free(w.done);
    free(w.seg_done);
    free(w.reducer);
    hlo_text_free(&w.t);
    if (rc) {
        hlo_text_free(&body);
        return rc;
    }
    p->host_hlo = body.s;
    /* The runtime parses this text: make sure it does. */
    hlo_error e;
    hlo_module *hm = hlo_parse(p->host_hlo, strlen(p->host_hlo), "host program", &e);
    if (!hm || hlo_check(hm, "host program", &e)) {
        hlo_module_free(hm);
        return tc_fail(g, NULL, "internal error: the host program does not parse: %s", e.msg);
    }
    hlo_module_free(hm);
    return 0;
}

/* --------------------------------------------------------------- package -- */

static int signature(tc_graph *g, tpub_sig *s, int node)
{
    const tc_node *nd = &g->nodes[node];
    if (nd->shape.rank > TPUB_MAX_RANK)
        return tc_fail(g, nd->src, "'%s' has rank %d; packages hold at most %d", nd->name,
                       nd->shape.rank, TPUB_MAX_RANK);
    hlo_type t = nd->shape.type;
    if (t != HLO_F32 && t != HLO_S8 && t != HLO_U8 && t != HLO_S32)
        return tc_fail(g, nd->src, "'%s' is %s; model inputs and outputs must be f32, s8, u8 "
                       "or s32", nd->name, hlo_type_name(t));
    s->type = t;
    s->rank = nd->shape.rank;
    memcpy(s->dims, nd->shape.dims, (size_t)s->rank * sizeof *s->dims);
    return (s->name = dup(nd->name)) ? 0 : tc_fail(g, NULL, "out of memory");
}

int tc_emit(tc_graph *g, tpub_package *p)
{
    memset(p, 0, sizeof *p);
    p->array_n = g->array_n;
    if (!(p->inputs = calloc((size_t)g->n_inputs + 1, sizeof *p->inputs)) ||
        !(p->outputs = calloc((size_t)g->n_outputs + 1, sizeof *p->outputs)) ||
        !(p->segments = calloc((size_t)g->n_segs + 1, sizeof *p->segments)))
        return tc_fail(g, NULL, "out of memory");
    p->n_inputs = (uint32_t)g->n_inputs;
    p->n_outputs = (uint32_t)g->n_outputs;
    p->n_segments = (uint32_t)g->n_segs;
    for (int k = 0; k < g->n_inputs; k++)
        if (signature(g, &p->inputs[k], g->inputs[k]))
            return -1;
    for (int k = 0; k < g->n_outputs; k++)
        if (signature(g, &p->outputs[k], g->outputs[k]))
            return -1;
    if (const_image(g, p))
        return -1;
    uint64_t base = align_up(p->const_bytes), end = base;
    p->arena_bytes = base;
    for (int s = 0; s < g->n_segs; s++) {
        if (plan_segment(g, s, &p->segments[s], base, &end))
            return -1;
        if (end > p->arena_bytes)
            p->arena_bytes = end;
    }
    p->arena_bytes = align_up(p->arena_bytes ? p->arena_bytes : 1);
    if (make_gemms(g, p) || host_program(g, p))
        return -1;
    return 0;
}

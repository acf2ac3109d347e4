/* emit.c - the package: signatures, the constant image (weights and kernels in tile order,
 * parameters), the memory plan of each segment's activations with its transfers, and the
 * operations; the host program is host.c's. */
#include "compiler/tpuc_internal.h"

#include <stdlib.h>
#include <string.h>

#define ALIGN 64u

static uint64_t align_up(uint64_t v) { return (v + ALIGN - 1) / ALIGN * ALIGN; }

static uint32_t tiles(uint32_t v, uint32_t n) { return (v + n - 1) / n; }

/* ------------------------------------------------------------ memory plan -- */

/* A device buffer of one segment: live from operation first to operation last (segment-local
 * indices; -1: from the start, INT32_MAX: to the end). */
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

/* The transfer permutation of a convolution's output (tpub.h), into x. */
static void conv_out_perm(const tc_graph *g, const tc_op *op, tpub_xfer *x)
{
    const hlo_shape *s = &g->nodes[op->out].shape;
    x->rank = tc_perm(op->out_nhwc, op->conv_rank, s->dims, x->perm);
    for (uint32_t k = 0; k < x->rank; k++)
        x->dims[k] = s->dims[k];
}

/* Does input in's transfer gather (tc_conv_gather, gemm_b_gather)? */
static bool gathers(const tc_graph *g, const tc_seg_input *in)
{
    const tc_op *op = &g->ops[in->op];
    if (op->kind == TC_GEMM)
        return in->b && tc_gemm_b_tiled(g, op);
    return in->b || op->in_gather || op->packed;
}

uint32_t tc_input_perm(const tc_graph *g, const tc_seg_input *in, uint32_t perm[TPUB_MAX_RANK])
{
    const tc_op *op = &g->ops[in->op];
    const int64_t *dims = g->nodes[in->node].shape.dims;
    if (gathers(g, in))
        return 0;
    if (in->b)
        return op->b_rank ? tc_perm(op->b_order, op->b_rank, dims, perm) : 0;
    if (op->kind == TC_CONV)
        return tc_perm(op->in_nhwc, op->conv_rank, dims, perm);
    return op->a_rank ? tc_perm(op->a_order, op->a_rank, dims, perm) : 0;
}

/* Do a and b name one host value written the same way? (A gather is its operation's own.) */
static bool same_input(const tc_graph *g, const tc_seg_input *a, const tc_seg_input *b)
{
    uint32_t pa[TPUB_MAX_RANK], pb[TPUB_MAX_RANK];
    const uint32_t ra = tc_input_perm(g, a, pa);
    if (gathers(g, a) || gathers(g, b))
        return a->node == b->node && a->b == b->b && a->op == b->op;
    return a->node == b->node && a->b == b->b && tc_input_perm(g, b, pb) == ra &&
           !memcmp(pa, pb, ra * sizeof *pa);
}

tc_seg_input *tc_segment_inputs(const tc_graph *g, int s, int *n_inputs)
{
    tc_seg_input *list = malloc((2 * (size_t)g->n_ops + 1) * sizeof *list);
    *n_inputs = 0;
    if (!list)
        return NULL;
    for (int i = 0; i < g->n_ops; i++) {
        const tc_op *op = &g->ops[i];
        if (op->seg != s)
            continue;
        const tc_seg_input cand[2] = {{op->x, i, false}, {op->w, i, true}};
        for (int c = op->a_dev ? 1 : 0; c < (op->w >= 0 ? 2 : 1); c++) {
            bool seen = false;
            for (int j = 0; j < *n_inputs && !seen; j++)
                seen = same_input(g, &list[j], &cand[c]);
            if (!seen)
                list[(*n_inputs)++] = cand[c];
        }
    }
    return list;
}

/* Elements of one batch index of a GEMM's B in tile order: KT x NT tiles of N x N. */
static uint64_t tiled_elements(const tc_graph *g, const tc_op *op)
{
    const uint32_t N = g->array_n;
    return (uint64_t)tiles(op->k, N) * tiles(op->n, N) * N * N;
}

bool tc_gemm_b_tiled(const tc_graph *g, const tc_op *op)
{
    return op->w < 0 || (uint64_t)op->batch * tiled_elements(g, op) <= TC_GATHER_MAX;
}

/* Where weight (b, k, n) of a GEMM goes in tile order (docs/command-stream.md, B_TILED), in
 * elements: each batch index's tiles after the last's; weight row k goes to A's column krow[k]
 * when the GEMM reads a view in place. */
static uint64_t tile_at(const tc_graph *g, const tc_op *op, uint32_t b, uint32_t k, uint32_t n)
{
    const uint32_t N = g->array_n, KT = tiles(op->k, N);
    const uint32_t row = op->a_dev && op->krow ? (uint32_t)op->krow[k] : k;
    const uint64_t tile = (uint64_t)(n / N) * KT + row / N;
    return b * tiled_elements(g, op) + tile * N * N + (row % N) * N + n % N;
}

/* A run-time B's gather into tile order (tpub.h): the device element tile_at(b, k, n) is the
 * host element of B's [batch][k][n], the host array transposed as op->b_order says; the tiles'
 * padding is zeros. */
static uint32_t *gemm_b_gather(const tc_graph *g, const tc_op *op, uint64_t *count)
{
    const hlo_shape *s = &g->nodes[op->w].shape;
    uint32_t perm[TPUB_MAX_RANK];
    const uint32_t rank = op->b_rank ? tc_perm(op->b_order, op->b_rank, s->dims, perm) : 0;
    int64_t stride[HLO_MAX_RANK], idx[HLO_MAX_RANK] = {0};
    for (int d = s->rank, at = 1; d-- > 0; at *= (int)s->dims[d])
        stride[d] = at;
    *count = op->batch * tiled_elements(g, op);
    uint32_t *gather = malloc((size_t)*count * sizeof *gather);
    if (!gather)
        return NULL;
    for (uint64_t i = 0; i < *count; i++)
        gather[i] = TPUB_GATHER_ZERO;
    /* The device's row-major [batch][k][n] walks the host array's dims in perm's order. */
    uint64_t host = 0;
    for (uint32_t b = 0; b < op->batch; b++)
        for (uint32_t k = 0; k < op->k; k++)
            for (uint32_t n = 0; n < op->n; n++) {
                gather[tile_at(g, op, b, k, n)] = (uint32_t)host;
                if (!rank) {
                    host++;
                    continue;
                }
                for (uint32_t d = rank; d-- > 0;) {
                    host += (uint64_t)stride[perm[d]];
                    if (++idx[d] < s->dims[perm[d]])
                        break;
                    host -= (uint64_t)stride[perm[d]] * (uint64_t)s->dims[perm[d]];
                    idx[d] = 0;
                }
            }
    return gather;
}

/* Bytes per element of op's operands on the device (A, a run-time B, weights), and of its
 * result. */
static uint64_t in_elt(const tc_op *op) { return op->bf16 ? 2 : 1; }
static uint64_t out_elt(const tc_op *op) { return op->out_int8 ? 1 : op->out_bf16 ? 2 : 4; }

/* The size of input in on the device, in bytes. */
static uint64_t input_bytes(const tc_graph *g, const tc_op *op, bool b)
{
    const uint32_t N = g->array_n;
    if (b && op->kind == TC_CONV) /* a run-time kernel, in tile order */
        return in_elt(op) * tpub_conv_k_tiles(&op->cv, N) * tiles(op->n, N) * N * N;
    if (b)
        return (uint64_t)op->batch *
               (tc_gemm_b_tiled(g, op) ? tiled_elements(g, op) : (uint64_t)op->k * op->n) *
               in_elt(op);
    return in_elt(op) * (op->kind == TC_CONV
                             ? (uint64_t)op->cv.batch * op->cv.h * op->cv.w * op->cv.c
                             : (uint64_t)op->batch * op->m * op->k);
}

static uint64_t result_bytes(const tc_op *op)
{
    uint64_t elements = (uint64_t)op->batch * op->m * op->n;
    if (op->kind == TC_CONV) {
        uint32_t oh, ow;
        tpub_conv_out_size(&op->cv, &oh, &ow);
        elements = (uint64_t)op->cv.batch * oh * ow * op->cv.cout;
    }
    return elements * out_elt(op);
}

/* The transfer of segment input in at off: an A or input quantized with the operation's input
 * scale, a run-time B with its own, rounded to bf16 in bf16, integer ones copied; permuted into
 * the device's order, or gathered (a convolution's run-time kernel in tile order, rows of N; its
 * dilated or cropped input). */
static int input_xfer(tc_graph *g, tpub_segment *seg, const tc_seg_input *in, uint64_t off)
{
    tpub_xfer *x = new_xfer(seg, true);
    if (!x)
        return -1;
    const tc_op *op = &g->ops[in->op];
    const hlo_shape *s = &g->nodes[in->node].shape;
    const bool gather = gathers(g, in);
    const uint32_t cols = gather && in->b       ? g->array_n
                          : in->b               ? op->n
                          : op->kind == TC_CONV ? op->cv.c
                                                : op->k;
    *x = (tpub_xfer){.off = off,
                     .rows = (uint32_t)(input_bytes(g, op, in->b) / in_elt(op) / cols),
                     .cols = cols,
                     .ld = cols,
                     .dev_type = op->bf16                   ? HLO_BF16
                                 : op->a_unsigned && !in->b ? HLO_U8
                                                            : HLO_S8,
                     .host_type = s->type};
    x->rank = tc_input_perm(g, in, x->perm);
    for (uint32_t k = 0; k < x->rank; k++)
        x->dims[k] = s->dims[k];
    uint64_t count = 0;
    if (gather && !(x->gather = op->kind == TC_GEMM ? gemm_b_gather(g, op, &count)
                                                    : tc_conv_gather(g, op, in->b, &count)))
        return -1;
    x->host_elements = gather ? (uint64_t)s->elements : 0;
    return op->exact || op->bf16 ? 0 : set_scales(x, 1, in->b ? &op->b_scale : &op->a_scale);
}

/* The transfer of op's result back to the host: s32 dequantized per column (exact: copied),
 * int8 dequantized with its one scale, or fp32 or bf16 converted. */
static int output_xfer(tc_graph *g, tpub_segment *seg, const tc_op *op)
{
    tpub_xfer *x = new_xfer(seg, false);
    if (!x)
        return -1;
    const uint32_t cols = op->n;
    const uint64_t elements = result_bytes(op) / out_elt(op);
    *x = (tpub_xfer){.off = op->c_off,
                     .rows = (uint32_t)(elements / cols),
                     .cols = cols,
                     .ld = cols,
                     .dev_type = op->out_int8   ? HLO_S8
                                 : op->out_bf16 ? HLO_BF16
                                 : op->bf16     ? HLO_F32
                                                : HLO_S32,
                     .host_type = g->nodes[op->out].shape.type};
    if (op->kind == TC_CONV)
        conv_out_perm(g, op, x);
    if (op->exact || op->bf16)
        return 0;
    return op->out_int8 ? set_scales(x, 1, &op->out_scale) : set_scales(x, cols, op->acc_scale);
}

/* Does operation op read input in (as its A or input, or as its B)? */
static bool reads(const tc_graph *g, int op, const tc_seg_input *in)
{
    const tc_op *o = &g->ops[op];
    const tc_seg_input a = {o->x, op, false}, b = {o->w, op, true};
    return (!o->a_dev && same_input(g, &a, in)) || (o->w >= 0 && same_input(g, &b, in));
}

/* Plans one segment's activations from base (its operations are consecutive); returns the end
 * of what it uses through *end. */
static int plan_segment(tc_graph *g, int s, tpub_segment *seg, uint64_t base, uint64_t *end)
{
    int first = -1, count = 0, n_in = 0;
    for (int i = 0; i < g->n_ops; i++)
        if (g->ops[i].seg == s) {
            first = first < 0 ? i : first;
            count++;
        }
    tc_seg_input *inputs = tc_segment_inputs(g, s, &n_in);
    dbuf *b = calloc((size_t)n_in + (size_t)count + 1, sizeof *b);
    if (!b || !inputs) {
        free(b);
        free(inputs);
        return tc_fail(g, NULL, "out of memory");
    }
    /* Inputs: live until the last operation reading them in the same way. */
    for (int i = 0; i < n_in; i++) {
        b[i] = (dbuf){inputs[i].node, input_bytes(g, &g->ops[inputs[i].op], inputs[i].b), 0, -1, 0};
        for (int j = 0; j < count; j++)
            if (reads(g, first + j, &inputs[i]))
                b[i].last = j;
    }
    /* Results: int8 ones read in place live until their last reader, the rest until the end. */
    for (int j = 0; j < count; j++) {
        const tc_op *op = &g->ops[first + j];
        int last = op->to_host ? INT32_MAX : j;
        for (int k = j + 1; k < count && !op->to_host; k++)
            if (g->ops[first + k].a_dev && g->ops[first + k].via == first + j)
                last = k;
        b[n_in + j] = (dbuf){op->out, result_bytes(op), 0, j, last};
    }
    const int nb = n_in + count;
    *end = base;
    for (int i = 0; i < nb; i++) {
        b[i].off = first_fit(b, i, base, &b[i]);
        if (b[i].off + b[i].size > *end)
            *end = b[i].off + b[i].size;
    }
    int rc = 0;
    for (int i = 0; i < n_in && !rc; i++) {
        rc = input_xfer(g, seg, &inputs[i], b[i].off);
        for (int j = 0; j < count; j++) {
            tc_op *op = &g->ops[first + j];
            const tc_seg_input a = {op->x, first + j, false}, w = {op->w, first + j, true};
            if (!op->a_dev && same_input(g, &a, &inputs[i]))
                op->a_off = b[i].off;
            if (op->w >= 0 && same_input(g, &w, &inputs[i]))
                op->b_off = b[i].off;
        }
    }
    for (int j = 0; j < count && !rc; j++) {
        tc_op *op = &g->ops[first + j];
        op->c_off = b[n_in + j].off;
        for (int k = j + 1; k < count; k++)
            if (g->ops[first + k].a_dev && g->ops[first + k].via == first + j)
                g->ops[first + k].a_off = op->c_off;
        if (op->to_host)
            rc = output_xfer(g, seg, op);
    }
    free(b);
    free(inputs);
    return rc ? tc_fail(g, NULL, "out of memory") : 0;
}

/* Weight w of op (int8, or bf16 little-endian) at at. */
static void put_weight(const tc_op *op, size_t w, uint8_t *at)
{
    at[0] = op->bf16 ? (uint8_t)op->wh[w] : (uint8_t)op->wq[w];
    if (op->bf16)
        at[1] = (uint8_t)(op->wh[w] >> 8);
}

/* A GEMM's weights in tile order (tile_at); bf16 weights are 2-byte little-endian elements. */
static void gemm_tiles(const tc_graph *g, const tc_op *op, uint8_t *image)
{
    for (uint32_t b = 0; b < op->batch; b++)
        for (uint32_t k = 0; k < op->k; k++)
            for (uint32_t n = 0; n < op->n; n++)
                put_weight(op, ((size_t)b * op->k + k) * op->n + n,
                           image + tile_at(g, op, b, k, n) * in_elt(op));
}

/* A convolution's kernel in the CONV2D tile order (firmware/firmware.h): tile (kt, nt) at
 * (nt * KT + kt) * N * N elements, column j output channel nt * N + j, its rows
 * tc_conv_tile_row's. bf16 elements are 2 bytes, little-endian. */
static void conv_tiles(const tc_graph *g, const tc_op *op, uint8_t *image)
{
    const uint32_t N = g->array_n, KT = (uint32_t)tpub_conv_k_tiles(&op->cv, N);
    for (uint32_t t = 0; t < KT; t++)
        for (uint32_t r = 0; r < N; r++) {
            const int64_t row = tc_conv_tile_row(&op->cv, N, t, r);
            for (uint32_t o = 0; row >= 0 && o < op->cv.cout; o++)
                put_weight(op, (size_t)row * op->n + o,
                           image +
                               (((uint64_t)(o / N) * KT + t) * N * N + r * N + o % N) * in_elt(op));
        }
}

/* Bytes of op's weights in the constant image (none for a run-time B). */
static uint64_t weight_bytes(const tc_graph *g, const tc_op *op)
{
    const uint32_t N = g->array_n;
    if (op->w >= 0)
        return 0;
    return in_elt(op) * (op->kind == TC_CONV
                             ? tpub_conv_k_tiles(&op->cv, N) * tiles(op->n, N) * N * N
                             : op->batch * tiled_elements(g, op));
}

/* Bytes of op's parameters: int32 bias, mult, shift per column; in bf16 the fp32 bias. */
static uint64_t param_bytes(const tc_op *op) { return (op->bf16 ? 4ull : 12ull) * op->n; }

/* FNV-1a of n bytes. */
static uint64_t fnv1a(const uint8_t *b, uint64_t n)
{
    uint64_t h = 14695981039346656037ull;
    for (uint64_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* A weight image already in the constant image: where, how long, its hash. */
typedef struct {
    uint64_t off, size, hash;
} wimage;

/* Weights and kernels in tile order, and the operations' parameters. Operations whose weight
 * images are byte for byte the same (a loop's dot in each unrolled iteration) share one: each
 * image is written at the end, then dropped for an earlier one of equal hash and bytes. */
static int const_image(tc_graph *g, tpub_package *p)
{
    uint64_t cap = 0;
    for (int i = 0; i < g->n_ops; i++)
        cap += align_up(weight_bytes(g, &g->ops[i])) + align_up(param_bytes(&g->ops[i]));
    wimage *seen = malloc(((size_t)g->n_ops + 1) * sizeof *seen);
    if (!seen || !(p->const_image = calloc(cap ? cap : 1, 1))) {
        free(seen);
        return tc_fail(g, NULL,
                       "out of memory for the package's constant image (%llu bytes of "
                       "weights and parameters)",
                       (unsigned long long)cap);
    }
    uint64_t at = 0;
    int n_seen = 0;
    for (int i = 0; i < g->n_ops; i++) {
        tc_op *op = &g->ops[i];
        if (op->kind == TC_CONV && op->w < 0)
            conv_tiles(g, op, p->const_image + at);
        else if (op->w < 0)
            gemm_tiles(g, op, p->const_image + at);
        const uint64_t size = weight_bytes(g, op);
        if (size) {
            const uint64_t hash = fnv1a(p->const_image + at, size);
            int j = 0;
            while (j < n_seen && (seen[j].hash != hash || seen[j].size != size ||
                                  memcmp(p->const_image + seen[j].off, p->const_image + at, size)))
                j++;
            if (j < n_seen) { /* the next image is written over it, on zeros as calloc's */
                memset(p->const_image + at, 0, size);
                op->b_off = seen[j].off;
            } else {
                seen[n_seen++] = (wimage){at, size, hash};
                op->b_off = at;
                at = align_up(at + size);
            }
        }
        if (!(op->bias >= 0 || op->out_int8))
            continue;
        op->p_off = at;
        for (uint32_t j = 0; op->bf16 && j < op->n; j++) {
            uint32_t v;
            memcpy(&v, &op->bias_f[j], 4);
            for (int byte = 0; byte < 4; byte++)
                p->const_image[op->p_off + 4ull * j + byte] = (uint8_t)(v >> (8 * byte));
        }
        for (uint32_t j = 0; !op->bf16 && j < op->n; j++) {
            int32_t v[3] = {op->bias_q ? op->bias_q[j] : 0, op->out_int8 ? op->mult[j] : 1,
                            op->out_int8 ? op->shift[j] : 0};
            for (int f = 0; f < 3; f++)
                for (int byte = 0; byte < 4; byte++)
                    p->const_image[op->p_off + 4ull * (f * op->n + j) + byte] =
                        (uint8_t)((uint32_t)v[f] >> (8 * byte));
        }
        at = align_up(at + param_bytes(op));
    }
    free(seen);
    p->const_bytes = at;
    uint8_t *shrunk = realloc(p->const_image, at ? at : 1);
    p->const_image = shrunk ? shrunk : p->const_image;
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

/* The fused nodes' names in chain order, comma-separated, into t. */
static void fused_names(const tc_graph *g, const tc_op *op, hlo_text *t)
{
    hlo_text_printf(t, "%s", "");
    for (int i = op->dot + 1; i <= op->out; i++)
        if (tc_in_affine(op, i) || i == op->relu || i == op->pool)
            hlo_text_printf(t, "%s%s", t->len ? "," : "", g->nodes[i].name);
}

/* The device's flags for op, the command's (docs/command-stream.md). */
static uint32_t op_flags(const tc_graph *g, const tc_op *op)
{
    uint32_t flags = op->kind == TC_GEMM && tc_gemm_b_tiled(g, op) ? TPUB_GEMM_B_TILED : 0;
    flags |= op->bias >= 0 ? TPUB_GEMM_BIAS : 0;
    flags |= op->relu >= 0 ? TPUB_GEMM_RELU : 0;
    flags |= op->out_int8 ? TPUB_GEMM_OUT_INT8 : 0;
    flags |= op->a_unsigned ? TPUB_GEMM_A_UNSIGNED : 0;
    flags |= op->pool >= 0 ? TPUB_CONV_POOL : 0;
    flags |= op->bf16 ? TPUB_GEMM_BF16 : 0;
    flags |= op->out_bf16 ? TPUB_GEMM_OUT_BF16 : 0;
    return flags;
}

/* The segments' operations: one command per GEMM of a batch (batch b's A, B and C follow batch
 * b - 1's; B in tile order, or a run-time B too large to gather row-major), one per
 * convolution. */
static int make_ops(tc_graph *g, tpub_package *p)
{
    for (int i = 0; i < g->n_ops; i++) {
        const tc_op *op = &g->ops[i];
        tpub_segment *s = &p->segments[op->seg];
        tpub_op *q = realloc(s->ops, ((size_t)s->n_ops + op->batch) * sizeof *q);
        if (!q)
            return tc_fail(g, NULL, "out of memory");
        s->ops = q;
        const uint32_t flags = op_flags(g, op);
        const bool params = flags & (TPUB_GEMM_BIAS | TPUB_GEMM_OUT_INT8);
        const uint64_t b_bytes =
            (flags & TPUB_GEMM_B_TILED ? tiled_elements(g, op) : (uint64_t)op->k * op->n) *
            in_elt(op);
        const uint64_t c_elt = out_elt(op);
        for (uint32_t b = 0; b < op->batch; b++) {
            hlo_text name = {0}, fused = {0};
            hlo_text_printf(&name, "%s", tc_layer_name(g, op->dot));
            if (op->batch > 1)
                hlo_text_printf(&name, "[%u]", b);
            fused_names(g, op, &fused);
            q = &s->ops[s->n_ops++];
            memset(q, 0, sizeof *q);
            if (op->kind == TC_CONV) {
                q->kind = TPUB_OP_CONV2D;
                q->conv = op->cv;
                q->conv.flags = flags;
                q->conv.in_off = op->a_off;
                q->conv.k_off = op->b_off;
                q->conv.out_off = op->c_off;
                q->conv.p_off = params ? op->p_off : 0;
                q->conv.name = name.s;
                q->conv.fused = fused.s;
            } else {
                const uint64_t rows = (uint64_t)b * op->m;
                q->kind = TPUB_OP_GEMM;
                q->gemm = (tpub_gemm){op->m,
                                      op->k,
                                      op->n,
                                      flags,
                                      op->a_off + rows * op->k * in_elt(op),
                                      op->b_off + b * b_bytes,
                                      op->c_off + rows * op->n * c_elt,
                                      params ? op->p_off : 0,
                                      op->k,
                                      op->n,
                                      name.s,
                                      fused.s};
            }
            if (name.oom || fused.oom || !name.s || !fused.s)
                return tc_fail(g, NULL, "out of memory");
        }
    }
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
    if (!tpub_sig_type(t))
        return tc_fail(g, nd->src,
                       "'%s' is %s; model inputs and outputs must be f32, bf16, f16, s8, u8, s32 "
                       "or s64",
                       nd->name, hlo_type_name(t));
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
    if (make_ops(g, p) || tc_host_program(g, p))
        return -1;
    return 0;
}

/* progs.c - test-program support (see progs.h). */
#include "tests/support/progs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/fp.h"
#include "tests/support/fp_values.h"

/* ------------------------------------------------------------ buffers -- */

void prog_push(tpu_prog *p, tpusim_insn insn)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        tpusim_insn *v = realloc(p->insns, cap * sizeof *v);
        if (!v) {
            fprintf(stderr, "prog_push: out of memory\n");
            abort();
        }
        p->insns = v;
        p->cap = cap;
    }
    p->insns[p->n++] = insn;
}

void prog_emit(tpu_prog *p, uint32_t op, uint32_t flags, uint32_t rows, uint32_t a, uint32_t b,
               uint32_t len, uint32_t stride)
{
    prog_push(p, tpusim_encode(op, flags, rows, a, b, len, stride));
}

void prog_free(tpu_prog *p)
{
    free(p->insns);
    p->insns = NULL;
    p->n = p->cap = 0;
}

/* ---------------------------------------------------------------- RNG -- */

uint64_t rng_next(tpu_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

uint32_t rng_below(tpu_rng *r, uint32_t n) { return (uint32_t)(((rng_next(r) >> 32) * n) >> 32); }

int64_t rng_range(tpu_rng *r, int64_t lo, int64_t hi)
{
    const uint64_t span = (uint64_t)hi - (uint64_t)lo + 1; /* 0: the whole 64-bit range */
    const uint64_t v = span ? rng_next(r) % span : rng_next(r);
    const uint64_t u = (uint64_t)lo + v;
    return u <= INT64_MAX ? (int64_t)u : (int64_t)(u - (uint64_t)INT64_MAX - 1) + INT64_MIN;
}

int rng_chance(tpu_rng *r, uint32_t percent) { return rng_below(r, 100) < percent; }

int8_t rng_int8(tpu_rng *r)
{
    static const int8_t extremes[] = {-128, -1, 0, 127};
    if (rng_chance(r, 25))
        return extremes[rng_below(r, 4)];
    return (int8_t)((int)rng_below(r, 256) - 128);
}

void rng_fill(tpu_rng *r, void *buf, size_t n)
{
    uint8_t *p = buf;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t v = rng_next(r);
        for (size_t k = 0; k < 8 && i + k < n; k++)
            p[i + k] = (uint8_t)(v >> 8 * k);
    }
}

void rng_fill_int8(tpu_rng *r, int8_t *buf, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = rng_int8(r);
}

/* --------------------------------------------------------------- GEMM -- */

static uint32_t min32(uint32_t a, uint32_t b) { return a < b ? a : b; }

static uint64_t align64(uint64_t x) { return (x + 63) & ~(uint64_t)63; }

uint64_t gemm_layout(gemm_desc *d, uint32_t base)
{
    const uint64_t a = align64(base);
    const uint64_t b = align64(a + (uint64_t)d->m * d->k);
    const uint64_t c = align64(b + (uint64_t)d->k * d->n);
    const uint64_t params = align64(c + (uint64_t)d->m * d->n * (d->out_int8 ? 1 : 4));
    d->a = (uint32_t)a;
    d->b = (uint32_t)b;
    d->c = (uint32_t)c;
    d->params = (uint32_t)params;
    return params + 12 * (uint64_t)d->n;
}

int gemm_program(tpu_prog *p, const tpusim_hwcfg *cfg, const gemm_desc *d)
{
    const uint32_t N = cfg->array_n;
    const uint64_t csize = d->out_int8 ? 1 : 4;
    const int params = d->bias || d->out_int8;
    if (!d->m || !d->k || !d->n || !N || !cfg->ub_rows || !cfg->acc_rows || !cfg->wfifo_tiles)
        return -1;
    if ((uint64_t)d->a + (uint64_t)d->m * d->k > 1ull << 32 ||
        (uint64_t)d->b + (uint64_t)d->k * d->n > 1ull << 32 ||
        (uint64_t)d->c + (uint64_t)d->m * d->n * csize > 1ull << 32 ||
        (params && (uint64_t)d->params + 12ull * d->n > 1ull << 32))
        return -1;
    const uint32_t chunk = min32(min32(cfg->ub_rows, cfg->acc_rows), 0xffff);
    const uint32_t out_flags = (d->bias ? TPU_F_BIAS : 0) | (d->relu ? TPU_F_RELU : 0);

    for (uint32_t j0 = 0; j0 < d->n; j0 += N) {
        const uint32_t nw = min32(N, d->n - j0);
        if (params)
            prog_emit(p, TPU_OP_RD_PARAMS, 0, 3, d->params + 4 * j0, 0, 4 * nw, 4 * d->n);
        for (uint32_t m0 = 0; m0 < d->m; m0 += chunk) {
            const uint32_t mc = min32(chunk, d->m - m0);
            for (uint32_t k0 = 0; k0 < d->k; k0 += N) {
                const uint32_t kw = min32(N, d->k - k0);
                prog_emit(p, TPU_OP_RD_HOST, 0, mc, d->a + m0 * d->k + k0, 0, kw, d->k);
                prog_emit(p, TPU_OP_RD_WEIGHT, 0, kw, d->b + k0 * d->n + j0, 0, nw, d->n);
                prog_emit(p, TPU_OP_MATMUL,
                          TPU_F_LOAD | (k0 ? TPU_F_ACC : 0) | (d->unsigned_a ? TPU_F_UNSIGNED : 0),
                          mc, 0, 0, 0, 0);
            }
            if (d->out_int8) {
                prog_emit(p, TPU_OP_ACTIVATE, out_flags, mc, 0, 0, 0, 0);
                prog_emit(p, TPU_OP_WR_HOST, 0, mc, d->c + m0 * d->n + j0, 0, nw, d->n);
            } else {
                prog_emit(p, TPU_OP_WR_HOST, TPU_F_SRC_ACC | out_flags, mc,
                          d->c + 4 * (m0 * d->n + j0), 0, 4 * nw, 4 * d->n);
            }
        }
    }
    prog_emit(p, TPU_OP_HALT, 0, 0, 0, 0, 0, 0);
    return 0;
}

static int32_t wrap32(int64_t v)
{
    const uint32_t u = (uint32_t)(uint64_t)v;
    return u <= INT32_MAX ? (int32_t)u : (int32_t)(u - 0x80000000u) + INT32_MIN;
}

/* docs/isa.md requantization, written as a floor division (independent of the golden model's
 * shift) with the sum wrapped to 64 bits first, as the formula specifies. */
static int8_t ref_requant(int32_t x, int32_t mult, int32_t shift)
{
    const unsigned s = (unsigned)shift & 63u;
    const int64_t p = (int64_t)x * mult;
    int64_t q = p;
    if (s) {
        const uint64_t half = (uint64_t)1 << (s - 1);
        const uint64_t u = (uint64_t)p + (p < 0 ? half - 1 : half);
        const int64_t v =
            u <= INT64_MAX ? (int64_t)u : (int64_t)(u - (uint64_t)INT64_MAX - 1) + INT64_MIN;
        if (s == 63) {
            q = v < 0 ? -1 : 0;
        } else {
            const int64_t d = (int64_t)1 << s;
            q = v / d - (v % d < 0);
        }
    }
    return (int8_t)(q < -128 ? -128 : q > 127 ? 127 : q);
}

void gemm_reference(const gemm_desc *d, const void *a, const int8_t *b, const int32_t *params,
                    void *c)
{
    const uint8_t *au = a;
    const int8_t *as = a;
    for (uint32_t i = 0; i < d->m; i++) {
        for (uint32_t j = 0; j < d->n; j++) {
            int64_t sum = 0;
            for (uint32_t k = 0; k < d->k; k++) {
                const size_t ai = (size_t)i * d->k + k;
                sum += (int64_t)(d->unsigned_a ? au[ai] : as[ai]) * b[(size_t)k * d->n + j];
            }
            int32_t x = wrap32(sum + (d->bias ? params[j] : 0));
            if (d->relu && x < 0)
                x = 0;
            const size_t ci = (size_t)i * d->n + j;
            if (d->out_int8)
                ((int8_t *)c)[ci] = ref_requant(x, params[d->n + j], params[2 * d->n + j]);
            else
                ((int32_t *)c)[ci] = x;
        }
    }
}

static uint64_t tiles(uint32_t x, uint32_t tile) { return (x + (uint64_t)tile - 1) / tile; }

uint64_t gemm_tiled_b_bytes(uint32_t k, uint32_t n, uint32_t tile)
{
    return tiles(k, tile) * tiles(n, tile) * tile * tile;
}

void gemm_tile_b(const int8_t *b, uint32_t k, uint32_t n, uint32_t tile, int8_t *out)
{
    const uint64_t kt_count = tiles(k, tile);
    memset(out, 0, (size_t)gemm_tiled_b_bytes(k, n, tile));
    for (uint32_t r = 0; r < k; r++)
        for (uint32_t c = 0; c < n; c++) {
            const uint64_t t = (uint64_t)(c / tile) * kt_count + r / tile;
            out[(t * tile + r % tile) * tile + c % tile] = b[(size_t)r * n + c];
        }
}

/* ----------------------------------------------------- bf16 GEMM -- */

static uint32_t k_padded(uint32_t k, uint32_t n) { return (k + n - 1) / n * n; }

static uint32_t get_le(const uint8_t *p, unsigned bytes)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < bytes; i++)
        v |= (uint32_t)p[i] << 8 * i;
    return v;
}

uint64_t bf16_gemm_layout(bf16_gemm_desc *d, uint32_t n_arr, uint32_t base)
{
    d->a = base;
    d->b = d->a + 2 * d->m * k_padded(d->k, n_arr);
    d->bias = d->b + 2 * d->k * d->n;
    d->c = (uint32_t)align64(d->bias + 4ull * d->n);
    return (uint64_t)d->c + 4ull * d->m * d->n;
}

void bf16_gemm_program(tpu_prog *p, uint32_t n_arr, const bf16_gemm_desc *d, uint32_t ub,
                       uint32_t acc)
{
    const uint32_t n = n_arr, kp = k_padded(d->k, n), tiles = kp / n;
    const uint32_t epi = TPU_F_BF16 | (d->bias_on ? TPU_F_BIAS : 0) | (d->relu ? TPU_F_RELU : 0);
    for (uint32_t j0 = 0; j0 < d->n; j0 += n) {
        const uint32_t w = min32(n, d->n - j0);
        if (d->bias_on) /* bias, mult and shift: the same row (mult and shift are not used) */
            prog_emit(p, TPU_OP_RD_PARAMS, 0, 3, d->bias + 4 * j0, 0, 4 * w, 0);
        for (uint32_t t = 0; t < tiles; t++) {
            const uint32_t at = ub + 2 * d->m * t;
            prog_emit(p, TPU_OP_RD_HOST, 0, d->m, d->a + 2 * t * n, at, 2 * n, 2 * kp);
            prog_emit(p, TPU_OP_RD_WEIGHT, TPU_F_BF16, min32(n, d->k - t * n),
                      d->b + 2 * (t * n * d->n + j0), 0, 2 * w, 2 * d->n);
            prog_emit(p, TPU_OP_MATMUL, TPU_F_BF16 | TPU_F_LOAD | (t ? TPU_F_ACC : 0), d->m, at,
                      acc, 0, 2);
        }
        if (d->out_bf16) {
            const uint32_t s = (2 * w + n - 1) / n, out = ub + 2 * d->m * tiles;
            prog_emit(p, TPU_OP_ACTIVATE, epi, d->m, out, acc, s, 0);
            prog_emit(p, TPU_OP_WR_HOST, 0, d->m, d->c + 2 * j0, out, 2 * w, 2 * d->n);
        } else {
            prog_emit(p, TPU_OP_WR_HOST, TPU_F_SRC_ACC | epi, d->m, d->c + 4 * j0, acc, 4 * w,
                      4 * d->n);
        }
    }
}

void bf16_gemm_reference(const bf16_gemm_desc *d, uint32_t n_arr, const uint8_t *mem, uint32_t *c)
{
    const uint32_t n = n_arr, kp = k_padded(d->k, n);
    for (uint32_t i = 0; i < d->m; i++)
        for (uint32_t j = 0; j < d->n; j++) {
            uint32_t acc = 0;
            for (uint32_t t = 0; t * n < d->k; t++) {
                uint32_t s = 0;
                for (uint32_t r = 0; r < n; r++) {
                    const uint32_t kk = t * n + r;
                    const uint16_t x =
                        kk < d->k ? (uint16_t)get_le(mem + d->a + 2 * ((size_t)i * kp + kk), 2) : 0;
                    const uint16_t w =
                        kk < d->k ? (uint16_t)get_le(mem + d->b + 2 * ((size_t)kk * d->n + j), 2)
                                  : 0;
                    s = tpusim_fp32_add(s, tpusim_bf16_mul(x, w));
                }
                acc = t ? tpusim_fp32_add(acc, s) : s;
            }
            if (d->bias_on)
                acc = tpusim_fp32_add(acc, get_le(mem + d->bias + 4 * j, 4));
            if (d->relu)
                acc = tpusim_fp32_relu(acc);
            c[(size_t)i * d->n + j] = d->out_bf16 ? tpusim_fp32_to_bf16(acc) : acc;
        }
}

/* ------------------------------------------------------------- RD_ACC -- */

static void put_le32(uint8_t *p, uint32_t v)
{
    for (unsigned k = 0; k < 4; k++)
        p[k] = (uint8_t)(v >> 8 * k);
}

/* X, Y (R rows of 4N bytes each), the tile (N x N), two activation rows (N each), then the
 * output: 3R + 2 rows of 4N bytes. */
uint64_t rdacc_bytes(uint32_t n_arr)
{
    return (uint64_t)(2 * RDACC_R + 3 * RDACC_R + 2) * 4 * n_arr + (uint64_t)(n_arr + 2) * n_arr;
}

uint64_t rdacc_program(tpu_prog *p, uint32_t n_arr, uint8_t *mem, uint32_t base, uint32_t acc,
                       tpu_rng *r)
{
    const uint32_t n = n_arr, row = 4 * n, R = RDACC_R;
    const uint32_t x = base, y = x + R * row, w = y + R * row, act = w + n * n, out = act + 2 * n;
    /* Every edge value in X (R >= 32 / N), each met by another edge or a value near it. */
    for (uint32_t i = 0; i < R * n; i++) {
        const uint32_t v = i < fp32_edge_count ? fp32_edges[i] : rng_fp32(r);
        put_le32(mem + x + 4 * i, v);
        put_le32(mem + y + 4 * i,
                 i % 2 ? rng_fp32_near(r, v) : fp32_edges[(5 * i + 3) % fp32_edge_count]);
    }
    rng_fill_int8(r, (int8_t *)mem + w, (size_t)(n + 2) * n);

    const uint32_t F = TPU_F_BF16, A = TPU_F_ACC;
    /* int32, then fp32: rows acc .. + R, acc + R .. + R */
    prog_emit(p, TPU_OP_RD_ACC, 0, R, x, acc, row, row);
    prog_emit(p, TPU_OP_RD_ACC, A, R, y, acc, row, row);
    prog_emit(p, TPU_OP_RD_ACC, F, R, x, acc + R, row, row);
    prog_emit(p, TPU_OP_RD_ACC, A | F, R, y, acc + R, row, row);
    /* Half the columns, Y's first row added to every row (stride 0), then half the columns of
     * Y's others: rows acc + 2R .. */
    prog_emit(p, TPU_OP_RD_ACC, F, R, x, acc + 2 * R, 2 * n, row);
    prog_emit(p, TPU_OP_RD_ACC, A | F, R, y, acc + 2 * R, row, 0);
    prog_emit(p, TPU_OP_RD_ACC, A | F, R - 1, y + row, acc + 2 * R, 2 * n, row);
    /* The ACC write port: an RD_ACC behind a MATMUL on its rows, a MATMUL behind the RD_ACC. */
    prog_emit(p, TPU_OP_RD_HOST, 0, 2, act, 0, n, n);
    prog_emit(p, TPU_OP_RD_WEIGHT, 0, n, w, 0, n, n);
    prog_emit(p, TPU_OP_MATMUL, TPU_F_LOAD, 2, 0, acc + 3 * R, 0, 0);
    prog_emit(p, TPU_OP_RD_ACC, A, 2, y, acc + 3 * R, row, row);
    prog_emit(p, TPU_OP_MATMUL, A, 2, 0, acc + 3 * R, 0, 0);
    prog_emit(p, TPU_OP_WR_HOST, TPU_F_SRC_ACC, 3 * R + 2, out, acc, row, row);
    return out + (uint64_t)(3 * R + 2) * row;
}

/* ----------------------------------------------------- random programs -- */

/* Percent of the RD_WEIGHTs, MATMULs, ACTIVATEs and WR_HOST.SRC_ACCs in bf16 (ISA 1.3). */
#define BF16_PCT 30

typedef struct {
    tpu_prog *p;
    tpu_rng *r;
    const tpusim_hwcfg *cfg;
    uint32_t n;         /* array size */
    uint32_t ubw, accw; /* UB / ACC rows the operands lie in */
    uint32_t memw;      /* memory bytes the operands lie in */
    uint32_t fifo;      /* tiles queued: RD_WEIGHTs minus MATMUL.LOADs */
} gen;

/* 1..max, mostly at most N or 2N rows. */
static uint32_t pick_rows(gen *g, uint32_t max)
{
    uint32_t lim = rng_chance(g->r, 60) ? g->n : rng_chance(g->r, 50) ? 2 * g->n : max;
    return 1 + rng_below(g->r, min32(lim, max));
}

static uint32_t pick_start(gen *g, uint32_t window, uint32_t rows)
{
    return rng_below(g->r, window - rows + 1);
}

/* The rows f's accesses of a UB or ACC space span from their first: the length of the range
 * covering them, by the footprints (docs/isa.md "Footprints"). */
static uint64_t span(uint32_t n, const tpusim_fields *f, int space)
{
    tpusim_access acc[TPU_FOOTPRINT_MAX];
    uint64_t most = 0;
    for (int i = 0, k = tpusim_footprint(f, n, acc); i < k; i++)
        if (acc[i].space == space && tpusim_access_end(&acc[i]) - acc[i].first > most)
            most = tpusim_access_end(&acc[i]) - acc[i].first;
    return most;
}

static uint64_t ub_span(uint32_t n, const tpusim_fields *f) { return span(n, f, TPU_SPACE_UB); }

/* A first row for a range of span rows: inside the window of w rows when it fits (so that
 * instructions overlap), else anywhere in the total rows. */
static uint32_t pick_at(gen *g, uint32_t w, uint32_t total, uint64_t span)
{
    return span <= w ? rng_below(g->r, w - (uint32_t)span + 1)
                     : rng_below(g->r, total - (uint32_t)span + 1);
}

/* A random pooling window: mostly small, sometimes the fields' extremes. */
static uint32_t pick_window(gen *g)
{
    tpu_rng *r = g->r;
    const uint32_t ph = rng_chance(r, 10) ? 15 : 1 + rng_below(r, 4);
    const uint32_t pw = rng_chance(r, 10) ? 15 : 1 + rng_below(r, 4);
    const uint32_t step = rng_chance(r, 10) ? 1 + rng_below(r, 255) : 1 + rng_below(r, 4);
    const uint32_t pitch = rng_chance(r, 20)   ? 0
                           : rng_chance(r, 10) ? rng_below(r, 4096)
                                               : rng_below(r, 2 * g->n + 1);
    return TPU_POOL_PUT(PH, ph) | TPU_POOL_PUT(PW, pw) | TPU_POOL_PUT(STEP, step) |
           TPU_POOL_PUT(PITCH, pitch);
}

/* A memory range of rows x len bytes inside the window: sets f->a and f->stride. */
static void pick_mem(gen *g, tpusim_fields *f)
{
    uint32_t s;
    switch (rng_below(g->r, 5)) {
    case 0: s = 0; break;
    case 1: s = f->len; break;
    case 2: s = 4 * g->n; break;
    case 3: s = rng_below(g->r, 2 * f->len + 1); break; /* rows may overlap each other */
    default: s = rng_below(g->r, g->memw / f->rows + 1); break;
    }
    if (f->rows > 1 && (uint64_t)(f->rows - 1) * s + f->len > g->memw)
        s = (g->memw - f->len) / (f->rows - 1);
    f->stride = s;
    f->a = rng_below(g->r, g->memw - ((f->rows - 1) * s + f->len) + 1);
}

/* A valid instruction of opcode op (MATMUL pops a tile if load). Does not track the FIFO. */
static tpusim_fields make_valid(gen *g, uint32_t op, int load)
{
    tpusim_fields f = {.op = op};
    tpu_rng *r = g->r;
    switch (op) {
    case TPU_OP_RD_HOST: /* rows of up to N bytes, or wide ones of up to 4N */
        f.len = 1 + rng_below(r, rng_chance(r, 50) ? g->n : 4 * g->n);
        f.rows = pick_rows(g, g->ubw / ((f.len + g->n - 1) / g->n));
        f.b = pick_start(g, g->ubw, (uint32_t)ub_span(g->n, &f));
        pick_mem(g, &f);
        break;
    case TPU_OP_RD_WEIGHT: /* BF16: rows of up to 2N bytes */
        f.flags = rng_chance(r, BF16_PCT) ? TPU_F_BF16 : 0;
        f.rows = 1 + rng_below(r, g->n);
        f.len = 1 + rng_below(r, f.flags ? 2 * g->n : g->n);
        pick_mem(g, &f);
        break;
    case TPU_OP_RD_PARAMS:
        f.rows = 3;
        f.len = 4 * (1 + rng_below(r, g->n));
        pick_mem(g, &f);
        break;
    case TPU_OP_MATMUL:
        /* UB row steps 0 (consecutive) and 1 .. N mostly, a few large; rows cut to fit. BF16
         * (row pairs): often a step of 2, pairs side by side. */
        f.flags = rng_chance(r, BF16_PCT) ? TPU_F_BF16 : 0;
        f.stride = f.flags && rng_chance(r, 50) ? 2
                   : rng_chance(r, 50)          ? 0
                   : rng_chance(r, 80)          ? 1 + rng_below(r, g->n)
                                                : 1 + rng_below(r, 255);
        f.rows = pick_rows(g, min32(g->ubw, g->accw));
        while (f.rows > 1 && ub_span(g->n, &f) > g->cfg->ub_rows)
            f.rows /= 2;
        f.a = pick_at(g, g->ubw, g->cfg->ub_rows, ub_span(g->n, &f));
        f.b = pick_start(g, g->accw, f.rows);
        f.flags |= (rng_chance(r, 50) ? TPU_F_ACC : 0) |
                   (!f.flags && rng_chance(r, 25) ? TPU_F_UNSIGNED : 0) | (load ? TPU_F_LOAD : 0);
        break;
    case TPU_OP_ACTIVATE:
        f.flags = (rng_chance(r, 50) ? TPU_F_BIAS : 0) | (rng_chance(r, 50) ? TPU_F_RELU : 0) |
                  (rng_chance(r, 40) ? TPU_F_POOL : 0) | (rng_chance(r, BF16_PCT) ? TPU_F_BF16 : 0);
        if (f.flags & TPU_F_POOL)
            f.stride = pick_window(g);
        f.rows = pick_rows(g, min32(g->ubw, g->accw));
        while (span(g->n, &f, TPU_SPACE_ACC) > g->cfg->acc_rows) {
            if (f.rows > 1)
                f.rows /= 2;
            else
                f.stride = pick_window(g);
        }
        /* Output rows consecutive mostly (BF16: pairs side by side, a step of 2), else a UB row
         * step of 2 .. 4 or any up to 255. */
        f.len = rng_chance(r, 60)   ? (f.flags & TPU_F_BF16 ? 2 : 0)
                : rng_chance(r, 80) ? 2 + rng_below(r, 3)
                                    : rng_below(r, 256);
        while (f.rows > 1 && ub_span(g->n, &f) > g->cfg->ub_rows)
            f.rows /= 2;
        f.a = pick_at(g, g->ubw, g->cfg->ub_rows, ub_span(g->n, &f));
        f.b = pick_at(g, g->accw, g->cfg->acc_rows, span(g->n, &f, TPU_SPACE_ACC));
        break;
    case TPU_OP_ZERO:
        f.rows = pick_rows(g, g->ubw);
        f.b = pick_start(g, g->ubw, f.rows);
        break;
    case TPU_OP_RD_ACC: /* int32 or fp32 (memory holds edge values), written or added */
        f.flags = (rng_chance(r, 50) ? TPU_F_ACC : 0) | (rng_chance(r, 50) ? TPU_F_BF16 : 0);
        f.rows = pick_rows(g, g->accw);
        f.b = pick_start(g, g->accw, f.rows);
        f.len = 4 * (1 + rng_below(r, g->n));
        pick_mem(g, &f);
        break;
    case TPU_OP_WR_HOST:
        if (rng_chance(r, 50)) {
            f.flags = TPU_F_SRC_ACC | (rng_chance(r, 50) ? TPU_F_BIAS : 0) |
                      (rng_chance(r, 50) ? TPU_F_RELU : 0) |
                      (rng_chance(r, BF16_PCT) ? TPU_F_BF16 : 0);
            f.rows = pick_rows(g, g->accw);
            f.b = pick_start(g, g->accw, f.rows);
            f.len = 4 * (1 + rng_below(r, g->n));
        } else { /* rows of up to N bytes, or wide ones of up to 4N */
            f.len = 1 + rng_below(r, rng_chance(r, 50) ? g->n : 4 * g->n);
            f.rows = pick_rows(g, g->ubw / ((f.len + g->n - 1) / g->n));
            f.b = pick_start(g, g->ubw, (uint32_t)ub_span(g->n, &f));
        }
        pick_mem(g, &f);
        break;
    default: /* SYNC, HALT */ break;
    }
    return f;
}

static long emit(gen *g, const tpusim_fields *f)
{
    prog_emit(g->p, f->op, f->flags, f->rows, f->a, f->b, f->len, f->stride);
    if (f->op == TPU_OP_RD_WEIGHT)
        g->fifo++;
    if (f->op == TPU_OP_MATMUL && (f->flags & TPU_F_LOAD))
        g->fifo--;
    return (long)g->p->n - 1;
}

static void emit_random(gen *g)
{
    /* Opcodes with percent weights. */
    static const struct {
        uint32_t op, weight;
    } mix[] = {{TPU_OP_RD_HOST, 14}, {TPU_OP_RD_WEIGHT, 13}, {TPU_OP_RD_PARAMS, 5},
               {TPU_OP_MATMUL, 23},  {TPU_OP_ACTIVATE, 14},  {TPU_OP_WR_HOST, 14},
               {TPU_OP_SYNC, 4},     {TPU_OP_ZERO, 7},       {TPU_OP_RD_ACC, 6}};
    uint32_t x = rng_below(g->r, 100), k = 0;
    while (x >= mix[k].weight)
        x -= mix[k++].weight;
    uint32_t op = mix[k].op;
    if (op == TPU_OP_RD_WEIGHT && g->fifo == g->cfg->wfifo_tiles)
        op = TPU_OP_MATMUL; /* full: pop instead */
    int load = g->fifo && (g->fifo == g->cfg->wfifo_tiles || rng_chance(g->r, 50));
    tpusim_fields f = make_valid(g, op, load);
    emit(g, &f);
}

/* Makes f fail BAD_OPERAND (and nothing earlier) by one random change. */
static void break_operand(gen *g, tpusim_fields *f)
{
    const uint32_t n = g->n;
    for (;;) {
        switch (rng_below(g->r, 7)) {
        case 0: /* MATMUL: UNSIGNED with BF16 */
            if (f->op == TPU_OP_MATMUL) {
                f->flags |= TPU_F_UNSIGNED | TPU_F_BF16;
                return;
            }
            break;
        case 1: { /* a flag the opcode (or WR_HOST's source) does not take */
            uint32_t ok =
                f->op == TPU_OP_RD_WEIGHT  ? TPU_F_BF16
                : f->op == TPU_OP_MATMUL   ? TPU_F_ACC | TPU_F_LOAD | TPU_F_UNSIGNED | TPU_F_BF16
                : f->op == TPU_OP_ACTIVATE ? TPU_F_BIAS | TPU_F_RELU | TPU_F_POOL | TPU_F_BF16
                : f->op == TPU_OP_RD_ACC   ? TPU_F_ACC | TPU_F_BF16
                : f->op == TPU_OP_WR_HOST && (f->flags & TPU_F_SRC_ACC)
                    ? TPU_F_SRC_ACC | TPU_F_BIAS | TPU_F_RELU | TPU_F_BF16
                    : 0;
            const uint32_t bad = TPU_F_ALL & ~ok & ~(f->op == TPU_OP_WR_HOST ? TPU_F_SRC_ACC : 0u);
            uint32_t bit;
            do
                bit = 1u << rng_below(g->r, 8);
            while (!(bad & bit));
            f->flags |= bit;
            return;
        }
        case 2: /* an unused field set */
            switch (f->op) {
            case TPU_OP_RD_WEIGHT:
            case TPU_OP_RD_PARAMS: f->b = 1 + rng_below(g->r, 0xfffff); return;
            case TPU_OP_MATMUL: f->len = 1 + rng_below(g->r, 4095); return;
            case TPU_OP_ACTIVATE: /* the stride holds POOL's window; len, a UB step, is 8-bit */
                if (!(f->flags & TPU_F_POOL) && rng_chance(g->r, 50))
                    f->stride = 1 + rng_below(g->r, 0xffffffffu);
                else
                    f->len = 256 + rng_below(g->r, 3840);
                return;
            case TPU_OP_ZERO:
                switch (rng_below(g->r, 3)) {
                case 0: f->a = 1 + rng_below(g->r, 0xffffffffu); break;
                case 1: f->len = 1 + rng_below(g->r, 4095); break;
                default: f->stride = 1 + rng_below(g->r, 0xffffffffu); break;
                }
                return;
            case TPU_OP_SYNC:
            case TPU_OP_HALT:
                switch (rng_below(g->r, 5)) {
                case 0: f->rows = 1 + rng_below(g->r, 0xffff); break;
                case 1: f->a = 1 + rng_below(g->r, 0xffffffffu); break;
                case 2: f->b = 1 + rng_below(g->r, 0xfffff); break;
                case 3: f->len = 1 + rng_below(g->r, 4095); break;
                default: f->stride = 1 + rng_below(g->r, 0xffffffffu); break;
                }
                return;
            default: /* RD_HOST, WR_HOST, RD_ACC use every field */ break;
            }
            break;
        case 3: /* rows 0 */
            if (f->op != TPU_OP_SYNC && f->op != TPU_OP_HALT) {
                f->rows = 0;
                return;
            }
            break;
        case 4: /* rows above the opcode's range */
            if (f->op == TPU_OP_RD_WEIGHT && n < 0xffff) {
                f->rows = n + 1 + rng_below(g->r, 0xffff - n);
                return;
            }
            if (f->op == TPU_OP_RD_PARAMS) {
                f->rows =
                    rng_chance(g->r, 50) ? 1 + rng_below(g->r, 2) : 4 + rng_below(g->r, 0xfffc);
                return;
            }
            break;
        case 5: /* MATMUL's stride above 255; a POOL window with PH, PW or STEP zero */
            if (f->op == TPU_OP_MATMUL) {
                f->stride = rng_chance(g->r, 50) ? 256 : 256 + rng_below(g->r, 0xffffff00u);
                return;
            }
            if (f->op == TPU_OP_ACTIVATE) {
                if (!(f->flags & TPU_F_POOL)) {
                    f->flags |= TPU_F_POOL;
                    f->stride = pick_window(g);
                }
                switch (rng_below(g->r, 3)) {
                case 0: f->stride &= ~TPU_POOL_PUT(PH, TPU_POOL_PH_MASK); break;
                case 1: f->stride &= ~TPU_POOL_PUT(PW, TPU_POOL_PW_MASK); break;
                default: f->stride &= ~TPU_POOL_PUT(STEP, TPU_POOL_STEP_MASK); break;
                }
                return;
            }
            break;
        default: { /* len out of range */
            const int words = f->op == TPU_OP_RD_PARAMS || f->op == TPU_OP_RD_ACC ||
                              (f->op == TPU_OP_WR_HOST && (f->flags & TPU_F_SRC_ACC));
            const uint32_t max =
                f->op == TPU_OP_RD_WEIGHT ? (f->flags & TPU_F_BF16 ? 2 * n : n) : 4 * n;
            if (f->op != TPU_OP_RD_HOST && f->op != TPU_OP_RD_WEIGHT && f->op != TPU_OP_RD_PARAMS &&
                f->op != TPU_OP_WR_HOST && f->op != TPU_OP_RD_ACC)
                break;
            switch (rng_below(g->r, 3)) {
            case 0: f->len = 0; return;
            case 1:
                if (max < 4095) {
                    f->len = max + 1 + rng_below(g->r, 4095 - max);
                    return;
                }
                break;
            default:
                if (words) {
                    f->len = 4 * rng_below(g->r, n) + 1 + rng_below(g->r, 3);
                    return;
                }
                break;
            }
            break;
        }
        }
    }
}

/* An instruction that raises exactly code (not OK or MEM_FAULT) at the current FIFO count. */
static long emit_bad(gen *g, int code)
{
    static const uint32_t ub_ops[] = {TPU_OP_RD_HOST, TPU_OP_MATMUL, TPU_OP_ACTIVATE,
                                      TPU_OP_WR_HOST, TPU_OP_ZERO};
    static const uint32_t acc_ops[] = {TPU_OP_MATMUL, TPU_OP_ACTIVATE, TPU_OP_WR_HOST,
                                       TPU_OP_RD_ACC};
    static const uint32_t mem_ops[] = {TPU_OP_RD_HOST, TPU_OP_RD_WEIGHT, TPU_OP_RD_PARAMS,
                                       TPU_OP_WR_HOST, TPU_OP_RD_ACC};
    const tpusim_hwcfg *cfg = g->cfg;
    tpu_rng *r = g->r;
    tpusim_fields f;
    switch (code) {
    case TPU_FAULT_ILLEGAL_OPCODE: {
        const uint32_t op =
            rng_chance(r, 30) ? 0 : TPU_OP_RD_ACC + 1 + rng_below(r, 0xff - TPU_OP_RD_ACC);
        prog_emit(g->p, op, rng_below(r, 256), rng_below(r, 0x10000), (uint32_t)rng_next(r),
                  rng_below(r, 0x100000), rng_below(r, 4096), (uint32_t)rng_next(r));
        return (long)g->p->n - 1;
    }
    case TPU_FAULT_BAD_OPERAND:
        f = make_valid(g, TPU_OP_RD_HOST + rng_below(r, TPU_OP_RD_ACC), rng_chance(r, 50));
        break_operand(g, &f);
        break;
    case TPU_FAULT_UB_RANGE: /* past the end by 1..span rows, or a MATMUL whose stride alone does */
        do
            f = make_valid(g, ub_ops[rng_below(r, 5)], 0);
        while (f.flags & TPU_F_SRC_ACC);
        if (f.op == TPU_OP_MATMUL && rng_chance(r, 20)) {
            f.stride = 255;
            f.rows = (uint32_t)(cfg->ub_rows / 255 + 2 + rng_below(r, 100));
            f.a = rng_below(r, cfg->ub_rows);
        } else if (f.op == TPU_OP_MATMUL || f.op == TPU_OP_ACTIVATE) {
            f.a = (uint32_t)(cfg->ub_rows - ub_span(g->n, &f) + 1 +
                             rng_below(r, (uint32_t)ub_span(g->n, &f)));
        } else {
            const uint32_t span = (uint32_t)ub_span(g->n, &f);
            f.b = cfg->ub_rows - span + 1 + rng_below(r, span);
        }
        break;
    case TPU_FAULT_ACC_RANGE: /* past the end by 1..span rows; or a window too tall for ACC */
        do
            f = make_valid(g, acc_ops[rng_below(r, 4)], 0);
        while (f.op == TPU_OP_WR_HOST && !(f.flags & TPU_F_SRC_ACC));
        if (f.op == TPU_OP_ACTIVATE && cfg->acc_rows / 14 + 1001 <= TPU_POOL_PITCH_MASK &&
            rng_chance(r, 30)) {
            f.flags |= TPU_F_POOL;
            f.stride = TPU_POOL_PUT(PH, 15) | TPU_POOL_PUT(PW, 1 + rng_below(r, 15)) |
                       TPU_POOL_PUT(STEP, 1 + rng_below(r, 255)) |
                       TPU_POOL_PUT(PITCH, cfg->acc_rows / 14 + 1 + rng_below(r, 1000));
            f.b = rng_below(r, cfg->acc_rows);
        } else {
            f.b = (uint32_t)(cfg->acc_rows - span(g->n, &f, TPU_SPACE_ACC) + 1 +
                             rng_below(r, (uint32_t)span(g->n, &f, TPU_SPACE_ACC)));
        }
        break;
    case TPU_FAULT_MEM_RANGE:
        f = make_valid(g, mem_ops[rng_below(r, 5)], 0);
        if (f.rows > 1 && rng_chance(r, 50)) {
            /* 64-bit footprint: a 32-bit sum would wrap back into range */
            f.stride = 0xffffffffu - rng_below(r, 16);
        } else {
            const uint64_t span = (uint64_t)(f.rows - 1) * f.stride + f.len;
            const uint64_t a = cfg->mem_size - span + 1 + rng_below(r, 4);
            f.a = a <= 0xffffffffu ? (uint32_t)a : 0xffffffffu;
        }
        break;
    case TPU_FAULT_WFIFO_EMPTY:
        while (g->fifo) {
            f = make_valid(g, TPU_OP_MATMUL, 1);
            emit(g, &f);
        }
        f = make_valid(g, TPU_OP_MATMUL, 1);
        break;
    case TPU_FAULT_WFIFO_FULL:
        while (g->fifo < cfg->wfifo_tiles) {
            f = make_valid(g, TPU_OP_RD_WEIGHT, 0);
            emit(g, &f);
        }
        f = make_valid(g, TPU_OP_RD_WEIGHT, 0);
        break;
    default: fprintf(stderr, "random_program: cannot inject error %d\n", code); abort();
    }
    return emit(g, &f);
}

long random_program(tpu_prog *p, tpu_rng *r, const tpusim_hwcfg *cfg, size_t n_insns, int inject)
{
    gen g = {.p = p, .r = r, .cfg = cfg, .n = cfg->array_n};
    g.ubw = min32(cfg->ub_rows, 4 * g.n);
    g.accw = min32(cfg->acc_rows, 4 * g.n);
    g.memw = (uint32_t)(cfg->mem_size < 2048 + 64ull * g.n ? cfg->mem_size : 2048 + 64ull * g.n);
    const size_t at = inject ? rng_below(r, (uint32_t)n_insns + 1) : SIZE_MAX;
    long bad = -1;
    for (size_t i = 0; i <= n_insns; i++) {
        if (i == at)
            bad = emit_bad(&g, inject);
        if (i < n_insns)
            emit_random(&g);
    }
    prog_emit(p, TPU_OP_HALT, 0, 0, 0, 0, 0, 0);
    return bad;
}

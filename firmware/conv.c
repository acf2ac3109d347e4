/* conv.c - the CONV2D command: validation and schedule (firmware.h, docs/command-stream.md).
 *
 * Weights stationary, activations streamed, as the TPU convolves: no im2col in memory. The input
 * is loaded into UB "planes", one row per input pixel position, and a kernel position (dy, dx) is
 * an offset into a plane, so MATMUL streams the rows of a K tile straight from them (a UB row
 * stride of sw for the convolution's horizontal stride). Two plane layouts:
 *   - pixel planes (CC = ceil(c / N) of them): plane cc holds channels cc*N.. of every pixel of
 *     the padded input, pl + w + pr rows per input row; padding rows and columns are ZEROed in
 *     the UB, never read from memory. K tile (dy, dx, cc) reads plane cc from row
 *     (y*sh + dy) * width + dx on;
 *   - packed runs (when pl = pr = 0 and c % N != 0, so pixel planes would waste array rows):
 *     plane t holds bytes t*N.. of the kw*c-byte run of every window row that starts at a pixel
 *     (w - kw + 1 per input row), so a K tile (dy, t) covers several kernel columns at once.
 * Planes are loaded in groups of up to HOST_ROW_TILES (fewer when the MATMUL step sw * S would
 * pass 255): one RD_HOST row of up to 4N bytes fills a pixel's S planes of the group at once, so
 * the group's planes are interleaved, row (r, x) of plane s at the group's base + (r * width + x)
 * * S + s, and MATMULs read a plane with a UB step of sw * S. One memory request per pixel instead
 * of one per plane is what matters on a chip whose cores share the memory port.
 * The output rows are cut in bands that fit the UB (two plane sets, so the next band loads while
 * this one computes, when there is room) and the accumulators (two buffers: one drains while the
 * next output-channel tile accumulates). A band's output tile nt accumulates over every K tile
 * (one RD_WEIGHT each, fetched WFIFO_TILES - 1 ahead), one MATMUL per output row (one per band
 * when the band's rows follow each other in the plane), and drains
 * through ACTIVATE (or ACTIVATE.POOL per pooled row) and WR_HOST, or WR_HOST from ACC for int32.
 * With pooling, bands are whole pooled rows (overlapping windows recompute their shared rows).
 * BF16 (pixel planes only): as gemm.c's, a pixel's plane is a UB row pair, so every row count
 * above is doubled, a load group is at most HOST_ROW_TILES / 2 planes, and a last plane of at most
 * N/2 channels is a group of its own, ZEROed and loaded a pixel per RD_HOST into its pairs' first
 * rows; bf16 output is staged one output tile at a time (gemm.c says why). */
#include "firmware/fw_internal.h"

/* A validated CONV2D with operands resolved to device addresses and its schedule's shape. */
typedef struct {
    uint32_t flags, batch, h, w, c, kh, kw, cout, sh, sw, pt, pb, pl, pr, ph, pw, psh, psw;
    uint32_t in, k, out, p;    /* device addresses */
    uint32_t oh, ow, ohp, owp; /* convolution output, and pooled output (= output without pool) */
    bool packed;               /* planes of packed runs, else pixel planes */
    uint32_t planes, width;    /* UB planes and rows per input row in each */
    uint32_t group, groups;    /* planes per load group (the last may have fewer), groups */
    uint32_t ogroup;           /* output tiles per drain group */
    uint32_t kt, nt;           /* K tiles and output-channel tiles */
    uint32_t run;              /* packed: bytes of a window row (kw * c) */
    uint32_t band;             /* pooled output rows per band */
    uint32_t sets;             /* plane sets in the UB: 2 (double-buffered) or 1 */
    uint32_t e, oe;   /* UB rows per input element (1, 2 bf16), per staged output element (1 int8,
                         2 bf16, 0: out drains from the accumulators) */
    bool short_plane; /* bf16: the last plane holds at most N/2 channels, loaded apart */
} conv;

/* a * b, or UINT64_MAX when that does not fit: larger than any buffer. */
static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    return a && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

/* Conv output rows and input rows (padded coordinates) of a band of bp pooled rows. */
static uint64_t band_conv_rows(const conv *v, uint64_t bp) { return (bp - 1) * v->psh + v->ph; }

static uint64_t band_in_rows(const conv *v, uint64_t bp)
{
    return (band_conv_rows(v, bp) - 1) * v->sh + v->kh;
}

/* UB rows of one plane set and of the int8 staging, ACC rows of one buffer, for bp rows. */
static uint64_t set_rows(const conv *v, uint64_t bp)
{
    return (uint64_t)v->planes * band_in_rows(v, bp) * v->width * v->e;
}

/* int8 or bf16 output is staged for a group of ogroup output-channel tiles at once. */
static uint64_t stage_rows(const conv *v, uint64_t bp) { return bp * v->owp * v->ogroup * v->oe; }

static uint64_t acc_rows(const conv *v, uint64_t bp) { return band_conv_rows(v, bp) * v->ow; }

static bool fits(const fw_ctx *c, const conv *v, uint64_t bp, uint32_t sets)
{
    return sets * set_rows(v, bp) + STAGE_BUFS * stage_rows(v, bp) <= c->hw.ub_rows &&
           2 * acc_rows(v, bp) <= c->hw.acc_rows && acc_rows(v, bp) <= ROWS_MAX;
}

/* The tallest band that fits, double-buffered if possible; bands of even height. 0: none fits.
 * Drain groups of up to HOST_ROW_TILES output tiles, as many as leave room for double-buffered
 * bands of one row (one when not even that fits). */
static void plan(const fw_ctx *c, conv *v)
{
    v->ogroup = v->flags & FW_CONV_BF16 ? 1 : fw_min32(HOST_ROW_TILES, v->nt);
    while (v->ogroup > 1 && !fits(c, v, 1, 2))
        v->ogroup--;
    v->band = 0;
    for (v->sets = 2; v->sets >= 1 && !v->band; v->sets--) {
        uint32_t lo = 0, hi = v->ohp; /* the largest bp in [1, ohp] that fits, by bisection */
        while (lo < hi) {
            const uint32_t mid = hi - (hi - lo) / 2;
            if (fits(c, v, mid, v->sets))
                lo = mid;
            else
                hi = mid - 1;
        }
        if (lo) {
            const uint32_t bands = fw_ceil_div(v->ohp, lo);
            v->band = fw_ceil_div(v->ohp, bands);
            break;
        }
    }
}

static int decode_conv(fw_ctx *c, const uint8_t *raw, conv *v)
{
    const uint32_t n = c->hw.n;
    const uint32_t stride = fw_le32(raw + FW_CONV_STRIDE), pad = fw_le32(raw + FW_CONV_PAD);
    const uint32_t pool = fw_le32(raw + FW_CONV_POOL);
    v->flags = fw_le32(raw + FW_CONV_FLAGS);
    v->batch = fw_le32(raw + FW_CONV_BATCH);
    v->h = fw_le32(raw + FW_CONV_H);
    v->w = fw_le32(raw + FW_CONV_W);
    v->c = fw_le32(raw + FW_CONV_C);
    v->kh = fw_le32(raw + FW_CONV_KH);
    v->kw = fw_le32(raw + FW_CONV_KW);
    v->cout = fw_le32(raw + FW_CONV_COUT);
    v->sh = stride & 0xffffu;
    v->sw = stride >> 16;
    v->pt = pad & 0xffu;
    v->pb = pad >> 8 & 0xffu;
    v->pl = pad >> 16 & 0xffu;
    v->pr = pad >> 24;

    static const char *const size = "zero, or more than the instruction's rows field holds";
    if (v->flags & ~(uint32_t)FW_CONV_FLAGS_ALL)
        return fw_bad(c, "flags", "an undefined flag bit set");
    if (fw_flags_version(c, v->flags))
        return c->res->code;
    const bool bf16 = v->flags & FW_CONV_BF16;
    if (bf16 && (v->flags & FW_CONV_A_UNSIGNED))
        return fw_bad(c, "flags", "A_UNSIGNED with BF16");
    if (bf16 && (v->flags & FW_CONV_OUT_INT8))
        return fw_bad(c, "flags", "OUT_INT8 with BF16");
    if (!bf16 && (v->flags & FW_CONV_OUT_BF16))
        return fw_bad(c, "flags", "OUT_BF16 without BF16");
    if ((v->flags & FW_CONV_POOLING) && !(v->flags & (FW_CONV_OUT_INT8 | FW_CONV_OUT_BF16)))
        return fw_bad(c, "flags", bf16 ? "POOLING without OUT_BF16" : "POOLING without OUT_INT8");
    if (!v->batch)
        return fw_bad(c, "batch", "zero");
    if (!v->h || v->h > ROWS_MAX)
        return fw_bad(c, "h", size);
    if (!v->w || v->w > ROWS_MAX)
        return fw_bad(c, "w", size);
    if (!v->c || v->c > ROWS_MAX)
        return fw_bad(c, "c", size);
    if (!v->cout || v->cout > ROWS_MAX)
        return fw_bad(c, "cout", size);
    if (!v->kh || v->kh > v->h + v->pt + v->pb)
        return fw_bad(c, "kh", "zero, or taller than the padded input");
    if (!v->kw || v->kw > v->w + v->pl + v->pr)
        return fw_bad(c, "kw", "zero, or wider than the padded input");
    if (!v->sh || !v->sw || v->sh > FW_CONV_STRIDE_MAX || v->sw > FW_CONV_STRIDE_MAX)
        return fw_bad(c, "stride", "zero, or above 255 (MATMUL's UB row stride)");
    v->e = bf16 ? 2 : 1;
    if (v->sw * v->e > FW_CONV_STRIDE_MAX)
        return fw_bad(c, "stride", "sw above 127 with BF16 (MATMUL's UB row stride over pairs)");
    v->oh = (uint32_t)fw_conv_out_dim(v->h, v->pt, v->pb, v->kh, v->sh, false, 0, 0);
    v->ow = (uint32_t)fw_conv_out_dim(v->w, v->pl, v->pr, v->kw, v->sw, false, 0, 0);
    if (v->flags & FW_CONV_POOLING) {
        v->ph = pool & 0xffu;
        v->pw = pool >> 8 & 0xffu;
        v->psh = pool >> 16 & 0xffu;
        v->psw = pool >> 24;
        if (!v->ph || !v->pw || v->ph > FW_CONV_POOL_MAX || v->pw > FW_CONV_POOL_MAX)
            return fw_bad(c, "pool", "a window side zero, or above 15 (ACTIVATE.POOL's)");
        if (!v->psh || !v->psw)
            return fw_bad(c, "pool", "a window stride zero");
        if (v->ph > v->oh || v->pw > v->ow)
            return fw_bad(c, "pool", "the window is larger than the convolution's output");
    } else {
        if (pool)
            return fw_bad(c, "pool", "not 0 without POOLING");
        v->ph = v->pw = v->psh = v->psw = 1;
    }
    v->ohp = (uint32_t)fw_conv_out_dim(v->h, v->pt, v->pb, v->kh, v->sh, true, v->ph, v->psh);
    v->owp = (uint32_t)fw_conv_out_dim(v->w, v->pl, v->pr, v->kw, v->sw, true, v->pw, v->psw);

    v->packed = fw_conv_packed(v->flags, v->c, v->pl, v->pr, n);
    v->run = v->packed ? v->kw * v->c : 0; /* packed: kw <= w, both 16-bit */
    v->planes = v->packed ? fw_ceil_div(v->run, n) : fw_ceil_div(v->c, n);
    v->width = v->packed ? v->w - v->kw + 1 : v->w + v->pl + v->pr;
    v->group = fw_min32(HOST_ROW_TILES / v->e, FW_CONV_STRIDE_MAX / (v->sw * v->e));
    v->short_plane = bf16 && v->c % n != 0 && v->c % n <= n / 2;
    v->groups = fw_ceil_div(v->planes - v->short_plane, v->group) + v->short_plane;
    v->nt = fw_ceil_div(v->cout, n);
    const uint64_t kt = (uint64_t)v->kh * (v->packed ? v->planes : (uint64_t)v->kw * v->planes);
    if (kt > UINT32_MAX)
        return fw_bad(c, "kh", "the kernel has more K tiles than 32 bits count");
    v->kt = (uint32_t)kt;
    const uint32_t out_elt = v->flags & FW_CONV_OUT_INT8 ? 1 : v->flags & FW_CONV_OUT_BF16 ? 2 : 4;
    v->oe = v->flags & (FW_CONV_OUT_INT8 | FW_CONV_OUT_BF16) ? out_elt : 0;
    const uint64_t kernel = mul_sat(mul_sat(kt, v->nt), (uint64_t)n * n * v->e);

    fw_range in, k, out, p = {0, 0};
    if (fw_operand(c, raw, FW_CONV_IN_BUF, FW_CONV_IN_OFF, "in.buf", "in.off",
                   mul_sat(v->batch, (uint64_t)v->h * v->w * v->c * v->e), &v->in, &in) ||
        fw_operand(c, raw, FW_CONV_K_BUF, FW_CONV_K_OFF, "k.buf", "k.off", kernel, &v->k, &k) ||
        fw_operand(c, raw, FW_CONV_OUT_BUF, FW_CONV_OUT_OFF, "out.buf", "out.off",
                   mul_sat(v->batch, (uint64_t)v->ohp * v->owp * v->cout * out_elt), &v->out, &out))
        return c->res->code;
    if (v->flags & (FW_CONV_BIAS | FW_CONV_OUT_INT8)) {
        if (fw_operand(c, raw, FW_CONV_P_BUF, FW_CONV_P_OFF, "params.buf", "params.off",
                       (bf16 ? 4 : 12) * (uint64_t)v->cout, &v->p, &p))
            return c->res->code;
    } else {
        v->p = 0;
        if (fw_le32(raw + FW_CONV_P_BUF))
            return fw_bad(c, "params.buf", "not 0 without BIAS or OUT_INT8");
        if (fw_le32(raw + FW_CONV_P_OFF))
            return fw_bad(c, "params.off", "not 0 without BIAS or OUT_INT8");
    }
    if (fw_overlap(out, in))
        return fw_bad(c, "out overlaps in", "the output's extent intersects the input's");
    if (fw_overlap(out, k))
        return fw_bad(c, "out overlaps k", "the output's extent intersects the kernel's");
    if (fw_overlap(out, p))
        return fw_bad(c, "out overlaps params", "the output's extent intersects the parameters'");
    if (fw_overlap(out, fw_stream_range(c)))
        return fw_bad(c, "out overlaps stream",
                      "the output's extent intersects the command stream");
    /* The WR_HOST stride is the output's pixel pitch. */
    if ((uint64_t)v->cout * out_elt > UINT32_MAX)
        return fw_bad(c, "cout", "its output pixel pitch does not fit 32 bits");
    plan(c, v);
    if (!v->band)
        return fw_bad(c, "w", "not even one output row fits the UB and accumulators");
    return FW_OK;
}

/* --------------------------------------------------------------- schedule -- */

/* Whether load group g is a short last plane of its own. */
static bool short_group(const conv *v, uint32_t g) { return v->short_plane && g == v->groups - 1; }

/* Planes in load group g: the interleave of its UB rows. */
static uint32_t group_planes(const conv *v, uint32_t g)
{
    return short_group(v, g) ? 1
                             : fw_group_size(v->planes - v->short_plane, v->group, g * v->group);
}

/* The first plane of load group g. */
static uint32_t group_first(const conv *v, uint32_t g)
{
    return short_group(v, g) ? v->planes - 1 : g * v->group;
}

/* The load group of plane p. */
static uint32_t plane_group(const conv *v, uint32_t p)
{
    return v->short_plane && p == v->planes - 1 ? v->groups - 1 : p / v->group;
}

/* The UB row of position (r, x) (input row, pixel or run) of plane p in the plane set at base,
 * filled for in_rows input rows. */
static uint64_t plane_row(const conv *v, uint64_t base, uint32_t in_rows, uint32_t p, uint64_t r,
                          uint64_t x)
{
    const uint32_t g = plane_group(v, p), first = group_first(v, g);
    return base + ((uint64_t)first * in_rows * v->width + (r * v->width + x) * group_planes(v, g) +
                   p - first) *
                      v->e;
}

/* The walk: images, then bands (pooled rows [py0, py0 + band)), then output tiles (visits),
 * then K tiles (steps). */
typedef struct {
    fw_ctx *c;
    const conv *v;
    uint32_t n, bands;
    uint64_t visits, steps; /* per command */
    uint64_t loads;         /* (image, band) loads: visits / nt */
    uint64_t set_base[2], stage_base, acc_half;
    uint64_t fetched;               /* next step whose weight tile to fetch */
    uint64_t load_next;             /* next load (image, band) whose planes to fill */
    uint64_t load_unit, load_units; /* its progress: group rows filled, of groups x in rows */
    uint32_t zero_at, zero_rows;    /* ZERO rows pending (merged across row ends) */
    uint64_t drain_next;            /* next visit to drain */
    uint32_t params_nt; /* output tile whose parameters are loaded, FW_NO_INDEX if none */
} sched;

static void band_rows(const sched *s, uint64_t load, uint32_t *img, uint32_t *py0, uint32_t *bp)
{
    *img = (uint32_t)(load / s->bands);
    *py0 = (uint32_t)(load % s->bands) * s->v->band;
    *bp = fw_min32(s->v->band, s->v->ohp - *py0);
}

static int flush_zero(sched *s)
{
    if (!s->zero_rows)
        return FW_OK;
    const uint32_t rows = s->zero_rows;
    s->zero_rows = 0;
    return fw_push(s->c, TPU_OP_ZERO, 0, rows, 0, s->zero_at, 0, 0);
}

/* Zero rows of the UB from row at on, merged with the pending ones when adjacent. */
static int zero(sched *s, uint32_t at, uint32_t rows)
{
    if (s->zero_rows && s->zero_at + s->zero_rows == at &&
        (uint64_t)s->zero_rows + rows <= ROWS_MAX) {
        s->zero_rows += rows;
        return FW_OK;
    }
    if (flush_zero(s))
        return s->c->res->code;
    s->zero_at = at;
    s->zero_rows = rows;
    return FW_OK;
}

/* Fills the next input row of a plane group of load s->load_next: unit u = group * in_rows +
 * row. */
static int load_unit(sched *s)
{
    const conv *v = s->v;
    uint32_t img, py0, bp;
    band_rows(s, s->load_next, &img, &py0, &bp);
    const uint32_t in_rows = (uint32_t)band_in_rows(v, bp);
    const uint32_t g = (uint32_t)(s->load_unit / in_rows), r = (uint32_t)(s->load_unit % in_rows);
    const uint32_t planes = group_planes(v, g), first = group_first(v, g), e = v->e;
    const uint32_t base =
        (uint32_t)plane_row(v, s->set_base[s->load_next % v->sets], in_rows, first, r, 0);
    /* Padded input row y of the image: the band starts at conv row py0 * psh. */
    const int64_t y = (int64_t)py0 * v->psh * v->sh + r - v->pt;
    if (++s->load_unit == s->load_units) {
        s->load_unit = 0;
        s->load_next++;
    }
    /* A row outside the image is zeros; a short plane's row is zeroed, then gets its pixels. */
    const bool short_row = short_group(v, g), outside = y < 0 || y >= v->h;
    if (outside || short_row) {
        if (zero(s, base, v->width * planes * e))
            return s->c->res->code;
        if (outside)
            return FW_OK;
    }
    const uint64_t pixel = ((uint64_t)img * v->h + (uint64_t)y) * v->w;
    /* Element of the run, or first channel, of the group. */
    const uint32_t at = first * s->n;
    const uint32_t len = fw_min32(planes * s->n, (v->packed ? v->run : v->c) - at) * e;
    const uint32_t rows = v->packed ? v->width : v->w, left = v->packed ? 0 : v->pl * planes * e;
    const uint64_t a = v->in + (pixel * v->c + at) * e;
    if (short_row) {
        if (flush_zero(s))
            return s->c->res->code;
        for (uint32_t x = 0; x < rows; x++)
            if (fw_push(s->c, TPU_OP_RD_HOST, 0, 1, (uint32_t)(a + (uint64_t)x * v->c * e),
                        base + left + x * e, len, 0))
                return s->c->res->code;
        return FW_OK;
    }
    if (left && zero(s, base, left))
        return s->c->res->code;
    if (flush_zero(s) ||
        fw_push(s->c, TPU_OP_RD_HOST, 0, rows, (uint32_t)a, base + left, len, v->c * e))
        return s->c->res->code;
    return v->packed || !v->pr ? FW_OK
                               : zero(s, base + left + v->w * planes * e, v->pr * planes * e);
}

/* Pushes the remaining units of the loads before load `until` (and the pending zeros). */
static int load_until(sched *s, uint64_t until)
{
    while (s->load_next < until)
        if (load_unit(s))
            return s->c->res->code;
    return flush_zero(s);
}

/* K tile kt's plane and first UB row offset within a plane row (the dx shift). */
static void tile_source(const sched *s, uint32_t kt, uint32_t *plane, uint32_t *dy, uint32_t *dx)
{
    const conv *v = s->v;
    if (v->packed) {
        *dy = kt / v->planes;
        *plane = kt % v->planes;
        *dx = 0;
    } else {
        *plane = kt % v->planes;
        *dy = kt / v->planes / v->kw;
        *dx = kt / v->planes % v->kw;
    }
}

static int fetch_weights(sched *s)
{
    const conv *v = s->v;
    const uint32_t kt = (uint32_t)(s->fetched % v->kt), nt = (uint32_t)(s->fetched / v->kt % v->nt);
    const uint64_t a = v->k + ((uint64_t)nt * v->kt + kt) * s->n * s->n * v->e;
    s->fetched++;
    /* Only the tile's used columns; the core zero-pads the rest. bf16: only its channels' rows
     * too (pixel planes), for a padding row's inf or NaN would meet the zero activations. */
    const bool bf16 = v->flags & FW_CONV_BF16;
    const uint32_t rows = bf16 ? fw_min32(s->n, v->c - kt % v->planes * s->n) : s->n;
    return fw_push(s->c, TPU_OP_RD_WEIGHT, bf16 ? TPU_F_BF16 : 0, rows, (uint32_t)a, 0,
                   fw_min32(s->n, v->cout - nt * s->n) * v->e, s->n * v->e);
}

/* Writes out visit q's accumulator buffer. */
static int drain(sched *s, uint64_t q)
{
    const conv *v = s->v;
    fw_ctx *c = s->c;
    const uint32_t nt = (uint32_t)(q % v->nt), n0 = nt * s->n, cols = fw_min32(s->n, v->cout - n0);
    uint32_t img, py0, bp;
    band_rows(s, q / v->nt, &img, &py0, &bp);
    const uint32_t acc = (uint32_t)((q % 2) * s->acc_half);
    const bool bf16 = v->flags & FW_CONV_BF16;
    const uint32_t act = (v->flags & FW_CONV_BIAS ? TPU_F_BIAS : 0) |
                         (v->flags & FW_CONV_RELU ? TPU_F_RELU : 0) | (bf16 ? TPU_F_BF16 : 0);
    const uint32_t oy0 = py0 * v->psh;
    s->drain_next = q + 1;
    /* bf16's fp32 bias alone, read for mult and shift too (gemm.c). */
    if ((v->flags & (FW_CONV_BIAS | FW_CONV_OUT_INT8)) && s->params_nt != nt) {
        s->params_nt = nt;
        if (fw_push(c, TPU_OP_RD_PARAMS, 0, 3, v->p + 4 * n0, 0, 4 * cols, bf16 ? 0 : 4 * v->cout))
            return c->res->code;
    }
    if (!v->oe) {
        const uint64_t pixel = ((uint64_t)img * v->oh + oy0) * v->ow;
        return fw_push(c, TPU_OP_WR_HOST, TPU_F_SRC_ACC | act, bp * v->ow,
                       (uint32_t)(v->out + (pixel * v->cout + n0) * 4), acc, 4 * cols, 4 * v->cout);
    }
    /* The drain group of output tiles nt - j .. + tiles, staged interleaved (a UB step of
     * ustep: tiles for int8; bf16 2, or 1 for at most N/2 columns, as gemm.c's), written by its
     * last tile's drain with one WR_HOST row per pixel. */
    const uint32_t tiles = fw_group_size(v->nt, v->ogroup, nt), j = nt % v->ogroup;
    const uint32_t g0 = n0 - j * s->n, width = fw_min32(tiles * s->n, v->cout - g0) * v->oe;
    const uint32_t ustep = fw_ceil_div(width, s->n), step = ustep > 1 ? ustep : 0;
    const uint64_t group = q / v->nt * fw_ceil_div(v->nt, v->ogroup) + nt / v->ogroup;
    const uint32_t stage =
        (uint32_t)(s->stage_base + (group % STAGE_BUFS) * stage_rows(v, v->band)) + j * v->oe;
    if (v->flags & FW_CONV_POOLING) {
        const uint32_t window = TPU_POOL_PUT(PH, v->ph) | TPU_POOL_PUT(PW, v->pw) |
                                TPU_POOL_PUT(STEP, v->psw) | TPU_POOL_PUT(PITCH, v->ow);
        for (uint32_t i = 0; i < bp; i++)
            if (fw_push(c, TPU_OP_ACTIVATE, act | TPU_F_POOL, v->owp, stage + i * v->owp * ustep,
                        acc + i * v->psh * v->ow, step, window))
                return c->res->code;
    } else if (fw_push(c, TPU_OP_ACTIVATE, act, bp * v->ow, stage, acc, step, 0)) {
        return c->res->code;
    }
    if (j + 1 < tiles)
        return FW_OK;
    const uint64_t pixel = ((uint64_t)img * v->ohp + py0) * v->owp;
    return fw_push(c, TPU_OP_WR_HOST, 0, bp * v->owp,
                   (uint32_t)(v->out + (pixel * v->cout + g0) * v->oe), stage - j * v->oe, width,
                   v->cout * v->oe);
}

static int run_conv(fw_ctx *c, const conv *v)
{
    sched s = {.c = c, .v = v, .n = c->hw.n, .params_nt = FW_NO_INDEX};
    s.bands = fw_ceil_div(v->ohp, v->band);
    s.loads = (uint64_t)v->batch * s.bands;
    s.visits = s.loads * v->nt;
    s.steps = s.visits * v->kt;
    s.set_base[0] = 0;
    s.set_base[1] = set_rows(v, v->band);
    s.stage_base = v->sets * set_rows(v, v->band);
    s.acc_half = acc_rows(v, v->band);
    const uint32_t mm = TPU_F_LOAD | (v->flags & FW_CONV_A_UNSIGNED ? TPU_F_UNSIGNED : 0) |
                        (v->flags & FW_CONV_BF16 ? TPU_F_BF16 : 0);
    const uint64_t wdist = c->hw.wfifo_tiles > 1 ? c->hw.wfifo_tiles - 1 : 1;

    for (uint64_t load = 0; load < s.loads; load++) {
        uint32_t img, py0, bp;
        band_rows(&s, load, &img, &py0, &bp);
        const uint32_t conv_rows = (uint32_t)band_conv_rows(v, bp);
        /* This band's planes: loaded ahead while the last band computed, or now. */
        s.load_units = (uint64_t)v->groups * band_in_rows(v, bp);
        if (load_until(&s, load + 1))
            return c->res->code;
        /* One MATMUL per output row, or per band where the rows it reads follow each other
         * in the plane (sh * width = ow * sw: packed runs at stride 1, or a 1x1 kernel at
         * stride 1 without horizontal padding, as tpuc's packed convolutions are): fewer, longer
         * MATMULs measured faster. The next band's loads are spread over this band's MATMULs
         * (into the other set). */
        const uint32_t per = (uint64_t)v->sh * v->width == (uint64_t)v->ow * v->sw ? conv_rows : 1;
        const uint64_t mms = (uint64_t)v->nt * v->kt * (conv_rows / per);
        uint64_t next_units = 0, pushed = 0;
        if (v->sets == 2 && load + 1 < s.loads) {
            uint32_t ni, np0, nbp;
            band_rows(&s, load + 1, &ni, &np0, &nbp);
            next_units = (uint64_t)v->groups * band_in_rows(v, nbp);
        }
        for (uint32_t nt = 0; nt < v->nt; nt++) {
            const uint64_t q = load * v->nt + nt;
            for (uint32_t kt = 0; kt < v->kt; kt++) {
                const uint64_t step = q * v->kt + kt;
                while (s.fetched < s.steps && s.fetched < step + wdist)
                    if (fetch_weights(&s))
                        return c->res->code;
                uint32_t plane, dy, dx;
                tile_source(&s, kt, &plane, &dy, &dx);
                const uint32_t ub_step = v->sw * group_planes(v, plane_group(v, plane)) * v->e;
                for (uint32_t oy = 0; oy < conv_rows; oy += per) {
                    const uint32_t flags = (oy == 0 ? mm : mm & ~TPU_F_LOAD) | (kt ? TPU_F_ACC : 0);
                    const uint64_t a =
                        plane_row(v, s.set_base[load % v->sets], (uint32_t)band_in_rows(v, bp),
                                  plane, (uint64_t)oy * v->sh + dy, dx);
                    if (fw_push(c, TPU_OP_MATMUL, flags, per * v->ow, (uint32_t)a,
                                (uint32_t)((q % 2) * s.acc_half + (uint64_t)oy * v->ow), 0,
                                ub_step))
                        return c->res->code;
                    pushed++;
                    while (next_units && s.load_next == load + 1 &&
                           s.load_unit < next_units * pushed / mms) {
                        s.load_units = next_units;
                        if (load_unit(&s))
                            return c->res->code;
                    }
                }
                /* The previous visit drains once this one has MATMULs queued behind it. */
                if (kt == 0 && q > 0 && s.drain_next < q && drain(&s, q - 1))
                    return c->res->code;
            }
        }
        if (flush_zero(&s))
            return c->res->code;
    }
    return s.drain_next < s.visits ? drain(&s, s.visits - 1) : FW_OK;
}

int fw_conv(fw_ctx *c, const uint8_t *raw, bool run)
{
    conv v;
    if (decode_conv(c, raw, &v) || (run && run_conv(c, &v)))
        return c->res->code;
    return FW_OK;
}

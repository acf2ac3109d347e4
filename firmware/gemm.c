/* gemm.c - the GEMM command: validation and schedule (firmware.h, docs/command-stream.md). */
#include "firmware/fw_internal.h"

/* M chunk size goal: enough chunks that the first chunk's A load and the last drain, which
 * overlap nothing, are short, but chunks long enough that a MATMUL outlasts fetching the next
 * weight tile (N rows plus the memory latency, which the firmware cannot see: 256 rows keep the
 * MXU over 97% busy on 512^3 at N = 16 up to a latency of 200 cycles). */
#define CHUNKS_GOAL 8u
#define CHUNK_MIN_ROWS 256u
/* Rows of A one RD_HOST loads at most. The load unit runs its instructions in order, so a long
 * RD_HOST holds back the weight tiles queued behind it; on a chip whose 8 cores share the memory
 * port in lockstep, 32 rows are sent within the 3 tiles of 128-row MATMULs prefetched. */
#define PIECE_ROWS 32u
/* Accumulator buffers the schedule rotates through, at most. */
#define ACC_BUFS_MAX 8u

/* A validated GEMM with operands resolved to device addresses. */
typedef struct {
    uint32_t flags, m, k, n;
    uint32_t a, lda, b, ldb, c, ldc, p;
    uint32_t esize, out_size; /* bytes of an A and B element (1 or 2, BF16), of a C element */
} gemm;

/* Bytes spanned by rows x width elements of esize bytes with a pitch of ld elements. */
static uint64_t extent(uint32_t rows, uint32_t ld, uint32_t width, uint32_t esize)
{
    return ((uint64_t)(rows - 1) * ld + width) * esize;
}

/* Bytes of a k x n B in N x N tiles (FW_GEMM_B_TILED) of esize-byte elements. A padded side
 * above 32 bits is larger than any buffer: the result is then clamped where adding a 32-bit
 * offset cannot wrap. */
static uint64_t tiled_extent(uint32_t k, uint32_t n, uint32_t tile, uint32_t esize)
{
    const uint64_t rows = (uint64_t)fw_ceil_div(k, tile) * tile;
    const uint64_t cols = (uint64_t)fw_ceil_div(n, tile) * tile;
    return rows > UINT32_MAX || cols > UINT32_MAX
               ? (uint64_t)1 << 33
               : fw_min64(rows * cols, (uint64_t)1 << 33) * esize;
}

/* UB rows the schedule needs at least: two A slots of one row (pair) and the staging buffers. */
static uint32_t ub_rows_min(uint32_t flags)
{
    const bool bf16 = flags & FW_GEMM_BF16;
    return 2 * (bf16 ? 2 : 1) + (flags & FW_GEMM_OUT_INT8   ? STAGE_BUFS
                                 : flags & FW_GEMM_OUT_BF16 ? 2 * STAGE_BUFS
                                                            : 0);
}

static int decode_gemm(fw_ctx *c, const uint8_t *raw, gemm *g)
{
    g->flags = fw_le32(raw + FW_GEMM_FLAGS);
    g->m = fw_le32(raw + FW_GEMM_M);
    g->k = fw_le32(raw + FW_GEMM_K);
    g->n = fw_le32(raw + FW_GEMM_N);
    g->lda = fw_le32(raw + FW_GEMM_LDA);
    g->ldb = fw_le32(raw + FW_GEMM_LDB);
    g->ldc = fw_le32(raw + FW_GEMM_LDC);
    const bool bf16 = g->flags & FW_GEMM_BF16;
    g->esize = bf16 ? 2 : 1;
    g->out_size = g->flags & FW_GEMM_OUT_INT8 ? 1 : g->flags & FW_GEMM_OUT_BF16 ? 2 : 4;
    const uint32_t c_size = g->out_size, e = g->esize;
    /* The parameters: int32 bias, mult and shift, or with BF16 the fp32 bias alone. */
    const bool params = g->flags & (FW_GEMM_BIAS | FW_GEMM_OUT_INT8);
    const fw_range stream = fw_stream_range(c);
    fw_range a, b, out, p = {0, 0};

    if (g->flags & ~(uint32_t)FW_GEMM_FLAGS_ALL)
        return fw_bad(c, "flags", "an undefined flag bit set");
    if (fw_flags_version(c, g->flags))
        return c->res->code;
    if (bf16 && (g->flags & FW_GEMM_A_UNSIGNED))
        return fw_bad(c, "flags", "A_UNSIGNED with BF16");
    if (bf16 && (g->flags & FW_GEMM_OUT_INT8))
        return fw_bad(c, "flags", "OUT_INT8 with BF16");
    if (!bf16 && (g->flags & FW_GEMM_OUT_BF16))
        return fw_bad(c, "flags", "OUT_BF16 without BF16");
    if (c->hw.ub_rows < ub_rows_min(g->flags))
        return fw_bad(c, "flags", "BF16 needs more UB rows than the core has");
    if (!g->m)
        return fw_bad(c, "m", "zero");
    if (!g->k)
        return fw_bad(c, "k", "zero");
    if (!g->n)
        return fw_bad(c, "n", "zero");
    if (g->lda < g->k)
        return fw_bad(c, "lda", "smaller than k");
    if (fw_operand(c, raw, FW_GEMM_A_BUF, FW_GEMM_A_OFF, "a.buf", "a.off",
                   extent(g->m, g->lda, g->k, e), &g->a, &a))
        return c->res->code;
    const bool tiled = g->flags & FW_GEMM_B_TILED;
    if (tiled ? g->ldb != 0 : g->ldb < g->n)
        return fw_bad(c, "ldb", tiled ? "not 0 with B_TILED" : "smaller than n");
    if (fw_operand(c, raw, FW_GEMM_B_BUF, FW_GEMM_B_OFF, "b.buf", "b.off",
                   tiled ? tiled_extent(g->k, g->n, c->hw.n, e) : extent(g->k, g->ldb, g->n, e),
                   &g->b, &b))
        return c->res->code;
    /* The WR_HOST stride is ldc elements in bytes. */
    if (g->ldc < g->n)
        return fw_bad(c, "ldc", "smaller than n");
    if ((uint64_t)g->ldc * c_size > UINT32_MAX)
        return fw_bad(c, "ldc", "its byte pitch does not fit 32 bits");
    if (fw_operand(c, raw, FW_GEMM_C_BUF, FW_GEMM_C_OFF, "c.buf", "c.off",
                   extent(g->m, g->ldc, g->n, c_size), &g->c, &out))
        return c->res->code;
    if (params) {
        if (fw_operand(c, raw, FW_GEMM_P_BUF, FW_GEMM_P_OFF, "params.buf", "params.off",
                       (bf16 ? 4 : 12) * (uint64_t)g->n, &g->p, &p))
            return c->res->code;
    } else {
        g->p = 0;
        if (fw_le32(raw + FW_GEMM_P_BUF))
            return fw_bad(c, "params.buf", "not 0 without BIAS or OUT_INT8");
        if (fw_le32(raw + FW_GEMM_P_OFF))
            return fw_bad(c, "params.off", "not 0 without BIAS or OUT_INT8");
    }
    /* C is written tile by tile while A, B and the params are still being read, and the
     * firmware rereads the stream while earlier commands run. Bounding ranges: conservative
     * for interleaved layouts. */
    if (fw_overlap(out, a))
        return fw_bad(c, "c overlaps a", "C's extent intersects A's");
    if (fw_overlap(out, b))
        return fw_bad(c, "c overlaps b", "C's extent intersects B's");
    if (fw_overlap(out, p))
        return fw_bad(c, "c overlaps params", "C's extent intersects the parameters'");
    if (fw_overlap(out, stream))
        return fw_bad(c, "c overlaps stream", "C's extent intersects the command stream");
    return FW_OK;
}

/* ---------------------------------------------------------- GEMM schedule -- */
/*
 * Loop nest: M chunks of up to tm rows (mc) > N-tiles (nt) > K-tiles (kt). Each (chunk, n-tile)
 * is a "visit": kt MATMUL "steps" of the chunk's rows into one accumulator buffer, then a drain
 * (WR_HOST SRC_ACC, or ACTIVATE + WR_HOST) of that buffer.
 *
 * A lives in two UB slots of tm rows per k-tile. When a chunk's whole K fits (kb == 1), a chunk
 * is loaded once and used by all its visits; otherwise K is cut into kb blocks of kc k-tiles and
 * each block is reloaded for every visit. A "use" is a maximal run of steps reading one loaded
 * block; uses alternate slots, and the next use's block is loaded one RD_HOST per group of up to
 * HOST_ROW_TILES k-tiles, spread evenly over the current use's steps. A group's RD_HOST reads each
 * row's S k-tiles in one request (one memory request per row is what limits a chip whose cores
 * share the port) into S interleaved UB rows: k-tile s of group row i at the group's base + i*S
 * + s, which its MATMUL reads with a UB step of S. One group takes the load unit about as long as
 * S MATMULs take the MXU, which the weight tiles already prefetched cover; smaller RD_HOSTs
 * measured worse, each paying the memory latency.
 *
 * Weights: RD_WEIGHT for step t + wdist is pushed right after MATMUL t, so wdist tiles are on
 * their way while the FIFO never holds more than WFIFO_TILES.
 *
 * Drains are pushed dlag steps after their visit's last MATMUL, so the MXU has finished writing
 * the buffer by the time the drain reaches the head of the queue, and before the buffer is
 * reused. An int8 drain ACTIVATEs its n-tile into a staging buffer shared by a group of up to
 * ogroup (HOST_ROW_TILES) n-tiles of the chunk, interleaved as A's k-tiles are (a UB step of S),
 * and the group's last drain writes all of them with one WR_HOST, a request per row of up to 4N
 * bytes.
 *
 * BF16: an A row's k-tile, 2N bytes, is a UB row pair, so everything above counts UB rows in
 * pairs: a group is HOST_ROW_TILES / 2 k-tiles (4N bytes), k-tile s of group row i at the group's
 * base + (i*S + s) * 2, read with a UB step of 2S. A k-tile of k % N <= N/2 elements at the end of
 * K cannot share that layout: its RD_HOST row would fill one UB row, and the pair's other row would
 * be the next A row, whose inf or NaN against the tile's zero weight rows would give NaN
 * (docs/isa.md "Floating point (bf16)"). It is a group of its own, ZEROed and loaded one A row per
 * RD_HOST into the pairs' first rows. Output is fp32 by WR_HOST.SRC_ACC.BF16, or bf16 by
 * ACTIVATE.BF16 into staging buffers of one n-tile (ogroup 1): a row of a group of n-tiles whose
 * last one has at most N/2 columns would take an odd number of UB rows, which ACTIVATE's pairs
 * cannot interleave; such a tile alone is staged with a UB step of 1 (each row's pair overwrites
 * the previous row's unused second row), a full one with a step of 2.
 */
typedef struct {
    fw_ctx *c;
    const gemm *g;
    uint32_t n;           /* array size */
    uint32_t e, oe;       /* UB rows per element of A (1, 2 for bf16), of C staged in the UB (1
                             int8, 2 bf16; 0: C drains from the accumulators) */
    uint32_t host_tiles;  /* k-tiles per RD_HOST group (HOST_ROW_TILES / e) */
    bool short_tail;      /* the last k-tile is a bf16 one of at most N/2 rows, loaded apart */
    uint32_t kt, nt;      /* K and N tiles */
    uint32_t mc, tm;      /* M chunks, rows of the largest chunk */
    uint32_t kc, kb;      /* k-tiles per A block, blocks per K */
    uint32_t slot_rows;   /* UB rows of one A slot */
    uint32_t ogroup;      /* n-tiles per drain group */
    uint32_t stage_rows;  /* UB rows of one int8 or bf16 staging buffer */
    uint32_t nacc;        /* accumulator buffers of tm rows */
    uint32_t wdist, dlag; /* weight prefetch distance, drain lag (steps) */
    uint64_t steps, visits, uses;
    uint64_t rw_next;    /* next weight tile (step) to fetch */
    uint64_t drain_next; /* next visit to drain */
    uint64_t load_use;   /* use whose block is being loaded */
    uint32_t load_j;     /* its next k-tile (within the block), the first of a group */
    uint32_t load_r;     /* the group's next row (of the chunk) */
    uint32_t params_nt;  /* n-tile whose params are loaded, FW_NO_INDEX if none */
} sched;

static void plan(sched *s, fw_ctx *c, const gemm *g)
{
    const hw_cfg *hw = &c->hw;
    const uint32_t n = hw->n;
    const bool bf16 = g->flags & FW_GEMM_BF16;
    s->e = g->esize;
    s->oe = g->flags & (FW_GEMM_OUT_INT8 | FW_GEMM_OUT_BF16) ? g->out_size : 0;
    s->host_tiles = HOST_ROW_TILES / s->e;
    s->short_tail = bf16 && g->k % n != 0 && g->k % n <= n / 2;
    s->kt = fw_ceil_div(g->k, n);
    s->nt = fw_ceil_div(g->n, n);
    /* int8 output: staging buffers of tm rows per n-tile of a drain group, of as many n-tiles as
     * leave room for chunks of min(m, 2N) rows (one on a tiny UB); bf16: one n-tile. */
    s->ogroup = bf16 ? 1 : fw_min32(HOST_ROW_TILES, s->nt);
    while (s->ogroup > 1 && hw->ub_rows / (2 + STAGE_BUFS * s->ogroup) < fw_min32(g->m, 2 * n))
        s->ogroup--;
    const uint32_t stage = STAGE_BUFS * s->ogroup * s->oe;
    const uint64_t acc_cap = fw_min32(hw->acc_rows / 2, ROWS_MAX);
    s->c = c;
    s->g = g;
    s->n = n;
    /* Chunks of the goal size within the ACC and UB caps, with all of K resident (A read
     * once); if the caps leave chunks too short to stream without bubbles (2N-1 rows), short K
     * blocks reloaded per n-tile instead. */
    const uint64_t goal =
        fw_max64(fw_max64(CHUNK_MIN_ROWS, 4 * (uint64_t)n), fw_ceil_div(g->m, CHUNKS_GOAL));
    uint64_t tm = fw_min64(fw_min64(g->m, fw_min64(acc_cap, goal)),
                           hw->ub_rows / (2 * (uint64_t)s->kt * s->e + stage));
    uint64_t kc = s->kt;
    if (tm < fw_min64(g->m, 2 * (uint64_t)n)) {
        tm = fw_min64(fw_min64(g->m, acc_cap),
                      fw_min64(2 * (uint64_t)n, hw->ub_rows / (2 * s->e + stage)));
        kc = fw_min64(s->kt, (hw->ub_rows - stage * tm) / (2 * tm * s->e));
    }
    /* Even chunks and blocks: no short tail. */
    s->mc = fw_ceil_div(g->m, (uint32_t)tm);
    s->tm = fw_ceil_div(g->m, s->mc);
    s->kb = fw_ceil_div(s->kt, (uint32_t)kc);
    s->kc = fw_ceil_div(s->kt, s->kb);
    s->slot_rows = s->tm * s->kc * s->e;
    s->stage_rows = s->tm * s->ogroup * s->oe;
    s->nacc = fw_min32(hw->acc_rows / s->tm, ACC_BUFS_MAX);
    s->wdist = hw->wfifo_tiles > 1 ? hw->wfifo_tiles - 1 : 1;
    /* A visit's drain must precede (in program order) the MATMULs of the visit nacc later,
     * which reuse its buffer: (nacc - 1) * kt steps after the visit's last. */
    s->dlag = (uint32_t)fw_min64(MXU_DEPTH, (uint64_t)(s->nacc - 1) * s->kt);
    s->visits = (uint64_t)s->mc * s->nt;
    s->steps = s->visits * s->kt;
    s->uses = s->kb == 1 ? s->mc : s->visits * s->kb;
    s->rw_next = s->drain_next = s->load_use = 0;
    s->load_j = s->load_r = 0;
    s->params_nt = FW_NO_INDEX;
}

/* Rows and first row of M chunk i: the first m % mc chunks have one row more. */
static uint32_t chunk_rows(const sched *s, uint32_t i)
{
    return s->g->m / s->mc + (i < s->g->m % s->mc);
}

static uint32_t chunk_start(const sched *s, uint32_t i)
{
    return i * (s->g->m / s->mc) + fw_min32(i, s->g->m % s->mc);
}

/* K-tiles in block i. */
static uint32_t block_tiles(const sched *s, uint32_t i)
{
    return fw_min32(s->kc, s->kt - i * s->kc);
}

/* Whether k-tile j of block b is the short bf16 tail, a group of its own. */
static bool is_short_tail(const sched *s, uint32_t b, uint32_t j)
{
    return s->short_tail && b == s->kb - 1 && j == block_tiles(s, b) - 1;
}

/* The first k-tile of the group of k-tile j of block b. */
static uint32_t group_first(const sched *s, uint32_t b, uint32_t j)
{
    return is_short_tail(s, b, j) ? j : j / s->host_tiles * s->host_tiles;
}

/* K-tiles in the group of k-tile j of block b: the interleave of its UB rows. */
static uint32_t group_tiles(const sched *s, uint32_t b, uint32_t j)
{
    const bool tail = s->short_tail && b == s->kb - 1;
    return is_short_tail(s, b, j) ? 1 : fw_group_size(block_tiles(s, b) - tail, s->host_tiles, j);
}

/* The UB row where k-tile j (within block b) of the slot's first row is. */
static uint32_t tile_ub(const sched *s, uint64_t u, uint32_t b, uint32_t j)
{
    const uint32_t first = group_first(s, b, j);
    return (uint32_t)(u % 2) * s->slot_rows + (first * s->tm + j - first) * s->e;
}

/* The chunk and K block that use u reads. */
static void use_block(const sched *s, uint64_t u, uint32_t *mc, uint32_t *kb)
{
    *mc = (uint32_t)(s->kb == 1 ? u : u / ((uint64_t)s->nt * s->kb));
    *kb = (uint32_t)(u % s->kb);
}

static uint64_t use_of_step(const sched *s, uint64_t t)
{
    const uint64_t v = t / s->kt;
    return s->kb == 1 ? v / s->nt : v * s->kb + t % s->kt / s->kc;
}

/* First step and number of steps of use u. */
static void use_span(const sched *s, uint64_t u, uint64_t *first, uint64_t *count)
{
    if (s->kb == 1) {
        *count = (uint64_t)s->nt * s->kt;
        *first = u * *count;
    } else {
        const uint32_t b = (uint32_t)(u % s->kb);
        *first = u / s->kb * s->kt + (uint64_t)b * s->kc;
        *count = block_tiles(s, b);
    }
}

/* Has k-tile j (within its block) of use u been loaded? */
static bool loaded(const sched *s, uint64_t u, uint32_t j)
{
    return s->load_use > u || (s->load_use == u && s->load_j > j);
}

/* RD_HOSTs of a group of k-tiles of a chunk of rows. */
static uint32_t group_pieces(uint32_t rows) { return fw_ceil_div(rows, PIECE_ROWS); }

/* The RD_HOST of the next piece of the next group of k-tiles of the block being loaded. */
static int load_tile(sched *s)
{
    const gemm *g = s->g;
    uint32_t mc, kb;
    use_block(s, s->load_use, &mc, &kb);
    const uint32_t k0 = (kb * s->kc + s->load_j) * s->n;
    const uint32_t tiles = group_tiles(s, kb, s->load_j), r = s->load_r;
    const uint32_t rows = fw_min32(PIECE_ROWS, chunk_rows(s, mc) - r);
    const uint64_t a = g->a + (((uint64_t)chunk_start(s, mc) + r) * g->lda + k0) * s->e;
    const uint32_t ub = tile_ub(s, s->load_use, kb, s->load_j) + r * tiles * s->e;
    const uint32_t len = fw_min32(tiles * s->n, g->k - k0) * s->e;
    if (is_short_tail(s, kb, s->load_j)) {
        /* Zero row pairs, then each A row into its pair's first row. */
        if (fw_push(s->c, TPU_OP_ZERO, 0, 2 * rows, 0, ub, 0, 0))
            return s->c->res->code;
        for (uint32_t i = 0; i < rows; i++)
            if (fw_push(s->c, TPU_OP_RD_HOST, 0, 1, (uint32_t)(a + (uint64_t)i * g->lda * 2),
                        ub + 2 * i, len, 0))
                return s->c->res->code;
    } else if (fw_push(s->c, TPU_OP_RD_HOST, 0, rows, (uint32_t)a, ub, len, g->lda * s->e)) {
        return s->c->res->code;
    }
    if ((s->load_r += rows) < chunk_rows(s, mc))
        return FW_OK;
    s->load_r = 0;
    if ((s->load_j += tiles) == block_tiles(s, kb)) {
        s->load_j = 0;
        s->load_use++;
    }
    return FW_OK;
}

static int load_until(sched *s, uint64_t u, uint32_t j)
{
    while (!loaded(s, u, j))
        if (load_tile(s))
            return s->c->res->code;
    return FW_OK;
}

/* The weight tile of the next step to fetch: its k rows (the core zero-pads the rest). Row-major
 * B: only the n columns, a request per row; tiled B: whole rows of the padded tile, contiguous,
 * so the load unit requests four per bus beat (the padding is zero). */
static int fetch_weights(sched *s)
{
    const gemm *g = s->g;
    const uint32_t kt = (uint32_t)(s->rw_next % s->kt), nt = (uint32_t)(s->rw_next / s->kt % s->nt);
    const uint32_t k0 = kt * s->n, n0 = nt * s->n;
    const bool tiled = g->flags & FW_GEMM_B_TILED;
    const uint32_t e = s->e, row = tiled ? s->n * e : g->ldb * e;
    const uint64_t a = tiled ? g->b + ((uint64_t)nt * s->kt + kt) * s->n * row
                             : g->b + ((uint64_t)k0 * g->ldb + n0) * e;
    s->rw_next++;
    return fw_push(s->c, TPU_OP_RD_WEIGHT, g->flags & FW_GEMM_BF16 ? TPU_F_BF16 : 0,
                   fw_min32(s->n, g->k - k0), (uint32_t)a, 0,
                   tiled ? row : fw_min32(s->n, g->n - n0) * e, row);
}

/* Write out visit v's accumulator buffer. */
static int drain(sched *s, uint64_t v)
{
    const gemm *g = s->g;
    fw_ctx *c = s->c;
    const uint32_t mc = (uint32_t)(v / s->nt), nt = (uint32_t)(v % s->nt);
    const uint32_t rows = chunk_rows(s, mc), n0 = nt * s->n, cols = fw_min32(s->n, g->n - n0);
    const uint32_t acc = (uint32_t)(v % s->nacc) * s->tm;
    const uint64_t m0 = chunk_start(s, mc);
    const bool bf16 = g->flags & FW_GEMM_BF16;
    const uint32_t act = (g->flags & FW_GEMM_BIAS ? TPU_F_BIAS : 0) |
                         (g->flags & FW_GEMM_RELU ? TPU_F_RELU : 0) | (bf16 ? TPU_F_BF16 : 0);
    s->drain_next = v + 1;
    /* bf16's fp32 bias alone: the mult and shift RD_PARAMS also loads are the bias again. */
    if ((g->flags & (FW_GEMM_BIAS | FW_GEMM_OUT_INT8)) && s->params_nt != nt) {
        s->params_nt = nt;
        if (fw_push(c, TPU_OP_RD_PARAMS, 0, 3, g->p + 4 * n0, 0, 4 * cols, bf16 ? 0 : 4 * g->n))
            return c->res->code;
    }
    if (!(g->flags & (FW_GEMM_OUT_INT8 | FW_GEMM_OUT_BF16)))
        return fw_push(c, TPU_OP_WR_HOST, TPU_F_SRC_ACC | act, rows,
                       (uint32_t)(g->c + (m0 * g->ldc + n0) * 4), acc, 4 * cols, 4 * g->ldc);
    /* Drain group: n-tiles nt - j .. + tiles of the chunk, a staging buffer each in turn, rows
     * of ustep UB rows (int8: tiles; bf16: 2, or 1 for at most N/2 columns). */
    const uint32_t tiles = fw_group_size(s->nt, s->ogroup, nt), j = nt % s->ogroup;
    const uint32_t g0 = n0 - j * s->n, width = fw_min32(tiles * s->n, g->n - g0) * s->oe;
    const uint32_t ustep = fw_ceil_div(width, s->n);
    const uint64_t group = (uint64_t)mc * fw_ceil_div(s->nt, s->ogroup) + nt / s->ogroup;
    const uint32_t stage = 2 * s->slot_rows + (uint32_t)(group % STAGE_BUFS) * s->stage_rows;
    if (fw_push(c, TPU_OP_ACTIVATE, act, rows, stage + j * s->oe, acc, ustep > 1 ? ustep : 0, 0))
        return c->res->code;
    if (j + 1 < tiles)
        return FW_OK;
    return fw_push(c, TPU_OP_WR_HOST, 0, rows, (uint32_t)(g->c + (m0 * g->ldc + g0) * s->oe), stage,
                   width, g->ldc * s->oe);
}

/* After step t of use u: keep the block of u one k-tile ahead of the MATMULs, then load the next
 * use's block at an even pace over u's steps, starting once the MXU is done with the slot's
 * previous block. */
static int load_ahead(sched *s, uint64_t t, uint64_t u)
{
    uint64_t first, count;
    use_span(s, u, &first, &count);
    if (s->load_use == u && load_until(s, u, (uint32_t)(t % s->kt % s->kc) + 1))
        return s->c->res->code;
    const uint64_t i = t - first, start = fw_min64(MXU_DEPTH, count - 1);
    if (s->load_use != u + 1 || s->load_use == s->uses || i < start)
        return FW_OK;
    /* Progress in RD_HOST pieces: groups before load_j (all but the last, and a short tail, have
     * host_tiles tiles). */
    uint32_t mc, kb;
    use_block(s, u + 1, &mc, &kb);
    const uint32_t pieces = group_pieces(chunk_rows(s, mc));
    const uint32_t tail = s->short_tail && kb == s->kb - 1;
    const uint64_t groups = fw_ceil_div(block_tiles(s, kb) - tail, s->host_tiles) + tail;
    const uint64_t due = groups * pieces * (i - start + 1) / (count - start);
    while (s->load_use == u + 1 &&
           (uint64_t)fw_ceil_div(s->load_j, s->host_tiles) * pieces + group_pieces(s->load_r) < due)
        if (load_tile(s))
            return s->c->res->code;
    return FW_OK;
}

static int run_gemm(fw_ctx *c, const gemm *g)
{
    sched s;
    plan(&s, c, g);
    const uint32_t mm = TPU_F_LOAD | (g->flags & FW_GEMM_A_UNSIGNED ? TPU_F_UNSIGNED : 0) |
                        (g->flags & FW_GEMM_BF16 ? TPU_F_BF16 : 0);
    while (s.rw_next < fw_min64(s.wdist, s.steps))
        if (fetch_weights(&s))
            return c->res->code;
    for (uint64_t t = 0; t < s.steps; t++) {
        const uint64_t v = t / s.kt, u = use_of_step(&s, t);
        const uint32_t k = (uint32_t)(t % s.kt);
        if (load_until(&s, u, k % s.kc))
            return c->res->code;
        uint32_t mc, kb;
        use_block(&s, u, &mc, &kb);
        const uint32_t step = group_tiles(&s, kb, k % s.kc) * s.e;
        if (fw_push(c, TPU_OP_MATMUL, mm | (k ? TPU_F_ACC : 0), chunk_rows(&s, mc),
                    tile_ub(&s, u, kb, k % s.kc), (uint32_t)(v % s.nacc) * s.tm, 0,
                    step > 1 ? step : 0))
            return c->res->code;
        while (s.rw_next < s.steps && s.rw_next <= t + s.wdist)
            if (fetch_weights(&s))
                return c->res->code;
        while (s.drain_next < s.visits && (s.drain_next + 1) * s.kt - 1 + s.dlag <= t)
            if (drain(&s, s.drain_next))
                return c->res->code;
        if (load_ahead(&s, t, u))
            return c->res->code;
    }
    while (s.drain_next < s.visits)
        if (drain(&s, s.drain_next))
            return c->res->code;
    return FW_OK;
}

int fw_gemm(fw_ctx *c, const uint8_t *raw, bool run)
{
    gemm g;
    if (decode_gemm(c, raw, &g) || (run && run_gemm(c, &g)))
        return c->res->code;
    return FW_OK;
}

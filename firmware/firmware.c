/* firmware.c - command-stream validation and the GEMM schedule (firmware.h,
 * docs/command-stream.md). Freestanding: no libc, no memory but fixed-size locals. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "firmware/firmware.h"
#include "rtl/tpu_isa.h" /* generated ISA and CSR definitions: enums and #defines only */

/* The MXU holds at most this many MATMULs (docs/isa.md "Execution"): an instruction pushed this
 * many MATMULs after another finds that one's UB reads and ACC writes complete. */
#define MXU_DEPTH 4u
/* M chunk size goal: enough chunks that the first chunk's A load and the last drain, which
 * overlap nothing, are short, but chunks long enough that a MATMUL outlasts fetching the next
 * weight tile (N rows plus the memory latency, which the firmware cannot see: 256 rows keep the
 * MXU over 97% busy on 512^3 at N = 16 up to a latency of 200 cycles). */
#define CHUNKS_GOAL 8u
#define CHUNK_MIN_ROWS 256u
/* Accumulator buffers the schedule rotates through, at most. */
#define ACC_BUFS_MAX 8u
/* UB staging buffers for int8 output (ACTIVATE writes one while WR_HOST drains the other). */
#define STAGE_BUFS 2u
/* Instruction field limits. */
#define ROWS_MAX TPU_INSN_ROWS_MASK
#define LOCAL_ROWS_MAX (TPU_INSN_B_MASK + 1u)
#define LEN_MAX TPU_INSN_LEN_MASK

typedef struct {
    uint32_t n, ub_rows, acc_rows, wfifo_tiles, mem_size;
} hw_cfg;

typedef struct {
    const fw_hal *hal;
    fw_result *res;
    hw_cfg hw;
    uint32_t addr, bytes; /* the stream */
    uint32_t buffers, commands;
    uint32_t cmd; /* command being validated or expanded, FW_NO_INDEX outside commands */
} fw_ctx;

/* A validated GEMM with operands resolved to device addresses. */
typedef struct {
    uint32_t flags, m, k, n;
    uint32_t a, lda, b, ldb, c, ldc, p;
} gemm;

static uint32_t le16(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const uint8_t *p)
{
    return le16(p) | le16(p + 2) << 16;
}

static uint32_t min32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static uint32_t ceil_div(uint32_t a, uint32_t b)
{
    return a / b + (a % b != 0);
}

static int fail(fw_ctx *c, int code, uint32_t buf, const char *field)
{
    c->res->code = code;
    c->res->cmd = code == FW_ERR_COMMAND || code == FW_ERR_CORE ? c->cmd : FW_NO_INDEX;
    c->res->buf = buf;
    c->res->field = field;
    return code;
}

static uint32_t reg(const fw_ctx *c, uint32_t offset)
{
    return c->hal->reg_read(c->hal->ctx, offset);
}

/* n bytes at offset off of the stream (inside it: the callers check). */
static int load(fw_ctx *c, uint32_t off, uint8_t *dst, uint32_t n)
{
    if (c->hal->mem_read(c->hal->ctx, c->addr + off, dst, n))
        return fail(c, FW_ERR_MEM, FW_NO_INDEX, "stream");
    return FW_OK;
}

static int core_error(fw_ctx *c)
{
    c->res->core_error = reg(c, TPU_CSR_ERROR_CODE);
    return fail(c, FW_ERR_CORE, FW_NO_INDEX, "STATUS");
}

static int push(fw_ctx *c, uint32_t op, uint32_t flags, uint32_t rows, uint32_t a, uint32_t b,
                uint32_t len, uint32_t stride)
{
    uint32_t w[TPU_INSN_WORDS] = {0};
#define PUT(NAME, name) TPU_INSN_PUT(w, NAME, name);
    TPU_FOR_EACH_FIELD(PUT)
#undef PUT
    while (!c->hal->iq_push(c->hal->ctx, w))
        if (reg(c, TPU_CSR_STATUS) & TPU_STATUS_ERROR)
            return core_error(c); /* a stopped core never frees the queue */
    c->res->insns++;
    return FW_OK;
}

/* ------------------------------------------------------------ validation -- */

static int read_hw(fw_ctx *c)
{
    hw_cfg *hw = &c->hw;
    if (reg(c, TPU_CSR_ID) != TPU_ID_MAGIC)
        return fail(c, FW_ERR_HW, FW_NO_INDEX, "ID");
    if (reg(c, TPU_CSR_VERSION) >> 16 != TPU_VERSION >> 16)
        return fail(c, FW_ERR_HW, FW_NO_INDEX, "VERSION");
    hw->n = reg(c, TPU_CSR_ARRAY_N);
    hw->ub_rows = reg(c, TPU_CSR_UB_ROWS);
    hw->acc_rows = reg(c, TPU_CSR_ACC_ROWS);
    hw->wfifo_tiles = reg(c, TPU_CSR_WFIFO_TILES);
    hw->mem_size = reg(c, TPU_CSR_MEM_SIZE);
    /* The schedule needs two A slots (plus two int8 staging rows) in the UB, two accumulator
     * buffers, and 4N bytes must fit the len field. */
    if (hw->n == 0 || 4 * (uint64_t)hw->n > LEN_MAX)
        return fail(c, FW_ERR_HW, FW_NO_INDEX, "ARRAY_N");
    if (hw->ub_rows < 2 + STAGE_BUFS || hw->ub_rows > LOCAL_ROWS_MAX)
        return fail(c, FW_ERR_HW, FW_NO_INDEX, "UB_ROWS");
    if (hw->acc_rows < 2 || hw->acc_rows > LOCAL_ROWS_MAX)
        return fail(c, FW_ERR_HW, FW_NO_INDEX, "ACC_ROWS");
    if (hw->wfifo_tiles == 0)
        return fail(c, FW_ERR_HW, FW_NO_INDEX, "WFIFO_TILES");
    if (reg(c, TPU_CSR_STATUS) & TPU_STATUS_ERROR)
        return core_error(c);
    return FW_OK;
}

static int read_header(fw_ctx *c)
{
    uint8_t h[FW_HEADER_BYTES];
    if (c->bytes < FW_HEADER_BYTES || (uint64_t)c->addr + c->bytes > c->hw.mem_size)
        return fail(c, FW_ERR_HEADER, FW_NO_INDEX, "bytes");
    if (load(c, 0, h, FW_HEADER_BYTES))
        return c->res->code;
    c->buffers = le32(h + FW_HDR_BUFFERS);
    c->commands = le32(h + FW_HDR_COMMANDS);
    if (le32(h + FW_HDR_MAGIC) != FW_STREAM_MAGIC)
        return fail(c, FW_ERR_HEADER, FW_NO_INDEX, "magic");
    if (le32(h + FW_HDR_VERSION) != FW_STREAM_VERSION)
        return fail(c, FW_ERR_HEADER, FW_NO_INDEX, "version");
    if (le32(h + FW_HDR_BYTES) != c->bytes)
        return fail(c, FW_ERR_HEADER, FW_NO_INDEX, "bytes");
    if (FW_HEADER_BYTES + (uint64_t)c->buffers * FW_BUFFER_BYTES > c->bytes)
        return fail(c, FW_ERR_HEADER, FW_NO_INDEX, "buffers");
    if (le32(h + FW_HDR_RESERVED))
        return fail(c, FW_ERR_HEADER, FW_NO_INDEX, "reserved");
    return FW_OK;
}

/* Buffer-table entry i (i < c->buffers). */
static int buffer(fw_ctx *c, uint32_t i, uint32_t *addr, uint32_t *size)
{
    uint8_t e[FW_BUFFER_BYTES];
    if (load(c, FW_HEADER_BYTES + i * FW_BUFFER_BYTES, e, FW_BUFFER_BYTES))
        return c->res->code;
    *addr = le32(e + FW_BUF_ADDR);
    *size = le32(e + FW_BUF_SIZE);
    return FW_OK;
}

static int check_buffers(fw_ctx *c)
{
    for (uint32_t i = 0; i < c->buffers; i++) {
        uint32_t addr, size;
        if (buffer(c, i, &addr, &size))
            return c->res->code;
        if (addr >= c->hw.mem_size)
            return fail(c, FW_ERR_BUFFER, i, "addr");
        if (size == 0 || (uint64_t)addr + size > c->hw.mem_size)
            return fail(c, FW_ERR_BUFFER, i, "size");
    }
    return FW_OK;
}

typedef struct {
    uint64_t lo, hi; /* device byte range [lo, hi) */
} range;

static bool overlap(range x, range y)
{
    return x.lo < y.hi && y.lo < x.hi;
}

/* Resolve the operand (buffer index at raw[f_buf], byte offset at raw[f_off]) covering `extent`
 * bytes. */
static int operand(fw_ctx *c, const uint8_t *raw, uint32_t f_buf, uint32_t f_off,
                   const char *n_buf, const char *n_off, uint64_t extent, uint32_t *addr,
                   range *r)
{
    const uint32_t i = le32(raw + f_buf), off = le32(raw + f_off);
    uint32_t base, size;
    if (i >= c->buffers)
        return fail(c, FW_ERR_COMMAND, FW_NO_INDEX, n_buf);
    if (buffer(c, i, &base, &size))
        return c->res->code;
    if (off + extent > size)
        return fail(c, FW_ERR_COMMAND, FW_NO_INDEX, n_off);
    *addr = base + off;
    r->lo = *addr;
    r->hi = *addr + extent;
    return FW_OK;
}

/* Bytes spanned by rows x width elements of esize bytes with a pitch of ld elements. */
static uint64_t extent(uint32_t rows, uint32_t ld, uint32_t width, uint32_t esize)
{
    return ((uint64_t)(rows - 1) * ld + width) * esize;
}

/* Bytes of a k x n B in N x N tiles (FW_GEMM_B_TILED). A padded side above 32 bits is larger
 * than any buffer: the result is then clamped where adding a 32-bit offset cannot wrap. */
static uint64_t tiled_extent(uint32_t k, uint32_t n, uint32_t tile)
{
    const uint64_t rows = (uint64_t)ceil_div(k, tile) * tile;
    const uint64_t cols = (uint64_t)ceil_div(n, tile) * tile;
    return rows > UINT32_MAX || cols > UINT32_MAX ? (uint64_t)1 << 33 : rows * cols;
}

static int decode_gemm(fw_ctx *c, const uint8_t *raw, gemm *g)
{
    g->flags = le32(raw + FW_GEMM_FLAGS);
    g->m = le32(raw + FW_GEMM_M);
    g->k = le32(raw + FW_GEMM_K);
    g->n = le32(raw + FW_GEMM_N);
    g->lda = le32(raw + FW_GEMM_LDA);
    g->ldb = le32(raw + FW_GEMM_LDB);
    g->ldc = le32(raw + FW_GEMM_LDC);
    const uint32_t c_size = g->flags & FW_GEMM_OUT_INT8 ? 1 : 4;
    const range stream = {c->addr, (uint64_t)c->addr + c->bytes};
    range a, b, out, p = {0, 0};

    if (g->flags & ~(uint32_t)FW_GEMM_FLAGS_ALL)
        return fail(c, FW_ERR_COMMAND, FW_NO_INDEX, "flags");
    if (!g->m)
        return fail(c, FW_ERR_COMMAND, FW_NO_INDEX, "m");
    if (!g->k)
        return fail(c, FW_ERR_COMMAND, FW_NO_INDEX, "k");
    if (!g->n)
        return fail(c, FW_ERR_COMMAND, FW_NO_INDEX, "n");
    if (g->lda < g->k)
        return fail(c, FW_ERR_COMMAND, FW_NO_INDEX, "lda");
    if (operand(c, raw, FW_GEMM_A_BUF, FW_GEMM_A_OFF, "a.buf", "a.off",
                extent(g->m, g->lda, g->k, 1), &g->a, &a))
        return c->res->code;
    const bool tiled = g->flags & FW_GEMM_B_TILED;
    if (tiled ? g->ldb != 0 : g->ldb < g->n)
        return fail(c, FW_ERR_COMMAND, FW_NO_INDEX, "ldb");
    if (operand(c, raw, FW_GEMM_B_BUF, FW_GEMM_B_OFF, "b.buf", "b.off",
                tiled ? tiled_extent(g->k, g->n, c->hw.n) : extent(g->k, g->ldb, g->n, 1),
                &g->b, &b))
        return c->res->code;
    /* The WR_HOST stride is ldc elements in bytes. */
    if (g->ldc < g->n || (uint64_t)g->ldc * c_size > UINT32_MAX)
        return fail(c, FW_ERR_COMMAND, FW_NO_INDEX, "ldc");
    if (operand(c, raw, FW_GEMM_C_BUF, FW_GEMM_C_OFF, "c.buf", "c.off",
                extent(g->m, g->ldc, g->n, c_size), &g->c, &out))
        return c->res->code;
    if (g->flags & (FW_GEMM_BIAS | FW_GEMM_OUT_INT8)) {
        if (operand(c, raw, FW_GEMM_P_BUF, FW_GEMM_P_OFF, "params.buf", "params.off",
                    12 * (uint64_t)g->n, &g->p, &p))
            return c->res->code;
    } else {
        g->p = 0;
        if (le32(raw + FW_GEMM_P_BUF))
            return fail(c, FW_ERR_COMMAND, FW_NO_INDEX, "params.buf");
        if (le32(raw + FW_GEMM_P_OFF))
            return fail(c, FW_ERR_COMMAND, FW_NO_INDEX, "params.off");
    }
    /* C is written tile by tile while A, B and the params are still being read, and the
     * firmware rereads the stream while earlier commands run. Bounding ranges: conservative
     * for interleaved layouts. */
    if (overlap(out, a))
        return fail(c, FW_ERR_COMMAND, FW_NO_INDEX, "c overlaps a");
    if (overlap(out, b))
        return fail(c, FW_ERR_COMMAND, FW_NO_INDEX, "c overlaps b");
    if (overlap(out, p))
        return fail(c, FW_ERR_COMMAND, FW_NO_INDEX, "c overlaps params");
    if (overlap(out, stream))
        return fail(c, FW_ERR_COMMAND, FW_NO_INDEX, "c overlaps stream");
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
 * block; uses alternate slots, and the next use's block is loaded one RD_HOST per k-tile,
 * spread evenly over the current use's steps. One k-tile (a chunk's rows) takes the load unit
 * about as long as one MATMUL takes the MXU, which the weight tiles already prefetched cover;
 * smaller RD_HOSTs measured worse, each paying the memory latency.
 *
 * Weights: RD_WEIGHT for step t + wdist is pushed right after MATMUL t, so wdist tiles are on
 * their way while the FIFO never holds more than WFIFO_TILES.
 *
 * Drains are pushed dlag steps after their visit's last MATMUL, so the MXU has finished writing
 * the buffer by the time the drain reaches the head of the queue, and before the buffer is
 * reused.
 */
typedef struct {
    fw_ctx *c;
    const gemm *g;
    uint32_t n;             /* array size */
    uint32_t kt, nt;        /* K and N tiles */
    uint32_t mc, tm;        /* M chunks, rows of the largest chunk */
    uint32_t kc, kb;        /* k-tiles per A block, blocks per K */
    uint32_t slot_rows;     /* UB rows of one A slot */
    uint32_t nacc;          /* accumulator buffers of tm rows */
    uint32_t wdist, dlag;       /* weight prefetch distance, drain lag (steps) */
    uint64_t steps, visits, uses;
    uint64_t rw_next;       /* next weight tile (step) to fetch */
    uint64_t drain_next;    /* next visit to drain */
    uint64_t load_use;      /* use whose block is being loaded */
    uint32_t load_j;        /* its next k-tile (within the block) */
    uint32_t params_nt;     /* n-tile whose params are loaded, FW_NO_INDEX if none */
} sched;

static void plan(sched *s, fw_ctx *c, const gemm *g)
{
    const hw_cfg *hw = &c->hw;
    const uint32_t n = hw->n, stage = g->flags & FW_GEMM_OUT_INT8 ? STAGE_BUFS : 0;
    const uint64_t acc_cap = min32(hw->acc_rows / 2, ROWS_MAX);
    s->c = c;
    s->g = g;
    s->n = n;
    s->kt = ceil_div(g->k, n);
    s->nt = ceil_div(g->n, n);
    /* Chunks of the goal size within the ACC and UB caps, with all of K resident (A read
     * once); if the caps leave chunks too short to stream without bubbles (2N-1 rows), short K
     * blocks reloaded per n-tile instead. */
    const uint64_t goal =
        max64(max64(CHUNK_MIN_ROWS, 4 * (uint64_t)n), ceil_div(g->m, CHUNKS_GOAL));
    uint64_t tm = min64(min64(g->m, min64(acc_cap, goal)),
                        hw->ub_rows / (2 * (uint64_t)s->kt + stage));
    uint64_t kc = s->kt;
    if (tm < min64(g->m, 2 * (uint64_t)n)) {
        tm = min64(min64(g->m, acc_cap), min64(2 * (uint64_t)n, hw->ub_rows / (2 + stage)));
        kc = min64(s->kt, (hw->ub_rows - stage * tm) / (2 * tm));
    }
    /* Even chunks and blocks: no short tail. */
    s->mc = ceil_div(g->m, (uint32_t)tm);
    s->tm = ceil_div(g->m, s->mc);
    s->kb = ceil_div(s->kt, (uint32_t)kc);
    s->kc = ceil_div(s->kt, s->kb);
    s->slot_rows = s->tm * s->kc;
    s->nacc = min32(hw->acc_rows / s->tm, ACC_BUFS_MAX);
    s->wdist = hw->wfifo_tiles > 1 ? hw->wfifo_tiles - 1 : 1;
    /* A visit's drain must precede (in program order) the MATMULs of the visit nacc later,
     * which reuse its buffer: (nacc - 1) * kt steps after the visit's last. */
    s->dlag = (uint32_t)min64(MXU_DEPTH, (uint64_t)(s->nacc - 1) * s->kt);
    s->visits = (uint64_t)s->mc * s->nt;
    s->steps = s->visits * s->kt;
    s->uses = s->kb == 1 ? s->mc : s->visits * s->kb;
    s->rw_next = s->drain_next = s->load_use = 0;
    s->load_j = 0;
    s->params_nt = FW_NO_INDEX;
}

/* Rows and first row of M chunk i: the first m % mc chunks have one row more. */
static uint32_t chunk_rows(const sched *s, uint32_t i)
{
    return s->g->m / s->mc + (i < s->g->m % s->mc);
}

static uint32_t chunk_start(const sched *s, uint32_t i)
{
    return i * (s->g->m / s->mc) + min32(i, s->g->m % s->mc);
}

/* K-tiles in block i. */
static uint32_t block_tiles(const sched *s, uint32_t i)
{
    return min32(s->kc, s->kt - i * s->kc);
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

/* The RD_HOST of the next k-tile of the block being loaded. */
static int load_tile(sched *s)
{
    const gemm *g = s->g;
    uint32_t mc, kb;
    use_block(s, s->load_use, &mc, &kb);
    const uint32_t k0 = (kb * s->kc + s->load_j) * s->n;
    const uint64_t a = g->a + (uint64_t)chunk_start(s, mc) * g->lda + k0;
    const uint32_t ub = (uint32_t)(s->load_use % 2) * s->slot_rows + s->load_j * s->tm;
    if (push(s->c, TPU_OP_RD_HOST, 0, chunk_rows(s, mc), (uint32_t)a, ub,
             min32(s->n, g->k - k0), g->lda))
        return s->c->res->code;
    if (++s->load_j == block_tiles(s, kb)) {
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

/* The weight tile of the next step to fetch: only its k x n part, also when B is tiled (the
 * core zero-pads the rest, so edge tiles cost fewer memory requests). */
static int fetch_weights(sched *s)
{
    const gemm *g = s->g;
    const uint32_t kt = (uint32_t)(s->rw_next % s->kt), nt = (uint32_t)(s->rw_next / s->kt % s->nt);
    const uint32_t k0 = kt * s->n, n0 = nt * s->n;
    const bool tiled = g->flags & FW_GEMM_B_TILED;
    const uint64_t a = tiled ? g->b + ((uint64_t)nt * s->kt + kt) * s->n * s->n
                             : g->b + (uint64_t)k0 * g->ldb + n0;
    s->rw_next++;
    return push(s->c, TPU_OP_RD_WEIGHT, 0, min32(s->n, g->k - k0), (uint32_t)a, 0,
                min32(s->n, g->n - n0), tiled ? s->n : g->ldb);
}

/* Write out visit v's accumulator buffer. */
static int drain(sched *s, uint64_t v)
{
    const gemm *g = s->g;
    fw_ctx *c = s->c;
    const uint32_t mc = (uint32_t)(v / s->nt), nt = (uint32_t)(v % s->nt);
    const uint32_t rows = chunk_rows(s, mc), n0 = nt * s->n, cols = min32(s->n, g->n - n0);
    const uint32_t acc = (uint32_t)(v % s->nacc) * s->tm;
    const uint64_t m0 = chunk_start(s, mc);
    const uint32_t act = (g->flags & FW_GEMM_BIAS ? TPU_F_BIAS : 0) |
                         (g->flags & FW_GEMM_RELU ? TPU_F_RELU : 0);
    s->drain_next = v + 1;
    if ((g->flags & (FW_GEMM_BIAS | FW_GEMM_OUT_INT8)) && s->params_nt != nt) {
        s->params_nt = nt;
        if (push(c, TPU_OP_RD_PARAMS, 0, 3, g->p + 4 * n0, 0, 4 * cols, 4 * g->n))
            return c->res->code;
    }
    if (!(g->flags & FW_GEMM_OUT_INT8))
        return push(c, TPU_OP_WR_HOST, TPU_F_SRC_ACC | act, rows,
                    (uint32_t)(g->c + (m0 * g->ldc + n0) * 4), acc, 4 * cols, 4 * g->ldc);
    const uint32_t stage = 2 * s->slot_rows + (uint32_t)(v % STAGE_BUFS) * s->tm;
    if (push(c, TPU_OP_ACTIVATE, act, rows, stage, acc, 0, 0))
        return c->res->code;
    return push(c, TPU_OP_WR_HOST, 0, rows, (uint32_t)(g->c + m0 * g->ldc + n0), stage, cols,
                g->ldc);
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
    const uint64_t i = t - first, start = min64(MXU_DEPTH, count - 1);
    if (s->load_use != u + 1 || s->load_use == s->uses || i < start)
        return FW_OK;
    const uint64_t due = block_tiles(s, (uint32_t)((u + 1) % s->kb)) * (i - start + 1) /
                         (count - start);
    while (s->load_use == u + 1 && s->load_j < due)
        if (load_tile(s))
            return s->c->res->code;
    return FW_OK;
}

static int run_gemm(fw_ctx *c, const gemm *g)
{
    sched s;
    plan(&s, c, g);
    const uint32_t mm = TPU_F_LOAD | (g->flags & FW_GEMM_A_UNSIGNED ? TPU_F_UNSIGNED : 0);
    while (s.rw_next < min64(s.wdist, s.steps))
        if (fetch_weights(&s))
            return c->res->code;
    for (uint64_t t = 0; t < s.steps; t++) {
        const uint64_t v = t / s.kt, u = use_of_step(&s, t);
        const uint32_t k = (uint32_t)(t % s.kt);
        if (load_until(&s, u, k % s.kc))
            return c->res->code;
        uint32_t mc, kb;
        use_block(&s, u, &mc, &kb);
        if (push(c, TPU_OP_MATMUL, mm | (k ? TPU_F_ACC : 0), chunk_rows(&s, mc),
                 (uint32_t)(u % 2) * s.slot_rows + k % s.kc * s.tm,
                 (uint32_t)(v % s.nacc) * s.tm, 0, 0))
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

/* -------------------------------------------------------------- the walk -- */

/* Walk the commands: validate each (charging its decode cost) or, with run, expand each. */
static int walk(fw_ctx *c, bool run)
{
    uint32_t off = FW_HEADER_BYTES + c->buffers * FW_BUFFER_BYTES;
    for (c->cmd = 0; c->cmd < c->commands; c->cmd++) {
        uint8_t raw[FW_GEMM_BYTES];
        if (!run)
            c->hal->spend(c->hal->ctx, FW_CYCLES_COMMAND);
        if (c->bytes - off < 4)
            return fail(c, FW_ERR_COMMAND, FW_NO_INDEX, "bytes");
        if (load(c, off, raw, 4))
            return c->res->code;
        const uint32_t op = le16(raw + FW_CMD_OP), bytes = le16(raw + FW_CMD_BYTES);
        if (bytes < 4 || bytes % 4 || bytes > c->bytes - off)
            return fail(c, FW_ERR_COMMAND, FW_NO_INDEX, "bytes");
        if (op != FW_CMD_GEMM)
            return fail(c, FW_ERR_COMMAND, FW_NO_INDEX, "op");
        if (bytes != FW_GEMM_BYTES)
            return fail(c, FW_ERR_COMMAND, FW_NO_INDEX, "bytes");
        gemm g;
        if (load(c, off, raw, FW_GEMM_BYTES) || decode_gemm(c, raw, &g))
            return c->res->code;
        if (run && (run_gemm(c, &g) || push(c, TPU_OP_SYNC, 0, 0, 0, 0, 0, 0)))
            return c->res->code;
        off += bytes;
    }
    c->cmd = FW_NO_INDEX;
    if (off != c->bytes)
        return fail(c, FW_ERR_HEADER, FW_NO_INDEX, "commands");
    return FW_OK;
}

int fw_run(const fw_hal *hal, uint32_t stream_addr, uint32_t stream_bytes, fw_result *res)
{
    fw_ctx c = {.hal = hal, .res = res, .addr = stream_addr, .bytes = stream_bytes,
                .cmd = FW_NO_INDEX};
    res->code = FW_OK;
    res->cmd = res->buf = FW_NO_INDEX;
    res->field = "";
    res->core_error = 0;
    res->insns = 0;
    hal->spend(hal->ctx, FW_CYCLES_STREAM);
    if (read_hw(&c) || read_header(&c) || check_buffers(&c) || walk(&c, false) ||
        walk(&c, true))
        return res->code;
    return push(&c, TPU_OP_HALT, 0, 0, 0, 0, 0, 0);
}

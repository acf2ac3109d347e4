/* stream_fuzz.c - libFuzzer target for the firmware's command-stream validation
 * (firmware/firmware.h, docs/command-stream.md), with the golden model as the device. The input
 * is one configuration byte (the array size) and then device memory, whose first bytes are the
 * stream. Nothing but two outcomes may come out: the stream is refused with a named field (and
 * nothing was pushed to the core), or it runs without a core error and leaves device memory
 * exactly as a plain C reference of its GEMM and CONV2D commands, run one after the other, does
 * (bf16 ones by sim/fp.h's operations in the array's K order: each K tile's N rows summed from +0,
 * the tiles' sums added in order). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "firmware/firmware.h"
#include "io/tpuio.h"
#include "sim/fp.h"
#include "sim/tpusim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MEM_SIZE 65536u

static void check(bool ok)
{
    if (!ok)
        abort();
}

typedef struct {
    tpusim_golden *g;
    tpusim_hwcfg hw;
    int error;      /* the golden model's error code once one occurred */
    uint64_t insns; /* instructions executed */
} device;

static int hal_push(void *ctx, const uint32_t w[4])
{
    device *d = ctx;
    tpusim_insn insn;
    memcpy(insn.w, w, sizeof insn.w);
    if (!d->error)
        d->error = tpusim_golden_exec(d->g, &insn);
    d->insns++;
    return 1;
}

static uint32_t hal_reg_read(void *ctx, uint32_t offset)
{
    const device *d = ctx;
    switch (offset) {
    case TPU_CSR_ID: return TPU_ID_MAGIC;
    case TPU_CSR_VERSION: return TPU_VERSION;
    case TPU_CSR_ARRAY_N: return d->hw.array_n;
    case TPU_CSR_UB_ROWS: return d->hw.ub_rows;
    case TPU_CSR_ACC_ROWS: return d->hw.acc_rows;
    case TPU_CSR_WFIFO_TILES: return d->hw.wfifo_tiles;
    case TPU_CSR_IQ_DEPTH: return d->hw.iq_depth;
    case TPU_CSR_MEM_SIZE: return (uint32_t)d->hw.mem_size;
    case TPU_CSR_STATUS: return d->error ? TPU_STATUS_ERROR : 0;
    case TPU_CSR_ERROR_CODE: return (uint32_t)d->error;
    default: return 0;
    }
}

static int hal_mem_read(void *ctx, uint32_t addr, void *dst, uint32_t n)
{
    device *d = ctx;
    if ((uint64_t)addr + n > d->hw.mem_size)
        return -1;
    memcpy(dst, tpusim_golden_mem(d->g) + addr, n);
    return 0;
}

static void hal_spend(void *ctx, uint32_t cycles)
{
    (void)ctx;
    (void)cycles;
}

static uint32_t rd32(const uint8_t *m, uint64_t at) { return (uint32_t)tpuio_get_le(m + at, 4); }

/* ACTIVATE's requantization (docs/isa.md): round half away from zero, clamp to int8. */
static int8_t requant(int32_t x, int32_t mult, uint32_t shift)
{
    const int64_t p = (int64_t)x * mult;
    int64_t q = p;
    if (shift) {
        const uint64_t half = 1ull << (shift - 1);
        q = (int64_t)((uint64_t)p + (p < 0 ? half - 1 : half)) >> shift;
    }
    return (int8_t)(q < -128 ? -128 : q > 127 ? 127 : q);
}

/* The address of command c's operand (buffer index at c + buf, byte offset at c + off), through
 * the stream's buffer table, which starts at address 0. */
static uint64_t operand(const uint8_t *m, const uint8_t *c, uint32_t buf, uint32_t off)
{
    return rd32(m, FW_HEADER_BYTES + (uint64_t)rd32(c, buf) * FW_BUFFER_BYTES) + rd32(c, off);
}

/* Column j's bias and ReLU of an accumulator, as the command's flags say (CONV2D has GEMM's bits);
 * the parameters at p are int32 bias[n], mult[n], shift[n] (n columns). */
static int32_t activate(uint32_t acc, const uint8_t *m, uint32_t flags, uint64_t p, uint32_t j)
{
    if (flags & FW_GEMM_BIAS)
        acc += rd32(m, p + 4ull * j);
    const int32_t v = (int32_t)acc;
    return (flags & FW_GEMM_RELU) && v < 0 ? 0 : v;
}

/* Column j's requantization (OUT_INT8): bits 5:0 of shift are used. */
static int8_t requant_col(int32_t v, const uint8_t *m, uint64_t p, uint32_t n, uint32_t j)
{
    return requant(v, (int32_t)rd32(m, p + 4ull * (n + j)), rd32(m, p + 4ull * (2 * n + j)) & 63);
}

static uint16_t rd16(const uint8_t *m, uint64_t at) { return (uint16_t)tpuio_get_le(m + at, 2); }

/* bf16: fp32 bias (p: bias[n]) and ReLU of column j's sum. */
static uint32_t activate_bf16(uint32_t acc, const uint8_t *m, uint32_t flags, uint64_t p,
                              uint32_t j)
{
    if (flags & FW_GEMM_BIAS)
        acc = tpusim_fp32_add(acc, rd32(m, p + 4ull * j));
    return flags & FW_GEMM_RELU ? tpusim_fp32_relu(acc) : acc;
}

/* Writes an fp32 result as C's element i: fp32, or bf16 with OUT_BF16. */
static void put_float(uint8_t *m, uint64_t out, uint64_t i, uint32_t flags, uint32_t x)
{
    if (flags & FW_GEMM_OUT_BF16)
        tpuio_put_le(m + out + 2 * i, tpusim_fp32_to_bf16(x), 2);
    else
        tpuio_put_le(m + out + 4 * i, x, 4);
}

/* A bf16 GEMM command c, as reference_gemm. */
static void reference_gemm_bf16(uint8_t *m, const uint8_t *c, uint32_t tile)
{
    const uint32_t flags = rd32(c, FW_GEMM_FLAGS), M = rd32(c, FW_GEMM_M), K = rd32(c, FW_GEMM_K);
    const uint32_t N = rd32(c, FW_GEMM_N);
    const uint32_t lda = rd32(c, FW_GEMM_LDA), ldb = rd32(c, FW_GEMM_LDB);
    const uint32_t ldc = rd32(c, FW_GEMM_LDC);
    const uint64_t a = operand(m, c, FW_GEMM_A_BUF, FW_GEMM_A_OFF);
    const uint64_t b = operand(m, c, FW_GEMM_B_BUF, FW_GEMM_B_OFF);
    const uint64_t out = operand(m, c, FW_GEMM_C_BUF, FW_GEMM_C_OFF);
    const uint64_t p = flags & FW_GEMM_BIAS ? operand(m, c, FW_GEMM_P_BUF, FW_GEMM_P_OFF) : 0;
    const uint32_t kt = (K + tile - 1) / tile;
    uint32_t *res = malloc((size_t)M * N * sizeof *res);
    check(res != NULL);
    for (uint32_t i = 0; i < M; i++)
        for (uint32_t j = 0; j < N; j++) {
            uint32_t acc = 0;
            for (uint32_t k0 = 0; k0 < K; k0 += tile) {
                uint32_t sum = 0;
                for (uint32_t k = k0; k < K && k < k0 + tile; k++) {
                    const uint64_t at =
                        flags & FW_GEMM_B_TILED
                            ? b + (((uint64_t)(j / tile) * kt + k / tile) * tile * tile +
                                   (k % tile) * tile + j % tile) *
                                      2
                            : b + ((uint64_t)k * ldb + j) * 2;
                    sum = tpusim_fp32_add(
                        sum,
                        tpusim_bf16_mul(rd16(m, a + ((uint64_t)i * lda + k) * 2), rd16(m, at)));
                }
                acc = k0 ? tpusim_fp32_add(acc, sum) : sum;
            }
            res[(size_t)i * N + j] = activate_bf16(acc, m, flags, p, j);
        }
    for (uint32_t i = 0; i < M; i++)
        for (uint32_t j = 0; j < N; j++)
            put_float(m, out, (uint64_t)i * ldc + j, flags, res[(size_t)i * N + j]);
    free(res);
}

/* Runs GEMM command c (validated by the firmware) on memory m, from the definition. */
static void reference_gemm(uint8_t *m, const uint8_t *c, uint32_t tile)
{
    if (rd32(c, FW_GEMM_FLAGS) & FW_GEMM_BF16) {
        reference_gemm_bf16(m, c, tile);
        return;
    }
    const uint32_t flags = rd32(c, FW_GEMM_FLAGS), M = rd32(c, FW_GEMM_M), K = rd32(c, FW_GEMM_K);
    const uint32_t N = rd32(c, FW_GEMM_N);
    const uint32_t lda = rd32(c, FW_GEMM_LDA), ldb = rd32(c, FW_GEMM_LDB);
    const uint32_t ldc = rd32(c, FW_GEMM_LDC);
    const uint64_t a = operand(m, c, FW_GEMM_A_BUF, FW_GEMM_A_OFF);
    const uint64_t b = operand(m, c, FW_GEMM_B_BUF, FW_GEMM_B_OFF);
    const uint64_t out = operand(m, c, FW_GEMM_C_BUF, FW_GEMM_C_OFF);
    const bool params = flags & (FW_GEMM_BIAS | FW_GEMM_OUT_INT8);
    const uint64_t p = params ? operand(m, c, FW_GEMM_P_BUF, FW_GEMM_P_OFF) : 0;
    const uint32_t kt = (K + tile - 1) / tile;
    int32_t *res = malloc((size_t)M * N * sizeof *res);
    check(res != NULL);
    for (uint32_t i = 0; i < M; i++)
        for (uint32_t j = 0; j < N; j++) {
            uint32_t sum = 0;
            for (uint32_t k = 0; k < K; k++) {
                const uint8_t av = m[a + (uint64_t)i * lda + k];
                const int32_t x = flags & FW_GEMM_A_UNSIGNED ? av : (int8_t)av;
                const uint64_t at = flags & FW_GEMM_B_TILED
                                        ? b + ((uint64_t)(j / tile) * kt + k / tile) * tile * tile +
                                              (k % tile) * tile + j % tile
                                        : b + (uint64_t)k * ldb + j;
                sum += (uint32_t)(x * (int8_t)m[at]);
            }
            const int32_t v = activate(sum, m, flags, p, j);
            res[(size_t)i * N + j] = flags & FW_GEMM_OUT_INT8 ? requant_col(v, m, p, N, j) : v;
        }
    /* C is written after all of it is computed: validation keeps it clear of A, B and params. */
    for (uint32_t i = 0; i < M; i++)
        for (uint32_t j = 0; j < N; j++) {
            const int32_t v = res[(size_t)i * N + j];
            if (flags & FW_GEMM_OUT_INT8)
                m[out + (uint64_t)i * ldc + j] = (uint8_t)v;
            else
                tpuio_put_le(m + out + ((uint64_t)i * ldc + j) * 4, (uint32_t)v, 4);
        }
    free(res);
}

/* A validated CONV2D command's fields and operand addresses. */
typedef struct {
    uint32_t flags, batch, h, w, c, kh, kw, cout, sh, sw, pt, pb, pl, pr, ph, pw, psh, psw;
    uint32_t oh, ow, ohp, owp; /* convolution output, pooled output (= it without POOLING) */
    uint64_t in, k, out, p;
    bool packed;     /* the kernel's K tiles follow packed runs, else pixels */
    uint32_t runs;   /* packed: K tiles per kernel row, ceil(kw * c / N) */
    uint32_t cc;     /* pixels: K tiles per kernel pixel, ceil(c / N) */
    uint64_t ktiles; /* K tiles in all */
} conv_cmd;

/* Kernel weight (dy, dx, channel ci, output channel o) of v, from its tile in memory: tile
 * (kt, o / N) at byte (o / N * KT + kt) * N * N, row r, column o % N. */
static int8_t kernel_at(const uint8_t *m, const conv_cmd *v, uint32_t tile, uint32_t dy,
                        uint32_t dx, uint32_t ci, uint32_t o)
{
    uint64_t kt, r;
    if (v->packed) { /* byte dx * c + ci of kernel row dy's run, cut in N-byte pieces */
        const uint64_t byte = (uint64_t)dx * v->c + ci;
        kt = (uint64_t)dy * v->runs + byte / tile;
        r = byte % tile;
    } else { /* channel ci of kernel pixel (dy, dx), cut in N-channel pieces */
        kt = ((uint64_t)dy * v->kw + dx) * v->cc + ci / tile;
        r = ci % tile;
    }
    return (int8_t)
        m[v->k + ((uint64_t)(o / tile) * v->ktiles + kt) * tile * tile + r * tile + o % tile];
}

/* Convolution output row oy of image b, every column and output channel, after bias and ReLU:
 * row[ox * cout + o]. Padding is zeros: it adds nothing to the sums. */
static void conv_row(const uint8_t *m, const conv_cmd *v, uint32_t tile, uint32_t b, uint32_t oy,
                     int32_t *row)
{
    for (uint32_t ox = 0; ox < v->ow; ox++)
        for (uint32_t o = 0; o < v->cout; o++) {
            uint32_t sum = 0; /* int32 with wrap-around */
            for (uint32_t dy = 0; dy < v->kh; dy++) {
                const int64_t y = (int64_t)oy * v->sh + dy - v->pt;
                if (y < 0 || y >= v->h)
                    continue;
                for (uint32_t dx = 0; dx < v->kw; dx++) {
                    const int64_t x = (int64_t)ox * v->sw + dx - v->pl;
                    if (x < 0 || x >= v->w)
                        continue;
                    const uint64_t pixel = v->in + (((uint64_t)b * v->h + y) * v->w + x) * v->c;
                    for (uint32_t ci = 0; ci < v->c; ci++) {
                        const uint8_t a = m[pixel + ci];
                        const int32_t av = v->flags & FW_CONV_A_UNSIGNED ? a : (int8_t)a;
                        sum += (uint32_t)(av * kernel_at(m, v, tile, dy, dx, ci, o));
                    }
                }
            }
            row[(size_t)ox * v->cout + o] = activate(sum, m, v->flags, v->p, o);
        }
}

/* bf16: conv output row oy of image b as fp32 bits after bias and ReLU (pixel order: K tiles
 * (dy, dx, channel tile) in that order, each summed from +0; padding is zero activations, which
 * meet the kernel's inf and NaN as the array does). */
static void conv_row_bf16(const uint8_t *m, const conv_cmd *v, uint32_t tile, uint32_t b,
                          uint32_t oy, uint32_t *row)
{
    for (uint32_t ox = 0; ox < v->ow; ox++)
        for (uint32_t o = 0; o < v->cout; o++) {
            uint32_t acc = 0;
            for (uint32_t dy = 0; dy < v->kh; dy++)
                for (uint32_t dx = 0; dx < v->kw; dx++)
                    for (uint32_t c0 = 0; c0 < v->c; c0 += tile) {
                        const int64_t y = (int64_t)oy * v->sh + dy - v->pt;
                        const int64_t x = (int64_t)ox * v->sw + dx - v->pl;
                        const bool inside = y >= 0 && y < v->h && x >= 0 && x < v->w;
                        const uint64_t pixel =
                            inside ? v->in +
                                         (((uint64_t)b * v->h + (uint64_t)y) * v->w + (uint64_t)x) *
                                             v->c * 2
                                   : 0;
                        const uint64_t kt = ((uint64_t)dy * v->kw + dx) * v->cc + c0 / tile;
                        uint32_t sum = 0;
                        for (uint32_t ci = c0; ci < v->c && ci < c0 + tile; ci++) {
                            const uint16_t a = inside ? rd16(m, pixel + 2ull * ci) : 0;
                            const uint16_t w = rd16(
                                m, v->k + (((uint64_t)(o / tile) * v->ktiles + kt) * tile * tile +
                                           (ci % tile) * tile + o % tile) *
                                              2);
                            sum = tpusim_fp32_add(sum, tpusim_bf16_mul(a, w));
                        }
                        acc = kt ? tpusim_fp32_add(acc, sum) : sum;
                    }
            row[(size_t)ox * v->cout + o] = activate_bf16(acc, m, v->flags, v->p, o);
        }
}

/* Runs CONV2D command c (validated by the firmware) on memory m, from the definition
 * (firmware.h): NHWC input, the kernel read back from its tiles, GEMM's bias and ReLU, then for
 * int8 output the maximum over each pooling window (a 1 x 1 window without POOLING) requantized,
 * as ACTIVATE.POOL does (the maximum of relu(acc + bias), then requantization). */
static void reference_conv(uint8_t *m, const uint8_t *c, uint32_t tile)
{
    conv_cmd v;
    v.flags = rd32(c, FW_CONV_FLAGS);
    v.batch = rd32(c, FW_CONV_BATCH);
    v.h = rd32(c, FW_CONV_H);
    v.w = rd32(c, FW_CONV_W);
    v.c = rd32(c, FW_CONV_C);
    v.kh = rd32(c, FW_CONV_KH);
    v.kw = rd32(c, FW_CONV_KW);
    v.cout = rd32(c, FW_CONV_COUT);
    v.sh = (uint32_t)tpuio_get_le(c + FW_CONV_STRIDE, 2);
    v.sw = (uint32_t)tpuio_get_le(c + FW_CONV_STRIDE + 2, 2);
    v.pt = c[FW_CONV_PAD], v.pb = c[FW_CONV_PAD + 1];
    v.pl = c[FW_CONV_PAD + 2], v.pr = c[FW_CONV_PAD + 3];
    const bool pool = v.flags & FW_CONV_POOLING;
    v.ph = pool ? c[FW_CONV_POOL] : 1, v.pw = pool ? c[FW_CONV_POOL + 1] : 1;
    v.psh = pool ? c[FW_CONV_POOL + 2] : 1, v.psw = pool ? c[FW_CONV_POOL + 3] : 1;
    v.oh = (v.h + v.pt + v.pb - v.kh) / v.sh + 1;
    v.ow = (v.w + v.pl + v.pr - v.kw) / v.sw + 1;
    v.ohp = (v.oh - v.ph) / v.psh + 1;
    v.owp = (v.ow - v.pw) / v.psw + 1;
    v.in = operand(m, c, FW_CONV_IN_BUF, FW_CONV_IN_OFF);
    v.k = operand(m, c, FW_CONV_K_BUF, FW_CONV_K_OFF);
    v.out = operand(m, c, FW_CONV_OUT_BUF, FW_CONV_OUT_OFF);
    v.p = v.flags & (FW_CONV_BIAS | FW_CONV_OUT_INT8) ? operand(m, c, FW_CONV_P_BUF, FW_CONV_P_OFF)
                                                      : 0;
    const bool bf16 = v.flags & FW_CONV_BF16;
    v.packed = !bf16 && v.pl == 0 && v.pr == 0 && v.c % tile != 0;
    v.runs = (v.kw * v.c + tile - 1) / tile;
    v.cc = (v.c + tile - 1) / tile;
    v.ktiles = v.packed ? (uint64_t)v.kh * v.runs : (uint64_t)v.kh * v.kw * v.cc;

    const bool i8 = v.flags & FW_CONV_OUT_INT8;
    const size_t outs = (size_t)v.batch * v.ohp * v.owp * v.cout, row_len = (size_t)v.ow * v.cout;
    int32_t *res = malloc(outs * sizeof *res);
    /* The rows of the last windows: conv row oy in slot oy % ph, which windows overlapping in
     * rows (psh < ph) share instead of computing them again. */
    int32_t *rows = malloc((size_t)v.ph * row_len * sizeof *rows);
    uint32_t *held = malloc(v.ph * sizeof *held);
    check(res && rows && held);
    for (uint32_t b = 0; b < v.batch; b++) {
        for (uint32_t i = 0; i < v.ph; i++)
            held[i] = UINT32_MAX;
        for (uint32_t py = 0; py < v.ohp; py++) {
            for (uint32_t i = 0; i < v.ph; i++) {
                const uint32_t oy = py * v.psh + i, slot = oy % v.ph;
                if (held[slot] != oy && bf16)
                    conv_row_bf16(m, &v, tile, b, oy, (uint32_t *)(rows + slot * row_len));
                else if (held[slot] != oy)
                    conv_row(m, &v, tile, b, oy, rows + slot * row_len);
                held[slot] = oy;
            }
            for (uint32_t px = 0; px < v.owp; px++)
                for (uint32_t o = 0; o < v.cout; o++) {
                    int32_t mx = INT32_MIN;
                    for (uint32_t i = 0; i < v.ph; i++)
                        for (uint32_t j = 0; j < v.pw; j++) {
                            const int32_t x = rows[((py * v.psh + i) % v.ph) * row_len +
                                                   (size_t)(px * v.psw + j) * v.cout + o];
                            if (bf16) /* fp32 bits: fp32_max in window order */
                                mx = i || j ? (int32_t)tpusim_fp32_max((uint32_t)mx, (uint32_t)x)
                                            : x;
                            else
                                mx = x > mx ? x : mx;
                        }
                    const size_t at = (((size_t)b * v.ohp + py) * v.owp + px) * v.cout + o;
                    res[at] = i8 ? requant_col(mx, m, v.p, v.cout, o) : mx;
                }
        }
    }
    /* NHWC output, written after all of it is computed (validation keeps it clear of the input,
     * kernel and parameters). */
    for (size_t i = 0; i < outs; i++)
        if (i8)
            m[v.out + i] = (uint8_t)res[i];
        else
            put_float(m, v.out, i, v.flags, (uint32_t)res[i]);
    free(held);
    free(rows);
    free(res);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 + FW_HEADER_BYTES)
        return 0;
    device d = {0};
    d.hw.array_n = data[0] & 1 ? 8 : 4;
    d.hw.ub_rows = 512;
    d.hw.acc_rows = 256;
    d.hw.wfifo_tiles = 4;
    d.hw.iq_depth = 32;
    d.hw.mem_size = MEM_SIZE;
    d.g = tpusim_golden_create(&d.hw);
    check(d.g != NULL);
    uint8_t *mem = tpusim_golden_mem(d.g);
    const size_t n = size - 1 < MEM_SIZE ? size - 1 : MEM_SIZE;
    memcpy(mem, data + 1, n);
    uint8_t *before = malloc(MEM_SIZE);
    check(before != NULL);
    memcpy(before, mem, MEM_SIZE);

    /* The stream's length as its header claims it (the driver passes the allocation's). */
    uint32_t bytes = rd32(mem, FW_HDR_BYTES);
    if (bytes > MEM_SIZE)
        bytes = (uint32_t)n;
    const fw_hal hal = {&d, hal_push, hal_reg_read, hal_mem_read, hal_spend};
    fw_result r;
    const int code = fw_run(&hal, 0, bytes, &r);
    check(code == r.code);
    if (code != FW_OK) {
        check(code == FW_ERR_HEADER || code == FW_ERR_BUFFER || code == FW_ERR_COMMAND);
        check(r.field && r.field[0] && d.insns == 0 && r.insns == 0);
        check(memcmp(before, mem, MEM_SIZE) == 0);
    } else {
        check(d.error == TPU_FAULT_NONE && d.insns == r.insns);
        const uint32_t buffers = rd32(before, FW_HDR_BUFFERS);
        const uint32_t commands = rd32(before, FW_HDR_COMMANDS);
        uint64_t off = FW_HEADER_BYTES + (uint64_t)buffers * FW_BUFFER_BYTES;
        for (uint32_t i = 0; i < commands; i++) {
            const uint32_t op = (uint32_t)tpuio_get_le(before + off, 2);
            check(op == FW_CMD_GEMM || op == FW_CMD_CONV2D);
            if (op == FW_CMD_GEMM)
                reference_gemm(before, before + off, d.hw.array_n);
            else
                reference_conv(before, before + off, d.hw.array_n);
            off += tpuio_get_le(before + off + FW_CMD_BYTES, 2);
        }
        check(memcmp(before, mem, MEM_SIZE) == 0);
    }
    free(before);
    tpusim_golden_destroy(d.g);
    return 0;
}

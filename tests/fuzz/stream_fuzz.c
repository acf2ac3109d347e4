/* stream_fuzz.c - libFuzzer target for the firmware's command-stream validation
 * (firmware/firmware.h, docs/command-stream.md), with the golden model as the device. The input
 * is one configuration byte (the array size) and then device memory, whose first bytes are the
 * stream. Nothing but two outcomes may come out: the stream is refused with a named field (and
 * nothing was pushed to the core), or it runs without a core error and leaves device memory
 * exactly as a plain C reference of its GEMM commands, run one after the other, does. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "firmware/firmware.h"
#include "io/tpuio.h"
#include "sim/tpusim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MEM_SIZE 65536u

static void check(bool ok)
{
    if (!ok)
        abort();
}

typedef struct {
    tpu_golden *g;
    tpu_hwcfg hw;
    int error;      /* the golden model's error code once one occurred */
    uint64_t insns; /* instructions executed */
} device;

static int hal_push(void *ctx, const uint32_t w[4])
{
    device *d = ctx;
    tpu_insn insn;
    memcpy(insn.w, w, sizeof insn.w);
    if (!d->error)
        d->error = tpu_golden_exec(d->g, &insn);
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
    memcpy(dst, tpu_golden_mem(d->g) + addr, n);
    return 0;
}

static void hal_spend(void *ctx, uint32_t cycles)
{
    (void)ctx;
    (void)cycles;
}

static uint32_t rd32(const uint8_t *m, uint64_t at)
{
    return (uint32_t)tpuio_get_le(m + at, 4);
}

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

/* Runs GEMM command c (validated by the firmware) on memory m, from the definition. */
static void reference_gemm(uint8_t *m, const uint8_t *c, uint32_t tile)
{
    const uint32_t flags = rd32(c, FW_GEMM_FLAGS), M = rd32(c, FW_GEMM_M), K = rd32(c, FW_GEMM_K);
    const uint32_t N = rd32(c, FW_GEMM_N);
    const uint32_t lda = rd32(c, FW_GEMM_LDA), ldb = rd32(c, FW_GEMM_LDB);
    const uint32_t ldc = rd32(c, FW_GEMM_LDC);
    /* Operand addresses through the stream's buffer table, which starts at address 0. */
    const uint64_t table = FW_HEADER_BYTES;
#define OPERAND(buf, off) (rd32(m, table + (uint64_t)rd32(c, buf) * FW_BUFFER_BYTES) + rd32(c, off))
    const uint64_t a = OPERAND(FW_GEMM_A_BUF, FW_GEMM_A_OFF);
    const uint64_t b = OPERAND(FW_GEMM_B_BUF, FW_GEMM_B_OFF);
    const uint64_t out = OPERAND(FW_GEMM_C_BUF, FW_GEMM_C_OFF);
    const bool params = flags & (FW_GEMM_BIAS | FW_GEMM_OUT_INT8);
    const uint64_t p = params ? OPERAND(FW_GEMM_P_BUF, FW_GEMM_P_OFF) : 0;
#undef OPERAND
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
            if (flags & FW_GEMM_BIAS)
                sum += rd32(m, p + 4ull * j);
            int32_t v = (int32_t)sum;
            if ((flags & FW_GEMM_RELU) && v < 0)
                v = 0;
            if (flags & FW_GEMM_OUT_INT8)
                v = requant(v, (int32_t)rd32(m, p + 4ull * (N + j)), rd32(m, p + 4ull * (2 * N + j)) & 63);
            res[(size_t)i * N + j] = v;
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
    d.g = tpu_golden_create(&d.hw);
    check(d.g != NULL);
    uint8_t *mem = tpu_golden_mem(d.g);
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
        check(d.error == TPU_ERR_OK && d.insns == r.insns);
        const uint32_t buffers = rd32(before, FW_HDR_BUFFERS);
        const uint32_t commands = rd32(before, FW_HDR_COMMANDS);
        uint64_t off = FW_HEADER_BYTES + (uint64_t)buffers * FW_BUFFER_BYTES;
        for (uint32_t i = 0; i < commands; i++) {
            check((uint32_t)tpuio_get_le(before + off, 2) == FW_CMD_GEMM);
            reference_gemm(before, before + off, d.hw.array_n);
            off += tpuio_get_le(before + off + FW_CMD_BYTES, 2);
        }
        check(memcmp(before, mem, MEM_SIZE) == 0);
    }
    free(before);
    tpu_golden_destroy(d.g);
    return 0;
}

/* golden.c - instruction-level golden model of docs/isa.md: every instruction runs to completion
 * before the next, which is what the hardware interlocks make the RTL equivalent to. No timing. */
#include <stdlib.h>
#include <string.h>

#include "sim/fp.h"
#include "sim/tpusim.h"

struct tpusim_golden {
    tpusim_hwcfg cfg;
    int8_t *ub;   /* ub_rows x N */
    int32_t *acc; /* acc_rows x N */
    uint8_t *mem; /* mem_size bytes */
    int own_mem;  /* mem is ours (tpusim_golden_create), not the caller's (tpusim_golden_create_on)
                   */
    uint16_t *fifo; /* ring of wfifo_tiles tiles, N x N 16-bit cells each */
    uint32_t fifo_head, fifo_count;
    uint16_t *cells;   /* the current tile's cells, as MATMUL.BF16 reads them */
    uint32_t *weights; /* their low bytes sign-extended at LOAD, so MATMUL is a plain uint32 MAC */
    uint32_t *row;     /* one UB row widened for MATMUL; MATMUL.BF16: the vector's bf16 */
    int32_t *bias, *mult;
    uint8_t *shift;
    uint32_t sync_count;
    int error;
};

/* Two's-complement reinterpretations without implementation-defined conversions. */
static int32_t s32(uint32_t u)
{
    return u <= INT32_MAX ? (int32_t)u : (int32_t)(u - 0x80000000u) + INT32_MIN;
}

static int64_t asr64(uint64_t u, unsigned s) /* arithmetic shift right, 1 <= s <= 63 */
{
    return u >> 63 ? -1 - (int64_t)(~u >> s) : (int64_t)(u >> s);
}

/* The low byte of x as int8, sign-extended to 32 bits (two's complement). */
static uint32_t sext8(uint32_t x) { return ((x & 0xffu) ^ 0x80u) - 0x80u; }

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* relu(acc + bias), 32-bit wrapping: the int32 output of WR_HOST SRC_ACC and ACTIVATE's input. */
static int32_t act_x(int32_t acc, int32_t bias, int relu)
{
    int32_t x = s32((uint32_t)acc + (uint32_t)bias);
    return relu && x < 0 ? 0 : x;
}

/* The same in fp32 (BF16): without BIAS and RELU, ACC's bits unchanged. */
static uint32_t act_x_fp32(uint32_t acc, const uint32_t *bias, int relu)
{
    const uint32_t x = bias ? tpusim_fp32_add(acc, *bias) : acc;
    return relu ? tpusim_fp32_relu(x) : x;
}

static int8_t requant(int32_t x, int32_t mult, unsigned s)
{
    int64_t p = (int64_t)x * mult; /* |p| <= 2^62: exact */
    int64_t q = p;
    if (s) {
        uint64_t half = (uint64_t)1 << (s - 1);
        /* Wraps only for p = 2^62, s = 63, as the hardware's 64-bit adder does. */
        q = asr64((uint64_t)p + (p < 0 ? half - 1 : half), s);
    }
    return q < -128 ? -128 : q > 127 ? 127 : (int8_t)q;
}

static void *alloc(uint64_t count, size_t size)
{
    if (count > SIZE_MAX / size)
        return NULL;
    return calloc(count ? (size_t)count : 1, size);
}

tpusim_golden *tpusim_golden_create(const tpusim_hwcfg *cfg)
{
    return tpusim_golden_create_on(cfg, NULL);
}

tpusim_golden *tpusim_golden_create_on(const tpusim_hwcfg *cfg, uint8_t *mem)
{
    if (!cfg->array_n)
        return NULL;
    tpusim_golden *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    const uint64_t n = cfg->array_n;
    g->cfg = *cfg;
    g->ub = alloc((uint64_t)cfg->ub_rows * n, 1);
    g->acc = alloc((uint64_t)cfg->acc_rows * n, sizeof *g->acc);
    g->own_mem = !mem;
    g->mem = mem ? mem : alloc(cfg->mem_size, 1);
    g->fifo = alloc((uint64_t)cfg->wfifo_tiles * n * n, sizeof *g->fifo);
    g->cells = alloc(n * n, sizeof *g->cells);
    g->weights = alloc(n * n, sizeof *g->weights);
    g->row = alloc(n, sizeof *g->row);
    g->bias = alloc(n, sizeof *g->bias);
    g->mult = alloc(n, sizeof *g->mult);
    g->shift = alloc(n, 1);
    if (!g->ub || !g->acc || !g->mem || !g->fifo || !g->cells || !g->weights || !g->row ||
        !g->bias || !g->mult || !g->shift) {
        tpusim_golden_destroy(g);
        return NULL;
    }
    return g;
}

void tpusim_golden_destroy(tpusim_golden *g)
{
    if (!g)
        return;
    free(g->ub);
    free(g->acc);
    if (g->own_mem)
        free(g->mem);
    free(g->fifo);
    free(g->cells);
    free(g->weights);
    free(g->row);
    free(g->bias);
    free(g->mult);
    free(g->shift);
    free(g);
}

void tpusim_golden_reset(tpusim_golden *g)
{
    const size_t n = g->cfg.array_n;
    g->fifo_head = g->fifo_count = 0;
    memset(g->cells, 0, n * n * sizeof *g->cells);
    memset(g->weights, 0, n * n * sizeof *g->weights);
    memset(g->bias, 0, n * sizeof *g->bias);
    memset(g->mult, 0, n * sizeof *g->mult);
    memset(g->shift, 0, n);
    g->sync_count = 0;
    g->error = TPU_FAULT_NONE;
}

enum { F_ROWS = 1, F_A = 2, F_B = 4, F_LEN = 8, F_STRIDE = 16 };

/* MATMUL's stride and ACTIVATE's len: UB rows between its rows, 0 meaning 1 (consecutive). */
#define UB_STEP_MAX 255u
static uint32_t ub_step(uint32_t field) { return field ? field : 1; }

/* UB rows one RD_HOST memory row of len bytes fills: ceil(len / N). */
static uint32_t host_row_ub_rows(uint32_t len, uint32_t n) { return (len + n - 1) / n; }

/* The checks of docs/isa.md "Validation and errors", in their order: the operands here, the
 * ranges from the instruction's footprint. */
static int validate(const tpusim_golden *g, const tpusim_fields *f)
{
    const uint32_t n = g->cfg.array_n;
    uint32_t flags_ok = 0, used = 0, rows_min = 1, rows_max = TPU_INSN_ROWS_MASK;
    uint32_t len_min = 1, len_max = n, len_step = 1;
    switch (f->op) {
    case TPU_OP_RD_HOST:
        flags_ok = TPU_OP_RD_HOST_FLAGS;
        used = F_ROWS | F_A | F_B | F_LEN | F_STRIDE;
        len_max = 4 * n;
        break;
    case TPU_OP_RD_WEIGHT:
        flags_ok = TPU_OP_RD_WEIGHT_FLAGS;
        used = F_ROWS | F_A | F_LEN | F_STRIDE;
        rows_max = n;
        len_max = f->flags & TPU_F_BF16 ? 2 * n : n;
        break;
    case TPU_OP_RD_PARAMS:
        flags_ok = TPU_OP_RD_PARAMS_FLAGS;
        used = F_ROWS | F_A | F_LEN | F_STRIDE;
        rows_min = rows_max = 3;
        len_min = len_step = 4;
        len_max = 4 * n;
        break;
    case TPU_OP_MATMUL:
        flags_ok = TPU_OP_MATMUL_FLAGS;
        used = F_ROWS | F_A | F_B | F_STRIDE;
        if (f->stride > UB_STEP_MAX ||
            (f->flags & (TPU_F_BF16 | TPU_F_UNSIGNED)) == (TPU_F_BF16 | TPU_F_UNSIGNED))
            return TPU_FAULT_BAD_OPERAND;
        break;
    case TPU_OP_ACTIVATE:
        flags_ok = TPU_OP_ACTIVATE_FLAGS;
        used = F_ROWS | F_A | F_B | F_LEN | (f->flags & TPU_F_POOL ? F_STRIDE : 0);
        len_min = 0;
        len_max = UB_STEP_MAX; /* the UB row step of the output rows */
        if ((f->flags & TPU_F_POOL) &&
            (!TPU_POOL_GET(f->stride, PH) || !TPU_POOL_GET(f->stride, PW) ||
             !TPU_POOL_GET(f->stride, STEP)))
            return TPU_FAULT_BAD_OPERAND;
        break;
    case TPU_OP_ZERO:
        flags_ok = TPU_OP_ZERO_FLAGS;
        used = F_ROWS | F_B;
        break;
    case TPU_OP_RD_ACC:
        flags_ok = TPU_OP_RD_ACC_FLAGS;
        used = F_ROWS | F_A | F_B | F_LEN | F_STRIDE;
        len_min = len_step = 4;
        len_max = 4 * n;
        break;
    case TPU_OP_WR_HOST:
        used = F_ROWS | F_A | F_B | F_LEN | F_STRIDE;
        len_max = 4 * n;
        if (f->flags & TPU_F_SRC_ACC) {
            flags_ok = TPU_OP_WR_HOST_FLAGS;
            len_min = len_step = 4;
        } /* from UB it takes no flag: flags_ok stays 0 */
        break;
    case TPU_OP_SYNC: flags_ok = TPU_OP_SYNC_FLAGS; break;
    case TPU_OP_HALT: flags_ok = TPU_OP_HALT_FLAGS; break;
    default: return TPU_FAULT_ILLEGAL_OPCODE;
    }

    if ((f->flags & ~flags_ok) || (!(used & F_ROWS) && f->rows) || (!(used & F_A) && f->a) ||
        (!(used & F_B) && f->b) || (!(used & F_LEN) && f->len) || (!(used & F_STRIDE) && f->stride))
        return TPU_FAULT_BAD_OPERAND;
    if ((used & F_ROWS) && (f->rows < rows_min || f->rows > rows_max))
        return TPU_FAULT_BAD_OPERAND;
    if ((used & F_LEN) && (f->len < len_min || f->len > len_max || f->len % len_step))
        return TPU_FAULT_BAD_OPERAND;

    tpusim_access acc[TPU_FOOTPRINT_MAX];
    const int fault = tpusim_range_fault(acc, tpusim_footprint(f, n, acc), &g->cfg);
    if (fault)
        return fault;

    if (f->op == TPU_OP_MATMUL && (f->flags & TPU_F_LOAD) && g->fifo_count == 0)
        return TPU_FAULT_WFIFO_EMPTY;
    if (f->op == TPU_OP_RD_WEIGHT && g->fifo_count >= g->cfg.wfifo_tiles)
        return TPU_FAULT_WFIFO_FULL;
    return TPU_FAULT_NONE;
}

/* MATMUL.BF16: each column's fp32 sum adds every row of the tile in order, zero padding too (an
 * inf times a padded zero is NaN, as in the array), so nothing is skipped. */
static void matmul_bf16(tpusim_golden *g, const tpusim_fields *f)
{
    const size_t n = g->cfg.array_n;
    uint32_t *const x = g->row;
    for (uint32_t i = 0; i < f->rows; i++) {
        const uint8_t *pair =
            (const uint8_t *)g->ub + ((size_t)f->a + (size_t)i * ub_step(f->stride)) * n;
        uint32_t *out = (uint32_t *)g->acc + ((size_t)f->b + i) * n;
        for (size_t r = 0; r < n; r++)
            x[r] = rd16(pair + 2 * r);
        for (size_t c = 0; c < n; c++) {
            uint32_t s = 0;
            for (size_t r = 0; r < n; r++)
                s = tpusim_fp32_add(s, tpusim_bf16_mul((uint16_t)x[r], g->cells[r * n + c]));
            out[c] = f->flags & TPU_F_ACC ? tpusim_fp32_add(out[c], s) : s;
        }
    }
}

static void matmul(tpusim_golden *g, const tpusim_fields *f)
{
    const size_t n = g->cfg.array_n;
    if (f->flags & TPU_F_LOAD) {
        const uint16_t *tile = g->fifo + (size_t)g->fifo_head * n * n;
        for (size_t k = 0; k < n * n; k++) {
            g->cells[k] = tile[k];
            g->weights[k] = sext8(tile[k]);
        }
        g->fifo_head = (g->fifo_head + 1) % g->cfg.wfifo_tiles;
        g->fifo_count--;
    }
    if (f->flags & TPU_F_BF16) {
        matmul_bf16(g, f);
        return;
    }
    /* uint32 arithmetic is the wrapping int32 accumulation; int32 objects may be accessed as
     * uint32 (C11 6.5p7). */
    uint32_t *const row = g->row;
    for (uint32_t i = 0; i < f->rows; i++) {
        const int8_t *x = g->ub + ((size_t)f->a + (size_t)i * ub_step(f->stride)) * n;
        uint32_t *out = (uint32_t *)g->acc + ((size_t)f->b + i) * n;
        if (!(f->flags & TPU_F_ACC))
            memset(out, 0, n * sizeof *out);
        if (f->flags & TPU_F_UNSIGNED)
            for (size_t r = 0; r < n; r++)
                row[r] = (uint8_t)x[r];
        else
            for (size_t r = 0; r < n; r++)
                row[r] = (uint32_t)x[r];
        for (size_t r = 0; r < n; r++) {
            const uint32_t xr = row[r];
            if (!xr)
                continue; /* zero padding is common and free to skip */
            const uint32_t *w = g->weights + r * n;
            for (size_t c = 0; c < n; c++)
                out[c] += xr * w[c];
        }
    }
}

static void execute(tpusim_golden *g, const tpusim_fields *f)
{
    const size_t n = g->cfg.array_n;
    switch (f->op) {
    case TPU_OP_RD_HOST: {
        /* Memory row i fills UB rows b + i*S .. + S, N bytes each, zero past len. */
        const size_t s = host_row_ub_rows(f->len, (uint32_t)n);
        for (uint32_t i = 0; i < f->rows; i++) {
            int8_t *dst = g->ub + ((size_t)f->b + i * s) * n;
            memcpy(dst, g->mem + f->a + (size_t)i * f->stride, f->len);
            memset(dst + f->len, 0, s * n - f->len);
        }
        break;
    }
    case TPU_OP_RD_WEIGHT: {
        /* Cells: a byte sign-extended, or (BF16) a little-endian byte pair, zero past len. */
        const uint32_t slot = (g->fifo_head + g->fifo_count) % g->cfg.wfifo_tiles;
        uint16_t *tile = g->fifo + (size_t)slot * n * n;
        memset(tile, 0, n * n * sizeof *tile);
        for (uint32_t r = 0; r < f->rows; r++) {
            const uint8_t *src = g->mem + f->a + (size_t)r * f->stride;
            for (uint32_t k = 0; k < f->len; k++)
                if (f->flags & TPU_F_BF16)
                    tile[r * n + k / 2] |= (uint16_t)(src[k] << 8 * (k % 2));
                else
                    tile[r * n + k] = (uint16_t)sext8(src[k]);
        }
        g->fifo_count++;
        break;
    }
    case TPU_OP_RD_PARAMS: {
        const uint8_t *p = g->mem + f->a;
        for (size_t c = 0; c < n; c++) {
            const int have = c < f->len / 4;
            g->bias[c] = have ? s32(rd32(p + 4 * c)) : 0;
            g->mult[c] = have ? s32(rd32(p + f->stride + 4 * c)) : 0;
            g->shift[c] = have ? rd32(p + 2 * (size_t)f->stride + 4 * c) & 63u : 0;
        }
        break;
    }
    case TPU_OP_MATMUL: matmul(g, f); break;
    case TPU_OP_ACTIVATE: {
        /* Without POOL the window is the one row b + i. */
        const int bias = (f->flags & TPU_F_BIAS) != 0, relu = (f->flags & TPU_F_RELU) != 0;
        const int pool = (f->flags & TPU_F_POOL) != 0;
        const uint32_t ph = pool ? TPU_POOL_GET(f->stride, PH) : 1;
        const uint32_t pw = pool ? TPU_POOL_GET(f->stride, PW) : 1;
        const uint32_t step = pool ? TPU_POOL_GET(f->stride, STEP) : 1;
        const uint32_t pitch = TPU_POOL_GET(f->stride, PITCH);
        for (uint32_t i = 0; i < f->rows; i++) {
            int8_t *y = g->ub + ((size_t)f->a + (size_t)i * ub_step(f->len)) * n;
            if (f->flags & TPU_F_BF16) { /* the fp32 maximum, in window order, to bf16 */
                for (size_t c = 0; c < n; c++) {
                    uint32_t m = 0;
                    for (uint32_t k = 0; k < ph; k++)
                        for (uint32_t j = 0; j < pw; j++) {
                            const size_t row =
                                (size_t)f->b + (size_t)i * step + (size_t)k * pitch + j;
                            const uint32_t x =
                                act_x_fp32((uint32_t)g->acc[row * n + c],
                                           bias ? (uint32_t *)&g->bias[c] : NULL, relu);
                            m = k || j ? tpusim_fp32_max(m, x) : x;
                        }
                    const uint16_t b16 = tpusim_fp32_to_bf16(m);
                    ((uint8_t *)y)[2 * c] = (uint8_t)b16;
                    ((uint8_t *)y)[2 * c + 1] = (uint8_t)(b16 >> 8);
                }
                continue;
            }
            for (size_t c = 0; c < n; c++) {
                int32_t m = INT32_MIN;
                for (uint32_t k = 0; k < ph; k++)
                    for (uint32_t j = 0; j < pw; j++) {
                        const size_t row = (size_t)f->b + (size_t)i * step + (size_t)k * pitch + j;
                        const int32_t x = act_x(g->acc[row * n + c], bias ? g->bias[c] : 0, relu);
                        m = x > m ? x : m;
                    }
                y[c] = requant(m, g->mult[c], g->shift[c]);
            }
        }
        break;
    }
    case TPU_OP_ZERO: memset(g->ub + (size_t)f->b * n, 0, (size_t)f->rows * n); break;
    case TPU_OP_RD_ACC: {
        /* Words past len/4 are zero: with ACC they still go through the add, as in the
         * hardware's row-wide adder (an fp32 -0 or subnormal becomes +0). */
        const int accumulate = (f->flags & TPU_F_ACC) != 0, fp = (f->flags & TPU_F_BF16) != 0;
        for (uint32_t i = 0; i < f->rows; i++) {
            const uint8_t *src = g->mem + f->a + (size_t)i * f->stride;
            uint32_t *out = (uint32_t *)g->acc + ((size_t)f->b + i) * n;
            for (size_t c = 0; c < n; c++) {
                const uint32_t v = c < f->len / 4 ? rd32(src + 4 * c) : 0;
                out[c] = !accumulate ? v : fp ? tpusim_fp32_add(out[c], v) : out[c] + v;
            }
        }
        break;
    }
    case TPU_OP_WR_HOST: {
        const int bias = (f->flags & TPU_F_BIAS) != 0, relu = (f->flags & TPU_F_RELU) != 0;
        for (uint32_t i = 0; i < f->rows; i++) {
            uint8_t *dst = g->mem + f->a + (size_t)i * f->stride;
            if (!(f->flags & TPU_F_SRC_ACC)) { /* the row's ceil(len / N) UB rows */
                memcpy(dst, g->ub + ((size_t)f->b + (size_t)i * host_row_ub_rows(f->len, n)) * n,
                       f->len);
                continue;
            }
            const int32_t *x = g->acc + ((size_t)f->b + i) * n;
            for (size_t c = 0; c < f->len / 4; c++) {
                const uint32_t v =
                    f->flags & TPU_F_BF16
                        ? act_x_fp32((uint32_t)x[c], bias ? (uint32_t *)&g->bias[c] : NULL, relu)
                        : (uint32_t)act_x(x[c], bias ? g->bias[c] : 0, relu);
                for (unsigned k = 0; k < 4; k++)
                    dst[4 * c + k] = (uint8_t)(v >> 8 * k);
            }
        }
        break;
    }
    case TPU_OP_SYNC: g->sync_count++; break;
    default: /* HALT: the model has nothing in flight to wait for */ break;
    }
}

int tpusim_golden_exec(tpusim_golden *g, const tpusim_insn *insn)
{
    if (g->error)
        return g->error;
    const tpusim_fields f = tpusim_decode(insn);
    g->error = validate(g, &f);
    if (!g->error)
        execute(g, &f);
    return g->error;
}

int tpusim_golden_run(tpusim_golden *g, const tpusim_insn *prog, size_t n, size_t *executed)
{
    size_t i = 0;
    int code = TPU_FAULT_NONE;
    for (; i < n; i++) {
        code = tpusim_golden_exec(g, &prog[i]);
        if (code || TPU_INSN_GET(prog[i].w, OP) == TPU_OP_HALT)
            break;
    }
    if (executed)
        *executed = i;
    return code;
}

uint8_t *tpusim_golden_mem(tpusim_golden *g) { return g->mem; }

int8_t *tpusim_golden_ub(tpusim_golden *g, uint32_t row)
{
    return row < g->cfg.ub_rows ? g->ub + (size_t)row * g->cfg.array_n : NULL;
}

int32_t *tpusim_golden_acc(tpusim_golden *g, uint32_t row)
{
    return row < g->cfg.acc_rows ? g->acc + (size_t)row * g->cfg.array_n : NULL;
}

uint32_t tpusim_golden_sync_count(const tpusim_golden *g) { return g->sync_count; }

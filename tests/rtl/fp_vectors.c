/* fp_vectors.c - the vectors of tests/rtl/tb_fp.v, computed by the golden model (sim/fp.h): one
 * case a line, {op[7:0], x[31:0], y[31:0], result[31:0]} in hex (bf16 operands and results in
 * the low 16 bits). Exhaustive where it is cheap: every bf16 widened, every bf16 as a factor (four
 * times: against a factor that puts the product at the bottom of the normal range, one at the
 * top, a random one and an edge value), every fp32 upper half rounded to bf16 (from a tie and
 * from random low bits); random and edge-value pairs for the rest.
 * usage: fp_vectors <file> */
#include <stdio.h>

#include "sim/fp.h"
#include "tests/support/fp_values.h"

enum { OP_BF16_TO_FP32, OP_BF16_MUL, OP_FP32_ADD, OP_FP32_TO_BF16, OP_FP32_MAX, OP_FP32_RELU };

static void put(FILE *f, unsigned op, uint32_t x, uint32_t y, uint32_t r)
{
    fprintf(f, "%02x%08x%08x%08x\n", op, x, y, r);
}

/* A bf16 whose exponent puts the product with a's exponent near biased product exponent e. */
static uint16_t factor_for(tpu_rng *r, uint16_t a, int e)
{
    int ew = e + 127 - (a >> 7 & 0xff) + (int)rng_range(r, -1, 1);
    ew = ew < 0 ? 0 : ew > 255 ? 255 : ew;
    return (uint16_t)((rng_next(r) & 0x807f) | (uint32_t)ew << 7);
}

static void pairs(FILE *f, tpu_rng *r, unsigned op, uint32_t (*fn)(uint32_t, uint32_t), int n)
{
    for (size_t i = 0; i < fp32_edge_count; i++)
        for (size_t j = 0; j < fp32_edge_count; j++)
            put(f, op, fp32_edges[i], fp32_edges[j], fn(fp32_edges[i], fp32_edges[j]));
    for (int i = 0; i < n; i++) {
        const uint32_t x = rng_fp32(r), y = rng_fp32_near(r, x);
        put(f, op, x, y, fn(x, y));
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fp_vectors <file>\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "w");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    tpu_rng r = {20};
    for (uint32_t a = 0; a < 0x10000; a++) {
        put(f, OP_BF16_TO_FP32, a, 0, tpusim_bf16_to_fp32((uint16_t)a));
        const uint16_t ws[] = {factor_for(&r, (uint16_t)a, 0), factor_for(&r, (uint16_t)a, 254),
                               rng_bf16(&r), bf16_edges[a % bf16_edge_count]};
        for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++)
            put(f, OP_BF16_MUL, a, ws[i], tpusim_bf16_mul((uint16_t)a, ws[i]));
        for (uint32_t lo = 0; lo < 2; lo++) {
            const uint32_t x = a << 16 | (lo ? (uint32_t)rng_next(&r) & 0xffff : 0x8000);
            put(f, OP_FP32_TO_BF16, x, 0, tpusim_fp32_to_bf16(x));
        }
    }
    pairs(f, &r, OP_FP32_ADD, tpusim_fp32_add, 150000);
    pairs(f, &r, OP_FP32_MAX, tpusim_fp32_max, 20000);
    for (size_t i = 0; i < fp32_edge_count; i++)
        put(f, OP_FP32_RELU, fp32_edges[i], 0, tpusim_fp32_relu(fp32_edges[i]));
    for (int i = 0; i < 10000; i++) {
        const uint32_t x = rng_fp32(&r);
        put(f, OP_FP32_RELU, x, 0, tpusim_fp32_relu(x));
    }
    if (fclose(f)) {
        perror(argv[1]);
        return 1;
    }
    return 0;
}

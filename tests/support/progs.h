/* progs.h - test-program support: instruction buffers, a deterministic RNG, plain GEMM program
 * builders (int8 and bf16) with their naive C references, the tiled B layout of GEMM commands, and
 * a random-program generator. */
#ifndef TPU_TESTS_SUPPORT_PROGS_H
#define TPU_TESTS_SUPPORT_PROGS_H

#include <stddef.h>
#include <stdint.h>

#include "sim/tpusim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Growable instruction buffer. Start from {0}; allocation failure aborts (test code). */
typedef struct {
    tpusim_insn *insns;
    size_t n, cap;
} tpu_prog;

void prog_push(tpu_prog *p, tpusim_insn insn);
void prog_emit(tpu_prog *p, uint32_t op, uint32_t flags, uint32_t rows, uint32_t a, uint32_t b,
               uint32_t len, uint32_t stride);
void prog_free(tpu_prog *p);

/* splitmix64: the same seed gives the same sequence everywhere. Start from {seed}. */
typedef struct {
    uint64_t s;
} tpu_rng;

uint64_t rng_next(tpu_rng *r);
uint32_t rng_below(tpu_rng *r, uint32_t n);            /* uniform in [0, n), n > 0 */
int64_t rng_range(tpu_rng *r, int64_t lo, int64_t hi); /* uniform in [lo, hi] */
int rng_chance(tpu_rng *r, uint32_t percent);          /* 1 with that probability */
int8_t rng_int8(tpu_rng *r);                           /* -128, -1, 0, 127 often, else uniform */
void rng_fill(tpu_rng *r, void *buf, size_t n);        /* uniform random bytes */
void rng_fill_int8(tpu_rng *r, int8_t *buf, size_t n); /* rng_int8 each */

/* C[m x n] = A[m x k] * B[k x n], all row-major and contiguous in device memory. */
typedef struct {
    uint32_t m, k, n;
    uint32_t a, b, c; /* addresses: A int8 (uint8 with unsigned_a), B int8, C int32 or int8 */
    uint32_t params;  /* int32 bias[n], mult[n], shift[n] back to back (shift: bits 5:0);
                         read when bias or out_int8 */
    int unsigned_a;
    int bias, relu; /* add bias[j] to column j; clamp at zero (before requantization) */
    int out_int8;   /* C as int8 requantized by ACTIVATE with mult/shift, else int32 */
} gemm_desc;

/* Places A, B, C and the parameters one after another from base (64-byte aligned); returns the
 * first byte after them. */
uint64_t gemm_layout(gemm_desc *d, uint32_t base);
/* Appends a plain, unoverlapped program computing d on a core of configuration cfg, ending in
 * HALT: per N-column block, per chunk of rows that fits both UB and ACC, per K tile: RD_HOST,
 * RD_WEIGHT, MATMUL.LOAD (ACC after the first tile); then WR_HOST SRC_ACC, or ACTIVATE + WR_HOST.
 * Returns 0, or -1 if a dimension is 0 or an address or stride does not fit its field. */
int gemm_program(tpu_prog *p, const tpusim_hwcfg *cfg, const gemm_desc *d);
/* Naive reference of d (int64 accumulation, then 32-bit wrap, bias, relu, requantization):
 * a, b, params as laid out in memory; c receives m x n int32 or int8 values. */
void gemm_reference(const gemm_desc *d, const void *a, const int8_t *b, const int32_t *params,
                    void *c);

/* The same in bf16 (ISA 1.3, docs/isa.md "Floating point (bf16)"): C = A . B with fp32 sums,
 * then bias (fp32) and ReLU, written as fp32 or rounded to bf16. A's rows are padded with zeros
 * to whole K tiles (kp = ceil(k / N) * N bf16, 2 kp bytes per row), B is row-major, C row-major
 * (4 bytes per element, 2 with out_bf16); all little-endian. */
typedef struct {
    uint32_t m, k, n;
    uint32_t a, b, c, bias; /* addresses: A, B, C, bias fp32[n] (read with bias) */
    int bias_on, relu, out_bf16;
} bf16_gemm_desc;

/* Places A, B, the bias and C from base (C 64-byte aligned) for an array of size n_arr; returns
 * the first byte after them. */
uint64_t bf16_gemm_layout(bf16_gemm_desc *d, uint32_t n_arr, uint32_t base);
/* Appends d's program without a HALT: per N-column block, per K tile an RD_HOST of A's rows into
 * UB row pairs, an RD_WEIGHT.BF16 of B's rows and a MATMUL.BF16.LOAD (ACC after the first tile),
 * from UB row ub and ACC row 0 + acc; then WR_HOST.SRC_ACC.BF16, or ACTIVATE.BF16 into row pairs
 * S = ceil(2w / N) rows apart (w: the block's columns) and a WR_HOST of them. The caller keeps
 * the rows (2 m ceil(k/N) + 2 m UB rows, m ACC rows) inside the core. */
void bf16_gemm_program(tpu_prog *p, uint32_t n_arr, const bf16_gemm_desc *d, uint32_t ub,
                       uint32_t acc);
/* The rule plainly, on sim/fp.h's operations: per K tile of N rows (zero-padded) each column's
 * sum from +0 in row order, the tiles added in increasing k; bias, ReLU, bf16 rounding. mem is
 * the memory image d was laid out in; c receives m x n fp32 or bf16 bit patterns. */
void bf16_gemm_reference(const bf16_gemm_desc *d, uint32_t n_arr, const uint8_t *mem, uint32_t *c);

/* RD_ACC (ISA 1.4) on an array of size n_arr <= 16, its memory laid out from base in mem, which
 * must hold rdacc_bytes(n_arr) bytes from there: R rows X of N fp32 (every one of fp32_edges,
 * then rng_fp32) and R rows Y (other edge values, or values that meet X's in an add:
 * rng_fp32_near, cancellation, neighbours, overflow), an int8 tile and two int8 activation rows.
 * Appends, without a HALT: RD_ACC X then RD_ACC.ACC Y into ACC rows acc.. in int32 (wrapping)
 * and in fp32 (BF16); the same with len 2N (the columns past it added as +0) and with stride 0
 * (Y's first row added to every row); a MATMUL.LOAD, an RD_ACC.ACC onto its ACC rows and a
 * MATMUL.ACC onto the sum (the ACC write port they share, both ways); then WR_HOST.SRC_ACC of every
 * ACC row used (3R + 2 of them from acc, 4N bytes each) after the inputs. Uses UB rows 0 and 1.
 * Returns the first byte after the layout. */
enum { RDACC_R = 8 };
uint64_t rdacc_bytes(uint32_t n_arr);
uint64_t rdacc_program(tpu_prog *p, uint32_t n_arr, uint8_t *mem, uint32_t base, uint32_t acc,
                       tpu_rng *r);

/* B_TILED layout (docs/command-stream.md): a k x n int8 B in tile x tile tiles, tile (kt, nt) at
 * byte (nt * ceil(k/tile) + kt) * tile^2, zero-padded past k and n. gemm_tiled_b_bytes is its
 * size; gemm_tile_b writes row-major b (pitch n) into out in that layout. */
uint64_t gemm_tiled_b_bytes(uint32_t k, uint32_t n, uint32_t tile);
void gemm_tile_b(const int8_t *b, uint32_t k, uint32_t n, uint32_t tile, int8_t *out);

/* Appends n_insns random instructions of every opcode and a HALT: MATMULs with UB row steps 0
 * (consecutive) to N and a few up to 255, ACTIVATEs with and without POOL (windows up to 15 x 15,
 * steps and pitches small and large), ZEROs, RD_ACCs (int32 or fp32, written or added, among
 * the MATMULs on the same ACC rows); int8 and bf16 (BF16 on RD_WEIGHT, MATMUL, ACTIVATE,
 * WR_HOST.SRC_ACC and RD_ACC) mixed, so that tiles and ACC rows of one type meet instructions of
 * the other too. Operands lie in small windows of UB, ACC and memory
 * (the first min(mem_size, 2048 + 64 N) bytes) so that instructions often overlap (a strided or
 * pooled range too long for its window lies anywhere), and the weight FIFO is tracked so that it
 * never under- or overflows. With inject set to an error code
 * (any but OK and MEM_FAULT), one instruction at a random position raises exactly that code
 * (preceded by the MATMUL.LOADs or RD_WEIGHTs that empty or fill the FIFO for WFIFO_EMPTY /
 * WFIFO_FULL); its index in p is returned, else -1. Needs 16 N <= mem_size <= 2^31 and fewer than
 * 2^20 UB and ACC rows. */
long random_program(tpu_prog *p, tpu_rng *r, const tpusim_hwcfg *cfg, size_t n_insns, int inject);

#ifdef __cplusplus
}
#endif
#endif

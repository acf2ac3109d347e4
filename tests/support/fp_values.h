/* fp_values.h - bf16 and fp32 test values for the float arithmetic (sim/fp.h, rtl/tpu_fp.vh):
 * the edge values of docs/isa.md "Floating point (bf16)" and random values that reach them
 * often. */
#ifndef TPU_TESTS_SUPPORT_FP_VALUES_H
#define TPU_TESTS_SUPPORT_FP_VALUES_H

#include <stddef.h>
#include <stdint.h>

#include "tests/support/progs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* +-0, +-inf, NaNs with payloads (quiet, signalling, negative), subnormals, the smallest normals,
 * the largest finite values and what rounds them to inf, +-1 and its neighbours. */
extern const uint32_t fp32_edges[];
extern const size_t fp32_edge_count;
extern const uint16_t bf16_edges[];
extern const size_t bf16_edge_count;

uint32_t rng_fp32(tpu_rng *r); /* an edge value 1/8 of the time, else uniform bits */
uint16_t rng_bf16(tpu_rng *r); /* an edge value 1/8 of the time, else uniform bits */
/* An fp32 that meets x in an add: -x, x's neighbours, a value sharing x's leading bits with
 * either sign (cancellation), one a few binades away, or an unrelated rng_fp32. */
uint32_t rng_fp32_near(tpu_rng *r, uint32_t x);
/* A bf16 of magnitude 2^-8 .. 2^4, either sign: products and sums of them grow, cancel and
 * round. */
uint16_t rng_bf16_mid(tpu_rng *r);
/* An operand: rng_bf16 edge_pct percent of the time, else rng_bf16_mid. */
uint16_t rng_bf16_op(tpu_rng *r, uint32_t edge_pct);
/* Memory that programs read as int8, bf16 and fp32: per 4-byte word (little-endian), two
 * rng_bf16_op(r, 25) or, a quarter of the time, an rng_fp32; a tail below 4 bytes random. */
void rng_fill_fp(tpu_rng *r, void *buf, size_t n);

#ifdef __cplusplus
}
#endif

#endif

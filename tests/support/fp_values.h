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

#ifdef __cplusplus
}
#endif

#endif

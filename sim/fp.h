/* fp.h - the bf16/fp32 arithmetic of docs/isa.md "Floating point (bf16)": the golden model of
 * rtl/tpu_fp.vh, bit for bit. Values are their bit patterns. Every operation reads a subnormal
 * input as a zero of its sign, never returns a subnormal, and returns the canonical quiet NaN
 * (TPUSIM_FP32_QNAN, TPUSIM_BF16_QNAN) for any NaN. Freestanding: no libc beyond stdint. */
#ifndef TPU_SIM_FP_H
#define TPU_SIM_FP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TPUSIM_FP32_QNAN 0x7fc00000u
#define TPUSIM_BF16_QNAN 0x7fc0u

uint32_t tpusim_bf16_to_fp32(uint16_t a);         /* exact */
uint32_t tpusim_bf16_mul(uint16_t a, uint16_t w); /* fp32(a * w): exact, or inf, or a zero */
uint32_t tpusim_fp32_add(uint32_t x, uint32_t y); /* rne32(x + y) */
uint16_t tpusim_fp32_to_bf16(uint32_t x);         /* round to nearest even */
uint32_t tpusim_fp32_max(uint32_t x, uint32_t y); /* -0 < +0 */
uint32_t tpusim_fp32_relu(uint32_t x);            /* max(x, +0) */

#ifdef __cplusplus
}
#endif

#endif

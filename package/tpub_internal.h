/* tpub_internal.h - what the package format's files share (not an interface): tpub.c writes
 * packages, tpub_read.c reads and validates them, tpub_dump.c lists them. */
#ifndef TPU_PACKAGE_TPUB_INTERNAL_H
#define TPU_PACKAGE_TPUB_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "package/tpub.h"

/* Element type codes of the file: fixed by the format, not by the order of hlo_type. */
extern const hlo_type tpub_type_codes[];
#define TPUB_N_TYPE_CODES 13u

/* The sections: each exactly once, in this order. */
extern const char tpub_section_tags[][5];
#define TPUB_N_SECTIONS 5u
#define TPUB_HEADER_BYTES 16u

/* The names of the flag bits (GEMM's, then CONV2D's POOL), bit by bit, for the listing. */
extern const char *const tpub_flag_names[8];

/* The version a package is written as: TPUB_VERSION when it uses bf16, else TPUB_VERSION_INT8. */
uint32_t tpub_version(const tpub_package *pkg);

/* Bytes per element on the device of a transfer's dev_type, of a GEMM's A and B, of its C. */
static inline uint64_t tpub_ab_elt(uint32_t flags) { return flags & TPUB_GEMM_BF16 ? 2 : 1; }
static inline uint64_t tpub_c_elt(uint32_t flags)
{
    return flags & (TPUB_GEMM_OUT_INT8) ? 1 : flags & TPUB_GEMM_OUT_BF16 ? 2 : 4;
}
/* The parameters' bytes: int32 bias, mult and shift per column, or in bf16 the fp32 bias. */
static inline uint64_t tpub_p_bytes(uint32_t flags, uint32_t n)
{
    return (flags & TPUB_GEMM_BF16 ? 4 : 12) * (uint64_t)n;
}

static inline uint64_t tpub_mul_sat(uint64_t a, uint64_t b)
{
    return a && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

static inline uint64_t tpub_add_sat(uint64_t a, uint64_t b)
{
    return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

static inline uint64_t tpub_ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

/* Bytes from an operand's first element to its last, ((rows-1)*ld + width) * elt, saturated
 * (no arena is that large). rows >= 1. */
static inline uint64_t tpub_extent(uint64_t rows, uint64_t ld, uint64_t width, uint64_t elt)
{
    return tpub_mul_sat(tpub_add_sat(tpub_mul_sat(rows - 1, ld), width), elt);
}

/* The bytes of a GEMM's B: in tile order KT x NT tiles of N x N, else k x n row-major (times 2
 * in bf16). */
static inline uint64_t tpub_b_bytes(const tpub_gemm *g, uint32_t array_n)
{
    if (!(g->flags & TPUB_GEMM_B_TILED))
        return (uint64_t)g->k * g->n * tpub_ab_elt(g->flags);
    return tpub_mul_sat(tpub_mul_sat(tpub_ceil_div(g->k, array_n), tpub_ceil_div(g->n, array_n)),
                        (uint64_t)array_n * array_n * tpub_ab_elt(g->flags));
}

/* The bytes of a convolution's kernel in tile order, of its input and of its output. */
static inline uint64_t tpub_kernel_bytes(const tpub_conv *v, uint32_t array_n)
{
    return tpub_mul_sat(
        tpub_mul_sat(tpub_conv_k_tiles(v, array_n), tpub_ceil_div(v->cout, array_n)),
        (uint64_t)array_n * array_n * tpub_ab_elt(v->flags));
}

static inline uint64_t tpub_conv_in_bytes(const tpub_conv *v)
{
    return tpub_mul_sat(tpub_mul_sat(v->batch, (uint64_t)v->h * v->w),
                        (uint64_t)v->c * tpub_ab_elt(v->flags));
}

static inline uint64_t tpub_conv_out_bytes(const tpub_conv *v)
{
    uint32_t oh, ow;
    tpub_conv_out_size(v, &oh, &ow);
    return tpub_mul_sat(tpub_mul_sat(v->batch, (uint64_t)oh * ow),
                        (uint64_t)v->cout * tpub_c_elt(v->flags));
}

#endif

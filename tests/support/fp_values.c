/* fp_values.c - bf16 and fp32 test values (fp_values.h). */
#include "tests/support/fp_values.h"

const uint32_t fp32_edges[] = {
    0x00000000, 0x80000000,                         /* +-0 */
    0x7f800000, 0xff800000,                         /* +-inf */
    0x7fc00000, 0xffc00000, 0x7fc00001, 0x7fffffff, /* quiet NaNs */
    0x7f800001, 0xffbfffff,                         /* signalling NaNs */
    0x00000001, 0x807fffff, 0x00400000, 0x80000001, /* subnormals */
    0x00800000, 0x80800000, 0x00800001, 0x00ffffff, /* smallest normals */
    0x7f7fffff, 0xff7fffff, 0x7f7f0000, 0x7f7f8000, /* largest finite */
    0x7f000000, 0x3f800000, 0xbf800000, 0x3f800001, /* 2^127, +-1, 1 + ulp */
    0x3f7fffff, 0x3f808000, 0x3f818000, 0x4b000001, /* below 1, bf16 ties, 2^23 + 1 */
    0x73000000, 0xf2ffffff,                         /* 2^103, half the largest ulp; -(just below) */
};
const size_t fp32_edge_count = sizeof fp32_edges / sizeof fp32_edges[0];

const uint16_t bf16_edges[] = {
    0x0000, 0x8000, 0x7f80, 0xff80, /* +-0, +-inf */
    0x7fc0, 0xffc0, 0x7f81, 0x7fff, /* NaNs */
    0x0001, 0x807f, 0x0040,         /* subnormals */
    0x0080, 0x8080, 0x00ff,         /* smallest normals */
    0x7f7f, 0xff7f, 0x7f00,         /* largest finite, 2^127 */
    0x3f80, 0xbf80, 0x3f81, 0x3fff, /* +-1, 1 + ulp, below 2 */
    0x1f80, 0x2000, 0x5f80, 0x6000, /* 2^-64, 2^-63, 2^64, 2^65: products at the range's ends */
};
const size_t bf16_edge_count = sizeof bf16_edges / sizeof bf16_edges[0];

uint32_t rng_fp32(tpu_rng *r)
{
    if (rng_chance(r, 12))
        return fp32_edges[rng_below(r, (uint32_t)fp32_edge_count)];
    return (uint32_t)rng_next(r);
}

uint16_t rng_bf16(tpu_rng *r)
{
    if (rng_chance(r, 12))
        return bf16_edges[rng_below(r, (uint32_t)bf16_edge_count)];
    return (uint16_t)rng_next(r);
}

uint32_t rng_fp32_near(tpu_rng *r, uint32_t x)
{
    const uint32_t sign = (uint32_t)rng_below(r, 2) << 31;
    const uint32_t bits = (uint32_t)rng_next(r);
    switch (rng_below(r, 6)) {
    case 0: return x ^ 0x80000000u;
    case 1: return (x ^ sign) + (uint32_t)rng_range(r, -2, 2);
    case 2: { /* the same exponent and leading fraction bits: the difference cancels them */
        const uint32_t keep = ~0u << rng_below(r, 24);
        return ((x & keep) | (bits & ~keep & 0x7fffffu)) ^ sign;
    }
    case 3: { /* up to 30 binades away (26 and more: the smaller only rounds) */
        const int32_t e = (int32_t)(x >> 23 & 0xff) + (int32_t)rng_range(r, -30, 30);
        return sign | (uint32_t)(e < 0 ? 0 : e > 255 ? 255 : e) << 23 | (bits & 0x7fffffu);
    }
    default: return rng_fp32(r);
    }
}

uint16_t rng_bf16_mid(tpu_rng *r)
{
    const uint32_t sign = rng_below(r, 2), exp = 127 - 8 + rng_below(r, 13);
    return (uint16_t)(sign << 15 | exp << 7 | rng_below(r, 128));
}

uint16_t rng_bf16_op(tpu_rng *r, uint32_t edge_pct)
{
    return rng_chance(r, edge_pct) ? rng_bf16(r) : rng_bf16_mid(r);
}

void rng_fill_fp(tpu_rng *r, void *buf, size_t n)
{
    uint8_t *p = buf;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        uint32_t w;
        if (rng_chance(r, 25))
            w = rng_fp32(r);
        else {
            const uint16_t lo = rng_bf16_op(r, 25), hi = rng_bf16_op(r, 25);
            w = (uint32_t)hi << 16 | lo;
        }
        for (unsigned k = 0; k < 4; k++)
            p[i + k] = (uint8_t)(w >> 8 * k);
    }
    rng_fill(r, p + i, n - i);
}

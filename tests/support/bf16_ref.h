// bf16_ref.h - a plain reference of the bf16 GEMM (issue 20, docs/isa.md "Floating point
// (bf16)"): a triple loop over sim/fp.h's operations, independent of the golden model's
// instructions. The K order is the array's: each K tile of n rows is summed from +0 in row order,
// and the tiles' sums are added in increasing k (the first tile's sum is the accumulator).
#ifndef TPU_TESTS_SUPPORT_BF16_REF_H
#define TPU_TESTS_SUPPORT_BF16_REF_H

#include <cstdint>

#include "sim/fp.h"

namespace bf16_ref
{

// Element (i, j) of act(A . B (+ bias)) as fp32 bits, for an array of size n; a(i, k) and
// b(k, j) give the bf16 bits, bias the fp32 bits (with_bias).
template <class A, class B>
uint32_t gemm_elem(A a, B b, uint32_t k, uint32_t n, uint32_t i, uint32_t j, bool with_bias,
                   uint32_t bias, bool relu)
{
    uint32_t acc = 0;
    for (uint32_t k0 = 0; k0 < k; k0 += n) {
        uint32_t s = 0; // +0
        for (uint32_t r = k0; r < k && r < k0 + n; r++)
            s = tpusim_fp32_add(s, tpusim_bf16_mul(a(i, r), b(r, j)));
        acc = k0 ? tpusim_fp32_add(acc, s) : s;
    }
    if (with_bias)
        acc = tpusim_fp32_add(acc, bias);
    return relu ? tpusim_fp32_relu(acc) : acc;
}

} // namespace bf16_ref

#endif

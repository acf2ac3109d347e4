// conv_test.h - a CONV2D command's fields (Conv, with the firmware's flags) and, through
// conv_ref.h, its kernel in the array's tile order and its reference result. Shared by the
// firmware's suite on the golden model (test_conv.cpp) and the driver's on the device
// (test_driver_conv.cpp).
#ifndef TPU_TESTS_SUPPORT_CONV_TEST_H
#define TPU_TESTS_SUPPORT_CONV_TEST_H

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "firmware/firmware.h"
#include "tests/support/conv_ref.h"

namespace conv_test
{

struct Conv {
    uint32_t batch, h, w, c, kh, kw, cout;
    uint32_t sh = 1, sw = 1, pt = 0, pb = 0, pl = 0, pr = 0;
    uint32_t flags = FW_CONV_OUT_INT8 | FW_CONV_BIAS | FW_CONV_RELU;
    uint32_t ph = 0, pw = 0, psh = 0, psw = 0; // with FW_CONV_POOLING

    uint32_t oh() const { return (h + pt + pb - kh) / sh + 1; }
    uint32_t ow() const { return (w + pl + pr - kw) / sw + 1; }
    bool pooled() const { return flags & FW_CONV_POOLING; }
    uint32_t ohp() const { return pooled() ? (oh() - ph) / psh + 1 : oh(); }
    uint32_t owp() const { return pooled() ? (ow() - pw) / psw + 1 : ow(); }
    uint32_t out_elt() const { return flags & FW_CONV_OUT_INT8 ? 1 : 4; }
};

inline std::string describe(const Conv &v, uint32_t n)
{
    char b[256];
    std::snprintf(b, sizeof b,
                  "N=%u batch=%u %ux%ux%u kernel %ux%u->%u stride %u,%u pad %u,%u,%u,%u flags 0x%x "
                  "pool %ux%u/%u,%u",
                  n, v.batch, v.h, v.w, v.c, v.kh, v.kw, v.cout, v.sh, v.sw, v.pt, v.pb, v.pl, v.pr,
                  v.flags, v.ph, v.pw, v.psh, v.psw);
    return b;
}

// conv_ref's geometry of v: pooled (ph > 0) only with FW_CONV_POOLING.
inline conv_ref::ConvShape shape(const Conv &v)
{
    conv_ref::ConvShape s{v.batch, v.h, v.w, v.c, v.kh, v.kw, v.cout};
    s.sh = v.sh, s.sw = v.sw, s.pt = v.pt, s.pb = v.pb, s.pl = v.pl, s.pr = v.pr;
    if (v.pooled())
        s.ph = v.ph, s.pw = v.pw, s.psh = v.psh, s.psw = v.psw;
    return s;
}

// The kernel K[dy][dx][c][o] in the tile order of docs/command-stream.md.
inline std::vector<int8_t> tile_kernel(const Conv &v, const std::vector<int8_t> &k, uint32_t n)
{
    return conv_ref::tile_kernel(shape(v), k, n);
}

// The convolution from its definition: out in NHWC, as the command writes it (conv_ref.h) from
// the NHWC input at in and the per-channel bias, mult and shift the flags use.
inline std::vector<uint8_t> reference(const Conv &v, const uint8_t *in,
                                      const std::vector<int8_t> &k, const int32_t *bias,
                                      const int32_t *mult, const int32_t *shift)
{
    std::vector<int32_t> params(size_t{3} * v.cout, 0);
    for (uint32_t o = 0; o < v.cout; o++) {
        params[o] = v.flags & FW_CONV_BIAS ? bias[o] : 0;
        params[v.cout + o] = v.flags & FW_CONV_OUT_INT8 ? mult[o] : 0;
        params[2 * v.cout + o] = v.flags & FW_CONV_OUT_INT8 ? shift[o] : 0;
    }
    const std::vector<uint8_t> input(in, in + size_t{v.batch} * v.h * v.w * v.c);
    return conv_ref::reference(shape(v), v.flags & FW_CONV_BIAS, v.flags & FW_CONV_RELU,
                               v.flags & FW_CONV_OUT_INT8, v.flags & FW_CONV_A_UNSIGNED, input, k,
                               params);
}

} // namespace conv_test

#endif

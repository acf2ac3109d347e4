// conv_test.h - a CONV2D's shape and its reference, written from the definition
// (docs/command-stream.md) and not from the firmware's code: the kernel in the array's tile order
// and the convolution with bias, ReLU, requantization and max pooling. Shared by the firmware's
// suite on the golden model (test_conv.cpp) and the driver's on the device (test_driver_conv.cpp).
#ifndef TPU_TESTS_SUPPORT_CONV_TEST_H
#define TPU_TESTS_SUPPORT_CONV_TEST_H

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "firmware/firmware.h"
#include "tests/support/fw_test.h"

namespace conv_test
{

using fw_test::requant;
using fw_test::wr32;
using fw_test::wrap32;

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

// The kernel K[dy][dx][c][o] in the tile order of docs/command-stream.md, written here from the
// definition (not the firmware's code).
inline std::vector<int8_t> tile_kernel(const Conv &v, const std::vector<int8_t> &k, uint32_t n)
{
    const bool packed = v.pl == 0 && v.pr == 0 && v.c % n != 0;
    const uint32_t t_per_dy = (v.kw * v.c + n - 1) / n, cc = (v.c + n - 1) / n;
    const uint32_t kt = packed ? v.kh * t_per_dy : v.kh * v.kw * cc;
    const uint32_t nt = (v.cout + n - 1) / n;
    std::vector<int8_t> out(static_cast<size_t>(kt) * nt * n * n, 0);
    for (uint32_t t = 0; t < kt; t++)
        for (uint32_t r = 0; r < n; r++) {
            uint32_t dy, dx, ci;
            if (packed) {
                dy = t / t_per_dy;
                const uint32_t byte = t % t_per_dy * n + r;
                if (byte >= v.kw * v.c)
                    continue;
                dx = byte / v.c;
                ci = byte % v.c;
            } else {
                dy = t / cc / v.kw;
                dx = t / cc % v.kw;
                ci = t % cc * n + r;
                if (ci >= v.c)
                    continue;
            }
            for (uint32_t o = 0; o < v.cout; o++)
                out[(static_cast<size_t>(o / n) * kt + t) * n * n + r * n + o % n] =
                    k[((static_cast<size_t>(dy) * v.kw + dx) * v.c + ci) * v.cout + o];
        }
    return out;
}

// The convolution from its definition: out in NHWC, as the command writes it.
inline std::vector<uint8_t> reference(const Conv &v, const uint8_t *in,
                                      const std::vector<int8_t> &k, const int32_t *bias,
                                      const int32_t *mult, const int32_t *shift)
{
    const uint32_t oh = v.oh(), ow = v.ow();
    std::vector<int32_t> x(static_cast<size_t>(v.batch) * oh * ow * v.cout);
    for (uint32_t b = 0; b < v.batch; b++)
        for (uint32_t oy = 0; oy < oh; oy++)
            for (uint32_t ox = 0; ox < ow; ox++)
                for (uint32_t o = 0; o < v.cout; o++) {
                    int64_t sum = 0;
                    for (uint32_t dy = 0; dy < v.kh; dy++)
                        for (uint32_t dx = 0; dx < v.kw; dx++) {
                            const int64_t y = int64_t{oy} * v.sh + dy - v.pt;
                            const int64_t xx = int64_t{ox} * v.sw + dx - v.pl;
                            if (y < 0 || y >= v.h || xx < 0 || xx >= v.w)
                                continue;
                            for (uint32_t ci = 0; ci < v.c; ci++) {
                                const uint8_t a =
                                    in[((b * uint64_t{v.h} + y) * v.w + xx) * v.c + ci];
                                const int64_t av = v.flags & FW_CONV_A_UNSIGNED ? a : int8_t(a);
                                sum += av * k[((uint64_t{dy} * v.kw + dx) * v.c + ci) * v.cout + o];
                            }
                        }
                    int32_t r = wrap32(sum);
                    if (v.flags & FW_CONV_BIAS)
                        r = wrap32(int64_t{r} + bias[o]);
                    if ((v.flags & FW_CONV_RELU) && r < 0)
                        r = 0;
                    x[((uint64_t{b} * oh + oy) * ow + ox) * v.cout + o] = r;
                }
    const uint32_t ohp = v.ohp(), owp = v.owp(), es = v.out_elt();
    std::vector<uint8_t> out(static_cast<size_t>(v.batch) * ohp * owp * v.cout * es);
    for (uint32_t b = 0; b < v.batch; b++)
        for (uint32_t py = 0; py < ohp; py++)
            for (uint32_t px = 0; px < owp; px++)
                for (uint32_t o = 0; o < v.cout; o++) {
                    const size_t at = ((uint64_t{b} * ohp + py) * owp + px) * v.cout + o;
                    if (!(v.flags & FW_CONV_OUT_INT8)) {
                        wr32(&out[at * 4], static_cast<uint32_t>(x[at]));
                        continue;
                    }
                    // ACTIVATE.POOL: the maximum of relu(acc + bias) over the window, then
                    // requantized (docs/isa.md).
                    int32_t m = INT32_MIN;
                    const uint32_t wh = v.pooled() ? v.ph : 1, ww = v.pooled() ? v.pw : 1;
                    const uint32_t ys = v.pooled() ? v.psh : 1, xs = v.pooled() ? v.psw : 1;
                    for (uint32_t i = 0; i < wh; i++)
                        for (uint32_t j = 0; j < ww; j++)
                            m = std::max(
                                m,
                                x[((uint64_t{b} * oh + py * ys + i) * ow + px * xs + j) * v.cout +
                                  o]);
                    out[at] = static_cast<uint8_t>(requant(m, mult[o], shift[o] & 63));
                }
    return out;
}

} // namespace conv_test

#endif

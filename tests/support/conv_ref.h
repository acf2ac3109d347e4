// conv_ref.h - a convolution's geometry and its kernel in the CONV2D tile order, written from
// the definition in firmware/firmware.h (not from the compiler's or the firmware's code), for the
// suites that build or check kernels in packages.
#ifndef TPU_CONV_REF_H
#define TPU_CONV_REF_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace conv_ref {

// A convolution's geometry (the CONV2D command's fields; pooled when ph > 0).
struct ConvShape {
    uint32_t batch, h, w, c, kh, kw, cout;
    uint32_t sh = 1, sw = 1, pt = 0, pb = 0, pl = 0, pr = 0;
    uint32_t ph = 0, pw = 0, psh = 0, psw = 0;
};

// The kernel K[dy][dx][ci][o] in the CONV2D tile order for array size n (firmware/firmware.h),
// written from its definition: packed runs when there is no horizontal padding and c is not a
// multiple of n, else pixel by pixel.
inline std::vector<int8_t> tile_kernel(const ConvShape &v, const std::vector<int8_t> &k, uint32_t n)
{
    const bool packed = v.pl == 0 && v.pr == 0 && v.c % n != 0;
    const uint32_t runs = (v.kw * v.c + n - 1) / n, cc = (v.c + n - 1) / n;
    const uint32_t kt = packed ? v.kh * runs : v.kh * v.kw * cc, nt = (v.cout + n - 1) / n;
    std::vector<int8_t> out((size_t)kt * nt * n * n, 0);
    for (uint32_t t = 0; t < kt; t++)
        for (uint32_t r = 0; r < n; r++) {
            uint32_t dy, dx, ci;
            if (packed) {
                dy = t / runs;
                const uint32_t byte = t % runs * n + r;
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
                out[((size_t)(o / n) * kt + t) * n * n + r * n + o % n] =
                    k[(((size_t)dy * v.kw + dx) * v.c + ci) * v.cout + o];
        }
    return out;
}

} // namespace conv_ref

#endif

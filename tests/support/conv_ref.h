// conv_ref.h - a convolution's geometry, its kernel in the CONV2D tile order and its result,
// written from the definitions of firmware/firmware.h and docs/isa.md (not from the compiler's,
// the firmware's or the golden model's code), for the suites that build or check convolutions in
// packages.
#ifndef TPU_TESTS_SUPPORT_CONV_REF_H
#define TPU_TESTS_SUPPORT_CONV_REF_H

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace conv_ref
{

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

// docs/isa.md's requantization: (p + 2^(s-1), or 2^(s-1) - 1 when negative) >> s as a floor
// division (ties away from zero), clamped to int8. |p| < 2^62, so the sum does not wrap.
inline int8_t requant(int32_t x, int32_t mult, int32_t shift)
{
    const int64_t p = (int64_t)x * mult;
    const unsigned s = (unsigned)shift & 63u;
    int64_t q = p;
    if (s == 63) {
        q = p + (p < 0 ? INT64_C(0x3fffffffffffffff) : INT64_C(0x4000000000000000)) < 0 ? -1 : 0;
    } else if (s) {
        const int64_t half = (int64_t)1 << (s - 1), d = (int64_t)1 << s;
        const int64_t v = p + (p < 0 ? half - 1 : half);
        q = v / d - (v % d < 0);
    }
    return (int8_t)std::min<int64_t>(127, std::max<int64_t>(-128, q));
}

// The CONV2D result (firmware.h) of NHWC input in (uint8 when unsigned_in) and kernel
// K[dy][dx][ci][o]: bias, ReLU, requantization with params (bias, mult, shift per channel) when
// flagged, max pooling of the activated values; NHWC bytes, int32 little-endian without out_int8.
inline std::vector<uint8_t> reference(const ConvShape &v, bool bias, bool relu, bool out_int8,
                                      bool unsigned_in, const std::vector<uint8_t> &in,
                                      const std::vector<int8_t> &k,
                                      const std::vector<int32_t> &params)
{
    const uint32_t oh = (v.h + v.pt + v.pb - v.kh) / v.sh + 1;
    const uint32_t ow = (v.w + v.pl + v.pr - v.kw) / v.sw + 1;
    std::vector<int32_t> x((size_t)v.batch * oh * ow * v.cout);
    for (uint32_t b = 0; b < v.batch; b++)
        for (uint32_t y = 0; y < oh; y++)
            for (uint32_t xx = 0; xx < ow; xx++)
                for (uint32_t o = 0; o < v.cout; o++) {
                    int64_t sum = 0;
                    for (uint32_t dy = 0; dy < v.kh; dy++)
                        for (uint32_t dx = 0; dx < v.kw; dx++) {
                            const int64_t iy = (int64_t)y * v.sh + dy - v.pt;
                            const int64_t ix = (int64_t)xx * v.sw + dx - v.pl;
                            if (iy < 0 || iy >= v.h || ix < 0 || ix >= v.w)
                                continue;
                            for (uint32_t ci = 0; ci < v.c; ci++) {
                                const uint8_t a =
                                    in[((b * (size_t)v.h + iy) * v.w + ix) * v.c + ci];
                                sum += (unsigned_in ? (int64_t)a : (int64_t)(int8_t)a) *
                                       k[(((size_t)dy * v.kw + dx) * v.c + ci) * v.cout + o];
                            }
                        }
                    int64_t r = (int32_t)(uint32_t)(uint64_t)sum;
                    if (bias)
                        r = (int32_t)(uint32_t)(uint64_t)(r + params[o]);
                    if (relu && r < 0)
                        r = 0;
                    x[(((size_t)b * oh + y) * ow + xx) * v.cout + o] = (int32_t)r;
                }
    const uint32_t ph = v.ph ? v.ph : 1, pw = v.ph ? v.pw : 1;
    const uint32_t psh = v.ph ? v.psh : 1, psw = v.ph ? v.psw : 1;
    const uint32_t ohp = (oh - ph) / psh + 1, owp = (ow - pw) / psw + 1;
    std::vector<uint8_t> out((size_t)v.batch * ohp * owp * v.cout * (out_int8 ? 1 : 4));
    for (uint32_t b = 0; b < v.batch; b++)
        for (uint32_t y = 0; y < ohp; y++)
            for (uint32_t xx = 0; xx < owp; xx++)
                for (uint32_t o = 0; o < v.cout; o++) {
                    int32_t m = INT32_MIN;
                    for (uint32_t i = 0; i < ph; i++)
                        for (uint32_t j = 0; j < pw; j++)
                            m = std::max(
                                m, x[(((size_t)b * oh + y * psh + i) * ow + xx * psw + j) * v.cout +
                                     o]);
                    const size_t at = (((size_t)b * ohp + y) * owp + xx) * v.cout + o;
                    if (out_int8) {
                        out[at] = (uint8_t)requant(m, params[v.cout + o], params[2 * v.cout + o]);
                    } else {
                        for (int byte = 0; byte < 4; byte++)
                            out[at * 4 + byte] = (uint8_t)((uint32_t)m >> (8 * byte));
                    }
                }
    return out;
}

} // namespace conv_ref

#endif

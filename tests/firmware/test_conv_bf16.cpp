// test_conv_bf16.cpp - the firmware's bf16 CONV2D (FW_CONV_BF16, stream version 3) driving the
// golden model through a HAL: the output bit for bit against a plain loop of sim/fp.h here
// (pixel-by-pixel K order, zero padding as zero activations, fp32 bias, ReLU and max pooling,
// fp32 or bf16 out), over junk in memory and the UB; and the bf16 flags' validation.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "firmware/firmware.h"
#include "sim/fp.h"
#include "sim/tpusim.h"
#include "tests/support/conv_test.h"
#include "tests/support/fp_values.h"
#include "tests/support/fw_test.h"
#include "tests/support/progs.h"

namespace
{

using namespace conv_test;
using namespace fw_test;

void wr16(uint8_t *p, uint16_t x)
{
    p[0] = static_cast<uint8_t>(x);
    p[1] = static_cast<uint8_t>(x >> 8);
}

std::vector<uint8_t> conv_bytes(const Conv &v, const uint32_t bufs[4])
{
    std::vector<uint8_t> b(FW_CONV_BYTES);
    put32(b, 0, FW_CMD_CONV2D | FW_CONV_BYTES << 16);
    const uint32_t fields[] = {v.flags,
                               v.batch,
                               v.h,
                               v.w,
                               v.c,
                               v.kh,
                               v.kw,
                               v.cout,
                               v.sh | v.sw << 16,
                               v.pt | v.pb << 8 | v.pl << 16 | v.pr << 24,
                               v.ph | v.pw << 8 | v.psh << 16 | v.psw << 24};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        put32(b, FW_CONV_FLAGS + 4 * i, fields[i]);
    const uint32_t fb[4] = {FW_CONV_IN_BUF, FW_CONV_K_BUF, FW_CONV_OUT_BUF, FW_CONV_P_BUF};
    for (int i = 0; i < 4; i++)
        put32(b, fb[i], bufs[i]);
    return b;
}

// A bf16 value: mostly edge values with edges, else rng_bf16 (edge values 1/8 of the time).
uint16_t value(tpu_rng *rng, bool edges)
{
    if (edges && rng_chance(rng, 50))
        return bf16_edges[rng_below(rng, static_cast<uint32_t>(bf16_edge_count))];
    return rng_bf16(rng);
}

// The reference: conv output (oy, ox, o) of image b as fp32 bits after bias and ReLU. K in the
// kernel's pixel-by-pixel tile order: (dy, dx, channel tile), each tile's n channels summed from
// +0, the tiles' sums added in order; a padding position is a zero activation.
uint32_t conv_elem(const Conv &v, uint32_t n, const std::vector<uint16_t> &in,
                   const std::vector<uint16_t> &k, const std::vector<uint32_t> &bias, uint32_t b,
                   uint32_t oy, uint32_t ox, uint32_t o)
{
    uint32_t acc = 0;
    bool first = true;
    for (uint32_t dy = 0; dy < v.kh; dy++)
        for (uint32_t dx = 0; dx < v.kw; dx++)
            for (uint32_t c0 = 0; c0 < v.c; c0 += n) {
                const int64_t y = int64_t{oy} * v.sh + dy - v.pt,
                              x = int64_t{ox} * v.sw + dx - v.pl;
                const bool inside = y >= 0 && y < v.h && x >= 0 && x < v.w;
                uint32_t s = 0;
                for (uint32_t c = c0; c < v.c && c < c0 + n; c++) {
                    const uint16_t a = inside
                                           ? in[((size_t{b} * v.h + static_cast<size_t>(y)) * v.w +
                                                 static_cast<size_t>(x)) *
                                                    v.c +
                                                c]
                                           : 0;
                    s = tpusim_fp32_add(
                        s,
                        tpusim_bf16_mul(a, k[((size_t{dy} * v.kw + dx) * v.c + c) * v.cout + o]));
                }
                acc = first ? s : tpusim_fp32_add(acc, s);
                first = false;
            }
    if (v.flags & FW_CONV_BIAS)
        acc = tpusim_fp32_add(acc, bias[o]);
    return v.flags & FW_CONV_RELU ? tpusim_fp32_relu(acc) : acc;
}

// Lays v out over junk (memory and UB), runs it and compares all of memory.
void run_conv(const tpusim_hwcfg &cfg, const Conv &v, uint64_t seed, bool edges = false)
{
    SCOPED_TRACE(describe(v, cfg.array_n) + " seed " + std::to_string(seed));
    GoldenHal h(cfg);
    ASSERT_NE(h.g, nullptr);
    tpu_rng rng{seed};
    const uint32_t n = cfg.array_n, cc = (v.c + n - 1) / n, kt = v.kh * v.kw * cc;
    const uint32_t nt = (v.cout + n - 1) / n, out_elt = v.flags & FW_CONV_OUT_BF16 ? 2 : 4;
    const bool bias_used = v.flags & FW_CONV_BIAS;
    const uint64_t sizes[4] = {
        uint64_t{v.batch} * v.h * v.w * v.c * 2, uint64_t{kt} * nt * n * n * 2,
        uint64_t{v.batch} * v.ohp() * v.owp() * v.cout * out_elt, bias_used ? 4ull * v.cout : 0};
    std::vector<Buffer> bufs;
    uint32_t addr[4] = {0, 0, 0, 0}, ids[4] = {0, 0, 0, 0};
    uint64_t at = 64;
    for (int i = 0; i < 4; i++) {
        if (!sizes[i])
            continue;
        ids[i] = static_cast<uint32_t>(bufs.size());
        addr[i] = static_cast<uint32_t>(at);
        bufs.push_back({addr[i], static_cast<uint32_t>(sizes[i])});
        at = (at + sizes[i] + 127) & ~uint64_t{63};
    }
    const auto stream = stream_bytes(bufs, {conv_bytes(v, ids)});
    ASSERT_LE(at + stream.size(), cfg.mem_size);
    uint8_t *mem = h.mem();
    for (uint64_t i = 0; i < at; i += 2)
        wr16(mem + i, value(&rng, true));
    for (uint32_t row = 0; row < cfg.ub_rows; row++)
        for (uint32_t i = 0; i < n; i += 2)
            wr16(reinterpret_cast<uint8_t *>(tpusim_golden_ub(h.g, row)) + i, value(&rng, true));
    std::vector<uint16_t> in(sizes[0] / 2), k(size_t{v.kh} * v.kw * v.c * v.cout);
    std::vector<uint32_t> bias(v.cout);
    for (size_t i = 0; i < in.size(); i++)
        wr16(mem + addr[0] + 2 * i, in[i] = value(&rng, edges));
    for (uint16_t &x : k)
        x = value(&rng, edges);
    for (uint32_t o = 0; o < v.cout; o++) {
        bias[o] = rng_fp32(&rng);
        if (bias_used)
            wr32(mem + addr[3] + 4 * o, bias[o]);
    }
    // The kernel in tile order; its padding past c and cout keeps the junk (inf and NaN too),
    // which must not reach the output.
    for (uint32_t dy = 0; dy < v.kh; dy++)
        for (uint32_t dx = 0; dx < v.kw; dx++)
            for (uint32_t c = 0; c < v.c; c++)
                for (uint32_t o = 0; o < v.cout; o++) {
                    const uint64_t t = (uint64_t{dy} * v.kw + dx) * cc + c / n;
                    wr16(mem + addr[1] + ((o / n * kt + t) * n * n + c % n * n + o % n) * 2,
                         k[((size_t{dy} * v.kw + dx) * v.c + c) * v.cout + o]);
                }
    std::vector<uint8_t> expect(mem, mem + cfg.mem_size);
    for (uint32_t b = 0; b < v.batch; b++)
        for (uint32_t py = 0; py < v.ohp(); py++)
            for (uint32_t px = 0; px < v.owp(); px++)
                for (uint32_t o = 0; o < v.cout; o++) {
                    uint32_t m = 0;
                    const uint32_t wh = v.pooled() ? v.ph : 1, ww = v.pooled() ? v.pw : 1;
                    for (uint32_t i = 0; i < wh; i++)
                        for (uint32_t j = 0; j < ww; j++) {
                            const uint32_t x =
                                conv_elem(v, n, in, k, bias, b, py * (v.pooled() ? v.psh : 1) + i,
                                          px * (v.pooled() ? v.psw : 1) + j, o);
                            m = i || j ? tpusim_fp32_max(m, x) : x;
                        }
                    uint8_t *out =
                        expect.data() + addr[2] +
                        (((uint64_t{b} * v.ohp() + py) * v.owp() + px) * v.cout + o) * out_elt;
                    if (out_elt == 2)
                        wr16(out, tpusim_fp32_to_bf16(m));
                    else
                        wr32(out, m);
                }
    std::copy(stream.begin(), stream.end(), expect.begin() + at);
    const Outcome r = run_stream(h, stream, static_cast<uint32_t>(at));
    ASSERT_EQ(r.res.code, FW_OK) << "field " << r.res.field << ": " << r.res.why;
    expect_memory(h, expect);
}

Conv bf16_conv(uint32_t flags, uint32_t batch, uint32_t h, uint32_t w, uint32_t c, uint32_t kh,
               uint32_t kw, uint32_t cout)
{
    Conv v{batch, h, w, c, kh, kw, cout};
    v.flags = flags | FW_CONV_BF16;
    return v;
}

const uint32_t kOut[] = {0, FW_CONV_OUT_BF16};

// Channels around N and N/2 (a last plane of at most N/2 channels is loaded a pixel at a time),
// output channels too, padding on every side, strides, both outputs.
TEST(FirmwareConvBf16, EdgeShapes)
{
    uint64_t seed = 1;
    for (uint32_t n : {4u, 8u, 16u})
        for (uint32_t c : {1u, n / 2, n / 2 + 1, n, n + 1, 2 * n + n / 2})
            for (uint32_t cout : {1u, n / 2, n + 1}) {
                const uint32_t flags = kOut[seed % 2] | (seed % 3 ? FW_CONV_BIAS : 0) |
                                       (seed % 5 < 2 ? FW_CONV_RELU : 0);
                Conv v = bf16_conv(flags, 1 + seed % 2, 5, 6, c, 3, 2, cout);
                v.pt = seed % 2, v.pb = 1, v.pl = seed % 3, v.pr = seed % 2;
                v.sh = 1 + seed % 2, v.sw = 1 + seed / 2 % 2;
                run_conv(make_cfg(n), v, seed++);
            }
}

// Max pooling (bf16 output), windows sharing rows; 1x1 and wide kernels; edge values.
TEST(FirmwareConvBf16, PoolingAndEdgeValues)
{
    uint64_t seed = 100;
    for (uint32_t n : {4u, 8u}) {
        Conv v = bf16_conv(FW_CONV_OUT_BF16 | FW_CONV_POOLING | FW_CONV_BIAS | FW_CONV_RELU, 2, 9,
                           8, n / 2, 3, 3, n + 3);
        v.pt = v.pb = v.pl = v.pr = 1;
        v.ph = v.pw = 3, v.psh = v.psw = 2;
        run_conv(make_cfg(n), v, seed++);
        v.flags &= ~static_cast<uint32_t>(FW_CONV_RELU);
        v.ph = 2, v.pw = 3, v.psh = 2, v.psw = 1;
        run_conv(make_cfg(n), v, seed++, true);
        for (uint32_t out : kOut) {
            run_conv(make_cfg(n), bf16_conv(out | FW_CONV_BIAS, 1, 4, 5, 3, 1, 1, 5), seed++, true);
            run_conv(make_cfg(n), bf16_conv(out | FW_CONV_RELU, 1, 3, 9, n + 2, 2, 5, 2), seed++,
                     true);
        }
    }
}

// Small UBs and accumulators: bands, one plane set, short plane groups.
TEST(FirmwareConvBf16, SmallCores)
{
    uint64_t seed = 200;
    for (const tpusim_hwcfg &cfg : {make_cfg(4, 160, 24, 1), make_cfg(8, 200, 40, 2)}) {
        Conv v = bf16_conv(FW_CONV_BIAS | FW_CONV_OUT_BF16, 1, 12, 7, 5, 3, 3, 6);
        v.pt = v.pb = v.pl = v.pr = 1;
        run_conv(cfg, v, seed++);
        v.flags = FW_CONV_BF16 | FW_CONV_RELU;
        run_conv(cfg, v, seed++);
    }
}

// The flags: version 3's, the invalid combinations, and bf16's limit on sw.
TEST(FirmwareConvBf16, Validation)
{
    auto expect = [&](const Conv &v, uint32_t version, const char *field) {
        SCOPED_TRACE(describe(v, 8) + " version " + std::to_string(version));
        const uint32_t bufs[4] = {0, 1, 2, v.flags & FW_CONV_BIAS ? 3u : 0u};
        GoldenHal h(make_cfg(8));
        auto s =
            stream_bytes({{0x1000, 0x4000}, {0x5000, 0x1000}, {0x6000, 0x1000}, {0x7000, 0x100}},
                         {conv_bytes(v, bufs)});
        put32(s, FW_HDR_VERSION, version);
        std::memcpy(h.mem() + 0x10000, s.data(), s.size());
        const fw_hal hal = h.hal();
        fw_result res;
        fw_run(&hal, 0x10000, static_cast<uint32_t>(s.size()), &res);
        EXPECT_STREQ(res.field, field);
        if (*field) {
            EXPECT_STRNE(res.why, "");
        }
    };
    Conv v = bf16_conv(FW_CONV_BIAS, 1, 4, 4, 3, 3, 3, 4);
    expect(v, 3, "");
    expect(v, 2, "flags");
    v.flags |= FW_CONV_A_UNSIGNED;
    expect(v, 3, "flags");
    v.flags = FW_CONV_BF16 | FW_CONV_OUT_INT8;
    expect(v, 3, "flags");
    v.flags = FW_CONV_OUT_BF16;
    expect(v, 3, "flags");
    v.flags = FW_CONV_BF16 | FW_CONV_POOLING;
    v.ph = v.pw = v.psh = v.psw = 1;
    expect(v, 3, "flags"); // pooling needs OUT_BF16
    v.flags |= FW_CONV_OUT_BF16;
    expect(v, 3, "");
    v = bf16_conv(0, 1, 4, 300, 3, 3, 3, 4);
    v.sw = 128;
    expect(v, 3, "stride");
    v.sw = 127;
    expect(v, 3, "");
}

} // namespace

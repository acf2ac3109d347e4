// test_conv.cpp - the firmware's CONV2D command (firmware/firmware.h, docs/command-stream.md)
// driving the golden model: convolutions of random and edge-case shapes (odd sizes, stride 2,
// padding on every side, 1x1 kernels, a kernel as large as the padded input, channels 1, 3,
// N - 1, N + 1, batch 1 and 5, both input layouts, bands that split the image, one or two UB
// plane sets), int32 and int8 output, with and without max pooling (windows at the edges, strides
// smaller than the window), against a naive C reference; and every field refused by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "firmware/firmware.h"
#include "sim/tpusim.h"
#include "tests/support/conv_test.h"
#include "tests/support/fw_test.h"

namespace
{

using namespace conv_test;
using namespace fw_test;

std::vector<uint8_t> conv_bytes(const Conv &v, const uint32_t bufs[4], const uint32_t offs[4])
{
    std::vector<uint8_t> b(FW_CONV_BYTES);
    put32(b, 0, FW_CMD_CONV2D | FW_CONV_BYTES << 16);
    put32(b, FW_CONV_FLAGS, v.flags);
    put32(b, FW_CONV_BATCH, v.batch);
    put32(b, FW_CONV_H, v.h);
    put32(b, FW_CONV_W, v.w);
    put32(b, FW_CONV_C, v.c);
    put32(b, FW_CONV_KH, v.kh);
    put32(b, FW_CONV_KW, v.kw);
    put32(b, FW_CONV_COUT, v.cout);
    put32(b, FW_CONV_STRIDE, v.sh | v.sw << 16);
    put32(b, FW_CONV_PAD, v.pt | v.pb << 8 | v.pl << 16 | v.pr << 24);
    put32(b, FW_CONV_POOL, v.ph | v.pw << 8 | v.psh << 16 | v.psw << 24);
    const uint32_t fb[4] = {FW_CONV_IN_BUF, FW_CONV_K_BUF, FW_CONV_OUT_BUF, FW_CONV_P_BUF};
    for (int i = 0; i < 4; i++) {
        put32(b, fb[i], bufs[i]);
        put32(b, fb[i] + 4, offs[i]);
    }
    return b;
}

// Lays v out (input, tiled kernel, output, parameters, then the stream), runs it and compares all
// of memory: the output rewritten as the reference says, nothing else touched.
void run_conv(const tpusim_hwcfg &cfg, const Conv &v, uint32_t seed)
{
    SCOPED_TRACE(describe(v, cfg.array_n) + " seed " + std::to_string(seed));
    GoldenHal h(cfg);
    ASSERT_NE(h.g, nullptr);
    std::mt19937 rng(seed);
    const uint32_t n = cfg.array_n;
    const bool params = v.flags & (FW_CONV_BIAS | FW_CONV_OUT_INT8);
    std::vector<int8_t> k(size_t{v.kh} * v.kw * v.c * v.cout);
    for (int8_t &x : k)
        x = static_cast<int8_t>(rng());
    const std::vector<int8_t> tiled = tile_kernel(v, k, n);
    const uint64_t sizes[4] = {uint64_t{v.batch} * v.h * v.w * v.c, tiled.size(),
                               uint64_t{v.batch} * v.ohp() * v.owp() * v.cout * v.out_elt(),
                               params ? 12ull * v.cout : 0};
    std::vector<Buffer> bufs;
    uint32_t addr[4] = {0, 0, 0, 0}, ids[4] = {0, 0, 0, 0}, offs[4] = {0, 0, 0, 0};
    uint64_t at = 64;
    for (int i = 0; i < 4; i++) {
        if (!sizes[i])
            continue;
        ids[i] = static_cast<uint32_t>(bufs.size());
        addr[i] = static_cast<uint32_t>(at);
        bufs.push_back({addr[i], static_cast<uint32_t>(sizes[i])});
        at = (at + sizes[i] + 127) & ~uint64_t{63};
    }
    const auto stream = stream_bytes(bufs, {conv_bytes(v, ids, offs)});
    ASSERT_LE(at + stream.size(), cfg.mem_size);
    uint8_t *mem = h.mem();
    for (uint64_t i = 0; i < at; i++) // stale output, gaps and inputs alike
        mem[i] = static_cast<uint8_t>(rng());
    std::memcpy(mem + addr[1], tiled.data(), tiled.size());
    std::vector<int32_t> bias(v.cout), mult(v.cout), shift(v.cout);
    for (uint32_t o = 0; o < v.cout; o++) {
        bias[o] = static_cast<int32_t>(rng() % 4001) - 2000;
        mult[o] = static_cast<int32_t>(rng() % 3000) + 1; // > 0: max pooling commutes with it
        shift[o] = static_cast<int32_t>(rng() % 6) + 6;
        if (params) {
            wr32(mem + addr[3] + 4 * o, static_cast<uint32_t>(bias[o]));
            wr32(mem + addr[3] + 4 * (v.cout + o), static_cast<uint32_t>(mult[o]));
            wr32(mem + addr[3] + 4 * (2 * v.cout + o), static_cast<uint32_t>(shift[o]));
        }
    }
    std::vector<uint8_t> expect(mem, mem + cfg.mem_size);
    const std::vector<uint8_t> out =
        reference(v, mem + addr[0], k, bias.data(), mult.data(), shift.data());
    std::copy(out.begin(), out.end(), expect.begin() + addr[2]);
    const uint32_t stream_at = static_cast<uint32_t>(at);
    std::copy(stream.begin(), stream.end(), expect.begin() + stream_at);
    const Outcome r = run_stream(h, stream, stream_at);
    ASSERT_EQ(r.res.code, FW_OK) << "field " << r.res.field;
    expect_memory(h, expect);
}

const uint32_t kArrays[] = {4, 8};

TEST(FirmwareConv, EdgeShapes)
{
    for (uint32_t n : kArrays) {
        const tpusim_hwcfg cfg = make_cfg(n);
        // 3x3 on one channel, no padding: packed runs (c % N != 0).
        run_conv(cfg, {1, 6, 7, 1, 3, 3, 3}, 1);
        // Padding on every side, stride 2, three channels: pixel planes.
        Conv v{2, 7, 9, 3, 3, 3, 5};
        v.sh = v.sw = 2;
        v.pt = 1, v.pb = 2, v.pl = 1, v.pr = 2;
        run_conv(cfg, v, 2);
        // 1x1 kernels with N - 1 and N + 1 channels.
        run_conv(cfg, {1, 5, 4, n - 1, 1, 1, n + 1}, 3);
        run_conv(cfg, {3, 4, 5, n + 1, 1, 1, n - 1}, 4);
        // A kernel as large as the padded input: one output pixel.
        v = Conv{1, 5, 5, 2, 7, 7, 4};
        v.pt = v.pb = v.pl = v.pr = 1;
        run_conv(cfg, v, 5);
        // Channels a multiple of N: pixel planes without padding; vertical padding only, packed.
        run_conv(cfg, {5, 6, 6, n, 3, 2, 2 * n}, 6);
        v = Conv{1, 5, 6, 3, 3, 3, 4};
        v.pt = 2, v.pb = 1;
        run_conv(cfg, v, 7);
        // Asymmetric strides and kernels.
        v = Conv{2, 9, 8, 2, 2, 3, 3};
        v.sh = 3, v.sw = 1;
        run_conv(cfg, v, 8);
    }
}

TEST(FirmwareConv, OutputKinds)
{
    for (uint32_t n : kArrays) {
        const tpusim_hwcfg cfg = make_cfg(n);
        Conv v{2, 6, 5, 3, 3, 3, 6};
        const uint32_t kinds[] = {0,
                                  FW_CONV_BIAS,
                                  FW_CONV_RELU,
                                  FW_CONV_BIAS | FW_CONV_RELU,
                                  FW_CONV_OUT_INT8,
                                  FW_CONV_OUT_INT8 | FW_CONV_A_UNSIGNED,
                                  FW_CONV_OUT_INT8 | FW_CONV_BIAS | FW_CONV_RELU};
        for (uint32_t flags : kinds) {
            v.flags = flags;
            run_conv(cfg, v, 10 + flags);
        }
    }
}

TEST(FirmwareConv, Pooling)
{
    for (uint32_t n : kArrays) {
        const tpusim_hwcfg cfg = make_cfg(n);
        struct {
            Conv v;
            uint32_t ph, pw, psh, psw;
        } cases[] = {
            {{1, 10, 10, 1, 3, 3, 4}, 2, 2, 2, 2},   // MNIST's: 2x2 stride 2
            {{2, 11, 11, 3, 3, 3, 5}, 3, 3, 2, 2},   // overlapping windows, edges dropped
            {{1, 8, 9, 2, 3, 3, n + 1}, 2, 3, 1, 1}, // stride 1
            {{1, 9, 7, 4, 3, 3, 3}, 7, 5, 1, 1},     // window = whole output
            {{5, 7, 7, n, 2, 2, 2}, 2, 2, 2, 2},     // odd output: last row and column dropped
        };
        uint32_t seed = 20;
        for (auto &c : cases) {
            c.v.flags = FW_CONV_OUT_INT8 | FW_CONV_BIAS | FW_CONV_RELU | FW_CONV_POOLING;
            c.v.ph = c.ph, c.v.pw = c.pw, c.v.psh = c.psh, c.v.psw = c.psw;
            run_conv(cfg, c.v, seed++);
        }
        Conv v{1, 9, 9, 3, 3, 3, 4}; // pooling after padding, and pooling without ReLU
        v.pt = v.pb = v.pl = v.pr = 1;
        v.flags = FW_CONV_OUT_INT8 | FW_CONV_POOLING | FW_CONV_BIAS;
        v.ph = v.pw = v.psh = v.psw = 2;
        run_conv(cfg, v, seed++);
    }
}

// Small cores: the image is cut in bands, with one plane set or two.
TEST(FirmwareConv, BandsAndPlaneSets)
{
    for (uint32_t n : kArrays) {
        Conv v{2, 14, 13, 5, 3, 3, n + 2};
        v.pt = v.pb = v.pl = v.pr = 1;
        for (uint32_t ub : {4096u, 400u, 160u}) {
            run_conv(make_cfg(n, ub, 4096), v, ub);
            run_conv(make_cfg(n, ub, 64), v, ub + 1); // accumulators cut bands too
        }
        Conv p{1, 16, 12, 2, 3, 3, 3};
        p.flags |= FW_CONV_POOLING;
        p.ph = p.pw = 3, p.psh = p.psw = 2; // bands of pooled rows recompute shared conv rows
        run_conv(make_cfg(n, 160, 96), p, 40);
        run_conv(make_cfg(n, 16384, 4096, 1), p, 41); // one weight-FIFO tile
    }
}

TEST(FirmwareConv, RandomCases)
{
    std::mt19937 rng(2026);
    auto pick = [&](uint32_t lo, uint32_t hi) {
        return lo + static_cast<uint32_t>(rng() % (hi - lo + 1));
    };
    for (int i = 0; i < 60; i++) {
        const uint32_t n = kArrays[i % 2];
        Conv v{pick(1, 3), pick(1, 12), pick(1, 12), pick(1, 2 * n + 1), 1, 1, pick(1, 2 * n + 1)};
        v.pt = pick(0, 2), v.pb = pick(0, 2), v.pl = pick(0, 2), v.pr = pick(0, 2);
        if (i % 3 == 0)
            v.pl = v.pr = 0;
        v.kh = pick(1, std::min(5u, v.h + v.pt + v.pb));
        v.kw = pick(1, std::min(5u, v.w + v.pl + v.pr));
        v.sh = pick(1, 3), v.sw = pick(1, 3);
        v.flags = rng() % 16;
        if (v.flags & FW_CONV_OUT_INT8 && rng() % 2 && v.oh() >= 2 && v.ow() >= 2) {
            v.flags |= FW_CONV_POOLING;
            v.ph = pick(1, std::min(3u, v.oh())), v.pw = pick(1, std::min(3u, v.ow()));
            v.psh = pick(1, 3), v.psw = pick(1, 3);
        }
        run_conv(
            make_cfg(n, pick(0, 1) ? 16384 : pick(200, 1000), pick(0, 1) ? 4096 : pick(64, 512)), v,
            100 + i);
    }
}

// ------------------------------------------------------------ validation --

const uint32_t kBase = 0x1000;

// A valid command over one large buffer, to break one field at a time.
struct Valid {
    Conv v{2, 8, 8, 3, 3, 3, 4};
    uint32_t bufs[4] = {0, 0, 0, 0}, offs[4] = {0, 0x800, 0x1000, 0x1800};
    std::vector<uint8_t> bytes() const { return conv_bytes(v, bufs, offs); }
};

// Expects cmd refused by its field and what is wrong with it (why: a part of fw_result.why).
void expect_field(const std::vector<uint8_t> &cmd, const char *field, const char *why,
                  uint32_t version = 2)
{
    GoldenHal h(make_cfg(4));
    auto stream = stream_bytes({{kBase, 0x2000}}, {cmd});
    put32(stream, FW_HDR_VERSION, version);
    std::memcpy(h.mem() + 0x10000, stream.data(), stream.size());
    const fw_hal hal = h.hal();
    fw_result r;
    EXPECT_EQ(fw_run(&hal, 0x10000, static_cast<uint32_t>(stream.size()), &r), FW_ERR_COMMAND)
        << field;
    EXPECT_STREQ(r.field, field);
    EXPECT_NE(std::string(r.why).find(why), std::string::npos) << field << ": " << r.why;
    EXPECT_EQ(r.cmd, 0u);
    EXPECT_TRUE(h.pushed.empty()) << "nothing runs unless the whole stream is valid";
}

// The output size, one dimension at a time, as the firmware, the driver and the compiler take it.
TEST(FirmwareConv, OutputSize)
{
    EXPECT_EQ(fw_conv_out_dim(28, 0, 0, 3, 1, 0, 0, 0), 26u);
    EXPECT_EQ(fw_conv_out_dim(28, 1, 1, 3, 1, 0, 0, 0), 28u);
    EXPECT_EQ(fw_conv_out_dim(28, 1, 2, 3, 2, 0, 0, 0), 15u);
    EXPECT_EQ(fw_conv_out_dim(26, 0, 0, 3, 1, 1, 2, 2), 12u); // 24 pooled 2 by 2
    EXPECT_EQ(fw_conv_out_dim(26, 0, 0, 3, 1, 1, 3, 2), 11u);
    EXPECT_EQ(fw_conv_out_dim(5, 0, 0, 5, 7, 1, 1, 1), 1u);
    EXPECT_EQ(fw_conv_out_dim(UINT32_MAX, 255, 255, 1, 1, 0, 0, 0), UINT32_MAX + 510ull);
    // Nothing fits: the kernel, a stride, the window.
    EXPECT_EQ(fw_conv_out_dim(4, 1, 0, 6, 1, 0, 0, 0), 0u);
    EXPECT_EQ(fw_conv_out_dim(4, 0, 0, 0, 1, 0, 0, 0), 0u);
    EXPECT_EQ(fw_conv_out_dim(4, 0, 0, 3, 0, 0, 0, 0), 0u);
    EXPECT_EQ(fw_conv_out_dim(4, 0, 0, 3, 1, 1, 3, 1), 0u);
    EXPECT_EQ(fw_conv_out_dim(4, 0, 0, 3, 1, 1, 0, 1), 0u);
    EXPECT_EQ(fw_conv_out_dim(4, 0, 0, 3, 1, 1, 2, 0), 0u);
}

TEST(FirmwareConvValidation, EveryFieldByName)
{
    Valid ok;
    {
        GoldenHal h(make_cfg(4));
        const auto stream = stream_bytes({{kBase, 0x2000}}, {ok.bytes()});
        EXPECT_EQ(run_stream(h, stream, 0x10000).res.code, FW_OK);
    }
    expect_field(ok.bytes(), "op", "CONV2D needs a version 2 stream", 1);
    auto bad = [&](const char *field, const char *why, void (*f)(Valid &)) {
        Valid b;
        f(b);
        expect_field(b.bytes(), field, why);
    };
    bad("flags", "an undefined flag bit set", [](Valid &b) { b.v.flags = 0x100; });
    bad("flags", "POOLING without OUT_INT8",
        [](Valid &b) { b.v.flags = FW_CONV_POOLING, b.v.ph = b.v.pw = b.v.psh = b.v.psw = 1; });
    bad("batch", "zero", [](Valid &b) { b.v.batch = 0; });
    const char *size = "zero, or more than the instruction's rows field holds";
    bad("h", size, [](Valid &b) { b.v.h = 0; });
    bad("w", size, [](Valid &b) { b.v.w = 0; });
    bad("w", size, [](Valid &b) { b.v.w = 70000; });
    bad("c", size, [](Valid &b) { b.v.c = 0; });
    bad("cout", size, [](Valid &b) { b.v.cout = 0; });
    bad("kh", "zero, or taller than the padded input", [](Valid &b) { b.v.kh = 0; });
    bad("kh", "zero, or taller than the padded input", [](Valid &b) { b.v.kh = 9; });
    bad("kw", "zero, or wider than the padded input",
        [](Valid &b) { b.v.kw = 11, b.v.pl = 1, b.v.pr = 1; });
    bad("stride", "zero, or above 255", [](Valid &b) { b.v.sh = 0; });
    bad("stride", "zero, or above 255", [](Valid &b) { b.v.sw = 256; });
    bad("pool", "not 0 without POOLING", [](Valid &b) { b.v.ph = 2; });
    bad("pool", "a window side zero, or above 15", [](Valid &b) {
        b.v.flags |= FW_CONV_POOLING, b.v.ph = 2, b.v.pw = 16, b.v.psh = b.v.psw = 1;
    });
    bad("pool", "a window stride zero", [](Valid &b) {
        b.v.flags |= FW_CONV_POOLING, b.v.ph = b.v.pw = 2, b.v.psh = 0, b.v.psw = 1;
    });
    bad("pool", "the window is larger than the convolution's output", [](Valid &b) {
        b.v.flags |= FW_CONV_POOLING, b.v.ph = 7, b.v.pw = 2, b.v.psh = b.v.psw = 1;
    });
    const char *index = "not a buffer-table index", *fit = "the operand does not fit in its buffer";
    bad("in.buf", index, [](Valid &b) { b.bufs[0] = 1; });
    bad("in.off", fit, [](Valid &b) { b.offs[0] = 0x1f00; });
    bad("k.buf", index, [](Valid &b) { b.bufs[1] = 7; });
    bad("k.off", fit, [](Valid &b) { b.offs[1] = 0x1fa0; });
    bad("out.buf", index, [](Valid &b) { b.bufs[2] = 2; });
    bad("out.off", fit, [](Valid &b) { b.offs[2] = 0x1fc0; });
    bad("params.buf", index, [](Valid &b) { b.bufs[3] = 3; });
    bad("params.off", fit, [](Valid &b) { b.offs[3] = 0x1fe0; });
    bad("params.buf", "not 0 without BIAS or OUT_INT8",
        [](Valid &b) { b.v.flags = 0, b.bufs[3] = 1; });
    bad("params.off", "not 0 without BIAS or OUT_INT8",
        [](Valid &b) { b.v.flags = 0, b.offs[3] = 4; });
    bad("out overlaps in", "the output's extent intersects the input's",
        [](Valid &b) { b.offs[2] = 0x100; });
    bad("out overlaps k", "the output's extent intersects the kernel's",
        [](Valid &b) { b.offs[2] = 0x880; });
    bad("out overlaps params", "the output's extent intersects the parameters'",
        [](Valid &b) { b.offs[3] = 0x1010; });
    // The kernel's extent is KT x NT tiles: a kernel taller than its buffer holds (padding
    // makes it legal).
    bad("k.off", fit, [](Valid &b) { b.v.h = 1, b.v.kh = 400, b.v.pt = b.v.pb = 255; });
}

TEST(FirmwareConvValidation, TooWideForTheCore)
{
    // One output row needs more UB rows than the core has: refused before anything runs.
    GoldenHal h(make_cfg(4, 64, 4096));
    Valid b;
    b.v = Conv{1, 4, 40, 8, 3, 3, 4};
    auto stream = stream_bytes({{kBase, 0x2000}}, {b.bytes()});
    std::memcpy(h.mem() + 0x10000, stream.data(), stream.size());
    const fw_hal hal = h.hal();
    fw_result r;
    EXPECT_EQ(fw_run(&hal, 0x10000, static_cast<uint32_t>(stream.size()), &r), FW_ERR_COMMAND);
    EXPECT_STREQ(r.field, "w");
}

} // namespace

// test_stream_seeds.cpp - the seeds of the command-stream fuzzer (tests/fuzz/stream_fuzz.c) in
// tests/fuzz/seeds/stream/, built here with the driver's stream builder. A seed is the fuzzer's
// input: one byte for the array size (bit 0: N = 8, else 4), then a device-memory image with the
// stream at address 0 and the operands in one buffer from 0x1000 to the end of memory (so
// mutated offsets stay inside it), filled with random bytes. Each seed must run on the fuzzer's
// core (the golden model behind the firmware) and equal the committed file: the fuzzer starts
// from streams that pass validation. TPU_WRITE_SEEDS=1 bin/test_stream_seeds rewrites the files.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "driver/tpu.h"
#include "firmware/firmware.h"
#include "tests/support/fw_test.h"
#include "tests/support/progs.h"

namespace
{

using namespace fw_test;

// The fuzzer's core (stream_fuzz.c): 64 KiB of memory, 512 UB and 256 ACC rows.
tpusim_hwcfg fuzz_cfg(uint32_t n) { return tpusim_hwcfg{n, 512, 256, 4, 32, 65536}; }

const uint32_t kData = 0x1000; // the operands' buffer, after the stream

// One seed being built: the stream, and the operands' bytes from kData on.
struct Seed {
    uint32_t n;
    tpu_rng rng;
    tpu_stream *s = tpu_stream_new();
    std::vector<uint8_t> data;

    Seed(uint32_t array_n, uint64_t seed) : n(array_n), rng{seed}
    {
        uint32_t idx;
        EXPECT_EQ(tpu_stream_buffer(s, kData, 65536 - kData, &idx), TPU_OK);
    }
    ~Seed() { tpu_stream_free(s); }
    Seed(const Seed &) = delete;
    Seed &operator=(const Seed &) = delete;

    // A new operand of `bytes` random bytes, 16-byte aligned; returns its offset in the buffer.
    tpu_operand place(uint64_t bytes, uint32_t ld = 0)
    {
        const size_t at = (data.size() + 15) & ~size_t{15};
        data.resize(at);
        data.resize(at + bytes);
        rng_fill(&rng, data.data() + at, bytes);
        return tpu_operand{0, static_cast<uint32_t>(at), ld};
    }

    // int32 bias, mult, shift of `cols` columns, scaled for results of about 1/1000 of the
    // accumulators, so int8 outputs spread over the range rather than sit on the clamps.
    // Column 1's mult is negative: requantization then reverses order, which tells a maximum
    // taken before it (ACTIVATE.POOL) from one taken after.
    tpu_operand params(uint32_t cols)
    {
        const tpu_operand p = place(12ull * cols);
        for (uint32_t j = 0; j < cols; j++) {
            const int32_t mult = static_cast<int32_t>(500 + rng_below(&rng, 3500));
            wr32(&data[p.offset + 4 * j], static_cast<uint32_t>(rng_range(&rng, -2000, 2000)));
            wr32(&data[p.offset + 4 * (cols + j)], static_cast<uint32_t>(j == 1 ? -mult : mult));
            wr32(&data[p.offset + 4 * (2 * cols + j)], 20);
        }
        return p;
    }

    // bf16 operands are random bits (NaNs, infinities and subnormals among them), the bias too.
    void gemm(tpu_gemm g, uint32_t lda, uint32_t ldb, uint32_t ldc)
    {
        const bool tiled = g.flags & TPU_GEMM_B_TILED, bf16 = g.flags & TPU_GEMM_BF16;
        const uint64_t e = bf16 ? 2 : 1;
        g.a = place(((uint64_t{g.m} - 1) * lda + g.k) * e, lda);
        g.b = place((tiled ? gemm_tiled_b_bytes(g.k, g.n, n) : (uint64_t{g.k} - 1) * ldb + g.n) * e,
                    tiled ? 0 : ldb);
        if (g.flags & (TPU_GEMM_BIAS | TPU_GEMM_OUT_INT8))
            g.params = bf16 ? place(4ull * g.n) : params(g.n);
        const uint64_t c_size = g.flags & TPU_GEMM_OUT_INT8   ? 1
                                : g.flags & TPU_GEMM_OUT_BF16 ? 2
                                                              : 4;
        g.c = place(((uint64_t{g.m} - 1) * ldc + g.n) * c_size, ldc);
        ASSERT_EQ(tpu_stream_gemm(s, &g), TPU_OK);
    }

    // v's input, unless v.in is set (an earlier command's output), then kernel, params, output.
    void conv(tpu_conv2d v, bool place_input = true)
    {
        const bool bf16 = v.flags & TPU_GEMM_BF16;
        const uint64_t e = bf16 ? 2 : 1;
        if (place_input)
            v.in = place(uint64_t{v.batch} * v.h * v.w * v.c * e);
        v.kernel = place(uint64_t{tpu_conv_k_tiles(&v, n)} * ((v.cout + n - 1) / n) * n * n * e);
        if (v.flags & (TPU_GEMM_BIAS | TPU_GEMM_OUT_INT8))
            v.params = bf16 ? place(4ull * v.cout) : params(v.cout);
        uint32_t oh, ow;
        tpu_conv_out_size(&v, &oh, &ow);
        ASSERT_GT(oh, 0u);
        const uint64_t out_e = v.flags & TPU_GEMM_OUT_INT8   ? 1
                               : v.flags & TPU_GEMM_OUT_BF16 ? 2
                                                             : 4;
        v.out = place(uint64_t{v.batch} * oh * ow * v.cout * out_e);
        ASSERT_EQ(tpu_stream_conv2d(s, &v), TPU_OK);
    }

    // The fuzzer's input, marked as a stream of that version (1: GEMM only, 2: int8 only).
    std::vector<uint8_t> bytes(uint32_t version) const
    {
        size_t len = 0;
        const auto *p = static_cast<const uint8_t *>(tpu_stream_data(s, &len));
        EXPECT_LE(len, kData);
        std::vector<uint8_t> out(1 + kData + data.size(), 0);
        out[0] = n == 8;
        std::copy(p, p + len, out.begin() + 1);
        wr32(&out[1 + FW_HDR_VERSION], version);
        std::copy(data.begin(), data.end(), out.begin() + 1 + kData);
        return out;
    }
};

tpu_conv2d conv_shape(uint32_t flags, uint32_t batch, uint32_t h, uint32_t w, uint32_t c,
                      uint32_t kh, uint32_t kw, uint32_t cout)
{
    tpu_conv2d v{};
    v.flags = flags, v.batch = batch, v.h = h, v.w = w, v.c = c, v.kh = kh, v.kw = kw;
    v.cout = cout, v.stride_h = v.stride_w = 1;
    return v;
}

tpu_gemm gemm_shape(uint32_t flags, uint32_t m, uint32_t k, uint32_t n)
{
    tpu_gemm g{};
    g.flags = flags, g.m = m, g.k = k, g.n = n;
    return g;
}

// Every seed by file name.
std::vector<std::pair<std::string, std::vector<uint8_t>>> all_seeds()
{
    std::vector<std::pair<std::string, std::vector<uint8_t>>> seeds;
    const uint32_t i8 = TPU_GEMM_OUT_INT8, bias = TPU_GEMM_BIAS, relu = TPU_GEMM_RELU;
    { // GEMM, int32 output, in a version 1 stream
        Seed s(4, 1);
        s.gemm(gemm_shape(0, 5, 7, 6), 7, 6, 6);
        seeds.emplace_back("int32_n4.bin", s.bytes(1));
    }
    { // tiled B, bias, int8 output
        Seed s(4, 2);
        s.gemm(gemm_shape(bias | i8 | TPU_GEMM_B_TILED, 6, 9, 5), 9, 0, 5);
        seeds.emplace_back("int8_tiled_n4.bin", s.bytes(2));
    }
    { // bias and ReLU, int32 output
        Seed s(8, 3);
        s.gemm(gemm_shape(bias | relu, 9, 10, 11), 10, 11, 11);
        seeds.emplace_back("relu_bias_n8.bin", s.bytes(2));
    }
    { // unsigned A; a second GEMM reading the first one's int32 output as int8 rows
        Seed s(8, 4);
        s.gemm(gemm_shape(TPU_GEMM_A_UNSIGNED, 4, 3, 2), 3, 2, 2);
        tpu_gemm g = gemm_shape(0, 2, 4, 2);
        g.a = {0, static_cast<uint32_t>(s.data.size() - 32), 8}; // the 4 x 2 int32 C, last placed
        g.b = s.place(4 * 2, 2);
        g.c = s.place(2 * 2 * 4, 2);
        EXPECT_EQ(tpu_stream_gemm(s.s, &g), TPU_OK);
        seeds.emplace_back("unsigned_two_n8.bin", s.bytes(2));
    }
    { // padding on every side (pixel-order kernel), bias, ReLU, int8 output
        Seed s(4, 5);
        tpu_conv2d v = conv_shape(bias | relu | i8, 1, 6, 7, 3, 3, 3, 5);
        v.pad_top = v.pad_bottom = v.pad_left = v.pad_right = 1;
        s.conv(v);
        seeds.emplace_back("conv_pad_n4.bin", s.bytes(2));
    }
    { // no padding, one channel (packed-run kernel), bias, int32 output
        Seed s(8, 6);
        s.conv(conv_shape(bias, 1, 8, 9, 1, 3, 3, 4));
        seeds.emplace_back("conv_packed_int32_n8.bin", s.bytes(2));
    }
    { // stride 2, asymmetric padding, channels = N (pixel order), ReLU only (no parameters)
        Seed s(4, 7);
        tpu_conv2d v = conv_shape(relu, 1, 9, 8, 4, 3, 3, 3);
        v.stride_h = v.stride_w = 2;
        v.pad_top = v.pad_left = 1, v.pad_bottom = v.pad_right = 2;
        s.conv(v);
        seeds.emplace_back("conv_stride2_n4.bin", s.bytes(2));
    }
    { // 3x3 max pooling of step 2 (windows share rows) after padding, unsigned input
        Seed s(8, 8);
        tpu_conv2d v = conv_shape(bias | relu | i8 | TPU_CONV_POOL | TPU_GEMM_A_UNSIGNED, 1, 10, 10,
                                  2, 3, 3, 3);
        v.pad_top = v.pad_bottom = v.pad_left = v.pad_right = 1;
        v.pool_h = v.pool_w = 3, v.pool_stride_h = v.pool_stride_w = 2;
        s.conv(v);
        seeds.emplace_back("conv_pool_n8.bin", s.bytes(2));
    }
    { // batch 2, vertical padding only (packed runs of 5 channels), int8 output without bias
        Seed s(4, 9);
        tpu_conv2d v = conv_shape(i8, 2, 5, 6, 5, 2, 3, 6);
        v.pad_top = v.pad_bottom = 1;
        s.conv(v);
        seeds.emplace_back("conv_batch2_n4.bin", s.bytes(2));
    }
    { // a GEMM whose int8 output (16 pixels x 3 channels) is a CONV2D's NHWC input
        Seed s(8, 10);
        s.gemm(gemm_shape(bias | relu | i8, 16, 5, 3), 5, 3, 3);
        tpu_conv2d v = conv_shape(bias | relu, 1, 4, 4, 3, 2, 2, 9);
        v.pad_bottom = v.pad_right = 1;
        v.in = {0, static_cast<uint32_t>(s.data.size() - 48), 0}; // the GEMM's C, last placed
        s.conv(v, false);
        seeds.emplace_back("gemm_conv_n8.bin", s.bytes(2));
    }
    { // bf16: tiled B, bias, ReLU, fp32 output
        Seed s(4, 11);
        s.gemm(gemm_shape(TPU_GEMM_BF16 | TPU_GEMM_B_TILED | bias | relu, 5, 7, 6), 7, 0, 6);
        seeds.emplace_back("bf16_tiled_n4.bin", s.bytes(3));
    }
    { // bf16 output, K of at most N/2 (its own load), columns of at most N/2 in the last tile
        Seed s(8, 12);
        s.gemm(gemm_shape(TPU_GEMM_BF16 | TPU_GEMM_OUT_BF16, 6, 3, 11), 4, 11, 12);
        seeds.emplace_back("bf16_out_n8.bin", s.bytes(3));
    }
    { // bf16 CONV2D: 2 channels on N = 4 (a short last plane), padding, pooling, bf16 output
        Seed s(4, 13);
        tpu_conv2d v = conv_shape(TPU_GEMM_BF16 | TPU_GEMM_OUT_BF16 | bias | relu | TPU_CONV_POOL,
                                  1, 6, 6, 2, 3, 3, 5);
        v.pad_top = v.pad_bottom = v.pad_left = v.pad_right = 1;
        v.pool_h = v.pool_w = v.pool_stride_h = v.pool_stride_w = 2;
        s.conv(v);
        seeds.emplace_back("bf16_conv_pool_n4.bin", s.bytes(3));
    }
    return seeds;
}

const std::string kDir = TPU_SOURCE_DIR "/tests/fuzz/seeds/stream/";

TEST(StreamSeeds, RunAndMatchTheCommittedFiles)
{
    const bool write = std::getenv("TPU_WRITE_SEEDS") != nullptr;
    std::set<std::string> names;
    for (const auto &[name, seed] : all_seeds()) {
        SCOPED_TRACE(name);
        names.insert(name);
        EXPECT_LE(seed.size(), 4096u + 1 + kData) << "seeds stay small: the fuzzer mutates them";
        GoldenHal h(fuzz_cfg(seed[0] & 1 ? 8 : 4));
        ASSERT_NE(h.g, nullptr);
        std::copy(seed.begin() + 1, seed.end(), h.mem());
        const fw_hal hal = h.hal();
        fw_result r;
        ASSERT_EQ(fw_run(&hal, 0, rd32(&seed[1 + FW_HDR_BYTES]), &r), FW_OK) << r.field;
        EXPECT_EQ(h.error, TPU_FAULT_NONE) << tpusim_fault_name(h.error);
        EXPECT_FALSE(std::equal(seed.begin() + 1, seed.end(), h.mem())) << "the run wrote nothing";
        if (write) {
            std::ofstream(kDir + name, std::ios::binary)
                .write(reinterpret_cast<const char *>(seed.data()),
                       static_cast<std::streamsize>(seed.size()));
            continue;
        }
        std::ifstream f(kDir + name, std::ios::binary);
        const std::vector<uint8_t> committed{std::istreambuf_iterator<char>(f), {}};
        EXPECT_TRUE(committed == seed) << "stale: rewrite with TPU_WRITE_SEEDS=1";
    }
    // No seed comes from anywhere else.
    for (const auto &e : std::filesystem::directory_iterator(kDir))
        EXPECT_TRUE(names.count(e.path().filename().string())) << e.path() << " is not built here";
}

} // namespace

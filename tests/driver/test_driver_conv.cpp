// test_driver_conv.cpp - CONV2D (tpu_stream_conv2d) on the cycle-accurate device at every built
// array size, with the driver's golden-model verification on (the instructions the firmware
// pushed replayed on the golden model, every byte they wrote compared) and the output compared
// with the plain C reference of tests/support/conv_test.h: odd sizes, stride 2, padding on every
// side, 1x1 kernels, a kernel as large as the padded input, channels 1, 3, N - 1, N + 1, batch 1
// and 5, both input layouts, pooling windows and strides (overlapping, edges dropped, the whole
// output), int8 and int32 outputs, unsigned input, and random shapes. So the RTL's ZERO, strided
// MATMUL and ACTIVATE.POOL run the firmware's schedules bit-exactly.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "driver/tpu.h"
#include "tests/support/conv_test.h"
#include "tests/support/driver_test.h"

namespace
{

using namespace conv_test;
using namespace driver_test;

// Runs v on d (array size n) from random operands and checks the output; the stream, the wait
// and the verification must succeed.
void run_conv(tpu_device *d, uint32_t n, const Conv &v, uint32_t seed)
{
    SCOPED_TRACE(describe(v, n) + " seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    const bool params = v.flags & (FW_CONV_BIAS | FW_CONV_OUT_INT8);
    std::vector<uint8_t> in(size_t{v.batch} * v.h * v.w * v.c);
    for (uint8_t &x : in)
        x = static_cast<uint8_t>(rng());
    std::vector<int8_t> k(size_t{v.kh} * v.kw * v.c * v.cout);
    for (int8_t &x : k)
        x = static_cast<int8_t>(rng());
    const std::vector<int8_t> tiled = tile_kernel(v, k, n);
    std::vector<int32_t> prm(3 * size_t{v.cout});
    for (uint32_t o = 0; o < v.cout; o++) {
        prm[o] = static_cast<int32_t>(rng() % 4001) - 2000;
        prm[v.cout + o] = static_cast<int32_t>(rng() % 6001) - 3000; // either sign
        prm[2 * v.cout + o] = static_cast<int32_t>(rng() % 6) + 6;
    }
    const std::vector<uint8_t> expect =
        reference(v, in.data(), k, prm.data(), prm.data() + v.cout, prm.data() + 2 * v.cout);

    tpu_stream *s = tpu_stream_new();
    ASSERT_NE(s, nullptr);
    std::vector<uint32_t> allocs;
    auto place = [&](const void *src, size_t bytes, tpu_operand &op) {
        uint32_t addr = 0, idx = 0;
        ASSERT_EQ(tpu_alloc(d, bytes, &addr), TPU_OK) << tpu_last_error(d);
        allocs.push_back(addr);
        ASSERT_EQ(tpu_write(d, addr, src, bytes), TPU_OK);
        ASSERT_EQ(tpu_stream_buffer(s, addr, static_cast<uint32_t>(bytes), &idx), TPU_OK);
        op = {idx, 0, 0};
    };
    tpu_conv2d c{};
    c.flags = v.flags;
    c.batch = v.batch, c.h = v.h, c.w = v.w, c.c = v.c, c.kh = v.kh, c.kw = v.kw, c.cout = v.cout;
    c.stride_h = v.sh, c.stride_w = v.sw;
    c.pad_top = v.pt, c.pad_bottom = v.pb, c.pad_left = v.pl, c.pad_right = v.pr;
    if (v.pooled())
        c.pool_h = v.ph, c.pool_w = v.pw, c.pool_stride_h = v.psh, c.pool_stride_w = v.psw;
    std::vector<uint8_t> stale(expect.size()); // the output starts as junk: all of it is written
    for (uint8_t &x : stale)
        x = static_cast<uint8_t>(rng());
    place(in.data(), in.size(), c.in);
    place(tiled.data(), tiled.size(), c.kernel);
    place(stale.data(), stale.size(), c.out);
    if (params)
        place(prm.data(), prm.size() * 4, c.params); // little-endian host
    uint32_t oh = 0, ow = 0;
    tpu_conv_out_size(&c, &oh, &ow);
    EXPECT_EQ(oh, v.ohp());
    EXPECT_EQ(ow, v.owp());

    ASSERT_EQ(tpu_stream_conv2d(s, &c), TPU_OK);
    ASSERT_EQ(tpu_submit(d, s), TPU_OK) << tpu_last_error(d);
    ASSERT_EQ(tpu_wait(d, 0), TPU_OK) << tpu_last_error(d);
    std::vector<uint8_t> got(expect.size());
    ASSERT_EQ(tpu_read(d, allocs[2], got.data(), got.size()), TPU_OK);
    if (got != expect) {
        size_t i = 0;
        while (got[i] == expect[i])
            i++;
        ADD_FAILURE() << "output byte " << i << " of " << got.size() << ": expected "
                      << int{expect[i]} << ", device " << int{got[i]};
    }
    for (uint32_t a : allocs)
        EXPECT_EQ(tpu_free(d, a), TPU_OK);
    tpu_stream_free(s);
}

class DriverConv : public ::testing::TestWithParam<uint32_t>
{
  protected:
    uint32_t N() const { return GetParam(); }
};

TEST_P(DriverConv, EdgeShapes)
{
    const uint32_t n = N();
    Dev d(n);
    // 3x3 on one channel, no padding: packed runs (c % N != 0).
    run_conv(d, n, {1, 6, 7, 1, 3, 3, 3}, 1);
    // Padding on every side, stride 2, three channels: pixel planes, ZEROed padding.
    Conv v{2, 7, 9, 3, 3, 3, 5};
    v.sh = v.sw = 2;
    v.pt = 1, v.pb = 2, v.pl = 1, v.pr = 2;
    run_conv(d, n, v, 2);
    // 1x1 kernels with N - 1 and N + 1 channels, batch 1 and 5.
    run_conv(d, n, {1, 5, 4, n - 1, 1, 1, n + 1}, 3);
    run_conv(d, n, {5, 4, 5, n + 1, 1, 1, n - 1}, 4);
    // A kernel as large as the padded input: one output pixel.
    v = Conv{1, 5, 5, 2, 7, 7, 4};
    v.pt = v.pb = v.pl = v.pr = 1;
    run_conv(d, n, v, 5);
    // Channels a multiple of N without padding; vertical padding only, packed.
    run_conv(d, n, {5, 6, 6, n, 3, 2, 2 * n}, 6);
    v = Conv{1, 5, 6, 3, 3, 3, 4};
    v.pt = 2, v.pb = 1;
    run_conv(d, n, v, 7);
    // Asymmetric strides and kernels, odd sizes, stride 2 on both axes with padding.
    v = Conv{2, 9, 8, 2, 2, 3, 3};
    v.sh = 3, v.sw = 1;
    run_conv(d, n, v, 8);
    v = Conv{1, 11, 13, n + 1, 3, 3, 2 * n + 1};
    v.sh = v.sw = 2;
    v.pt = v.pb = v.pl = v.pr = 2;
    run_conv(d, n, v, 9);
}

TEST_P(DriverConv, OutputKinds)
{
    const uint32_t n = N();
    Dev d(n);
    Conv v{2, 6, 5, 3, 3, 3, 6};
    v.pl = 1, v.pr = 1;
    const uint32_t kinds[] = {0,
                              FW_CONV_BIAS | FW_CONV_RELU,
                              FW_CONV_A_UNSIGNED | FW_CONV_BIAS,
                              FW_CONV_OUT_INT8,
                              FW_CONV_OUT_INT8 | FW_CONV_A_UNSIGNED,
                              FW_CONV_OUT_INT8 | FW_CONV_BIAS | FW_CONV_RELU};
    for (uint32_t flags : kinds) {
        v.flags = flags;
        run_conv(d, n, v, 10 + flags);
    }
}

TEST_P(DriverConv, Pooling)
{
    const uint32_t n = N();
    Dev d(n);
    struct {
        Conv v;
        uint32_t ph, pw, psh, psw;
    } cases[] = {
        {{1, 10, 10, 1, 3, 3, 4}, 2, 2, 2, 2},     // MNIST's: 2x2 stride 2
        {{2, 11, 11, 3, 3, 3, 5}, 3, 3, 2, 2},     // overlapping windows, edges dropped
        {{1, 8, 9, 2, 3, 3, n + 1}, 2, 3, 1, 1},   // stride 1
        {{1, 9, 7, 4, 3, 3, 3}, 7, 5, 1, 1},       // window = the whole output
        {{5, 7, 7, n, 2, 2, 2}, 2, 2, 2, 2},       // odd output: last row and column dropped
        {{1, 12, 12, n - 1, 3, 3, n}, 3, 2, 3, 2}, // strides equal to the window, unsigned
    };
    uint32_t seed = 20;
    for (auto &c : cases) {
        c.v.flags = FW_CONV_OUT_INT8 | FW_CONV_BIAS | FW_CONV_RELU | FW_CONV_POOLING;
        if (&c == &cases[5])
            c.v.flags |= FW_CONV_A_UNSIGNED;
        c.v.ph = c.ph, c.v.pw = c.pw, c.v.psh = c.psh, c.v.psw = c.psw;
        run_conv(d, n, c.v, seed++);
    }
    Conv v{1, 9, 9, 3, 3, 3, 4}; // pooling after padding, and without ReLU
    v.pt = v.pb = v.pl = v.pr = 1;
    v.flags = FW_CONV_OUT_INT8 | FW_CONV_POOLING | FW_CONV_BIAS;
    v.ph = v.pw = v.psh = v.psw = 2;
    run_conv(d, n, v, seed++);
}

TEST_P(DriverConv, RandomShapes)
{
    const uint32_t n = N();
    Dev d(n);
    std::mt19937 rng(3000 + n);
    auto pick = [&](uint32_t lo, uint32_t hi) {
        return lo + static_cast<uint32_t>(rng() % (hi - lo + 1));
    };
    for (int i = 0; i < 12; i++) {
        Conv v{pick(1, 3), pick(1, 12), pick(1, 12), pick(1, 2 * n + 1), 1, 1, pick(1, 2 * n + 1)};
        v.pt = pick(0, 2), v.pb = pick(0, 2), v.pl = pick(0, 2), v.pr = pick(0, 2);
        if (i % 3 == 0)
            v.pl = v.pr = 0;
        v.kh = pick(1, std::min(5u, v.h + v.pt + v.pb));
        v.kw = pick(1, std::min(5u, v.w + v.pl + v.pr));
        v.sh = pick(1, 3), v.sw = pick(1, 3);
        v.flags = rng() % 16;
        if ((v.flags & FW_CONV_OUT_INT8) && rng() % 2 && v.oh() >= 2 && v.ow() >= 2) {
            v.flags |= FW_CONV_POOLING;
            v.ph = pick(1, std::min(3u, v.oh())), v.pw = pick(1, std::min(3u, v.ow()));
            v.psh = pick(1, 3), v.psw = pick(1, 3);
        }
        run_conv(d, n, v, 100 + i);
    }
}

// A refused CONV2D's message names the field and what is wrong with it, as the firmware reports
// them (CONV2D's own fields once read only "invalid").
TEST_P(DriverConv, RefusedFieldsSayWhatIsWrong)
{
    Dev d(N());
    uint32_t addr = 0;
    ASSERT_EQ(tpu_alloc(d, 4096, &addr), TPU_OK);
    const struct {
        const char *want;
        void (*f)(tpu_conv2d &);
    } cases[] = {
        {"field 'batch': zero", [](tpu_conv2d &c) { c.batch = 0; }},
        {"field 'cout': zero, or more than the instruction's rows field holds",
         [](tpu_conv2d &c) { c.cout = 0; }},
        {"field 'kh': zero, or taller than the padded input", [](tpu_conv2d &c) { c.kh = 5; }},
        {"field 'kw': zero, or wider than the padded input", [](tpu_conv2d &c) { c.kw = 0; }},
        {"field 'stride': zero, or above 255", [](tpu_conv2d &c) { c.stride_w = 0; }},
        {"field 'pool': not 0 without POOLING", [](tpu_conv2d &c) { c.pool_h = 2; }},
        {"field 'flags': POOLING without OUT_INT8", [](tpu_conv2d &c) { c.flags = TPU_CONV_POOL; }},
        {"field 'out overlaps in': the output's extent intersects the input's",
         [](tpu_conv2d &c) { c.out.offset = 0; }},
    };
    for (const auto &k : cases) {
        tpu_stream *s = tpu_stream_new();
        uint32_t idx = 0;
        ASSERT_EQ(tpu_stream_buffer(s, addr, 4096, &idx), TPU_OK);
        tpu_conv2d c{};
        c.batch = 1, c.h = 4, c.w = 4, c.c = 1, c.kh = 3, c.kw = 3, c.cout = 1;
        c.stride_h = c.stride_w = 1;
        c.in = {idx, 0, 0}, c.kernel = {idx, 1024, 0}, c.out = {idx, 2048, 0};
        k.f(c);
        ASSERT_EQ(tpu_stream_conv2d(s, &c), TPU_OK) << k.want;
        EXPECT_EQ(tpu_submit(d, s), TPU_E_STREAM) << k.want;
        EXPECT_TRUE(contains(tpu_last_error(d), std::string("command 0: ") + k.want))
            << tpu_last_error(d);
        tpu_stream_free(s);
    }
    EXPECT_EQ(tpu_free(d, addr), TPU_OK);
}

std::string name_of(const ::testing::TestParamInfo<uint32_t> &info)
{
    return "N" + std::to_string(info.param);
}

INSTANTIATE_TEST_SUITE_P(Arrays, DriverConv, ::testing::ValuesIn(built_sizes()), name_of);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DriverConv);

} // namespace

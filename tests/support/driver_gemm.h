// driver_gemm.h - GEMMs through the host driver for its tests (test_driver_device.cpp,
// test_driver_chip.cpp): operands placed in device memory with a command stream's buffers, the
// reference result, and checks of C.
#ifndef TPU_TESTS_SUPPORT_DRIVER_GEMM_H
#define TPU_TESTS_SUPPORT_DRIVER_GEMM_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "driver/tpu.h"
#include "tests/support/progs.h"

namespace driver_test
{

enum Fill { RANDOM, EXTREME };

struct GemmCase {
    uint32_t m, k, n, flags;
    uint32_t lda_pad = 0, ldb_pad = 0, ldc_pad = 0;
    Fill fill = RANDOM;
    bool one_buffer = false; // all operands in one buffer at unaligned offsets
};

inline std::string describe(const GemmCase &g)
{
    char buf[128];
    std::snprintf(buf, sizeof buf, "%ux%ux%u flags=%x pads=%u/%u/%u fill=%d one_buffer=%d", g.m,
                  g.k, g.n, g.flags, g.lda_pad, g.ldb_pad, g.ldc_pad, static_cast<int>(g.fill),
                  g.one_buffer);
    return buf;
}

// A GEMM's operands in device memory, and the reference result.
struct Placed {
    GemmCase g;
    std::vector<uint32_t> allocs;
    uint32_t a = 0, b = 0, c = 0, p = 0; // device addresses
    uint32_t a_buf = 0, b_buf = 0, c_buf = 0, p_buf = 0, a_off = 0, b_off = 0, c_off = 0, p_off = 0;
    std::vector<uint8_t> c_image; // C's extent as written before the run
    std::vector<uint8_t> expect;  // packed m x n reference (int32 or int8)
    size_t esize() const { return g.flags & TPU_GEMM_OUT_INT8 ? 1 : 4; }
    bool tiled() const { return g.flags & TPU_GEMM_B_TILED; }
    uint32_t lda() const { return g.k + g.lda_pad; }
    uint32_t ldb() const { return tiled() ? 0 : g.n + g.ldb_pad; }
    uint32_t ldc() const { return g.n + g.ldc_pad; }
    size_t c_extent() const { return ((size_t)(g.m - 1) * ldc() + g.n) * esize(); }
};

// Writes the operands of g (values from rng) into fresh device memory, declares buffers in s,
// computes the reference (from the row-major B also when B is tiled). a_src, when given, is A's
// packed contents.
inline void place(tpu_device *d, tpu_stream *s, tpu_rng &rng, Placed &pl, const GemmCase &g,
                  const std::vector<uint8_t> *a_src = nullptr)
{
    pl.g = g;
    const bool params = g.flags & (TPU_GEMM_BIAS | TPU_GEMM_OUT_INT8);
    std::vector<uint8_t> a(static_cast<size_t>(g.m) * g.k);
    std::vector<int8_t> b(static_cast<size_t>(g.k) * g.n);
    std::vector<int32_t> prm(3 * g.n);
    if (a_src) {
        a = *a_src;
    } else if (g.fill == EXTREME) {
        std::fill(a.begin(), a.end(), g.flags & TPU_GEMM_A_UNSIGNED ? 0xff : 0x80);
    } else {
        rng_fill_int8(&rng, reinterpret_cast<int8_t *>(a.data()), a.size());
    }
    if (g.fill == EXTREME)
        std::fill(b.begin(), b.end(), -128);
    else
        rng_fill_int8(&rng, b.data(), b.size());
    for (uint32_t j = 0; j < g.n; j++) {
        prm[j] = g.fill == EXTREME ? (j % 2 ? INT32_MAX : INT32_MIN)
                                   : static_cast<int32_t>(rng_range(&rng, -100000, 100000));
        // Per-column scales: some identity, most scaling the sums into int8 range.
        const bool identity = j % 5 == 0;
        prm[g.n + j] = identity ? 1 : static_cast<int32_t>(rng_range(&rng, -40000, 40000));
        prm[2 * g.n + j] = identity ? 0 : static_cast<int32_t>(rng_range(&rng, 12, 30));
    }

    tpu_info info;
    EXPECT_EQ(tpu_query(d, &info), TPU_OK);
    const size_t a_ext = static_cast<size_t>(g.m - 1) * pl.lda() + g.k;
    const size_t b_ext = pl.tiled() ? gemm_tiled_b_bytes(g.k, g.n, info.array_n)
                                    : static_cast<size_t>(g.k - 1) * pl.ldb() + g.n;
    const size_t c_ext = pl.c_extent(), p_ext = params ? 12u * g.n : 0;
    auto alloc = [&](size_t bytes) {
        uint32_t addr = 0;
        EXPECT_EQ(tpu_alloc(d, bytes, &addr), TPU_OK) << tpu_last_error(d);
        pl.allocs.push_back(addr);
        return addr;
    };
    auto declare = [&](uint32_t addr, size_t bytes) {
        uint32_t idx = 0;
        EXPECT_EQ(tpu_stream_buffer(s, addr, static_cast<uint32_t>(bytes), &idx), TPU_OK);
        return idx;
    };
    if (g.one_buffer) {
        const size_t total = 3 + a_ext + 5 + b_ext + 1 + c_ext + 2 + p_ext + 7;
        const uint32_t base = alloc(total);
        const uint32_t idx = declare(base, total);
        pl.a_buf = pl.b_buf = pl.c_buf = pl.p_buf = idx;
        pl.a_off = 3;
        pl.b_off = static_cast<uint32_t>(pl.a_off + a_ext + 5);
        pl.c_off = static_cast<uint32_t>(pl.b_off + b_ext + 1);
        pl.p_off = static_cast<uint32_t>(pl.c_off + c_ext + 2);
        pl.a = base + pl.a_off;
        pl.b = base + pl.b_off;
        pl.c = base + pl.c_off;
        pl.p = base + pl.p_off;
    } else {
        pl.a = alloc(a_ext);
        pl.b = alloc(b_ext);
        pl.c = alloc(c_ext);
        pl.a_buf = declare(pl.a, a_ext);
        pl.b_buf = declare(pl.b, b_ext);
        pl.c_buf = declare(pl.c, c_ext);
        if (params) {
            pl.p = alloc(p_ext);
            pl.p_buf = declare(pl.p, p_ext);
        }
    }
    if (!params)
        pl.p_buf = pl.p_off = 0;
    for (uint32_t i = 0; i < g.m; i++)
        EXPECT_EQ(tpu_write(d, pl.a + i * pl.lda(), &a[static_cast<size_t>(i) * g.k], g.k), TPU_OK);
    if (pl.tiled()) {
        std::vector<int8_t> tiles(b_ext);
        gemm_tile_b(b.data(), g.k, g.n, info.array_n, tiles.data());
        EXPECT_EQ(tpu_write(d, pl.b, tiles.data(), b_ext), TPU_OK);
    } else {
        for (uint32_t i = 0; i < g.k; i++)
            EXPECT_EQ(tpu_write(d, pl.b + i * pl.ldb(), &b[static_cast<size_t>(i) * g.n], g.n),
                      TPU_OK);
    }
    if (params) {
        EXPECT_EQ(tpu_write(d, pl.p, prm.data(), p_ext), TPU_OK); // little-endian host
    }
    pl.c_image.resize(c_ext);
    rng_fill(&rng, pl.c_image.data(), c_ext);
    EXPECT_EQ(tpu_write(d, pl.c, pl.c_image.data(), c_ext), TPU_OK);

    gemm_desc desc{};
    desc.m = g.m;
    desc.k = g.k;
    desc.n = g.n;
    desc.unsigned_a = (g.flags & TPU_GEMM_A_UNSIGNED) != 0;
    desc.bias = (g.flags & TPU_GEMM_BIAS) != 0;
    desc.relu = (g.flags & TPU_GEMM_RELU) != 0;
    desc.out_int8 = (g.flags & TPU_GEMM_OUT_INT8) != 0;
    pl.expect.resize(static_cast<size_t>(g.m) * g.n * pl.esize());
    gemm_reference(&desc, a.data(), b.data(), prm.data(), pl.expect.data());
}

inline tpu_gemm command(const Placed &pl)
{
    tpu_gemm c{};
    c.m = pl.g.m;
    c.k = pl.g.k;
    c.n = pl.g.n;
    c.flags = pl.g.flags;
    c.a = {pl.a_buf, pl.a_off, pl.lda()};
    c.b = {pl.b_buf, pl.b_off, pl.ldb()};
    c.c = {pl.c_buf, pl.c_off, pl.ldc()};
    c.params = {pl.p_buf, pl.p_off, 0};
    return c;
}

// C against the reference, and the bytes between C's rows untouched.
inline void check_result(tpu_device *d, const Placed &pl)
{
    std::vector<uint8_t> got(pl.c_extent());
    ASSERT_EQ(tpu_read(d, pl.c, got.data(), got.size()), TPU_OK);
    const size_t es = pl.esize(), row = pl.g.n * es;
    for (uint32_t i = 0; i < pl.g.m; i++) {
        const uint8_t *r = &got[i * pl.ldc() * es];
        const uint8_t *e = &pl.expect[i * row];
        if (std::memcmp(r, e, row) != 0) {
            uint32_t j = 0;
            while (std::memcmp(r + j * es, e + j * es, es) == 0)
                j++;
            ADD_FAILURE() << describe(pl.g) << ": C[" << i << "][" << j << "] differs";
            return;
        }
        if (i + 1 < pl.g.m && pl.g.ldc_pad) {
            const size_t gap = i * pl.ldc() * es + row;
            ASSERT_EQ(std::memcmp(&got[gap], &pl.c_image[gap], pl.g.ldc_pad * es), 0)
                << describe(pl.g) << ": bytes after row " << i << " were written";
        }
    }
}

inline void release(tpu_device *d, const Placed &pl)
{
    for (uint32_t a : pl.allocs)
        EXPECT_EQ(tpu_free(d, a), TPU_OK);
}

// Runs one GEMM stream to completion and checks it; returns the wait status.
inline tpu_status run_gemm(tpu_device *d, tpu_rng &rng, const GemmCase &g)
{
    tpu_stream *s = tpu_stream_new();
    Placed pl;
    place(d, s, rng, pl, g);
    const tpu_gemm c = command(pl);
    EXPECT_EQ(tpu_stream_gemm(s, &c), TPU_OK);
    tpu_status st = tpu_submit(d, s);
    EXPECT_EQ(st, TPU_OK) << describe(g) << ": " << tpu_last_error(d);
    if (st == TPU_OK) {
        st = tpu_wait(d, 50000000);
        EXPECT_EQ(st, TPU_OK) << describe(g) << ": " << tpu_last_error(d);
        if (st == TPU_OK)
            check_result(d, pl);
    }
    release(d, pl);
    tpu_stream_free(s);
    return st;
}

} // namespace driver_test

#endif

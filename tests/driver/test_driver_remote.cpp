// test_driver_remote.cpp - a remote device (tpu_open_remote): the driver's allocator and streams on
// this side, memory and submissions through a bus to a device-side driver (here another tpu_device
// in the same process, reached by plain calls, as tools/tpu_vp reaches one over TLM-2.0): GEMMs on
// every core bit-exact, the device side's figures and errors carried back, what a remote device
// refuses.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "driver/tpu.h"
#include "sim/tpusim.h"
#include "tests/support/driver_gemm.h"
#include "tests/support/driver_test.h"
#include "tests/support/progs.h"
#include "tests/support/remote_far.h"

namespace
{

using namespace driver_test;
using namespace remote_far;

TEST(Remote, GemmsOnEveryCore)
{
    const uint32_t n = built_sizes()[0];
    uint32_t arrays[64], cores[64];
    const int chips = tpusim_chips(arrays, cores, 64);
    uint32_t c = 0;
    for (int i = 0; i < chips; i++)
        if (arrays[i] == n && cores[i] > c)
            c = cores[i];
    ASSERT_GT(c, 0u) << "no chip of N = " << n;
    Remote r(n, c);
    tpu_info info;
    ASSERT_EQ(tpu_query(r.near, &info), TPU_OK);
    EXPECT_EQ(info.cores, c);
    EXPECT_EQ(info.array_n, n);
    tpu_rng rng{1200};
    std::vector<Placed> pl(c);
    std::vector<tpu_stream *> s(c);
    for (uint32_t k = 0; k < c; k++) {
        s[k] = tpu_stream_new();
        place(r.near, s[k], rng, pl[k], {2 * n + k, n + 3, 2 * n - 1, TPU_GEMM_B_TILED});
        const tpu_gemm cmd = command(pl[k]);
        ASSERT_EQ(tpu_stream_gemm(s[k], &cmd), TPU_OK);
        ASSERT_EQ(tpu_submit_core(r.near, k, s[k]), TPU_OK) << tpu_last_error(r.near);
    }
    ASSERT_EQ(tpu_wait_all(r.near, 0), TPU_OK) << tpu_last_error(r.near);
    for (uint32_t k = 0; k < c; k++) {
        check_result(r.near, pl[k]);
        tpu_perf_report p;
        ASSERT_EQ(tpu_perf_core(r.near, k, &p), TPU_OK);
        EXPECT_GT(p.cycles, 0u);
        EXPECT_EQ(p.counters[TPU_PERF_RETIRED], p.instructions);
        release(r.near, pl[k]);
        tpu_stream_free(s[k]);
    }
}

TEST(Remote, ErrorsComeBack)
{
    const uint32_t n = built_sizes()[0];
    Remote r(n, 0);
    // A stream the far firmware rejects: its message through the wait.
    tpu_stream *s = tpu_stream_new();
    tpu_gemm g{};
    g.m = g.k = g.n = 1;
    g.a = g.b = g.c = {7, 0, 1}; // no buffer 7
    ASSERT_EQ(tpu_stream_gemm(s, &g), TPU_OK);
    ASSERT_EQ(tpu_submit(r.near, s), TPU_OK) << tpu_last_error(r.near);
    EXPECT_EQ(tpu_wait(r.near, 0), TPU_E_STREAM);
    EXPECT_TRUE(contains(tpu_last_error(r.near), "command 0: field 'a.buf'"))
        << tpu_last_error(r.near);
    // Local only: traces.
    EXPECT_EQ(tpu_trace_open(r.near, "x.fst", 0, 0), TPU_E_ARG);
    EXPECT_TRUE(contains(tpu_last_error(r.near), "remote")) << tpu_last_error(r.near);
    // A bus that refuses.
    r.far.refuse = true;
    uint32_t addr;
    ASSERT_EQ(tpu_alloc(r.near, 64, &addr), TPU_OK);
    const uint8_t byte = 1;
    EXPECT_EQ(tpu_write(r.near, addr, &byte, 1), TPU_E_DEVICE);
    EXPECT_TRUE(contains(tpu_last_error(r.near), "the bus refused")) << tpu_last_error(r.near);
    EXPECT_EQ(tpu_submit(r.near, s), TPU_E_DEVICE);
    r.far.refuse = false;
    tpu_stream_free(s);
    // Incomplete ops.
    tpu_remote ops = kOps;
    ops.wait = nullptr;
    tpu_device *d = nullptr;
    char err[256] = "";
    EXPECT_EQ(tpu_open_remote(&ops, &d, err, sizeof err), TPU_E_ARG);
    EXPECT_EQ(d, nullptr);
    EXPECT_TRUE(contains(err, "incomplete ops")) << err;
}

} // namespace

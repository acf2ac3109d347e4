// test_driver_device.cpp - the host driver (driver/tpu.h) running the cycle-accurate device at
// every built array size: GEMMs (B row-major or tiled) through the firmware, checked against
// gemm_reference with the driver's golden-model verification on; verification's mirror of device
// memory and its mismatch reports; stream and timeout errors; performance counters, progress and
// traces.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "driver/tpu.h"
#include "firmware/firmware.h"
#include "sim/tpusim.h"
#include "tests/support/driver_gemm.h"
#include "tests/support/driver_test.h"
#include "tests/support/progs.h"

namespace
{

using namespace driver_test;

class DriverDevice : public ::testing::TestWithParam<uint32_t>
{
  protected:
    uint32_t N() const { return GetParam(); }
};

TEST_P(DriverDevice, GemmShapes)
{
    const uint32_t n = N();
    Dev d(n);
    tpu_rng rng{n};
    const uint32_t B = TPU_GEMM_BIAS, R = TPU_GEMM_RELU, I8 = TPU_GEMM_OUT_INT8,
                   U = TPU_GEMM_A_UNSIGNED, T = TPU_GEMM_B_TILED;
    std::vector<GemmCase> cases = {
        {1, 1, 1, 0},
        {n, n, n, 0},
        {n + 1, n - 1, 2 * n + 3, 0},
        {37, 1, 19, 0},                 // K = 1
        {1, 3 * n + 1, 2 * n - 1, 0},   // M = 1 (GEMV)
        {2 * n + 3, 5, 1, 0},           // N = 1
        {300, 2 * n + 5, 3 * n - 1, 0}, // several M chunks
        {20, 40 * n + 3, n + 1, 0},     // long K
        {3 * n + 2, 2 * n + 1, n + 2, B},
        {3 * n + 2, 2 * n + 1, n + 2, R},
        {3 * n + 2, 2 * n + 1, n + 2, B | R},
        {3 * n + 2, 2 * n + 1, n + 2, I8}, // per-column scales
        {3 * n + 2, 2 * n + 1, n + 2, B | R | I8},
        {3 * n + 2, 2 * n + 1, n + 2, U},
        {2 * n + 1, 3 * n, 2 * n + 5, U | B | I8},
        {n + 3, 2 * n + 3, n + 5, 0, 7, 3, 5}, // leading dims > width
        {n + 3, 2 * n + 3, n + 5, I8 | B, 1, 13, 2},
        {2 * n, 4 * n, 2 * n, B | R, 0, 0, 0, EXTREME}, // -128 everywhere, extreme biases
        {2 * n, 4 * n, 2 * n, U | B, 0, 0, 0, EXTREME}, // 255 x -128
        {2 * n, 4 * n, 2 * n, I8 | B, 0, 0, 0, EXTREME},
        {n + 2, n + 3, n + 4, B | I8, 2, 1, 3, RANDOM, true},
        {n + 2, n + 3, n + 4, 0, 0, 0, 0, RANDOM, true},
        // B tiled: the same variety.
        {1, 1, 1, T},
        {n, n, n, T},
        {n + 1, n - 1, 2 * n + 3, T},
        {37, 1, 19, T},                 // K = 1: one row per tile
        {1, 3 * n + 1, 2 * n - 1, T},   // M = 1
        {2 * n + 3, 5, 1, T},           // N = 1: one column per tile
        {300, 2 * n + 5, 3 * n - 1, T}, // several M chunks
        {20, 40 * n + 3, n + 1, T | B}, // long K
        {3 * n + 2, 2 * n + 1, n + 2, T | B | R},
        {3 * n + 2, 2 * n + 1, n + 2, T | I8},
        {3 * n + 2, 2 * n + 1, n + 2, T | B | R | I8},
        {2 * n + 1, 3 * n, 2 * n + 5, T | U | B | I8},
        {3 * n + 2, 2 * n + 1, n + 2, T | U | R},
        {n + 3, 2 * n + 3, n + 5, T | I8 | B, 1, 0, 2},
        {2 * n, 4 * n, 2 * n, T | U | B, 0, 0, 0, EXTREME},
        {n + 2, n + 3, n + 4, T | B | I8, 2, 0, 3, RANDOM, true},
    };
    for (const GemmCase &g : cases) {
        SCOPED_TRACE(describe(g));
        run_gemm(d, rng, g);
    }
}

// Two commands in one stream, the second reading the first's int8 output.
TEST_P(DriverDevice, TwoLayerStream)
{
    const uint32_t n = N();
    Dev d(n);
    tpu_rng rng{100 + n};
    tpu_stream *s = tpu_stream_new();
    Placed l1, l2;
    place(d, s, rng, l1,
          {2 * n + 1, 3 * n + 2, 2 * n + 3, TPU_GEMM_BIAS | TPU_GEMM_RELU | TPU_GEMM_OUT_INT8});
    place(d, s, rng, l2, {2 * n + 1, 2 * n + 3, n + 1, TPU_GEMM_BIAS}, &l1.expect);
    Placed l2c = l2; // layer 2 reads layer 1's C instead of its own A buffer
    l2c.a_buf = l1.c_buf;
    l2c.a_off = l1.c_off;
    const tpu_gemm c1 = command(l1), c2 = command(l2c);
    ASSERT_EQ(tpu_stream_gemm(s, &c1), TPU_OK);
    ASSERT_EQ(tpu_stream_gemm(s, &c2), TPU_OK);
    ASSERT_EQ(tpu_submit(d, s), TPU_OK) << tpu_last_error(d);
    ASSERT_EQ(tpu_wait(d, 0), TPU_OK) << tpu_last_error(d);
    check_result(d, l1);
    check_result(d, l2);
    tpu_perf_report p;
    ASSERT_EQ(tpu_perf(d, &p), TPU_OK);
    EXPECT_GE(p.firmware_cycles, FW_CYCLES_STREAM + 2 * FW_CYCLES_COMMAND + p.instructions);
    release(d, l1);
    release(d, l2);
    tpu_stream_free(s);
}

TEST_P(DriverDevice, MalformedStreamsNameCommandAndField)
{
    const uint32_t n = N();
    Dev d(n);
    tpu_rng rng{200 + n};
    uint32_t probe;
    ASSERT_EQ(tpu_alloc(d, 64, &probe), TPU_OK);
    ASSERT_EQ(tpu_free(d, probe), TPU_OK);

    struct Case {
        const char *what;
        void (*spoil)(tpu_gemm &g); // nullptr: the commands are good
        uint32_t cmd;               // the command spoiled (the other one is good)
        uint32_t buf0;              // address of buffer 0, which no command uses
        const char *expect;
    };
    const Case cases[] = {
        {"lda < k", [](tpu_gemm &g) { g.a.ld = g.k - 1; }, 0, 0x40, "command 0: field 'lda'"},
        {"n = 0", [](tpu_gemm &g) { g.n = 0; }, 1, 0x40, "command 1: field 'n'"},
        {"unknown buffer", [](tpu_gemm &g) { g.b.buf = 9; }, 1, 0x40, "command 1: field 'b.buf'"},
        {"C past its buffer", [](tpu_gemm &g) { g.c.offset = 1; }, 0, 0x40,
         "command 0: field 'c.off'"},
        {"params without flags", [](tpu_gemm &g) { g.params.offset = 4; }, 0, 0x40,
         "command 0: field 'params.off'"},
        {"buffer outside memory", nullptr, 0, 0xfffff000u, "buffer 0: field 'addr'"},
        {"tiled B with ldb", [](tpu_gemm &g) { g.flags |= TPU_GEMM_B_TILED; }, 1, 0x40,
         "command 1: field 'ldb'"},
        // B's buffer holds it row-major: (n + 2) x (n + 3) bytes, not the 2 x 2 tiles.
        {"tiled B past its buffer",
         [](tpu_gemm &g) {
             g.flags |= TPU_GEMM_B_TILED;
             g.b.ld = 0;
         },
         0, 0x40, "command 0: field 'b.off'"},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.what);
        tpu_stream *s = tpu_stream_new();
        ASSERT_EQ(tpu_stream_buffer(s, c.buf0, 64, nullptr), TPU_OK);
        Placed pl;
        place(d, s, rng, pl, {n + 1, n + 2, n + 3, 0});
        const tpu_gemm good = command(pl);
        tpu_gemm bad = good;
        if (c.spoil)
            c.spoil(bad);
        ASSERT_EQ(tpu_stream_gemm(s, c.cmd == 0 ? &bad : &good), TPU_OK);
        ASSERT_EQ(tpu_stream_gemm(s, c.cmd == 1 ? &bad : &good), TPU_OK);
        EXPECT_EQ(tpu_submit(d, s), TPU_E_STREAM);
        EXPECT_TRUE(contains(tpu_last_error(d), c.expect)) << tpu_last_error(d);
        EXPECT_EQ(tpu_wait(d, 0), TPU_E_ARG); // nothing is pending
        // C untouched: nothing was pushed.
        std::vector<uint8_t> got(pl.c_extent());
        ASSERT_EQ(tpu_read(d, pl.c, got.data(), got.size()), TPU_OK);
        EXPECT_EQ(got, pl.c_image);
        release(d, pl);
        tpu_stream_free(s);
        // The stream's memory was given back.
        uint32_t again;
        ASSERT_EQ(tpu_alloc(d, 64, &again), TPU_OK);
        EXPECT_EQ(again, probe);
        ASSERT_EQ(tpu_free(d, again), TPU_OK);
    }
    run_gemm(d, rng, {n + 5, 2 * n, n + 1, TPU_GEMM_BIAS});
}

TEST_P(DriverDevice, TimeoutResetsTheDevice)
{
    const uint32_t n = N();
    Dev d(n);
    tpu_rng rng{300 + n};
    tpu_stream *s = tpu_stream_new();
    Placed pl;
    place(d, s, rng, pl, {4 * n, 4 * n, 4 * n, 0});
    const tpu_gemm c = command(pl);
    ASSERT_EQ(tpu_stream_gemm(s, &c), TPU_OK);
    ASSERT_EQ(tpu_submit(d, s), TPU_OK) << tpu_last_error(d);
    // Past the firmware's decoding (FW_CYCLES_STREAM + FW_CYCLES_COMMAND), into its pushes.
    EXPECT_EQ(tpu_wait(d, 250), TPU_E_TIMEOUT);
    EXPECT_TRUE(contains(tpu_last_error(d), "250 cycles")) << tpu_last_error(d);
    tpu_perf_report p;
    ASSERT_EQ(tpu_perf(d, &p), TPU_OK); // the aborted run's counters
    EXPECT_LT(p.counters[TPU_PERF_RETIRED], p.instructions);
    EXPECT_EQ(tpu_wait(d, 0), TPU_E_ARG);
    release(d, pl);
    tpu_stream_free(s);
    // The device works normally afterwards, verified against the golden model.
    run_gemm(d, rng, {4 * n, 4 * n, 4 * n, TPU_GEMM_OUT_INT8});
}

// The budget counts from tpu_submit: cycles run by tpu_step spend it too, and the device works
// normally afterwards.
TEST_P(DriverDevice, BudgetCountsFromTheSubmit)
{
    const uint32_t n = N();
    Dev d(n);
    tpu_rng rng{350 + n};
    tpu_stream *s = tpu_stream_new();
    Placed pl;
    place(d, s, rng, pl, {16 * n, 16 * n, 16 * n, 0});
    const tpu_gemm c = command(pl);
    ASSERT_EQ(tpu_stream_gemm(s, &c), TPU_OK);
    tpu_set_budget(d, 500);
    ASSERT_EQ(tpu_submit(d, s), TPU_OK) << tpu_last_error(d);
    tpu_step(d, 300);
    EXPECT_FALSE(tpu_core_done(d, 0));
    EXPECT_EQ(tpu_wait(d, 0), TPU_E_TIMEOUT);
    EXPECT_TRUE(contains(tpu_last_error(d), "500 cycles")) << tpu_last_error(d);
    tpu_perf_report p;
    ASSERT_EQ(tpu_perf(d, &p), TPU_OK);
    EXPECT_EQ(p.cycles, 500u);
    EXPECT_EQ(tpu_wait(d, 0), TPU_E_ARG);
    release(d, pl);
    tpu_stream_free(s);
    tpu_set_budget(d, 0);
    run_gemm(d, rng, {4 * n, 4 * n, 4 * n, TPU_GEMM_OUT_INT8});
}

TEST_P(DriverDevice, PerfCounters)
{
    const uint32_t n = N();
    Dev d(n);
    tpu_rng rng{400 + n};
    tpu_perf_report p;
    EXPECT_EQ(tpu_perf(d, &p), TPU_E_ARG); // nothing ran yet
    const GemmCase g = {5 * n + 3, 3 * n + 1, 2 * n + 1, 0};
    ASSERT_EQ(run_gemm(d, rng, g), TPU_OK);
    ASSERT_EQ(tpu_perf(d, &p), TPU_OK);
    const uint64_t kt = (g.k + n - 1) / n, nt = (g.n + n - 1) / n;
    EXPECT_GE(p.cycles * n * n, uint64_t{g.m} * g.k * g.n);
    EXPECT_EQ(p.counters[TPU_PERF_RETIRED], p.instructions);
    EXPECT_EQ(p.counters[TPU_PERF_MXU_BUSY], g.m * kt * nt); // every A row streams once a tile
    EXPECT_EQ(p.counters[TPU_PERF_DMA_WR_BYTES], uint64_t{4} * g.m * g.n);
    EXPECT_GE(p.counters[TPU_PERF_DMA_RD_BYTES], uint64_t{g.m} * g.k + uint64_t{g.k} * g.n);
    EXPECT_LE(p.counters[TPU_PERF_ACTIVE], p.cycles);
    EXPECT_GE(p.firmware_cycles, FW_CYCLES_STREAM + FW_CYCLES_COMMAND + p.instructions);
    EXPECT_LE(p.firmware_cycles, p.cycles);
    EXPECT_GT(p.wall_seconds, 0.0);
    // Counters are per submission.
    const GemmCase small = {n, n, n, 0};
    ASSERT_EQ(run_gemm(d, rng, small), TPU_OK);
    tpu_perf_report q;
    ASSERT_EQ(tpu_perf(d, &q), TPU_OK);
    EXPECT_EQ(q.counters[TPU_PERF_MXU_BUSY], n);
    EXPECT_EQ(q.counters[TPU_PERF_RETIRED], q.instructions);
    EXPECT_LT(q.cycles, p.cycles);
    EXPECT_EQ(tpu_perf(d, nullptr), TPU_E_ARG);
}

// Mismatch reporting: memory the host changes behind the device's back while a submission that
// writes it is pending differs from the golden result (the golden model sees that write only
// afterwards); a write to memory the submission does not touch is no change behind its back.
TEST_P(DriverDevice, VerifyReportsTheFirstDifference)
{
    const uint32_t n = N();
    Dev d(n);
    tpu_rng rng{500 + n};
    uint32_t spare;
    ASSERT_EQ(tpu_alloc(d, 64, &spare), TPU_OK);
    // 1. A byte no instruction writes.
    {
        tpu_stream *s = tpu_stream_new();
        Placed pl;
        place(d, s, rng, pl, {n, n, n, 0});
        const tpu_gemm c = command(pl);
        ASSERT_EQ(tpu_stream_gemm(s, &c), TPU_OK);
        const uint8_t zero = 0, x = 0x5a;
        ASSERT_EQ(tpu_write(d, spare + 3, &zero, 1), TPU_OK);
        ASSERT_EQ(tpu_submit(d, s), TPU_OK) << tpu_last_error(d);
        ASSERT_EQ(tpu_write(d, spare + 3, &x, 1), TPU_OK);
        EXPECT_EQ(tpu_wait(d, 0), TPU_OK) << tpu_last_error(d);
        uint8_t got = 0;
        ASSERT_EQ(tpu_read(d, spare + 3, &got, 1), TPU_OK);
        EXPECT_EQ(got, x);
        check_result(d, pl);
        release(d, pl);
        tpu_stream_free(s);
    }
    // 2. C's first byte, overwritten after its WR_HOST completed: with 8 M chunks of 8 N-tiles,
    // the first visit is written out long before the last; the device runs until it is.
    {
        tpu_stream *s = tpu_stream_new();
        Placed pl;
        place(d, s, rng, pl, {2048, n, 8 * n, TPU_GEMM_OUT_INT8});
        const tpu_gemm c = command(pl);
        ASSERT_EQ(tpu_stream_gemm(s, &c), TPU_OK);
        ASSERT_EQ(tpu_submit(d, s), TPU_OK) << tpu_last_error(d);
        uint8_t first = pl.c_image[0];
        for (int i = 0; i < 1000 && first != pl.expect[0]; i++) {
            tpu_step(d, 64);
            ASSERT_EQ(tpu_read(d, pl.c, &first, 1), TPU_OK);
        }
        ASSERT_EQ(first, pl.expect[0]);
        ASSERT_FALSE(tpu_core_done(d, 0));
        const uint8_t x = static_cast<uint8_t>(pl.expect[0] ^ 0xff);
        ASSERT_EQ(tpu_write(d, pl.c, &x, 1), TPU_OK);
        EXPECT_EQ(tpu_wait(d, 0), TPU_E_MISMATCH);
        char want[96];
        std::snprintf(want, sizeof want, "at 0x%x: expected 0x%02x, device 0x%02x", pl.c,
                      pl.expect[0], x);
        EXPECT_TRUE(contains(tpu_last_error(d), want)) << tpu_last_error(d);
        // The WR_HOST of the first visit: the only instruction writing to C's first row.
        char wr[96];
        std::snprintf(wr, sizeof wr, " mem=0x%x ", pl.c);
        EXPECT_TRUE(contains(tpu_last_error(d), "WR_HOST rows=")) << tpu_last_error(d);
        EXPECT_TRUE(contains(tpu_last_error(d), wr)) << tpu_last_error(d);
        EXPECT_TRUE(contains(tpu_last_error(d), "while the work was pending")) << tpu_last_error(d);
        release(d, pl);
        tpu_stream_free(s);
    }
    EXPECT_EQ(tpu_free(d, spare), TPU_OK);
    run_gemm(d, rng, {n + 1, n + 1, n + 1, 0});
}

// The device's own result differing from the golden model's is found in what the instructions
// wrote: an input changed after tpu_submit but before the core reads it (command 1 waits behind
// command 0's SYNC) makes the device compute another C than the golden model, which sees the write
// only afterwards. C lies below the input, so it is the first difference reported.
TEST_P(DriverDevice, VerifyComparesWhatTheInstructionsWrote)
{
    const uint32_t n = N();
    Dev d(n);
    tpu_rng rng{520 + n};
    tpu_stream *s = tpu_stream_new();
    Placed l1, l2;
    place(d, s, rng, l1, {512, 4 * n, 4 * n, 0}); // keeps the core busy past the last push
    place(d, s, rng, l2, {1, 1, 1, 0});
    Placed l2c = l2; // A is one byte at x, above everything of l2
    uint32_t x;
    ASSERT_EQ(tpu_alloc(d, 1, &x), TPU_OK);
    ASSERT_EQ(tpu_stream_buffer(s, x, 1, &l2c.a_buf), TPU_OK);
    l2c.a_off = 0;
    const int8_t one = 1, two = 2;
    ASSERT_EQ(tpu_write(d, l2.b, &one, 1), TPU_OK);
    ASSERT_EQ(tpu_write(d, x, &one, 1), TPU_OK);
    const tpu_gemm c1 = command(l1), c2 = command(l2c);
    ASSERT_EQ(tpu_stream_gemm(s, &c1), TPU_OK);
    ASSERT_EQ(tpu_stream_gemm(s, &c2), TPU_OK);
    ASSERT_EQ(tpu_submit(d, s), TPU_OK) << tpu_last_error(d);
    ASSERT_EQ(tpu_write(d, x, &two, 1), TPU_OK);
    EXPECT_EQ(tpu_wait(d, 0), TPU_E_MISMATCH);
    int32_t got = 0;
    ASSERT_EQ(tpu_read(d, l2.c, &got, 4), TPU_OK);
    ASSERT_EQ(got, 2) << "the core read A before the host changed it";
    char want[96];
    std::snprintf(want, sizeof want, "at 0x%x: expected 0x01, device 0x02", l2.c);
    EXPECT_TRUE(contains(tpu_last_error(d), want)) << tpu_last_error(d);
    EXPECT_TRUE(contains(tpu_last_error(d), "WR_HOST")) << tpu_last_error(d);
    EXPECT_FALSE(contains(tpu_last_error(d), "pending")) << tpu_last_error(d);
    check_result(d, l1);
    EXPECT_EQ(tpu_free(d, x), TPU_OK);
    release(d, l1);
    release(d, l2);
    tpu_stream_free(s);
    run_gemm(d, rng, {n + 1, n + 1, n + 1, 0});
}

// Verification's golden model mirrors device memory between submissions without copying all of
// it: after a timeout (which leaves C partly written) and after a mismatch it takes the device's
// bytes, so a later stream reading them as its input verifies, and computes the right result.
TEST_P(DriverDevice, VerifyMirrorFollowsFailedSubmissions)
{
    const uint32_t n = N();
    Dev d(n, 16u << 20);
    tpu_rng rng{550 + n};
    const GemmCase g = {2048, n, 8 * n, TPU_GEMM_OUT_INT8};
    ASSERT_EQ(run_gemm(d, rng, g), TPU_OK);
    tpu_perf_report p;
    ASSERT_EQ(tpu_perf(d, &p), TPU_OK);
    // 1. The same GEMM stopped by the budget half-way, in tpu_submit or in tpu_wait.
    tpu_stream *s = tpu_stream_new();
    Placed l1;
    place(d, s, rng, l1, g);
    const tpu_gemm c1 = command(l1);
    ASSERT_EQ(tpu_stream_gemm(s, &c1), TPU_OK);
    tpu_set_budget(d, p.cycles / 2);
    tpu_status st = tpu_submit(d, s);
    if (st == TPU_OK)
        st = tpu_wait(d, 0);
    EXPECT_EQ(st, TPU_E_TIMEOUT) << tpu_last_error(d);
    tpu_set_budget(d, 0);
    tpu_stream_free(s);
    std::vector<uint8_t> a2(l1.c_extent());
    ASSERT_EQ(tpu_read(d, l1.c, a2.data(), a2.size()), TPU_OK);
    EXPECT_NE(a2, l1.c_image); // partly written
    EXPECT_NE(a2, l1.expect);  // but not all
    // 2. A byte of that C changed while an empty stream, which touches no memory, is pending:
    // the mirror takes it at once.
    tpu_stream *empty = tpu_stream_new();
    ASSERT_EQ(tpu_submit(d, empty), TPU_OK) << tpu_last_error(d);
    a2.back() ^= 0x5a;
    ASSERT_EQ(tpu_write(d, l1.c + static_cast<uint32_t>(a2.size()) - 1, &a2.back(), 1), TPU_OK);
    EXPECT_EQ(tpu_wait(d, 0), TPU_OK) << tpu_last_error(d);
    tpu_stream_free(empty);
    // 3. A GEMM whose A is that C, read in place.
    s = tpu_stream_new();
    Placed l2;
    place(d, s, rng, l2, {g.m, g.n, n + 1, TPU_GEMM_BIAS}, &a2);
    Placed l2c = l2;
    ASSERT_EQ(tpu_stream_buffer(s, l1.c, static_cast<uint32_t>(a2.size()), &l2c.a_buf), TPU_OK);
    l2c.a_off = 0;
    const tpu_gemm c2 = command(l2c);
    ASSERT_EQ(tpu_stream_gemm(s, &c2), TPU_OK);
    ASSERT_EQ(tpu_submit(d, s), TPU_OK) << tpu_last_error(d);
    ASSERT_EQ(tpu_wait(d, 0), TPU_OK) << tpu_last_error(d);
    check_result(d, l2);
    release(d, l1);
    release(d, l2);
    tpu_stream_free(s);
}

TEST_P(DriverDevice, SubmitAndWaitMisuse)
{
    const uint32_t n = N();
    Dev d(n, kSmallMem);
    tpu_rng rng{600 + n};
    EXPECT_EQ(tpu_wait(d, 0), TPU_E_ARG);
    EXPECT_EQ(tpu_submit(d, nullptr), TPU_E_ARG);
    tpu_stream *empty = tpu_stream_new(); // no commands: just HALT
    ASSERT_EQ(tpu_submit(d, empty), TPU_OK) << tpu_last_error(d);
    EXPECT_EQ(tpu_submit(d, empty), TPU_E_ARG);
    EXPECT_TRUE(contains(tpu_last_error(d), "not waited for")) << tpu_last_error(d);
    EXPECT_EQ(tpu_wait(d, 0), TPU_OK) << tpu_last_error(d);
    tpu_perf_report p;
    ASSERT_EQ(tpu_perf(d, &p), TPU_OK);
    EXPECT_EQ(p.instructions, 1u);
    EXPECT_EQ(p.counters[TPU_PERF_RETIRED], 1u);
    EXPECT_EQ(p.firmware_cycles, FW_CYCLES_STREAM + 1);
    // No device memory left for the stream.
    uint32_t all;
    ASSERT_EQ(tpu_alloc(d, kSmallMem, &all), TPU_OK);
    EXPECT_EQ(tpu_submit(d, empty), TPU_E_NOMEM);
    EXPECT_TRUE(contains(tpu_last_error(d), "stream")) << tpu_last_error(d);
    ASSERT_EQ(tpu_free(d, all), TPU_OK);
    ASSERT_EQ(tpu_submit(d, empty), TPU_OK) << tpu_last_error(d);
    EXPECT_EQ(tpu_wait(d, 0), TPU_OK) << tpu_last_error(d);
    // Closing with work in flight releases everything (AddressSanitizer checks).
    tpu_stream *s = tpu_stream_new();
    Placed pl;
    place(d, s, rng, pl, {3 * n, 3 * n, 3 * n, 0});
    const tpu_gemm c = command(pl);
    ASSERT_EQ(tpu_stream_gemm(s, &c), TPU_OK);
    ASSERT_EQ(tpu_submit(d, s), TPU_OK) << tpu_last_error(d);
    tpu_stream_free(s);
    tpu_stream_free(empty);
}

struct Progress {
    std::vector<uint64_t> retired, pushed, cycles;
    static void fn(void *ctx, uint64_t retired, uint64_t pushed, uint64_t cycles)
    {
        auto *p = static_cast<Progress *>(ctx);
        p->retired.push_back(retired);
        p->pushed.push_back(pushed);
        p->cycles.push_back(cycles);
    }
};

TEST_P(DriverDevice, ProgressOnALongGemm)
{
    const uint32_t n = N();
    Dev d(n, 16u << 20, 0); // C alone is 4 bytes x 2048 x 15 N
    tpu_rng rng{700 + n};
    Progress prog;
    tpu_set_progress(d, Progress::fn, &prog);
    // About 300k cycles at any N: compute bound, m k n / N^2.
    const GemmCase g = {2048, 10 * n, 15 * n, 0};
    ASSERT_EQ(run_gemm(d, rng, g), TPU_OK);
    tpu_perf_report p;
    ASSERT_EQ(tpu_perf(d, &p), TPU_OK);
    ASSERT_GE(p.cycles, 4 * 65536u);
    EXPECT_GE(prog.cycles.size(), p.cycles / 65536 - 1);
    EXPECT_LE(prog.cycles.size(), p.cycles / 65536 + 1);
    for (size_t i = 0; i < prog.cycles.size(); i++) {
        EXPECT_LE(prog.retired[i], prog.pushed[i]);
        EXPECT_LE(prog.pushed[i], p.instructions);
        EXPECT_LE(prog.cycles[i], p.cycles);
        if (i) {
            EXPECT_GE(prog.cycles[i] - prog.cycles[i - 1], 65536u);
            EXPECT_GE(prog.retired[i], prog.retired[i - 1]);
            EXPECT_GE(prog.pushed[i], prog.pushed[i - 1]);
        }
    }
    // Switched off: no more calls.
    const size_t calls = prog.cycles.size();
    tpu_set_progress(d, nullptr, nullptr);
    ASSERT_EQ(run_gemm(d, rng, g), TPU_OK);
    EXPECT_EQ(prog.cycles.size(), calls);
}

std::string scratch(const std::string &name)
{
    return ::testing::TempDir() + "tpu_driver_" + std::to_string(getpid()) + "_" + name;
}

TEST_P(DriverDevice, Traces)
{
    const uint32_t n = N();
    Dev d(n, kSmallMem);
    tpu_rng rng{800 + n};
    EXPECT_EQ(tpu_trace_open(d, "/nonexistent-dir/x.fst", 0, 0), TPU_E_IO);
    EXPECT_TRUE(contains(tpu_last_error(d), "/nonexistent-dir/x.fst")) << tpu_last_error(d);
    EXPECT_EQ(tpu_trace_open(d, nullptr, 0, 0), TPU_E_ARG);
    const std::string path = scratch("t.fst");
    EXPECT_EQ(tpu_trace_open(d, path.c_str(), 100, 100), TPU_E_ARG); // empty window
    ASSERT_EQ(tpu_trace_open(d, path.c_str(), 10, 200), TPU_OK) << tpu_last_error(d);
    ASSERT_EQ(run_gemm(d, rng, {n, n, n, 0}), TPU_OK);
    ASSERT_EQ(tpu_trace_close(d), TPU_OK) << tpu_last_error(d);
    FILE *f = std::fopen(path.c_str(), "rb");
    ASSERT_NE(f, nullptr);
    std::fseek(f, 0, SEEK_END);
    EXPECT_GT(std::ftell(f), 100);
    std::fclose(f);
    // The save file beside it names the trace.
    const std::string stem = path.substr(0, path.size() - 4);
    std::string save;
    f = std::fopen((stem + ".gtkw").c_str(), "rb");
    ASSERT_NE(f, nullptr);
    char buf[4096];
    for (size_t got; (got = std::fread(buf, 1, sizeof buf, f)) > 0;)
        save.append(buf, got);
    std::fclose(f);
    EXPECT_NE(save.find(path), std::string::npos);
    for (const char *file : {path.c_str(), (stem + ".gtkw").c_str()})
        std::remove(file);
    std::remove((stem + ".opcodes.txt").c_str());
    // A path ending in .vcd gets a VCD.
    const std::string vcd = scratch("t.vcd");
    ASSERT_EQ(tpu_trace_open(d, vcd.c_str(), 0, 50), TPU_OK) << tpu_last_error(d);
    ASSERT_EQ(run_gemm(d, rng, {n, n, n, 0}), TPU_OK);
    ASSERT_EQ(tpu_trace_close(d), TPU_OK);
    EXPECT_EQ(tpu_trace_cycles(d), 50u);
    f = std::fopen(vcd.c_str(), "rb");
    ASSERT_NE(f, nullptr);
    std::string text;
    for (size_t got; (got = std::fread(buf, 1, sizeof buf, f)) > 0;)
        text.append(buf, got);
    std::fclose(f);
    EXPECT_EQ(text.compare(0, 5, "$date"), 0);
    EXPECT_NE(text.find("$enddefinitions"), std::string::npos);
    std::remove(vcd.c_str());
    EXPECT_EQ(std::remove((stem + ".gtkw").c_str()), 0); // a VCD gets one too
    std::remove((stem + ".opcodes.txt").c_str());
    // A trace opened and closed without a submit traces nothing, writes no save file and leaks
    // nothing.
    ASSERT_EQ(tpu_trace_open(d, path.c_str(), 0, 0), TPU_OK);
    ASSERT_EQ(tpu_trace_close(d), TPU_OK);
    EXPECT_NE(std::remove(path.c_str()), 0);
    EXPECT_NE(std::remove((stem + ".gtkw").c_str()), 0);
    EXPECT_EQ(tpu_trace_cycles(d), 0u);
    // A window after the work: an empty trace that holds 0 cycles.
    ASSERT_EQ(tpu_trace_open(d, path.c_str(), 1000000000, 0), TPU_OK);
    ASSERT_EQ(run_gemm(d, rng, {n, n, n, 0}), TPU_OK);
    ASSERT_EQ(tpu_trace_close(d), TPU_OK) << tpu_last_error(d);
    EXPECT_EQ(tpu_trace_cycles(d), 0u);
    EXPECT_EQ(std::remove(path.c_str()), 0);
    std::remove((stem + ".gtkw").c_str());
    std::remove((stem + ".opcodes.txt").c_str());
    // A save file that cannot be written (a directory in its place): TPU_E_IO, the trace kept.
    ASSERT_EQ(tpu_trace_open(d, path.c_str(), 0, 100), TPU_OK);
    ASSERT_EQ(run_gemm(d, rng, {n, n, n, 0}), TPU_OK);
    ASSERT_EQ(mkdir((stem + ".gtkw").c_str(), 0700), 0);
    EXPECT_EQ(tpu_trace_close(d), TPU_E_IO);
    EXPECT_TRUE(contains(tpu_last_error(d), "tpu_trace_close: save file: ")) << tpu_last_error(d);
    EXPECT_EQ(rmdir((stem + ".gtkw").c_str()), 0);
    EXPECT_EQ(std::remove(path.c_str()), 0);
    std::remove((stem + ".opcodes.txt").c_str());
    // A trace left open gets its save file when the device closes.
    {
        Dev d2(n, kSmallMem);
        ASSERT_EQ(tpu_trace_open(d2, path.c_str(), 0, 100), TPU_OK);
        ASSERT_EQ(run_gemm(d2, rng, {n, n, n, 0}), TPU_OK);
    }
    EXPECT_EQ(std::remove((stem + ".gtkw").c_str()), 0);
    std::remove((stem + ".opcodes.txt").c_str());
    std::remove(path.c_str());
    // The path became unwritable before the submit: the submit fails, the next one runs.
    std::string dir = scratch("dirXXXXXX");
    ASSERT_NE(mkdtemp(&dir[0]), nullptr);
    const std::string gone = dir + "/t.fst";
    ASSERT_EQ(tpu_trace_open(d, gone.c_str(), 0, 0), TPU_OK);
    ASSERT_EQ(rmdir(dir.c_str()), 0); // empty: the trace is created at the submit
    tpu_stream *s = tpu_stream_new();
    EXPECT_EQ(tpu_submit(d, s), TPU_E_IO);
    EXPECT_TRUE(contains(tpu_last_error(d), gone)) << tpu_last_error(d);
    tpu_stream_free(s);
    uint32_t probe;
    ASSERT_EQ(tpu_alloc(d, 64, &probe), TPU_OK); // the stream's memory was given back
    EXPECT_EQ(probe, 0u);
    ASSERT_EQ(tpu_free(d, probe), TPU_OK);
    ASSERT_EQ(run_gemm(d, rng, {n, n, n, 0}), TPU_OK);
}

INSTANTIATE_TEST_SUITE_P(Arrays, DriverDevice, ::testing::ValuesIn(built_sizes()),
                         [](const ::testing::TestParamInfo<uint32_t> &info) {
                             return "N" + std::to_string(info.param);
                         });

} // namespace

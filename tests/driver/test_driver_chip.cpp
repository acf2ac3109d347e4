// test_driver_chip.cpp - the host driver on a chip of C cores (tpusim_config.cores): submissions to
// each core run side by side in simulated time, each checked against its own golden model on the
// shared mirror of device memory; waits for one core or all; per-core figures; a timeout resets
// the chip; tpu_step and tpu_core_done for a platform that owns the clock.
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

namespace
{

using namespace driver_test;

struct ChipCase {
    uint32_t n, cores;
};

std::vector<ChipCase> built_chips()
{
    uint32_t arrays[64], cores[64];
    const int count = tpusim_chips(arrays, cores, 64);
    std::vector<ChipCase> v;
    for (int i = 0; i < count; i++)
        v.push_back({arrays[i], cores[i]});
    return v;
}

std::string chip_name(const ::testing::TestParamInfo<ChipCase> &p)
{
    return "N" + std::to_string(p.param.n) + "x" + std::to_string(p.param.cores);
}

tpu_device *open_chip(uint32_t n, uint32_t cores, uint64_t mem = 8u << 20)
{
    tpusim_config o{};
    o.array_n = n;
    o.cores = cores;
    o.mem_size = mem;
    tpu_device *d = nullptr;
    char err[256] = "";
    EXPECT_EQ(tpu_open(&o, 1, &d, err, sizeof err), TPU_OK) << err;
    return d;
}

// One GEMM per core, placed and streamed.
struct Work {
    std::vector<Placed> pl;
    std::vector<tpu_stream *> s;
    Work(tpu_device *d, tpu_rng &rng, const std::vector<GemmCase> &cases)
        : pl(cases.size()), s(cases.size())
    {
        for (size_t k = 0; k < cases.size(); k++) {
            s[k] = tpu_stream_new();
            place(d, s[k], rng, pl[k], cases[k]);
            const tpu_gemm c = command(pl[k]);
            EXPECT_EQ(tpu_stream_gemm(s[k], &c), TPU_OK);
        }
    }
    void submit(tpu_device *d)
    {
        for (uint32_t k = 0; k < s.size(); k++)
            ASSERT_EQ(tpu_submit_core(d, k, s[k]), TPU_OK) << tpu_last_error(d);
    }
    void check(tpu_device *d)
    {
        for (const Placed &p : pl)
            check_result(d, p);
    }
    void free(tpu_device *d)
    {
        for (size_t k = 0; k < s.size(); k++) {
            release(d, pl[k]);
            tpu_stream_free(s[k]);
        }
    }
};

class ChipDriver : public ::testing::TestWithParam<ChipCase>
{
  protected:
    uint32_t N() const { return GetParam().n; }
    uint32_t C() const { return GetParam().cores; }
    // Different shapes per core: ragged ones, K = 1, int8 out.
    std::vector<GemmCase> cases() const
    {
        const uint32_t n = N();
        std::vector<GemmCase> v;
        for (uint32_t k = 0; k < C(); k++)
            v.push_back(
                {3 * n + k, k % 3 == 2 ? 1 : 2 * n + 1 + k, n + 3 * k + 1,
                 k % 2 ? uint32_t{TPU_GEMM_OUT_INT8 | TPU_GEMM_BIAS} : uint32_t{TPU_GEMM_B_TILED}});
        return v;
    }
};

TEST_P(ChipDriver, ConcurrentGemmsAgreeWithTheGoldenModel)
{
    tpu_device *d = open_chip(N(), C());
    ASSERT_NE(d, nullptr);
    tpu_info info;
    ASSERT_EQ(tpu_query(d, &info), TPU_OK);
    EXPECT_EQ(info.cores, C());
    tpu_rng rng{700 + 10 * N() + C()};
    Work w(d, rng, cases());
    const uint64_t t0 = tpu_cycle(d);
    w.submit(d);
    EXPECT_EQ(tpu_cycle(d), t0) << "submitting takes no device time";
    ASSERT_EQ(tpu_wait_all(d, 0), TPU_OK) << tpu_last_error(d);
    const uint64_t chip_cycles = tpu_cycle(d) - t0;
    w.check(d);
    uint64_t longest = 0, sum = 0;
    for (uint32_t k = 0; k < C(); k++) {
        tpu_perf_report p;
        ASSERT_EQ(tpu_perf_core(d, k, &p), TPU_OK);
        EXPECT_EQ(p.counters[TPU_PERF_RETIRED], p.instructions) << "core " << k;
        EXPECT_GT(p.counters[TPU_PERF_MXU_BUSY], 0u) << "core " << k;
        longest = std::max(longest, p.cycles);
        sum += p.cycles;
    }
    // Every core started at t0: the chip took as long as its longest submission.
    EXPECT_EQ(chip_cycles, longest);
    if (C() > 1) {
        EXPECT_LT(chip_cycles, sum);
    }
    w.free(d);
    tpu_close(d);
}

// Every core reads the same A and B (shared weights) and writes its own C.
TEST_P(ChipDriver, SharedOperandsDisjointResults)
{
    const uint32_t n = N();
    tpu_device *d = open_chip(n, C());
    ASSERT_NE(d, nullptr);
    tpu_rng rng{800 + 10 * n + C()};
    const GemmCase g = {4 * n + 1, 3 * n, 2 * n + 1, TPU_GEMM_OUT_INT8 | TPU_GEMM_BIAS};
    Work w(d, rng, {g});
    std::vector<uint32_t> cs(C());
    std::vector<tpu_stream *> streams(C());
    for (uint32_t k = 0; k < C(); k++) {
        ASSERT_EQ(tpu_alloc(d, w.pl[0].c_extent(), &cs[k]), TPU_OK);
        streams[k] = tpu_stream_new();
        Placed p = w.pl[0];
        uint32_t a, b, c, prm;
        ASSERT_EQ(tpu_stream_buffer(streams[k], p.a, static_cast<uint32_t>(p.g.m * p.g.k), &a),
                  TPU_OK);
        ASSERT_EQ(tpu_stream_buffer(streams[k], p.b, static_cast<uint32_t>(p.g.k * p.g.n), &b),
                  TPU_OK);
        ASSERT_EQ(tpu_stream_buffer(streams[k], cs[k], static_cast<uint32_t>(p.c_extent()), &c),
                  TPU_OK);
        ASSERT_EQ(tpu_stream_buffer(streams[k], p.p, 12 * p.g.n, &prm), TPU_OK);
        p.a_buf = a;
        p.b_buf = b;
        p.c_buf = c;
        p.p_buf = prm;
        p.a_off = p.b_off = p.c_off = p.p_off = 0;
        const tpu_gemm cmd = command(p);
        ASSERT_EQ(tpu_stream_gemm(streams[k], &cmd), TPU_OK);
        ASSERT_EQ(tpu_submit_core(d, k, streams[k]), TPU_OK) << tpu_last_error(d);
    }
    // Waited for one at a time, last core first.
    for (uint32_t k = C(); k-- > 0;)
        ASSERT_EQ(tpu_wait_core(d, k, 0), TPU_OK) << tpu_last_error(d);
    for (uint32_t k = 0; k < C(); k++) {
        Placed p = w.pl[0];
        p.c = cs[k];
        check_result(d, p);
        EXPECT_EQ(tpu_free(d, cs[k]), TPU_OK);
        tpu_stream_free(streams[k]);
    }
    w.free(d);
    tpu_close(d);
}

// A core on its own takes the cycles a lone core takes; the others contend for the port.
TEST_P(ChipDriver, ContentionShowsInStallsAndCycles)
{
    const uint32_t n = N();
    const GemmCase g = {8 * n, 4 * n, 4 * n, TPU_GEMM_B_TILED};
    tpu_rng rng{900 + n};
    uint64_t alone;
    {
        Dev lone(n, 8u << 20);
        Work w(lone, rng, {g});
        w.submit(lone);
        ASSERT_EQ(tpu_wait(lone, 0), TPU_OK) << tpu_last_error(lone);
        tpu_perf_report p;
        ASSERT_EQ(tpu_perf(lone, &p), TPU_OK);
        alone = p.cycles;
        EXPECT_EQ(p.mem_stall_cycles, 0u);
        w.free(lone);
    }
    tpu_device *d = open_chip(n, C());
    ASSERT_NE(d, nullptr);
    {
        Work w(d, rng, {g});
        w.submit(d);
        ASSERT_EQ(tpu_wait(d, 0), TPU_OK) << tpu_last_error(d);
        tpu_perf_report p;
        ASSERT_EQ(tpu_perf(d, &p), TPU_OK);
        EXPECT_EQ(p.cycles, alone);
        EXPECT_EQ(p.mem_stall_cycles, 0u);
        w.free(d);
    }
    Work all(d, rng, std::vector<GemmCase>(C(), g));
    all.submit(d);
    ASSERT_EQ(tpu_wait_all(d, 0), TPU_OK) << tpu_last_error(d);
    all.check(d);
    for (uint32_t k = 0; k < C(); k++) {
        tpu_perf_report p;
        ASSERT_EQ(tpu_perf_core(d, k, &p), TPU_OK);
        if (C() == 1) {
            EXPECT_EQ(p.cycles, alone);
        } else {
            EXPECT_GE(p.cycles, alone) << "core " << k;
            EXPECT_GT(p.mem_stall_cycles, 0u) << "core " << k;
        }
    }
    all.free(d);
    tpu_close(d);
}

// tpu_wait_any hands the submissions back in the order they stop; a core can take its next one
// while the others run.
TEST_P(ChipDriver, WaitAnyInTheOrderTheyStop)
{
    const uint32_t n = N();
    tpu_device *d = open_chip(n, C());
    ASSERT_NE(d, nullptr);
    tpu_rng rng{980 + n};
    std::vector<GemmCase> sizes;
    for (uint32_t k = 0; k < C(); k++) // the largest on core 0
        sizes.push_back({(C() - k) * 2 * n, 2 * n, 2 * n, 0});
    Work w(d, rng, sizes);
    const uint64_t t0 = tpu_cycle(d);
    w.submit(d);
    uint64_t last = 0;
    uint32_t seen = 0;
    for (uint32_t i = 0; i < C(); i++) {
        uint32_t core = 99;
        ASSERT_EQ(tpu_wait_any(d, 0, &core), TPU_OK) << tpu_last_error(d);
        ASSERT_LT(core, C());
        EXPECT_FALSE(seen >> core & 1);
        seen |= 1u << core;
        tpu_perf_report p;
        ASSERT_EQ(tpu_perf_core(d, core, &p), TPU_OK);
        EXPECT_EQ(tpu_cycle(d) - t0, p.cycles)
            << "returned in the cycle core " << core << " stopped";
        EXPECT_GE(p.cycles, last);
        last = p.cycles;
    }
    w.check(d);
    uint32_t core;
    EXPECT_EQ(tpu_wait_any(d, 0, &core), TPU_E_ARG);
    w.free(d);
    tpu_close(d);
}

// One core's budget running out resets the chip: its submission and the others' fail with
// TPU_E_TIMEOUT naming it, and the chip works normally afterwards.
TEST_P(ChipDriver, TimeoutResetsTheChip)
{
    const uint32_t n = N();
    tpu_device *d = open_chip(n, C());
    ASSERT_NE(d, nullptr);
    tpu_rng rng{950 + n};
    Work w(d, rng, std::vector<GemmCase>(C(), {16 * n, 8 * n, 8 * n, 0}));
    tpu_set_budget(d, 1000);
    w.submit(d);
    // All reach the budget in the same cycle: the lowest core is the one named.
    EXPECT_EQ(tpu_wait_core(d, 0, 0), TPU_E_TIMEOUT);
    EXPECT_TRUE(contains(tpu_last_error(d), "no HALT within 1000 cycles")) << tpu_last_error(d);
    for (uint32_t k = 1; k < C(); k++) {
        EXPECT_EQ(tpu_wait_core(d, k, 0), TPU_E_TIMEOUT);
        EXPECT_TRUE(contains(tpu_last_error(d), "reset when core 0's submission ran out"))
            << tpu_last_error(d);
    }
    tpu_set_budget(d, 0);
    w.free(d);
    Work again(d, rng, cases());
    again.submit(d);
    ASSERT_EQ(tpu_wait_all(d, 0), TPU_OK) << tpu_last_error(d);
    again.check(d);
    again.free(d);
    tpu_close(d);
}

// tpu_step runs the clock for a platform; a stopped core's wait then takes no further cycle.
// Host writes to memory no pending submission touches reach the mirror at once.
TEST_P(ChipDriver, StepAndDone)
{
    const uint32_t n = N();
    tpu_device *d = open_chip(n, C());
    ASSERT_NE(d, nullptr);
    tpu_rng rng{990 + n};
    Work w(d, rng, cases());
    w.submit(d);
    uint32_t scratch;
    ASSERT_EQ(tpu_alloc(d, 64, &scratch), TPU_OK);
    const uint8_t bytes[4] = {1, 2, 3, 4};
    for (uint32_t k = 0; k < C(); k++)
        EXPECT_FALSE(tpu_core_done(d, k));
    int all_done = 0;
    for (int i = 0; i < 100000 && !all_done; i++) {
        tpu_step(d, 16);
        ASSERT_EQ(tpu_write(d, scratch + (i % 60), bytes, 4), TPU_OK);
        all_done = 1;
        for (uint32_t k = 0; k < C(); k++)
            all_done &= tpu_core_done(d, k);
    }
    ASSERT_TRUE(all_done);
    const uint64_t now = tpu_cycle(d);
    ASSERT_EQ(tpu_wait_all(d, 0), TPU_OK) << tpu_last_error(d);
    EXPECT_EQ(tpu_cycle(d), now);
    w.check(d);
    EXPECT_FALSE(tpu_core_done(d, 0));
    EXPECT_EQ(tpu_free(d, scratch), TPU_OK);
    w.free(d);
    tpu_close(d);
}

// A chip's trace and its save file, which shows core 0.
TEST_P(ChipDriver, Trace)
{
    tpu_device *d = open_chip(N(), C());
    ASSERT_NE(d, nullptr);
    tpu_rng rng{960 + N()};
    const std::string base =
        ::testing::TempDir() + "chip_" + std::to_string(N()) + "x" + std::to_string(C());
    ASSERT_EQ(tpu_trace_open(d, (base + ".fst").c_str(), 0, 0), TPU_OK) << tpu_last_error(d);
    Work w(d, rng, cases());
    w.submit(d);
    ASSERT_EQ(tpu_wait_all(d, 0), TPU_OK) << tpu_last_error(d);
    ASSERT_EQ(tpu_trace_close(d), TPU_OK) << tpu_last_error(d);
    EXPECT_GT(tpu_trace_cycles(d), 0u);
    std::FILE *f = std::fopen((base + ".gtkw").c_str(), "r");
    ASSERT_NE(f, nullptr);
    std::string text;
    char buf[4096];
    for (size_t got; (got = std::fread(buf, 1, sizeof buf, f)) > 0;)
        text.append(buf, got);
    std::fclose(f);
    EXPECT_TRUE(contains(text.c_str(), "tpu_chip.g_core[0].u_core.u_mxu"));
    w.check(d);
    w.free(d);
    tpu_close(d);
    for (const char *ext : {".fst", ".gtkw", ".opcodes.txt"})
        std::remove((base + ext).c_str());
}

INSTANTIATE_TEST_SUITE_P(Chips, ChipDriver, ::testing::ValuesIn(built_chips()), chip_name);

TEST(ChipDriverMisuse, CoresOutOfRange)
{
    Dev lone(built_sizes()[0]);
    tpu_info info;
    ASSERT_EQ(tpu_query(lone, &info), TPU_OK);
    EXPECT_EQ(info.cores, 1u);
    tpu_stream *s = tpu_stream_new();
    EXPECT_EQ(tpu_submit_core(lone, 1, s), TPU_E_ARG);
    EXPECT_TRUE(contains(tpu_last_error(lone), "core 1: the device has 1 core"))
        << tpu_last_error(lone);
    EXPECT_EQ(tpu_wait_core(lone, 1, 0), TPU_E_ARG);
    EXPECT_EQ(tpu_wait_all(lone, 0), TPU_E_ARG);
    tpu_perf_report p;
    EXPECT_EQ(tpu_perf_core(lone, 1, &p), TPU_E_ARG);
    EXPECT_EQ(tpu_submit_at(lone, 0, 0, 0), TPU_E_STREAM); // an empty header
    EXPECT_EQ(tpu_submit_core(lone, 0, s), TPU_OK);
    EXPECT_EQ(tpu_submit_core(lone, 0, s), TPU_E_ARG); // not waited for
    EXPECT_EQ(tpu_wait_all(lone, 0), TPU_OK) << tpu_last_error(lone);
    tpu_stream_free(s);

    const std::vector<ChipCase> chips = built_chips();
    if (chips.empty())
        return;
    tpusim_config o{};
    o.array_n = chips[0].n;
    o.cores = 9;
    tpu_device *d = nullptr;
    char err[256] = "";
    EXPECT_EQ(tpu_open(&o, 0, &d, err, sizeof err), TPU_E_DEVICE);
    EXPECT_TRUE(contains(err, "cores 9")) << err;
}

} // namespace

// test_runtime_cores.cpp - the runtime on a chip of C cores (tpusim_config.cores): batches side by
// side (tpurt_run_batches), each bit-exact against the reference and against one core's run, with
// the constants shared or copied per core; simulated cycles independent of the host threads'
// timing; per-core statistics; errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/tpurt.h"
#include "sim/tpusim.h"
#include "tests/support/remote_far.h"
#include "tests/support/runtime_models.h"

namespace
{

using namespace runtime_models;

// The chips built for the packages' array size.
std::vector<uint32_t> chip_cores()
{
    uint32_t arrays[64], cores[64];
    const int count = tpusim_chips(arrays, cores, 64);
    std::vector<uint32_t> v;
    for (int i = 0; i < count; i++)
        if (arrays[i] == array_n())
            v.push_back(cores[i]);
    return v;
}

// Runtime options for a chip of `cores`, with the device configuration they point at.
struct CoresOptions {
    tpusim_config device{};
    tpurt_options o;
    explicit CoresOptions(uint32_t cores, int per_core = 0)
    {
        tpurt_options_default(&o);
        device.cores = cores;
        o.device = &device;
        o.weights_per_core = per_core;
    }
    CoresOptions(const CoresOptions &) = delete;
    CoresOptions &operator=(const CoresOptions &) = delete;
};

// C batches of model A on rt: their outputs, or empty with the failure reported.
struct BatchesA {
    std::vector<std::vector<float>> x, r;
    tpurt_status run(tpurt *rt, uint32_t n, uint64_t seed)
    {
        x.clear();
        r.assign(n, std::vector<float>(ModelA::kBatch * ModelA::kClasses, -1.0f));
        std::vector<const void *> in(n);
        std::vector<void *> out(n);
        std::vector<const void *const *> ins(n);
        std::vector<void *const *> outs(n);
        for (uint32_t i = 0; i < n; i++) {
            x.push_back(random_x(seed + i));
            in[i] = x[i].data();
            out[i] = r[i].data();
        }
        for (uint32_t i = 0; i < n; i++) {
            ins[i] = &in[i];
            outs[i] = &out[i];
        }
        return tpurt_run_batches(rt, n, ins.data(), 1, outs.data(), 1);
    }
};

class RuntimeCores : public ::testing::TestWithParam<uint32_t>
{
  protected:
    uint32_t C() const { return GetParam(); }
};

TEST_P(RuntimeCores, BatchesSideBySideAreBitExact)
{
    ModelA a;
    for (int per_core = 0; per_core < 2; per_core++) {
        SCOPED_TRACE(per_core ? "weights per core" : "weights shared");
        const CoresOptions co(C(), per_core);
        Rt rt(a.p.pkg, &co.o);
        ASSERT_EQ(rt.st, TPURT_OK) << rt.err;
        EXPECT_EQ(tpurt_cores(rt), C());
        BatchesA b;
        ASSERT_EQ(b.run(rt, C(), 100), TPURT_OK) << tpurt_last_error(rt);
        for (uint32_t i = 0; i < C(); i++)
            EXPECT_TRUE(same_bits(b.r[i], a.reference(b.x[i]))) << "batch " << i;
        tpurt_stats s;
        ASSERT_EQ(tpurt_get_stats(rt, &s), TPURT_OK);
        EXPECT_EQ(s.runs, C());
        EXPECT_EQ(s.submissions, 2 * C());
        EXPECT_EQ(s.verified, 2 * C());
        if (C() > 1) {
            EXPECT_LT(s.device_cycles, s.cycles) << "the cores ran side by side";
        }
        uint64_t sum = 0;
        for (uint32_t k = 0; k < C(); k++) {
            tpurt_core_stats c;
            ASSERT_EQ(tpurt_get_core_stats(rt, k, &c), TPURT_OK);
            EXPECT_EQ(c.submissions, 2u) << "core " << k;
            EXPECT_GT(c.mxu_busy, 0u);
            sum += c.cycles;
        }
        EXPECT_EQ(sum, s.cycles);
        tpurt_core_stats c;
        EXPECT_EQ(tpurt_get_core_stats(rt, C(), &c), TPURT_E_ARG);
        // Fewer batches than cores, then one: the next batch numbers.
        ASSERT_EQ(b.run(rt, 1, 200), TPURT_OK) << tpurt_last_error(rt);
        EXPECT_TRUE(same_bits(b.r[0], a.reference(b.x[0])));
    }
}

// The same batches give the same cycles every time, whatever the host threads did.
TEST_P(RuntimeCores, CyclesDoNotDependOnTheHost)
{
    ModelB m;
    const CoresOptions co(C());
    std::vector<uint64_t> device, per_core;
    for (int run = 0; run < 3; run++) {
        Rt rt(m.p.pkg, &co.o);
        ASSERT_EQ(rt.st, TPURT_OK) << rt.err;
        std::vector<std::vector<uint8_t>> x(C(),
                                            std::vector<uint8_t>(ModelB::kBatch * ModelB::kIn));
        std::vector<std::vector<int32_t>> y(C(),
                                            std::vector<int32_t>(ModelB::kBatch * ModelB::kOut));
        std::vector<std::vector<int8_t>> h(C(),
                                           std::vector<int8_t>(ModelB::kBatch * ModelB::kHidden));
        std::vector<std::vector<const void *>> in(C());
        std::vector<std::vector<void *>> out(C());
        std::vector<const void *const *> ins;
        std::vector<void *const *> outs;
        for (uint32_t i = 0; i < C(); i++) {
            tpu_rng rng{40 + i};
            rng_fill(&rng, x[i].data(), x[i].size());
            in[i] = {x[i].data()};
            out[i] = {y[i].data(), h[i].data()};
        }
        for (uint32_t i = 0; i < C(); i++) {
            ins.push_back(in[i].data());
            outs.push_back(out[i].data());
        }
        ASSERT_EQ(tpurt_run_batches(rt, C(), ins.data(), 1, outs.data(), 2), TPURT_OK)
            << tpurt_last_error(rt);
        for (uint32_t i = 0; i < C(); i++) {
            std::vector<int32_t> want_y;
            std::vector<int8_t> want_h;
            m.reference(x[i], want_y, want_h);
            EXPECT_EQ(y[i], want_y) << "batch " << i;
            EXPECT_EQ(h[i], want_h) << "batch " << i;
        }
        tpurt_stats s;
        ASSERT_EQ(tpurt_get_stats(rt, &s), TPURT_OK);
        device.push_back(s.device_cycles);
        for (uint32_t k = 0; k < C(); k++) {
            tpurt_core_stats c;
            ASSERT_EQ(tpurt_get_core_stats(rt, k, &c), TPURT_OK);
            per_core.push_back(c.cycles);
        }
    }
    for (int run = 1; run < 3; run++) {
        EXPECT_EQ(device[run], device[0]);
        for (uint32_t k = 0; k < C(); k++)
            EXPECT_EQ(per_core[run * C() + k], per_core[k]) << "core " << k;
    }
}

// A budget too small for any batch: every batch fails, the first one's message is returned, and
// the runtime runs on.
TEST_P(RuntimeCores, FailingBatches)
{
    ModelA a;
    CoresOptions co(C());
    co.o.max_cycles = 40;
    Rt rt(a.p.pkg, &co.o);
    ASSERT_EQ(rt.st, TPURT_OK) << rt.err;
    BatchesA b;
    EXPECT_EQ(b.run(rt, C(), 300), TPURT_E_TIMEOUT);
    EXPECT_EQ(std::string(tpurt_last_error(rt)).rfind("batch 0, segment 0, gemm 0 'dot.1': ", 0),
              0u)
        << tpurt_last_error(rt);
    for (const auto &r : b.r)
        EXPECT_TRUE(std::all_of(r.begin(), r.end(), [](float v) { return v == -1.0f; }));
    EXPECT_EQ(b.run(rt, C() + 1, 300), TPURT_E_ARG);
    EXPECT_TRUE(has(tpurt_last_error(rt), "batches on")) << tpurt_last_error(rt);
}

INSTANTIATE_TEST_SUITE_P(Chips, RuntimeCores, ::testing::ValuesIn(chip_cores()),
                         [](const ::testing::TestParamInfo<uint32_t> &p) {
                             return "C" + std::to_string(p.param);
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(RuntimeCores);

// The same batches on a remote device (the bus of tools/tpu_vp as plain calls): the same outputs
// and the same cycles as on a local one.
TEST_P(RuntimeCores, RemoteDeviceGivesTheSameRuns)
{
    ModelA a;
    remote_far::Remote far(array_n(), C(), false);
    CoresOptions ro(C());
    ro.o.remote = &far.ops;
    Rt remote(a.p.pkg, &ro.o);
    ASSERT_EQ(remote.st, TPURT_OK) << remote.err;
    const CoresOptions lo(C());
    Rt local(a.p.pkg, &lo.o);
    ASSERT_EQ(local.st, TPURT_OK) << local.err;
    BatchesA r, l;
    ASSERT_EQ(r.run(remote, C(), 500), TPURT_OK) << tpurt_last_error(remote);
    ASSERT_EQ(l.run(local, C(), 500), TPURT_OK) << tpurt_last_error(local);
    for (uint32_t i = 0; i < C(); i++)
        EXPECT_TRUE(same_bits(r.r[i], l.r[i])) << "batch " << i;
    tpurt_stats rs, ls;
    ASSERT_EQ(tpurt_get_stats(remote, &rs), TPURT_OK);
    ASSERT_EQ(tpurt_get_stats(local, &ls), TPURT_OK);
    EXPECT_EQ(rs.submissions, ls.submissions);
    EXPECT_EQ(rs.cycles, ls.cycles);
    EXPECT_EQ(rs.device_cycles, ls.device_cycles);
}

TEST(RuntimeCoresOptions, TooManyCores)
{
    ModelA a;
    const CoresOptions co(TPUSIM_CORES_MAX + 1);
    Rt rt(a.p.pkg, &co.o);
    EXPECT_EQ(rt.st, TPURT_E_ARG);
    EXPECT_TRUE(has(rt.err, "cores 9: at most 8")) << rt.err;
}

} // namespace

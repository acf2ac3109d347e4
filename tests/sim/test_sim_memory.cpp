// test_sim_memory.cpp - a caller's memory behind the port (tpusim_config.memory): with the
// latency the built-in model has, GEMM runs take the same cycles and leave the same bytes, on a
// lone core and on every built chip; latencies that shrink from one access to the next keep the
// responses in order; an error from the memory is the core's MEM_FAULT; out-of-range requests
// and the backdoor never reach access(); a memory without its functions is refused.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "sim/tpusim.h"
#include "tests/support/progs.h"

namespace
{

constexpr uint64_t kMemSize = TPUSIM_CORES_MAX * 65536; // a 64 KiB region per core
constexpr uint32_t kLatency = 23;
constexpr uint32_t kBandwidth = 16;
constexpr uint64_t kMaxCycles = 10'000'000;

// A byte array with a latency rule, counting what reaches it.
struct TestMemory {
    std::vector<uint8_t> bytes = std::vector<uint8_t>(kMemSize);
    uint32_t latency = kLatency;
    uint32_t shrink = 0; // latency decreases by this per access (down to 1), rewinding
    uint32_t fault_lo = 0, fault_hi = 0; // [lo, hi): accesses here fail
    uint64_t accesses = 0, debugs = 0, last_cycle = 0;
    tpusim_memory ops{this, access, debug};

    static int access(void *ctx, uint64_t cycle, int we, uint32_t addr, uint8_t *data, uint32_t len,
                      uint32_t *latency)
    {
        auto *m = static_cast<TestMemory *>(ctx);
        EXPECT_LE(static_cast<uint64_t>(addr) + len, m->bytes.size());
        EXPECT_GE(cycle, m->last_cycle); // in acceptance order
        m->last_cycle = cycle;
        const uint64_t i = m->accesses++;
        if (addr < m->fault_hi && addr + len > m->fault_lo)
            return -1;
        if (we)
            std::memcpy(&m->bytes[addr], data, len);
        else
            std::memcpy(data, &m->bytes[addr], len);
        *latency =
            m->shrink ? m->latency - static_cast<uint32_t>(i * m->shrink % m->latency) : m->latency;
        return 0;
    }
    static int debug(void *ctx, int we, uint64_t addr, uint8_t *data, size_t len)
    {
        auto *m = static_cast<TestMemory *>(ctx);
        m->debugs++;
        if (addr > m->bytes.size() || len > m->bytes.size() - addr)
            return -1;
        if (we)
            std::memcpy(&m->bytes[addr], data, len);
        else
            std::memcpy(data, &m->bytes[addr], len);
        return 0;
    }
};

tpusim *create(uint32_t n, uint32_t cores, const tpusim_memory *memory)
{
    tpusim_config cfg;
    tpusim_config_default(&cfg);
    cfg.array_n = n;
    cfg.cores = cores;
    cfg.mem_size = kMemSize;
    cfg.mem_latency = kLatency;
    cfg.mem_bytes_per_cycle = kBandwidth;
    cfg.memory = memory;
    char err[256] = "";
    tpusim *s = tpusim_create(&cfg, err, sizeof err);
    EXPECT_NE(s, nullptr) << err;
    return s;
}

// A lone core (cores 0) or a chip, for the first built array size.
struct Config {
    uint32_t n, cores;
};

std::vector<Config> configs()
{
    uint32_t sizes[16], arrays[64], cores[64];
    std::vector<Config> out;
    const int lone = tpusim_arrays(sizes, 16);
    for (int i = 0; i < lone; i++)
        out.push_back({sizes[i], 0});
    const int chips = tpusim_chips(arrays, cores, 64);
    for (int i = 0; i < chips; i++)
        out.push_back({arrays[i], cores[i]});
    return out;
}

std::string name_of(const ::testing::TestParamInfo<Config> &info)
{
    return "N" + std::to_string(info.param.n) +
           (info.param.cores ? "x" + std::to_string(info.param.cores) : std::string());
}

// One GEMM per core in its own 64 KiB region, with random operands; programs and references.
struct Work {
    std::vector<gemm_desc> d;
    std::vector<tpu_prog> progs;
    std::vector<uint8_t> image = std::vector<uint8_t>(kMemSize);
    ~Work()
    {
        for (tpu_prog &p : progs)
            prog_free(&p);
    }
};

void make_work(Work *w, const tpusim_hwcfg &hw, uint32_t cores, uint64_t seed)
{
    tpu_rng r{seed};
    rng_fill_int8(&r, reinterpret_cast<int8_t *>(w->image.data()), w->image.size());
    const uint32_t n = hw.array_n;
    for (uint32_t k = 0; k < cores; k++) {
        gemm_desc d{};
        d.m = 1 + rng_below(&r, 3 * n);
        d.k = 1 + rng_below(&r, 3 * n);
        d.n = 1 + rng_below(&r, 2 * n);
        d.relu = rng_chance(&r, 50);
        ASSERT_LE(gemm_layout(&d, k * 65536), (k + 1) * 65536ull);
        tpu_prog p{};
        ASSERT_EQ(gemm_program(&p, &hw, &d), 0);
        w->d.push_back(d);
        w->progs.push_back(p);
    }
}

// Runs every core's program at once; the cycles taken, results in res.
uint64_t run(tpusim *s, const Work &w, std::vector<int> *res)
{
    const uint32_t cores = tpusim_cores(s);
    std::vector<const tpusim_insn *> progs(TPUSIM_CORES_MAX, nullptr);
    std::vector<size_t> n(TPUSIM_CORES_MAX, 0);
    for (uint32_t k = 0; k < cores; k++) {
        progs[k] = w.progs[k].insns;
        n[k] = w.progs[k].n;
    }
    res->assign(TPUSIM_CORES_MAX, -1);
    const uint64_t c0 = tpusim_cycle(s);
    tpusim_run_programs(s, progs.data(), n.data(), kMaxCycles, res->data());
    return tpusim_cycle(s) - c0;
}

class SimMemory : public ::testing::TestWithParam<Config>
{
};

TEST_P(SimMemory, SameLatencySameCyclesAndBytes)
{
    const Config c = GetParam();
    TestMemory mem;
    tpusim *builtin = create(c.n, c.cores, nullptr);
    tpusim *caller = create(c.n, c.cores, &mem.ops);
    ASSERT_NE(builtin, nullptr);
    ASSERT_NE(caller, nullptr);
    tpusim_hwcfg hw;
    tpusim_read_hwcfg(builtin, &hw);
    const uint32_t cores = tpusim_cores(builtin);
    Work w;
    make_work(&w, hw, cores, 11 + c.n + c.cores);
    ASSERT_EQ(tpusim_mem_write(builtin, 0, w.image.data(), w.image.size()), 0);
    ASSERT_EQ(tpusim_mem_write(caller, 0, w.image.data(), w.image.size()), 0);
    EXPECT_EQ(mem.bytes, w.image); // the backdoor wrote through debug()
    std::vector<int> r1, r2;
    const uint64_t cycles1 = run(builtin, w, &r1);
    const uint64_t cycles2 = run(caller, w, &r2);
    EXPECT_EQ(cycles1, cycles2);
    EXPECT_GT(mem.accesses, 0u);
    std::vector<uint8_t> after(kMemSize);
    ASSERT_EQ(tpusim_mem_read(builtin, 0, after.data(), after.size()), 0);
    EXPECT_TRUE(after == mem.bytes) << "the memories differ after the runs";
    for (uint32_t k = 0; k < cores; k++) {
        EXPECT_EQ(r1[k], TPUSIM_HALTED) << "core " << k;
        EXPECT_EQ(r2[k], TPUSIM_HALTED) << "core " << k;
        EXPECT_EQ(tpusim_core_perf(builtin, k, TPU_PERF_ACTIVE),
                  tpusim_core_perf(caller, k, TPU_PERF_ACTIVE))
            << "core " << k;
        const gemm_desc &d = w.d[k];
        std::vector<int32_t> want(static_cast<size_t>(d.m) * d.n);
        gemm_reference(&d, &w.image[d.a], reinterpret_cast<const int8_t *>(&w.image[d.b]), nullptr,
                       want.data());
        EXPECT_EQ(std::memcmp(&mem.bytes[d.c], want.data(), 4 * want.size()), 0) << "core " << k;
    }
    tpusim_destroy(builtin);
    tpusim_destroy(caller);
}

TEST_P(SimMemory, ShrinkingLatenciesKeepResponsesInOrder)
{
    const Config c = GetParam();
    TestMemory mem;
    mem.latency = 97;
    mem.shrink = 7; // each access wants its response 7 cycles sooner than the one before
    tpusim *s = create(c.n, c.cores, &mem.ops);
    ASSERT_NE(s, nullptr);
    tpusim_hwcfg hw;
    tpusim_read_hwcfg(s, &hw);
    Work w;
    make_work(&w, hw, tpusim_cores(s), 5 + c.n + c.cores);
    ASSERT_EQ(tpusim_mem_write(s, 0, w.image.data(), w.image.size()), 0);
    std::vector<int> res;
    run(s, w, &res);
    for (uint32_t k = 0; k < tpusim_cores(s); k++) {
        EXPECT_EQ(res[k], TPUSIM_HALTED) << "core " << k;
        const gemm_desc &d = w.d[k];
        std::vector<int32_t> want(static_cast<size_t>(d.m) * d.n);
        gemm_reference(&d, &w.image[d.a], reinterpret_cast<const int8_t *>(&w.image[d.b]), nullptr,
                       want.data());
        EXPECT_EQ(std::memcmp(&mem.bytes[d.c], want.data(), 4 * want.size()), 0) << "core " << k;
    }
    tpusim_destroy(s);
}

TEST_P(SimMemory, ErrorResponseIsMemFault)
{
    const Config c = GetParam();
    TestMemory mem;
    tpusim *s = create(c.n, c.cores, &mem.ops);
    ASSERT_NE(s, nullptr);
    tpusim_hwcfg hw;
    tpusim_read_hwcfg(s, &hw);
    Work w;
    make_work(&w, hw, 1, 3);
    ASSERT_EQ(tpusim_mem_write(s, 0, w.image.data(), w.image.size()), 0);
    mem.fault_lo = w.d[0].b; // B's reads fail
    mem.fault_hi = w.d[0].b + 1;
    EXPECT_EQ(tpusim_run_program(s, w.progs[0].insns, w.progs[0].n, kMaxCycles), TPUSIM_ERROR);
    EXPECT_EQ(tpusim_reg_read(s, TPU_CSR_ERROR_CODE), static_cast<uint32_t>(TPU_FAULT_MEM_FAULT));
    tpusim_destroy(s);
}

INSTANTIATE_TEST_SUITE_P(Built, SimMemory, ::testing::ValuesIn(configs()), name_of);

TEST(SimMemoryRange, OutOfRangeNeverReachesTheMemory)
{
    const std::vector<Config> all = configs();
    ASSERT_FALSE(all.empty());
    TestMemory mem;
    tpusim *s = create(all[0].n, 0, &mem.ops);
    ASSERT_NE(s, nullptr);
    uint8_t b[16] = {};
    const uint64_t debugs = mem.debugs;
    EXPECT_EQ(tpusim_mem_read(s, kMemSize - 8, b, sizeof b), -1);
    EXPECT_EQ(tpusim_mem_write(s, kMemSize, b, 1), -1);
    EXPECT_EQ(mem.debugs, debugs);
    // A load ending at the memory's end reaches it.
    tpu_prog p{};
    prog_emit(&p, TPU_OP_RD_HOST, 0, 1, kMemSize - 4, 0, 4, 0);
    prog_emit(&p, TPU_OP_HALT, 0, 0, 0, 0, 0, 0);
    EXPECT_EQ(tpusim_run_program(s, p.insns, p.n, kMaxCycles), TPUSIM_HALTED);
    EXPECT_EQ(mem.accesses, 1u);
    prog_free(&p);
    // With MEM_SIZE claiming more than there is, the port's own range check answers a load past
    // the end with an error, without calling access().
    tpusim_reg_write(s, TPU_CSR_MEM_SIZE, 2 * kMemSize);
    p = tpu_prog{};
    prog_emit(&p, TPU_OP_RD_HOST, 0, 1, kMemSize - 2, 0, 4, 0);
    prog_emit(&p, TPU_OP_HALT, 0, 0, 0, 0, 0, 0);
    EXPECT_EQ(tpusim_run_program(s, p.insns, p.n, kMaxCycles), TPUSIM_ERROR);
    EXPECT_EQ(tpusim_reg_read(s, TPU_CSR_ERROR_CODE), static_cast<uint32_t>(TPU_FAULT_MEM_FAULT));
    EXPECT_EQ(mem.accesses, 1u);
    prog_free(&p);
    tpusim_destroy(s);
}

TEST(SimMemoryRange, MemoryWithoutFunctionsIsRefused)
{
    const std::vector<Config> all = configs();
    ASSERT_FALSE(all.empty());
    tpusim_memory half{nullptr, TestMemory::access, nullptr};
    tpusim_config cfg;
    tpusim_config_default(&cfg);
    cfg.array_n = all[0].n;
    cfg.memory = &half;
    char err[256] = "";
    EXPECT_EQ(tpusim_create(&cfg, err, sizeof err), nullptr);
    EXPECT_NE(std::strstr(err, "memory"), nullptr) << err;
}

} // namespace

// test_chip.cpp - the multi-core device (a verilated tpu_chip, sim/tpusim.h with cores > 0) for
// every built chip: C cores running their own GEMMs and random programs concurrently on the one
// memory, each core bit-exact against a golden model of its own; the contention the shared port
// causes; a one-core chip timing exactly like a lone core; RD_ACC's sums of shared replicas on
// every core; the chip CSRs and the barrier.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "sim/fp.h"
#include "sim/tpusim.h"
#include "tests/support/fp_values.h"
#include "tests/support/progs.h"

namespace
{

constexpr uint64_t kMaxCycles = 20'000'000;

struct ChipSize {
    uint32_t n, cores;
};

std::vector<ChipSize> built_chips()
{
    uint32_t arrays[64], cores[64];
    const int count = tpusim_chips(arrays, cores, 64);
    std::vector<ChipSize> out;
    for (int i = 0; i < count; i++)
        out.push_back({arrays[i], cores[i]});
    return out;
}

std::string name_of(const ::testing::TestParamInfo<ChipSize> &info)
{
    return "N" + std::to_string(info.param.n) + "x" + std::to_string(info.param.cores);
}

tpusim *create(uint32_t n, uint32_t cores, uint64_t mem_size, uint32_t latency = 20,
               uint32_t bw = 32)
{
    tpusim_config cfg;
    tpusim_config_default(&cfg);
    cfg.array_n = n;
    cfg.cores = cores;
    cfg.mem_size = mem_size;
    cfg.mem_latency = latency;
    cfg.mem_bytes_per_cycle = bw;
    char err[256] = "";
    tpusim *s = tpusim_create(&cfg, err, sizeof err);
    EXPECT_NE(s, nullptr) << err;
    return s;
}

struct Device {
    tpusim *s;
    Device(uint32_t n, uint32_t cores, uint64_t mem_size) : s(create(n, cores, mem_size)) {}
    ~Device() { tpusim_destroy(s); }
    Device(const Device &) = delete;
    Device &operator=(const Device &) = delete;
};

struct Golden {
    tpusim_golden *g;
    explicit Golden(const tpusim_hwcfg &hw) : g(tpusim_golden_create(&hw)) {}
    ~Golden() { tpusim_golden_destroy(g); }
    Golden(const Golden &) = delete;
    Golden &operator=(const Golden &) = delete;
};

// Core k's UB and ACC against a golden model's, every row; "" if equal, else the first difference.
std::string compare_core(tpusim *s, uint32_t k, tpusim_golden *g, const tpusim_hwcfg &hw)
{
    const uint32_t n = hw.array_n;
    std::vector<int8_t> ub(n);
    for (uint32_t r = 0; r < hw.ub_rows; r++) {
        if (tpusim_core_ub_read(s, k, r, ub.data()) != 0)
            return "UB row " + std::to_string(r) + " unreadable";
        if (std::memcmp(ub.data(), tpusim_golden_ub(g, r), n) != 0)
            return "core " + std::to_string(k) + " UB row " + std::to_string(r) + " differs";
    }
    std::vector<int32_t> acc(n);
    for (uint32_t r = 0; r < hw.acc_rows; r++) {
        if (tpusim_core_acc_read(s, k, r, acc.data()) != 0)
            return "ACC row " + std::to_string(r) + " unreadable";
        if (std::memcmp(acc.data(), tpusim_golden_acc(g, r), 4 * n) != 0)
            return "core " + std::to_string(k) + " ACC row " + std::to_string(r) + " differs";
    }
    return "";
}

// One random GEMM per core, each in its own region of memory (A, B, C and parameters from
// k * region), with its program and naive reference result.
struct Gemms {
    std::vector<gemm_desc> d;
    std::vector<tpu_prog> progs;
    std::vector<uint8_t> image; // the memory before the run
    ~Gemms()
    {
        for (tpu_prog &p : progs)
            prog_free(&p);
    }
};

constexpr uint32_t kRegion = 64 * 1024;

void make_gemms(Gemms *out, const tpusim_hwcfg &hw, uint32_t cores, uint64_t seed)
{
    tpu_rng r{seed};
    const uint32_t n = hw.array_n;
    out->image.resize(static_cast<size_t>(cores) * kRegion);
    rng_fill_int8(&r, reinterpret_cast<int8_t *>(out->image.data()), out->image.size());
    for (uint32_t k = 0; k < cores; k++) {
        gemm_desc d{};
        d.m = 1 + rng_below(&r, 3 * n);
        d.k = 1 + rng_below(&r, 3 * n);
        d.n = 1 + rng_below(&r, 2 * n);
        d.bias = rng_chance(&r, 50);
        d.relu = rng_chance(&r, 50);
        d.out_int8 = rng_chance(&r, 50);
        const uint64_t end = gemm_layout(&d, k * kRegion);
        ASSERT_LE(end, (k + 1) * static_cast<uint64_t>(kRegion));
        if (d.bias || d.out_int8) {
            auto *prm = reinterpret_cast<int32_t *>(out->image.data() + d.params);
            for (uint32_t j = 0; j < d.n; j++) {
                prm[j] = static_cast<int32_t>(rng_range(&r, -100000, 100000));
                prm[d.n + j] = static_cast<int32_t>(rng_range(&r, 1, INT32_MAX));
                prm[2 * d.n + j] = static_cast<int32_t>(rng_range(&r, 20, 40));
            }
        }
        tpu_prog p{};
        ASSERT_EQ(gemm_program(&p, &hw, &d), 0);
        out->d.push_back(d);
        out->progs.push_back(p);
    }
}

class Chip : public ::testing::TestWithParam<ChipSize>
{
};

TEST(ChipConfig, BadConfigs)
{
    const std::vector<ChipSize> chips = built_chips();
    if (chips.empty())
        GTEST_SKIP() << "no chip built (TPU_CHIPS)";
    tpusim_config cfg;
    tpusim_config_default(&cfg);
    cfg.array_n = chips[0].n;
    cfg.cores = TPUSIM_CORES_MAX + 1;
    char err[256] = "";
    EXPECT_EQ(tpusim_create(&cfg, err, sizeof err), nullptr);
    EXPECT_NE(std::strstr(err, "cores"), nullptr) << err;
    // An unbuilt chip: the message lists the built ones.
    uint32_t c = 1;
    while (c <= TPUSIM_CORES_MAX) {
        bool built = false;
        for (const ChipSize &s : chips)
            built |= s.n == chips[0].n && s.cores == c;
        if (!built)
            break;
        c++;
    }
    if (c > TPUSIM_CORES_MAX)
        return; // every chip of that N is built
    cfg.cores = c;
    err[0] = '\0';
    EXPECT_EQ(tpusim_create(&cfg, err, sizeof err), nullptr);
    for (const ChipSize &s : chips)
        EXPECT_NE(std::strstr(err, (std::to_string(s.n) + "x" + std::to_string(s.cores)).c_str()),
                  nullptr)
            << err;
}

TEST_P(Chip, IdentityAndPerCoreRegisters)
{
    const ChipSize p = GetParam();
    Device dev(p.n, p.cores, 1 << 20);
    ASSERT_NE(dev.s, nullptr);
    EXPECT_EQ(tpusim_cores(dev.s), p.cores);
    EXPECT_EQ(tpusim_chip_reg_read(dev.s, TPU_CHIP_CSR_CHIP_ID), TPU_CHIP_ID_MAGIC);
    EXPECT_EQ(tpusim_chip_reg_read(dev.s, TPU_CHIP_CSR_CHIP_VERSION), 0x00010000u);
    EXPECT_EQ(tpusim_chip_reg_read(dev.s, TPU_CHIP_CSR_CORES), p.cores);
    for (uint32_t k = 0; k < p.cores; k++) {
        EXPECT_EQ(tpusim_core_reg_read(dev.s, k, TPU_CSR_ID), TPU_ID_MAGIC);
        EXPECT_EQ(tpusim_core_reg_read(dev.s, k, TPU_CSR_ARRAY_N), p.n);
        EXPECT_EQ(tpusim_core_reg_read(dev.s, k, TPU_CSR_MEM_SIZE), 1u << 20) << "core " << k;
    }
    // Each core's CSR port is its own: distinct MEM_SIZEs read back per core.
    for (uint32_t k = 0; k < p.cores; k++)
        tpusim_core_reg_write(dev.s, k, TPU_CSR_MEM_SIZE, 4096 * (k + 1));
    for (uint32_t k = 0; k < p.cores; k++)
        EXPECT_EQ(tpusim_core_reg_read(dev.s, k, TPU_CSR_MEM_SIZE), 4096 * (k + 1));
    // No core beyond C: reads zero, writes and pushes spend their clock edge and do nothing.
    const uint64_t c0 = tpusim_cycle(dev.s);
    EXPECT_EQ(tpusim_core_reg_read(dev.s, p.cores, TPU_CSR_ID), 0u);
    tpusim_core_reg_write(dev.s, p.cores, TPU_CSR_MEM_SIZE, 1);
    const tpusim_insn halt = tpusim_encode(TPU_OP_HALT, 0, 0, 0, 0, 0, 0);
    EXPECT_EQ(tpusim_core_push(dev.s, p.cores, &halt), 0);
    EXPECT_EQ(tpusim_cycle(dev.s), c0 + 2);
    int8_t row[64];
    EXPECT_EQ(tpusim_core_ub_read(dev.s, p.cores, 0, row), -1);
    // Reset gives every core MEM_SIZE back.
    tpusim_reset(dev.s);
    for (uint32_t k = 0; k < p.cores; k++)
        EXPECT_EQ(tpusim_core_reg_read(dev.s, k, TPU_CSR_MEM_SIZE), 1u << 20);
    // A HALT pushed to core k halts core k only.
    const uint32_t last = p.cores - 1;
    EXPECT_EQ(tpusim_core_push(dev.s, last, &halt), 1);
    tpusim_step(dev.s, 10);
    for (uint32_t k = 0; k < p.cores; k++)
        EXPECT_EQ((tpusim_core_reg_read(dev.s, k, TPU_CSR_STATUS) & TPU_STATUS_HALTED) != 0,
                  k == last)
            << "core " << k;
}

// C random GEMMs at once, one per core in its own memory region: every core's memory, UB and ACC
// as its golden model's and the naive reference's; with C > 1 every core lost cycles to the others
// and the chip took longer than core 0 alone.
TEST_P(Chip, ConcurrentGemmsAgreeWithTheGoldenModel)
{
    const ChipSize p = GetParam();
    for (uint64_t round = 0; round < 3; round++) {
        Device dev(p.n, p.cores, static_cast<uint64_t>(p.cores) * kRegion);
        ASSERT_NE(dev.s, nullptr);
        tpusim_hwcfg hw;
        tpusim_read_hwcfg(dev.s, &hw);
        Gemms g;
        make_gemms(&g, hw, p.cores, 0xc41900 + 100 * p.n + 10 * p.cores + round);
        ASSERT_EQ(tpusim_mem_write(dev.s, 0, g.image.data(), g.image.size()), 0);
        std::vector<const tpusim_insn *> progs;
        std::vector<size_t> lens;
        for (const tpu_prog &pr : g.progs) {
            progs.push_back(pr.insns);
            lens.push_back(pr.n);
        }
        std::vector<int> results(p.cores, -1);
        const uint64_t start = tpusim_cycle(dev.s);
        ASSERT_EQ(tpusim_run_programs(dev.s, progs.data(), lens.data(), kMaxCycles, results.data()),
                  TPUSIM_HALTED);
        const uint64_t together = tpusim_cycle(dev.s) - start;
        std::vector<uint8_t> got(g.image.size());
        ASSERT_EQ(tpusim_mem_read(dev.s, 0, got.data(), got.size()), 0);
        for (uint32_t k = 0; k < p.cores; k++) {
            EXPECT_EQ(results[k], TPUSIM_HALTED) << "core " << k;
            Golden gold(hw);
            ASSERT_NE(gold.g, nullptr);
            std::memcpy(tpusim_golden_mem(gold.g), g.image.data(), g.image.size());
            ASSERT_EQ(tpusim_golden_run(gold.g, g.progs[k].insns, g.progs[k].n, nullptr),
                      TPU_FAULT_NONE);
            const uint8_t *want = tpusim_golden_mem(gold.g);
            const size_t lo = static_cast<size_t>(k) * kRegion;
            EXPECT_EQ(std::memcmp(got.data() + lo, want + lo, kRegion), 0)
                << "core " << k << "'s memory region, round " << round;
            EXPECT_EQ(compare_core(dev.s, k, gold.g, hw), "") << "round " << round;
            // And the naive reference, so a shared misunderstanding cannot hide.
            const gemm_desc &d = g.d[k];
            const size_t bytes = static_cast<size_t>(d.m) * d.n * (d.out_int8 ? 1 : 4);
            std::vector<uint8_t> ref(bytes);
            gemm_reference(
                &d, g.image.data() + d.a, reinterpret_cast<const int8_t *>(g.image.data() + d.b),
                reinterpret_cast<const int32_t *>(g.image.data() + d.params), ref.data());
            EXPECT_EQ(std::memcmp(got.data() + d.c, ref.data(), bytes), 0) << "core " << k;
            // The core's own memory-stall counter includes the cycles it lost to other cores.
            EXPECT_GE(tpusim_core_perf(dev.s, k, TPU_PERF_STALL_MEM), tpusim_mem_stall(dev.s, k));
        }
        // Core 0's GEMM alone on the same chip, from the same memory and a fresh reset.
        tpusim_reset(dev.s);
        ASSERT_EQ(tpusim_mem_write(dev.s, 0, g.image.data(), g.image.size()), 0);
        std::vector<const tpusim_insn *> alone(p.cores, nullptr);
        alone[0] = progs[0];
        const uint64_t start0 = tpusim_cycle(dev.s);
        ASSERT_EQ(tpusim_run_programs(dev.s, alone.data(), lens.data(), kMaxCycles, nullptr),
                  TPUSIM_HALTED);
        const uint64_t lone = tpusim_cycle(dev.s) - start0;
        EXPECT_EQ(tpusim_mem_stall(dev.s, 0), 0u) << "no other core competed";
        if (p.cores > 1) {
            EXPECT_GT(together, lone) << "round " << round;
        } else {
            EXPECT_EQ(together, lone) << "round " << round;
        }
        ::testing::Test::RecordProperty("cycles_" + std::to_string(round),
                                        std::to_string(together) + " (core 0 alone " +
                                            std::to_string(lone) + ")");
    }
}

// The same GEMM on every core at once: the cores hit the port together, every core waits for the
// others, and the chip takes longer than one core running it alone.
TEST_P(Chip, ContentionShowsInTheStallCounters)
{
    const ChipSize p = GetParam();
    Device dev(p.n, p.cores, static_cast<uint64_t>(p.cores) * kRegion);
    ASSERT_NE(dev.s, nullptr);
    tpusim_hwcfg hw;
    tpusim_read_hwcfg(dev.s, &hw);
    std::vector<tpu_prog> progs(p.cores);
    std::vector<const tpusim_insn *> ptrs;
    std::vector<size_t> lens;
    for (uint32_t k = 0; k < p.cores; k++) {
        gemm_desc d{};
        d.m = d.k = 2 * p.n;
        d.n = p.n;
        gemm_layout(&d, k * kRegion);
        ASSERT_EQ(gemm_program(&progs[k], &hw, &d), 0);
        ptrs.push_back(progs[k].insns);
        lens.push_back(progs[k].n);
    }
    // Core 0's GEMM alone, then every core's at once.
    std::vector<const tpusim_insn *> alone(p.cores, nullptr);
    alone[0] = ptrs[0];
    uint64_t start = tpusim_cycle(dev.s);
    ASSERT_EQ(tpusim_run_programs(dev.s, alone.data(), lens.data(), kMaxCycles, nullptr),
              TPUSIM_HALTED);
    const uint64_t lone = tpusim_cycle(dev.s) - start;
    EXPECT_EQ(tpusim_mem_stall(dev.s, 0), 0u);
    tpusim_reset(dev.s);
    start = tpusim_cycle(dev.s);
    ASSERT_EQ(tpusim_run_programs(dev.s, ptrs.data(), lens.data(), kMaxCycles, nullptr),
              TPUSIM_HALTED);
    const uint64_t together = tpusim_cycle(dev.s) - start;
    if (p.cores > 1) {
        EXPECT_GT(together, lone);
    } else {
        EXPECT_EQ(together, lone);
    }
    ::testing::Test::RecordProperty("cycles", std::to_string(together) + " (one core alone " +
                                                  std::to_string(lone) + ")");
    std::string stalls;
    for (uint32_t k = 0; k < p.cores; k++) {
        const uint64_t stall = tpusim_mem_stall(dev.s, k);
        stalls += " " + std::to_string(stall);
        if (p.cores > 1) {
            EXPECT_GT(stall, 0u) << "core " << k;
        } else {
            EXPECT_EQ(stall, 0u);
        }
    }
    ::testing::Test::RecordProperty("mem_stall", stalls);
    // CLEAR_PERF clears them.
    tpusim_chip_reg_write(dev.s, TPU_CHIP_CSR_CTRL, TPU_CHIP_CTRL_CLEAR_PERF);
    for (uint32_t k = 0; k < p.cores; k++)
        EXPECT_EQ(tpusim_mem_stall(dev.s, k), 0u);
    for (tpu_prog &pr : progs)
        prog_free(&pr);
}

// Random programs of every opcode, one per core: each generated for a memory of one region and
// moved to its core's region, so the cores share the port but no byte.
// One round: a random program per core in its own memory region, run at once, each core's
// memory region, UB, ACC and registers against its golden model; the program of core `failing`
// (none when it is not a core) stops with a UB_RANGE error, which must leave the others alone.
void random_round(const ChipSize &p, tpusim *s, std::vector<std::unique_ptr<Golden>> &golds,
                  uint64_t round, uint32_t failing)
{
    tpusim_hwcfg hw;
    tpusim_read_hwcfg(s, &hw);
    tpusim_hwcfg region_hw = hw;
    region_hw.mem_size = kRegion;
    tpu_rng r{0x7a9d00 + 1000 * p.n + 100 * p.cores + round};
    std::vector<uint8_t> image(static_cast<size_t>(p.cores) * kRegion);
    rng_fill(&r, image.data(), image.size());
    ASSERT_EQ(tpusim_mem_write(s, 0, image.data(), image.size()), 0);
    std::vector<tpu_prog> local(p.cores), moved(p.cores);
    std::vector<const tpusim_insn *> ptrs;
    std::vector<size_t> lens;
    for (uint32_t k = 0; k < p.cores; k++) {
        random_program(&local[k], &r, &region_hw, 20 + rng_below(&r, 60),
                       k == failing ? TPU_FAULT_UB_RANGE : TPU_FAULT_NONE);
        for (size_t i = 0; i < local[k].n; i++) {
            tpusim_fields f = tpusim_decode(&local[k].insns[i]);
            tpusim_access acc[TPU_FOOTPRINT_MAX];
            const int na = tpusim_footprint(&f, hw.array_n, acc);
            for (int j = 0; j < na; j++)
                if (acc[j].space == TPU_SPACE_MEM) { // a is the memory address of every such op
                    f.a += k * kRegion;
                    break;
                }
            prog_emit(&moved[k], f.op, f.flags, f.rows, f.a, f.b, f.len, f.stride);
        }
        ptrs.push_back(moved[k].insns);
        lens.push_back(moved[k].n);
        std::memcpy(tpusim_golden_mem(golds[k]->g), image.data() + k * kRegion, kRegion);
    }
    std::vector<int> results(p.cores, -1);
    ASSERT_EQ(tpusim_run_programs(s, ptrs.data(), lens.data(), kMaxCycles, results.data()),
              failing < p.cores ? TPUSIM_ERROR : TPUSIM_HALTED)
        << "round " << round;
    std::vector<uint8_t> got(image.size());
    ASSERT_EQ(tpusim_mem_read(s, 0, got.data(), got.size()), 0);
    for (uint32_t k = 0; k < p.cores; k++) {
        const int want = k == failing ? TPU_FAULT_UB_RANGE : TPU_FAULT_NONE;
        EXPECT_EQ(results[k], k == failing ? TPUSIM_ERROR : TPUSIM_HALTED) << "core " << k;
        ASSERT_EQ(tpusim_golden_run(golds[k]->g, local[k].insns, local[k].n, nullptr), want);
        EXPECT_EQ(tpusim_core_reg_read(s, k, TPU_CSR_ERROR_CODE), static_cast<uint32_t>(want))
            << "core " << k;
        EXPECT_EQ(std::memcmp(got.data() + k * kRegion, tpusim_golden_mem(golds[k]->g), kRegion), 0)
            << "core " << k << ", round " << round;
        EXPECT_EQ(compare_core(s, k, golds[k]->g, hw), "") << "core " << k << ", round " << round;
        prog_free(&local[k]);
        prog_free(&moved[k]);
        tpusim_golden_reset(golds[k]->g);
    }
    tpusim_reset(s);
}

// A chip with a memory region and a golden model per core, for random_round.
struct Regions {
    Device dev;
    std::vector<std::unique_ptr<Golden>> golds;
    explicit Regions(const ChipSize &p)
        : dev(p.n, p.cores, static_cast<uint64_t>(p.cores) * kRegion)
    {
        if (!dev.s)
            return;
        tpusim_hwcfg hw;
        tpusim_read_hwcfg(dev.s, &hw);
        hw.mem_size = kRegion;
        for (uint32_t k = 0; k < p.cores; k++)
            golds.emplace_back(new Golden(hw));
    }
};

TEST_P(Chip, ConcurrentRandomProgramsAgreeWithTheGoldenModel)
{
    const ChipSize p = GetParam();
    Regions r(p);
    ASSERT_NE(r.dev.s, nullptr);
    for (uint64_t round = 0; round < 8; round++)
        random_round(p, r.dev.s, r.golds, round, p.cores);
}

// A core stopping with an error leaves the others' results alone, and after a reset the chip runs
// clean programs on every core again.
TEST_P(Chip, OneCoresErrorLeavesTheOthersAlone)
{
    const ChipSize p = GetParam();
    Regions r(p);
    ASSERT_NE(r.dev.s, nullptr);
    for (uint64_t round = 0; round < 4; round++) {
        random_round(p, r.dev.s, r.golds, 100 + round, static_cast<uint32_t>(round % p.cores));
        random_round(p, r.dev.s, r.golds, 200 + round, p.cores);
    }
}

// RD_ACC (ISA 1.4) on every core at once through the shared port, an all-reduce's sums: C
// replicas of 2C rows of N fp32 (edge values among them) in shared memory, core k adding rows 2k,
// 2k+1 of every replica in replica order (fp32 and int32) and writing them out side by side.
// Every core's ACC and the memory against golden models running the programs one after another
// (the cores read the same bytes and write different ones), the sums against the host's.
TEST_P(Chip, RdAccSumsSharedReplicasOnEveryCore)
{
    const ChipSize p = GetParam();
    const uint32_t n = p.n, row = 4 * n, rows = 2 * p.cores, replica = rows * row;
    const uint32_t out = p.cores * replica, size = out + 2 * replica;
    Device dev(n, p.cores, size);
    ASSERT_NE(dev.s, nullptr);
    tpusim_hwcfg hw;
    tpusim_read_hwcfg(dev.s, &hw);
    std::vector<uint8_t> image(size);
    tpu_rng r{0xa11 + 10u * p.cores + n};
    rng_fill_fp(&r, image.data(), out);
    ASSERT_EQ(tpusim_mem_write(dev.s, 0, image.data(), image.size()), 0);
    std::vector<tpu_prog> progs(p.cores);
    std::vector<const tpusim_insn *> ptrs;
    std::vector<size_t> lens;
    for (uint32_t k = 0; k < p.cores; k++) {
        for (uint32_t t = 0; t < 2; t++) { // fp32, then int32 at ACC rows 2, 3 and past the fp32
            const uint32_t ty = t ? 0 : TPU_F_BF16, acc = 2 * t;
            for (uint32_t c = 0; c < p.cores; c++)
                prog_emit(&progs[k], TPU_OP_RD_ACC, ty | (c ? TPU_F_ACC : 0), 2,
                          c * replica + 2 * k * row, acc, row, row);
            prog_emit(&progs[k], TPU_OP_WR_HOST, TPU_F_SRC_ACC | ty, 2,
                      out + t * replica + 2 * k * row, acc, row, row);
        }
        prog_emit(&progs[k], TPU_OP_HALT, 0, 0, 0, 0, 0, 0);
        ptrs.push_back(progs[k].insns);
        lens.push_back(progs[k].n);
    }
    std::vector<int> results(p.cores, -1);
    ASSERT_EQ(tpusim_run_programs(dev.s, ptrs.data(), lens.data(), kMaxCycles, results.data()),
              TPUSIM_HALTED);
    std::vector<uint8_t> got(size);
    ASSERT_EQ(tpusim_mem_read(dev.s, 0, got.data(), got.size()), 0);
    hw.mem_size = size;
    std::vector<uint8_t> mem = image;
    for (uint32_t k = 0; k < p.cores; k++) {
        Golden g(hw);
        ASSERT_NE(g.g, nullptr);
        std::copy(mem.begin(), mem.end(), tpusim_golden_mem(g.g));
        ASSERT_EQ(tpusim_golden_run(g.g, progs[k].insns, progs[k].n, nullptr), TPU_FAULT_NONE);
        std::copy(tpusim_golden_mem(g.g), tpusim_golden_mem(g.g) + size, mem.begin());
        EXPECT_EQ(compare_core(dev.s, k, g.g, hw), "");
    }
    EXPECT_EQ(got, mem);
    auto word = [&](uint64_t at) {
        uint32_t v;
        std::memcpy(&v, got.data() + at, 4);
        return v;
    };
    for (uint32_t e = 0; e < rows * n; e++) {
        uint32_t f = word(4 * e), i = f;
        for (uint32_t c = 1; c < p.cores; c++) {
            f = tpusim_fp32_add(f, word(c * replica + 4 * e));
            i += word(c * replica + 4 * e);
        }
        EXPECT_EQ(word(out + 4 * e), f) << "fp32 element " << e;
        EXPECT_EQ(word(out + replica + 4 * e), i) << "int32 element " << e;
    }
    for (tpu_prog &pr : progs)
        prog_free(&pr);
}

// The barrier through the chip CSR port (docs/isa.md "The barrier").
TEST_P(Chip, Barrier)
{
    const ChipSize p = GetParam();
    Device dev(p.n, p.cores, 1 << 20);
    ASSERT_NE(dev.s, nullptr);
    const uint32_t all = (1u << p.cores) - 1;
    EXPECT_EQ(tpusim_chip_reg_read(dev.s, TPU_CHIP_CSR_BAR_MASK), all);
    EXPECT_EQ(tpusim_chip_reg_read(dev.s, TPU_CHIP_CSR_BAR_GEN), 0u);
    for (uint32_t gen = 1; gen <= 2; gen++) {
        // Cores arrive one by one, highest first; the last arrival completes the generation.
        for (uint32_t k = p.cores; k-- > 0;) {
            EXPECT_EQ(tpusim_chip_reg_read(dev.s, TPU_CHIP_CSR_BAR_GEN), gen - 1);
            tpusim_chip_reg_write(dev.s, TPU_CHIP_CSR_BAR_ARRIVE, 1u << k);
            if (k) // again before the generation completes: no change
                tpusim_chip_reg_write(dev.s, TPU_CHIP_CSR_BAR_ARRIVE, 1u << k);
            const uint32_t arrived = k ? all & ~((1u << k) - 1) : 0;
            EXPECT_EQ(tpusim_chip_reg_read(dev.s, TPU_CHIP_CSR_BAR_ARRIVE), arrived);
        }
        EXPECT_EQ(tpusim_chip_reg_read(dev.s, TPU_CHIP_CSR_BAR_GEN), gen);
    }
    // Core 0 alone in the mask: others' arrivals are ignored, its own completes the generation.
    tpusim_chip_reg_write(dev.s, TPU_CHIP_CSR_BAR_MASK, 1);
    if (p.cores > 1) {
        tpusim_chip_reg_write(dev.s, TPU_CHIP_CSR_BAR_ARRIVE, all & ~1u);
        EXPECT_EQ(tpusim_chip_reg_read(dev.s, TPU_CHIP_CSR_BAR_ARRIVE), 0u);
        EXPECT_EQ(tpusim_chip_reg_read(dev.s, TPU_CHIP_CSR_BAR_GEN), 2u);
    }
    tpusim_chip_reg_write(dev.s, TPU_CHIP_CSR_BAR_ARRIVE, 1);
    EXPECT_EQ(tpusim_chip_reg_read(dev.s, TPU_CHIP_CSR_BAR_GEN), 3u);
    // Reset restores the mask and the generation count.
    tpusim_reset(dev.s);
    EXPECT_EQ(tpusim_chip_reg_read(dev.s, TPU_CHIP_CSR_BAR_MASK), all);
    EXPECT_EQ(tpusim_chip_reg_read(dev.s, TPU_CHIP_CSR_BAR_GEN), 0u);
}

// A chip traces like a core: every core's signals and the chip's, for the cycles asked for.
TEST_P(Chip, Trace)
{
    const ChipSize p = GetParam();
    Device dev(p.n, p.cores, 1 << 20);
    ASSERT_NE(dev.s, nullptr);
    const char *tmp = std::getenv("TMPDIR");
    const std::filesystem::path dir =
        std::filesystem::path(tmp ? tmp : "/tmp") / ("test_chip_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    const std::string fst =
        (dir / ("chip" + std::to_string(p.n) + "x" + std::to_string(p.cores) + ".fst")).string();
    char err[256] = "";
    const uint64_t now = tpusim_cycle(dev.s);
    ASSERT_EQ(
        tpusim_trace_open(dev.s, fst.c_str(), TPUSIM_TRACE_FST, now, now + 20, err, sizeof err), 0)
        << err;
    tpusim_step(dev.s, 30); // the window closes the trace after 20 cycles
    uint64_t cycles = 0;
    EXPECT_EQ(tpusim_trace_close(dev.s, &cycles, err, sizeof err), 0) << err;
    EXPECT_EQ(cycles, 20u);
    EXPECT_GT(std::filesystem::file_size(fst), 0u);
    std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Chips, Chip, ::testing::ValuesIn(built_chips()), name_of);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Chip);

// A one-core chip is a lone core: same cycles, counters and results for the same programs, from
// creation on.
TEST(ChipOneCore, TimesExactlyLikeALoneCore)
{
    uint32_t sizes[16];
    const int count = tpusim_arrays(sizes, 16);
    int compared = 0;
    for (const ChipSize &c : built_chips()) {
        if (c.cores != 1 || std::find(sizes, sizes + count, c.n) == sizes + count)
            continue;
        compared++;
        Device lone(c.n, 0, 2 * kRegion), chip(c.n, 1, 2 * kRegion);
        ASSERT_NE(lone.s, nullptr);
        ASSERT_NE(chip.s, nullptr);
        EXPECT_EQ(tpusim_cores(lone.s), 1u);
        EXPECT_EQ(tpusim_chip_reg_read(lone.s, TPU_CHIP_CSR_CHIP_ID), 0u); // no chip CSRs
        EXPECT_EQ(tpusim_cycle(lone.s), tpusim_cycle(chip.s));
        tpusim_hwcfg hw;
        tpusim_read_hwcfg(lone.s, &hw);
        tpusim_hwcfg region_hw = hw;
        region_hw.mem_size = kRegion;
        for (uint64_t i = 0; i < 12; i++) {
            tpu_rng r{0x1c04e + 100 * c.n + i};
            std::vector<uint8_t> image(2 * kRegion);
            rng_fill(&r, image.data(), image.size());
            tpu_prog prog{};
            Gemms g;
            if (i % 2) {
                random_program(&prog, &r, &region_hw, 20 + rng_below(&r, 60), TPU_FAULT_NONE);
            } else {
                make_gemms(&g, hw, 1, r.s);
                image = g.image;
                image.resize(2 * kRegion);
            }
            const tpu_prog &p = i % 2 ? prog : g.progs[0];
            std::vector<uint64_t> cycles;
            std::vector<std::vector<uint8_t>> mems;
            std::vector<std::vector<uint64_t>> perfs;
            for (tpusim *s : {lone.s, chip.s}) {
                tpusim_reset(s);
                ASSERT_EQ(tpusim_mem_write(s, 0, image.data(), image.size()), 0);
                const uint64_t start = tpusim_cycle(s);
                ASSERT_EQ(tpusim_run_program(s, p.insns, p.n, kMaxCycles), TPUSIM_HALTED);
                cycles.push_back(tpusim_cycle(s) - start);
                mems.emplace_back(image.size());
                ASSERT_EQ(tpusim_mem_read(s, 0, mems.back().data(), image.size()), 0);
                perfs.emplace_back();
                for (int ctr = 0; ctr < TPU_PERF_COUNT; ctr++)
                    perfs.back().push_back(tpusim_perf(s, ctr));
            }
            EXPECT_EQ(cycles[0], cycles[1]) << "program " << i << " at N=" << c.n;
            EXPECT_EQ(mems[0], mems[1]) << "program " << i;
            EXPECT_EQ(perfs[0], perfs[1]) << "program " << i;
            EXPECT_EQ(tpusim_mem_stall(chip.s, 0), 0u);
            prog_free(&prog);
        }
    }
    if (!compared)
        GTEST_SKIP() << "no N with both a lone core and a one-core chip built";
}

} // namespace

// test_golden.cpp - the golden model (docs/isa.md) running whole programs: GEMMs against the
// naive reference, random programs (valid ones run to HALT, injected errors stop exactly there);
// and tpusim_verify and tpusim_compare on the device. Instruction by instruction:
// test_golden_insns.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/support/golden_test.h"
#include "tests/support/progs.h"

namespace
{

using namespace golden_test;

// ------------------------------------------------------------------------ GEMM --

// Parameters that give both in-range and saturated int8 outputs, with junk above shift bit 5.
std::vector<int32_t> random_params(tpu_rng *r, uint32_t n)
{
    std::vector<int32_t> p(3 * n);
    for (uint32_t j = 0; j < n; j++) {
        p[j] = rng_chance(r, 10) ? (rng_chance(r, 50) ? INT32_MAX : INT32_MIN)
                                 : (int32_t)rng_range(r, -100000, 100000);
        p[n + j] = rng_chance(r, 10) ? (int32_t)rng_range(r, INT32_MIN, INT32_MAX)
                                     : (int32_t)rng_range(r, -70000, 70000);
        const uint32_t s = rng_chance(r, 25) ? rng_below(r, 64) : 8 + rng_below(r, 16);
        p[2 * n + j] = (int32_t)(s | (rng_chance(r, 20) ? rng_below(r, 1u << 25) << 6 : 0));
    }
    return p;
}

// Runs d on a golden model of cfg (mem_size set here) with the given inputs and compares C with
// the reference.
void check_gemm(tpusim_hwcfg cfg, gemm_desc d, const std::vector<uint8_t> &a,
                const std::vector<int8_t> &b, const std::vector<int32_t> &params)
{
    const uint64_t csize = d.out_int8 ? 1 : 4;
    cfg.mem_size = std::max({(uint64_t)d.a + a.size(), (uint64_t)d.b + b.size(),
                             (uint64_t)d.c + (uint64_t)d.m * d.n * csize,
                             (uint64_t)d.params + 4 * params.size()});
    Golden m(cfg.array_n, cfg.ub_rows, cfg.acc_rows, cfg.wfifo_tiles, cfg.mem_size);
    memcpy(m.mem() + d.a, a.data(), a.size());
    memcpy(m.mem() + d.b, b.data(), b.size());
    for (size_t i = 0; i < params.size(); i++)
        m.put32(d.params + 4 * i, (uint32_t)params[i]);

    tpu_prog p = {};
    ASSERT_EQ(gemm_program(&p, &cfg, &d), 0);
    size_t executed = 0;
    const int code = tpusim_golden_run(m.g, p.insns, p.n, &executed);
    const size_t n_insns = p.n;
    prog_free(&p);
    ASSERT_EQ(code, TPU_FAULT_NONE) << tpusim_fault_name((uint32_t)code) << " at " << executed;
    ASSERT_EQ(executed, n_insns - 1);

    std::vector<int32_t> ref32(d.out_int8 ? 0 : (size_t)d.m * d.n);
    std::vector<int8_t> ref8(d.out_int8 ? (size_t)d.m * d.n : 0);
    gemm_reference(&d, a.data(), b.data(), params.data(),
                   d.out_int8 ? (void *)ref8.data() : (void *)ref32.data());
    for (uint32_t i = 0; i < d.m; i++)
        for (uint32_t j = 0; j < d.n; j++) {
            const size_t k = (size_t)i * d.n + j;
            const int32_t want = d.out_int8 ? ref8[k] : ref32[k];
            const int32_t got = d.out_int8 ? (int8_t)m.mem()[d.c + k] : m.get32(d.c + 4 * k);
            ASSERT_EQ(got, want) << "C[" << i << "][" << j << "] of " << d.m << "x" << d.k << "x"
                                 << d.n << " on N=" << cfg.array_n
                                 << (d.out_int8 ? " int8" : " int32") << (d.bias ? " bias" : "")
                                 << (d.relu ? " relu" : "") << (d.unsigned_a ? " unsigned" : "");
        }
}

// Random int8 inputs with extremes, laid out contiguously from byte 64.
void check_random_gemm(const tpusim_hwcfg &cfg, gemm_desc d, tpu_rng *r)
{
    gemm_layout(&d, 64);
    std::vector<uint8_t> a((size_t)d.m * d.k);
    std::vector<int8_t> b((size_t)d.k * d.n);
    if (d.unsigned_a)
        rng_fill(r, a.data(), a.size());
    else
        rng_fill_int8(r, (int8_t *)a.data(), a.size());
    rng_fill_int8(r, b.data(), b.size());
    check_gemm(cfg, d, a, b, random_params(r, d.n));
}

TEST(GoldenGemm, ShapesAndVariants)
{
    tpu_rng r = {42};
    for (uint32_t n : {4u, 8u, 16u}) {
        // Small UB and ACC so that the larger M values are split into chunks.
        const tpusim_hwcfg cfg = {n, 2 * n + 3, n + 2, 2, 32, 0};
        const uint32_t dims[] = {1, 2, n - 1, n, n + 1, 3 * n + 5};
        for (uint32_t m : dims)
            for (uint32_t k : dims)
                for (uint32_t nn : dims)
                    for (int v = 0; v < 16; v++) {
                        gemm_desc d = {};
                        d.m = m;
                        d.k = k;
                        d.n = nn;
                        d.bias = v & 1;
                        d.relu = v >> 1 & 1;
                        d.out_int8 = v >> 2 & 1;
                        d.unsigned_a = v >> 3 & 1;
                        check_random_gemm(cfg, d, &r);
                        if (HasFatalFailure())
                            return;
                    }
    }
}

TEST(GoldenGemm, ChunksWhenUbOrAccIsTheLimit)
{
    tpu_rng r = {7};
    for (const tpusim_hwcfg &cfg :
         {tpusim_hwcfg{8, 5, 9, 1, 32, 0}, tpusim_hwcfg{8, 9, 5, 4, 32, 0},
          tpusim_hwcfg{4, 1, 1, 1, 32, 0}}) {
        for (int v = 0; v < 4; v++) {
            gemm_desc d = {};
            d.m = 100;
            d.k = 21;
            d.n = 19;
            d.bias = v & 1;
            d.out_int8 = v >> 1;
            check_random_gemm(cfg, d, &r);
            ASSERT_FALSE(HasFatalFailure());
        }
    }
}

TEST(GoldenGemm, ExtremesOverLongKWrap)
{
    // -128 x -128 = 16384 per step: K = 140000 passes 2^31 and wraps, as the accumulators do.
    const uint32_t K = 140000;
    const int32_t wrapped = (int32_t)(uint32_t)((uint64_t)K * 16384u);
    ASSERT_LT(wrapped, 0);
    for (uint32_t n : {4u, 16u}) {
        const tpusim_hwcfg cfg = {n, 8, 8, 2, 32, 0};
        gemm_desc d = {};
        d.m = 2;
        d.k = K;
        d.n = n + 1;
        gemm_layout(&d, 0);
        std::vector<uint8_t> a((size_t)d.m * K, 0x80);
        std::vector<int8_t> b((size_t)K * d.n, -128);
        check_gemm(cfg, d, a, b, std::vector<int32_t>(3 * d.n));
        ASSERT_FALSE(HasFatalFailure());

        // and the value itself, independently of the reference
        Golden m(n, 8, 8, 2, (uint64_t)d.c + 4ull * d.m * d.n);
        memcpy(m.mem() + d.a, a.data(), a.size());
        memcpy(m.mem() + d.b, b.data(), b.size());
        tpu_prog p = {};
        ASSERT_EQ(gemm_program(&p, &m.cfg, &d), 0);
        EXPECT_EQ(tpusim_golden_run(m.g, p.insns, p.n, nullptr), TPU_FAULT_NONE);
        prog_free(&p);
        for (uint32_t k = 0; k < d.m * d.n; k++)
            ASSERT_EQ(m.get32(d.c + 4 * k), wrapped) << k;
    }
}

TEST(GoldenGemm, UnsignedExtremes)
{
    // 255 x -128 over K = 3N+5: only UNSIGNED reads 0xff as 255.
    for (uint32_t n : {4u, 8u, 16u}) {
        const tpusim_hwcfg cfg = {n, 64, 64, 2, 32, 0};
        gemm_desc d = {};
        d.m = n + 1;
        d.k = 3 * n + 5;
        d.n = n - 1;
        d.unsigned_a = 1;
        gemm_layout(&d, 0);
        std::vector<uint8_t> a((size_t)d.m * d.k, 0xff);
        std::vector<int8_t> b((size_t)d.k * d.n, -128);
        check_gemm(cfg, d, a, b, std::vector<int32_t>(3 * d.n));
        ASSERT_FALSE(HasFatalFailure());
    }
}

TEST(GoldenGemm, OddAddresses)
{
    tpu_rng r = {3};
    const tpusim_hwcfg cfg = {8, 16, 16, 2, 32, 0};
    gemm_desc d = {};
    d.m = 13;
    d.k = 11;
    d.n = 17;
    d.bias = 1;
    d.relu = 1;
    d.a = 1;
    d.b = d.a + d.m * d.k + 3;
    d.c = d.b + d.k * d.n + 5;
    d.params = d.c + 4 * d.m * d.n + 7;
    std::vector<uint8_t> a((size_t)d.m * d.k);
    std::vector<int8_t> b((size_t)d.k * d.n);
    rng_fill(&r, a.data(), a.size());
    rng_fill(&r, b.data(), b.size());
    check_gemm(cfg, d, a, b, random_params(&r, d.n));
}

TEST(GoldenGemm, Large)
{
    tpu_rng r = {11};
    gemm_desc d = {};
    d.m = d.k = d.n = 256;
    d.out_int8 = 1;
    d.bias = 1;
    check_random_gemm(tpusim_hwcfg{16, 16384, 4096, 4, 32, 0}, d, &r);
}

TEST(GoldenGemm, ProgramRejectsWhatFieldsCannotHold)
{
    const tpusim_hwcfg cfg = {8, 16, 16, 2, 32, 1u << 20};
    tpu_prog p = {};
    gemm_desc d = {};
    d.m = d.k = d.n = 4;
    EXPECT_EQ(gemm_program(&p, &cfg, &d), 0);
    gemm_desc zero = d;
    zero.k = 0;
    EXPECT_EQ(gemm_program(&p, &cfg, &zero), -1);
    gemm_desc high = d;
    high.c = 0xfffffff0u; // 4x4 int32 does not fit below 2^32
    EXPECT_EQ(gemm_program(&p, &cfg, &high), -1);
    prog_free(&p);
}

// ------------------------------------------------------------- random programs --

TEST(GoldenRandom, ValidProgramsRunToHalt)
{
    for (uint32_t n : {4u, 8u, 16u}) {
        for (uint64_t seed = 0; seed < 100; seed++) {
            Golden m(n, 64 + (uint32_t)seed, 48, 1 + seed % 4, 4096);
            tpu_rng r = {seed * 1000 + n};
            fill_random(m, &r);
            tpu_prog p = {};
            ASSERT_EQ(random_program(&p, &r, &m.cfg, 300, TPU_FAULT_NONE), -1);
            ASSERT_EQ(p.n, 301u);
            unsigned seen = 0;
            for (size_t i = 0; i < p.n; i++)
                seen |= 1u << tpusim_decode(&p.insns[i]).op;
            EXPECT_EQ(seen, 0x7feu) << "every opcode (0x01..0x0A) appears";
            size_t executed = 0;
            const int code = tpusim_golden_run(m.g, p.insns, p.n, &executed);
            char dis[128];
            ASSERT_EQ(code, TPU_FAULT_NONE)
                << "seed " << seed << " N " << n << ": " << tpusim_fault_name((uint32_t)code)
                << " at " << executed << " "
                << tpusim_disasm(&p.insns[executed < p.n ? executed : 0], dis, sizeof dis);
            EXPECT_EQ(executed, p.n - 1);
            prog_free(&p);
        }
    }
}

TEST(GoldenRandom, InjectedErrorsStopExactlyThere)
{
    const int codes[] = {TPU_FAULT_ILLEGAL_OPCODE, TPU_FAULT_BAD_OPERAND, TPU_FAULT_UB_RANGE,
                         TPU_FAULT_ACC_RANGE,      TPU_FAULT_MEM_RANGE,   TPU_FAULT_WFIFO_EMPTY,
                         TPU_FAULT_WFIFO_FULL};
    for (uint32_t n : {4u, 8u, 16u})
        for (int code : codes)
            for (uint64_t seed = 0; seed < 60; seed++) {
                Golden m(n, 40, 36, 1 + seed % 4, 3000);
                Golden prefix(n, 40, 36, 1 + seed % 4, 3000);
                tpu_rng r = {seed + 77 * (uint64_t)code};
                fill_random(m, &r);
                memcpy(prefix.mem(), m.mem(), m.cfg.mem_size);
                for (uint32_t i = 0; i < 40; i++)
                    memcpy(prefix.ub(i), m.ub(i), n);
                for (uint32_t i = 0; i < 36; i++)
                    memcpy(prefix.acc(i), m.acc(i), 4 * n);
                tpu_prog p = {};
                const long bad = random_program(&p, &r, &m.cfg, seed % 40, code);
                ASSERT_GE(bad, 0);
                size_t executed = 0;
                char dis[128];
                ASSERT_EQ(tpusim_golden_run(m.g, p.insns, p.n, &executed), code)
                    << "seed " << seed << " N " << n << " injected at " << bad << ": "
                    << tpusim_disasm(&p.insns[bad], dis, sizeof dis);
                ASSERT_EQ(executed, (size_t)bad);
                // the state is exactly that of the instructions before it
                size_t prefix_executed = 0;
                ASSERT_EQ(tpusim_golden_run(prefix.g, p.insns, (size_t)bad, &prefix_executed),
                          TPU_FAULT_NONE);
                ASSERT_EQ(prefix_executed, (size_t)bad);
                EXPECT_TRUE(State(m) == State(prefix));
                prog_free(&p);
            }
}

// ------------------------------------------------------------ verify on a device --

// The smallest array built into the library, with a small memory.
struct Device {
    tpusim *sim = nullptr;
    Device()
    {
        uint32_t sizes[16];
        if (tpusim_arrays(sizes, 16) < 1)
            return;
        tpusim_config c;
        tpusim_config_default(&c);
        c.array_n = sizes[0];
        c.mem_size = 1u << 16;
        char err[256];
        sim = tpusim_create(&c, err, sizeof err);
        EXPECT_NE(sim, nullptr) << err;
    }
    ~Device() { tpusim_destroy(sim); }
    Device(const Device &) = delete;
    Device &operator=(const Device &) = delete;
};

TEST(Verify, AgreesOnAGemm)
{
    Device d;
    if (!d.sim)
        GTEST_SKIP() << "no device model built";
    tpusim_hwcfg cfg;
    tpusim_read_hwcfg(d.sim, &cfg);
    gemm_desc g = {};
    g.m = 2 * cfg.array_n + 1;
    g.k = cfg.array_n + 3;
    g.n = cfg.array_n + 1;
    g.out_int8 = 1;
    g.bias = 1;
    g.relu = 1;
    ASSERT_LE(gemm_layout(&g, 0), cfg.mem_size);
    tpu_rng r = {23};
    std::vector<uint8_t> bytes(g.params);
    rng_fill(&r, bytes.data(), bytes.size());
    ASSERT_EQ(tpusim_mem_write(d.sim, 0, bytes.data(), bytes.size()), 0);
    const std::vector<int32_t> params = random_params(&r, g.n);
    ASSERT_EQ(tpusim_mem_write(d.sim, g.params, params.data(), 4 * params.size()), 0);
    tpu_prog p = {};
    ASSERT_EQ(gemm_program(&p, &cfg, &g), 0);
    char report[1024];
    EXPECT_EQ(tpusim_verify(d.sim, p.insns, p.n, 10000000, report, sizeof report), TPUSIM_AGREE)
        << report;
    EXPECT_EQ(std::string(report), "agree: halted at insn " + std::to_string(p.n - 1));
    prog_free(&p);
}

TEST(Verify, HungWithoutHalt)
{
    Device d;
    if (!d.sim)
        GTEST_SKIP() << "no device model built";
    const tpusim_insn sync = tpusim_encode(TPU_OP_SYNC, 0, 0, 0, 0, 0, 0);
    char report[512];
    EXPECT_EQ(tpusim_verify(d.sim, &sync, 1, 2000, report, sizeof report), TPUSIM_HUNG);
    EXPECT_NE(std::string(report).find("HUNG"), std::string::npos) << report;
    EXPECT_NE(std::string(report).find("no HALT in 1 instructions"), std::string::npos) << report;
}

TEST(Verify, NamesTheWriterOfAStaleResult)
{
    // The golden model starts from reset parameters; a device that kept a bias from an earlier
    // program writes something else (or, if it ran nothing, keeps 0xee) at 0x800.
    Device d;
    if (!d.sim)
        GTEST_SKIP() << "no device model built";
    tpusim_hwcfg cfg;
    tpusim_read_hwcfg(d.sim, &cfg);
    std::vector<int32_t> params(3 * cfg.array_n, 0x01010101);
    ASSERT_EQ(tpusim_mem_write(d.sim, 0x400, params.data(), 4 * params.size()), 0);
    const tpusim_insn first[] = {
        tpusim_encode(TPU_OP_RD_PARAMS, 0, 3, 0x400, 0, 4 * cfg.array_n, 4 * cfg.array_n),
        tpusim_encode(TPU_OP_HALT, 0, 0, 0, 0, 0, 0)};
    ASSERT_EQ(tpusim_run_program(d.sim, first, 2, 100000), TPUSIM_HALTED);
    std::vector<uint8_t> ee(4 * cfg.array_n, 0xee);
    ASSERT_EQ(tpusim_mem_write(d.sim, 0x800, ee.data(), ee.size()), 0);
    const tpusim_insn second[] = {tpusim_encode(TPU_OP_WR_HOST, TPU_F_SRC_ACC | TPU_F_BIAS, 1,
                                                0x800, cfg.acc_rows - 1, 4 * cfg.array_n, 0),
                                  tpusim_encode(TPU_OP_HALT, 0, 0, 0, 0, 0, 0)};
    char report[1024];
    ASSERT_EQ(tpusim_verify(d.sim, second, 2, 100000, report, sizeof report), TPUSIM_DIFFER);
    const std::string text(report);
    const std::string want = "earliest last writer of a differing location: insn 0 "
                             "`WR_HOST.SRC_ACC.BIAS rows=1 acc=" +
                             std::to_string(cfg.acc_rows - 1) +
                             " mem=0x800 stride=0 len=" + std::to_string(4 * cfg.array_n) +
                             "`: memory at 0x800: expected 0x00, device 0x";
    EXPECT_NE(text.find(want), std::string::npos) << text;
}

// tpusim_compare on states set by hand: memory where the instructions wrote and in the extra
// ranges only, each difference attributed to the last instruction before n that wrote it.
TEST(Verify, CompareAttributesWhatTheInstructionsWrote)
{
    Device d;
    if (!d.sim)
        GTEST_SKIP() << "no device model built";
    tpusim_hwcfg cfg;
    tpusim_read_hwcfg(d.sim, &cfg);
    tpusim_golden *g = tpusim_golden_create(&cfg); // memory zero, as the fresh device's
    ASSERT_NE(g, nullptr);
    const tpusim_insn prog[] = {tpusim_encode(TPU_OP_WR_HOST, 0, 1, 0x100, 0, 8, 0),
                                tpusim_encode(TPU_OP_WR_HOST, 0, 2, 0x104, 0, 8, 8)};
    const uint8_t one = 1;
    for (uint64_t a : {0x102, 0x106, 0x200, 0x300})
        ASSERT_EQ(tpusim_mem_write(d.sim, a, &one, 1), 0);
    const tpusim_range extra = {0x300, 0x10};
    tpusim_compare_spec spec = {g, prog, 2, 0, &extra, 1, 0};
    char report[512];
    uint64_t addr = 0;
    EXPECT_EQ(tpusim_compare(d.sim, &spec, &addr, report, sizeof report), 3);
    EXPECT_EQ(std::string(report),
              "3 locations differ (memory 3); earliest last writer of a differing location: insn 0 "
              "`WR_HOST rows=1 ub=0 mem=0x100 stride=0 len=8`: memory at 0x102: expected 0x00, "
              "device 0x01; 1 written by no instruction, first: memory at 0x300: expected 0x00, "
              "device 0x01");
    EXPECT_EQ(addr, 0x102u);

    // 0x106: both wrote it, the second last.
    const uint8_t zero = 0;
    ASSERT_EQ(tpusim_mem_write(d.sim, 0x102, &zero, 1), 0);
    spec.nranges = 0;
    EXPECT_EQ(tpusim_compare(d.sim, &spec, &addr, report, sizeof report), 1);
    EXPECT_NE(std::string(report).find("insn 1 `WR_HOST rows=2 ub=0 mem=0x104 stride=8 len=8`: "
                                       "memory at 0x106"),
              std::string::npos)
        << report;
    // Had only the first run, it would be the last writer.
    spec.n = 1;
    EXPECT_EQ(tpusim_compare(d.sim, &spec, &addr, report, sizeof report), 1);
    EXPECT_NE(std::string(report).find("insn 0 `WR_HOST rows=1"), std::string::npos) << report;
    EXPECT_EQ(addr, 0x106u);

    // All of memory: 0x200 too, written by none; nothing at all once the states agree.
    spec.all_memory = 1;
    EXPECT_EQ(tpusim_compare(d.sim, &spec, &addr, report, sizeof report), 3);
    EXPECT_NE(std::string(report).find("; 2 written by no instruction, first: memory at 0x200"),
              std::string::npos)
        << report;
    for (uint64_t a : {0x106, 0x200, 0x300})
        tpusim_golden_mem(g)[a] = 1;
    EXPECT_EQ(tpusim_compare(d.sim, &spec, &addr, report, sizeof report), 0);
    EXPECT_EQ(std::string(report), "");
    EXPECT_EQ(addr, UINT64_MAX);
    tpusim_golden_destroy(g);
}

} // namespace

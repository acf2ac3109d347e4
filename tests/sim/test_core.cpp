// The verilated core against the golden model: GEMMs through raw instruction streams (int8 and
// bf16, the latter also against a plain C reference of the rule), random programs, and the error
// paths. Every comparison is tpusim_verify: final memory, UB, ACC, error code and ERROR_PC, bit
// for bit.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "sim/fp.h"
#include "sim/tpusim.h"
#include "tests/support/fp_values.h"
#include "tests/support/progs.h"

namespace
{

constexpr uint64_t kMemSize = 1u << 20;
constexpr uint64_t kMaxCycles = 20'000'000;

std::vector<uint32_t> built_arrays()
{
    uint32_t sizes[16];
    int n = tpusim_arrays(sizes, 16);
    std::vector<uint32_t> out;
    for (int i = 0; i < n; i++)
        if (sizes[i] <= 16)
            out.push_back(sizes[i]); // the 32 model is for benchmarks
    return out;
}

struct Sim {
    tpusim *s = nullptr;
    tpusim_hwcfg hw{};
    explicit Sim(uint32_t n, uint32_t latency = 20, uint32_t bw = 32)
    {
        tpusim_config cfg;
        tpusim_config_default(&cfg);
        cfg.array_n = n;
        cfg.mem_size = kMemSize;
        cfg.mem_latency = latency;
        cfg.mem_bytes_per_cycle = bw;
        char err[256];
        s = tpusim_create(&cfg, err, sizeof err);
        EXPECT_NE(s, nullptr) << err;
        if (s)
            tpusim_read_hwcfg(s, &hw);
    }
    ~Sim() { tpusim_destroy(s); }
    Sim(const Sim &) = delete;
    Sim &operator=(const Sim &) = delete;
};

// Runs prog on the device and the golden model and expects them to agree.
void expect_agree(tpusim *s, const tpu_prog &p)
{
    char report[2048];
    int v = tpusim_verify(s, p.insns, p.n, kMaxCycles, report, sizeof report);
    EXPECT_EQ(v, TPUSIM_AGREE) << report;
}

void run_gemm(uint32_t n_arr, gemm_desc d, uint64_t seed, bool extremes = false)
{
    Sim sim(n_arr);
    ASSERT_NE(sim.s, nullptr);
    uint64_t end = gemm_layout(&d, 256);
    ASSERT_LE(end, kMemSize);
    tpu_rng r{seed};
    std::vector<uint8_t> img(end);
    if (extremes) {
        for (auto &b : img)
            b = 0x80; // -128 everywhere
    } else {
        rng_fill_int8(&r, reinterpret_cast<int8_t *>(img.data()), img.size());
    }
    if (d.bias || d.out_int8) {
        auto *prm = reinterpret_cast<int32_t *>(img.data() + d.params);
        for (uint32_t j = 0; j < d.n; j++) {
            prm[j] = (int32_t)rng_range(&r, -100000, 100000);
            prm[d.n + j] = (int32_t)rng_range(&r, 1, INT32_MAX);
            prm[2 * d.n + j] = (int32_t)rng_range(&r, 20, 40);
        }
    }
    ASSERT_EQ(tpusim_mem_write(sim.s, 0, img.data(), img.size()), 0);
    tpu_prog p{};
    ASSERT_EQ(gemm_program(&p, &sim.hw, &d), 0);
    expect_agree(sim.s, p);

    // And against the plain C reference, so a shared misunderstanding cannot hide.
    size_t out_bytes = (size_t)d.m * d.n * (d.out_int8 ? 1 : 4);
    std::vector<uint8_t> want(out_bytes), got(out_bytes);
    gemm_reference(&d, img.data() + d.a, reinterpret_cast<int8_t *>(img.data() + d.b),
                   reinterpret_cast<int32_t *>(img.data() + d.params), want.data());
    ASSERT_EQ(tpusim_mem_read(sim.s, d.c, got.data(), out_bytes), 0);
    EXPECT_EQ(want, got) << "GEMM " << d.m << "x" << d.k << "x" << d.n << " on N=" << n_arr;
    prog_free(&p);
}

class Core : public ::testing::TestWithParam<uint32_t>
{
};

TEST_P(Core, GemmShapes)
{
    uint32_t n = GetParam();
    const uint32_t dims[] = {1, 2, n - 1, n, n + 1, 3 * n + 5};
    uint64_t seed = 1;
    for (uint32_t m : dims)
        for (uint32_t k : dims)
            for (uint32_t nn : {1u, n, 2 * n + 3}) {
                if (m == 0 || k == 0)
                    continue;
                gemm_desc d{};
                d.m = m, d.k = k, d.n = nn;
                run_gemm(n, d, seed++);
            }
}

TEST_P(Core, GemmKOneAndMOne)
{
    uint32_t n = GetParam();
    gemm_desc d{};
    d.m = 5 * n + 1, d.k = 1, d.n = 2 * n + 1;
    run_gemm(n, d, 11);
    d.m = 1, d.k = 4 * n + 3, d.n = n + 2;
    run_gemm(n, d, 12);
}

TEST_P(Core, GemmInt8ExtremesOverLongK)
{
    uint32_t n = GetParam();
    gemm_desc d{};
    d.m = n + 3, d.k = 40 * n + 7, d.n = n + 1; // -128 x -128 summed over long K, many K tiles
    run_gemm(n, d, 21, true);
}

TEST_P(Core, GemmEpilogues)
{
    uint32_t n = GetParam();
    uint64_t seed = 31;
    for (int bias = 0; bias < 2; bias++)
        for (int relu = 0; relu < 2; relu++)
            for (int out8 = 0; out8 < 2; out8++)
                for (int uns = 0; uns < 2; uns++) {
                    gemm_desc d{};
                    d.m = 2 * n + 1, d.k = 3 * n - 1, d.n = n + 3;
                    d.bias = bias, d.relu = relu, d.out_int8 = out8, d.unsigned_a = uns;
                    run_gemm(n, d, seed++);
                }
}

// Requantization edges: ties both ways and saturation, set up through a single-tile GEMM whose
// accumulators hold chosen values (A = identity rows, B = the values).
TEST_P(Core, RequantRoundingAndSaturation)
{
    uint32_t n = GetParam();
    Sim sim(n);
    ASSERT_NE(sim.s, nullptr);
    const uint32_t A = 0x1000, B = 0x2000, P = 0x3000, C = 0x4000;
    std::vector<int8_t> a(n * n, 0), b(n * n);
    for (uint32_t i = 0; i < n; i++)
        a[i * n + i] = 1;
    const int8_t vals[] = {-128, -127, -3, -2, -1, 0, 1, 2, 3, 5, 126, 127, -5, 7, -7, 64};
    for (uint32_t i = 0; i < n * n; i++)
        b[i] = vals[i % 16];
    std::vector<int32_t> prm(3 * n);
    for (uint32_t j = 0; j < n; j++) {
        prm[j] = (int32_t)(j % 3) - 1;     // bias -1, 0, 1
        prm[n + j] = (j % 2) ? 3 : -5;     // odd and negative multipliers
        prm[2 * n + j] = (int32_t)(j % 4); // shift 0..3: exact ties at shift 1
    }
    tpusim_mem_write(sim.s, A, a.data(), a.size());
    tpusim_mem_write(sim.s, B, b.data(), b.size());
    tpusim_mem_write(sim.s, P, prm.data(), prm.size() * 4);
    tpu_prog p{};
    prog_emit(&p, TPU_OP_RD_WEIGHT, 0, n, B, 0, n, n);
    prog_emit(&p, TPU_OP_RD_HOST, 0, n, A, 0, n, n);
    prog_emit(&p, TPU_OP_RD_PARAMS, 0, 3, P, 0, 4 * n, 4 * n);
    prog_emit(&p, TPU_OP_MATMUL, TPU_F_LOAD, n, 0, 0, 0, 0);
    prog_emit(&p, TPU_OP_ACTIVATE, TPU_F_BIAS, n, n, 0, 0, 0);
    prog_emit(&p, TPU_OP_WR_HOST, 0, n, C, n, n, n);
    prog_emit(&p, TPU_OP_ACTIVATE, TPU_F_BIAS | TPU_F_RELU, n, 2 * n, 0, 0, 0);
    prog_emit(&p, TPU_OP_WR_HOST, 0, n, C + n * n, 2 * n, n, n);
    prog_emit(&p, TPU_OP_HALT, 0, 0, 0, 0, 0, 0);
    expect_agree(sim.s, p);
    prog_free(&p);
}

TEST_P(Core, RandomPrograms)
{
    uint32_t n = GetParam();
    const char *env = std::getenv("TPU_SOAK_PROGRAMS");
    // 70 per array size: 210 in CI over N = 4, 8, 16; make soak runs thousands.
    long count = env ? std::atol(env) : 70;
    Sim sim(n, 7, 16);
    ASSERT_NE(sim.s, nullptr);
    for (long i = 0; i < count; i++) {
        tpu_rng r{0x5eed0000u + 1000u * n + (uint64_t)i};
        std::vector<uint8_t> img(4096 + 64 * n);
        rng_fill_fp(&r, img.data(), img.size()); // int8, and bf16 / fp32 edge values
        tpusim_mem_write(sim.s, 0, img.data(), img.size());
        tpu_prog p{};
        random_program(&p, &r, &sim.hw, 20 + rng_below(&r, 60), TPU_FAULT_NONE);
        char report[2048];
        int v = tpusim_verify(sim.s, p.insns, p.n, kMaxCycles, report, sizeof report);
        ASSERT_EQ(v, TPUSIM_AGREE) << "program " << i << ": " << report;
        prog_free(&p);
        tpusim_reset(sim.s);
    }
}

TEST_P(Core, RandomProgramsWithInjectedErrors)
{
    uint32_t n = GetParam();
    Sim sim(n, 7, 16);
    ASSERT_NE(sim.s, nullptr);
    const int kinds[] = {TPU_FAULT_ILLEGAL_OPCODE, TPU_FAULT_BAD_OPERAND, TPU_FAULT_UB_RANGE,
                         TPU_FAULT_ACC_RANGE,      TPU_FAULT_MEM_RANGE,   TPU_FAULT_WFIFO_EMPTY,
                         TPU_FAULT_WFIFO_FULL};
    for (int kind : kinds)
        for (int rep = 0; rep < 3; rep++) {
            tpu_rng r{0xe770u + 100u * (uint64_t)kind + (uint64_t)rep + 7u * n};
            tpu_prog p{};
            long at = random_program(&p, &r, &sim.hw, 30, kind);
            ASSERT_GE(at, 0);
            char report[2048];
            int v = tpusim_verify(sim.s, p.insns, p.n, kMaxCycles, report, sizeof report);
            ASSERT_EQ(v, TPUSIM_AGREE) << tpusim_fault_name(kind) << ": " << report;
            EXPECT_EQ(tpusim_reg_read(sim.s, TPU_CSR_ERROR_CODE), (uint32_t)kind);
            EXPECT_EQ(tpusim_reg_read(sim.s, TPU_CSR_ERROR_PC), (uint32_t)at);
            prog_free(&p);
            tpusim_reset(sim.s);
        }
}

// A device stopped by an error, or by the cycle limit, works again after reset.
TEST_P(Core, ErrorPathsLeaveTheModelUsable)
{
    uint32_t n = GetParam();
    Sim sim(n);
    ASSERT_NE(sim.s, nullptr);

    tpusim_insn bad[2] = {{{0x2au, 0, 0, 0}}, tpusim_encode(TPU_OP_HALT, 0, 0, 0, 0, 0, 0)};
    EXPECT_EQ(tpusim_run_program(sim.s, bad, 2, 10000), TPUSIM_ERROR);
    EXPECT_EQ(tpusim_reg_read(sim.s, TPU_CSR_ERROR_CODE), (uint32_t)TPU_FAULT_ILLEGAL_OPCODE);
    EXPECT_EQ(tpusim_reg_read(sim.s, TPU_CSR_ERROR_PC), 0u);
    EXPECT_TRUE(tpusim_reg_read(sim.s, TPU_CSR_STATUS) & TPU_STATUS_ERROR);
    EXPECT_EQ(tpusim_push(sim.s, &bad[1]), 0) << "a stopped core must refuse instructions";

    tpusim_reset(sim.s);
    tpusim_insn oob[3] = {tpusim_encode(TPU_OP_SYNC, 0, 0, 0, 0, 0, 0),
                          tpusim_encode(TPU_OP_RD_HOST, 0, 2, (uint32_t)kMemSize - n, 0, n, n),
                          tpusim_encode(TPU_OP_HALT, 0, 0, 0, 0, 0, 0)};
    EXPECT_EQ(tpusim_run_program(sim.s, oob, 3, 10000), TPUSIM_ERROR);
    EXPECT_EQ(tpusim_reg_read(sim.s, TPU_CSR_ERROR_CODE), (uint32_t)TPU_FAULT_MEM_RANGE);
    EXPECT_EQ(tpusim_reg_read(sim.s, TPU_CSR_ERROR_PC), 1u);

    tpusim_reset(sim.s);
    tpusim_insn ub[2] = {tpusim_encode(TPU_OP_RD_HOST, 0, 2, 0, sim.hw.ub_rows - 1, n, n),
                         tpusim_encode(TPU_OP_HALT, 0, 0, 0, 0, 0, 0)};
    EXPECT_EQ(tpusim_run_program(sim.s, ub, 2, 10000), TPUSIM_ERROR);
    EXPECT_EQ(tpusim_reg_read(sim.s, TPU_CSR_ERROR_CODE), (uint32_t)TPU_FAULT_UB_RANGE);

    // The cycle limit: a long GEMM with a tiny budget times out, then a reset recovers.
    tpusim_reset(sim.s);
    gemm_desc d{};
    d.m = 8 * n, d.k = 8 * n, d.n = 8 * n;
    gemm_layout(&d, 0);
    tpu_prog p{};
    ASSERT_EQ(gemm_program(&p, &sim.hw, &d), 0);
    EXPECT_EQ(tpusim_run_program(sim.s, p.insns, p.n, 50), TPUSIM_TIMEOUT);
    tpusim_reset(sim.s);
    EXPECT_EQ(tpusim_reg_read(sim.s, TPU_CSR_STATUS), 0u);
    expect_agree(sim.s, p);
    prog_free(&p);
}

// ------------------------------------------------------------------------------ bf16 (ISA 1.3)
// GEMMs of RD_WEIGHT.BF16, MATMUL.BF16 over K tiles, ACTIVATE.BF16 and WR_HOST.SRC_ACC.BF16 with
// bias and ReLU (progs.h's bf16_gemm_program), against the golden model and against the plain C
// reference of docs/isa.md's rule (bf16_gemm_reference, on sim/fp.h).

void put(std::vector<uint8_t> &img, uint64_t at, uint32_t v, unsigned bytes)
{
    for (unsigned k = 0; k < bytes; k++)
        img[at + k] = uint8_t(v >> 8 * k);
}

// d's operands into img (A's padding stays zero) and the reference C.
std::vector<uint32_t> fill_bf16(tpu_rng *r, uint32_t n, const bf16_gemm_desc &d, bool edges,
                                std::vector<uint8_t> &img)
{
    const uint32_t kp = (d.k + n - 1) / n * n;
    for (uint32_t i = 0; i < d.m; i++)
        for (uint32_t kk = 0; kk < d.k; kk++)
            put(img, d.a + 2 * (uint64_t(i) * kp + kk), rng_bf16_op(r, edges ? 25 : 0), 2);
    for (uint64_t e = 0; e < uint64_t(d.k) * d.n; e++)
        put(img, d.b + 2 * e, rng_bf16_op(r, edges ? 25 : 0), 2);
    for (uint32_t j = 0; j < d.n; j++)
        put(img, d.bias + 4 * j,
            edges && rng_chance(r, 25) ? rng_fp32(r) : tpusim_bf16_to_fp32(rng_bf16_mid(r)), 4);
    std::vector<uint32_t> want(size_t(d.m) * d.n);
    bf16_gemm_reference(&d, n, img.data(), want.data());
    return want;
}

// C as the device left it, against the reference.
void expect_bf16_c(tpusim *s, const bf16_gemm_desc &d, const std::vector<uint32_t> &want)
{
    const unsigned bytes = d.out_bf16 ? 2 : 4;
    std::vector<uint8_t> got(size_t(d.m) * d.n * bytes);
    ASSERT_EQ(tpusim_mem_read(s, d.c, got.data(), got.size()), 0);
    for (size_t e = 0; e < want.size(); e++) {
        uint32_t v = 0;
        for (unsigned k = 0; k < bytes; k++)
            v |= uint32_t(got[e * bytes + k]) << 8 * k;
        ASSERT_EQ(v, want[e]) << "C[" << e / d.n << "][" << e % d.n << "]";
    }
}

void run_bf16_gemm(uint32_t n, uint32_t m, uint32_t k, uint32_t cols, bool bias, bool relu,
                   bool out_bf16, bool edges, uint64_t seed)
{
    SCOPED_TRACE("N " + std::to_string(n) + ", " + std::to_string(m) + " x " + std::to_string(k) +
                 " x " + std::to_string(cols) + (bias ? " bias" : "") + (relu ? " relu" : "") +
                 (out_bf16 ? " bf16 out" : " fp32 out") + (edges ? " edges" : ""));
    Sim sim(n);
    ASSERT_NE(sim.s, nullptr);
    bf16_gemm_desc d{};
    d.m = m, d.k = k, d.n = cols, d.bias_on = bias, d.relu = relu, d.out_bf16 = out_bf16;
    std::vector<uint8_t> img(bf16_gemm_layout(&d, n, 256));
    tpu_rng r{seed};
    const std::vector<uint32_t> want = fill_bf16(&r, n, d, edges, img);
    ASSERT_EQ(tpusim_mem_write(sim.s, 0, img.data(), img.size()), 0);
    tpu_prog p{};
    bf16_gemm_program(&p, n, &d, 0, 0);
    prog_emit(&p, TPU_OP_HALT, 0, 0, 0, 0, 0, 0);
    expect_agree(sim.s, p);
    expect_bf16_c(sim.s, d, want);
    prog_free(&p);
}

TEST_P(Core, Bf16GemmShapes)
{
    const uint32_t n = GetParam();
    uint64_t seed = 1;
    for (uint32_t m : {1u, n - 1, 2 * n + 3})
        for (uint32_t k : {1u, n, n + 1, 3 * n + 5})
            for (uint32_t cols : {1u, n, 2 * n + 3})
                run_bf16_gemm(n, m, k, cols, false, false, false, false, seed++);
}

TEST_P(Core, Bf16GemmEdgeValues)
{
    const uint32_t n = GetParam();
    run_bf16_gemm(n, 2 * n + 1, 1, n + 2, false, false, false, true, 101); // K = 1
    run_bf16_gemm(n, n + 3, 4 * n + 1, 2 * n + 1, false, false, false, true, 102);
    run_bf16_gemm(n, 3, 2 * n - 1, 1, false, false, true, true, 103);
}

TEST_P(Core, Bf16GemmEpilogues)
{
    const uint32_t n = GetParam();
    uint64_t seed = 201;
    for (int bias = 0; bias < 2; bias++)
        for (int relu = 0; relu < 2; relu++)
            for (int out = 0; out < 2; out++)
                run_bf16_gemm(n, n + 2, 2 * n + 1, n + 3, bias, relu, out, true, seed++);
}

// An int8 GEMM and a bf16 one interleaved instruction by instruction on one weight FIFO and one
// MXU stream (the bf16 one in the upper halves of UB and ACC, without bias: the two would share
// the parameter registers), each against its reference, the whole against the golden model.
TEST_P(Core, Int8AndBf16BackToBack)
{
    const uint32_t n = GetParam();
    Sim sim(n);
    ASSERT_NE(sim.s, nullptr);
    gemm_desc d8{};
    d8.m = n + 1, d8.k = 2 * n + 3, d8.n = n + 2, d8.bias = 1, d8.relu = 1;
    const uint32_t base = uint32_t(gemm_layout(&d8, 256));
    bf16_gemm_desc d{};
    d.m = n + 3, d.k = 2 * n + 3, d.n = n + 2, d.relu = 1;
    std::vector<uint8_t> img(bf16_gemm_layout(&d, n, base));
    tpu_rng r{77};
    rng_fill_int8(&r, reinterpret_cast<int8_t *>(img.data()), base);
    const std::vector<uint32_t> want = fill_bf16(&r, n, d, true, img);
    ASSERT_EQ(tpusim_mem_write(sim.s, 0, img.data(), img.size()), 0);

    tpu_prog p8{}, pb{}, p{};
    ASSERT_EQ(gemm_program(&p8, &sim.hw, &d8), 0);
    p8.n--; // its HALT
    bf16_gemm_program(&pb, n, &d, sim.hw.ub_rows / 2, sim.hw.acc_rows / 2);
    for (size_t i = 0; i < p8.n || i < pb.n; i++) {
        if (i < p8.n)
            prog_push(&p, p8.insns[i]);
        if (i < pb.n)
            prog_push(&p, pb.insns[i]);
    }
    prog_emit(&p, TPU_OP_HALT, 0, 0, 0, 0, 0, 0);
    expect_agree(sim.s, p);
    expect_bf16_c(sim.s, d, want);
    std::vector<int32_t> want8(size_t(d8.m) * d8.n), got8(want8.size());
    gemm_reference(&d8, img.data() + d8.a, reinterpret_cast<int8_t *>(img.data() + d8.b),
                   reinterpret_cast<int32_t *>(img.data() + d8.params), want8.data());
    ASSERT_EQ(tpusim_mem_read(sim.s, d8.c, got8.data(), got8.size() * 4), 0);
    EXPECT_EQ(want8, got8);
    prog_free(&p8);
    prog_free(&pb);
    prog_free(&p);
}

// RD_ACC (ISA 1.4) on fp32 edge values in int32 and fp32, short rows, stride 0, and against
// MATMULs on its ACC rows both ways, with a fast and a slow memory: memory, UB and ACC as the
// golden model's.
TEST_P(Core, RdAccEdgeValues)
{
    const uint32_t n = GetParam();
    for (uint32_t latency : {1u, 37u}) {
        Sim sim(n, latency, 4);
        ASSERT_NE(sim.s, nullptr);
        std::vector<uint8_t> img(rdacc_bytes(n));
        tpu_rng r{0xacc0 + n};
        tpu_prog p{};
        rdacc_program(&p, n, img.data(), 0, 7, &r);
        prog_emit(&p, TPU_OP_HALT, 0, 0, 0, 0, 0, 0);
        ASSERT_EQ(tpusim_mem_write(sim.s, 0, img.data(), img.size()), 0);
        expect_agree(sim.s, p);
        EXPECT_EQ(tpusim_reg_read(sim.s, TPU_CSR_STATUS) & TPU_STATUS_ERROR, 0u);
        prog_free(&p);
    }
}

std::string name_of(const ::testing::TestParamInfo<uint32_t> &info)
{
    return "N" + std::to_string(info.param);
}

INSTANTIATE_TEST_SUITE_P(Arrays, Core, ::testing::ValuesIn(built_arrays()), name_of);
// A build with only large arrays (make ARRAY=32) has nothing for these.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Core);

} // namespace

// test_golden_rdacc.cpp - the golden model's RD_ACC (ISA 1.4, docs/isa.md): memory rows into ACC
// rows or added to them, int32 (wrapping) and fp32 (BF16: sim/fp.h's fp32_add, on edge values),
// short rows, strides 0 and overlapping, its checks and its disassembly.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "sim/fp.h"
#include "tests/support/fp_values.h"
#include "tests/support/golden_test.h"

namespace
{

using namespace golden_test;

uint32_t acc32(Golden &m, uint32_t row, uint32_t c) { return uint32_t(m.acc(row)[c]); }

// Random ACC and memory, then RD_ACC rows with every flag combination against the rule written
// out here: ACC[b+i][c] = ACC ? ACC[b+i][c] (+) v[c] : v[c], v[c] = 0 past len/4.
TEST(GoldenRdAcc, AgainstTheRule)
{
    tpu_rng r{0x5eed0acc};
    for (uint32_t n : {4u, 8u, 16u})
        for (uint32_t flags :
             {0u, uint32_t(TPU_F_ACC), uint32_t(TPU_F_BF16), uint32_t(TPU_F_ACC | TPU_F_BF16)})
            for (int trial = 0; trial < 20; trial++) {
                Golden m(n, 16, 16, 2, 4096);
                fill_random(m, &r);
                rng_fill_fp(&r, m.mem(), m.cfg.mem_size);
                for (uint32_t row = 0; row < m.cfg.acc_rows; row++)
                    for (uint32_t c = 0; c < n; c++)
                        m.acc(row)[c] = int32_t(rng_fp32(&r));
                const uint32_t rows = 1 + rng_below(&r, 8), b = rng_below(&r, 16 - rows + 1);
                const uint32_t len = 4 * (1 + rng_below(&r, n));
                const uint32_t stride = trial % 5 == 0 ? 0 : trial % 5 == 1 ? 4 : 4 * n + 12;
                const uint32_t a = 4 * rng_below(&r, 64);
                const State before(m);
                ASSERT_EQ(m.exec(TPU_OP_RD_ACC, flags, rows, a, b, len, stride), 0);
                for (uint32_t row = 0; row < m.cfg.acc_rows; row++)
                    for (uint32_t c = 0; c < n; c++) {
                        const uint32_t old = uint32_t(before.acc[row * n + c]);
                        uint32_t want = old;
                        if (row >= b && row < b + rows) {
                            const uint64_t at = a + uint64_t(row - b) * stride + 4 * c;
                            const uint32_t v = c < len / 4 ? uint32_t(m.get32(at)) : 0;
                            want = !(flags & TPU_F_ACC) ? v
                                   : flags & TPU_F_BF16 ? tpusim_fp32_add(old, v)
                                                        : old + v;
                        }
                        ASSERT_EQ(acc32(m, row, c), want)
                            << "n " << n << " flags " << flags << " row " << row << " c " << c;
                    }
                EXPECT_EQ(before.mem, State(m).mem);
                EXPECT_EQ(before.ub, State(m).ub);
            }
}

// fp32 sums of the edge values: +-0, +-inf, NaNs, subnormals, the largest finite values (and their
// overflow to inf), cancellation; the int32 add wraps.
TEST(GoldenRdAcc, EdgeValues)
{
    const uint32_t n = 4;
    for (size_t i = 0; i < fp32_edge_count; i++)
        for (size_t j = 0; j < fp32_edge_count; j += n) {
            Golden m(n);
            for (uint32_t c = 0; c < n; c++) {
                m.acc(0)[c] = int32_t(fp32_edges[i]);
                m.put32(4 * c,
                        j + c < fp32_edge_count ? fp32_edges[j + c] : fp32_edges[i] ^ (1u << 31));
            }
            ASSERT_EQ(m.exec(TPU_OP_RD_ACC, TPU_F_ACC | TPU_F_BF16, 1, 0, 0, 4 * n, 0), 0);
            for (uint32_t c = 0; c < n; c++) {
                const uint32_t v = uint32_t(m.get32(4 * c));
                ASSERT_EQ(acc32(m, 0, c), tpusim_fp32_add(fp32_edges[i], v)) << i << " " << j + c;
            }
        }
    // Spot values of the rule: cancellation gives +0, the largest finite doubled is inf, a NaN is
    // canonical, subnormals read as zero.
    Golden m(n);
    const uint32_t acc[4] = {0x3f800000u, 0x7f7fffffu, 0x7fa00001u, 0x00000001u};
    const uint32_t mem[4] = {0xbf800000u, 0x7f7fffffu, 0x3f800000u, 0x80000001u};
    const uint32_t sum[4] = {0x00000000u, 0x7f800000u, 0x7fc00000u, 0x00000000u};
    for (uint32_t c = 0; c < n; c++) {
        m.acc(0)[c] = int32_t(acc[c]);
        m.put32(4 * c, mem[c]);
    }
    ASSERT_EQ(m.exec(TPU_OP_RD_ACC, TPU_F_ACC | TPU_F_BF16, 1, 0, 0, 4 * n, 0), 0);
    for (uint32_t c = 0; c < n; c++)
        EXPECT_EQ(acc32(m, 0, c), sum[c]) << c;
    // int32 wraps; without ACC the bits are copied, a subnormal or a NaN's payload too.
    m.acc(1)[0] = INT32_MAX;
    m.put32(0, 1);
    ASSERT_EQ(m.exec(TPU_OP_RD_ACC, TPU_F_ACC, 1, 0, 1, 4, 0), 0);
    EXPECT_EQ(acc32(m, 1, 0), 0x80000000u);
    m.put32(0, 0x7fa00001u);
    m.put32(4, 0x80000001u);
    ASSERT_EQ(m.exec(TPU_OP_RD_ACC, TPU_F_BF16, 1, 0, 2, 8, 0), 0);
    EXPECT_EQ(acc32(m, 2, 0), 0x7fa00001u);
    EXPECT_EQ(acc32(m, 2, 1), 0x80000001u);
    EXPECT_EQ(acc32(m, 2, 2), 0u);
    // With ACC the columns past len/4 add +0: -0 and subnormals become +0, NaNs canonical.
    m.acc(3)[1] = int32_t(0x80000000u);
    m.acc(3)[2] = int32_t(0x00000003u);
    m.acc(3)[3] = int32_t(0xffc00001u);
    ASSERT_EQ(m.exec(TPU_OP_RD_ACC, TPU_F_ACC | TPU_F_BF16, 1, 0, 3, 4, 0), 0);
    EXPECT_EQ(acc32(m, 3, 1), 0u);
    EXPECT_EQ(acc32(m, 3, 2), 0u);
    EXPECT_EQ(acc32(m, 3, 3), 0x7fc00000u);
}

// Summing C replicas' rows, an all-reduce's step: each RD_ACC.ACC adds one replica in order.
TEST(GoldenRdAcc, SumsReplicasInOrder)
{
    const uint32_t n = 8, rows = 3, replicas = 4, at = 1024;
    Golden m(n);
    tpu_rng r{21};
    rng_fill_fp(&r, m.mem(), m.cfg.mem_size);
    ASSERT_EQ(m.exec(TPU_OP_RD_ACC, TPU_F_BF16, rows, 0, 5, 4 * n, 4 * n), 0);
    for (uint32_t k = 1; k < replicas; k++)
        ASSERT_EQ(
            m.exec(TPU_OP_RD_ACC, TPU_F_ACC | TPU_F_BF16, rows, k * rows * 4 * n, 5, 4 * n, 4 * n),
            0);
    ASSERT_EQ(m.exec(TPU_OP_WR_HOST, TPU_F_SRC_ACC | TPU_F_BF16, rows, at, 5, 4 * n, 4 * n), 0);
    for (uint32_t i = 0; i < rows; i++)
        for (uint32_t c = 0; c < n; c++) {
            uint32_t s = uint32_t(m.get32(4 * (i * n + c)));
            for (uint32_t k = 1; k < replicas; k++)
                s = tpusim_fp32_add(s, uint32_t(m.get32(4 * ((k * rows + i) * n + c))));
            EXPECT_EQ(uint32_t(m.get32(at + 4 * (i * n + c))), s) << i << " " << c;
        }
}

TEST(GoldenRdAcc, Checks)
{
    const uint32_t n = 4; // 16 ACC rows, 4096 bytes of memory
    const int BAD = TPU_FAULT_BAD_OPERAND, ACC = TPU_FAULT_ACC_RANGE, MEM = TPU_FAULT_MEM_RANGE;
    const uint32_t F = TPU_F_ACC | TPU_F_BF16;
    struct Case {
        const char *what;
        uint32_t flags, rows, a, b, len, stride;
        int want;
    } cases[] = {
        {"len 4", F, 1, 0, 0, 4, 0, 0},
        {"len 4N", F, 16, 0, 0, 4 * n, 4 * n, 0},
        {"len 0", 0, 1, 0, 0, 0, 0, BAD},
        {"len 6", 0, 1, 0, 0, 6, 0, BAD},
        {"len 4N+4", 0, 1, 0, 0, 4 * n + 4, 0, BAD},
        {"rows 0", 0, 0, 0, 0, 4, 0, BAD},
        {"LOAD", TPU_F_LOAD, 1, 0, 0, 4, 0, BAD},
        {"UNSIGNED", TPU_F_UNSIGNED, 1, 0, 0, 4, 0, BAD},
        {"SRC_ACC", TPU_F_SRC_ACC, 1, 0, 0, 4, 0, BAD},
        {"RELU", TPU_F_RELU, 1, 0, 0, 4, 0, BAD},
        {"last ACC row", 0, 1, 0, 15, 4, 0, 0},
        {"past the ACC", 0, 2, 0, 15, 4, 0, ACC},
        {"ACC before memory", 0, 2, 4096, 15, 4, 0, ACC},
        {"last memory byte", 0, 2, 4088, 0, 4, 4, 0},
        {"past the memory", 0, 2, 4089, 0, 4, 4, MEM},
    };
    for (const Case &t : cases) {
        Golden g(n);
        EXPECT_EQ(g.exec(TPU_OP_RD_ACC, t.flags, t.rows, t.a, t.b, t.len, t.stride), t.want)
            << t.what;
    }
}

TEST(GoldenRdAcc, Disassembly)
{
    const tpusim_insn i = tpusim_encode(TPU_OP_RD_ACC, TPU_F_ACC | TPU_F_BF16, 3, 0x40, 7, 16, 64);
    char buf[128];
    EXPECT_EQ(std::string(tpusim_disasm(&i, buf, sizeof buf)),
              "RD_ACC.ACC.BF16 rows=3 mem=0x40 stride=64 len=16 acc=7");
}

} // namespace

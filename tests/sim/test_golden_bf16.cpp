// test_golden_bf16.cpp - the golden model's bf16 instructions (ISA 1.3, docs/isa.md "Floating
// point (bf16)") against a plain C++ reference of the rule written here from sim/fp.h's
// operations: GEMMs of shapes that are not multiples of N, K = 1, several K tiles, edge values;
// ACTIVATE.BF16 with bias, ReLU and pooling; WR_HOST.SRC_ACC.BF16; the checks BF16 adds; a tile
// read in the other type; the disassembly.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "sim/fp.h"
#include "tests/support/fp_values.h"
#include "tests/support/golden_test.h"

namespace
{

using namespace golden_test;

// A bf16 operand: an edge value or random bits now and then, else a magnitude of 2^-8 .. 2^4 of
// either sign (sums that grow, cancel and round).
uint16_t draw(tpu_rng *r, bool edges) { return rng_bf16_op(r, edges ? 25 : 0); }

void put16(Golden &m, uint64_t addr, uint16_t v)
{
    m.mem()[addr] = uint8_t(v);
    m.mem()[addr + 1] = uint8_t(v >> 8);
}

uint16_t ub16(Golden &m, uint32_t row_pair, uint32_t e) // element e of the UB vector at row_pair
{
    const uint32_t n = m.cfg.array_n, byte = 2 * e;
    const auto *p = reinterpret_cast<const uint8_t *>(m.ub(row_pair + byte / n)) + byte % n;
    return uint16_t(p[0] | p[1] << 8);
}

uint32_t acc32(Golden &m, uint32_t row, uint32_t c) { return uint32_t(m.acc(row)[c]); }

// C = A . B by the rule: per K tile of N rows (zero-padded), each column's sum from +0 adding
// rows k in order, then the tiles added in fp32 in increasing k.
std::vector<uint32_t> reference(const std::vector<uint16_t> &a, const std::vector<uint16_t> &b,
                                uint32_t m, uint32_t k, uint32_t n_cols, uint32_t n)
{
    std::vector<uint32_t> c(size_t(m) * n);
    for (uint32_t i = 0; i < m; i++)
        for (uint32_t j = 0; j < n; j++)
            for (uint32_t t = 0; t * n < k; t++) {
                uint32_t s = 0;
                for (uint32_t r = 0; r < n; r++) {
                    const uint32_t kk = t * n + r;
                    const uint16_t x = kk < k ? a[size_t(i) * k + kk] : 0;
                    const uint16_t w = kk < k && j < n_cols ? b[size_t(kk) * n_cols + j] : 0;
                    s = tpusim_fp32_add(s, tpusim_bf16_mul(x, w));
                }
                uint32_t &out = c[size_t(i) * n + j];
                out = t ? tpusim_fp32_add(out, s) : s;
            }
    return c;
}

// A bf16 GEMM on the golden model as firmware would run it: A's rows, K padded to whole tiles in
// memory, into UB row pairs (RD_HOST of 2N bytes); per K tile an RD_WEIGHT.BF16 of B's rows and a
// MATMUL.BF16.LOAD (.ACC after the first) with a UB step of 2.
void gemm(uint32_t n, uint32_t m, uint32_t k, uint32_t n_cols, uint64_t seed, bool edges)
{
    SCOPED_TRACE("N " + std::to_string(n) + ", " + std::to_string(m) + " x " + std::to_string(k) +
                 " x " + std::to_string(n_cols));
    const uint32_t tiles = (k + n - 1) / n, kp = tiles * n;
    Golden g(n, 2 * m * tiles, m, 2, 1 << 16);
    tpu_rng r = {seed};
    std::vector<uint16_t> a(size_t(m) * k), b(size_t(k) * n_cols);
    for (uint16_t &x : a)
        x = draw(&r, edges);
    for (uint16_t &x : b)
        x = draw(&r, edges);
    const uint64_t a_at = 0, b_at = 2ull * m * kp;
    for (uint32_t i = 0; i < m; i++)
        for (uint32_t j = 0; j < k; j++)
            put16(g, a_at + 2 * (uint64_t(i) * kp + j), a[size_t(i) * k + j]);
    for (uint32_t j = 0; j < k; j++)
        for (uint32_t c = 0; c < n_cols; c++)
            put16(g, b_at + 2 * (uint64_t(j) * n_cols + c), b[size_t(j) * n_cols + c]);
    for (uint32_t t = 0; t < tiles; t++) {
        const uint32_t ub = 2 * m * t, rows = k - t * n < n ? k - t * n : n;
        ASSERT_EQ(g.exec(TPU_OP_RD_HOST, 0, m, uint32_t(a_at + 2 * t * n), ub, 2 * n, 2 * kp), 0);
        ASSERT_EQ(g.exec(TPU_OP_RD_WEIGHT, TPU_F_BF16, rows, uint32_t(b_at + 2ull * t * n * n_cols),
                         0, 2 * n_cols, 2 * n_cols),
                  0);
        ASSERT_EQ(
            g.exec(TPU_OP_MATMUL, TPU_F_BF16 | TPU_F_LOAD | (t ? TPU_F_ACC : 0), m, ub, 0, 0, 2),
            0);
    }
    const std::vector<uint32_t> want = reference(a, b, m, k, n_cols, n);
    for (uint32_t i = 0; i < m; i++)
        for (uint32_t c = 0; c < n; c++)
            ASSERT_EQ(acc32(g, i, c), want[size_t(i) * n + c]) << "C[" << i << "][" << c << "]";
}

TEST(GoldenBf16, GemmAgainstTheRule)
{
    gemm(4, 1, 1, 1, 1, false);   // K = 1
    gemm(4, 5, 1, 3, 2, true);    // K = 1, edge values
    gemm(4, 7, 3, 2, 3, false);   // one partial tile
    gemm(4, 9, 11, 3, 4, false);  // three K tiles, the last partial
    gemm(8, 13, 21, 5, 5, true);  // edge values over K tiles
    gemm(16, 3, 40, 16, 6, true); // full columns
}

TEST(GoldenBf16, ProductAndSumEdges)
{
    // One row, K = 2: each pair of products summed by the column, against the rule by hand.
    const uint32_t n = 4;
    const uint16_t one = 0x3f80, inf = 0x7f80, ninf = 0xff80, big = 0x7f7f, sub = 0x0001;
    struct Case {
        uint16_t a0, w0, a1, w1;
        uint32_t want;
    } cases[] = {
        {one, one, one, 0xbf80, 0},                // 1 - 1 = +0
        {0x8000, one, 0x8000, one, 0},             // +0 + -0 + -0 = +0 (the sum starts at +0)
        {inf, one, ninf, one, TPUSIM_FP32_QNAN},   // inf - inf
        {inf, 0, one, one, TPUSIM_FP32_QNAN},      // inf * 0
        {big, big, one, one, 0x7f800000},          // the product overflows
        {sub, one, one, one, 0x3f800000},          // a subnormal input is a zero
        {0x0080, 0x0080, one, 0x0000, 0},          // 2^-126 * 2^-126 flushes
        {0x7fc1, one, one, one, TPUSIM_FP32_QNAN}, // a NaN with payload
        {0x4b80, one, one, one, 0x4b800000},       // 2^24 + 1 rounds to even
        {0x4b80, one, 0x4000, 0x3fc0, 0x4b800002}, // 2^24 + 3 rounds up to 2^24 + 4
    };
    for (const Case &t : cases) {
        Golden g(n);
        put16(g, 0, t.a0);
        put16(g, 2, t.a1);
        put16(g, 64, t.w0);
        put16(g, 72, t.w1);
        ASSERT_EQ(g.exec(TPU_OP_RD_HOST, 0, 1, 0, 0, 2 * n, 0), 0);
        ASSERT_EQ(g.exec(TPU_OP_RD_WEIGHT, TPU_F_BF16, 2, 64, 0, 2, 8), 0);
        ASSERT_EQ(g.exec(TPU_OP_MATMUL, TPU_F_BF16 | TPU_F_LOAD, 1, 0, 0), 0);
        const uint32_t want = tpusim_fp32_add(tpusim_fp32_add(0, tpusim_bf16_mul(t.a0, t.w0)),
                                              tpusim_bf16_mul(t.a1, t.w1));
        EXPECT_EQ(want, t.want) << std::hex << t.a0 << " " << t.w0 << " " << t.a1 << " " << t.w1;
        EXPECT_EQ(acc32(g, 0, 0), t.want) << std::hex << t.a0 << " " << t.w0;
    }
}

TEST(GoldenBf16, ActivateBiasReluPoolToBf16Pairs)
{
    const uint32_t n = 4;
    Golden g(n, 32, 16, 2, 4096);
    tpu_rng r = {7};
    // ACC rows 0..7 from an identity tile times random vectors: ACC[i][c] = x[i][c].
    for (uint32_t i = 0; i < 8; i++)
        for (uint32_t c = 0; c < n; c++)
            put16(g, 2 * (i * n + c), draw(&r, true));
    for (uint32_t c = 0; c < n; c++)
        put16(g, 256 + 2 * (c * n + c), 0x3f80);
    ASSERT_EQ(g.exec(TPU_OP_RD_HOST, 0, 8, 0, 0, 2 * n, 2 * n), 0);
    ASSERT_EQ(g.exec(TPU_OP_RD_WEIGHT, TPU_F_BF16, n, 256, 0, 2 * n, 2 * n), 0);
    ASSERT_EQ(g.exec(TPU_OP_MATMUL, TPU_F_BF16 | TPU_F_LOAD, 8, 0, 0, 0, 2), 0);
    // fp32 bias: -1, +inf, a NaN, 2^-130 (a subnormal: +0)
    const uint32_t bias[] = {0xbf800000, 0x7f800000, 0xffc00001, 0x00100000};
    for (uint32_t c = 0; c < n; c++)
        g.put32(512 + 4 * c, bias[c]);
    ASSERT_EQ(g.exec(TPU_OP_RD_PARAMS, 0, 3, 512, 0, 4 * n, 4 * n), 0);
    for (uint32_t flags : {0u, 1u * TPU_F_BIAS, 1u * TPU_F_RELU, 1u * (TPU_F_BIAS | TPU_F_RELU)}) {
        const bool b = flags & TPU_F_BIAS, relu = flags & TPU_F_RELU;
        auto x = [&](uint32_t row, uint32_t c) {
            uint32_t v = acc32(g, row, c);
            v = b ? tpusim_fp32_add(v, bias[c]) : v;
            return relu ? tpusim_fp32_relu(v) : v;
        };
        // rows 0..7 to UB row pairs 16, 19, ... (a UB step of 3)
        ASSERT_EQ(g.exec(TPU_OP_ACTIVATE, TPU_F_BF16 | flags, 4, 16, 0, 3), 0);
        for (uint32_t i = 0; i < 4; i++)
            for (uint32_t c = 0; c < n; c++)
                EXPECT_EQ(ub16(g, 16 + 3 * i, c), tpusim_fp32_to_bf16(x(i, c))) << flags;
        // POOL: windows of 2 x 2 (pitch 4), step 1: the maximum in window order
        const uint32_t win = TPU_POOL_PUT(PH, 2) | TPU_POOL_PUT(PW, 2) | TPU_POOL_PUT(STEP, 1) |
                             TPU_POOL_PUT(PITCH, 4);
        ASSERT_EQ(g.exec(TPU_OP_ACTIVATE, TPU_F_BF16 | TPU_F_POOL | flags, 2, 26, 0, 2, win), 0);
        for (uint32_t i = 0; i < 2; i++)
            for (uint32_t c = 0; c < n; c++) {
                uint32_t mx = x(i, c);
                for (uint32_t row : {i + 1, i + 4, i + 5})
                    mx = tpusim_fp32_max(mx, x(row, c));
                EXPECT_EQ(ub16(g, 26 + 2 * i, c), tpusim_fp32_to_bf16(mx)) << flags << " " << i;
            }
        // WR_HOST.SRC_ACC.BF16: fp32, 4 bytes little-endian, len 3 words of 4
        ASSERT_EQ(g.exec(TPU_OP_WR_HOST, TPU_F_SRC_ACC | TPU_F_BF16 | flags, 8, 1024, 0, 12, 16),
                  0);
        for (uint32_t i = 0; i < 8; i++)
            for (uint32_t c = 0; c < 3; c++)
                EXPECT_EQ(uint32_t(g.get32(1024 + 16 * i + 4 * c)), x(i, c)) << flags;
        EXPECT_EQ(g.get32(1024 + 12), 0);
    }
    // Without BIAS and RELU, ACC's bits leave unchanged, a -0 and a subnormal included.
    g.acc(0)[0] = int32_t(0x80000000u);
    g.acc(0)[1] = 1;
    ASSERT_EQ(g.exec(TPU_OP_WR_HOST, TPU_F_SRC_ACC | TPU_F_BF16, 1, 2048, 0, 8, 0), 0);
    EXPECT_EQ(uint32_t(g.get32(2048)), 0x80000000u);
    EXPECT_EQ(g.get32(2052), 1);
}

TEST(GoldenBf16, TileCellsReadAsTheMatmulSays)
{
    const uint32_t n = 4;
    Golden g(n);
    // int8 tile of -2 (cells 0xfffe) and a bf16 tile of 0x4080 (4.0; low byte 0x80 = -128)
    memset(g.mem() + 64, 0xfe, n * n);
    for (uint32_t k = 0; k < n * n; k++)
        put16(g, 128 + 2 * k, 0x4080);
    g.mem()[0] = 3;       // UB row 0: int8 3, 0, 0, 0
    put16(g, 16, 0x3f80); // UB rows 2, 3: bf16 1.0, 0, 0, 0
    ASSERT_EQ(g.exec(TPU_OP_RD_HOST, 0, 1, 0, 0, n, 0), 0);
    ASSERT_EQ(g.exec(TPU_OP_RD_HOST, 0, 1, 16, 2, 2 * n, 0), 0);
    ASSERT_EQ(g.exec(TPU_OP_RD_WEIGHT, 0, n, 64, 0, n, n), 0);
    ASSERT_EQ(g.exec(TPU_OP_RD_WEIGHT, TPU_F_BF16, n, 128, 0, 2 * n, 2 * n), 0);
    ASSERT_EQ(g.exec(TPU_OP_MATMUL, TPU_F_LOAD | TPU_F_BF16, 1, 2, 0), 0);
    EXPECT_EQ(acc32(g, 0, 0), tpusim_bf16_mul(0x3f80, 0xfffe)); // the cell's 16 bits: a NaN
    ASSERT_EQ(g.exec(TPU_OP_MATMUL, TPU_F_LOAD, 1, 0, 1), 0);
    EXPECT_EQ(g.acc(1)[0], 3 * -128); // the low byte
    ASSERT_EQ(g.exec(TPU_OP_MATMUL, TPU_F_BF16, 1, 2, 2), 0);
    EXPECT_EQ(acc32(g, 2, 0), 0x40800000u); // 1.0 * 4.0
}

TEST(GoldenBf16, Checks)
{
    const uint32_t n = 4;
    const int BAD = TPU_FAULT_BAD_OPERAND, UB = TPU_FAULT_UB_RANGE;
    struct Case {
        const char *what;
        uint32_t op, flags, rows, a, b, len, stride;
        int want;
    } cases[] = {
        {"RD_WEIGHT.BF16 len 2N", TPU_OP_RD_WEIGHT, TPU_F_BF16, n, 0, 0, 2 * n, 2 * n, 0},
        {"RD_WEIGHT.BF16 len 2N+1", TPU_OP_RD_WEIGHT, TPU_F_BF16, n, 0, 0, 2 * n + 1, 0, BAD},
        {"RD_WEIGHT len N+1", TPU_OP_RD_WEIGHT, 0, n, 0, 0, n + 1, 0, BAD},
        {"MATMUL.BF16.UNSIGNED", TPU_OP_MATMUL, TPU_F_BF16 | TPU_F_UNSIGNED, 1, 0, 0, 0, 0, BAD},
        {"MATMUL.BF16 last pair", TPU_OP_MATMUL, TPU_F_BF16, 2, 12, 0, 0, 2, 0},
        {"MATMUL.BF16 past the UB", TPU_OP_MATMUL, TPU_F_BF16, 1, 15, 0, 0, 0, UB},
        {"ACTIVATE.BF16 last pair", TPU_OP_ACTIVATE, TPU_F_BF16, 3, 8, 0, 3, 0, 0},
        {"ACTIVATE.BF16 past the UB", TPU_OP_ACTIVATE, TPU_F_BF16, 3, 9, 0, 3, 0, UB},
        {"WR_HOST.BF16 from UB", TPU_OP_WR_HOST, TPU_F_BF16, 1, 0, 0, 4, 0, BAD},
        {"WR_HOST.SRC_ACC.BF16", TPU_OP_WR_HOST, TPU_F_BF16 | TPU_F_SRC_ACC, 1, 0, 0, 4, 0, 0},
        {"RD_HOST.BF16", TPU_OP_RD_HOST, TPU_F_BF16, 1, 0, 0, 4, 0, BAD},
        {"ZERO.BF16", TPU_OP_ZERO, TPU_F_BF16, 1, 0, 0, 0, 0, BAD},
    };
    for (const Case &t : cases) {
        Golden g(n);
        EXPECT_EQ(g.exec(t.op, t.flags, t.rows, t.a, t.b, t.len, t.stride), t.want) << t.what;
    }
}

TEST(GoldenBf16, Disassembly)
{
    const tpusim_insn i =
        tpusim_encode(TPU_OP_MATMUL, TPU_F_LOAD | TPU_F_ACC | TPU_F_BF16, 4, 0, 0, 0, 2);
    char buf[128];
    EXPECT_NE(std::string(tpusim_disasm(&i, buf, sizeof buf)).find("MATMUL.LOAD.ACC.BF16"),
              std::string::npos)
        << buf;
}

} // namespace

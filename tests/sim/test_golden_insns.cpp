// test_golden_insns.cpp - the golden model (docs/isa.md) instruction by instruction: the
// activation arithmetic, every opcode's effect, every validation error, the weight FIFO, SYNC,
// runs, reset, creation and accessors. Whole programs: test_golden.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "tests/support/golden_test.h"
#include "tests/support/progs.h"

namespace
{

using namespace golden_test;

// ---------------------------------------------------------- activation arithmetic --

struct RequantCase {
    int32_t x, mult;
    uint32_t shift;
    int8_t want;
};

TEST(GoldenActivate, RoundingTiesAndSaturation)
{
    const RequantCase cases[] = {
        // ties round away from zero
        {1, 1, 1, 1},
        {-1, 1, 1, -1},
        {3, 1, 1, 2},
        {-3, 1, 1, -2},
        {5, 1, 1, 3},
        {-5, 1, 1, -3},
        {2, 1, 2, 1},
        {-2, 1, 2, -1},
        {6, 1, 2, 2},
        {-6, 1, 2, -2},
        // below and above the tie
        {1, 1, 2, 0},
        {-1, 1, 2, 0},
        {3, 1, 2, 1},
        {-3, 1, 2, -1},
        {10, -3, 2, -8},
        {-7, 1, 1, -4},
        // shift 0 is the identity; mult 0 gives 0
        {100, 1, 0, 100},
        {-100, 1, 0, -100},
        {12345, 0, 5, 0},
        // saturation both ways, also from rounding
        {128, 1, 0, 127},
        {-129, 1, 0, -128},
        {255, 1, 1, 127},
        {-256, 1, 1, -128},
        {-257, 1, 1, -128},
        {INT32_MAX, INT32_MAX, 0, 127},
        {INT32_MIN, INT32_MAX, 0, -128},
        {INT32_MIN, INT32_MIN, 62, 1},
        {INT32_MAX, INT32_MAX, 62, 1},
        // p = 2^62, s = 63: the 64-bit rounding add wraps to -2^63, which shifts to -1
        {INT32_MIN, INT32_MIN, 63, -1},
        {INT32_MIN, INT32_MAX, 63, 0},
        {-1, 1, 63, 0},
        // only shift bits 5:0 count
        {3, 1, 0x41, 2},
        {3, 1, 0xffffffc1u, 2},
        {INT32_MIN, INT32_MIN, 0xffffffffu, -1},
    };
    const uint32_t n = 4;
    const size_t count = sizeof cases / sizeof cases[0];
    for (size_t i = 0; i < count; i += n) {
        Golden m(n);
        std::vector<int32_t> bias(n), mult(n);
        std::vector<uint32_t> shift(n);
        for (uint32_t c = 0; c < n && i + c < count; c++) {
            bias[c] = cases[i + c].x;
            mult[c] = cases[i + c].mult;
            shift[c] = cases[i + c].shift;
        }
        m.put_params(0x100, bias, mult, shift);
        // ACC row 0 is zero, so x = bias.
        ASSERT_EQ(m.exec(TPU_OP_RD_PARAMS, 0, 3, 0x100, 0, 4 * n, 4 * n), TPU_FAULT_NONE);
        ASSERT_EQ(m.exec(TPU_OP_ACTIVATE, TPU_F_BIAS, 1, 1, 0), TPU_FAULT_NONE);
        for (uint32_t c = 0; c < n && i + c < count; c++) {
            const RequantCase &k = cases[i + c];
            EXPECT_EQ(m.ub(1)[c], k.want)
                << "x=" << k.x << " mult=" << k.mult << " shift=0x" << std::hex << k.shift;
        }
    }
}

// ACC row 0 = 16384 in every column (-128 x -128), then the given parameters.
void setup_acc_16384(Golden &m, const std::vector<int32_t> &bias, const std::vector<int32_t> &mult,
                     const std::vector<uint32_t> &shift)
{
    const uint32_t n = m.cfg.array_n;
    memset(m.mem(), 0x80, n); // UB row: -128 in byte 0 only (len 1)
    ASSERT_EQ(m.exec(TPU_OP_RD_HOST, 0, 1, 0, 0, 1, 0), TPU_FAULT_NONE);
    ASSERT_EQ(m.exec(TPU_OP_RD_WEIGHT, 0, 1, 0, 0, n, 0), TPU_FAULT_NONE); // tile row 0: -128s
    ASSERT_EQ(m.exec(TPU_OP_MATMUL, TPU_F_LOAD, 1, 0, 0), TPU_FAULT_NONE);
    for (uint32_t c = 0; c < n; c++)
        ASSERT_EQ(m.acc(0)[c], 16384);
    m.put_params(0x100, bias, mult, shift);
    ASSERT_EQ(m.exec(TPU_OP_RD_PARAMS, 0, 3, 0x100, 0, 4 * n, 4 * n), TPU_FAULT_NONE);
}

TEST(GoldenActivate, BiasWrapsAndReluClamps)
{
    Golden m(4);
    setup_acc_16384(m, {INT32_MAX, INT32_MIN, -16384, -16385}, {1, 1, 1, 1}, {0, 0, 0, 0});
    ASSERT_FALSE(HasFatalFailure());
    const int32_t with_bias[] = {INT32_MIN + 16383, INT32_MIN + 16384, 0, -1};
    struct {
        uint32_t flags;
        int32_t want[4];
    } cases[] = {
        {TPU_F_SRC_ACC, {16384, 16384, 16384, 16384}},
        {TPU_F_SRC_ACC | TPU_F_RELU, {16384, 16384, 16384, 16384}},
        {TPU_F_SRC_ACC | TPU_F_BIAS, {with_bias[0], with_bias[1], with_bias[2], with_bias[3]}},
        {TPU_F_SRC_ACC | TPU_F_BIAS | TPU_F_RELU, {0, 0, 0, 0}},
    };
    for (auto &k : cases) {
        ASSERT_EQ(m.exec(TPU_OP_WR_HOST, k.flags, 1, 0x200, 0, 16, 0), TPU_FAULT_NONE);
        for (int c = 0; c < 4; c++)
            EXPECT_EQ(m.get32(0x200 + 4 * c), k.want[c]) << "flags " << k.flags << " col " << c;
    }
    // ACTIVATE with the identity requantization clamps the same x values
    ASSERT_EQ(m.exec(TPU_OP_ACTIVATE, TPU_F_BIAS, 1, 3, 0), TPU_FAULT_NONE);
    const int8_t want8[] = {-128, -128, 0, -1};
    for (int c = 0; c < 4; c++)
        EXPECT_EQ(m.ub(3)[c], want8[c]) << c;
    ASSERT_EQ(m.exec(TPU_OP_ACTIVATE, TPU_F_BIAS | TPU_F_RELU, 1, 3, 0), TPU_FAULT_NONE);
    for (int c = 0; c < 4; c++)
        EXPECT_EQ(m.ub(3)[c], 0) << c;
    ASSERT_EQ(m.exec(TPU_OP_ACTIVATE, 0, 1, 3, 0), TPU_FAULT_NONE);
    for (int c = 0; c < 4; c++)
        EXPECT_EQ(m.ub(3)[c], 127) << c;
}

TEST(GoldenActivate, RdParamsShortLenZeroesTheOtherColumns)
{
    Golden m(4);
    setup_acc_16384(m, {1, 2, 3, 4}, {1, 1, 1, 1}, {7, 7, 7, 7});
    ASSERT_FALSE(HasFatalFailure());
    ASSERT_EQ(m.exec(TPU_OP_RD_PARAMS, 0, 3, 0x100, 0, 4, 16), TPU_FAULT_NONE);
    ASSERT_EQ(m.exec(TPU_OP_WR_HOST, TPU_F_SRC_ACC | TPU_F_BIAS, 1, 0x200, 0, 16, 0),
              TPU_FAULT_NONE);
    EXPECT_EQ(m.get32(0x200), 16385);
    for (int c = 1; c < 4; c++)
        EXPECT_EQ(m.get32(0x200 + 4 * c), 16384) << c;
    ASSERT_EQ(m.exec(TPU_OP_ACTIVATE, 0, 1, 0, 0), TPU_FAULT_NONE);
    EXPECT_EQ(m.ub(0)[0], 127); // 16384 >> 7 = 128, saturated
    for (int c = 1; c < 4; c++)
        EXPECT_EQ(m.ub(0)[c], 0) << c; // mult 0
}

// ---------------------------------------------------------------- opcode effects --

TEST(GoldenOps, RdHostZeroPadsAndRepeatsWithStrideZero)
{
    Golden m(8);
    memset(m.mem(), 0x7f, 64);
    ASSERT_EQ(m.exec(TPU_OP_RD_HOST, 0, 4, 0, 0, 8, 8), TPU_FAULT_NONE);
    const uint8_t row[3] = {1, 2, 3};
    memcpy(m.mem() + 100, row, 3);
    ASSERT_EQ(m.exec(TPU_OP_RD_HOST, 0, 3, 100, 1, 3, 0), TPU_FAULT_NONE);
    for (uint32_t r = 0; r < 4; r++)
        for (uint32_t c = 0; c < 8; c++) {
            const int want = r == 0 ? 0x7f : c < 3 ? c + 1 : 0;
            EXPECT_EQ(m.ub(r)[c], want) << r << "," << c;
        }
}

TEST(GoldenOps, RdHostWideRowsFillConsecutiveUbRows)
{
    // N = 4: rows of len 4N, 2N+1 and N+1 bytes fill 4, 3 and 2 UB rows each, zero-padded.
    const uint32_t n = 4;
    Golden m(n, 64);
    for (uint32_t i = 0; i < 64; i++)
        m.mem()[i] = (uint8_t)(i + 1);
    for (uint32_t r = 0; r < 64; r++)
        memset(m.ub(r), 0x55, n);
    const uint32_t lens[] = {4 * n, 2 * n + 1, n + 1};
    for (uint32_t len : lens) {
        const uint32_t s = (len + n - 1) / n, rows = 3, stride = 20, b = 7;
        ASSERT_EQ(m.exec(TPU_OP_RD_HOST, 0, rows, 0, b, len, stride), TPU_FAULT_NONE);
        for (uint32_t i = 0; i < rows; i++)
            for (uint32_t k = 0; k < s * n; k++)
                EXPECT_EQ(m.ub(b + i * s + k / n)[k % n],
                          k < len ? (int8_t)(i * stride + k + 1) : 0)
                    << len << ": row " << i << " byte " << k;
        EXPECT_EQ(m.ub(b + rows * s)[0], 0x55) << len; // the UB row after the range is untouched
        for (uint32_t r = b; r <= b + rows * s; r++)
            memset(m.ub(r), 0x55, n);
    }
}

TEST(GoldenOps, TileRowIsKAndByteIsColumn)
{
    const uint32_t n = 4;
    Golden m(n, 16, 16, 1);
    // a full tile of 0x7f first, so the partial tile below reuses a dirty FIFO slot
    memset(m.mem() + 0x200, 0x7f, n * n);
    ASSERT_EQ(m.exec(TPU_OP_RD_WEIGHT, 0, n, 0x200, 0, n, n), TPU_FAULT_NONE);
    ASSERT_EQ(m.exec(TPU_OP_MATMUL, TPU_F_LOAD, 1, 0, 0), TPU_FAULT_NONE);
    // tile at 0x100 with stride 16: W[r][c] = 10 r + c, only rows < 3, cols < 2 loaded
    for (uint32_t r = 0; r < n; r++)
        for (uint32_t c = 0; c < n; c++)
            m.mem()[0x100 + 16 * r + c] = (uint8_t)(10 * r + c);
    // UB rows 0..3: one-hot e_r with value 2; UB row 4: all ones
    for (uint32_t r = 0; r < n; r++)
        m.mem()[r * n + r] = 2;
    memset(m.mem() + n * n, 1, n);
    ASSERT_EQ(m.exec(TPU_OP_RD_HOST, 0, n + 1, 0, 0, n, n), TPU_FAULT_NONE);
    ASSERT_EQ(m.exec(TPU_OP_RD_WEIGHT, 0, 3, 0x100, 0, 2, 16), TPU_FAULT_NONE);
    ASSERT_EQ(m.exec(TPU_OP_MATMUL, TPU_F_LOAD, n + 1, 0, 4), TPU_FAULT_NONE);
    for (uint32_t r = 0; r < n; r++)
        for (uint32_t c = 0; c < n; c++) {
            const int32_t want = r < 3 && c < 2 ? 2 * (int32_t)(10 * r + c) : 0;
            EXPECT_EQ(m.acc(4 + r)[c], want) << r << "," << c;
        }
    // column sums: the padding rows and columns are zero
    const int32_t sums[] = {0 + 10 + 20, 1 + 11 + 21, 0, 0};
    for (uint32_t c = 0; c < n; c++)
        EXPECT_EQ(m.acc(4 + n)[c], sums[c]) << c;
}

TEST(GoldenOps, MatmulAccumulatesOverwritesAndKeepsTheCurrentTile)
{
    const uint32_t n = 4;
    Golden m(n);
    memset(m.mem(), 1, 16);        // tile: all 1
    memset(m.mem() + 16, 0xff, 4); // UB row 0: -1 (255 unsigned)
    memset(m.mem() + 20, 3, 4);    // UB row 1: 3
    ASSERT_EQ(m.exec(TPU_OP_RD_HOST, 0, 2, 16, 0, 4, 4), TPU_FAULT_NONE);
    ASSERT_EQ(m.exec(TPU_OP_RD_WEIGHT, 0, 4, 0, 0, 4, 4), TPU_FAULT_NONE);
    ASSERT_EQ(m.exec(TPU_OP_MATMUL, TPU_F_LOAD, 1, 0, 0), TPU_FAULT_NONE);
    EXPECT_EQ(m.acc(0)[0], -4);
    ASSERT_EQ(m.exec(TPU_OP_MATMUL, TPU_F_ACC | TPU_F_UNSIGNED, 1, 0, 0), TPU_FAULT_NONE);
    EXPECT_EQ(m.acc(0)[0], -4 + 4 * 255);
    ASSERT_EQ(m.exec(TPU_OP_MATMUL, TPU_F_ACC, 1, 1, 0), TPU_FAULT_NONE);
    EXPECT_EQ(m.acc(0)[3], -4 + 4 * 255 + 12);
    ASSERT_EQ(m.exec(TPU_OP_MATMUL, 0, 1, 1, 0), TPU_FAULT_NONE);
    for (uint32_t c = 0; c < n; c++)
        EXPECT_EQ(m.acc(0)[c], 12) << c;
}

TEST(GoldenOps, WrHostWritesOnlyLenBytesInRowOrder)
{
    const uint32_t n = 8;
    Golden m(n);
    for (uint32_t i = 0; i < 2 * n; i++)
        m.mem()[i] = (uint8_t)(i + 1);
    ASSERT_EQ(m.exec(TPU_OP_RD_HOST, 0, 2, 0, 0, n, n), TPU_FAULT_NONE);
    memset(m.mem() + 0x100, 0xee, 64);
    // rows overlap (stride 2 < len 5): the later row wins
    ASSERT_EQ(m.exec(TPU_OP_WR_HOST, 0, 2, 0x100, 0, 5, 2), TPU_FAULT_NONE);
    const uint8_t want[] = {1, 2, 9, 10, 11, 12, 13, 0xee};
    for (int i = 0; i < 8; i++)
        EXPECT_EQ(m.mem()[0x100 + i], want[i]) << i;
    // SRC_ACC with len 8: two columns, little-endian
    m.acc(3)[0] = 0x11223344;
    m.acc(3)[1] = -2;
    m.acc(3)[2] = 7;
    ASSERT_EQ(m.exec(TPU_OP_WR_HOST, TPU_F_SRC_ACC, 1, 0x120, 3, 8, 0), TPU_FAULT_NONE);
    const uint8_t want32[] = {0x44, 0x33, 0x22, 0x11, 0xfe, 0xff, 0xff, 0xff, 0xee};
    for (int i = 0; i < 9; i++)
        EXPECT_EQ(m.mem()[0x120 + i], want32[i]) << i;
}

TEST(GoldenOps, WrHostWideRowsJoinConsecutiveUbRows)
{
    // N = 4: a row of len bytes is the first len bytes of its ceil(len / N) UB rows in order.
    const uint32_t n = 4;
    Golden m(n, 64);
    for (uint32_t r = 0; r < 64; r++)
        for (uint32_t k = 0; k < n; k++)
            m.ub(r)[k] = (int8_t)(r * n + k);
    const uint32_t lens[] = {4 * n, 3 * n - 1, n + 1};
    for (uint32_t len : lens) {
        const uint32_t s = (len + n - 1) / n, rows = 3, stride = 20, b = 5;
        memset(m.mem() + 0x100, 0xee, 128);
        ASSERT_EQ(m.exec(TPU_OP_WR_HOST, 0, rows, 0x100, b, len, stride), TPU_FAULT_NONE);
        for (uint32_t i = 0; i < rows; i++)
            for (uint32_t k = 0; k < stride; k++)
                EXPECT_EQ(m.mem()[0x100 + i * stride + k], k < len ? (b + i * s) * n + k : 0xee)
                    << len << ": row " << i << " byte " << k;
    }
}

TEST(GoldenOps, ActivateWritesItsRowsAUbStepApart)
{
    // ACTIVATE's len is the UB step of its output rows, with and without POOL; the rows between
    // keep their contents.
    const uint32_t n = 4;
    Golden m(n, 32, 16);
    m.put_params(0, {0, 0, 0, 0}, {1, 1, 1, 1}, {0, 0, 0, 0});
    ASSERT_EQ(m.exec(TPU_OP_RD_PARAMS, 0, 3, 0, 0, 4 * n, 4 * n), TPU_FAULT_NONE);
    for (uint32_t r = 0; r < 16; r++)
        for (uint32_t c = 0; c < n; c++)
            m.acc(r)[c] = (int32_t)(r * 10 + c);
    for (uint32_t r = 0; r < 32; r++)
        memset(m.ub(r), 0x55, n);
    ASSERT_EQ(m.exec(TPU_OP_ACTIVATE, 0, 3, 2, 4, 3), TPU_FAULT_NONE); // ACC 4..6 to UB 2, 5, 8
    const uint32_t pool = TPU_POOL_PUT(PH, 1) | TPU_POOL_PUT(PW, 2) | TPU_POOL_PUT(STEP, 2);
    ASSERT_EQ(m.exec(TPU_OP_ACTIVATE, TPU_F_POOL, 2, 20, 0, 4, pool), TPU_FAULT_NONE); // UB 20, 24
    for (uint32_t r = 0; r < 32; r++)
        for (uint32_t c = 0; c < n; c++) {
            int want = 0x55;
            if (r == 2 || r == 5 || r == 8)
                want = (int)((4 + (r - 2) / 3) * 10 + c);
            else if (r == 20 || r == 24) // the maximum of ACC rows 2i and 2i + 1
                want = (int)((2 * ((r - 20) / 4) + 1) * 10 + c);
            EXPECT_EQ(m.ub(r)[c], want) << r << "," << c;
        }
}

// ----------------------------------------------------------------- validation --

struct ErrorCase {
    const char *what;
    tpusim_insn insn;
    int code;
};

tpusim_insn I(uint32_t op, uint32_t flags, uint32_t rows, uint32_t a, uint32_t b, uint32_t len,
              uint32_t stride)
{
    return tpusim_encode(op, flags, rows, a, b, len, stride);
}

// With N = 4, UB 8 rows, ACC 8 rows, 2 tiles, 256 bytes: the case fails with its code, changes
// nothing, and the model then refuses everything with that code until reset.
void check_error(const ErrorCase &k, int prefill_tiles = 0)
{
    SCOPED_TRACE(k.what);
    Golden m(4, 8, 8, 2, 256);
    tpu_rng r = {5};
    fill_random(m, &r);
    for (int t = 0; t < prefill_tiles; t++)
        ASSERT_EQ(m.exec(TPU_OP_RD_WEIGHT, 0, 4, 0, 0, 4, 4), TPU_FAULT_NONE);
    const State before(m);
    ASSERT_EQ(tpusim_golden_exec(m.g, &k.insn), k.code) << tpusim_fault_name((uint32_t)k.code);
    EXPECT_TRUE(State(m) == before);
    EXPECT_EQ(m.exec(TPU_OP_SYNC), k.code);
    EXPECT_EQ(m.exec(TPU_OP_RD_HOST, 0, 1, 0, 0, 4, 0), k.code);
    EXPECT_TRUE(State(m) == before);
    tpusim_golden_reset(m.g);
    EXPECT_EQ(m.exec(TPU_OP_SYNC), TPU_FAULT_NONE);
    EXPECT_EQ(tpusim_golden_sync_count(m.g), 1u);
}

TEST(GoldenErrors, EveryCheck)
{
    const uint32_t RH = TPU_OP_RD_HOST, RW = TPU_OP_RD_WEIGHT, RP = TPU_OP_RD_PARAMS,
                   MM = TPU_OP_MATMUL, AC = TPU_OP_ACTIVATE, WH = TPU_OP_WR_HOST, SY = TPU_OP_SYNC,
                   HA = TPU_OP_HALT, ZE = TPU_OP_ZERO, SRC = TPU_F_SRC_ACC, POOL = TPU_F_POOL;
    // ACTIVATE.POOL's window (docs/isa.md): ph x pw, step, pitch.
    auto win = [](uint32_t ph, uint32_t pw, uint32_t step, uint32_t pitch) {
        return TPU_POOL_PUT(PH, ph) | TPU_POOL_PUT(PW, pw) | TPU_POOL_PUT(STEP, step) |
               TPU_POOL_PUT(PITCH, pitch);
    };
    const int ILL = TPU_FAULT_ILLEGAL_OPCODE, BAD = TPU_FAULT_BAD_OPERAND, UB = TPU_FAULT_UB_RANGE,
              ACC = TPU_FAULT_ACC_RANGE, MEM = TPU_FAULT_MEM_RANGE;
    const ErrorCase cases[] = {
        {"opcode 0", I(0, 0, 0, 0, 0, 0, 0), ILL},
        {"opcode 11", I(11, 0, 1, 0, 0, 1, 0), ILL},
        {"opcode 0xff", I(0xff, 0xff, 0xffff, ~0u, 0xfffff, 0xfff, ~0u), ILL},
        {"RD_HOST flag ACC", I(RH, TPU_F_ACC, 1, 0, 0, 4, 0), BAD},
        {"RD_HOST reserved flag 6", I(RH, 0x40, 1, 0, 0, 4, 0), BAD},
        {"RD_HOST flag BF16", I(RH, TPU_F_BF16, 1, 0, 0, 4, 0), BAD},
        {"RD_HOST rows 0", I(RH, 0, 0, 0, 0, 4, 0), BAD},
        {"RD_HOST len 0", I(RH, 0, 1, 0, 0, 0, 0), BAD},
        {"RD_HOST len 4N+1", I(RH, 0, 1, 0, 0, 17, 0), BAD},
        {"RD_WEIGHT b set", I(RW, 0, 1, 0, 1, 4, 0), BAD},
        {"RD_WEIGHT flag LOAD", I(RW, TPU_F_LOAD, 1, 0, 0, 4, 0), BAD},
        {"RD_WEIGHT rows 0", I(RW, 0, 0, 0, 0, 4, 0), BAD},
        {"RD_WEIGHT rows N+1", I(RW, 0, 5, 0, 0, 4, 0), BAD},
        {"RD_WEIGHT len 0", I(RW, 0, 1, 0, 0, 0, 0), BAD},
        {"RD_WEIGHT len N+1", I(RW, 0, 1, 0, 0, 5, 0), BAD},
        {"RD_PARAMS rows 2", I(RP, 0, 2, 0, 0, 16, 16), BAD},
        {"RD_PARAMS rows 4", I(RP, 0, 4, 0, 0, 16, 16), BAD},
        {"RD_PARAMS rows 0", I(RP, 0, 0, 0, 0, 16, 16), BAD},
        {"RD_PARAMS len 0", I(RP, 0, 3, 0, 0, 0, 16), BAD},
        {"RD_PARAMS len 2", I(RP, 0, 3, 0, 0, 2, 16), BAD},
        {"RD_PARAMS len 6", I(RP, 0, 3, 0, 0, 6, 16), BAD},
        {"RD_PARAMS len 4N+4", I(RP, 0, 3, 0, 0, 20, 20), BAD},
        {"RD_PARAMS b set", I(RP, 0, 3, 0, 2, 16, 16), BAD},
        {"RD_PARAMS flag BIAS", I(RP, TPU_F_BIAS, 3, 0, 0, 16, 16), BAD},
        {"MATMUL len set", I(MM, 0, 1, 0, 0, 1, 0), BAD},
        {"MATMUL stride 256", I(MM, 0, 1, 0, 0, 0, 256), BAD},
        {"MATMUL rows 0", I(MM, 0, 0, 0, 0, 0, 0), BAD},
        {"MATMUL flag BIAS", I(MM, TPU_F_BIAS, 1, 0, 0, 0, 0), BAD},
        {"MATMUL flag RELU", I(MM, TPU_F_RELU, 1, 0, 0, 0, 0), BAD},
        {"MATMUL flag SRC_ACC", I(MM, SRC, 1, 0, 0, 0, 0), BAD},
        {"MATMUL reserved flag", I(MM, TPU_F_ACC | 0x40, 1, 0, 0, 0, 0), BAD},
        {"ACTIVATE flag ACC", I(AC, TPU_F_ACC, 1, 0, 0, 0, 0), BAD},
        {"ACTIVATE flag LOAD", I(AC, TPU_F_LOAD, 1, 0, 0, 0, 0), BAD},
        {"ACTIVATE flag UNSIGNED", I(AC, TPU_F_UNSIGNED, 1, 0, 0, 0, 0), BAD},
        {"ACTIVATE flag SRC_ACC", I(AC, SRC, 1, 0, 0, 0, 0), BAD},
        {"ACTIVATE UB step 256", I(AC, 0, 1, 0, 0, 256, 0), BAD},
        {"ACTIVATE stride set", I(AC, 0, 1, 0, 0, 0, 4), BAD},
        {"ACTIVATE.POOL ph 0", I(AC, POOL, 1, 0, 0, 0, win(0, 1, 1, 0)), BAD},
        {"ACTIVATE.POOL pw 0", I(AC, POOL, 1, 0, 0, 0, win(1, 0, 1, 0)), BAD},
        {"ACTIVATE.POOL step 0", I(AC, POOL, 1, 0, 0, 0, win(1, 1, 0, 0)), BAD},
        {"ACTIVATE.POOL UB step 4095", I(AC, POOL, 1, 0, 0, 4095, win(1, 1, 1, 0)), BAD},
        {"WR_HOST flag POOL", I(WH, SRC | POOL, 1, 0, 0, 4, 0), BAD},
        {"MATMUL flag POOL", I(MM, POOL, 1, 0, 0, 0, 0), BAD},
        {"ZERO a set", I(ZE, 0, 1, 1, 0, 0, 0), BAD},
        {"ZERO len set", I(ZE, 0, 1, 0, 0, 1, 0), BAD},
        {"ZERO stride set", I(ZE, 0, 1, 0, 0, 0, 1), BAD},
        {"ZERO rows 0", I(ZE, 0, 0, 0, 0, 0, 0), BAD},
        {"ZERO flag", I(ZE, TPU_F_ACC, 1, 0, 0, 0, 0), BAD},
        {"ACTIVATE rows 0", I(AC, 0, 0, 0, 0, 0, 0), BAD},
        {"WR_HOST UB with BIAS", I(WH, TPU_F_BIAS, 1, 0, 0, 4, 0), BAD},
        {"WR_HOST UB with RELU", I(WH, TPU_F_RELU, 1, 0, 0, 4, 0), BAD},
        {"WR_HOST flag ACC", I(WH, TPU_F_ACC, 1, 0, 0, 4, 0), BAD},
        {"WR_HOST UB len 0", I(WH, 0, 1, 0, 0, 0, 0), BAD},
        {"WR_HOST UB len 4N+1", I(WH, 0, 1, 0, 0, 17, 0), BAD},
        {"WR_HOST rows 0", I(WH, 0, 0, 0, 0, 4, 0), BAD},
        {"WR_HOST SRC_ACC len 0", I(WH, SRC, 1, 0, 0, 0, 0), BAD},
        {"WR_HOST SRC_ACC len 2", I(WH, SRC, 1, 0, 0, 2, 0), BAD},
        {"WR_HOST SRC_ACC len 5", I(WH, SRC, 1, 0, 0, 5, 0), BAD},
        {"WR_HOST SRC_ACC len 4N+4", I(WH, SRC, 1, 0, 0, 20, 0), BAD},
        {"WR_HOST SRC_ACC flag UNSIGNED", I(WH, SRC | TPU_F_UNSIGNED, 1, 0, 0, 4, 0), BAD},
        {"SYNC rows set", I(SY, 0, 1, 0, 0, 0, 0), BAD},
        {"SYNC a set", I(SY, 0, 0, 1, 0, 0, 0), BAD},
        {"SYNC b set", I(SY, 0, 0, 0, 1, 0, 0), BAD},
        {"SYNC len set", I(SY, 0, 0, 0, 0, 1, 0), BAD},
        {"SYNC stride set", I(SY, 0, 0, 0, 0, 0, 1), BAD},
        {"SYNC flag", I(SY, TPU_F_ACC, 0, 0, 0, 0, 0), BAD},
        {"HALT rows set", I(HA, 0, 1, 0, 0, 0, 0), BAD},
        {"HALT stride set", I(HA, 0, 0, 0, 0, 0, 0x80000000u), BAD},
        {"HALT flag", I(HA, TPU_F_RELU, 0, 0, 0, 0, 0), BAD},
        {"RD_HOST UB end + 1", I(RH, 0, 3, 0, 6, 4, 0), UB},
        {"RD_HOST UB start past end", I(RH, 0, 1, 0, 8, 4, 0), UB},
        {"RD_HOST UB huge b", I(RH, 0, 1, 0, 0xfffff, 4, 0), UB},
        {"RD_HOST wide rows UB end + 1", I(RH, 0, 2, 0, 5, 5, 8), UB}, // 2 UB rows per row
        {"RD_HOST 4N-byte rows UB end + 1", I(RH, 0, 2, 0, 1, 16, 16), UB},
        {"MATMUL UB", I(MM, 0, 2, 7, 0, 0, 0), UB},
        {"MATMUL UB a near 2^32", I(MM, 0, 2, 0xffffffffu, 0, 0, 0), UB},
        {"MATMUL UB stride", I(MM, 0, 3, 2, 0, 0, 3), UB}, // rows 2, 5, 8: past the 8 rows
        {"ZERO UB", I(ZE, 0, 3, 0, 6, 0, 0), UB},
        {"ACTIVATE UB", I(AC, 0, 1, 8, 0, 0, 0), UB},
        {"ACTIVATE UB by step", I(AC, 0, 3, 0, 0, 4, 0), UB}, // rows 0, 4, 8
        {"ACTIVATE.POOL UB by step", I(AC, POOL, 2, 1, 0, 7, win(1, 1, 1, 0)), UB},
        {"WR_HOST UB", I(WH, 0, 9, 0, 0, 4, 0), UB},
        {"WR_HOST UB wide rows", I(WH, 0, 2, 0, 5, 5, 8), UB}, // 2 UB rows per row
        {"MATMUL ACC", I(MM, 0, 1, 0, 8, 0, 0), ACC},
        {"ACTIVATE ACC", I(AC, 0, 2, 0, 7, 0, 0), ACC},
        {"ACTIVATE.POOL ACC by step", I(AC, POOL, 3, 0, 0, 0, win(1, 2, 4, 0)), ACC},
        {"ACTIVATE.POOL ACC by pitch", I(AC, POOL, 1, 0, 2, 0, win(2, 2, 1, 5)), ACC},
        {"WR_HOST SRC_ACC ACC", I(WH, SRC, 1, 0, 8, 4, 0), ACC},
        {"RD_HOST mem end + 1", I(RH, 0, 1, 253, 0, 4, 0), MEM},
        {"RD_HOST mem rows", I(RH, 0, 4, 0, 0, 4, 85), MEM},
        {"RD_HOST mem 32-bit wrap", I(RH, 0, 2, 0, 0, 1, 0xffffffffu), MEM},
        {"RD_HOST mem a near 2^32", I(RH, 0, 1, 0xffffffffu, 0, 1, 0), MEM},
        {"RD_WEIGHT mem", I(RW, 0, 4, 205, 0, 4, 16), MEM},
        {"RD_PARAMS mem", I(RP, 0, 3, 0, 0, 16, 121), MEM},
        {"WR_HOST mem", I(WH, 0, 1, 256, 0, 1, 0), MEM},
        {"WR_HOST SRC_ACC mem wrap", I(WH, SRC, 3, 8, 0, 4, 0x80000000u), MEM},
        {"MATMUL.LOAD with no tile", I(MM, TPU_F_LOAD, 1, 0, 0, 0, 0), TPU_FAULT_WFIFO_EMPTY},
    };
    for (const ErrorCase &k : cases) {
        check_error(k);
        if (HasFatalFailure())
            return;
    }
    check_error({"RD_WEIGHT with the FIFO full", I(RW, 0, 1, 0, 0, 1, 0), TPU_FAULT_WFIFO_FULL}, 2);
}

TEST(GoldenErrors, FirstFailingCheckWins)
{
    const uint32_t SRC = TPU_F_SRC_ACC;
    const ErrorCase cases[] = {
        {"illegal before bad operand", I(0x10, 0xff, 0, 0, 0, 0, 0), TPU_FAULT_ILLEGAL_OPCODE},
        {"bad operand before UB", I(TPU_OP_RD_HOST, TPU_F_RELU, 1, 0, 100, 4, 0),
         TPU_FAULT_BAD_OPERAND},
        {"bad operand before mem", I(TPU_OP_RD_WEIGHT, 0, 1, 9999, 0, 9, 0), TPU_FAULT_BAD_OPERAND},
        {"UB before ACC", I(TPU_OP_MATMUL, 0, 1, 8, 8, 0, 0), TPU_FAULT_UB_RANGE},
        {"UB before mem", I(TPU_OP_RD_HOST, 0, 1, 9999, 8, 4, 0), TPU_FAULT_UB_RANGE},
        {"ACC before mem", I(TPU_OP_WR_HOST, SRC, 1, 9999, 8, 4, 0), TPU_FAULT_ACC_RANGE},
        {"UB before FIFO empty", I(TPU_OP_MATMUL, TPU_F_LOAD, 1, 8, 0, 0, 0), TPU_FAULT_UB_RANGE},
        {"ACC before FIFO empty", I(TPU_OP_MATMUL, TPU_F_LOAD, 1, 0, 8, 0, 0), TPU_FAULT_ACC_RANGE},
        {"bad operand before FIFO empty", I(TPU_OP_MATMUL, TPU_F_LOAD, 1, 0, 0, 1, 0),
         TPU_FAULT_BAD_OPERAND},
    };
    for (const ErrorCase &k : cases) {
        check_error(k);
        if (HasFatalFailure())
            return;
    }
    check_error(
        {"mem before FIFO full", I(TPU_OP_RD_WEIGHT, 0, 1, 256, 0, 1, 0), TPU_FAULT_MEM_RANGE}, 2);
    check_error({"bad operand before FIFO full", I(TPU_OP_RD_WEIGHT, 0, 0, 0, 0, 1, 0),
                 TPU_FAULT_BAD_OPERAND},
                2);
}

TEST(GoldenErrors, LimitsThemselvesAreValid)
{
    Golden m(4, 8, 8, 2, 256);
    EXPECT_EQ(m.exec(TPU_OP_RD_HOST, 0, 3, 0, 5, 4, 0), TPU_FAULT_NONE);   // rows 5..7
    EXPECT_EQ(m.exec(TPU_OP_RD_HOST, 0, 1, 252, 7, 4, 0), TPU_FAULT_NONE); // last 4 bytes
    EXPECT_EQ(m.exec(TPU_OP_RD_HOST, 0, 4, 0, 0, 4, 84), TPU_FAULT_NONE);  // 3*84+4 = 256
    EXPECT_EQ(m.exec(TPU_OP_RD_WEIGHT, 0, 4, 0, 0, 4, 0), TPU_FAULT_NONE);
    EXPECT_EQ(m.exec(TPU_OP_RD_PARAMS, 0, 3, 0, 0, 16, 120), TPU_FAULT_NONE); // 240+16 = 256
    EXPECT_EQ(m.exec(TPU_OP_MATMUL, TPU_F_LOAD | TPU_F_ACC | TPU_F_UNSIGNED, 8, 0, 0),
              TPU_FAULT_NONE);
    EXPECT_EQ(m.exec(TPU_OP_ACTIVATE, TPU_F_BIAS | TPU_F_RELU, 1, 7, 7), TPU_FAULT_NONE);
    EXPECT_EQ(m.exec(TPU_OP_WR_HOST, TPU_F_SRC_ACC | TPU_F_BIAS | TPU_F_RELU, 8, 0, 0, 16, 0),
              TPU_FAULT_NONE);
    EXPECT_EQ(m.exec(TPU_OP_WR_HOST, 0, 1, 255, 7, 1, 0), TPU_FAULT_NONE);
    EXPECT_EQ(m.exec(TPU_OP_SYNC), TPU_FAULT_NONE);
    EXPECT_EQ(m.exec(TPU_OP_HALT), TPU_FAULT_NONE);

    Golden big(4, 65536, 8, 2, 256);
    EXPECT_EQ(big.exec(TPU_OP_RD_HOST, 0, 65535, 0, 1, 4, 0), TPU_FAULT_NONE); // max rows, stride 0
    EXPECT_EQ(big.exec(TPU_OP_RD_HOST, 0, 2, 0, 65535, 4, 0), TPU_FAULT_UB_RANGE);
}

// ----------------------------------------------------------------- weight FIFO --

TEST(GoldenFifo, TilesPopInOrderAroundTheRing)
{
    const uint32_t n = 4, tiles = 3;
    Golden m(n, 8, 8, tiles, 1024);
    // tile t (at 16 t): every byte t + 1; UB row 0: 1 in byte 0, so ACC = tile row 0
    for (uint32_t t = 0; t < 10; t++)
        memset(m.mem() + 16 * t, (int)(t + 1), 16);
    m.mem()[512] = 1;
    ASSERT_EQ(m.exec(TPU_OP_RD_HOST, 0, 1, 512, 0, 1, 0), TPU_FAULT_NONE);
    uint32_t pushed = 0, popped = 0;
    while (pushed < tiles)
        ASSERT_EQ(m.exec(TPU_OP_RD_WEIGHT, 0, n, 16 * pushed++, 0, n, n), TPU_FAULT_NONE);
    tpu_rng r = {9};
    while (popped < 10) {
        const uint32_t queued = pushed - popped;
        if (pushed < 10 && queued < tiles && (queued == 0 || rng_chance(&r, 50))) {
            ASSERT_EQ(m.exec(TPU_OP_RD_WEIGHT, 0, n, 16 * pushed++, 0, n, n), TPU_FAULT_NONE);
            continue;
        }
        ASSERT_EQ(m.exec(TPU_OP_MATMUL, TPU_F_LOAD, 1, 0, 0), TPU_FAULT_NONE);
        popped++;
        EXPECT_EQ(m.acc(0)[0], (int32_t)popped) << "pop " << popped;
        // without LOAD the current tile stays
        ASSERT_EQ(m.exec(TPU_OP_MATMUL, 0, 1, 0, 1), TPU_FAULT_NONE);
        EXPECT_EQ(m.acc(1)[n - 1], (int32_t)popped);
    }
    EXPECT_EQ(m.exec(TPU_OP_MATMUL, TPU_F_LOAD, 1, 0, 0), TPU_FAULT_WFIFO_EMPTY);
}

TEST(GoldenFifo, FullAtWfifoTilesAndFreedByALoad)
{
    for (uint32_t tiles : {1u, 2u, 4u}) {
        Golden m(4, 8, 8, tiles, 256);
        for (uint32_t t = 0; t < tiles; t++)
            ASSERT_EQ(m.exec(TPU_OP_RD_WEIGHT, 0, 1, 0, 0, 1, 0), TPU_FAULT_NONE);
        ASSERT_EQ(m.exec(TPU_OP_MATMUL, TPU_F_LOAD, 1, 0, 0), TPU_FAULT_NONE);
        ASSERT_EQ(m.exec(TPU_OP_RD_WEIGHT, 0, 1, 0, 0, 1, 0), TPU_FAULT_NONE);
        EXPECT_EQ(m.exec(TPU_OP_RD_WEIGHT, 0, 1, 0, 0, 1, 0), TPU_FAULT_WFIFO_FULL) << tiles;
    }
}

// ----------------------------------------------------------- SYNC, run, reset --

TEST(GoldenRun, SyncCountAndStoppingPoints)
{
    Golden m(4);
    tpu_prog p = {};
    for (int i = 0; i < 5; i++) {
        prog_emit(&p, TPU_OP_SYNC, 0, 0, 0, 0, 0, 0);
        prog_emit(&p, TPU_OP_RD_HOST, 0, 1, 0, 0, 4, 0);
    }
    prog_emit(&p, TPU_OP_HALT, 0, 0, 0, 0, 0, 0);
    prog_emit(&p, TPU_OP_SYNC, 0, 0, 0, 0, 0, 0); // after HALT: not run
    size_t executed = 0;
    EXPECT_EQ(tpusim_golden_run(m.g, p.insns, p.n, &executed), TPU_FAULT_NONE);
    EXPECT_EQ(executed, 10u);
    EXPECT_EQ(tpusim_golden_sync_count(m.g), 5u);

    // no HALT: everything runs, executed = n
    EXPECT_EQ(tpusim_golden_run(m.g, p.insns, 3, &executed), TPU_FAULT_NONE);
    EXPECT_EQ(executed, 3u);
    EXPECT_EQ(tpusim_golden_sync_count(m.g), 7u);

    // an error stops the run at the failing instruction; nothing after it runs
    p.insns[4] = tpusim_encode(TPU_OP_RD_HOST, 0, 1, 0, 99, 4, 0);
    EXPECT_EQ(tpusim_golden_run(m.g, p.insns, p.n, &executed), TPU_FAULT_UB_RANGE);
    EXPECT_EQ(executed, 4u);
    EXPECT_EQ(tpusim_golden_sync_count(m.g), 9u);
    EXPECT_EQ(tpusim_golden_run(m.g, p.insns, p.n, nullptr), TPU_FAULT_UB_RANGE);
    EXPECT_EQ(tpusim_golden_sync_count(m.g), 9u);
    tpusim_golden_reset(m.g);
    EXPECT_EQ(tpusim_golden_sync_count(m.g), 0u);
    prog_free(&p);
}

TEST(GoldenRun, ResetClearsFifoWeightsParamsKeepsMemories)
{
    const uint32_t n = 4;
    Golden m(n);
    tpu_rng r = {17};
    fill_random(m, &r);
    std::vector<int32_t> ones(n, 1);
    m.put_params(0x100, ones, ones, std::vector<uint32_t>(n, 0));
    ASSERT_EQ(m.exec(TPU_OP_RD_PARAMS, 0, 3, 0x100, 0, 4 * n, 4 * n), TPU_FAULT_NONE);
    ASSERT_EQ(m.exec(TPU_OP_RD_WEIGHT, 0, n, 0, 0, n, n), TPU_FAULT_NONE);
    ASSERT_EQ(m.exec(TPU_OP_MATMUL, TPU_F_LOAD, 1, 0, 0), TPU_FAULT_NONE);
    ASSERT_EQ(m.exec(TPU_OP_RD_WEIGHT, 0, n, 0, 0, n, n), TPU_FAULT_NONE);
    ASSERT_EQ(m.exec(TPU_OP_SYNC), TPU_FAULT_NONE);
    ASSERT_EQ(m.exec(0x55), TPU_FAULT_ILLEGAL_OPCODE);
    const State before(m);

    tpusim_golden_reset(m.g);
    State after(m);
    EXPECT_EQ(after.sync, 0u);
    after.sync = before.sync;
    EXPECT_TRUE(after == before) << "UB, ACC and memory survive reset";
    EXPECT_EQ(m.exec(TPU_OP_MATMUL, 0, 1, 0, 2), TPU_FAULT_NONE); // weights zero
    EXPECT_EQ(m.exec(TPU_OP_WR_HOST, TPU_F_SRC_ACC | TPU_F_BIAS, 1, 0x200, 2, 4 * n, 0),
              TPU_FAULT_NONE);                                               // bias zero
    EXPECT_EQ(m.exec(TPU_OP_ACTIVATE, TPU_F_BIAS, 1, 3, 1), TPU_FAULT_NONE); // mult zero
    for (uint32_t c = 0; c < n; c++) {
        EXPECT_EQ(m.acc(2)[c], 0);
        EXPECT_EQ(m.get32(0x200 + 4 * c), 0);
        EXPECT_EQ(m.ub(3)[c], 0);
    }
    EXPECT_EQ(m.exec(TPU_OP_MATMUL, TPU_F_LOAD, 1, 0, 0), TPU_FAULT_WFIFO_EMPTY); // FIFO empty
}

TEST(GoldenModel, CreateAndAccessors)
{
    const tpusim_hwcfg zero = {0, 8, 8, 2, 32, 256};
    EXPECT_EQ(tpusim_golden_create(&zero), nullptr);
    Golden m(8, 5, 3, 2, 100);
    EXPECT_NE(m.ub(4), nullptr);
    EXPECT_EQ(m.ub(5), nullptr);
    EXPECT_NE(m.acc(2), nullptr);
    EXPECT_EQ(m.acc(3), nullptr);
    EXPECT_EQ(m.ub(1) - m.ub(0), 8);
    for (uint64_t i = 0; i < 100; i++)
        EXPECT_EQ(m.mem()[i], 0);
    EXPECT_EQ(tpusim_golden_sync_count(m.g), 0u);
}

} // namespace

// ISA helpers: encoding layout, decode round trip, names, disassembly and footprints.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "tests/support/progs.h"

namespace
{

std::string disasm(const tpusim_insn &insn)
{
    char buf[160];
    return tpusim_disasm(&insn, buf, sizeof buf);
}

std::string disasm(uint32_t op, uint32_t flags, uint32_t rows, uint32_t a, uint32_t b, uint32_t len,
                   uint32_t stride)
{
    return disasm(tpusim_encode(op, flags, rows, a, b, len, stride));
}

TEST(Isa, FieldLayout)
{
    const tpusim_insn i = tpusim_encode(0xab, 0xcd, 0x1234, 0xdeadbeef, 0x12345, 0xabc, 0x01020304);
    EXPECT_EQ(i.w[0], 0x1234cdabu);
    EXPECT_EQ(i.w[1], 0xdeadbeefu);
    EXPECT_EQ(i.w[2], 0xabc12345u);
    EXPECT_EQ(i.w[3], 0x01020304u);
    const tpusim_insn full =
        tpusim_encode(0xff, 0xff, 0xffff, 0xffffffff, 0xfffff, 0xfff, 0xffffffff);
    for (int k = 0; k < 4; k++)
        EXPECT_EQ(full.w[k], 0xffffffffu) << "word " << k;
}

TEST(Isa, EncodeMasksOversizedFields)
{
    // A field too wide for its slot must not spill into its neighbours.
    const tpusim_insn i = tpusim_encode(0x1ff, 0x100, 0x10000, 0, 0x100000, 0x1000, 0);
    EXPECT_EQ(i.w[0], 0x000000ffu);
    EXPECT_EQ(i.w[2], 0u);
}

TEST(Isa, RoundTripRandomFields)
{
    tpu_rng r = {1};
    for (int it = 0; it < 100000; it++) {
        tpusim_fields f;
        f.op = rng_below(&r, 256);
        f.flags = rng_below(&r, 256);
        f.rows = rng_below(&r, 0x10000);
        f.a = (uint32_t)rng_next(&r);
        f.b = rng_below(&r, 0x100000);
        f.len = rng_below(&r, 0x1000);
        f.stride = (uint32_t)rng_next(&r);
        const tpusim_insn i = tpusim_encode(f.op, f.flags, f.rows, f.a, f.b, f.len, f.stride);
        const tpusim_fields d = tpusim_decode(&i);
        ASSERT_EQ(d.op, f.op);
        ASSERT_EQ(d.flags, f.flags);
        ASSERT_EQ(d.rows, f.rows);
        ASSERT_EQ(d.a, f.a);
        ASSERT_EQ(d.b, f.b);
        ASSERT_EQ(d.len, f.len);
        ASSERT_EQ(d.stride, f.stride);
        // and every instruction word decodes to fields that encode back to it
        tpusim_insn raw;
        for (auto &w : raw.w)
            w = (uint32_t)rng_next(&r);
        const tpusim_fields rf = tpusim_decode(&raw);
        const tpusim_insn back =
            tpusim_encode(rf.op, rf.flags, rf.rows, rf.a, rf.b, rf.len, rf.stride);
        for (int k = 0; k < 4; k++)
            ASSERT_EQ(back.w[k], raw.w[k]);
    }
}

TEST(Isa, OpcodeNames)
{
    EXPECT_STREQ(tpusim_opcode_name(TPU_OP_RD_HOST), "RD_HOST");
    EXPECT_STREQ(tpusim_opcode_name(TPU_OP_RD_WEIGHT), "RD_WEIGHT");
    EXPECT_STREQ(tpusim_opcode_name(TPU_OP_RD_PARAMS), "RD_PARAMS");
    EXPECT_STREQ(tpusim_opcode_name(TPU_OP_MATMUL), "MATMUL");
    EXPECT_STREQ(tpusim_opcode_name(TPU_OP_ACTIVATE), "ACTIVATE");
    EXPECT_STREQ(tpusim_opcode_name(TPU_OP_WR_HOST), "WR_HOST");
    EXPECT_STREQ(tpusim_opcode_name(TPU_OP_SYNC), "SYNC");
    EXPECT_STREQ(tpusim_opcode_name(TPU_OP_HALT), "HALT");
    EXPECT_STREQ(tpusim_opcode_name(TPU_OP_ZERO), "ZERO");
    EXPECT_STREQ(tpusim_opcode_name(TPU_OP_RD_ACC), "RD_ACC");
    for (uint32_t op : {0u, 11u, 0x2au, 0xffu, 0x100u, 0xffffffffu})
        EXPECT_STREQ(tpusim_opcode_name(op), "?") << op;
}

TEST(Isa, FaultNames)
{
    const char *names[] = {"NONE",      "ILLEGAL_OPCODE", "BAD_OPERAND", "UB_RANGE",  "ACC_RANGE",
                           "MEM_RANGE", "MEM_FAULT",      "WFIFO_EMPTY", "WFIFO_FULL"};
    for (uint32_t c = 0; c < 9; c++)
        EXPECT_STREQ(tpusim_fault_name(c), names[c]);
    EXPECT_STREQ(tpusim_fault_name(TPU_FAULT_UB_RANGE), "UB_RANGE");
    EXPECT_STREQ(tpusim_fault_name(9), "?");
    EXPECT_STREQ(tpusim_fault_name(0xffffffffu), "?");
}

TEST(Isa, PerfNames)
{
    const char *names[] = {"active",       "mxu_busy",  "stall_hazard", "stall_unit",
                           "stall_weight", "stall_mem", "stall_issue",  "dma_rd_bytes",
                           "dma_wr_bytes", "retired"};
    ASSERT_EQ(TPU_PERF_COUNT, 10);
    for (int c = 0; c < TPU_PERF_COUNT; c++)
        EXPECT_STREQ(tpusim_perf_name(c), names[c]);
    EXPECT_STREQ(tpusim_perf_name(-1), "?");
    EXPECT_STREQ(tpusim_perf_name(TPU_PERF_COUNT), "?");
}

TEST(Isa, DisasmExamples)
{
    EXPECT_EQ(disasm(TPU_OP_MATMUL, TPU_F_LOAD | TPU_F_ACC, 64, 0, 128, 0, 0),
              "MATMUL.LOAD.ACC rows=64 ub=0 acc=128");
    EXPECT_EQ(disasm(TPU_OP_RD_HOST, 0, 16, 0x1000, 32, 16, 64),
              "RD_HOST rows=16 mem=0x1000 stride=64 len=16 ub=32");
    EXPECT_EQ(disasm(TPU_OP_WR_HOST, TPU_F_SRC_ACC | TPU_F_RELU, 4, 0x2000, 0, 64, 256),
              "WR_HOST.SRC_ACC.RELU rows=4 acc=0 mem=0x2000 stride=256 len=64");
}

TEST(Isa, DisasmEveryOpcode)
{
    EXPECT_EQ(disasm(TPU_OP_RD_WEIGHT, 0, 8, 0xabc0, 0, 7, 100),
              "RD_WEIGHT rows=8 mem=0xabc0 stride=100 len=7");
    EXPECT_EQ(disasm(TPU_OP_RD_PARAMS, 0, 3, 0x40, 0, 32, 64),
              "RD_PARAMS rows=3 mem=0x40 stride=64 len=32");
    EXPECT_EQ(disasm(TPU_OP_MATMUL, TPU_F_UNSIGNED, 1, 5, 6, 0, 0),
              "MATMUL.UNSIGNED rows=1 ub=5 acc=6");
    EXPECT_EQ(disasm(TPU_OP_MATMUL, TPU_F_ACC | TPU_F_LOAD | TPU_F_UNSIGNED, 2, 0, 0, 0, 0),
              "MATMUL.LOAD.ACC.UNSIGNED rows=2 ub=0 acc=0");
    EXPECT_EQ(disasm(TPU_OP_ACTIVATE, TPU_F_BIAS | TPU_F_RELU, 4, 10, 20, 0, 0),
              "ACTIVATE.BIAS.RELU rows=4 acc=20 ub=10");
    EXPECT_EQ(disasm(TPU_OP_ACTIVATE, 0, 1, 0, 0, 0, 0), "ACTIVATE rows=1 acc=0 ub=0");
    EXPECT_EQ(disasm(TPU_OP_WR_HOST, 0, 3, 0xffffffff, 7, 16, 0),
              "WR_HOST rows=3 ub=7 mem=0xffffffff stride=0 len=16");
    EXPECT_EQ(disasm(TPU_OP_WR_HOST, TPU_F_SRC_ACC | TPU_F_BIAS | TPU_F_RELU, 1, 0, 0, 4, 4),
              "WR_HOST.SRC_ACC.BIAS.RELU rows=1 acc=0 mem=0x0 stride=4 len=4");
    EXPECT_EQ(disasm(TPU_OP_MATMUL, TPU_F_LOAD, 24, 100, 8, 0, 2),
              "MATMUL.LOAD rows=24 ub=100 ub_stride=2 acc=8");
    EXPECT_EQ(disasm(TPU_OP_ACTIVATE, TPU_F_RELU | TPU_F_POOL, 12, 5, 48, 0,
                     TPU_POOL_PUT(PH, 2) | TPU_POOL_PUT(PW, 2) | TPU_POOL_PUT(STEP, 2) |
                         TPU_POOL_PUT(PITCH, 24)),
              "ACTIVATE.RELU.POOL rows=12 acc=48 window=2x2 step=2 pitch=24 ub=5");
    EXPECT_EQ(disasm(TPU_OP_ACTIVATE, TPU_F_BIAS, 8, 3, 16, 4, 0),
              "ACTIVATE.BIAS rows=8 acc=16 ub=3 ub_stride=4");
    EXPECT_EQ(disasm(TPU_OP_ZERO, 0, 30, 0, 7, 0, 0), "ZERO rows=30 ub=7");
    EXPECT_EQ(disasm(TPU_OP_SYNC, 0, 0, 0, 0, 0, 0), "SYNC");
    EXPECT_EQ(disasm(TPU_OP_HALT, 0, 0, 0, 0, 0, 0), "HALT");
}

TEST(Isa, DisasmShowsWhatMakesAnInstructionMalformed)
{
    EXPECT_EQ(disasm(TPU_OP_MATMUL, 0, 1, 0, 0, 5, 9),
              "MATMUL rows=1 ub=0 ub_stride=9 acc=0 len=5");
    EXPECT_EQ(disasm(TPU_OP_ACTIVATE, 0, 1, 0, 0, 0, 9), "ACTIVATE rows=1 acc=0 ub=0 stride=9");
    EXPECT_EQ(disasm(TPU_OP_ZERO, 0, 2, 3, 4, 0, 0), "ZERO rows=2 ub=4 a=0x3");
    EXPECT_EQ(disasm(TPU_OP_RD_WEIGHT, 0, 1, 0, 3, 1, 0),
              "RD_WEIGHT rows=1 mem=0x0 stride=0 len=1 b=3");
    EXPECT_EQ(disasm(TPU_OP_SYNC, 0, 2, 0x10, 1, 4, 8), "SYNC rows=2 a=0x10 b=1 len=4 stride=8");
    // ISA 1.3 names all eight flag bits: an inapplicable one shows by its name
    EXPECT_EQ(disasm(TPU_OP_HALT, TPU_F_RELU | TPU_F_BF16, 0, 0, 0, 0, 0), "HALT.RELU.BF16");
    EXPECT_EQ(disasm(TPU_OP_RD_HOST, TPU_F_LOAD, 0, 0, 0, 0, 0),
              "RD_HOST.LOAD rows=0 mem=0x0 stride=0 len=0 ub=0");
}

TEST(Isa, DisasmIllegal)
{
    EXPECT_EQ(disasm(tpusim_insn{{0x0000002a, 0, 0, 0}}),
              "ILLEGAL(0x2a) w=0x0000002a,0x00000000,0x00000000,0x00000000");
    EXPECT_EQ(disasm(tpusim_insn{{0x00010300, 0x12345678, 0x9abcdef0, 0xffffffff}}),
              "ILLEGAL(0x00) w=0x00010300,0x12345678,0x9abcdef0,0xffffffff");
    EXPECT_EQ(disasm(tpusim_insn{{0xff, 0, 0, 0}}).rfind("ILLEGAL(0xff) ", 0), 0u);
}

TEST(Isa, DisasmTruncatesSafely)
{
    const tpusim_insn i = tpusim_encode(TPU_OP_MATMUL, TPU_F_LOAD | TPU_F_ACC, 64, 0, 128, 0, 0);
    char buf[12];
    memset(buf, 'x', sizeof buf);
    EXPECT_EQ(tpusim_disasm(&i, buf, 8), buf);
    EXPECT_STREQ(buf, "MATMUL.");
    EXPECT_EQ(buf[8], 'x');
    EXPECT_EQ(tpusim_disasm(&i, buf, 1), buf);
    EXPECT_STREQ(buf, "");
    EXPECT_EQ(tpusim_disasm(&i, nullptr, 0), nullptr);
}

// An instruction's footprint as (space, write, first, count, step, size) tuples, on N = 8.
using Access = std::tuple<int, int, uint64_t, uint64_t, uint64_t, uint64_t>;
std::vector<Access> footprint(uint32_t op, uint32_t flags, uint32_t rows, uint32_t a, uint32_t b,
                              uint32_t len, uint32_t stride)
{
    const tpusim_insn insn = tpusim_encode(op, flags, rows, a, b, len, stride);
    const tpusim_fields f = tpusim_decode(&insn);
    tpusim_access acc[TPU_FOOTPRINT_MAX];
    std::vector<Access> v;
    for (int i = 0, k = tpusim_footprint(&f, 8, acc); i < k; i++)
        v.emplace_back(acc[i].space, acc[i].write, acc[i].first, acc[i].count, acc[i].step,
                       acc[i].size);
    return v;
}

TEST(Isa, FootprintOfEveryOpcode)
{
    enum { R = 0, W = 1 };
    const uint32_t window =
        TPU_POOL_PUT(PH, 2) | TPU_POOL_PUT(PW, 3) | TPU_POOL_PUT(STEP, 2) | TPU_POOL_PUT(PITCH, 10);
    using V = std::vector<Access>;
    // 12-byte rows fill ceil(12 / 8) = 2 UB rows each.
    EXPECT_EQ(footprint(TPU_OP_RD_HOST, 0, 3, 0x100, 5, 12, 20),
              (V{{TPU_SPACE_MEM, R, 0x100, 3, 20, 12}, {TPU_SPACE_UB, W, 5, 3, 2, 2}}));
    EXPECT_EQ(footprint(TPU_OP_RD_WEIGHT, 0, 8, 0x40, 0, 8, 8),
              (V{{TPU_SPACE_MEM, R, 0x40, 8, 8, 8}, {TPU_SPACE_WFIFO, W, 0, 1, 1, 1}}));
    EXPECT_EQ(footprint(TPU_OP_RD_PARAMS, 0, 3, 0x80, 0, 32, 64),
              (V{{TPU_SPACE_MEM, R, 0x80, 3, 64, 32}, {TPU_SPACE_PARAMS, W, 0, 1, 1, 1}}));
    EXPECT_EQ(footprint(TPU_OP_MATMUL, 0, 4, 10, 7, 0, 0),
              (V{{TPU_SPACE_UB, R, 10, 4, 1, 1}, {TPU_SPACE_ACC, W, 7, 4, 1, 1}}));
    EXPECT_EQ(footprint(TPU_OP_MATMUL, TPU_F_LOAD | TPU_F_ACC, 4, 10, 7, 0, 3),
              (V{{TPU_SPACE_UB, R, 10, 4, 3, 1},
                 {TPU_SPACE_ACC, R, 7, 4, 1, 1},
                 {TPU_SPACE_WFIFO, R, 0, 1, 1, 1},
                 {TPU_SPACE_ACC, W, 7, 4, 1, 1}}));
    EXPECT_EQ(footprint(TPU_OP_ACTIVATE, TPU_F_BIAS, 3, 20, 1, 0, 0),
              (V{{TPU_SPACE_ACC, R, 1, 3, 1, 1},
                 {TPU_SPACE_PARAMS, R, 0, 1, 1, 1},
                 {TPU_SPACE_UB, W, 20, 3, 1, 1}}));
    // Windows of 2 x 3 rows, 10 apart, one every 2 rows; output rows 5 apart.
    EXPECT_EQ(footprint(TPU_OP_ACTIVATE, TPU_F_POOL, 3, 20, 1, 5, window),
              (V{{TPU_SPACE_ACC, R, 1, 3, 2, 13},
                 {TPU_SPACE_PARAMS, R, 0, 1, 1, 1},
                 {TPU_SPACE_UB, W, 20, 3, 5, 1}}));
    EXPECT_EQ(footprint(TPU_OP_WR_HOST, 0, 2, 0x200, 6, 20, 32),
              (V{{TPU_SPACE_UB, R, 6, 2, 3, 3}, {TPU_SPACE_MEM, W, 0x200, 2, 32, 20}}));
    EXPECT_EQ(footprint(TPU_OP_WR_HOST, TPU_F_SRC_ACC | TPU_F_RELU, 2, 0x200, 6, 32, 32),
              (V{{TPU_SPACE_ACC, R, 6, 2, 1, 1}, {TPU_SPACE_MEM, W, 0x200, 2, 32, 32}}));
    EXPECT_EQ(footprint(TPU_OP_WR_HOST, TPU_F_SRC_ACC | TPU_F_BIAS, 2, 0x200, 6, 32, 32),
              (V{{TPU_SPACE_ACC, R, 6, 2, 1, 1},
                 {TPU_SPACE_PARAMS, R, 0, 1, 1, 1},
                 {TPU_SPACE_MEM, W, 0x200, 2, 32, 32}}));
    EXPECT_EQ(footprint(TPU_OP_ZERO, 0, 9, 0, 4, 0, 0), (V{{TPU_SPACE_UB, W, 4, 9, 1, 1}}));
    EXPECT_EQ(footprint(TPU_OP_RD_ACC, TPU_F_BF16, 3, 0x100, 5, 16, 64),
              (V{{TPU_SPACE_MEM, R, 0x100, 3, 64, 16}, {TPU_SPACE_ACC, W, 5, 3, 1, 1}}));
    EXPECT_EQ(footprint(TPU_OP_RD_ACC, TPU_F_ACC, 3, 0x100, 5, 16, 0),
              (V{{TPU_SPACE_MEM, R, 0x100, 3, 0, 16},
                 {TPU_SPACE_ACC, R, 5, 3, 1, 1},
                 {TPU_SPACE_ACC, W, 5, 3, 1, 1}}));
    EXPECT_EQ(footprint(TPU_OP_SYNC, 0, 0, 0, 0, 0, 0), V{});
    EXPECT_EQ(footprint(TPU_OP_HALT, 0, 0, 0, 0, 0, 0), V{});
}

TEST(Isa, FootprintRangesAndChecks)
{
    const tpusim_hwcfg cfg = {8, 64, 32, 2, 16, 4096};
    const auto fault = [&](uint32_t op, uint32_t flags, uint32_t rows, uint32_t a, uint32_t b,
                           uint32_t len, uint32_t stride) {
        const tpusim_insn insn = tpusim_encode(op, flags, rows, a, b, len, stride);
        const tpusim_fields f = tpusim_decode(&insn);
        tpusim_access acc[TPU_FOOTPRINT_MAX];
        return tpusim_range_fault(acc, tpusim_footprint(&f, cfg.array_n, acc), &cfg);
    };
    // A strided MATMUL spans (rows - 1) * step + 1 UB rows: 0 + 3 * 21 + 1 = 64 fits, 65 not.
    EXPECT_EQ(fault(TPU_OP_MATMUL, 0, 4, 0, 0, 0, 21), TPU_FAULT_NONE);
    EXPECT_EQ(fault(TPU_OP_MATMUL, 0, 4, 1, 0, 0, 21), TPU_FAULT_UB_RANGE);
    // UB before ACC before memory.
    EXPECT_EQ(fault(TPU_OP_MATMUL, 0, 4, 62, 30, 0, 0), TPU_FAULT_UB_RANGE);
    EXPECT_EQ(fault(TPU_OP_MATMUL, 0, 4, 0, 30, 0, 0), TPU_FAULT_ACC_RANGE);
    // Memory: a + (rows - 1) * stride + len <= MEM_SIZE = 4096.
    EXPECT_EQ(fault(TPU_OP_WR_HOST, TPU_F_SRC_ACC, 2, 4048, 30, 32, 16), TPU_FAULT_NONE);
    EXPECT_EQ(fault(TPU_OP_WR_HOST, TPU_F_SRC_ACC, 2, 4049, 31, 32, 16), TPU_FAULT_ACC_RANGE);
    EXPECT_EQ(fault(TPU_OP_WR_HOST, TPU_F_SRC_ACC, 2, 4049, 30, 32, 16), TPU_FAULT_MEM_RANGE);
    tpusim_access a = {TPU_SPACE_MEM, 1, 100, 3, 7, 5};
    EXPECT_EQ(tpusim_access_end(&a), 100u + 2 * 7 + 5);
    a.count = 0;
    EXPECT_EQ(tpusim_access_end(&a), 100u);
}

TEST(Isa, WritesOfAProgram)
{
    const tpusim_insn prog[] = {
        tpusim_encode(TPU_OP_WR_HOST, 0, 3, 0x100, 0, 8, 16), // rows apart: one block each
        tpusim_encode(TPU_OP_RD_HOST, 0, 2, 0x300, 0, 8, 8),  // reads memory: none
        tpusim_encode(TPU_OP_WR_HOST, 0, 3, 0x200, 0, 8, 8),  // rows back to back: one
        tpusim_encode(TPU_OP_WR_HOST, 0, 4, 0x280, 0, 8, 0),  // the same row: one
        tpusim_encode(TPU_OP_ZERO, 0, 2, 0, 5, 0, 0),         // UB, not memory
    };
    std::vector<std::tuple<uint64_t, uint64_t, size_t>> got;
    tpusim_for_each_write(
        prog, 5, 8, TPU_SPACE_MEM,
        [](void *ctx, uint64_t first, uint64_t size, size_t insn) {
            static_cast<decltype(got) *>(ctx)->emplace_back(first, size, insn);
        },
        &got);
    EXPECT_EQ(got,
              (decltype(got){
                  {0x100, 8, 0}, {0x110, 8, 0}, {0x120, 8, 0}, {0x200, 24, 2}, {0x280, 8, 3}}));
}

} // namespace

// test_firmware.cpp - the firmware (firmware/firmware.h) driving the golden model through a HAL:
// GEMM results against a naive reference on many shapes, layouts (B row-major or tiled), flags
// and core configurations; command-stream validation; the cost model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#include "firmware/firmware.h"
#include "sim/tpusim.h"
#include "tests/support/fw_test.h"
#include "tests/support/progs.h"

namespace
{

using namespace fw_test;

void reference(uint8_t *mem, const GemmCmd &g, uint32_t a, const uint8_t *b, uint32_t ldb,
               uint32_t c, uint32_t p)
{
    const bool i8 = g.flags & FW_GEMM_OUT_INT8;
    const uint32_t es = i8 ? 1 : 4;
    for (uint32_t i = 0; i < g.m; i++)
        for (uint32_t j = 0; j < g.n; j++) {
            int64_t sum = 0;
            for (uint32_t k = 0; k < g.k; k++) {
                const uint8_t x = mem[a + static_cast<size_t>(i) * g.lda + k];
                const int64_t xa = g.flags & FW_GEMM_A_UNSIGNED ? x : static_cast<int8_t>(x);
                sum += xa * static_cast<int8_t>(b[static_cast<size_t>(k) * ldb + j]);
            }
            int32_t x = wrap32(sum);
            if (g.flags & FW_GEMM_BIAS)
                x = wrap32(static_cast<int64_t>(x) + static_cast<int32_t>(rd32(mem + p + 4 * j)));
            if ((g.flags & FW_GEMM_RELU) && x < 0)
                x = 0;
            uint8_t *out = mem + c + (static_cast<size_t>(i) * g.ldc + j) * es;
            if (i8) {
                const int32_t mult = static_cast<int32_t>(rd32(mem + p + 4 * (g.n + j)));
                *out = static_cast<uint8_t>(requant(x, mult, rd32(mem + p + 8 * g.n + 4 * j) & 63));
            } else {
                for (int q = 0; q < 4; q++)
                    out[q] = static_cast<uint8_t>(static_cast<uint32_t>(x) >> 8 * q);
            }
        }
}

enum Fill { RANDOM, MIN_INT8 };

struct GemmCase {
    uint32_t m, k, n;
    uint32_t flags = 0;
    uint32_t pad_a = 0, pad_b = 0, pad_c = 0; // leading dimension minus width (pad_b: not tiled)
    uint32_t misalign = 0;                    // extra bytes before buffers and operands
    Fill fill = RANDOM;
};

// Lays a case out in memory (one buffer per operand, then the stream), runs the firmware and
// checks all of memory against the reference: C's elements rewritten, nothing else touched.
// A tiled B's padding holds junk, which must not reach C.
void run_case(const tpusim_hwcfg &cfg, const GemmCase &gc, uint64_t seed)
{
    SCOPED_TRACE(::testing::Message()
                 << "N=" << cfg.array_n << " ub=" << cfg.ub_rows << " acc=" << cfg.acc_rows
                 << " wf=" << cfg.wfifo_tiles << " m=" << gc.m << " k=" << gc.k << " n=" << gc.n
                 << " flags=" << gc.flags << " seed=" << seed);
    GoldenHal h(cfg);
    ASSERT_NE(h.g, nullptr);
    tpu_rng rng{seed};
    const bool i8 = gc.flags & FW_GEMM_OUT_INT8;
    const bool params = gc.flags & (FW_GEMM_BIAS | FW_GEMM_OUT_INT8);
    const bool tiled = gc.flags & FW_GEMM_B_TILED;
    GemmCmd g{gc.flags,
              gc.m,
              gc.k,
              gc.n,
              0,
              gc.misalign,
              gc.k + gc.pad_a,
              1,
              gc.misalign,
              tiled ? 0 : gc.n + gc.pad_b,
              2,
              gc.misalign,
              gc.n + gc.pad_c,
              0,
              0};
    const uint64_t sizes[4] = {
        (uint64_t{g.m} - 1) * g.lda + g.k,
        tiled ? gemm_tiled_b_bytes(g.k, g.n, cfg.array_n) : (uint64_t{g.k} - 1) * g.ldb + g.n,
        ((uint64_t{g.m} - 1) * g.ldc + g.n) * (i8 ? 1 : 4), params ? 12 * uint64_t{g.n} : 0};
    std::vector<Buffer> bufs;
    uint64_t at = 64;
    for (uint64_t size : sizes) {
        if (!size)
            continue;
        bufs.push_back({static_cast<uint32_t>(at + gc.misalign),
                        static_cast<uint32_t>(size + 2 * gc.misalign)});
        at = (at + size + 3 * gc.misalign + 127) & ~uint64_t{63};
    }
    if (params) {
        g.p_buf = 3;
        g.p_off = gc.misalign;
    }
    const auto stream = stream_bytes(bufs, {gemm_bytes(g)});
    ASSERT_LE(at + stream.size(), cfg.mem_size);
    uint8_t *mem = h.mem();
    rng_fill(&rng, mem, at); // gaps, margins and the stale output too
    const uint32_t a = bufs[0].addr + gc.misalign, b = bufs[1].addr + gc.misalign;
    const uint32_t c = bufs[2].addr + gc.misalign, p = params ? bufs[3].addr + gc.misalign : 0;
    // B row-major (pitch ldb_rm) as the reference reads it: in memory, or the original of the
    // tiled copy.
    std::vector<uint8_t> b_rm(tiled ? size_t{g.k} * g.n : 0);
    uint8_t *b_src = tiled ? b_rm.data() : mem + b;
    const uint32_t ldb_rm = tiled ? g.n : g.ldb;
    const size_t b_rm_size = tiled ? b_rm.size() : sizes[1];
    if (gc.fill == MIN_INT8) {
        std::memset(mem + a, 0x80, sizes[0]);
        std::memset(b_src, 0x80, b_rm_size);
    } else {
        rng_fill_int8(&rng, reinterpret_cast<int8_t *>(mem + a), sizes[0]);
        rng_fill_int8(&rng, reinterpret_cast<int8_t *>(b_src), b_rm_size);
    }
    if (tiled) {
        const uint32_t t = cfg.array_n, kt = (g.k + t - 1) / t;
        gemm_tile_b(reinterpret_cast<const int8_t *>(b_src), g.k, g.n, t,
                    reinterpret_cast<int8_t *>(mem + b));
        for (uint64_t i = 0; i < sizes[1]; i++) {
            const uint64_t tile = i / (t * t), r = i / t % t, col = i % t;
            if ((tile % kt) * t + r >= g.k || (tile / kt) * t + col >= g.n)
                mem[b + i] = static_cast<uint8_t>(rng_next(&rng) | 1); // junk, never zero
        }
    }
    // Scales that land int32 sums near the int8 range, so both rounding and saturation show.
    for (uint32_t j = 0; params && j < g.n; j++) {
        const uint32_t shift = 8 + rng_below(&rng, 16);
        wr32(mem + p + 4 * j, static_cast<uint32_t>(rng_range(&rng, -60000, 60000)));
        wr32(mem + p + 4 * (g.n + j), static_cast<uint32_t>(rng_range(&rng, 1, 1 << 10)));
        wr32(mem + p + 4 * (2 * g.n + j), shift | rng_below(&rng, 4) << 6); // junk above bit 5
    }
    std::vector<uint8_t> expect(mem, mem + cfg.mem_size);
    std::memcpy(expect.data() + at, stream.data(), stream.size());
    reference(expect.data(), g, a, b_src, ldb_rm, c, p);
    const Outcome r = run_stream(h, stream, static_cast<uint32_t>(at));
    ASSERT_EQ(r.res.code, FW_OK) << r.res.field;
    expect_memory(h, expect);
    // Every memory access stays inside its operand: RD_HOST in A, RD_WEIGHT in B, RD_PARAMS in
    // the params, WR_HOST in C.
    const uint64_t lo[] = {a, b, p, c},
                   hi[] = {a + sizes[0], b + sizes[1], p + sizes[3], c + sizes[2]};
    for (size_t i = 0; i < h.pushed.size(); i++) {
        const tpusim_fields f = tpusim_decode(&h.pushed[i]);
        if (f.op < TPU_OP_RD_HOST || f.op > TPU_OP_WR_HOST || f.op == TPU_OP_MATMUL ||
            f.op == TPU_OP_ACTIVATE)
            continue;
        const int which = f.op == TPU_OP_WR_HOST ? 3 : static_cast<int>(f.op) - TPU_OP_RD_HOST;
        const uint64_t end = f.a + uint64_t{f.rows - 1} * f.stride + f.len;
        char text[128];
        ASSERT_TRUE(f.a >= lo[which] && end <= hi[which])
            << "instruction " << i << ": " << tpusim_disasm(&h.pushed[i], text, sizeof text);
        // A tiled B's RD_WEIGHT reads one tile's k rows, cut at k, whole (contiguous, four to a
        // request): its padding columns, junk above, only reach accumulator columns never written
        // out.
        const uint32_t t = cfg.array_n;
        if (!tiled || f.op != TPU_OP_RD_WEIGHT)
            continue;
        const uint64_t tile = (f.a - b) / (t * t), kt_count = (g.k + t - 1) / t;
        const uint32_t k0 = static_cast<uint32_t>(tile % kt_count) * t;
        const uint32_t n0 = static_cast<uint32_t>(tile / kt_count) * t;
        ASSERT_TRUE((f.a - b) % (t * t) == 0 && f.stride == t && f.rows == std::min(t, g.k - k0) &&
                    f.len == t && n0 < g.n)
            << "instruction " << i << ": " << tpusim_disasm(&h.pushed[i], text, sizeof text);
    }
}

const uint32_t kArrays[] = {4, 8, 16};
// The int8 GEMM's flags (test_gemm_bf16.cpp has the bf16 ones).
const uint32_t kInt8Flags = FW_GEMM_FLAGS_ALL & ~FW_FLAGS_V3;

// Every combination of edge dimensions around the array size, cycling through the flags (B
// tiled in every other run of 16).
TEST(FirmwareGemm, EdgeShapes)
{
    uint64_t seed = 1;
    for (uint32_t n : kArrays) {
        const uint32_t dims[] = {1, n - 1, n, n + 1, 3 * n + 5, 100};
        for (uint32_t m : dims)
            for (uint32_t k : dims)
                for (uint32_t nc : dims) {
                    if (!m || !k || !nc)
                        continue;
                    GemmCase gc{m, k, nc};
                    gc.flags = static_cast<uint32_t>(seed % (kInt8Flags + 1));
                    run_case(make_cfg(n), gc, seed++);
                }
    }
}

TEST(FirmwareGemm, LargerShapes)
{
    run_case(make_cfg(16), {257, 300, 129, FW_GEMM_BIAS | FW_GEMM_OUT_INT8}, 11);
    run_case(make_cfg(8), {257, 257, 257}, 12);
    run_case(make_cfg(16), {256, 256, 256, FW_GEMM_RELU}, 13);
    run_case(make_cfg(4), {1, 1000, 3}, 14);
    run_case(make_cfg(16), {1000, 1, 40, FW_GEMM_BIAS | FW_GEMM_RELU}, 15);
    run_case(make_cfg(8), {257, 257, 257, FW_GEMM_B_TILED}, 16);
    run_case(make_cfg(16), {300, 300, 129, FW_GEMM_B_TILED | FW_GEMM_BIAS | FW_GEMM_OUT_INT8}, 17);
    run_case(make_cfg(4), {1, 1000, 3, FW_GEMM_B_TILED | FW_GEMM_A_UNSIGNED}, 18);
}

// -128 x -128 summed over long K: the largest products, and int32 wrap-around past 2^31.
TEST(FirmwareGemm, Int8Extremes)
{
    GemmCase gc{3, 1000, 5};
    gc.fill = MIN_INT8;
    run_case(make_cfg(8), gc, 21);
    gc = GemmCase{2, 140000, 3};
    gc.fill = MIN_INT8;
    run_case(make_cfg(16), gc, 22);
    gc.flags = FW_GEMM_A_UNSIGNED | FW_GEMM_BIAS;
    run_case(make_cfg(16), gc, 23);
    gc.flags = FW_GEMM_B_TILED | FW_GEMM_RELU; // N = 4: a tiled B takes k x 4 bytes
    run_case(make_cfg(4), gc, 24);
}

// Leading dimensions larger than the widths, and buffers and operands at odd addresses.
TEST(FirmwareGemm, LayoutsAndAlignment)
{
    uint64_t seed = 31;
    for (uint32_t n : kArrays)
        for (uint32_t flags :
             {0u, uint32_t{FW_GEMM_OUT_INT8 | FW_GEMM_RELU}, uint32_t{FW_GEMM_BIAS},
              uint32_t{FW_GEMM_B_TILED | FW_GEMM_A_UNSIGNED | FW_GEMM_BIAS}}) {
            GemmCase gc{2 * n + 3, 3 * n + 1, n + 2, flags, 7, 5, 3, 1};
            run_case(make_cfg(n), gc, seed++);
            gc.misalign = 3;
            gc.pad_a = 1;
            run_case(make_cfg(n), gc, seed++);
        }
}

// Small cores force every branch of the schedule: many M chunks, K split into reloaded blocks,
// only two accumulator buffers, weight FIFOs of one and two tiles.
TEST(FirmwareGemm, SmallCores)
{
    uint64_t seed = 41;
    const tpusim_hwcfg cfgs[] = {
        make_cfg(4, 64, 16, 1),  make_cfg(4, 16, 8, 2),  make_cfg(8, 8, 4, 4),
        make_cfg(8, 300, 64, 3), make_cfg(16, 40, 2, 1), make_cfg(16, 4, 2, 2),
    };
    for (const tpusim_hwcfg &cfg : cfgs)
        for (const GemmCase &gc :
             {GemmCase{37, 45, 19}, GemmCase{5, 200, 33, FW_GEMM_OUT_INT8},
              GemmCase{130, 7, 9, FW_GEMM_BIAS | FW_GEMM_RELU}, GemmCase{1, 1, 1},
              GemmCase{37, 90, 19, FW_GEMM_B_TILED | FW_GEMM_OUT_INT8}})
            run_case(cfg, gc, seed++);
}

// Random shapes, flags, layouts and core configurations (UB and ACC from tiny to roomy).
TEST(FirmwareGemm, RandomCases)
{
    tpu_rng rng{61};
    for (int i = 0; i < 150; i++) {
        const uint32_t n = kArrays[rng_below(&rng, 3)];
        const tpusim_hwcfg cfg =
            make_cfg(n, 4 + rng_below(&rng, 400), 2 + rng_below(&rng, 300), 1 + rng_below(&rng, 5));
        GemmCase gc{1 + rng_below(&rng, 90), 1 + rng_below(&rng, 90), 1 + rng_below(&rng, 90),
                    rng_below(&rng, kInt8Flags + 1)};
        if (rng_chance(&rng, 50)) {
            gc.pad_a = rng_below(&rng, 9);
            gc.pad_b = rng_below(&rng, 9);
            gc.pad_c = rng_below(&rng, 9);
            gc.misalign = rng_below(&rng, 4);
        }
        run_case(cfg, gc, 1000 + i);
    }
}

// Two GEMMs in one stream, the second consuming the first's int8 output: commands run in order.
TEST(FirmwareGemm, ChainedCommands)
{
    const tpusim_hwcfg cfg = make_cfg(8);
    GoldenHal h(cfg);
    tpu_rng rng{51};
    const uint32_t m = 20, k = 30, n1 = 17, n2 = 9;
    // Buffers: 0 input [m x k], 1 W1 [k x n1], 2 hidden int8 [m x n1], 3 params1, 4 W2 [n1 x n2],
    // 5 output int32 [m x n2].
    const std::vector<Buffer> bufs = {{0x1000, m * k},   {0x2000, k * n1},  {0x3000, m * n1},
                                      {0x4000, 12 * n1}, {0x5000, n1 * n2}, {0x6000, 4 * m * n2}};
    uint8_t *mem = h.mem();
    for (int i : {0, 1, 4})
        rng_fill_int8(&rng, reinterpret_cast<int8_t *>(mem + bufs[i].addr), bufs[i].size);
    for (uint32_t j = 0; j < n1; j++) {
        wr32(mem + 0x4000 + 4 * j, static_cast<uint32_t>(rng_range(&rng, -5000, 5000)));
        wr32(mem + 0x4000 + 4 * (n1 + j), 1);
        wr32(mem + 0x4000 + 4 * (2 * n1 + j), 7);
    }
    const GemmCmd g1{FW_GEMM_BIAS | FW_GEMM_RELU | FW_GEMM_OUT_INT8,
                     m,
                     k,
                     n1,
                     0,
                     0,
                     k,
                     1,
                     0,
                     n1,
                     2,
                     0,
                     n1,
                     3,
                     0};
    const GemmCmd g2{0, m, n1, n2, 2, 0, n1, 4, 0, n2, 5, 0, n2, 0, 0};
    std::vector<uint8_t> expect(mem, mem + cfg.mem_size);
    reference(expect.data(), g1, 0x1000, expect.data() + 0x2000, g1.ldb, 0x3000, 0x4000);
    reference(expect.data(), g2, 0x3000, expect.data() + 0x5000, g2.ldb, 0x6000, 0);
    const auto stream = stream_bytes(bufs, {gemm_bytes(g1), gemm_bytes(g2)});
    std::memcpy(expect.data() + 0x8000, stream.data(), stream.size());
    const Outcome r = run_stream(h, stream, 0x8000);
    ASSERT_EQ(r.res.code, FW_OK) << r.res.field;
    EXPECT_EQ(tpusim_golden_sync_count(h.g), 2u);
    expect_memory(h, expect);
}

TEST(FirmwareStream, EmptyStreamJustHalts)
{
    GoldenHal h(make_cfg(8));
    const Outcome r = run_stream(h, stream_bytes({}, {}), 0x100);
    EXPECT_EQ(r.res.code, FW_OK);
    EXPECT_EQ(r.insns, 1u);
    EXPECT_TRUE(r.halted);
    EXPECT_STREQ(r.res.field, "");
}

// ------------------------------------------------------------ validation --

// A valid two-command stream to break one field at a time: command 0 is int32 with bias and
// relu, command 1 int8 output; buffers 0..4 = A, B, C, params, C2.
struct BadStream {
    std::vector<Buffer> bufs = {
        {0x1000, 0x400}, {0x2000, 0x400}, {0x3000, 0x1000}, {0x5000, 0x100}, {0x6000, 0x400}};
    GemmCmd g0{FW_GEMM_BIAS | FW_GEMM_RELU, 8, 16, 8, 0, 0, 16, 1, 0, 8, 2, 0, 8, 3, 0};
    GemmCmd g1{FW_GEMM_OUT_INT8, 8, 16, 8, 0, 0, 16, 1, 0, 8, 4, 0, 8, 3, 0};
    std::vector<uint8_t> bytes() const
    {
        return stream_bytes(bufs, {gemm_bytes(g0), gemm_bytes(g1)});
    }
};

const uint32_t kStreamAt = 0x10000;

// Expects the stream, run on h, to be rejected with code, command index, buffer index and field,
// and no instruction pushed.
void expect_reject_on(GoldenHal &h, const std::vector<uint8_t> &stream, int code, uint32_t cmd,
                      uint32_t buf, const char *field, uint32_t stream_len = 0)
{
    std::memcpy(h.mem() + kStreamAt, stream.data(), stream.size());
    const fw_hal hal = h.hal();
    fw_result res;
    const uint32_t len = stream_len ? stream_len : static_cast<uint32_t>(stream.size());
    EXPECT_EQ(fw_run(&hal, kStreamAt, len, &res), code) << field;
    EXPECT_EQ(res.code, code) << field;
    EXPECT_EQ(res.cmd, cmd) << field;
    EXPECT_EQ(res.buf, buf) << field;
    EXPECT_STREQ(res.field, field);
    EXPECT_STRNE(res.why, "") << field; // what is wrong with it
    EXPECT_EQ(res.insns, 0u) << field;
    EXPECT_TRUE(h.pushed.empty()) << field;
}

void expect_reject(const std::vector<uint8_t> &stream, int code, uint32_t cmd, uint32_t buf,
                   const char *field, uint32_t stream_len = 0)
{
    GoldenHal h(make_cfg(8));
    expect_reject_on(h, stream, code, cmd, buf, field, stream_len);
}

TEST(FirmwareValidation, ValidBaselineRuns)
{
    GoldenHal h(make_cfg(8));
    const Outcome r = run_stream(h, BadStream().bytes(), kStreamAt);
    EXPECT_EQ(r.res.code, FW_OK) << r.res.field;
}

TEST(FirmwareValidation, Header)
{
    const auto good = BadStream().bytes();
    auto s = good;
    put32(s, FW_HDR_MAGIC, 0x31555054);
    expect_reject(s, FW_ERR_HEADER, FW_NO_INDEX, FW_NO_INDEX, "magic");
    s = good;
    put32(s, FW_HDR_VERSION, FW_STREAM_VERSION + 1);
    expect_reject(s, FW_ERR_HEADER, FW_NO_INDEX, FW_NO_INDEX, "version");
    s = good;
    put32(s, FW_HDR_VERSION, 0);
    expect_reject(s, FW_ERR_HEADER, FW_NO_INDEX, FW_NO_INDEX, "version");
    s = good;
    put32(s, FW_HDR_BYTES, static_cast<uint32_t>(s.size() + 4));
    expect_reject(s, FW_ERR_HEADER, FW_NO_INDEX, FW_NO_INDEX, "bytes");
    s = good;
    put32(s, FW_HDR_RESERVED, 1);
    expect_reject(s, FW_ERR_HEADER, FW_NO_INDEX, FW_NO_INDEX, "reserved");
    s = good;
    put32(s, FW_HDR_BUFFERS, 0x10000000);
    expect_reject(s, FW_ERR_HEADER, FW_NO_INDEX, FW_NO_INDEX, "buffers");
    // One command fewer than the bytes hold; one more than they hold.
    s = good;
    put32(s, FW_HDR_COMMANDS, 1);
    expect_reject(s, FW_ERR_HEADER, FW_NO_INDEX, FW_NO_INDEX, "commands");
    s = good;
    put32(s, FW_HDR_COMMANDS, 3);
    expect_reject(s, FW_ERR_COMMAND, 2, FW_NO_INDEX, "bytes");
    // The stream argument: shorter than a header, shorter than the header says, past memory.
    expect_reject(good, FW_ERR_HEADER, FW_NO_INDEX, FW_NO_INDEX, "bytes", FW_HEADER_BYTES - 1);
    expect_reject(good, FW_ERR_HEADER, FW_NO_INDEX, FW_NO_INDEX, "bytes",
                  static_cast<uint32_t>(good.size() - 4));
    expect_reject(good, FW_ERR_HEADER, FW_NO_INDEX, FW_NO_INDEX, "bytes", kMemSize - kStreamAt + 4);
}

TEST(FirmwareValidation, BufferTable)
{
    BadStream b;
    b.bufs[3].size = 0;
    expect_reject(b.bytes(), FW_ERR_BUFFER, FW_NO_INDEX, 3, "size");
    b = BadStream();
    b.bufs[4] = {kMemSize - 0x100, 0x101}; // one byte past memory
    expect_reject(b.bytes(), FW_ERR_BUFFER, FW_NO_INDEX, 4, "size");
    b = BadStream();
    b.bufs[1].addr = kMemSize;
    expect_reject(b.bytes(), FW_ERR_BUFFER, FW_NO_INDEX, 1, "addr");
    b = BadStream();
    b.bufs[0] = {0xfffffff0u, 0x20}; // wraps 32 bits
    expect_reject(b.bytes(), FW_ERR_BUFFER, FW_NO_INDEX, 0, "addr");
}

TEST(FirmwareValidation, CommandHeader)
{
    const auto good = BadStream().bytes();
    const size_t cmd1 = FW_HEADER_BYTES + 5 * FW_BUFFER_BYTES + FW_GEMM_BYTES;
    auto s = good;
    put32(s, cmd1, 7 | FW_GEMM_BYTES << 16);
    expect_reject(s, FW_ERR_COMMAND, 1, FW_NO_INDEX, "op");
    s = good;
    put32(s, cmd1, FW_CMD_GEMM | 62 << 16); // not a multiple of 4
    expect_reject(s, FW_ERR_COMMAND, 1, FW_NO_INDEX, "bytes");
    s = good;
    put32(s, cmd1, FW_CMD_GEMM | 2 << 16); // shorter than the command header
    expect_reject(s, FW_ERR_COMMAND, 1, FW_NO_INDEX, "bytes");
    s = good;
    put32(s, cmd1, FW_CMD_GEMM | 68 << 16); // past the end
    expect_reject(s, FW_ERR_COMMAND, 1, FW_NO_INDEX, "bytes");
    // A longer GEMM (within the stream) is not version 1's GEMM.
    s = good;
    s.resize(s.size() + 4);
    put32(s, FW_HDR_BYTES, static_cast<uint32_t>(s.size()));
    put32(s, cmd1, FW_CMD_GEMM | 68 << 16);
    expect_reject(s, FW_ERR_COMMAND, 1, FW_NO_INDEX, "bytes");
}

// Makes a valid command's B tiled.
void tile_b(GemmCmd &g)
{
    g.flags |= FW_GEMM_B_TILED;
    g.ldb = 0;
}

// Breaks one GEMM field of command `which` and expects it named.
void expect_gemm_reject(int which, void (*breaker)(GemmCmd &), const char *field,
                        void (*buffers)(std::vector<Buffer> &) = nullptr)
{
    BadStream b;
    breaker(which ? b.g1 : b.g0);
    if (buffers)
        buffers(b.bufs);
    expect_reject(b.bytes(), FW_ERR_COMMAND, static_cast<uint32_t>(which), FW_NO_INDEX, field);
}

TEST(FirmwareValidation, GemmFields)
{
    for (int w = 0; w < 2; w++) {
        expect_gemm_reject(
            w, [](GemmCmd &g) { g.flags |= 32; }, "flags");
        expect_gemm_reject(
            w, [](GemmCmd &g) { g.flags |= 0x80000000u; }, "flags");
        expect_gemm_reject(
            w, [](GemmCmd &g) { g.m = 0; }, "m");
        expect_gemm_reject(
            w, [](GemmCmd &g) { g.k = 0; }, "k");
        expect_gemm_reject(
            w, [](GemmCmd &g) { g.n = 0; }, "n");
        expect_gemm_reject(
            w, [](GemmCmd &g) { g.a_buf = 5; }, "a.buf");
        expect_gemm_reject(
            w, [](GemmCmd &g) { g.a_buf = 0xffffffffu; }, "a.buf");
        expect_gemm_reject(
            w, [](GemmCmd &g) { g.lda = 15; }, "lda");
        expect_gemm_reject(
            w, [](GemmCmd &g) { g.a_off = 0x400 - 127; }, "a.off"); // 1 byte over
        expect_gemm_reject(
            w, [](GemmCmd &g) { g.a_off = 0xffffffffu; }, "a.off");
        expect_gemm_reject(
            w, [](GemmCmd &g) { g.m = 65; }, "a.off"); // 65 x 16 > 0x400
        expect_gemm_reject(
            w, [](GemmCmd &g) { g.lda = 0x80000000u; }, "a.off");
        expect_gemm_reject(
            w,
            [](GemmCmd &g) {
                g.m = 0xffffffffu;
                g.lda = 0xffffffffu;
            },
            "a.off");
        expect_gemm_reject(
            w, [](GemmCmd &g) { g.b_buf = 9; }, "b.buf");
        expect_gemm_reject(
            w, [](GemmCmd &g) { g.ldb = 7; }, "ldb");
        expect_gemm_reject(
            w, [](GemmCmd &g) { g.b_off = 0x400 - 127; }, "b.off");
        expect_gemm_reject(
            w,
            [](GemmCmd &g) {
                g.m = 1;
                g.k = g.lda = 200;
            },
            "b.off"); // 1600 B
        // Tiled B (N = 8): ldb must be 0 (checked before b.buf); 16 x 8 is two tiles, 128 bytes;
        // 16 x 9 is four.
        expect_gemm_reject(
            w, [](GemmCmd &g) { g.flags |= FW_GEMM_B_TILED; }, "ldb");
        expect_gemm_reject(
            w,
            [](GemmCmd &g) {
                g.flags |= FW_GEMM_B_TILED;
                g.b_buf = 9;
            },
            "ldb");
        expect_gemm_reject(
            w,
            [](GemmCmd &g) {
                tile_b(g);
                g.b_buf = 9;
            },
            "b.buf");
        expect_gemm_reject(
            w,
            [](GemmCmd &g) {
                tile_b(g);
                g.b_off = 0x400 - 127;
            },
            "b.off");
        expect_gemm_reject(
            w,
            [](GemmCmd &g) {
                tile_b(g);
                g.n = g.ldc = 9;
                g.b_off = 0x400 - 255;
            },
            "b.off");
        expect_gemm_reject(
            w, [](GemmCmd &g) { g.c_buf = 5; }, "c.buf");
        expect_gemm_reject(
            w, [](GemmCmd &g) { g.ldc = 7; }, "ldc");
        expect_gemm_reject(
            w, [](GemmCmd &g) { g.c_off = 0x1000; }, "c.off");
        expect_gemm_reject(
            w, [](GemmCmd &g) { g.p_buf = 5; }, "params.buf");
        expect_gemm_reject(
            w, [](GemmCmd &g) { g.p_off = 0x100 - 95; }, "params.off"); // 12*8 = 96
        expect_gemm_reject(
            w, [](GemmCmd &g) { g.c_buf = 0; }, "c overlaps a");
        expect_gemm_reject(
            w, [](GemmCmd &g) { g.c_buf = 1; }, "c overlaps b");
        expect_gemm_reject(
            w, [](GemmCmd &g) { g.c_buf = 3; }, "c overlaps params");
    }
    // int32 output: the row pitch in bytes must fit the WR_HOST stride, and the C extent is 4
    // bytes per element.
    expect_gemm_reject(
        0,
        [](GemmCmd &g) {
            g.ldc = 0x40000000u;
            g.m = 1;
        },
        "ldc");
    expect_gemm_reject(
        0,
        [](GemmCmd &g) {
            g.c_buf = 4;
            g.ldc = 40;
        },
        "c.off"); // 1152 bytes
    {
        BadStream b;
        b.g1.ldc = 40; // the same layout in int8 fits buffer 4
        GoldenHal h(make_cfg(8));
        EXPECT_EQ(run_stream(h, b.bytes(), kStreamAt).res.code, FW_OK);
    }
    // Params fields must be zero when no params are used.
    expect_gemm_reject(
        0,
        [](GemmCmd &g) {
            g.flags = 0;
            g.p_buf = 0;
            g.p_off = 4;
        },
        "params.off");
    expect_gemm_reject(
        0, [](GemmCmd &g) { g.flags = FW_GEMM_RELU; }, "params.buf");
    // Overlaps through different buffers that alias: a byte of C inside A.
    expect_gemm_reject(
        1, [](GemmCmd &) {}, "c overlaps a",
        [](std::vector<Buffer> &b) {
            b[4] = {0x1000 + 127, 0x400};
        });
    // Adjacent (not overlapping) is fine: checked by running it.
    {
        BadStream b;
        b.bufs[4] = {0x1000 + 128, 0x40};
        b.bufs[0].size = 128;
        GoldenHal h(make_cfg(8));
        EXPECT_EQ(run_stream(h, b.bytes(), kStreamAt).res.code, FW_OK);
    }
    // Output over the stream itself.
    expect_gemm_reject(
        1, [](GemmCmd &) {}, "c overlaps stream",
        [](std::vector<Buffer> &b) {
            b[4] = {kStreamAt - 8, 0x400};
        });
    // A tiled B that just fits, and one overlapping C by its padding alone.
    {
        BadStream b;
        tile_b(b.g0);
        b.g0.b_off = 0x400 - 128;
        GoldenHal h(make_cfg(8));
        EXPECT_EQ(run_stream(h, b.bytes(), kStreamAt).res.code, FW_OK);
    }
    expect_gemm_reject(
        0,
        [](GemmCmd &g) {
            tile_b(g);
            g.n = 7;
            g.c_buf = 1;
            g.c_off = 0x7f;
        },
        "c overlaps b", [](std::vector<Buffer> &b) { b[1].size = 0x1000; });
}

// A tiled B whose padded sides reach 2^32 (N = 8, k = n = 2^32 - 1): its size, 2^64, must not wrap
// to zero and pass the buffer check. MEM_SIZE claims 4 GiB so that such buffers are declarable.
TEST(FirmwareValidation, TiledExtentDoesNotWrap)
{
    GoldenHal h(make_cfg(8));
    h.regs[TPU_CSR_MEM_SIZE] = 0xffffffffu;
    const GemmCmd g{FW_GEMM_B_TILED,
                    1,
                    0xffffffffu,
                    0xffffffffu,
                    0,
                    0,
                    0xffffffffu,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0xffffffffu,
                    0,
                    0};
    expect_reject_on(h, stream_bytes({{0, 0xffffffffu}}, {gemm_bytes(g)}), FW_ERR_COMMAND, 0,
                     FW_NO_INDEX, "b.off");
}

TEST(FirmwareValidation, Hardware)
{
    const auto stream = BadStream().bytes();
    const std::pair<uint32_t, uint32_t> bad[] = {
        {TPU_CSR_ID, 0x54505532}, {TPU_CSR_VERSION, 0x00020000}, {TPU_CSR_ARRAY_N, 0},
        {TPU_CSR_ARRAY_N, 1024},  {TPU_CSR_UB_ROWS, 3},          {TPU_CSR_UB_ROWS, (1u << 20) + 1},
        {TPU_CSR_ACC_ROWS, 1},    {TPU_CSR_ACC_ROWS, 1u << 21},  {TPU_CSR_WFIFO_TILES, 0},
    };
    const char *names[] = {"ID",      "VERSION",  "ARRAY_N",  "ARRAY_N",    "UB_ROWS",
                           "UB_ROWS", "ACC_ROWS", "ACC_ROWS", "WFIFO_TILES"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        GoldenHal h(make_cfg(8));
        h.regs[bad[i].first] = bad[i].second;
        std::memcpy(h.mem() + kStreamAt, stream.data(), stream.size());
        const fw_hal hal = h.hal();
        fw_result res;
        EXPECT_EQ(fw_run(&hal, kStreamAt, static_cast<uint32_t>(stream.size()), &res), FW_ERR_HW);
        EXPECT_STREQ(res.field, names[i]);
        EXPECT_STRNE(res.why, "") << names[i];
        EXPECT_TRUE(h.pushed.empty());
    }
    // A newer minor version is fine.
    GoldenHal h(make_cfg(8));
    h.regs[TPU_CSR_VERSION] = TPU_VERSION + 1;
    EXPECT_EQ(run_stream(h, stream, kStreamAt).res.code, FW_OK);
}

// The core already stopped, or stopping while commands are being expanded.
TEST(FirmwareValidation, CoreErrors)
{
    const auto stream = BadStream().bytes();
    {
        GoldenHal h(make_cfg(8));
        h.error = TPU_FAULT_UB_RANGE;
        const Outcome r = run_stream(h, stream, kStreamAt);
        EXPECT_EQ(r.res.code, FW_ERR_CORE);
        EXPECT_EQ(r.res.core_error, uint32_t{TPU_FAULT_UB_RANGE});
        EXPECT_EQ(r.res.cmd, FW_NO_INDEX);
        EXPECT_STREQ(r.res.field, "STATUS");
        EXPECT_EQ(r.insns, 0u);
    }
    GoldenHal ok(make_cfg(8));
    const size_t total = run_stream(ok, stream, kStreamAt).insns;
    // A fault in command 1's instructions; at its SYNC, so that the refused push is the HALT.
    for (size_t at : {total - 3, total - 2}) {
        GoldenHal h(make_cfg(8));
        h.fail_after = at;
        const Outcome r = run_stream(h, stream, kStreamAt);
        EXPECT_EQ(r.res.code, FW_ERR_CORE);
        EXPECT_EQ(r.res.core_error, uint32_t{TPU_FAULT_MEM_FAULT});
        EXPECT_EQ(r.res.cmd, at == total - 2 ? FW_NO_INDEX : 1u);
        EXPECT_STREQ(r.res.field, "STATUS");
        EXPECT_EQ(r.insns, at + 1);
    }
}

// The control processor's reads fail inside MEM_SIZE: reported, nothing pushed.
TEST(FirmwareValidation, MemoryReadFault)
{
    const auto stream = BadStream().bytes();
    GoldenHal h(make_cfg(8));
    h.readable = kStreamAt + stream.size() - 8;
    const Outcome r = run_stream(h, stream, kStreamAt);
    EXPECT_EQ(r.res.code, FW_ERR_MEM);
    EXPECT_STREQ(r.res.field, "stream");
    EXPECT_EQ(r.insns, 0u);
}

} // namespace

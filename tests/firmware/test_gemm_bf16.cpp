// test_gemm_bf16.cpp - the firmware's bf16 GEMM (FW_GEMM_BF16, stream version 3) driving the
// golden model through a HAL: C bit for bit against bf16_ref.h's plain loop on shapes around the
// array size (K = 1, tails of at most N/2), edge values, bias and ReLU, fp32 and bf16 output, B
// row-major and tiled, small cores; and the validation of the flags and their stream version.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "firmware/firmware.h"
#include "sim/tpusim.h"
#include "tests/support/bf16_ref.h"
#include "tests/support/fp_values.h"
#include "tests/support/fw_test.h"
#include "tests/support/progs.h"

namespace
{

using namespace fw_test;

uint16_t rd16(const uint8_t *p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }

void wr16(uint8_t *p, uint16_t x)
{
    p[0] = static_cast<uint8_t>(x);
    p[1] = static_cast<uint8_t>(x >> 8);
}

enum Fill { RANDOM, EDGES };

struct Bf16Case {
    uint32_t m, k, n;
    uint32_t flags = 0; // FW_GEMM_BF16 is added
    uint32_t pad_a = 0, pad_b = 0, pad_c = 0, misalign = 0;
    Fill fill = RANDOM;
};

// bf16 operand values: rng_bf16 (edge values 1/8 of the time), or with EDGES mostly edge values,
// and cancelling pairs (x, -x) so that sums meet +-0 and inf - inf.
uint16_t value(tpu_rng *rng, Fill fill)
{
    if (fill == EDGES && rng_chance(rng, 60))
        return bf16_edges[rng_below(rng, static_cast<uint32_t>(bf16_edge_count))];
    return rng_bf16(rng);
}

// Lays the case out (one buffer per operand, then the stream) over junk, runs the firmware and
// checks all of memory: C's elements as the reference has them, nothing else touched; and that
// every memory access stays inside its operand.
void run_case(const tpusim_hwcfg &cfg, const Bf16Case &bc, uint64_t seed)
{
    SCOPED_TRACE(::testing::Message()
                 << "N=" << cfg.array_n << " ub=" << cfg.ub_rows << " acc=" << cfg.acc_rows
                 << " wf=" << cfg.wfifo_tiles << " m=" << bc.m << " k=" << bc.k << " n=" << bc.n
                 << " flags=" << bc.flags << " seed=" << seed);
    GoldenHal h(cfg);
    ASSERT_NE(h.g, nullptr);
    tpu_rng rng{seed};
    const uint32_t flags = bc.flags | FW_GEMM_BF16, t = cfg.array_n;
    const bool tiled = flags & FW_GEMM_B_TILED, bias = flags & FW_GEMM_BIAS;
    const uint32_t out_size = flags & FW_GEMM_OUT_BF16 ? 2 : 4;
    GemmCmd g{flags,
              bc.m,
              bc.k,
              bc.n,
              0,
              bc.misalign,
              bc.k + bc.pad_a,
              1,
              bc.misalign,
              tiled ? 0 : bc.n + bc.pad_b,
              2,
              bc.misalign,
              bc.n + bc.pad_c,
              0,
              0};
    const uint32_t kt = (g.k + t - 1) / t, nt = (g.n + t - 1) / t;
    const uint64_t sizes[4] = {
        ((uint64_t{g.m} - 1) * g.lda + g.k) * 2,
        tiled ? uint64_t{kt} * nt * t * t * 2 : ((uint64_t{g.k} - 1) * g.ldb + g.n) * 2,
        ((uint64_t{g.m} - 1) * g.ldc + g.n) * out_size, bias ? 4 * uint64_t{g.n} : 0};
    std::vector<Buffer> bufs;
    uint64_t at = 64;
    for (uint64_t size : sizes) {
        if (!size)
            continue;
        bufs.push_back({static_cast<uint32_t>(at + bc.misalign),
                        static_cast<uint32_t>(size + 2 * bc.misalign)});
        at = (at + size + 3 * bc.misalign + 127) & ~uint64_t{63};
    }
    if (bias) {
        g.p_buf = 3;
        g.p_off = bc.misalign;
    }
    const auto stream = stream_bytes(bufs, {gemm_bytes(g)});
    ASSERT_LE(at + stream.size(), cfg.mem_size);
    uint8_t *mem = h.mem();
    // Junk everywhere (inf and NaN among it, in the gaps and between rows too), then the operands.
    for (uint64_t i = 0; i < at; i += 2)
        wr16(mem + i, value(&rng, EDGES));
    const uint32_t a = bufs[0].addr + bc.misalign, b = bufs[1].addr + bc.misalign;
    const uint32_t c = bufs[2].addr + bc.misalign, p = bias ? bufs[3].addr + bc.misalign : 0;
    std::vector<uint16_t> bv(size_t{g.k} * g.n); // B row-major, pitch n
    for (uint32_t i = 0; i < g.m; i++)
        for (uint32_t r = 0; r < g.k; r++)
            wr16(mem + a + (uint64_t{i} * g.lda + r) * 2, value(&rng, bc.fill));
    for (uint16_t &x : bv)
        x = value(&rng, bc.fill);
    if (bc.fill == EDGES) // cancellation: B's last row is minus its first
        for (uint32_t j = 0; g.k > 1 && j < g.n; j++)
            bv[size_t{g.k - 1} * g.n + j] = static_cast<uint16_t>(bv[j] ^ 0x8000);
    for (uint32_t r = 0; r < g.k; r++)
        for (uint32_t j = 0; j < g.n; j++) {
            const uint64_t off =
                tiled ? ((uint64_t{j / t} * kt + r / t) * t * t + r % t * t + j % t) * 2
                      : (uint64_t{r} * g.ldb + j) * 2;
            wr16(mem + b + off, bv[size_t{r} * g.n + j]);
        }
    for (uint32_t j = 0; j < g.n && bias; j++)
        wr32(mem + p + 4 * j, rng_fp32(&rng));
    // So does the UB (an earlier program's inf and NaN), and a tiled B's padding: neither may
    // reach C.
    for (uint32_t row = 0; row < cfg.ub_rows; row++)
        for (uint32_t i = 0; i < t; i += 2)
            wr16(reinterpret_cast<uint8_t *>(tpusim_golden_ub(h.g, row)) + i, value(&rng, EDGES));
    std::vector<uint8_t> expect(mem, mem + cfg.mem_size);
    std::memcpy(expect.data() + at, stream.data(), stream.size());
    auto av = [&](uint32_t i, uint32_t r) { return rd16(mem + a + (uint64_t{i} * g.lda + r) * 2); };
    auto bval = [&](uint32_t r, uint32_t j) { return bv[size_t{r} * g.n + j]; };
    for (uint32_t i = 0; i < g.m; i++)
        for (uint32_t j = 0; j < g.n; j++) {
            const uint32_t x =
                bf16_ref::gemm_elem(av, bval, g.k, t, i, j, bias, bias ? rd32(mem + p + 4 * j) : 0,
                                    flags & FW_GEMM_RELU);
            uint8_t *out = expect.data() + c + (uint64_t{i} * g.ldc + j) * out_size;
            if (out_size == 2)
                wr16(out, tpusim_fp32_to_bf16(x));
            else
                wr32(out, x);
        }
    const Outcome r = run_stream(h, stream, static_cast<uint32_t>(at));
    ASSERT_EQ(r.res.code, FW_OK) << r.res.field << ": " << r.res.why;
    expect_memory(h, expect);
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
    }
}

const uint32_t kArrays[] = {4, 8, 16};
const uint32_t kFlags[] = {0,
                           FW_GEMM_BIAS,
                           FW_GEMM_RELU | FW_GEMM_OUT_BF16,
                           FW_GEMM_B_TILED | FW_GEMM_BIAS | FW_GEMM_RELU,
                           FW_GEMM_B_TILED | FW_GEMM_OUT_BF16,
                           FW_GEMM_BIAS | FW_GEMM_RELU | FW_GEMM_OUT_BF16};

// Every combination of dimensions around the array size and its half (a K tail of at most N/2
// rows is loaded apart, an output tile of at most N/2 columns staged apart), cycling the flags.
TEST(FirmwareGemmBf16, EdgeShapes)
{
    uint64_t seed = 1;
    for (uint32_t n : kArrays) {
        const uint32_t dims[] = {1, n / 2, n / 2 + 1, n, n + 1, 2 * n + n / 2, 3 * n + 5};
        for (uint32_t m : dims)
            for (uint32_t k : dims)
                for (uint32_t nc : dims) {
                    Bf16Case bc{m, k, nc, kFlags[seed % 6]};
                    run_case(make_cfg(n), bc, seed++);
                }
    }
}

// Mostly edge values: +-0, +-inf, NaNs, subnormals, the largest finite values, cancellations.
TEST(FirmwareGemmBf16, EdgeValues)
{
    uint64_t seed = 101;
    for (uint32_t n : kArrays)
        for (uint32_t flags : kFlags)
            for (uint32_t k : {1u, n / 2, n, 2 * n + 1}) {
                Bf16Case bc{n + 3, k, 2 * n - 1, flags};
                bc.fill = EDGES;
                run_case(make_cfg(n), bc, seed++);
            }
}

// Leading dimensions larger than the widths, and buffers and operands at odd addresses.
TEST(FirmwareGemmBf16, LayoutsAndAlignment)
{
    uint64_t seed = 201;
    for (uint32_t n : kArrays)
        for (uint32_t flags : kFlags) {
            Bf16Case bc{2 * n + 3, 3 * n + 1, n + 2, flags, 7, 5, 3, 1};
            run_case(make_cfg(n), bc, seed++);
            bc.misalign = 3;
            bc.k = n / 2 + 2 * n; // a short tail with a pitch
            run_case(make_cfg(n), bc, seed++);
        }
}

// Small cores: many M chunks, K in reloaded blocks (the short tail in the last), two
// accumulator buffers, one- and two-tile weight FIFOs; the smallest UB a bf16 GEMM runs on.
TEST(FirmwareGemmBf16, SmallCores)
{
    uint64_t seed = 301;
    const tpusim_hwcfg cfgs[] = {
        make_cfg(4, 64, 16, 1),  make_cfg(4, 16, 8, 2),  make_cfg(8, 12, 4, 4),
        make_cfg(8, 300, 64, 3), make_cfg(16, 40, 2, 1), make_cfg(4, 8, 2, 2),
    };
    for (const tpusim_hwcfg &cfg : cfgs)
        for (const Bf16Case &bc :
             {Bf16Case{37, 45, 19}, Bf16Case{5, 201, 33, FW_GEMM_OUT_BF16},
              Bf16Case{130, 7, 9, FW_GEMM_BIAS | FW_GEMM_RELU}, Bf16Case{1, 1, 1},
              Bf16Case{37, 90, 19, FW_GEMM_B_TILED | FW_GEMM_OUT_BF16}})
            run_case(cfg, bc, seed++);
}

TEST(FirmwareGemmBf16, LargerShapes)
{
    run_case(make_cfg(16), {257, 300, 129, FW_GEMM_BIAS}, 401);
    run_case(make_cfg(8), {257, 257, 257, FW_GEMM_B_TILED | FW_GEMM_OUT_BF16}, 402);
    run_case(make_cfg(4), {1, 1000, 3, FW_GEMM_RELU}, 403);
    run_case(make_cfg(16), {1000, 1, 40, FW_GEMM_BIAS | FW_GEMM_RELU | FW_GEMM_OUT_BF16}, 404);
}

// Random shapes, flags, layouts and core configurations.
TEST(FirmwareGemmBf16, RandomCases)
{
    tpu_rng rng{501};
    for (int i = 0; i < 100; i++) {
        const uint32_t n = kArrays[rng_below(&rng, 3)];
        const tpusim_hwcfg cfg =
            make_cfg(n, 8 + rng_below(&rng, 400), 2 + rng_below(&rng, 300), 1 + rng_below(&rng, 5));
        Bf16Case bc{1 + rng_below(&rng, 70), 1 + rng_below(&rng, 70), 1 + rng_below(&rng, 70),
                    kFlags[rng_below(&rng, 6)]};
        if (rng_chance(&rng, 50)) {
            bc.pad_a = rng_below(&rng, 9);
            bc.pad_b = rng_below(&rng, 9);
            bc.pad_c = rng_below(&rng, 9);
            bc.misalign = rng_below(&rng, 4);
        }
        if (rng_chance(&rng, 30))
            bc.fill = EDGES;
        run_case(cfg, bc, 1000 + i);
    }
}

// ------------------------------------------------------------ validation --

// A valid bf16 GEMM (8 x 16 . 16 x 8, bias) whose fields a test breaks; buffers A, B, C, params.
struct Bf16Stream {
    std::vector<Buffer> bufs = {{0x1000, 0x100}, {0x2000, 0x100}, {0x3000, 0x100}, {0x5000, 0x20}};
    GemmCmd g{FW_GEMM_BF16 | FW_GEMM_BIAS, 8, 16, 8, 0, 0, 16, 1, 0, 8, 2, 0, 8, 3, 0};
    uint32_t version = FW_STREAM_VERSION;
    std::vector<uint8_t> bytes() const
    {
        auto s = stream_bytes(bufs, {gemm_bytes(g)});
        put32(s, FW_HDR_VERSION, version);
        return s;
    }
};

const uint32_t kStreamAt = 0x10000;

// Runs the stream on a core of array size 8 (ub_rows UB rows): FW_OK, or the command's field
// rejected with nothing pushed.
void expect_run(const Bf16Stream &b, const char *field, uint32_t ub_rows = 16384)
{
    SCOPED_TRACE(field);
    GoldenHal h(make_cfg(8, ub_rows));
    const auto s = b.bytes();
    std::memcpy(h.mem() + kStreamAt, s.data(), s.size());
    const fw_hal hal = h.hal();
    fw_result res;
    const int want = *field ? FW_ERR_COMMAND : FW_OK;
    EXPECT_EQ(fw_run(&hal, kStreamAt, static_cast<uint32_t>(s.size()), &res), want);
    EXPECT_STREQ(res.field, field);
    if (want != FW_OK) {
        EXPECT_EQ(res.cmd, 0u);
        EXPECT_STRNE(res.why, "");
        EXPECT_TRUE(h.pushed.empty());
    }
}

TEST(FirmwareGemmBf16, Validation)
{
    expect_run(Bf16Stream(), "");
    // The flags: BF16 and OUT_BF16 are version 3's; the combinations that are invalid.
    for (uint32_t version : {1u, 2u}) {
        Bf16Stream b;
        b.version = version;
        expect_run(b, "flags");
        b.g.flags = FW_GEMM_OUT_BF16;
        expect_run(b, "flags");
        b.g.flags = 0;
        b.g.p_buf = 0;
        expect_run(b, ""); // an int8 GEMM of the same fields runs
    }
    Bf16Stream b;
    b.g.flags |= FW_GEMM_A_UNSIGNED;
    expect_run(b, "flags");
    b = Bf16Stream();
    b.g.flags |= FW_GEMM_OUT_INT8;
    expect_run(b, "flags");
    b = Bf16Stream();
    b.g.flags = FW_GEMM_OUT_BF16 | FW_GEMM_BIAS;
    expect_run(b, "flags");
    b = Bf16Stream();
    b.g.flags |= 1u << 5; // CONV2D's POOLING
    expect_run(b, "flags");
    // The smallest UB: two A row pairs, and two staging pairs for bf16 output.
    b = Bf16Stream();
    expect_run(b, "", 4);
    b.g.flags |= FW_GEMM_OUT_BF16;
    expect_run(b, "", 8);
    expect_run(b, "flags", 7);
    // Extents in 2-byte elements: A 8 x 16 and B 16 x 8 fill their 0x100 bytes; C (fp32) needs
    // 0x100 and the bias 0x20.
    const char *const offs[] = {"a.off", "b.off", "c.off", "params.off"};
    for (int which = 0; which < 4; which++) {
        b = Bf16Stream();
        b.bufs[which].size--;
        expect_run(b, offs[which]);
    }
    b = Bf16Stream();
    b.g.flags |= FW_GEMM_OUT_BF16;
    b.bufs[2].size = 0x80;
    expect_run(b, "");
    b.bufs[2].size--;
    expect_run(b, "c.off");
    b = Bf16Stream();
    b.g.flags |= FW_GEMM_B_TILED; // 2 x 1 tiles of 8 x 16 bytes
    b.g.ldb = 0;
    expect_run(b, "");
    b.bufs[1].size--;
    expect_run(b, "b.off");
    b = Bf16Stream();
    b.g.ldc = 0x7fffffffu;
    b.bufs[2].size = 0xffff;
    expect_run(b, "ldc"); // 4-byte fp32 elements
    b.g.flags |= FW_GEMM_OUT_BF16;
    expect_run(b, "c.off"); // 2-byte bf16 elements: the pitch fits, the extent does not
}

} // namespace

// test_reduce.cpp - the firmware's REDUCE (stream version 4) driving the golden model through a
// HAL: the sums bit for bit against a plain C fold in source order (fp32 with subnormals
// flushed and NaN canonical, as docs/isa.md's fp32_add; int32 wrapping) for 1..8 sources, in
// place and to separate destinations, on element counts around the array size and across
// accumulator chunks, with fp32 edge values; every access inside its operand; the validation.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "firmware/firmware.h"
#include "sim/tpusim.h"
#include "tests/support/fp_values.h"
#include "tests/support/fw_test.h"
#include "tests/support/progs.h"

namespace
{

using namespace fw_test;

// x + y as the fold the command promises, in plain C: operands and result below 2^-126 are
// zeros of their sign, every NaN is 7FC00000, the add itself is the host's (round to nearest
// even).
uint32_t fold_add(uint32_t x, uint32_t y)
{
    auto value = [](uint32_t b) {
        if ((b & 0x7f800000u) == 0)
            b &= 0x80000000u;
        float f;
        std::memcpy(&f, &b, 4);
        return f;
    };
    const float s = value(x) + value(y);
    uint32_t b;
    std::memcpy(&b, &s, 4);
    if (s != s)
        return 0x7fc00000u;
    return (b & 0x7f800000u) == 0 ? b & 0x80000000u : b;
}

struct ReduceCmd {
    uint32_t flags, elements;
    std::vector<Buffer> src, dst; // (buffer index, offset) as addr, size
};

std::vector<uint8_t> reduce_bytes(const ReduceCmd &r)
{
    const uint32_t n = static_cast<uint32_t>(r.src.size() + r.dst.size());
    std::vector<uint8_t> v(FW_REDUCE_OPERANDS + FW_REDUCE_OPERAND_BYTES * n);
    put32(v, 0, FW_CMD_REDUCE | static_cast<uint32_t>(v.size()) << 16);
    put32(v, FW_REDUCE_FLAGS, r.flags);
    put32(v, FW_REDUCE_ELEMENTS, r.elements);
    put32(v, FW_REDUCE_SOURCES, static_cast<uint32_t>(r.src.size()));
    put32(v, FW_REDUCE_DESTINATIONS, static_cast<uint32_t>(r.dst.size()));
    for (uint32_t i = 0; i < n; i++) {
        const Buffer &o = i < r.src.size() ? r.src[i] : r.dst[i - r.src.size()];
        put32(v, FW_REDUCE_OPERANDS + FW_REDUCE_OPERAND_BYTES * i, o.addr);
        put32(v, FW_REDUCE_OPERANDS + FW_REDUCE_OPERAND_BYTES * i + 4, o.size);
    }
    return v;
}

struct Case {
    uint32_t sources, elements;
    bool f32 = true;
    bool in_place = true; // destinations are the sources; else as many buffers apart
    bool edges = false;   // fp32: mostly edge values and their neighbours
};

// One buffer per source (and destination) with a margin of junk around, the stream after them;
// all of memory checked: each destination holds the fold, nothing else changed.
void run_case(const tpusim_hwcfg &cfg, const Case &c, uint64_t seed)
{
    SCOPED_TRACE(::testing::Message()
                 << "N=" << cfg.array_n << " acc=" << cfg.acc_rows << " R=" << c.sources
                 << " E=" << c.elements << " f32=" << c.f32 << " in_place=" << c.in_place
                 << " edges=" << c.edges << " seed=" << seed);
    GoldenHal h(cfg);
    ASSERT_NE(h.g, nullptr);
    tpu_rng rng{seed};
    const uint32_t bytes = 4 * c.elements, dests = c.sources;
    std::vector<Buffer> bufs;
    uint64_t at = 64;
    for (uint32_t i = 0; i < c.sources + (c.in_place ? 0 : dests); i++) {
        bufs.push_back({static_cast<uint32_t>(at), bytes + 8});
        at = (at + bytes + 8 + 64 + 63) & ~uint64_t{63};
    }
    ReduceCmd cmd{c.f32 ? uint32_t{FW_REDUCE_F32} : 0u, c.elements, {}, {}};
    for (uint32_t i = 0; i < c.sources; i++)
        cmd.src.push_back({i, 4});
    for (uint32_t d = 0; d < dests; d++)
        cmd.dst.push_back({c.in_place ? d : c.sources + d, 4});
    const auto stream = stream_bytes(bufs, {reduce_bytes(cmd)});
    ASSERT_LE(at + stream.size(), cfg.mem_size);
    uint8_t *mem = h.mem();
    rng_fill(&rng, mem, at);
    for (uint32_t i = 0; i < c.sources && c.f32; i++)
        for (uint32_t e = 0; e < c.elements; e++) {
            uint8_t *p = mem + bufs[i].addr + 4 + 4 * e;
            const uint32_t x0 = rd32(mem + bufs[0].addr + 4 + 4 * e);
            wr32(p, c.edges
                        ? (i ? rng_fp32_near(&rng, x0)
                             : fp32_edges[rng_below(&rng, static_cast<uint32_t>(fp32_edge_count))])
                        : rng_fp32(&rng));
        }
    std::vector<uint8_t> expect(mem, mem + cfg.mem_size);
    std::memcpy(expect.data() + at, stream.data(), stream.size());
    for (uint32_t e = 0; e < c.elements; e++) {
        uint32_t s = rd32(mem + bufs[0].addr + 4 + 4 * e);
        for (uint32_t i = 1; i < c.sources; i++) {
            const uint32_t x = rd32(mem + bufs[i].addr + 4 + 4 * e);
            s = c.f32 ? fold_add(s, x) : s + x;
        }
        for (const Buffer &d : cmd.dst)
            wr32(expect.data() + bufs[d.addr].addr + 4 + 4 * e, s);
    }
    const Outcome r = run_stream(h, stream, static_cast<uint32_t>(at));
    ASSERT_EQ(r.res.code, FW_OK) << r.res.field << ": " << r.res.why;
    expect_memory(h, expect);
    // Every RD_ACC reads inside a source, every WR_HOST writes inside a destination.
    for (size_t i = 0; i < h.pushed.size(); i++) {
        const tpusim_fields f = tpusim_decode(&h.pushed[i]);
        if (f.op != TPU_OP_RD_ACC && f.op != TPU_OP_WR_HOST)
            continue;
        const uint64_t end = f.a + uint64_t{f.rows - 1} * f.stride + f.len;
        const std::vector<Buffer> &ops = f.op == TPU_OP_RD_ACC ? cmd.src : cmd.dst;
        bool inside = false;
        for (const Buffer &o : ops)
            inside |= f.a >= bufs[o.addr].addr + 4 && end <= bufs[o.addr].addr + 4 + bytes;
        char text[128];
        EXPECT_TRUE(inside) << "instruction " << i << ": "
                            << tpusim_disasm(&h.pushed[i], text, sizeof text);
    }
}

TEST(FirmwareReduce, SumsInSourceOrder)
{
    uint64_t seed = 1;
    for (uint32_t n : {4u, 8u, 16u})
        for (uint32_t sources = 1; sources <= FW_REDUCE_MAX; sources++)
            for (uint32_t e : {1u, n - 1, n, n + 1, 3 * n + 5, 100u}) {
                Case c{sources, e};
                c.f32 = seed % 3 != 0;
                c.in_place = seed % 2 != 0;
                run_case(make_cfg(n), c, seed++);
            }
}

// fp32 edge values against their neighbours and negations: +-0, +-inf, NaNs, subnormals, the
// largest finite values, cancellation.
TEST(FirmwareReduce, EdgeValues)
{
    uint64_t seed = 100;
    for (uint32_t sources : {2u, 3u, 8u}) {
        Case c{sources, 257};
        c.edges = true;
        run_case(make_cfg(8), c, seed++);
        c.in_place = false;
        run_case(make_cfg(8), c, seed++);
    }
}

// Rows across many accumulator chunks of a small core (ACC_ROWS 6: chunks of 3 rows), and the
// largest chunk the row field allows.
TEST(FirmwareReduce, Chunks)
{
    Case c{3, 4 * 29 + 3};
    run_case(make_cfg(4, 64, 6), c, 7);
    c.f32 = false;
    c.in_place = false;
    run_case(make_cfg(4, 64, 2), c, 8);
    run_case(make_cfg(4, 64, 4096), Case{2, 4 * 3000 + 1}, 9);
}

// ------------------------------------------------------------- validation --

constexpr uint32_t kStreamAt = 0x8000;

// Three buffers of 64 bytes; a valid REDUCE of two sources into the first in place.
struct BadReduce {
    std::vector<Buffer> bufs{{0x100, 64}, {0x200, 64}, {0x300, 64}};
    ReduceCmd cmd{FW_REDUCE_F32, 16, {{0, 0}, {1, 0}}, {{0, 0}}};
    uint32_t version = FW_STREAM_VERSION;
    std::vector<uint8_t> bytes() const
    {
        auto s = stream_bytes(bufs, {reduce_bytes(cmd)});
        put32(s, FW_HDR_VERSION, version);
        return s;
    }
};

void expect_reject(const BadReduce &b, const char *field)
{
    GoldenHal h(make_cfg(8));
    const auto s = b.bytes();
    std::memcpy(h.mem() + kStreamAt, s.data(), s.size());
    const fw_hal hal = h.hal();
    fw_result res;
    EXPECT_EQ(fw_run(&hal, kStreamAt, static_cast<uint32_t>(s.size()), &res), FW_ERR_COMMAND)
        << field;
    EXPECT_EQ(res.cmd, 0u) << field;
    EXPECT_STREQ(res.field, field);
    EXPECT_STRNE(res.why, "") << field;
    EXPECT_TRUE(h.pushed.empty()) << field;
}

TEST(FirmwareReduceValidation, Fields)
{
    GoldenHal h(make_cfg(8));
    EXPECT_EQ(run_stream(h, BadReduce().bytes(), kStreamAt).res.code, FW_OK);
    BadReduce b;
    b.version = 3;
    expect_reject(b, "op");
    b = BadReduce();
    b.cmd.flags = 2;
    expect_reject(b, "flags");
    b = BadReduce();
    b.cmd.elements = 0;
    expect_reject(b, "elements");
    b = BadReduce();
    b.cmd.elements = 17; // 68 bytes in 64
    expect_reject(b, "src[0].off");
    b = BadReduce();
    b.cmd.src[1] = {3, 0};
    expect_reject(b, "src[1].buf");
    b = BadReduce();
    b.cmd.src[1] = {1, 2};
    expect_reject(b, "src[1].off"); // 4-byte alignment
    b = BadReduce();
    b.cmd.dst[0] = {1, 4};
    b.cmd.elements = 8; // dst overlaps source 1 without being it
    expect_reject(b, "dst[0].buf");
    b = BadReduce();
    b.cmd.dst = {{2, 0}, {2, 0}};
    expect_reject(b, "dst[1].buf"); // two destinations that overlap
    b = BadReduce();
    b.bufs[2] = {kStreamAt, 64};
    b.cmd.dst[0] = {2, 0};
    expect_reject(b, "dst[0].buf"); // the stream
}

TEST(FirmwareReduceValidation, Counts)
{
    // More than FW_REDUCE_MAX sources or destinations, or none.
    BadReduce b;
    b.cmd.src.assign(FW_REDUCE_MAX + 1, Buffer{1, 0});
    expect_reject(b, "sources");
    b.cmd.dst.assign(FW_REDUCE_MAX, Buffer{2, 0});
    expect_reject(b, "bytes"); // longer than the longest REDUCE: the walk's size check
    b = BadReduce();
    b.cmd.dst.assign(FW_REDUCE_MAX + 1, Buffer{2, 0});
    expect_reject(b, "destinations");
    b = BadReduce();
    b.cmd.src.assign(FW_REDUCE_MAX, Buffer{1, 0});
    b.cmd.dst.assign(FW_REDUCE_MAX, Buffer{2, 0});
    b.cmd.elements = 1; // eight destinations on one buffer: they overlap
    expect_reject(b, "dst[1].buf");
    b = BadReduce();
    b.cmd.src.clear();
    expect_reject(b, "sources");
    b = BadReduce();
    b.cmd.dst.clear();
    expect_reject(b, "destinations");
    // A count that disagrees with the command's size.
    b = BadReduce();
    auto s = b.bytes();
    const size_t cmd = FW_HEADER_BYTES + 3 * FW_BUFFER_BYTES;
    put32(s, cmd + FW_REDUCE_SOURCES, 1);
    GoldenHal h(make_cfg(8));
    std::memcpy(h.mem() + kStreamAt, s.data(), s.size());
    const fw_hal hal = h.hal();
    fw_result res;
    EXPECT_EQ(fw_run(&hal, kStreamAt, static_cast<uint32_t>(s.size()), &res), FW_ERR_COMMAND);
    EXPECT_STREQ(res.field, "bytes");
}

} // namespace

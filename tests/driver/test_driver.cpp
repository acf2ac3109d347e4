// test_driver.cpp - the host driver (driver/tpu.h) without running the device: opening devices,
// the built array sizes and memory sizing, the allocator, host copies, the command-stream bytes,
// the host-side stream checks and the GEMM cost. GEMMs on
// the device, verification, stream and timeout errors, counters, progress and traces are in
// test_driver_device.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "driver/tpu.h"
#include "sim/tpusim.h"
#include "tests/support/driver_test.h"
#include "tests/support/progs.h"

namespace
{

using namespace driver_test;

bool built(uint32_t n)
{
    const std::vector<uint32_t> s = built_sizes();
    return std::find(s.begin(), s.end(), n) != s.end();
}

uint32_t rd32(const uint8_t *p)
{
    return p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24;
}

// ---------------------------------------------------------------- open --

TEST(DriverOpen, StatusNames)
{
    EXPECT_STREQ(tpu_status_name(TPU_OK), "TPU_OK");
    EXPECT_STREQ(tpu_status_name(TPU_E_CORE), "TPU_E_CORE");
    EXPECT_STREQ(tpu_status_name(TPU_E_IO), "TPU_E_IO");
    EXPECT_STREQ(tpu_status_name(static_cast<tpu_status>(99)), "?");
}

TEST(DriverOpen, Defaults)
{
    if (!built(16))
        GTEST_SKIP() << "the default array size (16) is not built";
    tpusim_config sim;
    tpusim_config_default(&sim);
    const tpusim_config o{}; // every field left 0: the defaults, as with no configuration
    for (const tpusim_config *opts : {&o, static_cast<const tpusim_config *>(nullptr)}) {
        tpu_device *d = nullptr;
        char err[256] = "";
        ASSERT_EQ(tpu_open(opts, 0, &d, err, sizeof err), TPU_OK) << err;
        tpu_info info;
        ASSERT_EQ(tpu_query(d, &info), TPU_OK);
        EXPECT_EQ(info.array_n, 16u);
        EXPECT_EQ(info.mem_size, 64ull << 20);
        EXPECT_EQ(info.mem_latency, sim.mem_latency);
        EXPECT_EQ(info.mem_bytes_per_cycle, sim.mem_bytes_per_cycle);
        EXPECT_EQ(info.version, TPU_VERSION);
        tpu_close(d);
    }
}

// The defaults tpu_open gives the fields left 0, for whoever needs them before it opens.
TEST(DriverOpen, ConfigFillGivesTheDefaultsOfZeroFieldsOnly)
{
    tpusim_config sim;
    tpusim_config_default(&sim);
    tpusim_config c{};
    c.cores = 2;
    tpu_config_fill(&c);
    EXPECT_EQ(c.array_n, 16u);
    EXPECT_EQ(c.mem_size, 64ull << 20);
    EXPECT_EQ(c.mem_latency, sim.mem_latency);
    EXPECT_EQ(c.mem_bytes_per_cycle, sim.mem_bytes_per_cycle);
    EXPECT_EQ(c.cores, 2u);
    EXPECT_EQ(c.memory, nullptr);
    tpusim_config given{8, 1u << 20, 7, 16, 0, nullptr};
    tpu_config_fill(&given);
    EXPECT_EQ(given.array_n, 8u);
    EXPECT_EQ(given.mem_size, 1u << 20);
    EXPECT_EQ(given.mem_latency, 7u);
    EXPECT_EQ(given.mem_bytes_per_cycle, 16u);
}

TEST(DriverOpen, EveryBuiltSizeMatchesItsOptions)
{
    const std::vector<uint32_t> sizes = built_sizes();
    ASSERT_FALSE(sizes.empty());
    for (uint32_t n : sizes) {
        tpusim_config o{};
        o.array_n = n;
        o.mem_size = (1u << 20) + 100; // not a multiple of the allocation unit
        o.mem_latency = 7;
        o.mem_bytes_per_cycle = 16;
        tpu_device *d = nullptr;
        char err[256] = "";
        ASSERT_EQ(tpu_open(&o, 0, &d, err, sizeof err), TPU_OK) << "N=" << n << ": " << err;
        tpu_info info;
        ASSERT_EQ(tpu_query(d, &info), TPU_OK);
        EXPECT_EQ(info.array_n, n);
        EXPECT_EQ(info.mem_size, o.mem_size);
        EXPECT_EQ(info.mem_latency, 7u);
        EXPECT_EQ(info.mem_bytes_per_cycle, 16u);
        EXPECT_EQ(info.version, TPU_VERSION);
        EXPECT_GE(info.ub_rows, 4u);
        EXPECT_GE(info.acc_rows, 2u);
        EXPECT_GE(info.wfifo_tiles, 1u);
        EXPECT_GE(info.iq_depth, 1u);
        EXPECT_EQ(tpu_query(d, nullptr), TPU_E_ARG);
        EXPECT_STRNE(tpu_last_error(d), "");
        tpu_close(d);
    }
}

TEST(DriverOpen, BadOptions)
{
    const std::vector<uint32_t> sizes = built_sizes();
    uint32_t unbuilt = 3;
    while (built(unbuilt))
        unbuilt++;
    struct Case {
        const char *what;
        uint32_t n;
        uint64_t mem;
        const char *mentions;
    };
    const Case cases[] = {
        {"unbuilt N", unbuilt, 0, "array_n"},
        {"huge N", 1u << 20, 0, "array_n"},
        {"memory too small for anything", sizes[0], 1, "mem_size"},
        {"memory beyond 32-bit addresses", sizes[0], 1ull << 32, "mem_size"},
        {"huge memory", sizes[0], 1ull << 40, "mem_size"},
    };
    for (const Case &c : cases) {
        tpusim_config o{};
        o.array_n = c.n;
        o.mem_size = c.mem;
        tpu_device *d = reinterpret_cast<tpu_device *>(&o); // must be overwritten
        char err[256] = "";
        EXPECT_EQ(tpu_open(&o, 0, &d, err, sizeof err), TPU_E_DEVICE) << c.what;
        EXPECT_EQ(d, nullptr) << c.what;
        EXPECT_TRUE(contains(err, c.mentions)) << c.what << ": " << err;
        EXPECT_EQ(tpu_open(&o, 0, &d, nullptr, 0), TPU_E_DEVICE) << c.what; // no message buffer
    }
    EXPECT_EQ(tpu_open(nullptr, 0, nullptr, nullptr, 0), TPU_E_ARG);
    EXPECT_STREQ(tpu_last_error(nullptr), "no device");
    tpu_close(nullptr);

    // Memory timing past the model's limits is a bad argument, named.
    for (const auto &lim : {std::make_pair(TPUSIM_MEM_LATENCY_MAX + 1, 0u),
                            std::make_pair(0u, TPUSIM_MEM_BANDWIDTH_MAX + 1),
                            std::make_pair(UINT32_MAX, UINT32_MAX)}) {
        tpusim_config o{};
        o.array_n = sizes[0];
        o.mem_latency = lim.first;
        o.mem_bytes_per_cycle = lim.second;
        tpu_device *d = nullptr;
        char err[256] = "";
        EXPECT_EQ(tpu_open(&o, 0, &d, err, sizeof err), TPU_E_ARG);
        EXPECT_EQ(d, nullptr);
        EXPECT_TRUE(contains(err, "at most 65536 cycles and 4096 bytes per cycle")) << err;
    }
}

TEST(DriverOpen, ArraySizesAreTheSimulators)
{
    uint32_t sizes[16] = {0}, sim[16] = {0};
    const int n = tpu_array_sizes(sizes, 16);
    ASSERT_EQ(n, tpusim_arrays(sim, 16));
    ASSERT_GT(n, 0);
    EXPECT_TRUE(std::equal(sizes, sizes + n, sim));
    EXPECT_TRUE(std::is_sorted(sizes, sizes + n));
    uint32_t one[2] = {0, 77};
    EXPECT_EQ(tpu_array_sizes(one, 1), 1);
    EXPECT_EQ(one[0], sizes[0]);
    EXPECT_EQ(one[1], 77u); // nothing past max
    EXPECT_EQ(tpu_array_sizes(one, 0), 0);
    EXPECT_EQ(tpu_array_sizes(nullptr, 4), 0);
}

TEST(DriverOpen, MemorySizeForBuffers)
{
    const uint64_t mib = 1u << 20;
    EXPECT_EQ(tpu_mem_size_for(0), 64 * mib);
    EXPECT_EQ(tpu_mem_size_for(31 * mib), 64 * mib); // 32 MiB with the streams' MiB
    // Above: an eighth more than buffers + 1 MiB, rounded up to whole MiB.
    EXPECT_EQ(tpu_mem_size_for(31 * mib + 1), (32 * mib + 1 + 4 * mib + mib - 1) / mib * mib);
    EXPECT_EQ(tpu_mem_size_for(63 * mib), 72 * mib);
    const uint64_t most = tpu_mem_size_for(3ull << 30);
    EXPECT_GE(most, (3ull << 30) + mib);
    EXPECT_LE(most, 1ull << 32); // still 32-bit addresses
    EXPECT_EQ(tpu_mem_size_for((3ull << 30) + 1), 0u);
}

// ----------------------------------------------------------- allocator --

TEST(DriverAlloc, AlignmentAndNoOverlap)
{
    Dev d(built_sizes()[0], kSmallMem, 0);
    struct Blk {
        uint32_t addr;
        uint64_t bytes;
    };
    std::vector<Blk> blocks;
    for (uint64_t bytes : {1u, 63u, 64u, 65u, 100u, 1000u, 4096u, 7u}) {
        uint32_t a = 1;
        ASSERT_EQ(tpu_alloc(d, bytes, &a), TPU_OK) << tpu_last_error(d);
        EXPECT_EQ(a % 64, 0u) << bytes;
        EXPECT_LE(a + bytes, kSmallMem);
        for (const Blk &b : blocks)
            EXPECT_TRUE(a >= b.addr + b.bytes || b.addr >= a + bytes)
                << "block at 0x" << std::hex << a << " overlaps 0x" << b.addr;
        blocks.push_back({a, bytes});
    }
    // First fit from the bottom: consecutive blocks, each rounded up to 64 bytes.
    EXPECT_EQ(blocks[0].addr, 0u);
    EXPECT_EQ(blocks[1].addr, 64u);
    EXPECT_EQ(blocks[3].addr, 192u);
    EXPECT_EQ(blocks[4].addr, 320u);
    for (const Blk &b : blocks)
        EXPECT_EQ(tpu_free(d, b.addr), TPU_OK);
}

TEST(DriverAlloc, ReuseAfterFree)
{
    Dev d(built_sizes()[0], kSmallMem, 0);
    uint32_t a, b, c, x;
    ASSERT_EQ(tpu_alloc(d, 256, &a), TPU_OK);
    ASSERT_EQ(tpu_alloc(d, 256, &b), TPU_OK);
    ASSERT_EQ(tpu_alloc(d, 256, &c), TPU_OK);
    ASSERT_EQ(tpu_free(d, b), TPU_OK);
    ASSERT_EQ(tpu_alloc(d, 200, &x), TPU_OK); // fits the hole: first fit takes it
    EXPECT_EQ(x, b);
    ASSERT_EQ(tpu_free(d, x), TPU_OK);
    ASSERT_EQ(tpu_alloc(d, 257, &x), TPU_OK); // does not fit the hole
    EXPECT_GT(x, c);
    ASSERT_EQ(tpu_alloc(d, 64, &b), TPU_OK); // a smaller block goes back into the hole
    EXPECT_EQ(b, a + 256);
    for (uint32_t addr : {a, b, c, x})
        EXPECT_EQ(tpu_free(d, addr), TPU_OK);
}

TEST(DriverAlloc, CoalescingGivesBackTheWholeMemory)
{
    Dev d(built_sizes()[0], kSmallMem, 0);
    const uint64_t quarter = kSmallMem / 4;
    uint32_t q[4];
    for (uint32_t &a : q)
        ASSERT_EQ(tpu_alloc(d, quarter, &a), TPU_OK);
    uint32_t x;
    EXPECT_EQ(tpu_alloc(d, 1, &x), TPU_E_NOMEM); // full
    // Free in an order that merges with the previous, the next, and both neighbours.
    for (int i : {1, 3, 2, 0})
        ASSERT_EQ(tpu_free(d, q[i]), TPU_OK);
    ASSERT_EQ(tpu_alloc(d, kSmallMem, &x), TPU_OK) << tpu_last_error(d);
    EXPECT_EQ(x, 0u);
    EXPECT_EQ(tpu_free(d, x), TPU_OK);
}

TEST(DriverAlloc, ExhaustionAndBadFrees)
{
    Dev d(built_sizes()[0], kSmallMem, 0);
    uint32_t x;
    EXPECT_EQ(tpu_alloc(d, kSmallMem + 1, &x), TPU_E_NOMEM);
    EXPECT_TRUE(contains(tpu_last_error(d), "tpu_alloc")) << tpu_last_error(d);
    EXPECT_EQ(tpu_alloc(d, UINT64_MAX, &x), TPU_E_NOMEM);
    std::vector<uint32_t> all;
    while (tpu_alloc(d, 1000, &x) == TPU_OK)
        all.push_back(x);
    EXPECT_EQ(all.size(), kSmallMem / 1024);
    EXPECT_TRUE(contains(tpu_last_error(d), "1024")) << tpu_last_error(d);
    EXPECT_EQ(tpu_alloc(d, 0, &x), TPU_E_ARG);
    EXPECT_EQ(tpu_alloc(d, 64, nullptr), TPU_E_ARG);
    EXPECT_EQ(tpu_free(d, all[1] + 64), TPU_E_ARG); // inside a block, not its start
    EXPECT_TRUE(contains(tpu_last_error(d), "not an allocated block")) << tpu_last_error(d);
    EXPECT_EQ(tpu_free(d, 0xfffffc0u), TPU_E_ARG); // never allocated
    ASSERT_EQ(tpu_free(d, all[1]), TPU_OK);
    EXPECT_EQ(tpu_free(d, all[1]), TPU_E_ARG); // double free
    for (size_t i = 0; i < all.size(); i++) {
        if (i != 1) {
            EXPECT_EQ(tpu_free(d, all[i]), TPU_OK);
        }
    }
    ASSERT_EQ(tpu_alloc(d, kSmallMem, &x), TPU_OK);
    EXPECT_EQ(tpu_free(d, x), TPU_OK);
    EXPECT_EQ(tpu_alloc(nullptr, 64, &x), TPU_E_ARG);
    EXPECT_EQ(tpu_free(nullptr, 0), TPU_E_ARG);
}

TEST(DriverAlloc, WriteReadRoundTripAndRanges)
{
    Dev d(built_sizes()[0], kSmallMem, 0);
    tpu_rng rng{7};
    std::vector<uint8_t> in(1000), out(1000);
    for (uint32_t addr : {0u, 1u, 4095u, static_cast<uint32_t>(kSmallMem - 1000)}) {
        rng_fill(&rng, in.data(), in.size());
        ASSERT_EQ(tpu_write(d, addr, in.data(), in.size()), TPU_OK) << tpu_last_error(d);
        ASSERT_EQ(tpu_read(d, addr, out.data(), out.size()), TPU_OK) << tpu_last_error(d);
        EXPECT_EQ(in, out) << addr;
    }
    const uint32_t end = static_cast<uint32_t>(kSmallMem);
    EXPECT_EQ(tpu_write(d, end - 999, in.data(), 1000), TPU_E_ARG);
    EXPECT_TRUE(contains(tpu_last_error(d), "outside device memory")) << tpu_last_error(d);
    EXPECT_EQ(tpu_read(d, end - 999, out.data(), 1000), TPU_E_ARG);
    EXPECT_EQ(tpu_read(d, end, out.data(), 1), TPU_E_ARG);
    EXPECT_EQ(tpu_write(d, 0xffffffffu, in.data(), 2), TPU_E_ARG);
    EXPECT_EQ(tpu_read(d, 0, nullptr, 1), TPU_E_ARG);
    EXPECT_EQ(tpu_write(d, 0, nullptr, 1), TPU_E_ARG);
    EXPECT_EQ(tpu_write(d, 0, in.data(), 0), TPU_E_ARG);
    EXPECT_EQ(tpu_read(nullptr, 0, out.data(), 1), TPU_E_ARG);
    // Errors left the contents alone.
    ASSERT_EQ(tpu_read(d, end - 1000, out.data(), 1000), TPU_OK);
    EXPECT_EQ(out[999], in[999]);
}

// -------------------------------------------------------- stream bytes --

TEST(DriverStream, BytesAsDocumented)
{
    tpu_stream *s = tpu_stream_new();
    ASSERT_NE(s, nullptr);
    size_t bytes = 0;
    const uint8_t *p = static_cast<const uint8_t *>(tpu_stream_data(s, &bytes));
    ASSERT_EQ(bytes, 24u);
    EXPECT_EQ(std::memcmp(p, "TPUS", 4), 0);
    EXPECT_EQ(rd32(p + 4), 4u); // stream version 4: GEMM and CONV2D, int8 and bf16, REDUCE
    EXPECT_EQ(rd32(p + 8), 24u);

    uint32_t i0 = 99, i1 = 99, i2 = 99;
    ASSERT_EQ(tpu_stream_buffer(s, 0x1000, 300, &i0), TPU_OK);
    ASSERT_EQ(tpu_stream_buffer(s, 0x2001, 77, &i1), TPU_OK);
    tpu_gemm g{};
    g.m = 0x01020304;
    g.k = 5;
    g.n = 6;
    g.flags =
        TPU_GEMM_BIAS | TPU_GEMM_RELU | TPU_GEMM_OUT_INT8 | TPU_GEMM_A_UNSIGNED | TPU_GEMM_B_TILED;
    g.a = {1, 7, 8};
    g.b = {0, 9, 10};
    g.c = {1, 11, 12};
    g.params = {0, 13, 0};
    ASSERT_EQ(tpu_stream_gemm(s, &g), TPU_OK);
    g.flags = TPU_GEMM_RELU;
    ASSERT_EQ(tpu_stream_gemm(s, &g), TPU_OK);
    // A buffer declared after commands still goes into the table, before them.
    ASSERT_EQ(tpu_stream_buffer(s, 0xfffffff0u, 16, &i2), TPU_OK);
    EXPECT_EQ(i0, 0u);
    EXPECT_EQ(i1, 1u);
    EXPECT_EQ(i2, 2u);

    p = static_cast<const uint8_t *>(tpu_stream_data(s, &bytes));
    ASSERT_EQ(bytes, 24u + 3 * 8 + 2 * 64);
    EXPECT_EQ(rd32(p + 0), 0x53555054u);
    EXPECT_EQ(rd32(p + 8), bytes);
    EXPECT_EQ(rd32(p + 12), 3u);
    EXPECT_EQ(rd32(p + 16), 2u);
    EXPECT_EQ(rd32(p + 20), 0u);
    const uint32_t table[] = {0x1000, 300, 0x2001, 77, 0xfffffff0u, 16};
    for (int i = 0; i < 6; i++)
        EXPECT_EQ(rd32(p + 24 + 4 * i), table[i]) << i;
    const uint8_t *c = p + 48;
    EXPECT_EQ(c[0] | c[1] << 8, 1);  // op GEMM
    EXPECT_EQ(c[2] | c[3] << 8, 64); // bytes
    const uint32_t fields[] = {0x1f, 0x01020304, 5, 6, 1, 7, 8, 0, 9, 10, 1, 11, 12, 0, 13};
    for (int i = 0; i < 15; i++)
        EXPECT_EQ(rd32(c + 4 + 4 * i), fields[i]) << "field " << i;
    EXPECT_EQ(std::memcmp(c + 8, c + 64 + 8, 56), 0); // the second command differs in flags
    EXPECT_EQ(rd32(c + 64 + 4), 2u);

    // Host-side checks: only what cannot be encoded.
    EXPECT_EQ(tpu_stream_buffer(s, 0, 0, nullptr), TPU_E_ARG);
    EXPECT_EQ(tpu_stream_buffer(s, 0xffffff00u, 0x101, nullptr), TPU_E_ARG);
    EXPECT_EQ(tpu_stream_buffer(nullptr, 0, 1, nullptr), TPU_E_ARG);
    g.flags = 1u << 5;
    EXPECT_EQ(tpu_stream_gemm(s, &g), TPU_E_ARG);
    EXPECT_EQ(tpu_stream_gemm(s, nullptr), TPU_E_ARG);
    tpu_stream_data(s, &bytes);
    EXPECT_EQ(bytes, 24u + 3 * 8 + 2 * 64); // unchanged by the refusals
    tpu_stream_free(s);
    tpu_stream_free(nullptr);
}

// A REDUCE: its size from its operand counts, the operands sources first; the counts checked.
TEST(DriverStream, ReduceBytesAsDocumented)
{
    tpu_stream *s = tpu_stream_new();
    ASSERT_NE(s, nullptr);
    tpu_reduce r{};
    r.flags = TPU_REDUCE_F32;
    r.elements = 0x01020304;
    r.sources = 3;
    r.destinations = 2;
    for (uint32_t i = 0; i < 3; i++)
        r.src[i] = {i, 0x100 * i + 4, 0};
    r.dst[0] = {7, 8, 0};
    r.dst[1] = {9, 12, 0};
    ASSERT_EQ(tpu_stream_reduce(s, &r), TPU_OK);
    size_t bytes = 0;
    const uint8_t *p = static_cast<const uint8_t *>(tpu_stream_data(s, &bytes));
    ASSERT_EQ(bytes, 24u + 20 + 8 * 5);
    EXPECT_EQ(rd32(p + 16), 1u); // one command
    const uint8_t *c = p + 24;
    EXPECT_EQ(rd32(c), 3u | 60u << 16); // op REDUCE, 60 bytes
    const uint32_t fields[] = {1, 0x01020304, 3, 2, 0, 4, 1, 0x104, 2, 0x204, 7, 8, 9, 12};
    for (int i = 0; i < 14; i++)
        EXPECT_EQ(rd32(c + 4 + 4 * i), fields[i]) << "field " << i;
    for (auto [srcs, dsts] : {std::pair{0u, 1u}, {1u, 0u}, {9u, 1u}, {1u, 9u}}) {
        r.sources = srcs;
        r.destinations = dsts;
        EXPECT_EQ(tpu_stream_reduce(s, &r), TPU_E_ARG) << srcs << " " << dsts;
    }
    r.sources = r.destinations = 1;
    r.flags = 2;
    EXPECT_EQ(tpu_stream_reduce(s, &r), TPU_E_ARG);
    EXPECT_EQ(tpu_stream_reduce(s, nullptr), TPU_E_ARG);
    tpu_stream_data(s, &bytes);
    EXPECT_EQ(bytes, 24u + 60); // unchanged by the refusals
    tpu_stream_free(s);
}

// ---------------------------------------------------------------- cost --

TEST(DriverCost, ReduceCostIsItsMemoryTraffic)
{
    tpu_info info{};
    info.array_n = 8;
    info.mem_bytes_per_cycle = 16;
    tpu_reduce r{};
    r.elements = 100;
    r.sources = 8;
    r.destinations = 8;
    tpu_cost c;
    ASSERT_EQ(tpu_reduce_cost(&info, &r, &c), TPU_OK);
    EXPECT_EQ(c.macs, 0u);
    EXPECT_EQ(c.bytes, 100u * 4 * 16);
    EXPECT_EQ(c.ideal_cycles, 0.0);
    EXPECT_EQ(c.memory_cycles, 6400.0 / 16);
    EXPECT_EQ(c.bound_cycles, c.memory_cycles);
    EXPECT_EQ(tpu_reduce_cost(&info, nullptr, &c), TPU_E_ARG);
}

TEST(DriverCost, GemmCostAsDocumented)
{
    tpu_info info{};
    info.array_n = 8;
    info.mem_bytes_per_cycle = 16;
    tpu_gemm g{};
    g.m = 10;
    g.k = 20;
    g.n = 30;
    g.flags = TPU_GEMM_RELU | TPU_GEMM_A_UNSIGNED | TPU_GEMM_B_TILED; // no parameters
    tpu_cost c;
    ASSERT_EQ(tpu_gemm_cost(&info, &g, &c), TPU_OK);
    EXPECT_EQ(c.macs, 6000u);
    EXPECT_EQ(c.bytes, 200u + 600 + 300 * 4);
    EXPECT_EQ(c.ideal_cycles, 6000.0 / 64);
    EXPECT_EQ(c.memory_cycles, 2000.0 / 16);
    EXPECT_EQ(c.bound_cycles, c.memory_cycles); // memory-bound
    // Parameters with BIAS or OUT_INT8 alone; an int8 C.
    for (uint32_t f : {TPU_GEMM_BIAS, TPU_GEMM_OUT_INT8}) {
        g.flags = f;
        ASSERT_EQ(tpu_gemm_cost(&info, &g, &c), TPU_OK);
        EXPECT_EQ(c.bytes, 200u + 600 + 300 * (f == TPU_GEMM_OUT_INT8 ? 1 : 4) + 12 * 30) << f;
    }
    // bf16: 2-byte A and B, C fp32 or bf16, the fp32 bias alone.
    for (uint32_t f : {0u, uint32_t{TPU_GEMM_BIAS}, uint32_t{TPU_GEMM_OUT_BF16}}) {
        g.flags = TPU_GEMM_BF16 | f;
        ASSERT_EQ(tpu_gemm_cost(&info, &g, &c), TPU_OK);
        EXPECT_EQ(c.bytes, (200u + 600) * 2 + 300 * (f == TPU_GEMM_OUT_BF16 ? 2 : 4) +
                               (f == TPU_GEMM_BIAS ? 4 * 30 : 0))
            << f;
    }
    g.flags = TPU_GEMM_OUT_INT8; // as the int8 loop left it
    // Compute-bound once the bandwidth is high.
    info.mem_bytes_per_cycle = 1000;
    ASSERT_EQ(tpu_gemm_cost(&info, &g, &c), TPU_OK);
    EXPECT_EQ(c.bound_cycles, c.ideal_cycles);
    // No bandwidth: the memory bound is undefined and gives way to the compute bound.
    info.mem_bytes_per_cycle = 0;
    ASSERT_EQ(tpu_gemm_cost(&info, &g, &c), TPU_OK);
    EXPECT_TRUE(std::isnan(c.memory_cycles));
    EXPECT_EQ(c.bound_cycles, c.ideal_cycles);
    EXPECT_EQ(tpu_gemm_cost(nullptr, &g, &c), TPU_E_ARG);
    EXPECT_EQ(tpu_gemm_cost(&info, nullptr, &c), TPU_E_ARG);
    EXPECT_EQ(tpu_gemm_cost(&info, &g, nullptr), TPU_E_ARG);
}

} // namespace

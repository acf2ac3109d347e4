// fw_test.h - what the firmware suites share (test_firmware.cpp, test_gemm_bf16.cpp,
// test_conv.cpp): a core modelled by the golden model behind the firmware's HAL, a command-stream
// builder with GEMM commands, the activation arithmetic of docs/isa.md, and running a stream with
// its shape checked.
#ifndef TPU_TESTS_SUPPORT_FW_TEST_H
#define TPU_TESTS_SUPPORT_FW_TEST_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#include "firmware/firmware.h"
#include "sim/tpusim.h"

namespace fw_test
{

// ------------------------------------------------------------------ HAL --

// A core modelled by the golden model: each accepted instruction executes at once. A stopped
// core refuses pushes, as a real one's queue would stay full. Every push and spent cycle counts.
struct GoldenHal {
    tpusim_hwcfg cfg;
    tpusim_golden *g;
    std::vector<tpusim_insn> pushed;
    int error = TPU_FAULT_NONE;
    uint64_t cycles = 0;
    size_t fail_after = SIZE_MAX;      // raise MEM_FAULT at this push (models a memory error)
    uint64_t readable = UINT64_MAX;    // bytes the control processor can read
    std::map<uint32_t, uint32_t> regs; // register overrides

    explicit GoldenHal(const tpusim_hwcfg &c) : cfg(c), g(tpusim_golden_create(&c)) {}
    ~GoldenHal() { tpusim_golden_destroy(g); }
    GoldenHal(const GoldenHal &) = delete;
    GoldenHal &operator=(const GoldenHal &) = delete;

    uint8_t *mem() { return tpusim_golden_mem(g); }

    fw_hal hal() { return fw_hal{this, push, reg_read, mem_read, spend}; }

    static int push(void *ctx, const uint32_t insn[4])
    {
        auto *h = static_cast<GoldenHal *>(ctx);
        h->cycles++;
        if (h->error)
            return 0;
        tpusim_insn i;
        std::memcpy(i.w, insn, sizeof i.w);
        h->pushed.push_back(i);
        h->error = h->pushed.size() - 1 == h->fail_after ? TPU_FAULT_MEM_FAULT
                                                         : tpusim_golden_exec(h->g, &i);
        return 1;
    }

    static uint32_t reg_read(void *ctx, uint32_t offset)
    {
        auto *h = static_cast<GoldenHal *>(ctx);
        auto it = h->regs.find(offset);
        if (it != h->regs.end())
            return it->second;
        switch (offset) {
        case TPU_CSR_ID: return TPU_ID_MAGIC;
        case TPU_CSR_VERSION: return TPU_VERSION;
        case TPU_CSR_ARRAY_N: return h->cfg.array_n;
        case TPU_CSR_UB_ROWS: return h->cfg.ub_rows;
        case TPU_CSR_ACC_ROWS: return h->cfg.acc_rows;
        case TPU_CSR_WFIFO_TILES: return h->cfg.wfifo_tiles;
        case TPU_CSR_IQ_DEPTH: return h->cfg.iq_depth;
        case TPU_CSR_BUS_BYTES: return 4 * h->cfg.array_n;
        case TPU_CSR_STATUS: return h->error ? TPU_STATUS_ERROR : 0;
        case TPU_CSR_ERROR_CODE: return static_cast<uint32_t>(h->error);
        case TPU_CSR_SYNC_COUNT: return tpusim_golden_sync_count(h->g);
        case TPU_CSR_MEM_SIZE: return static_cast<uint32_t>(h->cfg.mem_size);
        default: return 0;
        }
    }

    static int mem_read(void *ctx, uint32_t addr, void *dst, uint32_t n)
    {
        auto *h = static_cast<GoldenHal *>(ctx);
        if (static_cast<uint64_t>(addr) + n > std::min<uint64_t>(h->cfg.mem_size, h->readable))
            return -1;
        std::memcpy(dst, h->mem() + addr, n);
        return 0;
    }

    static void spend(void *ctx, uint32_t n) { static_cast<GoldenHal *>(ctx)->cycles += n; }
};

inline constexpr uint32_t kMemSize = 1u << 20;

inline tpusim_hwcfg make_cfg(uint32_t n, uint32_t ub_rows = 16384, uint32_t acc_rows = 4096,
                             uint32_t wfifo = 4)
{
    return tpusim_hwcfg{n, ub_rows, acc_rows, wfifo, 32, kMemSize};
}

// --------------------------------------------------------- stream builder --

inline void put32(std::vector<uint8_t> &v, size_t off, uint32_t x)
{
    if (v.size() < off + 4)
        v.resize(off + 4);
    for (int i = 0; i < 4; i++)
        v[off + i] = static_cast<uint8_t>(x >> 8 * i);
}

struct Buffer {
    uint32_t addr, size;
};

inline std::vector<uint8_t> stream_bytes(const std::vector<Buffer> &bufs,
                                         const std::vector<std::vector<uint8_t>> &cmds)
{
    std::vector<uint8_t> v(FW_HEADER_BYTES);
    for (const Buffer &b : bufs) {
        const size_t at = v.size();
        put32(v, at + FW_BUF_ADDR, b.addr);
        put32(v, at + FW_BUF_SIZE, b.size);
    }
    for (const auto &c : cmds)
        v.insert(v.end(), c.begin(), c.end());
    put32(v, FW_HDR_MAGIC, FW_STREAM_MAGIC);
    put32(v, FW_HDR_VERSION, FW_STREAM_VERSION);
    put32(v, FW_HDR_BYTES, static_cast<uint32_t>(v.size()));
    put32(v, FW_HDR_BUFFERS, static_cast<uint32_t>(bufs.size()));
    put32(v, FW_HDR_COMMANDS, static_cast<uint32_t>(cmds.size()));
    return v;
}

// A GEMM command's fields, and its bytes.
struct GemmCmd {
    uint32_t flags, m, k, n;
    uint32_t a_buf, a_off, lda, b_buf, b_off, ldb, c_buf, c_off, ldc, p_buf, p_off;
};

inline std::vector<uint8_t> gemm_bytes(const GemmCmd &g)
{
    std::vector<uint8_t> v(FW_GEMM_BYTES);
    put32(v, 0, FW_CMD_GEMM | FW_GEMM_BYTES << 16);
    // In command order from FW_GEMM_FLAGS on.
    const uint32_t fields[] = {g.flags, g.m,   g.k,     g.n,     g.a_buf, g.a_off, g.lda,  g.b_buf,
                               g.b_off, g.ldb, g.c_buf, g.c_off, g.ldc,   g.p_buf, g.p_off};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        put32(v, FW_GEMM_FLAGS + 4 * i, fields[i]);
    return v;
}

// -------------------------------------------------------------- reference --

inline int32_t wrap32(int64_t x)
{
    const uint32_t u = static_cast<uint32_t>(static_cast<uint64_t>(x));
    return u <= INT32_MAX ? static_cast<int32_t>(u)
                          : static_cast<int32_t>(u - 0x80000000u) + INT32_MIN;
}

inline int8_t requant(int32_t x, int32_t mult, uint32_t s)
{
    const int64_t p = static_cast<int64_t>(x) * mult;
    int64_t q = p;
    if (s) {
        const uint64_t half = uint64_t{1} << (s - 1);
        const uint64_t sum = static_cast<uint64_t>(p) + (p < 0 ? half - 1 : half);
        q = sum >> 63 ? ~static_cast<int64_t>(~sum >> s) : static_cast<int64_t>(sum >> s);
    }
    return static_cast<int8_t>(q < -128 ? -128 : q > 127 ? 127 : q);
}

inline uint32_t rd32(const uint8_t *p)
{
    return p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24;
}

// Writes C as the command defines it into mem (A and params read from mem at the given
// addresses; B row-major at b with a pitch of ldb; c is C's address).
// ------------------------------------------------------------- GEMM runs --

inline void wr32(uint8_t *p, uint32_t x)
{
    for (int i = 0; i < 4; i++)
        p[i] = static_cast<uint8_t>(x >> 8 * i);
}

// Everything a run leaves behind for checks.
struct Outcome {
    fw_result res;
    size_t insns = 0, syncs = 0;
    bool halted = false;
};

// Runs the firmware on a stream placed at addr; checks the push count, the cost model and the
// instruction stream's shape (legal, one SYNC per command, HALT last) when it succeeds.
inline Outcome run_stream(GoldenHal &h, const std::vector<uint8_t> &stream, uint32_t addr)
{
    std::memcpy(h.mem() + addr, stream.data(), stream.size());
    const fw_hal hal = h.hal();
    Outcome r;
    const int code = fw_run(&hal, addr, static_cast<uint32_t>(stream.size()), &r.res);
    EXPECT_EQ(code, r.res.code);
    EXPECT_EQ(r.res.insns, h.pushed.size());
    r.insns = h.pushed.size();
    for (const tpusim_insn &i : h.pushed)
        r.syncs += TPU_INSN_GET(i.w, OP) == TPU_OP_SYNC;
    r.halted = !h.pushed.empty() && TPU_INSN_GET(h.pushed.back().w, OP) == TPU_OP_HALT;
    if (code == FW_OK) {
        EXPECT_EQ(h.error, TPU_FAULT_NONE)
            << tpusim_fault_name(h.error) << " at instruction " << h.pushed.size() - 1;
        EXPECT_TRUE(r.halted);
        EXPECT_EQ(r.syncs, rd32(stream.data() + FW_HDR_COMMANDS));
        const uint64_t commands = rd32(stream.data() + FW_HDR_COMMANDS);
        EXPECT_EQ(h.cycles, FW_CYCLES_STREAM + FW_CYCLES_COMMAND * commands + r.insns);
    }
    return r;
}

// Compares device memory with the expected image; reports the first difference.
inline void expect_memory(GoldenHal &h, const std::vector<uint8_t> &expect)
{
    const uint8_t *mem = h.mem();
    if (std::memcmp(mem, expect.data(), expect.size()) == 0)
        return;
    size_t i = 0;
    while (mem[i] == expect[i])
        i++;
    ADD_FAILURE() << "memory differs first at 0x" << std::hex << i << ": expected 0x"
                  << int{expect[i]} << ", got 0x" << int{mem[i]};
}

} // namespace fw_test

#endif

// test_sim.cpp - the cycle-accurate device (sim/tpusim.h) through its C API, for every built N.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "sim/tpusim.h"

namespace
{

std::vector<uint32_t> built_sizes()
{
    std::vector<uint32_t> sizes(64);
    sizes.resize(static_cast<size_t>(tpusim_arrays(sizes.data(), static_cast<int>(sizes.size()))));
    return sizes;
}

tpusim_insn halt() { return tpusim_encode(TPU_OP_HALT, 0, 0, 0, 0, 0, 0); }

// name in this process's scratch directory, made on first use and removed at exit (what the
// tests leave there is checked by files_in).
std::string scratch_path(const std::string &name)
{
    struct Scratch {
        std::filesystem::path dir;
        Scratch()
        {
            const char *tmp = std::getenv("TMPDIR");
            dir = std::filesystem::path(tmp ? tmp : "/tmp") /
                  ("test_sim_" + std::to_string(getpid()));
            std::filesystem::create_directories(dir);
        }
        ~Scratch() { std::filesystem::remove_all(dir); }
    };
    static const Scratch scratch;
    return (scratch.dir / name).string();
}

std::vector<std::string> files_in(const std::string &dir)
{
    std::vector<std::string> names;
    for (const auto &e : std::filesystem::directory_iterator(dir))
        names.push_back(e.path().filename().string());
    return names;
}

std::string slurp(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

class Device : public ::testing::TestWithParam<uint32_t>
{
  protected:
    static constexpr uint64_t kMem = 1 << 20;
    void SetUp() override
    {
        n_ = GetParam();
        tpusim_config cfg;
        tpusim_config_default(&cfg);
        cfg.array_n = n_;
        cfg.mem_size = kMem;
        cfg.mem_latency = 10;
        cfg.mem_bytes_per_cycle = 4 * n_;
        char err[256] = "";
        sim_ = tpusim_create(&cfg, err, sizeof err);
        ASSERT_NE(sim_, nullptr) << err;
        tpusim_read_hwcfg(sim_, &hw_);
    }
    void TearDown() override { tpusim_destroy(sim_); }

    void fill_random(uint64_t addr, size_t n, std::vector<uint8_t> *out = nullptr)
    {
        std::vector<uint8_t> bytes(n);
        for (auto &b : bytes)
            b = static_cast<uint8_t>(rng_());
        ASSERT_EQ(tpusim_mem_write(sim_, addr, bytes.data(), n), 0);
        if (out)
            *out = bytes;
    }
    std::vector<uint8_t> mem(uint64_t addr, size_t n)
    {
        std::vector<uint8_t> bytes(n);
        EXPECT_EQ(tpusim_mem_read(sim_, addr, bytes.data(), n), 0);
        return bytes;
    }
    // Cycles a run of prog takes from a fresh reset.
    uint64_t cycles_of(const std::vector<tpusim_insn> &prog)
    {
        tpusim_reset(sim_);
        const uint64_t start = tpusim_cycle(sim_);
        EXPECT_EQ(tpusim_run_program(sim_, prog.data(), prog.size(), 100000), TPUSIM_HALTED);
        return tpusim_cycle(sim_) - start;
    }

    uint32_t n_ = 0;
    tpusim *sim_ = nullptr;
    tpusim_hwcfg hw_{};
    std::mt19937 rng_{12345};
};

TEST(Sim, CreateDestroyEveryBuiltSize)
{
    const std::vector<uint32_t> sizes = built_sizes();
    ASSERT_FALSE(sizes.empty());
    for (size_t i = 1; i < sizes.size(); i++)
        EXPECT_LT(sizes[i - 1], sizes[i]);
    for (uint32_t n : sizes) {
        tpusim_config cfg;
        tpusim_config_default(&cfg);
        cfg.array_n = n;
        char err[256] = "";
        tpusim *a = tpusim_create(&cfg, err, sizeof err);
        ASSERT_NE(a, nullptr) << "N=" << n << ": " << err;
        tpusim *b = tpusim_create(&cfg, err, sizeof err); // two devices side by side
        ASSERT_NE(b, nullptr) << "N=" << n << ": " << err;
        const uint8_t x = 0x5a, y = 0xa5;
        ASSERT_EQ(tpusim_mem_write(a, 0, &x, 1), 0);
        ASSERT_EQ(tpusim_mem_write(b, 0, &y, 1), 0);
        uint8_t got = 0;
        ASSERT_EQ(tpusim_mem_read(a, 0, &got, 1), 0);
        EXPECT_EQ(got, x);
        ASSERT_EQ(tpusim_mem_read(b, 0, &got, 1), 0);
        EXPECT_EQ(got, y);
        tpusim_hwcfg hw;
        tpusim_read_hwcfg(a, &hw);
        EXPECT_EQ(hw.array_n, n);
        EXPECT_EQ(hw.mem_size, cfg.mem_size);
        tpusim_destroy(a);
        tpusim_destroy(b);
    }
}

TEST(Sim, DefaultConfigIsBuilt)
{
    tpusim_config cfg;
    tpusim_config_default(&cfg);
    char err[256] = "";
    tpusim *sim = tpusim_create(&cfg, err, sizeof err);
    ASSERT_NE(sim, nullptr) << err;
    tpusim_destroy(sim);
}

TEST(Sim, BadConfigs)
{
    const std::vector<uint32_t> sizes = built_sizes();
    uint32_t unbuilt = 3;
    while (std::find(sizes.begin(), sizes.end(), unbuilt) != sizes.end())
        unbuilt++;
    tpusim_config good;
    tpusim_config_default(&good);
    good.array_n = sizes[0];

    struct Case {
        const char *what;
        tpusim_config cfg;
        const char *mentions;
    };
    std::vector<Case> cases;
    cases.push_back({"unbuilt N", good, nullptr});
    cases.back().cfg.array_n = unbuilt;
    cases.push_back({"zero memory", good, "mem_size"});
    cases.back().cfg.mem_size = 0;
    cases.push_back({"memory beyond 32-bit addresses", good, "mem_size"});
    cases.back().cfg.mem_size = 1ull << 32;
    cases.push_back({"zero bandwidth", good, "mem_bytes_per_cycle"});
    cases.back().cfg.mem_bytes_per_cycle = 0;
    cases.push_back({"zero latency", good, "mem_latency"});
    cases.back().cfg.mem_latency = 0;
    for (const Case &c : cases) {
        char err[256] = "";
        EXPECT_EQ(tpusim_create(&c.cfg, err, sizeof err), nullptr) << c.what;
        EXPECT_NE(err[0], '\0') << c.what;
        if (c.mentions) {
            EXPECT_NE(std::strstr(err, c.mentions), nullptr) << c.what << ": " << err;
        }
    }
    // The unbuilt-N message lists what is built.
    char err[256] = "";
    tpusim_config cfg = good;
    cfg.array_n = unbuilt;
    EXPECT_EQ(tpusim_create(&cfg, err, sizeof err), nullptr);
    for (uint32_t n : sizes)
        EXPECT_NE(std::strstr(err, (" " + std::to_string(n)).c_str()), nullptr) << err;
    // A NULL or empty message buffer is allowed.
    EXPECT_EQ(tpusim_create(&cfg, nullptr, 0), nullptr);
}

TEST_P(Device, HwcfgMatchesIdRegisters)
{
    EXPECT_EQ(tpusim_reg_read(sim_, TPU_CSR_ID), TPU_ID_MAGIC);
    EXPECT_EQ(tpusim_reg_read(sim_, TPU_CSR_VERSION), TPU_VERSION);
    EXPECT_EQ(hw_.array_n, n_);
    EXPECT_EQ(hw_.array_n, tpusim_reg_read(sim_, TPU_CSR_ARRAY_N));
    EXPECT_EQ(hw_.ub_rows, tpusim_reg_read(sim_, TPU_CSR_UB_ROWS));
    EXPECT_EQ(hw_.acc_rows, tpusim_reg_read(sim_, TPU_CSR_ACC_ROWS));
    EXPECT_EQ(hw_.wfifo_tiles, tpusim_reg_read(sim_, TPU_CSR_WFIFO_TILES));
    EXPECT_EQ(hw_.iq_depth, tpusim_reg_read(sim_, TPU_CSR_IQ_DEPTH));
    EXPECT_EQ(hw_.mem_size, kMem);
    EXPECT_EQ(tpusim_reg_read(sim_, TPU_CSR_BUS_BYTES), 4 * n_);
    EXPECT_GT(hw_.ub_rows, 0u);
    EXPECT_GT(hw_.acc_rows, 0u);
    // Idle after creation.
    EXPECT_EQ(tpusim_reg_read(sim_, TPU_CSR_STATUS), 0u);
    EXPECT_EQ(tpusim_reg_read(sim_, TPU_CSR_IQ_FREE), hw_.iq_depth);
}

TEST_P(Device, RegWriteReadMemSize)
{
    const uint64_t c0 = tpusim_cycle(sim_);
    EXPECT_EQ(tpusim_reg_read(sim_, TPU_CSR_MEM_SIZE), kMem);
    EXPECT_EQ(tpusim_cycle(sim_), c0); // reads take no edge
    tpusim_reg_write(sim_, TPU_CSR_MEM_SIZE, 0x1234);
    EXPECT_EQ(tpusim_cycle(sim_), c0 + 1); // a write takes one
    EXPECT_EQ(tpusim_reg_read(sim_, TPU_CSR_MEM_SIZE), 0x1234u);
    tpusim_hwcfg hw;
    tpusim_read_hwcfg(sim_, &hw);
    EXPECT_EQ(hw.mem_size, 0x1234u);
    tpusim_reset(sim_); // puts the configured size back
    EXPECT_EQ(tpusim_reg_read(sim_, TPU_CSR_MEM_SIZE), kMem);
}

TEST_P(Device, BackdoorMemory)
{
    std::vector<uint8_t> bytes;
    fill_random(0, 100, &bytes);
    EXPECT_EQ(mem(0, 100), bytes);
    fill_random(kMem - 7, 7, &bytes);
    EXPECT_EQ(mem(kMem - 7, 7), bytes);

    uint8_t buf[8] = {};
    EXPECT_EQ(tpusim_mem_read(sim_, kMem - 7, buf, 8), -1);
    EXPECT_EQ(tpusim_mem_write(sim_, kMem - 7, buf, 8), -1);
    EXPECT_EQ(tpusim_mem_read(sim_, kMem, buf, 1), -1);
    EXPECT_EQ(tpusim_mem_read(sim_, UINT64_MAX, buf, 2), -1);
    EXPECT_EQ(tpusim_mem_write(sim_, UINT64_MAX - 1, buf, 4), -1);
    EXPECT_EQ(tpusim_mem_read(sim_, kMem, buf, 0), 0);
    EXPECT_EQ(mem(kMem - 7, 7), bytes); // the failed write changed nothing

    std::vector<int8_t> row(n_);
    std::vector<int32_t> acc(n_);
    EXPECT_EQ(tpusim_ub_read(sim_, hw_.ub_rows - 1, row.data()), 0);
    EXPECT_EQ(tpusim_ub_read(sim_, hw_.ub_rows, row.data()), -1);
    EXPECT_EQ(tpusim_acc_read(sim_, hw_.acc_rows - 1, acc.data()), 0);
    EXPECT_EQ(tpusim_acc_read(sim_, hw_.acc_rows, acc.data()), -1);
    // Memories power up as zero.
    EXPECT_EQ(row, std::vector<int8_t>(n_, 0));
    EXPECT_EQ(acc, std::vector<int32_t>(n_, 0));
}

// RD_HOST + WR_HOST + HALT copies rows through the UB; partial rows are zero-padded in the UB.
// The source rows lie more than the bus (4N bytes) apart, so each is a request of its own and the
// read bytes count len per row.
TEST_P(Device, CopyThroughUb)
{
    const uint32_t rows = 2 * n_ + 3, len = n_ - 1, stride = 4 * n_ + 5, ub = 100;
    std::vector<uint8_t> src;
    fill_random(0, rows * stride, &src);
    // Twice, to different places: the second run starts from HALTED and must not stop at once.
    for (uint32_t run = 0; run < 2; run++) {
        // Past the source (at N = 128 the source reaches beyond 0x8000), a new place each run.
        const uint32_t dst =
            ((rows * stride + 0xFFFu) & ~0xFFFu) + run * ((rows * len + 0xFFFu) & ~0xFFFu);
        const std::vector<tpusim_insn> prog = {
            tpusim_encode(TPU_OP_RD_HOST, 0, rows, 0, ub, len, stride),
            tpusim_encode(TPU_OP_WR_HOST, 0, rows, dst, ub, len, len),
            halt(),
        };
        ASSERT_EQ(tpusim_run_program(sim_, prog.data(), prog.size(), 100000), TPUSIM_HALTED);
        EXPECT_EQ(tpusim_reg_read(sim_, TPU_CSR_STATUS), TPU_STATUS_HALTED);
        EXPECT_EQ(tpusim_reg_read(sim_, TPU_CSR_INSN_COUNT), 3u * (run + 1));
        const std::vector<uint8_t> out = mem(dst, rows * len);
        for (uint32_t r = 0; r < rows; r++) {
            ASSERT_EQ(0, std::memcmp(&out[r * len], &src[r * stride], len)) << "row " << r;
            std::vector<int8_t> row(n_);
            ASSERT_EQ(tpusim_ub_read(sim_, ub + r, row.data()), 0);
            for (uint32_t c = 0; c < n_; c++)
                ASSERT_EQ(static_cast<uint8_t>(row[c]), c < len ? src[r * stride + c] : 0)
                    << "UB row " << ub + r << " byte " << c;
        }
        EXPECT_EQ(tpusim_perf(sim_, TPU_PERF_DMA_RD_BYTES), uint64_t{rows} * len * (run + 1));
        EXPECT_EQ(tpusim_perf(sim_, TPU_PERF_DMA_WR_BYTES), uint64_t{rows} * len * (run + 1));
        EXPECT_EQ(tpusim_perf(sim_, TPU_PERF_RETIRED), 3u * (run + 1));
    }
}

// The ACC backdoor: a MATMUL with known weights and activations.
TEST_P(Device, MatmulIntoAcc)
{
    const uint32_t rows = n_ + 2, w_addr = 0, a_addr = 0x4000, acc = 7, ub = 3;
    std::vector<uint8_t> w, a;
    fill_random(w_addr, n_ * n_, &w);
    fill_random(a_addr, rows * n_, &a);
    const std::vector<tpusim_insn> prog = {
        tpusim_encode(TPU_OP_RD_WEIGHT, 0, n_, w_addr, 0, n_, n_),
        tpusim_encode(TPU_OP_RD_HOST, 0, rows, a_addr, ub, n_, n_),
        tpusim_encode(TPU_OP_MATMUL, TPU_F_LOAD, rows, ub, acc, 0, 0),
        halt(),
    };
    ASSERT_EQ(tpusim_run_program(sim_, prog.data(), prog.size(), 100000), TPUSIM_HALTED);
    for (uint32_t i = 0; i < rows; i++) {
        std::vector<int32_t> got(n_);
        ASSERT_EQ(tpusim_acc_read(sim_, acc + i, got.data()), 0);
        for (uint32_t c = 0; c < n_; c++) {
            int32_t want = 0;
            for (uint32_t k = 0; k < n_; k++)
                want += static_cast<int8_t>(a[i * n_ + k]) * static_cast<int8_t>(w[k * n_ + c]);
            ASSERT_EQ(got[c], want) << "ACC row " << acc + i << " col " << c;
        }
    }
    EXPECT_GE(tpusim_perf(sim_, TPU_PERF_MXU_BUSY), rows);
}

TEST_P(Device, CtrlClearsPerfCounters)
{
    const std::vector<tpusim_insn> prog = {tpusim_encode(TPU_OP_RD_HOST, 0, 4, 0, 0, n_, n_),
                                           halt()};
    ASSERT_EQ(tpusim_run_program(sim_, prog.data(), prog.size(), 100000), TPUSIM_HALTED);
    EXPECT_GT(tpusim_perf(sim_, TPU_PERF_ACTIVE), 0u);
    EXPECT_EQ(tpusim_perf(sim_, TPU_PERF_RETIRED), 2u);
    EXPECT_EQ(tpusim_perf(sim_, TPU_PERF_DMA_RD_BYTES), 4u * n_);
    tpusim_reg_write(sim_, TPU_CSR_CTRL, TPU_CTRL_CLEAR_PERF);
    tpusim_step(sim_, 5);
    for (int c = 0; c < TPU_PERF_COUNT; c++)
        EXPECT_EQ(tpusim_perf(sim_, c), 0u) << tpusim_perf_name(c);
    EXPECT_EQ(tpusim_perf(sim_, TPU_PERF_COUNT), 0u);
    EXPECT_EQ(tpusim_perf(sim_, -1), 0u);
}

// A single read waits `latency` cycles for its response, so a run with one read takes exactly
// d cycles more when the latency grows by d, and a read feeding a write 2d more.
TEST_P(Device, LatencyAddsToTheCycleCount)
{
    const std::vector<tpusim_insn> read = {tpusim_encode(TPU_OP_RD_HOST, 0, 1, 0, 0, n_, 0),
                                           halt()};
    const std::vector<tpusim_insn> copy = {tpusim_encode(TPU_OP_RD_HOST, 0, 1, 0, 0, n_, 0),
                                           tpusim_encode(TPU_OP_WR_HOST, 0, 1, 0x1000, 0, n_, 0),
                                           halt()};
    tpusim_mem_timing(sim_, 5, 4 * n_);
    const uint64_t read5 = cycles_of(read), copy5 = cycles_of(copy);
    tpusim_mem_timing(sim_, 105, 4 * n_);
    const uint64_t read105 = cycles_of(read), copy105 = cycles_of(copy);
    EXPECT_EQ(read105 - read5, 100u);
    EXPECT_EQ(copy105 - copy5, 200u);

    // Hundreds of reads in flight at once cost the latency only once.
    const uint32_t rows = 300;
    std::vector<uint8_t> src;
    fill_random(0, rows * n_, &src);
    const std::vector<tpusim_insn> stream = {tpusim_encode(TPU_OP_RD_HOST, 0, rows, 0, 0, n_, n_),
                                             halt()};
    tpusim_mem_timing(sim_, 5, 4 * n_);
    const uint64_t stream5 = cycles_of(stream);
    tpusim_mem_timing(sim_, 505, 4 * n_);
    const uint64_t stream505 = cycles_of(stream);
    EXPECT_EQ(stream505 - stream5, 500u);
    for (uint32_t r = 0; r < rows; r++) {
        std::vector<int8_t> row(n_);
        ASSERT_EQ(tpusim_ub_read(sim_, r, row.data()), 0);
        ASSERT_EQ(0, std::memcmp(row.data(), &src[r * n_], n_)) << "UB row " << r;
    }
}

// Rows of n_ bytes at n_/2 and n_/4 bytes per cycle hold the acceptance slot 2 and 4 cycles
// each, so R rows take 2(R-1) cycles more at the lower bandwidth (the last response still comes
// `latency` after its acceptance); a single row is not slowed. The rows are 4N bytes apart, a
// request each.
TEST_P(Device, BandwidthPacesRequests)
{
    const uint32_t rows = 3 * n_;
    const std::vector<tpusim_insn> many = {tpusim_encode(TPU_OP_RD_HOST, 0, rows, 0, 0, n_, 4 * n_),
                                           halt()};
    const std::vector<tpusim_insn> one = {tpusim_encode(TPU_OP_RD_HOST, 0, 1, 0, 0, n_, n_),
                                          halt()};
    tpusim_mem_timing(sim_, 10, n_ / 2);
    const uint64_t many2 = cycles_of(many), one2 = cycles_of(one);
    tpusim_mem_timing(sim_, 10, n_ / 4);
    const uint64_t many4 = cycles_of(many), one4 = cycles_of(one);
    EXPECT_EQ(many4 - many2, 2u * (rows - 1));
    EXPECT_EQ(one4, one2);
    EXPECT_EQ(tpusim_perf(sim_, TPU_PERF_DMA_RD_BYTES), n_);
}

TEST_P(Device, TimeoutThenReset)
{
    const uint32_t rows = 64;
    const std::vector<tpusim_insn> prog = {
        tpusim_encode(TPU_OP_RD_HOST, 0, rows, 0, 0, n_, n_),
        tpusim_encode(TPU_OP_WR_HOST, 0, rows, 0x8000, 0, n_, n_), halt()};
    uint64_t c0 = tpusim_cycle(sim_);
    ASSERT_EQ(tpusim_run_program(sim_, prog.data(), prog.size(), 20), TPUSIM_TIMEOUT);
    EXPECT_EQ(tpusim_cycle(sim_), c0 + 20);
    EXPECT_TRUE(tpusim_reg_read(sim_, TPU_CSR_STATUS) & TPU_STATUS_BUSY);
    c0 = tpusim_cycle(sim_);
    EXPECT_EQ(tpusim_run(sim_, 7), TPUSIM_TIMEOUT);
    EXPECT_EQ(tpusim_cycle(sim_), c0 + 7);

    tpusim_reset(sim_);
    EXPECT_EQ(tpusim_reg_read(sim_, TPU_CSR_STATUS), 0u);
    EXPECT_EQ(tpusim_reg_read(sim_, TPU_CSR_INSN_COUNT), 0u);
    EXPECT_EQ(tpusim_reg_read(sim_, TPU_CSR_MEM_SIZE), kMem);
    std::vector<uint8_t> src;
    fill_random(0, rows * n_, &src);
    ASSERT_EQ(tpusim_run_program(sim_, prog.data(), prog.size(), 100000), TPUSIM_HALTED);
    EXPECT_EQ(mem(0x8000, rows * n_), src);
}

// Instructions pushed one by one: the queue fills behind a SYNC that waits for a slow read.
TEST_P(Device, PushUntilFullThenRun)
{
    tpusim_mem_timing(sim_, 10, 1);
    const tpusim_insn read = tpusim_encode(TPU_OP_RD_HOST, 0, 64, 0, 0, n_, n_);
    const tpusim_insn sync = tpusim_encode(TPU_OP_SYNC, 0, 0, 0, 0, 0, 0);
    ASSERT_EQ(tpusim_push(sim_, &read), 1);
    uint32_t pushed = 0;
    while (pushed <= hw_.iq_depth + 2 && tpusim_push(sim_, &sync))
        pushed++;
    EXPECT_GE(pushed, hw_.iq_depth - 1);
    EXPECT_LE(pushed, hw_.iq_depth + 1);
    EXPECT_EQ(tpusim_reg_read(sim_, TPU_CSR_IQ_FREE), 0u);
    const tpusim_insn end = halt();
    ASSERT_EQ(tpusim_run_program(sim_, &end, 1, 100000), TPUSIM_HALTED);
    EXPECT_EQ(tpusim_reg_read(sim_, TPU_CSR_SYNC_COUNT), pushed);
    EXPECT_EQ(tpusim_reg_read(sim_, TPU_CSR_INSN_COUNT), pushed + 2);
}

TEST_P(Device, ErrorsStopTheRun)
{
    const std::vector<tpusim_insn> bad = {tpusim_encode(TPU_OP_SYNC, 0, 0, 0, 0, 0, 0),
                                          tpusim_encode(0x2a, 0, 0, 0, 0, 0, 0), halt()};
    ASSERT_EQ(tpusim_run_program(sim_, bad.data(), bad.size(), 10000), TPUSIM_ERROR);
    EXPECT_EQ(tpusim_reg_read(sim_, TPU_CSR_ERROR_CODE), uint32_t{TPU_FAULT_ILLEGAL_OPCODE});
    EXPECT_EQ(tpusim_reg_read(sim_, TPU_CSR_ERROR_PC), 1u);
    EXPECT_TRUE(tpusim_reg_read(sim_, TPU_CSR_STATUS) & TPU_STATUS_ERROR);
    EXPECT_EQ(tpusim_run(sim_, 1000), TPUSIM_ERROR);

    // MEM_SIZE claiming more than the memory has: the memory answers err -> MEM_FAULT.
    tpusim_reset(sim_);
    tpusim_reg_write(sim_, TPU_CSR_MEM_SIZE, 2 * kMem);
    const std::vector<tpusim_insn> fault = {
        tpusim_encode(TPU_OP_RD_HOST, 0, 2, kMem - n_, 0, n_, n_), halt()};
    ASSERT_EQ(tpusim_run_program(sim_, fault.data(), fault.size(), 10000), TPUSIM_ERROR);
    EXPECT_EQ(tpusim_reg_read(sim_, TPU_CSR_ERROR_CODE), uint32_t{TPU_FAULT_MEM_FAULT});
    EXPECT_EQ(tpusim_reg_read(sim_, TPU_CSR_ERROR_PC), 0u);
    tpusim_reset(sim_);
    const tpusim_insn end = halt();
    EXPECT_EQ(tpusim_run_program(sim_, &end, 1, 1000), TPUSIM_HALTED);
}

// Trace timestamps are 10 per cycle; a window [from, to) holds exactly the times 10*from ..
// 10*to - 5 (two per cycle).
TEST_P(Device, TraceWindows)
{
    const uint32_t rows = 16;
    const std::vector<tpusim_insn> prog = {
        tpusim_encode(TPU_OP_RD_HOST, 0, rows, 0, 0, n_, n_),
        tpusim_encode(TPU_OP_WR_HOST, 0, rows, 0x8000, 0, n_, n_), halt()};
    const std::string fst = scratch_path("n" + std::to_string(n_) + ".fst");
    const std::string vcd = scratch_path("n" + std::to_string(n_) + ".vcd");
    char err[256] = "";

    // FST, open-ended window closed by tpusim_trace_close.
    ASSERT_EQ(tpusim_trace_open(sim_, fst.c_str(), TPUSIM_TRACE_FST, 0, 0, err, sizeof err), 0)
        << err;
    const uint64_t start = tpusim_cycle(sim_);
    ASSERT_EQ(tpusim_run_program(sim_, prog.data(), prog.size(), 100000), TPUSIM_HALTED);
    uint64_t cycles = 0;
    ASSERT_EQ(tpusim_trace_close(sim_, &cycles, err, sizeof err), 0) << err;
    EXPECT_EQ(cycles, tpusim_cycle(sim_) - start);
    const std::string fst_data = slurp(fst);
    EXPECT_GT(fst_data.size(), 100u);
    std::remove(fst.c_str());

    // VCD, a window in the middle of the run that ends by itself.
    const uint64_t from = tpusim_cycle(sim_) + 5, to = from + 20;
    ASSERT_EQ(tpusim_trace_open(sim_, vcd.c_str(), TPUSIM_TRACE_VCD, from, to, err, sizeof err), 0)
        << err;
    ASSERT_EQ(tpusim_run_program(sim_, prog.data(), prog.size(), 100000), TPUSIM_HALTED);
    ASSERT_GT(tpusim_cycle(sim_), to);
    const std::string text = slurp(vcd); // complete without tpusim_trace_close
    ASSERT_EQ(tpusim_trace_close(sim_, &cycles, err, sizeof err), 0) << err;
    EXPECT_EQ(cycles, to - from);
    EXPECT_NE(text.find("$enddefinitions"), std::string::npos);
    EXPECT_NE(text.find("mem_req_valid"), std::string::npos);
    std::vector<uint64_t> times;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
        if (line.size() > 1 && line[0] == '#')
            times.push_back(std::stoull(line.substr(1)));
    ASSERT_FALSE(times.empty());
    EXPECT_EQ(times.front(), 10 * from);
    EXPECT_EQ(times.back(), 10 * to - 5);
    for (uint64_t t : times) {
        EXPECT_GE(t, 10 * from);
        EXPECT_LT(t, 10 * to);
    }
    std::remove(vcd.c_str());

    // A window after the run: an empty trace, and says so.
    const uint64_t late = tpusim_cycle(sim_) + 1000000;
    ASSERT_EQ(tpusim_trace_open(sim_, fst.c_str(), TPUSIM_TRACE_FST, late, 0, err, sizeof err), 0)
        << err;
    ASSERT_EQ(tpusim_run_program(sim_, prog.data(), prog.size(), 100000), TPUSIM_HALTED);
    ASSERT_EQ(tpusim_trace_close(sim_, &cycles, err, sizeof err), 0) << err;
    EXPECT_EQ(cycles, 0u);
    EXPECT_GT(slurp(fst).size(), 0u);
    std::remove(fst.c_str());
    // Each trace was written beside its name and renamed: no temporary is left.
    EXPECT_EQ(files_in(scratch_path("")), std::vector<std::string>{});
}

TEST_P(Device, TraceOpenFailsCleanly)
{
    char err[256] = "";
    for (int format : {TPUSIM_TRACE_FST, TPUSIM_TRACE_VCD}) {
        err[0] = '\0';
        const char *bad = "/nonexistent-dir/x.trace";
        EXPECT_EQ(tpusim_trace_open(sim_, bad, format, 0, 0, err, sizeof err), -1);
        EXPECT_NE(std::strstr(err, bad), nullptr) << err;
    }
    EXPECT_EQ(tpusim_trace_open(sim_, scratch_path("x").c_str(), 7, 0, 0, err, sizeof err), -1);
    EXPECT_NE(err[0], '\0');
    EXPECT_EQ(tpusim_trace_close(sim_, nullptr, err, sizeof err), 0); // nothing open: harmless
    // Refused before it is opened: nothing is created.
    EXPECT_EQ(tpusim_trace_writable("/nonexistent-dir/x.fst", err, sizeof err), -1);
    EXPECT_NE(std::strstr(err, "/nonexistent-dir/x.fst"), nullptr) << err;
    EXPECT_EQ(tpusim_trace_writable(scratch_path("w.fst").c_str(), err, sizeof err), 0) << err;
    EXPECT_EQ(files_in(scratch_path("")), std::vector<std::string>{});
    const std::vector<tpusim_insn> prog = {tpusim_encode(TPU_OP_RD_HOST, 0, 2, 0, 0, n_, n_),
                                           halt()};
    EXPECT_EQ(tpusim_run_program(sim_, prog.data(), prog.size(), 10000), TPUSIM_HALTED);
}

INSTANTIATE_TEST_SUITE_P(Arrays, Device, ::testing::ValuesIn(built_sizes()),
                         [](const ::testing::TestParamInfo<uint32_t> &info) {
                             return "N" + std::to_string(info.param);
                         });

} // namespace

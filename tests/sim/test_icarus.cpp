// The same RTL under Icarus Verilog: GEMM programs (int8, bf16) and RD_ACC's (ISA 1.4) run in
// tests/rtl/tb_core.v (file mode) and must leave exactly the memory that the golden model and the
// verilated core leave, in the same cycles as the verilated core.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/tpusim.h"
#include "tests/support/fp_values.h"
#include "tests/support/progs.h"

namespace
{

constexpr uint32_t kN = 8;
constexpr uint64_t kMemSize = 1u << 16;

// The running test's own directory: ctest runs the tests of this file side by side.
std::string work_dir()
{
    std::string d = std::string(TPU_BINARY_DIR) + "/tests/icarus/" +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::string cmd = "mkdir -p '" + d + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
    return d;
}

void write_program(const std::string &path, const tpu_prog &p)
{
    FILE *f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    for (size_t i = 0; i < p.n; i++)
        std::fprintf(f, "%08x%08x%08x%08x\n", p.insns[i].w[3], p.insns[i].w[2], p.insns[i].w[1],
                     p.insns[i].w[0]);
    std::fclose(f);
}

void write_bytes(const std::string &path, const uint8_t *b, size_t n)
{
    FILE *f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    for (size_t i = 0; i < n; i++)
        std::fprintf(f, "%02x\n", b[i]);
    std::fclose(f);
}

std::vector<uint8_t> read_bytes(const std::string &path)
{
    std::vector<uint8_t> out;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line))
        if (!line.empty())
            out.push_back((uint8_t)std::strtoul(line.c_str(), nullptr, 16));
    return out;
}

bool have_n8()
{
    uint32_t sizes[16];
    int nb = tpusim_arrays(sizes, 16);
    for (int i = 0; i < nb; i++)
        if (sizes[i] == kN)
            return true;
    return false;
}

struct Sim {
    tpusim *s = nullptr;
    tpusim_hwcfg hw{};
    Sim()
    {
        tpusim_config cfg;
        tpusim_config_default(&cfg);
        cfg.array_n = kN;
        cfg.mem_size = kMemSize;
        cfg.mem_latency = 4; // tb_core's default memory latency, so that the cycles match
        char err[256];
        s = tpusim_create(&cfg, err, sizeof err);
        EXPECT_NE(s, nullptr) << err;
        if (s)
            tpusim_read_hwcfg(s, &hw);
    }
    ~Sim() { tpusim_destroy(s); }
    Sim(const Sim &) = delete;
    Sim &operator=(const Sim &) = delete;
};

// p from img on the golden model, the verilated core and Icarus: the same memory everywhere, and
// the same cycles from the first push to HALTED on both simulators.
void expect_same(Sim &sim, const tpu_prog &p, const std::vector<uint8_t> &img,
                 const std::string &what)
{
    // Golden.
    tpusim_golden *g = tpusim_golden_create(&sim.hw);
    ASSERT_NE(g, nullptr);
    std::copy(img.begin(), img.end(), tpusim_golden_mem(g));
    size_t at = 0;
    ASSERT_EQ(tpusim_golden_run(g, p.insns, p.n, &at), TPU_FAULT_NONE);

    // Verilator.
    ASSERT_EQ(tpusim_mem_write(sim.s, 0, img.data(), img.size()), 0);
    auto t0 = std::chrono::steady_clock::now();
    const uint64_t c0 = tpusim_cycle(sim.s);
    ASSERT_EQ(tpusim_run_program(sim.s, p.insns, p.n, 1'000'000), TPUSIM_HALTED);
    const uint64_t vl_cycles = tpusim_cycle(sim.s) - c0;
    double vl_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::vector<uint8_t> vl(kMemSize);
    ASSERT_EQ(tpusim_mem_read(sim.s, 0, vl.data(), vl.size()), 0);

    // Icarus.
    std::string dir = work_dir();
    write_program(dir + "/prog.hex", p);
    write_bytes(dir + "/mem.hex", img.data(), img.size());
    std::ostringstream cmd;
    cmd << "iverilog -g2012 -I '" TPU_ISA_DIR "' -I '" TPU_SOURCE_DIR "/rtl' -I '" TPU_SOURCE_DIR
           "/tests/rtl' -o '"
        << dir << "/core.vvp' -s tb_core "
        << "-P tb_core.N=" << kN << " " << TPU_SOURCE_DIR << "/rtl/*.v " << TPU_SOURCE_DIR
        << "/tests/rtl/model/*.v " << TPU_SOURCE_DIR << "/tests/rtl/tb_core.v && vvp -n '" << dir
        << "/core.vvp' +prog=" << dir << "/prog.hex +mem=" << dir
        << "/mem.hex +memsize=" << kMemSize << " +dump=" << dir
        << "/dump.hex +dumpbytes=" << kMemSize << " > '" << dir << "/icarus.log' 2>&1";
    auto t1 = std::chrono::steady_clock::now();
    ASSERT_EQ(std::system(cmd.str().c_str()), 0) << "see " << dir << "/icarus.log";
    double iv_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    std::vector<uint8_t> iv = read_bytes(dir + "/dump.hex");
    ASSERT_EQ(iv.size(), kMemSize) << "see " << dir << "/icarus.log";
    std::ifstream log(dir + "/icarus.log");
    std::string line;
    uint64_t iv_cycles = 0;
    while (std::getline(log, line))
        if (line.rfind("RESULT ", 0) == 0 && line.find("cycles=") != std::string::npos)
            iv_cycles = std::strtoull(line.c_str() + line.find("cycles=") + 7, nullptr, 10);

    const uint8_t *gm = tpusim_golden_mem(g);
    for (size_t i = 0; i < kMemSize; i++) {
        ASSERT_EQ(iv[i], gm[i]) << what << ": Icarus vs golden at mem 0x" << std::hex << i;
        ASSERT_EQ(vl[i], gm[i]) << what << ": Verilator vs golden at mem 0x" << std::hex << i;
    }
    EXPECT_EQ(iv_cycles, vl_cycles) << what;
    std::printf("%s (N=%u): Verilator %.3f s, Icarus %.3f s (compile + run), %llu cycles\n",
                what.c_str(), kN, vl_s, iv_s, (unsigned long long)vl_cycles);
    tpusim_golden_destroy(g);
}

TEST(Icarus, GemmMatchesGoldenAndVerilator)
{
    if (!have_n8())
        GTEST_SKIP() << "no N=8 model built";
    Sim sim;
    ASSERT_NE(sim.s, nullptr);
    gemm_desc d{};
    d.m = 13, d.k = 21, d.n = 11, d.bias = 1, d.relu = 1;
    uint64_t end = gemm_layout(&d, 64);
    std::vector<uint8_t> img(kMemSize, 0);
    tpu_rng r{42};
    rng_fill_int8(&r, reinterpret_cast<int8_t *>(img.data()), end);
    auto *prm = reinterpret_cast<int32_t *>(img.data() + d.params);
    for (uint32_t j = 0; j < 3 * d.n; j++)
        prm[j] = (int32_t)rng_range(&r, -5000, 5000);
    tpu_prog p{};
    ASSERT_EQ(gemm_program(&p, &sim.hw, &d), 0);
    expect_same(sim, p, img, "int8 GEMM 13x21x11");
    prog_free(&p);
}

// A bf16 GEMM (ISA 1.3) with bias and ReLU, bf16 out, on edge values.
TEST(Icarus, Bf16GemmMatchesGoldenAndVerilator)
{
    if (!have_n8())
        GTEST_SKIP() << "no N=8 model built";
    Sim sim;
    ASSERT_NE(sim.s, nullptr);
    bf16_gemm_desc d{};
    d.m = 13, d.k = 21, d.n = 11, d.bias_on = 1, d.relu = 1, d.out_bf16 = 1;
    uint64_t end = bf16_gemm_layout(&d, kN, 64);
    std::vector<uint8_t> img(kMemSize, 0);
    tpu_rng r{43};
    rng_fill_fp(&r, img.data(), end);
    tpu_prog p{};
    bf16_gemm_program(&p, kN, &d, 0, 0);
    prog_emit(&p, TPU_OP_HALT, 0, 0, 0, 0, 0, 0);
    expect_same(sim, p, img, "bf16 GEMM 13x21x11");
    prog_free(&p);
}

// RD_ACC (ISA 1.4) in int32 and fp32 on edge values, and beside MATMULs on its ACC rows.
TEST(Icarus, RdAccMatchesGoldenAndVerilator)
{
    if (!have_n8())
        GTEST_SKIP() << "no N=8 model built";
    Sim sim;
    ASSERT_NE(sim.s, nullptr);
    std::vector<uint8_t> img(kMemSize, 0);
    tpu_rng r{44};
    tpu_prog p{};
    rdacc_program(&p, kN, img.data(), 64, 3, &r);
    prog_emit(&p, TPU_OP_HALT, 0, 0, 0, 0, 0, 0);
    expect_same(sim, p, img, "RD_ACC");
    prog_free(&p);
}

} // namespace

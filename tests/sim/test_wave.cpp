// test_wave.cpp - waveforms: traces of a small GEMM (FST and VCD, whole run and window) and the
// GTKWave save file tpusim_gtkw_write lays out beside them (sim/gtkw.c), for every built N.
// GTKWave drops a signal it cannot find without a word, so the save file is checked here against
// the trace's own declarations, as fst2vcd reads them.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/gtkw.h"
#include "sim/tpusim.h"
#include "tests/support/progs.h"

namespace
{

std::vector<uint32_t> built_sizes()
{
    std::vector<uint32_t> sizes(64);
    sizes.resize(static_cast<size_t>(tpusim_arrays(sizes.data(), static_cast<int>(sizes.size()))));
    return sizes;
}

std::string slurp(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

off_t file_size(const std::string &path)
{
    struct stat st;
    return stat(path.c_str(), &st) == 0 ? st.st_size : -1;
}

// A fresh directory for one test, removed with everything in it.
class ScratchDir
{
  public:
    ScratchDir()
    {
        const char *tmp = std::getenv("TMPDIR");
        std::string templ = std::string(tmp ? tmp : "/tmp") + "/test_wave_XXXXXX";
        if (mkdtemp(&templ[0]))
            path_ = templ;
    }
    ~ScratchDir()
    {
        std::error_code ec;
        if (!path_.empty())
            std::filesystem::remove_all(path_, ec);
    }
    ScratchDir(const ScratchDir &) = delete;
    ScratchDir &operator=(const ScratchDir &) = delete;
    bool ok() const { return !path_.empty(); }
    std::string operator/(const std::string &name) const { return path_ + "/" + name; }

  private:
    std::string path_;
};

// The trace as VCD text: the file itself, or what fst2vcd makes of an FST. Empty if fst2vcd fails.
std::string vcd_text(const std::string &trace, const std::string &scratch)
{
    if (trace.size() < 4 || trace.compare(trace.size() - 4, 4, ".fst") != 0)
        return slurp(trace);
    const std::string cmd = "fst2vcd -f '" + trace + "' -o '" + scratch + "' 2>/dev/null";
    const int status = std::system(cmd.c_str());
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return "";
    return slurp(scratch);
}

// Every declared signal, as "TOP.tpu_core.busy" or "TOP.tpu_core.seq_op[7:0]".
std::set<std::string> declared(const std::string &vcd)
{
    std::set<std::string> vars;
    std::vector<std::string> scope;
    std::istringstream in(vcd);
    for (std::string line; std::getline(in, line);) {
        std::istringstream words(line);
        std::string kw, type, width, id, name, range;
        words >> kw;
        if (kw == "$scope") {
            words >> type >> name;
            scope.push_back(name);
        } else if (kw == "$upscope") {
            if (!scope.empty())
                scope.pop_back();
        } else if (kw == "$var") {
            words >> type >> width >> id >> name >> range;
            std::string full;
            for (const std::string &s : scope)
                full += s + ".";
            vars.insert(full + name + (range == "$end" ? "" : range));
        } else if (kw == "$enddefinitions") {
            break;
        }
    }
    return vars;
}

// The save file's traces: each signal it names ("#{...} (i)sig ..." names sig once per bit).
std::vector<std::string> named_signals(const std::string &gtkw)
{
    std::vector<std::string> names;
    std::istringstream in(gtkw);
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || std::strchr("[@-*^", line[0]))
            continue;
        if (line[0] == '+' || line[0] == '#')
            line.erase(0, line.find('}') + 1);
        std::istringstream words(line);
        for (std::string w; words >> w;)
            names.push_back(w[0] == '(' ? w.substr(w.find(')') + 1) : w);
    }
    return names;
}

size_t count_lines_with(const std::string &text, const std::string &what)
{
    size_t n = 0;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        n += line.find(what) != std::string::npos;
    return n;
}

// An N x N x N GEMM of small values, traced to `trace` (format by its extension) in the cycle
// window [from, to) (to = 0: the whole run).
void traced_gemm(uint32_t n, const std::string &trace, uint64_t from = 0, uint64_t to = 0)
{
    tpusim_config cfg;
    tpusim_config_default(&cfg);
    cfg.array_n = n;
    cfg.mem_size = 1 << 20;
    char err[256] = "";
    tpusim *sim = tpusim_create(&cfg, err, sizeof err);
    ASSERT_NE(sim, nullptr) << err;
    tpusim_hwcfg hw;
    tpusim_read_hwcfg(sim, &hw);
    gemm_desc d{};
    d.m = d.k = d.n = n;
    std::vector<uint8_t> img(gemm_layout(&d, 0));
    tpu_rng r{n};
    for (uint32_t i = 0; i < d.c; i++)
        img[i] = static_cast<uint8_t>(rng_range(&r, -5, 5));
    ASSERT_EQ(tpusim_mem_write(sim, 0, img.data(), img.size()), 0);
    tpu_prog p{};
    ASSERT_EQ(gemm_program(&p, &hw, &d), 0);
    const bool vcd = trace.size() > 4 && trace.compare(trace.size() - 4, 4, ".vcd") == 0;
    ASSERT_EQ(tpusim_trace_open(sim, trace.c_str(), vcd ? TPUSIM_TRACE_VCD : TPUSIM_TRACE_FST,
                                tpusim_cycle(sim) + from, to ? tpusim_cycle(sim) + to : 0, err,
                                sizeof err),
              0)
        << err;
    EXPECT_EQ(tpusim_run_program(sim, p.insns, p.n, 100000), TPUSIM_HALTED);
    EXPECT_EQ(tpusim_trace_close(sim, nullptr, err, sizeof err), 0) << err;
    prog_free(&p);
    tpusim_destroy(sim);
}

// tpusim_gtkw_write for trace; returns the save file's text ("" and a failure if it failed).
std::string write_save(const std::string &trace, uint32_t n, const std::string &stem)
{
    char err[512] = "";
    EXPECT_EQ(tpusim_gtkw_write(trace.c_str(), n, 0, err, sizeof err), 0) << err;
    EXPECT_GT(file_size(stem + ".gtkw"), 0);
    EXPECT_GT(file_size(stem + ".opcodes.txt"), 0);
    return slurp(stem + ".gtkw");
}

// Every signal the save file names is declared in the trace.
void expect_all_declared(const std::string &gtkw, const std::string &vcd, uint32_t n)
{
    const std::set<std::string> vars = declared(vcd);
    ASSERT_FALSE(vars.empty()) << "no declarations in the trace";
    const std::vector<std::string> names = named_signals(gtkw);
    EXPECT_GT(names.size(), 40u);
    for (const std::string &name : names)
        EXPECT_TRUE(vars.count(name)) << name << " (N=" << n << ")";
}

class Wave : public ::testing::TestWithParam<uint32_t>
{
};

TEST_P(Wave, FstTraceAndSaveFile)
{
    const uint32_t n = GetParam();
    ScratchDir dir;
    ASSERT_TRUE(dir.ok());
    const std::string trace = dir / "wave.fst";
    traced_gemm(n, trace);
    ASSERT_GT(file_size(trace), 0);
    const std::string vcd = vcd_text(trace, dir / "wave.vcd");
    ASSERT_NE(vcd.find("$enddefinitions"), std::string::npos) << "fst2vcd cannot read " << trace;

    const std::string gtkw = write_save(trace, n, dir / "wave");
    expect_all_declared(gtkw, vcd, n);

    // It opens this trace and shows the opcode through the filter written beside it.
    EXPECT_NE(gtkw.find("[dumpfile] \"" + trace + "\"\n"), std::string::npos);
    EXPECT_NE(gtkw.find("^1 " + (dir / "wave.opcodes.txt") +
                        "\n+{opcode (queue head)} TOP.tpu_core.seq_op[7:0]\n"),
              std::string::npos);
    EXPECT_EQ(count_lines_with(gtkw, "^1 "), 1u);
    const std::string filter = slurp(dir / "wave.opcodes.txt");
    for (uint32_t op = TPU_OP_RD_HOST; op <= TPU_OP_HALT; op++)
        EXPECT_NE(filter.find("\n" + std::to_string(op) + " " + tpusim_opcode_name(op) + "\n"),
                  std::string::npos)
            << op;

    // Five groups; rows and columns 0..7 and N-1 (all of them up to N = 9).
    EXPECT_EQ(count_lines_with(gtkw, "@800200"), 5u);
    EXPECT_EQ(count_lines_with(gtkw, "@1000200"), 5u);
    const size_t lanes = n <= 9 ? n : 9;
    EXPECT_EQ(count_lines_with(gtkw, " a_in} "), lanes);
    EXPECT_EQ(count_lines_with(gtkw, " w_in} "), lanes);
    EXPECT_EQ(count_lines_with(gtkw, " psum} "), lanes);
    EXPECT_EQ(count_lines_with(gtkw, " fsum} "), lanes);
    EXPECT_EQ(count_lines_with(gtkw, " acc_data} "), lanes);
    EXPECT_EQ(count_lines_with(gtkw, "not shown)"), n <= 9 ? 0u : 4u);
    const std::string last = std::to_string(n - 1);
    EXPECT_NE(gtkw.find("+{row " + last + " a_in} TOP.tpu_core.u_mxu.u_array.g_row[" + last +
                        "].g_col[0].u_pe.a_in[15:0]\n"),
              std::string::npos);

    // It opens on the first matmul: named marker A on its first UB read, B on its first
    // accumulator write, 2N+2 cycles (10 ns each) later.
    long long start = -1, marker = -1, a = -1, b = -1;
    double zoom = 0;
    const size_t tpos = gtkw.find("\n[timestart] ");
    ASSERT_NE(tpos, std::string::npos);
    ASSERT_EQ(std::sscanf(gtkw.c_str() + tpos, "\n[timestart] %lld", &start), 1);
    const size_t zpos = gtkw.find("\n*");
    ASSERT_NE(zpos, std::string::npos);
    ASSERT_EQ(std::sscanf(gtkw.c_str() + zpos, "\n*%lf %lld %lld %lld", &zoom, &marker, &a, &b), 4);
    EXPECT_LT(start, a);
    EXPECT_EQ(b - a, 10 * (2 * static_cast<long long>(n) + 2));
    EXPECT_EQ(marker, b);
    EXPECT_LT(zoom, 0);
}

TEST_P(Wave, VcdTraceAndSaveFile)
{
    const uint32_t n = GetParam();
    ScratchDir dir;
    ASSERT_TRUE(dir.ok());
    const std::string trace = dir / "wave.vcd";
    traced_gemm(n, trace);
    const std::string vcd = slurp(trace);
    ASSERT_NE(vcd.find("$enddefinitions"), std::string::npos);
    const std::string gtkw = write_save(trace, n, dir / "wave");
    expect_all_declared(gtkw, vcd, n);
    EXPECT_NE(gtkw.find("[dumpfile] \"" + trace + "\"\n"), std::string::npos);
}

// A window traces less; one that misses every matmul still gets a save file, with no markers.
TEST_P(Wave, TraceWindow)
{
    const uint32_t n = GetParam();
    ScratchDir dir;
    ASSERT_TRUE(dir.ok());
    traced_gemm(n, dir / "full.fst");
    traced_gemm(n, dir / "part.fst", 0, 40);
    ASSERT_GT(file_size(dir / "part.fst"), 0);
    EXPECT_LT(file_size(dir / "part.fst"), file_size(dir / "full.fst"));
    const std::string gtkw = write_save(dir / "part.fst", n, dir / "part");
    expect_all_declared(gtkw, vcd_text(dir / "part.fst", dir / "part.vcd"), n);
    EXPECT_NE(gtkw.find("\n*"), std::string::npos);
    EXPECT_NE(gtkw.find(" -1 -1 -1\n"), std::string::npos) << "markers outside the window";
}

INSTANTIATE_TEST_SUITE_P(Sizes, Wave, ::testing::ValuesIn(built_sizes()),
                         [](const ::testing::TestParamInfo<uint32_t> &i) {
                             return "N" + std::to_string(i.param);
                         });

// Paths that cannot be written or read fail with a message, and leave nothing half-written.
TEST(WaveErrors, FailCleanly)
{
    ScratchDir dir;
    ASSERT_TRUE(dir.ok());
    const uint32_t n = built_sizes().front();
    char err[512] = "";

    tpusim_config cfg;
    tpusim_config_default(&cfg);
    cfg.array_n = n;
    tpusim *sim = tpusim_create(&cfg, err, sizeof err);
    ASSERT_NE(sim, nullptr) << err;
    EXPECT_EQ(tpusim_trace_open(sim, "/nonexistent-dir/wave.fst", TPUSIM_TRACE_FST, 0, 0, err,
                                sizeof err),
              -1);
    EXPECT_NE(std::strstr(err, "/nonexistent-dir/wave.fst"), nullptr) << err;
    tpusim_destroy(sim);

    err[0] = 0;
    EXPECT_EQ(tpusim_gtkw_write("/nonexistent-dir/wave.fst", n, 0, err, sizeof err), -1);
    EXPECT_NE(std::strstr(err, "/nonexistent-dir/wave.fst"), nullptr) << err;
    err[0] = 0;
    EXPECT_EQ(tpusim_gtkw_write(nullptr, n, 0, err, sizeof err), -1);
    EXPECT_NE(err[0], 0);

    const std::string trace = dir / "wave.fst";
    traced_gemm(n, trace);

    // A directory where the save file or the filter would go.
    for (const char *blocked : {"wave.gtkw", "wave.opcodes.txt"}) {
        std::remove((dir / blocked).c_str());
        ASSERT_EQ(mkdir((dir / blocked).c_str(), 0755), 0);
        err[0] = 0;
        EXPECT_EQ(tpusim_gtkw_write(trace.c_str(), n, 0, err, sizeof err), -1) << blocked;
        EXPECT_NE(std::strstr(err, blocked), nullptr) << err;
        ASSERT_EQ(rmdir((dir / blocked).c_str()), 0);
        // All or nothing: neither file, nor a temporary.
        EXPECT_EQ(file_size(dir / "wave.gtkw"), -1);
        EXPECT_EQ(file_size(dir / "wave.opcodes.txt"), -1);
        EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir / ""),
                                std::filesystem::directory_iterator()),
                  1); // wave.fst
    }

    // Not a trace of this array size, or not a trace at all.
    err[0] = 0;
    EXPECT_EQ(tpusim_gtkw_write(trace.c_str(), n + 1, 0, err, sizeof err), -1);
    EXPECT_NE(std::strstr(err, "array"), nullptr) << err;
    std::ofstream(dir / "junk.fst") << "not a waveform\n";
    err[0] = 0;
    EXPECT_EQ(tpusim_gtkw_write((dir / "junk.fst").c_str(), n, 0, err, sizeof err), -1);
    EXPECT_NE(std::strstr(err, "junk.fst"), nullptr) << err;

    // The same trace still works.
    err[0] = 0;
    EXPECT_EQ(tpusim_gtkw_write(trace.c_str(), n, 0, err, sizeof err), 0) << err;
}

} // namespace

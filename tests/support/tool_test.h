// tool_test.h - GoogleTest fixture for tests that run build/bin/tpusim as a program: a scratch
// directory per test, the tool's exit code, stdout and stderr, and the files it left behind.
#ifndef TPU_TESTS_SUPPORT_TOOL_TEST_H
#define TPU_TESTS_SUPPORT_TOOL_TEST_H

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "io/npy.h"

namespace tool_test
{

namespace fs = std::filesystem;

inline std::string slurp(const fs::path &p)
{
    std::ifstream f(p, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

inline void spit(const fs::path &p, const std::string &bytes)
{
    std::ofstream f(p, std::ios::binary);
    f << bytes;
}

// An .npy file of t elements in shape from data (a test failure if it cannot be encoded).
inline void save_npy(const fs::path &p, npy_dtype t, std::vector<uint64_t> shape, const void *data)
{
    npy_array a{};
    a.dtype = t;
    a.ndim = (int)shape.size();
    a.count = 1;
    for (size_t i = 0; i < shape.size(); i++)
        a.count *= a.shape[i] = shape[i];
    a.data = const_cast<void *>(data);
    size_t len = 0;
    void *img = npy_encode(&a, 0, &len);
    ASSERT_NE(img, nullptr);
    spit(p, std::string(static_cast<char *>(img), len));
    free(img);
}

struct Result {
    int code;
    std::string out, err;
};

class ToolTest : public ::testing::Test
{
  protected:
    fs::path dir; // <build>/<suite_dir>/<TestSuite.Test>, emptied before each test

    explicit ToolTest(std::string suite_dir) : suite_dir_(std::move(suite_dir)) {}

    void SetUp() override
    {
        const ::testing::TestInfo *t = ::testing::UnitTest::GetInstance()->current_test_info();
        std::string name = std::string(t->test_suite_name()) + "." + t->name();
        std::replace(name.begin(), name.end(), '/', '_');
        dir = fs::path(TPU_BINARY_DIR) / suite_dir_ / name;
        fs::remove_all(dir);
        fs::create_directories(dir);
    }

    std::string path(const std::string &file) const { return (dir / file).string(); }
    // The same, quoted for the shell.
    std::string quoted(const std::string &file) const { return "'" + path(file) + "'"; }

    // Runs `tpusim <args>`, its output captured in dir.
    Result tool(const std::string &args) const
    {
        const std::string cmd = "'" TPU_BINARY_DIR "/bin/tpusim' " + args + " >" +
                                quoted("stdout.txt") + " 2>" + quoted("stderr.txt");
        const int st = std::system(cmd.c_str());
        return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, slurp(dir / "stdout.txt"),
                slurp(dir / "stderr.txt")};
    }

    // Files the tool left in dir other than the ones the test made (and stdout/stderr).
    std::vector<std::string> leftovers(const std::vector<std::string> &mine) const
    {
        std::vector<std::string> extra;
        for (const auto &e : fs::directory_iterator(dir)) {
            const std::string f = e.path().filename().string();
            if (f != "stdout.txt" && f != "stderr.txt" &&
                std::find(mine.begin(), mine.end(), f) == mine.end())
                extra.push_back(f);
        }
        return extra;
    }

  private:
    std::string suite_dir_;
};

} // namespace tool_test

#endif

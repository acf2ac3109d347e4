// test_disk.cpp - the tools' outputs on a failing machine: a full disk (a small tmpfs mounted for
// the test: root only, skipped otherwise) and a SIGINT or SIGTERM in the middle of a run. Every
// output (tpusim's --out, --json, --output and --trace, tpuc's -o) is written all or nothing: an
// error naming the file and exit 2, or death by the signal, and no file left behind.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "sim/tpusim.h"
#include "tests/support/tool_test.h"

namespace
{

using namespace tool_test;

const std::string kModel = TPU_SOURCE_DIR "/models/mnist/";

uint32_t largest_array()
{
    uint32_t sizes[64];
    const int n = tpusim_arrays(sizes, 64);
    return n > 0 ? sizes[n - 1] : 8;
}

// Writes to path until the file system is full; the bytes written.
uint64_t fill(const fs::path &path)
{
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return 0;
    static const char block[65536] = {0};
    uint64_t total = 0;
    for (size_t chunk = sizeof block; chunk;) {
        const ssize_t w = write(fd, block, chunk);
        if (w > 0)
            total += (uint64_t)w;
        else
            chunk /= 2; // down to single bytes, so nothing is left
    }
    close(fd);
    return total;
}

class Disk : public ToolTest
{
  protected:
    fs::path mnt; // a tmpfs of the size the test mounts

    Disk() : ToolTest("test_disk") {}

    void TearDown() override
    {
        if (mounted_)
            umount2(mnt.c_str(), MNT_DETACH);
    }

    // Mounts a tmpfs of size bytes at dir/fs; false (the test skipped) without the privilege.
    bool mount_fs(const std::string &size)
    {
        mnt = dir / "fs";
        fs::create_directories(mnt);
        if (mount("tpusim-test", mnt.c_str(), "tmpfs", 0, ("size=" + size).c_str()) != 0)
            return false;
        mounted_ = true;
        return true;
    }

    std::string in_fs(const std::string &file) const { return "'" + (mnt / file).string() + "'"; }

    // Files in the tmpfs besides "fill".
    std::vector<std::string> fs_leftovers() const
    {
        std::vector<std::string> extra;
        for (const auto &e : fs::directory_iterator(mnt))
            if (e.path().filename() != "fill")
                extra.push_back(e.path().filename().string());
        return extra;
    }

    // tpuc's MNIST package, in dir (not on the tmpfs).
    std::string package()
    {
        const std::string pkg = path("mnist.tpub");
        const std::string cmd = "'" TPU_BINARY_DIR "/bin/tpuc' " + kModel + "mlp.hlo --weights " +
                                kModel + "mlp.safetensors --calibrate " + kModel +
                                "calib.npy --quiet --array " + std::to_string(largest_array()) +
                                " -o '" + pkg + "'";
        EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
        return "'" + pkg + "'";
    }

    // Expects the command to fail with exit 2 and a message naming what, leaving nothing.
    void expect_refused(const Result &r, const std::string &what, const std::string &cmd)
    {
        EXPECT_EQ(r.code, 2) << cmd << "\n" << r.err;
        EXPECT_NE(r.err.find(what), std::string::npos) << cmd << "\n" << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_EQ(fs_leftovers(), std::vector<std::string>{}) << cmd;
    }

  private:
    bool mounted_ = false;
};

#define MOUNT_OR_SKIP(size) \
    if (!mount_fs(size))    \
    GTEST_SKIP() << "cannot mount a tmpfs (needs root): " << std::strerror(errno)

TEST_F(Disk, FullDiskFailsEveryOutputCleanly)
{
    MOUNT_OR_SKIP("1m");
    const std::string pkg = package();
    const std::string run = "run " + pkg + " --input " + kModel + "test_x_u8.npy --input-divide " +
                            "255 --limit 512 --quiet ";
    const std::string gemm =
        "gemm --m 64 --k 64 --n 64 --quiet --array " + std::to_string(largest_array()) + " ";
    const std::string tpuc = "'" TPU_BINARY_DIR "/bin/tpuc' " + kModel + "mlp.hlo --weights " +
                             kModel + "mlp.safetensors --calibrate " + kModel +
                             "calib.npy --quiet -o " + in_fs("m.tpub") + " 2>" +
                             quoted("stderr.txt");
    // Full, then with 4 KiB of room, so that the larger outputs (C is 16 KiB, y 20 KiB, the
    // package 200 KiB) fail halfway.
    for (int partly = 0; partly < 2; partly++) {
        SCOPED_TRACE(partly ? "4 KiB free" : "full");
        fs::remove(mnt / "fill");
        const uint64_t filled = fill(mnt / "fill");
        ASSERT_GT(filled, 4096u);
        if (partly)
            fs::resize_file(mnt / "fill", filled - 4096);
        std::vector<std::string> cmds = {gemm + "--out " + in_fs("c.npy"),
                                         run + "--output " + in_fs("y.npy")};
        if (!partly)
            for (const std::string &cmd :
                 {gemm + "--json " + in_fs("r.json"), run + "--json " + in_fs("r.json")})
                cmds.push_back(cmd);
        for (const std::string &cmd : cmds)
            expect_refused(tool(cmd), "No space left on device", cmd);
        for (const char *trace : {"t.fst", "t.vcd"})
            for (const std::string &cmd :
                 {gemm + "--trace " + in_fs(trace), run + "--trace " + in_fs(trace)})
                expect_refused(tool(cmd), "no space for the trace " + (mnt / trace).string(), cmd);
        const int st = std::system(tpuc.c_str());
        expect_refused({WIFEXITED(st) ? WEXITSTATUS(st) : -1, "", slurp(dir / "stderr.txt")},
                       "No space left on device", tpuc);
    }
}

// The disk fills while the trace is written: the trace stops, the run finishes, and the trace
// fails at the end with nothing left (the FST writer never reads a file the disk cut short).
TEST_F(Disk, TraceStopsWhenTheDiskFills)
{
    MOUNT_OR_SKIP("72m"); // 66 MiB free after the fill: 2 MiB of trace over the 64 MiB reserve
    std::ofstream(mnt / "fill", std::ios::binary) << std::string(6 << 20, '\0');
    const std::string cmd = "gemm --m 256 --k 256 --n 256 --quiet --out " + quoted("c.npy") +
                            " --array " + std::to_string(largest_array()) + " --trace " +
                            in_fs("t.fst");
    const Result r = tool(cmd);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("no space for the trace " + (mnt / "t.fst").string()), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find(", at cycle "), std::string::npos) << r.err;
    EXPECT_EQ(fs_leftovers(), std::vector<std::string>{});
    EXPECT_EQ(leftovers({"fs"}), std::vector<std::string>{}); // --out is all or nothing too
}

// The process id of `tpusim args...`, its output in dir.
pid_t spawn_tool(const fs::path &dir, const std::vector<std::string> &args)
{
    std::vector<std::string> argv = {TPU_BINARY_DIR "/bin/tpusim"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char *> ptrs;
    for (std::string &a : argv)
        ptrs.push_back(&a[0]);
    ptrs.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, (dir / "stdout.txt").c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, (dir / "stderr.txt").c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = -1;
    if (posix_spawn(&pid, argv[0].c_str(), &fa, nullptr, ptrs.data(), environ) != 0)
        pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    return pid;
}

// A signal in the middle of a run: the process dies of it (as the shell expects) and leaves no
// file. gemm is signalled once its trace's temporary exists; run, which stages its outputs at
// the end, a second into its 2,000 digits.
TEST_F(Disk, SignalsLeaveNoFile)
{
    const std::string pkg = package();
    const std::string n = std::to_string(largest_array());
    const std::vector<std::vector<std::string>> runs = {
        {"gemm", "--m", "512", "--k", "512", "--n", "512", "--quiet", "--array", n, "--out",
         path("c.npy"), "--json", path("r.json"), "--trace", path("t.fst")},
        {"run", pkg.substr(1, pkg.size() - 2), "--input", kModel + "test_x_u8.npy",
         "--input-divide", "255", "--quiet", "--output", path("y.npy"), "--json", path("r.json")},
    };
    for (int sig : {SIGINT, SIGTERM})
        for (const auto &args : runs) {
            SCOPED_TRACE(args[0] + " " + strsignal(sig));
            const pid_t pid = spawn_tool(dir, args);
            ASSERT_GT(pid, 0);
            bool started = args[0] == "run";
            for (int i = 0; i < 6000 && !started; i++) { // at most 60 s
                for (const auto &e : fs::directory_iterator(dir))
                    started |= e.path().filename().string().find("t.fst.tmp.") == 0;
                if (!started)
                    std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
            EXPECT_TRUE(started);
            std::this_thread::sleep_for(std::chrono::milliseconds(args[0] == "run" ? 1000 : 200));
            kill(pid, sig);
            int st = 0;
            ASSERT_EQ(waitpid(pid, &st, 0), pid);
            EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == sig) << st << slurp(dir / "stderr.txt");
            EXPECT_EQ(leftovers({"mnist.tpub"}), std::vector<std::string>{});
        }
}

} // namespace

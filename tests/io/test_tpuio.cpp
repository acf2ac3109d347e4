// test_tpuio.cpp - what every loader and writer shares (io/tpuio.h): whole-file reading with its
// limits (regular files by size, streams by what arrives, FIFOs without a writer, directories),
// little-endian bytes and the bounds-checked cursor, and staged output files (all or nothing).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/tpuio.h"

namespace fs = std::filesystem;

namespace
{

class TpuIo : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/test_tpuio.XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir = tmpl;
    }
    void TearDown() override { fs::remove_all(dir); }

    std::string write(const std::string &name, const std::string &bytes) const
    {
        const std::string path = dir + "/" + name;
        std::ofstream(path, std::ios::binary) << bytes;
        return path;
    }
    std::vector<std::string> listing() const
    {
        std::vector<std::string> v;
        for (const auto &e : fs::directory_iterator(dir))
            v.push_back(e.path().filename().string());
        std::sort(v.begin(), v.end());
        return v;
    }

    std::string dir;
};

struct Read {
    int rc;
    std::string data, err;
};

Read read_file(const std::string &path, uint64_t max)
{
    void *buf = nullptr;
    size_t len = 0;
    char err[256] = "";
    Read r;
    r.rc = tpuio_read_file(path.c_str(), max, &buf, &len, err, sizeof err);
    if (r.rc == 0) {
        EXPECT_EQ(static_cast<char *>(buf)[len], '\0') << "a NUL byte past the data";
        r.data.assign(static_cast<char *>(buf), len);
    } else {
        EXPECT_EQ(buf, nullptr);
    }
    free(buf);
    r.err = err;
    return r;
}

TEST_F(TpuIo, ReadsRegularFilesWithinTheirLimit)
{
    const std::string text(100000, 'x');
    const std::string path = write("a", text);
    Read r = read_file(path, 100000);
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.data, text);
    EXPECT_EQ(read_file(write("empty", ""), 0).rc, 0);

    r = read_file(path, 99999);
    EXPECT_EQ(r.rc, -1);
    EXPECT_EQ(r.err, "100000 bytes, more than the 99999 this input may have");
}

TEST_F(TpuIo, RefusesWhatIsNotAFile)
{
    Read r = read_file(dir + "/absent", 100);
    EXPECT_EQ(r.rc, -1);
    EXPECT_EQ(r.err, "cannot open: No such file or directory");
    r = read_file(dir, 100);
    EXPECT_EQ(r.rc, -1);
    EXPECT_EQ(r.err, "cannot read: is a directory");
}

TEST_F(TpuIo, SparseFileRefusedBeforeReading)
{
    const std::string path = dir + "/sparse";
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, (off_t)1 << 40), 0); // 1 TB, no blocks
    close(fd);
    const auto t0 = std::chrono::steady_clock::now();
    const Read r = read_file(path, (uint64_t)4 << 30);
    EXPECT_EQ(r.rc, -1);
    EXPECT_EQ(r.err, "1099511627776 bytes, more than the 4294967296 this input may have");
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
}

TEST_F(TpuIo, StreamsAreBoundedByWhatArrives)
{
    // /dev/zero never ends: refused once more than the stream limit has come.
    Read r = read_file("/dev/zero", (uint64_t)1 << 40);
    EXPECT_EQ(r.rc, -1);
    EXPECT_EQ(r.err, "not a regular file, and more than the " + std::to_string(TPUIO_STREAM_MAX) +
                         " bytes such an input may have");
    r = read_file("/dev/zero", 1000);
    EXPECT_EQ(r.rc, -1);
    EXPECT_EQ(r.err, "not a regular file, and more than the 1000 bytes such an input may have");
    r = read_file("/dev/null", 1000);
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.data, "");
}

TEST_F(TpuIo, PipeIsReadToItsEnd)
{
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const std::string text(200000, 'p'); // more than a pipe buffer: the writer must be drained
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        size_t done = 0;
        while (done < text.size()) {
            const ssize_t w = ::write(fds[1], text.data() + done, text.size() - done);
            if (w <= 0)
                _exit(1);
            done += (size_t)w;
        }
        _exit(0);
    }
    close(fds[1]);
    const Read r = read_file("/dev/fd/" + std::to_string(fds[0]), 1 << 20);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.data, text);
}

TEST_F(TpuIo, FifoWithoutWriterDoesNotBlock)
{
    const std::string path = dir + "/fifo";
    ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
    const auto t0 = std::chrono::steady_clock::now();
    const Read r = read_file(path, 1000);
    EXPECT_EQ(r.rc, 0) << r.err; // no writer: an empty input, which the format then refuses
    EXPECT_EQ(r.data, "");
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
}

TEST(TpuIoText, ErrorsArePrintableOneLiners)
{
    char out[64];
    EXPECT_STREQ(tpuio_printable(out, sizeof out, "plain text: 'x' \\ ok"),
                 "plain text: 'x' \\ ok");
    EXPECT_STREQ(tpuio_printable(out, sizeof out, "two\nlines\r\tand \x01\x7f"),
                 "two\\nlines\\r\\tand \\x01\\x7f");
    // Well-formed UTF-8 stays; stray, overlong, surrogate and truncated sequences are escaped.
    EXPECT_STREQ(
        tpuio_printable(out, sizeof out, "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
        "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    EXPECT_STREQ(tpuio_printable(out, sizeof out, "\xff\xc0\xaf\xed\xa0\x80\xe2\x82"),
                 "\\xff\\xc0\\xaf\\xed\\xa0\\x80\\xe2\\x82");
    // Truncation never splits an escape.
    EXPECT_STREQ(tpuio_printable(out, 7, "ab\ncd"), "ab\\ncd");
    EXPECT_STREQ(tpuio_printable(out, 6, "ab\ncd"), "ab\\nc");
    EXPECT_STREQ(tpuio_printable(out, 4, "ab\ncd"), "ab");

    char err[64];
    tpuio_err(err, sizeof err, "name '%s'", "a\nb\x1b[31m");
    EXPECT_STREQ(err, "name 'a\\nb\\x1b[31m'");
}

TEST(TpuIoBytes, LittleEndianAndCursor)
{
    uint8_t b[8];
    tpuio_put_le(b, 0x0102030405060708ull, 8);
    EXPECT_EQ(b[0], 0x08);
    EXPECT_EQ(b[7], 0x01);
    EXPECT_EQ(tpuio_get_le(b, 8), 0x0102030405060708ull);
    EXPECT_EQ(tpuio_get_le(b, 2), 0x0708u);
    tpuio_put_le(b, 0xfffe, 2);
    EXPECT_EQ(tpuio_get_le(b, 3), 0x06fffeu);

    tpuio_cursor c = {b, sizeof b, 0};
    EXPECT_EQ(tpuio_take(&c, 3), b);
    EXPECT_EQ(tpuio_left(&c), 5u);
    EXPECT_EQ(tpuio_take(&c, 6), nullptr); // too few: the cursor stays
    EXPECT_EQ(tpuio_left(&c), 5u);
    EXPECT_EQ(tpuio_take(&c, 5), b + 3);
    EXPECT_EQ(tpuio_take(&c, 0), b + 8);
    EXPECT_EQ(tpuio_take(&c, 1), nullptr);
}

TEST_F(TpuIo, StagedFilesAppearTogether)
{
    tpuio_staged f[3] = {};
    char err[256] = "";
    const std::string one = dir + "/one", three = dir + "/three"; // borrowed until the commit
    ASSERT_EQ(tpuio_stage(&f[0], one.c_str(), "1", 1, err, sizeof err), 0) << err;
    ASSERT_EQ(tpuio_stage(&f[2], three.c_str(), "333", 3, err, sizeof err), 0) << err;
    EXPECT_EQ(listing().size(), 2u); // temporaries only
    for (const std::string &name : listing())
        EXPECT_NE(name.find(".tmp."), std::string::npos) << name;
    ASSERT_EQ(tpuio_commit(f, 3, 1, nullptr, err, sizeof err), 0) << err;
    EXPECT_EQ(listing(), (std::vector<std::string>{"one", "three"}));
    EXPECT_EQ(f[0].tmp, nullptr);

    // The mode a plain create gives, not mkstemp's 0600.
    const mode_t mask = umask(0);
    umask(mask);
    struct stat st;
    ASSERT_EQ(stat((dir + "/one").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0666u & ~mask);
}

TEST_F(TpuIo, FailedCommitLeavesNothing)
{
    // Not ok: every temporary goes, nothing is renamed.
    tpuio_staged f[2] = {};
    char err[256] = "";
    const std::string a = dir + "/a", b = dir + "/b"; // borrowed until the commit
    ASSERT_EQ(tpuio_stage(&f[0], a.c_str(), "a", 1, err, sizeof err), 0);
    ASSERT_EQ(tpuio_stage(&f[1], b.c_str(), "b", 1, err, sizeof err), 0);
    EXPECT_EQ(tpuio_commit(f, 2, 0, nullptr, err, sizeof err), -1);
    EXPECT_TRUE(listing().empty());

    // The second rename fails (its path is a directory): the first file is taken back too.
    fs::create_directory(b);
    ASSERT_EQ(tpuio_stage(&f[0], a.c_str(), "a", 1, err, sizeof err), 0);
    ASSERT_EQ(tpuio_stage(&f[1], b.c_str(), "b", 1, err, sizeof err), 0);
    int failed = -1;
    EXPECT_EQ(tpuio_commit(f, 2, 1, &failed, err, sizeof err), -1);
    EXPECT_EQ(failed, 1);
    EXPECT_STREQ(err, "cannot rename into place: Is a directory");
    EXPECT_EQ(listing(), std::vector<std::string>{"b"});
    EXPECT_TRUE(fs::is_empty(dir + "/b"));

    EXPECT_EQ(tpuio_write_file((dir + "/missing/x").c_str(), "x", 1, err, sizeof err), -1);
    EXPECT_STREQ(err, "cannot create: No such file or directory");
}

// A signal while outputs are staged removes them, and the process still dies of that signal.
TEST_F(TpuIo, SignalRemovesStagedFiles)
{
    for (int sig : {SIGINT, SIGTERM}) {
        const std::string path = dir + "/out" + std::to_string(sig);
        const pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            tpuio_remove_on_signals();
            tpuio_staged f = {};
            char err[256];
            if (tpuio_stage(&f, path.c_str(), "data", 4, err, sizeof err))
                _exit(1);
            raise(sig);
            _exit(2); // not reached
        }
        int status = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << status;
        EXPECT_TRUE(listing().empty()) << listing()[0];
    }
    // Tracked paths are forgotten when committed: a later signal leaves the outputs alone.
    const std::string path = dir + "/kept";
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        tpuio_remove_on_signals();
        char err[256];
        if (tpuio_write_file(path.c_str(), "data", 4, err, sizeof err))
            _exit(1);
        raise(SIGINT);
        _exit(2);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status));
    EXPECT_EQ(listing(), std::vector<std::string>{"kept"});
}

TEST(TpuIoTrack, SlotsAreReused)
{
    for (int round = 0; round < 3; round++) {
        std::vector<std::string> names;
        for (int i = 0; i < TPUIO_TRACKED; i++) {
            names.push_back("/nonexistent/t" + std::to_string(i));
            EXPECT_GE(tpuio_track(names.back().c_str()), 0);
        }
        EXPECT_EQ(tpuio_track("/nonexistent/one-too-many"), -1);
        for (const std::string &n : names)
            tpuio_untrack(n.c_str());
    }
}

} // namespace

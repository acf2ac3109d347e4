// trace_files.cpp - the files around a trace (trace_files.h).
#include "sim/trace_files.h"

#include "io/tpuio.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <spawn.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace tpu::trace_files
{

bool on_path(const char *prog)
{
    const char *path = std::getenv("PATH");
    if (!path)
        return false;
    const std::string dirs(path);
    for (size_t start = 0;;) {
        const size_t end = dirs.find(':', start);
        std::string dir = dirs.substr(start, end == std::string::npos ? end : end - start);
        if (dir.empty())
            dir = ".";
        if (access((dir + "/" + prog).c_str(), X_OK) == 0)
            return true;
        if (end == std::string::npos)
            return false;
        start = end + 1;
    }
}

// fst2vcd -f fst -o vcd, quietly; true on success.
bool fst_to_vcd(const std::string &fst, const std::string &vcd)
{
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return false;
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    std::string a0 = "fst2vcd", a1 = "-f", a3 = "-o", a2 = fst, a4 = vcd;
    char *argv[] = {&a0[0], &a1[0], &a2[0], &a3[0], &a4[0], nullptr};
    pid_t pid;
    const int rc = posix_spawnp(&pid, "fst2vcd", &fa, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return false;
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return false;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Free bytes for an unprivileged writer in the file system holding dir; -1 if unknown.
static double free_bytes(const std::string &dir)
{
    struct statvfs v;
    if (statvfs(dir.c_str(), &v) != 0)
        return -1;
    return static_cast<double>(v.f_bavail) * static_cast<double>(v.f_frsize);
}

static std::string dir_of(const std::string &path)
{
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// A new empty file "<path>.tmp.XXXXXX" beside path, tracked so a signal removes it; its name, or
// "" with the reason in err.
std::string temp_beside(const std::string &path, std::string *err)
{
    std::string tmp = path + ".tmp.XXXXXX";
    const int fd = mkstemp(&tmp[0]);
    if (fd < 0) {
        *err = "cannot write " + path + ": " + std::strerror(errno);
        return "";
    }
    close(fd);
    tpuio_track(tmp.c_str());
    return tmp;
}

// The FST writer maps files it has written (the hierarchy beside the trace, its temporaries in
// P_tmpdir) and faults (SIGBUS) reading a mapping past the end of a file a full disk cut short:
// a trace needs kTraceReserve bytes free in both places. True if it has them (or they cannot be
// told), else false with the reason in err.
constexpr double kTraceReserve = 64.0 * 1024 * 1024;
bool trace_space(const std::string &path, std::string *err)
{
    for (const std::string &dir : {dir_of(path), std::string(P_tmpdir)}) {
        const double avail = free_bytes(dir);
        if (avail >= 0 && avail < kTraceReserve) {
            *err = "no space for the trace " + path + ": " + dir + " has " +
                   std::to_string(static_cast<uint64_t>(avail / 1024)) +
                   " KiB free, a trace needs 64 MiB";
            return false;
        }
    }
    return true;
}

void remove_tracked(const std::string &path)
{
    std::remove(path.c_str());
    tpuio_untrack(path.c_str());
}
} // namespace tpu::trace_files

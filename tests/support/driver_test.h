// driver_test.h - shared by the host-driver tests (test_driver.cpp, test_driver_device.cpp): the
// array sizes built into the library, substring search in error messages, and an open device.
#ifndef TPU_TESTS_SUPPORT_DRIVER_TEST_H
#define TPU_TESTS_SUPPORT_DRIVER_TEST_H

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "driver/tpu.h"
#include "sim/tpusim.h"

namespace driver_test
{

inline std::vector<uint32_t> built_sizes()
{
    uint32_t sizes[16];
    const int n = tpusim_arrays(sizes, 16);
    return std::vector<uint32_t>(sizes, sizes + n);
}

inline bool contains(const char *haystack, const std::string &needle)
{
    return std::strstr(haystack, needle.c_str()) != nullptr;
}

// An open device for one test; options from the test.
struct Dev {
    tpu_device *d = nullptr;
    explicit Dev(uint32_t n, uint64_t mem = 4u << 20, int verify = 1)
    {
        tpusim_config o{};
        o.array_n = n;
        o.mem_size = mem;
        char err[256] = "";
        EXPECT_EQ(tpu_open(&o, verify, &d, err, sizeof err), TPU_OK) << err;
    }
    ~Dev() { tpu_close(d); }
    Dev(const Dev &) = delete;
    Dev &operator=(const Dev &) = delete;
    operator tpu_device *() const { return d; }
};

// A memory small enough to fill.
inline constexpr uint64_t kSmallMem = 64u << 10;

} // namespace driver_test

#endif

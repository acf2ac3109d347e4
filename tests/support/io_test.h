// io_test.h - images of the io/ formats built in tests: .npy files through npy_encode or by hand,
// safetensors files from a header and data.
#ifndef TPU_TESTS_SUPPORT_IO_TEST_H
#define TPU_TESTS_SUPPORT_IO_TEST_H

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "io/npy.h"

namespace io_test
{

// A .npy image of the given array (npy_encode), as a string.
inline std::string encode(npy_dtype t, std::vector<uint64_t> shape, const void *data,
                          int version = 1)
{
    npy_array a{};
    a.dtype = t;
    a.ndim = (int)shape.size();
    a.count = 1;
    for (size_t i = 0; i < shape.size(); i++) {
        a.shape[i] = shape[i];
        a.count *= shape[i];
    }
    a.data = const_cast<void *>(data);
    size_t len = 0;
    void *img = npy_encode(&a, version, &len);
    EXPECT_NE(img, nullptr);
    std::string s(static_cast<char *>(img), len);
    free(img);
    return s;
}

// A hand-made .npy image: header text as given (padded to 64 bytes), then the data bytes.
inline std::string raw_npy(const std::string &dict, const std::string &data, int version = 1)
{
    const size_t pre = version == 1 ? 10 : 12;
    std::string h = dict;
    while ((pre + h.size() + 1) % 64)
        h += ' ';
    h += '\n';
    std::string s("\x93NUMPY", 6);
    s += (char)version;
    s += '\0';
    for (size_t i = 0; i < pre - 8; i++)
        s += (char)(h.size() >> (8 * i));
    return s + h + data;
}

inline std::string u64le(uint64_t v)
{
    std::string s(8, '\0');
    for (int i = 0; i < 8; i++)
        s[i] = (char)(v >> (8 * i));
    return s;
}

inline std::string st_image(const std::string &header, const std::string &data)
{
    return u64le(header.size()) + header + data;
}

inline std::string bytes_of(const void *p, size_t n) { return std::string((const char *)p, n); }

} // namespace io_test

#endif

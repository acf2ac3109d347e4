// test_npy.cpp - the .npy reader and writer (io/npy.h): every dtype, version and rank round-trips,
// the bytes are what numpy (and ml_dtypes, for bfloat16) writes, other spellings of the header are
// read, '<V2' and '|V2' are read as 2-byte void until the caller says bfloat16, and malformed
// images are refused with a reason.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "io/npy.h"
#include "tests/support/io_test.h"

namespace
{

using io_test::encode;
using io_test::raw_npy;

TEST(Npy, RoundTripsEveryDtypeVersionAndRank)
{
    std::mt19937 rng(42);
    const npy_dtype types[] = {NPY_INT8,  NPY_UINT8,   NPY_INT32,    NPY_FLOAT32,
                               NPY_INT64, NPY_FLOAT16, NPY_BFLOAT16, NPY_V2};
    const std::vector<std::vector<uint64_t>> shapes = {{7}, {3, 5}, {1, 1}, {1}, {64, 3}, {0}};
    for (npy_dtype t : types)
        for (int version : {1, 2})
            for (const auto &shape : shapes) {
                uint64_t count = 1;
                for (uint64_t d : shape)
                    count *= d;
                std::vector<uint8_t> data(count * npy_dtype_size(t) + 1);
                for (uint8_t &byte : data)
                    byte = (uint8_t)rng();
                const std::string img = encode(t, shape, data.data(), version);
                SCOPED_TRACE(std::string(npy_dtype_name(t)) + " v" + std::to_string(version) +
                             " rank " + std::to_string(shape.size()));
                EXPECT_EQ(img[6], version);
                const size_t pre = version == 1 ? 10 : 12;
                EXPECT_EQ((img.size() - count * npy_dtype_size(t)) % 64, 0u); // aligned data
                EXPECT_EQ(img[img.size() - count * npy_dtype_size(t) - 1], '\n');
                EXPECT_GT(img.size(), pre);

                npy_array a;
                char err[256] = "";
                ASSERT_EQ(npy_parse(img.data(), img.size(), &a, err, sizeof err), 0) << err;
                if (t == NPY_BFLOAT16) { // read as 2-byte void: the caller says bfloat16
                    EXPECT_EQ(a.dtype, NPY_V2);
                    ASSERT_EQ(npy_as_bfloat16(&a, err, sizeof err), 0) << err;
                }
                EXPECT_EQ(a.dtype, t);
                ASSERT_EQ(a.ndim, (int)shape.size());
                for (size_t i = 0; i < shape.size(); i++)
                    EXPECT_EQ(a.shape[i], shape[i]);
                EXPECT_EQ(a.count, count);
                EXPECT_EQ(std::memcmp(a.data, data.data(), count * npy_dtype_size(t)), 0);
                npy_free(&a);
            }
}

TEST(Npy, WritesWhatNumpyWrites)
{
    // np.save of np.array([1, -2], dtype=np.int32), byte for byte.
    const int32_t v[2] = {1, -2};
    std::string want("\x93NUMPY\x01\x00\x76\x00", 10);
    std::string dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }";
    want += dict + std::string(118 - dict.size() - 1, ' ') + "\n";
    want += std::string("\x01\x00\x00\x00\xfe\xff\xff\xff", 8);
    EXPECT_EQ(encode(NPY_INT32, {2}, v), want);

    const int8_t m[6] = {1, 2, 3, 4, 5, -6};
    const std::string img = encode(NPY_INT8, {2, 3}, m);
    EXPECT_NE(img.find("{'descr': '|i1', 'fortran_order': False, 'shape': (2, 3), }"),
              std::string::npos);

    // np.save of np.array([1, -2.5], dtype=ml_dtypes.bfloat16) and of
    // np.array([1, -2, 65504], dtype=np.float16).
    const uint16_t bf[2] = {0x3f80, 0xc020}, f16[3] = {0x3c00, 0xc000, 0x7bff};
    dict = "{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }";
    want = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict +
           std::string(118 - dict.size() - 1, ' ') + "\n" + std::string("\x80\x3f\x20\xc0", 4);
    EXPECT_EQ(encode(NPY_BFLOAT16, {2}, bf), want);
    dict = "{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }";
    want = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict +
           std::string(118 - dict.size() - 1, ' ') + "\n" +
           std::string("\x00\x3c\x00\xc0\xff\x7b", 6);
    EXPECT_EQ(encode(NPY_FLOAT16, {3}, f16), want);
    // A 2-byte void array of unknown meaning is written as numpy writes a plain void array.
    EXPECT_NE(encode(NPY_V2, {2}, bf).find("'descr': '|V2'"), std::string::npos);
}

// '<V2' (ml_dtypes' bfloat16, or any 2-byte void type) and '|V2' (numpy's plain void, as it saves
// a bfloat16 array it loaded without ml_dtypes) read as NPY_V2; npy_as_bfloat16 takes them as
// bfloat16 and refuses every other dtype, naming it and its descr.
TEST(Npy, TwoByteVoidIsBfloat16WhenTheCallerSaysSo)
{
    for (const char *descr : {"<V2", "|V2"}) {
        SCOPED_TRACE(descr);
        const std::string img = raw_npy(std::string("{'descr': '") + descr +
                                            "', 'fortran_order': False, 'shape': (2,), }",
                                        std::string("\x80\x3f\x20\xc0", 4));
        npy_array a;
        char err[256] = "";
        ASSERT_EQ(npy_parse(img.data(), img.size(), &a, err, sizeof err), 0) << err;
        EXPECT_EQ(a.dtype, NPY_V2);
        EXPECT_STREQ(npy_dtype_name(a.dtype), "void16");
        EXPECT_EQ(npy_dtype_size(a.dtype), 2u);
        ASSERT_EQ(npy_as_bfloat16(&a, err, sizeof err), 0) << err;
        EXPECT_EQ(a.dtype, NPY_BFLOAT16);
        EXPECT_STREQ(npy_dtype_name(a.dtype), "bfloat16");
        EXPECT_EQ(static_cast<uint16_t *>(a.data)[0], 0x3f80);     // 1.0
        EXPECT_EQ(static_cast<uint16_t *>(a.data)[1], 0xc020);     // -2.5
        ASSERT_EQ(npy_as_bfloat16(&a, err, sizeof err), 0) << err; // bfloat16 stays
        EXPECT_EQ(a.dtype, NPY_BFLOAT16);
        npy_free(&a);
    }
    const std::pair<npy_dtype, std::string> others[] = {
        {NPY_FLOAT32, "dtype float32 ('<f4'), expected bfloat16 ('<V2', as ml_dtypes saves it)"},
        {NPY_FLOAT16, "dtype float16 ('<f2'), expected bfloat16 ('<V2', as ml_dtypes saves it)"},
        {NPY_INT8, "dtype int8 ('|i1'), expected bfloat16"},
        {NPY_UINT8, "dtype uint8 ('|u1'), expected bfloat16"},
        {NPY_INT32, "dtype int32 ('<i4'), expected bfloat16"},
        {NPY_INT64, "dtype int64 ('<i8'), expected bfloat16"},
    };
    for (const auto &o : others) {
        npy_array a{};
        a.dtype = o.first;
        char err[256] = "";
        EXPECT_EQ(npy_as_bfloat16(&a, err, sizeof err), -1);
        EXPECT_EQ(a.dtype, o.first);
        EXPECT_NE(std::string(err).find(o.second), std::string::npos) << err;
    }
}

// Every prefix of a float16 and a bfloat16 image is refused (truncated header or data).
TEST(Npy, TruncatedTwoByteImagesAreRefused)
{
    const uint16_t v[5] = {1, 2, 3, 4, 5};
    for (npy_dtype t : {NPY_FLOAT16, NPY_BFLOAT16}) {
        const std::string img = encode(t, {5}, v);
        for (size_t n = 0; n < img.size(); n++) {
            npy_array a;
            char err[256] = "";
            EXPECT_EQ(npy_parse(img.data(), n, &a, err, sizeof err), -1) << n;
            EXPECT_NE(err[0], 0);
            EXPECT_EQ(a.data, nullptr);
        }
    }
}

TEST(Npy, ReadsOtherSpellingsOfTheHeader)
{
    // Key order, quotes, spacing and the trailing comma vary between writers.
    const std::string data("\x01\x02\x03\x04\x05\x06", 6);
    const std::string dicts[] = {
        "{'shape': (2, 3), 'fortran_order': False, 'descr': '|i1'}",
        "{\"descr\":\"<i1\",\"fortran_order\":False,\"shape\":(2,3)}",
        "{ 'descr' : '|i1' , 'fortran_order' : False , 'shape' : ( 2 , 3 , ) , }",
    };
    for (const auto &d : dicts) {
        for (int version : {1, 2}) {
            const std::string img = raw_npy(d, data, version);
            npy_array a;
            char err[256] = "";
            ASSERT_EQ(npy_parse(img.data(), img.size(), &a, err, sizeof err), 0) << d << err;
            EXPECT_EQ(a.dtype, NPY_INT8);
            EXPECT_EQ(a.ndim, 2);
            EXPECT_EQ(a.shape[1], 3u);
            npy_free(&a);
        }
    }
    // A 1-D Fortran-order array is the same bytes as a C-order one; a scalar has rank 0.
    const std::string one = raw_npy("{'descr': '<i4', 'fortran_order': True, 'shape': (1,), }",
                                    std::string("\x07\x00\x00\x00", 4));
    npy_array a;
    char err[256] = "";
    ASSERT_EQ(npy_parse(one.data(), one.size(), &a, err, sizeof err), 0) << err;
    EXPECT_EQ(static_cast<int32_t *>(a.data)[0], 7);
    npy_free(&a);
    const std::string scalar = raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
                                       std::string("\x00\x00\x80\x3f", 4));
    ASSERT_EQ(npy_parse(scalar.data(), scalar.size(), &a, err, sizeof err), 0) << err;
    EXPECT_EQ(a.ndim, 0);
    EXPECT_EQ(static_cast<float *>(a.data)[0], 1.0f);
    npy_free(&a);
}

TEST(Npy, RefusesMalformedImagesWithAReason)
{
    const std::string good = raw_npy("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }",
                                     std::string(8, '\x01'));
    const std::pair<std::string, std::string> cases[] = {
        {"", "bad magic"},
        {"\x93NUMPX\x01\x00", "bad magic"},
        {good.substr(0, 7), "truncated header"},
        {good.substr(0, 9), "truncated header"},
        {good.substr(0, 40), "truncated header"},
        {good.substr(0, good.size() - 1), "truncated data"},
        {good + "x", "unexpected bytes"},
        {raw_npy("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", "", 3),
         "version 3.0"},
        {raw_npy("{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }", "abcd"),
         "unsupported dtype '<i2'"},
        {raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", "abcdefgh"),
         "unsupported dtype '<f8'"},
        {raw_npy("{'descr': '|b1', 'fortran_order': False, 'shape': (1,), }", "a"),
         "unsupported dtype"},
        {raw_npy("{'descr': [('x', '<i4')], 'fortran_order': False, 'shape': (1,), }", "abcd"),
         "structured"},
        {raw_npy("{'descr': '>i4', 'fortran_order': False, 'shape': (1,), }", "abcd"),
         "big-endian"},
        {raw_npy("{'descr': '>f2', 'fortran_order': False, 'shape': (1,), }", "ab"),
         "big-endian data ('>f2') is not supported"},
        {raw_npy("{'descr': '>V2', 'fortran_order': False, 'shape': (1,), }", "ab"),
         "big-endian data ('>V2') is not supported"},
        {raw_npy("{'descr': '<V1', 'fortran_order': False, 'shape': (1,), }", "a"),
         "unsupported dtype '<V1' (supported: int8, uint8, int32, int64, float16, float32, and "
         "bfloat16 as '<V2')"},
        {raw_npy("{'descr': '|V4', 'fortran_order': False, 'shape': (1,), }", "abcd"),
         "unsupported dtype '|V4'"},
        {raw_npy("{'descr': '<u2', 'fortran_order': False, 'shape': (1,), }", "ab"),
         "unsupported dtype '<u2'"},
        {raw_npy("{'descr': [('bf16', '<V2')], 'fortran_order': False, 'shape': (1,), }", "ab"),
         "structured"},
        {raw_npy("{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }", "abc"),
         "truncated data: 4 bytes expected, 3 present"},
        {raw_npy("{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }", "abc"),
         "1 unexpected bytes after the data"},
        {raw_npy("{'descr': '|i1', 'fortran_order': True, 'shape': (2, 2), }", "abcd"), "Fortran"},
        {raw_npy("{'descr': '|i1', 'shape': (2,), }", "ab"), "no 'fortran_order'"},
        {raw_npy("{'descr': '|i1', 'fortran_order': False, 'shape': (2,), 'x': 1}", "ab"),
         "unknown key"},
        {raw_npy("{'descr': '|i1', 'fortran_order': False, 'shape': (2,), 'shape': (2,)}", "ab"),
         "twice"},
        {raw_npy("{'descr': '|i1', 'fortran_order': 0, 'shape': (2,), }", "ab"), "fortran_order"},
        {raw_npy("{'descr': '|i1', 'fortran_order': False, 'shape': [2], }", "ab"), "'('"},
        {raw_npy("{'descr': '|i1', 'fortran_order': False, 'shape': (99999999999999999999,), }",
                 "ab"),
         "too large"},
        {raw_npy("{'descr': '|i1', 'fortran_order': False, 'shape': (4294967296, 4294967296, "
                 "4294967296), }",
                 "ab"),
         "too large"},
    };
    for (const auto &c : cases) {
        npy_array a;
        char err[256] = "";
        EXPECT_EQ(npy_parse(c.first.data(), c.first.size(), &a, err, sizeof err), -1) << c.second;
        EXPECT_NE(std::string(err).find(c.second), std::string::npos)
            << "want '" << c.second << "', got '" << err << "'";
        EXPECT_EQ(a.data, nullptr);
    }
    npy_array a{};
    EXPECT_EQ(npy_encode(&a, 3, nullptr), nullptr);
}

// ----------------------------------------------------- tool: .npy errors --

// Each malformed operand: exit 2, one line naming the file and the reason, and no output file.

} // namespace

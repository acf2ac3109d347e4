// test_safetensors.cpp - the safetensors reader (io/safetensors.h): a valid file, and every kind
// of corruption refused with its reason.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "tests/support/io_test.h"

namespace
{

using io_test::bytes_of;
using io_test::st_image;
using io_test::u64le;

const std::string kSrc = std::string(TPU_SOURCE_DIR) + "/";

std::string st_error(const std::string &image)
{
    st_file f;
    char err[256] = "";
    EXPECT_EQ(st_parse(image.data(), image.size(), &f, err, sizeof err), -1) << "accepted";
    return err;
}

TEST(Safetensors, ValidFile)
{
    float f[2] = {1.5f, -2};
    int32_t i32[3] = {-7, 0, 2147483647};
    int8_t i8[2] = {-128, 127};
    uint8_t u8[1] = {255};
    std::string data = bytes_of(f, 8) + bytes_of(i32, 12) + bytes_of(i8, 2) + bytes_of(u8, 1);
    std::string header = R"({"__metadata__":{"k\"ey":"v\u00e9\ud83d\ude00\n","w":"0"},)"
                         R"( "f":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                         R"("i": {"shape":[1,3], "data_offsets":[8,20], "dtype":"I32"},)"
                         R"("b":{"dtype":"I8","shape":[2],"data_offsets":[20,22]},)"
                         R"("u":{"dtype":"U8","shape":[],"data_offsets":[22,23]},)"
                         R"("e":{"dtype":"F32","shape":[0,4],"data_offsets":[23,23]}}   )";
    std::string image = st_image(header, data);
    st_file st;
    char err[256] = "";
    ASSERT_EQ(st_parse(image.data(), image.size(), &st, err, sizeof err), 0) << err;
    EXPECT_EQ(st.n_tensors, 5);
    const st_tensor *t = st_find(&st, "i");
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->dtype, ST_I32);
    EXPECT_EQ(t->rank, 2);
    EXPECT_EQ(t->shape[1], 3);
    EXPECT_EQ(t->elements, 3);
    EXPECT_EQ(t->size, 12u);
    EXPECT_EQ(memcmp(t->data, i32, 12), 0);
    EXPECT_EQ(memcmp(st_find(&st, "f")->data, f, 8), 0);
    EXPECT_EQ(st_find(&st, "b")->dtype, ST_I8);
    EXPECT_EQ(st_find(&st, "u")->rank, 0);
    EXPECT_EQ(st_find(&st, "u")->elements, 1);
    EXPECT_EQ(st_find(&st, "e")->elements, 0);
    EXPECT_EQ(st_find(&st, "nope"), nullptr);
    EXPECT_STREQ(st_meta(&st, "k\"ey"), "v\xc3\xa9\xf0\x9f\x98\x80\n");
    EXPECT_STREQ(st_meta(&st, "w"), "0");
    EXPECT_EQ(st_meta(&st, "x"), nullptr);
    st_free(&st);

    // The real export: 4 float32 tensors and the parameter numbers.
    ASSERT_EQ(st_load((kSrc + "models/mnist/mlp.safetensors").c_str(), &st, err, sizeof err), 0)
        << err;
    EXPECT_EQ(st.n_tensors, 4);
    EXPECT_EQ(st_find(&st, "w1.1")->shape[0], 784);
    EXPECT_STREQ(st_meta(&st, "b2.1"), "3");
    EXPECT_STREQ(st_meta(&st, "input"), "x.1=4");
    st_free(&st);
    EXPECT_EQ(st_load("/nonexistent/x.safetensors", &st, err, sizeof err), -1);
    EXPECT_STREQ(err, "cannot open: No such file or directory");
}

TEST(Safetensors, Corruptions)
{
    float f[4] = {1, 2, 3, 4};
    std::string data = bytes_of(f, 16);
    const std::string good = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})";
    std::string image = st_image(good, data);
    st_file st;
    char err[256];
    ASSERT_EQ(st_parse(image.data(), image.size(), &st, err, sizeof err), 0) << err;
    st_free(&st);

    auto has = [](const std::string &msg, const std::string &what) {
        EXPECT_NE(msg.find(what), std::string::npos) << "message: " << msg << "\nwanted: " << what;
    };
    // Truncated: inside the length field, inside the header, inside the data.
    has(st_error(image.substr(0, 5)), "file is 5 bytes, shorter than the 8-byte header length");
    has(st_error(image.substr(0, 30)), "bad header length");
    has(st_error(image.substr(0, image.size() - 1)),
        "tensor 'b': data_offsets [8, 16] out of range: the data has 15 bytes");
    // Bad header lengths.
    has(st_error(u64le(0) + good + data), "bad header length 0");
    has(st_error(u64le(1ull << 62) + good + data), "bad header length 4611686018427387904");
    has(st_error(u64le(good.size() - 1) + good + data), "bad JSON header");
    // Bad JSON.
    has(st_error(st_image(R"({"a" {"dtype":"F32"}})", "")), "expected ':'");
    has(st_error(st_image(R"({"a":{"dtype":"F32)", "")), "closing a string");
    has(st_error(st_image(R"({"a":{"dtype":"F\q32"}})", "")), "one of the escapes");
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}})", "")),
        "expected a non-negative integer");
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}} x)", data)),
        "expected the end of the header");
    has(st_error(st_image(R"([])", "")), "expected '{'");
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}})", data)),
        "tensor 'a' has unknown key 'x'");
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[2]}})", data)),
        "tensor 'a' has no 'data_offsets'");
    has(st_error(st_image(R"({"a":{"dtype":"C64","shape":[2],"data_offsets":[0,16]}})", data)),
        "tensor 'a': dtype 'C64' not supported (F32, F64, F16, BF16, I8, I16, I32, I64, U8, U16, "
        "U32, U64, BOOL)");
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                          R"("a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                          data)),
        "tensor 'a' appears twice");
    has(st_error(st_image(R"({"__metadata__":{"k":1}})", "")), "expected '\"'");
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", data)),
        "data_offsets needs 2 entries");
    // Offsets out of range, overlapping, reversed; sizes not matching dtype * shape.
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}})", data)),
        "tensor 'a': data_offsets [12, 20] out of range: the data has 16 bytes");
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                          R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                          data)),
        "tensors 'a' [0, 8] and 'b' [4, 12] overlap");
    has(st_error(st_image(R"({"b":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                          R"("a":{"dtype":"I8","shape":[1],"data_offsets":[15,16]}})",
                          data)),
        "tensors 'b' [0, 16] and 'a' [15, 16] overlap");
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", data)),
        "tensor 'a': data_offsets [8, 0] end before they begin");
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", data)),
        "tensor 'a': F32 [3] needs 12 bytes but data_offsets span 8");
    has(st_error(st_image(R"({"a":{"dtype":"I32","shape":[2,1],"data_offsets":[0,16]}})", data)),
        "tensor 'a': I32 [2,1] needs 8 bytes but data_offsets span 16");
    has(st_error(st_image(R"({"a":{"dtype":"U8","shape":[4294967296,4294967296,16],)"
                          R"("data_offsets":[0,16]}})",
                          data)),
        "tensor 'a': shape too large");
    // Every truncation of the good image fails cleanly (ASan checks the cleanup).
    for (size_t n = 0; n < image.size(); n++) {
        EXPECT_EQ(st_parse(image.data(), n, &st, err, sizeof err), -1) << n;
        EXPECT_NE(err[0], 0);
    }
}

} // namespace

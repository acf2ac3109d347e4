// test_safetensors.cpp - the safetensors reader and writer (io/safetensors.h): a valid file, every
// kind of corruption refused with its reason; every dtype written and read back, the reference
// writer's bytes, bad tensors refused, and a failed save leaving nothing behind.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "io/tpuio.h"
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

// ------------------------------------------------------------------------- the writer --

// Tensors and metadata to write, owning their strings and bytes; file() is the st_file that
// st_encode takes (valid until the next add).
struct Tensors {
    struct T {
        std::string name;
        st_dtype dtype;
        std::vector<int64_t> shape;
        std::string data;
    };
    std::vector<T> t;
    std::vector<std::string> keys, values;
    std::vector<st_tensor> st;
    std::vector<char *> k, v;

    void add(const std::string &name, st_dtype dtype, std::vector<int64_t> shape, std::string data)
    {
        t.push_back({name, dtype, shape, data});
    }
    st_file file()
    {
        st.assign(t.size(), st_tensor{});
        for (size_t i = 0; i < t.size(); i++) {
            st[i].name = t[i].name.data();
            st[i].dtype = t[i].dtype;
            st[i].rank = (int)t[i].shape.size();
            for (size_t d = 0; d < t[i].shape.size() && d < ST_MAX_RANK; d++) // a bad rank too
                st[i].shape[d] = t[i].shape[d];
            st[i].data = t[i].data.data();
        }
        k.clear();
        v.clear();
        for (size_t i = 0; i < keys.size(); i++) {
            k.push_back(keys[i].data());
            v.push_back(values[i].data());
        }
        st_file f{};
        f.n_tensors = (int)st.size();
        f.tensors = st.data();
        f.n_meta = (int)k.size();
        f.meta_keys = k.data();
        f.meta_values = v.data();
        return f;
    }
    std::string encode()
    {
        const st_file f = file();
        void *img = nullptr;
        size_t len = 0;
        char err[256] = "";
        EXPECT_EQ(st_encode(&f, &img, &len, err, sizeof err), 0) << err;
        std::string s(static_cast<char *>(img), len);
        free(img);
        return s;
    }
    std::string error()
    {
        const st_file f = file();
        void *img = nullptr;
        size_t len = 0;
        char err[256] = "";
        EXPECT_EQ(st_encode(&f, &img, &len, err, sizeof err), -1) << "accepted";
        EXPECT_EQ(img, nullptr);
        return err;
    }
};

std::string random_bytes(std::mt19937 &rng, size_t n)
{
    std::string s(n, '\0');
    for (char &c : s)
        c = (char)rng();
    return s;
}

TEST(SafetensorsWriter, EveryDtypeReadsBack)
{
    std::mt19937 rng(7);
    Tensors in;
    const std::vector<std::vector<int64_t>> shapes = {{3}, {2, 5}, {}, {0, 4}, {1, 1, 3}};
    for (int d = 0; d < ST_DTYPE_COUNT_; d++) {
        const st_dtype dt = (st_dtype)d;
        const auto &shape = shapes[d % shapes.size()];
        int64_t n = 1;
        for (int64_t x : shape)
            n *= x;
        in.add(std::string("t_") + st_dtype_name(dt), dt, shape,
               random_bytes(rng, (size_t)n * st_dtype_size(dt)));
    }
    in.keys = {"step", "format", "epoch \"1\"\n"};
    in.values = {"12", "pt", "caf\xc3\xa9 \x01"};
    const std::string img = in.encode();

    st_file f;
    char err[256] = "";
    ASSERT_EQ(st_parse(img.data(), img.size(), &f, err, sizeof err), 0) << err;
    ASSERT_EQ(f.n_tensors, ST_DTYPE_COUNT_);
    const uint64_t n = tpuio_get_le(reinterpret_cast<const uint8_t *>(img.data()), 8);
    EXPECT_EQ(n % 8, 0u); // the data starts 8-byte aligned
    size_t offset = 0;
    for (int i = 0; i < f.n_tensors; i++) {
        const st_tensor &t = f.tensors[i];
        SCOPED_TRACE(t.name);
        // Contiguous, by descending alignment: every tensor starts aligned to its element.
        EXPECT_EQ(t.offset, offset);
        EXPECT_EQ(t.offset % st_dtype_size(t.dtype), 0u);
        if (i) {
            EXPECT_GE(st_dtype_size(f.tensors[i - 1].dtype), st_dtype_size(t.dtype));
        }
        offset += t.size;
        const auto &want = *std::find_if(in.t.begin(), in.t.end(),
                                         [&](const Tensors::T &x) { return x.name == t.name; });
        EXPECT_EQ(t.dtype, want.dtype);
        ASSERT_EQ(t.rank, (int)want.shape.size());
        EXPECT_TRUE(std::equal(want.shape.begin(), want.shape.end(), t.shape));
        EXPECT_EQ(std::string(static_cast<const char *>(t.data), t.size), want.data);
    }
    EXPECT_EQ(8 + n + offset, img.size()); // no hole, nothing after the data
    ASSERT_EQ(f.n_meta, 3);
    EXPECT_STREQ(f.meta_keys[0], "epoch \"1\"\n"); // by key
    EXPECT_STREQ(st_meta(&f, "epoch \"1\"\n"), "caf\xc3\xa9 \x01");
    EXPECT_STREQ(st_meta(&f, "step"), "12");

    // Deterministic: the same bytes whatever the order the tensors and keys come in, and the same
    // again from the file read back (its buf_ is not used).
    std::shuffle(in.t.begin(), in.t.end(), rng);
    std::swap(in.keys[0], in.keys[2]);
    std::swap(in.values[0], in.values[2]);
    EXPECT_EQ(in.encode(), img);
    void *again = nullptr;
    size_t len = 0;
    ASSERT_EQ(st_encode(&f, &again, &len, err, sizeof err), 0) << err;
    EXPECT_EQ(std::string(static_cast<char *>(again), len), img);
    free(again);
    st_free(&f);
}

// The bytes safetensors 0.8.0 writes (safetensors.numpy.save) for these tensors: the same layout,
// JSON text, escapes and padding.
TEST(SafetensorsWriter, WritesWhatTheReferenceWrites)
{
    Tensors in;
    const float w[4] = {1, 2, 3, 4};
    const int64_t n1 = -1;
    in.add("w", ST_F32, {2, 2}, bytes_of(w, 16));
    in.add("b", ST_BF16, {2}, std::string("\xc0\x3f\x00\xc0", 4));
    in.add("s", ST_I8, {}, "\x07");
    in.add("e", ST_F16, {0, 3}, "");
    in.add("n", ST_I64, {1}, bytes_of(&n1, 8));
    in.keys = {"step"};
    in.values = {"12"};
    const std::string header =
        R"({"__metadata__":{"step":"12"},"n":{"dtype":"I64","shape":[1],"data_offsets":[0,8]},)"
        R"("w":{"dtype":"F32","shape":[2,2],"data_offsets":[8,24]},)"
        R"("b":{"dtype":"BF16","shape":[2],"data_offsets":[24,28]},)"
        R"("e":{"dtype":"F16","shape":[0,3],"data_offsets":[28,28]},)"
        R"("s":{"dtype":"I8","shape":[],"data_offsets":[28,29]}}       )";
    EXPECT_EQ(in.encode(), st_image(header, bytes_of(&n1, 8) + bytes_of(w, 16) +
                                                std::string("\xc0\x3f\x00\xc0\x07", 5)));

    // Names with characters JSON escapes; no tensors at all.
    Tensors odd;
    odd.add("x\n\"\\\x01\xc3\xa9/", ST_I8, {1}, std::string(1, '\0'));
    odd.keys = {"k\x7f"};
    odd.values = {"v\t"};
    EXPECT_EQ(odd.encode(),
              st_image("{\"__metadata__\":{\"k\x7f\":\"v\\t\"},\"x\\n\\\"\\\\\\u0001\xc3\xa9/\":"
                       "{\"dtype\":\"I8\",\"shape\":[1],\"data_offsets\":[0,1]}}",
                       std::string(1, '\0')));
    EXPECT_EQ(Tensors().encode(), st_image("{}      ", ""));
}

TEST(SafetensorsWriter, WritesBackTheModelsWeights)
{
    st_file f, g;
    char err[256] = "";
    ASSERT_EQ(st_load((kSrc + "models/mnist/mlp.safetensors").c_str(), &f, err, sizeof err), 0)
        << err;
    void *img = nullptr;
    size_t len = 0;
    ASSERT_EQ(st_encode(&f, &img, &len, err, sizeof err), 0) << err;
    ASSERT_EQ(st_parse(img, len, &g, err, sizeof err), 0) << err;
    free(img);
    ASSERT_EQ(g.n_tensors, f.n_tensors);
    for (int i = 0; i < f.n_tensors; i++) {
        const st_tensor *a = &f.tensors[i], *b = st_find(&g, a->name);
        ASSERT_NE(b, nullptr) << a->name;
        EXPECT_EQ(b->dtype, a->dtype);
        EXPECT_EQ(b->rank, a->rank);
        EXPECT_EQ(b->elements, a->elements);
        ASSERT_EQ(b->size, a->size);
        EXPECT_EQ(memcmp(b->data, a->data, a->size), 0) << a->name;
    }
    ASSERT_EQ(g.n_meta, f.n_meta);
    for (int i = 0; i < f.n_meta; i++)
        EXPECT_STREQ(st_meta(&g, f.meta_keys[i]), f.meta_values[i]);
    st_free(&f);
    st_free(&g);
}

TEST(SafetensorsWriter, RefusesBadTensorsWithAReason)
{
    auto has = [](const std::string &msg, const std::string &what) {
        EXPECT_NE(msg.find(what), std::string::npos) << "message: " << msg << "\nwanted: " << what;
    };
    const std::string four(4, '\0');
    auto one = [&](const std::string &name, st_dtype dt, std::vector<int64_t> shape) {
        Tensors t;
        t.add("ok", ST_F32, {1}, four);
        t.add(name, dt, shape, four);
        return t;
    };
    has(one("ok", ST_I32, {1}).error(), "tensor 'ok' appears twice");
    has(one("__metadata__", ST_F32, {1}).error(),
        "tensor '__metadata__' has the name reserved for metadata");
    has(one("bad\xff", ST_F32, {1}).error(), "tensor 'bad\\xff' has a name that is not UTF-8");
    has(one("x", (st_dtype)ST_DTYPE_COUNT_, {1}).error(), "tensor 'x' has an unknown dtype");
    has(one("x", ST_F32, std::vector<int64_t>(ST_MAX_RANK + 1, 1)).error(),
        "tensor 'x': rank 17 (0 to 16)");
    has(one("x", ST_F32, {2, -1}).error(), "tensor 'x': dimension 1 is -1");
    has(one("x", ST_U8, {1ll << 32, 1ll << 32, 16}).error(), "tensor 'x': shape too large");

    Tensors nodata;
    nodata.add("x", ST_F32, {1}, four);
    st_file f = nodata.file();
    f.tensors[0].data = nullptr;
    void *img = nullptr;
    size_t len = 0;
    char err[256] = "";
    EXPECT_EQ(st_encode(&f, &img, &len, err, sizeof err), -1);
    has(err, "tensor 'x' has no data");
    f.tensors[0].name = nullptr;
    EXPECT_EQ(st_encode(&f, &img, &len, err, sizeof err), -1);
    has(err, "tensor '' has no name");
    f.n_tensors = -1;
    EXPECT_EQ(st_encode(&f, &img, &len, err, sizeof err), -1);
    has(err, "bad arguments: -1 tensors");
    f = nodata.file(); // an empty tensor needs no data
    f.tensors[0].shape[0] = 0;
    f.tensors[0].data = nullptr;
    EXPECT_EQ(st_encode(&f, &img, &len, err, sizeof err), 0) << err;
    free(img);

    Tensors meta;
    meta.keys = {"a", "b", "a"};
    meta.values = {"1", "2", "3"};
    has(meta.error(), "__metadata__ key 'a' appears twice");
    meta.keys = {"a", "k\xc0\xaf"}; // an overlong '/'
    meta.values = {"1", "2"};
    has(meta.error(), "__metadata__ entry 'k\\xc0\\xaf' has a key that is not UTF-8");
    meta.keys = {"a", "k"};
    meta.values = {"1", "\xed\xa0\x80"}; // a surrogate
    has(meta.error(), "__metadata__ entry 'k' has a value that is not UTF-8");
}

class SafetensorsSave : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/test_safetensors.XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir = tmpl;
    }
    void TearDown() override
    {
        chmod(dir.c_str(), 0700);
        std::filesystem::remove_all(dir);
    }
    std::vector<std::string> listing(const std::string &d) const
    {
        std::vector<std::string> v;
        for (const auto &e : std::filesystem::directory_iterator(d))
            v.push_back(e.path().filename().string());
        std::sort(v.begin(), v.end());
        return v;
    }
    std::string dir;
};

TEST_F(SafetensorsSave, WritesAllOrNothing)
{
    Tensors in;
    const float w[2] = {0.5f, -1};
    in.add("w", ST_F32, {2}, bytes_of(w, 8));
    in.add("b", ST_BF16, {1}, std::string("\x80\x3f", 2));
    const st_file f = in.file();
    char err[256] = "";
    const std::string path = dir + "/ck.safetensors";
    ASSERT_EQ(st_save(path.c_str(), &f, err, sizeof err), 0) << err;
    st_file back;
    ASSERT_EQ(st_load(path.c_str(), &back, err, sizeof err), 0) << err;
    EXPECT_EQ(back.n_tensors, 2);
    EXPECT_EQ(memcmp(st_find(&back, "w")->data, w, 8), 0);
    st_free(&back);
    std::ifstream saved(path, std::ios::binary);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(saved), {}), in.encode());

    // A directory that is missing or not one; a path that is a directory (the rename fails after
    // the data was written): an error, and nothing left behind.
    EXPECT_EQ(st_save((dir + "/missing/x.safetensors").c_str(), &f, err, sizeof err), -1);
    EXPECT_STREQ(err, "cannot create: No such file or directory");
    EXPECT_EQ(st_save((path + "/x.safetensors").c_str(), &f, err, sizeof err), -1);
    EXPECT_STREQ(err, "cannot create: Not a directory");
    std::filesystem::create_directory(dir + "/d");
    EXPECT_EQ(st_save((dir + "/d").c_str(), &f, err, sizeof err), -1);
    EXPECT_STREQ(err, "cannot rename into place: Is a directory");
    EXPECT_EQ(listing(dir), (std::vector<std::string>{"ck.safetensors", "d"}));
    EXPECT_TRUE(std::filesystem::is_empty(dir + "/d"));

    // Tensors the writer refuses: no file at all.
    Tensors twice = in;
    twice.add("w", ST_I8, {1}, "x");
    const st_file bad = twice.file();
    EXPECT_EQ(st_save((dir + "/bad.safetensors").c_str(), &bad, err, sizeof err), -1);
    EXPECT_STREQ(err, "tensor 'w' appears twice");
    EXPECT_EQ(listing(dir), (std::vector<std::string>{"ck.safetensors", "d"}));

    // A directory without write permission (root writes anyway: not checked then).
    if (geteuid() != 0) {
        ASSERT_EQ(chmod(dir.c_str(), 0500), 0);
        EXPECT_EQ(st_save((dir + "/ro.safetensors").c_str(), &f, err, sizeof err), -1);
        EXPECT_STREQ(err, "cannot create: Permission denied");
        ASSERT_EQ(chmod(dir.c_str(), 0700), 0);
        EXPECT_EQ(listing(dir), (std::vector<std::string>{"ck.safetensors", "d"}));
    }
}

} // namespace

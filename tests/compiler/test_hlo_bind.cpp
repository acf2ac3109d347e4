// test_hlo_bind.cpp - the safetensors reader (a valid file and every kind of corruption), the
// binding of its tensors to ENTRY parameters by each rule, and the exported MNIST MLP evaluated
// with its bound weights against JAX.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/hlo.h"
#include "tests/support/hlo_test.h"
#include "io/npy.h"
#include "io/safetensors.h"

namespace {

using hlo_test::at;
using hlo_test::dims_of;
using hlo_test::kSrc;
using hlo_test::slurp;

// ============================================================ safetensors --

std::string u64le(uint64_t v)
{
    std::string s(8, '\0');
    for (int i = 0; i < 8; i++)
        s[i] = (char)(v >> (8 * i));
    return s;
}

std::string st_image(const std::string &header, const std::string &data)
{
    return u64le(header.size()) + header + data;
}

std::string st_error(const std::string &image)
{
    st_file f;
    char err[256] = "";
    EXPECT_EQ(st_parse(image.data(), image.size(), &f, err, sizeof err), -1) << "accepted";
    return err;
}

std::string bytes_of(const void *p, size_t n) { return std::string((const char *)p, n); }

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
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}} x)",
                          data)),
        "expected the end of the header");
    has(st_error(st_image(R"([])", "")), "expected '{'");
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}})",
                          data)),
        "tensor 'a' has unknown key 'x'");
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[2]}})", data)),
        "tensor 'a' has no 'data_offsets'");
    has(st_error(st_image(R"({"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", data)),
        "tensor 'a': dtype 'F16' not supported (F32, I8, I32, U8)");
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                          R"("a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", data)),
        "tensor 'a' appears twice");
    has(st_error(st_image(R"({"__metadata__":{"k":1}})", "")), "expected '\"'");
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", data)),
        "data_offsets needs 2 entries");
    // Offsets out of range, overlapping, reversed; sizes not matching dtype * shape.
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}})", data)),
        "tensor 'a': data_offsets [12, 20] out of range: the data has 16 bytes");
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                          R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", data)),
        "tensors 'a' [0, 8] and 'b' [4, 12] overlap");
    has(st_error(st_image(R"({"b":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                          R"("a":{"dtype":"I8","shape":[1],"data_offsets":[15,16]}})", data)),
        "tensors 'b' [0, 16] and 'a' [15, 16] overlap");
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", data)),
        "tensor 'a': data_offsets [8, 0] end before they begin");
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", data)),
        "tensor 'a': F32 [3] needs 12 bytes but data_offsets span 8");
    has(st_error(st_image(R"({"a":{"dtype":"I32","shape":[2,1],"data_offsets":[0,16]}})", data)),
        "tensor 'a': I32 [2,1] needs 8 bytes but data_offsets span 16");
    has(st_error(st_image(R"({"a":{"dtype":"U8","shape":[4294967296,4294967296,16],)"
                          R"("data_offsets":[0,16]}})", data)),
        "tensor 'a': shape too large");
    // Every truncation of the good image fails cleanly (ASan checks the cleanup).
    for (size_t n = 0; n < image.size(); n++) {
        EXPECT_EQ(st_parse(image.data(), n, &st, err, sizeof err), -1) << n;
        EXPECT_NE(err[0], 0);
    }
}

// ============================================================ end to end --

struct Npy {
    npy_array a{};
    explicit Npy(const std::string &path)
    {
        char err[256];
        EXPECT_EQ(npy_load(path.c_str(), &a, err, sizeof err), 0) << path << ": " << err;
    }
    ~Npy() { npy_free(&a); }
    Npy(const Npy &) = delete;
    Npy &operator=(const Npy &) = delete;
};

// Writes the tensors of src into a new image under new names, with the given metadata JSON.
std::string renamed(const st_file &src, const std::vector<std::string> &names,
                    const std::string &meta)
{
    std::string header = "{\"__metadata__\":" + meta, data;
    for (int i = 0; i < src.n_tensors; i++) {
        const st_tensor &t = src.tensors[i];
        std::string shape;
        for (int d = 0; d < t.rank; d++)
            shape += (d ? "," : "") + std::to_string(t.shape[d]);
        header += ",\"" + names[i] + "\":{\"dtype\":\"F32\",\"shape\":[" + shape +
                  "],\"data_offsets\":[" + std::to_string(data.size()) + "," +
                  std::to_string(data.size() + t.size) + "]}";
        data += bytes_of(t.data, t.size);
    }
    return st_image(header + "}", data);
}

// Runs the MLP of `hlo` with weights of image on the first 64 test digits against JAX.
void check_mlp(const std::string &hlo, const std::string &image)
{
    hlo_error err{};
    hlo_module *m = hlo_parse_file((kSrc + hlo).c_str(), &err);
    ASSERT_NE(m, nullptr) << err.msg;
    st_file st;
    char serr[256];
    ASSERT_EQ(st_parse(image.data(), image.size(), &st, serr, sizeof serr), 0) << serr;
    hlo_array *params[5];
    ASSERT_EQ(hlo_bind_safetensors(m, hlo.c_str(), &st, params, 5, &err), 0) << err.msg;
    st_free(&st);
    for (int k = 0; k < 4; k++)
        EXPECT_NE(params[k], nullptr) << k;
    EXPECT_EQ(params[4], nullptr); // the input x.1 is not stored
    int64_t xd[2] = {16, 784};
    params[4] = hlo_array_new(HLO_F32, 2, xd);

    Npy x(kSrc + "models/mnist/test_x_u8.npy"), logits(kSrc + "models/mnist/jax_logits.npy"),
        pred(kSrc + "models/mnist/jax_pred.npy");
    ASSERT_EQ(x.a.dtype, NPY_UINT8);
    ASSERT_EQ(logits.a.dtype, NPY_FLOAT32);
    ASSERT_EQ(pred.a.dtype, NPY_INT32);
    const uint8_t *xs = (const uint8_t *)x.a.data;
    const float *ls = (const float *)logits.a.data;
    const int32_t *ps = (const int32_t *)pred.a.data;
    double worst = 0;
    for (int batch = 0; batch < 4; batch++) {
        float *in = (float *)params[4]->data;
        for (int i = 0; i < 16 * 784; i++)
            in[i] = (float)xs[batch * 16 * 784 + i] / 255.0f;
        hlo_array **outs = nullptr;
        int n = 0;
        ASSERT_EQ(hlo_eval(m, hlo.c_str(), params, 5, &outs, &n, &err), 0) << err.msg;
        ASSERT_EQ(n, 1);
        ASSERT_EQ(dims_of(outs[0]), (std::vector<int64_t>{16, 10}));
        const float *o = (const float *)outs[0]->data;
        for (int r = 0; r < 16; r++) {
            int row = batch * 16 + r, best = 0;
            for (int c = 0; c < 10; c++) {
                double d = std::fabs((double)o[r * 10 + c] - ls[row * 10 + c]);
                worst = std::max(worst, d);
                EXPECT_LE(d, 1e-4) << hlo << " digit " << row << " class " << c;
                if (o[r * 10 + c] > o[r * 10 + best])
                    best = c;
            }
            EXPECT_EQ(best, ps[row]) << hlo << " digit " << row;
        }
        hlo_arrays_free(outs, n);
    }
    std::printf("%s: max |evaluator - jax| = %.3g\n", hlo.c_str(), worst);
    for (hlo_array *a : params)
        hlo_array_free(a);
    hlo_module_free(m);
}


TEST(HloEndToEnd, MnistShortStyleByName)
{
    check_mlp("models/mnist/mlp.hlo", slurp(kSrc + "models/mnist/mlp.safetensors"));
}

TEST(HloEndToEnd, MnistDumpStyleByName)
{
    check_mlp("models/mnist/mlp.dump.hlo", slurp(kSrc + "models/mnist/mlp.safetensors"));
}

TEST(HloEndToEnd, MnistBindingWithoutSuffixAndByNumber)
{
    st_file st;
    char err[256];
    ASSERT_EQ(st_load((kSrc + "models/mnist/mlp.safetensors").c_str(), &st, err, sizeof err), 0);
    std::vector<std::string> names;
    for (int i = 0; i < st.n_tensors; i++)
        names.push_back(st.tensors[i].name);
    // "w1.1" -> "w1": bound by the name without the suffix.
    std::vector<std::string> bare;
    for (const std::string &s : names)
        bare.push_back(s.substr(0, s.find('.')));
    std::string bare_image = renamed(st, bare, "{}");
    // Unrelated names: bound by the parameter number in the metadata.
    std::vector<std::string> anon;
    std::string meta = "{";
    for (size_t i = 0; i < names.size(); i++) {
        anon.push_back("t" + std::to_string(i));
        meta += (i ? ",\"" : "\"") + anon[i] + "\":\"" + st_meta(&st, names[i].c_str()) + "\"";
    }
    std::string anon_image = renamed(st, anon, meta + ",\"input\":\"x.1=4\"}");
    // Tensors named by the parameter number.
    std::vector<std::string> numbered;
    for (const std::string &s : names)
        numbered.push_back(st_meta(&st, s.c_str()));
    std::string numbered_image = renamed(st, numbered, "{}");
    st_free(&st);
    check_mlp("models/mnist/mlp.hlo", bare_image);
    check_mlp("models/mnist/mlp.dump.hlo", anon_image);
    check_mlp("models/mnist/mlp.hlo", numbered_image);

    // A tensor whose shape does not fit its parameter is a located error.
    std::string text = slurp(kSrc + "models/mnist/mlp.hlo");
    hlo_error herr{};
    hlo_module *m = hlo_parse(text.data(), text.size(), "mlp.hlo", &herr);
    ASSERT_NE(m, nullptr);
    float z[10] = {0};
    std::string bad = st_image(R"({"w1.1":{"dtype":"F32","shape":[10],"data_offsets":[0,40]}})",
                               bytes_of(z, 40));
    ASSERT_EQ(st_parse(bad.data(), bad.size(), &st, err, sizeof err), 0) << err;
    hlo_array *params[5];
    EXPECT_EQ(hlo_bind_safetensors(m, "mlp.hlo", &st, params, 5, &herr), -1);
    EXPECT_EQ(std::string(herr.msg),
              at(text, "w1.1 =").replace(0, 5, "mlp.hlo") +
                  "parameter: 'w1.1' is f32[784,256] but tensor 'w1.1' is f32[10]");
    for (hlo_array *a : params)
        EXPECT_EQ(a, nullptr);
    st_free(&st);
    hlo_module_free(m);
}

} // namespace

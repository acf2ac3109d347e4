// test_bind.cpp - tpuc_bind_safetensors: the tensors of a safetensors file (io/safetensors.h)
// bound to ENTRY parameters by each rule and of every dtype, and the exported MNIST MLP evaluated
// with its bound weights against JAX.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/tpuc.h"
#include "io/npy.h"
#include "io/safetensors.h"
#include "tests/support/hlo_test.h"
#include "tests/support/io_test.h"

namespace
{

using hlo_test::at;
using hlo_test::dims_of;
using hlo_test::kSrc;
using hlo_test::slurp;
using io_test::bytes_of;
using io_test::st_image;

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
    ASSERT_EQ(tpuc_bind_safetensors(m, hlo.c_str(), &st, params, 5, &err), 0) << err.msg;
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

TEST(Bind, MnistShortStyleByName)
{
    check_mlp("models/mnist/mlp.hlo", slurp(kSrc + "models/mnist/mlp.safetensors"));
}

TEST(Bind, MnistDumpStyleByName)
{
    check_mlp("models/mnist/mlp.dump.hlo", slurp(kSrc + "models/mnist/mlp.safetensors"));
}

TEST(Bind, MnistBindingWithoutSuffixAndByNumber)
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
    std::string bad =
        st_image(R"({"w1.1":{"dtype":"F32","shape":[10],"data_offsets":[0,40]}})", bytes_of(z, 40));
    ASSERT_EQ(st_parse(bad.data(), bad.size(), &st, err, sizeof err), 0) << err;
    hlo_array *params[5];
    EXPECT_EQ(tpuc_bind_safetensors(m, "mlp.hlo", &st, params, 5, &herr), -1);
    EXPECT_EQ(std::string(herr.msg),
              at(text, "w1.1 =").replace(0, 5, "mlp.hlo") +
                  "parameter: 'w1.1' is f32[784,256] but tensor 'w1.1' is f32[10]");
    for (hlo_array *a : params)
        EXPECT_EQ(a, nullptr);
    st_free(&st);
    hlo_module_free(m);
}

using U = std::vector<uint64_t>;

// safetensors tensors of every dtype bind to parameters of the matching type, their bytes kept
// (BOOL: any nonzero byte is true).
TEST(Bind, EveryDtype)
{
    const char *types[] = {"bf16", "f16", "f64", "s16", "s64", "u16", "u32", "u64", "pred"};
    const hlo_type kTypes[] = {HLO_BF16, HLO_F16, HLO_F64, HLO_S16, HLO_S64,
                               HLO_U16,  HLO_U32, HLO_U64, HLO_PRED};
    const char *dtypes[] = {"BF16", "F16", "F64", "I16", "I64", "U16", "U32", "U64", "BOOL"};
    std::string body, header = "{", data, tuple_shape, tuple_ops;
    std::vector<U> want;
    for (int k = 0; k < 9; k++) {
        const hlo_type t = kTypes[k];
        size_t es = hlo_type_size(t);
        U v;
        for (int e = 0; e < 2; e++) {
            uint64_t b = 0x8877665544332211ull * (uint64_t)(e + k + 1);
            std::string bytes((const char *)&b, es);
            v.push_back(t == HLO_PRED ? (b & 0xff) != 0
                                      : (es == 8 ? b : b & ((1ull << (8 * es)) - 1)));
            data += bytes;
        }
        want.push_back(v);
        std::string name = std::string("w") + types[k];
        header += std::string(k ? "," : "") + "\"" + name + "\":{\"dtype\":\"" + dtypes[k] +
                  "\",\"shape\":[2],\"data_offsets\":[" + std::to_string(data.size() - 2 * es) +
                  "," + std::to_string(data.size()) + "]}";
        body += "  " + name + " = " + types[k] + "[2] parameter(" + std::to_string(k) + ")\n";
        tuple_shape += std::string(k ? ", " : "") + types[k] + "[2]";
        tuple_ops += std::string(k ? ", " : "") + name;
    }
    std::string image = st_image(header + "}", data);
    st_file st{};
    char err[256];
    ASSERT_EQ(st_parse(image.data(), image.size(), &st, err, sizeof err), 0) << err;
    std::string text =
        hlo_test::entry(body + "  ROOT t = (" + tuple_shape + ") tuple(" + tuple_ops + ")\n");
    hlo_test::Parsed p(text);
    ASSERT_NE(p.m, nullptr) << p.err.msg;
    std::vector<hlo_array *> params(9);
    hlo_error herr{};
    ASSERT_EQ(tpuc_bind_safetensors(p.m, "t.hlo", &st, params.data(), 9, &herr), 0) << herr.msg;
    st_free(&st);
    // The module returns the bound parameters: their bits, element by element.
    hlo_array **outs = nullptr;
    int n = 0;
    ASSERT_EQ(hlo_eval(p.m, "t.hlo", params.data(), 9, &outs, &n, &herr), 0) << herr.msg;
    ASSERT_EQ(n, 9);
    for (int k = 0; k < 9; k++) {
        const size_t es = hlo_type_size(outs[k]->shape.type);
        U got;
        for (int64_t e = 0; e < outs[k]->shape.elements; e++) {
            uint64_t v = 0;
            memcpy(&v, (const char *)outs[k]->data + (size_t)e * es, es);
            got.push_back(v);
        }
        EXPECT_EQ(got, want[(size_t)k]) << types[k];
    }
    hlo_arrays_free(outs, n);
    for (hlo_array *a : params)
        hlo_array_free(a);
}

} // namespace

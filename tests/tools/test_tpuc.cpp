// test_tpuc.cpp - the compiler (compiler/tpuc.h) end to end: small HLO modules, one per op or
// pattern, compiled for the smallest built array, run by `tpusim run` on the cycle-accurate
// device (which checks every submission against the golden model), and compared with the
// reference evaluator (hlo_eval) on random inputs: exactly where no float dot is quantized,
// within the int8 quantization error where one is. Plus the MNIST model's placement and report,
// and the compiler's errors.
#include <gtest/gtest.h>
#include <jansson.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/tpuc.h"
#include "io/npy.h"
#include "sim/tpusim.h"
#include "tests/support/io_test.h"

namespace fs = std::filesystem;

namespace
{

const std::string kRun = TPU_BINARY_DIR "/bin/tpusim";

uint32_t small_n()
{
    uint32_t sizes[64];
    return tpusim_arrays(sizes, 64) > 0 ? sizes[0] : 8;
}

// 16, the demo's array size, when it is built; else the largest one built.
uint32_t demo_n()
{
    uint32_t sizes[64];
    const int n = tpusim_arrays(sizes, 64);
    for (int i = 0; i < n; i++)
        if (sizes[i] == 16)
            return 16;
    return n > 0 ? sizes[n - 1] : 8;
}

fs::path scratch(const std::string &name)
{
    fs::path d = fs::path(TPU_BINARY_DIR) / "test_tpuc" / name;
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

// A float literal of the given dims with values from rng, as HLO text.
std::string literal(std::mt19937 &rng, const std::vector<int> &dims, float lo, float hi,
                    size_t level = 0)
{
    std::uniform_real_distribution<float> u(lo, hi);
    std::string s = "{";
    for (int i = 0; i < dims[level]; i++) {
        if (i)
            s += ", ";
        if (level + 1 == dims.size()) {
            char b[32];
            snprintf(b, sizeof b, "%.6g", u(rng));
            s += b;
        } else {
            s += literal(rng, dims, lo, hi, level + 1);
        }
    }
    return s + "}";
}

std::string int_literal(std::mt19937 &rng, int rows, int cols, int lo, int hi)
{
    std::uniform_int_distribution<int> u(lo, hi);
    std::string s = "{";
    for (int i = 0; i < rows; i++) {
        s += i ? ", {" : "{";
        for (int j = 0; j < cols; j++)
            s += (j ? ", " : "") + std::to_string(u(rng));
        s += "}";
    }
    return s + "}";
}

hlo_array *random_array(std::mt19937 &rng, hlo_type t, std::vector<int64_t> dims, double lo,
                        double hi)
{
    hlo_array *a = hlo_array_new(t, (int)dims.size(), dims.data());
    std::uniform_real_distribution<double> u(lo, hi);
    for (int64_t i = 0; i < a->shape.elements; i++) {
        const double v = u(rng);
        switch (t) {
        case HLO_F32: ((float *)a->data)[i] = (float)v; break;
        case HLO_S8: ((int8_t *)a->data)[i] = (int8_t)std::lround(v); break;
        case HLO_U8: ((uint8_t *)a->data)[i] = (uint8_t)std::lround(v); break;
        case HLO_S64: ((int64_t *)a->data)[i] = std::lround(v); break;
        default: ((int32_t *)a->data)[i] = (int32_t)std::lround(v); break;
        }
    }
    return a;
}

npy_dtype npy_of(hlo_type t)
{
    return t == HLO_F32   ? NPY_FLOAT32
           : t == HLO_S8  ? NPY_INT8
           : t == HLO_U8  ? NPY_UINT8
           : t == HLO_S64 ? NPY_INT64
                          : NPY_INT32;
}

void save_npy(const fs::path &p, const hlo_array *a)
{
    npy_array n{};
    n.dtype = npy_of(a->shape.type);
    n.ndim = a->shape.rank;
    n.count = (uint64_t)a->shape.elements;
    for (int i = 0; i < n.ndim; i++)
        n.shape[i] = (uint64_t)a->shape.dims[i];
    n.data = a->data;
    size_t len = 0;
    void *img = npy_encode(&n, 0, &len);
    ASSERT_NE(img, nullptr);
    std::ofstream(p, std::ios::binary).write((const char *)img, (std::streamsize)len);
    free(img);
}

struct Outcome {
    int status = -1;
    std::string report; // the compiler's
    std::vector<std::vector<double>> device, reference;
};

double value(const hlo_array *a, int64_t i)
{
    switch (a->shape.type) {
    case HLO_F32: return ((const float *)a->data)[i];
    case HLO_S8: return ((const int8_t *)a->data)[i];
    case HLO_U8: return ((const uint8_t *)a->data)[i];
    default: return ((const int32_t *)a->data)[i];
    }
}

// Compiles text (calibrating on calib batches of the inputs), runs one batch of random inputs on
// the device and on the reference evaluator.
// A safetensors file of f32 tensors named by their parameter numbers.
void save_weights(const fs::path &p, const std::vector<std::pair<int, hlo_array *>> &weights)
{
    std::string header = "{", data;
    for (const auto &[k, a] : weights) {
        std::string shape;
        for (int d = 0; d < a->shape.rank; d++)
            shape += (d ? "," : "") + std::to_string(a->shape.dims[d]);
        const size_t bytes = (size_t)a->shape.elements * 4;
        header += std::string(header.size() > 1 ? "," : "") + "\"" + std::to_string(k) +
                  "\":{\"dtype\":\"F32\",\"shape\":[" + shape + "],\"data_offsets\":[" +
                  std::to_string(data.size()) + "," + std::to_string(data.size() + bytes) + "]}";
        data.append((const char *)a->data, bytes);
    }
    header += "}";
    std::string len(8, '\0');
    for (int i = 0; i < 8; i++)
        len[i] = (char)(header.size() >> (8 * i));
    std::ofstream(p, std::ios::binary) << len << header << data;
}

// Compiles text (calibrating on calib batches of the inputs, with weights bound to parameters
// by number), runs one batch of random inputs on the device and on the reference evaluator.
Outcome compile_and_run(const std::string &name, const std::string &text,
                        std::vector<hlo_array *> inputs, int calib_batches = 8, double lo = -1,
                        double hi = 1, const std::vector<std::pair<int, hlo_array *>> &weights = {})
{
    Outcome o;
    const fs::path dir = scratch(name);
    const fs::path hlo = dir / "model.hlo", pkg = dir / "model.tpub", st = dir / "w.safetensors";
    std::ofstream(hlo) << text;
    save_weights(st, weights);
    std::mt19937 rng(7);
    std::vector<hlo_array *> calib;
    for (hlo_array *in : inputs) {
        std::vector<int64_t> dims(in->shape.dims, in->shape.dims + in->shape.rank);
        dims[0] *= calib_batches;
        calib.push_back(random_array(rng, in->shape.type, dims, lo, hi));
    }
    tpuc_options opts{};
    opts.hlo_path = hlo.c_str();
    opts.weights_path = st.c_str();
    opts.array_n = small_n();
    opts.calib = calib.data();
    opts.n_calib = (int)calib.size();
    tpub_package p;
    hlo_error perr;
    if (tpuc_compile(&opts, &p, &perr)) {
        ADD_FAILURE() << name << ": " << perr.msg;
        return o;
    }
    o.report = p.report;
    EXPECT_EQ(tpub_save(&p, pkg.c_str(), &perr), 0) << perr.msg;
    char err[1024];
    tpub_free(&p);
    std::string cmd = kRun + " run " + pkg.string() + " --quiet";
    for (size_t k = 0; k < inputs.size(); k++) {
        save_npy(dir / ("in" + std::to_string(k) + ".npy"), inputs[k]);
        cmd += " --input " + (dir / ("in" + std::to_string(k) + ".npy")).string();
    }
    hlo_error he;
    hlo_module *m = hlo_parse_file(hlo.c_str(), &he);
    EXPECT_NE(m, nullptr) << he.msg;
    hlo_array **outs = nullptr;
    int n_outs = 0;
    std::vector<hlo_array *> params(inputs.size() + weights.size(), nullptr);
    for (const auto &[k, a] : weights)
        params[k] = a;
    for (size_t i = 0, k = 0; i < inputs.size(); i++, k++) {
        while (params[k])
            k++;
        params[k] = inputs[i];
    }
    EXPECT_EQ(hlo_eval(m, "model.hlo", params.data(), (int)params.size(), &outs, &n_outs, &he), 0)
        << he.msg;
    for (int k = 0; k < n_outs; k++)
        cmd += " --output " + (dir / ("out" + std::to_string(k) + ".npy")).string();
    o.status = std::system((cmd + " > " + (dir / "run.txt").string() + " 2>&1").c_str());
    EXPECT_EQ(o.status, 0) << name << ": " << std::ifstream(dir / "run.txt").rdbuf();
    for (int k = 0; k < n_outs && o.status == 0; k++) {
        npy_array y;
        EXPECT_EQ(
            npy_load((dir / ("out" + std::to_string(k) + ".npy")).c_str(), &y, err, sizeof err), 0)
            << err;
        EXPECT_EQ((int64_t)y.count, outs[k]->shape.elements);
        EXPECT_EQ(y.dtype, npy_of(outs[k]->shape.type));
        std::vector<double> dv, rv;
        for (uint64_t i = 0; i < y.count && (int64_t)i < outs[k]->shape.elements; i++) {
            hlo_array view = *outs[k];
            view.data = y.data;
            view.shape.type = outs[k]->shape.type;
            dv.push_back(value(&view, (int64_t)i));
            rv.push_back(value(outs[k], (int64_t)i));
        }
        o.device.push_back(dv);
        o.reference.push_back(rv);
        npy_free(&y);
    }
    hlo_arrays_free(outs, n_outs);
    hlo_module_free(m);
    for (hlo_array *a : calib)
        hlo_array_free(a);
    for (hlo_array *a : inputs)
        hlo_array_free(a);
    for (const auto &w : weights)
        hlo_array_free(w.second);
    return o;
}

void expect_exact(const Outcome &o)
{
    ASSERT_FALSE(o.device.empty());
    for (size_t k = 0; k < o.device.size(); k++)
        for (size_t i = 0; i < o.device[k].size(); i++)
            ASSERT_EQ(o.device[k][i], o.reference[k][i]) << "output " << k << " element " << i;
}

// Within tol of the largest reference magnitude: the int8 quantization error.
void expect_close(const Outcome &o, double tol)
{
    ASSERT_FALSE(o.device.empty());
    for (size_t k = 0; k < o.device.size(); k++) {
        double mx = 1e-6;
        for (double v : o.reference[k])
            mx = std::max(mx, std::fabs(v));
        for (size_t i = 0; i < o.device[k].size(); i++)
            ASSERT_NEAR(o.device[k][i], o.reference[k][i], tol * mx)
                << "output " << k << " element " << i;
    }
}

std::mt19937 &rng()
{
    static std::mt19937 r(2026);
    return r;
}

hlo_array *f32(std::vector<int64_t> dims) { return random_array(rng(), HLO_F32, dims, -1, 1); }

// ----------------------------------------------------------- device dots --

TEST(Lower, DenseOnDevice)
{
    const std::string t = "HloModule dense\nENTRY e {\n  x = f32[8,20] parameter(0)\n"
                          "  w = f32[20,12] constant(" +
                          literal(rng(), {20, 12}, -1, 1) +
                          ")\n  ROOT d = f32[8,12] dot(x, w), lhs_contracting_dims={1}, "
                          "rhs_contracting_dims={0}\n}\n";
    Outcome o = compile_and_run("dense", t, {f32({8, 20})});
    EXPECT_NE(o.report.find("(GEMMs: 1, segments: 1)"), std::string::npos) << o.report;
    expect_close(o, 0.03);
}

TEST(Lower, TransposedWeightsBiasReluChain)
{
    // PyTorch's x . W^T, then bias and ReLU fused, the int8 result fed to a second GEMM; shapes
    // that are not multiples of the array size.
    const std::string t =
        "HloModule chain\nENTRY e {\n  x = f32[5,37] parameter(0)\n"
        "  w1 = f32[19,37] constant(" +
        literal(rng(), {19, 37}, -1, 1) +
        ")\n"
        "  d1 = f32[5,19] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n"
        "  b1 = f32[19] constant(" +
        literal(rng(), {19}, -1, 1) +
        ")\n"
        "  bb = f32[5,19] broadcast(b1), dimensions={1}\n"
        "  a1 = f32[5,19] add(bb, d1)\n  z = f32[] constant(0)\n"
        "  zb = f32[5,19] broadcast(z), dimensions={}\n  r1 = f32[5,19] maximum(a1, zb)\n"
        "  w2 = f32[19,3] constant(" +
        literal(rng(), {19, 3}, -1, 1) +
        ")\n"
        "  ROOT d2 = f32[5,3] dot(r1, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
    Outcome o = compile_and_run("chain", t, {f32({5, 37})});
    EXPECT_NE(o.report.find("+ a1 (bias) + r1 (relu) -> s8, stays on the device"),
              std::string::npos)
        << o.report;
    expect_close(o, 0.06);
}

TEST(Lower, IntegerDotIsExact)
{
    // s8 x s8 -> s32 with an s32 bias and ReLU: no quantization, bit-exact; int8 extremes.
    const std::string t =
        "HloModule int8\nENTRY e {\n  x = s8[6,33] parameter(0)\n"
        "  w = s8[33,10] constant(" +
        int_literal(rng(), 33, 10, -128, 127) +
        ")\n"
        "  d = s32[6,10] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
        "  b = s32[1,10] constant(" +
        int_literal(rng(), 1, 10, -40000, 40000) +
        ")\n"
        "  br = s32[10] reshape(b)\n  bb = s32[6,10] broadcast(br), dimensions={1}\n"
        "  a = s32[6,10] add(d, bb)\n  z = s32[] constant(0)\n"
        "  zb = s32[6,10] broadcast(z), dimensions={}\n  ROOT r = s32[6,10] maximum(zb, a)\n}\n";
    hlo_array *x = random_array(rng(), HLO_S8, {6, 33}, -128, 127);
    ((int8_t *)x->data)[0] = -128;
    ((int8_t *)x->data)[1] = 127;
    Outcome o = compile_and_run("int8", t, {x}, 1, -128, 127);
    EXPECT_NE(o.report.find("integer dot, exact on the device"), std::string::npos) << o.report;
    expect_exact(o);
}

TEST(Lower, KEqualsOneAndRank3)
{
    // K = 1 (an outer product) and a rank-3 activation contracting its last dimension.
    const std::string t =
        "HloModule k1\nENTRY e {\n  x = f32[2,3,1] parameter(0)\n"
        "  w = f32[1,4] constant(" +
        literal(rng(), {1, 4}, -1, 1) +
        ")\n"
        "  ROOT d = f32[2,3,4] dot(x, w), lhs_contracting_dims={2}, rhs_contracting_dims={0}\n}\n";
    Outcome o = compile_and_run("k1", t, {f32({2, 3, 1})});
    expect_close(o, 0.03);
}

std::string slurp(const std::string &path)
{
    std::ifstream f(path);
    std::stringstream t;
    t << f.rdbuf();
    return t.str();
}

TEST(Lower, PyTorchXlaStyle)
{
    // PyTorch/XLA's long style: x . W^T through a transpose of the weights, inline operand
    // shapes, log-softmax; weights bound by parameter number.
    Outcome o = compile_and_run("torch", slurp(TPU_SOURCE_DIR "/tests/hlo/mlp_torch_xla.hlo"),
                                {random_array(rng(), HLO_F32, {32, 784}, 0, 1)}, 4, 0, 1,
                                {{0, random_array(rng(), HLO_F32, {10}, -0.1, 0.1)},
                                 {1, random_array(rng(), HLO_F32, {10, 128}, -0.1, 0.1)},
                                 {2, random_array(rng(), HLO_F32, {128}, -0.1, 0.1)},
                                 {3, random_array(rng(), HLO_F32, {128, 784}, -0.05, 0.05)}});
    EXPECT_NE(o.report.find("(GEMMs: 2, segments: 1)"), std::string::npos) << o.report;
    expect_close(o, 0.05);
}

TEST(Lower, XlaDumpStyle)
{
    Outcome o = compile_and_run("dump", slurp(TPU_SOURCE_DIR "/tests/hlo/mlp_xla_dump.hlo"),
                                {random_array(rng(), HLO_F32, {1, 784}, 0, 1)}, 16, 0, 1,
                                {{0, random_array(rng(), HLO_F32, {784, 128}, -0.05, 0.05)},
                                 {1, random_array(rng(), HLO_F32, {128}, -0.1, 0.1)},
                                 {2, random_array(rng(), HLO_F32, {128, 10}, -0.1, 0.1)},
                                 {3, random_array(rng(), HLO_F32, {10}, -0.1, 0.1)}});
    EXPECT_NE(o.report.find("(GEMMs: 2, segments: 1)"), std::string::npos) << o.report;
    expect_close(o, 0.05);
}

// ------------------------------------------------------------- host ops --

TEST(Lower, HostOpsAreExact)
{
    // Every other op the compiler lowers, on the host: bit-exact with the evaluator.
    const std::string t =
        "HloModule host\n"
        "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT s = f32[] add(a, b)\n}\n"
        "twice {\n  p = f32[4,6] parameter(0)\n  ROOT q = f32[4,6] add(p, p)\n}\n"
        "ENTRY e {\n  x = f32[4,6] parameter(0)\n  y = f32[6,4] parameter(1)\n"
        "  yt = f32[4,6] transpose(y), dimensions={1,0}\n  s = f32[4,6] subtract(x, yt)\n"
        "  m = f32[4,6] multiply(s, x)\n  c = f32[4,6] call(m), to_apply=twice\n"
        "  mx = f32[4,6] maximum(c, yt)\n  r = f32[24] reshape(mx)\n"
        "  i = s32[24] convert(r)\n  f = f32[24] convert(i)\n"
        "  z = f32[] constant(0)\n  red = f32[4] reduce(mx, z), dimensions={1}, to_apply=sum\n"
        "  bc = f32[4,6] broadcast(red), dimensions={0}\n"
        "  tu = (f32[24], f32[4,6]) tuple(f, bc)\n  g0 = f32[24] get-tuple-element(tu), index=0\n"
        "  g1 = f32[4,6] get-tuple-element(tu), index=1\n"
        "  ROOT out = (f32[24], f32[4,6], f32[4]) tuple(g0, g1, red)\n}\n";
    hlo_array *x = random_array(rng(), HLO_F32, {4, 6}, -20, 20);
    hlo_array *y = random_array(rng(), HLO_F32, {6, 4}, -20, 20);
    Outcome o = compile_and_run("host", t, {x, y});
    EXPECT_NE(o.report.find("(GEMMs: 0, segments: 0)"), std::string::npos) << o.report;
    expect_exact(o);
}

TEST(Lower, ReducerThatCallsAComputation)
{
    // The host program carries the reducer and what it calls, callees first.
    const std::string t = "HloModule red\n"
                          "mx {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                          "  ROOT m = f32[] maximum(a, b)\n}\n"
                          "f {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                          "  c = f32[] call(a, b), to_apply=mx\n  ROOT s = f32[] add(c, b)\n}\n"
                          "ENTRY e {\n  x = f32[3,7] parameter(0)\n  z = f32[] constant(0)\n"
                          "  ROOT r = f32[3] reduce(x, z), dimensions={1}, to_apply=f\n}\n";
    Outcome o = compile_and_run("reducer", t, {f32({3, 7})});
    expect_exact(o);
}

TEST(Lower, ArgmaxOnHost)
{
    // jnp.argmax: iota, a variadic reduce with a comparator of compare/or/and/select; exact.
    Outcome o = compile_and_run("argmax", slurp(TPU_SOURCE_DIR "/tests/hlo/jax_argmax.hlo"),
                                {f32({4, 10})});
    expect_exact(o);
}

TEST(Lower, MlpWithArgmax)
{
    // Two GEMMs on the device, then argmax on the host: the predicted classes agree with the
    // float model's except where quantization flips a near tie.
    Outcome o = compile_and_run("mlp_argmax", slurp(TPU_SOURCE_DIR "/tests/hlo/jax_mlp_argmax.hlo"),
                                {random_array(rng(), HLO_F32, {8, 20}, 0, 1)}, 8, 0, 1,
                                {{0, random_array(rng(), HLO_F32, {20, 12}, -0.5, 0.5)},
                                 {1, random_array(rng(), HLO_F32, {12, 5}, -0.5, 0.5)}});
    EXPECT_NE(o.report.find("(GEMMs: 2, segments: 1)"), std::string::npos) << o.report;
    EXPECT_NE(o.report.find("reduce.11_1 (reduce)"), std::string::npos) << o.report;
    ASSERT_EQ(o.device.size(), 1u);
    int agree = 0;
    for (size_t i = 0; i < o.device[0].size(); i++)
        agree += o.device[0][i] == o.reference[0][i];
    EXPECT_GE(agree, 7) << "of 8";
}

TEST(Lower, BatchDotOnDevice)
{
    // One GEMM per batch index; the weights' batch dimension need not lead (rhs [5,2,4], batch
    // dim 1), and a bias shared by the batch is fused.
    const std::string t =
        "HloModule bdot\nENTRY e {\n  x = f32[2,3,5] parameter(0)\n"
        "  w = f32[5,2,4] constant(" +
        literal(rng(), {5, 2, 4}, -1, 1) +
        ")\n"
        "  d = f32[2,3,4] dot(x, w), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
        "rhs_batch_dims={1}, rhs_contracting_dims={0}\n"
        "  b = f32[4] constant(" +
        literal(rng(), {4}, -1, 1) +
        ")\n"
        "  bb = f32[2,3,4] broadcast(b), dimensions={2}\n  ROOT a = f32[2,3,4] add(d, bb)\n}\n";
    Outcome o = compile_and_run("bdot", t, {f32({2, 3, 5})});
    EXPECT_NE(o.report.find("gemm 0  d  2 x 3 x 5 x 4 + a (bias)"), std::string::npos) << o.report;
    expect_close(o, 0.03);
}

TEST(Lower, IntegerBatchDotIsExact)
{
    const std::string t =
        "HloModule ibdot\nENTRY e {\n  x = s8[3,2,7] parameter(0)\n"
        "  w = s8[3,7,5] constant({" +
        int_literal(rng(), 7, 5, -128, 127) + ", " + int_literal(rng(), 7, 5, -128, 127) + ", " +
        int_literal(rng(), 7, 5, -128, 127) +
        "})\n  ROOT d = s32[3,2,5] dot(x, w), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
        "rhs_batch_dims={0}, rhs_contracting_dims={1}\n}\n";
    Outcome o = compile_and_run("ibdot", t, {random_array(rng(), HLO_S8, {3, 2, 7}, -128, 127)}, 1,
                                -128, 127);
    EXPECT_NE(o.report.find("3 x 2 x 7 x 5"), std::string::npos) << o.report;
    expect_exact(o);
}

// An embedding look-up with PyTorch's int64 indices as the model input (an .npy of int64): the
// gather on the host, the dense layer after it on the device.
TEST(Lower, Int64IndicesAsTheInput)
{
    const std::string t =
        "HloModule emb\nENTRY e {\n  ids = s64[4] parameter(0)\n"
        "  table = f32[10,3] constant(" +
        literal(rng(), {10, 3}, -1, 1) +
        ")\n  g = f32[4,3] gather(table, ids), offset_dims={1}, collapsed_slice_dims={0}, "
        "start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}\n"
        "  w = f32[3,5] constant(" +
        literal(rng(), {3, 5}, -1, 1) +
        ")\n  ROOT d = f32[4,5] dot(g, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
    std::mt19937 r(3);
    Outcome o = compile_and_run("int64_ids", t, {random_array(r, HLO_S64, {4}, 0, 9)}, 8, 0, 9);
    EXPECT_NE(o.report.find("(GEMMs: 1, segments: 1)"), std::string::npos) << o.report;
    EXPECT_NE(o.report.find("gather"), std::string::npos) << o.report;
    expect_close(o, 0.03);
}

// A batch dimension after the contracting one: the transfer writes A with its dims swapped, so
// that each batch index's rows are contiguous.
TEST(Lower, TrailingBatchDimIsWrittenPermuted)
{
    const std::string t =
        "HloModule tbdot\nENTRY e {\n  x = f32[3,2] parameter(0)\n"
        "  w = f32[3,2,4] constant(" +
        literal(rng(), {3, 2, 4}, -1, 1) +
        ")\n"
        "  ROOT d = f32[2,4] dot(x, w), lhs_batch_dims={1}, lhs_contracting_dims={0}, "
        "rhs_batch_dims={1}, rhs_contracting_dims={0}\n}\n";
    Outcome o = compile_and_run("tbdot", t, {f32({3, 2})});
    EXPECT_NE(o.report.find("gemm 0  d  2 x 1 x 3 x 4"), std::string::npos) << o.report;
    EXPECT_NE(o.report.find("A 'x' written with its dims in the order (1,0)"), std::string::npos)
        << o.report;
    expect_close(o, 0.03);
}

// ---------------------------------------------------------------- errors --

// Compiles text with a calibration array of that shape ({} for none): the error, or "" with
// the report in *report.
std::string compile_with(const std::string &name, const std::string &text,
                         std::vector<int64_t> calib, std::string *report = nullptr)
{
    const fs::path dir = scratch(name);
    std::ofstream(dir / "m.hlo") << text;
    const std::string path = (dir / "m.hlo").string();
    tpuc_options opts{};
    opts.hlo_path = path.c_str();
    hlo_array *c = calib.empty() ? nullptr : f32(calib);
    if (c)
        for (int64_t i = 0; i < c->shape.elements; i++)
            hlo_array_set(c, i, (double)(i % 7) - 3);
    opts.calib = &c;
    opts.n_calib = c ? 1 : 0;
    tpub_package p;
    hlo_error err{};
    if (tpuc_compile(&opts, &p, &err) == 0) {
        if (report)
            *report = p.report ? p.report : "";
        tpub_free(&p);
    }
    hlo_array_free(c);
    return err.msg;
}

std::string compile_error(const std::string &name, const std::string &text, bool calib = false)
{
    const std::string err =
        compile_with(name, text, calib ? std::vector<int64_t>{3, 4} : std::vector<int64_t>{});
    EXPECT_NE(err, "") << name;
    return err;
}

TEST(Errors, Located)
{
    EXPECT_NE(compile_error("unknown", "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n"
                                       "  ROOT y = f32[16] all-gather(x), dimensions={0}\n}\n")
                  .find("m.hlo:4:8: all-gather: unsupported op"),
              std::string::npos);
    EXPECT_NE(compile_error("all-reduce", "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n"
                                          "  ROOT y = f32[2] all-reduce(x)\n}\n")
                  .find("m.hlo:4:8: all-reduce: missing to_apply"),
              std::string::npos);
    // int8 calibration evaluates one device alone: an all-reduce it needs is refused.
    EXPECT_NE(
        compile_error("calibrated all-reduce",
                      "HloModule m, num_partitions=2\nadd {\n  a = f32[] parameter(0)\n"
                      "  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
                      "ENTRY e {\n  x = f32[3,4] parameter(0)\n"
                      "  w = f32[4,2] constant({{1, 2}, {3, 4}, {5, 6}, {7, 8}})\n"
                      "  d = f32[3,2] dot(x, w), lhs_contracting_dims={1}, "
                      "rhs_contracting_dims={0}\n"
                      "  ROOT r = f32[3,2] all-reduce(d), replica_groups={}, to_apply=add\n}\n",
                      true)
            .find("m.hlo:11:8: all-reduce: 'r': calibration runs one device alone and "
                  "cannot evaluate an all-reduce (compile with --precision bf16)"),
        std::string::npos);
    EXPECT_NE(compile_error("custom",
                            "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n"
                            "  ROOT y = f32[2] custom-call(x), custom_call_target=\"f\"\n}\n")
                  .find("m.hlo:4:8: custom-call: 'y' (target \"f\") is not"),
              std::string::npos);
    const std::string need = "HloModule m\nENTRY e {\n  x = f32[2,5] parameter(0)\n"
                             "  w = f32[5,2] constant({{1,2},{3,4},{5,6},{7,8},{9,0}})\n"
                             "  ROOT d = f32[2,2] dot(x, w), lhs_contracting_dims={1}, "
                             "rhs_contracting_dims={0}\n}\n";
    EXPECT_NE(compile_error("nocalib", need).find("calibration"), std::string::npos);
    EXPECT_NE(compile_error("badcalib", need, true)
                  .find("calibration array 0 is f32[3,4]; input 'x' is f32[2,5]"),
              std::string::npos);
    // Fewer calibration rows than a batch: repeated when they divide it, else refused.
    std::string report;
    EXPECT_EQ(compile_with("fill", need, {1, 5}, &report), "");
    EXPECT_NE(report.find("calibrated on 1 samples, repeated 2 times to fill a batch"),
              std::string::npos)
        << report;
    const std::string batch3 = "HloModule m\nENTRY e {\n  x = f32[3,5] parameter(0)\n"
                               "  w = f32[5,2] constant({{1,2},{3,4},{5,6},{7,8},{9,0}})\n"
                               "  ROOT d = f32[3,2] dot(x, w), lhs_contracting_dims={1}, "
                               "rhs_contracting_dims={0}\n}\n";
    EXPECT_NE(compile_with("nofill", batch3, {2, 5})
                  .find("calibration array 0 has 2 rows, fewer than one batch of 3 and not a "
                        "divisor of it"),
              std::string::npos);
    EXPECT_NE(compile_error("elided", "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n"
                                      "  c = f32[2] constant({...})\n"
                                      "  ROOT y = f32[2] add(x, c)\n}\n")
                  .find("m.hlo:4:"),
              std::string::npos);
}

// The tpuc command: each bad input is one line naming it, exit 2 (an input rejected, usage, an
// output not writable: the tools' exit code of a usage or input error), and no package written.
TEST(Errors, TpucCommand)
{
    const fs::path dir = scratch("tpuc_cmd");
    const std::string m = TPU_SOURCE_DIR "/models/mnist/", out = (dir / "o.tpub").string();
    std::ofstream(dir / "junk") << "junk";
    const std::string junk = (dir / "junk").string(), tpuc = TPU_BINARY_DIR "/bin/tpuc ";
    // Hostile inputs: a FIFO nobody writes (must not block), a 1 TB sparse file (refused by its
    // size), an endless device (refused once past the stream limit), a path with a newline.
    const std::string fifo = (dir / "fifo").string(), sparse = (dir / "sparse").string();
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    std::ofstream(sparse).close();
    fs::resize_file(sparse, uintmax_t{1} << 40);
    // Calibration samples in float16 and in bfloat16 as ml_dtypes saves it: no model input is of
    // those types yet.
    const std::string f16 = (dir / "f16.npy").string(), bf16 = (dir / "bf16.npy").string();
    std::ofstream(f16, std::ios::binary) << io_test::raw_npy(
        "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 784), }", std::string(1568, '\0'));
    std::ofstream(bf16, std::ios::binary) << io_test::raw_npy(
        "{'descr': '<V2', 'fortran_order': False, 'shape': (1, 784), }", std::string(1568, '\0'));
    const std::string calib = m + "mlp.hlo --weights " + m + "mlp.safetensors --calibrate ";
    struct Case {
        std::string args, says;
        int code;
    } cases[] = {
        {(dir / "none.hlo").string(), "none.hlo: cannot read file", 2},
        {m + "mlp.hlo --weights " + junk, "junk: file is 4 bytes", 2},
        {m + "mlp.hlo --weights " + m + "mlp.safetensors --calibrate " + junk, "junk: not a .npy",
         2},
        {m + "mlp.hlo --weights " + m + "mlp.safetensors", "need calibration samples", 2},
        {m + "mlp.hlo --array 0", "--array: '0' is not an array size (1..256)", 2},
        {m + "mlp.hlo --precision fp16", "--precision: 'fp16' (int8 or bf16)", 2},
        {m + "mlp.hlo --bogus", "usage: unknown option '--bogus' (see tpuc --help)", 2},
        {fifo, "fifo:1:1: empty input", 2},
        {sparse, "1099511627776 bytes, more than the 1073741824 this input may have", 2},
        {"/dev/zero", "not a regular file, and more than the 67108864 bytes", 2},
        {"'" + (dir / "new\nline.hlo").string() + "'", "new\\nline.hlo: cannot read file", 2},
        {m + "mlp.hlo --weights /dev/zero", "/dev/zero: not a regular file", 2},
        {m + "mlp.hlo --weights " + fifo, "fifo: file is 0 bytes", 2},
        {m + "mlp.hlo --weights " + m + "mlp.safetensors --calibrate " + sparse,
         "1099511627776 bytes, more than the 4294967296", 2},
        {m + "mlp.hlo --weights " + m + "mlp.safetensors --calibrate /dev/zero",
         "/dev/zero: not a regular file", 2},
        {calib + f16,
         "f16.npy: dtype float16, expected a model input's: int8, uint8, int32, int64 or float32\n",
         2},
        {calib + m + "calib.npy --calibrate " + bf16,
         "bf16.npy: dtype void16 (as ml_dtypes saves bfloat16), expected a model input's: int8, "
         "uint8, int32, int64 or float32\n",
         2},
    };
    for (const Case &c : cases) {
        const std::string cmd = tpuc + c.args + " -o " + out + " 2> " + (dir / "err").string();
        const int st = std::system(cmd.c_str());
        EXPECT_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : -1, c.code) << c.args;
        const std::string err = slurp((dir / "err").string());
        EXPECT_EQ(err.rfind("tpuc: ", 0), 0u) << err;
        EXPECT_NE(err.find(c.says), std::string::npos) << err;
        EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
        EXPECT_FALSE(fs::exists(out)) << c.args;
    }
    // An unwritable output: exit 2, and nothing (not even the temporary file) left.
    const std::string cmd = tpuc + m + "mlp.hlo --weights " + m + "mlp.safetensors --calibrate " +
                            m + "calib.npy --quiet -o " + (dir / "no" / "o.tpub").string() +
                            " 2>/dev/null";
    const int st = std::system(cmd.c_str());
    EXPECT_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 2);
    // junk, err, fifo, sparse, f16.npy, bf16.npy
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 6);
}

// ------------------------------------------------------------------ MNIST --

TEST(Mnist, PlacementAndReport)
{
    const std::string dir = TPU_SOURCE_DIR "/models/mnist/";
    npy_array c;
    char err[1024];
    ASSERT_EQ(npy_load((dir + "calib.npy").c_str(), &c, err, sizeof err), 0) << err;
    int64_t dims[2] = {(int64_t)c.shape[0], (int64_t)c.shape[1]};
    hlo_array *calib = hlo_array_new(HLO_F32, 2, dims);
    memcpy(calib->data, c.data, c.count * 4);
    npy_free(&c);
    const std::string hlo = dir + "mlp.hlo", w = dir + "mlp.safetensors";
    tpuc_options o{};
    o.hlo_path = hlo.c_str();
    o.weights_path = w.c_str();
    o.array_n = small_n();
    o.calib = &calib;
    o.n_calib = 1;
    tpub_package p;
    hlo_error e;
    ASSERT_EQ(tpuc_compile(&o, &p, &e), 0) << e.msg;
    const std::string r = p.report;
    EXPECT_NE(r.find("(GEMMs: 2, segments: 1)"), std::string::npos) << r;
    EXPECT_NE(r.find("dot_general.2  16 x 784 x 256 + add.11 (bias) + max.3 (relu) -> s8"),
              std::string::npos)
        << r;
    EXPECT_NE(r.find("dot_general.3  16 x 256 x 10 + add.15 (bias) -> s32"), std::string::npos)
        << r;
    EXPECT_NE(r.find("exp.1 (exponential)"), std::string::npos) << r;
    EXPECT_NE(r.find("A = 'x.1' f32 -> u8, scale 0.00392157"), std::string::npos) << r;
    ASSERT_EQ(p.n_inputs, 1u);
    EXPECT_STREQ(p.inputs[0].name, "x.1");
    ASSERT_EQ(p.n_segments, 1u);
    EXPECT_EQ(p.segments[0].n_ops, 2u);
    tpub_free(&p);
    hlo_array_free(calib);
}

// The committed model, compiled as `make demo` does, on the first 320 test digits: every
// submission bit-exact against the golden model, accuracy at least 95 % and at most one point
// below JAX's float32 predictions on the same digits.
TEST(Mnist, EndToEnd)
{
    const std::string m = TPU_SOURCE_DIR "/models/mnist/";
    const fs::path dir = scratch("mnist");
    const std::string pkg = (dir / "mnist.tpub").string(), json = (dir / "run.json").string();
    const std::string tpuc = TPU_BINARY_DIR "/bin/tpuc";
    const std::string compile = tpuc + " " + m + "mlp.hlo --weights " + m + "mlp.safetensors" +
                                " --calibrate " + m + "calib.npy --quiet --array " +
                                std::to_string(demo_n()) + " -o " + pkg;
    ASSERT_EQ(std::system(compile.c_str()), 0) << compile;
    const std::string run = kRun + " run " + pkg + " --input " + m + "test_x_u8.npy" +
                            " --input-divide 255 --limit 320 --labels " + m + "test_y.npy" +
                            " --expect " + m + "jax_pred.npy --quiet --json " + json;
    ASSERT_EQ(std::system(run.c_str()), 0) << run;
    json_error_t je;
    json_t *r = json_load_file(json.c_str(), 0, &je);
    ASSERT_NE(r, nullptr) << je.text;
    const auto count = [&](const char *obj, const char *field) {
        return json_integer_value(json_object_get(json_object_get(r, obj), field));
    };
    const json_int_t subs = json_integer_value(json_object_get(r, "submissions"));
    EXPECT_EQ(subs, 40); // 20 batches of 16, two GEMMs each
    EXPECT_EQ(json_integer_value(json_object_get(r, "bit_exact_submissions")), subs);
    EXPECT_EQ(count("accuracy", "total"), 320);
    const double acc = (double)count("accuracy", "correct") / 320;
    const double ref = (double)count("reference_accuracy", "correct") / 320;
    EXPECT_GE(acc, 0.95);
    EXPECT_GE(acc, ref - 0.01);
    json_decref(r);
}

// The committed MLP and CNN with --precision bf16 and no samples: every operation on the device
// in bf16, a version 3 package; a --calibrate given is ignored, and said so.
TEST(Mnist, Bf16CompilesWithoutCalibration)
{
    const std::string m = TPU_SOURCE_DIR "/models/mnist/", c = TPU_SOURCE_DIR "/models/mnist_cnn/";
    const fs::path dir = scratch("mnist_bf16");
    const std::string tpuc = TPU_BINARY_DIR "/bin/tpuc ", pkg = (dir / "m.tpub").string();
    const std::string out = (dir / "out.txt").string();
    const struct {
        std::string args, says;
    } cases[] = {
        {m + "mlp.hlo --weights " + m + "mlp.safetensors", "(GEMMs: 2, segments: 1)"},
        {m + "mlp.hlo --weights " + m + "mlp.safetensors --calibrate " + m + "calib.npy",
         "the 1 calibration arrays are ignored"},
        {c + "cnn_torch_xla.hlo --weights " + c + "cnn_torch.safetensors",
         "bf16 on the device: input bf16, kernel bf16"},
    };
    for (const auto &k : cases) {
        const std::string cmd = tpuc + k.args + " --precision bf16 -o " + pkg + " > " + out;
        ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
        const std::string report = slurp(out);
        EXPECT_NE(report.find(k.says), std::string::npos) << report;
        EXPECT_EQ(report.find("stays on the host"), std::string::npos) << report;
        ASSERT_EQ(std::system((tpuc + "--dump " + pkg + " > " + out).c_str()), 0);
        EXPECT_EQ(slurp(out).rfind("tpub version 3,", 0), 0u) << slurp(out);
    }
}

// The MLP and the CNN in bf16 on the device, as the int8 ones above: every submission bit-exact
// against the golden model, the predictions within a digit or two of the frameworks' float32
// ones (the golden-model form of these packages is tests/runtime/test_golden_run.cpp's).
TEST(Mnist, Bf16EndToEndOnTheDevice)
{
    const struct {
        std::string model, weights, pred, limit;
    } nets[] = {{"mnist/mlp.hlo", "mnist/mlp.safetensors", "mnist/jax_pred.npy", "96"},
                {"mnist_cnn/cnn_torch_xla.hlo", "mnist_cnn/cnn_torch.safetensors",
                 "mnist_cnn/torch_pred.npy", "32"}};
    for (const auto &net : nets) {
        SCOPED_TRACE(net.model);
        const std::string m = TPU_SOURCE_DIR "/models/";
        const fs::path dir = scratch("mnist_bf16_device");
        const std::string pkg = (dir / "m.tpub").string(), json = (dir / "run.json").string();
        const std::string compile = std::string(TPU_BINARY_DIR "/bin/tpuc ") + m + net.model +
                                    " --weights " + m + net.weights +
                                    " --precision bf16 --quiet --array " +
                                    std::to_string(demo_n()) + " -o " + pkg;
        ASSERT_EQ(std::system(compile.c_str()), 0) << compile;
        const std::string data = m + net.model.substr(0, net.model.find('/') + 1);
        const std::string run = kRun + " run " + pkg + " --input " + data + "test_x_u8.npy" +
                                " --input-divide 255 --limit " + net.limit + " --labels " + data +
                                "test_y.npy --expect " + m + net.pred +
                                " --jobs 2 --quiet --json " + json;
        ASSERT_EQ(std::system(run.c_str()), 0) << run;
        json_error_t je;
        json_t *r = json_load_file(json.c_str(), 0, &je);
        ASSERT_NE(r, nullptr) << je.text;
        const auto count = [&](const char *obj, const char *field) {
            return json_integer_value(json_object_get(json_object_get(r, obj), field));
        };
        const json_int_t subs = json_integer_value(json_object_get(r, "submissions"));
        EXPECT_GT(subs, 0);
        EXPECT_EQ(json_integer_value(json_object_get(r, "bit_exact_submissions")), subs);
        EXPECT_GE(count("accuracy", "correct"), count("reference_accuracy", "correct") - 2);
        json_decref(r);
    }
}

// The committed PyTorch/XLA CNN, compiled as `make demo` does, on the first 160 test digits (two
// jobs): one segment whose convolutions run as CONV2Ds (the pooling fused into the second), every
// submission bit-exact against the golden model, accuracy at least 97.5 % (PyTorch's float32 gets
// 98.40 % of the 2,000) and at most one digit away from PyTorch's own predictions.
TEST(Mnist, CnnEndToEnd)
{
    const std::string m = TPU_SOURCE_DIR "/models/mnist_cnn/";
    const fs::path dir = scratch("mnist_cnn");
    const std::string pkg = (dir / "cnn.tpub").string(), json = (dir / "run.json").string();
    const std::string report = (dir / "tpuc.txt").string();
    const std::string compile = std::string(TPU_BINARY_DIR "/bin/tpuc ") + m +
                                "cnn_torch_xla.hlo --weights " + m + "cnn_torch.safetensors" +
                                " --calibrate " + m + "calib_nchw.npy --array " +
                                std::to_string(demo_n()) + " -o " + pkg + " > " + report;
    ASSERT_EQ(std::system(compile.c_str()), 0) << compile;
    std::ifstream rf(report);
    const std::string text((std::istreambuf_iterator<char>(rf)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("segments: 1)"), std::string::npos) << text;
    const int n = 160;
    const std::string run = kRun + " run " + pkg + " --input " + m + "test_x_u8.npy" +
                            " --input-divide 255 --limit " + std::to_string(n) + " --labels " + m +
                            "test_y.npy --expect " + m + "torch_pred.npy --jobs 2 --quiet --json " +
                            json;
    ASSERT_EQ(std::system(run.c_str()), 0) << run;
    json_error_t je;
    json_t *r = json_load_file(json.c_str(), 0, &je);
    ASSERT_NE(r, nullptr) << je.text;
    const auto count = [&](const char *obj, const char *field) {
        return json_integer_value(json_object_get(json_object_get(r, obj), field));
    };
    const json_int_t subs = json_integer_value(json_object_get(r, "submissions"));
    EXPECT_GT(subs, 0);
    EXPECT_EQ(json_integer_value(json_object_get(r, "bit_exact_submissions")), subs);
    size_t convs = 0;
    json_t *layer;
    size_t i;
    json_array_foreach(json_object_get(r, "layers"), i, layer) convs +=
        std::string(json_string_value(json_object_get(layer, "kind"))) == "conv2d";
    EXPECT_EQ(convs, 2u);
    EXPECT_EQ(count("accuracy", "total"), n);
    EXPECT_GE(count("accuracy", "correct"), 0.975 * n);
    EXPECT_GE(count("agreement", "correct"), n - 1);
    json_decref(r);
}

// A transformer block as PyTorch/XLA lowers it (tests/hlo/torch/gen.py: layer norms as
// batch-norm-training, attention with the score scale as a parameter, exact GELU, tanh),
// compiled and run on the device: all eight dots there (the two attention ones with a right-hand
// side computed at run time), every submission bit-exact against the golden model, and within
// 2 % RMS of PyTorch's float32 outputs (measured 0.47 %).
TEST(TorchXla, TransformerBlockEndToEnd)
{
    const std::string m = TPU_SOURCE_DIR "/tests/hlo/torch/";
    const fs::path dir = scratch("torch_block");
    const std::string pkg = (dir / "block.tpub").string(), json = (dir / "run.json").string();
    const std::string report = (dir / "tpuc.txt").string(), out = (dir / "y.npy").string();
    const std::string compile = std::string(TPU_BINARY_DIR "/bin/tpuc ") + m + "block.hlo" +
                                " --weights " + m + "block.safetensors --calibrate " + m +
                                "calib.npy --array " + std::to_string(demo_n()) + " -o " + pkg +
                                " > " + report;
    ASSERT_EQ(std::system(compile.c_str()), 0) << compile;
    std::ifstream rf(report);
    const std::string text((std::istreambuf_iterator<char>(rf)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("(GEMMs: 8, "), std::string::npos) << text;
    EXPECT_NE(text.find("batch-norm-training"), std::string::npos) << text;
    EXPECT_EQ(text.find("(dot)"), std::string::npos) << text; /* no dot left on the host */
    const std::string run = kRun + " run " + pkg + " --input " + m + "x.npy --output " + out +
                            " --quiet --json " + json;
    ASSERT_EQ(std::system(run.c_str()), 0) << run;
    json_error_t je;
    json_t *r = json_load_file(json.c_str(), 0, &je);
    ASSERT_NE(r, nullptr) << je.text;
    const json_int_t subs = json_integer_value(json_object_get(r, "submissions"));
    EXPECT_GT(subs, 0);
    EXPECT_EQ(json_integer_value(json_object_get(r, "bit_exact_submissions")), subs);
    json_decref(r);
    npy_array got{}, want{};
    char err[256];
    ASSERT_EQ(npy_load(out.c_str(), &got, err, sizeof err), 0) << err;
    ASSERT_EQ(npy_load((m + "want.npy").c_str(), &want, err, sizeof err), 0) << err;
    ASSERT_EQ(got.count, want.count);
    double se = 0, sw = 0;
    for (size_t i = 0; i < got.count; i++) {
        const double g = ((const float *)got.data)[i], w = ((const float *)want.data)[i];
        se += (g - w) * (g - w);
        sw += w * w;
    }
    EXPECT_LE(std::sqrt(se / sw), 0.02);
    npy_free(&got);
    npy_free(&want);
}

} // namespace

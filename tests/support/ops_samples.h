// ops_samples.h - the JAX samples of tests/hlo/ops (written by its gen.py): one function each, as
// HLO text (NAME.hlo), StableHLO (NAME.mlir, NAME.generic.mlir), its inputs (NAME.in<k>.npy) and
// JAX's output (NAME.out.npy), and their evaluation. Shared by the HLO and StableHLO tests of
// those ops and the compiler's tests of their host programs.
#ifndef TPU_TESTS_SUPPORT_OPS_SAMPLES_H
#define TPU_TESTS_SUPPORT_OPS_SAMPLES_H

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "hlo/hlo.h"
#include "io/npy.h"
#include "tests/support/hlo_test.h"

namespace ops_samples
{

inline const char *const kNames[] = {"concatenate", "slice",           "slice_stride",
                                     "flip",        "dynamic_slice",   "dynamic_update_slice",
                                     "embedding",   "take_along_axis", "sort",
                                     "argsort",     "fori_loop",       "cond",
                                     "switch",      "cumsum",          "scatter_add",
                                     "scatter_set"};

inline std::string path(const std::string &name, const std::string &ext)
{
    return hlo_test::kSrc + "tests/hlo/ops/" + name + ext;
}

// An .npy file (f32, s32, s8 or u8) as a new array (another dtype fails the test: its values
// are not copied).
inline hlo_array *load_npy(const std::string &file)
{
    npy_array n{};
    char err[256];
    EXPECT_EQ(npy_load(file.c_str(), &n, err, sizeof err), 0) << file << ": " << err;
    const hlo_type t = n.dtype == NPY_FLOAT32 ? HLO_F32
                       : n.dtype == NPY_INT32 ? HLO_S32
                       : n.dtype == NPY_INT8  ? HLO_S8
                       : n.dtype == NPY_UINT8 ? HLO_U8
                                              : HLO_PRED;
    EXPECT_NE(t, HLO_PRED) << file << ": dtype " << npy_dtype_name(n.dtype);
    int64_t dims[NPY_MAX_DIMS];
    for (int d = 0; d < n.ndim; d++)
        dims[d] = (int64_t)n.shape[d];
    hlo_array *a = hlo_array_new(t, n.ndim, dims);
    if (a && n.count && t != HLO_PRED)
        memcpy(a->data, n.data, n.count * npy_dtype_size(n.dtype));
    npy_free(&n);
    return a;
}

// The sample's inputs, in parameter order (new arrays).
inline std::vector<hlo_array *> inputs(const std::string &name)
{
    std::vector<hlo_array *> in;
    for (int k = 0;; k++) {
        const std::string file = path(name, ".in" + std::to_string(k) + ".npy");
        FILE *f = fopen(file.c_str(), "rb");
        if (!f)
            return in;
        fclose(f);
        in.push_back(load_npy(file));
    }
}

// Runs module text on the sample's inputs; its one output against JAX's (NaN equal to NaN).
inline void expect_jax_result(const std::string &name, const std::string &text, const char *what)
{
    hlo_test::Parsed p(text);
    ASSERT_NE(p.m, nullptr) << name << " " << what << ": " << p.err.msg;
    std::vector<hlo_array *> in = inputs(name);
    hlo_array *want = load_npy(path(name, ".out.npy"));
    hlo_array **outs = nullptr;
    int n = 0;
    hlo_error e{};
    ASSERT_EQ(hlo_eval(p.m, what, in.data(), (int)in.size(), &outs, &n, &e), 0)
        << name << " " << what << ": " << e.msg;
    ASSERT_EQ(n, 1);
    EXPECT_TRUE(hlo_shape_equal(&outs[0]->shape, &want->shape)) << name << " " << what;
    // NaN where JAX has NaN, otherwise within a rounding: XLA on the CPU fuses fori_loop's
    // c * 1.5 + i into one multiply-add, which the evaluator does not (hlo.h).
    const std::vector<double> got = hlo_test::values(outs[0]), exp = hlo_test::values(want);
    ASSERT_EQ(got.size(), exp.size());
    for (size_t i = 0; i < got.size(); i++) {
        if (std::isnan(exp[i]))
            EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i;
        else
            EXPECT_NEAR(got[i], exp[i], 1e-6 * std::fmax(1, std::fabs(exp[i])))
                << what << " at " << i;
    }
    hlo_arrays_free(outs, n);
    hlo_array_free(want);
    for (hlo_array *a : in)
        hlo_array_free(a);
}

// Module text checked and evaluated on the sample's inputs: its one output.
inline std::vector<double> eval_text(const std::string &name, const std::string &text,
                                     const char *what)
{
    hlo_test::Parsed p(text, what);
    EXPECT_NE(p.m, nullptr) << name << " " << what << ": " << p.err.msg;
    if (!p.m)
        return {};
    hlo_error e{};
    EXPECT_EQ(hlo_check(p.m, what, &e), 0) << name << " " << what << ": " << e.msg;
    std::vector<hlo_array *> in = inputs(name);
    hlo_array **outs = nullptr;
    int n = 0;
    std::vector<double> v;
    EXPECT_EQ(hlo_eval(p.m, what, in.data(), (int)in.size(), &outs, &n, &e), 0)
        << name << " " << what << ": " << e.msg;
    if (n == 1)
        v = hlo_test::values(outs[0]);
    hlo_arrays_free(outs, n);
    for (hlo_array *a : in)
        hlo_array_free(a);
    return v;
}

} // namespace ops_samples

#endif

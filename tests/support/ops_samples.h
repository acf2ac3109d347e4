// ops_samples.h - the JAX samples of tests/hlo/ops (written by its gen.py): one function each, as
// HLO text (NAME.hlo), StableHLO (NAME.mlir, NAME.generic.mlir), its inputs (NAME.in<k>.npy) and
// JAX's output (NAME.out.npy). Shared by the HLO and StableHLO tests of those ops.
#ifndef TPU_TESTS_SUPPORT_OPS_SAMPLES_H
#define TPU_TESTS_SUPPORT_OPS_SAMPLES_H

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/hlo.h"
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

// An .npy file (f32, s32, s8 or u8) as a new array.
inline hlo_array *load_npy(const std::string &file)
{
    npy_array n{};
    char err[256];
    EXPECT_EQ(npy_load(file.c_str(), &n, err, sizeof err), 0) << file << ": " << err;
    const hlo_type t = n.dtype == NPY_FLOAT32 ? HLO_F32
                       : n.dtype == NPY_INT32 ? HLO_S32
                       : n.dtype == NPY_INT8  ? HLO_S8
                                              : HLO_U8;
    int64_t dims[NPY_MAX_DIMS];
    for (int d = 0; d < n.ndim; d++)
        dims[d] = (int64_t)n.shape[d];
    hlo_array *a = hlo_array_new(t, n.ndim, dims);
    if (a && n.count)
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

} // namespace ops_samples

#endif

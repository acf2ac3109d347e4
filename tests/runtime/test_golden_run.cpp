// test_golden_run.cpp - packages tpuc compiles from CNNs (tests/support/cnn_hlo.h), run on the
// golden model through the firmware (tests/support/golden_run.h), against the reference
// evaluator on the same HLO: exact for integer models, within the int8 quantization error for
// float ones. Everything the compiler decides is checked here, the kernels' tile order, the
// layouts, the fused pooling and the int8 hand-offs included, without the cycle-accurate device
// (whose CONV2D the end-to-end tests of tests/tools and tests/runtime run).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "compiler/tpuc.h"
#include "tests/support/cnn_hlo.h"
#include "tests/support/golden_run.h"

namespace fs = std::filesystem;

namespace {

hlo_array *random_array(std::mt19937 &rng, hlo_type t, std::vector<int64_t> dims, double lo,
                        double hi)
{
    hlo_array *a = hlo_array_new(t, (int)dims.size(), dims.data());
    std::uniform_real_distribution<double> u(lo, hi);
    for (int64_t i = 0; i < a->shape.elements; i++) {
        const double v = u(rng);
        if (t == HLO_F32)
            ((float *)a->data)[i] = (float)v;
        else
            ((int8_t *)a->data)[i] = (int8_t)std::lround(v);
    }
    return a;
}

double value(const hlo_array *a, int64_t i)
{
    switch (a->shape.type) {
    case HLO_F32: return ((const float *)a->data)[i];
    case HLO_S8: return ((const int8_t *)a->data)[i];
    default: return ((const int32_t *)a->data)[i];
    }
}

struct Golden {
    std::string report;
    std::vector<std::vector<double>> got, want;
    uint64_t ops = 0;
};

// Compiles text for array size n (calibrated on 8 batches of random inputs in [lo, hi]), saves
// and reloads the package, and runs one more random batch on the golden model and on the
// reference evaluator.
Golden compile_and_run(const std::string &name, const std::string &text, uint32_t n, double lo,
                       double hi)
{
    Golden r;
    const fs::path dir = fs::path(TPU_BINARY_DIR) / "test_golden_run" / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string hlo = (dir / "m.hlo").string(), pkg = (dir / "m.tpub").string();
    std::ofstream(hlo) << text;
    hlo_error e;
    hlo_module *m = hlo_parse_file(hlo.c_str(), &e);
    EXPECT_NE(m, nullptr) << e.msg;
    if (!m)
        return r;
    const hlo_instr *x = nullptr;
    for (int i = 0; i < hlo_entry(m)->n_instrs; i++)
        if (hlo_entry(m)->instrs[i].opcode == HLO_OP_PARAMETER)
            x = &hlo_entry(m)->instrs[i];
    std::vector<int64_t> dims(x->shape.dims, x->shape.dims + x->shape.rank);
    const hlo_type type = x->shape.type;
    std::mt19937 rng(11);
    std::vector<int64_t> cdims = dims;
    cdims[0] *= 8;
    hlo_array *calib = random_array(rng, type, cdims, lo, hi);
    hlo_array *in = random_array(rng, type, dims, lo, hi);
    tpuc_options o{};
    o.hlo_path = hlo.c_str();
    o.array_n = n;
    o.calib = &calib;
    o.n_calib = 1;
    tpub_package p, q;
    char err[1024] = "";
    if (tpuc_compile(&o, &p, err, sizeof err)) {
        ADD_FAILURE() << name << ": " << err;
    } else {
        r.report = p.report;
        EXPECT_EQ(tpub_save(&p, pkg.c_str(), err, sizeof err), 0) << err;
        tpub_free(&p);
        EXPECT_EQ(tpub_load(pkg.c_str(), &q, err, sizeof err), 0) << err;
        golden_run::Runner run(q);
        std::vector<hlo_array *> outs = run.run({in});
        EXPECT_FALSE(outs.empty()) << name << ": " << run.error();
        r.ops = run.ops();
        hlo_array **ref = nullptr;
        int n_ref = 0;
        EXPECT_EQ(hlo_eval(m, "m.hlo", &in, 1, &ref, &n_ref, &e), 0) << e.msg;
        for (size_t k = 0; k < outs.size() && (int)k < n_ref; k++) {
            std::vector<double> g, w;
            EXPECT_EQ(outs[k]->shape.elements, ref[k]->shape.elements);
            for (int64_t i = 0; i < ref[k]->shape.elements; i++) {
                g.push_back(value(outs[k], i));
                w.push_back(value(ref[k], i));
            }
            r.got.push_back(g);
            r.want.push_back(w);
            hlo_array_free(outs[k]);
        }
        hlo_arrays_free(ref, n_ref);
        tpub_free(&q);
    }
    hlo_array_free(calib);
    hlo_array_free(in);
    hlo_module_free(m);
    return r;
}

// Within tol of the largest reference magnitude (0: exactly).
void expect_close(const Golden &r, double tol)
{
    ASSERT_FALSE(r.got.empty());
    for (size_t k = 0; k < r.got.size(); k++) {
        double mx = 1e-6;
        for (double v : r.want[k])
            mx = std::max(mx, std::fabs(v));
        for (size_t i = 0; i < r.got[k].size(); i++)
            ASSERT_NEAR(r.got[k][i], r.want[k][i], tol * mx) << "output " << k << " element " << i;
    }
}

class Nets : public ::testing::TestWithParam<uint32_t> {
};

TEST_P(Nets, MatchTheReference)
{
    const uint32_t n = GetParam();
    std::mt19937 rng(2026 + n);
    for (const cnn_hlo::Case &c : cnn_hlo::cases(n)) {
        SCOPED_TRACE(c.name);
        const std::string text = cnn_hlo::hlo(c.net, rng);
        const Golden r = compile_and_run(c.name + "_n" + std::to_string(n), text, n,
                                         c.net.integer ? -128 : -1, c.net.integer ? 127 : 1);
        EXPECT_NE(r.report.find("convolutions: "), std::string::npos) << r.report;
        EXPECT_GT(r.ops, 0u);
        expect_close(r, c.tol);
    }
}

INSTANTIATE_TEST_SUITE_P(Arrays, Nets, ::testing::Values(4u, 8u));

} // namespace

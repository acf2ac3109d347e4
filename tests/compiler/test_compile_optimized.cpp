// test_compile_optimized.cpp - tpuc on XLA's optimized dumps (tests/hlo/opt, gen.py): their dots
// and convolutions on the device as in the unoptimized modules, the bias and ReLU fused out of
// XLA's fusions, bitcasts written as transposes and reshapes in the host program.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "compiler/tpuc.h"
#include "tests/support/hlo_test.h"
#include "tests/support/weights_test.h"

namespace fs = std::filesystem;

namespace
{

using hlo_test::iota;
using hlo_test::make;
using hlo_test::Parsed;
using hlo_test::run1;

const std::string kOpt = hlo_test::kSrc + "tests/hlo/opt/";

class Dump : public ::testing::TestWithParam<const char *>
{
};

struct Compiled {
    bool ok = false;
    std::string err, report, host;
};

// Compiles path on array size 4 with random weights for every ENTRY parameter but the last
// (the input), calibrated on two batches of inputs in [0, 1].
Compiled compile(const std::string &path)
{
    Parsed p(hlo_test::slurp(path));
    EXPECT_NE(p.m, nullptr) << p.err.msg;
    Compiled r;
    if (!p.m)
        return r;
    const hlo_computation *c = hlo_entry(p.m);
    std::vector<std::pair<std::string, std::vector<int64_t>>> weights;
    const hlo_shape *x = nullptr;
    int n_params = 0;
    for (int i = 0; i < c->n_instrs; i++)
        n_params += c->instrs[i].opcode == HLO_OP_PARAMETER;
    for (int i = 0; i < c->n_instrs; i++) {
        const hlo_instr &in = c->instrs[i];
        if (in.opcode != HLO_OP_PARAMETER)
            continue;
        if (in.parameter_number == n_params - 1)
            x = &in.shape;
        else
            weights.push_back(
                {in.name, std::vector<int64_t>(in.shape.dims, in.shape.dims + in.shape.rank)});
    }
    char tmpl[] = "/tmp/test_compile_optimized.XXXXXX";
    EXPECT_NE(mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl, w = dir + "/w.safetensors";
    weights_test::save_weights(w, weights);
    std::vector<int64_t> dims(x->dims, x->dims + x->rank);
    dims[0] *= 2;
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<double> v((size_t)x->elements * 2);
    for (double &e : v)
        e = u(rng);
    hlo_array *calib = make(HLO_F32, dims, v);
    tpuc_options o = {};
    o.hlo_path = path.c_str();
    o.weights_path = w.c_str();
    o.array_n = 4;
    o.calib = &calib;
    o.n_calib = 1;
    tpub_package pkg;
    hlo_error err{};
    r.ok = tpuc_compile(&o, &pkg, &err) == 0;
    r.err = err.msg;
    if (r.ok) {
        r.report = pkg.report;
        r.host = pkg.host_hlo;
        tpub_free(&pkg);
    }
    hlo_array_free(calib);
    fs::remove_all(dir);
    return r;
}

TEST_P(Dump, CompilesWithItsDotsAndConvolutionsOnTheDevice)
{
    const std::string name = GetParam();
    Compiled plain = compile(kOpt + name + ".hlo"), opt = compile(kOpt + name + ".opt.hlo");
    ASSERT_TRUE(plain.ok) << plain.err;
    ASSERT_TRUE(opt.ok) << opt.err;
    // The same dots and convolutions run on the device as in the unoptimized module: all of
    // them, attention's two of activations included.
    const std::string ops = name == "mha"               ? "(GEMMs: 6, segments: "
                            : name.rfind("cnn", 0) == 0 ? "(GEMMs: 2, convolutions: 2, "
                                                        : "(GEMMs: 2, segments: ";
    EXPECT_NE(plain.report.find(ops), std::string::npos) << plain.report;
    EXPECT_NE(opt.report.find(ops), std::string::npos) << opt.report;
    EXPECT_EQ(opt.report.find("stays on the host:"), std::string::npos) << opt.report;
    EXPECT_EQ(opt.host.find(" bitcast("), std::string::npos) << opt.host; /* as reshapes */
}

INSTANTIATE_TEST_SUITE_P(Opt, Dump,
                         ::testing::Values("mlp", "mlp_t", "mlp_argmax", "mha", "cnn_nhwc",
                                           "cnn_nchw"));

TEST(CompileOptimized, FirstDotAndBiasReluFuseAsUnoptimized)
{
    // The MNIST MLP: x . w1 + b1, ReLU in one GEMM command (the bias and ReLU come from a kLoop
    // fusion, the dot from a kCustom one).
    Compiled r = compile(kOpt + "mlp.opt.hlo");
    ASSERT_TRUE(r.ok) << r.err;
    EXPECT_NE(r.report.find("16 x 784 x 256 + add.6 (bias) + max.6 (relu) -> s8, stays on the "
                            "device"),
              std::string::npos)
        << r.report;
}

TEST(CompileOptimized, ABitcastThatTransposesIsTransposedOnTheHost)
{
    // b is x's memory read column-major, x transposed: the host program, which has no layouts,
    // spells it so; the dot after it still runs on the device.
    const std::string dir = fs::temp_directory_path() / "test_compile_optimized_bitcast.hlo";
    std::ofstream(dir) << "HloModule m\n\nENTRY %main (x: f32[4,6]) -> f32[6,4] {\n"
                          "  %x = f32[4,6]{1,0} parameter(0)\n"
                          "  %b = f32[6,4]{0,1} bitcast(%x)\n"
                          "  %w = f32[4,4]{1,0} constant({{1,0,0,0},{0,1,0,0},{0,0,1,0},"
                          "{0,0,0,1}})\n"
                          "  ROOT %d = f32[6,4]{1,0} dot(%b, %w), lhs_contracting_dims={1}, "
                          "rhs_contracting_dims={0}\n}\n";
    hlo_array *calib = make(HLO_F32, {8, 6}, std::vector<double>(48, 0.5));
    tpuc_options o = {};
    o.hlo_path = dir.c_str();
    o.array_n = 4;
    o.calib = &calib;
    o.n_calib = 1;
    tpub_package pkg;
    hlo_error err{};
    ASSERT_EQ(tpuc_compile(&o, &pkg, &err), 0) << err.msg;
    const std::string host = pkg.host_hlo, report = pkg.report;
    tpub_free(&pkg);
    hlo_array_free(calib);
    fs::remove(dir);
    EXPECT_NE(report.find("(GEMMs: 1, segments: 1)"), std::string::npos) << report;
    EXPECT_NE(host.find("  b = f32[6,4] transpose(x), dimensions={1,0}\n"), std::string::npos)
        << host;
}

TEST(CompileOptimized, HostProgramBitcastsKeepTheirValue)
{
    // Both layouts permuted, dims regrouped: transpose, reshape, transpose in the host program,
    // which evaluates to the original module's value.
    const std::string text = "HloModule m\n\nENTRY %main {\n"
                             "  %x = f32[2,3,4]{0,2,1} parameter(0)\n"
                             "  ROOT %b = f32[4,6]{0,1} bitcast(%x)\n}\n";
    const std::string path = fs::temp_directory_path() / "test_compile_optimized_host.hlo";
    std::ofstream(path) << text;
    tpuc_options o = {};
    o.hlo_path = path.c_str();
    o.array_n = 4;
    tpub_package pkg;
    hlo_error err{};
    ASSERT_EQ(tpuc_compile(&o, &pkg, &err), 0) << err.msg;
    const std::string host = pkg.host_hlo;
    tpub_free(&pkg);
    fs::remove(path);
    EXPECT_NE(host.find("  b.phys_in = f32[3,4,2] transpose(x), dimensions={1,2,0}\n"
                        "  b.phys_out = f32[6,4] reshape(b.phys_in)\n"
                        "  b = f32[4,6] transpose(b.phys_out), dimensions={1,0}\n"),
              std::string::npos)
        << host;
    EXPECT_EQ(run1(host, {make(HLO_F32, {2, 3, 4}, iota(24))}),
              run1(text, {make(HLO_F32, {2, 3, 4}, iota(24))}));
}

} // namespace

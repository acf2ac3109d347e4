// test_compile_host.cpp - tpuc's host programs: the JAX samples of tests/hlo/ops (HLO, and
// StableHLO in the pretty and the generic syntax), which tpuc keeps on the host, evaluate to
// JAX's results and as their HLO; control flow over constants folds at compile time; a loop with
// a dot whose trip count depends on data, or over the unroll budget, stays whole, an unrolled one
// shares one weight image; empty tuple operands are built again;
// all-reduces stay on the host under the model's device count.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "compiler/tpuc.h"
#include "tests/support/hlo_test.h"
#include "tests/support/ops_samples.h"

namespace
{

using hlo_test::expect_same;
using hlo_test::kCountLoop;
using hlo_test::make;
using hlo_test::run1;
using hlo_test::slurp;
using ops_samples::eval_text;

// tpuc's host program for the file at path (the test fails and returns "" when it does not
// compile).
std::string host_program(const std::string &path, uint8_t precision = TPUC_INT8)
{
    tpuc_options o = {};
    o.hlo_path = path.c_str();
    o.array_n = 4;
    o.precision = precision;
    tpub_package pkg;
    hlo_error err{};
    if (tpuc_compile(&o, &pkg, &err)) {
        ADD_FAILURE() << path << ": " << err.msg;
        return "";
    }
    std::string host = pkg.host_hlo;
    tpub_free(&pkg);
    return host;
}

// tpuc's host program for module text.
std::string compile_host(const std::string &text)
{
    char dir[] = "/tmp/test_compile_host.XXXXXX";
    EXPECT_NE(mkdtemp(dir), nullptr);
    const std::string path = std::string(dir) + "/m.hlo";
    FILE *f = fopen(path.c_str(), "w");
    EXPECT_NE(f, nullptr);
    if (f) {
        fputs(text.c_str(), f);
        fclose(f);
    }
    const std::string host = host_program(path);
    remove(path.c_str());
    rmdir(dir);
    return host;
}

TEST(CompileHost, JaxSamplesEvaluateToJaxResults)
{
    for (const char *name : ops_samples::kNames) {
        SCOPED_TRACE(name);
        ops_samples::expect_jax_result(name, host_program(ops_samples::path(name, ".hlo")),
                                       "host program");
    }
}

TEST(CompileHost, StableHloSamplesEvaluateAsTheirHlo)
{
    for (const char *name : ops_samples::kNames) {
        SCOPED_TRACE(name);
        const std::vector<double> want =
            eval_text(name, slurp(ops_samples::path(name, ".hlo")), "hlo");
        for (const char *ext : {".mlir", ".generic.mlir"}) {
            SCOPED_TRACE(ext);
            expect_same(eval_text(name, host_program(ops_samples::path(name, ext)), "host program"),
                        want);
        }
    }
}

TEST(CompileHost, ControlFlowOverConstantsFoldsAtCompileTime)
{
    // The loop's state is all constants: tpuc evaluates it and the host program only adds x to
    // the folded result.
    const std::string host = compile_host("HloModule m\n" + kCountLoop +
                                          "ENTRY e {\n"
                                          "  x = f32[2] parameter(0)\n"
                                          "  z = s32[] constant(0)\n"
                                          "  c = f32[2] constant({1, 2})\n"
                                          "  s = (s32[], f32[2]) tuple(z, c)\n"
                                          "  w = (s32[], f32[2]) while(s), condition=cond, "
                                          "body=body\n"
                                          "  y = f32[2] get-tuple-element(w), index=1\n"
                                          "  ROOT r = f32[2] add(x, y)\n"
                                          "}\n");
    EXPECT_EQ(host.find("while("), std::string::npos) << host;
    expect_same(run1(host, {make(HLO_F32, {2}, {1, 1})}), {9, 17});
}

TEST(CompileHost, LoopsWithDotsUnrollOnlyWhenTheirTripCountIsKnown)
{
    // x doubles by a dot until its first element reaches 100: how often depends on x, so the
    // while stays whole in the host program, its dot on the host.
    const std::string host = compile_host(
        "HloModule m\n"
        "cond {\n"
        "  s = (f32[2,2]) parameter(0)\n"
        "  x = f32[2,2] get-tuple-element(s), index=0\n"
        "  x00 = f32[1,1] slice(x), slice={[0:1], [0:1]}\n"
        "  x0 = f32[] reshape(x00)\n"
        "  lim = f32[] constant(100)\n"
        "  ROOT lt = pred[] compare(x0, lim), direction=LT\n"
        "}\n"
        "body {\n"
        "  s = (f32[2,2]) parameter(0)\n"
        "  x = f32[2,2] get-tuple-element(s), index=0\n"
        "  w = f32[2,2] constant({{2, 0}, {0, 2}})\n"
        "  d = f32[2,2] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
        "  ROOT t = (f32[2,2]) tuple(d)\n"
        "}\n"
        "ENTRY e {\n"
        "  x = f32[2,2] parameter(0)\n"
        "  s = (f32[2,2]) tuple(x)\n"
        "  w = (f32[2,2]) while(s), condition=cond, body=body\n"
        "  ROOT y = f32[2,2] get-tuple-element(w), index=0\n"
        "}\n");
    EXPECT_NE(host.find("while("), std::string::npos) << host;
    EXPECT_EQ(host.find("tpu.segment"), std::string::npos) << host;
    expect_same(run1(host, {make(HLO_F32, {2, 2}, {1, 2, 3, 4})}), {128, 256, 384, 512});
}

// Compiles module text in bf16 for the 4 x 4 array with unroll_bytes (0: the default) into
// *pkg; false (the test failed) when it does not compile.
bool compile_text(const std::string &text, uint64_t unroll_bytes, tpub_package *pkg)
{
    tpuc_options o = {};
    o.hlo_path = "scan.hlo";
    o.hlo_text = text.c_str();
    o.hlo_len = text.size();
    o.array_n = 4;
    o.precision = TPUC_BF16;
    o.unroll_bytes = unroll_bytes;
    hlo_error err{};
    const bool ok = tpuc_compile(&o, pkg, &err) == 0;
    EXPECT_TRUE(ok) << err.msg;
    return ok;
}

TEST(CompileHost, UnrolledLoopsShareOneWeightImage)
{
    // The body's constant weight is a node of its own in each trip, the same bytes in tile
    // order: one image in the constant image whatever the trip count, each trip's GEMM named
    // after the body's dot (the runtime's report sums them as one layer).
    tpub_package one, many;
    ASSERT_TRUE(compile_text(hlo_test::scan_hlo(1, 12, 4), 0, &one));
    ASSERT_TRUE(compile_text(hlo_test::scan_hlo(16, 12, 4), 0, &many));
    EXPECT_EQ(one.const_bytes, 320u); // 3 x 3 tiles of 4 x 4 bf16: 288 bytes, aligned to 64
    EXPECT_EQ(many.const_bytes, one.const_bytes);
    ASSERT_EQ(many.n_segments, 16u);
    for (uint32_t s = 0; s < many.n_segments; s++) {
        ASSERT_EQ(many.segments[s].n_ops, 1u);
        EXPECT_STREQ(many.segments[s].ops[0].gemm.name, "d");
        EXPECT_EQ(many.segments[s].ops[0].gemm.b_off, 0u);
    }
    EXPECT_NE(std::string(many.report).find("gemm 1  d_"), std::string::npos) << many.report;
    EXPECT_NE(std::string(many.report).find("\n      weights: gemm 0's image, the same bytes\n"),
              std::string::npos)
        << many.report;
    tpub_free(&one);
    tpub_free(&many);
}

TEST(CompileHost, LoopsOverTheUnrollBudgetStayWhole)
{
    // Each trip computes lt (pred, 1 byte), i1 (s32, 4 bytes), d and th (f32[4,12], 192 bytes
    // each); the constants n, one and c do not count.
    const uint64_t trips = 5, bytes = trips * (1 + 4 + 2 * 4 * 12 * 4);
    tpub_package at, over;
    ASSERT_TRUE(compile_text(hlo_test::scan_hlo((int)trips, 12, 4), bytes, &at));
    ASSERT_TRUE(compile_text(hlo_test::scan_hlo((int)trips, 12, 4), bytes - 1, &over));
    EXPECT_EQ(at.n_segments, trips);
    EXPECT_EQ(std::string(at.host_hlo).find("while("), std::string::npos) << at.host_hlo;
    EXPECT_EQ(over.n_segments, 0u);
    EXPECT_NE(std::string(over.host_hlo).find("while("), std::string::npos) << over.host_hlo;
    EXPECT_NE(std::string(over.report)
                  .find("w_1 stays on the host: unrolled, its trips would compute more bytes "
                        "than tpuc_options.unroll_bytes (docs/compiler.md)"),
              std::string::npos)
        << over.report;
    tpub_free(&at);
    tpub_free(&over);
}

TEST(CompileHost, EmptyTupleOperandsAreRebuilt)
{
    // A branch taking an empty tuple: the host program builds it again with tuple().
    const std::string host = compile_host("HloModule m\n"
                                          "t {\n  s = () parameter(0)\n"
                                          "  ROOT x = f32[2] constant({1, 2})\n}\n"
                                          "f {\n  s = f32[2] parameter(0)\n"
                                          "  ROOT x = f32[2] negate(s)\n}\n"
                                          "ENTRY e {\n  x = f32[2] parameter(0)\n"
                                          "  i = s32[] parameter(1)\n  zero = s32[] constant(0)\n"
                                          "  p = pred[] compare(i, zero), direction=GT\n"
                                          "  z = () tuple()\n"
                                          "  ROOT r = f32[2] conditional(p, z, x), "
                                          "true_computation=t, false_computation=f\n}\n");
    EXPECT_NE(host.find("tuple()"), std::string::npos) << host;
    expect_same(run1(host, {make(HLO_F32, {2}, {3, 4}), make(HLO_S32, {}, {1})}), {1, 2});
    expect_same(run1(host, {make(HLO_F32, {2}, {3, 4}), make(HLO_S32, {}, {0})}), {-3, -4});
}

// The model's input_output_alias in the host program's terms: its outputs are one flat tuple, so
// a nested output's path becomes its leaf's index.
TEST(CompileHost, AliasesFollowTheFlattenedOutputs)
{
    const std::string host = compile_host(
        "HloModule m, input_output_alias={ {1,1}: (2, {}, must-alias), {1,0}: (1, {}) }\n"
        "ENTRY e {\n  x = f32[2,3] parameter(0)\n  w = f32[4,3] parameter(1)\n"
        "  v = f32[4,3] parameter(2)\n  d = f32[2,3] negate(x)\n"
        "  w2 = f32[4,3] subtract(w, v)\n  v2 = f32[4,3] multiply(v, v)\n"
        "  s = (f32[4,3], f32[4,3]) tuple(w2, v2)\n"
        "  ROOT r = (f32[2,3], (f32[4,3], f32[4,3])) tuple(d, s)\n}\n");
    EXPECT_EQ(host.rfind("HloModule m_host, input_output_alias={ {2}: (2, {}, must-alias), "
                         "{1}: (1, {}, may-alias) }\n",
                         0),
              0u)
        << host;
}

TEST(CompileHost, AllReducesStayOnTheHostWithTheDeviceCount)
{
    // Even over constants: the other devices' operands are not known at compile time.
    const std::string host =
        compile_host("HloModule m, replica_count=2, num_partitions=4\n"
                     "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                     "  ROOT s = f32[] add(x, y)\n}\n"
                     "ENTRY e {\n  x = f32[2,3] parameter(0)\n  c = f32[3] constant({1, 2, 3})\n"
                     "  r = (f32[2,3], f32[3]) all-reduce(x, c), channel_id=1, replica_groups={}, "
                     "to_apply=add\n  ROOT g = f32[3] get-tuple-element(r), index=1\n}\n");
    EXPECT_EQ(host.rfind("HloModule m_host, replica_count=2, num_partitions=4\n", 0), 0u) << host;
    EXPECT_NE(host.find("all-reduce(x, c), to_apply=add, channel_id=1"), std::string::npos) << host;

    // JAX's pmap SGD step as XLA compiles it for 8 CPU devices (tests/hlo/opt/pmap_sgd.py).
    const std::string pmap =
        host_program(hlo_test::kSrc + "tests/hlo/opt/pmap_sgd.opt.hlo", TPUC_BF16);
    EXPECT_NE(pmap.find("num_partitions=8\n"), std::string::npos) << pmap;
    EXPECT_NE(pmap.find("replica_groups={{0,1,2,3,4,5,6,7}}, use_global_device_ids=true"),
              std::string::npos)
        << pmap;
}

} // namespace

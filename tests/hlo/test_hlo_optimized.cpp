// test_hlo_optimized.cpp - XLA's optimized dumps (jax.jit(f).lower(x).compile().as_text(),
// --xla_dump_to's *after_optimizations.txt): layouts kept by the parser, bitcast evaluated
// under them, fusion evaluated and checked as a call, the dumps of tests/hlo/opt (gen.py)
// evaluating to their unoptimized HLO's values. tpuc on them:
// tests/compiler/test_compile_optimized.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "hlo/hlo.h"
#include "tests/support/hlo_test.h"

namespace
{

using hlo_test::entry;
using hlo_test::iota;
using hlo_test::make;
using hlo_test::Parsed;
using hlo_test::run;
using hlo_test::run1;

const std::string kOpt = hlo_test::kSrc + "tests/hlo/opt/";

std::string check_error(const std::string &text)
{
    Parsed p(text);
    EXPECT_NE(p.m, nullptr) << p.err.msg;
    hlo_error err{};
    return p.m && hlo_check(p.m, "t.hlo", &err) ? err.msg : "";
}

// --------------------------------------------------------------- layouts --

TEST(Layout, KeptByTheParser)
{
    Parsed p(entry("  a = f32[2,3]{0,1} parameter(0)\n"
                   "  b = f32[2,3] parameter(1)\n"
                   "  c = f32[2,3]{1,0:T(8,128)S(1)} add(a, b)\n"
                   "  d = f32[] constant(1)\n"
                   "  e = f32[]{} constant(2)\n"
                   "  ROOT t = (f32[2,3]{0,1}, f32[]) tuple(c, d)\n"));
    ASSERT_NE(p.m, nullptr) << p.err.msg;
    const hlo_instr &a = p.instr("main", "a");
    EXPECT_TRUE(a.shape.has_layout);
    EXPECT_EQ(a.shape.minor_to_major[0], 0);
    EXPECT_EQ(a.shape.minor_to_major[1], 1);
    EXPECT_FALSE(p.instr("main", "b").shape.has_layout); /* row-major */
    const hlo_instr &c = p.instr("main", "c");
    EXPECT_TRUE(c.shape.has_layout);
    EXPECT_EQ(c.shape.minor_to_major[0], 1);
    EXPECT_FALSE(p.instr("main", "e").shape.has_layout);
    EXPECT_TRUE(p.instr("main", "t").shape.tuple[0].has_layout);
    // Layouts do not make shapes differ.
    EXPECT_TRUE(hlo_shape_equal(&a.shape, &p.instr("main", "b").shape));
    int order[2];
    hlo_layout_order(&a.shape, order);
    EXPECT_EQ(order[0], 1); /* slowest first */
    EXPECT_EQ(order[1], 0);
    EXPECT_FALSE(hlo_layout_is_row_major(&a.shape));
    EXPECT_TRUE(hlo_layout_is_row_major(&c.shape));
}

TEST(Layout, BadOnesAreLocatedErrors)
{
    const char *bad[][2] = {
        {"  ROOT a = f32[2,3]{2,0} parameter(0)\n", "layout dimension 2 is not one of the shape's"},
        {"  ROOT a = f32[2,3]{1,1} parameter(0)\n", "layout dimension 1 is listed twice"},
        {"  ROOT a = f32[2,3]{1} parameter(0)\n", "layout lists 1 of the shape's 2 dimensions"},
        {"  ROOT a = f32[2,3]{1,0:T(8,128} parameter(0)\n", "expected ')'"},
    };
    for (const auto &b : bad) {
        const std::string text = entry(b[0]);
        hlo_error err{};
        hlo_module *m = hlo_parse(text.data(), text.size(), "t.hlo", &err);
        EXPECT_EQ(m, nullptr);
        hlo_module_free(m);
        EXPECT_NE(std::string(err.msg).find(b[1]), std::string::npos) << err.msg;
        EXPECT_EQ(std::string(err.msg).rfind("t.hlo:3:", 0), 0u) << err.msg;
    }
}

// --------------------------------------------------------------- bitcast --

// bitcast of parameter x (of shape from, values 0, 1, ...) to shape to.
std::vector<double> bitcast(const std::string &from, const std::string &to,
                            std::vector<int64_t> dims)
{
    int64_t n = 1;
    for (int64_t d : dims)
        n *= d;
    return run1(entry("  x = " + from + " parameter(0)\n  ROOT b = " + to + " bitcast(x)\n"),
                {make(HLO_F32, dims, iota((int)n))});
}

TEST(Bitcast, DefaultLayoutsMakeAReshape)
{
    EXPECT_EQ(bitcast("f32[2,3]", "f32[3,2]", {2, 3}), iota(6));
    EXPECT_EQ(bitcast("f32[2,3]{1,0}", "f32[6]{0}", {2, 3}), iota(6));
    // NCHW with one channel to NHWC under {2,1,0,3}: the same memory order (the unit dim moves
    // nothing), as XLA writes the input of an NCHW convolution.
    EXPECT_EQ(bitcast("f32[2,1,2,3]{3,2,1,0}", "f32[2,2,3,1]{2,1,0,3}", {2, 1, 2, 3}), iota(12));
}

TEST(Bitcast, LayoutsTranspose)
{
    // x = [[0,1,2],[3,4,5]]; a column-major [3,2] result holds x's memory in column order:
    // r[i][j] at offset j*3 + i = x[j][i].
    EXPECT_EQ(bitcast("f32[2,3]{1,0}", "f32[3,2]{0,1}", {2, 3}),
              (std::vector<double>{0, 3, 1, 4, 2, 5}));
    // A column-major operand read as a vector: x00 x10 x01 x11 x02 x12.
    EXPECT_EQ(bitcast("f32[2,3]{0,1}", "f32[6]", {2, 3}), (std::vector<double>{0, 3, 1, 4, 2, 5}));
    // The same layout on both sides of equal dims: the identity.
    EXPECT_EQ(bitcast("f32[2,3]{0,1}", "f32[2,3]{0,1}", {2, 3}), iota(6));
    // Rank 3, operand {0,2,1} (dim 1 slowest, then 2, then 0): element (i,j,l) of [2,3,4] is
    // at offset j*8 + l*2 + i.
    std::vector<double> want(24);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int l = 0; l < 4; l++)
                want[(size_t)(j * 8 + l * 2 + i)] = i * 12 + j * 4 + l;
    EXPECT_EQ(bitcast("f32[2,3,4]{0,2,1}", "f32[24]{0}", {2, 3, 4}), want);
    // ... and back: the round trip is the identity.
    EXPECT_EQ(run1(entry("  x = f32[2,3,4] parameter(0)\n"
                         "  b = f32[24]{0} bitcast(x)\n"
                         "  ROOT c = f32[2,3,4]{0,2,1} bitcast(b)\n"),
                   {make(HLO_F32, {2, 3, 4}, want)}),
              iota(24));
}

TEST(Bitcast, Checked)
{
    EXPECT_NE(check_error(entry("  x = f32[2,3] parameter(0)\n  ROOT b = f32[5] bitcast(x)\n"))
                  .find("has 6 elements but the result f32[5] has 5"),
              std::string::npos);
    EXPECT_NE(check_error(entry("  x = f32[2,3] parameter(0)\n  ROOT b = s32[6] bitcast(x)\n"))
                  .find("t.hlo:4:8: bitcast: operand element type f32 differs"),
              std::string::npos);
}

// ---------------------------------------------------------------- fusion --

const std::string kFused =
    "HloModule m, is_scheduled=true, entry_computation_layout={(f32[2,3]{1,0})->f32[3,2]{1,0}}\n"
    "\n"
    "%fused_computation (param_0: f32[2,3], param_1.2: f32[]) -> f32[3,2] {\n"
    "  %param_0 = f32[2,3]{1,0} parameter(0)\n"
    "  %param_1.2 = f32[] parameter(1)\n"
    "  %b = f32[2,3]{1,0} broadcast(%param_1.2), dimensions={}\n"
    "  %m = f32[2,3]{1,0} multiply(%param_0, %b), metadata={op_name=\"jit(f)/mul\" "
    "stack_frame_id=2}\n"
    "  %t = f32[3,2]{0,1} transpose(%m), dimensions={1,0}\n"
    "  ROOT %copy = f32[3,2]{1,0} copy(%t)\n"
    "}\n"
    "\n"
    "ENTRY %main (x: f32[2,3]) -> f32[3,2] {\n"
    "  %x = f32[2,3]{1,0} parameter(0), metadata={op_name=\"x\"}\n"
    "  %c = f32[] constant(2)\n"
    "  ROOT %f = f32[3,2]{1,0} fusion(%x, %c), kind=kLoop, calls=%fused_computation, "
    "metadata={op_name=\"jit(f)/mul\" stack_frame_id=2}, "
    "backend_config={\"outer_dimension_partitions\":[],\"fusion_config\":{\"kind\":\"__ynn\"}}\n"
    "}\n";

TEST(Fusion, EvaluatesItsComputation)
{
    EXPECT_EQ(run1(kFused, {make(HLO_F32, {2, 3}, iota(6))}),
              (std::vector<double>{0, 6, 2, 8, 4, 10}));
}

TEST(Fusion, CheckedAsACall)
{
    auto fused = [](const std::string &from, const std::string &to) {
        std::string t = kFused;
        t.replace(t.find(from), from.size(), to);
        return check_error(t);
    };
    EXPECT_EQ(check_error(kFused), "");
    EXPECT_NE(fused("fusion(%x, %c)", "fusion(%x)").find("fusion: 1 operands but computation"),
              std::string::npos);
    EXPECT_NE(fused("calls=", "to_apply=").find("fusion: to_apply on a fusion"), std::string::npos);
    EXPECT_NE(fused("ROOT %f = f32[3,2]", "ROOT %f = f32[2,3]").find("result f32[2,3] differs"),
              std::string::npos);
    EXPECT_NE(fused(", calls=%fused_computation", "").find("fusion: missing calls"),
              std::string::npos);
}

// ------------------------------------------------- optimized = unoptimized --

// Random values in [lo, hi] for every ENTRY parameter of m, in parameter order.
std::vector<hlo_array *> random_params(const hlo_module *m, std::mt19937 &rng, double lo = -1,
                                       double hi = 1)
{
    const hlo_computation *c = hlo_entry(m);
    std::vector<hlo_array *> ps;
    std::uniform_real_distribution<double> u(lo, hi);
    for (int k = 0;; k++) {
        int i = 0;
        while (i < c->n_instrs &&
               !(c->instrs[i].opcode == HLO_OP_PARAMETER && c->instrs[i].parameter_number == k))
            i++;
        if (i == c->n_instrs)
            return ps;
        const hlo_shape &s = c->instrs[i].shape;
        std::vector<double> v((size_t)s.elements);
        for (double &x : v)
            x = u(rng);
        ps.push_back(make(s.type, std::vector<int64_t>(s.dims, s.dims + s.rank), v));
    }
}

std::vector<hlo_array *> copies(const std::vector<hlo_array *> &ps)
{
    std::vector<hlo_array *> c;
    for (const hlo_array *a : ps)
        c.push_back(make(a->shape.type, hlo_test::dims_of(a), hlo_test::values(a)));
    return c;
}

class Dump : public ::testing::TestWithParam<const char *>
{
};

TEST_P(Dump, EvaluatesAsTheUnoptimizedModule)
{
    const std::string name = GetParam();
    const std::string plain = hlo_test::slurp(kOpt + name + ".hlo");
    const std::string opt = hlo_test::slurp(kOpt + name + ".opt.hlo");
    ASSERT_NE(opt.find("fusion("), std::string::npos); /* really XLA's optimized output */
    Parsed p(plain);
    ASSERT_NE(p.m, nullptr) << p.err.msg;
    for (int seed = 0; seed < 2; seed++) {
        std::mt19937 rng((unsigned)seed);
        std::vector<hlo_array *> ps = random_params(p.m, rng);
        hlo_test::Result want = run(plain, copies(ps)), got = run(opt, ps);
        ASSERT_EQ(want.err, "");
        ASSERT_EQ(got.err, "");
        ASSERT_EQ(got.out.size(), want.out.size());
        for (size_t o = 0; o < want.out.size(); o++) {
            EXPECT_EQ(got.dims[o], want.dims[o]);
            ASSERT_EQ(got.out[o].size(), want.out[o].size());
            // XLA reassociates sums (dots, reductions) and folds divisions into multiplications.
            for (size_t i = 0; i < want.out[o].size(); i++)
                EXPECT_NEAR(got.out[o][i], want.out[o][i], 1e-4 * (1 + std::fabs(want.out[o][i])))
                    << name << " output " << o << " element " << i;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Opt, Dump,
                         ::testing::Values("mlp", "mlp_t", "mlp_argmax", "mha", "cnn_nhwc",
                                           "cnn_nchw"));

} // namespace

// test_stablehlo_ops.cpp - StableHLO's data-movement and control-flow ops (gather, scatter,
// dynamic_slice, dynamic_update_slice, sort, compare types, reverse, while, case, if): JAX's
// samples of tests/hlo/ops (gen.py) in the pretty and the generic syntax evaluate bit for bit as
// their HLO and to JAX's results, with the same hlo_instr attributes; case and if branches take
// the values they use as operands; located errors for malformed attributes and regions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "hlo/hlo.h"
#include "tests/support/hlo_test.h"
#include "tests/support/ops_samples.h"

namespace
{

using hlo_test::expect_same;
using hlo_test::make;
using hlo_test::Parsed;
using hlo_test::run1;
using hlo_test::slurp;
using ops_samples::eval_text;

TEST(StableHloOps, JaxSamplesEvaluateAsTheirHlo)
{
    for (const char *name : ops_samples::kNames) {
        SCOPED_TRACE(name);
        const std::vector<double> want =
            eval_text(name, slurp(ops_samples::path(name, ".hlo")), "hlo");
        hlo_array *jax = ops_samples::load_npy(ops_samples::path(name, ".out.npy"));
        const std::vector<double> jv = hlo_test::values(jax);
        hlo_array_free(jax);
        // XLA on the CPU fuses fori_loop's c * 1.5 + i into a multiply-add (hlo.h): a rounding.
        ASSERT_EQ(want.size(), jv.size());
        for (size_t i = 0; i < jv.size(); i++)
            if (std::isnan(jv[i]))
                EXPECT_TRUE(std::isnan(want[i]));
            else
                EXPECT_NEAR(want[i], jv[i], 1e-6 * std::fmax(1, std::fabs(jv[i]))) << i;
        for (const char *ext : {".mlir", ".generic.mlir"}) {
            SCOPED_TRACE(ext);
            const std::string path = ops_samples::path(name, ext);
            expect_same(eval_text(name, slurp(path), ext), want);
        }
    }
}

// The instructions of opcode op in a module, computation by computation.
std::vector<const hlo_instr *> all_of(const hlo_module *m, hlo_opcode op)
{
    std::vector<const hlo_instr *> v;
    for (int c = 0; c < m->n_comps; c++)
        for (int i = 0; i < m->comps[c].n_instrs; i++)
            if (m->comps[c].instrs[i].opcode == op)
                v.push_back(&m->comps[c].instrs[i]);
    return v;
}

std::vector<int64_t> ints(const hlo_ints &l)
{
    return l.present ? std::vector<int64_t>(l.v, l.v + l.n) : std::vector<int64_t>{-1};
}

std::string shape_str(const hlo_shape &s)
{
    char b[256];
    return hlo_shape_str(&s, b, sizeof b);
}

// The shape of parameter 0 of computation c.
std::string param_shape(const hlo_module *m, int c)
{
    for (int i = 0; i < m->comps[c].n_instrs; i++)
        if (m->comps[c].instrs[i].opcode == HLO_OP_PARAMETER &&
            m->comps[c].instrs[i].parameter_number == 0)
            return shape_str(m->comps[c].instrs[i].shape);
    return "none";
}

// The operand shapes of an instruction of m.
std::vector<std::string> operand_shapes(const hlo_module *m, const hlo_instr *in)
{
    const hlo_computation *c = hlo_instr_owner(m, in);
    std::vector<std::string> v;
    for (int k = 0; c && k < in->n_operands; k++)
        v.push_back(shape_str(c->instrs[in->operands[k].index].shape));
    return v;
}

// Both syntaxes fill the hlo_instr fields the HLO parser fills from JAX's HLO of the function:
// dimension numbers, sizes, sort's dimension and stability, TOTALORDER compares, the shapes of
// while's state and of the branch operands.
TEST(StableHloOps, AttributesAsTheHloParserReadsThem)
{
    const hlo_opcode ops[] = {
        HLO_OP_GATHER,  HLO_OP_SCATTER,    HLO_OP_DYNAMIC_SLICE, HLO_OP_DYNAMIC_UPDATE_SLICE,
        HLO_OP_SORT,    HLO_OP_REVERSE,    HLO_OP_WHILE,         HLO_OP_CONDITIONAL,
        HLO_OP_COMPARE, HLO_OP_CONCATENATE};
    for (const char *name : ops_samples::kNames) {
        Parsed h(slurp(ops_samples::path(name, ".hlo")));
        ASSERT_NE(h.m, nullptr) << h.err.msg;
        for (const char *ext : {".mlir", ".generic.mlir"}) {
            SCOPED_TRACE(std::string(name) + ext);
            Parsed s(slurp(ops_samples::path(name, ext)));
            ASSERT_NE(s.m, nullptr) << s.err.msg;
            for (hlo_opcode op : ops) {
                std::vector<const hlo_instr *> a = all_of(h.m, op), b = all_of(s.m, op);
                SCOPED_TRACE(hlo_opcode_name(op));
                if (op == HLO_OP_COMPARE) { /* JAX's HLO drops and reorders some compares */
                    int ta = 0, tb = 0;
                    for (const hlo_instr *in : a)
                        ta += in->total_order;
                    for (const hlo_instr *in : b)
                        tb += in->total_order;
                    EXPECT_EQ(ta, tb);
                    continue;
                }
                ASSERT_EQ(a.size(), b.size());
                for (size_t i = 0; i < a.size(); i++) {
                    const hlo_instr &x = *a[i], &y = *b[i];
                    EXPECT_EQ(shape_str(x.shape), shape_str(y.shape));
                    EXPECT_EQ(ints(x.dimensions), ints(y.dimensions));
                    EXPECT_EQ(ints(x.dynamic_slice_sizes), ints(y.dynamic_slice_sizes));
                    for (int k = 0; k < HLO_GATHER_LISTS; k++)
                        EXPECT_EQ(ints(*hlo_gather_list((hlo_gather_dims *)&x.gather, k)),
                                  ints(*hlo_gather_list((hlo_gather_dims *)&y.gather, k)))
                            << k;
                    EXPECT_EQ(x.gather.index_vector_dim, y.gather.index_vector_dim);
                    EXPECT_EQ(x.is_stable, y.is_stable);
                    EXPECT_EQ(x.n_branches, y.n_branches);
                    EXPECT_EQ(x.branch_pred, y.branch_pred);
                    EXPECT_EQ(x.to_apply < 0, y.to_apply < 0);
                    EXPECT_EQ(operand_shapes(h.m, &x), operand_shapes(s.m, &y));
                    for (int k = 0; hlo_callee(&x, k) >= 0 || hlo_callee(&y, k) >= 0; k++)
                        EXPECT_EQ(param_shape(h.m, hlo_callee(&x, k)),
                                  param_shape(s.m, hlo_callee(&y, k)))
                            << k;
                }
            }
        }
    }
}

const std::string kMain = "func.func @main(%p: tensor<i1>, %i: tensor<i32>, %x: tensor<2xf32>, "
                          "%y: tensor<2xf32>) -> tensor<2xf32> {\n";

std::vector<hlo_array *> args(bool p, int i)
{
    return {make(HLO_PRED, {}, {p ? 1.0 : 0.0}), make(HLO_S32, {}, {(double)i}),
            make(HLO_F32, {2}, {1, 2}), make(HLO_F32, {2}, {10, 20})};
}

// stablehlo.if runs its true region for true; branches use no value, one or several, also
// from a function two regions out; the pretty while of one state value.
TEST(StableHloOps, IfCaseAndCapturedValues)
{
    const std::string if_text = kMain + "  %0 = \"stablehlo.if\"(%p) ({\n"
                                        "    %1 = stablehlo.add %x, %y : tensor<2xf32>\n"
                                        "    stablehlo.return %1 : tensor<2xf32>\n"
                                        "  }, {\n"
                                        "    stablehlo.return %y : tensor<2xf32>\n"
                                        "  }) : (tensor<i1>) -> tensor<2xf32>\n"
                                        "  return %0 : tensor<2xf32>\n}\n";
    expect_same(run1(if_text, args(true, 0)), {11, 22});
    expect_same(run1(if_text, args(false, 0)), {10, 20});
    Parsed p(if_text);
    ASSERT_NE(p.m, nullptr) << p.err.msg;
    const hlo_instr *cond = all_of(p.m, HLO_OP_CONDITIONAL)[0];
    EXPECT_TRUE(cond->branch_pred);
    EXPECT_EQ(operand_shapes(p.m, cond),
              (std::vector<std::string>{"pred[]", "(f32[2], f32[2])", "f32[2]"}));

    // Branch 1 uses nothing (an empty tuple), branch 2 %i and %x, which a case inside it uses.
    const std::string case_text = kMain +
                                  "  %0 = \"stablehlo.case\"(%i) ({\n"
                                  "    stablehlo.return %y : tensor<2xf32>\n"
                                  "  }, {\n"
                                  "    %c = stablehlo.constant dense<[5.0, 6.0]> : tensor<2xf32>\n"
                                  "    stablehlo.return %c : tensor<2xf32>\n"
                                  "  }, {\n"
                                  "    %1 = \"stablehlo.case\"(%i) ({\n"
                                  "      %2 = stablehlo.negate %x : tensor<2xf32>\n"
                                  "      stablehlo.return %2 : tensor<2xf32>\n"
                                  "    }) : (tensor<i32>) -> tensor<2xf32>\n"
                                  "    %3 = stablehlo.multiply %1, %x : tensor<2xf32>\n"
                                  "    stablehlo.return %3 : tensor<2xf32>\n"
                                  "  }) : (tensor<i32>) -> tensor<2xf32>\n"
                                  "  return %0 : tensor<2xf32>\n}\n";
    expect_same(run1(case_text, args(false, 0)), {10, 20});
    expect_same(run1(case_text, args(false, 1)), {5, 6});
    expect_same(run1(case_text, args(false, 2)), {-1, -4});
    expect_same(run1(case_text, args(false, 9)), {-1, -4}); /* out of range: the last */
    Parsed c(case_text);
    ASSERT_NE(c.m, nullptr) << c.err.msg;
    EXPECT_EQ(operand_shapes(c.m, all_of(c.m, HLO_OP_CONDITIONAL)[0]),
              (std::vector<std::string>{"s32[]", "f32[2]", "()", "(s32[], f32[2])"}));
    hlo_error e{};
    EXPECT_EQ(hlo_check(c.m, "t.hlo", &e), 0) << e.msg;

    const std::string while_text = "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                                   "  %0 = stablehlo.while(%it = %x) : tensor<2xf32>\n"
                                   "  cond {\n"
                                   "    %c = stablehlo.constant dense<0.0> : tensor<f32>\n"
                                   "    %s = stablehlo.reduce(%it init: %c) applies stablehlo.add"
                                   " across dimensions = [0] : (tensor<2xf32>, tensor<f32>) -> "
                                   "tensor<f32>\n"
                                   "    %t = stablehlo.constant dense<100.0> : tensor<f32>\n"
                                   "    %l = stablehlo.compare LT, %s, %t, FLOAT : (tensor<f32>, "
                                   "tensor<f32>) -> tensor<i1>\n"
                                   "    stablehlo.return %l : tensor<i1>\n"
                                   "  } do {\n"
                                   "    %1 = stablehlo.add %it, %it : tensor<2xf32>\n"
                                   "    stablehlo.return %1 : tensor<2xf32>\n"
                                   "  }\n"
                                   "  return %0 : tensor<2xf32>\n}\n";
    expect_same(run1(while_text, {make(HLO_F32, {2}, {1, 2})}), {64, 128});
    Parsed w(while_text);
    ASSERT_NE(w.m, nullptr) << w.err.msg;
    const hlo_instr *loop = all_of(w.m, HLO_OP_WHILE)[0];
    EXPECT_EQ(param_shape(w.m, loop->condition), "f32[2]");
    EXPECT_EQ(param_shape(w.m, loop->body), "f32[2]");
}

std::string parse_error(const std::string &text)
{
    hlo_error err{};
    hlo_module *m = hlo_parse(text.data(), text.size(), "t.hlo", &err);
    EXPECT_EQ(m, nullptr) << text;
    hlo_module_free(m);
    return err.msg;
}

std::string gather(const std::string &attrs)
{
    return "func.func @main(%x: tensor<4x6xf32>, %i: tensor<2x1xi32>) -> tensor<2x6xf32> {\n"
           "  %0 = \"stablehlo.gather\"(%x, %i) <{" +
           attrs +
           "}> : (tensor<4x6xf32>, tensor<2x1xi32>) -> tensor<2x6xf32>\n"
           "  return %0 : tensor<2x6xf32>\n}\n";
}

std::string while_op(const std::string &head, const std::string &body)
{
    return "func.func @main(%x: tensor<f32>) -> tensor<f32> {\n  %0 = " + head +
           "\n  cond {\n    %c = stablehlo.compare LT, %it, %it, FLOAT : (tensor<f32>, "
           "tensor<f32>) -> tensor<i1>\n    stablehlo.return %c : tensor<i1>\n  } do {\n" +
           body + "  }\n  return %0 : tensor<f32>\n}\n";
}

// chlo.erfc, as jax.scipy.special.erfc and exact GELU lower: 1 - erf(x), against JAX's values
// (jax 0.10.2, f32) within one f32 ulp of values in [1, 2) (1.2e-7): erf and the subtraction round.
TEST(StableHloOps, ErfcIsOneMinusErf)
{
    const std::string text = "func.func @main(%x: tensor<9xf32>) -> tensor<9xf32> {\n"
                             "  %0 = chlo.erfc %x : tensor<9xf32> -> tensor<9xf32>\n"
                             "  return %0 : tensor<9xf32>\n}\n";
    const std::vector<double> x = {-3, -1, -0.5, 0, 0.3, 1, 2, 3, 5};
    const std::vector<double> jax = {
        1.999977946281433,     1.842700719833374,  1.5204998254776,      1.0,
        0.6713732481002808,    0.1572992354631424, 0.004677734803408384, 2.2090496713644825e-05,
        1.5374597211667562e-12};
    const std::vector<double> got = run1(text, {make(HLO_F32, {9}, x)});
    ASSERT_EQ(got.size(), jax.size());
    for (size_t i = 0; i < got.size(); i++)
        EXPECT_NEAR(got[i], jax[i], 1.2e-7) << "x = " << x[i];
}

TEST(StableHloOps, LocatedErrors)
{
    const std::string dn = "dimension_numbers = #stablehlo.gather<offset_dims = [1], "
                           "collapsed_slice_dims = [0], start_index_map = [0], "
                           "index_vector_dim = 1>";
    EXPECT_EQ(parse_error(gather(dn)), "t.hlo:2:8: gather without slice_sizes");
    EXPECT_EQ(parse_error(gather("slice_sizes = array<i64: 1, 6>")),
              "t.hlo:2:8: stablehlo.gather without dimension_numbers");
    EXPECT_EQ(parse_error(gather("dimension_numbers = #stablehlo.gather<offset_dimz = [1]>, "
                                 "slice_sizes = array<i64: 1, 6>")),
              "t.hlo:2:75: unknown dimension numbers field 'offset_dimz'");
    EXPECT_EQ(parse_error(gather("dimension_numbers = #stablehlo.gather<offset_dims = [1], "
                                 "offset_dims = [1]>, slice_sizes = array<i64: 1, 6>")),
              "t.hlo:2:94: offset_dims given twice");
    EXPECT_EQ(parse_error(gather("dimension_numbers = #stablehlo.gather<index_vector_dim = 99>, "
                                 "slice_sizes = array<i64: 1, 6>")),
              "t.hlo:2:94: index_vector_dim 99 out of range [0, 16]");
    EXPECT_EQ(parse_error(gather("dimension_numbers = #stablehlo.scatter<index_vector_dim = 1>, "
                                 "slice_sizes = array<i64: 1, 6>")),
              "t.hlo:2:57: expected #stablehlo.gather<...>, found '#stablehlo.scatter'");
    EXPECT_EQ(parse_error(gather("dimension_numbers = #stablehlo.gather<offset_dims = [-1]>, "
                                 "slice_sizes = array<i64: 1, 6>")),
              "t.hlo:2:93: negative dimension in dimension list");
    // hlo_check reports dimension numbers that do not fit the shapes, as for HLO text.
    Parsed bad(gather(
        "dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
        "start_index_map = [0, 1], index_vector_dim = 1>, slice_sizes = array<i64: 1, 6>"));
    ASSERT_NE(bad.m, nullptr) << bad.err.msg;
    hlo_error e{};
    EXPECT_NE(hlo_check(bad.m, "t.hlo", &e), 0);
    EXPECT_NE(std::string(e.msg).find("t.hlo:2:3: gather: "), std::string::npos) << e.msg;

    const std::string ret = "    stablehlo.return %it : tensor<f32>\n";
    EXPECT_EQ(parse_error(while_op("stablehlo.while(%it = %x) : tensor<f32>", "")),
              "t.hlo:6:8: region or function without a return");
    EXPECT_EQ(parse_error(while_op("stablehlo.while(%it = %x) tensor<f32>", ret)),
              "t.hlo:2:34: expected ':' and the while's types, found 'tensor'");
    EXPECT_EQ(parse_error(while_op("stablehlo.while(%it = %x, %jt = %x) : tensor<f32>", ret)),
              "t.hlo:3:3: expected ',' and the next iteration argument's type, found 'cond'");
    EXPECT_EQ(parse_error(while_op("stablehlo.while(%it %x) : tensor<f32>", ret)),
              "t.hlo:2:28: expected '=' after the iteration argument, found '%x'");
    // JAX passes what a loop uses as state: a value of the function used in a while region is
    // refused.
    EXPECT_EQ(parse_error(while_op("stablehlo.while(%it = %x) : tensor<f32>",
                                   "    %1 = stablehlo.add %it, %x : tensor<f32>\n"
                                   "    stablehlo.return %1 : tensor<f32>\n")),
              "t.hlo:7:29: value '%x' of an enclosing region used in a region (only case and if "
              "regions may use them)");
    EXPECT_EQ(parse_error("func.func @main(%i: tensor<i32>) -> tensor<i32> {\n"
                          "  %0 = \"stablehlo.case\"(%i) ({\n  ^bb0(%a: tensor<i32>):\n"
                          "    stablehlo.return %a : tensor<i32>\n"
                          "  }) : (tensor<i32>) -> tensor<i32>\n"
                          "  return %0 : tensor<i32>\n}\n"),
              "t.hlo:3:8: case and if regions take no arguments");
    EXPECT_EQ(parse_error("func.func @main(%p: tensor<i1>) -> tensor<i1> {\n"
                          "  %0 = \"stablehlo.if\"(%p) ({\n"
                          "    stablehlo.return %p : tensor<i1>\n"
                          "  }) : (tensor<i1>) -> tensor<i1>\n"
                          "  return %0 : tensor<i1>\n}\n"),
              "t.hlo:2:8: 'stablehlo.if' needs a true and a false region");
    EXPECT_EQ(parse_error("func.func @main(%x: tensor<f32>) -> tensor<i1> {\n"
                          "  %0 = stablehlo.compare LT, %x, %x, FUZZY : (tensor<f32>, "
                          "tensor<f32>) -> tensor<i1>\n"
                          "  return %0 : tensor<i1>\n}\n"),
              "t.hlo:2:38: unknown comparison type 'FUZZY' (expected FLOAT TOTALORDER SIGNED "
              "UNSIGNED)");
}

// Every prefix of the control-flow samples is a located error, never a crash.
TEST(StableHloOps, TruncatedTextIsAnError)
{
    for (const char *f : {"fori_loop.mlir", "switch.generic.mlir", "take_along_axis.mlir"}) {
        const std::string text = slurp(ops_samples::path(f, ""));
        const size_t end = text.rfind('}');
        for (size_t n = 1; n < end; n++) {
            hlo_error err{};
            hlo_module *m = hlo_parse(text.data(), n, "t.hlo", &err);
            EXPECT_EQ(m, nullptr) << f << " cut at " << n;
            EXPECT_GT(err.line, 0) << err.msg;
            hlo_module_free(m);
        }
    }
}

} // namespace

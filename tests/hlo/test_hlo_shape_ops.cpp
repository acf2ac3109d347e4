// test_hlo_shape_ops.cpp - data movement (slice, concatenate, reverse, dynamic-slice,
// dynamic-update-slice, gather, scatter), select-and-scatter, sort, map, clamp and control flow
// (while, conditional): hand computed cases with their edge cases, reductions with arbitrary
// reducers, located errors for malformed attributes, printing that parses back, and the JAX samples
// of tests/hlo/ops/ evaluated against JAX's results (tpuc's host programs of them:
// tests/compiler/test_compile_host).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "hlo/hlo.h"
#include "tests/support/hlo_test.h"
#include "tests/support/ops_samples.h"

namespace
{

using hlo_test::at;
using hlo_test::entry;
using hlo_test::expect_same;
using hlo_test::kNaN;
using hlo_test::make;
using hlo_test::Parsed;
using hlo_test::run;
using hlo_test::run1;

// The error hlo_check reports for text ("" when it passes).
std::string check_error(const std::string &text)
{
    hlo_error e{};
    hlo_module *m = hlo_parse(text.data(), text.size(), "t.hlo", &e);
    const bool bad = !m || hlo_check(m, "t.hlo", &e);
    hlo_module_free(m);
    return bad ? e.msg : "";
}

// ------------------------------------------------------------ data movement --

TEST(HloShapeOps, Concatenate)
{
    const std::string t = entry("  a = f32[2,1] parameter(0)\n"
                                "  b = f32[2,0] parameter(1)\n"
                                "  c = f32[2,2] parameter(2)\n"
                                "  ROOT r = f32[2,3] concatenate(a, b, c), dimensions={1}\n");
    expect_same(run1(t, {make(HLO_F32, {2, 1}, {1, 2}), make(HLO_F32, {2, 0}, {}),
                         make(HLO_F32, {2, 2}, {3, 4, 5, 6})}),
                {1, 3, 4, 2, 5, 6});
    const std::string t0 = entry("  a = s32[1,2] parameter(0)\n"
                                 "  b = s32[2,2] parameter(1)\n"
                                 "  ROOT r = s32[3,2] concatenate(a, b), dimensions={0}\n");
    expect_same(run1(t0, {make(HLO_S32, {1, 2}, {1, 2}), make(HLO_S32, {2, 2}, {3, 4, 5, 6})}),
                {1, 2, 3, 4, 5, 6});
}

TEST(HloShapeOps, SliceAndReverse)
{
    const std::string t = entry("  a = f32[3,4] parameter(0)\n"
                                "  ROOT r = f32[2,2] slice(a), slice={[0:3:2], [1:4:2]}\n");
    expect_same(run1(t, {make(HLO_F32, {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})}),
                {1, 3, 9, 11});
    const std::string empty = entry("  a = f32[3] parameter(0)\n"
                                    "  ROOT r = f32[0] slice(a), slice={[2:2]}\n");
    expect_same(run1(empty, {make(HLO_F32, {3}, {1, 2, 3})}), {});
    // Size-1 dims reverse to themselves; no dims is the identity.
    const std::string rev = entry("  a = s32[2,1,3] parameter(0)\n"
                                  "  ROOT r = s32[2,1,3] reverse(a), dimensions={1,2}\n");
    expect_same(run1(rev, {make(HLO_S32, {2, 1, 3}, {1, 2, 3, 4, 5, 6})}), {3, 2, 1, 6, 5, 4});
    const std::string none = entry("  a = s32[2] parameter(0)\n"
                                   "  ROOT r = s32[2] reverse(a), dimensions={}\n");
    expect_same(run1(none, {make(HLO_S32, {2}, {1, 2})}), {1, 2});
}

TEST(HloShapeOps, DynamicSliceClampsStarts)
{
    // Starts of any integer type, clamped so that the slice lies inside: -5 -> 0, 9 -> 2.
    const std::string t = entry("  a = f32[3,4] parameter(0)\n"
                                "  i = s8[] parameter(1)\n"
                                "  j = s8[] parameter(2)\n"
                                "  ROOT r = f32[2,2] dynamic-slice(a, i, j), "
                                "dynamic_slice_sizes={2,2}\n");
    auto ds = [&](int i, int j) {
        return run1(t, {make(HLO_F32, {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}),
                        make(HLO_S8, {}, {(double)i}), make(HLO_S8, {}, {(double)j})});
    };
    expect_same(ds(1, 1), {5, 6, 9, 10});
    expect_same(ds(-5, 9), {2, 3, 6, 7});
    expect_same(ds(100, -1), {4, 5, 8, 9});
}

TEST(HloShapeOps, DynamicUpdateSliceClampsStarts)
{
    const std::string t = entry("  a = s32[2,3] parameter(0)\n"
                                "  u = s32[1,2] parameter(1)\n"
                                "  i = u8[] parameter(2)\n"
                                "  j = u8[] parameter(3)\n"
                                "  ROOT r = s32[2,3] dynamic-update-slice(a, u, i, j)\n");
    auto dus = [&](int i, int j) {
        return run1(t, {make(HLO_S32, {2, 3}, {0, 0, 0, 0, 0, 0}), make(HLO_S32, {1, 2}, {7, 8}),
                        make(HLO_U8, {}, {(double)i}), make(HLO_U8, {}, {(double)j})});
    };
    expect_same(dus(0, 0), {7, 8, 0, 0, 0, 0});
    expect_same(dus(1, 1), {0, 0, 0, 0, 7, 8});
    expect_same(dus(200, 200), {0, 0, 0, 0, 7, 8}); // clamped to (1, 1)
}

const std::vector<double> kTable = {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32}; // f32[4,3]

TEST(HloShapeOps, GatherEmbeddingClampsIndices)
{
    // PyTorch/XLA's embedding: ids s32[n], index_vector_dim=1 (implicit one-element vectors).
    const std::string t =
        entry("  w = f32[4,3] parameter(0)\n"
              "  ids = s32[4] parameter(1)\n"
              "  ROOT g = f32[4,3] gather(w, ids), offset_dims={1}, "
              "collapsed_slice_dims={0}, start_index_map={0}, "
              "index_vector_dim=1, slice_sizes={1,3}, indices_are_sorted=false\n");
    expect_same(run1(t, {make(HLO_F32, {4, 3}, kTable), make(HLO_S32, {4}, {2, 0, -7, 9})}),
                {20, 21, 22, 0, 1, 2, 0, 1, 2, 30, 31, 32});
}

TEST(HloShapeOps, GatherPointsWindowsAndBatchingDims)
{
    // x[i, j] for index pairs: index vectors along dim 1, nothing kept of the slice.
    const std::string pts = entry("  w = f32[4,3] parameter(0)\n"
                                  "  ix = s32[3,2] parameter(1)\n"
                                  "  ROOT g = f32[3] gather(w, ix), offset_dims={}, "
                                  "collapsed_slice_dims={0,1}, start_index_map={0,1}, "
                                  "index_vector_dim=1, slice_sizes={1,1}\n");
    expect_same(
        run1(pts, {make(HLO_F32, {4, 3}, kTable), make(HLO_S32, {3, 2}, {1, 2, 3, 0, 0, 5})}),
        {12, 30, 2});
    // 2x2 windows at (row, col) starts, the window dims first in the result; (3, 2) clamps to
    // (2, 1).
    const std::string win = entry("  w = f32[4,3] parameter(0)\n"
                                  "  ix = s32[2,2] parameter(1)\n"
                                  "  ROOT g = f32[2,2,2] gather(w, ix), offset_dims={0,1}, "
                                  "collapsed_slice_dims={}, start_index_map={0,1}, "
                                  "index_vector_dim=1, slice_sizes={2,2}\n");
    expect_same(run1(win, {make(HLO_F32, {4, 3}, kTable), make(HLO_S32, {2, 2}, {0, 0, 3, 2})}),
                {0, 21, 1, 22, 10, 31, 11, 32});
    // take_along_axis as JAX prints it: operand dim 0 batched with index dim 0.
    const std::string tak = entry("  w = f32[4,3] parameter(0)\n"
                                  "  ix = s32[4,2,1] parameter(1)\n"
                                  "  ROOT g = f32[4,2] gather(w, ix), offset_dims={}, "
                                  "collapsed_slice_dims={1}, start_index_map={1}, "
                                  "operand_batching_dims={0}, start_indices_batching_dims={0}, "
                                  "index_vector_dim=2, slice_sizes={1,1}\n");
    expect_same(run1(tak, {make(HLO_F32, {4, 3}, kTable),
                           make(HLO_S32, {4, 2, 1}, {2, 0, 1, 1, 0, 2, 5, -1})}),
                {2, 0, 11, 11, 20, 22, 32, 30});
}

TEST(HloShapeOps, ScatterCombinesAndDropsWindowsOutside)
{
    // Rows of 2x2 windows added at (row, col) starts: (0, 1) twice adds up, (3, 0) and (-1, 0)
    // would leave the operand and are dropped whole.
    const std::string t = "HloModule m\n"
                          "add {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n"
                          "  ROOT s = s32[] add(a, b)\n}\n"
                          "ENTRY e {\n  x = s32[4,3] parameter(0)\n  ix = s32[4,2] parameter(1)\n"
                          "  u = s32[4,2,2] parameter(2)\n"
                          "  ROOT r = s32[4,3] scatter(x, ix, u), update_window_dims={1,2}, "
                          "inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, "
                          "index_vector_dim=1, to_apply=add\n}\n";
    std::vector<double> ones(16, 1);
    expect_same(
        run1(t, {make(HLO_S32, {4, 3}, std::vector<double>(12, 0)),
                 make(HLO_S32, {4, 2}, {0, 1, 3, 0, 0, 1, -1, 0}), make(HLO_S32, {4, 2, 2}, ones)}),
        {0, 2, 2, 0, 2, 2, 0, 0, 0, 0, 0, 0});
    // Later updates of one element see the earlier ones: "set" keeps the last.
    const std::string set = "HloModule m\n"
                            "second {\n  a = f32[] parameter(0)\n  ROOT b = f32[] parameter(1)\n}\n"
                            "ENTRY e {\n  x = f32[3] parameter(0)\n  ix = s32[3] parameter(1)\n"
                            "  u = f32[3] parameter(2)\n"
                            "  ROOT r = f32[3] scatter(x, ix, u), update_window_dims={}, "
                            "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                            "index_vector_dim=1, to_apply=second\n}\n";
    expect_same(run1(set, {make(HLO_F32, {3}, {0, 0, 0}), make(HLO_S32, {3}, {2, 2, 0}),
                           make(HLO_F32, {3}, {5, 6, 7})}),
                {7, 0, 6});
}

// ---------------------------------------------------------- select-and-scatter --

// Max pooling's gradient as jax.grad writes it: select a compare GE (the first of equal maxima
// wins), scatter an add.
const std::string kSelectScatter = "HloModule m\n"
                                   "ge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                                   "  ROOT c = pred[] compare(a, b), direction=GE\n}\n"
                                   "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                                   "  ROOT s = f32[] add(a, b)\n}\n";

TEST(HloShapeOps, SelectAndScatterIsMaxPoolingsGradient)
{
    // Overlapping windows of 2 (stride 1), one of padding at the end: windows (0,1) -> 1,
    // (1,2) a tie -> 1, (2,3) -> 2, (3,4) -> 4, (4, pad) -> 4; each adds its source element
    // to the init value there.
    const std::string t1 =
        kSelectScatter + "ENTRY e {\n  x = f32[5] parameter(0)\n  s = f32[5] parameter(1)\n"
                         "  z = f32[] constant(0.5)\n"
                         "  ROOT r = f32[5] select-and-scatter(x, s, z), window={size=2 pad=0_1}, "
                         "select=ge, scatter=add\n}\n";
    expect_same(
        run1(t1, {make(HLO_F32, {5}, {1, 3, 3, 2, 5}), make(HLO_F32, {5}, {10, 20, 30, 40, 50})}),
        {0.5, 30.5, 30.5, 0.5, 90.5});
    // 2x2 windows, stride 2: the maximum 8 of the first; the first of four equal ones.
    const std::string t2 = kSelectScatter +
                           "ENTRY e {\n  x = f32[2,4] parameter(0)\n  s = f32[1,2] parameter(1)\n"
                           "  z = f32[] constant(0)\n"
                           "  ROOT r = f32[2,4] select-and-scatter(x, s, z), "
                           "window={size=2x2 stride=2x2}, select=ge, scatter=add\n}\n";
    expect_same(
        run1(t2, {make(HLO_F32, {2, 4}, {1, 8, 2, 2, 7, 0, 2, 2}), make(HLO_F32, {1, 2}, {5, 6})}),
        {0, 5, 6, 0, 0, 0, 0, 0});
    // Printed, it parses back the same.
    Parsed p(t2);
    ASSERT_NE(p.m, nullptr) << p.err.msg;
    hlo_text out = {};
    hlo_print_computation(&out, p.m, p.m->entry, nullptr);
    const std::string printed = out.s;
    hlo_text_free(&out);
    EXPECT_NE(printed.find("select-and-scatter(x, s, z), window={size=2x2 stride=2x2}, select=ge, "
                           "scatter=add"),
              std::string::npos)
        << printed;
    // A source of another shape than the windows'; a select that does not return pred[].
    const std::string src = kSelectScatter +
                            "ENTRY e {\n  x = f32[5] parameter(0)\n  s = f32[4] parameter(1)\n"
                            "  z = f32[] constant(0)\n"
                            "  ROOT r = f32[5] select-and-scatter(x, s, z), window={size=2}, "
                            "select=ge, scatter=add\n}\n";
    EXPECT_EQ(check_error(src), "");
    const std::string bad = kSelectScatter +
                            "ENTRY e {\n  x = f32[5] parameter(0)\n  s = f32[5] parameter(1)\n"
                            "  z = f32[] constant(0)\n"
                            "  ROOT r = f32[5] select-and-scatter(x, s, z), window={size=2}, "
                            "select=ge, scatter=add\n}\n";
    EXPECT_EQ(check_error(bad),
              at(bad, "r =") + "select-and-scatter: source f32[5], expected f32[4]");
    const std::string sel = kSelectScatter +
                            "ENTRY e {\n  x = f32[5] parameter(0)\n  s = f32[4] parameter(1)\n"
                            "  z = f32[] constant(0)\n"
                            "  ROOT r = f32[5] select-and-scatter(x, s, z), window={size=2}, "
                            "select=add, scatter=add\n}\n";
    EXPECT_EQ(check_error(sel),
              at(sel, "r =") +
                  "select-and-scatter: select 'add' returns f32[], must return pred[]");
}

// ------------------------------------------------------------------- sort --

const std::string kLess = "less {\n"
                          "  a = f32[] parameter(0)\n"
                          "  b = f32[] parameter(1)\n"
                          "  ROOT lt = pred[] compare(a, b), direction=LT\n"
                          "}\n";

TEST(HloShapeOps, SortIsStableWithTiesAndNaN)
{
    // Keys with ties and a NaN (unordered: compares false both ways), values recording the
    // original positions: ties keep their order; the NaN splits the row into runs that a merge
    // sort orders around it.
    const std::string t = "HloModule m\n"
                          "keyless {\n"
                          "  a = f32[] parameter(0)\n"
                          "  b = f32[] parameter(1)\n"
                          "  c = s32[] parameter(2)\n"
                          "  d = s32[] parameter(3)\n"
                          "  ROOT lt = pred[] compare(a, b), direction=LT\n"
                          "}\n"
                          "ENTRY e {\n"
                          "  k = f32[2,4] parameter(0)\n"
                          "  v = s32[2,4] parameter(1)\n"
                          "  ROOT s = (f32[2,4], s32[2,4]) sort(k, v), dimensions={1}, "
                          "is_stable=true, to_apply=keyless\n"
                          "}\n";
    auto r = run(t, {make(HLO_F32, {2, 4}, {3, 1, 3, 1, 2, 2, 1, 2}),
                     make(HLO_S32, {2, 4}, {0, 1, 2, 3, 0, 1, 2, 3})});
    ASSERT_EQ(r.err, "");
    ASSERT_EQ(r.out.size(), 2u);
    expect_same(r.out[0], {1, 1, 3, 3, 1, 2, 2, 2});
    expect_same(r.out[1], {1, 3, 0, 2, 2, 0, 1, 3});
    // Along dim 0, one operand.
    const std::string t0 = kLess + "ENTRY e {\n"
                                   "  k = f32[3,2] parameter(0)\n"
                                   "  ROOT s = f32[3,2] sort(k), dimensions={0}, to_apply=less\n"
                                   "}\n";
    expect_same(run1(t0, {make(HLO_F32, {3, 2}, {3, -1, 1, -3, 2, -2})}), {1, -3, 2, -2, 3, -1});
    // With a NaN: [2, NaN, 1] -> merge of [2] and [NaN] keeps [2, NaN]; then with [1]: 1 < 2.
    expect_same(run1(kLess + "ENTRY e {\n  k = f32[3] parameter(0)\n"
                             "  ROOT s = f32[3] sort(k), dimensions={0}, to_apply=less\n}\n",
                     {make(HLO_F32, {3}, {2, kNaN, 1})}),
                {1, 2, kNaN});
    // An empty dim sorts nothing.
    expect_same(run1(kLess + "ENTRY e {\n  k = f32[0] parameter(0)\n"
                             "  ROOT s = f32[0] sort(k), dimensions={0}, to_apply=less\n}\n",
                     {make(HLO_F32, {0}, {})}),
                {});
}

// ------------------------------------------------------------ control flow --

TEST(HloShapeOps, WhileRunsTheBodyWhileTheConditionHolds)
{
    const std::string t = "HloModule m\n" + hlo_test::kCountLoop +
                          "ENTRY e {\n"
                          "  i0 = s32[] parameter(0)\n"
                          "  x = f32[2] parameter(1)\n"
                          "  s = (s32[], f32[2]) tuple(i0, x)\n"
                          "  w = (s32[], f32[2]) while(s), condition=cond, body=body\n"
                          "  i = s32[] get-tuple-element(w), index=0\n"
                          "  y = f32[2] get-tuple-element(w), index=1\n"
                          "  ROOT r = (s32[], f32[2]) tuple(i, y)\n"
                          "}\n";
    auto r = run(t, {make(HLO_S32, {}, {0}), make(HLO_F32, {2}, {1, -2})});
    ASSERT_EQ(r.err, "");
    expect_same(r.out[0], {3});
    expect_same(r.out[1], {8, -16});
    // Zero iterations: the state comes back unchanged.
    r = run(t, {make(HLO_S32, {}, {5}), make(HLO_F32, {2}, {1, -2})});
    ASSERT_EQ(r.err, "");
    expect_same(r.out[0], {5});
    expect_same(r.out[1], {1, -2});
}

TEST(HloShapeOps, WhileThatDoesNotFinishIsALocatedError)
{
    const std::string t = "HloModule m\n"
                          "c {\n  s = s32[] parameter(0)\n  ROOT p = pred[] constant(true)\n}\n"
                          "b {\n  s = s32[] parameter(0)\n  ROOT n = s32[] negate(s)\n}\n"
                          "ENTRY e {\n  z = s32[] parameter(0)\n"
                          "  ROOT w = s32[] while(z), condition=c, body=b\n}\n";
    auto r = run(t, {make(HLO_S32, {}, {1})});
    EXPECT_EQ(r.err, at(t, "w =") + "while: 'w' did not finish after " +
                         std::to_string(HLO_MAX_WHILE_TRIPS) + " iterations (HLO_MAX_WHILE_TRIPS)");
}

const std::string kBranches = "double {\n  x = f32[2] parameter(0)\n"
                              "  ROOT y = f32[2] add(x, x)\n}\n"
                              "negate {\n  x = f32[2] parameter(0)\n"
                              "  ROOT y = f32[2] negate(x)\n}\n"
                              "first {\n  t = (f32[2], f32[2]) parameter(0)\n"
                              "  ROOT y = f32[2] get-tuple-element(t), index=0\n}\n";

TEST(HloShapeOps, ConditionalPredAndIndexForms)
{
    const std::string p = "HloModule m\n" + kBranches +
                          "ENTRY e {\n  c = pred[] parameter(0)\n  x = f32[2] parameter(1)\n"
                          "  ROOT r = f32[2] conditional(c, x, x), true_computation=double, "
                          "false_computation=negate\n}\n";
    expect_same(run1(p, {make(HLO_PRED, {}, {1}), make(HLO_F32, {2}, {1, 2})}), {2, 4});
    expect_same(run1(p, {make(HLO_PRED, {}, {0}), make(HLO_F32, {2}, {1, 2})}), {-1, -2});
    // Index form with a tuple operand; an index out of range runs the last branch.
    const std::string ix = "HloModule m\n" + kBranches +
                           "ENTRY e {\n  i = s32[] parameter(0)\n  x = f32[2] parameter(1)\n"
                           "  t = (f32[2], f32[2]) tuple(x, x)\n"
                           "  ROOT r = f32[2] conditional(i, x, x, t), "
                           "branch_computations={double, negate, first}\n}\n";
    auto at_index = [&](int i) {
        return run1(ix, {make(HLO_S32, {}, {(double)i}), make(HLO_F32, {2}, {1, 2})});
    };
    expect_same(at_index(0), {2, 4});
    expect_same(at_index(1), {-1, -2});
    expect_same(at_index(2), {1, 2});
    expect_same(at_index(3), {1, 2});
    expect_same(at_index(-1), {1, 2});
}

// ------------------------------------------------ reducers, map and clamp --

TEST(HloShapeOps, ReductionsWithAnyReducer)
{
    // acc + x * x from 1: not an identity init, not a plain binary op.
    const std::string sq = "HloModule m\n"
                           "f {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                           "  bb = f32[] multiply(b, b)\n  ROOT s = f32[] add(a, bb)\n}\n"
                           "ENTRY e {\n  x = f32[2,3] parameter(0)\n"
                           "  one = f32[] constant(1)\n"
                           "  ROOT r = f32[2] reduce(x, one), dimensions={1}, to_apply=f\n}\n";
    expect_same(run1(sq, {make(HLO_F32, {2, 3}, {1, 2, 3, -1, 0, 4})}), {15, 18});
    // Variadic argmax (the first index of the maximum).
    const std::string am =
        "HloModule m\n"
        "f {\n  av = f32[] parameter(0)\n  ai = s32[] parameter(1)\n"
        "  bv = f32[] parameter(2)\n  bi = s32[] parameter(3)\n"
        "  gt = pred[] compare(bv, av), direction=GT\n"
        "  v = f32[] select(gt, bv, av)\n  i = s32[] select(gt, bi, ai)\n"
        "  ROOT t = (f32[], s32[]) tuple(v, i)\n}\n"
        "ENTRY e {\n  x = f32[2,3] parameter(0)\n"
        "  io = s32[2,3] iota(), iota_dimension=1\n"
        "  lo = f32[] constant(-inf)\n  z = s32[] constant(0)\n"
        "  ROOT r = (f32[2], s32[2]) reduce(x, io, lo, z), dimensions={1}, to_apply=f\n}\n";
    auto r = run(am, {make(HLO_F32, {2, 3}, {1, 5, 5, -1, -3, 0})});
    ASSERT_EQ(r.err, "");
    expect_same(r.out[0], {5, 0});
    expect_same(r.out[1], {1, 2});
    // reduce-window with a max(acc, 2 x) reducer from 10.
    const std::string rw = "HloModule m\n"
                           "f {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                           "  b2 = f32[] add(b, b)\n  ROOT m = f32[] maximum(a, b2)\n}\n"
                           "ENTRY e {\n  x = f32[4] parameter(0)\n  i = f32[] constant(10)\n"
                           "  ROOT r = f32[3] reduce-window(x, i), window={size=2}, to_apply=f\n"
                           "}\n";
    expect_same(run1(rw, {make(HLO_F32, {4}, {1, 6, 2, 4})}), {12, 12, 10});
}

TEST(HloShapeOps, MapAndClamp)
{
    const std::string t = "HloModule m\n"
                          "f {\n  a = f32[] parameter(0)\n  b = s32[] parameter(1)\n"
                          "  c = f32[] convert(b)\n  ROOT s = f32[] multiply(a, c)\n}\n"
                          "ENTRY e {\n  x = f32[3] parameter(0)\n  y = s32[3] parameter(1)\n"
                          "  ROOT r = f32[3] map(x, y), dimensions={0}, to_apply=f\n}\n";
    expect_same(run1(t, {make(HLO_F32, {3}, {1.5, 2, -1}), make(HLO_S32, {3}, {2, 0, 3})}),
                {3, 0, -3});
    const std::string c = entry("  lo = f32[] parameter(0)\n  x = f32[4] parameter(1)\n"
                                "  hi = f32[4] parameter(2)\n"
                                "  ROOT r = f32[4] clamp(lo, x, hi)\n");
    expect_same(run1(c, {make(HLO_F32, {}, {0}), make(HLO_F32, {4}, {-1, 0.5, 7, kNaN}),
                         make(HLO_F32, {4}, {1, 1, 5, 1})}),
                {0, 0.5, 5, kNaN});
}

// ------------------------------------------------------------------ errors --

TEST(HloShapeOps, MalformedAttributesAreLocatedErrors)
{
    struct Case {
        std::string body, at, msg;
    };
    const std::vector<Case> cases = {
        {"  a = f32[2] parameter(0)\n  ROOT r = f32[4] concatenate(a, a)\n",
         "r =", "concatenate: dimensions must name one dimension"},
        {"  a = f32[2] parameter(0)\n  b = f32[2,1] parameter(1)\n"
         "  ROOT r = f32[4] concatenate(a, b), dimensions={0}\n",
         "r =", "concatenate: operand 1 is f32[2,1], does not match operand 0 f32[2] but in dim 0"},
        {"  a = f32[4] parameter(0)\n  ROOT r = f32[2] slice(a), slice={[3:5]}\n",
         "r =", "slice: dim 0: slice [3:5] is not within 0..4"},
        {"  a = f32[4] parameter(0)\n  ROOT r = f32[3] slice(a), slice={[0:3:2]}\n",
         "r =", "slice: result f32[3], expected f32[2]"},
        {"  a = f32[4] parameter(0)\n  ROOT r = f32[4] reverse(a), dimensions={1}\n",
         "r =", "reverse: dimension 1 out of range for rank 1"},
        {"  a = f32[4] parameter(0)\n  i = f32[] parameter(1)\n"
         "  ROOT r = f32[2] dynamic-slice(a, i), dynamic_slice_sizes={2}\n",
         "r =",
         "dynamic-slice: start index 0 is f32[], must be an integer scalar like the first, "
         "f32[]"},
        {"  a = f32[4] parameter(0)\n  i = s32[] parameter(1)\n"
         "  ROOT r = f32[5] dynamic-slice(a, i), dynamic_slice_sizes={5}\n",
         "r =", "dynamic-slice: dynamic_slice_sizes[0] = 5 exceeds the operand's dim 4"},
        {"  a = f32[4] parameter(0)\n  i = s32[] parameter(1)\n"
         "  ROOT r = f32[2] dynamic-slice(a, i, i), dynamic_slice_sizes={2}\n",
         "r =", "dynamic-slice: expects 1 start indices (the operand's rank), has 2"},
        {"  a = f32[4] parameter(0)\n  u = f32[5] parameter(1)\n  i = s32[] parameter(2)\n"
         "  ROOT r = f32[4] dynamic-update-slice(a, u, i)\n",
         "r =", "dynamic-update-slice: update f32[5] does not fit in the operand f32[4]"},
        {"  w = f32[4,3] parameter(0)\n  i = s32[2] parameter(1)\n"
         "  ROOT g = f32[2,3] gather(w, i), offset_dims={1}, collapsed_slice_dims={0}, "
         "start_index_map={0}, slice_sizes={1,3}\n",
         "g =", "gather: missing index_vector_dim"},
        {"  w = f32[4,3] parameter(0)\n  i = s32[2] parameter(1)\n"
         "  ROOT g = f32[2,3] gather(w, i), offset_dims={1}, collapsed_slice_dims={0}, "
         "start_index_map={0}, index_vector_dim=1, slice_sizes={2,3}\n",
         "g =", "gather: dim 0 is collapsed or batching but its slice size is 2, not 1"},
        {"  w = f32[4,3] parameter(0)\n  i = s32[2] parameter(1)\n"
         "  ROOT g = f32[2,3] gather(w, i), offset_dims={1}, collapsed_slice_dims={0}, "
         "start_index_map={0}, index_vector_dim=1, slice_sizes={0,3}\n",
         "g =", "gather: dim 0 is collapsed or batching but its slice size is 0, not 1"},
        {"  w = f32[4,3] parameter(0)\n  i = s32[2] parameter(1)\n"
         "  ROOT g = f32[2,2] gather(w, i), offset_dims={1}, collapsed_slice_dims={0}, "
         "start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}\n",
         "g =", "gather: result f32[2,2], expected f32[2,3]"},
        {"  w = f32[4,3] parameter(0)\n  i = s32[2] parameter(1)\n"
         "  ROOT g = f32[2,3] gather(w, i), offset_dims={1}, collapsed_slice_dims={0}, "
         "start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,3}\n",
         "g =", "gather: start_index_map has 2 entries but index vectors have 1"},
        {"  x = f32[4] parameter(0)\n  i = s32[2] parameter(1)\n"
         "  ROOT r = f32[4] scatter(x, i, x, i, x), update_window_dims={}, "
         "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1\n",
         "r =",
         "scatter: expects an operand, indices and updates (variadic scatter is not "
         "supported), has 5 operands"},
    };
    for (const Case &c : cases) {
        const std::string t = entry(c.body);
        EXPECT_EQ(check_error(t), at(t, c.at) + c.msg) << c.body;
    }
}

TEST(HloShapeOps, MalformedCallsAreLocatedErrors)
{
    // A comparator that does not return pred[].
    const std::string sort = "HloModule m\n"
                             "f {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                             "  ROOT s = f32[] add(a, b)\n}\n"
                             "ENTRY e {\n  k = f32[3] parameter(0)\n"
                             "  ROOT s = f32[3] sort(k), dimensions={0}, to_apply=f\n}\n";
    EXPECT_EQ(check_error(sort),
              at(sort, "s = f32[3]") + "sort: to_apply 'f' returns f32[], must return pred[]");
    // Updates whose scatter dims are not the indices' batch dims.
    const std::string sc = "HloModule m\n"
                           "f {\n  a = f32[] parameter(0)\n  ROOT b = f32[] parameter(1)\n}\n"
                           "ENTRY e {\n  x = f32[4] parameter(0)\n  i = s32[2] parameter(1)\n"
                           "  u = f32[3] parameter(2)\n"
                           "  ROOT r = f32[4] scatter(x, i, u), update_window_dims={}, "
                           "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                           "index_vector_dim=1, to_apply=f\n}\n";
    EXPECT_EQ(check_error(sc),
              at(sc, "r =") + "scatter: updates dim 0 has size 3, not the indices' 2");
    // A body returning another state.
    const std::string w = "HloModule m\n"
                          "c {\n  s = s32[] parameter(0)\n  ROOT p = pred[] constant(false)\n}\n"
                          "b {\n  s = s32[] parameter(0)\n  ROOT n = f32[] convert(s)\n}\n"
                          "ENTRY e {\n  z = s32[] parameter(0)\n"
                          "  ROOT w = s32[] while(z), condition=c, body=b\n}\n";
    EXPECT_EQ(check_error(w), at(w, "w =") + "while: body 'b' returns f32[], must return s32[]");
    const std::string nob = "HloModule m\n"
                            "c {\n  s = s32[] parameter(0)\n  ROOT p = pred[] constant(false)\n}\n"
                            "ENTRY e {\n  z = s32[] parameter(0)\n"
                            "  ROOT w = s32[] while(z), condition=c\n}\n";
    EXPECT_EQ(check_error(nob), at(nob, "w =") + "while: missing body");
    // A float branch index; a missing false_computation; a branch taking the wrong operand.
    const std::string base = "HloModule m\n" + kBranches + "ENTRY e {\n";
    const std::string fi = base + "  i = f32[] parameter(0)\n  x = f32[2] parameter(1)\n"
                                  "  ROOT r = f32[2] conditional(i, x, x), "
                                  "branch_computations={double, negate}\n}\n";
    EXPECT_EQ(check_error(fi),
              at(fi, "r =") + "conditional: branch index f32[] must be s32[], or pred[] with two "
                              "branches");
    const std::string nf = base + "  c = pred[] parameter(0)\n  x = f32[2] parameter(1)\n"
                                  "  ROOT r = f32[2] conditional(c, x, x), "
                                  "true_computation=double\n}\n";
    EXPECT_EQ(check_error(nf), at(nf, "r =") + "conditional: missing false_computation");
    const std::string wo = base + "  i = s32[] parameter(0)\n  x = f32[2] parameter(1)\n"
                                  "  ROOT r = f32[2] conditional(i, x, x), "
                                  "branch_computations={double, first}\n}\n";
    EXPECT_EQ(check_error(wo), at(wo, "r =") + "conditional: parameter 0 of "
                                               "branch_computations[1] 'first' is (f32[2], "
                                               "f32[2]), must be f32[2]");
    // Parse errors: mixed branch forms, an unknown body, a bad is_stable.
    const std::string mix = base + "  c = pred[] parameter(0)\n  x = f32[2] parameter(1)\n"
                                   "  ROOT r = f32[2] conditional(c, x, x), "
                                   "true_computation=double, branch_computations={double}\n}\n";
    EXPECT_EQ(check_error(mix),
              at(mix, "branch_computations") + "duplicate attribute 'branch_computations'");
    const std::string unk = "HloModule m\nENTRY e {\n  z = s32[] parameter(0)\n"
                            "  ROOT w = s32[] while(z), condition=nowhere, body=nowhere\n}\n";
    EXPECT_EQ(check_error(unk), at(unk, "nowhere") + "unknown computation 'nowhere'");
    const std::string st = kLess + "ENTRY e {\n  k = f32[3] parameter(0)\n"
                                   "  ROOT s = f32[3] sort(k), dimensions={0}, is_stable=maybe, "
                                   "to_apply=less\n}\n";
    EXPECT_EQ(check_error(st), at(st, "maybe") + "expected true or false, found 'maybe'");
}

// ---------------------------------------------------------------- printing --

// The module as hlo_print_computation writes it, every computation.
std::string print_module(const hlo_module *m)
{
    hlo_text t = {};
    for (int c = 0; c < m->n_comps; c++)
        hlo_print_computation(&t, m, c, nullptr);
    std::string s = t.s ? t.s : "";
    hlo_text_free(&t);
    return s;
}

TEST(HloShapeOps, PrintedSamplesParseBackTheSame)
{
    for (const char *name : ops_samples::kNames) {
        Parsed p(hlo_test::slurp(ops_samples::path(name, ".hlo")));
        ASSERT_NE(p.m, nullptr) << name << ": " << p.err.msg;
        const std::string once = print_module(p.m);
        Parsed q(once);
        ASSERT_NE(q.m, nullptr) << name << ": " << q.err.msg << "\n" << once;
        hlo_error e{};
        EXPECT_EQ(hlo_check(q.m, "printed", &e), 0) << name << ": " << e.msg;
        EXPECT_EQ(print_module(q.m), once) << name;
    }
}

// ------------------------------------------------------------- JAX samples --

TEST(HloShapeOps, JaxSamplesEvaluateToJaxResults)
{
    for (const char *name : ops_samples::kNames) {
        SCOPED_TRACE(name);
        ops_samples::expect_jax_result(name, hlo_test::slurp(ops_samples::path(name, ".hlo")),
                                       "module");
    }
}

} // namespace

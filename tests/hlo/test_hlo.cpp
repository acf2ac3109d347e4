// test_hlo.cpp - the XLA HLO text parser (hlo/hlo.h): one fixture per printing style (XLA
// dump, PyTorch/XLA, JAX short), every construct of the grammar, located errors for malformed
// input, and every truncation of every fixture (run under ASan with TPU_SANITIZE=ON).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "hlo/hlo.h"
#include "tests/support/hlo_test.h"

namespace
{

using hlo_test::at;
using hlo_test::entry;
using hlo_test::Parsed;
using hlo_test::slurp;

const std::string kFixtures = std::string(TPU_SOURCE_DIR) + "/tests/hlo/";

// Every tests/hlo/*.hlo: the three written for these tests and any real exports added there.
std::vector<std::string> fixture_names()
{
    std::vector<std::string> names;
    for (const auto &e : std::filesystem::directory_iterator(kFixtures))
        if (e.path().extension() == ".hlo")
            names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

#define PARSE(var, text) \
    Parsed var(text);    \
    ASSERT_NE(var.m, nullptr) << var.err.msg

std::vector<int64_t> ints(const hlo_ints &l) { return std::vector<int64_t>(l.v, l.v + l.n); }
std::vector<int64_t> dims(const hlo_shape &s)
{
    return std::vector<int64_t>(s.dims, s.dims + s.rank);
}
std::vector<double> lit(const hlo_instr &in)
{
    return std::vector<double>(in.literal, in.literal + in.n_literal);
}

// The parser's message for text, which must be rejected.
std::string error_of(const std::string &text)
{
    hlo_error err;
    hlo_module *m = hlo_parse(text.data(), text.size(), "t.hlo", &err);
    EXPECT_EQ(m, nullptr) << "accepted:\n" << text;
    hlo_module_free(m);
    return err.msg;
}

// ------------------------------------------------------------- fixtures --

TEST(HloFixtures, EveryFixtureParses)
{
    std::vector<std::string> names = fixture_names();
    for (const char *mine : {"mlp_xla_dump.hlo", "mlp_torch_xla.hlo", "mlp_jax.hlo"})
        EXPECT_NE(std::find(names.begin(), names.end(), mine), names.end()) << mine;
    for (const std::string &name : names) {
        hlo_error err;
        hlo_module *m = hlo_parse_file((kFixtures + name).c_str(), &err);
        ASSERT_NE(m, nullptr) << err.msg;
        const hlo_computation *e = hlo_entry(m);
        EXPECT_TRUE(e->is_entry) << name;
        EXPECT_GT(e->n_instrs, 0) << name;
        hlo_module_free(m);
    }
}

TEST(HloFixtures, XlaDump)
{
    std::string path = kFixtures + "mlp_xla_dump.hlo";
    hlo_error err;
    hlo_module *m = hlo_parse_file(path.c_str(), &err);
    ASSERT_NE(m, nullptr) << err.msg;
    hlo_module_free(m);

    PARSE(p, slurp(path));
    EXPECT_STREQ(p.m->name, "jit_predict");
    ASSERT_EQ(p.m->n_comps, 5);
    const hlo_computation *e = hlo_entry(p.m);
    EXPECT_STREQ(e->name, "main.49");
    EXPECT_TRUE(e->is_entry);
    EXPECT_EQ(e->n_instrs, 13);
    EXPECT_STREQ(e->instrs[e->root].name, "call.48");

    const hlo_instr &x = p.instr("main.49", "Arg_4.5");
    EXPECT_EQ(x.opcode, HLO_OP_PARAMETER);
    EXPECT_EQ(x.parameter_number, 4);
    EXPECT_EQ(dims(x.shape), (std::vector<int64_t>{1, 784}));
    EXPECT_EQ(x.shape.elements, 784);

    const hlo_instr &dot = p.instr("main.49", "dot.6");
    EXPECT_EQ(dot.opcode, HLO_OP_DOT);
    EXPECT_STREQ(dot.opcode_name, "dot");
    EXPECT_EQ(p.operand("main.49", "dot.6", 0), "Arg_4.5");
    EXPECT_EQ(p.operand("main.49", "dot.6", 1), "Arg_0.1");
    EXPECT_FALSE(dot.operands[0].has_shape);
    EXPECT_EQ(ints(dot.lhs_contracting_dims), std::vector<int64_t>{1});
    EXPECT_EQ(ints(dot.rhs_contracting_dims), std::vector<int64_t>{0});
    EXPECT_FALSE(dot.lhs_batch_dims.present);

    const hlo_instr &relu = p.instr("main.49", "call.14");
    EXPECT_EQ(relu.opcode, HLO_OP_CALL);
    EXPECT_STREQ(p.m->comps[relu.to_apply].name, "relu.9");
    EXPECT_STREQ(p.m->comps[p.instr("main.49", "call.48").to_apply].name, "log_softmax.24");

    const hlo_instr &neg_inf = p.instr("log_softmax.24", "constant.26");
    ASSERT_EQ(neg_inf.n_literal, 1u);
    EXPECT_TRUE(std::isinf(neg_inf.literal[0]) && neg_inf.literal[0] < 0);
    const hlo_instr &rmax = p.instr("log_softmax.24", "reduce.27");
    EXPECT_EQ(rmax.opcode, HLO_OP_REDUCE);
    EXPECT_EQ(ints(rmax.dimensions), std::vector<int64_t>{1});
    EXPECT_STREQ(p.m->comps[rmax.to_apply].name, "region_0.20");
    const hlo_instr &fin = p.instr("log_softmax.24", "is-finite.29");
    EXPECT_EQ(fin.opcode, HLO_OP_IS_FINITE);
    EXPECT_STREQ(fin.opcode_name, "is-finite");
    EXPECT_EQ(fin.shape.type, HLO_PRED);
    EXPECT_EQ(p.operand("log_softmax.24", "select.32", 0), "is-finite.29");
    const hlo_instr &bc = p.instr("relu.9", "broadcast.12");
    EXPECT_TRUE(bc.dimensions.present);
    EXPECT_EQ(bc.dimensions.n, 0);
}

TEST(HloFixtures, TorchXla)
{
    PARSE(p, slurp(kFixtures + "mlp_torch_xla.hlo"));
    EXPECT_STREQ(p.m->name, "IrToHlo.40");
    ASSERT_EQ(p.m->n_comps, 3);
    const hlo_computation *e = hlo_entry(p.m);
    EXPECT_STREQ(e->name, "IrToHlo.40");

    const hlo_instr &t = p.instr("IrToHlo.40", "transpose.6");
    EXPECT_EQ(t.opcode, HLO_OP_TRANSPOSE);
    EXPECT_EQ(ints(t.dimensions), (std::vector<int64_t>{1, 0}));
    ASSERT_EQ(t.n_operands, 1);
    EXPECT_TRUE(t.operands[0].has_shape);
    EXPECT_EQ(dims(t.operands[0].shape), (std::vector<int64_t>{128, 784}));

    const hlo_instr &dot = p.instr("IrToHlo.40", "dot.7");
    EXPECT_EQ(p.operand("IrToHlo.40", "dot.7", 0), "p4.5");
    EXPECT_EQ(p.operand("IrToHlo.40", "dot.7", 1), "transpose.6");
    EXPECT_EQ(dims(dot.operands[1].shape), (std::vector<int64_t>{784, 128}));
    EXPECT_EQ(dims(dot.shape), (std::vector<int64_t>{32, 128}));

    const hlo_instr &root = e->instrs[e->root];
    EXPECT_STREQ(root.name, "tuple.38");
    EXPECT_EQ(root.opcode, HLO_OP_TUPLE);
    ASSERT_EQ(root.shape.type, HLO_TUPLE);
    ASSERT_EQ(root.shape.n_tuple, 1);
    EXPECT_EQ(dims(root.shape.tuple[0]), (std::vector<int64_t>{32, 10}));
    EXPECT_EQ(root.operands[0].shape.type, HLO_F32);

    EXPECT_STREQ(p.m->comps[p.instr("IrToHlo.40", "reduce.25").to_apply].name, "MaxComputation.21");
    EXPECT_STREQ(p.m->comps[p.instr("IrToHlo.40", "reduce.34").to_apply].name, "AddComputation.30");
    EXPECT_EQ(p.instr("IrToHlo.40", "exponential.28").opcode, HLO_OP_EXPONENTIAL);
    EXPECT_EQ(lit(p.instr("IrToHlo.40", "constant.10")), std::vector<double>{0});
}

TEST(HloFixtures, JaxShort)
{
    PARSE(p, slurp(kFixtures + "mlp_jax.hlo"));
    EXPECT_STREQ(p.m->name, "jit_predict");
    ASSERT_EQ(p.m->n_comps, 5);
    EXPECT_STREQ(hlo_entry(p.m)->name, "main.37");
    const hlo_instr &call = p.instr("main.37", "call.14");
    EXPECT_STREQ(p.m->comps[call.to_apply].name, "relu.6");
    EXPECT_EQ(p.operand("main.37", "call.14", 0), "add.13");
    EXPECT_EQ(p.operand("main.37", "dot.11", 0), "Arg_4.5");
    EXPECT_EQ(p.instr("relu.6", "maximum.10").opcode, HLO_OP_MAXIMUM);
    const hlo_computation &ls = p.comp("log_softmax.20");
    EXPECT_STREQ(ls.instrs[ls.root].name, "subtract.35");
    EXPECT_FALSE(ls.is_entry);
    EXPECT_EQ(p.instr("main.37", "Arg_2.3").parameter_number, 2);
}

TEST(HloFixtures, JaxArgmax)
{
    // jnp.argmax(x, axis=1): a variadic reduce over (values, iota) with a tie-breaking reducer.
    PARSE(p, slurp(kFixtures + "jax_argmax.hlo"));
    EXPECT_STREQ(p.m->name, "jit_f");
    ASSERT_EQ(p.m->n_comps, 3);
    EXPECT_STREQ(hlo_entry(p.m)->name, "main.3");
    EXPECT_EQ(p.instr("region_0.1", "or.2").opcode, HLO_OP_OR);
    EXPECT_EQ(p.instr("region_0.1", "and.1").opcode, HLO_OP_AND);
    EXPECT_EQ(p.operand("region_0.1", "or.3", 1), "and.1");
    const hlo_instr &iota = p.instr("argmax.2", "iota.2");
    EXPECT_EQ(iota.opcode, HLO_OP_IOTA);
    EXPECT_EQ(iota.n_operands, 0);
    EXPECT_EQ(iota.iota_dimension, 0);
    const hlo_instr &r = p.instr("argmax.2", "reduce.11");
    EXPECT_EQ(r.opcode, HLO_OP_REDUCE);
    ASSERT_EQ(r.shape.type, HLO_TUPLE);
    ASSERT_EQ(r.shape.n_tuple, 2);
    EXPECT_EQ(r.shape.tuple[0].type, HLO_F32);
    EXPECT_EQ(r.shape.tuple[1].type, HLO_S32);
    EXPECT_EQ(dims(r.shape.tuple[1]), std::vector<int64_t>{4});
    EXPECT_EQ(r.n_operands, 4);
    EXPECT_EQ(p.operand("argmax.2", "reduce.11", 1), "iota.3");
    EXPECT_EQ(p.operand("argmax.2", "reduce.11", 3), "constant.2");
    EXPECT_EQ(r.to_apply, hlo_find_computation(p.m, "region_0.1"));
    EXPECT_EQ(r.iota_dimension, -1);
    EXPECT_EQ(p.instr("argmax.2", "reduce.13").index, 1);
}

// ------------------------------------------------------------ constructs --

TEST(HloConstructs, ShapesAndLayouts)
{
    PARSE(p, entry("  a = f32[1,784]{1,0} parameter(0)\n"
                   "  b = f32[8,128]{1,0:T(8,128)} parameter(1)\n"
                   "  c = bf16[2,3]{1,0:T(2,128)(2,1)} parameter(2)\n"
                   "  d = f32[] parameter(3)\n"
                   "  e = (f32[2]{0}, (s32[], pred[3]), token[]) parameter(4)\n"
                   "  f = s8[<=16,4] parameter(5)\n"
                   "  g = f32[0] parameter(6)\n"
                   "  h = () tuple()\n"
                   "  ROOT t = token[] after-all()\n"));
    EXPECT_EQ(dims(p.instr("main", "a").shape), (std::vector<int64_t>{1, 784}));
    EXPECT_EQ(dims(p.instr("main", "b").shape), (std::vector<int64_t>{8, 128}));
    EXPECT_EQ(p.instr("main", "c").shape.type, HLO_BF16);
    const hlo_shape &d = p.instr("main", "d").shape;
    EXPECT_EQ(d.rank, 0);
    EXPECT_EQ(d.elements, 1);
    const hlo_shape &e = p.instr("main", "e").shape;
    ASSERT_EQ(e.type, HLO_TUPLE);
    ASSERT_EQ(e.n_tuple, 3);
    EXPECT_EQ(e.tuple[0].dims[0], 2);
    ASSERT_EQ(e.tuple[1].type, HLO_TUPLE);
    ASSERT_EQ(e.tuple[1].n_tuple, 2);
    EXPECT_EQ(e.tuple[1].tuple[1].type, HLO_PRED);
    EXPECT_EQ(e.tuple[2].type, HLO_TOKEN);
    EXPECT_EQ(dims(p.instr("main", "f").shape), (std::vector<int64_t>{16, 4}));
    EXPECT_EQ(p.instr("main", "g").shape.elements, 0);
    EXPECT_EQ(p.instr("main", "h").shape.n_tuple, 0);
}

TEST(HloConstructs, ElementTypes)
{
    const char *names[] = {"pred", "s8",  "s16", "s32",  "s64", "u8", "u16",
                           "u32",  "u64", "f16", "bf16", "f32", "f64"};
    const hlo_type types[] = {HLO_PRED, HLO_S8,  HLO_S16, HLO_S32,  HLO_S64, HLO_U8, HLO_U16,
                              HLO_U32,  HLO_U64, HLO_F16, HLO_BF16, HLO_F32, HLO_F64};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        PARSE(p, entry(std::string("  ROOT x = ") + names[i] + "[3]{0} parameter(0)\n"));
        EXPECT_EQ(hlo_entry(p.m)->instrs[0].shape.type, types[i]) << names[i];
        EXPECT_STREQ(hlo_type_name(types[i]), names[i]);
    }
}

TEST(HloConstructs, NamesCommentsAndStrings)
{
    PARSE(p, "/* leading */ HloModule my-mod.1 // trailing\n"
             "ENTRY %main.3-x /* sig */ (Arg_0.1: f32[2]) -> f32[2] {\n"
             "  %Arg_0.1 = f32[2]{0} /*index=0*/ parameter(0), metadata={op_name=\"a{b\" "
             "source_file=\"//x/{y}.py\" source_line=3} // a } in a comment\n"
             "  ROOT %neg-1.2_b = f32[2]{0} negate(\n"
             "    /*index=0*/ %Arg_0.1), frontend_attributes={_x=\"}\\\"{\"}\n"
             "}\n");
    EXPECT_STREQ(p.m->name, "my-mod.1");
    const hlo_computation *e = hlo_entry(p.m);
    EXPECT_STREQ(e->name, "main.3-x");
    EXPECT_STREQ(e->instrs[e->root].name, "neg-1.2_b");
    EXPECT_EQ(e->instrs[1].opcode, HLO_OP_NEGATE);
    EXPECT_EQ(e->instrs[1].line, 4);
    EXPECT_EQ(e->instrs[1].col, 8);
}

TEST(HloConstructs, ScalarConstants)
{
    PARSE(p, entry("  a = f32[] constant(0)\n"
                   "  b = f32[] constant(-inf)\n"
                   "  c = f32[] constant(1e-05)\n"
                   "  d = pred[] constant(true)\n"
                   "  e = pred[] constant(false)\n"
                   "  f = f64[] constant(-2.5E+3)\n"
                   "  g = f32[] constant(nan)\n"
                   "  h = f32[] constant(inf)\n"
                   "  i = s32[] constant(-7)\n"
                   "  ROOT j = f32[] constant(.5)\n"));
    EXPECT_EQ(lit(p.instr("main", "a")), std::vector<double>{0});
    EXPECT_EQ(lit(p.instr("main", "b")), std::vector<double>{-INFINITY});
    EXPECT_EQ(lit(p.instr("main", "c")), std::vector<double>{1e-05});
    EXPECT_EQ(lit(p.instr("main", "d")), std::vector<double>{1});
    EXPECT_EQ(lit(p.instr("main", "e")), std::vector<double>{0});
    EXPECT_EQ(lit(p.instr("main", "f")), std::vector<double>{-2500});
    EXPECT_TRUE(std::isnan(p.instr("main", "g").literal[0]));
    EXPECT_EQ(lit(p.instr("main", "h")), std::vector<double>{INFINITY});
    EXPECT_EQ(lit(p.instr("main", "i")), std::vector<double>{-7});
    EXPECT_EQ(lit(p.instr("main", "j")), std::vector<double>{0.5});
    EXPECT_FALSE(p.instr("main", "a").literal_elided);
}

TEST(HloConstructs, ArrayAndElidedConstants)
{
    PARSE(p, entry("  a = s32[2,2]{1,0} constant({ {1, 2}, {3, 4} })\n"
                   "  b = f32[3]{0} constant({0.5, -1, 2e3})\n"
                   "  c = f32[784,128]{1,0} constant({...})\n"
                   "  d = f32[2,0]{1,0} constant({ {}, {} })\n"
                   "  e = pred[2]{0} constant({true, false})\n"
                   "  f = f32[0,3]{1,0} constant({})\n"
                   "  g = (f32[], s32[]) constant((1, 2))\n"
                   "  ROOT h = f32[1,1,2]{2,1,0} constant({ { {7, 8} } })\n"));
    EXPECT_EQ(lit(p.instr("main", "a")), (std::vector<double>{1, 2, 3, 4}));
    EXPECT_EQ(lit(p.instr("main", "b")), (std::vector<double>{0.5, -1, 2000}));
    const hlo_instr &c = p.instr("main", "c");
    EXPECT_TRUE(c.literal_elided);
    EXPECT_EQ(c.n_literal, 0u);
    EXPECT_EQ(c.literal, nullptr);
    EXPECT_EQ(p.instr("main", "d").n_literal, 0u);
    EXPECT_FALSE(p.instr("main", "d").literal_elided);
    EXPECT_EQ(lit(p.instr("main", "e")), (std::vector<double>{1, 0}));
    EXPECT_EQ(p.instr("main", "f").n_literal, 0u);
    EXPECT_TRUE(p.instr("main", "g").literal_elided);
    EXPECT_EQ(lit(p.instr("main", "h")), (std::vector<double>{7, 8}));
}

TEST(HloConstructs, KnownAttributes)
{
    PARSE(p, "HloModule m\n"
             "add_f32 {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
             "  ROOT s = f32[] add(x, y)\n}\n"
             "fused {\n  ROOT p = f32[4,4]{1,0} parameter(0)\n}\n"
             "ENTRY main {\n"
             "  a = s8[4,2,8]{2,1,0} parameter(0)\n"
             "  b = s8[4,8,3]{2,1,0} parameter(1)\n"
             "  d = s32[4,2,3]{2,1,0} dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, "
             "lhs_contracting_dims={2}, rhs_contracting_dims={1}, "
             "operand_precision={default,default}\n"
             "  z = s32[] constant(0)\n"
             "  r = s32[4]{0} reduce(d, z), dimensions={1,2}, to_apply=%add_f32\n"
             "  f = f32[4,4]{1,0} fusion(d), kind=kLoop, calls=fused\n"
             "  sl = s32[2,2,3]{2,1,0} slice(d), slice={[0:4:2], [0:2], [0:3:1]}\n"
             "  pd = s32[5,4,3]{2,1,0} pad(d, z), padding=0_1x1_1_0x-1_1_2\n"
             "  cmp = pred[4]{0} compare(r, r), comparison_direction=GT, type=TOTALORDER\n"
             "  t = (s32[4]{0}, pred[4]{0}) tuple(r, cmp)\n"
             "  ROOT g = pred[4]{0} get-tuple-element(t), index=1\n"
             "}\n");
    const hlo_instr &d = p.instr("main", "d");
    EXPECT_EQ(d.shape.type, HLO_S32);
    EXPECT_EQ(ints(d.lhs_batch_dims), std::vector<int64_t>{0});
    EXPECT_EQ(ints(d.rhs_batch_dims), std::vector<int64_t>{0});
    EXPECT_EQ(ints(d.lhs_contracting_dims), std::vector<int64_t>{2});
    EXPECT_EQ(ints(d.rhs_contracting_dims), std::vector<int64_t>{1});
    const hlo_instr &r = p.instr("main", "r");
    EXPECT_EQ(ints(r.dimensions), (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(r.to_apply, hlo_find_computation(p.m, "add_f32"));
    EXPECT_EQ(r.calls, -1);
    const hlo_instr &f = p.instr("main", "f");
    EXPECT_EQ(f.opcode, HLO_OP_FUSION);
    EXPECT_EQ(f.calls, hlo_find_computation(p.m, "fused"));
    EXPECT_EQ(f.to_apply, -1);
    const hlo_instr &sl = p.instr("main", "sl");
    EXPECT_EQ(ints(sl.slice_start), (std::vector<int64_t>{0, 0, 0}));
    EXPECT_EQ(ints(sl.slice_limit), (std::vector<int64_t>{4, 2, 3}));
    EXPECT_EQ(ints(sl.slice_stride), (std::vector<int64_t>{2, 1, 1}));
    const hlo_instr &pd = p.instr("main", "pd");
    EXPECT_EQ(ints(pd.pad_low), (std::vector<int64_t>{0, 1, -1}));
    EXPECT_EQ(ints(pd.pad_high), (std::vector<int64_t>{1, 1, 1}));
    EXPECT_EQ(ints(pd.pad_interior), (std::vector<int64_t>{0, 0, 2}));
    EXPECT_EQ(p.instr("main", "cmp").comparison_direction, HLO_CMP_GT);
    EXPECT_EQ(p.instr("main", "r").comparison_direction, HLO_CMP_NONE);
    const hlo_instr &g = p.instr("main", "g");
    EXPECT_EQ(g.opcode, HLO_OP_GET_TUPLE_ELEMENT);
    EXPECT_TRUE(g.has_index);
    EXPECT_EQ(g.index, 1);
    EXPECT_EQ(p.operand("main", "g", 0), "t");
}

// input_output_alias, as XLA prints it for donated arguments: output path, parameter, its path,
// the kind; every field kept.
TEST(HloConstructs, InputOutputAlias)
{
    PARSE(p, "HloModule m, input_output_alias={ {0}: (1, {}, may-alias), {1,0}: (0, {}), "
             "{2}: (2, {1}, must-alias) }, entry_computation_layout={(f32[2])->f32[2]}\n"
             "ENTRY main {\n  a = f32[2] parameter(0)\n  ROOT r = f32[2] negate(a)\n}\n");
    ASSERT_EQ(p.m->n_aliases, 3);
    const hlo_alias *a = p.m->aliases;
    EXPECT_EQ(ints(a[0].output), std::vector<int64_t>{0});
    EXPECT_EQ(a[0].param, 1);
    EXPECT_TRUE(a[0].param_index.present);
    EXPECT_EQ(a[0].param_index.n, 0);
    EXPECT_FALSE(a[0].must);
    EXPECT_EQ(a[0].line, 1);
    EXPECT_EQ(a[0].col, 35);
    EXPECT_EQ(ints(a[1].output), (std::vector<int64_t>{1, 0}));
    EXPECT_FALSE(a[1].must);
    EXPECT_EQ(ints(a[2].param_index), std::vector<int64_t>{1});
    EXPECT_TRUE(a[2].must);
    PARSE(none,
          "HloModule m, input_output_alias={}\nENTRY e {\n  ROOT a = f32[] parameter(0)\n}\n");
    EXPECT_EQ(none.m->n_aliases, 0);
    EXPECT_EQ(error_of("HloModule m, input_output_alias={ {0}: (0, {}, no-alias) }\nENTRY e {\n"
                       "  ROOT a = f32[] parameter(0)\n}\n"),
              "t.hlo:1:48: unknown alias kind 'no-alias' (expected may-alias or must-alias)");
    EXPECT_NE(error_of("HloModule m, input_output_alias={ {0} (0, {}) }\nENTRY e {\n"
                       "  ROOT a = f32[] parameter(0)\n}\n")
                  .find("after an alias's output index"),
              std::string::npos);
}

TEST(HloConstructs, SkippedAttributes)
{
    PARSE(p, "HloModule m, is_scheduled=true, entry_computation_layout={(f32[1,2]{1,0:T(8,128)}, "
             "/*index=1*/f32[])->(f32[1,2]{1,0})}, frontend_attributes={a=\"{\"}\n"
             "ENTRY main {\n"
             "  x = f32[1,3,3,2]{3,2,1,0} parameter(0), sharding={devices=[1,1,1,2]0,1}, "
             "parameter_replication={false}\n"
             "  w = f32[3,3,2,2]{3,2,1,0} parameter(1), sharding={replicated}\n"
             "  c = f32[1,3,3,2]{3,2,1,0} convolution(x, w), window={size=3x3 pad=1_1x1_1}, "
             "dim_labels=b01f_01io->b01f, backend_config={\"k\":[1,{\"x\":\"]\"}]}, "
             "metadata={op_type=\"Conv2D\" op_name=\"conv\"}\n"
             "  cc = f32[1,3,3,2]{3,2,1,0} custom-call(c), custom_call_target=\"Foo\", "
             "api_version=API_VERSION_STATUS_RETURNING, backend_config=\"{}\"\n"
             "  ROOT r = f32[1,3,3,2]{3,2,1,0} copy(cc), control-predecessors={c}\n"
             "}, execution_thread=\"main\"\n");
    const hlo_computation *e = hlo_entry(p.m);
    EXPECT_EQ(e->n_instrs, 5);
    EXPECT_EQ(p.instr("main", "c").opcode, HLO_OP_CONVOLUTION);
    EXPECT_EQ(p.instr("main", "cc").opcode, HLO_OP_CUSTOM_CALL);
    EXPECT_EQ(p.operand("main", "r", 0), "cc");
}

TEST(HloConstructs, CustomCallTargetAndDirection)
{
    // The target is kept with absl::CUnescape's escapes decoded; XLA spells compare's attribute
    // direction=, the older comparison_direction= is still read.
    PARSE(p, entry("  a = f32[2]{0} parameter(0)\n"
                   "  c0 = f32[2]{0} custom-call(a), custom_call_target=\"tpu.segment.0\", "
                   "backend_config=\"{}\"\n"
                   "  c1 = (f32[2]{0}, s8[]) custom-call(), "
                   "custom_call_target=\"q\\\"\\\\\\n\\t\\101\\x42\\7z\\377\\?\"\n"
                   "  n = f32[2]{0} negate(a), custom_call_target=\"not kept\"\n"
                   "  lt = pred[2]{0} compare(a, a), direction=LT, type=TOTALORDER\n"
                   "  ROOT ge = pred[2]{0} compare(a, a), comparison_direction=GE\n"));
    EXPECT_STREQ(p.instr("main", "c0").custom_call_target, "tpu.segment.0");
    EXPECT_STREQ(p.instr("main", "c1").custom_call_target, "q\"\\\n\tAB\az\xff?");
    EXPECT_EQ(p.instr("main", "c1").n_operands, 0);
    EXPECT_EQ(p.instr("main", "a").custom_call_target, nullptr);
    EXPECT_EQ(p.instr("main", "n").custom_call_target, nullptr);
    EXPECT_EQ(p.instr("main", "lt").comparison_direction, HLO_CMP_LT);
    EXPECT_EQ(p.instr("main", "ge").comparison_direction, HLO_CMP_GE);
}

TEST(HloConstructs, LogicalOpsAndIota)
{
    // iota_dimension is kept for iota only (-1 when absent or on another op); and, or, xor and
    // not have enum values under XLA's names.
    PARSE(p, entry("  i = s32[2,3]{1,0} iota(), iota_dimension=1\n"
                   "  j = f32[4]{0} iota(), iota_dimension=0, metadata={op_name=\"x\"}\n"
                   "  k = s32[4]{0} iota()\n"
                   "  a = s32[2,3]{1,0} and(i, i), iota_dimension=1\n"
                   "  o = s32[2,3]{1,0} or(i, a)\n"
                   "  x = s32[2,3]{1,0} xor(o, a)\n"
                   "  ROOT n = s32[2,3]{1,0} not(x)\n"));
    EXPECT_EQ(p.instr("main", "i").opcode, HLO_OP_IOTA);
    EXPECT_EQ(p.instr("main", "i").iota_dimension, 1);
    EXPECT_EQ(p.instr("main", "j").iota_dimension, 0);
    EXPECT_EQ(p.instr("main", "k").iota_dimension, -1);
    EXPECT_EQ(p.instr("main", "a").iota_dimension, -1);
    const char *names[] = {"a", "o", "x", "n"};
    const hlo_opcode ops[] = {HLO_OP_AND, HLO_OP_OR, HLO_OP_XOR, HLO_OP_NOT};
    for (int i = 0; i < 4; i++) {
        EXPECT_EQ(p.instr("main", names[i]).opcode, ops[i]) << names[i];
        EXPECT_STREQ(hlo_opcode_name(ops[i]), p.instr("main", names[i]).opcode_name);
    }
    EXPECT_EQ(p.instr("main", "n").n_operands, 1);
    EXPECT_EQ(p.operand("main", "o", 1), "a");
}

// A window's fields per dim, as {size, stride, pad_lo, pad_hi, lhs_dilate, rhs_dilate}.
std::vector<std::vector<int64_t>> window(const hlo_instr &in)
{
    std::vector<std::vector<int64_t>> w;
    for (int i = 0; in.window.present && i < in.window.rank; i++) {
        const hlo_window_dim &d = in.window.dims[i];
        w.push_back({d.size, d.stride, d.pad_lo, d.pad_hi, d.lhs_dilate, d.rhs_dilate});
    }
    return w;
}

// dim_labels as {batch or input feature, feature or output feature, spatial dims...} per operand.
std::vector<std::vector<int>> labels(const hlo_instr &in)
{
    const hlo_conv_dims &d = in.dim_labels;
    std::vector<int> a = {d.input_batch_dim, d.input_feature_dim},
                     k = {d.kernel_input_feature_dim, d.kernel_output_feature_dim},
                     o = {d.output_batch_dim, d.output_feature_dim};
    for (int i = 0; i < d.n_spatial; i++) {
        a.push_back(d.input_spatial_dims[i]);
        k.push_back(d.kernel_spatial_dims[i]);
        o.push_back(d.output_spatial_dims[i]);
    }
    return {a, k, o};
}

TEST(HloConstructs, ConvolutionAndReduceWindowAttributes)
{
    // As JAX, TF and PyTorch/XLA print them; fields in any order, defaults for those left out.
    PARSE(p, "HloModule m\n"
             "max {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
             "  ROOT m = f32[] maximum(x, y)\n}\n"
             "ENTRY main {\n"
             "  x = f32[1,28,28,1]{3,2,1,0} parameter(0)\n"
             "  w = f32[3,3,1,32]{3,2,1,0} parameter(1)\n"
             "  jax = f32[1,28,28,32]{3,2,1,0} convolution(x, w), window={size=3x3 pad=1_1x1_1}, "
             "dim_labels=b01f_01io->b01f\n"
             "  all = f32[1,28,28,32] convolution(x, w), window={rhs_dilate=2x1 pad=1_-1x0_2 "
             "lhs_dilate=1x3 size=3x2 stride=2x1}, dim_labels=b01f_01io->b01f, "
             "feature_group_count=4, batch_group_count=2, operand_precision={default,default}\n"
             "  pt = f32[4,32,26,26]{3,2,1,0} convolution(f32[4,1,28,28]{3,2,1,0} x, "
             "f32[32,1,3,3]{3,2,1,0} w), window={size=3x3}, dim_labels=bf01_oi01->bf01\n"
             "  one = f32[2,7,5] convolution(x, w), window={size=5 stride=2}, "
             "dim_labels=b0f_0io->b0f\n"
             "  zero = f32[2,3] convolution(x, w), window={}, dim_labels=bf_io->bf\n"
             "  none = f32[2,3] convolution(x, w), dim_labels=fb_oi->bf\n"
             "  odd = f32[2,3,4,5,6] convolution(x, w), window={size=1x2x3}, "
             "dim_labels=f201b_i0o12->0bf21\n"
             "  wide = f32[1] convolution(x, w), "
             "dim_labels=b0123456789:;<=f_i0123456789:;<=o->=<;:9876543210bf\n"
             "  k = f32[] constant(-inf)\n"
             "  rw = f32[1,14,14,32]{3,2,1,0} reduce-window(jax, k), "
             "window={size=1x2x2x1 stride=1x2x2x1}, to_apply=max, dim_labels=bf_io->bf\n"
             "  ROOT n = f32[2] negate(x), window={size=2}, feature_group_count=3, "
             "dim_labels=bf_io->bf\n"
             "}\n");
    using W = std::vector<std::vector<int64_t>>;
    using L = std::vector<std::vector<int>>;
    const hlo_instr &jax = p.instr("main", "jax");
    EXPECT_EQ(jax.opcode, HLO_OP_CONVOLUTION);
    EXPECT_TRUE(jax.window.present);
    EXPECT_EQ(window(jax), (W{{3, 1, 1, 1, 1, 1}, {3, 1, 1, 1, 1, 1}}));
    EXPECT_TRUE(jax.dim_labels.present);
    EXPECT_EQ(jax.dim_labels.n_spatial, 2);
    EXPECT_EQ(labels(jax), (L{{0, 3, 1, 2}, {2, 3, 0, 1}, {0, 3, 1, 2}}));
    EXPECT_EQ(jax.feature_group_count, 1);
    EXPECT_EQ(jax.batch_group_count, 1);
    const hlo_instr &all = p.instr("main", "all");
    EXPECT_EQ(window(all), (W{{3, 2, 1, -1, 1, 2}, {2, 1, 0, 2, 3, 1}}));
    EXPECT_EQ(all.feature_group_count, 4);
    EXPECT_EQ(all.batch_group_count, 2);
    const hlo_instr &pt = p.instr("main", "pt");
    EXPECT_EQ(labels(pt), (L{{0, 1, 2, 3}, {1, 0, 2, 3}, {0, 1, 2, 3}}));
    EXPECT_TRUE(pt.operands[1].has_shape);
    EXPECT_EQ(window(p.instr("main", "one")), (W{{5, 2, 0, 0, 1, 1}}));
    EXPECT_EQ(labels(p.instr("main", "one")), (L{{0, 2, 1}, {1, 2, 0}, {0, 2, 1}}));
    const hlo_instr &zero = p.instr("main", "zero"), &none = p.instr("main", "none");
    EXPECT_TRUE(zero.window.present);
    EXPECT_EQ(zero.window.rank, 0);
    EXPECT_FALSE(none.window.present);
    EXPECT_EQ(none.window.rank, 0);
    EXPECT_EQ(zero.dim_labels.n_spatial, 0);
    EXPECT_EQ(labels(none), (L{{1, 0}, {1, 0}, {0, 1}}));
    EXPECT_EQ(labels(p.instr("main", "odd")),
              (L{{4, 0, 2, 3, 1}, {0, 2, 1, 3, 4}, {1, 2, 0, 4, 3}}));
    // Spatial dims 10 to 13 are the characters after '9'.
    const hlo_instr &wide = p.instr("main", "wide");
    EXPECT_EQ(wide.dim_labels.n_spatial, HLO_MAX_RANK - 2);
    EXPECT_EQ(labels(wide)[0],
              (std::vector<int>{0, 15, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}));
    EXPECT_EQ(labels(wide)[2],
              (std::vector<int>{14, 15, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
    const hlo_instr &rw = p.instr("main", "rw");
    EXPECT_EQ(rw.opcode, HLO_OP_REDUCE_WINDOW);
    EXPECT_EQ(window(rw),
              (W{{1, 1, 0, 0, 1, 1}, {2, 2, 0, 0, 1, 1}, {2, 2, 0, 0, 1, 1}, {1, 1, 0, 0, 1, 1}}));
    EXPECT_EQ(rw.to_apply, hlo_find_computation(p.m, "max"));
    // Kept for the ops that have them only: skipped elsewhere, group counts 1.
    EXPECT_FALSE(rw.dim_labels.present);
    const hlo_instr &n = p.instr("main", "n");
    EXPECT_FALSE(n.window.present);
    EXPECT_FALSE(n.dim_labels.present);
    EXPECT_EQ(n.feature_group_count, 1);
    EXPECT_EQ(p.instr("main", "k").batch_group_count, 1);
}

TEST(HloConstructs, StackFrameTable)
{
    PARSE(p, "HloModule m, entry_computation_layout={(f32[2]{0})->f32[2]{0}}\n\n"
             "FileNames\n1 \"/tmp/a.py\"\n2 \"/tmp/{b}.py\"\n"
             "FunctionNames\n1 \"predict\"\n"
             "FileLocations\n1 {file_name_id=1 function_name_id=1 line=4 end_line=4 column=8 "
             "end_column=20}\n"
             "StackFrames\n1 {file_location_id=1 parent_frame_id=1}\n\n"
             "ENTRY main {\n  ROOT p = f32[2]{0} parameter(0), metadata={stack_frame_id=1}\n}\n");
    EXPECT_STREQ(hlo_entry(p.m)->name, "main");
}

TEST(HloConstructs, PermissiveOrderAndRoot)
{
    // Operands used before their definition, a computation referenced before its definition, no
    // ROOT (the last instruction is the root, as in XLA), no HloModule header.
    PARSE(p, "ENTRY %main {\n"
             "  %s = f32[] call(%x), to_apply=%later\n"
             "  %x = f32[] parameter(0)\n"
             "}\n"
             "%later {\n  %y = f32[] parameter(0)\n  %n = f32[] negate(%y)\n}\n");
    EXPECT_STREQ(p.m->name, "module_main");
    EXPECT_EQ(p.m->entry, 0);
    EXPECT_EQ(p.operand("main", "s", 0), "x");
    EXPECT_EQ(p.instr("main", "s").to_apply, 1);
    EXPECT_EQ(p.comp("main").root, 1);
    EXPECT_FALSE(p.instr("main", "x").is_root);
    EXPECT_EQ(p.comp("later").root, 1);
}

TEST(HloConstructs, OpcodeTable)
{
    EXPECT_STREQ(hlo_opcode_name(HLO_OP_GET_TUPLE_ELEMENT), "get-tuple-element");
    EXPECT_STREQ(hlo_opcode_name(HLO_OP_OTHER), "");
    PARSE(p, entry("  a = f32[2]{0} parameter(0)\n"
                   "  b = f32[2]{0} exponential(a)\n  c = f32[2]{0} log(b)\n"
                   "  d = f32[2]{0} rsqrt(c)\n  e = s8[2]{0} convert(d)\n"
                   "  f = f32[2]{0} some-future-op(a, b, c), new_attr={x}\n"
                   "  ROOT g = f32[2]{0} divide(a, f)\n"));
    EXPECT_EQ(p.instr("main", "b").opcode, HLO_OP_EXPONENTIAL);
    EXPECT_EQ(p.instr("main", "c").opcode, HLO_OP_LOG);
    EXPECT_EQ(p.instr("main", "d").opcode, HLO_OP_RSQRT);
    EXPECT_EQ(p.instr("main", "e").opcode, HLO_OP_CONVERT);
    EXPECT_EQ(p.instr("main", "f").opcode, HLO_OP_OTHER);
    EXPECT_STREQ(p.instr("main", "f").opcode_name, "some-future-op");
    EXPECT_EQ(p.instr("main", "f").n_operands, 3);
    EXPECT_EQ(p.instr("main", "g").opcode, HLO_OP_DIVIDE);
    for (int op = 1; op < HLO_OP_COUNT_; op++) {
        PARSE(q, entry(std::string("  ROOT a = f32[] ") + hlo_opcode_name((hlo_opcode)op) +
                       (op == HLO_OP_PARAMETER || op == HLO_OP_CONSTANT ? "(0)\n" : "()\n")));
        EXPECT_EQ(hlo_entry(q.m)->instrs[0].opcode, op) << hlo_opcode_name((hlo_opcode)op);
    }
}

// ---------------------------------------------------------------- errors --

TEST(HloErrors, Located)
{
    struct Case {
        std::string text, where, what;
    };
    const std::string ok_param = "  ROOT p = f32[2]{0} parameter(0)\n";
    const std::vector<Case> cases = {
        {"", "", "t.hlo:1:1: empty input: expected 'HloModule' or a computation"},
        {"  // only a comment\n", "", "t.hlo:2:1: empty input"},
        {"HloModule m\n", "", "t.hlo:2:1: expected a computation after the module header"},
        {"HloModule m\nENTRY main {\n  p = f32[2]{0} parameter(0)\n  q = f32[2]{0} negate(p", "",
         "t.hlo:4:25: expected ')' after operands, found end of input"},
        {"HloModule m\nENTRY main {\n  p = f32[2]{0} parameter(0)\n", "",
         "t.hlo:4:1: expected an instruction name, found end of input"},
        {entry("  p = f32[2]{0} parameter(0)\n  ROOT q = f32[2]{0} negate(pp)\n"), "pp)",
         "unknown operand 'pp' in computation 'main'"},
        {entry("  p = f32[] parameter(0)\n  ROOT q = f32[] call(p), to_apply=%nowhere\n"),
         "%nowhere", "unknown computation 'nowhere'"},
        {"HloModule m\nENTRY main {\n"
         "  ROOT p = f32[2]{0} parameter(0), metadata={op_name={\"x\"\n}\n",
         "", "t.hlo:5:1: unterminated '{' (opened at 3:45) in attribute value"},
        {entry("  ROOT p = f32[2]{0} parameter(0), sharding={devices=[2]0,1)\n"), ")\n",
         "expected '}' in attribute value, found ')'"},
        {entry("  ROOT p = f32[2]{0} parameter(0), metadata={op_name=\"x}\n}\n"), "\"x}",
         "unterminated string"},
        {entry("  ROOT c = f32[] constant(1.2.3)\n"), "1.2.3", "bad number '1.2.3' in constant"},
        {entry("  ROOT c = f32[] constant(0x10)\n"), "0x10", "bad number '0x10' in constant"},
        {entry("  ROOT c = f32[] constant(1e)\n"), "1e", "bad number '1e' in constant"},
        {entry("  ROOT p = f32[2a]{0} parameter(0)\n"), "2a",
         "bad integer '2a' for dimension size"},
        {entry("  ROOT p = f32[2]{0} parameter(x)\n"), "x)",
         "expected parameter number, found 'x'"},
        {entry("  ROOT p = f32[99999999999999999999] parameter(0)\n"), "999",
         "integer '99999999999999999999' out of range for dimension size"},
        {entry("  ROOT p = f32[4294967296] parameter(0)\n"), "429",
         "dimension size 4294967296 out of range [0, 2147483648]"},
        {entry("  ROOT p = f32[65536,65537] parameter(0)\n"), "65537",
         "shape has more than 2147483648 elements"},
        {entry("  ROOT p = f32[-1] parameter(0)\n"), "-1", "dimension size -1 out of range"},
        {entry("  ROOT p = f31[2]{0} parameter(0)\n"), "f31", "unknown element type 'f31'"},
        {entry("  ROOT p = parameter(0)\n"), "parameter",
         "expected a shape before opcode 'parameter'"},
        {entry("  ROOT p = f32 parameter(0)\n"), "parameter", "expected '[' after element type"},
        {entry("  ROOT p = f32[2 parameter(0)\n"), "parameter", "expected ']' in shape, found"},
        {"HloModule m\nENTRY a {\n" + ok_param + "}\nENTRY b {\n" + ok_param + "}\n", "ENTRY b",
         "second ENTRY computation 'b' (first is 'a' at 2:1)"},
        {"HloModule m\na {\n" + ok_param + "}\nb {\n" + ok_param + "}\n", "a {",
         "no computation is marked ENTRY"},
        {entry("  ROOT p = f32[2]{0} parameter(0)\n  ROOT q = f32[2]{0} negate(p)\n"), "ROOT q",
         "second ROOT in computation 'main' (first is 'p')"},
        {entry("  p = f32[2]{0} parameter(0)\n  p = f32[2]{0} negate(p)\n"), "p = f32[2]{0} n",
         "duplicate instruction name 'p' (first defined at 3:3)"},
        {"HloModule m\nENTRY a {\n" + ok_param + "}\na  {\n" + ok_param + "}\n", "a  {",
         "duplicate computation name 'a' (first defined at 2:7)"},
        {"HloModule m\nENTRY main {\n}\n", "}", "expected an instruction name, found '}'"},
        {entry("  ROOT c = f32[2,2]{1,0} constant({ {1, 2}, {3} })\n"), "{3}",
         "constant has 1 entries in dimension 1, shape has 2"},
        {entry("  ROOT c = f32[2]{0} constant(1)\n"), "1)", "expected '{' for an array constant"},
        {entry("  ROOT c = f32[] constant({1})\n"), "{1}",
         "expected a scalar constant for shape f32[]"},
        {entry("  ROOT c = f32[2]{0} constant({...)\n"), ")", "expected '}' after '...'"},
        {entry("  ROOT p = f32[2]{0} parameter(0) /* open\n"), "/* open", "unterminated comment"},
        {entry("  ROOT p = f32[] compare(p, p), comparison_direction=GTE\n"), "GTE",
         "unknown comparison_direction 'GTE'"},
        {entry("  ROOT p = f32[] add(p, p), dimensions={1}, dimensions={2}\n"), "dimensions={2}",
         "duplicate attribute 'dimensions'"},
        {entry("  ROOT p = f32[] compare(p, p), direction=LT, comparison_direction=LT\n"),
         "comparison_direction", "duplicate attribute 'comparison_direction'"},
        {entry("  ROOT c = f32[] custom-call(), custom_call_target=foo\n"), "foo",
         "expected a quoted custom_call_target, found 'foo'"},
        {entry("  ROOT c = f32[] custom-call(), custom_call_target=\"a\\qb\"\n"), "\\q",
         "unknown escape '\\q' in custom_call_target"},
        {entry("  ROOT c = f32[] custom-call(), custom_call_target=\"a\\000\"\n"), "\\000",
         "NUL character in custom_call_target"},
        {entry("  ROOT c = f32[] custom-call(), custom_call_target=\"\\x\"\n"), "\\x",
         "unknown escape '\\x' in custom_call_target"},
        {entry("  ROOT c = f32[] custom-call(), custom_call_target=\"\\777\"\n"), "\\777",
         "octal escape out of range in custom_call_target"},
        {entry("  ROOT c = f32[] custom-call(), custom_call_target=\"a\", "
               "custom_call_target=\"b\"\n"),
         "custom_call_target=\"b", "duplicate attribute 'custom_call_target'"},
        {entry("  ROOT i = s32[2] iota(), iota_dimension=0, iota_dimension=0\n"),
         "iota_dimension=0\n", "duplicate attribute 'iota_dimension'"},
        {entry("  ROOT i = s32[2] iota(), iota_dimension=-1\n"), "-1",
         "iota dimension -1 out of range [0, 2147483647]"},
        {entry("  ROOT i = s32[2] iota(), iota_dimension=x\n"), "x\n",
         "expected iota dimension, found 'x'"},
        {entry("  ROOT p = f32[] pad(p, p), padding=0_0x1\n"), "0_0x1", "bad padding '0_0x1'"},
        {entry("  ROOT p = f32[] slice(p), slice={[0:2:0]}\n"), "0]",
         "slice stride 0 out of range"},
        {entry("  ROOT c = f32[] convolution(), window={size=3x3 stride=2}\n"), "2}",
         "window stride has 1 dims but size has 2"},
        {entry("  ROOT c = f32[] convolution(), window={pad=0_0}\n"), "0_0",
         "window pad without size"},
        {entry("  ROOT c = f32[] reduce-window(), window={size=3 pad=0_0x1_1}\n"), "0_0x",
         "window pad has 2 dims but size has 1"},
        {entry("  ROOT c = f32[] convolution(), window={size=3x3 size=3x3}\n"), "size=3x3}",
         "window field 'size' given twice"},
        {entry("  ROOT c = f32[] convolution(), window={size=3 rhs_reversal=1}\n"), "rhs_rev",
         "unsupported window field 'rhs_reversal' (expected size, stride, pad, lhs_dilate or "
         "rhs_dilate)"},
        {entry("  ROOT c = f32[] convolution(), window={size=3x-3}\n"), "3x-3",
         "bad window size '3x-3'"},
        {entry("  ROOT c = f32[] convolution(), window={size=3x}\n"), "3x}",
         "bad window size '3x'"},
        {entry("  ROOT c = f32[] convolution(), window={size=3_1}\n"), "3_1",
         "bad window size '3_1'"},
        {entry("  ROOT c = f32[] convolution(), window={size=2147483649}\n"), "2147",
         "bad window size '2147483649'"},
        {entry("  ROOT c = f32[] convolution(), window={size=3 stride=1.5}\n"), "1.5",
         "bad window stride '1.5'"},
        {entry("  ROOT c = f32[] convolution(), window={size=3 lhs_dilate=-1}\n"), "-1}",
         "bad window lhs_dilate '-1'"},
        {entry("  ROOT c = f32[] convolution(), window={size=3x3 pad=1x1}\n"), "1x1",
         "bad window pad '1x1'"},
        {entry("  ROOT c = f32[] convolution(), window={size=3 pad=1_1_0}\n"), "1_1_0",
         "bad window pad '1_1_0'"},
        {entry("  ROOT c = f32[] convolution(), window=3x3\n"), "3x3",
         "expected '{' to open the window, found '3x3'"},
        {entry("  ROOT c = f32[] convolution(), window={size}\n"), "}",
         "expected '=' after window field, found '}'"},
        {entry("  ROOT c = f32[] convolution(), window={size=x3}\n"), "x3",
         "expected window dims such as 3x3, found 'x3'"},
        {entry("  ROOT c = f32[] convolution(), window={size=3 pad=a}\n"), "a}",
         "expected window pad such as 1_1x0_2, found 'a'"},
        {entry("  ROOT c = f32[] convolution(), window={3}\n"), "3}",
         "expected a window field (size, stride, pad, lhs_dilate, rhs_dilate) or '}', found '3'"},
        {entry("  ROOT c = f32[] convolution(), window={size=1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1}\n"),
         "1x1", "window has more than 16 dims"},
        {entry("  ROOT c = f32[] reduce-window(), window={size=3}, window={size=3}\n"),
         "window={size=3}\n", "duplicate attribute 'window'"},
        {entry("  ROOT c = f32[] convolution(), dim_labels=b01f_01io\n"), "b01f",
         "expected dim_labels such as b01f_01io->b01f, found 'b01f_01io'"},
        {entry("  ROOT c = f32[] convolution(), dim_labels=b01f->b01f\n"), "b01f",
         "expected dim_labels such as b01f_01io->b01f, found 'b01f->b01f'"},
        {entry("  ROOT c = f32[] convolution(), dim_labels={b01f}\n"), "{b01f",
         "expected dim_labels such as b01f_01io->b01f, found '{'"},
        {entry("  ROOT c = f32[] convolution(), dim_labels=b01f_01o->b01f\n"), "b01f",
         "dim_labels have 4 input, 3 kernel and 4 output dims: must be equal"},
        {entry("  ROOT c = f32[] convolution(), dim_labels=b_i->b\n"), "b_i",
         "dim_labels have 1 dims per operand, must be 2 to 16"},
        {entry("  ROOT c = f32[] convolution(), dim_labels=bx1f_01io->b01f\n"), "x1f",
         "'x' is not a dim of the input in dim_labels (b, f or spatial 0 to 1)"},
        {entry("  ROOT c = f32[] convolution(), dim_labels=b01f_02io->b01f\n"), "2io",
         "'2' is not a dim of the kernel in dim_labels (i, o or spatial 0 to 1)"},
        {entry("  ROOT c = f32[] convolution(), dim_labels=b00f_01io->b01f\n"), "0f_",
         "'0' repeated in the input's dim_labels"},
        {entry("  ROOT c = f32[] convolution(), dim_labels=bf_oo->bf\n"), "o->",
         "'o' repeated in the kernel's dim_labels"},
        {entry("  ROOT c = f32[] convolution(), dim_labels=bf_io->bi\n"), "i\n",
         "'i' is not a dim of the output in dim_labels (b or f)"},
        {entry("  ROOT c = f32[] convolution(), dim_labels=bf_io->bf, dim_labels=bf_io->bf\n"),
         "dim_labels=bf_io->bf\n", "duplicate attribute 'dim_labels'"},
        {entry("  ROOT c = f32[] convolution(), feature_group_count=0\n"), "0\n",
         "feature_group_count 0 out of range [1, 2147483648]"},
        {entry("  ROOT c = f32[] convolution(), batch_group_count=x\n"), "x\n",
         "expected batch_group_count, found 'x'"},
        {entry("  ROOT c = f32[] convolution(), batch_group_count=2, batch_group_count=2\n"),
         "batch_group_count=2\n", "duplicate attribute 'batch_group_count'"},
        {entry("  ROOT p = f32[] add(p p)\n"), "p)", "expected ')' after operands, found 'p'"},
        {entry("  ROOT p = f32[] add(p), metadata=\n"), "}", "expected attribute value, found '}'"},
        {entry("  ROOT p = f32[] add(%1)\n"), "%1", "expected a name after '%'"},
        {"HloModule m\nENTRY main (x f32[]) -> f32[] {\n" + ok_param + "}\n", "f32[]) ->",
         "expected ':' after parameter name, found 'f32'"},
        {"HloModule m\nENTRY main (x: f32[]) f32[] {\n" + ok_param + "}\n", "f32[] {",
         "expected '->' after computation parameters, found 'f32'"},
        {"HloModule m\nENTRY main\n" + ok_param + "}\n", "ROOT",
         "expected '{' to open the computation's instructions, found 'ROOT'"},
    };
    for (const Case &c : cases) {
        std::string want = c.where.empty() ? c.what : at(c.text, c.where) + c.what;
        std::string got = error_of(c.text);
        EXPECT_EQ(got.substr(0, want.size()), want) << "input:\n" << c.text;
    }
}

TEST(HloErrors, Limits)
{
    std::string deep = "f32[]";
    for (int i = 0; i < HLO_MAX_DEPTH + 1; i++)
        deep = "(" + deep + ")";
    EXPECT_NE(error_of(entry("  ROOT t = " + deep + " parameter(0)\n"))
                  .find("tuple shape nested deeper than 64"),
              std::string::npos);
    std::string nested = "{" + std::string(HLO_MAX_DEPTH + 1, '[') + "}";
    EXPECT_NE(error_of(entry("  ROOT p = f32[] parameter(0), x=" + nested + "\n"))
                  .find("attribute value nested deeper than 64"),
              std::string::npos);
    std::string rank17 = "f32[1";
    for (int i = 0; i < HLO_MAX_RANK; i++)
        rank17 += ",1";
    EXPECT_NE(error_of(entry("  ROOT p = " + rank17 + "] parameter(0)\n"))
                  .find("shape has more than 16 dimensions"),
              std::string::npos);
    std::string long_name(HLO_MAX_NAME + 1, 'a');
    std::string text = entry("  ROOT " + long_name + " = f32[] parameter(0)\n");
    EXPECT_EQ(error_of(text), at(text, long_name) + "name longer than 1024 bytes");
    PARSE(ok, entry("  ROOT " + long_name.substr(1) + " = f32[] parameter(0)\n"));
    PARSE(big, entry("  ROOT p = f32[32768,65536] parameter(0)\n"));
    EXPECT_EQ(hlo_entry(big.m)->instrs[0].shape.elements, int64_t(1) << 31);
}

TEST(HloErrors, FileErrorsAndNullErr)
{
    hlo_error err;
    EXPECT_EQ(hlo_parse_file("/nonexistent/x.hlo", &err), nullptr);
    EXPECT_EQ(std::string(err.msg).rfind("/nonexistent/x.hlo: cannot read file", 0), 0u) << err.msg;
    EXPECT_EQ(hlo_parse("garbage", 7, nullptr, nullptr), nullptr);
    EXPECT_EQ(hlo_parse(nullptr, 0, nullptr, &err), nullptr);
    EXPECT_STREQ(err.msg, "<input>:1:1: empty input: expected 'HloModule' or a computation");
}

// The libFuzzer find of issue 13: a padding value ending in '_' at the very end of the buffer
// read one byte past it. An exact-size heap copy lets ASan see any such read.
TEST(HloErrors, PaddingEndingInUnderscoreAtTheEnd)
{
    for (const std::string text :
         {"HloM1F{\nt = f32[]at(t2),padding=08_",
          "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT q = f32[3] pad(p, p), padding=0_"}) {
        std::vector<char> buf(text.begin(), text.end());
        hlo_error err;
        EXPECT_EQ(hlo_parse(buf.data(), buf.size(), "f", &err), nullptr) << text;
        EXPECT_NE(std::string(err.msg).find("bad padding"), std::string::npos) << err.msg;
    }
}

// Bytes of the input quoted in a message are escaped: one error is one printable line.
TEST(HloErrors, MessagesArePrintable)
{
    const std::string text = "ENTRY e {\n  p = f32[2] parameter(0), padding=0\x01\xff\n";
    hlo_error err;
    EXPECT_EQ(hlo_parse(text.data(), text.size(), "bad\nname.hlo", &err), nullptr);
    const std::string msg = err.msg;
    EXPECT_EQ(msg.rfind("bad\\nname.hlo:2:", 0), 0u) << msg;
    for (unsigned char c : msg)
        EXPECT_TRUE(c >= 0x20 && c < 0x7f) << msg;
}

// Every prefix of every fixture: parsed or rejected with a located message, never a crash or leak.
TEST(HloErrors, EveryTruncation)
{
    for (const std::string &name : fixture_names()) {
        std::string text = slurp(kFixtures + name);
        ASSERT_FALSE(text.empty()) << name;
        size_t accepted = 0;
        for (size_t n = 0; n <= text.size(); n++) {
            // A copy of exactly n bytes, so reading past the end is caught by ASan.
            std::vector<char> buf(text.begin(), text.begin() + n);
            hlo_error err;
            hlo_module *m = hlo_parse(buf.data(), n, name.c_str(), &err);
            if (m) {
                accepted++;
                hlo_module_free(m);
            } else {
                ASSERT_EQ(std::string(err.msg).rfind(name + ":", 0), 0u) << err.msg;
                ASSERT_GE(err.line, 1) << err.msg;
                ASSERT_GE(err.col, 1) << err.msg;
            }
        }
        // The full text parses, and so do the prefixes ending just after the final '}'.
        EXPECT_GE(accepted, 1u) << name;
        EXPECT_LE(accepted, 3u) << name;
    }
}

} // namespace

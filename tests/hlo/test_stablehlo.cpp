// test_stablehlo.cpp - hlo_parse on StableHLO (MLIR text): JAX's samples (tests/hlo/stablehlo,
// generate.py) in the pretty and the generic syntax evaluate bit for bit as the same functions
// lowered to XLA's HLO; the attributes and parameter names read; located errors on bad text.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "hlo/hlo.h"
#include "tests/support/hlo_test.h"

using namespace hlo_test;

namespace
{

const std::string kDir = kSrc + "tests/hlo/stablehlo/";

// Random arguments of a module's ENTRY parameters, the same for the same seed and shapes.
std::vector<hlo_array *> random_args(const hlo_module *m, unsigned seed)
{
    const hlo_computation *c = hlo_entry(m);
    std::vector<const hlo_shape *> shapes;
    for (int i = 0; i < c->n_instrs; i++) {
        const hlo_instr &in = c->instrs[i];
        if (in.opcode != HLO_OP_PARAMETER)
            continue;
        if ((size_t)in.parameter_number >= shapes.size())
            shapes.resize((size_t)in.parameter_number + 1, nullptr);
        shapes[(size_t)in.parameter_number] = &in.shape;
    }
    std::vector<hlo_array *> args;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> f(-2, 2);
    std::uniform_int_distribution<int> n(-5, 5);
    for (const hlo_shape *sh : shapes) {
        std::vector<double> v((size_t)sh->elements);
        for (double &x : v)
            x = sh->type == HLO_F32 ? (double)(float)f(rng) : n(rng);
        args.push_back(make(sh->type, std::vector<int64_t>(sh->dims, sh->dims + sh->rank), v));
    }
    return args;
}

// Parses and checks a file, evaluates it on random arguments: the outputs, or a failure.
Result eval_file(const std::string &name, unsigned seed)
{
    Result r;
    hlo_error err{};
    hlo_module *m = hlo_parse_file((kDir + name).c_str(), &err);
    EXPECT_NE(m, nullptr) << err.msg;
    if (!m)
        return r;
    if (hlo_check(m, name.c_str(), &err)) {
        r.err = err.msg;
        hlo_module_free(m);
        return r;
    }
    std::vector<hlo_array *> args = random_args(m, seed);
    hlo_array **outs = nullptr;
    int n = 0;
    if (hlo_eval(m, name.c_str(), args.data(), (int)args.size(), &outs, &n, &err)) {
        r.err = err.msg;
    } else {
        for (int i = 0; i < n; i++) {
            r.out.push_back(values(outs[i]));
            r.dims.push_back(dims_of(outs[i]));
            r.types.push_back(outs[i]->shape.type);
        }
    }
    hlo_arrays_free(outs, n);
    for (hlo_array *a : args)
        hlo_array_free(a);
    hlo_module_free(m);
    return r;
}

struct Sample {
    const char *name;
    std::vector<const char *> variants; // the StableHLO files besides <name>.mlir
};

const Sample kSamples[] = {
    {"mlp", {"mlp.loc.mlir", "mlp.generic.mlir"}},
    {"mnist_mlp", {"mnist_mlp.loc.mlir"}},
    {"cnn", {"cnn.generic.mlir"}},
    {"softmax", {}},
    {"layernorm", {}},
    {"argmax", {"argmax.generic.mlir"}},
    {"misc", {"misc.generic.mlir"}},
    {"slicing", {"slicing.generic.mlir"}},
    {"sgd_step", {}},
    {"train_mlp_momentum", {}},
    {"train_mlp_adam", {}},
    {"train_cnn_momentum", {}},
    {"train_cnn_adam", {}},
};

// "rsqrt: unsupported op" of "f:L:C: rsqrt: unsupported op", or "" for other messages.
std::string unsupported(const std::string &msg)
{
    size_t end = msg.rfind(": unsupported op"), start = msg.rfind(": ", end - 1);
    return end == std::string::npos || start == std::string::npos ? "" : msg.substr(start + 2);
}

TEST(StableHlo, SamplesEvaluateAsTheirHlo)
{
    for (const Sample &s : kSamples) {
        std::vector<std::string> files = {std::string(s.name) + ".mlir"};
        files.insert(files.end(), s.variants.begin(), s.variants.end());
        for (unsigned seed = 1; seed <= 3; seed++) {
            Result want = eval_file(std::string(s.name) + ".hlo", seed);
            for (const std::string &f : files) {
                SCOPED_TRACE(f);
                Result got = eval_file(f, seed);
                if (!unsupported(want.err).empty()) { /* an op hlo_check does not know yet */
                    EXPECT_EQ(unsupported(got.err), unsupported(want.err)) << got.err;
                    continue;
                }
                ASSERT_EQ(want.err, "");
                ASSERT_EQ(got.err, "");
                ASSERT_EQ(got.out.size(), want.out.size());
                EXPECT_EQ(got.dims, want.dims);
                EXPECT_EQ(got.types, want.types);
                for (size_t i = 0; i < got.out.size(); i++)
                    expect_same(got.out[i], want.out[i]);
            }
        }
    }
}

// The ENTRY's parameters are named by their locations (JAX's argument names, sanitized as XLA
// does: params['w1'] -> params__w1__), Arg_<k> without one.
TEST(StableHlo, ParameterNames)
{
    Parsed named(slurp(kDir + "mlp.loc.mlir"));
    ASSERT_NE(named.m, nullptr) << named.err.msg;
    const hlo_computation *c = hlo_entry(named.m);
    const char *want[] = {"params__b1__", "params__b2__", "params__w1__", "params__w2__", "x"};
    for (int k = 0; k < 5; k++) {
        EXPECT_STREQ(c->instrs[k].name, want[k]);
        EXPECT_EQ(c->instrs[k].parameter_number, k);
    }
    Parsed bare(slurp(kDir + "mlp.mlir"));
    ASSERT_NE(bare.m, nullptr) << bare.err.msg;
    EXPECT_STREQ(hlo_entry(bare.m)->instrs[4].name, "Arg_4");
    EXPECT_STREQ(bare.m->name, "jit_mlp");
    // Duplicates stay unique; a leading digit gets a '_'.
    Parsed dup("func.func @main(%a: tensor<f32> loc(\"w\"), %b: tensor<f32> loc(\"w\"), "
               "%c: tensor<f32> loc(#l)) -> tensor<f32> {\n"
               "  %0 = stablehlo.add %a, %b : tensor<f32>\n  return %0 : tensor<f32>\n}\n"
               "#l = loc(\"0x\"(#m))\n");
    ASSERT_NE(dup.m, nullptr) << dup.err.msg;
    EXPECT_STREQ(hlo_entry(dup.m)->instrs[0].name, "w");
    EXPECT_STREQ(hlo_entry(dup.m)->instrs[1].name, "w.1");
    EXPECT_STREQ(hlo_entry(dup.m)->instrs[2].name, "_0x");
}

// A donated argument's tf.aliasing_output is the module's input_output_alias, as in the HLO JAX
// prints for the same step: result k of several, or the one result ({}).
TEST(StableHlo, DonatedArgumentsAlias)
{
    const auto aliases = [](const hlo_module *m) {
        std::vector<std::string> r;
        for (int i = 0; i < m->n_aliases; i++) {
            const hlo_alias &a = m->aliases[i];
            std::string s = "{";
            for (int d = 0; d < a.output.n; d++)
                s += (d ? "," : "") + std::to_string(a.output.v[d]);
            r.push_back(s + "}:" + std::to_string(a.param) + (a.must ? " must" : ""));
        }
        return r;
    };
    Parsed mlir(slurp(kDir + "sgd_step.mlir")), hlo(slurp(kDir + "sgd_step.hlo"));
    ASSERT_NE(mlir.m, nullptr) << mlir.err.msg;
    ASSERT_NE(hlo.m, nullptr) << hlo.err.msg;
    const std::vector<std::string> want = {"{0}:0", "{1}:1", "{2}:2", "{3}:3"};
    EXPECT_EQ(aliases(mlir.m), want);
    EXPECT_EQ(aliases(hlo.m), want);
    hlo_error err{};
    EXPECT_EQ(hlo_check(mlir.m, "sgd_step.mlir", &err), 0) << err.msg;
    Parsed one("func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32> {jax.buffer_donor = true, "
               "tf.aliasing_output = 0 : i32}) -> tensor<2xf32> {\n"
               "  %0 = stablehlo.add %a, %b : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n");
    ASSERT_NE(one.m, nullptr) << one.err.msg;
    EXPECT_EQ(aliases(one.m), std::vector<std::string>{"{}:1"});
    // An output the function does not have is hlo_check's error, located at the attribute.
    Parsed beyond("func.func @main(%a: tensor<2xf32> {tf.aliasing_output = 1 : i32}) -> "
                  "tensor<2xf32> {\n  return %a : tensor<2xf32>\n}\n");
    ASSERT_NE(beyond.m, nullptr) << beyond.err.msg;
    EXPECT_EQ(hlo_check(beyond.m, "t.mlir", &err), -1);
    EXPECT_STREQ(err.msg, "t.mlir:1:57: input_output_alias {1}: (0, {}): the ENTRY's result has "
                          "no such output (output -, parameter f32[2])");
}

// The attributes of both syntaxes land in the same hlo_instr fields.
TEST(StableHlo, Attributes)
{
    for (const char *f : {"cnn.mlir", "cnn.generic.mlir"}) {
        SCOPED_TRACE(f);
        Parsed p(slurp(kDir + f));
        ASSERT_NE(p.m, nullptr) << p.err.msg;
        const hlo_instr *conv = nullptr, *rw = nullptr;
        for (int c = 0; c < p.m->n_comps; c++)
            for (int i = 0; i < p.m->comps[c].n_instrs; i++) {
                const hlo_instr *in = &p.m->comps[c].instrs[i];
                if (in->opcode == HLO_OP_CONVOLUTION && !conv)
                    conv = in;
                if (in->opcode == HLO_OP_REDUCE_WINDOW)
                    rw = in;
            }
        ASSERT_TRUE(conv && rw);
        EXPECT_TRUE(conv->dim_labels.present);
        EXPECT_EQ(conv->dim_labels.n_spatial, 2);
        EXPECT_EQ(conv->dim_labels.input_batch_dim, 0);
        EXPECT_EQ(conv->dim_labels.input_feature_dim, 3);
        EXPECT_EQ(conv->dim_labels.kernel_input_feature_dim, 2);
        EXPECT_EQ(conv->dim_labels.kernel_output_feature_dim, 3);
        ASSERT_EQ(conv->window.rank, 2);
        EXPECT_EQ(conv->window.dims[0].size, 3);
        EXPECT_EQ(conv->window.dims[0].pad_lo, 1);
        EXPECT_EQ(conv->window.dims[1].pad_hi, 1);
        EXPECT_EQ(conv->feature_group_count, 1);
        ASSERT_EQ(rw->window.rank, 4);
        EXPECT_EQ(rw->window.dims[1].size, 2);
        EXPECT_EQ(rw->window.dims[1].stride, 2);
        EXPECT_GE(rw->to_apply, 0);
    }
    Parsed p("func.func @main(%x: tensor<2x3xf32>, %y: tensor<4x2x3xf32>) -> tensor<4x2x2xf32> {\n"
             "  %0 = \"stablehlo.dot_general\"(%y, %x) <{dot_dimension_numbers = "
             "#stablehlo.dot<lhs_batching_dimensions = [1], rhs_batching_dimensions = [0], "
             "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>}> : "
             "(tensor<4x2x3xf32>, tensor<2x3xf32>) -> tensor<2x4x2xf32>\n"
             "  %1 = stablehlo.transpose %0, dims = [1, 0, 2] : (tensor<2x4x2xf32>) -> "
             "tensor<4x2x2xf32>\n"
             "  %c = stablehlo.constant dense<\"0x0000803F000000C0\"> : tensor<2xf32>\n"
             "  %s = stablehlo.constant dense<true> : tensor<2x2xi1>\n"
             "  %h = stablehlo.constant dense<[[0x7F800000, -1.5e+00]]> : tensor<1x2xf32>\n"
             "  %w = stablehlo.constant dense<[-inf, nan, 0x00000001, 1]> : tensor<4xf32>\n"
             "  %i = stablehlo.constant dense<[0xFF, -128, 127]> : tensor<3xi8>\n"
             "  return %1 : tensor<4x2x2xf32>\n}\n");
    ASSERT_NE(p.m, nullptr) << p.err.msg;
    const hlo_computation *c = hlo_entry(p.m);
    const hlo_instr &dot = c->instrs[2];
    EXPECT_STREQ(dot.opcode_name, "dot");
    ASSERT_EQ(dot.lhs_batch_dims.n, 1);
    EXPECT_EQ(dot.lhs_batch_dims.v[0], 1);
    EXPECT_EQ(dot.rhs_contracting_dims.v[0], 1);
    EXPECT_EQ(c->instrs[3].dimensions.v[0], 1);
    const hlo_instr &blob = c->instrs[4];
    ASSERT_EQ(blob.n_literal, 2u);
    EXPECT_EQ(blob.literal[0], 1.0);
    EXPECT_EQ(blob.literal[1], -2.0);
    // A splat: a scalar constant broadcast to the shape.
    EXPECT_EQ(c->instrs[5].shape.rank, 0);
    EXPECT_EQ(c->instrs[5].literal[0], 1.0);
    EXPECT_EQ(c->instrs[6].opcode, HLO_OP_BROADCAST);
    EXPECT_EQ(c->instrs[6].shape.elements, 4);
    EXPECT_EQ(c->instrs[7].literal[0], kInf);
    EXPECT_EQ(c->instrs[7].literal[1], -1.5);
    EXPECT_EQ(c->instrs[8].literal[0], -kInf);
    EXPECT_TRUE(std::isnan(c->instrs[8].literal[1]));
    EXPECT_EQ(c->instrs[8].literal[2], std::ldexp(1.0, -149)); // the bits of the least f32
    EXPECT_EQ(c->instrs[8].literal[3], 1.0);
    EXPECT_EQ(c->instrs[9].literal[0], -1.0);
    EXPECT_EQ(c->instrs[9].literal[1], -128.0);
    EXPECT_EQ(c->root, 3);
}

// The instructions of a module with opcode op, in computation and text order.
std::vector<const hlo_instr *> find_ops(const hlo_module *m, hlo_opcode op)
{
    std::vector<const hlo_instr *> r;
    for (int c = 0; c < m->n_comps; c++)
        for (int i = 0; i < m->comps[c].n_instrs; i++)
            if (m->comps[c].instrs[i].opcode == op)
                r.push_back(&m->comps[c].instrs[i]);
    return r;
}

std::vector<int64_t> ints(const hlo_ints &l)
{
    EXPECT_TRUE(l.present);
    return std::vector<int64_t>(l.v, l.v + l.n);
}

// Slices, concatenate and pad (which hlo_check does not know yet, or which the samples
// evaluate only through a call) in both syntaxes.
TEST(StableHlo, SliceConcatenatePad)
{
    for (const char *f :
         {"slicing.mlir", "slicing.generic.mlir", "misc.mlir", "misc.generic.mlir"}) {
        SCOPED_TRACE(f);
        Parsed p(slurp(kDir + f));
        ASSERT_NE(p.m, nullptr) << p.err.msg;
        if (f[0] == 'm') {
            std::vector<const hlo_instr *> pad = find_ops(p.m, HLO_OP_PAD);
            ASSERT_EQ(pad.size(), 1u);
            EXPECT_EQ(ints(pad[0]->pad_low), (std::vector<int64_t>{1, 0}));
            EXPECT_EQ(ints(pad[0]->pad_high), (std::vector<int64_t>{0, 2}));
            EXPECT_EQ(ints(pad[0]->pad_interior), (std::vector<int64_t>{0, 0}));
            continue;
        }
        std::vector<const hlo_instr *> slice = find_ops(p.m, HLO_OP_SLICE);
        ASSERT_EQ(slice.size(), 2u);
        EXPECT_EQ(ints(slice[0]->slice_start), (std::vector<int64_t>{1, 0}));
        EXPECT_EQ(ints(slice[0]->slice_limit), (std::vector<int64_t>{3, 6}));
        EXPECT_EQ(ints(slice[0]->slice_stride), (std::vector<int64_t>{1, 2}));
        EXPECT_EQ(ints(slice[1]->slice_stride), (std::vector<int64_t>{1, 1}));
        std::vector<const hlo_instr *> cat = find_ops(p.m, HLO_OP_CONCATENATE);
        ASSERT_EQ(cat.size(), 1u);
        EXPECT_EQ(ints(cat[0]->dimensions), (std::vector<int64_t>{0}));
        EXPECT_EQ(cat[0]->n_operands, 2);
    }
}

// stablehlo.dot contracts the lhs's last dimension with the rhs's first; a splat constant
// evaluates as its broadcast.
TEST(StableHlo, DotAndSplatEvaluate)
{
    const std::string text =
        "func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x2xf32> {\n"
        "  %0 = stablehlo.dot %a, %b : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>\n"
        "  %c = stablehlo.constant dense<0.5> : tensor<2x2xf32>\n"
        "  %1 = stablehlo.add %0, %c : tensor<2x2xf32>\n"
        "  return %1 : tensor<2x2xf32>\n}\n";
    std::vector<double> got = run1(text, {make(HLO_F32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                                          make(HLO_F32, {3, 2}, {1, 0, 0, 1, 1, 1})});
    expect_same(got, {4.5, 5.5, 10.5, 11.5});
}

// torch-mlir's constants of arith (batch norm's epsilon, f64) read as stablehlo.constant.
TEST(StableHlo, ArithConstant)
{
    const std::string text =
        "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %c = arith.constant dense<1.000000e-05> : tensor<1xf64>\n"
        "  %0 = stablehlo.convert %c : (tensor<1xf64>) -> tensor<1xf32>\n"
        "  %1 = stablehlo.reshape %0 : (tensor<1xf32>) -> tensor<f32>\n"
        "  %2 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> tensor<2xf32>\n"
        "  %3 = stablehlo.add %x, %2 : tensor<2xf32>\n"
        "  return %3 : tensor<2xf32>\n}\n";
    expect_same(run1(text, {make(HLO_F32, {2}, {1, 2})}), {1 + 1e-5f, 2 + 1e-5f});
}

// Names that are not XLA's keep their spelling with '_' as '-'; hlo_check names the op.
TEST(StableHlo, OtherOpsAreKeptByName)
{
    const std::string text = "func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {\n"
                             "  %0 = chlo.erf %x : tensor<3xf32> -> tensor<3xf32>\n"
                             "  %1 = stablehlo.round_nearest_even %0 : tensor<3xf32>\n"
                             "  return %1 : tensor<3xf32>\n}\n";
    Parsed p(text);
    ASSERT_NE(p.m, nullptr) << p.err.msg;
    EXPECT_STREQ(hlo_entry(p.m)->instrs[1].opcode_name, "erf");
    EXPECT_STREQ(hlo_entry(p.m)->instrs[2].opcode_name, "round-nearest-even");
    Parsed q("func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {\n"
             "  %0 = stablehlo.frobnicate %x : tensor<3xf32>\n  return %0 : tensor<3xf32>\n}\n");
    ASSERT_NE(q.m, nullptr) << q.err.msg;
    EXPECT_EQ(hlo_entry(q.m)->instrs[1].opcode, HLO_OP_OTHER);
    hlo_error err{};
    EXPECT_EQ(hlo_check(q.m, "t.hlo", &err), -1);
    EXPECT_NE(std::string(err.msg).find("t.hlo:2:3: frobnicate: "), std::string::npos) << err.msg;
    // JAX's sort (generic syntax, a comparator region) parses and checks
    // (test_stablehlo_ops.cpp has the others).
    Parsed sort("func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {\n"
                "  %0 = \"stablehlo.sort\"(%x) <{dimension = 0 : i64, is_stable = true}> ({\n"
                "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
                "    %1 = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) "
                "-> tensor<i1>\n"
                "    stablehlo.return %1 : tensor<i1>\n"
                "  }) : (tensor<3xf32>) -> tensor<3xf32>\n"
                "  return %0 : tensor<3xf32>\n}\n");
    ASSERT_NE(sort.m, nullptr) << sort.err.msg;
    EXPECT_STREQ(hlo_entry(sort.m)->instrs[1].opcode_name, "sort");
    EXPECT_EQ(hlo_check(sort.m, "t.hlo", &err), 0) << err.msg;
    EXPECT_TRUE(hlo_entry(sort.m)->instrs[1].is_stable);
}

std::string parse_error(const std::string &text)
{
    hlo_error err{};
    hlo_module *m = hlo_parse(text.data(), text.size(), "t.hlo", &err);
    EXPECT_EQ(m, nullptr) << text;
    hlo_module_free(m);
    return err.msg;
}

const std::string kHead = "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n";

TEST(StableHlo, LocatedErrors)
{
    EXPECT_EQ(parse_error(kHead + "  %0 = stablehlo.add %x, %y : tensor<2xf32>\n"),
              "t.hlo:2:26: undefined value '%y'");
    EXPECT_EQ(parse_error(kHead + "  %0 = stablehlo.add %x, %x : tensor<2xq32>\n"),
              "t.hlo:2:40: unsupported element type 'q32'");
    EXPECT_EQ(parse_error(kHead + "  %0 = stablehlo.add %x, %x : tensor<2xf32>\n"),
              "t.hlo:3:1: expected an op name, found end of input");
    EXPECT_EQ(parse_error(kHead + "  %0 = stablehlo.add %x, %x : tensor<2xf32>\n}\n"),
              "t.hlo:1:53: region or function without a return");
    EXPECT_EQ(parse_error(kHead + "  %0 = stablehlo.add %x, %x : tensor<2xf32>\n"
                                  "  %0 = stablehlo.add %x, %x : tensor<2xf32>\n"),
              "t.hlo:3:3: value '%0' defined twice");
    EXPECT_EQ(parse_error(kHead + "  %0 = stablehlo.constant dense<[1.0]> : tensor<2xf32>\n"),
              "t.hlo:2:33: dense literal has 1 entries in dimension 0, type has 2");
    EXPECT_EQ(parse_error(kHead + "  %0 = stablehlo.constant dense<1.5> : tensor<2xi32>\n"),
              "t.hlo:2:33: bad integer '1.5' in dense literal");
    EXPECT_EQ(parse_error(kHead + "  %c = stablehlo.constant dense<0.0> : tensor<f32>\n"
                                  "  %0 = stablehlo.reduce(%x init: %c) across dimensions = [0] :"
                                  " (tensor<2xf32>, tensor<f32>) -> tensor<f32>\n"
                                  "   reducer(%a: tensor<f32>, %b: tensor<f32>) {\n"
                                  "    %1 = stablehlo.add %a, %x : tensor<f32>\n"),
              "t.hlo:5:28: value '%x' of an enclosing region used in a region (only case and "
              "if regions may use them)");
    EXPECT_EQ(parse_error(kHead + "  %0 = \"stablehlo.reduce\"(%x) ({\n  ^bb0(%a: tensor<f32>):\n"
                                  "  ^bb1:\n"),
              "t.hlo:4:3: regions of more than one block are not supported");
    EXPECT_EQ(parse_error(kHead + "  %0 = call @nowhere(%x) : (tensor<2xf32>) -> tensor<2xf32>\n"
                                  "  return %0 : tensor<2xf32>\n}\n"),
              "t.hlo:2:13: unknown function '@nowhere'");
    std::string deep = "tensor<f32>";
    for (int i = 0; i < 100; i++)
        deep = "tuple<" + deep + ">";
    EXPECT_NE(parse_error("func.func @main(%x: " + deep + ") -> f32 {\n}\n")
                  .find("type nested deeper than 64"),
              std::string::npos);
    EXPECT_EQ(parse_error("module {\n}\n"), "t.hlo:2:2: no func.func in the module");
    EXPECT_EQ(parse_error("func.func @main(%x: tensor<?xf32>) -> f32 {\n}\n"),
              "t.hlo:1:28: dynamic dimension '?' is not supported");
}

// Every prefix of a sample is an error, never a crash (the fuzzer goes further).
TEST(StableHlo, TruncatedTextIsAnError)
{
    for (const char *f : {"argmax.mlir", "cnn.generic.mlir"}) {
        const std::string text = slurp(kDir + f);
        size_t end = text.rfind('}');
        for (size_t n = 0; n < end; n++) {
            hlo_error err{};
            hlo_module *m = hlo_parse(text.data(), n, "t.hlo", &err);
            EXPECT_EQ(m, nullptr) << f << " cut at " << n;
            hlo_module_free(m);
            if (n > 0) {
                EXPECT_GT(err.line, 0) << err.msg;
            }
        }
    }
}

} // namespace

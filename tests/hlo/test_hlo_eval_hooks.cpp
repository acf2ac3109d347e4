// test_hlo_eval_hooks.cpp - the evaluator's custom-call and evaluated hooks (hlo_eval_with),
// hlo_macs, and single-instruction evaluation (hlo_eval_instr) agreeing with hlo_eval bit for
// bit, tuple-valued reduce included.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "hlo/hlo.h"
#include "tests/support/hlo_test.h"

namespace
{

using namespace hlo_test;

hlo_array *copy_of(const hlo_array *a)
{
    hlo_array *c = hlo_array_new(a->shape.type, a->shape.rank, a->shape.dims);
    std::memcpy(c->data, a->data, (size_t)a->shape.elements * hlo_type_size(a->shape.type));
    return c;
}

bool same_bits(const hlo_array *a, const hlo_array *b)
{
    return hlo_shape_equal(&a->shape, &b->shape) &&
           !std::memcmp(a->data, b->data, (size_t)a->shape.elements * hlo_type_size(a->shape.type));
}

// A custom_call hook standing in for device segments: tpu.segment.0 is a * 2 + b[0],
// tpu.segment.1 is the tuple (d + 1, d * d, {n_operands, 7}); `mode` makes it misbehave.
struct Segments {
    enum Mode { OK, FAIL, WRONG_SHAPE, NOTHING, ALIAS, TWICE } mode = OK;
    std::string msg; // FAIL's message
    std::vector<std::string> targets;
};

int segment_hook(void *ctx, const hlo_instr *in, hlo_array *const *ops, int n_ops, hlo_array **outs,
                 int n_outs, hlo_error *err)
{
    Segments *s = (Segments *)ctx;
    std::string target = in->custom_call_target;
    s->targets.push_back(target);
    const hlo_array *d = ops[0];
    auto f32 = [](const hlo_array *a) { return (const float *)a->data; };
    if (s->mode == Segments::FAIL) {
        outs[0] = copy_of(d); // made before failing: the evaluator frees it
        return hlo_errorf(err, "%s", s->msg.c_str());
    }
    if (target == "tpu.segment.0") {
        EXPECT_EQ(n_ops, 2);
        EXPECT_EQ(n_outs, 1);
        if (s->mode == Segments::NOTHING)
            return 0;
        if (s->mode == Segments::ALIAS) {
            outs[0] = ops[0];
            return 0;
        }
        int64_t two = 2;
        outs[0] = s->mode == Segments::WRONG_SHAPE ? hlo_array_new(HLO_F32, 1, &two) : copy_of(d);
        for (int64_t i = 0; i < outs[0]->shape.elements; i++)
            ((float *)outs[0]->data)[i] = f32(d)[i] * 2 + (float)((const int32_t *)ops[1]->data)[0];
        return 0;
    }
    EXPECT_EQ(target, "tpu.segment.1");
    EXPECT_EQ(n_ops, 1);
    EXPECT_EQ(n_outs, 3);
    int64_t two = 2;
    outs[0] = copy_of(d);
    outs[1] = s->mode == Segments::TWICE ? outs[0] : copy_of(d);
    outs[2] = hlo_array_new(HLO_S32, 1, &two);
    for (int64_t i = 0; i < d->shape.elements; i++) {
        ((float *)outs[0]->data)[i] = f32(d)[i] + 1;
        if (s->mode != Segments::TWICE)
            ((float *)outs[1]->data)[i] = f32(d)[i] * f32(d)[i];
    }
    ((int32_t *)outs[2]->data)[0] = n_ops;
    ((int32_t *)outs[2]->data)[1] = 7;
    return 0;
}

TEST(HloEvalHooks, CustomCall)
{
    const std::string text = entry(
        "  a = f32[3] parameter(0)\n  b = s32[2] parameter(1)\n"
        "  d = f32[3] custom-call(a, b), custom_call_target=\"tpu.segment.0\"\n"
        "  t = (f32[3], f32[3], s32[2]) custom-call(d), custom_call_target=\"tpu.segment.1\"\n"
        "  g = f32[3] get-tuple-element(t), index=1\n"
        "  h = s32[2] get-tuple-element(t), index=2\n"
        "  ROOT r = (f32[3], f32[3], s32[2]) tuple(d, g, h)\n");
    auto params = [] {
        return std::vector<hlo_array *>{make(HLO_F32, {3}, {1, -2, 0.5}),
                                        make(HLO_S32, {2}, {10, 20})};
    };
    Segments s;
    hlo_eval_hooks hooks{};
    hooks.ctx = &s;
    hooks.custom_call = segment_hook;
    Result r = run(text, params(), &hooks);
    ASSERT_EQ(r.err, "");
    ASSERT_EQ(r.out.size(), 3u);
    expect_same(r.out[0], {12, 6, 11});
    expect_same(r.out[1], {144, 36, 121});
    expect_same(r.out[2], {1, 7});
    EXPECT_EQ(s.targets, (std::vector<std::string>{"tpu.segment.0", "tpu.segment.1"}));

    // Without a hook; a hook's own error; results that break the contract. Every failure is
    // located at the custom-call (ASan checks that the hook's arrays are freed exactly once).
    const std::string d = at(text, "d =") + "custom-call: ", t = at(text, "t =") + "custom-call: ";
    EXPECT_EQ(run(text, params()).err,
              d + "no custom_call hook to evaluate target \"tpu.segment.0\"");
    struct Case {
        Segments::Mode mode;
        std::string msg, want;
    };
    const std::vector<Case> cases = {
        {Segments::FAIL, "segment 0: device timed out", d + "segment 0: device timed out"},
        {Segments::FAIL, "", d + "the hook failed without a message"},
        {Segments::WRONG_SHAPE, "",
         d + "the hook for target \"tpu.segment.0\" returned f32[2] for result 0, expected "
             "f32[3]"},
        {Segments::NOTHING, "",
         d + "the hook for target \"tpu.segment.0\" returned nothing for result 0, expected "
             "f32[3]"},
        {Segments::ALIAS, "",
         d + "the hook for target \"tpu.segment.0\" returned an operand or one array twice as "
             "result 0"},
        {Segments::TWICE, "",
         t + "the hook for target \"tpu.segment.1\" returned an operand or one array twice as "
             "result 1"},
    };
    for (const Case &c : cases) {
        Segments bad;
        bad.mode = c.mode;
        bad.msg = c.msg;
        hlo_eval_hooks h{};
        h.ctx = &bad;
        h.custom_call = segment_hook;
        EXPECT_EQ(run(text, params(), &h).err, c.want);
    }
}

TEST(HloEvalHooks, EvalInstrAgreesWithEvalForEveryOp)
{
    const std::string text = R"(HloModule m
ad {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
df {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] subtract(x, y)
}
ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[2,3] parameter(1)
  i = s8[2,3] parameter(2)
  k = f32[] constant(1.5)
  lit = f32[2,3] constant({ {1, 2, 3}, {4, 5, 6} })
  add = f32[2,3] add(a, b)
  sub = f32[2,3] subtract(a, lit)
  mul = f32[2,3] multiply(a, b)
  div = f32[2,3] divide(a, b)
  max = f32[2,3] maximum(a, b)
  min = f32[2,3] minimum(a, b)
  neg = f32[2,3] negate(a)
  exp = f32[2,3] exponential(a)
  log = f32[2,3] log(b)
  fin = pred[2,3] is-finite(log)
  cmp = pred[2,3] compare(a, b), direction=LT
  sel = f32[2,3] select(cmp, a, b)
  bc = f32[4,2,3] broadcast(a), dimensions={1,2}
  bs = f32[2,3] broadcast(k), dimensions={}
  rs = f32[3,2] reshape(a)
  tr = f32[3,2] transpose(a), dimensions={1,0}
  cv = s8[2,3] convert(a)
  imul = s8[2,3] multiply(i, cv)
  idot = s32[2,2] dot(i, cv), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  dot = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  rd = f32[2] reduce(a, k), dimensions={1}, to_apply=ad
  rg = f32[3] reduce(b, k), dimensions={0}, to_apply=df
  ROOT t = (f32[], f32[2,3], f32[2,3], f32[2,3], f32[2,3], f32[2,3], f32[2,3], f32[2,3],
            f32[2,3], f32[2,3], f32[2,3], pred[2,3], pred[2,3], f32[2,3], f32[4,2,3], f32[2,3],
            f32[3,2], f32[3,2], s8[2,3], s8[2,3], s32[2,2], f32[2,2], f32[2], f32[3])
      tuple(k, lit, add, sub, mul, div, max, min, neg, exp, log, fin, cmp, sel, bc, bs, rs, tr,
            cv, imul, idot, dot, rd, rg)
}
)";
    Parsed p(text);
    ASSERT_NE(p.m, nullptr) << p.err.msg;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-4, 4);
    std::vector<hlo_array *> params = {make(HLO_F32, {2, 3}, std::vector<double>(6)),
                                       make(HLO_F32, {2, 3}, std::vector<double>(6)),
                                       make(HLO_S8, {2, 3}, {-128, 127, 3, -7, 0, 99})};
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 6; j++)
            ((float *)params[k]->data)[j] = u(rng);
    // Every ENTRY value as hlo_eval computes it (borrowed from params and outs): the root
    // tuple lists every instruction that is neither a parameter nor the root.
    const hlo_computation *c = hlo_entry(p.m);
    hlo_array **outs = nullptr;
    int n = 0;
    hlo_error err{};
    ASSERT_EQ(hlo_eval(p.m, "t.hlo", params.data(), 3, &outs, &n, &err), 0) << err.msg;
    const hlo_instr *root = &c->instrs[c->root];
    ASSERT_EQ(n, root->n_operands);
    std::vector<hlo_array *> value(c->n_instrs, nullptr);
    for (int i = 0; i < c->n_instrs; i++)
        if (c->instrs[i].opcode == HLO_OP_PARAMETER)
            value[i] = params[c->instrs[i].parameter_number];
    for (int j = 0; j < n; j++)
        value[root->operands[j].index] = outs[j];
    int evaluated = 0;
    for (int i = 0; i < c->n_instrs; i++) {
        const hlo_instr *in = &c->instrs[i];
        if (in->opcode == HLO_OP_PARAMETER || in->opcode == HLO_OP_TUPLE)
            continue;
        std::vector<hlo_array *> ops;
        for (int j = 0; j < in->n_operands; j++)
            ops.push_back(value[in->operands[j].index]);
        hlo_array *out = nullptr;
        ASSERT_EQ(hlo_eval_instr(p.m, "t.hlo", in, ops.data(), &out, &err), 0) << err.msg;
        ASSERT_NE(value[i], nullptr) << in->name;
        EXPECT_TRUE(same_bits(out, value[i])) << in->name;
        hlo_array_free(out);
        evaluated++;
    }
    EXPECT_EQ(evaluated, 24);

    // What hlo_eval_instr refuses, located at the instruction.
    auto error_of = [&](const char *name, std::vector<hlo_array *> ops) {
        hlo_array *out = nullptr;
        hlo_error e{};
        EXPECT_EQ(
            hlo_eval_instr(p.m, "t.hlo", &c->instrs[hlo_find_instr(c, name)], ops.data(), &out, &e),
            -1);
        EXPECT_EQ(out, nullptr);
        return std::string(e.msg);
    };
    EXPECT_EQ(error_of("a", {}), at(text, "a =") + "parameter: 'a' is not evaluated on its own");
    EXPECT_EQ(error_of("t", value), at(text, "t = (") + "tuple: 't' is not evaluated on its own");
    EXPECT_EQ(error_of("rs", {value[hlo_find_instr(c, "tr")]}),
              at(text, "rs =") + "reshape: operand 0 of 'rs' is f32[2,3] but the array given is "
                                 "f32[3,2]");
    EXPECT_EQ(error_of("add", {params[0], nullptr}),
              at(text, "add =") + "add: operand 1 of 'add' is f32[2,3] but the array given is "
                                  "missing");
    hlo_instr copy = c->instrs[hlo_find_instr(c, "neg")];
    hlo_array *out = nullptr;
    EXPECT_EQ(hlo_eval_instr(p.m, "t.hlo", &copy, params.data(), &out, &err), -1);
    EXPECT_STREQ(err.msg, "t.hlo: instruction 'neg' is not one of the module's");
    hlo_arrays_free(outs, n);
    for (hlo_array *v : params)
        hlo_array_free(v);

    // A tuple-valued instruction and an elided constant.
    const std::string t2 = entry("  tc = (f32[], s32[]) constant((1, 2))\n"
                                 "  e = f32[2] constant({...})\n"
                                 "  ROOT r = ((f32[], s32[]), f32[2]) tuple(tc, e)\n");
    Parsed q(t2);
    ASSERT_NE(q.m, nullptr) << q.err.msg;
    const hlo_computation *e = hlo_entry(q.m);
    EXPECT_EQ(hlo_eval_instr(q.m, "t.hlo", &e->instrs[0], nullptr, &out, &err), -1);
    EXPECT_EQ(std::string(err.msg),
              at(t2, "tc =") + "constant: 'tc' is (f32[], s32[]), not an array");
    EXPECT_EQ(hlo_eval_instr(q.m, "t.hlo", &e->instrs[1], nullptr, &out, &err), -1);
    EXPECT_EQ(std::string(err.msg),
              at(t2, "e =") + "constant: value of 'e' is elided ({...}) but needed");
}

TEST(HloEvalHooks, EvalInstrOnTupleReduceAndNewOps)
{
    // hlo_eval_instr fills one slot per tuple element of a variadic reduce, and evaluates the
    // logical ops and iota, bit for bit as hlo_eval does.
    std::string text = slurp(kSrc + "tests/hlo/jax_argmax.hlo");
    Parsed p(text);
    ASSERT_NE(p.m, nullptr) << p.err.msg;
    const hlo_computation *c = &p.m->comps[hlo_find_computation(p.m, "argmax.2")];
    const hlo_instr *iota = &c->instrs[hlo_find_instr(c, "iota.2")];
    const hlo_instr *bc = &c->instrs[hlo_find_instr(c, "iota.3")];
    const hlo_instr *ninf = &c->instrs[hlo_find_instr(c, "constant.3")];
    const hlo_instr *zero = &c->instrs[hlo_find_instr(c, "constant.2")];
    const hlo_instr *red = &c->instrs[hlo_find_instr(c, "reduce.11")];
    hlo_error err{};
    hlo_array *iv = nullptr, *bv = nullptr, *nv = nullptr, *zv = nullptr;
    ASSERT_EQ(hlo_eval_instr(p.m, "t.hlo", iota, nullptr, &iv, &err), 0) << err.msg;
    expect_same(values(iv), {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
    ASSERT_EQ(hlo_eval_instr(p.m, "t.hlo", bc, &iv, &bv, &err), 0) << err.msg;
    ASSERT_EQ(hlo_eval_instr(p.m, "t.hlo", ninf, nullptr, &nv, &err), 0) << err.msg;
    ASSERT_EQ(hlo_eval_instr(p.m, "t.hlo", zero, nullptr, &zv, &err), 0) << err.msg;
    std::vector<double> x(40);
    for (int i = 0; i < 40; i++)
        x[i] = (i * 7) % 11 == 3 ? 9 : (i * 13) % 5;
    x[25] = kNaN;
    hlo_array *xa = make(HLO_F32, {4, 10}, x);
    hlo_array *ops[4] = {xa, bv, nv, zv};
    hlo_array *outs[2] = {nullptr, nullptr};
    ASSERT_EQ(hlo_eval_instr(p.m, "t.hlo", red, ops, outs, &err), 0) << err.msg;
    ASSERT_NE(outs[0], nullptr);
    ASSERT_NE(outs[1], nullptr);
    EXPECT_EQ(outs[0]->shape.type, HLO_F32);
    EXPECT_EQ(outs[1]->shape.type, HLO_S32);
    std::vector<float> xf(x.begin(), x.end());
    std::vector<double> idx = argmax_rows(xf, 4, 10), maxv;
    for (int r = 0; r < 4; r++)
        maxv.push_back(x[r * 10 + (int)idx[r]]);
    expect_same(values(outs[0]), maxv);
    expect_same(values(outs[1]), idx);
    // The same as hlo_eval of the whole module.
    hlo_array **all = nullptr;
    int n = 0;
    ASSERT_EQ(hlo_eval(p.m, "t.hlo", &xa, 1, &all, &n, &err), 0) << err.msg;
    ASSERT_EQ(n, 1);
    EXPECT_TRUE(same_bits(all[0], outs[1]));
    hlo_arrays_free(all, n);
    hlo_array_free(outs[0]);
    hlo_array_free(outs[1]);

    // A failure leaves every slot NULL, located at the reduce.
    outs[0] = outs[1] = xa;
    ops[1] = iv;
    EXPECT_EQ(hlo_eval_instr(p.m, "t.hlo", red, ops, outs, &err), -1);
    EXPECT_EQ(outs[0], nullptr);
    EXPECT_EQ(outs[1], nullptr);
    EXPECT_EQ(std::string(err.msg), at(text, "reduce.11 =") +
                                        "reduce: operand 1 of 'reduce.11' is s32[4,10] but the "
                                        "array given is s32[10]");
    for (hlo_array *a : {iv, bv, nv, zv, xa})
        hlo_array_free(a);

    // The reducer's logical ops, one scalar at a time.
    const hlo_computation *reg = &p.m->comps[hlo_find_computation(p.m, "region_0.1")];
    hlo_array *t = make(HLO_PRED, {}, {1}), *f = make(HLO_PRED, {}, {0});
    auto one = [&](const char *name, hlo_array *a, hlo_array *b) {
        hlo_array *o = nullptr, *in[2] = {a, b};
        EXPECT_EQ(
            hlo_eval_instr(p.m, "t.hlo", &reg->instrs[hlo_find_instr(reg, name)], in, &o, &err), 0)
            << err.msg;
        double v = o ? values(o)[0] : -1;
        hlo_array_free(o);
        return v;
    };
    EXPECT_EQ(one("and.1", t, f), 0);
    EXPECT_EQ(one("and.1", t, t), 1);
    EXPECT_EQ(one("or.2", f, f), 0);
    EXPECT_EQ(one("or.3", f, t), 1);
    hlo_array_free(t);
    hlo_array_free(f);

    // xor, not on integers, and iota of f32, through hlo_eval_instr against hlo_eval.
    const std::string t2 = entry("  a = s8[5] parameter(0)\n  b = s8[5] parameter(1)\n"
                                 "  x = s8[5] xor(a, b)\n  n = s8[5] not(x)\n"
                                 "  i = f32[5,2] iota(), iota_dimension=0\n"
                                 "  ROOT r = (s8[5], s8[5], f32[5,2]) tuple(x, n, i)\n");
    Parsed q(t2);
    ASSERT_NE(q.m, nullptr) << q.err.msg;
    const hlo_computation *e = hlo_entry(q.m);
    hlo_array *params[2] = {make(HLO_S8, {5}, {-128, 127, -1, 0, 85}),
                            make(HLO_S8, {5}, {1, -128, 127, 0, -86})};
    ASSERT_EQ(hlo_eval(q.m, "t.hlo", params, 2, &all, &n, &err), 0) << err.msg;
    ASSERT_EQ(n, 3);
    expect_same(values(all[0]), {-127, -1, -128, 0, -1});
    expect_same(values(all[1]), {126, 0, 127, -1, 0});
    expect_same(values(all[2]), {0, 0, 1, 1, 2, 2, 3, 3, 4, 4});
    hlo_array *o = nullptr;
    ASSERT_EQ(hlo_eval_instr(q.m, "t.hlo", &e->instrs[2], params, &o, &err), 0) << err.msg;
    EXPECT_TRUE(same_bits(o, all[0]));
    hlo_array_free(o);
    ASSERT_EQ(hlo_eval_instr(q.m, "t.hlo", &e->instrs[3], &all[0], &o, &err), 0) << err.msg;
    EXPECT_TRUE(same_bits(o, all[1]));
    hlo_array_free(o);
    ASSERT_EQ(hlo_eval_instr(q.m, "t.hlo", &e->instrs[4], nullptr, &o, &err), 0) << err.msg;
    EXPECT_TRUE(same_bits(o, all[2]));
    hlo_array_free(o);
    hlo_arrays_free(all, n);
    hlo_array_free(params[0]);
    hlo_array_free(params[1]);
}

// The evaluated hook sees each instruction of the program once per evaluation (a while body's
// per iteration), not the reducer a reduce applies per element; hlo_macs counts the dot's and the
// grouped convolution's multiply-accumulates.
TEST(HloEvalHooks, EvaluatedCountsTheProgramsWork)
{
    const std::string text =
        "HloModule m\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT s = f32[] add(a, b)\n}\n\n"
        "cond {\n  p = (s32[], f32[2,3]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
        "  n = s32[] constant(3)\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n\n"
        "body {\n  p = (s32[], f32[2,3]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
        "  x = f32[2,3] get-tuple-element(p), index=1\n  w = f32[3,3] constant({{1,0,0},{0,1,0},"
        "{0,0,1}})\n  y = f32[2,3] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
        "  one = s32[] constant(1)\n  j = s32[] add(i, one)\n  ROOT t = (s32[], f32[2,3]) tuple(j, "
        "y)\n"
        "}\n\n"
        "ENTRY main {\n  x = f32[2,3] parameter(0)\n  zero = s32[] constant(0)\n"
        "  t = (s32[], f32[2,3]) tuple(zero, x)\n  w = (s32[], f32[2,3]) while(t), condition=cond, "
        "body=body\n  out = f32[2,3] get-tuple-element(w), index=1\n  z = f32[] constant(0)\n"
        "  r = f32[2] reduce(out, z), dimensions={1}, to_apply=add\n"
        "  img = f32[1,4,4,4] broadcast(z), dimensions={}\n"
        "  k = f32[3,3,2,6] broadcast(z), dimensions={}\n"
        "  c = f32[1,2,2,6] convolution(img, k), window={size=3x3}, dim_labels=b01f_01io->b01f, "
        "feature_group_count=2\n"
        "  ROOT o = (f32[2], f32[1,2,2,6]) tuple(r, c)\n}\n";
    struct Seen {
        std::map<std::string, int> count;
        std::map<std::string, uint64_t> macs;
    } seen;
    hlo_eval_hooks hooks{};
    hooks.ctx = &seen;
    hooks.evaluated = [](void *ctx, const hlo_computation *c, const hlo_instr *in) {
        Seen *s = (Seen *)ctx;
        s->count[in->name]++;
        s->macs[in->name] += hlo_macs(c, in);
    };
    Result r = run(text, {make(HLO_F32, {2, 3}, {1, 2, 3, 4, 5, 6})}, &hooks);
    ASSERT_EQ(r.err, "");
    expect_same(r.out[0], {6, 15});
    EXPECT_EQ(seen.count["y"], 3);             // the body's dot, once per iteration
    EXPECT_EQ(seen.macs["y"], 3u * 2 * 3 * 3); // 2x3 results of 3 products, 3 times
    EXPECT_EQ(seen.count["lt"], 4);            // the condition, once more than the body
    EXPECT_EQ(seen.count["r"], 1);
    EXPECT_EQ(seen.count["s"], 0); // the reducer's add is the reduce's work
    EXPECT_EQ(seen.count["a"], 0);
    EXPECT_EQ(seen.macs["c"], 2u * 2 * 6 * 3 * 3 * 2); // 24 results of 3x3 taps of 2 channels
    EXPECT_EQ(seen.macs["r"], 0u);
}

} // namespace

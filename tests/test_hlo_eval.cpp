// test_hlo_eval.cpp - the HLO shape checker (hlo_check), the reference evaluator (hlo_eval, its
// custom-call hook, hlo_eval_instr), the safetensors reader and the binding of weights to
// parameters: valid and located-error cases for every op, hand-computed results, exact
// int8 dots, and the exported MNIST MLP against JAX.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "hlo.h"
#include "npy.h"
#include "safetensors.h"

namespace {

const std::string kSrc = std::string(TPU_SOURCE_DIR) + "/";

// Owns a parsed module; the test fails if parsing fails.
struct Parsed {
    hlo_module *m = nullptr;
    hlo_error err{};
    explicit Parsed(const std::string &text) : m(hlo_parse(text.data(), text.size(), "t.hlo", &err))
    {
    }
    ~Parsed() { hlo_module_free(m); }
    Parsed(const Parsed &) = delete;
    Parsed &operator=(const Parsed &) = delete;
};

std::string entry(const std::string &body) { return "HloModule m\nENTRY main {\n" + body + "}\n"; }

// "t.hlo:L:C: " of the first occurrence of needle in text.
std::string at(const std::string &text, const std::string &needle)
{
    size_t pos = text.find(needle);
    EXPECT_NE(pos, std::string::npos) << needle;
    int line = 1, col = 1;
    for (size_t i = 0; i < pos && i < text.size(); i++) {
        if (text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    return "t.hlo:" + std::to_string(line) + ":" + std::to_string(col) + ": ";
}

std::string check_error(const std::string &text)
{
    Parsed p(text);
    EXPECT_NE(p.m, nullptr) << p.err.msg;
    if (!p.m)
        return "";
    hlo_error err{};
    EXPECT_EQ(hlo_check(p.m, "t.hlo", &err), -1) << "accepted:\n" << text;
    return err.msg;
}

void expect_checks(const std::string &text)
{
    Parsed p(text);
    ASSERT_NE(p.m, nullptr) << p.err.msg;
    hlo_error err{};
    EXPECT_EQ(hlo_check(p.m, "t.hlo", &err), 0) << err.msg << "\n" << text;
}

// The error for an ENTRY whose instruction `bad` is wrong: located at `bad`, naming op and what.
void expect_bad(const std::string &body, const std::string &what)
{
    std::string text = entry(body);
    std::string msg = check_error(text);
    EXPECT_EQ(msg.rfind(at(text, "bad ="), 0), 0u) << msg << "\n" << text;
    EXPECT_NE(msg.find(what), std::string::npos) << "message: " << msg << "\nwanted: " << what;
}

// ------------------------------------------------------------ arrays --

hlo_array *make(hlo_type t, std::vector<int64_t> dims, const std::vector<double> &v)
{
    hlo_array *a = hlo_array_new(t, (int)dims.size(), dims.data());
    EXPECT_NE(a, nullptr);
    EXPECT_EQ((size_t)a->shape.elements, v.size());
    for (size_t i = 0; i < v.size(); i++) {
        switch (t) {
        case HLO_F32: ((float *)a->data)[i] = (float)v[i]; break;
        case HLO_S32: ((int32_t *)a->data)[i] = (int32_t)v[i]; break;
        case HLO_S8: ((int8_t *)a->data)[i] = (int8_t)v[i]; break;
        default: ((uint8_t *)a->data)[i] = (uint8_t)v[i]; break;
        }
    }
    return a;
}

std::vector<double> values(const hlo_array *a)
{
    std::vector<double> v((size_t)a->shape.elements);
    for (size_t i = 0; i < v.size(); i++) {
        switch (a->shape.type) {
        case HLO_F32: v[i] = ((const float *)a->data)[i]; break;
        case HLO_S32: v[i] = ((const int32_t *)a->data)[i]; break;
        case HLO_S8: v[i] = ((const int8_t *)a->data)[i]; break;
        default: v[i] = ((const uint8_t *)a->data)[i]; break;
        }
    }
    return v;
}

std::vector<int64_t> dims_of(const hlo_array *a)
{
    return std::vector<int64_t>(a->shape.dims, a->shape.dims + a->shape.rank);
}

// Evaluates text on params (taken over) with hooks (may be null); outputs as values, or the
// error message.
struct Result {
    std::vector<std::vector<double>> out;
    std::vector<std::vector<int64_t>> dims;
    std::vector<hlo_type> types;
    std::string err;
};

Result run(const std::string &text, std::vector<hlo_array *> params,
           const hlo_eval_hooks *hooks = nullptr)
{
    Result r;
    Parsed p(text);
    EXPECT_NE(p.m, nullptr) << p.err.msg;
    if (p.m) {
        hlo_array **outs = nullptr;
        int n = 0;
        hlo_error err{};
        if (hlo_eval_with(p.m, "t.hlo", params.data(), (int)params.size(), hooks, &outs, &n,
                          &err)) {
            r.err = err.msg;
        } else {
            for (int i = 0; i < n; i++) {
                r.out.push_back(values(outs[i]));
                r.dims.push_back(dims_of(outs[i]));
                r.types.push_back(outs[i]->shape.type);
            }
        }
        hlo_arrays_free(outs, n);
    }
    for (hlo_array *a : params)
        hlo_array_free(a);
    return r;
}

// One output expected; returns it.
std::vector<double> run1(const std::string &text, std::vector<hlo_array *> params)
{
    Result r = run(text, params);
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out.size(), 1u);
    return r.out.empty() ? std::vector<double>{} : r.out[0];
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// Elementwise equality where NaN equals NaN.
void expect_same(const std::vector<double> &got, const std::vector<double> &want)
{
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); i++) {
        if (std::isnan(want[i]))
            EXPECT_TRUE(std::isnan(got[i])) << "at " << i;
        else
            EXPECT_EQ(got[i], want[i]) << "at " << i;
    }
}

// ============================================================ shape checks --

TEST(HloCheck, FixturesAndModelsPass)
{
    std::vector<std::string> files = {"models/mnist/mlp.hlo", "models/mnist/mlp.dump.hlo"};
    for (const auto &e : std::filesystem::directory_iterator(kSrc + "tests/hlo"))
        if (e.path().extension() == ".hlo")
            files.push_back("tests/hlo/" + e.path().filename().string());
    EXPECT_GE(files.size(), 7u);
    for (const std::string &f : files) {
        hlo_error err{};
        hlo_module *m = hlo_parse_file((kSrc + f).c_str(), &err);
        ASSERT_NE(m, nullptr) << err.msg;
        EXPECT_EQ(hlo_check(m, f.c_str(), &err), 0) << err.msg;
        hlo_module_free(m);
    }
}

TEST(HloCheck, ValidUseOfEveryOp)
{
    expect_checks(R"(HloModule m
add2 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
pair {
  a0 = f32[] parameter(0)
  b0 = s32[] parameter(1)
  a1 = f32[] parameter(2)
  b1 = s32[] parameter(3)
  ma = f32[] maximum(a0, a1)
  mb = s32[] minimum(b0, b1)
  ROOT t = (f32[], s32[]) tuple(ma, mb)
}
twice {
  p = f32[2,3] parameter(0)
  ROOT d = f32[2,3] add(p, p)
}
ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  i = s32[2,3] parameter(2)
  q = s8[4,5] parameter(3)
  r = s8[5,6] parameter(4)
  bl = f32[7,2,3] parameter(5)
  br = f32[7,3,4] parameter(6)
  dot1 = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dot2 = s32[4,6] dot(q, r), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dot3 = f32[7,2,4] dot(bl, br), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  dot4 = f32[3,3] dot(a, a), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  dot5 = f32[2,3,3,4] dot(a, b)
  dot6 = f32[] dot(a, a), lhs_contracting_dims={0,1}, rhs_contracting_dims={0,1}
  s = f32[2,3] subtract(a, a)
  m = f32[2,3] multiply(a, s)
  dv = f32[2,3] divide(m, a)
  mx = f32[2,3] maximum(dv, a)
  mn = f32[2,3] minimum(mx, a)
  ng = f32[2,3] negate(mn)
  ex = f32[2,3] exponential(ng)
  lg = f32[2,3] log(ex)
  fin = pred[2,3] is-finite(lg)
  c = pred[2,3] compare(a, lg), comparison_direction=LT
  sel = f32[2,3] select(c, a, lg)
  ps = pred[] constant(true)
  sel2 = s32[2,3] select(ps, i, i)
  k = f32[] constant(1.5)
  bc = f32[4,2,3] broadcast(a), dimensions={1,2}
  bs = f32[2,3] broadcast(k), dimensions={}
  rs = f32[6,1] reshape(a)
  tr = f32[3,2] transpose(a), dimensions={1,0}
  cv = s32[2,3] convert(a)
  cp = pred[2,3] convert(i)
  tp = (f32[2,3], s32[2,3]) tuple(a, i)
  g = s32[2,3] get-tuple-element(tp), index=1
  cl = f32[2,3] call(a), to_apply=twice
  rd = f32[2] reduce(a, k), dimensions={1}, to_apply=add2
  rd0 = f32[] reduce(a, k), dimensions={0,1}, to_apply=add2
  z = s32[] constant(0)
  rv = (f32[3], s32[3]) reduce(a, i, k, z), dimensions={0}, to_apply=pair
  ROOT out = (f32[2,4], s32[4,6], f32[7,2,4], f32[3,3], f32[2,3,3,4], f32[], f32[4,2,3], f32[2,3], f32[6,1], f32[3,2], s32[2,3], pred[2,3], s32[2,3], f32[2,3], f32[2], f32[], (f32[3], s32[3]), pred[2,3], f32[2,3], s32[2,3]) tuple(dot1, dot2, dot3, dot4, dot5, dot6, bc, bs, rs, tr, cv, cp, g, cl, rd, rd0, rv, fin, sel, sel2)
}
)");
}

TEST(HloCheck, DotErrors)
{
    const std::string ab = "  a = f32[16,784] parameter(0)\n  b = f32[100,10] parameter(1)\n";
    expect_bad(ab + "  bad = f32[16,10] dot(a, b), lhs_contracting_dims={1}, "
                    "rhs_contracting_dims={0}\n",
               "dot: lhs contracting dim 1 has size 784 but rhs contracting dim 0 has size 100");
    const std::string cd = "  a = f32[2,3,4] parameter(0)\n  b = f32[5,4,6] parameter(1)\n";
    expect_bad(cd + "  bad = f32[2,3,6] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, "
                    "lhs_contracting_dims={2}, rhs_contracting_dims={1}\n",
               "dot: lhs batch dim 0 has size 2 but rhs batch dim 0 has size 5");
}

TEST(HloCheck, DotMoreErrors)
{
    const std::string cd = "  a = f32[2,3,4] parameter(0)\n  b = f32[5,4,6] parameter(1)\n";
    expect_bad(cd + "  bad = f32[2,3,6,5] dot(a, b), lhs_contracting_dims={2}, "
                    "rhs_contracting_dims={1}\n",
               "dot: result f32[2,3,6,5], expected f32[2,3,5,6]");
    expect_bad(cd + "  bad = f32[2,3,5] dot(a, b), lhs_contracting_dims={2}, "
                    "rhs_contracting_dims={1}\n",
               "dot: result has rank 3, expected 4");
    expect_bad(cd + "  bad = f32[2,3,5,6] dot(a, b), lhs_contracting_dims={2}, "
                    "rhs_contracting_dims={1,2}\n",
               "dot: 1 lhs contracting dims but 2 rhs");
    expect_bad(cd + "  bad = f32[2,3,5,6] dot(a, b), lhs_contracting_dims={3}, "
                    "rhs_contracting_dims={1}\n",
               "dot: lhs contracting dim 3 out of range for rank 3");
    expect_bad(cd + "  bad = f32[2,3,5,6] dot(a, b), lhs_batch_dims={2}, rhs_batch_dims={1}, "
                    "lhs_contracting_dims={2}, rhs_contracting_dims={1}\n",
               "dot: lhs dim 2 is both batch and contracting");
    expect_bad(cd + "  bad = f32[2,3,5,6] dot(a, b), lhs_batch_dims={0}, "
                    "lhs_contracting_dims={2}, rhs_contracting_dims={1}\n",
               "dot: 1 lhs batch dims but 0 rhs");
    expect_bad("  a = s8[2,3] parameter(0)\n  b = s32[3,2] parameter(1)\n"
               "  bad = s32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n",
               "dot: lhs element type s8 differs from rhs s32");
    expect_bad("  a = s8[2,3] parameter(0)\n"
               "  bad = f32[2,2] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n",
               "dot: result element type f32 cannot accumulate s8");
}

TEST(HloCheck, ElementwiseErrors)
{
    const std::string p = "  a = f32[2,3] parameter(0)\n  b = f32[3,2] parameter(1)\n"
                          "  i = s32[2,3] parameter(2)\n";
    for (const char *op : {"add", "subtract", "multiply", "divide", "maximum", "minimum"}) {
        expect_bad(p + "  bad = f32[2,3] " + op + "(a, b)\n",
                   std::string(op) + ": operand 1 has shape f32[3,2] but the result has f32[2,3]");
        expect_bad(p + "  bad = f32[2,3] " + op + "(a, i)\n",
                   std::string(op) + ": operand 1 has shape s32[2,3] but the result has f32[2,3]");
        expect_bad(p + "  bad = f32[2,3] " + op + "(a)\n",
                   std::string(op) + ": expects 2 operands, has 1");
    }
    expect_bad(p + "  bad = f32[2,3] negate(a, a)\n", "negate: expects 1 operand, has 2");
    expect_bad(p + "  bad = f32[3,2] negate(a)\n",
               "negate: operand 0 has shape f32[2,3] but the result has f32[3,2]");
    expect_bad(p + "  bad = s32[2,3] exponential(i)\n",
               "exponential: element type s32 is not floating point");
    expect_bad(p + "  bad = s32[2,3] log(i)\n", "log: element type s32 is not floating point");
    expect_bad(p + "  bad = pred[2,3] is-finite(i)\n",
               "is-finite: operand element type s32 is not floating point");
    expect_bad(p + "  bad = f32[2,3] is-finite(a)\n",
               "is-finite: result f32[2,3] must be pred with the dims of the operand f32[2,3]");
}

TEST(HloCheck, CompareSelectErrors)
{
    const std::string p = "  a = f32[2,3] parameter(0)\n  b = f32[3,2] parameter(1)\n"
                          "  c = pred[2,3] parameter(2)\n";
    expect_bad(p + "  bad = pred[2,3] compare(a, b), comparison_direction=EQ\n",
               "compare: operand 0 has shape f32[2,3] but operand 1 has f32[3,2]");
    expect_bad(p + "  bad = f32[2,3] compare(a, a), comparison_direction=EQ\n",
               "compare: result f32[2,3] must be pred with the dims of the operands f32[2,3]");
    expect_bad(p + "  bad = pred[2,3] compare(a, a)\n", "compare: missing comparison_direction");
    expect_bad(p + "  bad = f32[2,3] select(a, a, a)\n",
               "select: predicate f32[2,3] must be pred[] or pred with the dims of the result");
    expect_bad(p + "  bad = f32[2,3] select(c, a, b)\n",
               "select: operand 2 has shape f32[3,2] but the result has f32[2,3]");
    expect_bad(p + "  bad = f32[2,3] select(c, a)\n", "select: expects 3 operands, has 2");
}

TEST(HloCheck, BroadcastReshapeTransposeConvertErrors)
{
    const std::string p = "  a = f32[2,3] parameter(0)\n";
    expect_bad(p + "  bad = f32[4,2,3] broadcast(a), dimensions={1}\n",
               "broadcast: dimensions has 1 entries but the operand has rank 2");
    expect_bad(p + "  bad = f32[4,2,3] broadcast(a), dimensions={1,3}\n",
               "broadcast: dimension 3 out of range for rank 3");
    expect_bad(p + "  bad = f32[4,2,3] broadcast(a), dimensions={0,2}\n",
               "broadcast: operand dim 0 has size 2 but result dim 0 has size 4");
    expect_bad(p + "  bad = f32[3,3] broadcast(a), dimensions={1,1}\n",
               "broadcast: dimension 1 repeated");
    expect_bad(p + "  bad = f32[4,2,3] broadcast(a)\n", "broadcast: missing dimensions");
    expect_bad(p + "  bad = s32[4,2,3] broadcast(a), dimensions={1,2}\n",
               "broadcast: operand element type f32 differs from the result's s32");
    expect_bad(p + "  bad = f32[4,2] reshape(a)\n",
               "reshape: operand f32[2,3] has 6 elements but the result f32[4,2] has 8");
    expect_bad(p + "  bad = f32[3,2] transpose(a), dimensions={0,0}\n",
               "transpose: dimension 0 repeated");
    expect_bad(p + "  bad = f32[2,3] transpose(a), dimensions={1,0}\n",
               "transpose: result dim 0 has size 2 but operand dim 1 has size 3");
    expect_bad(p + "  bad = f32[3,2,1] transpose(a), dimensions={1,0}\n",
               "transpose: dimensions has 2 entries, operand rank 2, result rank 3");
    expect_bad(p + "  bad = s32[3,2] convert(a)\n",
               "convert: operand f32[2,3] and result s32[3,2] differ in dims");
}

TEST(HloCheck, TupleCallReduceErrors)
{
    const std::string p = "  a = f32[2,3] parameter(0)\n  i = s32[2] parameter(1)\n";
    expect_bad(p + "  bad = (f32[2,3], f32[2]) tuple(a, i)\n",
               "tuple: operand 1 has shape s32[2] but tuple element 1 is f32[2]");
    expect_bad(p + "  bad = (f32[2,3]) tuple(a, i)\n", "tuple: result must be a tuple of 2");
    expect_bad(p + "  bad = f32[2,3] get-tuple-element(a), index=0\n",
               "get-tuple-element: operand is not a tuple");
    expect_bad(p + "  t = (f32[2,3], s32[2]) tuple(a, i)\n"
                   "  bad = s32[2] get-tuple-element(t), index=2\n",
               "get-tuple-element: index 2 out of range for a tuple of 2");
    expect_bad(p + "  t = (f32[2,3], s32[2]) tuple(a, i)\n"
                   "  bad = s32[2] get-tuple-element(t), index=0\n",
               "get-tuple-element: result s32[2] differs from tuple element 0 f32[2,3]");

    const std::string comps = R"(HloModule m
f {
  x = f32[2,3] parameter(0)
  ROOT y = f32[2,3] negate(x)
}
add2 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
adds {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] add(x, y)
}
one {
  x = f32[] parameter(0)
  ROOT y = f32[] negate(x)
}
ENTRY main {
  a = f32[2,3] parameter(0)
  k = f32[] parameter(1)
  v = f32[3] parameter(2)
)";
    auto bad = [&](const std::string &line, const std::string &what) {
        std::string text = comps + line + "}\n";
        std::string msg = check_error(text);
        EXPECT_EQ(msg.rfind(at(text, "bad ="), 0), 0u) << msg;
        EXPECT_NE(msg.find(what), std::string::npos) << msg << "\nwanted: " << what;
    };
    bad("  bad = f32[2,3] call(a, a), to_apply=f\n",
        "call: 2 operands but computation 'f' has 1 parameters");
    bad("  bad = f32[2,3] call(v), to_apply=f\n",
        "call: operand 0 has shape f32[3] but parameter 0 of 'f' is f32[2,3]");
    bad("  bad = f32[3,2] call(a), to_apply=f\n",
        "call: result f32[3,2] differs from the root of 'f' f32[2,3]");
    bad("  bad = f32[2] reduce(a, v), dimensions={1}, to_apply=add2\n",
        "reduce: init value 0 has shape f32[3], must be a scalar of input f32[2,3]'s type");
    bad("  bad = f32[2] reduce(a, k), dimensions={2}, to_apply=add2\n",
        "reduce: dimension 2 out of range for rank 2");
    bad("  bad = f32[3] reduce(a, k), dimensions={1}, to_apply=add2\n",
        "reduce: result f32[3], expected f32[2]");
    bad("  bad = f32[2] reduce(a, k), dimensions={1}, to_apply=one\n",
        "reduce: to_apply 'one' has 1 parameters, needs 2");
    bad("  bad = f32[2] reduce(a, k), dimensions={1}, to_apply=adds\n",
        "reduce: parameter 0 of to_apply 'adds' is s32[], must be f32[]");
    bad("  bad = f32[2] reduce(a, k, k), dimensions={1}, to_apply=add2\n",
        "reduce: expects inputs and as many init values, has 3 operands");
    bad("  bad = f32[2] reduce(a, k), to_apply=add2\n", "reduce: missing dimensions");
}

TEST(HloCheck, StructuralErrors)
{
    expect_bad("  bad = f32[2] rsqrt(a)\n  a = f32[2] parameter(0)\n",
               "rsqrt: unsupported op");
    expect_bad("  a = f32[2] parameter(0)\n  bad = f32[2] parameter(0)\n",
               "parameter: number 0 already used by 'a'");
    expect_bad("  a = f32[2] parameter(0)\n  bad = f32[2] parameter(2)\n",
               "parameter: number 2 but the computation has 2 parameters");
    expect_bad("  a = f32[2] parameter(0)\n  bad = f32[2] add(c, a)\n  c = f32[2] add(bad, a)\n"
               "  ROOT r = f32[2] negate(c)\n",
               "add: operands form a cycle through 'bad'");
    // PyTorch/XLA style inline operand shapes must agree with the definitions.
    expect_bad("  a = f32[2,3] parameter(0)\n  bad = f32[2,3] negate(f32[3,2] a)\n",
               "negate: operand 0 is written f32[3,2] but 'a' is f32[2,3]");
    std::string text = "HloModule m\nf {\n  x = f32[] parameter(0)\n"
                       "  bad = f32[] call(x), to_apply=f\n}\n"
                       "ENTRY main {\n  a = f32[] parameter(0)\n  ROOT c = f32[] call(a), to_apply=f\n}\n";
    std::string msg = check_error(text);
    EXPECT_EQ(msg.rfind(at(text, "bad ="), 0), 0u) << msg;
    EXPECT_NE(msg.find("call: calls 'f', which is on or leads into a cycle of calls"),
              std::string::npos) << msg;
}

TEST(HloCheck, CustomCall)
{
    // Any array operands; an array, a tuple of arrays or an empty tuple as result.
    expect_checks(entry("  a = f32[2] parameter(0)\n  b = s8[3,4] parameter(1)\n"
                        "  c = f32[5] custom-call(a, b), custom_call_target=\"tpu.segment.0\"\n"
                        "  t = (f32[2], u8[], pred[1]) custom-call(c), custom_call_target=\"x\"\n"
                        "  n = () custom-call(), custom_call_target=\"\"\n"
                        "  ROOT r = (f32[5], (f32[2], u8[], pred[1]), ()) tuple(c, t, n)\n"));
    const std::string a = "  a = f32[2] parameter(0)\n";
    expect_bad(a + "  bad = f32[2] custom-call(a), backend_config=\"x\"\n",
               "custom-call: 'bad' has no custom_call_target");
    expect_bad(a + "  bad = (f32[2], (f32[2])) custom-call(a), custom_call_target=\"x\"\n",
               "custom-call: a result tuple element must be an array, is (f32[2])");
    expect_bad(a + "  bad = token[] custom-call(a), custom_call_target=\"x\"\n",
               "custom-call: the result must be an array, is token[]");
    expect_bad(a + "  t = (f32[2]) tuple(a)\n"
                   "  bad = f32[2] custom-call(a, t), custom_call_target=\"x\"\n",
               "custom-call: an operand must be an array, is (f32[2])");
}

// ============================================================ evaluator --

TEST(HloEval, ElementwiseF32)
{
    std::vector<double> x = {1.5, -2, 0, kNaN, 3, -0.25};
    std::vector<double> y = {0.5, 4, -1, 1, kNaN, 8};
    auto bin = [&](const char *op) {
        return run1(entry(std::string("  a = f32[2,3] parameter(0)\n  b = f32[2,3] parameter(1)\n"
                                      "  ROOT r = f32[2,3] ") + op + "(a, b)\n"),
                    {make(HLO_F32, {2, 3}, x), make(HLO_F32, {2, 3}, y)});
    };
    expect_same(bin("add"), {2, 2, -1, kNaN, kNaN, 7.75});
    expect_same(bin("subtract"), {1, -6, 1, kNaN, kNaN, -8.25});
    expect_same(bin("multiply"), {0.75, -8, -0, kNaN, kNaN, -2});
    expect_same(bin("divide"), {3, -0.5, -0., kNaN, kNaN, -0.03125});
    expect_same(bin("maximum"), {1.5, 4, 0, kNaN, kNaN, 8});
    expect_same(bin("minimum"), {0.5, -2, -1, kNaN, kNaN, -0.25});
    // f32 rounding: 0.1f + 0.2f is computed in float.
    auto sum = run1(entry("  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                          "  ROOT r = f32[] add(a, b)\n"),
                    {make(HLO_F32, {}, {0.1}), make(HLO_F32, {}, {0.2})});
    EXPECT_EQ(sum[0], (double)(0.1f + 0.2f));

    auto un = [&](const char *op) {
        return run1(entry(std::string("  a = f32[4] parameter(0)\n  ROOT r = f32[4] ") + op +
                          "(a)\n"),
                    {make(HLO_F32, {4}, {0, 1, -2, kInf})});
    };
    expect_same(un("negate"), {-0., -1, 2, -kInf});
    expect_same(un("exponential"), {1, (double)expf(1), (double)expf(-2), kInf});
    expect_same(un("log"), {-kInf, 0, kNaN, kInf});
    expect_same(run1(entry("  a = f32[4] parameter(0)\n  ROOT r = pred[4] is-finite(a)\n"),
                     {make(HLO_F32, {4}, {0, kNaN, -kInf, 1e30})}),
                {1, 0, 0, 1});
}

TEST(HloEval, CompareAndSelect)
{
    std::vector<double> x = {1, 2, 3, kNaN}, y = {2, 2, 1, 1};
    const char *dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
    std::vector<std::vector<double>> want = {{0, 1, 0, 0}, {1, 0, 1, 1}, {1, 0, 0, 0},
                                             {1, 1, 0, 0}, {0, 0, 1, 0}, {0, 1, 1, 0}};
    for (int d = 0; d < 6; d++)
        expect_same(run1(entry(std::string("  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n"
                                           "  ROOT r = pred[4] compare(a, b), "
                                           "comparison_direction=") + dirs[d] + "\n"),
                         {make(HLO_F32, {4}, x), make(HLO_F32, {4}, y)}),
                    want[d]);
    expect_same(run1(entry("  a = s32[3] parameter(0)\n  b = s32[3] parameter(1)\n"
                           "  c = pred[3] compare(a, b), comparison_direction=LT\n"
                           "  ROOT r = s32[3] select(c, a, b)\n"),
                     {make(HLO_S32, {3}, {-5, 7, 2147483647}), make(HLO_S32, {3}, {3, -7, 0})}),
                {-5, -7, 0});
    expect_same(run1(entry("  p = pred[] parameter(0)\n  a = f32[2] parameter(1)\n"
                           "  b = f32[2] parameter(2)\n  ROOT r = f32[2] select(p, a, b)\n"),
                     {make(HLO_PRED, {}, {1}), make(HLO_F32, {2}, {1, 2}),
                      make(HLO_F32, {2}, {3, 4})}),
                {1, 2});
}

TEST(HloEval, IntegerArithmeticWraps)
{
    auto bin = [&](hlo_type t, const char *ty, const char *op, std::vector<double> a,
                   std::vector<double> b) {
        std::string s = std::string("  a = ") + ty + "[4] parameter(0)\n  b = " + ty +
                        "[4] parameter(1)\n  ROOT r = " + ty + "[4] " + op + "(a, b)\n";
        return run1(entry(s), {make(t, {4}, a), make(t, {4}, b)});
    };
    const double mn = -2147483648.0, mx = 2147483647.0;
    expect_same(bin(HLO_S32, "s32", "add", {mx, mn, 5, -5}, {1, -1, -7, 7}), {mn, mx, -2, 2});
    expect_same(bin(HLO_S32, "s32", "multiply", {65536, mx, -3, mn}, {65536, 2, 5, -1}),
                {0, -2, -15, mn});
    expect_same(bin(HLO_S32, "s32", "divide", {7, -7, 5, mn}, {2, 2, 0, -1}), {3, -3, -1, mn});
    expect_same(bin(HLO_S8, "s8", "add", {127, -128, 100, -1}, {1, -1, 100, 1}),
                {-128, 127, -56, 0});
    expect_same(bin(HLO_S8, "s8", "subtract", {-128, 0, 5, 1}, {1, -128, 7, 1}),
                {127, -128, -2, 0});
    expect_same(bin(HLO_U8, "u8", "add", {255, 0, 200, 1}, {1, 0, 100, 2}), {0, 0, 44, 3});
    expect_same(bin(HLO_U8, "u8", "divide", {9, 0, 255, 7}, {2, 0, 0, 7}), {4, 255, 255, 1});
    expect_same(bin(HLO_S32, "s32", "maximum", {mn, 3, -1, 0}, {mx, 2, -2, 0}), {mx, 3, -1, 0});
    expect_same(run1(entry("  a = s8[3] parameter(0)\n  ROOT r = s8[3] negate(a)\n"),
                     {make(HLO_S8, {3}, {-128, 127, 0})}),
                {-128, -127, 0});
}

TEST(HloEval, DataMovement)
{
    std::vector<double> a23 = {1, 2, 3, 4, 5, 6};
    expect_same(run1(entry("  a = f32[2,3] parameter(0)\n  ROOT r = f32[3,2] transpose(a), "
                           "dimensions={1,0}\n"),
                     {make(HLO_F32, {2, 3}, a23)}),
                {1, 4, 2, 5, 3, 6});
    // [2,3,4] -> dims {2,0,1}: result[k][i][j] = a[i][j][k].
    std::vector<double> a234(24), want(24);
    for (int i = 0; i < 24; i++)
        a234[i] = i;
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++)
                want[(k * 2 + i) * 3 + j] = (i * 3 + j) * 4 + k;
    expect_same(run1(entry("  a = s32[2,3,4] parameter(0)\n  ROOT r = s32[4,2,3] transpose(a), "
                           "dimensions={2,0,1}\n"),
                     {make(HLO_S32, {2, 3, 4}, a234)}),
                want);
    expect_same(run1(entry("  a = f32[3] parameter(0)\n  ROOT r = f32[2,3] broadcast(a), "
                           "dimensions={1}\n"),
                     {make(HLO_F32, {3}, {7, 8, 9})}),
                {7, 8, 9, 7, 8, 9});
    expect_same(run1(entry("  a = f32[2] parameter(0)\n  ROOT r = f32[2,3] broadcast(a), "
                           "dimensions={0}\n"),
                     {make(HLO_F32, {2}, {7, 8})}),
                {7, 7, 7, 8, 8, 8});
    expect_same(run1(entry("  a = u8[] parameter(0)\n  ROOT r = u8[2,2] broadcast(a), "
                           "dimensions={}\n"),
                     {make(HLO_U8, {}, {200})}),
                {200, 200, 200, 200});
    // A transposing broadcast: operand dim 0 goes to result dim 1.
    expect_same(run1(entry("  a = f32[2,3] parameter(0)\n  ROOT r = f32[3,2] broadcast(a), "
                           "dimensions={1,0}\n"),
                     {make(HLO_F32, {2, 3}, a23)}),
                {1, 4, 2, 5, 3, 6});
    Result r = run(entry("  a = f32[2,3] parameter(0)\n  ROOT r = f32[3,1,2] reshape(a)\n"),
                {make(HLO_F32, {2, 3}, a23)});
    ASSERT_EQ(r.err, "");
    expect_same(r.out[0], a23);
    EXPECT_EQ(r.dims[0], (std::vector<int64_t>{3, 1, 2}));
    expect_same(run1(entry("  ROOT c = s8[2,2] constant({{-128, 127}, {0, 5}})\n"), {}),
                {-128, 127, 0, 5});
}

TEST(HloEval, Convert)
{
    auto cv = [&](hlo_type ft, const char *from, const char *to, std::vector<double> v) {
        return run1(entry(std::string("  a = ") + from + "[6] parameter(0)\n  ROOT r = " + to +
                          "[6] convert(a)\n"),
                    {make(ft, {6}, v)});
    };
    expect_same(cv(HLO_F32, "f32", "s32", {2.9, -2.9, kNaN, 1e10, -1e10, -0.5}),
                {2, -2, 0, 2147483647, -2147483648.0, 0});
    expect_same(cv(HLO_F32, "f32", "s8", {300, -300, 127.9, -128.9, kNaN, 1}),
                {127, -128, 127, -128, 0, 1});
    expect_same(cv(HLO_F32, "f32", "u8", {-1, 255.5, 256, 3.7, kInf, -kInf}),
                {0, 255, 255, 3, 255, 0});
    expect_same(cv(HLO_S32, "s32", "s8", {128, -129, 255, 256, -1, 1000}),
                {-128, 127, -1, 0, -1, -24});
    expect_same(cv(HLO_S32, "s32", "f32", {16777217, -3, 0, 1, 2147483647, 5}),
                {16777216, -3, 0, 1, 2147483648.0, 5});
    expect_same(cv(HLO_F32, "f32", "pred", {0, -0., 0.5, kNaN, -3, 1}), {0, 0, 1, 1, 1, 1});
    expect_same(cv(HLO_PRED, "pred", "s32", {0, 1, 1, 0, 0, 1}), {0, 1, 1, 0, 0, 1});
    expect_same(cv(HLO_U8, "u8", "s8", {255, 128, 127, 0, 1, 200}), {-1, -128, 127, 0, 1, -56});
}

TEST(HloEval, TuplesAndCalls)
{
    std::string text = R"(HloModule m
sq {
  x = f32[2] parameter(0)
  y = f32[2] parameter(1)
  m = f32[2] multiply(x, x)
  ROOT t = (f32[2], f32[2]) tuple(m, y)
}
outer {
  p = f32[2] parameter(0)
  c = (f32[2], f32[2]) call(p, p), to_apply=sq
  g = f32[2] get-tuple-element(c), index=0
  ROOT n = f32[2] negate(g)
}
ENTRY main {
  a = f32[2] parameter(0)
  b = s32[] parameter(1)
  o = f32[2] call(a), to_apply=outer
  u = f32[2] call(o), calls=outer
  inner = (s32[], f32[2]) tuple(b, u)
  ROOT r = (f32[2], (s32[], f32[2])) tuple(o, inner)
}
)";
    Result r = run(text, {make(HLO_F32, {2}, {3, -2}), make(HLO_S32, {}, {42})});
    ASSERT_EQ(r.err, "");
    ASSERT_EQ(r.out.size(), 3u);
    expect_same(r.out[0], {-9, -4});
    expect_same(r.out[1], {42});
    expect_same(r.out[2], {-81, -16});
    EXPECT_EQ(r.types[1], HLO_S32);
}

// Reference dot: result index -> sum over the contracting positions, by explicit index maps.
TEST(HloEval, DotLayouts)
{
    // 2x3 . 3x2 by hand.
    expect_same(run1(entry("  a = f32[2,3] parameter(0)\n  b = f32[3,2] parameter(1)\n"
                           "  ROOT r = f32[2,2] dot(a, b), lhs_contracting_dims={1}, "
                           "rhs_contracting_dims={0}\n"),
                     {make(HLO_F32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                      make(HLO_F32, {3, 2}, {7, 8, 9, 10, 11, 12})}),
                {58, 64, 139, 154});
    // Transposed lhs (contract its dim 0) and rhs contracting dim 1: a^T . b^T.
    expect_same(run1(entry("  a = f32[3,2] parameter(0)\n  b = f32[2,3] parameter(1)\n"
                           "  ROOT r = f32[2,2] dot(a, b), lhs_contracting_dims={0}, "
                           "rhs_contracting_dims={1}\n"),
                     {make(HLO_F32, {3, 2}, {1, 4, 2, 5, 3, 6}),
                      make(HLO_F32, {2, 3}, {7, 9, 11, 8, 10, 12})}),
                {58, 64, 139, 154});
    // Batch dims: [2,2,3] . [2,3,1] batch 0, contract 2 with 1.
    expect_same(run1(entry("  a = s32[2,2,3] parameter(0)\n  b = s32[2,3,1] parameter(1)\n"
                           "  ROOT r = s32[2,2,1] dot(a, b), lhs_batch_dims={0}, "
                           "rhs_batch_dims={0}, lhs_contracting_dims={2}, "
                           "rhs_contracting_dims={1}\n"),
                     {make(HLO_S32, {2, 2, 3}, {1, 2, 3, 4, 5, 6, 1, 0, 0, 0, 1, 0}),
                      make(HLO_S32, {2, 3, 1}, {1, 1, 1, 7, 8, 9})}),
                {6, 15, 7, 8});
    // Batch dim not leading (lhs dim 1, rhs dim 2) and two contracting dims, against loops.
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> d(-9, 9);
    std::vector<double> A(3 * 2 * 4 * 5), B(4 * 5 * 2 * 6);
    for (auto &v : A)
        v = d(rng);
    for (auto &v : B)
        v = d(rng);
    // A [i=3][b=2][k1=4][k2=5], B [k1=4][k2=5][b=2][j=6]; result [b][i][j].
    std::vector<double> want(2 * 3 * 6, 0);
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 6; j++)
                for (int k1 = 0; k1 < 4; k1++)
                    for (int k2 = 0; k2 < 5; k2++)
                        want[(b * 3 + i) * 6 + j] += A[((i * 2 + b) * 4 + k1) * 5 + k2] *
                                                     B[((k1 * 5 + k2) * 2 + b) * 6 + j];
    expect_same(run1(entry("  a = f32[3,2,4,5] parameter(0)\n  b = f32[4,5,2,6] parameter(1)\n"
                           "  ROOT r = f32[2,3,6] dot(a, b), lhs_batch_dims={1}, "
                           "rhs_batch_dims={2}, lhs_contracting_dims={2,3}, "
                           "rhs_contracting_dims={0,1}\n"),
                     {make(HLO_F32, {3, 2, 4, 5}, A), make(HLO_F32, {4, 5, 2, 6}, B)}),
                want);
    // Contracting dims listed in the other order (k2 then k1) give the same sums.
    expect_same(run1(entry("  a = f32[3,2,4,5] parameter(0)\n  b = f32[4,5,2,6] parameter(1)\n"
                           "  ROOT r = f32[2,3,6] dot(a, b), lhs_batch_dims={1}, "
                           "rhs_batch_dims={2}, lhs_contracting_dims={3,2}, "
                           "rhs_contracting_dims={1,0}\n"),
                     {make(HLO_F32, {3, 2, 4, 5}, A), make(HLO_F32, {4, 5, 2, 6}, B)}),
                want);
    // No contracting dims: an outer product.
    expect_same(run1(entry("  a = f32[2] parameter(0)\n  b = f32[3] parameter(1)\n"
                           "  ROOT r = f32[2,3] dot(a, b)\n"),
                     {make(HLO_F32, {2}, {1, 2}), make(HLO_F32, {3}, {3, 4, 5})}),
                {3, 4, 5, 6, 8, 10});
}

TEST(HloEval, DotF32AccumulatesInFloatInOrder)
{
    // 1 + 1e-8 * 4 is 1 in float at every step; a double accumulator would not round it away.
    auto r = run1(entry("  a = f32[1,5] parameter(0)\n  b = f32[5,1] parameter(1)\n"
                        "  ROOT r = f32[1,1] dot(a, b), lhs_contracting_dims={1}, "
                        "rhs_contracting_dims={0}\n"),
                  {make(HLO_F32, {1, 5}, {1, 1e-8, 1e-8, 1e-8, 1e-8}),
                   make(HLO_F32, {5, 1}, {1, 1, 1, 1, 1})});
    EXPECT_EQ(r[0], 1.0);
    // The reverse order accumulates the small terms first.
    r = run1(entry("  a = f32[1,5] parameter(0)\n  b = f32[5,1] parameter(1)\n"
                   "  ROOT r = f32[1,1] dot(a, b), lhs_contracting_dims={1}, "
                   "rhs_contracting_dims={0}\n"),
             {make(HLO_F32, {1, 5}, {1e-8, 1e-8, 1e-8, 1e-8, 1}),
              make(HLO_F32, {5, 1}, {1, 1, 1, 1, 1})});
    float acc = 0;
    for (int i = 0; i < 4; i++)
        acc += 1e-8f;
    acc += 1.0f;
    EXPECT_EQ(r[0], (double)acc);
}

TEST(HloEval, DotS8ExactOnExtremes)
{
    const int M = 3, K = 2048, N = 4; // sums beyond 2^24: a float accumulator would round
    std::mt19937 rng(11);
    const int ext[] = {-128, 127, -127, 1, -1, 0};
    std::vector<double> A(M * K), B(K * N);
    for (auto &v : A)
        v = ext[rng() % 6];
    for (auto &v : B)
        v = ext[rng() % 6];
    for (int k = 0; k < K; k++) { // row 0 and column 0 all -128: 2048 * 16384 = 2^25
        A[k] = -128;
        B[k * N] = -128;
    }
    std::vector<double> want(M * N);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            int64_t s = 0;
            for (int k = 0; k < K; k++)
                s += (int64_t)A[i * K + k] * (int64_t)B[k * N + j];
            want[i * N + j] = (double)s;
        }
    EXPECT_EQ(want[0], 33554432.0);
    Result r = run(entry("  a = s8[3,2048] parameter(0)\n  b = s8[2048,4] parameter(1)\n"
                      "  ROOT r = s32[3,4] dot(a, b), lhs_contracting_dims={1}, "
                      "rhs_contracting_dims={0}\n"),
                {make(HLO_S8, {M, K}, A), make(HLO_S8, {K, N}, B)});
    ASSERT_EQ(r.err, "");
    EXPECT_EQ(r.types[0], HLO_S32);
    expect_same(r.out[0], want);
    // s32 accumulation wraps modulo 2^32: 2 * (2^30 + 2^30) = 2^32 -> 0; plus 1.
    expect_same(run1(entry("  a = s32[1,3] parameter(0)\n  b = s32[3,1] parameter(1)\n"
                           "  ROOT r = s32[1,1] dot(a, b), lhs_contracting_dims={1}, "
                           "rhs_contracting_dims={0}\n"),
                     {make(HLO_S32, {1, 3}, {1073741824, 1073741824, 1}),
                      make(HLO_S32, {3, 1}, {2, 2, 1})}),
                {1});
}

TEST(HloEval, Reduce)
{
    const std::string comps = R"(HloModule m
mx {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT r = f32[] maximum(x, y)
}
ad {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT r = f32[] add(y, x)
}
sumsq {
  acc = f32[] parameter(0)
  v = f32[] parameter(1)
  sq = f32[] multiply(v, v)
  ROOT r = f32[] add(acc, sq)
}
argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(b, a), comparison_direction=GT
  v = f32[] select(gt, b, a)
  i = s32[] select(gt, bi, ai)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY main {
  a = f32[2,3] parameter(0)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
)";
    std::vector<double> a = {1, 5, -2, 7, 0, 3};
    auto red = [&](const std::string &lines) {
        return run(comps + lines + "}\n", {make(HLO_F32, {2, 3}, a)});
    };
    Result r = red("  ROOT r = f32[2] reduce(a, ninf), dimensions={1}, to_apply=mx\n");
    ASSERT_EQ(r.err, "");
    expect_same(r.out[0], {5, 7});
    r = red("  ROOT r = f32[3] reduce(a, zero), dimensions={0}, to_apply=ad\n");
    expect_same(r.out[0], {8, 5, 1});
    r = red("  ROOT r = f32[] reduce(a, zero), dimensions={0,1}, to_apply=ad\n");
    expect_same(r.out[0], {14});
    EXPECT_TRUE(r.dims[0].empty());
    r = red("  ROOT r = f32[2] reduce(a, zero), dimensions={1}, to_apply=sumsq\n");
    ASSERT_EQ(r.err, "");
    expect_same(r.out[0], {30, 58});
    r = red("  ROOT r = f32[2,3] reduce(a, zero), dimensions={}, to_apply=ad\n");
    expect_same(r.out[0], a);
    r = red("  iota = s32[2,3] constant({{0, 1, 2}, {0, 1, 2}})\n  m1 = s32[] constant(-1)\n"
            "  ROOT r = (f32[2], s32[2]) reduce(a, iota, ninf, m1), dimensions={1}, "
            "to_apply=argmax\n");
    ASSERT_EQ(r.err, "");
    ASSERT_EQ(r.out.size(), 2u);
    expect_same(r.out[0], {5, 7});
    expect_same(r.out[1], {1, 0});
    // Float addition in row-major order from the init value: (1e8 + 1) + ... stays 1e8 in float.
    Result big = run(comps.substr(0, comps.find("ENTRY")) +
                      "ENTRY main {\n  a = f32[4] parameter(0)\n  z = f32[] constant(100000000)\n"
                      "  ROOT r = f32[] reduce(a, z), dimensions={0}, to_apply=ad\n}\n",
                  {make(HLO_F32, {4}, {1, 1, 1, 1})});
    ASSERT_EQ(big.err, "");
    EXPECT_EQ(big.out[0][0], 1e8);
}

TEST(HloEval, Errors)
{
    // An elided constant that is needed: located; one that is not needed is fine.
    std::string text = entry("  a = f32[2] parameter(0)\n  c = f32[2] constant({...})\n"
                             "  ROOT r = f32[2] add(a, c)\n");
    Result r = run(text, {make(HLO_F32, {2}, {1, 2})});
    EXPECT_EQ(r.err, at(text, "c =") + "constant: value of 'c' is elided ({...}) but needed");
    r = run(entry("  a = f32[2] parameter(0)\n  c = f32[2] constant({...})\n"
                  "  ROOT r = f32[2] negate(a)\n"),
            {make(HLO_F32, {2}, {1, 2})});
    EXPECT_EQ(r.err, "");
    // Parameters: count and shapes.
    text = entry("  a = f32[2] parameter(0)\n  ROOT r = f32[2] negate(a)\n");
    r = run(text, {make(HLO_F32, {3}, {1, 2, 3})});
    EXPECT_EQ(r.err, at(text, "a =") + "parameter: 'a' is f32[2] but the array given is f32[3]");
    r = run(text, {make(HLO_S32, {2}, {1, 2})});
    EXPECT_EQ(r.err, at(text, "a =") + "parameter: 'a' is f32[2] but the array given is s32[2]");
    r = run(text, {});
    EXPECT_EQ(r.err, "t.hlo:0:0: ENTRY 'main' has 1 parameters, 0 arrays given");
    // A type the evaluator does not handle, and a shape error found by the checker first.
    text = entry("  a = f32[2] parameter(0)\n  h = f16[2] convert(a)\n  ROOT r = f16[2] negate(h)\n");
    r = run(text, {make(HLO_F32, {2}, {1, 2})});
    EXPECT_EQ(r.err, at(text, "h =") + "convert: shape f16[2] of 'h' has an element type the "
                                       "evaluator does not support");
    text = entry("  a = f32[2] parameter(0)\n  ROOT r = f32[3] negate(a)\n");
    r = run(text, {make(HLO_F32, {2}, {1, 2})});
    EXPECT_EQ(r.err.rfind(at(text, "r =") + "negate: ", 0), 0u) << r.err;
    text = entry("  ROOT c = s8[2] constant({1, 300})\n");
    r = run(text, {});
    EXPECT_EQ(r.err, at(text, "c =") + "constant: value 300 of 'c' is not a s8");
}

// ============================================== logical ops, iota, variadic reduce --

TEST(HloCheck, LogicalOpsAndIota)
{
    expect_checks(entry("  p = pred[2,3] parameter(0)\n  i = s8[2,3] parameter(1)\n"
                        "  u = u8[4] parameter(2)\n"
                        "  a = pred[2,3] and(p, p)\n  o = s8[2,3] or(i, i)\n"
                        "  x = u8[4] xor(u, u)\n  n = pred[2,3] not(a)\n  m = s8[2,3] not(o)\n"
                        "  i0 = s32[2,3] iota(), iota_dimension=0\n"
                        "  i1 = f32[2,3] iota(), iota_dimension=1\n"
                        "  i2 = u8[300] iota(), iota_dimension=0\n"
                        "  ROOT t = (pred[2,3], s8[2,3], u8[4], pred[2,3], s8[2,3], s32[2,3], "
                        "f32[2,3], u8[300]) tuple(a, o, x, n, m, i0, i1, i2)\n"));
    const std::string p = "  a = f32[2,3] parameter(0)\n  i = s32[2,3] parameter(1)\n"
                          "  j = s32[3,2] parameter(2)\n  q = pred[2,3] parameter(3)\n";
    for (const char *op : {"and", "or", "xor"}) {
        expect_bad(p + "  bad = f32[2,3] " + op + "(a, a)\n",
                   std::string(op) + ": element type f32 is not pred or integral");
        expect_bad(p + "  bad = s32[2,3] " + op + "(i, j)\n",
                   std::string(op) + ": operand 1 has shape s32[3,2] but the result has s32[2,3]");
        expect_bad(p + "  bad = pred[2,3] " + op + "(q, i)\n",
                   std::string(op) + ": operand 1 has shape s32[2,3] but the result has pred[2,3]");
        expect_bad(p + "  bad = s32[2,3] " + op + "(i)\n",
                   std::string(op) + ": expects 2 operands, has 1");
    }
    expect_bad(p + "  bad = s32[2,3] not(i, i)\n", "not: expects 1 operand, has 2");
    expect_bad(p + "  bad = f32[2,3] not(a)\n", "not: element type f32 is not pred or integral");
    expect_bad(p + "  bad = pred[3,2] not(q)\n",
               "not: operand 0 has shape pred[2,3] but the result has pred[3,2]");
    expect_bad(p + "  t = (s32[2,3]) tuple(i)\n  bad = (s32[2,3]) not(t)\n",
               "not: the result must be an array, is (s32[2,3])");
    expect_bad(p + "  bad = s32[2,3] iota(i), iota_dimension=0\n",
               "iota: expects 0 operands, has 1");
    expect_bad(p + "  bad = s32[] iota(), iota_dimension=0\n",
               "iota: the result must not be a scalar");
    expect_bad(p + "  bad = s32[2,3] iota()\n", "iota: missing iota_dimension");
    expect_bad(p + "  bad = s32[2,3] iota(), iota_dimension=2\n",
               "iota: iota_dimension 2 out of range for rank 2");
    expect_bad(p + "  bad = pred[2,3] iota(), iota_dimension=0\n",
               "iota: element type pred is not integral or floating point");
    expect_bad(p + "  bad = (s32[2]) iota(), iota_dimension=0\n",
               "iota: the result must be an array, is (s32[2])");
}

TEST(HloCheck, VariadicReduceErrors)
{
    const std::string comps = R"(HloModule m
pair {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  ROOT t = (f32[], s32[]) tuple(a, bi)
}
flat {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  ROOT s = f32[] add(a, b)
}
swapped {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  ROOT t = (s32[], f32[]) tuple(bi, a)
}
add2 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
three {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  ROOT t = (f32[], s32[], f32[]) tuple(a, bi, b)
}
wide {
  a = f32[] parameter(0)
  ai = s8[] parameter(1)
  b = f32[] parameter(2)
  bi = s8[] parameter(3)
  ROOT t = (f32[], s8[]) tuple(a, bi)
}
ENTRY main {
  a = f32[2,3] parameter(0)
  i = s32[2,3] parameter(1)
  j = s32[3,2] parameter(2)
  k = f32[] constant(0)
  z = s32[] constant(0)
  zz = s32[1] constant({0})
  e = s8[2,3] parameter(3)
  zs = s8[] constant(0)
)";
    auto bad = [&](const std::string &line, const std::string &what) {
        std::string text = comps + line + "}\n";
        std::string msg = check_error(text);
        EXPECT_EQ(msg.rfind(at(text, "bad ="), 0), 0u) << msg;
        EXPECT_NE(msg.find(what), std::string::npos) << msg << "\nwanted: " << what;
    };
    expect_checks(comps + "  ROOT r = (f32[2], s32[2]) reduce(a, i, k, z), dimensions={1}, "
                          "to_apply=pair\n}\n");
    expect_checks(comps + "  ROOT r = (f32[], s32[]) reduce(a, i, k, z), dimensions={0,1}, "
                          "to_apply=pair\n}\n");
    bad("  bad = (f32[2], s32[2]) reduce(a, j, k, z), dimensions={1}, to_apply=pair\n",
        "reduce: input 1 has shape s32[3,2] but input 0 has f32[2,3]");
    bad("  bad = (f32[2], s32[2]) reduce(a, i, k, k), dimensions={1}, to_apply=pair\n",
        "reduce: init value 1 has shape f32[], must be a scalar of input s32[2,3]'s type");
    bad("  bad = (f32[2], s32[2]) reduce(a, i, k, zz), dimensions={1}, to_apply=pair\n",
        "reduce: init value 1 has shape s32[1], must be a scalar of input s32[2,3]'s type");
    bad("  bad = (f32[2], s32[2]) reduce(a, i, k, z), dimensions={1}, to_apply=add2\n",
        "reduce: to_apply 'add2' has 2 parameters, needs 4");
    bad("  bad = (f32[2], s32[2]) reduce(a, i, k, z), dimensions={1}, to_apply=flat\n",
        "reduce: to_apply 'flat' must return a tuple of 2 scalars");
    bad("  bad = (f32[2], s32[2]) reduce(a, i, k, z), dimensions={1}, to_apply=three\n",
        "reduce: to_apply 'three' must return a tuple of 2 scalars");
    bad("  bad = (f32[2], s32[2]) reduce(a, i, k, z), dimensions={1}, to_apply=swapped\n",
        "reduce: to_apply 'swapped' returns s32[], must be f32[]");
    bad("  bad = (f32[2], s8[2]) reduce(a, e, k, zs), dimensions={1}, to_apply=pair\n",
        "reduce: parameter 1 of to_apply 'pair' is s32[], must be s8[]");
    bad("  bad = (f32[2], s32[2]) reduce(a, i, k, z), dimensions={1}, to_apply=wide\n",
        "reduce: parameter 1 of to_apply 'wide' is s8[], must be s32[]");
    bad("  bad = f32[2] reduce(a, i, k, z), dimensions={1}, to_apply=pair\n",
        "reduce: result must be a tuple of 2 arrays");
    bad("  bad = (f32[2], s32[2], f32[2]) reduce(a, i, k, z), dimensions={1}, to_apply=pair\n",
        "reduce: result must be a tuple of 2 arrays");
    bad("  bad = (f32[2], s32[3]) reduce(a, i, k, z), dimensions={1}, to_apply=pair\n",
        "reduce: result s32[3], expected s32[2]");
    bad("  bad = (f32[2], f32[2]) reduce(a, i, k, z), dimensions={1}, to_apply=pair\n",
        "reduce: result f32[2], expected s32[2]");
    bad("  bad = (f32[2], s32[2]) reduce(a, i, k), dimensions={1}, to_apply=pair\n",
        "reduce: expects inputs and as many init values, has 3 operands");
}

TEST(HloEval, LogicalOps)
{
    auto bin = [&](hlo_type t, const char *ty, const char *op, std::vector<double> a,
                   std::vector<double> b) {
        std::string s = std::string("  a = ") + ty + "[4] parameter(0)\n  b = " + ty +
                        "[4] parameter(1)\n  ROOT r = " + ty + "[4] " + op + "(a, b)\n";
        return run1(entry(s), {make(t, {4}, a), make(t, {4}, b)});
    };
    auto un = [&](hlo_type t, const char *ty, std::vector<double> a) {
        return run1(entry(std::string("  a = ") + ty + "[4] parameter(0)\n  ROOT r = " + ty +
                          "[4] not(a)\n"),
                    {make(t, {4}, a)});
    };
    // pred: logical, every combination.
    const std::vector<double> p = {0, 0, 1, 1}, q = {0, 1, 0, 1};
    expect_same(bin(HLO_PRED, "pred", "and", p, q), {0, 0, 0, 1});
    expect_same(bin(HLO_PRED, "pred", "or", p, q), {0, 1, 1, 1});
    expect_same(bin(HLO_PRED, "pred", "xor", p, q), {0, 1, 1, 0});
    expect_same(un(HLO_PRED, "pred", p), {1, 1, 0, 0});
    // Integers: bitwise on the two's complement bits, in the element type.
    const double mn = -2147483648.0, mx = 2147483647.0;
    expect_same(bin(HLO_S32, "s32", "and", {-1, mn, 12, -6}, {mx, -1, 10, 7}), {mx, mn, 8, 2});
    expect_same(bin(HLO_S32, "s32", "or", {mn, 0, 12, -8}, {mx, 0, 10, 3}), {-1, 0, 14, -5});
    expect_same(bin(HLO_S32, "s32", "xor", {-1, mn, 12, -1}, {mx, mx, 10, -1}), {mn, -1, 6, 0});
    expect_same(un(HLO_S32, "s32", {0, -1, mx, mn}), {-1, 0, mn, mx});
    expect_same(bin(HLO_S8, "s8", "and", {-128, -1, 127, -3}, {-1, 127, -128, 6}),
                {-128, 127, 0, 4});
    expect_same(bin(HLO_S8, "s8", "xor", {-128, -1, 127, 5}, {127, 1, -1, 5}), {-1, -2, -128, 0});
    expect_same(un(HLO_S8, "s8", {0, -128, 127, 5}), {-1, 127, -128, -6});
    expect_same(bin(HLO_U8, "u8", "or", {128, 0, 255, 3}, {127, 0, 1, 12}), {255, 0, 255, 15});
    expect_same(bin(HLO_U8, "u8", "xor", {255, 0, 170, 3}, {1, 0, 85, 12}), {254, 0, 255, 15});
    expect_same(un(HLO_U8, "u8", {0, 255, 1, 170}), {255, 0, 254, 85});
}

TEST(HloEval, Iota)
{
    expect_same(run1(entry("  ROOT r = s32[2,3] iota(), iota_dimension=0\n"), {}),
                {0, 0, 0, 1, 1, 1});
    expect_same(run1(entry("  ROOT r = f32[2,3] iota(), iota_dimension=1\n"), {}),
                {0, 1, 2, 0, 1, 2});
    // [2,3,4] along the middle dim: element (i,j,k) is j.
    std::vector<double> want;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 4; k++)
                want.push_back(j);
    Result r = run(entry("  ROOT r = s8[2,3,4] iota(), iota_dimension=1\n"), {});
    ASSERT_EQ(r.err, "");
    EXPECT_EQ(r.types[0], HLO_S8);
    EXPECT_EQ(r.dims[0], (std::vector<int64_t>{2, 3, 4}));
    expect_same(r.out[0], want);
    // Converted to the element type: u8 and s8 wrap past their range, as XLA's convert does.
    std::vector<double> u = run1(entry("  ROOT r = u8[300] iota(), iota_dimension=0\n"), {});
    std::vector<double> s = run1(entry("  ROOT r = s8[300] iota(), iota_dimension=0\n"), {});
    ASSERT_EQ(u.size(), 300u);
    ASSERT_EQ(s.size(), 300u);
    for (int i = 0; i < 300; i++) {
        EXPECT_EQ(u[i], i % 256) << i;
        EXPECT_EQ(s[i], (int8_t)(uint8_t)i) << i;
    }
    // Empty dims give no elements.
    r = run(entry("  ROOT r = f32[0,3] iota(), iota_dimension=1\n"), {});
    ASSERT_EQ(r.err, "");
    EXPECT_TRUE(r.out[0].empty());
}

// XLA's argmax as the fixture's comparator defines it: the first index of the maximum, where
// NaN is greater than everything (so the first NaN), and -0 equals +0.
std::vector<double> argmax_rows(const std::vector<float> &x, int rows, int cols)
{
    std::vector<double> idx;
    for (int r = 0; r < rows; r++) {
        int best = 0;
        for (int c = 1; c < cols; c++) {
            float b = x[r * cols + best], v = x[r * cols + c];
            if (std::isnan(b))
                break;
            if (std::isnan(v) || v > b)
                best = c;
        }
        idx.push_back(best);
    }
    return idx;
}

TEST(HloEval, JaxArgmaxAgainstReference)
{
    const std::string text = [] {
        std::ifstream f(kSrc + "tests/hlo/jax_argmax.hlo");
        std::ostringstream s;
        s << f.rdbuf();
        return s.str();
    }();
    ASSERT_FALSE(text.empty());
    const int R = 4, C = 10;
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = INFINITY;
    auto check = [&](const std::vector<float> &x, const char *what) {
        std::vector<double> xd(x.begin(), x.end());
        Result r = run(text, {make(HLO_F32, {R, C}, xd)});
        ASSERT_EQ(r.err, "") << what;
        ASSERT_EQ(r.out.size(), 1u);
        EXPECT_EQ(r.types[0], HLO_S32);
        EXPECT_EQ(r.dims[0], std::vector<int64_t>{R});
        EXPECT_EQ(r.out[0], argmax_rows(x, R, C)) << what;
    };
    // Edge rows: all -inf (index 0: the init value's index wins a tie), a late NaN, several
    // NaNs, -0 before +0 (a tie), +inf after NaN.
    std::vector<float> edge(R * C, -inf);
    for (int c = 0; c < C; c++) {
        edge[C + c] = (float)(c % 3);
        edge[2 * C + c] = c == 4 || c == 7 ? nan : (float)c;
        edge[3 * C + c] = c == 2 ? -0.0f : c == 5 ? 0.0f : c == 6 ? nan : c == 8 ? inf : -1;
    }
    edge[C + C - 1] = nan;
    check(edge, "edges");
    EXPECT_EQ(argmax_rows(edge, R, C), (std::vector<double>{0, 9, 4, 6}));
    // Random rows from a few values: many ties, some NaN and infinities.
    std::mt19937 rng(5);
    const float pool[] = {-2, -1, -0.0f, 0, 1, 2, inf, -inf, nan};
    for (int run = 0; run < 300; run++) {
        std::vector<float> x(R * C);
        int kinds = run % 3 == 0 ? 9 : 6; // a third of the runs with NaN and infinities
        for (float &v : x)
            v = pool[rng() % kinds];
        check(x, "random");
    }
}

TEST(HloEval, VariadicReduceFoldOrder)
{
    // Two folds in one reduce over dims {0,2} of [2,3,4]: acc - x (order matters in float, and
    // for its sign) and the index of the element folded last: row-major over the reduced dims,
    // from the init values.
    const std::string text = R"(HloModule m
fold {
  acc = f32[] parameter(0)
  last = s32[] parameter(1)
  x = f32[] parameter(2)
  xi = s32[] parameter(3)
  d = f32[] subtract(acc, x)
  ROOT t = (f32[], s32[]) tuple(d, xi)
}
ENTRY main {
  a = f32[2,3,4] parameter(0)
  i = s32[2,3,4] parameter(1)
  k = f32[] constant(100000000)
  m = s32[] constant(-7)
  ROOT r = (f32[3], s32[3]) reduce(a, i, k, m), dimensions={0,2}, to_apply=fold
}
)";
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-4, 4);
    std::vector<double> a(24), ids(24);
    for (int n = 0; n < 24; n++) {
        a[n] = n % 5 == 0 ? 1 : u(rng); // the 1s vanish against 1e8 in float
        ids[n] = 1000 + (int)(rng() % 1000);
    }
    std::vector<double> want_v, want_i;
    for (int j = 0; j < 3; j++) {
        float acc = 1e8f;
        double last = -7;
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < 4; k++) {
                acc -= (float)a[(i * 3 + j) * 4 + k];
                last = ids[(i * 3 + j) * 4 + k];
            }
        want_v.push_back(acc);
        want_i.push_back(last);
    }
    Result r = run(text, {make(HLO_F32, {2, 3, 4}, a), make(HLO_S32, {2, 3, 4}, ids)});
    ASSERT_EQ(r.err, "");
    ASSERT_EQ(r.out.size(), 2u);
    EXPECT_EQ(r.types[1], HLO_S32);
    expect_same(r.out[0], want_v);
    expect_same(r.out[1], want_i);
    // With nothing to fold, the init values: reduce of a [2,0] array over dim 1.
    r = run("HloModule m\n" + text.substr(text.find("fold {"), text.find("ENTRY") -
                                                                   text.find("fold {")) +
                "ENTRY main {\n  a = f32[2,0] parameter(0)\n  i = s32[2,0] parameter(1)\n"
                "  k = f32[] constant(1.5)\n  m = s32[] constant(-7)\n"
                "  ROOT r = (f32[2], s32[2]) reduce(a, i, k, m), dimensions={1}, to_apply=fold\n}\n",
            {make(HLO_F32, {2, 0}, {}), make(HLO_S32, {2, 0}, {})});
    ASSERT_EQ(r.err, "");
    expect_same(r.out[0], {1.5, 1.5});
    expect_same(r.out[1], {-7, -7});
}

// ============================================================ hooks --

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

int segment_hook(void *ctx, const hlo_instr *in, hlo_array *const *ops, int n_ops,
                 hlo_array **outs, int n_outs, char *err, size_t errlen)
{
    Segments *s = (Segments *)ctx;
    std::string target = in->custom_call_target;
    s->targets.push_back(target);
    const hlo_array *d = ops[0];
    auto f32 = [](const hlo_array *a) { return (const float *)a->data; };
    if (s->mode == Segments::FAIL) {
        outs[0] = copy_of(d); // made before failing: the evaluator frees it
        std::snprintf(err, errlen, "%s", s->msg.c_str());
        return -1;
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
            ((float *)outs[0]->data)[i] =
                f32(d)[i] * 2 + (float)((const int32_t *)ops[1]->data)[0];
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
        EXPECT_EQ(hlo_eval_instr(p.m, "t.hlo", &c->instrs[hlo_find_instr(c, name)], ops.data(),
                                 &out, &e), -1);
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
    EXPECT_STREQ(err.msg, "t.hlo:0:0: instruction 'neg' is not one of the module's");
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
    std::string text;
    {
        std::ifstream f(kSrc + "tests/hlo/jax_argmax.hlo");
        std::ostringstream s;
        s << f.rdbuf();
        text = s.str();
    }
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
    EXPECT_EQ(std::string(err.msg),
              at(text, "reduce.11 =") + "reduce: operand 1 of 'reduce.11' is s32[4,10] but the "
                                        "array given is s32[10]");
    for (hlo_array *a : {iv, bv, nv, zv, xa})
        hlo_array_free(a);

    // The reducer's logical ops, one scalar at a time.
    const hlo_computation *reg = &p.m->comps[hlo_find_computation(p.m, "region_0.1")];
    hlo_array *t = make(HLO_PRED, {}, {1}), *f = make(HLO_PRED, {}, {0});
    auto one = [&](const char *name, hlo_array *a, hlo_array *b) {
        hlo_array *o = nullptr, *in[2] = {a, b};
        EXPECT_EQ(hlo_eval_instr(p.m, "t.hlo", &reg->instrs[hlo_find_instr(reg, name)], in, &o,
                                 &err), 0) << err.msg;
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

// ============================================================ safetensors --

std::string u64le(uint64_t v)
{
    std::string s(8, '\0');
    for (int i = 0; i < 8; i++)
        s[i] = (char)(v >> (8 * i));
    return s;
}

std::string st_image(const std::string &header, const std::string &data)
{
    return u64le(header.size()) + header + data;
}

std::string st_error(const std::string &image)
{
    st_file f;
    char err[256] = "";
    EXPECT_EQ(st_parse(image.data(), image.size(), &f, err, sizeof err), -1) << "accepted";
    return err;
}

std::string bytes_of(const void *p, size_t n) { return std::string((const char *)p, n); }

TEST(Safetensors, ValidFile)
{
    float f[2] = {1.5f, -2};
    int32_t i32[3] = {-7, 0, 2147483647};
    int8_t i8[2] = {-128, 127};
    uint8_t u8[1] = {255};
    std::string data = bytes_of(f, 8) + bytes_of(i32, 12) + bytes_of(i8, 2) + bytes_of(u8, 1);
    std::string header = R"({"__metadata__":{"k\"ey":"v\u00e9\ud83d\ude00\n","w":"0"},)"
                         R"( "f":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                         R"("i": {"shape":[1,3], "data_offsets":[8,20], "dtype":"I32"},)"
                         R"("b":{"dtype":"I8","shape":[2],"data_offsets":[20,22]},)"
                         R"("u":{"dtype":"U8","shape":[],"data_offsets":[22,23]},)"
                         R"("e":{"dtype":"F32","shape":[0,4],"data_offsets":[23,23]}}   )";
    std::string image = st_image(header, data);
    st_file st;
    char err[256] = "";
    ASSERT_EQ(st_parse(image.data(), image.size(), &st, err, sizeof err), 0) << err;
    EXPECT_EQ(st.n_tensors, 5);
    const st_tensor *t = st_find(&st, "i");
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->dtype, ST_I32);
    EXPECT_EQ(t->rank, 2);
    EXPECT_EQ(t->shape[1], 3);
    EXPECT_EQ(t->elements, 3);
    EXPECT_EQ(t->size, 12u);
    EXPECT_EQ(memcmp(t->data, i32, 12), 0);
    EXPECT_EQ(memcmp(st_find(&st, "f")->data, f, 8), 0);
    EXPECT_EQ(st_find(&st, "b")->dtype, ST_I8);
    EXPECT_EQ(st_find(&st, "u")->rank, 0);
    EXPECT_EQ(st_find(&st, "u")->elements, 1);
    EXPECT_EQ(st_find(&st, "e")->elements, 0);
    EXPECT_EQ(st_find(&st, "nope"), nullptr);
    EXPECT_STREQ(st_meta(&st, "k\"ey"), "v\xc3\xa9\xf0\x9f\x98\x80\n");
    EXPECT_STREQ(st_meta(&st, "w"), "0");
    EXPECT_EQ(st_meta(&st, "x"), nullptr);
    st_free(&st);

    // The real export: 4 float32 tensors and the parameter numbers.
    ASSERT_EQ(st_load((kSrc + "models/mnist/mlp.safetensors").c_str(), &st, err, sizeof err), 0)
        << err;
    EXPECT_EQ(st.n_tensors, 4);
    EXPECT_EQ(st_find(&st, "w1.1")->shape[0], 784);
    EXPECT_STREQ(st_meta(&st, "b2.1"), "3");
    EXPECT_STREQ(st_meta(&st, "input"), "x.1=4");
    st_free(&st);
    EXPECT_EQ(st_load("/nonexistent/x.safetensors", &st, err, sizeof err), -1);
    EXPECT_STREQ(err, "cannot open: No such file or directory");
}

TEST(Safetensors, Corruptions)
{
    float f[4] = {1, 2, 3, 4};
    std::string data = bytes_of(f, 16);
    const std::string good = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})";
    std::string image = st_image(good, data);
    st_file st;
    char err[256];
    ASSERT_EQ(st_parse(image.data(), image.size(), &st, err, sizeof err), 0) << err;
    st_free(&st);

    auto has = [](const std::string &msg, const std::string &what) {
        EXPECT_NE(msg.find(what), std::string::npos) << "message: " << msg << "\nwanted: " << what;
    };
    // Truncated: inside the length field, inside the header, inside the data.
    has(st_error(image.substr(0, 5)), "file is 5 bytes, shorter than the 8-byte header length");
    has(st_error(image.substr(0, 30)), "bad header length");
    has(st_error(image.substr(0, image.size() - 1)),
        "tensor 'b': data_offsets [8, 16] out of range: the data has 15 bytes");
    // Bad header lengths.
    has(st_error(u64le(0) + good + data), "bad header length 0");
    has(st_error(u64le(1ull << 62) + good + data), "bad header length 4611686018427387904");
    has(st_error(u64le(good.size() - 1) + good + data), "bad JSON header");
    // Bad JSON.
    has(st_error(st_image(R"({"a" {"dtype":"F32"}})", "")), "expected ':'");
    has(st_error(st_image(R"({"a":{"dtype":"F32)", "")), "closing a string");
    has(st_error(st_image(R"({"a":{"dtype":"F\q32"}})", "")), "one of the escapes");
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}})", "")),
        "expected a non-negative integer");
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}} x)",
                          data)),
        "expected the end of the header");
    has(st_error(st_image(R"([])", "")), "expected '{'");
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}})",
                          data)),
        "tensor 'a' has unknown key 'x'");
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[2]}})", data)),
        "tensor 'a' has no 'data_offsets'");
    has(st_error(st_image(R"({"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", data)),
        "tensor 'a': dtype 'F16' not supported (F32, I8, I32, U8)");
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                          R"("a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", data)),
        "tensor 'a' appears twice");
    has(st_error(st_image(R"({"__metadata__":{"k":1}})", "")), "expected '\"'");
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", data)),
        "data_offsets needs 2 entries");
    // Offsets out of range, overlapping, reversed; sizes not matching dtype * shape.
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}})", data)),
        "tensor 'a': data_offsets [12, 20] out of range: the data has 16 bytes");
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                          R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", data)),
        "tensors 'a' [0, 8] and 'b' [4, 12] overlap");
    has(st_error(st_image(R"({"b":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                          R"("a":{"dtype":"I8","shape":[1],"data_offsets":[15,16]}})", data)),
        "tensors 'b' [0, 16] and 'a' [15, 16] overlap");
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", data)),
        "tensor 'a': data_offsets [8, 0] end before they begin");
    has(st_error(st_image(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", data)),
        "tensor 'a': F32 [3] needs 12 bytes but data_offsets span 8");
    has(st_error(st_image(R"({"a":{"dtype":"I32","shape":[2,1],"data_offsets":[0,16]}})", data)),
        "tensor 'a': I32 [2,1] needs 8 bytes but data_offsets span 16");
    has(st_error(st_image(R"({"a":{"dtype":"U8","shape":[4294967296,4294967296,16],)"
                          R"("data_offsets":[0,16]}})", data)),
        "tensor 'a': shape too large");
    // Every truncation of the good image fails cleanly (ASan checks the cleanup).
    for (size_t n = 0; n < image.size(); n++) {
        EXPECT_EQ(st_parse(image.data(), n, &st, err, sizeof err), -1) << n;
        EXPECT_NE(err[0], 0);
    }
}

// ============================================================ end to end --

struct Npy {
    npy_array a{};
    explicit Npy(const std::string &path)
    {
        char err[256];
        EXPECT_EQ(npy_load(path.c_str(), &a, err, sizeof err), 0) << path << ": " << err;
    }
    ~Npy() { npy_free(&a); }
    Npy(const Npy &) = delete;
    Npy &operator=(const Npy &) = delete;
};

// Writes the tensors of src into a new image under new names, with the given metadata JSON.
std::string renamed(const st_file &src, const std::vector<std::string> &names,
                    const std::string &meta)
{
    std::string header = "{\"__metadata__\":" + meta, data;
    for (int i = 0; i < src.n_tensors; i++) {
        const st_tensor &t = src.tensors[i];
        std::string shape;
        for (int d = 0; d < t.rank; d++)
            shape += (d ? "," : "") + std::to_string(t.shape[d]);
        header += ",\"" + names[i] + "\":{\"dtype\":\"F32\",\"shape\":[" + shape +
                  "],\"data_offsets\":[" + std::to_string(data.size()) + "," +
                  std::to_string(data.size() + t.size) + "]}";
        data += bytes_of(t.data, t.size);
    }
    return st_image(header + "}", data);
}

// Runs the MLP of `hlo` with weights of image on the first 64 test digits against JAX.
void check_mlp(const std::string &hlo, const std::string &image)
{
    hlo_error err{};
    hlo_module *m = hlo_parse_file((kSrc + hlo).c_str(), &err);
    ASSERT_NE(m, nullptr) << err.msg;
    st_file st;
    char serr[256];
    ASSERT_EQ(st_parse(image.data(), image.size(), &st, serr, sizeof serr), 0) << serr;
    hlo_array *params[5];
    ASSERT_EQ(hlo_bind_safetensors(m, hlo.c_str(), &st, params, 5, &err), 0) << err.msg;
    st_free(&st);
    for (int k = 0; k < 4; k++)
        EXPECT_NE(params[k], nullptr) << k;
    EXPECT_EQ(params[4], nullptr); // the input x.1 is not stored
    int64_t xd[2] = {16, 784};
    params[4] = hlo_array_new(HLO_F32, 2, xd);

    Npy x(kSrc + "models/mnist/test_x_u8.npy"), logits(kSrc + "models/mnist/jax_logits.npy"),
        pred(kSrc + "models/mnist/jax_pred.npy");
    ASSERT_EQ(x.a.dtype, NPY_UINT8);
    ASSERT_EQ(logits.a.dtype, NPY_FLOAT32);
    ASSERT_EQ(pred.a.dtype, NPY_INT32);
    const uint8_t *xs = (const uint8_t *)x.a.data;
    const float *ls = (const float *)logits.a.data;
    const int32_t *ps = (const int32_t *)pred.a.data;
    double worst = 0;
    for (int batch = 0; batch < 4; batch++) {
        float *in = (float *)params[4]->data;
        for (int i = 0; i < 16 * 784; i++)
            in[i] = (float)xs[batch * 16 * 784 + i] / 255.0f;
        hlo_array **outs = nullptr;
        int n = 0;
        ASSERT_EQ(hlo_eval(m, hlo.c_str(), params, 5, &outs, &n, &err), 0) << err.msg;
        ASSERT_EQ(n, 1);
        ASSERT_EQ(dims_of(outs[0]), (std::vector<int64_t>{16, 10}));
        const float *o = (const float *)outs[0]->data;
        for (int r = 0; r < 16; r++) {
            int row = batch * 16 + r, best = 0;
            for (int c = 0; c < 10; c++) {
                double d = std::fabs((double)o[r * 10 + c] - ls[row * 10 + c]);
                worst = std::max(worst, d);
                EXPECT_LE(d, 1e-4) << hlo << " digit " << row << " class " << c;
                if (o[r * 10 + c] > o[r * 10 + best])
                    best = c;
            }
            EXPECT_EQ(best, ps[row]) << hlo << " digit " << row;
        }
        hlo_arrays_free(outs, n);
    }
    std::printf("%s: max |evaluator - jax| = %.3g\n", hlo.c_str(), worst);
    for (hlo_array *a : params)
        hlo_array_free(a);
    hlo_module_free(m);
}

std::string slurp(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

TEST(HloEndToEnd, MnistShortStyleByName)
{
    check_mlp("models/mnist/mlp.hlo", slurp(kSrc + "models/mnist/mlp.safetensors"));
}

TEST(HloEndToEnd, MnistDumpStyleByName)
{
    check_mlp("models/mnist/mlp.dump.hlo", slurp(kSrc + "models/mnist/mlp.safetensors"));
}

TEST(HloEndToEnd, MnistBindingWithoutSuffixAndByNumber)
{
    st_file st;
    char err[256];
    ASSERT_EQ(st_load((kSrc + "models/mnist/mlp.safetensors").c_str(), &st, err, sizeof err), 0);
    std::vector<std::string> names;
    for (int i = 0; i < st.n_tensors; i++)
        names.push_back(st.tensors[i].name);
    // "w1.1" -> "w1": bound by the name without the suffix.
    std::vector<std::string> bare;
    for (const std::string &s : names)
        bare.push_back(s.substr(0, s.find('.')));
    std::string bare_image = renamed(st, bare, "{}");
    // Unrelated names: bound by the parameter number in the metadata.
    std::vector<std::string> anon;
    std::string meta = "{";
    for (size_t i = 0; i < names.size(); i++) {
        anon.push_back("t" + std::to_string(i));
        meta += (i ? ",\"" : "\"") + anon[i] + "\":\"" + st_meta(&st, names[i].c_str()) + "\"";
    }
    std::string anon_image = renamed(st, anon, meta + ",\"input\":\"x.1=4\"}");
    // Tensors named by the parameter number.
    std::vector<std::string> numbered;
    for (const std::string &s : names)
        numbered.push_back(st_meta(&st, s.c_str()));
    std::string numbered_image = renamed(st, numbered, "{}");
    st_free(&st);
    check_mlp("models/mnist/mlp.hlo", bare_image);
    check_mlp("models/mnist/mlp.dump.hlo", anon_image);
    check_mlp("models/mnist/mlp.hlo", numbered_image);

    // A tensor whose shape does not fit its parameter is a located error.
    std::string text = slurp(kSrc + "models/mnist/mlp.hlo");
    hlo_error herr{};
    hlo_module *m = hlo_parse(text.data(), text.size(), "mlp.hlo", &herr);
    ASSERT_NE(m, nullptr);
    float z[10] = {0};
    std::string bad = st_image(R"({"w1.1":{"dtype":"F32","shape":[10],"data_offsets":[0,40]}})",
                               bytes_of(z, 40));
    ASSERT_EQ(st_parse(bad.data(), bad.size(), &st, err, sizeof err), 0) << err;
    hlo_array *params[5];
    EXPECT_EQ(hlo_bind_safetensors(m, "mlp.hlo", &st, params, 5, &herr), -1);
    EXPECT_EQ(std::string(herr.msg),
              at(text, "w1.1 =").replace(0, 5, "mlp.hlo") +
                  "parameter: 'w1.1' is f32[784,256] but tensor 'w1.1' is f32[10]");
    for (hlo_array *a : params)
        EXPECT_EQ(a, nullptr);
    st_free(&st);
    hlo_module_free(m);
}

} // namespace

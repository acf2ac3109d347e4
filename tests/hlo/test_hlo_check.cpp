// test_hlo_check.cpp - the HLO shape checker (hlo_check): every fixture and model passes, valid
// use of every op, and for each op, logical op, iota and variadic reduce the located error that
// names the instruction and the sizes or shapes that differ.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "hlo/hlo.h"
#include "tests/support/hlo_test.h"

namespace
{

using hlo_test::at;
using hlo_test::entry;
using hlo_test::kSrc;
using hlo_test::Parsed;

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

// What no result depends on is not checked (nothing evaluates it): torch_xla leaves max_pool2d's
// index computation in its dumps, with ops and types the checker does not take.
TEST(HloCheck, DeadCodeIsNotChecked)
{
    const std::string text = "HloModule m\n"
                             "sel { a = u32[] parameter(0)\n b = u32[] parameter(1)\n"
                             "  ROOT c = pred[] compare(a, b), direction=GE }\n"
                             "ENTRY main {\n"
                             "  x = f32[4] parameter(0)\n"
                             "  i = u32[4] iota(), iota_dimension=0\n"
                             "  s = u32[4] select-and-scatter(i, i, i), select=sel\n"
                             "  r = f32[4] rsqrt(x)\n"
                             "  ROOT y = f32[4] negate(x)\n"
                             "}\n";
    hlo_error err{};
    hlo_module *m = hlo_parse(text.data(), text.size(), "t.hlo", &err);
    ASSERT_NE(m, nullptr) << err.msg;
    EXPECT_EQ(hlo_check(m, "t.hlo", &err), 0) << err.msg;
    hlo_module_free(m);
}

TEST(HloCheck, StructuralErrors)
{
    expect_bad("  ROOT bad = f32[2] real(a)\n  a = f32[2] parameter(0)\n", "real: unsupported op");
    expect_bad("  a = f32[3] parameter(0)\n  v = f32[] parameter(1)\n"
               "  ROOT bad = f32[7] pad(a, v), padding=1_2_1\n",
               "pad: result dim 0 has size 7, padding makes it 8");
    expect_bad("  a = f32[3] parameter(0)\n  v = s32[] parameter(1)\n"
               "  ROOT bad = f32[3] pad(a, v), padding=0_0\n",
               "pad: operand element type s32 differs from the result's f32");
    expect_bad("  a = f32[3] parameter(0)\n  v = f32[1] parameter(1)\n"
               "  ROOT bad = f32[3] pad(a, v), padding=0_0\n",
               "pad: the padding value must be a scalar");
    expect_bad("  a = f32[3,2] parameter(0)\n  v = f32[] parameter(1)\n"
               "  ROOT bad = f32[3,2] pad(a, v), padding=0_0\n",
               "pad: padding has 1 dimensions, the operand 2");
    expect_bad("  a = f32[3] parameter(0)\n  v = f32[] parameter(1)\n"
               "  ROOT bad = f32[0] pad(a, v), padding=-2_-2\n",
               "pad: dimension 0: padding -2_-2_0 leaves -1 elements");
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
    std::string text =
        "HloModule m\nf {\n  x = f32[] parameter(0)\n"
        "  bad = f32[] call(x), to_apply=f\n}\n"
        "ENTRY main {\n  a = f32[] parameter(0)\n  ROOT c = f32[] call(a), to_apply=f\n}\n";
    std::string msg = check_error(text);
    EXPECT_EQ(msg.rfind(at(text, "bad ="), 0), 0u) << msg;
    EXPECT_NE(msg.find("call: calls 'f', which is on or leads into a cycle of calls"),
              std::string::npos)
        << msg;
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

} // namespace

// ================================================ convolution, reduce-window --

// input_output_alias names a parameter and an output of the ENTRY with one shape, each output
// once; the error is located at the alias.
TEST(HloCheck, Aliases)
{
    const auto text = [](const std::string &aliases) {
        return "HloModule m, input_output_alias={ " + aliases +
               " }\nENTRY e {\n  a = f32[2] parameter(0)\n  b = (f32[3], s32[]) parameter(1)\n"
               "  n = f32[2] negate(a)\n  ROOT r = (f32[2], f32[2]) tuple(n, a)\n}\n";
    };
    expect_checks(text("{0}: (0, {}, may-alias), {1}: (0, {})"));
    EXPECT_EQ(check_error(text("{0}: (0, {}), {1}: (2, {})")),
              "t.hlo:1:49: input_output_alias {1}: (2, {}): the ENTRY has no such parameter "
              "(output f32[2], parameter -)");
    EXPECT_EQ(check_error(text("{2}: (0, {})")),
              "t.hlo:1:35: input_output_alias {2}: (0, {}): the ENTRY's result has no such output "
              "(output -, parameter f32[2])");
    EXPECT_EQ(check_error(text("{0}: (1, {0})")),
              "t.hlo:1:35: input_output_alias {0}: (1, {0}): the output and the parameter differ "
              "in shape (output f32[2], parameter f32[3])");
    EXPECT_EQ(check_error(text("{0}: (1, {2})")),
              "t.hlo:1:35: input_output_alias {0}: (1, {2}): the parameter has no such element "
              "(output f32[2], parameter -)");
    EXPECT_EQ(check_error(text("{1}: (0, {}), {1}: (0, {})")),
              "t.hlo:1:49: input_output_alias {1}: (0, {}): the output is aliased twice (output "
              "f32[2], parameter f32[2])");
}

TEST(HloCheck, ValidConvolutions)
{
    // Result shapes as XLA infers them: JAX's NHWC/HWIO, PyTorch's NCHW/OIHW, strides, padding
    // (negative too), dilations, feature and batch groups, integer types, 0 and 1 spatial dims,
    // a window that does not fit (no positions), dims in any order.
    expect_checks(entry(R"(  x = f32[2,8,8,1] parameter(0)
  w = f32[3,3,1,4] parameter(1)
  jax = f32[2,8,8,4] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  xt = f32[4,1,28,28] parameter(2)
  wt = f32[32,1,3,3] parameter(3)
  torch = f32[4,32,26,26] convolution(xt, wt), window={size=3x3}, dim_labels=bf01_oi01->bf01
  x7 = f32[1,7,7,3] parameter(4)
  w7 = f32[3,3,3,2] parameter(5)
  strided = f32[1,3,3,2] convolution(x7, w7), window={size=3x3 stride=2x2 pad=1_0x-1_2}, dim_labels=b01f_01io->b01f
  xd = f32[1,2,5,5] parameter(6)
  wd = f32[3,2,2,2] parameter(7)
  dilated = f32[1,3,8,3] convolution(xd, wd), window={size=2x2 lhs_dilate=2x1 rhs_dilate=1x2}, dim_labels=bf01_oi01->bf01
  xg = f32[2,4,4,6] parameter(8)
  wg = f32[3,3,2,9] parameter(9)
  grouped = f32[2,2,2,9] convolution(xg, wg), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=3
  xw = f32[1,5,5,4] parameter(10)
  ww = f32[3,3,1,8] parameter(11)
  depthwise = f32[1,3,3,8] convolution(xw, ww), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=4
  xb = f32[4,5,5,3] parameter(12)
  wb = f32[3,3,3,6] parameter(13)
  batched = f32[2,3,3,6] convolution(xb, wb), window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=2
  q = s8[1,4,4,2] parameter(14)
  k = s8[2,2,2,3] parameter(15)
  u = u8[1,4,4,2] parameter(16)
  i8 = s32[1,3,3,3] convolution(q, k), window={size=2x2}, dim_labels=b01f_01io->b01f
  u8 = s32[1,3,3,3] convolution(u, k), window={size=2x2}, dim_labels=b01f_01io->b01f
  same = s8[1,3,3,3] convolution(q, k), window={size=2x2}, dim_labels=b01f_01io->b01f
  a = f32[2,3] parameter(17)
  m = f32[3,4] parameter(18)
  dense = f32[2,4] convolution(a, m), window={}, dim_labels=bf_io->bf
  dense2 = f32[4,2] convolution(a, m), dim_labels=bf_io->fb
  x1 = f32[1,2,9] parameter(19)
  w1 = f32[4,3,2] parameter(20)
  one = f32[1,3,3] convolution(x1, w1), window={size=4 stride=2}, dim_labels=bf0_0oi->bf0
  none = f32[1,3,0] convolution(x1, w1), window={size=4 stride=2 pad=-3_-3}, dim_labels=bf0_0oi->bf0
  x5 = f32[5,6,7,2] parameter(21)
  w5 = f32[9,2,3,2] parameter(22)
  ROOT odd = f32[9,5,5,5] convolution(x5, w5), window={size=3x2}, dim_labels=b10f_oi01->fb01
)"));
}

TEST(HloCheck, ConvolutionErrors)
{
    const std::string p = "  x = f32[2,8,8,6] parameter(0)\n  w = f32[3,3,6,4] parameter(1)\n"
                          "  q = s8[2,8,8,6] parameter(2)\n  k = s8[3,3,6,4] parameter(3)\n"
                          "  u = u8[2,8,8,6] parameter(4)\n  b = pred[2,8,8,6] parameter(5)\n"
                          "  bw = pred[3,3,6,4] parameter(6)\n  v = f32[8,6] parameter(7)\n";
    const std::string conv = " convolution(x, w), window={size=3x3}, dim_labels=b01f_01io->b01f";
    expect_checks(entry(p + "  ROOT ok = f32[2,6,6,4]" + conv + "\n"));
    expect_bad(p + "  bad = f32[2,8,8,4]" + conv + "\n",
               "convolution: result f32[2,8,8,4], expected f32[2,6,6,4]");
    expect_bad(p + "  bad = f32[2,6,6,4] convolution(x), window={size=3x3}, "
                   "dim_labels=b01f_01io->b01f\n",
               "convolution: expects 2 operands, has 1");
    expect_bad(p + "  bad = f32[2,6,6,4] convolution(x, w), window={size=3x3}\n",
               "convolution: missing dim_labels");
    expect_bad(p + "  bad = f32[2,6,6,4] convolution(v, w), window={size=3x3}, "
                   "dim_labels=b01f_01io->b01f\n",
               "convolution: lhs has rank 2 but dim_labels have 4 dims");
    expect_bad(p + "  bad = f32[2,6,6,4] convolution(x, v), window={size=3x3}, "
                   "dim_labels=b01f_01io->b01f\n",
               "convolution: rhs has rank 2 but dim_labels have 4 dims");
    expect_bad(p + "  bad = f32[2,6,6]" + conv + "\n",
               "convolution: result has rank 3 but dim_labels have 4 dims");
    expect_bad(p + "  bad = f32[2,6,6,4] convolution(x, k), window={size=3x3}, "
                   "dim_labels=b01f_01io->b01f\n",
               "convolution: lhs element type f32 differs from rhs s8 (only u8 x s8 -> s32 may "
               "mix)");
    expect_bad(p + "  bad = s8[2,6,6,4] convolution(u, k), window={size=3x3}, "
                   "dim_labels=b01f_01io->b01f\n",
               "convolution: lhs element type u8 differs from rhs s8");
    expect_bad(p + "  bad = s32[2,6,6,4] convolution(k, u), window={size=3x3}, "
                   "dim_labels=b01f_01io->b01f\n",
               "convolution: lhs element type s8 differs from rhs u8");
    expect_bad(p + "  bad = pred[2,6,6,4] convolution(b, bw), window={size=3x3}, "
                   "dim_labels=b01f_01io->b01f\n",
               "convolution: element type pred is not integral or floating point");
    expect_bad(p + "  bad = s32[2,6,6,4]" + conv + "\n",
               "convolution: result element type s32 cannot accumulate f32");
    expect_bad(p + "  bad = f32[2,6,6,4] convolution(q, k), window={size=3x3}, "
                   "dim_labels=b01f_01io->b01f\n",
               "convolution: result element type f32 cannot accumulate s8");
    expect_bad(p + "  bad = f32[2,6,6,4] convolution(x, w), window={size=3x3}, "
                   "dim_labels=b01f_01io->b01f, feature_group_count=2, batch_group_count=2\n",
               "convolution: feature_group_count 2 and batch_group_count 2: at most one may be "
               "above 1");
    expect_bad(p + "  bad = f32[2,6,6,4] convolution(x, w), window={size=3x3}, "
                   "dim_labels=b01f_01io->b01f, feature_group_count=2\n",
               "convolution: lhs feature dim 3 has size 6, must be rhs input features 6 x "
               "feature_group_count 2");
    expect_bad("  x = f32[2,8,8,6] parameter(0)\n  w = f32[3,3,2,4] parameter(1)\n"
               "  bad = f32[2,6,6,4] convolution(x, w), window={size=3x3}, "
               "dim_labels=b01f_01io->b01f, feature_group_count=3\n",
               "convolution: rhs output feature dim 3 has size 4, not a multiple of "
               "feature_group_count 3");
    expect_bad(p + "  bad = f32[1,6,6,4] convolution(x, w), window={size=3x3}, "
                   "dim_labels=b01f_01io->b01f, batch_group_count=3\n",
               "convolution: lhs batch dim 0 has size 2, not a multiple of batch_group_count 3");
    expect_bad("  x = f32[6,8,8,6] parameter(0)\n  w = f32[3,3,6,4] parameter(1)\n"
               "  bad = f32[2,6,6,4] convolution(x, w), window={size=3x3}, "
               "dim_labels=b01f_01io->b01f, batch_group_count=3\n",
               "convolution: rhs output feature dim 3 has size 4, not a multiple of "
               "batch_group_count 3");
    expect_bad(p + "  bad = f32[2,6,6,4] convolution(x, w), dim_labels=b01f_01io->b01f\n",
               "convolution: missing window");
    expect_bad(p + "  bad = f32[2,6,6,4] convolution(x, w), window={size=3}, "
                   "dim_labels=b01f_01io->b01f\n",
               "convolution: window has 1 dims but dim_labels have 2 spatial dims");
    for (const char *f : {"stride", "lhs_dilate", "rhs_dilate"})
        expect_bad(p + "  bad = f32[2,6,6,4] convolution(x, w), window={size=3x3 " + f +
                       "=1x0}, dim_labels=b01f_01io->b01f\n",
                   std::string("convolution: window dim 1 has ") + f + " 0, must be at least 1");
    expect_bad(p + "  bad = f32[2,6,6,4] convolution(x, w), window={size=0x3}, "
                   "dim_labels=b01f_01io->b01f\n",
               "convolution: window dim 0 has size 0, must be at least 1");
    expect_bad(p + "  bad = f32[2,6,6,4] convolution(x, w), window={size=3x2}, "
                   "dim_labels=b01f_01io->b01f\n",
               "convolution: window dim 1 has size 2 but rhs spatial dim 1 (dim 1) has size 3");
    expect_bad(p + "  bad = f32[2,6,6,4] convolution(x, w), window={size=3x3}, "
                   "dim_labels=b01f_01oi->b01f\n",
               "convolution: lhs feature dim 3 has size 6, must be rhs input features 4 x "
               "feature_group_count 1");

    // What the parser never produces, from an AST changed by hand.
    std::string text = entry(p + "  ROOT bad = f32[2,6,6,4]" + conv + "\n");
    Parsed parsed(text);
    ASSERT_NE(parsed.m, nullptr) << parsed.err.msg;
    hlo_computation *c = &parsed.m->comps[parsed.m->entry];
    hlo_instr *in = &c->instrs[c->root];
    hlo_error err{};
    in->dim_labels.kernel_spatial_dims[1] = in->dim_labels.kernel_spatial_dims[0];
    EXPECT_EQ(hlo_check(parsed.m, "t.hlo", &err), -1);
    EXPECT_EQ(std::string(err.msg), at(text, "bad =") + "convolution: dim_labels of the rhs are "
                                                        "not a permutation of its dims");
    in->dim_labels.kernel_spatial_dims[1] = 1;
    in->feature_group_count = 0;
    EXPECT_EQ(hlo_check(parsed.m, "t.hlo", &err), -1);
    EXPECT_EQ(std::string(err.msg), at(text, "bad =") + "convolution: feature_group_count 0 and "
                                                        "batch_group_count 1 must be at least 1");
    in->feature_group_count = 1;
    EXPECT_EQ(hlo_check(parsed.m, "t.hlo", &err), 0) << err.msg;
}

TEST(HloCheck, ReduceWindow)
{
    const std::string comps = R"(HloModule m
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] maximum(x, y)
}
adds {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] add(x, y)
}
pair {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  ROOT t = (f32[], s32[]) tuple(a, bi)
}
ENTRY main {
  x = f32[2,8,8,3] parameter(0)
  i = s32[2,8,8,3] parameter(1)
  k = f32[] constant(-inf)
  z = s32[] constant(0)
  v = f32[5] parameter(2)
  s = f32[] parameter(3)
)";
    expect_checks(
        comps +
        R"(  pool = f32[2,4,4,3] reduce-window(x, k), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=max
  pad = f32[2,4,4,3] reduce-window(x, k), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=max
  global = f32[2,1,1,3] reduce-window(x, k), window={size=1x8x8x1}, to_apply=max
  sum = s32[2,8,8,3] reduce-window(i, z), window={size=1x3x3x1 pad=0_0x1_1x1_1x0_0}, to_apply=adds
  dil = f32[10] reduce-window(v, k), window={size=2 lhs_dilate=2 rhs_dilate=2 pad=1_2}, to_apply=max
  none = f32[0] reduce-window(v, k), window={size=7}, to_apply=max
  scalar = f32[] reduce-window(s, k), window={}, to_apply=max
  scalar2 = f32[] reduce-window(s, k), to_apply=max
  ROOT arg = (f32[2,4,4,3], s32[2,4,4,3]) reduce-window(x, i, k, z), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=pair
}
)");
    auto bad = [&](const std::string &line, const std::string &what) {
        std::string text = comps + line + "}\n";
        std::string msg = check_error(text);
        EXPECT_EQ(msg.rfind(at(text, "bad ="), 0), 0u) << msg;
        EXPECT_NE(msg.find(what), std::string::npos) << msg << "\nwanted: " << what;
    };
    bad("  bad = f32[2,4,4,3] reduce-window(x, k), window={size=1x2x2x1 stride=1x2x2x1}, "
        "to_apply=adds\n",
        "reduce-window: parameter 0 of to_apply 'adds' is s32[], must be f32[]");
    bad("  bad = f32[2,4,4,3] reduce-window(x, k), window={size=2x2 stride=2x2}, to_apply=max\n",
        "reduce-window: window has 2 dims but the operand has rank 4");
    bad("  bad = f32[2,4,4,3] reduce-window(x, k), to_apply=max\n",
        "reduce-window: missing window");
    bad("  bad = f32[2,4,4,3] reduce-window(x, k), window={size=1x2x2x1}\n",
        "reduce-window: missing to_apply");
    bad("  bad = f32[2,4,4,3] reduce-window(x, k, k), window={size=1x2x2x1}, to_apply=max\n",
        "reduce-window: expects inputs and as many init values, has 3 operands");
    bad("  bad = f32[2,4,4,3] reduce-window(x, z), window={size=1x2x2x1 stride=1x2x2x1}, "
        "to_apply=max\n",
        "reduce-window: init value 0 has shape s32[], must be a scalar of input "
        "f32[2,8,8,3]'s type");
    bad("  bad = f32[2,4,4,3] reduce-window(x, k), window={size=1x2x2x1 stride=1x2x0x1}, "
        "to_apply=max\n",
        "reduce-window: window dim 2 has stride 0, must be at least 1");
    bad("  bad = f32[2,4,4,3] reduce-window(x, k), window={size=1x2x2x1}, to_apply=max\n",
        "reduce-window: result f32[2,4,4,3], expected f32[2,7,7,3]");
    bad("  bad = s32[2,4,4,3] reduce-window(x, k), window={size=1x2x2x1 stride=1x2x2x1}, "
        "to_apply=max\n",
        "reduce-window: result s32[2,4,4,3], expected f32[2,4,4,3]");
    bad("  bad = f32[2,4,4,3] reduce-window(x, i, k, z), window={size=1x2x2x1 stride=1x2x2x1}, "
        "to_apply=pair\n",
        "reduce-window: result must be a tuple of 2 arrays");
    bad("  bad = (f32[2,4,4,3], s32[2,4,4,3]) reduce-window(x, v, k, z), "
        "window={size=1x2x2x1 stride=1x2x2x1}, to_apply=pair\n",
        "reduce-window: input 1 has shape f32[5] but input 0 has f32[2,8,8,3]");
    bad("  t = (f32[2,8,8,3]) tuple(x)\n  bad = f32[2,4,4,3] reduce-window(t, k), "
        "window={size=1x2x2x1}, to_apply=max\n",
        "reduce-window: operand 0 must be an array, is (f32[2,8,8,3])");
}

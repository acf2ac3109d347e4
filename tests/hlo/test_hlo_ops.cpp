// test_hlo_ops.cpp - every element-wise op on every element type it takes, evaluated by
// hlo_eval and compared with what XLA computes for it (tests/hlo/ops/fixtures.txt, written by
// tests/jax/op_fixtures.py): bit-exactly, any NaN matching a NaN, except the transcendental
// float functions, which XLA computes with its own approximations, not libm's: those within
// the ulp bounds below.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include "hlo/hlo.h"
#include "tests/support/hlo_test.h"

using namespace hlo_test;

namespace
{

struct Case {
    int line;
    std::string op, attrs, result;
    std::vector<std::string> types;
    std::vector<std::vector<uint64_t>> ins;
    std::vector<uint64_t> out;
};

std::vector<std::string> split(const std::string &s, char sep)
{
    std::vector<std::string> v;
    std::string f;
    std::istringstream in(s);
    while (std::getline(in, f, sep))
        v.push_back(f);
    if (!s.empty() && s.back() == sep)
        v.push_back("");
    return v;
}

std::vector<uint64_t> hex_list(const std::string &s)
{
    std::vector<uint64_t> v;
    for (const std::string &h : split(s, ' '))
        if (!h.empty())
            v.push_back(std::stoull(h, nullptr, 16));
    return v;
}

std::vector<Case> load()
{
    std::ifstream f(kSrc + "tests/hlo/ops/fixtures.txt");
    EXPECT_TRUE(f) << "tests/hlo/ops/fixtures.txt";
    std::vector<Case> cases;
    std::string line;
    for (int n = 1; std::getline(f, line); n++) {
        if (line.empty() || line[0] == '#')
            continue;
        std::vector<std::string> fs = split(line, '\t');
        Case c{n, fs.at(0), fs.at(1), fs.at(2), split(fs.at(3), ','), {}, {}};
        for (size_t i = 0; i < c.types.size(); i++)
            c.ins.push_back(hex_list(fs.at(4 + i)));
        c.out = hex_list(fs.at(4 + c.types.size()));
        cases.push_back(c);
    }
    return cases;
}

hlo_type type_of(const std::string &name)
{
    for (int t = HLO_PRED; t <= HLO_F64; t++)
        if (name == hlo_type_name((hlo_type)t))
            return (hlo_type)t;
    ADD_FAILURE() << "type " << name;
    return HLO_F32;
}

hlo_array *array_of(hlo_type t, const std::vector<uint64_t> &bits, bool scalar)
{
    int64_t n = (int64_t)bits.size();
    hlo_array *a = hlo_array_new(t, scalar ? 0 : 1, &n);
    size_t es = hlo_type_size(t);
    for (size_t i = 0; i < bits.size(); i++)
        memcpy((char *)a->data + i * es, &bits[i], es); // little-endian host
    return a;
}

uint64_t bits_at(const hlo_array *a, int64_t i)
{
    uint64_t v = 0;
    size_t es = hlo_type_size(a->shape.type);
    memcpy(&v, (const char *)a->data + (size_t)i * es, es);
    return v;
}

bool is_nan(hlo_type t, uint64_t b)
{
    switch (t) {
    case HLO_F16: return (b & 0x7c00) == 0x7c00 && (b & 0x3ff);
    case HLO_BF16: return (b & 0x7f80) == 0x7f80 && (b & 0x7f);
    case HLO_F32: return (b & 0x7f800000) == 0x7f800000 && (b & 0x7fffff);
    case HLO_F64: return (b >> 52 & 0x7ff) == 0x7ff && (b & 0xfffffffffffffull);
    default: return false;
    }
}

// Whether a float of t is subnormal where XLA computes it (f16 and bf16 in f32).
bool subnormal(hlo_type t, uint64_t b)
{
    switch (t) {
    case HLO_BF16: return !(b & 0x7f80) && (b & 0x7f);
    case HLO_F32: return !(b & 0x7f800000) && (b & 0x7fffff);
    case HLO_F64: return !(b >> 52 & 0x7ff) && (b & 0xfffffffffffffull);
    default: return false;
    }
}

// Distance in representable values between two non-NaN floats of t (+0 and -0 one apart).
uint64_t ulps(hlo_type t, uint64_t a, uint64_t b)
{
    int bits = (int)hlo_type_size(t) * 8;
    auto key = [bits](uint64_t v) {
        int64_t s = bits == 64 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits);
        return s < 0 ? -(s & (int64_t)(((uint64_t)1 << (bits - 1)) - 1)) - 1 : s;
    };
    const int64_t ka = key(a), kb = key(b);
    return ka > kb ? (uint64_t)ka - (uint64_t)kb : (uint64_t)kb - (uint64_t)ka;
}

// The float functions XLA computes with its own approximations, and their ulp bounds against
// libm (in the result type's ulps; f16 and bf16 results are f32 results rounded), measured
// with jax 0.10.2: 2 ulps, but 3 for expm1 and 45 for f64 log1p, where XLA is the less exact.
const std::set<std::string> kApprox = {"exponential", "exponential-minus-one",
                                       "log",         "log-plus-one",
                                       "logistic",    "tanh",
                                       "erf",         "sine",
                                       "cosine",      "tan",
                                       "cbrt",        "power",
                                       "atan2",       "rsqrt"};
uint64_t ulp_bound(const std::string &op, const std::string &type)
{
    if (op == "log-plus-one" && type == "f64")
        return 45;
    return op == "exponential-minus-one" ? 3 : 2;
}

std::string module_text(const Case &c)
{
    std::string body, ops;
    int64_t n = (int64_t)c.out.size();
    for (size_t i = 0; i < c.types.size(); i++) {
        bool scalar = c.ins[i].size() == 1 && n > 1;
        body += "  p" + std::to_string(i) + " = " + c.types[i] +
                (scalar ? "[]" : "[" + std::to_string(c.ins[i].size()) + "]") + " parameter(" +
                std::to_string(i) + ")\n";
        ops += (i ? ", p" : "p") + std::to_string(i);
    }
    return entry(body + "  ROOT r = " + c.result + "[" + std::to_string(n) + "] " + c.op + "(" +
                 ops + ")" + c.attrs + "\n");
}

// Evaluates text on params (taken over): each output's bit patterns, or the error.
struct Bits {
    std::vector<std::vector<uint64_t>> out;
    std::string err;
};

Bits run_bits(const std::string &text, std::vector<hlo_array *> params = {})
{
    Bits r;
    Parsed p(text);
    if (!p.m) {
        r.err = p.err.msg;
    } else {
        hlo_array **outs = nullptr;
        int n = 0;
        hlo_error err{};
        if (hlo_eval(p.m, "t.hlo", params.data(), (int)params.size(), &outs, &n, &err))
            r.err = err.msg;
        for (int i = 0; i < n; i++) {
            r.out.emplace_back();
            for (int64_t e = 0; e < outs[i]->shape.elements; e++)
                r.out.back().push_back(bits_at(outs[i], e));
        }
        hlo_arrays_free(outs, n);
    }
    for (hlo_array *a : params)
        hlo_array_free(a);
    return r;
}

using U = std::vector<uint64_t>;

} // namespace

TEST(HloOps, MatchXla)
{
    std::vector<Case> cases = load();
    ASSERT_GT(cases.size(), 500u);
    std::map<std::string, uint64_t> worst; // "op type" -> largest ulp difference seen
    int64_t elements = 0, skipped = 0;
    for (const Case &c : cases) {
        std::string text = module_text(c);
        Parsed p(text);
        ASSERT_NE(p.m, nullptr) << p.err.msg << "\n" << text;
        std::vector<hlo_array *> params;
        for (size_t i = 0; i < c.types.size(); i++)
            params.push_back(
                array_of(type_of(c.types[i]), c.ins[i], c.ins[i].size() == 1 && c.out.size() > 1));
        hlo_array **outs = nullptr;
        int n_outs = 0;
        hlo_error err{};
        int rc = hlo_eval(p.m, "t.hlo", params.data(), (int)params.size(), &outs, &n_outs, &err);
        for (hlo_array *a : params)
            hlo_array_free(a);
        ASSERT_EQ(rc, 0) << "fixtures.txt:" << c.line << ": " << err.msg;
        hlo_type rt = type_of(c.result);
        bool approx = kApprox.count(c.op) && rt >= HLO_F16;
        int bad = 0;
        for (size_t i = 0; i < c.out.size(); i++, elements++) {
            uint64_t got = bits_at(outs[0], (int64_t)i), want = c.out[i];
            if (got == want || (is_nan(rt, got) && is_nan(rt, want)))
                continue;
            uint64_t d = is_nan(rt, got) || is_nan(rt, want) ? UINT64_MAX : ulps(rt, got, want);
            if (approx) {
                bool sub = false; // XLA's approximations answer subnormals erratically
                for (size_t k = 0; k < c.ins.size(); k++)
                    sub |= subnormal(type_of(c.types[k]), c.ins[k][c.ins[k].size() > 1 ? i : 0]);
                if (sub) {
                    skipped++;
                    continue;
                }
                uint64_t &w = worst[c.op + " " + c.result];
                w = std::max(w, d);
                if (d <= ulp_bound(c.op, c.result))
                    continue;
            }
            if (bad++ < 4) {
                std::ostringstream in;
                for (size_t k = 0; k < c.ins.size(); k++)
                    in << (k ? ", " : "") << std::hex << c.ins[k][c.ins[k].size() > 1 ? i : 0];
                ADD_FAILURE() << "fixtures.txt:" << c.line << ": " << c.op << c.attrs << " "
                              << c.result << "(" << in.str() << ") = " << std::hex << got
                              << ", XLA " << want;
            }
        }
        hlo_arrays_free(outs, n_outs);
    }
    for (const auto &[what, d] : worst)
        std::printf("%-32s at most %llu ulp from XLA\n", what.c_str(), (unsigned long long)d);
    std::printf("%zu cases, %lld elements, %lld of them not compared (a subnormal operand of an "
                "approximated function)\n",
                cases.size(), (long long)elements, (long long)skipped);
}

// Literals of every type: 64-bit integers exactly, f16 and bf16 rounded to nearest even.
TEST(HloOps, Constants)
{
    Bits r = run_bits(entry(
        "  a = s64[3] constant({-9223372036854775808, 9223372036854775807, -9007199254740993})\n"
        "  b = u64[2] constant({18446744073709551615, 9223372036854775808})\n"
        "  c = bf16[4] constant({1.00390625, 1.01171875, 3.4e38, -inf})\n"
        "  d = f16[4] constant({65504, 65520, 6e-08, nan})\n"
        "  e = f64[] constant(0.1)\n  f = s16[2] constant({-32768, 32767})\n"
        "  g = u32[] constant(4294967295)\n  h = pred[2] constant({true, false})\n"
        "  ROOT t = (s64[3], u64[2], bf16[4], f16[4], f64[], s16[2], u32[], pred[2]) "
        "tuple(a, b, c, d, e, f, g, h)\n"));
    ASSERT_EQ(r.err, "");
    EXPECT_EQ(r.out[0], (U{0x8000000000000000, 0x7fffffffffffffff, 0xffdfffffffffffff}));
    EXPECT_EQ(r.out[1], (U{0xffffffffffffffff, 0x8000000000000000}));
    EXPECT_EQ(r.out[2], (U{0x3f80, 0x3f82, 0x7f80, 0xff80}));
    EXPECT_EQ(r.out[3], (U{0x7bff, 0x7c00, 0x0001, 0x7e00}));
    EXPECT_EQ(r.out[4], (U{0x3fb999999999999a}));
    EXPECT_EQ(r.out[5], (U{0x8000, 0x7fff}));
    EXPECT_EQ(r.out[6], (U{0xffffffff}));
    EXPECT_EQ(r.out[7], (U{1, 0}));
    for (const char *bad :
         {"u64[] constant(-1)", "s64[] constant(9223372036854775808)",
          "u64[] constant(18446744073709551616)", "s16[] constant(32768)", "s32[] constant(1.5)",
          "s8[] constant(inf)", "s64[] constant(-9223372036854775809)"}) {
        std::string text = entry(std::string("  ROOT c = ") + bad + "\n");
        std::string v = std::string(bad).substr(std::string(bad).find('(') + 1);
        v.pop_back();
        std::string type = std::string(bad).substr(0, std::string(bad).find('['));
        Bits e = run_bits(text);
        EXPECT_EQ(e.err.rfind(at(text, "c =") + "constant: value ", 0), 0u) << e.err;
        EXPECT_NE(e.err.find("of 'c' is not a " + type), std::string::npos) << e.err;
    }
}

// The printer writes what the parser reads back to the same values and attributes.
TEST(HloOps, PrintsEveryType)
{
    std::string text = entry(
        "  a = u64[] constant(18446744073709551615)\n  b = s64[] constant(-9007199254740993)\n"
        "  c = bf16[2] constant({1.0078125, -inf})\n  d = f64[] constant(0.1)\n"
        "  x = f32[2] parameter(0)\n  y = f32[2] parameter(1)\n"
        "  ROOT r = pred[2] compare(x, y), direction=LT, type=TOTALORDER\n");
    Parsed p(text);
    ASSERT_NE(p.m, nullptr) << p.err.msg;
    hlo_text t{};
    hlo_print_computation(&t, p.m, p.m->entry, nullptr);
    std::string printed = t.s;
    hlo_text_free(&t);
    for (const char *line :
         {"a = u64[] constant(18446744073709551615)", "b = s64[] constant(-9007199254740993)",
          "c = bf16[2] constant({1.0078125, -inf})", "d = f64[] constant(0.10000000000000001)",
          "r = pred[2] compare(x, y), direction=LT, type=TOTALORDER"})
        EXPECT_NE(printed.find(line), std::string::npos) << line << " not in\n" << printed;
    Parsed again("HloModule m\n" + printed);
    ASSERT_NE(again.m, nullptr) << again.err.msg << "\n" << printed;
    EXPECT_TRUE(hlo_entry(again.m)->instrs[hlo_entry(again.m)->root].total_order);
}

// The type rules of the element-wise ops, as located errors.
TEST(HloOps, TypeRules)
{
    struct {
        const char *body, *msg;
    } cases[] = {
        {"  ROOT r = s32[2] sine(i)\n", "sine: element type s32 is not floating point"},
        {"  ROOT r = s32[2] atan2(i, i)\n", "atan2: element type s32 is not floating point"},
        {"  ROOT r = f32[2] shift-left(f, f)\n", "shift-left: element type f32 is not integral"},
        {"  ROOT r = pred[2] popcnt(p)\n", "popcnt: element type pred is not integral"},
        {"  ROOT r = pred[2] negate(p)\n",
         "negate: element type pred is not integral or floating point"},
        {"  ROOT r = f32[2] clamp(f3, f, f)\n",
         "clamp: bound f32[3] (operand 0) must be a scalar of the operand's element type or the "
         "operand's shape f32[2]"},
        {"  ROOT r = f32[2] clamp(f, f, s)\n",
         "clamp: bound s32[] (operand 2) must be a scalar of the operand's element type or the "
         "operand's shape f32[2]"},
        {"  ROOT r = f32[2] clamp(f, i, f)\n",
         "clamp: operand 1 has shape s32[2] but the result has f32[2]"},
        {"  ROOT r = f32[2] remainder(f)\n", "remainder: expects 2 operands, has 1"},
        {"  ROOT r = pred[2] is-finite(i)\n",
         "is-finite: operand element type s32 is not floating point"},
        {"  ROOT r = f32[2] bitcast-convert(p)\n", "bitcast-convert: pred cannot be bitcast"},
        {"  ROOT r = s16[2] bitcast-convert(f)\n",
         "bitcast-convert: operand f32[2] cannot be bitcast to s16[2] (same dims, or a last dim "
         "of the size ratio added or removed)"},
    };
    const std::string params = "  f = f32[2] parameter(0)\n  i = s32[2] parameter(1)\n"
                               "  p = pred[2] parameter(2)\n  f3 = f32[3] parameter(3)\n"
                               "  s = s32[] parameter(4)\n";
    for (const auto &c : cases) {
        std::string text = entry(params + c.body);
        Parsed p(text);
        ASSERT_NE(p.m, nullptr) << p.err.msg;
        hlo_error err{};
        EXPECT_EQ(hlo_check(p.m, "t.hlo", &err), -1) << c.body;
        EXPECT_EQ(std::string(err.msg), at(text, "r =") + c.msg);
    }
    std::string text = entry("  a = f32[2] parameter(0)\n"
                             "  ROOT r = pred[2] compare(a, a), direction=LT, type=ORDERED\n");
    Parsed p(text);
    EXPECT_EQ(p.m, nullptr);
    EXPECT_EQ(std::string(p.err.msg), at(text, "ORDERED") +
                                          "unknown comparison type 'ORDERED' (expected FLOAT "
                                          "TOTALORDER SIGNED UNSIGNED)");
}

// Dots accumulate in f32 for bf16 (rounded once at the end), in double for f64, exactly modulo
// 2^64 for 64-bit integers; reductions and iota keep 64-bit integers exact.
TEST(HloOps, DotsReductionsIota)
{
    auto arr = [](hlo_type t, std::vector<uint64_t> bits) { return array_of(t, bits, false); };
    const char *dot = "  a = %s[3] parameter(0)\n  b = %s[3] parameter(1)\n"
                      "  ROOT d = %s[] dot(a, b), lhs_contracting_dims={0}, "
                      "rhs_contracting_dims={0}\n";
    auto dot_text = [&](const char *t) {
        char buf[512];
        snprintf(buf, sizeof buf, dot, t, t, t);
        return entry(buf);
    };
    // 1 + 2^-8 + 2^-8: in bf16 each sum would round back to 1; in f32 it is 1 + 2^-7.
    Bits r = run_bits(dot_text("bf16"), {arr(HLO_BF16, {0x3f80, 0x3b80, 0x3b80}),
                                         arr(HLO_BF16, {0x3f80, 0x3f80, 0x3f80})});
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out.at(0), (U{0x3f81}));
    // 1 + 2^-40 - 1 in double.
    r = run_bits(dot_text("f64"),
                 {arr(HLO_F64, {0x3ff0000000000000, 0x3d70000000000000, 0xbff0000000000000}),
                  arr(HLO_F64, {0x3ff0000000000000, 0x3ff0000000000000, 0x3ff0000000000000})});
    EXPECT_EQ(r.out.at(0), (U{0x3d70000000000000}));
    // 2^40 * 2^30 + 3 * 1 + (2^63 + 1) * 2 = 2^70 + 3 + 2^64 + 2: 5 modulo 2^64.
    r = run_bits(dot_text("s64"), {arr(HLO_S64, {1ull << 40, 3, (1ull << 63) + 1}),
                                   arr(HLO_S64, {1ull << 30, 1, 2})});
    EXPECT_EQ(r.out.at(0), (U{5}));
    r = run_bits(dot_text("u64"), {arr(HLO_U64, {~0ull, 3, 0}), arr(HLO_U64, {~0ull, 1, 7})});
    EXPECT_EQ(r.out.at(0), (U{4})); // (2^64 - 1)^2 + 3 = 1 + 3 modulo 2^64

    std::string text = entry("  a = s64[5] parameter(0)\n  z = s64[] constant(0)\n"
                             "  ROOT r = s64[] reduce(a, z), dimensions={0}, to_apply=add\n");
    text = "HloModule m\nadd {\n  x = s64[] parameter(0)\n  y = s64[] parameter(1)\n"
           "  ROOT s = s64[] add(x, y)\n}\n" +
           text.substr(text.find("ENTRY"));
    r = run_bits(text, {arr(HLO_S64, {1ull << 62, 1ull << 62, 1ull << 62, 1ull << 62, 5})});
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out.at(0), (U{5}));

    r = run_bits(entry("  ROOT i = bf16[300] iota(), iota_dimension=0\n"));
    ASSERT_EQ(r.err, "");
    EXPECT_EQ(r.out.at(0)[256], 0x4380u); // 256
    EXPECT_EQ(r.out.at(0)[257], 0x4380u); // 257 rounds to even: 256
    EXPECT_EQ(r.out.at(0)[259], 0x4382u); // 259 rounds to 260
    r = run_bits(entry("  ROOT i = u64[2,3] iota(), iota_dimension=1\n"));
    EXPECT_EQ(r.out.at(0), (U{0, 1, 2, 0, 1, 2}));
}

// bitcast-convert between sizes: the bytes in row-major order, a last dim of the size ratio
// added or removed.
TEST(HloOps, BitcastConvertChangesWidth)
{
    Bits r = run_bits(entry("  a = u32[2] parameter(0)\n  ROOT b = u8[2,4] bitcast-convert(a)\n"),
                      {array_of(HLO_U32, {0x04030201, 0x08070605}, false)});
    ASSERT_EQ(r.err, "");
    EXPECT_EQ(r.out.at(0), (U{1, 2, 3, 4, 5, 6, 7, 8}));
    int64_t dims[2] = {3, 2};
    hlo_array *a = hlo_array_new(HLO_U8, 2, dims);
    for (int i = 0; i < 6; i++)
        ((uint8_t *)a->data)[i] = (uint8_t)(0x10 + i);
    r = run_bits(entry("  a = u8[3,2] parameter(0)\n  ROOT b = bf16[3] bitcast-convert(a)\n"), {a});
    ASSERT_EQ(r.err, "");
    EXPECT_EQ(r.out.at(0), (U{0x1110, 0x1312, 0x1514}));
}

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
    int64_t d = key(a) - key(b);
    return (uint64_t)(d < 0 ? -d : d);
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

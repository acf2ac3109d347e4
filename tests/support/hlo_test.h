// hlo_test.h - helpers shared by the suites that parse and evaluate HLO (tests/hlo,
// tests/compiler and above): the source tree, an owned parsed module, test modules of one ENTRY
// computation, error locations, whole files, arrays and their values, a counting while loop.
#ifndef TPU_TESTS_SUPPORT_HLO_TEST_H
#define TPU_TESTS_SUPPORT_HLO_TEST_H

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "hlo/hlo.h"

namespace hlo_test
{

inline const std::string kSrc = std::string(TPU_SOURCE_DIR) + "/";

// Owns a parsed module: m, or NULL with the parser's message in err.
struct Parsed {
    hlo_error err{}; // before m: members initialize in this order, and hlo_parse fills err
    hlo_module *m = nullptr;
    explicit Parsed(const std::string &text, const char *file = "t.hlo")
        : m(hlo_parse(text.data(), text.size(), file, &err))
    {
    }
    ~Parsed() { hlo_module_free(m); }
    Parsed(const Parsed &) = delete;
    Parsed &operator=(const Parsed &) = delete;
    const hlo_computation &comp(const char *name) const
    {
        int i = hlo_find_computation(m, name);
        EXPECT_GE(i, 0) << name;
        return m->comps[i < 0 ? 0 : i];
    }
    const hlo_instr &instr(const char *comp_name, const char *name) const
    {
        const hlo_computation &c = comp(comp_name);
        int i = hlo_find_instr(&c, name);
        EXPECT_GE(i, 0) << name;
        return c.instrs[i < 0 ? 0 : i];
    }
    // The name of operand k of an instruction.
    std::string operand(const char *comp_name, const char *name, int k) const
    {
        const hlo_computation &c = comp(comp_name);
        const hlo_instr &in = instr(comp_name, name);
        EXPECT_LT(k, in.n_operands);
        return k < in.n_operands ? c.instrs[in.operands[k].index].name : "";
    }
};

// Wraps instruction lines into a module with one ENTRY computation.
inline std::string entry(const std::string &body)
{
    return "HloModule m\nENTRY main {\n" + body + "}\n";
}

// "t.hlo:L:C: " for the first occurrence of needle in text (1-based line and column).
inline std::string at(const std::string &text, const std::string &needle)
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

// The bytes of a file; the test fails if it cannot be opened.
inline std::string slurp(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    EXPECT_TRUE(f.is_open()) << path;
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

inline std::vector<int64_t> dims_of(const hlo_array *a)
{
    return std::vector<int64_t>(a->shape.dims, a->shape.dims + a->shape.rank);
}

// ----------------------------------------------------------- evaluation --

inline hlo_array *make(hlo_type t, std::vector<int64_t> dims, const std::vector<double> &v)
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

// 0, 1, ..., n - 1.
inline std::vector<double> iota(int n)
{
    std::vector<double> v((size_t)n);
    for (int i = 0; i < n; i++)
        v[(size_t)i] = i;
    return v;
}

inline std::vector<double> values(const hlo_array *a)
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

// Evaluates text on params (taken over) with hooks (may be null); outputs as values, or the
// error message.
struct Result {
    std::vector<std::vector<double>> out;
    std::vector<std::vector<int64_t>> dims;
    std::vector<hlo_type> types;
    std::string err;
};

inline Result run(const std::string &text, std::vector<hlo_array *> params,
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
inline std::vector<double> run1(const std::string &text, std::vector<hlo_array *> params)
{
    Result r = run(text, params);
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out.size(), 1u);
    return r.out.empty() ? std::vector<double>{} : r.out[0];
}

// A while loop's computations cond and body over the state (s32[] i, f32[2] x): while i < 3,
// i + 1 and x + x.
inline const std::string kCountLoop = "cond {\n"
                                      "  s = (s32[], f32[2]) parameter(0)\n"
                                      "  i = s32[] get-tuple-element(s), index=0\n"
                                      "  n = s32[] constant(3)\n"
                                      "  ROOT lt = pred[] compare(i, n), direction=LT\n"
                                      "}\n"
                                      "body {\n"
                                      "  s = (s32[], f32[2]) parameter(0)\n"
                                      "  i = s32[] get-tuple-element(s), index=0\n"
                                      "  x = f32[2] get-tuple-element(s), index=1\n"
                                      "  one = s32[] constant(1)\n"
                                      "  j = s32[] add(i, one)\n"
                                      "  y = f32[2] add(x, x)\n"
                                      "  ROOT t = (s32[], f32[2]) tuple(j, y)\n"
                                      "}\n";

// A loop as lax.scan writes one over a closed-over weight: t steps of h = tanh(h . w), h an
// f32[b,k] parameter, w (k x k) a constant of the body (the same values each step, small
// multiples of 1 / (8 k)); the dot is named "d", the while "w".
inline std::string scan_hlo(int t, int k, int b)
{
    const std::string bk = "f32[" + std::to_string(b) + "," + std::to_string(k) + "]",
                      state = "(s32[], " + bk + ")";
    std::string w;
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++)
            w += std::string(j   ? ", "
                             : i ? "}, {"
                                 : "{") +
                 std::to_string(((i * 37 + j * 11) % 97 - 48) / 8.0 / k);
    return "HloModule scan\ncond {\n  s = " + state + " parameter(0)\n" +
           "  i = s32[] get-tuple-element(s), index=0\n  n = s32[] constant(" + std::to_string(t) +
           ")\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\nbody {\n  s = " + state +
           " parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n  h = " + bk +
           " get-tuple-element(s), index=1\n  one = s32[] constant(1)\n  i1 = s32[] add(i, one)\n" +
           "  c = f32[" + std::to_string(k) + "," + std::to_string(k) + "] constant({" + w +
           "}})\n  d = " + bk +
           " dot(h, c), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  th = " + bk +
           " tanh(d)\n  ROOT r = " + state + " tuple(i1, th)\n}\nENTRY e {\n  x = " + bk +
           " parameter(0)\n  z = s32[] constant(0)\n  s = " + state +
           " tuple(z, x)\n  w = " + state +
           " while(s), condition=cond, body=body\n  ROOT y = " + bk +
           " get-tuple-element(w), index=1\n}\n";
}

inline const double kNaN = std::numeric_limits<double>::quiet_NaN();
inline const double kInf = std::numeric_limits<double>::infinity();

// Elementwise equality where NaN equals NaN.
inline void expect_same(const std::vector<double> &got, const std::vector<double> &want)
{
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); i++) {
        if (std::isnan(want[i]))
            EXPECT_TRUE(std::isnan(got[i])) << "at " << i;
        else
            EXPECT_EQ(got[i], want[i]) << "at " << i;
    }
}

// XLA's argmax as the fixture's comparator defines it: the first index of the maximum, where
// NaN is greater than everything (so the first NaN), and -0 equals +0.
inline std::vector<double> argmax_rows(const std::vector<float> &x, int rows, int cols)
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

} // namespace hlo_test

#endif

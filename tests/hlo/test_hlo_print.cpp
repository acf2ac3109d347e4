// test_hlo_print.cpp - the HLO printer (hlo/hlo.h, hlo_print.c): every fixture and model
// printed and parsed back is the same module (field by field), evaluates bit-identically on random
// inputs and prints to the same text again; constants (special floats, random f32 bit patterns,
// integer extremes, nested and empty literals) and every kept attribute round-trip exactly;
// single-line printers for a compiler's use; a printed custom-call module runs through the hook.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "hlo/hlo.h"
#include "tests/support/hlo_test.h"

namespace
{

using hlo_test::entry;
using hlo_test::kSrc;
using hlo_test::Parsed;
using hlo_test::slurp;

// Takes the text out of t.
std::string take(hlo_text *t)
{
    EXPECT_FALSE(t->oom);
    std::string s = t->s ? std::string(t->s, t->len) : "";
    hlo_text_free(t);
    return s;
}

// The module as the compiler writes one: header, then every computation.
std::string print_module(const hlo_module *m)
{
    hlo_text t{};
    hlo_text_printf(&t, "HloModule %s\n", m->name);
    for (int c = 0; c < m->n_comps; c++) {
        hlo_text_printf(&t, "\n");
        hlo_print_computation(&t, m, c, nullptr);
    }
    return take(&t);
}

std::string shape_text(const hlo_shape &s)
{
    hlo_text t{};
    hlo_print_shape(&t, &s);
    return take(&t);
}

// ------------------------------------------------------ module equality --

std::vector<int64_t> ints(const hlo_ints &l)
{
    return l.present ? std::vector<int64_t>(l.v, l.v + l.n) : std::vector<int64_t>{-1};
}

// A literal as the evaluator reads it: f32 values through float, bit-exact, NaN as one value.
std::vector<uint64_t> literal_bits(const hlo_instr &in)
{
    std::vector<uint64_t> bits;
    for (size_t i = 0; i < in.n_literal; i++) {
        double v = in.literal[i];
        if (std::isnan(v)) {
            bits.push_back(1);
        } else if (in.shape.type == HLO_F32) {
            float f = (float)v;
            uint32_t b;
            std::memcpy(&b, &f, 4);
            bits.push_back(b);
        } else {
            uint64_t b;
            std::memcpy(&b, &v, 8);
            bits.push_back(b);
        }
    }
    return bits;
}

std::string comp_name(const hlo_module *m, int c) { return c < 0 ? "-" : m->comps[c].name; }

// Everything hlo_instr keeps apart from style (inline operand shapes, where ROOT is written).
void expect_same_instr(const hlo_module *ma, const hlo_instr &a, const hlo_module *mb,
                       const hlo_instr &b)
{
    SCOPED_TRACE(a.name);
    EXPECT_STREQ(a.name, b.name);
    EXPECT_STREQ(a.opcode_name, b.opcode_name);
    EXPECT_EQ(a.opcode, b.opcode);
    EXPECT_TRUE(hlo_shape_equal(&a.shape, &b.shape))
        << shape_text(a.shape) << " vs " << shape_text(b.shape);
    ASSERT_EQ(a.n_operands, b.n_operands);
    for (int i = 0; i < a.n_operands; i++)
        EXPECT_EQ(a.operands[i].index, b.operands[i].index);
    EXPECT_EQ(a.parameter_number, b.parameter_number);
    EXPECT_EQ(a.literal_elided, b.literal_elided);
    EXPECT_EQ(literal_bits(a), literal_bits(b));
    EXPECT_EQ(ints(a.dimensions), ints(b.dimensions));
    EXPECT_EQ(ints(a.lhs_contracting_dims), ints(b.lhs_contracting_dims));
    EXPECT_EQ(ints(a.rhs_contracting_dims), ints(b.rhs_contracting_dims));
    EXPECT_EQ(ints(a.lhs_batch_dims), ints(b.lhs_batch_dims));
    EXPECT_EQ(ints(a.rhs_batch_dims), ints(b.rhs_batch_dims));
    EXPECT_EQ(comp_name(ma, a.to_apply), comp_name(mb, b.to_apply));
    EXPECT_EQ(comp_name(ma, a.calls), comp_name(mb, b.calls));
    EXPECT_EQ(a.has_index, b.has_index);
    EXPECT_EQ(a.index, b.index);
    EXPECT_EQ(ints(a.slice_start), ints(b.slice_start));
    EXPECT_EQ(ints(a.slice_limit), ints(b.slice_limit));
    EXPECT_EQ(ints(a.slice_stride), ints(b.slice_stride));
    EXPECT_EQ(ints(a.pad_low), ints(b.pad_low));
    EXPECT_EQ(ints(a.pad_high), ints(b.pad_high));
    EXPECT_EQ(ints(a.pad_interior), ints(b.pad_interior));
    EXPECT_EQ(a.comparison_direction, b.comparison_direction);
    EXPECT_EQ(a.iota_dimension, b.iota_dimension);
    EXPECT_STREQ(a.custom_call_target ? a.custom_call_target : "(none)",
                 b.custom_call_target ? b.custom_call_target : "(none)");
    EXPECT_EQ(a.window.present, b.window.present);
    ASSERT_EQ(a.window.rank, b.window.rank);
    for (int i = 0; i < a.window.rank; i++) {
        const hlo_window_dim &x = a.window.dims[i], &y = b.window.dims[i];
        EXPECT_EQ((std::vector<int64_t>{x.size, x.stride, x.pad_lo, x.pad_hi, x.lhs_dilate,
                                        x.rhs_dilate}),
                  (std::vector<int64_t>{y.size, y.stride, y.pad_lo, y.pad_hi, y.lhs_dilate,
                                        y.rhs_dilate}))
            << "window dim " << i;
    }
    const hlo_conv_dims &x = a.dim_labels, &y = b.dim_labels;
    EXPECT_EQ(x.present, y.present);
    ASSERT_EQ(x.n_spatial, y.n_spatial);
    EXPECT_EQ(
        (std::vector<int>{x.input_batch_dim, x.input_feature_dim, x.kernel_input_feature_dim,
                          x.kernel_output_feature_dim, x.output_batch_dim, x.output_feature_dim}),
        (std::vector<int>{y.input_batch_dim, y.input_feature_dim, y.kernel_input_feature_dim,
                          y.kernel_output_feature_dim, y.output_batch_dim, y.output_feature_dim}));
    for (int i = 0; i < x.n_spatial; i++)
        EXPECT_EQ((std::vector<int>{x.input_spatial_dims[i], x.kernel_spatial_dims[i],
                                    x.output_spatial_dims[i]}),
                  (std::vector<int>{y.input_spatial_dims[i], y.kernel_spatial_dims[i],
                                    y.output_spatial_dims[i]}))
            << "spatial dim " << i;
    EXPECT_EQ(a.feature_group_count, b.feature_group_count);
    EXPECT_EQ(a.batch_group_count, b.batch_group_count);
}

void expect_same_module(const hlo_module *a, const hlo_module *b)
{
    EXPECT_STREQ(a->name, b->name);
    EXPECT_EQ(a->entry, b->entry);
    ASSERT_EQ(a->n_comps, b->n_comps);
    for (int c = 0; c < a->n_comps; c++) {
        const hlo_computation &ca = a->comps[c], &cb = b->comps[c];
        EXPECT_STREQ(ca.name, cb.name);
        EXPECT_EQ(ca.is_entry, cb.is_entry);
        EXPECT_EQ(ca.root, cb.root);
        ASSERT_EQ(ca.n_instrs, cb.n_instrs);
        for (int i = 0; i < ca.n_instrs; i++)
            expect_same_instr(a, ca.instrs[i], b, cb.instrs[i]);
    }
}

// ------------------------------------------------------------ evaluation --

size_t bytes(const hlo_array *a)
{
    return (size_t)a->shape.elements * hlo_type_size(a->shape.type);
}

// Random arguments for the ENTRY parameters: f32 around zero, integers over their whole range.
std::vector<hlo_array *> random_params(const hlo_module *m, std::mt19937 &rng)
{
    const hlo_computation *c = hlo_entry(m);
    std::vector<hlo_array *> params;
    for (int i = 0; i < c->n_instrs; i++)
        if (c->instrs[i].opcode == HLO_OP_PARAMETER)
            params.push_back(nullptr);
    std::normal_distribution<float> normal(0, 1);
    for (int i = 0; i < c->n_instrs; i++) {
        const hlo_instr &in = c->instrs[i];
        if (in.opcode != HLO_OP_PARAMETER)
            continue;
        hlo_array *a = hlo_array_new(in.shape.type, in.shape.rank, in.shape.dims);
        EXPECT_NE(a, nullptr) << in.name;
        for (int64_t k = 0; a && k < a->shape.elements; k++) {
            if (a->shape.type == HLO_F32)
                ((float *)a->data)[k] = normal(rng);
            else if (a->shape.type == HLO_PRED)
                ((uint8_t *)a->data)[k] = rng() & 1;
            else
                std::memset((char *)a->data + k * hlo_type_size(a->shape.type), (int)rng(),
                            hlo_type_size(a->shape.type));
        }
        params[in.parameter_number] = a;
    }
    return params;
}

// Results of hlo_eval; the test fails if evaluation fails.
struct Outputs {
    hlo_array **a = nullptr;
    int n = 0;
    Outputs(const hlo_module *m, const std::vector<hlo_array *> &params)
    {
        hlo_error err{};
        EXPECT_EQ(hlo_eval(m, "t.hlo", params.data(), (int)params.size(), &a, &n, &err), 0)
            << err.msg;
    }
    ~Outputs() { hlo_arrays_free(a, n); }
    Outputs(const Outputs &) = delete;
    Outputs &operator=(const Outputs &) = delete;
};

void expect_same_bits(const Outputs &x, const Outputs &y)
{
    ASSERT_EQ(x.n, y.n);
    for (int i = 0; i < x.n; i++) {
        ASSERT_TRUE(hlo_shape_equal(&x.a[i]->shape, &y.a[i]->shape)) << "output " << i;
        EXPECT_EQ(std::memcmp(x.a[i]->data, y.a[i]->data, bytes(x.a[i])), 0) << "output " << i;
    }
}

// Prints text's module, parses that back: the same module, the same text when printed again,
// and (when it evaluates) the same results bit for bit on `runs` random inputs. Returns the
// printed text.
std::string round_trip(const std::string &text, const char *file, int runs)
{
    Parsed a(text, file);
    EXPECT_NE(a.m, nullptr) << a.err.msg;
    if (!a.m)
        return "";
    std::string printed = print_module(a.m);
    Parsed b(printed, "printed.hlo");
    EXPECT_NE(b.m, nullptr) << b.err.msg << "\n" << printed;
    if (!b.m)
        return printed;
    expect_same_module(a.m, b.m);
    EXPECT_EQ(print_module(b.m), printed);
    std::mt19937 rng(1);
    for (int r = 0; r < runs; r++) {
        std::vector<hlo_array *> params = random_params(a.m, rng);
        {
            Outputs x(a.m, params), y(b.m, params);
            expect_same_bits(x, y);
        }
        for (hlo_array *p : params)
            hlo_array_free(p);
    }
    return printed;
}

// =============================================================== tests --

TEST(HloText, Appends)
{
    hlo_text t{};
    std::string want;
    for (int i = 0; i < 2000; i++) {
        hlo_text_printf(&t, "%d:%s,", i, i % 7 ? "x" : "yyyyyyyyyyyyyyyyyyyy");
        want += std::to_string(i) + ":" + (i % 7 ? "x" : "yyyyyyyyyyyyyyyyyyyy") + ",";
    }
    hlo_text_printf(&t, "%s", "");
    EXPECT_EQ(t.len, want.size());
    EXPECT_EQ(std::strlen(t.s), t.len);
    EXPECT_EQ(take(&t), want);
    EXPECT_EQ(t.s, nullptr);
    EXPECT_EQ(t.len, 0u);
}

TEST(HloPrint, Shapes)
{
    Parsed p(entry("  a = f32[16,784]{1,0} parameter(0)\n  b = pred[] parameter(1)\n"
                   "  c = ((f32[1]), u8[2,3], ()) parameter(2)\n  d = token[] parameter(3)\n"
                   "  ROOT e = s8[0] parameter(4)\n"));
    ASSERT_NE(p.m, nullptr) << p.err.msg;
    const hlo_computation *c = hlo_entry(p.m);
    EXPECT_EQ(shape_text(c->instrs[0].shape), "f32[16,784]");
    EXPECT_EQ(shape_text(c->instrs[1].shape), "pred[]");
    EXPECT_EQ(shape_text(c->instrs[2].shape), "((f32[1]), u8[2,3], ())");
    EXPECT_EQ(shape_text(c->instrs[3].shape), "token[]");
    EXPECT_EQ(shape_text(c->instrs[4].shape), "s8[0]");
    char small[8];
    EXPECT_STREQ(hlo_shape_str(&c->instrs[0].shape, small, sizeof small), "f32[16,");
}

TEST(HloPrint, EveryFixtureAndModelRoundTrips)
{
    std::vector<std::string> files;
    for (const char *dir : {"tests/hlo", "models/mnist"})
        for (const auto &e : std::filesystem::directory_iterator(kSrc + dir))
            if (e.path().extension() == ".hlo")
                files.push_back(std::string(dir) + "/" + e.path().filename().string());
    std::sort(files.begin(), files.end());
    EXPECT_GE(files.size(), 7u);
    for (const std::string &f : files) {
        SCOPED_TRACE(f);
        std::string text = slurp(kSrc + f);
        hlo_error err{};
        hlo_module *m = hlo_parse(text.data(), text.size(), f.c_str(), &err);
        if (!m) // only what parses is printed
            continue;
        bool checks = hlo_check(m, f.c_str(), &err) == 0;
        hlo_module_free(m);
        std::string printed = round_trip(text, f.c_str(), checks ? 2 : 0);
        // JAX's short style: no layouts, no '%', no metadata.
        EXPECT_EQ(printed.find('%'), std::string::npos);
        EXPECT_EQ(printed.find("]{"), std::string::npos);
        EXPECT_EQ(printed.find("metadata"), std::string::npos);
    }
}

TEST(HloPrint, ExactText)
{
    // The text, line by line, of a module that uses every attribute the AST keeps (a window's
    // fields only where some dim differs from the default, as XLA prints).
    const std::string text = R"(HloModule attrs

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

fused {
  ROOT p = s32[4,2,3] parameter(0)
}

ENTRY main {
  a = s8[4,2,8] parameter(0)
  b = s8[4,8,3] parameter(1)
  d = s32[4,2,3] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  z = s32[] constant(-2147483648)
  f = s32[4,2,3] fusion(d), calls=fused
  sl = s32[2,2,3] slice(f), slice={[0:4:2], [0:2], [1:3]}
  pd = s32[5,4,3] pad(d, z), padding=0_1_0x1_1_0x-1_1_2
  pn = s32[5,4,3] pad(d, z), padding=0_1x1_1x0_0
  h = f32[] constant(0.5)
  e = f32[4,784] constant({...})
  t = (f32[], s32[]) constant({...})
  r = f32[4] reduce(e, h), dimensions={1}, to_apply=add
  cmp = pred[4] compare(r, r), direction=GT
  tp = (f32[4], pred[4]) tuple(r, cmp)
  g = pred[4] get-tuple-element(tp), index=1
  cc = (f32[4], s8[]) custom-call(r, g), custom_call_target="tpu.segment.0"
  q = f32[] custom-call(), custom_call_target="a\"b\\c\n\t\r\001\377"
  x = f32[1,5,5,2] parameter(2)
  w = f32[3,3,1,4] parameter(3)
  cv = f32[1,3,5,4] convolution(x, w), window={size=3x3 stride=2x1 pad=1_0x-1_2 lhs_dilate=1x2 rhs_dilate=2x1}, dim_labels=b01f_01io->b01f, feature_group_count=2
  c0 = f32[1,4] convolution(x, w), window={}, dim_labels=fb_oi->bf, batch_group_count=2
  c1 = f32[2,3,4,5,6] convolution(x, w), window={size=1x2x3 pad=0_0x0_0x0_1}, dim_labels=f201b_i0o12->0bf21
  rw = f32[4,392] reduce-window(e, h), window={size=1x3 stride=1x2 pad=0_0x1_1}, to_apply=add
  ROOT o = f32[2] some-future-op(r), dimensions={}
}
)";
    Parsed p(text);
    ASSERT_NE(p.m, nullptr) << p.err.msg;
    EXPECT_EQ(print_module(p.m), text);
    EXPECT_STREQ(p.m->comps[2].instrs[16].custom_call_target, "a\"b\\c\n\t\r\001\377");
    round_trip(text, "t.hlo", 0);
}

TEST(HloPrint, LogicalOpsIotaAndTupleReduce)
{
    // The argmax reducer's ops, iota_dimension and a tuple-shaped reduce print as XLA spells
    // them, and read back to the same module that evaluates to the same bits.
    const std::string text = R"(HloModule ops

pair {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  ne = pred[] compare(a, a), direction=NE
  o = pred[] or(gt, ne)
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  n = pred[] and(eq, lt)
  x = pred[] xor(o, n)
  y = pred[] not(x)
  v = f32[] select(y, b, a)
  i = s32[] select(y, bi, ai)
  ROOT t = (f32[], s32[]) tuple(v, i)
}

ENTRY main {
  p = f32[3,5] parameter(0)
  q = s8[3,5] parameter(1)
  io = s32[3,5] iota(), iota_dimension=1
  fi = f32[3,5] iota(), iota_dimension=0
  nq = s8[3,5] not(q)
  aq = s8[3,5] and(q, nq)
  k = f32[] constant(-inf)
  z = s32[] constant(0)
  r = (f32[3], s32[3]) reduce(p, io, k, z), dimensions={1}, to_apply=pair
  ROOT out = ((f32[3], s32[3]), f32[3,5], s8[3,5]) tuple(r, fi, aq)
}
)";
    Parsed p(text);
    ASSERT_NE(p.m, nullptr) << p.err.msg;
    EXPECT_EQ(print_module(p.m), text);
    round_trip(text, "t.hlo", 3);
    // iota_dimension is printed for iota only: hand-built attrs of other ops leave it 0.
    hlo_instr neg = {};
    neg.opcode = HLO_OP_NEGATE;
    neg.parameter_number = -1;
    neg.to_apply = neg.calls = -1;
    hlo_instr iota = neg;
    iota.opcode = HLO_OP_IOTA;
    iota.iota_dimension = 2;
    hlo_shape s = {};
    s.type = HLO_S32;
    s.rank = 3;
    s.dims[0] = s.dims[1] = s.dims[2] = 2;
    s.elements = 8;
    const char *ops[] = {"i"};
    hlo_text t{};
    hlo_print_instr(&t, p.m, &iota, false, "i", &s, nullptr, 0);
    hlo_print_instr(&t, p.m, &neg, true, "n", &s, ops, 1);
    EXPECT_EQ(take(&t), "  i = s32[2,2,2] iota(), iota_dimension=2\n"
                        "  ROOT n = s32[2,2,2] negate(i)\n");
}

TEST(HloPrint, ConvolutionsAndReduceWindowsRoundTrip)
{
    // Fields given at their defaults are left out, the rest printed as XLA does; the module
    // read back evaluates to the same bits.
    const std::string text = R"(HloModule convs

max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] maximum(x, y)
}

pair {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  v = f32[] select(gt, a, b)
  i = s32[] select(gt, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}

ENTRY main {
  x = f32[2,7,6,4] parameter(0)
  w = f32[3,2,2,6] parameter(1)
  w2 = f32[3,2,4,6] parameter(2)
  q = s8[1,4,5,3] parameter(3)
  k = s8[3,2,2,2] parameter(4)
  c1 = f32[2,2,6,6] convolution(x, w), window={size=3x2 stride=2x1 pad=0_-1x1_0 lhs_dilate=1x1 rhs_dilate=1x1}, dim_labels=b01f_01io->b01f, feature_group_count=2, batch_group_count=1
  c2 = f32[1,6,3,5] convolution(x, w2), window={size=3x2 stride=2x2 pad=1_1x0_0 lhs_dilate=1x2 rhs_dilate=2x1}, dim_labels=b01f_01io->bf01, batch_group_count=2
  c3 = s32[1,3,4,2] convolution(q, k), window={size=2x2 pad=0_0x0_0}, dim_labels=b01f_io01->b01f
  n = f32[] constant(-inf)
  z = s32[] constant(0)
  i = s32[2,7,6,4] iota(), iota_dimension=2
  r1 = f32[2,4,6,4] reduce-window(x, n), window={size=1x2x1x1 stride=1x2x1x1 pad=0_0x1_0x0_0x0_0}, to_apply=max
  r2 = (f32[2,3,5,4], s32[2,3,5,4]) reduce-window(x, i, n, z), window={size=1x3x2x1 stride=1x2x1x1}, to_apply=pair
  ROOT o = (f32[2,2,6,6], f32[1,6,3,5], s32[1,3,4,2], f32[2,4,6,4], (f32[2,3,5,4], s32[2,3,5,4])) tuple(c1, c2, c3, r1, r2)
}
)";
    std::string printed = round_trip(text, "t.hlo", 3);
    for (const char *line :
         {"  c1 = f32[2,2,6,6] convolution(x, w), window={size=3x2 stride=2x1 pad=0_-1x1_0}, "
          "dim_labels=b01f_01io->b01f, feature_group_count=2\n",
          "  c2 = f32[1,6,3,5] convolution(x, w2), window={size=3x2 stride=2x2 pad=1_1x0_0 "
          "lhs_dilate=1x2 rhs_dilate=2x1}, dim_labels=b01f_01io->bf01, batch_group_count=2\n",
          "  c3 = s32[1,3,4,2] convolution(q, k), window={size=2x2}, "
          "dim_labels=b01f_io01->b01f\n",
          "  r1 = f32[2,4,6,4] reduce-window(x, n), window={size=1x2x1x1 stride=1x2x1x1 "
          "pad=0_0x1_0x0_0x0_0}, to_apply=max\n"})
        EXPECT_NE(printed.find(line), std::string::npos) << line << "not in\n" << printed;
}

TEST(HloPrint, ConstantsRoundTripExactly)
{
    const std::string text =
        entry("  a = f32[] constant(0.1)\n  b = f32[] constant(-inf)\n  c = f32[] constant(inf)\n"
              "  d = f32[] constant(nan)\n  e = f32[] constant(-0)\n  f = f32[] constant(1e-45)\n"
              "  g = f32[] constant(3.40282347e+38)\n  h = f32[] constant(1e39)\n"
              "  i = f32[] constant(16777217)\n  j = f32[] constant(-1.17549435e-38)\n"
              "  k = f32[2,2] constant({ {1, 2}, {3, 4} })\n"
              "  l = f32[1,2,3] constant({ { {0.5, -1, 2e3}, {1e-05, 0.333333343, -nan} } })\n"
              "  m = s32[3] constant({-2147483648, 2147483647, 0})\n"
              "  n = s8[2] constant({-128, 127})\n  o = u8[2] constant({0, 255})\n"
              "  p = pred[2,1] constant({ {true}, {false} })\n"
              "  q = f32[2,0] constant({ {}, {} })\n  r = f32[0,3] constant({})\n"
              "  s = f64[] constant(0.1)\n  u = s64[] constant(-9007199254740993)\n"
              "  ROOT t = (f32[], f32[], f32[], f32[], f32[], f32[], f32[], f32[], f32[], f32[], "
              "f32[2,2], f32[1,2,3], s32[3], s8[2], u8[2], pred[2,1], f32[2,0], f32[0,3]) "
              "tuple(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r)\n");
    std::string printed = round_trip(text, "t.hlo", 1);
    for (const char *line :
         {"  a = f32[] constant(0.100000001)\n", "  b = f32[] constant(-inf)\n",
          "  c = f32[] constant(inf)\n", "  d = f32[] constant(nan)\n",
          "  e = f32[] constant(-0)\n", "  f = f32[] constant(1.40129846e-45)\n",
          "  g = f32[] constant(3.40282347e+38)\n", "  h = f32[] constant(inf)\n",
          "  i = f32[] constant(16777216)\n", "  k = f32[2,2] constant({ {1, 2}, {3, 4} })\n",
          "  l = f32[1,2,3] constant({ { {0.5, -1, 2000}, {9.99999975e-06, 0.333333343, nan} } "
          "})\n",
          "  m = s32[3] constant({-2147483648, 2147483647, 0})\n",
          "  p = pred[2,1] constant({ {true}, {false} })\n",
          "  q = f32[2,0] constant({ {}, {} })\n", "  r = f32[0,3] constant({})\n",
          "  s = f64[] constant(0.10000000000000001)\n",
          "  u = s64[] constant(-9007199254740993)\n"})
        EXPECT_NE(printed.find(line), std::string::npos) << line << "not in\n" << printed;
}

// Builds a one-constant module with hlo_print_constant and evaluates it.
struct ConstantModule {
    std::string text;
    hlo_array *value = nullptr;
    explicit ConstantModule(const hlo_array *a)
    {
        hlo_text t{};
        hlo_text_printf(&t, "HloModule m\n\nENTRY main {\n");
        hlo_print_constant(&t, true, "c", a);
        hlo_text_printf(&t, "}\n");
        text = take(&t);
        Parsed p(text);
        EXPECT_NE(p.m, nullptr) << p.err.msg;
        if (!p.m)
            return;
        EXPECT_EQ(print_module(p.m), text); // hlo_print_computation agrees with it
        hlo_array **outs = nullptr;
        int n = 0;
        hlo_error err{};
        EXPECT_EQ(hlo_eval(p.m, "t.hlo", nullptr, 0, &outs, &n, &err), 0) << err.msg;
        if (n == 1) {
            value = outs[0];
            outs[0] = nullptr;
        }
        hlo_arrays_free(outs, n);
    }
    ~ConstantModule() { hlo_array_free(value); }
    ConstantModule(const ConstantModule &) = delete;
    ConstantModule &operator=(const ConstantModule &) = delete;
};

TEST(HloPrint, PrintConstantIsExactForEveryBitPattern)
{
    std::mt19937 rng(3);
    int64_t n = 4096;
    hlo_array *f = hlo_array_new(HLO_F32, 1, &n);
    uint32_t *bits = (uint32_t *)f->data;
    const uint32_t special[] = {0,           0x80000000u, 1,           0x807fffffu, 0x00800000u,
                                0x7f7fffffu, 0xff800000u, 0x7f800000u, 0x3dcccccdu, 0x4b800001u};
    for (int64_t i = 0; i < n; i++) {
        do
            bits[i] = i < 10 ? special[i] : (uint32_t)rng();
        while (std::isnan(((float *)f->data)[i]));
    }
    ConstantModule cf(f);
    ASSERT_NE(cf.value, nullptr);
    EXPECT_EQ(std::memcmp(cf.value->data, f->data, bytes(f)), 0);
    hlo_array_free(f);

    // NaN prints as nan and stays NaN; integers and pred exactly over their ranges.
    int64_t dims[2] = {2, 3};
    hlo_array *g = hlo_array_new(HLO_F32, 2, dims);
    for (int i = 0; i < 6; i++)
        ((float *)g->data)[i] = i % 2 ? NAN : -(float)i;
    ConstantModule cg(g);
    EXPECT_NE(cg.text.find("constant({ {-0, nan, -2}, {nan, -4, nan} })"), std::string::npos)
        << cg.text;
    ASSERT_NE(cg.value, nullptr);
    for (int i = 0; i < 6; i++)
        EXPECT_EQ(std::isnan(((float *)cg.value->data)[i]), i % 2 == 1) << i;
    hlo_array_free(g);
    for (hlo_type t : {HLO_S32, HLO_S8, HLO_U8, HLO_PRED}) {
        int64_t m = 512;
        hlo_array *a = hlo_array_new(t, 1, &m);
        for (int64_t i = 0; i < m; i++) {
            uint32_t r = i < 256 ? (uint32_t)i : (uint32_t)rng();
            if (t == HLO_PRED)
                r &= 1;
            std::memcpy((char *)a->data + i * hlo_type_size(t), &r, hlo_type_size(t));
        }
        if (t == HLO_S32)
            ((int32_t *)a->data)[300] = INT32_MIN;
        ConstantModule c(a);
        ASSERT_NE(c.value, nullptr) << hlo_type_name(t);
        EXPECT_EQ(std::memcmp(c.value->data, a->data, bytes(a)), 0) << hlo_type_name(t);
        hlo_array_free(a);
    }
    // A scalar, as ROOT and not.
    hlo_array *s = hlo_array_new(HLO_F32, 0, nullptr);
    *(float *)s->data = -INFINITY;
    hlo_text t{};
    hlo_print_constant(&t, false, "k", s);
    hlo_print_constant(&t, true, "k2", s);
    EXPECT_EQ(take(&t), "  k = f32[] constant(-inf)\n  ROOT k2 = f32[] constant(-inf)\n");
    hlo_array_free(s);
}

TEST(HloPrint, InstrAndRenamedComputationForACompiler)
{
    // A compiler prints instructions under new names and shapes with the attributes of parsed
    // ones, and builds custom-calls from scratch; computations can be printed renamed.
    const std::string sq = "sq {\n  x = f32[2] parameter(0)\n  ROOT m = f32[2] multiply(x, x)\n}\n";
    const std::string main = "ENTRY main {\n  a = f32[2,3] parameter(0)\n"
                             "  b = f32[3,4] parameter(1)\n"
                             "  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, "
                             "rhs_contracting_dims={0}\n"
                             "  ROOT r = f32[2,4] negate(d)\n}\n";
    Parsed p("HloModule m\n" + sq + main);
    ASSERT_NE(p.m, nullptr) << p.err.msg;
    const hlo_computation *e = hlo_entry(p.m);
    hlo_text t{};
    hlo_shape s9 = {};
    s9.type = HLO_F32;
    s9.rank = 1;
    s9.dims[0] = s9.elements = 9;
    const char *ops[] = {"p", "q"};
    hlo_print_instr(&t, p.m, &e->instrs[2], true, "x", &s9, ops, 2);
    hlo_instr cc = {};
    cc.opcode = HLO_OP_CUSTOM_CALL;
    cc.parameter_number = -1;
    cc.to_apply = cc.calls = -1;
    cc.custom_call_target = (char *)"tpu.segment.3";
    hlo_shape tuple = {};
    hlo_shape parts[2] = {s9, {}};
    parts[1].type = HLO_S8;
    parts[1].elements = 1;
    tuple.type = HLO_TUPLE;
    tuple.n_tuple = 2;
    tuple.tuple = parts;
    hlo_print_instr(&t, p.m, &cc, false, "y", &tuple, ops, 1);
    EXPECT_EQ(take(&t), "  ROOT x = f32[9] dot(p, q), lhs_contracting_dims={1}, "
                        "rhs_contracting_dims={0}\n"
                        "  y = (f32[9], s8[]) custom-call(p), "
                        "custom_call_target=\"tpu.segment.3\"\n");
    hlo_print_computation(&t, p.m, 0, "square.1");
    hlo_print_computation(&t, p.m, 1, nullptr);
    EXPECT_EQ(take(&t), "square.1" + sq.substr(2) + main);
}

int twice_hook(void *, const hlo_instr *in, hlo_array *const *ops, int, hlo_array **outs, int,
               hlo_error *err)
{
    if (std::strcmp(in->custom_call_target, "tpu.segment.\"0\""))
        return hlo_errorf(err, "unknown target %s", in->custom_call_target);
    outs[0] = hlo_array_new(HLO_F32, ops[0]->shape.rank, ops[0]->shape.dims);
    for (int64_t i = 0; i < ops[0]->shape.elements; i++)
        ((float *)outs[0]->data)[i] = 2 * ((const float *)ops[0]->data)[i];
    return 0;
}

TEST(HloPrint, HostModuleWithCustomCallRunsAfterPrinting)
{
    // What the compiler emits for the host: ordinary ops around a device segment.
    const std::string text = entry("  x = f32[2,2] parameter(0)\n"
                                   "  s = f32[2,2] custom-call(x), "
                                   "custom_call_target=\"tpu.segment.\\\"0\\\"\"\n"
                                   "  ROOT n = f32[2,2] negate(s)\n");
    std::string printed = round_trip(text, "t.hlo", 0);
    Parsed p(printed);
    ASSERT_NE(p.m, nullptr) << p.err.msg;
    int64_t dims[2] = {2, 2};
    hlo_array *x = hlo_array_new(HLO_F32, 2, dims);
    for (int i = 0; i < 4; i++)
        ((float *)x->data)[i] = (float)i - 1.5f;
    hlo_eval_hooks hooks{};
    hooks.custom_call = twice_hook;
    hlo_array **outs = nullptr;
    int n = 0;
    hlo_error err{};
    ASSERT_EQ(hlo_eval_with(p.m, "t.hlo", &x, 1, &hooks, &outs, &n, &err), 0) << err.msg;
    ASSERT_EQ(n, 1);
    for (int i = 0; i < 4; i++)
        EXPECT_EQ(((float *)outs[0]->data)[i], -2 * ((float)i - 1.5f));
    hlo_arrays_free(outs, n);
    hlo_array_free(x);
}

} // namespace

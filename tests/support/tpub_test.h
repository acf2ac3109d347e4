// tpub_test.h - shared by the package-format tests (test_tpub.cpp, test_tpub_errors.cpp): a
// realistic two-segment package to mutate, an independent encoder written from docs/package.md,
// tpub_parse's error message of an image, and a scratch-directory fixture.
#ifndef TPU_TESTS_SUPPORT_TPUB_TEST_H
#define TPU_TESTS_SUPPORT_TPUB_TEST_H

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "package/tpub.h"

namespace tpub_test
{

namespace fs = std::filesystem;

using Bytes = std::vector<uint8_t>;

inline constexpr uint32_t kTiled = TPUB_GEMM_B_TILED;

inline tpub_op gemm_op(const tpub_gemm &g)
{
    tpub_op o{};
    o.kind = TPUB_OP_GEMM;
    o.gemm = g;
    return o;
}

inline tpub_op conv_op(const tpub_conv &c)
{
    tpub_op o{};
    o.kind = TPUB_OP_CONV2D;
    o.conv = c;
    return o;
}

// A transfer (the element order kept).
inline tpub_xfer xfer(uint64_t off, uint32_t rows, uint32_t cols, uint32_t ld, hlo_type dev,
                      hlo_type host, uint32_t n_scale, float *scale)
{
    tpub_xfer x{};
    x.off = off;
    x.rows = rows;
    x.cols = cols;
    x.ld = ld;
    x.dev_type = dev;
    x.host_type = host;
    x.n_scale = n_scale;
    x.scale = scale;
    return x;
}

// The same, with the host array of dims transposed by perm on the device.
inline tpub_xfer xfer(uint64_t off, uint32_t rows, uint32_t cols, uint32_t ld, hlo_type dev,
                      hlo_type host, uint32_t n_scale, float *scale,
                      const std::vector<uint32_t> &perm, const std::vector<int64_t> &dims)
{
    tpub_xfer x = xfer(off, rows, cols, ld, dev, host, n_scale, scale);
    x.rank = (uint32_t)perm.size();
    for (size_t i = 0; i < perm.size(); i++) {
        x.perm[i] = perm[i];
        x.dims[i] = dims[i];
    }
    return x;
}

// A three-segment CNN-like package at N = 8, owning everything its tpub_package view points
// to. Tests mutate the view (pkg) to break one rule at a time.
//   arena: constants [0, 0x730): W1 0x0 (16x32: 2x4 tiles), P1 0x200 (12*32), W2 0x380 (32x10:
//   4x2 tiles), P2 0x580 (12*10), W3 0x600 (10x4: 2x1 tiles), K4 0x680 (a 2x2 kernel of 3
//   channels in packed runs: 2x1 tiles), P4 0x700 (12*4); activations from 0x800.
// Segment 2 is a convolution of img (NCHW f32[2,3,5,4], written NHWC) with padding on top and
// 2x2 max pooling (stride 1x2), its int8 output dequantized into NCHW pool f32[2,4,4,1].
struct Model {
    std::deque<std::string> strings;
    Bytes image;
    std::vector<tpub_sig> inputs, outputs;
    std::vector<float> in_scale{1.0f / 128}, out_scales, z_scale{0.25f}, img_scale{1.0f / 64},
        p_scale{0.5f};
    std::vector<tpub_xfer> seg0_in, seg0_out, seg1_in, seg1_out, seg2_in, seg2_out;
    std::vector<tpub_op> seg0_ops, seg1_ops, seg2_ops;
    std::vector<tpub_segment> segments;
    tpub_package pkg{};

    char *str(const std::string &s)
    {
        strings.push_back(s);
        return strings.back().data();
    }

    tpub_sig sig(const char *name, hlo_type t, std::vector<int64_t> dims)
    {
        tpub_sig s{};
        s.name = str(name);
        s.type = t;
        s.rank = (int)dims.size();
        for (size_t d = 0; d < dims.size(); d++)
            s.dims[d] = dims[d];
        return s;
    }

    Model()
    {
        image.resize(0x730);
        uint32_t x = 12345;
        for (auto &b : image) {
            x = x * 1103515245u + 12345u;
            b = (uint8_t)(x >> 16);
        }
        for (int c = 0; c < 10; c++)
            out_scales.push_back(0.001f * (float)(c + 1));
        inputs = {sig("x", HLO_F32, {4, 16}), sig("ids", HLO_U8, {4, 10}),
                  sig("img", HLO_F32, {2, 3, 5, 4})};
        outputs = {sig("y", HLO_F32, {4, 10}), sig("h", HLO_S8, {4, 32}),
                   sig("z", HLO_F32, {2, 2, 4}), sig("count", HLO_S32, {}),
                   sig("pool", HLO_F32, {2, 4, 4, 1})};
        seg0_in = {xfer(0x800, 4, 16, 16, HLO_S8, HLO_F32, 1, in_scale.data())};
        seg0_out = {xfer(0xA00, 4, 10, 12, HLO_S32, HLO_F32, 10, out_scales.data()),
                    xfer(0x900, 4, 32, 32, HLO_S8, HLO_S8, 0, nullptr)};
        seg0_ops = {
            gemm_op({4, 16, 32, TPUB_GEMM_BIAS | TPUB_GEMM_RELU | TPUB_GEMM_OUT_INT8 | kTiled,
                     0x800, 0x0, 0x900, 0x200, 16, 32, str("dot.3"),
                     str("add.4,maximum.5,convert.6")}),
            gemm_op({4, 32, 10, TPUB_GEMM_BIAS | kTiled, 0x900, 0x380, 0xA00, 0x580, 32, 12,
                     str("dot.7"), str("add.8")})};
        seg1_in = {xfer(0xC00, 4, 10, 16, HLO_U8, HLO_U8, 0, nullptr)};
        seg1_out = {xfer(0xD00, 4, 4, 4, HLO_S32, HLO_F32, 1, z_scale.data())};
        seg1_ops = {gemm_op({4, 10, 4, TPUB_GEMM_A_UNSIGNED | kTiled, 0xC00, 0x600, 0xD00, 0, 16, 4,
                             str("dot.12"), str("")})};
        seg2_in = {xfer(0xE00, 40, 3, 3, HLO_S8, HLO_F32, 1, img_scale.data(), {0, 2, 3, 1},
                        {2, 3, 5, 4})};
        seg2_out = {
            xfer(0xF00, 8, 4, 4, HLO_S8, HLO_F32, 1, p_scale.data(), {0, 2, 3, 1}, {2, 4, 4, 1})};
        seg2_ops = {conv_op({TPUB_GEMM_BIAS | TPUB_GEMM_RELU | TPUB_GEMM_OUT_INT8 | TPUB_CONV_POOL,
                             2,
                             5,
                             4,
                             3,
                             2,
                             2,
                             4,
                             1,
                             1,
                             1,
                             0,
                             0,
                             0,
                             2,
                             2,
                             1,
                             2,
                             0xE00,
                             0x680,
                             0xF00,
                             0x700,
                             str("conv.20"),
                             str("add.21,maximum.22,rw.23")})};
        segments = {{1, 2, 2, seg0_in.data(), seg0_out.data(), seg0_ops.data()},
                    {1, 1, 1, seg1_in.data(), seg1_out.data(), seg1_ops.data()},
                    {1, 1, 1, seg2_in.data(), seg2_out.data(), seg2_ops.data()}};
        pkg.array_n = 8;
        pkg.arena_bytes = 0x2000;
        pkg.const_bytes = image.size();
        pkg.const_image = image.data();
        pkg.host_hlo = str(
            "HloModule mlp\n\n"
            "ENTRY main {\n"
            "  x = f32[4,16] parameter(0)\n"
            "  ids = u8[4,10] parameter(1)\n"
            "  img = f32[2,3,5,4] parameter(2)\n"
            "  seg0 = (f32[4,10], s8[4,32]) custom-call(x), custom_call_target=\"tpu.segment.0\"\n"
            "  y = f32[4,10] get-tuple-element(seg0), index=0\n"
            "  h = s8[4,32] get-tuple-element(seg0), index=1\n"
            "  seg1 = f32[4,4] custom-call(ids), custom_call_target=\"tpu.segment.1\"\n"
            "  z = f32[2,2,4] reshape(seg1)\n"
            "  count = s32[] constant(7)\n"
            "  pool = f32[2,4,4,1] custom-call(img), custom_call_target=\"tpu.segment.2\"\n"
            "  ROOT out = (f32[4,10], s8[4,32], f32[2,2,4], s32[], f32[2,4,4,1]) "
            "tuple(y, h, z, count, pool)\n"
            "}\n");
        pkg.n_inputs = (uint32_t)inputs.size();
        pkg.inputs = inputs.data();
        pkg.n_outputs = (uint32_t)outputs.size();
        pkg.outputs = outputs.data();
        pkg.n_segments = (uint32_t)segments.size();
        pkg.segments = segments.data();
        pkg.report = str("segment 0: dot.3 dot.7 on the device\n"
                         "segment 1: dot.12 on the device\n"
                         "segment 2: conv.20 on the device\n"
                         "x: per-tensor scale 0.0078125");
    }
    Model(const Model &) = delete;
    Model &operator=(const Model &) = delete;
};

// ---- an independent encoder, written from docs/package.md ----

inline void le(Bytes &b, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        b.push_back((uint8_t)(v >> 8 * i));
}

inline void put_str(Bytes &b, const char *s)
{
    const size_t n = s ? strlen(s) : 0;
    le(b, n, 4);
    b.insert(b.end(), s, s + n);
}

inline uint32_t type_code(hlo_type t)
{
    static const hlo_type codes[] = {HLO_PRED, HLO_S8,  HLO_S16, HLO_S32,  HLO_S64, HLO_U8, HLO_U16,
                                     HLO_U32,  HLO_U64, HLO_F16, HLO_BF16, HLO_F32, HLO_F64};
    for (uint32_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (codes[i] == t)
            return i;
    return UINT32_MAX;
}

struct Section {
    std::string tag;
    Bytes payload;
};

inline Bytes arna(const tpub_package &p)
{
    Bytes b;
    le(b, p.array_n, 4);
    le(b, 0, 4);
    le(b, p.arena_bytes, 8);
    le(b, p.const_bytes, 8);
    b.insert(b.end(), p.const_image, p.const_image + p.const_bytes);
    return b;
}

inline void put_sig(Bytes &b, const tpub_sig &s)
{
    put_str(b, s.name);
    le(b, type_code(s.type), 4);
    le(b, (uint32_t)s.rank, 4);
    for (int d = 0; d < s.rank && d < TPUB_MAX_RANK; d++)
        le(b, (uint64_t)s.dims[d], 8);
}

inline Bytes sigs(const tpub_package &p)
{
    Bytes b;
    le(b, p.n_inputs, 4);
    le(b, p.n_outputs, 4);
    for (uint32_t i = 0; i < p.n_inputs; i++)
        put_sig(b, p.inputs[i]);
    for (uint32_t i = 0; i < p.n_outputs; i++)
        put_sig(b, p.outputs[i]);
    return b;
}

// version: 3's transfers end with their gather (n_gather, then host_elements and the indices).
inline void put_xfer(Bytes &b, const tpub_xfer &x, uint32_t version)
{
    le(b, x.off, 8);
    le(b, x.rows, 4);
    le(b, x.cols, 4);
    le(b, x.ld, 4);
    le(b, type_code(x.dev_type), 4);
    le(b, type_code(x.host_type), 4);
    le(b, x.n_scale, 4);
    for (uint32_t i = 0; i < x.n_scale; i++) {
        uint32_t v;
        memcpy(&v, &x.scale[i], 4);
        le(b, v, 4);
    }
    le(b, x.rank, 4);
    for (uint32_t i = 0; i < x.rank && i < TPUB_MAX_RANK; i++)
        le(b, x.perm[i], 4);
    for (uint32_t i = 0; i < x.rank && i < TPUB_MAX_RANK; i++)
        le(b, (uint64_t)x.dims[i], 8);
    if (version < 3)
        return;
    const uint64_t n = x.gather ? (uint64_t)x.rows * x.cols : 0;
    le(b, n, 4);
    if (!n)
        return;
    le(b, x.host_elements, 8);
    for (uint64_t i = 0; i < n; i++)
        le(b, x.gather[i], 4);
}

inline void put_gemm(Bytes &b, const tpub_gemm &g)
{
    for (uint32_t v : {g.m, g.k, g.n, g.flags})
        le(b, v, 4);
    for (uint64_t v : {g.a_off, g.b_off, g.c_off, g.p_off})
        le(b, v, 8);
    le(b, g.lda, 4);
    le(b, g.ldc, 4);
    put_str(b, g.name);
    put_str(b, g.fused);
}

inline void put_conv(Bytes &b, const tpub_conv &c)
{
    for (uint32_t v : {c.flags, c.batch, c.h, c.w, c.c, c.kh, c.kw, c.cout, c.stride_h, c.stride_w,
                       c.pad_top, c.pad_bottom, c.pad_left, c.pad_right, c.pool_h, c.pool_w,
                       c.pool_stride_h, c.pool_stride_w})
        le(b, v, 4);
    for (uint64_t v : {c.in_off, c.k_off, c.out_off, c.p_off})
        le(b, v, 8);
    put_str(b, c.name);
    put_str(b, c.fused);
}

inline void put_op(Bytes &b, const tpub_op &o)
{
    le(b, (uint32_t)o.kind, 4);
    if (o.kind == TPUB_OP_GEMM)
        put_gemm(b, o.gemm);
    else if (o.kind == TPUB_OP_CONV2D)
        put_conv(b, o.conv);
}

inline Bytes segs(const tpub_package &p, uint32_t version)
{
    Bytes b;
    le(b, p.n_segments, 4);
    for (uint32_t s = 0; s < p.n_segments; s++) {
        const tpub_segment &seg = p.segments[s];
        le(b, seg.n_inputs, 4);
        le(b, seg.n_outputs, 4);
        le(b, seg.n_ops, 4);
        for (uint32_t i = 0; i < seg.n_inputs; i++)
            put_xfer(b, seg.inputs[i], version);
        for (uint32_t i = 0; i < seg.n_outputs; i++)
            put_xfer(b, seg.outputs[i], version);
        for (uint32_t i = 0; i < seg.n_ops; i++)
            put_op(b, seg.ops[i]);
    }
    return b;
}

inline Bytes text(const char *s) { return Bytes(s, s + (s ? strlen(s) : 0)); }

inline uint32_t version_of(const tpub_package &p);

// The sections, the transfers encoded as version (default: p's) has them.
inline std::vector<Section> sections(const tpub_package &p, uint32_t version = 0)
{
    return {{"ARNA", arna(p)},
            {"SIGS", sigs(p)},
            {"SEGS", segs(p, version ? version : version_of(p))},
            {"HOST", text(p.host_hlo)},
            {"REPT", text(p.report)}};
}

inline size_t padding(size_t bytes) { return (8 - bytes % 8) % 8; }

inline Bytes file(const std::vector<Section> &secs, uint32_t count, uint32_t version = 2)
{
    Bytes b = {'T', 'P', 'U', 'B'};
    le(b, version, 4);
    le(b, count, 4);
    le(b, 0, 4);
    for (const Section &s : secs) {
        b.insert(b.end(), s.tag.begin(), s.tag.end());
        le(b, 0, 4);
        le(b, s.payload.size(), 8);
        b.insert(b.end(), s.payload.begin(), s.payload.end());
        b.resize(b.size() + padding(s.payload.size()), 0);
    }
    return b;
}

inline Bytes file(const std::vector<Section> &secs) { return file(secs, (uint32_t)secs.size()); }

// Version 3 when p uses bf16 (a bf16 or f32 transfer on the device, a BF16 or OUT_BF16 flag, a bf16
// or f16 model input or output) or gathers, else 2, as docs/package.md says tpuc writes them.
inline uint32_t version_of(const tpub_package &p)
{
    for (uint32_t i = 0; i < p.n_inputs + p.n_outputs; i++) {
        const hlo_type t = i < p.n_inputs ? p.inputs[i].type : p.outputs[i - p.n_inputs].type;
        if (t == HLO_BF16 || t == HLO_F16)
            return 3;
    }
    for (uint32_t s = 0; s < p.n_segments; s++) {
        const tpub_segment &g = p.segments[s];
        for (uint32_t i = 0; i < g.n_inputs + g.n_outputs; i++) {
            const tpub_xfer &x = i < g.n_inputs ? g.inputs[i] : g.outputs[i - g.n_inputs];
            if (x.dev_type == HLO_BF16 || x.dev_type == HLO_F32 || x.gather)
                return 3;
        }
        for (uint32_t i = 0; i < g.n_ops; i++)
            if ((g.ops[i].kind == TPUB_OP_GEMM ? g.ops[i].gemm.flags : g.ops[i].conv.flags) &
                (TPUB_GEMM_BF16 | TPUB_GEMM_OUT_BF16))
                return 3;
    }
    return 2;
}

inline Bytes encode(const tpub_package &p)
{
    const std::vector<Section> s = sections(p);
    return file(s, (uint32_t)s.size(), version_of(p));
}

// p as a version other than its own would encode it (a transfer's gather fields are version 3's).
inline Bytes encode_as(const tpub_package &p, uint32_t version)
{
    const std::vector<Section> s = sections(p, version);
    return file(s, (uint32_t)s.size(), version);
}

// Where section i's header starts in an image of secs.
inline size_t section_at(const std::vector<Section> &secs, size_t i)
{
    size_t at = 16;
    for (size_t j = 0; j < i; j++)
        at += 16 + secs[j].payload.size() + padding(secs[j].payload.size());
    return at;
}

inline bool is_empty(const tpub_package &p)
{
    tpub_package zero{};
    return !memcmp(&p, &zero, sizeof p);
}

// tpub_parse of an exactly sized heap copy (so ASan sees any over-read); "" when it parses.
inline std::string parse_error(const Bytes &img)
{
    std::vector<uint8_t> copy(img);
    tpub_package out;
    hlo_error err{};
    if (tpub_parse(copy.data(), copy.size(), &out, &err) == 0) {
        tpub_free(&out);
        return "";
    }
    EXPECT_TRUE(is_empty(out)) << err.msg;
    EXPECT_STRNE(err.msg, "");
    return err.msg;
}

inline Bytes slurp(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(f), {});
}

inline std::vector<std::string> listing(const std::string &dir)
{
    std::vector<std::string> names;
    for (const auto &e : fs::directory_iterator(dir))
        names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

// A fresh scratch directory, removed afterwards.
class Tpub : public ::testing::Test
{
  protected:
    std::string dir;
    void SetUp() override
    {
        char tmpl[] = "/tmp/test_tpub.XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir = tmpl;
    }
    void TearDown() override
    {
        chmod(dir.c_str(), 0700);
        fs::remove_all(dir);
    }
};

} // namespace tpub_test

#endif

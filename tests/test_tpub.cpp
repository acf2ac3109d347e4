// test_tpub.cpp - the package format (compiler/tpub.h, docs/package.md): a realistic package
// round-trips through save and load field for field and byte for byte, and its bytes are the
// layout docs/package.md describes (re-encoded here independently); tpub_dump's text; every
// validation rule refused with its message, by tpub_parse on a corrupted image and by tpub_save
// before anything is written; every truncation and every header-field bit flip refused; huge
// counts refused without huge allocations (under ASan one would abort); atomic saves.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "tpu.h"
#include "tpub.h"

namespace fs = std::filesystem;

namespace {

using Bytes = std::vector<uint8_t>;

constexpr uint32_t kTiled = TPU_GEMM_B_TILED;

// A two-segment MLP-like package at N = 8, owning everything its tpub_package view points to.
// Tests mutate the view (pkg) to break one rule at a time.
//   arena: constants [0, 0x680): W1 0x0 (16x32: 2x4 tiles), P1 0x200 (12*32), W2 0x380 (32x10:
//   4x2 tiles), P2 0x580 (12*10), W3 0x600 (10x4: 2x1 tiles); activations from 0x800.
struct Model {
    std::deque<std::string> strings;
    Bytes image;
    std::vector<tpub_sig> inputs, outputs;
    std::vector<float> in_scale{1.0f / 128}, out_scales, z_scale{0.25f};
    std::vector<tpub_xfer> seg0_in, seg0_out, seg1_in, seg1_out;
    std::vector<tpub_gemm> seg0_gemms, seg1_gemms;
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
        image.resize(0x680);
        uint32_t x = 12345;
        for (auto &b : image) {
            x = x * 1103515245u + 12345u;
            b = (uint8_t)(x >> 16);
        }
        for (int c = 0; c < 10; c++)
            out_scales.push_back(0.001f * (float)(c + 1));
        inputs = {sig("x", HLO_F32, {4, 16}), sig("ids", HLO_U8, {4, 10})};
        outputs = {sig("y", HLO_F32, {4, 10}), sig("h", HLO_S8, {4, 32}),
                   sig("z", HLO_F32, {2, 2, 4}), sig("count", HLO_S32, {})};
        seg0_in = {{0x800, 4, 16, 16, HLO_S8, HLO_F32, 1, in_scale.data()}};
        seg0_out = {{0xA00, 4, 10, 12, HLO_S32, HLO_F32, 10, out_scales.data()},
                    {0x900, 4, 32, 32, HLO_S8, HLO_S8, 0, nullptr}};
        seg0_gemms = {
            {4, 16, 32, TPU_GEMM_BIAS | TPU_GEMM_RELU | TPU_GEMM_OUT_INT8 | kTiled, 0x800, 0x0,
             0x900, 0x200, 16, 32, str("dot.3"), str("add.4,maximum.5,convert.6")},
            {4, 32, 10, TPU_GEMM_BIAS | kTiled, 0x900, 0x380, 0xA00, 0x580, 32, 12, str("dot.7"),
             str("add.8")}};
        seg1_in = {{0xC00, 4, 10, 16, HLO_U8, HLO_U8, 0, nullptr}};
        seg1_out = {{0xD00, 4, 4, 4, HLO_S32, HLO_F32, 1, z_scale.data()}};
        seg1_gemms = {{4, 10, 4, TPU_GEMM_A_UNSIGNED | kTiled, 0xC00, 0x600, 0xD00, 0, 16, 4,
                       str("dot.12"), str("")}};
        segments = {{1, 2, 2, seg0_in.data(), seg0_out.data(), seg0_gemms.data()},
                    {1, 1, 1, seg1_in.data(), seg1_out.data(), seg1_gemms.data()}};
        pkg.array_n = 8;
        pkg.arena_bytes = 0x2000;
        pkg.const_bytes = image.size();
        pkg.const_image = image.data();
        pkg.host_hlo = str(
            "HloModule mlp\n\n"
            "ENTRY main {\n"
            "  x = f32[4,16] parameter(0)\n"
            "  ids = u8[4,10] parameter(1)\n"
            "  seg0 = (f32[4,10], s8[4,32]) custom-call(x), custom_call_target=\"tpu.segment.0\"\n"
            "  y = f32[4,10] get-tuple-element(seg0), index=0\n"
            "  h = s8[4,32] get-tuple-element(seg0), index=1\n"
            "  seg1 = f32[4,4] custom-call(ids), custom_call_target=\"tpu.segment.1\"\n"
            "  z = f32[2,2,4] reshape(seg1)\n"
            "  count = s32[] constant(7)\n"
            "  ROOT out = (f32[4,10], s8[4,32], f32[2,2,4], s32[]) tuple(y, h, z, count)\n"
            "}\n");
        pkg.n_inputs = (uint32_t)inputs.size();
        pkg.inputs = inputs.data();
        pkg.n_outputs = (uint32_t)outputs.size();
        pkg.outputs = outputs.data();
        pkg.n_segments = (uint32_t)segments.size();
        pkg.segments = segments.data();
        pkg.report = str("segment 0: dot.3 dot.7 on the device\n"
                         "segment 1: dot.12 on the device\n"
                         "x: per-tensor scale 0.0078125");
    }
    Model(const Model &) = delete;
    Model &operator=(const Model &) = delete;
};

// ---- an independent encoder, written from docs/package.md ----

void le(Bytes &b, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        b.push_back((uint8_t)(v >> 8 * i));
}

void put_str(Bytes &b, const char *s)
{
    const size_t n = s ? strlen(s) : 0;
    le(b, n, 4);
    b.insert(b.end(), s, s + n);
}

uint32_t type_code(hlo_type t)
{
    static const hlo_type codes[] = {HLO_PRED, HLO_S8,  HLO_S16, HLO_S32,  HLO_S64,
                                     HLO_U8,   HLO_U16, HLO_U32, HLO_U64,  HLO_F16,
                                     HLO_BF16, HLO_F32, HLO_F64};
    for (uint32_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (codes[i] == t)
            return i;
    return UINT32_MAX;
}

struct Section {
    std::string tag;
    Bytes payload;
};

Bytes arna(const tpub_package &p)
{
    Bytes b;
    le(b, p.array_n, 4);
    le(b, 0, 4);
    le(b, p.arena_bytes, 8);
    le(b, p.const_bytes, 8);
    b.insert(b.end(), p.const_image, p.const_image + p.const_bytes);
    return b;
}

void put_sig(Bytes &b, const tpub_sig &s)
{
    put_str(b, s.name);
    le(b, type_code(s.type), 4);
    le(b, (uint32_t)s.rank, 4);
    for (int d = 0; d < s.rank && d < TPUB_MAX_RANK; d++)
        le(b, (uint64_t)s.dims[d], 8);
}

Bytes sigs(const tpub_package &p)
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

void put_xfer(Bytes &b, const tpub_xfer &x)
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
}

void put_gemm(Bytes &b, const tpub_gemm &g)
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

Bytes segs(const tpub_package &p)
{
    Bytes b;
    le(b, p.n_segments, 4);
    for (uint32_t s = 0; s < p.n_segments; s++) {
        const tpub_segment &seg = p.segments[s];
        le(b, seg.n_inputs, 4);
        le(b, seg.n_outputs, 4);
        le(b, seg.n_gemms, 4);
        for (uint32_t i = 0; i < seg.n_inputs; i++)
            put_xfer(b, seg.inputs[i]);
        for (uint32_t i = 0; i < seg.n_outputs; i++)
            put_xfer(b, seg.outputs[i]);
        for (uint32_t i = 0; i < seg.n_gemms; i++)
            put_gemm(b, seg.gemms[i]);
    }
    return b;
}

Bytes text(const char *s)
{
    return Bytes(s, s + (s ? strlen(s) : 0));
}

std::vector<Section> sections(const tpub_package &p)
{
    return {{"ARNA", arna(p)}, {"SIGS", sigs(p)}, {"SEGS", segs(p)}, {"HOST", text(p.host_hlo)},
            {"REPT", text(p.report)}};
}

size_t padding(size_t bytes)
{
    return (8 - bytes % 8) % 8;
}

Bytes file(const std::vector<Section> &secs, uint32_t count)
{
    Bytes b = {'T', 'P', 'U', 'B'};
    le(b, 1, 4);
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

Bytes file(const std::vector<Section> &secs)
{
    return file(secs, (uint32_t)secs.size());
}

Bytes encode(const tpub_package &p)
{
    return file(sections(p));
}

// Where section i's header starts in an image of secs.
size_t section_at(const std::vector<Section> &secs, size_t i)
{
    size_t at = 16;
    for (size_t j = 0; j < i; j++)
        at += 16 + secs[j].payload.size() + padding(secs[j].payload.size());
    return at;
}

void patch(Bytes &b, size_t at, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        b[at + i] = (uint8_t)(v >> 8 * i);
}

// Replaces byte `at` of marker's first occurrence from offset `from` on with NUL.
void nul_in(Bytes &b, size_t from, const std::string &marker, size_t at)
{
    auto it = std::search(b.begin() + (ptrdiff_t)from, b.end(), marker.begin(), marker.end());
    ASSERT_NE(it, b.end()) << marker;
    it[(ptrdiff_t)at] = 0;
}

bool is_empty(const tpub_package &p)
{
    tpub_package zero{};
    return !memcmp(&p, &zero, sizeof p);
}

// tpub_parse of an exactly sized heap copy (so ASan sees any over-read); "" when it parses.
std::string parse_error(const Bytes &img)
{
    std::vector<uint8_t> copy(img);
    tpub_package out;
    char err[256] = "";
    if (tpub_parse(copy.data(), copy.size(), &out, err, sizeof err) == 0) {
        tpub_free(&out);
        return "";
    }
    EXPECT_TRUE(is_empty(out)) << err;
    EXPECT_STRNE(err, "");
    return err;
}

Bytes slurp(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(f), {});
}

std::vector<std::string> listing(const std::string &dir)
{
    std::vector<std::string> names;
    for (const auto &e : fs::directory_iterator(dir))
        names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

// A fresh scratch directory, removed afterwards.
class Tpub : public ::testing::Test {
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

void expect_same_str(const char *a, const char *b, const std::string &what)
{
    EXPECT_STREQ(a ? a : "", b ? b : "") << what;
}

void expect_same_sig(const tpub_sig &a, const tpub_sig &b, const std::string &what)
{
    expect_same_str(a.name, b.name, what);
    EXPECT_EQ(a.type, b.type) << what;
    ASSERT_EQ(a.rank, b.rank) << what;
    for (int d = 0; d < a.rank; d++)
        EXPECT_EQ(a.dims[d], b.dims[d]) << what << " dim " << d;
}

void expect_same_xfer(const tpub_xfer &a, const tpub_xfer &b, const std::string &what)
{
    EXPECT_EQ(a.off, b.off) << what;
    EXPECT_EQ(a.rows, b.rows) << what;
    EXPECT_EQ(a.cols, b.cols) << what;
    EXPECT_EQ(a.ld, b.ld) << what;
    EXPECT_EQ(a.dev_type, b.dev_type) << what;
    EXPECT_EQ(a.host_type, b.host_type) << what;
    ASSERT_EQ(a.n_scale, b.n_scale) << what;
    EXPECT_TRUE(!a.n_scale || !memcmp(a.scale, b.scale, a.n_scale * sizeof(float))) << what;
}

void expect_same_gemm(const tpub_gemm &a, const tpub_gemm &b, const std::string &what)
{
    EXPECT_EQ(a.m, b.m) << what;
    EXPECT_EQ(a.k, b.k) << what;
    EXPECT_EQ(a.n, b.n) << what;
    EXPECT_EQ(a.flags, b.flags) << what;
    EXPECT_EQ(a.a_off, b.a_off) << what;
    EXPECT_EQ(a.b_off, b.b_off) << what;
    EXPECT_EQ(a.c_off, b.c_off) << what;
    EXPECT_EQ(a.p_off, b.p_off) << what;
    EXPECT_EQ(a.lda, b.lda) << what;
    EXPECT_EQ(a.ldc, b.ldc) << what;
    expect_same_str(a.name, b.name, what + " name");
    expect_same_str(a.fused, b.fused, what + " fused");
}

void expect_same(const tpub_package &a, const tpub_package &b)
{
    EXPECT_EQ(a.array_n, b.array_n);
    EXPECT_EQ(a.arena_bytes, b.arena_bytes);
    ASSERT_EQ(a.const_bytes, b.const_bytes);
    EXPECT_TRUE(!a.const_bytes || !memcmp(a.const_image, b.const_image, a.const_bytes));
    expect_same_str(a.host_hlo, b.host_hlo, "host_hlo");
    expect_same_str(a.report, b.report, "report");
    ASSERT_EQ(a.n_inputs, b.n_inputs);
    for (uint32_t i = 0; i < a.n_inputs; i++)
        expect_same_sig(a.inputs[i], b.inputs[i], "input " + std::to_string(i));
    ASSERT_EQ(a.n_outputs, b.n_outputs);
    for (uint32_t i = 0; i < a.n_outputs; i++)
        expect_same_sig(a.outputs[i], b.outputs[i], "output " + std::to_string(i));
    ASSERT_EQ(a.n_segments, b.n_segments);
    for (uint32_t s = 0; s < a.n_segments; s++) {
        const tpub_segment &x = a.segments[s], &y = b.segments[s];
        const std::string seg = "segment " + std::to_string(s);
        ASSERT_EQ(x.n_inputs, y.n_inputs) << seg;
        ASSERT_EQ(x.n_outputs, y.n_outputs) << seg;
        ASSERT_EQ(x.n_gemms, y.n_gemms) << seg;
        for (uint32_t i = 0; i < x.n_inputs; i++)
            expect_same_xfer(x.inputs[i], y.inputs[i], seg + " input " + std::to_string(i));
        for (uint32_t i = 0; i < x.n_outputs; i++)
            expect_same_xfer(x.outputs[i], y.outputs[i], seg + " output " + std::to_string(i));
        for (uint32_t i = 0; i < x.n_gemms; i++)
            expect_same_gemm(x.gemms[i], y.gemms[i], seg + " gemm " + std::to_string(i));
    }
}

std::string dump(const tpub_package &p)
{
    char *buf = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    EXPECT_NE(f, nullptr);
    EXPECT_EQ(tpub_dump(&p, f), 0);
    fclose(f);
    std::string s(buf, len);
    free(buf);
    return s;
}

// ------------------------------------------------------------------ round trip --

TEST_F(Tpub, RoundTripsFieldsAndBytes)
{
    Model m;
    const std::string path = dir + "/mlp.tpub", again = dir + "/again.tpub";
    char err[256] = "";
    ASSERT_EQ(tpub_save(&m.pkg, path.c_str(), err, sizeof err), 0) << err;
    EXPECT_EQ(listing(dir), std::vector<std::string>{"mlp.tpub"}) << "no temporary file left";

    tpub_package loaded;
    ASSERT_EQ(tpub_load(path.c_str(), &loaded, err, sizeof err), 0) << err;
    expect_same(m.pkg, loaded);

    ASSERT_EQ(tpub_save(&loaded, again.c_str(), err, sizeof err), 0) << err;
    const Bytes bytes = slurp(path);
    EXPECT_EQ(slurp(again), bytes);
    EXPECT_EQ(bytes, encode(m.pkg)) << "the layout of docs/package.md";
    EXPECT_EQ(bytes.size() % 8, 0u);

    // The package is reusable after tpub_free.
    tpub_free(&loaded);
    EXPECT_TRUE(is_empty(loaded));
    ASSERT_EQ(tpub_parse(bytes.data(), bytes.size(), &loaded, err, sizeof err), 0) << err;
    expect_same(m.pkg, loaded);
    tpub_free(&loaded);

    // Saving over an existing package replaces it.
    m.pkg.array_n = 16; // W1..W3 become 1x2, 2x1 and 1x1 tiles of 256 bytes: still inside
    ASSERT_EQ(tpub_save(&m.pkg, path.c_str(), err, sizeof err), 0) << err;
    ASSERT_EQ(tpub_load(path.c_str(), &loaded, err, sizeof err), 0) << err;
    EXPECT_EQ(loaded.array_n, 16u);
    tpub_free(&loaded);
}

TEST_F(Tpub, MinimalPackage)
{
    // No device work at all: an empty arena, no signatures, no segments, no report.
    tpub_package p{};
    char host[] = "ENTRY e {\n  ROOT c = f32[] constant(1)\n}\n";
    p.array_n = 4;
    p.host_hlo = host;
    const std::string path = dir + "/min.tpub";
    char err[256] = "";
    ASSERT_EQ(tpub_save(&p, path.c_str(), err, sizeof err), 0) << err;
    tpub_package q;
    ASSERT_EQ(tpub_load(path.c_str(), &q, err, sizeof err), 0) << err;
    expect_same(p, q);
    EXPECT_STREQ(q.report, "");
    EXPECT_EQ(q.const_image, nullptr);
    EXPECT_EQ(slurp(path), encode(p));
    const std::string d = dump(q);
    EXPECT_NE(d.find("arena 0x0 bytes: constants [0x0, 0x0), activations [0x0, 0x0)\n"),
              std::string::npos) << d;
    EXPECT_NE(d.find("report (0 bytes):\n"), std::string::npos) << d;
    tpub_free(&q);
}

// ------------------------------------------------------------------ dump --

TEST(TpubDump, ShowsEverything)
{
    Model m;
    const std::string d = dump(m.pkg);
    const char *lines[] = {
        "tpub version 1, array 8x8\n",
        "arena 0x2000 bytes: constants [0x0, 0x680), activations [0x680, 0x2000)\n",
        "inputs (2):\n  0 x: f32[4,16]\n  1 ids: u8[4,10]\n",
        "outputs (4):\n  0 y: f32[4,10]\n  1 h: s8[4,32]\n  2 z: f32[2,2,4]\n  3 count: s32[]\n",
        "segment 0: inputs 1, outputs 2, gemms 2\n",
        "  input 0: 0x800 4 x 16 ld 16, f32 -> s8, scale 0.0078125\n",
        "  output 0: 0xa00 4 x 10 ld 12, s32 -> f32, 10 scales 0.001 .. 0.01\n",
        "  output 1: 0x900 4 x 32 ld 32, s8 -> s8, copy\n",
        "  gemm 0: dot.3, fused add.4,maximum.5,convert.6\n"
        "    m 4 k 16 n 32, flags BIAS|RELU|OUT_INT8|B_TILED\n"
        "    a 0x800 lda 16, b 0x0, c 0x900 ldc 32, params 0x200\n"
        "    tiles 2 x 4, MACs 2048\n",
        "  gemm 1: dot.7, fused add.8\n"
        "    m 4 k 32 n 10, flags BIAS|B_TILED\n"
        "    a 0x900 lda 32, b 0x380, c 0xa00 ldc 12, params 0x580\n"
        "    tiles 4 x 2, MACs 1280\n",
        "segment 1: inputs 1, outputs 1, gemms 1\n"
        "  input 0: 0xc00 4 x 10 ld 16, u8 -> u8, copy\n"
        "  output 0: 0xd00 4 x 4 ld 4, s32 -> f32, scale 0.25\n"
        "  gemm 0: dot.12\n"
        "    m 4 k 10 n 4, flags A_UNSIGNED|B_TILED\n"
        "    a 0xc00 lda 16, b 0x600, c 0xd00 ldc 4\n"
        "    tiles 2 x 1, MACs 160\n",
    };
    for (const char *l : lines)
        EXPECT_NE(d.find(l), std::string::npos) << "missing:\n" << l << "\nin:\n" << d;
    const std::string host = "host program (" + std::to_string(strlen(m.pkg.host_hlo)) +
                             " bytes):\n" + m.pkg.host_hlo;
    EXPECT_NE(d.find(host), std::string::npos) << d;
    // The report has no final newline; the dump adds one.
    const std::string report = "report (" + std::to_string(strlen(m.pkg.report)) + " bytes):\n" +
                               m.pkg.report + "\n";
    ASSERT_GE(d.size(), report.size());
    EXPECT_EQ(d.substr(d.size() - report.size()), report);
}

TEST(TpubDump, ReportsWriteFailure)
{
    Model m;
    FILE *f = fopen("/dev/full", "w");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(tpub_dump(&m.pkg, f), -1);
    fclose(f);
}

// ------------------------------------------------------------------ validation --

struct Rule {
    const char *name;
    std::function<void(Model &)> mutate;
    const char *error;
};

// Each rule of docs/package.md that a tpub_package can break, with the message.
const std::vector<Rule> &rules()
{
    static const std::vector<Rule> r = {
        {"array_n 0", [](Model &m) { m.pkg.array_n = 0; }, "ARNA: array_n: 0 (must be >= 1)"},
        {"arena beyond 32 bits", [](Model &m) { m.pkg.arena_bytes = 1ull << 32; },
         "ARNA: arena_bytes: 0x100000000 does not fit the device's 32-bit addresses"},
        {"constants beyond the arena", [](Model &m) { m.pkg.arena_bytes = 0x600; },
         "ARNA: const_bytes: 0x680 more than arena_bytes 0x600"},

        {"signature type", [](Model &m) { m.inputs[0].type = HLO_PRED; },
         "SIGS: input 0: type: pred not allowed (f32, s8, u8 or s32)"},
        {"signature type f64", [](Model &m) { m.outputs[2].type = HLO_F64; },
         "SIGS: output 2: type: f64 not allowed (f32, s8, u8 or s32)"},
        {"signature type code", [](Model &m) { m.inputs[1].type = HLO_TUPLE; },
         "SIGS: input 1: type: unknown type code 4294967295"},
        {"rank", [](Model &m) { m.outputs[1].rank = TPUB_MAX_RANK + 1; },
         "SIGS: output 1: rank: 9 more than 8"},
        {"negative rank", [](Model &m) { m.outputs[3].rank = -1; },
         "SIGS: output 3: rank: 4294967295 more than 8"},
        {"negative dim", [](Model &m) { m.inputs[1].dims[1] = -1; },
         "SIGS: input 1: dims[1]: -1 (must be >= 0)"},
        {"too many elements",
         [](Model &m) {
             m.inputs[0].dims[0] = 1 << 16;
             m.inputs[0].dims[1] = (1 << 15) + 1;
         },
         "SIGS: input 0: dims: more than 2147483648 elements"},
        {"empty name", [](Model &m) { m.outputs[0].name = m.str(""); },
         "SIGS: output 0: name: empty"},
        {"NULL name", [](Model &m) { m.inputs[1].name = nullptr; }, "SIGS: input 1: name: empty"},

        {"rows 0", [](Model &m) { m.seg0_in[0].rows = 0; }, "SEGS: segment 0 input 0: rows: 0"},
        {"cols 0", [](Model &m) { m.seg1_out[0].cols = 0; },
         "SEGS: segment 1 output 0: cols: 0"},
        {"ld < cols", [](Model &m) { m.seg1_in[0].ld = 9; },
         "SEGS: segment 1 input 0: ld: 9 < cols 10"},
        {"input dev_type", [](Model &m) { m.seg0_in[0].dev_type = HLO_S32; },
         "SEGS: segment 0 input 0: dev_type: s32 not allowed for an input (s8 or u8)"},
        {"output dev_type", [](Model &m) { m.seg1_out[0].dev_type = HLO_U8; },
         "SEGS: segment 1 output 0: dev_type: u8 not allowed for an output (s32 or s8)"},
        {"dev_type code", [](Model &m) { m.seg0_in[0].dev_type = HLO_TOKEN; },
         "SEGS: segment 0 input 0: dev_type: unknown type code 4294967295"},
        {"host_type", [](Model &m) { m.seg0_in[0].host_type = HLO_S32; },
         "SEGS: segment 0 input 0: host_type: s32 not allowed with dev_type s8 (s8 or f32)"},
        {"output host_type", [](Model &m) { m.seg0_out[1].host_type = HLO_U8; },
         "SEGS: segment 0 output 1: host_type: u8 not allowed with dev_type s8 (s8 or f32)"},
        {"quantized input without scale", [](Model &m) { m.seg0_in[0].n_scale = 0; },
         "SEGS: segment 0 input 0: n_scale: 0 (a quantized input has 1)"},
        {"per-column input scales",
         [](Model &m) {
             m.seg0_in[0].n_scale = 10;
             m.seg0_in[0].cols = m.seg0_in[0].ld = 10;
             m.seg0_in[0].scale = m.out_scales.data();
         },
         "SEGS: segment 0 input 0: n_scale: 10 (a quantized input has 1)"},
        {"copy with a scale",
         [](Model &m) {
             m.seg1_in[0].n_scale = 1;
             m.seg1_in[0].scale = m.z_scale.data();
         },
         "SEGS: segment 1 input 0: n_scale: 1 (a copy has none)"},
        {"output scales neither 1 nor cols", [](Model &m) { m.seg0_out[0].n_scale = 2; },
         "SEGS: segment 0 output 0: n_scale: 2 (a dequantized output has 1 or cols)"},
        {"dequantized output without scale", [](Model &m) { m.seg1_out[0].n_scale = 0; },
         "SEGS: segment 1 output 0: n_scale: 0 (a dequantized output has 1 or cols)"},
        {"input scale 0", [](Model &m) { m.in_scale[0] = 0; },
         "SEGS: segment 0 input 0: scale[0]: 0 (must be finite and > 0)"},
        {"input scale negative", [](Model &m) { m.in_scale[0] = -0.5f; },
         "SEGS: segment 0 input 0: scale[0]: -0.5 (must be finite and > 0)"},
        {"input scale NaN", [](Model &m) { m.in_scale[0] = NAN; },
         "SEGS: segment 0 input 0: scale[0]: nan (must be finite and > 0)"},
        {"output scale infinite", [](Model &m) { m.out_scales[3] = -INFINITY; },
         "SEGS: segment 0 output 0: scale[3]: -inf (must be finite)"},
        {"xfer outside the arena", [](Model &m) { m.seg0_out[0].off = 0x1f50; },
         "SEGS: segment 0 output 0: extent 0x1f50+0xb8 outside the arena (0x2000 bytes)"},
        {"xfer offset past the arena", [](Model &m) { m.seg1_in[0].off = 1ull << 63; },
         "SEGS: segment 1 input 0: extent 0x8000000000000000+0x3a outside the arena (0x2000 "
         "bytes)"},
        {"xfer extent overflows",
         [](Model &m) {
             m.seg1_out[0].rows = m.seg1_out[0].ld = UINT32_MAX;
         },
         "SEGS: segment 1 output 0: extent 0xd00+0xffffffffffffffff outside the arena (0x2000 "
         "bytes)"},
        {"input into the constants", [](Model &m) { m.seg0_in[0].off = 0x67f; },
         "SEGS: segment 0 input 0: extent 0x67f+0x40 overlaps the constant image (0x680 "
         "bytes)"},

        {"m 0", [](Model &m) { m.seg0_gemms[0].m = 0; }, "SEGS: segment 0 gemm 0: m: 0"},
        {"k 0", [](Model &m) { m.seg0_gemms[1].k = 0; }, "SEGS: segment 0 gemm 1: k: 0"},
        {"n 0", [](Model &m) { m.seg1_gemms[0].n = 0; }, "SEGS: segment 1 gemm 0: n: 0"},
        {"undefined flag", [](Model &m) { m.seg0_gemms[1].flags |= 1u << 5 | 1u << 31; },
         "SEGS: segment 0 gemm 1: flags: undefined bits 0x80000020"},
        {"B not tiled", [](Model &m) { m.seg1_gemms[0].flags &= ~kTiled; },
         "SEGS: segment 1 gemm 0: flags: B_TILED not set (B is always in tile order)"},
        {"lda < k", [](Model &m) { m.seg0_gemms[0].lda = 15; },
         "SEGS: segment 0 gemm 0: lda: 15 < k 16"},
        {"ldc < n", [](Model &m) { m.seg0_gemms[1].ldc = 9; },
         "SEGS: segment 0 gemm 1: ldc: 9 < n 10"},
        {"ldc bytes beyond 32 bits", [](Model &m) { m.seg0_gemms[1].ldc = 1u << 30; },
         "SEGS: segment 0 gemm 1: ldc: 1073741824 x 4 bytes does not fit 32 bits"},
        {"a outside", [](Model &m) { m.seg0_gemms[0].a_off = 0x1fc1; },
         "SEGS: segment 0 gemm 0: a extent 0x1fc1+0x40 outside the arena (0x2000 bytes)"},
        {"a extent overflows",
         [](Model &m) {
             m.seg0_gemms[0].m = m.seg0_gemms[0].lda = UINT32_MAX;
         },
         "SEGS: segment 0 gemm 0: a extent 0x800+0xfffffffd00000012 outside the arena (0x2000 "
         "bytes)"},
        {"b outside", [](Model &m) { m.seg0_gemms[0].b_off = 0x1e01; },
         "SEGS: segment 0 gemm 0: b extent 0x1e01+0x200 outside the arena (0x2000 bytes)"},
        {"b tiles for a larger array", [](Model &m) { m.pkg.array_n = 128; },
         "SEGS: segment 0 gemm 0: b extent 0x0+0x4000 outside the arena (0x2000 bytes)"},
        {"b tiles overflow",
         [](Model &m) {
             m.pkg.array_n = UINT32_MAX;
         },
         "SEGS: segment 0 gemm 0: b extent 0x0+0xfffffffe00000001 outside the arena (0x2000 "
         "bytes)"},
        // The brief's example: C of gemm 1 runs past the arena.
        {"c outside", [](Model &m) { m.seg0_gemms[1].c_off = 0x1f50; },
         "SEGS: segment 0 gemm 1: c extent 0x1f50+0xb8 outside the arena (0x2000 bytes)"},
        {"int8 c outside",
         [](Model &m) {
             m.seg0_gemms[0].c_off = 0x1f81;
             m.seg0_out[1].off = 0x1f80;
         },
         "SEGS: segment 0 gemm 0: c extent 0x1f81+0x80 outside the arena (0x2000 bytes)"},
        {"c into the constants", [](Model &m) { m.seg1_gemms[0].c_off = 0x640; },
         "SEGS: segment 1 gemm 0: c extent 0x640+0x40 overlaps the constant image (0x680 "
         "bytes)"},
        {"params outside", [](Model &m) { m.seg0_gemms[1].p_off = 0x1f89; },
         "SEGS: segment 0 gemm 1: params extent 0x1f89+0x78 outside the arena (0x2000 bytes)"},
        {"params offset without params", [](Model &m) { m.seg1_gemms[0].p_off = 0x10; },
         "SEGS: segment 1 gemm 0: p_off: 0x10 without BIAS or OUT_INT8 (must be 0)"},
        {"c overlaps a", [](Model &m) { m.seg0_gemms[1].c_off = 0x97c; },
         "SEGS: segment 0 gemm 1: c extent 0x97c+0xb8 overlaps a 0x900+0x80"},
        {"c overlaps b", [](Model &m) { m.seg0_gemms[1].b_off = 0xab7; },
         "SEGS: segment 0 gemm 1: c extent 0xa00+0xb8 overlaps b 0xab7+0x200"},
        {"c overlaps params", [](Model &m) { m.seg0_gemms[1].p_off = 0x990; },
         "SEGS: segment 0 gemm 1: c extent 0xa00+0xb8 overlaps params 0x990+0x78"},

        {"empty host program", [](Model &m) { m.pkg.host_hlo = m.str(""); },
         "HOST: text: empty"},
        {"NULL host program", [](Model &m) { m.pkg.host_hlo = nullptr; }, "HOST: text: empty"},
    };
    return r;
}

TEST_F(Tpub, EveryRuleRefusedByParseAndSave)
{
    for (const Rule &rule : rules()) {
        SCOPED_TRACE(rule.name);
        Model m;
        rule.mutate(m);
        EXPECT_EQ(parse_error(encode(m.pkg)), rule.error);
        const std::string path = dir + "/bad.tpub";
        char err[256] = "";
        EXPECT_EQ(tpub_save(&m.pkg, path.c_str(), err, sizeof err), -1);
        EXPECT_STREQ(err, rule.error);
        EXPECT_TRUE(listing(dir).empty());
    }
}

// What the rules allow at their limits.
TEST(TpubRules, EdgesAccepted)
{
    const std::vector<std::function<void(Model &)>> ok = {
        [](Model &m) { m.seg0_gemms[0].b_off = 0x1e00; }, // B ends at the arena's end
        [](Model &m) { m.seg0_out[0].off = 0x1f48; },     // so does an output
        [](Model &m) { m.seg0_in[0].off = 0x680; },       // an input right after the constants
        [](Model &m) { m.seg0_out[1].off = 0x100; },      // outputs may read the constants
        [](Model &m) { m.seg0_gemms[1].c_off = 0x980; },  // C right after A
        [](Model &m) { m.seg0_gemms[1].p_off = 0xab8; },  // params right after C
        [](Model &m) { m.seg1_out[0].n_scale = 4; m.seg1_out[0].scale = m.out_scales.data(); },
        [](Model &m) { m.out_scales[2] = 0; m.out_scales[3] = -1; }, // finite output scales
        [](Model &m) { m.seg0_gemms[1].ldc = UINT32_MAX / 4; m.seg0_gemms[1].m = 1; },
        [](Model &m) { m.inputs[0].dims[0] = 1 << 16; m.inputs[0].dims[1] = 1 << 15; },
        [](Model &m) { m.inputs[0].dims[0] = INT64_MAX; m.inputs[0].dims[1] = 0; },
        [](Model &m) { m.outputs[2].rank = TPUB_MAX_RANK; },
        [](Model &m) { m.pkg.arena_bytes = UINT32_MAX; },
        [](Model &m) { m.pkg.const_bytes = 0; m.pkg.report = nullptr; },
        [](Model &m) { m.pkg.array_n = 1; },
    };
    for (size_t i = 0; i < ok.size(); i++) {
        Model m;
        ok[i](m);
        EXPECT_EQ(parse_error(encode(m.pkg)), "") << "case " << i;
    }
}

// Corruptions a tpub_package cannot express, made on the encoded image.
TEST(TpubImage, MalformedFilesRefused)
{
    Model m;
    const std::vector<Section> secs = sections(m.pkg);
    const Bytes good = file(secs);
    ASSERT_EQ(parse_error(good), "");
    const size_t sigs_at = section_at(secs, 1), segs_at = section_at(secs, 2);

    struct Case {
        const char *name;
        Bytes image;
        std::string error;
    };
    std::vector<Case> cases;
    auto with = [&](const char *name, std::function<void(Bytes &)> f, std::string error) {
        Bytes b = good;
        f(b);
        cases.push_back({name, b, error});
    };
    auto with_sections = [&](const char *name, std::function<void(std::vector<Section> &)> f,
                             std::string error) {
        std::vector<Section> s = secs;
        f(s);
        cases.push_back({name, file(s, 5), error});
    };

    with("magic", [](Bytes &b) { b[3] = 'C'; }, "header: magic: not \"TPUB\"");
    with("version", [](Bytes &b) { patch(b, 4, 2, 4); },
         "header: version: 2 (this reader reads 1)");
    with("version 0", [](Bytes &b) { patch(b, 4, 0, 4); },
         "header: version: 0 (this reader reads 1)");
    with("fewer sections", [](Bytes &b) { patch(b, 8, 4, 4); },
         "header: sections: 4 (version 1 has 5)");
    with("more sections", [](Bytes &b) { patch(b, 8, 6, 4); },
         "header: sections: 6 (version 1 has 5)");
    with("header reserved", [](Bytes &b) { patch(b, 12, 1, 4); },
         "header: reserved: 0x1 (must be 0)");
    cases.push_back({"empty", {}, "header: truncated (0 bytes, need 16)"});
    cases.push_back({"short header", Bytes(good.begin(), good.begin() + 15),
                     "header: truncated (15 bytes, need 16)"});

    with("unknown tag", [&](Bytes &b) { memcpy(&b[segs_at], "ABCD", 4); },
         "section 2: tag: unknown 0x44434241 ('SEGS' expected)");
    with_sections("out of order", [](std::vector<Section> &s) { std::swap(s[0], s[1]); },
                  "section 0: tag: 'SIGS' out of order ('ARNA' expected)");
    with_sections("repeated", [](std::vector<Section> &s) { s[1] = s[0]; },
                  "section 1: tag: 'ARNA' out of order ('SIGS' expected)");
    with_sections("missing", [](std::vector<Section> &s) { s.pop_back(); },
                  "section 4: header: truncated (0 bytes left, need 16)");
    with("section reserved", [&](Bytes &b) { patch(b, sigs_at + 4, 7, 4); },
         "SIGS: reserved: 0x7 (must be 0)");
    with("section past the end", [&](Bytes &b) { patch(b, segs_at + 8, 1ull << 40, 8); },
         "SEGS: bytes: 0x10000000000 past the end of the file (0x" + [&] {
             char h[32];
             snprintf(h, sizeof h, "%zx", good.size() - segs_at - 16);
             return std::string(h);
         }() + " bytes left)");
    with_sections("trailing bytes", [](std::vector<Section> &s) { le(s[1].payload, 0, 4); },
                  "SIGS: 4 bytes after the last field");
    with_sections("trailing text", [](std::vector<Section> &s) { s[0].payload.push_back(0); },
                  "ARNA: 1 bytes after the last field");
    with_sections("image short", [](std::vector<Section> &s) { s[0].payload.pop_back(); },
                  "ARNA: const_image: truncated (1663 bytes left, need 1664)");
    with("after the last section", [](Bytes &b) { b.resize(b.size() + 8); },
         "file: 8 bytes after the last section");

    // Padding: SIGS and REPT must have some for these two.
    const size_t sigs_pad = padding(secs[1].payload.size());
    const size_t rept_pad = padding(secs[4].payload.size());
    ASSERT_NE(sigs_pad, 0u);
    ASSERT_NE(rept_pad, 0u);
    with("padding", [&](Bytes &b) { b[segs_at - 1] = 1; },
         "SIGS: padding: byte " + std::to_string(sigs_pad - 1) + " not zero");
    with("padding cut", [](Bytes &b) { b.pop_back(); },
         "REPT: padding: truncated (" + std::to_string(rept_pad - 1) + " bytes left, need " +
             std::to_string(rept_pad) + ")");

    with_sections("arena reserved", [](std::vector<Section> &s) { patch(s[0].payload, 4, 1, 4); },
                  "ARNA: reserved: 0x1 (must be 0)");
    with_sections("type code past the table",
                  [&](std::vector<Section> &s) {
                      // input 0 of SIGS: counts (8), name "x" (4 + 1), then the type
                      patch(s[1].payload, 13, 13, 4);
                  },
                  "SIGS: input 0: type: unknown type code 13");
    with_sections("name past the section",
                  [](std::vector<Section> &s) { patch(s[1].payload, 8, 0xffffffff, 4); },
                  "SIGS: input 0: name: truncated (" +
                      std::to_string(secs[1].payload.size() - 12) + " bytes left, need " +
                      "4294967295)");
    // NUL bytes in strings: the first occurrence of each marker from its section on.
    const size_t host_at = section_at(secs, 3), rept_at = section_at(secs, 4);
    const size_t per_tensor = (size_t)(strstr(m.pkg.report, "per-tensor") - m.pkg.report);
    for (auto [what, from, marker, at, error] :
         std::vector<std::tuple<const char *, size_t, std::string, size_t, std::string>>{
             {"NUL in a signature name", sigs_at, "count", 2,
              "SIGS: output 3: name: NUL byte at offset 2"},
             {"NUL in a gemm name", segs_at, "dot.7", 3,
              "SEGS: segment 0 gemm 1: name: NUL byte at offset 3"},
             {"NUL in fused", segs_at, "maximum.5", 0,
              "SEGS: segment 0 gemm 0: fused: NUL byte at offset 6"},
             {"NUL in the host program", host_at, "HloModule", 0,
              "HOST: text: NUL byte at offset 0"},
             {"NUL in the report", rept_at, "per-tensor", 3,
              "REPT: text: NUL byte at offset " + std::to_string(per_tensor + 3)},
         }) {
        Bytes b = good;
        nul_in(b, from, marker, at);
        cases.push_back({what, b, error});
    }

    // Huge counts: refused against the bytes left before anything is allocated (under ASan an
    // allocation of that size would abort the test).
    auto segs_payload = [&](std::function<void(Bytes &)> f, const char *name, std::string error) {
        std::vector<Section> s = secs;
        s[2].payload.clear();
        f(s[2].payload);
        cases.push_back({name, file(s), error});
    };
    with_sections("huge input count",
                  [](std::vector<Section> &s) { patch(s[1].payload, 0, 0xffffffff, 4); },
                  "SIGS: inputs: 4294967295 claimed, at most " +
                      std::to_string((secs[1].payload.size() - 4) / 13) + " fit in the " +
                      std::to_string(secs[1].payload.size() - 4) + " bytes left");
    with_sections("huge output count",
                  [](std::vector<Section> &s) { patch(s[1].payload, 4, 0x80000000, 4); },
                  "SIGS: outputs: 2147483648 claimed, at most " +
                      std::to_string((secs[1].payload.size() - 8) / 13) + " fit in the " +
                      std::to_string(secs[1].payload.size() - 8) + " bytes left");
    segs_payload([](Bytes &b) { le(b, 0xffffffff, 4); }, "huge segment count",
                 "SEGS: segments: 4294967295 claimed, at most 0 fit in the 0 bytes left");
    segs_payload(
        [](Bytes &b) {
            le(b, 1, 4);
            le(b, 0x10000000, 4);
            le(b, 0, 4);
            le(b, 0, 4);
        },
        "huge segment input count",
        "SEGS: segment 0: inputs: 268435456 claimed, at most 0 fit in the 8 bytes left");
    segs_payload(
        [](Bytes &b) {
            le(b, 1, 4);
            le(b, 0, 4);
            le(b, 0x7fffffff, 4);
            le(b, 0, 4);
            b.resize(b.size() + 100);
        },
        "huge segment output count",
        "SEGS: segment 0: outputs: 2147483647 claimed, at most 3 fit in the 104 bytes left");
    segs_payload(
        [](Bytes &b) {
            le(b, 1, 4);
            le(b, 0, 4);
            le(b, 0, 4);
            le(b, 0xfffffff0, 4);
        },
        "huge gemm count",
        "SEGS: segment 0: gemms: 4294967280 claimed, at most 0 fit in the 0 bytes left");
    segs_payload(
        [&](Bytes &b) {
            le(b, 1, 4);
            le(b, 1, 4);
            le(b, 0, 4);
            le(b, 0, 4);
            tpub_xfer x = m.seg0_in[0];
            x.n_scale = 0;
            put_xfer(b, x);
            patch(b, b.size() - 4, 0x40000000, 4);
        },
        "huge scale count",
        "SEGS: segment 0 input 0: n_scale: 1073741824 claimed, at most 0 fit in the 0 bytes "
        "left");

    for (const Case &c : cases)
        EXPECT_EQ(parse_error(c.image), c.error) << c.name;
}

TEST(TpubImage, EveryTruncationRefused)
{
    Model m;
    const Bytes good = encode(m.pkg);
    for (size_t len = 0; len < good.size(); len++)
        EXPECT_NE(parse_error(Bytes(good.begin(), good.begin() + (ptrdiff_t)len)), "")
            << "length " << len;
}

// Every bit of the file header and of each section header, flipped alone.
TEST(TpubImage, EveryHeaderBitFlipRefused)
{
    Model m;
    const std::vector<Section> secs = sections(m.pkg);
    const Bytes good = file(secs);
    std::vector<size_t> headers = {0};
    for (size_t i = 0; i < secs.size(); i++)
        headers.push_back(section_at(secs, i));
    for (size_t at : headers)
        for (size_t bit = 0; bit < 16 * 8; bit++) {
            Bytes b = good;
            b[at + bit / 8] ^= (uint8_t)(1u << bit % 8);
            EXPECT_NE(parse_error(b), "") << "header at " << at << " bit " << bit;
        }
}

// ------------------------------------------------------------------ files --

TEST_F(Tpub, SaveIsAtomic)
{
    Model m;
    char err[512] = "";
    const std::string tmp_suffix = ".tmp." + std::to_string(getpid());

    // The path is a directory: the rename fails and the temporary file goes.
    const std::string as_dir = dir + "/pkg.tpub";
    ASSERT_TRUE(fs::create_directory(as_dir));
    EXPECT_EQ(tpub_save(&m.pkg, as_dir.c_str(), err, sizeof err), -1);
    EXPECT_EQ(std::string(err).rfind("cannot rename " + as_dir + tmp_suffix + " to " + as_dir +
                                         ": ", 0), 0u) << err;
    EXPECT_EQ(listing(dir), std::vector<std::string>{"pkg.tpub"});
    EXPECT_TRUE(fs::is_empty(as_dir));

    // The directory does not exist.
    const std::string missing = dir + "/missing/pkg.tpub";
    EXPECT_EQ(tpub_save(&m.pkg, missing.c_str(), err, sizeof err), -1);
    EXPECT_EQ(std::string(err), "cannot create " + missing + tmp_suffix +
                                    ": No such file or directory");
    EXPECT_EQ(listing(dir), std::vector<std::string>{"pkg.tpub"});

    // The directory is not writable (root writes anyway, so only then is this checked).
    const std::string ro = dir + "/ro";
    ASSERT_EQ(mkdir(ro.c_str(), 0500), 0);
    const std::string ro_pkg = ro + "/pkg.tpub";
    if (access(ro.c_str(), W_OK) != 0) {
        EXPECT_EQ(tpub_save(&m.pkg, ro_pkg.c_str(), err, sizeof err), -1);
        EXPECT_EQ(std::string(err), "cannot create " + ro_pkg + tmp_suffix +
                                        ": Permission denied");
        EXPECT_TRUE(fs::is_empty(ro));
    }

    // A refused package leaves the existing file as it was.
    const std::string path = dir + "/good.tpub";
    ASSERT_EQ(tpub_save(&m.pkg, path.c_str(), err, sizeof err), 0) << err;
    const Bytes before = slurp(path);
    m.seg0_gemms[0].lda = 1;
    EXPECT_EQ(tpub_save(&m.pkg, path.c_str(), err, sizeof err), -1);
    EXPECT_EQ(slurp(path), before);
    EXPECT_EQ(listing(dir), (std::vector<std::string>{"good.tpub", "pkg.tpub", "ro"}));
}

TEST_F(Tpub, LoadErrors)
{
    tpub_package p;
    char err[256] = "";
    EXPECT_EQ(tpub_load((dir + "/absent.tpub").c_str(), &p, err, sizeof err), -1);
    EXPECT_STREQ(err, "cannot open: No such file or directory");
    EXPECT_TRUE(is_empty(p));
    EXPECT_EQ(tpub_load(dir.c_str(), &p, err, sizeof err), -1);
    EXPECT_STREQ(err, "cannot read: not a regular file");
    EXPECT_TRUE(is_empty(p));

    // A file cut short gives the parser's message.
    Model m;
    Bytes b = encode(m.pkg);
    b.resize(b.size() - 9);
    const std::string path = dir + "/cut.tpub";
    std::ofstream(path, std::ios::binary).write((const char *)b.data(), (std::streamsize)b.size());
    EXPECT_EQ(tpub_load(path.c_str(), &p, err, sizeof err), -1);
    EXPECT_EQ(std::string(err), parse_error(b));
    EXPECT_TRUE(is_empty(p));

    // A short error buffer truncates the message; none at all is allowed.
    char small[8];
    EXPECT_EQ(tpub_parse(b.data(), b.size(), &p, small, sizeof small), -1);
    EXPECT_EQ(std::string(small), parse_error(b).substr(0, 7));
    EXPECT_EQ(tpub_parse(b.data(), b.size(), &p, nullptr, 0), -1);
}

} // namespace

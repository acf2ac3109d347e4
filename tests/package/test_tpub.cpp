// test_tpub.cpp - the package format (package/tpub.h, docs/package.md): a realistic package
// round-trips through save and load field for field and byte for byte, and its bytes are the
// layout docs/package.md describes (re-encoded here independently); tpub_dump's text; atomic
// saves. The validation and malformed-file tests are in test_tpub_errors.cpp.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "package/tpub.h"
#include "tests/support/tpub_test.h"

namespace
{

using namespace tpub_test;

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
    ASSERT_EQ(a.rank, b.rank) << what;
    for (uint32_t i = 0; i < a.rank; i++) {
        EXPECT_EQ(a.perm[i], b.perm[i]) << what << " perm " << i;
        EXPECT_EQ(a.dims[i], b.dims[i]) << what << " dims " << i;
    }
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

void expect_same_conv(const tpub_conv &a, const tpub_conv &b, const std::string &what)
{
    const uint32_t x[] = {a.flags,
                          a.batch,
                          a.h,
                          a.w,
                          a.c,
                          a.kh,
                          a.kw,
                          a.cout,
                          a.stride_h,
                          a.stride_w,
                          a.pad_top,
                          a.pad_bottom,
                          a.pad_left,
                          a.pad_right,
                          a.pool_h,
                          a.pool_w,
                          a.pool_stride_h,
                          a.pool_stride_w};
    const uint32_t y[] = {b.flags,
                          b.batch,
                          b.h,
                          b.w,
                          b.c,
                          b.kh,
                          b.kw,
                          b.cout,
                          b.stride_h,
                          b.stride_w,
                          b.pad_top,
                          b.pad_bottom,
                          b.pad_left,
                          b.pad_right,
                          b.pool_h,
                          b.pool_w,
                          b.pool_stride_h,
                          b.pool_stride_w};
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
        EXPECT_EQ(x[i], y[i]) << what << " field " << i;
    EXPECT_EQ(a.in_off, b.in_off) << what;
    EXPECT_EQ(a.k_off, b.k_off) << what;
    EXPECT_EQ(a.out_off, b.out_off) << what;
    EXPECT_EQ(a.p_off, b.p_off) << what;
    expect_same_str(a.name, b.name, what + " name");
    expect_same_str(a.fused, b.fused, what + " fused");
}

void expect_same_op(const tpub_op &a, const tpub_op &b, const std::string &what)
{
    ASSERT_EQ(a.kind, b.kind) << what;
    if (a.kind == TPUB_OP_GEMM)
        expect_same_gemm(a.gemm, b.gemm, what);
    else
        expect_same_conv(a.conv, b.conv, what);
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
        ASSERT_EQ(x.n_ops, y.n_ops) << seg;
        for (uint32_t i = 0; i < x.n_inputs; i++)
            expect_same_xfer(x.inputs[i], y.inputs[i], seg + " input " + std::to_string(i));
        for (uint32_t i = 0; i < x.n_outputs; i++)
            expect_same_xfer(x.outputs[i], y.outputs[i], seg + " output " + std::to_string(i));
        for (uint32_t i = 0; i < x.n_ops; i++)
            expect_same_op(x.ops[i], y.ops[i], seg + " op " + std::to_string(i));
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
    hlo_error err{};
    ASSERT_EQ(tpub_save(&m.pkg, path.c_str(), &err), 0) << err.msg;
    EXPECT_EQ(listing(dir), std::vector<std::string>{"mlp.tpub"}) << "no temporary file left";

    tpub_package loaded;
    ASSERT_EQ(tpub_load(path.c_str(), &loaded, &err), 0) << err.msg;
    expect_same(m.pkg, loaded);

    ASSERT_EQ(tpub_save(&loaded, again.c_str(), &err), 0) << err.msg;
    const Bytes bytes = slurp(path);
    EXPECT_EQ(slurp(again), bytes);
    EXPECT_EQ(bytes, encode(m.pkg)) << "the layout of docs/package.md";
    EXPECT_EQ(bytes.size() % 8, 0u);

    // The package is reusable after tpub_free.
    tpub_free(&loaded);
    EXPECT_TRUE(is_empty(loaded));
    ASSERT_EQ(tpub_parse(bytes.data(), bytes.size(), &loaded, &err), 0) << err.msg;
    expect_same(m.pkg, loaded);
    tpub_free(&loaded);

    // Saving over an existing package replaces it.
    // W1..W3 become 1x2, 2x1 and 1x1 tiles of 256 bytes, K4 2x1: still inside the arena.
    m.pkg.array_n = 16;
    ASSERT_EQ(tpub_save(&m.pkg, path.c_str(), &err), 0) << err.msg;
    ASSERT_EQ(tpub_load(path.c_str(), &loaded, &err), 0) << err.msg;
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
    hlo_error err{};
    ASSERT_EQ(tpub_save(&p, path.c_str(), &err), 0) << err.msg;
    tpub_package q;
    ASSERT_EQ(tpub_load(path.c_str(), &q, &err), 0) << err.msg;
    expect_same(p, q);
    EXPECT_STREQ(q.report, "");
    EXPECT_EQ(q.const_image, nullptr);
    EXPECT_EQ(slurp(path), encode(p));
    const std::string d = dump(q);
    EXPECT_NE(d.find("arena 0x0 bytes: constants [0x0, 0x0), activations [0x0, 0x0)\n"),
              std::string::npos)
        << d;
    EXPECT_NE(d.find("report (0 bytes):\n"), std::string::npos) << d;
    tpub_free(&q);
}

// ------------------------------------------------------------------ dump --

TEST(TpubDump, ShowsEverything)
{
    Model m;
    const std::string d = dump(m.pkg);
    const char *lines[] = {
        "tpub version 2, array 8x8\n",
        "arena 0x2000 bytes: constants [0x0, 0x730), activations [0x730, 0x2000)\n",
        "inputs (3):\n  0 x: f32[4,16]\n  1 ids: u8[4,10]\n  2 img: f32[2,3,5,4]\n",
        "outputs (5):\n  0 y: f32[4,10]\n  1 h: s8[4,32]\n  2 z: f32[2,2,4]\n  3 count: s32[]\n"
        "  4 pool: f32[2,4,4,1]\n",
        "segment 0: inputs 1, outputs 2, ops 2\n",
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
        "segment 1: inputs 1, outputs 1, ops 1\n"
        "  input 0: 0xc00 4 x 10 ld 16, u8 -> u8, copy\n"
        "  output 0: 0xd00 4 x 4 ld 4, s32 -> f32, scale 0.25\n"
        "  gemm 0: dot.12\n"
        "    m 4 k 10 n 4, flags A_UNSIGNED|B_TILED\n"
        "    a 0xc00 lda 16, b 0x600, c 0xd00 ldc 4\n"
        "    tiles 2 x 1, MACs 160\n",
        "segment 2: inputs 1, outputs 1, ops 1\n"
        "  input 0: 0xe00 40 x 3 ld 3, f32 -> s8, scale 0.015625\n"
        "    host [2,3,5,4] as dims (0,2,3,1) on the device\n"
        "  output 0: 0xf00 8 x 4 ld 4, s8 -> f32, scale 0.5\n"
        "    host [2,4,4,1] as dims (0,2,3,1) on the device\n"
        "  conv2d 0: conv.20, fused add.21,maximum.22,rw.23\n"
        "    2 x 5 x 4 x 3, kernel 2 x 2 -> 4, stride 1 x 1, pad 1,0,0,0, pool 2 x 2 stride 1 x 2, "
        "flags BIAS|RELU|OUT_INT8|POOL\n"
        "    in 0xe00, kernel 0x680, out 0xf00, params 0x700\n"
        "    output 2 x 4 x 1 x 4, kernel tiles 2 x 1 (packed runs), MACs 1440\n",
    };
    for (const char *l : lines)
        EXPECT_NE(d.find(l), std::string::npos) << "missing:\n" << l << "\nin:\n" << d;
    const std::string host =
        "host program (" + std::to_string(strlen(m.pkg.host_hlo)) + " bytes):\n" + m.pkg.host_hlo;
    EXPECT_NE(d.find(host), std::string::npos) << d;
    // The report has no final newline; the dump adds one.
    const std::string report =
        "report (" + std::to_string(strlen(m.pkg.report)) + " bytes):\n" + m.pkg.report + "\n";
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

// ------------------------------------------------------------------ files --

TEST_F(Tpub, SaveIsAtomic)
{
    Model m;
    hlo_error err{};

    // The path is a directory: the rename fails and the temporary file goes.
    const std::string as_dir = dir + "/pkg.tpub";
    ASSERT_TRUE(fs::create_directory(as_dir));
    EXPECT_EQ(tpub_save(&m.pkg, as_dir.c_str(), &err), -1);
    EXPECT_EQ(std::string(err.msg), "cannot rename into place: Is a directory");
    EXPECT_EQ(listing(dir), std::vector<std::string>{"pkg.tpub"});
    EXPECT_TRUE(fs::is_empty(as_dir));

    // The directory does not exist.
    const std::string missing = dir + "/missing/pkg.tpub";
    EXPECT_EQ(tpub_save(&m.pkg, missing.c_str(), &err), -1);
    EXPECT_EQ(std::string(err.msg), "cannot create: No such file or directory");
    EXPECT_EQ(listing(dir), std::vector<std::string>{"pkg.tpub"});

    // The directory is not writable (root writes anyway, so only then is this checked).
    const std::string ro = dir + "/ro";
    ASSERT_EQ(mkdir(ro.c_str(), 0500), 0);
    const std::string ro_pkg = ro + "/pkg.tpub";
    if (access(ro.c_str(), W_OK) != 0) {
        EXPECT_EQ(tpub_save(&m.pkg, ro_pkg.c_str(), &err), -1);
        EXPECT_EQ(std::string(err.msg), "cannot create: Permission denied");
        EXPECT_TRUE(fs::is_empty(ro));
    }

    // A refused package leaves the existing file as it was.
    const std::string path = dir + "/good.tpub";
    ASSERT_EQ(tpub_save(&m.pkg, path.c_str(), &err), 0) << err.msg;
    const Bytes before = slurp(path);
    m.seg0_ops[0].gemm.lda = 1;
    EXPECT_EQ(tpub_save(&m.pkg, path.c_str(), &err), -1);
    EXPECT_EQ(slurp(path), before);
    EXPECT_EQ(listing(dir), (std::vector<std::string>{"good.tpub", "pkg.tpub", "ro"}));
}

} // namespace

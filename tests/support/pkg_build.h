// pkg_build.h - packages (package/tpub.h) assembled by hand for the suites that run them
// (test_runtime.cpp in process, test_run.cpp through `tpusim run`): weights and kernels in tile
// order, activations after the constants, transfers, GEMM and CONV2D operations, segments.
#ifndef TPU_TESTS_SUPPORT_PKG_BUILD_H
#define TPU_TESTS_SUPPORT_PKG_BUILD_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <filesystem>
#include <string>
#include <vector>

#include "driver/tpu.h"
#include "package/tpub.h"
#include "tests/support/conv_ref.h"
#include "tests/support/progs.h"

namespace pkg_build
{

inline uint64_t align64(uint64_t v) { return (v + 63) & ~63ull; }

using conv_ref::ConvShape;
using conv_ref::tile_kernel;

// A tpub_package assembled in memory; owns everything its view points at. Tests may break the
// view (pkg) after finish() to provoke one error at a time.
class Package
{
  public:
    explicit Package(uint32_t n) { pkg.array_n = n; }
    Package(const Package &) = delete;
    Package &operator=(const Package &) = delete;

    tpub_package pkg{};
    std::vector<uint8_t> image; // the constant image
    uint64_t arena = 0;

    // Places bytes in the constant image (64-byte aligned); returns their offset.
    uint64_t constant(const void *data, size_t bytes)
    {
        const uint64_t off = align64(image.size());
        image.resize(off + bytes);
        memcpy(image.data() + off, data, bytes);
        return off;
    }
    // B (k x n, row-major) in tile order for the package's array size.
    uint64_t weights(const std::vector<int8_t> &b, uint32_t k, uint32_t n)
    {
        std::vector<int8_t> t(gemm_tiled_b_bytes(k, n, pkg.array_n));
        gemm_tile_b(b.data(), k, n, pkg.array_n, t.data());
        return constant(t.data(), t.size());
    }
    // A kernel K[kh][kw][c][cout] in tile order for the package's array size.
    uint64_t kernel(const ConvShape &v, const std::vector<int8_t> &k)
    {
        const std::vector<int8_t> t = tile_kernel(v, k, pkg.array_n);
        return constant(t.data(), t.size());
    }
    // Room for an activation after the constants and earlier activations.
    uint64_t activation(uint64_t bytes)
    {
        const uint64_t off = align64(std::max<uint64_t>(arena, align64(image.size())));
        arena = off + bytes;
        return off;
    }
    void input(const char *name, hlo_type t, std::vector<int64_t> dims)
    {
        inputs_.push_back(sig(name, t, dims));
    }
    void output(const char *name, hlo_type t, std::vector<int64_t> dims)
    {
        outputs_.push_back(sig(name, t, dims));
    }
    tpub_xfer xfer(uint64_t off, uint32_t rows, uint32_t cols, uint32_t ld, hlo_type dev,
                   hlo_type host, std::vector<float> scale = {})
    {
        scales_.push_back(scale);
        tpub_xfer x{};
        x.off = off;
        x.rows = rows;
        x.cols = cols;
        x.ld = ld;
        x.dev_type = dev;
        x.host_type = host;
        x.n_scale = (uint32_t)scale.size();
        x.scale = scales_.back().empty() ? nullptr : scales_.back().data();
        return x;
    }
    // The same, the host array of dims transposed by perm on the device (tpub.h).
    tpub_xfer xfer(uint64_t off, uint32_t rows, uint32_t cols, hlo_type dev, hlo_type host,
                   std::vector<float> scale, const std::vector<uint32_t> &perm,
                   const std::vector<int64_t> &dims)
    {
        tpub_xfer x = xfer(off, rows, cols, cols, dev, host, scale);
        x.rank = (uint32_t)perm.size();
        std::copy(perm.begin(), perm.end(), x.perm);
        std::copy(dims.begin(), dims.end(), x.dims);
        return x;
    }
    tpub_op gemm(const char *name, uint32_t m, uint32_t k, uint32_t n, uint32_t flags, uint64_t a,
                 uint32_t lda, uint64_t b, uint64_t c, uint32_t ldc, uint64_t p,
                 const char *fused = "")
    {
        tpub_op o{};
        o.kind = TPUB_OP_GEMM;
        o.gemm = tpub_gemm{m,   k,         n,         flags | TPU_GEMM_B_TILED, a, b, c, p, lda,
                           ldc, str(name), str(fused)};
        return o;
    }
    tpub_op conv(const char *name, const ConvShape &v, uint32_t flags, uint64_t in, uint64_t k,
                 uint64_t out, uint64_t p, const char *fused = "")
    {
        tpub_op o{};
        o.kind = TPUB_OP_CONV2D;
        o.conv = tpub_conv{flags, v.batch, v.h,  v.w,  v.c,  v.kh, v.kw,      v.cout,
                           v.sh,  v.sw,    v.pt, v.pb, v.pl, v.pr, v.ph,      v.pw,
                           v.psh, v.psw,   in,   k,    out,  p,    str(name), str(fused)};
        return o;
    }
    void segment(std::vector<tpub_xfer> in, std::vector<tpub_xfer> out, std::vector<tpub_op> ops)
    {
        xfers_.push_back(in);
        tpub_xfer *i = xfers_.back().data();
        xfers_.push_back(out);
        tpub_xfer *o = xfers_.back().data();
        ops_.push_back(ops);
        segments_.push_back(tpub_segment{(uint32_t)in.size(), (uint32_t)out.size(),
                                         (uint32_t)ops.size(), i, o, ops_.back().data()});
    }
    // The view, with the host program.
    tpub_package &finish(const std::string &host)
    {
        host_ = host;
        pkg.arena_bytes = arena;
        pkg.const_bytes = image.size();
        pkg.const_image = image.data();
        pkg.host_hlo = host_.data();
        pkg.n_inputs = (uint32_t)inputs_.size();
        pkg.inputs = inputs_.data();
        pkg.n_outputs = (uint32_t)outputs_.size();
        pkg.outputs = outputs_.data();
        pkg.n_segments = (uint32_t)segments_.size();
        pkg.segments = segments_.data();
        pkg.report = str("built by a test");
        return pkg;
    }
    void save(const std::filesystem::path &path)
    {
        hlo_error err{};
        ASSERT_EQ(tpub_save(&pkg, path.string().c_str(), &err), 0) << err.msg;
    }

  private:
    char *str(const std::string &s)
    {
        strings_.push_back(s);
        return strings_.back().data();
    }
    tpub_sig sig(const char *name, hlo_type t, const std::vector<int64_t> &dims)
    {
        tpub_sig s{};
        s.name = str(name);
        s.type = t;
        s.rank = (int)dims.size();
        std::copy(dims.begin(), dims.end(), s.dims);
        return s;
    }

    std::string host_;
    std::deque<std::string> strings_;
    std::deque<std::vector<float>> scales_;
    std::deque<std::vector<tpub_xfer>> xfers_;
    std::deque<std::vector<tpub_op>> ops_;
    std::vector<tpub_segment> segments_;
    std::vector<tpub_sig> inputs_, outputs_;
};

} // namespace pkg_build

#endif

// runtime_models.h - packages for the runtime's and `tpusim run`'s tests (test_runtime.cpp,
// test_runtime_cores.cpp, test_run.cpp),
// built with pkg_build.h: model A (one segment of two GEMMs) and model B (two segments), their C
// references of the same quantized arithmetic, and an open runtime.
#ifndef TPU_TESTS_SUPPORT_RUNTIME_MODELS_H
#define TPU_TESTS_SUPPORT_RUNTIME_MODELS_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/tpurt.h"
#include "tests/support/pkg_build.h"
#include "tests/support/progs.h"

namespace runtime_models
{

// The smallest array size built: packages are built for it.
inline uint32_t array_n()
{
    uint32_t sizes[64];
    const int n = tpu_array_sizes(sizes, 64);
    return n ? sizes[0] : 8;
}

inline bool has(const char *text, const std::string &part)
{
    return text && std::strstr(text, part.c_str()) != nullptr;
}

// ----------------------------------------------------------- packages --

using pkg_build::Package;

// What tpub.h says an input transfer does to a float.
inline int8_t quantize(float x, float scale)
{
    const float q = nearbyintf(x / scale);
    return std::isnan(q) ? 0 : (int8_t)std::min(127.0f, std::max(-128.0f, q));
}

// The GEMM arithmetic of the device (docs/command-stream.md) on m rows.
template <typename Out>
inline std::vector<Out> gemm(const void *a, int unsigned_a, const std::vector<int8_t> &b,
                             const std::vector<int32_t> &params, uint32_t m, uint32_t k, uint32_t n,
                             uint32_t flags)
{
    gemm_desc d{};
    d.m = m;
    d.k = k;
    d.n = n;
    d.unsigned_a = unsigned_a;
    d.bias = (flags & TPU_GEMM_BIAS) != 0;
    d.relu = (flags & TPU_GEMM_RELU) != 0;
    d.out_int8 = (flags & TPU_GEMM_OUT_INT8) != 0;
    std::vector<Out> c((size_t)m * n);
    gemm_reference(&d, a, b.data(), params.empty() ? nullptr : params.data(), c.data());
    return c;
}

// Model A: r = max(segment0(x), 0) with x f32[4,36] and one segment of two GEMMs: quantize x
// (scale 1/32, row pitch 40 on the device), h = requant(relu(x.W1 + b1)) int8, then
// y = h.W2 + b2 int32, dequantized per column.
struct ModelA {
    static constexpr uint32_t kBatch = 4, kIn = 36, kHidden = 12, kClasses = 10, kLd = 40;
    static constexpr float kScaleX = 1.0f / 32;
    static constexpr uint32_t kFlags1 = TPU_GEMM_BIAS | TPU_GEMM_RELU | TPU_GEMM_OUT_INT8;
    static constexpr uint32_t kFlags2 = TPU_GEMM_BIAS;
    std::vector<int8_t> w1, w2;
    std::vector<int32_t> p1, p2; // bias, mult, shift
    std::vector<float> scale_y;
    Package p{array_n()};

    // The host program with the custom-call's target and the output's rows as given.
    explicit ModelA(const char *target = "tpu.segment.0", int64_t out_rows = kBatch)
    {
        tpu_rng rng{2024};
        w1.resize(kIn * kHidden);
        w2.resize(kHidden * kClasses);
        rng_fill_int8(&rng, w1.data(), w1.size());
        rng_fill_int8(&rng, w2.data(), w2.size());
        p1.assign(3 * kHidden, 0);
        for (uint32_t j = 0; j < kHidden; j++) {
            p1[j] = (int32_t)rng_range(&rng, -3000, 3000);
            p1[kHidden + j] = (int32_t)rng_range(&rng, 1, 300);
            p1[2 * kHidden + j] = (int32_t)rng_range(&rng, 8, 14);
        }
        p2.assign(3 * kClasses, 0);
        for (uint32_t j = 0; j < kClasses; j++)
            p2[j] = (int32_t)rng_range(&rng, -5000, 5000);
        for (uint32_t j = 0; j < kClasses; j++)
            scale_y.push_back(0.001f * (float)(j + 1));
        build(p, target, out_rows);
    }

    // The package into p (of any array size).
    void build(Package &p, const char *target = "tpu.segment.0", int64_t out_rows = kBatch) const
    {
        const uint64_t b1 = p.weights(w1, kIn, kHidden), pp1 = p.constant(p1.data(), 12 * kHidden);
        const uint64_t b2 = p.weights(w2, kHidden, kClasses);
        const uint64_t pp2 = p.constant(p2.data(), 12 * kClasses);
        const uint64_t x = p.activation((kBatch - 1) * kLd + kIn);
        const uint64_t h = p.activation(kBatch * kHidden);
        const uint64_t y = p.activation(4 * kBatch * kClasses);
        p.input("x", HLO_F32, {kBatch, kIn});
        p.output("r", HLO_F32, {out_rows, kClasses});
        p.segment({p.xfer(x, kBatch, kIn, kLd, HLO_S8, HLO_F32, {kScaleX})},
                  {p.xfer(y, kBatch, kClasses, kClasses, HLO_S32, HLO_F32, scale_y)},
                  {p.gemm("dot.1", kBatch, kIn, kHidden, kFlags1, x, kLd, b1, h, kHidden, pp1,
                          "add.1,maximum.1"),
                   p.gemm("dot.2", kBatch, kHidden, kClasses, kFlags2, h, kHidden, b2, y, kClasses,
                          pp2, "add.2")});
        p.finish(host(target));
    }

    // The package for an n x n array, written to path (tpub_save).
    void save(const std::string &path, uint32_t n, const char *target = "tpu.segment.0",
              int64_t out_rows = kBatch) const
    {
        Package q(n);
        build(q, target, out_rows);
        q.save(path);
    }

    static std::string host(const char *target)
    {
        return std::string("HloModule model_a\n"
                           "ENTRY main {\n"
                           "  x = f32[4,36] parameter(0)\n"
                           "  s = f32[4,10] custom-call(x), custom_call_target=\"") +
               target +
               "\"\n"
               "  zero = f32[] constant(0)\n"
               "  zeros = f32[4,10] broadcast(zero), dimensions={}\n"
               "  ROOT r = f32[4,10] maximum(s, zeros)\n"
               "}\n";
    }

    // r for the rows of x (rows x 36).
    std::vector<float> reference(const std::vector<float> &x) const
    {
        const uint32_t m = (uint32_t)(x.size() / kIn);
        std::vector<int8_t> q(x.size());
        for (size_t i = 0; i < x.size(); i++)
            q[i] = quantize(x[i], kScaleX);
        const auto h = gemm<int8_t>(q.data(), 0, w1, p1, m, kIn, kHidden, kFlags1);
        const auto y = gemm<int32_t>(h.data(), 0, w2, p2, m, kHidden, kClasses, kFlags2);
        std::vector<float> r(y.size());
        for (size_t i = 0; i < y.size(); i++)
            r[i] = std::max((float)y[i] * scale_y[i % kClasses], 0.0f);
        return r;
    }
};

// Model B: two segments. Segment 0 copies x u8[4,20] to the device, h = requant(x.W0) int8
// (A unsigned) and returns h twice: as a copy (s8) and dequantized with one scale (f32). The
// host negates the float one; segment 1 quantizes it (scale 1/2) and returns relu(n.W1) int32
// as a copy. Outputs (y s32[4,8], h s8[4,16]).
struct ModelB {
    static constexpr uint32_t kBatch = 4, kIn = 20, kHidden = 16, kOut = 8;
    static constexpr float kScaleH = 0.25f, kScaleN = 0.5f;
    static constexpr uint32_t kFlags0 = TPU_GEMM_A_UNSIGNED | TPU_GEMM_OUT_INT8;
    static constexpr uint32_t kFlags1 = TPU_GEMM_RELU;
    std::vector<int8_t> w0, w1;
    std::vector<int32_t> p0;
    Package p{array_n()};

    ModelB()
    {
        tpu_rng rng{77};
        w0.resize(kIn * kHidden);
        w1.resize(kHidden * kOut);
        rng_fill_int8(&rng, w0.data(), w0.size());
        rng_fill_int8(&rng, w1.data(), w1.size());
        p0.assign(3 * kHidden, 0);
        for (uint32_t j = 0; j < kHidden; j++) {
            p0[kHidden + j] = 1;
            p0[2 * kHidden + j] = 9;
        }
        build(p);
    }

    // The package into p (of any array size).
    void build(Package &p) const
    {
        const uint64_t b0 = p.weights(w0, kIn, kHidden), pp0 = p.constant(p0.data(), 12 * kHidden);
        const uint64_t b1 = p.weights(w1, kHidden, kOut);
        const uint64_t x = p.activation(kBatch * kIn), h = p.activation(kBatch * kHidden);
        const uint64_t x1 = p.activation(kBatch * kHidden), y = p.activation(4 * kBatch * kOut);
        p.input("x", HLO_U8, {kBatch, kIn});
        p.output("y", HLO_S32, {kBatch, kOut});
        p.output("h", HLO_S8, {kBatch, kHidden});
        p.segment({p.xfer(x, kBatch, kIn, kIn, HLO_U8, HLO_U8)},
                  {p.xfer(h, kBatch, kHidden, kHidden, HLO_S8, HLO_S8),
                   p.xfer(h, kBatch, kHidden, kHidden, HLO_S8, HLO_F32, {kScaleH})},
                  {p.gemm("dot.0", kBatch, kIn, kHidden, kFlags0, x, kIn, b0, h, kHidden, pp0)});
        p.segment({p.xfer(x1, kBatch, kHidden, kHidden, HLO_S8, HLO_F32, {kScaleN})},
                  {p.xfer(y, kBatch, kOut, kOut, HLO_S32, HLO_S32)},
                  {p.gemm("dot.1", kBatch, kHidden, kOut, kFlags1, x1, kHidden, b1, y, kOut, 0)});
        p.finish("HloModule model_b\n"
                 "ENTRY main {\n"
                 "  x = u8[4,20] parameter(0)\n"
                 "  t = (s8[4,16], f32[4,16]) custom-call(x), "
                 "custom_call_target=\"tpu.segment.0\"\n"
                 "  h8 = s8[4,16] get-tuple-element(t), index=0\n"
                 "  hf = f32[4,16] get-tuple-element(t), index=1\n"
                 "  n = f32[4,16] negate(hf)\n"
                 "  y = s32[4,8] custom-call(n), custom_call_target=\"tpu.segment.1\"\n"
                 "  ROOT out = (s32[4,8], s8[4,16]) tuple(y, h8)\n"
                 "}\n");
    }

    // The package for an n x n array, written to path (tpub_save).
    void save(const std::string &path, uint32_t n) const
    {
        Package q(n);
        build(q);
        q.save(path);
    }

    void reference(const std::vector<uint8_t> &x, std::vector<int32_t> &y,
                   std::vector<int8_t> &h) const
    {
        const uint32_t m = (uint32_t)(x.size() / kIn);
        h = gemm<int8_t>(x.data(), 1, w0, p0, m, kIn, kHidden, kFlags0);
        std::vector<int8_t> q(h.size());
        for (size_t i = 0; i < h.size(); i++)
            q[i] = quantize(-((float)h[i] * kScaleH), kScaleN);
        y = gemm<int32_t>(q.data(), 0, w1, {}, m, kHidden, kOut, kFlags1);
    }
};

// One batch of model A inputs: mostly in the quantizer's range, some clamped.
inline std::vector<float> random_x(uint64_t seed)
{
    tpu_rng rng{seed};
    std::vector<float> x(ModelA::kBatch * ModelA::kIn);
    for (float &v : x)
        v = (float)rng_range(&rng, -4500, 4500) / 1000.0f;
    return x;
}

inline bool same_bits(const std::vector<float> &a, const std::vector<float> &b)
{
    return a.size() == b.size() && !memcmp(a.data(), b.data(), a.size() * sizeof(float));
}

// ------------------------------------------------------------- fixture --

// An open runtime, closed afterwards.
struct Rt {
    tpurt *rt = nullptr;
    tpurt_status st;
    char err[512] = "";
    explicit Rt(const tpub_package &pkg, const tpurt_options *opts = nullptr)
    {
        st = tpurt_open(&pkg, opts, &rt, err, sizeof err);
    }
    ~Rt() { tpurt_close(rt); }
    Rt(const Rt &) = delete;
    Rt &operator=(const Rt &) = delete;
    operator tpurt *() const { return rt; }
};

// Runs model A on x; returns the status, r in *r.
inline tpurt_status run_a(tpurt *rt, const std::vector<float> &x, std::vector<float> *r)
{
    r->assign(ModelA::kBatch * ModelA::kClasses, -1.0f);
    const void *in[] = {x.data()};
    void *out[] = {r->data()};
    return tpurt_run(rt, in, 1, out, 1);
}

} // namespace runtime_models

#endif

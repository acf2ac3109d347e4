// test_runtime_conv.cpp - the runtime (runtime/tpurt.h) on convolutions: the package's geometry
// rules (package/tpub.h, restated there) against the driver's, permuted transfers,
// a convolution layer's statistics, and a package of a pooled CONV2D whose int8 result a GEMM
// reads in place, run on the device against a C reference (tests/support/conv_ref.h). The runs
// on the device need the RTL of ISA 1.1 (ConvOnDevice.*).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "runtime/tpurt.h"
#include "tests/support/conv_ref.h"
#include "tests/support/golden_run.h"
#include "tests/support/pkg_build.h"
#include "tests/support/progs.h"

namespace
{

using pkg_build::ConvShape;
using pkg_build::Package;

uint32_t array_n()
{
    uint32_t sizes[64];
    const int n = tpu_array_sizes(sizes, 64);
    return n ? sizes[0] : 8;
}

int8_t quantize(float x, float scale)
{
    const float q = nearbyintf(x / scale);
    return std::isnan(q) ? 0 : (int8_t)std::min(127.0f, std::max(-128.0f, q));
}

// An open runtime, closed afterwards.
struct Rt {
    tpurt *rt = nullptr;
    tpurt_status st;
    char err[512] = "";
    explicit Rt(const tpub_package &pkg) { st = tpurt_open(&pkg, nullptr, &rt, err, sizeof err); }
    ~Rt() { tpurt_close(rt); }
    Rt(const Rt &) = delete;
    Rt &operator=(const Rt &) = delete;
    operator tpurt *() const { return rt; }
};

// ------------------------------------------------------------ geometry --

// tpub_conv_out_size and tpub_conv_k_tiles are the driver's tpu_conv_out_size and
// tpu_conv_k_tiles (which the firmware's rules define) on random geometries, pooled or not,
// packed or not.
TEST(ConvGeometry, PackageRulesAreTheDrivers)
{
    std::mt19937 rng(31);
    auto u = [&](uint32_t lo, uint32_t hi) {
        return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
    };
    for (int i = 0; i < 20000; i++) {
        tpub_conv p{};
        p.h = u(1, 40);
        p.w = u(1, 40);
        p.c = u(1, 70);
        p.pad_top = u(0, 3);
        p.pad_bottom = u(0, 3);
        p.pad_left = u(0, 1) ? 0 : u(0, 3);
        p.pad_right = u(0, 1) ? 0 : u(0, 3);
        p.kh = u(0, p.h + p.pad_top + p.pad_bottom + 1); // sometimes 0 or too tall
        p.kw = u(0, p.w + p.pad_left + p.pad_right + 1);
        p.stride_h = u(0, 4);
        p.stride_w = u(0, 4);
        p.flags = u(0, 1) ? TPUB_CONV_POOL | TPUB_GEMM_OUT_INT8 : 0;
        p.pool_h = u(0, 6);
        p.pool_w = u(0, 6);
        p.pool_stride_h = u(0, 3);
        p.pool_stride_w = u(0, 3);
        tpu_conv2d d{};
        d.flags = p.flags;
        d.h = p.h, d.w = p.w, d.c = p.c, d.kh = p.kh, d.kw = p.kw;
        d.stride_h = p.stride_h, d.stride_w = p.stride_w;
        d.pad_top = p.pad_top, d.pad_bottom = p.pad_bottom;
        d.pad_left = p.pad_left, d.pad_right = p.pad_right;
        d.pool_h = p.pool_h, d.pool_w = p.pool_w;
        d.pool_stride_h = p.pool_stride_h, d.pool_stride_w = p.pool_stride_w;
        uint32_t a, b, x, y;
        tpub_conv_out_size(&p, &a, &b);
        tpu_conv_out_size(&d, &x, &y);
        ASSERT_EQ(a, x) << "case " << i;
        ASSERT_EQ(b, y) << "case " << i;
        for (uint32_t n : {4u, 8u, 16u, 32u})
            ASSERT_EQ(tpub_conv_k_tiles(&p, n), tpu_conv_k_tiles(&d, n))
                << "case " << i << " n " << n;
    }
}

// ---------------------------------------------------------- transfers --

// A GEMM whose A is the host array x f32[3,4,2] transposed to [3,2,4] (rows 6, k 4) and whose
// result [3,2,5] is the host's y f32[3,5,2]: both transfers permuted {0,2,1}.
TEST(Transfers, PermutedBothWays)
{
    const uint32_t kM = 6, kK = 4, kN = 5;
    const float kScaleX = 1.0f / 16, kScaleY = 0.01f;
    tpu_rng rng{99};
    std::vector<int8_t> w(kK * kN);
    rng_fill_int8(&rng, w.data(), w.size());
    Package p(array_n());
    const uint64_t b = p.weights(w, kK, kN);
    const uint64_t a = p.activation(kM * kK), c = p.activation(4 * kM * kN);
    p.input("x", HLO_F32, {3, 4, 2});
    p.output("y", HLO_F32, {3, kN, 2});
    p.segment({p.xfer(a, kM, kK, HLO_S8, HLO_F32, {kScaleX}, {0, 2, 1}, {3, 4, 2})},
              {p.xfer(c, kM, kN, HLO_S32, HLO_F32, {kScaleY}, {0, 2, 1}, {3, kN, 2})},
              {p.gemm("dot.1", kM, kK, kN, 0, a, kK, b, c, kN, 0)});
    p.finish("HloModule t\nENTRY main {\n  x = f32[3,4,2] parameter(0)\n"
             "  ROOT y = f32[3,5,2] custom-call(x), custom_call_target=\"tpu.segment.0\"\n}\n");
    Rt rt(p.pkg);
    ASSERT_EQ(rt.st, TPURT_OK) << rt.err;
    std::vector<float> x(3 * 4 * 2), y(3 * kN * 2, -1);
    for (size_t i = 0; i < x.size(); i++)
        x[i] = (float)((int)(i * 37 % 29) - 14) / 8;
    const void *in[] = {x.data()};
    void *out[] = {y.data()};
    ASSERT_EQ(tpurt_run(rt, in, 1, out, 1), TPURT_OK) << tpurt_last_error(rt);
    for (uint32_t i = 0; i < 3; i++)
        for (uint32_t j = 0; j < 2; j++)
            for (uint32_t o = 0; o < kN; o++) {
                int32_t acc = 0;
                for (uint32_t k = 0; k < kK; k++)
                    acc += quantize(x[(i * 4 + k) * 2 + j], kScaleX) * w[k * kN + o];
                EXPECT_EQ(y[(i * kN + o) * 2 + j], (float)acc * kScaleY) << i << j << o;
            }
}

// ----------------------------------------------------- convolution --

// Model C: x f32[2,3,7,6] NCHW, written NHWC (scale 1/32); a 3x3 convolution of 5 channels,
// padding 1,0,1,1, stride 1x2, bias, ReLU, requantized and max-pooled 2x2 with step 2x1 into
// NHWC [2,3,2,5] int8; a GEMM reads it in place as [2, 30] (bias, int32). Outputs: the pooled
// result NCHW f32[2,5,3,2] (dequantized, scale 1/2) and y f32[2,4] (per column).
struct ModelC {
    static constexpr uint32_t kB = 2, kH = 7, kW = 6, kC = 3, kOut = 5, kK = 30, kN = 4;
    static constexpr float kScaleX = 1.0f / 32, kScaleP = 0.5f;
    static constexpr uint32_t kConvFlags =
        TPU_GEMM_BIAS | TPU_GEMM_RELU | TPU_GEMM_OUT_INT8 | TPU_CONV_POOL;
    ConvShape shape = {kB, kH, kW, kC, 3, 3, kOut, 1, 2, 1, 0, 1, 1, 2, 2, 2, 1};
    std::vector<int8_t> k, w;
    std::vector<int32_t> pc, pg;
    std::vector<float> scale_y;
    Package p{array_n()};

    ModelC()
    {
        tpu_rng rng{7};
        k.resize(3 * 3 * kC * kOut);
        w.resize(kK * kN);
        rng_fill_int8(&rng, k.data(), k.size());
        rng_fill_int8(&rng, w.data(), w.size());
        pc.assign(3 * kOut, 0);
        for (uint32_t j = 0; j < kOut; j++) {
            pc[j] = (int32_t)rng_range(&rng, -3000, 3000);
            pc[kOut + j] = (int32_t)rng_range(&rng, 1, 300);
            pc[2 * kOut + j] = (int32_t)rng_range(&rng, 8, 12);
        }
        pg.assign(3 * kN, 0);
        for (uint32_t j = 0; j < kN; j++) {
            pg[j] = (int32_t)rng_range(&rng, -5000, 5000);
            scale_y.push_back(0.001f * (float)(j + 1));
        }
        const uint64_t kc = p.kernel(shape, k), ppc = p.constant(pc.data(), 12 * kOut);
        const uint64_t bg = p.weights(w, kK, kN), ppg = p.constant(pg.data(), 12 * kN);
        const uint64_t x = p.activation(kB * kH * kW * kC), pooled = p.activation(kB * kK);
        const uint64_t y = p.activation(4 * kB * kN);
        p.input("x", HLO_F32, {kB, kC, kH, kW});
        p.output("pooled", HLO_F32, {kB, kOut, 3, 2});
        p.output("y", HLO_F32, {kB, kN});
        p.segment(
            {p.xfer(x, kB * kH * kW, kC, HLO_S8, HLO_F32, {kScaleX}, {0, 2, 3, 1},
                    {kB, kC, kH, kW})},
            {p.xfer(pooled, kB * 3 * 2, kOut, HLO_S8, HLO_F32, {kScaleP}, {0, 2, 3, 1},
                    {kB, kOut, 3, 2}),
             p.xfer(y, kB, kN, kN, HLO_S32, HLO_F32, scale_y)},
            {p.conv("conv.1", shape, kConvFlags, x, kc, pooled, ppc, "add.2,max.3,rw.4"),
             p.gemm("dot.5", kB, kK, kN, TPU_GEMM_BIAS, pooled, kK, bg, y, kN, ppg, "add.6")});
        p.finish("HloModule model_c\nENTRY main {\n  x = f32[2,3,7,6] parameter(0)\n"
                 "  s = (f32[2,5,3,2], f32[2,4]) custom-call(x), "
                 "custom_call_target=\"tpu.segment.0\"\n"
                 "  p = f32[2,5,3,2] get-tuple-element(s), index=0\n"
                 "  y = f32[2,4] get-tuple-element(s), index=1\n"
                 "  ROOT out = (f32[2,5,3,2], f32[2,4]) tuple(p, y)\n}\n");
    }

    // The outputs for x, from conv_ref.h's convolution and progs.h's GEMM.
    void reference(const std::vector<float> &x, std::vector<float> &pooled,
                   std::vector<float> &y) const
    {
        std::vector<uint8_t> in(x.size());
        for (uint32_t b = 0; b < kB; b++)
            for (uint32_t c = 0; c < kC; c++)
                for (uint32_t i = 0; i < kH; i++)
                    for (uint32_t j = 0; j < kW; j++)
                        in[((b * kH + i) * kW + j) * kC + c] =
                            (uint8_t)quantize(x[((b * kC + c) * kH + i) * kW + j], kScaleX);
        const std::vector<uint8_t> q =
            conv_ref::reference(shape, true, true, true, false, in, k, pc);
        pooled.assign(q.size(), 0);
        for (uint32_t b = 0; b < kB; b++)
            for (uint32_t i = 0; i < 3; i++)
                for (uint32_t j = 0; j < 2; j++)
                    for (uint32_t o = 0; o < kOut; o++)
                        pooled[((b * kOut + o) * 3 + i) * 2 + j] =
                            (float)(int8_t)q[((b * 3 + i) * 2 + j) * kOut + o] * kScaleP;
        gemm_desc d{};
        d.m = kB;
        d.k = kK;
        d.n = kN;
        d.bias = 1;
        std::vector<int32_t> acc(kB * kN);
        gemm_reference(&d, q.data(), w.data(), pg.data(), acc.data());
        y.resize(acc.size());
        for (size_t i = 0; i < acc.size(); i++)
            y[i] = (float)acc[i] * scale_y[i % kN];
    }
};

TEST(ConvLayers, DescribedWithTheirGeometryAndCost)
{
    ModelC m;
    Rt rt(m.p.pkg);
    ASSERT_EQ(rt.st, TPURT_OK) << rt.err;
    ASSERT_EQ(tpurt_n_layers(rt), 2u);
    tpurt_layer l;
    ASSERT_EQ(tpurt_get_layer(rt, 0, &l), TPURT_OK);
    EXPECT_STREQ(l.name, "conv.1");
    EXPECT_STREQ(l.fused, "add.2,max.3,rw.4");
    EXPECT_EQ(l.kind, TPUB_OP_CONV2D);
    ASSERT_NE(l.conv, nullptr);
    EXPECT_EQ(l.conv->kh, 3u);
    EXPECT_EQ(l.conv->pool_stride_w, 1u);
    EXPECT_EQ(l.oh, 3u);
    EXPECT_EQ(l.ow, 2u);
    EXPECT_EQ(l.m, 0u);
    EXPECT_EQ(l.flags, ModelC::kConvFlags);
    tpu_info info;
    ASSERT_EQ(tpurt_get_info(rt, &info), TPURT_OK);
    tpu_conv2d cmd{};
    cmd.flags = l.flags;
    cmd.batch = 2, cmd.h = 7, cmd.w = 6, cmd.c = 3, cmd.kh = 3, cmd.kw = 3, cmd.cout = 5;
    cmd.stride_h = 1, cmd.stride_w = 2, cmd.pad_top = 1, cmd.pad_left = 1, cmd.pad_right = 1;
    cmd.pool_h = 2, cmd.pool_w = 2, cmd.pool_stride_h = 2, cmd.pool_stride_w = 1;
    tpu_cost cost;
    ASSERT_EQ(tpu_conv2d_cost(&info, &cmd, &cost), TPU_OK);
    EXPECT_EQ(l.macs, cost.macs);
    EXPECT_EQ(l.bytes, cost.bytes);
    EXPECT_EQ(l.macs, 2ull * 6 * 3 * 5 * 27);
    EXPECT_EQ(l.submissions, 0u);
    ASSERT_EQ(tpurt_get_layer(rt, 1, &l), TPURT_OK);
    EXPECT_EQ(l.kind, TPUB_OP_GEMM);
    EXPECT_EQ(l.conv, nullptr);
    EXPECT_EQ(l.m * l.k * l.n, 2u * 30 * 4);
}

// Random inputs of model C for a batch.
std::vector<float> model_c_input(uint32_t batch)
{
    std::vector<float> x(2 * 3 * 7 * 6);
    std::mt19937 rng(batch);
    std::uniform_real_distribution<float> u(-4, 4);
    for (float &v : x)
        v = u(rng);
    return x;
}

// The package and the reference agree on the golden model (what the device runs below).
TEST(ConvLayers, ModelOnTheGoldenModel)
{
    ModelC m;
    golden_run::Runner run(m.p.pkg);
    const std::vector<float> x = model_c_input(0);
    const int64_t dims[] = {2, 3, 7, 6};
    hlo_array *in = hlo_array_new(HLO_F32, 4, dims);
    memcpy(in->data, x.data(), x.size() * sizeof(float));
    std::vector<hlo_array *> outs = run.run({in});
    hlo_array_free(in);
    ASSERT_EQ(outs.size(), 2u) << run.error();
    std::vector<float> want_p, want_y;
    m.reference(x, want_p, want_y);
    const float *p = (const float *)outs[0]->data, *y = (const float *)outs[1]->data;
    EXPECT_EQ(std::vector<float>(p, p + want_p.size()), want_p);
    EXPECT_EQ(std::vector<float>(y, y + want_y.size()), want_y);
    for (hlo_array *a : outs)
        hlo_array_free(a);
}

// Needs the RTL of ISA 1.1: until then the core refuses CONV2D's instructions.
TEST(ConvOnDevice, RunsMatchTheReference)
{
    ModelC m;
    Rt rt(m.p.pkg);
    ASSERT_EQ(rt.st, TPURT_OK) << rt.err;
    for (uint64_t batch = 0; batch < 2; batch++) {
        const std::vector<float> x = model_c_input((uint32_t)batch);
        std::vector<float> pooled(2 * 5 * 3 * 2, -1), y(2 * 4, -1);
        const void *in[] = {x.data()};
        void *out[] = {pooled.data(), y.data()};
        ASSERT_EQ(tpurt_run(rt, in, 1, out, 2), TPURT_OK) << tpurt_last_error(rt);
        std::vector<float> want_p, want_y;
        m.reference(x, want_p, want_y);
        EXPECT_EQ(pooled, want_p) << "batch " << batch;
        EXPECT_EQ(y, want_y) << "batch " << batch;
    }
    tpurt_layer l;
    ASSERT_EQ(tpurt_get_layer(rt, 0, &l), TPURT_OK);
    EXPECT_EQ(l.submissions, 2u);
    EXPECT_GT(l.cycles, 0u);
    EXPECT_GT(l.bound_cycles, 0.0);
    tpurt_stats s;
    ASSERT_EQ(tpurt_get_stats(rt, &s), TPURT_OK);
    EXPECT_EQ(s.submissions, 4u);
    EXPECT_EQ(s.verified, 4u);
}

} // namespace

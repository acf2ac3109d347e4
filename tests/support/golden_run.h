// golden_run.h - a package (package/tpub.h) run on the golden model through the firmware, with
// no device and no driver: the host program in the reference evaluator, each segment's inputs
// quantized into the arena as tpub.h defines it (permutations and gathers included), each operation
// one command stream (GEMM or CONV2D, buffer 0 the arena) expanded by fw_run and executed by the
// golden model, the outputs read back and dequantized (bf16 transfers rounded with sim/fp.h's
// tpusim_fp32_to_bf16, not the runtime's function). Written from docs/package.md and
// docs/command-stream.md, apart from the runtime: it checks what the compiler writes, today
// also where the RTL does not run CONV2D yet.
#ifndef TPU_TESTS_SUPPORT_GOLDEN_RUN_H
#define TPU_TESTS_SUPPORT_GOLDEN_RUN_H

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "hlo/hlo.h"
#include "package/tpub.h"
#include "sim/fp.h"
#include "tests/support/fw_test.h"

namespace golden_run
{

// The stream goes below the arena.
inline constexpr uint32_t kArena = 0x1000;

// A device element a gathering transfer writes as zero.
inline constexpr uint64_t kZero = UINT64_MAX;

// The host index of each device element of transfer x, in device order (kZero for a gather's
// zeros).
inline std::vector<uint64_t> host_order(const tpub_xfer &x)
{
    const uint64_t n = (uint64_t)x.rows * x.cols;
    std::vector<uint64_t> at(n);
    if (!x.rank) {
        for (uint64_t i = 0; i < n; i++)
            at[i] = !x.gather ? i : x.gather[i] == TPUB_GATHER_ZERO ? kZero : x.gather[i];
        return at;
    }
    uint64_t stride[TPUB_MAX_RANK], s = 1, dims[TPUB_MAX_RANK], idx[TPUB_MAX_RANK] = {0};
    for (int d = (int)x.rank - 1; d >= 0; d--) {
        stride[d] = s;
        s *= (uint64_t)x.dims[d];
    }
    for (uint32_t i = 0; i < x.rank; i++)
        dims[i] = (uint64_t)x.dims[x.perm[i]];
    for (uint64_t e = 0; e < n; e++) {
        uint64_t h = 0;
        for (uint32_t i = 0; i < x.rank; i++)
            h += idx[i] * stride[x.perm[i]];
        at[e] = h;
        for (int d = (int)x.rank - 1; d >= 0 && ++idx[d] == dims[d]; d--)
            idx[d] = 0;
    }
    return at;
}

inline std::vector<uint8_t> gemm_command(const tpub_gemm &g)
{
    std::vector<uint8_t> c(FW_GEMM_BYTES);
    const bool params = g.flags & (TPUB_GEMM_BIAS | TPUB_GEMM_OUT_INT8);
    fw_test::put32(c, 0, FW_CMD_GEMM | FW_GEMM_BYTES << 16);
    fw_test::put32(c, FW_GEMM_FLAGS, g.flags);
    fw_test::put32(c, FW_GEMM_M, g.m);
    fw_test::put32(c, FW_GEMM_K, g.k);
    fw_test::put32(c, FW_GEMM_N, g.n);
    fw_test::put32(c, FW_GEMM_A_OFF, (uint32_t)g.a_off);
    fw_test::put32(c, FW_GEMM_LDA, g.lda);
    fw_test::put32(c, FW_GEMM_B_OFF, (uint32_t)g.b_off);
    fw_test::put32(c, FW_GEMM_LDB, g.flags & TPUB_GEMM_B_TILED ? 0 : g.n);
    fw_test::put32(c, FW_GEMM_C_OFF, (uint32_t)g.c_off);
    fw_test::put32(c, FW_GEMM_LDC, g.ldc);
    fw_test::put32(c, FW_GEMM_P_OFF, params ? (uint32_t)g.p_off : 0);
    return c;
}

inline std::vector<uint8_t> conv_command(const tpub_conv &v)
{
    std::vector<uint8_t> c(FW_CONV_BYTES);
    const bool params = v.flags & (TPUB_GEMM_BIAS | TPUB_GEMM_OUT_INT8);
    fw_test::put32(c, 0, FW_CMD_CONV2D | FW_CONV_BYTES << 16);
    fw_test::put32(c, FW_CONV_FLAGS, v.flags);
    fw_test::put32(c, FW_CONV_BATCH, v.batch);
    fw_test::put32(c, FW_CONV_H, v.h);
    fw_test::put32(c, FW_CONV_W, v.w);
    fw_test::put32(c, FW_CONV_C, v.c);
    fw_test::put32(c, FW_CONV_KH, v.kh);
    fw_test::put32(c, FW_CONV_KW, v.kw);
    fw_test::put32(c, FW_CONV_COUT, v.cout);
    fw_test::put32(c, FW_CONV_STRIDE, v.stride_h | v.stride_w << 16);
    fw_test::put32(c, FW_CONV_PAD,
                   v.pad_top | v.pad_bottom << 8 | v.pad_left << 16 | v.pad_right << 24);
    fw_test::put32(c, FW_CONV_POOL,
                   v.pool_h | v.pool_w << 8 | v.pool_stride_h << 16 | v.pool_stride_w << 24);
    fw_test::put32(c, FW_CONV_IN_OFF, (uint32_t)v.in_off);
    fw_test::put32(c, FW_CONV_K_OFF, (uint32_t)v.k_off);
    fw_test::put32(c, FW_CONV_OUT_OFF, (uint32_t)v.out_off);
    fw_test::put32(c, FW_CONV_P_OFF, params ? (uint32_t)v.p_off : 0);
    return c;
}

// A package on the golden model; run() evaluates one batch.
class Runner
{
  public:
    explicit Runner(const tpub_package &p)
        : pkg_(p), hal_(tpusim_hwcfg{p.array_n, 16384, 4096, 4, 32, mem_size(p)})
    {
        if (p.const_bytes)
            memcpy(hal_.mem() + kArena, p.const_image, p.const_bytes);
    }

    // Outputs of the host program on inputs (one array per input signature); empty with the
    // reason in error() when anything fails.
    std::vector<hlo_array *> run(const std::vector<hlo_array *> &inputs)
    {
        error_.clear();
        hlo_error e;
        hlo_module *m = hlo_parse(pkg_.host_hlo, strlen(pkg_.host_hlo), "host", &e);
        std::vector<hlo_array *> result;
        if (!m || hlo_check(m, "host", &e)) {
            error_ = e.msg;
            hlo_module_free(m);
            return result;
        }
        const hlo_eval_hooks hooks = {this, hook, nullptr, nullptr};
        hlo_array **outs = nullptr;
        int n_outs = 0;
        if (hlo_eval_with(m, "host", inputs.data(), (int)inputs.size(), &hooks, &outs, &n_outs, &e))
            error_ = error_.empty() ? std::string(e.msg) : error_;
        else
            result.assign(outs, outs + n_outs);
        free(outs);
        hlo_module_free(m);
        return result;
    }
    const std::string &error() const { return error_; }
    // Operations run so far.
    uint64_t ops() const { return ops_; }

  private:
    static uint64_t mem_size(const tpub_package &p)
    {
        return (kArena + p.arena_bytes + 0xffff) & ~0xffffull;
    }

    static int hook(void *ctx, const hlo_instr *in, hlo_array *const *operands, int,
                    hlo_array **outs, int n_outs, hlo_error *err)
    {
        auto *r = static_cast<Runner *>(ctx);
        const int rc = r->segment(in, operands, outs, n_outs);
        if (rc)
            hlo_errorf(err, "%s", r->error_.c_str());
        return rc;
    }

    int segment(const hlo_instr *in, hlo_array *const *ops, hlo_array **outs, int n_outs)
    {
        const char *t = in->custom_call_target;
        const uint32_t k = (uint32_t)atoi(t + strlen("tpu.segment."));
        const tpub_segment &s = pkg_.segments[k];
        uint8_t *arena = hal_.mem() + kArena;
        for (uint32_t i = 0; i < s.n_inputs; i++) {
            const tpub_xfer &x = s.inputs[i];
            const std::vector<uint64_t> at = host_order(x);
            for (uint64_t e = 0; e < at.size() && x.dev_type == HLO_BF16; e++) {
                const float f = at[e] == kZero ? 0 : (float)hlo_array_get(ops[i], (int64_t)at[e]);
                uint32_t bits;
                memcpy(&bits, &f, 4);
                const uint16_t h = tpusim_fp32_to_bf16(bits);
                memcpy(arena + x.off + (e / x.cols * x.ld + e % x.cols) * 2, &h, 2);
            }
            for (uint64_t e = 0; e < at.size() && x.dev_type != HLO_BF16; e++) {
                uint8_t q;
                if (at[e] == kZero) {
                    q = 0;
                } else if (x.host_type == x.dev_type) {
                    q = ((const uint8_t *)ops[i]->data)[at[e]];
                } else {
                    const float f =
                        nearbyintf((float)hlo_array_get(ops[i], (int64_t)at[e]) / x.scale[0]);
                    const float lo = x.dev_type == HLO_U8 ? 0 : -128,
                                hi = x.dev_type == HLO_U8 ? 255 : 127;
                    const float v = std::isnan(f) ? 0 : f < lo ? lo : f > hi ? hi : f;
                    q = x.dev_type == HLO_U8 ? (uint8_t)v : (uint8_t)(int8_t)v;
                }
                arena[x.off + e / x.cols * x.ld + e % x.cols] = q;
            }
        }
        for (uint32_t i = 0; i < s.n_ops; i++) {
            const tpub_op &op = s.ops[i];
            const auto cmd =
                op.kind == TPUB_OP_CONV2D ? conv_command(op.conv) : gemm_command(op.gemm);
            const auto stream =
                fw_test::stream_bytes({{kArena, (uint32_t)pkg_.arena_bytes}}, {cmd});
            hal_.pushed.clear();
            hal_.cycles = 0;
            const fw_test::Outcome o = fw_test::run_stream(hal_, stream, 0);
            if (o.res.code != FW_OK || hal_.error) {
                error_ = "segment " + std::to_string(k) + " op " + std::to_string(i) +
                         ": firmware " + std::to_string(o.res.code) + " field " + o.res.field +
                         ", core error " + std::to_string(hal_.error);
                return -1;
            }
            ops_++;
        }
        for (int j = 0; j < n_outs; j++) {
            const tpub_xfer &x = s.outputs[j];
            const hlo_shape &sh = in->shape.type == HLO_TUPLE ? in->shape.tuple[j] : in->shape;
            hlo_array *a = outs[j] = hlo_array_new(sh.type, sh.rank, sh.dims);
            const std::vector<uint64_t> at = host_order(x);
            for (uint64_t e = 0; e < at.size(); e++) {
                const uint8_t *p =
                    arena + x.off + (e / x.cols * x.ld + e % x.cols) * hlo_type_size(x.dev_type);
                if (x.dev_type == HLO_F32 || x.dev_type == HLO_BF16) {
                    uint32_t bits = 0;
                    if (x.dev_type == HLO_F32)
                        memcpy(&bits, p, 4);
                    else
                        bits = tpusim_bf16_to_fp32((uint16_t)(p[0] | p[1] << 8));
                    float f;
                    memcpy(&f, &bits, 4);
                    hlo_array_set(a, (int64_t)at[e], f);
                    continue;
                }
                int32_t q;
                if (x.dev_type == HLO_S32)
                    memcpy(&q, p, 4);
                else
                    q = (int8_t)*p;
                if (hlo_is_float(x.host_type))
                    hlo_array_set(a, (int64_t)at[e],
                                  (float)q * x.scale[x.n_scale == 1 ? 0 : e % x.cols]);
                else if (x.dev_type == HLO_S32)
                    ((int32_t *)a->data)[at[e]] = q;
                else
                    ((int8_t *)a->data)[at[e]] = (int8_t)q;
            }
        }
        return 0;
    }

    const tpub_package &pkg_;
    fw_test::GoldenHal hal_;
    std::string error_;
    uint64_t ops_ = 0;
};

} // namespace golden_run

#endif

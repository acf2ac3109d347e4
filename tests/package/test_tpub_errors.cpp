// test_tpub_errors.cpp - the package format's refusals (package/tpub.h, docs/package.md): every
// validation rule refused with its message, by tpub_parse on a corrupted image and by tpub_save
// before anything is written, and what the rules allow at their limits; every truncation and every
// header-field bit flip refused; huge counts refused without huge allocations (under ASan one
// would abort); tpub_load's errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "package/tpub.h"
#include "tests/support/tpub_test.h"

namespace
{

using namespace tpub_test;

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
         "ARNA: const_bytes: 0x730 more than arena_bytes 0x600"},

        {"signature type", [](Model &m) { m.inputs[0].type = HLO_PRED; },
         "SIGS: input 0: type: pred not allowed (f32, bf16, f16, s8, u8, s32 or s64)"},
        {"signature type f64", [](Model &m) { m.outputs[2].type = HLO_F64; },
         "SIGS: output 2: type: f64 not allowed (f32, bf16, f16, s8, u8, s32 or s64)"},
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
        {"cols 0", [](Model &m) { m.seg1_out[0].cols = 0; }, "SEGS: segment 1 output 0: cols: 0"},
        {"ld < cols", [](Model &m) { m.seg1_in[0].ld = 9; },
         "SEGS: segment 1 input 0: ld: 9 < cols 10"},
        {"input dev_type", [](Model &m) { m.seg0_in[0].dev_type = HLO_S32; },
         "SEGS: segment 0 input 0: dev_type: s32 not allowed for an input (s8, u8 or bf16)"},
        {"output dev_type", [](Model &m) { m.seg1_out[0].dev_type = HLO_U8; },
         "SEGS: segment 1 output 0: dev_type: u8 not allowed for an output (s32, s8, f32 or "
         "bf16)"},
        {"f32 input", [](Model &m) { m.seg0_in[0].dev_type = HLO_F32; },
         "SEGS: segment 0 input 0: dev_type: f32 not allowed for an input (s8, u8 or bf16)"},
        {"bf16 input from u8", [](Model &m) { m.seg1_in[0].dev_type = HLO_BF16; },
         "SEGS: segment 1 input 0: host_type: u8 not allowed with dev_type bf16 (a float type)"},
        {"bf16 output to s8", [](Model &m) { m.seg0_out[1].dev_type = HLO_BF16; },
         "SEGS: segment 0 output 1: host_type: s8 not allowed with dev_type bf16 (a float type)"},
        {"bf16 input with a scale", [](Model &m) { m.seg0_in[0].dev_type = HLO_BF16; },
         "SEGS: segment 0 input 0: n_scale: 1 (a bf16 transfer has none)"},
        {"f32 output with scales", [](Model &m) { m.seg0_out[0].dev_type = HLO_F32; },
         "SEGS: segment 0 output 0: n_scale: 10 (a f32 transfer has none)"},
        {"dev_type code", [](Model &m) { m.seg0_in[0].dev_type = HLO_TOKEN; },
         "SEGS: segment 0 input 0: dev_type: unknown type code 4294967295"},
        {"host_type", [](Model &m) { m.seg0_in[0].host_type = HLO_S32; },
         "SEGS: segment 0 input 0: host_type: s32 not allowed with dev_type s8 (s8 or a float "
         "type)"},
        {"output host_type", [](Model &m) { m.seg0_out[1].host_type = HLO_U8; },
         "SEGS: segment 0 output 1: host_type: u8 not allowed with dev_type s8 (s8 or a float "
         "type)"},
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
         [](Model &m) { m.seg1_out[0].rows = m.seg1_out[0].ld = UINT32_MAX; },
         "SEGS: segment 1 output 0: extent 0xd00+0xffffffffffffffff outside the arena (0x2000 "
         "bytes)"},
        {"input into the constants", [](Model &m) { m.seg0_in[0].off = 0x72f; },
         "SEGS: segment 0 input 0: extent 0x72f+0x40 overlaps the constant image (0x730 "
         "bytes)"},

        {"m 0", [](Model &m) { m.seg0_ops[0].gemm.m = 0; }, "SEGS: segment 0 op 0: m: 0"},
        {"k 0", [](Model &m) { m.seg0_ops[1].gemm.k = 0; }, "SEGS: segment 0 op 1: k: 0"},
        {"n 0", [](Model &m) { m.seg1_ops[0].gemm.n = 0; }, "SEGS: segment 1 op 0: n: 0"},
        {"undefined flag", [](Model &m) { m.seg0_ops[1].gemm.flags |= 1u << 5 | 1u << 31; },
         "SEGS: segment 0 op 1: flags: undefined bits 0x80000020"},
        {"OUT_BF16 without BF16", [](Model &m) { m.seg1_ops[0].gemm.flags |= TPUB_GEMM_OUT_BF16; },
         "SEGS: segment 1 op 0: flags: OUT_BF16 without BF16"},
        {"BF16 with A_UNSIGNED", [](Model &m) { m.seg1_ops[0].gemm.flags |= TPUB_GEMM_BF16; },
         "SEGS: segment 1 op 0: flags: A_UNSIGNED or OUT_INT8 with BF16"},
        {"BF16 with OUT_INT8", [](Model &m) { m.seg0_ops[0].gemm.flags |= TPUB_GEMM_BF16; },
         "SEGS: segment 0 op 0: flags: A_UNSIGNED or OUT_INT8 with BF16"},
        {"BF16 B twice as large", // 0x80 bytes in int8 would fit
         [](Model &m) {
             m.seg1_ops[0].gemm.flags = TPUB_GEMM_BF16 | kTiled;
             m.seg1_ops[0].gemm.b_off = 0x1f80;
         },
         "SEGS: segment 1 op 0: b extent 0x1f80+0x100 outside the arena (0x2000 bytes)"},
        // Without B_TILED, B is k x n row-major: 40 bytes here.
        {"row-major B outside",
         [](Model &m) {
             m.seg1_ops[0].gemm.flags &= ~kTiled;
             m.seg1_ops[0].gemm.b_off = 0x1fe0;
         },
         "SEGS: segment 1 op 0: b extent 0x1fe0+0x28 outside the arena (0x2000 bytes)"},
        {"lda < k", [](Model &m) { m.seg0_ops[0].gemm.lda = 15; },
         "SEGS: segment 0 op 0: lda: 15 < k 16"},
        {"ldc < n", [](Model &m) { m.seg0_ops[1].gemm.ldc = 9; },
         "SEGS: segment 0 op 1: ldc: 9 < n 10"},
        {"ldc bytes beyond 32 bits", [](Model &m) { m.seg0_ops[1].gemm.ldc = 1u << 30; },
         "SEGS: segment 0 op 1: ldc: 1073741824 x 4 bytes does not fit 32 bits"},
        {"a outside", [](Model &m) { m.seg0_ops[0].gemm.a_off = 0x1fc1; },
         "SEGS: segment 0 op 0: a extent 0x1fc1+0x40 outside the arena (0x2000 bytes)"},
        {"a extent overflows",
         [](Model &m) { m.seg0_ops[0].gemm.m = m.seg0_ops[0].gemm.lda = UINT32_MAX; },
         "SEGS: segment 0 op 0: a extent 0x800+0xfffffffd00000012 outside the arena (0x2000 "
         "bytes)"},
        {"b outside", [](Model &m) { m.seg0_ops[0].gemm.b_off = 0x1e01; },
         "SEGS: segment 0 op 0: b extent 0x1e01+0x200 outside the arena (0x2000 bytes)"},
        {"b tiles for a larger array", [](Model &m) { m.pkg.array_n = 128; },
         "SEGS: segment 0 op 0: b extent 0x0+0x4000 outside the arena (0x2000 bytes)"},
        {"b tiles overflow", [](Model &m) { m.pkg.array_n = UINT32_MAX; },
         "SEGS: segment 0 op 0: b extent 0x0+0xfffffffe00000001 outside the arena (0x2000 "
         "bytes)"},
        // The brief's example: C of gemm 1 runs past the arena.
        {"c outside", [](Model &m) { m.seg0_ops[1].gemm.c_off = 0x1f50; },
         "SEGS: segment 0 op 1: c extent 0x1f50+0xb8 outside the arena (0x2000 bytes)"},
        {"int8 c outside",
         [](Model &m) {
             m.seg0_ops[0].gemm.c_off = 0x1f81;
             m.seg0_out[1].off = 0x1f80;
         },
         "SEGS: segment 0 op 0: c extent 0x1f81+0x80 outside the arena (0x2000 bytes)"},
        {"c into the constants", [](Model &m) { m.seg1_ops[0].gemm.c_off = 0x640; },
         "SEGS: segment 1 op 0: c extent 0x640+0x40 overlaps the constant image (0x730 "
         "bytes)"},
        {"params outside", [](Model &m) { m.seg0_ops[1].gemm.p_off = 0x1f89; },
         "SEGS: segment 0 op 1: params extent 0x1f89+0x78 outside the arena (0x2000 bytes)"},
        {"params offset without params", [](Model &m) { m.seg1_ops[0].gemm.p_off = 0x10; },
         "SEGS: segment 1 op 0: p_off: 0x10 without BIAS or OUT_INT8 (must be 0)"},
        {"c overlaps a", [](Model &m) { m.seg0_ops[1].gemm.c_off = 0x97c; },
         "SEGS: segment 0 op 1: c extent 0x97c+0xb8 overlaps a 0x900+0x80"},
        {"c overlaps b", [](Model &m) { m.seg0_ops[1].gemm.b_off = 0xab7; },
         "SEGS: segment 0 op 1: c extent 0xa00+0xb8 overlaps b 0xab7+0x200"},
        {"c overlaps params", [](Model &m) { m.seg0_ops[1].gemm.p_off = 0x990; },
         "SEGS: segment 0 op 1: c extent 0xa00+0xb8 overlaps params 0x990+0x78"},

        {"rank 1", [](Model &m) { m.seg2_in[0].rank = 1; },
         "SEGS: segment 2 input 0: rank: 1 (0, or a permutation's 2..8)"},
        {"rank 9", [](Model &m) { m.seg2_out[0].rank = 9; },
         "SEGS: segment 2 output 0: rank: 9 (0, or a permutation's 2..8)"},
        {"perm repeats", [](Model &m) { m.seg2_in[0].perm[1] = 0; },
         "SEGS: segment 2 input 0: perm[1]: 0 (a permutation of 0..3)"},
        {"perm out of range", [](Model &m) { m.seg2_out[0].perm[3] = 4; },
         "SEGS: segment 2 output 0: perm[3]: 4 (a permutation of 0..3)"},
        {"perm identity",
         [](Model &m) {
             for (uint32_t i = 0; i < 4; i++)
                 m.seg2_in[0].perm[i] = i;
         },
         "SEGS: segment 2 input 0: perm: the identity (written as rank 0)"},
        {"perm dims 0", [](Model &m) { m.seg2_in[0].dims[2] = 0; },
         "SEGS: segment 2 input 0: dims[2]: 0 (must be >= 1)"},
        {"perm dims elements", [](Model &m) { m.seg2_in[0].dims[3] = 5; },
         "SEGS: segment 2 input 0: dims: 150 elements, the device's 40 x 3"},

        {"op kind", [](Model &m) { m.seg2_ops[0].kind = (tpub_op_kind)3; },
         "SEGS: segment 2 op 0: kind: unknown 3 (1 GEMM, 2 CONV2D)"},
        {"conv flag undefined", [](Model &m) { m.seg2_ops[0].conv.flags |= kTiled; },
         "SEGS: segment 2 op 0: flags: undefined bits 0x10"},
        {"pool without int8", [](Model &m) { m.seg2_ops[0].conv.flags &= ~TPUB_GEMM_OUT_INT8; },
         "SEGS: segment 2 op 0: flags: POOL without OUT_INT8 (pooling needs the int8 output)"},
        {"bf16 pool without OUT_BF16",
         [](Model &m) {
             m.seg2_ops[0].conv.flags &= ~TPUB_GEMM_OUT_INT8;
             m.seg2_ops[0].conv.flags |= TPUB_GEMM_BF16;
         },
         "SEGS: segment 2 op 0: flags: POOL without OUT_BF16 (pooling needs the bf16 output)"},
        {"bf16 conv with OUT_INT8", [](Model &m) { m.seg2_ops[0].conv.flags |= TPUB_GEMM_BF16; },
         "SEGS: segment 2 op 0: flags: A_UNSIGNED or OUT_INT8 with BF16"},
        {"bf16 stride_w",
         [](Model &m) {
             m.seg2_ops[0].conv.flags ^= TPUB_GEMM_OUT_INT8 | TPUB_GEMM_BF16 | TPUB_GEMM_OUT_BF16;
             m.seg2_ops[0].conv.stride_w = 128;
         },
         "SEGS: segment 2 op 0: stride_w: 128 (must be 1..127)"},
        {"batch 0", [](Model &m) { m.seg2_ops[0].conv.batch = 0; },
         "SEGS: segment 2 op 0: batch: 0 (must be 1..4294967295)"},
        {"h 0", [](Model &m) { m.seg2_ops[0].conv.h = 0; },
         "SEGS: segment 2 op 0: h: 0 (must be 1..65535)"},
        {"w beyond the row fields", [](Model &m) { m.seg2_ops[0].conv.w = 65536; },
         "SEGS: segment 2 op 0: w: 65536 (must be 1..65535)"},
        {"c 0", [](Model &m) { m.seg2_ops[0].conv.c = 0; },
         "SEGS: segment 2 op 0: c: 0 (must be 1..65535)"},
        {"cout beyond the row fields", [](Model &m) { m.seg2_ops[0].conv.cout = 70000; },
         "SEGS: segment 2 op 0: cout: 70000 (must be 1..65535)"},
        {"stride 0", [](Model &m) { m.seg2_ops[0].conv.stride_h = 0; },
         "SEGS: segment 2 op 0: stride_h: 0 (must be 1..255)"},
        {"stride 256", [](Model &m) { m.seg2_ops[0].conv.stride_w = 256; },
         "SEGS: segment 2 op 0: stride_w: 256 (must be 1..255)"},
        {"pad 256", [](Model &m) { m.seg2_ops[0].conv.pad_right = 256; },
         "SEGS: segment 2 op 0: pad_right: 256 (must be 0..255)"},
        {"kh 0", [](Model &m) { m.seg2_ops[0].conv.kh = 0; },
         "SEGS: segment 2 op 0: kh: 0 (must be 1..6)"},
        {"kh past the padded input", [](Model &m) { m.seg2_ops[0].conv.kh = 7; },
         "SEGS: segment 2 op 0: kh: 7 (must be 1..6)"},
        {"kw past the input", [](Model &m) { m.seg2_ops[0].conv.kw = 5; },
         "SEGS: segment 2 op 0: kw: 5 (must be 1..4)"},
        {"pool 0", [](Model &m) { m.seg2_ops[0].conv.pool_h = 0; },
         "SEGS: segment 2 op 0: pool_h: 0 (must be 1..5)"},
        {"pool taller than the output", [](Model &m) { m.seg2_ops[0].conv.pool_h = 6; },
         "SEGS: segment 2 op 0: pool_h: 6 (must be 1..5)"},
        {"pool wider than the output", [](Model &m) { m.seg2_ops[0].conv.pool_w = 4; },
         "SEGS: segment 2 op 0: pool_w: 4 (must be 1..3)"},
        {"pool window beyond 15",
         [](Model &m) {
             m.seg2_ops[0].conv.h = 40;
             m.seg2_ops[0].conv.pool_h = 16;
         },
         "SEGS: segment 2 op 0: pool_h: 16 (must be 1..15)"},
        {"pool stride 0", [](Model &m) { m.seg2_ops[0].conv.pool_stride_w = 0; },
         "SEGS: segment 2 op 0: pool_stride_w: 0 (must be 1..255)"},
        {"pool fields without POOL", [](Model &m) { m.seg2_ops[0].conv.flags &= ~TPUB_CONV_POOL; },
         "SEGS: segment 2 op 0: pool: 2 x 2 stride 1 x 2 without POOL (must be 0)"},
        {"in outside", [](Model &m) { m.seg2_ops[0].conv.in_off = 0x1fa0; },
         "SEGS: segment 2 op 0: in extent 0x1fa0+0x78 outside the arena (0x2000 bytes)"},
        {"in extent overflows", [](Model &m) { m.seg2_ops[0].conv.batch = UINT32_MAX; },
         "SEGS: segment 2 op 0: in extent 0xe00+0x3bffffffc4 outside the arena (0x2000 bytes)"},
        {"kernel outside", [](Model &m) { m.seg2_ops[0].conv.k_off = 0x1f90; },
         "SEGS: segment 2 op 0: kernel extent 0x1f90+0x80 outside the arena (0x2000 bytes)"},
        {"kernel tiles without packed runs",
         [](Model &m) {
             m.seg2_ops[0].conv.pad_left = 1; // 4 tiles of 64 bytes
             m.seg2_ops[0].conv.k_off = 0x1f40;
         },
         "SEGS: segment 2 op 0: kernel extent 0x1f40+0x100 outside the arena (0x2000 bytes)"},
        {"out outside", [](Model &m) { m.seg2_ops[0].conv.out_off = 0x1fe1; },
         "SEGS: segment 2 op 0: out extent 0x1fe1+0x20 outside the arena (0x2000 bytes)"},
        {"int32 out outside",
         [](Model &m) {
             tpub_conv &c = m.seg2_ops[0].conv;
             c.flags = TPUB_GEMM_BIAS;
             c.pool_h = c.pool_w = c.pool_stride_h = c.pool_stride_w = 0;
             c.out_off = 0x1f00; // 2 x 5 x 3 x 4 int32
             m.seg2_out[0].off = 0x1f00;
             m.seg2_out[0].dev_type = HLO_S32;
             m.seg2_out[0].host_type = HLO_S32;
             m.seg2_out[0].n_scale = 0;
         },
         "SEGS: segment 2 op 0: out extent 0x1f00+0x1e0 outside the arena (0x2000 bytes)"},
        {"out into the constants", [](Model &m) { m.seg2_ops[0].conv.out_off = 0x700; },
         "SEGS: segment 2 op 0: out extent 0x700+0x20 overlaps the constant image (0x730 "
         "bytes)"},
        {"params outside", [](Model &m) { m.seg2_ops[0].conv.p_off = 0x1fd1; },
         "SEGS: segment 2 op 0: params extent 0x1fd1+0x30 outside the arena (0x2000 bytes)"},
        {"params offset without params",
         [](Model &m) {
             tpub_conv &c = m.seg2_ops[0].conv;
             c.flags = TPUB_GEMM_RELU;
             c.pool_h = c.pool_w = c.pool_stride_h = c.pool_stride_w = 0;
         },
         "SEGS: segment 2 op 0: p_off: 0x700 without BIAS or OUT_INT8 (must be 0)"},
        {"out overlaps in", [](Model &m) { m.seg2_ops[0].conv.out_off = 0xe70; },
         "SEGS: segment 2 op 0: out extent 0xe70+0x20 overlaps in 0xe00+0x78"},
        {"out overlaps kernel", [](Model &m) { m.seg2_ops[0].conv.k_off = 0xf10; },
         "SEGS: segment 2 op 0: out extent 0xf00+0x20 overlaps kernel 0xf10+0x80"},
        {"out overlaps params", [](Model &m) { m.seg2_ops[0].conv.p_off = 0xf1f; },
         "SEGS: segment 2 op 0: out extent 0xf00+0x20 overlaps params 0xf1f+0x30"},

        {"empty host program", [](Model &m) { m.pkg.host_hlo = m.str(""); }, "HOST: text: empty"},
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
        hlo_error err{};
        EXPECT_EQ(tpub_save(&m.pkg, path.c_str(), &err), -1);
        EXPECT_STREQ(err.msg, rule.error);
        EXPECT_TRUE(listing(dir).empty());
    }
}

// bf16 transfers and flags load in a version 3 package, and are refused in a version 2 one (what
// int8-only tpucs wrote, which still loads).
TEST(TpubRules, Bf16NeedsVersion3)
{
    Model t;
    t.seg0_in[0].dev_type = HLO_BF16;
    t.seg0_in[0].n_scale = 0;
    Bytes b = encode(t.pkg);
    EXPECT_EQ(parse_error(b), "");
    b = encode_as(t.pkg, 2);
    EXPECT_EQ(parse_error(b), "SEGS: segment 0 input 0: dev_type: bf16 in a version 2 package "
                              "(bf16 needs version 3)");
    Model f;
    f.seg1_ops[0].gemm.flags = TPUB_GEMM_BF16 | TPUB_GEMM_OUT_BF16 | kTiled;
    b = encode(f.pkg);
    EXPECT_EQ(parse_error(b), "");
    b = encode_as(f.pkg, 2);
    EXPECT_EQ(parse_error(b), "SEGS: segment 1 op 0: flags: BF16 or OUT_BF16 in a version 2 "
                              "package (bf16 needs version 3)");
    Model i; // one image per package: int8 alone is version 2
    b = encode_as(i.pkg, 3);
    EXPECT_EQ(parse_error(b),
              "header: version: 3 for a package without bf16, 16-bit float signatures or gathers "
              "(written as 2)");
    Model s; // a bf16 model input: version 3
    s.pkg.inputs[0].type = HLO_BF16;
    EXPECT_EQ(parse_error(encode(s.pkg)), "");
    EXPECT_EQ(parse_error(encode_as(s.pkg, 2)),
              "SIGS: input 0: type: bf16 in a version 2 package (16-bit floats need version 3)");
}

// What the rules allow at their limits.
TEST(TpubRules, EdgesAccepted)
{
    const std::vector<std::function<void(Model &)>> ok = {
        [](Model &m) { m.seg0_ops[0].gemm.b_off = 0x1e00; }, // B ends at the arena's end
        [](Model &m) { m.seg0_out[0].off = 0x1f48; },        // so does an output
        [](Model &m) { m.seg0_in[0].off = 0x730; },          // an input right after the constants
        [](Model &m) { m.seg0_out[1].off = 0x100; },         // outputs may read the constants
        [](Model &m) { m.seg0_ops[1].gemm.c_off = 0x980; },  // C right after A
        [](Model &m) { m.seg0_ops[1].gemm.p_off = 0xab8; },  // params right after C
        [](Model &m) {
            m.seg1_out[0].n_scale = 4;
            m.seg1_out[0].scale = m.out_scales.data();
        },
        [](Model &m) {
            m.out_scales[2] = 0;
            m.out_scales[3] = -1;
        }, // finite output scales
        [](Model &m) {
            m.seg0_ops[1].gemm.ldc = UINT32_MAX / 4;
            m.seg0_ops[1].gemm.m = 1;
        },
        [](Model &m) {
            m.inputs[0].dims[0] = 1 << 16;
            m.inputs[0].dims[1] = 1 << 15;
        },
        [](Model &m) {
            m.inputs[0].dims[0] = INT64_MAX;
            m.inputs[0].dims[1] = 0;
        },
        [](Model &m) { m.outputs[2].rank = TPUB_MAX_RANK; },
        [](Model &m) { m.pkg.arena_bytes = UINT32_MAX; },
        [](Model &m) {
            m.pkg.const_bytes = 0;
            m.pkg.report = nullptr;
        },
        [](Model &m) { m.pkg.array_n = 1; },
        [](Model &m) { m.seg2_ops[0].conv.out_off = 0xe78; },  // out right after in
        [](Model &m) { m.seg2_ops[0].conv.k_off = 0x1f80; },   // the kernel ends the arena
        [](Model &m) { m.seg2_ops[0].conv.out_off = 0x1fe0; }, // so does the output
        [](Model &m) {
            m.seg2_ops[0].conv.pool_h = 5;
            m.seg2_ops[0].conv.pool_w = 3;
        },
        [](Model &m) {
            tpub_conv &c = m.seg2_ops[0].conv; // a kernel as large as the padded input
            c.kh = 6;
            c.kw = 4;
            c.pool_h = c.pool_w = 1;
        },
        [](Model &m) {
            tpub_conv &c = m.seg2_ops[0].conv; // the largest strides and pads
            c.stride_h = c.stride_w = c.pool_stride_h = c.pool_stride_w = 255;
            c.pad_top = c.pad_bottom = 255;
            c.pool_h = c.pool_w = 1;
        },
        [](Model &m) { // any permutation
            m.seg2_in[0].perm[1] = 3;
            m.seg2_in[0].perm[2] = 2;
            m.seg2_in[0].perm[3] = 1;
        },
        [](Model &m) { m.seg2_out[0].rank = 0; }, // the elements in order
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

    with(
        "magic", [](Bytes &b) { b[3] = 'C'; }, "header: magic: not \"TPUB\"");
    with(
        "version", [](Bytes &b) { patch(b, 4, 4, 4); },
        "header: version: 4 (this reader reads 2 and 3)");
    with(
        "version 1", [](Bytes &b) { patch(b, 4, 1, 4); },
        "header: version: 1, a package of an older tpuc (this reader reads 2 and 3): compile the "
        "model again");
    with(
        "version 0", [](Bytes &b) { patch(b, 4, 0, 4); },
        "header: version: 0 (this reader reads 2 and 3)");
    with(
        "fewer sections", [](Bytes &b) { patch(b, 8, 4, 4); },
        "header: sections: 4 (version 2 has 5)");
    with(
        "more sections", [](Bytes &b) { patch(b, 8, 6, 4); },
        "header: sections: 6 (version 2 has 5)");
    with(
        "header reserved", [](Bytes &b) { patch(b, 12, 1, 4); },
        "header: reserved: 0x1 (must be 0)");
    cases.push_back({"empty", {}, "header: truncated (0 bytes, need 16)"});
    cases.push_back({"short header", Bytes(good.begin(), good.begin() + 15),
                     "header: truncated (15 bytes, need 16)"});

    with(
        "unknown tag", [&](Bytes &b) { memcpy(&b[segs_at], "ABCD", 4); },
        "section 2: tag: unknown 0x44434241 ('SEGS' expected)");
    with_sections(
        "out of order", [](std::vector<Section> &s) { std::swap(s[0], s[1]); },
        "section 0: tag: 'SIGS' out of order ('ARNA' expected)");
    with_sections(
        "repeated", [](std::vector<Section> &s) { s[1] = s[0]; },
        "section 1: tag: 'ARNA' out of order ('SIGS' expected)");
    with_sections(
        "missing", [](std::vector<Section> &s) { s.pop_back(); },
        "section 4: header: truncated (0 bytes left, need 16)");
    with(
        "section reserved", [&](Bytes &b) { patch(b, sigs_at + 4, 7, 4); },
        "SIGS: reserved: 0x7 (must be 0)");
    with(
        "section past the end", [&](Bytes &b) { patch(b, segs_at + 8, 1ull << 40, 8); },
        "SEGS: bytes: 0x10000000000 past the end of the file (0x" +
            [&] {
                char h[32];
                snprintf(h, sizeof h, "%zx", good.size() - segs_at - 16);
                return std::string(h);
            }() +
            " bytes left)");
    with_sections(
        "trailing bytes", [](std::vector<Section> &s) { le(s[1].payload, 0, 4); },
        "SIGS: 4 bytes after the last field");
    with_sections(
        "trailing text", [](std::vector<Section> &s) { s[0].payload.push_back(0); },
        "ARNA: 1 bytes after the last field");
    with_sections(
        "image short", [](std::vector<Section> &s) { s[0].payload.pop_back(); },
        "ARNA: const_image: truncated (1839 bytes left, need 1840)");
    with(
        "after the last section", [](Bytes &b) { b.resize(b.size() + 8); },
        "file: 8 bytes after the last section");

    // Padding: SIGS and REPT must have some for these two.
    const size_t sigs_pad = padding(secs[1].payload.size());
    const size_t rept_pad = padding(secs[4].payload.size());
    ASSERT_NE(sigs_pad, 0u);
    ASSERT_NE(rept_pad, 0u);
    with(
        "padding", [&](Bytes &b) { b[segs_at - 1] = 1; },
        "SIGS: padding: byte " + std::to_string(sigs_pad - 1) + " not zero");
    with(
        "padding cut", [](Bytes &b) { b.pop_back(); },
        "REPT: padding: truncated (" + std::to_string(rept_pad - 1) + " bytes left, need " +
            std::to_string(rept_pad) + ")");

    with_sections(
        "arena reserved", [](std::vector<Section> &s) { patch(s[0].payload, 4, 1, 4); },
        "ARNA: reserved: 0x1 (must be 0)");
    with_sections(
        "type code past the table",
        [&](std::vector<Section> &s) {
            // input 0 of SIGS: counts (8), name "x" (4 + 1), then the type
            patch(s[1].payload, 13, 13, 4);
        },
        "SIGS: input 0: type: unknown type code 13");
    with_sections(
        "name past the section",
        [](std::vector<Section> &s) { patch(s[1].payload, 8, 0xffffffff, 4); },
        "SIGS: input 0: name: truncated (" + std::to_string(secs[1].payload.size() - 12) +
            " bytes left, need " + "4294967295)");
    // NUL bytes in strings: the first occurrence of each marker from its section on.
    const size_t host_at = section_at(secs, 3), rept_at = section_at(secs, 4);
    const size_t per_tensor = (size_t)(strstr(m.pkg.report, "per-tensor") - m.pkg.report);
    for (auto [what, from, marker, at, error] :
         std::vector<std::tuple<const char *, size_t, std::string, size_t, std::string>>{
             {"NUL in a signature name", sigs_at, "count", 2,
              "SIGS: output 3: name: NUL byte at offset 2"},
             {"NUL in a gemm name", segs_at, "dot.7", 3,
              "SEGS: segment 0 op 1: name: NUL byte at offset 3"},
             {"NUL in fused", segs_at, "maximum.5", 0,
              "SEGS: segment 0 op 0: fused: NUL byte at offset 6"},
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
    with_sections(
        "huge input count", [](std::vector<Section> &s) { patch(s[1].payload, 0, 0xffffffff, 4); },
        "SIGS: inputs: 4294967295 claimed, at most " +
            std::to_string((secs[1].payload.size() - 4) / 13) + " fit in the " +
            std::to_string(secs[1].payload.size() - 4) + " bytes left");
    with_sections(
        "huge output count", [](std::vector<Section> &s) { patch(s[1].payload, 4, 0x80000000, 4); },
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
        "SEGS: segment 0: outputs: 2147483647 claimed, at most 2 fit in the 104 bytes left");
    segs_payload(
        [](Bytes &b) {
            le(b, 1, 4);
            le(b, 0, 4);
            le(b, 0, 4);
            le(b, 0xfffffff0, 4);
        },
        "huge op count",
        "SEGS: segment 0: ops: 4294967280 claimed, at most 0 fit in the 0 bytes left");
    segs_payload(
        [&](Bytes &b) {
            le(b, 1, 4);
            le(b, 1, 4);
            le(b, 0, 4);
            le(b, 0, 4);
            tpub_xfer x = m.seg0_in[0];
            x.n_scale = 0;
            put_xfer(b, x, 2);
            patch(b, b.size() - 8, 0x40000000, 4); // n_scale, before rank
        },
        "huge scale count",
        "SEGS: segment 0 input 0: n_scale: 1073741824 claimed, at most 1 fit in the 4 bytes "
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

TEST_F(Tpub, LoadErrors)
{
    tpub_package p;
    hlo_error err{};
    EXPECT_EQ(tpub_load((dir + "/absent.tpub").c_str(), &p, &err), -1);
    EXPECT_STREQ(err.msg, "cannot open: No such file or directory");
    EXPECT_TRUE(is_empty(p));
    EXPECT_EQ(tpub_load(dir.c_str(), &p, &err), -1);
    EXPECT_STREQ(err.msg, "cannot read: is a directory");
    EXPECT_TRUE(is_empty(p));

    // A file cut short gives the parser's message.
    Model m;
    Bytes b = encode(m.pkg);
    b.resize(b.size() - 9);
    const std::string path = dir + "/cut.tpub";
    std::ofstream(path, std::ios::binary).write((const char *)b.data(), (std::streamsize)b.size());
    EXPECT_EQ(tpub_load(path.c_str(), &p, &err), -1);
    EXPECT_EQ(std::string(err.msg), parse_error(b));
    EXPECT_EQ(err.line, 0); // a package has no lines: the message says where
    EXPECT_EQ(err.col, 0);
    EXPECT_TRUE(is_empty(p));

    // No error struct at all is allowed.
    EXPECT_EQ(tpub_parse(b.data(), b.size(), &p, nullptr), -1);
}

} // namespace

// A gathering input (version 3): loads with its indices and zeros, is listed, and refused on an
// output, with a permutation, or with an index beyond the host array.
TEST(TpubRules, GathersNeedAnInputAndIndicesInTheHostArray)
{
    Model t;
    std::vector<uint32_t> g(64);
    for (uint32_t i = 0; i < 64; i++)
        g[i] = i % 9 == 4 ? TPUB_GATHER_ZERO : 63 - i; // reversed, with zeros
    t.seg0_in[0].gather = g.data();
    t.seg0_in[0].host_elements = 64;
    Bytes b = encode(t.pkg);
    EXPECT_EQ(b[4], 3); // version
    tpub_package p{};
    hlo_error e{};
    ASSERT_EQ(tpub_parse(b.data(), b.size(), &p, &e), 0) << e.msg;
    ASSERT_NE(p.segments[0].inputs[0].gather, nullptr);
    EXPECT_EQ(p.segments[0].inputs[0].host_elements, 64u);
    EXPECT_TRUE(std::equal(g.begin(), g.end(), p.segments[0].inputs[0].gather));
    char *text = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ASSERT_EQ(tpub_dump(&p, f), 0);
    fclose(f);
    EXPECT_NE(std::string(text).find("gathered from 64 host elements, 7 zeros"), std::string::npos)
        << text;
    free(text);
    tpub_free(&p);

    g[5] = 64;
    EXPECT_EQ(parse_error(encode(t.pkg)),
              "SEGS: segment 0 input 0: gather[5]: 64 (host_elements 64)");
    Model o; // h: 4 x 32, an output
    std::vector<uint32_t> g128(128, 0);
    o.seg0_out[1].gather = g128.data();
    o.seg0_out[1].host_elements = 128;
    EXPECT_EQ(parse_error(encode(o.pkg)), "SEGS: segment 0 output 1: n_gather: 128 (an output does "
                                          "not gather)");
    Model r;
    std::vector<uint32_t> g120(120, 0);
    r.seg2_in[0].gather = g120.data();
    r.seg2_in[0].host_elements = 120;
    EXPECT_EQ(parse_error(encode(r.pkg)),
              "SEGS: segment 2 input 0: n_gather: 120 with a permutation (rank 4)");
}

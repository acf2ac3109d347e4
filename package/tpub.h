/* tpub.h - the compiled package (.tpub): what tpuc writes and `tpusim run` executes.
 *
 * A package is a host program plus device segments. The host program is an HLO module (text, as
 * hlo_parse reads it) computing the model's outputs from its inputs; the ops it keeps run on the
 * host through the reference evaluator. Each device segment appears in it as a
 *   custom-call(operands...), custom_call_target="tpu.segment.K"
 * whose operands are the segment's inputs and whose result (one array, or a tuple of arrays) its
 * outputs. A segment quantizes its inputs on the host, runs its operations (GEMMs and CONV2Ds,
 * one submission each, in order) on the device and dequantizes its outputs.
 *
 * Device memory is one arena of arena_bytes bytes allocated by the runtime; every offset below is
 * from its start. arena[0, const_bytes) is the constant image (weights and kernels in tile order,
 * their parameters), written once when the package is loaded; the rest holds activations, whose
 * buffers the compiler reuses once dead.
 *
 * File format (little-endian, docs/package.md): "TPUB", u32 version, u32 section count, u32 0,
 * then sections, each u32 tag, u32 0, u64 payload bytes, payload padded to 8 bytes. tpub_load
 * validates everything (bounds, counts, offsets inside the arena, operand extents, type codes)
 * and names the section and field of the first problem. */
#ifndef TPU_PACKAGE_TPUB_H
#define TPU_PACKAGE_TPUB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "firmware/firmware.h"
#include "hlo/hlo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version tpuc writes when a package uses bf16 (its transfers and GEMM flags) or gathers
 * (tpub_xfer); a package without either is written as version 2, byte for byte what older
 * tpucs wrote, and both load. */
#define TPUB_VERSION 3u
#define TPUB_VERSION_INT8 2u
#define TPUB_MAX_RANK 8
/* The largest package file tpub_load reads (streams: TPUIO_STREAM_MAX, io/tpuio.h). */
#define TPUB_MAX_FILE ((uint64_t)4 << 30)

/* A model input or output: name, element type (tpub_sig_type) and dims. */
typedef struct {
    char *name;
    hlo_type type;
    int rank;
    int64_t dims[TPUB_MAX_RANK];
} tpub_sig;
/* The element types of model inputs and outputs: f32, bf16 and f16 (version 3), s8, u8, s32 and
 * s64 (PyTorch's indices), what .npy files carry. */
bool tpub_sig_type(hlo_type t);

/* A host array crossing to or from the device, viewed on the device as rows x cols row-major
 * at arena offset off with a row pitch of ld elements of dev_type.
 * The device's elements are the host array's in order (rank 0; for rank 1, rows = 1), or, with a
 * permutation (rank >= 2), the host array of dims[0..rank) transposed: device dimension i is host
 * dimension perm[i], so element (i_0, ..., i_{r-1}) of the device's row-major array of dims
 * (dims[perm[0]], ..., dims[perm[r-1]]) is the host element whose index in dimension perm[k] is
 * i_k (an NCHW host array written as NHWC: perm {0, 2, 3, 1}). rows x cols is that array's
 * element count; the identity permutation is written as rank 0.
 * Inputs: dev_type HLO_S8 or HLO_U8. host_type equal to dev_type is copied as is; a float type
 *   (f16, bf16, f32, f64) is quantized with the one scale: q = clamp(nearbyintf((float)x /
 *   scale[0]), type range) (round half to even, NaN gives 0).
 *   Or dev_type HLO_BF16 (version 3) from a float host_type, no scale: the host value rounded to
 *   nearest even (hlo_bf16_bits, hlo/hlo.h).
 * Outputs: dev_type HLO_S32 or HLO_S8. host_type equal to dev_type is copied as is; a float type
 *   is dequantized per device column: y = (float)q * scale[c] (n_scale = cols) or with one scale
 *   (n_scale = 1), in f32 and then rounded to the host type.
 *   Or dev_type HLO_F32 or HLO_BF16 (version 3) to a float host_type, no scale: the device's
 *   value, rounded to the host type (exact for f32 and f64). */
typedef struct {
    uint64_t off;
    uint32_t rows, cols, ld;
    hlo_type dev_type, host_type;
    uint32_t n_scale; /* 0 for a copy */
    float *scale;
    uint32_t rank; /* 0, or the permutation's: 2..TPUB_MAX_RANK */
    uint32_t perm[TPUB_MAX_RANK];
    int64_t dims[TPUB_MAX_RANK]; /* the host array's, with a permutation */
    /* An input may gather instead (version 3, rank 0): device element i of rows x cols is host
     * element gather[i] of the host array's host_elements, or a zero where it is
     * TPUB_GATHER_ZERO (a kernel laid out as CONV2D reads it, an input dilated). */
    uint32_t *gather; /* NULL, or rows x cols indices */
    uint64_t host_elements;
} tpub_xfer;
#define TPUB_GATHER_ZERO UINT32_MAX

/* GEMM and CONV2D flags: the command stream's (docs/command-stream.md), whose values
 * firmware/firmware.h defines. */
enum tpub_gemm_flag {
    TPUB_GEMM_BIAS = FW_GEMM_BIAS,
    TPUB_GEMM_RELU = FW_GEMM_RELU,
    TPUB_GEMM_OUT_INT8 = FW_GEMM_OUT_INT8,
    TPUB_GEMM_A_UNSIGNED = FW_GEMM_A_UNSIGNED,
    TPUB_GEMM_B_TILED = FW_GEMM_B_TILED,
    /* Version 3: A and B bf16, fp32 bias alone as parameters, C fp32 or (OUT_BF16) bf16. */
    TPUB_GEMM_BF16 = FW_GEMM_BF16,
    TPUB_GEMM_OUT_BF16 = FW_GEMM_OUT_BF16,
    TPUB_GEMM_ALL = FW_GEMM_FLAGS_ALL,
};
enum tpub_conv_flag {
    /* max pooling after the activation; needs OUT_INT8 (with BF16: OUT_BF16) */
    TPUB_CONV_POOL = FW_CONV_POOLING,
    /* with the GEMM's BIAS, RELU, OUT_INT8, A_UNSIGNED, BF16 and OUT_BF16 (their rules too); a
     * kernel is always in tile order */
    TPUB_CONV_ALL = FW_CONV_FLAGS_ALL,
};

/* One device GEMM (docs/command-stream.md): C = act(A . B (+ bias)). B is in tile order for the
 * package's array size with TPUB_GEMM_B_TILED (weights in the constant image), else k x n
 * row-major (ldb = n: a B the host writes at run time). With BF16 every element of A and B is 2
 * bytes (offsets in bytes, lda and ldc in elements), the parameters are fp32 bias[n]. */
typedef struct {
    uint32_t m, k, n, flags;
    uint64_t a_off, b_off, c_off, p_off; /* p_off only with BIAS or OUT_INT8 */
    uint32_t lda, ldc;
    char *name;  /* the HLO dot it implements */
    char *fused; /* the HLO ops folded into its epilogue, comma-separated ("" if none) */
} tpub_gemm;

/* One device convolution (the CONV2D command, firmware/firmware.h): NHWC input [batch, h, w, c]
 * (int8, uint8 with A_UNSIGNED, bf16 with BF16) zero-padded, a kernel of cout output channels in
 * the tile order of the package's array size (firmware.h; tpub_conv_k_tiles gives its K tiles),
 * then bias, ReLU, requantization (OUT_INT8) and max pooling (POOL) as flagged; the output NHWC
 * [batch, oh, ow, cout] (tpub_conv_out_size), int8 with OUT_INT8, else int32 (with BF16: fp32,
 * or bf16 with OUT_BF16). */
typedef struct {
    uint32_t flags, batch, h, w, c, kh, kw, cout;
    uint32_t stride_h, stride_w;                           /* 1..255 */
    uint32_t pad_top, pad_bottom, pad_left, pad_right;     /* 0..255 */
    uint32_t pool_h, pool_w, pool_stride_h, pool_stride_w; /* 1..15, 1..255 with POOL, else 0 */
    uint64_t in_off, k_off, out_off, p_off;                /* p_off only with BIAS or OUT_INT8 */
    char *name;                                            /* the HLO convolution it implements */
    char *fused; /* the HLO ops folded into it, comma-separated ("" if none) */
} tpub_conv;

typedef enum { TPUB_OP_GEMM = 1, TPUB_OP_CONV2D = 2 } tpub_op_kind;

/* A segment's operation: kind says which member holds it. */
typedef struct {
    tpub_op_kind kind;
    union {
        tpub_gemm gemm;
        tpub_conv conv;
    };
} tpub_op;

/* The convolution's geometry as the CONV2D command computes it (firmware/firmware.h's rules):
 * the output size, pooled with POOL, 0 x 0 when the kernel or the pooling window does not fit;
 * whether the kernel is in packed-run order on an array of size n; its K tiles (the kernel holds
 * K tiles x ceil(cout / n) tiles of n x n bytes). */
void tpub_conv_out_size(const tpub_conv *v, uint32_t *oh, uint32_t *ow);
int tpub_conv_packed(const tpub_conv *v, uint32_t n);
uint64_t tpub_conv_k_tiles(const tpub_conv *v, uint32_t n);

typedef struct {
    uint32_t n_inputs, n_outputs, n_ops;
    tpub_xfer *inputs, *outputs;
    tpub_op *ops; /* run in this order, one submission each */
} tpub_segment;

typedef struct {
    uint32_t array_n;     /* the array size the weights are tiled for */
    uint64_t arena_bytes; /* device memory the package needs */
    uint64_t const_bytes; /* the constant image: arena[0, const_bytes) */
    uint8_t *const_image;
    char *host_hlo; /* the host program (NUL-terminated HLO text) */
    uint32_t n_inputs, n_outputs;
    tpub_sig *inputs, *outputs; /* in the host program's parameter / result order */
    uint32_t n_segments;
    tpub_segment *segments;
    char *report; /* the compiler's report (placement, quantization): text */
} tpub_package;

/* Errors (hlo_error, hlo.h) name the section, record and field of the image, or what failed on
 * the file, never the path (the caller prefixes it). */
/* Writes pkg to path atomically (a temporary file renamed into place: no partial file on
 * failure). Returns 0, or -1 with *err. */
int tpub_save(const tpub_package *pkg, const char *path, hlo_error *err);
/* Parses a package image. Returns 0, or -1 with *err (out is then empty). */
int tpub_parse(const void *buf, size_t len, tpub_package *out, hlo_error *err);
int tpub_load(const char *path, tpub_package *out, hlo_error *err);
void tpub_free(tpub_package *pkg); /* frees everything reachable; pkg may be reused */

/* Readable disassembly: signatures, arena map, segments with their transfers and operations
 * (tiles per GEMM and kernel), the host program and the report. Returns 0, or -1 if writing
 * failed. */
int tpub_dump(const tpub_package *pkg, FILE *out);

#ifdef __cplusplus
}
#endif
#endif

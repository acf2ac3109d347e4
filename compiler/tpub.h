/* tpub.h - the compiled package (.tpub): what tpuc writes and `tpusim run` executes.
 *
 * A package is a host program plus device segments. The host program is an HLO module (text, as
 * hlo_parse reads it) computing the model's outputs from its inputs; the ops it keeps run on the
 * host through the reference evaluator. Each device segment appears in it as a
 *   custom-call(operands...), custom_call_target="tpu.segment.K"
 * whose operands are the segment's inputs and whose result (one array, or a tuple of arrays) its
 * outputs. A segment quantizes its inputs on the host, runs its GEMMs on the device (one
 * submission each, in order) and dequantizes its outputs.
 *
 * Device memory is one arena of arena_bytes bytes allocated by the runtime; every offset below is
 * from its start. arena[0, const_bytes) is the constant image (weights in tile order, GEMM
 * parameters), written once when the package is loaded; the rest holds activations, whose
 * buffers the compiler reuses once dead.
 *
 * File format (little-endian): "TPUB", u32 version, u32 section count, u32 0, then sections,
 * each u32 tag, u32 0, u64 payload bytes, payload padded to 8 bytes. tpub_load validates
 * everything (bounds, counts, offsets inside the arena, operand extents, type codes) and names
 * the section and field of the first problem. */
#ifndef TPUC_TPUB_H
#define TPUC_TPUB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "compiler/hlo.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TPUB_VERSION 1u
#define TPUB_MAX_RANK 8
/* The largest package file tpub_load reads (streams: TPUIO_STREAM_MAX, io/tpuio.h). */
#define TPUB_MAX_FILE ((uint64_t)4 << 30)

/* A model input or output: name, element type (HLO_F32, HLO_S8, HLO_U8 or HLO_S32) and dims. */
typedef struct {
    char *name;
    hlo_type type;
    int rank;
    int64_t dims[TPUB_MAX_RANK];
} tpub_sig;

/* A host array crossing to or from the device, viewed as rows x cols row-major (its elements in
 * order; for rank 1, rows = 1). On the device it sits at arena offset off with a row pitch of ld
 * elements of dev_type.
 * Inputs: dev_type HLO_S8 or HLO_U8. host_type equal to dev_type is copied as is; HLO_F32 is
 *   quantized with the one scale: q = clamp(nearbyintf(x / scale[0]), type range) (round half
 *   to even, NaN gives 0).
 * Outputs: dev_type HLO_S32 or HLO_S8. host_type equal to dev_type is copied as is; HLO_F32 is
 *   dequantized per column: y = (float)q * scale[c] (n_scale = cols) or with one scale
 *   (n_scale = 1). */
typedef struct {
    uint64_t off;
    uint32_t rows, cols, ld;
    hlo_type dev_type, host_type;
    uint32_t n_scale; /* 0 for a copy */
    float *scale;
} tpub_xfer;

/* GEMM flags: the command stream's (docs/command-stream.md), bit for bit. The compiler does not
 * include the driver's headers; the runtime, which sees both, ties them with _Static_assert. */
enum tpub_gemm_flag {
    TPUB_GEMM_BIAS = 1u << 0,
    TPUB_GEMM_RELU = 1u << 1,
    TPUB_GEMM_OUT_INT8 = 1u << 2,
    TPUB_GEMM_A_UNSIGNED = 1u << 3,
    TPUB_GEMM_B_TILED = 1u << 4,
    TPUB_GEMM_ALL = (1u << 5) - 1,
};

/* One device GEMM (docs/command-stream.md): C = act(A . B (+ bias)). B is always in tile order
 * (TPUB_GEMM_B_TILED set) for the package's array size. */
typedef struct {
    uint32_t m, k, n, flags;
    uint64_t a_off, b_off, c_off, p_off; /* p_off only with BIAS or OUT_INT8 */
    uint32_t lda, ldc;
    char *name;  /* the HLO dot it implements */
    char *fused; /* the HLO ops folded into its epilogue, comma-separated ("" if none) */
} tpub_gemm;

typedef struct {
    uint32_t n_inputs, n_outputs, n_gemms;
    tpub_xfer *inputs, *outputs;
    tpub_gemm *gemms;
} tpub_segment;

typedef struct {
    uint32_t array_n;      /* the array size the weights are tiled for */
    uint64_t arena_bytes;  /* device memory the package needs */
    uint64_t const_bytes;  /* the constant image: arena[0, const_bytes) */
    uint8_t *const_image;
    char *host_hlo;        /* the host program (NUL-terminated HLO text) */
    uint32_t n_inputs, n_outputs;
    tpub_sig *inputs, *outputs; /* in the host program's parameter / result order */
    uint32_t n_segments;
    tpub_segment *segments;
    char *report;          /* the compiler's report (placement, quantization): text */
} tpub_package;

/* Writes pkg to path atomically (a temporary file renamed into place: no partial file on
 * failure). Returns 0, or -1 with the reason in err. */
int tpub_save(const tpub_package *pkg, const char *path, char *err, size_t errlen);
/* Parses a package image. Returns 0, or -1 with the reason in err (out is then empty). */
int tpub_parse(const void *buf, size_t len, tpub_package *out, char *err, size_t errlen);
int tpub_load(const char *path, tpub_package *out, char *err, size_t errlen);
void tpub_free(tpub_package *pkg); /* frees everything reachable; pkg may be reused */

/* Readable disassembly: signatures, arena map, segments with their transfers and GEMMs (tiles
 * per GEMM), the host program and the report. Returns 0, or -1 if writing failed. */
int tpub_dump(const tpub_package *pkg, FILE *out);

#ifdef __cplusplus
}
#endif
#endif

/* tpuc.h - the compiler: an XLA HLO module and its weights in, a package (tpub.h) out.
 *
 * Stages (docs/compiler.md): parse and shape-check (hlo.h); bind weights to parameters; inline
 * calls into one graph; fold every op whose operands are all constants; pick the dots the device
 * runs (a dot with a constant right-hand side whose left-hand side contracts its trailing
 * dimensions) and the convolutions (a constant kernel, 2-D, no groups or dilation), fuse a
 * following bias add and ReLU (`maximum` with zeros) into each, and max pooling into a
 * convolution; keep convolution results NHWC on the device and read views of device results in
 * place, and pack small-channel convolutions read from the host (their receptive fields gathered
 * into K); group them into segments; calibrate and quantize float operations to int8, or round
 * their weights to bf16 (TPUC_BF16); plan device memory; print the remaining ops as the host
 * program. */
#ifndef TPU_COMPILER_TPUC_H
#define TPU_COMPILER_TPUC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hlo/hlo.h"
#include "package/tpub.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *hlo_path; /* the model's file; with hlo_text, its name in messages */
    const char *hlo_text; /* the model's text in memory (hlo_len bytes), or NULL: the file */
    size_t hlo_len;
    const char *weights_path; /* safetensors file, or NULL: every parameter is an input */
    /* Weights by parameter number, in place of weights_path: weights[k] binds to parameter k, or
     * NULL leaves it an input (n_weights entries, at most the number of parameters). Each must
     * have its parameter's element type and dims; they stay the caller's (tpuc_compile copies
     * them). */
    hlo_array *const *weights;
    int n_weights;
    uint32_t array_n; /* the device's array size the weights are tiled for; 0: 16 */
    /* Calibration samples, one array per model input (in input order), each with the input's
     * dims except dims[0], which may be any count (split into batches of the input's dims[0];
     * a last partial batch is ignored). Needed when a float dot runs on the device. */
    hlo_array *const *calib;
    int n_calib;
    /* NaN or infinite weights, biases or calibration samples are an error naming the tensor and
     * element; with this set, a warning in the report instead: NaN weights and biases count as
     * 0, infinite ones as the largest finite magnitude of their column, and non-finite samples
     * are left out of the calibration. */
    bool allow_nonfinite;
    /* How the float dots run on the device (docs/compiler.md "Precision"): a tpuc_precision, in
     * one byte so that the struct's size and offsets stay as they were (python/abi.c checks the
     * Python package's copy of them). */
    uint8_t precision;
    /* Convolutions whose input comes from the host run packed (their receptive fields gathered
     * into K, docs/compiler.md) where that takes fewer MXU slots; with this set, never. In the
     * padding after precision: the struct's size and offsets stay as they were. */
    bool no_conv_packing;
    /* A while with dots whose trip count is known is unrolled when the values its trips compute
     * (every instruction's result but constants', each trip) take at most this many bytes; a
     * larger one stays whole on the host (docs/compiler.md "Loops with dots"). 0: 1 GiB. */
    uint64_t unroll_bytes;
} tpuc_options;

typedef enum {
    TPUC_INT8 = 0, /* float operations quantized to int8 from calibration samples (calib) */
    TPUC_BF16 = 1, /* bf16 operands, fp32 sums and results: no calibration */
} tpuc_precision;

/* Compiles; on success *out is a complete package (free with tpub_free), including its report.
 * Returns 0, or -1 with *err: "<file>:<line>:<col>: ..." when it concerns an instruction,
 * "<file>: ..." otherwise (file: hlo_path). */
int tpuc_compile(const tpuc_options *opts, tpub_package *out, hlo_error *err);

struct st_file;
/* Binds the tensors of a safetensors file (io/safetensors.h) to the ENTRY parameters of m (file
 * names it in messages), for each parameter the first rule that matches: a tensor of the same
 * name ("w1.1"); a tensor whose name equals the parameter's without its ".N" suffix ("w1"), or
 * the other way round; a tensor named by the parameter number ("0"); a tensor whose __metadata__
 * entry is the parameter number as a decimal string ("w1.1": "0"). A bound tensor must have the
 * parameter's element type and dims. params[k] receives a new array for parameter k, or NULL
 * when no tensor binds to it (the caller supplies those, e.g. the input). params has room for
 * n_params entries, at least the number of ENTRY parameters. tpuc_compile binds its weights so.
 * Returns 0, or -1 with *err (params all NULL then). */
int tpuc_bind_safetensors(const hlo_module *m, const char *file, const struct st_file *st,
                          hlo_array **params, int n_params, hlo_error *err);
/* Binds arrays by parameter number as tpuc_compile binds tpuc_options.weights: params[k]
 * receives a copy of weights[k] (k < n_weights), which must have parameter k's element type and
 * dims, or NULL; as tpuc_bind_safetensors otherwise. */
int tpuc_bind_arrays(const hlo_module *m, const char *file, hlo_array *const *weights,
                     int n_weights, hlo_array **params, int n_params, hlo_error *err);

#ifdef __cplusplus
}
#endif
#endif

/* tpurt.h - the runtime: a compiled package (.tpub, package/tpub.h) run on the device (C11).
 *
 * tpurt_open opens a device of the package's array size, writes the package's constant image
 * into an arena of device memory, builds one command stream per operation (GEMM or CONV2D) and
 * checks the host program against the package. Each tpurt_run is then one evaluation of the
 * model: the host program runs in the reference evaluator (hlo/hlo.h) on the caller's input
 * buffers, and each of its custom-calls "tpu.segment.K" runs segment K on the device: the
 * operands are quantized into the arena (in the device's element order: NHWC for a
 * convolution), every operation is one submission (checked against the golden model with verify
 * on), the results are read back and dequantized. The outputs land in the caller's buffers. The
 * runtime counts cycles, submissions and the operations' lower bounds per layer.
 *
 * Errors: every call that can fail returns a tpurt_status; tpurt_last_error(rt) then gives one
 * line naming what failed and where ("batch 3, segment 0, gemm 1 'dot.2': tpu_wait: ..."), and
 * tpurt_open / tpurt_load write theirs into err (as tpu_open does). The runtime never prints
 * and never exits. After any error it stays usable: a failed run leaves the device and the
 * arena's constants as they were, so the next run starts clean (a timeout resets the device);
 * tpurt_close is always safe. */
#ifndef TPU_RUNTIME_TPURT_H
#define TPU_RUNTIME_TPURT_H

#include <stddef.h>
#include <stdint.h>

#include "driver/tpu.h"
#include "hlo/hlo.h"
#include "package/tpub.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tpurt_status {
    TPURT_OK = 0,
    TPURT_E_ARG,      /* a bad argument: NULL, wrong count, index out of range, empty window */
    TPURT_E_NOMEM,    /* out of host memory */
    TPURT_E_PACKAGE,  /* the package cannot run: it does not load, its host program does not
                       * parse or check or disagrees with its signatures or segments, its arena
                       * does not fit the device, the driver refuses a command */
    TPURT_E_EVAL,     /* the host program failed to evaluate (message: where in it) */
    TPURT_E_DEVICE,   /* the device: no model of the array size, out of device memory, ... */
    TPURT_E_FIRMWARE, /* the firmware rejected a command stream (message: the field) */
    TPURT_E_CORE,     /* the core stopped with an error (message: code and instruction) */
    TPURT_E_TIMEOUT,  /* a submission ran out of its cycle budget; the device was reset */
    TPURT_E_MISMATCH, /* verify on: the device's result differs from the golden model */
    TPURT_E_IO,       /* a trace or its GTKWave save file could not be written */
} tpurt_status;

const char *tpurt_status_name(tpurt_status s); /* "TPURT_E_TIMEOUT"; "?" if unknown */
/* The runtime's status for a driver call's (TPU_E_ARG, TPU_E_NOMEM and TPU_E_DEVICE are the
 * device refusing: TPURT_E_DEVICE). */
tpurt_status tpurt_status_from_driver(tpu_status s);

typedef struct tpurt tpurt;

typedef struct {
    const tpusim_config *device; /* the device (sim/config.h): its cores (0: one tpu_core;
                                  * 1..8: a chip of that many, each running its own batches,
                                  * tpurt_run_batches), memory timing and memory; NULL: the
                                  * defaults. Its array_n and mem_size are the package's: its
                                  * array size, and room for its arena */
    uint64_t max_cycles;         /* cycle budget of each submission; 0: none */
    int verify;                  /* check every submission against the golden model */
    uint64_t first_batch;        /* the number of the first tpurt_run in messages (runs are
                                  * numbered on from it): a caller that shares one run's
                                  * batches among runtimes numbers them as one run */
    int weights_per_core;        /* 0: one copy of the constants (weights) in device memory,
                                  * which every core reads; 1: a copy per core */
    const tpu_remote *remote;    /* the device is remote (tools/tpu_vp): tpu_open_remote on it;
                                  * of `device` only the cores count (the memory timing, budget
                                  * and verify are its own) */
} tpurt_options;

/* The defaults: the simulator's memory timing, no budget, verify on. */
void tpurt_options_default(tpurt_options *opts);

/* Opens a runtime for pkg, which stays the caller's and must outlive it unchanged. pkg must
 * satisfy what tpub_load checks (a loaded or tpub_parse'd package does); tpurt_open checks what
 * ties it to its host program and to the device: the host program parses and checks, its
 * parameters are the input signatures, every custom-call is "tpu.segment.K" of an existing
 * segment with operands and results of the segment's transfers, the arena fits the 32-bit
 * device addresses. Each operation's operands are checked by the firmware when it is submitted.
 * opts NULL: the defaults. On failure *rt is NULL and, if err is not NULL, the reason is
 * written there. */
tpurt_status tpurt_open(const tpub_package *pkg, const tpurt_options *opts, tpurt **rt, char *err,
                        size_t errlen);
/* tpurt_open on the package at path (tpub_load), which the runtime owns. A package tpub_load
 * refuses is TPURT_E_PACKAGE with its message. */
tpurt_status tpurt_load(const char *path, const tpurt_options *opts, tpurt **rt, char *err,
                        size_t errlen);
void tpurt_close(tpurt *rt); /* rt may be NULL */
/* The last error's message ("" before any); "no runtime" for NULL. */
const char *tpurt_last_error(const tpurt *rt);

/* ---------------------------------------------------------- signatures -- */

/* A model input or output as tpurt_run takes or gives it: a dense row-major array. */
typedef struct {
    const char *name; /* the package's name for it (valid until tpurt_close) */
    hlo_type type;    /* HLO_F32, HLO_S8, HLO_U8 or HLO_S32 */
    int rank;
    int64_t dims[TPUB_MAX_RANK];
    uint64_t elements; /* the product of dims (1 for a scalar) */
    uint64_t bytes;    /* elements * the element size: the size of its buffer */
} tpurt_tensor;

uint32_t tpurt_n_inputs(const tpurt *rt);  /* 0 for NULL */
uint32_t tpurt_n_outputs(const tpurt *rt); /* 0 for NULL */
/* Input or output i (in the host program's parameter / result order); TPURT_E_ARG if i is out
 * of range. */
tpurt_status tpurt_get_input(tpurt *rt, uint32_t i, tpurt_tensor *out);
tpurt_status tpurt_get_output(tpurt *rt, uint32_t i, tpurt_tensor *out);
/* The input that output i updates, from the model's input_output_alias (HLO) or
 * tf.aliasing_output (StableHLO; JAX's donated arguments): a training step's parameters and
 * optimizer state, which a caller feeds back as the next step's inputs. -1: none (or i out of
 * range, or rt NULL). */
int32_t tpurt_output_updates(const tpurt *rt, uint32_t i);

/* ----------------------------------------------------------------- run -- */

/* One evaluation of the model, a batch: inputs[i] holds input i and outputs[j] receives output
 * j, each a buffer of exactly its tpurt_tensor's bytes (n_inputs and n_outputs must be the
 * package's counts, no pointer NULL). The outputs are written only when the run succeeds.
 * Each run that gets past these argument checks is the next batch, numbered from 0; its
 * errors name it. */
tpurt_status tpurt_run(tpurt *rt, const void *const *inputs, uint32_t n_inputs,
                       void *const *outputs, uint32_t n_outputs);

/* Up to tpurt_cores(rt) evaluations at once, batch i on core i (a DistributedSampler's split of
 * a larger batch, or independent batches): inputs[i] and outputs[i] are batch i's buffers as
 * tpurt_run takes them. Each batch's host program runs in a thread of its own; the device runs
 * only while every batch waits for it, so the simulated timing does not depend on the host's.
 * The batches are numbered on as consecutive runs; every batch runs to its end; the outputs are
 * written only when all of them succeed, else the first failing batch's status and message are
 * returned (a batch that failed by itself before one that an all-reduce's peer failed).
 *
 * A package of R > 1 replicas (tpurt_replicas) takes exactly R batches, batch i being replica i.
 * At an all-reduce each waits until all have reached it; then every one gets the same
 * combination, folded in replica order 0..R-1 (hlo_all_reduce_combine: for the f32 sum of a
 * pmean, ((x0 + x1) + x2) + ..., each add rounded to nearest even), so the replicas' results
 * are bit-identical and reproducible. A sum of f32 (or s32) runs on the R cores: each replica's
 * operands are written into device memory, core k adds slice k of the elements over the R
 * replicas in order (firmware REDUCE: the same bits as the host's fold, but that every NaN is
 * the canonical one) and writes it into replica 0's buffer, from which every replica reads
 * the sums; its cycles and bytes are its own layer (tpurt_get_layer, TPURT_ALL_REDUCE).
 * Any other combination (a maximum, a product) is host work (tpurt_host_op "all-reduce", its
 * bytes those of one replica's result). A replica that ends (by an error, or without the
 * all-reduce) releases those waiting with an error. On the device a core waiting for its peers
 * is idle, which the cycles show. */
tpurt_status tpurt_run_batches(tpurt *rt, uint32_t n_batches, const void *const *const *inputs,
                               uint32_t n_inputs, void *const *const *outputs, uint32_t n_outputs);
/* The cores that run batches: 1, or the chip's. 0 for NULL. */
uint32_t tpurt_cores(const tpurt *rt);
/* The replicas the package runs as (its host program's replica_count * num_partitions: a
 * data-parallel step's devices, docs/compiler.md "Optimized dumps"): 1, or R > 1, which
 * tpurt_open wants at most tpurt_cores of and tpurt_run_batches exactly R batches for. 0 for
 * NULL. */
uint32_t tpurt_replicas(const tpurt *rt);

/* Waveform of the next tpurt_run, from its first submission until the run ends: FST, or VCD if
 * path ends in .vcd, optionally only cycles [from, to) counted from that first submission (to =
 * 0: to the end), with the GTKWave save file written beside it when the run ends
 * (tpu_trace_close). Fails at once (TPURT_E_IO) if path cannot be written. The trace is kept
 * when the run fails. */
tpurt_status tpurt_trace(tpurt *rt, const char *path, uint64_t from, uint64_t to);

/* ---------------------------------------------------------- statistics -- */

/* One operation of the package (a layer: a GEMM or a CONV2D), or an all-reduce the cores sum
 * (after the operations, one per such all-reduce of the host program), and what its
 * submissions measured, summed over them; a dot of an unrolled loop is one operation per
 * iteration, all of the body's dot's name: one layer sums them all (docs/compiler.md "Loops
 * with dots"). */
#define TPURT_ALL_REDUCE ((tpub_op_kind)3) /* tpurt_layer.kind of an all-reduce */
typedef struct {
    const char *name;        /* the HLO dot, convolution or all-reduce (valid until close) */
    const char *fused;       /* the HLO ops folded into it, comma-separated, or "" */
    uint32_t segment, index; /* segment K, operation G of it (an all-reduce: 0, its number) */
    tpub_op_kind kind;       /* TPUB_OP_GEMM, TPUB_OP_CONV2D or TPURT_ALL_REDUCE */
    uint32_t m, k, n;        /* a GEMM's; 0 for a convolution; an all-reduce's replicas, 0 and
                                elements (of all its operands) */
    uint32_t flags;          /* TPU_GEMM_* (B_TILED always set for a GEMM; TPU_CONV_POOL);
                                TPU_REDUCE_F32 for an f32 all-reduce */
    const tpub_conv *conv;   /* a convolution's geometry (the package's record), else NULL */
    uint32_t oh, ow;         /* a convolution's output size (pooled with TPU_CONV_POOL) */
    uint64_t macs;           /* of one submission: m * k * n, or tpu_conv2d_cost's (0) */
    uint64_t bytes;          /* of one submission: the memory traffic of its cost (tpu_cost);
                                an all-reduce's: all its cores' (tpu_reduce_cost) */
    uint64_t submissions, cycles;
    double ideal_cycles; /* tpu_gemm_cost's or tpu_conv2d_cost's, times the submissions */
    double bound_cycles; /* the lower bound, max(compute, memory), times the submissions (an
                            all-reduce: each core's slice's memory bound, summed) */
    uint32_t iterations; /* the operations it sums: 1, or a loop's trips (segment and index are
                            the first's) */
} tpurt_layer;

typedef struct {
    uint64_t runs;          /* tpurt_run calls that succeeded */
    uint64_t submissions;   /* operations submitted and finished, failed runs included */
    uint64_t verified;      /* of those, checked against the golden model and agreed (all,
                             * with verify; a remote device says for its own) */
    uint64_t cycles;        /* device cycles of all submissions, firmware included */
    double device_seconds;  /* host time simulating them (the driver's submit + wait) */
    double host_seconds;    /* host time in the host program's own ops (segments excluded) */
    uint64_t trace_cycles;  /* the cycles the tpurt_trace of the last traced run holds: 0 when
                             * its window began after the run ended */
    uint64_t device_cycles; /* device clock edges the runs took: the sum of the submissions'
                             * cycles on one core, less when cores run side by side (0 for a
                             * remote device) */
} tpurt_stats;

/* What one core did in all runs. */
typedef struct {
    uint64_t submissions, cycles; /* cycles: of its submissions, summed */
    uint64_t mem_stall_cycles;    /* of those, its memory requests lost the port to other cores */
    uint64_t mxu_busy;            /* the MXU_BUSY counter, summed */
} tpurt_core_stats;
tpurt_status tpurt_get_core_stats(tpurt *rt, uint32_t core, tpurt_core_stats *out);

/* The package's operations, segment by segment (a loop's dot once); 0 for NULL. */
uint32_t tpurt_n_layers(const tpurt *rt);
tpurt_status tpurt_get_layer(tpurt *rt, uint32_t i, tpurt_layer *out);

/* The host program's own work in all runs, per opcode: what the device did not do. Counted as
 * the evaluator runs it (a while body's ops once per iteration); the device segments' custom-calls
 * and the plumbing (constant, tuple, get-tuple-element, call, fusion, while, conditional) are not
 * work. */
typedef struct {
    const char *opcode; /* hlo_opcode_name's */
    uint64_t count;     /* evaluations */
    uint64_t macs;      /* a dot's or convolution's multiply-accumulates (hlo_macs), summed */
    uint64_t bytes;     /* of the arrays they produced */
} tpurt_host_op;
/* The opcodes that did work, most MACs first, then most bytes (ties in opcode order). */
uint32_t tpurt_n_host_ops(const tpurt *rt);
tpurt_status tpurt_get_host_op(tpurt *rt, uint32_t i, tpurt_host_op *out);
tpurt_status tpurt_get_stats(tpurt *rt, tpurt_stats *out);
/* The device the package runs on: array size, memory size and timing (tpu_query). */
tpurt_status tpurt_get_info(tpurt *rt, tpu_info *out);

#ifdef __cplusplus
}
#endif
#endif

/* run.h - tpusim run: a compiled package (.tpub) on the simulated TPU (internal to tools/tpusim).
 * run.c runs it; run_report.c classifies and reports what it ran (the types here are theirs). */
#ifndef TPU_CLI_RUN_H
#define TPU_CLI_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "tools/tpusim/cli.h"
#include "io/npy.h"
#include "compiler/tpub.h"

extern const char usage_run[];

/* The arguments after "run". Returns the exit code, every message printed. */
int cmd_run(int argc, char **argv);

typedef struct {
    options dev; /* the common options and --quiet */
    const char *package;
    const char **inputs, **outputs; /* argv entries */
    uint32_t n_inputs, n_outputs;
    const char *labels, *expect;
    float divide;   /* --input-divide, 0 without */
    uint64_t limit; /* --limit, 0 without */
    int have_show;
    uint64_t show;
} run_options;

/* One --input bound to its signature. */
typedef struct {
    const char *path;
    const tpub_sig *sig;
    npy_array arr;
    uint64_t rows;        /* batched: rows used */
    uint64_t batch;       /* batched: rows per batch (the signature's first dimension) */
    uint64_t row_elements; /* elements per row (per sample) */
} bound_input;

typedef struct {
    int batched;                    /* the inputs are split into batches */
    uint64_t batches, batch, images; /* batch: rows per batch of input 0 */
} plan;

/* One GEMM of the package and what its submissions measured. */
typedef struct {
    const tpub_gemm *g;
    uint32_t segment, index;
    tpu_stream *stream;
    uint64_t submissions, cycles, macs;
    double ideal, bound; /* report_derive's figures summed over the submissions */
} layer;

typedef struct {
    const run_options *o;
    const tpub_package *pkg;
    tpu_device *dev;
    tpu_info info;
    uint32_t arena;
    layer *layers;
    uint32_t n_layers;
    uint32_t *first_layer; /* per segment: its first GEMM in layers */
    uint64_t batch;        /* being evaluated */
    int rc;                /* exit code of a failure inside a segment (message printed) */
    uint64_t submissions, verified, cycles;
    double device_seconds, segment_seconds;
} run_ctx;

/* Classification figures from the first output [images, classes]. */
typedef struct {
    const npy_array *out;
    npy_array labels, expect; /* data NULL when not given */
    uint64_t images, correct, agree, ref_correct;
} classes;

/* run.c */
/* Seconds on the monotonic clock. */
double now(void);
/* "'x' f32[4,784]" */
const char *sig_str(const tpub_sig *s, char *buf, size_t size);
/* Element i of a as a double. */
double npy_value(const npy_array *a, uint64_t i);

/* run_report.c. Each returns 0 or an exit code, with the message printed. */
/* Checks that the package can be classified and loads --labels and --expect into cl, whose
 * first output is res[0] (when --labels, --expect or --show asks for it). */
int setup_classes(const run_options *o, const tpub_package *pkg, const plan *pl,
                  const npy_array *res, classes *cl);
/* After a successful run that started at t_start: the --output files and --json report (all
 * or nothing), then the summary on stdout (unless --quiet) and the --show sample. */
int finish_run(const run_ctx *c, const plan *pl, classes *cl, const bound_input *in,
               const npy_array *res, double t_start, double host_seconds);

#endif

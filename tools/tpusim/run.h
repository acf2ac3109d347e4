/* run.h - tpusim run: a compiled package (.tpub) on the simulated TPU through the runtime
 * (runtime/tpurt.h); internal to tools/tpusim. run.c binds the .npy inputs to the package's
 * signatures, splits them into batches and runs them; run_report.c classifies and reports what
 * ran (the types here are theirs). */
#ifndef TPU_TOOLS_TPUSIM_RUN_H
#define TPU_TOOLS_TPUSIM_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "io/npy.h"
#include "runtime/tpurt.h"
#include "tools/tpusim/cli.h"

extern const char usage_run[];

/* The arguments after "run". Returns the exit code, every message printed. */
int cmd_run(int argc, char **argv);
/* The same on a remote device (driver/tpu.h tpu_remote; NULL: a local one), whose memory timing
 * and budget are its own: tools/tpu_vp runs packages on a SystemC platform with it. */
int run_package(int argc, char **argv, const tpu_remote *remote);

typedef struct {
    cli_options dev; /* the common options and --quiet */
    const char *package;
    const char **inputs, **outputs; /* argv entries */
    uint32_t n_inputs, n_outputs;
    const char *labels, *expect;
    float divide;   /* --input-divide, 0 without */
    uint64_t limit; /* --limit, 0 without */
    int have_show;
    uint64_t show;
    uint32_t jobs;        /* --jobs, 1 without */
    int weights_per_core; /* --weights-per-core (with --cores) */
} run_options;

#define RUN_JOBS_MAX 64

/* One --input bound to its signature. */
typedef struct {
    const char *path;
    tpurt_tensor sig;
    npy_array arr;
    uint64_t rows;         /* batched: rows used */
    uint64_t batch;        /* batched: rows per batch (the signature's first dimension) */
    uint64_t row_elements; /* elements per row (per sample) */
    void *staging;         /* a batch converted to the signature's type, or zero-padded: one
                            * per core (batches run side by side), of sig.bytes each */
} run_input;

typedef struct {
    int batched;                     /* the inputs are split into batches */
    uint64_t batches, batch, images; /* batch: rows per batch of input 0 */
} run_plan;

/* One of --jobs: batches [first, end) on a runtime (so a device) of its own, with its own input
 * staging; the results res are shared, each job writing its batches' rows. */
typedef struct {
    const run_options *o;
    const run_plan *pl;
    tpurt *rt;
    run_input *in;
    npy_array *res;
    void **staging; /* output staging: only the padded last batch uses it */
    uint64_t first, end;
    tpurt_status st; /* how its batches went: TPURT_OK, or the failure with msg */
    char msg[1024];
} run_job;

/* Classification figures from the first output [images, classes]. */
typedef struct {
    const npy_array *out;
    npy_array labels, expect; /* data NULL when not given */
    uint64_t images, correct, agree, ref_correct;
} run_classes;

/* run.c */
/* "'x' f32[4,784]" */
const char *run_sig_str(const tpurt_tensor *s, char *buf, size_t size);
/* Element i of a as a double. */
double run_npy_value(const npy_array *a, uint64_t i);

/* run_report.c. Each returns 0 or an exit code, with the message printed. */
/* Checks that the package can be classified and loads --labels and --expect into cl, whose
 * first output is res[0] (when --labels, --expect or --show asks for it). */
int run_setup_classes(const run_options *o, tpurt *rt, const run_plan *pl, const npy_array *res,
                      run_classes *cl);
/* After a successful run of wall_seconds (loading included), job_seconds of them running the
 * n_jobs jobs: the --output files and --json report (all or nothing) with the jobs' figures
 * summed, then the summary on stdout (unless --quiet) and the --show sample. */
int run_finish(const run_options *o, const run_job *jobs, uint32_t n_jobs, const run_plan *pl,
               run_classes *cl, const npy_array *res, double wall_seconds, double job_seconds);

#endif

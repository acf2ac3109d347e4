/* run.h - a compiled package (.tpub) run on the simulated TPU through the runtime
 * (runtime/tpurt.h), from its command line to its report: `tpusim run`, and tools/tpu_vp on its
 * SystemC platform. run.c parses the options, binds the .npy inputs to the package's signatures,
 * splits them into batches and runs them; run_report.c classifies and reports what ran (the
 * types here are theirs). */
#ifndef TPU_TOOLS_COMMON_RUN_H
#define TPU_TOOLS_COMMON_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "io/npy.h"
#include "runtime/tpurt.h"
#include "tools/common/device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tpusim run's help: its usage and options (tools/tpu_vp prints it after its own), without
 * CLI_EXIT_HELP. */
extern const char run_usage[];

typedef struct {
    cli_run_options dev; /* the device's and a run's options */
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

/* Its own options' getopt_long values, and the entries of its table: CLI_RUN_OPTIONS and these. A
 * command that takes more options (tools/tpu_vp) gives them values from RUN_OPT_OWN on. */
enum {
    RUN_OPT_INPUT = CLI_OPT_OWN,
    RUN_OPT_OUTPUT,
    RUN_OPT_LABELS,
    RUN_OPT_EXPECT,
    RUN_OPT_DIVIDE,
    RUN_OPT_LIMIT,
    RUN_OPT_SHOW,
    RUN_OPT_JOBS,
    RUN_OPT_WEIGHTS_PER_CORE,
    RUN_OPT_OWN = CLI_OPT_OWN + 0x100,
};
#define RUN_OPTIONS                                                        \
    CLI_RUN_OPTIONS, {"input", required_argument, NULL, RUN_OPT_INPUT},    \
        {"output", required_argument, NULL, RUN_OPT_OUTPUT},               \
        {"labels", required_argument, NULL, RUN_OPT_LABELS},               \
        {"expect", required_argument, NULL, RUN_OPT_EXPECT},               \
        {"input-divide", required_argument, NULL, RUN_OPT_DIVIDE},         \
        {"limit", required_argument, NULL, RUN_OPT_LIMIT},                 \
        {"show", required_argument, NULL, RUN_OPT_SHOW},                   \
        {"jobs", required_argument, NULL, RUN_OPT_JOBS},                   \
        {"weights-per-core", no_argument, NULL, RUN_OPT_WEIGHTS_PER_CORE}, \
    {                                                                      \
        "help", no_argument, NULL, 'h'                                     \
    }

/* A command's own option (opt, its value val): 0, or EXIT_USAGE with the message printed. */
typedef int run_own_fn(void *ctx, int opt, const char *val, run_options *o);

/* Parses a run's command line (argv[0] the command) with the getopt_long table opts (RUN_OPTIONS
 * and the command's own, which go to own), help naming where the help is ("tpusim run --help"):
 * the package is the first operand (unless own set it), the checks between options follow.
 * Returns 0, EXIT_USAGE (message printed), or -1 for --help (printed by the caller). o starts
 * from {0}; run_options_free releases it whatever the outcome. */
int run_parse(int argc, char **argv, const struct option *opts, const char *help, run_own_fn *own,
              void *ctx, run_options *o);
void run_options_free(run_options *o);
/* Runs the package as o says, on a local device or on a remote one (driver/tpu.h tpu_remote),
 * whose memory timing and budget are its own: tools/tpu_vp runs packages on a SystemC platform
 * with it. Returns the exit code, every message printed. */
int run_package(const run_options *o, const tpu_remote *remote);

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
/* The .npy dtype of a signature's element type (tpub_sig_type's). */
npy_dtype run_sig_dtype(hlo_type t);
/* Element i of buf, an array of signature type t, set to v: as a C conversion, 16-bit floats
 * rounded to nearest even (hlo_array_set). */
void run_sig_set(hlo_type t, void *buf, uint64_t i, double v);
/* "'x' f32[4,784]" */
const char *run_sig_str(const tpurt_tensor *s, char *buf, size_t size);
/* Whether a .npy array of dtype t holds integers (int8, uint8, int32 or int64): classes, and
 * what --input-divide converts. */
int run_npy_integer(npy_dtype t);
/* Element i of a as a double: a of a dtype a run takes (an integer one, float32, float16 or
 * bfloat16; bind_inputs and run_setup_classes refuse the others), else NaN. */
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

#ifdef __cplusplus
}
#endif
#endif

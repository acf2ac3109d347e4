/* cli.h - what the tpusim command's files share (internal to tools/tpusim). */
#ifndef TPU_TOOLS_TPUSIM_CLI_H
#define TPU_TOOLS_TPUSIM_CLI_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "driver/tpu.h"
#include "io/npy.h"
#include "io/tpuio.h"
#include "runtime/tpurt.h"
#include "tools/tpusim/report.h"

enum exit_code { EXIT_OK = 0, EXIT_MISMATCH = 1, EXIT_USAGE = 2, EXIT_DEVICE = 3 };

/* Prints "tpusim: <what>: <why>" on stderr; returns code. */
int cli_fail(int code, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The options of tpusim gemm (tpusim bench and tpusim run fill the ones they need). */
typedef struct {
    const char *a, *b, *bias_file, *params_file, *out, *json, *trace;
    int random, bias, relu, unsigned_a, requant, quiet;
    uint32_t m, k, n, mult, shift;
    uint64_t seed;
    tpusim_config device; /* --array, --cores, --mem-latency, --mem-bandwidth (0: not given) */
    uint64_t max_cycles, trace_from, trace_to;
    int have_window;
} cli_options;

/* cli.c: what every subcommand's argument parsing, errors and output files use. */

/* A whole decimal number in [min, max]: 0, or -1. */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out);
/* "--opt: '<val>' is not <want>", EXIT_USAGE. */
int bad_value(const char *opt, const char *val, const char *want);
/* bad_value with want "<what> (1..<max>)". */
int bad_limit(const char *opt, const char *val, const char *what, uint64_t max);
/* Splits arg, "--name" or "--name=value", of subcommand cmd: the name into name[size] and
 * *eq at the '=' (NULL without one). Returns 0, or EXIT_USAGE (message printed). */
int split_option(const char *cmd, const char *arg, char *name, size_t size, const char **eq);
/* The value of option name: after its '=', else the next argument (*i advances); NULL (message
 * printed) when there is none. */
const char *option_value(const char *cmd, const char *name, const char *eq, int argc, char **argv,
                         int *i);
/* The options every device-running subcommand has: --array, --cores, --mem-latency,
 * --mem-bandwidth, --json, --trace, --trace-window, --max-cycles (fetching the value like
 * option_value). Returns 0, EXIT_USAGE (message printed), or -1 when name is none of them. */
int common_option(const char *cmd, const char *name, const char *eq, int argc, char **argv, int *i,
                  cli_options *o);

/* After a traced run that succeeded: a warning on stderr when --trace-window held none of its
 * cycles (the window began after the run ended). */
void cli_warn_empty_trace(const cli_options *o, uint64_t trace_cycles);

/* The one mapping of a failed call to an exit code, its message printed as "tpusim: <what>:
 * <msg>": 1 for a golden model mismatch, 3 for the device, its firmware, core errors and
 * timeouts, 2 for the rest (inputs, host memory, the trace), whose <what> is blame when it is to
 * blame. A driver call's status goes through tpurt_status_from_driver. */
int cli_status_error(tpurt_status s, const char *msg, const char *blame);

/* Outputs are staged (io/tpuio.h) and committed together, all or nothing; a failure is printed
 * and is EXIT_USAGE. cli_commit commits with rc 0, else removes every staged file, and returns rc
 * or the failed rename's code. */
int cli_stage(tpuio_staged *f, const char *path, const void *data, size_t len);
/* j (taken, may be NULL when out of memory) as indented JSON text ending in a newline. */
int cli_stage_json(tpuio_staged *f, const char *path, json_t *j);
int cli_commit(tpuio_staged *files, int n, int rc);

/* The subcommands: the arguments after their name; each returns the exit code, every message
 * printed. */
extern const char usage_gemm[], usage_bench[];
int cmd_gemm(int argc, char **argv);
int cmd_bench(int argc, char **argv);

/* One GEMM's operands, as the firmware reads them. */
typedef struct {
    uint32_t m, k, n;
    int unsigned_a, bias, relu;
    enum report_requant requant;
    uint8_t *a;      /* m x k: int8, or uint8 with unsigned_a */
    int8_t *b;       /* k x n */
    int32_t *params; /* bias[n], mult[n], shift[n] as the firmware reads them, or NULL */
} cli_problem;

typedef struct {
    tpu_info info;
    tpu_perf_report perf; /* the lone core's, or core 0's on a chip */
    report_chip chip;     /* with --cores: every core's (chip.cores 0 without) */
} cli_result;

/* One convolution's operands (tpusim bench --conv). */
typedef struct {
    tpu_conv2d v;    /* geometry and flags; its operands are set when it runs */
    uint8_t *in;     /* NHWC */
    int8_t *kernel;  /* in the tile order of the array size it was made for */
    int32_t *params; /* bias[cout], mult[cout], shift[cout] */
    uint64_t out_bytes;
} cli_conv;

/* problem.c: operands from .npy files or random, the run on the device, the reference check.
 * Each returns 0 or an exit code, with the message printed. */
/* An array's shape as "[3, 4]" into buf; returns buf. */
const char *shape_str(const npy_array *a, char *buf, size_t size);
int load_problem(const cli_options *o, cli_problem *p);
int random_problem(const cli_options *o, cli_problem *p);
void problem_free(cli_problem *p);
/* Core `part`'s share of m rows split over `parts` cores: rows [*first, *first + *rows). */
void split_rows(uint32_t m, uint32_t parts, uint32_t part, uint32_t *first, uint32_t *rows);
/* Runs p on a device opened with o's options (with --cores, split by rows over the chip's cores,
 * one submission each); C's bytes go to c. */
int run_device(const cli_options *o, const cli_problem *p, void *c, cli_result *res);
/* C against a plain C GEMM of the tool's own (the firmware's tiling is not trusted). */
int check_reference(const cli_problem *p, const void *c);
/* A convolution of that geometry with random operands (seeded) for an n x n array, and its run
 * on a device opened with o's options (o->device.array_n = n; checked against the golden model);
 * its out_bytes of output go to out. */
int random_conv(const tpu_conv2d *geometry, uint32_t n, uint64_t seed, cli_conv *p);
void conv_free(cli_conv *p);
int run_conv(const cli_options *o, const cli_conv *p, void *out, cli_result *res);

#endif

/* cli.h - what the tpusim command's files share (internal to driver/cli). */
#ifndef TPU_CLI_H
#define TPU_CLI_H

#include <stdint.h>

#include "report.h"
#include "tpu.h"

enum exit_code { EXIT_OK = 0, EXIT_MISMATCH = 1, EXIT_USAGE = 2, EXIT_DEVICE = 3 };

/* Prints "tpusim: <what>: <why>" on stderr; returns code. */
int cli_fail(int code, const char *what, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The options of tpusim gemm (tpusim bench fills the ones it needs). */
typedef struct {
    const char *a, *b, *bias_file, *params_file, *out, *json, *trace;
    int random, bias, relu, unsigned_a, requant, quiet;
    uint32_t m, k, n, mult, shift;
    uint64_t seed;
    uint32_t array_n, mem_latency, mem_bandwidth;
    uint64_t max_cycles, trace_from, trace_to;
    int have_window;
} options;

/* One GEMM's operands, as the firmware reads them. */
typedef struct {
    uint32_t m, k, n;
    int unsigned_a, bias, relu;
    enum report_requant requant;
    uint8_t *a;      /* m x k: int8, or uint8 with unsigned_a */
    int8_t *b;       /* k x n */
    int32_t *params; /* bias[n], mult[n], shift[n] as the firmware reads them, or NULL */
} problem;

typedef struct {
    tpu_info info;
    tpu_perf_report perf;
} run_result;

/* gemm_run.c: operands from .npy files or random, the run on the device, the reference check.
 * Each returns 0 or an exit code, with the message printed. */
int load_problem(const options *o, problem *p);
int random_problem(const options *o, problem *p);
void problem_free(problem *p);
/* Runs p on a device opened with o's options; C's bytes go to c. */
int run_device(const options *o, const problem *p, void *c, run_result *res);
/* C against a plain C GEMM of the tool's own (the firmware's tiling is not trusted). */
int check_reference(const problem *p, const void *c);

#endif

/* report.h - the performance report of one GEMM run, as aligned text or as JSON (jansson). Both
 * show the same figures, derived in one place from what the run measured. */
#ifndef TPU_TOOLS_TPUSIM_REPORT_H
#define TPU_TOOLS_TPUSIM_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "driver/tpu.h"
#include "tools/common/device.h"

#ifdef __cplusplus
extern "C" {
#endif

enum report_requant { REPORT_INT32_OUT, REPORT_REQUANT_TENSOR, REPORT_REQUANT_COLUMN };

/* A GEMM split by rows over a chip's cores (tpusim gemm --cores): what each core took and
 * measured, and the chip's clock. */
typedef struct {
    uint32_t cores;                         /* C; 0: a lone core ran (the rest unused) */
    uint32_t rows[TPUSIM_CORES_MAX];        /* core k's rows of A and C (0: it had none) */
    tpu_perf_report perf[TPUSIM_CORES_MAX]; /* of core k's submission (zero without one) */
    uint64_t elapsed;                       /* chip clock edges from the first submit to the last
                                               halt (tpu_cycle) */
    double wall_seconds;                    /* host time simulating them */
} report_chip;

/* What was run and what it measured. The run was checked before it is reported: bit-exact against
 * the golden model (the driver's verify) and equal to the tool's own reference. */
typedef struct {
    uint32_t m, k, n;
    int unsigned_a, bias, relu;
    int bf16, out_bf16; /* bf16 A and B; C bf16 (else fp32) */
    enum report_requant requant;
    tpu_info info;        /* array size and memory model, as the device reports them */
    tpu_perf_report perf; /* of the submit + wait (a chip's: core 0's) */
    report_chip chip;     /* with --cores */
} report_run;

/* The figures both reports print: the GEMM's cost (tpu_gemm_cost) and what the run measured
 * against it; NAN where a ratio has no denominator. */
typedef struct {
    uint64_t macs;
    uint64_t bytes;          /* A, B, C and the parameters: each crosses the memory port once */
    double ideal;            /* MACs / N^2 */
    double utilization;      /* percent: ideal / measured */
    double memory_bound;     /* bytes / bandwidth */
    double bound;            /* the larger of ideal and memory_bound */
    double ratio;            /* cycles / bound */
    uint64_t overhead;       /* cycles the core idled or starved waiting for the firmware */
    double overhead_percent; /* of all cycles */
    double speed;            /* simulated cycles per wall second */
} report_figures;

report_figures report_derive(const report_run *r);
void report_text(FILE *out, const report_run *r);
/* A new JSON object (nested, numbers as numbers), or NULL if out of memory. */
json_t *report_json(const report_run *r);

#ifdef __cplusplus
}
#endif
#endif

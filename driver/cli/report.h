/* report.h - the performance report of one GEMM run, as aligned text or as JSON (jansson). Both
 * show the same figures, derived in one place from what the run measured. */
#ifndef TPU_REPORT_H
#define TPU_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "tpu.h"

#ifdef __cplusplus
extern "C" {
#endif

enum report_requant { REPORT_INT32_OUT, REPORT_REQUANT_TENSOR, REPORT_REQUANT_COLUMN };

/* What was run and what it measured. The run was checked before it is reported: bit-exact against
 * the golden model (the driver's verify) and equal to the tool's own reference. */
typedef struct {
    uint32_t m, k, n;
    int unsigned_a, bias, relu;
    enum report_requant requant;
    tpu_info info;        /* array size and memory model, as the device reports them */
    tpu_perf_report perf; /* of the submit + wait */
} report_run;

void report_text(FILE *out, const report_run *r);
/* A new JSON object (nested, numbers as numbers), or NULL if out of memory. */
json_t *report_json(const report_run *r);

#ifdef __cplusplus
}
#endif
#endif

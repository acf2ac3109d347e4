/* report.c - text and JSON reports of a GEMM run (see report.h). */
#include "tools/tpusim/report.h"

#include "driver/tpu.h"

#include <math.h>
#include <string.h>

static double ratio(double num, double den) { return den > 0 ? num / den : NAN; }

report_figures report_derive(const report_run *r)
{
    report_figures f;
    /* The per-column and per-tensor requantizations cost the same: the cost needs only int8. */
    const tpu_gemm g = {.m = r->m,
                        .k = r->k,
                        .n = r->n,
                        .flags = (r->bias ? TPU_GEMM_BIAS : 0) |
                                 (r->requant != REPORT_INT32_OUT ? TPU_GEMM_OUT_INT8 : 0)};
    tpu_cost cost;
    tpu_gemm_cost(&r->info, &g, &cost);
    f.macs = cost.macs;
    f.bytes = cost.bytes;
    f.ideal = cost.ideal_cycles;
    f.memory_bound = cost.memory_cycles;
    f.bound = cost.bound_cycles;
    f.utilization = 100 * ratio(f.ideal, (double)r->perf.cycles);
    f.ratio = ratio((double)r->perf.cycles, f.bound);
    /* Not firmware_cycles: most of those are pushes that overlap the core's work. */
    const uint64_t active = r->perf.counters[TPU_PERF_ACTIVE];
    f.overhead = (r->perf.cycles > active ? r->perf.cycles - active : 0) +
                 r->perf.counters[TPU_PERF_STALL_ISSUE];
    f.overhead_percent = 100 * ratio((double)f.overhead, (double)r->perf.cycles);
    f.speed = ratio((double)r->perf.cycles, r->perf.wall_seconds);
    return f;
}

static const char *a_dtype(const report_run *r) { return r->unsigned_a ? "uint8" : "int8"; }

static const char *c_dtype(const report_run *r)
{
    return r->requant != REPORT_INT32_OUT ? "int8" : "int32";
}

static const char *requant_name(const report_run *r)
{
    switch (r->requant) {
    case REPORT_REQUANT_TENSOR: return "per-tensor";
    case REPORT_REQUANT_COLUMN: return "per-column";
    case REPORT_INT32_OUT: break;
    }
    return "none";
}

static const char *bound_by(const report_figures *f)
{
    return f->ideal >= f->memory_bound ? "compute" : "memory";
}

/* ---------------------------------------------------------------- text -- */

char *report_group(char *buf, uint64_t v)
{
    char digits[24];
    const int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
    char *p = buf;
    for (int i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0)
            *p++ = ',';
        *p++ = digits[i];
    }
    *p = '\0';
    return buf;
}

/* A measured or derived quantity: grouped when large, three significant digits when small, "-"
 * when undefined. */
static char *num(char *buf, double v)
{
    if (!isfinite(v))
        strcpy(buf, "-");
    else if (v >= 1000)
        report_group(buf, (uint64_t)llround(v));
    else
        snprintf(buf, 32, "%.3g", v);
    return buf;
}

#define LABEL "%-27s" /* wide enough for "bit-exact vs golden model:" and a space */

void report_text(FILE *out, const report_run *r)
{
    const report_figures f = report_derive(r);
    const tpu_perf_report *p = &r->perf;
    char b1[32], b2[32];

    const int requant = r->requant != REPORT_INT32_OUT;
    fprintf(out, LABEL "M %u x K %u x N %u\n", "shape:", r->m, r->k, r->n);
    fprintf(out, LABEL "C = %s%sA . B%s%s%s  (A %s, B int8, C %s)\n",
            "operation:", requant ? "requant(" : "", r->relu ? "relu(" : "",
            r->bias ? " + bias" : "", r->relu ? ")" : "", requant ? ")" : "", a_dtype(r),
            c_dtype(r));
    if (requant)
        fprintf(out, LABEL "%s\n", "requantization:", requant_name(r));
    fprintf(out, LABEL "%u x %u\n", "array:", r->info.array_n, r->info.array_n);
    fprintf(out, LABEL "latency %u cycles, %u bytes/cycle, %s MiB\n",
            "memory:", r->info.mem_latency, r->info.mem_bytes_per_cycle,
            num(b1, (double)r->info.mem_size / (1 << 20)));
    fprintf(out, LABEL "%s\n", "cycles:", report_group(b1, p->cycles));
    fprintf(out, LABEL "%s  (%.1f %%: the core idle or starved of instructions)\n",
            "firmware overhead:", report_group(b1, f.overhead), f.overhead_percent);
    fprintf(out, LABEL "%s\n", "MACs:", report_group(b1, f.macs));
    fprintf(out, LABEL "%s  (MACs / %u^2)\n", "ideal cycles:", num(b1, f.ideal), r->info.array_n);
    fprintf(out, LABEL "%.1f %%\n", "MXU utilization:", f.utilization);
    fprintf(out, LABEL "%s cycles\n", "lower bound, compute:", num(b1, f.ideal));
    fprintf(out, LABEL "%s cycles  (%s bytes / %u bytes per cycle)\n",
            "lower bound, memory:", num(b1, f.memory_bound), report_group(b2, f.bytes),
            r->info.mem_bytes_per_cycle);
    fprintf(out, LABEL "%.3f  (%s-bound)\n", "cycles / larger bound:", f.ratio, bound_by(&f));
    fprintf(out, LABEL, "stall cycles:");
    for (int c = TPU_PERF_STALL_HAZARD; c <= TPU_PERF_STALL_ISSUE; c++)
        fprintf(out, "%s%s %s", c > TPU_PERF_STALL_HAZARD ? ", " : "",
                tpu_counter_name(c) + strlen("stall_"), report_group(b1, p->counters[c]));
    fprintf(out, "\n");
    fprintf(out, LABEL "%s bytes read, %s bytes written\n",
            "DMA:", report_group(b1, p->counters[TPU_PERF_DMA_RD_BYTES]),
            report_group(b2, p->counters[TPU_PERF_DMA_WR_BYTES]));
    fprintf(out, LABEL "%s  (control processor busy %s cycles)\n",
            "instructions:", report_group(b1, p->instructions),
            report_group(b2, p->firmware_cycles));
    fprintf(out, LABEL "%s cycles/s  (%.3f s wall)\n", "simulation speed:", num(b1, f.speed),
            p->wall_seconds);
    fprintf(out, LABEL "yes\n", "bit-exact vs golden model:");
    fprintf(out, LABEL "match\n", "C reference:");
}

/* ---------------------------------------------------------------- JSON -- */

static json_t *real_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

json_t *report_json(const report_run *r)
{
    const report_figures f = report_derive(r);
    const tpu_perf_report *p = &r->perf;

    json_t *stalls = json_object(), *counters = json_object();
    for (int c = 0; c < TPU_PERF_COUNT && stalls && counters; c++) {
        if (c >= TPU_PERF_STALL_HAZARD && c <= TPU_PERF_STALL_ISSUE)
            json_object_set_new(stalls, tpu_counter_name(c) + strlen("stall_"),
                                json_integer((json_int_t)p->counters[c]));
        json_object_set_new(counters, tpu_counter_name(c),
                            json_integer((json_int_t)p->counters[c]));
    }
    /* json_pack steals the "o" references, also on failure. */
    return json_pack(
        "{s:{s:I, s:I, s:I, s:s, s:s, s:s, s:b, s:b, s:s},"
        " s:I,"
        " s:{s:I, s:I, s:I},"
        " s:{s:I, s:I, s:o, s:I},"
        " s:I, s:o, s:o,"
        " s:{s:o, s:o, s:I, s:s, s:o},"
        " s:o,"
        " s:{s:I, s:I},"
        " s:I, s:o,"
        " s:{s:f, s:o},"
        " s:b, s:b}",
        "gemm", "m", (json_int_t)r->m, "k", (json_int_t)r->k, "n", (json_int_t)r->n, "a_dtype",
        a_dtype(r), "b_dtype", "int8", "c_dtype", c_dtype(r), "bias", r->bias, "relu", r->relu,
        "requant", requant_name(r), "array_n", (json_int_t)r->info.array_n, "memory",
        "latency_cycles", (json_int_t)r->info.mem_latency, "bytes_per_cycle",
        (json_int_t)r->info.mem_bytes_per_cycle, "size_bytes", (json_int_t)r->info.mem_size,
        "cycles", "total", (json_int_t)p->cycles, "firmware_overhead", (json_int_t)f.overhead,
        "firmware_overhead_percent", real_or_null(f.overhead_percent), "control_processor",
        (json_int_t)p->firmware_cycles, "macs", (json_int_t)f.macs, "ideal_cycles",
        real_or_null(f.ideal), "mxu_utilization_percent", real_or_null(f.utilization),
        "lower_bound", "compute_cycles", real_or_null(f.ideal), "memory_cycles",
        real_or_null(f.memory_bound), "memory_bytes", (json_int_t)f.bytes, "bound_by", bound_by(&f),
        "cycles_over_bound", real_or_null(f.ratio), "stall_cycles", stalls, "dma", "read_bytes",
        (json_int_t)p->counters[TPU_PERF_DMA_RD_BYTES], "written_bytes",
        (json_int_t)p->counters[TPU_PERF_DMA_WR_BYTES], "instructions", (json_int_t)p->instructions,
        "counters", counters, "simulation", "wall_seconds", p->wall_seconds, "cycles_per_second",
        real_or_null(f.speed), "bit_exact_vs_golden", 1, "matches_reference", 1);
}

/* report.c - text and JSON reports of a GEMM run (see report.h). */
#include "tools/tpusim/report.h"

#include "driver/tpu.h"

#include <math.h>
#include <string.h>

report_figures report_derive(const report_run *r)
{
    report_figures f;
    /* The per-column and per-tensor requantizations cost the same: the cost needs only int8. */
    const tpu_gemm g = {.m = r->m,
                        .k = r->k,
                        .n = r->n,
                        .flags = (r->bias ? TPU_GEMM_BIAS : 0) |
                                 (r->requant != REPORT_INT32_OUT ? TPU_GEMM_OUT_INT8 : 0) |
                                 (r->bf16 ? TPU_GEMM_BF16 : 0) |
                                 (r->out_bf16 ? TPU_GEMM_OUT_BF16 : 0)};
    tpu_cost cost;
    tpu_gemm_cost(&r->info, &g, &cost);
    f.macs = cost.macs;
    f.bytes = cost.bytes;
    f.ideal = cost.ideal_cycles;
    f.memory_bound = cost.memory_cycles;
    f.bound = cost.bound_cycles;
    f.utilization = 100 * cli_ratio(f.ideal, (double)r->perf.cycles);
    f.ratio = cli_ratio((double)r->perf.cycles, f.bound);
    /* Not firmware_cycles: most of those are pushes that overlap the core's work. */
    const uint64_t active = r->perf.counters[TPU_PERF_ACTIVE];
    f.overhead = (r->perf.cycles > active ? r->perf.cycles - active : 0) +
                 r->perf.counters[TPU_PERF_STALL_ISSUE];
    f.overhead_percent = 100 * cli_ratio((double)f.overhead, (double)r->perf.cycles);
    f.speed = cli_ratio((double)r->perf.cycles, r->perf.wall_seconds);
    return f;
}

static const char *a_dtype(const report_run *r)
{
    return r->bf16 ? "bfloat16" : r->unsigned_a ? "uint8" : "int8";
}

static const char *b_dtype(const report_run *r) { return r->bf16 ? "bfloat16" : "int8"; }

static const char *c_dtype(const report_run *r)
{
    return r->requant != REPORT_INT32_OUT ? "int8"
           : r->out_bf16                  ? "bfloat16"
           : r->bf16                      ? "float32"
                                          : "int32";
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

/* A measured or derived quantity: grouped when large, three significant digits when small, "-"
 * when undefined. */
static char *num(char *buf, double v)
{
    if (!isfinite(v))
        strcpy(buf, "-");
    else if (v >= 1000)
        cli_group(buf, (uint64_t)llround(v));
    else
        snprintf(buf, 32, "%.3g", v);
    return buf;
}

/* What ran, on what: the lines both reports start with. */
static void text_header(FILE *out, const report_run *r)
{
    const int requant = r->requant != REPORT_INT32_OUT;
    fprintf(out, CLI_LABEL "M %u x K %u x N %u\n", "shape:", r->m, r->k, r->n);
    fprintf(out, CLI_LABEL "C = %s%sA . B%s%s%s  (A %s, B %s, C %s)\n",
            "operation:", requant ? "requant(" : "", r->relu ? "relu(" : "",
            r->bias ? " + bias" : "", r->relu ? ")" : "", requant ? ")" : "", a_dtype(r),
            b_dtype(r), c_dtype(r));
    if (requant)
        fprintf(out, CLI_LABEL "%s\n", "requantization:", requant_name(r));
    fprintf(out, CLI_LABEL "%u x %u\n", "array:", r->info.array_n, r->info.array_n);
    cli_print_memory(out, &r->info);
}

/* The chip's figures, from what each core measured (report_run.chip). */
typedef struct {
    report_figures whole; /* the GEMM's: macs; ideal on the C arrays (MACs / (C N^2)) */
    uint64_t core_cycles; /* the cores' cycles summed */
    uint64_t mem_stalls;  /* the cores' memory stall cycles summed */
    double core_ideal[TPUSIM_CORES_MAX]; /* core k's MACs / N^2 */
} chip_figures;

static chip_figures chip_derive(const report_run *r)
{
    const report_chip *c = &r->chip;
    chip_figures f = {.whole = report_derive(r)};
    report_figures *w = &f.whole;
    /* Every core reads all of B and the parameters: the port carries the cores' bytes summed. */
    w->bytes = 0;
    for (uint32_t k = 0; k < c->cores; k++) {
        report_run part = *r; /* core k's rows */
        part.m = c->rows[k];
        const report_figures pf = report_derive(&part);
        f.core_ideal[k] = pf.ideal;
        w->bytes += c->rows[k] ? pf.bytes : 0;
        f.core_cycles += c->perf[k].cycles;
        f.mem_stalls += c->perf[k].mem_stall_cycles;
    }
    w->ideal /= c->cores;
    w->memory_bound = cli_ratio((double)w->bytes, (double)r->info.mem_bytes_per_cycle);
    w->bound = w->ideal > w->memory_bound ? w->ideal : w->memory_bound;
    w->utilization = 100 * cli_ratio(w->ideal, (double)c->elapsed);
    w->ratio = cli_ratio((double)c->elapsed, w->bound);
    w->speed = cli_ratio((double)c->elapsed, c->wall_seconds);
    return f;
}

static void text_chip(FILE *out, const report_run *r)
{
    const report_chip *c = &r->chip;
    const chip_figures f = chip_derive(r);
    const report_figures *w = &f.whole;
    const uint32_t n = r->info.array_n;
    char b1[32], b2[32], b3[32], b4[32];

    text_header(out, r);
    fprintf(out, CLI_LABEL "%u on one memory port, rows split %u..%u per core\n",
            "cores:", c->cores, c->rows[c->cores - 1], c->rows[0]);
    fprintf(out, CLI_LABEL "%s  (the chip's clock, first submit to last halt)\n",
            "elapsed cycles:", cli_group(b1, c->elapsed));
    fprintf(out, CLI_LABEL "%s\n", "MACs:", cli_group(b1, w->macs));
    fprintf(out, CLI_LABEL "%s  (MACs / (%u x %u^2))\n", "ideal cycles:", num(b1, w->ideal),
            c->cores, n);
    fprintf(out, CLI_LABEL "%.1f %%  (of the %u cores' arrays)\n",
            "MXU utilization:", w->utilization, c->cores);
    fprintf(out, CLI_LABEL "%s cycles\n", "lower bound, compute:", num(b1, w->ideal));
    fprintf(out, CLI_LABEL "%s cycles  (%s bytes / %u bytes per cycle; B read by every core)\n",
            "lower bound, memory:", num(b1, w->memory_bound), cli_group(b2, w->bytes),
            r->info.mem_bytes_per_cycle);
    fprintf(out, CLI_LABEL "%.3f  (%s-bound)\n", "cycles / larger bound:", w->ratio, bound_by(w));
    fprintf(out, CLI_LABEL "%.2f  (cores busy at once, on average)\n",
            "core cycles / elapsed:", cli_ratio((double)f.core_cycles, (double)c->elapsed));
    fprintf(out, CLI_LABEL "%s cycles  (%.1f %% of the cores' cycles)\n",
            "memory stalls:", cli_group(b1, f.mem_stalls),
            100 * cli_ratio((double)f.mem_stalls, (double)f.core_cycles));
    fprintf(out, "per core:\n  %4s %10s %14s %14s %11s %14s %8s\n", "core", "rows", "cycles",
            "MXU busy", "MXU util %", "memory stalls", "stall %");
    for (uint32_t k = 0; k < c->cores; k++) {
        const tpu_perf_report *p = &c->perf[k];
        fprintf(out, "  %4u %10s %14s %14s %11.1f %14s %8.1f\n", k, cli_group(b1, c->rows[k]),
                cli_group(b2, p->cycles), cli_group(b3, p->counters[TPU_PERF_MXU_BUSY]),
                100 * cli_ratio(f.core_ideal[k], (double)p->cycles),
                cli_group(b4, p->mem_stall_cycles),
                100 * cli_ratio((double)p->mem_stall_cycles, (double)p->cycles));
    }
    fprintf(out, CLI_LABEL "%s cycles/s  (%.3f s wall)\n", "simulation speed:", num(b1, w->speed),
            c->wall_seconds);
    fprintf(out, CLI_LABEL "yes  (every core's submission)\n", "bit-exact vs golden model:");
    fprintf(out, CLI_LABEL "match\n", "C reference:");
}

void report_text(FILE *out, const report_run *r)
{
    if (r->chip.cores) {
        text_chip(out, r);
        return;
    }
    const report_figures f = report_derive(r);
    const tpu_perf_report *p = &r->perf;
    char b1[32], b2[32];

    text_header(out, r);
    fprintf(out, CLI_LABEL "%s\n", "cycles:", cli_group(b1, p->cycles));
    fprintf(out, CLI_LABEL "%s  (%.1f %%: the core idle or starved of instructions)\n",
            "firmware overhead:", cli_group(b1, f.overhead), f.overhead_percent);
    fprintf(out, CLI_LABEL "%s\n", "MACs:", cli_group(b1, f.macs));
    fprintf(out, CLI_LABEL "%s  (MACs / %u^2)\n", "ideal cycles:", num(b1, f.ideal),
            r->info.array_n);
    fprintf(out, CLI_LABEL "%.1f %%\n", "MXU utilization:", f.utilization);
    fprintf(out, CLI_LABEL "%s cycles\n", "lower bound, compute:", num(b1, f.ideal));
    fprintf(out, CLI_LABEL "%s cycles  (%s bytes / %u bytes per cycle)\n",
            "lower bound, memory:", num(b1, f.memory_bound), cli_group(b2, f.bytes),
            r->info.mem_bytes_per_cycle);
    fprintf(out, CLI_LABEL "%.3f  (%s-bound)\n", "cycles / larger bound:", f.ratio, bound_by(&f));
    fprintf(out, CLI_LABEL, "stall cycles:");
    for (int c = TPU_PERF_STALL_HAZARD; c <= TPU_PERF_STALL_ISSUE; c++)
        fprintf(out, "%s%s %s", c > TPU_PERF_STALL_HAZARD ? ", " : "",
                tpu_counter_name(c) + strlen("stall_"), cli_group(b1, p->counters[c]));
    fprintf(out, "\n");
    fprintf(out, CLI_LABEL "%s bytes read, %s bytes written\n",
            "DMA:", cli_group(b1, p->counters[TPU_PERF_DMA_RD_BYTES]),
            cli_group(b2, p->counters[TPU_PERF_DMA_WR_BYTES]));
    fprintf(out, CLI_LABEL "%s  (control processor busy %s cycles)\n",
            "instructions:", cli_group(b1, p->instructions), cli_group(b2, p->firmware_cycles));
    fprintf(out, CLI_LABEL "%s cycles/s  (%.3f s wall)\n", "simulation speed:", num(b1, f.speed),
            p->wall_seconds);
    fprintf(out, CLI_LABEL "yes\n", "bit-exact vs golden model:");
    fprintf(out, CLI_LABEL "match\n", "C reference:");
}

/* ---------------------------------------------------------------- JSON -- */

static json_t *gemm_json(const report_run *r)
{
    return json_pack("{s:I, s:I, s:I, s:s, s:s, s:s, s:b, s:b, s:s}", "m", (json_int_t)r->m, "k",
                     (json_int_t)r->k, "n", (json_int_t)r->n, "a_dtype", a_dtype(r), "b_dtype",
                     b_dtype(r), "c_dtype", c_dtype(r), "bias", r->bias, "relu", r->relu, "requant",
                     requant_name(r));
}

static json_t *counters_json(const tpu_perf_report *p)
{
    json_t *counters = json_object();
    for (int c = 0; c < TPU_PERF_COUNT && counters; c++)
        json_object_set_new(counters, tpu_counter_name(c),
                            json_integer((json_int_t)p->counters[c]));
    return counters;
}

/* The bounds and the measured cycles (a chip's elapsed) over the larger. */
static json_t *lower_bound_json(const report_figures *f)
{
    return json_pack("{s:o, s:o, s:I, s:s, s:o}", "compute_cycles", cli_json_real(f->ideal),
                     "memory_cycles", cli_json_real(f->memory_bound), "memory_bytes",
                     (json_int_t)f->bytes, "bound_by", bound_by(f), "cycles_over_bound",
                     cli_json_real(f->ratio));
}

static json_t *chip_json(const report_run *r)
{
    const report_chip *c = &r->chip;
    const chip_figures f = chip_derive(r);
    const report_figures *w = &f.whole;
    json_t *cores = json_array();
    for (uint32_t k = 0; k < c->cores && cores; k++) {
        const tpu_perf_report *p = &c->perf[k];
        json_array_append_new(
            cores,
            json_pack(
                "{s:I, s:I, s:I, s:I, s:o, s:I, s:o, s:I, s:o}", "core", (json_int_t)k, "rows",
                (json_int_t)c->rows[k], "cycles", (json_int_t)p->cycles, "mxu_busy",
                (json_int_t)p->counters[TPU_PERF_MXU_BUSY], "mxu_utilization_percent",
                cli_json_real(100 * cli_ratio(f.core_ideal[k], (double)p->cycles)),
                "mem_stall_cycles", (json_int_t)p->mem_stall_cycles, "mem_stall_percent",
                cli_json_real(100 * cli_ratio((double)p->mem_stall_cycles, (double)p->cycles)),
                "instructions", (json_int_t)p->instructions, "counters", counters_json(p)));
    }
    return json_pack(
        "{s:o, s:I, s:o, s:I,"
        " s:{s:I, s:I, s:o, s:I, s:o, s:o, s:o, s:I, s:o},"
        " s:o, s:{s:f, s:o}, s:b, s:b}",
        "gemm", gemm_json(r), "array_n", (json_int_t)r->info.array_n, "memory",
        cli_memory_json(&r->info), "cores", (json_int_t)c->cores, "chip", "elapsed_cycles",
        (json_int_t)c->elapsed, "core_cycles", (json_int_t)f.core_cycles,
        "core_cycles_over_elapsed",
        cli_json_real(cli_ratio((double)f.core_cycles, (double)c->elapsed)), "macs",
        (json_int_t)w->macs, "ideal_cycles", cli_json_real(w->ideal), "mxu_utilization_percent",
        cli_json_real(w->utilization), "lower_bound", lower_bound_json(w), "mem_stall_cycles",
        (json_int_t)f.mem_stalls, "mem_stall_percent",
        cli_json_real(100 * cli_ratio((double)f.mem_stalls, (double)f.core_cycles)), "per_core",
        cores, "simulation", "wall_seconds", c->wall_seconds, "cycles_per_second",
        cli_json_real(w->speed), "bit_exact_vs_golden", 1, "matches_reference", 1);
}

json_t *report_json(const report_run *r)
{
    if (r->chip.cores)
        return chip_json(r);
    const report_figures f = report_derive(r);
    const tpu_perf_report *p = &r->perf;

    json_t *stalls = json_object();
    for (int c = TPU_PERF_STALL_HAZARD; c <= TPU_PERF_STALL_ISSUE && stalls; c++)
        json_object_set_new(stalls, tpu_counter_name(c) + strlen("stall_"),
                            json_integer((json_int_t)p->counters[c]));
    /* json_pack steals the "o" references, also on failure. */
    return json_pack(
        "{s:o, s:I, s:o,"
        " s:{s:I, s:I, s:o, s:I},"
        " s:I, s:o, s:o, s:o, s:o,"
        " s:{s:I, s:I},"
        " s:I, s:o,"
        " s:{s:f, s:o},"
        " s:b, s:b}",
        "gemm", gemm_json(r), "array_n", (json_int_t)r->info.array_n, "memory",
        cli_memory_json(&r->info), "cycles", "total", (json_int_t)p->cycles, "firmware_overhead",
        (json_int_t)f.overhead, "firmware_overhead_percent", cli_json_real(f.overhead_percent),
        "control_processor", (json_int_t)p->firmware_cycles, "macs", (json_int_t)f.macs,
        "ideal_cycles", cli_json_real(f.ideal), "mxu_utilization_percent",
        cli_json_real(f.utilization), "lower_bound", lower_bound_json(&f), "stall_cycles", stalls,
        "dma", "read_bytes", (json_int_t)p->counters[TPU_PERF_DMA_RD_BYTES], "written_bytes",
        (json_int_t)p->counters[TPU_PERF_DMA_WR_BYTES], "instructions", (json_int_t)p->instructions,
        "counters", counters_json(p), "simulation", "wall_seconds", p->wall_seconds,
        "cycles_per_second", cli_json_real(f.speed), "bit_exact_vs_golden", 1, "matches_reference",
        1);
}

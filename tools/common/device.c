/* device.c - see device.h: the device options and a run's, the exit code of a failed driver or
 * runtime call, and the JSON reports' helpers. */
#include "tools/common/device.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int cli_device_option(int opt, const char *val, tpusim_config *device)
{
    switch (opt) {
    case CLI_OPT_ARRAY:
        if (cli_u32(val, 1, 4096, &device->array_n))
            return cli_bad_value("--array", val, "an array size (1..4096)");
        return 0;
    case CLI_OPT_CORES:
        if (cli_u32(val, 1, TPUSIM_CORES_MAX, &device->cores))
            return cli_bad_limit("--cores", val, "a number of cores", TPUSIM_CORES_MAX);
        return 0;
    case CLI_OPT_MEM_LATENCY:
        if (cli_u32(val, 1, TPUSIM_MEM_LATENCY_MAX, &device->mem_latency))
            return cli_bad_limit("--mem-latency", val, "a latency in cycles",
                                 TPUSIM_MEM_LATENCY_MAX);
        return 0;
    case CLI_OPT_MEM_BANDWIDTH:
        if (cli_u32(val, 1, TPUSIM_MEM_BANDWIDTH_MAX, &device->mem_bytes_per_cycle))
            return cli_bad_limit("--mem-bandwidth", val, "a bandwidth in bytes per cycle",
                                 TPUSIM_MEM_BANDWIDTH_MAX);
        return 0;
    default: return -1;
    }
}

/* "FROM:TO" or "FROM:". */
static int parse_window(const char *s, uint64_t *from, uint64_t *to)
{
    const char *colon = strchr(s, ':');
    if (!colon || colon == s || colon - s > 20)
        return -1;
    char head[24];
    memcpy(head, s, (size_t)(colon - s));
    head[colon - s] = '\0';
    if (cli_u64(head, 0, UINT64_MAX, from))
        return -1;
    if (!colon[1]) {
        *to = 0;
        return 0;
    }
    return cli_u64(colon + 1, *from + 1, UINT64_MAX, to);
}

static int ends_with(const char *s, const char *suffix)
{
    const size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

int cli_run_option(int opt, const char *val, cli_run_options *o)
{
    switch (opt) {
    case CLI_OPT_JSON: o->json = val; return 0;
    case CLI_OPT_TRACE:
        if (!ends_with(val, ".fst") && !ends_with(val, ".vcd"))
            return cli_fail(EXIT_USAGE, "--trace", "'%s' does not end in .fst or .vcd", val);
        o->trace = val;
        return 0;
    case CLI_OPT_TRACE_WINDOW:
        if (parse_window(val, &o->trace_from, &o->trace_to))
            return cli_bad_value("--trace-window", val, "FROM:TO or FROM: with FROM < TO");
        o->have_window = 1;
        return 0;
    case CLI_OPT_MAX_CYCLES:
        if (cli_u64(val, 1, TPU_BUDGET_MAX, &o->max_cycles))
            return cli_bad_limit("--max-cycles", val, "a cycle count", TPU_BUDGET_MAX);
        return 0;
    case CLI_OPT_QUIET: o->quiet = 1; return 0;
    default: return cli_device_option(opt, val, &o->device);
    }
}

void cli_warn_empty_trace(const cli_run_options *o, uint64_t trace_cycles)
{
    if (o->have_window && !trace_cycles)
        cli_fail(0, "warning",
                 "--trace-window starts at cycle %llu, after the run ended: %s holds "
                 "no cycles",
                 (unsigned long long)o->trace_from, o->trace);
}

int cli_status_error(tpurt_status s, const char *msg, const char *blame)
{
    const char *what = blame;
    int code = EXIT_USAGE;
    switch (s) {
    case TPURT_E_MISMATCH:
        what = "golden model mismatch";
        code = EXIT_MISMATCH;
        break;
    case TPURT_E_DEVICE:
        what = "device";
        code = EXIT_DEVICE;
        break;
    case TPURT_E_FIRMWARE:
        what = "firmware";
        code = EXIT_DEVICE;
        break;
    case TPURT_E_CORE:
        what = "core error";
        code = EXIT_DEVICE;
        break;
    case TPURT_E_TIMEOUT:
        what = "timeout";
        code = EXIT_DEVICE;
        break;
    case TPURT_E_IO: what = "trace"; break;
    case TPURT_E_NOMEM: what = "memory"; break;
    case TPURT_E_ARG: what = "runtime"; break;
    case TPURT_OK:
    case TPURT_E_PACKAGE:
    case TPURT_E_EVAL: break;
    }
    return cli_fail(code, what, "%s", msg && *msg ? msg : tpurt_status_name(s));
}

json_t *cli_json_real(double v) { return isfinite(v) ? json_real(v) : json_null(); }

int cli_stage_json(tpuio_staged *f, const char *path, json_t *j)
{
    char *text = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
    json_decref(j);
    const size_t len = text ? strlen(text) : 0;
    char *line = text ? realloc(text, len + 2) : NULL;
    if (!line) {
        free(text);
        return cli_fail(EXIT_USAGE, path, "out of host memory building the report");
    }
    line[len] = '\n';
    const int rc = cli_stage(f, path, line, len + 1);
    free(line);
    return rc;
}

void cli_print_memory(FILE *out, const tpu_info *info)
{
    fprintf(out, CLI_LABEL "latency %u cycles, %u bytes/cycle, %.4g MiB\n",
            "memory:", info->mem_latency, info->mem_bytes_per_cycle,
            (double)info->mem_size / (1 << 20));
}

json_t *cli_memory_json(const tpu_info *info)
{
    return json_pack("{s:I, s:I, s:I}", "latency_cycles", (json_int_t)info->mem_latency,
                     "bytes_per_cycle", (json_int_t)info->mem_bytes_per_cycle, "size_bytes",
                     (json_int_t)info->mem_size);
}

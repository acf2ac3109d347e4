/* cli.c - what every tpusim subcommand shares: error lines, option parsing, the exit codes of
 * failed driver and runtime calls, and output files written all or nothing. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/tpuio.h"
#include "tools/tpusim/cli.h"

/* Prints "tpusim: <what>: <why>" on stderr, one printable line (paths and bytes from inputs
 * escaped); returns code. */
int cli_fail(int code, const char *what, const char *fmt, ...)
{
    char why[1024], line[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    tpuio_err(line, sizeof line, "tpusim: %s: %s", what, why);
    fprintf(stderr, "%s\n", line);
    return code;
}

/* ------------------------------------------------------------ options -- */

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    if (*s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    const unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
    uint64_t v;
    if (parse_u64(s, min, max, &v))
        return -1;
    *out = (uint32_t)v;
    return 0;
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
    if (parse_u64(head, 0, UINT64_MAX, from))
        return -1;
    if (!colon[1]) {
        *to = 0;
        return 0;
    }
    return parse_u64(colon + 1, *from + 1, UINT64_MAX, to);
}

static int ends_with(const char *s, const char *suffix)
{
    const size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

int bad_limit(const char *opt, const char *val, const char *what, uint64_t max)
{
    char want[128];
    snprintf(want, sizeof want, "%s (1..%llu)", what, (unsigned long long)max);
    return bad_value(opt, val, want);
}

int bad_value(const char *opt, const char *val, const char *want)
{
    return cli_fail(EXIT_USAGE, opt, "'%s' is not %s", val, want);
}

int split_option(const char *cmd, const char *arg, char *name, size_t size, const char **eq)
{
    if (strncmp(arg, "--", 2))
        return cli_fail(EXIT_USAGE, "usage", "unexpected argument '%s' (see tpusim %s --help)", arg,
                        cmd);
    *eq = strchr(arg, '=');
    const size_t len = *eq ? (size_t)(*eq - arg) : strlen(arg);
    if (len >= size)
        return cli_fail(EXIT_USAGE, "usage", "unknown option '%s'", arg);
    memcpy(name, arg, len);
    name[len] = '\0';
    return 0;
}

const char *option_value(const char *cmd, const char *name, const char *eq, int argc, char **argv,
                         int *i)
{
    const char *val = eq ? eq + 1 : *i + 1 < argc ? argv[++*i] : NULL;
    if (!val)
        cli_fail(EXIT_USAGE, name, "needs a value (see tpusim %s --help)", cmd);
    return val;
}

enum {
    COMMON_ARRAY,
    COMMON_CORES,
    COMMON_LATENCY,
    COMMON_BANDWIDTH,
    COMMON_JSON,
    COMMON_TRACE,
    COMMON_WINDOW,
    COMMON_MAX_CYCLES,
    COMMON_COUNT
};
static const char *const common_options[COMMON_COUNT] = {
    [COMMON_ARRAY] = "--array",         [COMMON_CORES] = "--cores",
    [COMMON_LATENCY] = "--mem-latency", [COMMON_BANDWIDTH] = "--mem-bandwidth",
    [COMMON_JSON] = "--json",           [COMMON_TRACE] = "--trace",
    [COMMON_WINDOW] = "--trace-window", [COMMON_MAX_CYCLES] = "--max-cycles",
};

int common_option(const char *cmd, const char *name, const char *eq, int argc, char **argv, int *i,
                  cli_options *o)
{
    int opt = 0;
    while (opt < COMMON_COUNT && strcmp(name, common_options[opt]))
        opt++;
    if (opt == COMMON_COUNT)
        return -1;
    const char *val = option_value(cmd, name, eq, argc, argv, i);
    if (!val)
        return EXIT_USAGE;
    switch (opt) {
    case COMMON_ARRAY:
        if (parse_u32(val, 1, 4096, &o->device.array_n))
            return bad_value(name, val, "an array size (1..4096)");
        break;
    case COMMON_CORES:
        if (parse_u32(val, 1, TPUSIM_CORES_MAX, &o->device.cores))
            return bad_limit(name, val, "a number of cores", TPUSIM_CORES_MAX);
        break;
    case COMMON_LATENCY:
        if (parse_u32(val, 1, TPUSIM_MEM_LATENCY_MAX, &o->device.mem_latency))
            return bad_limit(name, val, "a latency in cycles", TPUSIM_MEM_LATENCY_MAX);
        break;
    case COMMON_BANDWIDTH:
        if (parse_u32(val, 1, TPUSIM_MEM_BANDWIDTH_MAX, &o->device.mem_bytes_per_cycle))
            return bad_limit(name, val, "a bandwidth in bytes per cycle", TPUSIM_MEM_BANDWIDTH_MAX);
        break;
    case COMMON_JSON: o->json = val; break;
    case COMMON_TRACE:
        if (!ends_with(val, ".fst") && !ends_with(val, ".vcd"))
            return cli_fail(EXIT_USAGE, name, "'%s' does not end in .fst or .vcd", val);
        o->trace = val;
        break;
    case COMMON_WINDOW:
        if (parse_window(val, &o->trace_from, &o->trace_to))
            return bad_value(name, val, "FROM:TO or FROM: with FROM < TO");
        o->have_window = 1;
        break;
    case COMMON_MAX_CYCLES:
        if (parse_u64(val, 1, TPU_BUDGET_MAX, &o->max_cycles))
            return bad_limit(name, val, "a cycle count", TPU_BUDGET_MAX);
        break;
    }
    return 0;
}

void cli_warn_empty_trace(const cli_options *o, uint64_t trace_cycles)
{
    if (o->have_window && !trace_cycles)
        cli_fail(0, "warning",
                 "--trace-window starts at cycle %llu, after the run ended: %s holds "
                 "no cycles",
                 (unsigned long long)o->trace_from, o->trace);
}

/* ------------------------------------------------------------- errors -- */

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

/* -------------------------------------------------------------- output -- */

int cli_stage(tpuio_staged *f, const char *path, const void *data, size_t len)
{
    char err[512];
    if (tpuio_stage(f, path, data, len, err, sizeof err))
        return cli_fail(EXIT_USAGE, path, "%s", err);
    return 0;
}

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

int cli_commit(tpuio_staged *files, int n, int rc)
{
    char err[512];
    int failed = 0;
    if (tpuio_commit(files, n, !rc, &failed, err, sizeof err) && !rc)
        rc = cli_fail(EXIT_USAGE, files[failed].path, "%s", err);
    return rc;
}

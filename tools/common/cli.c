/* cli.c - see cli.h: what every tool shares, from its error lines to its output files. */
#define _POSIX_C_SOURCE 200809L

#include "tools/common/cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *tool_name = "?";

void cli_init(const char *tool)
{
    tool_name = tool;
    tpuio_remove_on_signals();
}

int cli_fail(int code, const char *what, const char *fmt, ...)
{
    char why[1536], line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (what)
        tpuio_err(line, sizeof line, "%s: %s: %s", tool_name, what, why);
    else
        tpuio_err(line, sizeof line, "%s: %s", tool_name, why);
    fprintf(stderr, "%s\n", line);
    return code;
}

/* ------------------------------------------------------------ options -- */

int cli_next(int argc, char **argv, const char *shorts, const struct option *opts, const char *help)
{
    opterr = 0; /* the messages are ours */
    const int c = getopt_long(argc, argv, shorts, opts, NULL);
    if (c != '?' && c != ':')
        return c;
    /* The option: by its name when getopt knows which it is, else as given, up to its '='. */
    const char *arg = argv[optind - 1];
    const struct option *o = opts;
    while (optopt && o->name && o->val != optopt)
        o++;
    char name[64];
    if (optopt && o->name)
        snprintf(name, sizeof name, "--%s", o->name);
    else if (optopt && arg[1] != '-')
        snprintf(name, sizeof name, "-%c", optopt);
    else
        snprintf(name, sizeof name, "%.*s", (int)strcspn(arg, "="), arg);
    if (c == ':')
        cli_fail(EXIT_USAGE, name, "needs a value (see %s)", help);
    else if (optopt && !strncmp(arg, "--", 2) && strchr(arg, '='))
        cli_fail(EXIT_USAGE, name, "takes no value");
    else
        cli_fail(EXIT_USAGE, "usage", "unknown option '%s' (see %s)", name, help);
    return '?';
}

int cli_unexpected(const char *arg, const char *help)
{
    return cli_fail(EXIT_USAGE, "usage", "unexpected argument '%s' (see %s)", arg, help);
}

int cli_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
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

int cli_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
    uint64_t v;
    if (cli_u64(s, min, max, &v))
        return -1;
    *out = (uint32_t)v;
    return 0;
}

int cli_bad_value(const char *opt, const char *val, const char *want)
{
    return cli_fail(EXIT_USAGE, opt, "'%s' is not %s", val, want);
}

int cli_bad_limit(const char *opt, const char *val, const char *what, uint64_t max)
{
    char want[128];
    snprintf(want, sizeof want, "%s (1..%llu)", what, (unsigned long long)max);
    return cli_bad_value(opt, val, want);
}

/* --------------------------------------------------------------- report -- */

const char *cli_shape(const npy_array *a, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < a->ndim && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%llu", i ? ", " : "",
                              (unsigned long long)a->shape[i]);
    if (n < size)
        snprintf(buf + n, size - n, "]");
    return buf;
}

const char *cli_dtype(npy_dtype t)
{
    return t == NPY_V2 ? "void16 (as ml_dtypes saves bfloat16)" : npy_dtype_name(t);
}

char *cli_group(char *buf, uint64_t v)
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

double cli_ratio(double num, double den) { return den > 0 ? num / den : NAN; }

/* -------------------------------------------------------------- outputs -- */

int cli_stage(tpuio_staged *f, const char *path, const void *data, size_t len)
{
    char err[512];
    if (tpuio_stage(f, path, data, len, err, sizeof err))
        return cli_fail(EXIT_USAGE, path, "%s", err);
    return 0;
}

int cli_commit(tpuio_staged *files, int n, int rc)
{
    char err[512];
    int failed = 0;
    if (tpuio_commit(files, n, !rc, &failed, err, sizeof err) && !rc)
        rc = cli_fail(EXIT_USAGE, files[failed].path, "%s", err);
    return rc;
}

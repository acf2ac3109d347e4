/* main.c - the tpusim command line: argument parsing, output files, and the gemm and bench
 * subcommands. A GEMM runs on the cycle-accurate device through the driver (gemm.c), is
 * checked against the golden model and a plain C GEMM, and is reported (report.c). The run
 * subcommand (run.c) executes a compiled package through the runtime. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/tpusim/cli.h"
#include "io/npy.h"
#include "io/tpuio.h"
#include "tools/tpusim/report.h"
#include "tools/tpusim/run.h"
#include "driver/tpu.h"

#define TOOL_VERSION "1.0"

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


static const char usage_main[] =
    "usage: tpusim gemm [options]   run a GEMM on the simulated TPU (tpusim gemm --help)\n"
    "       tpusim bench [options]  GEMM benchmark table (tpusim bench --help)\n"
    "       tpusim run PKG ...      run a compiled model (tpusim run --help)\n"
    "       tpusim --help | --version\n";

static const char usage_bench[] =
    "usage: tpusim bench [--array N,...] [--sizes S,...] [--repeat R]\n"
    "                    [--mem-latency CYCLES] [--mem-bandwidth BYTES]\n"
    "\n"
    "Random S x S x S GEMMs (int8 in, int32 out), each checked like tpusim gemm, for every array\n"
    "size N: cycles, MXU utilization, cycles over the lower bound max(compute, memory), and\n"
    "simulated cycles per second (the median of R runs; cycle counts are deterministic).\n"
    "defaults: --array 16,32 (those built) --sizes 64,128,256,512,1024 --repeat 3\n";

static const char usage_gemm[] =
    "usage: tpusim gemm --a A.npy --b B.npy [--bias BIAS.npy] [--relu]\n"
    "                   [--requant MULT,SHIFT | --requant-params P.npy] [--unsigned-a]\n"
    "                   [--out C.npy] [common options]\n"
    "       tpusim gemm --m M --k K --n N [--seed S] [--bias] [--relu] [--requant MULT,SHIFT]\n"
    "                   [--unsigned-a] [--out C.npy] [common options]\n"
    "\n"
    "C = A . B (+ bias), then ReLU, then optional requantization to int8, on the cycle-accurate\n"
    "device; every instruction stream is checked against the golden model, and C against a plain\n"
    "C reference GEMM.\n"
    "\n"
    "operands (.npy, little-endian, C order):\n"
    "  --a A.npy              int8 [M,K] (uint8 with --unsigned-a)\n"
    "  --b B.npy              int8 [K,N]\n"
    "  --bias BIAS.npy        int32 [N], added to every row (random mode: --bias, no file)\n"
    "  --relu                 clamp at zero after the bias\n"
    "  --requant MULT,SHIFT   int8 output: clamp(round(x * MULT / 2^SHIFT)), SHIFT 0..63\n"
    "  --requant-params P.npy int32 [2,N]: per-column MULT (row 0) and SHIFT (row 1)\n"
    "  --unsigned-a           A is uint8\n"
    "  --out C.npy            write C: int32 [M,N], or int8 with requantization\n"
    "  --m M --k K --n N      random operands of that shape instead of files\n"
    "  --seed S               random seed (default 1)\n"
    "\n"
    "common options:\n"
    "  --array N              N x N array (default 16; tpusim --version lists those built)\n"
    "  --mem-latency CYCLES   memory latency, 1..65536 (default: the simulator's, 32)\n"
    "  --mem-bandwidth BYTES  memory bytes per cycle, 1..4096 (default: the simulator's, 64)\n"
    "  --json FILE            also write the report as JSON\n"
    "  --trace FILE.fst|.vcd  waveform of the run (kept even when the run fails)\n"
    "  --trace-window FROM:TO only cycles [FROM, TO) after the submit (TO empty: to the end)\n"
    "  --max-cycles C         give up unless the device halts within C cycles of the\n"
    "                         submit, firmware included (default: no limit)\n"
    "  --quiet                no report on stdout, no progress bar\n"
    "\n"
    "Output files are written only when the run succeeds.\n"
    "exit codes: 0 success, 1 result mismatch (golden model or reference), 2 usage or input\n"
    "error (arguments, .npy files, output files), 3 device error or timeout.\n";

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

/* "MULT,SHIFT": MULT an int32, SHIFT 0..63. */
static int parse_requant(const char *s, uint32_t *mult, uint32_t *shift)
{
    const char *comma = strchr(s, ',');
    if (!comma)
        return -1;
    char *end;
    errno = 0;
    const long long m = strtoll(s, &end, 10);
    if (errno || end != comma || end == s || m < INT32_MIN || m > INT32_MAX)
        return -1;
    *mult = (uint32_t)(int32_t)m;
    return parse_u32(comma + 1, 0, 63, shift);
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

/* bad_value with want "<what> (1..<max>)". */
static int bad_limit(const char *opt, const char *val, const char *what, uint64_t max)
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
        return cli_fail(EXIT_USAGE, "usage", "unexpected argument '%s' (see tpusim %s --help)",
                        arg, cmd);
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

enum { COMMON_ARRAY, COMMON_LATENCY, COMMON_BANDWIDTH, COMMON_JSON, COMMON_TRACE, COMMON_WINDOW,
       COMMON_MAX_CYCLES, COMMON_COUNT };
static const char *const common_options[COMMON_COUNT] = {
    [COMMON_ARRAY] = "--array", [COMMON_LATENCY] = "--mem-latency",
    [COMMON_BANDWIDTH] = "--mem-bandwidth", [COMMON_JSON] = "--json", [COMMON_TRACE] = "--trace",
    [COMMON_WINDOW] = "--trace-window", [COMMON_MAX_CYCLES] = "--max-cycles",
};

int common_option(const char *cmd, const char *name, const char *eq, int argc, char **argv,
                  int *i, cli_options *o)
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
        if (parse_u32(val, 1, 4096, &o->array_n))
            return bad_value(name, val, "an array size (1..4096)");
        break;
    case COMMON_LATENCY:
        if (parse_u32(val, 1, TPU_MEM_LATENCY_MAX, &o->mem_latency))
            return bad_limit(name, val, "a latency in cycles", TPU_MEM_LATENCY_MAX);
        break;
    case COMMON_BANDWIDTH:
        if (parse_u32(val, 1, TPU_MEM_BANDWIDTH_MAX, &o->mem_bandwidth))
            return bad_limit(name, val, "a bandwidth in bytes per cycle", TPU_MEM_BANDWIDTH_MAX);
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

/* The options of gemm alone that take a value. */
enum { OPT_A, OPT_B, OPT_BIAS, OPT_PARAMS, OPT_OUT, OPT_REQUANT, OPT_M, OPT_K, OPT_N, OPT_SEED,
       OPT_COUNT };
static const char *const value_options[OPT_COUNT] = {
    [OPT_A] = "--a", [OPT_B] = "--b", [OPT_BIAS] = "--bias", [OPT_PARAMS] = "--requant-params",
    [OPT_OUT] = "--out", [OPT_REQUANT] = "--requant", [OPT_M] = "--m", [OPT_K] = "--k",
    [OPT_N] = "--n", [OPT_SEED] = "--seed",
};

/* Parses the arguments after "gemm". Returns 0, EXIT_USAGE (message printed), or -1 after
 * printing the help. */
static int parse_gemm(int argc, char **argv, cli_options *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    /* --bias names a file in file mode and is a plain flag in random mode. */
    int file_mode = 0;
    for (int i = 0; i < argc; i++)
        if ((!strncmp(argv[i], "--a", 3) || !strncmp(argv[i], "--b", 3)) &&
            (!argv[i][3] || argv[i][3] == '='))
            file_mode = 1;
    unsigned shape_given = 0; /* bits: --m, --k, --n */
    int seed_given = 0;

    for (int i = 0; i < argc; i++) {
        char name[32];
        const char *eq;
        int rc = split_option("gemm", argv[i], name, sizeof name, &eq);
        if (rc)
            return rc;

        int *flag = !strcmp(name, "--relu")         ? &o->relu
                    : !strcmp(name, "--unsigned-a") ? &o->unsigned_a
                    : !strcmp(name, "--quiet")      ? &o->quiet
                    : !strcmp(name, "--bias") && !file_mode ? &o->bias
                                                            : NULL;
        if (!strcmp(name, "--help")) {
            fputs(usage_gemm, stdout);
            return -1;
        }
        if (flag) {
            if (eq)
                return cli_fail(EXIT_USAGE, name, "takes no value");
            *flag = 1;
            continue;
        }
        if ((rc = common_option("gemm", name, eq, argc, argv, &i, o)) >= 0) {
            if (rc)
                return rc;
            continue;
        }
        size_t opt = 0;
        while (opt < OPT_COUNT && strcmp(name, value_options[opt]))
            opt++;
        if (opt == OPT_COUNT)
            return cli_fail(EXIT_USAGE, "usage", "unknown option '%s' (see tpusim gemm --help)",
                        name);
        const char *val = option_value("gemm", name, eq, argc, argv, &i);
        if (!val)
            return EXIT_USAGE;

        switch (opt) {
        case OPT_A: o->a = val; break;
        case OPT_B: o->b = val; break;
        case OPT_BIAS:
            o->bias_file = val;
            o->bias = 1;
            break;
        case OPT_PARAMS: o->params_file = val; break;
        case OPT_OUT: o->out = val; break;
        case OPT_REQUANT:
            if (parse_requant(val, &o->mult, &o->shift))
                return bad_value(name, val, "MULT,SHIFT (an int32, then 0..63)");
            o->requant = 1;
            break;
        case OPT_M:
        case OPT_K:
        case OPT_N: {
            uint32_t *dim = opt == OPT_M ? &o->m : opt == OPT_K ? &o->k : &o->n;
            if (parse_u32(val, 1, UINT32_MAX, dim))
                return bad_value(name, val, "a dimension (at least 1)");
            shape_given |= 1u << (opt - OPT_M);
            break;
        }
        case OPT_SEED:
            if (parse_u64(val, 0, UINT64_MAX, &o->seed))
                return bad_value(name, val, "a number");
            seed_given = 1;
            break;
        }
    }

    o->random = !file_mode;
    if (file_mode) {
        if (!o->a || !o->b)
            return cli_fail(EXIT_USAGE, "usage", "--a and --b go together");
        if (shape_given || seed_given)
            return cli_fail(EXIT_USAGE, "usage", "--m, --k, --n and --seed are for random operands, "
                                             "not with --a and --b");
    } else {
        if (shape_given != 7)
            return cli_fail(EXIT_USAGE, "usage",
                        "give --a and --b, or --m, --k and --n (see tpusim gemm --help)");
        if (o->params_file)
            return cli_fail(EXIT_USAGE, "usage", "--requant-params needs --a and --b");
    }
    if (o->requant && o->params_file)
        return cli_fail(EXIT_USAGE, "usage", "--requant and --requant-params exclude each other");
    if (o->have_window && !o->trace)
        return cli_fail(EXIT_USAGE, "usage", "--trace-window needs --trace");
    return 0;
}

/* -------------------------------------------------------------- output -- */

int stage(cli_staged *f, const char *path, const void *data, size_t len)
{
    f->path = path;
    f->tmp = malloc(strlen(path) + 16);
    if (!f->tmp)
        return cli_fail(EXIT_USAGE, path, "out of host memory");
    sprintf(f->tmp, "%s.tmp.XXXXXX", path);
    const int fd = mkstemp(f->tmp);
    if (fd < 0) {
        free(f->tmp);
        f->tmp = NULL;
        return cli_fail(EXIT_USAGE, path, "cannot create: %s", strerror(errno));
    }
    /* mkstemp makes the file private; give it the mode a plain create would have. */
    const mode_t mask = umask(0);
    umask(mask);
    const char *p = data;
    size_t done = 0;
    int bad = fchmod(fd, 0666 & ~mask);
    while (!bad && done < len) {
        const ssize_t w = write(fd, p + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        bad = w <= 0;
        done += w > 0 ? (size_t)w : 0;
    }
    const int err = errno;
    if (close(fd) || bad) {
        unlink(f->tmp);
        free(f->tmp);
        f->tmp = NULL;
        return cli_fail(EXIT_USAGE, path, "cannot write: %s", strerror(bad ? err : errno));
    }
    return 0;
}

int stage_json(cli_staged *f, const char *path, json_t *j)
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
    const int rc = stage(f, path, line, len + 1);
    free(line);
    return rc;
}

int commit_staged(cli_staged *files, int n, int rc)
{
    int committed = 0;
    while (!rc && committed < n) {
        const cli_staged *f = &files[committed];
        if (f->tmp && rename(f->tmp, f->path))
            rc = cli_fail(EXIT_USAGE, f->path, "cannot rename into place: %s", strerror(errno));
        else
            committed++;
    }
    for (int i = 0; i < n; i++) {
        if (rc && i < committed && files[i].tmp)
            unlink(files[i].path);
        else if (rc && files[i].tmp)
            unlink(files[i].tmp);
        free(files[i].tmp);
        files[i].tmp = NULL;
    }
    return rc;
}

static int write_outputs(const cli_options *o, const cli_problem *p, void *c, const report_run *rep)
{
    cli_staged files[2] = {{0}};
    int rc = 0;
    if (o->out) {
        npy_array arr = {.dtype = p->requant != REPORT_INT32_OUT ? NPY_INT8 : NPY_INT32,
                         .ndim = 2,
                         .shape = {p->m, p->n},
                         .count = (uint64_t)p->m * p->n,
                         .data = c};
        size_t len;
        void *img = npy_encode(&arr, 0, &len);
        rc = img ? stage(&files[0], o->out, img, len)
                 : cli_fail(EXIT_USAGE, o->out, "out of host memory encoding C");
        free(img);
    }
    if (!rc && o->json)
        rc = stage_json(&files[1], o->json, report_json(rep));
    return commit_staged(files, 2, rc);
}

/* --------------------------------------------------------------- main -- */

static int cmd_gemm(int argc, char **argv)
{
    cli_options o;
    int rc = parse_gemm(argc, argv, &o);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;

    cli_problem p = {0};
    void *c = NULL;
    rc = o.random ? random_problem(&o, &p) : load_problem(&o, &p);
    if (!rc) {
        c = malloc((size_t)p.m * p.n * (p.requant != REPORT_INT32_OUT ? 1 : 4));
        if (!c)
            rc = cli_fail(EXIT_USAGE, "memory", "out of host memory for C");
    }
    cli_gemm_result res;
    if (!rc)
        rc = run_device(&o, &p, c, &res);
    if (!rc)
        rc = check_reference(&p, c);
    if (!rc) {
        const report_run rep = {.m = p.m, .k = p.k, .n = p.n, .unsigned_a = p.unsigned_a,
                                .bias = p.bias, .relu = p.relu, .requant = p.requant,
                                .info = res.info, .perf = res.perf};
        rc = write_outputs(&o, &p, c, &rep);
        if (!rc && !o.quiet)
            report_text(stdout, &rep);
    }
    free(c);
    problem_free(&p);
    return rc;
}

/* A comma-separated list of at most max whole numbers in [min, maxv]: returns minus their count,
 * or EXIT_USAGE (message printed). */
static int parse_list(const char *opt, const char *s, uint32_t min, uint32_t maxv, uint32_t *out,
                      int max)
{
    int n = 0;
    char buf[256];
    if (strlen(s) >= sizeof buf)
        return bad_value(opt, s, "a short list");
    strcpy(buf, s);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (n == max || parse_u32(t, min, maxv, &out[n]))
            return bad_value(opt, s, "a comma-separated list of whole numbers");
        n++;
    }
    return n ? -n : bad_value(opt, s, "a non-empty list");
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmd_bench(int argc, char **argv)
{
    uint32_t arrays[8] = {16, 32}, sizes[16] = {64, 128, 256, 512, 1024}, repeat = 3;
    int n_arrays = 2, n_sizes = 5;
    cli_options o = {.random = 1, .quiet = 1, .seed = 1};
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        int rc = 0;
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            fputs(usage_bench, stdout);
            return EXIT_OK;
        }
        if (!val)
            return cli_fail(EXIT_USAGE, "usage", "'%s' needs a value (see tpusim bench --help)", arg);
        if (!strcmp(arg, "--array"))
            rc = parse_list(arg, val, 1, 512, arrays, 8), n_arrays = -rc;
        else if (!strcmp(arg, "--sizes"))
            rc = parse_list(arg, val, 1, 65535, sizes, 16), n_sizes = -rc;
        else if (!strcmp(arg, "--repeat"))
            rc = parse_u32(val, 1, 99, &repeat) ? bad_value(arg, val, "1..99") : 0;
        else if (!strcmp(arg, "--mem-latency"))
            rc = parse_u32(val, 1, TPU_MEM_LATENCY_MAX, &o.mem_latency)
                     ? bad_limit(arg, val, "a cycle count", TPU_MEM_LATENCY_MAX) : 0;
        else if (!strcmp(arg, "--mem-bandwidth"))
            rc = parse_u32(val, 1, TPU_MEM_BANDWIDTH_MAX, &o.mem_bandwidth)
                     ? bad_limit(arg, val, "bytes per cycle", TPU_MEM_BANDWIDTH_MAX) : 0;
        else
            return cli_fail(EXIT_USAGE, "usage", "unknown option '%s' (see tpusim bench --help)", arg);
        if (rc > 0)
            return rc;
        i++;
    }
    uint32_t built[64];
    const int n_built = tpu_array_sizes(built, 64);
    printf("%5s %18s %13s %8s %13s %8s %14s\n", "N", "M x K x N", "cycles", "util %",
           "lower bound", "ratio", "cycles/s");
    int rc = 0;
    for (int ai = 0; ai < n_arrays && !rc; ai++) {
        int have = 0;
        for (int j = 0; j < n_built; j++)
            have |= built[j] == arrays[ai];
        if (!have) {
            printf("%5u (not built: make ARRAY=\"... %u\")\n", arrays[ai], arrays[ai]);
            continue;
        }
        for (int si = 0; si < n_sizes && !rc; si++) {
            o.array_n = arrays[ai];
            o.m = o.k = o.n = sizes[si];
            cli_problem p = {0};
            void *c = NULL;
            double speed[99];
            report_figures f = {0};
            uint64_t cycles = 0;
            rc = random_problem(&o, &p);
            if (!rc && !(c = malloc((size_t)p.m * p.n * 4)))
                rc = cli_fail(EXIT_USAGE, "memory", "out of host memory for C");
            for (uint32_t r = 0; r < repeat && !rc; r++) {
                cli_gemm_result res;
                rc = run_device(&o, &p, c, &res);
                if (!rc)
                    rc = check_reference(&p, c);
                if (rc)
                    break;
                const report_run rep = {.m = p.m, .k = p.k, .n = p.n, .info = res.info,
                                        .perf = res.perf};
                f = report_derive(&rep);
                if (r && res.perf.cycles != cycles)
                    rc = cli_fail(EXIT_DEVICE, "bench", "cycle counts differ between runs: %llu, %llu",
                              (unsigned long long)cycles, (unsigned long long)res.perf.cycles);
                cycles = res.perf.cycles;
                speed[r] = f.speed;
            }
            if (!rc) {
                qsort(speed, repeat, sizeof *speed, cmp_double);
                char shape[40];
                snprintf(shape, sizeof shape, "%u x %u x %u", p.m, p.k, p.n);
                printf("%5u %18s %13llu %8.2f %13.0f %8.3f %14.0f\n", o.array_n, shape,
                       (unsigned long long)cycles, f.utilization, f.bound, f.ratio,
                       speed[repeat / 2]);
                fflush(stdout);
            }
            free(c);
            problem_free(&p);
        }
    }
    return rc;
}

static void print_version(void)
{
    uint32_t sizes[64];
    const int n = tpu_array_sizes(sizes, 64);
    printf("tpusim " TOOL_VERSION " (ISA %u.%u; array sizes built:", TPU_VERSION >> 16,
           TPU_VERSION & 0xFFFF);
    for (int i = 0; i < n; i++)
        printf(" %u", sizes[i]);
    printf(")\n");
}

int main(int argc, char **argv)
{
    tpuio_remove_on_signals(); /* Ctrl-C never leaves a half-written output or trace */
    if (argc < 2)
        return cli_fail(EXIT_USAGE, "usage", "no command (tpusim --help lists them)");
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(usage_main, stdout);
        fputs("\n", stdout);
        fputs(usage_gemm, stdout);
        fputs("\n", stdout);
        fputs(usage_bench, stdout);
        fputs("\n", stdout);
        fputs(usage_run, stdout);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        print_version();
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "gemm"))
        return cmd_gemm(argc - 2, argv + 2);
    if (!strcmp(argv[1], "bench"))
        return cmd_bench(argc - 2, argv + 2);
    if (!strcmp(argv[1], "run"))
        return cmd_run(argc - 2, argv + 2);
    return cli_fail(EXIT_USAGE, "usage", "unknown command '%s' (tpusim --help lists them)", argv[1]);
}

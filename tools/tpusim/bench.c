/* bench.c - tpusim bench: random square GEMMs on every array size asked for, each checked like
 * tpusim gemm, as one table. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/tpusim/cli.h"
#include "tools/tpusim/report.h"

const char usage_bench[] =
    "usage: tpusim bench [--array N,...] [--sizes S,...] [--repeat R]\n"
    "                    [--mem-latency CYCLES] [--mem-bandwidth BYTES]\n"
    "\n"
    "Random S x S x S GEMMs (int8 in, int32 out), each checked like tpusim gemm, for every array\n"
    "size N: cycles, MXU utilization, cycles over the lower bound max(compute, memory), and\n"
    "simulated cycles per second (the median of R runs; cycle counts are deterministic).\n"
    "defaults: --array 16,32 (those built) --sizes 64,128,256,512,1024 --repeat 3\n";

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

int cmd_bench(int argc, char **argv)
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

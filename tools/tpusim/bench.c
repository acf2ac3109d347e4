/* bench.c - tpusim bench: random square GEMMs (int8, bf16 or both side by side), or the
 * convolution layers of a few networks, on every array size asked for, each checked against the
 * golden model (GEMMs against a plain C GEMM too), as one table. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/tpusim/gemm.h"

const char usage_bench[] =
    "usage: tpusim bench [--array N,...] [--sizes S,...] [--dtype int8,bf16] [--conv]\n"
    "                    [--repeat R] [--mem-latency CYCLES] [--mem-bandwidth BYTES]\n"
    "\n"
    "Random S x S x S GEMMs (int8 in, int32 out; bf16: bf16 in, fp32 out), each checked like\n"
    "tpusim gemm, for every array size N: cycles, MXU utilization, cycles over the lower bound\n"
    "max(compute, memory), and simulated cycles per second (the median of R runs; cycle counts\n"
    "are deterministic). With --dtype int8,bf16 each size runs in both, and the bf16 row adds\n"
    "its cycles/s over the int8 row's, measured in the same run.\n"
    "--conv: the same for convolutions (random int8 operands, bias, ReLU, int8 output, checked\n"
    "against the golden model): the MNIST CNN's two layers (batch 16, the second max-pooled) and\n"
    "ResNet-style 3 x 3 layers 56x56x64 -> 64 and 14x14x256 -> 256 (batch 1, padding 1).\n"
    "defaults: --array 16,32 (those built) --sizes 64,128,256,512,1024 --dtype int8 --repeat 3\n";

/* A comma-separated list of at most max whole numbers in [min, maxv]: returns minus their count,
 * or EXIT_USAGE (message printed). */
static int parse_list(const char *opt, const char *s, uint32_t min, uint32_t maxv, uint32_t *out,
                      int max)
{
    int n = 0;
    char buf[256];
    if (strlen(s) >= sizeof buf)
        return cli_bad_value(opt, s, "a short list");
    strcpy(buf, s);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (n == max || cli_u32(t, min, maxv, &out[n]))
            return cli_bad_value(opt, s, "a comma-separated list of whole numbers");
        n++;
    }
    return n ? -n : cli_bad_value(opt, s, "a non-empty list");
}

/* --dtype: a comma-separated list of int8 and bf16 (the rows run int8 first either way). */
static int parse_dtypes(const char *s, int *int8, int *bf16)
{
    const char *p = s;
    *int8 = *bf16 = 0;
    for (;;) {
        const size_t len = strcspn(p, ",");
        if (len == 4 && !strncmp(p, "int8", 4))
            *int8 = 1;
        else if (len == 4 && !strncmp(p, "bf16", 4))
            *bf16 = 1;
        else
            return cli_bad_value("--dtype", s, "int8, bf16 or int8,bf16");
        if (!p[len])
            return 0;
        p += len + 1;
    }
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The convolution layers of --conv: k x k kernels, stride 1, padding pad, max pooling pool x pool
 * with stride pool (none: 0). */
typedef struct {
    const char *name;
    uint32_t batch, h, w, c, cout, k, pad, pool;
} conv_layer;
static const conv_layer conv_layers[] = {
    {"MNIST conv1", 16, 28, 28, 1, 32, 3, 0, 0},
    {"MNIST conv2+pool", 16, 26, 26, 32, 64, 3, 0, 2},
    {"ResNet 3x3", 1, 56, 56, 64, 64, 3, 1, 0},
    {"ResNet 3x3", 1, 14, 14, 256, 256, 3, 1, 0},
};

/* One row of the table: a GEMM of size (bf16 or int8), or conv layer `layer`, on
 * o->run.device.array_n. */
typedef struct {
    int conv, bf16;
    uint32_t size, layer;
} bench_row;

/* Runs row once: its cost in *cost and what it measured in *res. */
static int run_row(const gemm_options *o, const bench_row *row, tpu_cost *cost, gemm_result *res)
{
    int rc;
    if (!row->conv) {
        gemm_options g = *o;
        g.m = g.k = g.n = row->size;
        g.bf16 = row->bf16;
        gemm_problem p = {0};
        void *c = NULL;
        rc = random_problem(&g, &p);
        if (!rc && !(c = malloc((size_t)p.m * p.n * 4)))
            rc = cli_fail(EXIT_USAGE, "memory", "out of host memory for C");
        if (!rc)
            rc = run_device(&g, &p, c, res);
        if (!rc)
            rc = check_reference(&p, res->info.array_n, c);
        const tpu_gemm gm = {.m = p.m, .k = p.k, .n = p.n, .flags = p.bf16 ? TPU_GEMM_BF16 : 0};
        if (!rc)
            tpu_gemm_cost(&res->info, &gm, cost);
        free(c);
        problem_free(&p);
        return rc;
    }
    const conv_layer *l = &conv_layers[row->layer];
    const uint32_t pool = l->pool;
    const tpu_conv2d v = {.flags = TPU_GEMM_BIAS | TPU_GEMM_RELU | TPU_GEMM_OUT_INT8 |
                                   (pool ? TPU_CONV_POOL : 0),
                          .batch = l->batch,
                          .h = l->h,
                          .w = l->w,
                          .c = l->c,
                          .kh = l->k,
                          .kw = l->k,
                          .cout = l->cout,
                          .stride_h = 1,
                          .stride_w = 1,
                          .pad_top = l->pad,
                          .pad_bottom = l->pad,
                          .pad_left = l->pad,
                          .pad_right = l->pad,
                          .pool_h = pool,
                          .pool_w = pool,
                          .pool_stride_h = pool,
                          .pool_stride_w = pool};
    gemm_conv p = {0};
    void *out = NULL;
    rc = random_conv(&v, o->run.device.array_n, o->seed, &p);
    if (!rc && !(out = malloc(p.out_bytes)))
        rc = cli_fail(EXIT_USAGE, "memory", "out of host memory for the output");
    if (!rc)
        rc = run_conv(o, &p, out, res);
    if (!rc)
        tpu_conv2d_cost(&res->info, &v, cost);
    free(out);
    conv_free(&p);
    return rc;
}

/* Runs row repeat times (the cycles must not change) and prints its line; its median cycles/s
 * in *median, and over int8_speed's (the same size's int8 row; 0: none) at the line's end. */
static int bench_line(const gemm_options *o, const bench_row *row, uint32_t repeat,
                      double int8_speed, double *median)
{
    double speed[99];
    uint64_t cycles = 0;
    tpu_cost cost = {0};
    for (uint32_t r = 0; r < repeat; r++) {
        gemm_result res;
        const int rc = run_row(o, row, &cost, &res);
        if (rc)
            return rc;
        if (r && res.perf.cycles != cycles)
            return cli_fail(EXIT_DEVICE, "bench", "cycle counts differ between runs: %llu, %llu",
                            (unsigned long long)cycles, (unsigned long long)res.perf.cycles);
        cycles = res.perf.cycles;
        speed[r] = res.perf.wall_seconds > 0 ? (double)cycles / res.perf.wall_seconds : NAN;
    }
    qsort(speed, repeat, sizeof *speed, cmp_double);
    char what[64];
    if (row->conv) {
        const conv_layer *l = &conv_layers[row->layer];
        snprintf(what, sizeof what, "%s %u x %ux%ux%u->%u", l->name, l->batch, l->h, l->w, l->c,
                 l->cout);
    } else {
        snprintf(what, sizeof what, "%u x %u x %u", row->size, row->size, row->size);
    }
    *median = speed[repeat / 2];
    printf("%5u %5s %*s %13llu %8.2f %13.0f %8.3f %14.0f", o->run.device.array_n,
           row->bf16 ? "bf16" : "int8", row->conv ? 40 : 18, what, (unsigned long long)cycles,
           100 * cost.ideal_cycles / (double)cycles, cost.bound_cycles,
           (double)cycles / cost.bound_cycles, *median);
    if (int8_speed > 0)
        printf(" %9.2f", *median / int8_speed);
    printf("\n");
    fflush(stdout);
    return 0;
}

int cmd_bench(int argc, char **argv)
{
    uint32_t arrays[8] = {16, 32}, sizes[16] = {64, 128, 256, 512, 1024}, repeat = 3;
    int n_arrays = 2, n_sizes = 5, conv = 0, int8 = 1, bf16 = 0, opt, rc = 0;
    gemm_options o = {.random = 1, .run.quiet = 1, .seed = 1};
    enum { OPT_SIZES = CLI_OPT_OWN, OPT_CONV, OPT_REPEAT, OPT_DTYPE };
    static const struct option opts[] = {
        {"array", required_argument, NULL, CLI_OPT_ARRAY}, /* a list of them here */
        {"mem-latency", required_argument, NULL, CLI_OPT_MEM_LATENCY},
        {"mem-bandwidth", required_argument, NULL, CLI_OPT_MEM_BANDWIDTH},
        {"sizes", required_argument, NULL, OPT_SIZES},
        {"dtype", required_argument, NULL, OPT_DTYPE},
        {"conv", no_argument, NULL, OPT_CONV},
        {"repeat", required_argument, NULL, OPT_REPEAT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    while (rc <= 0 && (opt = cli_next(argc, argv, ":h", opts, "tpusim bench --help")) != -1) {
        const char *val = optarg;
        switch (opt) {
        case '?': return EXIT_USAGE;
        case 'h': printf("%s%s", usage_bench, CLI_EXIT_HELP); return EXIT_OK;
        case OPT_CONV: conv = 1; break;
        case CLI_OPT_ARRAY:
            rc = parse_list("--array", val, 1, 512, arrays, 8);
            n_arrays = -rc;
            break;
        case OPT_SIZES:
            rc = parse_list("--sizes", val, 1, 65535, sizes, 16);
            n_sizes = -rc;
            break;
        case OPT_DTYPE: rc = parse_dtypes(val, &int8, &bf16); break;
        case OPT_REPEAT:
            rc = cli_u32(val, 1, 99, &repeat) ? cli_bad_value("--repeat", val, "1..99") : 0;
            break;
        default: rc = cli_device_option(opt, val, &o.run.device);
        }
    }
    if (rc > 0)
        return rc;
    if (optind < argc)
        return cli_unexpected(argv[optind], "tpusim bench --help");
    if (conv && bf16)
        return cli_fail(EXIT_USAGE, "usage",
                        "--conv runs int8 convolutions; --dtype bf16 is for "
                        "GEMMs");
    uint32_t built[64];
    const int n_built = tpu_array_sizes(built, 64);
    printf("%5s %5s %*s %13s %8s %13s %8s %14s%s\n", "N", "dtype", conv ? 40 : 18,
           conv ? "layer batch x HxWxC->Cout (3x3 kernels)" : "M x K x N", "cycles", "util %",
           "lower bound", "ratio", "cycles/s", int8 && bf16 ? " bf16/int8" : "");
    const int n_rows = conv ? (int)(sizeof conv_layers / sizeof conv_layers[0]) : n_sizes;
    rc = 0;
    for (int ai = 0; ai < n_arrays && !rc; ai++) {
        int have = 0;
        for (int j = 0; j < n_built; j++)
            have |= built[j] == arrays[ai];
        if (!have) {
            printf("%5u (not built: make ARRAY=\"... %u\")\n", arrays[ai], arrays[ai]);
            continue;
        }
        o.run.device.array_n = arrays[ai];
        for (int r = 0; r < n_rows && !rc; r++) {
            double int8_speed = 0, bf16_speed;
            const bench_row row = {conv, 0, conv ? 0 : sizes[r], (uint32_t)r};
            if (int8)
                rc = bench_line(&o, &row, repeat, 0, &int8_speed);
            const bench_row row_bf16 = {conv, 1, sizes[r], (uint32_t)r};
            if (bf16 && !rc)
                rc = bench_line(&o, &row_bf16, repeat, int8_speed, &bf16_speed);
        }
    }
    return rc;
}

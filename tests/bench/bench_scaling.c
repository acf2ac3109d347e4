/* bench_scaling.c - make bench's multi-core table (issue 11): the MNIST MLP and CNN packages on
 * chips of 1, 2, 4 and 8 cores (runtime/tpurt.h, tpurt_run_batches), at the default memory
 * bandwidth and at a quarter of it. Figures per configuration: the chip's simulated cycles per
 * 256 digits, digits per second at 940 MHz (TPU v3's clock), the speed-up over one core, the share
 * of the cores' cycles their memory requests lost to other cores, and the wall time simulating.
 * Then the simulation's cost: host seconds per simulated cycle on C cores against one core
 * (medians of three runs). Every run is verified against the golden models, and each scheme's
 * predictions must not change with the number of cores.
 *
 * usage: bench_scaling BENCH_DIR MNIST_DIR CNN_DIR
 *   BENCH_DIR holds mlp_b32.tpub .. mlp_b256.tpub and cnn_b32.tpub .. cnn_b256.tpub (make bench
 *   compiles them from the models' HLO at those batches);
 *   --cost-only prints the simulation's cost alone. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/npy.h"
#include "io/tpuio.h"
#include "runtime/tpurt.h"

#define GLOBAL_BATCH 256u
#define CLOCK_HZ 940e6
#define MAX_CORES 8u

/* The digits as the packages take them: float32(u8) / 255, one row of `row` floats each. */
typedef struct {
    float *x;
    uint64_t n, row;
} digits;

static int load_digits(const char *path, digits *d)
{
    npy_array a;
    char err[256];
    if (npy_load(path, &a, err, sizeof err) || a.dtype != NPY_UINT8 || a.ndim < 2) {
        fprintf(stderr, "bench_scaling: %s: %s\n", path, a.dtype != NPY_UINT8 ? "not uint8" : err);
        return -1;
    }
    d->n = a.shape[0];
    d->row = a.count / d->n;
    d->x = malloc(a.count * sizeof *d->x);
    if (!d->x)
        return -1;
    for (uint64_t i = 0; i < a.count; i++)
        d->x[i] = (float)((const uint8_t *)a.data)[i] / 255.0f;
    npy_free(&a);
    return 0;
}

/* One configuration's figures. */
typedef struct {
    uint64_t images, device_cycles, core_cycles, stall_cycles;
    double wall;
    uint8_t *pred; /* argmax per digit, in digit order */
} result;

/* Runs `rounds` rounds of `cores` batches each of the package at path on a chip of that many
 * cores (bandwidth bytes per cycle): batch j of a round takes the next package batch of digits,
 * wrapping around the set. */
static int run(const char *path, const digits *d, uint32_t cores, uint32_t bandwidth,
               int weights_per_core, uint64_t rounds, result *r)
{
    const tpusim_config device = {.cores = cores, .mem_bytes_per_cycle = bandwidth};
    tpurt_options o;
    tpurt_options_default(&o);
    o.device = &device;
    o.weights_per_core = weights_per_core;
    tpurt *rt;
    char err[1024];
    if (tpurt_load(path, &o, &rt, err, sizeof err) != TPURT_OK) {
        fprintf(stderr, "bench_scaling: %s\n", err);
        return -1;
    }
    tpurt_tensor in, out;
    tpurt_get_input(rt, 0, &in);
    tpurt_get_output(rt, 0, &out);
    const uint64_t batch = (uint64_t)in.dims[0], classes = out.elements / batch;
    memset(r, 0, sizeof *r);
    r->images = rounds * cores * batch;
    r->pred = malloc(r->images);
    float *x = malloc(cores * in.bytes), *y = malloc(cores * out.bytes);
    int rc = !r->pred || !x || !y || in.elements != batch * d->row ? -1 : 0;
    const double t0 = tpuio_seconds();
    for (uint64_t round = 0; round < rounds && !rc; round++) {
        const void *ins[MAX_CORES], *const *inp[MAX_CORES];
        void *outs[MAX_CORES], *const *outp[MAX_CORES];
        for (uint32_t c = 0; c < cores; c++) {
            float *xc = x + c * in.elements;
            for (uint64_t i = 0; i < batch; i++) {
                const uint64_t digit = ((round * cores + c) * batch + i) % d->n;
                memcpy(xc + i * d->row, d->x + digit * d->row, d->row * sizeof *xc);
            }
            ins[c] = xc;
            outs[c] = y + c * out.elements;
            inp[c] = &ins[c];
            outp[c] = &outs[c];
        }
        if (tpurt_run_batches(rt, cores, inp, 1, outp, 1) != TPURT_OK) {
            fprintf(stderr, "bench_scaling: %s: %s\n", path, tpurt_last_error(rt));
            rc = -1;
            break;
        }
        for (uint64_t i = 0; i < cores * batch; i++) {
            const float *row = y + i * classes;
            uint8_t best = 0;
            for (uint8_t k = 1; k < classes; k++)
                best = row[k] > row[best] ? k : best;
            r->pred[round * cores * batch + i] = best;
        }
    }
    r->wall = tpuio_seconds() - t0;
    tpurt_stats s;
    tpurt_get_stats(rt, &s);
    r->device_cycles = s.device_cycles;
    for (uint32_t c = 0; c < cores && !rc; c++) {
        tpurt_core_stats cs;
        tpurt_get_core_stats(rt, c, &cs);
        r->core_cycles += cs.cycles;
        r->stall_cycles += cs.mem_stall_cycles;
    }
    if (!rc && s.verified != s.submissions) {
        fprintf(stderr, "bench_scaling: %s: %llu of %llu submissions verified\n", path,
                (unsigned long long)s.verified, (unsigned long long)s.submissions);
        rc = -1;
    }
    free(x);
    free(y);
    tpurt_close(rt);
    return rc;
}

/* A scheme: which package on C cores, and how many rounds make `images` digits. */
typedef struct {
    const char *title;
    const digits *d;
    char path[MAX_CORES + 1][512]; /* by cores */
    uint64_t rounds[MAX_CORES + 1];
} scheme;

static const uint32_t kCores[] = {1, 2, 4, 8};
static const uint32_t kBandwidth[] = {64, 16};

static int table(const scheme *s)
{
    printf("\n%s\n", s->title);
    printf("  %-10s %5s %14s %12s %13s %9s %10s %9s\n", "bandwidth", "cores", "cycles/256 dig.",
           "digits/s", "speed-up", "stalls", "wall s", "same pred");
    for (size_t b = 0; b < sizeof kBandwidth / sizeof *kBandwidth; b++) {
        double one = 0;
        uint8_t *first = NULL;
        uint64_t first_n = 0;
        for (size_t i = 0; i < sizeof kCores / sizeof *kCores; i++) {
            const uint32_t c = kCores[i];
            result r;
            if (run(s->path[c], s->d, c, kBandwidth[b], 0, s->rounds[c], &r))
                return -1;
            const double per256 = (double)r.device_cycles * GLOBAL_BATCH / (double)r.images;
            if (c == 1)
                one = per256;
            /* The digits both runs classified: the first min(images) of the set, in order. */
            const uint64_t n = first && first_n < r.images ? first_n : r.images;
            const int same = !first || memcmp(first, r.pred, n) == 0;
            printf("  %3u B/cyc. %5u %15.0f %12.0f %12.2fx %8.1f%% %10.2f %9s\n", kBandwidth[b], c,
                   per256, CLOCK_HZ * GLOBAL_BATCH / per256, one / per256,
                   100.0 * (double)r.stall_cycles / (double)r.core_cycles, r.wall,
                   same ? "yes" : "NO");
            if (!same) {
                fprintf(stderr, "bench_scaling: predictions changed with %u cores\n", c);
                return -1;
            }
            if (!first) {
                first = r.pred;
                first_n = r.images;
            } else {
                free(r.pred);
            }
        }
        free(first);
    }
    return 0;
}

/* The constants once in device memory for every core, or a copy per core: the chip's cycles for
 * the same batches (each core its own batch of 256 digits). */
static int weights(const char *path, const digits *d)
{
    printf("\nweights shared or per core (%s, each core its own batch of 256 digits, 64 "
           "B/cycle):\n",
           path);
    printf("  %5s %16s %16s\n", "cores", "cycles, shared", "cycles, per core");
    for (size_t i = 1; i < sizeof kCores / sizeof *kCores; i++) {
        uint64_t cycles[2];
        for (int per_core = 0; per_core < 2; per_core++) {
            result r;
            if (run(path, d, kCores[i], 64, per_core, 1, &r))
                return -1;
            free(r.pred);
            cycles[per_core] = r.device_cycles;
        }
        printf("  %5u %16llu %16llu\n", kCores[i], (unsigned long long)cycles[0],
               (unsigned long long)cycles[1]);
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Host seconds per simulated cycle on C cores, median of three, against one core's. */
static int sim_cost(const char *path, const digits *d)
{
    printf("\nsimulation cost (%s, each core a batch of 256 digits; medians of 3 runs):\n", path);
    printf("  %5s %16s %18s %12s\n", "cores", "sim. cycles", "us per sim. cycle", "vs 1 core");
    double one = 0;
    for (size_t i = 0; i < sizeof kCores / sizeof *kCores; i++) {
        double per[3];
        uint64_t cycles = 0;
        for (int rep = 0; rep < 3; rep++) {
            result r;
            if (run(path, d, kCores[i], 64, 0, 1, &r))
                return -1;
            free(r.pred);
            cycles = r.device_cycles;
            per[rep] = r.wall / (double)r.device_cycles;
        }
        qsort(per, 3, sizeof *per, cmp_double);
        if (i == 0)
            one = per[1];
        printf("  %5u %16llu %18.3f %11.2fx\n", kCores[i], (unsigned long long)cycles, 1e6 * per[1],
               per[1] / one);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const int cost_only = argc == 5 && !strcmp(argv[1], "--cost-only");
    argv += cost_only;
    if (argc != 4 + cost_only) {
        fprintf(stderr, "usage: bench_scaling [--cost-only] BENCH_DIR MNIST_DIR CNN_DIR\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0); /* the rows as they come: the CNN's take minutes */
    digits mlp_x, cnn_x;
    char path[512];
    snprintf(path, sizeof path, "%s/test_x_u8.npy", argv[2]);
    if (load_digits(path, &mlp_x))
        return 1;
    snprintf(path, sizeof path, "%s/test_x_u8.npy", argv[3]);
    if (load_digits(path, &cnn_x))
        return 1;
    printf("multi-core MNIST at a global batch of %u digits; digits/s at %.0f MHz; stalls: share "
           "of the cores' cycles their memory requests lost to other cores\n",
           GLOBAL_BATCH, CLOCK_HZ / 1e6);
    scheme split = {.title = "MLP, the batch split across the cores (DistributedSampler): one "
                             "shard of 256/C digits per core, compiled at that batch",
                    .d = &mlp_x};
    scheme whole = {.title = "MLP, whole batches per core: each core its own batch of 256 digits",
                    .d = &mlp_x};
    scheme cnn_split = {.title =
                            "CNN (PyTorch's example network, exported by JAX), the batch split "
                            "across the cores: 256/C digits per core, compiled at that batch",
                        .d = &cnn_x};
    scheme cnn_whole = {
        .title = "CNN, whole batches per core: each core its own batch of 256 digits", .d = &cnn_x};
    for (size_t i = 0; i < sizeof kCores / sizeof *kCores; i++) {
        const uint32_t c = kCores[i];
        snprintf(split.path[c], sizeof split.path[c], "%s/mlp_b%u.tpub", argv[1], GLOBAL_BATCH / c);
        split.rounds[c] = 4; /* 1,024 digits */
        snprintf(whole.path[c], sizeof whole.path[c], "%s/mlp_b%u.tpub", argv[1], GLOBAL_BATCH);
        whole.rounds[c] = 2;
        snprintf(cnn_split.path[c], sizeof cnn_split.path[c], "%s/cnn_b%u.tpub", argv[1],
                 GLOBAL_BATCH / c);
        cnn_split.rounds[c] = 1;
        snprintf(cnn_whole.path[c], sizeof cnn_whole.path[c], "%s/cnn_b%u.tpub", argv[1],
                 GLOBAL_BATCH);
        cnn_whole.rounds[c] = 1;
    }
    if ((!cost_only && (table(&split) || table(&whole) || weights(whole.path[1], &mlp_x) ||
                        table(&cnn_split) || table(&cnn_whole))) ||
        sim_cost(whole.path[1], &mlp_x))
        return 1;
    free(mlp_x.x);
    free(cnn_x.x);
    return 0;
}

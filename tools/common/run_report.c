/* run_report.c - what a run of a package reports (tpusim run, tools/tpu_vp): the classification
 * figures (--labels, --expect,
 * --show), the summary on stdout and the --json report, and the output files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "io/npy.h"
#include "tools/common/run.h"

/* ------------------------------------------------------------- classes -- */

/* numpy's argmax of row r: the first maximum, or the first NaN. */
static uint64_t argmax(const npy_array *a, uint64_t r)
{
    const uint64_t n = a->shape[1];
    uint64_t best = 0;
    double v = run_npy_value(a, r * n);
    for (uint64_t j = 1; j < n && !isnan(v); j++) {
        const double x = run_npy_value(a, r * n + j);
        if (isnan(x) || x > v) {
            v = x;
            best = j;
        }
    }
    return best;
}

/* Checks that a (loaded from path) holds one class per image, integers, at least `images`. */
static int check_classes(const char *opt, const char *path, uint64_t images, const npy_array *a)
{
    char s[200];
    if (!run_npy_integer(a->dtype))
        return cli_fail(EXIT_USAGE, path,
                        "dtype %s; %s needs integer classes (int8, uint8 or int32)",
                        cli_dtype(a->dtype), opt);
    if (a->ndim != 1 || a->shape[0] < images)
        return cli_fail(EXIT_USAGE, path,
                        "shape %s; %s needs one class per image: [%llu] (or more, the rest unused)",
                        cli_shape(a, s, sizeof s), opt, (unsigned long long)images);
    return 0;
}

int run_setup_classes(const run_options *o, tpurt *rt, const run_plan *pl, const npy_array *res,
                      run_classes *cl)
{
    if (!o->labels && !o->expect && !o->have_show)
        return 0;
    const char *opt = o->labels ? "--labels" : o->expect ? "--expect" : "--show";
    char s1[200];
    tpurt_tensor first;
    const int have = tpurt_get_output(rt, 0, &first) == TPURT_OK;
    if (!have || first.rank != 2 || !first.dims[1])
        return cli_fail(EXIT_USAGE, opt,
                        "needs a first output [images, classes]; the package's "
                        "is %s",
                        have ? run_sig_str(&first, s1, sizeof s1) : "missing");
    cl->out = &res[0];
    cl->images = res[0].shape[0];
    if (o->have_show && (o->show >= cl->images || o->show >= pl->images))
        return cli_fail(EXIT_USAGE, "--show", "sample %llu, but there are %llu images",
                        (unsigned long long)o->show, (unsigned long long)pl->images);
    int rc = 0;
    if (o->labels)
        rc = check_classes("--labels", o->labels, cl->images, &cl->labels);
    if (!rc && o->expect)
        rc = check_classes("--expect", o->expect, cl->images, &cl->expect);
    return rc;
}

static void count_classes(run_classes *cl)
{
    for (uint64_t i = 0; cl->out && i < cl->images; i++) {
        const double p = (double)argmax(cl->out, i);
        cl->correct += cl->labels.data && run_npy_value(&cl->labels, i) == p;
        cl->agree += cl->expect.data && run_npy_value(&cl->expect, i) == p;
        cl->ref_correct += cl->labels.data && cl->expect.data &&
                           run_npy_value(&cl->labels, i) == run_npy_value(&cl->expect, i);
    }
}

/* Sample k of the first input, one character per element when it is a square image. */
static void show_sample(const run_input *in, const run_classes *cl, uint64_t k)
{
    static const char ramp[] = " .:-=+*#%@";
    const uint64_t n = in->row_elements, first = k * n;
    const uint64_t side = (uint64_t)llround(sqrt((double)n));
    printf("sample %llu of %s:\n", (unsigned long long)k, in->path);
    if (side * side == n) {
        double max = 0;
        for (uint64_t i = 0; i < n; i++)
            max = fmax(max, run_npy_value(&in->arr, first + i));
        for (uint64_t r = 0; r < side; r++) {
            for (uint64_t col = 0; col < side; col++) {
                const double v = run_npy_value(&in->arr, first + r * side + col);
                const int level = max > 0 && v > 0 ? (int)lround(v / max * 9) : 0;
                putchar(ramp[level > 9 ? 9 : level]);
            }
            putchar('\n');
        }
    }
    printf("predicted %llu", (unsigned long long)argmax(cl->out, k));
    if (cl->labels.data)
        printf(", label %.0f", run_npy_value(&cl->labels, k));
    if (cl->expect.data)
        printf(", reference %.0f", run_npy_value(&cl->expect, k));
    printf("\n");
}

/* -------------------------------------------------------------- report -- */

/* What the summary and the JSON report show. */
typedef struct {
    const run_options *o;
    const run_plan *pl;
    const run_classes *cl;
    tpu_info info;
    tpurt_stats stats;
    tpurt_layer *layers;
    uint32_t n_layers;
    tpurt_host_op *host; /* the host program's work, by opcode */
    uint32_t n_host;
    uint64_t device_macs, host_macs; /* all runs' */
    double wall_seconds;
    double job_seconds; /* of them, running the batches */
    uint32_t n_jobs;
    double ideal, bound;                     /* the layers' sums */
    tpurt_core_stats core[TPUSIM_CORES_MAX]; /* with --cores: each core's */
} run_summary;

/* The clock the chip's images per second assume: TPU v3's. */
#define RUN_CLOCK_MHZ 940.0

static json_t *fraction_json(uint64_t hits, uint64_t total)
{
    return json_pack("{s:I, s:I, s:o}", "correct", (json_int_t)hits, "total", (json_int_t)total,
                     "percent", cli_json_real(100 * cli_ratio((double)hits, (double)total)));
}

static json_t *flags_json(uint32_t f)
{
    json_t *a = json_array();
    static const struct {
        uint32_t flag;
        const char *name;
    } names[] = {{TPU_GEMM_BIAS, "bias"},         {TPU_GEMM_RELU, "relu"},
                 {TPU_GEMM_OUT_INT8, "out_int8"}, {TPU_GEMM_A_UNSIGNED, "a_unsigned"},
                 {TPU_GEMM_BF16, "bf16"},         {TPU_GEMM_OUT_BF16, "out_bf16"},
                 {TPU_CONV_POOL, "pool"}};
    for (size_t i = 0; a && i < sizeof names / sizeof names[0]; i++)
        if (f & names[i].flag)
            json_array_append_new(a, json_string(names[i].name));
    return a;
}

/* A convolution's geometry: input [batch, h, w, c] (NHWC), kernel, steps, padding (top,
 * bottom, left, right), pooling (null without) and output [batch, oh, ow, cout]. */
static json_t *conv_json(const tpurt_layer *l)
{
    const tpub_conv *v = l->conv;
    json_t *pool = v->flags & TPU_CONV_POOL
                       ? json_pack("{s:[I, I], s:[I, I]}", "window", (json_int_t)v->pool_h,
                                   (json_int_t)v->pool_w, "stride", (json_int_t)v->pool_stride_h,
                                   (json_int_t)v->pool_stride_w)
                       : json_null();
    return json_pack(
        "{s:[I, I, I, I], s:[I, I], s:I, s:[I, I], s:[I, I, I, I], s:o, "
        "s:[I, I, I, I]}",
        "input", (json_int_t)v->batch, (json_int_t)v->h, (json_int_t)v->w, (json_int_t)v->c,
        "kernel", (json_int_t)v->kh, (json_int_t)v->kw, "cout", (json_int_t)v->cout, "stride",
        (json_int_t)v->stride_h, (json_int_t)v->stride_w, "pad", (json_int_t)v->pad_top,
        (json_int_t)v->pad_bottom, (json_int_t)v->pad_left, (json_int_t)v->pad_right, "pool", pool,
        "output", (json_int_t)v->batch, (json_int_t)l->oh, (json_int_t)l->ow, (json_int_t)v->cout);
}

/* The chip's figures (--cores): its elapsed cycles (all batches), per image, images per second
 * at RUN_CLOCK_MHZ, and each core's. */
static json_t *chip_json(const run_summary *s)
{
    const tpurt_stats *t = &s->stats;
    const double elapsed = (double)t->device_cycles, images = (double)s->pl->images;
    json_t *cores = json_array();
    for (uint32_t k = 0; cores && k < s->o->dev.device.cores; k++) {
        const tpurt_core_stats *c = &s->core[k];
        json_array_append_new(
            cores, json_pack("{s:I, s:I, s:I, s:I, s:I, s:o}", "core", (json_int_t)k, "submissions",
                             (json_int_t)c->submissions, "cycles", (json_int_t)c->cycles,
                             "mxu_busy", (json_int_t)c->mxu_busy, "mem_stall_cycles",
                             (json_int_t)c->mem_stall_cycles, "mem_stall_percent",
                             cli_json_real(
                                 100 * cli_ratio((double)c->mem_stall_cycles, (double)c->cycles))));
    }
    return json_pack(
        "{s:I, s:b, s:{s:I, s:o, s:o, s:f, s:o}, s:o}", "cores", (json_int_t)s->o->dev.device.cores,
        "weights_per_core", s->o->weights_per_core, "chip", "elapsed_cycles",
        (json_int_t)t->device_cycles, "cycles_per_image", cli_json_real(cli_ratio(elapsed, images)),
        "cycles_over_elapsed", cli_json_real(cli_ratio((double)t->cycles, elapsed)), "clock_mhz",
        RUN_CLOCK_MHZ, "images_per_second",
        cli_json_real(cli_ratio(images * RUN_CLOCK_MHZ * 1e6, elapsed)), "per_core", cores);
}

/* The device's share of the model's multiply-accumulates (NaN when there are none). */
static double device_share(const run_summary *s)
{
    return cli_ratio((double)s->device_macs, (double)(s->device_macs + s->host_macs));
}

static json_t *summary_json(const run_summary *s)
{
    const tpurt_stats *t = &s->stats;
    const double batches = (double)s->pl->batches, cycles = (double)t->cycles;
    json_t *layers = json_array();
    for (uint32_t i = 0; layers && i < s->n_layers; i++) {
        const tpurt_layer *l = &s->layers[i];
        const int conv = l->kind == TPUB_OP_CONV2D, reduce = l->kind == TPURT_ALL_REDUCE;
        json_t *o = conv ? json_pack("{s:s, s:s, s:I}", "name", l->name, "fused", l->fused,
                                     "segment", (json_int_t)l->segment)
                         : json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I}", "name", l->name,
                                     "fused", l->fused, "segment", (json_int_t)l->segment, "gemm",
                                     (json_int_t)l->index, "m", (json_int_t)l->m, "k",
                                     (json_int_t)l->k, "n", (json_int_t)l->n);
        /* A GEMM's keys in the order they always had, then what a convolution adds. */
        json_object_update_new(
            o, json_pack("{s:o, s:I, s:I, s:I, s:I, s:f, s:o, s:o, s:s, s:I}", "flags",
                         flags_json(reduce ? 0 : l->flags), "macs", (json_int_t)l->macs, "bytes",
                         (json_int_t)l->bytes, "iterations", (json_int_t)l->iterations,
                         "submissions", (json_int_t)l->submissions, "cycles_per_batch",
                         (double)l->cycles / batches, "mxu_utilization_percent",
                         cli_json_real(100 * cli_ratio(l->ideal_cycles, (double)l->cycles)),
                         "cycles_over_bound",
                         cli_json_real(cli_ratio((double)l->cycles, l->bound_cycles)), "kind",
                         conv     ? "conv2d"
                         : reduce ? "all-reduce"
                                  : "gemm",
                         "op", (json_int_t)l->index));
        if (conv)
            json_object_update_new(o, conv_json(l));
        json_array_append_new(layers, o);
    }
    json_t *j = json_pack(
        "{s:s, s:I, s:o, s:I, s:I, s:I, s:o,"
        " s:{s:I, s:f, s:o}, s:o, s:o,"
        " s:{s:f, s:f, s:f, s:o, s:I, s:f, s:o}, s:I, s:I}",
        "package", s->o->package, "array_n", (json_int_t)s->info.array_n, "memory",
        cli_memory_json(&s->info), "batches", (json_int_t)s->pl->batches, "batch_rows",
        (json_int_t)s->pl->batch, "images", (json_int_t)s->pl->images, "layers", layers, "cycles",
        "total", (json_int_t)t->cycles, "per_batch", cycles / batches, "per_image",
        cli_json_real(cli_ratio(cycles, (double)s->pl->images)), "mxu_utilization_percent",
        cli_json_real(100 * cli_ratio(s->ideal, cycles)), "cycles_over_bound",
        cli_json_real(cli_ratio(cycles, s->bound)), "simulation", "wall_seconds", s->wall_seconds,
        "device_seconds", t->device_seconds, "host_seconds", t->host_seconds, "cycles_per_second",
        cli_json_real(cli_ratio(cycles, t->device_seconds)), "jobs", (json_int_t)s->n_jobs,
        "jobs_seconds", s->job_seconds, "cycles_per_second_all_jobs",
        cli_json_real(cli_ratio(cycles, s->job_seconds)), "submissions", (json_int_t)t->submissions,
        "bit_exact_submissions", (json_int_t)t->verified);
    json_t *host = json_array();
    for (uint32_t i = 0; host && i < s->n_host; i++)
        json_array_append_new(host, json_pack("{s:s, s:I, s:I, s:I}", "opcode", s->host[i].opcode,
                                              "count", (json_int_t)s->host[i].count, "macs",
                                              (json_int_t)s->host[i].macs, "bytes",
                                              (json_int_t)s->host[i].bytes));
    if (j)
        json_object_update_new(j, json_pack("{s:o, s:{s:I, s:I, s:o}}", "host_ops", host, "macs",
                                            "device", (json_int_t)s->device_macs, "host",
                                            (json_int_t)s->host_macs, "device_percent",
                                            cli_json_real(100 * device_share(s))));
    else
        json_decref(host);
    if (j && s->o->dev.device.cores)
        json_object_update_new(j, chip_json(s));
    const run_classes *cl = s->cl;
    if (j && cl->labels.data)
        json_object_set_new(j, "accuracy", fraction_json(cl->correct, cl->images));
    if (j && cl->expect.data)
        json_object_set_new(j, "agreement", fraction_json(cl->agree, cl->images));
    if (j && cl->labels.data && cl->expect.data)
        json_object_set_new(j, "reference_accuracy", fraction_json(cl->ref_correct, cl->images));
    return j;
}

/* v rounded, with thousands separators, or "-" when undefined; into buf (32 bytes). */
static const char *rounded(char *buf, double v)
{
    return isfinite(v) ? cli_group(buf, (uint64_t)llround(v)) : strcpy(buf, "-");
}

static void print_fraction(const char *label, uint64_t hits, uint64_t total, const char *what,
                           const char *path)
{
    printf(CLI_LABEL "%llu/%llu = %.2f %%", label, (unsigned long long)hits,
           (unsigned long long)total, 100 * cli_ratio((double)hits, (double)total));
    if (what)
        printf("  (%s %s)", what, path);
    printf("\n");
}

/* The table's shape column: a GEMM's m x k x n, a convolution's input -> output (NHWC), an
 * all-reduce's replicas x elements. */
static const char *layer_shape(const tpurt_layer *l, char buf[96])
{
    if (l->kind == TPURT_ALL_REDUCE)
        snprintf(buf, 96, "sum of %u x %u", l->m, l->n);
    else if (l->kind == TPUB_OP_CONV2D)
        snprintf(buf, 96, "%ux%ux%ux%u -> %ux%ux%ux%u", l->conv->batch, l->conv->h, l->conv->w,
                 l->conv->c, l->conv->batch, l->oh, l->ow, l->conv->cout);
    else
        snprintf(buf, 96, "%u x %u x %u", l->m, l->k, l->n);
    return buf;
}

/* The chip's lines (--cores): the cycles above are its submissions' summed, these its clock's. */
static void print_chip(const run_summary *s)
{
    const tpurt_stats *t = &s->stats;
    const double elapsed = (double)t->device_cycles, images = (double)s->pl->images;
    char b1[32], b2[32], b3[32], b4[32];
    printf(CLI_LABEL "%u on one memory port, batch b on core b %% %u; weights: %s\n",
           "cores:", s->o->dev.device.cores, s->o->dev.device.cores,
           s->o->weights_per_core ? "a copy per core" : "one copy, shared");
    printf(CLI_LABEL "%s  (%.2f cores busy at once, on average)\n",
           "chip elapsed cycles:", cli_group(b1, t->device_cycles),
           cli_ratio((double)t->cycles, elapsed));
    printf(CLI_LABEL "%s\n", "chip cycles per image:", rounded(b1, cli_ratio(elapsed, images)));
    printf(CLI_LABEL "%s at %.0f MHz\n",
           "images per second:", rounded(b1, cli_ratio(images * RUN_CLOCK_MHZ * 1e6, elapsed)),
           RUN_CLOCK_MHZ);
    printf("per core:\n  %4s %12s %14s %14s %14s %8s\n", "core", "submissions", "cycles",
           "MXU busy", "memory stalls", "stall %");
    for (uint32_t k = 0; k < s->o->dev.device.cores; k++) {
        const tpurt_core_stats *c = &s->core[k];
        printf("  %4u %12s %14s %14s %14s %8.1f\n", k, cli_group(b1, c->submissions),
               cli_group(b2, c->cycles), cli_group(b3, c->mxu_busy),
               cli_group(b4, c->mem_stall_cycles),
               100 * cli_ratio((double)c->mem_stall_cycles, (double)c->cycles));
    }
}

/* What the host program did, per batch, and the device's share of the MACs: a model whose
 * work is on the host says so here. */
static void print_host(const run_summary *s)
{
    const double batches = (double)s->pl->batches;
    char b1[32], b2[32], b3[32];
    if (!s->n_host)
        printf("host program, per batch:   no ops of its own (it moves the segments' data)\n");
    else
        printf("host program, per batch:\n  %-22s %10s %16s %14s\n", "op", "count", "MACs",
               "bytes");
    for (uint32_t i = 0; i < s->n_host; i++) {
        const tpurt_host_op *h = &s->host[i];
        printf("  %-22s %10s %16s %14s\n", h->opcode, rounded(b1, (double)h->count / batches),
               rounded(b2, (double)h->macs / batches), rounded(b3, (double)h->bytes / batches));
    }
    const double share = device_share(s);
    printf(CLI_LABEL "%.1f %%  (%s per batch; %s on the host)%s\n",
           "MACs on the device:", 100 * share, rounded(b1, (double)s->device_macs / batches),
           rounded(b2, (double)s->host_macs / batches),
           share < 0.5 ? "  most of the model's MACs run on the host" : "");
}

static void print_summary(const run_summary *s)
{
    const run_plan *pl = s->pl;
    const tpurt_stats *t = &s->stats;
    const double cycles = (double)t->cycles;
    char b1[32], b2[32];
    printf(CLI_LABEL "%s\n", "package:", s->o->package);
    printf(CLI_LABEL "%u x %u\n", "array:", s->info.array_n, s->info.array_n);
    cli_print_memory(stdout, &s->info);
    const uint64_t padding = pl->batches * pl->batch - pl->images;
    if (pl->batched)
        printf(CLI_LABEL "%llu of %llu rows each (%llu images",
               "batches:", (unsigned long long)pl->batches, (unsigned long long)pl->batch,
               (unsigned long long)pl->images);
    else
        printf(CLI_LABEL "1 (%llu images", "batches:", (unsigned long long)pl->images);
    if (pl->batched && padding)
        printf("; the last batch padded with %llu rows", (unsigned long long)padding);
    printf(")\n");

    int width = 5, shape_width = 20, convs = 0;
    bool loops = false; /* a column of iterations when a loop's dot sums several */
    for (uint32_t i = 0; i < s->n_layers; i++) {
        char shape[96];
        const int w = (int)strlen(s->layers[i].name);
        const int sw = (int)strlen(layer_shape(&s->layers[i], shape));
        width = w > width ? w : width;
        shape_width = sw > shape_width ? sw : shape_width;
        convs += s->layers[i].kind == TPUB_OP_CONV2D;
        loops |= s->layers[i].iterations > 1;
    }
    printf("layers, per batch:\n  %-*s %*s%*s %14s %11s %13s\n", width, "name", shape_width,
           "m x k x n", loops ? 11 : 0, loops ? "iterations" : "", "cycles", "MXU util %",
           "cycles/bound");
    const double batches = (double)pl->batches;
    for (uint32_t i = 0; i < s->n_layers; i++) {
        const tpurt_layer *l = &s->layers[i];
        char shape[96], iterations[32] = "";
        if (loops)
            snprintf(iterations, sizeof iterations, " %10u", l->iterations);
        printf("  %-*s %*s%s %14s %11.1f %13.3f\n", width, l->name, shape_width,
               layer_shape(l, shape), iterations, rounded(b1, (double)l->cycles / batches),
               100 * cli_ratio(l->ideal_cycles, (double)l->cycles),
               cli_ratio((double)l->cycles, l->bound_cycles));
    }
    if (convs)
        printf("convolutions (NHWC):\n");
    for (uint32_t i = 0; i < s->n_layers; i++) {
        const tpub_conv *v = s->layers[i].conv;
        if (!v)
            continue;
        printf("  %-*s kernel %ux%u, stride %ux%u, pad %u,%u,%u,%u", width, s->layers[i].name,
               v->kh, v->kw, v->stride_h, v->stride_w, v->pad_top, v->pad_bottom, v->pad_left,
               v->pad_right);
        if (v->flags & TPU_CONV_POOL)
            printf(", max pool %ux%u stride %ux%u", v->pool_h, v->pool_w, v->pool_stride_h,
                   v->pool_stride_w);
        printf("\n");
    }
    print_host(s);
    printf(CLI_LABEL "%s\n", "cycles per batch:", rounded(b1, cycles / batches));
    printf(CLI_LABEL "%s\n",
           "cycles per image:", rounded(b1, cli_ratio(cycles, (double)pl->images)));
    printf(CLI_LABEL "%.1f %%\n", "MXU utilization:", 100 * cli_ratio(s->ideal, cycles));
    printf(CLI_LABEL "%.3f\n", "cycles / lower bound:", cli_ratio(cycles, s->bound));
    if (s->o->dev.device.cores)
        print_chip(s);
    printf(CLI_LABEL "%s cycles/s  (%.3f s simulating)\n",
           "simulation speed:", rounded(b1, cli_ratio(cycles, t->device_seconds)),
           t->device_seconds);
    if (s->n_jobs > 1)
        printf(CLI_LABEL "%u, %s cycles/s together  (%.3f s running the batches)\n",
               "jobs:", s->n_jobs, rounded(b1, cli_ratio(cycles, s->job_seconds)), s->job_seconds);
    printf(CLI_LABEL "%.3f s\n", "wall time:", s->wall_seconds);
    printf(CLI_LABEL "%.3f s\n", "host program time:", t->host_seconds);
    printf(CLI_LABEL "%s/%s submissions\n",
           "bit-exact vs golden model:", cli_group(b1, t->verified), cli_group(b2, t->submissions));
    const run_classes *cl = s->cl;
    if (cl->labels.data)
        print_fraction("accuracy:", cl->correct, cl->images, "labels", s->o->labels);
    if (cl->expect.data)
        print_fraction("agreement:", cl->agree, cl->images, "reference", s->o->expect);
    if (cl->labels.data && cl->expect.data)
        print_fraction("reference accuracy:", cl->ref_correct, cl->images, NULL, NULL);
}

/* The --output files and the --json report, all or nothing. */
static int write_files(const run_options *o, const npy_array *res, const run_summary *s)
{
    tpuio_staged *files = calloc((size_t)o->n_outputs + 1, sizeof *files);
    if (!files)
        return cli_fail(EXIT_USAGE, "memory", "out of host memory");
    int rc = 0;
    for (uint32_t j = 0; j < o->n_outputs && !rc; j++) {
        size_t len;
        void *img = npy_encode(&res[j], 0, &len);
        rc = img ? cli_stage(&files[j], o->outputs[j], img, len)
                 : cli_fail(EXIT_USAGE, o->outputs[j], "out of host memory encoding output %u", j);
        free(img);
    }
    if (!rc && o->dev.json)
        rc = cli_stage_json(&files[o->n_outputs], o->dev.json, summary_json(s));
    rc = cli_commit(files, (int)o->n_outputs + 1, rc);
    free(files);
    return rc;
}

/* The jobs' statistics and layers summed into s. */
static void sum_jobs(const run_job *jobs, uint32_t n_jobs, run_summary *s)
{
    for (uint32_t j = 0; j < n_jobs; j++) {
        tpurt_stats t;
        tpurt_get_stats(jobs[j].rt, &t); /* open runtimes: the getters cannot fail */
        s->stats.runs += t.runs;
        s->stats.submissions += t.submissions;
        s->stats.verified += t.verified;
        s->stats.cycles += t.cycles;
        s->stats.device_cycles += t.device_cycles;
        s->stats.device_seconds += t.device_seconds;
        s->stats.host_seconds += t.host_seconds;
        if (!j)
            s->stats.trace_cycles = t.trace_cycles;
        for (uint32_t i = 0; i < s->n_layers; i++) {
            tpurt_layer l;
            tpurt_get_layer(jobs[j].rt, i, &l);
            if (!j) {
                s->layers[i] = l;
                continue;
            }
            s->layers[i].submissions += l.submissions;
            s->layers[i].cycles += l.cycles;
            s->layers[i].ideal_cycles += l.ideal_cycles;
            s->layers[i].bound_cycles += l.bound_cycles;
        }
    }
    for (uint32_t i = 0; i < s->n_layers; i++) {
        s->ideal += s->layers[i].ideal_cycles;
        s->bound += s->layers[i].bound_cycles;
        s->device_macs += s->layers[i].macs * s->layers[i].submissions;
    }
}

/* The jobs' host work, by opcode, into s->host (job 0's order, any other opcode after). */
static int sum_host_ops(const run_job *jobs, uint32_t n_jobs, run_summary *s)
{
    uint32_t cap = 0;
    for (uint32_t j = 0; j < n_jobs; j++)
        cap += tpurt_n_host_ops(jobs[j].rt);
    if (!(s->host = calloc(cap + 1, sizeof *s->host)))
        return -1;
    for (uint32_t j = 0; j < n_jobs; j++)
        for (uint32_t i = 0; i < tpurt_n_host_ops(jobs[j].rt); i++) {
            tpurt_host_op h;
            tpurt_get_host_op(jobs[j].rt, i, &h);
            uint32_t k = 0;
            while (k < s->n_host && strcmp(s->host[k].opcode, h.opcode))
                k++;
            if (k == s->n_host)
                s->host[s->n_host++] = (tpurt_host_op){.opcode = h.opcode};
            s->host[k].count += h.count;
            s->host[k].macs += h.macs;
            s->host[k].bytes += h.bytes;
            s->host_macs += h.macs;
        }
    return 0;
}

int run_finish(const run_options *o, const run_job *jobs, uint32_t n_jobs, const run_plan *pl,
               run_classes *cl, const npy_array *res, double wall_seconds, double job_seconds)
{
    run_summary sum = {.o = o,
                       .pl = pl,
                       .cl = cl,
                       .wall_seconds = wall_seconds,
                       .job_seconds = job_seconds,
                       .n_jobs = n_jobs,
                       .n_layers = tpurt_n_layers(jobs[0].rt)};
    count_classes(cl);
    tpurt_get_info(jobs[0].rt, &sum.info);
    if (!(sum.layers = calloc(sum.n_layers + 1, sizeof *sum.layers)) ||
        sum_host_ops(jobs, n_jobs, &sum)) {
        free(sum.layers);
        return cli_fail(EXIT_USAGE, "memory", "out of host memory");
    }
    sum_jobs(jobs, n_jobs, &sum);
    for (uint32_t k = 0; k < o->dev.device.cores; k++)
        tpurt_get_core_stats(jobs[0].rt, k, &sum.core[k]); /* k is one of its cores */
    int rc = write_files(o, res, &sum);
    if (!rc && !o->dev.quiet)
        print_summary(&sum);
    if (!rc && o->have_show)
        show_sample(&jobs[0].in[0], cl, o->show);
    free(sum.layers);
    free(sum.host);
    return rc;
}

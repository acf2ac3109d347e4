/* run.c - tpusim run: a compiled package (compiler/tpub.h) on the cycle-accurate device.
 *
 * The package's host program (HLO text) runs in the reference evaluator once per batch of the
 * inputs. Each of its custom-calls "tpu.segment.K" is a device segment: the operands are quantized
 * into the device arena, the segment's GEMMs run as one submission each (the driver replays every
 * one on the golden model and compares), and the results are read back and dequantized. What the
 * run measured is reported by run_report.c. */
#define _POSIX_C_SOURCE 200809L

#include "tools/tpusim/run.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/tpusim/cli.h"
#include "io/errmsg.h"
#include "compiler/hlo.h"
#include "io/npy.h"
#include "tools/tpusim/report.h"
#include "compiler/tpub.h"

const char usage_run[] =
    "usage: tpusim run PKG.tpub --input X.npy [--input X2.npy ...] [--output Y.npy ...]\n"
    "                  [--input-divide D] [--limit IMAGES] [--labels Y.npy] [--expect P.npy]\n"
    "                  [--show K] [common options]\n"
    "\n"
    "Runs a compiled package (.tpub) on the cycle-accurate device: the host program in the\n"
    "reference evaluator, each GEMM of its device segments as one submission, every submission\n"
    "checked bit-exact against the golden model. Prints cycles and MXU utilization per layer.\n"
    "\n"
    "  --input X.npy          the model's inputs, in the package's order. An array of the input's\n"
    "                         shape is one batch; [R, ...] with the input's other dimensions runs\n"
    "                         in batches of the input's first dimension (the last one padded\n"
    "                         with zeros, its padding rows dropped from the outputs)\n"
    "  --output Y.npy         write the model's outputs, in order, all batches concatenated\n"
    "  --input-divide D       integer inputs for float32 ones: float32(x) / D (255 for pixels)\n"
    "  --limit IMAGES         use only the first IMAGES rows of each input\n"
    "  --labels Y.npy         class labels [R] (int8, uint8 or int32): accuracy of the argmax of\n"
    "                         the first output [R, classes]\n"
    "  --expect P.npy         reference predictions [R]: agreement with them (and their accuracy\n"
    "                         with --labels)\n"
    "  --show K               print sample K of the first input as text, with its prediction\n"
    "\n"
    "common options:\n"
    "  --array N              must equal the package's array size (the default)\n"
    "  --mem-latency CYCLES   memory latency, at least 1 (default: the simulator's)\n"
    "  --mem-bandwidth BYTES  memory bytes per cycle, at least 1 (default: the simulator's)\n"
    "  --json FILE            also write the report as JSON\n"
    "  --trace FILE.fst|.vcd  waveform of the first batch (kept even when the run fails)\n"
    "  --trace-window FROM:TO only cycles [FROM, TO) from the first submit (TO empty: to the end)\n"
    "  --max-cycles C         give up unless each submission halts within C cycles\n"
    "  --quiet                no report on stdout (--show still prints)\n"
    "\n"
    "Output files are written only when the run succeeds.\n"
    "exit codes: 0 success, 1 golden model mismatch, 2 usage or input error (arguments, package,\n"
    ".npy files, output files), 3 device error or timeout.\n";

/* ------------------------------------------------------------ options -- */

enum { OPT_INPUT, OPT_OUTPUT, OPT_LABELS, OPT_EXPECT, OPT_DIVIDE, OPT_LIMIT, OPT_SHOW, OPT_COUNT };
static const char *const value_options[OPT_COUNT] = {
    [OPT_INPUT] = "--input", [OPT_OUTPUT] = "--output", [OPT_LABELS] = "--labels",
    [OPT_EXPECT] = "--expect", [OPT_DIVIDE] = "--input-divide", [OPT_LIMIT] = "--limit",
    [OPT_SHOW] = "--show",
};

/* A positive, finite float32. */
static int parse_divisor(const char *s, float *out)
{
    char *end;
    errno = 0;
    const float d = strtof(s, &end);
    if (end == s || *end || errno || !(d > 0) || !isfinite(d))
        return -1;
    *out = d;
    return 0;
}

/* Returns 0, EXIT_USAGE (message printed), or -1 after printing the help. */
static int parse_run(int argc, char **argv, run_options *o)
{
    o->inputs = calloc((size_t)argc + 1, sizeof *o->inputs);
    o->outputs = calloc((size_t)argc + 1, sizeof *o->outputs);
    if (!o->inputs || !o->outputs)
        return cli_fail(EXIT_USAGE, "memory", "out of host memory");
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "--", 2) && !o->package) {
            o->package = argv[i];
            continue;
        }
        char name[32];
        const char *eq;
        int rc = split_option("run", argv[i], name, sizeof name, &eq);
        if (rc)
            return rc;
        if (!strcmp(name, "--help")) {
            fputs(usage_run, stdout);
            return -1;
        }
        if (!strcmp(name, "--quiet")) {
            if (eq)
                return cli_fail(EXIT_USAGE, name, "takes no value");
            o->dev.quiet = 1;
            continue;
        }
        if ((rc = common_option("run", name, eq, argc, argv, &i, &o->dev)) >= 0) {
            if (rc)
                return rc;
            continue;
        }
        int opt = 0;
        while (opt < OPT_COUNT && strcmp(name, value_options[opt]))
            opt++;
        if (opt == OPT_COUNT)
            return cli_fail(EXIT_USAGE, "usage", "unknown option '%s' (see tpusim run --help)",
                            name);
        const char *val = option_value("run", name, eq, argc, argv, &i);
        if (!val)
            return EXIT_USAGE;
        switch (opt) {
        case OPT_INPUT: o->inputs[o->n_inputs++] = val; break;
        case OPT_OUTPUT: o->outputs[o->n_outputs++] = val; break;
        case OPT_LABELS: o->labels = val; break;
        case OPT_EXPECT: o->expect = val; break;
        case OPT_DIVIDE:
            if (parse_divisor(val, &o->divide))
                return bad_value(name, val, "a positive number");
            break;
        case OPT_LIMIT:
            if (parse_u64(val, 1, UINT64_MAX, &o->limit))
                return bad_value(name, val, "a number of images (at least 1)");
            break;
        case OPT_SHOW:
            if (parse_u64(val, 0, UINT64_MAX, &o->show))
                return bad_value(name, val, "a sample index");
            o->have_show = 1;
            break;
        }
    }
    if (!o->package)
        return cli_fail(EXIT_USAGE, "usage", "no package (tpusim run PKG.tpub --input X.npy ...)");
    if (o->dev.have_window && !o->dev.trace)
        return cli_fail(EXIT_USAGE, "usage", "--trace-window needs --trace");
    return 0;
}

/* ---------------------------------------------------------- signatures -- */

/* The .npy dtype of a signature's element type (tpub_load allows only these four). */
static npy_dtype sig_dtype(hlo_type t)
{
    switch (t) {
    case HLO_S8: return NPY_INT8;
    case HLO_U8: return NPY_UINT8;
    case HLO_S32: return NPY_INT32;
    default: return NPY_FLOAT32;
    }
}

const char *sig_str(const tpub_sig *s, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "'%s' %s[", s->name, hlo_type_name(s->type));
    for (int i = 0; i < s->rank && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? "," : "", (long long)s->dims[i]);
    if (n < size)
        snprintf(buf + n, size - n, "]");
    return buf;
}

static uint64_t sig_elements(const tpub_sig *s)
{
    uint64_t n = 1;
    for (int i = 0; i < s->rank; i++)
        n *= (uint64_t)s->dims[i];
    return n;
}

double npy_value(const npy_array *a, uint64_t i)
{
    switch (a->dtype) {
    case NPY_INT8: return ((const int8_t *)a->data)[i];
    case NPY_UINT8: return ((const uint8_t *)a->data)[i];
    case NPY_INT32: return ((const int32_t *)a->data)[i];
    case NPY_FLOAT32: return ((const float *)a->data)[i];
    }
    return 0;
}

/* ------------------------------------------------------------- batches -- */

/* Loads the inputs and checks them against the signatures. An input of the signature's shape
 * is one batch; one with other dimensions equal and any first dimension is split into batches
 * (so is every input with --limit). */
static int bind_inputs(const run_options *o, const tpub_package *pkg, bound_input *in, plan *pl)
{
    char err[256], s1[200], s2[200];
    if (o->n_inputs != pkg->n_inputs) {
        size_t n = (size_t)snprintf(s1, sizeof s1, "%s", pkg->n_inputs ? ":" : "");
        for (uint32_t i = 0; i < pkg->n_inputs && n < sizeof s1; i++)
            n += (size_t)snprintf(s1 + n, sizeof s1 - n, " %s", sig_str(&pkg->inputs[i], s2,
                                                                          sizeof s2));
        return cli_fail(EXIT_USAGE, "--input", "%u given, but the package takes %u%s", o->n_inputs,
                        pkg->n_inputs, s1);
    }
    pl->batched = o->limit != 0;
    for (uint32_t i = 0; i < o->n_inputs; i++) {
        bound_input *b = &in[i];
        b->path = o->inputs[i];
        b->sig = &pkg->inputs[i];
        if (npy_load(b->path, &b->arr, err, sizeof err))
            return cli_fail(EXIT_USAGE, b->path, "%s", err);
        const tpub_sig *sig = b->sig;
        const npy_array *a = &b->arr;
        const npy_dtype want = sig_dtype(sig->type);
        const int integer_for_float = want == NPY_FLOAT32 && a->dtype != NPY_FLOAT32;
        if (a->dtype != want && !(integer_for_float && o->divide > 0))
            return cli_fail(EXIT_USAGE, b->path, "dtype %s, but input %u %s is %s%s",
                            npy_dtype_name(a->dtype), i, sig_str(sig, s1, sizeof s1),
                            npy_dtype_name(want),
                            integer_for_float ? " (--input-divide D converts integers)" : "");
        int tail = a->ndim == sig->rank; /* equal after the first dimension */
        for (int d = 1; d < sig->rank && tail; d++)
            tail = a->shape[d] == (uint64_t)sig->dims[d];
        const int exact = tail && (sig->rank == 0 || a->shape[0] == (uint64_t)sig->dims[0]);
        if (!exact && !(tail && sig->rank > 0))
            return cli_fail(EXIT_USAGE, b->path,
                            "shape %s fits neither input %u %s nor [count, ...] batches of it",
                            shape_str(a, s2, sizeof s2), i, sig_str(sig, s1, sizeof s1));
        pl->batched |= !exact;
        b->row_elements = a->ndim && a->shape[0] ? a->count / a->shape[0] : a->count;
    }
    if (!pl->batched || !o->n_inputs) {
        pl->batched = 0;
        pl->batches = 1;
        pl->images = o->n_inputs && in[0].sig->rank ? (uint64_t)in[0].sig->dims[0] : 1;
        pl->batch = pl->images;
        return 0;
    }
    for (uint32_t i = 0; i < o->n_inputs; i++) {
        bound_input *b = &in[i];
        if (!b->sig->rank || !b->sig->dims[0])
            return cli_fail(EXIT_USAGE, b->path, "input %u %s has no batch dimension to split "
                            "the inputs on", i, sig_str(b->sig, s1, sizeof s1));
        b->batch = (uint64_t)b->sig->dims[0];
        b->rows = o->limit && o->limit < b->arr.shape[0] ? o->limit : b->arr.shape[0];
        if (!b->rows)
            return cli_fail(EXIT_USAGE, b->path, "shape %s has no rows",
                            shape_str(&b->arr, s2, sizeof s2));
        const uint64_t batches = (b->rows + b->batch - 1) / b->batch;
        if (i && batches != pl->batches)
            return cli_fail(EXIT_USAGE, "--input", "%s gives %llu batches of %llu rows, but %s "
                            "gives %llu of %llu", in[0].path, (unsigned long long)pl->batches,
                            (unsigned long long)in[0].batch, b->path,
                            (unsigned long long)batches, (unsigned long long)b->batch);
        pl->batches = batches;
    }
    pl->batch = in[0].batch;
    pl->images = in[0].rows;
    for (uint32_t j = 0; j < pkg->n_outputs; j++) {
        const tpub_sig *sig = &pkg->outputs[j];
        if (!sig->rank || (uint64_t)sig->dims[0] != pl->batch)
            return cli_fail(EXIT_USAGE, o->package, "output %u %s: to run the inputs in batches "
                            "of %llu rows, the first dimension of every output must be %llu",
                            j, sig_str(sig, s1, sizeof s1), (unsigned long long)pl->batch,
                            (unsigned long long)pl->batch);
    }
    return 0;
}

/* The host program's parameters for batch number b: the inputs' rows of that batch (zeros past
 * the last), integers converted to float32 as numpy's float32(x) / divide. */
static int batch_params(const bound_input *in, uint32_t n, const plan *pl, uint64_t b,
                        float divide, hlo_array **params)
{
    for (uint32_t i = 0; i < n; i++) {
        const tpub_sig *sig = in[i].sig;
        const npy_array *a = &in[i].arr;
        hlo_array *p = params[i] = hlo_array_new(sig->type, sig->rank, sig->dims);
        if (!p)
            return cli_fail(EXIT_USAGE, "memory", "out of host memory for input %u", i);
        uint64_t first = 0, count = a->count;
        if (pl->batched) {
            const uint64_t row = b * in[i].batch;
            const uint64_t rows = in[i].rows - row < in[i].batch ? in[i].rows - row : in[i].batch;
            first = row * in[i].row_elements;
            count = rows * in[i].row_elements;
        }
        if (sig->type != HLO_F32 || a->dtype == NPY_FLOAT32) {
            const size_t size = npy_dtype_size(a->dtype);
            memcpy(p->data, (const uint8_t *)a->data + first * size, count * size);
            continue;
        }
        float *f = p->data;
        for (uint64_t e = 0; e < count; e++)
            f[e] = (float)npy_value(a, first + e) / divide;
    }
    return 0;
}

/* ------------------------------------------------------------- device -- */

double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Opens the device for the package, writes the constant image into a fresh arena and builds
 * each GEMM's command stream (operands as offsets into the arena, B in tile order). */
static int setup_device(run_ctx *c)
{
    const tpub_package *pkg = c->pkg;
    if (pkg->arena_bytes > (3ull << 30))
        return cli_fail(EXIT_USAGE, c->o->package, "an arena of %llu bytes; at most 3 GiB fit "
                        "the device's addresses", (unsigned long long)pkg->arena_bytes);
    c->first_layer = calloc(pkg->n_segments + 1, sizeof *c->first_layer);
    for (uint32_t s = 0; c->first_layer && s < pkg->n_segments; s++)
        c->first_layer[s + 1] = c->first_layer[s] + pkg->segments[s].n_gemms;
    c->n_layers = c->first_layer ? c->first_layer[pkg->n_segments] : 0;
    c->layers = calloc(c->n_layers + 1, sizeof *c->layers);
    if (!c->first_layer || !c->layers)
        return cli_fail(EXIT_USAGE, "memory", "out of host memory");
    int rc = open_device(&c->o->dev, pkg->arena_bytes, &c->dev, &c->info);
    if (rc)
        return rc;
    tpu_set_budget(c->dev, c->o->dev.max_cycles);
    tpu_status s = TPU_OK;
    if (pkg->arena_bytes)
        s = tpu_alloc(c->dev, pkg->arena_bytes, &c->arena);
    if (s == TPU_OK && pkg->const_bytes)
        s = tpu_write(c->dev, c->arena, pkg->const_image, pkg->const_bytes);
    if (s != TPU_OK)
        return device_error(c->dev, s, "arena");

    for (uint32_t s_i = 0; s_i < pkg->n_segments; s_i++)
        for (uint32_t g_i = 0; g_i < pkg->segments[s_i].n_gemms; g_i++) {
            layer *l = &c->layers[c->first_layer[s_i] + g_i];
            const tpub_gemm *g = l->g = &pkg->segments[s_i].gemms[g_i];
            l->segment = s_i;
            l->index = g_i;
            if (!(l->stream = tpu_stream_new()))
                return cli_fail(EXIT_USAGE, "memory", "out of host memory for the streams");
            uint32_t buf;
            s = tpu_stream_buffer(l->stream, c->arena, (uint32_t)pkg->arena_bytes, &buf);
            const int params = (g->flags & (TPU_GEMM_BIAS | TPU_GEMM_OUT_INT8)) != 0;
            const tpu_gemm cmd = {
                .m = g->m, .k = g->k, .n = g->n,
                .flags = g->flags | TPU_GEMM_B_TILED,
                .a = {buf, (uint32_t)g->a_off, g->lda},
                .b = {buf, (uint32_t)g->b_off, 0},
                .c = {buf, (uint32_t)g->c_off, g->ldc},
                .params = {params ? buf : 0, params ? (uint32_t)g->p_off : 0, 0},
            };
            if (s == TPU_OK)
                s = tpu_stream_gemm(l->stream, &cmd);
            if (s != TPU_OK)
                return cli_fail(EXIT_USAGE, c->o->package, "segment %u gemm %u '%s': the "
                                "driver refuses the command: %s", s_i, g_i, g->name,
                                tpu_status_name(s));
        }
    return 0;
}

/* The device byte of host value x: a copy, or x / scale rounded half to even and clamped
 * (NaN gives 0). */
static uint8_t to_device(const hlo_array *a, uint64_t i, const tpub_xfer *x)
{
    if (x->host_type == x->dev_type)
        return ((const uint8_t *)a->data)[i];
    const float q = nearbyintf(((const float *)a->data)[i] / x->scale[0]);
    const float lo = x->dev_type == HLO_U8 ? 0 : -128, hi = x->dev_type == HLO_U8 ? 255 : 127;
    if (isnan(q))
        return 0;
    const float v = q < lo ? lo : q > hi ? hi : q;
    return x->dev_type == HLO_U8 ? (uint8_t)v : (uint8_t)(int8_t)v;
}

static int xfer_fits(const tpub_xfer *x, const hlo_shape *s)
{
    return s->type == x->host_type && (uint64_t)s->elements == (uint64_t)x->rows * x->cols;
}

/* Quantizes a segment input into the arena, row by row (the bytes between rows are not ours). */
static int write_input(run_ctx *c, const tpub_xfer *x, const hlo_array *a, uint8_t *row)
{
    for (uint32_t r = 0; r < x->rows; r++) {
        for (uint32_t col = 0; col < x->cols; col++)
            row[col] = to_device(a, (uint64_t)r * x->cols + col, x);
        const tpu_status s = tpu_write(c->dev, c->arena + (uint32_t)(x->off + (uint64_t)r * x->ld),
                                       row, x->cols);
        if (s != TPU_OK)
            return device_error(c->dev, s, "segment input");
    }
    return 0;
}

/* Reads a segment output from the arena into a (of the xfer's host type). */
static int read_output(run_ctx *c, const tpub_xfer *x, hlo_array *a)
{
    const size_t esize = x->dev_type == HLO_S32 ? 4 : 1;
    const size_t extent = ((size_t)(x->rows - 1) * x->ld + x->cols) * esize;
    uint8_t *buf = malloc(extent);
    if (!buf)
        return cli_fail(EXIT_USAGE, "memory", "out of host memory for a segment output");
    const tpu_status s = tpu_read(c->dev, c->arena + (uint32_t)x->off, buf, extent);
    if (s != TPU_OK) {
        free(buf);
        return device_error(c->dev, s, "segment output");
    }
    for (uint32_t r = 0; r < x->rows; r++)
        for (uint32_t col = 0; col < x->cols; col++) {
            const size_t at = (size_t)r * x->ld + col, i = (size_t)r * x->cols + col;
            int32_t q;
            if (esize == 4)
                memcpy(&q, buf + at * 4, 4);
            else
                q = (int8_t)buf[at];
            if (x->host_type == HLO_F32)
                ((float *)a->data)[i] = (float)q * x->scale[x->n_scale == 1 ? 0 : col];
            else if (esize == 4)
                ((int32_t *)a->data)[i] = q;
            else
                ((int8_t *)a->data)[i] = (int8_t)q;
        }
    free(buf);
    return 0;
}

/* Submits one GEMM and adds what it measured to its layer. */
static int run_gemm(run_ctx *c, layer *l)
{
    tpu_status s = tpu_submit(c->dev, l->stream);
    if (s == TPU_OK)
        s = tpu_wait(c->dev, 0);
    tpu_perf_report perf;
    if (s == TPU_OK)
        s = tpu_perf(c->dev, &perf);
    if (s != TPU_OK) {
        char where[160];
        snprintf(where, sizeof where, "batch %llu, segment %u, gemm %u '%s'",
                 (unsigned long long)c->batch, l->segment, l->index, l->g->name);
        return device_error(c->dev, s, where);
    }
    const uint32_t f = l->g->flags;
    /* Per-column or per-tensor requantization costs the same: the figures only need int8. */
    const report_run run = {.m = l->g->m, .k = l->g->k, .n = l->g->n,
                            .unsigned_a = (f & TPU_GEMM_A_UNSIGNED) != 0,
                            .bias = (f & TPU_GEMM_BIAS) != 0, .relu = (f & TPU_GEMM_RELU) != 0,
                            .requant = f & TPU_GEMM_OUT_INT8 ? REPORT_REQUANT_COLUMN
                                                              : REPORT_INT32_OUT,
                            .info = c->info, .perf = perf};
    const report_figures fig = report_derive(&run);
    l->submissions++;
    l->cycles += perf.cycles;
    l->macs = fig.macs;
    l->ideal += fig.ideal;
    l->bound += fig.bound;
    c->submissions++;
    c->verified++; /* tpu_wait compared it with the golden model */
    c->cycles += perf.cycles;
    c->device_seconds += perf.wall_seconds;
    return 0;
}

/* "tpu.segment.K" with K < n: 0 and *k, else -1. */
static int segment_index(const char *target, uint32_t n, uint32_t *k)
{
    static const char prefix[] = "tpu.segment.";
    if (!target || strncmp(target, prefix, sizeof prefix - 1) || !n)
        return -1;
    return parse_u32(target + sizeof prefix - 1, 0, n - 1, k);
}

static int run_segment(run_ctx *c, const hlo_instr *in, hlo_array *const *ops, int n_ops,
                       hlo_array **outs, int n_outs, char *err, size_t errlen)
{
    const tpub_package *pkg = c->pkg;
    char s1[200];
    for (int j = 0; j < n_outs; j++)
        outs[j] = NULL; /* what the failure path below frees */
    uint32_t k;
    if (segment_index(in->custom_call_target, pkg->n_segments, &k)) {
        cli_set_err(err, errlen, "custom_call_target \"%s\" is not a segment of the package "
                    "(tpu.segment.K, K < %u)", in->custom_call_target ? in->custom_call_target
                                                                      : "", pkg->n_segments);
        return -1;
    }
    const tpub_segment *seg = &pkg->segments[k];
    if ((uint32_t)n_ops != seg->n_inputs || (uint32_t)n_outs != seg->n_outputs) {
        cli_set_err(err, errlen, "segment %u has %u inputs and %u outputs, the custom-call %d "
                    "operands and %d results", k, seg->n_inputs, seg->n_outputs, n_ops, n_outs);
        return -1;
    }
    for (uint32_t i = 0; i < seg->n_inputs; i++) {
        const tpub_xfer *x = &seg->inputs[i];
        if (!xfer_fits(x, &ops[i]->shape)) {
            cli_set_err(err, errlen, "operand %u is %s, segment %u input %u takes %u x %u %s", i,
                        hlo_shape_str(&ops[i]->shape, s1, sizeof s1), k, i, x->rows, x->cols,
                        hlo_type_name(x->host_type));
            return -1;
        }
    }
    for (uint32_t j = 0; j < seg->n_outputs; j++) {
        const hlo_shape *s = in->shape.type == HLO_TUPLE ? &in->shape.tuple[j] : &in->shape;
        const tpub_xfer *x = &seg->outputs[j];
        if (!xfer_fits(x, s)) {
            cli_set_err(err, errlen, "result %u is %s, segment %u output %u gives %u x %u %s", j,
                        hlo_shape_str(s, s1, sizeof s1), k, j, x->rows, x->cols,
                        hlo_type_name(x->host_type));
            return -1;
        }
    }

    int rc = 0;
    uint32_t widest = 1;
    for (uint32_t i = 0; i < seg->n_inputs; i++)
        widest = seg->inputs[i].cols > widest ? seg->inputs[i].cols : widest;
    uint8_t *row = malloc(widest);
    if (!row)
        rc = cli_fail(EXIT_USAGE, "memory", "out of host memory for a segment input");
    for (uint32_t i = 0; i < seg->n_inputs && !rc; i++)
        rc = write_input(c, &seg->inputs[i], ops[i], row);
    free(row);
    for (uint32_t g = 0; g < seg->n_gemms && !rc; g++)
        rc = run_gemm(c, &c->layers[c->first_layer[k] + g]);
    for (uint32_t j = 0; j < seg->n_outputs && !rc; j++) {
        const hlo_shape *s = in->shape.type == HLO_TUPLE ? &in->shape.tuple[j] : &in->shape;
        if (!(outs[j] = hlo_array_new(s->type, s->rank, s->dims)))
            rc = cli_fail(EXIT_USAGE, "memory", "out of host memory for a segment output");
        else
            rc = read_output(c, &seg->outputs[j], outs[j]);
    }
    if (!rc)
        return 0;
    for (int j = 0; j < n_outs; j++) {
        hlo_array_free(outs[j]);
        outs[j] = NULL;
    }
    c->rc = rc;
    cli_set_err(err, errlen, "segment %u failed", k);
    return -1;
}

/* The evaluator's custom-call hook. */
static int segment_hook(void *ctx, const hlo_instr *in, hlo_array *const *ops, int n_ops,
                        hlo_array **outs, int n_outs, char *err, size_t errlen)
{
    run_ctx *c = ctx;
    const double t0 = now();
    const int r = run_segment(c, in, ops, n_ops, outs, n_outs, err, errlen);
    c->segment_seconds += now() - t0;
    return r;
}

/* ------------------------------------------------------------- results -- */

/* The outputs of all batches, as they are written: [images, ...] when batched. */
static int alloc_results(const tpub_package *pkg, const plan *pl, npy_array *res)
{
    for (uint32_t j = 0; j < pkg->n_outputs; j++) {
        const tpub_sig *sig = &pkg->outputs[j];
        npy_array *a = &res[j];
        a->dtype = sig_dtype(sig->type);
        a->ndim = sig->rank;
        for (int d = 0; d < sig->rank; d++)
            a->shape[d] = (uint64_t)sig->dims[d];
        if (pl->batched)
            a->shape[0] = pl->images;
        a->count = pl->batched ? sig_elements(sig) / pl->batch * pl->images : sig_elements(sig);
        if (!(a->data = calloc(a->count ? a->count : 1, npy_dtype_size(a->dtype))))
            return cli_fail(EXIT_USAGE, "memory", "out of host memory for output %u", j);
    }
    return 0;
}

/* Checks the host program's results against the output signatures and keeps batch b's rows. */
static int keep_results(const run_options *o, const tpub_package *pkg, const plan *pl,
                        uint64_t b, hlo_array **outs, int n_outs, npy_array *res)
{
    char s1[200], s2[200];
    if ((uint32_t)n_outs != pkg->n_outputs)
        return cli_fail(EXIT_USAGE, o->package, "host program: %d results, but the package has "
                        "%u outputs", n_outs, pkg->n_outputs);
    for (uint32_t j = 0; j < pkg->n_outputs; j++) {
        const tpub_sig *sig = &pkg->outputs[j];
        const hlo_shape *s = &outs[j]->shape;
        int same = s->type == sig->type && s->rank == sig->rank;
        for (int d = 0; d < sig->rank && same; d++)
            same = s->dims[d] == sig->dims[d];
        if (!same)
            return cli_fail(EXIT_USAGE, o->package, "host program: result %u is %s, but output "
                            "%u is %s", j, hlo_shape_str(s, s1, sizeof s1), j,
                            sig_str(sig, s2, sizeof s2));
        const size_t size = npy_dtype_size(res[j].dtype);
        uint64_t first = 0, count = res[j].count;
        if (pl->batched) {
            const uint64_t row_elements = sig_elements(sig) / pl->batch, row = b * pl->batch;
            const uint64_t rows = pl->images - row < pl->batch ? pl->images - row : pl->batch;
            first = row * row_elements;
            count = rows * row_elements;
        }
        memcpy((uint8_t *)res[j].data + first * size, outs[j]->data, count * size);
    }
    return 0;
}

/* ---------------------------------------------------------------- run -- */

/* Evaluates the host program batch by batch; the first batch is traced with --trace. */
static int run_batches(run_ctx *c, const hlo_module *m, const bound_input *in, const plan *pl,
                       npy_array *res, double *host_seconds)
{
    const run_options *o = c->o;
    const tpub_package *pkg = c->pkg;
    const hlo_eval_hooks hooks = {.ctx = c, .custom_call = segment_hook};
    hlo_array **params = calloc(pkg->n_inputs + 1, sizeof *params);
    if (!params)
        return cli_fail(EXIT_USAGE, "memory", "out of host memory");
    int rc = 0;
    for (uint64_t b = 0; b < pl->batches && !rc; b++) {
        c->batch = b;
        rc = batch_params(in, pkg->n_inputs, pl, b, o->divide, params);
        const int trace = b == 0 && o->dev.trace;
        tpu_status s = TPU_OK;
        if (!rc && trace &&
            (s = tpu_trace_open(c->dev, o->dev.trace, o->dev.trace_from, o->dev.trace_to)))
            rc = device_error(c->dev, s, NULL);
        hlo_array **outs = NULL;
        int n_outs = 0;
        if (!rc) {
            hlo_error err;
            const double t0 = now(), inside = c->segment_seconds;
            if (hlo_eval_with(m, "host program", params, (int)pkg->n_inputs, &hooks, &outs,
                              &n_outs, &err))
                rc = c->rc ? c->rc : cli_fail(EXIT_USAGE, o->package, "%s", err.msg);
            *host_seconds += now() - t0 - (c->segment_seconds - inside);
        }
        if (trace) {
            const tpu_status ts = tpu_trace_close(c->dev);
            if (!rc && ts != TPU_OK)
                rc = device_error(c->dev, ts, NULL);
        }
        if (!rc)
            rc = keep_results(o, pkg, pl, b, outs, n_outs, res);
        hlo_arrays_free(outs, n_outs);
        for (uint32_t i = 0; i < pkg->n_inputs; i++) {
            hlo_array_free(params[i]);
            params[i] = NULL;
        }
    }
    free(params);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    run_options o = {0};
    int rc = parse_run(argc, argv, &o);
    if (rc) {
        free(o.inputs);
        free(o.outputs);
        return rc < 0 ? EXIT_OK : rc;
    }
    const double t_start = now();
    tpub_package pkg = {0};
    int have_pkg = 0;
    hlo_module *m = NULL;
    bound_input *in = NULL;
    npy_array *res = NULL;
    plan pl = {0};
    classes cl = {0};
    run_ctx c = {.o = &o, .pkg = &pkg};
    double host_seconds = 0;
    char err[512];

    if (tpub_load(o.package, &pkg, err, sizeof err))
        rc = cli_fail(EXIT_USAGE, o.package, "%s", err);
    else
        have_pkg = 1;
    if (!rc && o.dev.array_n && o.dev.array_n != pkg.array_n)
        rc = cli_fail(EXIT_USAGE, "--array", "%u, but %s is compiled for the %u x %u array",
                      o.dev.array_n, o.package, pkg.array_n, pkg.array_n);
    o.dev.array_n = pkg.array_n;
    if (!rc && o.n_outputs > pkg.n_outputs)
        rc = cli_fail(EXIT_USAGE, "--output", "%u given, but the package has %u output%s",
                      o.n_outputs, pkg.n_outputs, pkg.n_outputs == 1 ? "" : "s");
    if (!rc) {
        hlo_error herr;
        m = hlo_parse(pkg.host_hlo, strlen(pkg.host_hlo), "host program", &herr);
        if (!m || hlo_check(m, "host program", &herr))
            rc = cli_fail(EXIT_USAGE, o.package, "%s", herr.msg);
    }
    if (!rc) {
        in = calloc(pkg.n_inputs + 1, sizeof *in);
        res = calloc(pkg.n_outputs + 1, sizeof *res);
        if (!in || !res)
            rc = cli_fail(EXIT_USAGE, "memory", "out of host memory");
    }
    if (!rc)
        rc = bind_inputs(&o, &pkg, in, &pl);
    if (!rc)
        rc = alloc_results(&pkg, &pl, res);
    if (!rc)
        rc = setup_classes(&o, &pkg, &pl, res, &cl);
    if (!rc)
        rc = setup_device(&c);
    if (!rc)
        rc = run_batches(&c, m, in, &pl, res, &host_seconds);
    if (!rc)
        rc = finish_run(&c, &pl, &cl, in, res, t_start, host_seconds);

    for (uint32_t i = 0; c.layers && i < c.n_layers; i++)
        tpu_stream_free(c.layers[i].stream);
    free(c.layers);
    free(c.first_layer);
    tpu_close(c.dev);
    npy_free(&cl.labels);
    npy_free(&cl.expect);
    for (uint32_t j = 0; res && j < pkg.n_outputs; j++)
        npy_free(&res[j]);
    free(res);
    for (uint32_t i = 0; in && i < pkg.n_inputs; i++)
        npy_free(&in[i].arr);
    free(in);
    hlo_module_free(m);
    if (have_pkg)
        tpub_free(&pkg);
    free(o.inputs);
    free(o.outputs);
    return rc;
}

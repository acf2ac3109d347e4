/* run.c - a run of a compiled package (package/tpub.h) on the cycle-accurate device (tpusim run,
 * tools/tpu_vp), as a client of the runtime (runtime/tpurt.h), which runs the host program with
 * its device segments and checks every submission against the golden model. Here: the options, the
 * .npy inputs bound to the package's signatures (integers divided into floats with --input-divide),
 * the inputs split into batches of the signatures' first dimension (the last one zero-padded, its
 * padding rows dropped from the outputs), one tpurt_run per batch. What the run measured is
 * reported by run_report.c. */
#define _POSIX_C_SOURCE 200809L

#include "tools/common/run.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/hlo.h"
#include "io/npy.h"
#include "package/tpub.h"
#include "runtime/tpurt.h"

const char run_usage[] =
    "usage: tpusim run PKG.tpub --input X.npy [--input X2.npy ...] [--output Y.npy ...]\n"
    "                  [--input-divide D] [--limit IMAGES] [--labels Y.npy] [--expect P.npy]\n"
    "                  [--show K] [common options]\n"
    "\n"
    "Runs a compiled package (.tpub) on the cycle-accurate device: the host program in the\n"
    "reference evaluator, each GEMM and convolution of its device segments as one submission,\n"
    "every submission checked bit-exact against the golden model. Prints cycles and MXU\n"
    "utilization per layer.\n"
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
    "  --jobs J               run the batches in J threads, each on a device of its own (a\n"
    "                         contiguous share of the batches each; outputs, figures and\n"
    "                         cycle counts as with one); at most 64, default 1; not with\n"
    "                         --cores\n"
    "  --weights-per-core     with --cores: a copy of the constants (weights) per core, not\n"
    "                         one copy that every core reads\n"
    "\n"
    "common options:\n"
    "  --array N              must equal the package's array size (the default)\n"
    "  --cores C              a chip of C cores (1..8) on one memory port: batch b runs on\n"
    "                         core b % C, C batches side by side; outputs as with one core;\n"
    "                         reports the chip's cycles and each core (default: one lone core)\n"
    "  --mem-latency CYCLES   memory latency, 1..65536 (default: the simulator's, 32)\n"
    "  --mem-bandwidth BYTES  memory bytes per cycle, 1..4096 (default: the simulator's, 64)\n"
    "  --json FILE            also write the report as JSON\n"
    "  --trace FILE.fst|.vcd  waveform of the first batch (with --cores: of the first C, every\n"
    "                         core), kept even when the run fails\n"
    "  --trace-window FROM:TO only cycles [FROM, TO) from the first submit (TO empty: to the end)\n"
    "  --max-cycles C         give up unless each submission halts within C cycles\n"
    "  --quiet                no report on stdout (--show still prints)\n"
    "\n"
    "Output files are written only when the run succeeds.\n";

/* ------------------------------------------------------------ options -- */

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

/* One option of a run: 0, or EXIT_USAGE (message printed). */
static int run_option(int opt, const char *val, run_options *o)
{
    switch (opt) {
    case RUN_OPT_INPUT: o->inputs[o->n_inputs++] = val; return 0;
    case RUN_OPT_OUTPUT: o->outputs[o->n_outputs++] = val; return 0;
    case RUN_OPT_LABELS: o->labels = val; return 0;
    case RUN_OPT_EXPECT: o->expect = val; return 0;
    case RUN_OPT_DIVIDE:
        return parse_divisor(val, &o->divide)
                   ? cli_bad_value("--input-divide", val, "a positive number")
                   : 0;
    case RUN_OPT_LIMIT:
        return cli_u64(val, 1, UINT64_MAX, &o->limit)
                   ? cli_bad_value("--limit", val, "a number of images (at least 1)")
                   : 0;
    case RUN_OPT_SHOW:
        o->have_show = 1;
        return cli_u64(val, 0, UINT64_MAX, &o->show)
                   ? cli_bad_value("--show", val, "a sample index")
                   : 0;
    case RUN_OPT_JOBS:
        return cli_u32(val, 1, RUN_JOBS_MAX, &o->jobs)
                   ? cli_bad_limit("--jobs", val, "a number of jobs", RUN_JOBS_MAX)
                   : 0;
    case RUN_OPT_WEIGHTS_PER_CORE: o->weights_per_core = 1; return 0;
    default: return cli_run_option(opt, val, &o->dev);
    }
}

int run_parse(int argc, char **argv, const struct option *opts, const char *help, run_own_fn *own,
              void *ctx, run_options *o)
{
    o->inputs = calloc((size_t)argc + 1, sizeof *o->inputs);
    o->outputs = calloc((size_t)argc + 1, sizeof *o->outputs);
    if (!o->inputs || !o->outputs)
        return cli_fail(EXIT_USAGE, "memory", "out of host memory");
    int opt;
    while ((opt = cli_next(argc, argv, ":h", opts, help)) != -1) {
        if (opt == '?')
            return EXIT_USAGE;
        if (opt == 'h')
            return -1;
        const int rc = opt >= RUN_OPT_OWN ? own(ctx, opt, optarg, o) : run_option(opt, optarg, o);
        if (rc)
            return rc;
    }
    for (int i = optind; i < argc; i++) {
        if (o->package)
            return cli_unexpected(argv[i], help);
        o->package = argv[i];
    }
    if (!o->package)
        return cli_fail(EXIT_USAGE, "usage", "no package (see %s)", help);
    /* Each job a chip would work, but its figures would mix two kinds of parallelism. */
    if (o->jobs && o->dev.device.cores)
        return cli_fail(EXIT_USAGE, "usage",
                        "--jobs and --cores exclude each other (--jobs runs a device per job, "
                        "--cores the batches side by side on one chip)");
    if (o->weights_per_core && !o->dev.device.cores)
        return cli_fail(EXIT_USAGE, "usage", "--weights-per-core needs --cores");
    if (!o->jobs)
        o->jobs = 1;
    if (o->dev.have_window && !o->dev.trace)
        return cli_fail(EXIT_USAGE, "usage", "--trace-window needs --trace");
    return 0;
}

void run_options_free(run_options *o)
{
    free(o->inputs);
    free(o->outputs);
}

/* ---------------------------------------------------------- signatures -- */

npy_dtype run_sig_dtype(hlo_type t)
{
    switch (t) {
    case HLO_S8: return NPY_INT8;
    case HLO_U8: return NPY_UINT8;
    case HLO_S32: return NPY_INT32;
    case HLO_S64: return NPY_INT64;
    case HLO_BF16: return NPY_BFLOAT16;
    case HLO_F16: return NPY_FLOAT16;
    default: return NPY_FLOAT32;
    }
}

/* The evaluator's view of n elements of a 16-bit float array: hlo_array_get and hlo_array_set
 * convert them (exactly, and rounding to nearest even). */
static hlo_array half_view(const void *data, npy_dtype t, uint64_t n)
{
    hlo_array a = {.data = (void *)(uintptr_t)data};
    a.shape.type = t == NPY_BFLOAT16 ? HLO_BF16 : HLO_F16;
    a.shape.rank = 1;
    a.shape.dims[0] = a.shape.elements = (int64_t)n;
    return a;
}

void run_sig_set(hlo_type t, void *buf, uint64_t i, double v)
{
    switch (t) {
    case HLO_S8: ((int8_t *)buf)[i] = (int8_t)v; break;
    case HLO_U8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
    case HLO_S32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case HLO_S64: ((int64_t *)buf)[i] = (int64_t)v; break;
    case HLO_BF16:
    case HLO_F16: {
        hlo_array h = half_view(buf, run_sig_dtype(t), i + 1);
        hlo_array_set(&h, (int64_t)i, v);
        break;
    }
    default: ((float *)buf)[i] = (float)v; break;
    }
}

const char *run_sig_str(const tpurt_tensor *s, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "'%s' %s[", s->name, hlo_type_name(s->type));
    for (int i = 0; i < s->rank && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? "," : "", (long long)s->dims[i]);
    if (n < size)
        snprintf(buf + n, size - n, "]");
    return buf;
}

int run_npy_integer(npy_dtype t)
{
    switch (t) {
    case NPY_INT8:
    case NPY_UINT8:
    case NPY_INT32:
    case NPY_INT64: return 1;
    case NPY_FLOAT32:
    case NPY_FLOAT16:
    case NPY_BFLOAT16:
    case NPY_V2: return 0;
    }
    return 0;
}

double run_npy_value(const npy_array *a, uint64_t i)
{
    switch (a->dtype) {
    case NPY_INT8: return ((const int8_t *)a->data)[i];
    case NPY_UINT8: return ((const uint8_t *)a->data)[i];
    case NPY_INT32: return ((const int32_t *)a->data)[i];
    case NPY_FLOAT32: return ((const float *)a->data)[i];
    case NPY_INT64: return (double)((const int64_t *)a->data)[i];
    case NPY_FLOAT16:
    case NPY_BFLOAT16: {
        const hlo_array v = half_view(a->data, a->dtype, a->count);
        return hlo_array_get(&v, (int64_t)i);
    }
    case NPY_V2: break;
    }
    return NAN;
}

/* ------------------------------------------------------------- batches -- */

/* Reads every .npy the run was given (inputs, when as many as the package takes; labels; reference
 * predictions) before a device is opened, so that a bad or oversized file costs no device memory:
 * a run's memory is then bounded by the files' ceilings plus the device's. */
static int load_files(const run_options *o, const tpub_package *pkg, run_input *in, run_classes *cl)
{
    char err[256];
    for (uint32_t i = 0; o->n_inputs == pkg->n_inputs && i < o->n_inputs; i++) {
        in[i].path = o->inputs[i];
        if (npy_load(in[i].path, &in[i].arr, err, sizeof err))
            return cli_fail(EXIT_USAGE, in[i].path, "%s", err);
    }
    if (o->labels && npy_load(o->labels, &cl->labels, err, sizeof err))
        return cli_fail(EXIT_USAGE, o->labels, "%s", err);
    if (o->expect && npy_load(o->expect, &cl->expect, err, sizeof err))
        return cli_fail(EXIT_USAGE, o->expect, "%s", err);
    return 0;
}

/* Checks the inputs load_files read against the signatures. An input of the signature's shape
 * is one batch; one with other dimensions equal and any first dimension is split into batches
 * (so is every input with --limit). */
static int bind_inputs(const run_options *o, tpurt *rt, run_input *in, run_plan *pl)
{
    char s1[200], s2[200];
    const uint32_t n_inputs = tpurt_n_inputs(rt);
    for (uint32_t i = 0; i < n_inputs; i++)
        tpurt_get_input(rt, i, &in[i].sig); /* i is in range */
    if (o->n_inputs != n_inputs) {
        size_t n = (size_t)snprintf(s1, sizeof s1, "%s", n_inputs ? ":" : "");
        for (uint32_t i = 0; i < n_inputs && n < sizeof s1; i++)
            n += (size_t)snprintf(s1 + n, sizeof s1 - n, " %s",
                                  run_sig_str(&in[i].sig, s2, sizeof s2));
        return cli_fail(EXIT_USAGE, "--input", "%u given, but the package takes %u%s", o->n_inputs,
                        n_inputs, s1);
    }
    pl->batched = o->limit != 0;
    for (uint32_t i = 0; i < o->n_inputs; i++) {
        run_input *b = &in[i];
        const tpurt_tensor *sig = &b->sig;
        npy_array *a = &b->arr;
        const npy_dtype want = run_sig_dtype(sig->type);
        if (want == NPY_BFLOAT16 && a->dtype == NPY_V2) /* '<V2', as ml_dtypes saves bfloat16 */
            npy_as_bfloat16(a, s2, sizeof s2);
        const int float_sig = hlo_is_float(sig->type);
        const int integer_for_float = float_sig && run_npy_integer(a->dtype);
        /* float32 for a 16-bit float input is rounded to it, as tpuc --calibrate is told. */
        const int rounded = want != NPY_FLOAT32 && float_sig && a->dtype == NPY_FLOAT32;
        if (a->dtype != want && !(integer_for_float && o->divide > 0) && !rounded)
            return cli_fail(EXIT_USAGE, b->path, "dtype %s, but input %u %s is %s%s",
                            cli_dtype(a->dtype), i, run_sig_str(sig, s1, sizeof s1),
                            npy_dtype_name(want),
                            integer_for_float ? " (--input-divide D converts integers)" : "");
        if (rounded) /* a note, on stderr as messages are (--quiet is the report's) */
            cli_fail(0, b->path, "float32 rounded to nearest even for input %u %s", i,
                     run_sig_str(sig, s1, sizeof s1));
        int tail = a->ndim == sig->rank; /* equal after the first dimension */
        for (int d = 1; d < sig->rank && tail; d++)
            tail = a->shape[d] == (uint64_t)sig->dims[d];
        const int exact = tail && (sig->rank == 0 || a->shape[0] == (uint64_t)sig->dims[0]);
        if (!exact && !(tail && sig->rank > 0))
            return cli_fail(EXIT_USAGE, b->path,
                            "shape %s fits neither input %u %s nor [count, ...] batches of it",
                            cli_shape(a, s2, sizeof s2), i, run_sig_str(sig, s1, sizeof s1));
        pl->batched |= !exact;
        b->row_elements = a->ndim && a->shape[0] ? a->count / a->shape[0] : a->count;
        if (!(b->staging = calloc(sig->bytes ? sig->bytes : 1, tpurt_cores(rt))))
            return cli_fail(EXIT_USAGE, "memory", "out of host memory for input %u", i);
    }
    if (!pl->batched || !o->n_inputs) {
        pl->batched = 0;
        pl->batches = 1;
        pl->images = o->n_inputs && in[0].sig.rank ? (uint64_t)in[0].sig.dims[0] : 1;
        pl->batch = pl->images;
        return 0;
    }
    for (uint32_t i = 0; i < o->n_inputs; i++) {
        run_input *b = &in[i];
        if (!b->sig.rank || !b->sig.dims[0])
            return cli_fail(EXIT_USAGE, b->path,
                            "input %u %s has no batch dimension to split "
                            "the inputs on",
                            i, run_sig_str(&b->sig, s1, sizeof s1));
        b->batch = (uint64_t)b->sig.dims[0];
        b->rows = o->limit && o->limit < b->arr.shape[0] ? o->limit : b->arr.shape[0];
        if (!b->rows)
            return cli_fail(EXIT_USAGE, b->path, "shape %s has no rows",
                            cli_shape(&b->arr, s2, sizeof s2));
        const uint64_t batches = (b->rows + b->batch - 1) / b->batch;
        if (i && batches != pl->batches)
            return cli_fail(EXIT_USAGE, "--input",
                            "%s gives %llu batches of %llu rows, but %s "
                            "gives %llu of %llu",
                            in[0].path, (unsigned long long)pl->batches,
                            (unsigned long long)in[0].batch, b->path, (unsigned long long)batches,
                            (unsigned long long)b->batch);
        pl->batches = batches;
    }
    pl->batch = in[0].batch;
    pl->images = in[0].rows;
    for (uint32_t j = 0; j < tpurt_n_outputs(rt); j++) {
        tpurt_tensor sig;
        tpurt_get_output(rt, j, &sig);
        if (!sig.rank || (uint64_t)sig.dims[0] != pl->batch)
            return cli_fail(EXIT_USAGE, o->package,
                            "output %u %s: to run the inputs in batches "
                            "of %llu rows, the first dimension of every output must be %llu",
                            j, run_sig_str(&sig, s1, sizeof s1), (unsigned long long)pl->batch,
                            (unsigned long long)pl->batch);
    }
    return 0;
}

/* Input in's buffer for batch b: its rows in place when they are a whole batch of the
 * signature's type, else converted as numpy's float32(x) / divide and zero-padded in the
 * staging of the core that runs it. */
static const void *batch_input(run_input *in, const run_plan *pl, uint64_t b, uint32_t core,
                               float divide)
{
    uint64_t first = 0, count = in->arr.count;
    if (pl->batched) {
        const uint64_t row = b * in->batch;
        const uint64_t rows = in->rows - row < in->batch ? in->rows - row : in->batch;
        first = row * in->row_elements;
        count = rows * in->row_elements;
    }
    const size_t size = npy_dtype_size(in->arr.dtype);
    const uint8_t *src = (const uint8_t *)in->arr.data + first * size;
    const npy_dtype want = run_sig_dtype(in->sig.type);
    const int convert = in->arr.dtype != want;
    if (!convert && count == in->sig.elements)
        return src;
    uint8_t *staging = (uint8_t *)in->staging + core * in->sig.bytes;
    memset(staging, 0, in->sig.bytes);
    if (!convert) {
        memcpy(staging, src, count * size);
        return staging;
    }
    const float by = run_npy_integer(in->arr.dtype) ? divide : 1;
    for (uint64_t e = 0; e < count; e++) /* 16-bit floats rounded once, from float32(x) / by */
        run_sig_set(in->sig.type, staging, e, (float)run_npy_value(&in->arr, first + e) / by);
    return staging;
}

/* ------------------------------------------------------------- results -- */

/* The outputs of all batches, as they are written: [images, ...] when batched. */
static int alloc_results(tpurt *rt, const run_plan *pl, npy_array *res, void **staging)
{
    for (uint32_t j = 0; j < tpurt_n_outputs(rt); j++) {
        tpurt_tensor sig;
        tpurt_get_output(rt, j, &sig);
        npy_array *a = &res[j];
        a->dtype = run_sig_dtype(sig.type);
        a->ndim = sig.rank;
        for (int d = 0; d < sig.rank; d++)
            a->shape[d] = (uint64_t)sig.dims[d];
        if (pl->batched)
            a->shape[0] = pl->images;
        a->count = pl->batched ? sig.elements / pl->batch * pl->images : sig.elements;
        if (!(a->data = calloc(a->count ? a->count : 1, npy_dtype_size(a->dtype))) ||
            !(staging[j] = malloc(sig.bytes ? sig.bytes : 1)))
            return cli_fail(EXIT_USAGE, "memory", "out of host memory for output %u", j);
    }
    return 0;
}

/* ---------------------------------------------------------------- run -- */

/* Bytes of one row of result a (its first dimension is the images when batched). */
static size_t row_bytes(const npy_array *a, const run_plan *pl)
{
    return pl->images ? a->count / pl->images * npy_dtype_size(a->dtype) : 0;
}

/* Runs job j's batches, tpurt_cores at a time side by side (batch b on core b % cores: a job
 * with more than one core is the only one), the outputs written into res in place when a batch
 * fills their rows, else through the output staging (only the padded last batch uses it); the
 * first batches are traced with --trace. Prints nothing: a failure is left in the job. */
static void *run_job_batches(void *arg)
{
    run_job *j = arg;
    const run_plan *pl = j->pl;
    const uint32_t n_in = tpurt_n_inputs(j->rt), n_out = tpurt_n_outputs(j->rt);
    const uint32_t cores = tpurt_cores(j->rt);
    const void **inputs = calloc((size_t)cores * n_in + 1, sizeof *inputs);
    void **outputs = calloc((size_t)cores * n_out + 1, sizeof *outputs);
    if (!inputs || !outputs) {
        j->st = TPURT_E_NOMEM;
        snprintf(j->msg, sizeof j->msg, "out of host memory");
    }
    const void *const *in_of[TPUSIM_CORES_MAX];
    void *const *out_of[TPUSIM_CORES_MAX];
    for (uint64_t b0 = j->first; b0 < j->end && j->st == TPURT_OK; b0 += cores) {
        const uint32_t n = j->end - b0 < cores ? (uint32_t)(j->end - b0) : cores;
        uint64_t row = 0, rows = 0; /* the outputs' rows of batch b: whole but the last one */
        for (uint32_t c = 0; c < n; c++) {
            const uint64_t b = b0 + c;
            row = b * pl->batch;
            rows = pl->images - row < pl->batch ? pl->images - row : pl->batch;
            for (uint32_t i = 0; i < n_in; i++)
                inputs[c * n_in + i] = batch_input(&j->in[i], pl, b, c, j->o->divide);
            for (uint32_t k = 0; k < n_out; k++)
                outputs[c * n_out + k] =
                    rows == pl->batch ? (uint8_t *)j->res[k].data + row * row_bytes(&j->res[k], pl)
                                      : j->staging[k];
            in_of[c] = inputs + c * n_in;
            out_of[c] = outputs + c * n_out;
        }
        j->st = tpurt_run_batches(j->rt, n, in_of, n_in, out_of, n_out);
        if (j->st != TPURT_OK)
            snprintf(j->msg, sizeof j->msg, "%s", tpurt_last_error(j->rt));
        /* The group's last batch may be the padded one. */
        for (uint32_t k = 0; k < n_out && j->st == TPURT_OK && rows < pl->batch; k++)
            memcpy((uint8_t *)j->res[k].data + row * row_bytes(&j->res[k], pl), j->staging[k],
                   rows * row_bytes(&j->res[k], pl));
    }
    free(inputs);
    free(outputs);
    return NULL;
}

/* Job j (of n, j > 0): its share of the batches, its own runtime on a device of its own, and
 * its own input staging. Returns 0 or an exit code (message printed). */
static int setup_job(const run_job *first, const tpub_package *pkg, const tpurt_options *opts,
                     uint32_t n, uint32_t j, run_job *job)
{
    *job = *first;
    job->rt = NULL;
    job->first = first->pl->batches * j / n;
    job->end = first->pl->batches * (j + 1) / n;
    tpurt_options o = *opts;
    o.first_batch = job->first;
    char err[1024];
    const tpurt_status st = tpurt_open(pkg, &o, &job->rt, err, sizeof err);
    if (st != TPURT_OK)
        return cli_status_error(st, err, first->o->package);
    const uint32_t n_in = tpurt_n_inputs(job->rt);
    if (!(job->in = calloc(n_in + 1, sizeof *job->in)))
        return cli_fail(EXIT_USAGE, "memory", "out of host memory");
    for (uint32_t i = 0; i < n_in; i++) {
        job->in[i] = first->in[i];
        if (!(job->in[i].staging = calloc(job->in[i].sig.bytes ? job->in[i].sig.bytes : 1, 1)))
            return cli_fail(EXIT_USAGE, "memory", "out of host memory for input %u", i);
    }
    return 0;
}

static void free_job(run_job *job)
{
    for (uint32_t i = 0; job->in && i < tpurt_n_inputs(job->rt); i++)
        free(job->in[i].staging);
    free(job->in);
    tpurt_close(job->rt);
}

/* The batches on o->jobs runtimes (jobs[0] set up, the others made here), jobs 1.. in threads
 * of their own. Returns 0 or an exit code: the failure of the earliest batch, printed. */
static int run_jobs(const run_options *o, const tpub_package *pkg, const tpurt_options *opts,
                    run_job *jobs, uint32_t *n_jobs, double *seconds)
{
    const run_job *first = &jobs[0];
    const uint32_t n = o->jobs < first->pl->batches ? o->jobs : (uint32_t)first->pl->batches;
    jobs[0].end = first->pl->batches / n;
    int rc = 0;
    for (*n_jobs = 1; *n_jobs < n && !rc; ++*n_jobs)
        rc = setup_job(first, pkg, opts, n, *n_jobs, &jobs[*n_jobs]);
    if (rc)
        return rc;
    tpurt_status st;
    if (o->dev.trace && (st = tpurt_trace(jobs[0].rt, o->dev.trace, o->dev.trace_from,
                                          o->dev.trace_to)) != TPURT_OK)
        return cli_status_error(st, tpurt_last_error(jobs[0].rt), o->package);
    pthread_t threads[RUN_JOBS_MAX];
    uint32_t started = 1;
    const double t0 = tpuio_seconds();
    for (; started < n; started++)
        if (pthread_create(&threads[started], NULL, run_job_batches, &jobs[started])) {
            rc =
                cli_fail(EXIT_USAGE, "--jobs", "cannot start job %u: %s", started, strerror(errno));
            break;
        }
    if (!rc)
        run_job_batches(&jobs[0]);
    for (uint32_t j = 1; j < started; j++)
        pthread_join(threads[j], NULL);
    *seconds = tpuio_seconds() - t0;
    for (uint32_t j = 0; j < started && !rc; j++)
        if (jobs[j].st != TPURT_OK)
            rc = cli_status_error(jobs[j].st, jobs[j].msg, o->package);
    tpurt_stats stats;
    if (!rc && o->dev.trace && tpurt_get_stats(jobs[0].rt, &stats) == TPURT_OK)
        cli_warn_empty_trace(&o->dev, stats.trace_cycles);
    return rc;
}

int run_package(const run_options *o, const tpu_remote *remote)
{
    if (remote && o->jobs > 1)
        return cli_fail(EXIT_USAGE, "--jobs", "a remote device is one device: --jobs 1 only");
    int rc = 0;
    const double t_start = tpuio_seconds();
    tpub_package pkg = {0};
    int have_pkg = 0;
    tpurt *rt = NULL;
    run_job jobs[RUN_JOBS_MAX] = {{0}};
    uint32_t n_jobs = 0;
    double job_seconds = 0;
    tpurt_options opts;
    run_input *in = NULL;
    npy_array *res = NULL;
    void **staging = NULL;
    run_plan pl = {0};
    run_classes cl = {0};
    char err[1024];
    hlo_error perr;

    /* The package is the tool's to check against the options before a device is opened. */
    if (tpub_load(o->package, &pkg, &perr))
        rc = cli_fail(EXIT_USAGE, o->package, "%s", perr.msg);
    else
        have_pkg = 1;
    if (!rc && o->dev.device.array_n && o->dev.device.array_n != pkg.array_n)
        rc = cli_fail(EXIT_USAGE, "--array", "%u, but %s is compiled for the %u x %u array",
                      o->dev.device.array_n, o->package, pkg.array_n, pkg.array_n);
    if (!rc && o->n_outputs > pkg.n_outputs)
        rc = cli_fail(EXIT_USAGE, "--output", "%u given, but the package has %u output%s",
                      o->n_outputs, pkg.n_outputs, pkg.n_outputs == 1 ? "" : "s");
    if (!rc) {
        in = calloc(pkg.n_inputs + 1, sizeof *in);
        res = calloc(pkg.n_outputs + 1, sizeof *res);
        staging = calloc(pkg.n_outputs + 1, sizeof *staging);
        if (!in || !res || !staging)
            rc = cli_fail(EXIT_USAGE, "memory", "out of host memory");
    }
    if (!rc)
        rc = load_files(o, &pkg, in, &cl);
    if (!rc) {
        tpurt_options_default(&opts); /* verify on */
        opts.device = &o->dev.device;
        opts.max_cycles = o->dev.max_cycles;
        opts.weights_per_core = o->weights_per_core;
        opts.remote = remote;
        const tpurt_status st = tpurt_open(&pkg, &opts, &rt, err, sizeof err);
        if (st != TPURT_OK)
            rc = cli_status_error(st, err, o->package);
    }
    if (!rc)
        rc = bind_inputs(o, rt, in, &pl);
    if (!rc)
        rc = alloc_results(rt, &pl, res, staging);
    if (!rc)
        rc = run_setup_classes(o, rt, &pl, res, &cl);
    if (!rc) {
        jobs[0] = (run_job){.o = o, .pl = &pl, .rt = rt, .in = in, .res = res, .staging = staging};
        rc = run_jobs(o, &pkg, &opts, jobs, &n_jobs, &job_seconds);
    }
    if (!rc)
        rc = run_finish(o, jobs, n_jobs, &pl, &cl, res, tpuio_seconds() - t_start, job_seconds);

    for (uint32_t j = 1; j < n_jobs; j++)
        free_job(&jobs[j]);
    tpurt_close(rt);
    npy_free(&cl.labels);
    npy_free(&cl.expect);
    for (uint32_t j = 0; res && j < pkg.n_outputs; j++)
        npy_free(&res[j]);
    for (uint32_t j = 0; staging && j < pkg.n_outputs; j++)
        free(staging[j]);
    free(res);
    free(staging);
    for (uint32_t i = 0; in && i < pkg.n_inputs; i++) {
        npy_free(&in[i].arr);
        free(in[i].staging);
    }
    free(in);
    if (have_pkg)
        tpub_free(&pkg);
    return rc;
}

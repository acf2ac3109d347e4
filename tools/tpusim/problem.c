/* problem.c - a GEMM's operands (.npy files or random), its run on the device through the
 * driver, and the plain C reference it is checked against (tpusim gemm and tpusim bench); a
 * random convolution and its run (tpusim bench --conv), checked against the golden model. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/npy.h"
#include "sim/fp.h"
#include "tools/tpusim/gemm.h"

/* ------------------------------------------------------------ problem -- */

void problem_free(gemm_problem *p)
{
    free(p->a);
    free(p->b);
    free(p->params);
}

static int has_params(const gemm_problem *p) { return p->bias || p->requant != REPORT_INT32_OUT; }

/* Loads path and checks its dtype, its rank, and that every dimension is 1..2^32-1. */
static int load_operand(const char *path, npy_array *arr, npy_dtype want, int rank,
                        const char *role, const char *dtype_hint)
{
    char err[256], s[200];
    if (npy_load(path, arr, err, sizeof err))
        return cli_fail(EXIT_USAGE, path, "%s", err);
    if (arr->dtype != want)
        return cli_fail(EXIT_USAGE, path, "dtype %s, expected %s for %s%s", cli_dtype(arr->dtype),
                        npy_dtype_name(want), role, dtype_hint);
    if (arr->ndim != rank)
        return cli_fail(EXIT_USAGE, path, "shape %s has %d dimension%s, expected %d for %s",
                        cli_shape(arr, s, sizeof s), arr->ndim, arr->ndim == 1 ? "" : "s", rank,
                        role);
    for (int i = 0; i < rank; i++)
        if (!arr->shape[i] || arr->shape[i] > UINT32_MAX)
            return cli_fail(EXIT_USAGE, path, "shape %s: every dimension must be 1..%u",
                            cli_shape(arr, s, sizeof s), UINT32_MAX);
    return 0;
}

static int shapes_differ(const char *fa, const npy_array *a, const char *fb, const npy_array *b,
                         const char *why)
{
    char sa[200], sb[200];
    return cli_fail(EXIT_USAGE, "shapes", "%s is %s but %s is %s: %s", fa,
                    cli_shape(a, sa, sizeof sa), fb, cli_shape(b, sb, sizeof sb), why);
}

uint32_t c_elem_bytes(const gemm_problem *p)
{
    return p->requant != REPORT_INT32_OUT ? 1 : p->out_bf16 ? 2 : 4;
}

/* Device bytes of A, B, C and the parameters. */
static void operand_bytes(const gemm_problem *p, uint64_t bytes[4])
{
    const uint64_t e = p->bf16 ? 2 : 1;
    bytes[0] = (uint64_t)p->m * p->k * e;
    bytes[1] = (uint64_t)p->k * p->n * e;
    bytes[2] = (uint64_t)p->m * p->n * c_elem_bytes(p);
    bytes[3] = has_params(p) ? (p->bf16 ? 4ull : 12ull) * p->n : 0;
}

/* The operands must fit the device's 32-bit addresses, with room for the stream. */
static int check_size(const gemm_problem *p)
{
    uint64_t bytes[4];
    operand_bytes(p, bytes);
    const uint64_t total = bytes[0] + bytes[1] + bytes[2] + bytes[3];
    if (!tpu_mem_size_for(total))
        return cli_fail(EXIT_USAGE, "shapes",
                        "M %u x K %u x N %u needs %llu bytes of device memory; at most 3 GiB fit",
                        p->m, p->k, p->n, (unsigned long long)total);
    return 0;
}

/* Allocates the parameter block (when used) and fills mult and shift: per column from
 * per_column ([2][n]: mult, shift), else per tensor from the options. */
static int set_scales(gemm_problem *p, const gemm_options *o, const int32_t *per_column)
{
    if (!has_params(p))
        return 0;
    p->params = calloc((p->bf16 ? 1 : 3) * (size_t)p->n, sizeof *p->params);
    if (!p->params)
        return cli_fail(EXIT_USAGE, "memory", "out of host memory");
    for (uint32_t j = 0; p->requant != REPORT_INT32_OUT && j < p->n; j++) {
        const int32_t shift = per_column ? per_column[p->n + j] : (int32_t)o->shift;
        if (shift < 0 || shift > 63)
            return cli_fail(EXIT_USAGE, o->params_file,
                            "the shift of column %u is %d, outside 0..63", j, shift);
        p->params[p->n + j] = per_column ? per_column[j] : (int32_t)o->mult;
        p->params[2 * p->n + j] = shift;
    }
    return 0;
}

static void set_flags(gemm_problem *p, const gemm_options *o)
{
    p->bf16 = o->bf16;
    p->out_bf16 = o->out_bf16;
    p->unsigned_a = o->unsigned_a;
    p->bias = o->bias;
    p->relu = o->relu;
    p->requant = o->params_file ? REPORT_REQUANT_COLUMN
                 : o->requant   ? REPORT_REQUANT_TENSOR
                                : REPORT_INT32_OUT;
}

/* A bf16 operand: a bfloat16 .npy ('<V2', as ml_dtypes saves it), or float32 rounded to nearest
 * even (sim/fp.h's rounding: a subnormal, which the arithmetic reads as zero, becomes one). */
static int load_bf16(const char *path, npy_array *arr, const char *role)
{
    char err[256], s[200];
    if (npy_load(path, arr, err, sizeof err))
        return cli_fail(EXIT_USAGE, path, "%s", err);
    if (arr->dtype == NPY_V2 && npy_as_bfloat16(arr, err, sizeof err))
        return cli_fail(EXIT_USAGE, path, "%s", err);
    if (arr->dtype != NPY_BFLOAT16 && arr->dtype != NPY_FLOAT32)
        return cli_fail(EXIT_USAGE, path,
                        "dtype %s, expected bfloat16 or float32 for %s (--dtype bf16)",
                        cli_dtype(arr->dtype), role);
    if (arr->ndim != 2)
        return cli_fail(EXIT_USAGE, path, "shape %s has %d dimension%s, expected 2 for %s",
                        cli_shape(arr, s, sizeof s), arr->ndim, arr->ndim == 1 ? "" : "s", role);
    for (int i = 0; i < 2; i++)
        if (!arr->shape[i] || arr->shape[i] > UINT32_MAX)
            return cli_fail(EXIT_USAGE, path, "shape %s: every dimension must be 1..%u",
                            cli_shape(arr, s, sizeof s), UINT32_MAX);
    if (arr->dtype == NPY_FLOAT32) {
        uint8_t *d = arr->data; /* in place: element i's 2 bytes go where its 4 began */
        for (uint64_t i = 0; i < arr->count; i++) {
            uint32_t f;
            memcpy(&f, d + 4 * i, 4);
            const uint16_t h = tpusim_fp32_to_bf16(f);
            memcpy(d + 2 * i, &h, 2);
        }
        arr->dtype = NPY_BFLOAT16;
    }
    return 0;
}

/* The loaded A, B, bias (when o names one) and requantization parameters (prm, or NULL) into p
 * once their shapes agree: A and B taken (their data NULL in a and b), the bias copied. */
static int take_operands(const gemm_options *o, gemm_problem *p, npy_array *a, npy_array *b,
                         const npy_array *bias, const npy_array *prm)
{
    if (a->shape[1] != b->shape[0])
        return shapes_differ(o->a, a, o->b, b, "A's columns must equal B's rows (K)");
    if (o->bias_file && bias->shape[0] != b->shape[1])
        return shapes_differ(o->bias_file, bias, o->b, b,
                             "the bias needs one value per column of B (N)");
    if (prm && (prm->shape[0] != 2 || prm->shape[1] != b->shape[1]))
        return shapes_differ(o->params_file, prm, o->b, b,
                             "the parameters need 2 rows (MULT, SHIFT) of one value per column "
                             "of B (N)");
    p->m = (uint32_t)a->shape[0];
    p->k = (uint32_t)a->shape[1];
    p->n = (uint32_t)b->shape[1];
    set_flags(p, o);
    int rc = check_size(p);
    if (rc)
        return rc;
    p->a = a->data;
    p->b = b->data;
    a->data = b->data = NULL;
    if ((rc = set_scales(p, o, prm ? prm->data : NULL)))
        return rc;
    if (o->bias_file)
        memcpy(p->params, bias->data, p->n * sizeof *p->params);
    return 0;
}

static int load_problem_bf16(const gemm_options *o, gemm_problem *p)
{
    npy_array a = {0}, b = {0}, bias = {0};
    int rc = load_bf16(o->a, &a, "A [M,K]");
    if (!rc)
        rc = load_bf16(o->b, &b, "B [K,N]");
    if (!rc && o->bias_file)
        rc = load_operand(o->bias_file, &bias, NPY_FLOAT32, 1, "the bias [N]", " (--dtype bf16)");
    if (!rc)
        rc = take_operands(o, p, &a, &b, &bias, NULL);
    npy_free(&a);
    npy_free(&b);
    npy_free(&bias);
    return rc;
}

int load_problem(const gemm_options *o, gemm_problem *p)
{
    if (o->bf16)
        return load_problem_bf16(o, p);
    npy_array a = {0}, b = {0}, bias = {0}, prm = {0};
    int rc = load_operand(o->a, &a, o->unsigned_a ? NPY_UINT8 : NPY_INT8, 2, "A [M,K]",
                          o->unsigned_a ? " (--unsigned-a)" : " (uint8 needs --unsigned-a)");
    if (!rc)
        rc = load_operand(o->b, &b, NPY_INT8, 2, "B [K,N]", "");
    if (!rc && o->bias_file)
        rc = load_operand(o->bias_file, &bias, NPY_INT32, 1, "the bias [N]", "");
    if (!rc && o->params_file)
        rc = load_operand(o->params_file, &prm, NPY_INT32, 2, "the requantization parameters [2,N]",
                          "");
    if (!rc)
        rc = take_operands(o, p, &a, &b, &bias, o->params_file ? &prm : NULL);
    npy_free(&a);
    npy_free(&b);
    npy_free(&bias);
    npy_free(&prm);
    return rc;
}

/* splitmix64: the same seed gives the same operands on every machine. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* bf16 values of both signs within 2^-8..2^8 (products and sums far from overflow), or with
 * edges one in 8 an edge value of docs/isa.md's rules: +-0, +-inf, NaNs (quiet, signalling,
 * negative), subnormals, the smallest normals and the largest finite values. */
static uint16_t random_bf16(uint64_t *s, int edges)
{
    static const uint16_t edge[] = {0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0xffc1, 0x7f81,
                                    0x0001, 0x807f, 0x0080, 0x8080, 0x7f7f, 0xff7f};
    const uint64_t r = rng_next(s);
    if (edges && r % 8 == 0)
        return edge[r / 8 % (sizeof edge / sizeof edge[0])];
    return (uint16_t)((r >> 8 & 0x8000) | (127 - 8 + r / 8 % 17) << 7 | (r >> 32 & 0x7f));
}

static int random_bf16_problem(const gemm_options *o, gemm_problem *p)
{
    const size_t na = (size_t)p->m * p->k, nb = (size_t)p->k * p->n;
    uint16_t *a = malloc(2 * na), *b = malloc(2 * nb);
    p->a = (uint8_t *)a;
    p->b = (int8_t *)b;
    if (!a || !b)
        return cli_fail(EXIT_USAGE, "memory", "out of host memory for the operands");
    int rc = set_scales(p, o, NULL);
    if (rc)
        return rc;
    uint64_t s = o->seed;
    for (size_t i = 0; i < na; i++)
        a[i] = random_bf16(&s, o->edges);
    for (size_t i = 0; i < nb; i++)
        b[i] = random_bf16(&s, o->edges);
    /* Cancellation: B's last row is minus its first, so sums meet x - x and inf - inf. */
    for (uint32_t j = 0; o->edges && p->k > 1 && j < p->n; j++)
        b[(size_t)(p->k - 1) * p->n + j] = b[j] ^ 0x8000;
    for (uint32_t j = 0; p->bias && j < p->n; j++)
        p->params[j] = (int32_t)tpusim_bf16_to_fp32(random_bf16(&s, o->edges));
    return 0;
}

int random_problem(const gemm_options *o, gemm_problem *p)
{
    p->m = o->m;
    p->k = o->k;
    p->n = o->n;
    set_flags(p, o);
    int rc = check_size(p);
    if (rc || p->bf16)
        return rc ? rc : random_bf16_problem(o, p);
    const size_t na = (size_t)p->m * p->k, nb = (size_t)p->k * p->n;
    p->a = malloc(na);
    p->b = malloc(nb);
    if (!p->a || !p->b)
        return cli_fail(EXIT_USAGE, "memory", "out of host memory for the operands");
    if ((rc = set_scales(p, o, NULL)))
        return rc;
    uint64_t s = o->seed;
    for (size_t i = 0; i < na; i++)
        p->a[i] = (uint8_t)rng_next(&s);
    for (size_t i = 0; i < nb; i++)
        p->b[i] = (int8_t)(uint8_t)rng_next(&s);
    /* Biases of the order of the sums (K x 2^14 at most), so that ReLU cuts a fair share. */
    for (uint32_t j = 0; p->bias && j < p->n; j++)
        p->params[j] = (int32_t)(rng_next(&s) % (1u << 20)) - (1 << 19);
    return 0;
}

/* -------------------------------------------------------- reference -- */

/* ACTIVATE's requantization (docs/isa.md): round to nearest, ties away from zero, then clamp. */
static int8_t requant(int32_t x, int32_t mult, uint32_t shift)
{
    const int64_t prod = (int64_t)x * mult;
    int64_t q = prod;
    if (shift) {
        const uint64_t half = 1ull << (shift - 1);
        q = (int64_t)((uint64_t)prod + (prod < 0 ? half - 1 : half)) >> shift;
    }
    return (int8_t)(q < -128 ? -128 : q > 127 ? 127 : q);
}

/* C[i][j] straight from the definition: 32-bit wrapping sums. */
static int32_t reference_elem(const gemm_problem *p, uint32_t i, uint32_t j)
{
    uint32_t sum = 0;
    for (uint32_t k = 0; k < p->k; k++) {
        const uint8_t av = p->a[(size_t)i * p->k + k];
        const int32_t a = p->unsigned_a ? av : (int8_t)av;
        sum += (uint32_t)(a * p->b[(size_t)k * p->n + j]);
    }
    if (p->bias)
        sum += (uint32_t)p->params[j];
    int32_t x = (int32_t)sum;
    if (p->relu && x < 0)
        x = 0;
    if (p->requant != REPORT_INT32_OUT)
        x = requant(x, p->params[p->n + j], (uint32_t)p->params[2 * p->n + j]);
    return x;
}

/* C[i][j]'s fp32 bits by the bf16 rule (docs/isa.md "Floating point (bf16)"): each K tile of n
 * rows summed from +0 in row order, the tiles' sums added in increasing k, then bias and ReLU. */
static uint32_t reference_bf16(const gemm_problem *p, uint32_t n, uint32_t i, uint32_t j)
{
    const uint16_t *a = (const uint16_t *)p->a, *b = (const uint16_t *)p->b;
    uint32_t acc = 0;
    for (uint32_t k0 = 0; k0 < p->k; k0 += n) {
        uint32_t s = 0;
        for (uint32_t k = k0; k < p->k && k - k0 < n; k++)
            s = tpusim_fp32_add(s,
                                tpusim_bf16_mul(a[(size_t)i * p->k + k], b[(size_t)k * p->n + j]));
        acc = k0 ? tpusim_fp32_add(acc, s) : s;
    }
    if (p->bias)
        acc = tpusim_fp32_add(acc, (uint32_t)p->params[j]);
    return p->relu ? tpusim_fp32_relu(acc) : acc;
}

/* bf16 C: every element's bits; the mismatches counted, the first one reported. */
static int check_bf16(const gemm_problem *p, uint32_t n, const void *c)
{
    uint64_t bad = 0;
    uint32_t bi = 0, bj = 0, want_bad = 0, got_bad = 0;
    for (uint32_t i = 0; i < p->m; i++)
        for (uint32_t j = 0; j < p->n; j++) {
            const size_t idx = (size_t)i * p->n + j;
            uint32_t want = reference_bf16(p, n, i, j), got;
            if (p->out_bf16) {
                want = tpusim_fp32_to_bf16(want);
                got = ((const uint16_t *)c)[idx];
            } else {
                got = ((const uint32_t *)c)[idx];
            }
            if (got != want && !bad++) {
                bi = i;
                bj = j;
                want_bad = want;
                got_bad = got;
            }
        }
    if (!bad)
        return 0;
    return cli_fail(EXIT_MISMATCH, "result mismatch",
                    "%llu of %llu elements of C differ; first at row %u, column %u: expected "
                    "0x%0*x (reference GEMM), actual 0x%0*x (device)",
                    (unsigned long long)bad, (unsigned long long)p->m * p->n, bi, bj,
                    p->out_bf16 ? 4 : 8, want_bad, p->out_bf16 ? 4 : 8, got_bad);
}

int check_reference(const gemm_problem *p, uint32_t array_n, const void *c)
{
    if (p->bf16)
        return check_bf16(p, array_n, c);
    const int int8_out = p->requant != REPORT_INT32_OUT;
    for (uint32_t i = 0; i < p->m; i++)
        for (uint32_t j = 0; j < p->n; j++) {
            const size_t idx = (size_t)i * p->n + j;
            const int32_t got = int8_out ? ((const int8_t *)c)[idx] : ((const int32_t *)c)[idx];
            const int32_t want = reference_elem(p, i, j);
            if (got != want)
                return cli_fail(EXIT_MISMATCH, "result mismatch",
                                "C at row %u, column %u: expected %d (reference GEMM), actual %d "
                                "(device)",
                                i, j, want, got);
        }
    return 0;
}

/* ------------------------------------------------------------ progress -- */

typedef struct {
    double start;   /* tpuio_seconds */
    int pushed_all; /* the firmware has pushed every instruction: the total is known */
    int shown;
} progress;

static void show_progress(void *ctx, uint64_t retired, uint64_t pushed, uint64_t cycles)
{
    progress *pr = ctx;
    const double secs = tpuio_seconds() - pr->start;
    const double mhz = secs > 0 ? (double)cycles / secs / 1e6 : 0;
    if (pr->pushed_all && pushed) {
        enum { WIDTH = 30 };
        const double frac = (double)retired / (double)pushed;
        char bar[WIDTH + 1];
        for (int i = 0; i < WIDTH; i++)
            bar[i] = i < (int)(frac * WIDTH) ? '#' : '.';
        bar[WIDTH] = '\0';
        fprintf(stderr, "\r[%s] %5.1f %%  %llu cycles  %.2f M cycles/s  %.0f s\033[K", bar,
                100 * frac, (unsigned long long)cycles, mhz, secs);
    } else {
        /* The firmware pushes at the core's pace: the total is not known until it is done. */
        fprintf(stderr,
                "\rrunning: %llu instructions pushed, %llu retired  %llu cycles  "
                "%.2f M cycles/s  %.0f s\033[K",
                (unsigned long long)pushed, (unsigned long long)retired, (unsigned long long)cycles,
                mhz, secs);
    }
    pr->shown = 1;
}

/* -------------------------------------------------------------- device -- */

/* A device opened with o's array size, cores and memory timing, verify on, and room for need
 * bytes of operands besides the command streams; *info as it reports itself. */
static int open_device(const gemm_options *o, uint64_t need, tpu_device **dev, tpu_info *info)
{
    tpusim_config cfg = o->run.device;
    cfg.mem_size = tpu_mem_size_for(need); /* check_size made sure it fits */
    char err[512];
    const tpu_status st = tpu_open(&cfg, 1, dev, err, sizeof err);
    if (st != TPU_OK)
        return cli_status_error(tpurt_status_from_driver(st), err, "device");
    tpu_query(*dev, info); /* an open device answers */
    return 0;
}

/* One operand buffer of a command: its bytes (written to the device when host is not NULL), and
 * where the device and the stream's buffer table put it. */
typedef struct {
    const void *host;
    uint64_t bytes;
    uint32_t addr, idx;
} buffer;

/* Appends part `part` of `parts` of a command to a stream declaring bufs. */
typedef tpu_status (*add_fn)(tpu_stream *, const buffer *, const void *cmd, uint32_t part,
                             uint32_t parts);

/* Runs one command on a device opened with o's options: writes the n buffers (those with bytes),
 * appends part k of the command to stream k with add (every stream declares the same buffers),
 * runs stream k on core k (traced with o->run.trace) and reads buffer out back into dst. */
static int run_command(const gemm_options *o, buffer *bufs, int n, add_fn add, const void *cmd,
                       uint32_t parts, int out, void *dst, gemm_result *res)
{
    memset(&res->chip, 0, sizeof res->chip);
    uint64_t need = 0;
    for (int i = 0; i < n; i++)
        need += bufs[i].bytes;
    tpu_stream *st[TPUSIM_CORES_MAX] = {NULL};
    for (uint32_t k = 0; k < parts; k++)
        if (!(st[k] = tpu_stream_new())) {
            for (uint32_t j = 0; j < k; j++)
                tpu_stream_free(st[j]);
            return cli_fail(EXIT_USAGE, "memory", "out of host memory for the command streams");
        }
    tpu_device *dev;
    int rc = open_device(o, need, &dev, &res->info);
    if (rc) {
        for (uint32_t k = 0; k < parts; k++)
            tpu_stream_free(st[k]);
        return rc;
    }
    tpu_status s = TPU_OK;
    for (int i = 0; i < n && s == TPU_OK; i++) {
        if (!bufs[i].bytes)
            continue;
        s = tpu_alloc(dev, bufs[i].bytes, &bufs[i].addr);
        if (s == TPU_OK && bufs[i].host)
            s = tpu_write(dev, bufs[i].addr, bufs[i].host, bufs[i].bytes);
        for (uint32_t k = 0; k < parts && s == TPU_OK; k++)
            s = tpu_stream_buffer(st[k], bufs[i].addr, (uint32_t)bufs[i].bytes, &bufs[i].idx);
    }
    for (uint32_t k = 0; k < parts && s == TPU_OK; k++)
        s = add(st[k], bufs, cmd, k, parts);
    if (s == TPU_OK && o->run.trace)
        s = tpu_trace_open(dev, o->run.trace, o->run.trace_from, o->run.trace_to);
    progress pr = {0};
    uint64_t cycle0 = 0;
    if (s == TPU_OK) {
        if (!o->run.quiet && isatty(STDERR_FILENO))
            tpu_set_progress(dev, show_progress, &pr);
        pr.start = tpuio_seconds();
        tpu_set_budget(dev, o->run.max_cycles);
        cycle0 = tpu_cycle(dev);
        for (uint32_t k = 0; k < parts && s == TPU_OK; k++)
            s = tpu_submit_core(dev, k, st[k]);
        /* The bar needs the total of the core reporting, which a chip's progress does not say. */
        pr.pushed_all = parts == 1;
        if (s == TPU_OK)
            s = tpu_wait_all(dev, 0);
        res->chip.wall_seconds = tpuio_seconds() - pr.start;
        if (pr.shown)
            fputs("\r\033[K", stderr);
        /* The trace is kept when the run failed; that failure is the one to report. */
        const tpu_status ts = o->run.trace ? tpu_trace_close(dev) : TPU_OK;
        if (s == TPU_OK)
            s = ts;
        if (s == TPU_OK && o->run.trace)
            cli_warn_empty_trace(&o->run, tpu_trace_cycles(dev));
    }
    if (s == TPU_OK)
        s = tpu_read(dev, bufs[out].addr, dst, bufs[out].bytes);
    if (s == TPU_OK)
        s = tpu_perf(dev, &res->perf);
    res->chip.cores = o->run.device.cores;
    res->chip.elapsed = tpu_cycle(dev) - cycle0;
    for (uint32_t k = 0; k < parts && s == TPU_OK && o->run.device.cores; k++)
        s = tpu_perf_core(dev, k, &res->chip.perf[k]);
    rc = s == TPU_OK ? 0
                     : cli_status_error(tpurt_status_from_driver(s), tpu_last_error(dev), "device");
    for (uint32_t k = 0; k < parts; k++)
        tpu_stream_free(st[k]);
    tpu_close(dev);
    return rc;
}

void split_rows(uint32_t m, uint32_t parts, uint32_t part, uint32_t *first, uint32_t *rows)
{
    /* Sizes that differ by at most one, the larger first: rows enter the array one a cycle
     * whatever their count (M is not padded to N), and every core streams all of B's tiles,
     * so a core's time grows with its rows and equal shares finish together. Blocks in
     * multiples of N would only leave one core up to N - 1 rows more. */
    const uint32_t base = m / parts, extra = m % parts;
    *first = part * base + (part < extra ? part : extra);
    *rows = base + (part < extra);
}

static tpu_status add_gemm(tpu_stream *st, const buffer *b, const void *cmd, uint32_t part,
                           uint32_t parts)
{
    const gemm_problem *p = cmd;
    uint32_t first, rows;
    split_rows(p->m, parts, part, &first, &rows);
    const uint32_t c_size = c_elem_bytes(p), e = p->bf16 ? 2 : 1;
    tpu_gemm g = {
        .m = rows,
        .k = p->k,
        .n = p->n,
        .flags = (p->bias ? TPU_GEMM_BIAS : 0) | (p->relu ? TPU_GEMM_RELU : 0) |
                 (p->requant != REPORT_INT32_OUT ? TPU_GEMM_OUT_INT8 : 0) |
                 (p->unsigned_a ? TPU_GEMM_A_UNSIGNED : 0) | (p->bf16 ? TPU_GEMM_BF16 : 0) |
                 (p->out_bf16 ? TPU_GEMM_OUT_BF16 : 0),
        .a = {b[0].idx, first * p->k * e, p->k},
        .b = {b[1].idx, 0, p->n},
        .c = {b[2].idx, first * p->n * c_size, p->n},
        .params = {has_params(p) ? b[3].idx : 0, 0, 0},
    };
    return tpu_stream_gemm(st, &g);
}

int run_device(const gemm_options *o, const gemm_problem *p, void *c, gemm_result *res)
{
    uint64_t bytes[4]; /* A, B, C, params */
    operand_bytes(p, bytes);
    buffer bufs[4] = {{p->a, bytes[0], 0, 0},
                      {p->b, bytes[1], 0, 0},
                      {NULL, bytes[2], 0, 0},
                      {p->params, bytes[3], 0, 0}};
    /* Cores beyond M's rows stay idle: a GEMM needs one row at least. */
    const uint32_t parts = !o->run.device.cores         ? 1
                           : o->run.device.cores < p->m ? o->run.device.cores
                                                        : p->m;
    const int rc = run_command(o, bufs, 4, add_gemm, p, parts, 2, c, res);
    for (uint32_t k = 0; k < parts && o->run.device.cores; k++) {
        uint32_t first;
        split_rows(p->m, parts, k, &first, &res->chip.rows[k]);
    }
    return rc;
}

/* ---------------------------------------------------------- convolution -- */

/* Device bytes of the input, the kernel (in tile order), the output and the parameters. */
static void conv_bytes(const tpu_conv2d *v, uint32_t n, uint64_t bytes[4])
{
    uint32_t oh, ow;
    tpu_conv_out_size(v, &oh, &ow);
    bytes[0] = (uint64_t)v->batch * v->h * v->w * v->c;
    bytes[1] = (uint64_t)tpu_conv_k_tiles(v, n) * ((v->cout + n - 1) / n) * n * n;
    bytes[2] = (uint64_t)v->batch * oh * ow * v->cout * (v->flags & TPU_GEMM_OUT_INT8 ? 1 : 4);
    bytes[3] = 12ull * v->cout;
}

int random_conv(const tpu_conv2d *geometry, uint32_t n, uint64_t seed, gemm_conv *p)
{
    p->v = *geometry;
    uint64_t bytes[4];
    conv_bytes(&p->v, n, bytes);
    uint32_t oh, ow;
    tpu_conv_out_size(&p->v, &oh, &ow);
    if (!oh || !ow)
        return cli_fail(EXIT_USAGE, "convolution", "the kernel or pooling window does not fit");
    if (!tpu_mem_size_for(bytes[0] + bytes[1] + bytes[2] + bytes[3]))
        return cli_fail(EXIT_USAGE, "convolution", "needs more than the 3 GiB of device memory");
    p->in = malloc(bytes[0] ? bytes[0] : 1);
    p->kernel = malloc(bytes[1] ? bytes[1] : 1);
    p->params = calloc(3 * (size_t)p->v.cout, sizeof *p->params);
    p->out_bytes = bytes[2];
    if (!p->in || !p->kernel || !p->params)
        return cli_fail(EXIT_USAGE, "memory", "out of host memory for the operands");
    uint64_t s = seed;
    for (uint64_t i = 0; i < bytes[0]; i++)
        p->in[i] = (uint8_t)rng_next(&s);
    for (uint64_t i = 0; i < bytes[1]; i++)
        p->kernel[i] = (int8_t)(uint8_t)rng_next(&s);
    /* Biases of the order of the sums, and a requantization that brings sums of k products
     * (at most k x 2^14) to about int8's range: mult 2^30, shift 37 + log2(k). */
    uint32_t shift = 37;
    for (uint64_t k = (uint64_t)p->v.kh * p->v.kw * p->v.c; k > 1; k = (k + 1) / 2)
        shift++;
    for (uint32_t j = 0; j < p->v.cout; j++) {
        p->params[j] = (int32_t)(rng_next(&s) % (1u << 20)) - (1 << 19);
        p->params[p->v.cout + j] = 1 << 30;
        p->params[2 * p->v.cout + j] = (int32_t)(shift < 63 ? shift : 63);
    }
    return 0;
}

void conv_free(gemm_conv *p)
{
    free(p->in);
    free(p->kernel);
    free(p->params);
}

static tpu_status add_conv(tpu_stream *st, const buffer *b, const void *cmd, uint32_t part,
                           uint32_t parts)
{
    (void)part; /* a convolution runs whole on one core */
    (void)parts;
    tpu_conv2d v = *(const tpu_conv2d *)cmd;
    v.in = (tpu_operand){b[0].idx, 0, 0};
    v.kernel = (tpu_operand){b[1].idx, 0, 0};
    v.out = (tpu_operand){b[2].idx, 0, 0};
    v.params = (tpu_operand){b[3].idx, 0, 0};
    return tpu_stream_conv2d(st, &v);
}

int run_conv(const gemm_options *o, const gemm_conv *p, void *out, gemm_result *res)
{
    uint64_t bytes[4];
    conv_bytes(&p->v, o->run.device.array_n, bytes);
    buffer bufs[4] = {{p->in, bytes[0], 0, 0},
                      {p->kernel, bytes[1], 0, 0},
                      {NULL, bytes[2], 0, 0},
                      {p->params, bytes[3], 0, 0}};
    return run_command(o, bufs, 4, add_conv, &p->v, 1, 2, out, res);
}

/* tpuc_main.c - the tpuc command: compile an HLO module into a package, or disassemble one. */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/tpuc.h"
#include "io/npy.h"
#include "io/tpuio.h"

static const char usage[] =
    "usage: tpuc MODEL.hlo [--weights W.safetensors] [--calibrate X.npy ...] [--array N]\n"
    "            [--allow-nonfinite] -o OUT.tpub [--quiet]\n"
    "       tpuc --dump PKG.tpub\n"
    "\n"
    "Compiles XLA HLO text (as JAX, TensorFlow or PyTorch/XLA print it) into a package for\n"
    "`tpusim run`. Parameters named by a tensor of W bind to it (by name, with or without the\n"
    "'.N' suffix, or by parameter number); the others are the model's inputs, in parameter\n"
    "order. Float dots and convolutions on the device are quantized to int8 with ranges\n"
    "calibrated on X (one file per input: the input's shape with any number of rows). --array:\n"
    "the array size the weights are tiled for (default 16). Prints the compiler's report (what\n"
    "runs where, the quantization chosen) and the compile time. NaN or infinite weights, biases or "
    "calibration\n"
    "samples are an error; --allow-nonfinite makes them warnings (on stderr and in the report).\n"
    "exit status: 0 success, 1 an input (model, weights, calibration data, package) is\n"
    "rejected or unreadable, 2 usage, or the output cannot be written.\n";

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int
fail(int code, const char *fmt, ...)
{
    char why[1536], line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    tpuio_err(line, sizeof line, "tpuc: %s", why); /* one printable line */
    fprintf(stderr, "%s\n", line);
    return code;
}

static hlo_array *from_npy(const npy_array *n)
{
    static const hlo_type types[] = {[NPY_INT8] = HLO_S8,
                                     [NPY_UINT8] = HLO_U8,
                                     [NPY_INT32] = HLO_S32,
                                     [NPY_FLOAT32] = HLO_F32,
                                     [NPY_INT64] = HLO_S64};
    int64_t dims[NPY_MAX_DIMS];
    for (int i = 0; i < n->ndim; i++)
        dims[i] = (int64_t)n->shape[i];
    hlo_array *a = hlo_array_new(types[n->dtype], n->ndim, dims);
    if (a)
        memcpy(a->data, n->data, n->count * npy_dtype_size(n->dtype));
    return a;
}

int main(int argc, char **argv)
{
    tpuio_remove_on_signals(); /* Ctrl-C never leaves a half-written package */
    tpuc_options o = {0};
    const char *out = NULL, *dump = NULL;
    const char *calib_paths[64];
    int n_calib = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(a, "--allow-nonfinite")) {
            o.allow_nonfinite = true;
        } else if (!strcmp(a, "--weights") || !strcmp(a, "--calibrate") || !strcmp(a, "-o") ||
                   !strcmp(a, "--dump") || !strcmp(a, "--array")) {
            if (!v)
                return fail(2, "%s needs a value", a);
            i++;
            if (!strcmp(a, "--weights"))
                o.weights_path = v;
            else if (!strcmp(a, "-o"))
                out = v;
            else if (!strcmp(a, "--dump"))
                dump = v;
            else if (!strcmp(a, "--calibrate")) {
                if (n_calib == 64)
                    return fail(2, "too many --calibrate files");
                calib_paths[n_calib++] = v;
            } else {
                char *end;
                unsigned long n = strtoul(v, &end, 10);
                if (*end || n < 1 || n > 256)
                    return fail(2, "--array %s: expected an array size 1..256", v);
                o.array_n = (uint32_t)n;
            }
        } else if (a[0] == '-' && a[1]) {
            return fail(2, "unknown option %s (tpuc --help)", a);
        } else if (!o.hlo_path) {
            o.hlo_path = a;
        } else {
            return fail(2, "more than one model given: %s", a);
        }
    }
    char err[1024];
    hlo_error e;
    if (dump) {
        if (o.hlo_path || out)
            return fail(2, "--dump takes only the package");
        tpub_package p;
        if (tpub_load(dump, &p, &e))
            return fail(1, "%s: %s", dump, e.msg);
        int rc = tpub_dump(&p, stdout);
        tpub_free(&p);
        return rc ? fail(2, "%s: cannot write the listing", dump) : 0;
    }
    if (!o.hlo_path || !out) {
        fputs(usage, stderr);
        return 2;
    }
    hlo_array *calib[64];
    for (int k = 0; k < n_calib; k++) {
        npy_array n;
        const char *path = calib_paths[k];
        int bad = npy_load(path, &n, err, sizeof err);
        if (!bad) {
            calib[k] = from_npy(&n);
            npy_free(&n);
            if (!calib[k])
                bad = snprintf(err, sizeof err, "out of memory");
        }
        if (bad) {
            while (k--)
                hlo_array_free(calib[k]);
            return fail(1, "%s: %s", path, err);
        }
    }
    o.calib = calib;
    o.n_calib = n_calib;
    double t0 = tpuio_seconds();
    tpub_package p;
    int rc = tpuc_compile(&o, &p, &e);
    double t1 = tpuio_seconds();
    for (int k = 0; k < n_calib; k++)
        hlo_array_free(calib[k]);
    if (rc)
        return fail(1, "%s", e.msg);
    if (tpub_save(&p, out, &e)) {
        tpub_free(&p);
        return fail(2, "%s: %s", out, e.msg);
    }
    /* Warnings lead the report; they reach stderr also with --quiet. */
    for (const char *l = p.report; !strncmp(l, "warning: ", 9);) {
        const char *nl = strchr(l, '\n');
        fprintf(stderr, "tpuc: %.*s\n", (int)(nl ? nl - l : (long)strlen(l)), l);
        if (!nl)
            break;
        l = nl + 1;
    }
    if (!quiet)
        printf("%s", p.report);
    printf("tpuc: %s -> %s in %.1f ms\n", o.hlo_path, out, 1e3 * (t1 - t0));
    tpub_free(&p);
    return 0;
}

/* main.c - the tpuc command: compile an HLO module into a package, or list one. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/tpuc.h"
#include "io/npy.h"
#include "io/tpuio.h"
#include "tools/common/cli.h"

static const char usage[] =
    "usage: tpuc MODEL.hlo [--weights W.safetensors] [--calibrate X.npy ...] [--array N]\n"
    "            [--precision int8|bf16] [--allow-nonfinite] [--no-conv-packing] -o OUT.tpub\n"
    "            [--quiet]\n"
    "       tpuc --dump PKG.tpub\n"
    "\n"
    "Compiles XLA HLO text (as JAX, TensorFlow or PyTorch/XLA print it) into a package for\n"
    "`tpusim run`. Parameters named by a tensor of W bind to it (by name, with or without the\n"
    "'.N' suffix, or by parameter number); the others are the model's inputs, in parameter\n"
    "order. Float dots and convolutions on the device are quantized to int8 with ranges\n"
    "calibrated on X (one file per input: the input's shape with any number of rows), or with\n"
    "--precision bf16 run in bf16 with fp32 sums, uncalibrated (--calibrate is ignored). --array:\n"
    "the array size the weights are tiled for (default 16). Prints the compiler's report (what\n"
    "runs where, the quantization chosen) and the compile time. NaN or infinite weights, biases\n"
    "or calibration samples are an error; --allow-nonfinite makes them warnings (on stderr and in\n"
    "the report). A convolution whose input comes from the host runs packed (its receptive fields\n"
    "gathered into the array's rows) where that takes fewer MXU slots; --no-conv-packing never\n"
    "packs. A rejected or unreadable input (model, weights, calibration data, package) is an\n"
    "input error.\n";

#define MAX_CALIB 64

enum {
    OPT_WEIGHTS = 0x100,
    OPT_CALIBRATE,
    OPT_ARRAY,
    OPT_PRECISION,
    OPT_DUMP,
    OPT_QUIET,
    OPT_NONFINITE,
    OPT_NO_PACKING
};
static const struct option options[] = {
    {"weights", required_argument, NULL, OPT_WEIGHTS},
    {"calibrate", required_argument, NULL, OPT_CALIBRATE},
    {"array", required_argument, NULL, OPT_ARRAY},
    {"precision", required_argument, NULL, OPT_PRECISION},
    {"dump", required_argument, NULL, OPT_DUMP},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"allow-nonfinite", no_argument, NULL, OPT_NONFINITE},
    {"no-conv-packing", no_argument, NULL, OPT_NO_PACKING},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* The element type of a model input whose calibration samples are of dtype t: 0, or -1 for the
 * 16-bit floats, which calibration does not take (a model with bf16 or f16 inputs compiles with
 * --precision bf16, which calibrates nothing). */
static int input_type(npy_dtype t, hlo_type *type)
{
    switch (t) {
    case NPY_INT8: *type = HLO_S8; return 0;
    case NPY_UINT8: *type = HLO_U8; return 0;
    case NPY_INT32: *type = HLO_S32; return 0;
    case NPY_FLOAT32: *type = HLO_F32; return 0;
    case NPY_INT64: *type = HLO_S64; return 0;
    case NPY_FLOAT16:
    case NPY_BFLOAT16:
    case NPY_V2: break;
    }
    return -1;
}

/* path's calibration samples as a new array: 0, or -1 with the reason in err. */
static int load_calib(const char *path, hlo_array **out, char *err, size_t errlen)
{
    npy_array n;
    hlo_type type;
    if (npy_load(path, &n, err, errlen))
        return -1;
    *out = NULL;
    if (input_type(n.dtype, &type)) {
        snprintf(err, errlen,
                 "dtype %s, expected a model input's: int8, uint8, int32, int64 or float32",
                 cli_dtype(n.dtype));
    } else {
        int64_t dims[NPY_MAX_DIMS];
        for (int i = 0; i < n.ndim; i++)
            dims[i] = (int64_t)n.shape[i];
        if ((*out = hlo_array_new(type, n.ndim, dims)))
            memcpy((*out)->data, n.data, n.count * npy_dtype_size(n.dtype));
        else
            snprintf(err, errlen, "out of memory");
    }
    npy_free(&n);
    return *out ? 0 : -1;
}

int main(int argc, char **argv)
{
    cli_init("tpuc");
    tpuc_options o = {0};
    const char *out = NULL, *dump = NULL;
    const char *calib_paths[MAX_CALIB];
    int n_calib = 0, quiet = 0, opt;
    while ((opt = cli_next(argc, argv, ":ho:", options, "tpuc --help")) != -1) {
        switch (opt) {
        case '?': return EXIT_USAGE;
        case 'h': printf("%s%s", usage, CLI_EXIT_HELP); return EXIT_OK;
        case 'o': out = optarg; break;
        case OPT_WEIGHTS: o.weights_path = optarg; break;
        case OPT_DUMP: dump = optarg; break;
        case OPT_QUIET: quiet = 1; break;
        case OPT_NONFINITE: o.allow_nonfinite = true; break;
        case OPT_NO_PACKING: o.no_conv_packing = true; break;
        case OPT_CALIBRATE:
            if (n_calib == MAX_CALIB)
                return cli_fail(EXIT_USAGE, "--calibrate", "more than %d files", MAX_CALIB);
            calib_paths[n_calib++] = optarg;
            break;
        case OPT_PRECISION:
            if (strcmp(optarg, "int8") && strcmp(optarg, "bf16"))
                return cli_fail(EXIT_USAGE, "--precision", "'%s' (int8 or bf16)", optarg);
            o.precision = strcmp(optarg, "bf16") ? TPUC_INT8 : TPUC_BF16;
            break;
        case OPT_ARRAY:
            if (cli_u32(optarg, 1, 256, &o.array_n))
                return cli_bad_limit("--array", optarg, "an array size", 256);
            break;
        }
    }
    for (int i = optind; i < argc; i++) {
        if (o.hlo_path)
            return cli_fail(EXIT_USAGE, "usage", "more than one model given: %s", argv[i]);
        o.hlo_path = argv[i];
    }
    char err[1024];
    hlo_error e;
    if (dump) {
        if (o.hlo_path || out)
            return cli_fail(EXIT_USAGE, "usage", "--dump takes only the package");
        tpub_package p;
        if (tpub_load(dump, &p, &e))
            return cli_fail(EXIT_USAGE, dump, "%s", e.msg);
        int rc = tpub_dump(&p, stdout);
        tpub_free(&p);
        return rc ? cli_fail(EXIT_USAGE, dump, "cannot write the listing") : EXIT_OK;
    }
    if (!o.hlo_path || !out)
        return cli_fail(EXIT_USAGE, "usage", "%s (see tpuc --help)",
                        o.hlo_path ? "no output (-o OUT.tpub)" : "no model");
    hlo_array *calib[MAX_CALIB];
    for (int k = 0; k < n_calib; k++)
        if (load_calib(calib_paths[k], &calib[k], err, sizeof err)) {
            const char *path = calib_paths[k];
            while (k--)
                hlo_array_free(calib[k]);
            return cli_fail(EXIT_USAGE, path, "%s", err);
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
        return cli_fail(EXIT_USAGE, NULL, "%s", e.msg);
    if (tpub_save(&p, out, &e)) {
        tpub_free(&p);
        return cli_fail(EXIT_USAGE, out, "%s", e.msg);
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
    return EXIT_OK;
}

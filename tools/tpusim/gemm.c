/* gemm.c - tpusim gemm: its options, the run (operands and device in problem.c), the report
 * (report.c) and the output files. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/npy.h"
#include "tools/tpusim/gemm.h"
#include "tools/tpusim/report.h"

const char usage_gemm[] =
    "usage: tpusim gemm --a A.npy --b B.npy [--bias BIAS.npy] [--relu]\n"
    "                   [--requant MULT,SHIFT | --requant-params P.npy] [--unsigned-a]\n"
    "                   [--out C.npy] [common options]\n"
    "       tpusim gemm --m M --k K --n N [--seed S] [--bias] [--relu] [--requant MULT,SHIFT]\n"
    "                   [--unsigned-a] [--out C.npy] [common options]\n"
    "       tpusim gemm --dtype bf16 (--a A.npy --b B.npy [--bias BIAS.npy] | --m M --k K --n N\n"
    "                   [--seed S] [--bias] [--edge-values]) [--relu] [--out-dtype f32|bf16]\n"
    "                   [--out C.npy] [common options]\n"
    "\n"
    "C = A . B (+ bias), then ReLU, then optional requantization to int8, on the cycle-accurate\n"
    "device; every instruction stream is checked against the golden model, and C against a plain\n"
    "C reference GEMM.\n"
    "\n"
    "bf16 (--dtype bf16): bf16 products summed in fp32, fp32 bias and ReLU, as TPU v2/v3 do\n"
    "(docs/isa.md \"Floating point (bf16)\"); C fp32, or bf16 rounded to nearest even. A and B "
    "are\n"
    "bfloat16 .npy files ('<V2', as ml_dtypes saves them) or float32, rounded to nearest even;\n"
    "the bias is float32 [N]. The reference sums as the array does, K tiles of N rows in order.\n"
    "  --dtype int8|bf16      the operands' type (default int8)\n"
    "  --out-dtype f32|bf16   bf16 only: C's type (default f32)\n"
    "  --edge-values          random bf16 operands: one in 8 an edge value (+-0, +-inf, NaN,\n"
    "                         subnormals, largest finite), and B's last row minus its first\n"
    "\n"
    "operands (.npy, little-endian, C order):\n"
    "  --a A.npy              int8 [M,K] (uint8 with --unsigned-a)\n"
    "  --b B.npy              int8 [K,N]\n"
    "  --bias BIAS.npy        int32 [N], added to every row (random mode: --bias, no file)\n"
    "  --relu                 clamp at zero after the bias\n"
    "  --requant MULT,SHIFT   int8 output: clamp(round(x * MULT / 2^SHIFT)), SHIFT 0..63\n"
    "  --requant-params P.npy int32 [2,N]: per-column MULT (row 0) and SHIFT (row 1)\n"
    "  --unsigned-a           A is uint8\n"
    "  --out C.npy            write C: int32 [M,N], or int8 with requantization; bf16: float32,\n"
    "                         or bfloat16 ('<V2') with --out-dtype bf16\n"
    "  --m M --k K --n N      random operands of that shape instead of files\n"
    "  --seed S               random seed (default 1)\n"
    "\n"
    "common options:\n"
    "  --array N              N x N array (default 16; tpusim --version lists those built)\n"
    "  --cores CORES          a chip of 1..8 cores on one memory port: the rows of A and C\n"
    "                         split evenly over them, one submission each, side by side;\n"
    "                         reports the chip and each core (default: one lone core)\n"
    "  --mem-latency CYCLES   memory latency, 1..65536 (default: the simulator's, 32)\n"
    "  --mem-bandwidth BYTES  memory bytes per cycle, 1..4096 (default: the simulator's, 64)\n"
    "  --json FILE            also write the report as JSON\n"
    "  --trace FILE.fst|.vcd  waveform of the run, every core (kept even when the run fails)\n"
    "  --trace-window FROM:TO only cycles [FROM, TO) after the submit (TO empty: to the end)\n"
    "  --max-cycles C         give up unless the device halts within C cycles of the\n"
    "                         submit, firmware included (default: no limit)\n"
    "  --quiet                no report on stdout, no progress bar\n"
    "\n"
    "Output files are written only when the run succeeds.\n";

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
    return cli_u32(comma + 1, 0, 63, shift);
}

/* The options of gemm alone. */
enum {
    OPT_A = CLI_OPT_OWN,
    OPT_B,
    OPT_BIAS,
    OPT_PARAMS,
    OPT_OUT,
    OPT_REQUANT,
    OPT_M,
    OPT_K,
    OPT_N,
    OPT_SEED,
    OPT_RELU,
    OPT_UNSIGNED_A,
    OPT_DTYPE,
    OPT_OUT_DTYPE,
    OPT_EDGES,
};

/* Parses the arguments after "gemm" (argv[0]). Returns 0, EXIT_USAGE (message printed), or -1
 * after printing the help. */
static int parse_gemm(int argc, char **argv, gemm_options *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    /* --bias names a file in file mode and is a plain flag in random mode. */
    int file_mode = 0;
    for (int i = 1; i < argc; i++)
        if ((!strncmp(argv[i], "--a", 3) || !strncmp(argv[i], "--b", 3)) &&
            (!argv[i][3] || argv[i][3] == '='))
            file_mode = 1;
    const struct option opts[] = {
        CLI_RUN_OPTIONS,
        {"a", required_argument, NULL, OPT_A},
        {"b", required_argument, NULL, OPT_B},
        {"bias", file_mode ? required_argument : no_argument, NULL, OPT_BIAS},
        {"requant-params", required_argument, NULL, OPT_PARAMS},
        {"out", required_argument, NULL, OPT_OUT},
        {"requant", required_argument, NULL, OPT_REQUANT},
        {"m", required_argument, NULL, OPT_M},
        {"k", required_argument, NULL, OPT_K},
        {"n", required_argument, NULL, OPT_N},
        {"seed", required_argument, NULL, OPT_SEED},
        {"relu", no_argument, NULL, OPT_RELU},
        {"unsigned-a", no_argument, NULL, OPT_UNSIGNED_A},
        {"dtype", required_argument, NULL, OPT_DTYPE},
        {"out-dtype", required_argument, NULL, OPT_OUT_DTYPE},
        {"edge-values", no_argument, NULL, OPT_EDGES},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    unsigned shape_given = 0; /* bits: --m, --k, --n */
    int seed_given = 0, out_dtype_given = 0, opt, rc = 0;
    while (!rc && (opt = cli_next(argc, argv, ":h", opts, "tpusim gemm --help")) != -1) {
        const char *val = optarg;
        switch (opt) {
        case '?': return EXIT_USAGE;
        case 'h': printf("%s%s", usage_gemm, CLI_EXIT_HELP); return -1;
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
                return cli_bad_value("--requant", val, "MULT,SHIFT (an int32, then 0..63)");
            o->requant = 1;
            break;
        case OPT_M:
        case OPT_K:
        case OPT_N: {
            uint32_t *dim = opt == OPT_M ? &o->m : opt == OPT_K ? &o->k : &o->n;
            if (cli_u32(val, 1, UINT32_MAX, dim))
                return cli_bad_value(opt == OPT_M   ? "--m"
                                     : opt == OPT_K ? "--k"
                                                    : "--n",
                                     val, "a dimension (at least 1)");
            shape_given |= 1u << (opt - OPT_M);
            break;
        }
        case OPT_SEED:
            if (cli_u64(val, 0, UINT64_MAX, &o->seed))
                return cli_bad_value("--seed", val, "a number");
            seed_given = 1;
            break;
        case OPT_RELU: o->relu = 1; break;
        case OPT_UNSIGNED_A: o->unsigned_a = 1; break;
        case OPT_DTYPE:
            if (strcmp(val, "int8") && strcmp(val, "bf16"))
                return cli_bad_value("--dtype", val, "int8 or bf16");
            o->bf16 = !strcmp(val, "bf16");
            break;
        case OPT_OUT_DTYPE:
            if (strcmp(val, "f32") && strcmp(val, "bf16"))
                return cli_bad_value("--out-dtype", val, "f32 or bf16");
            o->out_bf16 = !strcmp(val, "bf16");
            out_dtype_given = 1;
            break;
        case OPT_EDGES: o->edges = 1; break;
        default: rc = cli_run_option(opt, val, &o->run);
        }
    }
    if (rc)
        return rc;
    if (optind < argc)
        return cli_unexpected(argv[optind], "tpusim gemm --help");
    o->random = !file_mode;
    if (file_mode) {
        if (!o->a || !o->b)
            return cli_fail(EXIT_USAGE, "usage", "--a and --b go together");
        if (shape_given || seed_given)
            return cli_fail(EXIT_USAGE, "usage",
                            "--m, --k, --n and --seed are for random operands, "
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
    if (o->bf16 && (o->requant || o->params_file || o->unsigned_a))
        return cli_fail(EXIT_USAGE, "usage",
                        "--requant, --requant-params and --unsigned-a are int8's, not with "
                        "--dtype bf16");
    if (!o->bf16 && (out_dtype_given || o->edges))
        return cli_fail(EXIT_USAGE, "usage", "--out-dtype and --edge-values need --dtype bf16");
    if (o->edges && file_mode)
        return cli_fail(EXIT_USAGE, "usage", "--edge-values is for random operands");
    if (o->run.have_window && !o->run.trace)
        return cli_fail(EXIT_USAGE, "usage", "--trace-window needs --trace");
    return 0;
}

static int write_outputs(const gemm_options *o, const gemm_problem *p, void *c,
                         const report_run *rep)
{
    tpuio_staged files[2] = {{0}};
    int rc = 0;
    if (o->out) {
        npy_array arr = {.dtype = p->requant != REPORT_INT32_OUT ? NPY_INT8
                                  : p->out_bf16                  ? NPY_BFLOAT16
                                  : p->bf16                      ? NPY_FLOAT32
                                                                 : NPY_INT32,
                         .ndim = 2,
                         .shape = {p->m, p->n},
                         .count = (uint64_t)p->m * p->n,
                         .data = c};
        size_t len;
        void *img = npy_encode(&arr, 0, &len);
        rc = img ? cli_stage(&files[0], o->out, img, len)
                 : cli_fail(EXIT_USAGE, o->out, "out of host memory encoding C");
        free(img);
    }
    if (!rc && o->run.json)
        rc = cli_stage_json(&files[1], o->run.json, report_json(rep));
    return cli_commit(files, 2, rc);
}

int cmd_gemm(int argc, char **argv)
{
    gemm_options o;
    int rc = parse_gemm(argc, argv, &o);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;

    gemm_problem p = {0};
    void *c = NULL;
    rc = o.random ? random_problem(&o, &p) : load_problem(&o, &p);
    if (!rc) {
        c = malloc((size_t)p.m * p.n * c_elem_bytes(&p));
        if (!c)
            rc = cli_fail(EXIT_USAGE, "memory", "out of host memory for C");
    }
    gemm_result res;
    if (!rc)
        rc = run_device(&o, &p, c, &res);
    if (!rc)
        rc = check_reference(&p, res.info.array_n, c);
    if (!rc) {
        const report_run rep = {.m = p.m,
                                .k = p.k,
                                .n = p.n,
                                .unsigned_a = p.unsigned_a,
                                .bias = p.bias,
                                .relu = p.relu,
                                .bf16 = p.bf16,
                                .out_bf16 = p.out_bf16,
                                .requant = p.requant,
                                .info = res.info,
                                .perf = res.perf,
                                .chip = res.chip};
        rc = write_outputs(&o, &p, c, &rep);
        if (!rc && !o.run.quiet)
            report_text(stdout, &rep);
    }
    free(c);
    problem_free(&p);
    return rc;
}

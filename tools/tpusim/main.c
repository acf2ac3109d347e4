/* main.c - the tpusim command: gemm (gemm.c) runs one GEMM on the cycle-accurate device through
 * the driver, checks it against the golden model and a plain C GEMM (problem.c) and reports it
 * (report.c); bench (bench.c) tabulates such runs; run executes a compiled package through the
 * runtime (tools/common/run.h, which tools/tpu_vp shares); train runs a compiled training step
 * over a dataset (train.c); plot draws a report and sweep runs a GEMM over device
 * configurations with the Python package (tpusim.plot's and tpusim._sweep's main, in the
 * interpreter of $TPUSIM_PYTHON or CMake's). */
#define _POSIX_C_SOURCE 200809L /* execv */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver/tpu.h"
#include "tools/common/run.h"
#include "tools/tpusim/gemm.h"
#include "tools/tpusim/train.h"

#define TOOL_VERSION "1.0"

static const char usage_main[] =
    "usage: tpusim gemm [options]   run a GEMM on the simulated TPU (tpusim gemm --help)\n"
    "       tpusim bench [options]  GEMM benchmark table (tpusim bench --help)\n"
    "       tpusim run PKG ...      run a compiled model (tpusim run --help)\n"
    "       tpusim train STEP ...   train a compiled training step (tpusim train --help)\n"
    "       tpusim plot FILE [--kind roofline|sweep|dataflow|loss] [-o OUT.png]\n"
    "                               draw a report (tpusim plot --help)\n"
    "       tpusim sweep --gemm M,K,N [--array N,...] [--cores C,...] [-o OUT.csv] ...\n"
    "                               a GEMM over device configurations on Dask\n"
    "                               (tpusim sweep --help)\n"
    "                               plot and sweep: the Python of $TPUSIM_PYTHON, else\n"
    "                               " TPUSIM_PYTHON "\n"
    "       tpusim --help | --version\n";

/* Runs the main of the module of tpusim named in sys.argv[1] for command sys.argv[2], with the
 * arguments after them; exit 2 when the package or one of its modules (matplotlib, dask) cannot
 * be imported: the interpreter exits 1 for an exception. */
static const char py_launcher[] =
    "import importlib, sys\n"
    "try:\n"
    "    main = importlib.import_module('tpusim.' + sys.argv[1]).main\n"
    "except (ImportError, OSError) as e:\n"
    "    print(f'tpusim {sys.argv[2]}: {e} (Python: {sys.executable}; set TPUSIM_PYTHON to one "
    "with the tpusim package, docs/python.md)', file=sys.stderr)\n"
    "    sys.exit(2)\n"
    "sys.exit(main(sys.argv[3:]))\n";

/* tpusim plot and tpusim sweep: argv[0] the command, run by module's main. */
static int cmd_python(const char *module, int argc, char **argv)
{
    const char *env = getenv("TPUSIM_PYTHON");
    const char *python = env && *env ? env : TPUSIM_PYTHON;
    char **args = calloc((size_t)argc + 5, sizeof *args);
    if (!args)
        return cli_fail(EXIT_USAGE, "memory", "out of host memory");
    args[0] = (char *)python;
    args[1] = "-c";
    args[2] = (char *)py_launcher;
    args[3] = (char *)module;
    for (int i = 0; i < argc; i++)
        args[i + 4] = argv[i];
    fflush(stdout);
    execv(python, args);
    const int err = errno;
    free(args);
    return cli_fail(EXIT_USAGE, argv[0],
                    "cannot run Python '%s': %s (set TPUSIM_PYTHON to an "
                    "interpreter with the tpusim package)",
                    python, strerror(err));
}

static void print_version(void)
{
    uint32_t sizes[64];
    const int n = tpu_array_sizes(sizes, 64);
    printf("tpusim " TOOL_VERSION " (ISA %u.%u; array sizes built:", TPU_VERSION >> 16,
           TPU_VERSION & 0xFFFF);
    for (int i = 0; i < n; i++)
        printf(" %u", sizes[i]);
    printf(")\n");
}

static int cmd_run(int argc, char **argv)
{
    static const struct option opts[] = {RUN_OPTIONS, {NULL, 0, NULL, 0}};
    run_options o = {0};
    int rc = run_parse(argc, argv, opts, "tpusim run --help", NULL, NULL, &o);
    if (rc < 0)
        printf("%s%s", run_usage, CLI_EXIT_HELP);
    else if (!rc)
        rc = run_package(&o, NULL);
    run_options_free(&o);
    return rc < 0 ? EXIT_OK : rc;
}

int main(int argc, char **argv)
{
    cli_init("tpusim");
    if (argc < 2)
        return cli_fail(EXIT_USAGE, "usage", "no command (tpusim --help lists them)");
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        printf("%s\n%s\n%s\n%s\n%s%s", usage_main, usage_gemm, usage_bench, run_usage, usage_train,
               CLI_EXIT_HELP);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        print_version();
        return EXIT_OK;
    }
    /* Each command parses argv[1..]: its name, then its arguments. */
    if (!strcmp(argv[1], "gemm"))
        return cmd_gemm(argc - 1, argv + 1);
    if (!strcmp(argv[1], "bench"))
        return cmd_bench(argc - 1, argv + 1);
    if (!strcmp(argv[1], "run"))
        return cmd_run(argc - 1, argv + 1);
    if (!strcmp(argv[1], "train"))
        return cmd_train(argc - 1, argv + 1);
    if (!strcmp(argv[1], "plot"))
        return cmd_python("plot", argc - 1, argv + 1);
    if (!strcmp(argv[1], "sweep"))
        return cmd_python("_sweep", argc - 1, argv + 1);
    return cli_fail(EXIT_USAGE, "usage", "unknown command '%s' (tpusim --help lists them)",
                    argv[1]);
}

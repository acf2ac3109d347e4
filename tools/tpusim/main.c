/* main.c - the tpusim command: gemm (gemm.c) runs one GEMM on the cycle-accurate device through
 * the driver, checks it against the golden model and a plain C GEMM (problem.c) and reports it
 * (report.c); bench (bench.c) tabulates such runs; run (run.c, run_report.c) executes a compiled
 * package through the runtime. cli.c holds what they share. */
#include <stdio.h>
#include <string.h>

#include "driver/tpu.h"
#include "io/tpuio.h"
#include "tools/tpusim/cli.h"
#include "tools/tpusim/run.h"

#define TOOL_VERSION "1.0"

static const char usage_main[] =
    "usage: tpusim gemm [options]   run a GEMM on the simulated TPU (tpusim gemm --help)\n"
    "       tpusim bench [options]  GEMM benchmark table (tpusim bench --help)\n"
    "       tpusim run PKG ...      run a compiled model (tpusim run --help)\n"
    "       tpusim --help | --version\n";

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

int main(int argc, char **argv)
{
    tpuio_remove_on_signals(); /* Ctrl-C never leaves a half-written output or trace */
    if (argc < 2)
        return cli_fail(EXIT_USAGE, "usage", "no command (tpusim --help lists them)");
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(usage_main, stdout);
        fputs("\n", stdout);
        fputs(usage_gemm, stdout);
        fputs("\n", stdout);
        fputs(usage_bench, stdout);
        fputs("\n", stdout);
        fputs(usage_run, stdout);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        print_version();
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "gemm"))
        return cmd_gemm(argc - 2, argv + 2);
    if (!strcmp(argv[1], "bench"))
        return cmd_bench(argc - 2, argv + 2);
    if (!strcmp(argv[1], "run"))
        return cmd_run(argc - 2, argv + 2);
    return cli_fail(EXIT_USAGE, "usage", "unknown command '%s' (tpusim --help lists them)",
                    argv[1]);
}

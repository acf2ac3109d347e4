/* cli.h - what every command-line tool shares (tpusim, tpuc, tpu_vp): the exit codes, error
 * lines, options parsed with getopt_long, whole numbers, report text, and output files written
 * all or nothing (the JSON reports' helpers are tools/common/device.h's). */
#ifndef TPU_TOOLS_COMMON_CLI_H
#define TPU_TOOLS_COMMON_CLI_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>

#include "io/npy.h"
#include "io/tpuio.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The exit codes of every tool, and the line each one's --help ends with. */
enum cli_exit { EXIT_OK = 0, EXIT_MISMATCH = 1, EXIT_USAGE = 2, EXIT_DEVICE = 3 };
#define CLI_EXIT_HELP                                                                          \
    "exit codes: 0 success, 1 result mismatch (golden model or reference), 2 usage or input\n" \
    "error (arguments, input files, output files), 3 device error (firmware, core error,\n"    \
    "timeout).\n"

/* The tool's name in its messages; outputs and traces half written are removed on a signal. */
void cli_init(const char *tool);
/* Prints "<tool>: <what>: <why>" on stderr (what NULL: "<tool>: <why>"), one printable line
 * (paths and bytes from inputs escaped); returns code. */
int cli_fail(int code, const char *what, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ------------------------------------------------------------ options -- */

/* The next option of argv (argv[0] the command, skipped) by getopt_long with the short options
 * `shorts` and the long ones `opts`: its val (optarg its value), -1 after the last (the
 * operands are argv[optind..argc), in order), or '?' after printing what is wrong, in the
 * tools' words: "usage: unknown option '--x' (see <help>)", "--x: needs a value (see <help>)",
 * "--x: takes no value". */
int cli_next(int argc, char **argv, const char *shorts, const struct option *opts,
             const char *help);
/* The operand at argv[i] is one too many: "usage: unexpected argument '...' (see <help>)". */
int cli_unexpected(const char *arg, const char *help);

/* A whole decimal number in [min, max]: 0, or -1. */
int cli_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
int cli_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out);
/* "<opt>: '<val>' is not <want>", EXIT_USAGE. */
int cli_bad_value(const char *opt, const char *val, const char *want);
/* cli_bad_value with want "<what> (1..<max>)". */
int cli_bad_limit(const char *opt, const char *val, const char *what, uint64_t max);

/* --------------------------------------------------------------- report -- */

/* An array's shape as "[3, 4]" into buf; returns buf. */
const char *cli_shape(const npy_array *a, char *buf, size_t size);
/* A .npy file's dtype as its refusal names it: npy_dtype_name's, and for 2-byte void (io/npy.h)
 * what it most likely is: "void16 (as ml_dtypes saves bfloat16)". */
const char *cli_dtype(npy_dtype t);
/* The width of a report's labels: "bit-exact vs golden model:" and a space. */
#define CLI_LABEL "%-27s"
/* v with thousands separators ("1,234,567") into buf (at least 32 bytes); returns buf. */
char *cli_group(char *buf, uint64_t v);
/* num / den, NaN when den is not positive. */
double cli_ratio(double num, double den);

/* -------------------------------------------------------------- outputs -- */

/* Outputs are staged (io/tpuio.h) and committed together, all or nothing; a failure is printed
 * and is EXIT_USAGE. cli_commit commits with rc 0, else removes every staged file, and returns rc
 * or the failed rename's code. */
int cli_stage(tpuio_staged *f, const char *path, const void *data, size_t len);
int cli_commit(tpuio_staged *files, int n, int rc);

#ifdef __cplusplus
}
#endif
#endif

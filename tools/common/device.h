/* device.h - what every tool that runs the device shares (tpusim gemm, bench and run, tpu_vp): the
 * device options, parsed into the one device configuration (sim/config.h's tpusim_config) that
 * every layer below takes; the options of a run (budget, trace, JSON report, quiet); the one
 * mapping of a failed driver or runtime call to an exit code; the JSON reports' helpers. */
#ifndef TPU_TOOLS_COMMON_DEVICE_H
#define TPU_TOOLS_COMMON_DEVICE_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "driver/tpu.h"
#include "runtime/tpurt.h"
#include "tools/common/cli.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The options' getopt_long values; a command's own options take values from CLI_OPT_OWN on. */
enum {
    CLI_OPT_ARRAY = 0x100,
    CLI_OPT_CORES,
    CLI_OPT_MEM_LATENCY,
    CLI_OPT_MEM_BANDWIDTH,
    CLI_OPT_JSON,
    CLI_OPT_TRACE,
    CLI_OPT_TRACE_WINDOW,
    CLI_OPT_MAX_CYCLES,
    CLI_OPT_QUIET,
    CLI_OPT_OWN = 0x200,
};

/* The device options, as entries of a command's getopt_long table. */
#define CLI_DEVICE_OPTIONS                                              \
    {"array", required_argument, NULL, CLI_OPT_ARRAY},                  \
        {"cores", required_argument, NULL, CLI_OPT_CORES},              \
        {"mem-latency", required_argument, NULL, CLI_OPT_MEM_LATENCY},  \
    {                                                                   \
        "mem-bandwidth", required_argument, NULL, CLI_OPT_MEM_BANDWIDTH \
    }
/* The device options and those of a run. */
#define CLI_RUN_OPTIONS                                                  \
    CLI_DEVICE_OPTIONS, {"json", required_argument, NULL, CLI_OPT_JSON}, \
        {"trace", required_argument, NULL, CLI_OPT_TRACE},               \
        {"trace-window", required_argument, NULL, CLI_OPT_TRACE_WINDOW}, \
        {"max-cycles", required_argument, NULL, CLI_OPT_MAX_CYCLES},     \
    {                                                                    \
        "quiet", no_argument, NULL, CLI_OPT_QUIET                        \
    }

/* Device option opt (one of CLI_DEVICE_OPTIONS) with its value into the configuration, whose
 * fields not given stay 0 (tpu_open's defaults): 0, EXIT_USAGE (message printed), or -1 when
 * opt is not a device option. */
int cli_device_option(int opt, const char *val, tpusim_config *device);

/* What CLI_RUN_OPTIONS give. */
typedef struct {
    tpusim_config device;
    uint64_t max_cycles; /* --max-cycles: each submission's budget, 0 without */
    const char *json, *trace;
    uint64_t trace_from, trace_to;
    int have_window; /* --trace-window given */
    int quiet;
} cli_run_options;

/* cli_device_option for the options of a run too. */
int cli_run_option(int opt, const char *val, cli_run_options *o);
/* After a traced run that succeeded: a warning on stderr when --trace-window held none of its
 * cycles (the window began after the run ended). */
void cli_warn_empty_trace(const cli_run_options *o, uint64_t trace_cycles);

/* The one mapping of a failed call to an exit code, its message printed as "<tool>: <what>:
 * <msg>": 1 for a golden model mismatch, 3 for the device, its firmware, core errors and
 * timeouts, 2 for the rest (inputs, host memory, the trace), whose <what> is blame when it is to
 * blame. A driver call's status goes through tpurt_status_from_driver. */
int cli_status_error(tpurt_status s, const char *msg, const char *blame);

/* The JSON reports: v as a JSON number, null when it is not finite (NULL if out of memory); j
 * (taken, may be NULL when out of memory) staged as indented text ending in a newline
 * (cli_stage). */
json_t *cli_json_real(double v);
int cli_stage_json(tpuio_staged *f, const char *path, json_t *j);

/* The device's memory as every report gives it: the "memory:" line, and its JSON object
 * {latency_cycles, bytes_per_cycle, size_bytes} (NULL if out of memory). */
void cli_print_memory(FILE *out, const tpu_info *info);
json_t *cli_memory_json(const tpu_info *info);

#ifdef __cplusplus
}
#endif
#endif

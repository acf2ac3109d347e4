/* gemm.h - what tpusim gemm and tpusim bench share (internal to tools/tpusim): their options,
 * a GEMM's or a convolution's operands, and their runs on the device (problem.c). */
#ifndef TPU_TOOLS_TPUSIM_GEMM_H
#define TPU_TOOLS_TPUSIM_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include "driver/tpu.h"
#include "io/npy.h"
#include "tools/common/device.h"
#include "tools/tpusim/report.h"

/* The options of tpusim gemm (tpusim bench fills the ones it needs). */
typedef struct {
    cli_run_options run; /* the device's and a run's */
    const char *a, *b, *bias_file, *params_file, *out;
    int random, bias, relu, unsigned_a, requant;
    int bf16, out_bf16, edges; /* --dtype bf16, --out-dtype bf16, --edge-values */
    uint32_t m, k, n, mult, shift;
    uint64_t seed;
} gemm_options;

/* The subcommands: argv[0] their name, then their arguments; each returns the exit code, every
 * message printed. Their help, without CLI_EXIT_HELP. */
extern const char usage_gemm[], usage_bench[];
int cmd_gemm(int argc, char **argv);
int cmd_bench(int argc, char **argv);

/* One GEMM's operands, as the firmware reads them. */
typedef struct {
    uint32_t m, k, n;
    int unsigned_a, bias, relu;
    int bf16, out_bf16; /* A and B bf16 (C fp32, or bf16 with out_bf16) */
    enum report_requant requant;
    uint8_t *a;      /* m x k: int8, or uint8 with unsigned_a; bf16: uint16_t bit patterns */
    int8_t *b;       /* k x n: int8; bf16: uint16_t bit patterns */
    int32_t *params; /* bias[n], mult[n], shift[n] as the firmware reads them (bf16: the fp32
                        bias[n] alone), or NULL */
} gemm_problem;

typedef struct {
    tpu_info info;
    tpu_perf_report perf; /* the lone core's, or core 0's on a chip */
    report_chip chip;     /* with --cores: every core's (chip.cores 0 without) */
} gemm_result;

/* One convolution's operands (tpusim bench --conv). */
typedef struct {
    tpu_conv2d v;    /* geometry and flags; its operands are set when it runs */
    uint8_t *in;     /* NHWC */
    int8_t *kernel;  /* in the tile order of the array size it was made for */
    int32_t *params; /* bias[cout], mult[cout], shift[cout] */
    uint64_t out_bytes;
} gemm_conv;

/* problem.c: operands from .npy files or random, the run on the device, the reference check.
 * Each returns 0 or an exit code, with the message printed. */
int load_problem(const gemm_options *o, gemm_problem *p);
int random_problem(const gemm_options *o, gemm_problem *p);
void problem_free(gemm_problem *p);
/* Core `part`'s share of m rows split over `parts` cores: rows [*first, *first + *rows). */
void split_rows(uint32_t m, uint32_t parts, uint32_t part, uint32_t *first, uint32_t *rows);
/* Runs p on a device opened with o's options (with --cores, split by rows over the chip's cores,
 * one submission each); C's bytes go to c. */
int run_device(const gemm_options *o, const gemm_problem *p, void *c, gemm_result *res);
/* C against a plain C GEMM of the tool's own (the firmware's tiling is not trusted); bf16 sums
 * in the array's order, K tiles of array_n rows (docs/isa.md "Floating point (bf16)"). */
int check_reference(const gemm_problem *p, uint32_t array_n, const void *c);
/* Bytes of one element of C. */
uint32_t c_elem_bytes(const gemm_problem *p);
/* A convolution of that geometry with random operands (seeded) for an n x n array, and its run
 * on a device opened with o's options (o->device.array_n = n; checked against the golden model);
 * its out_bytes of output go to out. */
int random_conv(const tpu_conv2d *geometry, uint32_t n, uint64_t seed, gemm_conv *p);
void conv_free(gemm_conv *p);
int run_conv(const gemm_options *o, const gemm_conv *p, void *out, gemm_result *res);

#endif

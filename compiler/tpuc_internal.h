/* tpuc_internal.h - the compiler's graph, shared by its stages (not a public interface).
 *
 * ir.c builds the graph (calls inlined, tuples resolved, constants folded), picks the device
 * GEMMs and their segments; quant.c calibrates and quantizes them; emit.c plans device memory and
 * writes the package. */
#ifndef TPUC_INTERNAL_H
#define TPUC_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler/tpuc.h"

/* What became of a node. */
enum tc_role {
    TC_HOST,   /* evaluated by the host program */
    TC_CONST,  /* a constant (bound weight, literal or folded) */
    TC_INPUT,  /* a model input */
    TC_DEVICE, /* part of a device GEMM (its dot, bias add or ReLU) */
};

typedef struct {
    const hlo_instr *src; /* attributes and location, in the original module */
    int elem;             /* element of a tuple-valued src (a variadic reduce), else -1 */
    hlo_shape shape;      /* an array shape (tuples are resolved while inlining) */
    int n_in;
    int *in;              /* operand node ids */
    hlo_array *value;     /* TC_CONST: the value */
    char *name;           /* unique among nodes; "<base>_<elem>" for elements of a tuple */
    int role;
    int input;            /* TC_INPUT: input number */
    int gemm;             /* TC_DEVICE: its GEMM */
    int n_users;          /* live nodes using it, plus one per model output it is */
    bool output;          /* a model output */
    bool needed;          /* an output depends on it (before folding) */
    const char *host_reason; /* why it stays on the host (static string): a dot the device
                                cannot run, or a result too large to fold */
} tc_node;

typedef struct {
    int dot, bias, relu;  /* node ids (bias, relu: -1 when not fused) */
    int out;              /* the last node of the chain: the GEMM's value */
    int x;                /* the activation operand (A) */
    bool exact;           /* integer dot (s8/u8 x s8 -> s32): no quantization */
    bool a_unsigned;      /* A is u8 on the device */
    bool out_int8;        /* output stays on the device as int8 for the next GEMM */
    int seg;
    uint32_t batch, m, k, n; /* batch GEMMs of m x k x n, one per index of the batch dims */
    float *wf;            /* float weights, batch x k x n row-major (float dots) */
    int8_t *wq;           /* int8 weights, batch x k x n row-major */
    int32_t *bias_q;      /* n, or NULL */
    int32_t *mult, *shift;/* n each, with out_int8 */
    float *acc_scale;     /* n: the real value of one accumulator unit per column */
    float a_scale;        /* the real value of one unit of A */
    float out_scale;      /* out_int8: the real value of one output unit */
    double w_absmax_min, w_absmax_max; /* over columns, for the report */
    uint64_t a_off, b_off, c_off, p_off;
} tc_gemm;

typedef struct {
    const hlo_module *m;
    const char *file;
    uint32_t array_n;
    int n_nodes, cap_nodes;
    tc_node *nodes;
    int n_inputs;
    int *inputs;          /* node ids of the model inputs, in parameter order */
    int n_outputs;
    int *outputs;         /* node ids of the model outputs */
    int n_gemms;
    tc_gemm *gemms;
    int n_segs;
    /* calibration: per node, the range seen (valid where calibrated) */
    double *cal_min, *cal_max;
    int cal_samples;
    bool allow_nonfinite;  /* tpuc_options.allow_nonfinite */
    hlo_text warnings;     /* "warning: ..." lines, reported first */
    hlo_text report;
    char *err;
    size_t errlen;
} tc_graph;

/* Constant folding builds no value larger than this: bigger ones (a broadcast of a scalar to a
 * huge shape, say) stay on the host, computed at run time. */
#define TC_FOLD_MAX_BYTES ((int64_t)1 << 30)

/* Every stage returns 0, or -1 with the reason in g->err. */
int tc_fail(tc_graph *g, const hlo_instr *at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* An allocation for node's what failed: "out of memory for <what> of '<node>' (N bytes)",
 * located at the node's instruction. Returns -1. */
int tc_oom(tc_graph *g, int node, const char *what, uint64_t bytes);

/* ir.c */
/* Takes the bound parameter arrays (params[k] set to NULL once the graph owns it). */
int tc_build(tc_graph *g, hlo_array **params, int n_params);
int tc_fold(tc_graph *g);
int tc_place(tc_graph *g);
void tc_graph_free(tc_graph *g);
/* Evaluates the graph's nodes in order on one batch of inputs (n_inputs arrays); vals[i] gets
 * each node's value (constants borrowed: not freed by tc_values_free). */
int tc_eval(tc_graph *g, hlo_array *const *inputs, hlo_array **vals);
void tc_values_free(tc_graph *g, hlo_array **vals);

/* quant.c */
int tc_calibrate(tc_graph *g, hlo_array *const *calib, int n_calib);
int tc_quantize(tc_graph *g);

/* emit.c */
int tc_emit(tc_graph *g, tpub_package *out);

#endif

/* tpuc_internal.h - the compiler's graph, shared by its stages (not a public interface).
 *
 * ir.c builds the graph (calls inlined, tuples resolved, loops with dots unrolled (loop.c), sum
 * poolings made convolutions, constants folded); place.c picks the device operations (GEMMs and
 * convolutions), fuses their epilogues and groups them into segments; layout.c decides where device
 * values sit (NHWC convolutions, views read in place); quant.c calibrates and quantizes them;
 * emit.c plans device memory and the constant image, host.c writes the host program. */
#ifndef TPU_COMPILER_TPUC_INTERNAL_H
#define TPU_COMPILER_TPUC_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler/tpuc.h"

/* What became of a node. */
enum tc_role {
    TC_HOST,   /* evaluated by the host program */
    TC_CONST,  /* a constant (bound weight, literal or folded) */
    TC_INPUT,  /* a model input */
    TC_DEVICE, /* part of a device operation (its dot or convolution, bias add, ReLU, pooling) */
    TC_VIEW,   /* a transpose, reshape or copy of a device result that the device operations
                  reading it address in place: never computed */
};

enum tc_kind { TC_GEMM, TC_CONV };

typedef struct {
    const hlo_instr *src;    /* attributes and location, in the original module (or made) */
    const hlo_instr *sum_of; /* a made convolution (conv.c's tc_sum_pool): the reduce-window
                                it equals, evaluated in its place on in[0] and in[2] */
    int elem;                /* element of a tuple-valued src (a variadic reduce), else -1 */
    hlo_shape shape;         /* an array shape (tuples are resolved while inlining) */
    int n_in;
    int *in;          /* operand node ids */
    hlo_array *value; /* TC_CONST: the value */
    char *name;       /* unique among nodes; "<base>_<elem>" for elements of a tuple */
    int role;
    int input;               /* TC_INPUT: input number */
    int op;                  /* TC_DEVICE: its operation */
    int n_users;             /* live nodes using it, plus one per model output it is */
    bool output;             /* a model output */
    bool needed;             /* an output depends on it (before folding) */
    const char *host_reason; /* why it stays on the host (static string): a dot or convolution
                                the device cannot run, a pooling it cannot fuse, a result too
                                large to fold, a loop over the unroll budget */
    int repeats; /* a dot or convolution of an unrolled loop's later trip: the first trip's it
                    repeats (loop.c), else -1 */
} tc_node;

/* The most per-channel affine nodes a device operation fuses (a bias, then batch norm's
 * subtract, two multiplies and add, with a spare). */
#define TC_AFFINE_MAX 8

/* A device operation: a GEMM (a dot, one command per batch index) or a convolution (one
 * CONV2D), with what it fuses. */
typedef struct {
    int kind;                  /* enum tc_kind */
    int dot;                   /* the dot or convolution node */
    int bias, relu, pool;      /* fused nodes, -1 when not fused (pool: convolutions only); bias the
                                  last add or subtract of the affine chain */
    int affine[TC_AFFINE_MAX]; /* the per-channel adds, subtracts and multiplies fused before
                                  the ReLU, in chain order (place.c) */
    int n_affine;
    int out;            /* the last node of the chain: the operation's value */
    int x;              /* the activation operand (A, or the convolution's input) */
    int via;            /* the operation whose result x is, directly or through views that the
                           device can address in place; -1 when x comes from the host */
    int w;              /* a GEMM's B node when it is computed at run time (then written to
                           device memory row-major per batch index, quantized per tensor), or
                           a convolution's kernel (gathered in tile order by its transfer);
                           -1 for constant weights (in tile order in the constant image) */
    int a_rank, b_rank; /* rank of the transfer order of x and of w (0: host order) */
    int a_order[HLO_MAX_RANK], b_order[HLO_MAX_RANK]; /* device dim i is host dim order[i] */
    int64_t *krow;   /* a GEMM with via: per weight row k, the column of A (in via's
                        device layout) it multiplies; NULL for the identity */
    bool exact;      /* integer (s8/u8 x s8 -> s32): no quantization */
    bool bf16;       /* float in bf16 (TPUC_BF16): bf16 operands, fp32 sums and bias */
    bool a_unsigned; /* the input is u8 on the device */
    bool a_dev;      /* x is read in place from via's int8 result (same segment) */
    bool out_int8;   /* the device requantizes the result to int8 */
    bool out_bf16;   /* the device rounds the fp32 result to bf16 (read in place) */
    bool to_host;    /* the result goes back to the host */
    int seg;
    uint32_t batch, m, k, n;     /* weights: batch x k x n (a GEMM's m rows per batch index; a
                                    convolution's batch 1, k = kh * kw * c rows, n = cout) */
    tpub_conv cv;                /* a convolution's CONV2D command: geometry and flags (its offsets
                                    set by emit.c) */
    tpub_conv own;               /* the convolution's own geometry: cv's, unless packed */
    bool packed;                 /* the input's transfer gathers each output pixel's receptive field
                                    (kh * kw * c elements) as one pixel: cv is then the 1x1 convolution
                                    over them (conv.c's tc_conv_pack) */
    int in_nhwc[4], out_nhwc[4]; /* a convolution's HLO dims of input and output, NHWC order
                                    (NWC for a 1-D one: its height is 1 on the device) */
    int conv_rank;               /* how many of them: 4, or 3 for a 1-D convolution */
    uint32_t groups, dil_h, dil_w; /* a convolution's feature groups and kernel dilation, run as
                                      one dense kernel (conv.c) */
    uint32_t batch_groups;         /* a convolution's batch groups, run as feature groups */
    uint32_t lhs_h, lhs_w;         /* a convolution's input dilation (a transposed convolution's) */
    uint32_t crop_top, crop_left;  /* rows and columns of the dilated input that negative
                                      padding drops (the bottom and right ones: cv.h and cv.w) */
    bool in_gather;                /* the input's transfer writes it dilated or cropped */
    uint64_t slots[2];             /* a convolution read from the host: its MXU slots (K tiles x
                                      output tiles x output pixels) unpacked and packed */
    int kdim[HLO_MAX_RANK];        /* a run-time kernel read through reverses and transposes:
                                      kernel dim d is w's dim kdim[d], */
    bool krev[HLO_MAX_RANK];       /* reversed when krev[d] */
    float *wf;                     /* float weights, batch x k x n row-major (float operations) */
    int8_t *wq;                    /* int8 weights, batch x k x n row-major */
    uint16_t *wh;                  /* bf16 weights (their bits), batch x k x n row-major */
    float *bias_f;                 /* a float operation's bias (n), or NULL */
    int32_t *bias_q;               /* n: an int8 operation's bias, or NULL */
    int32_t *mult, *shift;         /* n each, with out_int8 */
    float *acc_scale;              /* n: the real value of one accumulator unit per column */
    float a_scale;                 /* the real value of one unit of the input */
    float b_scale;                 /* a run-time B's, per tensor */
    float out_scale;               /* out_int8: the real value of one output unit */
    double w_absmax_min, w_absmax_max; /* over columns, for the report */
    uint64_t a_off, b_off, c_off, p_off;
} tc_op;

typedef struct {
    const hlo_module *m;
    const char *file;
    uint32_t array_n;
    bool bf16;             /* float operations in bf16 (tpuc_options.precision) */
    bool no_conv_packing;  /* tpuc_options.no_conv_packing */
    uint64_t unroll_bytes; /* tpuc_options.unroll_bytes, or TC_UNROLL_BYTES */
    int n_calib_ignored;   /* calibration arrays given with bf16, for the report */
    int n_nodes, cap_nodes;
    tc_node *nodes;
    int n_made;
    hlo_instr **made; /* instructions the compiler wrote (conv.c's tc_sum_pool), not the
                         module's: never on the host but a global sum pooling's reshape to
                         the reduce's shape; a made constant owns its name */
    int n_inputs;
    int *inputs; /* node ids of the model inputs, in parameter order */
    int n_outputs;
    int *outputs; /* node ids of the model outputs */
    int n_ops;
    tc_op *ops;
    int n_segs;
    /* calibration: per node, the range seen (valid where calibrated) */
    double *cal_min, *cal_max;
    int cal_samples;
    int cal_repeat;       /* a batch filled by repeating the samples that many times, else 0 */
    bool allow_nonfinite; /* tpuc_options.allow_nonfinite */
    hlo_text warnings;    /* "warning: ..." lines, reported first */
    hlo_text report;
    hlo_error *err;
} tc_graph;

/* Constant folding builds no value larger than this: bigger ones (a broadcast of a scalar to a
 * huge shape, say) stay on the host, computed at run time. */
#define TC_FOLD_MAX_BYTES ((int64_t)1 << 30)

/* A while whose body has dots is unrolled (ir.c) when its trip count is known at compile time
 * and at most this, and the values its trips compute (loop.c's tc_trip_bytes) take at most
 * tpuc_options.unroll_bytes, by default this many bytes. */
#define TC_UNROLL_MAX_TRIPS 1024
#define TC_UNROLL_BYTES ((uint64_t)1 << 30)

/* A dot's right-hand side computed at run time is written to device memory by a transfer of at
 * most this many int8 elements; a larger one keeps the dot on the host. */
#define TC_RUNTIME_B_MAX_BYTES ((int64_t)1 << 30)
/* A gathering transfer (a convolution's run-time kernel, its dilated input) has at most this many
 * elements: its index list (4 bytes each) is in the package. */
#define TC_GATHER_MAX ((int64_t)1 << 24)

/* Every stage returns 0, or -1 with *g->err. */
int tc_fail(tc_graph *g, const hlo_instr *at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* An allocation for node's what failed: "out of memory for <what> of '<node>' (N bytes)",
 * located at the node's instruction. Returns -1. */
int tc_oom(tc_graph *g, int node, const char *what, uint64_t bytes);

/* ir.c */
/* Appends a node of instruction src with operands in (n_in): its id, or -1 when out of memory. */
int tc_add_node(tc_graph *g, const hlo_instr *src, int n_in, const int *in);
/* Takes the bound parameter arrays (params[k] set to NULL once the graph owns it). */
int tc_build(tc_graph *g, hlo_array **params, int n_params);
/* The shape of operand i of instruction in (of g's module) as the module declares it, layout
 * included (a node's operands may be the values of other instructions, seen through copies). */
const hlo_shape *tc_operand_shape(const tc_graph *g, const hlo_instr *in, int i);
int tc_fold(tc_graph *g);
/* Is in one of the instructions the compiler wrote (tc_graph.made)? */
bool tc_is_made(const tc_graph *g, const hlo_instr *in);
void tc_graph_free(tc_graph *g);
/* Whether node i is live (an output depends on it); its single live user, or -1. */
bool tc_live(const tc_graph *g, int i);
int tc_only_user(const tc_graph *g, int i);

/* place.c */
int tc_place(tc_graph *g);
const char *tc_device_types(const tc_node *l, const tc_node *r, const tc_node *nd, bool *exact);
/* Is node one of op's fused affine nodes (op->affine)? */
bool tc_in_affine(const tc_op *op, int node);

/* loop.c */
/* Whether computation comp, or one it calls, has a dot or convolution. */
bool tc_has_dot(const hlo_module *m, int comp);
/* Nodes [from, to) are a later trip of a loop whose first trip made nodes [first, end): when
 * their dots and convolutions are the same instructions' in the same order (a nested loop whose
 * trip count varies makes others), each repeats the first trip's (tc_node.repeats). */
void tc_mark_repeats(tc_graph *g, int first, int end, int from, int to);
/* Bytes of the values of nodes [from, to), constants' left out: a constant is the same in
 * every trip, and a weight's image is shared (emit.c). */
uint64_t tc_trip_bytes(const tc_graph *g, int from, int to);
/* The name of the layer that dot or convolution node runs as: the first trip's dot it repeats,
 * or its own. */
const char *tc_layer_name(const tc_graph *g, int node);

/* conv.c */
/* Why convolution node d stays on the host, or NULL when the device runs it (then op's
 * geometry, layouts, weight shape and exact set). */
const char *tc_device_conv(tc_graph *g, int d, tc_op *op);
/* Decides whether op's convolution, read from the host, runs packed (tc_op.packed): when that
 * takes fewer MXU slots (op->slots) and the packed geometry fits; sets op->cv. */
void tc_conv_pack(tc_graph *g, tc_op *op);
/* The kernel of op's convolution as (kh, kw, c) x cout weights. */
int tc_take_kernel(tc_graph *g, tc_op *op);
/* A run-time kernel read through the reverses, transposes and copies computed for it alone
 * (they become views): op->w, kdim and krev set. */
void tc_kernel_source(tc_graph *g, tc_op *op);
/* The kernel row (dy, dx, c) that row r of op's kernel tile t holds (firmware.h's tile order),
 * or -1 for a row of zeros. */
int64_t tc_conv_tile_row(const tpub_conv *v, uint32_t n, uint32_t t, uint32_t r);
/* The gather of op's input (kernel false: the NHWC input dilated or cropped, or its receptive
 * fields when packed) or of its run-time kernel (in tile order), *count indices (tpub_xfer).
 * Returns NULL when out of memory. */
uint32_t *tc_conv_gather(const tc_graph *g, const tc_op *op, bool kernel, uint64_t *count);
/* Is GEMM op's B in tile order on the device (B_TILED)? Weights always; a run-time B when its
 * gather (emit.c) has at most TC_GATHER_MAX elements, else it is written row-major. */
bool tc_gemm_b_tiled(const tc_graph *g, const tc_op *op);
/* Why reduce-window node u, which reads op's result, does not fuse into it as max pooling, or
 * NULL when it does (then op's pooling geometry set). */
const char *tc_device_pool(tc_graph *g, tc_op *op, int u);
/* A sum pooling (reduce-window add from 0 over the spatial dims of a float image) the device
 * runs, as the depthwise convolution with a kernel of ones it equals: *node that convolution's
 * node (operands the image, the kernel and the init value; after its kernel's), or -1 when the
 * reduce-window in (operand nodes ops) stays as it is.
 * Returns 0, or -1 with *g->err. */
int tc_sum_pool(tc_graph *g, const hlo_instr *in, const int *ops, int *node);

/* layout.c */
/* Is node i a view (transpose, reshape or a bitcast that is one, copy) the device could address
 * in place? */
bool tc_is_view(const tc_graph *g, int i);
/* Sets op->via (and op->krow for a GEMM) when op's input is an earlier operation's result,
 * directly or through views, that the device can read in place; via stays -1 otherwise.
 * Returns 0, or -1 when out of memory. */
int tc_find_via(tc_graph *g, tc_op *op);
/* A convolution's geometry fits the core's unified buffer and accumulators for the array size
 * n: one pooled output row of the firmware's bands (firmware/conv.c) with a single plane set. */
bool tc_conv_fits(const tpub_conv *v, uint32_t n);
/* The transfer permutation (tpub.h) that writes host dims `dims` (rank rank <= TPUB_MAX_RANK)
 * in the order `order` (device dim i is host dim order[i]): the rank, 0 when the device order is
 * the host's (dimensions of size 1 moving do not count). */
uint32_t tc_perm(const int *order, int rank, const int64_t *dims, uint32_t *perm);
/* Evaluates the graph's nodes in order on one batch of inputs (n_inputs arrays); vals[i] gets
 * each node's value (constants borrowed: not freed by tc_values_free). */
int tc_eval(tc_graph *g, hlo_array *const *inputs, hlo_array **vals);
void tc_values_free(tc_graph *g, hlo_array **vals);

/* quant.c */
int tc_calibrate(tc_graph *g, hlo_array *const *calib, int n_calib);
int tc_quantize(tc_graph *g);

/* emit.c */
int tc_emit(tc_graph *g, tpub_package *out);
/* A host value segment s reads: node, as operation op's A (or input) or, with b, its run-time B. */
typedef struct {
    int node, op;
    bool b;
} tc_seg_input;
/* What segment s reads from the host, in its custom-call's operand order: one per node, operand
 * kind and device order (*n_inputs of them, each with the first operation reading it). Returns
 * the list (malloc'ed), or NULL when out of memory. */
tc_seg_input *tc_segment_inputs(const tc_graph *g, int s, int *n_inputs);
/* The transfer permutation of input in (tc_perm): its rank, 0 for the host's order. */
uint32_t tc_input_perm(const tc_graph *g, const tc_seg_input *in, uint32_t perm[TPUB_MAX_RANK]);

/* host.c */
int tc_host_program(tc_graph *g, tpub_package *p);

#endif

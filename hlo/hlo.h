/* hlo.h - the hlo layer: XLA HLO and StableHLO text to an AST, its shape checker, the reference
 * evaluator and the printer; what the runtime runs a package's host program with and the
 * compiler's front end.
 *
 * Accepts the three printing styles frameworks emit (XLA dumps, PyTorch/XLA with inline operand
 * shapes, JAX's short style with bare names), before or after XLA's optimizations (the latter,
 * `compile().as_text()` or --xla_dump_to's *after_optimizations.txt, add layouts, fusion and
 * bitcast; their module attributes, backend_config, metadata and the like are skipped). The parser
 * checks syntax only: any opcode name is accepted (hlo_instr.opcode is HLO_OP_OTHER for ones
 * without an enum value), and whether shapes agree is a later stage's business. Names are stored
 * without their leading '%'.
 *
 * Ownership: hlo_parse() returns a module that owns every string and array reachable from it;
 * hlo_module_free() releases all of it. On error nothing is returned and nothing is leaked. */
#ifndef TPU_HLO_HLO_H
#define TPU_HLO_HLO_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Limits against hostile input; exceeding one is a located parse error. */
#define HLO_MAX_RANK 16              /* dimensions per array shape */
#define HLO_MAX_ELEMENTS (1LL << 31) /* elements per array shape */
#define HLO_MAX_DEPTH 64             /* nesting of tuples, literals and skipped attribute values */
#define HLO_MAX_NAME 1024            /* bytes in a name, without '%' */
#define HLO_MAX_FILE ((uint64_t)1 << 30) /* bytes of a file hlo_parse_file reads */
/* Iterations a while loop may run in hlo_eval before it is reported as not terminating. */
#define HLO_MAX_WHILE_TRIPS (1LL << 20)

typedef enum {
    HLO_PRED,
    HLO_S8,
    HLO_S16,
    HLO_S32,
    HLO_S64,
    HLO_U8,
    HLO_U16,
    HLO_U32,
    HLO_U64,
    HLO_F16,
    HLO_BF16,
    HLO_F32,
    HLO_F64,
    HLO_TOKEN, /* token[] */
    HLO_TUPLE  /* (shape, ...) */
} hlo_type;

typedef struct hlo_shape {
    hlo_type type;
    int rank;                   /* arrays; 0 for scalars, tuples and tokens */
    int64_t dims[HLO_MAX_RANK]; /* bounds; a dynamic dimension `<=N` is stored as N */
    int64_t elements;           /* product of dims (1 for a scalar, 0 for tuple and token) */
    /* The layout's minor_to_major list ({1,0} in f32[2,64]{1,0}): dimension numbers from the
     * fastest-varying in memory to the slowest, a permutation of 0..rank-1, when has_layout; the
     * default (no layout written, or a shape built by hand) is row-major, {rank-1, ..., 0}.
     * Tiling and memory-space suffixes ({1,0:T(8,128)S(1)}) are parsed and dropped. Values are
     * logical arrays whatever their layout: it matters only to bitcast (hlo_layout.c). */
    bool has_layout;
    int minor_to_major[HLO_MAX_RANK];
    int n_tuple; /* HLO_TUPLE: element shapes */
    struct hlo_shape *tuple;
} hlo_shape;

/* The opcodes with an enum value, one line each; every table of them is expanded from this list:
 *   X(NAME, hlo, stablehlo, operands, rule)
 * NAME: the enum value HLO_OP_NAME; hlo: XLA's spelling (hlo_opcode_name, what the HLO parser
 * reads and the printer writes); stablehlo: the MLIR op name (without its dialect prefix
 * stablehlo., chlo. or mhlo.) the StableHLO reader maps onto it, NULL when that is hlo with '_'
 * for '-'; operands: how many hlo_check wants, -1 when the op's own rule decides; rule: the
 * element types hlo_check allows an element-wise op (operands of the result's shape): ANY,
 * FLOAT, NUMBER (integer or float), LOGICAL (pred or integer), INT; OWN for an op with a rule of
 * its own. */
#define HLO_OPS(X)                                                    \
    X(PARAMETER, "parameter", NULL, 0, OWN)                           \
    X(CONSTANT, "constant", NULL, 0, OWN)                             \
    X(DOT, "dot", "dot_general", 2, OWN)                              \
    X(ADD, "add", NULL, 2, ANY)                                       \
    X(SUBTRACT, "subtract", NULL, 2, ANY)                             \
    X(MULTIPLY, "multiply", NULL, 2, ANY)                             \
    X(DIVIDE, "divide", NULL, 2, ANY)                                 \
    X(MAXIMUM, "maximum", NULL, 2, ANY)                               \
    X(MINIMUM, "minimum", NULL, 2, ANY)                               \
    X(BROADCAST, "broadcast", "broadcast_in_dim", 1, OWN)             \
    X(RESHAPE, "reshape", NULL, 1, OWN)                               \
    X(TRANSPOSE, "transpose", NULL, 1, OWN)                           \
    X(CONVERT, "convert", NULL, 1, OWN)                               \
    X(TUPLE, "tuple", NULL, -1, OWN)                                  \
    X(GET_TUPLE_ELEMENT, "get-tuple-element", NULL, 1, OWN)           \
    X(CALL, "call", "func.call", -1, OWN)                             \
    X(REDUCE, "reduce", NULL, -1, OWN)                                \
    X(EXPONENTIAL, "exponential", NULL, 1, FLOAT)                     \
    X(LOG, "log", NULL, 1, FLOAT)                                     \
    X(NEGATE, "negate", NULL, 1, NUMBER)                              \
    X(COMPARE, "compare", NULL, 2, OWN)                               \
    X(SELECT, "select", NULL, 3, OWN)                                 \
    X(RSQRT, "rsqrt", NULL, 1, FLOAT)                                 \
    X(SQRT, "sqrt", NULL, 1, FLOAT)                                   \
    X(TANH, "tanh", NULL, 1, FLOAT)                                   \
    X(LOGISTIC, "logistic", NULL, 1, FLOAT)                           \
    X(ABS, "abs", NULL, 1, NUMBER)                                    \
    X(POWER, "power", NULL, 2, ANY)                                   \
    X(CLAMP, "clamp", NULL, 3, OWN)                                   \
    X(SLICE, "slice", NULL, 1, OWN)                                   \
    X(CONCATENATE, "concatenate", NULL, -1, OWN)                      \
    X(PAD, "pad", NULL, 2, OWN)                                       \
    X(IOTA, "iota", NULL, 0, OWN)                                     \
    X(COPY, "copy", NULL, 1, ANY)                                     \
    X(BITCAST, "bitcast", NULL, 1, OWN)                               \
    X(FUSION, "fusion", NULL, -1, OWN)                                \
    X(CUSTOM_CALL, "custom-call", NULL, -1, OWN)                      \
    X(REDUCE_WINDOW, "reduce-window", NULL, -1, OWN)                  \
    X(CONVOLUTION, "convolution", NULL, 2, OWN)                       \
    X(AND, "and", NULL, 2, LOGICAL)                                   \
    X(OR, "or", NULL, 2, LOGICAL)                                     \
    X(XOR, "xor", NULL, 2, LOGICAL)                                   \
    X(NOT, "not", NULL, 1, LOGICAL)                                   \
    X(REVERSE, "reverse", NULL, 1, OWN)                               \
    X(DYNAMIC_SLICE, "dynamic-slice", NULL, -1, OWN)                  \
    X(DYNAMIC_UPDATE_SLICE, "dynamic-update-slice", NULL, -1, OWN)    \
    X(GATHER, "gather", NULL, 2, OWN)                                 \
    X(SORT, "sort", NULL, -1, OWN)                                    \
    X(WHILE, "while", NULL, 1, OWN)                                   \
    X(CONDITIONAL, "conditional", "case", -1, OWN)                    \
    X(MAP, "map", NULL, -1, OWN)                                      \
    X(SCATTER, "scatter", NULL, 3, OWN)                               \
    X(IS_FINITE, "is-finite", NULL, 1, OWN)                           \
    X(SIGN, "sign", NULL, 1, NUMBER)                                  \
    X(FLOOR, "floor", NULL, 1, FLOAT)                                 \
    X(CEIL, "ceil", NULL, 1, FLOAT)                                   \
    X(ROUND_NEAREST_AFZ, "round-nearest-afz", NULL, 1, FLOAT)         \
    X(ROUND_NEAREST_EVEN, "round-nearest-even", NULL, 1, FLOAT)       \
    X(EXPONENTIAL_MINUS_ONE, "exponential-minus-one", NULL, 1, FLOAT) \
    X(LOG_PLUS_ONE, "log-plus-one", NULL, 1, FLOAT)                   \
    X(CBRT, "cbrt", NULL, 1, FLOAT)                                   \
    X(ERF, "erf", NULL, 1, FLOAT)                                     \
    X(SINE, "sine", NULL, 1, FLOAT)                                   \
    X(COSINE, "cosine", NULL, 1, FLOAT)                               \
    X(TAN, "tan", NULL, 1, FLOAT)                                     \
    X(REMAINDER, "remainder", NULL, 2, ANY)                           \
    X(ATAN2, "atan2", NULL, 2, FLOAT)                                 \
    X(SHIFT_LEFT, "shift-left", NULL, 2, INT)                         \
    X(SHIFT_RIGHT_ARITHMETIC, "shift-right-arithmetic", NULL, 2, INT) \
    X(SHIFT_RIGHT_LOGICAL, "shift-right-logical", NULL, 2, INT)       \
    X(POPCNT, "popcnt", NULL, 1, INT)                                 \
    X(COUNT_LEADING_ZEROS, "count-leading-zeros", NULL, 1, INT)       \
    X(BITCAST_CONVERT, "bitcast-convert", NULL, 1, OWN)               \
    X(BATCH_NORM_TRAINING, "batch-norm-training", NULL, 3, OWN)       \
    X(BATCH_NORM_INFERENCE, "batch-norm-inference", NULL, 5, OWN)     \
    X(SELECT_AND_SCATTER, "select-and-scatter", NULL, 3, OWN)         \
    X(ALL_REDUCE, "all-reduce", NULL, -1, OWN)

typedef enum {
    HLO_OP_OTHER, /* any other opcode: see hlo_instr.opcode_name */
#define HLO_OP_ENUM(name, hlo, stablehlo, operands, rule) HLO_OP_##name,
    HLO_OPS(HLO_OP_ENUM) /* in the list's order */
    HLO_OP_COUNT_
#undef HLO_OP_ENUM
} hlo_opcode;

typedef enum {
    HLO_CMP_NONE,
    HLO_CMP_EQ,
    HLO_CMP_NE,
    HLO_CMP_LT,
    HLO_CMP_LE,
    HLO_CMP_GT,
    HLO_CMP_GE
} hlo_cmp;

/* An integer list attribute such as dimensions={1,0}; present distinguishes `{}` from absent. */
typedef struct {
    bool present;
    int n;
    int64_t *v;
} hlo_ints;

/* One dimension of a window, as window={size=3x3 stride=2x1 pad=1_1x0_2 lhs_dilate=1x1
 * rhs_dilate=1x1} gives it per 'x'-separated entry: the window covers size elements spaced
 * rhs_dilate apart, moving stride elements at a time over the operand with lhs_dilate - 1 holes
 * between its elements and pad_lo / pad_hi elements added before / after it (negative: removed).
 * Fields not given are stride 1, pad 0, dilations 1; XLA's rhs_reversal is refused (a parse
 * error), not dropped. */
typedef struct {
    int64_t size, stride;
    int64_t pad_lo, pad_hi;
    int64_t lhs_dilate, rhs_dilate;
} hlo_window_dim;

/* window={...} of convolution and reduce-window; present distinguishes `window={}` (rank 0)
 * from absent. Sizes, strides and dilations are 0..2^31, pads -2^31..2^31 (hlo_check wants
 * sizes, strides and dilations of at least 1). */
typedef struct {
    bool present;
    int rank;
    hlo_window_dim *dims; /* rank of them */
} hlo_window;

/* A convolution's dim_labels=b01f_01io->b01f: for each operand, which of its dimensions is
 * which. Input and output: b batch, f feature; kernel: i input feature, o output feature; the
 * spatial dims are numbered 0, 1, ... in order (10 to 13 as ':', ';', '<', '=', the characters
 * after '9', as XLA's parser decodes them), e.g. JAX and TF print b01f_01io->b01f (NHWC, HWIO),
 * PyTorch/XLA bf01_oi01->bf01 (NCHW, OIHW). The parser checks that each operand's labels are
 * its n_spatial + 2 dims, each once. */
typedef struct {
    bool present;
    int n_spatial; /* 0..HLO_MAX_RANK-2 */
    int input_batch_dim, input_feature_dim, input_spatial_dims[HLO_MAX_RANK - 2];
    int kernel_input_feature_dim, kernel_output_feature_dim, kernel_spatial_dims[HLO_MAX_RANK - 2];
    int output_batch_dim, output_feature_dim, output_spatial_dims[HLO_MAX_RANK - 2];
} hlo_conv_dims;

/* A gather's GatherDimensionNumbers and slice sizes (XLA's operation semantics): result dims
 * offset_dims take the slice's dims that are neither collapsed_slice_dims nor
 * operand_batching_dims (which must have slice size 1), the others range over the start
 * indices without index_vector_dim (rank(start indices) means each index vector has one
 * element, implicitly); index vector element k is the start in operand dim
 * start_index_map[k], and operand dim operand_batching_dims[i] starts at the result's index in
 * start-indices dim start_indices_batching_dims[i]. indices_are_sorted is a hint, not kept.
 * A scatter keeps its ScatterDimensionNumbers here too, each list in the field of the gather list
 * it mirrors (updates are indexed as a gather's result is): update_window_dims in offset_dims,
 * inserted_window_dims in collapsed_slice_dims, scatter_dims_to_operand_dims in start_index_map,
 * input_batching_dims in operand_batching_dims, scatter_indices_batching_dims in
 * start_indices_batching_dims (slice_sizes unused). */
typedef struct {
    hlo_ints offset_dims, collapsed_slice_dims, start_index_map;
    hlo_ints operand_batching_dims, start_indices_batching_dims;
    hlo_ints slice_sizes;
    int64_t index_vector_dim; /* -1 when not given */
} hlo_gather_dims;

typedef struct {
    int index;      /* instruction index in the same computation */
    bool has_shape; /* PyTorch/XLA style prints the operand's shape inline */
    hlo_shape shape;
} hlo_operand;

typedef struct {
    char *name;
    int line, col; /* of the name, 1-based */
    bool is_root;  /* marked ROOT in the text */
    hlo_shape shape;
    char *opcode_name;
    hlo_opcode opcode;
    int n_operands;
    hlo_operand *operands;
    int64_t parameter_number; /* parameter; -1 otherwise */

    /* constant: data (in row-major order) or elided `{...}`; a later stage that needs the value
     * of an elided constant reports it. Tuple-shaped literals are kept as elided. literal holds
     * each number as the nearest double; for pred and integer types literal_int also holds it
     * exactly as written (two's complement modulo 2^64, so a u64 above 2^63 as its bits), or 0
     * for a number that is no integer of 64 bits; it is NULL for float types (and may be for
     * hand-built integer constants, whose literal then holds small integers exactly). */
    bool literal_elided;
    size_t n_literal;
    double *literal;
    int64_t *literal_int;

    /* Attributes parsed where known; every other attribute is skipped. */
    hlo_ints dimensions; /* also concatenate's, reverse's, sort's and map's dimensions={...} */
    hlo_ints lhs_contracting_dims, rhs_contracting_dims, lhs_batch_dims, rhs_batch_dims;
    int to_apply;   /* computation index, or -1 (select-and-scatter's scatter=) */
    int select;     /* select-and-scatter's select=: computation index, or -1 */
    int calls;      /* computation index, or -1 */
    bool has_index; /* get-tuple-element index=N */
    int64_t index;
    hlo_ints slice_start, slice_limit, slice_stride; /* slice={[s:l:stride], ...} (stride 1) */
    hlo_ints pad_low, pad_high, pad_interior;        /* padding=l_h[_i]x... (interior 0) */
    hlo_cmp comparison_direction;
    /* compare's type=TOTALORDER: floats ordered -NaN < -inf < ... < -0 < +0 < ... < inf < NaN
     * (as JAX's sort comparators ask); type=FLOAT, SIGNED and UNSIGNED are the default. */
    bool total_order;
    int64_t iota_dimension; /* iota's iota_dimension=N; -1 otherwise */
    /* batch-norm-training's and batch-norm-inference's epsilon=E and feature_index=N (-1 when
     * not given) */
    double epsilon;
    int64_t feature_index;
    char *custom_call_target; /* custom-call's custom_call_target="..."; NULL otherwise */
    hlo_window window; /* convolution's, reduce-window's and select-and-scatter's window={...} */
    hlo_conv_dims dim_labels; /* convolution's dim_labels=... */
    /* convolution's feature_group_count=N and batch_group_count=N (1..2^31): 1 when not given
     * and on other ops; hand-built attrs may leave them 0, printed only when above 1. */
    int64_t feature_group_count, batch_group_count;
    hlo_ints dynamic_slice_sizes; /* dynamic-slice's dynamic_slice_sizes={...} */
    hlo_gather_dims gather;       /* gather's dimension numbers and slice_sizes */
    bool is_stable;               /* sort's is_stable=true (every sort here is stable) */
    int condition, body;          /* while's condition=c and body=b: computation indices, or -1 */
    /* conditional's branch_computations={b0, b1, ...} (n_branches of them), or with a pred
     * operand true_computation=t, false_computation=f as branches t, f (branch_pred set: printed
     * that way); an index outside 0..n_branches-1 runs the last branch. An entry not given is
     * -1. */
    int n_branches;
    int *branches;
    bool branch_pred;
    /* all-reduce's replica_groups={{0,1},{2,3}} (n_replica_groups lists of device ids; none:
     * every device in one group), channel_id=N (0 when not given) and use_global_device_ids. */
    int n_replica_groups;
    hlo_ints *replica_groups;
    int64_t channel_id;
    bool use_global_device_ids;
} hlo_instr;

typedef struct {
    char *name;
    int line, col;
    bool is_entry;
    int n_instrs;
    hlo_instr *instrs; /* in text order */
    int root;          /* the ROOT instruction, or the last one when none is marked (as XLA) */
} hlo_computation;

/* One output of the ENTRY that may reuse (update in place) a parameter's buffer: HLO's
 * input_output_alias={ {output}: (param, {param_index}, may-alias) }, or StableHLO's
 * tf.aliasing_output = output on an argument of @main. A training step's parameters and
 * optimizer state are such outputs. Indices are tuple paths ({} the whole value). */
typedef struct {
    hlo_ints output;      /* the path in the ENTRY's result */
    int64_t param;        /* the parameter number */
    hlo_ints param_index; /* the path in the parameter */
    bool must;            /* must-alias (else may-alias) */
    int line, col;        /* where it is written */
} hlo_alias;

typedef struct hlo_module {
    char *name; /* from `HloModule name`, or "module_<entry>" without a header */
    int n_comps;
    hlo_computation *comps; /* in text order */
    int entry;              /* index of the ENTRY computation */
    int n_aliases;          /* in text order; checked by hlo_check */
    hlo_alias *aliases;
    /* The header's replica_count=N and num_partitions=N (1 when not given): the program runs on
     * their product of devices (hlo_devices), each on its own data, meeting at all-reduces. */
    int64_t replica_count, num_partitions;
    struct hlo_arena *arena_; /* owns everything above */
} hlo_module;

/* The error of hlo/, package/ and compiler/ (docs/ARCHITECTURE.md, "Errors"): a function that
 * can fail returns 0 (or a pointer), or -1 (or NULL) with *err filled; err may be NULL. msg is
 * one printable line. In HLO text, with the file name the caller passed: "<file>:<line>:<col>:
 * <what>" from the parser, "<file>:<line>:<col>: <opcode>: <what>" from the later stages (located
 * at an instruction's name), "<file>: <what>" for one without a place (line and col 0). Elsewhere
 * (a package, hlo_errorf) where in the input, without the path the caller passed, which the caller
 * prefixes as for io/'s messages. */
typedef struct {
    char msg[512];
    int line, col;
} hlo_error;

/* Fills *err (if not NULL) located at instruction at (its line, column and opcode; NULL: the
 * file alone); returns -1. */
int hlo_fail(hlo_error *err, const char *file, const hlo_instr *at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* The formatter under hlo_fail and the parser's errors: at line and col, with "<op>: " when op
 * is not NULL; line < 0 leaves out the place ("<file>: <what>"). */
void hlo_vfail(hlo_error *err, const char *file, int line, int col, const char *op, const char *fmt,
               va_list ap);
/* hlo_vfail at instruction at (its place and opcode), or with no place when at is NULL. */
void hlo_vfail_at(hlo_error *err, const char *file, const hlo_instr *at, const char *fmt,
                  va_list ap);
/* Fills *err (if not NULL) with the message as formatted, no file or place (line and col 0);
 * returns -1. */
int hlo_errorf(hlo_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Parses text[0..len) (need not be NUL-terminated); file names the input in messages. Returns the
 * module, or NULL with *err filled (err may be NULL). Text that starts like MLIR (`module`,
 * `func.func`, `#loc`, `"builtin.module"`) is read as StableHLO into the same AST
 * (docs/compiler.md, "StableHLO input"). */
hlo_module *hlo_parse(const char *text, size_t len, const char *file, hlo_error *err);
/* Reads and parses a file; an unreadable file is an error at line 0. */
hlo_module *hlo_parse_file(const char *path, hlo_error *err);
void hlo_module_free(hlo_module *m);

/* ---------------------------------------------------- hlo_ast.c, hlo_attrs.c -- */

/* Lookups; NULL or -1 when absent. */
const hlo_computation *hlo_entry(const hlo_module *m);
int hlo_find_computation(const hlo_module *m, const char *name);
int hlo_find_instr(const hlo_computation *c, const char *name);

/* Dim list k (0..HLO_GATHER_LISTS-1, in hlo_gather_dims' field order from offset_dims) of g,
 * and its attribute name for a gather (scatter: false) or a scatter (NULL: none). */
#define HLO_GATHER_LISTS 6
hlo_ints *hlo_gather_list(hlo_gather_dims *g, int k);
const char *hlo_gather_list_name(bool scatter, int k);

/* Clears *in to an instruction without attributes, as the parsers start one: every index
 * (parameter_number, iota_dimension, feature_index, to_apply, calls, condition, body, the gather's
 * index_vector_dim) -1, the group counts 1, everything else zero. */
void hlo_instr_init(hlo_instr *in);

/* Whether op may have a tuple of arrays as its value that the evaluator and the compiler take
 * apart (a variadic reduce or reduce-window, sort, while, conditional, batch-norm-training,
 * all-reduce). */
bool hlo_tuple_result(hlo_opcode op);

/* The computations instruction in refers to, in the order to_apply, calls, condition, body,
 * select, branches: the k-th of them that is given (k from 0), or -1 past the last. */
int hlo_callee(const hlo_instr *in, int k);
/* The computation of m that holds instruction in (any pointer: compared as an address), or
 * NULL. */
const hlo_computation *hlo_instr_owner(const hlo_module *m, const hlo_instr *in);
/* The multiply-accumulates of instruction in of computation c (checked): a dot's result elements
 * times its contracted elements, a convolution's result elements times its kernel's window and
 * input features (per feature group); 0 for every other op. */
uint64_t hlo_macs(const hlo_computation *c, const hlo_instr *in);
/* The devices m runs on: replica_count * num_partitions. */
int64_t hlo_devices(const hlo_module *m);
/* The size of all-reduce in's replica groups (checked: all of one size), hlo_devices(m) when it
 * lists none. */
int64_t hlo_all_reduce_group_size(const hlo_module *m, const hlo_instr *in);

const char *hlo_type_name(hlo_type t);      /* "f32", "(tuple)" for tuples */
const char *hlo_opcode_name(hlo_opcode op); /* "dot"; "" for HLO_OP_OTHER */
hlo_opcode hlo_opcode_of(const char *name); /* the inverse; HLO_OP_OTHER for other names */

/* ---------------------------------------------------------------- hlo_check.c -- */

/* Shape checking of a parsed module, after XLA's shape inference and HLO verifier, for the ops
 * the compiler handles: parameter, constant, dot, tuple, get-tuple-element, call, fusion (as a
 * call of its calls= computation, whatever its kind), iota, broadcast, reshape, transpose,
 * convert, copy, bitcast (one element type and count), reduce (variadic too), the element-wise
 * ops (add, subtract, multiply, divide, remainder, power, maximum, minimum on numbers; atan2 and
 * the float functions floor, ceil, round-nearest-afz, round-nearest-even, exponential,
 * exponential-minus-one, log, log-plus-one, logistic, tanh, sqrt, rsqrt, cbrt, erf, sine,
 * cosine, tan and is-finite on floats; negate, abs, sign on integers and floats; and, or, xor,
 * not on pred and integers; shift-left, shift-right-arithmetic, shift-right-logical, popcnt,
 * count-leading-zeros on integers; compare and select; clamp with bounds of the operand's shape
 * or scalars; bitcast-convert between non-pred types of the same size, or adding or removing a
 * last dim of the size ratio), convolution and reduce-window (variadic too) as XLA's
 * InferConvolveShape and InferReduceWindowShape (window sizes, strides and dilations at least 1,
 * one window dim per spatial or operand dim, a convolution's window the kernel's spatial size, its
 * input features the kernel's times feature_group_count, its kernel's output features and input
 * batch divisible by the group counts of which at most one is above 1, operands of one element type
 * or u8 x s8 with an s32 result, a result type that can hold the operands'), custom-call (array
 * operands, an array or a tuple of arrays as result, custom_call_target required), and
 * (hlo_check_shape.c) slice, concatenate, reverse, dynamic-slice, dynamic-update-slice (start
 * indices: one integer scalar per operand dim, all of one type), gather and scatter of one
 * operand (as InferGatherShape and InferScatterShape), select-and-scatter (as
 * InferSelectAndScatterShape: a source of the operand's window positions, select returning
 * pred[], scatter an element, the result the operand's shape), sort (operands of one dims, a
 * comparator taking two scalars per operand and returning pred[]), map, while (condition and body
 * take the state, body returns it), conditional (an s32[] index, or pred[] with two branches;
 * branch b takes operand b + 1) and all-reduce (operands of one type, their shapes as result, a
 * scalar to_apply, replica groups of one size naming each device at most once). Any other opcode
 * is an error naming it. Also checked: operand shapes printed inline agree with their
 * definitions, parameter numbers are 0..n-1 without gaps, neither operands nor calls form a
 * cycle, and each alias names an ENTRY parameter and an output of one shape, no output or
 * parameter twice. Returns 0, or -1 with the first error in *err (err may be NULL):
 * "<file>:<line>:<col>: <opcode>: <what differs>" at the instruction's name. */
int hlo_check(const hlo_module *m, const char *file, hlo_error *err);

/* The instructions of c in an order where every operand comes before its users (text order
 * where the text already is one). order has room for c->n_instrs. Returns 0, or -1 when the
 * operands form a cycle (*cycle_at is then an instruction on it). */
int hlo_topo_order(const hlo_computation *c, int *order, int *cycle_at);

/* The leaf (a non-tuple element, counted depth first from 0) of sh that path addresses, or -1
 * when path leaves sh or stops at a tuple. */
int hlo_tuple_leaf(const hlo_shape *sh, const hlo_ints *path);
/* Shapes are equal when element types, dims and tuple elements are (layouts do not count). */
bool hlo_shape_equal(const hlo_shape *a, const hlo_shape *b);
/* Writes a shape as XLA prints it without layout ("f32[16,784]", "(f32[2], s32[])") into buf,
 * truncated to n bytes; returns buf. */
char *hlo_shape_str(const hlo_shape *s, char *buf, size_t n);

/* --------------------------------------------------------------- hlo_layout.c -- */

/* The dims of s in physical order, slowest-varying first (minor_to_major reversed): order has
 * room for s->rank. */
void hlo_layout_order(const hlo_shape *s, int *order);
/* Does s's layout keep the row-major order of its elements (its dims of more than one element
 * in increasing physical order)? */
bool hlo_layout_is_row_major(const hlo_shape *s);
/* A bitcast from an operand of shape from to a result of shape to (one element type and count)
 * makes result element i the operand element at the same position in memory, under each
 * shape's layout: a reshape when both layouts keep the row-major order (true then), else a
 * transpose of the operand by hlo_layout_order(from), a reshape to to's dims in the order
 * hlo_layout_order(to) gives, and a transpose back to to's dims. */
bool hlo_bitcast_is_reshape(const hlo_shape *from, const hlo_shape *to);

/* ------------------------------------------------------ hlo_eval.c, hlo_array.c -- */

/* A dense array in row-major order. data holds shape.elements values of the element type:
 * f32 float, f64 double, f16 and bf16 their 16-bit patterns (uint16_t), s8/s16/s32/s64
 * int8_t...int64_t, u8/u16/u32/u64 uint8_t...uint64_t, pred uint8_t 0 or 1. shape is never a
 * tuple. */
typedef struct {
    hlo_shape shape;
    void *data;
} hlo_array;

/* Element i of a as a double: exact for every float and for integers up to 2^53. */
double hlo_array_get(const hlo_array *a, int64_t i);
/* Stores v as element i: rounded to nearest even for a float type (NaN stays NaN); for an
 * integer type v must be an integer in its range. */
void hlo_array_set(hlo_array *a, int64_t i, double v);
/* bf16 as the evaluator stores it (a `convert` to bf16): v rounded to nearest even, once from
 * any double; NaN a quiet NaN of its sign, subnormals kept, overflow to infinity. And back:
 * exact. */
uint16_t hlo_bf16_bits(double v);
double hlo_bf16_value(uint16_t h);

/* Allocates a zeroed array of type t and the given dims; NULL for an unsupported type, a bad
 * rank or when out of memory. */
hlo_array *hlo_array_new(hlo_type t, int rank, const int64_t *dims);
void hlo_array_free(hlo_array *a); /* a may be NULL */
size_t hlo_type_size(hlo_type t);  /* bytes per element of the evaluator's types; 0 otherwise */
bool hlo_is_float(hlo_type t);     /* f16, bf16, f32, f64 */

/* Reference evaluator: runs the ENTRY computation of a module that passes hlo_check on
 * params[k] for parameter(k) (n_params of them, each of exactly the parameter's shape) and
 * returns the root's value: one array, or one per element of a root tuple (nested tuples are
 * flattened in order). Element types: every array type (pred, s8...s64, u8...u64, f16, bf16,
 * f32, f64).
 *
 * Arithmetic is XLA's CPU backend's, bit for bit but for the transcendental functions:
 *  - f16 and bf16 ops compute in f32 and round each result to the type (nearest even); f32 ops
 *    in float, with the float libm functions (expf, tanhf, erff, ...: XLA uses its own
 *    approximations, which differ by a few ulps), f64 ops in double;
 *  - subnormals are flushed to zero as XLA's FTZ/DAZ modes do: subnormal (f32 or f64) operands of
 *    arithmetic, compare and convert (but bf16 to f32 or pred, which keep the bits) read as
 *    zero, and subnormal results are zero; negate and abs only flip or clear the sign;
 *    remainder flushes only y; power and atan2 only the result;
 *  - maximum and minimum propagate NaN and order -0 < +0; clamp is min(max(x, lo), hi);
 *    compare's NaN is unordered (only NE is true), type=TOTALORDER orders
 *    -NaN < -inf < ... < -0 < +0 < ... < inf < NaN;
 *  - integer ops wrap modulo 2^bits (64-bit ones exactly, u64 compares unsigned); x / 0 is -1
 *    (all bits set), x % 0 is x, INT_MIN / -1 is INT_MIN and INT_MIN % -1 is 0; power squares
 *    over the exponent's low 6 bits, an exponent with its sign bit set giving 0 but for the
 *    bases 1 and -1; shifts by at least the type's bits give 0, or the sign bit everywhere for
 *    shift-right-arithmetic, which takes the top bit as the sign in unsigned types too;
 *  - convert from float to integer truncates toward zero and saturates, NaN giving 0; between
 *    integers it wraps; integers round to nearest into floats (through f32 into f16 and bf16),
 *    f64 rounds to f16 and bf16 through f32 as XLA does; to pred it is x != 0.
 * A dot accumulates in its result type's accumulator: float for f16, bf16 and f32 (rounded to
 * the type once, at the end), double for f64, exactly modulo 2^64 for integers (wrapped at the
 * end), adding the products (each rounded first: no fused multiply-add; subnormals not
 * flushed) in increasing order of the contracting index (row-major over the contracting dims in
 * the order listed). A convolution accumulates
 * each result element the same way, in this order: over the kernel's spatial positions in
 * row-major order (spatial dims 0, 1, ... of dim_labels), and at each position over the input
 * features of the element's group in increasing order; positions that fall in the padding or
 * between the elements of an lhs-dilated input are skipped. Its groups: result feature o reads
 * input features [g * K, (g + 1) * K) for g = o / (O / feature_group_count) (K the kernel's input
 * features, O its output features), and result batch b reads input batch
 * o / (O / batch_group_count) * (B / batch_group_count) + b. reduce folds the elements in
 * increasing row-major order starting from the init value; reduce-window folds, from the init
 * values, every position of each window in row-major order, a position in the padding or between
 * the elements of an lhs-dilated input contributing the init values. call, fusion and reduce's and
 * reduce-window's to_apply evaluate the called computation on the operand values. A bitcast
 * reads its operand's elements in the order of the layouts (hlo_bitcast_is_reshape); a copy is
 * its operand's value (values are logical arrays: layouts change nothing else). Start indices
 * of dynamic-slice, dynamic-update-slice and gather are clamped so that the slice lies inside
 * the operand; a scatter applies to_apply(element, update) for each update in row-major order
 * of the updates, skipping a window that does not lie wholly inside the operand; a
 * select-and-scatter starts from the init value everywhere and, for each source element (a window
 * position, in row-major order), selects among the window's operand elements (in row-major
 * order, padding and dilation holes skipped) by keeping the one selected so far while
 * select(selected, next) holds, and stores scatter(value there, source element) there; sort is
 * stable (a merge sort calling the comparator, which must be a strict weak order for a sorted
 * result); while runs at most HLO_MAX_WHILE_TRIPS iterations, more being a located error; a
 * conditional's index out of range runs the last branch. Values are freed once their last user has
 * run.
 *
 * Returns 0 with *outs (n_outs arrays, free with hlo_arrays_free), or -1 with *err:
 * "<file>:<line>:<col>: ..." for a located problem (an elided constant whose value is needed,
 * an unsupported type), "<file>: ..." for bad arguments. */
int hlo_eval(const hlo_module *m, const char *file, hlo_array *const *params, int n_params,
             hlo_array ***outs, int *n_outs, hlo_error *err);
void hlo_arrays_free(hlo_array **arrays, int n); /* frees each array and the list */

/* Evaluation with hooks: hlo_eval, plus
 *  - custom_call: evaluates a custom-call instruction (hlo_check accepts any custom-call whose
 *    shape is an array or a tuple of arrays). operands are borrowed; the hook fills outs[0..n_outs)
 *    with new arrays, one per array of in->shape (its tuple elements in order), which the
 *    evaluator then owns, also when the hook fails (a failing hook may instead free them and
 *    leave NULL). Returns 0, or -1 with err's message filled (hlo_errorf; the evaluator
 *    locates it at the instruction).
 *    Without the hook a custom-call is an evaluation error naming its target. */
typedef struct {
    void *ctx;
    int (*custom_call)(void *ctx, const hlo_instr *in, hlo_array *const *operands, int n_operands,
                       hlo_array **outs, int n_outs, hlo_error *err);
    /* If not NULL: called after each instruction of the program is evaluated (instruction in of
     * computation c, once per evaluation: a while body's each iteration), not for the
     * instructions of a function an op applies per element (a reduce's reducer, a sort's
     * comparator, map, scatter), whose work is that op's. For accounting the host's work. */
    void (*evaluated)(void *ctx, const hlo_computation *c, const hlo_instr *in);
    /* If not NULL: evaluates an all-reduce among the devices the caller runs the program on
     * (each evaluating it on its own data), as custom_call does a custom-call: outs[0..n_outs)
     * (n_outs = n_operands) receive new arrays of the operands' shapes, the combination of every
     * device's operands (hlo_all_reduce_combine). Without it an all-reduce is the identity when
     * its groups are of one device, else an evaluation error. */
    int (*all_reduce)(void *ctx, const hlo_instr *in, hlo_array *const *operands, int n_operands,
                      hlo_array **outs, int n_outs, hlo_error *err);
} hlo_eval_hooks;
int hlo_eval_with(const hlo_module *m, const char *file, hlo_array *const *params, int n_params,
                  const hlo_eval_hooks *hooks, hlo_array ***outs, int *n_outs, hlo_error *err);

/* An all-reduce's combination: outs[k] (n_operands new arrays of the operands' shapes) holds
 * per element to_apply folded over replicas[0..n_replicas)[k] in that order, starting from
 * replicas[0][k] (each replica's operands of in's shapes): ((r0 + r1) + r2) + ... for an add, each
 * step rounded as the evaluator's add rounds (an f32 add: to nearest even, subnormals flushed).
 * So every replica gets the same bits, whatever the host's timing. Returns 0, or -1 with *err
 * located at in and every slot NULL. */
int hlo_all_reduce_combine(const hlo_module *m, const char *file, const hlo_instr *in,
                           hlo_array *const *const *replicas, int n_replicas, hlo_array **outs,
                           hlo_error *err);

/* Evaluates one instruction in of a checked module m (in must point into m: the operand shapes
 * come from its computation; any op hlo_eval handles except parameter, tuple, get-tuple-element,
 * call, fusion and custom-call) on the given operand arrays (one per array of the operands, in
 * order: a tuple operand, as while's state, gives its arrays depth first), for constant folding.
 * out has one slot per array of the result: every array of a tuple-shaped reduce, reduce-window,
 * sort, while or conditional, depth first, and one for any array-shaped instruction. Returns 0
 * with every slot holding a new array, or -1 with every slot NULL and *err located at the
 * instruction. */
int hlo_eval_instr(const hlo_module *m, const char *file, const hlo_instr *in,
                   hlo_array *const *operands, hlo_array **out, hlo_error *err);

/* --------------------------------------------------------------- hlo_print.c -- */

/* A growing NUL-terminated text buffer; after an allocation failure oom is set and further
 * appends do nothing. Zero-initialize before use. */
typedef struct {
    char *s;
    size_t len, cap;
    bool oom;
} hlo_text;
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void hlo_text_printf(hlo_text *t, const char *fmt, ...);
void hlo_text_free(hlo_text *t);

/* Printers of text hlo_parse reads back, in JAX's short style (bare names, no layouts: a
 * bitcast whose layouts matter is not printed faithfully; tpuc writes those as transposes and
 * reshapes). */
void hlo_print_shape(hlo_text *t, const hlo_shape *s);
/* A computation of m, verbatim apart from style, named as_name (NULL: its own name). */
void hlo_print_computation(hlo_text *t, const hlo_module *m, int comp, const char *as_name);
/* One instruction line "  [ROOT ]name = shape opcode(operands), attributes\n": opcode and the
 * attributes hlo_instr keeps come from attrs (computation references print m's computation
 * names, a constant its literal), name, shape and operand names from the arguments. Hand-built
 * attrs set to_apply and calls to -1 (condition and body count on while only,
 * gather.index_vector_dim on gather only). */
void hlo_print_instr(hlo_text *t, const hlo_module *m, const hlo_instr *attrs, bool root,
                     const char *name, const hlo_shape *shape, const char *const *operands,
                     int n_operands);
/* A constant instruction line holding value exactly (f32 printed with 9 significant digits,
 * inf/-inf/nan as XLA spells them). */
void hlo_print_constant(hlo_text *t, bool root, const char *name, const hlo_array *value);

#ifdef __cplusplus
}
#endif

#endif

"""The C declarations of libtpusim.so that the package uses, restated for cffi's ABI mode from
compiler/tpuc.h, package/tpub.h, runtime/tpurt.h, driver/tpu.h, sim/config.h and hlo/hlo.h.

cffi cannot read those headers (they include others and use attributes), so what it needs is
written here: the functions, and the structs it allocates or reads, field for field. Enums are
their underlying int; their values, and the sizes and field offsets of these structs, come from
the library's own table (python/abi.c), which _lib.py checks this text against on loading.
Pointers to structs the package never looks into are void *. Array bounds: HLO_MAX_RANK 16,
TPUB_MAX_RANK 8."""

CDEF = """
typedef int hlo_type;
typedef int tpurt_status;
typedef int tpub_op_kind;

typedef struct { char msg[512]; int line, col; } hlo_error;

typedef struct hlo_shape {
    hlo_type type;
    int rank;
    int64_t dims[16];
    int64_t elements;
    bool has_layout;
    int minor_to_major[16];
    int n_tuple;
    struct hlo_shape *tuple;
} hlo_shape;

typedef struct { hlo_shape shape; void *data; } hlo_array;
hlo_array *hlo_array_new(hlo_type t, int rank, const int64_t *dims);
void hlo_array_free(hlo_array *a);

typedef struct {
    const char *hlo_path;
    const char *hlo_text;
    size_t hlo_len;
    const char *weights_path;
    hlo_array *const *weights;
    int n_weights;
    uint32_t array_n;
    hlo_array *const *calib;
    int n_calib;
    bool allow_nonfinite;
    uint8_t precision;
    bool no_conv_packing;
    uint64_t unroll_bytes;
} tpuc_options;

typedef struct {
    uint32_t flags, batch, h, w, c, kh, kw, cout;
    uint32_t stride_h, stride_w;
    uint32_t pad_top, pad_bottom, pad_left, pad_right;
    uint32_t pool_h, pool_w, pool_stride_h, pool_stride_w;
    uint64_t in_off, k_off, out_off, p_off;
    char *name;
    char *fused;
} tpub_conv;

typedef struct {
    uint32_t array_n;
    uint64_t arena_bytes;
    uint64_t const_bytes;
    uint8_t *const_image;
    char *host_hlo;
    uint32_t n_inputs, n_outputs;
    void *inputs, *outputs;
    uint32_t n_segments;
    void *segments;
    char *report;
} tpub_package;

int tpuc_compile(const tpuc_options *opts, tpub_package *out, hlo_error *err);
int tpub_save(const tpub_package *pkg, const char *path, hlo_error *err);
void tpub_free(tpub_package *pkg);

typedef struct {
    uint32_t array_n;
    uint64_t mem_size;
    uint32_t mem_latency;
    uint32_t mem_bytes_per_cycle;
    uint32_t cores;
    const void *memory;
} tpusim_config;

typedef struct {
    uint32_t array_n, ub_rows, acc_rows, wfifo_tiles, iq_depth, version;
    uint64_t mem_size;
    uint32_t mem_latency, mem_bytes_per_cycle;
    uint32_t cores;
} tpu_info;

typedef struct tpurt tpurt;
typedef struct {
    const tpusim_config *device;
    uint64_t max_cycles;
    int verify;
    uint64_t first_batch;
    int weights_per_core;
    const void *remote;
} tpurt_options;

typedef struct {
    const char *name;
    hlo_type type;
    int rank;
    int64_t dims[8];
    uint64_t elements;
    uint64_t bytes;
} tpurt_tensor;

typedef struct {
    const char *name;
    const char *fused;
    uint32_t segment, index;
    tpub_op_kind kind;
    uint32_t m, k, n;
    uint32_t flags;
    const tpub_conv *conv;
    uint32_t oh, ow;
    uint64_t macs;
    uint64_t bytes;
    uint64_t submissions, cycles;
    double ideal_cycles;
    double bound_cycles;
    uint32_t iterations;
} tpurt_layer;

typedef struct {
    const char *opcode;
    uint64_t count;
    uint64_t macs;
    uint64_t bytes;
} tpurt_host_op;

typedef struct {
    uint64_t runs;
    uint64_t submissions;
    uint64_t verified;
    uint64_t cycles;
    double device_seconds;
    double host_seconds;
    uint64_t trace_cycles;
    uint64_t device_cycles;
} tpurt_stats;

typedef struct {
    uint64_t submissions, cycles;
    uint64_t mem_stall_cycles;
    uint64_t mxu_busy;
} tpurt_core_stats;

const char *tpurt_status_name(tpurt_status s);
void tpurt_options_default(tpurt_options *opts);
tpurt_status tpurt_open(const tpub_package *pkg, const tpurt_options *opts, tpurt **rt, char *err,
                        size_t errlen);
void tpurt_close(tpurt *rt);
const char *tpurt_last_error(const tpurt *rt);
uint32_t tpurt_n_inputs(const tpurt *rt);
uint32_t tpurt_n_outputs(const tpurt *rt);
tpurt_status tpurt_get_input(tpurt *rt, uint32_t i, tpurt_tensor *out);
tpurt_status tpurt_get_output(tpurt *rt, uint32_t i, tpurt_tensor *out);
int32_t tpurt_output_updates(const tpurt *rt, uint32_t i);
tpurt_status tpurt_run(tpurt *rt, const void *const *inputs, uint32_t n_inputs,
                       void *const *outputs, uint32_t n_outputs);
tpurt_status tpurt_run_batches(tpurt *rt, uint32_t n_batches, const void *const *const *inputs,
                               uint32_t n_inputs, void *const *const *outputs, uint32_t n_outputs);
uint32_t tpurt_cores(const tpurt *rt);
tpurt_status tpurt_get_core_stats(tpurt *rt, uint32_t core, tpurt_core_stats *out);
uint32_t tpurt_n_layers(const tpurt *rt);
tpurt_status tpurt_get_layer(tpurt *rt, uint32_t i, tpurt_layer *out);
uint32_t tpurt_n_host_ops(const tpurt *rt);
tpurt_status tpurt_get_host_op(tpurt *rt, uint32_t i, tpurt_host_op *out);
tpurt_status tpurt_get_stats(tpurt *rt, tpurt_stats *out);
tpurt_status tpurt_get_info(tpurt *rt, tpu_info *out);
tpurt_status tpurt_trace(tpurt *rt, const char *path, uint64_t from, uint64_t to);

typedef struct { const char *name; size_t value; } tpusim_abi_entry;
const tpusim_abi_entry *tpusim_abi(size_t *n);
"""

/* tpu.h - the host driver's public interface (C11).
 *
 * The driver knows devices, memory and command streams, nothing about models. It opens a device
 * (the cycle-accurate simulator of sim/tpusim.h, or one behind a bus), allocates device memory,
 * copies buffers in and out, builds and submits command streams (docs/command-stream.md) that the
 * device firmware (firmware/firmware.h) expands into core instructions, waits for completion and
 * reads the performance counters. Every call that can fail returns a tpu_status;
 * tpu_last_error(dev) gives a message naming what failed and where. A device stays usable after any
 * error. */
#ifndef TPU_DRIVER_TPU_H
#define TPU_DRIVER_TPU_H

#include <stddef.h>
#include <stdint.h>

#include "firmware/firmware.h" /* the command stream: its flags and REDUCE's limits */
#include "rtl/tpu_isa.h"       /* the ISA's counters, ID and VERSION (generated) */
#include "sim/config.h"        /* the device's configuration and its limits */

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tpu_status {
    TPU_OK = 0,
    TPU_E_ARG,      /* a bad argument (NULL, zero size, unknown buffer, ...) */
    TPU_E_NOMEM,    /* out of device memory (or of host memory) */
    TPU_E_DEVICE,   /* the device could not be opened (no model for that array size, ...) */
    TPU_E_STREAM,   /* the firmware rejected the command stream (message: command and field) */
    TPU_E_CORE,     /* the core stopped with an error code (message: code name and instruction) */
    TPU_E_TIMEOUT,  /* the work did not finish within the cycle budget */
    TPU_E_MISMATCH, /* verification on: the device's result differs from the golden model */
    TPU_E_IO,       /* a trace file could not be written */
} tpu_status;

const char *tpu_status_name(tpu_status s); /* "TPU_E_CORE" */

typedef struct tpu_device tpu_device;

/* The largest cycle budget (tpu_set_budget): about a month of simulation. */
#define TPU_BUDGET_MAX 1000000000000ull

/* Fills cfg's fields that are 0 with the defaults tpu_open gives them: a 16 x 16 array, 64 MiB of
 * memory and the simulator's memory timing (sim/tpusim.h tpusim_config_default). */
void tpu_config_fill(tpusim_config *cfg);
/* Opens a local device: the simulator configured by cfg (sim/config.h; NULL: the defaults, as
 * are its fields left 0), with verify on checking every submitted stream against the golden
 * model. Memory timing beyond TPUSIM_MEM_LATENCY_MAX or TPUSIM_MEM_BANDWIDTH_MAX is TPU_E_ARG.
 * On failure *dev is NULL and, if err is not NULL, the reason is written there. */
tpu_status tpu_open(const tpusim_config *cfg, int verify, tpu_device **dev, char *err,
                    size_t errlen);
void tpu_close(tpu_device *dev);
const char *tpu_last_error(const tpu_device *dev);

/* The hardware as its ID registers describe it. */
typedef struct {
    uint32_t array_n, ub_rows, acc_rows, wfifo_tiles, iq_depth, version;
    uint64_t mem_size;
    uint32_t mem_latency, mem_bytes_per_cycle; /* the memory model's timing */
    uint32_t cores;                            /* cores that take submissions (1 or more) */
} tpu_info;
tpu_status tpu_query(tpu_device *dev, tpu_info *info);

/* The array sizes N the simulator has a model for (tpusim_config.array_n), ascending: writes at
 * most max of them and returns how many it wrote. */
int tpu_array_sizes(uint32_t *sizes, int max);

/* Device memory (tpusim_config.mem_size) for buffers of `bytes` in all, with room for the command
 * streams and the 64-byte rounding of blocks: the default (64 MiB) while it holds them with room
 * to spare, else an eighth more than they need, in whole MiB. 0 when they cannot fit the 32-bit
 * device addresses beside the streams (more than 3 GiB). */
uint64_t tpu_mem_size_for(uint64_t bytes);

/* Device memory: 64-byte aligned blocks. Addresses are device addresses. */
tpu_status tpu_alloc(tpu_device *dev, uint64_t bytes, uint32_t *addr);
tpu_status tpu_free(tpu_device *dev, uint32_t addr);
tpu_status tpu_write(tpu_device *dev, uint32_t addr, const void *src, size_t bytes);
tpu_status tpu_read(tpu_device *dev, uint32_t addr, void *dst, size_t bytes);

/* ------------------------------------------------------ command streams -- */
typedef struct tpu_stream tpu_stream;

tpu_stream *tpu_stream_new(void); /* NULL if out of host memory */
void tpu_stream_free(tpu_stream *s);
/* Declare a device buffer the stream may touch; returns its index through idx. */
tpu_status tpu_stream_buffer(tpu_stream *s, uint32_t addr, uint32_t bytes, uint32_t *idx);

typedef struct {
    uint32_t buf, offset; /* buffer index (tpu_stream_buffer) and byte offset */
    uint32_t ld;          /* leading dimension: row pitch in elements */
} tpu_operand;

/* The command stream's GEMM flags (firmware/firmware.h), under the driver's names. */
enum tpu_gemm_flags {
    TPU_GEMM_BIAS = FW_GEMM_BIAS,
    TPU_GEMM_RELU = FW_GEMM_RELU,
    TPU_GEMM_OUT_INT8 = FW_GEMM_OUT_INT8,
    TPU_GEMM_A_UNSIGNED = FW_GEMM_A_UNSIGNED,
    /* B in N x N tiles for the device's array size (tpu_info.array_n), b.ld 0: tile (kt, nt) at
     * byte (nt * ceil(k/N) + kt) * N * N, zero-padded past k and n (docs/command-stream.md). */
    TPU_GEMM_B_TILED = FW_GEMM_B_TILED,
    /* A and B bf16 (2-byte elements; a B tile N rows of 2N bytes), fp32 sums, C fp32 or with
     * OUT_BF16 bf16; params the fp32 bias[n] alone (docs/command-stream.md). */
    TPU_GEMM_BF16 = FW_GEMM_BF16,
    TPU_GEMM_OUT_BF16 = FW_GEMM_OUT_BF16,
};
typedef struct {
    uint32_t m, k, n, flags;
    tpu_operand a, b, c;
    tpu_operand params; /* int32 bias[n], mult[n], shift[n] (BF16: fp32 bias[n]); ld unused; with
                           BIAS or OUT_INT8 */
} tpu_gemm;
/* Appends a GEMM command (docs/command-stream.md): TPU_E_ARG for a NULL argument or an unknown
 * flag, TPU_E_NOMEM if the stream cannot grow; the firmware checks the rest at tpu_submit. */
tpu_status tpu_stream_gemm(tpu_stream *s, const tpu_gemm *g);

/* What a GEMM costs at best on a device: the figures every report compares measured cycles
 * with. A, B, C and the parameters each cross the memory port once (B counted unpadded, the
 * parameters whenever BIAS or OUT_INT8 needs any of them); the MXU does N^2 MACs a cycle. A
 * figure whose divisor is zero is NaN. */
typedef struct {
    uint64_t macs;        /* m * k * n */
    uint64_t bytes;       /* (m*k + k*n) * (2 with BF16, else 1) + m*n * (1 with OUT_INT8, 2 with
                             OUT_BF16, else 4) + 12*n (BF16: 4*n) with parameters */
    double ideal_cycles;  /* macs / N^2: the compute bound */
    double memory_cycles; /* bytes / info->mem_bytes_per_cycle: the memory bound */
    double bound_cycles;  /* the larger of the two: no schedule can take fewer cycles */
} tpu_cost;
/* g's operands and ld fields are not used. TPU_E_ARG for a NULL argument. */
tpu_status tpu_gemm_cost(const tpu_info *info, const tpu_gemm *g, tpu_cost *out);

/* A 2-D convolution (CONV2D, docs/command-stream.md): NHWC int8 (uint8 with A_UNSIGNED) input
 * [batch, h, w, c] with zero padding, a kernel of cout output channels in the tile order of the
 * device's array size (tpu_conv_k_tiles tells its K tiles), then bias, ReLU, int8
 * requantization (OUT_INT8) and max pooling (TPU_CONV_POOL, which needs OUT_INT8) as flagged;
 * the output is NHWC, int8 or int32. The operands' ld fields are not used. */
enum tpu_conv_flags {
    TPU_CONV_POOL = FW_CONV_POOLING, /* with the GEMM flags BIAS, RELU, OUT_INT8, A_UNSIGNED, BF16
                                        and OUT_BF16 (bf16: POOL needs OUT_BF16) */
};
typedef struct {
    uint32_t flags, batch, h, w, c, kh, kw, cout;
    uint32_t stride_h, stride_w;                           /* 1..255 */
    uint32_t pad_top, pad_bottom, pad_left, pad_right;     /* 0..255 */
    uint32_t pool_h, pool_w, pool_stride_h, pool_stride_w; /* with TPU_CONV_POOL, else 0 */
    tpu_operand in, kernel, out, params; /* params: int32 bias, mult, shift of cout each */
} tpu_conv2d;
/* Appends a CONV2D command: TPU_E_ARG for a NULL argument, an unknown flag, or a stride, pad or
 * pool field wider than the command's (the firmware checks the rest at tpu_submit). */
tpu_status tpu_stream_conv2d(tpu_stream *s, const tpu_conv2d *v);
/* The convolution's output size (pooled when TPU_CONV_POOL), 0 when the kernel or window does
 * not fit; and the K tiles of its kernel on an array of size n (the kernel holds
 * tiles x ceil(cout / n) tiles of n x n bytes). */
void tpu_conv_out_size(const tpu_conv2d *v, uint32_t *oh, uint32_t *ow);
uint32_t tpu_conv_k_tiles(const tpu_conv2d *v, uint32_t n);
/* What a convolution costs at best (tpu_cost): macs = batch * oh * ow * cout * kh * kw * c, the
 * unpooled output's; bytes: the input, the kernel's tile rows (K tiles x n rows of cout
 * elements), the output (pooled) and the parameters, each crossing the memory port once (bf16:
 * 2-byte input and kernel elements, as tpu_gemm_cost). */
tpu_status tpu_conv2d_cost(const tpu_info *info, const tpu_conv2d *v, tpu_cost *out);

/* The element-wise sum of `sources` buffers of `elements` int32, or with TPU_REDUCE_F32 fp32,
 * added in source order and written to each of `destinations` buffers (REDUCE,
 * docs/command-stream.md): a core's slice of an all-reduce. Each operand 4-byte aligned; a
 * destination is a source (in place) or apart from them. The operands' ld fields are not used. */
enum tpu_reduce_flags { TPU_REDUCE_F32 = FW_REDUCE_F32 };
typedef struct {
    uint32_t flags, elements, sources, destinations;
    tpu_operand src[FW_REDUCE_MAX], dst[FW_REDUCE_MAX];
} tpu_reduce;
/* Appends a REDUCE command: TPU_E_ARG for a NULL argument, an unknown flag, or 0 or more than
 * FW_REDUCE_MAX sources or destinations (the firmware checks the rest at tpu_submit). */
tpu_status tpu_stream_reduce(tpu_stream *s, const tpu_reduce *r);
/* What a REDUCE costs at best (tpu_cost): no MACs; bytes 4 * elements * (sources +
 * destinations), each crossing the memory port once; the bound is the memory's. */
tpu_status tpu_reduce_cost(const tpu_info *info, const tpu_reduce *r, tpu_cost *out);

/* The stream's bytes as the firmware reads them. */
const void *tpu_stream_data(const tpu_stream *s, size_t *bytes);

/* ------------------------------------------------------ running work -- */
/* Called about every 65536 simulated cycles during tpu_submit and tpu_wait, for progress bars:
 * instructions retired by the core and pushed by the firmware so far in this submission. */
typedef void (*tpu_progress_fn)(void *ctx, uint64_t retired, uint64_t pushed, uint64_t cycles);
void tpu_set_progress(tpu_device *dev, tpu_progress_fn fn, void *ctx);

/* Cycle budget of each following submission, from its tpu_submit through its tpu_wait (0: none,
 * the default; at most TPU_BUDGET_MAX, larger ones are cut to it). A submission that runs out
 * fails with TPU_E_TIMEOUT and the device (every core) is reset; other cores' pending
 * submissions then fail with TPU_E_TIMEOUT too. */
void tpu_set_budget(tpu_device *dev, uint64_t max_cycles);

/* Submissions. Each core has its own control processor: tpu_submit_core copies the stream into
 * device memory and runs the firmware on it for core k. The firmware validates the whole stream
 * (a rejected stream is TPU_E_STREAM here, with nothing pushed) and expands it; its pushes then
 * happen on the device clock from the current cycle on, while tpu_wait_core, tpu_wait_all or
 * tpu_step run it, side by side with the other cores' submissions. A core takes one submission at
 * a time. */
tpu_status tpu_submit_core(tpu_device *dev, uint32_t core, const tpu_stream *s);
tpu_status tpu_submit(tpu_device *dev, const tpu_stream *s); /* to core 0 */
/* The same for a stream already in device memory at [addr, addr + bytes), which stays where it
 * is (a platform's host wrote it there: tools/tpu_vp). */
tpu_status tpu_submit_at(tpu_device *dev, uint32_t core, uint32_t addr, uint32_t bytes);
/* Run the device until core k's submission halts, at most max_cycles more cycles (0: no limit
 * beyond the budget); the other cores' submissions run meanwhile.
 * With verify on, each core's golden model executes the instructions its firmware pushed on a
 * mirror of device memory, one submission after the other in the order they end; the bytes they
 * can have written (their WR_HOST destinations) are compared with the device's (sim's
 * tpusim_compare), and TPU_E_MISMATCH counts the differing bytes and names the one whose last
 * writer comes first, with that instruction. This is exact when submissions that overlap in time do
 * not write what another reads or writes (the programming model: such races are timing-dependent).
 * A tpu_write while submissions are pending is checked too: where a pending submission reads or
 * writes (within the span of its strided accesses) the golden model sees the write only
 * afterwards, so a change it missed is a mismatch naming the write; elsewhere the mirror takes it
 * at once. The cost is proportional to the bytes compared, not to mem_size. */
tpu_status tpu_wait_core(tpu_device *dev, uint32_t core, uint64_t max_cycles);
tpu_status tpu_wait(tpu_device *dev, uint64_t max_cycles); /* core 0 */
/* Wait for every core's pending submission; returns the first failure in core order (each core's
 * outcome is kept: tpu_perf_core; tpu_last_error names the failing core). */
tpu_status tpu_wait_all(tpu_device *dev, uint64_t max_cycles);
/* Wait for whichever pending submission stops first (the lowest core among those stopping in the
 * same cycle); *core gets it. Its outcome as tpu_wait_core gives it. */
tpu_status tpu_wait_any(tpu_device *dev, uint64_t max_cycles, uint32_t *core);
/* For a platform that owns the clock (tools/tpu_vp): run `cycles` edges, replaying the pending
 * submissions. tpu_core_done tells whether core k's submission has stopped (halted or failed):
 * then tpu_wait_core returns its outcome without a further cycle. 0 while it runs or when nothing
 * is pending. */
void tpu_step(tpu_device *dev, uint64_t cycles);
int tpu_core_done(tpu_device *dev, uint32_t core);
uint64_t tpu_cycle(const tpu_device *dev); /* clock edges since tpu_open */

typedef struct {
    uint64_t cycles; /* device cycles from tpu_submit to the HALT, firmware included */
    uint64_t counters[TPU_PERF_COUNT]; /* the core's counters, TPU_PERF_* (rtl/tpu_isa.h) */
    uint64_t firmware_cycles;          /* cycles the control processor spent (cost model) */
    uint64_t instructions;             /* core instructions the firmware pushed */
    uint64_t mem_stall_cycles;         /* cycles the core's memory requests lost the port to
                                          other cores (a chip's MEM_STALL; 0 on one core) */
    int verified;                      /* its golden model ran it and agreed (verify on) */
    double wall_seconds;               /* host time spent simulating */
} tpu_perf_report;
/* Figures of core k's last finished submission (tpu_perf: core 0's). With several cores running
 * at once, wall_seconds is the host time of the waits that ran it. */
tpu_status tpu_perf_core(tpu_device *dev, uint32_t core, tpu_perf_report *out);
tpu_status tpu_perf(tpu_device *dev, tpu_perf_report *out);
/* A counter's name as the ISA table gives it ("mxu_busy"), or "?". */
const char *tpu_counter_name(int counter);

/* Waveform of the coming work: FST (or VCD if path ends in .vcd), optionally only cycles
 * [from, to) counted from the next submit (to = 0: until closed). The simulator opens the file at
 * that submit and writes every following submission into it until the window ends or the trace
 * is closed. A trace still open is closed first, as tpu_trace_close does. */
tpu_status tpu_trace_open(tpu_device *dev, const char *path, uint64_t from, uint64_t to);
/* Closes the trace and, when a submit opened it, writes the GTKWave save file beside it
 * (sim/gtkw.h: wave.gtkw and wave.opcodes.txt beside wave.fst). The trace is written to a
 * temporary and renamed into place here; it fails (TPU_E_IO, and no file is left) when its file
 * system ran short of space (tpusim_trace_open). TPU_E_IO too when the save file cannot be
 * written (the trace itself is then complete). tpu_close does the same for a trace left open. */
tpu_status tpu_trace_close(tpu_device *dev);
/* The cycles the last closed trace holds: 0 when its window began after the work ended. */
uint64_t tpu_trace_cycles(const tpu_device *dev);

/* ------------------------------------------------------ remote devices -- */
/* A device behind a bus (tools/tpu_vp: a SystemC platform's tpu_tlm, reached over TLM-2.0): the
 * driver keeps its allocator and command streams and leaves memory and running work to these
 * functions, which run the device-side driver (and its verification) at the other end. Each
 * returns 0, or -1 when the bus refused the access. Traces and progress callbacks are local
 * only (TPU_E_ARG / never called); the budget is the device side's. */
typedef struct {
    tpu_status status;    /* the submission's outcome at the device */
    char msg[256];        /* its message when status is not TPU_OK */
    tpu_perf_report perf; /* its figures (wall_seconds: the device side's) */
} tpu_remote_result;
typedef struct tpu_remote {
    void *ctx;
    int (*write)(void *ctx, uint32_t addr, const void *src, size_t n);
    int (*read)(void *ctx, uint32_t addr, void *dst, size_t n);
    int (*query)(void *ctx, tpu_info *info);
    /* Start core k's control processor on the stream at [addr, addr + bytes). */
    int (*start)(void *ctx, uint32_t core, uint32_t addr, uint32_t bytes);
    /* Block until the submission of a core in the bit mask `cores` has ended (the lowest of
     * those ending in the same cycle): that core in *core, its outcome in *out. */
    int (*wait)(void *ctx, uint32_t cores, uint32_t *core, tpu_remote_result *out);
    /* The device's clock edges so far (tpu_cycle); NULL: not known (tpu_cycle is 0). */
    uint64_t (*cycle)(void *ctx);
} tpu_remote;
/* ops must outlive the device. */
tpu_status tpu_open_remote(const tpu_remote *ops, tpu_device **dev, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif

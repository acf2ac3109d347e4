/* tpu_internal.h - what the driver's files share: tpu.c (devices, memory, traces) and submit.c
 * (submissions, waits, verification); not part of the driver's interface. */
#ifndef TPU_DRIVER_TPU_INTERNAL_H
#define TPU_DRIVER_TPU_INTERNAL_H

#include "driver/tpu.h"
#include "sim/tpusim.h"

/* A device memory range [addr, addr + size). */
typedef struct {
    uint32_t addr, size;
} block;

/* Blocks sorted by address. */
typedef struct {
    block *v;
    size_t n, cap;
} block_list;

int drv_list_insert(block_list *l, size_t i, block b);     /* -1 if out of host memory */
size_t drv_list_lower(const block_list *l, uint32_t addr); /* the first block at or above addr */

/* One core's control processor and its current (pending) or last submission. */
typedef struct {
    int pending;                   /* submitted, not yet waited for */
    int stopped;                   /* pending, and the core has stopped: result holds how */
    int result;                    /* enum tpusim_result */
    uint32_t error_code, error_pc; /* TPUSIM_ERROR: the core's registers when it stopped */
    uint32_t timeout_by;           /* TPUSIM_TIMEOUT: the core whose cycles ran out */
    uint64_t timeout_after;        /* ... after that many cycles of its submission */
    uint32_t stream_addr;
    int own_stream;    /* the stream is in memory tpu_submit_core allocated */
    tpusim_feed *feed; /* what the firmware pushed, with its time between the pushes */
    uint32_t pc_base;  /* INSN_COUNT at submit: ERROR_PC - pc_base indexes the feed */
    uint64_t t0, budget_end, stop_cycle;
    uint64_t base[TPU_PERF_COUNT], stop[TPU_PERF_COUNT]; /* the counters at submit and stop */
    uint64_t stall_base, stall_stop, fw_edges;
    block_list touched;        /* verify on: the ranges its instructions read or write */
    block_list pending_writes; /* tpu_write ranges inside `touched` while pending */
    int mirror_lost;           /* a pending write went unrecorded: compare and copy all */
    tpusim_golden *golden;     /* verify on: its own model on the shared mirror */
    double wall;
    tpu_perf_report perf;
    int have_perf;
} drv_core;

struct tpu_device {
    tpusim *sim;              /* NULL for a remote device */
    const tpu_remote *remote; /* a remote device's bus, else NULL */
    tpusim_hwcfg hw;
    uint32_t version, mem_latency, mem_bytes_per_cycle, cores;
    int chip; /* a tpu_chip (tpu_options.cores given), not a lone tpu_core */
    block_list free_blocks, used_blocks; /* the allocator: first fit, coalescing */
    uint8_t *mirror;                     /* verify on: the golden models' memory (see submit.c) */
    char msg[1024];

    tpu_progress_fn progress;
    void *progress_ctx;
    uint64_t next_progress;

    char *trace_path; /* a trace waiting for the next submit */
    uint64_t trace_from, trace_to;
    char *traced_path;     /* the trace a submit opened: it gets a save file when closed */
    uint64_t trace_cycles; /* the cycles the last closed trace holds */

    uint64_t budget;  /* tpu_set_budget: cycles per submission, 0 = none */
    uint32_t errored; /* cores stopped with an error: reset once no core is pending */
    drv_core core[TPUSIM_CORES_MAX];
};

tpu_status drv_fail(tpu_device *d, tpu_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
double drv_now(void);
/* Device memory written by the host (in range), the golden mirror following (submit.c). */
void drv_mem_write(tpu_device *d, uint32_t addr, const void *src, size_t bytes);
/* tpu_close's part for the submissions: feeds, golden models, lists. */
void drv_cores_free(tpu_device *d);
/* Verify on: the golden models on the mirror (after tpu_open has copied device memory into it). */
tpu_status drv_cores_init(tpu_device *d);
/* A trace armed by tpu_trace_open opens at a submit, from cycle t0. */
tpu_status drv_trace_start(tpu_device *d, uint64_t t0);

#endif

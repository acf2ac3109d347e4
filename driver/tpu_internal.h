/* tpu_internal.h - what the driver's files share; not part of the driver's interface.
 *
 * The generic driver (tpu.c: devices, the allocator, memory, traces; submit.c: submissions and
 * waits) reaches a device only through its backend's operations (drv_ops): the local backend
 * (local.c: the simulator of sim/tpusim.h and its clock, with record.c and verify.c) or the
 * remote one (remote.c: a device behind a bus, tpu_remote). */
#ifndef TPU_DRIVER_TPU_INTERNAL_H
#define TPU_DRIVER_TPU_INTERNAL_H

#include "driver/tpu.h"
#include "sim/tpusim.h"

/* Device memory comes in blocks of this many bytes: a memory must hold one (a stream). */
#define DRV_ALIGN 64u
#define DRV_NO_CORE 0xffffffffu
/* What tpu_open takes for a configuration's array_n and mem_size left 0 (tpu_config_fill). */
#define DRV_ARRAY_N_DEFAULT 16u
#define DRV_MEM_SIZE_DEFAULT (64ull << 20)

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

/* Core k's submission, as the generic driver keeps it; its backend keeps the rest. */
typedef struct {
    int pending;          /* submitted, not yet waited for */
    int stopped;          /* pending, and stopped: its outcome waits for a wait (local only) */
    uint32_t stream_addr; /* its command stream in device memory */
    int own_stream;       /* the submission allocated that memory and frees it as it ends */
    tpu_perf_report perf; /* the figures of the last submission that ended */
    int have_perf;
} drv_core;

/* A backend: what the generic driver asks of a device. Messages go to the device (drv_fail). */
typedef struct {
    void (*destroy)(tpu_device *d); /* releases the backend's state (d's own is tpu_close's) */
    /* Device memory, [addr, addr + bytes) inside it. */
    tpu_status (*mem_write)(tpu_device *d, uint32_t addr, const void *src, size_t bytes);
    tpu_status (*mem_read)(tpu_device *d, uint32_t addr, void *dst, size_t bytes);
    /* Starts core k's control processor on the stream at [addr, addr + bytes); `call` names the
     * caller in messages. */
    tpu_status (*submit)(tpu_device *d, uint32_t k, uint32_t addr, uint32_t bytes,
                         const char *call);
    /* Runs the device until every core of the mask `cores` has stopped (any: one of them) or
     * `cycles` edges have passed, and then, when they have not, times out the first of them
     * still running: a wait leaves a core of `cores` stopped. cores 0: just the edges. A device
     * whose clock is at the far end of a bus leaves this to `outcome`. */
    void (*run_until)(tpu_device *d, uint32_t cores, int any, uint64_t cycles);
    /* Takes the outcome of a stopped core of `cores` (the lowest; a remote device: the one its
     * bus answers for) into *k and its figures into its drv_core: its status and message. *k
     * stays DRV_NO_CORE when none could be taken. */
    tpu_status (*outcome)(tpu_device *d, uint32_t cores, const char *call, uint32_t *k);
    uint64_t (*cycle)(const tpu_device *d); /* tpu_cycle */
    /* tpu_trace_open and tpu_trace_close. */
    tpu_status (*trace_open)(tpu_device *d, const char *path, uint64_t from, uint64_t to);
    tpu_status (*trace_close)(tpu_device *d);
} drv_ops;

struct tpu_device {
    const drv_ops *ops;
    void *be; /* the backend's own state */
    tpusim_hwcfg hw;
    uint32_t version, mem_latency, mem_bytes_per_cycle, cores;
    block_list free_blocks, used_blocks; /* the allocator: first fit, coalescing */
    char msg[1024];

    tpu_progress_fn progress; /* tpu_set_progress */
    void *progress_ctx;
    uint64_t budget;       /* tpu_set_budget: cycles per submission, 0 = none */
    uint64_t trace_cycles; /* the cycles the last closed trace holds */
    drv_core core[TPUSIM_CORES_MAX];
};

tpu_status drv_fail(tpu_device *d, tpu_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "tpu_wait", or "tpu_wait: core 3" on a chip: where a message about core k comes from. */
const char *drv_where(const tpu_device *d, uint32_t k, const char *call, char *buf, size_t n);

/* d->cores, which both backends bound by TPUSIM_CORES_MAX. */
static inline uint32_t drv_ncores(const tpu_device *d)
{
    return d->cores < TPUSIM_CORES_MAX ? d->cores : TPUSIM_CORES_MAX;
}

/* The cores with a pending submission, as a bit mask. */
static inline uint32_t drv_pending(const tpu_device *d)
{
    uint32_t m = 0;
    for (uint32_t k = 0; k < drv_ncores(d); k++)
        m |= (uint32_t)d->core[k].pending << k;
    return m;
}

/* The backends' openings: they fill d's ops, state, hardware description and cores. */
tpu_status drv_local_open(tpu_device *d, const tpusim_config *device, int verify);
tpu_status drv_remote_open(tpu_device *d, const tpu_remote *bus);

#endif

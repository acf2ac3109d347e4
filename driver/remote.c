/* remote.c - the remote backend of the driver: a device behind a bus (tpu_open_remote, a
 * tpu_remote's functions), whose device-side driver runs the clock, the firmware and the
 * verification at the other end. Here: memory accesses, starts and waits as bus calls, and the
 * outcome the device side reports. */
#include <string.h>

#include "driver/tpu_internal.h"

static const tpu_remote *bus(const tpu_device *d) { return d->be; }

static tpu_status mem_write(tpu_device *d, uint32_t addr, const void *src, size_t bytes)
{
    if (bus(d)->write(bus(d)->ctx, addr, src, bytes))
        return drv_fail(d, TPU_E_DEVICE, "tpu_write: the bus refused [0x%x, +%zu)", addr, bytes);
    return TPU_OK;
}

static tpu_status mem_read(tpu_device *d, uint32_t addr, void *dst, size_t bytes)
{
    if (bus(d)->read(bus(d)->ctx, addr, dst, bytes))
        return drv_fail(d, TPU_E_DEVICE, "tpu_read: the bus refused [0x%x, +%zu)", addr, bytes);
    return TPU_OK;
}

static tpu_status submit(tpu_device *d, uint32_t k, uint32_t addr, uint32_t bytes, const char *call)
{
    char w[64];
    if (bus(d)->start(bus(d)->ctx, k, addr, bytes))
        return drv_fail(d, TPU_E_DEVICE, "%s: the bus refused the start",
                        drv_where(d, k, call, w, sizeof w));
    return TPU_OK;
}

/* The device side runs its own clock: its wait blocks in end. */
static void run_until(tpu_device *d, uint32_t cores, int any, uint64_t cycles)
{
    (void)d;
    (void)cores;
    (void)any;
    (void)cycles;
}

/* The bus's wait for a core of the mask: its outcome, as the device side reported it. */
static tpu_status outcome(tpu_device *d, uint32_t cores, const char *call, uint32_t *core)
{
    (void)call; /* the bus's failures are the waits' */
    tpu_remote_result res;
    memset(&res, 0, sizeof res);
    uint32_t k = DRV_NO_CORE;
    if (bus(d)->wait(bus(d)->ctx, cores, &k, &res))
        return drv_fail(d, TPU_E_DEVICE, "tpu_wait: the bus refused the wait");
    if (k >= drv_ncores(d) || !(cores >> k & 1))
        return drv_fail(d, TPU_E_DEVICE,
                        "tpu_wait: the bus answered for core %u, not one waited for", k);
    *core = k;
    d->core[k].perf = res.perf;
    d->core[k].have_perf = 1;
    res.msg[sizeof res.msg - 1] = '\0';
    return res.status == TPU_OK ? TPU_OK : drv_fail(d, res.status, "%s", res.msg);
}

static uint64_t cycle(const tpu_device *d)
{
    return bus(d)->cycle ? bus(d)->cycle(bus(d)->ctx) : 0;
}

static tpu_status trace_open(tpu_device *d, const char *path, uint64_t from, uint64_t to)
{
    (void)path;
    (void)from;
    (void)to;
    return drv_fail(d, TPU_E_ARG, "tpu_trace_open: a remote device traces at its end");
}

static tpu_status trace_close(tpu_device *d)
{
    (void)d;
    return TPU_OK;
}

/* The bus belongs to the caller. */
static void destroy(tpu_device *d) { (void)d; }

static const drv_ops remote_ops = {
    .destroy = destroy,
    .mem_write = mem_write,
    .mem_read = mem_read,
    .submit = submit,
    .run_until = run_until,
    .outcome = outcome,
    .cycle = cycle,
    .trace_open = trace_open,
    .trace_close = trace_close,
};

tpu_status drv_remote_open(tpu_device *d, const tpu_remote *ops)
{
    d->ops = &remote_ops;
    d->be = (void *)ops;
    tpu_info info;
    if (ops->query(ops->ctx, &info))
        return drv_fail(d, TPU_E_DEVICE, "tpu_open_remote: the bus refused the query");
    if (info.cores == 0 || info.cores > TPUSIM_CORES_MAX || info.mem_size < DRV_ALIGN ||
        info.mem_size > UINT32_MAX || info.version >> 16 != TPU_VERSION >> 16)
        return drv_fail(d, TPU_E_DEVICE,
                        "tpu_open_remote: unsupported device: VERSION 0x%08x, %u cores, %llu bytes",
                        info.version, info.cores, (unsigned long long)info.mem_size);
    d->hw = (tpusim_hwcfg){info.array_n,     info.ub_rows,  info.acc_rows,
                           info.wfifo_tiles, info.iq_depth, info.mem_size};
    d->version = info.version;
    d->mem_latency = info.mem_latency;
    d->mem_bytes_per_cycle = info.mem_bytes_per_cycle;
    d->cores = info.cores;
    return TPU_OK;
}

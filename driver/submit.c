/* submit.c - submissions and waits of tpu.h, whatever the device: the checks, each core's
 * command stream in device memory, and the outcomes in the order the waits ask for them. The
 * device does the rest through its backend (tpu_internal.h): a start runs the firmware, a wait
 * runs the clock until the submissions it waits for stop and then takes their outcomes. */
#include <stdio.h>
#include <string.h>

#include "driver/tpu_internal.h"

static tpu_status check_core(tpu_device *d, uint32_t k, const char *call)
{
    if (k >= drv_ncores(d))
        return drv_fail(d, TPU_E_ARG, "%s: core %u: the device has %u core%s", call, k, d->cores,
                        d->cores == 1 ? "" : "s");
    return TPU_OK;
}

/* Starts core k's control processor on the stream at [addr, addr + bytes) (own: tpu_submit_core
 * allocated it, and the submission frees it). */
static tpu_status begin(tpu_device *d, uint32_t k, uint32_t addr, uint32_t bytes, int own,
                        const char *call)
{
    drv_core *c = &d->core[k];
    c->stream_addr = addr;
    c->own_stream = own;
    const tpu_status st = d->ops->submit(d, k, addr, bytes, call);
    if (st != TPU_OK) {
        if (own)
            tpu_free(d, addr);
        return st;
    }
    c->pending = 1;
    return TPU_OK;
}

tpu_status tpu_submit_core(tpu_device *dev, uint32_t core, const tpu_stream *s)
{
    if (!dev)
        return TPU_E_ARG;
    tpu_status st = check_core(dev, core, "tpu_submit");
    if (st != TPU_OK)
        return st;
    if (!s)
        return drv_fail(dev, TPU_E_ARG, "tpu_submit: NULL stream");
    if (dev->core[core].pending)
        return drv_fail(dev, TPU_E_ARG, "tpu_submit: the previous submission was not waited for");
    size_t bytes;
    const void *data = tpu_stream_data(s, &bytes);
    uint32_t addr;
    if (tpu_alloc(dev, bytes, &addr) != TPU_OK)
        return drv_fail(dev, TPU_E_NOMEM, "tpu_submit: no device memory for the %zu-byte stream",
                        bytes);
    if ((st = tpu_write(dev, addr, data, bytes)) != TPU_OK) {
        tpu_free(dev, addr);
        return st;
    }
    return begin(dev, core, addr, (uint32_t)bytes, 1, "tpu_submit");
}

tpu_status tpu_submit(tpu_device *dev, const tpu_stream *s) { return tpu_submit_core(dev, 0, s); }

tpu_status tpu_submit_at(tpu_device *dev, uint32_t core, uint32_t addr, uint32_t bytes)
{
    if (!dev)
        return TPU_E_ARG;
    const tpu_status st = check_core(dev, core, "tpu_submit_at");
    if (st != TPU_OK)
        return st;
    if (dev->core[core].pending)
        return drv_fail(dev, TPU_E_ARG,
                        "tpu_submit_at: the previous submission was not waited for");
    return begin(dev, core, addr, bytes, 0, "tpu_submit_at");
}

/* ---------------------------------------------------------------- waits -- */

/* A wait's limit on the cycles it runs: max_cycles, 0 for none beyond the budget. */
static uint64_t limit(uint64_t max_cycles) { return max_cycles ? max_cycles : UINT64_MAX; }

/* Ends the submission of a stopped core of `cores` (the backend's end): its outcome, the
 * stream it owns freed, the core free for the next; *core gets it. */
static tpu_status finish(tpu_device *d, uint32_t cores, const char *call, uint32_t *core)
{
    uint32_t k = DRV_NO_CORE;
    const tpu_status st = d->ops->outcome(d, cores, call, &k);
    if (k < drv_ncores(d)) {
        drv_core *c = &d->core[k];
        if (c->own_stream)
            tpu_free(d, c->stream_addr);
        c->pending = c->stopped = 0;
        *core = k;
    }
    return st;
}

tpu_status tpu_wait_core(tpu_device *dev, uint32_t core, uint64_t max_cycles)
{
    if (!dev)
        return TPU_E_ARG;
    const tpu_status st = check_core(dev, core, "tpu_wait");
    if (st != TPU_OK)
        return st;
    if (!dev->core[core].pending)
        return drv_fail(dev, TPU_E_ARG, "tpu_wait: nothing submitted");
    dev->ops->run_until(dev, 1u << core, 0, limit(max_cycles));
    return finish(dev, 1u << core, "tpu_wait", &core);
}

tpu_status tpu_wait(tpu_device *dev, uint64_t max_cycles)
{
    return tpu_wait_core(dev, 0, max_cycles);
}

tpu_status tpu_wait_all(tpu_device *dev, uint64_t max_cycles)
{
    if (!dev)
        return TPU_E_ARG;
    const uint32_t pending = drv_pending(dev);
    if (!pending)
        return drv_fail(dev, TPU_E_ARG, "tpu_wait_all: nothing submitted");
    dev->ops->run_until(dev, pending, 0, limit(max_cycles));
    tpu_status result = TPU_OK;
    char msg[sizeof dev->msg];
    for (uint32_t k = 0; k < drv_ncores(dev); k++) {
        if (!(pending >> k & 1))
            continue;
        uint32_t done = k;
        const tpu_status st = finish(dev, 1u << k, "tpu_wait_all", &done);
        if (st != TPU_OK && result == TPU_OK) {
            result = st;
            memcpy(msg, dev->msg, sizeof msg);
        }
    }
    if (result != TPU_OK)
        memcpy(dev->msg, msg, sizeof msg);
    return result;
}

tpu_status tpu_wait_any(tpu_device *dev, uint64_t max_cycles, uint32_t *core)
{
    if (!dev)
        return TPU_E_ARG;
    const uint32_t pending = drv_pending(dev);
    if (!core || !pending)
        return drv_fail(dev, TPU_E_ARG, "tpu_wait_any: %s",
                        core ? "nothing submitted" : "NULL core");
    *core = 0;
    while (!(pending >> *core & 1))
        ++*core;
    dev->ops->run_until(dev, pending, 1, limit(max_cycles));
    return finish(dev, pending, "tpu_wait", core);
}

void tpu_step(tpu_device *dev, uint64_t cycles)
{
    if (dev)
        dev->ops->run_until(dev, 0, 0, cycles);
}

int tpu_core_done(tpu_device *dev, uint32_t core)
{
    return dev && core < drv_ncores(dev) && dev->core[core].pending && dev->core[core].stopped;
}

uint64_t tpu_cycle(const tpu_device *dev) { return dev ? dev->ops->cycle(dev) : 0; }

/* ------------------------------------------------------------ settings -- */

void tpu_set_progress(tpu_device *dev, tpu_progress_fn fn, void *ctx)
{
    if (!dev)
        return;
    dev->progress = fn;
    dev->progress_ctx = ctx;
}

void tpu_set_budget(tpu_device *dev, uint64_t max_cycles)
{
    if (dev)
        dev->budget = max_cycles < TPU_BUDGET_MAX ? max_cycles : TPU_BUDGET_MAX;
}

/* ------------------------------------------------------------- figures -- */

const char *tpu_counter_name(int counter) { return tpusim_perf_name(counter); }

tpu_status tpu_perf_core(tpu_device *dev, uint32_t core, tpu_perf_report *out)
{
    if (!dev)
        return TPU_E_ARG;
    const tpu_status st = check_core(dev, core, "tpu_perf");
    if (st != TPU_OK)
        return st;
    if (!out)
        return drv_fail(dev, TPU_E_ARG, "tpu_perf: NULL report");
    if (!dev->core[core].have_perf)
        return drv_fail(dev, TPU_E_ARG, "tpu_perf: no submission has finished");
    *out = dev->core[core].perf;
    return TPU_OK;
}

tpu_status tpu_perf(tpu_device *dev, tpu_perf_report *out) { return tpu_perf_core(dev, 0, out); }

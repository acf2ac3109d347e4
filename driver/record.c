/* record.c - a local submission's firmware: its run on the host with a HAL that records the
 * pushes into a feed, and its failures in the driver's words.
 *
 * The firmware's decisions do not depend on the device's timing (it validates the whole stream
 * before pushing anything and reads only the ID registers and the stream), so it runs at once,
 * as the submission starts, and the feed it leaves is replayed on the device clock (sim/tpusim.h
 * "Feeds"): each push reaches the core's queue in the cycle a live control processor would
 * make it. */
#include <string.h>

#include "driver/local.h"
#include "firmware/firmware.h"

typedef struct {
    tpusim *sim;
    uint32_t k;
    tpusim_feed *feed;
    int out_of_memory;
} recorder;

static int rec_push(void *ctx, const uint32_t w[4])
{
    recorder *r = ctx;
    tpusim_insn insn;
    memcpy(insn.w, w, sizeof insn.w);
    if (!r->out_of_memory && tpusim_feed_push(r->feed, &insn))
        r->out_of_memory = 1;
    return 1;
}

static uint32_t rec_reg_read(void *ctx, uint32_t offset)
{
    const recorder *r = ctx;
    return tpusim_core_reg_read(r->sim, r->k, offset);
}

static int rec_mem_read(void *ctx, uint32_t addr, void *dst, uint32_t n)
{
    return tpusim_mem_read(((recorder *)ctx)->sim, addr, dst, n);
}

static void rec_spend(void *ctx, uint32_t cycles)
{
    recorder *r = ctx;
    if (tpusim_feed_wait(r->feed, cycles)) /* past 2^64 cycles */
        r->out_of_memory = 1;
}

/* The status and message of a firmware failure other than FW_ERR_CORE: the failing field and
 * what is wrong with it, as the firmware reports them. */
static tpu_status firmware_error(tpu_device *d, const fw_result *r)
{
    switch (r->code) {
    case FW_ERR_HEADER:
        return drv_fail(d, TPU_E_STREAM, "stream header: field '%s': %s", r->field, r->why);
    case FW_ERR_BUFFER:
        return drv_fail(d, TPU_E_STREAM, "buffer %u: field '%s': %s", r->buf, r->field, r->why);
    case FW_ERR_COMMAND:
        return drv_fail(d, TPU_E_STREAM, "command %u: field '%s': %s", r->cmd, r->field, r->why);
    case FW_ERR_HW:
        return drv_fail(d, TPU_E_DEVICE, "firmware: the core's %s register is not supported (%s)",
                        r->field, r->why);
    default: /* FW_ERR_MEM: the simulator's memory refused a read inside MEM_SIZE */
        return drv_fail(d, TPU_E_DEVICE, "firmware: device memory refused to read the %s",
                        r->field);
    }
}

tpu_status drv_record(tpu_device *d, tpusim *sim, uint32_t k, tpusim_feed *feed, uint32_t addr,
                      uint32_t bytes, const char *call)
{
    tpusim_feed_clear(feed);
    recorder rec = {sim, k, feed, 0};
    const fw_hal hal = {&rec, rec_push, rec_reg_read, rec_mem_read, rec_spend};
    fw_result r = {0};
    fw_run(&hal, addr, bytes, &r);
    char w[64];
    if (rec.out_of_memory)
        return drv_fail(d, TPU_E_NOMEM, "%s: out of host memory recording instructions",
                        drv_where(d, k, call, w, sizeof w));
    if (r.code == FW_ERR_CORE)
        return drv_fail(d, TPU_E_CORE, "%s: the core is stopped with an error (%s)",
                        drv_where(d, k, call, w, sizeof w), tpusim_fault_name(r.core_error));
    return r.code == FW_OK ? TPU_OK : firmware_error(d, &r);
}

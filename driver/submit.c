/* submit.c - submissions, waits and verification of tpu.h: each core's control processor and the
 * clock that runs them.
 *
 * A submission: the stream is copied into freshly allocated device memory (tpu_submit_core) or
 * found there (tpu_submit_at), and the firmware (firmware/firmware.h) runs on the host at once
 * with a HAL that records what it pushes, and the cycles it spends between the pushes, into a
 * feed: its decisions do not depend on the device's timing (it validates the whole stream before
 * pushing anything and reads only the ID registers and the stream). The feed is attached to the
 * core and replayed on the device clock (sim/tpusim.h "Feeds") whenever the driver runs the
 * clock: tpu_wait_core, tpu_wait_all, tpu_step. So submissions to different cores run side by
 * side in simulated time, each edge for edge as if its firmware pushed live.
 *
 * Verification keeps one mirror of device memory for the cores' golden models, at a cost
 * proportional to the bytes that change rather than to the memory size: it is copied from the
 * device once at open; tpu_write and the stream copies write both memories; a submission changes
 * device memory only where its instructions write (their footprints), which sim's
 * tpusim_compare compares after its HALT (its golden model having executed its instructions on
 * the mirror) and which are copied from the device whenever they may differ (a mismatch, an
 * error, a timeout). A tpu_write while submissions are pending goes
 * into the mirror at once unless it falls inside what a pending submission's instructions read
 * or write; there the golden model sees it only afterwards, so it is compared as a change when
 * that submission is verified. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/tpu_internal.h"
#include "firmware/firmware.h"

#define PROGRESS_PERIOD 65536u
#define NO_CORE 0xffffffffu

/* d->cores, which tpu_open and tpu_open_remote bound by TPUSIM_CORES_MAX. */
static uint32_t ncores(const tpu_device *d)
{
    return d->cores < TPUSIM_CORES_MAX ? d->cores : TPUSIM_CORES_MAX;
}

static uint32_t pending_mask(const tpu_device *d)
{
    uint32_t m = 0;
    for (uint32_t k = 0; k < ncores(d); k++)
        m |= (uint32_t)d->core[k].pending << k;
    return m;
}

static uint32_t running_mask(const tpu_device *d)
{
    uint32_t m = 0;
    for (uint32_t k = 0; k < ncores(d); k++)
        m |= (uint32_t)(d->core[k].pending && !d->core[k].stopped) << k;
    return m;
}

/* "tpu_wait", or "tpu_wait: core 3" on a chip: where a message comes from. */
static const char *where(const tpu_device *d, uint32_t k, const char *call, char *buf, size_t n)
{
    if (d->cores == 1 && k == 0)
        return call;
    snprintf(buf, n, "%s: core %u", call, k);
    return buf;
}

tpu_status drv_cores_init(tpu_device *d)
{
    for (uint32_t k = 0; k < ncores(d); k++) {
        drv_core *c = &d->core[k];
        if (!(c->feed = tpusim_feed_new()) ||
            (d->mirror && !(c->golden = tpusim_golden_create_on(&d->hw, d->mirror))))
            return drv_fail(d, TPU_E_NOMEM, "tpu_open: out of host memory");
    }
    return TPU_OK;
}

void drv_cores_free(tpu_device *d)
{
    for (uint32_t k = 0; k < TPUSIM_CORES_MAX; k++) {
        drv_core *c = &d->core[k];
        tpusim_feed_free(c->feed);
        tpusim_golden_destroy(c->golden);
        free(c->touched.v);
        free(c->pending_writes.v);
    }
}

/* ------------------------------------------------------------- progress -- */

void tpu_set_progress(tpu_device *dev, tpu_progress_fn fn, void *ctx)
{
    if (!dev)
        return;
    dev->progress = fn;
    dev->progress_ctx = ctx;
}

/* Calls the progress callback with core k's figures if its period has passed. */
static void tick(tpu_device *d, uint32_t k)
{
    const uint64_t now = tpusim_cycle(d->sim);
    if (!d->progress || now < d->next_progress)
        return;
    d->next_progress = now + PROGRESS_PERIOD;
    const drv_core *c = &d->core[k];
    d->progress(d->progress_ctx,
                tpusim_core_perf(d->sim, k, TPU_PERF_RETIRED) - c->base[TPU_PERF_RETIRED],
                tpusim_feed_taken(c->feed), now - c->t0);
}

/* ---------------------------------------------------------- the record -- */

typedef struct {
    tpu_device *d;
    uint32_t k;
    int out_of_memory;
} recorder;

static int rec_push(void *ctx, const uint32_t w[4])
{
    recorder *r = ctx;
    tpusim_insn insn;
    memcpy(insn.w, w, sizeof insn.w);
    if (!r->out_of_memory && tpusim_feed_push(r->d->core[r->k].feed, &insn))
        r->out_of_memory = 1;
    return 1;
}

static uint32_t rec_reg_read(void *ctx, uint32_t offset)
{
    const recorder *r = ctx;
    return tpusim_core_reg_read(r->d->sim, r->k, offset);
}

static int rec_mem_read(void *ctx, uint32_t addr, void *dst, uint32_t n)
{
    return tpusim_mem_read(((recorder *)ctx)->d->sim, addr, dst, n);
}

static void rec_spend(void *ctx, uint32_t cycles)
{
    recorder *r = ctx;
    if (tpusim_feed_wait(r->d->core[r->k].feed, cycles)) /* past 2^64 cycles */
        r->out_of_memory = 1;
}

static int block_order(const void *a, const void *b)
{
    const uint32_t x = ((const block *)a)->addr, y = ((const block *)b)->addr;
    return (x > y) - (x < y);
}

/* Core k's `touched`: the memory its instructions read or write (the ranges covering their
 * footprints' memory accesses), sorted and merged. */
static int collect_touched(tpu_device *d, drv_core *c)
{
    block_list *l = &c->touched;
    l->n = 0;
    const tpusim_insn *insns = tpusim_feed_insns(c->feed);
    const size_t n = tpusim_feed_size(c->feed);
    for (size_t i = 0; i < n; i++) {
        const tpusim_fields f = tpusim_decode(&insns[i]);
        tpusim_access acc[TPU_FOOTPRINT_MAX];
        const int k = tpusim_footprint(&f, d->hw.array_n, acc);
        for (int j = 0; j < k; j++) {
            const uint64_t lo = acc[j].first, end = tpusim_access_end(&acc[j]);
            if (acc[j].space != TPU_SPACE_MEM || lo >= d->hw.mem_size || end == lo)
                continue;
            const uint64_t hi = end < d->hw.mem_size ? end : d->hw.mem_size;
            if (drv_list_insert(l, l->n, (block){(uint32_t)lo, (uint32_t)(hi - lo)}))
                return -1;
        }
    }
    if (l->n > 1)
        qsort(l->v, l->n, sizeof *l->v, block_order);
    size_t out = 0;
    for (size_t i = 0; i < l->n; i++) {
        block *last = out ? &l->v[out - 1] : NULL;
        if (last && l->v[i].addr <= (uint64_t)last->addr + last->size) {
            const uint64_t end = (uint64_t)l->v[i].addr + l->v[i].size;
            if (end > (uint64_t)last->addr + last->size)
                last->size = (uint32_t)(end - last->addr);
        } else {
            l->v[out++] = l->v[i];
        }
    }
    l->n = out;
    return 0;
}

/* Does [addr, addr + bytes) meet a block of the sorted, disjoint list l? */
static int meets(const block_list *l, uint32_t addr, uint64_t bytes)
{
    const size_t i = drv_list_lower(l, (uint32_t)(addr + bytes)); /* <= mem_size */
    return i > 0 && (uint64_t)l->v[i - 1].addr + l->v[i - 1].size > addr;
}

void drv_mem_write(tpu_device *d, uint32_t addr, const void *src, size_t bytes)
{
    tpusim_mem_write(d->sim, addr, src, bytes); /* in range: cannot fail */
    if (!d->mirror)
        return;
    int hit = 0;
    const block b = {addr, (uint32_t)bytes}; /* bytes <= mem_size < 2^32 */
    for (uint32_t k = 0; k < ncores(d); k++) {
        drv_core *c = &d->core[k];
        if (!c->pending || !meets(&c->touched, addr, bytes))
            continue;
        hit = 1;
        if (drv_list_insert(&c->pending_writes, drv_list_lower(&c->pending_writes, addr), b))
            c->mirror_lost = 1;
    }
    if (!hit)
        memcpy(d->mirror + addr, src, bytes);
}

/* ---------------------------------------------------------- verification -- */

/* tpusim_block_fn: the mirror takes the device's bytes. */
static void copy_block(void *ctx, uint64_t addr, uint64_t size, size_t insn)
{
    tpu_device *d = ctx;
    (void)insn;
    if (addr < d->hw.mem_size)
        tpusim_mem_read(d->sim, addr, d->mirror + addr,
                        size < d->hw.mem_size - addr ? size : d->hw.mem_size - addr);
}

/* Where core c's submission can have made device and mirror differ (a mismatch, an error, a
 * timeout), the mirror takes the device's bytes: its instructions' memory writes and the
 * tpu_writes made inside what it touches while it was pending; all of memory if a pending write
 * went unrecorded. */
static void copy_changes(tpu_device *d, const drv_core *c)
{
    if (c->mirror_lost) {
        copy_block(d, 0, d->hw.mem_size, 0);
        return;
    }
    for (size_t i = 0; i < c->pending_writes.n; i++)
        copy_block(d, c->pending_writes.v[i].addr, c->pending_writes.v[i].size, 0);
    tpusim_for_each_write(tpusim_feed_insns(c->feed), tpusim_feed_size(c->feed), d->hw.array_n,
                          TPU_SPACE_MEM, copy_block, d);
}

static int in_list(const block_list *l, uint64_t addr)
{
    for (size_t i = 0; i < l->n; i++)
        if (addr - l->v[i].addr < l->v[i].size)
            return 1;
    return 0;
}

/* Core k's golden model runs its recorded instructions on the mirror; the device must hold the
 * same bytes wherever they (or a tpu_write while they were pending) can have changed memory
 * (tpusim_compare). */
static tpu_status verify(tpu_device *d, uint32_t k)
{
    drv_core *c = &d->core[k];
    tpusim_golden_reset(c->golden);
    const tpusim_insn *insns = tpusim_feed_insns(c->feed);
    const size_t n = tpusim_feed_size(c->feed);
    size_t at;
    const int code = tpusim_golden_run(c->golden, insns, n, &at);
    char text[512], w[64];
    if (code != TPU_FAULT_NONE)
        return drv_fail(d, TPU_E_MISMATCH,
                        "%s: the device halted but the golden model stops with %s at "
                        "instruction %zu: %s",
                        where(d, k, "verify", w, sizeof w), tpusim_fault_name((uint32_t)code), at,
                        tpusim_disasm(&insns[at], text, sizeof text));
    tpusim_range *pending = malloc((c->pending_writes.n + 1) * sizeof *pending);
    if (!pending)
        return drv_fail(d, TPU_E_NOMEM, "%s: out of host memory",
                        where(d, k, "verify", w, sizeof w));
    for (size_t i = 0; i < c->pending_writes.n; i++)
        pending[i] = (tpusim_range){c->pending_writes.v[i].addr, c->pending_writes.v[i].size};
    const tpusim_compare_spec spec = {c->golden,           insns, at, c->mirror_lost, pending,
                                      c->pending_writes.n, 0};
    uint64_t addr;
    const int64_t diffs = tpusim_compare(d->sim, &spec, &addr, text, sizeof text);
    free(pending);
    if (!diffs)
        return TPU_OK;
    return drv_fail(d, diffs < 0 ? TPU_E_NOMEM : TPU_E_MISMATCH, "%s: %s%s",
                    where(d, k, "verify", w, sizeof w), text,
                    diffs > 0 && in_list(&c->pending_writes, addr)
                        ? "; tpu_write changed it while the work was pending"
                        : "");
}

/* ------------------------------------------------------------ the clock -- */

/* Core k has stopped (result: enum tpusim_result): its figures as they are now. */
static void note_stop(tpu_device *d, uint32_t k, int result)
{
    drv_core *c = &d->core[k];
    c->stopped = 1;
    c->result = result;
    c->stop_cycle = tpusim_cycle(d->sim);
    for (int i = 0; i < TPU_PERF_COUNT; i++)
        c->stop[i] = tpusim_core_perf(d->sim, k, i);
    c->stall_stop = tpusim_mem_stall(d->sim, k);
    c->fw_edges = tpusim_feed_edges(c->feed);
    if (result == TPUSIM_ERROR) {
        c->error_code = tpusim_core_reg_read(d->sim, k, TPU_CSR_ERROR_CODE);
        c->error_pc = tpusim_core_reg_read(d->sim, k, TPU_CSR_ERROR_PC);
        d->errored |= 1u << k;
    }
}

/* Core k ran out of cycles (its budget, or a wait's max_cycles): every running submission ends
 * with TPUSIM_TIMEOUT and the device is reset, which stops them all. */
static void time_out(tpu_device *d, uint32_t k)
{
    const uint64_t after = tpusim_cycle(d->sim) - d->core[k].t0;
    for (uint32_t j = 0; j < ncores(d); j++) {
        drv_core *c = &d->core[j];
        if (!c->pending || c->stopped)
            continue;
        note_stop(d, j, TPUSIM_TIMEOUT);
        c->timeout_by = k;
        c->timeout_after = after;
    }
    tpusim_reset(d->sim);
    d->errored = 0;
}

/* Runs the device until every core in `until` has stopped (any: one of them) or `cycles` edges
 * have passed (until 0: those edges), noting when each running core stops and timing out a core
 * that exhausts its budget. Progress reports follow core `shown` (NO_CORE: none). */
static void advance(tpu_device *d, uint32_t until, uint64_t cycles, uint32_t shown, int any)
{
    const double t = drv_now();
    const uint32_t ran = running_mask(d);
    const uint64_t start = tpusim_cycle(d->sim);
    for (;;) {
        const uint32_t running = running_mask(d);
        const uint64_t now = tpusim_cycle(d->sim);
        if ((until && (any ? (until & running) != until : !(until & running))) ||
            now - start >= cycles)
            break;
        uint64_t slice = cycles - (now - start);
        uint32_t late = NO_CORE;
        for (uint32_t k = 0; k < ncores(d) && late == NO_CORE; k++) {
            if (!(running >> k & 1))
                continue;
            if (d->core[k].budget_end <= now)
                late = k;
            else if (d->core[k].budget_end - now < slice)
                slice = d->core[k].budget_end - now;
        }
        if (late != NO_CORE) {
            time_out(d, late);
            continue;
        }
        if (shown != NO_CORE && (running >> shown & 1) && d->progress) {
            tick(d, shown); /* after it, next_progress lies ahead */
            if (d->next_progress - now < slice)
                slice = d->next_progress - now;
        }
        if (!running) {
            tpusim_step(d->sim, slice);
            continue;
        }
        int results[TPUSIM_CORES_MAX];
        const uint32_t stopped = (uint32_t)tpusim_run_feeds(d->sim, running, slice, results);
        for (uint32_t k = 0; k < ncores(d); k++)
            if (stopped >> k & 1)
                note_stop(d, k, results[k]);
    }
    const double wall = drv_now() - t;
    for (uint32_t k = 0; k < ncores(d); k++)
        if (ran >> k & 1)
            d->core[k].wall += wall;
}

void tpu_step(tpu_device *dev, uint64_t cycles)
{
    if (dev && dev->sim)
        advance(dev, 0, cycles, NO_CORE, 0);
}

int tpu_core_done(tpu_device *dev, uint32_t core)
{
    return dev && core < ncores(dev) && dev->core[core].pending && dev->core[core].stopped;
}

uint64_t tpu_cycle(const tpu_device *dev)
{
    if (!dev)
        return 0;
    if (dev->remote)
        return dev->remote->cycle ? dev->remote->cycle(dev->remote->ctx) : 0;
    return tpusim_cycle(dev->sim);
}

/* ---------------------------------------------------------- the outcome -- */

/* The message for core k stopped with an error: code, ERROR_PC and that instruction. */
static tpu_status core_error(tpu_device *d, uint32_t k, const char *call)
{
    const drv_core *c = &d->core[k];
    const uint32_t i = c->error_pc - c->pc_base;
    char text[160] = "(not pushed by this submission)", w[64];
    if (i < tpusim_feed_size(c->feed))
        tpusim_disasm(&tpusim_feed_insns(c->feed)[i], text, sizeof text);
    return drv_fail(d, TPU_E_CORE,
                    "%s: core error %s (%u) at ERROR_PC %u (instruction %u of the "
                    "submission): %s",
                    where(d, k, call, w, sizeof w), tpusim_fault_name(c->error_code), c->error_code,
                    c->error_pc, i, text);
}

static tpu_status timeout_error(tpu_device *d, uint32_t k, const char *call)
{
    const drv_core *c = &d->core[k];
    char w[64];
    if (c->timeout_by != k)
        return drv_fail(d, TPU_E_TIMEOUT,
                        "%s: the device was reset when core %u's submission ran out of cycles "
                        "(after %llu)",
                        where(d, k, call, w, sizeof w), c->timeout_by,
                        (unsigned long long)c->timeout_after);
    return drv_fail(d, TPU_E_TIMEOUT,
                    "%s: no HALT within %llu cycles (%llu of %zu instructions retired); the "
                    "device was reset",
                    where(d, k, call, w, sizeof w), (unsigned long long)c->timeout_after,
                    (unsigned long long)(c->stop[TPU_PERF_RETIRED] - c->base[TPU_PERF_RETIRED]),
                    tpusim_feed_size(c->feed));
}

/* Ends core k's stopped submission: its figures, its verification (after a HALT, with verify
 * on), the mirror brought back to the device where it may differ, the stream freed, and a reset
 * once no core is pending when one stopped with an error. */
static tpu_status finish(tpu_device *d, uint32_t k, const char *call)
{
    drv_core *c = &d->core[k];
    tpu_perf_report *p = &c->perf;
    memset(p, 0, sizeof *p);
    p->cycles = c->stop_cycle - c->t0;
    for (int i = 0; i < TPU_PERF_COUNT; i++)
        p->counters[i] = c->stop[i] - c->base[i];
    p->firmware_cycles = c->fw_edges;
    p->instructions = tpusim_feed_taken(c->feed);
    p->mem_stall_cycles = c->stall_stop - c->stall_base;
    p->wall_seconds = c->wall;
    c->have_perf = 1;
    tpusim_core_feed(d->sim, k, NULL);
    tpu_status st = TPU_OK;
    if (c->result == TPUSIM_ERROR)
        st = core_error(d, k, call);
    else if (c->result == TPUSIM_TIMEOUT)
        st = timeout_error(d, k, call);
    else if (d->mirror)
        p->verified = (st = verify(d, k)) == TPU_OK;
    if (d->mirror && st != TPU_OK)
        copy_changes(d, c);
    c->pending_writes.n = 0;
    c->mirror_lost = 0;
    if (c->own_stream)
        tpu_free(d, c->stream_addr);
    c->pending = c->stopped = 0;
    if (d->errored && !pending_mask(d)) {
        tpusim_reset(d->sim);
        d->errored = 0;
    }
    return st;
}

/* -------------------------------------------------- firmware messages -- */

/* The status and message for a firmware failure other than FW_ERR_CORE: the failing field and
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

/* ---------------------------------------------------------- submissions -- */

static tpu_status check_core(tpu_device *d, uint32_t k, const char *call)
{
    if (k >= ncores(d))
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
    char w[64];
    if (d->remote) {
        if (d->remote->start(d->remote->ctx, k, addr, bytes)) {
            if (own)
                tpu_free(d, addr);
            return drv_fail(d, TPU_E_DEVICE, "%s: the bus refused the start",
                            where(d, k, call, w, sizeof w));
        }
        c->pending = 1;
        return TPU_OK;
    }
    tpu_status st = TPU_OK;
    if (d->errored >> k & 1) {
        if (pending_mask(d))
            st = drv_fail(d, TPU_E_ARG,
                          "%s: the core stopped with an error and is reset once no other core's "
                          "submission is pending",
                          where(d, k, call, w, sizeof w));
        else {
            tpusim_reset(d->sim);
            d->errored = 0;
        }
    }
    if (st == TPU_OK)
        st = drv_trace_start(d, tpusim_cycle(d->sim));
    tpusim_feed_clear(c->feed);
    fw_result r = {0};
    if (st == TPU_OK) {
        recorder rec = {d, k, 0};
        const fw_hal hal = {&rec, rec_push, rec_reg_read, rec_mem_read, rec_spend};
        fw_run(&hal, addr, bytes, &r);
        if (rec.out_of_memory)
            st = drv_fail(d, TPU_E_NOMEM, "%s: out of host memory recording instructions",
                          where(d, k, call, w, sizeof w));
        else if (r.code == FW_ERR_CORE)
            st = drv_fail(d, TPU_E_CORE, "%s: the core is stopped with an error (%s)",
                          where(d, k, call, w, sizeof w), tpusim_fault_name(r.core_error));
        else if (r.code != FW_OK)
            st = firmware_error(d, &r);
        if (st == TPU_OK && d->mirror && collect_touched(d, c))
            st = drv_fail(d, TPU_E_NOMEM, "%s: out of host memory", call);
    }
    if (st != TPU_OK) {
        if (own)
            tpu_free(d, addr);
        return st;
    }
    c->t0 = tpusim_cycle(d->sim);
    c->budget_end = d->budget ? c->t0 + d->budget : UINT64_MAX;
    c->pc_base = tpusim_core_reg_read(d->sim, k, TPU_CSR_INSN_COUNT);
    for (int i = 0; i < TPU_PERF_COUNT; i++)
        c->base[i] = tpusim_core_perf(d->sim, k, i);
    c->stall_base = tpusim_mem_stall(d->sim, k);
    c->wall = 0;
    c->pending = 1;
    c->stopped = 0;
    d->next_progress = c->t0 + PROGRESS_PERIOD;
    tpusim_core_feed(d->sim, k, c->feed);
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

/* A remote device's wait for a core of the mask: its outcome, as the device side reported it. */
static tpu_status remote_wait(tpu_device *d, uint32_t cores, uint32_t *core)
{
    tpu_remote_result res;
    memset(&res, 0, sizeof res);
    uint32_t k = NO_CORE;
    const int rc = d->remote->wait(d->remote->ctx, cores, &k, &res);
    if (!rc && (k >= ncores(d) || !(cores >> k & 1)))
        return drv_fail(d, TPU_E_DEVICE,
                        "tpu_wait: the bus answered for core %u, not one waited for", k);
    if (rc)
        return drv_fail(d, TPU_E_DEVICE, "tpu_wait: the bus refused the wait");
    *core = k;
    drv_core *c = &d->core[k];
    c->pending = 0;
    if (c->own_stream)
        tpu_free(d, c->stream_addr);
    c->perf = res.perf;
    c->have_perf = 1;
    res.msg[sizeof res.msg - 1] = '\0';
    return res.status == TPU_OK ? TPU_OK : drv_fail(d, res.status, "%s", res.msg);
}

tpu_status tpu_wait_core(tpu_device *dev, uint32_t core, uint64_t max_cycles)
{
    if (!dev)
        return TPU_E_ARG;
    const tpu_status st = check_core(dev, core, "tpu_wait");
    if (st != TPU_OK)
        return st;
    drv_core *c = &dev->core[core];
    if (!c->pending)
        return drv_fail(dev, TPU_E_ARG, "tpu_wait: nothing submitted");
    if (dev->remote)
        return remote_wait(dev, 1u << core, &core);
    advance(dev, 1u << core, max_cycles ? max_cycles : UINT64_MAX, core, 0);
    if (!c->stopped)
        time_out(dev, core);
    return finish(dev, core, "tpu_wait");
}

tpu_status tpu_wait(tpu_device *dev, uint64_t max_cycles)
{
    return tpu_wait_core(dev, 0, max_cycles);
}

tpu_status tpu_wait_all(tpu_device *dev, uint64_t max_cycles)
{
    if (!dev)
        return TPU_E_ARG;
    const uint32_t pending = pending_mask(dev);
    if (!pending)
        return drv_fail(dev, TPU_E_ARG, "tpu_wait_all: nothing submitted");
    uint32_t first = NO_CORE;
    for (uint32_t k = 0; k < ncores(dev); k++)
        if (first == NO_CORE && (pending >> k & 1))
            first = k;
    if (!dev->remote) {
        advance(dev, pending, max_cycles ? max_cycles : UINT64_MAX, first, 0);
        for (uint32_t k = 0; k < ncores(dev); k++)
            if ((pending >> k & 1) && !dev->core[k].stopped) {
                time_out(dev, k);
                break;
            }
    }
    tpu_status result = TPU_OK;
    char msg[sizeof dev->msg];
    for (uint32_t k = 0; k < ncores(dev); k++) {
        if (!(pending >> k & 1))
            continue;
        uint32_t done = k;
        const tpu_status st =
            dev->remote ? remote_wait(dev, 1u << k, &done) : finish(dev, k, "tpu_wait_all");
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
    const uint32_t pending = pending_mask(dev);
    if (!core || !pending)
        return drv_fail(dev, TPU_E_ARG, "tpu_wait_any: %s",
                        core ? "nothing submitted" : "NULL core");
    uint32_t k = 0;
    while (!(pending >> k & 1))
        k++;
    if (!dev->remote) {
        const uint32_t running = running_mask(dev);
        if (running == pending) {
            advance(dev, running, max_cycles ? max_cycles : UINT64_MAX, k, 1);
            if (running_mask(dev) == pending)
                time_out(dev, k);
        }
        while (!dev->core[k].pending || !dev->core[k].stopped)
            k++;
    }
    *core = k;
    return dev->remote ? remote_wait(dev, pending, core) : finish(dev, k, "tpu_wait");
}

void tpu_set_budget(tpu_device *dev, uint64_t max_cycles)
{
    if (dev)
        dev->budget = max_cycles < TPU_BUDGET_MAX ? max_cycles : TPU_BUDGET_MAX;
}

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

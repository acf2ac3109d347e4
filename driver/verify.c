/* verify.c - a local device's verification (tpu_open with verify): each core's golden model on
 * one mirror of device memory, and the comparison of a submission with it (sim's
 * tpusim_compare).
 *
 * The cost is proportional to the bytes that change rather than to the memory size: the mirror
 * is copied from the device once, at open; host writes go into both memories; a submission
 * changes device memory only where its instructions write (their footprints), which
 * tpusim_compare compares after its HALT (its golden model having executed its instructions on
 * the mirror) and which are copied from the device whenever they may differ (a mismatch, an
 * error, a timeout). A host write while submissions are under way goes into the mirror at once
 * unless it falls inside what one of their instructions read or write; there the golden model
 * sees it only afterwards, so it is compared as a change when that submission is verified. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/local.h"

/* One core's share: its golden model and what its submission under way touches. */
typedef struct {
    int active;                /* a submission is under way (drv_verify_start .. _end) */
    tpusim_golden *golden;     /* its own model on the shared mirror */
    block_list touched;        /* the ranges its instructions read or write */
    block_list pending_writes; /* host writes inside `touched` while it is under way */
    int mirror_lost;           /* a pending write went unrecorded: compare and copy all */
} vcore;

struct drv_verify {
    tpusim *sim;
    tpusim_hwcfg hw;
    uint8_t *mirror; /* the golden models' memory */
    uint32_t cores;
    vcore core[TPUSIM_CORES_MAX];
};

drv_verify *drv_verify_new(tpusim *sim, const tpusim_hwcfg *hw, uint32_t cores)
{
    drv_verify *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    v->sim = sim;
    v->hw = *hw;
    v->cores = cores;
    if (!(v->mirror = malloc(hw->mem_size))) {
        free(v);
        return NULL;
    }
    /* The only full copy: from here on the mirror follows every change. */
    tpusim_mem_read(sim, 0, v->mirror, hw->mem_size);
    for (uint32_t k = 0; k < cores; k++)
        if (!(v->core[k].golden = tpusim_golden_create_on(hw, v->mirror))) {
            drv_verify_free(v);
            return NULL;
        }
    return v;
}

void drv_verify_free(drv_verify *v)
{
    if (!v)
        return;
    for (uint32_t k = 0; k < v->cores; k++) {
        tpusim_golden_destroy(v->core[k].golden);
        free(v->core[k].touched.v);
        free(v->core[k].pending_writes.v);
    }
    free(v->mirror);
    free(v);
}

static int block_order(const void *a, const void *b)
{
    const uint32_t x = ((const block *)a)->addr, y = ((const block *)b)->addr;
    return (x > y) - (x < y);
}

int drv_verify_start(drv_verify *v, uint32_t k, const tpusim_feed *feed)
{
    /* The memory the instructions read or write (the ranges covering their footprints' memory
     * accesses), sorted and merged. */
    block_list *l = &v->core[k].touched;
    l->n = 0;
    const tpusim_insn *insns = tpusim_feed_insns(feed);
    const size_t n = tpusim_feed_size(feed);
    for (size_t i = 0; i < n; i++) {
        const tpusim_fields f = tpusim_decode(&insns[i]);
        tpusim_access acc[TPU_FOOTPRINT_MAX];
        const int count = tpusim_footprint(&f, v->hw.array_n, acc);
        for (int j = 0; j < count; j++) {
            const uint64_t lo = acc[j].first, end = tpusim_access_end(&acc[j]);
            if (acc[j].space != TPU_SPACE_MEM || lo >= v->hw.mem_size || end == lo)
                continue;
            const uint64_t hi = end < v->hw.mem_size ? end : v->hw.mem_size;
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
    v->core[k].active = 1;
    return 0;
}

/* Does [addr, addr + bytes) meet a block of the sorted, disjoint list l? */
static int meets(const block_list *l, uint32_t addr, uint64_t bytes)
{
    const size_t i = drv_list_lower(l, (uint32_t)(addr + bytes)); /* <= mem_size */
    return i > 0 && (uint64_t)l->v[i - 1].addr + l->v[i - 1].size > addr;
}

void drv_verify_write(drv_verify *v, uint32_t addr, const void *src, size_t bytes)
{
    int hit = 0;
    const block b = {addr, (uint32_t)bytes}; /* bytes <= mem_size < 2^32 */
    for (uint32_t k = 0; k < v->cores; k++) {
        vcore *c = &v->core[k];
        if (!c->active || !meets(&c->touched, addr, bytes))
            continue;
        hit = 1;
        if (drv_list_insert(&c->pending_writes, drv_list_lower(&c->pending_writes, addr), b))
            c->mirror_lost = 1;
    }
    if (!hit)
        memcpy(v->mirror + addr, src, bytes);
}

/* tpusim_block_fn: the mirror takes the device's bytes. */
static void copy_block(void *ctx, uint64_t addr, uint64_t size, size_t insn)
{
    drv_verify *v = ctx;
    (void)insn;
    if (addr < v->hw.mem_size)
        tpusim_mem_read(v->sim, addr, v->mirror + addr,
                        size < v->hw.mem_size - addr ? size : v->hw.mem_size - addr);
}

/* Where core c's submission can have made device and mirror differ, the mirror takes the
 * device's bytes: its instructions' memory writes and the host writes made inside what it
 * touches while it was under way; all of memory if a pending write went unrecorded. */
static void copy_changes(drv_verify *v, const vcore *c, const tpusim_feed *feed)
{
    if (c->mirror_lost) {
        copy_block(v, 0, v->hw.mem_size, 0);
        return;
    }
    for (size_t i = 0; i < c->pending_writes.n; i++)
        copy_block(v, c->pending_writes.v[i].addr, c->pending_writes.v[i].size, 0);
    tpusim_for_each_write(tpusim_feed_insns(feed), tpusim_feed_size(feed), v->hw.array_n,
                          TPU_SPACE_MEM, copy_block, v);
}

static int in_list(const block_list *l, uint64_t addr)
{
    for (size_t i = 0; i < l->n; i++)
        if (addr - l->v[i].addr < l->v[i].size)
            return 1;
    return 0;
}

/* Core k's golden model runs its recorded instructions on the mirror; the device must hold the
 * same bytes wherever they (or a host write while they were under way) can have changed memory
 * (tpusim_compare). */
static tpu_status compare(tpu_device *d, drv_verify *v, uint32_t k, const tpusim_feed *feed)
{
    vcore *c = &v->core[k];
    tpusim_golden_reset(c->golden);
    const tpusim_insn *insns = tpusim_feed_insns(feed);
    const size_t n = tpusim_feed_size(feed);
    size_t at;
    const int code = tpusim_golden_run(c->golden, insns, n, &at);
    char text[512], w[64];
    if (code != TPU_FAULT_NONE)
        return drv_fail(d, TPU_E_MISMATCH,
                        "%s: the device halted but the golden model stops with %s at "
                        "instruction %zu: %s",
                        drv_where(d, k, "verify", w, sizeof w), tpusim_fault_name((uint32_t)code),
                        at, tpusim_disasm(&insns[at], text, sizeof text));
    tpusim_range *pending = malloc((c->pending_writes.n + 1) * sizeof *pending);
    if (!pending)
        return drv_fail(d, TPU_E_NOMEM, "%s: out of host memory",
                        drv_where(d, k, "verify", w, sizeof w));
    for (size_t i = 0; i < c->pending_writes.n; i++)
        pending[i] = (tpusim_range){c->pending_writes.v[i].addr, c->pending_writes.v[i].size};
    const tpusim_compare_spec spec = {c->golden,           insns, at, c->mirror_lost, pending,
                                      c->pending_writes.n, 0};
    uint64_t addr;
    const int64_t diffs = tpusim_compare(v->sim, &spec, &addr, text, sizeof text);
    free(pending);
    if (!diffs)
        return TPU_OK;
    return drv_fail(d, diffs < 0 ? TPU_E_NOMEM : TPU_E_MISMATCH, "%s: %s%s",
                    drv_where(d, k, "verify", w, sizeof w), text,
                    diffs > 0 && in_list(&c->pending_writes, addr)
                        ? "; tpu_write changed it while the work was pending"
                        : "");
}

tpu_status drv_verify_end(tpu_device *d, drv_verify *v, uint32_t k, const tpusim_feed *feed,
                          tpu_status st)
{
    vcore *c = &v->core[k];
    if (st == TPU_OK)
        st = compare(d, v, k, feed);
    if (st != TPU_OK)
        copy_changes(v, c, feed);
    c->pending_writes.n = 0;
    c->mirror_lost = 0;
    c->active = 0;
    return st;
}

/* tpu.c - the host driver of tpu.h on the cycle-accurate simulator (sim/tpusim.h).
 *
 * A submission: the stream is copied into freshly allocated device memory, the firmware
 * (firmware/firmware.h) runs on the host with its HAL bound to the simulator, so its time and its
 * pushes pass on the device clock, and every instruction it pushes is recorded. tpu_wait runs the
 * device to the HALT; with verify on it then replays the recorded instructions on the golden model
 * and compares what they can have written.
 *
 * Verification keeps the golden model's memory equal to the device's between submissions, at a
 * cost proportional to the bytes that change rather than to the memory size: it is copied from
 * the device once at open; tpu_write and the stream copy write both memories; a submission
 * changes device memory only at its WR_HOST destinations (and where tpu_write wrote while it was
 * pending), which are compared after a HALT and copied from the device whenever they may differ
 * (a mismatch, an error, a timeout). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, strdup */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver/tpu.h"
#include "firmware/firmware.h"
#include "sim/gtkw.h"
#include "sim/tpusim.h"

_Static_assert(TPU_MEM_LATENCY_MAX == TPUSIM_MEM_LATENCY_MAX, "the simulator's limit");
_Static_assert(TPU_MEM_BANDWIDTH_MAX == TPUSIM_MEM_BANDWIDTH_MAX, "the simulator's limit");

#define ALIGN 64u
#define DEFAULT_ARRAY_N 16u
#define DEFAULT_MEM_SIZE (64ull << 20)
#define PROGRESS_PERIOD 65536u
#define COMPARE_CHUNK 4096u /* bytes of device memory compared at a time */

/* A device memory range [addr, addr + size). */
typedef struct {
    uint32_t addr, size;
} block;

/* Blocks sorted by address. */
typedef struct {
    block *v;
    size_t n, cap;
} block_list;

struct tpu_device {
    tpusim *sim;
    tpu_hwcfg hw;
    uint32_t version, mem_latency, mem_bytes_per_cycle;
    block_list free_blocks, used_blocks; /* the allocator: first fit, coalescing */
    tpu_golden *golden;                  /* verify on: mirrors device memory (see the top) */
    block_list pending_writes;           /* tpu_write ranges while a submission is pending */
    int mirror_lost; /* a pending write went unrecorded: compare and copy all of memory */
    char msg[1024];

    tpu_progress_fn progress;
    void *progress_ctx;

    char *trace_path; /* a trace waiting for the next submit */
    uint64_t trace_from, trace_to;
    char *traced_path;     /* the trace a submit opened: it gets a save file when closed */
    uint64_t trace_cycles; /* the cycles the last closed trace holds */

    /* The current (pending) or last submission. */
    int pending;
    uint32_t stream_addr;
    uint32_t pc_base; /* INSN_COUNT at submit: ERROR_PC - pc_base indexes insns */
    tpu_insn *insns;  /* what the firmware pushed */
    size_t n_insns, cap_insns;
    /* The firmware is let through the rest of its schedule without the device when recording
     * ran out of host memory or the cycle budget ran out; tpu_submit then fails. */
    enum { RUNNING, OUT_OF_MEMORY, OUT_OF_CYCLES } abandoned;
    uint64_t budget;     /* tpu_set_budget: cycles per submission, 0 = none */
    uint64_t budget_end; /* absolute cycle where the current submission's budget ends */
    uint64_t t0, next_progress, fw_cycles;
    double wall;
    tpu_perf_report perf;
    int have_perf;
};

static tpu_status fail(tpu_device *d, tpu_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static tpu_status fail(tpu_device *d, tpu_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
    return s;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const char *tpu_status_name(tpu_status s)
{
    static const char *const names[] = {
        "TPU_OK",     "TPU_E_ARG",     "TPU_E_NOMEM",    "TPU_E_DEVICE", "TPU_E_STREAM",
        "TPU_E_CORE", "TPU_E_TIMEOUT", "TPU_E_MISMATCH", "TPU_E_IO",
    };
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

/* ----------------------------------------------------------- allocator -- */

static int list_insert(block_list *l, size_t i, block b)
{
    if (l->n == l->cap) {
        const size_t cap = l->cap ? 2 * l->cap : 16;
        block *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    memmove(&l->v[i + 1], &l->v[i], (l->n - i) * sizeof *l->v);
    l->v[i] = b;
    l->n++;
    return 0;
}

static void list_remove(block_list *l, size_t i)
{
    memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof *l->v);
    l->n--;
}

/* Index of the first block at or above addr. */
static size_t list_lower(const block_list *l, uint32_t addr)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (l->v[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

tpu_status tpu_alloc(tpu_device *dev, uint64_t bytes, uint32_t *addr)
{
    if (!dev)
        return TPU_E_ARG;
    if (!addr || bytes == 0)
        return fail(dev, TPU_E_ARG, "tpu_alloc: %s", addr ? "zero bytes" : "NULL addr");
    if (bytes > dev->hw.mem_size)
        return fail(dev, TPU_E_NOMEM, "tpu_alloc: %llu bytes is more than device memory",
                    (unsigned long long)bytes);
    const uint64_t size = (bytes + ALIGN - 1) / ALIGN * ALIGN;
    uint64_t free_total = 0, largest = 0;
    for (size_t i = 0; i < dev->free_blocks.n; i++) {
        block *f = &dev->free_blocks.v[i];
        if (f->size >= size) {
            const block b = {f->addr, (uint32_t)size};
            if (list_insert(&dev->used_blocks, list_lower(&dev->used_blocks, b.addr), b))
                return fail(dev, TPU_E_NOMEM, "tpu_alloc: out of host memory");
            f->addr += b.size;
            f->size -= b.size;
            if (f->size == 0)
                list_remove(&dev->free_blocks, i);
            *addr = b.addr;
            return TPU_OK;
        }
        free_total += f->size;
        if (f->size > largest)
            largest = f->size;
    }
    return fail(dev, TPU_E_NOMEM,
                "tpu_alloc: no free block of %llu bytes (%llu bytes free, largest block %llu)",
                (unsigned long long)size, (unsigned long long)free_total,
                (unsigned long long)largest);
}

tpu_status tpu_free(tpu_device *dev, uint32_t addr)
{
    if (!dev)
        return TPU_E_ARG;
    block_list *used = &dev->used_blocks, *fl = &dev->free_blocks;
    const size_t u = list_lower(used, addr);
    if (u == used->n || used->v[u].addr != addr)
        return fail(dev, TPU_E_ARG, "tpu_free: 0x%x is not an allocated block", addr);
    const block b = used->v[u];
    /* Merge with the free neighbours; a new list entry only when neither touches. */
    const size_t p = list_lower(fl, addr);
    const int prev = p > 0 && fl->v[p - 1].addr + fl->v[p - 1].size == b.addr;
    const int next = p < fl->n && b.addr + b.size == fl->v[p].addr;
    if (prev && next) {
        fl->v[p - 1].size += b.size + fl->v[p].size;
        list_remove(fl, p);
    } else if (prev) {
        fl->v[p - 1].size += b.size;
    } else if (next) {
        fl->v[p].addr = b.addr;
        fl->v[p].size += b.size;
    } else if (list_insert(fl, p, b)) {
        return fail(dev, TPU_E_NOMEM, "tpu_free: out of host memory");
    }
    list_remove(used, u);
    return TPU_OK;
}

static tpu_status check_range(tpu_device *dev, const char *fn, uint32_t addr, const void *p,
                              size_t bytes)
{
    if (!p || bytes == 0)
        return fail(dev, TPU_E_ARG, "%s: %s", fn, p ? "zero bytes" : "NULL buffer");
    if ((uint64_t)addr + bytes > dev->hw.mem_size)
        return fail(dev, TPU_E_ARG, "%s: [0x%x, +%zu) is outside device memory (%llu bytes)", fn,
                    addr, bytes, (unsigned long long)dev->hw.mem_size);
    return TPU_OK;
}

/* Device memory written by the host (in range): the golden model's mirror follows at once, or,
 * while a submission is pending, after its verification (which counts the write as a change
 * behind the device's back). */
static void mem_write(tpu_device *d, uint32_t addr, const void *src, size_t bytes)
{
    tpusim_mem_write(d->sim, addr, src, bytes); /* in range: cannot fail */
    if (!d->golden)
        return;
    if (!d->pending) {
        memcpy(tpu_golden_mem(d->golden) + addr, src, bytes);
        return;
    }
    const block b = {addr, (uint32_t)bytes}; /* bytes <= mem_size < 2^32 */
    if (list_insert(&d->pending_writes, list_lower(&d->pending_writes, addr), b))
        d->mirror_lost = 1;
}

tpu_status tpu_write(tpu_device *dev, uint32_t addr, const void *src, size_t bytes)
{
    if (!dev)
        return TPU_E_ARG;
    const tpu_status st = check_range(dev, "tpu_write", addr, src, bytes);
    if (st == TPU_OK)
        mem_write(dev, addr, src, bytes);
    return st;
}

tpu_status tpu_read(tpu_device *dev, uint32_t addr, void *dst, size_t bytes)
{
    if (!dev)
        return TPU_E_ARG;
    const tpu_status st = check_range(dev, "tpu_read", addr, dst, bytes);
    if (st == TPU_OK)
        tpusim_mem_read(dev->sim, addr, dst, bytes);
    return st;
}

/* -------------------------------------------------------- open / close -- */

void tpu_options_default(tpu_options *opts) { memset(opts, 0, sizeof *opts); }

/* tpu_open's failure exit: d->msg (set by fail()) goes to err, d is released. */
static tpu_status open_fail(tpu_device *d, tpu_status s, char *err, size_t errlen)
{
    if (err && errlen)
        snprintf(err, errlen, "%s", d->msg);
    tpu_close(d);
    return s;
}

tpu_status tpu_open(const tpu_options *opts, tpu_device **dev, char *err, size_t errlen)
{
    if (!dev) {
        if (err && errlen)
            snprintf(err, errlen, "tpu_open: NULL dev");
        return TPU_E_ARG;
    }
    *dev = NULL;
    tpu_options o;
    if (opts)
        o = *opts;
    else
        tpu_options_default(&o);
    tpu_device *d = calloc(1, sizeof *d);
    if (!d) {
        if (err && errlen)
            snprintf(err, errlen, "tpu_open: out of host memory");
        return TPU_E_NOMEM;
    }

    if (o.mem_latency > TPU_MEM_LATENCY_MAX || o.mem_bytes_per_cycle > TPU_MEM_BANDWIDTH_MAX)
        return open_fail(d,
                         fail(d, TPU_E_ARG,
                              "tpu_open: mem_latency %u, mem_bytes_per_cycle %u: "
                              "at most %u cycles and %u bytes per cycle",
                              o.mem_latency, o.mem_bytes_per_cycle, TPU_MEM_LATENCY_MAX,
                              TPU_MEM_BANDWIDTH_MAX),
                         err, errlen);
    tpusim_config cfg;
    tpusim_config_default(&cfg);
    cfg.array_n = o.array_n ? o.array_n : DEFAULT_ARRAY_N;
    cfg.mem_size = o.mem_size ? o.mem_size : DEFAULT_MEM_SIZE;
    if (o.mem_latency)
        cfg.mem_latency = o.mem_latency;
    if (o.mem_bytes_per_cycle)
        cfg.mem_bytes_per_cycle = o.mem_bytes_per_cycle;
    /* The allocator hands out 64-byte blocks: a smaller memory could not hold a stream. */
    if (cfg.mem_size < ALIGN)
        return open_fail(d,
                         fail(d, TPU_E_DEVICE, "tpu_open: mem_size %llu is below %u bytes",
                              (unsigned long long)cfg.mem_size, ALIGN),
                         err, errlen);
    char why[256];
    d->sim = tpusim_create(&cfg, why, sizeof why);
    if (!d->sim)
        return open_fail(d, fail(d, TPU_E_DEVICE, "tpu_open: simulator: %s", why), err, errlen);
    const uint32_t id = tpusim_reg_read(d->sim, TPU_CSR_ID);
    d->version = tpusim_reg_read(d->sim, TPU_CSR_VERSION);
    if (id != TPU_ID_MAGIC || d->version >> 16 != TPU_VERSION >> 16)
        return open_fail(d,
                         fail(d, TPU_E_DEVICE,
                              "tpu_open: unsupported core: ID 0x%08x, "
                              "VERSION 0x%08x",
                              id, d->version),
                         err, errlen);
    tpusim_hwcfg(d->sim, &d->hw);
    d->mem_latency = cfg.mem_latency;
    d->mem_bytes_per_cycle = cfg.mem_bytes_per_cycle;

    const block all = {0, (uint32_t)(d->hw.mem_size / ALIGN * ALIGN)};
    if (list_insert(&d->free_blocks, 0, all))
        return open_fail(d, fail(d, TPU_E_NOMEM, "tpu_open: out of host memory"), err, errlen);
    if (o.verify && !(d->golden = tpu_golden_create(&d->hw)))
        return open_fail(d,
                         fail(d, TPU_E_NOMEM,
                              "tpu_open: out of host memory for the golden "
                              "model (%llu bytes)",
                              (unsigned long long)d->hw.mem_size),
                         err, errlen);
    if (d->golden) /* the only full copy: from here on the mirror follows every change */
        tpusim_mem_read(d->sim, 0, tpu_golden_mem(d->golden), d->hw.mem_size);
    *dev = d;
    return TPU_OK;
}

static tpu_status end_trace(tpu_device *d, const char *call);

void tpu_close(tpu_device *dev)
{
    if (!dev)
        return;
    if (dev->sim) {
        end_trace(dev, "tpu_close"); /* nowhere to report a save file that cannot be written */
        tpusim_destroy(dev->sim);
    }
    tpu_golden_destroy(dev->golden);
    free(dev->pending_writes.v);
    free(dev->free_blocks.v);
    free(dev->used_blocks.v);
    free(dev->insns);
    free(dev->trace_path);
    free(dev->traced_path);
    free(dev);
}

const char *tpu_last_error(const tpu_device *dev) { return dev ? dev->msg : "no device"; }

tpu_status tpu_query(tpu_device *dev, tpu_info *info)
{
    if (!dev)
        return TPU_E_ARG;
    if (!info)
        return fail(dev, TPU_E_ARG, "tpu_query: NULL info");
    info->array_n = dev->hw.array_n;
    info->ub_rows = dev->hw.ub_rows;
    info->acc_rows = dev->hw.acc_rows;
    info->wfifo_tiles = dev->hw.wfifo_tiles;
    info->iq_depth = dev->hw.iq_depth;
    info->version = dev->version;
    info->mem_size = dev->hw.mem_size;
    info->mem_latency = dev->mem_latency;
    info->mem_bytes_per_cycle = dev->mem_bytes_per_cycle;
    return TPU_OK;
}

/* ------------------------------------------------------------- running -- */

void tpu_set_progress(tpu_device *dev, tpu_progress_fn fn, void *ctx)
{
    if (!dev)
        return;
    dev->progress = fn;
    dev->progress_ctx = ctx;
}

/* Calls the progress callback if its period has passed. */
static void tick(tpu_device *d)
{
    const uint64_t c = tpusim_cycle(d->sim);
    if (!d->progress || c < d->next_progress)
        return;
    d->next_progress = c + PROGRESS_PERIOD;
    d->progress(d->progress_ctx, tpusim_perf(d->sim, TPU_PERF_RETIRED), d->n_insns, c - d->t0);
}

/* The firmware's HAL: the control processor shares the device clock. */
static int hal_push(void *ctx, const uint32_t w[4])
{
    tpu_device *d = ctx;
    d->fw_cycles++;
    if (d->abandoned == RUNNING && tpusim_cycle(d->sim) >= d->budget_end)
        d->abandoned = OUT_OF_CYCLES;
    /* Without a record of it, an instruction must not reach the core either. */
    if (d->n_insns == d->cap_insns && d->abandoned == RUNNING) {
        const size_t cap = d->cap_insns ? 2 * d->cap_insns : 1024;
        tpu_insn *v = realloc(d->insns, cap * sizeof *v);
        if (v) {
            d->insns = v;
            d->cap_insns = cap;
        } else {
            d->abandoned = OUT_OF_MEMORY;
        }
    }
    if (d->abandoned != RUNNING)
        return 1;
    tpu_insn insn;
    memcpy(insn.w, w, sizeof insn.w);
    const int taken = tpusim_push(d->sim, &insn);
    if (taken)
        d->insns[d->n_insns++] = insn;
    tick(d);
    return taken;
}

static uint32_t hal_reg_read(void *ctx, uint32_t offset)
{
    return tpusim_reg_read(((tpu_device *)ctx)->sim, offset);
}

static int hal_mem_read(void *ctx, uint32_t addr, void *dst, uint32_t n)
{
    return tpusim_mem_read(((tpu_device *)ctx)->sim, addr, dst, n);
}

static void hal_spend(void *ctx, uint32_t cycles)
{
    tpu_device *d = ctx;
    d->fw_cycles += cycles;
    if (d->abandoned != RUNNING)
        return;
    tpusim_step(d->sim, cycles);
    tick(d);
}

/* ---------------------------------------------------------- verification -- */

/* Index of the last instruction that wrote memory byte addr, or n_insns if none did. */
static size_t last_writer(const tpu_device *d, uint32_t addr)
{
    for (size_t i = d->n_insns; i-- > 0;) {
        const tpu_fields f = tpu_decode(&d->insns[i]);
        if (f.op != TPU_OP_WR_HOST || addr < f.a)
            continue;
        const uint64_t off = addr - f.a;
        if (f.stride == 0) {
            if (off < f.len)
                return i;
            continue;
        }
        /* Rows r with r * stride <= off < r * stride + len; more than one when rows overlap. */
        const uint64_t hi = off / f.stride;
        const uint64_t lo = off >= f.len ? (off - f.len) / f.stride + 1 : 0;
        if (lo < f.rows && lo <= hi)
            return i;
    }
    return d->n_insns;
}

typedef void range_fn(tpu_device *d, uint64_t addr, uint64_t size, void *ctx);

/* Calls fn on every device memory range the submission can have changed: each tpu_write made
 * while it was pending and each recorded WR_HOST's destination (clamped to memory: a WR_HOST
 * reaching past it never executes); all of memory instead if a pending write went unrecorded. */
static void for_each_change(tpu_device *d, range_fn *fn, void *ctx)
{
    const uint64_t end = d->hw.mem_size;
    if (d->mirror_lost) {
        fn(d, 0, end, ctx);
        return;
    }
    for (size_t i = 0; i < d->pending_writes.n; i++)
        fn(d, d->pending_writes.v[i].addr, d->pending_writes.v[i].size, ctx);
    for (size_t i = 0; i < d->n_insns; i++) {
        const tpu_fields f = tpu_decode(&d->insns[i]);
        if (f.op != TPU_OP_WR_HOST || f.rows == 0)
            continue;
        /* Rows that touch or overlap make one span; rows with gaps are visited one by one. */
        const int span = f.stride <= f.len;
        const uint64_t len = span ? (uint64_t)(f.rows - 1) * f.stride + f.len : f.len;
        for (uint32_t r = 0; r < (span ? 1 : f.rows); r++) {
            const uint64_t a = f.a + (uint64_t)r * f.stride;
            if (a >= end)
                break;
            fn(d, a, len < end - a ? len : end - a, ctx);
        }
    }
}

/* range_fn: lowers *(uint64_t *)ctx to the lowest address in the range where device and golden
 * memory differ. */
static void compare_range(tpu_device *d, uint64_t addr, uint64_t size, void *ctx)
{
    uint64_t *first = ctx;
    const uint8_t *expect = tpu_golden_mem(d->golden);
    uint8_t chunk[COMPARE_CHUNK];
    for (uint64_t at = addr; at < addr + size && at < *first; at += COMPARE_CHUNK) {
        const size_t n =
            addr + size - at < COMPARE_CHUNK ? (size_t)(addr + size - at) : COMPARE_CHUNK;
        tpusim_mem_read(d->sim, at, chunk, n);
        if (memcmp(chunk, expect + at, n) == 0)
            continue;
        size_t i = 0;
        while (chunk[i] == expect[at + i])
            i++;
        if (at + i < *first)
            *first = at + i;
        return;
    }
}

/* range_fn: the golden model's memory takes the device's bytes. */
static void copy_range(tpu_device *d, uint64_t addr, uint64_t size, void *ctx)
{
    (void)ctx;
    tpusim_mem_read(d->sim, addr, tpu_golden_mem(d->golden) + addr, size);
}

/* Did tpu_write change addr while the submission was pending? */
static int pending_write(const tpu_device *d, uint32_t addr)
{
    for (size_t i = 0; i < d->pending_writes.n; i++)
        if (addr - d->pending_writes.v[i].addr < d->pending_writes.v[i].size)
            return 1;
    return 0;
}

/* The golden model runs the recorded instructions; every range they (or a pending tpu_write)
 * can have changed must hold the same bytes on the device. */
static tpu_status verify(tpu_device *d)
{
    tpu_golden *g = d->golden;
    tpu_golden_reset(g);
    size_t at;
    const int code = tpu_golden_run(g, d->insns, d->n_insns, &at);
    char text[160];
    if (code != TPU_ERR_OK)
        return fail(d, TPU_E_MISMATCH,
                    "verify: the device halted but the golden model stops with %s at "
                    "instruction %zu: %s",
                    tpu_error_name((uint32_t)code), at,
                    tpu_disasm(&d->insns[at], text, sizeof text));
    uint64_t first = d->hw.mem_size;
    for_each_change(d, compare_range, &first);
    if (first == d->hw.mem_size)
        return TPU_OK;
    const uint32_t addr = (uint32_t)first;
    uint8_t got;
    tpusim_mem_read(d->sim, addr, &got, 1);
    const size_t w = last_writer(d, addr);
    if (w == d->n_insns)
        snprintf(text, sizeof text, "written by no instruction");
    else
        tpu_disasm(&d->insns[w], text, sizeof text);
    return fail(d, TPU_E_MISMATCH,
                "verify: memory differs at 0x%x: expected 0x%02x, device 0x%02x; last writer: "
                "instruction %zu: %s%s",
                addr, tpu_golden_mem(g)[addr], got, w, text,
                pending_write(d, addr) ? "; tpu_write changed it while the work was pending" : "");
}

/* Ends the submission: takes the performance report, frees the stream, and resets the device
 * when work may be left in it. With verify on it then brings the golden model's memory back to
 * the device's: after a HALT by verifying (TPU_E_MISMATCH on a difference), and by copying the
 * ranges the submission can have changed from the device whenever they may differ. */
static tpu_status finish(tpu_device *d, int reset, int halted, double t_start)
{
    tpu_perf_report *p = &d->perf;
    d->wall += now() - t_start;
    memset(p, 0, sizeof *p);
    p->cycles = tpusim_cycle(d->sim) - d->t0;
    for (int i = 0; i < TPU_PERF_COUNT; i++)
        p->counters[i] = tpusim_perf(d->sim, i);
    p->firmware_cycles = d->fw_cycles;
    p->instructions = d->n_insns;
    p->wall_seconds = d->wall;
    d->have_perf = 1;
    if (reset)
        tpusim_reset(d->sim);
    tpu_free(d, d->stream_addr);
    d->pending = 0;
    if (!d->golden)
        return TPU_OK;
    const tpu_status st = halted ? verify(d) : TPU_OK;
    if (!halted || st != TPU_OK)
        for_each_change(d, copy_range, NULL);
    d->pending_writes.n = 0;
    d->mirror_lost = 0;
    return st;
}

/* The message for a core stopped with an error: code, ERROR_PC and that instruction. */
static tpu_status core_error(tpu_device *d, const char *when)
{
    const uint32_t code = tpusim_reg_read(d->sim, TPU_CSR_ERROR_CODE);
    const uint32_t pc = tpusim_reg_read(d->sim, TPU_CSR_ERROR_PC);
    const uint32_t i = pc - d->pc_base;
    char text[160] = "(not pushed by this submission)";
    if (i < d->n_insns)
        tpu_disasm(&d->insns[i], text, sizeof text);
    return fail(d, TPU_E_CORE,
                "%s: core error %s (%u) at ERROR_PC %u (instruction %u of the "
                "submission): %s",
                when, tpu_error_name(code), code, pc, i, text);
}

/* What a rejected field means (docs/command-stream.md, "Validation"). */
static const char *field_meaning(const char *field)
{
    static const struct {
        const char *field, *meaning;
    } table[] = {
        {"bytes", "wrong length"},
        {"magic", "not \"TPUS\""},
        {"version", "unsupported stream version"},
        {"buffers", "the buffer table does not fit in the stream"},
        {"reserved", "not zero"},
        {"commands", "bytes remain after the last command"},
        {"addr", "outside device memory"},
        {"size", "zero, or the buffer ends outside device memory"},
        {"op", "unknown command"},
        {"flags", "an undefined flag bit set"},
        {"m", "zero"},
        {"k", "zero"},
        {"n", "zero"},
        {"a.buf", "not a buffer-table index"},
        {"b.buf", "not a buffer-table index"},
        {"c.buf", "not a buffer-table index"},
        {"params.buf", "not a buffer-table index, or not 0 without BIAS or OUT_INT8"},
        {"lda", "smaller than k"},
        {"ldb", "smaller than n, or not 0 with B_TILED"},
        {"ldc", "smaller than n, or its byte pitch does not fit 32 bits"},
        {"a.off", "the operand does not fit in its buffer"},
        {"b.off", "the operand does not fit in its buffer"},
        {"c.off", "the operand does not fit in its buffer"},
        {"params.off", "the parameters do not fit in their buffer, or not 0 without BIAS or "
                       "OUT_INT8"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(field, table[i].field) == 0)
            return table[i].meaning;
    if (strncmp(field, "c overlaps ", 11) == 0)
        return "C's extent intersects it";
    return "invalid";
}

/* The status and message for a firmware failure other than FW_ERR_CORE. */
static tpu_status firmware_error(tpu_device *d, const fw_result *r)
{
    const char *what = field_meaning(r->field);
    switch (r->code) {
    case FW_ERR_HEADER:
        return fail(d, TPU_E_STREAM, "stream header: field '%s': %s", r->field, what);
    case FW_ERR_BUFFER:
        return fail(d, TPU_E_STREAM, "buffer %u: field '%s': %s", r->buf, r->field, what);
    case FW_ERR_COMMAND:
        return fail(d, TPU_E_STREAM, "command %u: field '%s': %s", r->cmd, r->field, what);
    case FW_ERR_HW:
        return fail(d, TPU_E_DEVICE, "firmware: the core's %s register is not supported", r->field);
    default: /* FW_ERR_MEM: the simulator's memory refused a read inside MEM_SIZE */
        return fail(d, TPU_E_DEVICE, "firmware: device memory refused to read the %s", r->field);
    }
}

tpu_status tpu_submit(tpu_device *dev, const tpu_stream *s)
{
    if (!dev)
        return TPU_E_ARG;
    if (!s)
        return fail(dev, TPU_E_ARG, "tpu_submit: NULL stream");
    if (dev->pending)
        return fail(dev, TPU_E_ARG, "tpu_submit: the previous submission was not waited for");
    double t_start = now();
    size_t bytes;
    const void *data = tpu_stream_data(s, &bytes);
    uint32_t addr;
    if (tpu_alloc(dev, bytes, &addr) != TPU_OK)
        return fail(dev, TPU_E_NOMEM, "tpu_submit: no device memory for the %zu-byte stream",
                    bytes);
    /* Nothing below clocks the device before the firmware runs: t0 is its first cycle. */
    const uint64_t t0 = tpusim_cycle(dev->sim);
    if (dev->trace_path) {
        const size_t n = strlen(dev->trace_path);
        const int vcd = n >= 4 && strcmp(dev->trace_path + n - 4, ".vcd") == 0;
        char why[256];
        const int rc = tpusim_trace_open(
            dev->sim, dev->trace_path, vcd ? TPUSIM_TRACE_VCD : TPUSIM_TRACE_FST,
            t0 + dev->trace_from, dev->trace_to ? t0 + dev->trace_to : 0, why, sizeof why);
        if (rc) {
            free(dev->trace_path);
            dev->trace_path = NULL;
            tpu_free(dev, addr);
            return fail(dev, TPU_E_IO, "tpu_submit: trace: %s", why);
        }
        dev->traced_path = dev->trace_path;
        dev->trace_path = NULL;
    }
    mem_write(dev, addr, data, bytes);
    t_start = now(); /* the simulation's wall time starts here, after the host-side copies */

    dev->pending = 1;
    dev->stream_addr = addr;
    dev->n_insns = 0;
    dev->abandoned = RUNNING;
    dev->budget_end = dev->budget ? t0 + dev->budget : UINT64_MAX;
    dev->fw_cycles = 0;
    dev->wall = 0;
    dev->t0 = t0;
    dev->next_progress = t0 + PROGRESS_PERIOD;
    dev->pc_base = tpusim_reg_read(dev->sim, TPU_CSR_INSN_COUNT);
    tpusim_reg_write(dev->sim, TPU_CSR_CTRL, TPU_CTRL_CLEAR_PERF);

    const fw_hal hal = {dev, hal_push, hal_reg_read, hal_mem_read, hal_spend};
    fw_result r;
    fw_run(&hal, addr, (uint32_t)bytes, &r);
    if (dev->abandoned == OUT_OF_MEMORY) {
        finish(dev, 1, 0, t_start);
        return fail(dev, TPU_E_NOMEM, "tpu_submit: out of host memory recording instructions");
    }
    if (dev->abandoned == OUT_OF_CYCLES) {
        finish(dev, 1, 0, t_start);
        return fail(dev, TPU_E_TIMEOUT,
                    "tpu_submit: the firmware was still pushing instructions after %llu cycles "
                    "(%zu pushed); the device was reset",
                    (unsigned long long)dev->budget, dev->n_insns);
    }
    if (r.code == FW_OK) {
        dev->wall += now() - t_start;
        return TPU_OK;
    }
    if (r.code == FW_ERR_CORE) {
        /* The firmware saw STATUS.ERROR: nothing is in flight any more. */
        core_error(dev, "tpu_submit");
        finish(dev, 1, 0, t_start);
        return TPU_E_CORE;
    }
    const tpu_status st = firmware_error(dev, &r);
    finish(dev, r.insns != 0, 0, t_start);
    return st;
}

tpu_status tpu_wait(tpu_device *dev, uint64_t max_cycles)
{
    if (!dev)
        return TPU_E_ARG;
    if (!dev->pending)
        return fail(dev, TPU_E_ARG, "tpu_wait: nothing submitted");
    const double t_start = now();
    const uint64_t start = tpusim_cycle(dev->sim);
    uint64_t budget = max_cycles ? max_cycles : UINT64_MAX;
    const uint64_t left = dev->budget_end > start ? dev->budget_end - start : 0;
    if (left < budget)
        budget = left;
    for (;;) {
        tick(dev); /* after it, next_progress lies ahead */
        const uint64_t c = tpusim_cycle(dev->sim);
        uint64_t slice = budget - (c - start);
        if (dev->progress && dev->next_progress - c < slice)
            slice = dev->next_progress - c;
        const int r = tpusim_run(dev->sim, slice);
        if (r == TPUSIM_HALTED)
            break;
        if (r == TPUSIM_ERROR) {
            /* ERROR rises once nothing is in flight; BUSY clears with the emptied queue. */
            while (tpusim_reg_read(dev->sim, TPU_CSR_STATUS) & TPU_STATUS_BUSY)
                tpusim_step(dev->sim, 1);
            core_error(dev, "tpu_wait");
            finish(dev, 1, 0, t_start);
            return TPU_E_CORE;
        }
        if (tpusim_cycle(dev->sim) - start >= budget) {
            const uint64_t retired = tpusim_perf(dev->sim, TPU_PERF_RETIRED);
            finish(dev, 1, 0, t_start);
            return fail(dev, TPU_E_TIMEOUT,
                        "tpu_wait: no HALT within %llu cycles (%llu of %zu instructions "
                        "retired); the device was reset",
                        (unsigned long long)budget, (unsigned long long)retired, dev->n_insns);
        }
    }
    return finish(dev, 0, 1, t_start);
}

void tpu_set_budget(tpu_device *dev, uint64_t max_cycles)
{
    if (dev)
        dev->budget = max_cycles < TPU_BUDGET_MAX ? max_cycles : TPU_BUDGET_MAX;
}

const char *tpu_counter_name(int counter) { return tpu_perf_name(counter); }

tpu_status tpu_perf(tpu_device *dev, tpu_perf_report *out)
{
    if (!dev)
        return TPU_E_ARG;
    if (!out)
        return fail(dev, TPU_E_ARG, "tpu_perf: NULL report");
    if (!dev->have_perf)
        return fail(dev, TPU_E_ARG, "tpu_perf: no submission has finished");
    *out = dev->perf;
    return TPU_OK;
}

/* --------------------------------------------------------------- trace -- */

tpu_status tpu_trace_open(tpu_device *dev, const char *path, uint64_t from, uint64_t to)
{
    if (!dev)
        return TPU_E_ARG;
    if (!path || !*path)
        return fail(dev, TPU_E_ARG, "tpu_trace_open: no path");
    if (to && to <= from)
        return fail(dev, TPU_E_ARG, "tpu_trace_open: empty window [%llu, %llu)",
                    (unsigned long long)from, (unsigned long long)to);
    /* The simulator opens the file at the next submit; fail now if it cannot be written. */
    char why[512];
    if (tpusim_trace_writable(path, why, sizeof why))
        return fail(dev, TPU_E_IO, "tpu_trace_open: %s", why);
    char *p = strdup(path);
    if (!p)
        return fail(dev, TPU_E_NOMEM, "tpu_trace_open: out of host memory");
    const tpu_status st = end_trace(dev, "tpu_trace_open");
    if (st != TPU_OK) {
        free(p);
        return st;
    }
    free(dev->trace_path);
    dev->trace_path = p;
    dev->trace_from = from;
    dev->trace_to = to;
    return TPU_OK;
}

/* Closes the simulator's trace; one a submit opened gets its GTKWave save file. */
static tpu_status end_trace(tpu_device *d, const char *call)
{
    char why[512];
    if (tpusim_trace_close(d->sim, &d->trace_cycles, why, sizeof why)) {
        free(d->traced_path);
        d->traced_path = NULL;
        return fail(d, TPU_E_IO, "%s: %s", call, why);
    }
    if (!d->traced_path)
        return TPU_OK;
    const int rc = tpu_gtkw_write(d->traced_path, d->hw.array_n, why, sizeof why);
    free(d->traced_path);
    d->traced_path = NULL;
    return rc ? fail(d, TPU_E_IO, "%s: save file: %s", call, why) : TPU_OK;
}

uint64_t tpu_trace_cycles(const tpu_device *dev) { return dev ? dev->trace_cycles : 0; }

tpu_status tpu_trace_close(tpu_device *dev)
{
    if (!dev)
        return TPU_E_ARG;
    free(dev->trace_path);
    dev->trace_path = NULL;
    return end_trace(dev, "tpu_trace_close");
}

/* ---------------------------------------------------------- configuration -- */

int tpu_array_sizes(uint32_t *sizes, int max)
{
    return sizes && max > 0 ? tpusim_arrays(sizes, max) : 0;
}

uint64_t tpu_mem_size_for(uint64_t bytes)
{
    const uint64_t mib = 1u << 20;
    if (bytes > (3ull << 30))
        return 0;
    /* 1 MiB for the streams (a few hundred bytes each) and the rounding of the blocks. */
    const uint64_t need = bytes + mib;
    if (need <= DEFAULT_MEM_SIZE / 2)
        return DEFAULT_MEM_SIZE;
    return (need + (need >> 3) + mib - 1) & ~(mib - 1);
}

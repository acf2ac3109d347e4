/* tpu.c - the host driver of tpu.h: devices (the cycle-accurate simulator of sim/tpusim.h, or a
 * remote one), the device-memory allocator, memory access and traces. Submissions, waits and
 * verification are submit.c's. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, strdup */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver/tpu_internal.h"
#include "sim/gtkw.h"

_Static_assert(TPU_MEM_LATENCY_MAX == TPUSIM_MEM_LATENCY_MAX, "the simulator's limit");
_Static_assert(TPU_MEM_BANDWIDTH_MAX == TPUSIM_MEM_BANDWIDTH_MAX, "the simulator's limit");
_Static_assert(sizeof(tpu_memory) == sizeof(tpusim_memory), "passed on as tpusim_memory");
_Static_assert(TPU_CORES_MAX == TPUSIM_CORES_MAX, "the simulator's largest chip");

#define ALIGN 64u
#define DEFAULT_ARRAY_N 16u
#define DEFAULT_MEM_SIZE (64ull << 20)

tpu_status drv_fail(tpu_device *d, tpu_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
    return s;
}

double drv_now(void)
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

int drv_list_insert(block_list *l, size_t i, block b)
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
size_t drv_list_lower(const block_list *l, uint32_t addr)
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
        return drv_fail(dev, TPU_E_ARG, "tpu_alloc: %s", addr ? "zero bytes" : "NULL addr");
    if (bytes > dev->hw.mem_size)
        return drv_fail(dev, TPU_E_NOMEM, "tpu_alloc: %llu bytes is more than device memory",
                        (unsigned long long)bytes);
    const uint64_t size = (bytes + ALIGN - 1) / ALIGN * ALIGN;
    uint64_t free_total = 0, largest = 0;
    for (size_t i = 0; i < dev->free_blocks.n; i++) {
        block *f = &dev->free_blocks.v[i];
        if (f->size >= size) {
            const block b = {f->addr, (uint32_t)size};
            if (drv_list_insert(&dev->used_blocks, drv_list_lower(&dev->used_blocks, b.addr), b))
                return drv_fail(dev, TPU_E_NOMEM, "tpu_alloc: out of host memory");
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
    return drv_fail(dev, TPU_E_NOMEM,
                    "tpu_alloc: no free block of %llu bytes (%llu bytes free, largest block %llu)",
                    (unsigned long long)size, (unsigned long long)free_total,
                    (unsigned long long)largest);
}

tpu_status tpu_free(tpu_device *dev, uint32_t addr)
{
    if (!dev)
        return TPU_E_ARG;
    block_list *used = &dev->used_blocks, *fl = &dev->free_blocks;
    const size_t u = drv_list_lower(used, addr);
    if (u == used->n || used->v[u].addr != addr)
        return drv_fail(dev, TPU_E_ARG, "tpu_free: 0x%x is not an allocated block", addr);
    const block b = used->v[u];
    /* Merge with the free neighbours; a new list entry only when neither touches. */
    const size_t p = drv_list_lower(fl, addr);
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
    } else if (drv_list_insert(fl, p, b)) {
        return drv_fail(dev, TPU_E_NOMEM, "tpu_free: out of host memory");
    }
    list_remove(used, u);
    return TPU_OK;
}

static tpu_status check_range(tpu_device *dev, const char *fn, uint32_t addr, const void *p,
                              size_t bytes)
{
    if (!p || bytes == 0)
        return drv_fail(dev, TPU_E_ARG, "%s: %s", fn, p ? "zero bytes" : "NULL buffer");
    if ((uint64_t)addr + bytes > dev->hw.mem_size)
        return drv_fail(dev, TPU_E_ARG, "%s: [0x%x, +%zu) is outside device memory (%llu bytes)",
                        fn, addr, bytes, (unsigned long long)dev->hw.mem_size);
    return TPU_OK;
}

tpu_status tpu_write(tpu_device *dev, uint32_t addr, const void *src, size_t bytes)
{
    if (!dev)
        return TPU_E_ARG;
    tpu_status st = check_range(dev, "tpu_write", addr, src, bytes);
    if (st == TPU_OK && dev->remote) {
        if (dev->remote->write(dev->remote->ctx, addr, src, bytes))
            st =
                drv_fail(dev, TPU_E_DEVICE, "tpu_write: the bus refused [0x%x, +%zu)", addr, bytes);
    } else if (st == TPU_OK) {
        drv_mem_write(dev, addr, src, bytes);
    }
    return st;
}

tpu_status tpu_read(tpu_device *dev, uint32_t addr, void *dst, size_t bytes)
{
    if (!dev)
        return TPU_E_ARG;
    tpu_status st = check_range(dev, "tpu_read", addr, dst, bytes);
    if (st == TPU_OK && dev->remote) {
        if (dev->remote->read(dev->remote->ctx, addr, dst, bytes))
            st = drv_fail(dev, TPU_E_DEVICE, "tpu_read: the bus refused [0x%x, +%zu)", addr, bytes);
    } else if (st == TPU_OK) {
        tpusim_mem_read(dev->sim, addr, dst, bytes);
    }
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
                         drv_fail(d, TPU_E_ARG,
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
                         drv_fail(d, TPU_E_DEVICE, "tpu_open: mem_size %llu is below %u bytes",
                                  (unsigned long long)cfg.mem_size, ALIGN),
                         err, errlen);
    cfg.cores = o.cores;
    d->chip = o.cores != 0;
    cfg.memory = (const tpusim_memory *)o.memory; /* the same fields (asserted above) */
    char why[256];
    d->sim = tpusim_create(&cfg, why, sizeof why);
    if (!d->sim)
        return open_fail(d, drv_fail(d, TPU_E_DEVICE, "tpu_open: simulator: %s", why), err, errlen);
    const uint32_t id = tpusim_reg_read(d->sim, TPU_CSR_ID);
    d->version = tpusim_reg_read(d->sim, TPU_CSR_VERSION);
    if (id != TPU_ID_MAGIC || d->version >> 16 != TPU_VERSION >> 16)
        return open_fail(d,
                         drv_fail(d, TPU_E_DEVICE,
                                  "tpu_open: unsupported core: ID 0x%08x, "
                                  "VERSION 0x%08x",
                                  id, d->version),
                         err, errlen);
    tpusim_read_hwcfg(d->sim, &d->hw);
    d->mem_latency = cfg.mem_latency;
    d->mem_bytes_per_cycle = cfg.mem_bytes_per_cycle;

    d->cores = tpusim_cores(d->sim);
    const block all = {0, (uint32_t)(d->hw.mem_size / ALIGN * ALIGN)};
    if (drv_list_insert(&d->free_blocks, 0, all))
        return open_fail(d, drv_fail(d, TPU_E_NOMEM, "tpu_open: out of host memory"), err, errlen);
    if (o.verify) {
        if (!(d->mirror = malloc(d->hw.mem_size)))
            return open_fail(d,
                             drv_fail(d, TPU_E_NOMEM,
                                      "tpu_open: out of host memory for the golden model's "
                                      "memory (%llu bytes)",
                                      (unsigned long long)d->hw.mem_size),
                             err, errlen);
        /* The only full copy: from here on the mirror follows every change. */
        tpusim_mem_read(d->sim, 0, d->mirror, d->hw.mem_size);
    }
    const tpu_status st = drv_cores_init(d);
    if (st != TPU_OK)
        return open_fail(d, st, err, errlen);
    *dev = d;
    return TPU_OK;
}

tpu_status tpu_open_remote(const tpu_remote *ops, tpu_device **dev, char *err, size_t errlen)
{
    if (!dev || !ops || !ops->write || !ops->read || !ops->query || !ops->start || !ops->wait) {
        if (err && errlen)
            snprintf(err, errlen, "tpu_open_remote: %s", dev ? "incomplete ops" : "NULL dev");
        if (dev)
            *dev = NULL;
        return TPU_E_ARG;
    }
    *dev = NULL;
    tpu_device *d = calloc(1, sizeof *d);
    if (!d) {
        if (err && errlen)
            snprintf(err, errlen, "tpu_open_remote: out of host memory");
        return TPU_E_NOMEM;
    }
    d->remote = ops;
    tpu_info info;
    if (ops->query(ops->ctx, &info))
        return open_fail(d, drv_fail(d, TPU_E_DEVICE, "tpu_open_remote: the bus refused the query"),
                         err, errlen);
    if (info.cores == 0 || info.cores > TPUSIM_CORES_MAX || info.mem_size < ALIGN ||
        info.mem_size > UINT32_MAX || info.version >> 16 != TPU_VERSION >> 16)
        return open_fail(d,
                         drv_fail(d, TPU_E_DEVICE,
                                  "tpu_open_remote: unsupported device: VERSION 0x%08x, %u cores, "
                                  "%llu bytes",
                                  info.version, info.cores, (unsigned long long)info.mem_size),
                         err, errlen);
    d->hw = (tpusim_hwcfg){info.array_n,     info.ub_rows,  info.acc_rows,
                           info.wfifo_tiles, info.iq_depth, info.mem_size};
    d->version = info.version;
    d->mem_latency = info.mem_latency;
    d->mem_bytes_per_cycle = info.mem_bytes_per_cycle;
    d->cores = info.cores;
    const block all = {0, (uint32_t)(d->hw.mem_size / ALIGN * ALIGN)};
    if (drv_list_insert(&d->free_blocks, 0, all))
        return open_fail(d, drv_fail(d, TPU_E_NOMEM, "tpu_open_remote: out of host memory"), err,
                         errlen);
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
    drv_cores_free(dev);
    free(dev->mirror);
    free(dev->free_blocks.v);
    free(dev->used_blocks.v);
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
        return drv_fail(dev, TPU_E_ARG, "tpu_query: NULL info");
    info->array_n = dev->hw.array_n;
    info->ub_rows = dev->hw.ub_rows;
    info->acc_rows = dev->hw.acc_rows;
    info->wfifo_tiles = dev->hw.wfifo_tiles;
    info->iq_depth = dev->hw.iq_depth;
    info->version = dev->version;
    info->mem_size = dev->hw.mem_size;
    info->mem_latency = dev->mem_latency;
    info->mem_bytes_per_cycle = dev->mem_bytes_per_cycle;
    info->cores = dev->cores;
    return TPU_OK;
}

/* --------------------------------------------------------------- trace -- */

tpu_status tpu_trace_open(tpu_device *dev, const char *path, uint64_t from, uint64_t to)
{
    if (!dev)
        return TPU_E_ARG;
    if (dev->remote)
        return drv_fail(dev, TPU_E_ARG, "tpu_trace_open: a remote device traces at its end");
    if (!path || !*path)
        return drv_fail(dev, TPU_E_ARG, "tpu_trace_open: no path");
    if (to && to <= from)
        return drv_fail(dev, TPU_E_ARG, "tpu_trace_open: empty window [%llu, %llu)",
                        (unsigned long long)from, (unsigned long long)to);
    /* The simulator opens the file at the next submit; fail now if it cannot be written. */
    char why[512];
    if (tpusim_trace_writable(path, why, sizeof why))
        return drv_fail(dev, TPU_E_IO, "tpu_trace_open: %s", why);
    char *p = strdup(path);
    if (!p)
        return drv_fail(dev, TPU_E_NOMEM, "tpu_trace_open: out of host memory");
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
        return drv_fail(d, TPU_E_IO, "%s: %s", call, why);
    }
    if (!d->traced_path)
        return TPU_OK;
    const int rc = tpusim_gtkw_write(d->traced_path, d->hw.array_n, d->chip, why, sizeof why);
    free(d->traced_path);
    d->traced_path = NULL;
    return rc ? drv_fail(d, TPU_E_IO, "%s: save file: %s", call, why) : TPU_OK;
}

uint64_t tpu_trace_cycles(const tpu_device *dev) { return dev ? dev->trace_cycles : 0; }

tpu_status tpu_trace_close(tpu_device *dev)
{
    if (!dev)
        return TPU_E_ARG;
    free(dev->trace_path);
    dev->trace_path = NULL;
    return dev->sim ? end_trace(dev, "tpu_trace_close") : TPU_OK;
}

tpu_status drv_trace_start(tpu_device *d, uint64_t t0)
{
    if (!d->trace_path)
        return TPU_OK;
    const size_t n = strlen(d->trace_path);
    const int vcd = n >= 4 && strcmp(d->trace_path + n - 4, ".vcd") == 0;
    char why[256];
    const int rc =
        tpusim_trace_open(d->sim, d->trace_path, vcd ? TPUSIM_TRACE_VCD : TPUSIM_TRACE_FST,
                          t0 + d->trace_from, d->trace_to ? t0 + d->trace_to : 0, why, sizeof why);
    if (rc) {
        free(d->trace_path);
        d->trace_path = NULL;
        return drv_fail(d, TPU_E_IO, "tpu_submit: trace: %s", why);
    }
    d->traced_path = d->trace_path;
    d->trace_path = NULL;
    return TPU_OK;
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

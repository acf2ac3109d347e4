/* tpu.c - the host driver of tpu.h, whatever the device: opening one (local.c's simulator or
 * remote.c's bus) and closing it, the device-memory allocator, memory access, queries, traces
 * and messages. Submissions and waits are submit.c's. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/tpu_internal.h"

tpu_status drv_fail(tpu_device *d, tpu_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
    return s;
}

const char *drv_where(const tpu_device *d, uint32_t k, const char *call, char *buf, size_t n)
{
    if (d->cores == 1 && k == 0)
        return call;
    snprintf(buf, n, "%s: core %u", call, k);
    return buf;
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
    const uint64_t size = (bytes + DRV_ALIGN - 1) / DRV_ALIGN * DRV_ALIGN;
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
    const tpu_status st = check_range(dev, "tpu_write", addr, src, bytes);
    return st == TPU_OK ? dev->ops->mem_write(dev, addr, src, bytes) : st;
}

tpu_status tpu_read(tpu_device *dev, uint32_t addr, void *dst, size_t bytes)
{
    if (!dev)
        return TPU_E_ARG;
    const tpu_status st = check_range(dev, "tpu_read", addr, dst, bytes);
    return st == TPU_OK ? dev->ops->mem_read(dev, addr, dst, bytes) : st;
}

/* -------------------------------------------------------- open / close -- */

/* The end of an opening: the backend's failure (its message in d->msg) goes to err and releases
 * d; else all of device memory is free. */
static tpu_status opened(tpu_device *d, tpu_status st, const char *call, tpu_device **dev,
                         char *err, size_t errlen)
{
    const block all = {0, (uint32_t)(d->hw.mem_size / DRV_ALIGN * DRV_ALIGN)};
    if (st == TPU_OK && drv_list_insert(&d->free_blocks, 0, all))
        st = drv_fail(d, TPU_E_NOMEM, "%s: out of host memory", call);
    if (st == TPU_OK) {
        *dev = d;
        return TPU_OK;
    }
    if (err && errlen)
        snprintf(err, errlen, "%s", d->msg);
    tpu_close(d);
    return st;
}

/* A new device for `call`, or NULL with err written. */
static tpu_device *new_device(const char *call, char *err, size_t errlen)
{
    tpu_device *d = calloc(1, sizeof *d);
    if (!d && err && errlen)
        snprintf(err, errlen, "%s: out of host memory", call);
    return d;
}

tpu_status tpu_open(const tpusim_config *cfg, int verify, tpu_device **dev, char *err,
                    size_t errlen)
{
    if (!dev) {
        if (err && errlen)
            snprintf(err, errlen, "tpu_open: NULL dev");
        return TPU_E_ARG;
    }
    *dev = NULL;
    tpu_device *d = new_device("tpu_open", err, errlen);
    if (!d)
        return TPU_E_NOMEM;
    return opened(d, drv_local_open(d, cfg, verify), "tpu_open", dev, err, errlen);
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
    tpu_device *d = new_device("tpu_open_remote", err, errlen);
    if (!d)
        return TPU_E_NOMEM;
    return opened(d, drv_remote_open(d, ops), "tpu_open_remote", dev, err, errlen);
}

void tpu_close(tpu_device *dev)
{
    if (!dev)
        return;
    if (dev->ops)
        dev->ops->destroy(dev);
    free(dev->free_blocks.v);
    free(dev->used_blocks.v);
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
    return dev ? dev->ops->trace_open(dev, path, from, to) : TPU_E_ARG;
}

tpu_status tpu_trace_close(tpu_device *dev) { return dev ? dev->ops->trace_close(dev) : TPU_E_ARG; }

uint64_t tpu_trace_cycles(const tpu_device *dev) { return dev ? dev->trace_cycles : 0; }

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
    if (need <= DRV_MEM_SIZE_DEFAULT / 2)
        return DRV_MEM_SIZE_DEFAULT;
    return (need + (need >> 3) + mib - 1) & ~(mib - 1);
}

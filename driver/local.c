/* local.c - the local backend of the driver: the cycle-accurate simulator of sim/tpusim.h, its
 * clock, each core's submission from its start to its outcome, and traces.
 *
 * A submission starts with its firmware's record (record.c): the feed is attached to the core
 * and replayed on the device clock whenever the driver runs the clock (the waits, tpu_step), so
 * submissions to different cores run side by side in simulated time, each edge for edge as if
 * its firmware pushed live. With verify on, verify.c keeps the golden models' mirror of device
 * memory and checks each submission as it ends. */
#define _POSIX_C_SOURCE 200809L /* strdup */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/local.h"
#include "io/tpuio.h"
#include "sim/gtkw.h"

#define PROGRESS_PERIOD 65536u

/* Core k's submission as the simulator runs it. */
typedef struct {
    int result;                    /* once stopped: enum tpusim_result */
    uint32_t error_code, error_pc; /* TPUSIM_ERROR: the core's registers when it stopped */
    uint32_t timeout_by;           /* TPUSIM_TIMEOUT: the core whose cycles ran out */
    uint64_t timeout_after;        /* ... after that many cycles of its submission */
    tpusim_feed *feed;             /* what the firmware pushed, with its time between the pushes */
    uint32_t pc_base;              /* INSN_COUNT at submit: ERROR_PC - pc_base indexes the feed */
    uint64_t t0, budget_end, stop_cycle;
    uint64_t base[TPU_PERF_COUNT], stop[TPU_PERF_COUNT]; /* the counters at submit and stop */
    uint64_t stall_base, stall_stop, fw_edges;
    double wall;
} lcore;

typedef struct {
    tpusim *sim;
    int chip;           /* a tpu_chip (tpusim_config.cores given), not a lone tpu_core */
    drv_verify *verify; /* verify on: the golden models */
    uint32_t errored;   /* cores stopped with an error: reset once no core is pending */
    uint64_t next_progress;
    char *trace_path; /* a trace waiting for the next submit */
    uint64_t trace_from, trace_to;
    char *traced_path; /* the trace a submit opened: it gets a save file when closed */
    lcore core[TPUSIM_CORES_MAX];
} local;

static local *state(const tpu_device *d) { return d->be; }

/* ---------------------------------------------------------------- memory -- */

static tpu_status mem_write(tpu_device *d, uint32_t addr, const void *src, size_t bytes)
{
    if (state(d)->verify)
        drv_verify_write(state(d)->verify, addr, src, bytes);
    tpusim_mem_write(state(d)->sim, addr, src, bytes); /* in range: cannot fail */
    return TPU_OK;
}

static tpu_status mem_read(tpu_device *d, uint32_t addr, void *dst, size_t bytes)
{
    tpusim_mem_read(state(d)->sim, addr, dst, bytes);
    return TPU_OK;
}

static uint64_t cycle(const tpu_device *d) { return tpusim_cycle(state(d)->sim); }

/* --------------------------------------------------------------- traces -- */

/* Closes the simulator's trace; one a submit opened gets its GTKWave save file. */
static tpu_status end_trace(tpu_device *d, const char *call)
{
    local *l = state(d);
    char why[512];
    if (tpusim_trace_close(l->sim, &d->trace_cycles, why, sizeof why)) {
        free(l->traced_path);
        l->traced_path = NULL;
        return drv_fail(d, TPU_E_IO, "%s: %s", call, why);
    }
    if (!l->traced_path)
        return TPU_OK;
    const int rc = tpusim_gtkw_write(l->traced_path, d->hw.array_n, l->chip, why, sizeof why);
    free(l->traced_path);
    l->traced_path = NULL;
    return rc ? drv_fail(d, TPU_E_IO, "%s: save file: %s", call, why) : TPU_OK;
}

static tpu_status trace_open(tpu_device *d, const char *path, uint64_t from, uint64_t to)
{
    local *l = state(d);
    if (!path || !*path)
        return drv_fail(d, TPU_E_ARG, "tpu_trace_open: no path");
    if (to && to <= from)
        return drv_fail(d, TPU_E_ARG, "tpu_trace_open: empty window [%llu, %llu)",
                        (unsigned long long)from, (unsigned long long)to);
    /* The simulator opens the file at the next submit; fail now if it cannot be written. */
    char why[512];
    if (tpusim_trace_writable(path, why, sizeof why))
        return drv_fail(d, TPU_E_IO, "tpu_trace_open: %s", why);
    char *p = strdup(path);
    if (!p)
        return drv_fail(d, TPU_E_NOMEM, "tpu_trace_open: out of host memory");
    const tpu_status st = end_trace(d, "tpu_trace_open");
    if (st != TPU_OK) {
        free(p);
        return st;
    }
    free(l->trace_path);
    l->trace_path = p;
    l->trace_from = from;
    l->trace_to = to;
    return TPU_OK;
}

static tpu_status trace_close(tpu_device *d)
{
    free(state(d)->trace_path);
    state(d)->trace_path = NULL;
    return end_trace(d, "tpu_trace_close");
}

/* A trace armed by tpu_trace_open opens at a submit, from cycle t0. */
static tpu_status trace_start(tpu_device *d, uint64_t t0)
{
    local *l = state(d);
    if (!l->trace_path)
        return TPU_OK;
    const size_t n = strlen(l->trace_path);
    const int vcd = n >= 4 && strcmp(l->trace_path + n - 4, ".vcd") == 0;
    char why[256];
    const int rc =
        tpusim_trace_open(l->sim, l->trace_path, vcd ? TPUSIM_TRACE_VCD : TPUSIM_TRACE_FST,
                          t0 + l->trace_from, l->trace_to ? t0 + l->trace_to : 0, why, sizeof why);
    if (rc) {
        free(l->trace_path);
        l->trace_path = NULL;
        return drv_fail(d, TPU_E_IO, "tpu_submit: trace: %s", why);
    }
    l->traced_path = l->trace_path;
    l->trace_path = NULL;
    return TPU_OK;
}

/* ---------------------------------------------------------- submissions -- */

static tpu_status submit(tpu_device *d, uint32_t k, uint32_t addr, uint32_t bytes, const char *call)
{
    local *l = state(d);
    lcore *c = &l->core[k];
    char w[64];
    if (l->errored >> k & 1) {
        if (drv_pending(d))
            return drv_fail(d, TPU_E_ARG,
                            "%s: the core stopped with an error and is reset once no other "
                            "core's submission is pending",
                            drv_where(d, k, call, w, sizeof w));
        tpusim_reset(l->sim);
        l->errored = 0;
    }
    const uint64_t t0 = tpusim_cycle(l->sim);
    tpu_status st = trace_start(d, t0);
    if (st == TPU_OK)
        st = drv_record(d, l->sim, k, c->feed, addr, bytes, call);
    if (st == TPU_OK && l->verify && drv_verify_start(l->verify, k, c->feed))
        st = drv_fail(d, TPU_E_NOMEM, "%s: out of host memory", call);
    if (st != TPU_OK)
        return st;
    c->t0 = t0;
    c->budget_end = d->budget ? t0 + d->budget : UINT64_MAX;
    c->pc_base = tpusim_core_reg_read(l->sim, k, TPU_CSR_INSN_COUNT);
    for (int i = 0; i < TPU_PERF_COUNT; i++)
        c->base[i] = tpusim_core_perf(l->sim, k, i);
    c->stall_base = tpusim_mem_stall(l->sim, k);
    c->wall = 0;
    d->core[k].stopped = 0;
    l->next_progress = t0 + PROGRESS_PERIOD;
    tpusim_core_feed(l->sim, k, c->feed);
    return TPU_OK;
}

/* ------------------------------------------------------------ the clock -- */

static uint32_t running_mask(const tpu_device *d)
{
    uint32_t m = 0;
    for (uint32_t k = 0; k < drv_ncores(d); k++)
        m |= (uint32_t)(d->core[k].pending && !d->core[k].stopped) << k;
    return m;
}

static uint32_t lowest(uint32_t mask)
{
    uint32_t k = 0;
    while (k < 32 && !(mask >> k & 1))
        k++;
    return k < 32 ? k : DRV_NO_CORE;
}

/* Calls the progress callback with core k's figures if its period has passed. */
static void tick(tpu_device *d, uint32_t k)
{
    local *l = state(d);
    const uint64_t now = tpusim_cycle(l->sim);
    if (!d->progress || now < l->next_progress)
        return;
    l->next_progress = now + PROGRESS_PERIOD;
    const lcore *c = &l->core[k];
    d->progress(d->progress_ctx,
                tpusim_core_perf(l->sim, k, TPU_PERF_RETIRED) - c->base[TPU_PERF_RETIRED],
                tpusim_feed_taken(c->feed), now - c->t0);
}

/* Core k has stopped (result: enum tpusim_result): its figures as they are now. */
static void note_stop(tpu_device *d, uint32_t k, int result)
{
    local *l = state(d);
    lcore *c = &l->core[k];
    d->core[k].stopped = 1;
    c->result = result;
    c->stop_cycle = tpusim_cycle(l->sim);
    for (int i = 0; i < TPU_PERF_COUNT; i++)
        c->stop[i] = tpusim_core_perf(l->sim, k, i);
    c->stall_stop = tpusim_mem_stall(l->sim, k);
    c->fw_edges = tpusim_feed_edges(c->feed);
    if (result == TPUSIM_ERROR) {
        c->error_code = tpusim_core_reg_read(l->sim, k, TPU_CSR_ERROR_CODE);
        c->error_pc = tpusim_core_reg_read(l->sim, k, TPU_CSR_ERROR_PC);
        l->errored |= 1u << k;
    }
}

/* Core k ran out of cycles (its budget, or a wait's max_cycles): every running submission ends
 * with TPUSIM_TIMEOUT and the device is reset, which stops them all. */
static void time_out(tpu_device *d, uint32_t k)
{
    local *l = state(d);
    const uint64_t after = tpusim_cycle(l->sim) - l->core[k].t0;
    for (uint32_t j = 0; j < drv_ncores(d); j++) {
        if (!d->core[j].pending || d->core[j].stopped)
            continue;
        note_stop(d, j, TPUSIM_TIMEOUT);
        l->core[j].timeout_by = k;
        l->core[j].timeout_after = after;
    }
    tpusim_reset(l->sim);
    l->errored = 0;
}

/* Runs the device until every core in `until` has stopped (any: one of them) or `cycles` edges
 * have passed (until 0: those edges), noting when each running core stops and timing out a core
 * that exhausts its budget. Progress reports follow core `shown` (DRV_NO_CORE: none). */
static void advance(tpu_device *d, uint32_t until, uint64_t cycles, uint32_t shown, int any)
{
    local *l = state(d);
    const double t = tpuio_seconds();
    const uint32_t ran = running_mask(d);
    const uint64_t start = tpusim_cycle(l->sim);
    for (;;) {
        const uint32_t running = running_mask(d);
        const uint64_t now = tpusim_cycle(l->sim);
        if ((until && (any ? (until & running) != until : !(until & running))) ||
            now - start >= cycles)
            break;
        uint64_t slice = cycles - (now - start);
        uint32_t late = DRV_NO_CORE;
        for (uint32_t k = 0; k < drv_ncores(d) && late == DRV_NO_CORE; k++) {
            if (!(running >> k & 1))
                continue;
            if (l->core[k].budget_end <= now)
                late = k;
            else if (l->core[k].budget_end - now < slice)
                slice = l->core[k].budget_end - now;
        }
        if (late != DRV_NO_CORE) {
            time_out(d, late);
            continue;
        }
        if (shown != DRV_NO_CORE && (running >> shown & 1) && d->progress) {
            tick(d, shown); /* after it, next_progress lies ahead */
            if (l->next_progress - now < slice)
                slice = l->next_progress - now;
        }
        if (!running) {
            tpusim_step(l->sim, slice);
            continue;
        }
        int results[TPUSIM_CORES_MAX];
        const uint32_t stopped = (uint32_t)tpusim_run_feeds(l->sim, running, slice, results);
        for (uint32_t k = 0; k < drv_ncores(d); k++)
            if (stopped >> k & 1)
                note_stop(d, k, results[k]);
    }
    const double wall = tpuio_seconds() - t;
    for (uint32_t k = 0; k < drv_ncores(d); k++)
        if (ran >> k & 1)
            l->core[k].wall += wall;
}

static void run_until(tpu_device *d, uint32_t cores, int any, uint64_t cycles)
{
    advance(d, cores, cycles, lowest(cores), any);
    const uint32_t running = running_mask(d) & cores;
    if (running && (!any || running == cores))
        time_out(d, lowest(running));
}

/* ---------------------------------------------------------- the outcome -- */

/* The message for core k stopped with an error: code, ERROR_PC and that instruction. */
static tpu_status core_error(tpu_device *d, uint32_t k, const char *call)
{
    const lcore *c = &state(d)->core[k];
    const uint32_t i = c->error_pc - c->pc_base;
    char text[160] = "(not pushed by this submission)", w[64];
    if (i < tpusim_feed_size(c->feed))
        tpusim_disasm(&tpusim_feed_insns(c->feed)[i], text, sizeof text);
    return drv_fail(d, TPU_E_CORE,
                    "%s: core error %s (%u) at ERROR_PC %u (instruction %u of the "
                    "submission): %s",
                    drv_where(d, k, call, w, sizeof w), tpusim_fault_name(c->error_code),
                    c->error_code, c->error_pc, i, text);
}

static tpu_status timeout_error(tpu_device *d, uint32_t k, const char *call)
{
    const lcore *c = &state(d)->core[k];
    char w[64];
    if (c->timeout_by != k)
        return drv_fail(d, TPU_E_TIMEOUT,
                        "%s: the device was reset when core %u's submission ran out of cycles "
                        "(after %llu)",
                        drv_where(d, k, call, w, sizeof w), c->timeout_by,
                        (unsigned long long)c->timeout_after);
    return drv_fail(d, TPU_E_TIMEOUT,
                    "%s: no HALT within %llu cycles (%llu of %zu instructions retired); the "
                    "device was reset",
                    drv_where(d, k, call, w, sizeof w), (unsigned long long)c->timeout_after,
                    (unsigned long long)(c->stop[TPU_PERF_RETIRED] - c->base[TPU_PERF_RETIRED]),
                    tpusim_feed_size(c->feed));
}

/* Ends the lowest stopped submission of `cores`: its figures, its verification (with verify on:
 * after a HALT, its golden model; else the mirror brought back to the device), and a reset when
 * it is the last one pending after a core stopped with an error. */
static tpu_status outcome(tpu_device *d, uint32_t cores, const char *call, uint32_t *core)
{
    local *l = state(d);
    uint32_t k = 0;
    while (!(cores >> k & 1) || !d->core[k].pending || !d->core[k].stopped)
        k++; /* run left one stopped */
    *core = k;
    lcore *c = &l->core[k];
    tpu_perf_report *p = &d->core[k].perf;
    memset(p, 0, sizeof *p);
    p->cycles = c->stop_cycle - c->t0;
    for (int i = 0; i < TPU_PERF_COUNT; i++)
        p->counters[i] = c->stop[i] - c->base[i];
    p->firmware_cycles = c->fw_edges;
    p->instructions = tpusim_feed_taken(c->feed);
    p->mem_stall_cycles = c->stall_stop - c->stall_base;
    p->wall_seconds = c->wall;
    d->core[k].have_perf = 1;
    tpusim_core_feed(l->sim, k, NULL);
    tpu_status st = c->result == TPUSIM_ERROR     ? core_error(d, k, call)
                    : c->result == TPUSIM_TIMEOUT ? timeout_error(d, k, call)
                                                  : TPU_OK;
    if (l->verify) {
        const int halted = st == TPU_OK;
        st = drv_verify_end(d, l->verify, k, c->feed, st);
        p->verified = halted && st == TPU_OK;
    }
    if (l->errored && !(drv_pending(d) & ~(1u << k))) {
        tpusim_reset(l->sim);
        l->errored = 0;
    }
    return st;
}

/* ------------------------------------------------------ open and close -- */

static void destroy(tpu_device *d)
{
    local *l = state(d);
    if (l->sim) {
        end_trace(d, "tpu_close"); /* nowhere to report a save file that cannot be written */
        tpusim_destroy(l->sim);
    }
    for (uint32_t k = 0; k < TPUSIM_CORES_MAX; k++)
        tpusim_feed_free(l->core[k].feed);
    drv_verify_free(l->verify);
    free(l->trace_path);
    free(l->traced_path);
    free(l);
}

static const drv_ops local_ops = {
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

void tpu_config_fill(tpusim_config *cfg)
{
    tpusim_config sim;
    tpusim_config_default(&sim);
    if (!cfg->array_n)
        cfg->array_n = DRV_ARRAY_N_DEFAULT;
    if (!cfg->mem_size)
        cfg->mem_size = DRV_MEM_SIZE_DEFAULT;
    if (!cfg->mem_latency)
        cfg->mem_latency = sim.mem_latency;
    if (!cfg->mem_bytes_per_cycle)
        cfg->mem_bytes_per_cycle = sim.mem_bytes_per_cycle;
}

tpu_status drv_local_open(tpu_device *d, const tpusim_config *device, int verify)
{
    local *l = calloc(1, sizeof *l);
    if (!l)
        return drv_fail(d, TPU_E_NOMEM, "tpu_open: out of host memory");
    d->ops = &local_ops;
    d->be = l;
    tpusim_config cfg = {0};
    if (device)
        cfg = *device;
    if (cfg.mem_latency > TPUSIM_MEM_LATENCY_MAX ||
        cfg.mem_bytes_per_cycle > TPUSIM_MEM_BANDWIDTH_MAX)
        return drv_fail(d, TPU_E_ARG,
                        "tpu_open: mem_latency %u, mem_bytes_per_cycle %u: "
                        "at most %u cycles and %u bytes per cycle",
                        cfg.mem_latency, cfg.mem_bytes_per_cycle, TPUSIM_MEM_LATENCY_MAX,
                        TPUSIM_MEM_BANDWIDTH_MAX);
    tpu_config_fill(&cfg);
    /* The allocator hands out 64-byte blocks: a smaller memory could not hold a stream. */
    if (cfg.mem_size < DRV_ALIGN)
        return drv_fail(d, TPU_E_DEVICE, "tpu_open: mem_size %llu is below %u bytes",
                        (unsigned long long)cfg.mem_size, DRV_ALIGN);
    l->chip = cfg.cores != 0;
    char why[256];
    if (!(l->sim = tpusim_create(&cfg, why, sizeof why)))
        return drv_fail(d, TPU_E_DEVICE, "tpu_open: simulator: %s", why);
    const uint32_t id = tpusim_reg_read(l->sim, TPU_CSR_ID);
    d->version = tpusim_reg_read(l->sim, TPU_CSR_VERSION);
    if (id != TPU_ID_MAGIC || d->version >> 16 != TPU_VERSION >> 16)
        return drv_fail(d, TPU_E_DEVICE, "tpu_open: unsupported core: ID 0x%08x, VERSION 0x%08x",
                        id, d->version);
    tpusim_read_hwcfg(l->sim, &d->hw);
    d->mem_latency = cfg.mem_latency;
    d->mem_bytes_per_cycle = cfg.mem_bytes_per_cycle;
    d->cores = tpusim_cores(l->sim);
    for (uint32_t k = 0; k < drv_ncores(d); k++)
        if (!(l->core[k].feed = tpusim_feed_new()))
            return drv_fail(d, TPU_E_NOMEM, "tpu_open: out of host memory");
    if (verify && !(l->verify = drv_verify_new(l->sim, &d->hw, drv_ncores(d))))
        return drv_fail(d, TPU_E_NOMEM,
                        "tpu_open: out of host memory for the golden model's memory (%llu bytes)",
                        (unsigned long long)d->hw.mem_size);
    return TPU_OK;
}

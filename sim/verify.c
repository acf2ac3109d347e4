/* verify.c - tpusim_verify: run a program on the device and on the golden model from the same
 * memory, UB and ACC, compare everything, and name the earliest last writer of a differing
 * location. Uses only the public device API. The golden model starts from reset (no queued tiles,
 * zero weights and parameters), so the device should be fresh or reset, or the program load what
 * it uses. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/tpusim.h"

enum {
    CHUNK = 4096, /* memory is compared and attributed in chunks of this many bytes */
    READ_CHUNKS = 16
}; /* chunks per device read */

typedef struct {
    char *buf;
    size_t size, pos;
} text;

static void say(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(text *t, const char *fmt, ...)
{
    if (t->pos && t->pos + 1 < t->size) /* one finding per line */
        t->buf[t->pos++] = '\n';
    if (t->pos >= t->size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->buf + t->pos, t->size - t->pos, fmt, ap);
    va_end(ap);
    if (k > 0)
        t->pos = t->pos + (size_t)k < t->size ? t->pos + (size_t)k : t->size;
}

/* One differing location with its last writer (-1: none). */
typedef struct {
    int32_t writer;
    char where[48], expected[24], actual[24];
} location;

typedef struct {
    tpusim *sim;
    tpusim_golden *g;
    tpusim_hwcfg cfg;
    const tpusim_insn *prog;
    size_t n;       /* instructions in prog */
    size_t stop;    /* the golden model's stopping point: instructions before it ran */
    int8_t *dev_ub; /* the device's UB and ACC after the run */
    int32_t *dev_acc;
    uint64_t nchunks;
    uint8_t *chunk_differs;
    uint64_t ub_diffs, acc_diffs, mem_diffs;
    int32_t *ub_writer, *acc_writer; /* per row, last writer before stop */
    int32_t **mem_writer;            /* per chunk, allocated for differing chunks only */
    uint8_t *dev_mem;                /* READ_CHUNKS * CHUNK bytes of device memory */
    location best, unwritten;        /* earliest-writer location; first unwritten location */
    uint64_t unwritten_count;
} compare;

static void describe_insn(const compare *c, size_t idx, char *buf, size_t size)
{
    char dis[128];
    if (idx < c->n)
        snprintf(buf, size, "insn %zu `%s`", idx, tpusim_disasm(&c->prog[idx], dis, sizeof dis));
    else
        snprintf(buf, size, "insn %zu", idx);
}

static int read_device_state(compare *c)
{
    const uint32_t n = c->cfg.array_n;
    for (uint32_t r = 0; r < c->cfg.ub_rows; r++)
        if (tpusim_ub_read(c->sim, r, c->dev_ub + (size_t)r * n))
            return -1;
    for (uint32_t r = 0; r < c->cfg.acc_rows; r++)
        if (tpusim_acc_read(c->sim, r, c->dev_acc + (size_t)r * n))
            return -1;
    return 0;
}

static int rows_differ(compare *c)
{
    const uint32_t n = c->cfg.array_n;
    for (uint32_t r = 0; r < c->cfg.ub_rows; r++)
        if (memcmp(tpusim_golden_ub(c->g, r), c->dev_ub + (size_t)r * n, n))
            return 1;
    for (uint32_t r = 0; r < c->cfg.acc_rows; r++)
        if (memcmp(tpusim_golden_acc(c->g, r), c->dev_acc + (size_t)r * n, n * sizeof *c->dev_acc))
            return 1;
    return 0;
}

/* Device memory chunks [first, first + count) into dev_mem. */
static int read_chunks(compare *c, uint64_t first, uint64_t count)
{
    const uint64_t lo = first * CHUNK;
    const uint64_t hi =
        (first + count) * CHUNK < c->cfg.mem_size ? (first + count) * CHUNK : c->cfg.mem_size;
    return tpusim_mem_read(c->sim, lo, c->dev_mem, (size_t)(hi - lo));
}

static size_t chunk_bytes(const compare *c, uint64_t chunk)
{
    const uint64_t lo = chunk * CHUNK;
    return (size_t)(c->cfg.mem_size - lo < CHUNK ? c->cfg.mem_size - lo : CHUNK);
}

/* Flags the differing chunks; returns how many, or -1 if the device could not be read. */
static int64_t compare_memory(compare *c)
{
    const uint8_t *golden = tpusim_golden_mem(c->g);
    int64_t differing = 0;
    for (uint64_t first = 0; first < c->nchunks; first += READ_CHUNKS) {
        const uint64_t count = c->nchunks - first < READ_CHUNKS ? c->nchunks - first : READ_CHUNKS;
        if (read_chunks(c, first, count))
            return -1;
        for (uint64_t k = 0; k < count; k++) {
            const uint64_t chunk = first + k;
            c->chunk_differs[chunk] =
                memcmp(golden + chunk * CHUNK, c->dev_mem + k * CHUNK, chunk_bytes(c, chunk)) != 0;
            differing += c->chunk_differs[chunk];
        }
    }
    return differing;
}

/* Last writer of every UB/ACC row and of every byte in a differing memory chunk. Instructions
 * before stop passed validation, so their ranges are in bounds. */
static int find_writers(compare *c)
{
    const uint32_t n = c->cfg.array_n;
    for (uint32_t r = 0; r < c->cfg.ub_rows; r++)
        c->ub_writer[r] = -1;
    for (uint32_t r = 0; r < c->cfg.acc_rows; r++)
        c->acc_writer[r] = -1;
    for (uint64_t k = 0; k < c->nchunks; k++) {
        if (!c->chunk_differs[k])
            continue;
        if (!(c->mem_writer[k] = malloc(CHUNK * sizeof **c->mem_writer)))
            return -1;
        for (size_t b = 0; b < CHUNK; b++)
            c->mem_writer[k][b] = -1;
    }
    for (size_t idx = 0; idx < c->stop; idx++) {
        const tpusim_fields f = tpusim_decode(&c->prog[idx]);
        const int32_t w = (int32_t)idx;
        switch (f.op) {
        case TPU_OP_RD_HOST: /* ceil(len / N) UB rows per memory row */
            for (uint32_t i = 0; i < f.rows * ((f.len + n - 1) / n); i++)
                c->ub_writer[f.b + i] = w;
            break;
        case TPU_OP_ZERO:
            for (uint32_t i = 0; i < f.rows; i++)
                c->ub_writer[f.b + i] = w;
            break;
        case TPU_OP_ACTIVATE: /* its len is the UB step, 0 meaning 1 */
            for (uint32_t i = 0; i < f.rows; i++)
                c->ub_writer[f.a + i * (f.len ? f.len : 1)] = w;
            break;
        case TPU_OP_MATMUL:
            for (uint32_t i = 0; i < f.rows; i++)
                c->acc_writer[f.b + i] = w;
            break;
        case TPU_OP_WR_HOST:
            for (uint32_t i = 0; i < f.rows; i++) {
                const uint64_t lo = f.a + (uint64_t)i * f.stride, hi = lo + f.len;
                for (uint64_t k = lo / CHUNK; k <= (hi - 1) / CHUNK; k++) {
                    if (!c->mem_writer[k])
                        continue;
                    const uint64_t from = lo > k * CHUNK ? lo : k * CHUNK;
                    const uint64_t to = hi < (k + 1) * CHUNK ? hi : (k + 1) * CHUNK;
                    for (uint64_t b = from; b < to; b++)
                        c->mem_writer[k][b - k * CHUNK] = w;
                }
            }
            break;
        default: /* the rest write no compared state */ break;
        }
    }
    return 0;
}

/* Where a differing location with this writer is reported, or NULL: the earliest writer (the
 * first location seen on ties) and the first location no instruction wrote. */
static location *keep(compare *c, int32_t writer)
{
    location *slot = NULL;
    if (writer < 0)
        slot = c->unwritten_count++ ? NULL : &c->unwritten;
    else if (c->best.writer < 0 || writer < c->best.writer)
        slot = &c->best;
    if (slot)
        slot->writer = writer;
    return slot;
}

/* Counts the differing locations and picks the ones to report. */
static int attribute(compare *c)
{
    const uint32_t n = c->cfg.array_n;
    location *l;
    c->best.writer = c->unwritten.writer = -1;
    for (uint32_t r = 0; r < c->cfg.ub_rows; r++) {
        const int8_t *ev = tpusim_golden_ub(c->g, r), *av = c->dev_ub + (size_t)r * n;
        for (uint32_t k = 0; k < n; k++) {
            if (ev[k] == av[k])
                continue;
            c->ub_diffs++;
            if (!(l = keep(c, c->ub_writer[r])))
                continue;
            snprintf(l->where, sizeof l->where, "UB row %u byte %u", r, k);
            snprintf(l->expected, sizeof l->expected, "%d", ev[k]);
            snprintf(l->actual, sizeof l->actual, "%d", av[k]);
        }
    }
    for (uint32_t r = 0; r < c->cfg.acc_rows; r++) {
        const int32_t *ev = tpusim_golden_acc(c->g, r), *av = c->dev_acc + (size_t)r * n;
        for (uint32_t k = 0; k < n; k++) {
            if (ev[k] == av[k])
                continue;
            c->acc_diffs++;
            if (!(l = keep(c, c->acc_writer[r])))
                continue;
            snprintf(l->where, sizeof l->where, "ACC row %u col %u", r, k);
            snprintf(l->expected, sizeof l->expected, "%ld", (long)ev[k]);
            snprintf(l->actual, sizeof l->actual, "%ld", (long)av[k]);
        }
    }
    const uint8_t *golden = tpusim_golden_mem(c->g);
    for (uint64_t k = 0; k < c->nchunks; k++) {
        if (!c->chunk_differs[k])
            continue;
        if (read_chunks(c, k, 1))
            return -1;
        for (size_t b = 0; b < chunk_bytes(c, k); b++) {
            const uint64_t addr = k * CHUNK + b;
            if (golden[addr] == c->dev_mem[b])
                continue;
            c->mem_diffs++;
            if (!(l = keep(c, c->mem_writer[k][b])))
                continue;
            snprintf(l->where, sizeof l->where, "mem 0x%llx", (unsigned long long)addr);
            snprintf(l->expected, sizeof l->expected, "0x%02x", golden[addr]);
            snprintf(l->actual, sizeof l->actual, "0x%02x", c->dev_mem[b]);
        }
    }
    return 0;
}

/* Compares UB, ACC and memory; reports into t. Returns the number of differing locations, or -1
 * if the device could not be read or memory ran out. */
static int64_t compare_state(compare *c, text *t)
{
    const uint64_t n = c->cfg.array_n;
    c->nchunks = (c->cfg.mem_size + CHUNK - 1) / CHUNK;
    c->dev_ub = malloc(c->cfg.ub_rows * n + 1);
    c->dev_acc = malloc((c->cfg.acc_rows * n + 1) * sizeof *c->dev_acc);
    c->dev_mem = malloc(READ_CHUNKS * CHUNK);
    c->chunk_differs = calloc(c->nchunks + 1, 1);
    if (!c->dev_ub || !c->dev_acc || !c->dev_mem || !c->chunk_differs)
        return -1;
    const int64_t chunks = read_device_state(c) ? -1 : compare_memory(c);
    if (chunks < 0)
        return -1;
    if (!chunks && !rows_differ(c))
        return 0;

    c->ub_writer = malloc((c->cfg.ub_rows + 1) * sizeof *c->ub_writer);
    c->acc_writer = malloc((c->cfg.acc_rows + 1) * sizeof *c->acc_writer);
    c->mem_writer = calloc(c->nchunks + 1, sizeof *c->mem_writer);
    if (!c->ub_writer || !c->acc_writer || !c->mem_writer || find_writers(c) || attribute(c))
        return -1;
    const uint64_t total = c->ub_diffs + c->acc_diffs + c->mem_diffs;
    say(t, "%llu locations differ (UB %llu, ACC %llu, memory %llu)", (unsigned long long)total,
        (unsigned long long)c->ub_diffs, (unsigned long long)c->acc_diffs,
        (unsigned long long)c->mem_diffs);
    if (c->best.writer >= 0) {
        char insn[192];
        describe_insn(c, (size_t)c->best.writer, insn, sizeof insn);
        say(t, "earliest last writer of a differing location: %s: %s expected %s actual %s", insn,
            c->best.where, c->best.expected, c->best.actual);
    }
    if (c->unwritten_count)
        say(t,
            "%llu differing locations written by no instruction, first: %s expected %s "
            "actual %s",
            (unsigned long long)c->unwritten_count, c->unwritten.where, c->unwritten.expected,
            c->unwritten.actual);
    return (int64_t)total;
}

static void free_compare(compare *c)
{
    if (c->mem_writer)
        for (uint64_t k = 0; k < c->nchunks; k++)
            free(c->mem_writer[k]);
    free(c->mem_writer);
    free(c->ub_writer);
    free(c->acc_writer);
    free(c->chunk_differs);
    free(c->dev_mem);
    free(c->dev_acc);
    free(c->dev_ub);
    tpusim_golden_destroy(c->g);
}

/* The device's state before the run goes into the golden model. */
static int load_golden(compare *c)
{
    if (tpusim_mem_read(c->sim, 0, tpusim_golden_mem(c->g), (size_t)c->cfg.mem_size))
        return -1;
    for (uint32_t r = 0; r < c->cfg.ub_rows; r++)
        if (tpusim_ub_read(c->sim, r, tpusim_golden_ub(c->g, r)))
            return -1;
    for (uint32_t r = 0; r < c->cfg.acc_rows; r++)
        if (tpusim_acc_read(c->sim, r, tpusim_golden_acc(c->g, r)))
            return -1;
    return 0;
}

static void describe_outcome(const compare *c, int code, size_t idx, char *buf, size_t size)
{
    char insn[192];
    if (code) {
        describe_insn(c, idx, insn, sizeof insn);
        snprintf(buf, size, "error %s at %s", tpusim_fault_name((uint32_t)code), insn);
    } else if (idx < c->n) {
        snprintf(buf, size, "halted at insn %zu", idx);
    } else {
        snprintf(buf, size, "no HALT in %zu instructions", c->n);
    }
}

int tpusim_verify(tpusim *sim, const tpusim_insn *prog, size_t n, uint64_t max_cycles, char *report,
                  size_t size)
{
    text t = {report, size, 0};
    if (size)
        report[0] = '\0';
    compare c = {.sim = sim, .prog = prog, .n = n};
    tpusim_read_hwcfg(sim, &c.cfg);
    if (n > INT32_MAX) {
        say(&t, "verify: programs are limited to %ld instructions", (long)INT32_MAX);
        return TPUSIM_DIFFER;
    }
    if (!(c.g = tpusim_golden_create(&c.cfg)) || load_golden(&c)) {
        say(&t, "verify: cannot set up the golden model (out of memory or device unreadable)");
        free_compare(&c);
        return TPUSIM_DIFFER;
    }
    /* ERROR_PC and SYNC_COUNT count from reset; this program starts where the device is now. */
    const uint32_t pc0 = tpusim_reg_read(sim, TPU_CSR_INSN_COUNT);
    const uint32_t sync0 = tpusim_reg_read(sim, TPU_CSR_SYNC_COUNT);
    const int gcode = tpusim_golden_run(c.g, prog, n, &c.stop);
    const int res = tpusim_run_program(sim, prog, n, max_cycles);

    char expected[256], actual[256];
    describe_outcome(&c, gcode, c.stop, expected, sizeof expected);
    if (res == TPUSIM_TIMEOUT) {
        say(&t, "HUNG: the device did not stop within %llu cycles (golden model: %s)",
            (unsigned long long)max_cycles, expected);
        free_compare(&c);
        return TPUSIM_HUNG;
    }

    int verdict = TPUSIM_AGREE;
    const int dcode = res == TPUSIM_ERROR ? (int)tpusim_reg_read(sim, TPU_CSR_ERROR_CODE) : 0;
    const size_t dpc = (uint32_t)(tpusim_reg_read(sim, TPU_CSR_ERROR_PC) - pc0);
    const int golden_halted = !gcode && c.stop < n;
    if (dcode != gcode || (gcode && dpc != c.stop) || (!gcode && !golden_halted)) {
        if (dcode)
            describe_outcome(&c, dcode, dpc, actual, sizeof actual);
        else
            snprintf(actual, sizeof actual, "halted");
        say(&t, "outcome: expected %s, device %s", expected, actual);
        verdict = TPUSIM_DIFFER;
    }
    const uint32_t dsync = tpusim_reg_read(sim, TPU_CSR_SYNC_COUNT) - sync0;
    if (dsync != tpusim_golden_sync_count(c.g)) {
        say(&t, "SYNC_COUNT: expected %u, device %u", tpusim_golden_sync_count(c.g), dsync);
        verdict = TPUSIM_DIFFER;
    }
    const int64_t diffs = compare_state(&c, &t);
    if (diffs < 0)
        say(&t, "verify: out of memory or device unreadable while comparing");
    if (diffs)
        verdict = TPUSIM_DIFFER;
    if (verdict == TPUSIM_AGREE)
        say(&t, "agree: %s", expected);
    free_compare(&c);
    return verdict;
}

/* verify.c - the one comparison of the device with the golden model (tpusim_compare), used by
 * tpusim_verify and by the driver's verification: compare memory (in given ranges, or all of it)
 * and UB and ACC, count the differences, and name the earliest instruction (in program order)
 * that was the last to write a differing location, by the instructions' footprints. Uses only the
 * public device API. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/tpusim.h"

enum { CHUNK = 4096 }; /* memory is compared and attributed in chunks of this many bytes */

typedef struct {
    char *buf;
    size_t size, pos;
} text;

/* Appends printf-style text, never past size; sep goes first unless the text is empty. */
static void say(text *t, const char *sep, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(text *t, const char *sep, const char *fmt, ...)
{
    if (t->pos && t->pos < t->size) {
        const int k = snprintf(t->buf + t->pos, t->size - t->pos, "%s", sep);
        t->pos = k >= 0 && t->pos + (size_t)k < t->size ? t->pos + (size_t)k : t->size;
    }
    if (t->pos >= t->size)
        return;
    va_list ap;
    va_start(ap, fmt);
    const int k = vsnprintf(t->buf + t->pos, t->size - t->pos, fmt, ap);
    va_end(ap);
    if (k > 0)
        t->pos = t->pos + (size_t)k < t->size ? t->pos + (size_t)k : t->size;
}

/* One differing location with its last writer (-1: none). */
typedef struct {
    int64_t writer;
    uint64_t addr; /* a memory location's address, else UINT64_MAX */
    char where[48], expected[24], actual[24];
} location;

/* A chunk of memory with differences: the last writer of each of its bytes. */
typedef struct {
    uint64_t index;
    int32_t *writer;
} chunk;

typedef struct {
    tpusim *sim;
    const tpusim_compare_spec *spec;
    tpusim_hwcfg cfg;
    tpusim_range *ranges; /* the memory compared, sorted, merged, inside memory */
    size_t nranges;
    chunk *chunks; /* with differences, ascending */
    size_t nchunks;
    uint8_t buf[CHUNK];              /* device bytes */
    int32_t *ub_writer, *acc_writer; /* per row, with spec->rows */
    int8_t *dev_ub;
    int32_t *dev_acc;
    uint64_t ub_diffs, acc_diffs, mem_diffs;
    location best, unwritten; /* earliest-writer location; first unwritten location */
    uint64_t unwritten_count;
    int oom;
} compare;

static int by_addr(const void *a, const void *b)
{
    const uint64_t x = ((const tpusim_range *)a)->addr, y = ((const tpusim_range *)b)->addr;
    return (x > y) - (x < y);
}

static void add_range(compare *c, uint64_t addr, uint64_t size)
{
    if (addr >= c->cfg.mem_size || !size || c->oom)
        return;
    if (size > c->cfg.mem_size - addr)
        size = c->cfg.mem_size - addr;
    if ((c->nranges & (c->nranges - 1)) == 0) { /* 0, 1, 2, 4, ...: full, grow */
        tpusim_range *v = realloc(c->ranges, (c->nranges ? 2 * c->nranges : 8) * sizeof *v);
        if (!v) {
            c->oom = 1;
            return;
        }
        c->ranges = v;
    }
    c->ranges[c->nranges++] = (tpusim_range){addr, size};
}

static void add_written(void *ctx, uint64_t first, uint64_t size, size_t insn)
{
    (void)insn;
    add_range(ctx, first, size);
}

/* The memory to compare, sorted and merged: all of it, or what the instructions wrote and the
 * spec's ranges. */
static int collect_ranges(compare *c)
{
    const tpusim_compare_spec *s = c->spec;
    if (s->all_memory) {
        add_range(c, 0, c->cfg.mem_size);
    } else {
        tpusim_for_each_write(s->prog, s->n, c->cfg.array_n, TPU_SPACE_MEM, add_written, c);
        for (size_t i = 0; i < s->nranges; i++)
            add_range(c, s->ranges[i].addr, s->ranges[i].size);
    }
    if (c->oom)
        return -1;
    if (c->nranges > 1)
        qsort(c->ranges, c->nranges, sizeof *c->ranges, by_addr);
    size_t out = 0;
    for (size_t i = 0; i < c->nranges; i++) {
        tpusim_range *last = out ? &c->ranges[out - 1] : NULL;
        const uint64_t end = c->ranges[i].addr + c->ranges[i].size;
        if (last && c->ranges[i].addr <= last->addr + last->size) {
            if (end > last->addr + last->size)
                last->size = end - last->addr;
        } else {
            c->ranges[out++] = c->ranges[i];
        }
    }
    c->nranges = out;
    return 0;
}

typedef int piece_fn(compare *c, uint64_t addr, const uint8_t *expect, const uint8_t *got,
                     size_t n);

/* Calls fn on every piece of the compared memory that lies in one chunk and differs: the device's
 * bytes beside the golden model's. -1 if the device cannot be read or fn fails. */
static int for_each_differing_piece(compare *c, piece_fn *fn)
{
    const uint8_t *expect = tpusim_golden_mem(c->spec->golden);
    for (size_t r = 0; r < c->nranges; r++) {
        const uint64_t end = c->ranges[r].addr + c->ranges[r].size;
        for (uint64_t at = c->ranges[r].addr; at < end;) {
            const uint64_t next = (at / CHUNK + 1) * CHUNK < end ? (at / CHUNK + 1) * CHUNK : end;
            const size_t n = (size_t)(next - at);
            if (tpusim_mem_read(c->sim, at, c->buf, n))
                return -1;
            if (memcmp(c->buf, expect + at, n) && fn(c, at, expect + at, c->buf, n))
                return -1;
            at = next;
        }
    }
    return 0;
}

/* piece_fn: notes the piece's chunk as one with differences. */
static int note_chunk(compare *c, uint64_t addr, const uint8_t *expect, const uint8_t *got,
                      size_t n)
{
    (void)expect, (void)got, (void)n;
    const uint64_t k = addr / CHUNK;
    if (c->nchunks && c->chunks[c->nchunks - 1].index == k) /* pieces come in ascending order */
        return 0;
    if ((c->nchunks & (c->nchunks - 1)) == 0) {
        chunk *v = realloc(c->chunks, (c->nchunks ? 2 * c->nchunks : 8) * sizeof *v);
        if (!v)
            return -1;
        c->chunks = v;
    }
    int32_t *w = malloc(CHUNK * sizeof *w);
    if (!w)
        return -1;
    for (size_t b = 0; b < CHUNK; b++)
        w[b] = -1;
    c->chunks[c->nchunks++] = (chunk){k, w};
    return 0;
}

static chunk *find_chunk(const compare *c, uint64_t k)
{
    size_t lo = 0, hi = c->nchunks;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (c->chunks[mid].index < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->nchunks && c->chunks[lo].index == k ? &c->chunks[lo] : NULL;
}

/* The last writer of every UB and ACC row (with spec->rows) and of every byte of a chunk with
 * differences, by the footprints of the instructions that ran (so their ranges are in bounds). */
static void mark_rows(int32_t *writer, uint64_t rows, const tpusim_access *a, int32_t w)
{
    for (uint64_t b = 0; b < a->count; b++)
        for (uint64_t r = a->first + b * a->step; r < a->first + b * a->step + a->size; r++)
            if (r < rows)
                writer[r] = w;
}

static void mark_bytes(void *ctx, uint64_t first, uint64_t size, size_t insn)
{
    compare *c = ctx;
    for (uint64_t k = first / CHUNK; k <= (first + size - 1) / CHUNK; k++) {
        chunk *ch = find_chunk(c, k);
        if (!ch)
            continue;
        const uint64_t from = first > k * CHUNK ? first : k * CHUNK;
        const uint64_t to = first + size < (k + 1) * CHUNK ? first + size : (k + 1) * CHUNK;
        for (uint64_t b = from; b < to; b++)
            ch->writer[b - k * CHUNK] = (int32_t)insn;
    }
}

static void find_writers(compare *c)
{
    const tpusim_compare_spec *s = c->spec;
    tpusim_for_each_write(s->prog, s->n, c->cfg.array_n, TPU_SPACE_MEM, mark_bytes, c);
    if (!s->rows)
        return;
    for (uint32_t r = 0; r < c->cfg.ub_rows; r++)
        c->ub_writer[r] = -1;
    for (uint32_t r = 0; r < c->cfg.acc_rows; r++)
        c->acc_writer[r] = -1;
    for (size_t i = 0; i < s->n; i++) {
        const tpusim_fields f = tpusim_decode(&s->prog[i]);
        tpusim_access acc[TPU_FOOTPRINT_MAX];
        const int k = tpusim_footprint(&f, c->cfg.array_n, acc);
        for (int j = 0; j < k; j++) {
            if (acc[j].write && acc[j].space == TPU_SPACE_UB)
                mark_rows(c->ub_writer, c->cfg.ub_rows, &acc[j], (int32_t)i);
            if (acc[j].write && acc[j].space == TPU_SPACE_ACC)
                mark_rows(c->acc_writer, c->cfg.acc_rows, &acc[j], (int32_t)i);
        }
    }
}

/* Where a differing location with this writer is reported, or NULL: the earliest writer (the
 * first location seen on ties) and the first location no instruction wrote. */
static location *keep(compare *c, int64_t writer)
{
    location *slot = NULL;
    if (writer < 0)
        slot = c->unwritten_count++ ? NULL : &c->unwritten;
    else if (c->best.writer < 0 || writer < c->best.writer)
        slot = &c->best;
    if (slot) {
        slot->writer = writer;
        slot->addr = UINT64_MAX;
    }
    return slot;
}

/* piece_fn: counts the piece's differing bytes and keeps the ones to report. */
static int attribute_bytes(compare *c, uint64_t addr, const uint8_t *expect, const uint8_t *got,
                           size_t n)
{
    const chunk *ch = find_chunk(c, addr / CHUNK);
    for (size_t b = 0; b < n; b++) {
        if (expect[b] == got[b])
            continue;
        c->mem_diffs++;
        location *l = keep(c, ch->writer[(addr + b) % CHUNK]);
        if (!l)
            continue;
        l->addr = addr + b;
        snprintf(l->where, sizeof l->where, "memory at 0x%llx", (unsigned long long)(addr + b));
        snprintf(l->expected, sizeof l->expected, "0x%02x", expect[b]);
        snprintf(l->actual, sizeof l->actual, "0x%02x", got[b]);
    }
    return 0;
}

/* Reads core 0's UB and ACC; returns whether they differ from the golden model's, or -1. */
static int rows_differ(compare *c)
{
    const uint32_t n = c->cfg.array_n;
    tpusim_golden *g = c->spec->golden;
    int differ = 0;
    for (uint32_t r = 0; r < c->cfg.ub_rows; r++) {
        if (tpusim_ub_read(c->sim, r, c->dev_ub + (size_t)r * n))
            return -1;
        differ |= memcmp(tpusim_golden_ub(g, r), c->dev_ub + (size_t)r * n, n) != 0;
    }
    for (uint32_t r = 0; r < c->cfg.acc_rows; r++) {
        if (tpusim_acc_read(c->sim, r, c->dev_acc + (size_t)r * n))
            return -1;
        differ |= memcmp(tpusim_golden_acc(g, r), c->dev_acc + (size_t)r * n,
                         n * sizeof *c->dev_acc) != 0;
    }
    return differ;
}

static void attribute_rows(compare *c)
{
    const uint32_t n = c->cfg.array_n;
    tpusim_golden *g = c->spec->golden;
    location *l;
    for (uint32_t r = 0; r < c->cfg.ub_rows; r++) {
        const int8_t *ev = tpusim_golden_ub(g, r), *av = c->dev_ub + (size_t)r * n;
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
        const int32_t *ev = tpusim_golden_acc(g, r), *av = c->dev_acc + (size_t)r * n;
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
}

static void describe_insn(const tpusim_compare_spec *s, size_t idx, char *buf, size_t size)
{
    char dis[128];
    snprintf(buf, size, "insn %zu `%s`", idx, tpusim_disasm(&s->prog[idx], dis, sizeof dis));
}

/* The comparison proper; c->best and c->unwritten hold what to report. */
static int64_t run_compare(compare *c)
{
    const uint64_t n = c->cfg.array_n;
    int rows = 0;
    if (collect_ranges(c) || for_each_differing_piece(c, note_chunk))
        return -1;
    if (c->spec->rows) {
        c->dev_ub = malloc(c->cfg.ub_rows * n + 1);
        c->dev_acc = malloc((c->cfg.acc_rows * n + 1) * sizeof *c->dev_acc);
        c->ub_writer = malloc((c->cfg.ub_rows + 1) * sizeof *c->ub_writer);
        c->acc_writer = malloc((c->cfg.acc_rows + 1) * sizeof *c->acc_writer);
        if (!c->dev_ub || !c->dev_acc || !c->ub_writer || !c->acc_writer ||
            (rows = rows_differ(c)) < 0)
            return -1;
    }
    if (!c->nchunks && !rows)
        return 0;
    find_writers(c);
    c->best.writer = c->unwritten.writer = -1;
    if (c->spec->rows)
        attribute_rows(c);
    if (for_each_differing_piece(c, attribute_bytes))
        return -1;
    return (int64_t)(c->ub_diffs + c->acc_diffs + c->mem_diffs);
}

int64_t tpusim_compare(tpusim *sim, const tpusim_compare_spec *spec, uint64_t *addr, char *report,
                       size_t size)
{
    text t = {report, size, 0};
    if (size)
        report[0] = '\0';
    compare *c = calloc(1, sizeof *c);
    if (!c) {
        say(&t, "; ", "compare: out of memory");
        return -1;
    }
    c->sim = sim;
    c->spec = spec;
    tpusim_read_hwcfg(sim, &c->cfg);
    const int64_t total = run_compare(c);
    if (addr)
        *addr = total > 0 ? (c->best.writer >= 0 ? c->best.addr : c->unwritten.addr) : UINT64_MAX;
    if (total < 0) {
        say(&t, "; ", "compare: out of memory or device unreadable");
    } else if (total) {
        say(&t, "; ", "%llu location%s differ%s (", (unsigned long long)total,
            total == 1 ? "" : "s", total == 1 ? "s" : "");
        const struct {
            const char *name;
            uint64_t count;
        } kinds[] = {{"UB", c->ub_diffs}, {"ACC", c->acc_diffs}, {"memory", c->mem_diffs}};
        const char *sep = "";
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
            if (kinds[i].count) {
                say(&t, sep, "%s %llu", kinds[i].name, (unsigned long long)kinds[i].count);
                sep = ", ";
            }
        say(&t, "", ")");
        if (c->best.writer >= 0) {
            char insn[192];
            describe_insn(spec, (size_t)c->best.writer, insn, sizeof insn);
            say(&t, "; ",
                "earliest last writer of a differing location: %s: %s: expected %s, "
                "device %s",
                insn, c->best.where, c->best.expected, c->best.actual);
        }
        if (c->unwritten_count)
            say(&t, "; ", "%llu written by no instruction, first: %s: expected %s, device %s",
                (unsigned long long)c->unwritten_count, c->unwritten.where, c->unwritten.expected,
                c->unwritten.actual);
    }
    for (size_t i = 0; i < c->nchunks; i++)
        free(c->chunks[i].writer);
    free(c->chunks);
    free(c->ranges);
    free(c->ub_writer);
    free(c->acc_writer);
    free(c->dev_ub);
    free(c->dev_acc);
    free(c);
    return total;
}

/* ------------------------------------------------------------ tpusim_verify -- */

/* The device's state before the run goes into the golden model. */
static int load_golden(tpusim *sim, tpusim_golden *g, const tpusim_hwcfg *cfg)
{
    if (tpusim_mem_read(sim, 0, tpusim_golden_mem(g), (size_t)cfg->mem_size))
        return -1;
    for (uint32_t r = 0; r < cfg->ub_rows; r++)
        if (tpusim_ub_read(sim, r, tpusim_golden_ub(g, r)))
            return -1;
    for (uint32_t r = 0; r < cfg->acc_rows; r++)
        if (tpusim_acc_read(sim, r, tpusim_golden_acc(g, r)))
            return -1;
    return 0;
}

static void describe_outcome(const tpusim_compare_spec *s, size_t n, int code, size_t idx,
                             char *buf, size_t size)
{
    char insn[192];
    if (code) {
        if (idx < n)
            describe_insn(s, idx, insn, sizeof insn);
        else
            snprintf(insn, sizeof insn, "insn %zu", idx);
        snprintf(buf, size, "error %s at %s", tpusim_fault_name((uint32_t)code), insn);
    } else if (idx < n) {
        snprintf(buf, size, "halted at insn %zu", idx);
    } else {
        snprintf(buf, size, "no HALT in %zu instructions", n);
    }
}

int tpusim_verify(tpusim *sim, const tpusim_insn *prog, size_t n, uint64_t max_cycles, char *report,
                  size_t size)
{
    text t = {report, size, 0};
    if (size)
        report[0] = '\0';
    tpusim_hwcfg cfg;
    tpusim_read_hwcfg(sim, &cfg);
    if (n > INT32_MAX) {
        say(&t, "\n", "verify: programs are limited to %ld instructions", (long)INT32_MAX);
        return TPUSIM_DIFFER;
    }
    tpusim_golden *g = tpusim_golden_create(&cfg);
    if (!g || load_golden(sim, g, &cfg)) {
        say(&t, "\n",
            "verify: cannot set up the golden model (out of memory or device "
            "unreadable)");
        tpusim_golden_destroy(g);
        return TPUSIM_DIFFER;
    }
    /* ERROR_PC and SYNC_COUNT count from reset; this program starts where the device is now. */
    const uint32_t pc0 = tpusim_reg_read(sim, TPU_CSR_INSN_COUNT);
    const uint32_t sync0 = tpusim_reg_read(sim, TPU_CSR_SYNC_COUNT);
    size_t stop;
    const int gcode = tpusim_golden_run(g, prog, n, &stop);
    const int res = tpusim_run_program(sim, prog, n, max_cycles);
    /* Everything before the golden model's stopping point ran on both. */
    const tpusim_compare_spec spec = {g, prog, stop, 1, NULL, 0, 1};

    char expected[256], actual[256];
    describe_outcome(&spec, n, gcode, stop, expected, sizeof expected);
    if (res == TPUSIM_TIMEOUT) {
        say(&t, "\n", "HUNG: the device did not stop within %llu cycles (golden model: %s)",
            (unsigned long long)max_cycles, expected);
        tpusim_golden_destroy(g);
        return TPUSIM_HUNG;
    }

    int verdict = TPUSIM_AGREE;
    const int dcode = res == TPUSIM_ERROR ? (int)tpusim_reg_read(sim, TPU_CSR_ERROR_CODE) : 0;
    const size_t dpc = (uint32_t)(tpusim_reg_read(sim, TPU_CSR_ERROR_PC) - pc0);
    const int golden_halted = !gcode && stop < n;
    if (dcode != gcode || (gcode && dpc != stop) || (!gcode && !golden_halted)) {
        if (dcode)
            describe_outcome(&spec, n, dcode, dpc, actual, sizeof actual);
        else
            snprintf(actual, sizeof actual, "halted");
        say(&t, "\n", "outcome: expected %s, device %s", expected, actual);
        verdict = TPUSIM_DIFFER;
    }
    const uint32_t dsync = tpusim_reg_read(sim, TPU_CSR_SYNC_COUNT) - sync0;
    if (dsync != tpusim_golden_sync_count(g)) {
        say(&t, "\n", "SYNC_COUNT: expected %u, device %u", tpusim_golden_sync_count(g), dsync);
        verdict = TPUSIM_DIFFER;
    }
    char found[1024];
    const int64_t diffs = tpusim_compare(sim, &spec, NULL, found, sizeof found);
    if (diffs) {
        say(&t, "\n", "%s", found);
        verdict = TPUSIM_DIFFER;
    }
    if (verdict == TPUSIM_AGREE)
        say(&t, "\n", "agree: %s", expected);
    tpusim_golden_destroy(g);
    return verdict;
}

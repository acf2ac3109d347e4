/* gtkw.c - GTKWave save file for a tpusim trace (gtkw.h).
 *
 * Beside wave.fst (or wave.vcd) it writes wave.gtkw, a layout of the core's signals grouped to
 * show the systolic dataflow, and wave.opcodes.txt, the translate filter that shows the head
 * opcode by name (Verilator's FST carries no enum names). The trace is read once, as VCD text
 * (an FST through fst2vcd), for two things:
 *   - the exact declaration of every signal the layout names: a save file must give a vector with
 *     its range, and GTKWave silently drops a name it cannot find, so a missing signal is an
 *     error here instead of a gap in the viewer;
 *   - the first matmul: the view opens on its first UB read (named marker A) and its first
 *     accumulator write (marker B), 2N+2 cycles later.
 * Trace time is 10 ns per cycle (sim/device.cpp).
 *
 * The save-file syntax is GTKWave's own: "@flags" (hex TR_* bits of its analyzer.h) applies to
 * the traces that follow, "-text" is a comment trace (a group's name with the group flags),
 * "+{alias} name" renames a trace, "#{name} (i)vec[m:l] ..." builds a vector from bits of
 * another (bit i counted from the left), "^1 file" selects a translate filter file. Aliases hold
 * no '.': GTKWave shows only what follows the last one. */
#define _POSIX_C_SOURCE 200809L

#include "sim/gtkw.h"
#include "io/tpuio.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/tpusim.h"

extern char **environ;

/* GTKWave trace flags (TR_* in its analyzer.h). */
enum {
    TR_HEX = 0x2,
    TR_DEC = 0x4,
    TR_BIN = 0x8,
    TR_RJUSTIFY = 0x20,
    TR_BLANK = 0x200,
    TR_SIGNED = 0x400,
    TR_FTRANSLATED = 0x2000,
    TR_GRP_BEGIN = 0x800000,
    TR_GRP_END = 0x1000000,
};
enum {
    FMT_BIT = TR_RJUSTIFY | TR_BIN, /* also bit vectors: one character per lane */
    FMT_HEX = TR_RJUSTIFY | TR_HEX,
    FMT_DEC = TR_RJUSTIFY | TR_DEC,
    FMT_SDEC = TR_RJUSTIFY | TR_SIGNED,
    FMT_OPCODE = TR_RJUSTIFY | TR_DEC | TR_FTRANSLATED, /* filter keys are decimal */
};

#define CYCLE_NS 10u
#define LANES_SHOWN 8u /* lanes 0..7 and N-1 of rows and columns; all of them up to N = 9 */
/* Window geometry. The wave pane is what is left of the width after the names pane, the
 * collapsed signal-search-tree tab, borders and scroll bar (measured: about 70 pixels). */
#define WIN_W 1400
#define WIN_H 1000
#define NAMES_W 300 /* GTKWave widens it to fit the longest name: keep comments short */
#define WAVE_W (WIN_W - NAMES_W - 70)

#define MXU "tpu_core.u_mxu."
#define PE "tpu_core.u_mxu.u_array.g_row[%u].g_col[%u].u_pe.%s"

/* ------------------------------------------------------------ layout -- */

#define RANGE_LEN 32 /* "[4095:0]" and room to spare */

/* A signal the layout names, as declared in the trace. */
typedef struct {
    char *name;            /* "TOP.tpu_core.busy" */
    char range[RANGE_LEN]; /* "[7:0]", or "" for a scalar */
    char *id;              /* VCD identifier; NULL until the trace declares it */
} signal_ref;

/* The layout runs twice: first with out == NULL to collect the signals it names, then, once the
 * trace has declared them, to write the save file. */
typedef struct {
    FILE *out;
    const char *filter; /* absolute path of the opcode filter */
    const char *core;   /* the core's scope: "tpu_core", or a chip's core 0 */
    unsigned n;
    signal_ref *sigs;
    size_t count, cap;
    int oom;
} layout;

static signal_ref *find_sig(const layout *l, const char *name)
{
    for (size_t i = 0; i < l->count; i++)
        if (!strcmp(l->sigs[i].name, name))
            return &l->sigs[i];
    return NULL;
}

/* The trace's name of a path the layout gives under "tpu_core": TOP.<the core's scope>... */
static void trace_name(const layout *l, const char *path, char *name, size_t size)
{
    const size_t core = strlen("tpu_core");
    if (!strncmp(path, "tpu_core", core))
        snprintf(name, size, "TOP.%s%s", l->core, path + core);
    else
        snprintf(name, size, "TOP.%s", path);
}

static signal_ref *find_path(const layout *l, const char *path)
{
    char name[256];
    trace_name(l, path, name, sizeof name);
    return find_sig(l, name);
}

/* The signal of path: registered while collecting, its declaration while writing. */
static signal_ref *use_sig(layout *l, const char *path)
{
    char name[256];
    trace_name(l, path, name, sizeof name);
    signal_ref *s = find_sig(l, name);
    if (s || l->out)
        return s;
    if (l->count == l->cap) {
        const size_t cap = l->cap ? 2 * l->cap : 64;
        signal_ref *grown = realloc(l->sigs, cap * sizeof *grown);
        if (!grown) {
            l->oom = 1;
            return NULL;
        }
        l->sigs = grown;
        l->cap = cap;
    }
    s = &l->sigs[l->count];
    *s = (signal_ref){.name = strdup(name)};
    if (!s->name) {
        l->oom = 1;
        return NULL;
    }
    l->count++;
    return s;
}

static void blank_trace(layout *l, unsigned flags, const char *text)
{
    if (l->out)
        fprintf(l->out, "@%x\n-%s\n", flags, text);
}

static void group(layout *l, const char *name) { blank_trace(l, TR_BLANK | TR_GRP_BEGIN, name); }
static void end_group(layout *l, const char *name) { blank_trace(l, TR_BLANK | TR_GRP_END, name); }
static void comment(layout *l, const char *text) { blank_trace(l, TR_BLANK, text); }

static void sig(layout *l, unsigned flags, const char *alias, const char *path)
{
    const signal_ref *s = use_sig(l, path);
    if (!l->out || !s)
        return;
    fprintf(l->out, "@%x\n", flags);
    if (flags & TR_FTRANSLATED)
        fprintf(l->out, "^1 %s\n", l->filter);
    fprintf(l->out, "+{%s} %s%s\n", alias, s->name, s->range);
}

/* Port `port` of the PE at row r, column c. */
static void pe_sig(layout *l, unsigned flags, const char *alias, unsigned r, unsigned c,
                   const char *port)
{
    char path[160];
    snprintf(path, sizeof path, PE, r, c, port);
    sig(l, flags, alias, path);
}

/* Lane `lane` (bits 32 lane + 31 .. 32 lane) of the 32N-bit vector at path, as signed decimal. */
static void int32_lane(layout *l, const char *alias, const char *path, unsigned lane)
{
    const signal_ref *s = use_sig(l, path);
    if (!l->out || !s)
        return;
    /* Declared [msb:0] (check_array): bit b is position msb - b from the left. */
    const unsigned msb = (unsigned)strtoul(s->range + 1, NULL, 10);
    fprintf(l->out, "@%x\n#{%s}", FMT_SDEC, alias);
    for (unsigned b = 32 * lane + 32; b-- > 32 * lane;)
        fprintf(l->out, " (%u)%s%s", msb - b, s->name, s->range);
    fputc('\n', l->out);
}

/* The lane shown after lane i: lanes 0..LANES_SHOWN-1, then n-1; n when done. */
static unsigned next_lane(unsigned i, unsigned n)
{
    return i + 1 < LANES_SHOWN || i + 1 >= n ? i + 1 : n - 1;
}

static void lanes_note(layout *l, const char *what)
{
    char text[128];
    if (l->n <= LANES_SHOWN + 1)
        return;
    snprintf(text, sizeof text, "(%s %u-%u not shown)", what, LANES_SHOWN, l->n - 2);
    comment(l, text);
}

static void run_layout(layout *l)
{
    const unsigned n = l->n;
    char alias[64], text[160];

    group(l, "Control");
    sig(l, FMT_BIT, "clk", "clk");
    sig(l, FMT_OPCODE, "opcode (queue head)", "tpu_core.seq_op");
    sig(l, FMT_BIT, "insn_start (issue)", "tpu_core.insn_start");
    sig(l, FMT_BIT, "STATUS busy", "tpu_core.busy");
    sig(l, FMT_BIT, "STATUS halted", "tpu_core.halted");
    sig(l, FMT_BIT, "STATUS error", "tpu_core.error");
    sig(l, FMT_DEC, "ERROR_CODE", "tpu_core.error_code");
    sig(l, FMT_DEC, "IQ occupancy", "tpu_core.u_seq.q_count");
    end_group(l, "Control");

    group(l, "Weights");
    sig(l, FMT_DEC, "FIFO tiles", "tpu_core.u_wfifo.count");
    sig(l, FMT_BIT, "FIFO push", "tpu_core.u_wfifo.push");
    sig(l, FMT_BIT, "FIFO pop", "tpu_core.u_wfifo.pop");
    comment(l, "column c shifts c cycles later");
    snprintf(alias, sizeof alias, "shift en, cols %u-0", n - 1);
    sig(l, FMT_BIT, alias, MXU "we_sk");
    snprintf(alias, sizeof alias, "shift bank, cols %u-0", n - 1);
    sig(l, FMT_BIT, alias, MXU "ws_sk");
    for (unsigned c = 0; c < n; c = next_lane(c, n)) {
        snprintf(alias, sizeof alias, "col %u w_in", c);
        pe_sig(l, FMT_SDEC, alias, 0, c, "w_in");
    }
    lanes_note(l, "columns");
    end_group(l, "Weights");

    group(l, "Activations");
    sig(l, FMT_BIT, "UB read", MXU "ub_en");
    sig(l, FMT_HEX, "UB row", MXU "ub_addr");
    comment(l, "row r enters r cycles later");
    snprintf(alias, sizeof alias, "bank, rows %u-0", n - 1);
    sig(l, FMT_BIT, alias, MXU "s_sk");
    for (unsigned r = 0; r < n; r = next_lane(r, n)) {
        snprintf(alias, sizeof alias, "row %u a_in", r);
        pe_sig(l, FMT_SDEC, alias, r, 0, "a_in");
    }
    lanes_note(l, "rows");
    end_group(l, "Activations");

    group(l, "Partial sums");
    comment(l, "column c leaves c cycles later");
    comment(l, "psum: int32 (int8 rows), fsum: fp32 bits (bf16 rows)");
    for (unsigned c = 0; c < n; c = next_lane(c, n)) {
        snprintf(alias, sizeof alias, "col %u psum", c);
        pe_sig(l, FMT_SDEC, alias, n - 1, c, "p_out");
        snprintf(alias, sizeof alias, "col %u fsum", c);
        pe_sig(l, FMT_HEX, alias, n - 1, c, "q_out");
    }
    lanes_note(l, "columns");
    snprintf(text, sizeof text, "written %u cycles after UB read", 2 * n + 2);
    comment(l, text);
    sig(l, FMT_BIT, "acc_en", MXU "acc_en");
    sig(l, FMT_HEX, "acc_addr", MXU "acc_addr");
    sig(l, FMT_BIT, "acc_accumulate", MXU "acc_accumulate");
    sig(l, FMT_BIT, "acc_bf16", MXU "acc_bf16");
    for (unsigned c = 0; c < n; c = next_lane(c, n)) {
        snprintf(alias, sizeof alias, "col %u acc_data", c);
        int32_lane(l, alias, MXU "acc_data", c);
    }
    lanes_note(l, "columns");
    end_group(l, "Partial sums");

    group(l, "DMA");
    sig(l, FMT_BIT, "req valid", "tpu_core.mem_req_valid");
    sig(l, FMT_BIT, "req ready", "tpu_core.mem_req_ready");
    sig(l, FMT_BIT, "req we", "tpu_core.mem_req_we");
    sig(l, FMT_HEX, "req addr", "tpu_core.mem_req_addr");
    sig(l, FMT_DEC, "req len", "tpu_core.mem_req_len");
    sig(l, FMT_DEC, "req id", "tpu_core.mem_req_id");
    sig(l, FMT_BIT, "rsp valid", "tpu_core.mem_rsp_valid");
    sig(l, FMT_BIT, "rsp ready", "tpu_core.mem_rsp_ready");
    sig(l, FMT_DEC, "rsp id", "tpu_core.mem_rsp_id");
    sig(l, FMT_BIT, "rsp err", "tpu_core.mem_rsp_err");
    end_group(l, "DMA");
}

/* ------------------------------------------------------------- trace -- */

/* The trace as VCD text: the file itself, or fst2vcd's output (pid != 0). */
typedef struct {
    FILE *f;
    pid_t pid;
} vcd_stream;

static int open_vcd(const char *path, vcd_stream *v, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        tpuio_err(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    int ch;
    while ((ch = getc(f)) == ' ' || ch == '\t' || ch == '\r' || ch == '\n')
        ;
    if (ch == '$') { /* VCD starts with a declaration; FST is binary */
        rewind(f);
        *v = (vcd_stream){f, 0};
        return 0;
    }
    fclose(f);

    int fds[2];
    if (pipe(fds)) {
        tpuio_err(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    char *argv[] = {"fst2vcd", "-f", (char *)path, NULL};
    const int rc = posix_spawnp(&v->pid, "fst2vcd", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc) {
        close(fds[0]);
        tpuio_err(err, errlen, "cannot run fst2vcd (gtkwave package) to read %s: %s", path,
                  strerror(rc));
        return -1;
    }
    v->f = fdopen(fds[0], "r");
    if (!v->f) {
        tpuio_err(err, errlen, "fdopen: %s", strerror(errno));
        close(fds[0]);
        kill(v->pid, SIGTERM);
        waitpid(v->pid, NULL, 0);
        return -1;
    }
    return 0;
}

/* Returns 0 if the whole stream was good; stopping early ends fst2vcd, which is then fine. */
static int close_vcd(vcd_stream *v, int early)
{
    fclose(v->f);
    if (!v->pid)
        return 0;
    if (early)
        kill(v->pid, SIGTERM);
    int status;
    while (waitpid(v->pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return early || (WIFEXITED(status) && WEXITSTATUS(status) == 0) ? 0 : -1;
}

#define NO_TIME UINT64_MAX

/* Times (ns) found in the trace. */
typedef struct {
    uint64_t first; /* first timestamp */
    uint64_t read;  /* first rise of the MXU's UB read */
    uint64_t write; /* first rise of its accumulator write after that */
} trace_times;

/* "$var wire 8 # seq_op [7:0] $end" under the current scope: fills in a signal the layout
 * names. Returns -1 on a malformed declaration. */
static int declare(layout *l, const char *scope, const char *line)
{
    char id[64], name[256], range[RANGE_LEN];
    const int got = sscanf(line, "$var %*s %*s %63s %255s %31s", id, name, range); /* RANGE_LEN */
    if (got < 2)
        return -1;
    char full[1024];
    snprintf(full, sizeof full, "%s.%s", scope, name);
    signal_ref *s = find_sig(l, full);
    if (!s || s->id)
        return 0;
    if (got == 3 && range[0] == '[')
        strcpy(s->range, range);
    s->id = strdup(id);
    return s->id ? 0 : -1;
}

/* Reads the declarations, then value changes until the first matmul's UB read and accumulator
 * write have been seen. */
static int read_trace(layout *l, const char *path, trace_times *t, char *err, size_t errlen)
{
    vcd_stream v;
    if (open_vcd(path, &v, err, errlen))
        return -1;
    *t = (trace_times){NO_TIME, NO_TIME, NO_TIME};
    const char *ub_en = NULL, *acc_en = NULL; /* their VCD identifiers */
    const char *missing = NULL;
    char scope[1024] = "";
    int header = 1, bad = 0;
    uint64_t now = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while (!bad && !missing && t->write == NO_TIME && (len = getline(&line, &cap, v.f)) > 0) {
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = 0;
        if (header) {
            char name[256];
            if (!strncmp(line, "$scope", 6) && sscanf(line, "$scope %*s %255s", name) == 1) {
                const size_t at = strlen(scope);
                const int w = snprintf(scope + at, sizeof scope - at, "%s%s", at ? "." : "", name);
                bad = w < 0 || (size_t)w >= sizeof scope - at;
            } else if (!strncmp(line, "$upscope", 8)) {
                char *dot = strrchr(scope, '.');
                *(dot ? dot : scope) = 0;
            } else if (!strncmp(line, "$var", 4)) {
                bad = declare(l, scope, line) != 0;
            } else if (!strncmp(line, "$enddefinitions", 15)) {
                header = 0;
                for (size_t i = 0; i < l->count && !missing; i++)
                    if (!l->sigs[i].id)
                        missing = l->sigs[i].name;
                if (!missing) {
                    ub_en = find_path(l, MXU "ub_en")->id;
                    acc_en = find_path(l, MXU "acc_en")->id;
                }
            }
        } else if (line[0] == '#') {
            now = strtoull(line + 1, NULL, 10);
            if (t->first == NO_TIME)
                t->first = now;
        } else if (line[0] == '1') { /* a scalar rises */
            if (t->read == NO_TIME) {
                if (!strcmp(line + 1, ub_en))
                    t->read = now;
            } else if (!strcmp(line + 1, acc_en)) {
                t->write = now;
            }
        }
    }
    free(line);
    const int failed = close_vcd(&v, t->write != NO_TIME || missing || bad);
    if (missing) {
        tpuio_err(err, errlen,
                  "%s has no signal %s: not a trace of a tpusim core with a %ux%u array", path,
                  missing, l->n, l->n);
        return -1;
    }
    if (failed || bad || header) {
        tpuio_err(err, errlen, "cannot read %s as a trace (FST or VCD)", path);
        return -1;
    }
    return 0;
}

/* -------------------------------------------------------------- files -- */

/* The save file and the filter are built in memory and staged together (io/tpuio.h): one
 * that cannot be written leaves neither. */
typedef struct {
    FILE *f;
    char *text;
    size_t len;
} text_file;

static void write_filter(FILE *f)
{
    fputs("# tpusim opcodes (docs/isa.md) for a GTKWave translate filter: decimal value, name\n"
          "0 (none)\n",
          f);
#define OPCODE(NAME) fprintf(f, "%u %s\n", (unsigned)TPU_OP_##NAME, #NAME);
    TPU_FOR_EACH_OPCODE(OPCODE)
#undef OPCODE
}

static long long time_or_none(uint64_t t) { return t == NO_TIME ? -1 : (long long)t; }

static void write_save(layout *l, FILE *f, const char *path, const char *trace,
                       const trace_times *t)
{
    /* From N+2 cycles before the first UB read to N+2 cycles after its accumulator write. */
    const uint64_t pad = (uint64_t)CYCLE_NS * (l->n + 2);
    const uint64_t first = t->first == NO_TIME ? 0 : t->first;
    const uint64_t read = t->read == NO_TIME ? first : t->read;
    const uint64_t start = read > first + pad ? read - pad : first;
    const uint64_t write =
        t->write == NO_TIME ? read + (uint64_t)CYCLE_NS * (2 * l->n + 2) : t->write;
    const uint64_t end = write + pad;
    /* GTKWave's zoom: log2 of pixels per 200 time units (as its zoom-to-fit computes it). */
    const double zoom = -log2(200.0 * (double)(end - start) / WAVE_W);

    fprintf(f,
            "[*] tpusim: core signals of a %ux%u array, grouped along the dataflow\n"
            "[dumpfile] \"%s\"\n"
            "[savefile] \"%s\"\n"
            "[timestart] %llu\n"
            "[size] %d %d\n"
            "[pos] -1 -1\n"
            "*%.6f %lld %lld %lld\n"
            "[markername] AUB read\n"
            "[markername] BACC write\n"
            "[sst_expanded] 0\n"
            "[signals_width] %d\n",
            l->n, l->n, trace, path, (unsigned long long)start, WIN_W, WIN_H, zoom,
            time_or_none(t->write), time_or_none(t->read), time_or_none(t->write), NAMES_W);
    l->out = f;
    run_layout(l);
}

/* malloc'ed: the first alen bytes of a, then b. */
static char *concat(const char *a, size_t alen, const char *b)
{
    const size_t blen = strlen(b);
    char *s = malloc(alen + blen + 1);
    if (s) {
        memcpy(s, a, alen);
        memcpy(s + alen, b, blen + 1);
    }
    return s;
}

/* malloc'ed absolute form of path, so that the save file works from any directory. */
static char *absolute(const char *path, char *err, size_t errlen)
{
    char cwd[4096] = "";
    if (path[0] != '/') {
        if (!getcwd(cwd, sizeof cwd - 1)) {
            tpuio_err(err, errlen, "getcwd: %s", strerror(errno));
            return NULL;
        }
        strcat(cwd, "/");
    }
    char *abs = concat(cwd, strlen(cwd), path);
    if (!abs)
        tpuio_err(err, errlen, "out of memory");
    return abs;
}

/* The accumulator write data must be 32N bits: a trace of a larger array has every signal
 * a smaller layout names. */
static int check_array(const layout *l, const char *trace, char *err, size_t errlen)
{
    const signal_ref *acc = find_path(l, MXU "acc_data");
    char want[32];
    snprintf(want, sizeof want, "[%u:0]", 32 * l->n - 1);
    if (!strcmp(acc->range, want))
        return 0;
    tpuio_err(err, errlen, "%s: %s is %s, not %s: the trace is not of a %ux%u array", trace,
              acc->name, acc->range, want, l->n, l->n);
    return -1;
}

int tpusim_gtkw_write(const char *trace_path, unsigned array_n, int chip, char *err, size_t errlen)
{
    if (!trace_path || !*trace_path || !array_n) {
        tpuio_err(err, errlen, "tpusim_gtkw_write: no trace path or array size");
        return -1;
    }
    if (strchr(trace_path, '\n')) {
        tpuio_err(err, errlen, "trace path contains a newline, which a save file cannot hold");
        return -1;
    }
    char *trace = absolute(trace_path, err, errlen);
    if (!trace)
        return -1;
    /* wave.fst -> wave.gtkw and wave.opcodes.txt */
    const char *name = strrchr(trace, '/') + 1;
    const char *dot = strrchr(name, '.');
    const size_t stem = (size_t)((dot && dot != name ? dot : name + strlen(name)) - trace);
    char *save = concat(trace, stem, ".gtkw");
    char *filter = concat(trace, stem, ".opcodes.txt");

    layout l = {
        .n = array_n, .filter = filter, .core = chip ? "tpu_chip.g_core[0].u_core" : "tpu_core"};
    trace_times t;
    int rc = -1;
    if (save && filter)
        run_layout(&l);
    if (!save || !filter || l.oom)
        tpuio_err(err, errlen, "out of memory");
    else if (!read_trace(&l, trace, &t, err, errlen) && !check_array(&l, trace, err, errlen)) {
        text_file out[2] = {{0}};
        tpuio_staged files[2] = {{0}};
        for (int i = 0; i < 2; i++)
            out[i].f = open_memstream(&out[i].text, &out[i].len);
        if (out[0].f && out[1].f) {
            write_filter(out[0].f);
            write_save(&l, out[1].f, save, trace, &t);
        }
        int ok = 1;
        for (int i = 0; i < 2; i++)
            ok &= out[i].f && !ferror(out[i].f) && !fclose(out[i].f);
        if (!ok)
            tpuio_err(err, errlen, "out of memory");
        else if (!tpuio_stage(&files[0], filter, out[0].text, out[0].len, err, errlen) &&
                 !tpuio_stage(&files[1], save, out[1].text, out[1].len, err, errlen))
            rc = 0;
        int failed = 0;
        char why[256];
        if (tpuio_commit(files, 2, !rc, &failed, why, sizeof why) && !rc) {
            tpuio_err(err, errlen, "%s: %s", files[failed].path, why);
            rc = -1;
        }
        for (int i = 0; i < 2; i++)
            free(out[i].text);
    }

    for (size_t i = 0; i < l.count; i++) {
        free(l.sigs[i].name);
        free(l.sigs[i].id);
    }
    free(l.sigs);
    free(trace);
    free(save);
    free(filter);
    return rc;
}

/* tpusim.h - the simulator layer's public interface (C11).
 *
 * Three parts, all described in docs/isa.md:
 *   1. the instruction set: encodings, names and a disassembler;
 *   2. the cycle-accurate device: the verilated tpu_core, or a tpu_chip of several cores on one
 *      memory port, plus a memory model;
 *   3. the golden model: an instruction-level model of the same ISA (no timing).
 * No Verilator or C++ type appears here. */
#ifndef TPU_SIM_TPUSIM_H
#define TPU_SIM_TPUSIM_H

#include <stddef.h>
#include <stdint.h>

/* The ISA's constants (opcodes, flags, fault codes, field layout, CSR offsets and bits,
 * performance counters), generated from rtl/tpu_isa.toml. */
#include "rtl/tpu_isa.h"
/* The device's configuration (tpusim_config) and its limits. */
#include "sim/config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- ISA -- */

/* One instruction as little-endian words (w[0] = bits 31:0). */
typedef struct {
    uint32_t w[TPU_INSN_WORDS];
} tpusim_insn;

/* Decoded fields. */
typedef struct {
    uint32_t op, flags, rows, a, b, len, stride;
} tpusim_fields;

tpusim_insn tpusim_encode(uint32_t op, uint32_t flags, uint32_t rows, uint32_t a, uint32_t b,
                          uint32_t len, uint32_t stride);
tpusim_fields tpusim_decode(const tpusim_insn *insn);
const char *tpusim_opcode_name(uint32_t op);  /* "MATMUL", or "?" */
const char *tpusim_fault_name(uint32_t code); /* "UB_RANGE", or "?" */
const char *tpusim_perf_name(int counter);    /* "mxu_busy", or "?" */
/* Writes one line of assembly ("MATMUL.LOAD.ACC rows=16 ub=0 acc=32") into buf; returns buf. */
char *tpusim_disasm(const tpusim_insn *insn, char *buf, size_t size);

/* Hardware configuration, as the ID registers report it. */
typedef struct {
    uint32_t array_n, ub_rows, acc_rows, wfifo_tiles, iq_depth;
    uint64_t mem_size;
} tpusim_hwcfg;

/* Footprints (docs/isa.md "Footprints", the opcodes' reads and writes in rtl/tpu_isa.toml): an
 * access of an instruction is count blocks of its space, block i = [first + i * step, + size) in
 * the space's units (UB or ACC rows, memory bytes, weight-FIFO tiles, parameter sets). */
typedef struct {
    int space; /* enum tpu_space */
    int write; /* 1: writes the blocks, 0: reads them */
    uint64_t first, count, step, size;
} tpusim_access;

/* The accesses of instruction f on an array of size array_n into out; returns how many (at most
 * TPU_FOOTPRINT_MAX). Meaningful once f passes docs/isa.md's operand checks (BAD_OPERAND). */
int tpusim_footprint(const tpusim_fields *f, uint32_t array_n, tpusim_access *out);
/* The end of the range covering a's blocks (first when it has none). */
uint64_t tpusim_access_end(const tpusim_access *a);
/* The first range check of docs/isa.md "Validation and errors" that the accesses fail (UB, then
 * ACC, then memory), as a fault code; TPU_FAULT_NONE when every one lies inside cfg. */
int tpusim_range_fault(const tpusim_access *acc, int count, const tpusim_hwcfg *cfg);
/* Calls fn for the blocks that prog[0..n)'s instructions write in space (enum tpu_space), in
 * program order; an access's blocks that touch or overlap come as one range. */
typedef void tpusim_block_fn(void *ctx, uint64_t first, uint64_t size, size_t insn);
void tpusim_for_each_write(const tpusim_insn *prog, size_t n, uint32_t array_n, int space,
                           tpusim_block_fn *fn, void *ctx);

/* ------------------------------------------------ cycle-accurate device -- */

typedef struct tpusim tpusim;

/* Every field of cfg (sim/config.h) set: the 16 x 16 lone core (else the smallest built), 64 MiB,
 * 32 cycles, 64 bytes per cycle, the built-in memory. */
void tpusim_config_default(tpusim_config *cfg);
/* The array sizes of the lone cores built into this library, ascending; returns how many (up to
 * max). */
int tpusim_arrays(uint32_t *sizes, int max);
/* The chips built into this library as (arrays[i], cores[i]) pairs, ascending by array size, then
 * cores; returns how many (up to max). */
int tpusim_chips(uint32_t *arrays, uint32_t *cores, int max);

/* NULL on failure, with the reason in err. The device comes out of reset with MEM_SIZE set. */
tpusim *tpusim_create(const tpusim_config *cfg, char *err, size_t errlen);
void tpusim_destroy(tpusim *sim);
/* Pulse rst for a cycle (every core and the chip CSRs) and set MEM_SIZE (every core's, in one
 * cycle). Memories keep their contents; the memory model's queues are emptied. */
void tpusim_reset(tpusim *sim);
void tpusim_read_hwcfg(tpusim *sim, tpusim_hwcfg *out); /* read from core 0's ID registers */
/* C, the cores of a chip; 1 for a lone core (core 0). */
uint32_t tpusim_cores(const tpusim *sim);

uint64_t tpusim_cycle(const tpusim *sim); /* clock edges since creation */
void tpusim_step(tpusim *sim, uint64_t cycles);

uint32_t tpusim_reg_read(tpusim *sim, uint32_t offset);          /* no clock edge */
void tpusim_reg_write(tpusim *sim, uint32_t offset, uint32_t v); /* one clock edge */
uint64_t tpusim_perf(tpusim *sim, int counter);                  /* no clock edge */

/* Offer one instruction for one clock edge. Returns 1 if the queue took it, 0 if it was full. */
int tpusim_push(tpusim *sim, const tpusim_insn *insn);

enum tpusim_result {
    TPUSIM_HALTED = 0,  /* a HALT retired */
    TPUSIM_ERROR = 1,   /* the core stopped with ERROR_CODE set */
    TPUSIM_TIMEOUT = 2, /* max_cycles clock edges passed first */
};
/* Step until HALTED or ERROR, at most max_cycles edges. */
int tpusim_run(tpusim *sim, uint64_t max_cycles);
/* Push a whole program as queue space frees up and run it; the program should end in HALT.
 * max_cycles bounds the whole call. */
int tpusim_run_program(tpusim *sim, const tpusim_insn *prog, size_t n, uint64_t max_cycles);

/* Cores of a chip. The functions above without a core argument act on core 0 (and the run
 * functions leave the other cores alone: they are clocked, not pushed to nor waited for). These
 * act on core k; a k >= tpusim_cores() reads as zero (ub/acc: -1) and its writes and pushes
 * only spend their clock edge (push: 0). */
uint32_t tpusim_core_reg_read(tpusim *sim, uint32_t core, uint32_t offset);
void tpusim_core_reg_write(tpusim *sim, uint32_t core, uint32_t offset, uint32_t v);
uint64_t tpusim_core_perf(tpusim *sim, uint32_t core, int counter);
int tpusim_core_push(tpusim *sim, uint32_t core, const tpusim_insn *insn);
int tpusim_core_ub_read(tpusim *sim, uint32_t core, uint32_t row, int8_t *dst);
int tpusim_core_acc_read(tpusim *sim, uint32_t core, uint32_t row, int32_t *dst);
/* Run a program on each core concurrently, as tpusim_run_program does on one: progs[k] (n[k]
 * instructions) for core k < tpusim_cores(); progs[k] NULL leaves core k out (neither pushed to
 * nor waited for), n[k] 0 only runs what it holds. Every cycle each core that still has
 * instructions is offered its next one. Steps until every core taking part stopped (a HALT retired
 * after its last instruction, or an error), at most max_cycles edges. results[k] (results may be
 * NULL) gets core k's tpusim_result, for the cores taking part. Returns TPUSIM_TIMEOUT if any
 * core timed out, else TPUSIM_ERROR if any stopped with an error, else TPUSIM_HALTED. */
int tpusim_run_programs(tpusim *sim, const tpusim_insn *const *progs, const size_t *n,
                        uint64_t max_cycles, int *results);

/* Feeds: what a control processor pushes into a core's queue, replayed on the device clock. The
 * firmware's pushes and the cycles it spends between them (firmware/firmware.h's cost model) do
 * not depend on the device's timing, so they are recorded up front and then replayed edge by
 * edge, which lets several cores' control processors run side by side in simulated time. Replay:
 * entry i waits its cycles, then offers its instruction every edge until the queue takes it.
 * An attached feed is replayed by every clock edge the simulator makes (tpusim_step, the runs,
 * register writes, the other cores' pushes). */
typedef struct tpusim_feed tpusim_feed;
tpusim_feed *tpusim_feed_new(void); /* NULL if out of memory */
void tpusim_feed_free(tpusim_feed *f);
void tpusim_feed_clear(tpusim_feed *f); /* empty, rewound; keeps its storage */
/* Append: cycles to spend before the next push (they add up), or the next push. -1 if out of
 * memory (the feed is then unchanged). */
int tpusim_feed_wait(tpusim_feed *f, uint64_t cycles);
int tpusim_feed_push(tpusim_feed *f, const tpusim_insn *insn);
size_t tpusim_feed_size(const tpusim_feed *f);              /* instructions recorded */
const tpusim_insn *tpusim_feed_insns(const tpusim_feed *f); /* all of them, in order */
size_t tpusim_feed_taken(const tpusim_feed *f);             /* replayed: taken by the queue */
uint64_t tpusim_feed_edges(const tpusim_feed *f);           /* replayed: edges spent waiting and
                                                               offering, refused offers included */
/* Attach f to core k (replay starts at the next edge, from f's start), or detach with NULL. A
 * feed stays the caller's and stays attached (offering nothing once replayed) until detached or
 * tpusim_reset. A core with a feed attached takes no other pushes. -1 if k is not a core. */
int tpusim_core_feed(tpusim *sim, uint32_t core, tpusim_feed *f);
/* Step until a core in the bit mask `watch` stops, at most max_cycles edges; returns the mask of
 * the cores in `watch` that have stopped by then (0: max_cycles passed first), with each one's
 * tpusim_result in results[k] (results may be NULL). A core with a feed stops when its last
 * instruction was taken and then HALTED or ERROR is raised, or on ERROR sooner; a core without one
 * when it raises either (a HALTED left from before counts). All attached feeds are replayed. */
int tpusim_run_feeds(tpusim *sim, uint32_t watch, uint64_t max_cycles, int *results);

/* The chip CSRs (docs/isa.md "Chip CSRs": TPU_CHIP_CSR_* and the rest from rtl/tpu_isa.toml). A
 * lone core has none: reads are zero, writes only spend their clock edge. */
uint32_t tpusim_chip_reg_read(tpusim *sim, uint32_t offset);          /* no clock edge */
void tpusim_chip_reg_write(tpusim *sim, uint32_t offset, uint32_t v); /* one clock edge */
/* Core k's MEM_STALL counter: cycles its memory request lost the port to another core. */
uint64_t tpusim_mem_stall(tpusim *sim, uint32_t core);

/* Backdoor access, no clock edge. Return 0, or -1 if the range is outside the memory. */
int tpusim_mem_write(tpusim *sim, uint64_t addr, const void *src, size_t n);
int tpusim_mem_read(tpusim *sim, uint64_t addr, void *dst, size_t n);
/* Read UB row (N bytes) or ACC row (N int32). Return 0, or -1 if row is out of range. */
int tpusim_ub_read(tpusim *sim, uint32_t row, int8_t *dst);
int tpusim_acc_read(tpusim *sim, uint32_t row, int32_t *dst);

/* Change the memory model's timing between runs (0 counts as 1; clamped to the limits). */
void tpusim_mem_timing(tpusim *sim, uint32_t latency, uint32_t bytes_per_cycle);

enum tpusim_trace_format { TPUSIM_TRACE_FST = 0, TPUSIM_TRACE_VCD = 1 };
/* Trace to path from cycle `from` (inclusive) until cycle `to` (exclusive; 0 = until closed),
 * closing a trace already open. The trace is written to a temporary beside path and renamed into
 * place when it closes; it stops, and fails, when its file system or P_tmpdir has less than
 * 64 MiB free (checked at open and as it is written). Returns 0, or -1 with the reason in err. */
int tpusim_trace_open(tpusim *sim, const char *path, int format, uint64_t from, uint64_t to,
                      char *err, size_t errlen);
/* 0 if a trace could be written to path now (a file can be created beside it, and there is the
 * space tpusim_trace_open asks for); else -1 with the reason in err. Leaves nothing behind. */
int tpusim_trace_writable(const char *path, char *err, size_t errlen);
/* Closes the trace if it is open (the window's end closes it by itself) and reports, once, how the
 * last trace ended: 0 with the cycles it holds in *cycles (may be NULL; 0 when no trace ended
 * since the last report), or -1 with the reason in err and nothing left under its name or the
 * temporary's. */
int tpusim_trace_close(tpusim *sim, uint64_t *cycles, char *err, size_t errlen);

/* --------------------------------------------------------- golden model -- */

typedef struct tpusim_golden tpusim_golden;

tpusim_golden *tpusim_golden_create(const tpusim_hwcfg *cfg); /* NULL if out of memory */
/* The same on the caller's memory of mem_size bytes (several cores' models on one memory), which
 * must outlive it. */
tpusim_golden *tpusim_golden_create_on(const tpusim_hwcfg *cfg, uint8_t *mem);
void tpusim_golden_destroy(tpusim_golden *g);
/* Reset as the device does: clear FIFO, weights, params, error; keep UB, ACC, memory. */
void tpusim_golden_reset(tpusim_golden *g);
/* Execute one instruction. Returns its fault code (TPU_FAULT_*); after a non-zero one the model
 * refuses further instructions (returning the same code) until reset. */
int tpusim_golden_exec(tpusim_golden *g, const tpusim_insn *insn);
/* Execute until HALT or a fault; returns the fault code. *executed gets the index of the HALT
 * or of the failing instruction (may be NULL). */
int tpusim_golden_run(tpusim_golden *g, const tpusim_insn *prog, size_t n, size_t *executed);
uint8_t *tpusim_golden_mem(tpusim_golden *g);               /* mem_size bytes */
int8_t *tpusim_golden_ub(tpusim_golden *g, uint32_t row);   /* N bytes, or NULL if out of range */
int32_t *tpusim_golden_acc(tpusim_golden *g, uint32_t row); /* N values, or NULL if out of range */
uint32_t tpusim_golden_sync_count(const tpusim_golden *g);

/* ------------------------------------------------------------ checking -- */

enum tpusim_verdict {
    TPUSIM_AGREE = 0,  /* same final memory, UB, ACC, fault code and ERROR_PC */
    TPUSIM_DIFFER = 1, /* report names the first instruction whose effects differ */
    TPUSIM_HUNG = 2,   /* the device hit max_cycles */
};
/* Run prog on the device (tpusim_run_program) and on a golden model started from the device's
 * memory, UB and ACC as they are now, then compare the outcome (fault code and ERROR_PC, or the
 * HALT), SYNC_COUNT and all of memory, UB and ACC (tpusim_compare). The report says what
 * differs, one finding per line, or "agree: ...". */
int tpusim_verify(tpusim *sim, const tpusim_insn *prog, size_t n, uint64_t max_cycles, char *report,
                  size_t size);

/* A memory range [addr, addr + size). */
typedef struct {
    uint64_t addr, size;
} tpusim_range;

/* What tpusim_compare compares: the device against a golden model that ran the same
 * instructions, prog[0..n) (those that ran on both). */
typedef struct {
    tpusim_golden *golden;
    const tpusim_insn *prog;
    size_t n;
    int all_memory;             /* 1: all of memory; 0: what prog[0..n) wrote and the ranges */
    const tpusim_range *ranges; /* more memory to compare with all_memory 0 (may overlap) */
    size_t nranges;
    int rows; /* 1: core 0's UB and ACC too */
} tpusim_compare_spec;

/* Compares the device with spec->golden and attributes each differing location (memory byte, UB
 * byte, ACC value) to the last instruction of prog[0..n) that wrote it, by the footprints.
 * Returns the number of differing locations (0: none, and the report is empty), or -1 if the
 * device could not be read or memory ran out. The report, one line: "3 locations differ (UB 1,
 * memory 2)" (the kinds that differ), "; earliest last writer of a differing location: insn 4
 * `WR_HOST ...`: memory at 0x800: expected 0x00, device 0x12" (the location whose last writer
 * comes first in prog) and "; 1 written by no instruction, first: UB row 3 byte 0: expected 0,
 * device 5" when some were written by none. *addr (may be NULL) gets the reported location's
 * address when it is a memory byte, else UINT64_MAX. */
int64_t tpusim_compare(tpusim *sim, const tpusim_compare_spec *spec, uint64_t *addr, char *report,
                       size_t size);

#ifdef __cplusplus
}
#endif
#endif

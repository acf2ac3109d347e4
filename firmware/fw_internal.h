/* fw_internal.h - what the firmware's files share (internal to firmware/): the context of one
 * stream, the core's configuration, pushing instructions and failing with a named field. The
 * GEMM schedule is in gemm.c, the CONV2D schedule in conv.c, REDUCE's in reduce.c, the stream walk
 * in firmware.c. */
#ifndef TPU_FIRMWARE_FW_INTERNAL_H
#define TPU_FIRMWARE_FW_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "firmware/firmware.h"
#include "rtl/tpu_isa.h" /* generated ISA and CSR definitions: enums and #defines only */

/* The MXU holds at most this many MATMULs (docs/isa.md "Execution"): an instruction pushed this
 * many MATMULs after another finds that one's UB reads and ACC writes complete. */
#define MXU_DEPTH 4u
/* UB staging buffers for int8 output (ACTIVATE writes one while WR_HOST drains the other). */
#define STAGE_BUFS 2u
/* Instruction field limits. */
#define ROWS_MAX TPU_INSN_ROWS_MASK
#define LOCAL_ROWS_MAX (TPU_INSN_B_MASK + 1u)
#define LEN_MAX TPU_INSN_LEN_MASK
/* UB rows one RD_HOST row fills at most: its len is up to 4N bytes, the bus width. */
#define HOST_ROW_TILES 4u

typedef struct {
    uint32_t n, ub_rows, acc_rows, wfifo_tiles, mem_size;
} hw_cfg;

typedef struct {
    const fw_hal *hal;
    fw_result *res;
    hw_cfg hw;
    uint32_t addr, bytes; /* the stream */
    uint32_t version;     /* the stream's: which commands and flags it may use */
    uint32_t buffers, commands;
    uint32_t cmd; /* command being validated or expanded, FW_NO_INDEX outside commands */
} fw_ctx;

typedef struct {
    uint64_t lo, hi; /* device byte range [lo, hi) */
} fw_range;

static inline uint32_t fw_le16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static inline uint32_t fw_le32(const uint8_t *p) { return fw_le16(p) | fw_le16(p + 2) << 16; }
static inline uint32_t fw_min32(uint32_t a, uint32_t b) { return a < b ? a : b; }
static inline uint64_t fw_min64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static inline uint64_t fw_max64(uint64_t a, uint64_t b) { return a > b ? a : b; }
static inline uint32_t fw_ceil_div(uint32_t a, uint32_t b) { return a / b + (a % b != 0); }
static inline bool fw_overlap(fw_range x, fw_range y) { return x.lo < y.hi && y.lo < x.hi; }
/* Members of the group holding item i when count items are grouped size at a time (the last
 * group may be short): the interleave of the UB rows of a wide RD_HOST or WR_HOST row. */
static inline uint32_t fw_group_size(uint32_t count, uint32_t size, uint32_t i)
{
    return fw_min32(size, count - i / size * size);
}

/* Records the failure (code, the command for FW_ERR_COMMAND/FW_ERR_CORE, buffer, the field's name
 * and what is wrong with it); returns code. */
int fw_fail(fw_ctx *c, int code, uint32_t buf, const char *field, const char *why);
/* A command field that does not hold: fw_fail(FW_ERR_COMMAND) naming it and why. */
int fw_bad(fw_ctx *c, const char *field, const char *why);
/* Whether the command's flags are ones the stream's version has (fw_bad on "flags" if not). */
int fw_flags_version(fw_ctx *c, uint32_t flags);
/* Pushes one instruction, retrying while the queue is full (one cycle each). */
int fw_push(fw_ctx *c, uint32_t op, uint32_t flags, uint32_t rows, uint32_t a, uint32_t b,
            uint32_t len, uint32_t stride);
/* Resolves the operand (buffer index at raw[f_buf], byte offset at raw[f_off]) covering extent
 * bytes into its device address and range; n_buf/n_off name the fields. */
int fw_operand(fw_ctx *c, const uint8_t *raw, uint32_t f_buf, uint32_t f_off, const char *n_buf,
               const char *n_off, uint64_t extent, uint32_t *addr, fw_range *r);
/* The stream's own bytes, which no command may write. */
fw_range fw_stream_range(const fw_ctx *c);

/* Each validates its command (raw: FW_GEMM_BYTES / FW_CONV_BYTES bytes) and, with run, expands
 * it into core instructions. */
int fw_gemm(fw_ctx *c, const uint8_t *raw, bool run);
int fw_conv(fw_ctx *c, const uint8_t *raw, bool run);
/* The same for REDUCE, of bytes bytes (its size depends on its operand counts). */
int fw_reduce(fw_ctx *c, const uint8_t *raw, uint32_t bytes, bool run);

#endif

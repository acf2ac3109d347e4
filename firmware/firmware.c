/* firmware.c - the command-stream walk (firmware.h, docs/command-stream.md): the core's ID
 * registers, the header and buffer table, then every command validated before any is expanded
 * (GEMM: gemm.c, CONV2D: conv.c, REDUCE: reduce.c). Freestanding: no libc, no memory but fixed-size
 * locals. */
#include "firmware/fw_internal.h"

int fw_fail(fw_ctx *c, int code, uint32_t buf, const char *field, const char *why)
{
    c->res->code = code;
    c->res->cmd = code == FW_ERR_COMMAND || code == FW_ERR_CORE ? c->cmd : FW_NO_INDEX;
    c->res->buf = buf;
    c->res->field = field;
    c->res->why = why;
    return code;
}

int fw_bad(fw_ctx *c, const char *field, const char *why)
{
    return fw_fail(c, FW_ERR_COMMAND, FW_NO_INDEX, field, why);
}

static uint32_t reg(const fw_ctx *c, uint32_t offset)
{
    return c->hal->reg_read(c->hal->ctx, offset);
}

/* n bytes at offset off of the stream (inside it: the callers check). */
static int load(fw_ctx *c, uint32_t off, uint8_t *dst, uint32_t n)
{
    if (c->hal->mem_read(c->hal->ctx, c->addr + off, dst, n))
        return fw_fail(c, FW_ERR_MEM, FW_NO_INDEX, "stream", "device memory refused the read");
    return FW_OK;
}

static int core_error(fw_ctx *c)
{
    c->res->core_error = reg(c, TPU_CSR_ERROR_CODE);
    return fw_fail(c, FW_ERR_CORE, FW_NO_INDEX, "STATUS", "the core is stopped with an error");
}

int fw_push(fw_ctx *c, uint32_t op, uint32_t flags, uint32_t rows, uint32_t a, uint32_t b,
            uint32_t len, uint32_t stride)
{
    uint32_t w[TPU_INSN_WORDS] = {0};
#define PUT(NAME, name) TPU_INSN_PUT(w, NAME, name);
    TPU_FOR_EACH_FIELD(PUT)
#undef PUT
    while (!c->hal->iq_push(c->hal->ctx, w))
        if (reg(c, TPU_CSR_STATUS) & TPU_STATUS_ERROR)
            return core_error(c); /* a stopped core never frees the queue */
    c->res->insns++;
    return FW_OK;
}

/* ------------------------------------------------------------ validation -- */

static int read_hw(fw_ctx *c)
{
    hw_cfg *hw = &c->hw;
    if (reg(c, TPU_CSR_ID) != TPU_ID_MAGIC)
        return fw_fail(c, FW_ERR_HW, FW_NO_INDEX, "ID", "not a tpusim core");
    /* The same major version, and a minor one with what the schedules use (wide RD_HOST rows). */
    const uint32_t version = reg(c, TPU_CSR_VERSION);
    if (version >> 16 != TPU_VERSION >> 16 || (version & 0xffffu) < (TPU_VERSION & 0xffffu))
        return fw_fail(c, FW_ERR_HW, FW_NO_INDEX, "VERSION",
                       "another major version, or an older minor one");
    hw->n = reg(c, TPU_CSR_ARRAY_N);
    hw->ub_rows = reg(c, TPU_CSR_UB_ROWS);
    hw->acc_rows = reg(c, TPU_CSR_ACC_ROWS);
    hw->wfifo_tiles = reg(c, TPU_CSR_WFIFO_TILES);
    hw->mem_size = reg(c, TPU_CSR_MEM_SIZE);
    /* The schedule needs two A slots (plus two int8 staging rows) in the UB, two accumulator
     * buffers, and 4N bytes must fit the len field. */
    if (hw->n == 0 || 4 * (uint64_t)hw->n > LEN_MAX)
        return fw_fail(c, FW_ERR_HW, FW_NO_INDEX, "ARRAY_N", "0, or 4N does not fit the len field");
    if (hw->ub_rows < 2 + STAGE_BUFS || hw->ub_rows > LOCAL_ROWS_MAX)
        return fw_fail(c, FW_ERR_HW, FW_NO_INDEX, "UB_ROWS",
                       "fewer than the schedule needs, or more than the row fields address");
    if (hw->acc_rows < 2 || hw->acc_rows > LOCAL_ROWS_MAX)
        return fw_fail(c, FW_ERR_HW, FW_NO_INDEX, "ACC_ROWS",
                       "fewer than the schedule needs, or more than the row fields address");
    if (hw->wfifo_tiles == 0)
        return fw_fail(c, FW_ERR_HW, FW_NO_INDEX, "WFIFO_TILES", "0");
    if (reg(c, TPU_CSR_STATUS) & TPU_STATUS_ERROR)
        return core_error(c);
    return FW_OK;
}

static int read_header(fw_ctx *c)
{
    uint8_t h[FW_HEADER_BYTES];
    if (c->bytes < FW_HEADER_BYTES || (uint64_t)c->addr + c->bytes > c->hw.mem_size)
        return fw_fail(c, FW_ERR_HEADER, FW_NO_INDEX, "bytes",
                       "shorter than the header, or the stream ends outside device memory");
    if (load(c, 0, h, FW_HEADER_BYTES))
        return c->res->code;
    c->buffers = fw_le32(h + FW_HDR_BUFFERS);
    c->commands = fw_le32(h + FW_HDR_COMMANDS);
    if (fw_le32(h + FW_HDR_MAGIC) != FW_STREAM_MAGIC)
        return fw_fail(c, FW_ERR_HEADER, FW_NO_INDEX, "magic", "not \"TPUS\"");
    c->version = fw_le32(h + FW_HDR_VERSION);
    if (c->version < FW_STREAM_VERSION_MIN || c->version > FW_STREAM_VERSION)
        return fw_fail(c, FW_ERR_HEADER, FW_NO_INDEX, "version", "unsupported stream version");
    if (fw_le32(h + FW_HDR_BYTES) != c->bytes)
        return fw_fail(c, FW_ERR_HEADER, FW_NO_INDEX, "bytes", "not the stream's length");
    if (FW_HEADER_BYTES + (uint64_t)c->buffers * FW_BUFFER_BYTES > c->bytes)
        return fw_fail(c, FW_ERR_HEADER, FW_NO_INDEX, "buffers",
                       "the buffer table does not fit in the stream");
    if (fw_le32(h + FW_HDR_RESERVED))
        return fw_fail(c, FW_ERR_HEADER, FW_NO_INDEX, "reserved", "not zero");
    return FW_OK;
}

/* Buffer-table entry i (i < c->buffers). */
static int buffer(fw_ctx *c, uint32_t i, uint32_t *addr, uint32_t *size)
{
    uint8_t e[FW_BUFFER_BYTES];
    if (load(c, FW_HEADER_BYTES + i * FW_BUFFER_BYTES, e, FW_BUFFER_BYTES))
        return c->res->code;
    *addr = fw_le32(e + FW_BUF_ADDR);
    *size = fw_le32(e + FW_BUF_SIZE);
    return FW_OK;
}

static int check_buffers(fw_ctx *c)
{
    for (uint32_t i = 0; i < c->buffers; i++) {
        uint32_t addr, size;
        if (buffer(c, i, &addr, &size))
            return c->res->code;
        if (addr >= c->hw.mem_size)
            return fw_fail(c, FW_ERR_BUFFER, i, "addr", "outside device memory");
        if (size == 0 || (uint64_t)addr + size > c->hw.mem_size)
            return fw_fail(c, FW_ERR_BUFFER, i, "size",
                           "zero, or the buffer ends outside device memory");
    }
    return FW_OK;
}

fw_range fw_stream_range(const fw_ctx *c)
{
    return (fw_range){c->addr, (uint64_t)c->addr + c->bytes};
}

int fw_operand(fw_ctx *c, const uint8_t *raw, uint32_t f_buf, uint32_t f_off, const char *n_buf,
               const char *n_off, uint64_t extent, uint32_t *addr, fw_range *r)
{
    const uint32_t i = fw_le32(raw + f_buf), off = fw_le32(raw + f_off);
    uint32_t base, size;
    if (i >= c->buffers)
        return fw_bad(c, n_buf, "not a buffer-table index");
    if (buffer(c, i, &base, &size))
        return c->res->code;
    if (extent > size || off > size - extent)
        return fw_bad(c, n_off, "the operand does not fit in its buffer");
    *addr = base + off;
    r->lo = *addr;
    r->hi = *addr + extent;
    return FW_OK;
}

/* -------------------------------------------------------------- the walk -- */

/* The longest command: REDUCE with the most operands. */
#define LONGEST FW_REDUCE_BYTES(FW_REDUCE_MAX, FW_REDUCE_MAX)
_Static_assert(LONGEST >= (int)FW_CONV_BYTES && (int)FW_CONV_BYTES >= (int)FW_GEMM_BYTES,
               "walk's buffer holds any command");

int fw_flags_version(fw_ctx *c, uint32_t flags)
{
    if (c->version < 3 && (flags & FW_FLAGS_V3))
        return fw_bad(c, "flags", "BF16 or OUT_BF16 in a stream of version 1 or 2");
    return FW_OK;
}

/* Whether a command of op may be bytes long: GEMM's and CONV2D's size, or for REDUCE a size its
 * own check can tell exactly once it has read its operand counts. */
static bool command_size(uint32_t op, uint32_t bytes)
{
    switch (op) {
    case FW_CMD_GEMM: return bytes == FW_GEMM_BYTES;
    case FW_CMD_CONV2D: return bytes == FW_CONV_BYTES;
    default: return bytes >= FW_REDUCE_OPERANDS && bytes <= LONGEST;
    }
}

/* Walk the commands: validate each (charging its decode cost) or, with run, expand each.
 * CONV2D needs a version 2 stream, REDUCE a version 4 one. */
static int walk(fw_ctx *c, bool run)
{
    uint32_t off = FW_HEADER_BYTES + c->buffers * FW_BUFFER_BYTES;
    for (c->cmd = 0; c->cmd < c->commands; c->cmd++) {
        uint8_t raw[LONGEST];
        if (!run)
            c->hal->spend(c->hal->ctx, FW_CYCLES_COMMAND);
        if (c->bytes - off < 4)
            return fw_bad(c, "bytes", "fewer than 4 bytes left for the command");
        if (load(c, off, raw, 4))
            return c->res->code;
        const uint32_t op = fw_le16(raw + FW_CMD_OP), bytes = fw_le16(raw + FW_CMD_BYTES);
        if (bytes < 4 || bytes % 4 || bytes > c->bytes - off)
            return fw_bad(c, "bytes", "below 4, not a multiple of 4, or past the stream's end");
        if (op != FW_CMD_GEMM && op != FW_CMD_CONV2D && op != FW_CMD_REDUCE)
            return fw_bad(c, "op", "unknown command");
        if (op == FW_CMD_CONV2D && c->version < 2)
            return fw_bad(c, "op", "CONV2D needs a version 2 stream");
        if (op == FW_CMD_REDUCE && c->version < 4)
            return fw_bad(c, "op", "REDUCE needs a version 4 stream");
        if (!command_size(op, bytes))
            return fw_bad(c, "bytes", "not the command's size");
        if (load(c, off, raw, bytes) || (op == FW_CMD_GEMM     ? fw_gemm(c, raw, run)
                                         : op == FW_CMD_CONV2D ? fw_conv(c, raw, run)
                                                               : fw_reduce(c, raw, bytes, run)))
            return c->res->code;
        if (run && fw_push(c, TPU_OP_SYNC, 0, 0, 0, 0, 0, 0))
            return c->res->code;
        off += bytes;
    }
    c->cmd = FW_NO_INDEX;
    if (off != c->bytes)
        return fw_fail(c, FW_ERR_HEADER, FW_NO_INDEX, "commands",
                       "bytes remain after the last command");
    return FW_OK;
}

int fw_run(const fw_hal *hal, uint32_t stream_addr, uint32_t stream_bytes, fw_result *res)
{
    fw_ctx c = {
        .hal = hal, .res = res, .addr = stream_addr, .bytes = stream_bytes, .cmd = FW_NO_INDEX};
    res->code = FW_OK;
    res->cmd = res->buf = FW_NO_INDEX;
    res->field = res->why = "";
    res->core_error = 0;
    res->insns = 0;
    hal->spend(hal->ctx, FW_CYCLES_STREAM);
    if (read_hw(&c) || read_header(&c) || check_buffers(&c) || walk(&c, false) || walk(&c, true))
        return res->code;
    return fw_push(&c, TPU_OP_HALT, 0, 0, 0, 0, 0, 0);
}

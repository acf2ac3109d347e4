/* reduce.c - the REDUCE command: validation and schedule (firmware.h, docs/command-stream.md).
 *
 * The elements are cut into rows of N (an ACC row's 32-bit words; the last row may be short)
 * and the rows into chunks of ACC_ROWS / 2 rows, which alternate between the two halves of the
 * accumulators so that a chunk's RD_ACCs run while the previous chunk drains. Per chunk: one
 * RD_ACC per source, the first without ACC and the others with it, so the sums are folded in
 * source order; then one WR_HOST.SRC_ACC per destination, which writes the accumulators' bits
 * unchanged. A chunk's last, short row takes an instruction of its own (len = 4 x the elements
 * left). The core keeps the adds in order (the load unit writes its rows back in program
 * order) and holds a WR_HOST back until the rows it reads are written, and so until its chunk
 * has been read from every source, an in-place destination included. */
#include "firmware/fw_internal.h"

/* A validated REDUCE with operands resolved to device addresses. */
typedef struct {
    uint32_t flags, elements, sources, destinations;
    uint32_t src[FW_REDUCE_MAX], dst[FW_REDUCE_MAX];
} reduce;

/* Operand i's field names (sources first): static strings for fw_result. */
static const char *const buf_names[2 * FW_REDUCE_MAX] = {
    "src[0].buf", "src[1].buf", "src[2].buf", "src[3].buf", "src[4].buf", "src[5].buf",
    "src[6].buf", "src[7].buf", "dst[0].buf", "dst[1].buf", "dst[2].buf", "dst[3].buf",
    "dst[4].buf", "dst[5].buf", "dst[6].buf", "dst[7].buf"};
static const char *const off_names[2 * FW_REDUCE_MAX] = {
    "src[0].off", "src[1].off", "src[2].off", "src[3].off", "src[4].off", "src[5].off",
    "src[6].off", "src[7].off", "dst[0].off", "dst[1].off", "dst[2].off", "dst[3].off",
    "dst[4].off", "dst[5].off", "dst[6].off", "dst[7].off"};

static int decode_reduce(fw_ctx *c, const uint8_t *raw, uint32_t bytes, reduce *r)
{
    r->flags = fw_le32(raw + FW_REDUCE_FLAGS);
    r->elements = fw_le32(raw + FW_REDUCE_ELEMENTS);
    r->sources = fw_le32(raw + FW_REDUCE_SOURCES);
    r->destinations = fw_le32(raw + FW_REDUCE_DESTINATIONS);
    if (r->flags & ~(uint32_t)FW_REDUCE_FLAGS_ALL)
        return fw_bad(c, "flags", "an undefined flag bit set");
    if (!r->elements)
        return fw_bad(c, "elements", "zero");
    if (!r->sources || r->sources > FW_REDUCE_MAX)
        return fw_bad(c, "sources", "zero, or more than 8");
    if (!r->destinations || r->destinations > FW_REDUCE_MAX)
        return fw_bad(c, "destinations", "zero, or more than 8");
    if (bytes != FW_REDUCE_BYTES(r->sources, r->destinations))
        return fw_bad(c, "bytes", "not 20 + 8 x (sources + destinations)");
    const uint64_t extent = 4 * (uint64_t)r->elements;
    fw_range range[2 * FW_REDUCE_MAX];
    const uint32_t n = r->sources + r->destinations;
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t f = FW_REDUCE_OPERANDS + FW_REDUCE_OPERAND_BYTES * i;
        const uint32_t name = i < r->sources ? i : FW_REDUCE_MAX + i - r->sources;
        uint32_t *addr = i < r->sources ? &r->src[i] : &r->dst[i - r->sources];
        if (fw_operand(c, raw, f, f + 4, buf_names[name], off_names[name], extent, addr, &range[i]))
            return c->res->code;
        if (*addr % 4)
            return fw_bad(c, off_names[name], "the operand's address is not a multiple of 4");
    }
    /* Each chunk is read from every source before any destination is written, so a
     * destination may be a source itself; any other overlap would mix sums with operands. */
    const fw_range stream = fw_stream_range(c);
    for (uint32_t d = r->sources; d < n; d++) {
        const char *name = buf_names[FW_REDUCE_MAX + d - r->sources];
        if (fw_overlap(range[d], stream))
            return fw_bad(c, name, "the destination intersects the command stream");
        for (uint32_t i = 0; i < d; i++)
            if (fw_overlap(range[d], range[i]) && (i >= r->sources || range[i].lo != range[d].lo))
                return fw_bad(c, name,
                              i < r->sources ? "the destination intersects a source it is not"
                                             : "the destination intersects another destination");
    }
    return FW_OK;
}

/* One part of a chunk: rows rows of width bytes from row `row` on, read from every source into
 * the ACC rows from acc (the first source without ACC: the fold starts from its value), or with
 * drain written from there to every destination. */
static int push_rows(fw_ctx *c, const reduce *r, bool drain, uint32_t row, uint32_t rows,
                     uint32_t width, uint32_t acc)
{
    /* The operands lie inside device memory (32 bits), so their rows' addresses fit. */
    const uint32_t pitch = 4 * c->hw.n, fp = r->flags & FW_REDUCE_F32 ? TPU_F_BF16 : 0;
    const uint32_t count = drain ? r->destinations : r->sources;
    for (uint32_t i = 0; i < count; i++)
        if (fw_push(c, drain ? TPU_OP_WR_HOST : TPU_OP_RD_ACC,
                    fp | (drain ? TPU_F_SRC_ACC
                          : i   ? TPU_F_ACC
                                : 0),
                    rows, (drain ? r->dst[i] : r->src[i]) + row * pitch, acc, width, pitch))
            return c->res->code;
    return FW_OK;
}

static int run_reduce(fw_ctx *c, const reduce *r)
{
    const uint32_t n = c->hw.n, tail = r->elements % n;
    const uint32_t full = r->elements / n, chunk = fw_min32(c->hw.acc_rows / 2, ROWS_MAX);
    const uint32_t rows = full + (tail != 0);
    for (uint32_t row = 0, j = 0; row < rows; row += chunk, j++) {
        const uint32_t acc = j % 2 * chunk, count = fw_min32(chunk, rows - row);
        /* The chunk's whole rows, then its short last row. */
        const uint32_t whole = fw_min32(count, full - fw_min32(full, row));
        for (int drain = 0; drain < 2; drain++)
            if ((whole && push_rows(c, r, drain, row, whole, 4 * n, acc)) ||
                (whole < count && push_rows(c, r, drain, row + whole, 1, 4 * tail, acc + whole)))
                return c->res->code;
    }
    return FW_OK;
}

int fw_reduce(fw_ctx *c, const uint8_t *raw, uint32_t bytes, bool run)
{
    reduce r;
    if (decode_reduce(c, raw, bytes, &r) || (run && run_reduce(c, &r)))
        return c->res->code;
    return FW_OK;
}

/* isa.c - instruction encoding, decoding, names and disassembly (docs/isa.md), all from the
 * generated definitions of rtl/tpu_isa.toml. */
#include <stdarg.h>
#include <stdio.h>

#include "sim/tpusim.h"

tpusim_insn tpusim_encode(uint32_t op, uint32_t flags, uint32_t rows, uint32_t a, uint32_t b,
                          uint32_t len, uint32_t stride)
{
    tpusim_insn insn = {{0}};
#define PUT(NAME, name) TPU_INSN_PUT(insn.w, NAME, name);
    TPU_FOR_EACH_FIELD(PUT)
#undef PUT
    return insn;
}

tpusim_fields tpusim_decode(const tpusim_insn *insn)
{
    tpusim_fields f;
#define GET(NAME, name) f.name = TPU_INSN_GET(insn->w, NAME);
    TPU_FOR_EACH_FIELD(GET)
#undef GET
    return f;
}

const char *tpusim_opcode_name(uint32_t op)
{
#define OPCODE(NAME) [TPU_OP_##NAME] = #NAME,
    static const char *const names[] = {TPU_FOR_EACH_OPCODE(OPCODE)};
#undef OPCODE
    if (op < sizeof names / sizeof names[0] && names[op])
        return names[op];
    return "?";
}

const char *tpusim_fault_name(uint32_t code)
{
#define FAULT(NAME) [TPU_FAULT_##NAME] = #NAME,
    static const char *const names[] = {TPU_FOR_EACH_FAULT(FAULT)};
#undef FAULT
    if (code < sizeof names / sizeof names[0] && names[code])
        return names[code];
    return "?";
}

const char *tpusim_perf_name(int counter)
{
#define PERF(NAME, name) [TPU_PERF_##NAME] = name,
    static const char *const names[TPU_PERF_COUNT] = {TPU_FOR_EACH_PERF(PERF)};
#undef PERF
    return counter >= 0 && counter < TPU_PERF_COUNT ? names[counter] : "?";
}

/* Appends printf-style text at *pos, never past size; *pos keeps counting so truncation is
 * harmless. */
static void put(char *buf, size_t size, size_t *pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t size, size_t *pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(*pos < size ? buf + *pos : NULL, *pos < size ? size - *pos : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        *pos += (size_t)n;
}

enum { F_ROWS = 1, F_A = 2, F_B = 4, F_LEN = 8, F_STRIDE = 16 };

char *tpusim_disasm(const tpusim_insn *insn, char *buf, size_t size)
{
    /* Flag suffixes in the table's reading order ("MATMUL.LOAD.ACC": the pop happens before
     * the add). */
#define FLAG(NAME) {TPU_F_##NAME, #NAME},
    static const struct {
        uint32_t bit;
        const char *name;
    } flag_order[] = {TPU_FOR_EACH_FLAG(FLAG)};
#undef FLAG
    const tpusim_fields f = tpusim_decode(insn);
    size_t pos = 0;
    if (size)
        buf[0] = '\0';
    const char *name = tpusim_opcode_name(f.op);
    if (name[0] == '?') {
        put(buf, size, &pos, "ILLEGAL(0x%02x) w=0x%08x,0x%08x,0x%08x,0x%08x", f.op, insn->w[0],
            insn->w[1], insn->w[2], insn->w[3]);
        return buf;
    }
    put(buf, size, &pos, "%s", name);
    for (size_t i = 0; i < sizeof flag_order / sizeof flag_order[0]; i++)
        if (f.flags & flag_order[i].bit)
            put(buf, size, &pos, ".%s", flag_order[i].name);

    /* Operands source first, destination last, as the data flows. */
    const int src_acc = (f.flags & TPU_F_SRC_ACC) != 0;
    unsigned used = 0;
    switch (f.op) {
    case TPU_OP_RD_HOST:
        put(buf, size, &pos, " rows=%u mem=0x%x stride=%u len=%u ub=%u", f.rows, f.a, f.stride,
            f.len, f.b);
        used = F_ROWS | F_A | F_B | F_LEN | F_STRIDE;
        break;
    case TPU_OP_RD_WEIGHT:
    case TPU_OP_RD_PARAMS:
        put(buf, size, &pos, " rows=%u mem=0x%x stride=%u len=%u", f.rows, f.a, f.stride, f.len);
        used = F_ROWS | F_A | F_LEN | F_STRIDE;
        break;
    case TPU_OP_MATMUL:
        put(buf, size, &pos, " rows=%u ub=%u", f.rows, f.a);
        if (f.stride) /* UB rows between the rows: only shown when not the default */
            put(buf, size, &pos, " ub_stride=%u", f.stride);
        put(buf, size, &pos, " acc=%u", f.b);
        used = F_ROWS | F_A | F_B | F_STRIDE;
        break;
    case TPU_OP_ACTIVATE:
        put(buf, size, &pos, " rows=%u acc=%u", f.rows, f.b);
        if (f.flags & TPU_F_POOL) {
            put(buf, size, &pos, " window=%ux%u step=%u pitch=%u", TPU_POOL_GET(f.stride, PH),
                TPU_POOL_GET(f.stride, PW), TPU_POOL_GET(f.stride, STEP),
                TPU_POOL_GET(f.stride, PITCH));
            used |= F_STRIDE;
        }
        put(buf, size, &pos, " ub=%u", f.a);
        if (f.len) /* UB rows between the output rows: only shown when not the default */
            put(buf, size, &pos, " ub_stride=%u", f.len);
        used |= F_ROWS | F_A | F_B | F_LEN;
        break;
    case TPU_OP_ZERO:
        put(buf, size, &pos, " rows=%u ub=%u", f.rows, f.b);
        used = F_ROWS | F_B;
        break;
    case TPU_OP_RD_ACC:
        put(buf, size, &pos, " rows=%u mem=0x%x stride=%u len=%u acc=%u", f.rows, f.a, f.stride,
            f.len, f.b);
        used = F_ROWS | F_A | F_B | F_LEN | F_STRIDE;
        break;
    case TPU_OP_WR_HOST:
        put(buf, size, &pos, " rows=%u %s=%u mem=0x%x stride=%u len=%u", f.rows,
            src_acc ? "acc" : "ub", f.b, f.a, f.stride, f.len);
        used = F_ROWS | F_A | F_B | F_LEN | F_STRIDE;
        break;
    default: /* SYNC, HALT */ break;
    }
    /* Whatever makes the instruction malformed stays visible. */
    if (f.flags & ~TPU_F_ALL)
        put(buf, size, &pos, " flags=0x%02x", f.flags);
    if (!(used & F_ROWS) && f.rows)
        put(buf, size, &pos, " rows=%u", f.rows);
    if (!(used & F_A) && f.a)
        put(buf, size, &pos, " a=0x%x", f.a);
    if (!(used & F_B) && f.b)
        put(buf, size, &pos, " b=%u", f.b);
    if (!(used & F_LEN) && f.len)
        put(buf, size, &pos, " len=%u", f.len);
    if (!(used & F_STRIDE) && f.stride)
        put(buf, size, &pos, " stride=%u", f.stride);
    return buf;
}

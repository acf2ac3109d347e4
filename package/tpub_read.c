/* tpub_read.c - the package reader (tpub.h, docs/package.md): tpub_parse and tpub_load
 * validate every field as the bytes are read and name the section, record and field of the first
 * problem. The reader longjmps out on the first problem; everything it has allocated is then
 * reachable from the package being built, which tpub_free releases. */
#include "package/tpub_internal.h"

#include "io/tpuio.h"

#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The smallest encoding of each record: counts are bounded by the bytes left before anything
 * is allocated. */
#define MIN_SIG 13u /* name length, a 1-byte name, type, rank */
#define MIN_SEGMENT 12u
#define MIN_XFER 36u         /* version 2's; version 3's are 40 */
#define MIN_OP 68u           /* kind, then a GEMM's 64 bytes with empty strings */
#define MAX_ARENA UINT32_MAX /* device addresses and buffer sizes are 32-bit */
/* The CONV2D command's field limits (firmware.h): the core's 16-bit row counts, the UB row stride
 * and the pooling window. */
#define CONV_DIM_MAX 65535u
#define CONV_STRIDE_MAX 255u
#define CONV_PAD_MAX 255u
#define CONV_POOL_MAX 15u

typedef struct {
    tpuio_cursor cur; /* over the image up to the end of the current section's payload */
    size_t len;       /* of the image */
    size_t next;      /* where the next section starts (after the padding) */
    char sec[16];     /* for messages: "header", a section's tag, "section 2" */
    char where[64];   /* the record being read: "segment 0 op 1" ("" between records) */
    uint32_t version; /* the header's: bf16 needs TPUB_VERSION */
    hlo_error *err;
    jmp_buf fail;
} reader;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3), noreturn))
#endif
static void
fail(reader *r, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    hlo_errorf(r->err, "%s: %s%s%s", r->sec, r->where, r->where[0] ? ": " : "", what);
    longjmp(r->fail, 1);
}

static const uint8_t *take(reader *r, size_t n, const char *field)
{
    const uint8_t *p = tpuio_take(&r->cur, n);
    if (!p)
        fail(r, "%s: truncated (%zu bytes left, need %zu)", field, tpuio_left(&r->cur), n);
    return p;
}

static uint32_t rd_u32(reader *r, const char *field)
{
    return (uint32_t)tpuio_get_le(take(r, 4, field), 4);
}

static uint64_t rd_u64(reader *r, const char *field) { return tpuio_get_le(take(r, 8, field), 8); }

static float rd_f32(reader *r, const char *field)
{
    uint32_t v = rd_u32(r, field);
    float f;
    memcpy(&f, &v, sizeof f);
    return f;
}

static hlo_type rd_type(reader *r, const char *field)
{
    uint32_t code = rd_u32(r, field);
    if (code >= TPUB_N_TYPE_CODES)
        fail(r, "%s: unknown type code %" PRIu32, field, code);
    return tpub_type_codes[code];
}

/* A count of records of at least min bytes each: no more than the bytes left can hold. */
static uint32_t rd_count(reader *r, const char *field, size_t min)
{
    uint32_t n = rd_u32(r, field);
    const size_t left = tpuio_left(&r->cur);
    if ((uint64_t)n * min > left)
        fail(r, "%s: %" PRIu32 " claimed, at most %zu fit in the %zu bytes left", field, n,
             left / min, left);
    return n;
}

/* Zeroed room for n records (NULL for none). */
static void *alloc(reader *r, size_t n, size_t size)
{
    if (!n)
        return NULL;
    void *p = calloc(n, size);
    if (!p)
        fail(r, "out of memory");
    return p;
}

static char *dup_text(reader *r, const char *field, const uint8_t *s, size_t n, bool nonempty)
{
    if (nonempty && !n)
        fail(r, "%s: empty", field);
    const uint8_t *nul = memchr(s, 0, n);
    if (nul)
        fail(r, "%s: NUL byte at offset %zu", field, (size_t)(nul - s));
    char *t = malloc(n + 1);
    if (!t)
        fail(r, "out of memory");
    memcpy(t, s, n);
    t[n] = 0;
    return t;
}

static char *rd_str(reader *r, const char *field, bool nonempty)
{
    uint32_t n = rd_u32(r, field);
    return dup_text(r, field, take(r, n, field), n, nonempty);
}

/* Reads section i's header and makes its payload the current one. */
static void begin_read(reader *r, uint32_t i)
{
    snprintf(r->sec, sizeof r->sec, "section %" PRIu32, i);
    r->where[0] = 0;
    r->cur.len = r->len;
    const uint8_t *h = take(r, 16, "header");
    if (memcmp(h, tpub_section_tags[i], 4)) {
        for (uint32_t j = 0; j < TPUB_N_SECTIONS; j++)
            if (!memcmp(h, tpub_section_tags[j], 4))
                fail(r, "tag: '%s' out of order ('%s' expected)", tpub_section_tags[j],
                     tpub_section_tags[i]);
        fail(r, "tag: unknown 0x%08" PRIx32 " ('%s' expected)", (uint32_t)tpuio_get_le(h, 4),
             tpub_section_tags[i]);
    }
    snprintf(r->sec, sizeof r->sec, "%s", tpub_section_tags[i]);
    uint32_t reserved = (uint32_t)tpuio_get_le(h + 4, 4);
    if (reserved)
        fail(r, "reserved: 0x%" PRIx32 " (must be 0)", reserved);
    uint64_t bytes = tpuio_get_le(h + 8, 8), left = tpuio_left(&r->cur);
    if (bytes > left)
        fail(r, "bytes: 0x%" PRIx64 " past the end of the file (0x%" PRIx64 " bytes left)", bytes,
             left);
    uint64_t pad = (8 - bytes % 8) % 8;
    if (pad > left - bytes)
        fail(r, "padding: truncated (%" PRIu64 " bytes left, need %" PRIu64 ")", left - bytes, pad);
    r->cur.len = r->cur.pos + (size_t)bytes;
    r->next = r->cur.len + (size_t)pad;
}

static void end_read(reader *r)
{
    r->where[0] = 0;
    if (tpuio_left(&r->cur))
        fail(r, "%zu bytes after the last field", tpuio_left(&r->cur));
    for (size_t p = r->cur.len; p < r->next; p++)
        if (r->cur.p[p])
            fail(r, "padding: byte %zu not zero", p - r->cur.len);
    r->cur.pos = r->cur.len = r->next;
}

static void read_arena(reader *r, tpub_package *pkg)
{
    pkg->array_n = rd_u32(r, "array_n");
    uint32_t reserved = rd_u32(r, "reserved");
    pkg->arena_bytes = rd_u64(r, "arena_bytes");
    pkg->const_bytes = rd_u64(r, "const_bytes");
    if (!pkg->array_n)
        fail(r, "array_n: 0 (must be >= 1)");
    if (reserved)
        fail(r, "reserved: 0x%" PRIx32 " (must be 0)", reserved);
    if (pkg->arena_bytes > MAX_ARENA)
        fail(r, "arena_bytes: 0x%" PRIx64 " does not fit the device's 32-bit addresses",
             pkg->arena_bytes);
    if (pkg->const_bytes > pkg->arena_bytes)
        fail(r, "const_bytes: 0x%" PRIx64 " more than arena_bytes 0x%" PRIx64, pkg->const_bytes,
             pkg->arena_bytes);
    const uint8_t *image = take(r, (size_t)pkg->const_bytes, "const_image");
    pkg->const_image = alloc(r, (size_t)pkg->const_bytes, 1);
    if (pkg->const_bytes)
        memcpy(pkg->const_image, image, (size_t)pkg->const_bytes);
}

static void read_sig(reader *r, tpub_sig *s)
{
    s->name = rd_str(r, "name", true);
    s->type = rd_type(r, "type");
    uint32_t rank = rd_u32(r, "rank");
    if (!tpub_sig_type(s->type))
        fail(r, "type: %s not allowed (f32, bf16, f16, s8, u8, s32 or s64)",
             hlo_type_name(s->type));
    if ((s->type == HLO_BF16 || s->type == HLO_F16) && r->version < TPUB_VERSION)
        fail(r, "type: %s in a version %" PRIu32 " package (16-bit floats need version 3)",
             hlo_type_name(s->type), r->version);
    if (rank > TPUB_MAX_RANK)
        fail(r, "rank: %" PRIu32 " more than %d", rank, TPUB_MAX_RANK);
    s->rank = (int)rank;
    bool empty = false;
    for (int d = 0; d < s->rank; d++) {
        s->dims[d] = (int64_t)rd_u64(r, "dims");
        if (s->dims[d] < 0)
            fail(r, "dims[%d]: %" PRId64 " (must be >= 0)", d, s->dims[d]);
        empty |= s->dims[d] == 0;
    }
    int64_t elements = 1;
    for (int d = 0; d < s->rank && !empty; d++) {
        if (s->dims[d] > HLO_MAX_ELEMENTS / elements)
            fail(r, "dims: more than %lld elements", (long long)HLO_MAX_ELEMENTS);
        elements *= s->dims[d];
    }
}

static void read_sigs(reader *r, tpub_package *pkg)
{
    uint32_t n_in = rd_count(r, "inputs", MIN_SIG), n_out = rd_count(r, "outputs", MIN_SIG);
    pkg->inputs = alloc(r, n_in, sizeof *pkg->inputs);
    pkg->n_inputs = n_in;
    pkg->outputs = alloc(r, n_out, sizeof *pkg->outputs);
    pkg->n_outputs = n_out;
    for (uint32_t i = 0; i < n_in; i++) {
        snprintf(r->where, sizeof r->where, "input %" PRIu32, i);
        read_sig(r, &pkg->inputs[i]);
    }
    for (uint32_t i = 0; i < n_out; i++) {
        snprintf(r->where, sizeof r->where, "output %" PRIu32, i);
        read_sig(r, &pkg->outputs[i]);
    }
}

/* [off, off + bytes) must lie in the arena and, when the device or the host writes it, outside
 * the constant image (which is written once, at load). */
static void check_range(reader *r, const tpub_package *pkg, const char *what, uint64_t off,
                        uint64_t bytes, bool written)
{
    if (off > pkg->arena_bytes || bytes > pkg->arena_bytes - off)
        fail(r, "%s 0x%" PRIx64 "+0x%" PRIx64 " outside the arena (0x%" PRIx64 " bytes)", what, off,
             bytes, pkg->arena_bytes);
    if (written && off < pkg->const_bytes)
        fail(r, "%s 0x%" PRIx64 "+0x%" PRIx64 " overlaps the constant image (0x%" PRIx64 " bytes)",
             what, off, bytes, pkg->const_bytes);
}

/* A permutation of 0..rank-1 other than the identity, of dims whose product is the device
 * array's rows x cols. */
static void check_perm(reader *r, const tpub_xfer *x)
{
    bool seen[TPUB_MAX_RANK] = {false}, identity = true;
    uint64_t elements = 1;
    for (uint32_t i = 0; i < x->rank; i++) {
        if (x->perm[i] >= x->rank || seen[x->perm[i]])
            fail(r, "perm[%" PRIu32 "]: %" PRIu32 " (a permutation of 0..%" PRIu32 ")", i,
                 x->perm[i], x->rank - 1);
        seen[x->perm[i]] = true;
        identity &= x->perm[i] == i;
    }
    if (x->rank && identity)
        fail(r, "perm: the identity (written as rank 0)");
    for (uint32_t i = 0; i < x->rank; i++) {
        if (x->dims[i] < 1)
            fail(r, "dims[%" PRIu32 "]: %" PRId64 " (must be >= 1)", i, x->dims[i]);
        elements = tpub_mul_sat(elements, (uint64_t)x->dims[i]);
    }
    if (x->rank && elements != (uint64_t)x->rows * x->cols)
        fail(r, "dims: %" PRIu64 " elements, the device's %" PRIu32 " x %" PRIu32, elements,
             x->rows, x->cols);
}

/* A gather: an input's, without a permutation, one index per device element, each a host
 * element or TPUB_GATHER_ZERO. */
static void check_gather(reader *r, const tpub_xfer *x, uint32_t n, bool input)
{
    if (!input)
        fail(r, "n_gather: %" PRIu32 " (an output does not gather)", n);
    if (x->rank)
        fail(r, "n_gather: %" PRIu32 " with a permutation (rank %" PRIu32 ")", n, x->rank);
    if (n != (uint64_t)x->rows * x->cols)
        fail(r, "n_gather: %" PRIu32 ", the device's %" PRIu32 " x %" PRIu32, n, x->rows, x->cols);
    if (x->host_elements < 1 || x->host_elements > (uint64_t)1 << 31)
        fail(r, "host_elements: %" PRIu64 " (1..2^31)", x->host_elements);
    for (uint32_t i = 0; i < n; i++)
        if (x->gather[i] != TPUB_GATHER_ZERO && x->gather[i] >= x->host_elements)
            fail(r, "gather[%" PRIu32 "]: %" PRIu32 " (host_elements %" PRIu64 ")", i, x->gather[i],
                 x->host_elements);
}

static void read_xfer(reader *r, const tpub_package *pkg, tpub_xfer *x, bool input)
{
    x->off = rd_u64(r, "off");
    x->rows = rd_u32(r, "rows");
    x->cols = rd_u32(r, "cols");
    x->ld = rd_u32(r, "ld");
    x->dev_type = rd_type(r, "dev_type");
    x->host_type = rd_type(r, "host_type");
    x->n_scale = rd_count(r, "n_scale", sizeof(float));
    x->scale = alloc(r, x->n_scale, sizeof(float));
    for (uint32_t i = 0; i < x->n_scale; i++)
        x->scale[i] = rd_f32(r, "scale");
    x->rank = rd_u32(r, "rank");
    if (x->rank == 1 || x->rank > TPUB_MAX_RANK)
        fail(r, "rank: %" PRIu32 " (0, or a permutation's 2..%d)", x->rank, TPUB_MAX_RANK);
    for (uint32_t i = 0; i < x->rank; i++)
        x->perm[i] = rd_u32(r, "perm");
    for (uint32_t i = 0; i < x->rank; i++)
        x->dims[i] = (int64_t)rd_u64(r, "dims");
    const uint32_t n_gather = r->version < TPUB_VERSION ? 0 : rd_count(r, "n_gather", 4);
    if (n_gather) {
        x->host_elements = rd_u64(r, "host_elements");
        x->gather = alloc(r, n_gather, sizeof *x->gather);
        for (uint32_t i = 0; i < n_gather; i++)
            x->gather[i] = rd_u32(r, "gather");
    }

    if (!x->rows)
        fail(r, "rows: 0");
    if (!x->cols)
        fail(r, "cols: 0");
    if (x->ld < x->cols)
        fail(r, "ld: %" PRIu32 " < cols %" PRIu32, x->ld, x->cols);
    const char *kind = input ? "an input" : "an output";
    /* bf16 and fp32 on the device: converted from or to a float host type, never scaled. */
    const bool fp =
        input ? x->dev_type == HLO_BF16 : x->dev_type == HLO_F32 || x->dev_type == HLO_BF16;
    if (!fp && (input ? x->dev_type != HLO_S8 && x->dev_type != HLO_U8
                      : x->dev_type != HLO_S32 && x->dev_type != HLO_S8))
        fail(r, "dev_type: %s not allowed for %s (%s)", hlo_type_name(x->dev_type), kind,
             input ? "s8, u8 or bf16" : "s32, s8, f32 or bf16");
    if (fp && r->version < TPUB_VERSION)
        fail(r, "dev_type: %s in a version %" PRIu32 " package (bf16 needs version %u)",
             hlo_type_name(x->dev_type), r->version, TPUB_VERSION);
    if (x->host_type != x->dev_type && !hlo_is_float(x->host_type))
        fail(r, "host_type: %s not allowed with dev_type %s (%s%sa float type)",
             hlo_type_name(x->host_type), hlo_type_name(x->dev_type),
             fp ? "" : hlo_type_name(x->dev_type), fp ? "" : " or ");
    if (fp) {
        if (x->n_scale)
            fail(r, "n_scale: %" PRIu32 " (a %s transfer has none)", x->n_scale,
                 hlo_type_name(x->dev_type));
    } else if (x->host_type == x->dev_type) {
        if (x->n_scale)
            fail(r, "n_scale: %" PRIu32 " (a copy has none)", x->n_scale);
    } else if (input ? x->n_scale != 1 : x->n_scale != 1 && x->n_scale != x->cols) {
        fail(r, "n_scale: %" PRIu32 " (%s)", x->n_scale,
             input ? "a quantized input has 1" : "a dequantized output has 1 or cols");
    }
    for (uint32_t i = 0; i < x->n_scale; i++)
        if (!isfinite(x->scale[i]) || (input && !(x->scale[i] > 0)))
            fail(r, "scale[%" PRIu32 "]: %g (must be finite%s)", i, (double)x->scale[i],
                 input ? " and > 0" : "");
    check_perm(r, x);
    if (n_gather)
        check_gather(r, x, n_gather, input);
    check_range(r, pkg, "extent", x->off,
                tpub_extent(x->rows, x->ld, x->cols, hlo_type_size(x->dev_type)), input);
}

/* The output (named out: "c" or "out") may not intersect operand what. */
static void check_disjoint(reader *r, const char *out, uint64_t c, uint64_t c_bytes,
                           const char *what, uint64_t o, uint64_t o_bytes)
{
    if (c < o + o_bytes && o < c + c_bytes)
        fail(r, "%s extent 0x%" PRIx64 "+0x%" PRIx64 " overlaps %s 0x%" PRIx64 "+0x%" PRIx64, out,
             c, c_bytes, what, o, o_bytes);
}

/* A GEMM's or CONV2D's operands: two inputs and the output (name, off, bytes: [0], [1], [2]) and
 * the parameters when flagged (else p_off must be 0), each inside the arena, the output
 * disjoint from the others. */
static void check_operands(reader *r, const tpub_package *pkg, const char *const name[3],
                           const uint64_t off[3], const uint64_t bytes[3], bool params,
                           uint64_t p_off, uint64_t p_bytes)
{
    char what[32];
    for (int i = 0; i < 3; i++) {
        snprintf(what, sizeof what, "%s extent", name[i]);
        check_range(r, pkg, what, off[i], bytes[i], i == 2);
    }
    if (params)
        check_range(r, pkg, "params extent", p_off, p_bytes, false);
    else if (p_off)
        fail(r, "p_off: 0x%" PRIx64 " without BIAS or OUT_INT8 (must be 0)", p_off);
    for (int i = 0; i < 2; i++)
        check_disjoint(r, name[2], off[2], bytes[2], name[i], off[i], bytes[i]);
    if (params)
        check_disjoint(r, name[2], off[2], bytes[2], "params", p_off, p_bytes);
}

/* The rules of the BF16 and OUT_BF16 flags, a GEMM's or a CONV2D's. */
static void check_bf16_flags(reader *r, uint32_t flags)
{
    const bool bf16 = flags & TPUB_GEMM_BF16;
    if (flags & FW_FLAGS_V3 && r->version < TPUB_VERSION)
        fail(r, "flags: BF16 or OUT_BF16 in a version %" PRIu32 " package (bf16 needs version %u)",
             r->version, TPUB_VERSION);
    if (bf16 && flags & (TPUB_GEMM_A_UNSIGNED | TPUB_GEMM_OUT_INT8))
        fail(r, "flags: A_UNSIGNED or OUT_INT8 with BF16");
    if (!bf16 && flags & TPUB_GEMM_OUT_BF16)
        fail(r, "flags: OUT_BF16 without BF16");
}

static void read_gemm(reader *r, const tpub_package *pkg, tpub_gemm *g)
{
    g->m = rd_u32(r, "m");
    g->k = rd_u32(r, "k");
    g->n = rd_u32(r, "n");
    g->flags = rd_u32(r, "flags");
    g->a_off = rd_u64(r, "a_off");
    g->b_off = rd_u64(r, "b_off");
    g->c_off = rd_u64(r, "c_off");
    g->p_off = rd_u64(r, "p_off");
    g->lda = rd_u32(r, "lda");
    g->ldc = rd_u32(r, "ldc");
    g->name = rd_str(r, "name", false);
    g->fused = rd_str(r, "fused", false);

    if (!g->m)
        fail(r, "m: 0");
    if (!g->k)
        fail(r, "k: 0");
    if (!g->n)
        fail(r, "n: 0");
    if (g->flags & ~(uint32_t)TPUB_GEMM_ALL)
        fail(r, "flags: undefined bits 0x%" PRIx32, g->flags & ~(uint32_t)TPUB_GEMM_ALL);
    check_bf16_flags(r, g->flags);
    if (g->lda < g->k)
        fail(r, "lda: %" PRIu32 " < k %" PRIu32, g->lda, g->k);
    if (g->ldc < g->n)
        fail(r, "ldc: %" PRIu32 " < n %" PRIu32, g->ldc, g->n);
    const uint64_t c_elt = tpub_c_elt(g->flags);
    if (g->ldc * c_elt > UINT32_MAX)
        fail(r, "ldc: %" PRIu32 " x %" PRIu64 " bytes does not fit 32 bits", g->ldc, c_elt);
    bool params = g->flags & (TPUB_GEMM_BIAS | TPUB_GEMM_OUT_INT8);
    uint64_t a_bytes = tpub_extent(g->m, g->lda, g->k, tpub_ab_elt(g->flags));
    uint64_t b_bytes = tpub_b_bytes(g, pkg->array_n);
    uint64_t c_bytes = tpub_extent(g->m, g->ldc, g->n, c_elt);
    uint64_t p_bytes = tpub_p_bytes(g->flags, g->n);
    const char *const ops[3] = {"a", "b", "c"};
    const uint64_t offs[3] = {g->a_off, g->b_off, g->c_off}, bytes[3] = {a_bytes, b_bytes, c_bytes};
    check_operands(r, pkg, ops, offs, bytes, params, g->p_off, p_bytes);
}

/* A field of at least lo and at most hi. */
static void check_in(reader *r, const char *field, uint32_t v, uint32_t lo, uint32_t hi)
{
    if (v < lo || v > hi)
        fail(r, "%s: %" PRIu32 " (must be %" PRIu32 "..%" PRIu32 ")", field, v, lo, hi);
}

static void read_conv(reader *r, const tpub_package *pkg, tpub_conv *v)
{
    static const char *const names[] = {"flags",
                                        "batch",
                                        "h",
                                        "w",
                                        "c",
                                        "kh",
                                        "kw",
                                        "cout",
                                        "stride_h",
                                        "stride_w",
                                        "pad_top",
                                        "pad_bottom",
                                        "pad_left",
                                        "pad_right",
                                        "pool_h",
                                        "pool_w",
                                        "pool_stride_h",
                                        "pool_stride_w"};
    uint32_t *const fields[] = {&v->flags,
                                &v->batch,
                                &v->h,
                                &v->w,
                                &v->c,
                                &v->kh,
                                &v->kw,
                                &v->cout,
                                &v->stride_h,
                                &v->stride_w,
                                &v->pad_top,
                                &v->pad_bottom,
                                &v->pad_left,
                                &v->pad_right,
                                &v->pool_h,
                                &v->pool_w,
                                &v->pool_stride_h,
                                &v->pool_stride_w};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        *fields[i] = rd_u32(r, names[i]);
    v->in_off = rd_u64(r, "in_off");
    v->k_off = rd_u64(r, "k_off");
    v->out_off = rd_u64(r, "out_off");
    v->p_off = rd_u64(r, "p_off");
    v->name = rd_str(r, "name", false);
    v->fused = rd_str(r, "fused", false);

    if (v->flags & ~(uint32_t)TPUB_CONV_ALL)
        fail(r, "flags: undefined bits 0x%" PRIx32, v->flags & ~(uint32_t)TPUB_CONV_ALL);
    check_bf16_flags(r, v->flags);
    const bool pool = v->flags & TPUB_CONV_POOL, bf16 = v->flags & TPUB_GEMM_BF16;
    if (pool && !(v->flags & (bf16 ? TPUB_GEMM_OUT_BF16 : TPUB_GEMM_OUT_INT8)))
        fail(r, bf16 ? "flags: POOL without OUT_BF16 (pooling needs the bf16 output)"
                     : "flags: POOL without OUT_INT8 (pooling needs the int8 output)");
    check_in(r, "batch", v->batch, 1, UINT32_MAX);
    check_in(r, "h", v->h, 1, CONV_DIM_MAX);
    check_in(r, "w", v->w, 1, CONV_DIM_MAX);
    check_in(r, "c", v->c, 1, CONV_DIM_MAX);
    check_in(r, "cout", v->cout, 1, CONV_DIM_MAX);
    check_in(r, "stride_h", v->stride_h, 1, CONV_STRIDE_MAX);
    /* bf16: MATMUL's UB row stride steps over row pairs */
    check_in(r, "stride_w", v->stride_w, 1, bf16 ? CONV_STRIDE_MAX / 2 : CONV_STRIDE_MAX);
    check_in(r, "pad_top", v->pad_top, 0, CONV_PAD_MAX);
    check_in(r, "pad_bottom", v->pad_bottom, 0, CONV_PAD_MAX);
    check_in(r, "pad_left", v->pad_left, 0, CONV_PAD_MAX);
    check_in(r, "pad_right", v->pad_right, 0, CONV_PAD_MAX);
    check_in(r, "kh", v->kh, 1, v->h + v->pad_top + v->pad_bottom);
    check_in(r, "kw", v->kw, 1, v->w + v->pad_left + v->pad_right);
    tpub_conv unpooled = *v;
    unpooled.flags &= ~(uint32_t)TPUB_CONV_POOL;
    uint32_t oh, ow;
    tpub_conv_out_size(&unpooled, &oh, &ow);
    if (pool) {
        check_in(r, "pool_h", v->pool_h, 1, oh < CONV_POOL_MAX ? oh : CONV_POOL_MAX);
        check_in(r, "pool_w", v->pool_w, 1, ow < CONV_POOL_MAX ? ow : CONV_POOL_MAX);
        check_in(r, "pool_stride_h", v->pool_stride_h, 1, CONV_STRIDE_MAX);
        check_in(r, "pool_stride_w", v->pool_stride_w, 1, CONV_STRIDE_MAX);
    } else if (v->pool_h || v->pool_w || v->pool_stride_h || v->pool_stride_w) {
        fail(r,
             "pool: %" PRIu32 " x %" PRIu32 " stride %" PRIu32 " x %" PRIu32
             " without POOL (must be 0)",
             v->pool_h, v->pool_w, v->pool_stride_h, v->pool_stride_w);
    }
    const bool params = v->flags & (TPUB_GEMM_BIAS | TPUB_GEMM_OUT_INT8);
    const uint64_t in_bytes = tpub_conv_in_bytes(v), k_bytes = tpub_kernel_bytes(v, pkg->array_n);
    const uint64_t out_bytes = tpub_conv_out_bytes(v), p_bytes = tpub_p_bytes(v->flags, v->cout);
    const char *const ops[3] = {"in", "kernel", "out"};
    const uint64_t offs[3] = {v->in_off, v->k_off, v->out_off};
    const uint64_t bytes[3] = {in_bytes, k_bytes, out_bytes};
    check_operands(r, pkg, ops, offs, bytes, params, v->p_off, p_bytes);
}

static void read_op(reader *r, const tpub_package *pkg, tpub_op *op)
{
    const uint32_t kind = rd_u32(r, "kind");
    if (kind == TPUB_OP_GEMM) {
        op->kind = TPUB_OP_GEMM;
        read_gemm(r, pkg, &op->gemm);
    } else if (kind == TPUB_OP_CONV2D) {
        op->kind = TPUB_OP_CONV2D;
        read_conv(r, pkg, &op->conv);
    } else {
        fail(r, "kind: unknown %" PRIu32 " (1 GEMM, 2 CONV2D)", kind);
    }
}

static void read_segments(reader *r, tpub_package *pkg)
{
    uint32_t n = rd_count(r, "segments", MIN_SEGMENT);
    pkg->segments = alloc(r, n, sizeof *pkg->segments);
    pkg->n_segments = n;
    for (uint32_t s = 0; s < n; s++) {
        tpub_segment *seg = &pkg->segments[s];
        snprintf(r->where, sizeof r->where, "segment %" PRIu32, s);
        uint32_t n_in = rd_count(r, "inputs", MIN_XFER);
        uint32_t n_out = rd_count(r, "outputs", MIN_XFER);
        uint32_t n_ops = rd_count(r, "ops", MIN_OP);
        seg->inputs = alloc(r, n_in, sizeof *seg->inputs);
        seg->n_inputs = n_in;
        seg->outputs = alloc(r, n_out, sizeof *seg->outputs);
        seg->n_outputs = n_out;
        seg->ops = alloc(r, n_ops, sizeof *seg->ops);
        seg->n_ops = n_ops;
        for (uint32_t i = 0; i < n_in; i++) {
            snprintf(r->where, sizeof r->where, "segment %" PRIu32 " input %" PRIu32, s, i);
            read_xfer(r, pkg, &seg->inputs[i], true);
        }
        for (uint32_t i = 0; i < n_out; i++) {
            snprintf(r->where, sizeof r->where, "segment %" PRIu32 " output %" PRIu32, s, i);
            read_xfer(r, pkg, &seg->outputs[i], false);
        }
        for (uint32_t i = 0; i < n_ops; i++) {
            snprintf(r->where, sizeof r->where, "segment %" PRIu32 " op %" PRIu32, s, i);
            read_op(r, pkg, &seg->ops[i]);
        }
    }
}

static char *read_text(reader *r, bool nonempty)
{
    const size_t n = tpuio_left(&r->cur);
    return dup_text(r, "text", take(r, n, "text"), n, nonempty);
}

int tpub_parse(const void *buf, size_t len, tpub_package *out, hlo_error *err)
{
    memset(out, 0, sizeof *out);
    reader r = {.cur = {buf, len, 0}, .len = len, .sec = "header", .err = err};
    if (setjmp(r.fail)) {
        tpub_free(out);
        return -1;
    }
    const uint8_t *h = tpuio_take(&r.cur, TPUB_HEADER_BYTES);
    if (!h)
        fail(&r, "truncated (%zu bytes, need %u)", len, TPUB_HEADER_BYTES);
    if (memcmp(h, "TPUB", 4))
        fail(&r, "magic: not \"TPUB\"");
    const uint32_t version = (uint32_t)tpuio_get_le(h + 4, 4);
    const uint32_t sections = (uint32_t)tpuio_get_le(h + 8, 4);
    const uint32_t reserved = (uint32_t)tpuio_get_le(h + 12, 4);
    if (version == 1)
        fail(&r,
             "version: 1, a package of an older tpuc (this reader reads %u and %u): compile the "
             "model again",
             TPUB_VERSION_INT8, TPUB_VERSION);
    if (version != TPUB_VERSION && version != TPUB_VERSION_INT8)
        fail(&r, "version: %" PRIu32 " (this reader reads %u and %u)", version, TPUB_VERSION_INT8,
             TPUB_VERSION);
    r.version = version;
    if (sections != TPUB_N_SECTIONS)
        fail(&r, "sections: %" PRIu32 " (version %" PRIu32 " has %u)", sections, version,
             TPUB_N_SECTIONS);
    if (reserved)
        fail(&r, "reserved: 0x%" PRIx32 " (must be 0)", reserved);

    begin_read(&r, 0);
    read_arena(&r, out);
    end_read(&r);
    begin_read(&r, 1);
    read_sigs(&r, out);
    end_read(&r);
    begin_read(&r, 2);
    read_segments(&r, out);
    end_read(&r);
    /* One image per package: version 3 only with bf16, 16-bit float signatures or gathers. */
    if (version != tpub_version(out)) {
        snprintf(r.sec, sizeof r.sec, "header");
        fail(&r,
             "version: %" PRIu32 " for a package without bf16, 16-bit float signatures or "
             "gathers (written as %u)",
             version, TPUB_VERSION_INT8);
    }
    begin_read(&r, 3);
    out->host_hlo = read_text(&r, true);
    end_read(&r);
    begin_read(&r, 4);
    out->report = read_text(&r, false);
    end_read(&r);

    if (r.cur.pos != len) {
        snprintf(r.sec, sizeof r.sec, "file");
        fail(&r, "%zu bytes after the last section", len - r.cur.pos);
    }
    return 0;
}

int tpub_load(const char *path, tpub_package *out, hlo_error *err)
{
    memset(out, 0, sizeof *out);
    void *buf;
    size_t len;
    char why[sizeof err->msg];
    if (tpuio_read_file(path, TPUB_MAX_FILE, &buf, &len, why, sizeof why))
        return hlo_errorf(err, "%s", why);
    const int rc = tpub_parse(buf, len, out, err);
    free(buf);
    return rc;
}

/* tpub.c - the package format (tpub.h; every field and rule is in docs/package.md).
 * tpub_save serializes the package and validates the image with the reader before writing it,
 * so it never writes a file tpub_load refuses. The reader longjmps out on the first problem;
 * everything it has allocated is then reachable from the package being built, which tpub_free
 * releases. */
#include "compiler/tpub.h"

#include "io/tpuio.h"

#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The names of the TPUB_GEMM_* flags, bit by bit, for the listing. */
static const char *const flag_names[] = {"BIAS", "RELU", "OUT_INT8", "A_UNSIGNED", "B_TILED"};

/* Element type codes of the file: fixed by the format, not by the order of hlo_type. */
static const hlo_type type_codes[] = {HLO_PRED, HLO_S8,  HLO_S16, HLO_S32,  HLO_S64,
                                      HLO_U8,   HLO_U16, HLO_U32, HLO_U64,  HLO_F16,
                                      HLO_BF16, HLO_F32, HLO_F64};
#define N_TYPE_CODES (sizeof type_codes / sizeof type_codes[0])

/* The sections of version 1: each exactly once, in this order. */
static const char section_tags[][5] = {"ARNA", "SIGS", "SEGS", "HOST", "REPT"};
#define N_SECTIONS ((uint32_t)(sizeof section_tags / sizeof section_tags[0]))
#define HEADER_BYTES 16u
#define MAX_ARENA UINT32_MAX /* device addresses and buffer sizes are 32-bit */

/* The smallest encoding of each record: counts are bounded by the bytes left before anything
 * is allocated. */
#define MIN_SIG 13u /* name length, a 1-byte name, type, rank */
#define MIN_SEGMENT 12u
#define MIN_XFER 32u
#define MIN_GEMM 64u

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    return a && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

/* Bytes from an operand's first element to its last, ((rows-1)*ld + width) * elt, saturated
 * (no arena is that large). rows >= 1. */
static uint64_t extent(uint64_t rows, uint64_t ld, uint64_t width, uint64_t elt)
{
    return mul_sat(add_sat(mul_sat(rows - 1, ld), width), elt);
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
}

/* The bytes of B in tile order: KT x NT tiles of N x N. */
static uint64_t b_tiled_bytes(const tpub_gemm *g, uint32_t array_n)
{
    return mul_sat(mul_sat(ceil_div(g->k, array_n), ceil_div(g->n, array_n)),
                   (uint64_t)array_n * array_n);
}

/* ------------------------------------------------------------------ writer -- */

typedef struct {
    uint8_t *b;
    size_t len, cap;
    const char *fail; /* the first problem; later puts do nothing */
} writer;

static void put(writer *w, const void *p, size_t n)
{
    if (w->fail || !n)
        return;
    if (n > w->cap - w->len) {
        size_t cap = w->cap ? w->cap : 4096;
        while (n > cap - w->len && cap <= SIZE_MAX / 2)
            cap *= 2;
        uint8_t *nb = n <= cap - w->len ? realloc(w->b, cap) : NULL;
        if (!nb) {
            w->fail = "out of memory";
            return;
        }
        w->b = nb;
        w->cap = cap;
    }
    memcpy(w->b + w->len, p, n);
    w->len += n;
}

static void put_le(writer *w, uint64_t v, int n)
{
    uint8_t b[8];
    tpuio_put_le(b, v, n);
    put(w, b, (size_t)n);
}

static void put_f32(writer *w, float f)
{
    uint32_t v;
    memcpy(&v, &f, sizeof v);
    put_le(w, v, 4);
}

/* A type without a code is written as UINT32_MAX, which the reader refuses. */
static void put_type(writer *w, hlo_type t)
{
    uint32_t code = UINT32_MAX;
    for (uint32_t i = 0; i < N_TYPE_CODES; i++)
        if (type_codes[i] == t)
            code = i;
    put_le(w, code, 4);
}

static void put_str(writer *w, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n > UINT32_MAX) {
        if (!w->fail)
            w->fail = "a name is longer than 4 GiB";
        return;
    }
    put_le(w, n, 4);
    put(w, s, n);
}

/* Returns where the section's header starts, for end_section to fill in its length. */
static size_t begin_section(writer *w, const char *tag)
{
    size_t at = w->len;
    put(w, tag, 4);
    put_le(w, 0, 4);
    put_le(w, 0, 8);
    return at;
}

static void end_section(writer *w, size_t at)
{
    static const uint8_t zeros[8];
    if (w->fail)
        return;
    uint64_t bytes = w->len - at - 16;
    tpuio_put_le(w->b + at + 8, bytes, 8);
    put(w, zeros, (size_t)((8 - bytes % 8) % 8));
}

static void put_sig(writer *w, const tpub_sig *s)
{
    put_str(w, s->name);
    put_type(w, s->type);
    put_le(w, (uint32_t)s->rank, 4);
    for (int d = 0; d < s->rank && d < TPUB_MAX_RANK; d++)
        put_le(w, (uint64_t)s->dims[d], 8);
}

static void put_xfer(writer *w, const tpub_xfer *x)
{
    put_le(w, x->off, 8);
    put_le(w, x->rows, 4);
    put_le(w, x->cols, 4);
    put_le(w, x->ld, 4);
    put_type(w, x->dev_type);
    put_type(w, x->host_type);
    put_le(w, x->n_scale, 4);
    for (uint32_t i = 0; i < x->n_scale; i++)
        put_f32(w, x->scale[i]);
}

static void put_gemm(writer *w, const tpub_gemm *g)
{
    put_le(w, g->m, 4);
    put_le(w, g->k, 4);
    put_le(w, g->n, 4);
    put_le(w, g->flags, 4);
    put_le(w, g->a_off, 8);
    put_le(w, g->b_off, 8);
    put_le(w, g->c_off, 8);
    put_le(w, g->p_off, 8);
    put_le(w, g->lda, 4);
    put_le(w, g->ldc, 4);
    put_str(w, g->name);
    put_str(w, g->fused);
}

static void put_text(writer *w, const char *tag, const char *text)
{
    size_t at = begin_section(w, tag);
    put(w, text, text ? strlen(text) : 0);
    end_section(w, at);
}

static void encode(const tpub_package *pkg, writer *w)
{
    put(w, "TPUB", 4);
    put_le(w, TPUB_VERSION, 4);
    put_le(w, N_SECTIONS, 4);
    put_le(w, 0, 4);

    size_t at = begin_section(w, "ARNA");
    put_le(w, pkg->array_n, 4);
    put_le(w, 0, 4);
    put_le(w, pkg->arena_bytes, 8);
    put_le(w, pkg->const_bytes, 8);
    put(w, pkg->const_image, (size_t)pkg->const_bytes);
    end_section(w, at);

    at = begin_section(w, "SIGS");
    put_le(w, pkg->n_inputs, 4);
    put_le(w, pkg->n_outputs, 4);
    for (uint32_t i = 0; i < pkg->n_inputs; i++)
        put_sig(w, &pkg->inputs[i]);
    for (uint32_t i = 0; i < pkg->n_outputs; i++)
        put_sig(w, &pkg->outputs[i]);
    end_section(w, at);

    at = begin_section(w, "SEGS");
    put_le(w, pkg->n_segments, 4);
    for (uint32_t s = 0; s < pkg->n_segments; s++) {
        const tpub_segment *seg = &pkg->segments[s];
        put_le(w, seg->n_inputs, 4);
        put_le(w, seg->n_outputs, 4);
        put_le(w, seg->n_gemms, 4);
        for (uint32_t i = 0; i < seg->n_inputs; i++)
            put_xfer(w, &seg->inputs[i]);
        for (uint32_t i = 0; i < seg->n_outputs; i++)
            put_xfer(w, &seg->outputs[i]);
        for (uint32_t i = 0; i < seg->n_gemms; i++)
            put_gemm(w, &seg->gemms[i]);
    }
    end_section(w, at);

    put_text(w, "HOST", pkg->host_hlo);
    put_text(w, "REPT", pkg->report);
}

/* ------------------------------------------------------------------ reader -- */

typedef struct {
    tpuio_cursor cur;   /* over the image up to the end of the current section's payload */
    size_t len;         /* of the image */
    size_t next;        /* where the next section starts (after the padding) */
    char sec[16];       /* for messages: "header", a section's tag, "section 2" */
    char where[64];     /* the record being read: "segment 0 gemm 1" ("" between records) */
    char *err;
    size_t errlen;
    jmp_buf fail;
} reader;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3), noreturn))
#endif
static void fail(reader *r, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    tpuio_err(r->err, r->errlen, "%s: %s%s%s", r->sec, r->where, r->where[0] ? ": " : "", what);
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

static uint64_t rd_u64(reader *r, const char *field)
{
    return tpuio_get_le(take(r, 8, field), 8);
}

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
    if (code >= N_TYPE_CODES)
        fail(r, "%s: unknown type code %" PRIu32, field, code);
    return type_codes[code];
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
    if (memcmp(h, section_tags[i], 4)) {
        for (uint32_t j = 0; j < N_SECTIONS; j++)
            if (!memcmp(h, section_tags[j], 4))
                fail(r, "tag: '%s' out of order ('%s' expected)", section_tags[j],
                     section_tags[i]);
        fail(r, "tag: unknown 0x%08" PRIx32 " ('%s' expected)", (uint32_t)tpuio_get_le(h, 4),
             section_tags[i]);
    }
    snprintf(r->sec, sizeof r->sec, "%s", section_tags[i]);
    uint32_t reserved = (uint32_t)tpuio_get_le(h + 4, 4);
    if (reserved)
        fail(r, "reserved: 0x%" PRIx32 " (must be 0)", reserved);
    uint64_t bytes = tpuio_get_le(h + 8, 8), left = tpuio_left(&r->cur);
    if (bytes > left)
        fail(r, "bytes: 0x%" PRIx64 " past the end of the file (0x%" PRIx64 " bytes left)", bytes,
             left);
    uint64_t pad = (8 - bytes % 8) % 8;
    if (pad > left - bytes)
        fail(r, "padding: truncated (%" PRIu64 " bytes left, need %" PRIu64 ")", left - bytes,
             pad);
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
    if (s->type != HLO_F32 && s->type != HLO_S8 && s->type != HLO_U8 && s->type != HLO_S32)
        fail(r, "type: %s not allowed (f32, s8, u8 or s32)", hlo_type_name(s->type));
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
        fail(r, "%s 0x%" PRIx64 "+0x%" PRIx64 " outside the arena (0x%" PRIx64 " bytes)", what,
             off, bytes, pkg->arena_bytes);
    if (written && off < pkg->const_bytes)
        fail(r, "%s 0x%" PRIx64 "+0x%" PRIx64 " overlaps the constant image (0x%" PRIx64
                " bytes)", what, off, bytes, pkg->const_bytes);
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

    if (!x->rows)
        fail(r, "rows: 0");
    if (!x->cols)
        fail(r, "cols: 0");
    if (x->ld < x->cols)
        fail(r, "ld: %" PRIu32 " < cols %" PRIu32, x->ld, x->cols);
    const char *kind = input ? "an input" : "an output";
    if (input ? x->dev_type != HLO_S8 && x->dev_type != HLO_U8
              : x->dev_type != HLO_S32 && x->dev_type != HLO_S8)
        fail(r, "dev_type: %s not allowed for %s (%s)", hlo_type_name(x->dev_type), kind,
             input ? "s8 or u8" : "s32 or s8");
    if (x->host_type != x->dev_type && x->host_type != HLO_F32)
        fail(r, "host_type: %s not allowed with dev_type %s (%s or f32)",
             hlo_type_name(x->host_type), hlo_type_name(x->dev_type), hlo_type_name(x->dev_type));
    if (x->host_type == x->dev_type) {
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
    check_range(r, pkg, "extent", x->off,
                extent(x->rows, x->ld, x->cols, hlo_type_size(x->dev_type)), input);
}

static void check_disjoint(reader *r, const char *what, uint64_t c, uint64_t c_bytes, uint64_t o,
                           uint64_t o_bytes)
{
    if (c < o + o_bytes && o < c + c_bytes)
        fail(r, "c extent 0x%" PRIx64 "+0x%" PRIx64 " overlaps %s 0x%" PRIx64 "+0x%" PRIx64, c,
             c_bytes, what, o, o_bytes);
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
    if (!(g->flags & TPUB_GEMM_B_TILED))
        fail(r, "flags: B_TILED not set (B is always in tile order)");
    if (g->lda < g->k)
        fail(r, "lda: %" PRIu32 " < k %" PRIu32, g->lda, g->k);
    if (g->ldc < g->n)
        fail(r, "ldc: %" PRIu32 " < n %" PRIu32, g->ldc, g->n);
    uint64_t c_elt = g->flags & TPUB_GEMM_OUT_INT8 ? 1 : 4;
    if (g->ldc * c_elt > UINT32_MAX)
        fail(r, "ldc: %" PRIu32 " x %" PRIu64 " bytes does not fit 32 bits", g->ldc, c_elt);
    bool params = g->flags & (TPUB_GEMM_BIAS | TPUB_GEMM_OUT_INT8);
    uint64_t a_bytes = extent(g->m, g->lda, g->k, 1);
    uint64_t b_bytes = b_tiled_bytes(g, pkg->array_n);
    uint64_t c_bytes = extent(g->m, g->ldc, g->n, c_elt);
    uint64_t p_bytes = 12 * (uint64_t)g->n; /* int32 bias, mult, shift per column */
    check_range(r, pkg, "a extent", g->a_off, a_bytes, false);
    check_range(r, pkg, "b extent", g->b_off, b_bytes, false);
    check_range(r, pkg, "c extent", g->c_off, c_bytes, true);
    if (params)
        check_range(r, pkg, "params extent", g->p_off, p_bytes, false);
    else if (g->p_off)
        fail(r, "p_off: 0x%" PRIx64 " without BIAS or OUT_INT8 (must be 0)", g->p_off);
    check_disjoint(r, "a", g->c_off, c_bytes, g->a_off, a_bytes);
    check_disjoint(r, "b", g->c_off, c_bytes, g->b_off, b_bytes);
    if (params)
        check_disjoint(r, "params", g->c_off, c_bytes, g->p_off, p_bytes);
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
        uint32_t n_gemms = rd_count(r, "gemms", MIN_GEMM);
        seg->inputs = alloc(r, n_in, sizeof *seg->inputs);
        seg->n_inputs = n_in;
        seg->outputs = alloc(r, n_out, sizeof *seg->outputs);
        seg->n_outputs = n_out;
        seg->gemms = alloc(r, n_gemms, sizeof *seg->gemms);
        seg->n_gemms = n_gemms;
        for (uint32_t i = 0; i < n_in; i++) {
            snprintf(r->where, sizeof r->where, "segment %" PRIu32 " input %" PRIu32, s, i);
            read_xfer(r, pkg, &seg->inputs[i], true);
        }
        for (uint32_t i = 0; i < n_out; i++) {
            snprintf(r->where, sizeof r->where, "segment %" PRIu32 " output %" PRIu32, s, i);
            read_xfer(r, pkg, &seg->outputs[i], false);
        }
        for (uint32_t i = 0; i < n_gemms; i++) {
            snprintf(r->where, sizeof r->where, "segment %" PRIu32 " gemm %" PRIu32, s, i);
            read_gemm(r, pkg, &seg->gemms[i]);
        }
    }
}

static char *read_text(reader *r, bool nonempty)
{
    const size_t n = tpuio_left(&r->cur);
    return dup_text(r, "text", take(r, n, "text"), n, nonempty);
}

int tpub_parse(const void *buf, size_t len, tpub_package *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    reader r = {.cur = {buf, len, 0}, .len = len, .sec = "header", .err = err, .errlen = errlen};
    if (setjmp(r.fail)) {
        tpub_free(out);
        return -1;
    }
    const uint8_t *h = tpuio_take(&r.cur, HEADER_BYTES);
    if (!h)
        fail(&r, "truncated (%zu bytes, need %u)", len, HEADER_BYTES);
    if (memcmp(h, "TPUB", 4))
        fail(&r, "magic: not \"TPUB\"");
    const uint32_t version = (uint32_t)tpuio_get_le(h + 4, 4);
    const uint32_t sections = (uint32_t)tpuio_get_le(h + 8, 4);
    const uint32_t reserved = (uint32_t)tpuio_get_le(h + 12, 4);
    if (version != TPUB_VERSION)
        fail(&r, "version: %" PRIu32 " (this reader reads %u)", version, TPUB_VERSION);
    if (sections != N_SECTIONS)
        fail(&r, "sections: %" PRIu32 " (version %u has %" PRIu32 ")", sections, TPUB_VERSION,
             N_SECTIONS);
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

int tpub_load(const char *path, tpub_package *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    void *buf;
    size_t len;
    if (tpuio_read_file(path, TPUB_MAX_FILE, &buf, &len, err, errlen))
        return -1;
    const int rc = tpub_parse(buf, len, out, err, errlen);
    free(buf);
    return rc;
}

int tpub_save(const tpub_package *pkg, const char *path, char *err, size_t errlen)
{
    writer w = {0};
    encode(pkg, &w);
    tpub_package check;
    int rc = -1;
    if (w.fail)
        tpuio_err(err, errlen, "%s", w.fail);
    else if (!tpub_parse(w.b, w.len, &check, err, errlen)) {
        tpub_free(&check);
        rc = tpuio_write_file(path, w.b, w.len, err, errlen);
    }
    free(w.b);
    return rc;
}

void tpub_free(tpub_package *pkg)
{
    free(pkg->const_image);
    free(pkg->host_hlo);
    free(pkg->report);
    for (uint32_t i = 0; i < pkg->n_inputs; i++)
        free(pkg->inputs[i].name);
    for (uint32_t i = 0; i < pkg->n_outputs; i++)
        free(pkg->outputs[i].name);
    free(pkg->inputs);
    free(pkg->outputs);
    for (uint32_t s = 0; s < pkg->n_segments; s++) {
        tpub_segment *seg = &pkg->segments[s];
        for (uint32_t i = 0; i < seg->n_inputs; i++)
            free(seg->inputs[i].scale);
        for (uint32_t i = 0; i < seg->n_outputs; i++)
            free(seg->outputs[i].scale);
        for (uint32_t i = 0; i < seg->n_gemms; i++) {
            free(seg->gemms[i].name);
            free(seg->gemms[i].fused);
        }
        free(seg->inputs);
        free(seg->outputs);
        free(seg->gemms);
    }
    free(pkg->segments);
    memset(pkg, 0, sizeof *pkg);
}

/* ------------------------------------------------------------------ dump -- */

typedef struct {
    FILE *f;
    bool bad;
} dumper;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void say(dumper *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (vfprintf(d->f, fmt, ap) < 0)
        d->bad = true;
    va_end(ap);
}

static void dump_sig(dumper *d, uint32_t i, const tpub_sig *s)
{
    say(d, "  %" PRIu32 " %s: %s[", i, s->name, hlo_type_name(s->type));
    for (int k = 0; k < s->rank; k++)
        say(d, "%s%" PRId64, k ? "," : "", s->dims[k]);
    say(d, "]\n");
}

static void dump_xfer(dumper *d, bool input, uint32_t i, const tpub_xfer *x)
{
    say(d, "  %s %" PRIu32 ": 0x%" PRIx64 " %" PRIu32 " x %" PRIu32 " ld %" PRIu32 ", %s -> %s, ",
        input ? "input" : "output", i, x->off, x->rows, x->cols, x->ld,
        hlo_type_name(input ? x->host_type : x->dev_type),
        hlo_type_name(input ? x->dev_type : x->host_type));
    if (x->n_scale == 0) {
        say(d, "copy\n");
    } else if (x->n_scale == 1) {
        say(d, "scale %g\n", (double)x->scale[0]);
    } else {
        float lo = x->scale[0], hi = x->scale[0];
        for (uint32_t c = 1; c < x->n_scale; c++) {
            lo = fminf(lo, x->scale[c]);
            hi = fmaxf(hi, x->scale[c]);
        }
        say(d, "%" PRIu32 " scales %g .. %g\n", x->n_scale, (double)lo, (double)hi);
    }
}

static void dump_gemm(dumper *d, uint32_t i, const tpub_gemm *g, uint32_t array_n)
{
    say(d, "  gemm %" PRIu32 ": %s", i, g->name);
    if (g->fused && g->fused[0])
        say(d, ", fused %s", g->fused);
    say(d, "\n    m %" PRIu32 " k %" PRIu32 " n %" PRIu32 ", flags ", g->m, g->k, g->n);
    bool any = false;
    for (unsigned b = 0; b < 32; b++) {
        if (!(g->flags >> b & 1))
            continue;
        if (b < sizeof flag_names / sizeof flag_names[0])
            say(d, "%s%s", any ? "|" : "", flag_names[b]);
        else
            say(d, "%sbit%u", any ? "|" : "", b);
        any = true;
    }
    say(d, "%s\n    a 0x%" PRIx64 " lda %" PRIu32 ", b 0x%" PRIx64 ", c 0x%" PRIx64 " ldc %" PRIu32,
        any ? "" : "-", g->a_off, g->lda, g->b_off, g->c_off, g->ldc);
    if (g->flags & (TPUB_GEMM_BIAS | TPUB_GEMM_OUT_INT8))
        say(d, ", params 0x%" PRIx64, g->p_off);
    uint32_t n = array_n ? array_n : 1;
    say(d, "\n    tiles %" PRIu64 " x %" PRIu64 ", MACs %" PRIu64 "\n", ceil_div(g->k, n),
        ceil_div(g->n, n), mul_sat(mul_sat(g->m, g->k), g->n));
}

static void dump_text(dumper *d, const char *title, const char *text)
{
    size_t n = text ? strlen(text) : 0;
    say(d, "%s (%zu bytes):\n", title, n);
    if (n && fwrite(text, 1, n, d->f) != n)
        d->bad = true;
    if (n && text[n - 1] != '\n')
        say(d, "\n");
}

int tpub_dump(const tpub_package *pkg, FILE *out)
{
    dumper d = {out, false};
    say(&d, "tpub version %u, array %" PRIu32 "x%" PRIu32 "\n", TPUB_VERSION, pkg->array_n,
        pkg->array_n);
    say(&d, "arena 0x%" PRIx64 " bytes: constants [0x0, 0x%" PRIx64 "), activations [0x%" PRIx64
            ", 0x%" PRIx64 ")\n", pkg->arena_bytes, pkg->const_bytes, pkg->const_bytes,
        pkg->arena_bytes);
    say(&d, "inputs (%" PRIu32 "):\n", pkg->n_inputs);
    for (uint32_t i = 0; i < pkg->n_inputs; i++)
        dump_sig(&d, i, &pkg->inputs[i]);
    say(&d, "outputs (%" PRIu32 "):\n", pkg->n_outputs);
    for (uint32_t i = 0; i < pkg->n_outputs; i++)
        dump_sig(&d, i, &pkg->outputs[i]);
    for (uint32_t s = 0; s < pkg->n_segments; s++) {
        const tpub_segment *seg = &pkg->segments[s];
        say(&d, "segment %" PRIu32 ": inputs %" PRIu32 ", outputs %" PRIu32 ", gemms %" PRIu32
                "\n", s, seg->n_inputs, seg->n_outputs, seg->n_gemms);
        for (uint32_t i = 0; i < seg->n_inputs; i++)
            dump_xfer(&d, true, i, &seg->inputs[i]);
        for (uint32_t i = 0; i < seg->n_outputs; i++)
            dump_xfer(&d, false, i, &seg->outputs[i]);
        for (uint32_t i = 0; i < seg->n_gemms; i++)
            dump_gemm(&d, i, &seg->gemms[i], pkg->array_n);
    }
    dump_text(&d, "host program", pkg->host_hlo);
    dump_text(&d, "report", pkg->report);
    return d.bad || fflush(out) ? -1 : 0;
}

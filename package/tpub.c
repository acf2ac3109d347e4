/* tpub.c - the package format (tpub.h; every field and rule is in docs/package.md): the
 * convolution geometry, the writer and tpub_free. tpub_save serializes the package and validates
 * the image with the reader (tpub_read.c) before writing it, so it never writes a file tpub_load
 * refuses. The listing is tpub_dump.c. */
#include "package/tpub_internal.h"

#include "io/tpuio.h"

#include <stdlib.h>
#include <string.h>

const hlo_type tpub_type_codes[TPUB_N_TYPE_CODES] = {HLO_PRED, HLO_S8,  HLO_S16, HLO_S32, HLO_S64,
                                                     HLO_U8,   HLO_U16, HLO_U32, HLO_U64, HLO_F16,
                                                     HLO_BF16, HLO_F32, HLO_F64};

const char tpub_section_tags[TPUB_N_SECTIONS][5] = {"ARNA", "SIGS", "SEGS", "HOST", "REPT"};

const char *const tpub_flag_names[8] = {"BIAS",    "RELU", "OUT_INT8", "A_UNSIGNED",
                                        "B_TILED", "POOL", "BF16",     "OUT_BF16"};

static bool xfer_bf16(const tpub_xfer *x)
{
    return x->dev_type == HLO_BF16 || x->dev_type == HLO_F32;
}

/* A signature only version 3 allows: a 16-bit float. */
static bool sig_v3(const tpub_sig *s) { return s->type == HLO_BF16 || s->type == HLO_F16; }

uint32_t tpub_version(const tpub_package *pkg)
{
    for (uint32_t i = 0; i < pkg->n_inputs; i++)
        if (sig_v3(&pkg->inputs[i]))
            return TPUB_VERSION;
    for (uint32_t i = 0; i < pkg->n_outputs; i++)
        if (sig_v3(&pkg->outputs[i]))
            return TPUB_VERSION;
    for (uint32_t s = 0; s < pkg->n_segments; s++) {
        const tpub_segment *seg = &pkg->segments[s];
        for (uint32_t i = 0; i < seg->n_inputs; i++)
            if (xfer_bf16(&seg->inputs[i]) || seg->inputs[i].gather)
                return TPUB_VERSION;
        for (uint32_t i = 0; i < seg->n_outputs; i++)
            if (xfer_bf16(&seg->outputs[i]))
                return TPUB_VERSION;
        for (uint32_t i = 0; i < seg->n_ops; i++)
            if ((seg->ops[i].kind == TPUB_OP_GEMM ? seg->ops[i].gemm.flags
                                                  : seg->ops[i].conv.flags) &
                FW_FLAGS_V3)
                return TPUB_VERSION;
    }
    return TPUB_VERSION_INT8;
}

/* ------------------------------------------------------- convolution -- */

void tpub_conv_out_size(const tpub_conv *v, uint32_t *oh, uint32_t *ow)
{
    const int pool = (v->flags & TPUB_CONV_POOL) != 0;
    const uint64_t h = fw_conv_out_dim(v->h, v->pad_top, v->pad_bottom, v->kh, v->stride_h, pool,
                                       v->pool_h, v->pool_stride_h);
    const uint64_t w = fw_conv_out_dim(v->w, v->pad_left, v->pad_right, v->kw, v->stride_w, pool,
                                       v->pool_w, v->pool_stride_w);
    *oh = h && w ? (uint32_t)h : 0;
    *ow = h && w ? (uint32_t)w : 0;
}

int tpub_conv_packed(const tpub_conv *v, uint32_t n)
{
    return fw_conv_packed(v->flags, v->c, v->pad_left, v->pad_right, n);
}

bool tpub_sig_type(hlo_type t)
{
    return t == HLO_F32 || t == HLO_BF16 || t == HLO_F16 || t == HLO_S8 || t == HLO_U8 ||
           t == HLO_S32 || t == HLO_S64;
}

uint64_t tpub_conv_k_tiles(const tpub_conv *v, uint32_t n)
{
    return fw_conv_tiles(v->kh, v->kw, v->c, tpub_conv_packed(v, n), n);
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
    for (uint32_t i = 0; i < TPUB_N_TYPE_CODES; i++)
        if (tpub_type_codes[i] == t)
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

static void put_xfer(writer *w, const tpub_xfer *x, uint32_t version)
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
    put_le(w, x->rank, 4);
    for (uint32_t i = 0; i < x->rank && i < TPUB_MAX_RANK; i++)
        put_le(w, x->perm[i], 4);
    for (uint32_t i = 0; i < x->rank && i < TPUB_MAX_RANK; i++)
        put_le(w, (uint64_t)x->dims[i], 8);
    if (version < TPUB_VERSION)
        return;
    const uint64_t n = x->gather ? (uint64_t)x->rows * x->cols : 0;
    put_le(w, n, 4);
    if (!n)
        return;
    put_le(w, x->host_elements, 8);
    for (uint64_t i = 0; i < n; i++)
        put_le(w, x->gather[i], 4);
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

static void put_conv(writer *w, const tpub_conv *v)
{
    const uint32_t u[] = {v->flags,
                          v->batch,
                          v->h,
                          v->w,
                          v->c,
                          v->kh,
                          v->kw,
                          v->cout,
                          v->stride_h,
                          v->stride_w,
                          v->pad_top,
                          v->pad_bottom,
                          v->pad_left,
                          v->pad_right,
                          v->pool_h,
                          v->pool_w,
                          v->pool_stride_h,
                          v->pool_stride_w};
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
        put_le(w, u[i], 4);
    put_le(w, v->in_off, 8);
    put_le(w, v->k_off, 8);
    put_le(w, v->out_off, 8);
    put_le(w, v->p_off, 8);
    put_str(w, v->name);
    put_str(w, v->fused);
}

/* An operation: its kind, then its record. */
static void put_op(writer *w, const tpub_op *op)
{
    put_le(w, (uint32_t)op->kind, 4);
    if (op->kind == TPUB_OP_GEMM)
        put_gemm(w, &op->gemm);
    else if (op->kind == TPUB_OP_CONV2D)
        put_conv(w, &op->conv);
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
    const uint32_t version = tpub_version(pkg);
    put_le(w, version, 4);
    put_le(w, TPUB_N_SECTIONS, 4);
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
        put_le(w, seg->n_ops, 4);
        for (uint32_t i = 0; i < seg->n_inputs; i++)
            put_xfer(w, &seg->inputs[i], version);
        for (uint32_t i = 0; i < seg->n_outputs; i++)
            put_xfer(w, &seg->outputs[i], version);
        for (uint32_t i = 0; i < seg->n_ops; i++)
            put_op(w, &seg->ops[i]);
    }
    end_section(w, at);

    put_text(w, "HOST", pkg->host_hlo);
    put_text(w, "REPT", pkg->report);
}

int tpub_save(const tpub_package *pkg, const char *path, hlo_error *err)
{
    writer w = {0};
    encode(pkg, &w);
    tpub_package check;
    int rc = -1;
    char why[sizeof err->msg];
    if (w.fail)
        hlo_errorf(err, "%s", w.fail);
    else if (!tpub_parse(w.b, w.len, &check, err)) {
        tpub_free(&check);
        if ((rc = tpuio_write_file(path, w.b, w.len, why, sizeof why)))
            hlo_errorf(err, "%s", why);
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
        for (uint32_t i = 0; i < seg->n_inputs; i++) {
            free(seg->inputs[i].scale);
            free(seg->inputs[i].gather);
        }
        for (uint32_t i = 0; i < seg->n_outputs; i++) { /* a refused output may have read one */
            free(seg->outputs[i].scale);
            free(seg->outputs[i].gather);
        }
        for (uint32_t i = 0; i < seg->n_ops; i++) {
            const tpub_op *op = &seg->ops[i];
            free(op->kind == TPUB_OP_CONV2D ? op->conv.name : op->gemm.name);
            free(op->kind == TPUB_OP_CONV2D ? op->conv.fused : op->gemm.fused);
        }
        free(seg->inputs);
        free(seg->outputs);
        free(seg->ops);
    }
    free(pkg->segments);
    memset(pkg, 0, sizeof *pkg);
}

/* stream.c - the command-stream builder of tpu.h: the bytes of docs/command-stream.md.
 *
 * The stream is kept assembled (header, buffer table, commands) so that tpu_stream_data is a
 * plain accessor. Host-side checks are only those needed to encode a command at all; the
 * firmware validates everything else, so a stream that the firmware rejects can be built.
 * The costs, the lower bounds a command's cycles are measured against (tpu_gemm_cost,
 * tpu_conv2d_cost, tpu_reduce_cost), are here too. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "driver/tpu.h"
#include "firmware/firmware.h"

struct tpu_stream {
    uint8_t *data;
    size_t len, cap;
    uint32_t buffers, commands;
};

static void put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, v);
    put16(p + 2, v >> 16);
}

/* Rewrites the header for the current contents. */
static void header(tpu_stream *s)
{
    put32(s->data + FW_HDR_MAGIC, FW_STREAM_MAGIC);
    put32(s->data + FW_HDR_VERSION, FW_STREAM_VERSION);
    put32(s->data + FW_HDR_BYTES, (uint32_t)s->len);
    put32(s->data + FW_HDR_BUFFERS, s->buffers);
    put32(s->data + FW_HDR_COMMANDS, s->commands);
    put32(s->data + FW_HDR_RESERVED, 0);
}

/* Room for extra more bytes; the header's u32 `bytes` bounds the stream. */
static tpu_status grow(tpu_stream *s, size_t extra)
{
    if (s->len + extra > UINT32_MAX)
        return TPU_E_NOMEM;
    if (s->len + extra <= s->cap)
        return TPU_OK;
    size_t cap = 2 * s->cap;
    if (cap < s->len + extra)
        cap = s->len + extra;
    uint8_t *d = realloc(s->data, cap);
    if (!d)
        return TPU_E_NOMEM;
    s->data = d;
    s->cap = cap;
    return TPU_OK;
}

/* Room for one more command of `bytes` at the end of s, zeroed, with its op and size written
 * and counted; *c points at it, and the caller fills its fields and adds bytes to s->len. */
static tpu_status begin_command(tpu_stream *s, uint16_t op, uint16_t bytes, uint8_t **c)
{
    if (s->commands == UINT32_MAX)
        return TPU_E_NOMEM;
    const tpu_status st = grow(s, bytes);
    if (st != TPU_OK)
        return st;
    *c = s->data + s->len;
    memset(*c, 0, bytes);
    put16(*c + FW_CMD_OP, op);
    put16(*c + FW_CMD_BYTES, bytes);
    s->commands++;
    return TPU_OK;
}

tpu_stream *tpu_stream_new(void)
{
    tpu_stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    if (grow(s, 256) != TPU_OK) {
        free(s);
        return NULL;
    }
    s->len = FW_HEADER_BYTES;
    header(s);
    return s;
}

void tpu_stream_free(tpu_stream *s)
{
    if (!s)
        return;
    free(s->data);
    free(s);
}

tpu_status tpu_stream_buffer(tpu_stream *s, uint32_t addr, uint32_t bytes, uint32_t *idx)
{
    if (!s || bytes == 0 || (uint64_t)addr + bytes > (uint64_t)UINT32_MAX + 1)
        return TPU_E_ARG;
    if (s->buffers == UINT32_MAX)
        return TPU_E_NOMEM;
    tpu_status st = grow(s, FW_BUFFER_BYTES);
    if (st != TPU_OK)
        return st;
    /* The table ends where the commands begin: make room there. */
    uint8_t *at = s->data + FW_HEADER_BYTES + (size_t)s->buffers * FW_BUFFER_BYTES;
    memmove(at + FW_BUFFER_BYTES, at, (size_t)(s->data + s->len - at));
    put32(at + FW_BUF_ADDR, addr);
    put32(at + FW_BUF_SIZE, bytes);
    s->len += FW_BUFFER_BYTES;
    if (idx)
        *idx = s->buffers;
    s->buffers++;
    header(s);
    return TPU_OK;
}

tpu_status tpu_stream_gemm(tpu_stream *s, const tpu_gemm *g)
{
    if (!s || !g)
        return TPU_E_ARG;
    if (g->flags & ~(uint32_t)FW_GEMM_FLAGS_ALL)
        return TPU_E_ARG;
    uint8_t *c;
    const tpu_status st = begin_command(s, FW_CMD_GEMM, FW_GEMM_BYTES, &c);
    if (st != TPU_OK)
        return st;
    put32(c + FW_GEMM_FLAGS, g->flags);
    put32(c + FW_GEMM_M, g->m);
    put32(c + FW_GEMM_K, g->k);
    put32(c + FW_GEMM_N, g->n);
    put32(c + FW_GEMM_A_BUF, g->a.buf);
    put32(c + FW_GEMM_A_OFF, g->a.offset);
    put32(c + FW_GEMM_LDA, g->a.ld);
    put32(c + FW_GEMM_B_BUF, g->b.buf);
    put32(c + FW_GEMM_B_OFF, g->b.offset);
    put32(c + FW_GEMM_LDB, g->b.ld);
    put32(c + FW_GEMM_C_BUF, g->c.buf);
    put32(c + FW_GEMM_C_OFF, g->c.offset);
    put32(c + FW_GEMM_LDC, g->c.ld);
    put32(c + FW_GEMM_P_BUF, g->params.buf);
    put32(c + FW_GEMM_P_OFF, g->params.offset);
    s->len += FW_GEMM_BYTES;
    header(s);
    return TPU_OK;
}

tpu_status tpu_stream_reduce(tpu_stream *s, const tpu_reduce *r)
{
    if (!s || !r || (r->flags & ~(uint32_t)FW_REDUCE_FLAGS_ALL) || !r->sources ||
        r->sources > FW_REDUCE_MAX || !r->destinations || r->destinations > FW_REDUCE_MAX)
        return TPU_E_ARG;
    const uint32_t bytes = FW_REDUCE_BYTES(r->sources, r->destinations);
    uint8_t *c;
    const tpu_status st = begin_command(s, FW_CMD_REDUCE, (uint16_t)bytes, &c);
    if (st != TPU_OK)
        return st;
    put32(c + FW_REDUCE_FLAGS, r->flags);
    put32(c + FW_REDUCE_ELEMENTS, r->elements);
    put32(c + FW_REDUCE_SOURCES, r->sources);
    put32(c + FW_REDUCE_DESTINATIONS, r->destinations);
    for (uint32_t i = 0; i < r->sources + r->destinations; i++) {
        const tpu_operand *o = i < r->sources ? &r->src[i] : &r->dst[i - r->sources];
        put32(c + FW_REDUCE_OPERANDS + FW_REDUCE_OPERAND_BYTES * i, o->buf);
        put32(c + FW_REDUCE_OPERANDS + FW_REDUCE_OPERAND_BYTES * i + 4, o->offset);
    }
    s->len += bytes;
    header(s);
    return TPU_OK;
}

const void *tpu_stream_data(const tpu_stream *s, size_t *bytes)
{
    if (bytes)
        *bytes = s ? s->len : 0;
    return s ? s->data : NULL;
}

/* ---------------------------------------------------------------- cost -- */

static double ratio(double num, double den) { return den > 0 ? num / den : NAN; }

tpu_status tpu_stream_conv2d(tpu_stream *s, const tpu_conv2d *v)
{
    if (!s || !v || (v->flags & ~(uint32_t)FW_CONV_FLAGS_ALL) || v->stride_h > 0xffff ||
        v->stride_w > 0xffff || v->pad_top > 0xff || v->pad_bottom > 0xff || v->pad_left > 0xff ||
        v->pad_right > 0xff || v->pool_h > 0xff || v->pool_w > 0xff || v->pool_stride_h > 0xff ||
        v->pool_stride_w > 0xff)
        return TPU_E_ARG;
    uint8_t *c;
    const tpu_status st = begin_command(s, FW_CMD_CONV2D, FW_CONV_BYTES, &c);
    if (st != TPU_OK)
        return st;
    put32(c + FW_CONV_FLAGS, v->flags);
    put32(c + FW_CONV_BATCH, v->batch);
    put32(c + FW_CONV_H, v->h);
    put32(c + FW_CONV_W, v->w);
    put32(c + FW_CONV_C, v->c);
    put32(c + FW_CONV_KH, v->kh);
    put32(c + FW_CONV_KW, v->kw);
    put32(c + FW_CONV_COUT, v->cout);
    put32(c + FW_CONV_STRIDE, v->stride_h | v->stride_w << 16);
    put32(c + FW_CONV_PAD,
          v->pad_top | v->pad_bottom << 8 | v->pad_left << 16 | v->pad_right << 24);
    put32(c + FW_CONV_POOL,
          v->pool_h | v->pool_w << 8 | v->pool_stride_h << 16 | v->pool_stride_w << 24);
    const tpu_operand *ops[4] = {&v->in, &v->kernel, &v->out, &v->params};
    const uint32_t at[4] = {FW_CONV_IN_BUF, FW_CONV_K_BUF, FW_CONV_OUT_BUF, FW_CONV_P_BUF};
    for (int i = 0; i < 4; i++) {
        put32(c + at[i], ops[i]->buf);
        put32(c + at[i] + 4, ops[i]->offset);
    }
    s->len += FW_CONV_BYTES;
    header(s);
    return TPU_OK;
}

void tpu_conv_out_size(const tpu_conv2d *v, uint32_t *oh, uint32_t *ow)
{
    const int pool = (v->flags & TPU_CONV_POOL) != 0;
    const uint64_t h = fw_conv_out_dim(v->h, v->pad_top, v->pad_bottom, v->kh, v->stride_h, pool,
                                       v->pool_h, v->pool_stride_h);
    const uint64_t w = fw_conv_out_dim(v->w, v->pad_left, v->pad_right, v->kw, v->stride_w, pool,
                                       v->pool_w, v->pool_stride_w);
    *oh = h && w ? (uint32_t)h : 0;
    *ow = h && w ? (uint32_t)w : 0;
}

uint32_t tpu_conv_k_tiles(const tpu_conv2d *v, uint32_t n)
{
    const int packed = fw_conv_packed(v->flags, v->c, v->pad_left, v->pad_right, n);
    return fw_conv_tiles(v->kh, v->kw, v->c, packed, n);
}

tpu_status tpu_conv2d_cost(const tpu_info *info, const tpu_conv2d *v, tpu_cost *out)
{
    if (!info || !v || !out)
        return TPU_E_ARG;
    const uint32_t n = info->array_n;
    uint32_t oh, ow, ph, pw;
    tpu_conv2d unpooled = *v;
    unpooled.flags &= ~(uint32_t)TPU_CONV_POOL;
    tpu_conv_out_size(&unpooled, &oh, &ow);
    tpu_conv_out_size(v, &ph, &pw);
    const int params = (v->flags & (TPU_GEMM_BIAS | TPU_GEMM_OUT_INT8)) != 0;
    const uint64_t e = v->flags & TPU_GEMM_BF16 ? 2 : 1;
    const uint64_t out_e = v->flags & TPU_GEMM_OUT_INT8 ? 1 : v->flags & TPU_GEMM_OUT_BF16 ? 2 : 4;
    out->macs = (uint64_t)v->batch * oh * ow * v->cout * v->kh * v->kw * v->c;
    out->bytes =
        ((uint64_t)v->batch * v->h * v->w * v->c + (uint64_t)tpu_conv_k_tiles(v, n) * n * v->cout) *
            e +
        (uint64_t)v->batch * ph * pw * v->cout * out_e +
        (params ? (e == 2 ? 4ull : 12ull) * v->cout : 0);
    out->ideal_cycles = ratio((double)out->macs, (double)n * n);
    out->memory_cycles = ratio((double)out->bytes, info->mem_bytes_per_cycle);
    const double c = out->ideal_cycles, m = out->memory_cycles;
    out->bound_cycles = c >= m || isnan(m) ? c : m;
    return TPU_OK;
}

tpu_status tpu_reduce_cost(const tpu_info *info, const tpu_reduce *r, tpu_cost *out)
{
    if (!info || !r || !out)
        return TPU_E_ARG;
    out->macs = 0;
    out->bytes = 4ull * r->elements * (r->sources + r->destinations);
    out->ideal_cycles = 0;
    out->bound_cycles = out->memory_cycles = ratio((double)out->bytes, info->mem_bytes_per_cycle);
    return TPU_OK;
}

tpu_status tpu_gemm_cost(const tpu_info *info, const tpu_gemm *g, tpu_cost *out)
{
    if (!info || !g || !out)
        return TPU_E_ARG;
    const uint64_t n2 = (uint64_t)info->array_n * info->array_n;
    const int params = (g->flags & (TPU_GEMM_BIAS | TPU_GEMM_OUT_INT8)) != 0;
    const uint64_t e = g->flags & TPU_GEMM_BF16 ? 2 : 1;
    const uint64_t out_e = g->flags & TPU_GEMM_OUT_INT8 ? 1 : g->flags & TPU_GEMM_OUT_BF16 ? 2 : 4;
    out->macs = (uint64_t)g->m * g->k * g->n;
    /* The firmware reads bias, mult and shift together whenever it needs any of them (bf16: the
     * bias alone). */
    out->bytes = ((uint64_t)g->m * g->k + (uint64_t)g->k * g->n) * e +
                 (uint64_t)g->m * g->n * out_e + (params ? (e == 2 ? 4ull : 12ull) * g->n : 0);
    out->ideal_cycles = ratio((double)out->macs, (double)n2);
    out->memory_cycles = ratio((double)out->bytes, info->mem_bytes_per_cycle);
    /* fmax's choice: a NaN bound gives way to the other. */
    const double c = out->ideal_cycles, m = out->memory_cycles;
    out->bound_cycles = c >= m || isnan(m) ? c : m;
    return TPU_OK;
}

/* tpub_dump.c - the readable listing of a package (tpub_dump, docs/package.md "tpub_dump"). */
#include "package/tpub_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    FILE *f;
    bool bad;
} dumper;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
say(dumper *d, const char *fmt, ...)
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
        say(d, "%s\n",
            x->host_type == x->dev_type ? "copy"
            : input                     ? "rounded to nearest even"
                                        : "converted");
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
    if (x->gather) {
        uint64_t zeros = 0;
        for (uint64_t k = 0; k < (uint64_t)x->rows * x->cols; k++)
            zeros += x->gather[k] == TPUB_GATHER_ZERO;
        say(d, "    gathered from %" PRIu64 " host elements, %" PRIu64 " zeros\n", x->host_elements,
            zeros);
    }
    if (!x->rank)
        return;
    say(d, "    host [");
    for (uint32_t k = 0; k < x->rank; k++)
        say(d, "%s%" PRId64, k ? "," : "", x->dims[k]);
    say(d, "] as dims (");
    for (uint32_t k = 0; k < x->rank; k++)
        say(d, "%s%" PRIu32, k ? "," : "", x->perm[k]);
    say(d, ") on the device\n");
}

static void dump_flags(dumper *d, uint32_t flags)
{
    bool any = false;
    for (unsigned b = 0; b < 32; b++) {
        if (!(flags >> b & 1))
            continue;
        if (b < sizeof tpub_flag_names / sizeof tpub_flag_names[0])
            say(d, "%s%s", any ? "|" : "", tpub_flag_names[b]);
        else
            say(d, "%sbit%u", any ? "|" : "", b);
        any = true;
    }
    if (!any)
        say(d, "-");
}

/* With BF16, how the operation computes. */
static void dump_bf16(dumper *d, uint32_t flags)
{
    if (flags & TPUB_GEMM_BF16)
        say(d, "\n    bf16 x bf16, fp32 sums, out %s",
            flags & TPUB_GEMM_OUT_BF16 ? "bf16" : "fp32");
}

static void dump_gemm(dumper *d, uint32_t i, const tpub_gemm *g, uint32_t array_n)
{
    say(d, "  gemm %" PRIu32 ": %s", i, g->name);
    if (g->fused && g->fused[0])
        say(d, ", fused %s", g->fused);
    say(d, "\n    m %" PRIu32 " k %" PRIu32 " n %" PRIu32 ", flags ", g->m, g->k, g->n);
    dump_flags(d, g->flags);
    say(d, "\n    a 0x%" PRIx64 " lda %" PRIu32 ", b 0x%" PRIx64 ", c 0x%" PRIx64 " ldc %" PRIu32,
        g->a_off, g->lda, g->b_off, g->c_off, g->ldc);
    if (g->flags & (TPUB_GEMM_BIAS | TPUB_GEMM_OUT_INT8))
        say(d, ", params 0x%" PRIx64, g->p_off);
    dump_bf16(d, g->flags);
    uint32_t n = array_n ? array_n : 1;
    say(d, "\n    tiles %" PRIu64 " x %" PRIu64 ", MACs %" PRIu64 "\n", tpub_ceil_div(g->k, n),
        tpub_ceil_div(g->n, n), tpub_mul_sat(tpub_mul_sat(g->m, g->k), g->n));
}

static void dump_conv(dumper *d, uint32_t i, const tpub_conv *v, uint32_t array_n)
{
    say(d, "  conv2d %" PRIu32 ": %s", i, v->name);
    if (v->fused && v->fused[0])
        say(d, ", fused %s", v->fused);
    say(d,
        "\n    %" PRIu32 " x %" PRIu32 " x %" PRIu32 " x %" PRIu32 ", kernel %" PRIu32 " x %" PRIu32
        " -> %" PRIu32 ", stride %" PRIu32 " x %" PRIu32 ", pad %" PRIu32 ",%" PRIu32 ",%" PRIu32
        ",%" PRIu32,
        v->batch, v->h, v->w, v->c, v->kh, v->kw, v->cout, v->stride_h, v->stride_w, v->pad_top,
        v->pad_bottom, v->pad_left, v->pad_right);
    if (v->flags & TPUB_CONV_POOL)
        say(d, ", pool %" PRIu32 " x %" PRIu32 " stride %" PRIu32 " x %" PRIu32, v->pool_h,
            v->pool_w, v->pool_stride_h, v->pool_stride_w);
    say(d, ", flags ");
    dump_flags(d, v->flags);
    say(d, "\n    in 0x%" PRIx64 ", kernel 0x%" PRIx64 ", out 0x%" PRIx64, v->in_off, v->k_off,
        v->out_off);
    if (v->flags & (TPUB_GEMM_BIAS | TPUB_GEMM_OUT_INT8))
        say(d, ", params 0x%" PRIx64, v->p_off);
    dump_bf16(d, v->flags);
    const uint32_t n = array_n ? array_n : 1;
    tpub_conv unpooled = *v;
    unpooled.flags &= ~(uint32_t)TPUB_CONV_POOL;
    uint32_t oh, ow, ph, pw;
    tpub_conv_out_size(&unpooled, &oh, &ow);
    tpub_conv_out_size(v, &ph, &pw);
    const uint64_t macs =
        tpub_mul_sat(tpub_mul_sat(tpub_mul_sat(v->batch, (uint64_t)oh * ow), v->cout),
                     tpub_mul_sat((uint64_t)v->kh * v->kw, v->c));
    say(d,
        "\n    output %" PRIu32 " x %" PRIu32 " x %" PRIu32 " x %" PRIu32 ", kernel tiles %" PRIu64
        " x %" PRIu64 "%s, MACs %" PRIu64 "\n",
        v->batch, ph, pw, v->cout, tpub_conv_k_tiles(v, n), tpub_ceil_div(v->cout, n),
        tpub_conv_packed(v, n) ? " (packed runs)" : "", macs);
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
    say(&d, "tpub version %u, array %" PRIu32 "x%" PRIu32 "\n", tpub_version(pkg), pkg->array_n,
        pkg->array_n);
    say(&d,
        "arena 0x%" PRIx64 " bytes: constants [0x0, 0x%" PRIx64 "), activations [0x%" PRIx64
        ", 0x%" PRIx64 ")\n",
        pkg->arena_bytes, pkg->const_bytes, pkg->const_bytes, pkg->arena_bytes);
    say(&d, "inputs (%" PRIu32 "):\n", pkg->n_inputs);
    for (uint32_t i = 0; i < pkg->n_inputs; i++)
        dump_sig(&d, i, &pkg->inputs[i]);
    say(&d, "outputs (%" PRIu32 "):\n", pkg->n_outputs);
    for (uint32_t i = 0; i < pkg->n_outputs; i++)
        dump_sig(&d, i, &pkg->outputs[i]);
    for (uint32_t s = 0; s < pkg->n_segments; s++) {
        const tpub_segment *seg = &pkg->segments[s];
        say(&d, "segment %" PRIu32 ": inputs %" PRIu32 ", outputs %" PRIu32 ", ops %" PRIu32 "\n",
            s, seg->n_inputs, seg->n_outputs, seg->n_ops);
        for (uint32_t i = 0; i < seg->n_inputs; i++)
            dump_xfer(&d, true, i, &seg->inputs[i]);
        for (uint32_t i = 0; i < seg->n_outputs; i++)
            dump_xfer(&d, false, i, &seg->outputs[i]);
        for (uint32_t i = 0; i < seg->n_ops; i++) {
            const tpub_op *op = &seg->ops[i];
            if (op->kind == TPUB_OP_CONV2D)
                dump_conv(&d, i, &op->conv, pkg->array_n);
            else
                dump_gemm(&d, i, &op->gemm, pkg->array_n);
        }
    }
    dump_text(&d, "host program", pkg->host_hlo);
    dump_text(&d, "report", pkg->report);
    return d.bad || fflush(out) ? -1 : 0;
}

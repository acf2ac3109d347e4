/* tpuc.c - the compiler's stages in order, and its report. */
#include "compiler/tpuc_internal.h"
#include "io/safetensors.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

static void range_i32(const int32_t *v, uint32_t n, long long *lo, long long *hi)
{
    *lo = *hi = v[0];
    for (uint32_t j = 1; j < n; j++) {
        *lo = v[j] < *lo ? v[j] : *lo;
        *hi = v[j] > *hi ? v[j] : *hi;
    }
}

/* What becomes of operation i's result. */
static const char *result_fate(const tc_graph *g, int i)
{
    const tc_op *op = &g->ops[i];
    bool in_place = false;
    for (int c = i + 1; c < g->n_ops; c++)
        in_place |= g->ops[c].a_dev && g->ops[c].via == i;
    if (op->out_int8 && in_place)
        return op->to_host ? "s8, stays on the device and is dequantized on the host"
                           : "s8, stays on the device";
    if (op->out_int8)
        return "s8, dequantized on the host";
    if (op->out_bf16)
        return op->to_host ? "bf16, stays on the device and goes to the host"
                           : "bf16, stays on the device";
    return op->exact ? "s32" : op->bf16 ? "f32" : "s32, dequantized on the host";
}

/* A dilated input's MACs over those on its pixels: taps on the dilation's zeros (and on the
 * padding) cost MACs too. Separable: the MACs on pixels are the sum over output rows of the kernel
 * rows meeting a pixel, times the same over columns. */
static double dilation_cost(const tc_op *op)
{
    const tpub_conv *v = &op->own;
    tpub_conv unpooled = *v;
    unpooled.flags &= ~(uint32_t)TPUB_CONV_POOL;
    uint32_t oh, ow;
    tpub_conv_out_size(&unpooled, &oh, &ow);
    const uint32_t out[2] = {oh, ow}, k[2] = {v->kh, v->kw}, st[2] = {v->stride_h, v->stride_w};
    const uint32_t pad[2] = {v->pad_top, v->pad_left}, size[2] = {v->h, v->w};
    const uint32_t crop[2] = {op->crop_top, op->crop_left}, lhs[2] = {op->lhs_h, op->lhs_w};
    double on[2] = {0, 0};
    for (int a = 0; a < 2; a++)
        for (uint32_t o = 0; o < out[a]; o++)
            for (uint32_t t = 0; t < k[a]; t++) {
                const int64_t y = (int64_t)o * st[a] + t - pad[a];
                on[a] += y >= 0 && y < size[a] && (y + crop[a]) % lhs[a] == 0;
            }
    return on[0] * on[1] > 0 ? (double)oh * ow * v->kh * v->kw / (on[0] * on[1]) : 0;
}

/* Where an operation's input comes from and how its layouts are folded, when that is news. */
/* "(d0,d1,...)" and then tail. */
static void print_dims(hlo_text *t, const uint32_t *dims, uint32_t rank, const char *tail)
{
    for (uint32_t k = 0; k < rank; k++)
        hlo_text_printf(t, "%s%u", k ? "," : "(", dims[k]);
    hlo_text_printf(t, ")%s", tail);
}

/* A convolution read from the host: packed or not, and the MXU slots both ways (the cost the
 * choice compares); packed, what its input's transfer then writes. */
static void report_packing(tc_graph *g, const tc_op *op)
{
    hlo_text *t = &g->report;
    const tpub_conv *v = &op->cv, *o = &op->own;
    const unsigned long long unpacked = op->slots[0], packed = op->slots[1];
    if (!unpacked)
        return;
    if (!op->packed) {
        hlo_text_printf(t, "      unpacked: %llu MXU slots, packed %llu%s\n", unpacked, packed,
                        packed >= unpacked   ? ""
                        : g->no_conv_packing ? " (packing off)"
                                             : " (its gather or rows would not fit)");
        return;
    }
    const unsigned long long e = op->bf16 ? 2 : 1;
    hlo_text_printf(
        t,
        "      packed: %llu MXU slots, unpacked %llu; input '%s' gathered as its %ux%ux%u "
        "receptive fields, %u x %ux%ux%u (%llu bytes, unpacked %llu), convolved 1x1\n",
        packed, unpacked, g->nodes[op->x].name, o->kh, o->kw, o->c, v->batch, v->h, v->w, v->c,
        e * v->batch * v->h * v->w * v->c, e * o->batch * o->h * o->w * o->c);
}

static void report_layout(tc_graph *g, const tc_op *op)
{
    hlo_text *t = &g->report;
    if (op->a_dev) {
        hlo_text_printf(t, "      reads %s's %s result in place",
                        g->nodes[g->ops[op->via].dot].name, op->bf16 ? "bf16" : "int8");
        const char *sep = " through ";
        for (int v = op->x; v != g->ops[op->via].out; v = g->nodes[v].in[0], sep = ", ")
            hlo_text_printf(t, "%s%s", sep, g->nodes[v].name);
        hlo_text_printf(t, "%s\n", op->krow ? "; weight rows permuted to its device order" : "");
    }
    if (op->kind != TC_CONV) {
        const tc_seg_input ins[2] = {{op->x, (int)(op - g->ops), false},
                                     {op->w, (int)(op - g->ops), true}};
        for (int b = 0; b < (op->w >= 0 ? 2 : 1); b++) {
            const bool gathered = b && tc_gemm_b_tiled(g, op);
            const int64_t *dims = g->nodes[ins[b].node].shape.dims;
            uint32_t p[TPUB_MAX_RANK], r = op->a_dev && !b ? 0
                                           : gathered && op->b_rank
                                               ? tc_perm(op->b_order, op->b_rank, dims, p)
                                               : tc_input_perm(g, &ins[b], p);
            if (!r && !b)
                continue;
            hlo_text_printf(t, "      %s '%s' %s", b ? "B computed at run time," : "A",
                            g->nodes[ins[b].node].name,
                            gathered ? "gathered in tile order" : "written");
            if (r) {
                hlo_text_printf(t, " with its dims in the order ");
                print_dims(t, p, r, "\n");
            } else
                hlo_text_printf(t, "%s\n", gathered ? "" : " row-major");
        }
        return;
    }
    report_packing(g, op);
    uint32_t perm[4], r;
    if (op->in_gather)
        hlo_text_printf(t,
                        "      input '%s' gathered NHWC, dilated %ux%u with zeros, cropped %u,%u "
                        "at the top and left: %.2f times the MACs on its pixels\n",
                        g->nodes[op->x].name, op->lhs_h, op->lhs_w, op->crop_top, op->crop_left,
                        dilation_cost(op));
    else if (!op->a_dev && !op->packed &&
             (r = tc_perm(op->in_nhwc, op->conv_rank, g->nodes[op->x].shape.dims, perm))) {
        hlo_text_printf(t, "      input '%s' written NHWC: its dims ", g->nodes[op->x].name);
        print_dims(t, perm, r, " on the device\n");
    }
    if (op->w >= 0) {
        bool rev = false;
        for (int d = 0; d < op->conv_rank; d++)
            rev |= op->krev[d];
        hlo_text_printf(t, "      kernel '%s' computed at run time, gathered in tile order%s\n",
                        g->nodes[op->w].name, rev ? ", reversed" : "");
    }
    if (op->to_host &&
        (r = tc_perm(op->out_nhwc, op->conv_rank, g->nodes[op->out].shape.dims, perm))) {
        hlo_text_printf(t, "      result NHWC on the device, returned as its dims ");
        print_dims(t, perm, r, "\n");
    }
}

static void report_op(tc_graph *g, const tc_op *op, int i)
{
    hlo_text *t = &g->report;
    const tpub_conv *v = &op->own;
    hlo_text_printf(t, "    %s %d  %s  ", op->kind == TC_CONV ? "conv" : "gemm", i,
                    g->nodes[op->dot].name);
    if (op->kind == TC_CONV) {
        tpub_conv unpooled = *v;
        unpooled.flags &= ~(uint32_t)TPUB_CONV_POOL;
        uint32_t oh, ow;
        tpub_conv_out_size(&unpooled, &oh, &ow);
        hlo_text_printf(t,
                        "%u x %ux%ux%u -> %ux%ux%u, kernel %ux%u, stride %ux%u, pad "
                        "%u,%u,%u,%u",
                        v->batch, v->h, v->w, v->c, oh, ow, v->cout, v->kh, v->kw, v->stride_h,
                        v->stride_w, v->pad_top, v->pad_bottom, v->pad_left, v->pad_right);
        if (op->batch_groups > 1)
            hlo_text_printf(t, ", %u batch groups as channel groups", op->batch_groups);
        if (op->groups > 1)
            hlo_text_printf(t, ", %u groups as one block-diagonal kernel", op->groups);
        if (op->dil_h > 1 || op->dil_w > 1)
            hlo_text_printf(t, ", dilation %ux%u as zeros in the kernel", op->dil_h, op->dil_w);
    } else {
        if (op->batch > 1)
            hlo_text_printf(t, "%u x ", op->batch);
        hlo_text_printf(t, "%u x %u x %u", op->m, op->k, op->n);
    }
    for (int n = op->dot + 1; n <= op->out; n++) {
        if (tc_in_affine(op, n))
            hlo_text_printf(t, " + %s (%s)", g->nodes[n].name,
                            g->nodes[n].src->opcode == HLO_OP_MULTIPLY ? "scale" : "bias");
        if (n == op->relu)
            hlo_text_printf(t, " + %s (relu)", g->nodes[n].name);
        if (n == op->pool)
            hlo_text_printf(t, " + %s (max pool %ux%u stride %ux%u)", g->nodes[n].name, v->pool_h,
                            v->pool_w, v->pool_stride_h, v->pool_stride_w);
    }
    hlo_text_printf(t, " -> %s\n", result_fate(g, i));
    for (int j = 0; op->w < 0 && j < i; j++)
        if (g->ops[j].w < 0 && g->ops[j].b_off == op->b_off) {
            hlo_text_printf(t, "      weights: %s %d's image, the same bytes\n",
                            g->ops[j].kind == TC_CONV ? "conv" : "gemm", j);
            break;
        }
    report_layout(g, op);
}

static void report_quant(tc_graph *g, const tc_op *op)
{
    hlo_text *t = &g->report;
    const char *name = g->nodes[op->dot].name;
    const bool conv = op->kind == TC_CONV;
    const tc_node *x = &g->nodes[op->x];
    long long lo, hi;
    if (op->exact) {
        hlo_text_printf(t, "  %s: integer %s, exact on the device (%s %s, %s s8, s32 out)\n", name,
                        conv ? "convolution" : "dot", conv ? "input" : "A",
                        op->a_unsigned ? "u8" : "s8", conv ? "kernel" : "B");
        return;
    }
    if (op->bf16) {
        hlo_text_printf(t, "  %s: bf16 on the device: %s%s bf16, %s bf16 (rounded to nearest even)",
                        name, conv ? "input" : "A", op->a_dev ? ", read in place," : "",
                        conv         ? "kernel"
                        : op->w >= 0 ? "B"
                                     : "weights");
        hlo_text_printf(t, ", fp32 sums%s, %s out\n", op->bias >= 0 ? " and bias" : "",
                        op->out_bf16 ? "bf16" : "f32");
        return;
    }
    if (op->a_dev)
        hlo_text_printf(t, "  %s: %s = s8 result of %s, scale %.6g\n", name, conv ? "input" : "A",
                        g->nodes[g->ops[op->via].dot].name, (double)op->a_scale);
    else
        hlo_text_printf(t,
                        "  %s: %s = '%s' %s -> %s, scale %.6g (calibrated range [%.6g, "
                        "%.6g])\n",
                        name, conv ? "input" : "A", x->name, hlo_type_name(x->shape.type),
                        op->a_unsigned ? "u8" : "s8", (double)op->a_scale, g->cal_min[op->x],
                        g->cal_max[op->x]);
    if (op->w >= 0)
        hlo_text_printf(t,
                        "  %s: %s = '%s' %s -> s8 per tensor, scale %.6g (calibrated range "
                        "[%.6g, %.6g])\n",
                        name, conv ? "kernel" : "B", g->nodes[op->w].name,
                        hlo_type_name(g->nodes[op->w].shape.type), (double)op->b_scale,
                        g->cal_min[op->w], g->cal_max[op->w]);
    else
        hlo_text_printf(t, "  %s: %s s8 per %s, scale %.6g .. %.6g\n", name,
                        conv ? "kernel" : "weights", conv ? "output channel" : "column",
                        op->w_absmax_min / 127.0, op->w_absmax_max / 127.0);
    if (op->bias_q) {
        range_i32(op->bias_q, op->n, &lo, &hi);
        hlo_text_printf(t, "  %s: bias int32 in [%lld, %lld]\n", name, lo, hi);
    }
    if (op->out_int8) {
        long long slo, shi;
        range_i32(op->mult, op->n, &lo, &hi);
        range_i32(op->shift, op->n, &slo, &shi);
        hlo_text_printf(t,
                        "  %s: output s8, scale %.6g (calibrated range [%.6g, %.6g]); "
                        "requantization mult %lld .. %lld, shift %lld .. %lld\n",
                        name, (double)op->out_scale, g->cal_min[op->out], g->cal_max[op->out], lo,
                        hi, slo, shi);
    } else {
        float smin = FLT_MAX, smax = 0;
        for (uint32_t j = 0; j < op->n; j++) {
            smin = op->acc_scale[j] < smin ? op->acc_scale[j] : smin;
            smax = op->acc_scale[j] > smax ? op->acc_scale[j] : smax;
        }
        hlo_text_printf(t, "  %s: output s32, dequantized per %s, scale %.6g .. %.6g\n", name,
                        conv ? "channel" : "column", (double)smin, (double)smax);
    }
}

/* Where every instruction of the graph went: the report says it, nothing is silently gone. */
static void report(tc_graph *g, const tpub_package *p)
{
    hlo_text *t = &g->report;
    if (g->warnings.s)
        hlo_text_printf(t, "%s", g->warnings.s);
    int folded = 0, host = 0, dead = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const tc_node *nd = &g->nodes[i];
        if (nd->role == TC_INPUT)
            continue;
        if (!nd->needed)
            dead++;
        else if (nd->role == TC_CONST)
            folded++;
        else if (nd->role == TC_HOST)
            host++;
    }
    hlo_text_printf(t,
                    "package for the %u x %u array: %d inputs, %d outputs, device arena %llu "
                    "bytes (%llu of weights and parameters)\n",
                    g->array_n, g->array_n, g->n_inputs, g->n_outputs,
                    (unsigned long long)p->arena_bytes, (unsigned long long)p->const_bytes);
    int convs = 0;
    for (int i = 0; i < g->n_ops; i++)
        convs += g->ops[i].kind == TC_CONV;
    hlo_text_printf(t,
                    "graph: %d instructions once calls are inlined: %d on the device "
                    "(GEMMs: %d, ",
                    g->n_nodes - g->n_inputs, g->n_nodes - g->n_inputs - folded - host - dead,
                    g->n_ops - convs);
    if (convs)
        hlo_text_printf(t, "convolutions: %d, ", convs);
    hlo_text_printf(t,
                    "segments: %d), %d on the host, %d constants or folded at compile time, "
                    "%d unused\n",
                    g->n_segs, host, folded, dead);
    for (int s = 0; s < g->n_segs; s++) {
        hlo_text_printf(t, "  device segment %d (custom-call tpu.segment.%d)\n", s, s);
        for (int i = 0; i < g->n_ops; i++)
            if (g->ops[i].seg == s)
                report_op(g, &g->ops[i], i);
    }
    hlo_text_printf(t, "  on the host:");
    for (int i = 0, k = 0; i < g->n_nodes; i++) {
        const tc_node *nd = &g->nodes[i];
        if (nd->role == TC_HOST && nd->n_users)
            hlo_text_printf(t, "%s %s (%s)", k++ ? "," : "", nd->name, nd->src->opcode_name);
    }
    hlo_text_printf(t, host ? "\n" : " nothing\n");
    if (dead) {
        hlo_text_printf(t, "  unused (no output depends on them):");
        for (int i = 0, k = 0; i < g->n_nodes; i++) {
            const tc_node *nd = &g->nodes[i];
            if (nd->role != TC_INPUT && !nd->needed)
                hlo_text_printf(t, "%s %s (%s)", k++ ? "," : "", nd->name, nd->src->opcode_name);
        }
        hlo_text_printf(t, "\n");
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const tc_node *nd = &g->nodes[i];
        if (nd->role == TC_HOST && nd->n_users && nd->host_reason)
            hlo_text_printf(t, "  %s stays on the host: %s\n", nd->name, nd->host_reason);
    }
    if (g->cal_samples && g->cal_repeat)
        hlo_text_printf(t,
                        "quantization (calibrated on %d samples, repeated %d times to fill a "
                        "batch):\n",
                        g->cal_samples, g->cal_repeat);
    else if (g->cal_samples)
        hlo_text_printf(t, "quantization (calibrated on %d samples):\n", g->cal_samples);
    if (g->bf16 && g->n_calib_ignored)
        hlo_text_printf(t,
                        "precision bf16: the float operations need no calibration; the %d "
                        "calibration arrays are ignored\n",
                        g->n_calib_ignored);
    for (int i = 0; i < g->n_ops; i++)
        report_quant(g, &g->ops[i]);
}

int tpuc_compile(const tpuc_options *o, tpub_package *out, hlo_error *err)
{
    memset(out, 0, sizeof *out);
    hlo_module *m = o->hlo_text ? hlo_parse(o->hlo_text, o->hlo_len, o->hlo_path, err)
                                : hlo_parse_file(o->hlo_path, err);
    if (!m || hlo_check(m, o->hlo_path, err)) {
        hlo_module_free(m);
        return -1;
    }
    tc_graph g = {.m = m,
                  .file = o->hlo_path,
                  .array_n = o->array_n ? o->array_n : 16,
                  .allow_nonfinite = o->allow_nonfinite,
                  .bf16 = o->precision == TPUC_BF16,
                  .no_conv_packing = o->no_conv_packing,
                  .unroll_bytes = o->unroll_bytes ? o->unroll_bytes : TC_UNROLL_BYTES,
                  .n_calib_ignored = o->precision == TPUC_BF16 ? o->n_calib : 0,
                  .err = err};
    const hlo_computation *entry = hlo_entry(m);
    int n_params = 0;
    for (int i = 0; i < entry->n_instrs; i++)
        n_params += entry->instrs[i].opcode == HLO_OP_PARAMETER;
    hlo_array **params = calloc((size_t)n_params + 1, sizeof *params);
    int rc = params ? 0 : tc_fail(&g, NULL, "out of memory");
    if (!rc && o->weights_path && o->weights)
        rc = tc_fail(&g, NULL, "weights given both as a file and as arrays");
    if (!rc && o->weights)
        rc = tpuc_bind_arrays(m, o->hlo_path, o->weights, o->n_weights, params, n_params, err);
    if (!rc && o->weights_path) {
        st_file st;
        char msg[400];
        if (st_load(o->weights_path, &st, msg, sizeof msg)) {
            rc = tc_fail(&g, NULL, "%s: %s", o->weights_path, msg);
        } else {
            rc = tpuc_bind_safetensors(m, o->hlo_path, &st, params, n_params, err);
            st_free(&st);
        }
    }
    if (!rc)
        rc = tc_build(&g, params, n_params); /* takes the arrays */
    for (int k = 0; rc && params && k < n_params; k++)
        if (params[k])
            hlo_array_free(params[k]);
    free(params);
    if (!rc)
        rc = tc_fold(&g) || tc_place(&g) || tc_calibrate(&g, o->calib, g.bf16 ? 0 : o->n_calib) ||
             tc_quantize(&g) || tc_emit(&g, out);
    if (!rc) {
        report(&g, out);
        if (g.report.oom || g.warnings.oom)
            rc = tc_fail(&g, NULL, "out of memory");
        out->report = g.report.s;
        g.report = (hlo_text){0};
    }
    if (rc)
        tpub_free(out);
    tc_graph_free(&g);
    hlo_module_free(m);
    return rc ? -1 : 0;
}

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

static void report_gemm(tc_graph *g, const tc_gemm *gm, int i)
{
    hlo_text *t = &g->report;
    hlo_text_printf(t, "    gemm %d  %s  ", i, g->nodes[gm->dot].name);
    if (gm->batch > 1)
        hlo_text_printf(t, "%u x ", gm->batch);
    hlo_text_printf(t, "%u x %u x %u", gm->m, gm->k, gm->n);
    if (gm->bias >= 0)
        hlo_text_printf(t, " + %s (bias)", g->nodes[gm->bias].name);
    if (gm->relu >= 0)
        hlo_text_printf(t, " + %s (relu)", g->nodes[gm->relu].name);
    hlo_text_printf(t, " -> %s\n", gm->out_int8 ? "s8, stays on the device"
                                   : gm->exact ? "s32" : "s32, dequantized on the host");
}

static void report_quant(tc_graph *g, const tc_gemm *gm)
{
    hlo_text *t = &g->report;
    const char *name = g->nodes[gm->dot].name;
    const tc_node *x = &g->nodes[gm->x];
    long long lo, hi;
    if (gm->exact) {
        hlo_text_printf(t, "  %s: integer dot, exact on the device (A %s, B s8, s32 out)\n",
                        name, gm->a_unsigned ? "u8" : "s8");
        return;
    }
    if (x->role == TC_DEVICE && g->gemms[x->gemm].out_int8)
        hlo_text_printf(t, "  %s: A = s8 result of %s, scale %.6g\n", name,
                        g->nodes[g->gemms[x->gemm].dot].name, (double)gm->a_scale);
    else
        hlo_text_printf(t, "  %s: A = '%s' f32 -> %s, scale %.6g (calibrated range [%.6g, "
                        "%.6g])\n", name, x->name, gm->a_unsigned ? "u8" : "s8",
                        (double)gm->a_scale, g->cal_min[gm->x], g->cal_max[gm->x]);
    hlo_text_printf(t, "  %s: weights s8 per column, scale %.6g .. %.6g\n", name,
                    gm->w_absmax_min / 127.0, gm->w_absmax_max / 127.0);
    if (gm->bias_q) {
        range_i32(gm->bias_q, gm->n, &lo, &hi);
        hlo_text_printf(t, "  %s: bias int32 in [%lld, %lld]\n", name, lo, hi);
    }
    if (gm->out_int8) {
        long long slo, shi;
        range_i32(gm->mult, gm->n, &lo, &hi);
        range_i32(gm->shift, gm->n, &slo, &shi);
        hlo_text_printf(t, "  %s: output s8, scale %.6g (calibrated range [%.6g, %.6g]); "
                        "requantization mult %lld .. %lld, shift %lld .. %lld\n", name,
                        (double)gm->out_scale, g->cal_min[gm->out], g->cal_max[gm->out], lo, hi,
                        slo, shi);
    } else {
        float smin = FLT_MAX, smax = 0;
        for (uint32_t j = 0; j < gm->n; j++) {
            smin = gm->acc_scale[j] < smin ? gm->acc_scale[j] : smin;
            smax = gm->acc_scale[j] > smax ? gm->acc_scale[j] : smax;
        }
        hlo_text_printf(t, "  %s: output s32, dequantized per column, scale %.6g .. %.6g\n",
                        name, (double)smin, (double)smax);
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
    hlo_text_printf(t, "package for the %u x %u array: %d inputs, %d outputs, device arena %llu "
                    "bytes (%llu of weights and parameters)\n", g->array_n, g->array_n,
                    g->n_inputs, g->n_outputs, (unsigned long long)p->arena_bytes,
                    (unsigned long long)p->const_bytes);
    hlo_text_printf(t, "graph: %d instructions once calls are inlined: %d on the device "
                    "(GEMMs: %d, segments: %d), %d on the host, %d constants or folded at "
                    "compile time, %d unused\n", g->n_nodes - g->n_inputs,
                    g->n_nodes - g->n_inputs - folded - host - dead, g->n_gemms, g->n_segs,
                    host, folded, dead);
    for (int s = 0; s < g->n_segs; s++) {
        hlo_text_printf(t, "  device segment %d (custom-call tpu.segment.%d)\n", s, s);
        for (int i = 0; i < g->n_gemms; i++)
            if (g->gemms[i].seg == s)
                report_gemm(g, &g->gemms[i], i);
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
                hlo_text_printf(t, "%s %s (%s)", k++ ? "," : "", nd->name,
                                nd->src->opcode_name);
        }
        hlo_text_printf(t, "\n");
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const tc_node *nd = &g->nodes[i];
        if (nd->role == TC_HOST && nd->n_users && nd->host_reason)
            hlo_text_printf(t, "  %s stays on the host: %s\n", nd->name, nd->host_reason);
    }
    if (g->cal_samples)
        hlo_text_printf(t, "quantization (calibrated on %d samples):\n", g->cal_samples);
    for (int i = 0; i < g->n_gemms; i++)
        report_quant(g, &g->gemms[i]);
}

int tpuc_compile(const tpuc_options *o, tpub_package *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    hlo_error e;
    hlo_module *m = hlo_parse_file(o->hlo_path, &e);
    if (!m || hlo_check(m, o->hlo_path, &e)) {
        snprintf(err, errlen, "%s", e.msg);
        hlo_module_free(m);
        return -1;
    }
    tc_graph g = {.m = m, .file = o->hlo_path, .array_n = o->array_n ? o->array_n : 16,
                  .allow_nonfinite = o->allow_nonfinite, .err = err, .errlen = errlen};
    const hlo_computation *entry = hlo_entry(m);
    int n_params = 0;
    for (int i = 0; i < entry->n_instrs; i++)
        n_params += entry->instrs[i].opcode == HLO_OP_PARAMETER;
    hlo_array **params = calloc((size_t)n_params + 1, sizeof *params);
    int rc = params ? 0 : tc_fail(&g, NULL, "out of memory");
    if (!rc && o->weights_path) {
        st_file st;
        char msg[400];
        if (st_load(o->weights_path, &st, msg, sizeof msg)) {
            rc = tc_fail(&g, NULL, "%s: %s", o->weights_path, msg);
        } else {
            if (hlo_bind_safetensors(m, o->hlo_path, &st, params, n_params, &e))
                rc = -1, snprintf(err, errlen, "%s", e.msg);
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
        rc = tc_fold(&g) || tc_place(&g) || tc_calibrate(&g, o->calib, o->n_calib) ||
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

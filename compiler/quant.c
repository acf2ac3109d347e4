/* quant.c - calibration and int8 quantization of the float GEMMs and convolutions, or their
 * weights rounded to bf16 (TPUC_BF16: no calibration, the bias stays fp32).
 *
 * Weights: symmetric per output column (a dot's, across the batch of a batched dot; a
 * convolution's output channel), scale = max|w| / 127, q = round(w / scale) in [-127, 127]; a
 * B computed at run time: per tensor, s8 with max|b| / 127 from the range calibration saw.
 * Activations: per tensor from the range calibration saw: u8 with scale max / 255 when the value
 * never went negative (inputs in [0, 1], ReLU outputs), else s8 with max|x| / 127. Bias: int32
 * in accumulator units (a_scale * w_scale). A result read in place by operations of its segment,
 * or pooled, is requantized to int8 on the device with a fixed-point multiplier mult / 2^shift =
 * acc_scale / out_scale (docs/isa.md, ACTIVATE); out_scale comes from the range of the fused
 * chain's last value (the pooled one, when pooled). */
#include "compiler/tpuc_internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool any_int8_float_op(const tc_graph *g)
{
    for (int i = 0; i < g->n_ops; i++)
        if (!g->ops[i].exact && !g->ops[i].bf16)
            return true;
    return false;
}

/* A non-finite value in a tensor the int8 arithmetic depends on: an error, or with
 * allow_nonfinite a warning. at locates it; what names the tensor. */
static int nonfinite(tc_graph *g, const hlo_instr *at, const char *what, uint64_t index, double v)
{
    if (!g->allow_nonfinite)
        return tc_fail(g, at, "%s: element %llu is %g (--allow-nonfinite to go on with a warning)",
                       what, (unsigned long long)index, v);
    hlo_text_printf(&g->warnings, "warning: %s: element %llu is %g; ", what,
                    (unsigned long long)index, v);
    return 0;
}

/* Non-finite calibration samples: an error naming the array and element (or skipped). */
static int check_samples(tc_graph *g, hlo_array *const *calib, int n_calib)
{
    for (int k = 0; k < n_calib; k++) {
        if (!hlo_is_float(calib[k]->shape.type))
            continue;
        for (int64_t e = 0; e < calib[k]->shape.elements; e++)
            if (!isfinite(hlo_array_get(calib[k], e))) {
                char what[160];
                snprintf(what, sizeof what, "calibration array %d (input '%s')", k,
                         g->nodes[g->inputs[k]].name);
                if (nonfinite(g, NULL, what, (uint64_t)e, hlo_array_get(calib[k], e)))
                    return -1;
                hlo_text_printf(&g->warnings, "non-finite samples are left out\n");
                break;
            }
    }
    return 0;
}

static void observe(tc_graph *g, int node, const hlo_array *a)
{
    for (int64_t e = 0; e < a->shape.elements; e++) {
        double v = hlo_array_get(a, e);
        if (!isfinite(v))
            continue;
        if (v < g->cal_min[node])
            g->cal_min[node] = v;
        if (v > g->cal_max[node])
            g->cal_max[node] = v;
    }
}

int tc_calibrate(tc_graph *g, hlo_array *const *calib, int n_calib)
{
    if (!any_int8_float_op(g))
        return 0;
    if (n_calib != g->n_inputs)
        return tc_fail(g, NULL,
                       "the float GEMMs and convolutions need calibration samples: one array per "
                       "model input "
                       "(%d) with --calibrate, %d given",
                       g->n_inputs, n_calib);
    if (check_samples(g, calib, n_calib))
        return -1;
    int64_t batches = -1;
    for (int k = 0; k < n_calib; k++) {
        const tc_node *in = &g->nodes[g->inputs[k]];
        const hlo_shape *s = &in->shape, *c = &calib[k]->shape;
        bool ok = c->type == s->type && c->rank == s->rank && s->rank >= 1 && s->dims[0] > 0;
        for (int d = 1; ok && d < s->rank; d++)
            ok = c->dims[d] == s->dims[d];
        char a[160], b[160];
        if (!ok)
            return tc_fail(g, NULL,
                           "calibration array %d is %s; input '%s' is %s (any count "
                           "of rows)",
                           k, hlo_shape_str(c, a, sizeof a), in->name,
                           hlo_shape_str(s, b, sizeof b));
        /* Fewer rows than a batch: the rows repeated, when they fill it exactly, make one (the
         * same minima, maxima and batch statistics as the rows themselves). */
        int64_t nb = c->dims[0] / s->dims[0];
        if (nb == 0 && (c->dims[0] == 0 || s->dims[0] % c->dims[0]))
            return tc_fail(g, NULL,
                           "calibration array %d has %lld rows, fewer than one batch "
                           "of %lld and not a divisor of it",
                           k, (long long)c->dims[0], (long long)s->dims[0]);
        if (nb == 0) {
            nb = 1;
            g->cal_repeat = (int)(s->dims[0] / c->dims[0]);
        }
        if (batches < 0 || nb < batches)
            batches = nb;
    }
    size_t n = (size_t)g->n_nodes + 1;
    hlo_array **vals = calloc(n, sizeof *vals), **ins = calloc((size_t)n_calib + 1, sizeof *ins);
    if (!vals || !ins || !(g->cal_min = malloc(n * sizeof(double))) ||
        !(g->cal_max = malloc(n * sizeof(double)))) {
        free(vals);
        free(ins);
        return tc_fail(g, NULL, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        g->cal_min[i] = DBL_MAX;
        g->cal_max[i] = -DBL_MAX;
    }
    int rc = 0;
    for (int64_t b = 0; b < batches && !rc; b++) {
        for (int k = 0; k < n_calib && !rc; k++) {
            const hlo_shape *s = &g->nodes[g->inputs[k]].shape;
            if (!(ins[k] = hlo_array_new(s->type, s->rank, s->dims))) {
                rc = tc_oom(g, g->inputs[k], "a calibration batch",
                            (uint64_t)s->elements * hlo_type_size(s->type));
                break;
            }
            const size_t bytes = (size_t)s->elements * hlo_type_size(s->type);
            const size_t have = (size_t)calib[k]->shape.elements * hlo_type_size(s->type);
            for (size_t at = 0; at < bytes; at += have < bytes ? have : bytes)
                memcpy((char *)ins[k]->data + at, (const char *)calib[k]->data + (size_t)b * bytes,
                       have < bytes ? have : bytes);
        }
        if (!rc && !(rc = tc_eval(g, ins, vals)))
            for (int i = 0; i < g->n_ops; i++) {
                const tc_op *op = &g->ops[i];
                if (!op->exact && !op->bf16) {
                    observe(g, op->x, vals[op->x]);
                    observe(g, op->out, vals[op->out]);
                    if (op->w >= 0)
                        observe(g, op->w, vals[op->w]);
                }
            }
        tc_values_free(g, vals);
        for (int k = 0; k < n_calib; k++) {
            hlo_array_free(ins[k]);
            ins[k] = NULL;
        }
    }
    g->cal_samples =
        (int)(batches * g->nodes[g->inputs[0]].shape.dims[0]) / (g->cal_repeat ? g->cal_repeat : 1);
    free(vals);
    free(ins);
    return rc;
}

static double absmax(const tc_graph *g, int node)
{
    double a = fabs(g->cal_min[node]), b = fabs(g->cal_max[node]);
    return g->cal_min[node] > g->cal_max[node] ? 0 : a > b ? a : b;
}

/* mult / 2^shift ~ ratio, mult in [2^30, 2^31), shift in 0..63. */
static int fixed_point(double ratio, int32_t *mult, int32_t *shift)
{
    if (!(ratio > 0) || ratio >= 2147483648.0)
        return -1;
    int e;
    double f = frexp(ratio, &e); /* ratio = f * 2^e, f in [0.5, 1) */
    int64_t mm = llround(f * 2147483648.0);
    int s = 31 - e;
    if (mm == 2147483648LL) {
        mm /= 2;
        s--;
    }
    while (s > 63) { /* a tiny ratio: give up low bits of the multiplier */
        mm = (mm + 1) / 2;
        s--;
    }
    if (s < 0)
        return -1;
    *mult = (int32_t)mm;
    *shift = s;
    return 0;
}

static int32_t round_i32(double v)
{
    if (v >= 2147483647.0)
        return INT32_MAX;
    if (v <= -2147483648.0)
        return INT32_MIN;
    return (int32_t)llround(v);
}

/* Non-finite weights and biases of float operation op: an error, or replaced (NaN by 0, an infinity
 * by the largest finite magnitude of its column, with its sign) with a warning. */
static int finite_weights(tc_graph *g, tc_op *op, float *bias_f)
{
    const tc_node *dot = &g->nodes[op->dot];
    const tc_node *w = &g->nodes[dot->in[1]];
    const size_t rows = (size_t)op->batch * op->k;
    char what[160];
    for (uint32_t j = 0; op->wf && j < op->n; j++) {
        double mx = 0;
        bool bad = false;
        for (size_t k = 0; k < rows; k++) {
            const float v = op->wf[k * op->n + j];
            bad |= !isfinite(v);
            if (isfinite(v) && fabs(v) > mx)
                mx = fabs(v);
        }
        for (size_t k = 0; bad && k < rows; k++) {
            float *v = &op->wf[k * op->n + j];
            if (isfinite(*v))
                continue;
            snprintf(what, sizeof what, "'%s': weights '%s' (as k x n: row %zu, column %u)",
                     dot->name, w->name, k, j);
            if (nonfinite(g, w->src, what, (uint64_t)k * op->n + j, *v))
                return -1;
            hlo_text_printf(&g->warnings, "taken as %g\n", isnan(*v) ? 0.0 : *v > 0 ? mx : -mx);
            *v = isnan(*v) ? 0.0f : (float)(*v > 0 ? mx : -mx);
        }
    }
    const tc_node *add = op->bias >= 0 ? &g->nodes[op->bias] : NULL;
    const tc_node *b =
        add ? &g->nodes[g->nodes[add->in[0]].role == TC_CONST ? add->in[0] : add->in[1]] : NULL;
    for (uint32_t j = 0; bias_f && j < op->n; j++)
        if (!isfinite(bias_f[j])) {
            snprintf(what, sizeof what, "'%s': bias '%s' (column %u)", dot->name, b->name, j);
            if (nonfinite(g, b->src, what, j, bias_f[j]))
                return -1;
            hlo_text_printf(&g->warnings, "taken as 0\n");
            bias_f[j] = 0;
        }
    return 0;
}

/* A scale the int8 arithmetic cannot use, reported against the tensor whose range made it. */
static int check_scale(tc_graph *g, const tc_op *op, double scale, const char *what, int node)
{
    if (isfinite(scale) && scale > 0)
        return 0;
    return tc_fail(g, g->nodes[node].src,
                   "'%s': the scale of %s '%s' is %g (calibrated range "
                   "[%g, %g]): beyond what float32 holds",
                   g->nodes[op->dot].name, what, g->nodes[node].name, scale,
                   g->cal_min ? g->cal_min[node] : 0.0, g->cal_max ? g->cal_max[node] : 0.0);
}

int tc_quantize(tc_graph *g)
{
    for (int i = 0; i < g->n_ops; i++) {
        tc_op *op = &g->ops[i];
        if (op->exact) {
            op->a_unsigned = g->nodes[op->x].shape.type == HLO_U8;
            continue;
        }
        if (op->bf16) { /* weights rounded to nearest even; NaN and infinities are values too */
            const size_t count = (size_t)op->batch * op->k * op->n;
            if (op->wf && !(op->wh = malloc(count * sizeof *op->wh)))
                return tc_oom(g, op->dot, "the bf16 weights", count * sizeof *op->wh);
            for (size_t e = 0; op->wf && e < count; e++)
                op->wh[e] = hlo_bf16_bits(op->wf[e]);
            continue;
        }
        if (op->a_dev) { /* the producer's int8 result, read in place */
            op->a_scale = g->ops[op->via].out_scale;
            op->a_unsigned = false;
        } else {
            double mx = absmax(g, op->x);
            op->a_unsigned = g->cal_min[op->x] >= 0;
            op->a_scale = mx > 0 ? (float)(mx / (op->a_unsigned ? 255.0 : 127.0)) : 1.0f;
            if (check_scale(g, op, op->a_scale, "its input", op->x))
                return -1;
        }
        const float *bias_f = op->bias_f;
        if (finite_weights(g, op, op->bias_f))
            return -1;
        const size_t rows = (size_t)op->batch * op->k; /* of every batch's weights */
        if ((op->wf && !(op->wq = malloc(rows * op->n))) ||
            !(op->acc_scale = malloc(op->n * sizeof(float))) ||
            (bias_f && !(op->bias_q = malloc(op->n * sizeof *op->bias_q))))
            return tc_oom(g, op->dot, "the int8 weights", rows * op->n);
        op->w_absmax_min = DBL_MAX;
        op->w_absmax_max = 0;
        if (op->w >= 0) { /* a run-time B: one scale for the tensor, from its calibrated range */
            const double mx = absmax(g, op->w);
            op->b_scale = mx > 0 ? (float)(mx / 127.0) : 1.0f;
            if (check_scale(g, op, op->b_scale, "its right-hand side", op->w))
                return -1;
        }
        for (uint32_t j = 0; j < op->n; j++) {
            double mx = op->w >= 0 ? absmax(g, op->w) : 0;
            for (size_t k = 0; op->wf && k < rows; k++) {
                double w = fabs(op->wf[k * op->n + j]);
                if (w > mx)
                    mx = w;
            }
            if (mx < op->w_absmax_min)
                op->w_absmax_min = mx;
            if (mx > op->w_absmax_max)
                op->w_absmax_max = mx;
            double ws = op->w >= 0 ? op->b_scale : mx > 0 ? mx / 127.0 : 1.0;
            for (size_t k = 0; op->wf && k < rows; k++) {
                long q = lround(op->wf[k * op->n + j] / ws);
                op->wq[k * op->n + j] = (int8_t)(q > 127 ? 127 : q < -127 ? -127 : q);
            }
            op->acc_scale[j] = (float)(op->a_scale * ws);
            if (!isfinite(op->acc_scale[j]))
                return tc_fail(g, g->nodes[g->nodes[op->dot].in[1]].src,
                               "'%s': column %u of "
                               "weights '%s' (max |w| %g) times the input scale %g overflows "
                               "float32",
                               g->nodes[op->dot].name, j, g->nodes[g->nodes[op->dot].in[1]].name,
                               mx, (double)op->a_scale);
            if (bias_f)
                op->bias_q[j] = round_i32(bias_f[j] / ((double)op->a_scale * ws));
        }
        if (!op->out_int8)
            continue;
        double mx = absmax(g, op->out);
        op->out_scale = mx > 0 ? (float)(mx / 127.0) : 1.0f;
        if (check_scale(g, op, op->out_scale, "its output", op->out))
            return -1;
        if (!(op->mult = malloc(op->n * sizeof *op->mult)) ||
            !(op->shift = malloc(op->n * sizeof *op->shift)))
            return tc_oom(g, op->dot, "the requantization parameters", 8ull * op->n);
        for (uint32_t j = 0; j < op->n; j++)
            if (fixed_point((double)op->acc_scale[j] / op->out_scale, &op->mult[j], &op->shift[j]))
                return tc_fail(g, g->nodes[op->dot].src,
                               "'%s': column %u's requantization ratio %g has no fixed-point "
                               "form",
                               g->nodes[op->dot].name, j, (double)op->acc_scale[j] / op->out_scale);
    }
    return 0;
}

/* segment.c - the device segments of a package (package/tpub.h) as the host program calls
 * them: checking each custom-call against its segment when the runtime opens, and running one
 * when the evaluator reaches it: its inputs quantized (or copied) into the arena in the device's
 * element order, each operation (GEMM or CONV2D) one submission, its outputs read back in the
 * host's order and dequantized (or copied). */
#include "runtime/tpurt_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "tpu.segment.K" with K < n: 0 and *k, else -1. */
static int segment_index(const char *target, uint32_t n, uint32_t *k)
{
    static const char prefix[] = "tpu.segment.";
    if (!target || strncmp(target, prefix, sizeof prefix - 1))
        return -1;
    const char *p = target + sizeof prefix - 1;
    uint64_t v = 0;
    if (!*p)
        return -1;
    for (; *p; p++) {
        if (*p < '0' || *p > '9' || (v = v * 10 + (uint64_t)(*p - '0')) >= n)
            return -1;
    }
    *k = (uint32_t)v;
    return 0;
}

/* The evaluator's way of locating a message at an instruction. */
static void located(tpurt *rt, const hlo_instr *in, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void located(tpurt *rt, const hlo_instr *in, const char *fmt, ...)
{
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    rt_fail(rt, TPURT_E_PACKAGE, RT_HOST_FILE ":%d:%d: %s: %s", in->line, in->col, in->opcode_name,
            what);
}

/* A host array of shape s is what transfer x moves: its type on the host, rows x cols elements
 * (a gather's host_elements), and with a permutation its dims. */
static int xfer_fits(const tpub_xfer *x, const hlo_shape *s)
{
    const uint64_t elements = x->gather ? x->host_elements : (uint64_t)x->rows * x->cols;
    if (s->type != x->host_type || (uint64_t)s->elements != elements)
        return 0;
    if (!x->rank)
        return 1;
    if ((uint32_t)s->rank != x->rank)
        return 0;
    for (uint32_t i = 0; i < x->rank; i++)
        if (s->dims[i] != x->dims[i])
            return 0;
    return 1;
}

/* Result j of a custom-call: its shape, or tuple element j's. */
static const hlo_shape *result_shape(const hlo_instr *in, uint32_t j)
{
    return in->shape.type == HLO_TUPLE ? &in->shape.tuple[j] : &in->shape;
}

const tpub_segment *rt_segment_of(tpurt *rt, const hlo_computation *c, const hlo_instr *in)
{
    const tpub_package *pkg = rt->pkg;
    char s1[160];
    uint32_t k;
    if (segment_index(in->custom_call_target, pkg->n_segments, &k)) {
        located(rt, in,
                "custom_call_target \"%s\" is not a segment of the package "
                "(tpu.segment.K, K < %u)",
                rt_name(in->custom_call_target), pkg->n_segments);
        return NULL;
    }
    const tpub_segment *seg = &pkg->segments[k];
    const int n_outs = in->shape.type == HLO_TUPLE ? in->shape.n_tuple : 1;
    if ((uint32_t)in->n_operands != seg->n_inputs || (uint32_t)n_outs != seg->n_outputs) {
        located(rt, in,
                "segment %u has %u inputs and %u outputs, the custom-call %d operands and "
                "%d results",
                k, seg->n_inputs, seg->n_outputs, in->n_operands, n_outs);
        return NULL;
    }
    for (uint32_t i = 0; i < seg->n_inputs; i++) {
        const tpub_xfer *x = &seg->inputs[i];
        const hlo_shape *s = &c->instrs[in->operands[i].index].shape;
        if (!xfer_fits(x, s)) {
            located(rt, in, "operand %u is %s, segment %u input %u takes %u x %u %s", i,
                    hlo_shape_str(s, s1, sizeof s1), k, i, x->rows, x->cols,
                    hlo_type_name(x->host_type));
            return NULL;
        }
    }
    for (uint32_t j = 0; j < seg->n_outputs; j++) {
        const tpub_xfer *x = &seg->outputs[j];
        const hlo_shape *s = result_shape(in, j);
        if (!xfer_fits(x, s)) {
            located(rt, in, "result %u is %s, segment %u output %u gives %u x %u %s", j,
                    hlo_shape_str(s, s1, sizeof s1), k, j, x->rows, x->cols,
                    hlo_type_name(x->host_type));
            return NULL;
        }
    }
    return seg;
}

static size_t dev_size(hlo_type t) { return hlo_type_size(t); }

/* Bytes a transfer spans on the device: rows at a pitch of ld elements. */
static size_t extent(const tpub_xfer *x)
{
    return ((size_t)(x->rows - 1) * x->ld + x->cols) * dev_size(x->dev_type);
}

/* Do operations a and b count to one report layer? */
static bool same_layer(const tpub_op *a, const tpub_op *b)
{
    if (!a || !b) /* an all-reduce the cores sum is a layer of its own */
        return false;
    if (a->kind != b->kind || strcmp(rt_op_name(a), rt_op_name(b)))
        return false;
    if (a->kind == TPUB_OP_CONV2D)
        return a->conv.flags == b->conv.flags;
    return a->gemm.flags == b->gemm.flags && a->gemm.m == b->gemm.m && a->gemm.k == b->gemm.k &&
           a->gemm.n == b->gemm.n;
}

tpurt_status rt_segments_init(tpurt *rt)
{
    const tpub_package *pkg = rt->pkg;
    for (uint32_t k = 0; k < pkg->n_segments; k++) {
        const tpub_segment *seg = &pkg->segments[k];
        for (uint32_t g = 0; g < seg->n_ops; g++) {
            rt_layer *l = &rt->layers[rt->first_layer[k] + g];
            l->op = &seg->ops[g];
            l->segment = k;
            l->index = g;
        }
    }
    if (!(rt->lines = calloc(rt->n_layers + 1, sizeof *rt->lines)))
        return rt_fail(rt, TPURT_E_NOMEM, "out of host memory");
    for (uint32_t i = 0; i < rt->n_layers; i++) {
        rt_layer *l = &rt->layers[i];
        l->line = 0;
        while (l->line < rt->n_lines && !same_layer(rt->layers[rt->lines[l->line]].op, l->op))
            l->line++;
        if (l->line == rt->n_lines)
            rt->lines[rt->n_lines++] = i;
    }
    return TPURT_OK;
}

uint64_t rt_staging_bytes(const tpurt *rt)
{
    size_t staging = 1;
    for (uint32_t k = 0; k < rt->pkg->n_segments; k++) {
        const tpub_segment *seg = &rt->pkg->segments[k];
        for (uint32_t i = 0; i < seg->n_inputs; i++) { /* one row at a time */
            const size_t row = seg->inputs[i].cols * dev_size(seg->inputs[i].dev_type);
            staging = row > staging ? row : staging;
        }
        for (uint32_t j = 0; j < seg->n_outputs; j++)
            staging = extent(&seg->outputs[j]) > staging ? extent(&seg->outputs[j]) : staging;
    }
    return staging;
}

/* ----------------------------------------------------------------- run -- */

/* The host elements of a transfer in the device's order: the host array's row-major index of
 * each device element in turn (tpub.h: device dimension i is host dimension perm[i]). */
typedef struct {
    uint32_t rank;
    uint64_t dim[TPUB_MAX_RANK], step[TPUB_MAX_RANK], idx[TPUB_MAX_RANK];
    uint64_t at;
} host_walk;

static void walk_init(host_walk *w, const tpub_xfer *x)
{
    uint64_t stride[TPUB_MAX_RANK], s = 1;
    memset(w, 0, sizeof *w);
    w->rank = x->rank;
    for (uint32_t i = x->rank; i-- > 0;) {
        stride[i] = s;
        s *= (uint64_t)x->dims[i];
    }
    for (uint32_t i = 0; i < x->rank; i++) {
        w->dim[i] = (uint64_t)x->dims[x->perm[i]];
        w->step[i] = stride[x->perm[i]];
    }
}

/* The host index of the next device element. */
static uint64_t walk_next(host_walk *w)
{
    const uint64_t at = w->at;
    if (!w->rank) {
        w->at++;
        return at;
    }
    for (uint32_t i = w->rank; i-- > 0;) {
        w->at += w->step[i];
        if (++w->idx[i] < w->dim[i])
            break;
        w->at -= w->step[i] * w->dim[i];
        w->idx[i] = 0;
    }
    return at;
}

/* The device bytes of host element i at out: a copy; bf16, the value in f32 rounded to nearest
 * even by the evaluator's own conversion (hlo_bf16_bits: a `convert` in the host program
 * rounds alike; the device reads a subnormal as a zero of its sign, any NaN as its canonical
 * one), little-endian; or x / scale rounded half to even and clamped (NaN gives 0). */
static void to_device(const hlo_array *a, uint64_t i, const tpub_xfer *x, uint8_t *out)
{
    if (x->host_type == x->dev_type) {
        memcpy(out, (const uint8_t *)a->data + i * dev_size(x->dev_type), dev_size(x->dev_type));
        return;
    }
    if (x->dev_type == HLO_BF16) {
        const uint16_t h = hlo_bf16_bits((float)hlo_array_get(a, (int64_t)i));
        out[0] = (uint8_t)h;
        out[1] = (uint8_t)(h >> 8);
        return;
    }
    const float q = nearbyintf((float)hlo_array_get(a, (int64_t)i) / x->scale[0]);
    const float lo = x->dev_type == HLO_U8 ? 0 : -128, hi = x->dev_type == HLO_U8 ? 255 : 127;
    const float v = isnan(q) ? 0 : q < lo ? lo : q > hi ? hi : q;
    *out = x->dev_type == HLO_U8 ? (uint8_t)v : (uint8_t)(int8_t)v;
}

/* The device address of arena offset off for replica r: its constants or its activations. */
static uint32_t arena_addr(const rt_replica *r, uint64_t off)
{
    const uint64_t c = r->rt->pkg->const_bytes;
    return off < c ? r->consts + (uint32_t)off : r->acts + (uint32_t)(off - c);
}

/* Driver calls from a replica: under the scheduler's lock when batches run side by side; a
 * failure's message is kept in r->driver_msg (the device's message is shared). */
static tpu_status call_done(rt_replica *r, tpu_status s)
{
    if (s != TPU_OK)
        snprintf(r->driver_msg, sizeof r->driver_msg, "%s", tpu_last_error(r->rt->dev));
    return s;
}

static tpurt_status rp_driver_fail(rt_replica *r, tpu_status s, const char *where)
{
    return rp_fail(r, tpurt_status_from_driver(s), "%s: %s", where,
                   *r->driver_msg ? r->driver_msg : tpu_status_name(s));
}

/* Quantizes (or rounds to bf16) segment k's input i into the arena, row by row: the bytes
 * between the rows may belong to other activations. A gather's zeros are zero bytes (a zero in
 * int8 and in bf16). */
static tpurt_status write_input(rt_replica *r, uint32_t k, uint32_t i, const hlo_array *a)
{
    const tpub_xfer *x = &r->rt->pkg->segments[k].inputs[i];
    const size_t esize = dev_size(x->dev_type);
    uint8_t *row = r->staging;
    host_walk w;
    walk_init(&w, x);
    for (uint32_t y = 0; y < x->rows; y++) {
        for (uint32_t col = 0; col < x->cols; col++) {
            const uint64_t e = walk_next(&w), from = x->gather ? x->gather[e] : e;
            if (from == TPUB_GATHER_ZERO)
                memset(row + col * esize, 0, esize);
            else
                to_device(a, from, x, row + col * esize);
        }
        const uint32_t at = arena_addr(r, x->off + (uint64_t)y * x->ld * esize);
        rt_sched_lock(r);
        const tpu_status s = call_done(r, tpu_write(r->rt->dev, at, row, x->cols * esize));
        rt_sched_unlock(r);
        if (s != TPU_OK) {
            char where[96];
            snprintf(where, sizeof where, "batch %llu, segment %u, input %u",
                     (unsigned long long)r->batch, k, i);
            return rp_driver_fail(r, s, where);
        }
    }
    return TPURT_OK;
}

/* Reads segment k's output j from the arena into a new array of shape s (its host type), in the
 * host's element order: dequantized per device column or with one scale, converted from fp32 or
 * bf16 (rounded to the host type), or copied. */
static tpurt_status read_output(rt_replica *r, uint32_t k, uint32_t j, const hlo_shape *s,
                                hlo_array **out)
{
    const tpub_xfer *x = &r->rt->pkg->segments[k].outputs[j];
    char where[96];
    snprintf(where, sizeof where, "batch %llu, segment %u, output %u", (unsigned long long)r->batch,
             k, j);
    hlo_array *a = *out = hlo_array_new(s->type, s->rank, s->dims);
    if (!a)
        return rp_fail(r, TPURT_E_NOMEM, "%s: out of host memory", where);
    const size_t esize = dev_size(x->dev_type);
    const uint8_t *buf = r->staging;
    rt_sched_lock(r);
    const tpu_status st =
        call_done(r, tpu_read(r->rt->dev, arena_addr(r, x->off), r->staging, extent(x)));
    rt_sched_unlock(r);
    if (st != TPU_OK)
        return rp_driver_fail(r, st, where);
    host_walk w;
    walk_init(&w, x);
    for (uint32_t y = 0; y < x->rows; y++)
        for (uint32_t col = 0; col < x->cols; col++) {
            const size_t at = (size_t)y * x->ld + col, i = (size_t)walk_next(&w);
            if (x->dev_type == HLO_F32 || x->dev_type == HLO_BF16) {
                float f;
                if (x->dev_type == HLO_F32)
                    memcpy(&f, buf + at * 4, 4);
                else
                    f = (float)hlo_bf16_value((uint16_t)(buf[at * 2] | buf[at * 2 + 1] << 8));
                hlo_array_set(a, (int64_t)i, f);
                continue;
            }
            int32_t q;
            if (esize == 4)
                memcpy(&q, buf + at * 4, 4);
            else
                q = (int8_t)buf[at];
            if (hlo_is_float(x->host_type)) /* in f32, then rounded to the host type */
                hlo_array_set(a, (int64_t)i, (float)q * x->scale[x->n_scale == 1 ? 0 : col]);
            else if (esize == 4)
                ((int32_t *)a->data)[i] = q;
            else
                ((int8_t *)a->data)[i] = (int8_t)q;
        }
    return TPURT_OK;
}

tpu_status rt_submit(rt_replica *r, uint32_t layer, const tpu_cost *cost)
{
    tpurt *rt = r->rt;
    rt_layer *l = &rt->layers[layer];
    tpu_perf_report perf;
    rt_sched_lock(r);
    tpu_status s = call_done(r, tpu_submit_core(rt->dev, r->core, r->streams[layer]));
    if (s == TPU_OK)
        s = call_done(r, rt_sched_wait(r));
    if (s == TPU_OK)
        s = call_done(r, tpu_perf_core(rt->dev, r->core, &perf));
    if (s == TPU_OK) {
        l->submissions++;
        l->cycles += perf.cycles;
        l->ideal += cost->ideal_cycles;
        l->bound += cost->bound_cycles;
        rt->stats.submissions++;
        rt->stats.verified += perf.verified != 0;
        rt->stats.cycles += perf.cycles;
        if (!r->sched)
            rt->stats.device_seconds += perf.wall_seconds;
        tpurt_core_stats *c = &rt->core_stats[r->core];
        c->submissions++;
        c->cycles += perf.cycles;
        c->mem_stall_cycles += perf.mem_stall_cycles;
        c->mxu_busy += perf.counters[TPU_PERF_MXU_BUSY];
    }
    rt_sched_unlock(r);
    return s;
}

/* Submits one operation on r's core. */
static tpurt_status run_op(rt_replica *r, uint32_t layer)
{
    const rt_layer *l = &r->rt->layers[layer];
    const tpu_status s = rt_submit(r, layer, &l->cost);
    if (s != TPU_OK) {
        char where[160];
        snprintf(where, sizeof where, "batch %llu, segment %u, %s %u '%s'",
                 (unsigned long long)r->batch, l->segment, rt_op_kind(l->op), l->index,
                 rt_op_name(l->op));
        return rp_driver_fail(r, s, where);
    }
    return TPURT_OK;
}

static tpurt_status run_segment(rt_replica *r, uint32_t k, const hlo_instr *in,
                                hlo_array *const *ops, hlo_array **outs)
{
    const tpub_segment *seg = &r->rt->pkg->segments[k];
    tpurt_status st = TPURT_OK;
    for (uint32_t i = 0; i < seg->n_inputs && st == TPURT_OK; i++)
        st = write_input(r, k, i, ops[i]);
    for (uint32_t g = 0; g < seg->n_ops && st == TPURT_OK; g++)
        st = run_op(r, r->rt->first_layer[k] + g);
    for (uint32_t j = 0; j < seg->n_outputs && st == TPURT_OK; j++)
        st = read_output(r, k, j, result_shape(in, j), &outs[j]);
    return st;
}

int rt_segment_hook(void *ctx, const hlo_instr *in, hlo_array *const *operands, int n_operands,
                    hlo_array **outs, int n_outs, hlo_error *err)
{
    (void)n_operands; /* tpurt_open matched both counts with the segment's */
    (void)n_outs;
    rt_replica *r = ctx;
    uint32_t k = 0;
    /* tpurt_open checked every custom-call of the host program. */
    segment_index(in->custom_call_target, r->rt->pkg->n_segments, &k);
    const double t0 = tpuio_seconds();
    const tpurt_status st = run_segment(r, k, in, operands, outs);
    r->segment_seconds += tpuio_seconds() - t0;
    if (st == TPURT_OK)
        return 0;
    r->hook_status = st;
    return hlo_errorf(err, "segment %u failed", k); /* r's message says how */
}

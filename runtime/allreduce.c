/* allreduce.c - the all-reduces the cores sum (tpurt_run_batches): which ones, their device
 * buffers and streams, and the device's part of one.
 *
 * An all-reduce of R > 1 replicas whose to_apply adds its two parameters, over f32 or s32, runs
 * on the cores that run the replicas: each replica writes its operands, back to back, into a
 * buffer of its own in device memory; once all have (the meeting in batches.c), core k sums
 * slice k of the elements (rows of N elements, cut evenly among the R cores) over the R buffers
 * in replica order and writes the sum into replica 0's (firmware REDUCE, in place); once all
 * cores are done (a second meeting), every replica reads the sums from there. The cores share
 * one memory, so one copy of the sums serves all replicas: writing it R times would cost R - 1
 * more passes over the elements through the one port. The slices are disjoint, so the cores
 * need no barrier of their own: the host's meeting waits for them all.
 * Every other all-reduce (a maximum, a product, another type) is combined on the host. */
#include "runtime/tpurt_internal.h"

#include <stdio.h>

/* Array k of an all-reduce's result (its operands' shapes). */
static const hlo_shape *part(const hlo_instr *in, int k)
{
    return in->shape.type == HLO_TUPLE ? &in->shape.tuple[k] : &in->shape;
}

/* Elements of all its operands. */
static uint64_t elements(const hlo_instr *in)
{
    uint64_t e = 0;
    for (int k = 0; k < in->n_operands; k++)
        e += (uint64_t)part(in, k)->elements;
    return e;
}

/* Whether the cores sum in among the replicas: R > 1 of them, to_apply an add of its two
 * parameters, every operand f32 (or every one s32), some elements. */
static int on_device(const tpurt *rt, const hlo_instr *in)
{
    if (in->opcode != HLO_OP_ALL_REDUCE || hlo_devices(rt->host) < 2 ||
        hlo_all_reduce_group_size(rt->host, in) != hlo_devices(rt->host))
        return 0;
    const hlo_computation *f = &rt->host->comps[in->to_apply];
    const hlo_instr *root = &f->instrs[f->root];
    if (root->opcode != HLO_OP_ADD || root->n_operands != 2)
        return 0;
    const hlo_instr *a = &f->instrs[root->operands[0].index];
    const hlo_instr *b = &f->instrs[root->operands[1].index];
    if (a->opcode != HLO_OP_PARAMETER || b->opcode != HLO_OP_PARAMETER ||
        a->parameter_number == b->parameter_number)
        return 0;
    const hlo_type t = part(in, 0)->type;
    for (int k = 0; k < in->n_operands; k++)
        if (part(in, k)->type != t || (t != HLO_F32 && t != HLO_S32))
            return 0;
    return elements(in) > 0;
}

/* Calls fn for each all-reduce of the host program the cores sum; returns how many. */
static uint32_t each_on_device(tpurt *rt, void (*fn)(tpurt *, const hlo_instr *, uint32_t))
{
    uint32_t n = 0;
    for (int c = 0; c < rt->host->n_comps; c++)
        for (int i = 0; i < rt->host->comps[c].n_instrs; i++) {
            const hlo_instr *in = &rt->host->comps[c].instrs[i];
            if (!on_device(rt, in))
                continue;
            if (fn)
                fn(rt, in, n);
            n++;
        }
    return n;
}

uint32_t rt_reduce_count(tpurt *rt) { return each_on_device(rt, NULL); }

static void init_layer(tpurt *rt, const hlo_instr *in, uint32_t i)
{
    rt_layer *l = &rt->layers[rt->first_layer[rt->pkg->n_segments] + i];
    l->all_reduce = in;
    l->index = i;
    const uint64_t bytes = 4 * elements(in);
    rt->reduce_bytes = bytes > rt->reduce_bytes ? bytes : rt->reduce_bytes;
}

void rt_reduce_layers(tpurt *rt) { each_on_device(rt, init_layer); }

int rt_reduce_layer(const tpurt *rt, const hlo_instr *in)
{
    for (uint32_t i = rt->first_layer[rt->pkg->n_segments]; i < rt->n_layers; i++)
        if (rt->layers[i].all_reduce == in)
            return (int)i;
    return -1;
}

void rt_reduce_describe(const tpurt *rt, const rt_layer *l, tpurt_layer *out)
{
    out->name = l->all_reduce->name;
    out->fused = "";
    out->kind = TPURT_ALL_REDUCE;
    out->m = (uint32_t)hlo_devices(rt->host);
    out->n = (uint32_t)elements(l->all_reduce);
    out->flags = part(l->all_reduce, 0)->type == HLO_F32 ? TPU_REDUCE_F32 : 0;
}

/* Replica k's REDUCE of layer l: its slice of whole rows of N elements (the last may be short,
 * or the slice empty: elements 0), from the R replicas' buffers (buffer i of its stream is
 * replica i's) into replica 0's. */
static tpu_reduce slice(const tpurt *rt, const rt_layer *l, uint32_t k)
{
    const uint32_t R = (uint32_t)hlo_devices(rt->host), n = rt->info.array_n;
    const uint64_t e = elements(l->all_reduce), rows = (e + n - 1) / n;
    const uint64_t first = rows * k / R * n, end = rows * (k + 1) / R * n;
    tpu_reduce cmd = {.flags = part(l->all_reduce, 0)->type == HLO_F32 ? TPU_REDUCE_F32 : 0,
                      .elements = (uint32_t)((end < e ? end : e) - first),
                      .sources = R,
                      .destinations = 1};
    for (uint32_t i = 0; i < R; i++)
        cmd.src[i] = (tpu_operand){i, (uint32_t)(4 * first), 0};
    cmd.dst[0] = cmd.src[0];
    return cmd;
}

tpurt_status rt_reduce_setup(tpurt *rt)
{
    const uint32_t R = (uint32_t)hlo_devices(rt->host);
    const uint32_t first = rt->first_layer[rt->pkg->n_segments];
    if (!rt->reduce_bytes || R > rt->n_replicas) /* open_runtime refuses the latter */
        return TPURT_OK;
    for (uint32_t k = 0; k < R; k++) {
        const tpu_status s = tpu_alloc(rt->dev, rt->reduce_bytes, &rt->replicas[k].reduce);
        if (s != TPU_OK)
            return rt_driver_fail(rt, s, "all-reduce buffers");
    }
    for (uint32_t i = first; i < rt->n_layers; i++) { /* the whole all-reduce's */
        tpu_reduce all = slice(rt, &rt->layers[i], 0);
        all.elements = (uint32_t)elements(rt->layers[i].all_reduce);
        tpu_reduce_cost(&rt->info, &all, &rt->layers[i].cost);
    }
    for (uint32_t k = 0; k < R; k++)
        for (uint32_t i = first; i < rt->n_layers; i++) {
            const tpu_reduce cmd = slice(rt, &rt->layers[i], k);
            tpu_stream *s = cmd.elements ? rt->replicas[k].streams[i] = tpu_stream_new() : NULL;
            tpu_status st = cmd.elements && !s ? TPU_E_NOMEM : TPU_OK;
            for (uint32_t j = 0; s && j < R && st == TPU_OK; j++)
                st = tpu_stream_buffer(s, rt->replicas[j].reduce, (uint32_t)rt->reduce_bytes, NULL);
            if (s && st == TPU_OK)
                st = tpu_stream_reduce(s, &cmd);
            if (st != TPU_OK)
                return rt_fail(rt, TPURT_E_NOMEM, "out of host memory for the command streams");
        }
    return TPURT_OK;
}

/* The driver's failure of replica r at layer l's all-reduce. */
static tpurt_status fail(rt_replica *r, const rt_layer *l, tpu_status s, const char *what)
{
    return rp_fail(r, tpurt_status_from_driver(s), "batch %llu, all-reduce '%s': %s: %s",
                   (unsigned long long)r->batch, l->all_reduce->name, what,
                   *r->driver_msg ? r->driver_msg : tpu_status_name(s));
}

tpurt_status rt_reduce_write(rt_replica *r, uint32_t layer, hlo_array *const *ops)
{
    const rt_layer *l = &r->rt->layers[layer];
    uint64_t at = 0;
    for (int k = 0; k < l->all_reduce->n_operands; k++) {
        const size_t bytes = (size_t)ops[k]->shape.elements * 4;
        const tpu_status s = tpu_write(r->rt->dev, r->reduce + (uint32_t)at, ops[k]->data, bytes);
        if (s != TPU_OK) {
            snprintf(r->driver_msg, sizeof r->driver_msg, "%s", tpu_last_error(r->rt->dev));
            return fail(r, l, s, "its operands");
        }
        at += bytes;
    }
    return TPURT_OK;
}

tpurt_status rt_reduce_run(rt_replica *r, uint32_t layer)
{
    tpurt *rt = r->rt;
    const uint32_t k = (uint32_t)(r - rt->replicas);
    if (!r->streams[layer]) /* an empty slice */
        return TPURT_OK;
    const tpu_reduce cmd = slice(rt, &rt->layers[layer], k);
    tpu_cost cost;
    tpu_reduce_cost(&rt->info, &cmd, &cost);
    const tpu_status s = rt_submit(r, layer, &cost);
    return s == TPU_OK ? TPURT_OK : fail(r, &rt->layers[layer], s, "its slice");
}

tpurt_status rt_reduce_read(rt_replica *r, uint32_t layer, hlo_array **outs)
{
    const rt_layer *l = &r->rt->layers[layer];
    uint64_t at = 0;
    for (int k = 0; k < l->all_reduce->n_operands; k++) {
        const hlo_shape *s = part(l->all_reduce, k);
        if (!(outs[k] = hlo_array_new(s->type, s->rank, s->dims)))
            return rp_fail(r, TPURT_E_NOMEM, "batch %llu, all-reduce '%s': out of host memory",
                           (unsigned long long)r->batch, l->all_reduce->name);
        const size_t bytes = (size_t)s->elements * 4;
        const tpu_status st =
            tpu_read(r->rt->dev, r->rt->replicas[0].reduce + (uint32_t)at, outs[k]->data, bytes);
        if (st != TPU_OK) {
            snprintf(r->driver_msg, sizeof r->driver_msg, "%s", tpu_last_error(r->rt->dev));
            return fail(r, l, st, "its sums");
        }
        at += bytes;
    }
    return TPURT_OK;
}

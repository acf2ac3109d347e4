/* tpurt.c - the runtime of tpurt.h: opening a package on a device, its signatures, runs of the
 * host program, statistics. The device segments the host program calls are in segment.c.
 *
 * The host program is parsed and checked once. Its parameters are views of the caller's input
 * buffers (the evaluator only reads them), so a run copies inputs only where a segment
 * quantizes them into the arena. */
#include "runtime/tpurt_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tpurt_status rt_fail(tpurt *rt, tpurt_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rt->msg, sizeof rt->msg, fmt, ap);
    va_end(ap);
    return s;
}

tpurt_status tpurt_status_from_driver(tpu_status s)
{
    switch (s) {
    case TPU_OK: return TPURT_OK;
    case TPU_E_STREAM: return TPURT_E_FIRMWARE;
    case TPU_E_CORE: return TPURT_E_CORE;
    case TPU_E_TIMEOUT: return TPURT_E_TIMEOUT;
    case TPU_E_MISMATCH: return TPURT_E_MISMATCH;
    case TPU_E_IO: return TPURT_E_IO;
    /* The runtime's own calls are well formed: a refused argument is the device refusing what
     * the package asks of it. Out of memory (the device's or the driver's) stops the device. */
    case TPU_E_ARG:
    case TPU_E_NOMEM:
    case TPU_E_DEVICE: break;
    }
    return TPURT_E_DEVICE;
}

tpurt_status rt_driver_fail(tpurt *rt, tpu_status s, const char *where)
{
    const char *msg = tpu_last_error(rt->dev);
    return rt_fail(rt, tpurt_status_from_driver(s), "%s: %s", where,
                   msg && *msg ? msg : tpu_status_name(s));
}

const char *tpurt_status_name(tpurt_status s)
{
    static const char *const names[] = {
        "TPURT_OK",        "TPURT_E_ARG",      "TPURT_E_NOMEM",    "TPURT_E_PACKAGE",
        "TPURT_E_EVAL",    "TPURT_E_DEVICE",   "TPURT_E_FIRMWARE", "TPURT_E_CORE",
        "TPURT_E_TIMEOUT", "TPURT_E_MISMATCH", "TPURT_E_IO",
    };
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

void tpurt_options_default(tpurt_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof *opts);
    opts->verify = 1;
}

const char *tpurt_last_error(const tpurt *rt) { return rt ? rt->msg : "no runtime"; }

tpurt_status rp_fail(rt_replica *r, tpurt_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->msg, sizeof r->msg, fmt, ap);
    va_end(ap);
    return s;
}

/* "'x' f32[4,784]" into buf. */
const char *rt_sig_str(const rt_sig *s, char *buf, size_t size)
{
    char shape[160];
    snprintf(buf, size, "'%s' %s", s->sig->name, hlo_shape_str(&s->shape, shape, sizeof shape));
    return buf;
}

/* ---------------------------------------------------------------- open -- */

static void sig_init(rt_sig *s, const tpub_sig *sig)
{
    s->sig = sig;
    s->shape.type = sig->type;
    s->shape.rank = sig->rank;
    s->shape.elements = 1;
    for (int d = 0; d < sig->rank; d++) {
        s->shape.dims[d] = sig->dims[d];
        s->shape.elements *= sig->dims[d];
    }
}

/* The ENTRY parameters are the inputs, in order and shape: the runs pass the caller's buffers
 * to the evaluator as they are. */
static tpurt_status check_parameters(tpurt *rt)
{
    const hlo_computation *c = hlo_entry(rt->host);
    uint32_t n = 0;
    for (int i = 0; i < c->n_instrs; i++)
        n += c->instrs[i].opcode == HLO_OP_PARAMETER;
    if (n != rt->pkg->n_inputs)
        return rt_fail(rt, TPURT_E_PACKAGE,
                       RT_HOST_FILE ": ENTRY '%s' has %u parameters, but the "
                                    "package has %u inputs",
                       c->name, n, rt->pkg->n_inputs);
    for (int i = 0; i < c->n_instrs; i++) {
        const hlo_instr *in = &c->instrs[i];
        if (in->opcode != HLO_OP_PARAMETER)
            continue;
        const rt_sig *s = &rt->inputs[in->parameter_number]; /* hlo_check: 0..n-1 */
        char s1[160], s2[200];
        if (!hlo_shape_equal(&in->shape, &s->shape))
            return rt_fail(rt, TPURT_E_PACKAGE,
                           RT_HOST_FILE ":%d:%d: parameter: '%s' is %s, but "
                                        "input %lld is %s",
                           in->line, in->col, in->name, hlo_shape_str(&in->shape, s1, sizeof s1),
                           (long long)in->parameter_number, rt_sig_str(s, s2, sizeof s2));
    }
    return TPURT_OK;
}

/* Every custom-call of the host program runs a segment of the package (rt_segment_of); every
 * all-reduce is among all the replicas, or each replica alone (tpurt_run_batches runs them). */
static tpurt_status check_calls(tpurt *rt)
{
    const int64_t replicas = hlo_devices(rt->host);
    for (int k = 0; k < rt->host->n_comps; k++) {
        const hlo_computation *c = &rt->host->comps[k];
        for (int i = 0; i < c->n_instrs; i++) {
            const hlo_instr *in = &c->instrs[i];
            if (in->opcode == HLO_OP_CUSTOM_CALL && !rt_segment_of(rt, c, in))
                return TPURT_E_PACKAGE;
            const int64_t group = in->opcode == HLO_OP_ALL_REDUCE
                                      ? hlo_all_reduce_group_size(rt->host, in)
                                      : replicas;
            if (group != 1 && group != replicas)
                return rt_fail(rt, TPURT_E_PACKAGE,
                               RT_HOST_FILE ":%d:%d: all-reduce: groups of %lld of the %lld "
                                            "replicas are not supported (only all of them, or "
                                            "one)",
                               in->line, in->col, (long long)group, (long long)replicas);
        }
    }
    return TPURT_OK;
}

/* Where an operand at arena offset off lies in a replica's stream: the constants' buffer or the
 * activations' (the package keeps every operand inside one of them). */
typedef struct {
    uint64_t const_bytes;
    uint32_t consts, acts; /* buffer indices */
} arena_bufs;

static tpu_operand operand(const arena_bufs *b, uint64_t off, uint32_t ld)
{
    return off < b->const_bytes ? (tpu_operand){b->consts, (uint32_t)off, ld}
                                : (tpu_operand){b->acts, (uint32_t)(off - b->const_bytes), ld};
}

/* Layer l's command in stream s, and what it costs. */
static tpu_status add_gemm(tpurt *rt, rt_layer *l, tpu_stream *s, const arena_bufs *b)
{
    const tpub_gemm *g = &l->op->gemm;
    const int params = (g->flags & (TPU_GEMM_BIAS | TPU_GEMM_OUT_INT8)) != 0;
    const tpu_gemm cmd = {
        .m = g->m,
        .k = g->k,
        .n = g->n,
        .flags = g->flags,
        .a = operand(b, g->a_off, g->lda),
        .b = operand(b, g->b_off, g->flags & TPU_GEMM_B_TILED ? 0 : g->n),
        .c = operand(b, g->c_off, g->ldc),
        .params = params ? operand(b, g->p_off, 0) : (tpu_operand){0, 0, 0},
    };
    const tpu_status st = tpu_stream_gemm(s, &cmd);
    if (st == TPU_OK)
        tpu_gemm_cost(&rt->info, &cmd, &l->cost);
    return st;
}

tpu_conv2d rt_conv_command(const tpub_conv *v, uint32_t buf)
{
    const int params = (v->flags & (TPU_GEMM_BIAS | TPU_GEMM_OUT_INT8)) != 0;
    return (tpu_conv2d){
        .flags = v->flags,
        .batch = v->batch,
        .h = v->h,
        .w = v->w,
        .c = v->c,
        .kh = v->kh,
        .kw = v->kw,
        .cout = v->cout,
        .stride_h = v->stride_h,
        .stride_w = v->stride_w,
        .pad_top = v->pad_top,
        .pad_bottom = v->pad_bottom,
        .pad_left = v->pad_left,
        .pad_right = v->pad_right,
        .pool_h = v->pool_h,
        .pool_w = v->pool_w,
        .pool_stride_h = v->pool_stride_h,
        .pool_stride_w = v->pool_stride_w,
        .in = {buf, (uint32_t)v->in_off, 0},
        .kernel = {buf, (uint32_t)v->k_off, 0},
        .out = {buf, (uint32_t)v->out_off, 0},
        .params = {params ? buf : 0, params ? (uint32_t)v->p_off : 0, 0},
    };
}

static tpu_status add_conv(tpurt *rt, rt_layer *l, tpu_stream *s, const arena_bufs *b)
{
    const tpub_conv *v = &l->op->conv;
    tpu_conv2d cmd = rt_conv_command(v, 0);
    cmd.in = operand(b, v->in_off, 0);
    cmd.kernel = operand(b, v->k_off, 0);
    cmd.out = operand(b, v->out_off, 0);
    if (v->flags & (TPU_GEMM_BIAS | TPU_GEMM_OUT_INT8))
        cmd.params = operand(b, v->p_off, 0);
    const tpu_status st = tpu_stream_conv2d(s, &cmd);
    if (st == TPU_OK)
        tpu_conv2d_cost(&rt->info, &cmd, &l->cost);
    return st;
}

/* Replica r's command streams: its constants and its activations as two buffers. */
static tpurt_status replica_streams(tpurt *rt, rt_replica *r)
{
    const tpub_package *pkg = rt->pkg;
    const uint64_t act_bytes = pkg->arena_bytes - pkg->const_bytes;
    if (!(r->streams = calloc(rt->n_layers + 1, sizeof *r->streams)))
        return rt_fail(rt, TPURT_E_NOMEM, "out of host memory for the command streams");
    for (uint32_t i = 0; i < rt->first_layer[pkg->n_segments]; i++) {
        rt_layer *l = &rt->layers[i];
        tpu_stream *s = r->streams[i] = tpu_stream_new();
        if (!s)
            return rt_fail(rt, TPURT_E_NOMEM, "out of host memory for the command streams");
        arena_bufs b = {pkg->const_bytes, 0, 0};
        tpu_status st = TPU_OK;
        if (pkg->const_bytes)
            st = tpu_stream_buffer(s, r->consts, (uint32_t)pkg->const_bytes, &b.consts);
        if (st == TPU_OK && act_bytes)
            st = tpu_stream_buffer(s, r->acts, (uint32_t)act_bytes, &b.acts);
        if (st == TPU_OK)
            st = l->op->kind == TPUB_OP_CONV2D ? add_conv(rt, l, s, &b) : add_gemm(rt, l, s, &b);
        if (st == TPU_E_NOMEM)
            return rt_fail(rt, TPURT_E_NOMEM, "out of host memory for the command streams");
        if (st != TPU_OK)
            return rt_fail(rt, TPURT_E_PACKAGE,
                           "segment %u %s %u '%s': the driver refuses "
                           "the command: %s",
                           l->segment, rt_op_kind(l->op), l->index, rt_op_name(l->op),
                           tpu_status_name(st));
    }
    return TPURT_OK;
}

tpurt_status rt_replicas_init(tpurt *rt, int weights_per_core)
{
    const tpub_package *pkg = rt->pkg;
    const uint64_t act_bytes = pkg->arena_bytes - pkg->const_bytes;
    const uint64_t staging = rt_staging_bytes(rt);
    for (uint32_t c = 0; c < rt->n_replicas; c++) {
        rt_replica *r = &rt->replicas[c];
        r->rt = rt;
        r->core = c;
        const int own_consts = c == 0 || weights_per_core;
        const uint64_t bytes = own_consts ? pkg->arena_bytes : act_bytes;
        uint32_t at = 0;
        tpu_status s = bytes ? tpu_alloc(rt->dev, bytes, &at) : TPU_OK;
        if (s == TPU_OK && own_consts && pkg->const_bytes)
            s = tpu_write(rt->dev, at, pkg->const_image, pkg->const_bytes);
        if (s != TPU_OK)
            return rt_driver_fail(rt, s, "arena");
        if (c == 0)
            rt->arena = at;
        r->consts = own_consts ? at : rt->arena;
        r->acts = own_consts ? at + (uint32_t)pkg->const_bytes : at;
        r->params = calloc(pkg->n_inputs + 1, sizeof *r->params);
        r->param_list = calloc(pkg->n_inputs + 1, sizeof *r->param_list);
        if (!r->params || !r->param_list || !(r->staging = malloc(staging)))
            return rt_fail(rt, TPURT_E_NOMEM, "out of host memory");
        for (uint32_t i = 0; i < pkg->n_inputs; i++) {
            r->params[i].shape = rt->inputs[i].shape;
            r->param_list[i] = &r->params[i];
        }
        const tpurt_status st = replica_streams(rt, r);
        if (st != TPURT_OK)
            return st;
    }
    return rt_reduce_setup(rt);
}

void rt_replicas_free(tpurt *rt)
{
    for (uint32_t c = 0; rt->replicas && c < rt->n_replicas; c++) {
        rt_replica *r = &rt->replicas[c];
        for (uint32_t i = 0; r->streams && i < rt->n_layers; i++)
            tpu_stream_free(r->streams[i]);
        free(r->streams);
        free(r->staging);
        free(r->params);
        free(r->param_list);
    }
    free(rt->replicas);
}

/* The device (local with the package's array size and the cores asked for, or remote), then
 * the replicas: arenas with the constant image, a command stream per operation and core. */
static tpurt_status setup_device(tpurt *rt, const tpurt_options *opts)
{
    const tpub_package *pkg = rt->pkg;
    tpusim_config cfg = {0};
    if (opts->device)
        cfg = *opts->device;
    if (cfg.cores > TPUSIM_CORES_MAX)
        return rt_fail(rt, TPURT_E_ARG, "cores %u: at most %u", cfg.cores, TPUSIM_CORES_MAX);
    rt->n_replicas = cfg.cores ? cfg.cores : 1;
    const uint64_t act_bytes = pkg->arena_bytes - pkg->const_bytes;
    const uint64_t each = opts->weights_per_core ? pkg->arena_bytes : act_bytes;
    const uint64_t total = pkg->arena_bytes + (rt->n_replicas - 1) * each +
                           (uint64_t)hlo_devices(rt->host) * rt->reduce_bytes;
    tpu_status s;
    if (opts->remote) {
        s = tpu_open_remote(opts->remote, &rt->dev, rt->msg, sizeof rt->msg);
    } else {
        cfg.array_n = pkg->array_n;
        if (!(cfg.mem_size = tpu_mem_size_for(total))) {
            char cores[64] = "";
            if (rt->n_replicas > 1)
                snprintf(cores, sizeof cores, " (%llu bytes for %u cores)",
                         (unsigned long long)total, rt->n_replicas);
            return rt_fail(rt, TPURT_E_PACKAGE,
                           "an arena of %llu bytes%s; at most 3 GiB fit the device's addresses",
                           (unsigned long long)pkg->arena_bytes, cores);
        }
        s = tpu_open(&cfg, opts->verify != 0, &rt->dev, rt->msg, sizeof rt->msg);
    }
    if (s != TPU_OK)
        return tpurt_status_from_driver(s);
    tpu_set_budget(rt->dev, opts->max_cycles);
    rt->batch = opts->first_batch;
    tpu_query(rt->dev, &rt->info); /* an open device answers */
    if (rt->info.cores < rt->n_replicas)
        return rt_fail(rt, TPURT_E_DEVICE, "the device has %u cores, %u asked for", rt->info.cores,
                       rt->n_replicas);
    if (!(rt->replicas = calloc(rt->n_replicas, sizeof *rt->replicas)))
        return rt_fail(rt, TPURT_E_NOMEM, "out of host memory");
    return rt_replicas_init(rt, opts->weights_per_core);
}

static tpurt_status open_runtime(tpurt *rt, const tpurt_options *opts)
{
    const tpub_package *pkg = rt->pkg;
    hlo_error herr;
    if (!pkg->host_hlo)
        return rt_fail(rt, TPURT_E_PACKAGE, "the package has no host program");
    if (!(rt->host = hlo_parse(pkg->host_hlo, strlen(pkg->host_hlo), RT_HOST_FILE, &herr)) ||
        hlo_check(rt->host, RT_HOST_FILE, &herr))
        return rt_fail(rt, TPURT_E_PACKAGE, "%s", herr.msg);
    rt->inputs = calloc(pkg->n_inputs + 1, sizeof *rt->inputs);
    rt->outputs = calloc(pkg->n_outputs + 1, sizeof *rt->outputs);
    rt->first_layer = calloc(pkg->n_segments + 1, sizeof *rt->first_layer);
    if (!rt->inputs || !rt->outputs || !rt->first_layer)
        return rt_fail(rt, TPURT_E_NOMEM, "out of host memory");
    for (uint32_t i = 0; i < pkg->n_inputs; i++)
        sig_init(&rt->inputs[i], &pkg->inputs[i]);
    for (uint32_t j = 0; j < pkg->n_outputs; j++)
        sig_init(&rt->outputs[j], &pkg->outputs[j]);
    tpurt_status st = check_parameters(rt);
    if (st == TPURT_OK)
        st = check_calls(rt);
    if (st != TPURT_OK)
        return st;

    for (uint32_t k = 0; k < pkg->n_segments; k++)
        rt->first_layer[k + 1] = rt->first_layer[k] + pkg->segments[k].n_ops;
    rt->n_layers = rt->first_layer[pkg->n_segments] + rt_reduce_count(rt);
    if (!(rt->layers = calloc(rt->n_layers + 1, sizeof *rt->layers)) ||
        (st = rt_segments_init(rt)) != TPURT_OK)
        return st == TPURT_OK ? rt_fail(rt, TPURT_E_NOMEM, "out of host memory") : st;
    rt_reduce_layers(rt);
    if ((st = setup_device(rt, opts)) == TPURT_OK && hlo_devices(rt->host) > rt->n_replicas)
        st = rt_fail(rt, TPURT_E_PACKAGE,
                     "the host program runs as %lld replicas, but the device has %u cores",
                     (long long)hlo_devices(rt->host), rt->n_replicas);
    return st;
}

tpurt_status tpurt_open(const tpub_package *pkg, const tpurt_options *opts, tpurt **rt, char *err,
                        size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!rt || !pkg) {
        if (err && errlen)
            snprintf(err, errlen, "tpurt_open: %s", !rt ? "NULL rt" : "no package");
        if (rt)
            *rt = NULL;
        return TPURT_E_ARG;
    }
    *rt = NULL;
    tpurt_options o;
    tpurt_options_default(&o);
    if (opts)
        o = *opts;
    tpurt *r = calloc(1, sizeof *r);
    if (!r) {
        if (err && errlen)
            snprintf(err, errlen, "tpurt_open: out of host memory");
        return TPURT_E_NOMEM;
    }
    r->pkg = pkg;
    const tpurt_status st = open_runtime(r, &o);
    if (st != TPURT_OK) {
        if (err && errlen)
            snprintf(err, errlen, "%s", r->msg);
        tpurt_close(r);
        return st;
    }
    *rt = r;
    return TPURT_OK;
}

tpurt_status tpurt_load(const char *path, const tpurt_options *opts, tpurt **rt, char *err,
                        size_t errlen)
{
    if (!rt || !path) {
        if (err && errlen)
            snprintf(err, errlen, "tpurt_load: %s", !rt ? "NULL rt" : "no path");
        if (rt)
            *rt = NULL;
        return TPURT_E_ARG;
    }
    *rt = NULL;
    tpub_package *pkg = calloc(1, sizeof *pkg);
    hlo_error why;
    if (!pkg) {
        if (err && errlen)
            snprintf(err, errlen, "tpurt_load: out of host memory");
        return TPURT_E_NOMEM;
    }
    if (tpub_load(path, pkg, &why)) {
        if (err && errlen)
            snprintf(err, errlen, "%s: %s", path, why.msg);
        free(pkg);
        return TPURT_E_PACKAGE;
    }
    const tpurt_status st = tpurt_open(pkg, opts, rt, err, errlen);
    if (st != TPURT_OK) {
        tpub_free(pkg);
        free(pkg);
        return st;
    }
    (*rt)->owned = pkg;
    return TPURT_OK;
}

void tpurt_close(tpurt *rt)
{
    if (!rt)
        return;
    rt_replicas_free(rt);
    tpu_close(rt->dev); /* closes a trace still armed */
    free(rt->layers);
    free(rt->lines);
    free(rt->first_layer);
    free(rt->inputs);
    free(rt->outputs);
    hlo_module_free(rt->host);
    if (rt->owned) {
        tpub_free(rt->owned);
        free(rt->owned);
    }
    free(rt);
}

/* ---------------------------------------------------------- signatures -- */

uint32_t tpurt_n_inputs(const tpurt *rt) { return rt ? rt->pkg->n_inputs : 0; }

uint32_t tpurt_n_outputs(const tpurt *rt) { return rt ? rt->pkg->n_outputs : 0; }

int32_t tpurt_output_updates(const tpurt *rt, uint32_t output)
{
    for (int i = 0; rt && i < rt->host->n_aliases; i++)
        if (rt->host->aliases[i].output.n == 1 && rt->host->aliases[i].output.v[0] == output)
            return (int32_t)rt->host->aliases[i].param;
    return -1;
}

static tpurt_status describe(tpurt *rt, const rt_sig *sigs, uint32_t n, uint32_t i,
                             tpurt_tensor *out, const char *call)
{
    if (!rt)
        return TPURT_E_ARG;
    if (!out)
        return rt_fail(rt, TPURT_E_ARG, "%s: NULL tensor", call);
    if (i >= n)
        return rt_fail(rt, TPURT_E_ARG, "%s: %u, but there are %u", call, i, n);
    const rt_sig *s = &sigs[i];
    memset(out, 0, sizeof *out);
    out->name = s->sig->name;
    out->type = s->shape.type;
    out->rank = s->shape.rank;
    memcpy(out->dims, s->shape.dims, (size_t)s->shape.rank * sizeof *out->dims);
    out->elements = (uint64_t)s->shape.elements;
    out->bytes = out->elements * hlo_type_size(s->shape.type);
    return TPURT_OK;
}

tpurt_status tpurt_get_input(tpurt *rt, uint32_t i, tpurt_tensor *out)
{
    return describe(rt, rt ? rt->inputs : NULL, tpurt_n_inputs(rt), i, out, "tpurt_get_input");
}

tpurt_status tpurt_get_output(tpurt *rt, uint32_t i, tpurt_tensor *out)
{
    return describe(rt, rt ? rt->outputs : NULL, tpurt_n_outputs(rt), i, out, "tpurt_get_output");
}

tpurt_status tpurt_trace(tpurt *rt, const char *path, uint64_t from, uint64_t to)
{
    if (!rt)
        return TPURT_E_ARG;
    const tpu_status s = tpu_trace_open(rt->dev, path, from, to);
    if (s != TPU_OK) /* the message names tpu_trace_open; a refused argument is the caller's */
        return rt_fail(rt, s == TPU_E_ARG ? TPURT_E_ARG : tpurt_status_from_driver(s), "%s",
                       tpu_last_error(rt->dev));
    rt->tracing = 1;
    return TPURT_OK;
}

/* ---------------------------------------------------------- statistics -- */

uint32_t tpurt_n_layers(const tpurt *rt) { return rt ? rt->n_lines : 0; }

tpurt_status tpurt_get_layer(tpurt *rt, uint32_t i, tpurt_layer *out)
{
    if (!rt)
        return TPURT_E_ARG;
    if (!out)
        return rt_fail(rt, TPURT_E_ARG, "tpurt_get_layer: NULL layer");
    if (i >= rt->n_lines)
        return rt_fail(rt, TPURT_E_ARG, "tpurt_get_layer: %u, but there are %u", i, rt->n_lines);
    const rt_layer *l = &rt->layers[rt->lines[i]];
    const tpub_op *op = l->op;
    *out = (tpurt_layer){
        .segment = l->segment,
        .index = l->index,
        .macs = l->cost.macs,
        .bytes = l->cost.bytes,
    };
    for (uint32_t j = rt->lines[i]; j < rt->n_layers; j++) {
        const rt_layer *o = &rt->layers[j];
        if (o->line != i)
            continue;
        out->submissions += o->submissions;
        out->cycles += o->cycles;
        out->ideal_cycles += o->ideal;
        out->bound_cycles += o->bound;
        out->iterations++;
    }
    if (!op) {
        rt_reduce_describe(rt, l, out);
        return TPURT_OK;
    }
    out->name = rt_op_name(op);
    out->fused = rt_op_fused(op);
    out->kind = op->kind;
    if (op->kind == TPUB_OP_GEMM) {
        out->m = op->gemm.m;
        out->k = op->gemm.k;
        out->n = op->gemm.n;
        out->flags = op->gemm.flags;
    } else {
        out->flags = op->conv.flags;
        out->conv = &op->conv;
        const tpu_conv2d cmd = rt_conv_command(&op->conv, 0);
        tpu_conv_out_size(&cmd, &out->oh, &out->ow);
    }
    return TPURT_OK;
}

tpurt_status tpurt_get_stats(tpurt *rt, tpurt_stats *out)
{
    if (!rt)
        return TPURT_E_ARG;
    if (!out)
        return rt_fail(rt, TPURT_E_ARG, "tpurt_get_stats: NULL stats");
    *out = rt->stats;
    return TPURT_OK;
}

/* The opcodes with host work into order, in tpurt_get_host_op's order; returns how many. */
static uint32_t host_ops(const tpurt *rt, int order[HLO_OP_COUNT_])
{
    const rt_host_work *w = &rt->host_work;
    uint32_t n = 0;
    for (int k = 0; k < HLO_OP_COUNT_; k++) {
        if (!w->count[k])
            continue;
        uint32_t at = n++; /* insertion: a handful of opcodes */
        for (; at > 0; at--) {
            const int p = order[at - 1];
            if (w->macs[p] > w->macs[k] || (w->macs[p] == w->macs[k] && w->bytes[p] >= w->bytes[k]))
                break;
            order[at] = p;
        }
        order[at] = k;
    }
    return n;
}

uint32_t tpurt_n_host_ops(const tpurt *rt)
{
    int order[HLO_OP_COUNT_];
    return rt ? host_ops(rt, order) : 0;
}

tpurt_status tpurt_get_host_op(tpurt *rt, uint32_t i, tpurt_host_op *out)
{
    if (!rt)
        return TPURT_E_ARG;
    if (!out)
        return rt_fail(rt, TPURT_E_ARG, "tpurt_get_host_op: NULL op");
    int order[HLO_OP_COUNT_];
    const uint32_t n = host_ops(rt, order);
    if (i >= n)
        return rt_fail(rt, TPURT_E_ARG, "tpurt_get_host_op: %u, but there are %u", i, n);
    const int k = order[i];
    *out = (tpurt_host_op){hlo_opcode_name((hlo_opcode)k), rt->host_work.count[k],
                           rt->host_work.macs[k], rt->host_work.bytes[k]};
    return TPURT_OK;
}

uint32_t tpurt_cores(const tpurt *rt) { return rt ? rt->n_replicas : 0; }

uint32_t tpurt_replicas(const tpurt *rt) { return rt ? (uint32_t)hlo_devices(rt->host) : 0; }

tpurt_status tpurt_get_core_stats(tpurt *rt, uint32_t core, tpurt_core_stats *out)
{
    if (!rt)
        return TPURT_E_ARG;
    if (!out)
        return rt_fail(rt, TPURT_E_ARG, "tpurt_get_core_stats: NULL stats");
    if (core >= rt->n_replicas)
        return rt_fail(rt, TPURT_E_ARG, "tpurt_get_core_stats: core %u, but there are %u", core,
                       rt->n_replicas);
    *out = rt->core_stats[core];
    return TPURT_OK;
}

tpurt_status tpurt_get_info(tpurt *rt, tpu_info *out)
{
    if (!rt)
        return TPURT_E_ARG;
    if (!out)
        return rt_fail(rt, TPURT_E_ARG, "tpurt_get_info: NULL info");
    *out = rt->info;
    return TPURT_OK;
}

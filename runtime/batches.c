/* batches.c - runs of the host program (tpurt_run) and several at once, one per core
 * (tpurt_run_batches).
 *
 * Side by side, each batch's host program runs in a thread of its own on its core's replica.
 * The device is simulated only while every one of them waits for it: then the scheduler (the
 * calling thread) runs it until a submission stops (tpu_wait_any) and hands its outcome to its
 * batch, which goes on with its host work until its next submission or its end. So a
 * submission starts at the device cycle where its batch's previous one stopped, whatever the
 * host threads' timing: the simulated cycles are the same from run to run. The driver is
 * called under one lock. The replicas of a data-parallel package meet at its all-reduces
 * there too: a batch waiting for its peers is not busy; the cores sum what they can
 * (allreduce.c), and the last to arrive combines the rest on the host for all. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "runtime/tpurt_internal.h"

struct rt_sched {
    pthread_mutex_t mu;
    pthread_cond_t idle;   /* the scheduler's: a batch started to wait, or ended */
    pthread_cond_t served; /* the batches': an outcome was delivered */
    uint32_t busy;         /* batches running host code */
    uint32_t live;         /* batches not ended */
    double device_seconds; /* the scheduler's time in tpu_wait_any */
    /* The all-reduce under way: the operands and result slots of the replicas that reached it
     * (by replica, NULL for the others), met when all n have; ended: the first replica that
     * ended, or -1. */
    pthread_cond_t met;
    uint32_t n, arrived;
    int ended;
    hlo_array *const *ops[TPUSIM_CORES_MAX];
    hlo_array **outs[TPUSIM_CORES_MAX];
    const char *failed[TPUSIM_CORES_MAX]; /* per replica released: NULL, or why it failed */
    int peer[TPUSIM_CORES_MAX];           /* that failure is a peer's (not the combination's) */
    int bad;                              /* the first replica that failed its part, or -1 */
    char why[512];
};

void rt_sched_lock(rt_replica *r)
{
    if (r->sched)
        pthread_mutex_lock(&r->sched->mu);
}

void rt_sched_unlock(rt_replica *r)
{
    if (r->sched)
        pthread_mutex_unlock(&r->sched->mu);
}

tpu_status rt_sched_wait(rt_replica *r)
{
    rt_sched *s = r->sched;
    if (!s)
        return tpu_wait_core(r->rt->dev, r->core, 0);
    r->waiting = 1;
    s->busy--;
    pthread_cond_signal(&s->idle);
    while (r->waiting)
        pthread_cond_wait(&s->served, &s->mu);
    return r->outcome;
}

/* Releases the replicas at the all-reduce's meeting, each failing with s->failed[i] (set by
 * the caller) when not NULL: those that wait (all but self, the caller if it arrived) are busy
 * again. */
static void release(rt_sched *s, int self)
{
    for (uint32_t i = 0; i < s->n; i++)
        if (s->ops[i]) {
            s->ops[i] = NULL;
            s->busy += (int)i != self;
        }
    s->arrived = 0;
    s->bad = -1;
    pthread_cond_broadcast(&s->met);
}

/* The last replica to arrive: combines the operands into replica 0's results and copies them
 * to the others'. */
static void combine(rt_sched *s, const tpurt *rt, const hlo_instr *in)
{
    hlo_error err;
    const char *why = NULL;
    if (hlo_all_reduce_combine(rt->host, RT_HOST_FILE, in, s->ops, (int)s->n, s->outs[0], &err)) {
        snprintf(s->why, sizeof s->why, "%s", err.msg);
        why = s->why;
    }
    for (uint32_t i = 1; i < s->n && !why; i++)
        for (int k = 0; k < in->n_operands && !why; k++) {
            const hlo_array *a = s->outs[0][k];
            if ((s->outs[i][k] = hlo_array_new(a->shape.type, a->shape.rank, a->shape.dims)))
                memcpy(s->outs[i][k]->data, a->data,
                       (size_t)a->shape.elements * hlo_type_size(a->shape.type));
            else
                why = "out of host memory";
        }
    for (uint32_t i = 0; i < s->n; i++) {
        s->failed[i] = why;
        s->peer[i] = 0;
    }
}

/* Replica r, holding the lock, meets its peers at all-reduce in: it waits, not busy, until all
 * have arrived. The last to arrive decides for all: if a replica failed its own part (failed;
 * its message in its msg), every one fails; else with host set it combines the operands on the
 * host. A replica that ended (by an error, or without reaching the all-reduce) releases them
 * with an error. Returns 0, or -1 with err filled and *peer set when a peer's failure is the
 * cause. */
static int meet(rt_sched *s, rt_replica *r, const hlo_instr *in, int host, hlo_array *const *ops,
                hlo_array **outs, int failed, int *peer, hlo_error *err)
{
    const uint32_t me = (uint32_t)(r - r->rt->replicas);
    *peer = 1;
    if (s->ended >= 0)
        return hlo_errorf(err, "replica %d ended without reaching it", s->ended);
    s->ops[me] = ops;
    s->outs[me] = outs;
    s->failed[me] = NULL;
    s->peer[me] = 0;
    if (failed && (s->bad < 0 || (int)me < s->bad))
        s->bad = (int)me;
    if (++s->arrived == s->n) {
        if (s->bad >= 0) {
            snprintf(s->why, sizeof s->why, "replica %d failed at it", s->bad);
            for (uint32_t i = 0; i < s->n; i++) {
                s->failed[i] = s->why;
                s->peer[i] = 1;
            }
        } else if (host) {
            combine(s, r->rt, in);
        }
        release(s, (int)me);
    } else {
        s->busy--;
        pthread_cond_signal(&s->idle);
        while (s->ops[me])
            pthread_cond_wait(&s->met, &s->mu);
    }
    *peer = s->peer[me];
    const char *why = s->failed[me];
    return why ? hlo_errorf(err, "%s", why) : 0;
}

/* hlo_eval_hooks.all_reduce: meets the other replicas (tpurt_run_batches); the sums on the
 * cores (allreduce.c: each replica writes its operands, they meet, each core sums its slice,
 * they meet again, each reads its sums back) or on the host. */
static int all_reduce_hook(void *ctx, const hlo_instr *in, hlo_array *const *operands,
                           int n_operands, hlo_array **outs, int n_outs, hlo_error *err)
{
    rt_replica *r = ctx;
    rt_sched *s = r->sched;
    (void)n_outs;
    if (hlo_all_reduce_group_size(r->rt->host, in) == 1) { /* each replica alone */
        for (int k = 0; k < n_operands; k++) {
            const hlo_array *a = operands[k];
            if (!(outs[k] = hlo_array_new(a->shape.type, a->shape.rank, a->shape.dims)))
                return hlo_errorf(err, "out of host memory");
            memcpy(outs[k]->data, a->data,
                   (size_t)a->shape.elements * hlo_type_size(a->shape.type));
        }
        return 0;
    }
    const int layer = rt_reduce_layer(r->rt, in);
    tpurt_status own = TPURT_OK; /* this replica's device work */
    int peer = 0;
    pthread_mutex_lock(&s->mu);
    if (layer >= 0)
        own = rt_reduce_write(r, (uint32_t)layer, operands);
    int rc = meet(s, r, in, layer < 0, operands, outs, own != TPURT_OK, &peer, err);
    if (!rc && layer >= 0) {
        pthread_mutex_unlock(&s->mu); /* the submission takes the lock */
        own = rt_reduce_run(r, (uint32_t)layer);
        pthread_mutex_lock(&s->mu);
        rc = meet(s, r, in, 0, operands, outs, own != TPURT_OK, &peer, err);
        if (!rc && (own = rt_reduce_read(r, (uint32_t)layer, outs)) != TPURT_OK)
            rc = hlo_errorf(err, "its sums could not be read");
    }
    if (own != TPURT_OK)
        r->hook_status = own; /* its message in r->msg */
    r->peer_failed = rc && peer && own == TPURT_OK;
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* The host program's results against the output signatures, copied into the caller's buffers
 * once all of them are right. */
static tpurt_status keep_results(rt_replica *r, hlo_array **outs, int n_outs, void *const *outputs)
{
    const tpurt *rt = r->rt;
    char s1[160], s2[200];
    if ((uint32_t)n_outs != rt->pkg->n_outputs)
        return rp_fail(r, TPURT_E_PACKAGE,
                       "batch %llu: " RT_HOST_FILE ": %d results, but the "
                       "package has %u outputs",
                       (unsigned long long)r->batch, n_outs, rt->pkg->n_outputs);
    for (uint32_t j = 0; j < rt->pkg->n_outputs; j++)
        if (!hlo_shape_equal(&outs[j]->shape, &rt->outputs[j].shape))
            return rp_fail(r, TPURT_E_PACKAGE,
                           "batch %llu: " RT_HOST_FILE ": result %u is %s, "
                           "but output %u is %s",
                           (unsigned long long)r->batch, j,
                           hlo_shape_str(&outs[j]->shape, s1, sizeof s1), j,
                           rt_sig_str(&rt->outputs[j], s2, sizeof s2));
    for (uint32_t j = 0; j < rt->pkg->n_outputs; j++) {
        const size_t bytes = (size_t)outs[j]->shape.elements * hlo_type_size(outs[j]->shape.type);
        if (bytes)
            memcpy(outputs[j], outs[j]->data, bytes);
    }
    return TPURT_OK;
}

/* hlo_eval_hooks.evaluated: the host program's work (tpurt_host_op). */
static void count_host_work(void *ctx, const hlo_computation *c, const hlo_instr *in)
{
    switch (in->opcode) {
    case HLO_OP_CONSTANT:
    case HLO_OP_TUPLE:
    case HLO_OP_GET_TUPLE_ELEMENT:
    case HLO_OP_CALL:
    case HLO_OP_FUSION:
    case HLO_OP_WHILE:
    case HLO_OP_CONDITIONAL:
    case HLO_OP_CUSTOM_CALL: return;
    case HLO_OP_ALL_REDUCE: /* the cores' work when they sum it: its own layer */
        if (rt_reduce_layer(((rt_replica *)ctx)->rt, in) >= 0)
            return;
        break;
    default: break;
    }
    rt_host_work *w = &((rt_replica *)ctx)->host_work;
    const hlo_shape *s = &in->shape;
    uint64_t bytes = 0;
    for (int i = 0; i < (s->type == HLO_TUPLE ? s->n_tuple : 1); i++) {
        const hlo_shape *a = s->type == HLO_TUPLE ? &s->tuple[i] : s;
        bytes += (uint64_t)a->elements * hlo_type_size(a->type);
    }
    w->count[in->opcode]++;
    w->macs[in->opcode] += hlo_macs(c, in);
    w->bytes[in->opcode] += bytes;
}

tpurt_status rt_run_one(rt_replica *r, const void *const *inputs, hlo_array ***outs, int *n_outs)
{
    tpurt *rt = r->rt;
    const uint32_t n_inputs = rt->pkg->n_inputs;
    for (uint32_t i = 0; i < n_inputs; i++)
        r->params[i].data = (void *)inputs[i]; /* the evaluator only reads its parameters */
    const hlo_eval_hooks hooks = {.ctx = r,
                                  .custom_call = rt_segment_hook,
                                  .evaluated = count_host_work,
                                  .all_reduce = all_reduce_hook};
    memset(&r->host_work, 0, sizeof r->host_work);
    hlo_error err;
    r->hook_status = TPURT_OK;
    r->peer_failed = 0;
    r->segment_seconds = 0;
    const double t0 = tpuio_seconds();
    tpurt_status st = TPURT_OK;
    if (hlo_eval_with(rt->host, RT_HOST_FILE, r->param_list, (int)n_inputs, &hooks, outs, n_outs,
                      &err))
        /* A segment's failure carries its own status and message. */
        st = r->hook_status != TPURT_OK ? r->hook_status
                                        : rp_fail(r, TPURT_E_EVAL, "batch %llu: %s",
                                                  (unsigned long long)r->batch, err.msg);
    const double host = tpuio_seconds() - t0 - r->segment_seconds;
    for (uint32_t i = 0; i < n_inputs; i++)
        r->params[i].data = NULL;
    rt_sched_lock(r);
    rt->stats.host_seconds += host;
    for (int k = 0; k < HLO_OP_COUNT_; k++) {
        rt->host_work.count[k] += r->host_work.count[k];
        rt->host_work.macs[k] += r->host_work.macs[k];
        rt->host_work.bytes[k] += r->host_work.bytes[k];
    }
    rt_sched_unlock(r);
    return st;
}

static tpurt_status check_buffers(tpurt *rt, const void *const *bufs, uint32_t n, uint32_t want,
                                  const char *what)
{
    if (n != want)
        return rt_fail(rt, TPURT_E_ARG, "tpurt_run: %u %s given, but the package has %u", n, what,
                       want);
    for (uint32_t i = 0; i < n; i++)
        if (!bufs || !bufs[i])
            return rt_fail(rt, TPURT_E_ARG, "tpurt_run: %s %u is NULL", what, i);
    return TPURT_OK;
}

typedef struct {
    rt_replica *r;
    const void *const *inputs;
    void *const *outputs;
    hlo_array **outs; /* the host program's results */
    int n_outs;
    tpurt_status st;
} batch_job;

static void *batch_thread(void *arg)
{
    batch_job *j = arg;
    j->st = rt_run_one(j->r, j->inputs, &j->outs, &j->n_outs);
    rt_sched *s = j->r->sched;
    pthread_mutex_lock(&s->mu);
    if (s->ended < 0)
        s->ended = (int)(j->r - j->r->rt->replicas);
    if (s->arrived) { /* its peers at an all-reduce wait in vain */
        snprintf(s->why, sizeof s->why, "replica %d ended without reaching it", s->ended);
        for (uint32_t i = 0; i < s->n; i++) {
            s->failed[i] = s->why;
            s->peer[i] = 1;
        }
        release(s, -1);
    }
    s->busy--;
    s->live--;
    pthread_cond_signal(&s->idle);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* The scheduler: runs the device whenever every live batch waits for it, and hands the outcome
 * of the submission that stopped to its batch. */
static tpurt_status run_side_by_side(tpurt *rt, batch_job *jobs, uint32_t n)
{
    rt_sched s = {.busy = n, .live = n, .n = n, .ended = -1, .bad = -1};
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.idle, NULL);
    pthread_cond_init(&s.served, NULL);
    pthread_cond_init(&s.met, NULL);
    pthread_t threads[TPUSIM_CORES_MAX];
    uint32_t started = 0;
    tpurt_status st = TPURT_OK;
    pthread_mutex_lock(&s.mu);
    for (; started < n; started++) {
        jobs[started].r->sched = &s;
        if (pthread_create(&threads[started], NULL, batch_thread, &jobs[started])) {
            st = rt_fail(rt, TPURT_E_NOMEM, "cannot start the thread of batch %llu",
                         (unsigned long long)jobs[started].r->batch);
            s.busy -= n - started;
            s.live -= n - started;
            break;
        }
    }
    for (;;) {
        while (s.busy)
            pthread_cond_wait(&s.idle, &s.mu);
        if (!s.live)
            break;
        uint32_t core = 0;
        const double t0 = tpuio_seconds();
        const tpu_status outcome = tpu_wait_any(rt->dev, 0, &core);
        s.device_seconds += tpuio_seconds() - t0;
        for (uint32_t i = 0; i < started; i++)
            if (jobs[i].r->core == core && jobs[i].r->waiting) {
                /* The failure's message, before another call replaces the device's. */
                if (outcome != TPU_OK)
                    snprintf(jobs[i].r->driver_msg, sizeof jobs[i].r->driver_msg, "%s",
                             tpu_last_error(rt->dev));
                jobs[i].r->outcome = outcome;
                jobs[i].r->waiting = 0;
                s.busy++;
            }
        pthread_cond_broadcast(&s.served);
    }
    pthread_mutex_unlock(&s.mu);
    for (uint32_t i = 0; i < started; i++) {
        pthread_join(threads[i], NULL);
        jobs[i].r->sched = NULL;
    }
    rt->stats.device_seconds += s.device_seconds;
    pthread_cond_destroy(&s.met);
    pthread_cond_destroy(&s.served);
    pthread_cond_destroy(&s.idle);
    pthread_mutex_destroy(&s.mu);
    return st;
}

tpurt_status tpurt_run_batches(tpurt *rt, uint32_t n_batches, const void *const *const *inputs,
                               uint32_t n_inputs, void *const *const *outputs, uint32_t n_outputs)
{
    if (!rt)
        return TPURT_E_ARG;
    if (n_batches == 0 || n_batches > rt->n_replicas || !inputs || !outputs)
        return rt_fail(rt, TPURT_E_ARG, "tpurt_run_batches: %u batches on %u cores%s", n_batches,
                       rt->n_replicas, inputs && outputs ? "" : ", NULL buffers");
    if (tpurt_replicas(rt) > 1 && n_batches != tpurt_replicas(rt))
        return rt_fail(rt, TPURT_E_ARG,
                       "tpurt_run_batches: %u batches, but the package runs as %u replicas",
                       n_batches, tpurt_replicas(rt));
    tpurt_status st = TPURT_OK;
    for (uint32_t i = 0; i < n_batches && st == TPURT_OK; i++) {
        st = check_buffers(rt, inputs[i], n_inputs, rt->pkg->n_inputs, "inputs");
        if (st == TPURT_OK)
            st = check_buffers(rt, (const void *const *)outputs[i], n_outputs, rt->pkg->n_outputs,
                               "outputs");
    }
    if (st != TPURT_OK)
        return st;
    batch_job jobs[TPUSIM_CORES_MAX];
    for (uint32_t i = 0; i < n_batches; i++) {
        rt->replicas[i].batch = rt->batch + i;
        jobs[i] = (batch_job){&rt->replicas[i], inputs[i], outputs[i], NULL, 0, TPURT_OK};
    }
    const uint64_t c0 = tpu_cycle(rt->dev);
    if (n_batches == 1)
        jobs[0].st = rt_run_one(jobs[0].r, jobs[0].inputs, &jobs[0].outs, &jobs[0].n_outs);
    else
        st = run_side_by_side(rt, jobs, n_batches);
    rt->stats.device_cycles += tpu_cycle(rt->dev) - c0;
    /* A batch's own failure before one its peers caused at an all-reduce. */
    for (int peer = 0; peer < 2; peer++)
        for (uint32_t i = 0; i < n_batches && st == TPURT_OK; i++)
            if (jobs[i].st != TPURT_OK && jobs[i].r->peer_failed == peer) {
                st = jobs[i].st;
                memcpy(rt->msg, jobs[i].r->msg, sizeof rt->msg);
            }
    if (rt->tracing) {
        rt->tracing = 0;
        const tpu_status ts = tpu_trace_close(rt->dev);
        rt->stats.trace_cycles = tpu_trace_cycles(rt->dev);
        if (st == TPURT_OK && ts != TPU_OK) {
            char where[48];
            snprintf(where, sizeof where, "batch %llu: trace", (unsigned long long)rt->batch);
            st = rt_driver_fail(rt, ts, where);
        }
    }
    /* The outputs only when the whole call succeeds. */
    for (uint32_t i = 0; i < n_batches && st == TPURT_OK; i++)
        if ((st = keep_results(jobs[i].r, jobs[i].outs, jobs[i].n_outs, jobs[i].outputs)) !=
            TPURT_OK)
            memcpy(rt->msg, jobs[i].r->msg, sizeof rt->msg);
    for (uint32_t i = 0; i < n_batches; i++)
        hlo_arrays_free(jobs[i].outs, jobs[i].n_outs);
    rt->stats.runs += st == TPURT_OK ? n_batches : 0;
    rt->batch += n_batches;
    return st;
}

tpurt_status tpurt_run(tpurt *rt, const void *const *inputs, uint32_t n_inputs,
                       void *const *outputs, uint32_t n_outputs)
{
    return tpurt_run_batches(rt, 1, &inputs, n_inputs, &outputs, n_outputs);
}

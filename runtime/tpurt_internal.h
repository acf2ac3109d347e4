/* tpurt_internal.h - what tpurt.c (opening, runs, statistics), segment.c (the device
 * segments), batches.c (runs side by side) and allreduce.c (the cores' all-reduces) share; not
 * part of the runtime's interface. */
#ifndef TPU_RUNTIME_TPURT_INTERNAL_H
#define TPU_RUNTIME_TPURT_INTERNAL_H

#include "io/tpuio.h"
#include "runtime/tpurt.h"

/* Where the host program's messages are located: "host program:4:3: ..." */
#define RT_HOST_FILE "host program"

/* The host program's work per opcode (tpurt_host_op). */
typedef struct {
    uint64_t count[HLO_OP_COUNT_], macs[HLO_OP_COUNT_], bytes[HLO_OP_COUNT_];
} rt_host_work;

/* An input or output signature with its shape as the evaluator gives it. */
typedef struct {
    const tpub_sig *sig;
    hlo_shape shape;
} rt_sig;

/* One operation of the package (a GEMM or a CONV2D), or an all-reduce the cores sum, and what
 * its submissions measured. */
typedef struct {
    const tpub_op *op;           /* NULL for an all-reduce */
    const hlo_instr *all_reduce; /* the host program's, after the package's operations */
    uint32_t segment, index;
    tpu_cost cost; /* of one submission */
    uint64_t submissions, cycles;
    double ideal, bound; /* cost.ideal_cycles and cost.bound_cycles summed over submissions */
    uint32_t line;       /* the report's layer (tpurt_layer) it counts to */
} rt_layer;

typedef struct rt_sched rt_sched;

/* A core's share of the runtime: where its arena lies, a command stream per operation with its
 * operands there, and the batch it runs. Replica 0 (core 0) is the only one on one core. */
typedef struct {
    tpurt *rt;
    uint32_t core;
    uint32_t consts;          /* device address of arena offset 0: the constants it reads */
    uint32_t acts;            /* device address of arena offset const_bytes: its activations */
    tpu_stream **streams;     /* one per layer (an all-reduce's: NULL for an empty slice) */
    uint32_t reduce;          /* device address of its all-reduces' buffer (allreduce.c) */
    uint8_t *staging;         /* room for the largest transfer's device bytes */
    hlo_array *params;        /* views of the caller's input buffers during a run */
    hlo_array **param_list;   /* &params[i], as the evaluator takes them */
    uint64_t batch;           /* the batch it runs */
    tpurt_status hook_status; /* a segment's failure during the run (its message in msg) */
    double segment_seconds;   /* host time inside segments, to leave out of host_seconds */
    rt_host_work host_work;   /* its run's, added to the runtime's when it ends */
    rt_sched *sched;          /* tpurt_run_batches's scheduler, or NULL (it waits itself) */
    int waiting;              /* sched: its submission is pending */
    tpu_status outcome;       /* sched: its submission's, delivered by the scheduler */
    int peer_failed;          /* its run failed at an all-reduce that a peer did not reach */
    char driver_msg[1024];    /* the driver's message of its last failed call */
    char msg[1024];
} rt_replica;

struct tpurt {
    const tpub_package *pkg;
    tpub_package *owned; /* tpurt_load's package, freed with the runtime */
    hlo_module *host;    /* the host program, parsed and checked */
    rt_sig *inputs, *outputs;
    tpu_device *dev;
    tpu_info info;
    uint32_t arena;   /* device address of replica 0's arena (offset 0) */
    rt_layer *layers; /* segment by segment */
    uint32_t n_layers;
    uint32_t *first_layer; /* per segment: its first operation in layers (n_segments + 1; the
                            * last, the first all-reduce's) */
    uint32_t *lines;       /* per report layer (tpurt_layer): its first operation in layers */
    uint32_t n_lines;
    uint64_t reduce_bytes; /* of each replica's all-reduce buffer: the largest all-reduce's */
    rt_replica *replicas;  /* one per core */
    uint32_t n_replicas;
    uint64_t batch; /* the run under way, or the next one */
    int tracing;    /* tpurt_trace armed a trace: closed when the run ends */
    tpurt_stats stats;
    tpurt_core_stats core_stats[TPUSIM_CORES_MAX];
    rt_host_work host_work;
    char msg[1024];
};

/* tpurt.c */
/* Sets rt's message; returns s. */
tpurt_status rt_fail(tpurt *rt, tpurt_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* rt_fail with "<where>: <the driver's message>". */
tpurt_status rt_driver_fail(tpurt *rt, tpu_status s, const char *where);
/* "'x' f32[4,784]" into buf. */
const char *rt_sig_str(const rt_sig *s, char *buf, size_t size);
/* A package string, "" for NULL (tpub.h writes NULL strings as empty ones). */
static inline const char *rt_name(const char *s) { return s ? s : ""; }
/* An operation's name and fused ops, and what its kind is called in messages. */
static inline const char *rt_op_name(const tpub_op *op)
{
    return rt_name(op->kind == TPUB_OP_CONV2D ? op->conv.name : op->gemm.name);
}
static inline const char *rt_op_fused(const tpub_op *op)
{
    return rt_name(op->kind == TPUB_OP_CONV2D ? op->conv.fused : op->gemm.fused);
}
static inline const char *rt_op_kind(const tpub_op *op)
{
    return op->kind == TPUB_OP_CONV2D ? "conv2d" : "gemm";
}

/* The failure of a core's run: its message in r->msg. */
tpurt_status rp_fail(rt_replica *r, tpurt_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The replicas of every core: arenas, constants and streams (after the device is open). */
tpurt_status rt_replicas_init(tpurt *rt, int weights_per_core);
void rt_replicas_free(tpurt *rt);
/* The command of a convolution with its operands in buffer buf (statistics and streams). */
tpu_conv2d rt_conv_command(const tpub_conv *v, uint32_t buf);
/* Evaluates one batch on replica r: the host program on its inputs; its results in *outs. */
tpurt_status rt_run_one(rt_replica *r, const void *const *inputs, hlo_array ***outs, int *n_outs);

/* batches.c: tpurt_run_batches's scheduler. With r->sched NULL the lock is none and the wait is
 * tpu_wait_core on r's core. */
void rt_sched_lock(rt_replica *r);
void rt_sched_unlock(rt_replica *r);
/* After a submission on r's core, with the lock held: its outcome. */
tpu_status rt_sched_wait(rt_replica *r);

/* allreduce.c: the all-reduces the cores sum, layers after the package's operations. */
/* How many the host program has. */
uint32_t rt_reduce_count(tpurt *rt);
/* Their layers (rt->layers has room) and the buffer size. */
void rt_reduce_layers(tpurt *rt);
/* The layer of all-reduce in, or -1 when the host combines it. */
int rt_reduce_layer(const tpurt *rt, const hlo_instr *in);
/* What tpurt_get_layer says of all-reduce layer l besides its counts. */
void rt_reduce_describe(const tpurt *rt, const rt_layer *l, tpurt_layer *out);
/* Each replica's buffer and streams, and each layer's cost: the whole all-reduce's (after the
 * device and the replicas' other streams). */
tpurt_status rt_reduce_setup(tpurt *rt);
/* Replica r's part in layer's all-reduce, with the scheduler's lock held for write and read
 * and not for run: its operands into its buffer; its core's slice of the sums (once every
 * replica has written); its sums back into new arrays outs (once every core is done). A
 * failure's message is in r->msg. */
tpurt_status rt_reduce_write(rt_replica *r, uint32_t layer, hlo_array *const *ops);
tpurt_status rt_reduce_run(rt_replica *r, uint32_t layer);
tpurt_status rt_reduce_read(rt_replica *r, uint32_t layer, hlo_array **outs);

/* segment.c */
/* Submits replica r's stream of layer on its core and waits for it, adding what it measured
 * (cost: of this submission) to the layer, the core and the totals; the driver's failure
 * message in r->driver_msg. */
tpu_status rt_submit(rt_replica *r, uint32_t layer, const tpu_cost *cost);
/* The segment a custom-call instruction of computation c runs, once its target and the shapes
 * of its operands and results agree with the segment; else NULL with the message (located in
 * the host program) in rt. */
const tpub_segment *rt_segment_of(tpurt *rt, const hlo_computation *c, const hlo_instr *in);
/* The layers of every segment, once the package is checked, and the report's layers: an
 * operation counts to the first of the same name, kind and flags (a loop's dot is one operation
 * per unrolled iteration, each named after the body's dot), else to its own. */
tpurt_status rt_segments_init(tpurt *rt);
/* Bytes of the largest transfer: each replica's staging buffer. */
uint64_t rt_staging_bytes(const tpurt *rt);
/* The evaluator's custom-call hook (hlo_eval_hooks) with a replica as ctx: runs the segment on
 * its core. */
int rt_segment_hook(void *ctx, const hlo_instr *in, hlo_array *const *operands, int n_operands,
                    hlo_array **outs, int n_outs, hlo_error *err);

#endif

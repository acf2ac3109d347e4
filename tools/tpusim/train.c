/* train.c - tpusim train: a compiled training step (a JAX or HLO function whose outputs update
 * some of its inputs, runtime/tpurt.h tpurt_output_updates) run over a dataset. The inputs an
 * output updates are the state (--state, or --init's start); the others, in order, are
 * the data and the labels, one batch per step; the outputs that update inputs become the next
 * step's state, the one f32 scalar output that updates nothing is the loss. A package of R
 * replicas (a data-parallel step) runs on a chip of R cores, each replica on its slice of a
 * global batch of R batches. docs/run.md. */
#define _POSIX_C_SOURCE 200809L /* sigaction */
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "io/npy.h"
#include "io/safetensors.h"
#include "tools/common/run.h"
#include "tools/tpusim/train.h"

const char usage_train[] =
    "usage: tpusim train STEP.tpub --data X.npy --labels Y.npy [options]\n"
    "  Trains a compiled training step: the inputs its outputs update are the state, the\n"
    "  others the data and the labels (leading dimension the batch); the f32 scalar output\n"
    "  that updates nothing is the loss.\n"
    "  --data X.npy, --labels Y.npy  the dataset: [rows, ...] each (integer or float)\n"
    "  --batch B           rows per step: checked against the package's batch\n"
    "  --epochs E          passes over the dataset (default 1), or --steps S steps\n"
    "  --state F.st        the initial state (safetensors by input name), or\n"
    "  --init uniform|zeros  a start: zeros, or each matrix uniform in +-1/sqrt(its first\n"
    "                      dimension) with the rest zero (optimizer state wants --state)\n"
    "  --seed S            shuffle (and uniform start) seed (default 0)\n"
    "  --save F.st         the final state (safetensors by input name)\n"
    "  --loss-csv F        step,epoch,loss per step; --loss-json F the same as a list\n"
    "  --log-every K       print the loss every K steps (default 10)\n"
    "  --eval PREDICT.tpub --test-data X.npy --test-labels Y.npy\n"
    "                      test accuracy after each epoch and at the end: PREDICT's inputs\n"
    "                      are state by name and the data, its output the logits [b, classes]\n"
    "  --cores C           a package of C replicas (a data-parallel step) on a chip of C\n"
    "                      cores: each step's C x B rows split in order, replica r taking\n"
    "                      rows [r B, (r + 1) B); the replicas' states checked identical\n"
    "  --array N, --mem-latency, --mem-bandwidth, --max-cycles C, --quiet\n";

enum {
    TR_DATA = CLI_OPT_OWN,
    TR_LABELS,
    TR_BATCH,
    TR_EPOCHS,
    TR_STEPS,
    TR_STATE,
    TR_INIT,
    TR_SEED,
    TR_SAVE,
    TR_CSV,
    TR_JSON,
    TR_LOG,
    TR_EVAL,
    TR_TEST_DATA,
    TR_TEST_LABELS,
};

typedef struct {
    cli_run_options dev;
    const char *package, *data, *labels, *state, *save, *csv, *json;
    const char *eval, *test_data, *test_labels;
    uint64_t batch, epochs, steps, seed, log_every;
    int init, uniform; /* --init given; uniform, else zeros */
} train_options;

static volatile sig_atomic_t interrupted;
static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* splitmix64: a reproducible stream from --seed. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int parse(int argc, char **argv, train_options *o)
{
    static const struct option opts[] = {
        CLI_DEVICE_OPTIONS,
        {"max-cycles", required_argument, NULL, CLI_OPT_MAX_CYCLES},
        {"quiet", no_argument, NULL, CLI_OPT_QUIET},
        {"data", required_argument, NULL, TR_DATA},
        {"labels", required_argument, NULL, TR_LABELS},
        {"batch", required_argument, NULL, TR_BATCH},
        {"epochs", required_argument, NULL, TR_EPOCHS},
        {"steps", required_argument, NULL, TR_STEPS},
        {"state", required_argument, NULL, TR_STATE},
        {"init", required_argument, NULL, TR_INIT},
        {"seed", required_argument, NULL, TR_SEED},
        {"save", required_argument, NULL, TR_SAVE},
        {"loss-csv", required_argument, NULL, TR_CSV},
        {"loss-json", required_argument, NULL, TR_JSON},
        {"log-every", required_argument, NULL, TR_LOG},
        {"eval", required_argument, NULL, TR_EVAL},
        {"test-data", required_argument, NULL, TR_TEST_DATA},
        {"test-labels", required_argument, NULL, TR_TEST_LABELS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *help = "tpusim train --help";
    o->log_every = 10;
    int c;
    while ((c = cli_next(argc, argv, "h", opts, help)) != -1) {
        uint64_t *num = NULL;
        const char **str = NULL;
        switch (c) {
        case 'h': return -1;
        case '?': return EXIT_USAGE;
        case TR_DATA: str = &o->data; break;
        case TR_LABELS: str = &o->labels; break;
        case TR_STATE: str = &o->state; break;
        case TR_INIT:
            if (strcmp(optarg, "uniform") && strcmp(optarg, "zeros"))
                return cli_bad_value("--init", optarg, "uniform or zeros");
            o->uniform = !strcmp(optarg, "uniform");
            o->init = 1;
            break;
        case TR_SAVE: str = &o->save; break;
        case TR_CSV: str = &o->csv; break;
        case TR_JSON: str = &o->json; break;
        case TR_EVAL: str = &o->eval; break;
        case TR_TEST_DATA: str = &o->test_data; break;
        case TR_TEST_LABELS: str = &o->test_labels; break;
        case TR_BATCH: num = &o->batch; break;
        case TR_EPOCHS: num = &o->epochs; break;
        case TR_STEPS: num = &o->steps; break;
        case TR_LOG: num = &o->log_every; break;
        case TR_SEED:
            if (cli_u64(optarg, 0, UINT64_MAX, &o->seed))
                return cli_bad_value("--seed", optarg, "a whole number");
            break;
        default: {
            const int rc = cli_run_option(c, optarg, &o->dev);
            if (rc)
                return rc;
        }
        }
        if (str)
            *str = optarg;
        if (num && cli_u64(optarg, 1, UINT32_MAX, num))
            return cli_bad_limit(argv[optind - 1], optarg, "a count", UINT32_MAX);
    }
    if (optind < argc)
        o->package = argv[optind++];
    if (optind < argc)
        return cli_unexpected(argv[optind], help);
    if (!o->package || !o->data || !o->labels)
        return cli_fail(EXIT_USAGE, "usage", "needs STEP.tpub, --data and --labels (see %s)", help);
    if ((o->eval != NULL) != (o->test_data != NULL) ||
        (o->eval != NULL) != (o->test_labels != NULL))
        return cli_fail(EXIT_USAGE, "usage", "--eval, --test-data and --test-labels go together");
    if (o->epochs && o->steps)
        return cli_fail(EXIT_USAGE, "usage", "--epochs and --steps exclude each other");
    if ((o->state != NULL) == o->init)
        return cli_fail(EXIT_USAGE, "usage",
                        "the initial state: --state F.safetensors or --init uniform|zeros, one of"
                        " them");
    if (!o->steps && !o->epochs)
        o->epochs = 1;
    return 0;
}

/* The safetensors dtype of a signature's element type (every one tpub_sig_type admits). */
static st_dtype st_of(hlo_type t)
{
    switch (t) {
    case HLO_S32: return ST_I32;
    case HLO_S64: return ST_I64;
    case HLO_S8: return ST_I8;
    case HLO_U8: return ST_U8;
    case HLO_BF16: return ST_BF16;
    case HLO_F16: return ST_F16;
    default: return ST_F32;
    }
}

/* The state inputs from --state (each by name, of its dtype and shape), else --init's start in
 * the zeroed buffers: uniform in +-1/sqrt(fan-in) for a float matrix (fan-in its first
 * dimension), from the seed. */
static int load_state(const train_options *o, tpurt *rt, const int *is_state, void **buf,
                      uint64_t *rng)
{
    st_file f = {0};
    char err[512], s[128];
    if (o->state && st_load(o->state, &f, err, sizeof err))
        return cli_fail(EXIT_USAGE, o->state, "%s", err);
    int rc = 0;
    uint32_t found = 0;
    for (uint32_t i = 0; i < tpurt_n_inputs(rt) && !rc; i++) {
        if (!is_state[i])
            continue;
        tpurt_tensor t;
        tpurt_get_input(rt, i, &t);
        if (!o->state) {
            const double bound = o->uniform && t.rank >= 2 ? 1.0 / sqrt((double)t.dims[0]) : 0.0;
            for (uint64_t e = 0; e < t.elements && hlo_is_float(t.type) && bound > 0; e++)
                run_sig_set(t.type, buf[i], e,
                            (float)(bound * ((double)(rng_next(rng) >> 11) / 0x1p52 - 1.0)));
            continue;
        }
        const st_tensor *st = st_find(&f, t.name);
        if (!st) {
            rc = cli_fail(EXIT_USAGE, o->state, "no tensor '%s' (state input %s)", t.name,
                          run_sig_str(&t, s, sizeof s));
            break;
        }
        found++;
        int ok = st->dtype == st_of(t.type) && st->rank == t.rank;
        for (int d = 0; ok && d < t.rank; d++)
            ok = st->shape[d] == t.dims[d];
        char shape[160] = "[";
        for (int d = 0; d < st->rank; d++)
            snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%" PRId64,
                     d ? ", " : "", st->shape[d]);
        if (!ok)
            rc = cli_fail(EXIT_USAGE, o->state, "tensor '%s' is %s %s], not input %s", t.name,
                          st_dtype_name(st->dtype), shape, run_sig_str(&t, s, sizeof s));
        else
            memcpy(buf[i], st->data, t.bytes);
    }
    if (!rc && o->state && found != (uint32_t)f.n_tensors)
        for (int k = 0; k < f.n_tensors; k++) {
            int known = 0;
            for (uint32_t i = 0; i < tpurt_n_inputs(rt); i++) {
                tpurt_tensor t;
                tpurt_get_input(rt, i, &t);
                known |= is_state[i] && !strcmp(t.name, f.tensors[k].name);
            }
            if (!known) {
                rc = cli_fail(EXIT_USAGE, o->state, "tensor '%s' is no state input of the package",
                              f.tensors[k].name);
                break;
            }
        }
    st_free(&f);
    return rc;
}

static int save_state(const char *path, tpurt *rt, const int *is_state, void **buf)
{
    const uint32_t n = tpurt_n_inputs(rt);
    st_tensor *ts = calloc(n, sizeof *ts);
    if (!ts)
        return cli_fail(EXIT_USAGE, "memory", "out of host memory");
    st_file f = {0};
    f.tensors = ts;
    for (uint32_t i = 0; i < n; i++) {
        if (!is_state[i])
            continue;
        tpurt_tensor t;
        tpurt_get_input(rt, i, &t);
        st_tensor *s = &ts[f.n_tensors++];
        s->name = (char *)t.name;
        s->dtype = st_of(t.type);
        s->rank = t.rank;
        for (int d = 0; d < t.rank; d++)
            s->shape[d] = t.dims[d];
        s->data = buf[i];
    }
    char err[512];
    const int rc = st_save(path, &f, err, sizeof err) ? cli_fail(EXIT_USAGE, path, "%s", err) : 0;
    free(ts);
    return rc;
}

/* --loss-csv and --loss-json, all or nothing. */
static int save_losses(const train_options *o, const float *loss, uint64_t steps,
                       uint64_t per_epoch)
{
    tpuio_staged files[2];
    int n = 0, rc = 0;
    if (o->csv) {
        char *text = malloc(64 * (steps + 1));
        if (!text)
            return cli_fail(EXIT_USAGE, "memory", "out of host memory");
        size_t len = (size_t)sprintf(text, "step,epoch,loss\n");
        for (uint64_t i = 0; i < steps; i++)
            len += (size_t)sprintf(text + len, "%" PRIu64 ",%" PRIu64 ",%.9g\n", i + 1,
                                   i / per_epoch + 1, (double)loss[i]);
        rc = cli_stage(&files[n], o->csv, text, len);
        n += !rc;
        free(text);
    }
    if (o->json && !rc) {
        json_t *list = json_array();
        for (uint64_t i = 0; list && i < steps; i++)
            json_array_append_new(list, json_pack("{sI sI so}", "step", (json_int_t)i + 1, "epoch",
                                                  (json_int_t)(i / per_epoch + 1), "loss",
                                                  cli_json_real(loss[i])));
        rc = cli_stage_json(&files[n], o->json, list);
        n += !rc;
    }
    return cli_commit(files, n, rc);
}

/* Where a step's work ran: the device's share of its MACs, the all-reduces the cores sum, and
 * the host program's own work (the loss, the element-wise gradient work, the optimizer's
 * update), per step. */
static void print_placement(tpurt *rt, uint64_t steps)
{
    uint64_t device = 0, host = 0, ops = 0, bytes = 0;
    char g1[32], g2[32], g3[32], g4[32];
    for (uint32_t i = 0; i < tpurt_n_layers(rt); i++) {
        tpurt_layer l;
        tpurt_get_layer(rt, i, &l); /* i is in range: cannot fail */
        device += l.macs * l.submissions;
        if (l.kind == TPURT_ALL_REDUCE)
            printf(CLI_LABEL "'%s', %s elements: %s cycles per step on its %u cores (%s each), "
                             "%s bytes through the memory port\n",
                   "all-reduce:", l.name, cli_group(g1, l.n), cli_group(g2, l.cycles / steps), l.m,
                   cli_group(g3, l.cycles / steps / l.m), cli_group(g4, l.bytes));
    }
    for (uint32_t i = 0; i < tpurt_n_host_ops(rt); i++) {
        tpurt_host_op h;
        tpurt_get_host_op(rt, i, &h);
        host += h.macs;
        ops += h.count;
        bytes += h.bytes;
    }
    printf(CLI_LABEL "%.1f %% (%s per step; %s on the host)\n",
           "MACs on the device:", 100.0 * cli_ratio((double)device, (double)(device + host)),
           cli_group(g1, device / steps), cli_group(g2, host / steps));
    printf(CLI_LABEL "%s ops, %s bytes per step\n", "host program:", cli_group(g3, ops / steps),
           cli_group(g4, bytes / steps));
}

static double seconds(struct timespec a, struct timespec b)
{
    return (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
}

static double mean(const float *x, uint64_t n)
{
    double s = 0;
    for (uint64_t i = 0; i < n; i++)
        s += x[i];
    return n ? s / (double)n : NAN;
}

/* The bound package: which inputs are state, which are data and labels, which output the loss. */
static int bind(tpurt *rt, int *is_state, uint32_t *feed, int32_t *loss_out)
{
    const uint32_t ni = tpurt_n_inputs(rt), no = tpurt_n_outputs(rt);
    char cand[512] = "", s[128];
    int n_loss = 0, n_state = 0;
    for (uint32_t j = 0; j < no; j++) {
        tpurt_tensor t, in;
        tpurt_get_output(rt, j, &t);
        const int32_t k = tpurt_output_updates(rt, j);
        if (k >= 0) {
            tpurt_get_input(rt, (uint32_t)k, &in);
            if (in.type != t.type || in.bytes != t.bytes)
                return cli_fail(EXIT_USAGE, "package", "output %u updates input %s but is %s", j,
                                run_sig_str(&in, s, sizeof s), run_sig_str(&t, cand, sizeof cand));
            is_state[k] = 1;
            n_state++;
        } else if (t.type == HLO_F32 && t.elements == 1) {
            *loss_out = (int32_t)j;
            n_loss++;
            snprintf(cand + strlen(cand), sizeof cand - strlen(cand), "%s%s",
                     n_loss > 1 ? ", " : "", run_sig_str(&t, s, sizeof s));
        }
    }
    if (!n_state)
        return cli_fail(EXIT_USAGE, "package", "nothing to train: no output updates an input");
    if (n_loss != 1)
        return cli_fail(EXIT_USAGE, "package",
                        "wants one f32 scalar output that updates no input (the loss), has %d%s%s",
                        n_loss, n_loss ? ": " : "", cand);
    uint32_t n_feed = 0;
    for (uint32_t i = 0; i < ni; i++)
        if (!is_state[i] && n_feed < 2)
            feed[n_feed++] = i;
        else if (!is_state[i])
            n_feed++;
    if (n_feed != 2)
        return cli_fail(EXIT_USAGE, "package",
                        "wants two inputs besides the state (data and labels), has %u", n_feed);
    return 0;
}

/* After step (from 0): every replica's updated state has replica 0's bits (the all-reduce
 * makes them so). */
static int same_state(tpurt *rt, void **const *outs, uint32_t replicas, uint64_t step)
{
    for (uint32_t j = 0; j < tpurt_n_outputs(rt); j++) {
        tpurt_tensor t;
        tpurt_get_output(rt, j, &t);
        for (uint32_t r = 1; r < replicas && tpurt_output_updates(rt, j) >= 0; r++)
            if (memcmp(outs[r][j], outs[0][j], t.bytes))
                return cli_fail(EXIT_MISMATCH, "replicas",
                                "after step %" PRIu64 ", replica %u's '%s' differs from replica "
                                "0's",
                                step + 1, r, t.name);
    }
    return 0;
}

static int train(const train_options *o)
{
    tpurt_options ro;
    tpurt_options_default(&ro);
    ro.device = &o->dev.device;
    ro.max_cycles = o->dev.max_cycles;
    tpurt *rt = NULL;
    char err[1024];
    tpurt_status st = tpurt_load(o->package, &ro, &rt, err, sizeof err);
    if (st)
        return cli_status_error(st, err, o->package);
    const uint32_t ni = tpurt_n_inputs(rt), no = tpurt_n_outputs(rt), R = tpurt_replicas(rt);
    int *is_state = calloc(ni, sizeof *is_state);
    /* Each replica's inputs and outputs; replica 0's are the state saved and evaluated. */
    void **ins[TPUSIM_CORES_MAX] = {0}, **outs[TPUSIM_CORES_MAX] = {0};
    for (uint32_t r = 0; r < R; r++) {
        ins[r] = calloc(ni, sizeof *ins[r]);
        outs[r] = calloc(no, sizeof *outs[r]);
    }
    void **in = ins[0], **out = outs[0];
    tr_feed feed[2] = {0};
    tr_eval ev = {0};
    uint64_t *perm = NULL;
    float *loss = NULL;
    uint32_t fi[2];
    int32_t li = -1;
    int rc = !is_state || !ins[R - 1] || !outs[R - 1]
                 ? cli_fail(EXIT_USAGE, "memory", "out of host memory")
                 : 0;
    if (!rc && R != tpurt_cores(rt))
        rc = cli_fail(EXIT_USAGE, "--cores",
                      "%u, but the package runs as %u replica%s (a data-parallel step wants "
                      "--cores of its replicas)",
                      tpurt_cores(rt), R, R > 1 ? "s" : "");
    if (!rc)
        rc = bind(rt, is_state, fi, &li);
    for (uint32_t r = 0; r < R; r++)
        for (uint32_t i = 0; !rc && i < ni; i++) {
            tpurt_tensor t;
            tpurt_get_input(rt, i, &t);
            if (!(ins[r][i] = calloc(1, t.bytes)))
                rc = cli_fail(EXIT_USAGE, "memory", "out of host memory");
        }
    for (uint32_t r = 0; r < R; r++)
        for (uint32_t j = 0; !rc && j < no; j++) {
            tpurt_tensor t;
            tpurt_get_output(rt, j, &t);
            if (!(outs[r][j] = calloc(1, t.bytes)))
                rc = cli_fail(EXIT_USAGE, "memory", "out of host memory");
        }
    if (!rc && o->eval)
        rc = tr_eval_open(&ev, o->eval, o->test_data, o->test_labels, &ro, rt, is_state);
    for (int k = 0; !rc && k < 2; k++) {
        tpurt_tensor t;
        tpurt_get_input(rt, fi[k], &t);
        rc = tr_feed_load(&feed[k], k ? "--labels" : "--data", k ? o->labels : o->data, &t,
                          k ? (o->eval ? tr_eval_classes(&ev) : 0) : -1);
    }
    const uint64_t rows = rc ? 0 : feed[0].arr.shape[0];
    const uint64_t batch = rc ? 1 : (uint64_t)feed[0].sig.dims[0], global = R * batch;
    if (!rc && (uint64_t)feed[1].sig.dims[0] != batch)
        rc = cli_fail(EXIT_USAGE, "package", "data input %s and labels input %s differ in batch",
                      run_sig_str(&feed[0].sig, err, 256),
                      run_sig_str(&feed[1].sig, err + 256, 256));
    if (!rc && o->batch && o->batch != batch)
        rc = cli_fail(EXIT_USAGE, "--batch", "%" PRIu64 ", but the package's batch is %" PRIu64,
                      o->batch, batch);
    if (!rc && feed[1].arr.shape[0] != rows)
        rc = cli_fail(EXIT_USAGE, o->labels, "%" PRIu64 " labels for %" PRIu64 " rows of data",
                      feed[1].arr.shape[0], rows);
    if (!rc && rows < global)
        rc = cli_fail(EXIT_USAGE, o->data, "%" PRIu64 " rows: fewer than a batch (%" PRIu64 ")",
                      rows, global);
    uint64_t rng = o->seed;
    if (!rc)
        rc = load_state(o, rt, is_state, in, &rng);
    for (uint32_t r = 1; !rc && r < R; r++)
        for (uint32_t i = 0; i < ni; i++) {
            tpurt_tensor t;
            tpurt_get_input(rt, i, &t);
            if (is_state[i])
                memcpy(ins[r][i], in[i], t.bytes);
        }
    const uint64_t per_epoch = rows / global;
    const uint64_t total = o->steps ? o->steps : o->epochs * per_epoch;
    if (!rc && (!(perm = malloc(rows * sizeof *perm)) || !(loss = malloc(total * sizeof *loss))))
        rc = cli_fail(EXIT_USAGE, "memory", "out of host memory");
    if (rc)
        goto done;
    if (!o->dev.quiet && rows % global)
        printf("%" PRIu64 " rows, batch %" PRIu64 ": the last %" PRIu64
               " row(s) of each epoch are dropped\n",
               rows, global, rows % global);
    struct sigaction sa = {0}, old;
    sa.sa_handler = on_sigint;
    sa.sa_flags = SA_RESTART; /* the step in flight runs on undisturbed */
    sigaction(SIGINT, &sa, &old);
    const int tty = isatty(2);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t step = 0, correct = 0;
    double eval_wall = 0;
    for (; step < total && !interrupted; step++) {
        const uint64_t at = step % per_epoch;
        if (!at) { /* a new epoch: a fresh shuffle */
            for (uint64_t r = 0; r < rows; r++)
                perm[r] = r;
            for (uint64_t r = rows - 1; r > 0; r--) {
                const uint64_t k = rng_next(&rng) % (r + 1), x = perm[r];
                perm[r] = perm[k];
                perm[k] = x;
            }
        }
        for (uint32_t r = 0; r < R; r++)
            for (int k = 0; k < 2; k++)
                tr_feed_stage(&feed[k], perm + at * global + r * batch, batch, ins[r][fi[k]]);
        st = tpurt_run_batches(rt, R, (const void *const *const *)ins, ni,
                               (void *const *const *)outs, no);
        if (st) {
            rc = cli_status_error(st, tpurt_last_error(rt), NULL);
            break;
        }
        if ((rc = same_state(rt, outs, R, step)))
            break;
        for (uint32_t r = 0; r < R; r++)
            for (uint32_t j = 0; j < no; j++) {
                const int32_t k = tpurt_output_updates(rt, j);
                if (k >= 0) { /* the output becomes the input: swap the buffers */
                    void *x = ins[r][k];
                    ins[r][k] = outs[r][j];
                    outs[r][j] = x;
                }
            }
        in = ins[0];
        out = outs[0];
        memcpy(&loss[step], out[li], sizeof(float));
        if (!o->dev.quiet && ((step + 1) % o->log_every == 0 || step + 1 == total))
            printf("step %" PRIu64 " epoch %" PRIu64 " loss %.6f\n", step + 1, step / per_epoch + 1,
                   (double)loss[step]);
        fflush(stdout); /* a log to follow while it trains */
        if (!o->dev.quiet && tty)
            fprintf(stderr, "\r%" PRIu64 "/%" PRIu64 " steps\r", step + 1, total);
        if (o->eval && ((step + 1) % per_epoch == 0 || step + 1 == total)) {
            struct timespec e0, e1; /* not training time: cycles/s leaves it out */
            clock_gettime(CLOCK_MONOTONIC, &e0);
            if ((rc = tr_eval_run(&ev, in, &correct)))
                break;
            clock_gettime(CLOCK_MONOTONIC, &e1);
            eval_wall += seconds(e0, e1);
            if (!o->dev.quiet)
                printf("epoch %" PRIu64 " test accuracy %.2f %% (%" PRIu64 " of %" PRIu64 ")\n",
                       step / per_epoch + 1, 100.0 * (double)correct / (double)ev.x.arr.shape[0],
                       correct, ev.x.arr.shape[0]);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    sigaction(SIGINT, &old, NULL);
    if (!o->dev.quiet && tty)
        fprintf(stderr, "\n");
    if (rc)
        goto done;
    if (o->save)
        rc = save_state(o->save, rt, is_state, in);
    if (!rc)
        rc = save_losses(o, loss, step, per_epoch);
    if (interrupted) {
        cli_fail(130, "interrupted", "stopped after step %" PRIu64 " of %" PRIu64 "%s", step, total,
                 o->save && !rc ? " (state saved)" : "");
        rc = 130;
    }
    if (!o->dev.quiet && step) {
        tpurt_stats s;
        tpurt_core_stats c;
        tpurt_get_stats(rt, &s);
        tpurt_get_core_stats(rt, 0, &c);
        const double wall = seconds(t0, t1) - eval_wall;
        const uint64_t last = (step - 1) / per_epoch * per_epoch;
        char g[32];
        printf(CLI_LABEL "%" PRIu64 " (%" PRIu64 " per epoch)\n", "steps:", step, per_epoch);
        printf(CLI_LABEL "%.6f (epoch 1) -> %.6f (epoch %" PRIu64 ")\n",
               "mean loss:", mean(loss, step < per_epoch ? step : per_epoch),
               mean(loss + last, step - last), last / per_epoch + 1);
        printf(CLI_LABEL "%s\n", "device cycles per step:", cli_group(g, s.device_cycles / step));
        printf(CLI_LABEL "%.1f %%\n",
               "MXU utilization:", 100.0 * cli_ratio((double)c.mxu_busy, (double)c.cycles));
        printf(CLI_LABEL "%.0f\n", "cycles/s:", cli_ratio((double)s.device_cycles, wall));
        print_placement(rt, step);
        if (o->eval && !interrupted)
            printf(CLI_LABEL "%.2f %% (%" PRIu64 " of %" PRIu64 ")\n",
                   "test accuracy:", 100.0 * (double)correct / (double)ev.x.arr.shape[0], correct,
                   ev.x.arr.shape[0]);
    }
done:
    for (uint32_t r = 0; r < R; r++) {
        for (uint32_t i = 0; ins[r] && i < ni; i++)
            free(ins[r][i]);
        for (uint32_t j = 0; outs[r] && j < no; j++)
            free(outs[r][j]);
        free(ins[r]);
        free(outs[r]);
    }
    if (o->eval)
        tr_eval_close(&ev);
    npy_free(&feed[0].arr);
    npy_free(&feed[1].arr);
    free(is_state);
    free(perm);
    free(loss);
    tpurt_close(rt);
    return rc;
}

int cmd_train(int argc, char **argv)
{
    train_options o = {0};
    const int rc = parse(argc, argv, &o);
    if (rc < 0) {
        printf("%s%s", usage_train, CLI_EXIT_HELP);
        return EXIT_OK;
    }
    return rc ? rc : train(&o);
}

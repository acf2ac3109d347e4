/* train_data.c - tpusim train's datasets: the data and the labels fed to the step a batch at a
 * time, and --eval, the test accuracy of the state so far through a forward package that takes
 * the state by name (docs/run.md). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tools/common/run.h"
#include "tools/tpusim/train.h"

int tr_feed_load(tr_feed *f, const char *opt, const char *path, const tpurt_tensor *sig,
                 int64_t classes)
{
    char err[512], s[128], a[128];
    f->sig = *sig;
    if (npy_load(path, &f->arr, err, sizeof err))
        return cli_fail(EXIT_USAGE, path, "%s", err);
    if (sig->type == HLO_BF16 && f->arr.dtype == NPY_V2 &&
        npy_as_bfloat16(&f->arr, err, sizeof err)) /* '<V2', as ml_dtypes saves bfloat16 */
        return cli_fail(EXIT_USAGE, path, "%s", err);
    int ok = sig->rank >= 1 && f->arr.ndim == sig->rank && f->arr.dtype != NPY_V2;
    for (int d = 1; ok && d < sig->rank; d++)
        ok = f->arr.shape[d] == (uint64_t)sig->dims[d];
    if (!ok)
        return cli_fail(EXIT_USAGE, path, "%s %s %s does not fit input %s ([rows, ...] as it)", opt,
                        cli_dtype(f->arr.dtype), cli_shape(&f->arr, a, sizeof a),
                        run_sig_str(sig, s, sizeof s));
    f->row = sig->elements / (uint64_t)sig->dims[0];
    if (hlo_is_float(sig->type)) {
        if (run_sig_dtype(sig->type) != NPY_FLOAT32 && f->arr.dtype == NPY_FLOAT32)
            cli_fail(0, path, "float32 rounded to nearest even for input %s", /* a note */
                     run_sig_str(sig, s, sizeof s));
        return 0;
    }
    for (uint64_t i = 0; i < f->arr.count; i++) {
        const double v = run_npy_value(&f->arr, i);
        if (v != floor(v))
            return cli_fail(EXIT_USAGE, path,
                            "%s: element %" PRIu64 " (%g) is not a whole number (input %s)", opt, i,
                            v, run_sig_str(sig, s, sizeof s));
        if (classes >= 0 && v < 0)
            return cli_fail(EXIT_USAGE, path,
                            "%s: label %" PRIu64 " is %g: a class is not negative", opt, i, v);
        if (classes > 0 && v >= (double)classes)
            return cli_fail(EXIT_USAGE, path,
                            "%s: label %" PRIu64 " is %g, not below %" PRId64
                            " (the classes of --eval's output)",
                            opt, i, v, classes);
    }
    return 0;
}

void tr_feed_stage(const tr_feed *f, const uint64_t *rows, uint64_t n, void *buf)
{
    memset(buf, 0, f->sig.bytes);
    for (uint64_t r = 0; r < n; r++)
        for (uint64_t e = 0; e < f->row; e++)
            run_sig_set(f->sig.type, buf, r * f->row + e,
                        run_npy_value(&f->arr, rows[r] * f->row + e));
}

/* Binds e's inputs to the step's state by name (same type and shape) and finds its one data
 * input and its logits output. */
static int eval_bind(tr_eval *e, const char *path, tpurt *step, const int *is_state)
{
    char s[128], t[128];
    int n_data = 0;
    for (uint32_t i = 0; i < e->n_in; i++) {
        tpurt_tensor in;
        tpurt_get_input(e->rt, i, &in);
        e->state[i] = -1;
        for (uint32_t k = 0; k < tpurt_n_inputs(step) && e->state[i] < 0; k++) {
            tpurt_tensor st;
            tpurt_get_input(step, k, &st);
            if (!is_state[k] || strcmp(st.name, in.name))
                continue;
            int same = st.type == in.type && st.rank == in.rank;
            for (int d = 0; same && d < st.rank; d++)
                same = st.dims[d] == in.dims[d];
            if (!same)
                return cli_fail(EXIT_USAGE, path, "input %s is state input %s of the step",
                                run_sig_str(&in, s, sizeof s), run_sig_str(&st, t, sizeof t));
            e->state[i] = (int32_t)k;
        }
        if (e->state[i] < 0) {
            e->data = i;
            n_data++;
        }
    }
    if (n_data != 1)
        return cli_fail(EXIT_USAGE, path,
                        "wants one input besides the step's state (by name): the data; has %d",
                        n_data);
    tpurt_tensor x;
    tpurt_get_input(e->rt, e->data, &x);
    if (tpurt_n_outputs(e->rt) == 1)
        tpurt_get_output(e->rt, 0, &e->logits);
    if (tpurt_n_outputs(e->rt) != 1 || e->logits.rank != 2 || x.rank < 1 ||
        e->logits.dims[0] != x.dims[0] || e->logits.dims[1] < 1)
        return cli_fail(EXIT_USAGE, path,
                        "wants one output, the logits [b, classes] for data input %s",
                        run_sig_str(&x, s, sizeof s));
    return 0;
}

int tr_eval_open(tr_eval *e, const char *path, const char *x_path, const char *y_path,
                 const tpurt_options *ro, tpurt *step, const int *is_state)
{
    char err[1024];
    const tpurt_status st = tpurt_load(path, ro, &e->rt, err, sizeof err);
    if (st)
        return cli_status_error(st, err, path);
    e->n_in = tpurt_n_inputs(e->rt);
    e->state = calloc(e->n_in, sizeof *e->state);
    e->in = calloc(e->n_in, sizeof *e->in);
    if (!e->state || !e->in)
        return cli_fail(EXIT_USAGE, "memory", "out of host memory");
    int rc = eval_bind(e, path, step, is_state);
    tpurt_tensor x;
    tpurt_get_input(e->rt, e->data, &x);
    if (!rc)
        rc = tr_feed_load(&e->x, "--test-data", x_path, &x, -1);
    if (!rc && npy_load(y_path, &e->y, err, sizeof err))
        rc = cli_fail(EXIT_USAGE, y_path, "%s", err);
    const uint64_t rows = rc ? 0 : e->x.arr.shape[0], b = (uint64_t)x.dims[0];
    if (!rc && (e->y.ndim != 1 || e->y.count != rows || !run_npy_integer(e->y.dtype)))
        rc = cli_fail(EXIT_USAGE, y_path,
                      "--test-labels: wants %" PRIu64 " integer labels, one per row of --test-data",
                      rows);
    for (uint64_t i = 0; !rc && i < rows; i++) {
        const double v = run_npy_value(&e->y, i);
        if (v < 0 || v >= (double)e->logits.dims[1])
            rc = cli_fail(EXIT_USAGE, y_path,
                          "--test-labels: label %" PRIu64 " is %g, not a class of 0..%" PRId64, i,
                          v, e->logits.dims[1] - 1);
    }
    if (!rc && (!(e->in[e->data] = malloc(x.bytes)) || !(e->out = malloc(e->logits.bytes)) ||
                !(e->rows = malloc(b * sizeof *e->rows))))
        rc = cli_fail(EXIT_USAGE, "memory", "out of host memory");
    return rc;
}

int64_t tr_eval_classes(const tr_eval *e) { return e->logits.dims[1]; }

int tr_eval_run(tr_eval *e, void *const *state, uint64_t *correct)
{
    const uint64_t rows = e->x.arr.shape[0], b = (uint64_t)e->logits.dims[0];
    const uint64_t k = (uint64_t)e->logits.dims[1];
    hlo_array logits = {.data = e->out, .shape = {.type = e->logits.type, .rank = 1}};
    logits.shape.dims[0] = logits.shape.elements = (int64_t)(b * k);
    for (uint32_t i = 0; i < e->n_in; i++)
        if (e->state[i] >= 0)
            e->in[i] = state[e->state[i]];
    *correct = 0;
    for (uint64_t first = 0; first < rows; first += b) { /* the last batch zero-padded */
        const uint64_t n = rows - first < b ? rows - first : b;
        for (uint64_t r = 0; r < n; r++)
            e->rows[r] = first + r;
        tr_feed_stage(&e->x, e->rows, n, e->in[e->data]);
        const tpurt_status st = tpurt_run(e->rt, (const void *const *)e->in, e->n_in, &e->out, 1);
        if (st)
            return cli_status_error(st, tpurt_last_error(e->rt), NULL);
        for (uint64_t r = 0; r < n; r++) {
            uint64_t best = 0; /* the first of equal maxima, as numpy's argmax */
            for (uint64_t c = 1; c < k; c++)
                if (hlo_array_get(&logits, (int64_t)(r * k + c)) >
                    hlo_array_get(&logits, (int64_t)(r * k + best)))
                    best = c;
            *correct += (double)best == run_npy_value(&e->y, first + r);
        }
    }
    return 0;
}

void tr_eval_close(tr_eval *e)
{
    if (e->in && e->state && e->n_in)
        free(e->in[e->data]);
    free(e->in);
    free(e->state);
    free(e->out);
    free(e->rows);
    npy_free(&e->x.arr);
    npy_free(&e->y);
    tpurt_close(e->rt);
}

/* train.h - tpusim train (train.c): a compiled training step run over a dataset, its state fed
 * back from step to step; its datasets and test accuracy (train_data.c). */
#ifndef TPU_TOOLS_TPUSIM_TRAIN_H
#define TPU_TOOLS_TPUSIM_TRAIN_H

#include <stdint.h>

#include "io/npy.h"
#include "runtime/tpurt.h"

extern const char usage_train[];
/* tpusim train's command line (argv[0] "train"): the exit code, every message printed. */
int cmd_train(int argc, char **argv);

/* train_data.c. Each int function returns 0 or an exit code, with the message printed. */

/* One data or labels input: its file, bound to input sig, staged a batch at a time. */
typedef struct {
    npy_array arr;
    tpurt_tensor sig;
    uint64_t row; /* elements per row */
} tr_feed;

/* f's file (option opt) for input sig, [rows, ...] as it with sig's leading dimension the batch,
 * of a dtype that converts to it. Labels (classes >= 0) of an integer input are class indices:
 * not negative, and below classes when that is known (> 0); classes < 0: not labels. */
int tr_feed_load(tr_feed *f, const char *opt, const char *path, const tpurt_tensor *sig,
                 int64_t classes);
/* Rows rows[0..n) of f into buf, of the signature's type; zero rows after them to the batch. */
void tr_feed_stage(const tr_feed *f, const uint64_t *rows, uint64_t n, void *buf);

/* --eval: a forward package whose inputs are the step's state inputs by name and the data, whose
 * one output is the logits [b, classes]; a test set run through it in batches of b. */
typedef struct {
    tpurt *rt;
    uint32_t n_in, data; /* inputs; the data's */
    int32_t *state;      /* per input, the step's state input it is, -1 for the data */
    void **in, *out;
    tpurt_tensor logits;
    tr_feed x;
    npy_array y;
    uint64_t *rows;
} tr_eval;

/* Opens path's package on options ro against step's state inputs (is_state[i]), loads the test
 * set x_path, y_path (labels in 0..classes-1). */
int tr_eval_open(tr_eval *e, const char *path, const char *x_path, const char *y_path,
                 const tpurt_options *ro, tpurt *step, const int *is_state);
/* Classes the logits have. */
int64_t tr_eval_classes(const tr_eval *e);
/* The test accuracy of state (the step's input buffers): *correct of the test set's rows. */
int tr_eval_run(tr_eval *e, void *const *state, uint64_t *correct);
void tr_eval_close(tr_eval *e);

#endif

/* train.h - tpusim train (train.c): a compiled training step run over a dataset, its state fed
 * back from step to step. */
#ifndef TPU_TOOLS_TPUSIM_TRAIN_H
#define TPU_TOOLS_TPUSIM_TRAIN_H

extern const char usage_train[];
/* tpusim train's command line (argv[0] "train"): the exit code, every message printed. */
int cmd_train(int argc, char **argv);

#endif

/* run.h - tpusim run: a compiled package (.tpub) on the simulated TPU (internal to driver/cli). */
#ifndef TPU_CLI_RUN_H
#define TPU_CLI_RUN_H

extern const char usage_run[];

/* The arguments after "run". Returns the exit code, every message printed. */
int cmd_run(int argc, char **argv);

#endif

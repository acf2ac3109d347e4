/* gtkw.h - GTKWave save file for a tpusim trace. */
#ifndef TPU_SIM_GTKW_H
#define TPU_SIM_GTKW_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes a GTKWave save file beside trace_path (the .fst or .vcd from tpu_trace_open) that opens
 * the trace with the core's signals of an array_n core grouped and labelled: a lone tpu_core's, or
 * with chip set core 0's of a tpu_chip (the other cores' are in the trace beside it). Returns 0,
 * or -1 with the reason in err. */
int tpusim_gtkw_write(const char *trace_path, unsigned array_n, int chip, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif

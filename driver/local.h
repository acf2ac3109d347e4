/* local.h - what the local backend's files share: local.c (the simulator, its clock, the
 * outcomes), record.c (the firmware on the host, recording into a feed) and verify.c (the golden
 * models on a mirror of device memory). Internal to the driver. */
#ifndef TPU_DRIVER_LOCAL_H
#define TPU_DRIVER_LOCAL_H

#include "driver/tpu_internal.h"

/* ---------------------------------------------------------------- record.c -- */

/* Runs the firmware (firmware/firmware.h) for core k of sim on the stream at [addr, addr +
 * bytes), with a HAL that records what it pushes, and the cycles it spends between the pushes,
 * into feed (cleared first). Its failure: TPU_E_STREAM (the field and what is wrong with it),
 * TPU_E_CORE, TPU_E_DEVICE or TPU_E_NOMEM, with d's message. */
tpu_status drv_record(tpu_device *d, tpusim *sim, uint32_t k, tpusim_feed *feed, uint32_t addr,
                      uint32_t bytes, const char *call);

/* ---------------------------------------------------------------- verify.c -- */

typedef struct drv_verify drv_verify;

/* A golden model per core on one mirror of sim's memory, copied from it now; NULL if out of
 * host memory. */
drv_verify *drv_verify_new(tpusim *sim, const tpusim_hwcfg *hw, uint32_t cores);
void drv_verify_free(drv_verify *v);
/* A host write of [addr, addr + bytes), already in device memory: the mirror takes it, unless
 * it meets what a submission under way reads or writes (then it is compared as a change when
 * that submission is verified). */
void drv_verify_write(drv_verify *v, uint32_t addr, const void *src, size_t bytes);
/* Core k's submission is under way with the instructions of feed. -1 if out of host memory. */
int drv_verify_start(drv_verify *v, uint32_t k, const tpusim_feed *feed);
/* Core k's submission has stopped with outcome st: after a HALT (TPU_OK) its golden model runs
 * the feed's instructions on the mirror and the device must agree (else TPU_E_MISMATCH or
 * TPU_E_NOMEM, with d's message); after a failure the mirror takes the device's bytes wherever
 * they may differ. Returns the outcome. */
tpu_status drv_verify_end(tpu_device *d, drv_verify *v, uint32_t k, const tpusim_feed *feed,
                          tpu_status st);

#endif

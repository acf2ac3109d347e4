/* config.h - the device's configuration (C11): what sim/tpusim.h's tpusim_create builds, and
 * what the layers above it (driver/tpu.h's tpu_open, runtime/tpurt.h, the tools) take by pointer
 * to open one, with its limits. No Verilator or C++ type appears here. */
#ifndef TPU_SIM_CONFIG_H
#define TPU_SIM_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "rtl/tpu_isa.h" /* TPU_CHIP_CORES_MAX */

#ifdef __cplusplus
extern "C" {
#endif

/* The memory model's limits: beyond them a run would take hours per access or mean nothing
 * (the port moves at most one beat of 4N bytes a cycle). */
#define TPUSIM_MEM_LATENCY_MAX 65536u
#define TPUSIM_MEM_BANDWIDTH_MAX 4096u
/* The cores of the largest chip (rtl/tpu_isa.toml). */
#define TPUSIM_CORES_MAX TPU_CHIP_CORES_MAX

/* A memory of the caller's behind the port, in place of the built-in byte array (a SystemC
 * platform's memory target, reached through tpu_tlm's initiator socket). The port keeps its
 * acceptance timing (mem_bytes_per_cycle) and its in-order response queue; the memory performs
 * each access and says when its response is due. */
typedef struct tpusim_memory {
    void *ctx;
    /* An access the port accepted at the edge ending cycle `cycle`: write len bytes of data at
     * addr (we 1), or read them into data (we 0). [addr, addr + len) lies inside mem_size.
     * Returns 0 with the cycles until its response in *latency (at least 1; a response never
     * overtakes an earlier one), or -1: the response carries an error (read data zero). */
    int (*access)(void *ctx, uint64_t cycle, int we, uint32_t addr, uint8_t *data, uint32_t len,
                  uint32_t *latency);
    /* Untimed access for the backdoor (tpusim_mem_read / tpusim_mem_write): 0, or -1. */
    int (*debug)(void *ctx, int we, uint64_t addr, uint8_t *data, size_t len);
} tpusim_memory;

/* The device. tpusim_create needs every field but memory set (tpusim_config_default); the
 * driver's tpu_open also takes 0 for array_n, mem_size, mem_latency and mem_bytes_per_cycle:
 * their defaults (tpu_config_fill). */
typedef struct {
    uint32_t array_n;             /* N: a model for it must be built in (tpusim_arrays) */
    uint64_t mem_size;            /* bytes of memory behind the port */
    uint32_t mem_latency;         /* cycles from a request's acceptance to its response,
                                     1..TPUSIM_MEM_LATENCY_MAX */
    uint32_t mem_bytes_per_cycle; /* bandwidth: bytes the memory accepts per cycle,
                                     1..TPUSIM_MEM_BANDWIDTH_MAX */
    uint32_t cores;               /* 0: a lone tpu_core (the default); 1..TPUSIM_CORES_MAX: a
                                     tpu_chip of that many cores sharing the memory (docs/isa.md
                                     "Chip"); a model for (array_n, cores) must be built
                                     (tpusim_chips) */
    const tpusim_memory *memory;  /* NULL: the built-in array of mem_size bytes (mem_latency
                                     applies); else the caller's, which must outlive the
                                     simulator (mem_latency unused) */
} tpusim_config;

#ifdef __cplusplus
}
#endif
#endif

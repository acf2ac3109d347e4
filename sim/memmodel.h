/* memmodel.h - the memory behind a core's or a chip's memory port (internal to libtpusim).
 *
 * A byte array of `size` bytes that speaks the port protocol of docs/isa.md ("Ports of
 * tpu_core") at the clock-edge level: the device drives the model's outputs (req_ready, the
 * response at the head) into the core for a cycle, and at the clock edge tells the model what the
 * core offered in that cycle (edge()).
 *
 * Timing:
 *  - Bandwidth: the acceptance slot has a backlog of bytes that drains by bytes_per_cycle each
 *    cycle; a request is accepted (req_ready) while the backlog is below bytes_per_cycle, and adds
 *    its len. So requests of len <= bytes_per_cycle go one per cycle, a request of len bytes holds
 *    the slot ceil(len / bytes_per_cycle) cycles, and a stream of any lengths gets exactly
 *    bytes_per_cycle on average.
 *  - Latency: a request accepted at the edge that ends cycle t has its response at the head of the
 *    response queue from cycle t + latency (latency >= 1: responses are registered outputs).
 *    Responses leave in acceptance order, each held until the core takes it (rsp_ready).
 *  - Any number of requests may be outstanding.
 *
 * Semantics: a request is performed when it is accepted: writes update the array then, and reads
 * copy their data into the response then. So the memory is sequentially consistent in acceptance
 * order. A request touching any byte outside [0, size), or longer than the bus, gets err and no
 * access (read data zero).
 *
 * A caller's memory (tpusim_memory, sim/tpusim.h) replaces the array: the acceptance gate and the
 * response queue stay, and each accepted in-range request is performed by its access(), whose
 * latency (at least 1) sets its response's due; since only the queue's head is presented, a
 * response comes at max(its due, the previous response's), in order. -1 from access() gives err.
 * The backdoor goes to its debug().
 *
 * One model serves one port: a lone core's, or a chip's, whose cores share it through the RTL
 * arbiter (tpu_chip_arb) with the core index in the upper id bits. */
#ifndef TPU_SIM_MEMMODEL_H
#define TPU_SIM_MEMMODEL_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/tpusim.h"

namespace tpu
{

/* A request as the core offers it in a cycle. */
struct MemRequest {
    bool we;
    uint32_t addr;
    uint32_t len;
    uint32_t id;
    const uint8_t *wdata; /* bus_bytes bytes, lanes 0..len-1 used */
};

/* The response the memory presents in a cycle. */
struct MemResponse {
    uint32_t id;
    bool err;
    const uint8_t *rdata; /* bus_bytes bytes, lanes >= len are zero */
};

class MemModel
{
  public:
    /* external: the caller's memory of `size` bytes (which must outlive the model), or nullptr
     * for the built-in array. Throws std::bad_alloc if the array cannot be allocated. */
    MemModel(uint64_t size, uint32_t bus_bytes, uint32_t latency, uint32_t bytes_per_cycle,
             const tpusim_memory *external = nullptr);

    /* latency is raised to 1 and bytes_per_cycle to 1 if given as 0 (a caller's memory gives its
     * own latencies). */
    void set_timing(uint32_t latency, uint32_t bytes_per_cycle);
    /* Drop every request in flight (the core is being reset). */
    void clear();

    /* Outputs for the current cycle; they depend only on the state. */
    bool req_ready() const { return backlog_ < bytes_per_cycle_; }
    /* The response presented this cycle: false if none. rdata stays valid until the next edge(). */
    bool response(MemResponse *out) const;

    /* The clock edge at the end of the current cycle: req is what the core offers (nullptr if
     * mem_req_valid is low; accepted only if req_ready()), rsp_taken whether the core takes the
     * presented response (mem_rsp_ready). */
    void edge(const MemRequest *req, bool rsp_taken);

    uint64_t size() const { return size_; }
    /* Backdoor access; false if the range is outside the memory (or the caller's refused it). */
    bool write(uint64_t addr, const void *src, size_t n);
    bool read(uint64_t addr, void *dst, size_t n) const;

  private:
    struct Pending {
        uint64_t due; /* first cycle the response is presented */
        uint32_t id;
        bool err;
    };
    bool in_range(uint64_t addr, uint64_t n) const { return addr <= size_ && n <= size_ - addr; }
    void grow();

    /* Performs an accepted in-range request into rd (a read's data); false: an error response. */
    bool perform(const MemRequest &req, uint8_t *rd, uint32_t *latency);

    struct FreeDeleter {
        void operator()(uint8_t *p) const;
    };
    const tpusim_memory *external_;
    std::unique_ptr<uint8_t, FreeDeleter> data_; /* calloc'd: pages stay untouched until used;
                                                    none with a caller's memory */
    uint64_t size_;
    uint32_t bus_bytes_;
    uint32_t latency_ = 1;
    uint32_t bytes_per_cycle_ = 1;
    uint64_t now_ = 0;     /* cycles since construction */
    uint64_t backlog_ = 0; /* bytes the acceptance slot still owes */
    /* Ring of pending responses; slot i's read data lives at rdata_[i * bus_bytes_]. */
    std::vector<Pending> ring_;
    std::vector<uint8_t> rdata_;
    size_t head_ = 0;
    size_t count_ = 0;
};

} // namespace tpu

#endif

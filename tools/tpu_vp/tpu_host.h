// tpu_host.h - a host's driver for a tpu_tlm across TLM-2.0: the operations of a remote device
// (driver/tpu.h tpu_remote) as transactions on an initiator socket bound (directly or through an
// interconnect) to the module's host socket, so that tpu_open_remote, and the runtime on top of
// it, run a package on the platform's chip. Its calls must come from an SC_THREAD: wait sleeps
// on the interrupt.
//
// write/read: b_transport in the memory window; query: the ID registers; start: STREAM_ADDR and
// STREAM_BYTES, then START; wait: until IRQ_STATUS has a bit of the cores waited for (each bit
// read is cleared and kept, so one interrupt serves waits for several cores), the one that ended
// first by its mailbox's END_CYCLE (the lowest of a tie), then that mailbox's RESULT, figures and
// MESSAGE; cycle: the CYCLE register. The host is untimed: it does not consume the delays its
// accesses annotate, so its reaction to an interrupt lands before the chip's next edge
// (docs/systemc.md, timing).
#ifndef TPU_TOOLS_TPU_VP_TPU_HOST_H
#define TPU_TOOLS_TPU_VP_TPU_HOST_H

#include <cstdint>

#include <systemc>
#include <tlm>

#include "driver/tpu.h"

namespace tpu_vp
{

class tpu_host
{
  public:
    // base: where the module's host socket is mapped on the initiator's bus.
    tpu_host(tlm::tlm_initiator_socket<> &bus, sc_core::sc_in<bool> &irq, uint64_t base = 0);
    const tpu_remote *ops() const { return &ops_; }

    // One access at `addr` (from base); the response status.
    tlm::tlm_response_status transport(tlm::tlm_command cmd, uint64_t addr, void *data,
                                       unsigned int len);

  private:
    int reg_read(uint64_t addr, uint32_t *v);
    int reg_read64(uint64_t addr, uint64_t *v);

    static int write(void *ctx, uint32_t addr, const void *src, size_t n);
    static int read(void *ctx, uint32_t addr, void *dst, size_t n);
    static int query(void *ctx, tpu_info *info);
    static int start(void *ctx, uint32_t core, uint32_t addr, uint32_t bytes);
    static int wait(void *ctx, uint32_t cores, uint32_t *core, tpu_remote_result *out);
    static uint64_t cycle(void *ctx);

    tlm::tlm_initiator_socket<> &bus_;
    sc_core::sc_in<bool> &irq_;
    uint64_t base_;
    uint32_t ended_ = 0; // IRQ_STATUS bits read and cleared, not yet waited for
    tpu_remote ops_;
};

} // namespace tpu_vp

#endif

// tpu_mem.h - the default memory target of a tpu_tlm platform (docs/systemc.md): a byte array
// behind a TLM-2.0 target socket that annotates `latency` clock periods on every b_transport, as
// the simulator's own memory model answers after mem_latency cycles (sim/memmodel.h). Bandwidth
// is not modelled here: the chip's port keeps its acceptance gate (mem_bytes_per_cycle) in front
// of any memory, so a platform on this target counts the cycles `tpusim` counts.
//
// b_transport: reads and writes with byte enables, TLM_ADDRESS_ERROR_RESPONSE past the end,
// TLM_BURST_ERROR_RESPONSE for a streaming width below the length; DMI over the whole array
// (read and write, the latency per access); transport_dbg, clipped to the array.
#ifndef TPU_TOOLS_TPU_VP_TPU_MEM_H
#define TPU_TOOLS_TPU_VP_TPU_MEM_H

#include <cstdint>
#include <memory>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

namespace tpu_vp
{

class tpu_mem : public sc_core::sc_module
{
  public:
    tlm_utils::simple_target_socket<tpu_mem> socket;

    // size bytes, zero-filled (pages stay untouched until written); latency in periods of
    // `period`. Throws std::bad_alloc when the array cannot be allocated.
    tpu_mem(sc_core::sc_module_name name, uint64_t size, uint32_t latency,
            const sc_core::sc_time &period);

    uint64_t size() const { return size_; }
    // Takes back the DMI pointers granted over [start, end] (a platform remapping the memory).
    void invalidate_dmi(uint64_t start, uint64_t end);

  private:
    void b_transport(tlm::tlm_generic_payload &p, sc_core::sc_time &delay);
    bool get_direct_mem_ptr(tlm::tlm_generic_payload &p, tlm::tlm_dmi &dmi);
    unsigned int transport_dbg(tlm::tlm_generic_payload &p);

    struct FreeDeleter {
        void operator()(uint8_t *p) const;
    };
    std::unique_ptr<uint8_t, FreeDeleter> data_;
    uint64_t size_;
    sc_core::sc_time latency_; // per access
};

} // namespace tpu_vp

#endif

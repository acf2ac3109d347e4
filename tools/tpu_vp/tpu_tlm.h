// tpu_tlm.h - the TPU chip as a SystemC/TLM-2.0 module for virtual platforms (docs/systemc.md).
//
// Inside, a device-side driver (driver/tpu.h) runs the cycle-accurate chip with a caller's
// memory (tpusim_config.memory) that performs every access the chip's memory port accepts as a
// b_transport on the initiator socket `mem`: the delay the memory target annotates becomes the
// access's latency in clock periods (rounded up, at least 1). The host reaches the module through
// the target socket `host`: a register block (ID, sizes, interrupt status, a mailbox per core
// whose START register submits the command stream the host wrote into device memory) and, from
// MEM_BASE, a window onto device memory. `irq` is high while a bit of IRQ_STATUS is set: a core's
// submission ended (completed or failed).
//
// Clocking: `clk` bound to an sc_clock gives the chip its period and phase; unbound, the chip's
// clock has config.period and rises at its multiples. While a submission is pending the chip
// runs on the clock's rising edges; with a quantum Q > 1 it runs up to Q edges at a time
// (stopping at the edge where a submission ends) and then waits as many periods (temporal
// decoupling). Idle, the chip is not clocked.
#ifndef TPU_TOOLS_TPU_VP_TPU_TLM_H
#define TPU_TOOLS_TPU_VP_TPU_TLM_H

#include <cstdint>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "driver/tpu.h"

namespace tpu_vp
{

struct tpu_tlm_config {
    // The chip (sim/config.h; fields left 0: tpu_open's defaults): N and the cores (a model for
    // them must be built), the bytes of device memory (the memory target's first ones), the
    // port's bandwidth, and mem_latency, which only tpu_info reports (the memory target has its
    // own timing rules). `memory` is the module's own.
    tpusim_config device{};
    bool verify = true;   // check every submission against the golden model
    uint32_t quantum = 1; // clock edges per step of the chip (temporal decoupling)
    sc_core::sc_time period{1, sc_core::SC_NS}; // the chip's clock when clk is left unbound
    uint64_t max_cycles = 0; // cycle budget of each submission (tpu_set_budget); 0: none
};

// The register block (offsets on the host socket; every register is 32 bits, a 64-bit value two
// of them, low word first). Accesses are 4 bytes, or 8 bytes at an 8-byte boundary (two
// registers at once), without byte enables; the message windows take reads of any length.
enum tpu_tlm_reg : uint64_t {
    TPU_TLM_ID = 0x00,            // R: TPU_TLM_ID_MAGIC
    TPU_TLM_VERSION = 0x04,       // R: TPU_TLM_VERSION_1 (this register map)
    TPU_TLM_ARRAY_N = 0x08,       // R: N
    TPU_TLM_CORES = 0x0C,         // R: cores taking submissions
    TPU_TLM_UB_ROWS = 0x10,       // R
    TPU_TLM_ACC_ROWS = 0x14,      // R
    TPU_TLM_WFIFO_TILES = 0x18,   // R
    TPU_TLM_IQ_DEPTH = 0x1C,      // R
    TPU_TLM_ISA_VERSION = 0x20,   // R: the cores' VERSION register
    TPU_TLM_MEM_LATENCY = 0x24,   // R: tpu_info.mem_latency of the device-side driver
    TPU_TLM_MEM_BANDWIDTH = 0x28, // R: the port's bytes per cycle
    TPU_TLM_MEM_SIZE = 0x30,      // R, 64-bit: bytes of device memory
    TPU_TLM_MEM_WINDOW = 0x38,    // R, 64-bit: TPU_TLM_MEM_BASE
    TPU_TLM_IRQ_STATUS = 0x40,    // R/W1C: bit k: core k's submission ended
    TPU_TLM_CYCLE = 0x48,         // R, 64-bit: the chip's clock edges since it was opened
    TPU_TLM_CORE_BASE = 0x1000,   // core k's mailbox at CORE_BASE + k * CORE_STRIDE
    TPU_TLM_CORE_STRIDE = 0x200,
    TPU_TLM_MEM_BASE = 0x100000000ull, // device address a at host address MEM_BASE + a
};
// A mailbox's registers (offsets from its base).
enum tpu_tlm_core_reg : uint64_t {
    TPU_TLM_STREAM_ADDR = 0x00,  // RW: device address of the command stream
    TPU_TLM_STREAM_BYTES = 0x04, // RW: its bytes
    TPU_TLM_START = 0x08,        // W (reads 0): submit the stream (tpu_submit_at)
    TPU_TLM_STATUS = 0x0C,       // R: TPU_TLM_IDLE, _RUNNING or _DONE
    TPU_TLM_RESULT = 0x10,       // R: the last submission's tpu_status
    TPU_TLM_VERIFIED = 0x14,     // R: 1 when the golden model ran it and agreed (verify on)
    TPU_TLM_CYCLES = 0x18,       // R, 64-bit: its tpu_perf_report fields, from here on
    TPU_TLM_FIRMWARE_CYCLES = 0x20,
    TPU_TLM_INSTRUCTIONS = 0x28,
    TPU_TLM_MEM_STALL = 0x30,
    TPU_TLM_WALL_NS = 0x38,   // the device side's host time, nanoseconds
    TPU_TLM_PERF = 0x40,      // counter i (TPU_PERF_*) at PERF + 8 i
    TPU_TLM_END_CYCLE = 0xF8, // R, 64-bit: the chip's CYCLE at the edge where it ended
    TPU_TLM_MESSAGE = 0x100,  // R: 256 bytes, its tpu_last_error text, NUL-terminated
    TPU_TLM_MESSAGE_BYTES = 0x100,
};
enum : uint32_t {
    TPU_TLM_ID_MAGIC = 0x54505556u, // "TPUV"
    TPU_TLM_VERSION_1 = 0x00010000u,
    TPU_TLM_IDLE = 0,
    TPU_TLM_RUNNING = 1,
    TPU_TLM_DONE = 2,
};

class tpu_tlm : public sc_core::sc_module
{
  public:
    tlm_utils::simple_target_socket<tpu_tlm> host;
    tlm_utils::simple_initiator_socket<tpu_tlm> mem;
    // An sc_clock (its period and phase are the chip's), or unbound: then the chip's clock has
    // config.period, rising at its multiples, without a clock channel's events every period.
    sc_core::sc_port<sc_core::sc_signal_in_if<bool>, 1, sc_core::SC_ZERO_OR_MORE_BOUND> clk;
    sc_core::sc_out<bool> irq;

    SC_HAS_PROCESS(tpu_tlm);
    // The device opens at the end of elaboration (when the sockets are bound); a failure there
    // is an SC_REPORT_ERROR with the driver's message.
    tpu_tlm(sc_core::sc_module_name name, const tpu_tlm_config &config);
    ~tpu_tlm() override;
    tpu_tlm(const tpu_tlm &) = delete;
    tpu_tlm &operator=(const tpu_tlm &) = delete;

    // The device-side driver, for figures a register does not carry; NULL before elaboration.
    tpu_device *device() const { return dev_; }

  private:
    static constexpr uint32_t kMaxCores = TPUSIM_CORES_MAX;
    struct mailbox {
        uint32_t stream_addr = 0, stream_bytes = 0, status = TPU_TLM_IDLE;
        tpu_status result = TPU_OK;
        tpu_perf_report perf{};
        uint64_t end_cycle = 0;
        char message[TPU_TLM_MESSAGE_BYTES] = "";
    };

    void end_of_elaboration() override;
    void clock_thread();
    void next_edge(); // waits for the clock's next rising edge
    void drive_irq();

    void b_transport(tlm::tlm_generic_payload &p, sc_core::sc_time &delay);
    unsigned int transport_dbg(tlm::tlm_generic_payload &p);
    bool get_direct_mem_ptr(tlm::tlm_generic_payload &p, tlm::tlm_dmi &dmi);
    void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end);

    tlm::tlm_response_status register_access(tlm::tlm_generic_payload &p);
    tlm::tlm_response_status memory_write(uint32_t addr, const uint8_t *data, uint32_t len,
                                          const unsigned char *be, unsigned int be_len);
    unsigned int global_register(uint64_t offset, uint64_t *value) const;
    unsigned int mailbox_register(uint32_t core, uint64_t offset, uint64_t *value) const;
    bool read_word(uint64_t offset, uint32_t *value) const;
    tlm::tlm_response_status check_write(uint64_t offset) const;
    void write_word(uint64_t offset, uint32_t value);
    void start(uint32_t core);
    void finish(uint32_t core, tpu_status status, const char *message);
    uint32_t stopped() const;

    // tpusim_memory: the chip's port and backdoor, over `mem`.
    static int port_access(void *ctx, uint64_t cycle, int we, uint32_t addr, uint8_t *data,
                           uint32_t len, uint32_t *latency);
    static int port_debug(void *ctx, int we, uint64_t addr, uint8_t *data, size_t len);

    tpu_tlm_config config_;
    tpusim_memory memory_;
    tpu_device *dev_ = nullptr;
    tpu_info info_{};
    sc_core::sc_time period_;
    sc_core::sc_time offset_;       // the edge being stepped, from the quantum's start
    tlm::tlm_generic_payload port_; // reused for every port access
    mailbox core_[kMaxCores];
    uint32_t running_ = 0;    // bit k: core k's submission is pending
    uint32_t irq_status_ = 0; // IRQ_STATUS
    sc_core::sc_event start_event_, irq_event_;
};

} // namespace tpu_vp

#endif

// tpu_tlm.cpp - see tpu_tlm.h; the register map and the timing argument are docs/systemc.md's.
#include "tools/tpu_vp/tpu_tlm.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

namespace tpu_vp
{

static_assert(TPU_TLM_PERF + 8 * TPU_PERF_COUNT <= TPU_TLM_END_CYCLE, "counters overlap END_CYCLE");

tpu_tlm::tpu_tlm(sc_core::sc_module_name name, const tpu_tlm_config &config)
    : sc_module(name), host("host"), mem("mem"), clk("clk"), irq("irq"),
      config_(config), memory_{this, port_access, port_debug}
{
    host.register_b_transport(this, &tpu_tlm::b_transport);
    host.register_transport_dbg(this, &tpu_tlm::transport_dbg);
    host.register_get_direct_mem_ptr(this, &tpu_tlm::get_direct_mem_ptr);
    mem.register_invalidate_direct_mem_ptr(this, &tpu_tlm::invalidate_direct_mem_ptr);
    SC_THREAD(clock_thread);
    SC_METHOD(drive_irq);
    sensitive << irq_event_;
    dont_initialize();
}

tpu_tlm::~tpu_tlm() { tpu_close(dev_); }

void tpu_tlm::end_of_elaboration()
{
    period_ = config_.period;
    // Each error stops here even when the platform's report handler does not throw.
    if (clk.size()) {
        auto *clock = dynamic_cast<sc_core::sc_clock *>(clk.get_interface());
        if (!clock)
            return SC_REPORT_ERROR(name(), "clk must be bound to an sc_clock (its period is the "
                                           "chip's)");
        period_ = clock->period();
    }
    if (period_ == sc_core::SC_ZERO_TIME)
        return SC_REPORT_ERROR(name(), "the clock period must not be zero");
    if (config_.quantum == 0)
        return SC_REPORT_ERROR(name(), "quantum must be at least 1 clock edge");
    tpusim_config device = config_.device;
    device.memory = &memory_;
    char err[256];
    if (tpu_open(&device, config_.verify, &dev_, err, sizeof err) != TPU_OK)
        return SC_REPORT_ERROR(name(), err);
    tpu_set_budget(dev_, config_.max_cycles);
    tpu_query(dev_, &info_);
}

// ------------------------------------------------------------------ the chip's port --

int tpu_tlm::port_access(void *ctx, uint64_t, int we, uint32_t addr, uint8_t *data, uint32_t len,
                         uint32_t *latency)
{
    auto *t = static_cast<tpu_tlm *>(ctx);
    tlm::tlm_generic_payload &p = t->port_;
    p.set_command(we ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    p.set_address(addr);
    p.set_data_ptr(data);
    p.set_data_length(len);
    p.set_streaming_width(len);
    p.set_byte_enable_ptr(nullptr);
    p.set_byte_enable_length(0);
    p.set_dmi_allowed(false);
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    // The access happens at this edge's time within the quantum: the target sees it there.
    sc_core::sc_time delay = t->offset_;
    t->mem->b_transport(p, delay);
    if (!p.is_response_ok())
        return -1;
    const uint64_t spent = delay > t->offset_ ? (delay - t->offset_).value() : 0;
    const uint64_t period = t->period_.value();
    const uint64_t cycles = (spent + period - 1) / period;
    *latency = static_cast<uint32_t>(
        std::clamp<uint64_t>(cycles, 1, std::numeric_limits<uint32_t>::max()));
    return 0;
}

int tpu_tlm::port_debug(void *ctx, int we, uint64_t addr, uint8_t *data, size_t len)
{
    auto *t = static_cast<tpu_tlm *>(ctx);
    tlm::tlm_generic_payload p;
    p.set_command(we ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    p.set_address(addr);
    p.set_data_ptr(data);
    p.set_data_length(static_cast<unsigned int>(len)); // len <= mem_size < 2^32
    return t->mem->transport_dbg(p) == len ? 0 : -1;
}

// ------------------------------------------------------------------------ the clock --

uint32_t tpu_tlm::stopped() const
{
    uint32_t done = 0;
    for (uint32_t k = 0; k < kMaxCores; k++)
        if ((running_ >> k & 1) && tpu_core_done(dev_, k))
            done |= 1u << k;
    return done;
}

// Up to `quantum` edges in a row, the chip ahead of SystemC time, then as many periods waited.
// A quantum ends at the edge where a submission stops, so that its interrupt is raised at that
// edge's time and the host's reaction lands before the next edge, as with a quantum of 1.
void tpu_tlm::clock_thread()
{
    for (;;) {
        while (!running_)
            wait(start_event_);
        next_edge();
        while (running_) {
            uint64_t n = 0;
            uint32_t done = 0;
            while (n < config_.quantum && !done) {
                offset_ = period_ * static_cast<double>(n);
                tpu_step(dev_, 1);
                n++;
                done = stopped();
            }
            offset_ = sc_core::SC_ZERO_TIME;
            if (!done) {
                wait(period_ * static_cast<double>(n));
                continue;
            }
            if (n > 1)
                wait(period_ * static_cast<double>(n - 1));
            for (uint32_t k = 0; k < kMaxCores; k++)
                if (done >> k & 1) {
                    const tpu_status st = tpu_wait_core(dev_, k, 0);
                    finish(k, st, st == TPU_OK ? "" : tpu_last_error(dev_));
                }
            wait(period_);
        }
    }
}

// Strictly after now, as an sc_clock's posedge_event is when waited for at one of its edges.
void tpu_tlm::next_edge()
{
    if (clk.size()) {
        wait(clk->posedge_event());
        return;
    }
    const uint64_t phase = sc_core::sc_time_stamp().value() % period_.value();
    wait(period_ - sc_core::sc_time::from_value(phase));
}

void tpu_tlm::finish(uint32_t k, tpu_status status, const char *message)
{
    mailbox &m = core_[k];
    m.status = TPU_TLM_DONE;
    m.result = status;
    m.end_cycle = tpu_cycle(dev_);
    if (tpu_perf_core(dev_, k, &m.perf) != TPU_OK)
        m.perf = tpu_perf_report{};
    std::snprintf(m.message, sizeof m.message, "%s", message);
    running_ &= ~(1u << k);
    irq_status_ |= 1u << k;
    irq_event_.notify(sc_core::SC_ZERO_TIME);
}

void tpu_tlm::start(uint32_t k)
{
    mailbox &m = core_[k];
    const tpu_status st = tpu_submit_at(dev_, k, m.stream_addr, m.stream_bytes);
    if (st != TPU_OK) {
        finish(k, st, tpu_last_error(dev_));
        return;
    }
    m.status = TPU_TLM_RUNNING;
    running_ |= 1u << k;
    start_event_.notify(sc_core::SC_ZERO_TIME);
}

// The one writer of irq (a signal takes one).
void tpu_tlm::drive_irq() { irq.write(irq_status_ != 0); }

// ------------------------------------------------------------------- the registers --

// The global register at off: its width in bytes (8: a 64-bit one, either of whose words off
// may be), or 0 if there is none.
unsigned int tpu_tlm::global_register(uint64_t off, uint64_t *value) const
{
    switch (off) {
    case TPU_TLM_ID: *value = TPU_TLM_ID_MAGIC; return 4;
    case TPU_TLM_VERSION: *value = TPU_TLM_VERSION_1; return 4;
    case TPU_TLM_ARRAY_N: *value = info_.array_n; return 4;
    case TPU_TLM_CORES: *value = info_.cores; return 4;
    case TPU_TLM_UB_ROWS: *value = info_.ub_rows; return 4;
    case TPU_TLM_ACC_ROWS: *value = info_.acc_rows; return 4;
    case TPU_TLM_WFIFO_TILES: *value = info_.wfifo_tiles; return 4;
    case TPU_TLM_IQ_DEPTH: *value = info_.iq_depth; return 4;
    case TPU_TLM_ISA_VERSION: *value = info_.version; return 4;
    case TPU_TLM_MEM_LATENCY: *value = info_.mem_latency; return 4;
    case TPU_TLM_MEM_BANDWIDTH: *value = info_.mem_bytes_per_cycle; return 4;
    case TPU_TLM_IRQ_STATUS: *value = irq_status_; return 4;
    default: break;
    }
    switch (off & ~7ull) {
    case TPU_TLM_MEM_SIZE: *value = info_.mem_size; return 8;
    case TPU_TLM_MEM_WINDOW: *value = TPU_TLM_MEM_BASE; return 8;
    case TPU_TLM_CYCLE: *value = tpu_cycle(dev_); return 8;
    default: return 0;
    }
}

// Offset r of core k's mailbox, as global_register (the message aside).
unsigned int tpu_tlm::mailbox_register(uint32_t k, uint64_t r, uint64_t *value) const
{
    const mailbox &m = core_[k];
    const tpu_perf_report &p = m.perf;
    switch (r) {
    case TPU_TLM_STREAM_ADDR: *value = m.stream_addr; return 4;
    case TPU_TLM_STREAM_BYTES: *value = m.stream_bytes; return 4;
    case TPU_TLM_START: *value = 0; return 4;
    case TPU_TLM_STATUS: *value = m.status; return 4;
    case TPU_TLM_RESULT: *value = static_cast<uint32_t>(m.result); return 4;
    case TPU_TLM_VERIFIED: *value = static_cast<uint32_t>(p.verified != 0); return 4;
    default: break;
    }
    if ((r & ~7ull) == TPU_TLM_END_CYCLE) {
        *value = m.end_cycle;
        return 8;
    }
    if (r < TPU_TLM_CYCLES || r >= TPU_TLM_PERF + 8 * TPU_PERF_COUNT)
        return 0;
    switch (r & ~7ull) {
    case TPU_TLM_CYCLES: *value = p.cycles; break;
    case TPU_TLM_FIRMWARE_CYCLES: *value = p.firmware_cycles; break;
    case TPU_TLM_INSTRUCTIONS: *value = p.instructions; break;
    case TPU_TLM_MEM_STALL: *value = p.mem_stall_cycles; break;
    case TPU_TLM_WALL_NS: *value = static_cast<uint64_t>(p.wall_seconds * 1e9); break;
    default: *value = p.counters[(r - TPU_TLM_PERF) / 8]; break;
    }
    return 8;
}

bool tpu_tlm::read_word(uint64_t off, uint32_t *v) const
{
    uint64_t value = 0;
    unsigned int width = 0;
    if (off < TPU_TLM_CORE_BASE) {
        width = global_register(off, &value);
    } else {
        const uint64_t k = (off - TPU_TLM_CORE_BASE) / TPU_TLM_CORE_STRIDE;
        if (k < info_.cores)
            width = mailbox_register(static_cast<uint32_t>(k),
                                     (off - TPU_TLM_CORE_BASE) % TPU_TLM_CORE_STRIDE, &value);
    }
    *v = static_cast<uint32_t>(width == 8 && off & 4 ? value >> 32 : value);
    return width != 0;
}

tlm::tlm_response_status tpu_tlm::check_write(uint64_t off) const
{
    uint32_t v;
    if (!read_word(off, &v))
        return tlm::TLM_ADDRESS_ERROR_RESPONSE;
    if (off == TPU_TLM_IRQ_STATUS)
        return tlm::TLM_OK_RESPONSE;
    if (off < TPU_TLM_CORE_BASE)
        return tlm::TLM_COMMAND_ERROR_RESPONSE;
    const uint64_t k = (off - TPU_TLM_CORE_BASE) / TPU_TLM_CORE_STRIDE;
    const uint64_t r = (off - TPU_TLM_CORE_BASE) % TPU_TLM_CORE_STRIDE;
    if (r == TPU_TLM_STREAM_ADDR || r == TPU_TLM_STREAM_BYTES)
        return tlm::TLM_OK_RESPONSE;
    if (r == TPU_TLM_START) // a core takes one submission at a time
        return running_ >> k & 1 ? tlm::TLM_GENERIC_ERROR_RESPONSE : tlm::TLM_OK_RESPONSE;
    return tlm::TLM_COMMAND_ERROR_RESPONSE;
}

void tpu_tlm::write_word(uint64_t off, uint32_t v)
{
    if (off == TPU_TLM_IRQ_STATUS) {
        irq_status_ &= ~v;
        irq_event_.notify(sc_core::SC_ZERO_TIME);
        return;
    }
    const uint32_t k = static_cast<uint32_t>((off - TPU_TLM_CORE_BASE) / TPU_TLM_CORE_STRIDE);
    switch ((off - TPU_TLM_CORE_BASE) % TPU_TLM_CORE_STRIDE) {
    case TPU_TLM_STREAM_ADDR: core_[k].stream_addr = v; break;
    case TPU_TLM_STREAM_BYTES: core_[k].stream_bytes = v; break;
    default: start(k); break; // check_write let only START through
    }
}

tlm::tlm_response_status tpu_tlm::register_access(tlm::tlm_generic_payload &p)
{
    const uint64_t a = p.get_address();
    const unsigned int len = p.get_data_length();
    uint8_t *data = p.get_data_ptr();
    if (p.get_byte_enable_ptr())
        return tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;
    if (p.get_streaming_width() < len)
        return tlm::TLM_BURST_ERROR_RESPONSE;
    // A core's message window: reads of any length inside it.
    if (a >= TPU_TLM_CORE_BASE) {
        const uint64_t k = (a - TPU_TLM_CORE_BASE) / TPU_TLM_CORE_STRIDE;
        const uint64_t r = (a - TPU_TLM_CORE_BASE) % TPU_TLM_CORE_STRIDE;
        if (k < info_.cores && r >= TPU_TLM_MESSAGE) {
            if (len > TPU_TLM_CORE_STRIDE - r)
                return tlm::TLM_ADDRESS_ERROR_RESPONSE;
            if (!p.is_read())
                return tlm::TLM_COMMAND_ERROR_RESPONSE;
            std::memcpy(data, core_[k].message + (r - TPU_TLM_MESSAGE), len);
            return tlm::TLM_OK_RESPONSE;
        }
    }
    if (len != 4 && len != 8)
        return tlm::TLM_BURST_ERROR_RESPONSE;
    if (a % len)
        return tlm::TLM_ADDRESS_ERROR_RESPONSE;
    uint32_t words[2];
    for (unsigned int i = 0; i < len / 4; i++)
        if (!read_word(a + 4 * i, &words[i]))
            return tlm::TLM_ADDRESS_ERROR_RESPONSE;
    if (p.is_read()) {
        std::memcpy(data, words, len);
        return tlm::TLM_OK_RESPONSE;
    }
    // Every word is checked before any takes effect: a refused access changes nothing.
    for (unsigned int i = 0; i < len / 4; i++) {
        const tlm::tlm_response_status st = check_write(a + 4 * i);
        if (st != tlm::TLM_OK_RESPONSE)
            return st;
    }
    std::memcpy(words, data, len);
    for (unsigned int i = 0; i < len / 4; i++)
        write_word(a + 4 * i, words[i]);
    return tlm::TLM_OK_RESPONSE;
}

// --------------------------------------------------------------------- the host side --

// With verify on, the host's writes into device memory go through the device-side driver, whose
// golden models keep a mirror of the memory (and check writes into what pending submissions
// use); the driver reaches the memory by its debug transport.
tlm::tlm_response_status tpu_tlm::memory_write(uint32_t addr, const uint8_t *data, uint32_t len,
                                               const unsigned char *be, unsigned int be_len)
{
    if (len == 0)
        return tlm::TLM_OK_RESPONSE;
    if (be && !be_len)
        return tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;
    std::vector<uint8_t> merged;
    if (be) {
        merged.resize(len);
        if (tpu_read(dev_, addr, merged.data(), len) != TPU_OK)
            return tlm::TLM_GENERIC_ERROR_RESPONSE;
        for (uint32_t i = 0; i < len; i++)
            if (be[i % be_len] == TLM_BYTE_ENABLED)
                merged[i] = data[i];
        data = merged.data();
    }
    return tpu_write(dev_, addr, data, len) == TPU_OK ? tlm::TLM_OK_RESPONSE
                                                      : tlm::TLM_GENERIC_ERROR_RESPONSE;
}

void tpu_tlm::b_transport(tlm::tlm_generic_payload &p, sc_core::sc_time &delay)
{
    const uint64_t a = p.get_address();
    if (p.get_command() == tlm::TLM_IGNORE_COMMAND) {
        p.set_response_status(tlm::TLM_OK_RESPONSE);
        return;
    }
    if (a < TPU_TLM_MEM_BASE) {
        p.set_response_status(register_access(p));
        return;
    }
    const uint64_t off = a - TPU_TLM_MEM_BASE;
    const uint64_t len = p.get_data_length();
    if (off > info_.mem_size || len > info_.mem_size - off) {
        p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    if (p.is_write() && config_.verify) {
        p.set_response_status(p.get_streaming_width() < len
                                  ? tlm::TLM_BURST_ERROR_RESPONSE
                                  : memory_write(static_cast<uint32_t>(off), p.get_data_ptr(),
                                                 static_cast<uint32_t>(len),
                                                 p.get_byte_enable_ptr(),
                                                 p.get_byte_enable_length()));
        return;
    }
    p.set_address(off);
    mem->b_transport(p, delay);
    p.set_address(a);
}

unsigned int tpu_tlm::transport_dbg(tlm::tlm_generic_payload &p)
{
    const uint64_t a = p.get_address();
    if (a < TPU_TLM_MEM_BASE || a - TPU_TLM_MEM_BASE >= info_.mem_size)
        return 0;
    const uint64_t off = a - TPU_TLM_MEM_BASE;
    const unsigned int len =
        static_cast<unsigned int>(std::min<uint64_t>(p.get_data_length(), info_.mem_size - off));
    if (p.is_write() && config_.verify)
        return memory_write(static_cast<uint32_t>(off), p.get_data_ptr(), len, nullptr, 0) ==
                       tlm::TLM_OK_RESPONSE
                   ? len
                   : 0;
    p.set_address(off);
    p.set_data_length(len);
    const unsigned int n = mem->transport_dbg(p);
    p.set_address(a);
    return n;
}

// The memory target's DMI, moved to the window and clipped to device memory; read-only with
// verify on (a write through a pointer would pass the golden models' mirror by).
bool tpu_tlm::get_direct_mem_ptr(tlm::tlm_generic_payload &p, tlm::tlm_dmi &dmi)
{
    const uint64_t a = p.get_address();
    if (a < TPU_TLM_MEM_BASE) { // the registers: never, anywhere below the window
        dmi.set_start_address(0);
        dmi.set_end_address(TPU_TLM_MEM_BASE - 1);
        return false;
    }
    const uint64_t off = a - TPU_TLM_MEM_BASE;
    if (off >= info_.mem_size) {
        dmi.set_start_address(TPU_TLM_MEM_BASE + info_.mem_size);
        dmi.set_end_address(std::numeric_limits<uint64_t>::max());
        return false;
    }
    p.set_address(off);
    const bool ok = mem->get_direct_mem_ptr(p, dmi);
    p.set_address(a);
    dmi.set_end_address(std::min<uint64_t>(dmi.get_end_address(), info_.mem_size - 1) +
                        TPU_TLM_MEM_BASE);
    dmi.set_start_address(dmi.get_start_address() + TPU_TLM_MEM_BASE);
    if (!ok)
        return false;
    if (config_.verify) {
        if (!dmi.is_read_allowed())
            return false;
        dmi.set_granted_access(tlm::tlm_dmi::DMI_ACCESS_READ);
    }
    return true;
}

void tpu_tlm::invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end)
{
    if (start >= info_.mem_size)
        return;
    host->invalidate_direct_mem_ptr(start + TPU_TLM_MEM_BASE,
                                    std::min<uint64_t>(end, info_.mem_size - 1) + TPU_TLM_MEM_BASE);
}

} // namespace tpu_vp

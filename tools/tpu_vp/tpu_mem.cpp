// tpu_mem.cpp - see tpu_mem.h.
#include "tools/tpu_vp/tpu_mem.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace tpu_vp
{

void tpu_mem::FreeDeleter::operator()(uint8_t *p) const { std::free(p); }

tpu_mem::tpu_mem(sc_core::sc_module_name name, uint64_t size, uint32_t latency,
                 const sc_core::sc_time &period)
    : sc_module(name), socket("socket"),
      data_(static_cast<uint8_t *>(std::calloc(size ? size : 1, 1))), size_(size),
      latency_(period * latency)
{
    if (!data_)
        throw std::bad_alloc();
    socket.register_b_transport(this, &tpu_mem::b_transport);
    socket.register_get_direct_mem_ptr(this, &tpu_mem::get_direct_mem_ptr);
    socket.register_transport_dbg(this, &tpu_mem::transport_dbg);
}

void tpu_mem::invalidate_dmi(uint64_t start, uint64_t end)
{
    socket->invalidate_direct_mem_ptr(start, end);
}

void tpu_mem::b_transport(tlm::tlm_generic_payload &p, sc_core::sc_time &delay)
{
    const uint64_t addr = p.get_address();
    const uint64_t len = p.get_data_length();
    if (addr > size_ || len > size_ - addr) {
        p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    if (p.get_streaming_width() < len) {
        p.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
        return;
    }
    const unsigned char *be = p.get_byte_enable_ptr();
    const unsigned int be_len = p.get_byte_enable_length();
    if (be && !be_len) {
        p.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
        return;
    }
    uint8_t *mem = data_.get() + addr;
    uint8_t *data = p.get_data_ptr();
    if (p.is_read() || p.is_write()) {
        if (!be)
            std::memcpy(p.is_read() ? data : mem, p.is_read() ? mem : data, len);
        else
            for (uint64_t i = 0; i < len; i++)
                if (be[i % be_len] == TLM_BYTE_ENABLED) {
                    if (p.is_read())
                        data[i] = mem[i];
                    else
                        mem[i] = data[i];
                }
    }
    delay += latency_;
    p.set_dmi_allowed(true);
    p.set_response_status(tlm::TLM_OK_RESPONSE);
}

bool tpu_mem::get_direct_mem_ptr(tlm::tlm_generic_payload &, tlm::tlm_dmi &dmi)
{
    dmi.set_dmi_ptr(data_.get());
    dmi.set_start_address(0);
    dmi.set_end_address(size_ ? size_ - 1 : 0);
    dmi.set_granted_access(size_ ? tlm::tlm_dmi::DMI_ACCESS_READ_WRITE
                                 : tlm::tlm_dmi::DMI_ACCESS_NONE);
    dmi.set_read_latency(latency_);
    dmi.set_write_latency(latency_);
    return size_ != 0;
}

unsigned int tpu_mem::transport_dbg(tlm::tlm_generic_payload &p)
{
    const uint64_t addr = p.get_address();
    if (addr >= size_ || !(p.is_read() || p.is_write()))
        return 0;
    const uint64_t n = std::min<uint64_t>(p.get_data_length(), size_ - addr);
    std::memcpy(p.is_read() ? p.get_data_ptr() : data_.get() + addr,
                p.is_read() ? data_.get() + addr : p.get_data_ptr(), n);
    return static_cast<unsigned int>(n);
}

} // namespace tpu_vp

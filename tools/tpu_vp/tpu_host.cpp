// tpu_host.cpp - see tpu_host.h.
#include "tools/tpu_vp/tpu_host.h"

#include <algorithm>

#include "tools/tpu_vp/tpu_tlm.h"

namespace tpu_vp
{

tpu_host::tpu_host(tlm::tlm_initiator_socket<> &bus, sc_core::sc_in<bool> &irq, uint64_t base)
    : bus_(bus), irq_(irq), base_(base), ops_{this, write, read, query, start, wait, cycle}
{
}

tlm::tlm_response_status tpu_host::transport(tlm::tlm_command cmd, uint64_t addr, void *data,
                                             unsigned int len)
{
    tlm::tlm_generic_payload p;
    p.set_command(cmd);
    p.set_address(base_ + addr);
    p.set_data_ptr(static_cast<unsigned char *>(data));
    p.set_data_length(len);
    p.set_streaming_width(len);
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME; // untimed: not consumed
    bus_->b_transport(p, delay);
    return p.get_response_status();
}

int tpu_host::reg_read(uint64_t addr, uint32_t *v)
{
    return transport(tlm::TLM_READ_COMMAND, addr, v, 4) == tlm::TLM_OK_RESPONSE ? 0 : -1;
}

int tpu_host::reg_read64(uint64_t addr, uint64_t *v)
{
    return transport(tlm::TLM_READ_COMMAND, addr, v, 8) == tlm::TLM_OK_RESPONSE ? 0 : -1;
}

// Device memory in pieces a 32-bit data length holds.
int tpu_host::write(void *ctx, uint32_t addr, const void *src, size_t n)
{
    auto *h = static_cast<tpu_host *>(ctx);
    // b_transport's data pointer is not const; a write only reads it.
    auto *p = static_cast<uint8_t *>(const_cast<void *>(src));
    for (size_t done = 0; done < n;) {
        const unsigned int len = static_cast<unsigned int>(std::min<size_t>(n - done, 1u << 30));
        if (h->transport(tlm::TLM_WRITE_COMMAND, TPU_TLM_MEM_BASE + addr + done, p + done, len) !=
            tlm::TLM_OK_RESPONSE)
            return -1;
        done += len;
    }
    return 0;
}

int tpu_host::read(void *ctx, uint32_t addr, void *dst, size_t n)
{
    auto *h = static_cast<tpu_host *>(ctx);
    auto *p = static_cast<uint8_t *>(dst);
    for (size_t done = 0; done < n;) {
        const unsigned int len = static_cast<unsigned int>(std::min<size_t>(n - done, 1u << 30));
        if (h->transport(tlm::TLM_READ_COMMAND, TPU_TLM_MEM_BASE + addr + done, p + done, len) !=
            tlm::TLM_OK_RESPONSE)
            return -1;
        done += len;
    }
    return 0;
}

int tpu_host::query(void *ctx, tpu_info *info)
{
    auto *h = static_cast<tpu_host *>(ctx);
    uint32_t id = 0;
    if (h->reg_read(TPU_TLM_ID, &id) || id != TPU_TLM_ID_MAGIC)
        return -1;
    const struct {
        uint64_t reg;
        uint32_t *field;
    } words[] = {
        {TPU_TLM_ARRAY_N, &info->array_n},
        {TPU_TLM_CORES, &info->cores},
        {TPU_TLM_UB_ROWS, &info->ub_rows},
        {TPU_TLM_ACC_ROWS, &info->acc_rows},
        {TPU_TLM_WFIFO_TILES, &info->wfifo_tiles},
        {TPU_TLM_IQ_DEPTH, &info->iq_depth},
        {TPU_TLM_ISA_VERSION, &info->version},
        {TPU_TLM_MEM_LATENCY, &info->mem_latency},
        {TPU_TLM_MEM_BANDWIDTH, &info->mem_bytes_per_cycle},
    };
    for (const auto &w : words)
        if (h->reg_read(w.reg, w.field))
            return -1;
    return h->reg_read64(TPU_TLM_MEM_SIZE, &info->mem_size);
}

int tpu_host::start(void *ctx, uint32_t core, uint32_t addr, uint32_t bytes)
{
    auto *h = static_cast<tpu_host *>(ctx);
    const uint64_t mbox = TPU_TLM_CORE_BASE + core * TPU_TLM_CORE_STRIDE;
    uint32_t stream[2] = {addr, bytes}, go = 1;
    return h->transport(tlm::TLM_WRITE_COMMAND, mbox + TPU_TLM_STREAM_ADDR, stream, 8) ==
                       tlm::TLM_OK_RESPONSE &&
                   h->transport(tlm::TLM_WRITE_COMMAND, mbox + TPU_TLM_START, &go, 4) ==
                       tlm::TLM_OK_RESPONSE
               ? 0
               : -1;
}

uint64_t tpu_host::cycle(void *ctx)
{
    uint64_t c = 0;
    static_cast<tpu_host *>(ctx)->reg_read64(TPU_TLM_CYCLE, &c); // 0 if refused
    return c;
}

int tpu_host::wait(void *ctx, uint32_t cores, uint32_t *core_out, tpu_remote_result *out)
{
    auto *h = static_cast<tpu_host *>(ctx);
    while (!(h->ended_ & cores)) {
        uint32_t status;
        if (h->reg_read(TPU_TLM_IRQ_STATUS, &status))
            return -1;
        if (status && h->transport(tlm::TLM_WRITE_COMMAND, TPU_TLM_IRQ_STATUS, &status, 4) !=
                          tlm::TLM_OK_RESPONSE)
            return -1;
        h->ended_ |= status;
        if (h->ended_ & cores)
            break;
        // A high irq shows bits just cleared until its driver runs (or new ones that keep it
        // high): look again a delta later. A low one rises with the next bit.
        if (h->irq_.read())
            sc_core::wait(sc_core::SC_ZERO_TIME);
        else
            sc_core::wait(h->irq_.value_changed_event());
    }
    // Of the cores that ended, the first (bits kept from earlier waits may be older).
    uint32_t core = 32;
    uint64_t first = 0;
    for (uint32_t k = 0; k < 32; k++) {
        uint64_t at = 0;
        if (!(h->ended_ & cores & 1u << k))
            continue;
        if (h->reg_read64(TPU_TLM_CORE_BASE + k * TPU_TLM_CORE_STRIDE + TPU_TLM_END_CYCLE, &at))
            return -1;
        if (core == 32 || at < first) {
            core = k;
            first = at;
        }
    }
    h->ended_ &= ~(1u << core);
    *core_out = core;
    const uint64_t mbox = TPU_TLM_CORE_BASE + core * TPU_TLM_CORE_STRIDE;
    uint32_t result;
    tpu_perf_report &p = out->perf;
    uint64_t wall_ns;
    const struct {
        uint64_t reg;
        uint64_t *value;
    } wide[] = {
        {TPU_TLM_CYCLES, &p.cycles},
        {TPU_TLM_FIRMWARE_CYCLES, &p.firmware_cycles},
        {TPU_TLM_INSTRUCTIONS, &p.instructions},
        {TPU_TLM_MEM_STALL, &p.mem_stall_cycles},
        {TPU_TLM_WALL_NS, &wall_ns},
    };
    uint32_t verified;
    if (h->reg_read(mbox + TPU_TLM_RESULT, &result) ||
        h->reg_read(mbox + TPU_TLM_VERIFIED, &verified))
        return -1;
    p.verified = verified != 0;
    for (const auto &w : wide)
        if (h->reg_read64(mbox + w.reg, w.value))
            return -1;
    for (int i = 0; i < TPU_PERF_COUNT; i++)
        if (h->reg_read64(mbox + TPU_TLM_PERF + 8 * i, &p.counters[i]))
            return -1;
    if (h->transport(tlm::TLM_READ_COMMAND, mbox + TPU_TLM_MESSAGE, out->msg, sizeof out->msg) !=
        tlm::TLM_OK_RESPONSE)
        return -1;
    out->msg[sizeof out->msg - 1] = '\0';
    out->status = static_cast<tpu_status>(result);
    p.wall_seconds = 1e-9 * static_cast<double>(wall_ns);
    return 0;
}

} // namespace tpu_vp

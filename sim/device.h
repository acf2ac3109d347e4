// device.h - the device behind tpusim.h, internal to libtpusim: Device, the pins and clock of one
// verilated tpu_core or tpu_chip and its trace window (device.cpp implements it for every built
// model), the table of built models, and what the C API (tpusim.cpp) needs of them.
#ifndef TPU_SIM_DEVICE_H
#define TPU_SIM_DEVICE_H

#include "sim/feed.h"
#include "sim/memmodel.h"
#include "sim/tpusim.h"
#include "sim/trace_files.h"

#include <verilated_fst_c.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace tpu
{

// CSR offsets are TPU_CSR_ADDR_BITS wide on the core's port, TPU_CHIP_CSR_ADDR_BITS on the
// chip's: reads beyond them return 0 and writes only spend their clock edge.
constexpr uint32_t kCsrEnd = 1u << TPU_CSR_ADDR_BITS;
constexpr uint32_t kChipCsrEnd = 1u << TPU_CHIP_CSR_ADDR_BITS;

// The pins and clock of one verilated tpu_core or tpu_chip, independent of N and C; device.cpp's
// Model<V> implements it for each generated core class, Chip<V, C> for each chip class. Core k <
// cores(); a lone core is core 0.
class Device
{
  public:
    Device(MemModel &mem, uint32_t n, uint32_t cores) : mem_(mem), n_(n), cores_(cores), buf_(4 * n)
    {
    }
    virtual ~Device() = default;
    Device(const Device &) = delete;
    Device &operator=(const Device &) = delete;

    uint32_t cores() const { return cores_; }
    uint64_t cycle() const { return cycle_; }
    // One clock edge; the memory model takes part unless `memory` is false.
    virtual void clock(bool memory) = 0;
    virtual uint32_t reg_read(uint32_t k, uint32_t offset) = 0;
    virtual uint32_t chip_reg_read(uint32_t offset) = 0; // 0 on a lone core
    virtual bool irq(uint32_t k) const = 0;
    virtual void set_iq(uint32_t k, const tpusim_insn *insn) = 0; // nullptr: iq_valid low
    // iq_ready of core k as sampled before the last edge.
    bool iq_was_ready(uint32_t k) const { return iq_ready_ >> k & 1; }

    // One clock edge of the API (every one but reset's), with the attached feeds replayed.
    void edge()
    {
        const tpusim_insn *offer[TPUSIM_CORES_MAX] = {};
        for (uint32_t k = 0; fed_ >> k; k++)
            if ((fed_ >> k & 1) && (offer[k] = tpusim_feed_offer(feed_[k])))
                set_iq(k, offer[k]);
        clock(true);
        for (uint32_t k = 0; fed_ >> k; k++)
            if (offer[k]) {
                set_iq(k, nullptr);
                if (iq_was_ready(k))
                    tpusim_feed_take(feed_[k]);
            }
    }
    tpusim_feed *feed(uint32_t k) const { return fed_ >> k & 1 ? feed_[k] : nullptr; }
    void attach(uint32_t k, tpusim_feed *f)
    {
        feed_[k] = f;
        fed_ = f ? fed_ | 1u << k : fed_ & ~(1u << k);
    }

    // rst high for one edge; the memory model's queues are emptied and it sits the edge out, so
    // nothing the core offers in the reset cycle is accepted. Feeds are detached.
    void reset()
    {
        fed_ = 0;
        mem_.clear();
        drive_memory();
        set_rst(true);
        clock(false);
        set_rst(false);
    }
    void reg_write(uint32_t k, uint32_t offset, uint32_t v)
    {
        set_csr(k, offset < kCsrEnd, offset, v);
        edge();
        set_csr(k, false, offset, 0);
    }
    // The same write to every core's CSR port in one clock edge.
    void reg_write_all(uint32_t offset, uint32_t v)
    {
        for (uint32_t k = 0; k < cores_; k++)
            set_csr(k, offset < kCsrEnd, offset, v);
        edge();
        for (uint32_t k = 0; k < cores_; k++)
            set_csr(k, false, offset, 0);
    }
    void chip_reg_write(uint32_t offset, uint32_t v)
    {
        set_chip_csr(offset < kChipCsrEnd, offset, v);
        edge();
        set_chip_csr(false, offset, 0);
    }
    void ub_row(uint32_t k, uint32_t row, int8_t *dst)
    {
        ub_bytes(k, row, buf_.data());
        std::memcpy(dst, buf_.data(), n_);
    }
    void acc_row(uint32_t k, uint32_t row, int32_t *dst)
    {
        acc_bytes(k, row, buf_.data());
        for (uint32_t c = 0; c < n_; c++) {
            const uint8_t *b = &buf_[4 * c];
            const uint32_t u = b[0] | b[1] << 8 | b[2] << 16 | static_cast<uint32_t>(b[3]) << 24;
            std::memcpy(&dst[c], &u, 4);
        }
    }

    // Closes a trace already open, then opens path for the cycles [from, to). The trace is written
    // to a temporary beside path (the FST writer adds "<temporary>.hier" while it is open) and
    // renamed into place when it closes.
    int trace_open(const char *path, int format, uint64_t from, uint64_t to, std::string *err);
    // Closes the trace, if one is open, and puts it in place. Returns 0, or -1 with the reason in
    // err (nothing then left under either name); *cycles is how many cycles it holds.
    int trace_close(std::string *err, uint64_t *cycles)
    {
        trace_close();
        *cycles = last_cycles_;
        last_cycles_ = 0; // reported once
        if (last_err_.empty())
            return 0;
        *err = last_err_;
        last_err_.clear();
        return -1;
    }
    // The same when nobody asks (the window ended, a new trace, the device closes): the outcome
    // waits for the next trace_close(err, cycles).
    void trace_close();

  protected:
    virtual void set_rst(bool rst) = 0;
    virtual void set_csr(uint32_t k, bool we, uint32_t offset, uint32_t wdata) = 0;
    virtual void set_chip_csr(bool we, uint32_t offset, uint32_t wdata) = 0; // none on a lone core
    virtual void drive_memory() = 0;
    virtual void attach_trace(VerilatedFstC *tfp) = 0;
    virtual void ub_bytes(uint32_t k, uint32_t row, uint8_t *dst) = 0;  // N bytes
    virtual void acc_bytes(uint32_t k, uint32_t row, uint8_t *dst) = 0; // 4N bytes

    // Dump at trace time t if cycle_ is inside the window.
    void dump(uint64_t t)
    {
        if (!tfp_ || cycle_ < from_ || cycle_ >= to_ || !trace_err_.empty())
            return;
        if ((dumped_ & (kSpaceCheckCycles - 1)) == 0 && !space_left(&trace_err_)) {
            trace_err_ += ", at cycle " + std::to_string(cycle_) + " of the trace";
            return;
        }
        tfp_->dump(t);
    }
    // Count the edge; the window closes itself at its end.
    void edge_done()
    {
        if (tfp_ && cycle_ >= from_ && cycle_ < to_)
            dumped_++;
        cycle_++;
        if (tfp_ && cycle_ >= to_)
            trace_close();
    }

    MemModel &mem_;
    const uint32_t n_;
    const uint32_t cores_;
    std::vector<uint8_t> buf_; // one bus width (4N bytes) of scratch
    uint32_t iq_ready_ = 0;    // bit k: core k's iq_ready

  private:
    uint32_t fed_ = 0; // bit k: core k has a feed attached
    tpusim_feed *feed_[TPUSIM_CORES_MAX] = {};
    uint64_t cycle_ = 0;
    // Free space is checked (trace_space) before the trace opens and every kSpaceCheckCycles
    // cycles it holds: when short, the trace stops and fails.
    static constexpr uint64_t kSpaceCheckCycles = 1u << 14;
    bool space_left(std::string *err) const { return trace_files::trace_space(trace_path_, err); }

    std::unique_ptr<VerilatedFstC> tfp_;
    std::string trace_path_, fst_tmp_, trace_err_, last_err_;
    bool vcd_ = false;
    uint64_t from_ = 0, to_ = 0, dumped_ = 0, last_cycles_ = 0;
};

// Every built model: the lone cores (cores 0) first, ascending by N, then the chips, ascending
// by N and C.
struct ModelEntry {
    uint32_t n, cores;
    std::unique_ptr<Device> (*make)(MemModel &mem);
};
// The built models, kModelCount of them.
extern const ModelEntry kModels[];
extern const size_t kModelCount;
// The model for (n, cores), cores 0 for a lone core; nullptr if none was built.
const ModelEntry *find_model(uint32_t n, uint32_t cores);

} // namespace tpu

#endif

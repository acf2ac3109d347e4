// device.cpp - the cycle-accurate device of tpusim.h: a verilated tpu_core, or a verilated
// tpu_chip of C cores on one memory port, plus the memory model.
//
// Clocking. One cycle (one clock edge) is:
//   1. the inputs of the cycle are already driven: the host's (iq_*, csr_*) by the API call, the
//      memory's (mem_req_ready, mem_rsp_*) by the memory model from its state;
//   2. clk = 0, eval: the core's combinational outputs settle and are sampled (iq_ready for
//      tpusim_push, the memory request, mem_rsp_ready);
//   3. the memory model takes its clock edge with what it sampled (accepts the request, retires
//      the response the core took);
//   4. clk = 1, eval: the core's clock edge; it sees the memory outputs of step 1;
//   5. the memory model drives its outputs for the next cycle.
// So the memory model is synchronous logic on the core's clock: registered outputs, inputs sampled
// at the edge. In a trace, cycle c spans 10c..10c+10 ns with clk rising at 10c+5, and the
// memory's outputs change at 10c.
//
// CSR offsets are TPU_CSR_ADDR_BITS wide on the core's port, TPU_CHIP_CSR_ADDR_BITS on the
// chip's: reads beyond them return 0 and writes only spend their clock edge. A chip's per-core
// pins are vectors, core k's field at bits [k*W +: W] (docs/isa.md "Ports of tpu_chip");
// get_field and set_field reach them.
#include "io/tpuio.h"
#include "sim/feed.h"
#include "sim/memmodel.h"
#include "sim/tpu_models.h" // generated: the Vtpu_n<N> headers and TPU_FOR_EACH_MODEL
#include "sim/tpusim.h"
#include "sim/trace_files.h"
#include "sim/vl_bits.h"

#include <verilated.h>
#include <verilated_fst_c.h>
#include <verilated_sym_props.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

// Verilated::threadContextp(ctx), from vlcontext.cpp.
void tpusim_vl_thread_context(VerilatedContext *ctx);

namespace
{

constexpr uint32_t kCsrEnd = 1u << TPU_CSR_ADDR_BITS;
constexpr uint32_t kChipCsrEnd = 1u << TPU_CHIP_CSR_ADDR_BITS;

using namespace tpu::trace_files;
using tpu::get_bytes;
using tpu::get_field;
using tpu::kLittleEndian;
using tpu::MemModel;
using tpu::MemRequest;
using tpu::MemResponse;
using tpu::set_bytes;
using tpu::set_field;

// The pins and clock of one verilated tpu_core or tpu_chip, independent of N and C; Model<V> below
// implements it for each generated core class, Chip<V, C> for each chip class. Core k < cores();
// a lone core is core 0.
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
    int trace_open(const char *path, int format, uint64_t from, uint64_t to, std::string *err)
    {
        trace_close();
        if (format != TPUSIM_TRACE_FST && format != TPUSIM_TRACE_VCD) {
            *err = "unknown trace format " + std::to_string(format);
            return -1;
        }
        // A 5.006 model writes one trace format (FST here); VCD is converted from it on close.
        if (format == TPUSIM_TRACE_VCD && !on_path("fst2vcd")) {
            *err = "VCD traces need fst2vcd (gtkwave package) on PATH";
            return -1;
        }
        trace_path_ = path;
        if (!space_left(err))
            return -1;
        fst_tmp_ = temp_beside(trace_path_, err);
        if (fst_tmp_.empty())
            return -1;
        tpuio_track((fst_tmp_ + ".hier").c_str());
        tfp_.reset(new VerilatedFstC);
        attach_trace(tfp_.get());
        tfp_->set_time_unit("1ns");
        tfp_->set_time_resolution("1ns");
        tfp_->open(fst_tmp_.c_str());
        vcd_ = format == TPUSIM_TRACE_VCD;
        from_ = from;
        to_ = to ? to : UINT64_MAX;
        dumped_ = 0;
        trace_err_.clear();
        return 0;
    }
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
    void trace_close()
    {
        if (!tfp_)
            return;
        tfp_->close();
        tfp_.reset();
        remove_tracked(fst_tmp_ + ".hier"); // the writer removes it; a fault would not
        std::string err = trace_err_;
        if (err.empty() && !space_left(&err))
            err += " while the trace was closed";
        if (err.empty() && vcd_) {
            const std::string vcd_tmp = temp_beside(trace_path_, &err);
            if (!vcd_tmp.empty() && !fst_to_vcd(fst_tmp_, vcd_tmp)) {
                err = "fst2vcd could not convert the trace to " + trace_path_;
                remove_tracked(vcd_tmp);
            }
            remove_tracked(fst_tmp_);
            fst_tmp_ = vcd_tmp;
        }
        if (err.empty() && std::rename(fst_tmp_.c_str(), trace_path_.c_str()) != 0)
            err = "cannot rename the trace to " + trace_path_ + ": " + std::strerror(errno);
        if (!err.empty())
            std::remove(fst_tmp_.c_str());
        tpuio_untrack(fst_tmp_.c_str());
        last_err_ = err;
        last_cycles_ = dumped_;
    }

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
    bool space_left(std::string *err) const { return trace_space(trace_path_, err); }

    std::unique_ptr<VerilatedFstC> tfp_;
    std::string trace_path_, fst_tmp_, trace_err_, last_err_;
    bool vcd_ = false;
    uint64_t from_ = 0, to_ = 0, dumped_ = 0, last_cycles_ = 0;
};

// What every verilated model shares: its context, clock, reset and memory port (tpu_core's and
// tpu_chip's have the same pins).
template <class V> class Verilated : public Device
{
  public:
    Verilated(MemModel &mem, uint32_t n, uint32_t cores)
        : Device(mem, n, cores), ctx_(new VerilatedContext)
    {
        ctx_->traceEverOn(true);
        ctx_->randReset(0); // memories power up as zero (docs/isa.md)
        v_.reset(new V(ctx_.get(), "TOP"));
    }
    ~Verilated() override
    {
        trace_close();
        v_->final();
        // The model's scopes unregister from the thread's current context, which is the one
        // constructed last: with several devices that may be another device's, or one already
        // freed. Make it this model's own, and leave none behind once it is gone.
        tpusim_vl_thread_context(ctx_.get());
        v_.reset();
        ctx_.reset();
        tpusim_vl_thread_context(nullptr);
    }

    void clock(bool memory) override
    {
        V &m = *v_;
        m.clk = 0;
        m.eval();
        dump(10 * cycle());
        iq_ready_ = m.iq_ready;
        if (memory) {
            MemRequest req{};
            if (m.mem_req_valid) {
                req.we = m.mem_req_we;
                req.addr = m.mem_req_addr;
                req.len = m.mem_req_len;
                req.id = m.mem_req_id;
                if (req.we)
                    get_bytes(m.mem_req_wdata, buf_.data(), buf_.size());
                req.wdata = buf_.data();
            }
            mem_.edge(m.mem_req_valid ? &req : nullptr, m.mem_rsp_valid && m.mem_rsp_ready);
        }
        m.clk = 1;
        m.eval();
        dump(10 * cycle() + 5);
        edge_done();
        drive_memory();
    }

  protected:
    void set_rst(bool rst) override { v_->rst = rst; }
    void drive_memory() override
    {
        V &m = *v_;
        m.mem_req_ready = mem_.req_ready();
        MemResponse r;
        m.mem_rsp_valid = mem_.response(&r);
        if (m.mem_rsp_valid) {
            m.mem_rsp_id = r.id;
            m.mem_rsp_err = r.err;
            set_bytes(m.mem_rsp_rdata, r.rdata, buf_.size());
        }
    }
    void attach_trace(VerilatedFstC *tfp) override { v_->trace(tfp, 99); }

    std::unique_ptr<VerilatedContext> ctx_;
    std::unique_ptr<V> v_;
};

// A lone tpu_core: core 0 is the only one (the callers check k).
template <class V> class Model final : public Verilated<V>
{
  public:
    Model(MemModel &mem, uint32_t n) : Verilated<V>(mem, n, 1) {}

    uint32_t reg_read(uint32_t, uint32_t offset) override
    {
        if (offset >= kCsrEnd)
            return 0;
        this->v_->csr_addr = static_cast<uint8_t>(offset);
        this->v_->eval();
        return this->v_->csr_rdata;
    }
    uint32_t chip_reg_read(uint32_t) override { return 0; }
    bool irq(uint32_t) const override { return this->v_->irq; }
    void set_iq(uint32_t, const tpusim_insn *insn) override
    {
        this->v_->iq_valid = insn != nullptr;
        if (insn)
            for (int i = 0; i < 4; i++)
                this->v_->iq_data.at(i) = insn->w[i];
    }

  private:
    void set_csr(uint32_t, bool we, uint32_t offset, uint32_t wdata) override
    {
        this->v_->csr_we = we;
        this->v_->csr_addr = static_cast<uint8_t>(offset);
        this->v_->csr_wdata = wdata;
    }
    void set_chip_csr(bool, uint32_t, uint32_t) override {}
    void ub_bytes(uint32_t, uint32_t row, uint8_t *dst) override
    {
        get_bytes(this->v_->rootp->tpu_core__DOT__u_ub__DOT__mem[row], dst, this->n_);
    }
    void acc_bytes(uint32_t, uint32_t row, uint8_t *dst) override
    {
        get_bytes(this->v_->rootp->tpu_core__DOT__u_acc__DOT__mem[row], dst, 4 * this->n_);
    }
};

// A tpu_chip of C cores. Core k's UB and ACC arrays are found by name among the model's public
// scopes (public_flat_rd in rtl/tpu_ub.v, rtl/tpu_acc.v): where Verilator puts a core's members
// (inlined into the root or in a class of its own) depends on C. Their rows are little-endian
// words, as a wide bus's.
template <class V, uint32_t C> class Chip final : public Verilated<V>
{
    static_assert(kLittleEndian, "the chip's UB and ACC rows are read as little-endian words");

  public:
    Chip(MemModel &mem, uint32_t n) : Verilated<V>(mem, n, C)
    {
        for (uint32_t k = 0; k < C; k++) {
            ub_[k] = find(k, "u_ub");
            acc_[k] = find(k, "u_acc");
        }
    }

    uint32_t reg_read(uint32_t k, uint32_t offset) override
    {
        if (offset >= kCsrEnd)
            return 0;
        set_field(this->v_->csr_addr, TPU_CSR_ADDR_BITS * k, TPU_CSR_ADDR_BITS, offset);
        this->v_->eval();
        return get_field(this->v_->csr_rdata, 32 * k, 32);
    }
    uint32_t chip_reg_read(uint32_t offset) override
    {
        if (offset >= kChipCsrEnd)
            return 0;
        this->v_->chip_csr_addr = static_cast<uint8_t>(offset);
        this->v_->eval();
        return this->v_->chip_csr_rdata;
    }
    bool irq(uint32_t k) const override { return this->v_->irq >> k & 1; }
    void set_iq(uint32_t k, const tpusim_insn *insn) override
    {
        set_field(this->v_->iq_valid, k, 1, insn != nullptr);
        if (insn)
            for (uint32_t i = 0; i < 4; i++)
                this->v_->iq_data.at(4 * k + i) = insn->w[i];
    }

  private:
    // A row array: the first row's bytes and the distance between rows.
    struct Rows {
        const uint8_t *base;
        size_t pitch;
    };
    Rows find(uint32_t k, const char *unit)
    {
        const std::string scope = "TOP.tpu_chip.g_core[" + std::to_string(k) + "].u_core." + unit;
        const VerilatedScope *sp = this->ctx_->scopeFind(scope.c_str());
        const VerilatedVar *var = sp ? sp->varFind("mem") : nullptr;
        if (!var)
            throw std::logic_error("the chip model has no public " + scope + ".mem");
        return Rows{static_cast<const uint8_t *>(var->datap()), var->entSize()};
    }
    void set_csr(uint32_t k, bool we, uint32_t offset, uint32_t wdata) override
    {
        set_field(this->v_->csr_we, k, 1, we);
        set_field(this->v_->csr_addr, TPU_CSR_ADDR_BITS * k, TPU_CSR_ADDR_BITS, offset);
        set_field(this->v_->csr_wdata, 32 * k, 32, wdata);
    }
    void set_chip_csr(bool we, uint32_t offset, uint32_t wdata) override
    {
        this->v_->chip_csr_we = we;
        this->v_->chip_csr_addr = static_cast<uint8_t>(offset);
        this->v_->chip_csr_wdata = wdata;
    }
    void ub_bytes(uint32_t k, uint32_t row, uint8_t *dst) override
    {
        std::memcpy(dst, ub_[k].base + row * ub_[k].pitch, this->n_);
    }
    void acc_bytes(uint32_t k, uint32_t row, uint8_t *dst) override
    {
        std::memcpy(dst, acc_[k].base + row * acc_[k].pitch, 4 * this->n_);
    }

    Rows ub_[C], acc_[C];
};

// Every built model: the lone cores (cores 0) first, ascending by N, then the chips, ascending
// by N and C.
struct ModelEntry {
    uint32_t n, cores;
    std::unique_ptr<Device> (*make)(MemModel &mem);
};
#define TPU_MODEL_ENTRY(N)                                             \
    {N, 0, [](MemModel &mem) -> std::unique_ptr<Device> {              \
         return std::unique_ptr<Device>(new Model<Vtpu_n##N>(mem, N)); \
     }},
#define TPU_CHIP_ENTRY(N, C)                                                         \
    {N, C, [](MemModel &mem) -> std::unique_ptr<Device> {                            \
         return std::unique_ptr<Device>(new Chip<Vtpu_chip_n##N##_c##C, C>(mem, N)); \
     }},
const ModelEntry kModels[] = {TPU_FOR_EACH_MODEL(TPU_MODEL_ENTRY)
                                  TPU_FOR_EACH_CHIP(TPU_CHIP_ENTRY)};
#undef TPU_MODEL_ENTRY
#undef TPU_CHIP_ENTRY

const ModelEntry *find_model(uint32_t n, uint32_t cores)
{
    for (const ModelEntry &e : kModels)
        if (e.n == n && e.cores == cores)
            return &e;
    return nullptr;
}

void set_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

} // namespace

struct tpusim {
    tpusim_hwcfg hw;
    std::unique_ptr<MemModel> mem; // declared first: dev refers to it
    std::unique_ptr<Device> dev;
};

extern "C" {

void tpusim_config_default(tpusim_config *cfg)
{
    cfg->array_n = find_model(16, 0) ? 16 : kModels[0].n;
    cfg->mem_size = 64u << 20;
    cfg->mem_latency = 32;
    cfg->mem_bytes_per_cycle = 64;
    cfg->cores = 0;
    cfg->memory = nullptr;
}

int tpusim_arrays(uint32_t *sizes, int max)
{
    int count = 0;
    for (const ModelEntry &e : kModels)
        if (e.cores == 0 && count < max)
            sizes[count++] = e.n;
    return count;
}

int tpusim_chips(uint32_t *arrays, uint32_t *cores, int max)
{
    int count = 0;
    for (const ModelEntry &e : kModels)
        if (e.cores != 0 && count < max) {
            arrays[count] = e.n;
            cores[count++] = e.cores;
        }
    return count;
}

tpusim *tpusim_create(const tpusim_config *cfg, char *err, size_t errlen)
{
    if (!cfg) {
        set_err(err, errlen, "no configuration");
        return nullptr;
    }
    const ModelEntry *model = find_model(cfg->array_n, cfg->cores);
    if (!model) {
        std::string built;
        for (const ModelEntry &e : kModels)
            if ((e.cores == 0) == (cfg->cores == 0))
                built += " " + std::to_string(e.n) +
                         (e.cores ? "x" + std::to_string(e.cores) : std::string());
        if (cfg->cores)
            set_err(err, errlen, "no chip model for array_n %u, cores %u; built (NxC):%s",
                    cfg->array_n, cfg->cores, built.c_str());
        else
            set_err(err, errlen, "no model for array_n %u; built:%s", cfg->array_n, built.c_str());
        return nullptr;
    }
    if (cfg->mem_size == 0 || cfg->mem_size > UINT32_MAX) {
        set_err(err, errlen, "mem_size %llu: must be 1..%u (32-bit MEM_SIZE and addresses)",
                static_cast<unsigned long long>(cfg->mem_size), UINT32_MAX);
        return nullptr;
    }
    if (cfg->memory && (!cfg->memory->access || !cfg->memory->debug)) {
        set_err(err, errlen, "memory: its access and debug functions must both be set");
        return nullptr;
    }
    if ((!cfg->memory && (cfg->mem_latency == 0 || cfg->mem_latency > TPUSIM_MEM_LATENCY_MAX)) ||
        cfg->mem_bytes_per_cycle == 0 || cfg->mem_bytes_per_cycle > TPUSIM_MEM_BANDWIDTH_MAX) {
        set_err(err, errlen, "mem_latency %u and mem_bytes_per_cycle %u: must be 1..%u and 1..%u",
                cfg->mem_latency, cfg->mem_bytes_per_cycle, TPUSIM_MEM_LATENCY_MAX,
                TPUSIM_MEM_BANDWIDTH_MAX);
        return nullptr;
    }
    if (cfg->cores > TPUSIM_CORES_MAX) {
        set_err(err, errlen, "cores %u: must be 0 (a lone core) or 1..%u (a chip)", cfg->cores,
                TPUSIM_CORES_MAX);
        return nullptr;
    }
    std::unique_ptr<tpusim> sim;
    try {
        sim.reset(new tpusim);
        sim->mem.reset(new MemModel(cfg->mem_size, 4 * cfg->array_n, cfg->mem_latency,
                                    cfg->mem_bytes_per_cycle, cfg->memory));
        sim->dev = model->make(*sim->mem);
    } catch (const std::bad_alloc &) {
        set_err(err, errlen, "out of memory (mem_size %llu)",
                static_cast<unsigned long long>(cfg->mem_size));
        return nullptr;
    } catch (const std::logic_error &e) {
        set_err(err, errlen, "%s", e.what());
        return nullptr;
    }
    tpusim_reset(sim.get());
    tpusim_read_hwcfg(sim.get(), &sim->hw);
    Device &d = *sim->dev;
    for (uint32_t k = 0; k < d.cores(); k++) {
        const uint32_t id = d.reg_read(k, TPU_CSR_ID);
        const uint32_t array_n = d.reg_read(k, TPU_CSR_ARRAY_N);
        const uint32_t bus = d.reg_read(k, TPU_CSR_BUS_BYTES);
        if (id != TPU_ID_MAGIC || array_n != cfg->array_n || bus != 4 * cfg->array_n) {
            set_err(err, errlen, "model N=%u core %u reports ID 0x%08x, ARRAY_N %u, BUS_BYTES %u",
                    cfg->array_n, k, id, array_n, bus);
            return nullptr;
        }
    }
    if (cfg->cores && (d.chip_reg_read(TPU_CHIP_CSR_CHIP_ID) != TPU_CHIP_ID_MAGIC ||
                       d.chip_reg_read(TPU_CHIP_CSR_CORES) != cfg->cores)) {
        set_err(err, errlen, "chip model %ux%u reports CHIP_ID 0x%08x, CORES %u", cfg->array_n,
                cfg->cores, d.chip_reg_read(TPU_CHIP_CSR_CHIP_ID),
                d.chip_reg_read(TPU_CHIP_CSR_CORES));
        return nullptr;
    }
    return sim.release();
}

void tpusim_destroy(tpusim *sim) { delete sim; }

void tpusim_reset(tpusim *sim)
{
    sim->dev->reset();
    sim->dev->reg_write_all(TPU_CSR_MEM_SIZE, static_cast<uint32_t>(sim->mem->size()));
}

void tpusim_read_hwcfg(tpusim *sim, tpusim_hwcfg *out)
{
    Device &d = *sim->dev;
    out->array_n = d.reg_read(0, TPU_CSR_ARRAY_N);
    out->ub_rows = d.reg_read(0, TPU_CSR_UB_ROWS);
    out->acc_rows = d.reg_read(0, TPU_CSR_ACC_ROWS);
    out->wfifo_tiles = d.reg_read(0, TPU_CSR_WFIFO_TILES);
    out->iq_depth = d.reg_read(0, TPU_CSR_IQ_DEPTH);
    out->mem_size = d.reg_read(0, TPU_CSR_MEM_SIZE);
}

uint32_t tpusim_cores(const tpusim *sim) { return sim->dev->cores(); }

uint64_t tpusim_cycle(const tpusim *sim) { return sim->dev->cycle(); }

void tpusim_step(tpusim *sim, uint64_t cycles)
{
    for (; cycles; cycles--)
        sim->dev->edge();
}

uint32_t tpusim_reg_read(tpusim *sim, uint32_t offset)
{
    return tpusim_core_reg_read(sim, 0, offset);
}

void tpusim_reg_write(tpusim *sim, uint32_t offset, uint32_t v)
{
    tpusim_core_reg_write(sim, 0, offset, v);
}

uint64_t tpusim_perf(tpusim *sim, int counter) { return tpusim_core_perf(sim, 0, counter); }

int tpusim_push(tpusim *sim, const tpusim_insn *insn) { return tpusim_core_push(sim, 0, insn); }

uint32_t tpusim_core_reg_read(tpusim *sim, uint32_t core, uint32_t offset)
{
    return core < sim->dev->cores() ? sim->dev->reg_read(core, offset) : 0;
}

void tpusim_core_reg_write(tpusim *sim, uint32_t core, uint32_t offset, uint32_t v)
{
    if (core < sim->dev->cores())
        sim->dev->reg_write(core, offset, v);
    else
        sim->dev->edge();
}

uint64_t tpusim_core_perf(tpusim *sim, uint32_t core, int counter)
{
    if (counter < 0 || counter >= TPU_PERF_COUNT || core >= sim->dev->cores())
        return 0;
    const uint32_t off = TPU_CSR_PERF_BASE + 8 * static_cast<uint32_t>(counter);
    const uint64_t lo = sim->dev->reg_read(core, off);
    return lo | static_cast<uint64_t>(sim->dev->reg_read(core, off + 4)) << 32;
}

int tpusim_core_push(tpusim *sim, uint32_t core, const tpusim_insn *insn)
{
    Device &d = *sim->dev;
    if (core >= d.cores() || d.feed(core)) {
        d.edge();
        return 0;
    }
    d.set_iq(core, insn);
    d.edge();
    d.set_iq(core, nullptr);
    return d.iq_was_ready(core);
}

int tpusim_core_feed(tpusim *sim, uint32_t core, tpusim_feed *f)
{
    if (core >= sim->dev->cores())
        return -1;
    if (f)
        tpusim_feed_rewind(f);
    sim->dev->attach(core, f);
    return 0;
}

int tpusim_run(tpusim *sim, uint64_t max_cycles)
{
    int results[TPUSIM_CORES_MAX];
    return tpusim_run_feeds(sim, 1, max_cycles, results) ? results[0] : TPUSIM_TIMEOUT;
}

int tpusim_run_program(tpusim *sim, const tpusim_insn *prog, size_t n, uint64_t max_cycles)
{
    static const tpusim_insn none{};
    const tpusim_insn *progs[TPUSIM_CORES_MAX] = {prog ? prog : &none};
    return tpusim_run_programs(sim, progs, &n, max_cycles, nullptr);
}

// Per core: irq (HALTED | ERROR) ends its run, except that a HALTED left from before does not end a
// run whose feed still has instructions to push (the next push clears it).
int tpusim_run_feeds(tpusim *sim, uint32_t watch, uint64_t max_cycles, int *results)
{
    Device &d = *sim->dev;
    watch &= (1u << d.cores()) - 1; // cores <= 8
    for (uint64_t cycles = 0; watch; cycles++) {
        uint32_t stopped = 0;
        for (uint32_t k = 0; watch >> k; k++) {
            if (!(watch >> k & 1) || !d.irq(k))
                continue;
            const tpusim_feed *f = d.feed(k);
            int r = -1;
            if (d.reg_read(k, TPU_CSR_STATUS) & TPU_STATUS_ERROR)
                r = TPUSIM_ERROR;
            else if (!f || tpusim_feed_done(f))
                r = TPUSIM_HALTED;
            if (r >= 0) {
                stopped |= 1u << k;
                if (results)
                    results[k] = r;
            }
        }
        if (stopped || cycles == max_cycles)
            return static_cast<int>(stopped);
        d.edge();
    }
    return 0;
}

// Each program is replayed as a feed without waits, in place of the core's feed (put back
// afterwards), until every core taking part has stopped.
int tpusim_run_programs(tpusim *sim, const tpusim_insn *const *progs, const size_t *n,
                        uint64_t max_cycles, int *results)
{
    Device &d = *sim->dev;
    tpusim_feed views[TPUSIM_CORES_MAX], *saved[TPUSIM_CORES_MAX];
    int result[TPUSIM_CORES_MAX];
    uint32_t running = 0;
    for (uint32_t k = 0; k < d.cores(); k++) {
        saved[k] = d.feed(k);
        result[k] = TPUSIM_TIMEOUT;
        if (!progs[k])
            continue;
        running |= 1u << k;
        tpusim_feed_view(&views[k], progs[k], n[k]);
        d.attach(k, &views[k]);
    }
    const uint64_t start = d.cycle();
    while (running) {
        const uint64_t spent = d.cycle() - start;
        const uint32_t stopped =
            static_cast<uint32_t>(tpusim_run_feeds(sim, running, max_cycles - spent, result));
        if (!stopped)
            break;
        running &= ~stopped;
    }
    bool error = false;
    for (uint32_t k = 0; k < d.cores(); k++)
        if (progs[k]) {
            d.attach(k, saved[k]);
            error |= result[k] == TPUSIM_ERROR;
            if (results)
                results[k] = result[k];
        }
    return running ? TPUSIM_TIMEOUT : error ? TPUSIM_ERROR : TPUSIM_HALTED;
}

int tpusim_mem_write(tpusim *sim, uint64_t addr, const void *src, size_t n)
{
    return sim->mem->write(addr, src, n) ? 0 : -1;
}

int tpusim_mem_read(tpusim *sim, uint64_t addr, void *dst, size_t n)
{
    return sim->mem->read(addr, dst, n) ? 0 : -1;
}

int tpusim_ub_read(tpusim *sim, uint32_t row, int8_t *dst)
{
    return tpusim_core_ub_read(sim, 0, row, dst);
}

int tpusim_acc_read(tpusim *sim, uint32_t row, int32_t *dst)
{
    return tpusim_core_acc_read(sim, 0, row, dst);
}

int tpusim_core_ub_read(tpusim *sim, uint32_t core, uint32_t row, int8_t *dst)
{
    if (core >= sim->dev->cores() || row >= sim->hw.ub_rows)
        return -1;
    sim->dev->ub_row(core, row, dst);
    return 0;
}

int tpusim_core_acc_read(tpusim *sim, uint32_t core, uint32_t row, int32_t *dst)
{
    if (core >= sim->dev->cores() || row >= sim->hw.acc_rows)
        return -1;
    sim->dev->acc_row(core, row, dst);
    return 0;
}

uint32_t tpusim_chip_reg_read(tpusim *sim, uint32_t offset)
{
    return sim->dev->chip_reg_read(offset);
}

void tpusim_chip_reg_write(tpusim *sim, uint32_t offset, uint32_t v)
{
    sim->dev->chip_reg_write(offset, v);
}

uint64_t tpusim_mem_stall(tpusim *sim, uint32_t core)
{
    if (core >= sim->dev->cores())
        return 0;
    const uint32_t off = TPU_CHIP_CSR_MEM_STALL + 8 * core;
    const uint64_t lo = sim->dev->chip_reg_read(off);
    return lo | static_cast<uint64_t>(sim->dev->chip_reg_read(off + 4)) << 32;
}

void tpusim_mem_timing(tpusim *sim, uint32_t latency, uint32_t bytes_per_cycle)
{
    sim->mem->set_timing(std::min(latency, TPUSIM_MEM_LATENCY_MAX),
                         std::min(bytes_per_cycle, TPUSIM_MEM_BANDWIDTH_MAX));
}

int tpusim_trace_open(tpusim *sim, const char *path, int format, uint64_t from, uint64_t to,
                      char *err, size_t errlen)
{
    std::string msg;
    if (!path) {
        set_err(err, errlen, "no trace path");
        return -1;
    }
    if (sim->dev->trace_open(path, format, from, to, &msg) != 0) {
        set_err(err, errlen, "%s", msg.c_str());
        return -1;
    }
    return 0;
}

int tpusim_trace_writable(const char *path, char *err, size_t errlen)
{
    std::string msg;
    const std::string tmp = path ? temp_beside(path, &msg) : "";
    if (tmp.empty() || !trace_space(path, &msg)) {
        if (!tmp.empty())
            remove_tracked(tmp);
        set_err(err, errlen, "%s", path ? msg.c_str() : "no trace path");
        return -1;
    }
    remove_tracked(tmp);
    return 0;
}

int tpusim_trace_close(tpusim *sim, uint64_t *cycles, char *err, size_t errlen)
{
    std::string msg;
    uint64_t n = 0;
    const int rc = sim->dev->trace_close(&msg, &n);
    if (cycles)
        *cycles = n;
    if (rc)
        set_err(err, errlen, "%s", msg.c_str());
    return rc;
}

} // extern "C"

// device.cpp - the cycle-accurate device of tpusim.h (device.h): a verilated tpu_core, or a
// verilated tpu_chip of C cores on one memory port, plus the memory model.
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
// A chip's per-core pins are vectors, core k's field at bits [k*W +: W] (docs/isa.md "Ports of
// tpu_chip"); get_field and set_field reach them.
#include "sim/device.h"
#include "io/tpuio.h"
#include "sim/tpu_models.h" // generated: the Vtpu_n<N> headers and TPU_FOR_EACH_MODEL
#include "sim/vl_bits.h"

#include <verilated.h>
#include <verilated_fst_c.h>
#include <verilated_sym_props.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

// Verilated::threadContextp(ctx), from vlcontext.cpp.
void tpusim_vl_thread_context(VerilatedContext *ctx);

namespace tpu
{

using namespace trace_files;

int Device::trace_open(const char *path, int format, uint64_t from, uint64_t to, std::string *err)
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

void Device::trace_close()
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

namespace
{

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

} // namespace

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
const size_t kModelCount = sizeof kModels / sizeof kModels[0];

const ModelEntry *find_model(uint32_t n, uint32_t cores)
{
    for (const ModelEntry &e : kModels)
        if (e.n == n && e.cores == cores)
            return &e;
    return nullptr;
}

} // namespace tpu

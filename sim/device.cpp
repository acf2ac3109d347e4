// device.cpp - the cycle-accurate device of tpusim.h: a verilated tpu_core plus the memory model.
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
// CSR offsets are 8 bits on the core's port: reads beyond 0xFF return 0 and writes beyond it
// only spend their clock edge.
#include "io/tpuio.h"
#include "sim/memmodel.h"
#include "sim/tpu_models.h" // generated: the Vtpu_n<N> headers and TPU_FOR_EACH_MODEL
#include "sim/tpusim.h"

#include <verilated.h>
#include <verilated_fst_c.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

// Verilated::threadContextp(ctx), from vlcontext.cpp.
void tpu_vl_thread_context(VerilatedContext *ctx);

extern char **environ;

namespace
{

using tpu::MemModel;
using tpu::MemRequest;
using tpu::MemResponse;

// Verilator holds a vector of up to 64 bits in an integer and wider ones in VlWide words, both
// little-endian by bit; these move n bytes (byte i = bits 8i+7..8i) between them and byte arrays.
// On a little-endian host a VlWide's words hold its bytes in that order, so a wide bus (the memory
// data, every response and write request) is one memcpy.
constexpr bool kLittleEndian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
template <typename T> void get_bytes(const T &v, uint8_t *dst, size_t n)
{
    static_assert(std::is_integral<T>::value, "Verilator scalar");
    for (size_t i = 0; i < n; i++)
        dst[i] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i));
}
template <std::size_t W> void get_bytes(const VlWide<W> &v, uint8_t *dst, size_t n)
{
    if (kLittleEndian && n <= 4 * W) {
        std::memcpy(dst, v.data(), n);
        return;
    }
    for (size_t i = 0; i < n; i++)
        dst[i] = static_cast<uint8_t>(v.at(i / 4) >> (8 * (i % 4)));
}
template <typename T> void set_bytes(T &v, const uint8_t *src, size_t n)
{
    static_assert(std::is_integral<T>::value, "Verilator scalar");
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++)
        x |= static_cast<uint64_t>(src[i]) << (8 * i);
    v = static_cast<T>(x);
}
// Words past n bytes are zero.
template <std::size_t W> void set_bytes(VlWide<W> &v, const uint8_t *src, size_t n)
{
    if (kLittleEndian && n == 4 * W) {
        std::memcpy(v.data(), src, n);
        return;
    }
    for (size_t w = 0; w < W; w++) {
        uint32_t x = 0;
        for (size_t b = 0; b < 4 && 4 * w + b < n; b++)
            x |= static_cast<uint32_t>(src[4 * w + b]) << (8 * b);
        v.at(w) = x;
    }
}

bool on_path(const char *prog)
{
    const char *path = std::getenv("PATH");
    if (!path)
        return false;
    const std::string dirs(path);
    for (size_t start = 0;;) {
        const size_t end = dirs.find(':', start);
        std::string dir = dirs.substr(start, end == std::string::npos ? end : end - start);
        if (dir.empty())
            dir = ".";
        if (access((dir + "/" + prog).c_str(), X_OK) == 0)
            return true;
        if (end == std::string::npos)
            return false;
        start = end + 1;
    }
}

// fst2vcd -f fst -o vcd, quietly; true on success.
bool fst_to_vcd(const std::string &fst, const std::string &vcd)
{
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return false;
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    std::string a0 = "fst2vcd", a1 = "-f", a3 = "-o", a2 = fst, a4 = vcd;
    char *argv[] = {&a0[0], &a1[0], &a2[0], &a3[0], &a4[0], nullptr};
    pid_t pid;
    const int rc = posix_spawnp(&pid, "fst2vcd", &fa, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return false;
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return false;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Free bytes for an unprivileged writer in the file system holding dir; -1 if unknown.
double free_bytes(const std::string &dir)
{
    struct statvfs v;
    if (statvfs(dir.c_str(), &v) != 0)
        return -1;
    return static_cast<double>(v.f_bavail) * static_cast<double>(v.f_frsize);
}

std::string dir_of(const std::string &path)
{
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// A new empty file "<path>.tmp.XXXXXX" beside path, tracked so a signal removes it; its name, or
// "" with the reason in err.
std::string temp_beside(const std::string &path, std::string *err)
{
    std::string tmp = path + ".tmp.XXXXXX";
    const int fd = mkstemp(&tmp[0]);
    if (fd < 0) {
        *err = "cannot write " + path + ": " + std::strerror(errno);
        return "";
    }
    close(fd);
    tpuio_track(tmp.c_str());
    return tmp;
}

// The FST writer maps files it has written (the hierarchy beside the trace, its temporaries in
// P_tmpdir) and faults (SIGBUS) reading a mapping past the end of a file a full disk cut short:
// a trace needs kTraceReserve bytes free in both places. True if it has them (or they cannot be
// told), else false with the reason in err.
constexpr double kTraceReserve = 64.0 * 1024 * 1024;
bool trace_space(const std::string &path, std::string *err)
{
    for (const std::string &dir : {dir_of(path), std::string(P_tmpdir)}) {
        const double avail = free_bytes(dir);
        if (avail >= 0 && avail < kTraceReserve) {
            *err = "no space for the trace " + path + ": " + dir + " has " +
                   std::to_string(static_cast<uint64_t>(avail / 1024)) +
                   " KiB free, a trace needs 64 MiB";
            return false;
        }
    }
    return true;
}

void remove_tracked(const std::string &path)
{
    std::remove(path.c_str());
    tpuio_untrack(path.c_str());
}

// The pins and clock of one verilated tpu_core, independent of N; Model<V> below implements it
// for each generated class.
class Core
{
  public:
    Core(MemModel &mem, uint32_t n) : mem_(mem), n_(n), buf_(4 * n) {}
    virtual ~Core() = default;
    Core(const Core &) = delete;
    Core &operator=(const Core &) = delete;

    uint64_t cycle() const { return cycle_; }
    // One clock edge; the memory model takes part unless `memory` is false.
    virtual void clock(bool memory) = 0;
    virtual uint32_t reg_read(uint32_t offset) = 0;
    virtual bool irq() const = 0;
    virtual void set_iq(const tpu_insn *insn) = 0; // nullptr: iq_valid low
    // iq_ready as sampled before the last edge.
    bool iq_was_ready() const { return iq_ready_; }

    // rst high for one edge; the memory model's queues are emptied and it sits the edge out, so
    // nothing the core offers in the reset cycle is accepted.
    void reset()
    {
        mem_.clear();
        drive_memory();
        set_rst(true);
        clock(false);
        set_rst(false);
    }
    void reg_write(uint32_t offset, uint32_t v)
    {
        set_csr(offset <= 0xFF, offset, v);
        clock(true);
        set_csr(false, offset, 0);
    }
    void ub_row(uint32_t row, int8_t *dst)
    {
        ub_bytes(row, buf_.data());
        std::memcpy(dst, buf_.data(), n_);
    }
    void acc_row(uint32_t row, int32_t *dst)
    {
        acc_bytes(row, buf_.data());
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
    virtual void set_csr(bool we, uint32_t offset, uint32_t wdata) = 0;
    virtual void drive_memory() = 0;
    virtual void attach_trace(VerilatedFstC *tfp) = 0;
    virtual void ub_bytes(uint32_t row, uint8_t *dst) = 0;  // N bytes
    virtual void acc_bytes(uint32_t row, uint8_t *dst) = 0; // 4N bytes

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
    std::vector<uint8_t> buf_; // one bus width (4N bytes) of scratch
    bool iq_ready_ = false;

  private:
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

template <class V> class Model final : public Core
{
  public:
    Model(MemModel &mem, uint32_t n) : Core(mem, n), ctx_(new VerilatedContext)
    {
        ctx_->traceEverOn(true);
        ctx_->randReset(0); // memories power up as zero (docs/isa.md)
        v_.reset(new V(ctx_.get(), "TOP"));
    }
    ~Model() override
    {
        trace_close();
        v_->final();
        // The model's scopes unregister from the thread's current context, which is the one
        // constructed last: with several devices that may be another device's, or one already
        // freed. Make it this model's own, and leave none behind once it is gone.
        tpu_vl_thread_context(ctx_.get());
        v_.reset();
        ctx_.reset();
        tpu_vl_thread_context(nullptr);
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
    uint32_t reg_read(uint32_t offset) override
    {
        if (offset > 0xFF)
            return 0;
        v_->csr_addr = static_cast<uint8_t>(offset);
        v_->eval();
        return v_->csr_rdata;
    }
    bool irq() const override { return v_->irq; }
    void set_iq(const tpu_insn *insn) override
    {
        v_->iq_valid = insn != nullptr;
        if (insn)
            for (int i = 0; i < 4; i++)
                v_->iq_data.at(i) = insn->w[i];
    }

  private:
    void set_rst(bool rst) override { v_->rst = rst; }
    void set_csr(bool we, uint32_t offset, uint32_t wdata) override
    {
        v_->csr_we = we;
        v_->csr_addr = static_cast<uint8_t>(offset);
        v_->csr_wdata = wdata;
    }
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
    void ub_bytes(uint32_t row, uint8_t *dst) override
    {
        get_bytes(v_->rootp->tpu_core__DOT__u_ub__DOT__mem[row], dst, n_);
    }
    void acc_bytes(uint32_t row, uint8_t *dst) override
    {
        get_bytes(v_->rootp->tpu_core__DOT__u_acc__DOT__mem[row], dst, 4 * n_);
    }

    std::unique_ptr<VerilatedContext> ctx_;
    std::unique_ptr<V> v_;
};

struct ModelEntry {
    uint32_t n;
    std::unique_ptr<Core> (*make)(MemModel &mem);
};
#define TPU_MODEL_ENTRY(N)                                           \
    {N, [](MemModel &mem) -> std::unique_ptr<Core> {                 \
         return std::unique_ptr<Core>(new Model<Vtpu_n##N>(mem, N)); \
     }},
const ModelEntry kModels[] = {TPU_FOR_EACH_MODEL(TPU_MODEL_ENTRY)};
#undef TPU_MODEL_ENTRY

const ModelEntry *find_model(uint32_t n)
{
    for (const ModelEntry &e : kModels)
        if (e.n == n)
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
    tpu_hwcfg hw;
    std::unique_ptr<MemModel> mem; // declared first: core refers to it
    std::unique_ptr<Core> core;
};

extern "C" {

void tpusim_config_default(tpusim_config *cfg)
{
    cfg->array_n = find_model(16) ? 16 : kModels[0].n;
    cfg->mem_size = 64u << 20;
    cfg->mem_latency = 32;
    cfg->mem_bytes_per_cycle = 64;
}

int tpusim_arrays(uint32_t *sizes, int max)
{
    int count = 0;
    for (const ModelEntry &e : kModels)
        if (count < max)
            sizes[count++] = e.n;
    return count;
}

tpusim *tpusim_create(const tpusim_config *cfg, char *err, size_t errlen)
{
    if (!cfg) {
        set_err(err, errlen, "no configuration");
        return nullptr;
    }
    const ModelEntry *model = find_model(cfg->array_n);
    if (!model) {
        std::string built;
        for (const ModelEntry &e : kModels)
            built += " " + std::to_string(e.n);
        set_err(err, errlen, "no model for array_n %u; built:%s", cfg->array_n, built.c_str());
        return nullptr;
    }
    if (cfg->mem_size == 0 || cfg->mem_size > UINT32_MAX) {
        set_err(err, errlen, "mem_size %llu: must be 1..%u (32-bit MEM_SIZE and addresses)",
                static_cast<unsigned long long>(cfg->mem_size), UINT32_MAX);
        return nullptr;
    }
    if (cfg->mem_latency == 0 || cfg->mem_latency > TPUSIM_MEM_LATENCY_MAX ||
        cfg->mem_bytes_per_cycle == 0 || cfg->mem_bytes_per_cycle > TPUSIM_MEM_BANDWIDTH_MAX) {
        set_err(err, errlen, "mem_latency %u and mem_bytes_per_cycle %u: must be 1..%u and 1..%u",
                cfg->mem_latency, cfg->mem_bytes_per_cycle, TPUSIM_MEM_LATENCY_MAX,
                TPUSIM_MEM_BANDWIDTH_MAX);
        return nullptr;
    }
    std::unique_ptr<tpusim> sim;
    try {
        sim.reset(new tpusim);
        sim->mem.reset(new MemModel(cfg->mem_size, 4 * cfg->array_n, cfg->mem_latency,
                                    cfg->mem_bytes_per_cycle));
        sim->core = model->make(*sim->mem);
    } catch (const std::bad_alloc &) {
        set_err(err, errlen, "out of memory (mem_size %llu)",
                static_cast<unsigned long long>(cfg->mem_size));
        return nullptr;
    }
    tpusim_reset(sim.get());
    tpusim_hwcfg(sim.get(), &sim->hw);
    const uint32_t id = sim->core->reg_read(TPU_CSR_ID);
    const uint32_t bus = sim->core->reg_read(TPU_CSR_BUS_BYTES);
    if (id != TPU_ID_MAGIC || sim->hw.array_n != cfg->array_n || bus != 4 * cfg->array_n) {
        set_err(err, errlen, "model Vtpu_n%u reports ID 0x%08x, ARRAY_N %u, BUS_BYTES %u",
                cfg->array_n, id, sim->hw.array_n, bus);
        return nullptr;
    }
    return sim.release();
}

void tpusim_destroy(tpusim *sim) { delete sim; }

void tpusim_reset(tpusim *sim)
{
    sim->core->reset();
    sim->core->reg_write(TPU_CSR_MEM_SIZE, static_cast<uint32_t>(sim->mem->size()));
}

void tpusim_hwcfg(tpusim *sim, tpu_hwcfg *out)
{
    Core &c = *sim->core;
    out->array_n = c.reg_read(TPU_CSR_ARRAY_N);
    out->ub_rows = c.reg_read(TPU_CSR_UB_ROWS);
    out->acc_rows = c.reg_read(TPU_CSR_ACC_ROWS);
    out->wfifo_tiles = c.reg_read(TPU_CSR_WFIFO_TILES);
    out->iq_depth = c.reg_read(TPU_CSR_IQ_DEPTH);
    out->mem_size = c.reg_read(TPU_CSR_MEM_SIZE);
}

uint64_t tpusim_cycle(const tpusim *sim) { return sim->core->cycle(); }

void tpusim_step(tpusim *sim, uint64_t cycles)
{
    for (; cycles; cycles--)
        sim->core->clock(true);
}

uint32_t tpusim_reg_read(tpusim *sim, uint32_t offset) { return sim->core->reg_read(offset); }

void tpusim_reg_write(tpusim *sim, uint32_t offset, uint32_t v) { sim->core->reg_write(offset, v); }

uint64_t tpusim_perf(tpusim *sim, int counter)
{
    if (counter < 0 || counter >= TPU_PERF_COUNT)
        return 0;
    const uint32_t off = TPU_CSR_PERF_BASE + 8 * static_cast<uint32_t>(counter);
    const uint64_t lo = sim->core->reg_read(off);
    return lo | static_cast<uint64_t>(sim->core->reg_read(off + 4)) << 32;
}

int tpusim_push(tpusim *sim, const tpu_insn *insn)
{
    Core &c = *sim->core;
    c.set_iq(insn);
    c.clock(true);
    c.set_iq(nullptr);
    return c.iq_was_ready();
}

int tpusim_run(tpusim *sim, uint64_t max_cycles)
{
    return tpusim_run_program(sim, nullptr, 0, max_cycles);
}

// irq (HALTED | ERROR) ends the run, except that a HALTED left from before does not end a run that
// still has instructions to push (the next push clears it).
int tpusim_run_program(tpusim *sim, const tpu_insn *prog, size_t n, uint64_t max_cycles)
{
    Core &c = *sim->core;
    size_t next = 0;
    for (uint64_t cycles = 0;; cycles++) {
        if (c.irq()) {
            if (c.reg_read(TPU_CSR_STATUS) & TPU_STATUS_ERROR)
                return TPUSIM_ERROR;
            if (next == n)
                return TPUSIM_HALTED;
        }
        if (cycles == max_cycles)
            return TPUSIM_TIMEOUT;
        if (next == n) {
            c.clock(true);
            continue;
        }
        c.set_iq(&prog[next]);
        c.clock(true);
        c.set_iq(nullptr);
        if (c.iq_was_ready())
            next++;
    }
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
    if (row >= sim->hw.ub_rows)
        return -1;
    sim->core->ub_row(row, dst);
    return 0;
}

int tpusim_acc_read(tpusim *sim, uint32_t row, int32_t *dst)
{
    if (row >= sim->hw.acc_rows)
        return -1;
    sim->core->acc_row(row, dst);
    return 0;
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
    if (sim->core->trace_open(path, format, from, to, &msg) != 0) {
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
    const int rc = sim->core->trace_close(&msg, &n);
    if (cycles)
        *cycles = n;
    if (rc)
        set_err(err, errlen, "%s", msg.c_str());
    return rc;
}

} // extern "C"

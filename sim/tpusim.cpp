// tpusim.cpp - the C API of tpusim.h's cycle-accurate device: creating one from a tpusim_config
// (checked against the built models and the ID registers they report), registers, pushes, runs
// and feeds, memories, the chip CSRs and traces, on a Device (device.h).
#include "sim/device.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

using tpu::Device;
using tpu::find_model;
using tpu::kModelCount;
using tpu::kModels;
using tpu::MemModel;
using tpu::ModelEntry;
using namespace tpu::trace_files;

namespace
{

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
    for (const ModelEntry *e = kModels; e != kModels + kModelCount; e++)
        if (e->cores == 0 && count < max)
            sizes[count++] = e->n;
    return count;
}

int tpusim_chips(uint32_t *arrays, uint32_t *cores, int max)
{
    int count = 0;
    for (const ModelEntry *e = kModels; e != kModels + kModelCount; e++)
        if (e->cores != 0 && count < max) {
            arrays[count] = e->n;
            cores[count++] = e->cores;
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
        for (const ModelEntry *e = kModels; e != kModels + kModelCount; e++)
            if ((e->cores == 0) == (cfg->cores == 0))
                built += " " + std::to_string(e->n) +
                         (e->cores ? "x" + std::to_string(e->cores) : std::string());
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

// test_vp_tlm.cpp - tpu_tlm on a TLM-2.0 bus: two platforms elaborated once (SystemC allows one
// elaboration per process), A on an sc_clock with a quantum of 1 and verify on, B on its own
// clock (clk unbound) with a quantum of 64, verify off and a cycle budget, each with its own
// default memory target (larger than the window, to see the clipping) and a bench initiator; the
// GoogleTest suites run inside the bench's SC_THREAD. They check register and memory accesses of
// every size, bursts, byte enables, each error response, DMI grants and invalidations, debug
// transport, the mailbox's failures and the interrupt, and multi-core GEMMs through
// tpu_open_remote: right results, each core's cycles equal to the C path's (a local device), and
// the same cycles and interrupt times with either quantum.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "driver/tpu.h"
#include "tests/support/driver_gemm.h"
#include "tools/tpu_vp/tpu_host.h"
#include "tools/tpu_vp/tpu_mem.h"
#include "tools/tpu_vp/tpu_tlm.h"

namespace
{

using namespace tpu_vp;
using sc_core::SC_NS;
using sc_core::sc_time;

constexpr uint64_t kMemSize = 4u << 20;
constexpr uint64_t kTargetSize = kMemSize + 65536; // the memory target is larger than the window
constexpr uint32_t kLatency = 32;                  // the simulator's default mem_latency
const sc_time kPeriod(1, SC_NS);
constexpr uint64_t kBudget = 100000; // B's cycle budget per submission
using Range = std::pair<uint64_t, uint64_t>;

// The chip the platforms carry: a two-core chip of the first array size that has one, else the
// first lone core.
struct ChipChoice {
    uint32_t n = 0, cores = 0;
};
ChipChoice choose_chip()
{
    uint32_t arrays[64], cores[64], sizes[16];
    const int chips = tpusim_chips(arrays, cores, 64);
    for (int i = 0; i < chips; i++)
        if (cores[i] == 2)
            return {arrays[i], 2};
    return {tpusim_arrays(sizes, 16) ? sizes[0] : 0, 0};
}
const ChipChoice kChip = choose_chip();

struct Bench : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<Bench> socket;
    sc_core::sc_in<bool> irq;
    std::vector<Range> invalidated;
    tpu_host host;

    explicit Bench(sc_core::sc_module_name name)
        : sc_module(name), socket("socket"), irq("irq"), host(socket, irq)
    {
        socket.register_invalidate_direct_mem_ptr(this, &Bench::invalidate);
    }
    void invalidate(sc_dt::uint64 start, sc_dt::uint64 end) { invalidated.push_back({start, end}); }

    tlm::tlm_response_status access(tlm::tlm_command cmd, uint64_t addr, void *data,
                                    unsigned int len, const unsigned char *be = nullptr,
                                    unsigned int be_len = 0, unsigned int width = 0)
    {
        tlm::tlm_generic_payload p;
        p.set_command(cmd);
        p.set_address(addr);
        p.set_data_ptr(static_cast<unsigned char *>(data));
        p.set_data_length(len);
        p.set_streaming_width(width ? width : len);
        p.set_byte_enable_ptr(const_cast<unsigned char *>(be));
        p.set_byte_enable_length(be_len);
        p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        sc_time delay = sc_core::SC_ZERO_TIME;
        socket->b_transport(p, delay);
        return p.get_response_status();
    }
    uint32_t reg(uint64_t addr)
    {
        uint32_t v = 0xdeadbeef;
        EXPECT_EQ(access(tlm::TLM_READ_COMMAND, addr, &v, 4), tlm::TLM_OK_RESPONSE) << addr;
        return v;
    }
    tlm::tlm_response_status set(uint64_t addr, uint32_t v)
    {
        return access(tlm::TLM_WRITE_COMMAND, addr, &v, 4);
    }
    unsigned int debug(tlm::tlm_command cmd, uint64_t addr, void *data, unsigned int len)
    {
        tlm::tlm_generic_payload p;
        p.set_command(cmd);
        p.set_address(addr);
        p.set_data_ptr(static_cast<unsigned char *>(data));
        p.set_data_length(len);
        return socket->transport_dbg(p);
    }
};

// One platform: the chip, its memory target, a bench on the host socket.
struct Platform {
    tpu_tlm chip;
    tpu_mem mem;
    Bench bench;
    sc_core::sc_signal<bool> irq;

    // clk NULL: the chip's own clock of kPeriod.
    Platform(const char *name, sc_core::sc_clock *clk, uint32_t quantum, bool verify,
             uint64_t budget)
        : chip((std::string(name) + "_chip").c_str(), config(quantum, verify, budget)),
          mem((std::string(name) + "_mem").c_str(), kTargetSize, kLatency, kPeriod),
          bench((std::string(name) + "_bench").c_str())
    {
        if (clk)
            chip.clk(*clk);
        chip.irq(irq);
        bench.irq(irq);
        chip.mem.bind(mem.socket);
        bench.socket.bind(chip.host);
    }
    static tpu_tlm_config config(uint32_t quantum, bool verify, uint64_t budget)
    {
        tpu_tlm_config c;
        c.device.array_n = kChip.n;
        c.device.cores = kChip.cores;
        c.device.mem_size = kMemSize;
        c.verify = verify;
        c.quantum = quantum;
        c.period = kPeriod;
        c.max_cycles = budget;
        return c;
    }
};

Platform *A, *B;

uint64_t mbox(uint32_t k) { return TPU_TLM_CORE_BASE + k * TPU_TLM_CORE_STRIDE; }

// ------------------------------------------------------------------------ registers --

TEST(Registers, Identity)
{
    Bench &b = A->bench;
    EXPECT_EQ(b.reg(TPU_TLM_ID), TPU_TLM_ID_MAGIC);
    EXPECT_EQ(b.reg(TPU_TLM_VERSION), TPU_TLM_VERSION_1);
    EXPECT_EQ(b.reg(TPU_TLM_ARRAY_N), kChip.n);
    EXPECT_EQ(b.reg(TPU_TLM_CORES), kChip.cores ? kChip.cores : 1);
    EXPECT_EQ(b.reg(TPU_TLM_MEM_BANDWIDTH), 64u);
    uint64_t size = 0, base = 0;
    EXPECT_EQ(b.access(tlm::TLM_READ_COMMAND, TPU_TLM_MEM_SIZE, &size, 8), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(size, kMemSize);
    EXPECT_EQ(b.reg(TPU_TLM_MEM_SIZE), static_cast<uint32_t>(kMemSize));
    EXPECT_EQ(b.reg(TPU_TLM_MEM_SIZE + 4), 0u);
    EXPECT_EQ(b.access(tlm::TLM_READ_COMMAND, TPU_TLM_MEM_WINDOW, &base, 8), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(base, TPU_TLM_MEM_BASE);
    EXPECT_EQ(b.reg(mbox(0) + TPU_TLM_STATUS), static_cast<uint32_t>(TPU_TLM_IDLE));
    // The host's query is these registers.
    tpu_info info{};
    EXPECT_EQ(b.host.ops()->query(b.host.ops()->ctx, &info), 0);
    EXPECT_EQ(info.array_n, kChip.n);
    EXPECT_EQ(info.mem_size, kMemSize);
    EXPECT_GT(info.ub_rows, 0u);
    // Mailbox registers read back, alone and as one 8-byte access.
    EXPECT_EQ(b.set(mbox(0) + TPU_TLM_STREAM_ADDR, 0x1240), tlm::TLM_OK_RESPONSE);
    uint32_t pair[2] = {0x40, 0x80};
    EXPECT_EQ(b.access(tlm::TLM_WRITE_COMMAND, mbox(0) + TPU_TLM_STREAM_ADDR, pair, 8),
              tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.reg(mbox(0) + TPU_TLM_STREAM_ADDR), 0x40u);
    EXPECT_EQ(b.reg(mbox(0) + TPU_TLM_STREAM_BYTES), 0x80u);
}

TEST(Registers, ErrorResponses)
{
    Bench &b = A->bench;
    const uint32_t cores = kChip.cores ? kChip.cores : 1;
    uint32_t v = 0;
    uint64_t w = 0;
    // Unmapped: holes of the global block, past it, past the cores, holes of a mailbox.
    for (uint64_t a : {uint64_t{0x2C}, uint64_t{0x44}, uint64_t{0x50}, uint64_t{0x800},
                       mbox(0) + TPU_TLM_PERF + 8 * TPU_PERF_COUNT, mbox(cores),
                       mbox(7) + TPU_TLM_MESSAGE, uint64_t{0x10000000}})
        EXPECT_EQ(b.access(tlm::TLM_READ_COMMAND, a, &v, 4), tlm::TLM_ADDRESS_ERROR_RESPONSE)
            << std::hex << a;
    // Misaligned.
    EXPECT_EQ(b.access(tlm::TLM_READ_COMMAND, 0x2, &v, 4), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(b.access(tlm::TLM_READ_COMMAND, 0x4, &w, 8), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    // Sizes other than 4 and 8, and a streaming width below the length.
    uint8_t buf[16] = {};
    for (unsigned int len : {1u, 2u, 16u})
        EXPECT_EQ(b.access(tlm::TLM_READ_COMMAND, 0x0, buf, len), tlm::TLM_BURST_ERROR_RESPONSE)
            << len;
    EXPECT_EQ(b.access(tlm::TLM_READ_COMMAND, 0x0, buf, 8, nullptr, 0, 4),
              tlm::TLM_BURST_ERROR_RESPONSE);
    // Byte enables.
    const unsigned char be[4] = {0xff, 0xff, 0xff, 0xff};
    EXPECT_EQ(b.access(tlm::TLM_READ_COMMAND, 0x0, &v, 4, be, 4),
              tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    // Read-only registers keep their value; a write that touches one changes nothing.
    for (uint64_t a : {uint64_t{TPU_TLM_ID}, uint64_t{TPU_TLM_CORES}, uint64_t{TPU_TLM_MEM_SIZE},
                       uint64_t{TPU_TLM_CYCLE}, mbox(0) + TPU_TLM_STATUS, mbox(0) + TPU_TLM_RESULT,
                       mbox(0) + TPU_TLM_CYCLES, mbox(0) + TPU_TLM_PERF})
        EXPECT_EQ(b.set(a, 0x5a5a5a5a), tlm::TLM_COMMAND_ERROR_RESPONSE) << std::hex << a;
    EXPECT_EQ(b.reg(TPU_TLM_ID), TPU_TLM_ID_MAGIC);
    const uint32_t go[2] = {1, 0}; // START and the read-only STATUS in one access
    EXPECT_EQ(
        b.access(tlm::TLM_WRITE_COMMAND, mbox(0) + TPU_TLM_START, const_cast<uint32_t *>(go), 8),
        tlm::TLM_COMMAND_ERROR_RESPONSE);
    EXPECT_NE(b.reg(mbox(0) + TPU_TLM_STATUS), static_cast<uint32_t>(TPU_TLM_RUNNING));
    // The message window: any read inside it, no writes, nothing past it.
    char msg[TPU_TLM_MESSAGE_BYTES];
    EXPECT_EQ(b.access(tlm::TLM_READ_COMMAND, mbox(0) + TPU_TLM_MESSAGE + 3, msg, 17),
              tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.access(tlm::TLM_WRITE_COMMAND, mbox(0) + TPU_TLM_MESSAGE, msg, 4),
              tlm::TLM_COMMAND_ERROR_RESPONSE);
    EXPECT_EQ(b.access(tlm::TLM_READ_COMMAND, mbox(0) + TPU_TLM_MESSAGE + 0xF0, msg, 32),
              tlm::TLM_ADDRESS_ERROR_RESPONSE);
    // Debug transport reaches only the memory window.
    EXPECT_EQ(b.debug(tlm::TLM_READ_COMMAND, TPU_TLM_ID, &v, 4), 0u);
}

// ----------------------------------------------------------------------- the window --

// Writes and reads of every size at aligned and unaligned addresses, through b_transport and
// debug transport, seen by the memory target at the device address.
void sizes_and_bursts(Platform *pf)
{
    Bench &b = pf->bench;
    std::vector<uint8_t> out(4096), in(4096), seen(4096);
    uint32_t seed = 1;
    for (unsigned int len : {1u, 2u, 4u, 8u, 64u, 1000u, 4096u})
        for (uint64_t addr : {uint64_t{0x100}, uint64_t{0x2003}, kMemSize - len}) {
            for (unsigned int i = 0; i < len; i++)
                out[i] = static_cast<uint8_t>(seed = seed * 1103515245u + 12345u);
            ASSERT_EQ(b.access(tlm::TLM_WRITE_COMMAND, TPU_TLM_MEM_BASE + addr, out.data(), len),
                      tlm::TLM_OK_RESPONSE)
                << len << " at " << addr;
            ASSERT_EQ(b.access(tlm::TLM_READ_COMMAND, TPU_TLM_MEM_BASE + addr, in.data(), len),
                      tlm::TLM_OK_RESPONSE);
            EXPECT_EQ(std::memcmp(in.data(), out.data(), len), 0) << len << " at " << addr;
            tlm::tlm_generic_payload p;
            p.set_command(tlm::TLM_READ_COMMAND);
            p.set_address(addr);
            p.set_data_ptr(seen.data());
            p.set_data_length(len);
            ASSERT_EQ(pf->chip.mem->transport_dbg(p),
                      len); // the target itself, at the device address
            EXPECT_EQ(std::memcmp(seen.data(), out.data(), len), 0) << len << " at " << addr;
            EXPECT_EQ(b.debug(tlm::TLM_READ_COMMAND, TPU_TLM_MEM_BASE + addr, in.data(), len), len);
            EXPECT_EQ(std::memcmp(in.data(), out.data(), len), 0) << len << " at " << addr;
        }
}

TEST(Window, SizesAndBurstsVerified) { sizes_and_bursts(A); }
TEST(Window, SizesAndBurstsForwarded) { sizes_and_bursts(B); }

void byte_enables(Platform *pf)
{
    Bench &b = pf->bench;
    const uint64_t at = TPU_TLM_MEM_BASE + 0x3001;
    std::vector<uint8_t> ones(16, 0x11), aa(16, 0xaa), got(16);
    ASSERT_EQ(b.access(tlm::TLM_WRITE_COMMAND, at, ones.data(), 16), tlm::TLM_OK_RESPONSE);
    const unsigned char be[4] = {0xff, 0x00, 0x00, 0xff}; // repeated over the 16 bytes
    ASSERT_EQ(b.access(tlm::TLM_WRITE_COMMAND, at, aa.data(), 16, be, 4), tlm::TLM_OK_RESPONSE);
    ASSERT_EQ(b.access(tlm::TLM_READ_COMMAND, at, got.data(), 16), tlm::TLM_OK_RESPONSE);
    for (int i = 0; i < 16; i++)
        EXPECT_EQ(got[i], i % 4 == 0 || i % 4 == 3 ? 0xaa : 0x11) << i;
    // A read with byte enables fills only the enabled bytes.
    std::vector<uint8_t> partial(16, 0);
    ASSERT_EQ(b.access(tlm::TLM_READ_COMMAND, at, partial.data(), 16, be, 4), tlm::TLM_OK_RESPONSE);
    for (int i = 0; i < 16; i++)
        EXPECT_EQ(partial[i], i % 4 == 0 || i % 4 == 3 ? 0xaa : 0) << i;
}

TEST(Window, ByteEnablesVerified) { byte_enables(A); }
TEST(Window, ByteEnablesForwarded) { byte_enables(B); }

TEST(Window, ErrorResponses)
{
    for (Platform *pf : {A, B}) {
        Bench &b = pf->bench;
        uint8_t buf[16] = {};
        // Past the window (the target behind it is larger: the window still ends at mem_size).
        EXPECT_EQ(b.access(tlm::TLM_READ_COMMAND, TPU_TLM_MEM_BASE + kMemSize, buf, 1),
                  tlm::TLM_ADDRESS_ERROR_RESPONSE);
        EXPECT_EQ(b.access(tlm::TLM_WRITE_COMMAND, TPU_TLM_MEM_BASE + kMemSize - 4, buf, 8),
                  tlm::TLM_ADDRESS_ERROR_RESPONSE);
        EXPECT_EQ(b.access(tlm::TLM_READ_COMMAND, ~0ull - 3, buf, 8),
                  tlm::TLM_ADDRESS_ERROR_RESPONSE);
        // A streaming width below the length.
        EXPECT_EQ(b.access(tlm::TLM_WRITE_COMMAND, TPU_TLM_MEM_BASE, buf, 16, nullptr, 0, 4),
                  tlm::TLM_BURST_ERROR_RESPONSE);
        EXPECT_EQ(b.access(tlm::TLM_READ_COMMAND, TPU_TLM_MEM_BASE, buf, 16, nullptr, 0, 4),
                  tlm::TLM_BURST_ERROR_RESPONSE);
        // Debug transport stops at the window's end.
        EXPECT_EQ(b.debug(tlm::TLM_READ_COMMAND, TPU_TLM_MEM_BASE + kMemSize - 10, buf, 16), 10u);
        EXPECT_EQ(b.debug(tlm::TLM_WRITE_COMMAND, TPU_TLM_MEM_BASE + kMemSize - 10, buf, 16), 10u);
        EXPECT_EQ(b.debug(tlm::TLM_READ_COMMAND, TPU_TLM_MEM_BASE + kMemSize, buf, 16), 0u);
    }
}

TEST(Window, DmiGrantsAndInvalidation)
{
    for (Platform *pf : {A, B}) {
        const bool verify = pf == A;
        Bench &b = pf->bench;
        tlm::tlm_generic_payload p;
        tlm::tlm_dmi dmi;
        p.set_address(TPU_TLM_MEM_BASE + 0x5000);
        p.set_command(tlm::TLM_READ_COMMAND);
        ASSERT_TRUE(b.socket->get_direct_mem_ptr(p, dmi));
        EXPECT_EQ(dmi.get_start_address(), TPU_TLM_MEM_BASE);
        EXPECT_EQ(dmi.get_end_address(), TPU_TLM_MEM_BASE + kMemSize - 1); // clipped
        EXPECT_TRUE(dmi.is_read_allowed());
        EXPECT_EQ(dmi.is_write_allowed(), !verify); // with verify, writes go through the driver
        EXPECT_EQ(dmi.get_read_latency(), kPeriod * kLatency);
        const uint32_t word = verify ? 0x01020304u : 0x0a0b0c0du;
        ASSERT_EQ(b.access(tlm::TLM_WRITE_COMMAND, TPU_TLM_MEM_BASE + 0x5000,
                           const_cast<uint32_t *>(&word), 4),
                  tlm::TLM_OK_RESPONSE);
        uint32_t through = 0;
        std::memcpy(&through, dmi.get_dmi_ptr() + 0x5000, 4);
        EXPECT_EQ(through, word);
        if (!verify) {
            const uint32_t direct = 0xfeedf00d;
            std::memcpy(dmi.get_dmi_ptr() + 0x5004, &direct, 4);
            EXPECT_EQ(b.reg(TPU_TLM_MEM_BASE + 0x5004), direct);
        }
        // No DMI on the registers or past the window, with the range to stop asking for.
        tlm::tlm_dmi none;
        p.set_address(TPU_TLM_ID);
        EXPECT_FALSE(b.socket->get_direct_mem_ptr(p, none));
        EXPECT_EQ(none.get_end_address(), TPU_TLM_MEM_BASE - 1);
        p.set_address(TPU_TLM_MEM_BASE + kMemSize);
        EXPECT_FALSE(b.socket->get_direct_mem_ptr(p, none));
        EXPECT_EQ(none.get_start_address(), TPU_TLM_MEM_BASE + kMemSize);
        // The memory's invalidations reach the host in window addresses, clipped to it.
        b.invalidated.clear();
        pf->mem.invalidate_dmi(0x1000, 0x1fff);
        pf->mem.invalidate_dmi(0, ~0ull);
        pf->mem.invalidate_dmi(kMemSize, kTargetSize - 1); // behind the window: not the host's
        ASSERT_EQ(b.invalidated.size(), 2u);
        EXPECT_EQ(b.invalidated[0], Range(TPU_TLM_MEM_BASE + 0x1000, TPU_TLM_MEM_BASE + 0x1fff));
        EXPECT_EQ(b.invalidated[1], Range(TPU_TLM_MEM_BASE, TPU_TLM_MEM_BASE + kMemSize - 1));
    }
}

// ---------------------------------------------------------------------- the mailbox --

// Waits (in simulated time) until irq is high; false after a simulated millisecond.
bool irq_high(Bench &b)
{
    if (!b.irq.read())
        sc_core::wait(sc_time(1, sc_core::SC_MS), b.irq.posedge_event());
    return b.irq.read();
}

TEST(Mailbox, RejectedStreamRaisesTheInterrupt)
{
    Bench &b = A->bench;
    const std::vector<uint8_t> junk(64, 0x77); // no command stream
    ASSERT_EQ(b.access(tlm::TLM_WRITE_COMMAND, TPU_TLM_MEM_BASE + 0x8000,
                       const_cast<uint8_t *>(junk.data()), 64),
              tlm::TLM_OK_RESPONSE);
    const uint32_t core = kChip.cores > 1 ? 1 : 0;
    const uint32_t stream[2] = {0x8000, 64};
    ASSERT_EQ(b.access(tlm::TLM_WRITE_COMMAND, mbox(core) + TPU_TLM_STREAM_ADDR,
                       const_cast<uint32_t *>(stream), 8),
              tlm::TLM_OK_RESPONSE);
    EXPECT_FALSE(b.irq.read());
    ASSERT_EQ(b.set(mbox(core) + TPU_TLM_START, 1), tlm::TLM_OK_RESPONSE);
    ASSERT_TRUE(irq_high(b));
    EXPECT_EQ(b.reg(TPU_TLM_IRQ_STATUS), 1u << core);
    EXPECT_EQ(b.reg(mbox(core) + TPU_TLM_STATUS), static_cast<uint32_t>(TPU_TLM_DONE));
    EXPECT_EQ(b.reg(mbox(core) + TPU_TLM_RESULT), static_cast<uint32_t>(TPU_E_STREAM));
    char msg[TPU_TLM_MESSAGE_BYTES];
    ASSERT_EQ(b.access(tlm::TLM_READ_COMMAND, mbox(core) + TPU_TLM_MESSAGE, msg, sizeof msg),
              tlm::TLM_OK_RESPONSE);
    EXPECT_NE(std::strlen(msg), 0u);
    // Writing the bit back clears it, and irq falls.
    EXPECT_EQ(b.set(TPU_TLM_IRQ_STATUS, 1u << core), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.reg(TPU_TLM_IRQ_STATUS), 0u);
    sc_core::wait(kPeriod);
    EXPECT_FALSE(b.irq.read());
}

// ----------------------------------------------------------------------- GEMMs --

const driver_test::GemmCase kGemms[] = {
    {70, 90, 40, TPU_GEMM_BIAS | TPU_GEMM_RELU},
    {33, 200, 17, TPU_GEMM_OUT_INT8 | TPU_GEMM_BIAS},
};

struct Outcome {
    std::vector<uint64_t> cycles; // per core
    std::vector<int> verified;    // per core
    uint64_t chip = 0;            // the device's clock edges (tpu_cycle) over the run
    sc_time elapsed;              // simulated time from the first submit to the last wait
};

// One GEMM per core, submitted at once, waited for all; results checked. dev is a remote device
// of a platform or a local one (the C path).
Outcome run_gemms(tpu_device *dev)
{
    Outcome out;
    tpu_info info{};
    EXPECT_EQ(tpu_query(dev, &info), TPU_OK);
    tpu_rng rng{42};
    std::vector<driver_test::Placed> placed(info.cores);
    std::vector<tpu_stream *> streams(info.cores);
    for (uint32_t k = 0; k < info.cores; k++) {
        streams[k] = tpu_stream_new();
        driver_test::place(dev, streams[k], rng, placed[k], kGemms[k % 2]);
        const tpu_gemm c = driver_test::command(placed[k]);
        EXPECT_EQ(tpu_stream_gemm(streams[k], &c), TPU_OK);
    }
    const sc_time t0 = sc_core::sc_time_stamp();
    const uint64_t c0 = tpu_cycle(dev);
    for (uint32_t k = 0; k < info.cores; k++)
        EXPECT_EQ(tpu_submit_core(dev, k, streams[k]), TPU_OK) << tpu_last_error(dev);
    EXPECT_EQ(tpu_wait_all(dev, 0), TPU_OK) << tpu_last_error(dev);
    out.elapsed = sc_core::sc_time_stamp() - t0;
    out.chip = tpu_cycle(dev) - c0;
    for (uint32_t k = 0; k < info.cores; k++) {
        driver_test::check_result(dev, placed[k]);
        tpu_perf_report perf{};
        EXPECT_EQ(tpu_perf_core(dev, k, &perf), TPU_OK);
        EXPECT_GT(perf.cycles, 0u);
        out.cycles.push_back(perf.cycles);
        out.verified.push_back(perf.verified);
        driver_test::release(dev, placed[k]);
        tpu_stream_free(streams[k]);
    }
    return out;
}

TEST(Platform, MultiCoreGemmsEqualTheCPath)
{
    tpusim_config o{};
    o.array_n = kChip.n;
    o.cores = kChip.cores;
    o.mem_size = kMemSize;
    o.mem_latency = kLatency;
    tpu_device *local = nullptr;
    char err[256] = "";
    ASSERT_EQ(tpu_open(&o, 1, &local, err, sizeof err), TPU_OK) << err;
    const Outcome c_path = run_gemms(local);
    tpu_close(local);

    Outcome vp[2];
    Platform *pfs[2] = {A, B};
    for (int i = 0; i < 2; i++) {
        tpu_device *dev = nullptr;
        ASSERT_EQ(tpu_open_remote(pfs[i]->bench.host.ops(), &dev, err, sizeof err), TPU_OK) << err;
        vp[i] = run_gemms(dev);
        tpu_close(dev);
    }
    EXPECT_EQ(vp[0].cycles, c_path.cycles) << "quantum 1";
    EXPECT_EQ(vp[1].cycles, c_path.cycles) << "quantum 64";
    // VERIFIED: A's device side checks every submission (verify on), B's none.
    EXPECT_EQ(vp[0].verified, c_path.verified);
    EXPECT_EQ(vp[1].verified, std::vector<int>(c_path.verified.size(), 0));
    EXPECT_EQ(c_path.verified, std::vector<int>(c_path.verified.size(), 1));
    EXPECT_EQ(vp[0].chip, c_path.chip); // CYCLE: the chip is clocked only while work runs
    EXPECT_EQ(vp[1].chip, c_path.chip);
    // The interrupts come at the same edges whatever the quantum and clock: the last one at the
    // edge that ends the longest submission, counted from the first edge after the submits.
    EXPECT_EQ(vp[0].elapsed, vp[1].elapsed);
    const uint64_t longest = *std::max_element(c_path.cycles.begin(), c_path.cycles.end());
    EXPECT_EQ(vp[0].elapsed, kPeriod * static_cast<double>(longest));
}

TEST(Platform, StartWhileRunningIsRefused)
{
    char err[256] = "";
    tpu_device *dev = nullptr;
    ASSERT_EQ(tpu_open_remote(A->bench.host.ops(), &dev, err, sizeof err), TPU_OK) << err;
    tpu_rng rng{7};
    tpu_stream *s = tpu_stream_new();
    driver_test::Placed pl;
    driver_test::place(dev, s, rng, pl, kGemms[0]);
    const tpu_gemm c = driver_test::command(pl);
    ASSERT_EQ(tpu_stream_gemm(s, &c), TPU_OK);
    ASSERT_EQ(tpu_submit_core(dev, 0, s), TPU_OK) << tpu_last_error(dev);
    EXPECT_EQ(A->bench.reg(mbox(0) + TPU_TLM_STATUS), static_cast<uint32_t>(TPU_TLM_RUNNING));
    EXPECT_EQ(A->bench.set(mbox(0) + TPU_TLM_START, 1), tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_EQ(tpu_wait_core(dev, 0, 0), TPU_OK) << tpu_last_error(dev);
    driver_test::check_result(dev, pl);
    driver_test::release(dev, pl);
    tpu_stream_free(s);
    tpu_close(dev);
}

TEST(Platform, BudgetTimesOutAndTheChipGoesOn)
{
    char err[256] = "";
    tpu_device *dev = nullptr;
    ASSERT_EQ(tpu_open_remote(B->bench.host.ops(), &dev, err, sizeof err), TPU_OK) << err;
    tpu_rng rng{9};
    tpu_stream *s = tpu_stream_new();
    driver_test::Placed pl;
    driver_test::place(dev, s, rng, pl, {128, 512, 256, 0}); // 128 x 512 x 256: far past it
    const tpu_gemm c = driver_test::command(pl);
    ASSERT_EQ(tpu_stream_gemm(s, &c), TPU_OK);
    const sc_time t0 = sc_core::sc_time_stamp();
    ASSERT_EQ(tpu_submit_core(dev, 0, s), TPU_OK) << tpu_last_error(dev);
    EXPECT_EQ(tpu_wait_core(dev, 0, 0), TPU_E_TIMEOUT);
    EXPECT_NE(std::strstr(tpu_last_error(dev), "cycle"), nullptr) << tpu_last_error(dev);
    EXPECT_LE(sc_core::sc_time_stamp() - t0, kPeriod * static_cast<double>(kBudget + 64));
    driver_test::release(dev, pl);
    tpu_stream_free(s);
    tpu_close(dev);
    // The next submission runs as usual.
    ASSERT_EQ(tpu_open_remote(B->bench.host.ops(), &dev, err, sizeof err), TPU_OK) << err;
    EXPECT_EQ(driver_test::run_gemm(dev, rng, kGemms[1]), TPU_OK);
    tpu_close(dev);
}

// Runs the suites in SystemC time, then stops the simulation.
struct Runner : sc_core::sc_module {
    int result = 1;
    SC_HAS_PROCESS(Runner);
    explicit Runner(sc_core::sc_module_name name) : sc_module(name)
    {
        SC_THREAD(run);
        set_stack_size(64u << 20); // gtest, the driver and the golden models run on it
    }
    void run()
    {
        result = RUN_ALL_TESTS();
        sc_core::sc_stop();
    }
};

} // namespace

int sc_main(int argc, char **argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    if (!kChip.n) {
        std::fprintf(stderr, "no model built\n");
        return 1;
    }
    sc_core::sc_clock clk("clk", kPeriod);
    Platform a("a", &clk, 1, true, 0), b("b", nullptr, 64, false, kBudget);
    A = &a;
    B = &b;
    Runner runner("runner");
    sc_core::sc_start();
    return runner.result;
}

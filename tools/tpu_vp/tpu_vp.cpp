// tpu_vp.cpp - an example virtual platform (docs/systemc.md): a clock, the chip (tpu_tlm), its
// default memory (tpu_mem) and a host whose SC_THREAD runs `tpusim run` (tools/tpusim/run.h) on
// the chip as a remote device (tpu_host): the package's weights and each batch's inputs are
// written over TLM, every operation is started through a mailbox and waited for on the
// interrupt, and the report is tpusim run's, with the same cycles.
//
// usage: tpu_vp PKG.tpub | --package PKG.tpub  [--quantum Q] [--sc-clock] [tpusim run's options]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "io/tpuio.h"
#include "package/tpub.h"
#include "tools/tpu_vp/tpu_host.h"
#include "tools/tpu_vp/tpu_mem.h"
#include "tools/tpu_vp/tpu_tlm.h"
extern "C" {
#include "tools/tpusim/cli.h"
#include "tools/tpusim/run.h"
}

namespace
{

const char usage[] =
    "usage: tpu_vp PKG.tpub | --package PKG.tpub  --input X.npy ... [--quantum Q] [--sc-clock]\n"
    "              [tpusim run's options]\n"
    "\n"
    "Runs a compiled package as `tpusim run` does, on a SystemC/TLM-2.0 platform: the chip\n"
    "(tpu_tlm) with its default memory target, clocked at 1 GHz, and a host that writes the\n"
    "weights and inputs over TLM, starts each operation through a mailbox and sleeps on the\n"
    "interrupt. Same report, outputs and cycles as tpusim run (docs/systemc.md).\n"
    "\n"
    "  --quantum Q    clock edges the chip runs at a time (temporal decoupling; default 1000)\n"
    "  --sc-clock     clock the chip from an sc_clock (else from its own period: the same\n"
    "                 edges, without a clock channel's two events per cycle)\n"
    "--cores, --mem-latency and --mem-bandwidth set the platform's chip, memory target and port\n"
    "as well; --jobs is 1 (the platform is one device).\n"
    "\n"
    "tpusim run's options:\n";

const sc_core::sc_time kPeriod(1, sc_core::SC_NS);

struct Host : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<Host> socket;
    sc_core::sc_in<bool> irq;
    tpu_vp::tpu_host host;
    std::vector<char *> args;
    int rc = EXIT_DEVICE;

    SC_HAS_PROCESS(Host);
    Host(sc_core::sc_module_name name, std::vector<char *> run_args)
        : sc_module(name), socket("socket"), irq("irq"), host(socket, irq),
          args(std::move(run_args))
    {
        SC_THREAD(main);
        set_stack_size(256u << 20); // the runtime's host program (the HLO evaluator) runs here
    }
    void main()
    {
        rc = run_package(static_cast<int>(args.size()), args.data(), host.ops());
        sc_core::sc_stop();
    }
};

// The value of the option at argv[i] when it is `name` ("--x V" or "--x=V"), with i moved past
// it; NULL if it is another.
const char *value_of(const char *name, int argc, char **argv, int *i)
{
    const size_t n = std::strlen(name);
    if (std::strncmp(argv[*i], name, n) || (argv[*i][n] && argv[*i][n] != '='))
        return nullptr;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    return *i + 1 < argc ? argv[++*i] : "";
}

} // namespace

int sc_main(int argc, char **argv)
{
    tpuio_remove_on_signals(); // Ctrl-C never leaves a half-written output or trace
    tpu_vp::tpu_tlm_config cfg;
    cfg.quantum = 1000;
    const char *package = nullptr;
    bool sc_clock = false;
    std::vector<char *> run_args(1); // [0]: the package
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
            std::fputs(usage, stdout);
            std::fputs(usage_run, stdout);
            return EXIT_OK;
        }
        if ((v = value_of("--package", argc, argv, &i))) {
            package = v;
        } else if ((v = value_of("--quantum", argc, argv, &i))) {
            if (parse_u32(v, 1, UINT32_MAX, &cfg.quantum))
                return bad_value("--quantum", v, "a number of clock edges (at least 1)");
        } else if (!std::strcmp(argv[i], "--sc-clock")) {
            sc_clock = true;
        } else if (i == 1 && std::strncmp(argv[i], "--", 2)) {
            package = argv[i];
        } else {
            // Passed on to the run as they are; the cores and the memory timing are the
            // platform's too.
            const int at = i;
            if ((v = value_of("--cores", argc, argv, &i)) && parse_u32(v, 1, 8, &cfg.device.cores))
                return bad_value("--cores", v, "a number of cores, 1..8");
            if ((v = value_of("--mem-latency", argc, argv, &i)) &&
                parse_u32(v, 1, 65536, &cfg.device.mem_latency))
                return bad_value("--mem-latency", v, "a number of cycles, 1..65536");
            if ((v = value_of("--mem-bandwidth", argc, argv, &i)) &&
                parse_u32(v, 1, 4096, &cfg.device.mem_bytes_per_cycle))
                return bad_value("--mem-bandwidth", v, "a number of bytes per cycle, 1..4096");
            run_args.insert(run_args.end(), argv + at, argv + i + 1);
        }
    }
    if (!package)
        return cli_fail(EXIT_USAGE, "usage", "no package (tpu_vp --package PKG.tpub ...)");
    run_args[0] = const_cast<char *>(package);
    // The chip has the package's array size (the run loads the package again).
    tpub_package pkg{};
    hlo_error err;
    if (tpub_load(package, &pkg, &err))
        return cli_fail(EXIT_USAGE, package, "%s", err.msg);
    cfg.device.array_n = pkg.array_n;
    tpub_free(&pkg);

    cfg.period = kPeriod;
    tpu_config_fill(&cfg.device); // the memory target's size and latency too
    std::unique_ptr<sc_core::sc_clock> clk;
    sc_core::sc_signal<bool> irq("irq");
    tpu_vp::tpu_tlm chip("chip", cfg);
    tpu_vp::tpu_mem mem("mem", cfg.device.mem_size, cfg.device.mem_latency, kPeriod);
    Host host("host", run_args);
    if (sc_clock) {
        clk.reset(new sc_core::sc_clock("clk", kPeriod));
        chip.clk(*clk);
    }
    chip.irq(irq);
    host.irq(irq);
    chip.mem.bind(mem.socket);
    host.socket.bind(chip.host);
    // The host's sc_stop ends the run: no note of it (the kernel's information) on stdout.
    sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO,
                                            sc_core::SC_DO_NOTHING);
    try {
        sc_core::sc_start();
    } catch (const sc_core::sc_report &r) {
        return cli_fail(EXIT_DEVICE, "platform", "%s", r.what());
    }
    return host.rc;
}

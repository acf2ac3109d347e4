// tpu_vp.cpp - an example virtual platform (docs/systemc.md): a clock, the chip (tpu_tlm), its
// default memory (tpu_mem) and a host whose SC_THREAD runs a package as `tpusim run` does
// (tools/common/run.h) on the chip as a remote device (tpu_host): the package's weights and each
// batch's inputs are written over TLM, every operation is started through a mailbox and waited
// for on the interrupt, and the report is tpusim run's, with the same cycles.
//
// usage: tpu_vp PKG.tpub | --package PKG.tpub  [--quantum Q] [--sc-clock] [tpusim run's options]
#include <cstdio>
#include <cstring>
#include <memory>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "package/tpub.h"
#include "tools/common/run.h"
#include "tools/tpu_vp/tpu_host.h"
#include "tools/tpu_vp/tpu_mem.h"
#include "tools/tpu_vp/tpu_tlm.h"

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

// The platform's own options.
enum { OPT_PACKAGE = RUN_OPT_OWN, OPT_QUANTUM, OPT_SC_CLOCK };
const struct option kOptions[] = {
    RUN_OPTIONS,
    {"package", required_argument, nullptr, OPT_PACKAGE},
    {"quantum", required_argument, nullptr, OPT_QUANTUM},
    {"sc-clock", no_argument, nullptr, OPT_SC_CLOCK},
    {nullptr, 0, nullptr, 0},
};

struct Platform {
    tpu_vp::tpu_tlm_config chip;
    bool sc_clock = false;
};

int platform_option(void *ctx, int opt, const char *val, run_options *o)
{
    auto *p = static_cast<Platform *>(ctx);
    switch (opt) {
    case OPT_PACKAGE: o->package = val; return 0;
    case OPT_QUANTUM:
        return cli_u32(val, 1, UINT32_MAX, &p->chip.quantum)
                   ? cli_bad_value("--quantum", val, "a number of clock edges (at least 1)")
                   : 0;
    default: p->sc_clock = true; return 0;
    }
}

struct Host : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<Host> socket;
    sc_core::sc_in<bool> irq;
    tpu_vp::tpu_host host;
    const run_options *run;
    int rc = EXIT_DEVICE;

    SC_HAS_PROCESS(Host);
    Host(sc_core::sc_module_name name, const run_options *o)
        : sc_module(name), socket("socket"), irq("irq"), host(socket, irq), run(o)
    {
        SC_THREAD(main);
        set_stack_size(256u << 20); // the runtime's host program (the HLO evaluator) runs here
    }
    void main()
    {
        rc = run_package(run, host.ops());
        sc_core::sc_stop();
    }
};

// The platform of o's package and device options, running it.
int run_platform(const run_options &o, Platform &p)
{
    // The chip has the package's array size (the run loads the package again and checks
    // --array); the cores and the memory timing are the run's options.
    tpub_package pkg{};
    hlo_error err;
    if (tpub_load(o.package, &pkg, &err))
        return cli_fail(EXIT_USAGE, o.package, "%s", err.msg);
    p.chip.device = o.dev.device;
    p.chip.device.array_n = pkg.array_n;
    tpub_free(&pkg);
    tpu_config_fill(&p.chip.device); // the memory target's size and latency too
    p.chip.period = kPeriod;

    std::unique_ptr<sc_core::sc_clock> clk;
    sc_core::sc_signal<bool> irq("irq");
    tpu_vp::tpu_tlm chip("chip", p.chip);
    tpu_vp::tpu_mem mem("mem", p.chip.device.mem_size, p.chip.device.mem_latency, kPeriod);
    Host host("host", &o);
    if (p.sc_clock) {
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

} // namespace

int sc_main(int argc, char **argv)
{
    cli_init("tpu_vp");
    Platform p;
    p.chip.quantum = 1000;
    run_options o{};
    int rc = run_parse(argc, argv, kOptions, "tpu_vp --help", platform_option, &p, &o);
    if (rc < 0)
        std::printf("%s%s%s", usage, run_usage, CLI_EXIT_HELP);
    else if (!rc)
        rc = run_platform(o, p);
    run_options_free(&o);
    return rc < 0 ? EXIT_OK : rc;
}

// test_vp_mnist.cpp - the example platform (build/bin/tpu_vp) against the C path (`tpusim run`):
// the committed MNIST MLP, compiled here for the first array size built (8 when it is), on 320
// digits (20 batches of 16) gives the same report (layers' cycles, cycles per batch and image,
// accuracy) and byte-identical outputs, with the default quantum on the module's own clock and
// with a quantum of 1 on an sc_clock; the same on a chip of two cores against tpusim run --cores 2;
// and tpu_vp's own errors.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "sim/tpusim.h"
#include "tests/support/tool_test.h"

namespace
{

using tool_test::Result;
using tool_test::slurp;

uint32_t array_n()
{
    uint32_t sizes[64];
    const int n = tpusim_arrays(sizes, 64);
    for (int i = 0; i < n; i++)
        if (sizes[i] == 8)
            return 8;
    return n ? sizes[0] : 0;
}

const std::string kMnist = TPU_SOURCE_DIR "/models/mnist/";
const std::string kDigits = " --input '" + kMnist + "test_x_u8.npy' --input-divide 255 --labels '" +
                            kMnist + "test_y.npy' --limit 320";

// The report without what depends on the host (times, speeds).
std::string simulated_lines(const std::string &report)
{
    std::istringstream in(report);
    std::string line, out;
    while (std::getline(in, line)) {
        bool keep = true;
        for (const char *host : {"simulation speed", "wall time", "host program time"})
            keep &= line.rfind(host, 0) != 0;
        if (keep)
            out += line + "\n";
    }
    return out;
}

class VpMnist : public tool_test::ToolTest
{
  protected:
    VpMnist() : ToolTest("vp_mnist") {}

    Result run(const char *exe, const std::string &args) const
    {
        const std::string cmd = "'" TPU_BINARY_DIR "/bin/" + std::string(exe) + "' " + args + " >" +
                                quoted("stdout.txt") + " 2>" + quoted("stderr.txt");
        const int st = std::system(cmd.c_str());
        return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, slurp(dir / "stdout.txt"),
                slurp(dir / "stderr.txt")};
    }
};

TEST_F(VpMnist, SamePredictionsAndCyclesAsTpusimRun)
{
    const uint32_t n = array_n();
    ASSERT_NE(n, 0u);
    const Result c =
        run("tpuc", "'" + kMnist + "mlp.hlo' --weights '" + kMnist +
                        "mlp.safetensors' --calibrate '" + kMnist + "calib.npy' --array " +
                        std::to_string(n) + " -o " + quoted("mnist.tpub"));
    ASSERT_EQ(c.code, 0) << c.err;
    const Result ref =
        run("tpusim", "run " + quoted("mnist.tpub") + kDigits + " --output " + quoted("c.npy"));
    ASSERT_EQ(ref.code, 0) << ref.err;
    ASSERT_NE(ref.out.find("cycles per batch"), std::string::npos) << ref.out;
    for (const std::string platform : {"", " --quantum 1 --sc-clock"}) {
        const Result vp = run("tpu_vp", "--package " + quoted("mnist.tpub") + kDigits + platform +
                                            " --output " + quoted("v.npy"));
        ASSERT_EQ(vp.code, 0) << platform << ": " << vp.err;
        EXPECT_EQ(simulated_lines(vp.out), simulated_lines(ref.out)) << platform;
        EXPECT_EQ(slurp(dir / "v.npy"), slurp(dir / "c.npy")) << platform;
    }
    // A chip of two cores, batches side by side: tpusim run --cores 2's report and outputs
    // (which are the lone core's).
    uint32_t arrays[64], cores[64];
    const int chips = tpusim_chips(arrays, cores, 64);
    for (int i = 0; i < chips; i++)
        if (arrays[i] == n && cores[i] == 2) {
            const Result ref2 = run("tpusim", "run " + quoted("mnist.tpub") + kDigits +
                                                  " --cores 2 --output " + quoted("c2.npy"));
            ASSERT_EQ(ref2.code, 0) << ref2.err;
            ASSERT_NE(ref2.out.find("chip elapsed cycles"), std::string::npos) << ref2.out;
            const Result two = run("tpu_vp", quoted("mnist.tpub") + kDigits + " --cores 2" +
                                                 " --output " + quoted("v2.npy"));
            ASSERT_EQ(two.code, 0) << two.err;
            EXPECT_EQ(simulated_lines(two.out), simulated_lines(ref2.out));
            EXPECT_EQ(slurp(dir / "v2.npy"), slurp(dir / "c.npy"));
        }
    // The platform is one device.
    const Result jobs = run("tpu_vp", quoted("mnist.tpub") + kDigits + " --jobs 2");
    EXPECT_EQ(jobs.code, 2);
    EXPECT_NE(jobs.err.find("--jobs"), std::string::npos) << jobs.err;
}

TEST_F(VpMnist, Errors)
{
    Result r = run("tpu_vp", "--input x.npy");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("no package"), std::string::npos) << r.err;
    r = run("tpu_vp", "--package " + quoted("missing.tpub"));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("missing.tpub"), std::string::npos) << r.err;
    r = run("tpu_vp", "--package " + quoted("missing.tpub") + " --cores 9");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("--cores"), std::string::npos) << r.err;
    r = run("tpu_vp", "--package " + quoted("missing.tpub") + " --quantum 0");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("--quantum"), std::string::npos) << r.err;
    r = run("tpu_vp", "--help");
    EXPECT_EQ(r.code, 0);
    EXPECT_NE(r.out.find("--quantum"), std::string::npos) << r.out;
}

} // namespace

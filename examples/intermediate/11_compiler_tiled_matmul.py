"""A tensor-level matmul: `out[:] = pl.matmul(a, b)` for a 512x1024 by 1024x256 product. The
compiler (LowerTensorOps) picks output blocks whose Acc tile fits L0C and K blocks whose
operands fit L1 and L0A/L0B, then walks K with matmul followed by matmul_acc. The second
kernel fuses a ReLU into the same blocks: the Acc block moves to Vec, is rectified, stored.

Run: python examples/intermediate/11_compiler_tiled_matmul.py   (prints OK)
"""

import sys
from importlib.util import find_spec

import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig

M, K, N = 512, 1024, 256


@pl.jit
def tiled_matmul(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.matmul(a, b)
    return out


@pl.jit
def matmul_relu(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.relu(pl.matmul(a, b))
    return out


def main(backend: str = "torch", config: RunConfig | None = None) -> None:
    rng = np.random.default_rng(11)
    a = rng.standard_normal((M, K), dtype=np.float32)
    b = rng.standard_normal((K, N), dtype=np.float32)
    c = rng.standard_normal((96, 200), dtype=np.float32)
    d = rng.standard_normal((200, 72), dtype=np.float32)
    if backend == "torch":
        import torch

        at, bt, out = torch.from_numpy(a), torch.from_numpy(b), torch.zeros(M, N)
        tiled_matmul(at, bt, out, config=config or RunConfig())
        torch.testing.assert_close(out, at @ bt, rtol=1e-4, atol=1e-3)
        ct, dt, out2 = torch.from_numpy(c), torch.from_numpy(d), torch.zeros(96, 72)
        matmul_relu(ct, dt, out2, config=config or RunConfig())
        torch.testing.assert_close(out2, torch.relu(ct @ dt), rtol=1e-4, atol=1e-3)
    else:
        out = np.zeros((M, N), dtype=np.float32)
        tiled_matmul(a, b, out, config=config or RunConfig())
        np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-3)
        out2 = np.zeros((96, 72), dtype=np.float32)
        matmul_relu(c, d, out2, config=config or RunConfig())
        np.testing.assert_allclose(out2, np.maximum(c @ d, 0), rtol=1e-4, atol=1e-3)
    print("OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ("torch" if find_spec("torch") else "numpy"))

"""`pypto.runtime.golden_writer`: the golden data of a run on disk (RunConfig(golden_data_dir=)).

    <dir>/in/<name>.npy    the inputs run() made from TensorSpecs (reused when present)
    <dir>/out/<name>.npy   the expected outputs the golden function computed (reused when present)

Files hold numpy arrays (torch tensors are saved through .numpy(); BF16 as its bit patterns)."""

from __future__ import annotations

import os

import numpy as np

from pypto.jit.tensors import is_torch_tensor


def _path(golden_dir: str, kind: str, name: str) -> str:
    return os.path.join(golden_dir, kind, name + ".npy")


def _as_numpy(x):
    if is_torch_tensor(x):
        import torch

        x = x.detach().cpu()
        return x.view(torch.int16).numpy().view(np.uint16) if x.dtype == torch.bfloat16 else x.numpy()
    return np.asarray(x)


def write_golden(golden_dir: str, kind: str, tensors: dict) -> None:
    """Saves `tensors` ({name: array}) under <golden_dir>/<kind>/ ("in" or "out")."""
    os.makedirs(os.path.join(golden_dir, kind), exist_ok=True)
    for name, t in tensors.items():
        np.save(_path(golden_dir, kind, name), _as_numpy(t))


def load_golden(golden_dir: str, kind: str, name: str):
    """The saved array of `name` under <golden_dir>/<kind>/, or None when there is none."""
    p = _path(golden_dir, kind, name)
    return np.load(p) if os.path.isfile(p) else None

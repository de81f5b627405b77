"""The PTO instruction table from Python: modelled cost, pipe, operands, dtypes, memories."""

from __future__ import annotations

from pypto import _core

__all__ = ["cost", "pipe", "names", "signature", "memories", "table_markdown"]


def cost(name: str, dtype: str, shape) -> float:
    """Modelled cycles of one instruction (chip-model.md's formulas).

    `shape` is [rows, cols] of the region the instruction covers, or [M, K, N] for the
    matmul family (TMATMUL fp16 [128, 128, 128] -> 6 + 8*8*8 = 518 cycles).
    """
    shape = list(shape)
    if len(shape) == 3:
        m, k, n = shape
        return _core.instruction_cost(name, dtype, m, n, k)
    if len(shape) != 2:
        raise ValueError(f"cost({name!r}): shape is [rows, cols] (or [M, K, N] for matmul), got {shape}")
    return _core.instruction_cost(name, dtype, shape[0], shape[1])


def pipe(name: str) -> str:
    return _core.instruction_pipe(name)


def names() -> list:
    return list(_core.instruction_names())


def signature(name: str):
    """(outs, ins, dtypes, summary): operand letters T tile, G tensor, S scalar, L offsets."""
    return _core.instruction_signature(name)


def memories(name: str) -> list:
    return list(_core.instruction_memories(name))


def table_markdown() -> str:
    return _core.instruction_table_markdown()

"""`pl.optimizations`: PyPTO's optimisation hints, the same objects as `pl.split`,
`pl.cross_core_slot` and `pl.SplitMode` (python/pypto/language/launch.py)."""

from .launch import SplitMode, cross_core_slot, split  # noqa: F401

__all__ = ["split", "cross_core_slot", "SplitMode"]

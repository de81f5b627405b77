"""`pypto.ir.op`: op-call constructors by registry name, e.g. `ir.op.tile.add(a, b)` or
`ir.op.tensor.matmul(a, b)`: each builds the Call with pypto.ir.make_call (keyword
arguments are the op's compile-time attributes)."""

from __future__ import annotations


class _OpNamespace:
    def __init__(self, prefix: str):
        self._prefix = prefix

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        from pypto._core import ir as _ir

        full = f"{self._prefix}.{name}" if self._prefix else name
        if _ir.find_op(full) is None:
            if not self._prefix:
                return _OpNamespace(name)
            raise AttributeError(f"pypto.ir.op has no op '{full}'; fix: use a name from docs/ops.md")

        def call(*args, **attrs):
            from pypto.ir.make import make_call

            return make_call(full, list(args), kwargs=attrs)

        call.__name__ = name
        return call


tile = _OpNamespace("tile")
tensor = _OpNamespace("tensor")
system = _OpNamespace("system")


def __getattr__(name):
    return getattr(_OpNamespace(""), name)

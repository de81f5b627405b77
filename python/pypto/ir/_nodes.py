"""PyPTO's accessors of the IR nodes, added to the bound classes of `pypto._core.ir`:
`Program.functions` (a name -> Function mapping), `get_function`, `get_global_var`,
`same_as`, `as_python`; `Function.level/role/attrs/split/param_directions/
requires_runtime_binding`; `TensorType.tensor_view`, `TileType.tile_view/memory_space/
get_effective_tile_view()`; and `python_print`. Accessors the C++ bindings already define
are left as they are."""

from __future__ import annotations

import io
import tokenize
from collections.abc import Mapping

from pypto._core import ir as _ir


class GlobalVar(str):
    """The name of a program's function, as PyPTO's key of `Program.functions` (a str:
    `program.functions["main"]` and `program.functions[gv]` are the same)."""

    @property
    def name(self) -> str:
        return str(self)

    def __repr__(self):
        return f"GlobalVar({str(self)!r})"


class FunctionMap(Mapping):
    """`Program.functions`: the program's functions by name, in program order.

    A Mapping (keys are GlobalVar names: `items()`, `keys()`, `values()`, `["main"]`, `in`),
    which for our earlier list form also takes an int index (`functions[0]`) or a Function
    (`functions[f]`), and iterates over the Function objects (`for f in p.functions`)."""

    __slots__ = ("_functions",)

    def __init__(self, functions):
        self._functions = list(functions)

    def _by_name(self, name):
        for f in self._functions:
            if f.name == name:
                return f
        raise KeyError(name)

    def __getitem__(self, key):
        if isinstance(key, (int, slice)) and not isinstance(key, bool):
            return self._functions[key]
        if isinstance(key, _ir.Function):
            return self._by_name(key.name)
        return self._by_name(str(key))

    def __contains__(self, key):
        if isinstance(key, _ir.Function):
            return any(f is key or f.name == key.name for f in self._functions)
        return isinstance(key, str) and any(f.name == key for f in self._functions)

    def __iter__(self):
        return iter(self._functions)

    def __len__(self):
        return len(self._functions)

    def keys(self):
        return [GlobalVar(f.name) for f in self._functions]

    def values(self):
        return list(self._functions)

    def items(self):
        return [(GlobalVar(f.name), f) for f in self._functions]

    def __eq__(self, other):
        if isinstance(other, FunctionMap):
            return len(self) == len(other) and all(a is b for a, b in zip(self._functions, other._functions))
        if isinstance(other, list):
            return self._functions == other
        return NotImplemented

    def __repr__(self):
        return "{" + ", ".join(f"{f.name!r}: <Function {f.name}>" for f in self._functions) + "}"


def _rename_prefix(text: str, prefix: str) -> str:
    """`text` with the DSL module name `pl` spelled `prefix` (the printer names no variable
    `pl`, so every `pl` name token is the module)."""
    if prefix == "pl":
        return text
    if not prefix.isidentifier():
        raise ValueError(f"python_print(prefix={prefix!r}): not a Python name; fix: pass a name like 'pl' or 'ir'")
    lines = text.splitlines(keepends=True)
    hits = [tok.start for tok in tokenize.generate_tokens(io.StringIO(text).readline)
            if tok.type == tokenize.NAME and tok.string == "pl"]
    for row, col in reversed(hits):
        line = lines[row - 1]
        lines[row - 1] = line[:col] + prefix + line[col + 2:]
    return "".join(lines)


def python_print(node, prefix: str = "pl", concise: bool = False, format: bool = True,
                 explicit_layout: bool = False) -> str:
    """The DSL text of an IR node (Program, Function, Type or Expr), with the language module
    named `prefix`. `concise`, `format`, `explicit_layout` are accepted: our printer has one
    form, already formatted, with every annotation and layout it keeps written out."""
    for flag, value in (("concise", concise), ("format", format), ("explicit_layout", explicit_layout)):
        if not isinstance(value, bool):
            raise TypeError(f"python_print({flag}={value!r}): must be True or False")
    if isinstance(node, _ir.Program):
        text = _ir.print_program(node)
    elif isinstance(node, _ir.Function):
        text = _ir.print_function(node)
    elif isinstance(node, _ir.Type):
        text = _ir.print_type(node)
    elif isinstance(node, _ir.Expr):
        text = _ir.print_expr(node)
    else:
        raise TypeError(
            f"python_print(node=...): cannot print a {type(node).__name__}; fix: pass an ir.Program, "
            "ir.Function, a type or an expression"
        )
    return _rename_prefix(text, prefix)


def _as_python(self, prefix: str = "pl", concise: bool = False, format: bool = True) -> str:
    """The DSL text of this node (see pypto.ir.python_print)."""
    return python_print(self, prefix=prefix, concise=concise, format=format)


def _same_as(self, other) -> bool:
    """True when `other` is this very node (identity, not structural equality)."""
    return self is other


class TileView:
    """The view of a tile's buffer (PyPTO's ir.TileView). Our IR keeps the valid region and
    the pad value; strides, layouts and fractal size are the chip's fixed row-major form
    (None here)."""

    def __init__(self, valid_shape=None, stride=None, start_offset=None, blayout=None, slayout=None,
                 fractal=None, pad=None, compact=None):
        self.valid_shape = list(valid_shape) if valid_shape is not None else None
        self.stride, self.start_offset = stride, start_offset
        self.blayout, self.slayout, self.fractal, self.compact = blayout, slayout, fractal, compact
        self.pad = pad

    def __repr__(self):
        return f"TileView(valid_shape={self.valid_shape}, pad={self.pad})"


class TensorView:
    """The view of a tensor (PyPTO's ir.TensorView): our tensors are contiguous row-major,
    so no TensorType carries one (`TensorType.tensor_view` is None)."""

    def __init__(self, stride=None, layout=None):
        self.stride, self.layout = stride, layout


def _tile_view(self):
    if not list(self.valid_shape) and self.pad == _ir.PadValue.null:
        return None
    return TileView(valid_shape=list(self.valid_shape) or None, pad=self.pad)


def _effective_tile_view(self):
    return TileView(valid_shape=list(self.valid_shape) or list(self.shape), pad=self.pad)


def _install(cls, name, value):
    if name not in cls.__dict__:
        setattr(cls, name, value)


def install():
    prog, fn = _ir.Program, _ir.Function
    raw = prog.__dict__["functions"]
    if not getattr(getattr(raw, "fget", None), "_pypto_map", False):  # once per process
        def functions(self, _raw=raw):
            return FunctionMap(_raw.__get__(self, prog))

        functions._pypto_map = True
        prog.functions = property(functions, doc=FunctionMap.__doc__)
    _install(prog, "get_function", lambda self, name: self.find(str(name)))
    _install(prog, "get_global_var",
             lambda self, name: GlobalVar(name) if self.find(str(name)) is not None else None)
    for cls in (prog, fn):
        _install(cls, "same_as", _same_as)
        _install(cls, "as_python", _as_python)
    for name, default in (("level", None), ("role", None), ("split", None), ("requires_runtime_binding", False)):
        _install(fn, name, property(lambda self, d=default: d))
    _install(fn, "attrs", property(lambda self: {}))
    _install(fn, "param_directions", property(lambda self: list(self.directions)))
    _install(_ir.TensorType, "tensor_view", property(lambda self: None))
    _install(_ir.TileType, "memory_space", property(lambda self: self.memory))
    _install(_ir.TileType, "tile_view", property(_tile_view))
    _install(_ir.TileType, "get_effective_tile_view", _effective_tile_view)


install()

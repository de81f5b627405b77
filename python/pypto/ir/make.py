"""`pypto.ir.make_call`: an op call expression built from Python."""

from __future__ import annotations

from pypto._core import ir as _ir


def make_call(op, args, *, directions=None, kwargs=None, type=None):  # noqa: A002
    """The call of op `op` (its registry name, e.g. "tile.add", or a DSL name) on `args`,
    with compile-time attributes `kwargs`; its type is inferred by the op registry.
    `directions` (one pypto.ir.directions value per argument) is checked for length and
    kind: our calls derive each argument's direction from the op. `type`, when given, must
    equal the inferred type."""
    name = getattr(op, "name", op)
    if not isinstance(name, str):
        raise TypeError(f"make_call(op={op!r}): pass the op's name, e.g. 'tile.add'")
    args = list(args)
    if directions is not None:
        directions = list(directions)
        if len(directions) != len(args):
            raise ValueError(f"make_call({name!r}): {len(directions)} directions for {len(args)} arguments; "
                             "fix: give one direction per argument")
        for d in directions:
            if not isinstance(d, _ir.ParamDirection):
                raise TypeError(f"make_call({name!r}): direction {d!r} is not a pypto.ir.directions value")
    call = _ir.make_op_call(name, args, {}, dict(kwargs or {}))
    if type is not None and not _ir.structural_equal(type, call.type):
        raise TypeError(f"make_call({name!r}, type={_ir.print_type(type)}): the op's type is "
                        f"{_ir.print_type(call.type)}; fix: drop type= or pass the op's type")
    return call

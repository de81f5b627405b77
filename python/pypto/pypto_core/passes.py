"""`pypto.pypto_core.passes`: the pass pipeline and pass-context names, as PyPTO's extension
module spells them (the same objects as pypto.ir / pypto.ir.pass_manager). Each pipeline
pass is also a factory here: `passes.<snake_name>()` (e.g. `passes.plan_memory()`) returns
the pass; calling it on a program runs it."""

import re as _re

from pypto import _core as _c
from pypto.ir.pass_context import *  # noqa: F401,F403 - the pass-context names (its __all__)
from pypto.ir.pass_manager import Pass, PassDumpLevel, PassManager, coerce_dump_level  # noqa: F401


def _snake(name: str) -> str:
    return _re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _factory(name, doc):
    def make():
        return Pass(name, doc)

    make.__name__ = _snake(name)
    make.__doc__ = doc
    return make


for _name, _doc in _c.pipeline_passes():
    globals()[_snake(_name)] = _factory(_name, _doc)

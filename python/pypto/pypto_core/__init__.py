"""`pypto.pypto_core`: PyPTO's name of the C++ extension module; here it is our
`pypto._core` (every name of it, and its `ir` submodule), with `passes` holding the pass
pipeline's names (pypto.pypto_core.passes)."""

from pypto._core import *  # noqa: F401,F403
from pypto._core import ir  # noqa: F401
from pypto.pypto_core import passes  # noqa: F401
from pypto.backend import BackendType  # noqa: F401


def __getattr__(name):
    from pypto import _core

    return getattr(_core, name)

"""pypto: a tile-based compiler and MPMD runtime in the PyPTO family that runs anywhere."""

import importlib

from pypto import _core  # noqa: F401  (loads the extension first)
from pypto import _driver, _traceback
from pypto._core import PyptoError
from pypto.ir import _nodes  # noqa: F401  (PyPTO's accessors of the IR nodes)

__version__ = "0.1.0"


def _load_jit():
    """The jit package, for the @pl.jit functions of pypto.language (see pypto._driver)."""
    import pypto.jit.functions

    return pypto.jit.functions


_driver.set_loader(_load_jit)
_traceback.install_excepthook()  # user errors print without pypto's own frames

# The instruction-level `pto` API (package pypto.lanes; `pto.kernel` is its decorator) is
# re-exported lazily: importing it costs a few milliseconds that `import pypto.language`
# should not pay.
_KERNEL_NAMES = None


def _kernel_names():
    global _KERNEL_NAMES
    if _KERNEL_NAMES is None:
        module = importlib.import_module("pypto.lanes")
        _KERNEL_NAMES = list(module.__all__)
        globals().update({n: getattr(module, n) for n in _KERNEL_NAMES})
    return _KERNEL_NAMES


# `import pypto` then `pypto.ir.X` / `pypto.backend.X` / ...: submodules load on first use.
_SUBMODULES = ("backend", "debug", "ir", "isa", "language", "lanes", "pypto_core", "runtime", "tools")


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"pypto.{name}")
    if name == "__all__":
        return ["PyptoError", "__version__", *_kernel_names()]
    if name.startswith("__"):
        raise AttributeError(f"module 'pypto' has no attribute {name!r}")
    if name in _kernel_names():
        return globals()[name]
    raise AttributeError(f"module 'pypto' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_kernel_names()))

"""pypto: a tile-based compiler and MPMD runtime in the PyPTO family that runs anywhere."""

from pypto import _core  # noqa: F401  (loads the extension first)
from pypto._core import PyptoError
from pypto.kernel import *  # noqa: F401,F403  (the instruction-level `pto` API)
from pypto.kernel import __all__ as _kernel_names

__all__ = ["PyptoError", "__version__", *_kernel_names]
__version__ = "0.1.0"

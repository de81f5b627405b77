"""pypto: a tile-based compiler and MPMD runtime in the PyPTO family that runs anywhere."""

from pypto import _core  # noqa: F401  (loads the extension first)
from pypto._core import PyptoError

__all__ = ["PyptoError", "__version__"]
__version__ = "0.1.0"

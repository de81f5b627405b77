"""pypto: a tile-based compiler and MPMD runtime in the PyPTO family that runs anywhere."""

from pypto import _core  # noqa: F401

__version__ = "0.1.0"

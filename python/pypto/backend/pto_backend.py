"""`pypto.backend.pto_backend`: the PTO code generator's names PyPTO programs import."""

from pypto._core import PyptoError


class PartialCodegenError(PyptoError):
    """PyPTO raises it when some kernels could not be generated. Our code generator emits
    every kernel or raises a PyptoError naming the failing one, so it is never raised here;
    `except PartialCodegenError` is accepted (and catches nothing PyptoError would not)."""

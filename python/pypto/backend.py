"""Backend names accepted for compatibility with PyPTO programs (`pypto.backend`)."""

from enum import Enum


class BackendType(Enum):
    """The chip family a program targets; maps to a simulated platform here."""

    Ascend910B = "a2a3sim"
    Ascend950 = "a5sim"

"""`pl.parser`: PyPTO's parser module. The DSL parser's entry points (`parse`,
`parse_program`, `loads`, `loads_program`) and its error classes, the same objects as
`pl.parse` / `pl.ParseError` (one parser: python/pypto/language/*.py)."""

from .decorators import loads, loads_program, parse, parse_program  # noqa: F401
from .errors import ParseError, SSAViolationError  # noqa: F401
from .ops import NotSupported  # noqa: F401

__all__ = ["parse", "parse_program", "loads", "loads_program", "ParseError", "SSAViolationError", "NotSupported"]

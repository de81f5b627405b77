"""Parse errors of the DSL front end: every message starts with the user's `file:line:`,
names the construct and says how to fix it (same layout as the C++ PyptoError)."""

from pypto._core import PyptoError


class ParseError(PyptoError):
    """A program that the DSL parser cannot turn into IR."""


def parse_error(span, message, fix=""):
    """Builds a ParseError at `span` (a pypto._core.ir.Span)."""
    text = f"{span.file}:{span.line}: {message}" if span is not None and span.line > 0 else message
    if fix:
        text += f"\n  fix: {fix}"
    return ParseError(text)


class SSAViolationError(ParseError):
    """A name assigned twice in a function parsed with strict_ssa=True."""

    @classmethod
    def at(cls, span, message, fix=""):
        return cls(str(parse_error(span, message, fix)))

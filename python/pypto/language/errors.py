"""Parse errors of the DSL front end: every message starts with the user's `file:line:`,
names the construct and says how to fix it (same layout as the C++ PyptoError), and quotes
the user's source line with a caret under the offending expression:

    prog.py:10: pl.tile.add: argument 'rhs' has shape [64, 128] but 'lhs' has [128, 128]
        pl.store(pl.add(ta, tb), [0, 0], c)
                            ^^ 'rhs' is tb, 'lhs' is ta
      fix: ...
"""

from pypto._core import PyptoError
from pypto._traceback import excerpt_from_message, source_excerpt, with_excerpt  # noqa: F401


class ParseError(PyptoError):
    """A program that the DSL parser cannot turn into IR."""


def parse_error(span, message, fix="", col=None, end_col=None):
    """Builds a ParseError at `span` (a pypto._core.ir.Span); `col`/`end_col`: the columns of
    the offending expression in the file's line (the caret), when known."""
    located = span is not None and span.line > 0
    text = f"{span.file}:{span.line}: {message}" if located else message
    if fix:
        text += f"\n  fix: {fix}"
    if located:
        text = with_excerpt(text, span.file, span.line, col, end_col)
    return ParseError(text)


class InputWrittenWarning(UserWarning):
    """A store to a function parameter declared as an input (no pl.Out / pl.InOut): the
    program runs with the parameter treated as written; the declaration should say so."""


class SSAViolationError(ParseError):
    """A name assigned twice in a function parsed with strict_ssa=True."""

    @classmethod
    def at(cls, span, message, fix=""):
        return cls(str(parse_error(span, message, fix)))

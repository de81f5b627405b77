"""Parse errors of the DSL front end: every message starts with the user's `file:line:`,
names the construct and says how to fix it (same layout as the C++ PyptoError), and quotes
the user's source line with a caret under the offending expression:

    prog.py:10: pl.tile.add: argument 'rhs' (tb) has shape [64, 128] but 'lhs' (ta) has [128, 128]
        pl.store(pl.add(ta, tb), [0, 0], c)
                            ^^
      fix: ...
"""

import linecache
import re

from pypto._core import PyptoError


class ParseError(PyptoError):
    """A program that the DSL parser cannot turn into IR."""


_CARET_LINE = re.compile(r"\n {4,}\^+(\n|$)")  # the caret line of an excerpt already there


def source_excerpt(file, line, col=None, end_col=None):
    """The user's source line `line` of `file` (4-space indented) and a caret line under
    columns [col, end_col) (0-based, in the file's own line); without a column, under the
    whole statement. "" when the line cannot be read."""
    if not file or line is None or line <= 0:
        return ""
    text = linecache.getline(file, line).rstrip("\n").rstrip()
    if not text.strip():
        return ""
    text = text.expandtabs(4)
    indent = len(text) - len(text.lstrip())
    start = indent if col is None or col < indent or col >= len(text) else col
    stop = len(text) if end_col is None or end_col <= start or end_col > len(text) else end_col
    return f"    {text[indent:]}\n    {' ' * (start - indent)}{'^' * max(1, stop - start)}"


def with_excerpt(text, file, line, col=None, end_col=None):
    """`text` (a "file:line: message\\n  fix: ..." error) with the source excerpt after the
    message, before the fix; unchanged when it already has one or the line is unreadable."""
    if _CARET_LINE.search(text):
        return text
    excerpt = source_excerpt(file, line, col, end_col)
    if not excerpt:
        return text
    at = text.find("\n  fix:")
    if at < 0:
        return f"{text}\n{excerpt}"
    return f"{text[:at]}\n{excerpt}{text[at:]}"


_LOCATION = re.compile(r"^(?P<file>[^\n:]+):(?P<line>\d+): ")


def excerpt_from_message(text, col=None, end_col=None):
    """A C++ error "file:line: message ...": the same text with that line quoted."""
    m = _LOCATION.match(text)
    if not m:
        return text
    return with_excerpt(text, m.group("file"), int(m.group("line")), col, end_col)


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

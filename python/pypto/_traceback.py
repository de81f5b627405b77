"""Short tracebacks for user errors (as JAX and Triton show them).

An error the user caused (a `PyptoError`: a parse, type, capacity or run-time error naming
the user's file:line) that leaves pypto through a public entry point (`@pl.jit` calls,
`.compile`, `.lower`, `@pl.program`, `pl.parse`) loses the traceback frames that lie inside
the pypto package: the user sees their own frames, then the message with their source line.
`PYPTO_FULL_TRACEBACK=1` keeps every frame (for bug reports).
"""

from __future__ import annotations

import functools
import linecache
import os
import re
import threading
import types

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_depth = threading.local()
NOTE = ("(pypto-internal traceback frames are hidden; set PYPTO_FULL_TRACEBACK=1 to show them "
        "in a bug report)")


def call_site() -> str:
    """`file:line` of the first caller outside pypto: where the user called the program."""
    import sys

    frame = sys._getframe(1)
    while frame is not None and (
        os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR)
        or (frame.f_code.co_filename == "<string>" and frame.f_code.co_name == "__init__")  # a dataclass's __init__
    ):
        frame = frame.f_back
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else "<unknown>"


# -- the user's source line under a message ------------------------------------------------
_CARET_LINE = re.compile(r"\n {4,}\^+( [^\n]*)?(\n|$)")  # the caret line of an excerpt already there


def source_excerpt(file, line, col=None, end_col=None, note=""):
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
    caret = f"    {' ' * (start - indent)}{'^' * max(1, stop - start)}"
    return f"    {text[indent:]}\n{caret}{' ' + note if note else ''}"


def with_excerpt(text, file, line, col=None, end_col=None, note=""):
    """`text` (a "file:line: message\\n  fix: ..." error) with the source excerpt after the
    message, before the fix; unchanged when it already has one or the line is unreadable."""
    if _CARET_LINE.search(text):
        return text
    excerpt = source_excerpt(file, line, col, end_col, note)
    if not excerpt:
        return text
    at = text.find("\n  fix:")
    if at < 0:
        return f"{text}\n{excerpt}"
    return f"{text[:at]}\n{excerpt}{text[at:]}"


_LOCATION = re.compile(r"^(?P<file>[^\n:]+):(?P<line>\d+): ")


def excerpt_from_message(text, col=None, end_col=None, note=""):
    """A C++ error "file:line: message ...": the same text with that line quoted."""
    m = _LOCATION.match(text)
    if not m:
        return text
    return with_excerpt(text, m.group("file"), int(m.group("line")), col, end_col, note)



def full_traceback() -> bool:
    return os.environ.get("PYPTO_FULL_TRACEBACK", "") not in ("", "0")


def _internal(frame) -> bool:
    return os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR)


def strip_internal_frames(tb):
    """The traceback `tb` without the frames whose code lies in the pypto package."""
    kept = []
    while tb is not None:
        if not _internal(tb.tb_frame):
            kept.append(tb)
        tb = tb.tb_next
    out = None
    for t in reversed(kept):
        out = types.TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out


def _is_user_error(e: BaseException) -> bool:
    from pypto._core import PyptoError

    return isinstance(e, PyptoError)


class user_errors:
    """`with user_errors():` around the body of a public entry point: a user error leaving the
    outermost one carries only the user's frames (all of them with PYPTO_FULL_TRACEBACK=1).
    A context manager rather than a decorator: it adds no frame (entry points that look at
    their caller's frame keep working) and, re-raised by the `with` itself, the exception
    keeps the filtered traceback (Python 3.11+; 3.10 keeps the entry point's own frame)."""

    __slots__ = ("depth",)

    def __enter__(self):
        self.depth = getattr(_depth, "n", 0)
        _depth.n = self.depth + 1
        return self

    def __exit__(self, etype, e, tb):
        _depth.n = self.depth
        if e is None or self.depth or not _is_user_error(e):
            return False
        if len(e.args) == 1 and isinstance(e.args[0], str):  # a C++ error: quote the user's line
            e.args = (excerpt_from_message(e.args[0]),)
        if full_traceback():
            return False
        e.__suppress_context__ = True  # the internal exception it was raised from
        if hasattr(e, "add_note") and NOTE not in getattr(e, "__notes__", ()):
            e.add_note(NOTE)
        kept = strip_internal_frames(tb)
        if kept is None and tb is not None:  # 3.10 re-raises the original object: cut after its head
            tb.tb_next = None
        elif tb is not None:
            tb.tb_next = kept
        e.__traceback__ = kept
        return False


def api_boundary(fn):
    """The decorator form of `user_errors` (for entry points that do not inspect frames)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        __tracebackhide__ = True  # pytest and IPython hide this frame
        with user_errors():
            return fn(*args, **kwargs)

    return wrapper


def install_excepthook():
    """At the top level of a script the re-raise frame of `api_boundary` goes too: an uncaught
    user error is printed with the user's frames only (the previous hook prints it)."""
    import sys

    previous = sys.excepthook
    if getattr(previous, "_pypto_hook", False):
        return

    def hook(etype, value, tb):
        if not full_traceback() and _is_user_error(value):
            tb = strip_internal_frames(tb)
        previous(etype, value, tb)

    hook._pypto_hook = True
    sys.excepthook = hook

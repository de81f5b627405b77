"""Where a @pl.jit function finds the code that compiles and calls it.

The language (pypto.language) makes @pl.jit functions and only parses; compiling, caching and
calling them is the jit package's (pypto.jit), a layer above. So the language does not import
the jit package: a call asks `jit()` here, and the root package (pypto/__init__.py, where the
layers are put together) has told this module how to load it (`set_loader`). This module
imports nothing of pypto."""

_loader = None
_jit = None


def set_loader(loader) -> None:
    """`loader()` returns the jit package (called once, at the first call of a jit function)."""
    global _loader, _jit
    _loader, _jit = loader, None


def jit():
    """The jit package's entry points (pypto.jit.functions): jit_call, jit_compile, jit_lower,
    jit_cache, host_call, host_callback."""
    global _jit
    if _jit is None:
        if _loader is None:
            raise RuntimeError("internal error: no compile driver; `import pypto` installs it (pypto/__init__.py)")
        _jit = _loader()
    return _jit

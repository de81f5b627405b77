"""The jit package: specialise, compile, cache and call.

A @pl.jit function (made by pypto.language, which only parses) is specialised on the shapes,
dtypes and scalar values of its arguments (`arg_specs`), parsed for them, compiled through the
pass pipeline (`compile_program`), cached per function under a key computed from the one
options object (`RunConfig.compile_key()`), and called (`CompiledProgram.__call__` binds the
arguments and runs the host program on the C++ task runtime). pypto.runtime (PyPTO's run
API) and pypto.ir.compile are built on this package; docs/architecture.md ("Python packages")
shows the layers.

The names load on first use: pypto.ir imports pypto.jit.config (RunConfig, the strategies)
at `import pypto`, which should not pay for the parser and numpy."""

_NAMES = {
    "CompiledProgram": "compiled", "check_roundtrip": "compiled", "compile_cached": "compiled",
    "compile_program": "compiled", "fp8_bits": "compiled",
    "RunConfig": "config",
    "arg_specs": "functions", "compiled_of": "functions", "jit_cache": "functions", "jit_call": "functions",
    "jit_compile": "functions", "jit_lower": "functions", "program_kind": "functions",
    "DistributedConfig": "distributed", "DistributedWorker": "distributed", "DistributedCompiledProgram": "distributed",
    "host_call": "distributed",
}

__all__ = sorted(_NAMES)


def __getattr__(name):
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'pypto.jit' has no attribute {name!r}")
    if module == "compiled":
        from pypto.jit import compiled as m
    elif module == "config":
        from pypto.jit import config as m
    elif module == "distributed":
        from pypto.jit import distributed as m
    else:
        from pypto.jit import functions as m
    return getattr(m, name)


def __dir__():
    return sorted(set(globals()) | set(_NAMES))

"""Compiling and running PyPTO programs: RunConfig, run, and calls of @pl.jit functions."""

from __future__ import annotations

import os
import weakref

from pypto import _core
from pypto.runtime.config import RunConfig
from pypto.runtime.tensors import bind_tensor, is_tensor, tensor_spec

__all__ = ["RunConfig", "run", "CompiledProgram", "jit_call", "jit_compile", "jit_lower"]


class CompiledProgram:
    """A compiled program: call it with arrays to run it again without recompiling."""

    def __init__(self, compiled, config: RunConfig):
        self._compiled = compiled
        self.config = config
        self.platform = compiled.platform
        self.param_names = list(compiled.param_names)
        self.name = compiled.entry
        self.output_dir = config.output_dir or os.path.join("build_output", self.name)
        self.modelled_cycles = None  # set by each run: cycles of the modelled timeline
        self._write_artifacts()

    @property
    def program(self):
        """The IR after the whole pass pipeline."""
        return self._compiled.lowered

    @property
    def host_program(self):
        """The instruction streams the engines execute."""
        return self._compiled.host

    def pto(self) -> dict:
        """The `.pto` text of each kernel, by kernel name."""
        return {k.name: k.pto_text for k in self._compiled.host.kernels}

    def _write_artifacts(self):
        cfg = self.config
        if cfg.dump_passes:
            dump_dir = os.path.join(self.output_dir, "passes_dump")
            os.makedirs(dump_dir, exist_ok=True)
            for name, program in self._compiled.pass_results:
                with open(os.path.join(dump_dir, name + ".py"), "w") as f:
                    f.write(_core.print_program(program))
        if cfg.save_kernels:
            kdir = cfg.save_kernels_dir or os.path.join(self.output_dir, "kernels")
            os.makedirs(kdir, exist_ok=True)
            for name, text in self.pto().items():
                with open(os.path.join(kdir, name + ".pto"), "w") as f:
                    f.write(text)

    def __call__(self, *args, config: RunConfig | None = None):
        cfg = config or self.config
        host = self._compiled.host
        params = list(host.params)
        if len(args) != len(params):
            names = ", ".join(self.param_names)
            raise TypeError(
                f"{self.name}() takes {len(params)} arguments ({names}), got {len(args)}"
            )
        bound = []
        for arg, p in zip(args, params):
            if p.is_tensor:
                if not is_tensor(arg):
                    raise TypeError(
                        f"{self.name}(): argument '{p.name}' must be a numpy array or torch "
                        f"tensor, got {type(arg).__name__}"
                    )
                shape, dtype = tensor_spec(arg, p.name)
                want = tuple(p.shape)
                if shape != want or dtype != p.dtype:
                    raise TypeError(
                        f"{self.name}(): argument '{p.name}' has shape {list(shape)} and dtype "
                        f"{dtype}, but the program was compiled for {list(want)} "
                        f"{p.dtype}; fix: pass a matching array or recompile"
                    )
                writable = p.dir in ("Out", "InOut")
                bound.append(bind_tensor(arg, p.name, writable))
            else:
                if is_tensor(arg):
                    raise TypeError(f"{self.name}(): argument '{p.name}' is a scalar parameter")
                bound.append(arg)
        if cfg.codegen_only:
            return None
        # The sim engine's cycle model times every instruction; trace_path writes the timeline.
        self.modelled_cycles = _core.run_host_program(
            host, bound, cfg.platform, cfg.engine, cfg.num_workers, cfg.trace_path
        )
        rets = [args[i] if i < len(args) else None for i in host.returns]
        if not rets:
            return None
        return rets[0] if len(rets) == 1 else tuple(rets)


def _compile(program, config: RunConfig) -> CompiledProgram:
    compiled = _core.compile(program, config.platform, config.dump_passes)
    return CompiledProgram(compiled, config)


_program_cache: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def run(program, *args, config: RunConfig | None = None) -> CompiledProgram:
    """Compiles a class-form program (once per platform) and runs it on `args` in place."""
    config = config or RunConfig()
    key = (config.platform, config.dump_passes, config.save_kernels)
    per_program = _program_cache.setdefault(program, {})
    compiled = per_program.get(key)
    if compiled is None:
        compiled = per_program[key] = _compile(program, config)
    compiled(*args, config=config)
    return compiled


def _arg_specs(jitfn, args):
    specs = []
    for i, a in enumerate(args):
        name = f"argument {i}"
        if is_tensor(a):
            shape, dtype = tensor_spec(a, name)
            specs.append(("tensor", shape, getattr(_core.DataType, dtype)))
        elif isinstance(a, bool):
            specs.append(("scalar", _core.DataType.BOOL, a))
        elif isinstance(a, int):
            specs.append(("scalar", _core.DataType.INDEX, a))
        elif isinstance(a, float):
            specs.append(("scalar", _core.DataType.FP32, a))
        else:
            raise TypeError(
                f"{getattr(jitfn, '__name__', 'jit function')}(): {name} is a "
                f"{type(a).__name__}; pass numpy arrays, torch tensors, ints or floats"
            )
    return specs


_jit_cache: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _jit_key(specs, config):
    return (
        tuple((s[0], s[1], str(s[2])) if s[0] == "tensor" else (s[0], str(s[1])) for s in specs),
        config.platform,
        config.dump_passes,
        config.save_kernels,
    )


def jit_compile(jitfn, args, config: RunConfig | None = None) -> CompiledProgram:
    """Specialises `jitfn` on the shapes/dtypes of `args` and compiles it (cached)."""
    config = config or RunConfig()
    specs = _arg_specs(jitfn, args)
    cache = _jit_cache.setdefault(jitfn, {})
    key = _jit_key(specs, config)
    compiled = cache.get(key)
    if compiled is None:
        compiled = cache[key] = _compile(jitfn.parse(specs), config)
    return compiled


def jit_call(jitfn, args, config: RunConfig | None = None):
    """Runs `jitfn` on `args`, compiling it on first use for these shapes and dtypes."""
    config = config or RunConfig()
    return jit_compile(jitfn, args, config)(*args, config=config)


def jit_lower(jitfn, args, config: RunConfig | None = None):
    """The IR of `jitfn` after the pass pipeline, for these argument shapes and dtypes."""
    return jit_compile(jitfn, args, config).program

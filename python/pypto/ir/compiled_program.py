"""`pypto.ir.compiled_program.CompiledProgram`: what `pypto.ir.compile`, `pypto.runtime.run`
and a jit function's `.compile()` return. The class is pypto.runtime.CompiledProgram (one
class); this module holds PyPTO's part of its API (`_PyptoCompiledProgramAPI`, a base of it):
`from_dir`, `backend_type`, `validate_ir`, `build_orch_args`, `build_call_config`,
`output_indices`, `has_return`, `orchestration_names`, and PyPTO's constructor form
`CompiledProgram(program, output_dir, *, backend_type=..., platform=...)`.

The build directory describes itself: `compiled_program.json` (entry, platform, verify
level) and `program.py` (the program before the passes, re-parseable), from which
`CompiledProgram.from_dir(output_dir)` compiles the same program again."""

from __future__ import annotations

import dataclasses
import json
import os

MANIFEST = "compiled_program.json"
SOURCE = "program.py"


def _backend_of_platform(platform: str):
    from pypto.backend import BackendType

    for b in BackendType:
        if platform in (b.value, b.value[: -len("sim")]):
            return b
    return None


class _PyptoCompiledProgramAPI:
    """PyPTO's methods of CompiledProgram (mixed into pypto.runtime.CompiledProgram)."""

    def __init__(self, program, output_dir=None, *, backend_type=None, platform=None, _param_infos=None,
                 _output_indices=None, _return_types=None, _sub_chip_names=None):
        """PyPTO's constructor form: compiles `program` (an ir.Program) for `backend_type` /
        `platform` with its build directory at `output_dir`. The underscored parameters are
        PyPTO's internal metadata; ours comes from the compiled program itself."""
        from pypto import _core
        from pypto.runtime import RunConfig, _compile

        if not isinstance(program, _core.ir.Program):
            raise TypeError(f"CompiledProgram(program=...) takes an ir.Program, got {type(program).__name__}; "
                            "fix: use pypto.ir.compile(program) or CompiledProgram.from_dir(output_dir)")
        cfg = RunConfig(platform=platform, backend_type=backend_type, output_dir=output_dir)
        other = _compile(program, cfg)
        self.__dict__.update(other.__dict__)

    @classmethod
    def _wrap(cls, compiled, config, source=None):
        self = cls.__new__(cls)
        self._setup(compiled, config, source)
        return self

    # ---- the self-describing build directory ----
    def _write_manifest(self, output_dir: str) -> None:
        from pypto import _core

        if self._source is None:
            return
        os.makedirs(output_dir, exist_ok=True)
        with open(os.path.join(output_dir, SOURCE), "w") as f:
            f.write(_core.ir.print_program(self._source))
        with open(os.path.join(output_dir, MANIFEST), "w") as f:
            json.dump({"format": 1, "entry": self.name, "platform": self.platform, "verify": self.config.verify,
                       "param_names": self.param_names, "source": SOURCE}, f, indent=1)

    @classmethod
    def from_dir(cls, output_dir, *, platform=None, backend_type=None):
        """The compiled program whose build directory is `output_dir` (written by
        pypto.ir.compile or by reading `.output_dir`): its program.py is parsed and compiled
        again, for `platform` / `backend_type` if given, else the platform it was built for."""
        from pypto.language import parse
        from pypto.runtime import RunConfig, _compile

        output_dir = os.fspath(output_dir)
        manifest_path = os.path.join(output_dir, MANIFEST)
        if not os.path.isfile(manifest_path):
            raise FileNotFoundError(
                f"CompiledProgram.from_dir({output_dir!r}): no {MANIFEST} in the directory; fix: pass the output_dir "
                "of a program compiled by pypto.ir.compile (it writes the manifest)"
            )
        with open(manifest_path) as f:
            manifest = json.load(f)
        source_path = os.path.join(output_dir, manifest.get("source", SOURCE))
        with open(source_path) as f:
            program = parse(f.read(), filename=source_path)
        if platform is None and backend_type is None:
            platform = manifest["platform"]
        cfg = RunConfig(platform=platform, backend_type=backend_type, output_dir=output_dir,
                        verify=manifest.get("verify", "basic"))
        compiled = _compile(program, cfg)
        compiled._artifacts_written = manifest.get("platform") == compiled.platform
        return compiled

    # ---- descriptions ----
    @property
    def platform(self) -> str:
        """The platform it was compiled for ("a2a3sim" / "a5sim")."""
        return self.__dict__.get("_platform")

    @platform.setter
    def platform(self, value):
        self.__dict__["_platform"] = value

    @property
    def param_names(self) -> list:
        """The entry's parameter names, in order."""
        return self.__dict__.get("_param_names")

    @param_names.setter
    def param_names(self, value):
        self.__dict__["_param_names"] = value

    @property
    def backend_type(self):
        """The pypto.backend.BackendType of the platform it was compiled for."""
        return _backend_of_platform(self.platform)

    @property
    def output_indices(self) -> list:
        """Positions of the parameters the program writes (Out / InOut)."""
        return [i for i, p in enumerate(self._compiled.host.params) if p.is_tensor and p.dir in ("Out", "InOut")]

    @property
    def has_return(self) -> bool:
        """True when a call returns values (the entry's returned tensors)."""
        return len(self._compiled.host.returns) > 0

    @property
    def orchestration_names(self) -> list:
        """The names of the program's Orchestration functions (the entry)."""
        from pypto import _core

        return [f.name for f in self._compiled.lowered.functions.values()
                if f.func_type == _core.ir.FunctionType.Orchestration]

    # ---- calling ----
    def build_orch_args(self, *args, worker=None):
        """The runtime's view of `args` for one call (checked against the parameters, dynamic
        dimensions filled in): what `__call__` hands the task runtime. `worker` (a
        ChipWorker) is accepted: the view is the same on every worker."""
        bound, _ = self._bind(args, None)
        return bound

    def build_call_config(self, config=None, *, aicpu_thread_num=None, dfx_dir=None):
        """The RunConfig of a call: `config` (default: the compile's), with `dfx_dir` as the
        directory of the call's diagnostics (the swimlane of enable_chip_swimlane).
        `aicpu_thread_num` (PyPTO's scheduler threads on the device's AI CPU) is checked and
        accepted: our task runtime schedules on the host (RunConfig.num_workers sizes it)."""
        cfg = config or self.config
        if aicpu_thread_num is not None and (not isinstance(aicpu_thread_num, int) or aicpu_thread_num < 1):
            raise ValueError(f"build_call_config(aicpu_thread_num={aicpu_thread_num!r}): must be an int >= 1")
        if dfx_dir is not None:
            cfg = dataclasses.replace(cfg, output_dir=os.fspath(dfx_dir))
        return cfg

    def validate_ir(self, tensors, expected, *, rtol: float = 0.05, atol: float = 0.05) -> bool:
        """Runs the program on copies of `tensors` (one per parameter, or a dict by
        parameter name) on the reference interpreter (the sim engine) and compares each
        output with `expected` (a dict by parameter name, or one array per output in
        output_indices order). Returns True; raises AssertionError naming the first output
        that differs beyond rtol/atol."""
        import numpy as np

        from pypto.runtime.tensors import is_tensor

        if isinstance(tensors, dict):
            missing = [n for n in self.param_names if n not in tensors]
            if missing:
                raise ValueError(f"validate_ir(tensors=...): no value for {missing}; fix: give every parameter")
            args = [tensors[n] for n in self.param_names]
        else:
            args = list(tensors)
        args = [(a.clone() if hasattr(a, "clone") else a.copy()) if is_tensor(a) else a for a in args]
        cfg = dataclasses.replace(self.config, engine="sim")
        self(*args, config=cfg)
        outs = self.output_indices
        if isinstance(expected, dict):
            pairs = [(n, expected[n]) for n in expected]
        else:
            expected = list(expected)
            if len(expected) != len(outs):
                raise ValueError(f"validate_ir(expected=...): {len(expected)} arrays for {len(outs)} outputs "
                                 f"({[self.param_names[i] for i in outs]}); fix: give one per output or a dict")
            pairs = [(self.param_names[i], e) for i, e in zip(outs, expected)]
        for name, want in pairs:
            got = _as_numpy(args[self.param_names.index(name)])
            want = _as_numpy(want)
            if got.shape != want.shape or not np.allclose(got, want, rtol=rtol, atol=atol):
                err = float(np.max(np.abs(got - want))) if got.shape == want.shape else float("nan")
                raise AssertionError(
                    f"validate_ir: output '{name}' differs from the expected values (max |diff| {err:g}, "
                    f"rtol={rtol}, atol={atol}, shapes {list(got.shape)} vs {list(want.shape)})"
                )
        return True


def _as_numpy(x):
    """An array or torch tensor as a float64 numpy array."""
    import numpy as np

    if hasattr(x, "detach"):  # torch
        x = x.detach().cpu().float().numpy()
    return np.asarray(x, dtype=np.float64)


def __getattr__(name):
    if name == "CompiledProgram":
        from pypto.runtime import CompiledProgram

        return CompiledProgram
    raise AttributeError(f"module 'pypto.ir.compiled_program' has no attribute {name!r}")

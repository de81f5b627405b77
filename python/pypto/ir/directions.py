"""`pypto.ir.directions`: PyPTO's per-argument directions of a call (`ir.make_call(...,
directions=[...])`). Each is the parameter direction it stands for here: input -> In,
output / output_existing -> Out, inout -> InOut; no_dep (an argument the task graph does not
track) and scalar_dir (a scalar argument) are In."""

from pypto._core.ir import ParamDirection as _PD

input = _PD.In  # noqa: A001
output = _PD.Out
output_existing = _PD.Out
inout = _PD.InOut
no_dep = _PD.In
scalar_dir = _PD.In

__all__ = ["inout", "input", "no_dep", "output", "output_existing", "scalar_dir"]

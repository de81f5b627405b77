"""The callables of the `pl` namespace: registered ops (`pl.add`, `pl.tile.load`,
`pl.tensor.dim`) and the language constructs (`pl.range`, `pl.at`, `pl.yield_`, ...).
They only have meaning inside a parsed body; calling one from Python raises a clear error."""

from pypto._core import ir


def _outside(name):
    return RuntimeError(
        f"pl.{name} can only be used inside @pl.jit / @pl.function bodies; those bodies are parsed "
        "into IR, not executed by Python")


class OpStub:
    """A DSL spelling of a registered op, e.g. `add` (bare) or `tile.add` (exact)."""

    def __init__(self, dsl_name):
        self.dsl_name = dsl_name

    def __call__(self, *args, **kwargs):
        raise _outside(self.dsl_name)

    def __repr__(self):
        return f"pl.{self.dsl_name}"


class NotSupported(AttributeError):
    """A PyPTO name this implementation does not provide, with why and what to write instead."""

    def __init__(self, message, fix):
        super().__init__(f"{message}; fix: {fix}")
        self.message, self.fix = message, fix


NOT_SUPPORTED = {
    "cluster": ("pl.cluster is not supported: a cluster's cube and vector cores are programmed as a mixed task",
                "write a @pl.function(type=pl.FunctionType.Group) that calls one AIC and one or two AIV functions "
                "exchanging tiles with pl.tpush_to_aiv / pl.tpop_from_aic (docs/language.md, "
                "examples/intermediate/16_mixed_fifo.py)"),
    "split": ("pl.split(...) optimisation hints are not supported: the compiler chooses the tiling itself",
              "drop the hint; to split work across cores explicitly use pl.spmd(n) or a pl.parallel loop of pl.at "
              "blocks"),
}


def not_supported(name):
    message, fix = NOT_SUPPORTED[name]
    return NotSupported(message, fix)


class Construct:
    """A language construct handled by the parser itself (loops, scopes, yields, literals)."""

    def __init__(self, name):
        self.name = name

    def __call__(self, *args, **kwargs):
        raise _outside(self.name)

    def __repr__(self):
        return f"pl.{self.name}"


range = Construct("range")
parallel = Construct("parallel")
unroll = Construct("unroll")
pipeline = Construct("pipeline")
while_ = Construct("while_")
cond = Construct("cond")
at = Construct("at")
spmd = Construct("spmd")
scope = Construct("scope")
manual_scope = Construct("manual_scope")
get_block_idx = Construct("get_block_idx")
get_block_num = Construct("get_block_num")
submit = Construct("submit")
yield_ = Construct("yield_")
const = Construct("const")
min = Construct("min")
max = Construct("max")
static_assert = Construct("static_assert")
static_print = Construct("static_print")

LOOP_KINDS = {"range": ir.ForKind.Range, "parallel": ir.ForKind.Parallel, "unroll": ir.ForKind.Unroll,
              "pipeline": ir.ForKind.Pipeline}


def dsl_op_names():
    """Every DSL spelling the registry knows: exact names, their short forms and aliases."""
    names = set()
    for op in ir.all_ops():
        names.add(op.name)
        if op.name.startswith(("tile.", "tensor.")):  # pl.array.* / pl.task.* are always spelt out
            names.add(op.name.split(".", 1)[-1])
        names.update(op.aliases)
    return names


def op_stub(name):
    """The stub for `pl.<name>`, or None when no registered op has that spelling."""
    return OpStub(name) if name in dsl_op_names() else None


class OpNamespace:
    """`pl.tile` / `pl.tensor`: ops named exactly, `pl.tile.load` is the op `tile.load`."""

    def __init__(self, prefix):
        self._prefix = prefix

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        full = f"{self._prefix}.{name}"
        if ir.find_op(full) is None:
            raise AttributeError(f"pl.{full} is not an op of the language")
        return OpStub(full)

    def __dir__(self):
        return sorted(op.name.split(".", 1)[1] for op in ir.all_ops() if op.name.startswith(self._prefix + "."))


tile = OpNamespace("tile")
tensor = OpNamespace("tensor")
array = OpNamespace("array")  # pl.array.create(n, dtype): arrays of the orchestration
task = OpNamespace("task")    # pl.task.latest(task_id=N): what a printed `task_N` means

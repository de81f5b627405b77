"""The callables of the `pl` namespace: registered ops (`pl.add`, `pl.tile.load`,
`pl.tensor.dim`) and the language constructs (`pl.range`, `pl.at`, `pl.yield_`, ...).
They only have meaning inside a parsed body; calling one from Python raises a clear error."""

import inspect

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


NOT_SUPPORTED = {}


def not_supported(name):
    message, fix = NOT_SUPPORTED[name]
    return NotSupported(message, fix)


class Construct:
    """A language construct handled by the parser itself (loops, scopes, yields, literals).
    `signature` is PyPTO's: the parser binds a use's arguments with `bind`, so the keywords
    a construct accepts are stated once, here."""

    def __init__(self, name, signature=None):
        self.name = name
        if signature is not None:
            self.__signature__ = inspect.signature(signature)

    def bind(self, args, kwargs):
        """{parameter: value} for a use with these arguments, defaults filled in; raises
        TypeError naming the bad keyword or the missing argument."""
        sig = getattr(self, "__signature__", None)
        if sig is None:
            raise TypeError(f"pl.{self.name} has no signature")
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        return dict(bound.arguments)

    def __call__(self, *args, **kwargs):
        raise _outside(self.name)

    def __repr__(self):
        return f"pl.{self.name}"


# PyPTO's signatures of the constructs (facts of its API). Defaults that name enums are
# written as None here; the parser reads None as "not given".
def _range(*args, init_values=None, attrs=None): ...
def _unroll(*args, attrs=None): ...
def _pipeline(*args, stage=None, init_values=None, attrs=None): ...
def _while(*, init_values=None): ...
def _cond(condition): ...
def _at(level, role=None, *, optimizations=None, deps=None, no_dep_args=None, dumps=None,
        allow_early_resolve=False, name_hint="", windowize=False, manual=False): ...
def _spmd(core_num, *, sync_start=False, name_hint="", optimizations=None, deps=None,
          allow_early_resolve=False, predicate=None, level=None, manual=False): ...
def _scope(mode=None): ...
def _no_dep(tensor): ...
def _task_dummy(*, deps): ...
def _no_args(): ...
def _submit(kernel, *args, deps=None, dumps=None, allow_early_resolve=False, predicate=None, attrs=None,
            manual=False, task_id=-1, block_num=0): ...
def _spmd_submit(kernel, *args, core_num, sync_start=False, deps=None, dumps=None,
                 allow_early_resolve=False, predicate=None, attrs=None, manual=False, task_id=-1): ...
def _yield(*values, value=None, v1=None, v2=None, v3=None, v4=None, v5=None): ...
def _const(value, dtype): ...
def _minmax(lhs, rhs): ...
def _static_assert(condition, msg=""): ...
def _static_print(*args): ...
def _func_attr(attrs): ...
def _cluster(*, name_hint=""): ...
def _split_aiv(n, *, mode): ...
def _split(mode, *, slot_num=None): ...
def _cross_core_slot(*, slot_num): ...


range = Construct("range", _range)
parallel = Construct("parallel", _range)
unroll = Construct("unroll", _unroll)
pipeline = Construct("pipeline", _pipeline)
while_ = Construct("while_", _while)
cond = Construct("cond", _cond)
at = Construct("at", _at)
spmd = Construct("spmd", _spmd)
scope = Construct("scope", _scope)
manual_scope = Construct("manual_scope", _no_args)
get_block_idx = Construct("get_block_idx", _no_args)
get_block_num = Construct("get_block_num", _no_args)
submit = Construct("submit", _submit)
spmd_submit = Construct("spmd_submit", _spmd_submit)
task_dummy = Construct("system.task_dummy", _task_dummy)
no_dep = Construct("no_dep", _no_dep)
cluster = Construct("cluster", _cluster)
split_aiv = Construct("split_aiv", _split_aiv)
yield_ = Construct("yield_", _yield)
const = Construct("const", _const)
min = Construct("min", _minmax)
max = Construct("max", _minmax)
static_assert = Construct("static_assert", _static_assert)
static_print = Construct("static_print", _static_print)
func_attr = Construct("func_attr", _func_attr)

LOOP_KINDS = {"range": ir.ForKind.Range, "parallel": ir.ForKind.Parallel, "unroll": ir.ForKind.Unroll,
              "pipeline": ir.ForKind.Pipeline}


_dsl_names = (-1, frozenset())  # (number of registered ops, their spellings): looked up per pl.<name>


def dsl_op_names():
    """Every DSL spelling the registry knows: exact names, their short forms and aliases."""
    global _dsl_names
    ops = ir.all_ops()
    if _dsl_names[0] != len(ops):
        names = set()
        for op in ops:
            names.add(op.name)
            if op.name.startswith(("tile.", "tensor.")):  # pl.array.* / pl.task.* are always spelt out
                names.add(op.name.split(".", 1)[-1])
            names.update(op.aliases)
        _dsl_names = (len(ops), frozenset(names))
    return _dsl_names[1]


def stub_ops(name):
    """The registered ops a DSL spelling can resolve to: `tile.add` names one op; bare `add`
    is `tile.add` or `tensor.add` by argument type, or an alias."""
    found = []
    for op in ir.all_ops():
        if op.name == name or name in op.aliases or op.name in (f"tile.{name}", f"tensor.{name}"):
            found.append(op)
    return found


def stub_keywords(stub):
    """Every keyword the spelling of `stub` accepts (over the ops it can resolve to)."""
    return {k for op in stub_ops(stub.dsl_name) for p in op.params for k in (p.name, *p.aliases)}


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
        if self._prefix in ("tile", "tensor") and name in ("get_block_idx", "get_block_num"):  # pl.tile.get_block_idx()
            return globals()[name]
        if self._prefix == "tensor" and name == "no_dep":  # pl.tensor.no_dep(t) is pl.no_dep(t)
            return no_dep
        if ir.find_op(full) is None and not any(full in op.aliases for op in ir.all_ops()):
            raise AttributeError(f"pl.{full} is not an op of the language")
        return OpStub(full)

    def __dir__(self):
        names = {n for op in ir.all_ops() for n in [op.name, *op.aliases]}
        return sorted(n.split(".", 1)[1] for n in names if n.startswith(self._prefix + "."))


class _SystemNamespace(OpNamespace):
    """`pl.system`: barriers, events, fences (system.* ops), the cross-core FIFO ops under
    their pl.system spellings (aliases of tile.tpush_to_aiv, ...) and the constant AUTO."""

    AUTO = -1

    def __getattr__(self, name):
        if name == "task_dummy":  # joins task ids: a construct of the parser (expr_parser.task_dummy)
            return task_dummy
        return super().__getattr__(name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | {"task_dummy", "AUTO"})


class _TileNamespace(OpNamespace):
    """`pl.tile`: the tile ops, and PyPTO's `pl.tile.MemRefType` (pl.MemRef)."""

    from .types import MemRef as MemRefType
    from .types import MaskPattern  # PyPTO spells it pl.tile.MaskPattern


tile = _TileNamespace("tile")
system = _SystemNamespace("system")
prefetch = OpNamespace("prefetch")  # value-free L2 prefetch hints
tensor = OpNamespace("tensor")
array = OpNamespace("array")  # pl.array.create(n, dtype): arrays of the orchestration
task = OpNamespace("task")
dist = OpNamespace("dist")    # pld's kernel ops as the printer writes them (pl.dist.notify, ...; language/distributed.py)    # pl.task.latest(task_id=N): what a printed `task_N` means

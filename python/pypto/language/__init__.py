"""The PyPTO language (`import pypto.language as pl`): types, enums, decorators and ops.
Op functions (`pl.add`, `pl.tile.load`, ...) come from the op registry; they only have
meaning inside `@pl.jit` / `@pl.function` bodies, which are parsed, never executed."""

from pypto._core import PyptoError  # noqa: F401

from . import ops as _ops
from . import optimizations, parser  # noqa: F401  (PyPTO's pl.parser / pl.optimizations)
from .decorators import (  # noqa: F401
    InlineFunction,
    JITFunction,
    JitFunction,
    function,
    inline,
    jit,
    loads,
    loads_program,
    parse,
    parse_program,
    program,
)
from .errors import InputWrittenWarning, ParseError  # noqa: F401
from .launch import ScopeMode, SplitMode, adir, cross_core_slot, split  # noqa: F401
from .ops import (  # noqa: F401
    array,
    at,
    cluster,
    split_aiv,
    cond,
    const,
    func_attr,
    get_block_idx,
    get_block_num,
    submit,
    manual_scope,
    max,
    min,
    no_dep,
    parallel,
    pipeline,
    prefetch,
    range,
    scope,
    spmd,
    spmd_submit,
    static_assert,
    static_print,
    system,
    task,
    dist,
    tensor,
    tile,
    unroll,
    while_,
    yield_,
)
from .types import (  # noqa: F401
    BF16,
    BOOL,
    FP16,
    FP32,
    INDEX,
    TASK_ID,
    INT8,
    INT16,
    INT32,
    INT64,
    UINT8,
    UINT16,
    UINT32,
    UINT64,
    AUTO,
    DN,
    FP4,
    FP8E4M3FN,
    FP8E5M2,
    FP8E8M0,
    HF4,
    HF8,
    INT4,
    MX_A_ZZ,
    MX_B_NN,
    ND,
    NZ,
    UINT4,
    Addr,
    AsyncEvent,
    AsyncSession,
    CompactMode,
    ForKind,
    MemRef,
    MemRefType,
    PipeType,
    PrefetchAsyncContext,
    Ptr,
    PtrType,
    TaskId,
    TensorLayout,
    TensorView,
    TileLayout,
    TileView,
    Array,
    AtomicType,
    DynDim,
    DynVar,
    IntLike,
    RUNTIME,
    Role,
    DataType,
    FunctionType,
    dynamic,
    InOut,
    Level,
    Mem,
    MemorySpace,
    Out,
    PadValue,
    Scalar,
    Tensor,
    Tile,
    Tuple,
    ValidShape,
)


def __getattr__(name):
    """`pl.<op>` for every op spelling of the registry (`pl.add`, `pl.create_tile`, ...)."""
    if name in _ops.NOT_SUPPORTED:
        raise _ops.not_supported(name)
    stub = _ops.op_stub(name) if not name.startswith("__") else None
    if stub is None:
        raise AttributeError(f"module 'pypto.language' has no attribute '{name}'")
    return stub


def __dir__():
    return sorted(set(globals()) | _ops.dsl_op_names())

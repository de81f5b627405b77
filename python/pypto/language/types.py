"""Type annotations of the DSL (`pl.Tensor`, `pl.Tile`, `pl.Scalar`, `pl.Out`, ...) and the
enums and dtypes of the `pl` namespace. Annotations evaluate to small spec objects that the
parser turns into IR types once shapes are known."""

import enum

from pypto._core import ir

DataType = ir.DataType
MemorySpace = ir.MemorySpace
Mem = ir.MemorySpace
PadValue = ir.PadValue
FunctionType = ir.FunctionType
Level = ir.Level
Role = ir.Role

BOOL = DataType.BOOL
INT8 = DataType.INT8
INT16 = DataType.INT16
INT32 = DataType.INT32
INT64 = DataType.INT64
UINT8 = DataType.UINT8
UINT16 = DataType.UINT16
UINT32 = DataType.UINT32
UINT64 = DataType.UINT64
FP16 = DataType.FP16
BF16 = DataType.BF16
FP32 = DataType.FP32
INDEX = DataType.INDEX
TASK_ID = DataType.TASK_ID  # task ids: the dtype of pl.array.create(n, pl.TASK_ID)
TaskId = TASK_ID  # PyPTO's name of the task-id dtype (pl.array.create(n, pl.TaskId))
# PyPTO's narrow dtypes: accepted in annotations, printed and parsed; no op computes on
# them here (ir.dtype_storage_only; docs/language.md "Types, system and cross-core ops").
FP8E4M3FN = DataType.FP8E4M3FN
FP8E5M2 = DataType.FP8E5M2
FP8E8M0 = DataType.FP8E8M0
FP4 = DataType.FP4
HF4 = DataType.HF4
HF8 = DataType.HF8
INT4 = DataType.INT4
UINT4 = DataType.UINT4


class PipeType(str, enum.Enum):
    """The pipes of a core (pl.system.sync_src/sync_dst/sync_set/sync_wait pipe= arguments);
    a member is its name, so the IR keeps it as that string ("MTE2")."""

    MTE1 = "MTE1"
    MTE2 = "MTE2"
    MTE3 = "MTE3"
    M = "M"
    V = "V"
    S = "S"
    FIX = "FIX"
    ALL = "ALL"

    def __str__(self):
        return self.value


class TensorLayout(str, enum.Enum):
    """Layouts of a tensor: ND (row-major, packed), DN (the last two dims swapped), NZ (the
    cube's fractal layout; tiles only) and the A5 MX-scale tags MX_A_ZZ / MX_B_NN."""

    ND = "ND"
    DN = "DN"
    NZ = "NZ"
    MX_A_ZZ = "MX_A_ZZ"
    MX_B_NN = "MX_B_NN"

    def __str__(self):
        return self.value


ND, DN, NZ, MX_A_ZZ, MX_B_NN = TensorLayout.ND, TensorLayout.DN, TensorLayout.NZ, TensorLayout.MX_A_ZZ, TensorLayout.MX_B_NN


class TileLayout(str, enum.Enum):
    """Block (blayout) and scatter (slayout) layouts of a tile view."""

    none_box = "none_box"
    row_major = "row_major"
    col_major = "col_major"

    def __str__(self):
        return self.value


class CompactMode(str, enum.Enum):
    """Compaction of a tile view (pl.TileView(compact=...))."""

    null = "null"
    normal = "normal"

    def __str__(self):
        return self.value


class ForKind:
    """PyPTO's loop kinds: Sequential is pl.range, Parallel pl.parallel, Unroll pl.unroll,
    Pipeline pl.pipeline (ir.ForKind.Range is Sequential)."""

    Sequential = ir.ForKind.Range
    Parallel = ir.ForKind.Parallel
    Unroll = ir.ForKind.Unroll
    Pipeline = ir.ForKind.Pipeline


AUTO = -1  # pl.reserve_buffer(base=pl.AUTO): the address is chosen for the buffer


class AtomicType:
    """Atomic modes of `pl.store(..., atomic=...)` / `pl.assemble(..., atomic=...)`: `None_`
    writes, `Add` adds the tile into global memory (the target must hold the start value)."""

    None_ = "none"
    Add = "add"


class _MaskPatternMeta(type):
    def __getattr__(cls, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return _MaskPatternMember(name)


class _MaskPatternMember:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"pl.tile.MaskPattern.{self.name}"


class MaskPattern(metaclass=_MaskPatternMeta):
    """`pl.tile.MaskPattern.<member>`: the patterns of PyPTO's mask-pattern gather/scatter
    forms (`mask_pattern=`). PyPTO's documentation does not define them, so any member name
    is accepted here and the op that receives one fails with a not-supported error."""


class TypeSpec:
    """Base of evaluated annotations."""


class DynDim:
    """`pl.dynamic("M")`: a symbolic tensor dimension. A function annotated with it compiles
    once; the extent is read from the arguments at every call (all dimensions of one name
    must agree) and is an INDEX scalar named "M" inside the program."""

    def __init__(self, name):
        if not isinstance(name, str) or not name.isidentifier():
            raise TypeError(f"pl.dynamic needs a dimension name that is an identifier, got {name!r}")
        self.name = name

    def __repr__(self):
        return f"pl.dynamic({self.name!r})"


DynVar = DynDim  # PyPTO's name of the class of pl.dynamic("M")
IntLike = int | ir.Expr  # what a dimension or offset may be: a Python int or a run-time INDEX scalar


class _Runtime:
    """`pl.RUNTIME`: as a parameter default (`n: pl.Scalar[pl.INDEX] = pl.RUNTIME`) or as an
    argument of `f.compile(...)`, the scalar stays a run-time parameter of the compiled
    program (given at each call) instead of a value known at compile time."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self):
        return "pl.RUNTIME"


RUNTIME = _Runtime()


def dynamic(name):
    """A symbolic dimension for tensor annotations: `pl.Tensor[[pl.dynamic("M"), 128], pl.FP32]`."""
    return DynDim(name)


def _as_list(value, what):
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{what} must be a list such as [64, 64], got {value!r}")
    for d in value:
        if isinstance(d, (bool, float)):
            raise TypeError(f"{what} must hold integers, got {d!r}")
    return list(value)


class TensorSpec(TypeSpec):
    def __init__(self, shape=None, dtype=None):
        self.shape, self.dtype = shape, dtype
        self.layout = None  # a pl.TensorLayout marker or view given in the annotation (validated)
        self.window = False  # pld.DistributedTensor: a window tensor, written by design (no written-input warning)

    def __repr__(self):
        return "pl.Tensor" if self.shape is None else f"pl.Tensor[{self.shape}, {self.dtype}]"


class TileSpec(TypeSpec):
    def __init__(self, shape, dtype, memory=None, valid_shape=None, pad=None, addr=None):
        self.shape, self.dtype, self.memory = shape, dtype, memory
        self.valid_shape, self.pad, self.addr = valid_shape, pad, addr


class ScalarSpec(TypeSpec):
    def __init__(self, dtype):
        self.dtype = dtype


class ArraySpec(TypeSpec):
    """`pl.Array[n, dtype]`: an orchestration array (made by pl.array.create(n, dtype))."""

    def __init__(self, size, dtype):
        self.size, self.dtype = size, dtype


class TupleSpec(TypeSpec):
    def __init__(self, elems):
        self.elems = elems


class DirectionSpec(TypeSpec):
    """`pl.Out[T]` / `pl.InOut[T]`: a parameter direction around a type."""

    def __init__(self, direction, inner):
        self.direction, self.inner = direction, inner


class ValidShape:
    """`pl.ValidShape([r, c])` inside `pl.Tile[...]`: the valid region of a tile."""

    _pl_marker = True

    def __init__(self, dims):
        self.dims = _as_list(dims, "pl.ValidShape")


class Addr:
    """`pl.Addr(n)` inside `pl.Tile[...]`: the byte offset chosen by memory planning."""

    _pl_marker = True

    def __init__(self, offset):
        if isinstance(offset, bool) or not isinstance(offset, int) or not -1 <= offset < 2**63:
            raise ValueError(f"pl.Addr takes a byte offset between 0 and 2**63 - 1 (or -1: unplanned), got {offset!r}")
        self.offset = offset


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _packed_strides(shape):
    """Row-major (ND) strides of `shape`, or None when a dimension is not a number."""
    if not all(_is_int(d) for d in shape):
        return None
    out, step = [], 1
    for d in reversed(shape):
        out.append(step)
        step *= d
    return list(reversed(out))


class TensorView:
    """`pl.TensorView(stride=, layout=, valid_shape=, pad=)` inside `pl.Tensor[...]`: how a
    tensor lies in memory. `stride[i]` is the element step of dim i; empty = packed (ND: row
    major; DN: column-major in the last two dims). A view other than packed ND is kept on the
    type (TensorType.stride / .dn) and checked against the tensor bound at launch; the whole
    shape must be valid and there is no pad (docs/language.md)."""

    _pl_marker = True

    def __init__(self, stride=None, layout=None, valid_shape=None, pad=None):
        if layout is None and (stride or valid_shape or pad is not None):
            raise TypeError("pl.TensorView needs layout= with any other field; fix: write "
                            "pl.TensorView(stride=[...], layout=pl.TensorLayout.ND)")
        if layout is not None and not isinstance(layout, TensorLayout):
            raise TypeError(f"pl.TensorView(layout=...) takes a pl.TensorLayout, got {layout!r}")
        self.stride = _as_list(stride, "pl.TensorView(stride=...)") if stride else []
        self.layout = layout or TensorLayout.ND
        self.valid_shape = _as_list(valid_shape, "pl.TensorView(valid_shape=...)") if valid_shape else []
        self.pad = pad

    def strides(self, shape):
        """The declared element strides for `shape`, or [] when the view is the packed ND
        layout (it then adds nothing to the type). Raises TypeError for what is not kept."""
        if self.layout not in (TensorLayout.ND, TensorLayout.DN):
            check_tensor_layout(self.layout)
            raise TypeError(f"pl.TensorView(layout={self.layout}) is not a tensor layout; fix: use "
                            "pl.TensorLayout.ND or pl.TensorLayout.DN")
        dn = self.layout == TensorLayout.DN
        if dn and len(shape) < 2:
            raise TypeError(f"pl.TensorView(layout=pl.TensorLayout.DN) needs a tensor of rank >= 2, got shape "
                            f"{list(shape)}; fix: use pl.TensorLayout.ND for a vector")
        if self.stride and len(self.stride) != len(shape):
            raise TypeError(f"pl.TensorView(stride={self.stride}) has {len(self.stride)} entries for the "
                            f"{len(shape)} dims of shape {list(shape)}; fix: give one element stride per dim")
        if self.stride and not all(_is_int(s) for s in self.stride):
            raise TypeError(f"pl.TensorView(stride={self.stride}) must hold integer constants; fix: write "
                            "the element strides as numbers")
        if self.valid_shape and list(self.valid_shape) != list(shape):
            raise TypeError(f"pl.TensorView(valid_shape={self.valid_shape}) differs from the shape {list(shape)}: "
                            "a tensor parameter is valid in full here; fix: narrow it inside the kernel with "
                            "pl.tensor.set_validshape(x, rows, cols) or pl.slice(..., valid_shape=...)")
        if self.pad not in (None, PadValue.null):
            raise TypeError(f"pl.TensorView(pad={self.pad}) pads a tensor; only tiles carry a pad value here; "
                            "fix: drop pad= (give the loaded tile its pad: pl.load(..., pad_value=...))")
        packed = _packed_strides(shape)
        if not self.stride:
            if not dn:
                return []
            if packed is None:
                raise TypeError(f"pl.TensorView(layout=pl.TensorLayout.DN) on shape {list(shape)} with a "
                                "dynamic dimension needs explicit strides; fix: write stride=[...]")
            out = list(packed)
            out[-2], out[-1] = 1, shape[-2]
            return out
        if not dn and self.stride == packed:
            return []
        return [int(s) for s in self.stride]

    def check(self, shape):
        """Raises TypeError unless this view can be kept on a tensor of `shape`."""
        self.strides(shape)


def check_tensor_layout(layout):
    """Raises TypeError for the layouts a tensor cannot have here (DN, NZ)."""
    if layout == TensorLayout.DN:
        raise TypeError("pl.Tensor[..., pl.DN] (a transposed tensor) is not accepted; fix: keep the tensor "
                        "row-major and use pl.matmul(a, b, b_trans=True) / a_trans=True, or pl.transpose(x, -2, -1)")
    if layout == TensorLayout.NZ:
        raise TypeError("pl.NZ is the cube's fractal layout of tiles, not of tensors; fix: declare the tensor "
                        "pl.ND (the default) and let the cube buffers hold their own layout")


class TileView:
    """`pl.TileView(valid_shape=, stride=, start_offset=, blayout=, slayout=, fractal=, pad=,
    compact=)` inside `pl.Tile[...]`. valid_shape and pad become the tile type's; the
    physical fields (blayout, slayout, fractal, compact) describe how the chip lays the tile
    in its buffer and are checked and dropped here (every tile is a packed row-major 2-D
    array of the model); stride must be packed and start_offset 0."""

    _pl_marker = True

    def __init__(self, valid_shape=None, stride=None, start_offset=None, blayout=None, slayout=None, fractal=None,
                 pad=None, compact=None):
        self.valid_shape = _as_list(valid_shape, "pl.TileView(valid_shape=...)") if valid_shape else None
        self.stride = _as_list(stride, "pl.TileView(stride=...)") if stride else []
        if start_offset not in (None, 0):
            raise TypeError(f"pl.TileView(start_offset={start_offset!r}): a tile starts at its own address here; "
                            "fix: drop start_offset= (take a sub-tile with pl.slice / pl.extract)")
        for name, value in (("blayout", blayout), ("slayout", slayout)):
            if value is not None and not isinstance(value, TileLayout):
                raise TypeError(f"pl.TileView({name}=...) takes a pl.TileLayout, got {value!r}")
        if compact is not None and not isinstance(compact, CompactMode):
            raise TypeError(f"pl.TileView(compact=...) takes a pl.CompactMode, got {compact!r}")
        if fractal is not None and (not _is_int(fractal) or fractal <= 0):
            raise TypeError(f"pl.TileView(fractal=...) is a size in bytes (512, 1024 for Acc), got {fractal!r}")
        if pad is not None and not isinstance(pad, PadValue):
            raise TypeError(f"pl.TileView(pad=...) takes a pl.PadValue, got {pad!r}")
        self.blayout, self.slayout, self.fractal, self.pad, self.compact = blayout, slayout, fractal, pad, compact

    def check(self, shape):
        if self.stride and len(shape) == 2 and _is_int(shape[1]) and self.stride not in ([shape[1], 1],):
            raise TypeError(f"pl.TileView(stride={self.stride}) is not the packed row-major stride "
                            f"[{shape[1]}, 1] of tile shape {list(shape)}; fix: drop stride=")
        if self.blayout == TileLayout.col_major and not any(d == 1 for d in shape):
            raise TypeError(f"pl.TileView(blayout=pl.TileLayout.col_major) on a {list(shape)} tile: tiles are "
                            "row-major here (a [N, 1] or [1, N] tile is both); fix: transpose with pl.transpose, or "
                            "drop blayout=")


class MemRef:
    """`pl.MemRef(...)` inside `pl.Tile[...]`: the tile's allocation. `pl.MemRef(addr, size, id)`
    places the tile at byte `addr` (what pl.Addr(addr) means); `pl.MemRef("name")`, `pl.MemRef()`
    (a pinned declaration) and `pl.MemRef(slots=N)[k]` (one of N equal slots) are left to memory
    planning here, which places every tile itself."""

    _pl_marker = True

    def __init__(self, addr=None, size=None, id=None, *, slots=None):  # noqa: A002 - PyPTO's keyword
        self.name = addr if isinstance(addr, str) else None
        self.addr = addr if _is_int(addr) else None
        if addr is not None and self.name is None and self.addr is None:
            raise TypeError(f"pl.MemRef takes a byte address (int) or a name (str), got {addr!r}")
        if self.addr is not None and not 0 <= self.addr < 2**63:
            raise ValueError(f"pl.MemRef address must be between 0 and 2**63 - 1, got {self.addr}")
        if size is not None and (not _is_int(size) or size <= 0):
            raise ValueError(f"pl.MemRef size is a positive byte count, got {size!r}")
        if slots is not None and (not _is_int(slots) or slots <= 0):
            raise ValueError(f"pl.MemRef(slots=N) takes a positive slot count, got {slots!r}")
        self.size, self.id, self.slots, self.slot = size, id, slots, None

    def __getitem__(self, k):
        if self.slots is None:
            raise TypeError("pl.MemRef(...)[k] picks a slot of pl.MemRef(slots=N)")
        self.slot = k
        return self


MemRefType = MemRef


class Ptr:
    """PyPTO's pointer type of the distributed runtime (no single-chip program takes one)."""

    def __init__(self, *args, **kwargs):
        raise TypeError("pl.Ptr is a pointer of PyPTO's distributed runtime; single-chip programs pass tensors; "
                        "fix: declare the parameter pl.Tensor[[...], dtype]")


PtrType = Ptr


class PrefetchAsyncContext:
    """The type of pl.prefetch.make_context() (an INDEX handle here)."""


class AsyncEvent:
    """The type of pl.prefetch.async_prefetch(...) (an INDEX handle here)."""


class AsyncSession:
    """The type of pl.prefetch.session(ctx) (an INDEX handle here)."""


def _items(key):
    return list(key) if isinstance(key, tuple) else [key]


class _TensorMeta(type):
    def __getitem__(cls, key):
        items = _items(key)
        if len(items) not in (2, 3) or not isinstance(items[1], DataType):
            raise TypeError("write pl.Tensor[[M, N], pl.FP32]: a shape list and a dtype (optionally a layout "
                            "pl.ND or a pl.TensorView(...))")
        if items[1] == TASK_ID:
            raise TypeError("a tensor holds numbers, not task ids: keep task ids in pl.array.create(n, pl.TASK_ID)")
        spec = TensorSpec(_as_list(items[0], "the shape of pl.Tensor"), items[1])
        if len(items) == 3:
            extra = items[2]
            if isinstance(extra, TensorLayout):
                check_tensor_layout(extra)
            elif isinstance(extra, TensorView):
                extra.check(spec.shape)
            else:
                raise TypeError(f"unexpected item {extra!r} in pl.Tensor[...]; allowed third item: a layout "
                                "(pl.ND) or a pl.TensorView(...)")
            spec.layout = extra
        return spec


class Tensor(metaclass=_TensorMeta):
    """A global-memory array; bare `pl.Tensor` takes shape and dtype from the call."""


class _TileMeta(type):
    def __getitem__(cls, key):
        items = _items(key)
        if len(items) < 2 or not isinstance(items[1], DataType):
            raise TypeError("write pl.Tile[[M, N], pl.FP32] (optionally followed by pl.Mem.Vec, "
                            "pl.ValidShape([r, c]), pl.PadValue.zero, pl.Addr(n))")
        spec = TileSpec(_as_list(items[0], "the shape of pl.Tile"), items[1])
        for extra in items[2:]:
            if isinstance(extra, MemorySpace):
                spec.memory = extra
            elif isinstance(extra, ValidShape):
                spec.valid_shape = extra.dims
            elif isinstance(extra, PadValue):
                spec.pad = extra
            elif isinstance(extra, Addr):
                spec.addr = extra.offset
            elif isinstance(extra, TileView):
                extra.check(spec.shape)
                if extra.valid_shape is not None and list(extra.valid_shape) != list(spec.shape):
                    spec.valid_shape = extra.valid_shape  # (a full-shape valid_shape is cleared, as in PyPTO)
                if extra.pad is not None:
                    spec.pad = extra.pad
            elif isinstance(extra, MemRef):
                if not any(isinstance(x, MemorySpace) for x in items[2:]):
                    raise TypeError("a pl.Tile annotation with a pl.MemRef must name its memory space; fix: write "
                                    "pl.Tile[[M, N], pl.FP32, pl.Mem.Vec, pl.MemRef(...)]")
                if extra.addr is not None:
                    spec.addr = extra.addr
            else:
                raise TypeError(f"unexpected item {extra!r} in pl.Tile[...]; allowed: a memory space, "
                                "pl.ValidShape([r, c]), a pl.PadValue, pl.Addr(n), pl.TileView(...), pl.MemRef(...)")
        return spec


class Tile(metaclass=_TileMeta):
    """An on-chip buffer (Vec unless a memory space is given)."""


class _ScalarMeta(type):
    def __getitem__(cls, key):
        if not isinstance(key, DataType):
            raise TypeError("write pl.Scalar[pl.INT32]: one dtype")
        return ScalarSpec(key)


class Scalar(metaclass=_ScalarMeta):
    """A scalar value or argument."""


class _ArrayMeta(type):
    def __getitem__(cls, key):
        items = _items(key)
        if len(items) != 2 or not isinstance(items[0], int) or isinstance(items[0], bool) or \
                not isinstance(items[1], DataType):
            raise TypeError("write pl.Array[n, pl.TASK_ID]: a size and a dtype")
        return ArraySpec(items[0], items[1])


class Array(metaclass=_ArrayMeta):
    """The type of `pl.array.create(n, dtype)` (printed programs annotate arrays with it)."""


class _TupleMeta(type):
    def __getitem__(cls, key):
        return TupleSpec(_items(key))


class Tuple(metaclass=_TupleMeta):
    """A tuple of values (functions returning several values)."""


class _DirectionMeta(type):
    def __getitem__(cls, key):
        return DirectionSpec(cls._direction, key)


class Out(metaclass=_DirectionMeta):
    """An output parameter: the function writes it."""

    _direction = ir.ParamDirection.Out


class InOut(metaclass=_DirectionMeta):
    """A parameter the function reads and writes."""

    _direction = ir.ParamDirection.InOut


def annotation_spec(value):
    """Normalises an evaluated annotation (`pl.Tensor` bare class included) to a TypeSpec."""
    if value is Tensor:
        return TensorSpec()
    if getattr(value, "_pl_tensor_alias", False):  # bare pld.DistributedTensor: a window tensor
        spec = TensorSpec()
        spec.window = True
        return spec
    if isinstance(value, TypeSpec):
        return value
    if isinstance(value, DataType):  # bare `scale: pl.FP32` means pl.Scalar[pl.FP32]
        return ScalarSpec(value)
    if value is Tile or value is Scalar or value is Array:
        raise TypeError(f"{value.__name__} needs its shape/dtype: write pl.Tile[[M, N], pl.FP32] or pl.Scalar[pl.INT32]")
    return None

"""Type annotations of the DSL (`pl.Tensor`, `pl.Tile`, `pl.Scalar`, `pl.Out`, ...) and the
enums and dtypes of the `pl` namespace. Annotations evaluate to small spec objects that the
parser turns into IR types once shapes are known."""

from pypto._core import ir

DataType = ir.DataType
MemorySpace = ir.MemorySpace
Mem = ir.MemorySpace
PadValue = ir.PadValue
FunctionType = ir.FunctionType
Level = ir.Level

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


def _items(key):
    return list(key) if isinstance(key, tuple) else [key]


class _TensorMeta(type):
    def __getitem__(cls, key):
        items = _items(key)
        if len(items) != 2 or not isinstance(items[1], DataType):
            raise TypeError("write pl.Tensor[[M, N], pl.FP32]: a shape list and a dtype")
        if items[1] == TASK_ID:
            raise TypeError("a tensor holds numbers, not task ids: keep task ids in pl.array.create(n, pl.TASK_ID)")
        return TensorSpec(_as_list(items[0], "the shape of pl.Tensor"), items[1])


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
            else:
                raise TypeError(f"unexpected item {extra!r} in pl.Tile[...]; allowed: a memory space, "
                                "pl.ValidShape([r, c]), a pl.PadValue, pl.Addr(n)")
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
    if isinstance(value, TypeSpec):
        return value
    if value is Tile or value is Scalar or value is Array:
        raise TypeError(f"{value.__name__} needs its shape/dtype: write pl.Tile[[M, N], pl.FP32] or pl.Scalar[pl.INT32]")
    return None

"""`pypto.backend`: the chip family a program targets and its hardware description.

`BackendType.Ascend910B` / `Ascend950` name the chip families; here each is a simulated
platform ("a2a3sim" / "a5sim"). `set_backend_type` picks the platform of later compiles
that name none. `Backend910B.instance()` / `Backend950.instance()` describe the chip:
every number (cores, clusters, buffer bytes, alignment) is read from the one chip table
(src/isa/chip.cpp, through `pypto._core.chip_spec`), and `find_mem_path` from the chip's
legal moves (`pypto._core.move_path`) and its load/store instructions (the ISA table)."""

from __future__ import annotations

from enum import Enum, EnumMeta

from pypto import _core
from pypto._core.ir import MemorySpace

__all__ = [
    "Backend", "Backend910B", "Backend950", "BackendType", "Cluster", "Core", "CoreType", "Die", "Mem", "SoC",
    "get_backend_instance", "get_backend_type", "is_backend_configured", "reset_for_testing", "set_backend_type",
]


class _BackendTypeMeta(EnumMeta):
    # `BackendType.name` / `BackendType.value` on the class are the member properties (as on
    # PyPTO's bound enum), not an AttributeError.
    @property
    def name(cls):
        return Enum.__dict__["name"]

    @property
    def value(cls):
        return Enum.__dict__["value"]


class BackendType(Enum, metaclass=_BackendTypeMeta):
    """The chip family a program targets; `.value` is the simulated platform it runs on here."""

    Ascend910B = "a2a3sim"
    Ascend950 = "a5sim"

    @property
    def platform(self) -> str:
        return self.value


class CoreType(Enum):
    """The two core kinds of a cluster: AIC (cube) and AIV (vector)."""

    AIC = "AIC"
    AIV = "AIV"
    CUBE = "AIC"
    VECTOR = "AIV"


# ---- the configured backend: the default platform of compiles that name none -----------

_configured: BackendType | None = None


def _as_backend_type(backend_type, where: str) -> BackendType:
    if isinstance(backend_type, BackendType):
        return backend_type
    if isinstance(backend_type, str):
        if backend_type in BackendType.__members__:
            return BackendType[backend_type]
        for b in BackendType:
            if backend_type == b.value:
                return b
    raise ValueError(
        f"{where}(backend_type={backend_type!r}): unknown backend; use one of "
        + ", ".join(f"BackendType.{n}" for n in BackendType.__members__)
        + " (from pypto.backend import BackendType)"
    )


def set_backend_type(backend_type) -> None:
    """Configures the backend of this process: later compiles and runs that give neither
    platform= nor backend_type= target its chip (Ascend910B -> a2a3sim, Ascend950 -> a5sim).
    Configuring another backend once one is set raises; reset_for_testing() clears it."""
    global _configured
    b = _as_backend_type(backend_type, "pypto.backend.set_backend_type")
    if _configured is not None and _configured is not b:
        raise ValueError(
            f"pypto.backend.set_backend_type(BackendType.{b.name}): the backend is already configured as "
            f"BackendType.{_configured.name}; fix: configure it once per process, or call "
            "pypto.backend.reset_for_testing() first"
        )
    _configured = b


def get_backend_type() -> BackendType:
    """The configured backend; BackendType.Ascend910B (the default) when none is set."""
    return _configured if _configured is not None else BackendType.Ascend910B


def is_backend_configured() -> bool:
    """True once set_backend_type was called (and not reset since)."""
    return _configured is not None


def reset_for_testing() -> None:
    """Forgets the configured backend (tests that switch chips call it between them)."""
    global _configured
    _configured = None


def default_platform() -> str:
    """The platform of a compile that names neither platform nor backend_type."""
    return get_backend_type().value


# ---- the hardware description -------------------------------------------------------------


def _memory(mem) -> MemorySpace:
    if isinstance(mem, MemorySpace):
        return mem
    name = getattr(mem, "name", mem)
    if isinstance(name, str) and hasattr(MemorySpace, name):
        return getattr(MemorySpace, name)
    raise ValueError(
        f"memory {mem!r} is not a memory space; fix: pass one of "
        + ", ".join(f"pl.MemorySpace.{m.name}" for m in MemorySpace)
    )


def _core_type(core_type) -> CoreType:
    if isinstance(core_type, CoreType):
        return core_type
    name = getattr(core_type, "name", core_type)
    if isinstance(name, str) and name.upper() in CoreType.__members__:
        return CoreType[name.upper()]
    raise ValueError(
        f"core type {core_type!r} is not a core kind; fix: pass pypto.backend.CoreType.AIC or CoreType.AIV"
    )


class Mem:
    """One on-chip buffer of a core: its memory space, bytes and address alignment."""

    def __init__(self, mem_type, mem_size: int, alignment: int):
        self._mem_type, self._mem_size, self._alignment = _memory(mem_type), int(mem_size), int(alignment)

    mem_type = property(lambda self: self._mem_type)
    mem_size = property(lambda self: self._mem_size)
    alignment = property(lambda self: self._alignment)

    def __eq__(self, other):
        return isinstance(other, Mem) and (self._mem_type, self._mem_size, self._alignment) == (
            other._mem_type, other._mem_size, other._alignment)

    def __hash__(self):
        return hash((self._mem_type, self._mem_size, self._alignment))

    def __repr__(self):
        return f"Mem({self._mem_type.name}, {self._mem_size}, {self._alignment})"


class Core:
    """One core: its kind and the buffers it holds."""

    def __init__(self, core_type, mems):
        self._core_type, self._mems = _core_type(core_type), list(mems)

    core_type = property(lambda self: self._core_type)
    mems = property(lambda self: list(self._mems))

    def __eq__(self, other):
        return isinstance(other, Core) and self._core_type is other._core_type and self._mems == other._mems

    def __hash__(self):
        return hash((self._core_type, tuple(self._mems)))

    def __repr__(self):
        return f"Core({self._core_type.name}, {self._mems})"


class Cluster:
    """A cluster: each kind of core and how many of it (1 AIC + 2 AIV on both chips)."""

    def __init__(self, core_counts: dict):
        self._core_counts = dict(core_counts)

    def core_counts(self) -> dict:
        return dict(self._core_counts)

    def total_core_count(self) -> int:
        return sum(self._core_counts.values())

    def __repr__(self):
        return f"Cluster({self._core_counts})"


class Die:
    """A die: its clusters and how many of each."""

    def __init__(self, cluster_counts: list):
        self._cluster_counts = list(cluster_counts)  # [(Cluster, count)]

    def cluster_counts(self) -> list:
        return list(self._cluster_counts)

    def total_cluster_count(self) -> int:
        return sum(n for _, n in self._cluster_counts)

    def total_core_count(self) -> int:
        return sum(c.total_core_count() * n for c, n in self._cluster_counts)


class SoC:
    """The chip: its dies and how many of each."""

    def __init__(self, die_counts: list):
        self._die_counts = list(die_counts)  # [(Die, count)]

    def die_counts(self) -> list:
        return list(self._die_counts)

    def total_die_count(self) -> int:
        return sum(n for _, n in self._die_counts)

    def total_cluster_count(self) -> int:
        return sum(d.total_cluster_count() * n for d, n in self._die_counts)

    def total_core_count(self) -> int:
        return sum(d.total_core_count() * n for d, n in self._die_counts)


class Backend:
    """The hardware description of one chip family (numbers from the chip table)."""

    backend_type: BackendType = None
    _instances: dict = {}

    @classmethod
    def instance(cls) -> "Backend":
        if cls.backend_type is None:
            raise TypeError("pypto.backend.Backend is abstract; fix: use Backend910B.instance() or Backend950.instance()")
        inst = Backend._instances.get(cls)
        if inst is None:
            inst = Backend._instances[cls] = cls()
        return inst

    def __init__(self):
        self._spec = _core.chip_spec(self.backend_type.value)

    @property
    def platform(self) -> str:
        return self._spec["platform"]

    @property
    def spec(self) -> dict:
        """The chip table's row of this chip (pypto._core.chip_spec)."""
        return dict(self._spec)

    def get_type_name(self) -> str:
        return self.backend_type.name

    def get_mem_size(self, mem_type) -> int:
        """Bytes of the per-core buffer of `mem_type` (0 for DDR: off-chip, not a buffer)."""
        return int(self._spec["capacity"][_memory(mem_type).name])

    def get_core_count(self, core_type) -> int:
        """How many cores of `core_type` (AIC / AIV) the chip has."""
        kind = _core_type(core_type)
        return int(self._spec["aic_cores"] if kind is CoreType.AIC else self._spec["aiv_cores"])

    def find_mem_path(self, from_mem, to_mem) -> list:
        """The memories data passes through from `from_mem` to `to_mem`, both ends included:
        on chip over the legal tile moves, DDR <-> chip over the load/store instructions.
        [] when no path exists."""
        a, b = _memory(from_mem), _memory(to_mem)
        if a == b:
            return [a]
        ddr = MemorySpace.DDR
        if a != ddr and b != ddr:
            path = _core.move_path(a, b)
            return [] if path is None else [a, *path]
        if a == ddr:  # loaded into a buffer the load can write, then moved on
            starts = [getattr(MemorySpace, m) for m in _core.instruction_memories("TLOAD")]
            best = []
            for s in starts:
                rest = self.find_mem_path(s, b)
                if rest and (not best or len(rest) + 1 < len(best)):
                    best = [a, *rest]
            return best
        ends = [getattr(MemorySpace, m) for m in _core.instruction_memories("TSTORE")]
        best = []
        for e in ends:
            head = self.find_mem_path(a, e)
            if head and (not best or len(head) + 1 < len(best)):
                best = [*head, b]
        return best

    def get_handler(self) -> "Backend":
        """PyPTO's code-generation hooks of the backend; here the backend itself (our one
        code generator serves both chips, reading this description)."""
        return self

    def export_to_file(self, path) -> None:
        """Writes the chip's description (the chip table's row) as JSON to `path`."""
        import json

        with open(path, "w") as f:
            json.dump({"backend_type": self.backend_type.name, **self._spec}, f, indent=1)

    @staticmethod
    def import_from_file(path) -> "Backend":
        """The Backend described by a file export_to_file wrote. Its numbers must be the chip
        table's (the simulated chips are the table's): a file that differs is rejected."""
        import json

        with open(path) as f:
            data = json.load(f)
        name = data.get("backend_type")
        if name not in BackendType.__members__:
            raise ValueError(f"Backend.import_from_file({str(path)!r}): no known backend_type in the file; "
                             "fix: pass a file written by Backend.export_to_file")
        backend = get_backend_instance(BackendType[name])
        if {k: v for k, v in data.items() if k != "backend_type"} != backend._spec:
            raise ValueError(
                f"Backend.import_from_file({str(path)!r}): the file's numbers differ from the {backend.platform} "
                "chip table (src/isa/chip.cpp); fix: the simulated chips are fixed, export the backend again"
            )
        return backend

    def soc(self) -> SoC:
        """The chip as SoC -> Die -> Cluster -> Core -> Mem, from the chip table."""
        s = self._spec
        align = int(s["alignment_bytes"])
        cores = {}
        for kind, count_key in ((CoreType.AIC, "aic_cores"), (CoreType.AIV, "aiv_cores")):
            mems = [Mem(getattr(MemorySpace, m), s["capacity"][m], align) for m in s["core_memories"][kind.name]]
            cores[Core(kind, mems)] = int(s[count_key]) // int(s["clusters"])
        return SoC([(Die([(Cluster(cores), int(s["clusters"]))]), 1)])

    def __repr__(self):
        return f"<{type(self).__name__} {self.platform}>"


class Backend910B(Backend):
    backend_type = BackendType.Ascend910B


class Backend950(Backend):
    backend_type = BackendType.Ascend950


def get_backend_instance(backend_type=None) -> Backend:
    """The Backend of `backend_type` (default: the configured one)."""
    b = get_backend_type() if backend_type is None else _as_backend_type(backend_type, "pypto.backend.get_backend_instance")
    return (Backend910B if b is BackendType.Ascend910B else Backend950).instance()

"""Orchestration arrays: pl.array.create(n, dtype) with arr[i] reads and arr[i] = v writes,
and pl.TASK_ID arrays whose elements are task ids used in deps=[arr[j]] (run-time edges).
Results are checked against numpy; edges against the swimlane the runtime writes."""

import json
import os
import re
import sys

import numpy as np
import pytest
import torch

import pypto.debug as dbg
import pypto.ir as pir
import pypto.language as pl
from pypto import PyptoError
from pypto.runtime import RunConfig

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "runtime"))
from hand_built_programs import binary_kernel, call  # noqa: E402

N, R, C = 4, 32, 64


@pl.jit
def chain(x: pl.Tensor[[N * R, C], pl.FP32], out: pl.Out[pl.Tensor[[N * R, C], pl.FP32]]):
    """Block i waits for block i - 1 through a TASK_ID array (element 0 is never written
    before block 0 reads it: no edge)."""
    tids = pl.array.create(N, pl.TASK_ID)
    for i in pl.range(N):
        with pl.at(level=pl.Level.AIV, deps=[tids[pl.max(i - 1, 0)]]) as t:
            out = pl.store(pl.add(pl.load(x, [i * R, 0], [R, C]), 1.0), [i * R, 0], out)
        tids[i] = t
    return out


@pl.jit
def reversed_scales(x: pl.Tensor[[N * R, C], pl.FP32], out: pl.Out[pl.Tensor[[N * R, C], pl.FP32]]):
    """An FP32 array filled in one loop and read backwards in another; the element read is a
    scalar argument of the kernel."""
    scale = pl.array.create(N, pl.FP32)
    for i in pl.range(N):
        scale[i] = i * 0.5 + 1.0
    for i in pl.range(N):
        s = scale[N - 1 - i]
        with pl.at(level=pl.Level.AIV):
            out = pl.store(pl.mul(pl.load(x, [i * R, 0], [R, C]), s), [i * R, 0], out)
    return out


@pl.jit
def fan_in(x: pl.Tensor[[N * R, C], pl.FP32], out: pl.Out[pl.Tensor[[N * R, C], pl.FP32]],
           total: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    """N independent blocks, then one task that waits for the blocks named in the array."""
    tids = pl.array.create(N, pl.TASK_ID)
    for i in pl.range(N):
        with pl.at(level=pl.Level.AIV) as t:
            out = pl.store(pl.mul(pl.load(x, [i * R, 0], [R, C]), 2.0), [i * R, 0], out)
        tids[i] = t
    with pl.at(level=pl.Level.AIV, deps=[tids[0], tids[N - 1]]):
        total = pl.store(pl.add(pl.load(x, [0, 0], [R, C]), 3.0), [0, 0], total)
    return out, total


def data():
    return np.random.default_rng(0).standard_normal((N * R, C)).astype(np.float32)


def host_spans(path):
    events = json.loads(open(path).read())["traceEvents"]
    return {e["args"]["task"]: set(e["args"]["deps"]) for e in events if e["ph"] == "X" and e["pid"] == 0}


@pytest.mark.parametrize("engine", ["sim", "native"])
def test_task_id_array_chains_the_blocks(tmp_path, engine):
    x, out = data(), np.zeros((N * R, C), np.float32)
    path = str(tmp_path / "lane.json")
    chain(x, out, config=RunConfig(engine=engine, enable_chip_swimlane=1, trace_path=path, num_workers=2))
    np.testing.assert_array_equal(out, x + 1)
    # The blocks write disjoint rows: every edge is one the array asked for.
    assert host_spans(path) == {0: set(), 1: {0}, 2: {1}, 3: {2}}


def test_without_the_array_the_blocks_are_independent(tmp_path):
    @pl.jit
    def free(x: pl.Tensor[[N * R, C], pl.FP32], out: pl.Out[pl.Tensor[[N * R, C], pl.FP32]]):
        for i in pl.range(N):
            with pl.at(level=pl.Level.AIV):
                out = pl.store(pl.add(pl.load(x, [i * R, 0], [R, C]), 1.0), [i * R, 0], out)
        return out

    x, out = data(), np.zeros((N * R, C), np.float32)
    path = str(tmp_path / "lane.json")
    free(x, out, config=RunConfig(enable_chip_swimlane=1, trace_path=path))
    assert host_spans(path) == {i: set() for i in range(N)}


def test_fan_in_waits_for_the_named_tasks_only(tmp_path):
    x = data()
    out, total = np.zeros((N * R, C), np.float32), np.zeros((R, C), np.float32)
    path = str(tmp_path / "lane.json")
    fan_in(x, out, total, config=RunConfig(enable_chip_swimlane=1, trace_path=path))
    np.testing.assert_array_equal(out, 2 * x)
    np.testing.assert_array_equal(total, x[:R] + 3)
    assert host_spans(path)[N] == {0, N - 1}


@pytest.mark.parametrize("engine", ["sim", "native"])
def test_number_array_written_and_read_back(engine):
    x, out = data(), np.zeros((N * R, C), np.float32)
    reversed_scales(x, out, config=RunConfig(engine=engine))
    want = np.concatenate([x[i * R:(i + 1) * R] * ((N - 1 - i) * 0.5 + 1.0) for i in range(N)])
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_printed_program_parses_back_and_names_the_array():
    x, out = data(), np.zeros((N * R, C), np.float32)
    compiled = chain.compile(x, out)
    text = pir.print_program(compiled.program)
    assert "tids: pl.Array[4, pl.TASK_ID] = pl.array.create(4, dtype=pl.TASK_ID)" in text
    assert "deps=[pl.array.get(tids_1, pl.max(i - 1, 0))]" in text
    chain(x, out, config=RunConfig(verify="roundtrip"))  # every pass's output prints and parses back equal
    reversed_scales(x, out, config=RunConfig(verify="roundtrip"))


def test_torch_script_of_an_array_program_matches():
    x = data()
    compiled = reversed_scales.compile(x, np.zeros_like(x))
    ns = {}
    exec(compile(dbg.torch_codegen(compiled), "script", "exec"), ns)
    xt, ot = torch.from_numpy(x.copy()), torch.zeros(N * R, C)
    ns["ENTRY"](xt, ot)
    want = np.concatenate([x[i * R:(i + 1) * R] * ((N - 1 - i) * 0.5 + 1.0) for i in range(N)])
    np.testing.assert_allclose(ot.numpy(), want, rtol=1e-6)


# ---- mistakes -----------------------------------------------------------------------------

def test_index_out_of_range_at_run_time_names_the_line():
    @pl.jit
    def past_the_end(x: pl.Tensor[[R, C], pl.FP32], out: pl.Out[pl.Tensor[[R, C], pl.FP32]], n: pl.Scalar[pl.INDEX]):
        a = pl.array.create(N, pl.INDEX)
        a[n] = 1  # E:past_end
        with pl.at(level=pl.Level.AIV):
            out = pl.store(pl.load(x, [0, 0], [R, C]), [0, 0], out)
        return out

    x = data()[:R]
    with pytest.raises(PyptoError, match=r"test_arrays.py:\d+: index 4 is outside pl.array 'a' of 4 elements[\s\S]*"
                                         r"fix: keep the index in 0..3") as err:
        past_the_end(x, np.zeros_like(x), N)
    line = next(n for n, text in enumerate(open(__file__), 1) if text.rstrip().endswith("# E:past_end"))
    assert f"test_arrays.py:{line}:" in str(err.value), str(err.value)
    out = np.zeros_like(x)
    past_the_end(x, out, 2)
    np.testing.assert_array_equal(out, x)


def jit_from_file(tmp_path, name, body):
    """A @pl.jit function `name`(x, out) on [32, 64] fp32 whose body starts with `body` (line 6
    of its own file, so that messages name a real file and line); returns the function."""
    source = ("import pypto.language as pl\n\n\n@pl.jit\n"
              f"def {name}(x: pl.Tensor[[32, 64], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):\n    "
              + body + "\n    with pl.at(level=pl.Level.AIV):\n"
              "        out = pl.store(pl.load(x, [0, 0], [32, 64]), [0, 0], out)\n    return out\n")
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    ns = {"__name__": name, "__file__": str(path)}
    exec(compile(source, str(path), "exec"), ns)
    return ns[name]


@pytest.mark.parametrize("body,message", [
    ("a = pl.array.create(4, pl.INDEX)\n    a[4] = 1", r"index 4 is outside the pl.array of 4 elements"),
    ("a = pl.array.create(0, pl.INDEX)", r"a pl.array holds 1..1048576 elements, got 0"),
    ("a = pl.array.create(4, pl.FP16)", r"a pl.array of FP16 is not supported"),
    ("a = pl.array.create(4, pl.TASK_ID)\n    a[0] = 1", r"a pl.array of TASK_ID holds task ids, got a INDEX value"),
    ("a = pl.array.create(4, pl.INDEX)\n    with pl.at(level=pl.Level.AIV) as t:\n"
     "        out = pl.store(pl.load(x, [0, 0], [32, 64]), [0, 0], out)\n    a[0] = t",
     r"a task id stored into a pl.array of INDEX"),
    ("a = pl.array.create(4, pl.TASK_ID)\n    b = a[0] + 1", r"operator '\+' on a task id: task ids are handles, not numbers"),
    ("a = pl.array.create(4, pl.INDEX)\n    with pl.at(level=pl.Level.AIV):\n"
     "        out = pl.store(pl.adds(pl.load(x, [0, 0], [32, 64]), a[0]), [0, 0], out)",
     r"pl.array 'a' is used inside the pl.at scope"),
    ("a = pl.array.create(4, pl.INDEX)\n    with pl.at(level=pl.Level.AIV, deps=[a[0]]):\n"
     "        out = pl.store(pl.load(x, [0, 0], [32, 64]), [0, 0], out)",
     r"deps= must be a list of task ids"),
    ("t = pl.create_tensor([4], dtype=pl.TASK_ID)", r"tiles and tensors hold numbers, not task ids"),
])
def test_array_mistakes_are_reported_at_their_line(tmp_path, body, message):
    bad = jit_from_file(tmp_path, "bad_array", body)
    x = np.zeros((32, 64), np.float32)
    with pytest.raises((PyptoError, pl.ParseError), match=message) as err:
        bad(x, x.copy())
    assert "bad_array.py:" in str(err.value) and "fix:" in str(err.value), str(err.value)


def test_task_id_tensor_annotation_is_rejected():
    with pytest.raises(TypeError, match="a tensor holds numbers, not task ids"):
        pl.Tensor[[4], pl.TASK_ID]


@pytest.mark.parametrize("construct,message,fix", [
    # pl.cluster groups kernel calls (tests/compat/test_scopes_launches.py); a tile op in it is a mistake
    ("with pl.cluster():", r"a pl.cluster block holds kernel calls only", r"self.<AIC function>"),
    # pl.split is an optimisation hint of pl.at (tests/compat/test_scopes_launches.py), not a scope
    ("with pl.split(2):", r"with 'pl.split\(2\)' is not supported", r"pl.at\(level="),
])
def test_unsupported_tier_two_constructs_name_the_alternative(tmp_path, construct, message, fix):
    hinted = jit_from_file(tmp_path, "hinted", construct + "\n        out = pl.store(pl.load(x, [0, 0], [32, 64]), [0, 0], out)")
    x = np.zeros((32, 64), np.float32)
    with pytest.raises(pl.ParseError, match=message) as err:
        hinted(x, x.copy())
    assert "hinted.py:6:" in str(err.value) and re.search(r"fix: .*" + fix, str(err.value)), str(err.value)


# ---- hand-built host programs: the new host instructions are validated ----------------------

def hand_built(code, arrays=(), num_regs=2):
    from pypto import _core as c

    p = c.HostProgram()
    p.name = "hand"
    p.params = [c.ParamDesc(n, True, "FP32", [16, 64], d) for n, d in (("a", "In"), ("b", "In"), ("out", "Out"))]
    p.tensors = list(p.params)
    p.kernels = [binary_kernel("add", "TADD", 16, 64)]
    p.num_regs, p.reg_is_float = num_regs, [False] * num_regs
    descs = []
    for name, dtype, size in arrays:
        d = c.ArrayDesc()
        d.name, d.dtype, d.size = name, getattr(c.ir.DataType, dtype), size
        descs.append(d)
    p.arrays = descs
    p.code = code
    return p


def hand_args():
    a = np.arange(16 * 64, dtype=np.float32).reshape(16, 64)
    b, out = np.ones_like(a), np.zeros_like(a)
    return a, b, out, [(x.ctypes.data, "FP32", [16, 64], [64, 1], n) for x, n in ((a, "a"), (b, "b"), (out, "out"))]


def host_instr(kind, **fields):
    from pypto import _core as c

    i = c.Instr()
    i.kind = getattr(c.InstrKind, kind)
    for k, v in fields.items():
        setattr(i, k, v)
    return i


def test_hand_built_array_instruction_naming_no_array_is_rejected():
    from pypto import _core as c

    get = host_instr("ArrayGet", dst_reg=0, a=c.Scalar.imm(0))
    get.attrs = {"array": 3}
    a, b, out, args = hand_args()
    with pytest.raises(PyptoError, match=r"malformed instruction stream in host program 'hand': array instruction names "
                                         r"no array of the program \(1 arrays\)"):
        c.run_host_program(hand_built([get], arrays=[("ids", "TASK_ID", 4)]), args, "a2a3sim", "sim", 1)


def test_hand_built_deps_naming_a_task_id_that_was_never_launched():
    """Register r0 holds 7, which names no launch of the run: an error at the call, not a hang."""
    from pypto import _core as c

    mov = host_instr("ScalarMov", dst_reg=0, a=c.Scalar.imm(7))
    launch = call(0, 0, 1, 2)
    launch.attrs = {"dep_regs": [0]}
    a, b, out, args = hand_args()
    with pytest.raises(PyptoError, match=r"deps names task id 7, which no launch of this run has \(0 launches so far\)"):
        c.run_host_program(hand_built([mov, launch]), args, "a2a3sim", "sim", 1)
    bad_reg = call(0, 0, 1, 2)
    bad_reg.attrs = {"dep_regs": [5]}
    with pytest.raises(PyptoError, match=r"dep_regs names register r5, which does not exist"):
        c.run_host_program(hand_built([bad_reg]), args, "a2a3sim", "sim", 1)


def test_hand_built_launch_number_round_trip_through_an_array():
    """launch_reg puts the launch number (from 1) in r0; ArraySet/ArrayGet move it through an
    array; a second launch depending on it runs after the first (the run completes)."""
    from pypto import _core as c

    first = call(0, 0, 1, 2)
    first.attrs = {"launch_reg": [0]}
    put = host_instr("ArraySet", a=c.Scalar.imm(2), b=c.Scalar.r(0))
    put.attrs = {"array": 0}
    get = host_instr("ArrayGet", dst_reg=1, a=c.Scalar.imm(2))
    get.attrs = {"array": 0}
    second = call(0, 2, 1, 2)  # out = out + b, after the first launch
    second.attrs = {"dep_regs": [1]}
    a, b, out, args = hand_args()
    c.run_host_program(hand_built([first, put, get, second], arrays=[("ids", "TASK_ID", 4)]), args, "a2a3sim", "sim", 2)
    np.testing.assert_array_equal(out, a + 2)

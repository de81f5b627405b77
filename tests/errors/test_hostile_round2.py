"""Issue 18, round 2 of the hostile user: bad programs, bad inputs and faults in PyPTO's idioms.
Each case ends in an exception whose message names the user's line (marked `# E:<name>`),
the object, the limit and a fix, and writes nothing; the inputs pypto accepts compute the
right result (checked against numpy / torch)."""

import pathlib
import re

import numpy as np
import pytest

import pypto as pto
import pypto.debug as dbg
import pypto.language as pl
from pypto import PyptoError
from pypto.runtime import RunConfig

torch = pytest.importorskip("torch")

HERE = pathlib.Path(__file__)
SOURCE = HERE.read_text().splitlines()


def line_of(marker: str) -> int:
    hits = [i + 1 for i, text in enumerate(SOURCE) if text.rstrip().endswith(f"# E:{marker}")]
    assert len(hits) == 1, marker
    return hits[0]


# --------------------------------------------------------------------------- programs


@pl.jit
def add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [32, 64])  # E:add_load
        tb = pl.load(b, [0, 0], [32, 64])
        c = pl.store(pl.add(ta, tb), [0, 0], c)  # E:add_store
    return c


@pl.jit
def load_at_row(a: pl.Tensor, c: pl.Out[pl.Tensor], r: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [r, 0], [32, 64])  # E:load_at_row
        c = pl.store(t, [0, 0], c)
    return c


@pl.jit
def step_zero(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(0, 64, 0):  # E:step_zero
            c = pl.store(pl.load(a, [i, 0], [32, 64]), [i, 0], c)
    return c


@pl.jit
def step_arg(a: pl.Tensor, c: pl.Out[pl.Tensor], s: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(0, 64, s):  # E:step_arg
            c = pl.store(pl.load(a, [i, 0], [32, 64]), [i, 0], c)
    return c


@pl.jit
def step_negative(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(0, 64, -32):  # E:step_negative
            c = pl.store(pl.load(a, [i, 0], [32, 64]), [i, 0], c)
    return c


@pl.jit
def step_float(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(0, 64, 32.0):  # E:step_float
            c = pl.store(pl.load(a, [i, 0], [32, 64]), [i, 0], c)
    return c


@pl.jit
def huge_scratch(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    big = pl.create_tensor([1048576, 1048576], dtype=pl.FP32)  # E:huge_scratch
    with pl.at(level=pl.Level.CORE_GROUP):
        big = pl.store(pl.load(a, [0, 0], [32, 64]), [0, 0], big)
        c = pl.store(pl.load(big, [0, 0], [32, 64]), [0, 0], c)
    return c


@pl.jit
def copy_kernel(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.store(pl.load(a, [0, 0], [32, 64]), [0, 0], c)
    return c


@pl.jit
def calls_an_entry(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = copy_kernel(a, c)  # E:calls_an_entry
    return c


@pl.jit
def store_past_the_end(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.store(pl.load(a, [0, 0], [32, 64]), [16, 0], c)  # E:store_past_the_end
    return c


@pl.jit
def cache_probe(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.store(pl.mul(pl.load(a, [0, 0], [24, 40]), 3.0625), [0, 0], c)
    return c


@pl.jit
def cache_probe_5(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.store(pl.mul(pl.load(a, [0, 0], [24, 40]), 5.0625), [0, 0], c)
    return c


@pto.kernel
def fill(a):
    i = pto.get_global_id()
    pto.store(a + i, 1.0)


@pto.kernel
def guarded_fill(a, n):
    i = pto.get_global_id()
    if i < n:
        pto.store(a + i, 1.0)


def f32(*shape):
    return np.ones(shape, np.float32)


OUT = {}


def out():
    """A fresh zero output, remembered so that each case can check nothing was written."""
    OUT["c"] = np.zeros((32, 64), np.float32)
    return OUT["c"]


def t_out():
    OUT["c"] = torch.zeros(32, 64)
    return OUT["c"]


READONLY = np.zeros((32, 64), np.float32)
READONLY.flags.writeable = False

# (name, call, exception, message, fix); the `# E:` marker is on the line the message names.
CASES = [
    ("too_few_rows", lambda: add(f32(16, 64), f32(32, 64), out()), PyptoError,  # (add_load)
     r"pl.tile.load: the tile would read elements 0..31 of dimension 0, but the tensor has only 16", r"shrink the tile"),
    ("rank_1_input", lambda: add(f32(2048), f32(32, 64), out()), PyptoError,
     r"'offsets' has 2 entries but the tensor has rank 1", r"one offset per tensor dimension"),
    ("float64_input", lambda: add(np.ones((32, 64)), f32(32, 64), out()), TypeError,  # E:float64_input
     r"argument 'a': numpy dtype float64 is not supported", r"astype\(np.float32\)"),
    ("int32_output", lambda: add(f32(32, 64), f32(32, 64), np.zeros((32, 64), np.int32)), PyptoError,
     r"the tile is FP32 but the tensor is INT32", r"pl.cast\(tile, pl.INT32\)"),
    ("run_time_offset_past_the_end", lambda: load_at_row(f32(64, 64), out(), 40), PyptoError,
     r"the tile 't' \(valid 32x64\) loaded from 'a'\[64, 64\] FP32 at offsets \[40, 0\] goes past", r"offset \+ valid size"),
    ("negative_run_time_offset", lambda: load_at_row(f32(64, 64), out(), -8), PyptoError,
     r"at offsets \[-8, 0\] goes past the tensor's shape", r"inside the shape"),
    ("range_step_zero", lambda: step_zero(f32(64, 64), out()), PyptoError, r"pl.range with step 0 never ends", r"non-zero step"),
    ("range_step_zero_at_run_time", lambda: step_arg(f32(64, 64), out(), 0), PyptoError, r"loop step is 0", r"non-zero"),
    ("range_negative_step_at_run_time", lambda: step_arg(f32(64, 64), out(), -32), PyptoError,
     r"loop step is -32; pl.range steps must be positive", r"step > 0"),
    ("range_negative_step", lambda: step_negative(f32(64, 64), out()), PyptoError,
     r"loop step must be positive, got -32", r"step > 0"),
    ("range_float_step", lambda: step_float(f32(64, 64), out()), PyptoError, r"the step 32.0 is a float", r"pass an int"),
    ("read_only_output", lambda: add(f32(32, 64), f32(32, 64), READONLY), ValueError,  # E:read_only_output
     r"output 'c' is a read-only numpy array", r"c.copy\(\)"),
    ("unknown_engine", lambda: RunConfig(engine="gpu"), ValueError,  # E:unknown_engine
     r"RunConfig\(engine='gpu'\): unknown engine", r"use one of 'native', 'sim'"),
    ("unknown_platform", lambda: RunConfig(platform="h100"), ValueError,  # E:unknown_platform
     r"RunConfig\(platform='h100'\): unknown platform", r"use one of 'a2a3sim', 'a5sim'"),
    ("negative_workers", lambda: RunConfig(num_workers=-2), ValueError,  # E:negative_workers
     r"RunConfig\(num_workers=-2\): must be an int >= 0", r"num_workers=0"),
    ("string_ring_size", lambda: RunConfig(ring_size="big"), ValueError,  # E:string_ring_size
     r"RunConfig\(ring_size='big'\): must be an int >= 0", r"ring_size=0"),
    ("unknown_verify", lambda: RunConfig(verify="full"), ValueError,  # E:unknown_verify
     r"RunConfig\(verify='full'\): unknown verification level", r"'off', 'basic', 'roundtrip'"),
    ("config_is_a_dict", lambda: add(f32(32, 64), f32(32, 64), out(), config={"engine": "sim"}), TypeError,  # E:config_is_a_dict
     r"add\(config=...\) must be a pypto.runtime.RunConfig, got dict", r"config=RunConfig\(...\)"),
    ("torch_bf16_with_fp32", lambda: add(torch.ones(32, 64, dtype=torch.bfloat16), torch.ones(32, 64), t_out()), PyptoError,
     r"argument 'rhs' has dtype FP32 but 'lhs' has BF16", r"pl.cast\(rhs, pl.BF16\)"),
    ("fp16_with_fp32", lambda: add(f32(32, 64), np.ones((32, 64), np.float16), out()), PyptoError,
     r"argument 'rhs' has dtype FP16 but 'lhs' has FP32", r"pl.cast\(rhs, pl.FP32\)"),
    ("torch_meta_device", lambda: add(torch.ones(32, 64, device="meta"), torch.ones(32, 64), t_out()), TypeError,  # E:torch_meta_device
     r"argument 'a' is on device 'meta'", r"a.cpu\(\)"),
    ("output_requires_grad", lambda: add(torch.ones(32, 64), torch.ones(32, 64), torch.zeros(32, 64, requires_grad=True)),  # E:output_requires_grad
     ValueError, r"output 'c' requires grad", r"c.detach\(\)"),
    ("huge_scratch_tensor", lambda: huge_scratch(f32(32, 64), out()), PyptoError,
     r"pl.create_tensor of tensor 'big' with shape \[1048576, 1048576\] FP32 needs more bytes than fit", r"smaller tensors"),
    ("jit_entry_called_from_an_entry", lambda: calls_an_entry(f32(32, 64), out()), PyptoError,
     r"'copy_kernel' is a @pl.jit entry and cannot be called from another plain @pl.jit entry", r"@pl.jit.host"),
    ("store_past_the_end_of_the_output", lambda: store_past_the_end(f32(32, 64), out()), PyptoError,
     r"the tile would write elements 16..47 of dimension 0, but the tensor has only 32", r"shrink the tile"),
    ("missing_argument", lambda: add(f32(32, 64), f32(32, 64)), TypeError,  # E:missing_argument
     r"add\(\) takes 3 arguments \(a, b, c\), got 2", r"one array or number per parameter"),
    ("extra_argument", lambda: add(f32(32, 64), f32(32, 64), out(), out()), TypeError,  # E:extra_argument
     r"add\(\) takes 3 arguments \(a, b, c\), got 4", r"one array or number per parameter"),
    ("list_argument", lambda: add([[1.0] * 64] * 32, f32(32, 64), out()), TypeError,  # E:list_argument
     r"argument 'a' is a list", r"np.asarray\(a, dtype=np.float32\)"),
    ("none_argument", lambda: add(None, f32(32, 64), out()), TypeError,  # E:none_argument
     r"argument 'a' is a NoneType", r"numpy arrays, torch tensors"),
    ("float_for_an_index_scalar", lambda: load_at_row(f32(64, 64), out(), 1.5), TypeError,  # E:float_for_an_index_scalar
     r"argument 'r' = 1.5 is a float, but the parameter is a pl.Scalar\[pl.INDEX\]", r"pass an int"),
    ("string_for_a_scalar", lambda: load_at_row(f32(64, 64), out(), "0"), TypeError,  # E:string_for_a_scalar
     r"argument 'r' is a str", r"pass an int or a float"),
    ("empty_input", lambda: add(np.ones((0, 64), np.float32), f32(32, 64), out()), PyptoError,
     r"the tensor has only 0", r"shrink the tile"),
    ("negative_alloc", lambda: pto.alloc_tensor(-4), PyptoError,  # E:negative_alloc
     r"pto.alloc_tensor\(-4\): the size must be a positive multiple of 4 bytes", r"n \* 4"),
    ("alloc_beyond_memory", lambda: pto.alloc_tensor(1 << 62), PyptoError,  # E:alloc_beyond_memory
     r"pto.alloc_tensor\(4611686018427387904\): out of host memory", r"smaller tensor"),
    ("fractional_alloc", lambda: pto.alloc_tensor(4.5), PyptoError,  # E:fractional_alloc
     r"pto.alloc_tensor\(4.5\): the size must be an int number of bytes, got float", r"x.nbytes"),
    ("zero_lane_block", lambda: pto.launch(fill, grid=(1, 1, 1), block=(0, 1, 1), args=(pto.alloc_tensor(4),)),  # E:zero_lane_block
     PyptoError, r"pto.launch: block=\(0, 1, 1\) must have positive sizes", r"block=\(4, 1, 1\)"),
    ("numpy_array_as_kernel_argument", lambda: pto.launch(fill, args=(np.zeros(4, np.float32),)), PyptoError,  # E:numpy_array_as_kernel_argument
     r"a kernel argument must be a pto tensor, an int or a float, got <class 'numpy.ndarray'>", r"pto.alloc_tensor"),
    ("fractional_grid", lambda: pto.launch(fill, grid=(2.5, 1, 1), args=(pto.alloc_tensor(16),)), PyptoError,  # E:fractional_grid
     r"pto.launch: grid must be an int or a tuple of ints, got \(2.5, 1, 1\)", r"math.ceil"),
    ("launch_of_2_48_lanes", lambda: pto.launch(guarded_fill, grid=(1 << 40, 1, 1), block=(256, 1, 1),  # E:launch_of_2_48_lanes
                                                args=(pto.alloc_tensor(16), 4)),
     PyptoError, r"launch of 'guarded_fill' with grid 1099511627776 x block 256 has more than 4294967296 lanes", r"ceil\(n / block\)"),
    ("grid_beyond_64_bits", lambda: pto.launch(fill, grid=(1 << 40, 1 << 40, 1), args=(pto.alloc_tensor(16),)), PyptoError,  # E:grid_beyond_64_bits
     r"is 1208925819614629174706176 in all, more than a 64-bit size", r"ceil\(n / block\)"),
    ("debugger_of_2_48_lanes", lambda: dbg.debug_kernel(guarded_fill, args=(pto.alloc_tensor(16), 4), grid=(1 << 40, 1, 1),  # E:debugger_of_2_48_lanes
                                                        block=(256, 1, 1)),
     PyptoError, r"has more than 4294967296 lanes", r"ceil\(n / block\)"),
    ("d2h_into_a_read_only_array", lambda: pto.memcpy_d2h(READONLY.reshape(-1)[:4], pto.alloc_tensor(16)), PyptoError,  # E:d2h_into_a_read_only_array
     r"pto.memcpy_d2h needs a writable C-contiguous numpy array", r"np.zeros\(n, dtype=np.float32\)"),
]

# Which marker each kernel-line case's message names (the others: a marker of their own name).
KERNEL_LINE = {
    "too_few_rows": "add_load", "rank_1_input": "add_load", "int32_output": "add_store", "torch_bf16_with_fp32": "add_store",
    "fp16_with_fp32": "add_store", "run_time_offset_past_the_end": "load_at_row", "negative_run_time_offset": "load_at_row",
    "range_step_zero": "step_zero", "range_step_zero_at_run_time": "step_arg", "range_negative_step_at_run_time": "step_arg",
    "range_negative_step": "step_negative", "range_float_step": "step_float", "huge_scratch_tensor": "huge_scratch",
    "jit_entry_called_from_an_entry": "calls_an_entry", "store_past_the_end_of_the_output": "store_past_the_end",
    "empty_input": "add_load",
}


def test_there_are_at_least_thirty_cases():
    assert len(CASES) >= 30 and len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("name, call, exc, message, fix", CASES, ids=[c[0] for c in CASES])
def test_each_mistake_names_the_line_the_object_the_limit_and_the_fix(name, call, exc, message, fix):
    OUT.clear()
    with pytest.raises(exc) as e:
        call()
    text = str(e.value)
    marker = KERNEL_LINE.get(name, name)
    assert f"{HERE.name}:{line_of(marker)}:" in text, text
    assert re.search(message, text), text
    assert re.search(r"fix:.*" + fix, text, re.S), text
    if "c" in OUT:  # nothing was written
        c = OUT["c"]
        assert not (c.numpy() if hasattr(c, "numpy") else c).any(), name


# ------------------------------------------- the inputs pypto accepts compute the right result


def test_non_contiguous_and_broadcast_inputs_and_outputs_compute_the_right_result():
    x = np.arange(32 * 128, dtype=np.float32).reshape(32, 128)
    np.testing.assert_array_equal(add(x[:, ::2], f32(32, 64), out()), x[:, ::2] + 1)
    big = np.zeros((32, 128), np.float32)
    add(x[:, ::2], f32(32, 64), big[:, ::2])  # a strided output is written in place
    np.testing.assert_array_equal(big[:, ::2], x[:, ::2] + 1)
    assert not big[:, 1::2].any()
    t = torch.arange(64 * 32, dtype=torch.float32).reshape(64, 32)
    assert torch.equal(add(t.T, torch.ones(32, 64), torch.zeros(32, 64)), t.T + 1)
    # a zero-stride view of 2**40 elements: read in place, never copied into memory
    huge = np.broadcast_to(np.float32(2), (1 << 20, 1 << 20))
    np.testing.assert_array_equal(add(huge, f32(32, 64), out()), np.full((32, 64), 3, np.float32))


def test_run_time_steps_that_are_positive_still_loop():
    a = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    c = np.zeros_like(a)
    step_arg(a, c, 32)
    np.testing.assert_array_equal(c, a)


# ------------------------------------------------------------------ the kernel cache directory


@pytest.mark.parametrize("where, probe, factor", [("file", cache_probe, 3.0625), ("under_a_file", cache_probe_5, 5.0625)])
def test_a_cache_directory_that_is_a_file_is_an_error_naming_it(where, probe, factor, tmp_path, monkeypatch):
    # each case its own kernel: a library is loaded once per process (keyed by its source), so
    # these kernels' shape and factor are used by no other test: a kernel another test loaded
    # first would not be compiled here, and the cache directory would never be looked at
    afile = tmp_path / "afile"
    afile.write_text("not a directory")
    target = afile if where == "file" else afile / "sub"
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(target))
    monkeypatch.delenv("PYPTO_CACHE", raising=False)
    c = np.zeros((24, 40), np.float32)
    a = f32(24, 40)
    with pytest.raises(PyptoError) as e:
        probe(a, c, config=RunConfig(engine="native", num_workers=1))  # E:cache_dir
    text = str(e.value)
    assert f"{HERE.name}:{line_of('cache_dir')}:" in text, text
    assert f"the kernel cache directory '{target}'" in text and "(from $PYPTO_CACHE_DIR)" in text, text
    assert ("is not a directory" if where == "file" else "cannot be created (Not a directory)") in text, text
    assert "fix: point PYPTO_CACHE_DIR at a writable directory, or set PYPTO_CACHE=0" in text
    assert not c.any() and afile.read_text() == "not a directory"
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    probe(a, c, config=RunConfig(engine="native", num_workers=1))
    np.testing.assert_array_equal(c, a * factor)

"""Reliability (issue 18): every run stoppable, nothing silently wrong. Each case asserts the
message (at the user's line where there is one) and that nothing was written or left running."""

import os
import pathlib
import re
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import pypto

import pypto.language as pl
from pypto import PyptoError
from pypto.runtime import RunConfig

HERE = pathlib.Path(__file__)
SOURCE = HERE.read_text().splitlines()
ENGINES = ["native", "sim"]


def line_of(marker: str) -> int:
    """1-based line of the `# E:<marker>` comment in this file."""
    hits = [i + 1 for i, text in enumerate(SOURCE) if text.rstrip().endswith(f"# E:{marker}")]
    assert len(hits) == 1, marker
    return hits[0]


def at_line(marker: str) -> str:
    return f"{HERE.name}:{line_of(marker)}:"


# ------------------------------------------------------------ 1. Ctrl-C stops a long kernel

LONG_KERNEL = textwrap.dedent(
    """
    import os, sys, threading, time
    import numpy as np
    import pypto.language as pl
    from pypto.runtime import RunConfig

    @pl.jit
    def spin(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [16, 64])
            for i in pl.range(n):
                t = pl.add(t, t)
            c = pl.store(t, [0, 0], c)
        return c

    def cpu():
        return sum(os.times()[:2])

    config = RunConfig(engine=sys.argv[1])
    a = np.ones((16, 64), np.float32)
    c = np.zeros_like(a)
    spin(a, c, 1, config=config)  # compiled and warm
    print("READY", flush=True)
    start = time.monotonic()
    try:
        spin(a, c, 10**10, config=config)  # minutes of work
        print("FINISHED", flush=True)
    except KeyboardInterrupt:
        print("INTERRUPTED", flush=True)
    before = cpu()
    time.sleep(0.5)
    print("IDLE_CPU", cpu() - before, flush=True)  # nothing keeps computing
    c[:] = 0
    spin(a, c, 3, config=config)
    print("NEXT", float(c[0, 0]), flush=True)
    """
)


@pytest.mark.parametrize("engine", ENGINES)
def test_ctrl_c_stops_a_long_kernel_within_half_a_second(engine, tmp_path):
    script = tmp_path / "long_kernel.py"
    script.write_text(LONG_KERNEL)
    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(pypto.__file__).resolve().parents[1]))
    proc = subprocess.Popen([sys.executable, str(script), engine], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == "READY", proc.stderr.read()
        time.sleep(0.8)  # well inside the kernel's loop
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        line = proc.stdout.readline().strip()
        stopped = time.monotonic() - sent
        rest, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert line == "INTERRUPTED", (line, err)
    assert stopped < 0.5, stopped
    lines = dict(l.split(" ", 1) for l in rest.strip().splitlines())
    assert float(lines["IDLE_CPU"]) < 0.2, rest  # no kernel thread left running
    assert float(lines["NEXT"]) == 8.0, rest  # the next call works: 1 doubled 3 times
    assert proc.returncode == 0, err


# --------------------------------------------- 2. host copies check dtype and size

pto = pytest.importorskip("pypto")


def device_holding(values):
    d = pto.alloc_tensor(values.nbytes)
    pto.memcpy_h2d(d, values)
    return d


def device_values(d, n):
    out = np.full(n, -1.0, np.float32)
    pto.memcpy_d2h(out, d)
    return out


def h2d_float64():
    pto.memcpy_h2d(DEV, np.arange(16.0))  # E:h2d_float64


def h2d_int32():
    pto.memcpy_h2d(DEV, np.arange(16, dtype=np.int32))  # E:h2d_int32


def h2d_too_big():
    pto.memcpy_h2d(DEV, np.ones(17, np.float32))  # E:h2d_too_big


def d2h_float64():
    pto.memcpy_d2h(np.zeros(16), DEV)  # E:d2h_float64


def d2h_too_big():
    pto.memcpy_d2h(np.zeros(17, np.float32), DEV)  # E:d2h_too_big


def alloc_odd():
    pto.alloc_tensor(6)  # E:alloc_odd


def launch_not_a_kernel():
    pto.launch(print, args=())  # E:launch_not_a_kernel


COPY_CASES = [
    ("h2d_float64", r"pto\.memcpy_h2d: the host array is float64 but device tensor '\w+' \(64 bytes, 16 fp32 elements\) holds float32", r"astype\(np\.float32\)"),
    ("h2d_int32", r"the host array is int32 but device tensor", r"float32 array"),
    ("h2d_too_big", r"has 17 float32 elements \(68 bytes\) but device tensor '\w+' \(64 bytes, 16 fp32 elements\) is smaller", r"alloc_tensor\(x\.nbytes\)"),
    ("d2h_float64", r"pto\.memcpy_d2h: the host array is float64", r"dtype=np\.float32"),
    ("d2h_too_big", r"pto\.memcpy_d2h: the host array has 17 float32 elements", r"slice"),
    ("alloc_odd", r"pto\.alloc_tensor\(6\): the size must be a positive multiple of 4", r"n \* 4"),
    ("launch_not_a_kernel", r"expected a @pto\.kernel function", r"@pto\.kernel"),
]


@pytest.mark.parametrize("name,message,fix", COPY_CASES, ids=[c[0] for c in COPY_CASES])
def test_host_copy_mistakes_name_both_sides_at_the_users_line(name, message, fix):
    global DEV
    values = np.arange(16, dtype=np.float32) + 1
    DEV = device_holding(values)
    with pytest.raises(PyptoError) as err:
        globals()[name]()
    text = str(err.value)
    assert text.startswith(f"{HERE}:{line_of(name)}: "), text
    assert re.search(message, text), text
    assert "fix: " in text and re.search(fix, text.split("fix: ", 1)[1]), text
    np.testing.assert_array_equal(device_values(DEV, 16), values)  # nothing was written


def test_a_smaller_float32_array_copies_the_first_elements():
    d = device_holding(np.zeros(16, np.float32))
    pto.memcpy_h2d(d, np.array([5, 6, 7], np.float32))
    np.testing.assert_array_equal(device_values(d, 4), [5, 6, 7, 0])
    head = np.zeros(2, np.float32)
    pto.memcpy_d2h(head, d)
    np.testing.assert_array_equal(head, [5, 6])


# ------------------------------------- 4. overflowing offset arithmetic is an error at its line

BIG = 1 << 62


@pl.jit
def overflowing_load_offset(a: pl.Tensor, c: pl.Out[pl.Tensor], r: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [r * BIG * 4, 0], [16, 64])  # E:overflowing_load_offset
        c = pl.store(t, [0, 0], c)
    return c


@pl.jit
def overflowing_store_offset(a: pl.Tensor, c: pl.Out[pl.Tensor], r: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64])
        c = pl.store(t, [r + 9223372036854775800, 0], c)  # E:overflowing_store_offset
    return c


@pl.jit
def offset_near_the_limit(a: pl.Tensor, c: pl.Out[pl.Tensor], r: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, r], [16, 64])  # E:offset_near_the_limit
        c = pl.store(t, [0, 0], c)
    return c


OVERFLOW_CASES = [
    ("overflowing_load_offset", 1, r"integer overflow: 4611686018427387904 \* 4 does not fit in 64 bits \(-2\*\*63 \.\. 2\*\*63 - 1\)"),
    ("overflowing_store_offset", 8, r"integer overflow: 8 \+ 9223372036854775800 does not fit in 64 bits"),
    ("offset_near_the_limit", (1 << 63) - 8, r"at offsets \[0, 9223372036854775800\] goes past the tensor's shape"),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name,r,message", OVERFLOW_CASES, ids=[c[0] for c in OVERFLOW_CASES])
def test_offset_overflow_is_an_error_at_the_users_line(name, r, message, engine):
    a = np.arange(32 * 64, dtype=np.float32).reshape(32, 64)
    c = np.full((32, 64), 7.0, np.float32)
    with pytest.raises(PyptoError) as err:
        globals()[name](a, c, r, config=RunConfig(engine=engine))
    text = str(err.value)
    assert at_line(name) in text, text
    assert re.search(message, text), text
    assert "fix: " in text, text
    assert (c == 7.0).all()  # nothing was written


def test_offsets_that_fit_still_compute():
    a = np.arange(32 * 64, dtype=np.float32).reshape(32, 64)
    for engine in ENGINES:
        c = np.zeros((32, 64), np.float32)
        overflowing_load_offset(a, c, 0, config=RunConfig(engine=engine))  # 0 * 2**62 * 4 == 0
        np.testing.assert_array_equal(c[:16], a[:16])


# ------------------------------ 5. pl.Scalar[<dtype>] parameters take any scalar that fits


@pl.jit
def add_int32(a: pl.Tensor, c: pl.Out[pl.Tensor], s: pl.Scalar[pl.INT32]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64])
        c = pl.store(pl.adds(t, pl.cast(s, pl.FP32)), [0, 0], c)
    return c


@pl.jit
def add_int8(a: pl.Tensor, c: pl.Out[pl.Tensor], s: pl.Scalar[pl.INT8]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64])
        c = pl.store(pl.adds(t, pl.cast(s, pl.FP32)), [0, 0], c)
    return c


@pl.jit
def add_fp16(a: pl.Tensor, c: pl.Out[pl.Tensor], s: pl.Scalar[pl.FP16]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64])
        c = pl.store(pl.adds(t, pl.cast(s, pl.FP32)), [0, 0], c)
    return c


def scalar_values():
    values = [("int", 7, 7.0), ("np.int32", np.int32(7), 7.0), ("np.int64", np.int64(-3), -3.0),
              ("np.uint8", np.uint8(200), 200.0), ("np.int16", np.int16(-300), -300.0), ("0-d array", np.array(5, np.int32), 5.0)]
    try:
        import torch

        values += [("torch.int32", torch.tensor(7, dtype=torch.int32), 7.0), ("torch.int64", torch.tensor(-9), -9.0)]
    except ImportError:
        pass
    return values


@pytest.mark.parametrize("engine", ENGINES)
def test_int32_scalar_parameter_takes_ints_numpy_and_torch_scalars(engine):
    a = np.arange(16 * 64, dtype=np.float32).reshape(16, 64)
    config = RunConfig(engine=engine)
    for what, v, want in scalar_values():
        c = np.zeros_like(a)
        add_int32(a, c, v, config=config)
        np.testing.assert_array_equal(c, a + want, err_msg=what)
    c = np.zeros_like(a)
    add_fp16(a, c, np.float16(1.5), config=config)
    np.testing.assert_array_equal(c, a + 1.5)
    add_fp16(a, c, 2, config=config)  # an int converts to the float parameter
    np.testing.assert_array_equal(c, a + 2)
    compiled = add_int8.compile(a, c, 1)
    compiled(a, c, np.int64(-128), config=config)  # the compiled program converts too
    np.testing.assert_array_equal(c, a - 128)


def int32_too_big():
    add_int32(A16, C16, 2**31)  # E:int32_too_big


def int8_too_small():
    add_int8.compile(A16, C16, 1)(A16, C16, np.int64(-129))  # E:int8_too_small


def fp16_too_big():
    add_fp16(A16, C16, np.float32(1e6))  # E:fp16_too_big


def float_for_int():
    add_int32(A16, C16, 7.5)  # E:float_for_int


def string_for_int():
    add_int32(A16, C16, "7")  # E:string_for_int


SCALAR_CASES = [
    ("int32_too_big", TypeError, r"argument 's' = 2147483648 does not fit pl\.Scalar\[pl\.INT32\] \(-2147483648 \.\. 2147483647\)", r"wider dtype"),
    ("int8_too_small", TypeError, r"argument 's' = -129 does not fit pl\.Scalar\[pl\.INT8\] \(-128 \.\. 127\)", r"in that range"),
    ("fp16_too_big", TypeError, r"argument 's' = 1000000\.0 does not fit pl\.Scalar\[pl\.FP16\] \(-65504 \.\. 65504", r"wider dtype"),
    ("float_for_int", TypeError, r"argument 's' = 7\.5 is a float, but the parameter is a pl\.Scalar\[pl\.INT32\]", r"int\(s\)"),
    ("string_for_int", TypeError, r"argument 's' is a str, but the parameter is a pl\.Scalar\[pl\.INT32\]", r"an int or a float"),
]


@pytest.mark.parametrize("name,exc,message,fix", SCALAR_CASES, ids=[c[0] for c in SCALAR_CASES])
def test_a_scalar_that_does_not_fit_names_the_range(name, exc, message, fix):
    global A16, C16
    A16 = np.ones((16, 64), np.float32)
    C16 = np.full((16, 64), 3.0, np.float32)
    with pytest.raises(exc) as err:
        globals()[name]()
    text = str(err.value)
    assert at_line(name) in text, text
    assert re.search(message, text), text
    assert "fix: " in text and re.search(fix, text.split("fix: ", 1)[1]), text
    assert (C16 == 3.0).all()  # nothing was written


# --------------------------------------- 6. recursion between @pl.jit functions: the cycle


@pl.jit.incore
def ping(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = pong(a, c)
    return c


@pl.jit.incore
def pong(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = ping(a, c)  # E:mutual_recursion
    return c


@pl.jit.incore
def itself(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = itself(a, c)  # E:self_recursion
    return c


@pl.jit.inline
def inline_itself(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = inline_itself(a, c)  # E:inline_recursion
    return c


@pl.jit
def calls_ping(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = ping(a, c)
    return c


@pl.jit
def calls_itself(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = itself(a, c)
    return c


@pl.jit
def calls_inline_itself(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = inline_itself(a, c)
    return c


@pl.jit
def entry_itself(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = entry_itself(a, c)  # E:entry_recursion
    return c


RECURSION_CASES = [
    ("mutual_recursion", calls_ping, r"recursive call of @pl\.jit function 'ping': ping -> pong -> ping"),
    ("self_recursion", calls_itself, r"recursive call of @pl\.jit function 'itself': itself -> itself"),
    ("inline_recursion", calls_inline_itself, r"'inline_itself': inline_itself -> inline_itself"),
    ("entry_recursion", entry_itself, r"'entry_itself': entry_itself -> entry_itself"),
]


@pytest.mark.parametrize("name,entry,message", RECURSION_CASES, ids=[c[0] for c in RECURSION_CASES])
def test_recursion_is_a_parse_error_naming_the_cycle(name, entry, message):
    a = np.ones((16, 64), np.float32)
    c = np.zeros_like(a)
    with pytest.raises(pl.ParseError) as err:
        entry(a, c)
    text = str(err.value)
    assert at_line(name) in text, text
    assert re.search(message, text), text
    assert "fix: " in text and "loop" in text.split("fix: ", 1)[1], text
    assert (c == 0).all()


# ------------------------- 7. the kernel cache checks the hash each library records

CACHED_KERNELS = textwrap.dedent(
    """
    import sys
    import numpy as np
    import pypto.language as pl
    from pypto.runtime import RunConfig

    @pl.jit
    def add_one(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            c = pl.store(pl.adds(pl.load(a, [0, 0], [16, 64]), 1.0), [0, 0], c)
        return c

    @pl.jit
    def times_three(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            c = pl.store(pl.muls(pl.load(a, [0, 0], [16, 64]), 3.0), [0, 0], c)
        return c

    a = np.full((16, 64), 5.0, np.float32)
    c = np.zeros_like(a)
    {"add_one": add_one, "times_three": times_three}[sys.argv[1]](a, c, config=RunConfig(engine="native"))
    print("RESULT", float(c[0, 0]), float(c.min()), float(c.max()))
    """
)


def run_cached(script, which, cache):
    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(pypto.__file__).resolve().parents[1]), PYPTO_CACHE_DIR=str(cache), PYPTO_CACHE="1")
    p = subprocess.run([sys.executable, str(script), which], capture_output=True, text=True, env=env, timeout=300)
    return p


def test_a_swapped_or_truncated_cached_library_is_rebuilt(tmp_path):
    script = tmp_path / "cached.py"
    script.write_text(CACHED_KERNELS)
    add_cache, mul_cache = tmp_path / "add", tmp_path / "mul"
    assert "RESULT 6.0 6.0 6.0" in run_cached(script, "add_one", add_cache).stdout
    assert "RESULT 15.0 15.0 15.0" in run_cached(script, "times_three", mul_cache).stdout
    (add_so,) = add_cache.glob("*.so")
    (mul_so,) = mul_cache.glob("*.so")

    add_so.write_bytes(mul_so.read_bytes())  # another kernel's library under this kernel's name
    p = run_cached(script, "add_one", add_cache)
    assert "RESULT 6.0 6.0 6.0" in p.stdout, (p.stdout, p.stderr)  # the right code ran
    assert re.search(r"cached native kernel .*\.so cannot be used \(it was built from other code .*\); rebuilding it", p.stderr), p.stderr
    assert add_so.read_bytes() != mul_so.read_bytes()

    add_so.write_bytes(add_so.read_bytes()[:1000])  # truncated
    p = run_cached(script, "add_one", add_cache)
    assert "RESULT 6.0 6.0 6.0" in p.stdout, (p.stdout, p.stderr)
    assert "rebuilding it" in p.stderr, p.stderr

    p = run_cached(script, "add_one", add_cache)  # the rebuilt library is used as it is
    assert "RESULT 6.0 6.0 6.0" in p.stdout and "rebuilding" not in p.stderr, p.stderr


# ------------------------------------------------------------------- 8. messages


@pl.jit
def rebinds_pl(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    pl = 3  # noqa: F841  # E:pl_rebound_here
    with pl.at(level=pl.Level.CORE_GROUP):  # E:pl_rebound
        c = pl.store(pl.load(a, [0, 0], [16, 64]), [0, 0], c)
    return c


@pl.jit
def float_range(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64])
        for i in pl.range(2.5):  # E:float_range
            t = pl.add(t, t)
        c = pl.store(t, [0, 0], c)
    return c


@pl.jit
def int8_matmul(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.move(pl.load(a, [0, 0], [16, 32], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Left)
        y = pl.move(pl.load(b, [0, 0], [32, 16], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Right)
        c = pl.store(pl.matmul(x, y), [0, 0], c)  # E:int8_matmul
    return c


@pl.jit
def two_args(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.store(pl.load(a, [0, 0], [16, 64]), [0, 0], c)
    return c


def wrong_keyword():
    two_args(A16, out=C16)  # E:wrong_keyword


MESSAGE_CASES = [
    ("pl_rebound", lambda: rebinds_pl(A16, C16), PyptoError,
     r"'pl\.at' reads an attribute of the local name 'pl', which this function rebinds at \S+test_reliability\.py:(\d+)", r"rename"),
    ("float_range", lambda: float_range(A16, C16), PyptoError, r"pl\.range: the stop 2\.5 is a float; loop bounds are integers", r"int\(2\.5\)"),
    ("int8_matmul", lambda: int8_matmul(np.ones((16, 32), np.int8), np.ones((32, 16), np.int8), np.zeros((16, 16), np.int32)),
     PyptoError, r"the cube multiplies INT8 operands into INT32, but out_dtype is FP32 \(the default when out_dtype is not passed\)", r"out_dtype=pl\.INT32"),
    ("wrong_keyword", wrong_keyword, TypeError, r"two_args\(\): got an unexpected keyword argument 'out'", r"call it as two_args\(a, c\)"),
]


@pytest.mark.parametrize("name,call,exc,message,fix", MESSAGE_CASES, ids=[c[0] for c in MESSAGE_CASES])
def test_messages_point_the_right_way(name, call, exc, message, fix):
    global A16, C16
    A16 = np.ones((16, 64), np.float32)
    C16 = np.full((16, 64), 3.0, np.float32)
    with pytest.raises(exc) as err:
        call()
    text = str(err.value)
    assert at_line(name) in text, text
    m = re.search(message, text)
    assert m, text
    if name == "pl_rebound":
        assert int(m.group(1)) == line_of("pl_rebound_here")
    assert "fix: " in text and re.search(fix, text.split("fix: ", 1)[1]), text
    assert "did you mean" not in text or name == "wrong_keyword", text
    assert (C16 == 3.0).all()

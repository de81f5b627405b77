"""`for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.X):` with `pl.aiv_shard` / `pl.aic_gather`:
one InCore kernel holding cube work outside the region and vector work inside it, which pass
SplitAiv divides into a Group function (AIC part + one AIV part per lane) over the cross-core
FIFOs. Results against numpy on both engines, the printer round trip, the pass's Before/After
shape and the errors (vector op outside, cube op inside, unnamed crossings, limits)."""

import inspect

import numpy as np
import pypto.ir as pir
import pypto.language as pl
import pytest
from pypto import _core
from pypto.runtime import RunConfig, run

ENGINES = ["native", "sim"]
FP32 = pl.FP32
Mat, Left, Right = pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right
M, K, N = 32, 64, 64


def randn(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(np.float32)


def epilogue_program(mode):
    """acc = a @ b on the cube; each lane adds the bias to its part and stores it. UP_DOWN /
    LEFT_RIGHT: the lane's shard is its half (rows / columns) of acc; NONE: both lanes get the
    whole acc and lane i writes rows [i*M, (i+1)*M) of a [2M, N] output, from its own bias rows."""
    if mode == pl.SplitMode.UP_DOWN:
        hr, hc, rows = M // 2, N, M
    elif mode == pl.SplitMode.LEFT_RIGHT:
        hr, hc, rows = M, N // 2, M
    else:
        hr, hc, rows = M, N, 2 * M
    dr = hr if mode != pl.SplitMode.LEFT_RIGHT else 0  # the lane's offset step: rows
    dc = hc if mode == pl.SplitMode.LEFT_RIGHT else 0  # or columns

    @pl.program
    class Epilogue:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32],
                   bias: pl.Tensor[[rows, N], FP32], out: pl.Out[pl.Tensor[[rows, N], FP32]]):
            acc = pl.matmul(pl.move(pl.load(a, [0, 0], [M, K], target_memory=Mat), target_memory=Left),
                            pl.move(pl.load(b, [0, 0], [K, N], target_memory=Mat), target_memory=Right))
            for aiv_id in pl.split_aiv(2, mode=mode):
                t = pl.aiv_shard(acc)
                r = pl.add(t, pl.load(bias, [aiv_id * dr, aiv_id * dc], [hr, hc]))
                out = pl.store(r, [aiv_id * dr, aiv_id * dc], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], bias: pl.Tensor[[rows, N], FP32],
                 out: pl.Out[pl.Tensor[[rows, N], FP32]]):
            out = self.kernel(a, b, bias, out)
            return out

    return Epilogue, rows


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("mode", [pl.SplitMode.UP_DOWN, pl.SplitMode.LEFT_RIGHT, pl.SplitMode.NONE])
def test_matmul_then_vector_epilogue_split_between_lanes(engine, mode):
    prog, rows = epilogue_program(mode)
    a, b, bias = randn(M, K), randn(K, N, seed=1), randn(rows, N, seed=2)
    out = np.zeros((rows, N), np.float32)
    run(prog, a, b, bias, out, config=RunConfig(engine=engine, verify="roundtrip"))
    want = np.vstack([a @ b, a @ b]) + bias if mode == pl.SplitMode.NONE else a @ b + bias
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)


def prologue_program(mode):
    """Each lane computes relu of its part of x (rows under UP_DOWN, columns under LEFT_RIGHT);
    the parts are gathered into the cube's Mat tile, which multiplies w: out = relu(x) @ w."""
    hr, hc = (M // 2, K) if mode == pl.SplitMode.UP_DOWN else (M, K // 2)
    dr, dc = (hr, 0) if mode == pl.SplitMode.UP_DOWN else (0, hc)

    @pl.program
    class Prologue:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: pl.Tensor[[M, K], FP32], w: pl.Tensor[[K, N], FP32],
                   out: pl.Out[pl.Tensor[[M, N], FP32]]):
            for aiv_id in pl.split_aiv(2, mode=mode):
                xt = pl.relu(pl.load(x, [aiv_id * dr, aiv_id * dc], [hr, hc]))
                g = pl.aic_gather(xt)
            acc = pl.matmul(pl.move(g, target_memory=Left),
                            pl.move(pl.load(w, [0, 0], [K, N], target_memory=Mat), target_memory=Right))
            out = pl.store(acc, [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[M, K], FP32], w: pl.Tensor[[K, N], FP32], out: pl.Out[pl.Tensor[[M, N], FP32]]):
            out = self.kernel(x, w, out)
            return out

    return Prologue


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("mode", [pl.SplitMode.UP_DOWN, pl.SplitMode.LEFT_RIGHT])
def test_vector_prologue_gathered_to_the_cube(engine, mode):
    prog = prologue_program(mode)
    x, w = randn(M, K, seed=3), randn(K, N, seed=4)
    out = np.zeros((M, N), np.float32)
    run(prog, x, w, out, config=RunConfig(engine=engine, verify="roundtrip"))
    np.testing.assert_allclose(out, np.maximum(x, 0) @ w, rtol=1e-4, atol=1e-4)


@pl.program
class GatherNone:
    """NONE: both lanes compute a whole tile from their own rows of x ([2M, K]); the gather
    delivers lane 0's tile (PyPTO leaves the lane unspecified; here it is always lane 0, and
    lane 1's is popped and freed unread)."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[2 * M, K], FP32], w: pl.Tensor[[K, N], FP32], out: pl.Out[pl.Tensor[[M, N], FP32]]):
        for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.NONE):
            xt = pl.relu(pl.load(x, [aiv_id * M, 0], [M, K]))
            g = pl.aic_gather(xt)
        acc = pl.matmul(pl.move(g, target_memory=Left),
                        pl.move(pl.load(w, [0, 0], [K, N], target_memory=Mat), target_memory=Right))
        out = pl.store(acc, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[2 * M, K], FP32], w: pl.Tensor[[K, N], FP32], out: pl.Out[pl.Tensor[[M, N], FP32]]):
        out = self.kernel(x, w, out)
        return out


@pytest.mark.parametrize("engine", ENGINES)
def test_none_gather_delivers_lane_0(engine):
    x, w = randn(2 * M, K, seed=5), randn(K, N, seed=6)
    out = np.zeros((M, N), np.float32)
    run(GatherNone, x, w, out, config=RunConfig(engine=engine, verify="roundtrip"))
    np.testing.assert_allclose(out, np.maximum(x[:M], 0) @ w, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("mode", ["UP_DOWN", "LEFT_RIGHT", "NONE"])
def test_region_prints_and_parses_back(mode):
    prog, _ = epilogue_program(getattr(pl.SplitMode, mode))
    text = pir.print_program(prog)
    assert f"for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.{mode}):" in text
    split = {"UP_DOWN": 1, "LEFT_RIGHT": 2, "NONE": 0}[mode]
    assert ("= pl.tile.aiv_shard(acc" + (f", split={split})" if split else ")")) in text
    assert pir.structural_equal(pl.parse(text), prog)
    text = pir.print_program(prologue_program(pl.SplitMode.UP_DOWN))
    assert "= pl.tile.aic_gather(xt, split=1)" in text
    assert pir.structural_equal(pl.parse(text), prologue_program(pl.SplitMode.UP_DOWN))


def test_split_aiv_pass_before_after():
    """Before: one InCore kernel with a region. After: kernel is a Group calling kernel_aic and
    kernel_aiv(..., 0) / (..., 1); the shard is a split push / pop, freed at the end."""
    prog, _ = epilogue_program(pl.SplitMode.UP_DOWN)
    after = _core.run_pass(prog, "SplitAiv", "a2a3sim")
    text = pir.print_program(after)
    assert "@pl.function(type=pl.FunctionType.Group)\n    def kernel(" in text
    assert "self.kernel_aic(a, b, bias, out)" in text
    assert "self.kernel_aiv(a, b, bias, out, 0)" in text and "self.kernel_aiv(a, b, bias, out, 1)" in text
    assert "pl.tile.tpush_to_aiv(acc, aiv=0, split=1)" in text
    assert "= pl.tile.tpop_from_aic([16, 64], dtype=pl.FP32, split=1)" in text
    assert "pl.tile.tfree_to_aic(t, split=1)" in text
    assert "split_aiv" not in text
    assert pir.structural_equal(pl.parse(text), after)


# -- errors -------------------------------------------------------------------------------------

def line_of(text, fn):
    lines, start = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if text in line:
            return start + i
    raise AssertionError(f"{text!r} not in {fn.__name__}")


def compile_error(build):
    with pytest.raises((_core.PyptoError, pl.ParseError)) as e:
        prog = build()
        run(prog, randn(M, K), randn(K, N), randn(M, N), np.zeros((M, N), np.float32), config=RunConfig())
    return str(e.value)


def test_vector_op_outside_the_region_is_an_error():
    def build():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], bias: pl.Tensor[[M, N], FP32],
                       out: pl.Out[pl.Tensor[[M, N], FP32]]):
                acc = pl.matmul(pl.move(pl.load(a, [0, 0], [M, K], target_memory=Mat), target_memory=Left),
                                pl.move(pl.load(b, [0, 0], [K, N], target_memory=Mat), target_memory=Right))
                e = pl.exp(pl.load(bias, [0, 0], [M, N]))  # vector work on the cube side
                for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                    t = pl.aiv_shard(acc)
                    out = pl.store(t, [aiv_id * 16, 0], out)
                return out

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], bias: pl.Tensor[[M, N], FP32],
                     out: pl.Out[pl.Tensor[[M, N], FP32]]):
                out = self.kernel(a, b, bias, out)
                return out

        return P

    msg = compile_error(build)
    assert "vector op pl.tile.exp is outside the pl.split_aiv region of 'kernel'" in msg
    assert f"test_split_aiv.py:{line_of('e = pl.exp', build)}" in msg
    assert "fix: move it into the region" in msg


def test_unnamed_crossing_into_the_region_is_an_error():
    def build():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], bias: pl.Tensor[[M, N], FP32],
                       out: pl.Out[pl.Tensor[[M, N], FP32]]):
                acc = pl.matmul(pl.move(pl.load(a, [0, 0], [M, K], target_memory=Mat), target_memory=Left),
                                pl.move(pl.load(b, [0, 0], [K, N], target_memory=Mat), target_memory=Right))
                for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.NONE):
                    v = pl.move(acc, target_memory=pl.MemorySpace.Vec)
                    out = pl.store(v, [0, 0], out)
                return out

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], bias: pl.Tensor[[M, N], FP32],
                     out: pl.Out[pl.Tensor[[M, N], FP32]]):
                out = self.kernel(a, b, bias, out)
                return out

        return P

    msg = compile_error(build)
    assert "'acc' is computed on the cube, before the pl.split_aiv region of 'kernel', and used inside it" in msg
    assert f"test_split_aiv.py:{line_of('v = pl.move(acc', build)}" in msg
    assert "fix: write acc_v = pl.aiv_shard(acc) at the top of the region" in msg


def test_unnamed_crossing_out_of_the_region_is_an_error():
    def build():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], bias: pl.Tensor[[M, N], FP32],
                       out: pl.Out[pl.Tensor[[M, N], FP32]]):
                for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                    xt = pl.relu(pl.load(a, [aiv_id * 16, 0], [16, K]))
                acc = pl.matmul(pl.move(pl.move(xt, target_memory=Mat), target_memory=Left),
                                pl.move(pl.load(b, [0, 0], [K, N], target_memory=Mat), target_memory=Right))
                out = pl.store(acc, [0, 0], out)
                return out

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], bias: pl.Tensor[[M, N], FP32],
                     out: pl.Out[pl.Tensor[[M, N], FP32]]):
                out = self.kernel(a, b, bias, out)
                return out

        return P

    msg = compile_error(build)
    assert "'xt' is computed on the vector lanes, inside the pl.split_aiv region of 'kernel', and used after it" in msg
    assert "fix: write xt_c = pl.aic_gather(xt) at the bottom of the region" in msg


def test_crossing_outside_a_region_and_bad_region_arguments():
    def shard_outside():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], bias: pl.Tensor[[M, N], FP32],
                       out: pl.Out[pl.Tensor[[M, N], FP32]]):
                acc = pl.matmul(pl.move(pl.load(a, [0, 0], [M, K], target_memory=Mat), target_memory=Left),
                                pl.move(pl.load(b, [0, 0], [K, N], target_memory=Mat), target_memory=Right))
                t = pl.aiv_shard(acc)
                out = pl.store(t, [0, 0], out)
                return out

        return P

    msg = compile_error(shard_outside)
    assert "pl.aiv_shard is used outside a pl.split_aiv region" in msg
    assert f"test_split_aiv.py:{line_of('t = pl.aiv_shard(acc)', shard_outside)}" in msg

    def three_lanes():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(self, a: pl.Tensor[[M, K], FP32], out: pl.Out[pl.Tensor[[M, K], FP32]]):
                for aiv_id in pl.split_aiv(3, mode=pl.SplitMode.NONE):
                    out = pl.store(pl.load(a, [0, 0], [M, K]), [0, 0], out)
                return out

        return P

    msg = compile_error(three_lanes)
    assert "pl.split_aiv(3): a cluster has 2 vector cores" in msg and "fix: write pl.split_aiv(2, mode=...)" in msg

    def no_mode():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(self, a: pl.Tensor[[M, K], FP32], out: pl.Out[pl.Tensor[[M, K], FP32]]):
                for aiv_id in pl.split_aiv(2, mode=1):
                    out = pl.store(pl.load(a, [0, 0], [M, K]), [0, 0], out)
                return out

        return P

    msg = compile_error(no_mode)
    assert "mode= of pl.split_aiv must be a pl.SplitMode" in msg


def test_surface_names():
    assert pl.tile.aiv_shard is not None and pl.tile.aic_gather is not None
    assert list(inspect.signature(pl.split_aiv).parameters) == ["n", "mode"]


@pl.program
class AtBody:
    """The region inside a `pl.at(level=CORE_GROUP)` body: OutlineIncore makes the InCore
    kernel, SplitAiv divides it."""

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], out: pl.Out[pl.Tensor[[M, N], FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            acc = pl.matmul(pl.move(pl.load(a, [0, 0], [M, K], target_memory=Mat), target_memory=Left),
                            pl.move(pl.load(b, [0, 0], [K, N], target_memory=Mat), target_memory=Right))
            for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                t = pl.aiv_shard(acc)
                out = pl.store(pl.relu(t), [aiv_id * (M // 2), 0], out)
        return out


@pytest.mark.parametrize("engine", ENGINES)
def test_region_in_a_pl_at_body(engine):
    a, b = randn(M, K, seed=7), randn(K, N, seed=8)
    out = np.zeros((M, N), np.float32)
    run(AtBody, a, b, out, config=RunConfig(engine=engine, verify="roundtrip"))
    np.testing.assert_allclose(out, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)


def test_cube_op_inside_the_region_is_an_error():
    def build():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], bias: pl.Tensor[[M, N], FP32],
                       out: pl.Out[pl.Tensor[[M, N], FP32]]):
                for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.NONE):
                    acc = pl.matmul(pl.move(pl.load(a, [0, 0], [M, K], target_memory=Mat), target_memory=Left),
                                    pl.move(pl.load(b, [0, 0], [K, N], target_memory=Mat), target_memory=Right))
                    out = pl.store(acc, [0, 0], out)
                return out

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], bias: pl.Tensor[[M, N], FP32],
                     out: pl.Out[pl.Tensor[[M, N], FP32]]):
                out = self.kernel(a, b, bias, out)
                return out

        return P

    msg = compile_error(build)
    assert "cube op pl.tile.matmul is inside the pl.split_aiv region of 'kernel'" in msg
    assert f"test_split_aiv.py:{line_of('acc = pl.matmul', build)}" in msg
    assert "fix: move it out of the region" in msg


def test_limits_region_in_a_loop_and_two_regions():
    def in_loop():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], bias: pl.Tensor[[M, N], FP32],
                       out: pl.Out[pl.Tensor[[M, N], FP32]]):
                for i in pl.range(2):
                    for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                        out = pl.store(pl.load(bias, [aiv_id * 16, 0], [16, N]), [aiv_id * 16, 0], out)
                return out

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], bias: pl.Tensor[[M, N], FP32],
                     out: pl.Out[pl.Tensor[[M, N], FP32]]):
                out = self.kernel(a, b, bias, out)
                return out

        return P

    msg = compile_error(in_loop)
    assert "a pl.split_aiv region of 'kernel' is inside a loop or branch" in msg
    assert f"test_split_aiv.py:{line_of('for aiv_id in pl.split_aiv', in_loop)}" in msg
    assert "fix: write the region at the top level of the kernel function" in msg

    def two():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], bias: pl.Tensor[[M, N], FP32],
                       out: pl.Out[pl.Tensor[[M, N], FP32]]):
                for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                    out = pl.store(pl.load(bias, [aiv_id * 16, 0], [16, N]), [aiv_id * 16, 0], out)
                for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                    out = pl.store(pl.load(bias, [lane * 16, 0], [16, N]), [lane * 16, 0], out)
                return out

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], bias: pl.Tensor[[M, N], FP32],
                     out: pl.Out[pl.Tensor[[M, N], FP32]]):
                out = self.kernel(a, b, bias, out)
                return out

        return P

    msg = compile_error(two)
    assert "'kernel' has a second pl.split_aiv region; this compiler splits one region per kernel function" in msg
    assert f"test_split_aiv.py:{line_of('for lane in pl.split_aiv', two)}" in msg


def test_crossing_split_must_match_the_region():
    def build():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], bias: pl.Tensor[[M, N], FP32],
                       out: pl.Out[pl.Tensor[[M, N], FP32]]):
                acc = pl.matmul(pl.move(pl.load(a, [0, 0], [M, K], target_memory=Mat), target_memory=Left),
                                pl.move(pl.load(b, [0, 0], [K, N], target_memory=Mat), target_memory=Right))
                for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                    t = pl.aiv_shard(acc, split=2)
                    out = pl.store(t, [aiv_id * 16, 0], out)
                return out

        return P

    msg = compile_error(build)
    assert "split=2 of pl.aiv_shard differs from the region's mode (UP_DOWN)" in msg


@pl.program
class WithForm:
    """`with pl.split_aiv(2, mode=...) as aiv_id:` is the same region (printed as the for form)."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], out: pl.Out[pl.Tensor[[M, N], FP32]]):
        acc = pl.matmul(pl.move(pl.load(a, [0, 0], [M, K], target_memory=Mat), target_memory=Left),
                        pl.move(pl.load(b, [0, 0], [K, N], target_memory=Mat), target_memory=Right))
        with pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT) as aiv_id:
            t = pl.aiv_shard(acc)
            out = pl.store(pl.exp(t), [0, aiv_id * (N // 2)], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], out: pl.Out[pl.Tensor[[M, N], FP32]]):
        out = self.kernel(a, b, out)
        return out


@pytest.mark.parametrize("engine", ENGINES)
def test_with_form_of_the_region(engine):
    a, b = randn(M, K, seed=9) * 0.1, randn(K, N, seed=10) * 0.1
    out = np.zeros((M, N), np.float32)
    run(WithForm, a, b, out, config=RunConfig(engine=engine, verify="roundtrip"))
    np.testing.assert_allclose(out, np.exp(a @ b), rtol=1e-4, atol=1e-4)
    text = pir.print_program(WithForm)
    assert "for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT):" in text
    assert pir.structural_equal(pl.parse(text), WithForm)


def test_region_outside_a_kernel_is_an_error():
    def build():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], bias: pl.Tensor[[M, N], FP32],
                     out: pl.Out[pl.Tensor[[M, N], FP32]]):
                for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                    out = pl.store(pl.load(bias, [aiv_id * 16, 0], [16, N]), [aiv_id * 16, 0], out)
                return out

        return P

    msg = compile_error(build)
    assert "a pl.split_aiv region is in the Orchestration function 'main'" in msg
    assert "fix: write the region in a @pl.function(type=pl.FunctionType.InCore) function (or a pl.at body)" in msg

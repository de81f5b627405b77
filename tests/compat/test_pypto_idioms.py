"""Programs written the way PyPTO's own examples and docs write them, mixing the spellings
that the compat branches added one by one: each computes against numpy on both engines and
round-trips through the printer (verify="roundtrip" re-parses after every pass)."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig

ENGINES = ["native", "sim"]
rng = np.random.default_rng(13)


def cfg(engine, tmp_path=None, **kw):
    return RunConfig(engine=engine, verify="roundtrip", **({"output_dir": str(tmp_path)} if tmp_path else {}), **kw)


@pl.jit
def exp_then_bands(x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    tmp = pl.create_tensor([64, 64], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="exp_all") as t1:
        tmp[:] = pl.exp(x)
    with pl.spmd(4, deps=[t1], name_hint="bands") as t2:
        b = pl.tile.get_block_idx()
        out = pl.store(pl.load(tmp, [b * 16, 0], shapes=[16, 64]), [b * 16, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_scope_then_spmd_with_deps(engine, tmp_path):
    x = rng.uniform(-1, 1, (64, 64)).astype(np.float32)
    out = np.zeros_like(x)
    exp_then_bands(x, out, config=cfg(engine, tmp_path, save_kernels=True))
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-5)
    kernels = {p.name for p in (tmp_path / "kernels").glob("*.pto")}
    assert any(n.startswith("exp_all") for n in kernels) and any(n.startswith("bands") for n in kernels)


@pl.jit
def carried_store(x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            r = pl.store(pl.adds(pl.load(x, [i * 16, 0], [16, 64]), 1.0), [i * 16, 0], out)
    return r


@pytest.mark.parametrize("engine", ENGINES)
def test_name_from_a_loop_is_visible_after_it(engine):
    x = rng.uniform(-1, 1, (64, 64)).astype(np.float32)
    out = np.zeros_like(x)
    carried_store(x, out, config=cfg(engine))
    np.testing.assert_allclose(out, x + 1, rtol=1e-6)


@pl.jit.incore
def scale(x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]], f: pl.FP32):
    t = pl.load(x, [0, 0], shapes=[64, 64])
    out = pl.store(pl.muls(t, f), [0, 0], out)
    return out


@pl.jit
def scaled_twice(x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    mid = pl.create_tensor([64, 64], dtype=pl.FP32)
    mid, tid = pl.submit(scale, x, mid, 2.0)
    out, _ = pl.submit(scale, mid, out, 3.0, deps=[tid])
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_submit_pairs_and_bare_scalar_annotation(engine):
    x = rng.uniform(-1, 1, (64, 64)).astype(np.float32)
    out = np.zeros_like(x)
    scaled_twice(x, out, config=cfg(engine))
    np.testing.assert_allclose(out, 6 * x, rtol=1e-6)


ROWS, COLS = 64, 128


@pl.jit
def rmsnorm_rows(x: pl.Tensor[[ROWS, COLS], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    for r in pl.range(0, ROWS, 32):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rmsnorm",
                   optimizations=[pl.split(pl.SplitMode.UP_DOWN), pl.cross_core_slot(slot_num=4)]):
            t = pl.load(x, offsets=[r, 0], shapes=[32, COLS])
            sq = pl.mul(t, t)
            tmp = pl.create_tile([32, COLS], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
            ms = pl.row_sum(sq, tmp_tile=tmp)
            inv = pl.rsqrt(pl.adds(pl.muls(ms, 1.0 / COLS), 1e-6), high_precision=True)
            y = pl.row_expand_mul(lhs=t, rhs=inv)
            out = pl.store(y, [r, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_pypto_lib_style_rmsnorm(engine):
    x = rng.uniform(-1, 1, (ROWS, COLS)).astype(np.float32)
    out = np.zeros_like(x)
    rmsnorm_rows(x, out, config=cfg(engine))
    want = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)


@pl.program
class Fused:
    @pl.function(type=pl.FunctionType.InCore)
    def add_one(self, a: pl.Tensor[[32, 64], pl.FP32], c: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
        t = pl.load(a, [0, 0], shapes=[32, 64])
        c = pl.store(pl.add(t, 1.0), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration, role=pl.Role.Orchestrator)
    def main(self, a: pl.Tensor[[32, 64], pl.FP32], c: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
        c = self.add_one(a, c)
        return c


@pytest.mark.parametrize("engine", ENGINES)
def test_class_form_with_role(engine):
    import pypto
    a = rng.uniform(-1, 1, (32, 64)).astype(np.float32)
    c = np.zeros_like(a)
    result = pypto.runtime.run(Fused, a, c, config=cfg(engine))
    assert result.passed
    np.testing.assert_allclose(c, a + 1, rtol=1e-6)
    text = Fused.as_python()
    assert "role=pl.Role.Orchestrator" in text
    assert pypto.ir.structural_equal(pl.parse(text), Fused)
    assert Fused.get_function("add_one").name == "add_one" and list(Fused.functions) is not None

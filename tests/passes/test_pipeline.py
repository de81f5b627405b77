"""The pipeline as a whole: docs/passes.md is current, dump_passes writes one re-parseable
file per pass that changed the program, and the verification levels."""

import os

import numpy as np
import pypto.language as pl
import pytest
from pypto import _core, ir
from pypto.runtime import RunConfig
from pypto.tools.gen_docs import passes_markdown


def test_docs_list_every_pass_in_order():
    text = passes_markdown()
    names = [n for n, _ in _core.pipeline_passes()]
    positions = [text.index(f"## {i}. {n}") for i, n in enumerate(names, 1)]
    assert positions == sorted(positions)


@pl.jit
def scaled(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 32])
        c = pl.store(pl.mul(t, 3.0), [0, 0], c)
    return c


@pl.jit.incore
def already_flat(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    t = pl.load(a, [0, 0], [32, 32])
    c = pl.store(t, [0, 0], c)
    return c


@pl.jit
def no_scope(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = already_flat(a, c)
    return c


def test_dump_passes_writes_changed_passes_only_and_each_reparses(tmp_path):
    a = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    c = np.zeros_like(a)
    scaled(a, c, config=RunConfig(dump_passes=True, output_dir=str(tmp_path / "s")))
    np.testing.assert_array_equal(c, a * 3)
    dumps = sorted(os.listdir(tmp_path / "s" / "passes_dump"))
    position = {name: i for i, (name, _) in enumerate(_core.pipeline_passes(), 1)}

    def dump(name):
        return f"{position[name]:02d}_after_{name}.py"

    # Nothing loop-carried here: InsertCarryCopies (and any later no-op pass) leaves no dump.
    assert dumps == [dump("OutlineIncore"), dump("FlattenCalls"), dump("PlanMemory")]
    for name in dumps:
        path = tmp_path / "s" / "passes_dump" / name
        again = pl.loads(path)
        assert ir.print_program(again) == path.read_text()

    # No scope to outline and nothing nested: only PlanMemory changes this program.
    no_scope(a, c, config=RunConfig(dump_passes=True, output_dir=str(tmp_path / "n")))
    assert sorted(os.listdir(tmp_path / "n" / "passes_dump")) == [dump("PlanMemory")]


@pytest.mark.parametrize("level", ["off", "basic", "roundtrip"])
def test_verify_levels_compile_and_run(level, tmp_path):
    a = np.ones((32, 32), dtype=np.float32)
    c = np.zeros_like(a)
    scaled(a, c, config=RunConfig(verify=level, output_dir=str(tmp_path)))
    np.testing.assert_array_equal(c, a * 3)


def test_unknown_verify_level_is_rejected():
    with pytest.raises(ValueError, match="verification level"):
        RunConfig(verify="full")


def test_verifier_names_the_stage_that_broke_an_invariant():
    # A program still holding a pl.at scope is not a valid input of FlattenCalls.
    prog = scaled.parse([("tensor", (32, 32), pl.FP32)] * 2)
    with pytest.raises(_core.PyptoError, match="after the pass before FlattenCalls.*pl.at scope"):
        _core.run_pass(prog, "FlattenCalls")
    _core.run_pass(prog, "FlattenCalls", verify=False)

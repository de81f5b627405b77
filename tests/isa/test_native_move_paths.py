"""The native engine's fast paths of the move family (TTRANS, TEXTRACT / TSUBVIEW, TFILLPAD,
TFILLPAD_EXPAND, TFILLPAD_INPLACE; src/engines/native/native_codegen.cpp `move_path`)
against the reference (src/isa/families/move.cpp), bit for bit, in every float dtype and
8/32-bit integers, with partly valid tiles and every pad value; and shown to be taken."""

import re

import numpy as np
import pytest

from pypto import _core

# BF16 operands are uint16 arrays of bf16 bit patterns (as in test_native_differential.py).
NP = {"FP32": np.float32, "FP16": np.float16, "BF16": np.uint16, "INT32": np.int32, "INT8": np.int8}


def rand(rng, shape, dtype):
    if dtype == "BF16":
        f = rng.uniform(-4, 4, size=shape).astype(np.float32)
        return (f.view(np.uint32) >> 16).astype(np.uint16)
    if dtype in ("FP32", "FP16"):
        return rng.uniform(-4, 4, size=shape).astype(NP[dtype])
    return rng.integers(-100, 101, size=shape).astype(NP[dtype])


def run(name, outs, ins, attrs, kw, engine, dt):
    outs = [o.copy() for o in outs]
    if dt == "BF16":
        kw = dict(kw, dtypes=["BF16" if isinstance(o, np.ndarray) else None for o in outs + list(ins)])
    try:
        _core.isa_execute(name, outs, ins, attrs, engine=engine, **kw)
        return outs, None
    except _core.PyptoError as e:
        return None, str(e)



def case(name, rng, dt, pad):
    R, C = int(rng.integers(1, 40)), int(rng.integers(1, 70))
    valid = [int(rng.integers(1, R + 1)), int(rng.integers(1, C + 1))]
    z = lambda shape: np.zeros(shape, NP[dt])  # noqa: E731
    t = lambda shape: rand(rng, shape, dt)  # noqa: E731
    if name == "TTRANS":
        return [z((C, R))], [t((R, C))], {}, {"valid_shape": valid[::-1]}
    if name in ("TEXTRACT", "TSUBVIEW"):
        return [z((R, C))], [t((R + 4, C + 6)), [3, 5]], {}, {"valid_shape": valid}
    if name == "TFILLPAD":
        return [t((R, C))], [t((R, C))], {}, {"valid_shape": valid, "pad": pad}
    if name == "TFILLPAD_EXPAND":
        return [t((R + 3, C + 9))], [t((R, C))], {}, {"valid_shape": valid, "pad": pad}
    return [t((R, C))], [], {}, {"valid_shape": valid, "pad": pad}  # TFILLPAD_INPLACE


COPIES = [(n, d) for n in ("TTRANS", "TEXTRACT", "TSUBVIEW") for d in ("FP32", "BF16", "INT8", "INT32")]
FILLS = [(n, d, p) for n in ("TFILLPAD", "TFILLPAD_EXPAND", "TFILLPAD_INPLACE") for d in ("FP32", "BF16", "FP16")
         for p in ("zero", "min", "max")]


def agree(name, dt, pad, rng):
    outs, ins, attrs, kw = case(name, rng, dt, pad)
    ref, ref_err = run(name, outs, ins, attrs, kw, "sim", dt)
    nat, nat_err = run(name, outs, ins, attrs, kw, "native", dt)
    assert nat_err == ref_err, f"{name} {dt}: errors differ:\nsim: {ref_err}\nnative: {nat_err}"
    assert ref_err is None, ref_err
    for r, n in zip(ref, nat):
        np.testing.assert_array_equal(n.view(np.uint8), r.view(np.uint8), err_msg=f"{name} {dt} pad={pad}")


@pytest.mark.parametrize("name,dt", COPIES)
def test_move_copies_match_reference(name, dt):
    agree(name, dt, "null", np.random.default_rng(sum(map(ord, name + dt))))


@pytest.mark.parametrize("dt", ["BF16", "FP32", "INT32", "INT8"])
@pytest.mark.parametrize("R,C,valid", [(16, 16, [16, 16]), (128, 128, [128, 128]), (33, 47, [33, 47]),
                                        (64, 48, [17, 40]), (40, 96, [40, 80])])
def test_transpose_blocks_and_edges_match_reference(R, C, valid, dt):
    """TTRANS of 2- and 4-byte elements runs whole 16 x 16 blocks vectorised (copy_region's
    transpose) and the edge rows / columns element by element: every split agrees bit for bit
    with the reference library."""
    check_transpose(R, C, valid, dt, np.random.default_rng(R * 131 + C))


def check_transpose(R, C, valid, dt, rng):
    """A TTRANS of an R x C tile (valid rows x columns `valid`) on the native engine equals the
    reference's bit for bit and numpy's transpose of the valid region."""
    outs, ins, kw = [np.zeros((C, R), NP[dt])], [rand(rng, (R, C), dt)], {"valid_shape": valid[::-1]}
    ref, ref_err = run("TTRANS", outs, ins, {}, kw, "sim", dt)
    nat, nat_err = run("TTRANS", outs, ins, {}, kw, "native", dt)
    assert ref_err is None and nat_err is None, (ref_err, nat_err)
    np.testing.assert_array_equal(nat[0].view(np.uint8), ref[0].view(np.uint8))
    vr, vc = valid
    np.testing.assert_array_equal(nat[0][:vc, :vr], np.ascontiguousarray(ins[0][:vr, :vc].T))


@pytest.mark.parametrize("name,dt,pad", FILLS)
def test_fillpads_match_reference(name, dt, pad):
    agree(name, dt, pad, np.random.default_rng(sum(map(ord, name + dt + pad))))


def test_move_fast_paths_are_taken_in_the_qwen3_layer():
    """The decode layer's K transpose (pl.transpose_view), score fill-pad and tile slices
    (r[h:h + 1, :]) compile to native code, not to the reference fallback."""
    torch = pytest.importorskip("torch")
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "models" / "03_qwen3_decode_layer.py"
    spec = importlib.util.spec_from_file_location("qwen3_layer_for_isa", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    inp = m.make_inputs(m.SMALL)
    compiled = m.build(m.SMALL).compile(*inp.values(), torch.zeros(m.SMALL.batch, m.SMALL.hidden))
    sources = "\n".join(s for s in compiled.native_sources().values() if s)
    taken = re.findall(r"/\* (TTRANS|TFILLPAD|TEXTRACT) \*/ (\{|FB)", sources)
    assert {t for t, _ in taken} == {"TTRANS", "TFILLPAD", "TEXTRACT"}
    assert [t for t, how in taken if how == "FB"] == []

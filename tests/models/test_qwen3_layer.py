"""The Qwen3 decode and prefill layers (examples/models/03_qwen3_decode_layer.py) at their
--small size, on both engines, against the torch reference of the same arithmetic (output
and the updated paged KV caches)."""

import importlib.util
import pathlib

import pytest

torch = pytest.importorskip("torch")

from pypto.runtime import RunConfig  # noqa: E402

PATH = pathlib.Path(__file__).resolve().parents[2] / "examples" / "models" / "03_qwen3_decode_layer.py"


def load():
    spec = importlib.util.spec_from_file_location("qwen3_layer", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def m():
    return load()


@pytest.mark.parametrize("prefill", [False, True], ids=["decode", "prefill"])
def test_layer_matches_torch(m, engine, prefill):
    c = m.prefill_config(m.SMALL) if prefill else m.SMALL
    err = m.check(c, prefill, RunConfig(engine=engine), seed=5)
    assert err < 0.05


def test_decode_warm_calls_on_resident_tensors(m, engine):
    """Warm calls on a ChipWorker with every input a device tensor match the reference."""
    c = m.SMALL
    inp = m.make_inputs(c, seed=9)
    want, _, _ = m.reference(c, inp)
    cfg = RunConfig(engine=engine)
    out = torch.zeros(c.batch, c.hidden)
    compiled = m.build(c).compile(*inp.values(), out, config=cfg)
    _, got = m.time_warm(compiled, inp, out, cfg, rounds=3)
    torch.testing.assert_close(got, want, rtol=2e-2, atol=2e-2 * max(want.abs().max().item(), 1.0))


def test_decode_layer_detects_a_wrong_weight(m, engine):
    """The comparison is live: a layer run with one corrupted weight does not match."""
    c = m.SMALL
    inp = m.make_inputs(c, seed=2)
    want, _, _ = m.reference(c, inp)
    inp["w_down"][0, :] += 1.0
    out = torch.zeros(c.batch, c.hidden)
    m.build(c)(*inp.values(), out, config=RunConfig(engine=engine))
    assert (out - want).abs().max().item() > 0.05

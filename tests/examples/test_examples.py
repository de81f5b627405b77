"""Every example runs end to end and checks itself against numpy or torch."""

import importlib.util
import pathlib

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
PROGRAMS = sorted(str(p.relative_to(EXAMPLES)) for p in EXAMPLES.glob("*/*.py"))


def load(relpath: str):
    spec = importlib.util.spec_from_file_location(
        relpath.replace("/", "_")[:-3], EXAMPLES / relpath
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("relpath", PROGRAMS)
def test_example(relpath, backend, capsys):
    load(relpath).main(backend)
    assert capsys.readouterr().out.strip().endswith("OK")


@pytest.mark.parametrize("relpath", PROGRAMS)
def test_example_ir_round_trips_after_every_pass(relpath, engine, capsys):
    """verify="roundtrip": after parsing and after every pass the printed program parses
    back to an equal one (checked once; the check does not depend on the engine)."""
    if engine != "sim":
        pytest.skip("the round trip is engine-independent; checked on the sim run")
    from pypto.runtime import RunConfig

    load(relpath).main("numpy", RunConfig(verify="roundtrip"))
    assert capsys.readouterr().out.strip().endswith("OK")

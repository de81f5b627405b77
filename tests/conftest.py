"""Shared fixtures: `engine` runs a test once per execution engine. The end-to-end test
directories (ops, codegen, examples) use it through an autouse fixture, so every test
program runs on both engines and is checked against numpy/torch on each."""

import pytest

ENGINES = ["native", "sim"]


@pytest.fixture(params=ENGINES)
def engine(request, monkeypatch):
    """Makes RunConfig() default to this engine for the test."""
    monkeypatch.setenv("PYPTO_ENGINE", request.param)
    return request.param

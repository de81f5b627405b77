"""Every test here runs on each engine (see tests/conftest.py)."""

import pytest


@pytest.fixture(autouse=True)
def _on_each_engine(engine):
    return engine

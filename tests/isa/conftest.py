"""Fixtures of the ISA tests."""

import numpy as np
import pytest


@pytest.fixture
def rng():
    """A seeded generator: every run draws the same operands."""
    return np.random.default_rng(1234)

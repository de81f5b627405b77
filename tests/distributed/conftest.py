"""Every distributed test has a time limit (no pytest-timeout here: SIGALRM in the main thread,
which is where the driver waits for its rank processes)."""

import signal

import pytest

LIMIT_S = 240


@pytest.fixture(autouse=True)
def time_limit():
    def expired(signum, frame):
        raise TimeoutError(f"distributed test ran past its {LIMIT_S} s limit")
    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(LIMIT_S)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)

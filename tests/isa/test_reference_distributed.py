"""The pld instructions against numpy: REMOTE_LOAD / REMOTE_STORE (plain and atomic add) on a
peer's copy of a window tensor, SIGNAL_NOTIFY (AtomicAdd, Set) into a peer's cell and
SIGNAL_WAIT (Eq, Ge; a wait that never holds times out with a report). A numpy buffer stands
for the domain's shared memory: this process is attached as rank 0 of 2."""

import numpy as np
import pytest
from isa_cases import run as _run
from pypto import _core

ENGINES = pytest.mark.parametrize("engine", ["sim", "native"])


def run(*args, engine="sim", **kw):
    return _run(*args, engine=engine, **kw)

W = 4096  # bytes per window


@pytest.fixture
def domain():
    header = _core.comm_header_bytes()
    mem = np.zeros(header + 2 * W, np.uint8)
    _core.comm_attach(mem.ctypes.data, W, 0, 2, 0.3)

    def view(rank, offset, shape, dtype):
        return np.ndarray(shape, dtype=dtype, buffer=mem, offset=header + rank * W + offset)
    yield view
    _core.comm_detach()


@ENGINES
def test_remote_load_reads_the_peer_copy(domain, rng, engine):
    mine, peer = domain(0, 0, (8, 16), np.float32), domain(1, 0, (8, 16), np.float32)
    mine[...] = 1
    peer[...] = rng.random((8, 16), dtype=np.float32)
    tile = np.zeros((4, 8), np.float32)
    run("REMOTE_LOAD", [tile], [mine, [2, 4], 1], engine=engine)
    np.testing.assert_array_equal(tile, peer[2:6, 4:12])
    run("REMOTE_LOAD", [tile], [mine, [0, 0], 0], engine=engine)  # peer == me: the own copy
    np.testing.assert_array_equal(tile, mine[:4, :8])


@ENGINES
@pytest.mark.parametrize("atomic", [None, "add"])
def test_remote_store_writes_the_peer_copy(domain, rng, atomic, engine):
    mine, peer = domain(0, 64, (8, 16), np.int32), domain(1, 64, (8, 16), np.int32)
    peer[...] = 5
    tile = rng.integers(-100, 100, (2, 16)).astype(np.int32)
    run("REMOTE_STORE", [mine], [tile, [3, 0], 1], attrs={"atomic": atomic} if atomic else {}, engine=engine)
    want = np.full((8, 16), 5, np.int32)
    want[3:5] = tile + 5 if atomic else tile
    np.testing.assert_array_equal(peer, want)
    assert not mine.any()


@ENGINES
def test_notify_adds_or_sets_the_peer_cell(domain, engine):
    mine, peer = domain(0, 1024, (4,), np.int32), domain(1, 1024, (4,), np.int32)
    run("SIGNAL_NOTIFY", [mine], [[2], 1, 3], attrs={"op": "AtomicAdd"}, engine=engine)
    run("SIGNAL_NOTIFY", [mine], [[2], 1, -1], attrs={"op": "AtomicAdd"}, engine=engine)
    run("SIGNAL_NOTIFY", [mine], [[0], 1, 7], attrs={"op": "Set"}, engine=engine)
    np.testing.assert_array_equal(peer, [7, 0, 2, 0])
    assert not mine.any()


@ENGINES
def test_wait_returns_when_the_cell_holds_and_reports_a_timeout(domain, engine):
    mine = domain(0, 2048, (4,), np.int32)
    mine[1] = 3
    run("SIGNAL_WAIT", [], [mine, [1], 3], attrs={"cmp": "Eq"}, engine=engine)
    run("SIGNAL_WAIT", [], [mine, [1], 2], attrs={"cmp": "Ge"}, engine=engine)
    with pytest.raises(Exception, match=r"timeout: .*rank 0 waits at .*\[1\]\) for == 4, current value 3"):
        run("SIGNAL_WAIT", [], [mine, [1], 4], attrs={"cmp": "Eq"}, engine=engine)


def test_peer_outside_the_domain_and_non_window_tensors_fail(domain):
    mine = domain(0, 0, (8, 16), np.float32)
    tile = np.zeros((4, 8), np.float32)
    with pytest.raises(Exception, match="peer 2 is outside the domain of 2 ranks"):
        run("REMOTE_LOAD", [tile], [mine, [0, 0], 2])
    with pytest.raises(Exception, match="is not a window of this rank"):
        run("REMOTE_LOAD", [tile], [np.zeros((8, 16), np.float32), [0, 0], 1])

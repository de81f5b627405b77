"""User errors of the pto kernel API name the kernel's line and the fix."""

import numpy as np
import pytest

import pypto as pto


def test_unsupported_statement_names_the_line():
    with pytest.raises(pto.PyptoError, match=r"test_kernel_errors.py:\d+: `While` statements"):
        @pto.kernel
        def bad(a):
            while True:
                pass


def test_non_lane_pointer_load_is_rejected_at_launch():
    @pto.kernel
    def same_addr(a, o):
        i = pto.get_global_id()
        pto.store(o + i, pto.load(a))

    d = pto.alloc_tensor(1024)
    with pytest.raises(pto.PyptoError, match=r"(?s)test_kernel_errors.py:\d+: pto.load needs a per-lane pointer.*fix"):
        pto.launch(same_addr, grid=1, block=256, args=(d, d))


def test_out_of_bounds_without_guard_is_reported():
    @pto.kernel
    def copy(a, o):
        i = pto.get_global_id()
        pto.store(o + i, pto.load(a + i))

    d = pto.alloc_tensor(100 * 4)
    with pytest.raises(pto.PyptoError, match=r"(?s)holds 100 fp32 elements.*if i < n"):
        pto.launch(copy, grid=1, block=256, args=(d, d))


def test_calling_lane_ops_outside_a_kernel_and_calling_a_kernel():
    with pytest.raises(pto.PyptoError, match="inside a @pto.kernel"):
        pto.load(None)

    @pto.kernel
    def k(a):
        pass

    with pytest.raises(pto.PyptoError, match="pto.launch"):
        k(1)


def test_mad_is_a_true_multiply_add_and_tail_block_is_masked():
    @pto.kernel
    def axpy(x, y, o, alpha, n):
        i = pto.get_global_id()
        if i < n:
            pto.mad(o + i, pto.load(x + i), alpha, pto.load(y + i))

    n = 1000  # not a multiple of the block: the last block is partially active
    x, y = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
    dx, dy, do = (pto.alloc_tensor(n * 4) for _ in range(3))
    pto.memcpy_h2d(dx, x)
    pto.memcpy_h2d(dy, y)
    pto.launch(axpy, grid=(4, 1, 1), block=(256, 1, 1), args=(dx, dy, do, 1.5, n))
    out = np.zeros(n, np.float32)
    pto.memcpy_d2h(out, do)
    np.testing.assert_allclose(out, x * np.float32(1.5) + y, rtol=1e-6)

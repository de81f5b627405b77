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


def test_block_too_large_for_the_vector_buffer_names_the_need():
    @pto.kernel
    def add(a, b, o):
        i = pto.get_global_id()
        pto.fma(o + i, pto.load(a + i), pto.load(b + i), 0.0)

    n = 32768  # 3 lane values (a, b, a + b) x 32768 lanes x 4 B = 384 KiB > the 192 KiB UB
    d = pto.alloc_tensor(n * 4)
    with pytest.raises(pto.PyptoError, match=r"(?s)needs 393216 bytes of vector buffer \(3 lane values x 32768.*smaller block"):
        pto.launch(add, grid=1, block=n, args=(d, d, d))


def test_out_of_bounds_in_a_late_chunk_is_reported():
    # the first chunks are in bounds and become a loop; the chunk leaving the tensor is an error
    @pto.kernel
    def copy(a, o):
        i = pto.get_global_id()
        pto.store(o + i, pto.load(a + i))

    d = pto.alloc_tensor(100000 * 4)
    with pytest.raises(pto.PyptoError, match=r"(?s)lanes 98304\.\.114687 read elements 98304\.\.114687 of 'a', "
                                             r"which holds 100000 fp32 elements.*if i < n"):
        pto.launch(copy, grid=(512, 1, 1), block=(256, 1, 1), args=(d, d))

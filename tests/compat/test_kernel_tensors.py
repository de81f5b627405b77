"""Tensors inside kernels, in PyPTO's idioms: `pl.create_tensor` in a kernel is an on-chip
buffer (Acc when a matmul accumulates it, else Vec), `pl.tile.assemble` of an Acc tile into
a Mat tile (TINSERT), and tensor-level `pl.matmul` of a computed operand kept on chip. Each
program runs on both engines against numpy and round-trips through the printer."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import _core
from pypto.runtime import RunConfig

ENGINES = ["native", "sim"]
rng = np.random.default_rng(14)


def cfg(engine, **kw):
    return RunConfig(engine=engine, verify="roundtrip", **kw)


# --- pl.create_tensor in a kernel: the Acc accumulator over K -----------------------------

M, N, K, BK = 64, 64, 256, 64


@pl.jit
def gemm_acc_over_k(x: pl.Tensor, w: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.create_tensor([M, N], dtype=pl.FP32)
        for k in pl.range(K // BK):
            a = pl.load(x, [0, k * BK], [M, BK], target_memory=pl.Mem.Mat)
            b = pl.load(w, [k * BK, 0], [BK, N], target_memory=pl.Mem.Mat)
            if k == 0:
                acc = pl.matmul(a, b)
            else:
                acc = pl.matmul_acc(acc, a, b)
        out = pl.store(acc, [0, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_create_tensor_in_kernel_is_the_acc_accumulator(engine):
    x = rng.standard_normal((M, K), dtype=np.float32)
    w = rng.standard_normal((K, N), dtype=np.float32)
    out = np.zeros((M, N), np.float32)
    gemm_acc_over_k(x, w, out, config=cfg(engine))
    np.testing.assert_allclose(out, x @ w, rtol=1e-4, atol=1e-3)


@pl.program
class GemmProgram:
    @pl.function(type=pl.FunctionType.InCore)
    def gemm(self, x: pl.Tensor[[32, 128], pl.FP16], w: pl.Tensor[[128, 64], pl.FP16],
             out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        acc = pl.create_tensor([32, 64], dtype=pl.FP32)
        for k in pl.range(4):
            a = pl.load(x, [0, k * 32], [32, 32], target_memory=pl.Mem.Mat)
            b = pl.load(w, [k * 32, 0], [32, 64], target_memory=pl.Mem.Mat)
            if k == 0:
                acc = pl.matmul(a, b)
            else:
                acc = pl.matmul_acc(acc, a, b)
        out = pl.store(acc, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 128], pl.FP16], w: pl.Tensor[[128, 64], pl.FP16],
             out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        out = self.gemm(x, w, out)
        return out


@pytest.mark.parametrize("engine", ENGINES)
def test_create_tensor_in_an_incore_function_fp16_operands(engine):
    from pypto.runtime import run

    x = rng.uniform(-1, 1, (32, 128)).astype(np.float16)
    w = rng.uniform(-1, 1, (128, 64)).astype(np.float16)
    out = np.zeros((32, 64), np.float32)
    run(GemmProgram, x, w, out, config=cfg(engine))
    np.testing.assert_allclose(out, x.astype(np.float32) @ w.astype(np.float32), rtol=1e-3, atol=1e-3)


def test_kernel_create_tensor_parses_to_an_acc_tile():
    from pypto import ir

    text = ir.print_program(GemmProgram)
    assert "acc: pl.Tile[[32, 64], pl.FP32, pl.Mem.Acc] = pl.tile.create([32, 64], dtype=pl.FP32, " \
           "target_memory=pl.Mem.Acc)" in text


# --- pl.create_tensor in a kernel: a Vec scratch buffer ----------------------------------

@pl.jit
def column_block_sums(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    # out = x[:, 0:64] + x[:, 64:128] + ... accumulated in an on-chip buffer filled with 1.5
    with pl.at(level=pl.Level.CORE_GROUP):
        s = pl.create_tensor([16, 64], dtype=pl.FP32, init_value=1.5)
        for j in pl.range(4):
            s = pl.add(s, pl.load(x, [0, j * 64], [16, 64]))
        out = pl.store(s, [0, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_create_tensor_in_kernel_with_init_value_is_a_filled_vec_tile(engine):
    x = rng.standard_normal((16, 256), dtype=np.float32)
    out = np.zeros((16, 64), np.float32)
    column_block_sums(x, out, config=cfg(engine))
    want = 1.5 + x.reshape(16, 4, 64).sum(axis=1)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


@pl.jit
def scratch_then_scale(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    # An uninitialised Vec buffer, filled by the loop's first iteration before it is read.
    with pl.at(level=pl.Level.CORE_GROUP):
        m = pl.create_tensor([16, 64], dtype=pl.FP32)
        for j in pl.range(4):
            t = pl.load(x, [0, j * 64], [16, 64])
            if j == 0:
                m = t
            else:
                m = pl.maximum(m, t)
        out = pl.store(pl.mul(m, 2.0), [0, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_create_tensor_in_kernel_uninitialised_vec_buffer(engine):
    x = rng.standard_normal((16, 256), dtype=np.float32)
    out = np.zeros((16, 64), np.float32)
    scratch_then_scale(x, out, config=cfg(engine))
    np.testing.assert_allclose(out, 2 * x.reshape(16, 4, 64).max(axis=1), rtol=1e-6)


@pl.jit
def swap_halves_through_a_buffer(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    # A Vec buffer assembled from row blocks (pl.assemble into a tile: TINSERT), then stored.
    with pl.at(level=pl.Level.CORE_GROUP):
        buf = pl.create_tensor([32, 64], dtype=pl.FP32)
        for i in pl.range(2):
            t = pl.load(x, [i * 16, 0], [16, 64])
            buf = pl.assemble(buf, pl.exp(t), [(1 - i) * 16, 0])
        out = pl.store(buf, [0, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_create_tensor_in_kernel_as_an_assembled_vec_buffer(engine):
    x = rng.standard_normal((32, 64), dtype=np.float32)
    out = np.zeros_like(x)
    swap_halves_through_a_buffer(x, out, config=cfg(engine))
    np.testing.assert_allclose(out, np.exp(np.concatenate([x[16:], x[:16]])), rtol=1e-5)


@pl.jit
def too_big_buffer(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        big = pl.create_tensor([512, 512], dtype=pl.FP32, init_value=0.0)
        out = pl.store(pl.add(big, pl.load(x, [0, 0], [512, 512])), [0, 0], out)
    return out


def test_create_tensor_in_kernel_that_does_not_fit_names_the_buffer():
    x = np.zeros((512, 512), np.float32)
    with pytest.raises(_core.PyptoError, match=r"(?s)test_kernel_tensors.py:\d+: the on-chip buffer 'big' \(\[512, 512\] "
                                               r"FP32, 1048576 bytes\) does not fit Vec \(UB\).*fix: make the buffer at "
                                               r"most 196608 bytes"):
        too_big_buffer(x, np.zeros_like(x))


@pl.jit
def two_scopes_one_name(x: pl.Tensor, w: pl.Tensor, s_out: pl.Out[pl.Tensor], c_out: pl.Out[pl.Tensor]):
    # `acc` is a filled Vec buffer in the first scope and the matmul accumulator in the second:
    # each pl.create_tensor's memory follows the uses in its own scope.
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.create_tensor([16, 32], dtype=pl.FP32, init_value=2.0)
        for j in pl.range(2):
            acc = pl.add(acc, pl.load(x, [0, j * 32], [16, 32]))
        s_out = pl.store(acc, [0, 0], s_out)
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.create_tensor([16, 32], dtype=pl.FP32)
        for k in pl.range(2):
            a = pl.load(x, [0, k * 32], [16, 32], target_memory=pl.Mem.Mat)
            b = pl.load(w, [k * 32, 0], [32, 32], target_memory=pl.Mem.Mat)
            if k == 0:
                acc = pl.matmul(a, b)
            else:
                acc = pl.matmul_acc(acc, a, b)
        c_out = pl.store(acc, [0, 0], c_out)
    return s_out, c_out


@pytest.mark.parametrize("engine", ENGINES)
def test_create_tensor_memory_follows_the_uses_in_its_own_scope(engine):
    x = rng.standard_normal((16, 64), dtype=np.float32)
    w = rng.standard_normal((64, 32), dtype=np.float32)
    s, c = np.zeros((16, 32), np.float32), np.zeros((16, 32), np.float32)
    two_scopes_one_name(x, w, s, c, config=cfg(engine))
    np.testing.assert_allclose(s, 2 + x[:, :32] + x[:, 32:], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(c, x @ w, rtol=1e-4, atol=1e-3)


def test_create_tensor_accumulator_with_init_value_is_refused():
    with pytest.raises(Exception, match=r"'acc' is the accumulator of a matmul here and so lives in Acc"):
        @pl.jit
        def f(x: pl.Tensor, w: pl.Tensor, out: pl.Out[pl.Tensor]):
            with pl.at(level=pl.Level.CORE_GROUP):
                acc = pl.create_tensor([16, 16], dtype=pl.FP32, init_value=0.0)
                for k in pl.range(2):
                    a = pl.load(x, [0, k * 16], [16, 16], target_memory=pl.Mem.Mat)
                    b = pl.load(w, [k * 16, 0], [16, 16], target_memory=pl.Mem.Mat)
                    acc = pl.matmul_acc(acc, a, b)
                out = pl.store(acc, [0, 0], out)
            return out

        f(np.zeros((16, 32), np.float32), np.zeros((32, 16), np.float32), np.zeros((16, 16), np.float32))


# --- pl.tile.assemble of an Acc tile into a Mat tile (TINSERT through the fixpipe) --------

def bf16_bits(f32):
    """fp32 -> bf16 bit patterns, rounding to nearest even (finite inputs)."""
    u = f32.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("dst_dtype", ["FP32", "FP16", "BF16"])
def test_tinsert_acc_into_mat_narrows_to_nearest_even(engine, dst_dtype):
    src = rng.standard_normal((16, 24)).astype(np.float32)
    src[0, :4] = [1 + 2.0**-11, 1 + 3 * 2.0**-11, 1 + 2.0**-8, 1 + 3 * 2.0**-8]  # fp16 / bf16 ties
    np_dt = {"FP32": np.float32, "FP16": np.float16, "BF16": np.uint16}[dst_dtype]
    dst = np.full((32, 48), 7, np_dt)
    want = dst.copy()
    part = {"FP32": src, "FP16": src.astype(np.float16), "BF16": bf16_bits(src)}[dst_dtype]
    want[5:21, 9:33] = part
    _core.isa_execute("TINSERT", [dst], [src, [5, 9]], dtypes=[dst_dtype, "FP32"], memories=["Mat", "Acc"],
                      engine=engine)
    np.testing.assert_array_equal(dst.view(np.uint8), want.view(np.uint8))


@pl.jit
def matmul_chain_through_l1(x: pl.Tensor, w: pl.Tensor, v: pl.Tensor, out: pl.Out[pl.Tensor]):
    # h = bf16(x @ w) written twice into one L1 tile (rows 16.. then rows 0..), then h @ v.
    with pl.at(level=pl.Level.CORE_GROUP):
        a = pl.load(x, [0, 0], [32, 64], target_memory=pl.Mem.Mat)
        b = pl.load(w, [0, 0], [64, 32], target_memory=pl.Mem.Mat)
        c = pl.matmul(a, b)
        h = pl.tile.create([48, 32], dtype=pl.BF16, target_memory=pl.Mem.Mat)
        h = pl.tile.assemble(h, c, [16, 0])
        h = pl.tile.assemble(h, c, [0, 0])
        d = pl.load(v, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        out = pl.store(pl.matmul(h, d), [0, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_assemble_acc_into_mat_feeds_the_next_matmul(engine):
    import torch

    g = torch.Generator().manual_seed(3)
    x, w, v = (torch.randn(s, generator=g).bfloat16() for s in [(32, 64), (64, 32), (32, 32)])
    out = torch.zeros(48, 32)
    matmul_chain_through_l1(x, w, v, out, config=cfg(engine))
    c = (x.float() @ w.float()).bfloat16().float()
    torch.testing.assert_close(out, torch.cat([c, c[16:]]) @ v.float(), rtol=1e-5, atol=1e-4)


def test_assemble_acc_into_mat_runs_on_the_fixpipe_and_the_native_fast_path():
    import re

    import torch

    args = [torch.zeros(32, 64).bfloat16(), torch.zeros(64, 32).bfloat16(), torch.zeros(32, 32).bfloat16(),
            torch.zeros(48, 32)]
    compiled = matmul_chain_through_l1.compile(*args)
    (kernel,) = [k for k in compiled.host_program.kernels if any(x.mnemonic == "TINSERT" for x in k.code)]
    pipes = _core.kernel_pipes(kernel)
    assert [p for x, p in zip(kernel.code, pipes) if x.mnemonic == "TINSERT"] == ["FIX", "FIX"]
    (source,) = [s for s in compiled.native_sources().values() if s]
    assert re.findall(r"/\* TINSERT \*/ (\{|FB)", source) == ["{", "{"]
    assert "pto_opt::convert(((pto_opt::bf16*)" in source


def test_assemble_acc_into_mat_refuses_other_conversions():
    with pytest.raises(Exception, match=r"'src' is FP32 but 'target' is INT8 \(an Acc tile enters a Mat tile in its own "
                                        r"dtype, or FP32 narrowed to FP16 / BF16\)"):
        @pl.jit
        def f(x: pl.Tensor, out: pl.Out[pl.Tensor]):
            with pl.at(level=pl.Level.CORE_GROUP):
                a = pl.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
                c = pl.matmul(a, a)
                h = pl.tile.assemble(pl.tile.create([16, 32], dtype=pl.INT8, target_memory=pl.Mem.Mat), c, [0, 0])
                out = pl.store(pl.matmul(h, h), [0, 0], out)
            return out

        f(np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32))


# --- tensor-level pl.matmul of a computed operand, kept on chip ------------------------------

@pl.jit
def exp_matmul(x: pl.Tensor, w: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.matmul(pl.exp(x), w)
    return out


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("mkn", [(64, 64, 64), (200, 1024, 96)])  # one block; K walked, ragged M edge
def test_tensor_matmul_of_a_computed_lhs(engine, mkn):
    m, k, n = mkn
    x = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    w = rng.standard_normal((k, n)).astype(np.float32)
    out = np.zeros((m, n), np.float32)
    exp_matmul(x, w, out, config=cfg(engine))
    np.testing.assert_allclose(out, np.exp(x) @ w, rtol=1e-4, atol=1e-3)


def test_tensor_matmul_of_a_computed_lhs_moves_vec_to_mat():
    from pypto import ir

    x, w = np.zeros((64, 128), np.float32), np.zeros((128, 64), np.float32)
    compiled = exp_matmul.compile(x, w, np.zeros((64, 64), np.float32))
    (text,) = [ir.print_program(p) for name, p in compiled.pass_results() if name.endswith("_after_LowerTensorOps")]
    assert "pl.tile.exp(" in text and "pl.tile.move(exp, pl.Mem.Mat)" in text
    assert "pl.tile.load(w, [" in text and "target_memory=pl.Mem.Mat" in text


@pl.jit
def cast_matmul(x: pl.Tensor, w: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.matmul(pl.cast(x, pl.BF16), pl.cast(w, pl.BF16), out_dtype=pl.FP32)
    return out


@pl.jit
def scaled_rhs_transposed(x: pl.Tensor, w: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.matmul(x, pl.mul(w, 2.0), b_trans=True)
    return out


@pl.jit
def relu_lhs_transposed(x: pl.Tensor, w: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.matmul(pl.relu(x), w, a_trans=True)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_tensor_matmul_of_casts_and_transposed_computed_operands(engine):
    import torch

    x = rng.uniform(-1, 1, (64, 128)).astype(np.float32)
    w = rng.standard_normal((128, 96)).astype(np.float32)
    out = np.zeros((64, 96), np.float32)
    cast_matmul(x, w, out, config=cfg(engine))
    bf = lambda a: torch.from_numpy(a).bfloat16().float().numpy()  # noqa: E731
    np.testing.assert_allclose(out, bf(x) @ bf(w), rtol=1e-4, atol=1e-3)
    wt = rng.standard_normal((96, 128)).astype(np.float32)
    scaled_rhs_transposed(x, wt, out, config=cfg(engine))
    np.testing.assert_allclose(out, x @ (2 * wt).T, rtol=1e-4, atol=1e-3)
    xt = rng.uniform(-1, 1, (128, 64)).astype(np.float32)
    relu_lhs_transposed(xt, w, out, config=cfg(engine))
    np.testing.assert_allclose(out, np.maximum(xt, 0).T @ w, rtol=1e-4, atol=1e-3)


def test_tensor_matmul_of_a_computed_lhs_with_k_not_whole_vec_rows_is_refused():
    x, w = np.zeros((16, 20), np.float32), np.zeros((20, 16), np.float32)
    with pytest.raises(_core.PyptoError, match=r"computed operand is made in Vec in blocks of 20 K columns, which are "
                                               r"not whole 32-byte rows(?s:.*)fix: make K a multiple of 8"):
        exp_matmul(x, w, np.zeros((16, 16), np.float32))


@pl.jit
def matmul_acc_of_computed(c0: pl.Tensor, x: pl.Tensor, w: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.matmul_acc(c0, pl.exp(x), pl.add(w, w))
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_tensor_matmul_acc_of_computed_operands(engine):
    c0 = rng.standard_normal((64, 48)).astype(np.float32)
    x = rng.uniform(-1, 1, (64, 256)).astype(np.float32)
    w = rng.standard_normal((256, 48)).astype(np.float32)
    out = np.zeros((64, 48), np.float32)
    matmul_acc_of_computed(c0, x, w, out, config=cfg(engine))
    np.testing.assert_allclose(out, c0 + np.exp(x) @ (2 * w), rtol=1e-4, atol=1e-3)


@pl.jit
def add_or_sub_per_block(a: pl.Tensor, flag: pl.Scalar[pl.INDEX], c: pl.Out[pl.Tensor]):
    # Both arms read the carried tile before computing its next value: updated in place, no copy.
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.full([16, 32], dtype=pl.FP32, value=1.0)
        for i in pl.range(3):
            t = pl.load(a, [0, i * 32], [16, 32])
            if flag > i:
                acc = pl.add(acc, t)
            else:
                acc = pl.sub(pl.mul(acc, 2.0), t)
        c = pl.store(acc, [0, 0], c)
    return c


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("flag", [0, 2])
def test_vec_carry_updated_in_each_arm_in_place(engine, flag):
    a = rng.standard_normal((16, 96), dtype=np.float32)
    out = np.zeros((16, 32), np.float32)
    add_or_sub_per_block(a, flag, out, config=cfg(engine))
    want = np.ones((16, 32), np.float32)
    for i in range(3):
        t = a[:, i * 32:(i + 1) * 32]
        want = want + t if flag > i else want * 2 - t
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)

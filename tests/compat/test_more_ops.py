"""The remaining small PyPTO spellings (issue 13): pl.write's dst= / offset= keywords,
pl.fillpad_expand's value=, pl.create_l1 (an L1 / Mat tile), the tensor forms of the index
reductions (row/col argmax/argmin) and of matmul_acc, and the pl.parser / pl.optimizations
namespaces. Each runs on both engines against numpy, plus the printer round trip."""

import numpy as np
import pypto.language as pl
import pytest
from pypto import _core
from pypto.runtime import RunConfig, _arg_specs

from .roundtrip import round_trip

ENGINES = ["native", "sim"]
rng = np.random.default_rng(2024)
Mat, Left, Right = pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right


def run(kernel, *args, engine):
    kernel(*args, config=RunConfig(engine=engine))




# ---- pl.write(dst=, offset=, value=), pl.fillpad_expand(value=) --------------------------------

@pl.jit
def k_write_kw(x: pl.Tensor, out: pl.Out[pl.Tensor], big: pl.Out[pl.Tensor], s: pl.Tensor):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [8, 16], valid_shape=[5, 11])
        u = pl.load(x, [0, 0], [8, 16])
        u = pl.write(dst=u, offset=[2, 3], value=-7.0)          # the tile form by keyword
        pl.store(u, [0, 0], out)
        pl.write(dst=out, offset=[7, 15], value=pl.read(x, [0, 1]))  # the tensor form by keyword
        pl.store(pl.fillpad_expand(value=t, shape=[16, 32], pad_value=pl.PadValue.max), [0, 0], big)
    pl.write(dst=s, offset=[1, 2], value=9)                   # in orchestration: the host writes
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_write_and_fillpad_expand_keywords(engine):
    x = rng.uniform(-1, 1, size=(8, 16)).astype(np.float32)
    out, big, s = np.zeros((8, 16), np.float32), np.zeros((16, 32), np.float32), np.zeros((4, 4), np.int32)
    run(k_write_kw, x, out, big, s, engine=engine)
    want = x.copy()
    want[2, 3] = -7
    want[7, 15] = x[0, 1]
    np.testing.assert_array_equal(out, want)
    pad = np.full((16, 32), np.finfo(np.float32).max, np.float32)
    pad[:5, :11] = x[:5, :11]
    np.testing.assert_array_equal(big, pad)
    want_s = np.zeros((4, 4), np.int32)
    want_s[1, 2] = 9
    np.testing.assert_array_equal(s, want_s)
    text = round_trip(k_write_kw, x, out, big, s)
    assert "pl.tile.write(" in text and "pl.tensor.write(" in text and "pl.tile.fillpad_expand(" in text


# ---- pl.create_l1: an uninitialised Mat (L1) tile ----------------------------------------------

@pl.jit
def k_create_l1(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        l1 = pl.create_l1([16, 32], pl.FP32)                     # one L1 buffer holding a | b
        l1 = pl.tile.assemble(l1, pl.load(a, [0, 0], [16, 16], target_memory=Mat), [0, 0])
        l1 = pl.tile.assemble(l1, pl.load(b, [0, 0], [16, 16], target_memory=Mat), [0, 16])
        left = pl.tile.extract(l1, 0, 0, [16, 16], target_memory=Left)
        right = pl.tile.extract(l1, 0, 16, [16, 16], target_memory=Right)
        pl.store(pl.matmul(left, right), [0, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_create_l1_is_a_mat_tile(engine):
    a = rng.uniform(-1, 1, size=(16, 16)).astype(np.float32)
    b = rng.uniform(-1, 1, size=(16, 16)).astype(np.float32)
    out = np.zeros((16, 16), np.float32)
    run(k_create_l1, a, b, out, engine=engine)
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4)
    text = round_trip(k_create_l1, a, b, out)
    assert "pl.tile.create_l1([16, 32], dtype=pl.FP32)" in text
    assert "pl.Tile[[16, 32], pl.FP32, pl.Mem.Mat]" in text


@pl.jit
def k_l1_spellings(out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        m1 = pl.tile.create_l1([32, 16], pl.BF16, transpose=True)
        m2 = pl.tensor.create_l1(shape=[16, 16], dtype=pl.FP16)
        pl.store(pl.full([32, 16], pl.FP32, 1.0), [0, 0], out)
    return out


def test_create_l1_spellings():
    out = np.zeros((32, 16), np.float32)
    text = round_trip(k_l1_spellings, out)
    assert "pl.tile.create_l1([32, 16], dtype=pl.BF16, transpose=True)" in text, text
    assert "pl.Tile[[16, 16], pl.FP16, pl.Mem.Mat]" in text, text


# ---- index reductions on whole tensors ----------------------------------------------------------

@pl.jit
def k_tensor_argreduce(x: pl.Tensor, y: pl.Tensor, rmax: pl.Out[pl.Tensor], rmin: pl.Out[pl.Tensor],
                       cmax: pl.Out[pl.Tensor], cmin: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        rmax[:] = pl.tensor.row_argmax(x)
        rmin[:] = pl.tensor.row_argmin(input=x)
        cmax[:] = pl.tensor.col_argmax(y)
        cmin[:] = pl.tensor.col_argmin(pl.tensor.neg(y))       # of a computed tensor
    return rmax


@pytest.mark.parametrize("engine", ENGINES)
def test_tensor_index_reductions(engine):
    x = rng.permutation(200 * 100).reshape(200, 100).astype(np.float32)  # distinct: no ties; ragged rows
    y = rng.permutation(120 * 96).reshape(120, 96).astype(np.float32)
    rmax, rmin = np.zeros((200, 1), np.int32), np.zeros((200, 1), np.int32)
    cmax, cmin = np.zeros((1, 96), np.int32), np.zeros((1, 96), np.int32)
    run(k_tensor_argreduce, x, y, rmax, rmin, cmax, cmin, engine=engine)
    np.testing.assert_array_equal(rmax[:, 0], x.argmax(axis=1))
    np.testing.assert_array_equal(rmin[:, 0], x.argmin(axis=1))
    np.testing.assert_array_equal(cmax[0], y.argmax(axis=0))
    np.testing.assert_array_equal(cmin[0], (-y).argmin(axis=0))
    text = round_trip(k_tensor_argreduce, x, y, rmax, rmin, cmax, cmin)
    assert "pl.tensor.row_argmax(" in text and "pl.tensor.col_argmin(" in text


def test_tensor_index_reduction_needs_whole_rows():
    @pl.jit
    def wide(x: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:] = pl.tensor.row_argmax(x)
        return out

    with pytest.raises(_core.PyptoError, match=r"index reduction needs each whole row in one block[\s\S]*fix:"):
        wide(np.zeros((8, 32768), np.float32), np.zeros((8, 1), np.int32))


# ---- matmul_acc on whole tensors ----------------------------------------------------------------

@pl.jit
def k_tensor_matmul_acc(acc: pl.Tensor, a: pl.Tensor, b: pl.Tensor, bt: pl.Tensor, o1: pl.Out[pl.Tensor],
                        o2: pl.Out[pl.Tensor], o3: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        o1[:] = pl.tensor.matmul_acc(acc, a, b)
    with pl.at(level=pl.Level.CORE_GROUP):
        o2[:] = pl.tensor.matmul_acc(acc, a, bt, b_trans=True, init_cond=False)
    with pl.at(level=pl.Level.CORE_GROUP):
        o3[:] = pl.tensor.matmul_acc(acc, a, b, init_cond=True)   # the fresh product
    return o1


@pytest.mark.parametrize("engine", ENGINES)
def test_tensor_matmul_acc(engine):
    acc = rng.standard_normal((64, 48)).astype(np.float32)
    a = rng.standard_normal((64, 512)).astype(np.float32)  # K walked in blocks
    b = rng.standard_normal((512, 48)).astype(np.float32)
    outs = [np.zeros((64, 48), np.float32) for _ in range(3)]
    run(k_tensor_matmul_acc, acc, a, b, np.ascontiguousarray(b.T), *outs, engine=engine)
    np.testing.assert_allclose(outs[0], acc + a @ b, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(outs[1], acc + a @ b, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(outs[2], a @ b, rtol=1e-4, atol=1e-3)
    text = round_trip(k_tensor_matmul_acc, acc, a, b, np.ascontiguousarray(b.T), *outs)
    assert "pl.tensor.matmul_acc(" in text


def test_tensor_matmul_acc_errors():
    @pl.jit
    def shape(acc: pl.Tensor, a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:] = pl.tensor.matmul_acc(acc, a, b)
        return out

    with pytest.raises(_core.PyptoError, match=r"'acc' is .* but lhs @ rhs is[\s\S]*fix:"):
        shape(np.zeros((32, 16), np.float32), np.zeros((32, 64), np.float32), np.zeros((64, 32), np.float32),
              np.zeros((32, 16), np.float32))

    @pl.jit
    def runtime_init(acc: pl.Tensor, a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor], k: pl.Scalar[pl.INDEX]):
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:] = pl.tensor.matmul_acc(acc, a, b, init_cond=(k == 0))
        return out

    with pytest.raises(_core.PyptoError, match=r"init_cond must be a literal[\s\S]*fix:"):
        runtime_init(np.zeros((32, 32), np.float32), np.zeros((32, 64), np.float32), np.zeros((64, 32), np.float32),
                     np.zeros((32, 32), np.float32), 0)


# ---- pl.parser, pl.optimizations ---------------------------------------------------------------

def test_parser_namespace_is_the_parser():
    assert pl.parser.parse is pl.parse and pl.parser.parse_program is pl.parse_program
    assert pl.parser.loads is pl.loads and pl.parser.loads_program is pl.loads_program
    assert pl.parser.ParseError is pl.ParseError
    assert issubclass(pl.parser.SSAViolationError, pl.parser.ParseError)
    prog = k_create_l1.parse(_arg_specs(k_create_l1, tuple(np.zeros((16, 16), np.float32) for _ in range(3))))
    text = _core.ir.print_program(prog)
    assert _core.ir.structural_equal(pl.parser.parse(text), prog)
    with pytest.raises(pl.parser.ParseError, match=r"fix:"):
        pl.parser.parse("@pl.program\nclass P:\n    @pl.function\n    def f(self, x: pl.Tensor[[4], pl.FP32]):\n"
                        "        return undefined_name\n")


def test_optimizations_namespace_is_the_hints():
    assert pl.optimizations.split is pl.split and pl.optimizations.cross_core_slot is pl.cross_core_slot
    assert pl.optimizations.SplitMode is pl.SplitMode
    assert pl.optimizations.split(pl.optimizations.SplitMode.UP_DOWN).mode == pl.SplitMode.UP_DOWN
    assert pl.optimizations.cross_core_slot(slot_num=4).slot_num == 4


# ---- pl.get_subblock_idx(): the AIV lane of a mixed task's part --------------------------------

SM, SK, SN = 64, 64, 64
SH = SM // 2


@pl.program
class SubblockRows:
    """relu(a @ b + bias) with the rows split over the two AIV lanes: one AIV function, called
    twice, finds its half from pl.get_subblock_idx(); the AIC part records its own (0)."""

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[SM, SK], pl.FP32], b: pl.Tensor[[SK, SN], pl.FP32]):
        tb = pl.move(pl.load(b, [0, 0], [SK, SN], target_memory=Mat), target_memory=Right)
        top = pl.matmul(pl.move(pl.load(a, [0, 0], [SH, SK], target_memory=Mat), target_memory=Left), tb)
        pl.tpush_to_aiv(top, aiv=0)
        bottom = pl.matmul(pl.move(pl.load(a, [SH, 0], [SH, SK], target_memory=Mat), target_memory=Left), tb)
        pl.tpush_to_aiv(bottom, aiv=1)

    @pl.function(type=pl.FunctionType.AIV)
    def epilogue(self, bias: pl.Tensor[[SM, SN], pl.FP32], out: pl.Out[pl.Tensor[[SM, SN], pl.FP32]],
                 lanes: pl.Out[pl.Tensor[[2, 8], pl.INT32]]):
        lane = pl.tile.get_subblock_idx()
        row0 = lane * SH
        t = pl.tpop_from_aic([SH, SN], pl.FP32)
        r = pl.relu(pl.add(t, pl.load(bias, [row0, 0], [SH, SN])))
        pl.tfree_to_aic(t)
        out = pl.store(r, [row0, 0], out)
        pl.write(lanes, [lane, 0], lane + 10)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, a: pl.Tensor[[SM, SK], pl.FP32], b: pl.Tensor[[SK, SN], pl.FP32],
              bias: pl.Tensor[[SM, SN], pl.FP32], out: pl.Out[pl.Tensor[[SM, SN], pl.FP32]],
              lanes: pl.Out[pl.Tensor[[2, 8], pl.INT32]]):
        self.cube(a, b)
        out = self.epilogue(bias, out, lanes)
        out = self.epilogue(bias, out, lanes)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[SM, SK], pl.FP32], b: pl.Tensor[[SK, SN], pl.FP32],
             bias: pl.Tensor[[SM, SN], pl.FP32], out: pl.Out[pl.Tensor[[SM, SN], pl.FP32]],
             lanes: pl.Out[pl.Tensor[[2, 8], pl.INT32]]):
        out = self.fused(a, b, bias, out, lanes)
        return out


@pytest.mark.parametrize("engine", ENGINES)
def test_subblock_idx_is_the_aiv_lane(engine):
    from pypto.runtime import run as run_program
    a, b = rng.standard_normal((SM, SK)).astype(np.float32), rng.standard_normal((SK, SN)).astype(np.float32)
    bias, out = rng.standard_normal((SM, SN)).astype(np.float32), np.zeros((SM, SN), np.float32)
    lanes = np.zeros((2, 8), np.int32)
    run_program(SubblockRows, a, b, bias, out, lanes, config=RunConfig(engine=engine))
    np.testing.assert_allclose(out, np.maximum(a @ b + bias, 0), rtol=1e-5, atol=1e-4)
    assert lanes[:, 0].tolist() == [10, 11]  # lane 0 wrote row 0, lane 1 row 1
    text = _core.ir.print_program(SubblockRows)
    assert "pl.tile.get_subblock_idx()" in text
    assert _core.ir.structural_equal(pl.parse(text), SubblockRows)


@pl.jit
def k_subblock_plain(out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        i = pl.get_subblock_idx()
        j = pl.tensor.get_subblock_idx()
        pl.store(pl.full([8, 8], pl.INT32, i + j + 3), [0, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_subblock_idx_outside_a_mixed_task_is_zero(engine):
    out = np.full((8, 8), -1, np.int32)
    run(k_subblock_plain, out, engine=engine)
    assert (out == 3).all()
    assert "pl.tile.get_subblock_idx()" in round_trip(k_subblock_plain, out)


def test_subblock_idx_in_orchestration_is_refused():
    @pl.jit
    def orch(out: pl.Out[pl.Tensor]):
        pl.write(out, [0, 0], pl.get_subblock_idx())
        return out

    with pytest.raises(_core.PyptoError, match=r"get_subblock_idx\(\) is read outside kernel code[\s\S]*fix:"):
        orch(np.zeros((2, 2), np.int32))


@pl.jit
def k_subblock_spmd(out: pl.Out[pl.Tensor]):
    with pl.spmd(4):
        b = pl.get_block_idx()
        pl.store(pl.full([8, 8], pl.INT32, b * 10 + pl.get_subblock_idx()), [b * 8, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_subblock_idx_beside_the_block_index(engine):
    out = np.full((32, 8), -1, np.int32)
    run(k_subblock_spmd, out, engine=engine)
    np.testing.assert_array_equal(out, np.repeat(np.arange(4, dtype=np.int32) * 10, 8)[:, None].repeat(8, axis=1))
    round_trip(k_subblock_spmd, out)


# ---- pl.tile.reinterpret_view: the same bytes as another dtype ---------------------------------

@pl.jit
def k_reinterpret(x: pl.Tensor, bits: pl.Out[pl.Tensor], halves: pl.Out[pl.Tensor], back: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [8, 16])
        u = pl.tile.reinterpret_view(t, pl.INT32)                       # [8, 16] FP32 -> [8, 16] INT32
        pl.store(u, [0, 0], bits)
        h = pl.tile.reinterpret_view(data=t, dtype=pl.INT16)             # -> [8, 32] INT16
        pl.store(h, [0, 0], halves)
        f = pl.tile.reinterpret_view(pl.tile.ands(u, 0x7FFFFFFF), pl.FP32, shape=[16, 8])  # |x| via the bits
        pl.store(f, [0, 0], back)
    return bits


@pytest.mark.parametrize("engine", ENGINES)
def test_tile_reinterpret_view(engine):
    x = rng.standard_normal((8, 16)).astype(np.float32)
    bits, halves, back = np.zeros((8, 16), np.int32), np.zeros((8, 32), np.int16), np.zeros((16, 8), np.float32)
    run(k_reinterpret, x, bits, halves, back, engine=engine)
    np.testing.assert_array_equal(bits, x.view(np.int32))
    np.testing.assert_array_equal(halves, x.view(np.int16))
    np.testing.assert_array_equal(back, np.abs(x).reshape(16, 8))
    text = round_trip(k_reinterpret, x, bits, halves, back)
    assert "pl.tile.reinterpret_view(t, pl.INT32)" in text and "shape=[16, 8]" in text


def test_tile_reinterpret_view_errors():
    @pl.jit
    def same(x: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.tile.reinterpret_view(pl.load(x, [0, 0], [8, 16]), pl.FP32), [0, 0], out)
        return out

    with pytest.raises(pl.ParseError, match=r"reinterpret_view to FP32, the tile's own dtype[\s\S]*fix:"):
        same(np.zeros((8, 16), np.float32), np.zeros((8, 16), np.float32))

    @pl.jit
    def size(x: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.tile.reinterpret_view(pl.load(x, [0, 0], [8, 16]), pl.INT32, shape=[8, 8]), [0, 0], out)
        return out

    with pytest.raises(pl.ParseError, match=r"is 256 bytes, but the tile is 512[\s\S]*fix:"):
        size(np.zeros((8, 16), np.float32), np.zeros((8, 8), np.int32))


# ---- pl.tile.batch_matmul / batch_matmul_acc: tiles are 2-D, a batch of one ---------------------

@pl.jit
def k_tile_bmm(a: pl.Tensor, b: pl.Tensor, c: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        left = pl.move(pl.load(a, [0, 0], [16, 32], target_memory=Mat), target_memory=Left)
        right = pl.move(pl.load(b, [0, 0], [32, 16], target_memory=Mat), target_memory=Right)
        left2 = pl.move(pl.load(c, [0, 0], [16, 32], target_memory=Mat), target_memory=Left)
        acc = pl.tile.batch_matmul(left, right)
        acc = pl.tile.batch_matmul_acc(acc, left2, right)
        pl.store(acc, [0, 0], out)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_tile_batch_matmul_is_the_2d_matmul(engine):
    a, c = (rng.standard_normal((16, 32)).astype(np.float32) for _ in range(2))
    b = rng.standard_normal((32, 16)).astype(np.float32)
    out = np.zeros((16, 16), np.float32)
    run(k_tile_bmm, a, b, c, out, engine=engine)
    np.testing.assert_allclose(out, a @ b + c @ b, rtol=1e-4, atol=1e-4)
    text = round_trip(k_tile_bmm, a, b, c, out)
    assert "pl.tile.matmul(" in text and "pl.tile.matmul_acc(" in text


# ---- the PyTorch spelling (pypto.debug.torch_codegen) computes the same --------------------------

def _torch_cases():  # the kernels are defined below this function; it runs at test time
    f32 = np.float32
    x8 = rng.uniform(-1, 1, size=(8, 16)).astype(f32)
    return {
        "write_kw": (k_write_kw, [x8, np.zeros((8, 16), f32), np.zeros((16, 32), f32), np.zeros((4, 4), np.int32)]),
        "create_l1": (k_create_l1, [rng.uniform(-1, 1, size=(16, 16)).astype(f32) for _ in range(2)] +
                      [np.zeros((16, 16), f32)]),
        "reinterpret": (k_reinterpret, [x8, np.zeros((8, 16), np.int32), np.zeros((8, 32), np.int16),
                                        np.zeros((16, 8), f32)]),
        "tile_bmm": (k_tile_bmm, [rng.standard_normal((16, 32)).astype(f32), rng.standard_normal((32, 16)).astype(f32),
                                  rng.standard_normal((16, 32)).astype(f32), np.zeros((16, 16), f32)]),
        "subblock": (k_subblock_plain, [np.zeros((8, 8), np.int32)]),
        "random": (k_tensor_random, [np.zeros((1800, 64), np.uint32), np.zeros((64, 32), f32), 0xFFFFFF00]),
        "concat": (k_tensor_concat, [rng.uniform(-1, 1, size=(997, 64)).astype(f32),
                                     rng.uniform(-1, 1, size=(997, 32)).astype(f32),
                                     np.zeros((997, 96), f32), np.zeros((997, 96), f32)]),
        "matmul_acc": (k_tensor_matmul_acc, [rng.standard_normal((64, 48)).astype(f32),
                                             rng.standard_normal((64, 512)).astype(f32), b512 := rng.standard_normal(
                                                 (512, 48)).astype(f32), np.ascontiguousarray(b512.T)] +
                       [np.zeros((64, 48), f32) for _ in range(3)]),
        "argreduce": (k_tensor_argreduce, [rng.permutation(200 * 100).reshape(200, 100).astype(f32),
                                           rng.permutation(120 * 96).reshape(120, 96).astype(f32),
                                           np.zeros((200, 1), np.int32), np.zeros((200, 1), np.int32),
                                           np.zeros((1, 96), np.int32), np.zeros((1, 96), np.int32)]),
    }


@pytest.mark.parametrize("case", ["write_kw", "create_l1", "reinterpret", "tile_bmm", "subblock", "argreduce",
                                  "matmul_acc", "random", "concat"])
def test_torch_script_computes_the_same(case):
    torch = pytest.importorskip("torch")
    import pypto.debug as dbg

    kernel, args = _torch_cases()[case]
    namespace = {}
    exec(compile(dbg.torch_codegen(kernel, *args), f"<torch script of {case}>", "exec"), namespace)
    theirs = [torch.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a for a in args]
    namespace["ENTRY"](*theirs)
    ours = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    kernel(*ours, config=RunConfig(engine="sim"))
    for o, t in zip(ours, theirs):
        if isinstance(o, np.ndarray):
            tol = 1e-3 if case == "matmul_acc" else 1e-5  # K = 512 summed in another order
            np.testing.assert_allclose(t.numpy().astype(np.float64), o.astype(np.float64), rtol=tol, atol=tol)


# ---- pl.tensor.random: Philox numbered over the whole tensor -------------------------------------

@pl.jit
def k_tensor_random(u: pl.Out[pl.Tensor], f: pl.Out[pl.Tensor], c0: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        u[:] = pl.tensor.random(5, 6, c0, 0xFFFFFFFF, 7, 0, [1800, 64])
        f[:] = pl.tensor.adds(pl.tensor.random(1, 2, 3, 4, 5, 6, shape=[64, 32], dtype=pl.FP32, rounds=7), 1.0)
    return u


@pytest.mark.parametrize("engine", ENGINES)
def test_tensor_random_is_the_whole_tensor_philox(engine):
    from .test_new_ops import philox_tile
    u, f = np.zeros((1800, 64), np.uint32), np.zeros((64, 32), np.float32)
    run(k_tensor_random, u, f, 0xFFFFFF00, engine=engine)  # blocks past the first carry into counter1, counter2
    np.testing.assert_array_equal(u, philox_tile(1800, 64, (5, 6), (0xFFFFFF00, 0xFFFFFFFF, 7, 0)))
    words = philox_tile(64, 32, (1, 2), (3, 4, 5, 6), rounds=7)
    np.testing.assert_array_equal(f, ((words >> 8).astype(np.float64) / 2.0**24 + 1.0).astype(np.float32))
    assert "pl.tensor.random(" in round_trip(k_tensor_random, u, f, 0xFFFFFF00)


def test_tensor_random_needs_whole_rows():
    @pl.jit
    def wide(out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:] = pl.tensor.random(1, 2, 3, 4, 5, 6, [8, 1024])
        return out

    with pytest.raises(_core.PyptoError, match=r"numbers the whole tensor in row-major order[\s\S]*fix:"):
        wide(np.zeros((8, 1024), np.uint32))


# ---- pl.tensor.concat: [M, A] ++ [M, B] on whole tensors ----------------------------------------

@pl.jit
def k_tensor_concat(a: pl.Tensor, b: pl.Tensor, o1: pl.Out[pl.Tensor], o2: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        o1[:] = pl.tensor.concat(a, b)
        o2[:] = pl.tensor.concat(src0=pl.tensor.exp(b), src1=a)    # a computed operand, PyPTO's keywords
    return o1


@pytest.mark.parametrize("engine", ENGINES)
def test_tensor_concat(engine):
    a = rng.uniform(-1, 1, size=(997, 64)).astype(np.float32)  # several row blocks, a ragged last one
    b = rng.uniform(-1, 1, size=(997, 32)).astype(np.float32)
    o1, o2 = np.zeros((997, 96), np.float32), np.zeros((997, 96), np.float32)
    run(k_tensor_concat, a, b, o1, o2, engine=engine)
    np.testing.assert_array_equal(o1, np.concatenate([a, b], axis=1))
    np.testing.assert_allclose(o2, np.concatenate([np.exp(b), a], axis=1), rtol=1e-6, atol=1e-6)
    assert "pl.tensor.concat(" in round_trip(k_tensor_concat, a, b, o1, o2)


def test_tensor_concat_needs_aligned_rows():
    @pl.jit
    def odd(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:] = pl.tensor.concat(a, b)
        return out

    with pytest.raises(_core.PyptoError, match=r"pl.tensor.concat joins whole rows[\s\S]*fix:"):
        odd(np.zeros((8, 12), np.float32), np.zeros((8, 20), np.float32), np.zeros((8, 32), np.float32))


# ---- pl.tensor.fillpad: every tensor element is valid, so the values stay ------------------------

@pl.jit
def k_tensor_fillpad(a: pl.Tensor, o1: pl.Out[pl.Tensor], o2: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        o1[:] = pl.tensor.fillpad(a, pl.PadValue.max)
        o2[:] = pl.tensor.row_max(pl.fillpad(pl.tensor.neg(a), pad_value=pl.PadValue.min))
    return o1


@pytest.mark.parametrize("engine", ENGINES)
def test_tensor_fillpad_keeps_the_values(engine):
    a = rng.uniform(-1, 1, size=(997, 40)).astype(np.float32)
    o1, o2 = np.zeros((997, 40), np.float32), np.zeros((997, 1), np.float32)
    run(k_tensor_fillpad, a, o1, o2, engine=engine)
    np.testing.assert_array_equal(o1, a)
    np.testing.assert_array_equal(o2[:, 0], (-a).max(axis=1))
    text = round_trip(k_tensor_fillpad, a, o1, o2)
    assert "pl.tensor.fillpad(a, pad_value=pl.PadValue.max)" in text

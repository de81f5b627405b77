"""SplitAiv: a kernel with a pl.split_aiv region becomes a Group of its AIC part (cube work, a
push per shard, a pop per gather, frees at the end) and its AIV part called per lane."""

from pass_text import check_pass


def test_left_right_shard_and_gather():
    check_pass("SplitAiv", """
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a: pl.Tensor[[16, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
            acc: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(pl.tile.move(pl.tile.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Mat), pl.Mem.Left), pl.tile.move(pl.tile.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat), pl.Mem.Right), out_dtype=pl.FP32, a_trans=False, b_trans=False)
            for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT):
                t: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.aiv_shard(acc, split=2)
                r: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.relu(t)
                g: pl.Tile[[16, 64], pl.FP32, pl.Mem.Mat] = pl.tile.aic_gather(r, split=2)
            acc_1: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(pl.tile.move(g, pl.Mem.Left), pl.tile.move(pl.tile.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat), pl.Mem.Right), out_dtype=pl.FP32, a_trans=False, b_trans=False)
            out_1: pl.Tensor[[16, 64], pl.FP32] = pl.tile.store(acc_1, [0, 0], out)
            return out_1
""", """
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIC)
        def kernel_aic(self, a: pl.Tensor[[16, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
            acc: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(pl.tile.move(pl.tile.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Mat), pl.Mem.Left), pl.tile.move(pl.tile.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat), pl.Mem.Right), out_dtype=pl.FP32, a_trans=False, b_trans=False)
            pl.tile.tpush_to_aiv(acc, aiv=0, split=2)
            g: pl.Tile[[16, 64], pl.FP32, pl.Mem.Mat] = pl.tile.tpop_from_aiv([16, 64], dtype=pl.FP32, aiv=0, split=2)
            acc_1: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(pl.tile.move(g, pl.Mem.Left), pl.tile.move(pl.tile.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat), pl.Mem.Right), out_dtype=pl.FP32, a_trans=False, b_trans=False)
            out_1: pl.Tensor[[16, 64], pl.FP32] = pl.tile.store(acc_1, [0, 0], out)
            pl.tile.tfree_to_aiv(g, aiv=0, split=2)
            return out_1

        @pl.function(type=pl.FunctionType.AIV)
        def kernel_aiv(self, a: pl.Tensor[[16, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]], aiv_id: pl.Scalar[pl.INDEX]):
            t: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic([16, 32], dtype=pl.FP32, split=2)
            r: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.relu(t)
            pl.tile.tpush_to_aic(r, split=2)
            pl.tile.tfree_to_aic(t, split=2)

        @pl.function(type=pl.FunctionType.Group)
        def kernel(self, a: pl.Tensor[[16, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
            self.kernel_aic(a, b, out)
            self.kernel_aiv(a, b, out, 0)
            self.kernel_aiv(a, b, out, 1)
            return out
""")

"""View folding in LowerTensorOps (issue 14): tensor views inside a kernel become offsets of
the loads and stores of the tensor they view, so no view op reaches codegen. Before/After:
DSL text in, one pass, the expected text out (checked by hand)."""

from pass_text import check_pass


def test_slice_folds_into_block_loads():
    # exp(x[:, 128:256]): the block's load reads x at the view's offset; no view op is left.
    check_pass(
        "LowerTensorOps",
        """
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[64, 256], pl.FP32], out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
                v: pl.Tensor[[64, 128], pl.FP32] = pl.tensor.slice(x, [64, 128], [0, 128])
                out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tensor.assemble(out, pl.tensor.exp(v), [0, 0])
                return out_1
        """,
        """
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[64, 256], pl.FP32], out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
                v_tile: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 128], [64, 128], target_memory=pl.Mem.Vec)
                exp: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(v_tile)
                out_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(exp, [0, 0], out)
                return out_1
        """,
    )


def test_tile_ops_on_views_address_the_root():
    # A slice of a slice of x[i] (drop_dims) loaded and read at the composed offsets; a store
    # into a transposed view of out stores the transposed tile at the swapped offsets, and the
    # function returns the root's new version.
    check_pass(
        "LowerTensorOps",
        """
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[4, 64, 128], pl.FP32], i: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
                row: pl.Tensor[[64, 128], pl.FP32] = pl.tensor.slice(x, [1, 64, 128], [i, 0, 0], drop_dims=[0])
                win: pl.Tensor[[16, 128], pl.FP32] = pl.tensor.slice(row, [16, 128], [8, 0])
                t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(win, [0, 64], [16, 64])
                s: pl.Scalar[pl.FP32] = pl.tensor.read(win, [1, 2])
                u: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.adds(t, s)
                ot: pl.Tensor[[64, 128], pl.FP32] = pl.tensor.transpose(out, 0, 1)
                ot_1: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(u, [0, 32], ot)
                return out
        """,
        """
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[4, 64, 128], pl.FP32], i: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
                win_tile: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [i, 8, 64], [16, 64], target_memory=pl.Mem.Vec)
                s: pl.Scalar[pl.FP32] = pl.tensor.read(x, [i, 9, 2])
                u: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.adds(win_tile, s)
                stored_t: pl.Tile[[64, 16], pl.FP32, pl.Mem.Vec] = pl.tile.transpose(u, axis1=0, axis2=1)
                out_1: pl.Tensor[[128, 64], pl.FP32] = pl.tile.store(stored_t, [32, 0], out)
                return out_1
        """,
    )


def test_split_k_carry_becomes_a_whole_tile():
    # Split-K over slices: the carried tensor-level matmul is one Acc tile computed before the
    # loop, each step's slices load straight into Mat, and the loop carries the tile.
    check_pass(
        "LowerTensorOps",
        """
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[64, 256], pl.FP32], w: pl.Tensor[[256, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
                acc: pl.Tensor[[64, 64], pl.FP32] = pl.tensor.matmul(pl.tensor.slice(x, [64, 64], [0, 0]), pl.tensor.slice(w, [64, 64], [0, 0]))
                for k, (acc_1,) in pl.range(64, 256, 64, init_values=(acc,)):
                    acc_2: pl.Tensor[[64, 64], pl.FP32] = pl.tensor.matmul_acc(acc_1, pl.tensor.slice(x, [64, 64], [0, k]), pl.tensor.slice(w, [64, 64], [k, 0]))
                    acc_3 = pl.yield_(acc_2)
                out_1: pl.Tensor[[64, 64], pl.FP32] = pl.tile.store(pl.tile.load(acc_3, [0, 0], [64, 64]), [0, 0], out)
                return out_1
        """,
        """
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[64, 256], pl.FP32], w: pl.Tensor[[256, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
                x_view_tile: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(x, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
                w_view_tile: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(w, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
                lhs: pl.Tile[[64, 64], pl.FP32, pl.Mem.Left] = pl.tile.move(x_view_tile, pl.Mem.Left)
                rhs: pl.Tile[[64, 64], pl.FP32, pl.Mem.Right] = pl.tile.move(w_view_tile, pl.Mem.Right)
                acc: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(lhs, rhs, out_dtype=pl.FP32, a_trans=False, b_trans=False)
                for k, (acc_1,) in pl.range(64, 256, 64, init_values=(acc,)):
                    x_view_tile_1: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(x, [0, k], [64, 64], target_memory=pl.Mem.Mat)
                    w_view_tile_1: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(w, [k, 0], [64, 64], target_memory=pl.Mem.Mat)
                    matmul_acc: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(acc_1, x_view_tile_1, w_view_tile_1)
                    acc_3 = pl.yield_(matmul_acc)
                out_1: pl.Tensor[[64, 64], pl.FP32] = pl.tile.store(acc_3, [0, 0], out)
                return out_1
        """,
    )


def test_view_of_two_inner_dims_is_a_strided_box():
    # key_cache[blk, :, h, :] walks root dims 1 and 3: its loads carry dims=[1, 3] (rows step
    # dim 1, columns dim 3); its transpose loads in place with dims=[3, 1]; out[1, :, h, :] = v
    # (tensor.assemble with drop_dims) stores through that box of out.
    check_pass(
        "LowerTensorOps",
        """
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, kc: pl.Tensor[[6, 16, 2, 64], pl.FP32], blk: pl.Scalar[pl.INDEX], h: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[3, 16, 2, 64], pl.FP32]]) -> pl.Tensor[[3, 16, 2, 64], pl.FP32]:
                kv: pl.Tensor[[16, 64], pl.FP32] = pl.tensor.slice(kc, [1, 16, 1, 64], [blk, 0, h, 0], drop_dims=[0, 2])
                t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(kv, [0, 0], [16, 64])
                kt: pl.Tensor[[64, 16], pl.FP32] = pl.tensor.transpose(kv, 0, 1)
                u: pl.Tile[[32, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(kt, [32, 0], [32, 16])
                out_1: pl.Tensor[[3, 16, 2, 64], pl.FP32] = pl.tensor.assemble(out, pl.tile.exp(t), [1, 0, h, 0], drop_dims=[0, 2])
                return out_1
        """,
        """
        @pl.program
        class p:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, kc: pl.Tensor[[6, 16, 2, 64], pl.FP32], blk: pl.Scalar[pl.INDEX], h: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[3, 16, 2, 64], pl.FP32]]) -> pl.Tensor[[3, 16, 2, 64], pl.FP32]:
                kv_tile: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(kc, [blk, 0, h, 0], [16, 64], target_memory=pl.Mem.Vec, dims=[1, 3])
                kt_tile: pl.Tile[[32, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(kc, [blk, 0, h, 32], [32, 16], target_memory=pl.Mem.Vec, dims=[3, 1])
                out_1: pl.Tensor[[3, 16, 2, 64], pl.FP32] = pl.tile.store(pl.tile.exp(kv_tile), [1, 0, h, 0], out, dims=[1, 3])
                return out_1
        """,
    )

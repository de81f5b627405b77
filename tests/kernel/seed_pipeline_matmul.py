# The seed's pipelined matmul tile, verbatim except for the offsets the seed leaves implicit:
# block b of the launch (one pipeline iteration) computes rows b*tile_m .. of C = A @ B, with
# K == tile_k and N == tile_n so that each async_load / store moves one contiguous tile.
import pypto as pto


@pto.kernel
def matmul_tile(A, B, C, M, N, K, tile_m, tile_n, tile_k):
    # the offsets the seed leaves implicit
    offset_a = pto.get_block_id() * tile_m * K
    offset_b = 0
    offset_c = pto.get_block_id() * tile_m * N

    # 手动双缓冲流水线
    # 用 pto.pipline 声明流水线阶段
    with pto.pipeline() as pl:
        # 阶段 1：异步加载 A 的 tile
        with pl.stage("load_a"):
            A_tile = pto.alloc_local(tile_m * tile_k)
            pto.async_load(A_tile, A + offset_a, tile_m * tile_k * 4)

        # 阶段 2：异步加载 B 的 tile（和阶段 1 并行）
        with pl.stage("load_b", after="load_a"):
            B_tile = pto.alloc_local(tile_k * tile_n)
            pto.async_load(B_tile, B + offset_b, tile_k * tile_n * 4)

        # 阶段 3：等待加载完成，执行矩阵乘
        with pl.stage("compute", after="load_b"):
            pto.wait_all()  # 等 load_a 和 load_b 完成
            C_tile = pto.alloc_local(tile_m * tile_n)
            # MMA 指令：矩阵乘累加
            pto.mma(C_tile, A_tile, B_tile, tile_m, tile_n, tile_k)

        # 阶段 4：写回结果
        with pl.stage("store", after="compute"):
            pto.store(C + offset_c, C_tile, tile_m * tile_n * 4)

    # 流水线启动：load_a → load_b → compute → store 自动 overlap
    pl.run()

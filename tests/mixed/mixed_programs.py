"""Mixed AIC+AIV programs for the tests: Group functions whose AIC and AIV functions run at
once on one cluster and exchange tiles through the cross-core FIFOs."""

import pypto.language as pl

M, K, N = 64, 64, 64
FP32 = pl.FP32
Mat, Left, Right = pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right


@pl.program
class OneCubeOneVector:
    """out = relu(a @ b + bias): the AIC's Acc result goes straight to AIV 0's UB."""

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32]):
        ta = pl.load(a, [0, 0], [M, K], target_memory=Mat)
        tb = pl.load(b, [0, 0], [K, N], target_memory=Mat)
        acc = pl.matmul(pl.move(ta, target_memory=Left), pl.move(tb, target_memory=Right))
        pl.tpush_to_aiv(acc, aiv=0)

    @pl.function(type=pl.FunctionType.AIV)
    def epilogue(self, bias: pl.Tensor[[M, N], FP32], out: pl.Out[pl.Tensor[[M, N], FP32]]):
        t = pl.tpop_from_aic([M, N], FP32)
        r = pl.relu(pl.add(t, pl.load(bias, [0, 0], [M, N])))
        pl.tfree_to_aic(t)
        out = pl.store(r, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], bias: pl.Tensor[[M, N], FP32],
              out: pl.Out[pl.Tensor[[M, N], FP32]]):
        self.cube(a, b)
        out = self.epilogue(bias, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], bias: pl.Tensor[[M, N], FP32],
             out: pl.Out[pl.Tensor[[M, N], FP32]]):
        out = self.fused(a, b, bias, out)
        return out


H = M // 2


@pl.program
class OneCubeTwoVectors:
    """The same with the rows split: the top half goes to AIV 0, the bottom half to AIV 1;
    both run one AIV function, told their first row by a constant."""

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32]):
        tb = pl.move(pl.load(b, [0, 0], [K, N], target_memory=Mat), target_memory=Right)
        top = pl.matmul(pl.move(pl.load(a, [0, 0], [H, K], target_memory=Mat), target_memory=Left), tb)
        pl.tpush_to_aiv(top, aiv=0)
        bottom = pl.matmul(pl.move(pl.load(a, [H, 0], [H, K], target_memory=Mat), target_memory=Left), tb)
        pl.tpush_to_aiv(bottom, aiv=1)

    @pl.function(type=pl.FunctionType.AIV)
    def epilogue(self, bias: pl.Tensor[[M, N], FP32], out: pl.Out[pl.Tensor[[M, N], FP32]], row0: pl.Scalar[pl.INDEX]):
        t = pl.tpop_from_aic([H, N], FP32)
        r = pl.relu(pl.add(t, pl.load(bias, [row0, 0], [H, N])))
        pl.tfree_to_aic(t)
        out = pl.store(r, [row0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], bias: pl.Tensor[[M, N], FP32],
              out: pl.Out[pl.Tensor[[M, N], FP32]]):
        self.cube(a, b)
        out = self.epilogue(bias, out, 0)
        out = self.epilogue(bias, out, H)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], bias: pl.Tensor[[M, N], FP32],
             out: pl.Out[pl.Tensor[[M, N], FP32]]):
        out = self.fused(a, b, bias, out)
        return out


# A pipeline over row blocks (and K blocks inside each): 6 pushes through a FIFO of 2 slots,
# so the AIC waits for the AIV's TFREE before it can push the third block.
RB, KB, BR, BK = 6, 2, 16, 32
PM, PK = RB * BR, KB * BK


@pl.program
class BlockPipeline:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[PM, PK], FP32], b: pl.Tensor[[PK, N], FP32]):
        for i in pl.range(RB):
            ta = pl.load(a, [i * BR, 0], [BR, BK], target_memory=Mat)
            tb = pl.load(b, [0, 0], [BK, N], target_memory=Mat)
            acc = pl.matmul(pl.move(ta, target_memory=Left), pl.move(tb, target_memory=Right))
            for k in pl.range(1, KB):
                ta2 = pl.load(a, [i * BR, k * BK], [BR, BK], target_memory=Mat)
                tb2 = pl.load(b, [k * BK, 0], [BK, N], target_memory=Mat)
                acc = pl.matmul_acc(acc, pl.move(ta2, target_memory=Left), pl.move(tb2, target_memory=Right))
            pl.tpush_to_aiv(acc, aiv=0)

    @pl.function(type=pl.FunctionType.AIV)
    def epilogue(self, bias: pl.Tensor[[PM, N], FP32], out: pl.Out[pl.Tensor[[PM, N], FP32]]):
        for i in pl.range(RB):
            t = pl.tpop_from_aic([BR, N], FP32)
            r = pl.relu(pl.add(t, pl.load(bias, [i * BR, 0], [BR, N])))
            pl.tfree_to_aic(t)
            out = pl.store(r, [i * BR, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, a: pl.Tensor[[PM, PK], FP32], b: pl.Tensor[[PK, N], FP32], bias: pl.Tensor[[PM, N], FP32],
              out: pl.Out[pl.Tensor[[PM, N], FP32]]):
        self.cube(a, b)
        out = self.epilogue(bias, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[PM, PK], FP32], b: pl.Tensor[[PK, N], FP32], bias: pl.Tensor[[PM, N], FP32],
             out: pl.Out[pl.Tensor[[PM, N], FP32]]):
        out = self.fused(a, b, bias, out)
        return out


XM, XK, XN = 32, 64, 32


@pl.program
class VectorFeedsCube:
    """AIV -> AIC: the vector core computes relu(x) * 0.5, the cube multiplies it by w."""

    @pl.function(type=pl.FunctionType.AIV)
    def prologue(self, x: pl.Tensor[[XM, XK], FP32]):
        pl.tpush_to_aic(pl.mul(pl.relu(pl.load(x, [0, 0], [XM, XK])), 0.5))

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, w: pl.Tensor[[XK, XN], FP32], out: pl.Out[pl.Tensor[[XM, XN], FP32]]):
        p = pl.tpop_from_aiv([XM, XK], FP32, aiv=0)
        left = pl.move(p, target_memory=Left)
        pl.tfree_to_aiv(p, aiv=0)
        acc = pl.matmul(left, pl.move(pl.load(w, [0, 0], [XK, XN], target_memory=Mat), target_memory=Right))
        out = pl.store(acc, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, x: pl.Tensor[[XM, XK], FP32], w: pl.Tensor[[XK, XN], FP32], out: pl.Out[pl.Tensor[[XM, XN], FP32]]):
        self.prologue(x)
        out = self.cube(w, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[XM, XK], FP32], w: pl.Tensor[[XK, XN], FP32], out: pl.Out[pl.Tensor[[XM, XN], FP32]]):
        out = self.fused(x, w, out)
        return out


@pl.program
class RoundTrip:
    """Both directions in one part: AIV 0 sends relu(x) to the cube, gets x' @ w back, adds
    the bias and stores; then an AIV task reads the mixed task's output (a RAW edge)."""

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, x: pl.Tensor[[XM, XK], FP32], bias: pl.Tensor[[XM, XN], FP32], y: pl.Out[pl.Tensor[[XM, XN], FP32]]):
        pl.tpush_to_aic(pl.relu(pl.load(x, [0, 0], [XM, XK])))
        t = pl.tpop_from_aic([XM, XN], FP32)
        s = pl.add(t, pl.load(bias, [0, 0], [XM, XN]))
        pl.tfree_to_aic(t)
        y = pl.store(s, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, w: pl.Tensor[[XK, XN], FP32]):
        p = pl.tpop_from_aiv([XM, XK], FP32, aiv=0)
        left = pl.move(p, target_memory=Left)
        pl.tfree_to_aiv(p, aiv=0)
        acc = pl.matmul(left, pl.move(pl.load(w, [0, 0], [XK, XN], target_memory=Mat), target_memory=Right))
        pl.tpush_to_aiv(acc, aiv=0)

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, x: pl.Tensor[[XM, XK], FP32], w: pl.Tensor[[XK, XN], FP32], bias: pl.Tensor[[XM, XN], FP32],
              y: pl.Out[pl.Tensor[[XM, XN], FP32]]):
        self.cube(w)
        y = self.vec(x, bias, y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def double(self, y: pl.Tensor[[XM, XN], FP32], z: pl.Out[pl.Tensor[[XM, XN], FP32]]):
        z = pl.store(pl.mul(pl.load(y, [0, 0], [XM, XN]), 2.0), [0, 0], z)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[XM, XK], FP32], w: pl.Tensor[[XK, XN], FP32], bias: pl.Tensor[[XM, XN], FP32],
             z: pl.Out[pl.Tensor[[XM, XN], FP32]]):
        y = pl.create_tensor([XM, XN], dtype=FP32)
        y = self.fused(x, w, bias, y)
        z = self.double(y, z)
        return z


# Deadlocks: the AIV waits for a tile the AIC never pushes; and a consumer that never frees
# what it pops, so the producer's third push finds both slots taken.
@pl.program
class PopWithoutPush:
    @pl.function(type=pl.FunctionType.AIC)
    def idle(self, a: pl.Tensor[[16, 16], FP32], c: pl.Out[pl.Tensor[[16, 16], FP32]]):
        c = pl.store(pl.load(a, [0, 0], [16, 16], target_memory=Mat), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.AIV)
    def waiter(self, out: pl.Out[pl.Tensor[[16, 16], FP32]]):
        t = pl.tpop_from_aic([16, 16], FP32)
        out = pl.store(t, [0, 0], out)
        pl.tfree_to_aic(t)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, a: pl.Tensor[[16, 16], FP32], c: pl.Out[pl.Tensor[[16, 16], FP32]],
              out: pl.Out[pl.Tensor[[16, 16], FP32]]):
        self.idle(a, c)
        self.waiter(out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], FP32], c: pl.Out[pl.Tensor[[16, 16], FP32]],
             out: pl.Out[pl.Tensor[[16, 16], FP32]]):
        out = self.fused(a, c, out)
        return out


@pl.program
class PushWithoutFree:
    @pl.function(type=pl.FunctionType.AIC)
    def producer(self, a: pl.Tensor[[48, 16], FP32]):
        for i in pl.range(3):
            pl.tpush_to_aiv(pl.load(a, [i * 16, 0], [16, 16], target_memory=Mat), aiv=0)

    @pl.function(type=pl.FunctionType.AIV)
    def hoarder(self, out: pl.Out[pl.Tensor[[48, 16], FP32]]):
        for i in pl.range(3):
            t = pl.tpop_from_aic([16, 16], FP32)
            out = pl.store(t, [i * 16, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, a: pl.Tensor[[48, 16], FP32], out: pl.Out[pl.Tensor[[48, 16], FP32]]):
        self.producer(a)
        out = self.hoarder(out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[48, 16], FP32], out: pl.Out[pl.Tensor[[48, 16], FP32]]):
        out = self.fused(a, out)
        return out


# A fast producer and a slow consumer: the cube core only loads and pushes, the vector core
# does eight vector ops per tile (whose result is the tile itself, exactly), so the third
# push has to wait for the first TFREE.
SB, SR, SC = 4, 16, 64


@pl.program
class SlowConsumer:
    @pl.function(type=pl.FunctionType.AIC)
    def producer(self, a: pl.Tensor[[SB * SR, SC], FP32]):
        for i in pl.range(SB):
            pl.tpush_to_aiv(pl.load(a, [i * SR, 0], [SR, SC], target_memory=Mat), aiv=0)

    @pl.function(type=pl.FunctionType.AIV)
    def consumer(self, out: pl.Out[pl.Tensor[[SB * SR, SC], FP32]]):
        for i in pl.range(SB):
            t = pl.tpop_from_aic([SR, SC], FP32)
            r = pl.mul(pl.add(t, t), 0.5)
            r = pl.mul(pl.add(r, t), 0.5)
            r = pl.mul(pl.add(r, t), 0.5)
            r = pl.mul(pl.add(r, t), 0.5)
            pl.tfree_to_aic(t)
            out = pl.store(r, [i * SR, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, a: pl.Tensor[[SB * SR, SC], FP32], out: pl.Out[pl.Tensor[[SB * SR, SC], FP32]]):
        self.producer(a)
        out = self.consumer(out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[SB * SR, SC], FP32], out: pl.Out[pl.Tensor[[SB * SR, SC], FP32]]):
        out = self.fused(a, out)
        return out


# Two mixed tasks over disjoint row halves, told their half by a scalar parameter of the
# Group function; then a task that reads only the first half.
@pl.program
class GroupPerHalf:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], row0: pl.Scalar[pl.INDEX]):
        acc = pl.matmul(pl.move(pl.load(a, [row0, 0], [H, K], target_memory=Mat), target_memory=Left),
                        pl.move(pl.load(b, [0, 0], [K, N], target_memory=Mat), target_memory=Right))
        pl.tpush_to_aiv(acc, aiv=0)

    @pl.function(type=pl.FunctionType.AIV)
    def epilogue(self, bias: pl.Tensor[[M, N], FP32], out: pl.Out[pl.Tensor[[M, N], FP32]], row0: pl.Scalar[pl.INDEX]):
        t = pl.tpop_from_aic([H, N], FP32)
        r = pl.relu(pl.add(t, pl.load(bias, [row0, 0], [H, N])))
        pl.tfree_to_aic(t)
        out = pl.store(r, [row0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def half(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], bias: pl.Tensor[[M, N], FP32],
             out: pl.Out[pl.Tensor[[M, N], FP32]], row0: pl.Scalar[pl.INDEX]):
        self.cube(a, b, row0)
        out = self.epilogue(bias, out, row0)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def top_twice(self, out: pl.Tensor[[M, N], FP32], z: pl.Out[pl.Tensor[[H, N], FP32]]):
        z = pl.store(pl.mul(pl.load(out, [0, 0], [H, N]), 2.0), [0, 0], z)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], FP32], b: pl.Tensor[[K, N], FP32], bias: pl.Tensor[[M, N], FP32],
             out: pl.Out[pl.Tensor[[M, N], FP32]], z: pl.Out[pl.Tensor[[H, N], FP32]]):
        out = self.half(a, b, bias, out, 0)
        out = self.half(a, b, bias, out, H)
        z = self.top_twice(out, z)
        return z

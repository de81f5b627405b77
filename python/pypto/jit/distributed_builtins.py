"""The chip functions of host-level collectives (pld.tensor.allreduce(...) in a @pl.jit.host
body): the driver dispatches one to every rank (pypto.jit.distributed._Walker.host_collective);
each runs the kernel-level collective (pypto.language.distributed_collectives) on the windows."""

import pypto.language as pl
import pypto.language.distributed as pld


def _make_reduce(kind, op):
    if kind == "allreduce":
        @pl.jit
        def chip(target: pld.DistributedTensor, signal: pld.DistributedTensor):
            with pl.at(level=pl.Level.CORE_GROUP):
                pld.tensor.allreduce(target, signal, op=op)
            return target
    else:
        @pl.jit
        def chip(target: pld.DistributedTensor, signal: pld.DistributedTensor):
            with pl.at(level=pl.Level.CORE_GROUP):
                pld.tensor.reduce_scatter(target, signal, op=op)
            return target
    return chip


allreduce_Sum = _make_reduce("allreduce", pld.ReduceOp.Sum)
allreduce_Max = _make_reduce("allreduce", pld.ReduceOp.Max)
allreduce_Min = _make_reduce("allreduce", pld.ReduceOp.Min)
allreduce_Prod = _make_reduce("allreduce", pld.ReduceOp.Prod)
reduce_scatter_Sum = _make_reduce("reduce_scatter", pld.ReduceOp.Sum)
reduce_scatter_Max = _make_reduce("reduce_scatter", pld.ReduceOp.Max)
reduce_scatter_Min = _make_reduce("reduce_scatter", pld.ReduceOp.Min)
reduce_scatter_Prod = _make_reduce("reduce_scatter", pld.ReduceOp.Prod)


@pl.jit
def barrier(signal: pld.DistributedTensor):
    with pl.at(level=pl.Level.CORE_GROUP):
        pld.tensor.barrier(signal)
    return signal


@pl.jit
def broadcast(target: pld.DistributedTensor, signal: pld.DistributedTensor, root: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pld.tensor.broadcast(target, signal, root=root)
    return target


@pl.jit
def allgather(local: pld.DistributedTensor, target: pld.DistributedTensor, signal: pld.DistributedTensor):
    with pl.at(level=pl.Level.CORE_GROUP):
        pld.tensor.allgather(local, target, signal)
    return target

"""Converters of replicas and collectives.  A program runs as one partition of each replica:
variadic collectives are one xla collective per operand; reduce_scatter and
collective_broadcast, which XLA's operation set lacks, are made of all_reduce / all_gather.
"""
from __future__ import annotations

import numpy as np

from xlair.dialect.ir import ir
from xlair.dialect.types import S32, Shape

from ..builder import Builder, Op
from ..computation import Computation
from .attrs import Unsupported, _channel_handle, _groups, _result_shape
from .scope import converter


# -- replicas and collectives ----------------------------------------------------------------
def _cross_replica_channel(s, op, partition_groups: bool) -> int | None:
    """The channel_id of a collective, after checking that its process groups are replicas.

    StableHLO reads a positive channel handle as: all_reduce, all_gather, reduce_scatter
    group replicas with all their partitions (or flattened ids with use_global_device_ids),
    which with xlair's one partition per replica are the replicas; all_to_all,
    collective_permute and collective_broadcast (`partition_groups`) group partitions."""
    handle = _channel_handle(op)
    if handle is None or handle <= 0:
        return handle
    if partition_groups:
        raise Unsupported(f"with channel_handle {handle} (> 0) works across partitions; xlair runs one "
                          "partition per replica and has no cross-partition collectives")
    if s.importer.num_partitions > 1:
        raise Unsupported(f"with channel_handle {handle} groups replicas with their partitions; the module "
                          f"has mhlo.num_partitions = {s.importer.num_partitions} and xlair runs one partition "
                          "per replica")
    return handle


@converter("stablehlo.replica_id")
def _c_replica_id(s, op):
    return [s.emit("replica_id")]


@converter("stablehlo.partition_id")
def _c_partition_id(s, op):
    if s.importer.num_partitions > 1:
        raise Unsupported(f"the module has mhlo.num_partitions = {s.importer.num_partitions}; xlair runs one "
                          "partition per replica (XLA has no PartitionId in its operation set)")
    # one partition: every program runs as partition 0
    return [s.emit("constant", value=np.array(0, np.uint32))]


@converter("stablehlo.all_reduce")
def _c_all_reduce(s, op):
    comp = s.scalar_computation(op.regions[0], "stablehlo.all_reduce")
    channel = _cross_replica_channel(s, op, False)
    # a variadic all_reduce reduces each operand on its own: one xla.all_reduce per operand
    return [s.emit("all_reduce", operand=s.get(v), computation=comp, replica_groups=_groups(op),
                   channel_id=channel) for v in op.operands]


@converter("stablehlo.all_gather")
def _c_all_gather(s, op):
    channel = _cross_replica_channel(s, op, False)
    dim = ir.IntegerAttr(op.attributes["all_gather_dim"]).value
    outs = []
    for i, v in enumerate(op.operands):
        x, want = s.get(v), _result_shape(op, i)
        outs.append(s.emit("all_gather", operand=x, all_gather_dim=dim,
                           shard_count=_shard_count(op, x.shape, want, dim), replica_groups=_groups(op),
                           channel_id=channel))
    return outs


def _shard_count(op, small: Shape, big: Shape, dim: int) -> int:
    """How many shards make `big` of `small` along `dim` (the replica group size)."""
    groups = _groups(op)
    if groups:
        return len(groups[0])
    if 0 <= dim < min(small.rank, big.rank) and small.dims[dim]:
        return big.dims[dim] // small.dims[dim]
    raise Unsupported("has empty replica_groups and an empty dimension: the group size (all replicas) is "
                      "not known when the program is imported")


@converter("stablehlo.all_to_all")
def _c_all_to_all(s, op):
    _cross_replica_channel(s, op, True)
    a = {k: ir.IntegerAttr(op.attributes[k]).value for k in ("split_dimension", "concat_dimension", "split_count")}
    return [s.emit("all_to_all", operand=s.get(v), replica_groups=_groups(op), **a) for v in op.operands]


@converter("stablehlo.collective_permute")
def _c_collective_permute(s, op):
    _cross_replica_channel(s, op, True)
    return [s.emit("collective_permute", operand=s.get(op.operands[0]),
                   source_target_pairs=_groups(op, "source_target_pairs"))]


@converter("stablehlo.reduce_scatter")
def _c_reduce_scatter(s, op):
    # XLA's operation set has no ReduceScatter: AllReduce over the group, then each replica's
    # block along scatter_dimension (block i for the i-th member of its group), exactly
    # StableHLO's definition.
    comp = s.scalar_computation(op.regions[0], "stablehlo.reduce_scatter")
    channel = _cross_replica_channel(s, op, False)
    x, want = s.get(op.operands[0]), _result_shape(op)
    dim = ir.IntegerAttr(op.attributes["scatter_dimension"]).value
    groups = _groups(op)
    total = s.emit("all_reduce", operand=x, computation=comp, replica_groups=groups, channel_id=channel)
    me = s.emit("replica_id")
    if groups:          # the replica's position in its group, from a table indexed by replica id
        table = np.zeros(max(r for g in groups for r in g) + 1, np.int32)
        for g in groups:
            table[list(g)] = np.arange(len(g), dtype=np.int32)
        me = _lookup(s, table, me)
    else:
        me = s.emit("convert_element_type", operand=me, new_element_type=S32)
    block = want.dims[dim] if 0 <= dim < want.rank else 0
    zero = s.emit("constant", value=np.array(0, np.int32))
    start = s.emit("mul", lhs=me, rhs=s.emit("constant", value=np.array(block, np.int32)), broadcast_dimensions=())
    starts = [start if d == dim else zero for d in range(x.shape.rank)]
    return [s.emit("dynamic_slice", operand=total, start_indices=starts, size_indices=want.dims)]


def _first_of_two(et) -> Computation:
    """(a, b) -> a over scalars of `et`: a fold of it over a group is the group's first value."""
    b = Builder("first")
    first = b.parameter(0, Shape(et, ()))
    b.parameter(1, Shape(et, ()))
    return b.build(first, verify_ops=False)


def _zeros(s, shape: Shape) -> Op:
    et = shape.element_type
    if et.is_complex:
        zero = s.emit("constant", value=np.zeros((), et.component.dtype))
        zero = s.emit("complex", lhs=zero, rhs=zero)
    else:
        zero = s.emit("constant", value=np.zeros((), shape.dtype))
    return s.emit("broadcast_in_dim", operand=zero, out_dim_size=shape.dims, broadcast_dimensions=())


def _lookup(s, table: np.ndarray, index: Op) -> Op:
    """table[index] of a constant 1-D table, as a scalar."""
    idx = s.emit("convert_element_type", operand=index, new_element_type=S32)
    one = s.emit("dynamic_slice", operand=s.emit("constant", value=table), start_indices=[idx], size_indices=(1,))
    return s.emit("reshape", operand=one, dimensions=None, new_sizes=())


@converter("stablehlo.collective_broadcast")
def _c_collective_broadcast(s, op):
    # XLA's operation set has no CollectiveBroadcast.  Each member of a group gets the value
    # of the group's first member (with has_dynamic_root: of the member root[i] for operand i),
    # a replica in no group zeros.
    _cross_replica_channel(s, op, True)
    n = len(op.results)
    data, groups = [s.get(v) for v in op.operands[:n]], _groups(op)
    if "has_dynamic_root" in op.attributes:
        return _broadcast_from_root(s, data, s.get(op.operands[n]), groups)
    # an AllReduce whose computation keeps its left operand: xlair folds a group's values left
    # to right in group order (docs/semantics.md), so every member gets the first value
    member = None
    covered = sorted(r for g in groups for r in g)
    nrep = s.importer.num_replicas
    if groups and nrep is not None and covered != list(range(nrep)):
        missing = [r for r in range(nrep) if r not in covered]
        member = np.zeros(max(nrep, covered[-1] + 1), np.bool_)
        member[covered] = True
        groups = tuple(groups) + tuple((r,) for r in missing)
    outs = []
    for x in data:
        r = s.emit("all_reduce", operand=x, computation=_first_of_two(x.shape.element_type), replica_groups=groups,
                   channel_id=None)
        if member is not None:
            pred = _lookup(s, member, s.emit("replica_id"))
            r = s.emit("select", pred=pred, on_true=r, on_false=_zeros(s, x.shape))
        outs.append(r)
    return outs


def _broadcast_from_root(s, data, root: Op, groups) -> list:
    """collective_broadcast with has_dynamic_root: AllGather of the group's values along a new
    leading dimension, then the slice of member root[i] for operand i."""
    sizes = {len(g) for g in groups}
    if len(sizes) != 1:
        raise Unsupported("with has_dynamic_root needs replica_groups of one size (xla.all_gather gathers "
                          f"equal groups); got {[list(g) for g in groups] or 'all replicas (size unknown)'}")
    k = sizes.pop()
    outs = []
    for i, x in enumerate(data):
        dims = x.shape.dims
        one = s.emit("reshape", operand=x, dimensions=None, new_sizes=(1,) + dims)
        every = s.emit("all_gather", operand=one, all_gather_dim=0, shard_count=k, replica_groups=groups,
                       channel_id=None)
        ri = s.emit("reshape", operand=s.emit("dynamic_slice", operand=root,
                                              start_indices=[s.emit("constant", value=np.array(i, np.int32))],
                                              size_indices=(1,)), dimensions=None, new_sizes=())
        zero = s.emit("constant", value=np.zeros((), ri.shape.dtype))
        got = s.emit("dynamic_slice", operand=every, start_indices=[ri] + [zero] * len(dims),
                     size_indices=(1,) + dims)
        outs.append(s.emit("reshape", operand=got, dimensions=None, new_sizes=dims))
    return outs

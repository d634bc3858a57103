"""Replicas and collectives: ReplicaId, AllReduce, CrossReplicaSum, AllGather, AllToAll,
CollectivePermute.

xlair runs replicas itself (IREE's own collectives are unimplemented at run time): each
replica is its own IREE invocation (a thread of `Executable.run_replicated`, or an MPI rank of
`Executable.run_on_rank`).  A collective lowers to a call of a host function; the replicas'
calls meet in the host (python/xlair/host.py), which combines their values with the
functions below and hands each replica its part.

* replica_groups: empty = one group of all replicas in order 0..N-1; otherwise the groups must
  hold every replica exactly once (checked when the replica count is known: at
  `xlair.compile(..., replicas=N)`, at load, and by the interpreter); the order inside a group
  is the order of the values in AllGather's and AllToAll's results.
* channel_id: accepted and kept; calls meet by call site (all replicas run one program), so
  only ops of the same site (thus of the same channel) ever combine.
* AllReduce's computation: a left fold over the group's values in group order
  (((v0 op v1) op v2) ...), the same on every replica.  Add, Mul, Max, Min, And, Or
  computations are recognised and done by numpy (or MPI's Allreduce); any other computation
  is run by xlair's interpreter on whole arrays.  A tuple operand reduces each element.
* CrossReplicaSum: AllReduce with addition.
* AllGather: the group's operands concatenated along all_gather_dim (shard_count = group size).
* AllToAll: the operand split into split_count blocks along split_dimension, block j to the
  j-th member of the group, received blocks concatenated along concat_dimension in group order.
* CollectivePermute: the operand of `source` arrives at `target` for each pair; a replica that
  is no target gets zeros.  Pairs name sources and targets at most once each.
* A replica waits for the others of its group up to the executable's timeout (default 60 s),
  then raises XlaError naming the op and the replica; a replica that fails makes the others
  raise at their next wait, naming the failed replica.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Int, IntLists, Optional
from ..core import Attr, Comp, OpDef, Operand, register
from ..types import PRED, U32, Shape


def _host(interp):
    return interp.host


def check_groups(chk, replica_groups, size=None, what="", *, cids: dict):
    """Static rules of replica_groups: non-empty groups of distinct non-negative ids; `cids`
    gives the ids of the rules (empty, unique, range, and size when `size` is given)."""
    seen = set()
    for g in replica_groups:
        if not g:
            chk.fail("replica_groups", "must not hold an empty group", [list(x) for x in replica_groups],
                     cid=cids["empty"])
        for r in g:
            if r < 0 or r in seen:
                chk.fail("replica_groups", "must hold distinct non-negative replica ids",
                         [list(x) for x in replica_groups], cid=cids["range" if r < 0 else "unique"])
            seen.add(r)
        if size is not None and len(g) != size:
            chk.fail("replica_groups", f"must be groups of {what} ({size}) replicas",
                     [list(x) for x in replica_groups], cid=cids["size"])


#: the id of the rule that replica_groups cover the run's replicas, per op
_COVER = {"all_reduce": "all_reduce_c2", "cross_replica_sum": "all_reduce_c2", "all_gather": "all_gather_c3",
          "all_to_all": "all_to_all_c6"}


def groups_for(chk, replica_groups, n: int) -> list[list[int]]:
    """The groups of a run of n replicas (empty: all replicas); XlaError unless they cover
    0..n-1 once."""
    if not replica_groups:
        return [list(range(n))]
    ids = sorted(r for g in replica_groups for r in g)
    if ids != list(range(n)):
        chk.fail("replica_groups", f"must hold every replica 0..{n - 1} exactly once ({n} replicas)",
                 [list(g) for g in replica_groups], cid=_COVER.get(chk.op))
    return [list(g) for g in replica_groups]


# ----------------------------------------------------------------------------------------
# how the values of a group combine (shared by the interpreter and the host)
# ----------------------------------------------------------------------------------------
NUMPY_REDUCERS = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum,
                  "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


def fold(values, reducer):
    """((v0 op v1) op v2) ... of a group's values; a tuple operand element by element."""
    if isinstance(values[0], tuple):
        return tuple(fold([v[i] for v in values], reducer) for i in range(len(values[0])))
    acc = values[0]
    for v in values[1:]:
        acc = reducer(acc, v)
    return acc


def gather(values, dim: int):
    return np.concatenate([np.asarray(v) for v in values], axis=dim)


def all_to_all(values, index: int, split_dimension: int, concat_dimension: int, split_count: int):
    blocks = [np.split(np.asarray(v), split_count, axis=split_dimension)[index] for v in values]
    return np.concatenate(blocks, axis=concat_dimension)


def permute_source(pairs, me: int):
    """The replica whose operand lands on `me`, or None."""
    for s, t in pairs:
        if t == me:
            return s
    return None


# -- ReplicaId -------------------------------------------------------------------------------
def _replica_id_ref(*, result, interp):
    return np.uint32(_host(interp).replica_id)


register(OpDef("ReplicaId", (), lambda chk: Shape(U32, ()), _replica_id_ref, "collectives", "ReplicaId",
               takes_builder=True, reference_takes_interp=True,
               doc="the id of the replica running the program (U32 scalar in [0, N))"))


# -- AllReduce -------------------------------------------------------------------------------
_AR_GROUPS = {"empty": "spec:AllReduce", "unique": "all_reduce_c1", "range": "all_reduce_c3"}


def _leaves(chk, operand):
    if operand.is_tuple:
        if not operand.tuple_shapes:
            chk.fail("operand", "must be an array or a non-empty tuple of arrays", operand,
                     cid="all_reduce_i1")
        leaves = list(operand.tuple_shapes)
    else:
        leaves = [operand]
    for s in leaves:
        if not s.is_array:
            chk.fail("operand", "must be an array or a non-empty tuple of arrays", operand,
                     cid="all_reduce_i1")
    return leaves


def _all_reduce_infer(chk, operand, computation, replica_groups=(), channel_id=None):
    leaves = _leaves(chk, operand)
    et = leaves[0].element_type
    for s in leaves:
        if s.element_type != et:
            chk.fail("operand", f"must have one element type in all its elements ({et})", operand,
                     cid="spec:AllReduce")
    scalar = Shape(et, ())
    if tuple(computation.params) != (scalar, scalar) or computation.result != scalar:
        chk.fail("computation", f"must be a reduction ({scalar}, {scalar}) -> {scalar}", computation,
                 cid="all_reduce_c5")
    check_groups(chk, replica_groups, cids=_AR_GROUPS)
    return operand


def _all_reduce_ref(operand, computation, replica_groups=(), channel_id=None, *, result, interp):
    values, _ = _host(interp).exchange("all_reduce", interp.site, replica_groups, operand)
    leaves = result.leaves()

    def reducer_for(shape):
        return lambda a, b: np.asarray(computation(a, b, batch=shape.dims), shape.dtype)
    if isinstance(values[0], tuple):
        return tuple(fold([v[i] for v in values], reducer_for(s)) for i, s in enumerate(leaves))
    return fold(values, reducer_for(result))


#: the constraints AllReduce and CrossReplicaSum share (StableHLO's all_reduce)
_AR_CONSTRAINTS = {
    "all_reduce_i1": "operand is an array or a non-empty tuple of arrays",
    "all_reduce_c1": "`is_unique(replica_groups)`",
    "all_reduce_c2": "replica_groups hold every replica of the run exactly once "
                     "(checked when it runs)",
    "all_reduce_c3": "`0 <= replica_groups < size(replica_groups)`",
    "spec:AllReduce": "the elements of a tuple operand have one element type; replica "
                      "groups are not empty",
}


register(OpDef("AllReduce", (Operand("operand"), Comp("computation"),
                             Attr("replica_groups", IntLists(), ()), Attr("channel_id", Optional(Int()), None)),
               _all_reduce_infer, _all_reduce_ref, "collectives", "AllReduce", side_effecting=True,
               reference_takes_interp=True,
               doc="reduce the operand (or each element of a tuple) across the replicas of each group",
               constraints={**_AR_CONSTRAINTS,
                            "all_reduce_c5": "computation has type (E, E) -> E of scalars of the operand's "
                                             "element type"}))


def _crs_infer(chk, operand, replica_groups=()):
    for s in _leaves(chk, operand):
        if s.element_type == PRED or s.element_type != _leaves(chk, operand)[0].element_type:
            chk.fail("operand", "must have one numeric (not PRED) element type", operand,
                     cid="spec:CrossReplicaSum")
    check_groups(chk, replica_groups, cids=_AR_GROUPS)
    return operand


def _crs_ref(operand, replica_groups=(), *, result, interp):
    values, _ = _host(interp).exchange("cross_replica_sum", interp.site, replica_groups, operand)
    out = fold(values, np.add)
    return tuple(np.asarray(o, s.dtype) for o, s in zip(out, result.leaves())) if isinstance(out, tuple) \
        else np.asarray(out, result.dtype)


register(OpDef("CrossReplicaSum", (Operand("operand"), Attr("replica_groups", IntLists(), ())),
               _crs_infer, _crs_ref, "collectives", "CrossReplicaSum", side_effecting=True,
               reference_takes_interp=True,
               doc="AllReduce with a summation computation",
               constraints={**_AR_CONSTRAINTS,
                            "spec:CrossReplicaSum": "operand has one numeric (not PRED) element type"}))


# -- AllGather -------------------------------------------------------------------------------
def _all_gather_infer(chk, operand, all_gather_dim, shard_count, replica_groups=(), channel_id=None):
    chk.array("operand", operand, cid="all_gather_i1")
    if not 0 <= all_gather_dim < operand.rank:
        chk.fail("all_gather_dim", f"must be a dimension of the operand's rank {operand.rank}, "
                 f"in [0, {operand.rank})", all_gather_dim, cid="all_gather_c1")
    if shard_count < 1:
        chk.fail("shard_count", "must be positive", shard_count, cid="spec:AllGather")
    check_groups(chk, replica_groups, shard_count, "shard_count",
                 cids={"empty": "spec:AllGather", "unique": "all_gather_c2", "range": "all_gather_c4",
                       "size": "spec:AllGather"})
    dims = list(operand.dims)
    dims[all_gather_dim] *= shard_count
    return operand.with_dims(dims)


def _all_gather_ref(operand, all_gather_dim, shard_count, replica_groups=(), channel_id=None, *, result,
                    interp):
    values, _ = _host(interp).exchange("all_gather", interp.site, replica_groups, operand,
                                       size=shard_count, size_param="shard_count")
    return gather(values, all_gather_dim)


register(OpDef("AllGather", (Operand("operand"), Attr("all_gather_dim", Int()), Attr("shard_count", Int()),
                             Attr("replica_groups", IntLists(), ()), Attr("channel_id", Optional(Int()), None)),
               _all_gather_infer, _all_gather_ref, "collectives", "AllGather", side_effecting=True,
               reference_takes_interp=True,
               doc="concatenate the operands of each group's replicas along all_gather_dim",
               constraints={
                   "all_gather_i1": "operand is an array",
                   "all_gather_c1": "`0 <= all_gather_dim < rank(operands...)`",
                   "all_gather_c2": "`is_unique(replica_groups)`",
                   "all_gather_c3": "replica_groups hold every replica of the run exactly once "
                                    "(checked when it runs)",
                   "all_gather_c4": "`0 <= replica_groups < size(replica_groups)`",
                   "spec:AllGather": "shard_count is positive; replica groups are non-empty groups of "
                                     "shard_count replicas",
               }))


# -- AllToAll --------------------------------------------------------------------------------
def _all_to_all_infer(chk, operand, split_dimension, concat_dimension, split_count, replica_groups=()):
    chk.array("operand", operand, cid="all_to_all_i1")
    for name, d, cid in (("split_dimension", split_dimension, "all_to_all_c1"),
                         ("concat_dimension", concat_dimension, "all_to_all_c3")):
        if not 0 <= d < operand.rank:
            chk.fail(name, f"must be a dimension of the operand's rank {operand.rank}, in [0, {operand.rank})", d,
                     cid=cid)
    if split_count < 1:
        chk.fail("split_count", "must be positive", split_count, cid="all_to_all_c4")
    if operand.dims[split_dimension] % split_count:
        chk.fail("operand", f"dimension {split_dimension} (split_dimension) must be divisible by "
                 f"split_count ({split_count})", operand, cid="all_to_all_c2")
    check_groups(chk, replica_groups, split_count, "split_count",
                 cids={"empty": "spec:AllToAll", "unique": "all_to_all_c5", "range": "all_to_all_c7",
                       "size": "all_to_all_c8"})
    dims = list(operand.dims)
    dims[split_dimension] //= split_count
    dims[concat_dimension] *= split_count
    return operand.with_dims(dims)


def _all_to_all_ref(operand, split_dimension, concat_dimension, split_count, replica_groups=(), *, result,
                    interp):
    values, index = _host(interp).exchange("all_to_all", interp.site, replica_groups, operand,
                                           size=split_count, size_param="split_count")
    return all_to_all(values, index, split_dimension, concat_dimension, split_count)


register(OpDef("AllToAll", (Operand("operand"), Attr("split_dimension", Int()), Attr("concat_dimension", Int()),
                            Attr("split_count", Int()), Attr("replica_groups", IntLists(), ())),
               _all_to_all_infer, _all_to_all_ref, "collectives", "AllToAll", side_effecting=True,
               reference_takes_interp=True,
               doc="scatter split_count blocks of the operand to the group, gather the received blocks",
               constraints={
                   "all_to_all_i1": "operand is an array",
                   "all_to_all_c1": "`0 <= split_dimension < rank(operands...)`",
                   "all_to_all_c2": "`dim(operands..., split_dimension) % split_count = 0`",
                   "all_to_all_c3": "`0 <= concat_dimension < rank(operands...)`",
                   "all_to_all_c4": "`0 < split_count`",
                   "all_to_all_c5": "`is_unique(replica_groups)`",
                   "all_to_all_c6": "replica_groups hold every replica of the run exactly once "
                                    "(checked when it runs)",
                   "all_to_all_c7": "`0 <= replica_groups < size(replica_groups)`",
                   "all_to_all_c8": "replica groups are groups of split_count replicas",
                   "spec:AllToAll": "replica groups are not empty",
               }))


# -- CollectivePermute -----------------------------------------------------------------------
def _permute_infer(chk, operand, source_target_pairs):
    chk.array("operand", operand, cid="collective_permute_i1")
    pairs = [list(p) for p in source_target_pairs]
    for s, t in source_target_pairs:
        if s < 0 or t < 0:
            chk.fail("source_target_pairs", "must hold non-negative replica ids", pairs,
                     cid="collective_permute_c4")
    for i, what, cid in ((0, "source", "collective_permute_c2"), (1, "target", "collective_permute_c3")):
        ids = [p[i] for p in source_target_pairs]
        if len(set(ids)) != len(ids):
            chk.fail("source_target_pairs", f"must not name a {what} replica twice", pairs, cid=cid)
    return operand


def _permute_ref(operand, source_target_pairs, *, result, interp):
    host = _host(interp)
    values, _ = host.exchange("collective_permute", interp.site, (), operand,
                              pairs=source_target_pairs)
    src = permute_source(source_target_pairs, host.replica_id)
    return np.zeros(result.dims, result.dtype) if src is None else values[src]


register(OpDef("CollectivePermute", (Operand("operand"), Attr("source_target_pairs", IntLists(2))),
               _permute_infer, _permute_ref, "collectives", "CollectivePermute", side_effecting=True,
               reference_takes_interp=True,
               doc="send the operand from each source replica to its target; others get zeros",
               constraints={
                   "collective_permute_i1": "operand is an array",
                   "collective_permute_c2": "`is_unique(source_target_pairs[:, 0])`",
                   "collective_permute_c3": "`is_unique(source_target_pairs[:, 1])`",
                   "collective_permute_c4": "source_target_pairs hold non-negative replica ids (below "
                                            "the replica count, checked when it runs)",
               }))

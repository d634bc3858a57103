"""Constraints of the side-effecting ops and the collectives (AfterAll, CustomCall, Infeed,
Outfeed, Send, Recv, ReplicaId, AllReduce, CrossReplicaSum, AllGather, AllToAll,
CollectivePermute): a bad call raises XlaError at build time naming op, parameter and rule."""
import numpy as np
import pytest

import xlair as xla
from xlair import F32, PRED, S32, Shape
from xlair import ops as O
from xlair_testing import scalar_computation, check_rule

ADD = scalar_computation("add", F32)
ADD_S = scalar_computation("add", S32)
TOK = Shape.token()


def _b():
    b = xla.Builder("bad")
    return b, {"f": b.parameter(0, Shape(F32, (2, 4))), "s": b.parameter(1, Shape(F32, ())),
               "i": b.parameter(2, Shape(S32, (2,))), "tok": b.parameter(3, TOK),
               "t": b.parameter(4, Shape.tuple([Shape(F32, (2,)), Shape(S32, ())])),
               "p": b.parameter(5, Shape(PRED, (2,)))}


CASES = [
    ("after_all", lambda b, p: O.after_all(b, [p["s"]]), "'xla.after_all' operands[0] must be a token; got f32[]"),
    ("after_all", lambda b, p: O.after_all(p["tok"]), "'xla.after_all' builder must be the first argument"),
    ("custom_call", lambda b, p: O.custom_call("", [p["s"]], Shape(F32, ())),
     "'xla.custom_call' target_name must be a non-empty name of letters, digits, '_' and '.'; got ''"),
    ("custom_call", lambda b, p: O.custom_call("f", [p["tok"]], Shape(F32, ())),
     "'xla.custom_call' args[0] must be an array or a tuple of arrays; got token[]"),
    ("custom_call", lambda b, p: O.custom_call("f", [p["s"]], Shape(F32, (-1,))),
     "'xla.custom_call' shape must not be negative; got [-1]"),
    ("custom_call", lambda b, p: O.custom_call("f", [p["s"]], (2,)), "'xla.custom_call' shape must be an xla.Shape"),
    ("infeed", lambda b, p: O.infeed(b, Shape.tuple([Shape.tuple([Shape(F32, ())])])),
     "'xla.infeed' shape must be an array or a flat tuple of arrays (tuples do not nest here)"),
    ("infeed", lambda b, p: O.infeed(b, Shape(F32, ()), token=p["s"]), "'xla.infeed' token must be a token; got f32[]"),
    ("infeed", lambda b, p: O.infeed(b, TOK), "'xla.infeed' shape must be an array or a flat tuple of arrays; got token[]"),
    ("outfeed", lambda b, p: O.outfeed(p["tok"]), "'xla.outfeed' operand must be an array or a flat tuple of arrays"),
    ("outfeed", lambda b, p: O.outfeed(p["s"], Shape(F32, (1,))),
     "'xla.outfeed' shape_with_layout must be the operand's shape (f32[]); got f32[1]"),
    ("outfeed", lambda b, p: O.outfeed(p["s"], token=[p["tok"], p["tok"]]), "'xla.outfeed' token must be at most 1 token"),
    ("send", lambda b, p: O.send(p["t"], 1), "'xla.send' operand must be an array"),
    ("send", lambda b, p: O.send(p["s"], -1), "'xla.send' channel_handle must not be negative; got -1"),
    ("send", lambda b, p: O.send(p["s"], "x"), "'xla.send' channel_handle must be an integer"),
    ("recv", lambda b, p: O.recv(b, Shape.tuple([]), 1), "'xla.recv' shape must be an array"),
    ("recv", lambda b, p: O.recv(b, Shape(F32, ()), -3), "'xla.recv' channel_handle must not be negative; got -3"),
    ("replica_id", lambda b, p: O.replica_id(p["s"]), "'xla.replica_id' builder must be the first argument"),
    ("all_reduce", lambda b, p: O.all_reduce(p["f"], ADD_S),
     "'xla.all_reduce' computation must be a reduction (f32[], f32[]) -> f32[]"),
    ("all_reduce", lambda b, p: O.all_reduce(p["t"], ADD),
     "'xla.all_reduce' operand must have one element type in all its elements (F32)"),
    ("all_reduce", lambda b, p: O.all_reduce(O.tuple(b, []), ADD),
     "'xla.all_reduce' operand must be an array or a non-empty tuple of arrays"),
    ("all_reduce", lambda b, p: O.all_reduce(p["s"], ADD, [[0, 1], [1, 2]]),
     "'xla.all_reduce' replica_groups must hold distinct non-negative replica ids; got [[0, 1], [1, 2]]"),
    ("all_reduce", lambda b, p: O.all_reduce(p["s"], ADD, [[]]), "'xla.all_reduce' replica_groups must not hold an empty group"),
    ("all_reduce", lambda b, p: O.all_reduce(p["s"], ADD, [0, 1]),
     "'xla.all_reduce' replica_groups must be a sequence of integer sequences"),
    ("all_reduce", lambda b, p: O.all_reduce(p["s"], ADD, [], "c"), "'xla.all_reduce' channel_id must be an integer; got 'c'"),
    ("cross_replica_sum", lambda b, p: O.cross_replica_sum(p["p"]),
     "'xla.cross_replica_sum' operand must have one numeric (not PRED) element type"),
    ("cross_replica_sum", lambda b, p: O.cross_replica_sum(p["s"], [[-1]]),
     "'xla.cross_replica_sum' replica_groups must hold distinct non-negative replica ids"),
    ("all_gather", lambda b, p: O.all_gather(p["f"], 2, 2), "'xla.all_gather' all_gather_dim must be a dimension of the operand's rank 2, in [0, 2); got 2"),
    ("all_gather", lambda b, p: O.all_gather(p["f"], 0, 0), "'xla.all_gather' shard_count must be positive; got 0"),
    ("all_gather", lambda b, p: O.all_gather(p["f"], 0, 2, [[0, 1, 2]]),
     "'xla.all_gather' replica_groups must be groups of shard_count (2) replicas"),
    ("all_gather", lambda b, p: O.all_gather(p["t"], 0, 2), "'xla.all_gather' operand must be an array"),
    ("all_to_all", lambda b, p: O.all_to_all(p["f"], 1, 0, 3),
     "'xla.all_to_all' operand dimension 1 (split_dimension) must be divisible by split_count (3); got f32[2,4]"),
    ("all_to_all", lambda b, p: O.all_to_all(p["f"], 2, 0, 2), "'xla.all_to_all' split_dimension must be a dimension of the operand's rank 2"),
    ("all_to_all", lambda b, p: O.all_to_all(p["f"], 1, -1, 2), "'xla.all_to_all' concat_dimension must be a dimension"),
    ("all_to_all", lambda b, p: O.all_to_all(p["f"], 1, 0, 0), "'xla.all_to_all' split_count must be positive"),
    ("all_to_all", lambda b, p: O.all_to_all(p["f"], 1, 0, 2, [[0], [1]]),
     "'xla.all_to_all' replica_groups must be groups of split_count (2) replicas"),
    ("collective_permute", lambda b, p: O.collective_permute(p["s"], [(0, 1), (0, 2)]),
     "'xla.collective_permute' source_target_pairs must not name a source replica twice; got [[0, 1], [0, 2]]"),
    ("collective_permute", lambda b, p: O.collective_permute(p["s"], [(0, 1), (2, 1)]),
     "'xla.collective_permute' source_target_pairs must not name a target replica twice"),
    ("collective_permute", lambda b, p: O.collective_permute(p["s"], [(0, -1)]),
     "'xla.collective_permute' source_target_pairs must hold non-negative replica ids"),
    ("collective_permute", lambda b, p: O.collective_permute(p["s"], [(0, 1, 2)]),
     "'xla.collective_permute' source_target_pairs must be a sequence of (low, high) pairs"),
]


@pytest.mark.parametrize("op,call,message", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_rule(op, call, message):
    check_rule(call, _b, op, message, "test_shape_rules_side_effects.py")


def test_result_shapes():
    b, p = _b()
    assert O.after_all(b, [p["tok"], O.after_all(b, [])]).shape == Shape.token()
    assert O.infeed(b, Shape(F32, (3,))).shape == Shape(F32, (3,))
    assert O.infeed(b, Shape(F32, (3,)), token=p["tok"]).shape == Shape.tuple([Shape(F32, (3,)), TOK])
    assert O.outfeed(p["t"]).shape == TOK
    assert O.send(p["s"], 2).shape == TOK
    assert O.recv(b, Shape(S32, (2,)), 2, token=p["tok"]).shape == Shape.tuple([Shape(S32, (2,)), TOK])
    assert O.replica_id(b).shape == Shape(xla.U32, ())
    assert O.all_reduce(p["f"], ADD).shape == Shape(F32, (2, 4))
    assert O.all_gather(p["f"], 1, 3).shape == Shape(F32, (2, 12))
    assert O.all_to_all(p["f"], 1, 0, 2).shape == Shape(F32, (4, 2))
    assert O.collective_permute(p["i"], [(0, 1)]).shape == Shape(S32, (2,))
    assert O.custom_call(b, "f", [], Shape.tuple([Shape(F32, ()), Shape(S32, (2,))])).shape == \
        Shape.tuple([Shape(F32, ()), Shape(S32, (2,))])

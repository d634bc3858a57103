"""Replicas and collectives on the CPU: the spec's examples with 2, 3 and 4 replicas, run as
threads (`Executable.run_replicated`), each result checked against values derived by hand from
the spec's text and against the numpy interpreter run as replicas (`xla.interpret_replicated`);
replica groups, channel ids, tuple operands, any reduction computation; errors and faults."""
import time

import numpy as np
import pytest

import xlair as xla
from xlair import ops as O
from xlair.dialect.types import F32, PRED, S32, U32, Shape
from xlair_testing import comp_of, scalar_computation

ADD = scalar_computation("add", F32)
MAX = scalar_computation("max", F32)


def _comp(name, shapes, fn):
    b = xla.Builder(name)
    ps = [b.parameter(i, s) for i, s in enumerate(shapes)]
    fn(b, *ps)
    return b.build()


def _run(comp, args, n, covers=None, ops=()):
    exe = xla.compile(comp, target="cpu", replicas=n)
    got = exe.run_replicated(args)
    ref = xla.interpret_replicated(comp, args)
    for r in range(n):
        _same(got[r], ref[r], f"replica {r} vs interpreter")
    if covers is not None:
        covers.add("cpu", *ops)
    return got


def _same(a, b, what):
    if isinstance(b, tuple):
        assert isinstance(a, tuple) and len(a) == len(b), what
        for x, y in zip(a, b):
            _same(x, y, what)
        return
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, err_msg=what)
    assert np.asarray(a).dtype == np.asarray(b).dtype, what


# -- ReplicaId ---------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 3, 4])
def test_replica_id(n, covers):
    comp = _comp("rid", [], lambda b: O.replica_id(b))
    got = _run(comp, [[] for _ in range(n)], n, covers, ["xla.replica_id"])
    assert [int(g) for g in got] == list(range(n))
    assert all(np.asarray(g).dtype == np.uint32 for g in got)


# -- AllReduce: "[1.0, 2.5] and [3.0, 5.25] ... summation ... [4.0, 7.75] on both replicas" ----
def test_all_reduce_spec_example(covers):
    comp = _comp("ar", [Shape(F32, (2,))], lambda b, x: O.all_reduce(x, ADD))
    got = _run(comp, [[np.array([1.0, 2.5], np.float32)], [np.array([3.0, 5.25], np.float32)]], 2,
               covers, ["xla.all_reduce"])
    for g in got:
        np.testing.assert_array_equal(g, np.array([4.0, 7.75], np.float32))


@pytest.mark.parametrize("n", [2, 3, 4])
def test_all_reduce_sum_max_and_crs(n, covers):
    comp = _comp("ar", [Shape(F32, (2,))],
                 lambda b, x: O.tuple([O.all_reduce(x, ADD), O.all_reduce(x, MAX), O.cross_replica_sum(x)]))
    args = [[np.array([r + 1.0, 10.0 * (r + 1) - 25.0], np.float32)] for r in range(n)]
    got = _run(comp, args, n, covers, ["xla.all_reduce", "xla.cross_replica_sum"])
    total = np.array([n * (n + 1) / 2, 10 * n * (n + 1) / 2 - 25 * n], np.float32)
    top = np.array([n, 10.0 * n - 25], np.float32)
    for s, m, c in got:
        np.testing.assert_array_equal(s, total)
        np.testing.assert_array_equal(m, top)
        np.testing.assert_array_equal(c, total)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_all_reduce_any_computation_folds_in_group_order(n, covers):
    """A non-commutative computation f(a, b) = 2a + b: the fold is ((v0 f v1) f v2) ..."""
    b = xla.Builder("f")
    p, q = b.parameter(0, Shape(S32, ())), b.parameter(1, Shape(S32, ()))
    O.add(O.mul(p, O.constant(b, np.int32(2))), q)
    f = b.build()
    comp = _comp("ar", [Shape(S32, (1,))], lambda bb, x: O.all_reduce(x, f))
    got = _run(comp, [[np.array([r + 1], np.int32)] for r in range(n)], n, covers, ["xla.all_reduce"])
    acc = 1
    for r in range(1, n):
        acc = 2 * acc + (r + 1)
    for g in got:
        assert g.tolist() == [acc]


def test_all_reduce_tuple_operand(covers):
    comp = _comp("ar", [Shape(F32, (2,)), Shape(F32, ())],
                 lambda b, x, y: O.all_reduce(O.tuple([x, y]), ADD))
    args = [[np.array([1.0, 2.0], np.float32) * (r + 1), np.float32(r)] for r in range(3)]
    got = _run(comp, args, 3, covers, ["xla.all_reduce"])
    for a, s in got:
        np.testing.assert_array_equal(a, [6.0, 12.0])
        assert float(s) == 3.0


def test_all_reduce_replica_groups_spec_example(covers):
    """replica_groups = {0, 2}, {1, 3}: reduction between replicas 0 and 2, and 1 and 3."""
    comp = _comp("ar", [Shape(F32, ())], lambda b, x: O.all_reduce(x, ADD, [[0, 2], [1, 3]], channel_id=7))
    got = _run(comp, [[np.float32(10 ** r)] for r in range(4)], 4, covers, ["xla.all_reduce"])
    assert [float(g) for g in got] == [101.0, 1010.0, 101.0, 1010.0]


def test_all_reduce_pred_and_or(covers):
    comp = _comp("ar", [Shape(PRED, (3,))],
                 lambda b, x: O.tuple([O.all_reduce(x, scalar_computation("and_", PRED)),
                                       O.all_reduce(x, scalar_computation("or_", PRED))]))
    vals = [np.array([True, True, False]), np.array([True, False, False]), np.array([True, True, False])]
    got = _run(comp, [[v] for v in vals], 3, covers, ["xla.all_reduce"])
    for a, o in got:
        assert a.tolist() == [True, False, False] and o.tolist() == [True, True, False]


# -- AllGather: "[1.0, 2.5] and [3.0, 5.25] ... all_gather_dim 0 ... [1.0, 2.5, 3.0, 5.25]" ----
def test_all_gather_spec_example(covers):
    comp = _comp("ag", [Shape(F32, (2,))], lambda b, x: O.all_gather(x, 0, 2))
    got = _run(comp, [[np.array([1.0, 2.5], np.float32)], [np.array([3.0, 5.25], np.float32)]], 2,
               covers, ["xla.all_gather"])
    for g in got:
        np.testing.assert_array_equal(g, np.array([1.0, 2.5, 3.0, 5.25], np.float32))


@pytest.mark.parametrize("n", [2, 3, 4])
def test_all_gather_dim1(n, covers):
    comp = _comp("ag", [Shape(S32, (2, 1))], lambda b, x: O.all_gather(x, 1, n))
    got = _run(comp, [[np.array([[r], [10 + r]], np.int32)] for r in range(n)], n, covers, ["xla.all_gather"])
    for g in got:
        assert g.tolist() == [list(range(n)), [10 + r for r in range(n)]]


def test_all_gather_groups_order(covers):
    """The order of replicas in each group is the order of their inputs in the result."""
    comp = _comp("ag", [Shape(S32, (1,))], lambda b, x: O.all_gather(x, 0, 2, [[3, 0], [1, 2]]))
    got = _run(comp, [[np.array([r], np.int32)] for r in range(4)], 4, covers, ["xla.all_gather"])
    assert [g.tolist() for g in got] == [[3, 0], [1, 2], [1, 2], [3, 0]]


# -- AllToAll ----------------------------------------------------------------------------------
def test_all_to_all_spec_example(covers):
    """x: f32[4,16] on 4 cores, split_dimension 1, concat_dimension 0, split_count 4: each core
    gets f32[16,4], the j-th 4-column block of every core's x stacked in core order."""
    comp = _comp("a2a", [Shape(F32, (4, 16))], lambda b, x: O.all_to_all(x, 1, 0, 4))
    xs = [np.arange(64, dtype=np.float32).reshape(4, 16) + 100 * r for r in range(4)]
    got = _run(comp, [[x] for x in xs], 4, covers, ["xla.all_to_all"])
    for j, g in enumerate(got):
        assert g.shape == (16, 4)
        for i in range(4):
            np.testing.assert_array_equal(g[4 * i:4 * i + 4], xs[i][:, 4 * j:4 * j + 4])


@pytest.mark.parametrize("n", [2, 3])
def test_all_to_all_small(n, covers):
    comp = _comp("a2a", [Shape(S32, (n,))], lambda b, x: O.all_to_all(x, 0, 0, n))
    got = _run(comp, [[np.arange(n, dtype=np.int32) + 10 * r] for r in range(n)], n, covers, ["xla.all_to_all"])
    for j, g in enumerate(got):
        assert g.tolist() == [10 * r + j for r in range(n)]


def test_all_to_all_groups_spec_example(covers):
    """replica_groups = {{1,2,3},{4,5,0}}: blocks are exchanged within each group and
    concatenated in the group's order."""
    comp = _comp("a2a", [Shape(S32, (3,))], lambda b, x: O.all_to_all(x, 0, 0, 3, [[1, 2, 3], [4, 5, 0]]))
    got = _run(comp, [[np.arange(3, dtype=np.int32) + 10 * r] for r in range(6)], 6, covers, ["xla.all_to_all"])
    for group in ([1, 2, 3], [4, 5, 0]):
        for j, r in enumerate(group):
            assert got[r].tolist() == [10 * s + j for s in group]


# -- CollectivePermute -------------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 3, 4])
def test_collective_permute_ring_and_unnamed_targets(n, covers):
    ring = [(r, (r + 1) % n) for r in range(n)]
    comp = _comp("cp", [Shape(F32, (2,))],
                 lambda b, x: O.tuple([O.collective_permute(x, ring), O.collective_permute(x, [(0, n - 1)])]))
    got = _run(comp, [[np.array([r, -r], np.float32)] for r in range(n)], n, covers, ["xla.collective_permute"])
    for r, (rot, one) in enumerate(got):
        src = (r - 1) % n
        assert rot.tolist() == [src, -src]
        assert one.tolist() == ([0.0, 0.0] if r == n - 1 else [0.0, 0.0])
    # replicas that are no target get zeros: only replica n-1 receives replica 0's (zero) value
    comp2 = _comp("cp", [Shape(S32, ())], lambda b, x: O.collective_permute(x, [(1, 0)]))
    got = _run(comp2, [[np.int32(7 + r)] for r in range(n)], n)
    assert [int(g) for g in got] == [8] + [0] * (n - 1)


# -- a program with several collectives and replica ids ----------------------------------------
def test_mixed_program(covers):
    def body(b, x):
        rid = O.convert_element_type(O.replica_id(b), F32)
        y = O.add(x, rid, broadcast_dimensions=())
        s = O.all_reduce(y, ADD)
        g = O.all_gather(O.reshape(s, [1, 2]), 0, 4)
        return O.reduce(g, O.constant(b, np.float32(0)), ADD, [0, 1])
    comp = _comp("mix", [Shape(F32, (2,))], body)
    got = _run(comp, [[np.array([1, 2], np.float32)] for _ in range(4)], 4, covers,
               ["xla.replica_id", "xla.all_reduce", "xla.all_gather"])
    # y_r = [1 + r, 2 + r]; s = [10, 14]; g = 4 copies; sum = 96
    assert [float(g) for g in got] == [96.0] * 4


def test_collective_in_while_loop(covers):
    """Each iteration all-reduces the state: x <- sum over replicas, 3 times."""
    cond = comp_of(lambda b, s: O.lt(O.get_tuple_element(s, 0), O.constant(b, np.int32(3))),
                   Shape.tuple([Shape(S32, ()), Shape(F32, ())]), name="cond")
    bb = xla.Builder("body")
    st = bb.parameter(0, Shape.tuple([Shape(S32, ()), Shape(F32, ())]))
    O.tuple([O.add(O.get_tuple_element(st, 0), O.constant(bb, np.int32(1))),
             O.all_reduce(O.get_tuple_element(st, 1), ADD)])
    body = bb.build()
    comp = _comp("loop", [Shape(F32, ())],
                 lambda b, x: O.while_(cond, body, O.tuple([O.constant(b, np.int32(0)), x])))
    got = _run(comp, [[np.float32(r + 1)] for r in range(3)], 3, covers, ["xla.all_reduce"])
    for i, v in got:
        assert int(i) == 3 and float(v) == 6.0 * 9


# -- errors and faults -------------------------------------------------------------------------
def test_replica_groups_checked_against_replica_count():
    comp = _comp("ar", [Shape(F32, ())], lambda b, x: O.all_reduce(x, ADD, [[0, 1], [2, 3]]))
    with pytest.raises(xla.XlaError, match=r"'xla.all_reduce' replica_groups must hold every replica 0..2 exactly once"):
        xla.compile(comp, "cpu", replicas=3)
    comp = _comp("cp", [Shape(F32, ())], lambda b, x: O.collective_permute(x, [(0, 5)]))
    with pytest.raises(xla.XlaError, match=r"'xla.collective_permute' source_target_pairs must name replicas in \[0, 2\)"):
        xla.compile(comp, "cpu", replicas=2)
    comp = _comp("ag", [Shape(F32, (1,))], lambda b, x: O.all_gather(x, 0, 2))
    with pytest.raises(xla.XlaError, match=r"'xla.all_gather' shard_count must be the number of replicas \(3\) when "
                                           r"replica_groups is empty; got 2"):
        xla.compile(comp, "cpu", replicas=3)
    comp = _comp("a2a", [Shape(F32, (4,))], lambda b, x: O.all_to_all(x, 0, 0, 4))
    with pytest.raises(xla.XlaError, match=r"'xla.all_to_all' split_count must be the number of replicas \(2\)"):
        xla.compile(comp, "cpu", replicas=2)
    # the interpreter checks the same when it runs the replicas
    with pytest.raises(xla.XlaError, match=r"'xla.all_to_all' split_count must be the size of each replica group"):
        xla.interpret_replicated(comp, [[np.ones(4, np.float32)]] * 2)


def test_wrong_number_of_argument_lists():
    exe = xla.compile(_comp("rid", [], lambda b: O.replica_id(b)), "cpu", replicas=2)
    with pytest.raises(xla.XlaError, match=r"one argument list per replica \(2\); got 3"):
        exe.run_replicated([[], [], []])
    with pytest.raises(xla.XlaError, match="compiled for 2 replicas"):
        exe()


def test_replica_that_raises_names_itself_and_nobody_hangs():
    """Replica 2's custom call raises; the others wait at the AllReduce, see the failure and
    stop: the call raises naming replica 2, long before the timeout."""
    def picky(x):
        if float(x) == 2.0:
            raise ValueError("replica two is unhappy")
        return x
    xla.register_custom_call("xlair_test_picky", picky)
    comp = _comp("fault", [Shape(F32, ())],
                 lambda b, x: O.all_reduce(O.custom_call("xlair_test_picky", [x], Shape(F32, ())), ADD))
    exe = xla.compile(comp, "cpu", replicas=4)
    exe.timeout = 30
    t = time.monotonic()
    with pytest.raises(xla.XlaError, match="failed on replica 2: 'xla.custom_call' target 'xlair_test_picky' "
                                           "raised ValueError: replica two is unhappy"):
        exe.run_replicated([[np.float32(r)] for r in range(4)])
    assert time.monotonic() - t < 10
    # the executable still works afterwards
    assert [float(v) for v in exe.run_replicated([[np.float32(r + 10)] for r in range(4)])] == [46.0] * 4


def test_collective_some_replicas_never_reach_times_out():
    """Only replica 0 runs the AllReduce (it sits in a conditional on the replica id): replica 0
    raises after the timeout instead of waiting forever."""
    tb = xla.Builder("t")
    O.all_reduce(tb.parameter(0, Shape(F32, ())), ADD)
    fb = xla.Builder("f")
    fb.parameter(0, Shape(F32, ()))
    comp = _comp("hang", [Shape(F32, ())],
                 lambda b, x: O.conditional(O.eq(O.replica_id(b), O.constant(b, np.uint32(0))), x, tb.build(),
                                            x, fb.build()))
    exe = xla.compile(comp, "cpu", replicas=2)
    t = time.monotonic()
    with pytest.raises(xla.XlaError, match=r"failed on replica 0: 'xla.all_reduce' on replica 0 timed out after 1 s "
                                           r"waiting for replica\(s\) \[1\]"):
        exe.run_replicated([[np.float32(1)], [np.float32(2)]], timeout=1)
    assert time.monotonic() - t < 5


def test_collectives_on_every_target(target, covers):
    """The spec's two-replica examples on each end-to-end target (Vulkan included: the host
    calls copy device buffers through staging buffers)."""
    comp = _comp("each", [Shape(F32, (2,))],
                 lambda b, x: O.tuple([O.replica_id(b), O.all_reduce(x, ADD), O.all_gather(x, 0, 2),
                                       O.collective_permute(x, [(0, 1)]), O.all_to_all(x, 0, 0, 2),
                                       O.cross_replica_sum(x)]))
    exe = xla.compile(comp, target, replicas=2)
    got = exe.run_replicated([[np.array([1.0, 2.5], np.float32)], [np.array([3.0, 5.25], np.float32)]])
    for r, (rid, s, g, p, a, c) in enumerate(got):
        assert int(rid) == r
        assert s.tolist() == [4.0, 7.75] and c.tolist() == [4.0, 7.75]
        assert g.tolist() == [1.0, 2.5, 3.0, 5.25]
        assert p.tolist() == ([0.0, 0.0] if r == 0 else [1.0, 2.5])
        assert a.tolist() == ([1.0, 3.0] if r == 0 else [2.5, 5.25])
    covers.add(target, "xla.replica_id", "xla.all_reduce", "xla.all_gather", "xla.collective_permute",
               "xla.all_to_all", "xla.cross_replica_sum")

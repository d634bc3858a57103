"""Run by tests/e2e/test_mpi.py under `mpirun -n N`: one replica per rank, the collectives'
spec examples checked against hand-derived values, then a fault on rank 1 that every rank must
report.  Prints `RANK <r> OK` or `RANK <r> FAIL <why>`."""
import sys
import traceback

import numpy as np

import xlair as xla
from xlair import F32, S32, Shape
from xlair import ops as O


def sc(op, et):
    b = xla.Builder(op)
    getattr(O, op + "_" if op in ("and", "or") else op)(b.parameter(0, Shape(et, ())), b.parameter(1, Shape(et, ())))
    return b.build()


def check(comm):
    n, r = comm.size, comm.rank
    # mixed collectives
    b = xla.Builder("mpi")
    x = b.parameter(0, Shape(F32, (2,)))
    fb = xla.Builder("f")                 # f(a, b) = 2a + b: not an MPI reduction, goes point to point
    p, q = fb.parameter(0, Shape(S32, ())), fb.parameter(1, Shape(S32, ()))
    O.add(O.mul(p, O.constant(fb, np.int32(2))), q)
    i = b.parameter(1, Shape(S32, ()))
    outs = [O.replica_id(b), O.all_reduce(x, sc("add", F32)), O.all_reduce(x, sc("max", F32)),
            O.all_reduce(i, fb.build()), O.all_gather(x, 0, n), O.cross_replica_sum(x),
            O.collective_permute(x, [(k, (k + 1) % n) for k in range(n)]),
            O.collective_permute(x, [(0, n - 1)])]
    if n == 4:
        outs.append(O.all_reduce(x, sc("add", F32), [[0, 2], [1, 3]]))
    O.tuple(outs)
    exe_mixed = exe = xla.compile(b.build(), "cpu", replicas=n)
    xr = np.array([r + 1.0, 10.0 * (r + 1) - 25], np.float32)
    got = exe.run_on_rank(comm, [xr, np.int32(r + 1)])
    xs = [np.array([k + 1.0, 10.0 * (k + 1) - 25], np.float32) for k in range(n)]
    fold = 1
    for k in range(1, n):
        fold = 2 * fold + (k + 1)
    want = [np.uint32(r), sum(xs), np.max(xs, axis=0), np.int32(fold), np.concatenate(xs), sum(xs),
            xs[(r - 1) % n], xs[0] if r == n - 1 else np.zeros(2, np.float32)]
    if n == 4:
        want.append(xs[r % 2] + xs[r % 2 + 2])
    for k, (g, w) in enumerate(zip(got, want)):
        if not np.array_equal(np.asarray(g), np.asarray(w)) or np.asarray(g).dtype != np.asarray(w).dtype:
            return f"output {k}: got {g!r}, want {w!r}"
    # bit for bit the thread replicas' left fold ((v0 op v1) op v2) ...: an order-sensitive f32
    # sum and max (with a NaN), an s32 xor, a PRED and
    b = xla.Builder("bits")
    f = b.parameter(0, Shape(F32, (4,)))
    s = b.parameter(1, Shape(S32, (3,)))
    p = b.parameter(2, Shape(xla.PRED, (2,)))
    O.tuple([O.all_reduce(f, sc("add", F32)), O.all_reduce(f, sc("max", F32)), O.all_reduce(s, sc("xor", S32)),
             O.all_reduce(p, sc("and", xla.PRED))])
    exe = xla.compile(b.build(), "cpu", replicas=n)
    fs = [np.array([1e8 if k % 2 == 0 else -1e8, 1.0 + k / 3, 3.0 ** -k, np.nan if k == 1 else k], np.float32)
          for k in range(n)]
    ss = [np.array([k * 7 + 1, -k, 1 << k], np.int32) for k in range(n)]
    ps = [np.array([True, k != 2], np.bool_) for k in range(n)]
    got = exe.run_on_rank(comm, [fs[r], ss[r], ps[r]])
    folds = [fs[0], fs[0], ss[0], ps[0]]
    for k in range(1, n):
        folds = [folds[0] + fs[k], np.maximum(folds[1], fs[k]), folds[2] ^ ss[k], folds[3] & ps[k]]
    for k, (g, w) in enumerate(zip(got, folds)):
        if np.asarray(g).tobytes() != np.asarray(w).tobytes():
            return f"bit-identical fold {k}: got {g!r}, want {w!r}"
    # the spec's AllToAll: x f32[4,16], split_dimension 1, concat_dimension 0, split_count n
    b = xla.Builder("a2a")
    O.all_to_all(b.parameter(0, Shape(F32, (4, 4 * n))), 1, 0, n)
    exe = xla.compile(b.build(), "cpu", replicas=n)
    mats = [np.arange(16 * n, dtype=np.float32).reshape(4, 4 * n) + 100 * k for k in range(n)]
    g = exe.run_on_rank(comm, [mats[r]])
    w = np.concatenate([m[:, 4 * r:4 * r + 4] for m in mats], axis=0)
    if not np.array_equal(g, w):
        return f"all_to_all: got {g}, want {w}"
    # a fault on rank 1: every rank raises, naming replica 1
    def picky(v):
        if float(v) == 1.0:
            raise ValueError("rank one refuses")
        return v
    xla.register_custom_call("picky", picky)
    b = xla.Builder("fault")
    O.all_reduce(O.custom_call("picky", [b.parameter(0, Shape(F32, ()))], Shape(F32, ())), sc("add", F32))
    exe = xla.compile(b.build(), "cpu", replicas=n)
    exe.timeout = 20
    try:
        exe.run_on_rank(comm, [np.float32(r)])
    except xla.XlaError as e:
        if "failed on replica 1" not in str(e) or "rank one refuses" not in str(e):
            return f"fault reported as {e}"
    else:
        return "the fault on rank 1 was not reported"
    # the first program again: its session was kept, and it still runs (three calls)
    for _ in range(3):
        again = exe_mixed.run_on_rank(comm, [xr, np.int32(r + 1)])
        if not np.array_equal(again[1], want[1]):
            return f"a later call of the first program: all_reduce gave {again[1]}, want {want[1]}"
    # a fault on rank 1 after its last collective: the others' call succeeds, their next call
    # reports it (naming replica 1), and the call after that runs on a new session
    def late(v):
        if r == 1:
            raise ValueError("rank one fails late")
        return v
    xla.register_custom_call("late", late)
    b = xla.Builder("late_fault")
    O.custom_call("late", [O.all_reduce(b.parameter(0, Shape(F32, ())), sc("add", F32))], Shape(F32, ()))
    late_exe = xla.compile(b.build(), "cpu", replicas=n)
    late_exe.timeout = 20
    reported = r == 1
    try:
        got = late_exe.run_on_rank(comm, [np.float32(r)])
        if r == 1:
            return "rank 1's late fault did not raise on rank 1"
        if float(got) != sum(range(n)):
            return f"late_fault before the fault: got {got}"
    except xla.XlaError as e:       # (a rank that ends its call after the report reaches it raises now)
        if "failed on replica 1" not in str(e) or "rank one fails late" not in str(e):
            return f"late fault reported on rank {r} as {e}"
        reported = True
    if not reported:
        try:
            late_exe.run_on_rank(comm, [np.float32(r)])
            return "the late fault on rank 1 was not reported at the next call"
        except xla.XlaError as e:
            if "failed on replica 1" not in str(e) or "rank one fails late" not in str(e):
                return f"late fault reported at the next call as {e}"
    xla.register_custom_call("late", lambda v: v)
    got = late_exe.run_on_rank(comm, [np.float32(r)])
    if float(got) != sum(range(n)):
        return f"late_fault on a new session: got {got}"
    return None


def main(checks=check):
    """Run `checks(comm)` (None, or why it failed) on this rank and print the verdict (also the
    harness of the other mpirun scripts here)."""
    comm = xla.replicas.mpi()
    try:
        why = checks(comm)
    except Exception:       # noqa: BLE001
        why = traceback.format_exc().replace("\n", " | ")
    print(f"RANK {comm.rank} {'OK' if why is None else 'FAIL ' + why}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

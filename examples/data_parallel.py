"""A data-parallel training step on replicas: each replica computes the gradient of a
least-squares loss on its own shard of the batch, AllReduce sums the gradients, and every
replica applies the same update.

    python examples/data_parallel.py                 # 2 replicas, threads in this process
    mpirun -n 2 python examples/data_parallel.py     # 1 replica per MPI rank

Both print the weights after 20 steps, which equal plain gradient descent on the whole batch.
"""
import sys

import numpy as np

import xlair as xla
from xlair import F32, Shape
from xlair import ops as O


def train_step(features: int, shard: int, replicas: int, lr: float) -> xla.Computation:
    """(w f32[F], x f32[S,F], y f32[S]) -> w - lr * mean over the whole batch of the gradient."""
    add = xla.Builder("add")
    O.add(add.parameter(0, Shape(F32, ())), add.parameter(1, Shape(F32, ())))
    add = add.build()
    b = xla.Builder("train_step")
    w = b.parameter(0, Shape(F32, (features,)), "w")
    x = b.parameter(1, Shape(F32, (shard, features)), "x")
    y = b.parameter(2, Shape(F32, (shard,)), "y")
    err = O.sub(O.dot(x, w), y)                                            # f32[S]
    grad = O.dot(O.transpose(x, [1, 0]), err)                              # f32[F]: local sum of gradients
    total = O.all_reduce(grad, add)                                        # summed over the replicas
    scale = O.constant(b, np.float32(lr / (shard * replicas)))
    O.sub(w, O.mul(total, scale, broadcast_dimensions=()))
    return b.build()


def data(replicas: int, shard: int, features: int = 4):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((replicas * shard, features)).astype(np.float32)
    y = (x @ np.arange(1, features + 1, dtype=np.float32)).astype(np.float32)
    return x, y


def reference(x, y, steps, lr):
    w = np.zeros(x.shape[1], np.float32)
    for _ in range(steps):
        w = w - lr * (x.T @ (x @ w - y)) / len(y)
    return w


def main():
    steps, lr, shard, features = 20, 0.1, 8, 4
    under_mpi = any(k in __import__("os").environ for k in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE"))
    if under_mpi:
        comm = xla.replicas.mpi()
        n = comm.size
    else:
        n = 2
    x, y = data(n, shard, features)
    exe = xla.compile(train_step(features, shard, n, lr), target="cpu", replicas=n)
    w = np.zeros(features, np.float32)
    if under_mpi:
        r = comm.rank
        xs, ys = x[r * shard:(r + 1) * shard], y[r * shard:(r + 1) * shard]
        for _ in range(steps):
            w = exe.run_on_rank(comm, [w, xs, ys])
        who = f"rank {r} of {n}"
    else:
        ws = [w] * n
        for _ in range(steps):
            ws = exe.run_replicated([[ws[r], x[r * shard:(r + 1) * shard], y[r * shard:(r + 1) * shard]]
                                     for r in range(n)])
        assert all(np.array_equal(ws[0], v) for v in ws)
        w, who = ws[0], f"{n} replicas in threads"
    ref = reference(x, y, steps, lr)
    ok = np.allclose(w, ref, rtol=1e-4, atol=1e-5)
    print(f"{who}: w = {np.array2string(w, precision=4)}  (whole-batch gradient descent: "
          f"{np.array2string(ref, precision=4)}) {'ok' if ok else 'MISMATCH'}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

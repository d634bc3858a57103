"""Data-parallel training of a flax model over MPI ranks: the real-program suite's
`mlp_adam_step` (a flax linen MLP 784-256-128-10, softmax cross-entropy, optax Adam), with
each rank computing the gradient of its shard of the batch and an AllReduce averaging the
gradients, then the same Adam update on every rank.

    mpirun -n 2 python examples/data_parallel_mpi.py     # 1 replica per MPI rank
    python examples/data_parallel_mpi.py                 # one process, the whole batch
    mpirun --hostfile hosts -n 4 -x XLAIR_CACHE_DIR=/shared/xlair-cache \
        -x XLAIR_CACHE_KEY_FILE=$HOME/.xlair-cache-key python examples/data_parallel_mpi.py
                                                         # machines sharing a keyed compile cache (README)

Every rank prints its loss curve beside the one-process curve (the same steps on the whole
batch, through xlair.jit), and `ok` when they agree: the mean of the shards' mean gradients is
the whole batch's mean gradient.

Three executables per step, as a data-parallel trainer built on xlair would have them:
`grad` (xlair.jit of jax.value_and_grad on the rank's shard), one AllReduce of the gradients
flattened into one f32 vector (an xlair Builder program with replicas = ranks, run with
`run_on_rank`: MPI's Allreduce on the program's buffers), and `update` (xlair.jit of the optax
step).
"""
import os
import sys

import numpy as np

import xlair as xla
from xlair import F32, Shape
from xlair import ops as O

STEPS, BATCH, LR = 30, 128, 1e-3


def model_and_data():
    import flax.linen as nn
    import jax

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.relu(nn.Dense(256)(x))
            x = nn.relu(nn.Dense(128)(x))
            return nn.Dense(10)(x)

    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, 784)).astype(np.float32)
    y = rng.integers(0, 10, BATCH).astype(np.int32)
    m = MLP()
    params = jax.tree_util.tree_map(np.asarray, m.init(jax.random.key(0), x[:1]))
    return m, params, x, y


def functions(m):
    import jax
    import optax
    from jax.flatten_util import ravel_pytree
    tx = optax.adam(LR)

    def loss(p, x, y):
        logits = m.apply(p, x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    def grad(p, x, y):
        value, g = jax.value_and_grad(loss)(p, x, y)
        return value, ravel_pytree(g)[0]

    def update(p, state, flat_g):
        g = ravel_pytree(p)[1](flat_g)
        updates, state = tx.update(g, state, p)
        return optax.apply_updates(p, updates), state

    return tx, xla.jit(grad), xla.jit(update)


def mean_over_ranks(size: int, ranks: int) -> xla.Computation:
    """f32[size] -> the mean of the ranks' vectors (one AllReduce)."""
    add = xla.Builder("add")
    O.add(add.parameter(0, Shape(F32, ())), add.parameter(1, Shape(F32, ())))
    b = xla.Builder("mean_gradient")
    total = O.all_reduce(b.parameter(0, Shape(F32, (size,)), "g"), add.build())
    O.mul(total, O.constant(b, np.float32(1.0 / ranks)), broadcast_dimensions=())
    return b.build()


def train(m, x, y, params, comm=None):
    """The loss curve (one loss per step: the mean over ranks of the shards' losses, or the
    whole batch's without MPI) and the final parameters."""
    tx, grad, update = functions(m)
    state = tx.init(params)
    n, r = (comm.size, comm.rank) if comm is not None else (1, 0)
    shard = len(x) // n
    xs, ys = x[r * shard:(r + 1) * shard], y[r * shard:(r + 1) * shard]
    mean = None
    curve = []
    for _ in range(STEPS):
        value, g = grad(params, xs, ys)
        if comm is not None:            # the gradient and the loss, averaged in one AllReduce
            both = np.append(np.asarray(g), np.float32(value))
            if mean is None:
                mean = xla.compile(mean_over_ranks(both.size, n), "cpu", replicas=n)
            both = mean.run_on_rank(comm, [both])
            g, value = both[:-1], both[-1]
        params, state = update(params, state, g)
        curve.append(float(value))
    return curve, params


def main():
    m, params, x, y = model_and_data()
    under_mpi = any(k in os.environ for k in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE"))
    comm = xla.replicas.mpi() if under_mpi else None
    if comm is not None and BATCH % comm.size:
        raise SystemExit(f"the batch of {BATCH} does not split over {comm.size} ranks")
    one, _ = train(m, x, y, params)                  # the whole batch in one process
    curve = one if comm is None else train(m, x, y, params, comm)[0]
    who = f"rank {comm.rank} of {comm.size}" if comm is not None else "one process"
    ok = np.allclose(curve, one, rtol=2e-4, atol=1e-5)
    for k in range(0, STEPS, 5):
        print(f"{who}: step {k:2d}  loss {curve[k]:.5f}  (one process: {one[k]:.5f})")
    print(f"{who}: final loss {curve[-1]:.5f} (one process {one[-1]:.5f}) {'ok' if ok else 'MISMATCH'}",
          flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Train a small flax model with optax through xlair.jit, beside jax.jit.

A two-layer MLP classifies points of three interleaved spirals; the training step (softmax
cross-entropy, value_and_grad, AdamW with a warm-up cosine schedule and gradient clipping) is
compiled once by xlair and once by XLA:CPU, both start from the same parameters and see the same
batches, and the loss curves are printed side by side.

    python examples/train_flax.py [--steps 300] [--target cpu]
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def spirals(n: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """n points on each of three noisy spiral arms: (x f32[3n, 2], label i32[3n])."""
    t = np.sqrt(rng.uniform(0.05, 1, n)) * 3 * np.pi
    xs, ys = [], []
    for k in range(3):
        a = t + 2 * np.pi * k / 3
        xs.append(np.stack([t * np.cos(a), t * np.sin(a)], 1) / 10 + rng.normal(0, 0.03, (n, 2)))
        ys.append(np.full(n, k))
    return np.concatenate(xs).astype(np.float32), np.concatenate(ys).astype(np.int32)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--target", default="cpu")
    args = ap.parse_args(argv)

    import flax.linen as nn
    import jax
    import optax

    import xlair as xla

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.gelu(nn.Dense(64)(x))
            x = nn.gelu(nn.Dense(64)(x))
            return nn.Dense(3)(x)

    rng = np.random.default_rng(0)
    data_x, data_y = spirals(1000, rng)
    model = MLP()
    params = jax.tree_util.tree_map(np.asarray, model.init(jax.random.key(0), data_x[:1]))
    sched = optax.warmup_cosine_decay_schedule(0.0, 1e-2, 20, args.steps)
    opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(sched, weight_decay=1e-4))

    def step(params, state, x, y):
        def loss_fn(p):
            return optax.softmax_cross_entropy_with_integer_labels(model.apply(p, x), y).mean()
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, state = opt.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss

    runs = {"xlair": xla.jit(step, target=args.target), "jax": jax.jit(step)}
    state = {k: (params, jax.tree_util.tree_map(np.asarray, opt.init(params))) for k in runs}
    state["xlair"] = xla.device_put(state["xlair"], target=args.target)   # kept on the device
    losses = {k: [] for k in runs}
    seconds = {k: 0.0 for k in runs}
    for i in range(args.steps):
        idx = rng.integers(0, len(data_x), args.batch)
        for k, fn in runs.items():
            t = time.perf_counter()
            p, s, loss = fn(*state[k], data_x[idx], data_y[idx])
            loss = float(loss)
            seconds[k] += time.perf_counter() - t
            state[k] = (p, s)
            losses[k].append(loss)

    print(f"{'step':>5} {'xlair loss':>11} {'jax loss':>11}")
    for i in list(range(0, args.steps, max(args.steps // 12, 1))) + [args.steps - 1]:
        print(f"{i:5d} {losses['xlair'][i]:11.5f} {losses['jax'][i]:11.5f}")

    def accuracy(p):
        return float((np.argmax(np.asarray(model.apply(p, data_x)), 1) == data_y).mean())
    gap = max(abs(a - b) for a, b in zip(losses["xlair"], losses["jax"]))
    print(f"largest loss difference over {args.steps} steps: {gap:.2e}")
    print(f"accuracy on the whole set: xlair {accuracy(state['xlair'][0]):.3f}, jax {accuracy(state['jax'][0]):.3f}")
    print(f"time in the steps (first includes compiling): xlair {seconds['xlair']:.2f} s, jax {seconds['jax']:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

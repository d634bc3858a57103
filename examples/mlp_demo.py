"""A 2-layer MLP forward pass built with xlair's builder, compiled for the CPU with IREE and
checked against the numpy reference interpreter."""
import time

import numpy as np

import xlair as xla
from xlair import ops

BATCH, IN, HIDDEN, OUT = 8, 64, 128, 10


def add_f32() -> xla.Computation:
    b = xla.Builder("add")
    ops.add(b.parameter(0, xla.Shape(xla.F32, ())), b.parameter(1, xla.Shape(xla.F32, ())))
    return b.build()


def mlp() -> xla.Computation:
    b = xla.Builder("mlp")
    x = b.parameter(0, xla.Shape(xla.F32, (BATCH, IN)), "x")
    w1 = b.parameter(1, xla.Shape(xla.F32, (IN, HIDDEN)), "w1")
    b1 = b.parameter(2, xla.Shape(xla.F32, (HIDDEN,)), "b1")
    w2 = b.parameter(3, xla.Shape(xla.F32, (HIDDEN, OUT)), "w2")
    b2 = b.parameter(4, xla.Shape(xla.F32, (OUT,)), "b2")
    h = ops.tanh(ops.add(ops.dot(x, w1), b1, broadcast_dimensions=[1]))
    logits = ops.add(ops.dot(h, w2), b2, broadcast_dimensions=[1])
    # a numerically stable log-softmax: logits - max - log(sum(exp(logits - max)))
    mx = ops.reduce(logits, ops.constant(b, np.float32(-np.inf)), max_f32(), [1])
    shifted = ops.sub(logits, mx, broadcast_dimensions=[0])
    lse = ops.log(ops.reduce(ops.exp(shifted), ops.constant(b, np.float32(0)), add_f32(), [1]))
    ops.sub(shifted, lse, broadcast_dimensions=[0])
    return b.build()


def max_f32() -> xla.Computation:
    b = xla.Builder("max")
    ops.max(b.parameter(0, xla.Shape(xla.F32, ())), b.parameter(1, xla.Shape(xla.F32, ())))
    return b.build()


def main():
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((BATCH, IN), np.float32),
            rng.standard_normal((IN, HIDDEN), np.float32) / 8,
            rng.standard_normal(HIDDEN, np.float32) / 8,
            rng.standard_normal((HIDDEN, OUT), np.float32) / 8,
            rng.standard_normal(OUT, np.float32) / 8]
    comp = mlp()
    print(comp)
    t = time.perf_counter()
    exe = xla.compile(comp, target="cpu")
    print(f"compiled for cpu in {time.perf_counter() - t:.2f} s: {exe}")
    got = exe(*args)
    ref = xla.interpret(comp, *args)
    np.set_printoptions(precision=4, suppress=True, linewidth=120)
    print("xlair (IREE, cpu), first two rows of log-probabilities:\n", got[:2])
    print("reference interpreter (numpy):\n", ref[:2])
    err = float(np.max(np.abs(got - ref)))
    print(f"max |difference| = {err:.2e}")
    if not np.allclose(got, ref, rtol=1e-4, atol=1e-5):
        raise SystemExit("MISMATCH between the compiled program and the reference interpreter")
    print("OK")


if __name__ == "__main__":
    main()

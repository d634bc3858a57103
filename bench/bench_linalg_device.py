"""Linear algebra on the CPU: LAPACK on the host (python/xlair/lapack.py, the default) against
the device form of xla-expand-linalg (lowering/linalg_expand.py, forced with linalg=device),
and jax.jit, by matrix size: the measurement behind lowering/cost.py LINALG_DEVICE_MAX.

Run: .venv/bin/python bench/bench_linalg_device.py [sizes...]   (prints a markdown table)
"""
import sys
import time

import numpy as np

import xlair as xla
from xlair.computation import Computation
from xlair.dialect.ir import context, ir, lock
from xlair.lowering import pipeline


def device_form(comp: Computation) -> Computation:
    with lock, context():
        module = ir.Module.parse(comp.to_text())
    pipeline.run(module, "xla-simplify", "xla-expand-linalg{target=cpu linalg=device}")
    return Computation(module, comp.name)


def best(fn, args, rounds=7, inner=20):
    fn(*args)
    ts = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(inner):
            fn(*args)
        ts.append((time.perf_counter() - t) / inner)
    return min(ts)


def main(sizes):
    import jax
    import jax.numpy as jnp
    fns = {"cholesky": lambda a: jnp.linalg.cholesky(a @ a.T + a.shape[0] * jnp.eye(a.shape[0])),
           "solve": lambda a: jnp.linalg.solve(a, a[:, :2]), "det": jnp.linalg.det,
           "qr": jnp.linalg.qr, "eigh": lambda a: jnp.linalg.eigh((a + a.T) / 2), "svd": jnp.linalg.svd}
    print("| function | n | LAPACK (host) us | device form us | device / LAPACK | jax.jit us |")
    print("|---|---|---|---|---|---|")
    for name, fn in fns.items():
        for n in sizes:
            a = np.random.default_rng(n).standard_normal((n, n)).astype(np.float32)
            comp = xla.from_jax(fn, a)
            host = xla.compile(comp, "cpu")
            dev = xla.compile(device_form(comp), "cpu")
            jf = jax.jit(fn)
            th, td = best(host, (a,)), best(dev, (a,))
            tj = best(lambda x: jax.block_until_ready(jf(x)), (a,))
            print(f"| {name} | {n} | {th * 1e6:.0f} | {td * 1e6:.0f} | {td / th:.2f} | {tj * 1e6:.0f} |", flush=True)


if __name__ == "__main__":
    main([int(s) for s in sys.argv[1:]] or [4, 16, 64])

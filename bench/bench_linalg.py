"""Linear algebra from JAX (issue 16): solve, eigh and svd of f32[256,256] and of a batch
f32[64,32,32], through xlair.jit (LAPACK on the host, python/xlair/lapack.py) against jax.jit
(XLA:CPU, jaxlib's LAPACK kernels) and numpy, side by side, numpy arrays in and out on every
side.

Run: .venv/bin/python bench/bench_linalg.py   (writes bench/results/linalg.md)
"""
import sys

import numpy as np

import xlair as xla

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from harness import cpu_summary, fmt_ms, geomean, interleaved, write_table  # noqa: E402


def cases():
    import jax.numpy as jnp
    rng = np.random.default_rng(0)
    big = rng.standard_normal((256, 256)).astype(np.float32)
    batch = rng.standard_normal((64, 32, 32)).astype(np.float32)
    sym = lambda a: (a + np.swapaxes(a, -1, -2)) / 2  # noqa: E731
    out = []
    for label, a in (("f32[256,256]", big), ("f32[64,32,32]", batch)):
        rhs = a[..., :4]
        out.append((f"solve {label}", lambda x, b: jnp.linalg.solve(x, b), (a, rhs), np.linalg.solve))
        out.append((f"eigh {label}", jnp.linalg.eigh, (sym(a),), np.linalg.eigh))
        out.append((f"svd {label}", jnp.linalg.svd, (a,), np.linalg.svd))
    return out


def main():
    import jax
    rows, ratios = [], []
    for name, fn, args, np_fn in cases():
        xf, jf = xla.jit(fn), jax.jit(fn)

        def run_x():
            return [np.asarray(v) for v in jax.tree_util.tree_leaves(xf(*args))]

        def run_j():
            return [np.asarray(v) for v in jax.tree_util.tree_leaves(jf(*args))]
        got, want = run_x(), run_j()
        err = max(float(np.max(np.abs(g - w))) / max(float(np.max(np.abs(w))), 1.0) for g, w in zip(got, want))
        t = interleaved({"xlair": run_x, "jax": run_j, "numpy": lambda: np_fn(*args)}, rounds=9, max_time=20)
        r = t["xlair"]["median"] / t["jax"]["median"]
        ratios.append(r)
        rows.append([name, fmt_ms(t["xlair"]["median"]), fmt_ms(t["jax"]["median"]), fmt_ms(t["numpy"]["median"]),
                     f"{r:.2f}", f"{err:.1e}"])
        print(" | ".join(str(x) for x in rows[-1]), flush=True)
    notes = (f"CPU: {cpu_summary()}\n\nTimes in ms (median of interleaved rounds), numpy arrays in and out "
             f"on every side.  xlair/XLA geomean: {geomean(ratios):.2f}, max {max(ratios):.2f}.  "
             "'max rel diff' is the largest difference from jax.jit's result, relative to its largest "
             "magnitude.")
    p = write_table("linalg", "Linear algebra from JAX: xlair.jit against jax.jit (XLA:CPU) and numpy",
                    ["program", "xlair ms", "XLA:CPU ms", "numpy ms", "xlair/XLA", "max rel diff"], rows, notes)
    print(p.read_text())


if __name__ == "__main__":
    main()

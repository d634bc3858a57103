"""Sort f32[1,000,000]: xlair (CPU) against numpy.sort and XLA:CPU (jax.jit), side by side.

Run: .venv/bin/python bench/bench_sort.py   (writes bench/results/sort.md)
"""
import sys
import time

import numpy as np

import xlair as xla
from xlair import F32, S32, Shape
from xlair import ops as O

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from harness import median_time, write_table, xla_cpu  # noqa: E402

N = 1_000_000


def comparator(kind):
    b = xla.Builder(kind)
    x, y = b.parameter(0, Shape(F32, ())), b.parameter(1, Shape(F32, ()))
    if kind == "lt":
        O.lt(x, y)
    elif kind == "lt_total_order":
        O.lt_total_order(x, y)
    else:   # a comparator that is not a single comparison: descending by |x|, ties by value
        ax, ay = O.abs(x), O.abs(y)
        O.or_(O.gt(ax, ay), O.and_(O.eq(ax, ay), O.lt(x, y)))
    return b.build()


def main():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(N).astype(np.float32)
    rows = []
    for kind in ("lt", "lt_total_order", "abs_desc"):
        b = xla.Builder(f"sort_{kind}")
        O.sort(b.parameter(0, Shape(F32, (N,))), comparator(kind), 0, is_stable=(kind != "lt"))
        comp = b.build()
        t = time.perf_counter()
        exe = xla.compile(comp, cache=False)
        cold = time.perf_counter() - t
        got = exe(a)
        if kind == "abs_desc":
            want = a[np.lexsort((a, -np.abs(a)))]
            np_fn = lambda: a[np.lexsort((a, -np.abs(a)))]  # noqa: E731
        else:
            want = np.sort(a)
            np_fn = lambda: np.sort(a)  # noqa: E731
        assert np.array_equal(got, want), f"xlair sort ({kind}) is wrong"
        t_x = median_time(lambda: exe(a), repeats=10)
        t_np = median_time(np_fn, repeats=10)
        jf = None
        try:
            import jax
            import jax.numpy as jnp
            if kind == "lt":
                jf = xla_cpu(lambda v: jnp.sort(v), a)
            elif kind == "lt_total_order":
                jf = xla_cpu(lambda v: jax.lax.sort(v, is_stable=True), a)
            else:
                jf = xla_cpu(lambda v: jax.lax.sort((-jnp.abs(v), v), num_keys=2)[1], a)
        except ImportError:
            pass
        if jf is not None:
            assert np.array_equal(np.asarray(jf()), want)
        t_j = median_time(jf, repeats=5) if jf else None
        rows.append([kind, f"{t_x * 1e3:.1f}", f"{t_np * 1e3:.1f}", f"{t_j * 1e3:.1f}" if t_j else "n/a",
                     f"{t_x / t_np:.2f}", f"{t_x / t_j:.3f}" if t_j else "n/a", f"{cold:.2f}"])
        print(rows[-1], flush=True)
    write_table("sort", "Sort of f32[1,000,000] (CPU)",
                ["comparator", "xlair ms", "numpy ms", "XLA:CPU ms", "xlair/numpy", "xlair/XLA", "xlair cold compile s"],
                rows,
                "numpy: `np.sort` (lt, total order) or `np.lexsort` (abs_desc); XLA:CPU: `jax.jit` of `jnp.sort` / "
                "`lax.sort`. xlair times include the runtime's host-to-device and device-to-host copies of the 4 MB "
                "arrays. lt and lt_total_order take the radix-sort kernel, abs_desc the merge-sort kernel.")


if __name__ == "__main__":
    main()

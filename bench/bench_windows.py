"""Window and indexing ops on the CPU: xlair against numpy and XLA:CPU (jax.jit), side by side.

  conv2d    NHWC f32[1,56,56,64] (*) HWIO f32[3,3,64,64], SAME, stride 1
  max-pool  2x2 / stride 2, VALID, on NHWC f32[8,112,112,64]
  gather    10,000 rows (random, with repeats) of f32[100000,64]

Run: .venv/bin/python bench/bench_windows.py   (writes bench/results/windows.md)
Every result is checked against numpy before it is timed.
"""
import os
import sys
import time

import numpy as np

import xlair as xla
from xlair import F32, S32, Shape
from xlair import ops as O

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from harness import device_call, median_time, write_table, xla_cpu  # noqa: E402

NHWC = xla.ConvolutionDimensionNumbers(0, 3, (1, 2), 2, 3, (0, 1), 0, 3, (1, 2))


def _max():
    b = xla.Builder("max")
    O.max(b.parameter(0, Shape(F32, ())), b.parameter(1, Shape(F32, ())))
    return b.build()


def conv_case(rng):
    x = rng.standard_normal((1, 56, 56, 64)).astype(np.float32)
    w = (rng.standard_normal((3, 3, 64, 64)) / 24).astype(np.float32)
    b = xla.Builder("conv2d_nhwc")
    O.conv_general_dilated(b.parameter(0, Shape(F32, x.shape)), b.parameter(1, Shape(F32, w.shape)),
                           [1, 1], xla.Padding.SAME, [1, 1], [1, 1], NHWC)

    wm = w.reshape(9 * 64, 64)

    def np_fn():                    # im2col: one [3136, 576] x [576, 64] matmul (OpenBLAS)
        xp = np.pad(x, [(0, 0), (1, 1), (1, 1), (0, 0)])
        cols = np.concatenate([xp[:, i:i + 56, j:j + 56, :] for i in range(3) for j in range(3)], axis=-1)
        return (cols.reshape(56 * 56, 9 * 64) @ wm).reshape(1, 56, 56, 64)

    def jax_fn(a, k):
        import jax
        return jax.lax.conv_general_dilated(a, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    flops = 2 * 56 * 56 * 64 * 64 * 9
    return "conv2d NHWC 1x56x56x64 * 3x3x64x64 SAME", b.build(), [x, w], np_fn, jax_fn, flops, 1e-4


def pool_case(rng):
    x = rng.standard_normal((8, 112, 112, 64)).astype(np.float32)
    b = xla.Builder("maxpool")
    O.reduce_window(b.parameter(0, Shape(F32, x.shape)), O.constant(b, np.float32(-np.inf)), _max(),
                    [1, 2, 2, 1], [1, 2, 2, 1], xla.Padding.VALID)

    def np_fn():
        return x.reshape(8, 56, 2, 56, 2, 64).max(axis=(2, 4))

    def jax_fn(a):
        import jax
        import jax.numpy as jnp
        return jax.lax.reduce_window(a, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return "max-pool 2x2/2 f32[8,112,112,64]", b.build(), [x], np_fn, jax_fn, None, 0


def gather_case(rng):
    table = rng.standard_normal((100_000, 64)).astype(np.float32)
    idx = rng.integers(0, 100_000, (10_000, 1)).astype(np.int32)
    b = xla.Builder("gather_rows")
    O.gather(b.parameter(0, Shape(F32, table.shape)), b.parameter(1, Shape(S32, idx.shape)),
             xla.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,),
                                        index_vector_dim=1), [1, 64])

    def np_fn():
        return table[idx[:, 0]]

    def jax_fn(t, i):
        import jax.numpy as jnp
        return jnp.take(t, i[:, 0], axis=0, mode="clip")
    return "gather 10,000 rows of f32[100000,64]", b.build(), [table, idx], np_fn, jax_fn, None, 0


def best_of_rounds(fns: dict, rounds: int = 7, per_round: int = 7) -> dict:
    """Interleaved timing: every round times each contestant (median of `per_round` runs after
    a warm-up); the result is each contestant's best round.  On a machine shared with other
    work, the best round is the closest to the uncontended time, and interleaving exposes all
    contestants to the same load."""
    best = {k: float("inf") for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            best[k] = min(best[k], median_time(fn, repeats=per_round, warmup=1))
    return best


def main():
    rng = np.random.default_rng(0)
    rows = []
    for case in (conv_case, pool_case, gather_case):
        name, comp, args, np_fn, jax_fn, flops, tol = case(rng)
        t = time.perf_counter()
        exe = xla.compile(comp, cache=False)
        cold = time.perf_counter() - t
        want = np_fn()
        got = exe(*args)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"xlair {name}")
        fns = {"dev": device_call(exe, args), "call": lambda: exe(*args), "np": np_fn}
        jf = xla_cpu(jax_fn, *args)
        if jf is not None:
            np.testing.assert_allclose(np.asarray(jf()), want, rtol=tol, atol=tol, err_msg=f"XLA {name}")
            fns["jax"] = jf
        t = best_of_rounds(fns)
        t_dev, t_call, t_np, t_j = t["dev"], t["call"], t["np"], t.get("jax")
        rate = f" ({flops / t_dev / 1e9:.0f} GFLOP/s)" if flops else ""
        rows.append([name, f"{t_dev * 1e3:.2f}{rate}", f"{t_call * 1e3:.2f}", f"{t_np * 1e3:.2f}",
                     f"{t_j * 1e3:.2f}" if t_j else "n/a", f"{t_dev / t_np:.2f}",
                     f"{t_dev / t_j:.2f}" if t_j else "n/a", f"{cold:.2f}"])
        print(rows[-1], flush=True)
    load = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else ["?"]
    write_table("windows", "Convolution, max-pool and gather (CPU)",
                ["case", "xlair ms (device inputs)", "xlair ms (numpy in/out)", "numpy ms", "XLA:CPU ms",
                 "xlair/numpy", "xlair/XLA", "xlair cold compile s"], rows,
                NOTES + f"\nLoad average while measuring: {' '.join(load)} (the machine is shared).\n")


NOTES = """Timing: each contestant's best of 7 interleaved rounds, a round being the median of 7
runs (see best_of_rounds); "device inputs" invokes the compiled function on inputs already in
IREE device buffers, as XLA:CPU is timed (`jax.device_put` first, `block_until_ready` after);
"numpy in/out" is `Executable.__call__`, including the copies of the inputs into device buffers
and of the result back (25.7 MB of input for the max-pool and the gather).  Ratios use the
device-input time.  numpy: conv as im2col + one matmul (OpenBLAS), max-pool as `reshape(...).max`,
gather as fancy indexing.  XLA:CPU: `jax.jit` of `lax.conv_general_dilated`,
`lax.reduce_window(max)`, `jnp.take(mode="clip")`.  xlair compiles with the cpu target's flags
(`--iree-llvmcpu-target-cpu=host --iree-opt-data-tiling --iree-llvmcpu-enable-ukernels=all`).

What xlair hands IREE (see tests/filecheck/lowering/): conv2d is `tensor.pad` +
`linalg.conv_2d_nhwc_hwcf` (no transposes for NHWC/HWIO); max-pool is `linalg.pooling_nhwc_max` on
the input as it is; gather is a small `linalg.generic` computing the clamped i64 row indices, then
`iree_linalg_ext.gather` of whole rows.

Why the gather looks the way it does (measured here, 10,000 rows of f32[100000,64], device
inputs): as one `linalg.generic` over the [10000, 64] result whose body clamps the row index and
reads `tensor.extract(table[row, j])` it took 0.76 ms with the index read by `tensor.extract` in
the body and 0.48 ms with the index as a broadcast input of the generic (IREE vectorizes the
element reads as a gather, not as row loads); `iree_linalg_ext.gather` takes 0.10 ms, since IREE
vectorizes it into loads of whole rows (all three with the cpu target's flags above).  The
generic form stays for targets whose IREE backend cannot lower `iree_linalg_ext.gather` (SPIR-V).
The NHWC conv and the pool needed no such change: the named ops reach IREE's tuned paths as
they are.

The machine is shared with other jobs (the load average below): IREE's two worker threads are
preempted now and then, which moves xlair's conv between 0.7 and 4 ms from round to round while
XLA:CPU (whose conv ran at a steady ~1.2 ms) is less affected; the best round is reported.
"""



if __name__ == "__main__":
    main()

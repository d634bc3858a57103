"""Running one program of the real-program suite on xlair and on XLA:CPU (jax.jit), and
comparing the two leaf by leaf."""
from __future__ import annotations

import numpy as np

from xlair.values import is_prng_key

from model_programs import PROGRAMS, Program


def leaves(tree):
    """The leaves as numpy arrays (a typed PRNG key, whose dtype is not numpy's, as its data;
    bench/bench_models.py times this on both sides)."""
    import jax
    return [np.asarray(jax.random.key_data(x) if is_prng_key(getattr(x, "dtype", None)) else x)
            for x in jax.tree_util.tree_leaves(tree)]


def reference(prog: Program, fn, args):
    """XLA:CPU's result: jax.jit on the same arguments."""
    import jax
    return leaves(jax.jit(fn)(*args))


def run_xlair(prog: Program, fn, args, target: str = "cpu"):
    import xlair as xla
    return leaves(xla.jit(fn, target=target)(*args))


def run_xlair_on_device(prog: Program, fn, args, target: str = "cpu") -> tuple[list, list[str]]:
    """The program called twice on its arguments put on the device (`xla.device_put`): the
    second call's result leaves, read back, and what went wrong besides their values: a result
    leaf that is not an `xla.Array`, an argument whose values changed (IREE writing into an
    argument's buffer, lowering/aliasing.py), or two calls that disagree."""
    import jax
    import xlair as xla
    before = leaves(args)
    put = xla.device_put(args, target=target)
    f = xla.jit(fn, target=target)
    first = f(*put)
    second = f(*put)
    # (a typed PRNG key stays a JAX key array: xlair.jit passes and returns its data)
    problems = [f"result leaf {i} is a {type(x).__name__}, not an xla.Array"
                for i, x in enumerate(jax.tree_util.tree_leaves(second))
                if not isinstance(x, xla.Array) and not is_prng_key(x.dtype)]
    problems += [f"argument leaf {i} changed on the device" for i, (a, b) in
                 enumerate(zip(before, leaves(put))) if not np.array_equal(a, b, equal_nan=True)]
    got, again = leaves(second), leaves(first)
    problems += [f"result leaf {i} differs between two calls" for i, (a, b) in enumerate(zip(got, again))
                 if not np.array_equal(a, b, equal_nan=True)]
    return got, problems


def mismatches(prog: Program, got, want) -> list[str]:
    """Each leaf that differs, described; [] when all match.  Floats within rtol and a scaled
    atol (below); integers and booleans exactly."""
    if len(got) != len(want):
        return [f"{len(got)} output leaves, jax.jit gives {len(want)}"]
    out = []
    floats = [np.abs(w[np.isfinite(w)].astype(np.float64)) for w in want
              if w.dtype.kind in "fc" or w.dtype.name == "bfloat16"]
    overall = max((float(a.max()) for a in floats if a.size), default=1.0)
    for i, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape or g.dtype != w.dtype:
            out.append(f"leaf {i}: {g.dtype}{list(g.shape)}, jax.jit gives {w.dtype}{list(w.shape)}")
            continue
        if w.dtype.kind in "fc" or w.dtype.name == "bfloat16":
            g64, w64 = g.astype(np.complex128 if w.dtype.kind == "c" else np.float64), \
                w.astype(np.complex128 if w.dtype.kind == "c" else np.float64)
            finite = np.isfinite(w64)
            # atol is scaled by the leaf's largest magnitude, or by 1% of the largest among all
            # leaves when that is more: a gradient that is zero in exact arithmetic (the
            # attention key bias's) is rounding noise on both sides
            scale = max(float(np.max(np.abs(w64[finite]), initial=0.0)), 0.01 * overall)
            bad = ~np.isclose(g64, w64, rtol=prog.rtol, atol=prog.atol * scale, equal_nan=True)
            if bad.any():
                j = np.unravel_index(np.argmax(np.where(bad, np.abs(g64 - w64), -1)), w.shape)
                out.append(f"leaf {i} {w.dtype}{list(w.shape)}: {int(bad.sum())} elements differ, "
                           f"e.g. at {tuple(int(t) for t in j)}: {g64[j]} vs jax {w64[j]}")
        elif not np.array_equal(g, w):
            out.append(f"leaf {i} {w.dtype}{list(w.shape)}: {int((g != w).sum())} elements differ")
    return out


__all__ = ["PROGRAMS", "leaves", "reference", "run_xlair", "run_xlair_on_device", "mismatches"]

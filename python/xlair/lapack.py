"""xlair's built-in CustomCall targets for linear algebra, run by LAPACK on the host.

JAX lowers jnp.linalg / jax.scipy.linalg on CPU to `stablehlo.custom_call
@lapack_<s|d|c|z><routine>_ffi` (jaxlib's typed-FFI kernels over LAPACK); XLA's own expanders
know the decomposition targets `Qr`, `ProductOfElementaryHouseholderReflectors`,
`LuDecomposition` and `Eigh`.  The importer (xlair.stablehlo) turns each into an
`xla.custom_call` whose `opaque` string carries the call's attributes (JSON of the FFI
attributes for the LAPACK targets, XLA's backend_config string for the others); this module
registers a target of that name which runs the routine on numpy arrays through scipy's LAPACK
(the library jaxlib's kernels call too), one matrix of a batch at a time.

The targets act on logical arrays: a matrix operand is the matrix jaxlib's kernel reads from
its column-major buffer (the importer checks the layouts say so).  Results follow jaxlib's
conventions: 1-based pivots (`getrf`, `geqp3`), real `geev` eigenvectors unpacked to complex,
the `info` of every matrix (a failed factorisation leaves its results as LAPACK does; JAX's
program then fills them with NaN).
"""
from __future__ import annotations

import json
from typing import Callable

import numpy as np

from xlair.dialect.checks import XlaError, require_floating
from xlair.dialect.types import Shape, element_type

from .effects import register_custom_call

_PREFIX = {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128}
_REAL, _COMPLEX, _ALL = "sd", "cz", "sdcz"


class Routine:
    """One routine: the per-matrix computation, the ranks of its operands' matrix parts (the
    rest are batch dimensions) and the type prefixes it exists for."""

    def __init__(self, name: str, fn: Callable, core: tuple, types: str):
        self.name, self.fn, self.core, self.types = name, fn, core, types


#: target name -> (Routine, numpy dtype of its LAPACK prefix, or None to take operand 0's)
TARGETS: dict[str, tuple] = {}


_PREFIX_OF = {np.dtype(v): k for k, v in _PREFIX.items()}


def _lapack(name: str, dtype):
    from scipy.linalg import blas, lapack
    lib = blas if name == "trsm" else lapack
    return getattr(lib, _PREFIX_OF[np.dtype(dtype)] + name)


def _char(cfg: dict, key: str, default: str) -> str:
    v = cfg.get(key, ord(default))
    return chr(v) if isinstance(v, int) else str(v)


def _fit(x, shape: Shape):
    """x as the result leaf `shape` (per matrix), or zeros where LAPACK computed nothing."""
    x = np.asarray(x)
    if x.shape != shape.dims:
        return np.zeros(shape.dims, shape.dtype)
    return x.astype(shape.dtype, copy=False)


# -- the routines: fn(lapack getter, operands of one matrix, config, result leaves) -> results ----
def _getrf(f, args, cfg, outs):
    lu, piv, info = f("getrf")(args[0])
    return lu, piv + 1, info


def _trsm(f, args, cfg, outs):
    a, b = args
    trans = {"N": 0, "T": 1, "C": 2}[_char(cfg, "trans_x", "N")]
    lower = _char(cfg, "uplo", "L") == "L"
    if a.flags.c_contiguous and not a.flags.f_contiguous and (trans != 2 or not np.iscomplexobj(a)):
        # the row-major A is the column-major A^T that LAPACK reads without a copy (scipy's
        # wrapper copied A into column-major order: 80 us of a 256x256 solve's ~95): solve
        # with A^T transposed, its triangle the other one
        a, trans, lower = a.T, 1 - min(trans, 1), not lower
    return (f("trsm")(1.0, a, b, side=int(_char(cfg, "side", "L") == "R"), lower=int(lower), trans_a=trans,
                      diag=int(_char(cfg, "diag", "N") == "U")),)


def _potrf(f, args, cfg, outs):
    c, info = f("potrf")(args[0], lower=int(_char(cfg, "uplo", "L") == "L"), clean=0)
    return c, info


def _geqrf(f, args, cfg, outs):
    qr, tau, _, _ = f("geqrf")(args[0])
    return qr, tau


def _orgqr(name):
    def run(f, args, cfg, outs):
        q, _, _ = f(name)(args[0], args[1])
        return (q,)
    return run


def _syevd(name):
    def run(f, args, cfg, outs):
        want_v = _char(cfg, "mode", "V") == "V"
        w, v, info = f(name)(args[0], compute_v=int(want_v), lower=int(_char(cfg, "uplo", "L") == "L"))
        return _fit(v, outs[0]), w, info
    return run


def _svd(name):
    def run(f, args, cfg, outs):
        mode = _char(cfg, "mode", "A")
        u, s, vt, info = f(name)(args[0], compute_uv=int(mode != "N"), full_matrices=int(mode == "A"))
        return np.zeros(outs[0].dims, outs[0].dtype), s, _fit(u, outs[2]), _fit(vt, outs[3]), info
    return run


def _complex_vectors(wi, v):
    """Real geev eigenvectors as complex ones: a conjugate pair (wi[j] > 0) is stored as the
    real and imaginary parts in columns j and j + 1."""
    out = v.astype(np.result_type(v.dtype, np.complex64))
    j = 0
    while j < len(wi):
        if wi[j] != 0 and j + 1 < len(wi):
            re, im = v[:, j], v[:, j + 1]
            out[:, j], out[:, j + 1] = re + 1j * im, re - 1j * im
            j += 2
        else:
            j += 1
    return out


def _geev(f, args, cfg, outs):
    left, right = (_char(cfg, k, "N") == "V" for k in ("compute_left", "compute_right"))
    if np.iscomplexobj(args[0]):
        w, vl, vr, info = f("geev")(args[0], compute_vl=int(left), compute_vr=int(right))
        return w, _fit(vl, outs[1]), _fit(vr, outs[2]), info
    wr, wi, vl, vr, info = f("geev")(args[0], compute_vl=int(left), compute_vr=int(right))
    vl = _complex_vectors(wi, vl) if left else vl
    vr = _complex_vectors(wi, vr) if right else vr
    return wr, wi, _fit(vl, outs[2]), _fit(vr, outs[3]), info


def _gees(f, args, cfg, outs):
    if _char(cfg, "sort", "N") != "N":
        raise XlaError(f"'xla.custom_call' gees sort must be 'N' (no eigenvalue ordering: a select "
                       f"function cannot be passed); got {_char(cfg, 'sort', 'N')!r}")
    want_v = int(_char(cfg, "mode", "V") == "V")
    if np.iscomplexobj(args[0]):
        t, sdim, w, vs, _, info = f("gees")(lambda *x: 0, args[0], compute_v=want_v, sort_t=0)
        return t, _fit(vs, outs[1]), w, sdim, info
    t, sdim, wr, wi, vs, _, info = f("gees")(lambda *x: 0, args[0], compute_v=want_v, sort_t=0)
    return t, _fit(vs, outs[1]), wr, wi, sdim, info


def _geqp3(f, args, cfg, outs):
    a, jpvt = args
    if np.any(jpvt != 0):
        raise XlaError("'xla.custom_call' geqp3 jpvt must be all zeros (every column free to pivot; "
                       f"fixed leading columns are not supported); got {jpvt.tolist()}")
    qr, piv, tau, _, _ = f("geqp3")(a)
    return qr, piv, tau


def _gehrd(f, args, cfg, outs):
    a = args[0]
    lo, hi = int(cfg.get("low", 1)), int(cfg.get("high", a.shape[-1]))
    ht, tau, info = f("gehrd")(a, lo=lo - 1, hi=hi - 1)
    return ht, _fit(tau[: outs[1].dims[0]], outs[1]), info


def _gtsv(f, args, cfg, outs):
    # JAX's dl and du have length n (dl[0] and du[n-1] unused); LAPACK's have n - 1
    dl, d, du, b = args
    du2, d2, du_out, x, info = f("gtsv")(dl[1:], d, du[:-1], b)
    dl_out = np.concatenate([dl[:1], du2, np.zeros(max(len(dl) - 1 - len(du2), 0), dl.dtype)])
    return dl_out, d2, np.concatenate([du_out, du[-1:]]), x, info


def _sytrd(name):
    def run(f, args, cfg, outs):
        c, d, e, tau, info = f(name)(args[0], lower=int(_char(cfg, "uplo", "L") == "L"))
        return c, d, e, tau, info
    return run


# -- XLA's decomposition targets ------------------------------------------------------------
def _lu_decomposition(f, args, cfg, outs):
    lu, piv, info = f("getrf")(args[0])
    perm = np.arange(args[0].shape[0], dtype=np.int32)
    for i, p in enumerate(piv):
        perm[i], perm[p] = perm[p], perm[i]
    return lu, piv, perm


def _eigh(f, args, cfg, outs):
    parts = cfg.get("text", "").split(",")
    if len(parts) != 4:
        raise XlaError("'xla.custom_call' Eigh opaque must be 'lower,sort_eigenvalues,max_iter,tol' "
                       f"(XLA's backend_config); got {cfg.get('text', '')!r}")
    name = "heevd" if np.iscomplexobj(args[0]) else "syevd"
    w, v, info = f(name)(args[0], compute_v=1, lower=int(int(parts[0]) != 0))
    if info != 0:
        v, w = np.full_like(v, np.nan), np.full_like(w, np.nan)
    return v, w


def _orgqr_any(f, args, cfg, outs):
    name = "ungqr" if np.iscomplexobj(args[0]) else "orgqr"
    return _orgqr(name)(f, args, cfg, outs)


def _add(name: str, fn: Callable, core: tuple, types: str) -> None:
    r = Routine(name, fn, core, types)
    for t in types:
        TARGETS[f"lapack_{t}{name}_ffi"] = (r, _PREFIX[t])


_add("getrf", _getrf, (2,), _ALL)
_add("trsm", _trsm, (2, 2), _ALL)
_add("potrf", _potrf, (2,), _ALL)
_add("geqrf", _geqrf, (2,), _ALL)
_add("orgqr", _orgqr("orgqr"), (2, 1), _REAL)
_add("ungqr", _orgqr("ungqr"), (2, 1), _COMPLEX)
_add("syevd", _syevd("syevd"), (2,), _REAL)
_add("heevd", _syevd("heevd"), (2,), _COMPLEX)
_add("gesdd", _svd("gesdd"), (2,), _ALL)
_add("gesvd", _svd("gesvd"), (2,), _ALL)
_add("geev", _geev, (2,), _ALL)
_add("gees", _gees, (2,), _ALL)
_add("geqp3", _geqp3, (2, 1), _ALL)
_add("gehrd", _gehrd, (2,), _ALL)
_add("gtsv", _gtsv, (1, 1, 1, 2), _ALL)
_add("sytrd", _sytrd("sytrd"), (2,), _REAL)
_add("hetrd", _sytrd("hetrd"), (2,), _COMPLEX)
for _name, _fn, _core in (("Qr", _geqrf, (2,)), ("ProductOfElementaryHouseholderReflectors", _orgqr_any, (2, 1)),
                          ("LuDecomposition", _lu_decomposition, (2,)), ("Eigh", _eigh, (2,))):
    TARGETS[_name] = (Routine(_name, _fn, _core, _ALL), None)


#: The routines (and XLA's targets) that the GPU targets run as device code, in the real
#: types (LAPACK prefixes s, d), and those of them also in the complex types (c, z; XLA's
#: targets of c64, c128): what lowering/linalg_expand.py expands.  Kept here, as data, for
#: xlair.targets, which the run side imports (tests/e2e/test_linalg_device.py checks that the
#: two agree).
DEVICE_ROUTINES = frozenset({"potrf", "trsm", "getrf", "geqrf", "orgqr", "ungqr", "syevd", "heevd", "gesdd",
                             "gesvd", "gtsv", "sytrd", "hetrd", "geqp3", "gehrd", "geev", "gees", "Qr",
                             "ProductOfElementaryHouseholderReflectors", "LuDecomposition", "Eigh"})
DEVICE_TYPES = _REAL
DEVICE_COMPLEX = frozenset({"potrf", "trsm", "getrf", "LuDecomposition", "geqrf", "ungqr", "Qr",
                            "ProductOfElementaryHouseholderReflectors", "heevd", "Eigh", "gesdd", "gesvd", "gtsv",
                            "hetrd", "geqp3", "gehrd", "geev", "gees"})


def on_device(target_name: str, operand_types) -> bool:
    """Whether a call of `target_name` with operands of the xla element type names
    `operand_types` runs as device code on the GPU targets."""
    routine = routine_of(target_name)
    if routine not in DEVICE_ROUTINES:
        return False
    if routine in DEVICE_COMPLEX:
        return True
    if target_name.startswith("lapack_"):
        return target_name[len("lapack_")] in DEVICE_TYPES
    return not set(operand_types) & {"c64", "c128"}


def routine_of(target_name: str) -> str | None:
    """The LAPACK routine (or XLA decomposition) a built-in target runs, or None."""
    hit = TARGETS.get(target_name)
    return hit[0].name if hit else None


def config_of(opaque: str) -> dict:
    """The attributes of a call: the importer's JSON object, or {'text': XLA's string}."""
    if not opaque:
        return {}
    try:
        cfg = json.loads(opaque)
    except ValueError:
        return {"text": opaque}
    return cfg if isinstance(cfg, dict) else {"text": opaque}


def _filled(s: Shape, g) -> np.ndarray:
    out = np.zeros(s.dims, s.dtype)
    out[()] = g
    return out


def _target(target_name: str):
    routine, dtype = TARGETS[target_name]

    def run(*args, opaque: str = "", result: Shape):
        cfg = config_of(opaque)
        args = [np.asarray(a) for a in args]
        if len(args) != len(routine.core):
            raise XlaError(f"'xla.custom_call' {target_name} takes {len(routine.core)} operands; "
                           f"got {len(args)}")
        dt = np.dtype(dtype) if dtype is not None else args[0].dtype
        if args[0].dtype != dt:
            raise XlaError(f"'xla.custom_call' {target_name} operand 0 must be {dt}; got {args[0].dtype}")
        et = element_type(dt)
        require_floating(target_name, et)
        if et.is_float and et.bits < 32:
            # XLA's decomposition targets of F16, BF16 (or F8: XLA's expanders take any float
            # type; LAPACK has none under 32 bits: a BF16 Qr raised KeyError, shape_poly_test's
            # vmap_qr harnesses) are computed in F32, each result rounded once to its type
            dt = np.dtype(np.float32)
            args = [a.astype(dt) if a.dtype == et.dtype else a for a in args]
        nb = args[0].ndim - routine.core[0]
        if nb < 0 or any(a.ndim < c for a, c in zip(args, routine.core)):
            raise XlaError(f"'xla.custom_call' {target_name} operands must have ranks of at least "
                           f"{list(routine.core)}; got shapes {[list(a.shape) for a in args]}")
        batch = args[0].shape[:nb]
        leaves = result.leaves()
        per = [Shape(s.element_type, s.dims[nb:]) for s in leaves]
        f = (lambda name: _lapack(name, dt))
        if not batch and all(a.size for a in args):
            # one matrix: the operands as they are (scipy's wrappers copy what LAPACK writes
            # into, as overwrite_* is never set) and LAPACK's results as they are where they
            # have the result's shape and type (the host call copies them into the program)
            got = routine.fn(f, args, cfg, per)
            outs = [g if isinstance(g, np.ndarray) and g.shape == s.dims and g.dtype == s.dtype
                    else _filled(s, g) for g, s in zip(got, leaves)]
            return outs[0] if not result.is_tuple else tuple(outs)
        outs = [np.zeros(s.dims, s.dtype) for s in leaves]
        cores = [np.broadcast_to(a, batch + a.shape[a.ndim - c:]) for a, c in zip(args, routine.core)]
        for idx in np.ndindex(*batch):
            ins = [np.array(a[idx]) for a in cores]
            if any(a.size == 0 for a in ins):
                continue        # an empty matrix: nothing to factor, info 0
            got = routine.fn(f, ins, cfg, per)
            for o, g in zip(outs, got):
                o[idx] = g
        return outs[0] if not result.is_tuple else tuple(outs)
    run.__name__ = target_name
    return run


for _name in TARGETS:
    register_custom_call(_name, _target(_name))

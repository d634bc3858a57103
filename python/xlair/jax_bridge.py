"""JAX functions on xlair: JAX lowers them to StableHLO, xlair imports and compiles that.

    import jax.numpy as jnp, xlair
    comp = xlair.from_jax(lambda x, y: jnp.sin(x) @ y, x, y)    # an xla Computation
    f = xlair.jit(lambda x, y: jnp.sin(x) @ y)                  # compiled per argument signature
    f(x, y)                                                     # numpy arrays in, numpy (pytree) out
    f(xlair.device_put(x), y)                                   # xla.Arrays out, left on the device

JAX is an optional extra (`pip install 'xlair[jax]'`); it is imported when these functions are
called, never when xlair is imported.  The function is lowered with `jax.jit(fn,
keep_unused=True).lower(*args)`, so every argument leaf is a parameter of the computation in
pytree order; arguments are converted to the dtypes JAX lowered them with (without
`jax_enable_x64`, float64 becomes float32 as in JAX).  What JAX lowers to ops xlair lacks
(e.g. `custom_call`s to LAPACK) raises `xlair.stablehlo.Unsupported`.
"""
from __future__ import annotations

import functools
import threading

import numpy as np

from xlair.dialect.checks import XlaError

from . import arrays as _arrays, packed_entry
from .arrays import Array, pack_run
from .artifacts import cache_get, cache_put
from .compile import compile_vmfb, loop_fallbacks, text_key
from .computation import Computation
from .runtime import Executable
from .stablehlo import from_stablehlo
from .targets import target as find_target
from .values import is_prng_key


@functools.lru_cache(maxsize=1)
def _jax():
    """The jax module (kept: an import statement on every call of a jitted function cost
    ~0.3 us; a failed import is not kept, and raises again)."""
    try:
        import jax
    except ImportError:
        raise XlaError("xlair.from_jax and xlair.jit need JAX: pip install 'xlair[jax]'") from None
    return jax


def _name(fn) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


def lower(fn, *args, static_argnums=(), **kwargs):
    """JAX's `Lowered` object of `fn` at these arguments (all argument leaves kept)."""
    jax = _jax()
    if not callable(fn):
        raise XlaError(f"from_jax takes a function; got {type(fn).__name__}")
    try:
        return jax.jit(fn, keep_unused=True, static_argnums=static_argnums).lower(*args, **kwargs)
    except XlaError:
        raise
    except Exception as e:          # noqa: BLE001  (JAX's own errors: tracing, shapes, types)
        raise XlaError(f"JAX could not lower {_name(fn)}: {type(e).__name__}: {e}") from None


def from_jax(fn, *example_args, static_argnums=(), **example_kwargs) -> Computation:
    """The xla Computation of a JAX function at example arguments (arrays or
    `jax.ShapeDtypeStruct`s); its parameters are the arguments' leaves in pytree order and its
    result the output leaves (a tuple when there are several)."""
    lowered = lower(fn, *example_args, static_argnums=static_argnums, **example_kwargs)
    comp = from_stablehlo(lowered.as_text())
    comp.name = _name(fn)
    return comp


class Jitted:
    """`xlair.jit(fn)`: call it like `fn`; each new signature (pytree structure, shapes, dtypes,
    static arguments) is lowered by JAX, imported and compiled once (and the artifact is kept
    in xlair's on-disk compile cache)."""

    def __init__(self, fn, target: str = "cpu", static_argnums=(), **compile_options):
        if not callable(fn):
            raise XlaError(f"xlair.jit takes a function; got {type(fn).__name__}")
        self.fn, self.target = fn, target
        self.static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        self.compile_options = compile_options
        self._cache: dict = {}
        self._lock = threading.Lock()
        #: (tree, static arguments, executable's call path, output tree, arrays.packs_made) of
        #: the last call
        self._last = None
        self.__name__ = _name(fn)
        self.__doc__ = getattr(fn, "__doc__", None)

    def _split(self, args):
        if not self.static_argnums:
            return args, ()
        n = len(args)
        static = {i % n if n else i for i in self.static_argnums}
        return [a for i, a in enumerate(args) if i not in static], tuple(
            (i, args[i]) for i in sorted(static) if i < n)

    def __call__(self, *args, **kwargs):
        tree_util = _jax().tree_util
        dynamic, static = self._split(args) if self.static_argnums else (args, ())
        leaves, tree = tree_util.tree_flatten((dynamic, kwargs))
        last = self._last
        if last is not None and last[0] == tree and last[1] == static and last[4] == _arrays.packs_made:
            # the structure of the last call: the executable's call path checks each leaf's
            # type, dtype and dims itself (and says None on any other), which is what the key
            # below would tell (5 us of a call with 50 leaves, 0.5-1 with a few)
            outs = last[2](leaves)
            if type(outs) is list:
                return tree_util.tree_unflatten(last[3], outs)
        key = (tree, static, tuple(map(_signature, leaves)))
        entry = self._cache.get(key)        # (a dict lookup is atomic: the lock is for misses)
        if entry is None or entry[4] != _arrays.packs_made:
            with self._lock:
                entry = self._entry(key, args, kwargs, leaves)
        exe, dtypes, out_tree, direct = entry[:4]
        keys = entry[6]
        if direct and exe._quick is not None:
            self._last = (tree, static, exe._quick if keys is None else keys.quick(exe._quick), out_tree, entry[4])
        if keys is None:
            flat = [x if type(x) is Array and x.dtype == dt else np.asarray(x, dtype=dt)
                    for x, dt in zip(leaves, dtypes)]
        else:           # typed PRNG keys are passed as their data (as JAX lowers them)
            flat = [_key_data(x) if dt is _KEY else
                    x if type(x) is Array and x.dtype == dt else np.asarray(x, dtype=dt)
                    for x, dt in zip(leaves, dtypes)]
        if direct:       # the key fixed every leaf's shape and dtype: no check again
            outs = exe.call_leaves(flat)
        else:
            out = exe(*flat)
            outs = list(out) if out_tree.num_leaves > 1 else [out]
        if keys is not None:
            keys.wrap(outs)
        return tree_util.tree_unflatten(out_tree, outs)

    def _entry(self, key, args, kwargs, leaves) -> list:
        """The cache entry of a signature (under self._lock): [executable, leaf dtypes (_KEY
        for a typed PRNG key), output tree, direct, the count of packs made when its leaves
        were last looked at, the runs of packed leaves it was compiled for, or None for a
        program not worth packing (packed_entry.worth), and None for a program without typed PRNG
        keys, else its _Keys].
        A new `xla.device_put` pytree since then (arrays.packs_made) is looked for among the
        leaves: a run of leaves that are one pack, not yet compiled for, compiles the program
        again to take it packed (once a run)."""
        made = _arrays.packs_made
        entry = self._cache.get(key)
        if entry is not None and entry[4] == made:
            return entry
        run = pack_run(leaves)
        if entry is None or (run is not None and entry[5] is not None and run not in entry[5]):
            exe, dtypes, out_tree, direct, light, keys = self._compile(args, kwargs, run)
            runs = ((entry[5] if entry is not None else set()) | {run}) if light else None
            entry = self._cache[key] = [exe, dtypes, out_tree, direct, made, runs, keys]
        entry[4] = made
        return entry

    def _compile(self, args, kwargs, pack=None):
        """(executable, leaf dtypes, output tree, whether calls hand it leaves directly, whether
        the program is light enough to be worth packing, its typed PRNG keys: see _entry);
        `pack`: the run of argument leaves that are one `xla.device_put` pytree
        (arrays.pack_run), which the executable then also takes packed (xlair.packing) when so."""
        jax = _jax()
        args, kwargs = jax.tree_util.tree_map(_abstract, (args, kwargs))
        lowered = lower(self.fn, *args, static_argnums=self.static_argnums, **kwargs)
        if lowered.out_tree.num_leaves == 0:
            raise XlaError(f"{self.__name__} returns no array; an XLA computation returns one or more")
        exe = compile_text(lowered.as_text(), self.__name__, self.target, pack, self.compile_options)
        light = exe.work is not None and exe.work <= packed_entry.MAX_WORK
        avals = jax.tree_util.tree_leaves(lowered.in_avals)
        dtypes = [_KEY if is_prng_key(a.dtype) else np.dtype(a.dtype) for a in avals]
        outs = jax.tree_util.tree_leaves(lowered.out_info)
        out_keys = [(i, o.dtype) for i, o in enumerate(outs) if is_prng_key(o.dtype)]
        keys = _Keys([i for i, dt in enumerate(dtypes) if dt is _KEY], out_keys) if _KEY in dtypes or out_keys \
            else None
        # the executable's leaves are JAX's argument and output leaves, one for one (no tuple
        # parameter or token; a typed key as its data): calls hand it leaves directly
        direct = (len(exe.parameter_shapes) == len(avals) and exe.replicas == 1
                  and len(exe.result_shape.leaves()) == lowered.out_tree.num_leaves
                  and all(not s.is_tuple and not s.is_token and (s.dtype, tuple(s.dims)) == _wire(dt, a)
                          for s, dt, a in zip(exe.parameter_shapes, dtypes, avals)))
        return exe, dtypes, lowered.out_tree, direct, light, keys

    def lower(self, *args, **kwargs) -> Computation:
        """The xla Computation for these arguments (without compiling it)."""
        return from_jax(self.fn, *args, static_argnums=self.static_argnums, **kwargs)


#: the leaf dtype of a typed PRNG key (`jax.random.key`): JAX lowers a key array as its data,
#: uint32 of the key's shape and the implementation's key shape; xlair.jit passes
#: the key's data (_key_data) and makes such results keys again (_key_maker)
_KEY = object()


def _wire(dt, aval) -> tuple:
    """(dtype, dims) of the executable's parameter for a leaf of dtype `dt` (_KEY: a typed key,
    passed as its uint32 data: the key's dims, then the implementation's key shape)."""
    if dt is _KEY:
        impl = getattr(aval.dtype, "_impl", None)
        return np.dtype(np.uint32), tuple(aval.shape) + tuple(getattr(impl, "key_shape", (None,)))
    return dt, tuple(aval.shape)


def _key_data(key) -> np.ndarray:
    """A typed key's data as numpy: the key array's own uint32 array where it has one (JAX's
    PRNGKeyArray keeps it as `_base_array`; a copy back without a JAX dispatch, which
    `jax.random.key_data` is: tens of microseconds a call)."""
    base = getattr(key, "_base_array", None)
    return np.asarray(base if base is not None else _jax().random.key_data(key))


def _key_maker(dtype):
    """A function making a typed key array of `dtype` from its data: JAX's key array class
    given the data as a JAX array of the default device, made by JAX's batched transfer with
    the data's abstract value and the device's sharding worked out once for each shape, dtype
    and device (given numpy, the class works them out each time: 9 of a key's 13 us a call, 17
    of 23 right after an IREE call), when that makes the key `jax.random.wrap_key_data` makes
    (a JAX dispatch, tens of microseconds), else wrap_key_data itself."""
    jax = _jax()
    impl = getattr(dtype, "_impl", None)

    def wrap(data):
        return jax.random.wrap_key_data(np.asarray(data), impl=impl)
    if impl is None or not hasattr(impl, "key_shape"):
        return wrap
    zeros = np.zeros(tuple(impl.key_shape), np.uint32)
    cls = type(wrap(zeros))
    try:
        from jax._src import core
        from jax._src.interpreters import pxla
        from jax._src.sharding_impls import SingleDeviceSharding
        put, default_device = pxla.batched_device_put, pxla.get_default_device
        made: dict = {}             # (dims, dtype, device) -> (abstract value, sharding)

        def key(data):
            data = np.asarray(data)
            device = default_device()
            known = made.get((data.shape, data.dtype, device))
            if known is None:
                known = made[data.shape, data.dtype, device] = (core.ShapedArray(data.shape, data.dtype),
                                                                SingleDeviceSharding(device))
            return cls(impl, put(known[0], known[1], [data], [device], committed=False))
        sample = key(zeros)
        same = sample.dtype == dtype and np.array_equal(_key_data(sample), zeros)
    except Exception:           # (JAX's private modules or class differ: the public way)
        same = False
    return key if same else wrap


class _Keys:
    """The typed PRNG keys of a program's leaves: the argument leaves that are keys (passed as
    their data) and a maker for each result leaf that is one."""

    def __init__(self, ins: list[int], outs: list[tuple]):
        self.ins = ins
        self.outs = [(i, _key_maker(dt)) for i, dt in outs]

    def wrap(self, outs: list) -> None:
        for i, make in self.outs:
            outs[i] = make(outs[i])

    def quick(self, call):
        """The executable's call path `call` taking and giving keys (see runtime._call_path)."""
        ins = self.ins

        def keyed(leaves):
            if ins:
                leaves = list(leaves)
                for i in ins:
                    base = getattr(leaves[i], "_base_array", None)
                    if base is None:
                        return None             # (not a key array: the general path)
                    leaves[i] = np.asarray(base)
            outs = call(leaves)
            if type(outs) is list:
                self.wrap(outs)
            return outs
        return keyed


def compile_text(text: str, name: str, target: str, pack, options: dict):
    """The executable of a StableHLO module's text (named `name`), compiled with `options`
    (xlair.compile's), also taking the argument leaves of `pack` packed when the program is
    light enough (packed_entry.worth).  Its artifact is also kept under the hash of the text (with
    the target, the CPU, the options and xlair's source): a new process or a new `xlair.jit`
    finds it without importing the module, which took 3 s for a 2,900-op training step while
    JAX lowered it in well under one (the import builds every op through its shape rule)."""
    comp = None

    def computation():
        nonlocal comp
        if comp is None:
            comp = from_stablehlo(text)
            comp.name = name
        return comp
    tgt = find_target(target)
    options = dict(options)
    key = text_key(text, name, tgt, options, pack) if options.get("cache", True) else None
    vmfb = cache_get(key) if key else None
    if vmfb is None:
        if pack is not None and "pack" not in options and packed_entry.worth(computation()):
            options["pack"] = pack
        vmfb = compile_vmfb(computation(), tgt.name, **options)
        if key:
            cache_put(key, vmfb)
    exe = Executable(vmfb, target)
    if pack is not None and "pack" not in options and exe.work is not None and exe.work <= packed_entry.MAX_WORK:
        options["pack"] = pack          # (found in the cache: packed when light, as when compiled)
    exe._fallbacks = loop_fallbacks(computation, tgt.name, **options)
    return exe


def _abstract(x):
    """What JAX traces in place of an `xla.Array` (its shape and dtype; reading its values back
    would cost a copy)."""
    return _jax().ShapeDtypeStruct(x.shape, x.dtype) if type(x) is Array else x


def _signature(x) -> tuple:
    """A leaf's shape and dtype as a cache key: the dtype itself (hashable; its str() was ~1.5
    us a leaf on every call), or the type of a Python scalar."""
    t = type(x)
    if t is np.ndarray or t is Array:
        return x.shape, x.dtype
    s = getattr(x, "shape", None)
    dt = getattr(x, "dtype", None)
    return (s if type(s) is tuple else np.shape(x)), (dt if dt is not None else type(x).__name__)


def jit(fn=None, *, target: str = "cpu", static_argnums=(), **compile_options):
    """Compile a JAX function with xlair: `xlair.jit(fn)` or `@xlair.jit(target="cpu")`."""
    if fn is None:
        return lambda f: Jitted(f, target, static_argnums, **compile_options)
    return Jitted(fn, target, static_argnums, **compile_options)

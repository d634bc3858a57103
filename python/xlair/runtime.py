"""`Executable`: a compiled computation loaded into IREE's runtime, called with numpy."""
from __future__ import annotations

import json
import os
import threading

import numpy as np

from xlair.dialect.checks import XlaError
from xlair.dialect.ir import context, ir, lock
from xlair.dialect.types import Shape

from .values import check_args, flatten, unflatten

_instance = None
_configs: dict[str, object] = {}
_rt_lock = threading.Lock()


def _rt():
    import iree.runtime as rt
    return rt


def _config(driver: str):
    """One IREE runtime configuration (device) per driver, shared by all executables."""
    with _rt_lock:
        cfg = _configs.get(driver)
        if cfg is None:
            try:
                cfg = _configs[driver] = _rt().Config(driver)
            except (RuntimeError, ValueError) as e:
                raise XlaError(f"no IREE device for driver {driver!r}: {e}") from None
        return cfg


def _signature_from_vm(vm_module) -> dict:
    fn = vm_module.lookup_function("main")
    if fn is None:
        raise XlaError("the artifact has no exported function 'main'")
    text = fn.reflection.get("xlair.signature")
    if text is None:
        raise XlaError("the artifact carries no xlair signature (not made by xlair)")
    return json.loads(text)


def _shape(s: str) -> Shape:
    with lock, context():
        return Shape.from_mlir(ir.Type.parse(s))


class Executable:
    """A computation compiled for one target.  Call it with numpy arrays (or scalars); a
    tuple result comes back as a Python tuple."""

    def __init__(self, vmfb: bytes, target: str = "cpu"):
        from .compile import target as find_target
        rt = _rt()
        self.target = find_target(target)
        self._vmfb = bytes(vmfb)
        cfg = _config(self.target.driver)
        try:
            self._vm_module = rt.VmModule.copy_buffer(cfg.vm_instance, self._vmfb)
        except (RuntimeError, ValueError) as e:
            raise XlaError(f"not a loadable IREE module: {e}") from None
        sig = _signature_from_vm(self._vm_module)
        self.name = sig.get("name", "main")
        self.parameter_shapes = tuple(_shape(p) for p in sig["params"])
        self.result_shape = _shape(sig["result"])
        self.replicas = int(sig.get("replicas", 1))
        self._ctx = rt.SystemContext(vm_modules=[self._vm_module], config=cfg)
        self._fn = self._ctx.modules.module["main"]
        self._leaves_in = [s for p in self.parameter_shapes for s in p.leaves()]
        self._leaves_out = self.result_shape.leaves()
        self._lock = threading.Lock()

    def __repr__(self):
        return (f"<xla.Executable {self.name} on {self.target.name}: "
                f"({', '.join(map(repr, self.parameter_shapes))}) -> {self.result_shape}>")

    def __call__(self, *args):
        vals = check_args(self.parameter_shapes, args, f"executable {self.name}")
        flat = [leaf for v, s in zip(vals, self.parameter_shapes) for leaf in flatten(v, s)]
        ins = [_to_device(a, s) for a, s in zip(flat, self._leaves_in)]
        with self._lock:
            try:
                outs = self._fn(*ins)
            except RuntimeError as e:
                raise XlaError(f"executable {self.name} failed at run time: {e}") from None
        if len(self._leaves_out) == 1:
            outs = [outs]
        host = [_from_device(o, s) for o, s in zip(outs, self._leaves_out)]
        return unflatten(host, self.result_shape)

    @property
    def vmfb(self) -> bytes:
        return self._vmfb

    def save(self, path: str | os.PathLike) -> None:
        with open(path, "wb") as f:
            f.write(self._vmfb)

    def seed(self, n: int) -> None:
        """Seed the generator behind RngUniform / RngNormal: its state becomes (key n, counter 0)
        (see lowering/random.py).  A program without those ops has no generator; then a no-op."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise XlaError(f"Executable.seed takes an integer; got {n!r}")
        if self._vm_module.lookup_function("xlair_rng_seed") is None:
            return
        value = np.asarray(int(n) & (2 ** 64 - 1), np.uint64).view(np.int64)
        with self._lock:
            self._ctx.modules.module["xlair_rng_seed"](value)


def _to_device(a: np.ndarray, s: Shape):
    if s.element_type.is_unsigned:
        a = a.view(np.dtype(f"i{a.dtype.itemsize}"))
    return a


def _from_device(o, s: Shape) -> np.ndarray:
    a = o.to_host() if hasattr(o, "to_host") else np.asarray(o)
    a = np.asarray(a)
    if a.dtype != s.dtype:
        a = a.view(s.dtype) if a.dtype.itemsize == s.dtype.itemsize else a.astype(s.dtype)
    return a.reshape(s.dims)


def load(path: str | os.PathLike, target: str = "cpu") -> Executable:
    """Load a `.vmfb` written by `Executable.save` or `xlair-compile`."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise XlaError(f"cannot read {path}: {e}") from None
    return Executable(data, target)

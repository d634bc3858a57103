"""The Python engine behind the PJRT plugin: a client with one device of one xlair target (the
CPU's under the platform `xlair`; a GPU target's, Vulkan, CUDA or ROCm, under `xlair_<target>`)
and its memory, buffers that are `xla.Array`s (IREE buffers), executables compiled by xlair
from the StableHLO JAX hands over, and events (xlair's calls return when their results are
written, so every event is ready when made).

Nothing here knows the C ABI (abi.py) or the callbacks (api.py); the objects are plain Python,
and api.py hands their `id()`s to C as handles.
"""
from __future__ import annotations

import hashlib
import re

import numpy as np

from xlair.dialect.checks import XlaError
from xlair.dialect.types import PRED, Shape, element_type

from ..arrays import Array
from ..device import layout, mapped
from ..runtime import device_put
from ..targets import device_available, target as find_target

PLATFORM = "xlair"
MEMORY_KIND = "device"
#: the xlair targets a client can run on: the CPU, and the GPU targets where the machine has
#: a device for them (targets.device_available)
GPU_TARGETS = ("vulkan", "cuda", "rocm")


def platform_of(target: str) -> str:
    """The JAX platform (and plugin) name of an xlair target's client: "xlair" for the CPU,
    "xlair_vulkan", "xlair_cuda", "xlair_rocm" for the GPU targets."""
    return PLATFORM if target == "cpu" else f"{PLATFORM}_{target}"


class PjrtError(Exception):
    """An error a PJRT call returns: a PJRT_Error_Code and its message."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


class Event:
    """An event that is ready when made, with an error message or None."""

    __slots__ = ("error", "__weakref__")

    def __init__(self, error: str | None = None):
        self.error = error


class Memory:
    def __init__(self, client: "Client", mid: int):
        self.client, self.id, self.kind, self.kind_id = client, mid, MEMORY_KIND, 0
        self.debug_string = f"{client.platform_name}:{MEMORY_KIND}:{mid}"


class DeviceDescription:
    def __init__(self, did: int, target: str, platform: str):
        self.id, self.process_index, self.kind = did, 0, f"xlair {target}"
        self.to_string = f"Xlair{target.capitalize()}Device(id={did})"
        self.debug_string = f"{platform}:{target}:{did}"


class Device:
    def __init__(self, client: "Client", did: int):
        self.client, self.local_hardware_id = client, did
        self.description = DeviceDescription(did, client.target, client.platform_name)
        self.memory = Memory(client, did)


class Client:
    """One device of one xlair target: the CPU (IREE's local-task driver) or a GPU target the
    machine has a device for (its IREE driver: vulkan, cuda, hip)."""

    def __init__(self, target: str = "cpu"):
        try:
            tgt = find_target(target)
        except XlaError as e:
            raise PjrtError(3, f"PJRT_Client_Create: option 'target': {e}") from None
        if tgt.name != "cpu" and not device_available(tgt.name):
            raise PjrtError(9, f"PJRT_Client_Create: this machine has no {tgt.name} device (IREE's "
                               f"{tgt.driver!r} driver finds none), so the platform "
                               f"{platform_of(tgt.name)!r} has no device")
        self.target = tgt.name
        self.platform_name, self.process_index = platform_of(tgt.name), 0
        self.platform_version = f"xlair (IREE {tgt.backend})"
        self.devices = [Device(self, 0)]
        self.memories = [d.memory for d in self.devices]
        self._keep = {}         # what C reads through pointers the client hands out

    def device(self, did: int) -> Device:
        for d in self.devices:
            if d.description.id == did:
                return d
        raise PjrtError(5, f"no xlair device with id {did}")


class Buffer:
    """A PJRT buffer: an `xla.Array` on the device (None once deleted)."""

    __slots__ = ("array", "device", "dtype", "dims", "_keep", "__weakref__")

    def __init__(self, array, device: Device):
        """A buffer of `array`: an `xla.Array`, or numpy values copied to the device."""
        if type(array) is not Array:
            array = device_put(np.asarray(array), device.client.target)
        self.array, self.device = array, device
        self.dtype, self.dims = array.dtype, array.shape     # (a numpy dtype, a tuple)
        self._keep = {}         # what C reads through pointers this buffer hands out

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.dims, dtype=np.int64)) * self.dtype.itemsize

    def live(self) -> Array:
        if self.array is None:
            raise PjrtError(9, "the buffer was deleted or donated")
        return self.array

    def host_view(self) -> np.ndarray:
        """The buffer's values as numpy: a view of IREE's mapped host memory where there is
        one (no copy), else a copy read back."""
        a = self.live()
        bv = a._bv
        if bv is not None and a._target.backend == "llvm-cpu":
            lay = layout(a._shape)
            if bv.byte_length == lay[2]:
                return mapped(bv, lay)
        return np.asarray(a)


def buffer_from_host(host: np.ndarray, device: Device) -> Buffer:
    """A buffer holding a copy of `host` (copied during the call: the caller's memory may go
    once it returns)."""
    if not host.flags.c_contiguous:
        host = host.copy()          # (np.ascontiguousarray would make a scalar 1-d)
    return Buffer(device_put(host, device.client.target), device)


_MODULE_NAME = re.compile(r'module @([\w.$-]+)|"builtin.module"\(\) <\{sym_name = "([\w.$-]+)"')
#: what the plugin says a token result is (JAX's runtime tokens are bool[0] arrays)
TOKEN_BUFFER = Shape(PRED, (0,))


class Executable:
    """A loaded executable: the StableHLO module JAX compiled, imported and compiled by xlair
    (its compile cache keyed by the module's text)."""

    #: PJRT_Client_Compile calls in this process (each one makes an Executable; xlair's compile
    #: cache may still find the artifact): bench/bench_pjrt.py counts JAX's compiles with it
    compiles = 0

    def __init__(self, client: Client, text: str):
        from ..jax_bridge import compile_text       # the compile side, loaded on first compile
        Executable.compiles += 1
        self.client, self.text = client, text
        m = _MODULE_NAME.search(text)
        self.name = (m.group(1) or m.group(2)) if m else "main"
        self.exe = compile_text(text, self.name, client.target, None, {})
        leaves = list(self.exe.result_shape.leaves())
        if any(s.is_tuple for s in leaves) or any(p.is_tuple for p in self.exe.parameter_shapes):
            raise PjrtError(12, f"{self.name}: tuples as parameters or results are not supported by the "
                                "xlair PJRT plugin")
        # tokens (JAX's ordered effects: `!stablehlo.token` parameters and results of main):
        # JAX passes a bool[0] buffer for each and takes one back; the program gets the
        # runtime's token value (values.check_arg)
        self._tokens_in = frozenset(i for i, s in enumerate(self.exe._leaves_in) if s.is_token)
        self._tokens_out = frozenset(i for i, s in enumerate(leaves) if s.is_token)
        self.outputs = [TOKEN_BUFFER if s.is_token else s for s in leaves]
        if self.exe.replicas != 1:
            raise PjrtError(12, f"{self.name}: {self.exe.replicas} replicas; the xlair PJRT plugin "
                                "runs one replica on one device")
        self.fingerprint = hashlib.sha256(text.encode()).hexdigest()
        self.deleted = False
        self._n_params = len(self.exe._leaves_in)
        #: what the C shim's Execute reads to make a call itself (shim.c's `run_in_c`): the
        #: program (its `_quick`, runtime._call_path), its argument count, the device its
        #: results go to; None once deleted
        self._for_c = (self.exe, self._n_params, client.devices[0])
        self._keep = {}

    def delete(self) -> None:
        self.deleted, self._for_c = True, None

    def execute(self, arrays: list[Array], device: Device) -> list[Buffer]:
        """The result buffers of a call on `arrays`, the argument buffers' arrays (`live()`)."""
        if self.deleted:
            raise PjrtError(9, f"executable {self.name} was deleted")
        if len(arrays) != self._n_params:
            raise PjrtError(3, f"executable {self.name} takes {self._n_params} arguments; got {len(arrays)}")
        if not (self._tokens_in or self._tokens_out):
            return [Buffer(o, device) for o in self.exe.call_leaves(arrays)]
        outs = self.exe.call_leaves([np.zeros((), np.bool_) if i in self._tokens_in else a
                                     for i, a in enumerate(arrays)])
        return [Buffer(np.zeros(0, np.bool_) if i in self._tokens_out else o, device) for i, o in enumerate(outs)]


def compile_program(client: Client, code: bytes, fmt: str) -> Executable:
    """The executable of a PJRT_Program.  Its text is printed in MLIR's custom forms; where
    those do not read back (jaxlib prints an empty index list of stablehlo.dynamic_slice as
    "%arg0, , sizes = []", which no parser takes: "custom op 'stablehlo.dynamic_slice'
    expected 'sizes'", JAX's batching_test testIssue3883), in the generic form."""
    try:
        return Executable(client, deserialize(code, fmt))
    except XlaError as e:
        if "cannot parse the StableHLO module" not in str(e):
            raise
    return Executable(client, deserialize(code, fmt, generic=True))


#: the first bytes of an executable serialized by the plugin (PJRT_Executable_Serialize)
SERIAL_MAGIC = b"xlair PJRT executable 1\n"


def serialize(e: Executable) -> bytes:
    """An executable, serialized: the StableHLO module it was compiled from, after a mark.  No
    machine code: DeserializeAndLoad compiles the module again, which xlair's compile cache
    (and its trust rules, artifacts.distrust) makes a load where the artifact is cached, so
    bytes from elsewhere (JAX's `deserialize_and_load` warns against untrusted ones) run only
    code this machine's compiler made."""
    return SERIAL_MAGIC + e.text.encode()


def deserialize_executable(client: Client, data: bytes) -> Executable:
    """The executable `serialize` wrote, compiled for (or loaded from the cache of) `client`'s
    target."""
    if not data.startswith(SERIAL_MAGIC):
        raise PjrtError(3, f"PJRT_Executable_DeserializeAndLoad: not an executable serialized by the xlair "
                           f"PJRT plugin (it begins {SERIAL_MAGIC!r}); got {len(data)} bytes beginning "
                           f"{data[:len(SERIAL_MAGIC)]!r}")
    try:
        text = data[len(SERIAL_MAGIC):].decode()
    except UnicodeDecodeError as e:
        raise PjrtError(3, f"PJRT_Executable_DeserializeAndLoad: the serialized module is not UTF-8 text "
                           f"(byte {len(SERIAL_MAGIC) + e.start}); the bytes are damaged") from None
    return Executable(client, text)


def deserialize(code: bytes, fmt: str, generic: bool = False) -> str:
    """The text of the StableHLO module in a PJRT_Program: MLIR bytecode of a StableHLO portable
    artifact (what JAX sends), plain MLIR bytecode, or MLIR text; read with jaxlib's MLIR (which
    knows the VHLO versions JAX writes).  `generic`: in MLIR's generic op form."""
    if fmt != "mlir":
        raise PjrtError(3, f"the xlair PJRT plugin compiles programs in the format 'mlir' "
                           f"(StableHLO); got {fmt!r}")
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib.mlir import ir
    from jax._src.lib.mlir.dialects import hlo
    with jax_mlir.make_ir_context() as ctx:
        try:
            module = hlo.deserialize_portable_artifact(ctx, code)
        except Exception:           # noqa: BLE001  (not an artifact: bytecode or text as it is)
            try:
                module = ir.Module.parse(code)
            except Exception as e:  # noqa: BLE001
                raise PjrtError(3, f"cannot read the program as StableHLO: {e}") from None
        return module.operation.get_asm(enable_debug_info=False, print_generic_op_form=generic)


def host_array(data: int, type_name: str, dims: tuple, byte_strides: tuple | None) -> np.ndarray:
    """A numpy view of host memory at address `data` (dense row-major when `byte_strides` is
    None)."""
    import ctypes
    dtype = element_type(type_name).dtype          # (abi.BUFFER_TYPES: numpy names of XLA types)
    n = int(np.prod(dims, dtype=np.int64))
    if n == 0:
        return np.zeros(dims, dtype)
    if byte_strides is None or byte_strides == _dense_strides(dims, dtype.itemsize):
        span = n * dtype.itemsize
        raw = (ctypes.c_char * span).from_address(data)
        return np.frombuffer(raw, dtype, n).reshape(dims)
    # the elements span [data + low, data + high): a negative stride (a reversed numpy view,
    # x[::-1]) walks down from `data`, the address of element 0
    low = sum((d - 1) * s for d, s in zip(dims, byte_strides) if s < 0)
    high = sum((d - 1) * s for d, s in zip(dims, byte_strides) if s > 0) + dtype.itemsize
    raw = (ctypes.c_char * (high - low)).from_address(data + low)
    return np.ndarray(dims, dtype, buffer=raw, offset=-low, strides=byte_strides)


def _dense_strides(dims: tuple, itemsize: int) -> tuple:
    strides, step = [], itemsize
    for d in reversed(dims):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))


def check(cond: bool, message: str, code: int = 3) -> None:
    if not cond:
        raise PjrtError(code, message)


def error_text(e: BaseException) -> tuple[int, str]:
    """(PJRT_Error_Code, message) of an exception raised inside a call: xlair's XlaError text
    as it is."""
    if isinstance(e, PjrtError):
        return e.code, str(e)
    if isinstance(e, XlaError):
        return 3, str(e)
    return 13, f"{type(e).__name__}: {e}"

"""The `PJRT_Api` table, built from Python: one ctypes callback per PJRT call (abi.FUNCTIONS),
each reading its argument struct in place (abi.ARGS), calling the engine and writing the
results back.  A call the plugin does not implement returns an UNIMPLEMENTED PJRT_Error that
names it.

Handles: the C side sees each engine object's `id()`; `_live` keeps the object alive until the
matching Destroy.  Strings and arrays handed out through pointers are kept on their owner
(its `_keep`) for the owner's life, as the header asks.  No callback lets an exception reach C:
each one catches everything and returns a PJRT_Error with the message (xlair's XlaError text
as it is).  ctypes callbacks take the GIL themselves, so JAX may call from any thread.

`table()` is what JAX gets: where the C shim is built (shim.c, shim.py), its copy of this table,
which answers the fixed-answer calls around each execution in C and forwards the rest here;
else this table itself.  The Python side of the shim is here too: executables' handles are
records the shim reads (`_h_exe`), ready events are its static one (`_new_event`), the process's
one device and memory are registered at Client_Create and deleted buffers counted.
"""
from __future__ import annotations

import ctypes
import os
import sys

import numpy as np

from . import abi, engine, shim
from .engine import PjrtError, check

#: XLAIR_PJRT_TRACE=1: each call's name on stderr as it comes in
_TRACE = os.environ.get("XLAIR_PJRT_TRACE", "") not in ("", "0")

#: handle (the object's id) -> object, for every object C holds
_live: dict[int, object] = {}


def _h(obj) -> int:
    _live[id(obj)] = obj
    return id(obj)


def _h_exe(obj, exe: engine.Executable) -> int:
    """The handle of an executable (loaded, or its _View): the address of a record of its
    own (shim.ExeRecord), from which the C shim reads the number of outputs."""
    rec = obj._record = shim.ExeRecord(shim.EXE_MAGIC, len(exe.outputs))
    _live[ctypes.addressof(rec)] = obj
    return ctypes.addressof(rec)


#: the C shim's library while its table is the one handed out (None: the Python table alone)
_shim = None
#: the handle of the shim's one ready event (None without the shim)
_READY = None


def _get(handle, kind: type, what: str):
    obj = _live.get(handle or 0)
    if not isinstance(obj, kind):
        raise PjrtError(abi.INVALID_ARGUMENT, f"{what}: not a live xlair {kind.__name__} handle")
    return obj


class _Error:
    __slots__ = ("code", "message")

    def __init__(self, code: int, message: str):
        self.code, self.message = code, ctypes.create_string_buffer(message.encode(errors="replace"))


def _error(code: int, message: str) -> int:
    return _h(_Error(code, message))


def _keep(owner, key, value):
    """`value` (a ctypes object) kept alive on `owner`; its address."""
    owner._keep[key] = value
    return ctypes.addressof(value)


def _out_str(args, field: str, owner, text: str) -> None:
    buf = owner._keep.get(("str", field, text))
    if buf is None:
        buf = owner._keep[("str", field, text)] = ctypes.create_string_buffer(text.encode())
    setattr(args, field, ctypes.addressof(buf))
    setattr(args, field + "_size", len(text.encode()))


def _pointers(owner, key, objs) -> int:
    arr = owner._keep.get(key)
    if arr is None:
        arr = owner._keep[key] = (ctypes.c_void_p * max(len(objs), 1))(*[_h(o) for o in objs])
    return ctypes.addressof(arr)


# ----------------------------------------------------------------------------------------
# the calls
# ----------------------------------------------------------------------------------------
IMPL = {}


def impl(fn):
    IMPL["PJRT_" + fn.__name__] = fn
    return fn


@impl
def Error_Destroy(a):
    if a.error:
        _live.pop(a.error, None)


@impl
def Error_Message(a):
    e = _live.get(a.error)
    if isinstance(e, _Error):
        a.message, a.message_size = ctypes.addressof(e.message), len(e.message.value)
    else:
        a.message, a.message_size = None, 0


@impl
def Error_GetCode(a):
    a.code = _get(a.error, _Error, "PJRT_Error_GetCode").code


@impl
def Plugin_Initialize(a):
    pass


class _Static:
    _keep: dict = {}


def _named_values(values: list[tuple[str, list[int]]]) -> tuple[int, int]:
    arr = (abi.NamedValue * len(values))()
    for nv, (name, ints) in zip(arr, values):
        nbuf = ctypes.create_string_buffer(name.encode())
        ibuf = (ctypes.c_int64 * len(ints))(*ints)
        _Static._keep[name] = (nbuf, ibuf)
        nv.struct_size = ctypes.sizeof(abi.NamedValue)
        nv.name, nv.name_size = ctypes.addressof(nbuf), len(name)
        nv.type, nv.int64_array_value, nv.value_size = abi.NV_INT64_LIST, ctypes.addressof(ibuf), len(ints)
    _Static._keep["attributes"] = arr
    return ctypes.addressof(arr), len(values)


@impl
def Plugin_Attributes(a):
    if "attributes" not in _Static._keep:
        from jax._src.lib.mlir.dialects import hlo       # the StableHLO versions jaxlib reads
        version = lambda s: [int(x) for x in s.split(".")]  # noqa: E731
        _named_values([("stablehlo_current_version", version(hlo.get_current_version())),
                       ("stablehlo_minimum_version", version(hlo.get_minimum_version()))])
    arr = _Static._keep["attributes"]
    a.attributes, a.num_attributes = ctypes.addressof(arr), len(arr)


# events ----------------------------------------------------------------------------------
@impl
def Event_Destroy(a):
    if a.event and a.event != _READY:
        _live.pop(a.event, None)


@impl
def Event_IsReady(a):
    _get(a.event, engine.Event, "PJRT_Event_IsReady")
    a.is_ready = True


def _event_error(ev: engine.Event):
    return None if ev.error is None else _error(abi.INTERNAL, ev.error)


@impl
def Event_Error(a):
    return _event_error(_get(a.event, engine.Event, "PJRT_Event_Error"))


@impl
def Event_Await(a):
    return _event_error(_get(a.event, engine.Event, "PJRT_Event_Await"))


@impl
def Event_OnReady(a):
    ev = _get(a.event, engine.Event, "PJRT_Event_OnReady")
    abi.ON_READY(a.callback)(_event_error(ev), a.user_arg)


def _new_event(error=None) -> int:
    """A ready event (with the shim: its one static event, which C answers for), or one
    carrying `error`."""
    if error is None and _READY is not None:
        return _READY
    return _h(engine.Event(error))


# client ----------------------------------------------------------------------------------
_clients = [0]          # CPU clients made in this process


def _read_options(p, n: int) -> dict:
    """PJRT_Client_Create's create_options (PJRT_NamedValue[n]) as a dict: strings, integers,
    floats, booleans, integer lists."""
    out = {}
    for nv in (abi.NamedValue * n).from_address(p) if n else ():
        name = ctypes.string_at(nv.name, nv.name_size).decode()
        if nv.type == abi.NV_STRING:
            out[name] = ctypes.string_at(nv.string_value, nv.value_size).decode()
        elif nv.type == abi.NV_INT64_LIST:
            out[name] = [ctypes.cast(nv.int64_array_value, abi.c_int64_p)[i] for i in range(nv.value_size)]
        else:
            out[name] = (None, nv.int64_value, None, nv.float_value, nv.bool_value)[nv.type]
    return out


@impl
def Client_Create(a):
    """A client of the xlair target the create option "target" names (the CPU without one:
    xlair.pjrt.initialize registers each GPU platform with its target as the option)."""
    options = _read_options(a.create_options, a.num_options)
    unknown = sorted(set(options) - {"target"})
    check(not unknown, f"PJRT_Client_Create: unknown create option(s) {', '.join(unknown)}; the xlair "
                       "PJRT plugin takes 'target' (cpu, vulkan, cuda, rocm)")
    c = engine.Client(options.get("target", "cpu"))
    a.client = _h(c)
    _no_leak_report()
    if c.target != "cpu":
        return          # (a GPU platform gets the Python table: the shim never sees its calls)
    _clients[0] += 1
    if _shim is not None:
        # the shim answers Buffer_Device / Buffer_Memory / Memory_Kind while the process has
        # one CPU client with one device (every buffer's); after a second one, Python does
        d = c.devices[0]
        one = _clients[0] == 1 and len(c.devices) == 1
        kind = c._keep.setdefault("kind", ctypes.create_string_buffer(d.memory.kind.encode()))
        _shim.xlair_shim_set_device(_h(d) if one else None, _h(d.memory) if one else None,
                                    ctypes.addressof(kind) if one else None, len(d.memory.kind))


def _no_leak_report() -> None:
    """IREE's bindings report no leaks at exit in a process that runs the plugin.  The plugin
    frees nothing once the interpreter finalizes (_at_exit), and jaxlib destroys its buffers
    and clients then, so IREE's objects are still alive when the bindings are torn down:
    nanobind printed "nanobind: leaked 12 instances! ... likely caused by a reference counting
    issue in the binding code" after a program as plain as `jax.jit(lambda a: a)(x)`, a false
    alarm."""
    from ..device import iree_runtime
    quiet = getattr(getattr(iree_runtime(), "_binding", None), "disable_leak_checker", None)
    if quiet is not None:
        quiet()


@impl
def Client_Destroy(a):
    if a.client:
        _live.pop(a.client, None)


def _client(a) -> engine.Client:
    return _get(a.client, engine.Client, "client")


@impl
def Client_PlatformName(a):
    c = _client(a)
    _out_str(a, "platform_name", c, c.platform_name)


@impl
def Client_ProcessIndex(a):
    a.process_index = _client(a).process_index


@impl
def Client_PlatformVersion(a):
    c = _client(a)
    _out_str(a, "platform_version", c, c.platform_version)


@impl
def Client_Devices(a):
    c = _client(a)
    a.devices, a.num_devices = _pointers(c, "devices", c.devices), len(c.devices)


@impl
def Client_AddressableDevices(a):
    c = _client(a)
    a.addressable_devices, a.num_addressable_devices = _pointers(c, "devices", c.devices), len(c.devices)


@impl
def Client_LookupDevice(a):
    a.device = _h(_client(a).device(a.id))


@impl
def Client_LookupAddressableDevice(a):
    a.addressable_device = _h(_client(a).device(a.local_hardware_id))


@impl
def Client_AddressableMemories(a):
    c = _client(a)
    a.addressable_memories = _pointers(c, "memories", c.memories)
    a.num_addressable_memories = len(c.memories)


@impl
def Client_DefaultDeviceAssignment(a):
    n = a.num_replicas * a.num_partitions
    check(n <= 1, f"xlair has one device; asked to assign {a.num_replicas} replicas x "
                  f"{a.num_partitions} partitions", abi.INVALID_ARGUMENT)
    check(a.default_assignment_size >= n, "default_assignment_size too small")
    if n:
        ctypes.c_int.from_address(a.default_assignment).value = 0


@impl
def Client_Compile(a):
    c = _client(a)
    prog = abi.Program.from_address(a.program)
    code = ctypes.string_at(prog.code, prog.code_size)
    fmt = ctypes.string_at(prog.format, prog.format_size).decode()
    e = engine.compile_program(c, code, fmt)
    a.executable = _h_exe(e, e)


def _device_of(c: engine.Client, device, memory) -> engine.Device:
    if memory:
        return _get(memory, engine.Memory, "memory").client.devices[0]
    if device:
        return _get(device, engine.Device, "device")
    return c.devices[0]


@impl
def Client_BufferFromHostBuffer(a):
    c = _client(a)
    name = abi.DTYPE_NAMES.get(a.type)
    check(name is not None, f"the xlair PJRT plugin has no buffers of element type "
                            f"{abi.buffer_type_name(a.type)}", abi.UNIMPLEMENTED)
    dims = tuple(a.dims and ctypes.cast(a.dims, abi.c_int64_p)[i] for i in range(a.num_dims))
    strides = tuple(ctypes.cast(a.byte_strides, abi.c_int64_p)[i] for i in range(a.num_byte_strides)) \
        if a.num_byte_strides else None
    check(not a.device_layout or _dense_layout(a.device_layout, len(dims)),
          "the xlair PJRT plugin keeps buffers in the dense major-to-minor layout", abi.UNIMPLEMENTED)
    host = engine.host_array(a.data, name, dims, strides)
    buf = engine.buffer_from_host(host, _device_of(c, a.device, a.memory))
    a.done_with_host_buffer = _new_event()
    a.buffer = _h(buf)


def _dense_layout(p, rank: int) -> bool:
    lay = abi.MemoryLayout.from_address(p)
    if lay.type != abi.LAYOUT_TILED:
        return False
    t = lay.tiled
    m2m = [ctypes.cast(t.minor_to_major, abi.c_int64_p)[i] for i in range(t.minor_to_major_size)]
    return m2m == list(range(rank - 1, -1, -1)) and t.num_tiles == 0


# devices, descriptions, memories ------------------------------------------------------------
def _desc(a) -> engine.DeviceDescription:
    return _get(a.device_description, engine.DeviceDescription, "device description")


@impl
def DeviceDescription_Id(a):
    a.id = _desc(a).id


@impl
def DeviceDescription_ProcessIndex(a):
    a.process_index = _desc(a).process_index


@impl
def DeviceDescription_Attributes(a):
    _desc(a)
    a.num_attributes, a.attributes = 0, None


@impl
def DeviceDescription_Kind(a):
    d = _desc(a)
    _out_str(a, "device_kind", _Static, d.kind)


@impl
def DeviceDescription_DebugString(a):
    d = _desc(a)
    _out_str(a, "debug_string", _Static, d.debug_string)


@impl
def DeviceDescription_ToString(a):
    d = _desc(a)
    _out_str(a, "to_string", _Static, d.to_string)


def _device(a) -> engine.Device:
    return _get(a.device, engine.Device, "device")


@impl
def Device_GetDescription(a):
    a.device_description = _h(_device(a).description)


@impl
def Device_IsAddressable(a):
    _device(a)
    a.is_addressable = True


@impl
def Device_LocalHardwareId(a):
    a.local_hardware_id = _device(a).local_hardware_id


@impl
def Device_AddressableMemories(a):
    d = _device(a)
    a.memories, a.num_memories = _pointers(d.client, ("memories of", id(d)), [d.memory]), 1


def _no_op(_):
    pass


_DELETER = abi.DELETER(_no_op)


@impl
def Device_GetAttributes(a):
    _device(a)
    a.attributes, a.num_attributes, a.device_attributes = None, 0, None
    a.attributes_deleter = ctypes.cast(_DELETER, ctypes.c_void_p).value


@impl
def Device_DefaultMemory(a):
    a.memory = _h(_device(a).memory)


def _memory(a) -> engine.Memory:
    return _get(a.memory, engine.Memory, "memory")


@impl
def Memory_Id(a):
    a.id = _memory(a).id


@impl
def Memory_Kind(a):
    _out_str(a, "kind", _Static, _memory(a).kind)


@impl
def Memory_Kind_Id(a):
    a.kind_id = _memory(a).kind_id


@impl
def Memory_DebugString(a):
    _out_str(a, "debug_string", _Static, _memory(a).debug_string)


@impl
def Memory_ToString(a):
    _out_str(a, "to_string", _Static, _memory(a).debug_string)


@impl
def Memory_AddressableByDevices(a):
    m = _memory(a)
    devs = [d for d in m.client.devices if d.memory is m]
    a.devices, a.num_devices = _pointers(m.client, ("devices of", id(m)), devs), len(devs)


# executables -----------------------------------------------------------------------------
class _View:
    """A PJRT_Executable: the loaded executable seen without its devices (destroyed apart)."""

    def __init__(self, loaded):
        self.loaded = loaded


def _exe(a, field: str = "executable") -> engine.Executable:
    return _exe_of(getattr(a, field))


def _exe_of(handle) -> engine.Executable:
    obj = _live.get(handle or 0)
    if isinstance(obj, _View):
        return obj.loaded
    if isinstance(obj, engine.Executable):
        return obj
    raise PjrtError(abi.INVALID_ARGUMENT, "not a live xlair executable handle")


@impl
def Executable_Destroy(a):
    if a.executable:
        _live.pop(a.executable, None)


@impl
def LoadedExecutable_Destroy(a):
    if a.executable:
        _live.pop(a.executable, None)


@impl
def LoadedExecutable_GetExecutable(a):
    e = _exe(a, "loaded_executable")
    a.executable = _h_exe(_View(e), e)


@impl
def Executable_Name(a):
    e = _exe(a)
    _out_str(a, "executable_name", e, e.name)


@impl
def Executable_NumReplicas(a):
    _exe(a)
    a.num_replicas = 1


@impl
def Executable_NumPartitions(a):
    _exe(a)
    a.num_partitions = 1


@impl
def Executable_NumOutputs(a):
    a.num_outputs = len(_exe(a).outputs)


@impl
def Executable_SizeOfGeneratedCodeInBytes(a):
    a.size_in_bytes = len(_exe(a).exe.vmfb)


@impl
def Executable_Fingerprint(a):
    e = _exe(a)
    _out_str(a, "executable_fingerprint", e, e.fingerprint)


@impl
def LoadedExecutable_Fingerprint(a):
    e = _exe(a)
    _out_str(a, "executable_fingerprint", e, e.fingerprint)


@impl
def Executable_GetCostAnalysis(a):
    _exe(a)
    a.num_properties, a.properties = 0, None


@impl
def Executable_GetCompiledMemoryStats(a):
    e = _exe(a)
    a.generated_code_size_in_bytes = len(e.exe.vmfb)
    a.argument_size_in_bytes = sum(s.size * s.dtype.itemsize for s in e.exe._leaves_in)
    a.output_size_in_bytes = sum(s.size * s.dtype.itemsize for s in e.outputs)


@impl
def Executable_OutputElementTypes(a):
    e = _exe(a)
    types = [abi.BUFFER_TYPES[np.dtype(s.dtype).name] for s in e.outputs]
    a.output_types = _keep(e, "types", (ctypes.c_int * max(len(types), 1))(*types))
    a.num_output_types = len(types)


@impl
def Executable_OutputDimensions(a):
    e = _exe(a)
    dims = [d for s in e.outputs for d in s.dims]
    a.num_outputs = len(e.outputs)
    a.dims = _keep(e, "dims", (ctypes.c_int64 * max(len(dims), 1))(*dims))
    a.dim_sizes = _keep(e, "dim_sizes", (ctypes.c_size_t * max(len(e.outputs), 1))(
        *[len(s.dims) for s in e.outputs]))


@impl
def Executable_OutputMemoryKinds(a):
    e = _exe(a)
    n = len(e.outputs)
    kind = e._keep.setdefault("kind", ctypes.create_string_buffer(engine.MEMORY_KIND.encode()))
    a.num_outputs = n
    a.memory_kinds = _keep(e, "kinds", (ctypes.c_void_p * max(n, 1))(*[ctypes.addressof(kind)] * n))
    a.memory_kind_sizes = _keep(e, "kind_sizes", (ctypes.c_size_t * max(n, 1))(
        *[len(engine.MEMORY_KIND)] * n))


@impl
def LoadedExecutable_AddressableDevices(a):
    e = _exe(a)
    devs = e.client.devices
    a.addressable_devices, a.num_addressable_devices = _pointers(e, "devices", devs), len(devs)


#: DeviceAssignmentProto{replica_count: 1, computation_count: 1, computation_devices:
#: [{replica_device_ids: [0]}]}, serialized
_ONE_DEVICE = bytes([0x08, 1, 0x10, 1, 0x1a, 3, 0x0a, 1, 0])


@impl
def LoadedExecutable_GetDeviceAssignment(a):
    e = _exe(a)
    buf = e._keep.setdefault("assignment", ctypes.create_string_buffer(_ONE_DEVICE, len(_ONE_DEVICE)))
    a.serialized_bytes, a.serialized_bytes_size = ctypes.addressof(buf), len(_ONE_DEVICE)
    a.serialized_device_assignment = None
    a.serialized_device_assignment_deleter = ctypes.cast(_DELETER, ctypes.c_void_p).value


class _Serialized:
    """The bytes of a serialized executable, held for C until its deleter runs."""

    def __init__(self, data: bytes):
        self.buf = ctypes.create_string_buffer(data, len(data))


def _release(handle) -> None:
    _live.pop(handle or 0, None)


_RELEASE = abi.DELETER(_release)


@impl
def Executable_Serialize(a):
    data = engine.serialize(_exe(a))
    s = _Serialized(data)
    a.serialized_bytes, a.serialized_bytes_size = ctypes.addressof(s.buf), len(data)
    a.serialized_executable = _h(s)
    a.serialized_executable_deleter = ctypes.cast(_RELEASE, ctypes.c_void_p).value


@impl
def Executable_DeserializeAndLoad(a):
    c = _client(a)
    data = ctypes.string_at(a.serialized_executable, a.serialized_executable_size) if a.serialized_executable else b""
    e = engine.deserialize_executable(c, data)
    a.loaded_executable = _h_exe(e, e)


@impl
def LoadedExecutable_Delete(a):
    _exe(a).delete()


@impl
def LoadedExecutable_IsDeleted(a):
    a.is_deleted = _exe(a).deleted


#: c_void_p * n, by n (the argument and output lists Execute reads and writes), made on first use
_POINTERS: dict = {}


def _pointers_at(address: int, n: int):
    t = _POINTERS.get(n)
    if t is None:
        t = _POINTERS[n] = ctypes.c_void_p * n
    return t.from_address(address)


@impl
def LoadedExecutable_Execute(a):
    # the Python table's Execute: the C shim reads these args itself (shim.c's `execute`) and
    # calls `_execute_from_c`
    one = a.num_devices == 1
    n = a.num_args if one else 0
    handles = _pointers_at(_pointers_at(a.argument_lists, 1)[0], n)[:] if n else ()
    out_list = _pointers_at(a.output_lists, 1)[0] if one and a.output_lists else None
    outs = _execute(a.executable, a.execute_device, a.num_devices, handles, bool(out_list))
    if outs:
        _pointers_at(out_list, len(outs))[:] = outs
    events = a.device_complete_events
    if events:
        _pointers_at(events, 1)[0] = _new_event()


def _execute(exe_h, device_h, num_devices: int, handles, outputs_given: bool) -> list[int]:
    """Execute's work from its arguments' handles: the handles of the result buffers.  The
    per-call path of every jitted call and eager op: each object made here counts (docs/pjrt.md,
    "Measured overhead")."""
    e = _exe_of(exe_h)
    if num_devices != 1:
        raise PjrtError(abi.INVALID_ARGUMENT, f"xlair runs on one device; asked for {num_devices}")
    device = _get(device_h, engine.Device, "execute_device") if device_h else e.client.devices[0]
    arrays = []
    live, buffer = _live.get, engine.Buffer
    for h in handles:
        b = live(h)
        if type(b) is not buffer:
            raise PjrtError(abi.INVALID_ARGUMENT, f"argument {len(arrays)}: not a live xlair Buffer handle")
        arrays.append(b.live())
    outs = e.execute(arrays, device)
    if outs and not outputs_given:
        raise PjrtError(abi.INVALID_ARGUMENT, f"executable {e.name} has {len(outs)} results and no output list")
    return [_h(b) for b in outs]


def _execute_from_c(exe_h, device_h, num_devices, handles, outputs_given):
    """The C shim's Execute (shim.c's `execute`, with the GIL): `_execute`'s result handles,
    or the handle of the error its exception becomes (an int)."""
    try:
        if _TRACE:
            print("xlair pjrt: PJRT_LoadedExecutable_Execute (read in C)", file=sys.stderr, flush=True)
        return _execute(exe_h, device_h, num_devices, handles, outputs_given)
    except BaseException as e:      # noqa: BLE001  (nothing may reach C: an error it returns)
        return _error(*engine.error_text(e))


# buffers ---------------------------------------------------------------------------------
def _buf(a, field: str = "buffer") -> engine.Buffer:
    return _get(getattr(a, field), engine.Buffer, "buffer")


@impl
def Buffer_Destroy(a):
    if a.buffer:
        _destroy_buffer(a.buffer)


def _destroy_buffer(h: int) -> None:
    """Buffer_Destroy's work (the C shim calls it with the handle: shim.c's `buffer_destroy`)."""
    b = _live.get(h)
    if _shim is not None and type(b) is engine.Buffer and b.array is None:
        _shim.xlair_shim_buffers_deleted(-1)     # (before the pop: nothing fails after it)
    _live.pop(h, None)


@impl
def Buffer_ElementType(a):
    a.type = abi.BUFFER_TYPES[_buf(a).dtype.name]


def _dims(b: engine.Buffer) -> int:
    arr = b._keep.get("dims")
    if arr is None:
        arr = b._keep["dims"] = (ctypes.c_int64 * max(len(b.dims), 1))(*b.dims)
    return ctypes.addressof(arr)


@impl
def Buffer_Dimensions(a):
    b = _buf(a)
    a.dims, a.num_dims = _dims(b), len(b.dims)


@impl
def Buffer_UnpaddedDimensions(a):
    b = _buf(a)
    a.unpadded_dims, a.num_dims = _dims(b), len(b.dims)


@impl
def Buffer_DynamicDimensionIndices(a):
    _buf(a)
    a.dynamic_dim_indices, a.num_dynamic_dims = None, 0


@impl
def Buffer_GetMemoryLayout(a):
    b = _buf(a)
    rank = len(b.dims)
    m2m = b._keep.get("m2m")
    if m2m is None:
        m2m = b._keep["m2m"] = (ctypes.c_int64 * max(rank, 1))(*range(rank - 1, -1, -1))
    lay = a.layout
    lay.struct_size, lay.type = ctypes.sizeof(abi.MemoryLayout), abi.LAYOUT_TILED
    lay.tiled.struct_size = ctypes.sizeof(abi.Tiled)
    lay.tiled.minor_to_major, lay.tiled.minor_to_major_size = ctypes.addressof(m2m), rank
    lay.tiled.tile_dims, lay.tiled.tile_dim_sizes, lay.tiled.num_tiles = None, None, 0


@impl
def Buffer_OnDeviceSizeInBytes(a):
    a.on_device_size_in_bytes = _buf(a).nbytes


@impl
def Buffer_Device(a):
    a.device = _h(_buf(a).device)


@impl
def Buffer_Memory(a):
    a.memory = _h(_buf(a).device.memory)


@impl
def Buffer_Delete(a):
    b = _buf(a)
    if b.array is not None:
        if _shim is not None:
            _shim.xlair_shim_buffers_deleted(1)      # the shim forwards IsDeleted, ReadyEvent now
        b.array = None


@impl
def Buffer_IsDeleted(a):
    a.is_deleted = _buf(a).array is None


@impl
def Buffer_UnsafePointer(a):
    """The address of the buffer's memory in this process: IREE's CPU buffers are host memory,
    mapped where they are (the mapping is kept with the buffer, so the address stays).  JAX's
    `unsafe_buffer_pointer()`, which its tests use to see whether an operation copied."""
    b = _buf(a)
    view = b._keep.get("mapped")
    if view is None:
        view = b.host_view()
        if view.size and view.base is None:
            raise PjrtError(abi.UNIMPLEMENTED, "PJRT_Buffer_UnsafePointer: this buffer is not in host memory "
                                               "the xlair PJRT plugin can address")
        b._keep["mapped"] = view
    a.buffer_pointer = view.ctypes.data if view.size else 0


@impl
def Buffer_IsOnCpu(a):
    _buf(a)
    a.is_on_cpu = False


@impl
def Buffer_ReadyEvent(a):
    b = _buf(a)
    a.event = _new_event(None if b.array is not None else "the buffer was deleted or donated")


@impl
def Buffer_ToHostBuffer(a):
    b = _buf(a, "src")
    check(not a.host_layout or _dense_layout(a.host_layout, len(b.dims)),
          "the xlair PJRT plugin copies to host in the dense major-to-minor layout", abi.UNIMPLEMENTED)
    if not a.dst:
        a.dst_size = b.nbytes
        return
    check(a.dst_size >= b.nbytes, f"dst_size {a.dst_size} is smaller than the buffer's {b.nbytes} bytes")
    if b.nbytes:
        src = b.host_view()
        if not src.flags.c_contiguous:
            src = src.copy()
        ctypes.memmove(a.dst, src.ctypes.data, b.nbytes)
    a.event = _new_event()


def _copy(b: engine.Buffer, device: engine.Device) -> engine.Buffer:
    return engine.Buffer(b.live(), device)        # (Arrays are immutable: shared, not copied)


@impl
def Buffer_CopyToDevice(a):
    a.dst_buffer = _h(_copy(_buf(a), _get(a.dst_device, engine.Device, "dst_device")))


@impl
def Buffer_CopyToMemory(a):
    m = _get(a.dst_memory, engine.Memory, "dst_memory")
    a.dst_buffer = _h(_copy(_buf(a), m.client.devices[0]))


# ----------------------------------------------------------------------------------------
# the table
# ----------------------------------------------------------------------------------------
#: the one error a call answers once the interpreter is finalizing (kept for the process's life)
_FINAL_ERROR = _Error(abi.ABORTED, "the Python interpreter running the xlair PJRT plugin is shutting down")
_FINAL_HANDLE = _h(_FINAL_ERROR)


def _at_exit(name: str, args_t):
    """What a call does once the interpreter is finalizing: it reads no global and no builtin
    name, only its closure's values.

    jaxlib's clients are collected by the interpreter's last garbage collection, after the
    modules' globals are gone (JAX's atexit drops its references to them): their destructors
    then call PJRT_Client_Destroy and the rest.  Python code that reads a module global there
    fails, an exception escapes the ctypes thunk, which returns an uninitialised PJRT_Error*,
    and jaxlib's error path (PJRT_Error_GetCode, failing in turn) recursed until the stack
    overflowed: a SIGSEGV at exit in about one process in ten under load.  (Measured: by then
    even a builtin's name, `range`, raises NameError in the plugin's code.)  So a call made
    while finalizing frees nothing (the process is ending), and answers from closure values
    alone: destroys succeed, the error calls describe `_FINAL_ERROR`, any other call fails
    with it."""
    err, handle = _FINAL_ERROR, _FINAL_HANDLE              # (the closures keep the error alive)
    text, size = ctypes.addressof(err.message), len(err.message.value)
    if name == "PJRT_Error_GetCode":
        def at_exit(p):
            args_t.from_address(p).code = err.code
    elif name == "PJRT_Error_Message":
        def at_exit(p):
            a = args_t.from_address(p)
            a.message, a.message_size = text, size
    elif name.endswith("_Destroy"):
        def at_exit(p):
            return None
    else:
        def at_exit(p):
            return handle
    return at_exit


def _entry(name: str):
    """The C entry of a call: its implementation reading its args in place, or UNIMPLEMENTED.
    Each asks `sys.is_finalizing()` first and then answers as `_at_exit` says; the path to
    that answer names no global and no builtin (`catch` is BaseException, bound here), and
    runs inside a `try`, since JAX may call with Python's error indicator set (below), when
    any C call raises."""
    fn = IMPL.get(name)
    args_t = abi.ARGS.get(name)
    finalizing, at_exit, catch = sys.is_finalizing, _at_exit(name, args_t), BaseException
    if name in abi.VOID:
        def void(p):
            try:
                if finalizing():
                    return at_exit(p)
                if _TRACE:
                    print("xlair pjrt:", name, file=sys.stderr, flush=True)
                fn(args_t.from_address(p))
            except catch:       # nothing may reach C
                pass
        return abi.VOID_ENTRY(void)
    if fn is None:
        def unimplemented(p):
            try:
                if finalizing():
                    return at_exit(p)
                return _error(abi.UNIMPLEMENTED, f"{name} is not implemented by the xlair PJRT plugin")
            except catch:
                return None
        return abi.ENTRY(unimplemented)
    if name.endswith("_Destroy"):
        def attempt(p):
            try:
                if not finalizing():
                    fn(args_t.from_address(p))
                return True
            except catch:       # nothing may reach C
                return False

        def destroy(p):
            # A destroy never fails: jaxlib aborts the process on an error from one (its
            # LogFatalIfPjrtError).  JAX destroys buffers while an exception of its own
            # unwinds (a failed compile: fft_test's testIrfftTranspose), with Python's error
            # indicator set: the callback's first C call then raises that exception here.
            # It is taken (JAX then sees its exception gone) and the destroy made again.
            attempt(p) or attempt(p)
        return abi.ENTRY(destroy)

    def call(p):
        try:
            if finalizing():
                return at_exit(p)
            if _TRACE:
                print("xlair pjrt:", name, file=sys.stderr, flush=True)
            return fn(args_t.from_address(p))
        except catch as e:      # nothing may reach C: an error it returns
            try:
                return _error(*engine.error_text(e))
            except catch:
                return None
    return abi.ENTRY(call)


_API = None
_ENTRIES: list = []


def api() -> abi.Api:
    """The PJRT_Api (built once, kept for the process's life)."""
    global _API
    if _API is None:
        table = abi.Api()
        table.struct_size = abi.API_STRUCT_SIZE
        table.pjrt_api_version = abi.Version(ctypes.sizeof(abi.Version), None, abi.API_MAJOR, abi.API_MINOR)
        for name in abi.FUNCTIONS:
            entry = _entry(name)
            _ENTRIES.append(entry)
            setattr(table, name, ctypes.cast(entry, ctypes.c_void_p).value)
        # immortal: JAX's client outlives this module at exit (the last garbage collection
        # destroys it and it calls PJRT_Client_Destroy): the table and its thunks must never
        # be freed, whatever order the interpreter tears things down in
        incref = ctypes.pythonapi.Py_IncRef
        incref.argtypes, incref.restype = [ctypes.py_object], None
        for obj in (table, *_ENTRIES, _DELETER):
            incref(obj)
        _API = table
    return _API


_TABLE = None


def table() -> int:
    """The address of the PJRT_Api JAX gets (made once): the C shim's table over `api()` when
    the shim library is built and loads (shim.py; not with XLAIR_PJRT_SHIM=0), else `api()`
    itself.  `table_kind()` says which."""
    global _TABLE, _shim, _READY
    if _TABLE is None:
        inner = api()
        lib = shim.load()
        made = shim.make(lib, inner) if lib is not None else None
        if made is not None:
            _READY = lib.xlair_shim_ready_event()
            _live[_READY] = engine.Event()      # (the Python calls know it too: it is ready)
            _shim = lib
            if lib.xlair_shim_set_python(_execute_from_c, _destroy_buffer, _live, engine.Executable,
                                         engine.Buffer, int(_TRACE)) != 0:
                raise RuntimeError("the xlair PJRT shim refused its Python functions")
        _TABLE = made or ctypes.addressof(inner)
    return _TABLE


def table_kind() -> str:
    """'shim' (the C shim's table) or 'ctypes' (the Python-built table alone), once `table()`
    has been made; None before."""
    return None if _TABLE is None else "shim" if _shim is not None else "ctypes"


def capsule(python: bool = False):
    """A PyCapsule named "pjrt_c_api" holding the PJRT_Api*, as jaxlib's
    `load_pjrt_plugin(name, None, c_api)` takes it: `table()`'s, or with `python` the
    Python-built table's (what the GPU platforms get: the shim's fixed answers are the CPU
    client's device and memory)."""
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return new(ctypes.addressof(api()) if python else table(), b"pjrt_c_api", None)

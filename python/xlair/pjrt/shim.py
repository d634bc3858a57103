"""The C fast path of the PJRT table (shim.c; docs/pjrt.md, "The C shim"): loading it, and
the Python side of its interface.

`make` (the set-up of `make test` / `make demo`) builds shim.c into `libxlair_pjrt_shim.so`
next to this file.  When that library is here, api.py hands JAX the shim's table: a copy of
the Python-built table in which the fixed-answer calls JAX makes around every execution
(events, NumReplicas/NumPartitions/NumOutputs, Buffer_Device/Memory, Memory_Kind,
Buffer_IsDeleted/ReadyEvent) are answered in C.  When it is not (a wheel installed without the
build, no C compiler), or `XLAIR_PJRT_SHIM=0`, the Python-built table is used as it is.
`xlair.pjrt.table()` says which; `REASON` says why not the shim.
"""
from __future__ import annotations

import ctypes
import os
import pathlib
import sys

from . import abi

LIBRARY = pathlib.Path(__file__).with_name("libxlair_pjrt_shim.so")

#: shim.c's SHIM_ABI: a library built from another version of shim.c is not used
ABI = 2

#: shim.c's EXE_MAGIC: the first field of an executable handle's record
EXE_MAGIC = 0x786c616972657865


class ExeRecord(ctypes.Structure):
    """What the handle of a PJRT_Executable or PJRT_LoadedExecutable points to (shim.c's
    `struct exe_record`), whether or not the shim is in use: the shim answers NumOutputs
    from it.  Kept alive by the Python object the handle stands for."""
    _fields_ = [("magic", ctypes.c_uint64), ("num_outputs", ctypes.c_uint64)]


#: why the shim is not in use ("" while it is, or before `load()`)
REASON = ""
_lib = None
_loaded = False


def load():
    """The shim library (ctypes.CDLL), or None (REASON says why); loaded once."""
    global _lib, _loaded, REASON
    if _loaded:
        return _lib
    _loaded = True
    if os.environ.get("XLAIR_PJRT_SHIM", "") == "0":
        REASON = "XLAIR_PJRT_SHIM=0"
        return None
    if not LIBRARY.is_file():
        REASON = f"{LIBRARY.name} is not built (make builds it with the C compiler)"
        return None
    try:
        # (PyDLL: its functions are called with the GIL held; set_python takes Python objects)
        lib = ctypes.PyDLL(str(LIBRARY))
        lib.xlair_shim_abi.restype = ctypes.c_int
        lib.xlair_shim_exe_magic.restype = ctypes.c_uint64
        if lib.xlair_shim_abi() != ABI or lib.xlair_shim_exe_magic() != EXE_MAGIC:
            REASON = f"{LIBRARY.name} was built from another version of shim.c (run make)"
            return None
        lib.xlair_shim_python_version.restype = ctypes.c_ulong
        built = lib.xlair_shim_python_version() >> 16
        if built != sys.hexversion >> 16:
            REASON = (f"{LIBRARY.name} was built for Python {built >> 8}.{built & 0xff}, not this "
                      f"{sys.version_info[0]}.{sys.version_info[1]} (run make)")
            return None
    except (OSError, AttributeError) as e:
        REASON = f"{LIBRARY.name} could not be loaded: {e}"
        return None
    lib.xlair_shim_ready_event.restype = ctypes.c_void_p
    lib.xlair_shim_make.restype = ctypes.c_void_p
    lib.xlair_shim_make.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]
    lib.xlair_shim_set_device.restype = None
    lib.xlair_shim_set_device.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    lib.xlair_shim_buffers_deleted.restype = None
    lib.xlair_shim_buffers_deleted.argtypes = [ctypes.c_long]
    lib.xlair_shim_set_python.restype = ctypes.c_int
    lib.xlair_shim_set_python.argtypes = [ctypes.py_object] * 5 + [ctypes.c_int]
    _lib = lib
    return lib


_names = None


def make(lib, inner: abi.Api) -> int | None:
    """The shim's table over `inner` (its address), or None (REASON says why)."""
    global _names, REASON
    _names = (ctypes.c_char_p * len(abi.FUNCTIONS))(*[n.encode() for n in abi.FUNCTIONS])
    table = lib.xlair_shim_make(ctypes.addressof(inner), ctypes.sizeof(inner), _names, len(abi.FUNCTIONS))
    if not table:
        REASON = "shim.c names a PJRT call abi.FUNCTIONS does not have"
    return table or None

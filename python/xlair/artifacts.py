"""Artifacts on disk, a leaf module: xlair's seal on a `.vmfb`, the compile cache directory and
its entries, and the machine code an artifact embeds (the ELF machine of its CPU executables)."""
from __future__ import annotations

import hashlib
import os
import pathlib
import tempfile

_SEAL = b"XLAIRSHA"


def iree_version() -> str:
    """The IREE compiler's version: part of every cache key (a new IREE invalidates entries)."""
    try:
        from iree.compiler import version
        return str(getattr(version, "VERSION", ""))
    except ImportError:
        return ""


def seal(vmfb: bytes) -> bytes:
    """An xlair artifact: the IREE module, its sha256 and the mark `XLAIRSHA`.  IREE's loaders
    (iree.runtime, iree-run-module) ignore the 40 trailing bytes; `xla.load` and the compile
    cache check them, so a corrupt artifact is an error instead of a crash in IREE's loader."""
    return vmfb + hashlib.sha256(vmfb).digest() + _SEAL


def is_sealed(data: bytes) -> bool | None:
    """True: an intact xlair artifact; False: xlair's mark with a wrong digest (corrupt or
    truncated); None: no mark (not written by xlair, or cut short)."""
    if len(data) <= 40 or not data.endswith(_SEAL):
        return None
    return hashlib.sha256(data[:-40]).digest() == data[-40:-8]


def cache_dir() -> pathlib.Path:
    """The compile cache: $XLAIR_CACHE_DIR, else $XDG_CACHE_HOME/xlair (~/.cache/xlair)."""
    d = os.environ.get("XLAIR_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "xlair")
    return pathlib.Path(d)


def cache_get(key: str) -> bytes | None:
    p = cache_dir() / f"{key}.vmfb"
    try:
        data = p.read_bytes()
    except OSError:
        return None
    if not is_sealed(data):
        return None                                # truncated or corrupt: rebuilt by the caller
    try:
        os.utime(p)                                # recently used (see prune_cache)
    except OSError:
        pass
    return data


def prune_cache(limit: int, keep: int) -> int:
    """When the cache holds more than `limit` bytes of artifacts, remove the least recently
    used (by modification time, which a hit renews) down to `keep` bytes; returns the bytes
    removed.  Another process may be using the cache: a file gone already is no error."""
    entries = []
    for p in cache_dir().glob("*.vmfb"):
        try:
            st = p.stat()
        except OSError:
            continue
        entries.append((st.st_mtime, st.st_size, p))
    total = sum(e[1] for e in entries)
    removed = 0
    if total <= limit:
        return 0
    for _, size, p in sorted(entries):
        if total - removed <= keep:
            break
        try:
            p.unlink()
            removed += size
        except OSError:
            pass
    return removed


def write_atomic(path: pathlib.Path, data: bytes) -> None:
    """Write through a temporary file and a rename: readers see the old file or the new one,
    whole.  A cache that cannot be written is no error (the next run recomputes)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        pass


def cache_put(key: str, vmfb: bytes) -> None:
    write_atomic(cache_dir() / f"{key}.vmfb", vmfb)


#: ELF e_machine values of the architectures xlair compiles for, by the name `uname -m` gives.
ELF_MACHINES = {62: "x86_64", 183: "aarch64", 243: "riscv64", 3: "i386", 40: "arm"}


def elf_machines(vmfb: bytes) -> set[str]:
    """The architectures of the ELF executables embedded in a `.vmfb` (IREE's CPU executables
    are ELF shared objects stored whole in the flatbuffer): the e_machine field of each ELF
    header found, by name (unknown machines as `elf-machine-<n>`)."""
    found: set[str] = set()
    i = vmfb.find(b"\x7fELF")
    while i >= 0 and i + 20 <= len(vmfb):
        ei_class, ei_data = vmfb[i + 4], vmfb[i + 5]
        if ei_class in (1, 2) and ei_data in (1, 2):
            m = int.from_bytes(vmfb[i + 18:i + 20], "little" if ei_data == 1 else "big")
            found.add(ELF_MACHINES.get(m, f"elf-machine-{m}"))
        i = vmfb.find(b"\x7fELF", i + 4)
    return found

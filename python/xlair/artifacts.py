"""Artifacts on disk, a leaf module: xlair's seal on a `.vmfb`, the compile cache directory and
its entries, and the machine code an artifact embeds (the ELF machine of its CPU executables)."""
from __future__ import annotations

import hashlib
import os
import pathlib
import tempfile
import threading

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
    _remember(data, p)
    return data


def prune_cache(limit: int, keep: int) -> int:
    """When the cache holds more than `limit` bytes of artifacts, remove the least recently
    used (by modification time, which a hit renews) down to `keep` bytes; returns the bytes
    removed.  The names of one file (hard links, cache_put) count once and go together.
    Another process may be using the cache: a file gone already is no error."""
    files: dict[tuple, list] = {}                  # (device, inode) -> [mtime, size, paths]
    for p in cache_dir().glob("*.vmfb"):
        try:
            st = p.stat()
        except OSError:
            continue
        files.setdefault((st.st_dev, st.st_ino), [st.st_mtime, st.st_size, []])[2].append(p)
    total = sum(f[1] for f in files.values())
    removed = 0
    if total <= limit:
        return 0
    for _, size, paths in sorted(files.values(), key=lambda f: f[0]):
        if total - removed <= keep:
            break
        gone = False
        for p in paths:
            try:
                p.unlink()
                gone = True
            except OSError:
                pass
        removed += size if gone else 0
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


#: the cache file this process last wrote or read each artifact as, by the artifact's digest
#: (its seal): a later entry of the same bytes (xlair.jit keeps one artifact under three
#: keys: the program's, the IREE input's, the StableHLO text's) is a hard link to it
_FILES: dict[bytes, pathlib.Path] = {}
_MAX_FILES = 256


def _remember(data: bytes, path: pathlib.Path) -> None:
    digest = data[-40:-8]
    _FILES.pop(digest, None)
    _FILES[digest] = path
    if len(_FILES) > _MAX_FILES:
        _FILES.pop(next(iter(_FILES)))


def _link(src: pathlib.Path, path: pathlib.Path, data: bytes) -> bool:
    """`path` made another name of the file `src` when it holds `data` (one copy on disk);
    False where that cannot be (gone or changed since, no hard links on the file system)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.link")
    try:
        if src.read_bytes() != data:
            return False
        os.link(src, tmp)
        os.replace(tmp, path)
        return True
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass
        return False


def cache_put(key: str, vmfb: bytes) -> None:
    path = cache_dir() / f"{key}.vmfb"
    marked = vmfb.endswith(_SEAL)       # (the digest is only a name here: _link compares the bytes)
    src = _FILES.get(vmfb[-40:-8]) if marked else None
    if src is not None and src != path and _link(src, path, vmfb):
        return
    write_atomic(path, vmfb)
    if src is None and marked:
        _remember(vmfb, path)


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

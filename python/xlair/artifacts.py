"""Artifacts on disk, a leaf module: xlair's seal on a `.vmfb`, the compile cache directory and
its entries (and whom it trusts: `distrust`, `cache_read`), and the machine code an artifact
embeds (the ELF machine of its CPU executables)."""
from __future__ import annotations

import hashlib
import hmac
import os
import pathlib
import stat
import tempfile
import threading
import warnings

_SEAL = b"XLAIRSHA"
#: the bytes after the IREE module in an artifact (seal) and in a MAC'd cache entry: a
#: 32-byte digest and an 8-byte mark
_TRAILER = 40


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
    if len(data) <= _TRAILER or not data.endswith(_SEAL):
        return None
    return hashlib.sha256(unseal(data)).digest() == _digest(data)


def unseal(data: bytes) -> bytes:
    """The IREE module of an artifact (or of a MAC'd cache entry): its bytes before the trailer."""
    return data[:-_TRAILER]


def _digest(data: bytes) -> bytes:
    """The digest in the trailer of an artifact or a MAC'd cache entry."""
    return data[-_TRAILER:-len(_SEAL)]


def cache_dir() -> pathlib.Path:
    """The compile cache: $XLAIR_CACHE_DIR, else $XDG_CACHE_HOME/xlair (~/.cache/xlair)."""
    d = os.environ.get("XLAIR_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "xlair")
    return pathlib.Path(d)


# ----------------------------------------------------------------------------------------
# trust: a CPU artifact is machine code that runs in the process loading it, and a seal is a
# digest anyone can compute, so the cache is read only where nobody but its owner could have
# written it, or where each entry is authenticated by a key (README "Trust")
# ----------------------------------------------------------------------------------------
class UntrustedCacheWarning(UserWarning):
    """The compile cache, or an entry of it, was passed over: someone else could have written it."""


_MAC = b"XLAIRMAC"
_WARNED: set = set()


def _warn(where, rule: str, text: str) -> None:
    """Warn once per (directory, rule broken): a cache passed over is a cache that compiles
    every program again, which its user should hear about, once."""
    if (str(where), rule) not in _WARNED:
        _WARNED.add((str(where), rule))
        warnings.warn(f"xlair: {text}", UntrustedCacheWarning, stacklevel=2)


def cache_mac_key() -> bytes | None:
    """The key that authenticates the cache's entries: $XLAIR_CACHE_KEY, else the contents of the
    file $XLAIR_CACHE_KEY_FILE (leading and trailing white space left out), else None.  A key
    file others may read or write is no secret: it is refused, with a warning, and the cache is
    then read as one without a key."""
    text = os.environ.get("XLAIR_CACHE_KEY")
    if text:
        return text.encode()
    path = os.environ.get("XLAIR_CACHE_KEY_FILE")
    if not path:
        return None
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            key = f.read().strip() if stat.S_ISREG(st.st_mode) else b""
    except OSError as e:
        _warn(path, "key", f"XLAIR_CACHE_KEY_FILE {path} cannot be read ({e.strerror}); the compile cache "
                           f"is used without a key")
        return None
    if st.st_mode & 0o007:
        _warn(path, "key", f"XLAIR_CACHE_KEY_FILE {path} gives others access (mode {oct(st.st_mode & 0o7777)}; "
                           f"it must be readable only by its owner or group); the compile cache is used without a key")
        return None
    if not key:
        _warn(path, "key", f"XLAIR_CACHE_KEY_FILE {path} holds no key; the compile cache is used without a key")
        return None
    return key


def distrust(st: os.stat_result, keyed: bool) -> tuple[str, str] | None:
    """Why a cache directory or entry with this status may hold what someone else wrote: (rule,
    words), or None when it may not.  Without a key, it must be owned by this user or root and
    not writable by group or others (as ssh's StrictModes asks of ~/.ssh); a sticky directory
    (/tmp) is no exception, since where fs.protected_hardlinks is off anyone may link one of
    this user's entries under the name of another.  With a key, every entry's MAC is checked,
    so owners and group write do not matter; a directory anyone may write is still refused
    unless it is sticky (anyone could delete or replace every entry: it is a mistake)."""
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    if uid is None:                 # (no owners to check: Windows)
        return None
    mode = st.st_mode
    if keyed:
        if stat.S_ISDIR(mode) and mode & stat.S_IWOTH and not mode & stat.S_ISVTX:
            return "writable", f"is writable by anyone and not sticky (mode {oct(mode & 0o7777)})"
        return None
    if st.st_uid not in (uid, 0):
        return "owner", f"is owned by uid {st.st_uid}, neither you (uid {uid}) nor root"
    if mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "writable", (f"is writable by group or others (mode {oct(mode & 0o7777)}; a cache shared with "
                            f"others needs a key: XLAIR_CACHE_KEY or XLAIR_CACHE_KEY_FILE)")
    return None


def _mac(key: bytes, name: str, data: bytes) -> bytes:
    """HMAC-SHA256 of an entry's name (its path under the cache directory: the cache key) and
    its bytes: an entry genuine under one name is refused under another."""
    h = hmac.new(key, name.encode() + b"\0", hashlib.sha256)
    h.update(data)
    return h.digest()


def _makedirs(d: pathlib.Path) -> None:
    """`d` and its missing parents made 0o755 (less the umask, which only takes bits away): never
    writable by group or others, whatever the umask."""
    if not d.parent.exists() and d.parent != d:
        _makedirs(d.parent)
    try:
        os.mkdir(d, 0o755)
    except FileExistsError:
        pass


def _dirs(root: pathlib.Path, name: str, keyed: bool, create: bool) -> bool:
    """Whether the cache directory and those under it that hold the entry `name` may be read
    (`distrust`), warning where not; with `create`, those missing are made first: 0o755, and
    with a key, the directories under the cache's own take its group's bits (a team's setgid
    0o2775 cache gets subdirectories every member can write)."""
    d, group = root, 0
    for part in ("", *name.split("/")[:-1]):
        d = d / part if part else d
        try:
            st = os.stat(d)
        except FileNotFoundError:
            if not create:
                return False
            try:
                _makedirs(d)
                if group:
                    os.chmod(d, 0o755 | group)
                st = os.stat(d)
            except OSError:
                return False
        except OSError:
            return False
        if not stat.S_ISDIR(st.st_mode):
            return False
        why = distrust(st, keyed)
        if why is not None:
            _warn(d, why[0], f"not using the compile cache {d}: it {why[1]}; its entries are computed again instead")
            return False
        if keyed and not part:
            group = st.st_mode & 0o2070
    return True


def _read(name: str, key: bytes | None) -> bytes | None:
    root = cache_dir()
    if not _dirs(root, name, key is not None, create=False):
        return None
    path = root / name
    try:        # (not through a link; a FIFO planted as an entry must not block the open)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)                      # the file read, not the name: no race with a rename
        if not stat.S_ISREG(st.st_mode):
            return None
        why = distrust(st, False) if key is None else None
        if why is not None:
            _warn(path.parent, why[0], f"not using the compile cache {path.parent}: its entry {path.name} {why[1]}; "
                                       f"its entries are computed again instead")
            return None
        data = f.read()
    if key is None:
        return data
    if len(data) >= _TRAILER and data.endswith(_MAC) and hmac.compare_digest(_digest(data), _mac(key, name, unseal(data))):
        return unseal(data)
    _warn(path.parent, "mac", f"not using the entry {path.name} of the compile cache {path.parent}: its MAC does not "
                              f"verify with the cache key (written without it, with another key, or under another "
                              f"name); it is computed again instead")
    return None


def cache_read(name: str) -> bytes | None:
    """The bytes of the cache entry `name` (a path under `cache_dir()`, `/`-separated), or None
    where it is absent or may hold what someone else wrote (`distrust`; with a key, where its
    MAC does not verify).  Every reader of the cache comes through here: artifacts, the CPUs
    IREE resolved (xlair.cpus), the artifacts a child process vetted (xlair.runtime)."""
    return _read(name, cache_mac_key())


def _write(name: str, data: bytes, key: bytes | None) -> None:
    root = cache_dir()
    if not _dirs(root, name, key is not None, create=True):
        return                      # never write where it would not be read
    if key is not None:             # (its group reads it: a team's shared cache)
        write_atomic(root / name, data + _mac(key, name, data) + _MAC, 0o640)
    else:
        write_atomic(root / name, data)


def cache_write(name: str, data: bytes) -> None:
    """The cache entry `name` written (atomically), with its MAC where there is a key; nothing is
    written where `cache_read` would not read it, and a cache that cannot be written (a
    read-only file system) is no error."""
    _write(name, data, cache_mac_key())


def cache_get(key: str) -> bytes | None:
    mac_key = cache_mac_key()
    data = _read(f"{key}.vmfb", mac_key)
    if data is None or not is_sealed(data):
        return None                                # truncated or corrupt: rebuilt by the caller
    p = cache_dir() / f"{key}.vmfb"
    try:
        os.utime(p)                                # recently used (see prune_cache)
    except OSError:
        pass
    if mac_key is None:
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


def write_atomic(path: pathlib.Path, data: bytes, mode: int = 0o600) -> None:
    """Write through a temporary file and a rename: readers see the old file or the new one,
    whole.  A cache that cannot be written is no error (the next run recomputes)."""
    try:
        _makedirs(path.parent)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            if mode != 0o600:                      # (mkstemp's)
                os.fchmod(fd, mode)
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        pass


#: the cache file this process last wrote or read each artifact as, by the artifact's digest
#: (its seal): a later entry of the same bytes (xlair.jit keeps one artifact under three
#: keys: the program's, the IREE input's, the StableHLO text's) is a hard link to it.  Not
#: with a key: each name's file ends in its own MAC (it covers the name), so the three are
#: three files.
_FILES: dict[bytes, pathlib.Path] = {}
_MAX_FILES = 256


def _remember(data: bytes, path: pathlib.Path) -> None:
    digest = _digest(data)
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
    mac_key = cache_mac_key()
    if mac_key is not None:
        _write(f"{key}.vmfb", vmfb, mac_key)
        return
    if not _dirs(cache_dir(), f"{key}.vmfb", False, create=True):
        return                      # never write where it would not be read
    path = cache_dir() / f"{key}.vmfb"
    marked = vmfb.endswith(_SEAL)       # (the digest is only a name here: _link compares the bytes)
    src = _FILES.get(_digest(vmfb)) if marked else None
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

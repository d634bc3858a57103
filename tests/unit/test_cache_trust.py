"""Whom the compile cache trusts (README "Trust", xlair/artifacts.py): a CPU artifact is machine
code that runs in the process loading it, so the cache is read only where nobody but its owner
(or root) could have written it, or, with a key, only entries whose HMAC verifies; `xla.load`
pins an artifact by its sha256.  Every planted entry here is a correctly sealed artifact of
another program (x + 100 where x + 1 is asked for), so a test that read it would see 100s."""
import hashlib
import importlib
import os
import shutil
import stat
import subprocess
import sys
import warnings

import numpy as np
import pytest

import xlair as xla
from xlair import F32, Shape
from xlair import artifacts, cpus, runtime
from xlair import ops as O
from xlair.artifacts import UntrustedCacheWarning, cache_get, cache_put, cache_read, cache_write, is_sealed, seal

xc = importlib.import_module("xlair.compile")      # (the module: `xlair.compile` is also the function)
X = np.arange(4, dtype=np.float32)
KEY = "a team's secret"
HERE = os.path.dirname(__file__)


def add(c: float) -> xla.Computation:
    """x + c of an f32[4] (one name for every c: a planted artifact looks the part)."""
    b = xla.Builder("step")
    O.add(b.parameter(0, Shape(F32, (4,)), "x"), O.constant(b, np.float32(c)), broadcast_dimensions=())
    return b.build()


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    """Each test warns afresh (warnings are given once per directory and rule) and starts with
    no cache key set."""
    monkeypatch.setattr(artifacts, "_WARNED", set())
    monkeypatch.delenv("XLAIR_CACHE_KEY", raising=False)
    monkeypatch.delenv("XLAIR_CACHE_KEY_FILE", raising=False)


def entries(comp, d, monkeypatch) -> dict:
    """The cache entries compiling `comp` writes into the fresh private cache `d`: {name: bytes}."""
    monkeypatch.setenv("XLAIR_CACHE_DIR", str(d))
    xc.compile_vmfb(comp)
    return {p.name: p.read_bytes() for p in d.glob("*.vmfb")}


@pytest.fixture
def compiles(monkeypatch):
    """The calls of IREE's compiler (each one compiles; a cache hit makes none)."""
    calls = []
    real = xc.iree_compile

    def counted(*a):
        calls.append(a)
        return real(*a)
    monkeypatch.setattr(xc, "iree_compile", counted)
    return calls


def test_world_writable_cache_with_a_planted_artifact(tmp_path, monkeypatch, compiles):
    """A world-writable cache directory holding, under the names `x + 1`'s artifact is looked
    up by, a sealed artifact of `x + 100`: xlair warns naming the directory, compiles `x + 1`,
    and neither runs nor overwrites the planted file.  The same directory made private (0o755)
    does serve the planted file: the plant is where a cache hit looks."""
    names = sorted(entries(add(1), tmp_path / "probe", monkeypatch))
    planted = next(iter(entries(add(100), tmp_path / "other", monkeypatch).values()))
    assert len(names) == 2 and is_sealed(planted)
    shared = tmp_path / "shared"
    shared.mkdir()
    for n in names:
        (shared / n).write_bytes(planted)
        os.chmod(shared / n, 0o644)
    os.chmod(shared, 0o777)
    monkeypatch.setenv("XLAIR_CACHE_DIR", str(shared))
    compiles.clear()
    with pytest.warns(UntrustedCacheWarning, match=rf"not using the compile cache {shared}: it is writable by "
                                                   rf"group or others \(mode 0o777"):
        exe = xla.compile(add(1))
    np.testing.assert_array_equal(exe(X), X + 1)
    assert len(compiles) == 1 and exe._vmfb != planted
    assert sorted(p.name for p in shared.iterdir()) == names          # nothing written there
    assert all((shared / n).read_bytes() == planted for n in names)   # the plant untouched
    os.chmod(shared, 0o755)                                          # control: now it is read
    compiles.clear()
    np.testing.assert_array_equal(xla.compile(add(1))(X), X + 100)
    assert compiles == []


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root")
def test_an_entry_another_user_owns_is_not_read(tmp_path, monkeypatch, compiles):
    """A private directory (0o755, this user's) with an entry owned by another user (uid
    12345): refused, with a warning naming the directory, the entry and its owner."""
    d = tmp_path / "c"
    found = entries(add(1), d, monkeypatch)
    planted = next(iter(entries(add(100), tmp_path / "other", monkeypatch).values()))
    for n in found:
        (d / n).write_bytes(planted)
        os.chown(d / n, 12345, 12345)
    monkeypatch.setenv("XLAIR_CACHE_DIR", str(d))
    compiles.clear()
    with pytest.warns(UntrustedCacheWarning, match=r"its entry \w+\.vmfb is owned by uid 12345, neither you"):
        np.testing.assert_array_equal(xla.compile(add(1))(X), X + 1)
    assert len(compiles) == 1


# directory mode, keyed, read
RULES = [(0o755, False, True), (0o700, False, True), (0o775, False, False), (0o757, False, False),
         (0o777, False, False), (0o1777, False, False),
         (0o2775, True, True), (0o775, True, True), (0o1777, True, True), (0o777, True, False), (0o757, True, False)]


@pytest.mark.parametrize("mode,keyed,read", RULES, ids=[f"{oct(m)}-{'key' if k else 'nokey'}" for m, k, _ in RULES])
def test_which_directories_are_read(tmp_path, monkeypatch, mode, keyed, read):
    """Without a key: owned by this user or root and writable by nobody else (a sticky
    directory included); with a key, group-writable and sticky directories too, never one
    anyone may write that is not sticky.  Each through every reader: an artifact, a cpus
    entry, a vetted marker."""
    if keyed:
        monkeypatch.setenv("XLAIR_CACHE_KEY", KEY)
    monkeypatch.setenv("XLAIR_CACHE_DIR", str(tmp_path / "c"))
    art = seal(b"\1" * 100)
    cache_put("k", art)
    cache_write("cpus/c.json", b"{}")
    cache_write("vetted/v", b"")
    assert cache_get("k") == art and cache_read("cpus/c.json") == b"{}" and cache_read("vetted/v") == b""
    for d in (tmp_path / "c", tmp_path / "c" / "cpus", tmp_path / "c" / "vetted"):
        os.chmod(d, mode)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = [cache_get("k"), cache_read("cpus/c.json"), cache_read("vetted/v")]
    assert got == ([art, b"{}", b""] if read else [None] * 3)
    # one warning (per directory and rule) where not read, naming the cache directory
    assert [str(w.message).split(":")[1] for w in seen] == ([] if read else [f" not using the compile cache {tmp_path / 'c'}"])


def test_group_writable_entries_need_a_key(tmp_path, monkeypatch):
    monkeypatch.setenv("XLAIR_CACHE_DIR", str(tmp_path))
    art = seal(b"\2" * 100)
    cache_put("k", art)
    os.chmod(tmp_path / "k.vmfb", 0o664)
    with pytest.warns(UntrustedCacheWarning, match=r"its entry k\.vmfb is writable by group or others \(mode 0o664"):
        assert cache_get("k") is None
    monkeypatch.setenv("XLAIR_CACHE_KEY", KEY)
    cache_put("k", art)
    os.chmod(tmp_path / "k.vmfb", 0o664)
    assert cache_get("k") == art                      # its MAC verifies: mode and owner do not matter


_TEAMMATE = r"""
import sys, numpy as np
sys.path.insert(0, sys.argv[1])
from test_cache_trust import X, add
import xlair as xla
assert np.array_equal(xla.compile(add(1))(X), X + 1) and np.array_equal(xla.compile(add(100))(X), X + 100)
print("ok")
"""


def test_keyed_shared_cache(tmp_path, monkeypatch, compiles):
    """A team's cache (setgid, group-writable) with XLAIR_CACHE_KEY: what another process with
    the key wrote is used (no compile); a planted entry is refused: a sealed artifact without
    a MAC, one with another key's MAC, and a genuine entry of `x + 100` put under `x + 1`'s
    name (the MAC covers the name).  With another key, nothing there is used."""
    team = tmp_path / "team"
    team.mkdir()
    os.chmod(team, 0o2775)
    env = dict(os.environ, XLAIR_CACHE_DIR=str(team), XLAIR_CACHE_KEY=KEY)
    r = subprocess.run([sys.executable, "-c", _TEAMMATE, HERE], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-3000:]
    files = sorted(team.glob("*.vmfb"))
    # two entries per program (its own key, its IREE input's), each its own file ending in its MAC
    assert len(files) == 4 and all(p.read_bytes().endswith(b"XLAIRMAC") and p.stat().st_nlink == 1 for p in files)
    assert stat.S_IMODE(os.stat(team).st_mode) == 0o2775
    monkeypatch.setenv("XLAIR_CACHE_DIR", str(team))
    monkeypatch.setenv("XLAIR_CACHE_KEY", KEY)
    looked = []
    monkeypatch.setattr(xc, "cache_get", lambda k: looked.append(k) or cache_get(k))
    compiles.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UntrustedCacheWarning)
        np.testing.assert_array_equal(xla.compile(add(1))(X), X + 1)
        right = looked[-1]
        np.testing.assert_array_equal(xla.compile(add(100))(X), X + 100)
        other = looked[-1]
    assert compiles == [] and right != other           # the teammate's entries, not compiled here
    genuine_other = (team / f"{other}.vmfb").read_bytes()
    sealed_other = genuine_other[:-40]
    assert is_sealed(sealed_other)
    name = f"{right}.vmfb"
    plants = {"no MAC": sealed_other,
              "another key's MAC": sealed_other + artifacts._mac(b"another key", name, sealed_other) + b"XLAIRMAC",
              "another name's MAC": genuine_other}
    for what, planted in plants.items():
        (team / name).write_bytes(planted)
        monkeypatch.setattr(artifacts, "_WARNED", set())
        with pytest.warns(UntrustedCacheWarning, match=rf"not using the entry {name} of the compile cache {team}: "
                                                       rf"its MAC does not verify"):
            np.testing.assert_array_equal(xla.compile(add(1))(X), X + 1, err_msg=what)
        assert cache_get(right) is not None and cache_get(right) != sealed_other   # rewritten, genuine
    monkeypatch.setenv("XLAIR_CACHE_KEY", "another key")
    monkeypatch.setattr(artifacts, "_WARNED", set())
    compiles.clear()
    with pytest.warns(UntrustedCacheWarning, match="its MAC does not verify"):
        np.testing.assert_array_equal(xla.compile(add(1))(X), X + 1)
    assert len(compiles) == 1


def test_a_keyed_entry_is_one_file_per_name(tmp_path, monkeypatch):
    """Without a key, one artifact under three names is one file (hard links); with a key,
    three files, each with its own name's MAC, so a copy under another name is refused."""
    monkeypatch.setenv("XLAIR_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("XLAIR_CACHE_KEY", KEY)
    art = seal(b"\3" * 100)
    for k in ("program", "input", "text"):
        cache_put(k, art)
    files = [tmp_path / f"{k}.vmfb" for k in ("program", "input", "text")]
    assert [cache_get(k) for k in ("program", "input", "text")] == [art] * 3
    assert all(p.stat().st_nlink == 1 for p in files) and len({p.read_bytes() for p in files}) == 3
    shutil.copy(files[0], tmp_path / "else.vmfb")
    with pytest.warns(UntrustedCacheWarning, match="its MAC does not verify"):
        assert cache_get("else") is None
    monkeypatch.delenv("XLAIR_CACHE_KEY")                 # keyed files: not xlair's seal at the end
    assert cache_get("program") is None


def test_key_file(tmp_path, monkeypatch):
    """XLAIR_CACHE_KEY_FILE: a file readable by its owner or group holds the same key as
    XLAIR_CACHE_KEY (white space around it left out); one that others may read is refused."""
    monkeypatch.setenv("XLAIR_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setenv("XLAIR_CACHE_KEY", KEY)
    art = seal(b"\4" * 100)
    cache_put("k", art)
    monkeypatch.delenv("XLAIR_CACHE_KEY")
    f = tmp_path / "key"
    f.write_text(KEY + "\n")
    os.chmod(f, 0o640)
    monkeypatch.setenv("XLAIR_CACHE_KEY_FILE", str(f))
    assert cache_get("k") == art
    os.chmod(f, 0o644)
    with pytest.warns(UntrustedCacheWarning, match=rf"XLAIR_CACHE_KEY_FILE {f} gives others access \(mode 0o644"):
        assert cache_get("k") is None                    # used without a key: a keyed entry is no artifact


def test_planted_cpus_entry_and_vetted_marker(tmp_path, monkeypatch):
    """The cache's other entries are read as artifacts are: in a world-writable directory, a
    planted answer of what IREE resolves `host` to is not read (it would let check_runnable
    pass code this CPU cannot run), nor a planted marker saying an artifact was vetted (its
    child-process trial run is made).  Each plant is read once the directory is private."""
    d = tmp_path / "c"
    monkeypatch.setenv("XLAIR_CACHE_DIR", str(d))
    flags = (f"{cpus.CPU_FLAG}=host",)
    try:
        cpus.resolve.cache_clear()
        real = cpus.resolve(flags)
        (entry,) = (d / "cpus").glob("*.json")
        entry.write_text('{"triple": "x86_64-unknown-linux-gnu", "cpu": "planted", "features": []}')
        cpus.resolve.cache_clear()
        assert cpus.resolve(flags).cpu == "planted"          # control: a private directory is read
        os.chmod(d, 0o777)
        cpus.resolve.cache_clear()
        with pytest.warns(UntrustedCacheWarning, match=f"not using the compile cache {d}: it is writable"):
            assert cpus.resolve(flags) == real
    finally:
        cpus.resolve.cache_clear()

    data = b"not vetted " + os.urandom(32)
    (d / "vetted").mkdir(mode=0o755)
    (d / "vetted" / hashlib.sha256(data).hexdigest()).write_bytes(b"")
    runs = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: runs.append(a) or subprocess.CompletedProcess(a, 0, b"", b""))
    os.chmod(d, 0o755)
    runtime._vet(data, "p.vmfb", "cpu")
    assert runs == []                                        # control: the marker is read
    os.chmod(d, 0o777)
    runtime._vet(data, "p.vmfb", "cpu")
    assert len(runs) == 1


def test_load_expected_sha256(tmp_path):
    """xla.load(expected_sha256=...) loads the artifact whose sha256 (sha256sum's hex) it is
    and refuses any other, naming the digest found."""
    p = tmp_path / "step.vmfb"
    xla.compile(add(1)).save(p)
    digest = hashlib.sha256(p.read_bytes()).hexdigest()
    np.testing.assert_array_equal(xla.load(p, expected_sha256=digest.upper())(X), X + 1)
    wrong = hashlib.sha256(b"another artifact").hexdigest()
    with pytest.raises(xla.XlaError, match=rf"xla.load expected_sha256 {wrong} must be the sha256 of {p} .*; "
                                           rf"got {digest}$") as e:
        xla.load(p, expected_sha256=wrong)
    assert e.value.op == "xla.load" and e.value.param == "expected_sha256"
    with pytest.raises(xla.XlaError, match=r"expected_sha256 must be a sha256 digest of 64 hexadecimal digits; "
                                           r"got 'abc'"):
        xla.load(p, expected_sha256="abc")


_READ_ONLY = r"""
import os, sys, errno, numpy as np
sys.path.insert(0, sys.argv[1])
d = os.environ["XLAIR_CACHE_DIR"]
try:
    open(os.path.join(d, "probe"), "w")
    raise SystemExit("the cache directory is writable")
except OSError as e:
    assert e.errno in (errno.EROFS, errno.EACCES), e
from test_cache_trust import X, add
import xlair as xla
for _ in range(2):
    assert np.array_equal(xla.compile(add(1))(X), X + 1)
print("ok", sorted(os.listdir(d)))
"""


def _read_only_dir(tmp_path):
    """The command prefix that runs a command with tmp_path/ro a read-only file system (a
    read-only tmpfs in a mount namespace of its own, as root), or the reason there is none."""
    ro = tmp_path / "ro"
    ro.mkdir()
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        os.chmod(ro, 0o555)             # (not root: the mode bits stop writes)
        return [], ro
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("as root only a read-only mount stops writes, and unshare(1) is not installed")
    cmd = [unshare, "-m", "sh", "-c", f"mount -t tmpfs -o ro,mode=755 tmpfs {ro} && exec \"$0\" \"$@\""]
    probe = subprocess.run(cmd + ["true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"as root only a read-only mount stops writes, and this machine refuses one: {probe.stderr[-300:]}")
    return cmd, ro


def test_cache_on_a_read_only_file_system(tmp_path):
    """A cache directory on a read-only file system: nothing can be written, xlair compiles
    (twice, no error) and the results are right."""
    prefix, ro = _read_only_dir(tmp_path)
    env = dict(os.environ, XLAIR_CACHE_DIR=str(ro))
    r = subprocess.run(prefix + [sys.executable, "-c", _READ_ONLY, HERE], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok []", (r.stdout, r.stderr[-3000:])

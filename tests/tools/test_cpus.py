"""CPU artifacts say what they need: the triple and CPU features are in the signature, the compile
cache keys on the CPU `host` resolves to, every loading path (xla.load, xla.compile and its cache,
xlair-run) refuses code this machine cannot run with an XlaError naming what is missing, never a
SIGILL; aarch64 and riscv64 artifacts are cross-compiled and checked by their ELF headers."""
import json
import os
import pathlib
import platform
import re
import struct
import subprocess
import sys

import numpy as np
import pytest

import xlair as xla
from xlair import cpus
from xlair import ops as O
from xlair.artifacts import cache_put
from xlair.compile import cache_key, compile_vmfb
from xlair.dialect.types import F32, Shape
from xlair.targets import TARGETS
from xlair.tools import run as xr

BIN = pathlib.Path(sys.executable).parent

#: The x86-64 psABI's definition of the x86-64-v3 level (beyond x86-64-v2).
X86_64_V3 = {"avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe"}
#: ELF e_machine numbers (the ELF specification's table).
EM_X86_64, EM_AARCH64, EM_RISCV = 62, 183, 243


def _prog() -> xla.Computation:
    """A matmul and element-wise work: exercises data tiling and the ukernels on every triple."""
    b = xla.Builder("mm")
    x, w = b.parameter(0, Shape(F32, (8, 16))), b.parameter(1, Shape(F32, (16, 4)))
    O.tanh(O.add(O.dot(x, w), O.constant(b, np.float32(1)), broadcast_dimensions=()))
    return b.build()


def _signature(vmfb: bytes) -> dict:
    """The xlair.signature reflection entry, read off the flatbuffer's bytes."""
    m = re.search(rb'\{"name": .*?"replicas": \d+[^\x00]*?\}(?=\x00|$)', vmfb)
    assert m, "no xlair signature in the artifact"
    return json.loads(m.group(0).decode())


def _elf_machines(vmfb: bytes) -> set:
    """e_machine of every ELF header in the artifact, read with struct (independent of xlair)."""
    out, i = set(), vmfb.find(b"\x7fELF")
    while i >= 0:
        out.add(struct.unpack_from("<H", vmfb, i + 18)[0])
        i = vmfb.find(b"\x7fELF", i + 4)
    return out


def _cpuinfo_flags() -> set:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _unrunnable_x86_chip() -> tuple[str, list] | None:
    """An x86-64 CPU whose features this machine lacks (sapphirerapids on an AVX2 machine,
    graniterapids on a Sapphire Rapids, ...)."""
    have = set(cpus.host().features)
    for chip in ("sapphirerapids", "graniterapids", "znver4", "diamondrapids", "znver5"):
        try:
            missing = sorted(set(cpus.resolve(tuple(cpus.flags_for(chip))).features) - have)
        except xla.XlaError:
            continue
        if missing:
            return chip, missing
    return None


def test_host_is_this_machine():
    """`host` resolves to this machine's architecture and to features /proc/cpuinfo lists."""
    h = cpus.host()
    assert h.arch == cpus.host_arch() == {"amd64": "x86_64"}.get(platform.machine().lower(), platform.machine().lower())
    flags = _cpuinfo_flags()
    for linux, llvm in (("avx2", "avx2"), ("avx512f", "avx512f"), ("fma", "fma"), ("f16c", "f16c"),
                        ("avx512_bf16", "avx512bf16"), ("sse4_2", "sse4.2")):
        if flags:
            assert (linux in flags) == (llvm in h.features), (linux, h.cpu)


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.machine().lower() not in ("x86_64", "amd64"),
                    reason="the check of /proc/cpuinfo's names against the compiler's probe is written for x86-64 Linux")
def test_cpuinfo_names_every_feature_the_compiler_sees():
    """Where only the runtime is installed, the CPU's features come from /proc/cpuinfo by LLVM's
    names (cpus.host_from_cpuinfo): they hold every feature IREE's `host` resolution (the
    compiler's probe) finds, so an artifact compiled with cpu='host' here loads there too."""
    probe, cpuinfo = cpus.resolve((f"{cpus.CPU_FLAG}=host",)), cpus.host_from_cpuinfo()
    assert cpuinfo.arch == probe.arch
    assert not set(probe.features) - set(cpuinfo.features), sorted(set(probe.features) - set(cpuinfo.features))
    assert "avx2" in cpuinfo.features and "sse4.2" in cpuinfo.features   # (every x86-64-v3 CPU)


#: Linux's flags of a Sapphire Rapids core's AVX-512 (from its /proc/cpuinfo): the set Intel's
#: AVX10.1 names, which Linux has no flag for
SPR_AVX512 = {"avx512f", "avx512dq", "avx512ifma", "avx512cd", "avx512bw", "avx512vl", "avx512_bf16", "avx512vbmi",
              "avx512_vbmi2", "avx512_vnni", "avx512_bitalg", "avx512_vpopcntdq", "avx512_fp16"}


@pytest.mark.parametrize("dropped", [None, "avx512_fp16", "avx512_bf16", "avx512vbmi"])
def test_avx10_1_is_read_off_the_avx512_set_it_names(dropped):
    """LLVM's host detection names AVX10.1 where CPUID says it (seen: an Intel Xeon, an artifact
    compiled there with cpu='host' refused by its own runtime without the compiler); Linux has
    no flag for it, so the run side derives it from the AVX-512 features it stands for, all of
    them (an Ice Lake lacks AVX512-FP16 and BF16, a Cooper Lake VBMI)."""
    flags = {"avx", "avx2", "fma"} | (SPR_AVX512 - {dropped})
    feats = cpus.features_from_cpuinfo(flags)
    assert ("avx10.1" in feats) == (dropped is None), sorted(feats)
    assert {"avx512f", "avx512vbmi2", "avx512vpopcntdq"} <= feats   # (the flags by LLVM's names)


def test_artifact_records_triple_and_features(tmp_path):
    vmfb = compile_vmfb(_prog(), "cpu", cpu="x86-64-v3")
    need = _signature(vmfb)["cpu"]
    assert need["triple"].startswith("x86_64-") and need["cpu"] == "x86-64-v3"
    assert X86_64_V3 <= set(need["features"]), need
    assert not any(f.startswith("avx512") for f in need["features"])
    assert _elf_machines(vmfb) == {EM_X86_64}
    # the same record, as IREE's own tool prints the module's reflection
    p = tmp_path / "v3.vmfb"
    p.write_bytes(vmfb)
    dump = subprocess.run([str(BIN / "iree-dump-module"), str(p)], capture_output=True, text=True, timeout=120)
    assert dump.returncode == 0 and '"cpu": "x86-64-v3"' in dump.stdout and "avx2" in dump.stdout
    # and it runs here: every x86-64 machine this suite runs on has x86-64-v3
    got = xla.load(p)(np.ones((8, 16), np.float32), np.full((16, 4), 0.01, np.float32))
    np.testing.assert_allclose(got, np.tanh(np.full((8, 4), 1.16, np.float32)), rtol=1e-5)


@pytest.mark.parametrize("chip, em, triple, feature", [
    ("neoverse-v1", EM_AARCH64, "aarch64", "sve"),
    ("neoverse-n1", EM_AARCH64, "aarch64", "neon"),
    ("aarch64", EM_AARCH64, "aarch64", None),      # generic: NEON is part of the architecture
    ("generic-rv64", EM_RISCV, "riscv64", "v"),
])
def test_cross_compiled_artifacts(tmp_path, capsys, chip, em, triple, feature):
    """aarch64 and riscv64 artifacts: the embedded code is an ELF for that machine, IREE's dump
    tool reads the module, the signature names the triple, and loading it here is an XlaError
    in every path, in this process and in a fresh one."""
    if cpus.host_arch() == triple:
        pytest.skip(f"this machine is {triple}")
    vmfb = compile_vmfb(_prog(), "cpu", arch=chip)
    assert _elf_machines(vmfb) == {em}
    need = _signature(vmfb)["cpu"]
    assert need["triple"].startswith(triple + "-") and (feature is None or feature in need["features"]), need
    p = tmp_path / f"{chip}.vmfb"
    p.write_bytes(vmfb)
    dump = subprocess.run([str(BIN / "iree-dump-module"), str(p)], capture_output=True, text=True, timeout=120)
    assert dump.returncode == 0 and f"embedded-elf-{ {'aarch64': 'arm_64', 'riscv64': 'riscv_64'}[triple] }" in dump.stdout
    with pytest.raises(xla.XlaError, match=f"holds machine code for {triple} and this machine is"):
        xla.load(p)
    with pytest.raises(xla.XlaError, match=f"machine code for {triple}"):
        xla.compile(_prog(), "cpu", arch=chip)
    rc = xr.main([str(p), "[[1]]"])
    assert rc == 1 and f"machine code for {triple}" in capsys.readouterr().err
    code = (f"import xlair as xla\ntry:\n    xla.load({str(p)!r})\nexcept xla.XlaError as e:\n"
            f"    print('refused:', e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "refused:" in r.stdout, (r.returncode, r.stderr[-2000:])


def test_missing_features_are_refused_in_every_path(tmp_path, capsys):
    """An x86-64 artifact for a CPU with features this one lacks is refused by xla.load, by
    xla.compile (also when the compile cache hands it back), and by xlair-run, naming the
    missing features; a fresh process that tries survives it."""
    found = _unrunnable_x86_chip()
    if found is None:
        pytest.skip(f"this machine ({cpus.host().cpu}) has the features of every candidate CPU")
    chip, missing = found
    comp = _prog()
    vmfb = compile_vmfb(comp, "cpu", cpu=chip)
    p = tmp_path / f"{chip}.vmfb"
    p.write_bytes(vmfb)
    pattern = f"compiled for the CPU {chip} and needs features this machine's CPU .* lacks: .*{missing[0]}"
    with pytest.raises(xla.XlaError, match=pattern):
        xla.load(p)
    with pytest.raises(xla.XlaError, match=pattern):
        xla.compile(comp, "cpu", cpu=chip)
    # a cache entry for `host` holding another CPU's code (a cache shared between machines)
    tgt = TARGETS["cpu"]
    cache_put(cache_key(comp, tgt, tgt.compile_flags(), 1), vmfb)
    with pytest.raises(xla.XlaError, match=pattern):
        xla.compile(comp, "cpu")
    rc = xr.main([str(p), "[[1]]"])
    assert rc == 1 and missing[0] in capsys.readouterr().err
    code = (f"import numpy as np, xlair as xla\ntry:\n    xla.load({str(p)!r})(np.ones((8, 16), np.float32), "
            f"np.ones((16, 4), np.float32))\nexcept xla.XlaError as e:\n    print('refused:', e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "refused:" in r.stdout and missing[0] in r.stdout, (r.returncode, r.stderr[-2000:])


def test_refusal_names_every_missing_feature(tmp_path, monkeypatch):
    """On a (pretended) SSE2-only CPU, an x86-64-v3 artifact is refused naming each v3 feature."""
    vmfb = compile_vmfb(_prog(), "cpu", cpu="x86-64-v3")
    base = cpus.resolve(tuple(cpus.flags_for("x86-64")))
    monkeypatch.setattr(cpus, "host", lambda: cpus.Needs(base.triple, "pretend-sse2", base.features))
    with pytest.raises(xla.XlaError) as e:
        xla.Executable(vmfb, "cpu")
    named = set(re.search(r"lacks: ([^;]*);", str(e.value)).group(1).split(", "))
    assert X86_64_V3 <= named, str(e.value)


def test_cache_key_holds_the_resolved_cpu(monkeypatch):
    """Two machines sharing a cache both write `host` in their flags; the key differs when what
    `host` resolves to differs."""
    comp, tgt = _prog(), TARGETS["cpu"]
    flags = tgt.compile_flags()
    here = cache_key(comp, tgt, flags, 1)
    other = cpus.Needs("x86_64-unknown-unknown-eabi-elf", "znver3", ("avx", "avx2", "fma"))
    monkeypatch.setattr(cpus, "resolve", lambda f: other)
    assert cache_key(comp, tgt, flags, 1) != here


def test_chip_flags_and_the_default_chip():
    assert cpus.flags_for("x86-64-v3") == ["--iree-llvmcpu-target-cpu=x86-64-v3"]
    assert "--iree-llvmcpu-target-triple=aarch64-unknown-linux-gnu" in cpus.flags_for("neoverse-v1")
    assert "--iree-llvmcpu-target-triple=aarch64-unknown-linux-gnu" in cpus.flags_for("cortex-a78")
    rv = cpus.flags_for("generic-rv64")
    assert "--iree-llvmcpu-target-cpu-features=+m,+a,+f,+d,+c,+v" in rv and "--iree-llvmcpu-target-abi=lp64d" in rv
    code = "from xlair.targets import TARGETS; print(TARGETS['cpu'].compile_flags())"
    env = dict(os.environ, XLAIR_CPU="x86-64-v3")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert "--iree-llvmcpu-target-cpu=x86-64-v3" in r.stdout, r.stderr
    with pytest.raises(xla.XlaError, match="cannot compile for .*no-such-cpu"):
        cpus.resolve(("--iree-llvmcpu-target-cpu=no-such-cpu",))

"""CPU chips of the cpu target: the names xlair accepts (this machine's `host`, x86-64 levels and
micro-architectures, and aarch64 / riscv64 chips for cross-compilation), the IREE flags each one
takes, what IREE resolves it to (LLVM triple, CPU name and features: what an artifact's code
needs), this machine's own CPU, and the check that an artifact's code can run here.

IREE does not check CPU features when it loads a module: code for a richer CPU dies with SIGILL
at its first call (measured: a `sapphirerapids` artifact on an AVX2-only EPYC).  So xlair writes
the triple and features into every CPU artifact's signature and checks them before IREE loads
the code (`check_runnable`)."""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import platform
import re

from xlair.dialect.checks import XlaError
from xlair.dialect.ir import compiler_present

from .artifacts import cache_read, cache_write, elf_machines, iree_version

CPU_FLAG = "--iree-llvmcpu-target-cpu"


@dataclasses.dataclass(frozen=True)
class Cross:
    """A chip of another architecture: the triple it implies, and the CPU / features / ABI
    IREE is given for it."""
    triple: str
    cpu: str
    features: str = ""
    abi: str = ""


_AARCH64 = "aarch64-unknown-linux-gnu"
_RISCV64 = "riscv64-unknown-linux-gnu"
_RV64GCV = Cross(_RISCV64, "generic-rv64", "+m,+a,+f,+d,+c,+v", "lp64d")   # RVV 1.0, LP64D ABI
#: Generic chips named for cross-compilation.  LLVM CPU names with the prefixes below are chips
#: of those architectures (`neoverse-v1`, `cortex-a78`, `apple-m1`, `sifive-x280`, ...).
CROSS = {"aarch64": Cross(_AARCH64, "generic"), "generic-aarch64": Cross(_AARCH64, "generic"),
         "generic-rv64": _RV64GCV, "rv64gcv": _RV64GCV}
_PREFIXES = ((("neoverse-", "cortex-a", "cortex-x", "apple-", "ampere", "a64fx", "thunderx", "carmel",
               "falkor", "kryo", "exynos-", "tsv110", "oryon"), _AARCH64),
             (("sifive-", "spacemit-", "xiangshan-", "syntacore-", "veyron-"), _RISCV64))

#: The chips xlair documents for `--cpu` / `arch=` (others are given to LLVM as they are).
DOCUMENTED = ("host", "x86-64-v3", "x86-64-v4", "x86-64", "znver3", "sapphirerapids",
              "neoverse-v1", "neoverse-n1", "aarch64", "generic-rv64")


def default_chip() -> str:
    """The chip the cpu target compiles for when none is named: $XLAIR_CPU, else `host`."""
    return os.environ.get("XLAIR_CPU", "").strip() or "host"


def cross(chip: str) -> Cross | None:
    """The cross-compilation description of a chip of another architecture (None: x86-64)."""
    if chip in CROSS:
        return CROSS[chip]
    for prefixes, triple in _PREFIXES:
        if chip.startswith(prefixes):
            return Cross(triple, chip, "", "lp64d" if triple == _RISCV64 else "")
    return None


def flags_for(chip: str) -> list[str]:
    """IREE's flags for a chip of the cpu target."""
    c = cross(chip)
    if c is None:
        return [f"{CPU_FLAG}={chip}"]
    out = [f"--iree-llvmcpu-target-triple={c.triple}", f"{CPU_FLAG}={c.cpu}"]
    if c.features:
        out.append(f"--iree-llvmcpu-target-cpu-features={c.features}")
    if c.abi:
        out.append(f"--iree-llvmcpu-target-abi={c.abi}")
    return out


def _chip_flags(flags) -> tuple:
    """The flags that choose the CPU, out of a whole IREE command line."""
    return tuple(f for f in flags if f.startswith("--iree-llvmcpu-target-"))


# ----------------------------------------------------------------------------------------
# what IREE resolves a chip to
# ----------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Needs:
    """What the code of a CPU artifact needs: the LLVM triple, the CPU IREE resolved the chip to
    and the features code generation may use (system-only features left out)."""
    triple: str
    cpu: str
    features: tuple

    @property
    def arch(self) -> str:
        return _arch(self.triple.split("-", 1)[0])

    def to_json(self) -> dict:
        return {"triple": self.triple, "cpu": self.cpu, "features": list(self.features)}

    @staticmethod
    def from_json(d: dict) -> "Needs":
        return Needs(str(d["triple"]), str(d["cpu"]), tuple(str(f) for f in d["features"]))


#: x86 features no compiled numeric code uses (privileged, OS or security instructions):
#: left out of an artifact's needs, since hypervisors often hide them from guests.
_SYSTEM = frozenset("""sgx pconfig ptwrite enqcmd shstk ibt serialize cldemote clwb clflushopt
    movdiri movdir64b waitpkg uintr hreset invpcid pku rdpid rdrnd rdseed fsgsbase xsave xsavec
    xsaveopt xsaves tsxldtrk kl widekl rtm wbnoinvd mwaitx clzero rdpru lwp fxsr prefetchi
    usermsr raoint cmpccxadd sm3 sm4 sha512 vmx smx""".split())

_PROBE = ("func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
          "  %0 = arith.addf %a, %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n")


def _arch(name: str) -> str:
    return {"amd64": "x86_64", "x86-64": "x86_64", "arm64": "aarch64", "riscv64gc": "riscv64"}.get(name, name)


def host_arch() -> str:
    """This machine's architecture as `uname -m` names it."""
    return _arch(platform.machine().lower())


@functools.lru_cache(maxsize=1)
def _host_fingerprint() -> str:
    """What tells this machine's CPU apart: /proc/cpuinfo's model and flags where Linux has it
    (so a compile cache shared by several machines never mixes their `host` resolutions)."""
    parts = [platform.machine(), platform.processor()]
    try:
        with open("/proc/cpuinfo") as f:
            seen = set()
            for line in f:
                k = line.split(":", 1)[0].strip()
                if k in ("vendor_id", "model name", "flags", "Features", "CPU part", "isa") and k not in seen:
                    seen.add(k)
                    parts.append(line.strip())
    except OSError:
        pass
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


@functools.lru_cache(maxsize=None)
def resolve(flags: tuple) -> Needs:
    """What IREE makes of the CPU flags (`flags_for`): it compiles a one-op module as far as its
    executable target and reads the triple, CPU and features off it.  Remembered on disk under
    the compile cache (keyed by IREE's version and the flags, and for `host` by this machine's
    CPU), and read back only as the cache's artifacts are (artifacts.cache_read): a planted
    answer would let `check_runnable` pass code this CPU cannot run."""
    flags = _chip_flags(flags)
    host = any(f == f"{CPU_FLAG}=host" for f in flags)
    key = hashlib.sha256("\0".join((iree_version(), *flags, _host_fingerprint() if host else "")).encode())
    name = f"cpus/{key.hexdigest()}.json"
    data = cache_read(name)             # (None where absent, or where someone else could have written it)
    if data is not None:
        try:
            return Needs.from_json(json.loads(data))
        except (ValueError, KeyError, TypeError):
            pass
    from iree.compiler import tools
    try:
        text = tools.compile_str(_PROBE, target_backends=["llvm-cpu"],
                                 extra_args=[*flags, "--compile-to=executable-sources"]).decode()
    except tools.CompilerToolError as e:
        errs = [ln.strip() for ln in str(e).splitlines() if "error" in ln.lower()]
        raise XlaError(f"the cpu target cannot compile for {' '.join(flags)}: "
                       f"{'; '.join(errs[:3]) or str(e)[-300:]}") from None
    fields = dict(re.findall(r'\b(cpu|cpu_features|target_triple) = "([^"]*)"', text))
    if "target_triple" not in fields:
        raise XlaError(f"IREE did not say what it compiles for with {' '.join(flags)}")
    feats = sorted({f[1:] for f in fields.get("cpu_features", "").split(",")
                    if f.startswith("+") and f[1:] not in _SYSTEM})
    needs = Needs(fields["target_triple"], fields.get("cpu", "generic"), tuple(feats))
    cache_write(name, json.dumps(needs.to_json()).encode())
    return needs


def host() -> Needs:
    """This machine's CPU as LLVM sees it (IREE's `host`): the features it has.  Where only
    IREE's runtime is installed (a deployment), as Linux's /proc/cpuinfo names them instead
    (host_from_cpuinfo)."""
    if not compiler_present():
        return host_from_cpuinfo()
    return resolve((f"{CPU_FLAG}=host",))


#: LLVM's name of a CPU feature -> the name of the flag in /proc/cpuinfo that says the CPU has
#: it, where the two differ (x86 and aarch64 Linux); the others have the same name in both
_CPUINFO_NAMES = {
    "64bit": "lm", "x87": "fpu", "sse3": "pni", "sse4.1": "sse4_1", "sse4.2": "sse4_2", "crc32": "sse4_2",
    "pclmul": "pclmulqdq", "lzcnt": "abm", "sahf": "lahf_lm", "prfchw": "3dnowprefetch", "bmi": "bmi1",
    "sha": "sha_ni", "evex512": "avx512f", "avx512bf16": "avx512_bf16", "avx512bitalg": "avx512_bitalg",
    "avx512vbmi2": "avx512_vbmi2", "avx512vnni": "avx512_vnni", "avx512vp2intersect": "avx512_vp2intersect",
    "avx512vpopcntdq": "avx512_vpopcntdq", "avx512fp16": "avx512_fp16", "avxvnni": "avx_vnni",
    "avxifma": "avx_ifma", "avxvnniint8": "avx_vnni_int8", "avxneconvert": "avx_ne_convert",
    "amx-bf16": "amx_bf16", "amx-int8": "amx_int8", "amx-tile": "amx_tile", "amx-fp16": "amx_fp16",
    # aarch64
    "neon": "asimd", "fp-armv8": "fp", "dotprod": "asimddp", "fullfp16": "fphp", "rdm": "asimdrdm",
    "lse": "atomics", "rcpc": "lrcpc", "crypto": "aes",
}


#: LLVM's features that Linux's /proc/cpuinfo has no flag for, and the features that make them:
#: AVX10.1 is Sapphire Rapids' AVX-512 set under one name (Intel's AVX10 specification: no
#: instruction of its own), which LLVM's host detection names from CPUID where the CPU says it
#: (seen on an Intel Xeon that LLVM calls rocketlake: "needs features this machine's CPU lacks:
#: avx10.1" for an artifact compiled there with cpu='host')
_IMPLIED = {
    "avx10.1": ("avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw", "avx512ifma", "avx512vbmi",
                "avx512vbmi2", "avx512bitalg", "avx512vnni", "avx512vpopcntdq", "avx512bf16", "avx512fp16"),
}


def features_from_cpuinfo(flags: set[str]) -> set[str]:
    """LLVM's names of the CPU features Linux's flags say a CPU has (_CPUINFO_NAMES), and those
    their union makes (_IMPLIED)."""
    feats = {f for f in flags if f not in _SYSTEM}
    feats.update(llvm for llvm, linux in _CPUINFO_NAMES.items() if linux in flags)
    feats.update(name for name, parts in _IMPLIED.items() if feats.issuperset(parts))
    return feats


def host_from_cpuinfo() -> Needs:
    """This machine's CPU features from /proc/cpuinfo, by LLVM's names (features_from_cpuinfo):
    every LLVM feature whose flag Linux reports.  On x86-64 it holds every feature of IREE's
    `host` resolution (tests/tools/test_cpus.py checks it against the compiler's probe)."""
    flags: set[str] = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k.strip() in ("flags", "Features"):
                    flags.update(v.split())
                    break
    except OSError:
        pass
    return Needs(f"{host_arch()}-unknown-linux", "host", tuple(sorted(features_from_cpuinfo(flags))))


# ----------------------------------------------------------------------------------------
# can this machine run it
# ----------------------------------------------------------------------------------------
def check_runnable(vmfb: bytes, needs: dict | None, what: str = "the artifact") -> None:
    """Raise XlaError when a CPU artifact cannot run on this machine: its embedded code is for
    another architecture (read from the ELF headers, so also for artifacts xlair did not
    write), or its signature says it needs CPU features this CPU lacks."""
    here = host_arch()
    other = sorted(m for m in elf_machines(vmfb) if m != here)
    if other:
        raise XlaError(f"{what} holds machine code for {', '.join(other)} and this machine is "
                       f"{here}: it cannot run here (compile it with cpu='host', or run it on "
                       f"{'an' if other[0][0] in 'aeiou' else 'a'} {other[0]} machine)")
    if not needs:
        return
    n = Needs.from_json(needs)
    if n.arch != here:
        raise XlaError(f"{what} was compiled for {n.triple} (cpu {n.cpu}) and this machine is {here}: "
                       f"it cannot run here")
    h = host()
    missing = sorted(set(n.features) - set(h.features))
    if missing:
        raise XlaError(f"{what} was compiled for the CPU {n.cpu} and needs features this machine's CPU "
                       f"({h.cpu}) lacks: {', '.join(missing)}; recompile it for this machine "
                       f"(cpu='host') or for a level it has, such as x86-64-v3")

"""Compilation targets: IREE backend, runtime driver and flags per target, device probes, and
the table of what IREE cannot do on a target (checked before compiling, so a user gets the
reason instead of an IREE crash or a wrong answer)."""
from __future__ import annotations

import dataclasses
import functools
from typing import Callable

from xlair.dialect.checks import XlaError
from xlair.lowering.targets import TargetDescription, describe

from . import cpus


@dataclasses.dataclass(frozen=True)
class Target:
    name: str
    backend: str            # IREE HAL target backend (--iree-hal-target-backends)
    driver: str             # IREE runtime driver
    flags: tuple = ()
    arch_flag: str = ""     # the IREE flag naming the chip: --iree-llvmcpu-target-cpu, ...
    default_arch: str = ""
    archs: tuple = ()       # names documented for the CLI (others are passed to IREE as given)
    own_archs: tuple = ()   # (name, #hal.device.target text): chips xlair describes itself

    def compile_flags(self, arch: str | None = None, cpu: str | None = None) -> list[str]:
        """IREE flags for this target; `arch` (or, for the CPU, `cpu`) picks the chip."""
        out = list(self.flags)
        chip = arch or cpu or self.default_chip()
        if self.backend == "llvm-cpu":
            out.extend(cpus.flags_for(chip))        # with the triple of a cross-compiled chip
        elif self.arch_flag and chip and self.device_target(chip) is None:
            out.append(f"{self.arch_flag}={chip}")
        threads = self.desc.elementwise_threads
        if threads and self.backend != "llvm-cpu":
            out.append(f"{TRANSFORM_LIBRARY_FLAG}{SPEC_SCHEME}elementwise-{threads[0]}x{threads[1]}")
        return out

    def default_chip(self) -> str:
        """The chip compiled for when none is named (the cpu target: $XLAIR_CPU, else host)."""
        return cpus.default_chip() if self.backend == "llvm-cpu" else self.default_arch

    @property
    def desc(self) -> TargetDescription:
        """What the lowering knows of the target (lowering/targets.py): its binding limit, loop
        and precision policies, IREE workarounds and cost thresholds."""
        return describe(self.name)

    def device_target(self, arch: str | None = None) -> str | None:
        """The `#hal.device.target` xlair puts on the module for one of its own chip
        descriptions (None: IREE's flag names the chip)."""
        return dict(self.own_archs).get(arch or self.default_arch)


#: Flags of every target.  No hoisting of constant expressions into initializers: IREE 3.13
#: computes some of them wrong (the FFT of a constant had its imaginary part replaced by its
#: real part; threefry loops over constants failed at run time with "transient buffer has not
#: been committed"), and without it compiles are ~25% faster (a 50-program fuzz batch: 1.4 s
#: -> 1.0 s).  xlair programs take their data as parameters, so little is lost.
_COMMON = ("--iree-input-demote-f64-to-f32=false", "--iree-input-demote-i64-to-i32=false",
           "--iree-opt-const-expr-hoisting=false")

#: xlair's default Vulkan target, "generic": 8/16/32/64-bit storage and int8..int64 /
#: fp16..fp64 arithmetic, 1024 threads and 32 KiB of shared memory per workgroup, and no
#: subgroup operations.  IREE's own names do not fit a device of unknown subgroup size:
#: its default (vp_android_baseline_2022) allows only 32-bit types and gets 8/16/64-bit data
#: and even PRED buffers wrong through its emulation, and the desktop GPUs it knows (pascal,
#: ampere, rdna3, valhall) assume a subgroup size (32, 64, 16) that reductions then rely on -
#: Mesa's lavapipe runs 8-wide subgroups, and every large reduction comes out wrong.
VULKAN_GENERIC = (
    '#hal.device.target<"vulkan", [#hal.executable.target<"vulkan-spirv", "vulkan-spirv-fb", '
    '{iree_codegen.target_info = #iree_gpu.target<arch = "", features = "spirv:v1.6,cap:Shader", '
    'wgp = <compute = fp64|fp32|fp16|int64|int32|int16|int8, storage = b64|b32|b16|b8, subgroup = none, '
    'subgroup_size_choices = [32], max_workgroup_sizes = [1024, 1024, 1024], '
    'max_thread_count_per_workgroup = 1024, max_workgroup_memory_bytes = 32768, '
    'max_workgroup_counts = [65535, 65535, 65535]>>}>]> : !hal.device')

#: Vulkan's own flags.  No indirect command buffers: with them (IREE 3.13's default), a module's
#: command buffers are recorded once and replayed with each call's buffers in a binding table,
#: and on Vulkan a call that passes a buffer an earlier call passed too read wrong data (a
#: concatenation of two arguments, the second one the same xla.Array each call: every other
#: call returned the first call's rows and zeros; JAX's lax_vmap_test testStack / testSplit /
#: testUnstack on xlair_vulkan, lavapipe).  Recorded per call, every call is right
#: (docs/iree-limits.md)
VULKAN_FLAGS = ("--iree-hal-indirect-command-buffers=false",)

#: The alignment (bytes) the CPU code of a program with a large parameter assumes of its
#: buffers (compile.program_flags).  IREE assumes 64 by default, and its code then faults on
#: memory aligned to less (a numpy array imported without a copy, at 16 mod 64 as numpy's large
#: arrays are: a segmentation fault at the first dispatch).  With 16, such arrays are passed to
#: the program as they are (python/xlair/device.py import_array); the signature says which
#: alignment an artifact was compiled for ("align").  Device-resident times with and without
#: it were the same within the noise (bench/NOTES.md).
CPU_BUFFER_ALIGNMENT = 16
ALIGNMENT_FLAG = "--iree-stream-resource-min-offset-alignment"

#: The IREE flag naming a transform-dialect library (a file, its entry point `@__kernel_config`).
#: A target's own libraries are named in its flags by SPEC_SCHEME and a name (spec_text):
#: xlair.compile.iree_compile writes each into a folder private to the process and passes its
#: path.  The compile cache's keys hold the name, the same in every process, and IREE reads no
#: file another user could have written (a library is code IREE runs on the program).
TRANSFORM_LIBRARY_FLAG = "--iree-codegen-transform-dialect-library="
SPEC_SCHEME = "xlair-spec:"


def elementwise_spec(threads: int, per_thread: int) -> str:
    """The transform-dialect library of a target's `elementwise_threads` (lowering/targets.py),
    for IREE's `--iree-codegen-transform-dialect-library`: it gives every dispatch's 1-D all-parallel `linalg.generic` with an element-wise body
    `threads` threads a workgroup and `per_thread` elements a thread, in IREE's TileAndFuse
    pipeline.  IREE 3.13's own choice for such an op on CUDA is one subgroup, 32 threads of 4
    elements (setTileAndFuseLoweringConfig takes the subgroup size when the work divides); the
    `compilation_info` a producer sets on an element-wise op is lost when IREE fuses it with
    another, and `--iree-codegen-tuning-spec-path` is not passed to CUDA's code generation
    (docs/iree-limits.md): this library runs on each dispatch after fusion, in
    MaterializeUserConfigs, for every GPU target.  Element-wise ops of more dimensions reach
    code generation collapsed to one.  An op of fewer elements than a workgroup's (IREE's
    copies of a few elements into a strided slice failed: "tiling of level Thread failed", 22
    dispatches of random_distributions) and a generic with a loop in its body (xlair's thread
    form of a loop) keep IREE's choice; with both rules the 41 programs of the real-program
    suite compile for CUDA."""
    return f"""module @xlair_elementwise attributes {{transform.with_named_sequence}} {{
  transform.named_sequence @annotate(%op: !transform.any_op {{transform.readonly}},
                                     %config: !transform.any_param {{transform.readonly}}) {{
    transform.annotate %op "compilation_info" = %config : !transform.any_op, !transform.any_param
    transform.yield
  }}
  transform.named_sequence @match_elementwise(%op: !transform.any_op {{transform.readonly}})
      -> (!transform.any_op, !transform.any_param) {{
    transform.match.operation_name %op ["linalg.generic"] : !transform.any_op
    %matched = transform.match.structured failures(propagate) %op : (!transform.any_op) -> !transform.any_op {{
    ^bb0(%s: !transform.any_op):
      %rank = transform.match.structured.rank %s : (!transform.any_op) -> !transform.param<i64>
      %one = transform.param.constant 1 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %rank, %one : !transform.param<i64>
      transform.match.structured.dim %s[all] parallel : !transform.any_op
      %size = transform.match.structured.dim %s[0] : (!transform.any_op) -> !transform.param<i64>
      %tile = transform.param.constant {threads * per_thread} : i64 -> !transform.param<i64>
      transform.match.param.cmpi ge %size, %tile : !transform.param<i64>
      transform.match.structured.body %s elementwise : !transform.any_op
      transform.match.structured.yield %s : !transform.any_op
    }}
    %config = transform.param.constant #iree_codegen.compilation_info<
      lowering_config = #iree_gpu.lowering_config<{{workgroup = [{threads * per_thread}], thread = [{per_thread}]}}>,
      translation_info = #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<TileAndFuse>
        workgroup_size = [{threads}, 1, 1] subgroup_size = 32>> -> !transform.any_param
    transform.yield %matched, %config : !transform.any_op, !transform.any_param
  }}
  transform.named_sequence @__kernel_config(%func: !transform.any_op {{transform.consumed}}) -> !transform.any_op {{
    %res = transform.foreach_match in %func @match_elementwise -> @annotate : (!transform.any_op) -> !transform.any_op
    transform.yield %res : !transform.any_op
  }}
}}
"""


def spec_text(name: str) -> str:
    """The text of the library a target's flags name `SPEC_SCHEME + name`."""
    kind, _, size = name.partition("-")
    threads, _, per_thread = size.partition("x")
    if kind != "elementwise" or not threads.isdigit() or not per_thread.isdigit():
        raise XlaError(f"no transform-dialect library of xlair's is named {name!r}")
    return elementwise_spec(int(threads), int(per_thread))


TARGETS = {
    "cpu": Target("cpu", "llvm-cpu", "local-task",
                  _COMMON + ("--iree-opt-data-tiling", "--iree-llvmcpu-enable-ukernels=all",
                             "--iree-llvmcpu-mlir-opt-level=O3"),
                  cpus.CPU_FLAG, "host", cpus.DOCUMENTED),
    "vulkan": Target("vulkan", "vulkan-spirv", "vulkan", _COMMON + VULKAN_FLAGS, "--iree-vulkan-target", "generic",
                     ("generic", "pascal", "ampere", "rdna3", "valhall", "vp_android_baseline_2022"),
                     (("generic", VULKAN_GENERIC),)),
    "cuda": Target("cuda", "cuda", "cuda", _COMMON, "--iree-cuda-target", "sm_80",
                   ("sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89")),
    "rocm": Target("rocm", "rocm", "hip", _COMMON, "--iree-rocm-target", "gfx942",
                   ("gfx90a", "gfx942", "gfx1100")),
}
ALIASES = {"llvm-cpu": "cpu", "local-task": "cpu", "local-sync": "cpu", "host": "cpu",
           "vulkan-spirv": "vulkan", "hip": "rocm"}


def target(name: str) -> Target:
    t = TARGETS.get(ALIASES.get(name, name)) if isinstance(name, str) else None
    if t is None:
        raise XlaError(f"unknown target {name!r}; known: {', '.join(sorted(TARGETS))} "
                       f"(or IREE names {', '.join(sorted(ALIASES))})")
    return t


# ----------------------------------------------------------------------------------------
# devices
# ----------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def device_available(name: str) -> bool:
    """Whether this machine has a device for the target (a cheap probe of the IREE driver,
    cached per process)."""
    t = target(name)
    try:
        import iree.runtime as rt
        if t.driver not in rt.query_available_drivers():
            return False
        return bool(rt.get_driver(t.driver).query_available_devices())
    except Exception:       # no driver library (libvulkan, libcuda, ...): no device
        return False


# ----------------------------------------------------------------------------------------
# what IREE cannot do on a target
# ----------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Limitation:
    """Ops IREE cannot compile for `target`, or compiles to wrong answers there (measured on
    the target's default chip; see docs/status.md).  An op is hit when its name is in `ops` and
    `when(operand_types, result_types, attributes)` holds (sets of xla element type names, and
    {attribute name: its MLIR text}); a `when` that returns a string names what was hit (it is
    added to the message).  `by` is "iree" for what IREE fails at, "xlair" for what xlair
    has no route for on the target (IREE would compile it)."""
    target: str
    ops: tuple
    types: str              # the cases concerned, in words (for docs and messages)
    reason: str
    when: Callable = dataclasses.field(compare=False, default=lambda ins, outs, attrs: True)
    by: str = "iree"

    def matches(self, op: str, ins: set, outs: set, attrs: dict) -> bool:
        return op in self.ops and bool(self.when(ins, outs, attrs))


_INTS_NOT_32 = {"s8", "u8", "s16", "u16", "s64", "u64"}
_UNSIGNED = {"pred", "u8", "u16", "u32", "u64"}
_NARROW_INTS = {"s8", "u8", "s16", "u16", "pred"} | _UNSIGNED
_FLOATS = {"f16", "bf16", "f32", "f64"}


def _widening_matmul(ins: set, outs: set, attrs: dict) -> bool:
    """dot operands converted to the result type inside the matmul: zero extension (unsigned,
    PRED) and narrow-integer -> float conversions come out wrong on SPIR-V."""
    return any(t not in outs and (t in _UNSIGNED or (t in _NARROW_INTS and outs & _FLOATS))
               for t in ins)


LIMITATIONS: list[Limitation] = [
    Limitation("vulkan", ("xla.clz",), "s8, u8, s16, u16, s64, u64",
               "IREE's SPIR-V lowering of math.ctlz handles 32-bit integers only "
               "(\"failed to legalize operation 'math.ctlz'\")",
               lambda ins, outs, attrs: bool(ins & _INTS_NOT_32)),
    Limitation("vulkan", ("xla.exp", "xla.expm1", "xla.log", "xla.log1p", "xla.logistic", "xla.tanh",
                          "xla.cbrt", "xla.pow"), "f64",
               "GLSL.std.450 Exp/Log/Pow take 16/32-bit floats only; IREE has no f64 fallback "
               "(\"'spirv.GL.Exp' op operand #0 must be 16/32-bit float\")",
               lambda ins, outs, attrs: "f64" in ins),
    Limitation("vulkan", ("xla.exp", "xla.expm1", "xla.log", "xla.log1p", "xla.logistic", "xla.sin",
                          "xla.cos", "xla.tan", "xla.tanh", "xla.sqrt", "xla.pow", "xla.atan2"), "c128",
               "complex<f64> functions expand to f64 exp/log, which SPIR-V's GLSL.std.450 set "
               "lacks (\"'spirv.GL.Exp' op operand #0 must be 16/32-bit float\")",
               lambda ins, outs, attrs: "c128" in ins),
    Limitation("vulkan", ("xla.dot", "xla.dot_general"),
               "unsigned or PRED operands widened to the result type; 8/16-bit integer operands "
               "with a floating-point result",
               "IREE's SPIR-V matmul codegen folds the operand conversion into the contraction and "
               "gets zero extension and narrow int-to-float conversion wrong (wrong results, "
               "measured on lavapipe)", _widening_matmul),
]


class TargetLimitation(XlaError):
    """The computation uses something IREE cannot do on the target (see LIMITATIONS)."""

    def __init__(self, message: str, limitation: Limitation):
        super().__init__(message)
        self.limitation = limitation


def limitations_of(module, target_name: str) -> list[tuple[str, Limitation]]:
    """(op name, limitation) for every op of the module that hits a known limitation."""
    t = target(target_name)
    lims = [lim for lim in LIMITATIONS if lim.target == t.name]
    if not lims:
        return []
    from xlair.dialect.ir import ir, lock
    from xlair.dialect.types import Shape
    found: list[tuple[str, Limitation]] = []

    def types_of(values) -> set:
        out = set()
        for v in values:
            try:
                for leaf in Shape.from_mlir(v.type).leaves():
                    if leaf.is_array:
                        out.add(leaf.element_type.name)
            except TypeError:
                pass
        return out

    def attrs_of(op) -> dict:
        out = {}
        for i in range(len(op.attributes)):
            try:
                na = op.attributes[i]
                out[na.name] = str(na.attr)
            except (TypeError, ValueError):
                pass
        return out

    def visit(op):
        op = op.operation if hasattr(op, "operation") else op
        if op.name.startswith("xla.") and op.name != "xla.return":
            ins, outs = types_of(op.operands), types_of(op.results)
            attrs = attrs_of(op)
            for lim in lims:
                if lim.matches(op.name, ins, outs, attrs):
                    hit = lim.when(ins, outs, attrs)
                    found.append((f"{op.name} ({hit})" if isinstance(hit, str) else op.name, lim))
        return ir.WalkResult.ADVANCE

    with lock:
        (module.operation if hasattr(module, "operation") else module).walk(visit)
    return found


def check_supported(module, target_name: str) -> None:
    """Raise TargetLimitation when the module uses something the target cannot do."""
    found = limitations_of(module, target_name)
    if found:
        op, lim = found[0]
        name = op.partition(" (")[0]
        details = sorted({o.partition(" (")[2] for o, lm in found if lm is lim and o.partition(" (")[2]})
        op = name + "'" + (" (" + "; ".join(d[:-1] for d in details) + ")" if details else "")
        raise TargetLimitation(f"target {target(target_name).name} cannot run '{op} on "
                               f"{lim.types}: {lim.reason}", lim)


# ----------------------------------------------------------------------------------------
# artifacts
# ----------------------------------------------------------------------------------------
#: IREE executable formats (the `hal.executable.format` strings a .vmfb embeds) per target.
_FORMATS = ((b"embedded-elf-", "cpu"), (b"system-elf-", "cpu"), (b"vulkan-spirv-fb", "vulkan"),
            (b"cuda-nvptx-fb", "cuda"), (b"rocm-hsaco-fb", "rocm"))


def artifact_target(vmfb: bytes) -> str | None:
    """The target a .vmfb was compiled for, from the executable formats it embeds (None for a
    module without device code, which every target can run)."""
    found = {name for fmt, name in _FORMATS if fmt in vmfb}
    if len(found) == 1:
        return found.pop()
    return None

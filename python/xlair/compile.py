"""From a Computation to a `.vmfb`: lowering, IREE flags per target, and the on-disk
compile cache keyed by a content hash."""
from __future__ import annotations

import hashlib
import json
import os
import pathlib
import re
import tempfile
import threading

from xlair.dialect.checks import XlaError
from xlair.dialect.core import functions
from xlair.dialect.ir import context, func, ir, lock
from xlair.lowering import pipeline
from xlair.lowering.aliasing import parameter_aliases
from xlair.lowering.control_flow import CHUNK_ATTR
from xlair.lowering.cost import CONTRACTIONS, heaviest_work
from xlair.lowering.device_loops import STACK_ATTR, THREAD_ATTR
from xlair.lowering.side_effects import HOST_CALLS_ATTR, host_calls_of

from . import cpus, packed_entry, packing, vmcode
from .artifacts import cache_dir, cache_get, cache_put, iree_version, is_sealed, seal  # noqa: F401
from .computation import Computation
from .device import IMPORT_BYTES, layout
from .runtime import Executable
from .targets import ALIASES, TARGETS, Target, TargetLimitation, check_supported, target  # noqa: F401
from .targets import ALIGNMENT_FLAG, CPU_BUFFER_ALIGNMENT, SPEC_SCHEME, TRANSFORM_LIBRARY_FLAG, spec_text

#: the CPU's data tiling threshold (lowering/targets.py), by the name tests and bench/ use
DATA_TILING_WORK = TARGETS["cpu"].desc.data_tiling_work


# ----------------------------------------------------------------------------------------
# lowering
# ----------------------------------------------------------------------------------------
def signature_json(comp: Computation, replicas: int = 1, host: list | None = None,
                   needs: cpus.Needs | None = None, work: int | None = None,
                   written: list[int] | None = None, stack: int | None = None,
                   align: int | None = None, packed: list | None = None, form: list[str] | None = None,
                   returned: list[int] | None = None) -> str:
    """The executable's signature; `host` lists its host call sites (python/xlair/host.py),
    `needs` what the code of a CPU artifact needs (triple, CPU and features: xlair.cpus),
    `work` the estimated work of its heaviest op (lowering/cost.py; the runtime picks the CPU
    driver by it), `written` the argument leaves IREE may update in place (lowering/aliasing.py;
    the runtime copies those of device-resident arrays), `returned` the result leaves that may
    be an argument's buffer as it is (lowering/aliasing.py; the runtime copies those results
    of device-resident arrays), `stack` the bytes of stack its CPU
    dispatches ask for when more than IREE's default (lowering/device_loops.py stack_limit: run
    on local-task, the workers' stacks must hold it), `align` the alignment (bytes) the CPU code
    assumes of its buffers (targets.CPU_BUFFER_ALIGNMENT: the runtime passes arrays aligned so
    without a copy), `packed` the run [first, count] of argument leaves its entry point
    `main_packed` takes packed, and where it returns leaves of that run's shapes packed
    (xlair.packed_entry.out_run), [first, count, out_first], and `form` the pass options of the
    form its loops were lowered in when it is not the first form (compile_vmfb's fallbacks:
    "counted=off", "loops=host", "barriers=outside-loops"), which `Executable.form` reads."""
    sig = comp.program_shape
    d = {"name": comp.name, "params": [p.mlir_str() for p in sig.params],
         "result": sig.result.mlir_str(), "replicas": replicas}
    if host:
        d["host"] = host
    if needs is not None:
        d["cpu"] = needs.to_json()
    if work is not None:
        d["work"] = work
    if written is not None:
        d["written"] = written
    if returned:
        d["returned"] = returned
    if stack is not None:
        d["stack"] = stack
    if align is not None:
        d["align"] = align
    if packed is not None:
        d["packed"] = packed
    if form:
        d["form"] = form
    return json.dumps(d)


def lower(comp: Computation, replicas: int = 1, target_name: str | None = None,
          needs: cpus.Needs | None = None, counted: bool = True, device_loops: bool = True,
          align: int | None = None, pack: tuple | None = None, loop_barriers: bool = True) -> ir.Module:
    """A copy of the computation's module lowered to linalg (what IREE is given).  With a
    target, the lowering may use that target's hand-written kernels (lowering/kernels.py) and
    picks what that target computes well (lowering/elementwise.py widens some F32 functions to
    F64 on the CPU only).  `counted`, `device_loops` and `loop_barriers` pick the forms of its
    loops (the pass options counted, loops and barriers).  `needs` and `align` go into the
    signature (see signature_json).
    `pack=(first, count)`: the leaves [first, first + count) also packed, by a second entry
    point (xlair.packing)."""
    src, run, out_first = comp, None, None
    if pack is not None:
        first, count = pack
        run = tuple(comp.program_shape.params[first:first + count])
        out_first = packed_entry.out_run(comp, first, count) if 0 <= first and first + count <= len(
            comp.program_shape.params) else None
        src = packed_entry.packed_computation(comp, first, count, out_first)
    with lock, context():
        module = ir.Module.parse(src.to_text(debug_info=True))
        work = heaviest_work(module)
    form = ([] if counted else ["counted=off"]) + ([] if device_loops else ["loops=host"]) \
        + ([] if loop_barriers else ["barriers=outside-loops"])
    opts = ([f"target={target(target_name).name}"] if target_name else []) + form \
        + (["vectors=256"] if needs is not None and needs.arch == "x86_64" and "avx512f" not in needs.features else [])
    pipeline.run(module, "xla-to-iree-input" + (f"{{{' '.join(opts)}}}" if opts else ""))
    with lock, context():
        host = host_calls_of(module)
        if HOST_CALLS_ATTR in module.operation.attributes:
            del module.operation.attributes[HOST_CALLS_ATTR]
        main = _main(module)
        written, returned = parameter_aliases(main)
        if len(main.regions[0].blocks[0].arguments) != sum(len(p.leaves()) for p in src.program_shape.params):
            written = None          # arguments are not the parameters' leaves one for one: say nothing
        packed = None
        if run is not None:
            # the leaf entry point copies the run's leaves into the groups: of its leaves, IREE
            # may write those after the run (the packed entry point's after its groups); the
            # packed entry point is used only when IREE writes none of its groups
            n_groups = len(packing.groups(run))
            if written is not None and not any(first <= w < first + n_groups for w in written):
                packed = [first, count] + ([out_first] if out_first is not None else [])
            if written is not None:     # (the run's leaves are copies: never written)
                written = [w if w < first else w - n_groups + count for w in written
                           if not first <= w < first + n_groups]
            packed_entry.add_leaf_entry(module, run, first, out_first)
            main = _main(module)
            # (of the leaf entry point's results: the packed one's share the groups' buffers
            # at most, and the Arrays of a pack's leaves get buffers of their own, Array.buffer_for)
            returned = parameter_aliases(main)[1]
        if len(ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value).results) != \
                len(comp.program_shape.result.leaves()):
            returned = None         # results are not the result's leaves one for one: say nothing
        attrs = module.operation.attributes
        stack = ir.IntegerAttr(attrs[STACK_ATTR]).value if STACK_ATTR in attrs else None
        main.attributes["iree.reflection"] = ir.DictAttr.get(
            {"xlair.signature": ir.StringAttr.get(signature_json(comp, replicas, host, needs, work, written, stack,
                                                                align, packed, form, returned))})
        return module


def _main(module: ir.Module) -> ir.Operation:
    main = functions(module).get("main")
    if main is None:
        raise XlaError("module has no @main")
    return main


# ----------------------------------------------------------------------------------------
# compile cache
# ----------------------------------------------------------------------------------------
_SOURCE_HASH: str | None = None


def _source_hash() -> str:
    """Hash of xlair's own lowering code: a change to it invalidates cached artifacts."""
    global _SOURCE_HASH
    if _SOURCE_HASH is None:
        import xlair.dialect
        import xlair.lowering
        h = hashlib.sha256()
        roots = [pathlib.Path(m.__file__).parent for m in (xlair.dialect, xlair.lowering)]
        roots.append(pathlib.Path(__file__).parent)
        for root in roots:
            for p in sorted(root.rglob("*.py")):
                h.update(p.read_bytes())
        h.update(iree_version().encode())
        _SOURCE_HASH = h.hexdigest()
    return _SOURCE_HASH


def needs_of(tgt: Target, flags: list[str]) -> cpus.Needs | None:
    """What the code compiled with these flags needs of a CPU (None for device targets)."""
    return cpus.resolve(tuple(flags)) if tgt.backend == "llvm-cpu" else None


def alignment_of(tgt: Target, flags: list[str]) -> int | None:
    """The alignment (bytes) the CPU code compiled with these flags assumes of its buffers,
    when the flags set one (the last of them: IREE's default, 64, otherwise); None for device
    targets."""
    if tgt.backend != "llvm-cpu":
        return None
    values = [f.split("=", 1)[1] for f in flags if f.startswith(ALIGNMENT_FLAG + "=")]
    return int(values[-1]) if values and values[-1].isdigit() else None


def _content_hash(tgt: Target, flags: list[str], *parts: str) -> str:
    """sha256 of `parts` and, for the CPU, the triple, CPU and features the target's flags
    resolve to (`host` means a different CPU on another machine sharing the cache)."""
    needs = needs_of(tgt, flags)
    h = hashlib.sha256()
    for part in (*parts, json.dumps(needs.to_json() if needs else None)):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def cache_key(comp: Computation, tgt: Target, flags: list[str], replicas: int) -> str:
    """The artifact's content hash: the program, target and its description as it is now
    (lowering/targets.py: one changed in the process, as make bench-gpu's forms do, lowers
    differently), flags, replica count, xlair's own source and the CPU the flags resolve to."""
    return _content_hash(tgt, flags, str(comp), comp.name, tgt.name, repr(tgt.desc), "\0".join(flags),
                         str(replicas), _source_hash())


def text_key(text: str, name: str, tgt: Target, options: dict, pack) -> str:
    """The hash of an artifact by the StableHLO text it was compiled from (xlair.jit's
    compile_text): the text, its name, the target, its description (see cache_key) and the CPU
    its flags resolve to, the compile options, the packed run asked for and xlair's own source."""
    flags = tgt.compile_flags(options.get("arch") or options.get("cpu")) + list(options.get("flags", ()))
    return _content_hash(tgt, flags, "stablehlo", text, name, tgt.name, repr(tgt.desc), repr(sorted(options.items())),
                         repr(pack), _source_hash())


#: what compile_vmfb checks of an artifact before it keeps it (its cache holds only artifacts
#: checked so: a new check is a new version)
ARTIFACT_CHECKS = "bindings,null-refs"


def iree_input_key(text: str, tgt: Target, flags: list[str]) -> str:
    """The artifact's hash by what IREE is given: the lowered module, target, flags, the CPU the
    flags resolve to, IREE's version and the checks its artifacts passed.  A change to xlair's
    source changes every `cache_key`, but most programs lower to the same text: their
    artifacts are found by this key."""
    return _content_hash(tgt, flags, "iree-input", text, tgt.name, "\0".join(flags), iree_version(),
                         ARTIFACT_CHECKS, *map(spec_text, _library_names(flags)))


# ----------------------------------------------------------------------------------------
# compile
# ----------------------------------------------------------------------------------------
def iree_compile(text: str, tgt: Target, flags: list[str]) -> bytes:
    """Run IREE's compiler in a child process (a crash there cannot take Python down)."""
    from iree.compiler import tools
    flags = _with_library_files(flags)
    try:
        return tools.compile_str(text, target_backends=[tgt.backend], extra_args=flags)
    except tools.CompilerToolError as e:
        raise XlaError(f"IREE could not compile for {tgt.name}: {_errors(str(e))}") from None


_LIBRARY = TRANSFORM_LIBRARY_FLAG + SPEC_SCHEME
_libraries: dict[str, str] = {}         # a library's name -> its file (in _library_dir)
_library_dir: list = []                 # the process's private folder of them, once made
_library_lock = threading.Lock()


def _library_names(flags: list[str]) -> list[str]:
    """The names of the target's own transform-dialect libraries the flags name
    (targets.SPEC_SCHEME)."""
    return [f[len(_LIBRARY):] for f in flags if f.startswith(_LIBRARY)]


def _with_library_files(flags: list[str]) -> list[str]:
    """The flags with each of xlair's libraries named by its file: written into a folder of
    this process's own (tempfile: mode 0700), removed at exit.  A library the caller names
    itself replaces the target's (IREE takes one)."""
    names = _library_names(flags)
    if not names:
        return flags
    if any(f.startswith(TRANSFORM_LIBRARY_FLAG) and not f.startswith(_LIBRARY) for f in flags):
        return [f for f in flags if not f.startswith(_LIBRARY)]
    with _library_lock:
        for name in names:
            path = _libraries.get(name)
            if path is None or not os.path.isfile(path):
                if not _library_dir:
                    _library_dir.append(tempfile.TemporaryDirectory(prefix="xlair-libraries-"))
                path = os.path.join(_library_dir[0].name, f"{name}.mlir")
                with open(path, "w") as f:
                    f.write(spec_text(name))
                _libraries[name] = path
    return [TRANSFORM_LIBRARY_FLAG + _libraries[f[len(_LIBRARY):]] if f.startswith(_LIBRARY) else f for f in flags]


_FRAME = re.compile(r"^#\d+ 0x[0-9a-f]+ (.*)$")


def _errors(text: str) -> str:
    """The diagnostics of a compiler run, without the echo of the whole module; of a crash
    (no diagnostics), its exit code, the pass it died in and the innermost frames of its stack
    (their code, without addresses, signal handlers or C library start-up)."""
    lines = [ln.strip() for ln in text.splitlines()]
    errs = [ln[:400] for ln in lines if "error:" in ln]
    if errs:
        return "\n".join(errs[:6])[:3000]
    frames = [m.group(1) for m in map(_FRAME.match, lines) if m]
    if not frames:
        return text[-2000:]
    code = next((ln for ln in lines if ln.startswith("Error code")), "")
    passes = [re.sub(r"^.*::", "", f.split("::runOnOperation")[0]) for f in frames if "::runOnOperation" in f]
    inner = [f[:200] for f in frames if not f.startswith(("llvm::sys::", "SignalHandler", "("))][:6]
    return (f"iree-compile crashed ({code or 'no exit code'}){' in ' + passes[0] if passes else ''}; "
            f"innermost frames:\n  " + "\n  ".join(inner))


#: what IREE 3.13 says of a counted loop's peeled trip it partitioned badly (docs/iree-limits.md)
_PEELED_TRIP_ERROR = "streamable op expected to be in an execution region"


def compile_vmfb(comp: Computation, target_name: str = "cpu", *, flags=(), cpu: str | None = None,
                 arch: str | None = None, replicas: int = 1, cache: bool = True,
                 check_limits: bool = True, counted: bool = True, device_loops: bool = True,
                 pack: tuple | None = None, loop_barriers: bool = True) -> bytes:
    """The `.vmfb` of a computation for a target.  `arch` names the chip (`cpu` is its old
    name for the CPU target); `flags` are passed to IREE after xlair's own.  A computation
    using something the target's default chip is known not to support raises
    `TargetLimitation` (see `xlair.targets.LIMITATIONS`) unless `check_limits=False`.
    `pack=(first, count)`: a second entry point takes the argument leaves [first, first +
    count) packed, one buffer per element type (xlair.packing).  Every artifact is checked
    before it is written (check_artifact): one a target would refuse to load raises XlaError,
    one IREE's VM would fail on is compiled again in the next form of its loops."""
    if not isinstance(comp, Computation):
        raise XlaError(f"compile takes an xla.Computation; got {type(comp).__name__}")
    tgt = target(target_name)
    if isinstance(flags, str):
        raise XlaError("flags must be a sequence of IREE flags, not one string")
    if replicas < 1:
        raise XlaError(f"replicas must be at least 1; got {replicas}")
    chip = arch or cpu
    if check_limits and (not chip or chip == tgt.default_arch):
        check_supported(comp.module, tgt.name)
    # (the key holds the program, so the flags derived from it, program_flags, need not be in it:
    # a cache hit is found without walking the program)
    key = cache_key(comp, tgt, tgt.compile_flags(chip) + list(flags) + ([] if counted else ["(counted=off)"])
                    + ([] if device_loops else ["(loops=host)"]) + ([] if loop_barriers else ["(barriers=outside-loops)"])
                    + ([f"(pack={pack})"] if pack else []),
                    replicas) if cache else None
    if key:
        hit = cache_get(key)
        if hit is not None:
            return hit
    all_flags = program_flags(comp, tgt, chip, flags)
    module = lower(comp, replicas, tgt.name, needs_of(tgt, all_flags), counted, device_loops,
                   alignment_of(tgt, all_flags), pack, loop_barriers)
    with lock, context():
        stack = _stack_flags(module)
        device = tgt.device_target(chip)
        if device is not None:          # one of xlair's own chip descriptions (see targets.py)
            module.operation.attributes["hal.device.targets"] = ir.ArrayAttr.get([ir.Attribute.parse(device)])
        text = str(module)
    # (lowering/device_loops.py: a dispatch region of scalar loops, or a generic running a loop)
    on_device = device_loops and ("flow.dispatch.region" in text or THREAD_ATTR in text or CHUNK_ATTR in text)
    if on_device and tgt.backend == "llvm-cpu":
        # loops moved onto the device are scalar loops: LLVM's loop vectorizer, which IREE
        # leaves off (it vectorizes linalg itself), vectorizes them
        all_flags = all_flags + ["--iree-llvmcpu-loop-vectorization"] + stack
    input_key = iree_input_key(text, tgt, all_flags) if key else None
    vmfb = cache_get(input_key) if input_key else None
    if vmfb is None:
        forms = []          # the forms of its loops to compile it in next, each tried where the one before fails
        try:
            vmfb = seal(iree_compile(text, tgt, all_flags))
        except XlaError as e:
            if counted and "scf.for" in text and (not on_device or _PEELED_TRIP_ERROR in str(e)):
                # IREE refused a counted loop's form (its stream partitioning left a dispatch
                # of the peeled trip outside any execution region: docs/iree-limits.md): the
                # program with its counted loops in the general form, its device loops kept
                forms = [dict(counted=False, device_loops=device_loops, loop_barriers=loop_barriers)]
            elif on_device and counted and "scf.for" in text:
                # IREE refused a loop moved onto the device (lowering/device_loops.py; the forms
                # it is known to refuse are avoided there): first the general form of its counted
                # loops, still on the device (a real 3x3 Schur form's device block, over the CPU's
                # stack in the counted form, compiled so), then its loops on the host
                forms = [dict(counted=False, device_loops=True, loop_barriers=loop_barriers),
                         dict(counted=counted, device_loops=False, loop_barriers=loop_barriers)]
            elif on_device:
                forms = [dict(counted=counted, device_loops=False, loop_barriers=loop_barriers)]
            else:
                raise
        else:
            null_reads = check_artifact(vmfb, tgt) if _writes_module(all_flags) else []
            if null_reads:
                # IREE's VM would read a null buffer (iree-org/iree#24753, docs/iree-limits.md): the
                # next form of the program's loops, as the runtime's fallbacks take them
                if counted and "scf.for" in text:
                    # (and where the general form fails in all of its own forms, the counted one
                    # with its loops on the host: a real 2x6x6 eigvals for CUDA compiled only so)
                    forms = [dict(counted=False, device_loops=device_loops, loop_barriers=loop_barriers)]
                    forms += [dict(counted=True, device_loops=False, loop_barriers=loop_barriers)] if on_device else []
                elif on_device:
                    forms = [dict(counted=counted, device_loops=False, loop_barriers=loop_barriers)]
                elif loop_barriers and tgt.desc.reduction_barriers:
                    forms = [dict(counted=counted, device_loops=device_loops, loop_barriers=False)]
                else:
                    raise XlaError(f"IREE's VM would fail on this program's loops on {tgt.name} (iree-org/iree#24753, "
                                   f"docs/iree-limits.md), in every form xlair has for them: "
                                   f"{null_reads[0]}")
        for i, form in enumerate(forms):
            try:
                vmfb = compile_vmfb(comp, target_name, flags=flags, cpu=cpu, arch=arch, replicas=replicas,
                                    cache=cache, check_limits=check_limits, pack=pack, **form)
                break
            except XlaError:
                if i + 1 == len(forms):
                    raise
        if input_key:
            cache_put(input_key, vmfb)
    if key:
        cache_put(key, vmfb)
    return vmfb


def _writes_module(flags: list[str]) -> bool:
    """Whether iree-compile run with these flags writes a module (not an earlier stage's IR,
    which flags such as `--compile-to=flow` ask for)."""
    for f in flags:
        key, _, value = f.partition("=")
        if (key == "--compile-to" and value != "end") or (key == "--output-format" and value != "vm-bytecode"):
            return False
    return True


def check_artifact(vmfb: bytes, tgt: Target) -> list[str]:
    """Check an artifact's VM code (xlair.vmcode) against its target: a dispatch that binds more
    buffers than the target's HAL takes (its description's max_bindings) raises XlaError (IREE
    would refuse the module when loading it); returns where IREE's VM would read a null buffer
    (empty: it loads and runs)."""
    text = vmcode.disassembly(vmfb)
    limit = tgt.desc.max_bindings
    over = {e: n for e, n in vmcode.bindings_per_export(text).items() if n > limit}
    if over:
        worst = max(over, key=over.get)
        raise XlaError(f"IREE formed dispatches binding more buffers than {tgt.name} takes ({limit}): {worst} "
                       f"binds {over[worst]}" + (f", and {len(over) - 1} more" if len(over) > 1 else "")
                       + "; the module would fail when loaded (docs/iree-limits.md)")
    return vmcode.null_ref_reads(text)


def _stack_flags(module: ir.Module) -> list[str]:
    """IREE's flag for the stack the module's device loops ask for (lowering/device_loops.py
    STACK_ATTR, taken off the module), or none."""
    attrs = module.operation.attributes
    if STACK_ATTR not in attrs:
        return []
    limit = ir.IntegerAttr(attrs[STACK_ATTR]).value
    del attrs[STACK_ATTR]
    return [f"--iree-llvmcpu-stack-allocation-limit={limit}"]


def program_flags(comp: Computation, tgt: Target, chip: str | None = None, flags=()) -> list[str]:
    """The IREE flags a program is compiled with: the target's, data tiling turned off for a
    program of small contractions on a target whose flags turn it on, CPU code that assumes
    CPU_BUFFER_ALIGNMENT of its buffers for a program with a parameter large enough to be
    passed without a copy (device.IMPORT_BYTES), then the caller's."""
    own = tgt.compile_flags(chip)
    if "--iree-opt-data-tiling" in own and tgt.desc.data_tiling_work is not None:
        with lock, context():
            work = heaviest_work(comp.module, CONTRACTIONS)
        if work < tgt.desc.data_tiling_work:
            own = own + ["--iree-opt-data-tiling=false"]
    if tgt.backend == "llvm-cpu" and alignment_of(tgt, list(flags)) is None and \
            any(layout(s)[2] >= IMPORT_BYTES for p in comp.program_shape.params for s in p.leaves()):
        own = own + [f"{ALIGNMENT_FLAG}={CPU_BUFFER_ALIGNMENT}"]
    return own + list(flags)


def compile(comp: Computation, target: str = "cpu", *, flags=(), cpu: str | None = None,
            arch: str | None = None, replicas: int = 1, cache: bool = True,
            check_limits: bool = True, pack: tuple | None = None):
    """Compile a computation for a target ("cpu", "vulkan", "cuda", "rocm" or IREE names).
    `pack=(first, count)`: the executable also takes the argument leaves [first, first + count)
    as the leaves of one `xla.device_put` pytree, packed (xlair.packing)."""
    vmfb = compile_vmfb(comp, target, flags=flags, cpu=cpu, arch=arch, replicas=replicas, cache=cache,
                        check_limits=check_limits, pack=pack)
    exe = Executable(vmfb, target)
    exe._fallbacks = loop_fallbacks(lambda: comp, target, flags=flags, cpu=cpu, arch=arch, replicas=replicas,
                                    cache=cache, check_limits=check_limits, pack=pack)
    return exe


def loop_fallbacks(computation, target: str, **options) -> tuple:
    """The rebuilds an executable of `computation()` (compiled with `options`) falls back on:
    IREE 3.13's VM can fail at run time on a loop (iree-org/iree#24753: a null buffer ref;
    docs/iree-limits.md); the executable then rebuilds itself with counted loops in the
    general form, and if that fails too, with its loops on the host as well (no loop moved
    into a dispatch region), each once (runtime.Executable._fall_back)."""
    def rebuild(**form):
        return lambda: compile_vmfb(computation(), target, **options, **form)
    return (rebuild(counted=False), rebuild(counted=False, device_loops=False))

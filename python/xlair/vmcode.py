"""What an artifact's VM code says about how it will load and run (docs/iree-limits.md).

IREE reports two faults of a module only when it is loaded or run, never when it is compiled:
a dispatch binding more buffers than the target's HAL allows ("exports[80] binding_flags
count 25 exceeds maximum of 16" on CUDA), and its VM's loop bug, a block argument that
arrives null (iree-org/iree#24753: "ref is null; while invoking native function
hal.buffer.subspan").  Both can be read off the module's bytecode, as `iree-dump-module`
(IREE's runtime tool) disassembles it: each `hal.command_buffer.dispatch` lists its bindings,
and each branch lists the registers it copies or moves into the next block's arguments.
xlair.compile reads them before it writes an artifact, so that no target is needed to know.
"""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

from xlair.dialect.checks import XlaError


def _tool() -> str:
    """IREE's iree-dump-module: beside the runtime's libraries, else on PATH or by Python."""
    try:
        import iree._runtime_libs as libs
        path = pathlib.Path(libs.__file__).parent / "iree-dump-module"
        if path.exists():
            return str(path)
    except ImportError:
        pass
    found = shutil.which("iree-dump-module") or str(pathlib.Path(sys.executable).parent / "iree-dump-module")
    return found


def disassembly(vmfb: bytes) -> str:
    """The module's bytecode as iree-dump-module prints it."""
    with tempfile.TemporaryDirectory(prefix="xlair-vm-") as d:
        path = os.path.join(d, "module.vmfb")
        with open(path, "wb") as f:
            f.write(vmfb)
        r = subprocess.run([_tool(), path], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise XlaError(f"iree-dump-module could not read the artifact: {r.stderr.strip()[-500:]}")
    return r.stdout


# ----------------------------------------------------------------------------------------
# bindings per export
# ----------------------------------------------------------------------------------------
_RODATA = re.compile(r"^\s*\.rodata\[\s*(\d+)\] embedded\s+\d+ bytes `([^`]*)`")
_CONST_RODATA = re.compile(r"%r(\d+) = vm\.const\.ref\.rodata (\d+)\b")
_LOOKUP = re.compile(r"%i(\d+) = vm\.call @hal\.executable\.lookup\.function\(%[rR]\d+, %[rR](\d+)\)")
_CONST_I32 = re.compile(r"%i(\d+) = vm\.const\.i32(?:\.zero)?(?: (-?\d+))?")
_DISPATCH = re.compile(r"@hal\.command_buffer\.dispatch segments\[([\d, ]+)\]\(%[rR]\d+, %[rR]\d+, %i(\d+)\b")


def bindings_per_export(text: str) -> dict[str, int]:
    """The most buffers any dispatch of each export binds, by the export's name (as far as
    the disassembly prints it) or `ordinal N`."""
    names = {int(m.group(1)): m.group(2) for m in map(_RODATA.match, text.splitlines()) if m}
    ref_rodata: dict[int, int] = {}
    fn_of: dict[int, str] = {}
    out: dict[str, int] = {}
    for line in text.splitlines():
        if line.startswith("vm.func "):
            ref_rodata.clear()
            fn_of.clear()
        if m := _CONST_RODATA.search(line):
            ref_rodata[int(m.group(1))] = int(m.group(2))
        elif m := _LOOKUP.search(line):
            r = ref_rodata.get(int(m.group(2)))
            fn_of[int(m.group(1))] = names.get(r, f"rodata {r}")
        elif m := _CONST_I32.search(line):
            fn_of[int(m.group(1))] = f"ordinal {m.group(2) or 0}"
        elif m := _DISPATCH.search(line):
            count = int(m.group(1).split(",")[-1])
            export = fn_of.get(int(m.group(2)), "?")
            out[export] = max(out.get(export, 0), count)
    return out


# ----------------------------------------------------------------------------------------
# refs the VM would read null (iree-org/iree#24753)
# ----------------------------------------------------------------------------------------
_REG = re.compile(r"%([rR])(\d+)")
_EDGE = re.compile(r"\^bb(\d+)\(([^()]*)\)")
_PAIR = re.compile(r"%([riR])(\d+)(?::\d+)?->%[ri](\d+)")
#: results that are fences: a null fence is a signalled one, which every HAL call takes
_FENCES = ("@hal.fence.create", "@hal.fence.join")


def _functions(text: str):
    """(name, {block: [instruction]}) of each function of the disassembly."""
    name, blocks, cur = None, {}, None
    for line in text.splitlines():
        if line.startswith("vm.func "):
            name, blocks, cur = line.split("@", 1)[1].split("(", 1)[0], {}, None
        elif name and line.startswith("^bb"):
            cur = int(line[3:].rstrip(":"))
            blocks[cur] = []
        elif name and line.startswith("}"):
            yield name, blocks
            name = None
        elif name and cur is not None and line.strip():
            blocks[cur].append(line.strip())


def _parse(ins: str) -> tuple:
    """(kind, defined registers, [(moved, register read)], [(target, [(src, dst, moved)])]) of
    one instruction, ref registers only; kind: "F" (defines fences), "B" (other refs),
    "discard"."""
    edges = [(int(m.group(1)), [(int(s), int(d), k == "R") for k, s, d in _PAIR.findall(m.group(2)) if k != "i"])
             for m in _EDGE.finditer(ins)]
    body = _EDGE.sub("", ins)
    if body.startswith("vm.discard.refs"):
        return "discard", {int(n) for _, n in _REG.findall(body)}, [], edges
    lhs, eq, rhs = body.partition(" = ")
    if not eq:
        lhs, rhs = "", body
    kind = "F" if any(f in rhs for f in _FENCES) else "B"
    return kind, {int(n) for _, n in _REG.findall(lhs)}, [(k == "R", int(n)) for k, n in _REG.findall(rhs)], edges


def _nulled(kinds: set) -> set:
    """What a register holds once moved out or discarded: null, remembering whether a fence."""
    return {k if k.startswith("null") else "null" + k for k in kinds} or {"nullB"}


def null_ref_reads(text: str) -> list[str]:
    """Where the module reads a buffer (any ref but a fence) from a register that may be null
    on some path: moved out (`%R`) by a branch or a call, or discarded, and not written since.
    IREE's own register allocation never does so, except in iree-org/iree#24753: a branch
    passes one value to two block arguments, one of them takes the value's register over, and
    the other's MOVE clears it."""
    found = []
    for fn, blocks in _functions(text):
        parsed = {b: [_parse(i) for i in ins] for b, ins in blocks.items()}
        entry: dict[int, dict] = {b: {} for b in blocks}

        def run(b: int, report: bool) -> list:
            state = {r: set(k) for r, k in entry[b].items()}
            outs = []
            for k, (kind, defs, uses, edges) in enumerate(parsed[b]):
                if kind == "discard":
                    for r in defs:
                        state[r] = _nulled(state.get(r, {"B"}))
                    continue
                if report:
                    for _, r in uses:
                        if "nullB" in state.get(r, ()):
                            found.append(f"@{fn} ^bb{b}: %r{r} may be null in `{blocks[b][k][:160]}`")
                for moved, r in uses:
                    if moved and r not in defs:
                        state[r] = _nulled(state.get(r, {"B"}))
                for r in defs:
                    state[r] = {kind}
                for target, pairs in edges:
                    after = {r: set(v) for r, v in state.items()}
                    for src, dst, moved in pairs:          # in order, as the VM remaps them
                        after[dst] = set(after.get(src, {"B"}))
                        if moved and src != dst:
                            after[src] = _nulled(after.get(src, {"B"}))
                    outs.append((target, after))
            return outs

        changed = True
        while changed:                                      # may-null, to a fixed point
            changed = False
            for b in blocks:
                for target, after in run(b, False):
                    for r, kinds in after.items():
                        have = entry.setdefault(target, {}).setdefault(r, set())
                        if not kinds <= have:
                            have |= kinds
                            changed = True
        for b in blocks:
            run(b, True)
    return found


# ----------------------------------------------------------------------------------------
# host reads in loops (IREE's stream IR)
# ----------------------------------------------------------------------------------------
_BLOCK = re.compile(r"^\s*\^bb(\d+)\b")
_SUCCESSOR = re.compile(r"\^bb(\d+)")
_HOST_READ = "stream.resource.load"


def host_reads(stream_ir: str) -> tuple[int, int]:
    """(host reads, host reads inside a loop) of a program's stream IR (`iree-compile
    --compile-to=stream`): each `stream.resource.load` is a read of a device buffer the host
    waits for (a While's condition, a branch's predicate, a dynamic index), and one in a block
    of the host's control flow that can reach itself is paid every trip of that loop (0.5-1 ms
    a trip on CUDA).  Reads in the bodies of executables are not the host's (none are there)."""
    total = in_loops = 0
    for body in _host_functions(stream_ir):
        blocks: dict[int, list[str]] = {}
        current = -1
        for line in body:
            if m := _BLOCK.match(line):
                current = int(m.group(1))
            blocks.setdefault(current, []).append(line)
        succ = {b: {int(s) for ln in lines if ln.lstrip().startswith("cf.") for s in _SUCCESSOR.findall(ln)}
                for b, lines in blocks.items()}
        for b, lines in blocks.items():
            reads = sum(ln.count(_HOST_READ) for ln in lines)
            total += reads
            if reads and _reaches(succ, b, b):
                in_loops += reads
    return total, in_loops


def _host_functions(text: str) -> list[list[str]]:
    """The lines of each function of the module's top level (util.func, func.func), without
    the executables' (indented under stream.executable)."""
    out: list[list[str]] = []
    body: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("  ") and not line.startswith(("   ", "  ^", "  }")):   # an op of the module's body
            body = [] if line.lstrip().startswith(("util.func", "func.func")) else None
            if body is not None:
                out.append(body)
            continue
        if body is not None:
            body.append(line)
    return out


def _reaches(succ: dict, start: int, goal: int) -> bool:
    seen, todo = set(), list(succ.get(start, ()))
    while todo:
        b = todo.pop()
        if b == goal:
            return True
        if b not in seen:
            seen.add(b)
            todo.extend(succ.get(b, ()))
    return False

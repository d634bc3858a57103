"""xlair-compile: compile a `.mlir` computation (xla ops, `@main` the entry) to an IREE `.vmfb`.

    xlair-compile prog.mlir --target=cpu -o prog.vmfb
    xlair-compile prog.mlir --target=cpu --cpu=x86-64-v3 -o portable.vmfb
    xlair-compile prog.mlir --target=cpu --cpu=neoverse-v1 -o arm.vmfb      (aarch64; also riscv64: generic-rv64)
    xlair-compile prog.mlir --target=vulkan [--vulkan-target=generic]
    xlair-compile prog.mlir --target=cuda --cuda-arch=sm_80
    xlair-compile prog.mlir --target=rocm --rocm-arch=gfx942

The artifact carries its signature (parameter and result shapes, element types, tuple
structure, replica count), so `xlair.load(path)` and `xlair-run prog.vmfb` need nothing else;
a CPU artifact also runs under plain `iree-run-module --module=prog.vmfb --function=main`
(tuple parameters and results are flattened into their leaves there, unsigned types are
signless).  Exit status 1 with a diagnostic on any error.
"""
from __future__ import annotations

import argparse
import pathlib
import sys
import time


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def parser() -> argparse.ArgumentParser:
    from xlair.targets import TARGETS
    ap = _Parser(prog="xlair-compile", description=__doc__.splitlines()[0],
                 formatter_class=argparse.RawDescriptionHelpFormatter,
                 epilog="\n".join(__doc__.splitlines()[1:]))
    ap.add_argument("input", help="input .mlir ('-': stdin)")
    ap.add_argument("-o", "--output", help="output .vmfb (default: the input's name with .vmfb)")
    ap.add_argument("--target", default="cpu",
                    help=f"{' | '.join(TARGETS)} (or IREE names: llvm-cpu, vulkan-spirv, hip); default cpu")
    ap.add_argument("--cpu", help=f"CPU to compile for: {', '.join(TARGETS['cpu'].archs)} or any LLVM "
                                  f"CPU name; aarch64 (neoverse-*, cortex-*, ...) and riscv64 names cross-compile "
                                  f"(default $XLAIR_CPU, else host)")
    ap.add_argument("--cuda-arch", help=f"CUDA chip, e.g. {', '.join(TARGETS['cuda'].archs)} (default {TARGETS['cuda'].default_arch})")
    ap.add_argument("--rocm-arch", help=f"ROCm chip, e.g. {', '.join(TARGETS['rocm'].archs)} (default {TARGETS['rocm'].default_arch})")
    ap.add_argument("--vulkan-target", help=f"Vulkan target IREE knows, e.g. "
                                            f"{', '.join(TARGETS['vulkan'].archs)} (default {TARGETS['vulkan'].default_arch})")
    ap.add_argument("--replicas", type=int, default=1, help="replica count recorded in the artifact")
    ap.add_argument("--iree-flag", action="append", default=[], metavar="FLAG",
                    help="extra flag for IREE's compiler, e.g. --iree-flag=--iree-opt-level=O3 (repeatable)")
    ap.add_argument("--emit", choices=("vmfb", "linalg"), default="vmfb",
                    help="vmfb (default) or linalg: the lowered module IREE is given, as text")
    ap.add_argument("--no-cache", action="store_true", help="do not use the on-disk compile cache")
    ap.add_argument("-v", "--verbose", action="store_true", help="report the signature and the time taken")
    return ap


_ARCH_OPTION = {"cpu": "--cpu", "cuda": "--cuda-arch", "rocm": "--rocm-arch", "vulkan": "--vulkan-target"}


def _arch(args, tgt) -> str | None:
    chosen = {"cpu": args.cpu, "cuda": args.cuda_arch, "rocm": args.rocm_arch,
              "vulkan": args.vulkan_target}
    for name, value in chosen.items():
        if value and name != tgt.name:
            raise UsageError(f"{_ARCH_OPTION[name]} applies to --target={name}, not --target={tgt.name}")
    return chosen[tgt.name]


class UsageError(Exception):
    pass


def read_computation(path: str):
    """The Computation in a .mlir file (verified), or XlaError / UsageError."""
    from xlair import Computation
    try:
        data = sys.stdin.buffer.read() if path == "-" else pathlib.Path(path).read_bytes()
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UsageError(f"{path}: not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})") from None
    if "\0" in text:
        raise UsageError(f"{path}: NUL byte in the input (not MLIR text)")
    name = pathlib.Path(path).stem if path != "-" else "main"
    return Computation.from_text(text, name=name)


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    from xlair import XlaError
    try:
        from xlair.compile import compile_vmfb, lower, target
        tgt = target(args.target)
        arch = _arch(args, tgt)
        if args.replicas < 1:
            raise UsageError(f"--replicas must be at least 1; got {args.replicas}")
        comp = read_computation(args.input)
        out = args.output
        if out is None:
            if args.input == "-":
                raise UsageError("reading stdin: name the output with -o")
            out = str(pathlib.Path(args.input).with_suffix(".vmfb" if args.emit == "vmfb" else ".linalg.mlir"))
        t0 = time.perf_counter()
        if args.emit == "linalg":
            from xlair.dialect.ir import context, lock
            module = lower(comp, args.replicas, tgt.name)
            with lock, context():
                data = str(module).encode()
        else:
            data = compile_vmfb(comp, tgt.name, arch=arch, flags=args.iree_flag, replicas=args.replicas,
                                cache=not args.no_cache)
        took = time.perf_counter() - t0
        if out == "-":
            sys.stdout.buffer.write(data)
        else:
            pathlib.Path(out).write_bytes(data)
    except UsageError as e:
        sys.stderr.write(f"xlair-compile: error: {e}\n")
        return 1
    except XlaError as e:
        sys.stderr.write(f"xlair-compile: error: {e}\n")
        return 1
    except OSError as e:
        sys.stderr.write(f"xlair-compile: error: cannot write {out}: {e.strerror or e}\n")
        return 1
    if args.verbose:
        sig = comp.program_shape
        sys.stderr.write(f"{out}: {comp.name} {sig} for {tgt.name}"
                         f"{' (' + arch + ')' if arch else ''}, {len(data)} bytes, {took:.2f} s\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""xlair on an NVIDIA GPU against XLA:GPU, in two steps, the way a user deploys (issue 39):

    python bench/bench_gpu.py compile [--out build/gpu-bench]   # any machine with xlair's venv
    python3 bench/bench_gpu.py run [--dir build/gpu-bench]      # a machine with an NVIDIA GPU

`compile` (`make bench-gpu-artifacts`) writes into one folder, for every program of the
real-program suite (tests/models/model_programs.py), every linear-algebra function of
tests/models/test_linalg.py (f32) and the GPU-sized workloads below:
  - xlair's CUDA artifact (`<name>.vmfb`; for the Vulkan subset also `<name>.vulkan.vmfb`),
  - the program exported by `jax.export` for CUDA (`<name>.jax`: XLA:GPU runs the very same
    program there, without flax or optax),
  - for the suite's programs and linear algebra their inputs (`<name>.in.npz`) and jax.jit's results on this CPU
    (`<name>.want.npz`); the workloads' inputs are made there from a seed (tens of MB each),
  - `manifest.json` (what was compiled, what failed and why, the versions), `wheels/`: the
    iree-base-runtime wheel for Python 3.12 (its Tracy build left out) and xlair's own wheel,
    and `debs/`: the Vulkan loader and libglvnd as Debian packages (VULKAN_DEBS).

`run` (`make bench-gpu`) installs the wheels where they are missing (no compiler: the run side
needs only IREE's runtime); with `--vulkan` (make bench-gpu passes it) it also runs the Vulkan
subset on the GPU's Vulkan driver, with the carried loader where the machine has none.  It checks every xlair result (against jax.jit's CPU results for the
suite, against XLA:GPU's for the workloads), times xlair and `jax.jit` of the exported program
on the same GPU, numpy in and out and device-resident, and the cold load (the driver's PTX JIT),
and writes `RESULTS-gpu.md` and `results.json` (into $OUT where that is set, and into the folder).
bench/RESULTS-gpu.md is that file, copied from a run.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import time
import zipfile

import numpy as np

from harness import cpu_name

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "models"))


def leaves(tree) -> list:
    """The suite's `model_compare.leaves` (typed PRNG keys as their data), imported when the
    compile step first needs it: it imports xlair, which the run step installs first."""
    from model_compare import leaves as suite_leaves
    return suite_leaves(tree)
DEFAULT_DIR = ROOT / "build" / "gpu-bench"
IREE_VERSION = "3.13.0"


# ---------------------------------------------------------------------------------------------
# the GPU-sized workloads: (name, what, input specs (shape, dtype), the function, check tolerance
# of the relative error of norms against XLA:GPU's result)
# ---------------------------------------------------------------------------------------------
def _workloads():
    import jax
    import jax.numpy as jnp

    def mlp(x, w1, w2):
        return jax.nn.gelu(x @ w1) @ w2

    def conv(x, w):
        return jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def attention(q, k, v):
        s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / np.float32(np.sqrt(q.shape[-1]))
        return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, axis=-1), v)

    f32, bf16 = "float32", "bfloat16"
    return [
        ("matmul_f32_4096", "f32 4096^3 matmul, DEFAULT precision (xlair: three BF16 products)",
         [((4096, 4096), f32)] * 2, lambda a, b: a @ b, 1e-2),
        ("matmul_f32_4096_highest", "f32 4096^3 matmul, HIGHEST precision (both in F32)", [((4096, 4096), f32)] * 2,
         lambda a, b: jnp.matmul(a, b, precision="highest"), 1e-4),
        ("matmul_bf16_4096", "bf16 4096^3 matmul", [((4096, 4096), bf16)] * 2, lambda a, b: a @ b, 3e-2),
        ("mlp_block_f32", "MLP block 8192x1024 -> 4096 -> 1024, gelu, f32",
         [((8192, 1024), f32), ((1024, 4096), f32), ((4096, 1024), f32)], mlp, 1e-2),
        ("conv3x3_f32", "conv 3x3 NHWC 32x56x56x64 -> 64, f32", [((32, 56, 56, 64), f32), ((3, 3, 64, 64), f32)],
         conv, 1e-2),
        ("attention_f32", "attention 16x8x512x64, f32", [((16, 8, 512, 64), f32)] * 3, attention, 1e-2),
        ("softmax_f32", "softmax f32[8192,4096]", [((8192, 4096), f32)], lambda x: jax.nn.softmax(x, axis=-1), 1e-4),
        ("elementwise_f32", "tanh(x)*y+exp(-x*x), 64M f32", [((8192, 8192), f32)] * 2,
         lambda x, y: jnp.tanh(x) * y + jnp.exp(-x * x), 1e-5),
        ("row_sums_f32", "row sums f32[16384,4096]", [((16384, 4096), f32)], lambda x: jnp.sum(x, axis=1), 1e-4),
    ]


def _inputs(specs, seed: int):
    """The workload's inputs, made the same on both machines from a seed."""
    import ml_dtypes
    rng = np.random.default_rng(seed)
    out = []
    for shape, dtype in specs:
        a = rng.standard_normal(shape, dtype=np.float32)
        out.append(a.astype(ml_dtypes.bfloat16) if dtype == "bfloat16" else a)
    return out


# ---------------------------------------------------------------------------------------------
# other forms of some programs and workloads, compiled beside the default one and timed against
# it on the same GPU in the same run (issue 39 item 5: IREE's pipelines and xlair's forms chosen
# by measurement): each names its program or workload, the target description's fields it
# changes (lowering/targets.py), compile_vmfb's keywords, IREE flags, and what it decides
# ---------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Form:
    base: str
    question: str
    fields: dict = dataclasses.field(default_factory=dict)
    keywords: dict = dataclasses.field(default_factory=dict)
    flags: tuple = ()


FORMS = {
    "random_distributions@loops=host": Form(
        "random_distributions", "host While loops reading their condition every trip, against chunks of "
        "up to 16 trips a read (loop_chunk, the default)", keywords={"device_loops": False}),
    "conv3x3_f32@products=f32": Form(
        "conv3x3_f32", "an F32 convolution in F32, against three BF16 convolutions (f32_products=bf16x3, "
        "the default)", fields={"f32_products": "f32"}),
    "attention_f32@products=f32": Form(
        "attention_f32", "attention's F32 batched products in F32, against three BF16 products (the default)",
        fields={"f32_products": "f32"}),
    "softmax_f32@reduction_barriers=all": Form(
        "softmax_f32", "every reduction of a computed operand in a dispatch of its own (the form before), "
        "against only the sums IREE fails on fused (reduction_barriers=unsafe, the default)",
        fields={"reduction_barriers": "all"}),
    "transformer_encoder_grad@reduction_barriers=all": Form(
        "transformer_encoder_grad", "the same on a real program's LayerNorm and softmax gradients",
        fields={"reduction_barriers": "all"}),
    "matmul_bf16_4096@mma=128x128x64": Form(
        "matmul_bf16_4096", "a 128x128 workgroup tile, K 64 at a time, 256 threads, 3 prefetch stages "
        "(mma_tiles), against IREE's 128x64, 32, 128 threads, 2 stages", fields={"mma_tiles": (128, 128, 64, 256, 3)}),
    "matmul_bf16_4096@mma=128x256x32": Form(
        "matmul_bf16_4096", "a 128x256 workgroup tile, K 32, 256 threads, 3 stages, against IREE's own",
        fields={"mma_tiles": (128, 256, 32, 256, 3)}),
    "matmul_f32_4096@mma=128x128x64": Form(
        "matmul_f32_4096", "the three BF16 products of an F32 one in 128x128x64 tiles, against IREE's own",
        fields={"mma_tiles": (128, 128, 64, 256, 3)}),
    "transformer_encoder_grad@opt-level=O3": Form(
        "transformer_encoder_grad", "IREE's O3 (`--iree-opt-level=O3`) on a real program, against its default",
        flags=("--iree-opt-level=O3",)),
    "transformer_encoder_grad@aggressive-fusion": Form(
        "transformer_encoder_grad", "IREE's aggressive dispatch fusion (fewer, larger dispatches) on a real "
        "program, against its default", flags=("--iree-dispatch-creation-enable-aggressive-fusion",)),
    "elementwise_f32@threads=256x4": Form(
        "elementwise_f32", "256 threads a workgroup, 4 elements each (xlair.targets.elementwise_spec), against IREE's "
        "32 threads of 4", fields={"elementwise_threads": (256, 4)}),
    "elementwise_f32@threads=256x8": Form(
        "elementwise_f32", "256 threads a workgroup, 8 elements each, against IREE's 32 threads of 4",
        fields={"elementwise_threads": (256, 8)}),
    "transformer_encoder_grad@threads=256x4": Form(
        "transformer_encoder_grad", "the same 256 threads of 4 on a real program's element-wise dispatches",
        fields={"elementwise_threads": (256, 4)}),
    "softmax_f32@no-reduction-vector-distribution": Form(
        "softmax_f32", "IREE's tile-and-fuse reduction code (one thread a row's slice), against its "
        "vector-distribute reduction (the default: one 32-thread workgroup a row)",
        flags=("--iree-codegen-llvmgpu-use-reduction-vector-distribution=false",)),
}


@contextlib.contextmanager
def _described(target: str, fields: dict):
    """The target's description with some fields changed, while the block runs (the lowering
    reads it through registry.options() as it runs; the compile cache's key holds it)."""
    import xlair.lowering.targets as lt
    saved = lt.DESCRIPTIONS[target]
    lt.DESCRIPTIONS[target] = dataclasses.replace(saved, **fields)
    try:
        yield
    finally:
        lt.DESCRIPTIONS[target] = saved


def _compile_forms(out: pathlib.Path, manifest: dict, made: dict, target: str, arch: str | None, only) -> None:
    """The FORMS whose program or workload this run compiled (`made`: name -> computation)."""
    import xlair as xla
    from xlair.compile import compile_vmfb
    manifest["forms"] = {}
    for name, form in FORMS.items():
        if form.base not in made or (only and name not in only and form.base not in only):
            continue
        rec: dict = {"base": form.base, "question": form.question,
                     "changes": {**form.fields, **form.keywords, **({"flags": list(form.flags)} if form.flags else {})}}
        file = name.replace("@", ".").replace("=", "-") + ".vmfb"
        t = time.perf_counter()
        try:
            with _described(target, form.fields):
                data = compile_vmfb(made[form.base], target, arch=arch, flags=list(form.flags), **form.keywords)
            (out / file).write_bytes(data)
            rec["xlair"] = file
        except xla.XlaError as e:
            rec["xlair_error"] = str(e)[:600]
        rec["compile_s"] = round(time.perf_counter() - t, 2)
        manifest["forms"][name] = rec
        print(f"{name}: {'ok' if 'xlair' in rec else rec['xlair_error'][:120]}", flush=True)


# ---------------------------------------------------------------------------------------------
# the compile step
# ---------------------------------------------------------------------------------------------
def _flat(fn, args):
    """`fn` as a function of its arguments' leaves returning its result's leaves (typed PRNG keys
    as their data, both ways), and those leaves: what the artifact and the exported program
    take and give on the GPU machine."""
    import jax
    from xlair.values import is_prng_key
    values, tree = jax.tree_util.tree_flatten(args)
    impls = {i: jax.random.key_impl(x) for i, x in enumerate(values) if is_prng_key(getattr(x, "dtype", None))}

    def flat(*xs):
        xs = [jax.random.wrap_key_data(x, impl=impls[i]) if i in impls else x for i, x in enumerate(xs)]
        out = jax.tree_util.tree_leaves(fn(*jax.tree_util.tree_unflatten(tree, xs)))
        return [jax.random.key_data(o) if is_prng_key(o.dtype) else o for o in out]
    return flat, leaves(args)


#: the platform jax.export lowers for, by xlair's target (a CPU run of both steps checks the
#: script itself: tests/tools/test_bench_gpu.py)
JAX_PLATFORMS = {"cuda": "cuda", "rocm": "rocm", "cpu": "cpu"}


def _export(fn, args, target: str) -> bytes:
    import jax
    return bytes(jax.export.export(jax.jit(fn), platforms=(JAX_PLATFORMS[target],))(*args).serialize())


def _compile_one(out: pathlib.Path, name: str, fn, args, target: str, arch: str | None) -> tuple:
    """xlair's artifact and the exported program of one program; what failed, said."""
    import xlair as xla
    from xlair.compile import compile_vmfb
    rec: dict = {}
    t = time.perf_counter()
    try:
        comp = xla.from_jax(fn, *args)
        (out / f"{name}.vmfb").write_bytes(compile_vmfb(comp, target, arch=arch))
        rec["xlair"] = f"{name}.vmfb"
    except xla.XlaError as e:
        rec["xlair_error"] = str(e)[:600]
        comp = None
    rec["compile_s"] = round(time.perf_counter() - t, 2)
    try:
        (out / f"{name}.jax").write_bytes(_export(fn, args, target))
        rec["jax"] = f"{name}.jax"
    except Exception as e:  # noqa: BLE001  (jax.export's own errors: a lowering it has not for CUDA)
        rec["jax_error"] = f"{type(e).__name__}: {str(e)[:600]}"
    return rec, comp


def compile_step(out: pathlib.Path, target: str, arch: str | None, only: set | None, vulkan: bool,
                 wheels: bool = True) -> None:
    import jax
    from model_programs import PROGRAMS
    from xlair.compile import compile_vmfb
    import xlair as xla
    out.mkdir(parents=True, exist_ok=True)
    manifest = {"target": target, "arch": arch, "programs": {}, "workloads": {},
                "versions": _versions(jax=jax.__version__)}
    made = {}           # name -> the computation compiled (the FORMS' bases)
    for name in sorted(PROGRAMS):
        if only and name not in only:
            continue
        prog = PROGRAMS[name]
        fn, args = _flat(*prog.make())
        rec, comp = _compile_one(out, name, fn, args, target, arch)
        rec.update(rtol=prog.rtol, atol=prog.atol, kind=prog.kind, doc=prog.doc)
        if comp is not None:
            made[name] = comp
        np.savez(out / f"{name}.in.npz", *args)
        np.savez(out / f"{name}.want.npz", *leaves(jax.jit(fn)(*args)))
        if vulkan and prog.vulkan and comp is not None:
            try:
                (out / f"{name}.vulkan.vmfb").write_bytes(compile_vmfb(comp, "vulkan"))
                rec["vulkan"] = f"{name}.vulkan.vmfb"
            except xla.XlaError as e:
                rec["vulkan_error"] = str(e)[:600]
        manifest["programs"][name] = rec
        print(f"{name}: {'ok' if 'xlair' in rec else rec.get('xlair_error', '')[:120]}", flush=True)
    _compile_linalg(out, manifest, target, arch, only)
    for seed, (name, doc, specs, fn, tol) in enumerate(_workloads()):
        if only and name not in only:
            continue
        args = [jax.ShapeDtypeStruct(shape, np.dtype(dt) if dt != "bfloat16" else jax.numpy.bfloat16)
                for shape, dt in specs]
        rec, comp = _compile_one(out, name, fn, args, target, arch)
        rec.update(doc=doc, specs=[[list(s), d] for s, d in specs], seed=seed, tol=tol)
        if comp is not None:
            made[name] = comp
        manifest["workloads"][name] = rec
        print(f"{name}: {'ok' if 'xlair' in rec else rec.get('xlair_error', '')[:120]}", flush=True)
    _compile_forms(out, manifest, made, target, arch, only)
    if wheels:
        _wheels(out / "wheels")
        if vulkan:
            _debs(out / "debs")
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"wrote {out} ({size / 2**20:.1f} MiB)")


#: output leaves of the linear-algebra functions that are vectors fixed only up to sign (the
#: device forms' Jacobi methods choose other signs than LAPACK): leaf -> "cols" or "rows"
SIGN_FREE = {"eigh": {1: "cols"}, "svd": {0: "cols", 2: "rows"}, "svd_reduced_tall": {0: "cols", 2: "rows"},
             "svd_gesvd": {0: "cols", 2: "rows"}}
#: functions whose results are compared in another form (`_comparable`): "eig", eigenvalues in
#: the QR algorithm's order (not LAPACK's) with their vectors, each fixed up to a phase; "schur",
#: a Schur form, which is not unique (its diagonal's order, its vectors' signs), compared by what
#: defines it
ALIGN = {"eig": "eig", "eigvals": "eig", "eig_left": "eig", "schur": "schur"}


def _compile_linalg(out: pathlib.Path, manifest: dict, target: str, arch: str | None, only) -> None:
    """Every function of tests/models/test_linalg.py (those docs/linalg.md names), f32, on a
    batch of 6x6 matrices (one matrix where the function takes no batch)."""
    import jax
    from test_linalg import FUNCTIONS, _mat
    manifest["linalg"] = {}
    for name, (fn, batched) in FUNCTIONS.items():
        key = f"linalg_{name}"
        if only and key not in only:
            continue
        a = _mat((2, 6, 6) if batched else (6, 6), np.float32, np.random.default_rng(len(name)))
        flat, args = _flat(fn, (a,))
        rec, _ = _compile_one(out, key, flat, args, target, arch)
        rec.update(rtol=1e-3, atol=1e-4, doc=f"{name}, f32[{','.join(map(str, a.shape))}]",
                   sign_free={str(k): v for k, v in SIGN_FREE.get(name, {}).items()}, align=ALIGN.get(name))
        np.savez(out / f"{key}.in.npz", *args)
        np.savez(out / f"{key}.want.npz", *leaves(jax.jit(flat)(*args)))
        manifest["linalg"][key] = rec
        print(f"{key}: {'ok' if 'xlair' in rec else rec.get('xlair_error', '')[:120]}", flush=True)


def _sign_aligned(got: np.ndarray, want: np.ndarray, axis: str) -> np.ndarray:
    """`got` with each vector (column or row of the last two axes) multiplied by the sign that
    best matches `want`'s (its dot product's)."""
    vec = -2 if axis == "cols" else -1
    dots = np.sum(got.astype(np.float64) * want.astype(np.float64), axis=vec, keepdims=True)
    return (got * np.where(dots < 0, -1, 1)).astype(got.dtype)


def _eig_aligned(got: list, want: list) -> list:
    """`got` (eigenvalues [..., n], then matrices whose columns are their vectors) with its
    eigenvalues in the order of `want`'s (each matched to the nearest one not yet taken) and each
    vector multiplied by the phase that best matches `want`'s."""
    w, ww = np.asarray(got[0]), np.asarray(want[0])
    perm = np.zeros(w.shape, dtype=np.int64)
    for b in np.ndindex(w.shape[:-1]):
        free = list(range(w.shape[-1]))
        for j, x in enumerate(ww[b]):
            k = min(free, key=lambda i: abs(w[b][i] - x))
            perm[b + (j,)] = k
            free.remove(k)
    out = [np.take_along_axis(w, perm, -1)]
    for g, v in zip(got[1:], want[1:]):
        g = np.take_along_axis(np.asarray(g), perm[..., None, :], -1)
        dots = np.sum(np.conj(g).astype(np.complex128) * np.asarray(v), axis=-2, keepdims=True)
        mag = np.abs(dots)
        out.append((g * np.where(mag > 0, dots / np.where(mag > 0, mag, 1), 1)).astype(g.dtype))
    return out


def _schur_properties(a: np.ndarray, leaves: list) -> list:
    """What defines a Schur form (t, z) of `a`: Z T Z^H (= a), Z^H Z (= I) and T below its first
    subdiagonal (= 0)."""
    t, z = (np.asarray(x) for x in leaves[:2])
    zh = np.conj(np.swapaxes(z, -1, -2))
    return [z @ t @ zh, zh @ z, np.tril(t, -2)]


def _comparable(rec: dict, ins: list, got: list, want: list) -> tuple[list, list]:
    """`got` and `want` in the forms compared (SIGN_FREE, ALIGN)."""
    got = list(got)
    for leaf, axis in rec.get("sign_free", {}).items():
        i = int(leaf)
        if i < len(got) and got[i].shape == want[i].shape:
            got[i] = _sign_aligned(got[i], want[i], axis)
    if rec.get("align") == "eig" and got[0].shape == want[0].shape:
        got = _eig_aligned(got, want)
    elif rec.get("align") == "schur":
        got, want = _schur_properties(ins[0], got), _schur_properties(ins[0], want)
    return got, want


def _versions(**more) -> dict:
    v = dict(more)
    try:
        v["xlair_commit"] = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                           capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        v["xlair_commit"] = "unknown"
    from xlair.artifacts import iree_version
    v["iree_compiler"] = iree_version()
    v["compiled_on"] = cpu_name()
    return v


def _wheels(where: pathlib.Path) -> None:
    """iree-base-runtime for CPython 3.12 (the GPU machine's Python) without its Tracy build
    (30 MB of a profiling runtime), and xlair's own wheel (pure Python)."""
    where.mkdir(parents=True, exist_ok=True)
    if not list(where.glob("iree_base_runtime-*.whl")):
        tmp = where / "download"
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                        "--python-version", "3.12", "--implementation", "cp",
                        "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux_2_17_x86_64",
                        "-d", str(tmp), f"iree-base-runtime=={IREE_VERSION}"], check=True)
        for whl in tmp.glob("*.whl"):
            _strip(whl, where / whl.name, "iree/_runtime_libs_tracy/")
            whl.unlink()
        tmp.rmdir()
    for old in where.glob("xlair-*.whl"):
        old.unlink()
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(where), str(ROOT)], check=True)


def _strip(src: pathlib.Path, dst: pathlib.Path, prefix: str) -> None:
    """A copy of a wheel without the files under `prefix` (and without their RECORD lines)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            if item.filename.startswith(prefix):
                continue
            data = zin.read(item.filename)
            if item.filename.endswith(".dist-info/RECORD"):
                data = b"".join(ln for ln in data.splitlines(keepends=True) if not ln.startswith(prefix.encode()))
            zout.writestr(item, data)


#: Debian packages of the Vulkan loader and libglvnd (which NVIDIA's Vulkan driver needs): the
#: compile step downloads them into `debs/`, and the run step unpacks them where the GPU machine
#: has no Vulkan loader (without libglvnd: VK_ERROR_INCOMPATIBLE_DRIVER; measured on the H200,
#: ../shared/NOTES-iree.md)
VULKAN_DEBS = ("libvulkan1", "libglvnd0", "libegl1", "libgl1", "libglx0", "libopengl0", "libgles2")
#: where NVIDIA's driver (or the container toolkit that mounts it) puts its Vulkan ICD file
NVIDIA_ICDS = ("/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json", "/usr/share/vulkan/icd.d/nvidia_icd.json",
               "/etc/vulkan/icd.d/nvidia_icd.json", "/usr/local/share/vulkan/icd.d/nvidia_icd.json")
#: set in the run step's environment once it has been given the Vulkan loader (_vulkan_env)
VULKAN_ENV_MARK = "XLAIR_BENCH_VULKAN_ENV"


def _debs(where: pathlib.Path) -> None:
    """VULKAN_DEBS downloaded (apt-get download) into `where`; where that fails, said."""
    where.mkdir(parents=True, exist_ok=True)
    if len(list(where.glob("*.deb"))) >= len(VULKAN_DEBS):
        return
    try:
        r = subprocess.run(["apt-get", "download", *VULKAN_DEBS], cwd=where, capture_output=True, text=True,
                           timeout=300)
        failed = r.returncode != 0 and (r.stderr.strip()[-300:] or f"exit status {r.returncode}")
    except (OSError, subprocess.TimeoutExpired) as e:
        failed = str(e)
    if failed:
        print(f"no Vulkan loader packages in {where} ({failed}): the run step's Vulkan subset then needs "
              "a Vulkan loader installed on the GPU machine", flush=True)


def _unpack_deb(deb: pathlib.Path, dest: pathlib.Path) -> None:
    """The files of a Debian package (an ar archive holding data.tar.*) under `dest`, without
    dpkg (the GPU machine may have none)."""
    import io
    import tarfile
    raw = deb.read_bytes()
    if not raw.startswith(b"!<arch>\n"):
        raise ValueError(f"{deb} is not a Debian package (no ar header)")
    pos = 8
    while pos + 60 <= len(raw):
        name, size = raw[pos:pos + 16].decode().strip().rstrip("/"), int(raw[pos + 48:pos + 58].decode().strip())
        pos += 60
        if name.startswith("data.tar"):
            with tarfile.open(fileobj=io.BytesIO(raw[pos:pos + size])) as tar:
                tar.extractall(dest, filter="data")
            return
        pos += size + (size & 1)
    raise ValueError(f"{deb} holds no data.tar")


def _vulkan_env(folder: pathlib.Path, environ=None, has_loader=None) -> dict | None:
    """The environment the run step's Vulkan subset needs, or None where this one has it: the
    carried VULKAN_DEBS unpacked and on LD_LIBRARY_PATH where this machine has no Vulkan loader
    (glibc reads LD_LIBRARY_PATH when a process starts: the run step starts again in it), and
    VK_DRIVER_FILES naming NVIDIA's ICD file where none is named."""
    import ctypes.util
    env = dict(os.environ if environ is None else environ)
    if env.get(VULKAN_ENV_MARK):
        return None
    changed = False
    loader = ctypes.util.find_library("vulkan") is not None if has_loader is None else has_loader
    debs = sorted((folder / "debs").glob("*.deb"))
    if not loader and debs:
        dest = pathlib.Path(env.get("TMPDIR", "/tmp")) / "xlair-vulkan-loader"
        for deb in debs:
            _unpack_deb(deb, dest)
        libs = [str(p) for p in sorted(dest.glob("usr/lib/*-linux-gnu")) + [dest / "usr" / "lib"] if p.is_dir()]
        env["LD_LIBRARY_PATH"] = ":".join(libs + ([env["LD_LIBRARY_PATH"]] if env.get("LD_LIBRARY_PATH") else []))
        changed = True
    if not (env.get("VK_DRIVER_FILES") or env.get("VK_ICD_FILENAMES")):
        icd = next((p for p in NVIDIA_ICDS if os.path.exists(p)), None)
        if icd:
            env["VK_DRIVER_FILES"] = icd
            changed = True
    if not changed:
        return None
    env[VULKAN_ENV_MARK] = "1"
    return env


# ---------------------------------------------------------------------------------------------
# the run step (the GPU machine: python3 with jax[cuda]; xlair's run side from the wheels)
# ---------------------------------------------------------------------------------------------
def _bootstrap(folder: pathlib.Path) -> None:
    """xlair's run side and IREE's runtime importable: from the carried wheels where this Python
    has neither (installed into a folder of their own, no index)."""
    try:
        import iree.runtime  # noqa: F401
        import xlair  # noqa: F401
        return
    except ImportError:
        pass
    site = pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / "xlair-gpu-site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                    "--upgrade", "--target", str(site), *map(str, sorted((folder / "wheels").glob("*.whl")))],
                   check=True)
    sys.path.insert(0, str(site))


def _median_time(call, budget: float = 0.4, most: int = 50) -> float:
    """The median seconds of a call, after two warm-up calls, over at least 3 calls and as many
    as fit in `budget` seconds (at most `most`)."""
    call()
    call()
    times = []
    start = time.perf_counter()
    while len(times) < 3 or (len(times) < most and time.perf_counter() - start < budget):
        t = time.perf_counter()
        call()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _rel_err(got, want) -> float:
    g, w = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.linalg.norm(g - w) / max(np.linalg.norm(w), 1e-30))


def _gpu_info() -> dict:
    info = {"python": platform.python_version()}
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=30).stdout.strip()
        info["gpu"] = q
    except (OSError, subprocess.TimeoutExpired):
        info["gpu"] = "unknown (no nvidia-smi)"
    return info


def _run_xlair(path, target, ins):
    """(cold load + first call seconds, first results, numpy-in/out seconds, device-resident
    seconds, the results of one more device-resident call) of one artifact.  The last call
    passes the same Arrays as the timed ones: on Vulkan, IREE's replayed command buffers read
    an earlier call's buffers then (docs/iree-limits.md); its results are checked too."""
    import xlair as xla
    t = time.perf_counter()
    exe = xla.load(path, target=target)
    first = exe(*ins)
    cold = time.perf_counter() - t
    first = list(first) if isinstance(first, tuple) else [first]
    host = _median_time(lambda: [np.asarray(r) for r in _as_list(exe(*ins))])
    dev_ins = [xla.device_put(a, target=target) for a in ins]
    dev = _median_time(lambda: exe(*dev_ins))
    again = [np.asarray(r) for r in _as_list(exe(*dev_ins))]
    return cold, [np.asarray(r) for r in first], host, dev, again


def _as_list(r):
    return list(r) if isinstance(r, tuple) else [r]


def _run_jax(path, ins, target: str):
    """(numpy-in/out seconds, device-resident seconds, results) of the exported program under
    jax.jit on the target's device (XLA:GPU)."""
    import jax
    exp = jax.export.deserialize(bytearray(path.read_bytes()))
    f = jax.jit(exp.call)
    gpu = jax.devices("cpu" if target == "cpu" else "gpu")[0]
    dev_ins = [jax.device_put(a, gpu) for a in ins]
    out = f(*dev_ins)
    jax.block_until_ready(out)
    host = _median_time(lambda: [np.asarray(r) for r in jax.tree_util.tree_leaves(f(*ins))])
    dev = _median_time(lambda: jax.block_until_ready(f(*dev_ins)))
    return host, dev, [np.asarray(r) for r in jax.tree_util.tree_leaves(out)]


def _problems(section: str, rec: dict, ins: list, got: list, again: list, want: list) -> tuple[list, dict]:
    """What is wrong with an artifact's results (an empty list: they match), and what was
    measured on the way (the relative error of a workload): the suite's and linear algebra's
    against jax.jit's CPU results with the program's tolerances, a workload's against XLA:GPU's
    with its own; and a device-resident call against the first, both as the program gave them
    (before the sign alignment of eigenvectors and singular vectors)."""
    from types import SimpleNamespace
    from model_compare import mismatches
    found: dict = {}
    if section != "workloads":
        close = SimpleNamespace(rtol=rec["rtol"], atol=rec["atol"])
        resident_bad = mismatches(close, again, got)
        bad = mismatches(close, *_comparable(rec, ins, got, want))
    else:
        resident_bad = [] if max(_rel_err(a, g) for a, g in zip(again, got)) <= rec["tol"] else ["differs"]
        if want is None:
            bad = ["no XLA:GPU result to check against"]
        else:
            found["rel_err"] = err = max(_rel_err(g, w) for g, w in zip(got, want))
            bad = [f"relative error {err:.2e} > {rec['tol']}"] if err > rec["tol"] else []
    if resident_bad:
        bad.append("a device-resident call (the same Arrays again) differs from the first call: "
                   + "; ".join(resident_bad)[:200])
    return bad, found


def _status(bad: list) -> str:
    return "ok" if not bad else "mismatch: " + "; ".join(bad)[:400]


def run_step(folder: pathlib.Path, only: set | None, vulkan: bool, save=None) -> dict:
    """Every artifact of the folder checked and timed; `save(results)` is called after each, so
    that a run cut short still leaves what it measured."""
    _bootstrap(folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    target = manifest["target"]
    results = {"info": {**_gpu_info(), **manifest["versions"]}, "programs": {}, "linalg": {}, "workloads": {},
               "forms": {}}
    import jax
    import iree.runtime
    results["info"]["jax_here"] = jax.__version__
    results["info"]["iree_runtime"] = getattr(iree.runtime, "__version__", IREE_VERSION)
    bases = {rec["base"] for rec in manifest.get("forms", {}).values()}
    checked = {}        # base -> (section, rec, inputs, what to compare against), for the forms

    def run_forms():
        """The FORMS, each against its program's or workload's default form (run before)."""
        for name, rec in manifest.get("forms", {}).items():
            if rec["base"] not in checked or (only and name not in only and rec["base"] not in only):
                continue
            section, base, ins, want = checked[rec["base"]]
            r = {"base": rec["base"], "question": rec["question"], "changes": rec["changes"],
                 "default_device_s": results[section][rec["base"]]["xlair_device_s"]}
            results["forms"][name] = r
            if "xlair" not in rec:
                r["status"] = "not compiled: " + rec.get("xlair_error", "")[:300]
            else:
                try:
                    _, got, host, dev, again = _run_xlair(folder / rec["xlair"], target, ins)
                    r.update(xlair_numpy_s=host, xlair_device_s=dev)
                    bad, found = _problems(section, base, ins, got, again, want)
                    r.update(found)
                    r["status"] = _status(bad)
                except Exception as e:  # noqa: BLE001
                    r["status"] = f"failed: {type(e).__name__}: {str(e)[:400]}"
            print(f"{name}: {r['status'][:100]}" + (f" {r['xlair_device_s'] * 1e3:.3f} ms against "
                  f"{r['default_device_s'] * 1e3:.3f} ms" if "xlair_device_s" in r else ""), flush=True)
            if save:
                save(results)

    # (linear algebra last: a run cut short by its device time has the workloads, the suite and
    # the forms; the small 6x6 linear-algebra checks can run again with --only)
    for section in ("workloads", "programs", "forms", "linalg"):
        if section == "forms":
            run_forms()
            continue
        for name, rec in manifest.get(section, {}).items():
            if only and name not in only:
                continue
            r: dict = {"doc": rec.get("doc", "")}
            results[section][name] = r
            if "xlair" not in rec:
                r["status"] = "not compiled: " + rec.get("xlair_error", "")[:300]
                print(f"{name}: {r['status'][:100]}", flush=True)
                continue
            if section != "workloads":
                ins = list(np.load(folder / f"{name}.in.npz").values())
                want = list(np.load(folder / f"{name}.want.npz").values())
            else:
                ins, want = _inputs([(tuple(s), d) for s, d in rec["specs"]], rec["seed"]), None
            try:
                cold, got, host, dev, again = _run_xlair(folder / rec["xlair"], target, ins)
                r.update(cold_s=cold, xlair_numpy_s=host, xlair_device_s=dev)
            except Exception as e:  # noqa: BLE001  (IREE's runtime errors: the finding itself)
                r["status"] = f"failed: {type(e).__name__}: {str(e)[:400]}"
                print(f"{name}: {r['status'][:160]}", flush=True)
                continue
            if "jax" in rec:
                try:
                    jh, jd, jout = _run_jax(folder / rec["jax"], ins, target)
                    r.update(jax_numpy_s=jh, jax_device_s=jd)
                    if section == "workloads":
                        want = jout
                except Exception as e:  # noqa: BLE001
                    r["jax_error"] = f"{type(e).__name__}: {str(e)[:300]}"
            bad, found = _problems(section, rec, ins, got, again, want)
            r.update(found)
            r["status"] = _status(bad)
            if name in bases:
                checked[name] = (section, rec, ins, want)
            if vulkan and rec.get("vulkan"):
                try:
                    vcold, vgot, vhost, vdev, vagain = _run_xlair(folder / rec["vulkan"], "vulkan", ins)
                    vbad, _ = _problems(section, rec, ins, vgot, vagain, want)
                    r.update(vulkan_device_s=vdev, vulkan_status=_status(vbad)[:200])
                except Exception as e:  # noqa: BLE001
                    r["vulkan_status"] = f"failed: {type(e).__name__}: {str(e)[:200]}"
            print(f"{name}: {r['status'][:100]} xlair {dev * 1e3:.3f} ms"
                  + (f" / XLA:GPU {r['jax_device_s'] * 1e3:.3f} ms" if "jax_device_s" in r else ""), flush=True)
            if save:
                save(results)
    return results


def _geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return float(np.exp(np.mean(np.log(xs)))) if xs else float("nan")


def report(results: dict) -> str:
    info = results["info"]
    lines = ["# xlair on an NVIDIA GPU against XLA:GPU", "",
             "Written by `bench/bench_gpu.py run` (`make bench-gpu`) from artifacts compiled by "
             "`bench/bench_gpu.py compile` (`make bench-gpu-artifacts`); not edited by hand.", "",
             f"- GPU: {info.get('gpu')}",
             f"- xlair {info.get('xlair_commit')}, IREE compiler {info.get('iree_compiler')}, IREE runtime "
             f"{info.get('iree_runtime')}, Python {info.get('python')}; jax {info.get('jax')} exported the "
             f"programs, jax {info.get('jax_here')} ran them (XLA:GPU)",
             f"- compiled on: {info.get('compiled_on')}", "",
             "Times are medians in ms; ratios are xlair / XLA:GPU. Device-resident: arguments already on "
             "the GPU, results left there; numpy: numpy arrays in, numpy arrays out.", ""]
    for section, title in (("programs", "The real-program suite"),
                           ("linalg", "Linear algebra (docs/linalg.md; vectors compared up to sign or phase, "
                                      "eigenvalues in any order, Schur forms by Z T Z^H = A, Z^H Z = I)"),
                           ("workloads", "GPU-sized workloads")):
        rows = results.get(section, {})
        ok = [r for r in rows.values() if r.get("status") == "ok"]
        dev = [r["xlair_device_s"] / r["jax_device_s"] for r in ok if "jax_device_s" in r]
        host = [r["xlair_numpy_s"] / r["jax_numpy_s"] for r in ok if "jax_numpy_s" in r]
        lines += [f"## {title}", "",
                  f"{len(ok)} of {len(rows)} run and match; device-resident geometric mean "
                  f"{_geomean(dev):.2f}x XLA:GPU (max {max(dev, default=float('nan')):.2f}x), numpy in and out "
                  f"{_geomean(host):.2f}x.", "",
                  "| program | status | xlair device | XLA:GPU device | ratio | xlair numpy | XLA:GPU numpy | ratio | cold load |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for name, r in rows.items():
            def ms(k):
                return f"{r[k] * 1e3:.3f}" if k in r else "-"

            def ratio(a, b):
                return f"{r[a] / r[b]:.2f}" if a in r and b in r else "-"
            lines.append(f"| {name} | {r.get('status', '')[:80]} | {ms('xlair_device_s')} | {ms('jax_device_s')} | "
                         f"{ratio('xlair_device_s', 'jax_device_s')} | {ms('xlair_numpy_s')} | {ms('jax_numpy_s')} | "
                         f"{ratio('xlair_numpy_s', 'jax_numpy_s')} | {ms('cold_s')} |")
        vk = {n: r for n, r in rows.items() if "vulkan_status" in r}
        if vk:
            lines += ["", "Vulkan on the same GPU:", "", "| program | status | xlair Vulkan device | xlair CUDA device |",
                      "|---|---|---|---|"]
            lines += [f"| {n} | {r['vulkan_status']} | {r.get('vulkan_device_s', 0) * 1e3:.3f} | "
                      f"{r.get('xlair_device_s', 0) * 1e3:.3f} |" for n, r in vk.items()]
        lines.append("")
    forms = results.get("forms", {})
    if forms:
        lines += ["## Forms compared", "",
                  "Other forms of some programs and workloads (bench_gpu.FORMS), timed against the default "
                  "form in the same run; device-resident, ms.", "",
                  "| form | what it decides | status | default form | this form | this / default |",
                  "|---|---|---|---|---|---|"]
        for name, r in forms.items():
            this = r.get("xlair_device_s")
            lines.append(f"| {name} | {r['question']} | {r['status'][:80]} | {r['default_device_s'] * 1e3:.3f} | "
                         + (f"{this * 1e3:.3f} | {this / r['default_device_s']:.2f} |" if this else "- | - |"))
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="step", required=True)
    c = sub.add_parser("compile", help="write the artifacts, inputs, references and wheels")
    c.add_argument("--out", type=pathlib.Path, default=DEFAULT_DIR)
    c.add_argument("--target", default="cuda")
    c.add_argument("--arch", default=None, help="the GPU chip (default: the target's, sm_80 for CUDA)")
    c.add_argument("--only", nargs="*", help="these programs or workloads only")
    c.add_argument("--no-vulkan", action="store_true", help="no Vulkan artifacts of the Vulkan subset")
    c.add_argument("--no-wheels", action="store_true", help="do not write wheels/ (a run where xlair is installed)")
    r = sub.add_parser("run", help="check and time them on this machine's GPU")
    r.add_argument("--dir", type=pathlib.Path, default=DEFAULT_DIR)
    r.add_argument("--only", nargs="*")
    r.add_argument("--vulkan", action="store_true",
                   help="also run the Vulkan subset (with the carried Vulkan loader where this machine has none)")
    r.add_argument("-o", "--output", type=pathlib.Path, default=None,
                   help="the report (default: RESULTS-gpu.md in $OUT, else in the folder)")
    a = ap.parse_args(argv)
    if a.step == "compile":
        compile_step(a.out, a.target, a.arch, set(a.only) if a.only else None, not a.no_vulkan, not a.no_wheels)
        return 0
    if a.vulkan and argv is None:
        env = _vulkan_env(a.dir)
        if env is not None:         # the same step again, in the environment with the Vulkan loader
            print("run: again with the carried Vulkan loader: LD_LIBRARY_PATH="
                  f"{env.get('LD_LIBRARY_PATH', '')} VK_DRIVER_FILES={env.get('VK_DRIVER_FILES', '')}", flush=True)
            os.execve(sys.executable, [sys.executable, *sys.argv], env)
    dest = pathlib.Path(os.environ["OUT"]) if os.environ.get("OUT") else a.dir

    def save(results):
        (dest / "results.json").write_text(json.dumps(results, indent=1))
        text = report(results)
        (a.output or dest / "RESULTS-gpu.md").write_text(text)
        return text
    print(save(run_step(a.dir, set(a.only) if a.only else None, a.vulkan, save)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

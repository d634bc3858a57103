"""bench/bench_gpu.py's two steps (compile here, run there), run both on the CPU for two programs
of the real-program suite, so that the script a GPU session runs is known to work before its
device time is spent: the artifacts and the exported programs are written, loaded, checked
against jax.jit's results and timed, and the report names every program with its status."""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "bench_gpu.py"


def test_compile_then_run_on_the_cpu(tmp_path):
    folder = tmp_path / "gpu-bench"
    names = ["mlp_forward", "random_sampling"]        # (flax parameters; typed PRNG keys)
    c = subprocess.run([sys.executable, str(SCRIPT), "compile", "--out", str(folder), "--target", "cpu",
                        "--only", *names, "linalg_eigh", "--no-wheels", "--no-vulkan"],
                       capture_output=True, text=True, timeout=600)
    assert c.returncode == 0, c.stderr[-3000:]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert sorted(manifest["programs"]) == names and manifest["target"] == "cpu"
    for name in names:
        rec = manifest["programs"][name]
        assert rec.get("xlair") == f"{name}.vmfb" and rec.get("jax") == f"{name}.jax", rec
    r = subprocess.run([sys.executable, str(SCRIPT), "run", "--dir", str(folder), "-o", str(tmp_path / "r.md")],
                       capture_output=True, text=True, timeout=600, env={**os.environ, "OUT": ""})
    assert r.returncode == 0, r.stderr[-3000:]
    results = json.loads((folder / "results.json").read_text())
    for name in names:
        got = results["programs"][name]
        assert got["status"] == "ok", got
        assert got["xlair_device_s"] > 0 and got["jax_device_s"] > 0 and got["cold_s"] > 0, got
    assert results["linalg"]["linalg_eigh"]["status"] == "ok", results["linalg"]
    report = (tmp_path / "r.md").read_text()
    assert "2 of 2 run and match" in report and all(f"| {n} | ok |" in report for n in names)


def _bench_gpu():
    """bench/bench_gpu.py as a module, with bench/harness.py as its `harness` (the conformance
    tests' own harness module may be imported already in this process)."""
    saved = sys.modules.pop("harness", None)
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import bench_gpu
    finally:
        sys.path.remove(str(ROOT / "bench"))
        sys.modules.pop("harness", None)
        if saved is not None:
            sys.modules["harness"] = saved
    return bench_gpu


def test_eig_results_compared_in_lapacks_order_up_to_phase():
    """The run step's comparison of eig (ALIGN): numpy's eigendecomposition against the same one
    reordered with each vector turned by a phase matches; with one vector changed it does not."""
    from types import SimpleNamespace
    sys.path[:0] = [str(ROOT / "tests" / "models")]
    from model_compare import mismatches
    bg = _bench_gpu()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 5, 5))
    w, v = np.linalg.eig(a)
    perm = np.array([[3, 0, 4, 1, 2], [1, 2, 0, 4, 3]])
    phase = np.exp(1j * rng.uniform(0, 2 * np.pi, (2, 1, 5)))
    got = [np.take_along_axis(w, perm, -1), np.take_along_axis(v, perm[:, None, :], -1) * phase]
    rec = {"align": bg.ALIGN["eig"]}
    close = SimpleNamespace(rtol=1e-6, atol=1e-9)
    assert mismatches(close, *bg._comparable(rec, [a], got, [w, v])) == []
    got[1][0, :, 2] = got[1][0, :, 2][::-1]
    assert mismatches(close, *bg._comparable(rec, [a], got, [w, v])) != []


def test_schur_forms_compared_by_their_definition():
    """Two real Schur forms of one matrix (scipy's, and the same with its vectors' signs flipped)
    compare equal; a T with an entry changed does not."""
    from types import SimpleNamespace
    import scipy.linalg
    sys.path[:0] = [str(ROOT / "tests" / "models")]
    from model_compare import mismatches
    bg = _bench_gpu()
    a = np.random.default_rng(1).standard_normal((6, 6))
    t, z = scipy.linalg.schur(a)
    d = np.diag([1, -1, 1, 1, -1, -1.0])
    rec = {"align": bg.ALIGN["schur"]}
    close = SimpleNamespace(rtol=1e-6, atol=1e-9)
    assert mismatches(close, *bg._comparable(rec, [a], [d @ t @ d, z @ d], [t, z])) == []
    t2 = t.copy()
    t2[0, 3] += 0.1
    assert mismatches(close, *bg._comparable(rec, [a], [t2, z], [t, z])) != []


def test_forms_compiled_and_timed_against_the_default(tmp_path, monkeypatch):
    """A form of FORMS (here: mlp_forward's products as three BF16 products, on the CPU) is
    compiled beside its program with the description's field changed (a different artifact),
    checked against the program's jax.jit results and timed with it; a form whose program was
    not compiled is left out; the report has the comparison."""
    bg = _bench_gpu()
    monkeypatch.setattr(bg, "FORMS", {
        "mlp_forward@products=bf16x3": bg.Form("mlp_forward", "BF16 products on the CPU",
                                               fields={"f32_products": "bf16x3"}),
        "resnet_block_eval@loops=host": bg.Form("resnet_block_eval", "not compiled in this run",
                                                keywords={"device_loops": False})})
    folder = tmp_path / "gpu-bench"
    bg.compile_step(folder, "cpu", None, {"mlp_forward"}, vulkan=False, wheels=False)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert list(manifest["forms"]) == ["mlp_forward@products=bf16x3"], manifest["forms"]
    form = manifest["forms"]["mlp_forward@products=bf16x3"]
    assert form["changes"] == {"f32_products": "bf16x3"}
    assert (folder / form["xlair"]).read_bytes() != (folder / "mlp_forward.vmfb").read_bytes()
    saved = []
    results = bg.run_step(folder, None, False, save=lambda r: saved.append(json.dumps(r)))
    r = results["forms"]["mlp_forward@products=bf16x3"]
    assert r["status"] == "ok" and r["xlair_device_s"] > 0, r
    assert r["default_device_s"] == results["programs"]["mlp_forward"]["xlair_device_s"]
    assert len(saved) == 2 and "mlp_forward@products=bf16x3" in saved[-1]
    text = bg.report(results)
    assert "## Forms compared" in text and "| mlp_forward@products=bf16x3 | BF16 products on the CPU | ok |" in text


def _ar(members: dict) -> bytes:
    """An ar archive (a Debian package's outer format) of the given members."""
    out = b"!<arch>\n"
    for name, data in members.items():
        out += f"{name + '/':<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(data):<10}`\n".encode() + data
        out += b"\n" if len(data) % 2 else b""
    return out


def test_vulkan_loader_unpacked_from_carried_packages(tmp_path):
    """The run step's Vulkan environment (_vulkan_env): on a machine without a Vulkan loader the
    carried packages are unpacked without dpkg (an ar archive around data.tar.xz) and put on
    LD_LIBRARY_PATH; where the machine has a loader and an ICD is named, nothing changes; the
    mark stops the step from starting itself again."""
    import io
    import tarfile
    bg = _bench_gpu()
    lib = b"\x7fELF not really"
    tar = io.BytesIO()
    with tarfile.open(fileobj=tar, mode="w:xz") as t:
        info = tarfile.TarInfo("./usr/lib/x86_64-linux-gnu/libvulkan.so.1.3.239")
        info.size = len(lib)
        t.addfile(info, io.BytesIO(lib))
        link = tarfile.TarInfo("./usr/lib/x86_64-linux-gnu/libvulkan.so.1")
        link.type, link.linkname = tarfile.SYMTYPE, "libvulkan.so.1.3.239"
        t.addfile(link)
    folder = tmp_path / "gpu-bench"
    (folder / "debs").mkdir(parents=True)
    (folder / "debs" / "libvulkan1_1.3.239.0-1_amd64.deb").write_bytes(
        _ar({"debian-binary": b"2.0\n", "control.tar.xz": b"x", "data.tar.xz": tar.getvalue()}))
    env = bg._vulkan_env(folder, {"TMPDIR": str(tmp_path), "VK_DRIVER_FILES": "/x/nvidia_icd.json"}, has_loader=False)
    libdir = tmp_path / "xlair-vulkan-loader" / "usr" / "lib" / "x86_64-linux-gnu"
    assert env["LD_LIBRARY_PATH"].split(":")[0] == str(libdir) and env[bg.VULKAN_ENV_MARK] == "1"
    assert (libdir / "libvulkan.so.1").read_bytes() == lib
    assert bg._vulkan_env(folder, {"TMPDIR": str(tmp_path), "VK_DRIVER_FILES": "/x"}, has_loader=True) is None
    assert bg._vulkan_env(folder, {**env}, has_loader=False) is None
    bad = folder / "debs" / "zz_not_a_package.deb"
    bad.write_bytes(b"PK\x03\x04")
    import pytest
    with pytest.raises(ValueError, match="not a Debian package"):
        bg._unpack_deb(bad, tmp_path / "u")

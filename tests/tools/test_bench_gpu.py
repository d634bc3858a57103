"""bench/bench_gpu.py's two steps (compile here, run there), run both on the CPU for two programs
of the real-program suite, so that the script a GPU session runs is known to work before its
device time is spent: the artifacts and the exported programs are written, loaded, checked
against jax.jit's results and timed, and the report names every program with its status."""
import json
import os
import pathlib
import subprocess
import sys

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

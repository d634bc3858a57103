"""Replicas as MPI ranks: `mpirun --oversubscribe --allow-run-as-root -n 2` and `-n 4` run
tests/e2e/mpi_program.py (the collectives' spec examples on each rank, checked against
hand-derived values, and a fault on rank 1 that every rank must report), and the README's
data-parallel training step (examples/data_parallel.py)."""
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MPIRUN = shutil.which("mpirun")
pytestmark = pytest.mark.skipif(MPIRUN is None or importlib.util.find_spec("mpi4py") is None,
                                reason="needs OpenMPI's mpirun and mpi4py (make system-deps; pip install mpi4py)")


def _mpirun(n, script, timeout=400):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests"), env.get("PYTHONPATH", "")])
    r = subprocess.run([MPIRUN, "--oversubscribe", "--allow-run-as-root", "-n", str(n), sys.executable, str(script)],
                       capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
    return r


@pytest.mark.parametrize("n", [2, 4])
def test_collectives_on_mpi_ranks(n):
    r = _mpirun(n, ROOT / "tests" / "e2e" / "mpi_program.py")
    lines = sorted(ln for ln in r.stdout.splitlines() if ln.startswith("RANK "))
    assert lines == [f"RANK {k} OK" for k in range(n)], (r.stdout[-3000:], r.stderr[-3000:])


def test_data_parallel_example_under_mpirun():
    r = _mpirun(2, ROOT / "examples" / "data_parallel.py")
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("rank ")]
    assert len(lines) == 2 and all(ln.endswith(" ok") for ln in lines), (r.stdout[-3000:], r.stderr[-3000:])


def test_data_parallel_example_in_threads():
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "data_parallel.py")], capture_output=True,
                       text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0 and "2 replicas in threads" in r.stdout and r.stdout.strip().endswith("ok"), \
        (r.stdout, r.stderr[-2000:])

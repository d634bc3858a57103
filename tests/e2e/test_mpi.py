"""Replicas as MPI ranks: `mpirun --oversubscribe --allow-run-as-root -n 2` and `-n 4` run
tests/e2e/mpi_program.py (the collectives' spec examples on each rank, checked against
hand-derived values, a fault on rank 1 that every rank must report, before and after its last
collective, and calls on a kept session), mpi_channels.py (Send/Recv between ranks running
different programs), mpi_exit.py (`-n 3`, a rank that exits early), and the data-parallel
examples."""
import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MPIRUN = shutil.which("mpirun")
pytestmark = pytest.mark.skipif(MPIRUN is None or importlib.util.find_spec("mpi4py") is None,
                                reason="needs OpenMPI's mpirun and mpi4py (make system-deps; pip install mpi4py)")


def _mpirun(n, script, timeout=400, export=None):
    """`mpirun -n n python script`; `export`: variables passed to every rank with `-x NAME=value`
    (as on a cluster, where the ranks do not inherit this process's environment)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests"), env.get("PYTHONPATH", "")])
    xs = [a for k, v in (export or {}).items() for a in ("-x", f"{k}={v}")]
    r = subprocess.run([MPIRUN, "--oversubscribe", "--allow-run-as-root", "-n", str(n), *xs, sys.executable, str(script)],
                       capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
    return r


@pytest.mark.parametrize("n", [2, 4])
def test_collectives_on_mpi_ranks(n):
    r = _mpirun(n, ROOT / "tests" / "e2e" / "mpi_program.py")
    # (mpirun forwards each rank's output; two ranks' lines may run together)
    ok = sorted(int(k) for k in re.findall(r"RANK (\d+) OK", r.stdout))
    assert ok == list(range(n)) and "FAIL" not in r.stdout, (r.stdout[-3000:], r.stderr[-3000:])


def test_send_recv_between_ranks_running_different_programs():
    r = _mpirun(2, ROOT / "tests" / "e2e" / "mpi_channels.py", timeout=120)
    ok = sorted(int(k) for k in re.findall(r"RANK (\d+) OK", r.stdout))
    assert ok == [0, 1] and "FAIL" not in r.stdout, (r.stdout[-3000:], r.stderr[-3000:])


def test_a_rank_that_exits_is_named_by_the_others():
    """mpirun -n 3, rank 2 exits after one call: the next call of ranks 0 and 1 fails with an
    XlaError naming replica 2 (well within the 30 s timeout), and every process ends."""
    r = _mpirun(3, ROOT / "tests" / "e2e" / "mpi_exit.py", timeout=120)
    ok = sorted(int(k) for k in re.findall(r"RANK (\d+) OK", r.stdout))
    assert ok == [0, 1, 2] and "FAIL" not in r.stdout, (r.stdout[-3000:], r.stderr[-3000:])


def test_data_parallel_example_under_mpirun():
    r = _mpirun(2, ROOT / "examples" / "data_parallel.py")
    ranks = sorted(int(k) for k in re.findall(r"rank (\d+) of 2: w = .*? ok", r.stdout))
    assert ranks == [0, 1] and "MISMATCH" not in r.stdout, (r.stdout[-3000:], r.stderr[-3000:])


def test_flax_data_parallel_example_under_mpirun(tmp_path):
    """examples/data_parallel_mpi.py: the flax MLP with optax Adam, gradients averaged by an
    AllReduce over 2 ranks, gives the loss curve of one process on the whole batch.  The ranks
    share a keyed compile cache as README's cluster example has them: a team's directory
    (setgid, group-writable), a key file readable by owner and group, both passed with -x;
    every artifact the ranks keep there ends in its MAC, and no entry is refused."""
    cache, key = tmp_path / "shared-cache", tmp_path / "cache-key"
    cache.mkdir()
    os.chmod(cache, 0o2775)
    key.write_text(os.urandom(24).hex())
    os.chmod(key, 0o640)
    r = _mpirun(2, ROOT / "examples" / "data_parallel_mpi.py", timeout=600,
                export={"XLAIR_CACHE_DIR": cache, "XLAIR_CACHE_KEY_FILE": key})
    ranks = sorted(int(k) for k in re.findall(r"rank (\d+) of 2: final loss .*? ok", r.stdout))
    assert ranks == [0, 1] and "MISMATCH" not in r.stdout, (r.stdout[-3000:], r.stderr[-3000:])
    artifacts = list(cache.glob("*.vmfb"))
    assert artifacts and all(p.read_bytes().endswith(b"XLAIRMAC") for p in artifacts)
    assert list(cache.glob("cpus/*.json")) and "UntrustedCacheWarning" not in r.stderr, r.stderr[-3000:]


def test_data_parallel_example_in_threads():
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "data_parallel.py")], capture_output=True,
                       text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0 and "2 replicas in threads" in r.stdout and r.stdout.strip().endswith("ok"), \
        (r.stdout, r.stderr[-2000:])

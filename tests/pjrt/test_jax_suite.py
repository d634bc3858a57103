"""A quick sample of JAX's own tests on the plugin (tests/jax_suite/run.py, docs/jax-tests.md):
the first five tests of fft_test.py, through the runner, into a temporary report.  Failures
are allowed (the suite is a yardstick); a crash or a hang is not.  Skipped where JAX's test
files ($XLAIR_JAX_TESTS_DIR, default /work/shared/conformance/jax/tests) are absent."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("jax")
pytest.importorskip("pytest_timeout", reason="pytest-timeout (the `test` extra) is not installed")
RUNNER = pathlib.Path(__file__).resolve().parent.parent / "jax_suite" / "run.py"
TESTS_DIR = pathlib.Path(os.environ.get("XLAIR_JAX_TESTS_DIR", "/work/shared/conformance/jax/tests"))


@pytest.mark.skipif(not (TESTS_DIR / "fft_test.py").is_file(),
                    reason=f"JAX's test files are not here: {TESTS_DIR} (set XLAIR_JAX_TESTS_DIR)")
def test_jax_suite_sample(tmp_path):
    md, js = tmp_path / "jax-tests.md", tmp_path / "jax-tests.json"
    p = subprocess.run([sys.executable, str(RUNNER), "--files", "fft_test", "--sample", "5",
                        "--per-test-timeout", "60", "--file-timeout", "240", "-o", str(md), "--json", str(js),
                        "--logs", str(tmp_path / "logs")],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    (rec,) = json.loads(js.read_text())
    assert rec["crashed"] is None and rec["hung"] == 0, rec
    assert rec["passed"] + rec["failed"] + rec["errors"] + rec["skipped"] + len(rec["crashes"]) == 5, rec
    row = next(s for s in md.read_text().splitlines() if s.startswith("| fft_test |"))
    assert [c.strip() for c in row.split("|")[2:4]] == ["5", str(rec["passed"])], row


@pytest.mark.skipif(not (TESTS_DIR / "fft_test.py").is_file(),
                    reason=f"JAX's test files are not here: {TESTS_DIR} (set XLAIR_JAX_TESTS_DIR)")
def test_destroy_during_a_failed_compile_does_not_abort():
    """fft_test's testIrfftTranspose: a compile the plugin refuses, then JAX destroys buffers
    while its exception unwinds; the plugin's PJRT_Buffer_Destroy returned that exception as an
    error and jaxlib aborted the process (SIGABRT).  Now the test may fail, the process lives."""
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", os.devnull,
                        "--rootdir", str(TESTS_DIR), str(TESTS_DIR / "fft_test.py"), "-k", "testIrfftTranspose"],
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "JAX_PLATFORMS": "xlair", "JAX_NUM_GENERATED_CASES": "1"})
    assert p.returncode in (0, 1), (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    assert "1 passed" in p.stdout or "1 failed" in p.stdout, p.stdout[-2000:]


@pytest.mark.skipif(not (TESTS_DIR / "fft_test.py").is_file(),
                    reason=f"JAX's test files are not here: {TESTS_DIR} (set XLAIR_JAX_TESTS_DIR)")
def test_reuse_reports_an_earlier_runs_files(tmp_path):
    """--reuse: the files of an earlier run's JSON not run now are reported as it found them,
    each file's run named; the pass rate counts both."""
    earlier = [{"file": "nn_test", "passed": 7, "failed": 1, "errors": 0, "skipped": 2, "hung": 0, "crashed": None,
                "crashes": [], "seconds": 1.0, "causes": {"AssertionError:": 1}, "skips": {"why": 2},
                "run": "2026-01-02 03:04 UTC"}]
    (tmp_path / "earlier.json").write_text(json.dumps(earlier))
    md, js = tmp_path / "jax-tests.md", tmp_path / "jax-tests.json"
    p = subprocess.run([sys.executable, str(RUNNER), "--files", "fft_test", "--sample", "2", "--reuse",
                        str(tmp_path / "earlier.json"), "-o", str(md), "--json", str(js),
                        "--logs", str(tmp_path / "logs")], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    text = md.read_text()
    assert "| nn_test | 10 | 7 | 1 | 2 |" in text and "| fft_test | 2 |" in text, text
    assert "2026-01-02 03:04 UTC (nn_test)" in text and "(fft_test)" in text, text
    recs = {r["file"]: r for r in json.loads(js.read_text())}
    passed = recs["nn_test"]["passed"] + recs["fft_test"]["passed"]
    assert f"= {passed} / {8 + 2 - recs['fft_test']['skipped']})" in text, text

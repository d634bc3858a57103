"""Runs the lit + FileCheck suite in tests/filecheck (lowering and verifier tests)."""
import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).parent / "filecheck"


def test_lit_suite():
    lit = pathlib.Path(sys.executable).parent / "lit"
    r = subprocess.run([str(lit), "-q", "-j", "2", str(HERE)], capture_output=True, text=True,
                       env=dict(os.environ), timeout=900)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]

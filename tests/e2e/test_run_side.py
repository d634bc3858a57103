"""The run side without the compiler (DESIGN.md rule 9; README "Deploying"): artifacts compiled
here are loaded and called in a Python that has iree-base-runtime and not iree-base-compiler.

Two such Pythons: this one with `iree.compiler` made unimportable (a meta-path finder that
refuses it), and a new virtual environment holding only the files of the run side's
distributions (numpy, ml_dtypes, scipy, iree-base-runtime and xlair itself, linked from this
environment by their RECORD files: no iree-base-compiler).  In each, one script loads the
artifacts, calls them (numpy in and out, `xla.device_put` Arrays, two replicas with an
AllReduce, `xlair-run`), and checks that compiling raises an XlaError naming the missing
package; the parent checks the values against numpy.
"""
from __future__ import annotations

import importlib.metadata
import json
import pathlib
import subprocess
import sys
import sysconfig
import textwrap
import venv

import numpy as np
import pytest

import xlair as xla
from xlair import ops as O
from xlair.dialect.types import F32, S32, Shape
from xlair_testing import scalar_computation

#: refuses every import of iree.compiler (what a machine without iree-base-compiler does)
BLOCKER = textwrap.dedent("""
    import importlib.abc, sys
    class _NoCompiler(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name == "iree.compiler" or name.startswith("iree.compiler."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    sys.meta_path.insert(0, _NoCompiler())
""")

#: the deployed program: loads and calls the artifacts of `folder`, prints what it got as JSON
SCRIPT = textwrap.dedent("""
    import contextlib, importlib.util, io, json, sys
    import numpy as np
    folder = sys.argv[1]
    try:
        out = {"compiler_importable": importlib.util.find_spec("iree.compiler") is not None}
    except ImportError:
        out = {"compiler_importable": False}
    import xlair as xla
    axpy = xla.load(f"{folder}/axpy.vmfb", target="cpu")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    s, sq = axpy(np.float32(2), x, np.ones((2, 3), np.float32))
    out["axpy"] = [s.tolist(), sq.tolist()]
    d = xla.device_put(x)                                   # an xla.Array in, Arrays out
    r = axpy(np.float32(-1), d, d)
    out["array_types"] = [type(v).__name__ for v in r]
    out["axpy_array"] = [np.asarray(v).tolist() for v in r]
    ar = xla.load(f"{folder}/all_reduce.vmfb", target="cpu")
    out["all_reduce"] = [np.asarray(v).tolist() for v in
                         ar.run_replicated([[np.array([1, 2], np.int32)], [np.array([10, 20], np.int32)]])]
    try:
        xla.load(f"{folder}/all_reduce_custom.vmfb", target="cpu")
        out["custom_reducer"] = "loaded"
    except xla.XlaError as e:
        out["custom_reducer"] = str(e)
    from xlair.tools.run import main
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main([f"{folder}/axpy.vmfb", "3", "[[1, 2, 3], [4, 5, 6]]", "[[0, 0, 0], [1, 1, 1]]"])
    out["xlair_run"] = [rc, buf.getvalue()]
    try:
        b = xla.Builder("f")
        xla.ops.neg(b.parameter(0, xla.Shape(xla.F32, ()), "p"))
        xla.compile(b.build())
        out["compile"] = "compiled"
    except xla.XlaError as e:
        out["compile"] = str(e)
    out["modules"] = sorted(m for m in sys.modules if m.startswith("iree.compiler"))
    print("RESULT " + json.dumps(out))
""")


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> pathlib.Path:
    folder = tmp_path_factory.mktemp("deploy")
    b = xla.Builder("axpy")
    a = b.parameter(0, Shape(F32, ()), "a")
    x = b.parameter(1, Shape(F32, (2, 3)), "x")
    y = b.parameter(2, Shape(F32, (2, 3)), "y")
    O.tuple(b, [O.add(O.mul(a, x, broadcast_dimensions=()), y), O.mul(x, x)])
    xla.compile(b.build(), target="cpu").save(folder / "axpy.vmfb")
    for name, reducer in (("all_reduce", scalar_computation("add", S32)), ("all_reduce_custom", _twice_plus())):
        b = xla.Builder(name)
        O.all_reduce(b.parameter(0, Shape(S32, (2,)), "x"), reducer)
        xla.compile(b.build(), target="cpu", replicas=2).save(folder / f"{name}.vmfb")
    return folder


def _twice_plus() -> xla.Computation:
    """f(a, b) = 2a + b: not a reducer numpy does for the host (the host interprets it)."""
    b = xla.Builder("f")
    p, q = b.parameter(0, Shape(S32, ())), b.parameter(1, Shape(S32, ()))
    O.add(O.mul(p, O.constant(b, np.int32(2))), q)
    return b.build()


def _run(python: str, folder: pathlib.Path, prelude: str = "") -> dict:
    proc = subprocess.run([python, "-c", prelude + SCRIPT, str(folder)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert line, proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads(line[-1][len("RESULT "):])


def _check(got: dict) -> None:
    assert not got["compiler_importable"]
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(got["axpy"][0], 2 * x + 1)
    np.testing.assert_array_equal(got["axpy"][1], x * x)
    assert got["array_types"] == ["Array", "Array"]
    np.testing.assert_array_equal(got["axpy_array"][0], np.zeros((2, 3)))       # -x + x
    np.testing.assert_array_equal(got["axpy_array"][1], x * x)
    assert got["all_reduce"] == [[11, 22], [11, 22]]
    assert "iree-base-compiler" in got["custom_reducer"] and "all_reduce" in got["custom_reducer"]
    rc, printed = got["xlair_run"]
    assert rc == 0 and "[ 3.,  6.,  9.]" in printed and "[13., 16., 19.]" in printed, printed
    assert "iree-base-compiler" in got["compile"], got["compile"]
    assert got["modules"] == []


def test_artifacts_run_where_iree_compiler_cannot_be_imported(artifacts):
    _check(_run(sys.executable, artifacts, BLOCKER))


#: the distributions a deployment installs besides xlair (README "Deploying"), by pip's names
RUN_SIDE_DISTRIBUTIONS = ("numpy", "ml_dtypes", "scipy", "iree-base-runtime")


def _runtime_only_venv(where: pathlib.Path) -> str:
    """A virtual environment whose site-packages holds the files of RUN_SIDE_DISTRIBUTIONS
    (linked from this one, as their RECORD lists them), and xlair as this one has it installed,
    and nothing of iree-base-compiler."""
    venv.EnvBuilder(with_pip=False, symlinks=True).create(where)
    python = where / "bin" / "python"
    site = pathlib.Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                       capture_output=True, text=True, check=True).stdout.strip())
    here = pathlib.Path(sysconfig.get_paths()["purelib"])
    links = {p.name: p for p in here.iterdir() if p.name == "xlair" or
             (p.name.startswith("__editable__") and "xlair" in p.name)}   # (pip install -e: a finder)
    assert links, f"xlair is not installed in {here}"
    for name in RUN_SIDE_DISTRIBUTIONS:
        dist = importlib.metadata.distribution(name)
        for f in dist.files or ():
            parts = f.parts
            if parts[0] == ".." or parts[0].endswith(".dist-info") or parts[0] == "__pycache__":
                continue
            # a shared namespace (iree/) is made here; the packages inside it are linked whole
            depth = 2 if parts[0] == "iree" and len(parts) > 2 else 1
            links["/".join(parts[:depth])] = pathlib.Path(dist.locate_file(pathlib.Path(*parts[:depth])))
    for rel, src in links.items():
        dst = site / rel
        if not dst.exists() and src.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.symlink_to(src)
    return str(python)


def test_artifacts_run_in_a_venv_without_iree_base_compiler(artifacts, tmp_path):
    python = _runtime_only_venv(tmp_path / "venv")
    assert not list((tmp_path / "venv").glob("lib/python*/site-packages/iree/compiler"))
    assert list((tmp_path / "venv").glob("lib/python*/site-packages/iree/runtime"))
    _check(_run(python, artifacts))

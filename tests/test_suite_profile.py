"""The test suite's own machinery (tests/conftest.py, tests/xlair_testing.py): which instances
the quick profile's `sample` marks keep, and a module fixture's expensive part computed once
for a run whose tests xdist splits between its workers."""
import pathlib
import subprocess
import sys
import textwrap
import types

from conftest import _sampled_out

HERE = pathlib.Path(__file__).resolve().parent


def _items(**params) -> list:
    """Stand-ins for the collected instances of one test: the cartesian product of params,
    the last parameter varying fastest (as stacked parametrize marks give them)."""
    import itertools
    names = list(params)
    return [types.SimpleNamespace(callspec=types.SimpleNamespace(params=dict(zip(names, combo))),
                                  key=combo)
            for combo in itertools.product(*params.values())]


def _kept(group, **mark):
    out = {id(i) for i in _sampled_out(group, types.SimpleNamespace(kwargs=mark))}
    return [i.key for i in group if id(i) not in out]


def test_sample_every_keeps_every_nth_in_collection_order():
    group = _items(name=list("abcdefghij"), gpu=["cuda", "rocm"])
    assert _kept(group, every=7) == [("a", "cuda"), ("d", "rocm"), ("h", "cuda")]    # items 0, 7, 14
    assert len(_kept(group, every=1)) == 20


def test_sample_per_keeps_one_per_value_taking_turns():
    """One instance per name; the k-th name runs its k-th (cyclically) combination of the rest."""
    group = _items(name=["x", "y", "z"], shape=[1, 2], dt=["f32", "f64"])
    assert _kept(group, per="name") == [("x", 1, "f32"), ("y", 1, "f64"), ("z", 2, "f32")]


def test_once_per_run_shares_a_module_fixture_between_xdist_workers(tmp_path):
    """Four tests of one module fixture on two workers (xdist's load scheduling gives each
    worker some): the fixture's body runs once, and every test reads its value."""
    count, workers = tmp_path / "count", tmp_path / "workers"
    (tmp_path / "test_shared.py").write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        import pytest
        from xlair_testing import once_per_run

        def compute():
            with open({str(count)!r}, "a") as f:
                f.write("ran\\n")
            return {{"value": 42}}

        @pytest.fixture(scope="module")
        def shared(tmp_path_factory, worker_id):
            return once_per_run(tmp_path_factory, worker_id, "k", compute)

        @pytest.mark.parametrize("i", range(4))
        def test_reads(shared, i, worker_id):
            assert shared == {{"value": 42}}
            with open({str(workers)!r}, "a") as f:
                f.write(worker_id + "\\n")
        """))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "load", "-p", "no:cacheprovider",
                        "--rootdir", str(tmp_path), "-c", "/dev/null", str(tmp_path / "test_shared.py")],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "4 passed" in r.stdout
    assert set(workers.read_text().split()) == {"gw0", "gw1"}      # (both workers held some)
    assert count.read_text() == "ran\n"

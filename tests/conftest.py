"""Test configuration: a compile cache shared by the xdist workers and by every checkout on
this machine, and the record of which ops passed on which target, read by
`xlair.tools.status`.

The cache ($XLAIR_TEST_CACHE_DIR, else ~/.cache/xlair/test-artifacts) keys each artifact by
content (xlair.compile: the program with xlair's source, and what IREE is given): a clean
clone whose lowering gives IREE the same modules as an earlier run reuses their artifacts
instead of compiling again, and anything that changes what IREE is given compiles anew.  It is
kept under CACHE_LIMIT bytes, least recently used first out."""
import json
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
if "XLAIR_CACHE_DIR" not in os.environ:
    from xlair.artifacts import cache_dir
    os.environ["XLAIR_CACHE_DIR"] = os.environ.get("XLAIR_TEST_CACHE_DIR") or str(cache_dir() / "test-artifacts")
CACHE_LIMIT, CACHE_KEEP = 3 << 30, 2 << 30
RESULTS = ROOT / "build" / "test-results"
_results: dict = {}


def pytest_generate_tests(metafunc):
    """Tests with a `target` argument run on every end-to-end target of this machine."""
    if "target" in metafunc.fixturenames:
        from xlair_testing import E2E_TARGETS
        metafunc.parametrize("target", E2E_TARGETS)


def _vulkan_rank(item):
    """Which Vulkan instance of a test represents it: f32 first, then the smallest sizes."""
    tokens = item.callspec.id.split("-")
    sizes = sum(int(t) for t in tokens if t.isdigit())
    return (0 if "f32" in tokens else 1, sizes, item.callspec.id)


def _sampled_out(group: list, mark) -> list:
    """The instances of one test that a `sample` mark leaves to the full profile: with
    `every=N`, all but every N-th (in collection order); with `per="param"`, all but one per
    value of that parameter, the other parameters' combinations taking turns (the k-th value
    runs its k-th combination), so that every value is checked in some combination."""
    per, every = mark.kwargs.get("per"), mark.kwargs.get("every", 1)
    if per:
        by: dict = {}
        for item in group:
            by.setdefault(repr(item.callspec.params[per]), []).append(item)
        keep = {id(g[k % len(g)]) for k, g in enumerate(by.values())}
    else:
        keep = {id(item) for i, item in enumerate(group) if i % every == 0}
    return [item for item in group if id(item) not in keep]


def pytest_collection_modifyitems(config, items):
    """The quick profile (`make test`; `make test-full` sets XLAIR_TEST_FULL=1, see
    xlair_testing.FULL) leaves out the instances marked `full` and those a `sample` mark samples
    out (_sampled_out).  And Vulkan runs on lavapipe here, 30-100x slower than the CPU: each
    end-to-end test runs on Vulkan once there, in its representative instance (_vulkan_rank)."""
    from xlair_testing import FULL
    if FULL:
        return
    drop = [i for i in items if i.get_closest_marker("full")]
    sampled: dict = {}
    vulkan: dict = {}
    for item in items:
        mark = item.get_closest_marker("sample")
        if mark is not None:
            sampled.setdefault((item.path, item.originalname), (mark, []))[1].append(item)
        cs = getattr(item, "callspec", None)
        if cs is not None and cs.params.get("target") == "vulkan":
            vulkan.setdefault((item.path, item.originalname), []).append(item)
    for mark, group in sampled.values():
        drop += _sampled_out(group, mark)
    for group in vulkan.values():
        drop += sorted(group, key=_vulkan_rank)[1:]
    ids = {id(i) for i in drop}
    if ids:
        config.hook.pytest_deselected(items=[i for i in items if id(i) in ids])
        items[:] = [i for i in items if id(i) not in ids]


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem):
    """A test that compiles for a target something IREE cannot do there (xla.compile raises
    TargetLimitation, see xlair.targets.LIMITATIONS) is skipped with that reason."""
    from xlair.targets import TargetLimitation
    try:
        return (yield)
    except TargetLimitation as e:
        pytest.skip(str(e))


@pytest.fixture
def covers(request):
    """A test lists the ops it checks end to end: covers.add("cpu", "xla.add", ...)."""
    class _Covers:
        def __init__(self):
            self.items = []

        def add(self, target, *ops):
            self.items.extend((target, o) for o in ops)
    c = _Covers()
    request.node._covers = c
    return c


@pytest.fixture
def model_result(request):
    """A test of the real-program suite names its program and target: model_result(name, "cpu");
    the outcome goes to build/test-results/models/, read by tests/models/report.py."""
    def record(name, target):
        request.node._model = (name, target)
    return record


_models: dict = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    c, model = getattr(item, "_covers", None), getattr(item, "_model", None)
    state = "pass" if rep.passed else "skip" if rep.skipped else "fail"
    if c is not None and (rep.when == "call" or rep.when == "setup" and rep.failed):
        for target, op in c.items:
            slot = _results.setdefault(op, {}).setdefault(target, {"pass": 0, "fail": 0, "skip": 0})
            slot[state] += 1
    if model is not None and (rep.when == "call" or rep.when == "setup" and not rep.passed):
        _models.setdefault(model[0], {})[model[1]] = "xfail: " + str(rep.wasxfail) if hasattr(rep, "wasxfail") \
            else state


def _write(results: dict, path: pathlib.Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1, sort_keys=True))


def pytest_sessionfinish(session, exitstatus):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    cpu = os.environ.get("XLAIR_CPU")       # make test's second pass, compiled for a portable CPU
    if _results:
        _write(_results, RESULTS / f"{worker}{'-' + cpu if cpu else ''}.json")
    if _models and not cpu:
        _write(_models, RESULTS / "models" / f"{worker}.json")


def pytest_sessionstart(session):
    """The controlling process (not an xdist worker) keeps the shared cache in bounds."""
    if not hasattr(session.config, "workerinput"):
        from xlair.artifacts import prune_cache
        prune_cache(CACHE_LIMIT, CACHE_KEEP)

"""Run JAX's own test files against the xlair PJRT plugin and write docs/jax-tests.md.

    python tests/jax_suite/run.py                        # the fifteen op-set files (make jax-tests)
    python tests/jax_suite/run.py --files nn_test fft_test -o docs/jax-tests.md
    python tests/jax_suite/run.py --all                  # every *_test.py of the folder
    python tests/jax_suite/run.py --files fft_test --sample 5 -o /tmp/r.md   (make test's sample)
    python tests/jax_suite/run.py --files lax_test --reuse earlier.json      (one file again, the
                                                         rest as an earlier run's --json found them)

The test files are JAX's for the pinned version (jax-v0.10.2), read from $XLAIR_JAX_TESTS_DIR
(default /work/shared/conformance/jax/tests, as tests/conformance reads its suites from
/work/shared).  Each file runs in its own `python -m pytest` child process, with
JAX_PLATFORMS=--platform (xlair: the CPU), JAX_NUM_GENERATED_CASES=--cases, JAX_ENABLE_X64 unset, pytest-timeout's
per-test limit (signal method: a test over it fails with "Timeout", counted as hung) and a
wall-clock limit per file (over it, the process group is killed: the file is counted as hung).
A child killed by a signal is counted as crashed; the test it was running is named (from the
`-v` progress lines, which also give the partial results when there is no junit XML).
Results come from `--junitxml`; failures are grouped by the first line of their message with
numbers, shapes and dtypes stripped.  Logs and XML go to build/jax-tests/ (<file>.<attempt>.log).
"""
from __future__ import annotations

import argparse
import collections
import concurrent.futures
import datetime
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from harness import cpu_name  # noqa: E402  (the benchmarks' name of this CPU)
TESTS_DIR = pathlib.Path(os.environ.get("XLAIR_JAX_TESTS_DIR", "/work/shared/conformance/jax/tests"))
OP_SET_FILES = ["lax_test", "lax_vmap_test", "lax_vmap_op_test", "lax_autodiff_test", "lax_control_flow_test",
                "lax_numpy_test", "lax_numpy_operators_test", "lax_numpy_reducers_test",
                "lax_numpy_indexing_test", "lax_numpy_einsum_test", "random_lax_test", "nn_test", "fft_test",
                "linalg_test", "api_test"]
PROGRESS = re.compile(r"^(\S+\.py::\S+)(?: (PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS))?")
DTYPES = r"(?:b?float\d+\w*|u?int\d+|complex\d+|bool_?|bf16|[fiuc]\d+|i1)"


def normalize(msg: str) -> str:
    """The cause of a failure: its message's first non-empty line, with what varies between
    instances of one cause (addresses, numbers, shapes, dtypes, tensor types) stripped."""
    line = next((s.strip() for s in (msg or "").splitlines() if s.strip()), "(no message)")
    line = re.sub(r"0x[0-9a-fA-F]+", "0x…", line)
    line = re.sub(r"tensor<[^>]*>", "tensor<…>", line)
    line = re.sub(r"\b" + DTYPES + r"\b", "DT", line)
    line = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", line)
    line = re.sub(r"[(\[]\s*(N\s*,?\s*)*[)\]]", "(N…)", line)   # shapes
    line = re.sub(r"\s+", " ", line)
    return line[:180]


def select(args) -> list[str]:
    if args.all:
        return sorted(p.stem for p in TESTS_DIR.glob("*_test.py"))
    return [f[:-3] if f.endswith(".py") else f for f in (args.files or OP_SET_FILES)]


def child_env(cases: int, platform: str = "xlair") -> dict:
    env = dict(os.environ)
    env.pop("JAX_ENABLE_X64", None)
    env.update(JAX_PLATFORMS=platform, JAX_NUM_GENERATED_CASES=str(cases), PYTHONDONTWRITEBYTECODE="1")
    return env


def collect(path: pathlib.Path, env: dict, k: int) -> list[str]:
    """The first k node ids of a file (--sample)."""
    p = subprocess.run([sys.executable, "-m", "pytest", str(path), "--collect-only", "-q", "-p", "no:cacheprovider",
                        "-c", os.devnull, "--rootdir", str(TESTS_DIR)], env=env, cwd=TESTS_DIR,
                       capture_output=True, text=True, timeout=300)
    ids = [s for s in p.stdout.splitlines() if "::" in s]
    return [str(TESTS_DIR / i) for i in ids[:k]]


def run_file(name: str, args, out_dir: pathlib.Path) -> dict:
    """One file; after a crash (a signal), the file is run again without the tests that passed,
    were skipped or crashed (at most --restarts times): each crashing test is named."""
    path = TESTS_DIR / f"{name}.py"
    rec = dict(file=name, passed=0, failed=0, skipped=0, errors=0, hung=0, crashed=None, crashes=[],
               seconds=0.0, causes=collections.Counter(), skips=collections.Counter())
    if not path.is_file():
        rec["crashed"] = f"no such file: {path}"
        return rec
    env = child_env(args.cases, args.platform)
    targets = collect(path, env, args.sample) if args.sample else [str(path)]
    deselect: list[str] = []
    t0 = time.monotonic()
    for attempt in range(args.restarts + 1):
        xml, log = out_dir / f"{name}.{attempt}.xml", out_dir / f"{name}.{attempt}.log"
        xml.unlink(missing_ok=True)
        cmd = [sys.executable, "-m", "pytest", *targets, "-p", "no:cacheprovider", "-v", "--tb=short", "-rN",
               "-c", os.devnull, "--rootdir", str(TESTS_DIR), f"--timeout={args.per_test_timeout}",
               f"--junitxml={xml}", *[f"--deselect={d}" for d in deselect]]
        left = args.file_timeout - (time.monotonic() - t0)
        with open(log, "w") as fh:
            proc = subprocess.Popen(cmd, env=env, cwd=TESTS_DIR, stdout=fh, stderr=subprocess.STDOUT,
                                    start_new_session=True)
            try:
                rc = proc.wait(timeout=max(left, 1))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                rc = None
        text = log.read_text(errors="replace")
        # (exit 2 after a collection error, a test file that does not import: its error is in
        # the XML, counted as a failure with its message; not a crash)
        if (rc in (0, 1, 5) or rc == 2 and "during collection" in text) and xml.is_file():
            read_xml(xml, rec)
            break
        # killed, crashed or over the limit: the partial results from the -v progress lines
        last, done = None, []
        for s in text.splitlines():
            m = PROGRESS.match(s)
            if not m:
                continue
            last = m.group(1) if not m.group(2) else None
            st = m.group(2)
            if st in ("PASSED", "XFAIL"):
                rec["passed"] += 1
            elif st in ("FAILED", "XPASS", "ERROR"):
                rec["failed"] += 1
                rec["causes"]["(a failure in a run that crashed later: see its log)"] += 1
            elif st == "SKIPPED":
                rec["skipped"] += 1
            if st:
                done.append(m.group(1))
        what = ("hung: over the file limit" if rc is None else
                f"{signal.Signals(-rc).name}" if rc < 0 else f"exit {rc}")
        rec["crashes"].append(f"{what} in {last.split('::', 1)[1]}" if last else what)
        if rc is None or not last or attempt == args.restarts:
            break
        deselect += [*done, last]
    rec["seconds"] = round(time.monotonic() - t0, 1)
    if rec["crashes"]:
        rec["crashed"] = "; ".join(rec["crashes"])
    return rec


def read_xml(xml: pathlib.Path, rec: dict) -> None:
    for tc in ET.parse(xml).getroot().iter("testcase"):
        kids = {c.tag: c for c in tc}
        bad = kids.get("failure") if "failure" in kids else kids.get("error")
        if bad is not None:
            msg = bad.get("message") or (bad.text or "")
            if "Timeout" in msg and "pytest-timeout" in (bad.text or "") or msg.startswith("Failed: Timeout"):
                rec["hung"] += 1
                continue
            rec["failed" if bad.tag == "failure" else "errors"] += 1
            rec["causes"][normalize(msg)] += 1
        elif "skipped" in kids:
            rec["skipped"] += 1
            rec["skips"][normalize(kids["skipped"].get("message", ""))] += 1
        else:
            rec["passed"] += 1


def _runs(recs: list[dict], started: str) -> str:
    """When the reported files ran: one start, or each start with its files (--reuse)."""
    by = collections.defaultdict(list)
    for r in recs:
        by[r.get("run", started)].append(r["file"])
    if len(by) == 1:
        return next(iter(by))
    return "; ".join(f"{when} ({', '.join(fs)})" for when, fs in sorted(by.items()))


def report(recs: list[dict], args, files: list[str], started: str, top: int) -> str:
    import jax
    # (the whole folder may be joined from several runs: --reuse)
    whole = args.all or set(files) >= {p.stem for p in TESTS_DIR.glob("*_test.py")}
    partial = not whole and set(files) != set(OP_SET_FILES)
    full = not args.sample and (whole or not partial)
    scope = (f"every *_test.py of the folder ({len(files)} files)" if whole else
             f"a sample: the first {args.sample} tests of each file" if args.sample else
             "the fifteen files that exercise the op set" if not partial else
             f"a partial run: {len(files)} of the fifteen op-set files")
    L = [f"# JAX's tests on {args.platform}", "",
         "Generated by `tests/jax_suite/run.py` (" + ("`make jax-tests`" if full and not whole
                                                     else "the whole suite" if full else "not the full `make jax-tests`") + "); do not edit by hand.",
         "",
         f"- **Scope**: {scope}" + ("." if whole else f": {', '.join(files)}."),
         f"- **Run**: {_runs(recs, started)} on {cpu_name()} ({os.cpu_count()} CPUs), jax {jax.__version__}, "
         f"test files from `{TESTS_DIR}`.",
         f"- **Settings**: `JAX_PLATFORMS={args.platform}`, `JAX_NUM_GENERATED_CASES={args.cases}`, `JAX_ENABLE_X64` unset, "
         f"per-test timeout {args.per_test_timeout} s, per-file limit {args.file_timeout} s, jobs {args.jobs}.",
         "- **Counts**: failed = failures and errors; hung = tests over the per-test timeout; crashed = "
         "the tests that killed the file's process (a signal; the rest of the file is then run again "
         f"without them, up to {args.restarts} times) or the file over the per-file limit.", "",
         "| file | tests | passed | failed | skipped | hung | crashed | seconds |",
         "|---|---:|---:|---:|---:|---:|---|---:|"]
    tot = collections.Counter()
    for r in recs:
        n = r["passed"] + r["failed"] + r["errors"] + r["skipped"] + r["hung"] + len(r["crashes"])
        for k in ("passed", "failed", "errors", "skipped", "hung"):
            tot[k] += r[k]
        tot["crashed"] += len(r["crashes"])
        L.append(f"| {r['file']} | {n} | {r['passed']} | {r['failed'] + r['errors']} | {r['skipped']} | "
                 f"{r['hung']} | {r['crashed'] or 'no'} | {r['seconds']} |")
    n = tot["passed"] + tot["failed"] + tot["errors"] + tot["skipped"] + tot["hung"] + tot["crashed"]
    L.append(f"| **total** | {n} | {tot['passed']} | {tot['failed'] + tot['errors']} | {tot['skipped']} | "
             f"{tot['hung']} | {tot['crashed']} | {round(sum(r['seconds'] for r in recs), 1)} |")
    for what, part in (("", recs), (" of the fifteen op-set files", [r for r in recs if r["file"] in OP_SET_FILES])):
        passed, counted = _figure(part)
        if counted and (not what or (whole and len(part) == len(OP_SET_FILES))):
            L += ["", f"**Passed{what}: {100 * passed / counted:.1f}%** of the tests not skipped "
                      f"(passed / (collected - skipped) = {passed} / {counted})."]
    allc = collections.Counter()
    for r in recs:
        allc.update(r["causes"])
    L += ["", "## Failures by cause", "",
          "The first line of each failure's message, numbers, shapes and dtypes replaced by N and DT.", ""]
    if not allc:
        L.append("None.")
    else:
        L += ["| count | cause | files |", "|---:|---|---|"]
        for cause, c in allc.most_common(top):
            fs = ", ".join(f"{r['file']} ({r['causes'][cause]})" for r in recs if cause in r["causes"])
            L.append(f"| {c} | `{cause.replace('|', '/').replace('`', '')}` | {fs} |")
        if len(allc) > top:
            L.append(f"| {sum(allc.values()) - sum(c for _, c in allc.most_common(top))} | "
                     f"({len(allc) - top} more causes) | |")
    for r in recs:
        if r["causes"] or r["skips"]:
            L += ["", f"### {r['file']}", ""]
            for cause, c in r["causes"].most_common(top):
                L.append(f"- {c} failed: `{cause.replace('`', '')}`")
            for cause, c in r["skips"].most_common(min(top, 5)):
                L.append(f"- {c} skipped: `{cause.replace('`', '')}`")
    return "\n".join(L) + "\n"


def _figure(recs: list[dict]) -> tuple[int, int]:
    """(passed, collected - skipped) over the records."""
    passed = sum(r["passed"] for r in recs)
    return passed, passed + sum(r["failed"] + r["errors"] + r["hung"] + len(r["crashes"]) for r in recs)


def merged(recs: dict, earlier: dict, files: list[str]) -> list[dict]:
    """This run's records and the earlier run's for the files not run now, the op-set files first."""
    order = [f for f in OP_SET_FILES if f in earlier or f in recs] + \
        [f for f in list(earlier) + files if f not in OP_SET_FILES]
    return [recs.get(f) or earlier[f] for f in dict.fromkeys(order) if f in recs or f in earlier]


def write_json(path: str, recs: list[dict]) -> None:
    pathlib.Path(path).write_text(json.dumps(
        [{**r, "causes": dict(r["causes"]), "skips": dict(r["skips"])} for r in recs], indent=1))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", nargs="+", help="test files by name (nn_test or nn_test.py); default: the op-set fifteen")
    ap.add_argument("--all", action="store_true", help="every *_test.py of the folder")
    ap.add_argument("--per-test-timeout", type=int, default=120)
    ap.add_argument("--file-timeout", type=int, default=3600)
    ap.add_argument("--platform", default="xlair", help="JAX_PLATFORMS of the children: xlair (the CPU), or "
                                                        "a GPU platform of the plugin (xlair_vulkan, xlair_cuda)")
    ap.add_argument("--cases", type=int, default=1, help="JAX_NUM_GENERATED_CASES")
    ap.add_argument("--jobs", type=int, default=1, choices=(1, 2))
    ap.add_argument("--restarts", type=int, default=5, help="runs of a file after a crash, without the crashed test")
    ap.add_argument("--sample", type=int, default=0, help="only the first K tests of each file")
    ap.add_argument("--top", type=int, default=15, help="causes listed overall and per file")
    ap.add_argument("-o", "--output", default=str(ROOT / "docs" / "jax-tests.md"))
    ap.add_argument("--logs", default=str(ROOT / "build" / "jax-tests"), help="where the logs and junit XML go")
    ap.add_argument("--json", help="also write the counts as JSON here")
    ap.add_argument("--reuse", help="a JSON of an earlier run (--json): its files not run now are reported as "
                                    "that run found them (each file's run is named in the report)")
    args = ap.parse_args(argv)
    if not TESTS_DIR.is_dir():
        print(f"run.py: no JAX test folder {TESTS_DIR} (set XLAIR_JAX_TESTS_DIR)", file=sys.stderr)
        return 2
    files = select(args)
    out_dir = pathlib.Path(args.logs).resolve()     # (the children run in the tests folder)
    out_dir.mkdir(parents=True, exist_ok=True)
    started = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    earlier = {}
    if args.reuse:
        for r in json.loads(pathlib.Path(args.reuse).read_text()):
            earlier[r["file"]] = {**r, "causes": collections.Counter(r["causes"]),
                                  "skips": collections.Counter(r["skips"]), "run": r.get("run", "earlier")}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        futs = {f: ex.submit(run_file, f, args, out_dir) for f in files}
        recs = {}
        for f in files:
            r = futs[f].result()
            r["run"] = started
            print(f"{f}: {r['passed']} passed, {r['failed'] + r['errors']} failed, {r['skipped']} skipped, "
                  f"{r['hung']} hung, crashed: {r['crashed'] or 'no'} ({r['seconds']} s)", flush=True)
            recs[f] = r
            if args.json:  # after each file: a run cut short is resumed with --reuse and the files left
                write_json(args.json, merged(recs, earlier, files))
    recs = merged(recs, earlier, files)
    files = [r["file"] for r in recs]
    out = pathlib.Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report(recs, args, files, started, args.top))
    if args.json:
        write_json(args.json, recs)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

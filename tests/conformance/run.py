"""Run the StableHLO conformance suites through xlair's importer and CPU target, and write
docs/conformance.md.

    python tests/conformance/run.py                       # both suites, 2 jobs (make conformance)
    python tests/conformance/run.py --suite interpret --files 'add*' 'while*'
    python tests/conformance/run.py --report-only         # rewrite the report from the last results

Work is split into units of files; each unit runs in a child process (`--worker`), which
imports its cases, then compiles and runs them in batches (one computation per batch, each
case an xla.call; a batch that fails is halved until the failure is one case's).  A child
that crashes or stops making progress is restarted with batches of one case, and the case it
was running is recorded as a failure.  Compiled artifacts come from xlair's content-hashed
compile cache ($XLAIR_CACHE_DIR, default build/cache) when nothing changed.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import fnmatch
import json
import os
import pathlib
import queue
import subprocess
import sys
import tempfile
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

UNIT_FILES = {"interpret": 8, "testdata": 64}


# ----------------------------------------------------------------------------------------
# worker: one unit of files, results as JSON lines on stdout
# ----------------------------------------------------------------------------------------
def worker(suite: str, files: list[str], batch: int, exclude: set) -> None:
    import harness

    def emit(obj):
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    pending = []
    for f in files:
        try:
            cases = harness.interpret_cases(f) if suite == "interpret" else [harness.testdata_case(f)]
        except Exception as e:          # noqa: BLE001  (a harness problem: recorded, not fatal)
            cases = [harness.Case(suite, f, f).done("fail", f"the harness could not read the file: "
                                                            f"{type(e).__name__}: {e}", "import")]
        for c in cases:
            if c.name in exclude:
                continue
            if c.status == "pending":
                pending.append(c)
            else:
                emit({"event": "case", **c.record()})
    for i in range(0, len(pending), batch):
        group = pending[i:i + batch]
        emit({"event": "batch", "names": [c.name for c in group]})
        harness.run_cases(group)
        for c in group:
            emit({"event": "case", **c.record()})
    emit({"event": "done"})


# ----------------------------------------------------------------------------------------
# parent: units in parallel child processes
# ----------------------------------------------------------------------------------------
def _spawn(suite, files, batch, exclude_path):
    cmd = [sys.executable, str(HERE / "run.py"), "--worker", suite, "--batch", str(batch),
           "--exclude", exclude_path, *files]
    env = dict(os.environ)
    env.setdefault("XLAIR_CACHE_DIR", str(ROOT / "build" / "cache"))
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=str(ROOT))


def _lines(proc, q):
    for line in proc.stdout:
        q.put(line)
    q.put(None)


def run_unit(suite: str, files: list[str], batch: int, timeout: float, log) -> list[dict]:
    reported: dict[str, dict] = {}
    crashed: set = set()
    size = batch
    while True:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as tf:
            json.dump(sorted(set(reported) | crashed), tf)
        proc = _spawn(suite, files, size, tf.name)
        errs: list[str] = []
        err_thread = threading.Thread(target=lambda: errs.extend(proc.stderr), daemon=True)
        err_thread.start()
        q: queue.Queue = queue.Queue()
        threading.Thread(target=_lines, args=(proc, q), daemon=True).start()
        inflight, finished, why = [], False, ""
        while True:
            try:
                line = q.get(timeout=timeout)
            except queue.Empty:
                proc.kill()
                why = f"made no progress in {timeout:.0f} s (killed)"
                break
            if line is None:
                break
            try:
                ev = json.loads(line)
            except json.JSONDecodeError:
                continue
            if ev["event"] == "batch":
                inflight = ev["names"]
            elif ev["event"] == "case":
                ev.pop("event")
                reported[ev["name"]] = ev
                log(ev)
            elif ev["event"] == "done":
                finished = True
        proc.wait()
        err_thread.join(timeout=5)
        os.unlink(tf.name)
        if finished:
            return list(reported.values())
        if not why:
            rc = proc.returncode
            why = f"crashed the process (signal {-rc})" if rc < 0 else f"the process exited with status {rc}"
            tail = "".join(errs).strip().splitlines()[-1:] if errs else []
            if tail:
                why += f": {tail[0][:300]}"
        left = [n for n in inflight if n not in reported]
        if size > 1 and left:
            size = 1                    # find the case: one case per batch from here on
            continue
        if left:
            for n in left:
                rec = {"suite": suite, "file": n.split(":")[0], "name": n, "status": "fail",
                       "reason": why, "stage": "run", "op": "", "seconds": timeout if "progress" in why else 0}
                reported[n] = rec
                crashed.add(n)
                log(rec)
            continue
        if len(files) > 1:              # crashed while importing: go file by file
            for f in files:
                for rec in run_unit(suite, [f], batch, timeout, log):
                    reported.setdefault(rec["name"], rec)
            return list(reported.values())
        rec = {"suite": suite, "file": files[0], "name": files[0], "status": "fail",
               "reason": f"importing {why}", "stage": "import", "op": "", "seconds": 0}
        log(rec)
        reported[files[0]] = rec
        return list(reported.values())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", choices=["interpret", "testdata", "all"], default="all")
    ap.add_argument("--files", nargs="*", help="glob patterns of files to run (default: all)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32, help="cases per compiled computation")
    ap.add_argument("--timeout", type=float, default=900, help="seconds a child may go without progress")
    ap.add_argument("-o", "--output", default=str(ROOT / "docs" / "conformance.md"))
    ap.add_argument("--results", default=str(ROOT / "build" / "conformance" / "results.json"))
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--worker", metavar="SUITE", help=argparse.SUPPRESS)
    ap.add_argument("--exclude", help=argparse.SUPPRESS)
    ap.add_argument("worker_files", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.worker:
        exclude = set(json.loads(pathlib.Path(args.exclude).read_text())) if args.exclude else set()
        worker(args.worker, args.worker_files, args.batch, exclude)
        return 0

    import report
    results_path = pathlib.Path(args.results)
    if args.report_only:
        data = json.loads(results_path.read_text())
        report.write(data, args.output)
        return 0

    import harness
    suites = list(harness.SUITES) if args.suite == "all" else [args.suite]
    units = []
    for suite in suites:
        files = harness.suite_files(suite)
        if args.files:
            files = [f for f in files if any(fnmatch.fnmatch(f, p) for p in args.files)]
        if not files:
            print(f"conformance: no files for suite {suite} under {harness.SUITE_DIR / suite}", file=sys.stderr)
        n = UNIT_FILES[suite]
        units += [(suite, files[i:i + n]) for i in range(0, len(files), n)]
    total_files = sum(len(f) for _, f in units)
    counts = {"pass": 0, "fail": 0, "unsupported": 0}
    lock = threading.Lock()
    t0 = time.time()

    def log(rec):
        with lock:
            counts[rec["status"]] = counts.get(rec["status"], 0) + 1
            done = sum(counts.values())
            if rec["status"] == "fail" or done % 100 == 0:
                print(f"[{time.time() - t0:6.0f}s] {done} cases: {counts['pass']} pass, {counts['fail']} fail, "
                      f"{counts['unsupported']} unsupported" +
                      (f"   FAIL {rec['name']}: {rec['reason'][:160]}" if rec["status"] == "fail" else ""),
                      flush=True)

    records = []
    suite_time = {s: 0.0 for s in suites}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(args.jobs, 1)) as pool:
        futs = {}
        for suite, files in units:
            futs[pool.submit(_timed, run_unit, suite, files, args.batch, args.timeout, log)] = suite
        for fut in concurrent.futures.as_completed(futs):
            recs, dt = fut.result()
            records.extend(recs)
            suite_time[futs[fut]] += dt
    wall = time.time() - t0
    data = {"records": sorted(records, key=lambda r: (r["suite"], r["name"])), "wall_seconds": round(wall, 1),
            "jobs": args.jobs, "batch": args.batch, "files": total_files,
            "suite_seconds": {s: round(v, 1) for s, v in suite_time.items()},
            "partial": bool(args.files) or args.suite != "all",
            "date": time.strftime("%Y-%m-%d"), "suite_dir": str(harness.SUITE_DIR)}
    results_path.parent.mkdir(parents=True, exist_ok=True)
    results_path.write_text(json.dumps(data, indent=1))
    report.write(data, args.output)
    print(f"conformance: {counts['pass']} pass, {counts['fail']} fail, {counts['unsupported']} unsupported "
          f"in {wall:.0f} s ({args.jobs} jobs); report {args.output}")
    return 0


def _timed(fn, *args):
    t = time.time()
    out = fn(*args)
    return out, time.time() - t


if __name__ == "__main__":
    raise SystemExit(main())

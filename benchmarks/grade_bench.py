"""Benchmark the grader: 200 submissions, each run in its own sandbox process, --jobs 2.

    python benchmarks/grade_bench.py [--count 200] [--jobs 2] [--include-timeouts] [--only correct_]

The submissions are copies of the corpus in tests/grader/corpus (by default without the ones that
are meant to time out, which would only measure the timeout). Prints submissions per second,
p50/p95 latency per submission, and how many sandbox processes were started. A measurement, not a
test: nothing here fails on a slow machine.
"""
from __future__ import annotations

import argparse
import itertools
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader import grade, sandbox  # noqa: E402

CORPUS = ROOT / "tests" / "grader" / "corpus"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--include-timeouts", action="store_true")
    ap.add_argument("--only", metavar="PREFIX", help="use only corpus files whose name starts with PREFIX (e.g. correct_)")
    args = ap.parse_args()

    expected = yaml.safe_load((CORPUS / "expected.yml").read_text(encoding="utf-8"))
    names = sorted(n for n, e in expected.items() if (args.include_timeouts or "timeout" not in e["errors"])
                   and n.startswith(args.only or ""))
    work = Path(tempfile.mkdtemp(prefix="grade-bench-"))
    paths = []
    for n, name in zip(range(args.count), itertools.cycle(names)):
        target = work / f"{n:03d}-{name}"
        shutil.copyfile(CORPUS / name, target)
        paths.append(str(target))

    started, lock = [0], threading.Lock()
    real_run = sandbox.run

    def counting_run(*a, **k):
        with lock:
            started[0] += 1
        return real_run(*a, **k)

    grade.sandbox.run = counting_run
    latencies = {}
    real_grade_one = grade.grade_one

    def timed_grade_one(path, options=grade.Options()):
        t0 = time.perf_counter()
        report = real_grade_one(path, options)
        latencies[path] = time.perf_counter() - t0
        return report

    grade.grade_one = timed_grade_one
    t0 = time.perf_counter()
    grade.context("lesson07")                      # lesson, rubric and hidden inputs: built once per process
    setup = time.perf_counter() - t0
    t0 = time.perf_counter()
    reports = grade.grade_many(paths, grade.Options(), jobs=args.jobs)
    wall = time.perf_counter() - t0
    shutil.rmtree(work, ignore_errors=True)

    lat = sorted(latencies.values())
    p95 = lat[min(len(lat) - 1, int(round(0.95 * (len(lat) - 1))))]
    print(f"submissions: {len(reports)} ({len(names)} distinct corpus variants, jobs={args.jobs})")
    print(f"sandbox processes started: {started[0]} (the rest never reach the sandbox: unreadable files, "
          "integrity / whitelist failures, unfilled blanks)")
    print(f"one-time setup (lesson, rubric, hidden inputs): {setup:.2f} s")
    print(f"wall time: {wall:.2f} s  ->  {len(reports) / wall:.1f} submissions/s")
    print(f"latency per submission: p50 {statistics.median(lat) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, "
          f"max {lat[-1] * 1000:.0f} ms")
    print(f"passed: {sum(r.passed for r in reports)}, failed or not graded: {sum(not r.passed for r in reports)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark the grader: 200 submissions, each run in its own sandbox process, --jobs 2.

    python benchmarks/grade_bench.py [--count 200] [--jobs 2] [--include-timeouts] [--only correct_]
    python benchmarks/grade_bench.py --memory [--jobs 2]

`--memory` measures the batch's memory ceiling instead: the peak RSS of the grader process itself
(`python -I -m grader grade`'s own process, sandbox children excluded: getrusage(RUSAGE_SELF) at
its exit) over a batch of hostile and large notebooks (a 19.9 MB exercise cell, 200 code cells of
spaces with the exercise's metadata removed, 199 decoy cells shaped like the template, JSON objects
up to the cap, a 19.9 MB notebook of outputs that is still graded) next to ordinary ones, and the
same for a batch of the ordinary ones alone; it prints both and each hostile file's result.

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


# Runs the real command line in a fresh process and reports that process's own peak RSS.
MEASURED_CHILD = """
import resource, sys
from grader.cli import main
status = main(sys.argv[1:])
print("PEAK_RSS_KB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
sys.exit(status)
"""
MIB = 2**20


def _hostile_batch(folder: Path) -> dict:
    """name -> what it is; the files written into `folder` (see the module docstring)."""
    import json

    from grader.submission import MAX_BYTES, MAX_JSON_CONTAINERS

    good = json.loads((CORPUS / "correct_ternary.ipynb").read_text(encoding="utf-8"))
    exercise = next(n for n, c in enumerate(good["cells"]) if c["metadata"].get("course_role") == "exercise")
    code = "".join(good["cells"][exercise]["source"])

    def variant(name, change):
        nb = json.loads(json.dumps(good))
        change(nb)
        text = json.dumps(nb, ensure_ascii=False)
        (folder / name).write_text(text, encoding="utf-8")
        return len(text.encode())

    def huge_cell(nb):       # one line (no JSON escapes), so the file stays under the byte cap
        nb["cells"][exercise]["source"] = code + "x = 1; " * ((int(19.9e6) - len(code)) // 7)

    def spaces(nb):
        nb["cells"][exercise]["metadata"] = {}
        cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None}
        nb["cells"][:0] = [dict(cell, source=" " * (4 * len(code) + 1000)) for _ in range(199)]

    def decoys(nb):
        nb["cells"][exercise]["metadata"] = {}
        cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None}
        shuffled = "\n".join(reversed(code.splitlines())) * 4
        nb["cells"][:0] = [dict(cell, source=shuffled) for _ in range(199)]

    def objects(nb):
        nb["metadata"]["padding"] = [{} for _ in range(MAX_JSON_CONTAINERS - 1000)]

    def outputs(nb):         # the largest notebook still graded: outputs are ignored, the file is under the cap
        blob = "A" * (MAX_BYTES - 200_000 - len(json.dumps(nb)))
        nb["cells"][exercise]["outputs"] = [{"output_type": "display_data", "metadata": {},
                                             "data": {"image/png": blob, "text/plain": "<Figure>"}}]

    sizes = {name: variant(name, change) for name, change in [
        ("huge_exercise_cell.ipynb", huge_cell), ("spaces_200_cells.ipynb", spaces),
        ("decoys_199_cells.ipynb", decoys), ("json_objects_at_cap.ipynb", objects),
        ("outputs_19_9mb.ipynb", outputs)]}
    return sizes


def _measure(paths: list[str], jobs: int, out: Path) -> tuple[float, float, list]:
    """(peak RSS MiB of the grader's own process, wall s, results)."""
    import json
    import subprocess

    t0 = time.perf_counter()
    run = subprocess.run([sys.executable, "-I", "-c", MEASURED_CHILD, "grade", *paths, "--jobs", str(jobs),
                          "--quiet", "--json", str(out)], capture_output=True, text=True, cwd=out.parent)
    wall = time.perf_counter() - t0
    peak = next(int(line.split()[1]) for line in run.stderr.splitlines() if line.startswith("PEAK_RSS_KB"))
    return peak / 1024, wall, json.loads(out.read_text(encoding="utf-8"))["results"]


def memory(jobs: int) -> int:
    work = Path(tempfile.mkdtemp(prefix="grade-mem-"))
    try:
        ordinary = []
        for name in ("correct_ternary.ipynb", "correct_solution_style.ipynb", "wrong_no_min.ipynb",
                     "text_partial.ipynb", "veto_peak_speedup.ipynb", "broken_not_json.ipynb"):
            shutil.copyfile(CORPUS / name, work / name)
            ordinary.append(str(work / name))
        hostile = work / "hostile"
        hostile.mkdir()
        sizes = _hostile_batch(hostile)
        base_peak, base_wall, _ = _measure(ordinary, jobs, work / "ordinary.json")
        peak, wall, results = _measure(ordinary + [str(hostile / n) for n in sizes], jobs, work / "batch.json")
        print(f"grader process peak RSS, {len(ordinary)} ordinary notebooks: {base_peak:.0f} MiB ({base_wall:.1f} s)")
        print(f"grader process peak RSS, the same + {len(sizes)} hostile/large ones: {peak:.0f} MiB ({wall:.1f} s)")
        by_name = {Path(r["submission"]).name: r for r in results}
        for name, size in sizes.items():
            r = by_name[name]
            errors = ",".join(e["id"] for e in r["errors"]) or "-"
            print(f"  {name:28s} {size / MIB:5.1f} MiB  score {r['score']}/{r['max_score']}  errors {errors}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--include-timeouts", action="store_true")
    ap.add_argument("--only", metavar="PREFIX", help="use only corpus files whose name starts with PREFIX (e.g. correct_)")
    ap.add_argument("--memory", action="store_true", help="measure the grader process's peak RSS over a hostile batch")
    args = ap.parse_args()
    if args.memory:
        return memory(args.jobs)

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

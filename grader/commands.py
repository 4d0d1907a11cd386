"""`python -m grader grade` and `python -m grader check`.

Exit status: 0 when every submission passed; 1 when any failed, is pending_review (its outcome
waits on a person's decision) or could not be graded; 2 for a usage or I/O error (a missing
submission file, a malformed overrides file, an unwritable report).
"""
from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime, timezone
from functools import partial
from pathlib import Path

# The grading machinery (rich, the sandbox, the rubric) is imported by the commands that use it,
# so `python -m grader build` does not need it.

USAGE_ERROR = 2


def add_parsers(sub) -> None:
    g = sub.add_parser("grade", help="grade submitted exercise notebooks against the lesson's rubric",
                       description="Grade notebooks (files or folders of *.ipynb) in isolated processes. "
                                   "Exit 0 if all passed; 1 if any failed, is pending_review (waits on an instructor's "
                                   "decision: see `review`) or could not be graded; 2 on usage/I-O errors.")
    g.add_argument("submissions", nargs="+", help="notebook files, or folders searched for *.ipynb")
    g.add_argument("--json", metavar="PATH", help="write the JSON report ({'run': {...}, 'results': [...]})")
    g.add_argument("--markdown", metavar="PATH", help="write a Markdown summary (e.g. \"$GITHUB_STEP_SUMMARY\")")
    g.add_argument("--junit", metavar="PATH", help="write JUnit XML (one test case per criterion)")
    g.add_argument("--csv", metavar="PATH", help="write a gradebook CSV (one row per submission)")
    g.add_argument("--gradescope", metavar="PATH", help="write Gradescope's results.json (one submission only)")
    g.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="submissions graded at once (default: min(2, CPUs))")
    g.add_argument("--timeout", type=float, help="wall-clock seconds per submission (default: the rubric's, 10)")
    g.add_argument("--overrides", metavar="PATH", help="instructor overrides YAML (criterion points, cleared vetoes)")
    g.add_argument("--lesson", help="grade against this lesson (name or .qmd path) instead of metadata.course.lesson")
    g.add_argument("--as-reference", action="store_true",
                   help="the answers are the lesson's own reference answers: skip the copy check (instructors)")
    g.add_argument("--quiet", action="store_true", help="no per-submission tables")
    g.set_defaults(func=grade_main)

    c = sub.add_parser("check", help="self-check a filled exercise notebook (same engine as grading)",
                       description="学生自查：与正式评分相同的引擎，给出公开检查、隐藏检查的数量、各项得分和缺少的要点。")
    c.add_argument("notebook", nargs="?", help="your copy of the exercise notebook, e.g. work/lesson07.ipynb")
    c.add_argument("--lesson", help="lesson name or .qmd path (default: metadata.course.lesson)")
    c.add_argument("--timeout", type=float, help="wall-clock seconds (default: the rubric's)")
    c.set_defaults(func=check_main)


CHECKPOINTS = ".ipynb_checkpoints"


def _notebooks_in(folder: Path) -> list[str]:
    """Every *.ipynb under `folder`, sorted, without following symlinked folders (each gets a note)
    and without JupyterLab checkpoint folders. A symlinked notebook is listed: grading refuses it
    with the `symlink` error id, so the link is reported, never graded as its target."""
    found = []
    for top, dirs, files in os.walk(folder, followlinks=False):
        for d in sorted(dirs):
            if d != CHECKPOINTS and os.path.islink(os.path.join(top, d)):
                print(f"note: not following {os.path.join(top, d)}: a symbolic link to a folder", file=sys.stderr)
        dirs[:] = [d for d in dirs if d != CHECKPOINTS and not os.path.islink(os.path.join(top, d))]
        found += [os.path.join(top, f) for f in files if f.endswith(".ipynb")]
    return sorted(found)


def expand(items: list[str]) -> tuple[list[str], list[str]]:
    """(notebook paths, arguments that name nothing). JupyterLab's autosave copies are skipped:
    silently inside folders, with a note when named explicitly. Symbolic links are never followed
    into folders; a named or found link to a notebook is kept, so its report says it is a link."""
    found, missing = [], []
    for item in items:
        path = Path(item)
        if CHECKPOINTS in path.parts:
            print(f"note: skipping {item}: a JupyterLab checkpoint (autosave copy), not a submission", file=sys.stderr)
        elif path.is_dir():                      # a folder the instructor names is theirs: followed
            found += _notebooks_in(path)
        elif path.exists() or path.is_symlink():
            found.append(item)
        else:
            missing.append(item)
    return found, missing


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return USAGE_ERROR


def _lookup(lesson: str | None):
    from .grade import context, default_lesson

    name = lesson or default_lesson()
    if not name:
        return None
    try:
        rubric = context(name).rubric
    except Exception:
        return None
    points = {c.id: c.points for c in rubric.criteria}
    return points.get


def _tolerant_output() -> None:
    """A path or text that is not valid UTF-8 must not end a batch with UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")


def _rubric_files(lesson: str | None, results) -> dict:
    """lesson name -> the rubric file it was graded with (for the JSON report's run metadata)."""
    from .paths import files_for_qmd, lesson_files

    if lesson and lesson.endswith(".qmd"):
        return {r.lesson: files_for_qmd(lesson).rubric for r in results if r.lesson}
    files = {}
    for name in {r.lesson for r in results if r.lesson}:
        try:
            files[name] = lesson_files(name).rubric
        except ValueError:  # not a lesson name: its report says so; there is no rubric to name
            pass
    return files


def _print_safely(show) -> None:
    """Terminal output after the report files are written: if it fails, say so and keep the reports."""
    try:
        show()
    except Exception as exc:
        from .escape import terminal

        print(terminal(f"error: printing to the terminal failed ({type(exc).__name__}: {exc}); "
                       "the report files were written"), file=sys.stderr)


def grade_main(args: argparse.Namespace) -> int:
    _tolerant_output()
    graded_at = datetime.now(timezone.utc)
    from rich.console import Console

    from . import report as reports
    from .grade import Options, grade_many
    from .overrides import OverridesError, load_overrides, resolve
    from .terminal import print_report, progress_bar

    paths, missing = expand(args.submissions)
    if missing:
        return _error("no such file or folder: " + ", ".join(missing))
    if not paths:
        return _error("no notebooks (*.ipynb) found in " + ", ".join(args.submissions))
    if args.gradescope and len(paths) != 1:
        return _error("--gradescope writes one submission's results.json; give exactly one notebook")
    if args.jobs < 1 or (args.timeout is not None and args.timeout <= 0):
        return _error("--jobs must be at least 1 and --timeout positive")
    overrides = None
    if args.overrides:
        try:
            overrides, unmatched = resolve(load_overrides(args.overrides, _lookup(args.lesson)), paths, args.submissions)
        except OverridesError as exc:
            return _error(str(exc))
        if unmatched:
            print(f"note: {args.overrides}: no submission in this batch for {', '.join(unmatched)}", file=sys.stderr)
    options = Options(lesson=args.lesson, timeout_s=args.timeout, overrides=overrides, as_reference=args.as_reference)
    console = Console(highlight=False)
    with progress_bar(console, len(paths)) as advance:
        results = grade_many(paths, options, jobs=args.jobs, progress=advance)
    passed = sum(r.passed for r in results)
    status = 0 if passed == len(results) else 1
    # The report files first: one submission's text must never cost the batch its reports.
    writers = dict(reports.WRITERS, json=partial(reports.to_json, run=reports.run_metadata(
        results, _rubric_files(args.lesson, results), graded_at)))
    outputs = [(getattr(args, kind), writer) for kind, writer in writers.items()]
    if args.gradescope:
        outputs.append((args.gradescope, lambda rs: reports.to_gradescope(rs[0])))
    for path, writer in outputs:
        if not path:
            continue
        try:
            reports.write_report(path, writer(results))
        except reports.ReportWriteError as exc:
            print(f"error: {exc}", file=sys.stderr)
            status = USAGE_ERROR

    def show():
        if not args.quiet:
            for result in results:
                print_report(console, result)
        console.print(f"{len(results)} 份提交：{passed} 份通过，{len(results) - passed} 份未通过或未能评分。")

    _print_safely(show)
    return status


def check_main(args: argparse.Namespace) -> int:
    _tolerant_output()
    from rich.console import Console

    from .grade import Options, grade_one
    from .terminal import print_check

    from .workspace import check_hint

    start = "还没有自己的副本？先在仓库根目录运行 .venv/bin/python -m grader start"
    if not args.notebook:
        return _error(f"请给出要自查的笔记本，例如：python -m grader check work/lesson07.ipynb（{start}）")
    path = Path(args.notebook)
    if not path.is_file():
        return _error(f"找不到笔记本 {args.notebook}（{start}）")
    report = grade_one(str(path), Options(lesson=args.lesson, timeout_s=args.timeout))
    _print_safely(lambda: print_check(Console(highlight=False), report))
    if check_hint(path):
        print(check_hint(path), file=sys.stderr)
    return 0 if report.passed else 1

"""`python -m grader review`: the instructor's review page and queue, and turning decisions into overrides.

    python -m grader review grades.json [--out DIR]     # DIR/review.html and DIR/review.yml
    python -m grader review --apply review.yml [--overrides overrides.yml] [--by NAME]

Exit status: 0 on success, 2 for a usage or I/O error (an unreadable report, a malformed queue).
The modules: queue (reports -> items and groups), grouping (near-duplicate groups), page (the
self-contained HTML), queue_file (review.yml), apply (merging into the overrides file).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

USAGE_ERROR = 2


def add_parser(sub) -> None:
    r = sub.add_parser("review", help="instructor review page for a grade run; --apply turns decisions into overrides",
                       description="Write DIR/review.html (self-contained, offline) and DIR/review.yml from the JSON "
                                   "report of `grade`, or with --apply merge decisions (a filled-in review.yml or the "
                                   "page's export) into the overrides file `grade --overrides` reads. Exit 0, or 2 on "
                                   "usage/I-O errors.")
    r.add_argument("grades", nargs="?", help="the JSON report written by `grade --json`")
    r.add_argument("--out", metavar="DIR", help="folder for review.html and review.yml (default: the report's folder)")
    r.add_argument("--title", default="评分复核", help="the page title")
    r.add_argument("--apply", metavar="FILE", help="a filled-in review.yml, or an overrides file exported by the page")
    r.add_argument("--overrides", metavar="PATH", default="overrides.yml",
                   help="with --apply: the overrides file to create or merge into (default: overrides.yml)")
    r.add_argument("--by", help="with --apply: who decided (default: the file's `by:`)")
    r.set_defaults(func=main)


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return USAGE_ERROR


def main(args: argparse.Namespace) -> int:
    from ..overrides import OverridesError
    from ..report import ReportWriteError

    if bool(args.grades) == bool(args.apply):
        return _error("give either GRADES.json (to write the review page) or --apply FILE")
    if args.apply:
        from .apply import apply

        try:
            decided, open_groups = apply(args.apply, args.overrides, args.by)
        except (OverridesError, ReportWriteError) as exc:
            return _error(str(exc))
        left = f"，{open_groups} 组尚未决定" if open_groups else ""
        print(f"已把 {decided} 份提交的决定写入 {args.overrides}{left}。")
        return 0
    return write_review(args.grades, args.out, args.title)


def write_review(grades: str, out: str | None, title: str) -> int:
    from ..report import ReportWriteError, write_atomic
    from .page import render
    from .queue import ReviewError, build_queue, lesson_lookup, load_reports
    from .queue_file import dump_queue

    try:
        reports = load_reports(grades)
    except ReviewError as exc:
        return _error(str(exc))
    lessons = {r.get("lesson") for r in reports if isinstance(r.get("lesson"), str)}
    lookup = lesson_lookup(next(iter(lessons)) if len(lessons) == 1 else None)
    data = build_queue(reports, lookup, source=Path(grades).name)
    folder = Path(out) if out else Path(grades).parent
    try:
        write_atomic(folder / "review.html", render(data, title))
        write_atomic(folder / "review.yml", dump_queue(data))
    except ReportWriteError as exc:
        return _error(str(exc))
    groups = sum(len(q["groups"]) for q in data["questions"])
    print(f"{len(data['items'])} 个答案待复核（{groups} 组，{len(reports)} 份提交）：{folder / 'review.html'}、{folder / 'review.yml'}")
    return 0

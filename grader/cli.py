"""Command line: `python -m grader {build,start,grade,check,...}`."""
from __future__ import annotations

import argparse
import sys


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m grader", description="Course tooling: build notebooks, grade them.")
    sub = top.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="lessons/*.qmd -> exercises/ and solutions/ notebooks")
    b.add_argument("--check", action="store_true", help="exit 1, naming the stale file, if committed notebooks differ")
    b.add_argument("--no-execute", action="store_true", help="do not execute the solution notebook")
    b.add_argument("--timeout", type=int, default=600, help="seconds per cell when executing (default 600)")
    b.add_argument("--root", help=argparse.SUPPRESS)
    b.set_defaults(func=_build)
    s = sub.add_parser("start", help="create your own copy of a lesson's exercise notebook (never overwrites one)",
                       description="学生：创建你自己的练习副本（已存在时拒绝覆盖）。默认 work/<课程>.ipynb（不进 git）；"
                                   "--name 时为 submissions/<名字>/<课程>.ipynb（自动评分的约定）。")
    s.add_argument("lesson", nargs="?", help="lesson name, e.g. lesson07 (default: the only lesson)")
    s.add_argument("--name", help="your name or id: create submissions/NAME/<lesson>.ipynb instead of work/<lesson>.ipynb")
    s.add_argument("--root", help=argparse.SUPPRESS)
    s.set_defaults(func=_start)
    from . import commands  # grade, check
    commands.add_parsers(sub)
    from .review import add_parser as add_review  # review, review --apply
    add_review(sub)
    from .release import add_parser as add_release  # release --out DIR, release --check DIR
    add_release(sub)
    return top


def _build(args) -> int:
    from . import build  # nbformat and nbclient: only the build command needs them

    return build.main(args)


def _start(args) -> int:
    from . import workspace  # nbformat: like build

    return workspace.main(args)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())

"""Command line of the student release: `python -m grader {start,check}`.

Written into the release by `python -m grader release` (the instructor repository's own
grader/cli.py has more commands: build, grade, review, release). This repository has no hidden
checks and no text rubric: `check` runs the self-check of grader/selfcheck.py.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
USAGE_ERROR = 2


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m grader", description="课程工具（学生版）：创建练习副本、自查。")
    sub = top.add_subparsers(dest="command", required=True)
    s = sub.add_parser("start", help="create your own copy of a lesson's exercise notebook (never overwrites one)",
                       description="创建你自己的练习副本（已存在时拒绝覆盖）。默认 work/<课程>.ipynb（不进 git）；"
                                   "--name 时为 submissions/<名字>/<课程>.ipynb（提交作业的约定）。")
    s.add_argument("lesson", nargs="?", help="lesson name, e.g. lesson07 (default: the only lesson)")
    s.add_argument("--name", help="your name or id: create submissions/NAME/<lesson>.ipynb instead of work/<lesson>.ipynb")
    s.set_defaults(func=_start)
    c = sub.add_parser("check", help="self-check a filled exercise notebook",
                       description="自查：练习单元的完整性、填写规则、可见断言（与评分相同的沙箱）、作答单元；"
                                   "隐藏检查和文字题评分只在老师评分时运行。")
    c.add_argument("notebook", nargs="?", help="your copy of the exercise notebook, e.g. work/lesson07.ipynb")
    c.add_argument("--timeout", type=float, help="wall-clock seconds for running the exercise (default: the rubric's)")
    c.add_argument("--json", metavar="PATH", help="also write the result as JSON")
    c.set_defaults(func=_check)
    return top


def _check(args) -> int:
    from . import selfcheck

    return selfcheck.main(args)


def _start(args) -> int:
    from .fsutil import write_new
    from .notebooks import build_notebook, work_copy
    from .selfcheck import student_lesson

    import nbformat

    lessons = {p.stem: p for p in sorted((ROOT / "lessons").glob("*.qmd"))}
    name = args.lesson or (next(iter(lessons)) if len(lessons) == 1 else None)
    if name not in lessons:
        print(f"error: 请指定课程，可选：{'、'.join(lessons) or '（没有课程）'}", file=sys.stderr)
        return USAGE_ERROR
    from .paths import valid_student_name

    if args.name is not None and not valid_student_name(args.name):
        print(f"error: --name 只能是一个文件夹名（字母或数字开头，可含 . _ -，不含 / 和空格）：{args.name!r}", file=sys.stderr)
        return USAGE_ERROR
    relative = work_copy(name, args.name)
    try:
        notebook = build_notebook(student_lesson(lessons[name]), "exercise", copy=relative)
        write_new(ROOT / relative, nbformat.writes(notebook, version=4) + "\n")
    except FileExistsError:
        print(f"error: {relative} 已经存在，没有覆盖它（里面可能有你的作答）。继续做：jupyter lab {relative}；"
              "想从头开始，先把它改名或移走再运行本命令。", file=sys.stderr)
        return USAGE_ERROR
    print(f"已创建你的练习副本：{relative}")
    print(f"打开：jupyter lab {relative}")
    print(f"自查：先保存（Ctrl+S），再运行笔记本的最后一个单元；或运行 python -m grader check {relative}")
    if args.name:
        print(f"提交：git add {relative} && git commit -m '{name}' && git push")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())

"""`python -m grader start [LESSON] [--name NAME]`: a student's own copy of an exercise notebook.

The student workspace (documented in the README's student section):
- `start lesson07` creates `work/lesson07.ipynb`: the git-ignored folder for reading the course on
  your own;
- `start lesson07 --name alice` creates `submissions/alice/lesson07.ipynb`: the autograde
  convention; commit and push it to be graded.
The copy is generated from the lesson itself (not copied from `exercises/`, which may be stale or
typed into), its banner names its own self-check command, and it is never overwritten: `start`
refuses when the file exists, and `build` / `make course` only write `exercises/` and `solutions/`.
"""
from __future__ import annotations

import sys
from pathlib import Path

from .build import ROOT, lesson_paths, render
from .fsutil import write_new
from .lesson import LessonError, load_lesson
from .notebooks import PYTHON, build_notebook, work_copy
from .paths import valid_student_name

USAGE_ERROR = 2
# A folder name: letters or digits of any script first, then also `.`, `_`, `-`; no slashes, no `..`.


class WorkspaceError(Exception):
    pass


def _lesson(root: Path, name: str | None) -> Path:
    lessons = {path.stem: path for path in lesson_paths(root)}
    if name is None:
        if len(lessons) != 1:
            raise WorkspaceError(f"请指定课程，可选：{'、'.join(sorted(lessons)) or '（没有课程）'}")
        return next(iter(lessons.values()))
    if name not in lessons:
        raise WorkspaceError(f"没有课程 {name!r}；可选：{'、'.join(sorted(lessons)) or '（没有课程）'}")
    return lessons[name]


def start(root: Path, lesson_name: str | None = None, student: str | None = None) -> Path:
    """Create the student's copy and return its path; raises WorkspaceError (and writes nothing)
    for an unknown lesson, a bad name, or an existing copy."""
    if student is not None and not valid_student_name(student):
        raise WorkspaceError(f"--name 只能是一个文件夹名（字母或数字开头，可含 . _ -，不含 / 和空格）：{student!r}")
    lesson = load_lesson(_lesson(root, lesson_name))
    relative = work_copy(lesson.name, student)
    path = root / relative
    if path.exists() or path.is_symlink():
        raise WorkspaceError(f"{relative} 已经存在，没有覆盖它（里面可能有你的作答）。继续做：{_open(relative)}；"
                             "想从头开始，先把它改名或移走再运行本命令。")
    try:
        write_new(path, render(build_notebook(lesson, "exercise", copy=relative)))
    except FileExistsError:
        raise WorkspaceError(f"{relative} 已经存在，没有覆盖它。") from None
    return path


def _open(relative: str) -> str:
    return f".venv/bin/jupyter lab {relative}"


def check_hint(path: Path) -> str:
    """A note for `check` on a generated (blank) notebook: answers belong in the student's copy."""
    if path.parent.name == "exercises" and path.suffix == ".ipynb":
        return (f"提示：{path} 是自动生成的空白练习，重新生成时会被覆盖；请在自己的副本里作答："
                f"{PYTHON} -m grader start {path.stem}")
    return ""


def main(args) -> int:
    root = Path(args.root).resolve() if getattr(args, "root", None) else ROOT
    try:
        path = start(root, args.lesson, args.name)
    except (WorkspaceError, LessonError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    relative = path.relative_to(root).as_posix()
    print(f"已创建你的练习副本：{relative}")
    print(f"打开：{_open(relative)}")
    print(f"自查：先保存（Ctrl+S），再运行笔记本的最后一个单元；或运行 {PYTHON} -m grader check {relative}")
    if args.name:
        print(f"提交：git add {relative} && git commit -m '{path.stem}' && git push（自动评分只看 submissions/ 下改动的笔记本）")
    return 0

"""`python -m grader build`: lessons/*.qmd -> exercises/<lesson>.ipynb and solutions/<lesson>.ipynb.

The generated notebooks stay generated: students work in their own copy (`python -m grader start`,
grader/workspace.py). A build still never destroys typed-in work: before it replaces a notebook
whose cells differ both from what the build once wrote there (`metadata.course.generated_sha256`)
and from what it writes now, it keeps that file in `work/backups/<folder>/` and says where.
The executed solution notebook is reproducible: consecutive stream outputs are merged and
ipywidgets model ids renamed in a fixed order.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import nbformat

from .execute import execute
from .fsutil import backup_path, write_atomic
from .lesson import ANSWER_PLACEHOLDER, Lesson, LessonError, load_lesson
from .notebooks import (EDITIONS, FOLDERS, WORK, build_notebook, cells_digest, merge_streams, stable_widget_ids,
                        strip_outputs)
from .paths import ROOT, lessons_dir

BACKUPS = Path(WORK) / "backups"


def lesson_paths(root: Path = ROOT) -> list[Path]:
    return sorted(lessons_dir(root).glob("*.qmd"))


def target(root: Path, lesson: Lesson, edition: str) -> Path:
    return root / FOLDERS[edition] / f"{lesson.name}.ipynb"


def render(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb, version=4) + "\n"


def _read(path: Path) -> nbformat.NotebookNode | None:
    """The notebook at `path`, or None when it cannot be read as one."""
    try:
        return nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def edited(path: Path, fresh: nbformat.NotebookNode) -> bool:
    """Whether the file at `path` holds something a build did not write (typed-in answers, a filled
    exercise, added cells, or a file that is no notebook at all). A missing file holds nothing."""
    if not path.exists():
        return False
    current = _read(path)
    if current is None:
        return True
    written = (current.metadata.get("course") or {}).get("generated_sha256")
    if written is None:
        return _legacy_filled(current, fresh)
    return cells_digest(current) not in {written, cells_digest(fresh)}


def _legacy_filled(current: nbformat.NotebookNode, fresh: nbformat.NotebookNode) -> bool:
    """For an exercise notebook written before builds recorded a digest (the lesson may have changed
    since): an answer cell that is not the placeholder, or an exercise cell unlike the lesson's."""
    if (current.metadata.get("course") or {}).get("edition") != "exercise":
        return False
    exercises = {c.metadata.get("course_id"): c.source for c in fresh.cells if c.metadata.get("course_role") == "exercise"}
    for cell in current.cells:
        role, course_id = cell.metadata.get("course_role"), cell.metadata.get("course_id")
        if role == "answer" and cell.source.strip() != ANSWER_PLACEHOLDER:
            return True
        if role == "exercise" and (cell.cell_type != "code" or cell.source != exercises.get(course_id, cell.source)):
            return True
    return False


def keep_backup(root: Path, path: Path) -> Path:
    """Copy `path` to work/backups/<folder>/<name>-<time>.ipynb and return where."""
    folder = root / BACKUPS / path.parent.name
    folder.mkdir(parents=True, exist_ok=True)
    backup = backup_path(folder, path)
    shutil.copy2(path, backup)
    return backup


def stale_files(root: Path = ROOT) -> list[str]:
    """Committed notebooks that differ (ignoring outputs) from what the lessons produce."""
    return [name for name, _ in stale_notebooks(root)]


def stale_notebooks(root: Path = ROOT) -> list[tuple[str, str]]:
    """(path relative to root, why) for each generated notebook that is not what the lessons produce."""
    stale = []
    for path in lesson_paths(root):
        lesson = load_lesson(path)
        for edition in EDITIONS:
            out = target(root, lesson, edition)
            fresh = build_notebook(lesson, edition)
            name = str(out.relative_to(root))
            current = _read(out)
            if current is None:
                why = "missing" if not out.exists() else "unreadable"
                stale.append((f"{name} ({why})", why))
            elif render(strip_outputs(current)) != render(strip_outputs(fresh)):
                stale.append((name, "edited" if edited(out, fresh) else "outdated"))
    return stale


def build(root: Path = ROOT, *, run: bool = True, timeout: int = 600,
          report=lambda message: print(message, file=sys.stderr)) -> list[Path]:
    """Write every lesson's notebooks; `report` is told about each backup kept."""
    written = []
    for path in lesson_paths(root):
        lesson = load_lesson(path)
        for edition in EDITIONS:
            nb = build_notebook(lesson, edition)
            out = target(root, lesson, edition)
            if edition == "solution" and run:
                execute(nb, cwd=out.parent, timeout=timeout)
                nb = stable_widget_ids(merge_streams(nb))
            if edited(out, nb):
                backup = keep_backup(root, out)
                report(f"note: {out.relative_to(root)} had been edited (typed-in answers or code?); "
                       f"kept it as {backup.relative_to(root)} before regenerating it. "
                       f"Work in your own copy instead: python -m grader start {lesson.name}")
            write_atomic(out, render(nb))
            written.append(out)
    return written


STALE_HINTS = {
    "edited": "has been edited by hand (typed-in answers?); `python -m grader build` regenerates it and keeps "
              "the edited file in work/backups/ (students: work in your own copy, `python -m grader start`)",
    "outdated": "differs from what lessons/ produce; run `python -m grader build`",
    "missing": "is missing; run `python -m grader build`",
    "unreadable": "is not a readable notebook; run `python -m grader build` (it keeps the file in work/backups/)",
}


def main(args) -> int:
    root = Path(args.root).resolve() if getattr(args, "root", None) else ROOT
    try:
        if args.check:
            stale = stale_notebooks(root)
            for name, why in stale:
                print(f"stale: {name} {STALE_HINTS[why]}", file=sys.stderr)
            if not stale:
                print(f"notebooks are in sync with {len(lesson_paths(root))} lesson(s)")
            return 1 if stale else 0
        for out in build(root, run=not args.no_execute, timeout=args.timeout):
            print(f"wrote {out.relative_to(root)}")
        return 0
    except LessonError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

"""`python -m grader build`: lessons/*.qmd -> exercises/<lesson>.ipynb and solutions/<lesson>.ipynb."""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat

from .execute import execute
from .lesson import Lesson, LessonError, load_lesson
from .notebooks import build_notebook, strip_outputs

ROOT = Path(__file__).resolve().parents[1]


def lesson_paths(root: Path = ROOT) -> list[Path]:
    return sorted((root / "lessons").glob("*.qmd"))


def target(root: Path, lesson: Lesson, edition: str) -> Path:
    folder = "exercises" if edition == "exercise" else "solutions"
    return root / folder / f"{lesson.name}.ipynb"


def render(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb, version=4) + "\n"


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def stale_files(root: Path = ROOT) -> list[str]:
    """Committed notebooks that differ (ignoring outputs) from what the lessons produce."""
    stale = []
    for path in lesson_paths(root):
        lesson = load_lesson(path)
        for edition in ("exercise", "solution"):
            out = target(root, lesson, edition)
            expected = render(strip_outputs(build_notebook(lesson, edition)))
            try:
                current = render(strip_outputs(nbformat.reads(out.read_text(encoding="utf-8"), as_version=4)))
            except (OSError, ValueError) as exc:
                stale.append(f"{out.relative_to(root)} (unreadable: {exc.__class__.__name__})")
                continue
            if current != expected:
                stale.append(str(out.relative_to(root)))
    return stale


def build(root: Path = ROOT, *, run: bool = True, timeout: int = 600) -> list[Path]:
    written = []
    for path in lesson_paths(root):
        lesson = load_lesson(path)
        for edition in ("exercise", "solution"):
            nb = build_notebook(lesson, edition)
            out = target(root, lesson, edition)
            if edition == "solution" and run:
                execute(nb, cwd=out.parent, timeout=timeout)
            write_atomic(out, render(nb))
            written.append(out)
    return written


def main(args) -> int:
    root = Path(args.root).resolve() if getattr(args, "root", None) else ROOT
    try:
        if args.check:
            stale = stale_files(root)
            for name in stale:
                print(f"stale: {name} differs from what lessons/ produce; run `python -m grader build`",
                      file=sys.stderr)
            if not stale:
                print(f"notebooks are in sync with {len(lesson_paths(root))} lesson(s)")
            return 1 if stale else 0
        for out in build(root, run=not args.no_execute, timeout=args.timeout):
            print(f"wrote {out.relative_to(root)}")
        return 0
    except LessonError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

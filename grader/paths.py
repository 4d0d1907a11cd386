"""Where things are: the repository root, the trusted lessons, and the `lessons/<name>.*` rule.

A lesson is files under `lessons/`: `<name>.qmd` (the source), `<name>.rubric.yml` (points,
criteria, settings) and `<name>.checks.py` (the hidden checks). Lessons are looked up only here,
among the grader's own trusted files: a submitted notebook names a lesson, it never chooses a path.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePath

ROOT = Path(__file__).resolve().parents[1]
LESSON_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
# A student's folder under submissions/: one path component, starting with a letter or digit (any script).
STUDENT_NAME = re.compile(r"[^\W_][\w.-]{0,63}")


def valid_student_name(name: str) -> bool:
    return bool(STUDENT_NAME.fullmatch(name)) and ".." not in name


@dataclass(frozen=True)
class LessonFiles:
    name: str
    qmd: Path
    rubric: Path
    checks: Path

    def exist(self) -> bool:
        return self.qmd.is_file() and self.rubric.is_file()


def lessons_dir(root: Path = ROOT) -> Path:
    return root / "lessons"


def lesson_files(name: str, root: Path = ROOT) -> LessonFiles:
    """The files of lesson `name` under `root/lessons` (raises ValueError for a name that is not a name)."""
    if not LESSON_NAME.fullmatch(name or ""):
        raise ValueError(f"not a lesson name: {name!r}")
    base = lessons_dir(root)
    return LessonFiles(name, base / f"{name}.qmd", base / f"{name}.rubric.yml", base / f"{name}.checks.py")


def files_for_qmd(qmd: str | Path) -> LessonFiles:
    """The same rule for an instructor's explicit path to a `.qmd` (the `--lesson PATH` option)."""
    qmd = Path(qmd)
    stem = qmd.name[: -len(".qmd")]
    return LessonFiles(stem, qmd, qmd.with_name(f"{stem}.rubric.yml"), qmd.with_name(f"{stem}.checks.py"))


def lesson_names(root: Path = ROOT) -> list[str]:
    """Every lesson with a rubric, sorted."""
    return sorted(p.name[: -len(".rubric.yml")] for p in lessons_dir(root).glob("*.rubric.yml")
                  if LESSON_NAME.fullmatch(p.name[: -len(".rubric.yml")]))


SUBMISSIONS = "submissions"    # submissions/<student>/<lesson>.ipynb: the autograde convention


def student_of(submission: str | Path) -> str:
    """The student a submission belongs to: the folder below the last `submissions/` that has one
    (`submissions/<student>/<lesson>.ipynb`), else the file's stem."""
    path = PurePath(str(submission).replace("\\", "/"))
    folders = path.parts[:-1]
    for i in range(len(folders) - 2, -1, -1):
        if folders[i] == SUBMISSIONS:
            return folders[i + 1]
    return path.stem or path.name

"""`python -m grader release --out DIR` and `release --check DIR`: the student release.

The instructor repository (this one, private) holds the answer key: solution cells, reference
answers, the full rubric, the hidden checks. The student release is a self-contained directory,
ready to push as the public course repository or a GitHub Classroom template, built from the one
source with every answer-only element removed:

- `index.qmd`, `lessons/<name>.qmd`: the sources with each answer-only div
  (`content-visible when-profile="answer"`, `content-hidden unless-profile="answer"`) and each
  `course-reference` div cut out as whole lines; every other byte is kept. The result must parse
  (grader/lesson.py's scanner) to exactly the student edition's cells, else nothing is written;
- `lessons/<name>.rubric.yml`: the *public* rubric summary (`PUBLIC_KEYS`: criteria ids, titles,
  points, descriptions, the pass rule, veto titles, sandbox limits) — what the lesson's 评分规则
  section renders and what the self-check reads; no seed, hidden settings, concepts, patterns,
  levels, text settings or feedback;
- `exercises/<name>.ipynb`: what `python -m grader build` writes for the exercise edition;
- `_quarto.yml` (the student edition; no `_quarto-answer.yml`), `assets/` (without the figures the
  lesson's cells regenerate), `specdec/`;
- `grader/`: only the modules the self-check imports (found by following the imports of
  grader/selfcheck.py and the release's own CLI), plus the sandbox child grader/harness.py;
- from `release_template/`: the student README, requirements, `.gitignore`, the release's CI
  (self-check only) and the release's `grader/cli.py` / `grader/__main__.py`;
- `.course-release.json`: the list of files with their sha256 (so a later `--out` into the same
  directory removes files that are no longer part of the release, and nothing else).

`--check DIR` rebuilds in memory and exits 1 naming every file that is missing, different or not
part of the release (students' work folders and build outputs are ignored).
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import sys
from pathlib import Path

import yaml

from .lesson import REFERENCE_CLASS, LessonError, load_lesson, walk_divs
from .paths import ROOT, lesson_names

TEMPLATE = "release_template"
MANIFEST = ".course-release.json"
USAGE_ERROR = 2

# Instructor-only modules: a release that would ship one of them is refused, whatever imports it.
INSTRUCTOR_ONLY = frozenset({"grade", "checks", "rubric", "text", "text_legacy", "claims", "vetoes", "score",
                             "overrides", "report", "review", "build", "execute", "release", "commands", "terminal",
                             "codemap", "formulas", "sentences", "normalise"})
ENTRY_MODULES = ("selfcheck",)          # plus the release's own grader/cli.py from the template
DATA_MODULES = ("harness",)             # started by path (grader/sandbox.py), never imported
# What a release directory may hold besides its files: students' work, build outputs, git.
IGNORED_DIRS = frozenset({".git", ".venv", "venv", "work", "submissions", "_book", "_freeze", ".quarto",
                          "__pycache__", ".ipynb_checkpoints", ".pytest_cache", "site_libs"})
GENERATED_SUFFIXES = (".pyc", ".quarto_ipynb")
FIGURES = "assets/figs"                 # written by the lesson's cells at render time

# The rubric's public part, key by key (everything else in the rubric is instructor-only).
PUBLIC_KEYS = {
    "top": ("lesson", "max_score", "pass_score"),
    "pass": ("min_score", "require", "no_vetoes"),
    "exercise": ("id", "function", "scored", "title", "imports"),
    "sandbox": ("timeout_s", "call_timeout_s", "memory_mb"),
    "criterion": ("id", "points", "title", "description", "kind", "exercise", "answer"),
    "veto": ("id", "title"),
}


class ReleaseError(Exception):
    """The release cannot be built or written (the message says why)."""


# ---------------------------------------------------------------------------------------------
# Lesson sources


def answer_only_lines(text: str, path: Path) -> set[int]:
    """0-based lines the release drops: every line of each answer-only or course-reference div, and
    the opening and closing lines of each student-only wrapper.

    Divs are found the way grader/lesson.py finds them (fenced code blocks are skipped, so a `:::`
    inside code is never a div)."""
    drop: set[int] = set()
    for first, last, div in walk_divs(text, path):
        if div.answer_only or REFERENCE_CLASS in div.classes:
            drop.update(range(first, last + 1))
        elif div.student_only:
            drop.update((first, last))
    return drop


def student_source(text: str, path: Path) -> str:
    """`text` without its answer-only lines; every other line kept byte for byte."""
    drop = answer_only_lines(text, path)
    return "".join(line for n, line in enumerate(text.splitlines(keepends=True)) if n not in drop)


def _cell_key(cell) -> tuple:
    return (cell.kind, cell.source, cell.role, cell.course_id)


def verify_student_source(original: Path, stripped: str) -> None:
    """The stripped source must be exactly the student edition: same cells, none answer-only."""
    from .selfcheck import student_lesson

    full = load_lesson(original)
    lesson = student_lesson(original, stripped)
    bad = [c for c in lesson.cells if c.answer_only or c.role in ("solution", "reference")]
    if bad:
        raise ReleaseError(f"{original}:{bad[0].line}: answer-only content survived the release")
    if [_cell_key(c) for c in lesson.cells] != [_cell_key(c) for c in full.student_cells()]:
        raise ReleaseError(f"{original}: the release's source does not parse to the student edition's cells "
                           "(an answer-only div the release cannot cut as whole lines?)")


# ---------------------------------------------------------------------------------------------
# The public rubric summary


def public_summary(rubric_path: Path) -> dict:
    """The public part of a rubric (validated first with the instructor's loader)."""
    from .rubric import RubricError, load_rubric

    try:
        rubric = load_rubric(rubric_path)
    except RubricError as exc:
        raise ReleaseError(str(exc)) from None
    out = {"lesson": rubric.lesson, "max_score": rubric.max_score, "pass_score": rubric.pass_score,
           "pass": {"min_score": rubric.pass_rule.min_score, "require": list(rubric.pass_rule.require),
                    "no_vetoes": rubric.pass_rule.no_vetoes}}
    out["exercises"] = []
    for e in rubric.exercises:
        item = {"id": e.id, "function": e.function, "scored": e.scored}
        if e.title:
            item["title"] = e.title
        if e.imports:
            item["imports"] = list(e.imports)
        out["exercises"].append(item)
    out["sandbox"] = {"timeout_s": rubric.sandbox.timeout_s, "call_timeout_s": rubric.sandbox.call_timeout_s,
                      "memory_mb": rubric.sandbox.memory_mb}
    out["criteria"] = []
    for c in rubric.criteria:
        item = {"id": c.id, "points": c.points, "title": c.title, "description": c.description, "kind": c.kind}
        item.update({"exercise": c.exercise} if c.kind == "code" else {"answer": c.answer})
        out["criteria"].append(item)
    out["vetoes"] = [{"id": v.id, "title": v.title} for v in rubric.vetoes]
    return out


SUMMARY_HEADER = """\
# Public rubric summary of {lesson}, written by `python -m grader release` from the instructor's rubric.
# The lesson's 评分规则 section renders it and `python -m grader check` reads it. Hidden checks and
# text scoring run only when the instructor grades: their inputs and rules are not in this repository.
"""


def summary_text(summary: dict) -> str:
    body = yaml.safe_dump(summary, allow_unicode=True, sort_keys=False, width=100)
    return SUMMARY_HEADER.format(lesson=summary["lesson"]) + body


# ---------------------------------------------------------------------------------------------
# Which grader modules ship


def _relative_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                names.add(node.module.split(".")[0])
            else:
                names.update(alias.name for alias in node.names)
    return names


def grader_modules(root: Path = ROOT) -> list[str]:
    """The grader modules the release needs: the import closure of its entry points, plus DATA_MODULES."""
    grader = root / "grader"
    todo = [grader / f"{m}.py" for m in ENTRY_MODULES] + [root / TEMPLATE / "grader" / "cli.py"]
    seen: set[str] = set()
    while todo:
        for name in _relative_imports(todo.pop()):
            if name in seen:
                continue
            if not (grader / f"{name}.py").is_file():
                raise ReleaseError(f"the release's grader imports grader.{name}, which is not a module file")
            seen.add(name)
            todo.append(grader / f"{name}.py")
    seen.update(DATA_MODULES)
    seen.discard("cli")
    seen.discard("__main__")
    leaked = sorted(seen & INSTRUCTOR_ONLY)
    if leaked:
        raise ReleaseError(f"the release would ship instructor-only modules: {', '.join(leaked)}")
    return sorted(seen)


# ---------------------------------------------------------------------------------------------
# The whole release, in memory


def _tree(root: Path, folder: str, skip=lambda rel: False) -> dict[str, bytes]:
    out = {}
    base = root / folder
    for path in sorted(base.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if not path.is_file() or path.is_symlink() or set(path.relative_to(base).parts) & IGNORED_DIRS:
            continue
        if rel.endswith(GENERATED_SUFFIXES) or skip(rel):
            continue
        out[rel] = path.read_bytes()
    return out


def _figure(rel: str) -> bool:
    return rel.startswith(FIGURES + "/") and not rel.endswith(".gitkeep")


def build_files(root: Path = ROOT) -> dict[str, bytes]:
    """Every file of the release: path relative to the release root -> content."""
    from .notebooks import build_notebook

    files: dict[str, bytes] = {}
    names = lesson_names(root)
    if not names:
        raise ReleaseError(f"{root / 'lessons'}: no lessons (lessons/<name>.qmd + <name>.rubric.yml)")
    for name in names:
        qmd = root / "lessons" / f"{name}.qmd"
        text = qmd.read_text(encoding="utf-8")
        stripped = student_source(text, qmd)
        verify_student_source(qmd, stripped)
        files[f"lessons/{name}.qmd"] = stripped.encode("utf-8")
        files[f"lessons/{name}.rubric.yml"] = summary_text(public_summary(root / "lessons" / f"{name}.rubric.yml")).encode()
        files[f"exercises/{name}.ipynb"] = _notebook_text(build_notebook(load_lesson(qmd), "exercise"))
    index = root / "index.qmd"
    if index.is_file():
        files["index.qmd"] = student_source(index.read_text(encoding="utf-8"), index).encode("utf-8")
    files["_quarto.yml"] = _quarto_config(root)
    files.update(_tree(root, "assets", _figure))
    files.update(_tree(root, "specdec"))
    for module in grader_modules(root):
        files[f"grader/{module}.py"] = (root / "grader" / f"{module}.py").read_bytes()
    if (root / "grader" / "__init__.py").is_file():
        files["grader/__init__.py"] = (root / "grader" / "__init__.py").read_bytes()
    template = _tree(root, TEMPLATE)
    if not template:
        raise ReleaseError(f"{root / TEMPLATE}: the release's own files are missing")
    files.update({rel[len(TEMPLATE) + 1:]: data for rel, data in template.items()})
    files[MANIFEST] = _manifest(files)
    return files


def _notebook_text(nb) -> bytes:
    """A notebook as `python -m grader build` writes it (grader/build.py `render`)."""
    import nbformat

    return (nbformat.writes(nb, version=4) + "\n").encode("utf-8")


def _quarto_config(root: Path) -> bytes:
    """`_quarto.yml` as is, after checking it is the student edition's (no profile, chapters shipped)."""
    path = root / "_quarto.yml"
    raw = path.read_bytes()
    config = yaml.safe_load(raw) or {}
    if "profile" in config:
        raise ReleaseError(f"{path}: declares profiles; the release has the student edition only")
    chapters = (config.get("book") or {}).get("chapters") or []
    for chapter in chapters:
        item = chapter if isinstance(chapter, str) else (chapter or {}).get("href")
        if isinstance(item, str) and not (item == "index.qmd" or item.startswith("lessons/")):
            raise ReleaseError(f"{path}: chapter {item!r} is not part of the release (index.qmd, lessons/)")
    return raw


def _manifest(files: dict[str, bytes]) -> bytes:
    listing = {rel: hashlib.sha256(data).hexdigest() for rel, data in sorted(files.items()) if rel != MANIFEST}
    return (json.dumps({"format": 1, "files": listing}, indent=1, ensure_ascii=False) + "\n").encode()


# ---------------------------------------------------------------------------------------------
# Writing and checking a directory


def _ignored(rel: str) -> bool:
    parts = rel.split("/")
    return bool(set(parts[:-1]) & IGNORED_DIRS) or rel.endswith(GENERATED_SUFFIXES) or _figure(rel)


def existing_files(out: Path) -> list[str]:
    found = []
    for dirpath, dirnames, filenames in os.walk(out):
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_DIRS)
        for name in sorted(filenames):
            rel = (Path(dirpath) / name).relative_to(out).as_posix()
            if not _ignored(rel):
                found.append(rel)
    return found


def differences(files: dict[str, bytes], out: Path) -> list[str]:
    """'path (why)' for each file of `out` that is not what the release has now."""
    problems = []
    for rel, data in sorted(files.items()):
        path = out / rel
        if path.is_symlink() or not path.is_file():
            problems.append(f"{rel} (missing)")
        elif path.read_bytes() != data:
            problems.append(f"{rel} (stale)")
    problems += [f"{rel} (not part of the release)" for rel in existing_files(out) if rel not in files]
    return problems


def _previous_files(out: Path) -> list[str] | None:
    """Files the release written here last time, or None when `out` holds no release."""
    try:
        data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
        return list(data["files"]) + [MANIFEST]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_release(files: dict[str, bytes], out: Path, root: Path = ROOT) -> list[str]:
    """Write `files` under `out`; returns the files removed because they left the release."""
    out = out.resolve()
    if out == root.resolve() or root.resolve().is_relative_to(out):
        raise ReleaseError(f"{out}: the release cannot be written over the instructor repository")
    previous: list[str] = []
    if out.exists():
        if not out.is_dir():
            raise ReleaseError(f"{out}: exists and is not a folder")
        old = _previous_files(out)
        if old is None and existing_files(out):
            raise ReleaseError(f"{out}: not empty and not a release written by this command (no {MANIFEST}); "
                               "choose an empty or new folder")
        previous = old or []
    removed = []
    for rel in previous:
        if rel not in files and (out / rel).is_file() and not _ignored(rel):
            (out / rel).unlink()
            removed.append(rel)
    for rel, data in files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink() or path.is_dir():
            raise ReleaseError(f"{path}: in the way (a link or a folder where a release file goes)")
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return removed


# ---------------------------------------------------------------------------------------------
# Command line


def add_parser(sub) -> None:
    r = sub.add_parser("release", help="write the student release (no answer key), or check one is in sync",
                       description="Write the student release: lessons without answer-only content, the exercise "
                                   "notebooks, a public rubric summary, the self-check. --check DIR exits 1 naming "
                                   "each stale, missing or extra file.")
    mode = r.add_mutually_exclusive_group(required=True)
    mode.add_argument("--out", metavar="DIR", help="write the release into DIR (new, empty, or an earlier release)")
    mode.add_argument("--check", metavar="DIR", help="verify that DIR holds the release the sources give now")
    r.add_argument("--root", help=argparse.SUPPRESS)
    r.set_defaults(func=main)


def main(args) -> int:
    root = Path(args.root).resolve() if getattr(args, "root", None) else ROOT
    try:
        files = build_files(root)
    except (ReleaseError, LessonError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    if args.check:
        target = Path(args.check)
        if not target.is_dir():
            print(f"error: {target}: no such folder", file=sys.stderr)
            return USAGE_ERROR
        problems = differences(files, target)
        for problem in problems:
            print(f"stale: {target / problem}", file=sys.stderr)
        if problems:
            print(f"{len(problems)} file(s) differ from the release the sources give; "
                  f"rewrite it with: python -m grader release --out {target}", file=sys.stderr)
            return 1
        print(f"{target}: the release is in sync ({len(files)} files)")
        return 0
    try:
        removed = write_release(files, Path(args.out), root)
    except (ReleaseError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    for rel in removed:
        print(f"removed {rel} (no longer part of the release)", file=sys.stderr)
    print(f"wrote the student release to {args.out} ({len(files)} files)")
    return 0

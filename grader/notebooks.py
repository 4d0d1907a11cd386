"""Turn a parsed lesson into its two notebooks: the exercise (student) and the solution (reference).

The notebook contract other tools rely on:
- `metadata.course = {"lesson": <name>, "edition": "exercise" | "solution"}`;
- graded cells carry string `metadata.course_role` and `metadata.course_id`, as `quarto convert`
  would place unknown cell options; Quarto's own options stay in the source as `#|` lines;
- the exercise notebook has the exercise cell (blanks intact) and, after each question, a markdown
  cell `course_role: "answer"` holding only ANSWER_PLACEHOLDER; the solution notebook has the
  solution in the exercise's place and the reference answer in each answer cell;
- every cell but the exercise and the answers is locked with Jupyter's `editable`/`deletable`.
"""
from __future__ import annotations

import nbformat
from nbformat import v4

from .lesson import ANSWER_PLACEHOLDER, QUARTO_OPTIONS, Cell, Lesson, _OPTION_LINE

EDITIONS = ("exercise", "solution")
NBVAL_IGNORE = "nbval-ignore-output"
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


def banner(lesson: Lesson, edition: str) -> str:
    which = "练习版（exercise）" if edition == "exercise" else "参考答案版（solution）"
    return (
        f"> **{lesson.title}** · {which}\n>\n"
        f"> 本笔记本由 `python -m grader build` 从 `lessons/{lesson.path.name}` 自动生成，请勿手工编辑其结构："
        "改动请写在课程源文件里。"
        + ("只修改带 `______` 的练习单元和「你的答案」单元；完成后运行 `python -m grader check` 自查。"
           if edition == "exercise" else "")
    )


def build_notebook(lesson: Lesson, edition: str) -> nbformat.NotebookNode:
    """The notebook for one edition, without outputs (the solution is executed separately)."""
    if edition not in EDITIONS:
        raise ValueError(f"edition must be one of {EDITIONS}, got {edition!r}")
    nb = v4.new_notebook()
    nb.nbformat, nb.nbformat_minor = 4, 5
    nb.metadata = {
        "kernelspec": dict(KERNELSPEC),
        "language_info": {"name": "python"},
        "course": {"lesson": lesson.name, "edition": edition},
    }
    cells = [_locked(v4.new_markdown_cell(banner(lesson, edition)))]
    solutions = {c.course_id: c for c in lesson.find("solution")}
    references = {c.course_id: c for c in lesson.find("reference")}
    for cell in lesson.cells:
        if cell.role in ("solution", "reference"):
            continue  # placed where their exercise / question is
        if cell.answer_only and edition == "exercise":
            continue
        if cell.role == "exercise" and edition == "solution":
            cells.append(_code_cell(solutions[cell.course_id], role="solution", editable=False))
        elif cell.kind == "code":
            cells.append(_code_cell(cell, role=cell.role, editable=cell.role == "exercise"))
        else:
            cells.append(_markdown_cell(cell))
        if cell.role == "question":
            text = references[cell.course_id].source if edition == "solution" else ANSWER_PLACEHOLDER
            answer = v4.new_markdown_cell(text)
            answer.metadata.update(course_role="answer", course_id=cell.course_id)
            answer.metadata["deletable"] = False
            cells.append(answer)
    nb.cells = cells
    _assign_ids(nb)
    nbformat.validate(nb)
    return nb


def _locked(cell: nbformat.NotebookNode) -> nbformat.NotebookNode:
    cell.metadata["editable"] = False
    cell.metadata["deletable"] = False
    return cell


def _markdown_cell(cell: Cell) -> nbformat.NotebookNode:
    nb_cell = _locked(v4.new_markdown_cell(cell.source))
    if cell.role:
        nb_cell.metadata.update(course_role=cell.role, course_id=cell.course_id)
    return nb_cell


def _code_cell(cell: Cell, *, role: str | None, editable: bool) -> nbformat.NotebookNode:
    kept, metadata = [], {}
    lines = cell.source.splitlines()
    n_options = next((i for i, line in enumerate(lines) if not _OPTION_LINE.match(line)), len(lines))
    for line in lines[:n_options]:
        key = _OPTION_LINE.match(line)[1].split(":", 1)[0].strip()
        if key in QUARTO_OPTIONS and not (key == "eval" and role == "exercise"):
            kept.append(line)  # `eval: false` only keeps the blanks out of the site; students run it
    for key, value in cell.options.items():
        if key not in QUARTO_OPTIONS:
            metadata[key] = value
    if role:
        metadata["course_role"] = role
    tags = list(metadata.pop("tags", []) or [])
    if role == "gpu" and NBVAL_IGNORE not in tags:
        tags.append(NBVAL_IGNORE)  # the GPU cell prints the machine's own timings
    nb_cell = v4.new_code_cell("\n".join(kept + lines[n_options:]))
    nb_cell.metadata.update(metadata)
    if tags:
        nb_cell.metadata["tags"] = tags
    nb_cell.metadata["deletable"] = False
    if not editable:
        nb_cell.metadata["editable"] = False
    return nb_cell


def _assign_ids(nb: nbformat.NotebookNode) -> None:
    """Stable ids: graded cells by role and course_id, the rest by position."""
    for n, cell in enumerate(nb.cells):
        role, course_id = cell.metadata.get("course_role"), cell.metadata.get("course_id")
        cell["id"] = f"{role}-{course_id}" if role and course_id else f"cell-{n:03d}"


def strip_outputs(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy without what execution adds (outputs, counts, the kernel's language_info details):
    what `build --check` compares."""
    clean = nbformat.from_dict(nb)
    clean.metadata["language_info"] = {"name": clean.metadata.get("language_info", {}).get("name", "python")}
    for cell in clean.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("execution", None)
    return clean

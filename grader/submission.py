"""Read a submitted notebook safely: only the exercise cell's code and the answer cells' text.

Outputs, attachments and every other cell are ignored (nothing from the notebook is ever executed
except the blank fills, and those only through the instructor's template). Problems become a
SubmissionError with a report error id: `invalid_notebook` (too large, not JSON, not nbformat 4,
no cells), `missing_metadata` (no `metadata.course.lesson` and no --lesson), `missing_cell`.
"""
from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from pathlib import Path

from .lesson import ANSWER_PLACEHOLDER

MAX_BYTES = 20 * 1024 * 1024
MAX_ANSWER_CHARS = 20_000     # longer answers are scored on their first 20k characters
MAX_FALLBACK_CELLS = 200      # code cells compared with the template when no cell carries the exercise id


class SubmissionError(Exception):
    def __init__(self, error_id: str, message: str):
        super().__init__(message)
        self.error_id, self.message = error_id, message


@dataclass(frozen=True)
class Notebook:
    """The parts of a notebook the grader reads."""

    lesson: str | None                        # metadata.course.lesson
    cells: tuple[dict, ...] = field(repr=False)


def read_notebook(path: Path, max_bytes: int = MAX_BYTES) -> Notebook:
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise SubmissionError("invalid_notebook", f"文件有 {size / 2**20:.1f} MiB，超过 {max_bytes / 2**20:.0f} MiB 的上限"
                                  "（清除输出后再提交：Kernel → Restart & Clear Output）")
        with path.open("rb") as fh:
            raw = fh.read(max_bytes + 1)
    except OSError as exc:
        raise SubmissionError("invalid_notebook", f"无法读取文件：{exc.strerror or exc}") from None
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise SubmissionError("invalid_notebook", f"不是合法的 JSON 笔记本：{str(exc)[:120]}") from None
    if not isinstance(data, dict):
        raise SubmissionError("invalid_notebook", "不是 Jupyter 笔记本（顶层不是 JSON 对象）")
    if data.get("nbformat") != 4:
        raise SubmissionError("invalid_notebook", f"需要 nbformat 4 的笔记本，这个文件是 nbformat {data.get('nbformat')!r}")
    cells = data.get("cells")
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        raise SubmissionError("invalid_notebook", "笔记本没有合法的 cells 列表")
    metadata = data.get("metadata")
    course = metadata.get("course") if isinstance(metadata, dict) else None
    lesson = course.get("lesson") if isinstance(course, dict) else None
    return Notebook(_encodable(lesson) if isinstance(lesson, str) and lesson else None, tuple(cells))


def cell_source(cell: dict) -> str:
    source = cell.get("source", "")
    if isinstance(source, list):
        source = "".join(s for s in source if isinstance(s, str))
    return _encodable(source) if isinstance(source, str) else ""


def _encodable(text: str) -> str:
    """JSON may carry lone surrogates ("\\ud800") that cannot be printed or written as UTF-8."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _meta(cell: dict) -> dict:
    meta = cell.get("metadata")
    return meta if isinstance(meta, dict) else {}


def find_exercise(notebook: Notebook, exercise_id: str, template: str) -> tuple[str, str]:
    """(code, how it was found): by `course_role`/`course_id`, else the code cell most like the template."""
    for cell in notebook.cells:
        meta = _meta(cell)
        # The solution notebook keeps the same id with role "solution" in the exercise's place.
        if (cell.get("cell_type") == "code" and meta.get("course_role") in ("exercise", "solution")
                and meta.get("course_id") == exercise_id):
            return cell_source(cell), "metadata"
    best, best_ratio = None, 0.0
    code_cells = [cell for cell in notebook.cells if cell.get("cell_type") == "code"][:MAX_FALLBACK_CELLS]
    for cell in code_cells:
        source = cell_source(cell)
        if not source or len(source) > 4 * len(template) + 1000:
            continue
        matcher = difflib.SequenceMatcher(None, source, template, autojunk=False)
        if matcher.real_quick_ratio() > best_ratio and matcher.quick_ratio() > best_ratio:
            ratio = matcher.ratio()
            if ratio > best_ratio:
                best, best_ratio = source, ratio
    if best is not None and best_ratio >= 0.6:
        return best, "similarity"
    if _turned_into_text(notebook, exercise_id, template):
        raise SubmissionError("missing_cell", f"练习单元 {exercise_id!r} 被改成了 Markdown（或 Raw）单元：把它改回代码（Code）单元"
                              "（选中该单元，按 Esc 再按 Y，或在工具栏的下拉框里选 Code），保存后再自查")
    raise SubmissionError("missing_cell", f"找不到练习单元 {exercise_id!r}（没有带 course_id 的代码单元，也没有与模板相近的代码单元）")


def _turned_into_text(notebook: Notebook, exercise_id: str, template: str) -> bool:
    """A non-code cell that carries the exercise's metadata or the template's first code line."""
    first = next((line.strip() for line in template.splitlines() if line.strip() and not line.lstrip().startswith("#")), None)
    for cell in notebook.cells:
        if cell.get("cell_type") == "code":
            continue
        meta = _meta(cell)
        if meta.get("course_role") == "exercise" and meta.get("course_id") == exercise_id:
            return True
        if first and first in cell_source(cell):
            return True
    return False


def answer_text(source: str) -> str:
    """The student's answer with the placeholder line removed; "" when nothing else is there."""

    lines = [line for line in source.splitlines() if line.strip() != ANSWER_PLACEHOLDER]
    return "\n".join(lines).strip()[:MAX_ANSWER_CHARS]


def find_answers(notebook: Notebook) -> dict:
    """course_id -> answer text ("" when empty); an id is absent when its answer cell is missing."""
    answers = {}
    for cell in notebook.cells:
        meta = _meta(cell)
        if meta.get("course_role") == "answer" and isinstance(meta.get("course_id"), str):
            answers.setdefault(meta["course_id"], answer_text(cell_source(cell)))
    return answers

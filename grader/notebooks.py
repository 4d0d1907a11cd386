"""Turn a parsed lesson into its two notebooks: the exercise (student) and the solution (reference).

The notebook contract other tools rely on:
- `metadata.course = {"lesson": <name>, "edition": "exercise" | "solution"}`;
- graded cells carry string `metadata.course_role` and `metadata.course_id`, as `quarto convert`
  would place unknown cell options; Quarto's own options stay in the source as `#|` lines;
- the exercise notebook has the exercise cell (blanks intact) and, after each question, a markdown
  cell `course_role: "answer"` holding only ANSWER_PLACEHOLDER; the solution notebook has the
  solution in the exercise's place and the reference answer in each answer cell;
- every cell but the exercise and the answers is locked with Jupyter's `editable`/`deletable`;
  the exercise and answer cells cannot be deleted. (No notebook metadata stops JupyterLab from
  changing a cell's type: its changeCellType re-creates the cell and keeps the metadata, so the
  grader recognises a Markdown cell carrying the exercise and says how to turn it back.)
- the exercise edition ends with a locked self-check cell (`course_role: "self_check"`) that runs
  `python -m grader check` with the kernel's own Python on the notebook file next to it;
- `metadata.course.generated_sha256` is the digest of the cells as generated (`cells_digest`),
  so `build` can tell a notebook it wrote from one somebody typed into.
"""
from __future__ import annotations

import hashlib
import json
import re

import nbformat
from nbformat import v4

from .paths import SUBMISSIONS
from .lesson import ANSWER_PLACEHOLDER, QUARTO_OPTIONS, Cell, Lesson, _OPTION_LINE

EDITIONS = ("exercise", "solution")
FOLDERS = {"exercise": "exercises", "solution": "solutions"}   # where `build` writes each edition
WORK = "work"                  # the git-ignored folder of `python -m grader start` (grader/workspace.py)
SELF_CHECK = "self_check"
NBVAL_IGNORE = "nbval-ignore-output"
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
PYTHON = ".venv/bin/python"


def work_copy(lesson_name: str, student: str | None = None) -> str:
    """Where `python -m grader start` puts a student's copy, relative to the repository root."""
    name = f"{lesson_name}.ipynb"
    return f"{SUBMISSIONS}/{student}/{name}" if student else f"{WORK}/{name}"


LOCKS = ("> 🔒 锁定的单元：除练习单元（带 `______`）和「✍️ 在此作答」单元外，其余单元都不能编辑或删除；"
         "练习单元和作答单元不能删除，练习单元必须保持为代码（Code）单元，最后的自查单元也是锁定的。")


def banner(lesson: Lesson, edition: str, copy: str | None = None) -> str:
    """The first cell. `copy`: the path of a student's own copy (grader/workspace.py), for its exact commands."""
    source = f"`lessons/{lesson.path.name}`"
    if edition == "solution":
        return (f"> **{lesson.title}** · 参考答案版（solution）\n>\n"
                f"> 本笔记本由 `python -m grader build` 从 {source} 自动生成并执行，请勿手工编辑："
                "改动请写在课程源文件里。")
    if copy:
        return (f"> **{lesson.title}** · 练习版（你的副本 `{copy}`）\n>\n"
                f"> 这是 `python -m grader start` 为你创建的练习副本；`python -m grader build` 和 `make course` "
                "不会改动它。只修改带 `______` 的练习单元和「✍️ 在此作答」单元。\n>\n"
                "> 自查：先保存（Ctrl+S），再运行最后一个单元；或者在仓库根目录运行 "
                f"`{PYTHON} -m grader check {copy}`。\n>\n" + LOCKS)
    mine, submit = work_copy(lesson.name), work_copy(lesson.name, "<你的名字>")
    return (f"> **{lesson.title}** · 练习版（exercise）\n>\n"
            f"> 本笔记本由 `python -m grader build` 从 {source} 自动生成，重新生成时会被覆盖：**不要在这里作答**。"
            "先在仓库根目录创建你自己的副本（已有的副本永远不会被覆盖）：\n>\n"
            f"> - 自学：`{PYTHON} -m grader start {lesson.name}` → `{mine}`\n"
            f"> - 交作业：`{PYTHON} -m grader start {lesson.name} --name <你的名字>` → `{submit}`\n>\n"
            f"> 在副本里作答；自查：先保存（Ctrl+S），再运行副本的最后一个单元，或运行 "
            f"`{PYTHON} -m grader check {mine}`。\n>\n" + LOCKS)


SELF_CHECK_CODE = '''\
# 自查（本单元已锁定）：先保存（Ctrl+S），再运行本单元。评分器读的是磁盘上的笔记本文件，没保存的改动不算。
# 它用本内核自己的 Python（sys.executable）对本笔记本旁边的文件运行 `python -m grader check`，
# 所以不论 JupyterLab 从哪个目录启动都能用。
import os
import subprocess
import sys
from pathlib import Path

NOTEBOOK = "{name}"
notebook = Path(os.environ.get("JPY_SESSION_NAME", ""))   # JupyterLab 告诉内核的笔记本路径
if notebook.suffix != ".ipynb" or not notebook.is_file():
    notebook = Path.cwd() / NOTEBOOK                      # 内核的工作目录就是笔记本所在的目录
notebook = notebook.resolve()
repo = next((d for d in notebook.parents if (d / "grader" / "__main__.py").is_file()), notebook.parent)
if not notebook.is_file():
    print(f"找不到 {{notebook}}：请在本笔记本所在的目录里打开它（文件名应为 {{NOTEBOOK}}）。")
else:
    run = subprocess.run([sys.executable, "-m", "grader", "check", str(notebook)], cwd=repo,
                         capture_output=True, text=True, env={{**os.environ, "COLUMNS": "100"}})
    print(run.stdout + run.stderr)
'''


def self_check_cell(lesson: Lesson) -> nbformat.NotebookNode:
    cell = _locked(v4.new_code_cell(SELF_CHECK_CODE.format(name=f"{lesson.name}.ipynb").rstrip("\n")))
    cell.metadata.update(course_role=SELF_CHECK, course_id=lesson.name)
    return cell


def cells_digest(nb: nbformat.NotebookNode) -> str:
    """sha256 of every cell's type and source: what a person changes when they type into a notebook."""
    cells = [[cell.get("cell_type"), _text(cell.get("source", ""))] for cell in nb.get("cells", [])]
    return hashlib.sha256(json.dumps(cells, ensure_ascii=False).encode()).hexdigest()


def _text(source) -> str:
    return "".join(source) if isinstance(source, list) else str(source)


def build_notebook(lesson: Lesson, edition: str, copy: str | None = None) -> nbformat.NotebookNode:
    """The notebook for one edition, without outputs (the solution is executed separately).

    `copy`: a student's own copy at this path (only changes the banner's commands)."""
    if edition not in EDITIONS:
        raise ValueError(f"edition must be one of {EDITIONS}, got {edition!r}")
    nb = v4.new_notebook()
    nb.nbformat, nb.nbformat_minor = 4, 5
    nb.metadata = {
        "kernelspec": dict(KERNELSPEC),
        "language_info": {"name": "python"},
        "course": {"lesson": lesson.name, "edition": edition},
    }
    cells = [_locked(v4.new_markdown_cell(banner(lesson, edition, copy)))]
    solutions = {c.course_id: c for c in lesson.find("solution")}
    references = {c.course_id: c for c in lesson.find("reference")}
    for cell in lesson.cells:
        if cell.role in ("solution", "reference"):
            continue  # placed where their exercise / question is
        if cell.answer_only and edition == "exercise":
            continue
        if getattr(cell, "web_only", False) or (getattr(cell, "student_only", False) and edition == "solution"):
            continue  # the OJS explorer and other browser-only content; student-only text
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
    if edition == "exercise":
        cells.append(self_check_cell(lesson))
    nb.cells = cells
    _assign_ids(nb)
    nb.metadata["course"]["generated_sha256"] = cells_digest(nb)
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


def merge_streams(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Join consecutive stream outputs of the same name in place (how a kernel splits one cell's
    stdout depends on timing, so an executed notebook would differ from build to build)."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        merged = []
        for output in cell.outputs:
            if (output.output_type == "stream" and merged and merged[-1].output_type == "stream"
                    and merged[-1].name == output.name):
                merged[-1].text = _text(merged[-1].text) + _text(output.text)
            else:
                merged.append(output)
        cell.outputs = merged
    return nb


WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_WIDGET_REF = re.compile(r"IPY_MODEL_([0-9a-f]{32})")
_HEX_ID = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{32}(?![0-9A-Za-z])")   # also inside IPY_MODEL_<id>


def stable_widget_ids(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The notebook with its ipywidgets model ids (random uuids, new on every run) renamed in a fixed
    order: the widgets the outputs show, in cell order, then the models they refer to."""
    state = ((nb.metadata.get("widgets") or {}).get(WIDGET_STATE) or {}).get("state") or {}
    if not state:
        return nb
    order, seen = [], set()

    def visit(model_id: str) -> None:
        pending = [model_id]
        while pending:
            current = pending.pop()
            if current in seen or current not in state:
                continue
            seen.add(current)
            order.append(current)
            pending.extend(reversed(_WIDGET_REF.findall(json.dumps(state[current], sort_keys=True))))

    for cell in nb.cells:
        for output in cell.get("outputs", []):
            view = (output.get("data") or {}).get(WIDGET_VIEW)
            if isinstance(view, dict) and isinstance(view.get("model_id"), str):
                visit(view["model_id"])
    unshown = (m for m in state if m not in seen)
    for model_id in sorted(unshown, key=lambda m: _WIDGET_REF.sub("", json.dumps(state[m], sort_keys=True))):
        visit(model_id)
    names = {old: f"{n:032x}" for n, old in enumerate(order)}
    text = _HEX_ID.sub(lambda m: names.get(m[0], m[0]), nbformat.writes(nb, version=4))
    return nbformat.reads(text, as_version=4)


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

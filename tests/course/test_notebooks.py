"""The notebook contract that the grader and students rely on (see grader/notebooks.py)."""
import json
import shutil
import subprocess
import sys

import nbformat
import pytest

from grader.build import ROOT, build, render, stale_files, target
from grader.lesson import BLANK
from grader.notebooks import ANSWER_PLACEHOLDER, build_notebook

FREE_TEXT_IDS = {"lesson07": ["code-map", "Q1", "Q2", "Q3"]}


def by_role(nb, role):
    return [c for c in nb.cells if c.metadata.get("course_role") == role]


def test_notebook_metadata_and_format(lesson):
    for edition in ("exercise", "solution"):
        nb = build_notebook(lesson, edition)
        assert (nb.nbformat, nb.nbformat_minor) == (4, 5)
        nbformat.validate(nb)
        assert nb.metadata.course == {"lesson": lesson.name, "edition": edition}
        assert nb.metadata.kernelspec.name == "python3"
        assert len({c.id for c in nb.cells}) == len(nb.cells)
        assert "python -m grader build" in nb.cells[0].source  # the banner
        for cell in nb.cells:
            if "course_role" in cell.metadata:
                assert isinstance(cell.metadata.course_role, str)
                assert isinstance(cell.metadata.course_id, str)


def test_exercise_notebook_keeps_blanks_and_offers_answer_cells(lesson):
    nb = build_notebook(lesson, "exercise")
    exercises = by_role(nb, "exercise")
    assert [c.metadata.course_id for c in exercises] == lesson.exercise_ids
    for cell in exercises:
        assert cell.source == lesson.exercise(cell.metadata.course_id).code  # blanks exactly as in the lesson
        assert BLANK in cell.source
        assert cell.metadata.get("editable", True) is True and cell.metadata.deletable is False
    answers = by_role(nb, "answer")
    assert [c.metadata.course_id for c in answers] == lesson.question_ids
    assert all(c.cell_type == "markdown" and c.source == ANSWER_PLACEHOLDER for c in answers)
    if lesson.name in FREE_TEXT_IDS:
        assert sorted(lesson.question_ids) == sorted(FREE_TEXT_IDS[lesson.name])
    assert not by_role(nb, "solution")


def test_every_other_cell_is_locked(lesson):
    for edition in ("exercise", "solution"):
        for cell in build_notebook(lesson, edition).cells:
            if cell.metadata.get("course_role") in ("exercise", "answer"):
                continue
            assert cell.metadata.editable is False and cell.metadata.deletable is False, cell.id


def test_solution_notebook_has_solutions_and_references(lesson):
    nb = build_notebook(lesson, "solution")
    assert [c.metadata.course_id for c in by_role(nb, "solution")] == lesson.exercise_ids
    assert not by_role(nb, "exercise")
    for cell in by_role(nb, "answer"):
        assert cell.source == lesson.reference(cell.metadata.course_id).source


def test_custom_options_become_metadata_like_quarto_convert(lesson):
    nb = build_notebook(lesson, "solution")
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert "#| course_role" not in cell.source and "#| course_id" not in cell.source
    gpu = by_role(nb, "gpu")
    for cell in gpu:
        assert "nbval-ignore-output" in cell.metadata.tags


def test_committed_notebooks_are_in_sync():
    assert stale_files(ROOT) == []


def test_committed_solution_notebook_is_executed_without_errors(lesson):
    nb = nbformat.read(target(ROOT, lesson, "solution"), as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.execution_count is not None for c in code), "run `python -m grader build`"
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]


def test_check_names_the_stale_file(tmp_path):
    for name in ("lessons", "exercises", "solutions"):
        shutil.copytree(ROOT / name, tmp_path / name)
    build(tmp_path, run=False)
    assert stale_files(tmp_path) == []
    qmd = next((tmp_path / "lessons").glob("*.qmd"))
    qmd.write_text(qmd.read_text(encoding="utf-8") + "\n## 新的一节\n\n正文。\n", encoding="utf-8")
    stale = stale_files(tmp_path)
    assert stale == [f"exercises/{qmd.stem}.ipynb", f"solutions/{qmd.stem}.ipynb"]
    cli = subprocess.run([sys.executable, "-m", "grader", "build", "--check", "--root", str(tmp_path)],
                         capture_output=True, text=True, cwd=ROOT)
    assert cli.returncode == 1 and f"stale: exercises/{qmd.stem}.ipynb" in cli.stderr


def test_build_reports_lesson_errors_with_location(tmp_path):
    (tmp_path / "lessons").mkdir()
    (tmp_path / "lessons" / "bad.qmd").write_text("```{python}\n#| course_role: answerz\n```\n", encoding="utf-8")
    cli = subprocess.run([sys.executable, "-m", "grader", "build", "--root", str(tmp_path), "--no-execute"],
                         capture_output=True, text=True, cwd=ROOT)
    assert cli.returncode == 2
    assert "bad.qmd:2: unknown course_role 'answerz'" in cli.stderr
    assert "Traceback" not in cli.stderr


def test_rendering_is_deterministic(lesson):
    assert render(build_notebook(lesson, "exercise")) == render(build_notebook(lesson, "exercise"))
    json.loads(render(build_notebook(lesson, "solution")))

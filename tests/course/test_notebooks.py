"""The notebook contract that the grader and students rely on (see grader/notebooks.py)."""
import json
import shutil
import subprocess
import sys

import nbformat
import pytest
from nbformat import v4

from grader.build import ROOT, build, render, stale_files, target
from grader.execute import execute
from grader.lesson import BLANK
from grader.notebooks import ANSWER_PLACEHOLDER, build_notebook, cells_digest, merge_streams
from grader.submission import SubmissionError, find_exercise, read_notebook

FREE_TEXT_IDS = {"lesson07": ["code-map", "Q1", "Q2", "Q3"]}


def by_role(nb, role):
    return [c for c in nb.cells if c.metadata.get("course_role") == role]


def test_notebook_metadata_and_format(lesson):
    for edition in ("exercise", "solution"):
        nb = build_notebook(lesson, edition)
        assert (nb.nbformat, nb.nbformat_minor) == (4, 5)
        nbformat.validate(nb)
        assert nb.metadata.course == {"lesson": lesson.name, "edition": edition,
                                      "generated_sha256": cells_digest(nb)}
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
                assert cell.metadata.deletable is False, cell.id
                continue
            assert cell.metadata.editable is False and cell.metadata.deletable is False, cell.id


def test_web_only_and_student_only_content_stays_out_of_the_notebooks(lesson):
    for edition in ("exercise", "solution"):
        sources = [c.source for c in build_notebook(lesson, edition).cells]
        assert not [s for s in sources if "```ojs" in s or "```{ojs}" in s], edition
        for cell in lesson.cells:
            if cell.web_only or (cell.student_only and edition == "solution"):
                assert cell.source not in sources or not cell.source.strip(), (edition, cell.line)


def test_banner_names_the_workspace_commands_and_the_locks(lesson):
    banner = build_notebook(lesson, "exercise").cells[0].source
    assert f".venv/bin/python -m grader start {lesson.name}" in banner
    assert f"--name <你的名字>` → `submissions/<你的名字>/{lesson.name}.ipynb`" in banner
    assert f".venv/bin/python -m grader check work/{lesson.name}.ipynb" in banner
    assert "不要在这里作答" in banner and "🔒" in banner and "代码（Code）单元" in banner
    copy = build_notebook(lesson, "exercise", copy=f"submissions/张三/{lesson.name}.ipynb").cells[0].source
    assert f".venv/bin/python -m grader check submissions/张三/{lesson.name}.ipynb" in copy
    assert "先保存（Ctrl+S）" in copy and "不会改动它" in copy
    assert "grader start" not in build_notebook(lesson, "solution").cells[0].source


def test_exercise_ends_with_a_locked_self_check_that_uses_the_kernels_python(lesson):
    nb = build_notebook(lesson, "exercise")
    last = nb.cells[-1]
    assert last.cell_type == "code" and last.metadata.course_role == "self_check"
    assert last.metadata.editable is False and last.metadata.deletable is False
    assert "先保存（Ctrl+S）" in last.source and "sys.executable" in last.source
    assert f'NOTEBOOK = "{lesson.name}.ipynb"' in last.source
    compile(last.source, "self-check", "exec")
    assert not [c for c in build_notebook(lesson, "solution").cells if c.metadata.get("course_role") == "self_check"]


def test_a_markdown_exercise_cell_is_named_with_the_fix(lesson, tmp_path):
    nb = build_notebook(lesson, "exercise")
    exercise_id = lesson.exercise_ids[0]
    cell = next(c for c in nb.cells if c.metadata.get("course_role") == "exercise")
    template = cell.source
    for strip_metadata in (False, True):  # JupyterLab keeps the metadata on a type change; a copy-paste does not
        data = json.loads(render(nb))
        for raw in data["cells"]:
            if raw["metadata"].get("course_role") == "exercise":
                raw.update(cell_type="markdown")
                raw.pop("outputs"), raw.pop("execution_count")
                if strip_metadata:
                    raw["metadata"] = {}
        path = tmp_path / f"md-{strip_metadata}.ipynb"
        path.write_text(json.dumps(data), encoding="utf-8")
        with pytest.raises(SubmissionError) as caught:
            find_exercise(read_notebook(path), exercise_id, template)
        assert caught.value.error_id == "missing_cell" and "把它改回代码（Code）单元" in caught.value.message


def test_stream_outputs_are_merged_so_builds_are_reproducible(tmp_path):
    nb = v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nb.cells = [v4.new_code_cell("import sys, time\nprint('a', flush=True)\ntime.sleep(0.3)\nprint('b', flush=True)\n"
                                 "print('e', file=sys.stderr, flush=True)\ntime.sleep(0.3)\nprint('c', flush=True)")]
    execute(nb, cwd=tmp_path, timeout=60)
    assert len(nb.cells[0].outputs) >= 3  # what the kernel sends: split by timing
    merge_streams(nb)
    assert [(o.name, o.text) for o in nb.cells[0].outputs] == [("stdout", "a\nb\n"), ("stderr", "e\n"), ("stdout", "c\n")]


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


def test_widget_ids_are_stable_across_executions(tmp_path):
    pytest.importorskip("ipywidgets")
    from grader.notebooks import stable_widget_ids

    def run():
        nb = v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                      "language": "python"}})
        nb.cells = [v4.new_code_cell("import ipywidgets as w\nw.VBox([w.FloatSlider(value=0.7), w.IntSlider(value=4)])")]
        nb.cells[0].id = "widgets"
        execute(nb, cwd=tmp_path, timeout=60)
        return nb

    first, second = run(), run()
    assert render(first) != render(second)          # ipywidgets draws fresh uuids on every run
    assert render(stable_widget_ids(first)) == render(stable_widget_ids(second))
    view = stable_widget_ids(first).cells[0].outputs[0].data["application/vnd.jupyter.widget-view+json"]
    assert view["model_id"] in stable_widget_ids(first).metadata.widgets["application/vnd.jupyter.widget-state+json"]["state"]


def test_committed_notebooks_are_in_sync():
    assert stale_files(ROOT) == []


def test_committed_solution_has_no_split_streams(lesson):
    nb = nbformat.read(target(ROOT, lesson, "solution"), as_version=4)
    for cell in nb.cells:
        pairs = list(zip(cell.get("outputs", []), cell.get("outputs", [])[1:]))
        assert not [a for a, b in pairs if a.output_type == b.output_type == "stream" and a.name == b.name], cell.id


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

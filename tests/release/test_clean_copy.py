"""The release works on its own: a clean copy, a fresh virtual environment made from the release's
own requirements (nothing from this repository or its .venv), `start`, a filled notebook, `check`,
and the release's notebooks rebuilt from its own sources without Quarto.

The environment is `python -m venv` (no system site packages) plus `pip install -r
requirements-selfcheck.txt`, the part of the release's requirements the self-check needs (torch and
Jupyter are for reading the lesson, not for the self-check). Only where pip cannot reach an index
does it fall back to `--system-site-packages`, and says so with a warning.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from grader.lesson import load_lesson
from grader.paths import ROOT

pytestmark = pytest.mark.slow


def _run(args, cwd, timeout=300):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


@pytest.fixture(scope="module")
def clean(release_dir, tmp_path_factory) -> tuple[Path, Path]:
    """(a copy of the release, the Python of its own fresh environment)."""
    base = tmp_path_factory.mktemp("clean")
    course = base / "course"
    shutil.copytree(release_dir, course)
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    pip = _run([str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", "-r",
                "requirements-selfcheck.txt"], course)
    if pip.returncode != 0:
        warnings.warn("pip could not install the release's requirements (offline?); using --system-site-packages: "
                      + pip.stderr[-300:])
        shutil.rmtree(venv)
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=120)
    probe = _run([str(python), "-c", "import grader, sys; print(grader.__file__)"], course)
    assert probe.stdout.strip() == str(course / "grader" / "__init__.py"), probe
    return course, python


def _fill(path: Path, exercise_code: dict, answers: dict) -> None:
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        meta = cell["metadata"]
        if meta.get("course_role") == "exercise" and meta["course_id"] in exercise_code:
            cell["source"] = exercise_code[meta["course_id"]]
        if meta.get("course_role") == "answer" and meta["course_id"] in answers:
            cell["source"] = answers[meta["course_id"]]
    path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")


@pytest.fixture(scope="module")
def lesson():
    return load_lesson(ROOT / "lessons" / "lesson07.qmd")


def test_start_then_check_a_filled_notebook(clean, lesson):
    course, python = clean
    started = _run([str(python), "-m", "grader", "start", "lesson07", "--name", "alice"], course)
    assert started.returncode == 0, started.stderr
    notebook = course / "submissions" / "alice" / "lesson07.ipynb"
    solutions = {c.course_id: c.code for c in lesson.find("solution")}
    answers = {q: f"我的回答（{q}）：验证器持有均匀数，接受或拒绝草稿，所以输出分布等于 p。" for q in lesson.question_ids}
    _fill(notebook, solutions, answers)
    check = _run([str(python), "-m", "grader", "check", str(notebook.relative_to(course))], course)
    assert check.returncode == 0, check.stdout + check.stderr
    out = check.stdout
    assert "✗" not in out
    asserts = sum(line.strip().startswith("assert ") for code in solutions.values() for line in code.splitlines())
    assert out.count("✓ 第") == asserts          # every visible assertion of every exercise, run and passed
    assert "隐藏检查" in out and "评分时" in out
    assert "通过条件：总分至少 8/10" in out
    assert "本地能做的检查全部通过" in out


def test_check_reports_a_wrong_fill_an_edit_and_empty_answers(clean, lesson):
    course, python = clean
    started = _run([str(python), "-m", "grader", "start", "lesson07", "--name", "bob"], course)
    assert started.returncode == 0, started.stderr
    notebook = course / "submissions" / "bob" / "lesson07.ipynb"
    template = lesson.exercise("rejection-rule").code
    wrong = template.replace("accept_probability = ______", "accept_probability = 0.5", 1) \
                    .replace("[______ for p, q", "[p for p, q", 1)
    _fill(notebook, {"rejection-rule": wrong}, {})
    out = _run([str(python), "-m", "grader", "check", str(notebook)], course)
    assert out.returncode == 1
    assert "✗ 第" in out.stdout and "AssertionError" in out.stdout
    assert "还没有作答" in out.stdout

    edited = "\n".join(line for line in wrong.splitlines() if "assert residual ==" not in line)
    _fill(notebook, {"rejection-rule": edited}, {})
    out = _run([str(python), "-m", "grader", "check", str(notebook)], course)
    assert out.returncode == 1
    assert "被改动" in out.stdout

    forbidden = template.replace("accept_probability = ______", "accept_probability = __import__('os')", 1) \
                        .replace("[______ for p, q", "[p for p, q", 1)
    _fill(notebook, {"rejection-rule": forbidden}, {})
    out = _run([str(python), "-m", "grader", "check", str(notebook)], course)
    assert out.returncode == 1 and "不允许" in out.stdout


def test_check_usage_errors(clean):
    course, python = clean
    missing = _run([str(python), "-m", "grader", "check", "nope.ipynb"], course)
    assert missing.returncode == 2 and "找不到笔记本" in missing.stderr
    (course / "broken.ipynb").write_text("not json", encoding="utf-8")
    broken = _run([str(python), "-m", "grader", "check", "broken.ipynb"], course)
    assert broken.returncode == 1 and "invalid_notebook" in broken.stdout


def test_notebooks_rebuild_from_the_release_alone(clean):
    """The release's exercise notebooks are what its own lesson sources give, without Quarto."""
    course, python = clean
    script = ("import sys, nbformat\nfrom pathlib import Path\nfrom grader.selfcheck import student_lesson\n"
              "from grader.notebooks import build_notebook\n"
              "for qmd in sorted(Path('lessons').glob('*.qmd')):\n"
              "    nb = build_notebook(student_lesson(qmd), 'exercise')\n"
              "    same = nbformat.writes(nb, version=4) + '\\n' == (Path('exercises') / (qmd.stem + '.ipynb')).read_text()\n"
              "    print(qmd.stem, same)\n")
    out = _run([str(python), "-c", script], course)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["lesson07", "True"]

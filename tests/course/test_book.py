"""The Quarto book: config, profiles, offline reading, and the real render when Quarto is here."""
import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from grader.build import ROOT, lesson_paths
from grader.lesson import load_lesson

CONFIG = yaml.safe_load((ROOT / "_quarto.yml").read_text(encoding="utf-8"))
ANSWER = yaml.safe_load((ROOT / "_quarto-answer.yml").read_text(encoding="utf-8"))
CHAPTERS = CONFIG["book"]["chapters"]
QMD = [ROOT / "index.qmd", *lesson_paths(ROOT)]


def test_book_config():
    assert CONFIG["project"]["type"] == "book"
    assert CONFIG["lang"] == "zh"
    assert CONFIG["execute"]["freeze"] == "auto"
    assert CONFIG["jupyter"] == "python3"
    assert CONFIG["book"]["search"] is True
    html = CONFIG["format"]["html"]
    assert html["code-copy"] is True and html["html-math-method"] == "mathml"


def test_chapters_exist_and_cover_every_lesson():
    assert CHAPTERS[0] == "index.qmd"
    for chapter in CHAPTERS:
        assert (ROOT / chapter).is_file(), chapter
    assert {f"lessons/{p.name}" for p in lesson_paths(ROOT)} <= set(CHAPTERS)


def test_answer_profile_is_an_overlay():
    assert "chapters" not in ANSWER.get("book", {}), "the chapter list is written once, in _quarto.yml"
    assert ANSWER["project"]["output-dir"] != CONFIG["project"]["output-dir"]


def test_answers_are_marked_for_the_answer_profile_only(lesson):
    text = lesson.path.read_text(encoding="utf-8")
    assert 'when-profile="answer"' in text
    assert all(c.answer_only for c in lesson.find("solution") + lesson.find("reference"))


@pytest.mark.parametrize("path", QMD, ids=[p.name for p in QMD])
def test_nothing_is_loaded_from_the_network_when_reading(path):
    text = path.read_text(encoding="utf-8")
    # Observable's standard library modules (Inputs, Plot, d3, require) come from a CDN.
    for pattern in (r"\bInputs\.", r"\bPlot\.", r"\brequire\(", r"\bimport\s+\{", r"\bd3\."):
        assert not re.search(pattern, text), f"{path.name}: {pattern} needs a CDN"
    # No external scripts, stylesheets, images or iframes.
    assert not re.search(r"""(src|href)=["']?https?://[^"' >]+\.(js|css|png|jpe?g|svg|gif)""", text)
    assert not re.search(r"!\[[^\]]*\]\(https?://", text)
    for key in ("include-in-header", "include-after-body"):
        assert key not in CONFIG["format"]["html"]


QUARTO = shutil.which("quarto")


@pytest.mark.skipif(QUARTO is None, reason="the Quarto render was skipped: no `quarto` binary on PATH "
                                           "(install it from https://quarto.org/docs/get-started/)")
@pytest.mark.parametrize("profile", ["student", "answer"])
def test_quarto_renders_without_warnings(profile, tmp_path):
    out = tmp_path / profile
    cmd = [QUARTO, "render", "--output-dir", str(out)] + (["--profile", "answer"] if profile == "answer" else [])
    env = dict(os.environ, QUARTO_PYTHON=sys.executable)  # execute cells with this environment's Python
    run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900, env=env)
    log = run.stdout + run.stderr
    assert run.returncode == 0, log
    assert not re.search(r"^\s*(WARN|WARNING)\b", log, re.M), log
    page = (out / "lessons" / "lesson07.html").read_text(encoding="utf-8")
    assert not re.search(r"""<(script|link)[^>]+(src|href)="https?://""", page), "a CDN reference in the page"
    lesson = load_lesson(ROOT / "lessons" / "lesson07.qmd")
    hidden = [line.strip() for c in lesson.find("solution") for line in c.code.splitlines()
              if line.strip() and line.strip() not in lesson.exercise(c.course_id).code]
    text = html.unescape(re.sub(r"<[^>]+>", "", page))  # highlighted code is split into spans
    shown = [h for h in hidden if h in text]
    assert (shown == []) if profile == "student" else shown

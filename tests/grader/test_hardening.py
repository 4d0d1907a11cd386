"""Regressions from a red-team pass: each attack here once scored, hung or crashed the grader."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from guards import finishes_within

from grader import grade
from grader.build import ROOT
from grader.integrity import Fill, IntegrityError, check_fill
from grader.normalise import plain
from grader.vetoes import find_vetoes

CORPUS = Path(__file__).resolve().parent / "corpus"
GOOD = CORPUS / "correct_ternary.ipynb"


def edited(tmp_path, name, change):
    nb = json.loads(GOOD.read_text(encoding="utf-8"))
    change(nb)
    path = tmp_path / name
    path.write_text(json.dumps(nb, ensure_ascii=True), encoding="utf-8")
    return path


def answer_cell(nb, course_id):
    return next(c for c in nb["cells"] if c["metadata"].get("course_role") == "answer"
                and c["metadata"].get("course_id") == course_id)


def test_the_notebook_cannot_choose_its_lesson_files(tmp_path):
    evil = tmp_path / "evil"
    evil.mkdir()
    shutil.copy(ROOT / "lessons" / "lesson07.qmd", evil / "evil.qmd")
    shutil.copy(ROOT / "lessons" / "lesson07.rubric.yml", evil / "evil.rubric.yml")
    for lesson in (str(evil / "evil.qmd"), "../../" + str(evil / "evil.qmd"), "lesson07/../lesson07"):
        path = edited(tmp_path, "sub.ipynb", lambda nb: nb["metadata"]["course"].update(lesson=lesson))
        report = grade.grade_one(path)
        assert [e.id for e in report.errors] == ["unknown_lesson"] and report.score == 0


def test_long_whitespace_and_digit_runs_do_not_backtrack(ctx):
    q1 = "q" + "\n" * 20000 + "z"
    digits = "部署后加速 " + "9" * 20000 + " 倍，生产环境总是如此。"
    answers = {"Q1": q1, "Q2": digits, "Q3": "1" * 20000}
    finishes_within(20, lambda: find_vetoes(answers, ctx.rubric.vetoes))
    assert plain("a \n\n \t b   c") == "a\nb c"


def test_a_lone_surrogate_still_gets_a_report(tmp_path):
    def poison(nb):
        answer_cell(nb, "Q1")["source"] = "部署后加速 3 倍，生产环境总是如此\ud800。"
    path = edited(tmp_path, "surrogate.ipynb", poison)
    out = tmp_path / "g.json"
    run = subprocess.run([sys.executable, "-m", "grader", "grade", str(path), "--json", str(out)],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in run.stderr
    result = json.loads(out.read_text(encoding="utf-8"))["results"][0]
    assert [v["id"] for v in result["vetoes"]] == ["veto.peak_speedup"]


@pytest.mark.parametrize("code", ["-" * 100_000 + "1", "not " * 50_000 + "1", "+".join(["qx"] * 200_000),
                                  "target_probs" + "[0]" * 50_000, "(" * 1500 + "1" + ")" * 1500])
def test_fills_that_break_the_parser_are_refused_cleanly(code):
    with pytest.raises(IntegrityError):
        check_fill(Fill(blank=0, code=code, line=13, source="accept_probability = ..."))


def test_many_unlabelled_code_cells_do_not_stall_the_fallback_search(tmp_path):
    def flood(nb):
        exercise = next(c for c in nb["cells"] if c["metadata"].get("course_role") == "exercise")
        exercise["metadata"] = {}
        copies = [dict(exercise, source="".join(exercise["source"]).replace("qx", f"qx{i}")) for i in range(3000)]
        nb["cells"] = copies + nb["cells"]
    path = edited(tmp_path, "flood.ipynb", flood)
    report = finishes_within(60, lambda: grade.grade_one(path))
    assert report.errors  # the exercise is not among the first cells compared: missing_cell, or integrity

"""The generic engine on a lesson that is not lesson 7: build, grade, check, several exercises,
the typed wire protocol, declared imports, the pass rule, internal errors, batch shaping."""
from __future__ import annotations

import json
import shutil

import pytest

from grader.checks import ChecksError, HiddenContext, build_suite, mixed_seed
from grader.grade import Options, context, grade_many, grade_one
from grader.rubric import load_rubric

from toyhelp import SOLUTION_FILLS, T1_ANSWER, grader


def test_the_toy_rubric_has_a_scored_and_a_challenge_exercise(toy_root):
    rubric = load_rubric(toy_root / "lessons" / "toy01.rubric.yml")
    assert [(e.id, e.scored) for e in rubric.exercises] == [("softmax", True), ("argmax", False)]
    assert [c.id for c in rubric.optional_criteria] == ["challenge.argmax"]
    assert rubric.max_score == 5 and rubric.pass_rule.require == ("code.softmax",)
    assert rubric.exercise_by_id("softmax").imports == ("math",)


def test_full_marks_with_dicts_tuples_and_a_declared_import(toy_root, notebook):
    path = notebook(SOLUTION_FILLS, {"T1": T1_ANSWER})
    report = grade_one(path, Options(root=toy_root))
    assert (report.score, report.max_score, report.passed, report.errors) == (5, 5, True, ())
    assert [(c.id, c.points) for c in report.optional] == [("challenge.argmax", 1)]
    assert all(c.exercise in ("softmax", "argmax") for c in report.checks)
    d = report.to_dict()
    assert d["status"] == "passed" and d["optional"][0]["points"] == 1 and d["pass_problems"] == []


def test_an_untouched_challenge_is_not_attempted_not_an_error(toy_root, notebook):
    path = notebook({"softmax": SOLUTION_FILLS["softmax"]}, {"T1": T1_ANSWER})
    report = grade_one(path, Options(root=toy_root))
    assert report.passed and report.score == 5 and not report.errors
    assert report.optional[0].points == 0 and "选做" in report.optional[0].feedback


def test_the_pass_rule_requires_the_code_criterion(toy_root, notebook):
    # Right structure, wrong entropy: the code criterion is 0 -> 2/5 and the required criterion fails.
    path = notebook({"softmax": ["(x - top) / temperature", "0.0"], "argmax": ["logits.index(best)"]}, {"T1": T1_ANSWER})
    report = grade_one(path, Options(root=toy_root))
    assert report.score == 2 and not report.passed
    assert any("代码·softmax" in p for p in report.pass_problems)
    assert "entropy" in report.criteria[0].feedback


def test_changed_lines_outside_the_blanks_are_an_integrity_error(toy_root, notebook):
    def loosen(nb):
        for cell in nb["cells"]:
            if cell.get("metadata", {}).get("course_id") == "softmax":
                cell["source"] = cell["source"].replace("< 1e-12", "< 1e9")
    report = grade_one(notebook(SOLUTION_FILLS, {"T1": T1_ANSWER}, edit=loosen), Options(root=toy_root))
    assert [e.id for e in report.errors] == ["integrity"] and report.criteria[0].points == 0


def test_without_the_declared_import_the_exercise_cannot_use_math(toy_root, notebook, tmp_path):
    root = tmp_path / "course"
    shutil.copytree(toy_root / "lessons", root / "lessons")
    rubric = root / "lessons" / "toy01.rubric.yml"
    rubric.write_text(rubric.read_text(encoding="utf-8").replace("    imports: [math]\n", ""), encoding="utf-8")
    report = grade_one(notebook(SOLUTION_FILLS, {"T1": T1_ANSWER}), Options(root=root))
    assert report.criteria[0].points == 0 and "NameError" in report.criteria[0].feedback


def test_a_judge_that_raises_is_an_internal_error_not_lost_points(toy_root, notebook, tmp_path):
    """Regression (issue 14, bug 1): a grader bug used to become a silent failed check."""
    root = tmp_path / "course"
    shutil.copytree(toy_root / "lessons", root / "lessons")
    checks = root / "lessons" / "toy01.checks.py"
    checks.write_text(checks.read_text(encoding="utf-8").replace(
        "        bad = [(_problem(o.value, e, tol)", "        len(None)\n        bad = [(_problem(o.value, e, tol)"),
        encoding="utf-8")
    report = grade_one(notebook(SOLUTION_FILLS, {"T1": T1_ANSWER}), Options(root=root))
    internal = [e for e in report.errors if e.id == "internal"]
    assert internal and "TypeError" in internal[0].detail and "Traceback" in internal[0].detail
    assert report.needs_review and not report.passed
    assert "评分器内部" in report.criteria[0].feedback
    assert "detail" in report.to_dict()["errors"][0]


def test_the_salt_changes_every_hidden_input(toy_root, monkeypatch):
    path = toy_root / "lessons" / "toy01.checks.py"
    plain = build_suite(path, "softmax", HiddenContext("softmax", {"cases": 5, "tolerance": 1e-9}, mixed_seed(7, "")))
    salted = build_suite(path, "softmax", HiddenContext("softmax", {"cases": 5, "tolerance": 1e-9}, mixed_seed(7, "s3cret")))
    assert plain.calls_json != salted.calls_json
    monkeypatch.setenv("COURSE_GRADER_SALT", "s3cret")
    assert mixed_seed(7) == mixed_seed(7, "s3cret") != 7


def test_a_missing_builder_or_bad_settings_name_the_file(toy_root):
    path = toy_root / "lessons" / "toy01.checks.py"
    with pytest.raises(ChecksError, match="no check builder"):
        build_suite(path, "nope", HiddenContext("softmax", {}, 1))
    with pytest.raises(ChecksError, match="hidden.cases"):
        build_suite(path, "softmax", HiddenContext("softmax", {"cases": "many"}, 1))


def test_unreadable_notebooks_take_the_batch_lesson_even_with_two_lessons(toy_root, notebook, tmp_path):
    """Regression (issue 14): with a second rubric present, unreadable notebooks got max_score 0."""
    root = tmp_path / "course"
    shutil.copytree(toy_root / "lessons", root / "lessons")
    for suffix in (".qmd", ".rubric.yml", ".checks.py"):   # a second lesson beside it
        shutil.copy(root / "lessons" / f"toy01{suffix}", root / "lessons" / f"toy02{suffix}")
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json", encoding="utf-8")
    good = notebook(SOLUTION_FILLS, {"T1": T1_ANSWER})
    reports = grade_many([str(good), str(broken)], Options(root=root), jobs=1)
    assert reports[1].lesson == "toy01" and reports[1].max_score == 5
    assert [c.id for c in reports[1].criteria] == [c.id for c in reports[0].criteria]


def test_the_context_has_every_exercise_scored_first(toy_root):
    ctx = context("toy01", toy_root)
    assert [e.exercise.id for e in ctx.exercises] == ["softmax", "argmax"]
    assert ctx.exercises[0].suite.hidden_count == 2


def test_cli_grade_and_check_on_the_toy_lesson(toy_root, notebook, tmp_path):
    path = notebook(SOLUTION_FILLS, {"T1": T1_ANSWER})
    out = tmp_path / "grades.json"
    run = grader("grade", path, "--lesson", toy_root / "lessons" / "toy01.qmd", "--json", out, "--quiet")
    assert run.returncode == 0, run.stdout + run.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    result = (data["results"] if isinstance(data, dict) else data)[0]
    assert result["score"] == 5 and result["status"] == "passed"
    failing = notebook({"softmax": ["(x - top) / temperature", "0.0"]}, {"T1": ""}, name="failing.ipynb")
    run = grader("check", failing, "--lesson", toy_root / "lessons" / "toy01.qmd")
    assert run.returncode == 1 and "entropy" in run.stdout

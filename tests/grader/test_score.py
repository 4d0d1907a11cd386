"""Scoring is a pure function of check results, text results, vetoes, errors and overrides."""
from grader.checks import CheckResult
from grader.score import Override, ReportError, score
from grader.text import TextResult
from grader.vetoes import VetoHit

CONTRACT = {"submission", "lesson", "score", "max_score", "threshold", "passed", "needs_review", "criteria", "vetoes", "errors"}


def all_checks(rubric, failing=()):
    return [CheckResult(i, i not in failing, "ok" if i not in failing else "不一致", i.startswith("visible"), exercise=criterion.exercise)
            for criterion in rubric.code_criteria for i in criterion.checks]


def full_texts(rubric, **points):
    return {c.id: TextResult(c.id, points.get(c.id.replace(".", "_"), c.points), c.points, (), (), (), False, "要点齐全。")
            for c in rubric.text_criteria}


def test_full_marks(rubric):
    report = score(rubric, "a.ipynb", checks=all_checks(rubric), texts=full_texts(rubric))
    assert (report.score, report.passed, report.needs_review) == (10, True, False)
    d = report.to_dict()
    assert CONTRACT <= set(d)
    assert [set(c) >= {"id", "points", "max_points", "feedback"} for c in d["criteria"]] == [True] * 6


def test_code_criteria_are_all_or_nothing(rubric):
    report = score(rubric, "a.ipynb", checks=all_checks(rubric, failing={"main.identity"}), texts=full_texts(rubric))
    points = {c.id: c.points for c in report.criteria}
    assert points["code.main_path"] == 0 and points["code.boundary"] == 1
    assert "隐藏检查 main.identity" in report.criteria[0].feedback
    # The seed's pass rule: 8 points are not enough when the code exercise's main path fails.
    assert report.score == 8 and not report.passed
    assert any("代码·主路径" in p for p in report.pass_problems)


def test_code_problem_zeroes_every_code_criterion(rubric):
    report = score(rubric, "a.ipynb", checks=all_checks(rubric), code_problem="integrity", texts=full_texts(rubric),
                   errors=[ReportError("integrity", "第 21 行")])
    assert [c.points for c in report.criteria if c.kind == "code"] == [0, 0]
    assert report.score == 7 and not report.passed


def test_errors_fail_even_with_enough_points(rubric):
    report = score(rubric, "a.ipynb", checks=all_checks(rubric), texts=full_texts(rubric),
                   errors=[ReportError("missing_cell", "Q3")])
    assert report.score == 10 and not report.passed


def test_veto_fails_and_asks_for_review(rubric):
    hit = VetoHit("veto.peak_speedup", "Q1", "生产中总有 3 倍加速。", "…")
    report = score(rubric, "a.ipynb", checks=all_checks(rubric), texts=full_texts(rubric), vetoes=[hit])
    assert (report.score, report.passed, report.needs_review) == (10, False, True)
    assert report.to_dict()["vetoes"][0] == {"id": "veto.peak_speedup", "evidence": "生产中总有 3 倍加速。", "answer": "Q1",
                                             "message": "…"}


def test_overrides_set_points_and_clear_vetoes(rubric):
    hit = VetoHit("veto.peak_speedup", "Q1", "生产中总有 3 倍加速。", "…")
    override = Override({"Q2": 2}, ("veto.peak_speedup",), "已核对", "王老师")
    report = score(rubric, "a.ipynb", checks=all_checks(rubric), texts=full_texts(rubric, Q2=0), vetoes=[hit],
                   override=override)
    q2 = next(c for c in report.criteria if c.id == "Q2")
    assert q2.points == 2 and q2.overridden == {"from": 0, "to": 2, "by": "王老师"}
    assert report.vetoes == () and report.passed
    d = report.to_dict()
    assert d["vetoes_cleared"] == [{"id": "veto.peak_speedup", "evidence": "生产中总有 3 倍加速。", "by": "王老师"}]
    assert d["override_note"] == "已核对"
    assert next(c for c in d["criteria"] if c["id"] == "Q2")["overridden"]["from"] == 0


def test_needs_review_comes_from_text(rubric):
    texts = full_texts(rubric)
    texts["Q1"] = TextResult("Q1", 1, 2, (), (), ("copy",), True, "copy")
    report = score(rubric, "a.ipynb", checks=all_checks(rubric), texts=texts)
    assert report.needs_review and report.score == 9

"""The lesson's own notebooks: the solution scores full marks, the untouched exercise scores 0."""
from grader.build import ROOT
from grader.grade import Options, grade_one

SOLUTION = str(ROOT / "solutions" / "lesson07.ipynb")
EXERCISE = str(ROOT / "exercises" / "lesson07.ipynb")


def points(report):
    return {c.id: c.points for c in report.criteria}


def test_solution_gets_full_marks_on_every_code_criterion():
    report = grade_one(SOLUTION)
    assert report.errors == ()
    assert points(report)["code.main_path"] == 2 and points(report)["code.boundary"] == 1
    assert all(c.passed for c in report.checks)


def test_reference_answers_get_full_marks_when_graded_as_the_reference():
    report = grade_one(SOLUTION, Options(as_reference=True))
    assert report.score == report.max_score == 10 and report.passed and not report.needs_review
    assert report.vetoes == ()


def test_solution_graded_as_a_submission_is_a_copy():
    """The reference answers handed in as one's own are copies: no argument of the student's, 0 points."""
    report = grade_one(SOLUTION)
    assert [points(report)[q] for q in ("code.source_map", "Q1", "Q2", "Q3")] == [0, 0, 0, 0] and not report.passed


def test_untouched_exercise_scores_zero_without_crashing():
    report = grade_one(EXERCISE)
    assert report.score == 0 and not report.passed and report.errors == ()
    assert "未填写的空白" in report.criteria[0].feedback
    assert [c.id for c in report.checks if c.public][:3] == ["visible.line21", "visible.line22", "visible.line23"]

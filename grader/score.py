"""Scoring: check results, text results, vetoes, errors and overrides in; a Report out. Pure.

Rules (the rubric supplies the numbers):
- a code criterion gets its points when every check it lists passed, else 0 (all-or-nothing:
  partial hidden-check credit would reward e.g. an α without min(1, ·) on the cases where p ≤ q);
  every code criterion is 0 when the code could not be graded (integrity, unfilled blanks, a
  sandbox timeout / memory / crash);
- a text criterion's points come from grader/text.py;
- an instructor override may set a criterion's points or clear a veto for one submission; the
  report keeps what it replaced;
- passed iff score >= pass_score, no veto remains, and no error was reported.
The dict form (`Report.to_dict`) is the JSON contract; keys may be added, never renamed.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .checks import CheckResult
from .text import TextResult
from .vetoes import VetoHit


@dataclass(frozen=True)
class ReportError:
    id: str          # invalid_notebook, missing_metadata, missing_cell, unknown_lesson, rubric, integrity,
    message: str     # forbidden, timeout, memory, crash, internal


@dataclass(frozen=True)
class Override:
    """An instructor's decision for one submission (see grader/overrides.py)."""

    points: dict = field(default_factory=dict)        # criterion id -> points
    clear_vetoes: tuple[str, ...] = ()
    note: str = ""
    by: str = ""


@dataclass(frozen=True)
class CriterionScore:
    id: str
    title: str
    kind: str
    points: int
    max_points: int
    feedback: str
    needs_review: bool = False
    checks: tuple[str, ...] = ()                      # ids of the checks behind a code criterion
    overridden: dict | None = None                    # {"from", "to", "by"}

    def to_dict(self) -> dict:
        out = {"id": self.id, "points": self.points, "max_points": self.max_points, "feedback": self.feedback,
               "title": self.title, "needs_review": self.needs_review}
        if self.overridden:
            out["overridden"] = dict(self.overridden)
        return out


@dataclass(frozen=True)
class Report:
    submission: str
    lesson: str | None
    score: int
    max_score: int
    threshold: int
    passed: bool
    needs_review: bool
    criteria: tuple[CriterionScore, ...]
    vetoes: tuple[VetoHit, ...]
    errors: tuple[ReportError, ...]
    checks: tuple[CheckResult, ...] = ()
    vetoes_cleared: tuple[dict, ...] = ()
    override_note: str = ""
    hidden_checks: int = 0
    hidden_calls: int = 0

    def to_dict(self) -> dict:
        out = {
            "submission": self.submission,
            "lesson": self.lesson,
            "score": self.score,
            "max_score": self.max_score,
            "threshold": self.threshold,
            "passed": self.passed,
            "needs_review": self.needs_review,
            "criteria": [c.to_dict() for c in self.criteria],
            "vetoes": [{"id": v.id, "evidence": v.evidence, "answer": v.answer, "message": v.message} for v in self.vetoes],
            "errors": [{"id": e.id, "message": e.message} for e in self.errors],
            "checks": [{"id": c.id, "passed": c.passed, "public": c.public, "message": c.message} for c in self.checks],
        }
        if self.vetoes_cleared:
            out["vetoes_cleared"] = [dict(v) for v in self.vetoes_cleared]
        if self.override_note:
            out["override_note"] = self.override_note
        return out


def code_score(criterion, checks: dict, code_problem: str | None) -> CriterionScore:
    if code_problem:
        return CriterionScore(criterion.id, criterion.title, "code", 0, criterion.points, code_problem,
                              checks=criterion.checks)
    failed = []
    for check_id in criterion.checks:
        result = checks.get(check_id)
        if result is None:
            failed.append(f"{check_id}：未运行")
        elif not result.passed:
            label = result.title or check_id
            failed.append(f"{label}：{result.message}" if result.public else f"隐藏检查 {check_id}：{result.message}")
    if failed:
        return CriterionScore(criterion.id, criterion.title, "code", 0, criterion.points, "；".join(failed),
                              checks=criterion.checks)
    return CriterionScore(criterion.id, criterion.title, "code", criterion.points, criterion.points,
                          f"{len(criterion.checks)} 项检查全部通过", checks=criterion.checks)


def text_score(criterion, result: TextResult) -> CriterionScore:
    return CriterionScore(criterion.id, criterion.title, "text", result.points, criterion.points, result.feedback,
                          needs_review=result.needs_review)


def _apply_override(item: CriterionScore, override: Override | None) -> CriterionScore:
    if override is None or item.id not in override.points:
        return item
    to = override.points[item.id]
    return CriterionScore(item.id, item.title, item.kind, to, item.max_points,
                          f"{item.feedback}（教师调整：{item.points} → {to}）", item.needs_review, item.checks,
                          {"from": item.points, "to": to, "by": override.by})


def score(rubric, submission: str, *, checks: list[CheckResult] = (), code_problem: str | None = None,
          texts: dict | None = None, vetoes: list[VetoHit] = (), errors: list[ReportError] = (),
          override: Override | None = None, hidden: tuple[int, int] = (0, 0)) -> Report:
    """The report for one submission. `texts`: criterion id -> TextResult (missing ones score 0)."""
    by_id = {c.id: c for c in checks}
    texts = texts or {}
    items = []
    for criterion in rubric.criteria:
        if criterion.kind == "code":
            item = code_score(criterion, by_id, code_problem)
        elif criterion.id in texts:
            item = text_score(criterion, texts[criterion.id])
        else:
            item = CriterionScore(criterion.id, criterion.title, "text", 0, criterion.points, "未评分（提交无法读取）")
        items.append(_apply_override(item, override))
    cleared = set(override.clear_vetoes) if override else set()
    kept = tuple(v for v in vetoes if v.id not in cleared)
    dropped = tuple({"id": v.id, "evidence": v.evidence, "by": override.by} for v in vetoes if v.id in cleared)
    total = sum(item.points for item in items)
    passed = total >= rubric.pass_score and not kept and not errors
    needs_review = any(item.needs_review for item in items) or bool(kept)
    return Report(submission, rubric.lesson, total, rubric.max_score, rubric.pass_score, passed, needs_review,
                  tuple(items), kept, tuple(errors), tuple(checks), dropped, override.note if override else "",
                  *hidden)


def failed_report(submission: str, errors: list[ReportError], lesson: str | None = None, rubric=None) -> Report:
    """A report for a submission that could not be read at all (or whose lesson is unknown)."""
    if rubric is not None:
        return score(rubric, submission, code_problem=errors[0].message, errors=errors)
    return Report(submission, lesson, 0, 0, 0, False, False, (), (), tuple(errors))

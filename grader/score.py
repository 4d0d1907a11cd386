"""Scoring: check results, text results, vetoes, errors and overrides in; a Report out. Pure.

Rules (the rubric supplies the numbers):
- a code criterion gets its points when every check it lists passed, else 0 (all-or-nothing:
  partial hidden-check credit would reward e.g. an α without min(1, ·) on the cases where p ≤ q);
  every code criterion is 0 when the code could not be graded (integrity, unfilled blanks, a
  sandbox timeout / memory / crash);
- a text criterion's points come from grader/text.py;
- an instructor override may set a criterion's points or clear a veto for one submission; the
  report keeps what it replaced;
- criteria of an unscored exercise (a challenge) are reported separately (`optional`) and do not
  count toward the score;
- passed iff the rubric's pass rule holds — score >= pass.min_score, every `pass.require`d
  criterion at full points, no veto remaining (when `pass.no_vetoes`) — and no error was reported;
  `pass_problems` says, in words, which part of the rule failed;
- status is `pending_review` (and passed is false) when a person's decision could flip the outcome:
  with every low-confidence text criterion at full points and unconfirmed vetoes cleared the rule
  holds, but with those criteria at 0 it does not (or the other way round). A veto stays undecided
  until an override confirms (`confirm_vetoes`) or clears (`clear_vetoes`) it; a criterion an
  override sets is decided (no review left on it).
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
    message: str     # forbidden, timeout, memory, killed, crash, internal, symlink, not_a_file
    detail: str = ""     # for the instructor: a traceback or the sandbox's own words (never shown to students)

    def to_dict(self) -> dict:
        out = {"id": self.id, "message": self.message}
        if self.detail:
            out["detail"] = self.detail
        return out


@dataclass(frozen=True)
class Override:
    """An instructor's decision for one submission (see grader/overrides.py)."""

    points: dict = field(default_factory=dict)        # criterion id -> points
    clear_vetoes: tuple[str, ...] = ()
    note: str = ""
    by: str = ""
    confirm_vetoes: tuple[str, ...] = ()              # vetoes a person read and kept
    at: str = ""                                      # when it was decided (ISO 8601)
    details: dict = field(default_factory=dict)       # criterion id -> {"by", "at"?, "note"?}

    def overridden(self, criterion_id: str, before: int) -> dict | None:
        """The report's `overridden` record for one criterion, or None when this decision leaves it alone."""
        if criterion_id not in self.points:
            return None
        out = {"from": before, "to": self.points[criterion_id], "by": self.by}
        if self.at:
            out["at"] = self.at
        out.update(self.details.get(criterion_id) or {})
        return out

    def veto_decision(self, veto_id: str) -> str | None:
        """"cleared", "confirmed" or None for a veto id."""
        if veto_id in self.clear_vetoes:
            return "cleared"
        if veto_id in self.confirm_vetoes:
            return "confirmed"
        return None


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
    text: dict | None = None                          # text: answer, confidence, confidence_reason, evidence

    @property
    def doubtful(self) -> bool:
        """Low-confidence text points that no person has confirmed."""
        return bool(self.text) and self.text.get("confidence") == "low" and not self.overridden

    def to_dict(self) -> dict:
        out = {"id": self.id, "points": self.points, "max_points": self.max_points, "feedback": self.feedback,
               "title": self.title, "needs_review": self.needs_review}
        if self.kind == "text":
            out["kind"] = "text"
            out.update(self.text or {})
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
    optional: tuple[CriterionScore, ...] = ()       # a challenge's criteria: reported, not counted
    warnings: tuple[str, ...] = ()                  # things an instructor should look at (needs_review)
    vetoes_confirmed: dict = field(default_factory=dict)    # veto id -> {"by", "at"?}: a person kept it
    veto_doubts: tuple = ()                         # doubtful veto hits nobody has decided yet (VetoHit)
    pass_problems: tuple[str, ...] = ()             # why the pass rule did not hold, in words
    pass_rule: dict | None = None                   # the rule as data, for the reports
    pending: bool = False                           # the outcome depends on doubtful points or an unconfirmed veto
    student: str = ""
    answers: dict = field(default_factory=dict)     # answer course_id -> the student's text (truncated)
    collusion: tuple[dict, ...] = ()                # {"answer", "other", "similarity"}

    @property
    def status(self) -> str:
        """passed | failed | pending_review (a person must look before it is a pass or a fail)."""
        if self.pending:
            return "pending_review"
        return "passed" if self.passed else "failed"

    def to_dict(self) -> dict:
        out = {
            "submission": self.submission,
            "lesson": self.lesson,
            "score": self.score,
            "max_score": self.max_score,
            "threshold": self.threshold,
            "passed": self.passed,
            "status": self.status,
            "needs_review": self.needs_review,
            "criteria": [c.to_dict() for c in self.criteria],
            "vetoes": [{"id": v.id, "evidence": v.evidence, "answer": v.answer, "message": v.message,
                        **({"confirmed": dict(self.vetoes_confirmed[v.id])} if v.id in self.vetoes_confirmed else {})}
                       for v in self.vetoes],
            "errors": [e.to_dict() for e in self.errors],
            "checks": [{"id": c.id, "exercise": c.exercise, "passed": c.passed, "public": c.public, "message": c.message}
                       for c in self.checks],
            "pass_problems": list(self.pass_problems),
            "student": self.student,
            "answers": dict(self.answers),
            "collusion": [dict(c) for c in self.collusion],
        }
        if self.pass_rule:
            out["pass_rule"] = dict(self.pass_rule)
        if self.optional:
            out["optional"] = [c.to_dict() for c in self.optional]
        if self.warnings:
            out["warnings"] = list(self.warnings)
        if self.vetoes_cleared:
            out["vetoes_cleared"] = [dict(v) for v in self.vetoes_cleared]
        if self.veto_doubts:   # possible vetoes for a person to confirm (confirm_vetoes) or clear (clear_vetoes)
            out["veto_doubts"] = [{"id": v.id, "evidence": v.evidence, "answer": v.answer, "message": v.message}
                                  for v in self.veto_doubts]
        if self.override_note:
            out["override_note"] = self.override_note
        return out


def code_score(criterion, checks: dict, code_problem: str | None) -> CriterionScore:
    """`checks`: (exercise id, check id) -> CheckResult."""
    if code_problem:
        return CriterionScore(criterion.id, criterion.title, "code", 0, criterion.points, code_problem,
                              checks=criterion.checks)
    failed, internal = [], False
    for check_id in criterion.checks:
        result = checks.get((criterion.exercise, check_id))
        if result is None:
            failed.append(f"{check_id}：未运行")
        elif result.internal:
            internal = True
            failed.append(result.message)
        elif not result.passed:
            label = result.title or check_id
            failed.append(f"{label}：{result.message}" if result.public else f"隐藏检查 {check_id}：{result.message}")
    if failed:
        return CriterionScore(criterion.id, criterion.title, "code", 0, criterion.points, "；".join(failed),
                              needs_review=internal, checks=criterion.checks)
    return CriterionScore(criterion.id, criterion.title, "code", criterion.points, criterion.points,
                          f"{len(criterion.checks)} 项检查全部通过", checks=criterion.checks)


def text_score(criterion, result: TextResult) -> CriterionScore:
    extra = {"answer": criterion.answer, "confidence": result.confidence, "confidence_reason": result.confidence_reason,
             "evidence": result.evidence}
    return CriterionScore(criterion.id, criterion.title, "text", result.points, criterion.points, result.feedback,
                          needs_review=result.needs_review, text=extra)


def _apply_override(item: CriterionScore, override: Override | None) -> CriterionScore:
    """A person's points replace the grader's: the criterion is decided (no review left on it)."""
    record = override.overridden(item.id, item.points) if override is not None else None
    if record is None:
        return item
    to = record["to"]
    return CriterionScore(item.id, item.title, item.kind, to, item.max_points,
                          f"{item.feedback}（教师调整：{item.points} → {to}）", False, item.checks, record, item.text)


def pass_problems(rubric, total: int, items, vetoes, errors) -> list[str]:
    """Which parts of the rubric's pass rule fail, in words (empty: passed)."""
    rule, problems = rubric.pass_rule, []
    if total < rule.min_score:
        problems.append(f"总分 {total} 低于通过线 {rule.min_score}/{rubric.max_score}")
    by_id = {item.id: item for item in items}
    for criterion_id in rule.require:
        item = by_id.get(criterion_id)
        if item is not None and item.points < item.max_points:
            problems.append(f"必须拿满的「{item.title}」只得了 {item.points}/{item.max_points}")
    if rule.no_vetoes and vetoes:
        problems.append("触发了否决规则：" + "、".join(sorted({v.id for v in vetoes})))
    if errors:
        problems.append("评分时出现错误：" + "、".join(dict.fromkeys(e.id for e in errors)))
    return problems


def score(rubric, submission: str, *, checks: list[CheckResult] = (), code_problem: str | dict | None = None,
          texts: dict | None = None, vetoes: list[VetoHit] = (), errors: list[ReportError] = (),
          override: Override | None = None, hidden: tuple[int, int] = (0, 0), warnings: tuple[str, ...] = (),
          doubts: list[VetoHit] = ()) -> Report:
    """The report for one submission. `texts`: criterion id -> TextResult (missing ones score 0).
    `code_problem`: why every code criterion is 0 (a string), or per exercise id (a dict)."""
    by_id = {(c.exercise or rubric.exercise.id, c.id): c for c in checks}
    texts = texts or {}
    problems = code_problem if isinstance(code_problem, dict) else {e.id: code_problem for e in rubric.exercises}
    items, optional = [], []
    for criterion in rubric.criteria:
        if criterion.kind == "code":
            item = code_score(criterion, by_id, problems.get(criterion.exercise))
        elif criterion.id in texts:
            item = text_score(criterion, texts[criterion.id])
        else:
            item = CriterionScore(criterion.id, criterion.title, "text", 0, criterion.points, "未评分（提交无法读取）")
        (optional if criterion.optional else items).append(_apply_override(item, override))
    decided = override.veto_decision if override else (lambda veto_id: None)
    # A doubtful veto (grader/vetoes.py: veto_doubts) is a veto only once a person confirms it; until
    # somebody decides, it counts as an undecided veto for pending_review.
    vetoes = tuple(vetoes) + tuple(d for d in doubts if decided(d.id) == "confirmed")
    open_doubts = tuple(d for d in doubts if decided(d.id) is None)
    kept = tuple(v for v in vetoes if decided(v.id) != "cleared")
    dropped = tuple({"id": v.id, "evidence": v.evidence, "by": override.by, **({"at": override.at} if override.at else {})}
                    for v in vetoes if decided(v.id) == "cleared")
    confirmed = {v.id: {"by": override.by, **({"at": override.at} if override.at else {})}
                 for v in kept if decided(v.id) == "confirmed"}
    undecided = tuple(v for v in kept if v.id not in confirmed)
    total = sum(item.points for item in items)
    why_not = pass_problems(rubric, total, items, kept, errors)
    # A submission a person has decided on (any override entry) has had its warnings read too.
    needs_review = (any(item.needs_review for item in items + optional) or bool(undecided)
                    or (bool(warnings) and override is None) or any(e.id == "internal" for e in errors))
    rule = rubric.pass_rule
    pending = pending_review(rubric, items, undecided + open_doubts, errors,
                             confirmed=tuple(v for v in kept if v.id in confirmed))
    return Report(submission=submission, lesson=rubric.lesson, score=total, max_score=rubric.max_score,
                  threshold=rule.min_score, passed=not why_not and not pending, needs_review=needs_review,
                  criteria=tuple(items), vetoes=kept, errors=tuple(errors), checks=tuple(checks), vetoes_cleared=dropped,
                  override_note=override.note if override else "", hidden_checks=hidden[0], hidden_calls=hidden[1],
                  optional=tuple(optional), warnings=tuple(warnings), pass_problems=tuple(why_not),
                  pass_rule={"min_score": rule.min_score, "require": list(rule.require), "no_vetoes": rule.no_vetoes},
                  pending=pending, vetoes_confirmed=confirmed, veto_doubts=open_doubts)


def _with_points(item: CriterionScore, points: int) -> CriterionScore:
    return CriterionScore(item.id, item.title, item.kind, points, item.max_points, item.feedback, item.needs_review,
                          item.checks, item.overridden, item.text)


def pending_review(rubric, items, undecided, errors, confirmed=()) -> bool:
    """Could a person's decision on the doubtful points (low-confidence text criteria nobody has decided,
    and vetoes nobody has confirmed or cleared) turn a pass into a fail or a fail into a pass?
    Confirmed vetoes count as vetoes. Grading errors are never pending."""
    doubtful = [i for i in items if i.doubtful]
    if errors or (not doubtful and not undecided):
        return False
    best = [_with_points(i, i.max_points) if i.doubtful else i for i in items]
    worst = [_with_points(i, 0) if i.doubtful else i for i in items]
    best_fails = pass_problems(rubric, sum(i.points for i in best), best, tuple(confirmed), errors)
    worst_fails = pass_problems(rubric, sum(i.points for i in worst), worst, tuple(confirmed) + tuple(undecided), errors)
    return bool(best_fails) != bool(worst_fails)


def failed_report(submission: str, errors: list[ReportError], lesson: str | None = None, rubric=None) -> Report:
    """A report for a submission that could not be read at all (or whose lesson is unknown)."""
    if rubric is not None:
        return score(rubric, submission, code_problem=errors[0].message, errors=errors)
    return Report(submission=submission, lesson=lesson, score=0, max_score=0, threshold=0, passed=False,
                  needs_review=False, criteria=(), vetoes=(), errors=tuple(errors),
                  pass_problems=tuple("评分时出现错误：" + e.id for e in errors[:1]))

"""The review queue: which answers of a `grade` JSON report need a person, grouped per question.

An item is one (submission, criterion) that needs a decision: the criterion is marked
`needs_review` or has `confidence: low`, or a veto or a possible-collusion pair points at its
answer. Criteria already `overridden` and vetoes already `confirmed` are decided and left out.
Every field of the report beyond `submission` is optional: older reports (no `answers`, `kind`,
`evidence`, `status` ...) still give a queue; the answer text then comes from the notebook when
it can be read, and the question and rubric texts from the lesson when it is known.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..overrides import student_id
from . import grouping

MAX_ANSWER_CHARS = 8000


class ReviewError(ValueError):
    """A report file that cannot be reviewed (the message names the file and what is wrong)."""


def load_reports(path: str | Path) -> list[dict]:
    """The reports of a `grade --json` file: {"results": [...]}, {"reports": [...]} or a bare list."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReviewError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ReviewError(f"{path}: not valid JSON: {exc}") from None
    if isinstance(data, dict):
        reports = data.get("results", data.get("reports"))
    else:
        reports = data
    if not isinstance(reports, list):
        raise ReviewError(f"{path}: expected {{\"results\": [...]}} or a list of reports, as `grade --json` writes")
    for n, report in enumerate(reports):
        if not isinstance(report, dict) or not isinstance(report.get("submission"), str):
            raise ReviewError(f"{path}: results[{n}]: expected a report with a `submission` path")
    return reports


@dataclass
class Lookup:
    """What the lesson and rubric add: question text, reference answer, criterion description."""

    questions: dict = field(default_factory=dict)      # answer id -> question text
    references: dict = field(default_factory=dict)     # answer id -> reference answer
    criteria: dict = field(default_factory=dict)       # criterion id -> {"answer", "description", "levels", "kind"}


def lesson_lookup(name: str | None) -> Lookup:
    """The lesson's texts, or an empty Lookup when the lesson cannot be loaded (the page says so)."""
    if not name:
        return Lookup()
    try:
        from ..grade import context

        ctx = context(name)
    except Exception:
        return Lookup()
    questions = {c.course_id: c.source for c in ctx.lesson.find("question")}
    criteria = {}
    for c in ctx.rubric.criteria:
        levels = [{"points": lv.points, "text": _level_text(lv)} for lv in getattr(c, "levels", ()) or ()]
        criteria[c.id] = {"answer": getattr(c, "answer", None), "description": getattr(c, "description", ""),
                          "levels": levels, "kind": getattr(c, "kind", None)}
    return Lookup(questions, dict(ctx.references), criteria)


def _level_text(level) -> str:
    parts = []
    for name in ("label", "description", "min_groups", "min_claims", "require"):
        value = getattr(level, name, None)
        if value in (None, (), [], ""):
            continue
        if isinstance(value, (list, tuple)):
            value = "、".join(map(str, value))
        parts.append(str(value) if name in ("label", "description") else f"{name}: {value}")
    return "；".join(parts)


def _answers_from_notebook(submission: str) -> dict:
    try:
        from ..submission import find_answers, read_notebook

        return find_answers(read_notebook(Path(submission)))
    except Exception:
        return {}


def _clip(text) -> str:
    text = "" if text is None else str(text)
    if len(text) > MAX_ANSWER_CHARS:
        return text[:MAX_ANSWER_CHARS] + f"\n…（已截断，原文 {len(text)} 字）"
    return text


def override_keys(reports: list[dict]) -> list[str]:
    """The key each submission gets in the overrides file: the student id if unique, else the path."""
    students = [str(r.get("student") or student_id(r["submission"])) for r in reports]
    counts = {s: students.count(s) for s in students}
    return [s if s and counts[s] == 1 else Path(r["submission"]).as_posix() for s, r in zip(students, reports)]


def _reasons(criterion: dict, vetoes: list, collusion: list, status: str | None) -> list[str]:
    reasons = []
    if status == "pending_review":
        reasons.append("pending_review")
    if criterion.get("confidence") == "low":
        reasons.append("low_confidence")
    if criterion.get("needs_review"):
        reasons.append("needs_review")
    if vetoes:
        reasons.append("veto")
    if collusion:
        reasons.append("collusion")
    return reasons


def build_queue(reports: list[dict], lookup: Lookup | None = None, *, read_notebooks: bool = True,
                source: str = "") -> dict:
    """The page's data: questions (each with its groups of item indexes) and the items."""
    lookup = lookup or Lookup()
    keys = override_keys(reports)
    items: list[dict] = []
    for report, key in zip(reports, keys):
        criteria = [c for c in report.get("criteria") or [] if isinstance(c, dict) and isinstance(c.get("id"), str)]
        answers = report.get("answers") if isinstance(report.get("answers"), dict) else None
        vetoes = [v for v in report.get("vetoes") or [] if isinstance(v, dict) and v.get("id") and not v.get("confirmed")]
        # Doubtful vetoes are decided the same way (confirm or clear), so they go in the same list.
        vetoes += [{**v, "message": "（可能的否决，评分器不确定）" + str(v.get("message") or "")}
                   for v in report.get("veto_doubts") or [] if isinstance(v, dict) and v.get("id")]
        collusion = [c for c in report.get("collusion") or [] if isinstance(c, dict)]
        status = report.get("status")
        answer_of = {}
        for c in criteria:
            answer_of[c["id"]] = c.get("answer") or (lookup.criteria.get(c["id"]) or {}).get("answer")
        used_vetoes = set()
        pending = []
        for c in criteria:
            if c.get("overridden"):
                continue
            answer = answer_of[c["id"]]
            own_vetoes = [v for v in vetoes if answer and v.get("answer") == answer]
            own_collusion = [x for x in collusion if answer and x.get("answer") == answer]
            flagged = c.get("needs_review") or c.get("confidence") == "low" or own_vetoes or own_collusion
            if not flagged:
                continue
            used_vetoes.update(id(v) for v in own_vetoes)
            pending.append((c, answer, own_vetoes, own_collusion))
        for v in vetoes:                      # a veto on an answer no criterion scores: decided on its own
            if id(v) not in used_vetoes:
                pending.append((None, v.get("answer"), [v], []))
        if pending and answers is None and read_notebooks:
            answers = _answers_from_notebook(report["submission"])
        for c, answer, own_vetoes, own_collusion in pending:
            text = (answers or {}).get(answer) if answer else None
            items.append({
                "submission": report["submission"],
                "key": key,
                "student": str(report.get("student") or student_id(report["submission"])),
                "criterion": c["id"] if c else None,
                "answer_id": answer,
                "title": (c or {}).get("title") or (c or {}).get("id") or answer or "",
                "text": _clip(text) if text is not None else None,
                "points": (c or {}).get("points"),
                "max_points": (c or {}).get("max_points"),
                "feedback": (c or {}).get("feedback") or "",
                "confidence": (c or {}).get("confidence"),
                "confidence_reason": (c or {}).get("confidence_reason") or "",
                "evidence": (c or {}).get("evidence") if isinstance((c or {}).get("evidence"), dict) else None,
                "vetoes": [{"id": str(v["id"]), "evidence": str(v.get("evidence") or ""), "message": str(v.get("message") or "")}
                           for v in own_vetoes],
                "collusion": [{"other": str(x.get("other") or ""), "similarity": x.get("similarity")} for x in own_collusion],
                "reasons": _reasons(c or {}, own_vetoes, own_collusion, status),
                "status": status,
                "score": report.get("score"),
                "max_score": report.get("max_score"),
                "threshold": report.get("threshold"),
            })
    return {"source": source, "questions": _questions(items, lookup), "items": items,
            "key": hashlib.sha256(json.dumps([source, [(i["key"], i["criterion"]) for i in items]]).encode()).hexdigest()[:16]}


def _questions(items: list[dict], lookup: Lookup) -> list[dict]:
    """One entry per (criterion, answer) in the order first seen, each with its groups."""
    order: dict[tuple, list[int]] = {}
    for n, item in enumerate(items):
        order.setdefault((item["criterion"], item["answer_id"]), []).append(n)
    questions = []
    for (criterion, answer), members in order.items():
        texts = [items[n]["text"] or "" for n in members]
        groups = [{"items": [members[i] for i in g.members], "similarity": g.similarity} for g in grouping.group(texts)]
        info = lookup.criteria.get(criterion) or {}
        first = items[members[0]]
        questions.append({
            "criterion": criterion, "answer_id": answer, "title": first["title"],
            "max_points": first["max_points"],
            "question": lookup.questions.get(answer, ""), "reference": lookup.references.get(answer, ""),
            "description": info.get("description", ""), "levels": info.get("levels", []),
            "groups": groups,
        })
    return questions

"""Code-map answers: which filled line each named object is attached to. Pure.

Each mention of an object (a line's `objects` pattern) is attached to one line: an explicit cue
(第一行, line 1 …) in the same clause; else the explicit cue nearest to it in its sentence; else a
topic cue (what the line does: 接受, residual …) in the clause, then in the sentence; else the last
explicit cue of an earlier sentence (a paragraph that started with 「第一行：」). Cue text that is part
of an object's own name (`resample` in `_resample_kernel`) is not a cue. A line is *attached* when
one of its objects is attached to it; the answer is *swapped* when a line is not attached but one of
its objects is attached to another line.
"""
from __future__ import annotations

from dataclasses import dataclass

from .sentences import Sentence


@dataclass(frozen=True)
class Attachment:
    line: str                    # the line the object belongs to
    attached_to: str | None      # the line the answer attaches it to
    object: str
    sentence: int


def _spans(pattern, text: str, blocked: list[tuple[int, int]]):
    for m in pattern.finditer(text):
        if not any(a < m.end() and m.start() < b for a, b in blocked):
            yield m.start(), m.end()


def attach(sentences: list[Sentence], lines) -> list[Attachment]:
    found = []
    last_explicit = None
    for s in sentences:
        objects = [(a, b, line) for line in lines for a, b in _spans(line.objects, s.low, [])]
        blocked = [(a, b) for a, b, _ in objects]
        explicit = sorted((a, line.id) for line in lines for a, _ in _spans(line.cues, s.low, blocked))
        topical = sorted((a, line.id) for line in lines for a, _ in _spans(line.topic, s.low, blocked))
        order = _respectively(s, objects, lines)
        for a, b, line in sorted(objects, key=lambda o: o[0]):
            clause = s.clause_at(a)
            target = (_nearest(explicit, a, clause) or order.get(a) or _nearest(explicit, a, None)
                      or _nearest(topical, a, clause) or _nearest(topical, a, None) or last_explicit)
            found.append(Attachment(line.id, target, s.low[a:b], s.index))
        if explicit:
            last_explicit = explicit[-1][1]
    return found


_RESPECTIVELY = ("分别", "依次", "respectively", "in that order")


def _respectively(s: Sentence, objects, lines) -> dict:
    """「两行分别对应 A 和 B」: the first mentions of objects of different lines, in order, go to the lines in order."""
    if not any(w in s.low for w in _RESPECTIVELY):
        return {}
    firsts = {}
    for a, _, line in sorted(objects, key=lambda o: o[0]):
        firsts.setdefault(line.id, a)
    if len(firsts) < 2:
        return {}
    ordered = sorted(firsts.values())
    return {pos: lines[n].id for n, pos in enumerate(ordered) if n < len(lines)}


def _nearest(cues, pos: int, clause):
    best = None
    for at, line_id in cues:
        if clause and not clause[0] <= at < clause[1]:
            continue
        distance = (pos - at) if at <= pos else (at - pos) * 1.5      # a preceding cue is preferred
        if best is None or distance < best[0]:
            best = (distance, line_id)
    return best[1] if best else None


def attached_lines(attachments: list[Attachment]) -> tuple[dict, bool]:
    """({line id: sentence index of its first correct attachment}, swapped)."""
    ok = {}
    for item in attachments:
        if item.attached_to == item.line and item.line not in ok:
            ok[item.line] = item.sentence
    crossed = any(item.attached_to not in (None, item.line) and item.line not in ok for item in attachments)
    return ok, crossed

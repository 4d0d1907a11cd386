"""Code-map answers: which filled line each named object is attached to. Pure.

Each mention of an object (a line's `objects` pattern) is attached to one line: the explicit cue
(第一行, line 1 …) of its clause when the clause has one; when its clause (or, with no cue in the
clause, its sentence) has several, the order of a 「分别」 list, else reading order: a span that opens
with a cue puts each object under the cue before it ("line 1 … maps to A and line 2 … to B"), one that
opens with an object gives each object the cue after it (「A（第一行）和 B（第二行）」); else a topic
cue (what the line does: 接受, residual …) in the clause, then in the sentence; else the last
explicit cue of an earlier sentence (a paragraph that started with 「第一行：」). An object in a clause
without a cue of its own but with 前者 / 后者 (the former, the latter) goes to the first / last of the
lines named, in order, before it (「第一行是…，第二行是…。前者由 A 实现，后者由 B 实现」). Cue text that is part
of an object's own name (`resample` in `_resample_kernel`) is not a cue. A line is *attached* when
one of its objects is attached to it; the answer is *swapped* when a line is not attached but one of
its objects is attached to another line.
"""
from __future__ import annotations

import re
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


_FORMER_LATTER = re.compile(r"(前者|the former)|(后者|the latter)")


def _named_before(explicit, pos: int, earlier: list) -> list:
    """The lines named by the cues before `pos` in this sentence (several, in order), else those of `earlier`."""
    named = list(dict.fromkeys(line_id for at, line_id in explicit if at < pos))
    return named if len(named) > 1 else earlier


def attach(sentences: list[Sentence], lines) -> list[Attachment]:
    found = []
    last_explicit = None
    last_named: list = []                 # the lines an earlier sentence named, in order (several of them)
    for s in sentences:
        objects = [(a, b, line) for line in lines for a, b in _spans(line.objects, s.low, [])]
        blocked = [(a, b) for a, b, _ in objects]
        explicit = sorted((a, line.id) for line in lines for a, _ in _spans(line.cues, s.low, blocked))
        topical = sorted((a, line.id) for line in lines for a, _ in _spans(line.topic, s.low, blocked))
        order = _respectively(s, objects, lines)
        starts = [a for a, _, _ in objects]
        for a, b, line in sorted(objects, key=lambda o: o[0]):
            clause = s.clause_at(a)
            in_clause = [c for c in explicit if clause[0] <= c[0] < clause[1]]
            span, region = (in_clause, clause) if in_clause else (explicit, (0, len(s.low)))
            if len({line_id for _, line_id in span}) > 1:
                opens_with_cue = span[0][0] < min(x for x in starts if region[0] <= x < region[1])
                target = order.get(a) or _reading_order(span, opens_with_cue, a)
            else:
                target = span[0][1] if span else order.get(a)
            if not in_clause:
                pronoun = _FORMER_LATTER.search(s.low, clause[0], clause[1])
                named = _named_before(explicit, clause[0], last_named) if pronoun else []
                if named:
                    target = named[0] if pronoun[1] else named[-1]
            target = target or _nearest(topical, a, clause) or _nearest(topical, a, None) or last_explicit
            found.append(Attachment(line.id, target, s.low[a:b], s.index))
        if explicit:
            last_explicit = explicit[-1][1]
            named = list(dict.fromkeys(line_id for _, line_id in explicit))
            last_named = named if len(named) > 1 else last_named
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


def _reading_order(cues, opens_with_cue: bool, pos: int):
    """The cue of the object at `pos` among several (sorted) cues of one span: the cue before it when the
    span opens with a cue, else the cue after it (the one on the other side when there is none)."""
    if opens_with_cue:
        before = [line_id for at, line_id in cues if at < pos]
        return before[-1] if before else cues[0][1]
    after = [line_id for at, line_id in cues if at > pos]
    return after[0] if after else cues[-1][1]


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

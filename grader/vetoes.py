"""Veto heuristics over the free-text answers. Pure: answers and rubric vetoes in, hits out.

`scope: sentence` vetoes look at one sentence at a time (normalised as in grader/text.py): every
`all` pattern and at least one `any` pattern (when given) must match, and no `none` pattern (the
qualifiers and negations) may. `scope: identifiers` vetoes count the distinct code identifiers an
answer names (CamelCase such as RejectionSampler, snake_case such as num_sampled) and fire when
there are at least `min_identifiers` of them and no `none` pattern (the ownership and state words)
occurs anywhere in the answer. A veto with `answers` reads only those answers (a question that
asks for names, such as the code map, is not an occasion for the class-names veto). Each hit
quotes its evidence.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .text import normalise, sentences

_IDENTIFIER = re.compile(r"(?<![\w.])(?:[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|_?[a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?:\.\w+)*(?![\w])")


@dataclass(frozen=True)
class VetoHit:
    id: str
    answer: str          # course_id of the answer that triggered it
    evidence: str        # the quoted sentence (or the identifiers named)
    message: str


def _sentence_hit(veto, sentence: str) -> bool:
    norm = normalise(sentence)
    return (all(p.search(norm) for p in veto.all)
            and (not veto.any or any(p.search(norm) for p in veto.any))
            and not any(p.search(norm) for p in veto.none))


def identifiers(text: str) -> list[str]:
    seen = []
    for name in _IDENTIFIER.findall(text or ""):
        if name not in seen:
            seen.append(name)
    return seen


def find_vetoes(answers: dict, vetoes) -> list[VetoHit]:
    """Every veto that fires, at most one hit per (veto, answer), in rubric order."""
    hits = []
    for veto in vetoes:
        for answer_id, text in answers.items():
            if not text or (veto.answers and answer_id not in veto.answers):
                continue
            if veto.scope == "sentence":
                evidence = next((s for s in sentences(text) if _sentence_hit(veto, s)), None)
            else:
                names = identifiers(text)
                norm = normalise(text)
                evidence = None
                if len(names) >= veto.min_identifiers and not any(p.search(norm) for p in veto.none):
                    evidence = "提到了 " + "、".join(names[:8]) + "，但没有说明谁持有、写入或推进哪个状态"
            if evidence is not None:
                hits.append(VetoHit(veto.id, answer_id, _quote(evidence), veto.message))
    return hits


def _quote(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"

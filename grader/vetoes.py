"""Veto heuristics over the free-text answers. Pure: answers and rubric vetoes in, hits out.

Answers are normalised first (grader/normalise.py: NFKC, invisible characters, LaTeX and markdown
markup), so a zero-width space or a full-width digit does not hide a sentence from a veto.

`scope: sentence` vetoes look at one sentence at a time (lower case): every `all` pattern and at
least one `any` pattern (when given) must match, and no `none` pattern (the qualifiers and
negations) may. `scope: identifiers` vetoes count the distinct code identifiers an answer names
(CamelCase such as RejectionSampler, snake_case such as num_sampled; math symbols with subscripts
such as x_j, p_j, prod_j and LaTeX command names are not identifiers, and nothing inside $…$ is
read) and fire when there are at least `min_identifiers` of them and no `none` pattern (the
ownership and state words) occurs anywhere in the answer. A veto with `answers` reads only those
answers. Each hit quotes the sentence it found (for the identifiers veto: the first sentence that
names them), and the report marks it for review: an instructor confirms or clears it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .normalise import clean, plain, readable

_IDENTIFIER = re.compile(r"(?<![\w.\\])(?:[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|_?[a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?:\.\w+)*(?![\w])")
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]*\$", re.DOTALL)
# A symbol with a subscript (x_j, p_j, q_i, y_1, prod_j, sum_v): letters of at most 4 characters, then
# subscripts of at most 3 characters each. Real identifiers (num_sampled, _rejection_kernel) are longer.
_MATH_SYMBOL = re.compile(r"_?[a-z]{1,4}(?:_[a-z0-9]{1,3})+")
_LATEX_WORDS = {"prod", "sum", "min", "max", "frac", "log", "exp", "cdot", "text", "mathrm", "left", "right", "mid"}
_SENTENCE_END = re.compile(r"(?<=[。！？!?；;])|\n+|(?<=[a-z)\d])\.(?=\s|$)")


@dataclass(frozen=True)
class VetoHit:
    id: str
    answer: str          # course_id of the answer that triggered it
    evidence: str        # the quoted sentence
    message: str


def sentences(text: str) -> list[str]:
    """The answer's sentences, normalised for reading (LaTeX as plain math), for quoting."""
    return [s.strip() for s in _SENTENCE_END.split(readable(text)) if s and s.strip()]


def _sentence_hit(veto, sentence: str) -> bool:
    norm = plain(sentence)
    return (all(p.search(norm) for p in veto.all)
            and (not veto.any or any(p.search(norm) for p in veto.any))
            and not any(p.search(norm) for p in veto.none))


def _is_math_symbol(name: str) -> bool:
    return bool(_MATH_SYMBOL.fullmatch(name)) or name.split("_")[0].lstrip("\\") in _LATEX_WORDS and len(name) <= 10


def identifiers(text: str) -> list[str]:
    """Distinct code identifiers named outside math, in order."""
    seen = []
    for name in _IDENTIFIER.findall(_MATH.sub(" ", clean(text))):
        if not _is_math_symbol(name) and name not in seen:
            seen.append(name)
    return seen


def find_vetoes(answers: dict, vetoes, feedback: dict | None = None) -> list[VetoHit]:
    """Every veto that fires, at most one hit per (veto, answer), in rubric order."""
    template = (feedback or {}).get("class_names_evidence", "{names}")
    hits = []
    for veto in vetoes:
        for answer_id, text in answers.items():
            if not text or (veto.answers and answer_id not in veto.answers):
                continue
            evidence = None
            if veto.scope == "sentence":
                evidence = next((s for s in sentences(text) if _sentence_hit(veto, s)), None)
            else:
                names = identifiers(text)
                if len(names) >= veto.min_identifiers and not any(p.search(plain(text)) for p in veto.none):
                    first = next((s for s in sentences(text) if any(n in s for n in names)), None)
                    evidence = first or template.format(names="、".join(names[:8]))
            if evidence is not None:
                hits.append(VetoHit(veto.id, answer_id, _quote(evidence), veto.message))
    return hits


def _quote(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"

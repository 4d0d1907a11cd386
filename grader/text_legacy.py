"""Phase-1 bridge: the keyword scorer that grader/grade.py still calls with the old rubric model (removed once the rubric carries claims).

The old rules:

The heuristics, all tunable in the rubric's `text` section:
- concept groups: present when any term (substring) or pattern (regex) occurs in the normalised
  answer; the criterion's `levels` turn the number of groups (and required ones) into 2 / 1 / 0;
- keyword list: the answer is split into clauses at 。！？；，、 and line breaks (parenthesised
  formulas are removed first so the commas inside min(p, q) do not split); a clause is
  sentence-like when it has at least `min_sentence_chars` characters and a predicate word
  (是, 等于, 因为, 所以, 必须, ... / is, must, because, ...). Fewer than `min_sentences` sentence-like
  clauses: no full credit, needs_review;
- near copy: the share of the answer's character n-grams (whitespace removed) that also occur in
  the reference answer; at or above `copy_threshold`: no full credit, needs_review. References
  shorter than `copy_min_chars` are not compared (a one-line naming answer is naturally similar);
- empty answer (or only the placeholder): 0, needs_review.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_DASHES = dict.fromkeys(map(ord, "−–—‐‑‒﹣"), "-")
_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_LATEX_WORD = re.compile(r"\\(text|mathrm|mathbf|mathit|mathcal|operatorname|boldsymbol)\s*\{([^{}]*)\}")
_LATEX_SYMBOLS = {r"\cdot": "·", r"\times": "×", r"\le": "≤", r"\ge": "≥", r"\leq": "≤", r"\geq": "≥", r"\ne": "≠",
                  r"\neq": "≠", r"\sum": "σ", r"\prod": "∏", r"\mid": "|", r"\in": "∈", r"\equiv": "≡", r"\to": "→",
                  r"\infty": "∞", r"\alpha": "α", r"\gamma": "γ", r"\beta": "β"}
_LATEX_SYMBOL = re.compile(r"\\(" + "|".join(sorted((k[1:] for k in _LATEX_SYMBOLS), key=len, reverse=True)) + r")(?![a-zA-Z])")
_MARKUP = re.compile(r"```\w*|`|\*\*|\$|^\s{0,3}(#{1,6}|>|[-*+]|\d+[.)])\s+", re.MULTILINE)
_CLAUSE_SPLIT = re.compile(r"[。！？!?；;，,、:：\n]|\.(?=\s|$)")
_SENTENCE_SPLIT = re.compile(r"(?<=[。！？!?；;])|\n+|(?<=\.)\s+")
_PARENS = re.compile(r"\([^()]*\)")


_WHITESPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """NFKC, lower case, one kind of dash, markdown and LaTeX markup removed, single spaces."""
    text = unicodedata.normalize("NFKC", text or "").translate(_DASHES)
    text = re.sub(r"\\(left|right|big|Big|bigg|Bigg)(?![a-zA-Z])", "", text)
    for _ in range(3):
        text = _FRAC.sub(r"(\1)/(\2)", text)
    text = _LATEX_WORD.sub(r"\2", text)
    text = _LATEX_SYMBOL.sub(lambda m: _LATEX_SYMBOLS["\\" + m[1]], text)
    text = re.sub(r"\\([a-zA-Z]+)", r"\1", text)       # \min -> min, \max -> max
    text = re.sub(r"\\[,;!: ]", " ", text)
    text = text.replace("{", "").replace("}", "")
    text = _MARKUP.sub(" ", text)
    text = text.lower()
    # Every whitespace run becomes one character (a newline if it had one): keeps sentence breaks and
    # stops stacked `\\s*` in rubric patterns from backtracking over long runs.
    return _WHITESPACE.sub(lambda m: "\n" if "\n" in m[0] else " ", text).strip()


def sentences(text: str) -> list[str]:
    """The answer's sentences as written (for quoting evidence)."""
    return [s.strip() for s in _SENTENCE_SPLIT.split(text or "") if s and s.strip()]


def sentence_like(norm: str, settings) -> list[str]:
    """Clauses of the normalised answer that read as sentences (see the module docstring)."""
    flat = norm
    for _ in range(3):
        flat = _PARENS.sub(" ", flat)
    found = []
    for clause in _CLAUSE_SPLIT.split(flat):
        clause = clause.strip()
        if len(re.sub(r"\s", "", clause)) < settings.min_sentence_chars:
            continue
        padded = f" {clause} "
        if any(word in padded for word in settings.predicate_words):
            found.append(clause)
    return found


def concepts_present(norm: str, concepts) -> list[str]:
    return [c.id for c in concepts if any(t in norm for t in c.terms) or any(p.search(norm) for p in c.patterns)]


def copy_share(answer_norm: str, reference_norm: str, n: int) -> float:
    """Share of the answer's character n-grams (whitespace removed) that also occur in the reference."""
    a, r = re.sub(r"\s", "", answer_norm), re.sub(r"\s", "", reference_norm)
    grams = {a[i:i + n] for i in range(len(a) - n + 1)}
    if not grams:
        return 0.0
    ref = {r[i:i + n] for i in range(len(r) - n + 1)}
    return len(grams & ref) / len(grams)


@dataclass(frozen=True)
class TextResult:
    criterion: str
    points: int
    max_points: int
    matched: tuple[str, ...]
    missing: tuple[str, ...]          # labels of the concept groups not found
    flags: tuple[str, ...]            # "empty", "missing_cell", "keyword_list", "copy"
    needs_review: bool
    feedback: str
    copy_share: float = 0.0


def score_answer(answer: str | None, criterion, reference: str | None, settings, feedback: dict,
                 check_copy: bool = True) -> TextResult:
    """Points for one free-text criterion. `answer` is None when the answer cell is missing."""
    labels = tuple(c.label for c in criterion.concepts)
    if answer is None or not answer.strip():
        flag = "missing_cell" if answer is None else "empty"
        return TextResult(criterion.id, 0, criterion.points, (), labels, (flag,), True, feedback[flag])
    norm = normalise(answer)
    matched = concepts_present(norm, criterion.concepts)
    points = 0
    for level in criterion.levels:
        if len(matched) >= level.min_groups and set(level.require) <= set(matched):
            points = level.points
            break
    flags, notes, share = [], [], 0.0
    if criterion.prose:
        if len(sentence_like(norm, settings)) < settings.min_sentences:
            flags.append("keyword_list")
            notes.append(feedback["keyword_list"])
        if check_copy and reference:
            ref_norm = normalise(reference)
            if len(ref_norm) >= settings.copy_min_chars:
                share = copy_share(norm, ref_norm, settings.copy_ngram)
                if share >= settings.copy_threshold:
                    flags.append("copy")
                    notes.append(feedback["copy"].format(share=share))
        if flags:
            points = min(points, criterion.points - 1)
    missing = tuple(c.label for c in criterion.concepts if c.id not in matched)
    if points == criterion.points and not flags:
        message = feedback["full"]
    else:
        message = " ".join(([feedback["missing"].format(labels="；".join(missing))] if missing else []) + notes)
    return TextResult(criterion.id, points, criterion.points, tuple(matched), missing, tuple(flags), bool(flags),
                      message or feedback["full"], round(share, 3))

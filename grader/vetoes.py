"""Veto heuristics over the free-text answers. Pure: answers and rubric vetoes in, hits out.

Answers are normalised first (grader/normalise.py: NFKC, invisible characters, LaTeX and markdown
markup), so a zero-width space or a full-width digit does not hide a sentence from a veto.

A veto fires only on clear evidence; a borderline hit is a *doubt*: reported to the instructor as a
review flag with its sentence (`veto_doubts`), never as a veto (`find_vetoes`).

`scope: sentence` vetoes look at one sentence at a time (lower case): every `all` pattern and at
least one `any` pattern (when given) must match, and no `none` pattern (the qualifiers and
negations) may. A sentence that opens with a conclusion (所以, 因此, therefore, thus …) continues the
argument of the sentences before it: it is read together with up to two of them ("因为 q 和 p 几乎一样
…。所以输出分布等于 p。"), and a sentence that points back at a figure (这个数, that number) is read with the one
before it (「论文里报的是提升百分之两百。上线以后也就是这个数。」). Patterns may name a concept of `text.concepts`
(`@close`, `@high_acceptance`), as evidence patterns do. A hit is only a doubt when the sentence is hedged (我觉得, 可能, maybe …),
sits in quotation marks, or when the matched span turns on a contrast (但, but, however …): "速度慢一点，
但拒绝采样会纠正，所以输出是正确的" does not make correctness depend on speed.

`scope: identifiers` vetoes count the distinct code identifiers an answer names (CamelCase such as
RejectionSampler or GPUModelRunner, snake_case such as num_sampled, any name set as code such as
`Scheduler`; math symbols with subscripts such as x_j, p_j,
prod_j and LaTeX command names are not identifiers, and nothing inside $…$ is read) and fire when
there are at least `min_identifiers` of them and no `none` pattern (the ownership and state words)
occurs anywhere in the answer. An ownership word whose object is only a demonstrative (负责这件事,
"handles this") says nothing about a state and does not count; the veto's `doubt` patterns there are
role words (负责, handles) that say what a name does, not which state it holds: found alone, the hit
is a doubt. The names must stand in for the
argument: with fewer than `_NAMES_ONLY_TOKENS` prose tokens outside them it is a veto; with more (pseudo-code
with prose, an answer that also reasons) it is a doubt: a person decides whether the names stand beside the
argument or in place of it. Only an answer with that much prose whose names are (but for fewer than
`min_identifiers`) the variables and calls of its own code statements (`p_logits = apply_penalties(z)`;
their comments count as prose) is no hit: the names are its code, not a recital; with less prose than that
(three lines of pseudo-code and a comment) such an answer is a doubt, not a veto. Tokens with no lower-case
letter (FP32, H100) are formats and chips, not names.

A veto with `answers` reads only those answers. Each hit quotes the sentence it found (for the
identifiers veto: the first sentence that names them), and the report marks it for review: an
instructor confirms or clears it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .normalise import clean, plain, prose_tokens, readable
from .sentences import ABBREVIATION, LINE_BREAK, unpunctuated

# CamelCase (acronyms too: GPUModelRunner, KVCacheManager) or snake_case, with attributes.
_IDENTIFIER = re.compile(r"(?<![\w.\\])(?:[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[A-Z]{2,}[a-z0-9]+(?:[A-Z][a-z0-9]*)*|"
                         r"_?[a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?:\.\w+)*(?![\w])")
# A name set as code (`Scheduler`, `post_update()`): an identifier whatever its case.
_CODE_NAME = re.compile(r"`\s*([A-Za-z_][\w.]{2,})(?:\(\s*\.{0,3}\s*\))?\s*`")
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]*\$", re.DOTALL)
# A symbol with a subscript (x_j, p_j, q_i, y_1, prod_j, sum_v): letters of at most 4 characters, then
# subscripts of at most 3 characters each. Real identifiers (num_sampled, _rejection_kernel) are longer.
_MATH_SYMBOL = re.compile(r"_?[a-z]{1,4}(?:_[a-z0-9]{1,3})+")
_LATEX_WORDS = {"prod", "sum", "min", "max", "frac", "log", "exp", "cdot", "text", "mathrm", "left", "right", "mid"}
# The line breaks and abbreviations of grader/sentences.py (a line wrapped after a comma, or English wrapped mid-sentence, goes on).
_SENTENCE_END = re.compile(r"(?<=[。！？?；;])|(?<=!)(?!=)|" + LINE_BREAK + r"|(?<=[a-z)\d])" + ABBREVIATION + r"\.(?=\s|$)")
# A sentence that draws the conclusion of the ones before it.
_CONCLUSION = re.compile(r"^\s*(所以|因此|因而|于是|故而|从而|由此|可见|therefore|thus|hence|so\b|consequently)", re.IGNORECASE)
# A sentence about a figure the sentence before it gave: 「论文里报的是提升百分之两百。上线以后也就是这个数。」
_REFERS_BACK = re.compile(r"(这个|那个|同样的|一样的)\s*(数|数字|数儿|倍数|水平|比例|速度|幅度)|这么多|那么多|"
                          r"\b(that|this|the same)\s+(number|figure|factor|speed-?up|multiple)\b", re.IGNORECASE)
_HEDGE = re.compile(r"我觉得|我猜|我认为|大概|也许|或许|可能|好像|似乎|应该是|不太确定|不确定|\bi think\b|\bi guess\b|\bmaybe\b|"
                    r"\bperhaps\b|\bprobably\b|\bmight\b|\bnot sure\b", re.IGNORECASE)
_CONTRAST = re.compile(r"但|不过|然而|可是|却|\bbut\b|\bhowever\b|\byet\b|\balthough\b", re.IGNORECASE)
_CLAUSE = re.compile(r"[,，;；:：]")
_QUOTED = re.compile(r"[\"“「『][^\"”」』]{4,}[\"”」』]")
# An ownership word followed only by a demonstrative object says nothing about a state.
_VAGUE_OBJECT = re.compile(r"\s*(?:了|着)?\s*(?:$|[。.!！?？;；,，、]|这|那|此|该|其|上述|\bit\b|\bthis\b|\bthat\b|\bthese\b|\bthose\b|\bthe (?:job|task|problem)\b)",
                           re.IGNORECASE)
_NAMES_ONLY_TOKENS = 24      # fewer prose tokens outside the names than this: the names stand in for the argument


@dataclass(frozen=True)
class VetoHit:
    id: str
    answer: str          # course_id of the answer that triggered it
    evidence: str        # the quoted sentence
    message: str
    certain: bool = True         # False: a doubt (borderline), reported for review, never a veto


def _pieces(text: str) -> list[list[str]]:
    """The answer's punctuated sentences, normalised for reading (LaTeX as plain math), each as its runs: a long
    piece with no punctuation at all (dictated by voice: 「…前缀变了 截断虽然浪费一点算力 但投机解码上生产一般都稳定快两三倍」)
    uses its spaces between Chinese words as its punctuation, as grader/sentences.py reads it; any other sentence is
    one run."""
    return [runs for s in _SENTENCE_END.split(readable(text)) if s and s.strip()
            if (runs := [" ".join(part.split()) for part in unpunctuated(s) if part.strip()])]


def sentences(text: str) -> list[str]:
    """The answer's sentences (a dictated piece's runs each one), for reading and quoting."""
    return [run for runs in _pieces(text) for run in runs]


def _windows(sents: list[str]) -> list[tuple[str, str]]:
    """(text to match, sentence to quote): each sentence, a concluding sentence with up to two before it, and a
    sentence that points back at a figure with the one before it."""
    out = []
    for i, s in enumerate(sents):
        out.append((s, s))
        low = plain(s) if i else ""
        start = max(0, i - 2) if _CONCLUSION.match(low) else i - 1 if _REFERS_BACK.search(low) else None
        if i and start is not None:
            joined = " ".join(sents[start:i + 1])
            out.append((joined, joined))
    return out


_RUN_WINDOW_CHARS = 100     # dictated runs read together: at most this many characters


def _run_windows(pieces: list[list[str]]) -> list[tuple[str, str]]:
    """A piece dictated with no punctuation splits at its spaces into runs that are clauses more than sentences
    (「q 跟 p 非常接近 所以接受率很高 大部分 token 都被接受了 输出分布自然就等于 p」): consecutive runs, up to
    `_RUN_WINDOW_CHARS` characters, are read together as one sentence with commas."""
    out = []
    for runs in pieces:
        for i in range(len(runs)):
            for j in range(i + 2, len(runs) + 1):
                joined = "，".join(runs[i:j])
                if len(joined) > _RUN_WINDOW_CHARS:
                    break
                out.append((joined, joined))
    return out


def _clause_runs(norm: str, longest: int = 5) -> list[str]:
    """Runs of up to `longest` consecutive clauses of a sentence (split at commas and semicolons)."""
    clauses = [c for c in _CLAUSE.split(norm) if c.strip()]
    return [" ".join(clauses[i:j]) for i in range(len(clauses)) for j in range(i + 1, min(len(clauses), i + longest) + 1)]


def _doubt_hit(veto, norm: str) -> bool:
    """One of the veto's looser `doubt` patterns matches a run of clauses with no `none` or `doubt_none` pattern in
    that run: the wording is near the veto without being clearly it (a negation elsewhere in the sentence does
    not clear it)."""
    clear = veto.none + veto.doubt_none
    return bool(veto.doubt) and any(any(p.search(run) for p in veto.doubt) and not any(p.search(run) for p in clear)
                                    for run in _clause_runs(norm))


def _sentence_hit(veto, sentence: str) -> str | None:
    """"veto", "doubt" (a hedged, quoted or contrasting hit, or one near the veto's wording) or None."""
    norm = plain(sentence)
    if not all(p.search(norm) for p in veto.all) or any(p.search(norm) for p in veto.none):
        return "doubt" if _doubt_hit(veto, norm) else None
    spans = [m for m in (p.search(norm) for p in veto.any) if m]
    if veto.any and not spans:
        return "doubt" if _doubt_hit(veto, norm) else None
    if spans and all(_CONTRAST.search(m.group()) for m in spans):
        return "doubt"
    if _HEDGE.search(norm) or _QUOTED.search(clean(sentence)):
        return "doubt"
    return "veto"


def _is_math_symbol(name: str) -> bool:
    return bool(_MATH_SYMBOL.fullmatch(name)) or name.split("_")[0].lstrip("\\") in _LATEX_WORDS and len(name) <= 10


def identifiers(text: str) -> list[str]:
    """Distinct code identifiers named outside math, in order."""
    seen = []
    text = _MATH.sub(" ", clean(text))
    names = sorted([(m.start(), m[0]) for m in _IDENTIFIER.finditer(text)]
                   + [(m.start(1), m[1]) for m in _CODE_NAME.finditer(text)])
    for _, name in names:
        if (not _is_math_symbol(name) and name.lower() not in _LATEX_WORDS and name not in seen
                and re.search(r"[a-z_]", name)):          # FP32, MRV2, H100: a format or a chip, not a name
            seen.append(name)
    return seen


# A line of code that does something (an assignment, a call, a control keyword); its comment is prose.
_STATEMENT = re.compile(r"^\s*(?:(?:for|if|elif|while|return|assert|def|with)\b|[\w.\[\], ]+\s*(?:[+\-*/]?=)(?!=)|[\w.]+\s*\()")
_COMMENT = re.compile(r"\s(?:#|//).*$|^\s*(?:#|//).*$")


def prose_names(text: str) -> list[str]:
    """The identifiers an answer names outside its own code statements (their comments are prose): a
    pseudo-code argument's variables and calls (`p_logits = apply_penalties(z_target)`) are its code, not
    a recital of names."""
    kept = []
    for line in clean(text).splitlines():
        comment = _COMMENT.search(line)
        code = line[:comment.start()] if comment else line
        if code.strip() and _STATEMENT.match(code):
            line = comment[0] if comment else ""
        kept.append(line)
    return identifiers("\n".join(kept))


def _owns(pattern: re.Pattern, text: str) -> bool:
    """An ownership / state word whose object is not a bare demonstrative."""
    return any(not _VAGUE_OBJECT.match(text, m.end()) for m in pattern.finditer(text))


def argument_tokens(text: str, names: list[str]) -> int:
    """Prose tokens of the answer outside the names it lists."""
    rest = _IDENTIFIER.sub(" ", _CODE_NAME.sub(" ", _MATH.sub(" ", clean(text))))
    return len(prose_tokens(rest))


def _scan(answers: dict, vetoes, feedback: dict | None) -> list[VetoHit]:
    template = (feedback or {}).get("class_names_evidence", "{names}")
    hits = []
    windows: dict[str, list[tuple[str, str]]] = {}         # per answer, read once for all the sentence vetoes
    for veto in vetoes:
        for answer_id, text in answers.items():
            if not text or (veto.answers and answer_id not in veto.answers):
                continue
            evidence, kind = None, None
            if veto.scope == "sentence":
                if answer_id not in windows:
                    pieces = _pieces(text)
                    windows[answer_id] = _windows([run for runs in pieces for run in runs]) + _run_windows(pieces)
                for window, quote in windows[answer_id]:
                    found = _sentence_hit(veto, window)
                    if found and (kind is None or found == "veto"):
                        evidence, kind = quote, found
                    if kind == "veto":
                        break
            else:
                names = identifiers(text)
                norm = plain(text)
                if len(names) >= veto.min_identifiers and not any(_owns(p, norm) for p in veto.none):
                    first = next((s for s in sentences(text) if any(n in s for n in names)), None)
                    evidence = first or template.format(names="、".join(names[:8]))
                    prose = argument_tokens(text, names)
                    # Many names and no word about who holds or changes a state: with a real argument beside
                    # them, or only a role word (`doubt`: 负责, handles), it is not clearly the veto, so a
                    # person reads it (a doubt), never silence.
                    role = any(_owns(p, norm) for p in veto.doubt)
                    kind = "veto" if prose < _NAMES_ONLY_TOKENS and not role else "doubt"
                    own_code = len(prose_names(text)) < veto.min_identifiers
                    if kind == "doubt" and not role and own_code:
                        kind = None           # an argument, with the names in its own code: no recital
                    elif kind == "veto" and own_code:
                        kind = "doubt"        # terse code whose names are its own statements': a person reads it
            if evidence is not None and kind is not None:
                hits.append(VetoHit(veto.id, answer_id, _quote(evidence), veto.message, certain=kind == "veto"))
    return hits


def from_misconceptions(criteria, results: dict, vetoes) -> list[VetoHit]:
    """Vetoes that a stated misconception also is (its rubric `veto:`), quoting the misconception's sentence: a
    hit, or a doubt when that sentence is hedged. `criteria`: the rubric's text criteria; `results`: criterion id
    -> TextResult. At most one per (veto, answer)."""
    by_id = {v.id: v for v in vetoes}
    out, seen = [], set()
    for criterion in criteria:
        result = results.get(criterion.id)
        text = getattr(criterion, "text", None) or criterion
        if result is None or not getattr(text, "misconceptions", None):
            continue
        linked = {m.id: m.veto for m in text.misconceptions if m.veto in by_id}
        for found in result.evidence.get("misconceptions", []):
            veto_id = linked.get(found["id"])
            if veto_id and (veto_id, criterion.answer) not in seen:
                seen.add((veto_id, criterion.answer))
                out.append(VetoHit(veto_id, criterion.answer, _quote(found["sentence"]), by_id[veto_id].message,
                                   certain=not _HEDGE.search(plain(found["sentence"]))))
    return out


def merge_linked(hits: list[VetoHit], doubts: list[VetoHit], linked: list[VetoHit]) -> tuple[list[VetoHit], list[VetoHit]]:
    """(hits, doubts) with the misconception-linked ones (`from_misconceptions`) added: a certain one is a hit
    (and no longer a doubt), a hedged one a doubt; a (veto, answer) the veto's own rules already hit is left."""
    hits, doubts = list(hits), list(doubts)
    for item in linked:
        key = (item.id, item.answer)
        if any((h.id, h.answer) == key for h in hits):
            continue
        if item.certain:
            hits.append(item)
            doubts = [d for d in doubts if (d.id, d.answer) != key]
        elif not any((d.id, d.answer) == key for d in doubts):
            doubts.append(item)
    return hits, doubts


def argued_beside_names(doubts: list[VetoHit], criteria, results: dict, vetoes) -> list[VetoHit]:
    """`doubts` without the names-only doubts (`scope: identifiers`) of an answer whose argument earned full marks with
    high confidence on every criterion that reads it: the names stand beside that argument, not in place of it, which
    is all the veto is about. `criteria`: the rubric's text criteria; `results`: criterion id -> TextResult."""
    by_scope = {v.id: v.scope for v in vetoes}
    argued = set()
    for answer in {getattr(c, "answer", None) for c in criteria}:
        mine = [results.get(c.id) for c in criteria if c.answer == answer]
        if mine and all(r is not None and r.points == r.max_points and r.confidence == "high" for r in mine):
            argued.add(answer)
    return [d for d in doubts if not (by_scope.get(d.id) == "identifiers" and d.answer in argued)]


def find_vetoes(answers: dict, vetoes, feedback: dict | None = None) -> list[VetoHit]:
    """Every veto that fires on clear evidence, at most one hit per (veto, answer), in rubric order."""
    return [h for h in _scan(answers, vetoes, feedback) if h.certain]


def veto_doubts(answers: dict, vetoes, feedback: dict | None = None) -> list[VetoHit]:
    """Borderline veto hits (hedged, quoted, contrasting, names beside a real argument): review flags with
    the sentence, not vetoes. At most one per (veto, answer), and none where the veto itself fires."""
    return [h for h in _scan(answers, vetoes, feedback) if not h.certain]


def _quote(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"

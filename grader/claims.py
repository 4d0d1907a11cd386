"""Claims and misconceptions of a free-text criterion: the rubric's data model and the matcher. Pure.

A criterion lists the *claims* a full answer makes and the *misconceptions* that cap it. Each has
evidence rules; a rule is a list of terms that must all be found, asserted, in one sentence:

- a string term is a regular expression (case-insensitive, on the lower-cased sentence, Traditional
  Chinese read as Simplified); `@name` in it stands for the concept `name` of `text.concepts` (a synonym
  class as data: every way the answers say "accept", "the real prefix", "add up" …);
- `{value: "min(p, q)"}` is found when the sentence contains an expression with that value on random
  distributions (grader/formulas.py), written with at least the same operations;
- `{unless: pattern}`: the rule does not hold in a sentence this pattern matches (a misconception's
  wording that is right about another subject: "草稿一侧不同只影响接受率" is not "不一致只影响接受率");
- a term's match counts only when it is not negated in its clause and the sentence is not a
  question; misconception rules also skip sentences that name what they say as a misunderstanding, and
  text in quotation marks (「…」, "…": a wrong claim mentioned, not stated).

A misconception may list `suspect` patterns, its topic words (argmax, 马尔可夫, 回滚 …): a full score whose
answer touches them, asserted and not negated, without the misconception being found, is left to a
person (the wording may be one the rules do not know).

A claim is also found through `formulas`: a true equation in the answer with the same two sides as
one of the listed identities. A misconception is also found through its `formulas`: the answer
states that (false) identity. Every claim and misconception carries `examples` (positive sentences
that must be found, negative ones that must not): the tests run them.

The code-map kind adds `attach`: which object names belong to which filled line, and the cues that
say which line a sentence speaks about (grader/codemap.py); each line is then a claim.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from . import formulas as fm
from .sentences import Scope, Sentence, asserting_clauses, negated


class TextRubricError(ValueError):
    """A text criterion or text setting that cannot be used; the message names the key."""


@dataclass(frozen=True)
class Term:
    pattern: re.Pattern | None = None
    value: str | None = None           # a canonical expression
    raw: bool = False                  # the pattern carries its own negation: only cues before it count
    unless: bool = False               # `{unless: pattern}`: the rule does not hold in a sentence this matches


@dataclass(frozen=True)
class Rule:
    terms: tuple[Term, ...]


@dataclass(frozen=True)
class Claim:
    id: str
    label: str                          # instructor-only: what the claim is
    ask: str                            # student-safe: a question about the student's own argument
    rules: tuple[Rule, ...] = ()
    formulas: tuple[str, ...] = ()      # canonical identities (`lhs = rhs`)
    examples_pos: tuple[str, ...] = ()
    examples_neg: tuple[str, ...] = ()


@dataclass(frozen=True)
class Misconception:
    id: str
    label: str                          # instructor-only
    cap: int                            # the criterion's points are at most this
    rules: tuple[Rule, ...] = ()
    formulas: tuple[str, ...] = ()      # false identities that state it
    examples_pos: tuple[str, ...] = ()
    examples_neg: tuple[str, ...] = ()
    suspect: re.Pattern | None = None   # its topic words: a full score whose answer touches them is a person's call
    veto: str | None = None             # a veto id this wrong claim also is (stated: the veto fires on its sentence)


@dataclass(frozen=True)
class Level:
    points: int
    all: tuple[str, ...] = ()                  # every one of these claims
    any: tuple[tuple[str, ...], ...] = ()      # at least one claim of each group
    min_claims: int = 0
    min_sentences: int = 0                     # distinct sentences holding the claims found
    min_chars: int = 0                         # characters in asserting clauses


@dataclass(frozen=True)
class Line:
    """Code map: one filled line, the objects that implement it, the cues that name it."""

    id: str
    label: str
    ask: str
    objects: re.Pattern
    cues: re.Pattern                           # explicit: 第一行, line 1 ...
    topic: re.Pattern                          # what the line does: 接受, residual ...


@dataclass(frozen=True)
class TextSettings:
    scope: Scope
    min_sentences: int
    copy_ngram: int
    copy_threshold: float
    copy_review: float                         # copy share at or above this: low confidence
    copy_certain: float                        # copy share at or above this: a copy beyond doubt (high confidence)
    paraphrase_threshold: float                # share of sentences that follow one reference sentence: a reworded copy
    pasted_ngram: int                          # shingle size for the comparison with the rubric's own texts
    copy_min_chars: int
    collusion_threshold: float
    collusion_min_chars: int
    long_answer_chars: int                     # a long answer scored low: low confidence
    concepts: dict = field(default_factory=dict)   # concept name -> regex alternatives (`@name` in evidence patterns)
    substantial_chars: int = 80                # asserted characters from which a 0 is not certain (low confidence)
    aligned_copy: float = 0.85                 # share of the answer's characters aligned, in order, with the reference: a reworded copy
    hedges: re.Pattern | None = None           # hedge cues (我觉得, 好像, maybe …): a claim found only in a hedged sentence is weak evidence
    instance: re.Pattern | None = None         # a worked numerical example: a claim found only there is not shown in general
    contrast: re.Pattern | None = None         # a turn (但, however …): a claim whose sentence turns may be taken back in it
    lesson_paste: float = 0.6                  # share of the answer's shingles found in the lesson's own prose: pasted back
    verified_review: int = 3                   # this many true identities in an answer short of full marks: low confidence
    # patterns that, all found in an answer, declare the two distributions' letters exchanged (Chen et al. write q
    # for the target, p for the draft): the answer is read with p and q swapped back, and a person checks it
    notation_swap: tuple[re.Pattern, ...] = ()
    aligned_review: float = 0.8                # this aligned share (short of aligned_copy) and half copy_review's share: maybe a reworded copy
    aligned_alone_review: float = 0.83         # this aligned share (short of aligned_copy), its prose aligned too, whatever the shingles: maybe a reworded copy
    # an answer that reports on an answer (a marker's comment under 【批注】, a self-check run with [PASS] lines, a
    # grade 「评级：A」): pasted back, not an argument (0 points, and a person looks when it would have scored)
    report: re.Pattern | None = None
    # share of the reference's own runs of marks (formulas, names, numbers: grader/text.marks_share) from which an
    # answer that scores is maybe a translated or reworded copy (low confidence); 0 turns the check off
    marks_review: float = 0.0
    marks_ngram: int = 6


@dataclass(frozen=True)
class TextCriterion:
    id: str
    points: int
    answer: str
    prose: bool
    settings: TextSettings
    claims: tuple[Claim, ...]
    misconceptions: tuple[Misconception, ...]
    levels: tuple[Level, ...]
    false_formula_cap: int | None = None       # a false key identity caps at this (None: no cap)
    lines: tuple[Line, ...] = ()               # code map only
    swapped_cap: int = 0


# --- parsing the rubric's text sections -----------------------------------------------------------
def _regex(text, where: str) -> re.Pattern:
    if not isinstance(text, str) or not text:
        raise TextRubricError(f"{where}: expected a non-empty regular expression")
    try:
        return re.compile(text, re.IGNORECASE)
    except re.error as exc:
        raise TextRubricError(f"{where}: bad regular expression {text!r}: {exc}") from None


def _alternatives(items, where: str) -> re.Pattern:
    if isinstance(items, str):
        items = [items]
    if not isinstance(items, list) or not items:
        raise TextRubricError(f"{where}: expected a list of regular expressions")
    for n, item in enumerate(items):
        _regex(item, f"{where}[{n}]")
    return _regex("|".join(f"(?:{i})" for i in items), where)


def _strings(data: dict, key: str, where: str) -> tuple[str, ...]:
    items = data.get(key, [])
    if not isinstance(items, list) or not all(isinstance(s, str) and s for s in items):
        raise TextRubricError(f"{where}.{key}: expected a list of non-empty strings")
    return tuple(items)


def _need(data: dict, key: str, kind, where: str):
    if not isinstance(data, dict):
        raise TextRubricError(f"{where}: expected a mapping")
    value = data.get(key)
    if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
        raise TextRubricError(f"{where}.{key}: missing or not {getattr(kind, '__name__', kind)}")
    return value


_CONCEPT_REF = re.compile(r"@([a-z][a-z0-9_]*)")


def expand(text, concepts: dict, where: str):
    """`@name` in a pattern -> the concept's alternatives `(?:…)`; an unknown name is an error."""
    if not isinstance(text, str):
        return text

    def one(m):
        if m[1] not in concepts:
            raise TextRubricError(f"{where}: unknown concept @{m[1]} (text.concepts lists {sorted(concepts)})")
        return "(?:" + concepts[m[1]] + ")"
    return _CONCEPT_REF.sub(one, text)


def _concepts(data: dict, where: str) -> dict:
    raw = data.get("concepts", {}) or {}
    if not isinstance(raw, dict):
        raise TextRubricError(f"{where}.concepts: expected a mapping of concept name -> list of regular expressions")
    out = {}
    for name, items in raw.items():
        if not isinstance(name, str) or not _CONCEPT_REF.fullmatch("@" + name):
            raise TextRubricError(f"{where}.concepts: bad concept name {name!r}")
        _alternatives(items, f"{where}.concepts.{name}")
        items = [items] if isinstance(items, str) else items
        out[name] = _alternatives([whole_words(i) for i in items], f"{where}.concepts.{name}").pattern
    return out


def _top_level(pattern: str) -> list[str]:
    """The top-level alternatives of a regular expression (`|` outside groups and character classes)."""
    parts, depth, klass, start, i = [], 0, False, 0, 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if klass:
            klass = ch != "]"
        elif ch == "[":
            klass = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    return parts + [pattern[start:]]


def whole_words(pattern: str) -> str:
    """A concept's English alternatives match whole words only: `after` is not found in `drafter`, `pass` not in
    `bypass`. An alternative that opens with a letter gets a (?<![a-z]) guard; the others are kept as written."""
    return "|".join(f"(?<![a-z]){alt}" if alt[:1].isascii() and alt[:1].isalpha() else alt for alt in _top_level(pattern))


def _rules(data: dict, where: str, concepts: dict | None = None) -> tuple[Rule, ...]:
    concepts = concepts or {}
    rules = []
    items = data.get("evidence", [])
    if not isinstance(items, list):
        raise TextRubricError(f"{where}.evidence: expected a list of rules")
    for n, rule in enumerate(items):
        if isinstance(rule, (str, dict)):
            rule = [rule]
        if not isinstance(rule, list) or not rule:
            raise TextRubricError(f"{where}.evidence[{n}]: expected a list of terms")
        terms = []
        for k, term in enumerate(rule):
            at = f"{where}.evidence[{n}][{k}]"
            if isinstance(term, dict) and set(term) == {"value"} and isinstance(term["value"], str):
                try:
                    fm.canonical(term["value"])
                except fm.Unparseable:
                    raise TextRubricError(f"{at}.value: the formula front end cannot parse {term['value']!r}") from None
                terms.append(Term(value=term["value"]))
            elif isinstance(term, dict) and set(term) == {"unless"}:
                terms.append(Term(pattern=_regex(expand(term["unless"], concepts, at), f"{at}.unless"), unless=True))
            elif isinstance(term, dict) and set(term) == {"raw"}:
                terms.append(Term(pattern=_regex(expand(term["raw"], concepts, at), f"{at}.raw"), raw=True))
            else:
                terms.append(Term(pattern=_regex(expand(term, concepts, at), at)))
        rules.append(Rule(tuple(terms)))
    return tuple(rules)


def _formulas(data: dict, where: str, must_hold: bool) -> tuple[str, ...]:
    out = _strings(data, "formulas", where)
    for n, text in enumerate(out):
        try:
            parsed = fm.canonical(text)
        except fm.Unparseable:
            raise TextRubricError(f"{where}.formulas[{n}]: the formula front end cannot parse {text!r}") from None
        if not isinstance(parsed, fm.Formula):
            raise TextRubricError(f"{where}.formulas[{n}]: expected an identity `lhs = rhs`")
        if parsed.holds is not must_hold:
            raise TextRubricError(f"{where}.formulas[{n}]: {text!r} is {'false' if must_hold else 'true'}")
    return out


def _examples(data: dict, where: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    ex = data.get("examples", {})
    if not isinstance(ex, dict):
        raise TextRubricError(f"{where}.examples: expected a mapping with positive / negative")
    return _strings(ex, "positive", f"{where}.examples"), _strings(ex, "negative", f"{where}.examples")


def parse_settings(data: dict, where: str = "text") -> TextSettings:
    words = _strings(data, "predicate_words", where)
    extra = [p.pattern for p in (_alternatives(data["predicate_patterns"], f"{where}.predicate_patterns"),)] \
        if data.get("predicate_patterns") else []
    predicates = re.compile("|".join([re.escape(w) for w in sorted(words, key=len, reverse=True)] + extra), re.IGNORECASE)
    scope = Scope(predicates, _alternatives(data.get("negation"), f"{where}.negation"),
                  _alternatives(data.get("scope_breakers"), f"{where}.scope_breakers"),
                  _alternatives(data.get("question"), f"{where}.question"),
                  _alternatives(data.get("distancing"), f"{where}.distancing"),
                  _alternatives(data["negation_after"], f"{where}.negation_after") if data.get("negation_after") else None)
    num = lambda key, kind=int: _need(data, key, kind if kind is int else (int, float), where)  # noqa: E731
    return TextSettings(scope, num("min_sentences"), num("copy_ngram"), float(num("copy_threshold", float)),
                        float(num("copy_review", float)), float(num("copy_certain", float)),
                        float(num("paraphrase_threshold", float)), num("pasted_ngram"), num("copy_min_chars"),
                        float(num("collusion_threshold", float)), num("collusion_min_chars"), num("long_answer_chars"),
                        _concepts(data, where), int(data.get("substantial_chars", 80)),
                        float(data.get("aligned_copy", 0.85)),
                        _alternatives(data["hedges"], f"{where}.hedges") if data.get("hedges") else None,
                        _alternatives(data["instance"], f"{where}.instance") if data.get("instance") else None,
                        _alternatives(data["contrast"], f"{where}.contrast") if data.get("contrast") else None,
                        float(data.get("lesson_paste", 0.6)), int(data.get("verified_review", 3)),
                        tuple(_regex(x, f"{where}.notation_swap") for x in _strings(data, "notation_swap", where))
                        if data.get("notation_swap") else (),
                        float(data.get("aligned_review", 0.8)), float(data.get("aligned_alone_review", 0.83)),
                        _alternatives(data["report"], f"{where}.report") if data.get("report") else None,
                        float(data.get("marks_review", 0.0)), int(data.get("marks_ngram", 6)))


def parse_criterion(data: dict, settings: TextSettings, where: str) -> TextCriterion:
    cid, points = _need(data, "id", str, where), _need(data, "points", int, where)
    claims, mis, lines = [], [], []
    for n, item in enumerate(data.get("claims", [])):
        at = f"{where}.claims[{n}]"
        pos, neg = _examples(item, at)
        claims.append(Claim(_need(item, "id", str, at), _need(item, "label", str, at), _need(item, "ask", str, at),
                            _rules(item, at, settings.concepts), _formulas(item, at, True), pos, neg))
        if not claims[-1].rules and not claims[-1].formulas:
            raise TextRubricError(f"{at}: a claim needs evidence rules or formulas")
    for n, item in enumerate(data.get("misconceptions", [])):
        at = f"{where}.misconceptions[{n}]"
        pos, neg = _examples(item, at)
        cap = _need(item, "cap", int, at)
        # cap == points: a misconception that caps nothing here, but is quoted, and raises its veto (a wrong claim
        # that the guide lists under another question, made on this one)
        if not 0 <= cap < points and not (cap == points and isinstance(item.get("veto"), str)):
            raise TextRubricError(f"{at}.cap: must be between 0 and {points - 1}"
                                  f" (or {points} for a misconception that only raises its veto)")
        mis.append(Misconception(_need(item, "id", str, at), _need(item, "label", str, at), cap,
                                 _rules(item, at, settings.concepts),
                                 _formulas(item, at, False), pos, neg,
                                 _alternatives(item["suspect"], f"{at}.suspect") if item.get("suspect") else None,
                                 item.get("veto") if isinstance(item.get("veto"), str) else None))
    attach = data.get("attach", {})
    for n, item in enumerate(attach.get("lines", []) if isinstance(attach, dict) else []):
        at = f"{where}.attach.lines[{n}]"
        lines.append(Line(_need(item, "id", str, at), _need(item, "label", str, at), _need(item, "ask", str, at),
                          _alternatives(item.get("objects"), f"{at}.objects"), _alternatives(item.get("cues"), f"{at}.cues"),
                          _alternatives(item.get("topic"), f"{at}.topic")))
    ids = [c.id for c in claims] + [ln.id for ln in lines]
    if len(set(ids)) != len(ids) or len({m.id for m in mis}) != len(mis):
        raise TextRubricError(f"{where}: duplicate claim or misconception id")
    levels = []
    for n, item in enumerate(data.get("scoring", [])):
        at = f"{where}.scoring[{n}]"
        lv = Level(_need(item, "points", int, at), tuple(_strings(item, "all", at)),
                   tuple(tuple(g) for g in item.get("any", [])), int(item.get("min_claims", 0)),
                   int(item.get("min_sentences", 0)), int(item.get("min_chars", 0)))
        unknown = (set(lv.all) | {c for g in lv.any for c in g}) - set(ids)
        if unknown:
            raise TextRubricError(f"{at}: unknown claim ids {sorted(unknown)}")
        if not 0 < lv.points <= points:
            raise TextRubricError(f"{at}.points: must be between 1 and {points}")
        levels.append(lv)
    if not levels or [lv.points for lv in levels] != sorted((lv.points for lv in levels), reverse=True):
        raise TextRubricError(f"{where}.scoring: need at least one level, highest points first")
    false_cap = data.get("false_formula_cap")
    if false_cap is not None and (isinstance(false_cap, bool) or not isinstance(false_cap, int)):
        raise TextRubricError(f"{where}.false_formula_cap: expected an integer")
    return TextCriterion(cid, points, _need(data, "answer", str, where), bool(data.get("prose", True)), settings,
                         tuple(claims), tuple(mis), tuple(levels), false_cap, tuple(lines),
                         int(attach.get("swapped_cap", 0)) if isinstance(attach, dict) else 0)


def parse_text_rubric(data: dict, where: str = "") -> dict[str, TextCriterion]:
    """Every text criterion of a rubric mapping (criterion id -> TextCriterion)."""
    settings = parse_settings(data.get("text", {}), "text")
    out = {}
    for n, item in enumerate(data.get("criteria", [])):
        if isinstance(item, dict) and item.get("kind") == "text":
            c = parse_criterion(item, settings, f"criteria[{n}]")
            out[c.id] = c
    return out


# --- matching -------------------------------------------------------------------------------------
QUOTED = re.compile(r"「[^」]*」|『[^』]*』|“[^”]*”|\"[^\"]*\"")
# A quotation is a mention (「有人说『…』」, 「常见误解是「…」」), unless the sentence states it as its own rule:
# 「规则就变成「…」」, "the rule becomes "…"", 「每个位置判定「…」」 (a stating or testing verb just before it, no word
# of distance near it).
_STATES_QUOTE = re.compile(r"(变成|变为|退化成|退化为|简化成|简化为|就是|即|成了|改成|判定|判断|检查|检验|判据是?|条件是|规则是|标准是|"
                           r"rule is|rule becomes|becomes|reduces to|test is|checks?|tests?|rule to|simplif\w* to)\s*[:：]?\s*$")
_MENTIONS_QUOTE = re.compile(r"误解|错误|误区|有人|说法|以为|所谓|常说|听说|别再|不要|并非|不是|myth|wrong|mistake|people say")


def unquoted_mentions(low: str) -> str:
    """`low` with the quotations that are mentioned, not stated, blanked out (same length)."""
    def blank(m: re.Match) -> str:
        before = low[max(0, m.start() - 24):m.start()]
        if _STATES_QUOTE.search(before) and not _MENTIONS_QUOTE.search(before):
            return m[0]
        return " " * len(m[0])
    return QUOTED.sub(blank, low)


@dataclass
class Analysed:
    """One answer, split and with its formulas extracted, reused by every rule."""

    sentences: list[Sentence]
    formulas: list[list[fm.Formula]]
    exprs: list[list[fm.Expr]]
    asserting: list[bool] = field(default_factory=list)


# A sentence that equates the expression the one before it ended on with a new one: 「That equals min(p(y), q(y)).」
_THAT_EQUALS = re.compile(r"^\s*(?:that|this|which|it|这|这个|它|此|也就是|即)\s*(?:equals|is equal to|=|等于|就等于|就是)\s*(?=\S)",
                          re.IGNORECASE)


def _continued(math: str, before: str, exprs: list) -> str:
    """`math` with the expression `before` ended on put in front of its opening 「that equals」, when it has one."""
    m = _THAT_EQUALS.match(math)
    if not m or not exprs:
        return math
    tail = before.rstrip(" \t。.；;，,:：")
    last = next((e.text for e in exprs if e.text and tail.endswith(e.text)), None)
    return f"{last} = {math[m.end():]}" if last else math


# Steps labelled with capital letters (「A：…」「C：…」 at the start of lines): a formula that adds up the labels
# (「A + C = min(p, q) + max(0, p − q)」) is about the steps, not about the symbols the front end gives those letters
# (A is its accept event): it is not reported false.
_STEP_LABEL = re.compile(r"^\s*(?:\*\*)?\(?([A-Z])\)?(?:\*\*)?\s*[:：.、)）]", re.MULTILINE)


def _step_labels(sentences: list[Sentence]) -> frozenset[str]:
    labels = {m[1] for s in sentences for m in _STEP_LABEL.finditer(s.text)}
    return frozenset(labels) if len(labels) >= 2 else frozenset()


def analyse(sentences: list[Sentence], scope: Scope) -> Analysed:
    fs, es, asserting = [], [], []
    labels = _step_labels(sentences)
    bindings: dict = {}                    # the answer's definitions (`β = Σ min(p, q)`), sentence to sentence
    for s in sentences:
        math = s.math
        if es and sentences[len(es) - 1].math:
            math = _continued(math, sentences[len(es) - 1].math, es[-1])
        try:
            f, e = fm.extract(math, bindings)
        except Exception:        # unparseable math falls back to the sentence rules, never to a crash
            f, e = [], []
        if labels:
            f = [replace(x, holds=None) if x.holds is False and set(re.findall(r"(?<![A-Za-z_])[A-Z](?![A-Za-z_(])", x.text)) & labels
                 else x for x in f]
        fs.append(f)
        es.append(e)
        asserting.append(bool(asserting_clauses(s, scope)) or any(x.holds is not None for x in f))
    return Analysed(sentences, fs, es, asserting)


def _shortest_end(pattern: re.Pattern, text: str, m: re.Match) -> int:
    """End of the shortest match at m's start: a greedy `.{0,10}` that runs on into 「（草稿不用…）」 does not
    make the words it ran over part of the evidence (nor their negation cues)."""
    for end in range(m.start() + 1, m.end()):
        if pattern.fullmatch(text, m.start(), end):
            return end
    return m.end()


# An expression with a comparison sign beside it is compared, not stated as a value (p/q > 1).
_COMPARED_AFTER = re.compile(r"\s*(>|<|≥|≤)")
_COMPARED_BEFORE = re.compile(r"(>|<|≥|≤)\s*$")


def _term_found(term: Term, s: Sentence, exprs: list[fm.Expr], scope: Scope) -> int | None:
    """Position of the term's first asserted (not negated) match in the sentence, or None."""
    if term.pattern is not None:
        for m in term.pattern.finditer(s.low):
            end = m.start() if term.raw else _shortest_end(term.pattern, s.low, m)
            if not negated(s, m.start(), end, scope, own=term.pattern):
                return m.start()
        return None
    want = fm.canonical(term.value)
    for e in exprs:
        if fm.matches(e, want):
            pos = s.low.find(e.text.lower())
            if pos >= 0 and (_COMPARED_AFTER.match(s.low, pos + len(e.text)) or _COMPARED_BEFORE.search(s.low[:pos])):
                continue                      # 「p/q > 1 不是概率」: the expression compared, not a value stated
            if pos < 0 or not negated(s, pos, pos + len(e.text), scope):
                return max(pos, 0)
    return None



def rule_sentence(rules: tuple[Rule, ...], a: Analysed, scope: Scope, misconception: bool = False,
                  prose: bool = True, skip: frozenset = frozenset()) -> int | None:
    """Index of the first sentence where some rule is found, asserted (None if none), leaving out the
    sentences in `skip`. A naming answer (`prose: false`, the code map) need not have a predicate in each sentence."""
    for i, s in enumerate(a.sentences):
        if i in skip or s.question or (prose and not a.asserting[i]) or (misconception and s.distanced):
            continue
        if misconception:                     # a misconception in quotation marks is mentioned, not stated
            s = replace(s, low=unquoted_mentions(s.low))
        for rule in rules:
            if any(t.unless and t.pattern.search(s.low) for t in rule.terms):
                continue
            found = [_term_found(t, s, a.exprs[i], scope) for t in rule.terms if not t.unless]
            if all(f is not None for f in found):
                return i
    return None


def formula_sentence(identities: tuple[str, ...], a: Analysed, want_true: bool) -> tuple[int, fm.Formula] | None:
    for i, found in enumerate(a.formulas):
        s = a.sentences[i]
        if s.question or (not want_true and s.distanced):
            continue
        for f in found:
            for text in identities:
                canon = fm.canonical(text)
                if want_true and fm.identity_holds(f, canon):
                    return i, f
                if not want_true and f.holds is False and _same_shape(f, canon):
                    return i, f
    return None


def _same_shape(f: fm.Formula, canon: fm.Formula) -> bool:
    (a, b), (c, d) = f.sides, canon.sides
    return (fm.matches(a, c) and fm.matches(b, d)) or (fm.matches(a, d) and fm.matches(b, c))

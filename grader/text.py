"""Free-text answers: score the argument, not the vocabulary. Pure.

`score_answer` runs, for one answer and one criterion of the rubric (grader/claims.py):
1. normalisation (grader/normalise.py) and sentences, clauses, negation and question scope
   (grader/sentences.py); formulas extracted and checked numerically (grader/formulas.py);
2. claims: each found through its evidence rules in an asserting, non-negated, non-question
   sentence, or through a true key identity; the code map attaches objects to lines
   (grader/codemap.py);
3. the rubric's levels: the first whose claims, spread over sentences and substance are met;
4. caps: a stated misconception (or a false key identity) caps the points; a keyword list (too few
   asserting clauses) or a near copy of the reference gives no full credit;
5. confidence: `low` (with the reason) when a misconception, a false formula, a copy or keyword
   flag decided the points, when the answer is long but scored low, or when the copy share is in
   the grey zone; low confidence sets `needs_review`;
6. feedback, student-safe: the rubric's questions about the missing steps and the sentence to
   reconsider, never the claim labels or patterns. `evidence` is for the instructor only.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from . import codemap
from .claims import TextCriterion, analyse, formula_sentence, rule_sentence, unquoted_mentions
from .normalise import (clean, compact, known_names, known_terms, plain, prose_tokens, repair_names, repair_terms,
                        swap_letters)
from .sentences import negated, split_sentences, substance


@dataclass(frozen=True)
class TextResult:
    criterion: str
    points: int
    max_points: int
    matched: tuple[str, ...]          # ids of the claims found
    missing: tuple[str, ...]          # ids of the claims not found
    flags: tuple[str, ...]            # empty, missing_cell, keyword_list, copy, misconception, false_formula, swapped
    needs_review: bool
    feedback: str
    copy_share: float = 0.0
    confidence: str = "high"
    confidence_reason: str = ""
    evidence: dict = field(default_factory=dict)
    answer: str = ""                  # the answer's course_id
    kind: str = "text"


def copy_share(answer: str, reference: str, n: int) -> float:
    """Share of the answer's prose n-token shingles (grader/normalise.prose_tokens) also in the reference."""
    grams = shingles(answer, n)
    if not grams:
        return 0.0
    return len(grams & shingles(reference, n)) / len(grams)


def shingles(text: str, n: int) -> set[tuple]:
    tokens = prose_tokens(text)
    return {tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)}


_PARAPHRASE_MIN_SHINGLES = 4
# A reworded copy follows the reference sentence by sentence and keeps most of its characters in order (every
# reworded copy of the corpora aligns at 0.73 or more); a terse right answer shares its phrasing, not its text.
_REWORDED_ALIGNED = 0.7


def paraphrase_share(answer: str, reference: str, n: int = 3, overlap: float = 0.4) -> tuple[float, int]:
    """(share of the answer's sentences that closely follow one sentence of the reference, how many sentences):
    a reworded copy keeps the reference's sentences one by one, with a few words changed. Sentences of fewer than
    `_PARAPHRASE_MIN_SHINGLES` shingles (a label such as 「接受路径：」 before a formula) are not compared: every
    structured derivation shares them."""
    def sentences_of(text):
        return [sh for sh in (_shingles_of(t, n) for t in re.split(r"[。！？!?；;\n]", text)) if len(sh) >= _PARAPHRASE_MIN_SHINGLES]
    ref = sentences_of(reference)
    mine = sentences_of(answer)
    if not mine or not ref:
        return 0.0, len(mine)
    close = sum(1 for a in mine if max(len(a & r) / len(a) for r in ref) >= overlap)
    return close / len(mine), len(mine)


def _shingles_of(text: str, n: int) -> set[tuple]:
    tokens = prose_tokens(text)
    return {tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)}


# Prose tokens (Chinese characters, English words) an answer needs for the alignment check: below it the answer
# is formulas with labels (「接受路径：…」), and every right derivation aligns with the reference's formulas.
_ALIGNED_MIN_PROSE = 40


def aligned_share(answer: str, reference: str, block: int = 3) -> float:
    """Share of the answer's characters (`compact`) that align, in order, with the reference in runs of at
    least `block` characters: a copy reworded with synonyms keeps its order and most of its characters."""
    return _aligned_fraction(compact(answer), compact(reference), block)


def _aligned_fraction(a, b, block: int) -> float:
    """Share of sequence `a` in matching runs of at least `block` items with `b`, in order."""
    import difflib

    if not a or not b:
        return 0.0
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return sum(m.size for m in matcher.get_matching_blocks() if m.size >= block) / len(a)


# A copy with every phrase swapped for a synonym still follows the reference's sentence frames: more than half of
# its prose tokens align, in order, with the reference's (the blind corpora's such copies: 0.59-0.61). A proof in
# its own words that takes the same canonical steps aligns in its formulas, not in its prose (about 0.4).
_PROSE_ALIGNED = 0.55


def prose_aligned_share(answer: str, reference: str, block: int = 3) -> float:
    """Share of the answer's prose tokens (Chinese characters, English words: grader/normalise.prose_tokens) that
    align, in order, with the reference's in runs of at least `block` tokens; the formulas left out."""
    return _aligned_fraction(prose_tokens(answer), prose_tokens(reference), block)


# The reference's marks: what survives a translation or a reworded copy, its formulas, names, numbers and symbols
# (single letters and the function names of the maths kept, words of any language dropped). Runs of them that the
# lesson's own prose does not have are the reference's own; an answer that has most of them took them from it.
_MARK = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?|[^\sA-Za-z0-9_\u3400-\u9fff\u3000-\u303f\uff00-\uffef，。；：、！？（）「」“”\"'`*#|>-]")
_MATH_WORD = re.compile(r"(min|max|log|log1p|exp|softmax|argmax|sum|[A-Za-z])")


def _mark_runs(text: str, n: int) -> frozenset:
    marks = [t for t in _MARK.findall(plain(text)) if not t.isalpha() or "_" in t or _MATH_WORD.fullmatch(t)]
    return frozenset(tuple(marks[i:i + n]) for i in range(len(marks) - n + 1))


@lru_cache(maxsize=32)
def _own_runs(reference: str, lesson_text: str | None, n: int) -> frozenset:
    """The reference's runs of n marks that the lesson's prose does not have: the same for every answer of a batch."""
    return _mark_runs(reference, n) - (_mark_runs(lesson_text, n) if lesson_text else frozenset())


def marks_share(answer: str, reference: str, lesson_text: str | None, n: int) -> float:
    """Share of the reference's own runs of n marks (not in the lesson's prose) that the answer has."""
    own = _own_runs(reference, lesson_text, n)
    return len(_mark_runs(answer, n) & own) / len(own) if own else 0.0


def _feedback_markers(feedback: dict) -> list[str]:
    """The literal openings of the feedback templates (「缺少：」 of 「缺少：{labels}。」): self-check output pasted back."""
    out = []
    for text in feedback.values():
        if isinstance(text, str) and "{" in text:
            head = clean(text.split("{", 1)[0]).strip()
            if len(head) >= 3:
                out.append(head)
    return out


def _rubric_text(criterion: TextCriterion, feedback: dict) -> str:
    """Everything the rubric could show or leak: labels, questions, feedback texts (pasted back = no argument)."""
    parts = [c.label + "。" + c.ask for c in criterion.claims] + [m.label for m in criterion.misconceptions]
    parts += [ln.label + "。" + ln.ask for ln in criterion.lines] + [v for v in feedback.values() if isinstance(v, str)]
    return "\n".join(parts)


def _quote(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _turns(contrast: re.Pattern, low: str) -> bool:
    """The sentence turns inside itself: a contrast word after its opening. One that opens the sentence
    (「但位置 i 实际输出的是 y_i」, "However, …") turns against the sentence before; what follows it is asserted."""
    return any(re.sub(r"[\W_]", "", low[:m.start()]) for m in contrast.finditer(low))


def score_answer(answer: str | None, criterion, reference: str | None, settings=None,
                 feedback: dict | None = None, check_copy: bool = True, lesson_text: str | None = None) -> TextResult:
    """Points for one free-text criterion (a rubric Criterion or its TextCriterion); `answer` is None when the
    answer cell is missing. `settings` is accepted for compatibility: the criterion carries its settings.
    `lesson_text`: the lesson's own prose (questions, instructions); an answer that is mostly a paste of it
    (text.lesson_paste share of its shingles) asserts nothing."""
    criterion = getattr(criterion, "text", None) or criterion   # a rubric Criterion carries its TextCriterion
    feedback = feedback or {}
    settings = criterion.settings
    all_ids = tuple(c.id for c in criterion.claims) + tuple(ln.id for ln in criterion.lines)
    common = dict(criterion=criterion.id, max_points=criterion.points, answer=criterion.answer)
    if answer is None or not answer.strip() or not re.search(r"\w", compact(answer)):
        flag = "missing_cell" if answer is None else "empty"
        return TextResult(points=0, matched=(), missing=all_ids, flags=(flag,), needs_review=False,
                          feedback=feedback.get(flag, ""), confidence="high",
                          confidence_reason="没有答案" if flag == "empty" else "没有答案单元",
                          evidence={"claims": [], "misconceptions": [], "formulas": [], "flags": [flag], "copy_share": 0.0},
                          **common)
    scope = settings.scope
    # Names the lesson uses, misread by OCR or mistyped by a confusable character (_rejection_kerneI), read as those names.
    answer = repair_names(answer, known_names(lesson_text, reference))
    # Terms typed as a pinyin homophone (惨差, 巨绝, 概律), read as the lesson's terms.
    answer = repair_terms(answer, known_terms(lesson_text, reference))
    # An answer that declares the letters exchanged (q the target, p the draft, as Chen et al. write them) is read
    # with them swapped back; a person checks that reading.
    swapped_letters = False
    if settings.notation_swap:
        norm = plain(answer)
        swapped_letters = all(p.search(norm) for p in settings.notation_swap)
    if swapped_letters:
        answer = swap_letters(answer, "p", "q")
    sentences = split_sentences(answer, scope)
    a = analyse(sentences, scope)

    # Claims.
    found: dict[str, tuple[int, str]] = {}          # id -> (sentence index, via)
    hedged = frozenset(s.index for s in sentences if settings.hedges is not None and settings.hedges.search(s.low))
    weak: set[str] = set()                          # claims found only in hedged sentences
    # worked examples (numbers): a claim found there is looked for in the general argument as well
    examples = frozenset(s.index for s in sentences if settings.instance is not None and settings.instance.search(s.low))
    for claim in criterion.claims:
        hit = rule_sentence(claim.rules, a, scope, prose=criterion.prose) if claim.rules else None
        if hit in hedged:
            firm = rule_sentence(claim.rules, a, scope, prose=criterion.prose, skip=hedged)
            hit = firm if firm is not None else hit
        if hit in examples:
            general = rule_sentence(claim.rules, a, scope, prose=criterion.prose, skip=hedged | examples)
            hit = general if general is not None else hit
        via = formula_sentence(claim.formulas, a, True) if claim.formulas else None
        if hit is not None and (hit not in hedged or via is None) and not (hit in examples and via is not None and via[0] not in examples):
            found[claim.id] = (hit, "sentence")
            if hit in hedged:
                weak.add(claim.id)
        elif via is not None:
            found[claim.id] = (via[0], "formula")    # a verified identity is strong evidence, hedged or not
    swapped = False
    named_lines: set[str] = set()
    if criterion.lines:
        attachments = codemap.attach(sentences, criterion.lines)
        named_lines = {item.line for item in attachments}
        ok, swapped = codemap.attached_lines(attachments)
        for line in criterion.lines:
            if line.id in ok:
                found[line.id] = (ok[line.id], "sentence")

    # Misconceptions.
    stated = []                                      # (misconception, sentence index)
    for mis in criterion.misconceptions:
        hit = rule_sentence(mis.rules, a, scope, misconception=True) if mis.rules else None
        if hit is None and mis.formulas:
            via = formula_sentence(mis.formulas, a, False)
            hit = via[0] if via else None
        if hit is not None:
            stated.append((mis, hit))
    false_formulas = [(i, f) for i, fs in enumerate(a.formulas) for f in fs
                      if f.holds is False and not sentences[i].question and not sentences[i].distanced]

    # Level.
    n_clauses, n_chars, n_all = substance(sentences, scope)
    points, level_gap = _level(criterion, found, n_chars)
    flags, notes, reasons = [], [], []
    raw = points
    if criterion.prose and (n_clauses < settings.min_sentences or (n_all >= 5 and 3 * n_clauses < n_all)):
        flags.append("keyword_list")             # too few asserting clauses, or a long list with few among them
    share, certain_copy, aligned = 0.0, False, 0.0
    if check_copy and reference and len(compact(reference)) >= settings.copy_min_chars:
        share = copy_share(answer, reference, settings.copy_ngram)
        close, n_sent = paraphrase_share(answer, reference)
        # characters aligned in order count only with prose around the formulas: a formula-only answer is
        # judged by its claims, not by how closely its formulas follow the reference's
        aligned = (aligned_share(answer, reference)
                   if len(compact(answer)) >= settings.copy_min_chars and len(prose_tokens(answer)) >= _ALIGNED_MIN_PROSE
                   else 0.0)
        # sentence-by-sentence closeness alone (short sentences of numbers) is no copy without shared characters
        reworded = n_sent >= 3 and close >= settings.paraphrase_threshold and (share >= settings.copy_review or aligned >= _REWORDED_ALIGNED)
        if share >= settings.copy_threshold or reworded or aligned >= settings.aligned_copy:
            flags.append("copy")
        # beyond doubt: near-verbatim, or most shingles shared and every sentence following a reference sentence
        certain_copy = share >= settings.copy_certain or (share >= settings.copy_threshold and n_sent >= 4 and close >= 0.9)
    pasted = copy_share(answer, _rubric_text(criterion, feedback), settings.pasted_ngram)
    from_lesson = copy_share(answer, lesson_text, settings.pasted_ngram) if check_copy and lesson_text else 0.0
    if (pasted >= settings.copy_threshold or from_lesson >= settings.lesson_paste
            or any(m in clean(answer) for m in _feedback_markers(feedback))
            or (settings.report is not None and settings.report.search(plain(answer)))):
        flags.append("pasted")
        pasted = max(pasted, from_lesson)
    if flags:
        points = 0                      # a keyword list, a copy or the rubric pasted back is not an argument
    for mis, _ in stated:
        points = min(points, mis.cap)
    if stated:
        flags.append("misconception")
    if false_formulas and criterion.false_formula_cap is not None:
        points = min(points, criterion.false_formula_cap)
        flags.append("false_formula")
    if swapped and not all(ln.id in found for ln in criterion.lines):
        flags.append("swapped")
        points = min(points, criterion.swapped_cap)

    # Confidence: low where a doubtful finding decided the points (the points would be higher without it), where
    # a full score rests on weak evidence, and where a substantial answer scored low; high where the grader is sure.
    corroborated = bool(stated) and bool(false_formulas) and criterion.false_formula_cap is not None
    if stated and raw > min(m.cap for m, _ in stated) and not corroborated:   # a false identity confirms it
        reasons.append("陈述了已知误解：" + "；".join(m.label for m, _ in stated))
    n_true = sum(1 for fs in a.formulas for f in fs if f.holds)
    if "false_formula" in flags and not corroborated:
        if raw > criterion.false_formula_cap:
            reasons.append("有数值上不成立的等式")
        elif not stated and points < criterion.points and n_true >= 2:
            # true identities beside a false one, and no wrong claim in words: the front end may have misread a notation
            reasons.append(f"有数值上不成立的等式，也有 {n_true} 个成立的：可能是记号没有被正确读出")
    if "copy" in flags and not certain_copy and raw > 0:
        reasons.append(f"与参考答案重合 {share:.0%}（或逐句改写自参考答案）")
    if points == criterion.points and weak & set(_required(criterion, found, n_chars)):
        reasons.append("满分，但有的论断只在推测语气的句子里出现：" + "、".join(sorted(weak)))
    if points == criterion.points and criterion.prose:
        required = [c for c in _required(criterion, found, n_chars) if found.get(c, (0, ""))[1] == "sentence"]
        # a full score resting on a worked example (numbers, not the general case) or on a sentence that turns
        # (但, however: the claim may be taken back in the same sentence) is a person's call
        shown = sorted(c for c in required if found[c][0] in examples)
        if shown:
            reasons.append("满分，但有的论断只在数值例子里出现（例子不是一般情形的论证）：" + "、".join(shown))
        if settings.contrast is not None:
            turned = sorted(c for c in required if _turns(settings.contrast, sentences[found[c][0]].low))
            if turned:
                reasons.append("满分，但有的论断所在的句子有转折，可能在同一句里被推翻：" + "、".join(turned))
        # the claims of one `any` group are alternatives of one requirement: in one sentence they count once
        slot = {c: group for level in criterion.levels for group in level.any for c in group}
        per_sentence: dict[int, int] = {}
        for i in {found[c][0] for c in required}:
            per_sentence[i] = len({slot.get(c, c) for c in required if found[c][0] == i})
        verified = {i for i, fs in enumerate(a.formulas) if any(f.holds for f in fs)}
        packed = [i for i, n in per_sentence.items() if n >= 3 and i not in verified]   # no true identity backs it
        if packed or (len(per_sentence) == 1 and len(required) >= 2):
            reasons.append("满分，但几个论断都只出自同一句话：证据单薄")
    if points == criterion.points and criterion.prose:
        said = {m.id for m, _ in stated}
        near = [m for m in criterion.misconceptions
                if m.suspect is not None and m.id not in said and _touches(m.suspect, sentences, scope)]
        if near:
            reasons.append("满分，但答案谈到了与已知误解相关的内容，请核对：" + "；".join(m.label for m in near))
    if (criterion.lines and points == 0 and not swapped and len(named_lines) == len(criterion.lines)
            and not {"copy", "pasted"} & set(flags) and any(c.id in found for c in criterion.claims)):
        reasons.append("两个对象都点名了、也写了其他部分，却得 0 分：可能是没有识别出的行对应或部分")
    if "pasted" in flags and raw > 0:
        reasons.append(f"与评分标准、反馈文字或课程正文重合 {pasted:.0%}")
    marks = (marks_share(answer, reference, lesson_text, settings.marks_ngram)
             if check_copy and reference and settings.marks_review and not {"copy", "pasted"} & set(flags) else 0.0)
    if "copy" not in flags and share >= settings.copy_review:
        reasons.append(f"与参考答案部分重合（{share:.0%}）")
    elif "copy" not in flags and (
            aligned >= settings.aligned_review and share >= settings.copy_review / 2
            or aligned >= settings.aligned_alone_review and prose_aligned_share(answer, reference) >= _PROSE_ALIGNED):
        # in step with the reference and sharing some of its phrases (a proof that only follows the same canonical
        # steps in its own words shares almost none), or in step so closely, its prose too, that synonyms for every
        # phrase cannot hide it: maybe reworded sentence by sentence
        reasons.append(f"与参考答案按顺序对齐的字符占 {aligned:.0%}：可能是逐句改写的参考答案")
    elif "copy" not in flags and marks >= settings.marks_review > 0 and raw > 0:      # 0: the check is off
        # most of the reference's own formulas, names and numbers, in its order: translated or reworded from it?
        reasons.append(f"参考答案独有的公式、名字与数字片段出现了 {marks:.0%}：可能是翻译或改写的参考答案")
    if "keyword_list" in flags and raw > points:
        reasons.append("像关键词罗列：论断没有写成句子")
    if "swapped" in flags and any(ln.id in found for ln in criterion.lines):
        reasons.append("两行与对象的对应可能颠倒")     # one line right, one crossed: a clean swap (both crossed) is certain
    if not reasons and not flags and criterion.prose and 0 < points < criterion.points and n_true >= settings.verified_review:
        # a derivation in formulas: the identities hold, but the steps were not matched to the claims
        reasons.append(f"有 {n_true} 个数值上成立的等式却没拿满分：可能是用公式写出、没有被识别的步骤")
    if (not reasons and not flags and criterion.prose and points < criterion.points
            and n_chars >= settings.long_answer_chars and level_gap <= 1):
        reasons.append("答案较长但只差一个论断未被识别，可能是表述方式不同")
    if (not reasons and criterion.prose and points == 0 and n_chars >= settings.substantial_chars
            and not {"copy", "pasted"} & set(flags) and not any(m.cap == 0 for m, _ in stated)):
        reasons.append("答案有相当多的论述却得 0 分：可能是没有识别出的表述方式")
    if swapped_letters:
        reasons.append("答案声明了 p、q 互换的记号（q 为 target、p 为草稿），评分器按换回的记号评分：请核对")
    confidence = "low" if reasons else "high"

    # Feedback (student-safe) and evidence (instructor-only).
    if stated:
        for mis, i in stated[:2]:
            notes.append(feedback.get("misconception", "请重新检查这句话：「{sentence}」").format(sentence=_quote(sentences[i].text)))
    if "false_formula" in flags:
        i, f = false_formulas[0]
        notes.append(feedback.get("false_formula", "这个等式成立吗？「{formula}」").format(formula=_quote(f.text, 120)))
    if "swapped" in flags:
        notes.append(feedback.get("swapped", "请再核对一遍：你说的每个对象分别对应哪一行？"))
    missing = tuple(i for i in all_ids if i not in found)
    if points < criterion.points:
        asks = [c.ask for c in criterion.claims if c.id in missing] + [ln.ask for ln in criterion.lines if ln.id in missing]
        if not asks and level_gap > 0:
            asks = [feedback.get("more_substance", "请把论证的每一步写成完整的句子，并说明每一步为什么成立。")]
        notes.extend(asks[:2])
    if "keyword_list" in flags:
        notes.append(feedback.get("keyword_list", ""))
    if "copy" in flags:
        notes.append(feedback.get("copy", "").format(share=share))
    message = " ".join(n for n in notes if n) if points < criterion.points or notes else feedback.get("full", "")
    evidence = {
        "claims": [{"id": c.id, "label": c.label, "found": c.id in found,
                    "sentence": _quote(sentences[found[c.id][0]].text) if c.id in found else None,
                    "via": found[c.id][1] if c.id in found else None} for c in criterion.claims]
        + [{"id": ln.id, "label": ln.label, "found": ln.id in found,
            "sentence": _quote(sentences[found[ln.id][0]].text) if ln.id in found else None,
            "via": "sentence" if ln.id in found else None} for ln in criterion.lines],
        "misconceptions": [{"id": m.id, "label": m.label, "sentence": _quote(sentences[i].text), "cap": m.cap}
                           for m, i in stated],
        "formulas": [{"text": _quote(f.text, 160), "holds": f.holds, "meaning": f.meaning}
                     for fs in a.formulas for f in fs][:20],
        "flags": list(flags),
        "copy_share": round(share, 3),
        "reference_marks": round(marks, 3),
    }
    return TextResult(points=points, matched=tuple(i for i in all_ids if i in found), missing=missing,
                      flags=tuple(flags), needs_review=confidence == "low", feedback=message or feedback.get("full", ""),
                      copy_share=round(share, 3), confidence=confidence, confidence_reason="；".join(reasons),
                      evidence=evidence, **common)


def _touches(pattern, sentences, scope) -> bool:
    """A match of `pattern` in a sentence that asserts it: not a question, not distanced, not negated."""
    for s in sentences:
        if s.question or s.distanced:
            continue
        low = unquoted_mentions(s.low)          # a quoted wrong claim is mentioned, not made (the claims' rule)
        if any(not negated(s, m.start(), m.end(), scope) for m in pattern.finditer(low)):
            return True
    return False


def _level(criterion: TextCriterion, found: dict, chars: int) -> tuple[int, int]:
    """(points of the first level met, how many conditions short the level above is)."""
    gap_above = 99
    for level in criterion.levels:
        gaps = _gaps(level, found, chars)
        if gaps == 0:
            return level.points, gap_above if level.points < criterion.points else 0
        if level.points == criterion.points or gap_above == 99:
            gap_above = min(gap_above, gaps)
    return 0, gap_above


def _required(criterion: TextCriterion, found: dict, chars: int) -> tuple[str, ...]:
    """The claims the level reached rests on: its `all` claims and the claims found of its `any` groups."""
    for level in criterion.levels:
        if _gaps(level, found, chars) == 0:
            return level.all + tuple(c for group in level.any for c in group if c in found)
    return ()


def _gaps(level, found: dict, chars: int) -> int:
    gaps = sum(1 for c in level.all if c not in found)
    gaps += sum(1 for group in level.any if not any(c in found for c in group))
    gaps += max(0, level.min_claims - len(found))
    if len({i for i, _ in found.values()}) < level.min_sentences:
        gaps += 1
    if chars < level.min_chars:
        gaps += 1
    return gaps


# --- batch collusion ------------------------------------------------------------------------------
def collusion(answers: dict, n: int, threshold: float, min_chars: int, common_share: float = 0.2) -> list[dict]:
    """Pairs of submissions whose answers to one question share at least `threshold` of their shingles.

    `answers`: submission -> {answer id: text}. An inverted index over hashed shingles (shingles
    that occur in more than `common_share` of the submissions, e.g. the question's own phrases, are
    ignored), so the work grows with the shared shingles, not with the square of the batch.
    Similarity is the shared share of the smaller answer's shingles.
    """
    by_question: dict[str, dict[str, set]] = {}
    for sub, texts in answers.items():
        for qid, text in (texts or {}).items():
            if text and len(compact(text)) >= min_chars:
                by_question.setdefault(qid, {})[sub] = {hash(s) for s in shingles(text, n)}
    out = []
    for qid, sets in by_question.items():
        index: dict[int, list[str]] = {}
        for sub, grams in sets.items():
            for g in grams:
                index.setdefault(g, []).append(sub)
        limit = max(2, int(common_share * len(sets))) if len(sets) > 10 else len(sets)
        shared: dict[tuple[str, str], int] = {}
        for subs in index.values():
            if len(subs) < 2 or len(subs) > limit:
                continue
            subs = sorted(subs)
            for i in range(len(subs)):
                for j in range(i + 1, len(subs)):
                    key = (subs[i], subs[j])
                    shared[key] = shared.get(key, 0) + 1
        for (x, y), count in shared.items():
            sim = count / max(1, min(len(sets[x]), len(sets[y])))
            if sim >= threshold:
                out.append({"answer": qid, "a": x, "b": y, "similarity": round(sim, 3)})
    return sorted(out, key=lambda d: (d["answer"], -d["similarity"], d["a"], d["b"]))

"""Sentences and clauses of an answer, the predicate test, and negation / question scope. Pure.

An answer (already `normalise.readable`) is split into sentences at 。！？；!?; and line breaks (not one right
after a comma: a sentence wrapped over two lines is one sentence), and
at a full stop followed by a space; a sentence into clauses at ，,、：: outside parentheses (the
commas in `min(p, q)` do not split). Rules match the lower-cased sentence.

- A clause *asserts* when it has a predicate: one of the rubric's predicate words, or a relation
  sign (= ≤ ≥ < > ≠ ∝ ≈, or an arrow → ⇒ read as "gives") between two terms. A noun list has neither.
- A match is *negated* when a negation cue (不…, 没有, 无需, 并非, not, no, never, without, n't …)
  occurs in its clause before the end of the match, with no scope breaker (时, 的话, 之后, if, when …)
  between the cue and the match, or when a cue that negates what precedes it (无关, 不成立, is
  irrelevant …: the rubric's `negation_after`) follows the match in its clause. Compounds that are not negations of the claim (不同, 不再, 不等于,
  不合法, 不存在 …) are not cues; the rubric lists the cues and the compounds.
- A sentence is a *question* when it ends with ? / ？ or a clause carries a question particle; a
  statement with a rising tail (…吧？, …？ after an ellipsis, or opening with 我觉得 / I think) is a hedged
  statement, not a question.
- A sentence *distances itself* from what it says when it names it as a misunderstanding (误解,
  有人认为, a common mistake …): misconceptions are not read from such sentences.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .normalise import readable, simplified, spelled_out

# A line break ends a sentence unless the line ends with a clause mark (a sentence wrapped after a comma),
# nor one inside English wrapped mid-sentence (a lower-case word, then a line going on in lower case); a line
# ending in a lone letter (a formula's last symbol, 「= p」) ends its sentence.
LINE_BREAK = r"(?<![，,、：:（(a-z])\n+|(?<=[a-z])\n+(?![a-z])|(?<=[^a-z][a-z])\n+"      # the vetoes split at the same line breaks
# A full stop ends an English sentence, not the abbreviations inside one (w.p., e.g., i.e., vs., cf.); an
# exclamation mark does, not the != of code.
ABBREVIATION = r"(?<!w\.p)(?<!e\.g)(?<!i\.e)(?<!\bvs)(?<!\bcf)(?<!\bresp)"
_SENTENCE_END = re.compile(r"(?:[。！？?；;]|!(?!=))+|" + LINE_BREAK + r"|(?<=[a-z)\]\d+])" + ABBREVIATION + r"\.(?=\s|$)"
                           r"|(?<=[A-Z])\.(?=\s+[A-Z\u4e00-\u9fff])")     # 「… / Z. P(reject) = …」
_CLAUSE_MARKS = "，,、：:"
# Punctuation of any kind (sentence or clause): a long piece without any uses its spaces as punctuation.
_ANY_PUNCT = re.compile(r"[。！？!?；;，,、：:.]")
_PARENTHESISED = re.compile(r"\([^()]*\)|（[^（）]*）")   # min(1,p/q): its comma is no punctuation of the prose
_CJK_SPACE = re.compile(r"(?<=[\u3400-\u9fff]) +(?=[\u3400-\u9fff])")
# Math punctuation is no prose punctuation: a comma or full stop with no space after it (min(p(y),q(y), 0.5).
_MATH_PUNCT = re.compile(r"[,.:](?!\s|$)")
_UNPUNCTUATED_CHARS = 40
# A space-separated run this short (「accept 那条」, 「拒绝的话」: Chinese characters and words counted) is the topic of
# the next one, not a sentence of its own.
_TOPIC_UNITS = 5
_TOPIC_UNIT = re.compile(r"[\u3400-\u9fff]|[A-Za-z0-9_]+")
# …unless it says something itself (a negation: 「一点不差」) or the next run opens a sentence of its own (「所以 …」).
_NOT_A_TOPIC = re.compile(r"[不没无非别未]|\bnot?\b")
_NEW_SENTENCE = re.compile(r"\s*(所以|因此|因而|于是|但是?|不过|然而|然后|而且|并且|另外|其实|可是|如果|要是|只要|因为|由于|总之|也就是)")
# 并不是, 也不是, 根本不: the cue negates the statement, even where the term lists the word as its own.
_EMPHATIC = re.compile(r"(并|根本|绝|从来|\bdoes|\bis|\bdo|\bare)\s*$")
# A bare verb negator with its verb and 的 before the match (没截断的那个分布, 未处理的分布) modifies the noun;
# 没有/不是/并非 … 的 still negate it (没有显式的回滚).
_VERB_NEGATORS = {"没", "未"}
_MODIFIER = re.compile(r"[\u4e00-\u9fff]{1,6}的(?!话)")
# 「不是为了避免 q(x)=0 时除以零」, 「并不是因为…」: a negated purpose or reason governs its whole phrase, a 时 inside it
# included.
_PURPOSE = re.compile(r"\s*是?\s*(为了|用来|用于|因为|由于)")
# A statement with a rising tail (「…后面的前缀已经变了…？」, 「…被重采样出来…吧？」, "I think … ?"): a hedged
# statement, not a question, unless a question word makes it one (the rubric's `question` patterns).
_TAG_QUESTION = re.compile(r"(吧|…|\.\.\.|呀)\s*[?？]\s*$|^\s*(我觉得|我猜|我认为|大概|应该|i think|i guess|probably)")
_RELATION = re.compile(r"[\w)\]|+]\s*(=|≤|≥|<|>|≠|∝|≈|→|⇒)\s*[\w(\[|Σ∑-]")


@dataclass(frozen=True)
class Scope:
    """The rubric's words for predicates, negation and questions (compiled)."""

    predicates: re.Pattern
    negation: re.Pattern
    breakers: re.Pattern
    question: re.Pattern
    distancing: re.Pattern
    negation_after: re.Pattern | None = None   # cues that negate what comes before them (与马尔可夫性无关, is irrelevant)


@dataclass(frozen=True)
class Sentence:
    index: int
    text: str                          # as written (normalised for quoting)
    low: str                           # Simplified Chinese, lower case: what rules match
    clauses: tuple[tuple[int, int], ...]   # (start, end) offsets into `low`
    question: bool
    distanced: bool
    simple: str = ""                   # as written, Traditional Chinese as Simplified (case kept): the formula front end reads it

    @property
    def math(self) -> str:
        return self.simple or self.text

    def clause_at(self, pos: int) -> tuple[int, int]:
        for start, end in self.clauses:
            if start <= pos < end:
                return start, end
        return self.clauses[-1] if self.clauses else (0, len(self.low))


def split_sentences(text: str, scope: Scope) -> list[Sentence]:
    text = readable(text)
    out, start = [], 0
    pieces = []
    for m in _SENTENCE_END.finditer(text):
        pieces.append(text[start:m.end()])
        start = m.end()
    pieces.append(text[start:])
    pieces = _answered_questions([part for piece in pieces for part in unpunctuated(piece)])
    for piece in pieces:
        stripped = re.sub(r"\s*\n\s*", " ", piece.strip())     # a wrapped sentence reads as one line
        if not re.search(r"\w", stripped):
            continue
        simple = simplified(stripped)
        low = spelled_out(simple.lower())
        clauses = tuple(_clauses(low))
        # a question mark inside the sentence is normalise.spelled_out's: a why left to the reader (…，这里略过)
        question = ((low.rstrip().endswith(("?", "？")) and not _TAG_QUESTION.search(low)) or "？" in low.rstrip()[:-1]
                    or any(scope.question.search(low[a:b]) for a, b in clauses))
        out.append(Sentence(len(out), stripped, low, clauses, question, bool(scope.distancing.search(low)), simple))
    return out


# A question the answer asks itself and answers in the next sentence (「被拒的总概率是多少？把所有草稿的“不接受”加起来
# = 1 − Σmin(p,q)。」): a short question of what, why or how, then a statement that does not wave the step away, read
# as one sentence whose question is the subject clause of its answer. A yes/no question (吗, 是否, 是不是) is not
# joined: its answer (「不算」, 「是的」) says nothing without the question's own words, which may be negated.
_WH_QUESTION = re.compile(r"(多少|多大|什么|啥|哪(个|些|里|一|条)|为什么|为何|为啥|怎么|怎样|如何|几(条|个|种|步)|\bwhat\b|\bwhy\b|\bhow\b|"
                          r"\bwhich\b)[^?？]{0,12}[?？]\s*$", re.IGNORECASE)
_YES_NO = re.compile(r"吗|是否|是不是|对不对|能不能|可不可以|有没有|\b(is|are|does|do|can)\b\s", re.IGNORECASE)
_WAVED = re.compile(r"略|留给读者|不展开|不赘述|不知道|不清楚|不确定|说不清|显然|\bomitted\b|\bleft to\b|[?？]\s*$|吧\s*[。.!！]?\s*$")


def _answered_questions(pieces: list[str]) -> list[str]:
    out: list[str] = []
    for piece in pieces:
        before = out[-1].strip() if out else ""
        if (before and len(before) <= 40 and _WH_QUESTION.search(before) and not _YES_NO.search(before)
                and before.count("(") + before.count("（") == before.count(")") + before.count("）")   # not a (…？) aside
                and len(re.findall(r"\w", piece)) >= 2 and not _WAVED.search(piece)):
            out[-1] = re.sub(r"[?？]\s*$", "：", before) + piece.lstrip()
        else:
            out.append(piece)
    return out


def unpunctuated(piece: str) -> list[str]:
    """A long piece with no punctuation at all (a formula's own commas aside), whose Chinese runs are
    separated by spaces, uses the spaces as its punctuation: 「…算的 可是被拒以后… 所以…」 is several
    sentences, not one."""
    bare = piece
    while _PARENTHESISED.search(bare):
        bare = _PARENTHESISED.sub("", bare)
    if len(piece.strip()) < _UNPUNCTUATED_CHARS or _ANY_PUNCT.search(_MATH_PUNCT.sub("", bare)):
        return [piece]
    out: list[str] = []
    for part in _CJK_SPACE.split(piece):
        if (out and len(_TOPIC_UNIT.findall(out[-1])) <= _TOPIC_UNITS and not _NOT_A_TOPIC.search(out[-1])
                and not _NEW_SENTENCE.match(part)):
            out[-1] = out[-1] + " " + part          # 「accept 那条 每个 y 拿到 min(p, q)」: a topic, then what is said of it
        else:
            out.append(part)
    return out


def _clauses(low: str):
    depth, start = 0, 0
    for i, ch in enumerate(low):
        if ch in "([（":
            depth += 1
        elif ch in ")]）":
            depth = max(0, depth - 1)
        elif ch in _CLAUSE_MARKS and depth == 0:
            if i > start:
                yield start, i
            start = i + 1
    if start < len(low):
        yield start, len(low)


def asserts(clause: str, scope: Scope) -> bool:
    """A clause with a predicate (a word from the rubric or a relation between two terms); a clause that is
    only a predicate word (「约掉」, 「相加」 in a list of nouns) asserts nothing of anything."""
    bare = clause.strip(" \t。.；;！!？?")
    if bare and scope.predicates.fullmatch(bare):
        return False
    return bool(scope.predicates.search(f" {clause} ") or _RELATION.search(clause))


def asserting_clauses(sentence: Sentence, scope: Scope) -> list[str]:
    return [sentence.low[a:b] for a, b in sentence.clauses if asserts(sentence.low[a:b], scope)]


def negated(sentence: Sentence, start: int, end: int, scope: Scope, own: re.Pattern | None = None) -> bool:
    """Is the match low[start:end] negated in its clause (a cue before its end, no breaker in between)?
    `own`: the term's pattern; a cue inside the match where the pattern itself matches is the term's own
    word (「不等于」 listed as a sign of deviation), not a negation of it."""
    c_start, c_end = sentence.clause_at(start)
    # cues are read in the whole clause (a cue may look ahead: 不存在…的问题), but only those opening before the
    # match's end count
    region = sentence.low[c_start:max(c_end, end)]
    for cue in scope.negation.finditer(region):
        if c_start + cue.start() >= max(start, end):
            break
        at = c_start + cue.start()
        if own is not None and at >= start and own.match(sentence.low, at) and not _EMPHATIC.search(sentence.low[:at]):
            continue
        after = region[cue.end():max(cue.end(), start - c_start)]
        if cue.group() in _VERB_NEGATORS and _MODIFIER.match(after):
            continue                          # 没截断的那个分布: a negated modifier, not a negation of the noun
        if not scope.breakers.search(after) or _PURPOSE.match(region, cue.end()):
            return True
    if scope.negation_after is not None:       # 「这跟马尔可夫性无关」: the cue follows the match in its clause
        _, c_end = sentence.clause_at(start)
        tail = sentence.low[end:c_end]
        cue = scope.negation_after.search(tail)
        if cue and not scope.breakers.search(tail[:cue.start()]):
            return True
    return False


_WORDY = re.compile(r"[\u3400-\u9fff]|[a-z]{2,}")


def substance(sentences: list[Sentence], scope: Scope) -> tuple[int, int, int]:
    """(asserting clauses, characters in them without whitespace, all clauses) over sentences that are not questions.
    A clause of numbers and symbols only (a cell of a table of values, 「0.6」, 「p − q」) is neither: it names nothing."""
    count = chars = total = 0
    for s in sentences:
        if s.question:
            continue
        total += sum(1 for a, b in s.clauses if _WORDY.search(s.low[a:b]))
        for clause in asserting_clauses(s, scope):
            count += 1
            chars += len(re.sub(r"\s", "", clause))
    return count, chars, total

"""Mathematical statements in an answer: extract, parse with sympy, check numerically. Pure.

Front end (our own, onto `sympy.parsing.sympy_parser`): the answer's `normalise.readable` text,
where LaTeX is already plain math, is searched for runs of math characters; each run is cut at
relation signs into sides, and each side is trimmed to its longest part that parses. Before
parsing, a side is rewritten into a small, whitelisted language:

- `p(x)`, `p(y)`, `p_j(x | …)`, `p_j` -> the target distribution `p`; the same for the draft `q`;
- `P(reject)` / `P(拒绝)` / `P_reject` -> `R`, the total rejection probability; `P(y)` / `P(Y = y)`
  -> `O`, the output probability; `r(y)` -> `r`, the normalised residual;
- `Σ_v expr`, `sum_x expr`, `∑ expr` -> `S(expr)` (the summand is the next product term);
- `(expr)_+` -> `Max(0, expr)`; `min` / `max` -> `Min` / `Max`; `·` `×` -> `*`;
- `|expr|` and `abs(expr)` -> `Abs(expr)` (a bar left after the distributions are read is an absolute value;
  the conditioning bar of `p(x | c)` has gone with its parentheses).

- array notation: `np.minimum` / `np.maximum` (or bare `minimum` / `maximum`) / `torch.clamp(x, min=0)` -> `min` /
  `max`, `x.sum()` / `np.sum(x)` -> `Σ x`, `==` -> `=`, one element `p[y]` -> `p` (the identity elementwise); Greek
  letters are single letters;
- event probabilities written in words: `P(接受且输出 y)` / `P(accept, y)` -> `A` (= min(p, q)),
  `P(拒绝且输出 y)` / `P(reject and y)` -> `J` (= P(reject)·r), `P(接受)` -> `C` (= Σ min(p, q));
- definitions: `name = expr` (a word, a snake_case name or a Greek letter on its own left of `=`) binds
  the name for the rest of the answer (`accept = q * np.minimum(1, p / q)`, `β = Σ_x min(p, q)`);
- an arrow between two sides (`q·min(1, p/q) → min(p, q)`) is an equation when it holds, never a false one;
- a side that prose continues (`= r 的分母`, `= the denominator of r`) is not a side: no equation.

Only these names, single letters and numbers may remain (anything else is "unparseable", never
eval'd). Each parsed side is evaluated with numpy on random strictly positive distributions p, q
(and random reals for any other single letter, so `min(a, b) + max(0, a - b) = a` is checked too).
An equation *holds* when consecutive sides agree on every trial; it is reported false only when it
is unconditional and uses nothing but the known quantities, else its truth is unknown (None). A side
that is a number other than 0 and 1 is a worked example's value (`1 − Σ min(p, q) = 0.3`): unknown too.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

_GREEK = "αβγδεθλμνπρστφχψω"
_RUN = re.compile(r"[A-Za-z0-9_()\[\]+\-*/·×=<>≤≥≠≈→⇒,.'|Σ∑ " + _GREEK + "]+")
_RELATION = re.compile(r"≤|≥|≠|≈|<=|>=|!=|=|<|>|→|⇒")
_KNOWN = {"p", "q", "r", "R", "O", "A", "J", "C"}
_HEADS = {"Min": "min", "Max": "max", "S": "sum"}
_MAX_SIDE = 160
_TRIALS, _VOCAB = 5, 6
_CONDITIONAL = re.compile(r"当|若|如果|假如|假设|只要|时候|的时|时(?=[\s,，])|[)）]\s*时|\bif\b|\bwhen\b|\bwhenever\b|\bassume|\bsuppose|≤|≥|<|>", re.IGNORECASE)


class Unparseable(ValueError):
    pass


@dataclass(frozen=True)
class Expr:
    text: str                      # the side as written
    expr: object                   # the sympy expression
    heads: frozenset               # which of min, max, sum, R, r, O it uses
    free: frozenset                # single letters other than the known quantities
    values: tuple                  # one numpy array (length V) per trial


@dataclass(frozen=True)
class Formula:
    text: str
    sides: tuple[Expr, ...]
    holds: bool | None             # True / False / None (cannot tell)
    meaning: str = ""              # filled by the claim matcher (which identity it is)


@dataclass
class _Env:
    trials: list = field(default_factory=list)


# --- rewriting into the small language ------------------------------------------------------------
# P(reject), P_rej, and P(A^c): the complement of the acceptance event A, in measure-theoretic notation.
_P_REJECT = re.compile(r"\bP\s*(?:\(\s*(?:reject(?:ion|ed)?|rej|拒绝|被拒|拒|rejected|A\s*\^?\s*(?:c|C|complement|∁))\s*\)|_\s*\(?(?:reject(?:ion)?|rej)\)?)",
                       re.IGNORECASE)
# The rejection probability named in words inside a formula: 「被拒概率 × r(y)」, 「拒绝的总概率 = 1 − Σ min(p, q)」.
_P_REJECT_WORDS = re.compile(r"(?:总的|总)?(?:被拒绝?|拒绝)(?:的)?(?:总)?(?:概率|几率|机率)")
_OPERATOR_BEFORE = re.compile(r"[=·×*/(+−\-]\s*$")
_OPERATOR_AFTER = re.compile(r"\s*[=·×*/)+−\-]")


# 「拒绝的概率是 1 − Σ min(p, q)」: the word, a copula, then a formula (an operator before the clause ends)
_COPULA_FORMULA = re.compile(r"\s*(?:是|为|等于|就是)\s*(?=[\dΣ∑(pqrR]|min|max)(?=[^\u4e00-\u9fff，。；;,:：]*?[−\-+·×*/Σ∑])")

# (not after an expression: 「max(0, p − q) 被拒的总概率是 …」 run on without punctuation would read as a product)
_P_REJECT_SAID = re.compile(r"(?<![A-Za-z0-9_)\]]\s)(?<![A-Za-z0-9_)\]])" + _P_REJECT_WORDS.pattern + _COPULA_FORMULA.pattern)


def _operand_word(m: re.Match) -> str:
    """The rejection probability in words as R where it is an operand (「= 被拒概率 × r(y)」), not a label before its
    value (「总拒绝概率 1 − Σ min(p, q)」). (Said to be a formula, 「拒绝的概率是 1 − …」, it is `_P_REJECT_SAID`'s.)"""
    text = m.string
    operand = _OPERATOR_BEFORE.search(text[max(0, m.start() - 4):m.start()]) or _OPERATOR_AFTER.match(text, m.end())
    return " R " if operand else m[0]


_NAMED_TWICE = re.compile(r"(?<![A-Za-z])R(?:\s+R(?![A-Za-z]))+")
_P_OUT = re.compile(r"\bP\s*\(\s*(?:[YX]\s*=\s*)?(?:y|output\s*=\s*y|out\s*=\s*y|输出\s*y|y_out)\s*\)|\bP_out\b")
_DIST = re.compile(r"(?<![A-Za-z])([pq])(?:_\(?[A-Za-z0-9+\-]{1,6}\)?)?(?:\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\))?(?![A-Za-z(])")
_RESID = re.compile(r"(?<![A-Za-z])r(?:_\(?[A-Za-z0-9+\-]{1,6}\)?)?(?:\s*\(\s*[a-z](?:_\w+)?\s*\))?(?![A-Za-z(])")
_SUM = re.compile(r"(?:Σ|∑|\bsum)\s*(?:_\s*(?:\([^()]*\)|[A-Za-z0-9]+(?:\s*∈\s*V)?))?\s*")
_WORD = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_ALLOWED = _KNOWN | {"Min", "Max", "S", "Abs", "log", "exp"}
_ABS = re.compile(r"\|([^|]+)\|")

# Event probabilities written with words inside P(...): which event, by its words (after Simplified conversion).
_EVENT = re.compile(r"(?<![A-Za-z])P\s*\(((?:[YX]\s*=\s*y\s*,\s*)?[^()=]{0,40}?)\)")
_EV_ACCEPT = re.compile(r"接受|通过|accept|\bacc\b|keep|kept", re.IGNORECASE)
_EV_REJECT = re.compile(r"拒|reject|rej\b", re.IGNORECASE)
_EV_OUTPUT = re.compile(r"(?<![A-Za-z])y(?![A-Za-z])|输出|output|emit")
_EV_WORDS = re.compile(r"[\u3400-\u9fff]|[A-Za-z]{2,}")
# the acceptance event written as the letter A (measure notation), its complement A^c (Aᶜ reads Ac after NFKC)
_EV_LETTER = re.compile(r"\s*(y\s*,\s*)?A(\s*\^?\s*(?:c|C|complement|∁))?\s*(,\s*y)?\s*")
# Array notation.
# (minimum / maximum also bare, as after `from numpy import minimum`)
_NP = re.compile(r"\b(?:np|numpy|torch)\.(minimum|maximum|min|max|sum|clip|clamp)\s*\(|(?<![\w.])(minimum|maximum)\s*\(")
_POSSESSIVE = re.compile(r"(?<![A-Za-z0-9_)\]])[A-Za-z0-9_)\]]+\s*(?=(?:的|之|嘅)\s*[\u3400-\u9fffA-Za-z]|'s\s)")
_DEFINED = re.compile(r"(?<![\w.])([A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*|[" + _GREEK + r"])\s*=(?!=)")
_NOT_BINDABLE = {"min", "max", "sum", "log", "exp", "P", "O", "R"} | {"p", "q", "r"}
# Single letters that name a distribution, a token or an index (x = y is no definition); others may be bound
# (a = min(1, p/q), s = Σ min(p, q)).
_VARIABLES = set("pqrxyvuijkntz")


def _dist(m: re.Match) -> str:
    return m[1]


def _close_sums(text: str, tight: bool = False) -> str:
    """`S(` markers placed by _SUM: the summand runs to the next top-level + or - (or the end); `tight`: also
    to the next top-level * or / (`Σ max(0, p − q) · r / Σ max(0, p − q)` read as (Σ …)·r/(Σ …))."""
    stops = "+-=,*/" if tight else "+-=,"
    out, i = [], 0
    while i < len(text):
        m = _SUM.match(text, i) if text[i] in "Σ∑s" else None
        if m and (text[i] != "s" or text[i:i + 3] == "sum") and m.end() > i:
            rest = _close_sums(text[m.end():], tight)
            depth, j = 0, 0
            while j < len(rest):
                ch = rest[j]
                if ch == "(":
                    depth += 1
                elif ch == ")":
                    if depth == 0:
                        break
                    depth -= 1
                elif ch in stops and depth == 0 and rest[:j].strip():
                    break
                j += 1
            out.append("S(" + rest[:j] + ")" + rest[j:])
            return "".join(out)
        out.append(text[i])
        i += 1
    return "".join(out)


def _plus_parts(text: str) -> str:
    """`(expr)_+` -> `Max(0, expr)`."""
    text = text.replace(")^+", ")_+")
    while True:
        k = text.find(")_+")
        if k < 0:
            return text
        depth, j = 0, k
        while j >= 0:
            depth += {")": 1, "(": -1}.get(text[j], 0)
            if depth == 0:
                break
            j -= 1
        if j < 0:
            raise Unparseable(text)
        rest = re.sub(r"^\(\s*[a-z](?:_?\w)?\s*\)", "", text[k + 3:])    # (p − q)_+(y): the argument of the part
        text = text[:j] + "Max(0, " + text[j + 1:k] + ")" + rest


def _event(m: re.Match) -> str:
    """`P(接受且输出y)` -> ` A `, ... ; P(...) with math inside (P(y), P(X = y)) is left as it is."""
    inner = re.sub(r"^[YX]\s*=\s*y\s*,", "y,", m[1])       # P(Y = y, acc): the output is y
    named = _EV_LETTER.fullmatch(inner)                     # the acceptance event A: P(A), P(Y = y, A), P(Y = y, A^c)
    if named:
        return (" J " if named[2] else " A ") if named[1] or named[3] else (" R " if named[2] else " C ")
    if not _EV_WORDS.search(inner.replace("y_out", "")):
        return m[0]
    acc, rej, out = _EV_ACCEPT.search(inner), _EV_REJECT.search(inner), _EV_OUTPUT.search(inner)
    if rej and not acc:
        return " J " if out else " R "
    if acc and not rej:
        return " A " if out else " C "
    return m[0]


def _postfix_sums(text: str) -> str:
    """`X.sum()` -> `Σ(X)`: X is the parenthesised group or call right before `.sum()`."""
    while True:
        k = text.find(".sum()")
        if k < 0:
            return text
        j, depth = k - 1, 0
        while j >= 0:
            ch = text[j]
            if ch == ")":
                depth += 1
            elif ch == "(":
                depth -= 1
                if depth == 0:
                    break
            elif depth == 0:
                break
            j -= 1
        if j < 0 or text[j] != "(":
            start = k                      # a bare name: x.sum()
            while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
                start -= 1
        else:
            start = j
            while start > 0 and (text[start - 1].isalpha() or text[start - 1] in "_."):
                start -= 1
        text = text[:start] + "Σ(" + text[start:k] + ")" + text[k + 6:]


_C_MINMAX = re.compile(r"\bf(min|max)[fl]?\s*\(")
_C_FLOAT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\.?f\b")


# One element of an array, indexed by a single letter (p[y], minimum(p, q)[y]): the same identity elementwise.
_ELEMENT = re.compile(r"(?<=[A-Za-z0-9_)])\[\s*[a-z]\s*\]")


def array_notation(text: str) -> str:
    """numpy / torch spellings as plain math: np.minimum -> min, x.sum() -> Σ(x), == -> =."""
    text = _NP.sub(lambda m: {"minimum": "min(", "maximum": "max(", "sum": "Σ(", "clip": "clip(",
                              "clamp": "clip("}.get(m[1] or m[2], (m[1] or m[2]) + "("), text)
    text = re.sub(r"\bclip\(([^()]*(?:\([^()]*\)[^()]*)*?),\s*(?:min\s*=\s*)?0(?:\.0)?\s*(?:,\s*(?:max\s*=\s*)?None)?\)",
                  r"max(0, \1)", text)
    text = _postfix_sums(text)
    text = _ELEMENT.sub("", text)                               # acc[y] = q[y] * …: elementwise, as acc = q * …
    text = _C_MINMAX.sub(lambda m: m[1] + "(", text)           # C's fminf / fmaxf / fmin / fmax
    text = _C_FLOAT.sub(r"\1", text)                            # 1.f, 0.0f: float literals
    return text.replace("==", "=")


def rewrite(side: str, tight: bool = False) -> str:
    s = side.replace("[", "(").replace("]", ")").replace("·", "*").replace("×", "*")
    s = re.sub(r"\)\s*(?=(?:min|max)\s*\()", ")*", s, flags=re.IGNORECASE)     # q(y)min(…): an implied product
    s = _P_REJECT.sub(" R ", s)
    s = _P_OUT.sub(" O ", s)
    s = _DIST.sub(_dist, s)
    s = _RESID.sub("r", s)
    s = re.sub(r"(?<![A-Za-z])abs\s*\(", "Abs(", _ABS.sub(r"Abs(\1)", s), flags=re.IGNORECASE)
    s = re.sub(r"(?<![A-Za-z])min\b", "Min", s, flags=re.IGNORECASE)
    s = re.sub(r"(?<![A-Za-z])max\b", "Max", s, flags=re.IGNORECASE)
    # D⁺ / D⁻ (D_+ / D_-): a letter's positive and negative parts
    s = re.sub(r"(?<![A-Za-z])([A-Z])_([+-])", lambda m: f"Max(0, {m[2].strip('+')}{m[1]})", s)
    s = _plus_parts(s)
    s = _close_sums(s, tight)
    if not re.fullmatch(r"[\w\s()+\-*/.,]*", s) or "__" in s or "**" in s or not s.strip():
        raise Unparseable(side)
    for word in _WORD.findall(s):
        if word not in _ALLOWED and not (len(word) == 1 and word.isalpha()):
            raise Unparseable(side)
    return s


@lru_cache(maxsize=4096)
def parse(side: str, tight: bool = False):
    """A sympy expression for one side (raises Unparseable); `tight`: sums close at a top-level * or /."""
    from sympy import Abs, Function, Max, Min, Symbol, exp, log
    from sympy.parsing.sympy_parser import implicit_multiplication, parse_expr, standard_transformations

    text = rewrite(side, tight)
    names = {n: Symbol(n) for n in _KNOWN}
    names.update(Min=Min, Max=Max, S=Function("S"), Abs=Abs, log=log, exp=exp)
    for letter in set(re.findall(r"(?<![A-Za-z])[A-Za-z](?![A-Za-z])", text)) - set(names):
        names[letter] = Symbol(letter)
    try:
        result = parse_expr(text, local_dict=names, global_dict={"__builtins__": {}, "Integer": __import__("sympy").Integer,
                                                              "Float": __import__("sympy").Float,
                                                              "Rational": __import__("sympy").Rational,
                                                              "Symbol": Symbol},
                          transformations=standard_transformations + (implicit_multiplication,))
    except Exception as exc:  # sympy raises many kinds (SyntaxError, TypeError, TokenError ...)
        raise Unparseable(side) from exc
    if not isinstance(result, __import__("sympy").Expr):
        raise Unparseable(side)
    return result


# --- numeric evaluation ---------------------------------------------------------------------------
def _trials():
    rng = np.random.default_rng(20260707)
    out = []
    for _ in range(_TRIALS):
        p = rng.dirichlet(np.ones(_VOCAB)) * 0.98 + 0.02 / _VOCAB
        q = rng.dirichlet(np.ones(_VOCAB)) * 0.98 + 0.02 / _VOCAB
        plus = np.maximum(0.0, p - q)
        env = {"p": p, "q": q, "R": plus.sum(), "r": plus / plus.sum(), "O": p, "A": np.minimum(p, q),
               "J": plus, "C": np.minimum(p, q).sum()}
        out.append((env, rng))
    return out


_TRIAL_ENVS = _trials()


class Unevaluable(ValueError):
    pass


def _eval(expr, env: dict, extra: dict):
    from sympy import Abs, Add, Function, Max, Min, Mul, Number, Pow, Symbol, exp, log

    if isinstance(expr, Number):
        return float(expr)
    if isinstance(expr, Symbol):
        if expr.name in env:
            return env[expr.name]
        return extra[expr.name]
    args = [_eval(a, env, extra) for a in expr.args]
    if isinstance(expr, Add):
        return sum(args[1:], args[0])
    if isinstance(expr, Mul):
        out = args[0]
        for a in args[1:]:
            out = out * a
        return out
    if isinstance(expr, Pow):
        with np.errstate(all="ignore"):
            return np.power(args[0], args[1])
    if isinstance(expr, Min):
        return np.minimum.reduce(np.broadcast_arrays(*args))
    if isinstance(expr, Max):
        return np.maximum.reduce(np.broadcast_arrays(*args))
    if isinstance(expr, Abs):
        return np.abs(args[0])
    if isinstance(expr, log):
        with np.errstate(all="ignore"):
            return np.log(args[0])
    if isinstance(expr, exp):
        return np.exp(np.clip(args[0], -700, 700))
    if isinstance(expr, Function) and type(expr).__name__ == "S" and len(args) == 1:
        return np.sum(np.broadcast_to(args[0], (_VOCAB,)))
    raise Unevaluable(str(expr))


def _heads(expr) -> frozenset:
    from sympy import Max, Min, Symbol

    found = set()
    for node in _walk(expr):
        if isinstance(node, Min):
            found.add("min")
        elif isinstance(node, Max):
            found.add("max")
        elif type(node).__name__ == "S":
            found.add("sum")
        elif isinstance(node, Symbol) and node.name in ("R", "r", "O", "A", "J", "C"):
            found.add(node.name)
    return frozenset(found)


def _walk(expr):
    yield expr
    for a in expr.args:
        yield from _walk(a)


def evaluate(side: str, tight: bool = False) -> Expr:
    expr = parse(side, tight)
    free = frozenset(s.name for s in expr.free_symbols if s.name not in _KNOWN)
    values = []
    for n, (env, _) in enumerate(_TRIAL_ENVS):
        rng = np.random.default_rng(1000 + n)
        extra = {name: float(rng.normal()) * 2 for name in sorted(free)}
        try:
            with np.errstate(all="ignore"):
                value = np.broadcast_to(np.asarray(_eval(expr, env, extra), dtype=float), (_VOCAB,)).copy()
        except (Unevaluable, ValueError, TypeError, KeyError, OverflowError, ZeroDivisionError) as exc:
            raise Unparseable(side) from exc
        values.append(value)
    return Expr(side.strip(), expr, _heads(expr), free, tuple(values))


def same_value(a: Expr, b: Expr) -> bool:
    for x, y in zip(a.values, b.values):
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))) or not np.allclose(x, y, rtol=1e-7, atol=1e-9):
            return False
    return True


def proportional(a: Expr, b: Expr) -> bool:
    for x, y in zip(a.values, b.values):
        if not np.all(np.isfinite(x)) or not np.all(np.isfinite(y)) or not np.any(y):
            return False
        k = x.sum() / y.sum() if y.sum() else 0.0
        if not k or not np.allclose(x, k * y, rtol=1e-7, atol=1e-9):
            return False
    return True


# --- extraction -----------------------------------------------------------------------------------
def _relevant(e: Expr) -> bool:
    return bool(e.heads) or bool({"p", "q"} & {s.name for s in e.expr.free_symbols})


_WORDY = re.compile(r"(?<![A-Za-z_])(?!min\b|max\b|sum\b|log\b|exp\b)[A-Za-z]{2,}(?![A-Za-z_(])")


def _chunks(part: str) -> tuple[list[str], bool, bool]:
    """A part between relation signs, cut at prose words and at top-level commas: (chunks, whether prose
    comes before the first chunk, whether prose comes after the last one)."""
    out, depth, start = [], 0, 0
    marks = {m.start(): m.end() for m in _WORDY.finditer(part)}
    cuts = []                               # (position, is prose)
    i = 0
    while i < len(part):
        ch = part[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        if depth == 0 and (ch == "," or i in marks):
            out.append(part[start:i])
            cuts.append((len(out), i in marks))
            i = marks.get(i, i + 1)
            start = i
            continue
        i += 1
    out.append(part[start:])
    kept = [n for n, c in enumerate(out) if c.strip(" ,.;:")]
    if not kept:
        return [], bool(marks), bool(marks)
    lead = any(prose and n <= kept[0] for n, prose in cuts)
    tail = any(prose and n > kept[-1] for n, prose in cuts)
    chunks = [out[n].strip(" ,.;:") for n in kept]
    return [c.rstrip("( ") if c.count("(") > c.count(")") else c for c in chunks], lead, tail


_OPEN_MIN_MAX = re.compile(r"(?<![A-Za-z])(?:min|max)\([^()]*[\w]\s*$", re.IGNORECASE)


def _expr(chunk: str) -> Expr | None:
    if chunk.count("(") > chunk.count(")"):
        chunk = chunk.rstrip("( ")              # a run cut by prose right after an opening parenthesis
    if chunk.count("(") - chunk.count(")") == 1 and _OPEN_MIN_MAX.search(chunk):
        chunk += ")"                            # min/max left open at the relation sign: 「max(0,p-q = p(y)」
    if len(chunk) > _MAX_SIDE or chunk.count("(") != chunk.count(")") or not re.search(r"[A-Za-z0-9]", chunk):
        return None
    try:
        return evaluate(chunk)
    except Unparseable:
        return None


_P_ACC = re.compile(r"(?<![A-Za-z])P_\(?(?:acc|accept(?:ed|ance)?)\)?(?![A-Za-z])")


# An enumerator of the steps, (1) or (iii) before a space, is no factor of the formula after it.
_ENUMERATOR = re.compile(r"(?:^|(?<=[\s。.;；:：,，]))\((?:\d{1,2}|[ivIV]{1,4})\)(?=\s)")
# Pr[rej], Prob(accept, y), P[y, acc], ℙ(…): the same event probabilities as P(…).
_PROB = re.compile(r"(?<![A-Za-z])(?:Pr|Prob|P|ℙ)\s*\[([^\[\]]{0,40})\]|(?<![A-Za-z])(?:Pr|Prob|ℙ)\s*\(")


# Operators said in words between two math operands: 「q(y) 乘 min(1, p/q) 也就是 min(p, q)」, 「1 减 Σ min(p, q)」.
# 「就是 / 即 / 等于」 reads as an arrow (counts when true, never reported false): words are loose.
_OPERAND_BEFORE, _OPERAND_AFTER = r"(?<=[A-Za-z0-9_)\]])\s*", r"\s*(?=[A-Za-z0-9_(Σ∑])"
_WORD_OPERATORS = [(re.compile(_OPERAND_BEFORE + words + _OPERAND_AFTER), sign) for words, sign in (
    ("(?:乘以|乘上|乘)", " · "), ("(?:除以)", " / "), ("(?:减去|减掉|减)", " - "), ("(?:加上)", " + "),
    ("(?:也就是|其实就是|就是|即|等于|正好是|恰好是)", " → "))]


# Lattice notation: a ∧ b = min(a, b), a ∨ b = max(a, b), between two simple operands (a name, a name applied).
_TERM = r"(?:[A-Za-z](?:_\w+)?(?:\s*\([^()]*\))?|\d+(?:\.\d+)?)"
_OPERAND = r"(" + _TERM + r"(?:\s*[/·*]\s*" + _TERM + r")*)"             # 1 ∧ p(y)/q(y) = min(1, p(y)/q(y))
_MEET = re.compile(_OPERAND + r"\s*([∧∨])\s*" + _OPERAND)
# A code comment that goes on with the equation (`acc_path = q * a   # == np.minimum(p, q)`): the same chain.
_COMMENTED_EQUALS = re.compile(r"(?:#|//)\s*(?==)")
# An indicator of a condition, 1(q(x) > p(x)) / 𝟙{…} / I(…): its relation sign is inside it.
_INDICATOR = re.compile(r"(?<![\w.])(?:1|𝟙|I)\s*(?:_\s*)?[({]((?:[^(){}\n<>≤≥]|\([^()\n]*+\))*+[<>≤≥](?:[^(){}\n]|\([^()\n]*+\))*+)[)}]")
# An Iverson bracket [p(x) > q(x)] (not an index: nothing before it names an array): 1 where it holds, else 0,
# written as max(0, d)/d with d = the difference, which is never 0 on the random trials.
_IVERSON = re.compile(r"(?<![\w\])])\[\s*([^\[\]<>≤≥\n,;]+?)\s*([<>≤≥])\s*([^\[\]<>≤≥\n,;]+?)\s*\]")


def _iverson(m: re.Match) -> str:
    big, small = (m[1], m[3]) if m[2] in ">≥" else (m[3], m[1])
    return f"(max(0, ({big}) - ({small}))/(({big}) - ({small})))"


# 「q(x)(1 − a(x))」: a distribution at a point times a bracket, written without a product sign.
_IMPLICIT_PRODUCT = re.compile(r"(?<![A-Za-z])([pqr](?:_\w{1,6})?\s*\(\s*[a-z](?:_\w+)?\s*\))\s*(?=\()")


# A sum said in words: "sum over x of q(x)(…)", "the sum over all v of …".
_SUM_WORDS = re.compile(r"\b(?:the\s+)?sum\s+over\s+(?:all\s+)?([a-z])\s+of\s+", re.IGNORECASE)
# An expectation over the draft's token, E[f(X)] or E_q[…] (E_p[…] over the target's): Σ_x q(x)·f(x).
_EXPECTATION = re.compile(r"(?<![A-Za-z])E\s*(?:_\s*\(?\s*(?:[XY]\s*~\s*)?([pq])\s*\)?)?\s*\[")


# A parenthesised expression applied to one letter, (p ∧ q)(A) or (p − q)_+(y): read pointwise, as p(y) is. The
# whole space Ω is not a point: (p ∧ q)(Ω) is a total mass, and Ω stops the run (`_foreign`).
_MEASURE_AT = re.compile(r"(?<=[)+])\s*\(\s*[A-Za-z](?:_\w{1,3})?\s*\)")


def _foreign(ch: str) -> bool:
    """A letter or an operator the front end does not read (Ω, ℝ, ∫, ∂, ∞, ^, {) where a run of math stops: the run is
    cut in the middle of an expression, and the side it cuts is not what the student wrote. (A relation or a mark
    the front end stops at on purpose, ∝, ∈, ⊥, ∎, ends a side where it is.)"""
    if ch.isspace() or "\u3400" <= ch <= "\u9fff" or "\u3000" <= ch <= "\u303f" or "\uff00" <= ch <= "\uffef":
        return False
    return unicodedata.category(ch)[0] == "L" or ch in "∫∬∮∂∞√∇^{}"


def prepare(sentence: str) -> str:
    """The sentence's math in the front end's spelling: array notation, event probabilities, possessives cut,
    operators said in words."""
    sentence = _COMMENTED_EQUALS.sub(" ", sentence)
    sentence = _IVERSON.sub(_iverson, sentence)        # [p(x) > q(x)]: the indicator, as a value
    sentence = _INDICATOR.sub(" W ", sentence)          # 1(q(x) > p(x)): an unknown factor, not a relation sign
    sentence = _P_REJECT_SAID.sub(" R = ", sentence)
    sentence = _P_REJECT.sub(" R ", _P_REJECT_WORDS.sub(_operand_word, sentence))   # before the runs: P(A^c) has a ^
    sentence = _NAMED_TWICE.sub("R", sentence)           # 「被拒的总概率 P_rej = …」: the word, then its symbol
                                                         # ((p − q)^+ is already (p − q)_+: normalise.readable)
    for _ in range(3):                                   # p ∧ q (the smaller), p ∨ q (the larger)
        sentence = _MEET.sub(lambda m: f"{'min' if m[2] == '∧' else 'max'}({m[1]}, {m[3]})", sentence)
    sentence = _MEASURE_AT.sub("", sentence)            # (p ∧ q)(A), (p − q)_+(y): the function at a point or a set
    for pattern, sign in _WORD_OPERATORS:
        sentence = pattern.sub(sign, sentence)
    sentence = _IMPLICIT_PRODUCT.sub(r"\1·", sentence)
    text = _PROB.sub(lambda m: f"P({m[1]})" if m[1] is not None else "P(", _ENUMERATOR.sub(" ", sentence))
    text = array_notation(text)
    text = _SUM_WORDS.sub(lambda m: f"Σ_{m[1]} ", text)
    text = _EXPECTATION.sub(lambda m: f"Σ {m[1] or 'q'}·[", text)
    text = _EVENT.sub(_event, text)
    text = _P_ACC.sub(" C ", text)
    return _POSSESSIVE.sub("\u22a5 ", text)          # `r 的分母`, `r 嘅 normalizer`, `r's denominator`: r is not a side (⊥ is not math)


def _substitute(part: str, bindings: dict) -> str:
    for name, value in bindings.items():
        def put(m: re.Match, value=value) -> str:     # q(y)a(y), 2a: a product with the operand before it
            operand = _OPERAND_END.search(m.string[:m.start()])
            return ("·" if operand else "") + "(" + value + ")"
        part = re.sub(r"(?<![\w.])" + re.escape(name) + r"(?![\w(])", put, part)
        if len(name) == 1:                # a function of one letter: a(y), a(X) (its argument is the token's)
            part = re.sub(r"(?<![\w.])" + re.escape(name) + r"\s*\(\s*[A-Za-z](?:_\w+)?\s*\)", put, part)
    return part


# The end of an operand (a bracket, a digit, a lone letter; not a word of prose such as "If"), before a bound name.
_OPERAND_END = re.compile(r"(?:[)\]]|\d|(?<![A-Za-z])[A-Za-z])\s*$")
# A one-letter function defined at a token, `a(x) = min(1, p(x)/q(x))`: binds `a`.
_FUNCTION_DEFINED = re.compile(r"([A-Za-z" + _GREEK + r"])\s*\(\s*[a-z]\s*\)")


def extract(sentence: str, bindings: dict | None = None) -> tuple[list[Formula], list[Expr]]:
    """(equations, standalone expressions) in one sentence of `readable` text. `bindings` (name -> plain
    math) carries the answer's definitions from sentence to sentence; definitions found here are added."""
    formulas, exprs = [], []
    bindings = {} if bindings is None else bindings
    sentence = prepare(sentence)
    conditional = bool(_CONDITIONAL.search(sentence))
    for run in _RUN.finditer(sentence):
        text = _P_OUT.sub(" O ", run[0])                  # P(reject) is R already (prepare)
        if not re.search(r"[pqrROAJCΣ∑]|min|max", text) and not any(n in text for n in bindings):
            continue
        parts = _RELATION.split(text)
        relations = _RELATION.findall(text)
        defined = set()                      # relation indexes that are definitions (name = expr)
        for n, part in enumerate(parts):
            name = part.split(",")[-1].strip()     # 「r(y) = …/Z, Z = Σ …」: the name after the last comma
            function = _FUNCTION_DEFINED.fullmatch(name)
            if function and function[1] not in _VARIABLES | _KNOWN | _NOT_BINDABLE | {"E", "P"}:
                name = function[1]
            if (n < len(relations) and relations[n] == "=" and _DEFINED.fullmatch(name + "=")
                    and name not in _NOT_BINDABLE
                    and not (len(name) == 1 and name.isascii() and (name in _VARIABLES or name in _KNOWN))):
                value_part = _substitute(parts[n + 1], bindings)
                rhs = _chunks(value_part)[0]
                if rhs and _expr(rhs[0]) is not None:
                    bindings[name] = rhs[0]
                    defined.add(n)
                    continue
            parts[n] = _substitute(part, bindings)
        chunked = [_chunks(part) for part in parts]
        for chunks, _, _ in chunked:
            for chunk in chunks:
                e = _expr(chunk)
                if e is not None and _relevant(e):
                    exprs.append(e)
        if run.end() < len(sentence) and _foreign(sentence[run.end()]):
            chunked[-1] = ([], True, True)            # the last side goes on in notation the front end cannot read
        if run.start() > 0 and _foreign(sentence[run.start() - 1]):
            chunked[0] = ([], True, True)
        anchor = None                         # the chain's last side that parsed with no unknown symbol
        mixed = conditional or len(set(relations) - {"→", "⇒"}) > 1     # a condition or several relations: unsure
        for n, rel in enumerate(relations):
            (left, _, left_tail), (right, right_lead, _) = chunked[n], chunked[n + 1]
            if not left or not right or rel not in "=→⇒" or n in defined or left_tail or right_lead:
                anchor = None
                continue                      # prose between a side and the sign: not an equation
            a, b = _expr(left[-1]), _expr(right[0])
            if len(left) > 1:                 # 「r = max(0, p − q)/Z with Z = Σ …」: another side starts here
                anchor = None
            if a is not None and not a.free:
                anchor = a
            if rel == "=" and a is not None and a.free and b is not None and not b.free and anchor is not None \
                    and (_relevant(anchor) or _relevant(b)):
                # `R = Σ q·(1 − p/q)·𝟙{q > p} = Σ D⁻ + Σ D⁺ = Σ |p − q|`: a chain says its first side equals its
                # last, across sides with unknown symbols between them (not across a side that does not parse:
                # that may be where the chain ends, 「= min(p, q)（q(y) = 0 时…」)
                formulas.append(Formula(f"{anchor.text} = {b.text}", (anchor, b), _holds(anchor, b, mixed)))
            if rel != "=" or b is None:
                anchor = None
            elif not b.free:
                anchor = b
            if a is None or b is None or not (_relevant(a) or _relevant(b)):
                continue
            if rel != "=":                    # an arrow ("gives"): counts when true, never reported false
                if same_value(a, b):
                    formulas.append(Formula(f"{a.text} = {b.text}", (a, b), True))
                continue
            formulas.append(Formula(f"{a.text} = {b.text}", (a, b), _holds(a, b, mixed)))
    return formulas, exprs


def _instance_value(e: Expr) -> bool:
    """A number other than 0 and 1: the value of a worked example (`1 − Σ min(p, q) = 0.3`), not a general side."""
    try:
        return bool(e.expr.is_number) and e.expr not in (0, 1)
    except (AttributeError, TypeError):
        return False


def _tight_reading_holds(a: Expr, b: Expr) -> bool:
    """A sum followed by a product or a quotient is ambiguous (how far does the summand run?): true when the
    reading that closes each sum at a top-level * or / holds."""
    if not any(ch in e.text for e in (a, b) for ch in "Σ∑") and "sum" not in a.text + b.text:
        return False
    try:
        return same_value(evaluate(a.text, True), evaluate(b.text, True))
    except Unparseable:
        return False


def _holds(a: Expr, b: Expr, conditional: bool) -> bool | None:
    if same_value(a, b) or _tight_reading_holds(a, b):
        return True
    if _instance_value(a) or _instance_value(b):
        return None                       # a general expression equal to an example's number: cannot tell
    if a.free or b.free or conditional or not (a.heads | b.heads) - {"O"}:
        return None                       # unknown symbols, a condition, or no key quantity: cannot tell
    if (("r" in a.heads and "sum" not in b.heads) or ("r" in b.heads and "sum" not in a.heads)) \
            and (proportional(a, b) or proportional(b, a)):
        return None                       # a residual written without its normaliser (one written with a wrong one is false)
    return False


# A named quantity of the canonical side is also written out by the student: P(reject) as a sum,
# the residual as a normalised max, the accept path as a min.
_SPELLED = {"R": {"R", "sum", "C"}, "r": {"r", "sum"}, "A": {"A", "min"}, "J": {"J", "max", "R", "r"},
            "C": {"C", "sum", "R"}}


def matches(student: Expr, canonical: Expr) -> bool:
    """Same value on every trial, and uses at least the canonical side's operations (a named quantity
    may be spelled out)."""
    need = canonical.heads - {"O"}
    return all(h in student.heads or student.heads & _SPELLED.get(h, set()) for h in need) and same_value(student, canonical)


def identity_holds(formula: Formula, canonical: Formula) -> bool:
    """A true student equation whose two sides match the canonical identity's two sides (either order)."""
    if formula.holds is not True:
        return False
    (a, b), (c, d) = formula.sides, canonical.sides
    return (matches(a, c) and matches(b, d)) or (matches(a, d) and matches(b, c))


@lru_cache(maxsize=256)
def canonical(text: str) -> Formula | Expr:
    """A rubric's identity (`lhs = rhs`) or value (`expr`), parsed by the same front end."""
    if "=" in text:
        lhs, rhs = text.split("=", 1)
        a, b = evaluate(lhs), evaluate(rhs)
        return Formula(text, (a, b), same_value(a, b))
    return evaluate(text)

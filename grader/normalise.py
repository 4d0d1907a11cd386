"""Normalisation of free-text answers, before any rule sees them. Pure.

`clean` keeps the answer readable (for quoting): NFKC (full-width letters, digits and punctuation
become ASCII), every invisible character removed (zero-width spaces and joiners, soft hyphens, bidi
marks, BOM: Unicode category Cf, plus the variation selectors), one kind of dash, one kind of
space. `plain` is what the rules match: `clean`, then markdown markup and LaTeX markup turned into
plain text and plain math (`\\min\\{a, b\\}` -> `min(a, b)`, `\\frac{a}{b}` -> `(a)/(b)`, `\\cdot` -> `·`,
`\\sum_v` -> `Σ_v`, `\\left(` -> `(`), lower case, single spaces with line breaks kept.
"""
from __future__ import annotations

import re
import unicodedata

_DASHES = dict.fromkeys(map(ord, "−–—‐‑‒﹣⁃"), "-")
_QUOTES = {ord("“"): '"', ord("”"): '"', ord("‘"): "'", ord("’"): "'"}
_SPACES = re.compile(r"[ \t\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+")
_WHITESPACE = re.compile(r"\s+")


def _invisible(ch: str) -> bool:
    code = ord(ch)
    return unicodedata.category(ch) == "Cf" or 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF or code == 0x034F


def clean(text: str | None) -> str:
    """NFKC, invisible characters removed, one dash, ordinary spaces; case and markup kept."""
    text = unicodedata.normalize("NFKC", text or "")
    text = "".join(ch for ch in text if not _invisible(ch) and (ch in "\n\t" or unicodedata.category(ch) != "Cc"))
    text = text.translate(_DASHES).translate(_QUOTES)
    return _SPACES.sub(" ", text)


# --- LaTeX -> plain math -----------------------------------------------------------------------------
_LATEX_SYMBOLS = {
    "cdot": "·", "times": "·", "ast": "*", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠",
    "sum": "Σ", "prod": "∏", "mid": "|", "vert": "|", "in": "∈", "equiv": "≡", "to": "→", "rightarrow": "→",
    "Rightarrow": "⇒", "implies": "⇒", "infty": "∞", "alpha": "α", "gamma": "γ", "beta": "β", "approx": "≈",
    "dots": "...", "ldots": "...", "cdots": "...", "quad": " ", "qquad": " ", "lt": "<", "gt": ">", "sim": "~",
    "propto": "∝", "forall": "∀", "neg": "¬", "lbrace": "(", "rbrace": ")", "langle": "(", "rangle": ")",
}
_SIZING = re.compile(r"\\(?:left|right|big|Big|bigg|Bigg)[lr]?(?![a-zA-Z])\s*(\\[{}|.]|[()\[\]|.])?")
_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_FRAC_SHORT = re.compile(r"\\[dt]?frac\s*(\w)\s*(\w)")
_WORD = re.compile(r"\\(?:text|mathrm|mathbf|mathit|mathcal|mathbb|operatorname|boldsymbol|textbf|textit|emph|texttt)"
                   r"\s*\{([^{}]*)\}")
_PLUS_PART = re.compile(r"(\))\s*_\s*\{\s*\+\s*\}")
_COMMAND = re.compile(r"\\([a-zA-Z]+)")
_SUBSCRIPT_GROUP = re.compile(r"([_^])\{([^{}]*)\}")
_MARKDOWN = re.compile(r"```\w*|`|\*\*|(?<!\w)__(?=\w)|(?<=\w)__(?!\w)|\$\$?")
_LINE_MARK = re.compile(r"^\s{0,3}(?:#{1,6}|>|[-*+]|\d+[.)])\s+", re.MULTILINE)


def _command(m: re.Match) -> str:
    """A LaTeX command as its symbol or name; a space keeps it apart from a following letter (\\sum_x\\min)."""
    out = _LATEX_SYMBOLS.get(m[1], m[1])
    nxt = m.string[m.end():m.end() + 1]
    return out + " " if nxt.isalpha() or nxt == "\\" else out


def latex_to_plain(text: str) -> str:
    """LaTeX math markup -> the plain notation students also type (`min(p, q)`, `(a)/(b)`, `Σ_v`)."""
    text = text.replace(r"\{", "(").replace(r"\}", ")")
    text = _SIZING.sub(lambda m: (m[1] or "").lstrip("\\").replace(".", ""), text)
    text = _PLUS_PART.sub(r"\1_+", text)
    for _ in range(4):
        new = _WORD.sub(r"\1", _FRAC.sub(r"(\1)/(\2)", text))
        if new == text:
            break
        text = new
    text = _FRAC_SHORT.sub(r"(\1)/(\2)", text)
    text = _COMMAND.sub(_command, text)
    text = re.sub(r"\\[,;!: ]", " ", text).replace("\\\\", "\n")
    for _ in range(3):
        text = _SUBSCRIPT_GROUP.sub(r"\1\2", text)
    return text.replace("{", "(").replace("}", ")")


def readable(text: str | None) -> str:
    """clean, markdown and LaTeX markup removed (LaTeX as plain math), case kept: what evidence quotes."""
    text = _MARKDOWN.sub("", _LINE_MARK.sub("", latex_to_plain(clean(text))))
    return "\n".join(" ".join(line.split()) for line in text.splitlines() if line.strip())


def plain(text: str | None) -> str:
    """What the rules match: `readable`, lower case, single spaces (line breaks kept)."""
    text = readable(text).lower()
    # Every whitespace run becomes one character (a newline if it had one): keeps sentence breaks and
    # stops stacked `\s*` in rubric patterns from backtracking over long runs.
    return _WHITESPACE.sub(lambda m: "\n" if "\n" in m[0] else " ", text).strip()


def compact(text: str | None) -> str:
    """`plain` without any whitespace or markup punctuation: what the copy checks compare."""
    return re.sub(r"[\s*_`$#>|]", "", plain(text))


_PROSE_TOKEN = re.compile(r"[\u3400-\u9fff]|(?<![\w./])[a-z]{3,}(?![\w./(])")
_MATH_WORDS = {"min", "max", "sum", "log", "exp", "frac", "cdot"}


def prose_tokens(text: str | None) -> list[str]:
    """The answer's prose as tokens (Chinese characters, English words of 3+ letters), without formulas,
    code names and paths: what the copy checks compare (formulas and names are shared by every right answer)."""
    return [t for t in _PROSE_TOKEN.findall(plain(text)) if t not in _MATH_WORDS]

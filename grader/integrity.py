"""Template integrity: align the submitted exercise cell with the lesson's template, keep only the
blank fills, and build the code to run from the instructor's template.

Both texts are tokenized with `tokenize`; comments and blank lines are dropped, so whitespace and
comment edits are tolerated, while the INDENT/DEDENT/NEWLINE structure and every other token must
match. Each `______` in the template is a wildcard for a non-empty, bracket-balanced run of
submission tokens that does not cross a statement boundary. Anything else that differs (a deleted
or loosened assertion, an extra line, a changed validation) is an IntegrityError naming the
submission line. Fills must be single expressions from a conservative whitelist that binds no
state (no `:=`, no attribute or subscript targets in comprehensions). The student's copy of the
given lines is never run: `fill_template` substitutes the fills into the template. Sizes are
checked before anything is tokenised or parsed (the exercise cell, each fill).
"""
from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass

from .lesson import BLANK

_SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}
_STRUCTURE = {tokenize.INDENT, tokenize.DEDENT, tokenize.NEWLINE}
_OPEN, _CLOSE = set("([{"), set(")]}")

FORBIDDEN_NAMES = frozenset("""
    exec eval compile open __import__ globals locals vars getattr setattr delattr hasattr breakpoint input help
    exit quit type object super memoryview classmethod staticmethod property dir id
""".split())
FORBIDDEN_ATTRIBUTE_PREFIXES = ("_", "f_", "gi_", "cr_", "ag_", "tb_", "co_")
FORBIDDEN_ATTRIBUTES = frozenset({"format", "format_map", "mro"})
FORBIDDEN_NODES = (ast.NamedExpr, ast.Lambda, ast.Await, ast.Yield, ast.YieldFrom)
# The only names a fill may bind are a comprehension's plain loop variables (local to the
# comprehension). A target that is an attribute or a subscript (`for f.n in ...`, `for d[0] in ...`)
# would be assignment to state that outlives the call; any other Store/Del use is refused too.
TARGET_NODES = (ast.Name, ast.Tuple, ast.List, ast.Starred)
_TARGET_WORDS = {ast.Attribute: "属性", ast.Subscript: "下标"}

MAX_SUBMITTED_CHARS = 100_000  # the exercise cell, checked before tokenising (~1 KB of tokens per 2 chars)


class IntegrityError(Exception):
    """The submission changed code outside the blanks, or a fill is not allowed."""

    def __init__(self, message: str, line: int | None = None, text: str = ""):
        super().__init__(message)
        self.message, self.line, self.text = message, line, text

    def __str__(self) -> str:
        where = f"第 {self.line} 行：`{self.text.strip()}` — " if self.line else ""
        return where + self.message


@dataclass(frozen=True)
class Token:
    type: int
    string: str
    start: tuple[int, int]
    end: tuple[int, int]


@dataclass(frozen=True)
class Fill:
    blank: int            # 0-based index of the blank in the template
    source: str           # the student's text, as written (for reports)
    code: str             # the same expression rebuilt from its tokens on one line (for running)
    line: int             # submission line where it starts

    @property
    def empty(self) -> bool:
        return self.code.strip() == BLANK


def tokens(code: str, what: str) -> list[Token]:
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError) as exc:
        line = getattr(exc, "lineno", None) or (exc.args[1][0] if len(exc.args) > 1 and isinstance(exc.args[1], tuple) else None)
        raise IntegrityError(f"{what}无法解析为 Python：{exc.args[0] if exc.args else exc}", line,
                             _line(code, line)) from None
    return [Token(t.type, t.string, t.start, t.end) for t in toks if t.type not in _SKIP]


def _line(code: str, number: int | None) -> str:
    lines = code.splitlines()
    return lines[number - 1] if number and 0 < number <= len(lines) else ""


def _same(a: Token, b: Token) -> bool:
    if a.type in _STRUCTURE or b.type in _STRUCTURE:
        return a.type == b.type
    return a.string == b.string


def _blank_ends(sub: list[Token], j: int, follow: Token | None) -> list[int]:
    """Candidate ends k (exclusive) for a fill starting at sub[j], shortest first."""
    ends, depth = [], 0
    for k in range(j, len(sub)):
        tok = sub[k]
        if depth == 0 and k > j and (follow is None or _same(follow, tok)):
            ends.append(k)
        if tok.type == tokenize.NEWLINE and depth == 0:
            break
        if tok.type == tokenize.OP and tok.string in _OPEN:
            depth += 1
        elif tok.type == tokenize.OP and tok.string in _CLOSE:
            depth -= 1
            if depth < 0:
                break
    return ends


def extract_fills(template: str, submitted: str) -> list[Fill]:
    """Align `submitted` against `template`; return one Fill per blank or raise IntegrityError."""
    limit = max(MAX_SUBMITTED_CHARS, 16 * len(template))
    if len(submitted) > limit:
        raise IntegrityError(f"提交的练习单元有 {len(submitted)} 个字符，超过 {limit} 的上限"
                             "（练习单元只应包含模板的代码和填空；长的说明请写进 Markdown 单元）")
    tmpl = tokens(template, "模板")
    sub = tokens(submitted, "提交的练习单元")
    furthest = [0, 0]  # deepest (template index, submission index) reached, for the error message

    def match(i: int, j: int) -> list[tuple[int, int]] | None:
        while i < len(tmpl):
            if tmpl[i].type == tokenize.NAME and tmpl[i].string == BLANK:
                follow = tmpl[i + 1] if i + 1 < len(tmpl) else None
                for k in _blank_ends(sub, j, follow):
                    rest = match(i + 1, k)
                    if rest is not None:
                        return [(j, k)] + rest
                furthest[:] = max(furthest, [i, j], key=lambda p: p[1])
                return None
            if j >= len(sub) or not _same(tmpl[i], sub[j]):
                furthest[:] = max(furthest, [i, j], key=lambda p: p[1])
                return None
            i, j = i + 1, j + 1
        if j != len(sub):
            furthest[:] = max(furthest, [i, j], key=lambda p: p[1])
            return None
        return []

    spans = match(0, 0)
    if spans is None:
        raise _mismatch(template, submitted, tmpl, sub, *furthest)
    lines = submitted.splitlines()
    fills = []
    for n, (j, k) in enumerate(spans):
        run = sub[j:k]
        source = _slice(lines, run[0].start, run[-1].end)
        code = " ".join(t.string for t in run)
        fills.append(Fill(n, source, code, run[0].start[0]))
    return fills


def _slice(lines: list[str], start: tuple[int, int], end: tuple[int, int]) -> str:
    (r0, c0), (r1, c1) = start, end
    if r0 == r1:
        return lines[r0 - 1][c0:c1]
    return "\n".join([lines[r0 - 1][c0:]] + lines[r0:r1 - 1] + [lines[r1 - 1][:c1]])


def _mismatch(template: str, submitted: str, tmpl, sub, i: int, j: int) -> IntegrityError:
    expected = _line(template, tmpl[i].start[0]) if i < len(tmpl) else ""
    if j < len(sub):
        line = sub[j].start[0]
        hint = f"模板此处应为：`{expected.strip()}`" if expected else "模板在此之后没有更多代码"
        return IntegrityError(f"与模板不符（只能修改 {BLANK} 处）；{hint}", line, _line(submitted, line))
    return IntegrityError(f"提交的代码在模板结束之前就结束了，缺少：`{expected.strip()}`", None, "")


MAX_FILL_CHARS = 2_000       # a blank holds one expression; the reference fills are ~40 characters


def check_fill(fill: Fill) -> None:
    """Raise IntegrityError unless the fill is one expression built from allowed names and nodes."""
    if len(fill.code) > MAX_FILL_CHARS:
        raise IntegrityError(f"第 {fill.blank + 1} 个空白的填写超过 {MAX_FILL_CHARS} 个字符", fill.line, fill.source)
    try:
        tree = ast.parse("(" + fill.code + ")", mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # deep nesting breaks the parser itself
        raise IntegrityError(f"第 {fill.blank + 1} 个空白的填写不是一个 Python 表达式", fill.line, fill.source) from None
    for node in ast.walk(tree):
        problem = None
        if isinstance(node, FORBIDDEN_NODES):
            problem = f"不允许使用 {type(node).__name__}"
        elif isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del)) and not isinstance(node, TARGET_NODES):
            problem = f"不允许赋值给{_TARGET_WORDS.get(type(node), type(node).__name__)}，推导式的循环变量只能是普通的名字"
        elif isinstance(node, ast.Name) and (node.id in FORBIDDEN_NAMES or node.id.startswith("__")):
            problem = f"不允许使用名字 {node.id!r}"
        elif isinstance(node, ast.Attribute) and (node.attr.startswith(FORBIDDEN_ATTRIBUTE_PREFIXES)
                                                  or node.attr in FORBIDDEN_ATTRIBUTES):
            problem = f"不允许访问属性 {node.attr!r}"
        if problem:
            raise IntegrityError(f"第 {fill.blank + 1} 个空白的填写{problem}（只能写普通的算术与比较表达式）",
                                 fill.line, fill.source)


def fill_template(template: str, fills: list[Fill]) -> str:
    """The template with each blank replaced by `(fill)`: same lines, the instructor's code."""
    blanks = [t for t in tokens(template, "模板") if t.type == tokenize.NAME and t.string == BLANK]
    if len(blanks) != len(fills):
        raise IntegrityError(f"模板有 {len(blanks)} 个空白，提交有 {len(fills)} 个填写")
    lines = template.splitlines()
    for tok, fill in sorted(zip(blanks, fills), key=lambda pair: pair[0].start, reverse=True):
        row, col = tok.start
        text = lines[row - 1]
        lines[row - 1] = text[:col] + "(" + fill.code + ")" + text[tok.end[1]:]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Statement:
    line: int             # first line in the filled template
    source: str
    kind: str             # "assert", "def" or "stmt"
    text: str             # first line of the template's own statement (for reports)


def statements(code: str) -> list[Statement]:
    """Top-level statements of the filled template, each run and reported on its own."""
    tree = ast.parse(code)
    lines = code.splitlines()
    out = []
    for node in tree.body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        source = "\n".join(lines[first - 1:node.end_lineno])
        kind = "assert" if isinstance(node, ast.Assert) else "def" if isinstance(node, ast.FunctionDef) else "stmt"
        out.append(Statement(first, source, kind, lines[first - 1]))
    return out

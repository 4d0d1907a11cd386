"""Parse a lesson (`lessons/*.qmd`) into an ordered list of cells.

The lesson is the single source of truth. This module reads it the way Quarto would, without
Quarto: markdown-it-py finds the fenced code blocks (so a `:::` inside code is never mistaken for a
div), YAML reads the front matter and the `#|` cell options, and a small scanner follows Pandoc's
fenced divs (`::: {.class key="value"}` ... `:::`) to know which content belongs to the answer
edition only and where the free-text questions and reference answers are.

Conventions (see AUTHORING.md):
- ```{python} cells; `#| course_role:` is one of ROLES, `#| course_id:` names graded cells;
- `::: {.course-question course_id="Q1"}`: a free-text question (both editions);
- `::: {.course-reference course_id="Q1"}`: its reference answer, only inside an answer-only block;
- `::: {.content-visible when-profile="answer"}`: answer-edition-only content.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from markdown_it import MarkdownIt

ROLES = ("exercise", "solution", "check", "gpu")
WEB_ONLY_ENGINES = ("ojs",)      # code cells that only a browser runs: in no notebook
QUESTION_CLASS = "course-question"
REFERENCE_CLASS = "course-reference"
BLANK = "______"
# What a free-text answer cell of the exercise notebook holds until the student answers.
ANSWER_PLACEHOLDER = "✍️ 在此作答：用完整的句子写出对象、状态变化与正确性或成本链（删除本行）。"

# Cell options Quarto itself understands: they stay in the code as `#|` lines, exactly as
# `quarto convert` leaves them. Every other option moves into the notebook cell's metadata.
QUARTO_OPTIONS = frozenset(
    """label eval echo output include warning error message code-fold code-summary code-overflow
    code-line-numbers fig-cap fig-alt fig-width fig-height fig-align fig-dpi fig-format fig-subcap
    fig-pos fig-env layout layout-ncol layout-nrow tbl-cap tbl-subcap tbl-colwidths classes
    panel column""".split()
)

_DIV_OPEN = re.compile(r"^(?P<colons>:{3,})\s*(?:\{(?P<attrs>[^}]*)\}|(?P<bare>[\w-]+))\s*$")
_DIV_CLOSE = re.compile(r"^:{3,}\s*$")
_ATTR = re.compile(r"""\s*(?:\.(?P<cls>[\w-]+)|\#(?P<id>[\w-]+)|(?P<key>[\w-]+)=(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<bare>[^\s"']+)))""")
_OPTION_LINE = re.compile(r"^#\|\s?(.*)$")
_HEADING = re.compile(r"^#{1,3}\s")


class LessonError(ValueError):
    """A lesson that breaks the authoring conventions; the message starts with `file:line:`."""


@dataclass(frozen=True)
class Div:
    classes: tuple[str, ...]
    attrs: dict
    line: int

    def _shown_only_when(self, key: str, value: str) -> bool:
        """True for `.content-visible when-KEY="VALUE"` and `.content-hidden unless-KEY="VALUE"`."""
        return (("content-visible" in self.classes and self.attrs.get(f"when-{key}") == value)
                or ("content-hidden" in self.classes and self.attrs.get(f"unless-{key}") == value))

    def _hidden_when(self, key: str, value: str) -> bool:
        return (("content-hidden" in self.classes and self.attrs.get(f"when-{key}") == value)
                or ("content-visible" in self.classes and self.attrs.get(f"unless-{key}") == value))

    @property
    def answer_only(self) -> bool:
        """Only in the answer edition (and the solution notebook)."""
        return self._shown_only_when("profile", "answer")

    @property
    def student_only(self) -> bool:
        """Only in the student edition (and the exercise notebook)."""
        return self._hidden_when("profile", "answer")

    @property
    def web_only(self) -> bool:
        """Only in the HTML book: left out of both notebooks (e.g. the OJS explorer)."""
        return self._shown_only_when("format", "html")


@dataclass(frozen=True)
class Cell:
    """One notebook-sized piece of a lesson.

    kind: "markdown" or "code" (executable Python). role/course_id come from `#|` options for code
    cells and from the div for questions ("question") and reference answers ("reference").
    """

    kind: str
    source: str
    line: int
    answer_only: bool = False
    role: str | None = None
    course_id: str | None = None
    options: dict = field(default_factory=dict)
    student_only: bool = False     # inside `.content-hidden when-profile="answer"`: not in the solution notebook
    web_only: bool = False         # inside `.content-visible when-format="html"` or an {ojs} cell: in no notebook

    @property
    def code(self) -> str:
        """Code without any `#|` option lines."""
        return strip_options(self.source)

    @property
    def executes(self) -> bool:
        return self.kind == "code" and self.options.get("eval", True) is not False


@dataclass(frozen=True)
class Lesson:
    name: str
    path: Path
    title: str
    cells: tuple[Cell, ...]

    def find(self, role: str, course_id: str | None = None) -> list[Cell]:
        return [c for c in self.cells if c.role == role and (course_id is None or c.course_id == course_id)]

    def exercise(self, course_id: str) -> Cell:
        return _one(self.find("exercise", course_id), f"exercise {course_id!r}")

    def solution(self, course_id: str) -> Cell:
        return _one(self.find("solution", course_id), f"solution {course_id!r}")

    def reference(self, course_id: str) -> Cell:
        return _one(self.find("reference", course_id), f"reference answer {course_id!r}")

    @property
    def exercise_ids(self) -> list[str]:
        return [c.course_id for c in self.find("exercise")]

    @property
    def question_ids(self) -> list[str]:
        return [c.course_id for c in self.find("question")]

    def student_cells(self) -> list[Cell]:
        """What the student edition contains: everything not marked answer-only."""
        return [c for c in self.cells if not c.answer_only]


def _one(cells: list[Cell], what: str) -> Cell:
    if len(cells) != 1:
        raise KeyError(f"expected exactly one {what}, found {len(cells)}")
    return cells[0]


def strip_options(source: str) -> str:
    lines = source.splitlines()
    while lines and _OPTION_LINE.match(lines[0]):
        lines.pop(0)
    return "\n".join(lines)


def parse_attrs(text: str) -> tuple[tuple[str, ...], dict]:
    """Pandoc attributes `{.a .b #id key="v"}` (without braces) -> (classes, attrs)."""
    classes, attrs, pos = [], {}, 0
    text = text.strip()
    while pos < len(text):
        m = _ATTR.match(text, pos)
        if not m or m.end() == pos:
            raise ValueError(f"cannot read attribute near {text[pos:]!r}")
        if m["cls"]:
            classes.append(m["cls"])
        elif m["id"]:
            attrs["id"] = m["id"]
        else:
            attrs[m["key"]] = next(v for v in (m["dq"], m["sq"], m["bare"]) if v is not None)
        pos = m.end()
    return tuple(classes), attrs


def load_lesson(path: str | Path, validate: bool = True) -> Lesson:
    path = Path(path)
    return parse_lesson(path.read_text(encoding="utf-8"), path, validate)


def parse_lesson(text: str, path: Path, validate: bool = True) -> Lesson:
    """The lesson's cells. `validate=False` skips the authoring rules (every exercise has a solution,
    every question a reference answer, ...): for a student edition's source, which has neither."""
    lines = text.splitlines()
    meta, body_start = _front_matter(lines, path)
    fences = _code_fences(lines, body_start)
    cells = _Scanner(lines, fences, path).scan(body_start)
    lesson = Lesson(name=path.stem, path=path, title=str(meta.get("title", path.stem)), cells=tuple(cells))
    if validate:
        _validate(lesson)
    return lesson


def walk_divs(text: str, path: Path):
    """Every fenced div of the body, innermost first as they close: (first line, last line, Div),
    0-based lines. Fenced code blocks are skipped, so a `:::` inside code is never a div."""
    lines = text.splitlines()
    _, start = _front_matter(lines, path)
    fences = _code_fences(lines, start)
    stack: list[Div] = []
    i = start
    while i < len(lines):
        if i in fences:
            i = fences[i][0]
            continue
        line = lines[i]
        if (m := _DIV_OPEN.match(line)) is not None:
            try:
                classes, attrs = parse_attrs(m["attrs"]) if m["attrs"] is not None else ((m["bare"],), {})
            except ValueError as exc:
                raise LessonError(f"{path}:{i + 1}: {exc}") from None
            stack.append(Div(classes, attrs, i))
        elif _DIV_CLOSE.match(line):
            if not stack:
                raise LessonError(f"{path}:{i + 1}: ':::' closes a div that was never opened")
            div = stack.pop()
            yield div.line, i, div
        i += 1
    if stack:
        raise LessonError(f"{path}:{stack[-1].line + 1}: div opened here is never closed")


def _front_matter(lines: list[str], path: Path) -> tuple[dict, int]:
    if not lines or lines[0].strip() != "---":
        return {}, 0
    for end in range(1, len(lines)):
        if lines[end].strip() in ("---", "..."):
            try:
                meta = yaml.safe_load("\n".join(lines[1:end])) or {}
            except yaml.YAMLError as exc:
                raise LessonError(f"{path}:1: front matter is not valid YAML: {exc}") from None
            if not isinstance(meta, dict):
                raise LessonError(f"{path}:1: front matter must be a YAML mapping")
            return meta, end + 1
    raise LessonError(f"{path}:1: front matter is not closed with '---'")


def _code_fences(lines: list[str], start: int) -> dict[int, tuple[int, str]]:
    """0-based first line of each fenced code block -> (line after its end, info string)."""
    body = "\n".join(lines[start:])
    fences = {}
    for tok in MarkdownIt("commonmark").parse(body):
        if tok.type == "fence" and tok.map:
            first, end = tok.map[0] + start, tok.map[1] + start
            fences[first] = (end, tok.info.strip())
    return fences


class _Scanner:
    """Walks the body once, keeping a stack of open divs and emitting cells in order."""

    def __init__(self, lines: list[str], fences: dict, path: Path):
        self.lines, self.fences, self.path = lines, fences, path
        self.stack: list[Div] = []
        self.cells: list[Cell] = []
        self.buffer: list[str] = []
        self.buffer_line = 0
        self.buffer_web_only = False      # the buffer holds a cell for a web-only engine ({ojs})
        # Callout titles not yet written: a title goes in front of the first thing its callout shows
        # in a notebook, and is dropped when that content is moved (solutions, reference answers).
        self.titles: list[tuple[int, str]] = []

    def where(self, i: int) -> str:
        return f"{self.path}:{i + 1}"

    @property
    def answer_only(self) -> bool:
        return any(d.answer_only for d in self.stack)

    def flags(self, web_only: bool = False) -> dict:
        """The edition flags every cell made now carries."""
        return {"student_only": any(d.student_only for d in self.stack),
                "web_only": web_only or any(d.web_only for d in self.stack)}

    def course_div(self) -> Div | None:
        return next((d for d in reversed(self.stack) if {QUESTION_CLASS, REFERENCE_CLASS} & set(d.classes)), None)

    def flush(self) -> None:
        text = "\n".join(self.buffer).strip("\n")
        self.buffer = []
        if not text.strip():
            return
        div = self.course_div()
        role = course_id = None
        line = self.buffer_line + 1
        if div is not None:
            line = div.line + 1  # errors point at the div that declares the question / reference
            role = "question" if QUESTION_CLASS in div.classes else "reference"
            course_id = div.attrs["course_id"]
            if self.cells and self.cells[-1].role == role and self.cells[-1].course_id == course_id:
                last = self.cells.pop()  # one question or reference is one cell, however many parts
                text = last.source + "\n\n" + text
        self.cells.append(Cell("markdown", text, line, self.answer_only, role, course_id,
                               **self.flags(self.buffer_web_only)))
        self.buffer_web_only = False

    def add_text(self, i: int, line: str) -> None:
        if not self.buffer:
            self.buffer_line = i
            if self.course_div() is None:
                self.buffer.extend(self.take_titles())
        self.buffer.append(line)

    def take_titles(self) -> list[str]:
        lines = [line for _, title in self.titles for line in (f"**{title}**", "")]
        self.titles = []
        return lines

    def scan(self, start: int) -> list[Cell]:
        i = start
        while i < len(self.lines):
            line = self.lines[i]
            if i in self.fences:
                end, info = self.fences[i]
                i = self.fence(i, end, info)
                continue
            if (m := _DIV_OPEN.match(line)) is not None:
                self.open_div(i, m)
            elif _DIV_CLOSE.match(line):
                if not self.stack:
                    raise LessonError(f"{self.where(i)}: ':::' closes a div that was never opened")
                self.flush()
                closed = self.stack.pop()
                self.titles = [t for t in self.titles if t[0] != closed.line]
            else:
                if _HEADING.match(line) and self.course_div() is None:
                    self.flush()
                self.add_text(i, line)
            i += 1
        if self.stack:
            raise LessonError(f"{self.where(self.stack[-1].line)}: div opened here is never closed")
        self.flush()
        return self.cells

    def open_div(self, i: int, m: re.Match) -> None:
        try:
            classes, attrs = parse_attrs(m["attrs"]) if m["attrs"] is not None else ((m["bare"],), {})
        except ValueError as exc:
            raise LessonError(f"{self.where(i)}: {exc}") from None
        self.flush()
        div = Div(classes, attrs, i)
        if {QUESTION_CLASS, REFERENCE_CLASS} & set(classes):
            if not attrs.get("course_id"):
                raise LessonError(f"{self.where(i)}: a {'/'.join(classes)} div needs a course_id attribute")
            if self.course_div() is not None:
                raise LessonError(f"{self.where(i)}: course divs cannot be nested")
        if "title" in attrs and any(c.startswith("callout") for c in classes):
            self.titles.append((i, attrs["title"]))
        self.stack.append(div)

    def fence(self, i: int, end: int, info: str) -> int:
        m = re.fullmatch(r"\{(\w+)[^}]*\}", info)
        if not m or m[1] != "python":
            # Markdown code, or a cell for another engine (mermaid): text in the notebook. An {ojs}
            # cell runs only in the browser: a cell of its own, left out of the notebooks.
            if m and m[1] in WEB_ONLY_ENGINES:
                self.flush()
                self.buffer_web_only = True
                self.add_text(i, "```" + m[1])
                self.buffer.extend(self.lines[i + 1:end])
                self.flush()
                return end
            if m:
                self.add_text(i, "```" + m[1])
                self.buffer.extend(self.lines[i + 1:end])
                return end
            self.add_text(i, self.lines[i])
            self.buffer.extend(self.lines[i + 1:end])
            return end
        self.flush()
        body = self.lines[i + 1:end - 1] if end - 1 > i and self.lines[end - 1].strip().startswith("```") else self.lines[i + 1:end]
        option_lines = []
        for line in body:
            om = _OPTION_LINE.match(line)
            if not om:
                break
            option_lines.append(om[1])
        try:
            options = yaml.safe_load("\n".join(option_lines)) or {} if option_lines else {}
        except yaml.YAMLError as exc:
            raise LessonError(f"{self.where(i + 1)}: cell options are not valid YAML: {exc}") from None
        if not isinstance(options, dict):
            raise LessonError(f"{self.where(i + 1)}: cell options must be `#| key: value` lines")
        role = options.get("course_role")
        if role is not None and role not in ROLES:
            raise LessonError(
                f"{self.where(i + 1)}: unknown course_role {role!r}; expected one of {', '.join(ROLES)}"
            )
        course_id = options.get("course_id")
        if course_id is not None and not isinstance(course_id, str):
            raise LessonError(f"{self.where(i + 1)}: course_id must be a string, got {course_id!r}")
        source = "\n".join(body)
        if role != "solution" and self.titles:  # a solution moves to its exercise: its callout title stays out
            self.cells.append(Cell("markdown", "\n".join(self.take_titles()).strip(), i + 1, self.answer_only,
                                   **self.flags()))
        self.cells.append(Cell("code", source, i + 1, self.answer_only, role, course_id, options, **self.flags()))
        return end


# Roles that only the answer edition may show -> (the student-visible role they answer, a name for errors).
_ANSWER_ONLY = {"solution": ("exercise", "solution"), "reference": ("question", "reference answer")}


def _validate(lesson: Lesson) -> None:
    where = lambda c: f"{lesson.path}:{c.line}"  # noqa: E731
    seen: dict[tuple[str, str], Cell] = {}
    for cell in lesson.cells:
        if cell.role is None:
            continue
        if cell.role in ("exercise", "solution") and not cell.course_id:
            raise LessonError(f"{where(cell)}: a {cell.role} cell needs `#| course_id:`")
        key = (cell.role, cell.course_id or "")
        if cell.course_id and key in seen:
            raise LessonError(
                f"{where(cell)}: duplicate {cell.role} id {cell.course_id!r} (first at line {seen[key].line})"
            )
        seen[key] = cell
        if cell.role == "exercise":
            if cell.answer_only:
                raise LessonError(f"{where(cell)}: exercise {cell.course_id!r} is inside an answer-only block")
            if cell.options.get("eval", True) is not False:
                raise LessonError(f"{where(cell)}: exercise {cell.course_id!r} must have `#| eval: false`")
            if BLANK not in cell.code:
                raise LessonError(f"{where(cell)}: exercise {cell.course_id!r} has no blank {BLANK}")
        if cell.role in _ANSWER_ONLY:
            partner, what = _ANSWER_ONLY[cell.role]
            if not cell.answer_only:
                raise LessonError(f"{where(cell)}: {what} {cell.course_id!r} would appear in the student edition; "
                                  "put it inside ::: {.content-visible when-profile=\"answer\"}")
            if (partner, cell.course_id) not in seen:
                raise LessonError(f"{where(cell)}: {what} {cell.course_id!r} has no {partner} before it")
        if cell.role == "question" and cell.answer_only:
            raise LessonError(f"{where(cell)}: question {cell.course_id!r} is inside an answer-only block")
    for (role, course_id), cell in seen.items():
        if role == "exercise" and ("solution", course_id) not in seen:
            raise LessonError(f"{where(cell)}: exercise {course_id!r} has no solution cell")
        if role == "question" and ("reference", course_id) not in seen:
            raise LessonError(f"{where(cell)}: question {course_id!r} has no reference answer")

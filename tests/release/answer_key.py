"""What the release must not contain, collected from the instructor's sources *by content*.

Each function returns needles: (what, text) pairs, where `text` (a string, a whole word when it is a
name) must not occur in any release file, or (what, pattern, example) triples: the compiled pattern
must not match, and `example` is a text it matches (for the tests that plant a needle).
The needles come straight from the answer key (the lesson's solution cells and reference answers,
the full rubric, the lessons' checks modules), not from grader/release.py, so a release that
forgets to strip something is caught whatever file it lands in.
"""
from __future__ import annotations

import ast
import re

import yaml

from grader.lesson import Lesson, load_lesson
from grader.paths import ROOT, lesson_names

MIN_LINE = 12        # shorter code lines ("return out", "else:") are not evidence of anything
MIN_SENTENCE = 15    # characters of a reference-answer sentence
MIN_STRING = 8       # characters of a rubric string
# Rubric keys whose values are public: the lesson's 评分规则 section shows them (and the summary has them).
PUBLIC_RUBRIC_KEYS = {"id", "title", "description", "kind", "exercise", "answer", "function", "lesson", "scored",
                      "checks", "imports", "feedback", "prose"}


def lessons() -> list[Lesson]:
    return [load_lesson(ROOT / "lessons" / f"{name}.qmd") for name in lesson_names(ROOT)]


def public_text(lesson: Lesson) -> str:
    """The student edition's own text (what the public site shows anyway)."""
    return "\n".join(c.source for c in lesson.student_cells())


def _lines(code: str) -> set[str]:
    return {line.strip() for line in code.splitlines() if line.strip()}


def solution_lines() -> list[tuple[str, str]]:
    out = []
    for lesson in lessons():
        for cell in lesson.find("solution"):
            given = _lines(lesson.exercise(cell.course_id).code)
            for line in sorted(_lines(cell.code) - given):
                if len(line) >= MIN_LINE:
                    out.append((f"{lesson.name} solution {cell.course_id}", line))
    return out


def reference_sentences() -> list[tuple[str, str]]:
    out = []
    for lesson in lessons():
        public = public_text(lesson)
        for cell in lesson.find("reference"):
            for sentence in re.split(r"[。；！？\n]|(?<=[.;!?])\s", cell.source):
                sentence = sentence.strip()
                if len(sentence) >= MIN_SENTENCE and sentence not in public:
                    out.append((f"{lesson.name} reference {cell.course_id}", sentence))
    return out


def _rubric(name: str) -> dict:
    return yaml.safe_load((ROOT / "lessons" / f"{name}.rubric.yml").read_text(encoding="utf-8"))


def hidden_values() -> list[tuple[str, str]]:
    """The seed, and every hidden / text setting as `key: value` and (for distinctive keys) the key alone."""
    out = []
    for name in lesson_names(ROOT):
        data = _rubric(name)
        seeds = [data.get("seed")] + [(data.get("hidden") or {}).get("seed")]
        out += [(f"{name} seed", str(s)) for s in seeds if isinstance(s, int)]
        settings = {}
        for exercise in data.get("exercises") or []:
            settings.update(exercise.get("hidden") or {})
        settings.update({k: v for k, v in (data.get("hidden") or {}).items() if k != "seed"})
        settings.update({k: v for k, v in (data.get("text") or {}).items() if not isinstance(v, list)})
        for key in settings:
            # the setting as YAML or Python would write it (the value's spelling varies: 1.0e-9, 1e-09)
            out.append((f"{name} setting {key}", re.compile(rf"\b{re.escape(key)}\s*[:=]"), f"{key}: 1"))
            if "_" in key:
                out.append((f"{name} setting name {key}", key))
    return out


def _strings(node, key: str = "", top: bool = True) -> list[tuple[str, str]]:
    if isinstance(node, dict):
        return [s for k, v in node.items() if k not in PUBLIC_RUBRIC_KEYS and not (top and k == "pass")
                for s in _strings(v, str(k), False)]
    if isinstance(node, list):
        return [s for item in node for s in _strings(item, key, False)]
    return [(key, node)] if isinstance(node, str) else []


def rubric_text() -> list[tuple[str, str]]:
    """Every instructor-only string of the full rubric (concept labels, terms, patterns, veto
    patterns and messages, misconceptions, claims...) that the public student edition does not show."""
    out = []
    for lesson in lessons():
        public = public_text(lesson)
        rubric = _rubric(lesson.name)
        ids = {v.get("id") for v in rubric.get("vetoes", []) if isinstance(v, dict)}
        for key, text in _strings(rubric):
            text = text.strip()
            if re.fullmatch(r"[A-Za-z]+", text):
                continue    # one plain English word (a scope, a concept word): not evidence on its own
            if text in ids:
                continue    # a veto id (a misconception's `veto:` names one): the public rubric summary lists them
            if len(text) >= MIN_STRING and text not in public:
                out.append((f"{lesson.name} rubric {key}", text))
    return out


def _public_code_lines() -> set[str]:
    """Lines of the code the release ships by design (the course library, the generic grader)."""
    lines = set()
    for path in list((ROOT / "specdec").glob("*.py")) + list((ROOT / "grader").glob("*.py")):
        lines |= _lines(path.read_text(encoding="utf-8"))
    return lines


def checks_code() -> list[tuple[str, str]]:
    """Function and class names and the source lines of every lessons/*.checks.py (the oracle, the
    builders, the input generators), except what the student edition itself shows. A name is looked
    for as code (`name(`, `def name`), so the word "oracle" in prose is not a hit."""
    out = []
    shipped = _public_code_lines()
    public = "\n".join(public_text(lesson) for lesson in lessons())
    public_lines = _lines(public)
    for path in sorted((ROOT / "lessons").glob("*.checks.py")):
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and len(node.name) >= 6:
                if not re.search(rf"\b{re.escape(node.name)}\b", public):
                    out.append((f"{path.name} def", re.compile(rf"(?<![\w.]){re.escape(node.name)}\(|\bdef\s+{re.escape(node.name)}\b"),
                                f"{node.name}(x)"))
        for line in sorted(_lines(source) - shipped - public_lines):
            if len(line) >= 25 and not line.startswith("#"):
                out.append((f"{path.name} line", line))
    return out


def example(needle: tuple) -> str:
    """A text the needle matches."""
    return needle[2] if len(needle) > 2 else needle[1]


def found(needles: list[tuple], texts: dict[str, str]) -> list[str]:
    """'what: text — in file' for each needle that occurs in a release file."""
    hits = []
    for what, text, *_ in needles:
        if isinstance(text, re.Pattern):
            pattern = text
        elif re.fullmatch(r"\w+", text):        # a name: as a whole word
            pattern = re.compile(rf"(?<!\w){re.escape(text)}(?!\w)")
        else:
            pattern = None
        for rel, content in texts.items():
            if (pattern.search(content) if pattern else text in content):
                shown = pattern.pattern if pattern else text
                hits.append(f"{what}: {shown[:80]!r} — in {rel}")
    return hits

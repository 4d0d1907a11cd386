"""Load and validate `lessons/<lesson>.rubric.yml` into frozen dataclasses.

The rubric is data: points, the checks behind each code criterion, concept groups and levels for
free-text criteria, veto heuristics, hidden-check seeds and tolerances, sandbox limits, feedback
texts. A malformed rubric raises RubricError naming the file and the key.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


class RubricError(ValueError):
    """A rubric file that cannot be used; the message starts with `file: key:`."""


@dataclass(frozen=True)
class Concept:
    id: str
    label: str
    terms: tuple[str, ...]
    patterns: tuple[re.Pattern, ...]


@dataclass(frozen=True)
class Level:
    points: int
    min_groups: int
    require: tuple[str, ...] = ()


@dataclass(frozen=True)
class Criterion:
    id: str
    points: int
    title: str
    description: str
    kind: str                                  # "code" or "text"
    checks: tuple[str, ...] = ()               # code: every listed check must pass
    answer: str | None = None                  # text: the answer cell's course_id
    prose: bool = True                         # text: sentence / copy / keyword-list rules apply
    concepts: tuple[Concept, ...] = ()
    levels: tuple[Level, ...] = ()


@dataclass(frozen=True)
class Veto:
    id: str
    title: str
    message: str
    scope: str                                 # "sentence" or "identifiers"
    all: tuple[re.Pattern, ...] = ()
    any: tuple[re.Pattern, ...] = ()
    none: tuple[re.Pattern, ...] = ()
    min_identifiers: int = 3
    answers: tuple[str, ...] = ()              # answer course_ids it reads; empty: every answer


@dataclass(frozen=True)
class Exercise:
    id: str
    function: str
    checks: str


@dataclass(frozen=True)
class SandboxSettings:
    timeout_s: float
    call_timeout_s: float
    memory_mb: int


@dataclass(frozen=True)
class HiddenSettings:
    seed: int
    tolerance: float
    random_cases: int
    random_max_vocab: int
    identity_cases: int
    large_vocab: int


@dataclass(frozen=True)
class TextSettings:
    min_sentences: int
    min_sentence_chars: int
    predicate_words: tuple[str, ...]
    copy_ngram: int
    copy_threshold: float
    copy_min_chars: int


@dataclass(frozen=True)
class Rubric:
    lesson: str
    path: Path
    max_score: int
    pass_score: int
    exercise: Exercise
    sandbox: SandboxSettings
    hidden: HiddenSettings
    text: TextSettings
    feedback: dict
    criteria: tuple[Criterion, ...]
    vetoes: tuple[Veto, ...]

    def criterion(self, criterion_id: str) -> Criterion:
        for item in self.criteria:
            if item.id == criterion_id:
                return item
        raise KeyError(criterion_id)

    @property
    def code_criteria(self) -> tuple[Criterion, ...]:
        return tuple(c for c in self.criteria if c.kind == "code")

    @property
    def text_criteria(self) -> tuple[Criterion, ...]:
        return tuple(c for c in self.criteria if c.kind == "text")


FEEDBACK_KEYS = ("empty", "missing_cell", "keyword_list", "copy", "missing", "full", "unfilled", "integrity", "forbidden",
                 "not_run")


def rubric_path(lesson: str, root: Path = ROOT) -> Path:
    return root / "lessons" / f"{lesson}.rubric.yml"


def load_rubric(path: str | Path) -> Rubric:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RubricError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise RubricError(f"{path}: not valid YAML: {exc}") from None
    return parse_rubric(data, path)


class _Reader:
    """Typed access to one mapping of the YAML, with errors that name the key path."""

    def __init__(self, data, path: Path, where: str):
        if not isinstance(data, dict):
            raise RubricError(f"{path}: {where or 'top level'}: expected a mapping")
        self.data, self.path, self.where = data, path, where

    def fail(self, key: str, problem: str):
        raise RubricError(f"{self.path}: {self.key(key)}: {problem}")

    def key(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def get(self, key: str, kind, default=...):
        if key not in self.data:
            if default is ...:
                self.fail(key, "missing")
            return default
        value = self.data[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if isinstance(value, bool) and bool not in kinds:
            self.fail(key, f"expected {'/'.join(k.__name__ for k in kinds)}, got a boolean")
        if float in kinds and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kinds):
            self.fail(key, f"expected {'/'.join(k.__name__ for k in kinds)}, got {type(value).__name__}")
        return value

    def sub(self, key: str) -> "_Reader":
        return _Reader(self.get(key, dict), self.path, self.key(key))

    def strings(self, key: str, default=()) -> tuple[str, ...]:
        items = self.get(key, list, list(default))
        if not all(isinstance(s, str) and s for s in items):
            self.fail(key, "expected a list of non-empty strings")
        return tuple(items)

    def patterns(self, key: str) -> tuple[re.Pattern, ...]:
        compiled = []
        for n, text in enumerate(self.strings(key)):
            try:
                compiled.append(re.compile(text, re.IGNORECASE))
            except re.error as exc:
                self.fail(f"{key}[{n}]", f"bad regular expression {text!r}: {exc}")
        return tuple(compiled)


def parse_rubric(data, path: Path) -> Rubric:
    top = _Reader(data, path, "")
    ex, sb, hd, tx = top.sub("exercise"), top.sub("sandbox"), top.sub("hidden"), top.sub("text")
    feedback = top.get("feedback", dict)
    for key in FEEDBACK_KEYS:
        if not isinstance(feedback.get(key), str):
            top.fail(f"feedback.{key}", "missing or not a string")
    rubric = Rubric(
        lesson=top.get("lesson", str),
        path=path,
        max_score=top.get("max_score", int),
        pass_score=top.get("pass_score", int),
        exercise=Exercise(ex.get("id", str), ex.get("function", str), ex.get("checks", str)),
        sandbox=SandboxSettings(sb.get("timeout_s", float), sb.get("call_timeout_s", float), sb.get("memory_mb", int)),
        hidden=HiddenSettings(hd.get("seed", int), hd.get("tolerance", float), hd.get("random_cases", int),
                              hd.get("random_max_vocab", int), hd.get("identity_cases", int), hd.get("large_vocab", int)),
        text=TextSettings(tx.get("min_sentences", int), tx.get("min_sentence_chars", int), tx.strings("predicate_words"),
                          tx.get("copy_ngram", int), tx.get("copy_threshold", float), tx.get("copy_min_chars", int)),
        feedback=dict(feedback),
        criteria=tuple(_criterion(item, path, f"criteria[{n}]") for n, item in enumerate(top.get("criteria", list))),
        vetoes=tuple(_veto(item, path, f"vetoes[{n}]") for n, item in enumerate(top.get("vetoes", list))),
    )
    _check_totals(rubric, top)
    return rubric


def _criterion(data, path: Path, where: str) -> Criterion:
    r = _Reader(data, path, where)
    kind = r.get("kind", str)
    points = r.get("points", int)
    common = dict(id=r.get("id", str), points=points, title=r.get("title", str), description=r.get("description", str),
                  kind=kind)
    if points < 0:
        r.fail("points", "must not be negative")
    if kind == "code":
        checks = r.strings("checks")
        if not checks:
            r.fail("checks", "a code criterion needs at least one check")
        return Criterion(**common, checks=checks)
    if kind != "text":
        r.fail("kind", f"expected 'code' or 'text', got {kind!r}")
    concepts = []
    for n, item in enumerate(r.get("concepts", list)):
        c = _Reader(item, path, f"{where}.concepts[{n}]")
        concept = Concept(c.get("id", str), c.get("label", str), tuple(t.lower() for t in c.strings("terms")),
                          c.patterns("patterns"))
        if not concept.terms and not concept.patterns:
            c.fail("terms", "a concept needs terms or patterns")
        concepts.append(concept)
    ids = [c.id for c in concepts]
    if len(set(ids)) != len(ids):
        r.fail("concepts", "duplicate concept id")
    levels = []
    for n, item in enumerate(r.get("levels", list)):
        lv = _Reader(item, path, f"{where}.levels[{n}]")
        level = Level(lv.get("points", int), lv.get("min_groups", int), lv.strings("require"))
        if not 0 < level.points <= points:
            lv.fail("points", f"must be between 1 and the criterion's {points}")
        if level.min_groups > len(concepts):
            lv.fail("min_groups", f"more than the {len(concepts)} concept groups")
        unknown = set(level.require) - set(ids)
        if unknown:
            lv.fail("require", f"unknown concept ids {sorted(unknown)}")
        levels.append(level)
    if not levels or [lv.points for lv in levels] != sorted((lv.points for lv in levels), reverse=True):
        r.fail("levels", "need at least one level, highest points first")
    return Criterion(**common, answer=r.get("answer", str), prose=r.get("prose", bool, True),
                     concepts=tuple(concepts), levels=tuple(levels))


def _veto(data, path: Path, where: str) -> Veto:
    r = _Reader(data, path, where)
    scope = r.get("scope", str)
    veto = Veto(id=r.get("id", str), title=r.get("title", str), message=r.get("message", str), scope=scope,
                all=r.patterns("all"), any=r.patterns("any"), none=r.patterns("none"),
                min_identifiers=r.get("min_identifiers", int, 3),
                answers=tuple(str(a) for a in r.get("answers", list, [])))
    if scope not in ("sentence", "identifiers"):
        r.fail("scope", f"expected 'sentence' or 'identifiers', got {scope!r}")
    if scope == "sentence" and not (veto.all or veto.any):
        r.fail("all", "a sentence veto needs `all` or `any` patterns")
    return veto


def _check_totals(rubric: Rubric, top: _Reader) -> None:
    ids = [c.id for c in rubric.criteria] + [v.id for v in rubric.vetoes]
    if len(set(ids)) != len(ids):
        top.fail("criteria", "duplicate criterion or veto id")
    total = sum(c.points for c in rubric.criteria)
    if total != rubric.max_score:
        top.fail("max_score", f"is {rubric.max_score} but the criteria add up to {total}")
    if not 0 < rubric.pass_score <= rubric.max_score:
        top.fail("pass_score", "must be between 1 and max_score")
    if not 0 < rubric.hidden.tolerance < 1:
        top.fail("hidden.tolerance", "must be between 0 and 1")
    if rubric.sandbox.timeout_s <= 0 or rubric.sandbox.call_timeout_s <= 0 or rubric.sandbox.memory_mb < 64:
        top.fail("sandbox", "timeouts must be positive and memory_mb at least 64")

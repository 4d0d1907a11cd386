"""Load and validate `lessons/<lesson>.rubric.yml` into frozen dataclasses.

The rubric is data: points, the pass rule, the exercises (each with its function, its check builder
in `lessons/<lesson>.checks.py` and that builder's own `hidden:` settings), the checks behind each
code criterion, the free-text criteria, veto heuristics, sandbox limits, feedback texts. The engine
knows nothing about any one lesson: a lesson's specifics live in its files under `lessons/`.
A malformed rubric raises RubricError naming the file and the key.

Older single-exercise rubrics (`exercise:` plus a top-level `hidden:`) still load.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from .claims import TextCriterion, TextRubricError, TextSettings, expand, parse_criterion, parse_settings

from .paths import ROOT, lesson_files


class RubricError(ValueError):
    """A rubric file that cannot be used; the message starts with `file: key:`."""


@dataclass(frozen=True)
class Criterion:
    id: str
    points: int
    title: str
    description: str
    kind: str                                  # "code" or "text"
    checks: tuple[str, ...] = ()               # code: every listed check must pass
    exercise: str | None = None                # code: the exercise whose checks these are
    optional: bool = False                     # outside max_score: reported separately (a challenge)
    answer: str | None = None                  # text: the answer cell's course_id
    prose: bool = True                         # text: the keyword-list rule applies
    text: TextCriterion | None = None          # text: claims, misconceptions, levels (grader/claims.py)


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
    doubt: tuple[re.Pattern, ...] = ()         # one matches a run of clauses with no `none` / `doubt_none` there: a doubt
    doubt_none: tuple[re.Pattern, ...] = ()    # what clears a doubt besides `none` (a turn: 但…仍然正确)


@dataclass(frozen=True)
class Exercise:
    id: str                   # course_id of the exercise cell in the lesson and the notebooks
    function: str             # the function the hidden checks call
    checks: str               # the check builder's name in lessons/<lesson>.checks.py
    hidden: dict              # that builder's own settings (it validates them)
    imports: tuple[str, ...] = ()     # modules bound in the sandbox namespace (e.g. math)
    scored: bool = True       # False: a challenge, outside max_score, reported separately
    title: str = ""


@dataclass(frozen=True)
class SandboxSettings:
    timeout_s: float
    call_timeout_s: float
    memory_mb: int


@dataclass(frozen=True)
class PassRule:
    """Passed iff score >= min_score, every `require`d criterion has full points, and (when
    `no_vetoes`) no veto remains."""

    min_score: int
    require: tuple[str, ...] = ()
    no_vetoes: bool = True


@dataclass(frozen=True)
class Rubric:
    lesson: str
    path: Path
    max_score: int
    pass_score: int
    exercises: tuple[Exercise, ...]
    seed: int                 # every hidden input derives from it (mixed with the instructor's salt)
    pass_rule: PassRule
    sandbox: SandboxSettings
    text: TextSettings
    feedback: dict
    criteria: tuple[Criterion, ...]
    vetoes: tuple[Veto, ...]

    @property
    def exercise(self) -> Exercise:
        """The first scored exercise (single-exercise lessons)."""
        return next(e for e in self.exercises if e.scored)

    def exercise_by_id(self, exercise_id: str) -> Exercise:
        for item in self.exercises:
            if item.id == exercise_id:
                return item
        raise KeyError(exercise_id)

    @property
    def checks_path(self) -> Path:
        return self.path.with_name(self.path.name[: -len(".rubric.yml")] + ".checks.py")

    @property
    def scored_criteria(self) -> tuple[Criterion, ...]:
        return tuple(c for c in self.criteria if not c.optional)

    @property
    def optional_criteria(self) -> tuple[Criterion, ...]:
        return tuple(c for c in self.criteria if c.optional)

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


FEEDBACK_KEYS = ("empty", "missing_cell", "keyword_list", "copy", "full", "misconception", "false_formula", "swapped",
                 "unfilled", "integrity", "forbidden", "not_run")


def rubric_path(lesson: str, root: Path = ROOT) -> Path:
    return lesson_files(lesson, root).rubric


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

    def patterns(self, key: str, concepts: dict | None = None) -> tuple[re.Pattern, ...]:
        """The list at `key` compiled; with `concepts`, `@name` stands for that concept of `text.concepts`."""
        compiled = []
        for n, text in enumerate(self.strings(key)):
            try:
                if concepts is not None:
                    text = expand(text, concepts, self.key(f"{key}[{n}]"))
                compiled.append(re.compile(text, re.IGNORECASE))
            except TextRubricError as exc:
                self.fail(f"{key}[{n}]", str(exc))
            except re.error as exc:
                self.fail(f"{key}[{n}]", f"bad regular expression {text!r}: {exc}")
        return tuple(compiled)


def parse_rubric(data, path: Path) -> Rubric:
    top = _Reader(data, path, "")
    sb, tx = top.sub("sandbox"), top.sub("text")
    feedback = top.get("feedback", dict)
    for key in FEEDBACK_KEYS:
        if not isinstance(feedback.get(key), str):
            top.fail(f"feedback.{key}", "missing or not a string")
    exercises, seed = _exercises(top, path)
    pass_score = top.get("pass_score", int)
    rule = top.sub("pass") if "pass" in top.data else None
    pass_rule = PassRule(rule.get("min_score", int, pass_score) if rule else pass_score,
                         rule.strings("require") if rule else (),
                         rule.get("no_vetoes", bool, True) if rule else True)
    default_exercise = exercises[0].id
    try:
        text_settings = parse_settings(tx.data, "text")
    except TextRubricError as exc:
        raise RubricError(f"{path}: {exc}") from None
    criteria = tuple(_criterion(item, path, f"criteria[{n}]", default_exercise, text_settings)
                     for n, item in enumerate(top.get("criteria", list)))
    scored = {e.id: e.scored for e in exercises}
    criteria = tuple(_with_optional(c, scored, top, n) for n, c in enumerate(criteria))
    rubric = Rubric(
        lesson=top.get("lesson", str),
        path=path,
        max_score=top.get("max_score", int),
        pass_score=pass_score,
        exercises=exercises,
        seed=seed,
        pass_rule=pass_rule,
        sandbox=SandboxSettings(sb.get("timeout_s", float), sb.get("call_timeout_s", float), sb.get("memory_mb", int)),
        text=text_settings,
        feedback=dict(feedback),
        criteria=criteria,
        vetoes=tuple(_veto(item, path, f"vetoes[{n}]", text_settings.concepts)
                     for n, item in enumerate(top.get("vetoes", list))),
    )
    _check_totals(rubric, top)
    return rubric


def _exercises(top: _Reader, path: Path) -> tuple[tuple[Exercise, ...], int]:
    """(exercises, seed) from `exercises:` + `seed:`, or the older `exercise:` + `hidden:` form."""
    if "exercises" in top.data:
        items = top.get("exercises", list)
        seed = top.get("seed", int)
    else:
        old = dict(top.get("exercise", dict))
        hidden = dict(top.get("hidden", dict, {}))
        seed = hidden.pop("seed", None)
        if not isinstance(seed, int) or isinstance(seed, bool):
            top.fail("hidden.seed", "missing or not an integer")
        items = [{**old, "hidden": hidden}]
    exercises = []
    for n, item in enumerate(items):
        r = _Reader(item, path, f"exercises[{n}]")
        hidden = r.get("hidden", dict, {})
        if not all(isinstance(k, str) for k in hidden):
            r.fail("hidden", "keys must be strings")
        exercises.append(Exercise(r.get("id", str), r.get("function", str), r.get("checks", str), dict(hidden),
                                  r.strings("imports"), r.get("scored", bool, True), r.get("title", str, "")))
    if not exercises:
        top.fail("exercises", "a lesson needs at least one exercise")
    if not any(e.scored for e in exercises):
        top.fail("exercises", "at least one exercise must be scored")
    ids = [e.id for e in exercises]
    if len(set(ids)) != len(ids):
        top.fail("exercises", "duplicate exercise id")
    return tuple(exercises), seed


def _with_optional(criterion: Criterion, scored: dict, top: _Reader, n: int) -> Criterion:
    if criterion.kind != "code":
        return criterion
    if criterion.exercise not in scored:
        top.fail(f"criteria[{n}].exercise", f"unknown exercise {criterion.exercise!r}")
    if scored[criterion.exercise]:
        return criterion
    return Criterion(**{**criterion.__dict__, "optional": True})


def _criterion(data, path: Path, where: str, default_exercise: str, text_settings: TextSettings) -> Criterion:
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
        return Criterion(**common, checks=checks, exercise=r.get("exercise", str, default_exercise))
    if kind != "text":
        r.fail("kind", f"expected 'code' or 'text', got {kind!r}")
    try:
        text = parse_criterion(data, text_settings, where)
    except TextRubricError as exc:
        raise RubricError(f"{path}: {exc}") from None
    return Criterion(**common, answer=r.get("answer", str), prose=r.get("prose", bool, True), text=text)


def _veto(data, path: Path, where: str, concepts: dict | None = None) -> Veto:
    """A veto; `@name` in its patterns stands for a concept of `text.concepts`, as in evidence patterns."""
    r = _Reader(data, path, where)
    scope = r.get("scope", str)
    c = concepts or {}
    veto = Veto(id=r.get("id", str), title=r.get("title", str), message=r.get("message", str), scope=scope,
                all=r.patterns("all", c), any=r.patterns("any", c), none=r.patterns("none", c),
                min_identifiers=r.get("min_identifiers", int, 3),
                answers=tuple(str(a) for a in r.get("answers", list, [])), doubt=r.patterns("doubt", c),
                doubt_none=r.patterns("doubt_none", c))
    if scope not in ("sentence", "identifiers"):
        r.fail("scope", f"expected 'sentence' or 'identifiers', got {scope!r}")
    if scope == "sentence" and not (veto.all or veto.any):
        r.fail("all", "a sentence veto needs `all` or `any` patterns")
    return veto


def _check_totals(rubric: Rubric, top: _Reader) -> None:
    ids = [c.id for c in rubric.criteria] + [v.id for v in rubric.vetoes]
    if len(set(ids)) != len(ids):
        top.fail("criteria", "duplicate criterion or veto id")
    total = sum(c.points for c in rubric.scored_criteria)
    if total != rubric.max_score:
        top.fail("max_score", f"is {rubric.max_score} but the scored criteria add up to {total}")
    if not 0 < rubric.pass_score <= rubric.max_score:
        top.fail("pass_score", "must be between 1 and max_score")
    if not 0 < rubric.pass_rule.min_score <= rubric.max_score:
        top.fail("pass.min_score", "must be between 1 and max_score")
    unknown = [c for c in rubric.pass_rule.require if c not in {x.id for x in rubric.scored_criteria}]
    if unknown:
        top.fail("pass.require", f"unknown or optional criteria {unknown}")
    if rubric.sandbox.timeout_s <= 0 or rubric.sandbox.call_timeout_s <= 0 or rubric.sandbox.memory_mb < 64:
        top.fail("sandbox", "timeouts must be positive and memory_mb at least 64")

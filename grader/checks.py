"""Checks: small functions that turn sandbox results into pass/fail with a message. No scoring here.

A `Check` names the calls of the student's function it needs (inputs built by the grader) and a
`judge` that compares the outcomes with the grader's own oracle. The exercise-specific checks live
with the lesson, in `lessons/<lesson>.checks.py` (loaded by path, never imported by name): for each
exercise the rubric names a builder function there, called as `builder(HiddenContext) -> list[Check]`.
The module owns its settings (the exercise's `hidden:` mapping in the rubric) and validates them.
The visible assertions are generic and come from the template's own top-level statements.

A judge that raises is a bug in the grader, not the student's failure: `judge_suite` reports it as
an `internal` result (with the traceback, for the instructor's JSON), never as a failed check.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from . import wire
from .integrity import Statement

SALT_ENV = "COURSE_GRADER_SALT"       # the instructor's secret, mixed into every hidden seed


class ChecksError(ValueError):
    """A lesson's checks module that cannot be used (the message names the file)."""


@dataclass(frozen=True)
class CheckResult:
    id: str
    passed: bool
    message: str
    public: bool
    title: str = ""
    exercise: str = ""
    internal: str = ""          # the traceback when the judge itself failed (a grader bug)


@dataclass(frozen=True)
class Outcome:
    """One call of the student's function as the grader decoded it (plain values only)."""

    ok: bool
    value: object = None
    error: str = ""           # exception type name ("Timeout" for the per-call alarm), when not ok
    message: str = ""
    bad: str = ""             # why the sandbox refused the return value, when not ok

    @classmethod
    def parse(cls, item: dict) -> "Outcome":
        if item["ok"]:
            try:
                return cls(True, wire.decode(item["value"]))
            except wire.WireError as exc:
                return cls(False, bad=str(exc))
        if "bad" in item:
            return cls(False, bad=item["bad"])
        return cls(False, error=item["error"]["type"], message=item["error"]["message"])

    def describe(self) -> str:
        if self.ok:
            return "返回了值"
        if self.bad:
            return f"返回值不是纯数字/字符串/列表/字典（{self.bad}）"
        if self.error == "Timeout":
            return "单次调用超时"
        if self.error == "Skipped":
            return "没有运行（整次运行的时间预算已经用完：前面的调用太慢）"
        return f"抛出 {self.error}"


Ratio = wire.Ratio


@dataclass(frozen=True)
class Check:
    id: str
    title: str
    public: bool
    calls: tuple[tuple, ...]
    judge: Callable[["Check", Sequence[Outcome]], tuple[bool, str]] = field(repr=False)
    expected: tuple = field(default=(), repr=False)    # oracle results aligned with calls, for the judge


@dataclass(frozen=True)
class HiddenContext:
    """What a check builder gets: the exercise's own settings and a seed it must derive every input from."""

    exercise: str
    settings: dict            # the exercise's `hidden:` mapping from the rubric, as written
    seed: int                 # rubric seed mixed with the instructor's salt (COURSE_GRADER_SALT)

    def seed_for(self, purpose: str) -> int:
        """An independent 64-bit seed for one use (one check's inputs)."""
        digest = hashlib.sha256(f"{self.seed}:{self.exercise}:{purpose}".encode()).digest()
        return int.from_bytes(digest[:8], "big")


@dataclass(frozen=True)
class Suite:
    exercise: str
    checks: tuple[Check, ...]
    calls_json: str = field(repr=False, default="[]")      # every check's calls, wire-encoded and serialized once

    @property
    def hidden_count(self) -> int:
        return sum(1 for c in self.checks if not c.public)

    @property
    def hidden_calls(self) -> int:
        return sum(len(c.calls) for c in self.checks if not c.public)

    @property
    def call_count(self) -> int:
        return sum(len(c.calls) for c in self.checks)


def mixed_seed(seed: int, salt: str | None = None) -> int:
    """The rubric's seed mixed with the instructor's secret: the checks' source alone does not give the inputs."""
    salt = os.environ.get(SALT_ENV, "") if salt is None else salt
    if not salt:
        return seed
    return int.from_bytes(hashlib.sha256(f"{seed}:{salt}".encode()).digest()[:8], "big")


def load_module(path: Path):
    """Load `lessons/<lesson>.checks.py` by path under a private module name (never via sys.path)."""
    name = "_course_checks_" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    if not path.is_file():
        raise ChecksError(f"{path}: the lesson's checks module is missing")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise ChecksError(f"{path}: cannot load: {type(exc).__name__}: {exc}") from exc
    return module


def build_suite(path: Path, builder: str, context: HiddenContext) -> Suite:
    module = load_module(path)
    build = getattr(module, builder, None)
    if not callable(build):
        raise ChecksError(f"{path}: no check builder {builder!r} (the rubric's exercises[].checks)")
    try:
        checks = tuple(build(context))
    except (ValueError, TypeError, KeyError) as exc:
        raise ChecksError(f"{path}: {builder}: {exc}") from exc
    ids = [c.id for c in checks]
    if len(set(ids)) != len(ids):
        raise ChecksError(f"{path}: {builder}: duplicate check ids")
    calls = [[wire.encode(a) for a in args] for check in checks for args in check.calls]
    return Suite(context.exercise, checks, json.dumps(calls, separators=(",", ":")))


def judge_suite(suite: Suite, outcomes: Sequence[Outcome]) -> list[CheckResult]:
    results, start = [], 0
    for check in suite.checks:
        chunk = outcomes[start:start + len(check.calls)]
        start += len(check.calls)
        try:
            passed, message = check.judge(check, chunk)
            results.append(CheckResult(check.id, bool(passed), str(message), check.public, check.title, suite.exercise))
        except Exception:  # the grader's bug: never the student's lost points
            detail = traceback.format_exc(limit=8)
            results.append(CheckResult(check.id, False, "评分器内部错误：这一项检查没能判定（不是你的代码的问题）",
                                       check.public, check.title, suite.exercise, internal=detail))
    return results


def visible_results(statements: Sequence[Statement], payload: Sequence[dict], exercise: str = "") -> list[CheckResult]:
    """One public check per assertion of the template, plus `visible.assertions` (every statement ran)."""
    results, all_ok, first_problem = [], True, ""
    for stmt, item in zip(statements, payload):
        ok = bool(item["ok"])
        if not ok:
            err = item["error"]
            problem = f"第 {stmt.line} 行 `{stmt.text.strip()}`：{err['type']}" + (f"：{err['message']}" if err["message"] else "")
            all_ok = False
            first_problem = first_problem or problem
        if stmt.kind == "assert":
            message = "通过" if ok else problem
            results.append(CheckResult(f"visible.line{stmt.line}", ok, message, True, stmt.text.strip(), exercise))
    results.insert(0, CheckResult("visible.assertions", all_ok, "练习单元的断言全部通过" if all_ok else first_problem,
                                  True, "练习单元里的可见断言", exercise))
    return results

"""Checks: small functions that turn sandbox results into pass/fail with a message. No scoring here.

A `Check` names the calls of the student's function it needs (inputs built by the grader) and a
`judge` that compares the plain-JSON outcomes with the grader's own oracle. The exercise-specific
checks live in one module per exercise (`grader/checks/<rubric exercise.checks>.py`, exposing
`build(hidden_settings) -> list[Check]`); the visible assertions are generic and come from the
template's own top-level statements.
"""
from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..integrity import Statement


@dataclass(frozen=True)
class CheckResult:
    id: str
    passed: bool
    message: str
    public: bool
    title: str = ""


@dataclass(frozen=True)
class Outcome:
    """One call of the student's function as the grader parsed it (plain JSON values only)."""

    ok: bool
    value: object = None
    error: str = ""           # exception type name ("Timeout" for the per-call alarm), when not ok
    message: str = ""
    bad: str = ""             # why the sandbox refused the return value, when not ok

    @classmethod
    def parse(cls, item: dict) -> "Outcome":
        if item["ok"]:
            return cls(True, item["value"])
        if "bad" in item:
            return cls(False, bad=item["bad"])
        return cls(False, error=item["error"]["type"], message=item["error"]["message"])

    def describe(self) -> str:
        if self.ok:
            return "返回了值"
        if self.bad:
            return f"返回值不是纯数字/列表（{self.bad}）"
        if self.error == "Timeout":
            return "单次调用超时"
        return f"抛出 {self.error}"


@dataclass(frozen=True)
class Ratio:
    """A list of floats k / denominator, sent to the sandbox as integers (far less JSON to parse);
    the harness rebuilds each float with the same correctly rounded int / int division."""

    counts: tuple[int, ...]
    denominator: int

    def floats(self) -> list[float]:
        return [k / self.denominator for k in self.counts]

    def wire(self) -> dict:
        return {"ratio": list(self.counts), "denominator": self.denominator}


@dataclass(frozen=True)
class Check:
    id: str
    title: str
    public: bool
    calls: tuple[tuple, ...]
    judge: Callable[["Check", Sequence[Outcome]], tuple[bool, str]] = field(repr=False)
    expected: tuple = field(default=(), repr=False)    # oracle results aligned with calls, for the judge


@dataclass(frozen=True)
class Suite:
    checks: tuple[Check, ...]
    calls_json: str           # every check's calls, concatenated, serialized once

    @property
    def hidden_count(self) -> int:
        return sum(1 for c in self.checks if not c.public)

    @property
    def hidden_calls(self) -> int:
        return sum(len(c.calls) for c in self.checks if not c.public)


def build_suite(module_name: str, hidden) -> Suite:
    module = importlib.import_module(f"{__name__}.{module_name}")
    checks = tuple(module.build(hidden))
    calls = [[a.wire() if isinstance(a, Ratio) else a for a in args] for check in checks for args in check.calls]
    return Suite(checks, json.dumps(calls, separators=(",", ":")))


def judge_suite(suite: Suite, outcomes: Sequence[Outcome]) -> list[CheckResult]:
    results, start = [], 0
    for check in suite.checks:
        chunk = outcomes[start:start + len(check.calls)]
        start += len(check.calls)
        try:
            passed, message = check.judge(check, chunk)
        except Exception as exc:  # a judge must not take the grader down on a value it did not foresee
            passed, message = False, f"无法判定（{type(exc).__name__}）"
        results.append(CheckResult(check.id, passed, message, check.public, check.title))
    return results


def visible_results(statements: Sequence[Statement], payload: Sequence[dict]) -> list[CheckResult]:
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
            results.append(CheckResult(f"visible.line{stmt.line}", ok, message, True, stmt.text.strip()))
    results.insert(0, CheckResult("visible.assertions", all_ok, "练习单元的断言全部通过" if all_ok else first_problem,
                                  True, "练习单元里的可见断言"))
    return results

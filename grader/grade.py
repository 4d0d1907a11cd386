"""Grade submissions: load → integrity / fills → sandbox → checks → text → vetoes → score.

`grade_one` never raises: anything unexpected becomes an `internal` error in the report, so a
batch always has one report per submission. `grade_many` runs submissions concurrently (threads
that each drive one sandbox process).
"""
from __future__ import annotations

import json
import re
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from . import sandbox
from .checks import CheckResult, Outcome, Suite, build_suite, judge_suite, visible_results
from .integrity import IntegrityError, check_fill, extract_fills, fill_template, statements
from .lesson import Lesson, LessonError, load_lesson
from .overrides import override_for
from .rubric import ROOT, Rubric, RubricError, load_rubric, rubric_path
from .score import Report, ReportError, failed_report, score
from .submission import SubmissionError, find_answers, find_exercise, read_notebook
from .text import score_answer
from .vetoes import find_vetoes


@dataclass(frozen=True)
class Context:
    """Everything about one lesson the grader needs, built once per process."""

    lesson: Lesson
    rubric: Rubric
    template: str
    suite: Suite
    references: dict          # answer course_id -> reference text


@dataclass(frozen=True)
class Options:
    lesson: str | None = None          # overrides metadata.course.lesson (a name or a .qmd path)
    timeout_s: float | None = None     # wall clock per submission (default: the rubric's)
    overrides: dict | None = None      # see grader/overrides.py
    as_reference: bool = False         # answers are the lesson's references: no copy check
    root: Path = ROOT


LESSON_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


class LessonNotFound(Exception):
    pass


_contexts: dict = {}
_contexts_lock = threading.Lock()


def lesson_files(name: str, root: Path = ROOT) -> tuple[Path, Path]:
    """(lesson .qmd, rubric .yml) for a lesson name or a path to its .qmd."""
    as_path = Path(name)
    if as_path.suffix == ".qmd":
        return as_path, as_path.with_suffix(".rubric.yml")
    if not LESSON_NAME.fullmatch(name):
        raise LessonNotFound(f"不是合法的课程名：{name!r}")
    return root / "lessons" / f"{name}.qmd", rubric_path(name, root)


def context(name: str, root: Path = ROOT) -> Context:
    qmd, rubric_file = lesson_files(name, root)
    key = (str(qmd.resolve()), str(rubric_file.resolve()))
    with _contexts_lock:
        if key not in _contexts:
            if not qmd.is_file() or not rubric_file.is_file():
                raise LessonNotFound(f"找不到课程 {name!r}（需要 {qmd} 和 {rubric_file}）")
            lesson = load_lesson(qmd)
            rubric = load_rubric(rubric_file)
            references = {c.course_id: c.source for c in lesson.find("reference")}
            suite = build_suite(rubric.exercise.checks, rubric.hidden)
            _contexts[key] = Context(lesson, rubric, lesson.exercise(rubric.exercise.id).code, suite, references)
        return _contexts[key]


def default_lesson(root: Path = ROOT) -> str | None:
    """The only lesson with a rubric, if there is exactly one (used to shape reports of unreadable files)."""
    found = sorted((root / "lessons").glob("*.rubric.yml"))
    return found[0].name[: -len(".rubric.yml")] if len(found) == 1 else None


def grade_one(path: str | Path, options: Options = Options()) -> Report:
    name = str(path)
    try:
        return _grade(name, options)
    except Exception as exc:  # the grader's own bug must not stop a batch
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return failed_report(name, [ReportError("internal", f"评分器内部错误：{detail}")], options.lesson)


def _fallback_rubric(options: Options) -> Rubric | None:
    name = options.lesson or default_lesson(options.root)
    if not name:
        return None
    try:
        return context(name, options.root).rubric
    except Exception:
        return None


def _grade(name: str, options: Options) -> Report:
    path = Path(name)
    try:
        notebook = read_notebook(path)
    except SubmissionError as exc:
        return failed_report(name, [ReportError(exc.error_id, exc.message)], options.lesson, _fallback_rubric(options))
    if notebook.lesson and not options.lesson and not LESSON_NAME.fullmatch(notebook.lesson):
        # The submission names a lesson; it never chooses files: only the instructor's --lesson may be a path.
        error = ReportError("unknown_lesson", f"metadata.course.lesson 必须是课程名（如 lesson07），不能是路径：{notebook.lesson[:80]!r}")
        return failed_report(name, [error], None, _fallback_rubric(options))
    lesson_name = options.lesson or notebook.lesson
    if not lesson_name:
        error = ReportError("missing_metadata", "笔记本缺少 metadata.course.lesson，无法确定是哪一课（可用 --lesson 指定）")
        return failed_report(name, [error], None, _fallback_rubric(options))
    try:
        ctx = context(lesson_name, options.root)
    except LessonNotFound as exc:
        return failed_report(name, [ReportError("unknown_lesson", str(exc))], lesson_name)
    except (LessonError, RubricError, KeyError) as exc:
        return failed_report(name, [ReportError("rubric", f"课程或评分标准有误：{exc}")], lesson_name)
    rubric = ctx.rubric
    errors: list[ReportError] = []
    override = override_for(options.overrides or {}, name)

    # Free text: every text criterion's answer cell.
    answers = find_answers(notebook)
    question_ids = set(ctx.lesson.question_ids)
    texts = {}
    for criterion in rubric.text_criteria:
        answer = answers.get(criterion.answer)
        if answer is None and criterion.answer in question_ids:
            errors.append(ReportError("missing_cell", f"找不到问题 {criterion.answer} 的答案单元"))
        texts[criterion.id] = score_answer(answer, criterion, ctx.references.get(criterion.answer), rubric.text,
                                           rubric.feedback, check_copy=not options.as_reference)
    hits = find_vetoes({c.answer: answers.get(c.answer) for c in rubric.text_criteria}, rubric.vetoes)

    # Code: fills -> the instructor's template -> sandbox -> checks.
    checks, code_problem = [], None
    try:
        submitted, _ = find_exercise(notebook, rubric.exercise.id, ctx.template)
    except SubmissionError as exc:
        errors.append(ReportError(exc.error_id, exc.message))
        code_problem = exc.message
    else:
        checks, code_problem, run_errors = run_code(ctx, submitted, options)
        errors.extend(run_errors)
    hidden = (ctx.suite.hidden_count, ctx.suite.hidden_calls)
    return score(rubric, name, checks=checks, code_problem=code_problem, texts=texts, vetoes=hits, errors=errors,
                 override=override, hidden=hidden)


def not_run(ctx: Context, reason: str) -> list[CheckResult]:
    """The public checks, marked as not run (so the self-check still lists what is public)."""
    asserts = [s for s in statements(ctx.template) if s.kind == "assert"]
    public = [CheckResult(f"visible.line{s.line}", False, f"未运行：{reason}", True, s.text.strip()) for s in asserts]
    public += [CheckResult(c.id, False, f"未运行：{reason}", True, c.title) for c in ctx.suite.checks if c.public]
    return public


def run_code(ctx: Context, submitted: str, options: Options):
    """(check results, why the code criteria are 0 or None, errors)."""
    rubric, feedback = ctx.rubric, ctx.rubric.feedback
    try:
        fills = extract_fills(ctx.template, submitted)
    except IntegrityError as exc:
        return not_run(ctx, "代码与模板不符"), f"{feedback['integrity']} {exc}", [ReportError("integrity", str(exc))]
    unfilled = [f for f in fills if f.empty]
    if unfilled:
        problem = feedback["unfilled"].format(lines="、".join(str(f.line) for f in unfilled))
        return not_run(ctx, "还有空白没填"), problem, []
    try:
        for fill in fills:
            check_fill(fill)
    except IntegrityError as exc:
        return not_run(ctx, "填写含不允许的写法"), f"{feedback['forbidden']} {exc}", [ReportError("forbidden", str(exc))]
    code = fill_template(ctx.template, fills)
    stmts = statements(code)
    job = ('{"statements": ' + json.dumps([{"line": s.line, "source": s.source, "kind": s.kind} for s in stmts])
           + ', "function": ' + json.dumps(rubric.exercise.function)
           + ', "call_timeout_s": ' + json.dumps(rubric.sandbox.call_timeout_s)
           + ', "calls": ' + ctx.suite.calls_json + "}")
    limits = sandbox.Limits(timeout_s=options.timeout_s or rubric.sandbox.timeout_s,
                            call_timeout_s=rubric.sandbox.call_timeout_s, memory_mb=rubric.sandbox.memory_mb)
    result = sandbox.run(job.encode(), limits)
    if result.status != "ok":
        return not_run(ctx, result.status), feedback["not_run"].format(error=result.status), [ReportError(result.status, result.message)]
    payload = result.payload
    n_calls = sum(len(c.calls) for c in ctx.suite.checks)
    if len(payload["statements"]) != len(stmts) or len(payload["calls"]) != n_calls:
        message = "the sandbox returned a different number of results than it was given"
        return not_run(ctx, "crash"), feedback["not_run"].format(error="crash"), [ReportError("crash", message)]
    outcomes = [Outcome.parse(item) for item in payload["calls"]]
    checks = visible_results(stmts, payload["statements"]) + judge_suite(ctx.suite, outcomes)
    errors = []
    if payload["memory"]:
        errors.append(ReportError("memory", f"代码运行时内存不足（上限 {limits.memory_mb} MiB）"))
    if payload["blocked"]:
        errors.append(ReportError("forbidden", "沙箱拒绝了这些操作：" + "、".join(sorted(set(payload["blocked"])))))
    return checks, None, errors


def grade_many(paths: Sequence[str], options: Options = Options(), jobs: int = 2,
               progress: Callable[[Report], None] | None = None) -> list[Report]:
    """One report per path, in the order given."""
    reports: list[Report | None] = [None] * len(paths)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(grade_one, p, options): n for n, p in enumerate(paths)}
        for future in as_completed(futures):
            n = futures[future]
            reports[n] = future.result()
            if progress:
                progress(reports[n])
    return reports


"""Grade submissions: load → integrity / fills → sandbox → checks → text → vetoes → score.

The engine is generic: everything about one lesson comes from its files under `lessons/`
(`<name>.qmd`, `<name>.rubric.yml`, `<name>.checks.py`, see grader/paths.py). A lesson may have
several exercises; each is found, filled into its own template and run in its own sandbox process.

`grade_one` never raises: anything unexpected becomes an `internal` error in the report (with the
traceback for the instructor), so a batch always has one report per submission. `grade_many` runs
submissions concurrently (threads that each drive one sandbox process).
"""
from __future__ import annotations

import json
import re
import threading
import traceback
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Callable, Sequence

from . import messages, sandbox
from .checks import (ChecksError, CheckResult, HiddenContext, Outcome, Suite, build_suite, judge_suite, mixed_seed,
                     visible_results)
from .integrity import IntegrityError, check_fill, extract_fills, fill_template, statements
from .lesson import Lesson, LessonError, load_lesson
from .overrides import override_for
from .paths import LESSON_NAME, ROOT, LessonFiles, files_for_qmd, lesson_files, lesson_names, student_of
from .rubric import Exercise, Rubric, RubricError, load_rubric
from .score import Report, ReportError, failed_report, score
from .submission import SubmissionError, find_answers, find_exercise, read_notebook
from .text import collusion, score_answer
from .vetoes import argued_beside_names, find_vetoes, from_misconceptions, merge_linked, veto_doubts


@dataclass(frozen=True)
class ExerciseContext:
    """One exercise of a lesson: its rubric entry, the instructor's template and its hidden checks."""

    exercise: Exercise
    template: str
    suite: Suite
    search_path: tuple[str, ...]     # directories the sandbox needs for the exercise's declared imports


# An f-string's replacement field ({worst:.1e}): what a check cell prints there is a number, not its label.
_PLACEHOLDER = re.compile(r"\{[^{}\n]*\}")


@dataclass(frozen=True)
class Context:
    """Everything about one lesson the grader needs, built once per process."""

    lesson: Lesson
    rubric: Rubric
    files: LessonFiles
    exercises: tuple[ExerciseContext, ...]
    references: dict          # answer course_id -> reference text

    @cached_property
    def prose(self) -> str:
        """What the student reads (the Markdown: questions, instructions; the check cells, whose printed labels are
        their output, so an f-string's replacement fields are left out): an answer that pastes it back asserts
        nothing."""
        return "\n".join(_PLACEHOLDER.sub(" ", c.source) if c.role == "check" else c.source
                         for c in self.lesson.student_cells() if c.kind == "markdown" or c.role == "check")

    @property
    def template(self) -> str:       # the first scored exercise's (single-exercise lessons)
        return self.exercises[0].template


@dataclass(frozen=True)
class Options:
    lesson: str | None = None          # overrides metadata.course.lesson (a name, or an instructor's .qmd path)
    timeout_s: float | None = None     # wall clock per exercise run (default: the rubric's)
    overrides: dict | None = None      # see grader/overrides.py
    as_reference: bool = False         # answers are the lesson's references: no copy check
    root: Path = ROOT                  # where the trusted lessons are


class LessonNotFound(Exception):
    pass


_contexts: dict = {}
_contexts_lock = threading.Lock()


def resolve_lesson(name: str, root: Path = ROOT) -> LessonFiles:
    """A lesson name (looked up among the trusted lessons), or an instructor's path to a .qmd."""
    if name.endswith(".qmd"):
        return files_for_qmd(name)
    try:
        return lesson_files(name, root)
    except ValueError:
        raise LessonNotFound(f"不是合法的课程名：{name!r}") from None


def _exercise_context(files: LessonFiles, lesson: Lesson, rubric: Rubric, exercise: Exercise) -> ExerciseContext:
    template = lesson.exercise(exercise.id).code
    hidden = HiddenContext(exercise.id, exercise.hidden, mixed_seed(rubric.seed))
    suite = build_suite(files.checks, exercise.checks, hidden)
    try:
        path = sandbox.import_search_path(exercise.imports)
    except ModuleNotFoundError as exc:
        raise ChecksError(f"exercise {exercise.id!r}: {exc}") from None
    return ExerciseContext(exercise, template, suite, path)


def context(name: str, root: Path = ROOT) -> Context:
    files = resolve_lesson(name, root)
    key = (str(files.qmd.resolve()), str(files.rubric.resolve()))
    with _contexts_lock:
        if key not in _contexts:
            if not files.exist():
                known = "、".join(lesson_names(root)) or "无"
                raise LessonNotFound(messages.UNKNOWN_LESSON.format(name=name, known=known))
            lesson = load_lesson(files.qmd)
            rubric = load_rubric(files.rubric)
            references = {c.course_id: c.source for c in lesson.find("reference")}
            ordered = sorted(rubric.exercises, key=lambda e: not e.scored)   # scored exercises first
            exercises = tuple(_exercise_context(files, lesson, rubric, e) for e in ordered)
            _contexts[key] = Context(lesson, rubric, files, exercises, references)
        return _contexts[key]


def default_lesson(root: Path = ROOT) -> str | None:
    """The only lesson with a rubric, if there is exactly one (used to shape reports of unreadable files)."""
    names = lesson_names(root)
    return names[0] if len(names) == 1 else None


ANSWER_LIMIT = 8000          # characters of each answer kept in the report (for the review page)


def _with_veto_doubt(result, doubt):
    """The text result flagged for review, with the doubtful veto's sentence in the instructor's evidence."""
    evidence = dict(result.evidence)
    evidence["veto_doubts"] = list(evidence.get("veto_doubts", [])) + [{"id": doubt.id, "sentence": doubt.evidence}]
    reason = "; ".join(r for r in (result.confidence_reason, f"possible {doubt.id}: read the quoted sentence") if r)
    return replace(result, needs_review=True, evidence=evidence, confidence_reason=reason,
                   flags=tuple(dict.fromkeys(result.flags + ("veto_doubt",))))


def _truncated(text: str) -> str:
    return text if len(text) <= ANSWER_LIMIT else text[:ANSWER_LIMIT] + f"\n…［已截断，原文 {len(text)} 字符］"


def grade_one(path: str | Path, options: Options = Options()) -> Report:
    name = str(path)
    try:
        report = _grade(name, options)
    except Exception as exc:  # the grader's own bug must not stop a batch
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        error = ReportError("internal", messages.INTERNAL.format(detail=detail[:200]), traceback.format_exc(limit=12))
        report = failed_report(name, [error], options.lesson)
    return replace(report, student=student_of(Path(name)))


def _fallback_rubric(options: Options, lesson: str | None = None) -> Rubric | None:
    name = options.lesson or lesson or default_lesson(options.root)
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
        error = ReportError("unknown_lesson", messages.UNKNOWN_LESSON_PATH.format(value=notebook.lesson[:80]))
        return failed_report(name, [error], None, _fallback_rubric(options))
    lesson_name = options.lesson or notebook.lesson
    if not lesson_name:
        error = ReportError("missing_metadata", messages.MISSING_METADATA)
        return failed_report(name, [error], None, _fallback_rubric(options))
    try:
        ctx = context(lesson_name, options.root)
    except LessonNotFound as exc:
        return failed_report(name, [ReportError("unknown_lesson", str(exc))], lesson_name)
    except (LessonError, RubricError, ChecksError, KeyError) as exc:
        return failed_report(name, [ReportError("rubric", messages.BAD_LESSON.format(error=exc))], lesson_name)
    rubric = ctx.rubric
    errors: list[ReportError] = []
    warnings: list[str] = []
    override = override_for(options.overrides or {}, name)

    # Free text: every text criterion's answer cell.
    answers = find_answers(notebook)
    question_ids = set(ctx.lesson.question_ids)
    texts = {}
    prose = ctx.prose
    for criterion in rubric.text_criteria:
        answer = answers.get(criterion.answer)
        if answer is None and criterion.answer in question_ids:
            errors.append(ReportError("missing_cell", messages.MISSING_ANSWER_CELL.format(answer=criterion.answer)))
        texts[criterion.id] = score_answer(answer, criterion, ctx.references.get(criterion.answer), rubric.text,
                                           rubric.feedback, check_copy=not options.as_reference, lesson_text=prose)
    answered = {c.answer: answers.get(c.answer) for c in rubric.text_criteria}
    hits = find_vetoes(answered, rubric.vetoes, rubric.feedback)
    # Borderline veto hits (hedged, quoted, contrasting): not vetoes, but a person should read that sentence.
    doubts = veto_doubts(answered, rubric.vetoes, rubric.feedback)
    # A stated misconception that is also a veto (rubric `veto:`) raises it, unless the veto's own rules did.
    hits, doubts = merge_linked(hits, doubts, from_misconceptions(rubric.text_criteria, texts, rubric.vetoes))
    # Names beside an argument that earned full marks are not names in place of one: no doubt for a person.
    doubts = argued_beside_names(doubts, rubric.text_criteria, texts, rubric.vetoes)
    for doubt in doubts:
        for criterion in rubric.text_criteria:
            if criterion.answer == doubt.answer:
                texts[criterion.id] = _with_veto_doubt(texts[criterion.id], doubt)
    answer_texts = {c.answer: _truncated(answers[c.answer]) for c in rubric.text_criteria if answers.get(c.answer)}

    # Code: for each exercise, fills -> the instructor's template -> sandbox -> checks.
    checks: list[CheckResult] = []
    problems: dict[str, str | None] = {}
    used: set[str] = set()            # cells already graded as another exercise
    for ex in ctx.exercises:
        optional = not ex.exercise.scored
        try:
            submitted, how = find_exercise(notebook, ex.exercise.id, ex.template)
            if how == "similarity" and submitted in used:
                raise SubmissionError("missing_cell", messages.MISSING_EXERCISE.format(exercise=ex.exercise.id))
        except SubmissionError as exc:
            if optional:
                problems[ex.exercise.id] = messages.OPTIONAL_NOT_ATTEMPTED
                continue
            errors.append(ReportError(exc.error_id, exc.message))
            problems[ex.exercise.id] = exc.message
            continue
        if how == "similarity" and optional and not _matches_template(ex, submitted):
            # A challenge found only by resemblance and not even its template: nobody attempted it.
            problems[ex.exercise.id] = messages.OPTIONAL_NOT_ATTEMPTED
            continue
        used.add(submitted)
        if how == "similarity":
            warnings.append(messages.FOUND_BY_SIMILARITY.format(exercise=ex.exercise.id))
        run = run_code(ctx, ex, submitted, options)
        problem = run.problem
        if optional and problem and not run.errors and _untouched(ex, submitted):
            problem = messages.OPTIONAL_NOT_ATTEMPTED
        checks += run.checks
        problems[ex.exercise.id] = problem
        errors.extend(run.errors)
    hidden = (sum(e.suite.hidden_count for e in ctx.exercises), sum(e.suite.hidden_calls for e in ctx.exercises))
    report = score(rubric, name, checks=checks, code_problem=problems, texts=texts, vetoes=hits, errors=errors,
                   override=override, hidden=hidden, warnings=tuple(warnings), doubts=doubts)
    return replace(report, answers=answer_texts)


def _matches_template(ex: ExerciseContext, submitted: str) -> bool:
    try:
        extract_fills(ex.template, submitted)
    except IntegrityError:
        return False
    return True


def _untouched(ex: ExerciseContext, submitted: str) -> bool:
    """True when every blank of the exercise is still a blank (a challenge nobody started)."""
    try:
        return all(f.empty for f in extract_fills(ex.template, submitted))
    except IntegrityError:
        return False


def not_run(ex: ExerciseContext, reason: str) -> list[CheckResult]:
    """The public checks, marked as not run (so the self-check still lists what is public)."""
    eid = ex.exercise.id
    asserts = [s for s in statements(ex.template) if s.kind == "assert"]
    public = [CheckResult(f"visible.line{s.line}", False, f"未运行：{reason}", True, s.text.strip(), eid) for s in asserts]
    public += [CheckResult(c.id, False, f"未运行：{reason}", True, c.title, eid) for c in ex.suite.checks if c.public]
    return public


@dataclass(frozen=True)
class Job:
    """What one sandbox run executes (see grader/harness.py): the filled template's statements, the
    function to call and the suite's calls."""

    exercise: ExerciseContext
    statements: tuple
    call_timeout_s: float
    run_budget_s: float = 1e9      # calls after this much time are skipped (under the wall-clock limit)

    def to_bytes(self) -> bytes:
        ex = self.exercise
        head = {"protocol": sandbox.PROTOCOL, "function": ex.exercise.function, "call_timeout_s": self.call_timeout_s,
                "run_budget_s": self.run_budget_s,
                "imports": list(ex.exercise.imports), "path": list(ex.search_path),
                "statements": [{"line": s.line, "source": s.source, "kind": s.kind} for s in self.statements]}
        # The calls were serialized once per process (they reach megabytes for large vocabularies).
        return (json.dumps(head)[:-1] + ', "calls": ' + ex.suite.calls_json + "}").encode()


@dataclass(frozen=True)
class CodeRun:
    """One exercise's code, graded: its check results, why its code criteria are 0 (None when they are
    scored from the checks), and the errors to report."""

    checks: list
    problem: str | None
    errors: list


def run_code(ctx: Context, ex: ExerciseContext, submitted: str, options: Options) -> CodeRun:
    rubric, feedback = ctx.rubric, ctx.rubric.feedback
    try:
        fills = extract_fills(ex.template, submitted)
    except IntegrityError as exc:
        return CodeRun(not_run(ex, "代码与模板不符"), f"{feedback['integrity']} {exc}", [ReportError("integrity", str(exc))])
    unfilled = [f for f in fills if f.empty]
    if unfilled:
        problem = feedback["unfilled"].format(lines="、".join(str(f.line) for f in unfilled))
        return CodeRun(not_run(ex, "还有空白没填"), problem, [])
    try:
        for fill in fills:
            check_fill(fill)
    except IntegrityError as exc:
        return CodeRun(not_run(ex, "填写含不允许的写法"), f"{feedback['forbidden']} {exc}", [ReportError("forbidden", str(exc))])
    limits = sandbox.Limits(timeout_s=options.timeout_s or rubric.sandbox.timeout_s,
                            call_timeout_s=rubric.sandbox.call_timeout_s, memory_mb=rubric.sandbox.memory_mb)
    # Leave time for the slowest call and for sending the results back before the wall clock.
    budget = max(0.5, limits.timeout_s * 0.75 - limits.call_timeout_s)
    job = Job(ex, tuple(statements(fill_template(ex.template, fills))), rubric.sandbox.call_timeout_s, budget)
    result = sandbox.run(job.to_bytes(), limits)
    if result.status != "ok":
        message = messages.SANDBOX.get(result.status, messages.SANDBOX["crash"]).format(
            timeout_s=limits.timeout_s, memory_mb=limits.memory_mb)
        detail = result.message + (f"\n{result.stderr}" if result.stderr else "")
        return CodeRun(not_run(ex, result.status), feedback["not_run"].format(error=result.status),
                       [ReportError(result.status, message, detail)])
    payload = result.payload
    if len(payload["statements"]) != len(job.statements) or len(payload["calls"]) != ex.suite.call_count:
        error = ReportError("crash", messages.RESULT_MISMATCH, "statement or call count differs")
        return CodeRun(not_run(ex, "crash"), feedback["not_run"].format(error="crash"), [error])
    outcomes = [Outcome.parse(item) for item in payload["calls"]]
    checks = visible_results(job.statements, payload["statements"], ex.exercise.id) + judge_suite(ex.suite, outcomes)
    errors = [ReportError("internal", messages.JUDGE_INTERNAL.format(check=c.id), c.internal) for c in checks if c.internal]
    if payload["memory"]:
        errors.append(ReportError("memory", messages.SANDBOX["memory"].format(memory_mb=limits.memory_mb, timeout_s=0)))
    if payload["blocked"]:
        errors.append(ReportError("forbidden", messages.SANDBOX_BLOCKED.format(events="、".join(sorted(set(payload["blocked"]))))))
    return CodeRun(checks, None, errors)


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
    return mark_collusion(_shape_unreadable(reports, options), options)


def mark_collusion(reports: list[Report], options: Options = Options()) -> list[Report]:
    """Compare the answers of one batch with each other (per lesson and question); a pair above the
    rubric's `collusion_threshold` is listed on both reports, which are then marked for review."""
    by_lesson: dict[str, list[int]] = {}
    for n, r in enumerate(reports):
        if r.lesson and r.answers:
            by_lesson.setdefault(r.lesson, []).append(n)
    found: dict[int, list[dict]] = {}
    for lesson, indices in by_lesson.items():
        if len(indices) < 2:
            continue
        try:
            settings = context(lesson, options.root).rubric.text
        except Exception:       # an unknown lesson was already reported as an error
            continue
        pairs = collusion({n: reports[n].answers for n in indices}, settings.copy_ngram, settings.collusion_threshold,
                          settings.collusion_min_chars)
        for pair in pairs:
            for me, other in ((pair["a"], pair["b"]), (pair["b"], pair["a"])):
                found.setdefault(me, []).append({"answer": pair["answer"], "other": reports[other].submission,
                                                 "similarity": pair["similarity"]})
    out = list(reports)
    for n, items in found.items():
        out[n] = replace(out[n], collusion=tuple(items), needs_review=True)
    return out


def _shape_unreadable(reports: list[Report], options: Options) -> list[Report]:
    """Give reports that have no lesson (unreadable notebooks) the batch's lesson, so every row has the
    same criteria and maximum (a batch of one lesson is the normal case, even with several lessons)."""
    if options.lesson:
        return reports
    counts = Counter(r.lesson for r in reports if r.lesson and r.max_score)
    if not counts:
        return reports
    batch_lesson = counts.most_common(1)[0][0]
    rubric = None
    out = []
    for r in reports:
        if r.max_score == 0 and r.lesson is None and r.errors:
            rubric = rubric or _fallback_rubric(options, batch_lesson)
            if rubric is not None:
                r = failed_report(r.submission, list(r.errors), batch_lesson, rubric)
        out.append(r)
    return out

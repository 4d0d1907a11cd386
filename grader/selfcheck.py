"""The student release's self-check: `python -m grader check NOTEBOOK` in a repository made by
`python -m grader release` (grader/release.py).

The release has no hidden checks and no text rubric, so this runs only what its own files allow,
and says so:

1. find each exercise cell by its metadata (else: say how to fix the notebook);
2. template integrity and the fill whitelist (grader/integrity.py), unfilled blanks;
3. the exercise's visible assertions, run in the same sandbox as grading (grader/sandbox.py and
   grader/harness.py; the job's `calls` list is empty: no hidden inputs exist here);
4. missing or empty answer cells;
5. then, plainly, that hidden checks and text scoring run at grading time, with the points of each
   part read from the *public* rubric summary the release writes (`lessons/<name>.rubric.yml`:
   criteria ids, titles, points, the pass rule; see `PUBLIC_KEYS` in grader/release.py).

The summary uses the instructor rubric's own key names, so this module also runs in the instructor
repository (where the file is the full rubric and only these keys are read). The exercise templates
come from the release's lesson source, parsed with grader/lesson.py's scanner *without* the check
that every exercise has a solution (the release has none, on purpose).
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from . import lesson as lesson_parser
from . import escape, messages, sandbox
from .paths import LESSON_NAME
from .integrity import IntegrityError, check_fill, extract_fills, fill_template, statements
from .lesson import Lesson, LessonError
from .submission import SubmissionError, find_answers, find_exercise, read_notebook

ROOT = Path(__file__).resolve().parents[1]
USAGE_ERROR = 2


class SelfCheckError(Exception):
    """A usage problem (no such notebook, no such lesson, an unreadable summary): exit 2."""


# ---------------------------------------------------------------------------------------------
# The public rubric summary


@dataclass(frozen=True)
class PublicExercise:
    id: str
    function: str
    scored: bool = True
    title: str = ""
    imports: tuple[str, ...] = ()


@dataclass(frozen=True)
class PublicCriterion:
    id: str
    title: str
    points: int
    kind: str                      # "code" or "text"
    exercise: str | None = None    # code criteria
    answer: str | None = None      # text criteria: the answer cell's course_id


@dataclass(frozen=True)
class PublicRubric:
    lesson: str
    max_score: int
    min_score: int
    require: tuple[str, ...]
    no_vetoes: bool
    exercises: tuple[PublicExercise, ...]
    criteria: tuple[PublicCriterion, ...]
    vetoes: tuple[tuple[str, str], ...]     # (id, title)
    limits: sandbox.Limits

    def criteria_for(self, exercise_id: str) -> list[PublicCriterion]:
        return [c for c in self.criteria if c.kind == "code" and c.exercise == exercise_id]

    @property
    def text_criteria(self) -> list[PublicCriterion]:
        return [c for c in self.criteria if c.kind == "text"]

    def scored(self, criterion: PublicCriterion) -> bool:
        if criterion.kind != "code":
            return True
        return next((e.scored for e in self.exercises if e.id == criterion.exercise), True)


def _get(data: dict, key: str, kind, where: str, path: Path, default=...):
    if key not in data:
        if default is ...:
            raise SelfCheckError(f"{path}: {where}{key}: missing")
        return default
    value = data[key]
    if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
        raise SelfCheckError(f"{path}: {where}{key}: expected {getattr(kind, '__name__', kind)}")
    return value


def load_public_rubric(path: Path) -> PublicRubric:
    """The public keys of `lessons/<name>.rubric.yml` (the release's summary or the full rubric)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SelfCheckError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise SelfCheckError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise SelfCheckError(f"{path}: expected a mapping")
    max_score = _get(data, "max_score", int, "", path)
    rule = _get(data, "pass", dict, "", path, {})
    exercises = []
    for n, item in enumerate(_get(data, "exercises", list, "", path)):
        where = f"exercises[{n}]."
        if not isinstance(item, dict):
            raise SelfCheckError(f"{path}: {where[:-1]}: expected a mapping")
        exercises.append(PublicExercise(_get(item, "id", str, where, path), _get(item, "function", str, where, path),
                                        _get(item, "scored", bool, where, path, True), _get(item, "title", str, where, path, ""),
                                        tuple(str(m) for m in _get(item, "imports", list, where, path, []))))
    if not exercises:
        raise SelfCheckError(f"{path}: exercises: a lesson needs at least one exercise")
    criteria = []
    for n, item in enumerate(_get(data, "criteria", list, "", path)):
        where = f"criteria[{n}]."
        if not isinstance(item, dict):
            raise SelfCheckError(f"{path}: {where[:-1]}: expected a mapping")
        kind = _get(item, "kind", str, where, path)
        criteria.append(PublicCriterion(
            _get(item, "id", str, where, path), _get(item, "title", str, where, path), _get(item, "points", int, where, path),
            kind, _get(item, "exercise", str, where, path, exercises[0].id) if kind == "code" else None,
            _get(item, "answer", str, where, path) if kind == "text" else None))
    vetoes = tuple((_get(v, "id", str, "vetoes[].", path), _get(v, "title", str, "vetoes[].", path))
                   for v in _get(data, "vetoes", list, "", path, []) if isinstance(v, dict))
    box = _get(data, "sandbox", dict, "", path, {})
    defaults = sandbox.Limits()
    limits = sandbox.Limits(timeout_s=float(box.get("timeout_s", defaults.timeout_s)),
                            call_timeout_s=float(box.get("call_timeout_s", defaults.call_timeout_s)),
                            memory_mb=int(box.get("memory_mb", defaults.memory_mb)))
    return PublicRubric(
        lesson=_get(data, "lesson", str, "", path), max_score=max_score,
        min_score=_get(rule, "min_score", int, "pass.", path, _get(data, "pass_score", int, "", path)),
        require=tuple(_get(rule, "require", list, "pass.", path, [])), no_vetoes=_get(rule, "no_vetoes", bool, "pass.", path, True),
        exercises=tuple(exercises), criteria=tuple(criteria), vetoes=vetoes, limits=limits)


def student_lesson(path: Path, text: str | None = None) -> Lesson:
    """The lesson's cells as the student edition has them, without `load_lesson`'s rule that each
    exercise has a solution and each question a reference (the release ships neither).
    `text`: the source, when it is not (yet) the file at `path`."""
    text = path.read_text(encoding="utf-8") if text is None else text
    return lesson_parser.parse_lesson(text, path, validate=False)


# ---------------------------------------------------------------------------------------------
# The check


@dataclass(frozen=True)
class Line:
    ok: bool | None        # True ✓, False ✗, None: information
    text: str


@dataclass
class Section:
    title: str
    lines: list[Line] = field(default_factory=list)
    required: bool = True      # a failure here makes the self-check fail (False: an optional exercise)

    def add(self, ok: bool | None, text: str) -> None:
        self.lines.append(Line(ok, text))

    @property
    def failed(self) -> bool:
        return self.required and any(line.ok is False for line in self.lines)


@dataclass
class SelfCheck:
    notebook: str
    sections: list[Section]
    closing: list[str]
    usable: bool = True        # False: the notebook could not be read at all

    @property
    def ok(self) -> bool:
        return self.usable and not any(s.failed for s in self.sections)


def _job(exercise: PublicExercise, stmts, limits: sandbox.Limits) -> dict:
    try:
        path = sandbox.import_search_path(exercise.imports)
    except ModuleNotFoundError as exc:
        raise SelfCheckError(f"{exc}: pip install -r requirements.txt") from None
    return {"protocol": sandbox.PROTOCOL, "function": exercise.function, "call_timeout_s": limits.call_timeout_s,
            "imports": list(exercise.imports), "path": list(path),
            "statements": [{"line": s.line, "source": s.source, "kind": s.kind} for s in stmts], "calls": []}


def _untouched(template: str, submitted: str) -> bool:
    try:
        return all(f.empty for f in extract_fills(template, submitted))
    except IntegrityError:
        return False


def check_exercise(notebook, exercise: PublicExercise, template: str, limits: sandbox.Limits,
                   timeout_s: float | None = None) -> Section:
    title = exercise.title or exercise.id
    section = Section(f"练习 {title}" + ("" if exercise.scored else "（选做，不计入总分）"), required=exercise.scored)
    try:
        submitted, how = find_exercise(notebook, exercise.id, template)
    except SubmissionError as exc:
        section.add(None if not exercise.scored else False, exc.message)
        return section
    if how != "metadata":
        section.add(False, f"练习单元 {exercise.id!r} 的元数据（course_role / course_id）丢失了：这里按内容找到了最像模板的代码单元，"
                           "但评分时这样找到的单元要由老师人工确认。修复：用 `python -m grader start` 重新创建一份副本，"
                           "把你的填空抄回新副本的练习单元。")
    if not exercise.scored and _untouched(template, submitted):
        section.add(None, messages.OPTIONAL_NOT_ATTEMPTED)
        return section
    try:
        fills = extract_fills(template, submitted)
    except IntegrityError as exc:
        section.add(False, f"练习单元中除空白以外的代码被改动（评分时代码项全部记 0 分）：{exc}")
        return section
    section.add(True, "除空白以外的代码与模板一致")
    unfilled = [f for f in fills if f.empty]
    if unfilled:
        section.add(False, f"还有 {len(unfilled)} 个空白没填（第 {'、'.join(str(f.line) for f in unfilled)} 行）")
        return section
    try:
        for fill in fills:
            check_fill(fill)
    except IntegrityError as exc:
        section.add(False, f"填写含不允许的写法（评分时代码项全部记 0 分）：{exc}")
        return section
    section.add(True, f"{len(fills)} 处填写都是允许的表达式")
    stmts = statements(fill_template(template, fills))
    if timeout_s:
        limits = sandbox.Limits(timeout_s=timeout_s, call_timeout_s=limits.call_timeout_s, memory_mb=limits.memory_mb)
    result = sandbox.run(_job(exercise, stmts, limits), limits)
    if result.status != "ok":
        section.add(False, "可见断言没有运行完：" + messages.SANDBOX.get(result.status, messages.SANDBOX["crash"]).format(
            timeout_s=limits.timeout_s, memory_mb=limits.memory_mb))
        return section
    for stmt, item in zip(stmts, result.payload["statements"]):
        if item["ok"] and stmt.kind != "assert":
            continue
        if item["ok"]:
            section.add(True, f"第 {stmt.line} 行 `{stmt.text.strip()}`")
        else:
            err = item["error"]
            section.add(False, f"第 {stmt.line} 行 `{stmt.text.strip()}`：{err['type']}" + (f"：{err['message']}" if err["message"] else ""))
    if result.payload["blocked"]:
        section.add(False, messages.SANDBOX_BLOCKED.format(events="、".join(sorted(set(result.payload["blocked"])))))
    return section


def check_answers(notebook, rubric: PublicRubric, question_ids: set) -> Section:
    section = Section("文字题的作答单元")
    answers = find_answers(notebook)
    for criterion in rubric.text_criteria:
        answer = answers.get(criterion.answer)
        if answer is None:
            section.add(False, f"{criterion.title}：" + (messages.MISSING_ANSWER_CELL.format(answer=criterion.answer)
                                                       if criterion.answer in question_ids else "笔记本里没有这道题的作答单元"))
        elif not answer.strip():
            section.add(False, f"{criterion.title}：还没有作答（作答单元为空或仍是占位符）")
        else:
            section.add(True, f"{criterion.title}：已作答（{len(answer)} 个字符）")
    return section


def closing(rubric: PublicRubric) -> list[str]:
    """What the self-check cannot tell, with the points of each part (from the public summary)."""
    code = [c for c in rubric.criteria if c.kind == "code" and rubric.scored(c)]
    text = rubric.text_criteria
    out = ["自查只运行了发布仓库里有的检查：练习单元的完整性、填写规则、可见断言和作答单元是否为空。",
           "隐藏检查（用不公开的输入调用你的函数）和文字题的评分只在老师评分时运行，所以这里不给分数。各部分的分值："]
    for c in code:
        out.append(f"  · {c.title}（{c.id}）：{c.points} 分——代码项，隐藏检查在评分时运行（上面的可见断言只是其中一部分）")
    for c in text:
        out.append(f"  · {c.title}（{c.id}）：{c.points} 分——评分时按要点给分")
    optional = [c for c in rubric.criteria if not rubric.scored(c)]
    for c in optional:
        out.append(f"  · {c.title}（{c.id}）：{c.points} 分，选做，单独报告，不计入总分")
    rule = f"通过条件：总分至少 {rubric.min_score}/{rubric.max_score}"
    if rubric.require:
        titles = {c.id: c.title for c in rubric.criteria}
        rule += "；" + "、".join(f"「{titles.get(r, r)}」" for r in rubric.require) + "必须拿满分"
    if rubric.no_vetoes and rubric.vetoes:
        rule += "；不能触发任何一条一票否决规则（" + "、".join(title for _, title in rubric.vetoes) + "）"
    out.append(rule + "。")
    return out


def self_check(path: Path, root: Path = ROOT, timeout_s: float | None = None) -> SelfCheck:
    if not path.is_file():
        raise SelfCheckError(f"找不到笔记本 {path}（先运行 python -m grader start 创建你自己的副本）")
    try:
        notebook = read_notebook(path)
    except SubmissionError as exc:
        return SelfCheck(str(path), [Section("笔记本", [Line(False, f"无法读取（{exc.error_id}）：{exc.message}")])], [], usable=False)
    name = notebook.lesson
    if not name or not LESSON_NAME.fullmatch(name):
        return SelfCheck(str(path), [Section("笔记本", [Line(False, messages.MISSING_METADATA if not name
                                                           else messages.UNKNOWN_LESSON_PATH.format(value=name[:80]))])],
                         [], usable=False)
    qmd, summary = root / "lessons" / f"{name}.qmd", root / "lessons" / f"{name}.rubric.yml"
    if not (qmd.is_file() and summary.is_file()):
        known = "、".join(sorted(p.name[:-len(".rubric.yml")] for p in (root / "lessons").glob("*.rubric.yml"))) or "无"
        raise SelfCheckError(messages.UNKNOWN_LESSON.format(name=name, known=known))
    rubric = load_public_rubric(summary)
    try:
        lesson = student_lesson(qmd)
    except LessonError as exc:
        raise SelfCheckError(str(exc)) from None
    templates = {c.course_id: c.code for c in lesson.find("exercise")}
    sections = []
    for exercise in rubric.exercises:
        if exercise.id not in templates:
            raise SelfCheckError(f"{qmd}: no exercise cell {exercise.id!r} (named in {summary.name})")
        sections.append(check_exercise(notebook, exercise, templates[exercise.id], rubric.limits, timeout_s))
    sections.append(check_answers(notebook, rubric, set(lesson.question_ids)))
    return SelfCheck(str(path), sections, closing(rubric))


def _safe(text: str) -> str:
    """Student-controlled text without terminal control sequences (grader/escape.py)."""
    return escape.terminal(text)


def render(result: SelfCheck) -> str:
    marks = {True: "✓", False: "✗", None: "·"}
    out = [f"自查：{_safe(result.notebook)}"]
    for section in result.sections:
        out.append("")
        out.append(section.title + "：")
        out += [f"  {marks[line.ok]} {_safe(line.text)}" for line in section.lines]
    if result.closing:
        out.append("")
        out += result.closing
    out.append("")
    if not result.usable:
        out.append("结果：这份笔记本无法自查，评分时也无法评分。")
    elif result.ok:
        out.append("结果：本地能做的检查全部通过。提交后，老师的评分器还会运行隐藏检查并给文字题打分。")
    else:
        out.append("结果：还有 ✗ 标出的问题；改好、保存（Ctrl+S）后再自查。")
    return "\n".join(out)


def main(args) -> int:
    """`python -m grader check NOTEBOOK [--timeout S]` in the release: exit 0 all local checks pass,
    1 something to fix, 2 usage."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
    if not args.notebook:
        print("error: 请给出要自查的笔记本，例如：python -m grader check work/lesson07.ipynb", file=sys.stderr)
        return USAGE_ERROR
    try:
        result = self_check(Path(args.notebook), Path(getattr(args, "root", None) or ROOT), args.timeout)
    except SelfCheckError as exc:
        print(f"error: {_safe(str(exc))}", file=sys.stderr)
        return USAGE_ERROR
    print(render(result))
    path = Path(args.notebook)
    if path.parent.name == "exercises" and path.suffix == ".ipynb":
        print(f"提示：{path} 是发布时生成的空白练习，下一次发布会覆盖它；请在自己的副本里作答："
              f"python -m grader start {path.stem} --name <你的名字>", file=sys.stderr)
    if getattr(args, "json", None):
        Path(args.json).write_text(json.dumps(_as_dict(result), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 0 if result.ok else 1


def _as_dict(result: SelfCheck) -> dict:
    return {"notebook": result.notebook, "ok": result.ok, "usable": result.usable,
            "sections": [{"title": s.title, "required": s.required,
                          "lines": [{"ok": line.ok, "text": line.text} for line in s.lines]} for s in result.sections]}

"""Report files: JSON (the contract), Markdown (fits $GITHUB_STEP_SUMMARY), JUnit XML (one test case
per criterion), CSV (a gradebook row per submission) and Gradescope's results.json.

- Every writer renders the whole text first; `write_report` then replaces the target atomically
  with mode 0666 minus the umask (grader/fsutil.py), so a reader never sees half a report and a TA
  can read what an instructor wrote.
- JSON: `{"run": {...}, "results": [report, ...]}`. `results` is what it always was (keys are added,
  never renamed), so old readers keep working; `run` is a sibling with the run's metadata:
  `grader_version`, `grader_sha256` (the grader's own source files), `graded_at` (UTC, ISO 8601),
  `lesson` and `rubric_sha256` (null when a batch mixes lessons) and `rubrics` ({lesson: sha256}).
  Each result also carries `student` (see `student_of`) and `status`.
- Every student-controlled string is escaped for its format (grader/escape.py); the Markdown
  summary truncates long text and stays under GitHub's 1 MiB step-summary limit, listing
  submissions that wait for a person (`pending_review`) first.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Mapping, Sequence

from . import escape, paths
from .fsutil import write_atomic
from .score import Report

PACKAGE = "llm-inference-course"
SUMMARY_BUDGET = 900_000     # bytes; GitHub drops a step summary over 1 MiB (1,048,576 bytes)
CELL_LIMIT = 600             # characters of student text per Markdown table cell
EVIDENCE_LIMIT = 300
PATH_LIMIT = 200


class ReportWriteError(OSError):
    pass


def write_report(path: str | Path, text: str) -> None:
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise ReportWriteError(f"cannot write {path}: {exc.strerror or exc}") from None


# --- who and what -------------------------------------------------------------------------------

def student_of(report: Report) -> str:
    """The report's own `student`, else the rule of grader/paths.py for its path."""
    return getattr(report, "student", None) or paths.student_of(report.submission)


def status_of(report: Report) -> str:
    """"passed" | "failed" | "pending_review" (the report's own, once the scorer sets it)."""
    own = getattr(report, "status", None)
    if own:
        return own
    return "passed" if report.passed else "failed"


def status_label(report: Report) -> str:
    status = status_of(report)
    if status == "pending_review":
        return "⏳ 待人工复核"
    if report.errors:
        return "⚠️ 未能评分" if not report.criteria or report.score == 0 else "❌ 未通过（有错误）"
    return "✅ 通过" if status == "passed" else "❌ 未通过"


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def grader_version() -> str:
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return "unknown"


def grader_sha256() -> str:
    """One digest of the grader's own source files (names and contents), so a run names its code."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def run_metadata(reports: Sequence[Report], rubric_files: Mapping[str, Path], graded_at: datetime | None = None) -> dict:
    """The JSON report's `run` object. `rubric_files`: lesson name -> the rubric it was graded with."""
    rubrics = {name: _sha256(Path(path)) for name, path in sorted(rubric_files.items())}
    lessons = sorted({r.lesson for r in reports if r.lesson})
    one = lessons[0] if len(lessons) == 1 else None
    when = (graded_at or datetime.now(timezone.utc)).astimezone(timezone.utc)
    return {"grader_version": grader_version(), "grader_sha256": grader_sha256(),
            "graded_at": when.isoformat(timespec="seconds").replace("+00:00", "Z"),
            "lesson": one, "rubric_sha256": rubrics.get(one) if one else None, "rubrics": rubrics,
            "submissions": len(reports)}


# --- JSON ---------------------------------------------------------------------------------------

def result_dict(report: Report) -> dict:
    out = report.to_dict()
    out["student"] = out.get("student") or student_of(report)
    out.setdefault("status", status_of(report))
    return out


def to_json(reports: Sequence[Report], run: dict | None = None) -> str:
    data = {"run": run if run is not None else run_metadata(reports, {}), "results": [result_dict(r) for r in reports]}
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


# --- Markdown -----------------------------------------------------------------------------------

def _md(text, limit: int = CELL_LIMIT) -> str:
    return escape.markdown(text, limit)


def _code(text) -> str:
    return f"<code>{_md(text, PATH_LIMIT)}</code>"


def _details(r: Report) -> list[str]:
    lines = ["", f"<details><summary>{_code(r.submission)}（{_md(student_of(r), PATH_LIMIT)}）："
                 f"{r.score}/{r.max_score}，{status_label(r)}</summary>", "",
             "| 项目 | 得分 | 反馈 |", "|---|---:|---|"]
    for c in r.criteria:
        note = f"（教师调整：{c.overridden['from']} → {c.overridden['to']}）" if c.overridden else ""
        lines.append(f"| {_code(c.id)} {_md(c.title)} | {c.points}/{c.max_points} | {_md(c.feedback)}{_md(note)} |")
    for v in r.vetoes:
        lines.append(f"| 否决 {_code(v.id)} | — | {_md(v.message)} 证据：「{_md(v.evidence, EVIDENCE_LIMIT)}」 |")
    for e in r.errors:
        lines.append(f"| 错误 {_code(e.id)} | — | {_md(e.message)} |")
    return lines + ["", "</details>"]


def summary_order(reports: Sequence[Report]) -> list[Report]:
    """Submissions that wait for a person first, then the rest, each group in the order given."""
    return sorted(reports, key=lambda r: status_of(r) != "pending_review")


def to_markdown(reports: Sequence[Report], budget: int = SUMMARY_BUDGET) -> str:
    passed = sum(status_of(r) == "passed" for r in reports)
    pending = sum(status_of(r) == "pending_review" for r in reports)
    ordered = summary_order(reports)
    lines = ["## 自动评分结果", "",
             f"{len(reports)} 份提交，{passed} 份通过，{pending} 份待人工复核，"
             f"{len(reports) - passed - pending} 份未通过或未能评分。", "",
             "| 学员 | 提交 | 分数 | 结果 | 需复核 | 否决 | 错误 |", "|---|---|---:|---|---|---|---|"]
    size = sum(len(line.encode()) + 1 for line in lines)
    omitted_rows = 0
    for r in ordered:
        row = (f"| {_md(student_of(r), PATH_LIMIT)} | {_code(r.submission)} | {r.score}/{r.max_score} | {status_label(r)} "
               f"| {'是' if r.needs_review else ''} | {_md(', '.join(v.id for v in r.vetoes))} "
               f"| {_md(', '.join(e.id for e in r.errors))} |")
        if size + len(row.encode()) + 1 > budget // 2:
            omitted_rows += 1
            continue
        lines.append(row)
        size += len(row.encode()) + 1
    if omitted_rows:
        lines += ["", f"（还有 {omitted_rows} 份提交没有列出：摘要已接近 GitHub 的 1 MiB 上限；完整结果见 JSON 报告。）"]
    omitted = 0
    for r in ordered:
        block = _details(r)
        block_size = sum(len(line.encode()) + 1 for line in block)
        if omitted or size + block_size > budget:
            omitted += 1
            continue
        lines += block
        size += block_size
    if omitted:
        lines += ["", f"（另有 {omitted} 份提交的详情没有写进摘要：摘要已接近 GitHub 的 1 MiB 上限；完整结果见 JSON 报告。）"]
    return "\n".join(lines) + "\n"


# --- JUnit --------------------------------------------------------------------------------------

def _x(text) -> str:
    return escape.xml(text)


def junit_classname(report: Report) -> str:
    """`<lesson>.<student>`: CI viewers split class names on dots, so the student's own dots become `_`."""
    return f"{report.lesson or 'unknown'}.{_x(student_of(report)).replace('.', '_')}"


def to_junit(reports: Sequence[Report]) -> str:
    suites = ET.Element("testsuites", name="grader")
    for r in reports:
        classname = junit_classname(r)
        cases = []
        for c in r.criteria:
            case = ET.Element("testcase", classname=classname, name=_x(c.id))
            if c.points < c.max_points:
                failure = ET.SubElement(case, "failure", message=f"{c.points}/{c.max_points}", type="points")
                failure.text = _x(c.feedback)
            cases.append(case)
        for v in r.vetoes:
            case = ET.Element("testcase", classname=classname, name=_x(v.id))
            failure = ET.SubElement(case, "failure", message="veto", type="veto")
            failure.text = _x(f"{v.message} 证据：{v.evidence}")
            cases.append(case)
        for e in r.errors:
            case = ET.Element("testcase", classname=classname, name=_x(f"error.{e.id}"))
            error = ET.SubElement(case, "error", message=_x(e.id), type=_x(e.id))
            error.text = _x(e.message)
            cases.append(case)
        failures = sum(1 for case in cases if case.find("failure") is not None)
        suite = ET.SubElement(suites, "testsuite", name=_x(r.submission), tests=str(len(cases)), failures=str(failures),
                              errors=str(len(r.errors)))
        props = ET.SubElement(suite, "properties")
        for key, value in (("student", student_of(r)), ("status", status_of(r)), ("score", r.score),
                           ("max_score", r.max_score), ("passed", r.passed), ("needs_review", r.needs_review)):
            ET.SubElement(props, "property", name=key,
                          value=str(value).lower() if isinstance(value, bool) else _x(value))
        suite.extend(cases)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


# --- CSV ----------------------------------------------------------------------------------------

def to_csv(reports: Sequence[Report]) -> str:
    criteria = []
    for r in reports:
        for c in r.criteria:
            if c.id not in criteria:
                criteria.append(c.id)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")   # RFC 4180; a field with \r or \n is then quoted
    writer.writerow(["student", "submission", "lesson", "status", "score", "max_score", "passed", "needs_review",
                     *map(escape.csv_cell, criteria), "vetoes", "errors"])
    for r in reports:
        points = {c.id: c.points for c in r.criteria}
        row = [student_of(r), r.submission, r.lesson or "", status_of(r), r.score, r.max_score, str(r.passed).lower(),
               str(r.needs_review).lower(), *(points.get(c, "") for c in criteria),
               " ".join(v.id for v in r.vetoes), " ".join(e.id for e in r.errors)]
        writer.writerow([escape.csv_cell(value) for value in row])
    return out.getvalue()


# --- Gradescope ---------------------------------------------------------------------------------

def to_gradescope(report: Report) -> str:
    """Gradescope's autograder results.json for one submission."""
    tests = [{"name": f"{c.id} {c.title}", "number": c.id, "score": c.points, "max_score": c.max_points,
              "output": c.feedback, "visibility": "visible",
              "status": "passed" if c.points == c.max_points else "failed"} for c in report.criteria]
    for v in report.vetoes:
        tests.append({"name": f"否决 {v.id}", "score": 0, "max_score": 0, "output": f"{v.message} 证据：「{v.evidence}」",
                      "visibility": "visible", "status": "failed"})
    summary = [f"得分 {report.score}/{report.max_score}（通过线 {report.threshold}）：{'通过' if report.passed else '未通过'}。"]
    summary += [f"错误 {e.id}：{e.message}" for e in report.errors]
    if report.needs_review:
        summary.append("部分答案需要教师复核，分数可能调整。")
    data = {"score": report.score, "output": "\n".join(summary), "visibility": "visible",
            "stdout_visibility": "hidden", "tests": tests}
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


WRITERS = {"json": to_json, "markdown": to_markdown, "junit": to_junit, "csv": to_csv}

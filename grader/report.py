"""Report files: JSON (the contract), Markdown (fits $GITHUB_STEP_SUMMARY), JUnit XML (one test case
per criterion), CSV (a gradebook row per submission) and Gradescope's results.json.

Every writer renders the whole text first and then replaces the target atomically (a temporary
file in the same folder, then os.replace), so a reader never sees half a report.
"""
from __future__ import annotations

import csv
import io
import json
import os
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Sequence

from .score import Report


class ReportWriteError(OSError):
    pass


def write_atomic(path: str | Path, text: str) -> None:
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", errors="replace", newline="") as fh:  # odd file names too
                fh.write(text)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise ReportWriteError(f"cannot write {path}: {exc.strerror or exc}") from None


def to_json(reports: Sequence[Report]) -> str:
    return json.dumps({"results": [r.to_dict() for r in reports]}, ensure_ascii=False, indent=2) + "\n"


def _md(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _status(report: Report) -> str:
    if report.errors:
        return "⚠️ 未能评分" if not report.criteria or report.score == 0 else "❌ 未通过（有错误）"
    return "✅ 通过" if report.passed else "❌ 未通过"


def to_markdown(reports: Sequence[Report]) -> str:
    passed = sum(r.passed for r in reports)
    lines = ["## 自动评分结果", "",
             f"{len(reports)} 份提交，{passed} 份通过，{len(reports) - passed} 份未通过或未能评分。", "",
             "| 提交 | 分数 | 结果 | 需复核 | 否决 | 错误 |", "|---|---:|---|---|---|---|"]
    for r in reports:
        lines.append(f"| `{_md(r.submission)}` | {r.score}/{r.max_score} | {_status(r)} | {'是' if r.needs_review else ''} "
                     f"| {_md(', '.join(v.id for v in r.vetoes))} | {_md(', '.join(e.id for e in r.errors))} |")
    for r in reports:
        lines += ["", f"<details><summary><code>{_md(r.submission)}</code>：{r.score}/{r.max_score}，{_status(r)}</summary>", "",
                  "| 项目 | 得分 | 反馈 |", "|---|---:|---|"]
        for c in r.criteria:
            note = f"（教师调整：{c.overridden['from']} → {c.overridden['to']}）" if c.overridden else ""
            lines.append(f"| `{c.id}` {_md(c.title)} | {c.points}/{c.max_points} | {_md(c.feedback)}{note} |")
        for v in r.vetoes:
            lines.append(f"| 否决 `{v.id}` | — | {_md(v.message)} 证据：「{_md(v.evidence)}」 |")
        for e in r.errors:
            lines.append(f"| 错误 `{e.id}` | — | {_md(e.message)} |")
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def to_junit(reports: Sequence[Report]) -> str:
    suites = ET.Element("testsuites", name="grader")
    for r in reports:
        cases = []
        for c in r.criteria:
            case = ET.Element("testcase", classname=f"{r.lesson}.{r.submission}", name=c.id)
            if c.points < c.max_points:
                failure = ET.SubElement(case, "failure", message=f"{c.points}/{c.max_points}", type="points")
                failure.text = c.feedback
            cases.append(case)
        for v in r.vetoes:
            case = ET.Element("testcase", classname=f"{r.lesson}.{r.submission}", name=v.id)
            failure = ET.SubElement(case, "failure", message="veto", type="veto")
            failure.text = f"{v.message} 证据：{v.evidence}"
            cases.append(case)
        for e in r.errors:
            case = ET.Element("testcase", classname=f"{r.lesson}.{r.submission}", name=f"error.{e.id}")
            error = ET.SubElement(case, "error", message=e.id, type=e.id)
            error.text = e.message
            cases.append(case)
        failures = sum(1 for case in cases if case.find("failure") is not None)
        suite = ET.SubElement(suites, "testsuite", name=r.submission, tests=str(len(cases)), failures=str(failures),
                              errors=str(len(r.errors)))
        props = ET.SubElement(suite, "properties")
        for key, value in (("score", r.score), ("max_score", r.max_score), ("passed", r.passed),
                           ("needs_review", r.needs_review)):
            ET.SubElement(props, "property", name=key, value=str(value).lower() if isinstance(value, bool) else str(value))
        suite.extend(cases)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def to_csv(reports: Sequence[Report]) -> str:
    criteria = []
    for r in reports:
        for c in r.criteria:
            if c.id not in criteria:
                criteria.append(c.id)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["submission", "lesson", "score", "max_score", "passed", "needs_review", *criteria, "vetoes", "errors"])
    for r in reports:
        points = {c.id: c.points for c in r.criteria}
        writer.writerow([r.submission, r.lesson or "", r.score, r.max_score, str(r.passed).lower(),
                         str(r.needs_review).lower(), *(points.get(c, "") for c in criteria),
                         " ".join(v.id for v in r.vetoes), " ".join(e.id for e in r.errors)])
    return out.getvalue()


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

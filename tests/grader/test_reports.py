"""Report files: who the student is, run metadata, file mode, atomic writes, and per-format escaping
of student-controlled text (issue 11 point 7, issue 15 items 5 and 7)."""
import csv
import hashlib
import io
import json
import os
import threading
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from grader import report as reports
from grader.fsutil import backup_path, write_atomic, write_new
from grader.score import CriterionScore, Report, ReportError
from grader.vetoes import VetoHit

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ("<img src=x onerror=alert(1)> <a href=\"https://evil.example\">点我</a> </details></summary>"
           " ![t](https://evil.example/t.png) [x](javascript:alert(1)) `code` | cell \r\n第二行 $x$ \x01\x1b]0;t\x07")


def make(submission="submissions/alice/lesson07.ipynb", feedback="很好", evidence="原话", *, passed=True, score=10,
         message="m", errors=(), cls=Report):
    criteria = (CriterionScore("code.main_path", "代码·主路径", "code", 2 if passed else 0, 2, feedback),
                CriterionScore("Q1", "Q1 证明", "text", 2, 2, feedback))
    vetoes = () if passed else (VetoHit("veto.peak_speedup", "Q2", evidence, message),)
    return cls(submission=submission, lesson="lesson07", score=score, max_score=10, threshold=8, passed=passed,
               needs_review=not passed, criteria=criteria, vetoes=vetoes, errors=tuple(errors))


class Pending(Report):
    @property
    def status(self):
        return "pending_review"


# --- who -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("path, student", [
    ("submissions/alice/lesson07.ipynb", "alice"),
    ("/home/ci/repo/submissions/张三/lesson07.ipynb", "张三"),
    ("submissions/bob/week2/lesson07.ipynb", "bob"),
    ("old/submissions/x/new/submissions/carol/lesson07.ipynb", "carol"),
    ("exercises/lesson07.ipynb", "lesson07"),
    ("submissions/lesson07.ipynb", "lesson07"),
    ("dave.ipynb", "dave"),
])
def test_student_comes_from_the_submissions_folder_else_the_stem(path, student):
    assert reports.student_of(make(path)) == student


# --- files ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("mask", [0o022, 0o027, 0o077])
def test_reports_are_created_with_the_umask_not_0600(tmp_path, mask):
    old = os.umask(mask)
    try:
        out = tmp_path / f"g{mask:o}.json"
        reports.write_report(out, reports.to_json([make()]))
        write_new(tmp_path / f"n{mask:o}.ipynb", "{}")
    finally:
        os.umask(old)
    assert out.stat().st_mode & 0o777 == 0o666 & ~mask
    assert (tmp_path / f"n{mask:o}.ipynb").stat().st_mode & 0o777 == 0o666 & ~mask


def test_concurrent_writers_never_clobber_each_others_temporary_file(tmp_path):
    """Two builds (or grading runs) writing one file at once: a fixed `.name.tmp` made one of them fail."""
    target, errors = tmp_path / "lesson07.ipynb", []
    texts = [f"{n}" * 50_000 for n in range(8)]

    def writer(text):
        try:
            for _ in range(25):
                write_atomic(target, text)
        except Exception as exc:  # noqa: BLE001 - the test records any failure
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(t,)) for t in texts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert target.read_text(encoding="utf-8") in texts
    assert [p.name for p in tmp_path.iterdir()] == ["lesson07.ipynb"]  # no temporary file left behind


def test_write_new_never_replaces(tmp_path):
    path = tmp_path / "copy.ipynb"
    write_new(path, "mine")
    with pytest.raises(FileExistsError):
        write_new(path, "theirs")
    assert path.read_text(encoding="utf-8") == "mine" and len(list(tmp_path.iterdir())) == 1


def test_a_pipe_is_written_to_not_replaced(tmp_path):
    fifo = tmp_path / "summary"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text(encoding="utf-8")))
    reader.start()
    reports.write_report(fifo, "## 自动评分结果\n")
    reader.join(10)
    assert got == ["## 自动评分结果\n"] and fifo.is_fifo()


def test_backup_names_do_not_collide(tmp_path):
    first = backup_path(tmp_path, Path("exercises/lesson07.ipynb"), now=0)
    first.write_text("x", encoding="utf-8")
    second = backup_path(tmp_path, Path("exercises/lesson07.ipynb"), now=0)
    assert first != second and second.name.endswith("-2.ipynb") and first.name.startswith("lesson07-")


# --- JSON ----------------------------------------------------------------------------------------

def test_json_keeps_results_and_adds_run_metadata():
    rubric = ROOT / "lessons" / "lesson07.rubric.yml"
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    batch = [make(), make("submissions/bob/lesson07.ipynb", passed=False, score=6)]
    data = json.loads(reports.to_json(batch, run=reports.run_metadata(batch, {"lesson07": rubric}, when)))
    assert [r["submission"] for r in data["results"]] == [r.submission for r in batch]   # old readers: data["results"]
    assert [r["student"] for r in data["results"]] == ["alice", "bob"]
    assert [r["status"] for r in data["results"]] == ["passed", "failed"]
    run = data["run"]
    assert run["graded_at"] == "2026-01-02T03:04:05Z" and run["lesson"] == "lesson07" and run["submissions"] == 2
    assert run["rubric_sha256"] == hashlib.sha256(rubric.read_bytes()).hexdigest() == run["rubrics"]["lesson07"]
    assert run["grader_version"] and len(run["grader_sha256"]) == 64


def test_json_run_of_a_mixed_batch_names_no_single_rubric():
    other = Report(submission="x.ipynb", lesson="lesson08", score=0, max_score=0, threshold=0, passed=False,
                   needs_review=False, criteria=(), vetoes=(), errors=(ReportError("unknown_lesson", "?"),))
    run = reports.run_metadata([make(), other], {})
    assert run["lesson"] is None and run["rubric_sha256"] is None


# --- JUnit ---------------------------------------------------------------------------------------

def test_junit_classnames_name_lesson_and_student():
    xml = reports.to_junit([make("/abs/path/submissions/zhang.san/lesson07.ipynb"), make("work/lesson07.ipynb")])
    names = {case.get("classname") for case in ET.fromstring(xml).iter("testcase")}
    assert names == {"lesson07.zhang_san", "lesson07.lesson07"}


def test_junit_survives_control_characters():
    bad = make("submissions/e\x01ve/lesson07.ipynb", feedback="a\x01b\x1b[31m\x00c\ud7ff\ufffe", passed=False,
               evidence="\x0bquote", score=3, errors=[ReportError("crash", "boom\x02")])
    root = ET.fromstring(reports.to_junit([bad]))       # well-formed
    text = "".join(root.itertext())
    assert "a\\x01b\\x1b[31m\\x00c" in text and "boom\\x02" in text and "\\x0bquote" in text


# --- Markdown ------------------------------------------------------------------------------------

def _html(markdown: str) -> str:
    return MarkdownIt("commonmark").enable("table").render(markdown)


def test_markdown_summary_keeps_student_text_as_text():
    bad = make(f"submissions/x<img src=y>/{HOSTILE[:20]}.ipynb", feedback=HOSTILE, evidence=HOSTILE, passed=False,
               message="否决", score=4, errors=[ReportError("crash", HOSTILE)])
    text = reports.to_markdown([bad, make()])
    assert "\r" not in text and "\x01" not in text and "\x1b" not in text
    html = _html(text)
    assert not any(tag in html for tag in ("<img", "<a ", "<script", 'href="javascript'))
    assert html.count("<details>") == 2 and html.count("</details>") == 2
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "点我" in html
    tables = [block.splitlines() for block in text.split("\n\n") if block.startswith("| ")]
    assert len(tables) == 3
    for table in tables:  # no pipe or line break from student text splits or ends a row
        widths = {len(_split_row(line)) for line in table}
        assert len(widths) == 1, table


def _split_row(line: str) -> list[str]:
    out, current, escaped = [], "", False
    for ch in line.strip().strip("|"):
        if ch == "|" and not escaped:
            out.append(current)
            current = ""
        else:
            current += ch
        escaped = ch == "\\" and not escaped
    return out + [current]


def test_markdown_summary_truncates_and_fits_github():
    comment = "很长的注释" * 72_000   # 360 KB of text, quoted by feedback, evidence and an error
    big = make(feedback=comment, evidence=comment, passed=False, score=2, errors=[ReportError("crash", comment)])
    text = reports.to_markdown([big])
    assert len(text.encode()) < 20_000 and "已截断：共 360000 字" in text
    many = [make(f"submissions/s{n}/lesson07.ipynb", feedback="很长" * 300, passed=False, score=3) for n in range(3000)]
    text = reports.to_markdown(many)
    assert len(text.encode()) < reports.SUMMARY_BUDGET + 10_000 < 2**20
    assert "完整结果见 JSON 报告" in text


def test_markdown_lists_pending_review_first():
    batch = [make("submissions/a/lesson07.ipynb"), make("submissions/b/lesson07.ipynb", cls=Pending),
             make("submissions/c/lesson07.ipynb", passed=False, score=3), make("submissions/d/lesson07.ipynb", cls=Pending)]
    text = reports.to_markdown(batch)
    top = next(block for block in text.split("\n\n") if block.startswith("| 学员"))
    assert [line.split(" | ")[0].strip("| ") for line in top.splitlines()[2:]] == ["b", "d", "a", "c"]
    summaries = [line for line in text.splitlines() if line.startswith("<details>")]
    assert [line.split("/")[1] for line in summaries] == ["b", "d", "a", "c"]
    assert "2 份待人工复核" in text and "⏳" in text


# --- CSV -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["=1+1;", "@SUM(A1)", "+1", "-2+3", "\t=x", "\r=x"])
def test_csv_never_writes_a_formula(name):
    text = reports.to_csv([make(f"submissions/{name}/{name}.ipynb")])
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert rows[0]["student"] == "'" + name
    assert rows[0]["submission"] == f"submissions/{name}/{name}.ipynb"


def test_csv_guards_a_submission_path_that_starts_like_a_formula():
    rows = list(csv.DictReader(io.StringIO(reports.to_csv([make("=HYPERLINK(1).ipynb")]))))
    assert rows[0]["submission"] == "'=HYPERLINK(1).ipynb" and rows[0]["student"] == "'=HYPERLINK(1)"
    assert rows[0]["score"] == "10" and rows[0]["status"] == "passed"

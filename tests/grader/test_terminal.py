"""Terminal output: student text never acts as rich markup or as terminal control sequences, and a
terminal that fails never costs the batch its report files (issue 15 items 5 and 7)."""
import argparse
import io
import json
import re
import sys
from pathlib import Path

import pytest
from rich.console import Console

from grader import escape, terminal
from grader.score import CriterionScore, Report, ReportError
from grader.vetoes import VetoHit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_reports import make  # noqa: E402

HOSTILE = ["[/x]", "[bold green]通过 10/10[/bold green]", "\x1b]0;pwned\x07", "\x1b]52;c;ZXZpbA==\x07", "\x1b[2J\x1b[H",
           "\x9b31m", "\x9d0;t\x9c", "a\rb", "\x08\x08ok", ":smile:", "\u202eevil", "[link=https://evil.example]x[/link]"]
SGR = re.compile(r"\x1b\[[0-9;]*m")   # rich's own colours are the only escape sequences allowed out


def console():
    out = io.StringIO()
    return Console(file=out, force_terminal=True, color_system="truecolor", width=200, highlight=False), out


def hostile_report(text):
    return Report(submission=f"submissions/{text}/lesson07.ipynb", lesson="lesson07", score=3, max_score=10, threshold=8,
                  passed=False, needs_review=True,
                  criteria=(CriterionScore("Q1", f"Q1 {text}", "text", 1, 2, f"反馈 {text}"),),
                  vetoes=(VetoHit("veto.peak_speedup", "Q2", f"原话 {text}", f"说明 {text}"),),
                  errors=(ReportError("crash", f"错误 {text}"),))


@pytest.mark.parametrize("text", HOSTILE)
@pytest.mark.parametrize("printer", [terminal.print_report, terminal.print_check])
def test_student_text_is_neither_markup_nor_control(printer, text):
    con, out = console()
    printer(con, hostile_report(text))
    shown = out.getvalue()
    assert not SGR.sub("", shown).count("\x1b") and not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", SGR.sub("", shown))
    assert escape.terminal(text) in SGR.sub("", shown)


def test_markup_in_student_text_is_shown_literally():
    con, out = console()
    terminal.print_report(con, hostile_report("[bold green]通过 10/10"))
    plain = SGR.sub("", out.getvalue())
    assert "[bold green]通过 10/10" in plain


def test_the_self_check_prints_feedback_never_evidence():
    class WithEvidence(CriterionScore):
        evidence = {"claims": [{"id": "c1", "label": "RUBRIC-LABEL-接受路径", "found": False}]}

    report = Report(submission="work/lesson07.ipynb", lesson="lesson07", score=0, max_score=2, threshold=2, passed=False,
                    needs_review=False, vetoes=(), errors=(),
                    criteria=(WithEvidence("Q1", "Q1", "text", 0, 2, "你的论证里哪一步说明了接受的概率？"),))
    con, out = console()
    terminal.print_check(con, report)
    assert "你的论证里哪一步" in out.getvalue() and "RUBRIC-LABEL" not in out.getvalue()


def test_escape_terminal_shows_what_was_removed():
    assert escape.terminal("\x1b]0;t\x07") == "\\x1b]0;t\\x07"
    assert escape.terminal("a\r\nb\tc\n") == "a\nb\tc\n"
    assert escape.terminal("\u202e") == "\\u202e"


def test_reports_are_written_even_when_the_terminal_fails(tmp_path, monkeypatch):
    from grader import commands, grade

    batch = [make(), make("submissions/bob/lesson07.ipynb", passed=False, score=4, feedback="[/x]")]
    monkeypatch.setattr(grade, "grade_many", lambda paths, options, jobs, progress: batch)

    def broken(console, report):
        raise RuntimeError("terminal gone")

    monkeypatch.setattr(terminal, "print_report", broken)
    for name in ("a", "b"):
        (tmp_path / f"{name}.ipynb").write_text("{}", encoding="utf-8")
    out = {kind: tmp_path / f"r.{kind}" for kind in ("json", "markdown", "junit", "csv")}
    args = argparse.Namespace(submissions=[str(tmp_path)], gradescope=None, jobs=1, timeout=None, overrides=None,
                              lesson=None, as_reference=False, quiet=False, **{k: str(v) for k, v in out.items()})
    assert commands.grade_main(args) == 1
    assert [r["student"] for r in json.loads(out["json"].read_text(encoding="utf-8"))["results"]] == ["alice", "bob"]
    assert all(path.stat().st_size for path in out.values())

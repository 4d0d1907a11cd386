"""What people read in a terminal: a rich table per graded submission, a progress bar for batches,
and the student's self-check in Chinese (public checks one by one; hidden checks as counts only).

Student-controlled text (feedback quoting an answer, a veto's evidence, error messages, file names)
is printed only as `rich.text.Text` after `escape.terminal`: rich never reads it as markup
(`[/x]` cannot raise MarkupError, `[bold green]通过` cannot restyle a line), and escape sequences
cannot reach the terminal. The self-check prints a criterion's `feedback` only, never an
instructor-side `evidence`.
"""
from __future__ import annotations

from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from . import escape
from .report import status_of
from .score import Report


def safe(text, style: str = "") -> Text:
    """Student-controlled text as a rich Text: no markup, no control sequences."""
    return Text(escape.terminal(text), style=style)


def _verdict(report: Report) -> Text:
    status = status_of(report)
    if status == "passed":
        return Text("通过", style="bold green")
    if status == "pending_review":
        return Text("待人工复核", style="bold yellow")
    if report.errors:
        return Text("未通过（", style="bold red").append(safe("、".join(e.id for e in report.errors))).append("）")
    return Text("未通过", style="bold red")


def _points(c) -> Text:
    style = "green" if c.points == c.max_points else "yellow" if c.points else "red"
    return Text(f"{c.points}/{c.max_points}", style=style)


def print_report(console: Console, report: Report) -> None:
    title = safe(report.submission).append(f" — {report.score}/{report.max_score}（通过线 {report.threshold}）")
    table = Table(title=title, title_justify="left", show_lines=False, expand=False)
    table.add_column("项目", no_wrap=True)
    table.add_column("得分", justify="right", no_wrap=True)
    table.add_column("反馈", overflow="fold")
    for c in report.criteria:
        feedback = safe(c.feedback)
        if c.overridden:
            feedback.append(safe(f"（教师调整 {c.overridden['from']} → {c.overridden['to']}）"))
        name = c.title if c.title.startswith(c.id) else f"{c.id} {c.title}"
        table.add_row(safe(name), _points(c), feedback)
    for v in report.vetoes:
        table.add_row(safe(f"否决 {v.id}", "bold red"), "—", safe(f"{v.message} 证据（{v.answer}）：「{v.evidence}」"))
    for e in report.errors:
        table.add_row(safe(f"错误 {e.id}", "bold red"), "—", safe(e.message))
    console.print(table)
    line = Text("结果：").append(_verdict(report))
    if report.needs_review:
        line.append("；需要人工复核", style="yellow")
    console.print(line)
    console.print()


@contextmanager
def progress_bar(console: Console, total: int):
    """Yields a callback to call once per finished submission (a no-op for a single submission).

    A terminal that fails mid-batch only loses the bar, never the batch."""
    if total < 2 or not console.is_terminal:
        yield lambda report: None
        return
    with Progress(TextColumn("评分中"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        task = progress.add_task("grade", total=total)

        def advance(report) -> None:
            try:
                progress.advance(task)
            except Exception:
                pass

        yield advance


def print_check(console: Console, report: Report) -> None:
    """The student's self-check: same engine as grading, friendly output."""
    console.print(Text("自查：", style="bold").append(safe(report.submission)))
    if report.errors and not report.criteria:
        for e in report.errors:
            console.print(Text("✗ 无法评分（", style="red").append(safe(e.id)).append("）：").append(safe(e.message)))
        return
    public = [c for c in report.checks if c.public and c.id != "visible.assertions"]
    if public:
        console.print(Text("公开检查：", style="bold"))
        for c in public:
            mark = Text("  ✓ ", style="green") if c.passed else Text("  ✗ ", style="red")
            console.print(mark.append(safe(c.title if c.passed else f"{c.title} —— {c.message}")))
    if report.hidden_checks:
        console.print(Text(f"隐藏检查：评分时还会运行 {report.hidden_checks} 组隐藏检查（共 {report.hidden_calls} 次调用你的函数，"
                           "输入不公开；每组检查的内容见课文的「评分规则」）；下表的代码项已包含它们的结果。"))
    console.print()
    table = Table(title_justify="left")
    table.add_column("项目", no_wrap=True)
    table.add_column("得分", justify="right", no_wrap=True)
    table.add_column("还缺什么", overflow="fold")
    for c in report.criteria:
        table.add_row(safe(c.title), _points(c), Text("—") if c.points == c.max_points else safe(c.feedback))
    console.print(table)
    for v in report.vetoes:
        console.print(Text("✗ 一票否决「", style="bold red").append(safe(v.id)).append("」：").append(safe(v.message)))
        console.print(Text("   你的原话（").append(safe(v.answer)).append("）：「").append(safe(v.evidence)).append("」"))
    for e in report.errors:
        console.print(Text("✗ ", style="red").append(safe(e.id)).append("：").append(safe(e.message)))
    status = status_of(report)
    verdict = {"passed": "可以通过", "pending_review": "要等老师人工复核后才能确定"}.get(status, "还不能通过")
    console.print(Text(f"\n总分 {report.score}/{report.max_score}，通过线 {report.threshold}：{verdict}。",
                       style="bold green" if status == "passed" else "bold red"))
    if report.needs_review:
        console.print(Text("提示：有答案会交给老师人工复核（空答案、关键词罗列、与参考答案高度重合，或触发了否决规则）。"))

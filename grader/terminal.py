"""What people read in a terminal: a rich table per graded submission, a progress bar for batches,
and the student's self-check in Chinese (public checks one by one; hidden checks as counts only)."""
from __future__ import annotations

from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from .score import Report


def _verdict(report: Report) -> Text:
    if report.passed:
        return Text("通过", style="bold green")
    if report.errors:
        return Text("未通过（" + "、".join(e.id for e in report.errors) + "）", style="bold red")
    return Text("未通过", style="bold red")


def print_report(console: Console, report: Report) -> None:
    title = f"{report.submission} — {report.score}/{report.max_score}（通过线 {report.threshold}）"
    table = Table(title=title, title_justify="left", show_lines=False, expand=False)
    table.add_column("项目", no_wrap=True)
    table.add_column("得分", justify="right", no_wrap=True)
    table.add_column("反馈", overflow="fold")
    for c in report.criteria:
        style = "green" if c.points == c.max_points else "yellow" if c.points else "red"
        feedback = c.feedback + (f"（教师调整 {c.overridden['from']} → {c.overridden['to']}）" if c.overridden else "")
        name = c.title if c.title.startswith(c.id) else f"{c.id} {c.title}"
        table.add_row(name, Text(f"{c.points}/{c.max_points}", style=style), feedback)
    for v in report.vetoes:
        table.add_row(Text(f"否决 {v.id}", style="bold red"), "—", f"{v.message} 证据（{v.answer}）：「{v.evidence}」")
    for e in report.errors:
        table.add_row(Text(f"错误 {e.id}", style="bold red"), "—", e.message)
    console.print(table)
    line = Text("结果：").append(_verdict(report))
    if report.needs_review:
        line.append("；需要人工复核", style="yellow")
    console.print(line)
    console.print()


@contextmanager
def progress_bar(console: Console, total: int):
    """Yields a callback to call once per finished submission (a no-op for a single submission)."""
    if total < 2 or not console.is_terminal:
        yield lambda report: None
        return
    with Progress(TextColumn("评分中"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        task = progress.add_task("grade", total=total)
        yield lambda report: progress.advance(task)


def print_check(console: Console, report: Report) -> None:
    """The student's self-check: same engine as grading, friendly output."""
    console.print(Text(f"自查：{report.submission}", style="bold"))
    if report.errors and not report.criteria:
        for e in report.errors:
            console.print(Text(f"✗ 无法评分（{e.id}）：{e.message}", style="red"))
        return
    public = [c for c in report.checks if c.public and c.id != "visible.assertions"]
    if public:
        console.print(Text("公开检查：", style="bold"))
        for c in public:
            mark = Text("  ✓ ", style="green") if c.passed else Text("  ✗ ", style="red")
            console.print(mark.append(f"{c.title}" + ("" if c.passed else f" —— {c.message}")))
    if report.hidden_checks:
        console.print(f"隐藏检查：评分时还会运行 {report.hidden_checks} 组隐藏检查（共 {report.hidden_calls} 次调用你的函数，"
                      "输入不公开），覆盖随机输入、概率恒等式和边界情况；下表的代码项已包含它们的结果。")
    console.print()
    table = Table(title_justify="left")
    table.add_column("项目", no_wrap=True)
    table.add_column("得分", justify="right", no_wrap=True)
    table.add_column("还缺什么", overflow="fold")
    for c in report.criteria:
        style = "green" if c.points == c.max_points else "yellow" if c.points else "red"
        table.add_row(f"{c.title}", Text(f"{c.points}/{c.max_points}", style=style),
                      "—" if c.points == c.max_points else c.feedback)
    console.print(table)
    for v in report.vetoes:
        console.print(Text(f"✗ 一票否决「{v.id}」：{v.message}", style="bold red"))
        console.print(f"   你的原话（{v.answer}）：「{v.evidence}」")
    for e in report.errors:
        console.print(Text(f"✗ {e.id}：{e.message}", style="red"))
    verdict = "可以通过" if report.passed else "还不能通过"
    console.print(Text(f"\n总分 {report.score}/{report.max_score}，通过线 {report.threshold}：{verdict}。",
                       style="bold green" if report.passed else "bold red"))
    if report.needs_review:
        console.print("提示：有答案会交给老师人工复核（空答案、关键词罗列、与参考答案高度重合，或触发了否决规则）。")

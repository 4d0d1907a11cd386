"""Lesson 7 executed as Quarto's Jupyter engine would run it (nbclient): the MIME types of its results.

Cells that build tables return `IPython.display.Markdown`, whose `text/markdown` output Quarto renders
as Markdown and Jupyter shows rendered; printed pipes would show raw in Jupyter.
"""
import re

import pytest

from grader.execute import execute, quarto_view
from grader.lesson import load_lesson
from grader.build import ROOT


@pytest.fixture(scope="module")
def executed():
    lesson = load_lesson(ROOT / "lessons" / "lesson07.qmd")
    nb = quarto_view(lesson)
    execute(nb, cwd=lesson.path.parent, timeout=60)
    return nb


def test_markdown_cells_give_text_markdown_outputs(executed):
    cells = [c for c in executed.cells if re.search(r"^Markdown\(", c.source, re.M)]
    assert len(cells) >= 5
    for cell in cells:
        kinds = {key for out in cell.outputs for key in out.get("data", {})}
        assert "text/markdown" in kinds, cell.metadata["lesson_line"]
        markdown = next(out["data"]["text/markdown"] for out in cell.outputs if "text/markdown" in out.get("data", {}))
        assert markdown.strip(), cell.metadata["lesson_line"]


def test_no_cell_prints_a_markdown_table(executed):
    for cell in executed.cells:
        for out in cell.outputs:
            if out.output_type == "stream":
                assert not re.search(r"^\|.*\|\s*$", out.text, re.M), cell.metadata["lesson_line"]


def test_no_widget_or_javascript_output(executed):
    for cell in executed.cells:
        for out in cell.outputs:
            kinds = set(out.get("data", {}))
            assert not kinds & {"application/javascript", "application/vnd.jupyter.widget-view+json"}, \
                cell.metadata["lesson_line"]


def test_tables_give_the_widest_column_the_most_dashes(executed):
    (rubric,) = [c for c in executed.cells if '| 编号 | 项目 |' in c.source]
    text = next(o["data"]["text/markdown"] for o in rubric.outputs if "text/markdown" in o.get("data", {}))
    separator = next(line for line in text.splitlines() if re.fullmatch(r"\|[-:|]+\|", line))
    widths = [len(part) for part in separator.strip("|").split("|")]
    assert widths[-1] == max(widths)  # Pandoc sizes wide pipe tables by these dashes: 「要求」 gets the room


def test_computed_numbers_the_prose_relies_on(executed):
    text = "\n".join(o.get("text", "") for c in executed.cells for o in c.outputs)
    assert "草稿接受率 44.3%" in text                    # α = 0.7, γ = 4: not α
    assert "平均接受长度 1.993，草稿接受率 24.8%" in text   # PR #46878's per-position rates
    assert re.search(r"TV = \d\.\de-1[5-7]", text)        # the challenge check's exact enumeration

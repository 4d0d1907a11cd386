"""Execute notebooks in a Jupyter kernel with nbclient, as Quarto's Jupyter engine does."""
from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbformat import v4

from .lesson import Lesson
from .notebooks import KERNELSPEC


def execute(nb: nbformat.NotebookNode, cwd: Path, timeout: int = 600) -> nbformat.NotebookNode:
    """Run every code cell top to bottom in a fresh python3 kernel started in `cwd`.

    Raises nbclient's CellExecutionError (naming the cell) when a cell fails.
    """
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=KERNELSPEC["name"],
        resources={"metadata": {"path": str(cwd)}},
        record_timing=False,  # timestamps would make every build a diff
    )
    client.execute()
    return nb


def quarto_view(lesson: Lesson) -> nbformat.NotebookNode:
    """The cells Quarto's Jupyter engine would run for this lesson, in order.

    Quarto runs every ```{python} cell whatever profile is rendered (content-visible only hides
    the result afterwards), and skips those with `eval: false`.
    """
    nb = v4.new_notebook(metadata={"kernelspec": dict(KERNELSPEC)})
    for cell in lesson.cells:
        if cell.executes:
            code = v4.new_code_cell(cell.source)
            code.metadata["lesson_line"] = cell.line
            nb.cells.append(code)
    return nb

"""Stand-in for Quarto's Jupyter engine: every executable cell runs top to bottom, offline."""
import time

from grader.execute import execute, quarto_view

BUDGET_S = 60  # the lesson must execute in under a minute on a 2-core machine


def test_lesson_executes_top_to_bottom(lesson, tmp_path):
    nb = quarto_view(lesson)
    assert nb.cells, "a lesson with no executable cell"
    start = time.perf_counter()
    execute(nb, cwd=lesson.path.parent, timeout=BUDGET_S)  # CellExecutionError names the failing cell
    elapsed = time.perf_counter() - start
    print(f"{lesson.name}: {len(nb.cells)} cells executed in {elapsed:.1f} s")
    assert elapsed < BUDGET_S


def test_eval_false_cells_are_not_executed(lesson):
    executed = {c.metadata["lesson_line"] for c in quarto_view(lesson).cells}
    for cell in lesson.cells:
        if cell.kind == "code" and cell.options.get("eval") is False:
            assert cell.line not in executed

"""The student release's book executes as Quarto would, without the reference solutions it leaves out."""
from __future__ import annotations

import pytest

from grader.execute import execute, quarto_view
from grader.lesson import load_lesson


@pytest.mark.slow
def test_the_release_lessons_execute_top_to_bottom(release_dir):
    lessons = sorted((release_dir / "lessons").glob("*.qmd"))
    assert lessons
    for qmd in lessons:
        lesson = load_lesson(qmd, validate=False)
        assert not lesson.find("solution") and not lesson.find("reference")
        nb = quarto_view(lesson)
        execute(nb, cwd=qmd.parent, timeout=120)      # CellExecutionError names the failing cell
        outputs = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []) if o.get("name") == "stdout")
        assert "拒绝概率" in outputs            # the check cell ran on the rule from specdec

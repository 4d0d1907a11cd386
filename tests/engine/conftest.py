"""The toy lesson (tests/toy/lessons/toy01.*) built into a temporary course root, once per session."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # toyhelp.py

from toyhelp import TOY, grader  # noqa: E402


@pytest.fixture(scope="session")
def toy_root(tmp_path_factory) -> Path:
    """A course root holding only the toy lesson, with its notebooks built by `python -m grader build`."""
    root = tmp_path_factory.mktemp("toy-course")
    shutil.copytree(TOY, root / "lessons")
    (root / "_quarto.yml").write_text("project:\n  type: book\n", encoding="utf-8")
    (root / "solutions").mkdir()
    run = grader("build", "--root", root)
    assert run.returncode == 0, run.stdout + run.stderr
    return root


@pytest.fixture()
def notebook(toy_root, tmp_path):
    """notebook(fills={exercise: [fill, ...]}, answers={course_id: text}) -> path of a filled exercise notebook."""
    def make(fills: dict | None = None, answers: dict | None = None, edit=None, name: str = "toy01.ipynb") -> Path:
        nb = json.loads((toy_root / "exercises" / "toy01.ipynb").read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            meta = cell.get("metadata", {})
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            if meta.get("course_role") == "exercise" and fills and meta.get("course_id") in fills:
                for fill in fills[meta["course_id"]]:
                    source = source.replace("______", fill, 1)
            if meta.get("course_role") == "answer" and answers and meta.get("course_id") in answers:
                source = answers[meta["course_id"]]
            cell["source"] = source
        if edit:
            edit(nb)
        path = tmp_path / name
        path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
        return path
    return make

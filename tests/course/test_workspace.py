"""The student workspace: `start` makes a copy that nothing overwrites, and `build` / `make`
never destroy a filled notebook (grader/workspace.py, grader/build.py)."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from grader.build import ROOT, build, stale_notebooks
from grader.lesson import ANSWER_PLACEHOLDER
from grader.workspace import WorkspaceError, start

LESSON = "lesson07"
FILLED = "接受路径给出 min(p, q)，拒绝路径给出残差——这是我自己写的答案。"


@pytest.fixture
def root(tmp_path):
    for name in ("lessons", "exercises", "solutions"):
        shutil.copytree(ROOT / name, tmp_path / name)
    return tmp_path


def grader(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "grader", *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def fill(path: Path, text: str = FILLED) -> bytes:
    """Type an answer into the first answer cell, as a student would, and return the file's bytes."""
    nb = nbformat.read(path, as_version=4)
    answer = next(c for c in nb.cells if c.metadata.get("course_role") == "answer")
    answer.source = text
    nbformat.write(nb, path)
    return path.read_bytes()


def test_start_creates_the_copy_in_work_or_submissions(root):
    mine = start(root, LESSON)
    assert mine == root / "work" / f"{LESSON}.ipynb"
    named = start(root, LESSON, "张三")
    assert named == root / "submissions" / "张三" / f"{LESSON}.ipynb"
    nb = nbformat.read(named, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.course["lesson"] == LESSON and nb.metadata.course["edition"] == "exercise"
    assert f".venv/bin/python -m grader check submissions/张三/{LESSON}.ipynb" in nb.cells[0].source
    assert [c.source for c in nb.cells if c.metadata.get("course_role") == "answer"][0] == ANSWER_PLACEHOLDER
    assert oct(named.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_start_never_overwrites_a_copy(root):
    copy = start(root, LESSON, "alice")
    before = fill(copy)
    with pytest.raises(WorkspaceError, match="已经存在，没有覆盖它"):
        start(root, LESSON, "alice")
    assert copy.read_bytes() == before
    cli = grader("start", LESSON, "--name", "alice", "--root", root)
    assert cli.returncode == 2 and "没有覆盖它" in cli.stderr and f"jupyter lab submissions/alice/{LESSON}.ipynb" in cli.stderr
    assert copy.read_bytes() == before


@pytest.mark.parametrize("name", ["../bob", "a/b", ".hidden", "", "has space", "x" * 65])
def test_start_refuses_names_that_are_not_one_folder(root, name):
    with pytest.raises(WorkspaceError, match="--name"):
        start(root, LESSON, name)
    assert not (root / "submissions").exists()


def test_start_unknown_lesson(root):
    cli = grader("start", "lesson99", "--root", root)
    assert cli.returncode == 2 and "没有课程 'lesson99'" in cli.stderr and LESSON in cli.stderr


def test_build_keeps_a_filled_exercise_notebook_and_never_touches_copies(root):
    copies = [start(root, LESSON), start(root, LESSON, "bob")]
    kept = [fill(copy, f"{FILLED}（{n}）") for n, copy in enumerate(copies)]
    generated = root / "exercises" / f"{LESSON}.ipynb"
    build(root, run=False)                   # a notebook this build wrote is replaced quietly
    assert not (root / "work" / "backups").exists()
    filled = fill(generated)                 # the old habit: typing into exercises/
    assert [name for name, why in stale_notebooks(root)] == [f"exercises/{LESSON}.ipynb"]
    assert stale_notebooks(root)[0][1] == "edited"
    notes = []
    build(root, run=False, report=notes.append)
    backups = list((root / "work" / "backups" / "exercises").glob(f"{LESSON}-*.ipynb"))
    assert len(backups) == 1 and backups[0].read_bytes() == filled
    assert len(notes) == 1 and str(backups[0].relative_to(root)) in notes[0] and "grader start" in notes[0]
    assert FILLED not in generated.read_text(encoding="utf-8")      # regenerated
    assert [copy.read_bytes() for copy in copies] == kept
    assert stale_notebooks(root) == []
    build(root, run=False, report=notes.append)                     # nothing new to keep
    assert len(notes) == 1


def test_build_keeps_a_file_that_is_not_a_notebook(root):
    generated = root / "exercises" / f"{LESSON}.ipynb"
    generated.write_text("{ half a notebook", encoding="utf-8")
    build(root, run=False, report=lambda message: None)
    (backup,) = (root / "work" / "backups" / "exercises").iterdir()
    assert backup.read_text(encoding="utf-8") == "{ half a notebook"
    assert json.loads(generated.read_text(encoding="utf-8"))["metadata"]["course"]["lesson"] == LESSON


def test_build_check_says_an_edited_notebook_is_edited(root):
    build(root, run=False)
    fill(root / "exercises" / f"{LESSON}.ipynb")
    cli = grader("build", "--check", "--root", root)
    assert cli.returncode == 1
    assert f"stale: exercises/{LESSON}.ipynb has been edited by hand" in cli.stderr and "grader start" in cli.stderr


def test_make_notebooks_never_destroys_a_filled_notebook(tmp_path):
    """`make course` builds the notebooks with `make notebooks`; run that recipe in a copy of the project."""
    if not shutil.which("make"):
        pytest.skip("make is not installed")
    for name in ("lessons", "exercises", "solutions", "grader"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "Makefile", tmp_path / "Makefile")
    copy = start(tmp_path, LESSON, "carol")
    kept = fill(copy)
    filled = fill(tmp_path / "exercises" / f"{LESSON}.ipynb")
    venv = Path(sys.executable).parents[1]
    run = subprocess.run(["make", "-o", f"{venv}/.installed", "notebooks", f"VENV={venv}", "BUILD_FLAGS=--no-execute"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert copy.read_bytes() == kept
    (backup,) = (tmp_path / "work" / "backups" / "exercises").iterdir()
    assert backup.read_bytes() == filled and "kept it as work/backups/exercises/" in run.stderr


def test_the_self_check_cell_checks_the_notebook_next_to_it(root):
    """Run the copy's last cell in a real kernel started in the copy's folder, as JupyterLab does."""
    shutil.copytree(ROOT / "grader", root / "grader", ignore=shutil.ignore_patterns("__pycache__"))
    copy = start(root, LESSON, "dave")      # the cell finds the repository above it and runs its grader
    nb = nbformat.read(copy, as_version=4)
    nb.cells = [nb.cells[-1]]
    NotebookClient(nb, timeout=240, kernel_name="python3", resources={"metadata": {"path": str(copy.parent)}}).execute()
    text = "".join(o.get("text", "") for o in nb.cells[0].outputs)
    assert f"自查：{copy}" in text and "总分 0/" in text and "隐藏检查" in text, text

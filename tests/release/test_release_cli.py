"""`python -m grader release --out DIR` / `--check DIR`: writing, refusing, and naming stale files."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader import release
from grader.paths import ROOT


def grader(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.fixture()
def copy(release_dir, tmp_path) -> Path:
    out = tmp_path / "course"
    shutil.copytree(release_dir, out)
    return out


def test_check_passes_on_a_fresh_release(copy):
    assert release.differences(release.build_files(ROOT), copy) == []


def test_check_names_stale_missing_and_extra_files(release_files, copy):
    (copy / "README.md").write_text("edited\n", encoding="utf-8")
    (copy / "grader" / "wire.py").unlink()
    (copy / "solutions").mkdir()
    (copy / "solutions" / "lesson07.ipynb").write_text("{}", encoding="utf-8")
    (copy / "work").mkdir()
    (copy / "work" / "mine.ipynb").write_text("{}", encoding="utf-8")        # a student's own folder: ignored
    problems = release.differences(release_files, copy)
    assert problems == ["README.md (stale)", "grader/wire.py (missing)", "solutions/lesson07.ipynb (not part of the release)"]


@pytest.mark.slow
def test_cli_check_exit_status(copy):
    ok = grader("release", "--check", str(copy))
    assert ok.returncode == 0, ok.stderr
    assert "in sync" in ok.stdout
    (copy / "lessons" / "lesson07.rubric.yml").write_text("lesson: lesson07\n", encoding="utf-8")
    stale = grader("release", "--check", str(copy))
    assert stale.returncode == 1
    assert "lessons/lesson07.rubric.yml (stale)" in stale.stderr


def test_refuses_a_folder_that_is_not_a_release(release_files, tmp_path):
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(release.ReleaseError, match="not empty"):
        release.write_release(release_files, tmp_path, ROOT)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_refuses_the_instructor_repository(release_files):
    with pytest.raises(release.ReleaseError, match="instructor repository"):
        release.write_release(release_files, ROOT, ROOT)
    with pytest.raises(release.ReleaseError, match="instructor repository"):
        release.write_release(release_files, ROOT.parent, ROOT)


def test_rewrite_removes_only_files_that_left_the_release(release_files, copy):
    manifest = json.loads((copy / release.MANIFEST).read_text(encoding="utf-8"))
    manifest["files"]["lessons/lesson06.qmd"] = "0" * 64                     # in the last release, gone now
    (copy / release.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    (copy / "lessons" / "lesson06.qmd").write_text("old", encoding="utf-8")
    (copy / "submissions" / "alice").mkdir(parents=True)
    (copy / "submissions" / "alice" / "lesson07.ipynb").write_text("{}", encoding="utf-8")
    removed = release.write_release(release_files, copy, ROOT)
    assert removed == ["lessons/lesson06.qmd"]
    assert (copy / "submissions" / "alice" / "lesson07.ipynb").is_file()
    assert release.differences(release_files, copy) == []


def test_strip_keeps_every_other_byte():
    text = ("---\ntitle: t\n---\n\nBefore.\r\n\n::: {.content-visible when-profile=\"answer\"}\nsecret\n"
            "```\n:::\n```\n:::\n\n::: {.content-hidden when-profile=\"answer\"}\nstudent only\n:::\nAfter.\n")
    out = release.student_source(text, Path("x.qmd"))
    assert out == "---\ntitle: t\n---\n\nBefore.\r\n\n\nstudent only\nAfter.\n"


def test_unclosed_div_is_an_error():
    from grader.lesson import LessonError

    with pytest.raises(LessonError, match="x.qmd:1: div opened here is never closed"):
        release.student_source("::: {.content-visible when-profile=\"answer\"}\nsecret\n", Path("x.qmd"))

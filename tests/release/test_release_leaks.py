"""The student release holds no part of the answer key, searched for by content in every file."""
from __future__ import annotations

import re

import pytest

import answer_key
from grader import release
from grader.lesson import load_lesson
from grader.paths import ROOT, lesson_names

NEEDLES = {
    "solution line": answer_key.solution_lines,
    "reference-answer sentence": answer_key.reference_sentences,
    "hidden seed or setting": answer_key.hidden_values,
    "text-rubric string": answer_key.rubric_text,
    "checks-module code": answer_key.checks_code,
}


@pytest.mark.parametrize("kind", sorted(NEEDLES))
def test_no_part_of_the_answer_key(kind, release_texts):
    needles = NEEDLES[kind]()
    assert needles, f"no {kind} found in the instructor's sources: the search would prove nothing"
    hits = answer_key.found(needles, release_texts)
    assert not hits, f"{len(hits)} {kind}(s) in the release:\n" + "\n".join(hits[:20])


@pytest.mark.parametrize("kind", sorted(NEEDLES))
def test_each_search_finds_what_it_looks_for(kind, release_texts):
    """Plant one needle of each kind in a copy of a release file: the search must report it."""
    needles = NEEDLES[kind]()
    needle = needles[len(needles) // 2]
    planted = answer_key.example(needle)
    texts = dict(release_texts, **{"README.md": release_texts["README.md"] + "\n" + planted + "\n"})
    assert answer_key.found([needle], texts), f"planted {planted!r} was not found"
    assert not answer_key.found([needle], release_texts)


def test_no_answer_profile(release_texts):
    """No answer-edition content or switch in the book (the lesson parser's own code names the
    convention, so grader/ is not searched)."""
    book = {rel: text for rel, text in release_texts.items() if not rel.startswith("grader/")}
    assert any(rel.endswith(".qmd") for rel in book)
    for rel, text in book.items():
        assert not re.search(r"""(when|unless)-profile\s*=\s*["']?answer""", text), rel
    assert "_quarto-answer.yml" not in release_texts


def test_lessons_are_the_student_edition(release_files, tmp_path):
    """Each released source parses to exactly the student edition's cells, every line of it is a line of
    the instructor's source, in order, and nothing answer-only is left."""
    from grader.selfcheck import student_lesson

    for name in lesson_names(ROOT):
        full = load_lesson(ROOT / "lessons" / f"{name}.qmd")
        text = release_files[f"lessons/{name}.qmd"].decode()
        lesson = student_lesson(ROOT / "lessons" / f"{name}.qmd", text)
        key = lambda c: (c.kind, c.source, c.role, c.course_id)  # noqa: E731
        assert [key(c) for c in lesson.cells] == [key(c) for c in full.student_cells()]
        assert not lesson.find("solution") and not lesson.find("reference")
        source = iter((ROOT / "lessons" / f"{name}.qmd").read_text(encoding="utf-8").splitlines(keepends=True))
        assert all(any(line == kept for kept in source) for line in text.splitlines(keepends=True)), \
            "the release changed a line instead of only removing lines"


def test_public_rubric_summary_has_only_public_keys(release_files):
    import yaml

    for name in lesson_names(ROOT):
        summary = yaml.safe_load(release_files[f"lessons/{name}.rubric.yml"])
        keys = release.PUBLIC_KEYS
        assert set(summary) <= set(keys["top"]) | {"pass", "exercises", "sandbox", "criteria", "vetoes"}
        assert set(summary["pass"]) <= set(keys["pass"])
        assert all(set(e) <= set(keys["exercise"]) for e in summary["exercises"])
        assert set(summary["sandbox"]) <= set(keys["sandbox"])
        assert all(set(c) <= set(keys["criterion"]) for c in summary["criteria"])
        assert all(set(v) <= set(keys["veto"]) for v in summary["vetoes"])
        full = yaml.safe_load((ROOT / "lessons" / f"{name}.rubric.yml").read_text(encoding="utf-8"))
        # What the lesson's 评分规则 cell renders is the same in both.
        for key in ("max_score", "pass_score"):
            assert summary[key] == full[key]
        assert [(c["id"], c["title"], c["points"], c["description"]) for c in summary["criteria"]] == \
               [(c["id"], c["title"], c["points"], c["description"]) for c in full["criteria"]]
        assert [(v["id"], v["title"]) for v in summary["vetoes"]] == [(v["id"], v["title"]) for v in full["vetoes"]]


def test_ships_only_the_self_checks_grader_modules(release_files):
    modules = {rel.split("/")[1][:-3] for rel in release_files if rel.startswith("grader/") and rel.endswith(".py")}
    assert modules == set(release.grader_modules(ROOT)) | {"__init__", "__main__", "cli"}
    assert not modules & release.INSTRUCTOR_ONLY
    assert {"selfcheck", "sandbox", "harness", "integrity"} <= modules
    assert not any(rel.startswith(("solutions/", "tests/")) or rel.endswith(".checks.py") for rel in release_files)


def test_release_notebook_is_what_build_writes(release_files):
    from grader.notebooks import build_notebook

    try:
        from grader.build import render
    except SyntaxError:  # pragma: no cover - build.py mid-edit elsewhere
        pytest.skip("grader/build.py does not import")
    for name in lesson_names(ROOT):
        expected = render(build_notebook(load_lesson(ROOT / "lessons" / f"{name}.qmd"), "exercise"))
        assert release_files[f"exercises/{name}.ipynb"].decode() == expected

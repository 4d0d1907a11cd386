"""The hand-graded text corpus is well formed, big enough, and its validator rejects bad entries."""
import importlib.util
import re
from collections import Counter
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("text_corpus_stats", HERE / "stats.py")
stats = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(stats)

MINIMUM = {"dev.yml": (130, 28), "holdout.yml": (48, 12), "fresh.yml": (80, 20), "fresh2.yml": (80, 20), "fresh3.yml": (100, 25),
           "fresh4.yml": (60, 15), "fresh5.yml": (90, 18), "fresh6.yml": (90, 18), "fresh7.yml": (90, 18), "fresh8.yml": (90, 18),
           "fresh9.yml": (90, 18), "fresh10.yml": (90, 18), "fresh11.yml": (90, 18),
           "fresh12.yml": (90, 18), "fresh13.yml": (90, 18),
           "fresh14.yml": (90, 18), "fresh15.yml": (90, 18), "fresh16.yml": (90, 18),
           "fresh17.yml": (90, 18), "fresh18.yml": (90, 18), "fresh19.yml": (90, 18), "fresh20.yml": (90, 18),
           "fresh21.yml": (90, 18), "fresh22.yml": (90, 18), "fresh23.yml": (90, 18), "fresh24.yml": (90, 18),
           "fresh25.yml": (90, 18), "fresh26.yml": (90, 18), "fresh27.yml": (90, 18), "fresh28.yml": (90, 18),
           "fresh29.yml": (90, 18), "fresh30.yml": (90, 18), "fresh31.yml": (90, 18), "fresh32.yml": (90, 18),
           "fresh33.yml": (90, 18), "fresh34.yml": (90, 18), "fresh35.yml": (90, 18), "fresh36.yml": (90, 18),
           "fresh37.yml": (90, 18), "fresh38.yml": (90, 18), "fresh39.yml": (90, 18), "fresh40.yml": (90, 18),
           "fresh41.yml": (90, 18), "fresh42.yml": (90, 18), "fresh43.yml": (90, 18), "fresh44.yml": (90, 18),
           "fresh45.yml": (90, 18), "fresh46.yml": (90, 18), "fresh47.yml": (90, 18), "fresh48.yml": (90, 18),
           "fresh49.yml": (90, 18), "fresh50.yml": (90, 18), "fresh51.yml": (90, 18), "fresh52.yml": (90, 18),
           "fresh53.yml": (90, 18), "fresh54.yml": (90, 18), "fresh55.yml": (90, 18), "fresh56.yml": (90, 18),
           "fresh57.yml": (90, 18), "fresh58.yml": (90, 18), "fresh59.yml": (90, 18), "fresh60.yml": (90, 18),
           "fresh61.yml": (90, 18), "fresh62.yml": (90, 18), "fresh63.yml": (90, 18), "fresh64.yml": (90, 18),
           "fresh65.yml": (90, 18), "fresh66.yml": (90, 18), "fresh67.yml": (90, 18), "fresh68.yml": (90, 18),
           "fresh69.yml": (90, 18), "fresh70.yml": (90, 18), "fresh71.yml": (90, 18), "fresh72.yml": (90, 18),
           "fresh73.yml": (90, 18), "fresh74.yml": (90, 18), "fresh75.yml": (90, 18), "fresh76.yml": (90, 18),
           "fresh77.yml": (90, 18), "fresh78.yml": (90, 18), "fresh79.yml": (90, 18), "fresh80.yml": (90, 18)}
BARE_NAMES = re.compile(r"`?[A-Za-z_][\w.]*(\(\))?`?|[→,，、>\-\s]")      # names, arrows and separators only
INVISIBLE = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")


@pytest.fixture(scope="module")
def corpus():
    return {name: stats.load(HERE / name) for name in MINIMUM}


def test_entries_are_valid_and_ids_unique_across_files(corpus):
    seen = {}
    errors = [p for name, entries in corpus.items() for p in stats.problems(entries, name, seen)]
    assert errors == []


@pytest.mark.parametrize("name", sorted(MINIMUM))
def test_size_per_question(corpus, name):
    total, per_question = MINIMUM[name]
    entries = corpus[name]
    assert len(entries) >= total
    counts = Counter(e["question"] for e in entries)
    assert {q: counts[q] >= per_question for q in stats.MAX_POINTS} == dict.fromkeys(stats.MAX_POINTS, True)


def test_no_answer_appears_in_two_files(corpus):
    """Each file is somebody's own answers. Two writers may meet only where the answer cannot differ: a
    verbatim copy of the reference answer (style `copy`, or `copy-zw` when two writers' scripts inserted the
    invisible characters the same way), text pasted back verbatim (`pasted-feedback`: a check cell's printed
    output is the same for everybody) or a bare list of code names (the two kernels; the call chain of the
    shared vLLM notes), also with a few words around them (「第一行：`_rejection_kernel`。第二行：…都在 … 里。」:
    at most a dozen characters that are not names)."""
    seen, repeated = {}, []
    for name, entries in corpus.items():
        for e in entries:
            text = e["answer"].strip()
            if (e["style"] in ("copy", "copy-zw", "pasted-feedback", "names-only") or len(text) < 40
                    or len(re.sub(r"\W", "", BARE_NAMES.sub("", text))) <= 12):
                continue
            if text and seen.setdefault(text, name) != name:
                repeated.append((name, e["id"]))
    assert repeated == []


def test_every_question_has_every_grade(corpus):
    for name, entries in corpus.items():
        grades = {(e["question"], e["points"]) for e in entries}
        for q, top in stats.MAX_POINTS.items():
            assert {(q, p) for p in range(top + 1)} <= grades, (name, q)


def test_zero_width_copies_really_hide_characters(corpus):
    copies = [e for entries in corpus.values() for e in entries if e["style"] == "copy-zw"]
    assert copies
    assert [e["id"] for e in copies if not any(c in e["answer"] for c in INVISIBLE)] == []


def test_correct_because_close_always_vetoes(corpus):
    bad = [e["id"] for entries in corpus.values() for e in entries
           if "correct_because_close" in e["misconceptions"]
           and "veto.correctness_vs_performance" not in e["vetoes"]]
    assert bad == []


def _entry(**overrides):
    e = {"id": "x-1", "question": "Q1", "style": "terse", "answer": "a", "points": 1,
         "misconceptions": [], "vetoes": [], "why": "because"}
    e.update(overrides)
    return e


@pytest.mark.parametrize("entry, fragment", [
    ({k: v for k, v in _entry().items() if k != "why"}, "missing why"),
    (_entry(extra=1), "unknown field extra"),
    (_entry(question="Q4"), "question 'Q4'"),
    (_entry(question="code-map", points=2), "not in 0..1"),
    (_entry(points=True), "not in 0..2"),
    (_entry(points=2, misconceptions=["resample_from_p"]), "exceeds the cap 0"),
    (_entry(misconceptions=["made_up"]), "unknown id"),
    (_entry(vetoes=["veto.nope"]), "unknown id"),
    (_entry(why="  "), "why must say why"),
    (_entry(answer=None), "answer must be a string"),
])
def test_validator_rejects_bad_entries(entry, fragment):
    errors = stats.problems([entry], "t.yml", {})
    assert any(fragment in e for e in errors), errors


def test_validator_rejects_duplicate_ids():
    errors = stats.problems([_entry(), _entry()], "t.yml", {})
    assert any("duplicate id" in e for e in errors)


def test_readme_tables_are_current(corpus):
    readme = (HERE / "README.md").read_text(encoding="utf-8")
    for name, entries in corpus.items():
        assert stats.report(name, entries).strip() in readme, f"README.md is stale for {name}: rerun stats.py"

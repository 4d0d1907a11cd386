"""The text grader against the hand-graded corpora (tests/lesson07/text_corpus): the issue's targets.

dev.yml, holdout.yml and augment.yml are always measured; fresh.yml and fresh2.yml (blind sets written
by others) are measured whenever they are present, so CI reports the unseen sets too. Targets, per
corpus: exact agreement >= 80%, zero dangerous errors (a wrong answer at full marks without review, a
full answer at 0 without review, a false or a missed veto), no word salad or pasted feedback at full
marks without review, review on at most a third of the answers."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import text_agreement  # noqa: E402

ALWAYS = ("dev.yml", "holdout.yml", "augment.yml")
BLIND = ("fresh.yml", "fresh2.yml")


@pytest.fixture(scope="module", params=ALWAYS + BLIND)
def graded(request):
    entries = text_agreement.load(request.param)
    if entries is None:
        if request.param in ALWAYS:
            pytest.fail(f"{request.param} is missing")
        pytest.skip(f"{request.param} is not present (a blind set, measured when it is)")
    rows = text_agreement.grade_corpus(entries)
    return rows, text_agreement.summarise(rows)


def test_no_dangerous_errors(graded):
    _, summary = graded
    assert {k: v for k, v in summary["dangerous"].items() if v} == {}


def test_agreement_at_least_80_percent(graded):
    rows, summary = graded
    wrong = [(r["id"], r["want"], r["got"]) for r in rows if r["want"] != r["got"]]
    assert summary["agreement"] >= 0.8, wrong


def test_review_at_most_a_third(graded):
    _, summary = graded
    assert summary["review_rate"] <= 1 / 3 + 1e-9


def test_no_salad_or_pasted_feedback_at_full_marks_without_review(graded):
    rows, _ = graded
    bad = [r["id"] for r in rows if r["style"] in ("salad", "pasted-feedback") and r["got"] == r["max"] and not r["review"]]
    assert bad == []


def test_benchmark_reads_a_corpus_by_path(tmp_path, capsys):
    path = tmp_path / "mine.yml"
    path.write_text("- {id: x-1, question: Q3, style: salad, answer: '前缀、链式法则、联合分布', points: 0}\n", encoding="utf-8")
    assert text_agreement.main(["--corpus", str(path)]) == 0
    assert "1/1 = 100.0%" in capsys.readouterr().out


def test_benchmark_rejects_a_malformed_corpus(tmp_path):
    path = tmp_path / "bad.yml"
    path.write_text("- {id: x-1, answer: hi}\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="expected a list of entries"):
        text_agreement.main(["--corpus", str(path)])

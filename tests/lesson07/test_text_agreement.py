"""The text grader against the hand-graded corpus (tests/lesson07/text_corpus): agreement, review rate,
dangerous errors. dev.yml is what the rules were developed against; holdout.yml is run but was never read."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import text_agreement  # noqa: E402


@pytest.fixture(scope="module", params=["dev.yml", "holdout.yml"])
def summary(request):
    entries = text_agreement.load(request.param)
    if not entries:
        pytest.skip(f"{request.param} is not present")
    return text_agreement.summarise(text_agreement.grade_corpus(entries))


def test_no_dangerous_errors(summary):
    assert {k: v for k, v in summary["dangerous"].items() if v} == {}


def test_agreement_and_review_rate(summary):
    assert summary["agreement"] >= 0.8
    assert summary["review_rate"] <= 1 / 3

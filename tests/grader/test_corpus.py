"""Grade the whole corpus in one batch (`grade --jobs 2`) and compare with expected.yml."""
import json
from pathlib import Path

import pytest
import yaml
from make_corpus import corpus, make_large

from grader.commands import grade_main
from grader.cli import parser

CORPUS = Path(__file__).resolve().parent / "corpus"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    big = tmp_path_factory.mktemp("large")
    expected = yaml.safe_load((CORPUS / "expected.yml").read_text(encoding="utf-8"))
    expected.update(make_large(big))
    out = tmp_path_factory.mktemp("out") / "grades.json"
    args = parser().parse_args(["grade", str(CORPUS), str(big), "--jobs", "2", "--timeout", "10", "--quiet", "--json", str(out)])
    status = grade_main(args)
    results = {Path(r["submission"]).name: r for r in json.loads(out.read_text(encoding="utf-8"))["results"]}
    return status, expected, results


def test_corpus_is_large_enough_and_expectations_are_current():
    expected = yaml.safe_load((CORPUS / "expected.yml").read_text(encoding="utf-8"))
    assert len(expected) >= 40
    assert {f"{name}.ipynb": result for name, (_, result) in corpus().items()} == expected, \
        "expected.yml is stale: run python tests/grader/make_corpus.py"
    assert sorted(p.name for p in CORPUS.glob("*.ipynb")) == sorted(expected)


def test_every_submission_has_a_result(graded):
    status, expected, results = graded
    assert status == 1
    assert sorted(results) == sorted(expected)


def test_results_match_expected(graded):
    _, expected, results = graded
    problems = []
    for name, want in sorted(expected.items()):
        got = results[name]
        score = want["score"]
        if isinstance(score, list) and not score[0] <= got["score"] <= score[1] or isinstance(score, int) and got["score"] != score:
            problems.append(f"{name}: score {got['score']} != {score}")
        if got["passed"] != want["passed"]:
            problems.append(f"{name}: passed {got['passed']}")
        if sorted({e["id"] for e in got["errors"]}) != sorted(want["errors"]):
            problems.append(f"{name}: errors {[(e['id'], e['message'][:80]) for e in got['errors']]}")
        if sorted(v["id"] for v in got["vetoes"]) != sorted(want["vetoes"]):
            problems.append(f"{name}: vetoes {[v['id'] for v in got['vetoes']]}")
        # Notebooks of this corpus share answers, so the batch's collusion check rightly flags them:
        # a review flag that comes with a collusion entry is that, not a disagreement.
        if "needs_review" in want and got["needs_review"] != want["needs_review"] and not got.get("collusion"):
            problems.append(f"{name}: needs_review {got['needs_review']}")
        checks = {c["id"]: c["passed"] for c in got["checks"]}
        if want.get("visible_pass") and not checks.get("visible.assertions"):
            problems.append(f"{name}: the visible assertions should pass")
        for lost in want.get("lost", []):
            if next(c for c in got["criteria"] if c["id"] == lost)["points"] != 0:
                problems.append(f"{name}: {lost} should be 0")
    assert not problems, "\n".join(problems)


def test_identical_answers_in_one_batch_are_reported_as_possible_collusion(graded):
    _, _, results = graded
    pairs = {(c["answer"], Path(c["other"]).name) for c in results["correct_halfsum.ipynb"].get("collusion", [])}
    assert ("Q1", "correct_min_int.ipynb") in pairs or any(a == "Q1" for a, _ in pairs)
    assert results["correct_halfsum.ipynb"]["needs_review"]


def test_vetoes_and_integrity_errors_carry_evidence(graded):
    _, _, results = graded
    veto = results["veto_peak_speedup.ipynb"]["vetoes"][0]
    assert "3 倍" in veto["evidence"]
    error = results["tamper_loosened_tolerance.ipynb"]["errors"][0]["message"]
    assert "1e-1" in error and "行" in error

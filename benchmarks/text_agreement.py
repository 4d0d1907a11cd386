"""How far the text grader agrees with the hand-graded lesson-7 corpus.

Usage:  .venv/bin/python benchmarks/text_agreement.py [--show] [--json PATH]

For dev.yml and holdout.yml (tests/lesson07/text_corpus/) separately it prints the exact agreement
on points, the confusion matrix per question (rows: the person's points, columns: the grader's), the
review rate (answers with needs_review, a misconception, or a veto) and the dangerous errors:
- wrong_full: a wrong answer (the person gave less than full marks) at full marks without review;
- full_zero: a full answer (the person gave full marks) at 0 without review;
- false_veto / missed_veto: a veto the person did not give, or one the person gave that did not fire.
`--show` lists the disagreements of dev.yml (never of the holdout, which is the measure on answers
the rules were not written against).
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CORPUS = ROOT / "tests" / "lesson07" / "text_corpus"


def grade_corpus(entries: list[dict]) -> list[dict]:
    """One row per entry: the person's and the grader's points, review, vetoes."""
    from grader.grade import context
    from grader.text import score_answer
    from grader.vetoes import find_vetoes

    ctx = context("lesson07")
    criteria = {c.answer: c for c in ctx.rubric.text_criteria}
    rows = []
    for e in entries:
        criterion = criteria[e["question"]]
        result = score_answer(e["answer"], criterion, ctx.references.get(e["question"]), None, ctx.rubric.feedback)
        hits = find_vetoes({e["question"]: e["answer"]}, ctx.rubric.vetoes, ctx.rubric.feedback)
        vetoes = sorted({h.id for h in hits})
        rows.append({"id": e["id"], "question": e["question"], "style": e.get("style", ""), "want": e["points"],
                     "got": result.points, "max": criterion.points, "review": result.needs_review or bool(hits),
                     "confidence_reason": result.confidence_reason, "want_vetoes": sorted(e.get("vetoes") or []),
                     "got_vetoes": vetoes, "flags": list(result.flags),
                     "misconceptions": [m["id"] for m in result.evidence.get("misconceptions", [])],
                     "want_misconceptions": sorted(e.get("misconceptions") or [])})
    return rows


def summarise(rows: list[dict]) -> dict:
    n = len(rows)
    exact = sum(r["want"] == r["got"] for r in rows)
    review = sum(r["review"] for r in rows)
    dangerous = {
        "wrong_full": [r["id"] for r in rows if r["want"] < r["max"] and r["got"] == r["max"] and not r["review"]],
        "full_zero": [r["id"] for r in rows if r["want"] == r["max"] and r["got"] == 0 and not r["review"]],
        "false_veto": [r["id"] for r in rows if set(r["got_vetoes"]) - set(r["want_vetoes"])],
        "missed_veto": [r["id"] for r in rows if set(r["want_vetoes"]) - set(r["got_vetoes"])],
    }
    confusion = {}
    for q in sorted({r["question"] for r in rows}):
        counts = Counter((r["want"], r["got"]) for r in rows if r["question"] == q)
        top = max(r["max"] for r in rows if r["question"] == q)
        confusion[q] = [[counts.get((w, g), 0) for g in range(top + 1)] for w in range(top + 1)]
    return {"answers": n, "exact": exact, "agreement": exact / n if n else 0.0, "review": review,
            "review_rate": review / n if n else 0.0, "dangerous": dangerous, "confusion": confusion}


def load(name: str) -> list[dict] | None:
    path = CORPUS / name
    if not path.is_file():
        return None
    return yaml.safe_load(path.read_text(encoding="utf-8")) or []


def print_summary(name: str, s: dict) -> None:
    print(f"## {name}: {s['answers']} answers")
    print(f"exact agreement {s['exact']}/{s['answers']} = {s['agreement']:.1%}; "
          f"review {s['review']}/{s['answers']} = {s['review_rate']:.1%}")
    for q, matrix in s["confusion"].items():
        head = " ".join(f"g{g}" for g in range(len(matrix)))
        print(f"  {q:9} person\\grader {head}")
        for w, row in enumerate(matrix):
            print(f"  {'':9} p{w}{'':12}" + " ".join(f"{v:2d}" for v in row))
    counts = {k: len(v) for k, v in s["dangerous"].items()}
    print(f"dangerous errors: {counts}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--show", action="store_true", help="list dev.yml disagreements")
    ap.add_argument("--json", help="write the summaries here")
    ap.add_argument("--dangerous", action="store_true", help="list the ids of dev.yml's dangerous errors")
    args = ap.parse_args(argv)
    out = {}
    for name in ("dev.yml", "holdout.yml"):
        entries = load(name)
        if entries is None:
            print(f"## {name}: not present")
            continue
        rows = grade_corpus(entries)
        out[name] = summarise(rows)
        print_summary(name, out[name])
        if args.dangerous and name == "dev.yml":
            print(out[name]["dangerous"])
        if args.show and name == "dev.yml":
            for r in rows:
                if r["want"] != r["got"] or r["want_vetoes"] != r["got_vetoes"]:
                    print(f"  ✗ {r['id']}: person {r['want']} grader {r['got']} review={r['review']} "
                          f"flags={r['flags']} mis={r['misconceptions']} vetoes {r['want_vetoes']}→{r['got_vetoes']} "
                          f"{r['confidence_reason']}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

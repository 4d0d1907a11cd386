"""How far the text grader agrees with the hand-graded lesson-7 corpus.

Usage:  .venv/bin/python benchmarks/text_agreement.py [--corpus PATH ...] [--cv] [--show] [--json PATH]

For dev.yml, holdout.yml and augment.yml (tests/lesson07/text_corpus/) separately, or for the files
named with --corpus (any corpus in the same format, e.g. a blind set), it prints the exact agreement
on points, the confusion matrix per question (rows: the person's points, columns: the grader's), the
review rate (answers with needs_review, a veto, or a veto doubt: grader/vetoes.veto_doubts) and the dangerous errors:
- wrong_full: a wrong answer (the person gave less than full marks) at full marks without review;
- full_zero: a full answer (the person gave full marks) at 0 without review;
- false_veto / missed_veto: a veto the person did not give, or one the person gave that neither fired nor
  was raised as a doubt (a doubt quotes the sentence and makes the submission pending_review: a person
  decides it). Vetoes left to a person as a doubt are counted separately.
`--show` lists the disagreements of every corpus read.

`--cv` cross-validates the engine's tunable thresholds (the confidence and copy settings of `text:`):
for each answer style of dev+holdout in turn, the thresholds are chosen from a small grid on the other
styles (most exact agreements, then fewest dangerous errors, then least review) and the held-out
style is graded with them (leave-one-style-out); likewise 5-fold over the answers. It reports the
pooled held-out agreement. The evidence rules themselves are hand-written data, not fitted: the
honest measure for them is a corpus nobody here has read (run it with --corpus).
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


DEFAULT = ("dev.yml", "holdout.yml", "augment.yml")
GRID = {"long_answer_chars": (80, 120, 200), "substantial_chars": (50, 80, 140), "aligned_copy": (0.8, 0.85, 0.92)}


def grade_corpus(entries: list[dict], overrides: dict | None = None) -> list[dict]:
    """One row per entry: the person's and the grader's points, review, vetoes. `overrides`: text settings
    to use instead of the rubric's (the cross-validation grid)."""
    from dataclasses import replace

    from grader.grade import context
    from grader.text import score_answer
    from grader.vetoes import argued_beside_names, find_vetoes, from_misconceptions, merge_linked, veto_doubts

    ctx = context("lesson07")
    criteria = {c.answer: c.text for c in ctx.rubric.text_criteria}
    if overrides:
        criteria = {k: replace(c, settings=replace(c.settings, **overrides)) for k, c in criteria.items()}
    rows = []
    for e in entries:
        criterion = criteria[e["question"]]
        result = score_answer(e["answer"], criterion, ctx.references.get(e["question"]), None, ctx.rubric.feedback,
                              lesson_text=ctx.prose)
        hits = find_vetoes({e["question"]: e["answer"]}, ctx.rubric.vetoes, ctx.rubric.feedback)
        doubted = veto_doubts({e["question"]: e["answer"]}, ctx.rubric.vetoes, ctx.rubric.feedback)
        linked = from_misconceptions([c for c in ctx.rubric.text_criteria if c.answer == e["question"]],
                                     {c.id: result for c in ctx.rubric.text_criteria if c.answer == e["question"]},
                                     ctx.rubric.vetoes)
        hits, doubted = merge_linked(hits, doubted, linked)
        doubted = argued_beside_names(doubted, [c for c in ctx.rubric.text_criteria if c.answer == e["question"]],
                                      {c.id: result for c in ctx.rubric.text_criteria if c.answer == e["question"]},
                                      ctx.rubric.vetoes)
        vetoes = sorted({h.id for h in hits})
        doubts = sorted({h.id for h in doubted} - set(vetoes))
        rows.append({"id": e["id"], "question": e["question"], "style": e.get("style", ""), "want": e["points"],
                     "got": result.points, "max": criterion.points, "review": result.needs_review or bool(hits) or bool(doubts),
                     "confidence_reason": result.confidence_reason, "want_vetoes": sorted(e.get("vetoes") or []),
                     "got_vetoes": vetoes, "doubts": doubts, "flags": list(result.flags),
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
        "missed_veto": [r["id"] for r in rows if set(r["want_vetoes"]) - set(r["got_vetoes"]) - set(r["doubts"])],
    }
    # a veto the grader did not raise but left to a person as a doubt (the submission is pending_review)
    vetoes_doubted = [r["id"] for r in rows if (set(r["want_vetoes"]) - set(r["got_vetoes"])) & set(r["doubts"])]
    confusion = {}
    for q in sorted({r["question"] for r in rows}):
        counts = Counter((r["want"], r["got"]) for r in rows if r["question"] == q)
        top = max(r["max"] for r in rows if r["question"] == q)
        confusion[q] = [[counts.get((w, g), 0) for g in range(top + 1)] for w in range(top + 1)]
    return {"answers": n, "exact": exact, "agreement": exact / n if n else 0.0, "review": review,
            "review_rate": review / n if n else 0.0, "dangerous": dangerous, "vetoes_doubted": vetoes_doubted,
            "confusion": confusion}


def load(name: str) -> list[dict] | None:
    """A corpus by file name in tests/lesson07/text_corpus/ or by path; None when it is not there."""
    path = Path(name) if ("/" in str(name) or Path(name).is_file()) else CORPUS / name
    if not path.is_file():
        return None
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    if not isinstance(data, list) or not all(isinstance(e, dict) and {"id", "question", "answer", "points"} <= set(e)
                                             for e in data):
        raise SystemExit(f"{path}: expected a list of entries with id, question, answer, points (see the corpus README)")
    return data


def _pick(rows_by_config: dict, keep) -> tuple:
    """The config with the most exact agreements on the kept rows, then fewest dangerous errors, then least review."""
    def key(cfg):
        rows = [r for r in rows_by_config[cfg] if keep(r)]
        s = summarise(rows)
        return (s["exact"], -sum(len(v) for v in s["dangerous"].values()), -s["review"])
    return max(rows_by_config, key=key)


def cross_validate(entries: list[dict]) -> dict:
    """Leave-one-style-out and 5-fold cross-validation of the GRID thresholds (module docstring)."""
    import itertools

    names = list(GRID)
    configs = list(itertools.product(*(GRID[n] for n in names)))
    rows_by_config = {cfg: grade_corpus(entries, dict(zip(names, cfg))) for cfg in configs}
    out = {}
    styles = sorted({e.get("style", "") for e in entries})
    folds = {"leave-one-style-out": [(lambda r, st=st: r["style"] == st) for st in styles],
             "5-fold": [(lambda r, k=k: int(r["id"].encode().hex(), 16) % 5 == k) for k in range(5)]}
    for name, tests in folds.items():
        held = []
        chosen = []
        for test in tests:
            cfg = _pick(rows_by_config, lambda r, t=test: not t(r))
            chosen.append(dict(zip(names, cfg)))
            held += [r for r in rows_by_config[cfg] if test(r)]
        out[name] = summarise(held)
        out[name]["chosen"] = chosen
    return out


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
    print(f"dangerous errors: {counts}; vetoes left to a person as a doubt: {len(s['vetoes_doubted'])}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", action="append", metavar="PATH",
                    help="grade this corpus file (repeatable); default: " + ", ".join(DEFAULT))
    ap.add_argument("--cv", action="store_true", help="cross-validate the thresholds over dev+holdout")
    ap.add_argument("--show", action="store_true", help="list the disagreements")
    ap.add_argument("--json", help="write the summaries here")
    ap.add_argument("--dangerous", action="store_true", help="list the ids of the dangerous errors")
    args = ap.parse_args(argv)
    out = {}
    for name in args.corpus or DEFAULT:
        entries = load(name)
        if entries is None:
            print(f"## {name}: not present")
            if args.corpus:
                return 2
            continue
        rows = grade_corpus(entries)
        out[name] = summarise(rows)
        print_summary(name, out[name])
        if args.dangerous:
            print({k: v for k, v in out[name]["dangerous"].items() if v})
        if args.show:
            for r in rows:
                if r["want"] != r["got"] or r["want_vetoes"] != r["got_vetoes"]:
                    print(f"  ✗ {r['id']}: person {r['want']} grader {r['got']} review={r['review']} "
                          f"flags={r['flags']} mis={r['misconceptions']} vetoes {r['want_vetoes']}→{r['got_vetoes']} doubts={r['doubts']} "
                          f"{r['confidence_reason']}")
    if args.cv:
        entries = (load("dev.yml") or []) + (load("holdout.yml") or [])
        for name, summary in cross_validate(entries).items():
            out["cv " + name] = summary
            print_summary(f"cross-validated ({name}, dev+holdout)", summary)
    if args.json:
        Path(args.json).write_text(json.dumps(out, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

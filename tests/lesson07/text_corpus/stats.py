"""Validate the hand-graded lesson-7 text corpus and print its grade distribution.

Usage:  python tests/lesson07/text_corpus/stats.py [dev.yml holdout.yml ...]

Without arguments it reads every corpus file next to this file (augment.yml aside). Exits 1 with one line per
problem when an entry is malformed (missing or unknown field, bad question, points out of range,
unknown misconception or veto id, duplicate id across the files, a grade above a stated
misconception's cap); otherwise prints Markdown tables (per question, per style) for README.md.
"""
from __future__ import annotations

import sys
from collections import Counter, defaultdict
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
FIELDS = ("id", "question", "style", "answer", "points", "misconceptions", "vetoes", "why")
MAX_POINTS = {"code-map": 1, "Q1": 2, "Q2": 2, "Q3": 2}
# misconception id -> cap, as GUIDE.md lists them
CAPS = {
    "resample_from_p": 0,
    "residual_q_minus_p": 0,
    "accept_without_min": 1,
    "correct_because_close": 0,
    "only_acceptance": 0,
    "division_by_zero": 1,
    "draft_same_processing": 1,
    "truncation_efficiency": 0,
    "markov_chain": 1,
    "kv_rollback": 1,
    "greedy_argmax_rule": 1,
}
VETOES = {
    "veto.peak_speedup",
    "veto.universal_support",
    "veto.correctness_vs_performance",
    "veto.class_names_only",
}


def load(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    if not isinstance(data, list):
        raise SystemExit(f"{path}: expected a YAML list of entries, got {type(data).__name__}")
    return data


def problems(entries: list[dict], source: str, seen: dict[str, str]) -> list[str]:
    out = []
    for n, e in enumerate(entries, 1):
        where = f"{source} entry {n}"
        if not isinstance(e, dict):
            out.append(f"{where}: not a mapping")
            continue
        where = f"{source} {e.get('id', f'entry {n}')}"
        missing = [f for f in FIELDS if f not in e]
        extra = sorted(set(e) - set(FIELDS))
        if missing:
            out.append(f"{where}: missing {', '.join(missing)}")
        if extra:
            out.append(f"{where}: unknown field {', '.join(extra)}")
        if missing:
            continue
        if not isinstance(e["id"], str) or not e["id"]:
            out.append(f"{where}: id must be a non-empty string")
        elif e["id"] in seen:
            out.append(f"{where}: duplicate id (also in {seen[e['id']]})")
        else:
            seen[e["id"]] = source
        if e["question"] not in MAX_POINTS:
            out.append(f"{where}: question {e['question']!r} not in {sorted(MAX_POINTS)}")
            continue
        if not isinstance(e["style"], str) or not e["style"]:
            out.append(f"{where}: style must be a non-empty string")
        if not isinstance(e["answer"], str):
            out.append(f"{where}: answer must be a string (use '' for an empty answer)")
        if not isinstance(e["why"], str) or not e["why"].strip():
            out.append(f"{where}: why must say why")
        pts = e["points"]
        if not isinstance(pts, int) or isinstance(pts, bool) or not 0 <= pts <= MAX_POINTS[e["question"]]:
            out.append(f"{where}: points {pts!r} not in 0..{MAX_POINTS[e['question']]}")
            continue
        for key, known in (("misconceptions", CAPS), ("vetoes", VETOES)):
            val = e[key]
            if not isinstance(val, list) or any(v not in known for v in val):
                out.append(f"{where}: {key} {val!r} has an unknown id")
        if isinstance(e["misconceptions"], list):
            for m in e["misconceptions"]:
                if m in CAPS and pts > CAPS[m]:
                    out.append(f"{where}: {pts} points exceeds the cap {CAPS[m]} of {m}")
    return out


def grade_label(e: dict) -> str:
    top = MAX_POINTS[e["question"]]
    return "full" if e["points"] == top else ("zero" if e["points"] == 0 else "partial")


def table(title: str, rows: dict[str, Counter], cols: list[str]) -> str:
    lines = [f"| {title} | " + " | ".join(cols) + " | total |", "|---" * (len(cols) + 2) + "|"]
    for key in sorted(rows):
        c = rows[key]
        lines.append(f"| {key} | " + " | ".join(str(c[k]) for k in cols) + f" | {sum(c.values())} |")
    return "\n".join(lines)


def report(name: str, entries: list[dict]) -> str:
    by_q: dict[str, Counter] = defaultdict(Counter)
    by_style: dict[str, Counter] = defaultdict(Counter)
    for e in entries:
        by_q[e["question"]][f"{e['points']}"] += 1
        by_style[e["style"]][grade_label(e)] += 1
    total = Counter(grade_label(e) for e in entries)
    vetoed = sum(1 for e in entries if e["vetoes"])
    miscon = sum(1 for e in entries if e["misconceptions"])
    lengths = sorted(len(e["answer"]) for e in entries)
    parts = [
        f"### {name}: {len(entries)} answers",
        "",
        f"full {total['full']}, partial {total['partial']}, zero {total['zero']}; "
        f"{miscon} state a misconception, {vetoed} should veto; "
        f"answer length {lengths[0]}–{lengths[-1]} characters (median {lengths[len(lengths) // 2]}).",
        "",
        table("question \\ points", by_q, ["0", "1", "2"]),
        "",
        table("style \\ grade", by_style, ["full", "partial", "zero"]),
        "",
    ]
    return "\n".join(parts)


def corpus_files() -> list[Path]:
    """Every corpus file next to this one but augment.yml: dev, holdout, then fresh, fresh2, fresh3 … in order."""
    def order(path: Path):
        number = path.stem.removeprefix("fresh")       # fresh.yml is the first of the fresh sets
        if path.stem in ("dev", "holdout"):
            return (("dev", "holdout").index(path.stem), 0, "")
        if number == "" or number.isdigit():
            return (2, int(number or 1), "")
        return (3, 0, path.stem)
    return sorted((p for p in HERE.glob("*.yml") if p.name != "augment.yml"), key=order)


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or corpus_files()
    seen: dict[str, str] = {}
    loaded, errors = {}, []
    for path in paths:
        entries = load(path)
        errors += problems(entries, path.name, seen)
        loaded[path.name] = entries
    if errors:
        print("\n".join(errors), file=sys.stderr)
        return 1
    for name, entries in loaded.items():
        print(report(name, entries))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""`python -m grader review --apply FILE`: merge decisions into the overrides file `grade` reads.

FILE is either a filled-in `review.yml` (the editor route) or an overrides file the review page
exported (YAML or JSON). Every decision is written with its own `by` and `at`, so merging rounds
of review into one committed overrides file keeps who decided what. A later decision on the same
submission and criterion replaces the earlier one; clearing a veto removes an earlier
confirmation and the other way round. The merged text is validated by `load_overrides` before it
replaces the file (atomically); comments in the old file are not kept.
"""
from __future__ import annotations

import datetime as dt
import tempfile
from pathlib import Path

import yaml

from ..overrides import OverridesError, load_overrides, parse_entry
from ..report import write_atomic
from .queue_file import decisions as queue_decisions

HEADER = """\
# 教师改分（python -m grader grade ... --overrides 本文件）。由 `python -m grader review --apply` 合并；
# 键是学员 id（submissions/<学员>/…）或相对于评分目录的路径。格式见 grader/overrides.py。
"""


def _read(path: Path):
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise OverridesError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise OverridesError(f"{path}: not valid YAML or JSON: {exc}") from None


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()


def incoming(path: Path, by: str | None = None) -> tuple[dict, int]:
    """({key: Decision}, number of undecided queue groups) from a review.yml or an exported overrides file."""
    doc = _read(path)
    if isinstance(doc, dict) and "groups" in doc:
        who = (by or str(doc.get("by") or "")).strip()
        if not who:
            raise OverridesError(f"{path}: fill in `by:` (your name) or pass --by")
        at = _now()
        entries = queue_decisions(doc, str(path))
        open_groups = sum(1 for g in doc["groups"] if isinstance(g, dict) and g.get("points") is None
                          and not g.get("veto") and not any(isinstance(m, dict) and (m.get("points") is not None or m.get("veto"))
                                                            for m in g.get("members") or []))
        return {k: parse_entry(e, f"{path}: {k}", who, at) for k, e in entries.items()}, open_groups
    if isinstance(doc, dict) and "submissions" in doc:
        if by:
            doc = {**doc, "by": by}
        with tempfile.TemporaryDirectory() as tmp:      # load through the one parser, with the override's own defaults
            copy = Path(tmp) / path.name
            copy.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")
            return load_overrides(copy), 0
    raise OverridesError(f"{path}: expected a review queue (`groups:`) or an overrides file (`submissions:`)")


def entry_dict(decision) -> dict:
    """A Decision as a self-contained overrides entry (each criterion with its own by / at / note)."""
    out: dict = {}
    if decision.points:
        out["criteria"] = {cid: {"points": pts, **decision.details.get(cid, {"by": decision.by})}
                           for cid, pts in decision.points.items()}
    if decision.clear_vetoes:
        out["clear_vetoes"] = list(decision.clear_vetoes)
    if decision.confirm_vetoes:
        out["confirm_vetoes"] = list(decision.confirm_vetoes)
    if decision.note:
        out["note"] = decision.note
    out["by"] = decision.by
    if decision.at:
        out["at"] = decision.at
    return out


def merge(old: dict, new: dict) -> dict:
    """{key: entry}: the old file's decisions with the new ones laid over them."""
    merged = {key: entry_dict(d) for key, d in old.items()}
    for key, decision in new.items():
        entry = entry_dict(decision)
        if key not in merged:
            merged[key] = entry
            continue
        was = merged[key]
        criteria = {**was.get("criteria", {}), **entry.get("criteria", {})}
        clear = [v for v in was.get("clear_vetoes", []) if v not in decision.confirm_vetoes]
        confirm = [v for v in was.get("confirm_vetoes", []) if v not in decision.clear_vetoes]
        clear += [v for v in decision.clear_vetoes if v not in clear]
        confirm += [v for v in decision.confirm_vetoes if v not in confirm]
        notes = [n for n in (was.get("note"), entry.get("note")) if n]
        out = {}
        if criteria:
            out["criteria"] = criteria
        if clear:
            out["clear_vetoes"] = clear
        if confirm:
            out["confirm_vetoes"] = confirm
        if notes:
            out["note"] = "；".join(dict.fromkeys(notes))
        out["by"] = entry["by"]
        if entry.get("at"):
            out["at"] = entry["at"]
        merged[key] = out
    return merged


def apply(source: str | Path, target: str | Path, by: str | None = None) -> tuple[int, int]:
    """Merge `source` into the overrides file `target`; (submissions decided in source, open groups)."""
    source, target = Path(source), Path(target)
    new, open_groups = incoming(source, by)
    old = load_overrides(target) if target.exists() else {}
    text = HEADER + yaml.safe_dump({"submissions": merge(old, new)}, allow_unicode=True, sort_keys=False, width=100)
    with tempfile.TemporaryDirectory() as tmp:
        check = Path(tmp) / target.name
        check.write_text(text, encoding="utf-8")
        load_overrides(check)                       # never write a file that `grade` would refuse
    write_atomic(target, text)
    return len(new), open_groups

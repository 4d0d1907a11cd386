"""Instructor overrides: a YAML file that sets criterion points or clears vetoes per submission.

    # overrides.yml
    by: 王老师                      # optional, shown in reports (default: the file name)
    submissions:
      submissions/alice/lesson07.ipynb:   # the path as given to `grade`, or just the file name
        criteria: {Q2: 2}
        clear_vetoes: [veto.peak_speedup]
        note: 已核对：「3 倍」引自论文并注明了条件。

Keys are matched against the submission path as given, then its resolved path, then its name.
"""
from __future__ import annotations

from pathlib import Path

import yaml

from .score import Override


class OverridesError(ValueError):
    pass


def load_overrides(path: str | Path, rubric_lookup=None) -> dict:
    """submission key -> Override. `rubric_lookup(criterion_id)` -> max points, to validate values."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise OverridesError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise OverridesError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("submissions", {}), dict):
        raise OverridesError(f"{path}: expected a mapping with a `submissions` mapping")
    by_default = str(data.get("by") or path.name)
    out = {}
    for key, entry in (data.get("submissions") or {}).items():
        where = f"{path}: submissions.{key}"
        if not isinstance(entry, dict):
            raise OverridesError(f"{where}: expected a mapping")
        unknown = set(entry) - {"criteria", "clear_vetoes", "note", "by"}
        if unknown:
            raise OverridesError(f"{where}: unknown keys {sorted(unknown)}")
        points = entry.get("criteria") or {}
        if not isinstance(points, dict):
            raise OverridesError(f"{where}.criteria: expected a mapping of criterion id to points")
        for criterion_id, value in points.items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise OverridesError(f"{where}.criteria.{criterion_id}: points must be a non-negative integer")
            if rubric_lookup is not None:
                top = rubric_lookup(criterion_id)
                if top is None:
                    raise OverridesError(f"{where}.criteria.{criterion_id}: no such criterion in the rubric")
                if value > top:
                    raise OverridesError(f"{where}.criteria.{criterion_id}: {value} is more than the {top} points it is worth")
        clear = entry.get("clear_vetoes") or []
        if not isinstance(clear, list) or not all(isinstance(v, str) for v in clear):
            raise OverridesError(f"{where}.clear_vetoes: expected a list of veto ids")
        out[str(key)] = Override(dict(points), tuple(clear), str(entry.get("note") or ""), str(entry.get("by") or by_default))
    return out


def override_for(overrides: dict, submission: str) -> Override | None:
    if not overrides:
        return None
    path = Path(submission)
    for key in (submission, str(path.resolve()), path.name):
        if key in overrides:
            return overrides[key]
    return None

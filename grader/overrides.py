"""Instructor overrides: a YAML (or JSON) file of decisions, one entry per submission.

    # overrides.yml
    by: 王老师                        # optional default for every entry (default: the file name)
    at: "2026-07-07T10:00:00+08:00"   # optional default time of the decisions
    submissions:
      alice:                          # the student id, or the path relative to the graded folder,
        criteria:                     # or the path as given to `grade`
          Q2: 2                       # points, or a mapping with the decision's own by / at / note:
          Q3: {points: 1, note: 推导第二步有误, at: "2026-07-07T10:05:00+08:00"}
        clear_vetoes: [veto.peak_speedup]     # the veto was wrong: drop it
        confirm_vetoes: [veto.class_names]    # the veto stands: no longer awaiting review
        note: 已核对：「3 倍」引自论文并注明了条件。
        by: 李助教                    # optional, overrides the file's `by`

Files written before `at`, `confirm_vetoes` and per-criterion mappings existed stay valid.

A key must identify one submission of the batch (`resolve`): the path as given, its resolved
path, the path relative to a graded folder or the current folder, or the student id
(`submissions/<student>/<file>.ipynb`, else the file's stem; a bare file name counts only where it
is the student id's file, i.e. outside student folders). A key that names several submissions,
or a file name that every student folder shares, is an OverridesError (a usage error: exit 2).
Keys that name no submission of this batch are returned for a warning: a class-wide overrides
file is normal when a pull request grades one notebook.
"""
from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path, PurePosixPath

import yaml

from .paths import student_of
from .score import Override

ENTRY_KEYS = {"criteria", "clear_vetoes", "confirm_vetoes", "note", "by", "at"}
CRITERION_KEYS = {"points", "note", "by", "at"}


class OverridesError(ValueError):
    pass


# The review page's richer decisions (confirmed vetoes, when, per-criterion notes) are plain
# `score.Override` fields now; the old name stays for callers.
Decision = Override


def _when(value, where: str) -> str:
    """`at` as an ISO 8601 string (YAML turns an unquoted timestamp into a datetime)."""
    if value is None or value == "":
        return ""
    if isinstance(value, (_dt.datetime, _dt.date)):
        return value.isoformat()
    if isinstance(value, str):
        return value
    raise OverridesError(f"{where}: expected a date-time such as \"2026-07-07T10:00:00+08:00\"")


def _text(value, where: str) -> str:
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        raise OverridesError(f"{where}: expected text")
    return str(value)


def _points(value, where: str, criterion_id: str, rubric_lookup) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise OverridesError(f"{where}: points must be a non-negative integer")
    if rubric_lookup is not None:
        top = rubric_lookup(criterion_id)
        if top is None:
            raise OverridesError(f"{where}: no such criterion in the rubric")
        if value > top:
            raise OverridesError(f"{where}: {value} is more than the {top} points it is worth")
    return value


def _veto_ids(entry: dict, key: str, where: str) -> tuple[str, ...]:
    items = entry.get(key) or []
    if not isinstance(items, list) or not all(isinstance(v, str) and v for v in items):
        raise OverridesError(f"{where}.{key}: expected a list of veto ids")
    return tuple(items)


def parse_entry(entry, where: str, by_default: str, at_default: str = "", rubric_lookup=None) -> Decision:
    if not isinstance(entry, dict):
        raise OverridesError(f"{where}: expected a mapping")
    unknown = set(entry) - ENTRY_KEYS
    if unknown:
        raise OverridesError(f"{where}: unknown keys {sorted(map(str, unknown))} (known: {sorted(ENTRY_KEYS)})")
    by = _text(entry.get("by"), f"{where}.by") or by_default
    at = _when(entry.get("at"), f"{where}.at") or at_default
    criteria = entry.get("criteria") or {}
    if not isinstance(criteria, dict):
        raise OverridesError(f"{where}.criteria: expected a mapping of criterion id to points")
    points, details = {}, {}
    for criterion_id, value in criteria.items():
        here = f"{where}.criteria.{criterion_id}"
        criterion_id = str(criterion_id)
        detail = {"by": by}
        if at:
            detail["at"] = at
        if isinstance(value, dict):
            unknown = set(value) - CRITERION_KEYS
            if unknown:
                raise OverridesError(f"{here}: unknown keys {sorted(map(str, unknown))} (known: {sorted(CRITERION_KEYS)})")
            if "points" not in value:
                raise OverridesError(f"{here}: missing `points`")
            points[criterion_id] = _points(value["points"], f"{here}.points", criterion_id, rubric_lookup)
            detail["by"] = _text(value.get("by"), f"{here}.by") or by
            when = _when(value.get("at"), f"{here}.at") or at
            if when:
                detail["at"] = when
            note = _text(value.get("note"), f"{here}.note")
            if note:
                detail["note"] = note
        else:
            points[criterion_id] = _points(value, here, criterion_id, rubric_lookup)
        details[criterion_id] = detail
    clear = _veto_ids(entry, "clear_vetoes", where)
    confirm = _veto_ids(entry, "confirm_vetoes", where)
    both = sorted(set(clear) & set(confirm))
    if both:
        raise OverridesError(f"{where}: {both} both cleared and confirmed; choose one")
    return Decision(points, clear, _text(entry.get("note"), f"{where}.note"), by, confirm, at, details)


def load_overrides(path: str | Path, rubric_lookup=None) -> dict:
    """submission key -> Decision. `rubric_lookup(criterion_id)` -> max points, to validate values."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise OverridesError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise OverridesError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("submissions") or {}, dict):
        raise OverridesError(f"{path}: expected a mapping with a `submissions` mapping")
    by_default = _text(data.get("by"), f"{path}: by") or path.name
    at_default = _when(data.get("at"), f"{path}: at")
    return {str(key): parse_entry(entry, f"{path}: submissions.{key}", by_default, at_default, rubric_lookup)
            for key, entry in (data.get("submissions") or {}).items()}


def student_id(submission: str | Path) -> str:
    """`submissions/<student>/<file>.ipynb` -> student; any other path -> the file's stem (grader/paths.py)."""
    return student_of(submission)


def _norm(text: str) -> str:
    return PurePosixPath(os.path.normpath(str(text)).replace(os.sep, "/")).as_posix()


def names(submission: str, roots=()) -> set[str]:
    """Every key that identifies this submission."""
    path = Path(submission)
    resolved = path.resolve()
    found = {_norm(submission), str(resolved), student_id(submission)}
    for base in [Path.cwd(), *(Path(r) for r in roots)]:
        base = base.resolve()
        if base.is_dir() and resolved.is_relative_to(base):
            found.add(_norm(resolved.relative_to(base).as_posix()))
    if student_id(submission) == path.stem:   # outside student folders the file name names the student's file
        found.add(path.name)
    found.discard("")
    found.discard(".")
    return found


def resolve(overrides: dict, submissions, roots=()) -> tuple[dict, list[str]]:
    """({submission as given: Decision}, keys that name no submission of the batch).

    OverridesError when a key names several submissions, when two keys name the same one, or when
    a key is a file name shared by student folders (the bug this replaced: it matched everyone).
    """
    if not overrides:
        return {}, []
    index: dict[str, list[str]] = {}
    file_names: dict[str, list[str]] = {}
    for submission in submissions:
        for name in names(submission, roots):
            index.setdefault(name, []).append(submission)
        file_names.setdefault(Path(submission).name, []).append(submission)
    bound, unmatched, claimed = {}, [], {}
    for key, decision in overrides.items():
        matches = sorted(set(index.get(key) or index.get(_norm(key)) or []))
        if not matches and key in file_names:
            raise OverridesError(
                f"overrides key {key!r} is a file name, not a submission: it would match "
                f"{', '.join(sorted(file_names[key]))}; use the student id or the path relative to the graded folder")
        if len(matches) > 1:
            raise OverridesError(f"overrides key {key!r} matches {len(matches)} submissions: {', '.join(matches)}; "
                                 "use the path relative to the graded folder")
        if not matches:
            unmatched.append(key)
            continue
        submission = matches[0]
        if submission in claimed:
            raise OverridesError(f"overrides keys {claimed[submission]!r} and {key!r} both name {submission}")
        claimed[submission] = key
        bound[submission] = decision
    return bound, unmatched


def override_for(overrides: dict, submission: str) -> Override | None:
    """The decision for a submission from a `resolve`d mapping (keyed by the path as given)."""
    if not overrides:
        return None
    for key in (submission, _norm(submission), str(Path(submission).resolve())):
        if key in overrides:
            return overrides[key]
    return None

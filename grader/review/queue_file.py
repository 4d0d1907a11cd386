"""`review.yml`: the review queue as a file an instructor can decide in with an editor.

    by: 王老师                  # ← your name (becomes `by` in the overrides)
    groups:
      - id: Q1-1
        criterion: Q1           # the criterion decided (null: only vetoes to decide)
        max_points: 2
        points:                 # ← 0..max_points for every member; empty = not decided
        veto:                   # ← confirm (the veto stands) or clear (it does not), for every member
        note: ""
        members:
          - key: alice          # the overrides key (student id, or the path when ids repeat)
            provisional: 1
            vetoes: [veto.peak_speedup]
            answer: ...
            # points / veto / note here decide this member alone (a split group)

`decisions(data)` turns a filled-in queue into overrides entries; `python -m grader review --apply`
merges them into the overrides file.
"""
from __future__ import annotations

import yaml

from ..overrides import OverridesError

HEADER = """\
# 复核队列：由 `python -m grader review` 生成。在编辑器里决定，然后运行
#   python -m grader review --apply review.yml --overrides overrides.yml
# 每组填写 points（0 到 max_points，整组生效）与 veto（confirm：否决成立；clear：否决不成立），可写 note。
# 同一组的答案相同或几乎相同；要单独决定某一份，在它的 members 条目里写 points / veto / note。
# 留空表示未决定，--apply 会跳过。
"""


def queue_document(data: dict, by: str = "") -> dict:
    items = data["items"]
    groups = []
    for q in data["questions"]:
        label = q.get("criterion") or q.get("answer_id") or "veto"
        for n, g in enumerate(q["groups"], 1):
            first = items[g["items"][0]]
            members = []
            for k in g["items"]:
                it = items[k]
                member = {"key": it["key"], "submission": it["submission"], "provisional": it["points"],
                          "reasons": it["reasons"]}
                if it["vetoes"]:
                    member["vetoes"] = [v["id"] for v in it["vetoes"]]
                    member["veto_evidence"] = [v["evidence"] for v in it["vetoes"]]
                if it["collusion"]:
                    member["collusion"] = [c["other"] for c in it["collusion"]]
                if it["confidence_reason"]:
                    member["confidence_reason"] = it["confidence_reason"]
                member["answer"] = it["text"]
                members.append(member)
            group = {"id": f"{label}-{n}", "criterion": first["criterion"], "answer": first["answer_id"],
                     "max_points": first["max_points"], "points": None}
            if any(items[k]["vetoes"] for k in g["items"]):
                group["veto"] = None
            group["note"] = ""
            group["members"] = members
            groups.append(group)
    return {"by": by, "source": data.get("source", ""), "groups": groups}


class _Dumper(yaml.SafeDumper):
    """Multi-line answers as literal blocks (PyYAML falls back to quoting where a block cannot hold the text)."""


def _str(dumper, text: str):
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style="|" if "\n" in text else None)


_Dumper.add_representer(str, _str)


def dump_queue(data: dict, by: str = "") -> str:
    return HEADER + yaml.dump(queue_document(data, by), Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100)


def _points(value, where: str, top) -> int | None:
    if value is None or value == "":
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise OverridesError(f"{where}: points must be a non-negative integer or empty")
    if isinstance(top, int) and value > top:
        raise OverridesError(f"{where}: {value} is more than the {top} points it is worth")
    return value


def _veto(value, where: str) -> str | None:
    if value is None or value == "":
        return None
    if value not in ("confirm", "clear"):
        raise OverridesError(f"{where}: veto must be confirm, clear or empty, not {value!r}")
    return value


def decisions(doc, where: str = "review.yml") -> dict:
    """{key: overrides entry (criteria as {id: {points, note?}}, confirm_vetoes, clear_vetoes, note)}."""
    if not isinstance(doc, dict) or not isinstance(doc.get("groups"), list):
        raise OverridesError(f"{where}: expected a review queue with a `groups` list (as `python -m grader review` writes)")
    out: dict = {}
    for n, group in enumerate(doc["groups"]):
        here = f"{where}: groups[{n}]"
        if not isinstance(group, dict) or not isinstance(group.get("members"), list):
            raise OverridesError(f"{here}: expected a mapping with a `members` list")
        criterion = group.get("criterion")
        top = group.get("max_points")
        g_points = _points(group.get("points"), f"{here}.points", top)
        g_veto = _veto(group.get("veto"), f"{here}.veto")
        g_note = str(group.get("note") or "").strip()
        for m, member in enumerate(group["members"]):
            there = f"{here}.members[{m}]"
            if not isinstance(member, dict) or not isinstance(member.get("key"), str) or not member["key"]:
                raise OverridesError(f"{there}: expected a mapping with a `key`")
            points = _points(member.get("points"), f"{there}.points", top)
            points = g_points if points is None else points
            veto = _veto(member.get("veto"), f"{there}.veto") or g_veto
            note = str(member.get("note") or "").strip() or g_note
            vetoes = member.get("vetoes") or []
            if not isinstance(vetoes, list) or not all(isinstance(v, str) for v in vetoes):
                raise OverridesError(f"{there}.vetoes: expected a list of veto ids")
            entry = out.setdefault(member["key"], {})
            if criterion is not None and points is not None:
                c = {"points": points}
                if note:
                    c["note"] = note
                entry.setdefault("criteria", {})[str(criterion)] = c
            if veto and vetoes:
                entry.setdefault(f"{veto}_vetoes", [])
                entry[f"{veto}_vetoes"] += [v for v in vetoes if v not in entry[f"{veto}_vetoes"]]
            if note and (points is not None or (veto and vetoes)):
                label = criterion or group.get("answer") or ""
                entry.setdefault("notes", []).append(f"{label}：{note}" if label else note)
    for entry in out.values():
        notes = entry.pop("notes", [])
        if notes:
            entry["note"] = "；".join(notes)
    return {key: entry for key, entry in out.items() if entry}

"""Overrides files: old files still load, the richer format, and keys that name exactly one submission."""
import datetime as dt
import os
import shutil
import subprocess
import sys
import json
from pathlib import Path

import pytest

from grader.build import ROOT
from grader.overrides import Decision, OverridesError, load_overrides, override_for, resolve, student_id

CORPUS = Path(__file__).resolve().parent / "corpus"
VETO = CORPUS / "veto_peak_speedup.ipynb"


def write(tmp_path, text, name="overrides.yml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_an_old_file_still_loads(tmp_path):
    path = write(tmp_path, "by: 王老师\nsubmissions:\n  submissions/alice/lesson07.ipynb:\n    criteria: {Q2: 2}\n"
                           "    clear_vetoes: [veto.peak_speedup]\n    note: 已核对\n")
    decision = load_overrides(path)["submissions/alice/lesson07.ipynb"]
    assert isinstance(decision, Decision)
    assert decision.points == {"Q2": 2} and decision.clear_vetoes == ("veto.peak_speedup",)
    assert decision.note == "已核对" and decision.by == "王老师" and decision.confirm_vetoes == ()
    assert decision.overridden("Q2", 1) == {"from": 1, "to": 2, "by": "王老师"}
    assert decision.overridden("Q1", 1) is None


def test_the_richer_format(tmp_path):
    path = write(tmp_path, "by: 王老师\nat: 2026-07-07T10:00:00+08:00\nsubmissions:\n  alice:\n"
                           "    criteria:\n      Q1: 1\n      Q3: {points: 0, note: 第二步错了, by: 李助教, at: '2026-07-08T09:00:00Z'}\n"
                           "    confirm_vetoes: [veto.class_names]\n")
    decision = load_overrides(path)["alice"]
    assert decision.at == dt.datetime(2026, 7, 7, 10, tzinfo=dt.timezone(dt.timedelta(hours=8))).isoformat()
    assert decision.overridden("Q1", 2) == {"from": 2, "to": 1, "by": "王老师", "at": decision.at}
    assert decision.overridden("Q3", 2) == {"from": 2, "to": 0, "by": "李助教", "at": "2026-07-08T09:00:00Z",
                                            "note": "第二步错了"}
    assert decision.veto_decision("veto.class_names") == "confirmed" and decision.veto_decision("veto.other") is None


@pytest.mark.parametrize("text, problem", [
    ("submissions: {alice: {criteria: {Q1: -1}}}", "non-negative"),
    ("submissions: {alice: {criteria: {Q1: {note: x}}}}", "missing `points`"),
    ("submissions: {alice: {criteria: {Q1: {points: 1, colour: red}}}}", "unknown keys"),
    ("submissions: {alice: {clear_vetoes: [v], confirm_vetoes: [v]}}", "both cleared and confirmed"),
    ("submissions: {alice: {criteria: {Q9: 1}}}", "no such criterion"),
    ("submissions: {alice: {criteria: {Q1: 3}}}", "more than the 2 points"),
    ("submissions: {alice: {at: [1]}}", "date-time"),
    ("submissions: [alice]", "`submissions` mapping"),
])
def test_bad_entries_name_the_key(tmp_path, text, problem):
    with pytest.raises(OverridesError, match=problem) as err:
        load_overrides(write(tmp_path, text), {"Q1": 2}.get)
    assert "overrides.yml" in str(err.value)


def test_student_id():
    assert student_id("submissions/alice/lesson07.ipynb") == "alice"
    assert student_id("/x/submissions/bob/lesson07.ipynb") == "bob"
    assert student_id("tests/corpus/veto_peak_speedup.ipynb") == "veto_peak_speedup"


def class_of_two(tmp_path):
    paths = []
    for student in ("alice", "bob"):
        folder = tmp_path / "submissions" / student
        folder.mkdir(parents=True)
        shutil.copy(VETO, folder / "lesson07.ipynb")
        paths.append(str(folder / "lesson07.ipynb"))
    return paths


@pytest.mark.parametrize("key", ["alice", "alice/lesson07.ipynb", "submissions/alice/lesson07.ipynb"])
def test_keys_that_name_one_submission(tmp_path, monkeypatch, key):
    monkeypatch.chdir(tmp_path)
    paths = [str(Path(p).relative_to(tmp_path)) for p in class_of_two(tmp_path)]
    bound, unmatched = resolve({key: Decision(note="x"), "carol": Decision()}, paths, ["submissions"])
    assert list(bound) == ["submissions/alice/lesson07.ipynb"] and unmatched == ["carol"]
    assert override_for(bound, "submissions/alice/lesson07.ipynb").note == "x"
    assert override_for(bound, "submissions/bob/lesson07.ipynb") is None


def test_a_shared_file_name_is_not_a_key(tmp_path):
    paths = class_of_two(tmp_path)
    with pytest.raises(OverridesError, match="file name, not a submission") as err:
        resolve({"lesson07.ipynb": Decision()}, paths, [str(tmp_path / "submissions")])
    assert "alice" in str(err.value) and "bob" in str(err.value)
    with pytest.raises(OverridesError, match="file name"):       # one student in the batch: still not a key
        resolve({"lesson07.ipynb": Decision()}, paths[:1], [str(tmp_path / "submissions")])


def test_an_ambiguous_key_and_two_keys_for_one_submission(tmp_path):
    a, b = tmp_path / "a" / "submissions" / "alice", tmp_path / "b" / "submissions" / "alice"
    for folder in (a, b):
        folder.mkdir(parents=True)
        shutil.copy(VETO, folder / "lesson07.ipynb")
    paths = [str(a / "lesson07.ipynb"), str(b / "lesson07.ipynb")]
    with pytest.raises(OverridesError, match="matches 2 submissions"):
        resolve({"alice": Decision()}, paths, [str(tmp_path / "a"), str(tmp_path / "b")])
    with pytest.raises(OverridesError, match="both name"):
        resolve({"alice/lesson07.ipynb": Decision(), paths[0]: Decision()}, paths[:1], [str(tmp_path / "a" / "submissions")])


def test_a_flat_file_name_still_names_its_file(tmp_path):
    bound, _ = resolve({VETO.name: Decision(note="ok")}, [str(VETO)], [str(VETO)])
    assert bound[str(VETO)].note == "ok"


def grader(*args, cwd):
    return subprocess.run([sys.executable, "-m", "grader", *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=180, env={**os.environ, "COLUMNS": "120", "PYTHONPATH": str(ROOT)})


def test_regression_one_students_override_stays_with_that_student(tmp_path):
    """Issue 14, bug 2: every file is submissions/<student>/lesson07.ipynb, so a name key hit everyone."""
    class_of_two(tmp_path)
    write(tmp_path, "by: 王老师\nsubmissions:\n  alice:\n    clear_vetoes: [veto.peak_speedup]\n    note: 已核对来源\n")
    run = grader("grade", "submissions", "--overrides", "overrides.yml", "--json", "g.json", "--quiet", cwd=tmp_path)
    assert run.returncode == 1, run.stderr                      # bob still fails on the veto
    alice, bob = json.loads((tmp_path / "g.json").read_text(encoding="utf-8"))["results"]
    assert alice["submission"].endswith("alice/lesson07.ipynb") and alice["passed"] and alice["vetoes"] == []
    assert alice["override_note"] == "已核对来源"
    assert not bob["passed"] and [v["id"] for v in bob["vetoes"]] == ["veto.peak_speedup"]
    assert "override_note" not in bob and "vetoes_cleared" not in bob


def test_regression_a_file_name_key_is_a_usage_error(tmp_path):
    class_of_two(tmp_path)
    write(tmp_path, "submissions:\n  lesson07.ipynb:\n    clear_vetoes: [veto.peak_speedup]\n")
    run = grader("grade", "submissions", "--overrides", "overrides.yml", "--quiet", cwd=tmp_path)
    assert run.returncode == 2
    assert "submissions/alice/lesson07.ipynb" in run.stderr and "submissions/bob/lesson07.ipynb" in run.stderr

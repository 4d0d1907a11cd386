"""`python -m grader review`: grouping, the queue, escaping in the page, review.yml and --apply round trips."""
import html.parser
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from grader.build import ROOT
from grader.overrides import load_overrides
from grader.review import grouping
from grader.review.apply import apply
from grader.review.page import embed_json, render
from grader.review.queue import ReviewError, build_queue, load_reports
from grader.review.queue_file import decisions, dump_queue

CORPUS = Path(__file__).resolve().parent / "corpus"
HOSTILE = ["<script>window.pwned = 1</script>", '<img src=x onerror="window.pwned = 1">',
           '<a href="javascript:window.pwned = 1">点我</a>', "结论</script><script>window.pwned = 1</script>",
           "<!-- <script>window.pwned = 1</script>", "\u2028{{JS}}{{DATA}}\u2029"]


def contract_report(student, answers, *, q1=1, confidence="low", vetoes=(), collusion=(), status="pending_review"):
    """A report as the text-scoring contract describes it (keys beyond today's are optional)."""
    return {
        "submission": f"submissions/{student}/lesson07.ipynb", "student": student, "lesson": "lesson07",
        "score": 7, "max_score": 10, "threshold": 8, "passed": False, "status": status, "needs_review": True,
        "answers": answers,
        "criteria": [
            {"id": "code.main_path", "points": 2, "max_points": 2, "feedback": "ok", "title": "代码·主路径", "needs_review": False},
            {"id": "Q1", "points": q1, "max_points": 2, "feedback": "你的证明里，拒绝路径的贡献是怎么得到的？", "title": "Q1",
             "needs_review": confidence == "low", "kind": "text", "answer": "Q1", "confidence": confidence,
             "confidence_reason": "公式无法解析",
             "evidence": {"claims": [{"id": "accept", "label": "接受路径贡献 min(p,q)", "found": True,
                                      "sentence": answers.get("Q1", "")[:10] or None, "via": "sentence"},
                                     {"id": "reject", "label": "拒绝路径贡献", "found": False, "sentence": None, "via": "sentence"}],
                          "misconceptions": [], "formulas": [{"text": "min(p,q)+max(0,p-q)=p", "holds": True, "meaning": "恒等式"}],
                          "flags": [], "copy_share": 0.1}},
            {"id": "Q2", "points": 2, "max_points": 2, "feedback": "好", "title": "Q2", "needs_review": False,
             "kind": "text", "answer": "Q2", "confidence": "high", "confidence_reason": ""},
        ],
        "vetoes": [dict(v) for v in vetoes], "errors": [], "checks": [], "collusion": [dict(c) for c in collusion],
    }


PROOF = "接受路径对 y 的贡献是 min(p(y), q(y))，拒绝路径贡献 max(0, p(y) - q(y))，两者相加等于 p(y)。"


# --- grouping ---

def test_identical_near_identical_and_different_answers():
    texts = [PROOF, PROOF, PROOF.replace("相加", "加起来"), "接\u200b受" + PROOF[2:], "草稿模型越好，输出就越接近 target。", "", " "]
    groups = grouping.group(texts)
    members = [set(g.members) for g in groups]
    assert {0, 1, 2, 3} in members and {4} in members and {5, 6} in members
    assert sorted(i for g in groups for i in g.members) == list(range(len(texts)))
    assert next(g for g in groups if 0 in g.members).similarity >= grouping.THRESHOLD


def test_grouping_is_not_quadratic(monkeypatch):
    calls = []
    real = grouping.jaccard
    monkeypatch.setattr(grouping, "jaccard", lambda a, b: calls.append(1) or real(a, b))
    near = [PROOF + f"（第 {n} 份）" for n in range(500)]           # 500 distinct, near-identical answers
    groups = grouping.group(near)
    assert len(groups) == 1 and len(groups[0].members) == 500
    assert len(calls) <= 2 * grouping.BANDS * 500 + 500              # candidate pairs grow linearly, not n²/2
    calls.clear()
    distinct = [f"第{n}号学生写了完全不同的一段话：{n * 7919 % 10007} 关于 {n ** 3}" for n in range(500)]
    assert len(grouping.group(distinct)) > 400


# --- the queue ---

def test_queue_items_and_groups():
    reports = [
        contract_report("alice", {"Q1": PROOF, "Q2": "x"}),
        contract_report("bob", {"Q1": PROOF, "Q2": "x"}),
        contract_report("carol", {"Q1": "不需要残差，直接从 p 重采样即可。", "Q2": "y"}, confidence="high",
                        vetoes=[{"id": "veto.peak_speedup", "evidence": "总能快 3 倍", "answer": "Q2", "message": "m"}],
                        collusion=[{"answer": "Q1", "other": "submissions/dave/lesson07.ipynb", "similarity": 0.93}]),
        {**contract_report("erin", {"Q1": PROOF}), "criteria": [
            {"id": "Q1", "points": 2, "max_points": 2, "feedback": "", "title": "Q1", "needs_review": True,
             "answer": "Q1", "overridden": {"from": 1, "to": 2, "by": "王老师"}}]},
    ]
    data = build_queue(reports, read_notebooks=False)
    items = data["items"]
    assert [(i["key"], i["criterion"]) for i in items] == [("alice", "Q1"), ("bob", "Q1"), ("carol", "Q1"), ("carol", "Q2")]
    assert items[2]["reasons"] == ["pending_review", "collusion"] and items[2]["collusion"][0]["similarity"] == 0.93
    assert items[3]["vetoes"][0]["id"] == "veto.peak_speedup" and "veto" in items[3]["reasons"]
    q1 = data["questions"][0]
    assert q1["criterion"] == "Q1" and [g["items"] for g in q1["groups"]] == [[0, 1], [2]]


def test_older_reports_with_fields_missing():
    reports = [{"submission": "x.ipynb"},
               {"submission": "submissions/a/lesson07.ipynb", "criteria": [{"id": "Q3", "needs_review": True}],
                "vetoes": [{"id": "veto.v", "evidence": "e"}]}]
    data = build_queue(reports, read_notebooks=False)
    assert [(i["key"], i["criterion"]) for i in data["items"]] == [("a", "Q3"), ("a", None)]
    assert data["items"][0]["text"] is None and "<" not in render(data).split("review-data")[1].split("</script>")[0]


def test_keys_fall_back_to_the_path_when_student_ids_repeat():
    reports = [contract_report("alice", {"Q1": "a"}), {**contract_report("alice", {"Q1": "b"}), "submission": "late/submissions/alice/lesson07.ipynb"}]
    keys = [i["key"] for i in build_queue(reports, read_notebooks=False)["items"]]
    assert keys == ["submissions/alice/lesson07.ipynb", "late/submissions/alice/lesson07.ipynb"]


@pytest.mark.parametrize("text, problem", [("{", "not valid JSON"), ('{"results": 3}', "expected"),
                                           ('{"results": [{"score": 1}]}', "submission")])
def test_bad_report_files(tmp_path, text, problem):
    path = tmp_path / "g.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ReviewError, match=problem):
        load_reports(path)


# --- the page ---

class _Scripts(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.scripts, self._in, self.tags = [], None, []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in = dict(attrs)
            self.scripts.append([self._in, ""])

    def handle_endtag(self, tag):
        if tag == "script":
            self._in = None

    def handle_data(self, data):
        if self._in is not None:
            self.scripts[-1][1] += data


def test_the_page_is_inert_for_hostile_answers():
    answers = {"Q1": "\n".join(HOSTILE)}
    data = build_queue([contract_report(f"s{n}", answers) for n in range(2)] +
                       [contract_report("</script><script>x", {"Q1": HOSTILE[3]})], read_notebooks=False)
    page = render(data, title="<b>复核</b>")
    parser = _Scripts()
    parser.feed(page)
    assert [attrs.get("type") for attrs, _ in parser.scripts] == ["application/json", None]   # no script from the data
    assert not any(tag in ("img", "a") for tag, _ in parser.tags)
    embedded = parser.scripts[0][1]
    assert "<" not in embedded and ">" not in embedded and "\u2028" not in embedded
    assert json.loads(embedded) == data                                        # escaped, not altered
    assert "<title>&lt;b&gt;复核&lt;/b&gt;</title>" in page
    assert "http://" not in page and "https://" not in page                   # nothing from the network
    csp = next(a["content"] for t, a in parser.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert "default-src 'none'" in csp and "unsafe-inline" not in csp


def test_embed_json_escapes_what_ends_a_script():
    text = embed_json({"a": "</script><!--&\u2028"})
    assert "</" not in text and "<!--" not in text and json.loads(text) == {"a": "</script><!--&\u2028"}


# --- review.yml and --apply ---

def queue():
    return build_queue([contract_report("alice", {"Q1": PROOF}), contract_report("bob", {"Q1": PROOF}),
                        contract_report("carol", {"Q1": "另一种写法，完全不同。"}, confidence="high",
                                        vetoes=[{"id": "veto.peak_speedup", "evidence": "快 3 倍", "answer": "Q1", "message": "m"}])],
                       read_notebooks=False)


def test_review_yml_round_trip(tmp_path):
    doc = yaml.safe_load(dump_queue(queue()))
    assert [g["id"] for g in doc["groups"]] == ["Q1-1", "Q1-2"]
    assert [m["key"] for m in doc["groups"][0]["members"]] == ["alice", "bob"]
    doc["by"] = "王老师"
    doc["groups"][0]["points"] = 2
    doc["groups"][0]["note"] = "推导完整"
    doc["groups"][0]["members"][1]["points"] = 1                      # split: bob alone
    doc["groups"][1]["veto"] = "clear"
    assert decisions(doc) == {"alice": {"criteria": {"Q1": {"points": 2, "note": "推导完整"}}, "note": "Q1：推导完整"},
                              "bob": {"criteria": {"Q1": {"points": 1, "note": "推导完整"}}, "note": "Q1：推导完整"},
                              "carol": {"clear_vetoes": ["veto.peak_speedup"]}}
    review = tmp_path / "review.yml"
    review.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    target = tmp_path / "overrides.yml"
    assert apply(review, target) == (3, 0)
    loaded = load_overrides(target)
    assert loaded["alice"].points == {"Q1": 2} and loaded["alice"].overridden("Q1", 1)["by"] == "王老师"
    assert loaded["alice"].overridden("Q1", 1)["note"] == "推导完整" and loaded["alice"].overridden("Q1", 1)["at"]
    assert loaded["carol"].clear_vetoes == ("veto.peak_speedup",)


def test_apply_merges_rounds_and_keeps_who_decided(tmp_path):
    target = tmp_path / "overrides.yml"
    target.write_text("by: 王老师\nsubmissions:\n  alice:\n    criteria: {Q2: 1}\n    confirm_vetoes: [veto.v]\n", encoding="utf-8")
    export = tmp_path / "export.yml"      # what the page's export writes (JSON strings as YAML scalars)
    export.write_text('by: "李助教"\nat: "2026-07-07T02:00:00Z"\nsubmissions:\n  "alice":\n    criteria:\n'
                      '      "Q1": {points: 0, at: "2026-07-07T02:01:00Z", note: "\\u003c结论错\\u003e"}\n'
                      '    clear_vetoes: ["veto.v"]\n    note: "Q1：结论错"\n', encoding="utf-8")
    apply(export, target)
    alice = load_overrides(target)["alice"]
    assert alice.points == {"Q2": 1, "Q1": 0}
    assert alice.overridden("Q2", 2)["by"] == "王老师" and alice.overridden("Q1", 2) == {
        "from": 2, "to": 0, "by": "李助教", "at": "2026-07-07T02:01:00Z", "note": "<结论错>"}
    assert alice.clear_vetoes == ("veto.v",) and alice.confirm_vetoes == ()


def test_apply_refuses_bad_input_and_keeps_the_old_file(tmp_path):
    target = tmp_path / "overrides.yml"
    target.write_text("submissions: {alice: {criteria: {Q1: 1}}}\n", encoding="utf-8")
    bad = tmp_path / "review.yml"
    bad.write_text(yaml.safe_dump({"by": "王老师", "groups": [{"criterion": "Q1", "max_points": 2, "points": 5,
                                                               "members": [{"key": "alice"}]}]}), encoding="utf-8")
    from grader.overrides import OverridesError
    with pytest.raises(OverridesError, match="more than the 2"):
        apply(bad, target)
    nameless = tmp_path / "nameless.yml"
    nameless.write_text(yaml.safe_dump({"by": "", "groups": []}), encoding="utf-8")
    with pytest.raises(OverridesError, match="by"):
        apply(nameless, target)
    assert target.read_text(encoding="utf-8") == "submissions: {alice: {criteria: {Q1: 1}}}\n"


# --- end to end through the command line ---

def grader(*args, cwd):
    return subprocess.run([sys.executable, "-m", "grader", *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=180, env={**os.environ, "COLUMNS": "120", "PYTHONPATH": str(ROOT)})


def make_class(tmp_path, students):
    for student, source in students.items():
        folder = tmp_path / "submissions" / student
        folder.mkdir(parents=True)
        shutil.copy(CORPUS / source, folder / "lesson07.ipynb")


def test_grade_review_apply_grade(tmp_path):
    make_class(tmp_path, {"alice": "veto_peak_speedup.ipynb", "bob": "veto_peak_speedup.ipynb",
                          "carol": "text_keyword_lists.ipynb"})
    assert grader("grade", "submissions", "--json", "g.json", "--quiet", cwd=tmp_path).returncode == 1
    run = grader("review", "g.json", "--out", "review", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    page = (tmp_path / "review" / "review.html").read_text(encoding="utf-8")
    assert "review-data" in page and "已决定" in page
    doc = yaml.safe_load((tmp_path / "review" / "review.yml").read_text(encoding="utf-8"))
    vetoed = next(g for g in doc["groups"] if {m["key"] for m in g["members"]} == {"alice", "bob"}
                  and all(m.get("vetoes") for m in g["members"]))
    assert vetoed["members"][0]["answer"]                             # answer text read from the notebook (older report)
    vetoed["veto"] = "clear"
    for group in doc["groups"]:
        if group["criterion"] and all(m["key"] == "carol" for m in group["members"]):
            group["points"] = group["max_points"]
        elif group["criterion"] and group["points"] is None:     # every other group: the grader's points stand
            group["points"] = group["members"][0]["provisional"]
    doc["by"] = "王老师"
    (tmp_path / "review.yml").write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    run = grader("review", "--apply", "review.yml", "--overrides", "overrides.yml", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    run = grader("grade", "submissions", "--overrides", "overrides.yml", "--json", "final.json", "--quiet", cwd=tmp_path)
    results = {Path(r["submission"]).parent.name: r for r in json.loads((tmp_path / "final.json").read_text(encoding="utf-8"))["results"]}
    for student in ("alice", "bob"):
        assert results[student]["vetoes"] == [] and results[student]["vetoes_cleared"][0]["by"] == "王老师"
        assert results[student]["passed"] and results[student].get("status", "passed") == "passed"
    carol = results["carol"]
    decided = [c for c in carol["criteria"] if c.get("overridden")]
    assert decided and all(c["overridden"]["by"] == "王老师" and c["points"] == c["max_points"] for c in decided)
    assert carol.get("status") != "pending_review"
    again = grader("review", "final.json", "--out", "again", cwd=tmp_path)
    assert again.returncode == 0 and "0 个答案待复核" in again.stdout         # nothing left to decide


def test_review_usage_errors(tmp_path):
    (tmp_path / "g.json").write_text("[]", encoding="utf-8")
    assert grader("review", cwd=tmp_path).returncode == 2
    assert grader("review", "g.json", "--apply", "x.yml", cwd=tmp_path).returncode == 2
    assert grader("review", "missing.json", cwd=tmp_path).returncode == 2
    assert grader("review", "--apply", "missing.yml", cwd=tmp_path).returncode == 2
    run = grader("review", "g.json", cwd=tmp_path)
    assert run.returncode == 0 and (tmp_path / "review.html").is_file() and (tmp_path / "review.yml").is_file()

"""`python -m grader grade|check`: exit codes and every report format."""
import csv
import io
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from grader.build import ROOT

CORPUS = Path(__file__).resolve().parent / "corpus"
GOOD = CORPUS / "correct_ternary.ipynb"
WRONG = CORPUS / "wrong_no_min.ipynb"
VETO = CORPUS / "veto_peak_speedup.ipynb"
BROKEN = CORPUS / "broken_not_json.ipynb"


def grader(*args, env=None):
    return subprocess.run([sys.executable, "-m", "grader", *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "COLUMNS": "120", **(env or {})})


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    out = tmp_path_factory.mktemp("reports")
    paths = {kind: out / name for kind, name in
             (("json", "g.json"), ("markdown", "summary.md"), ("junit", "junit.xml"), ("csv", "book.csv"))}
    run = grader("grade", GOOD, WRONG, VETO, BROKEN, "--jobs", "2", *[a for k, p in paths.items() for a in (f"--{k}", p)])
    return run, paths


def test_batch_exit_code_and_terminal_tables(batch):
    run, _ = batch
    assert run.returncode == 1, run.stderr
    assert "correct_ternary.ipynb" in run.stdout and "10/10" in run.stdout and "否决 veto.peak_speedup" in run.stdout
    assert "4 份提交：1 份通过" in run.stdout


def test_json_contract(batch):
    _, paths = batch
    results = json.loads(paths["json"].read_text(encoding="utf-8"))["results"]
    assert [Path(r["submission"]).name for r in results] == [GOOD.name, WRONG.name, VETO.name, BROKEN.name]
    for r in results:
        assert {"submission", "lesson", "score", "max_score", "threshold", "passed", "needs_review", "criteria", "vetoes",
                "errors"} <= set(r)
        assert isinstance(r["score"], int) and isinstance(r["passed"], bool) and isinstance(r["needs_review"], bool)
        for c in r["criteria"]:
            assert {"id", "points", "max_points", "feedback"} <= set(c)
        for v in r["vetoes"]:
            assert {"id", "evidence"} <= set(v)
        for e in r["errors"]:
            assert {"id", "message"} <= set(e)
    assert results[0]["passed"] and results[0]["score"] == 10
    assert results[3]["errors"][0]["id"] == "invalid_notebook" and results[3]["max_score"] == 10
    assert [c["id"] for c in results[3]["criteria"]] == ["code.main_path", "code.boundary", "code.source_map", "Q1", "Q2", "Q3"]


def test_junit_has_one_testcase_per_criterion(batch):
    _, paths = batch
    root = ET.parse(paths["junit"]).getroot()
    suites = root.findall("testsuite")
    assert len(suites) == 4
    good = suites[0].findall("testcase")
    assert [t.get("name") for t in good] == ["code.main_path", "code.boundary", "code.source_map", "Q1", "Q2", "Q3"]
    assert all(t.find("failure") is None for t in good)
    wrong = {t.get("name"): t for t in suites[1].findall("testcase")}
    assert wrong["code.main_path"].find("failure") is not None
    assert any(t.get("name") == "veto.peak_speedup" for t in suites[2].findall("testcase"))
    assert suites[3].find("testcase/error") is not None


def test_csv_gradebook(batch):
    _, paths = batch
    rows = list(csv.DictReader(io.StringIO(paths["csv"].read_text(encoding="utf-8"))))
    assert len(rows) == 4
    assert rows[0]["score"] == "10" and rows[0]["passed"] == "true" and rows[0]["Q1"] == "2"
    assert rows[2]["vetoes"] == "veto.peak_speedup" and rows[3]["errors"] == "invalid_notebook"


def test_markdown_summary(batch):
    _, paths = batch
    text = paths["markdown"].read_text(encoding="utf-8")
    assert text.startswith("## 自动评分结果") and "| 提交 | 分数 |" in text and "<details>" in text


def test_gradescope_results(tmp_path):
    out = tmp_path / "results.json"
    run = grader("grade", GOOD, "--gradescope", out, "--quiet")
    assert run.returncode == 0, run.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["score"] == 10 and len(data["tests"]) == 6
    assert {"name", "score", "max_score", "output", "visibility"} <= set(data["tests"][0])


def test_usage_and_io_errors_exit_2(tmp_path):
    assert grader("grade", tmp_path / "nope.ipynb").returncode == 2
    assert grader("grade", tmp_path).returncode == 2                      # a folder without notebooks
    assert grader("grade", GOOD, WRONG, "--gradescope", tmp_path / "r.json").returncode == 2
    assert grader("grade").returncode == 2
    bad = tmp_path / "overrides.yml"
    bad.write_text("submissions: {x.ipynb: {criteria: {Q9: 1}}}", encoding="utf-8")
    assert grader("grade", GOOD, "--overrides", bad).returncode == 2
    (tmp_path / "file").write_text("", encoding="utf-8")
    run = grader("grade", GOOD, "--json", tmp_path / "file" / "g.json", "--quiet")
    assert run.returncode == 2 and "cannot write" in run.stderr


def test_overrides_are_applied_and_shown(tmp_path):
    overrides = tmp_path / "overrides.yml"
    overrides.write_text(f"by: 王老师\nsubmissions:\n  {VETO.name}:\n    clear_vetoes: [veto.peak_speedup]\n"
                         f"    criteria: {{Q3: 1}}\n    note: 已核对来源\n", encoding="utf-8")
    out = tmp_path / "g.json"
    run = grader("grade", VETO, "--overrides", overrides, "--json", out, "--quiet")
    result = json.loads(out.read_text(encoding="utf-8"))["results"][0]
    assert run.returncode == 0 and result["passed"] and result["score"] == 9
    assert result["vetoes"] == [] and result["vetoes_cleared"][0]["by"] == "王老师"
    q3 = next(c for c in result["criteria"] if c["id"] == "Q3")
    assert q3["overridden"] == {"from": 2, "to": 1, "by": "王老师"}


def test_check_on_the_untouched_exercise():
    run = grader("check", ROOT / "exercises" / "lesson07.ipynb")
    assert run.returncode == 1
    out = run.stdout
    assert "公开检查" in out and "assert abs(alpha - 0.5) < 1e-12" in out
    assert "隐藏检查：评分时还会运行 13 组隐藏检查" in out and "总分 0/10" in out   # 10 for the seed exercise, 3 for the challenge


def test_check_on_a_good_notebook_hides_hidden_inputs():
    run = grader("check", GOOD)
    assert run.returncode == 0
    assert "✓ assert residual == [1.0, 0.0]" in run.stdout and "总分 10/10" in run.stdout
    assert "50257" not in run.stdout and "0.2, 0.3, 0.5" not in run.stdout


def test_check_on_a_broken_file():
    run = grader("check", BROKEN)
    assert run.returncode == 1 and "invalid_notebook" in run.stdout

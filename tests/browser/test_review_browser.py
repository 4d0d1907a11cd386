"""The review page in a real browser: decide a group with the keyboard, export, apply, grade again."""
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.build import ROOT
from grader.review.page import render
from grader.review.queue import build_queue

CORPUS = ROOT / "tests" / "grader" / "corpus"
HOSTILE = ["<script>window.pwned = 1</script>", '<img src=x onerror="window.pwned = 1">',
           '<a href="javascript:window.pwned = 1">点我</a>', "结论</script><script>window.pwned = 1</script>",
           "<!-- <script>window.pwned = 1</script> -->"]


def grader(*args, cwd):
    return subprocess.run([sys.executable, "-m", "grader", *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=180, env={**os.environ, "COLUMNS": "120", "PYTHONPATH": str(ROOT)})


def open_page(browser, path: Path):
    browser.get(path.as_uri())
    deadline = time.time() + 20
    while browser.execute_script("return document.body && document.body.getAttribute('data-ready')") != "1":
        assert time.time() < deadline, f"the page did not become ready: {browser.get_log('browser')}"
        time.sleep(0.05)
    browser.execute_script("window.localStorage.clear()")


def press(browser, *keys):
    from selenium.webdriver.common.action_chains import ActionChains

    for key in keys:                                   # to whatever has focus, as a person types
        ActionChains(browser).send_keys(key).perform()


def wait_for_file(folder: Path, name: str) -> Path:
    deadline = time.time() + 20
    while not (folder / name).is_file() or any(folder.glob("*.crdownload")):
        assert time.time() < deadline, f"no {name} downloaded into {folder}: {sorted(p.name for p in folder.iterdir())}"
        time.sleep(0.1)
    return folder / name


def test_decide_a_group_with_the_keyboard_export_and_grade(browser, downloads, tmp_path):
    for student, source in {"alice": "veto_peak_speedup.ipynb", "bob": "veto_peak_speedup.ipynb",
                            "carol": "text_keyword_lists.ipynb"}.items():
        (tmp_path / "submissions" / student).mkdir(parents=True)
        shutil.copy(CORPUS / source, tmp_path / "submissions" / student / "lesson07.ipynb")
    first = grader("grade", "submissions", "--json", "g.json", "--quiet", cwd=tmp_path)
    assert first.returncode == 1, first.stderr
    assert grader("review", "g.json", "--out", "review", cwd=tmp_path).returncode == 0

    open_page(browser, tmp_path / "review" / "review.html")
    browser.refresh()                                  # with storage cleared
    open_page(browser, tmp_path / "review" / "review.html")
    progress = browser.find_element("id", "progress")
    total = int(progress.text.split("/")[1].split()[0])
    assert progress.text == f"0 / {total} 已决定" and total >= 3
    group = browser.find_element("id", "group")
    for _ in range(total):                              # the vetoed Q1 group (identical notebooks also
        if "否决 veto.peak_speedup" in group.text:      # make other groups, flagged as collusion)
            break
        press(browser, "j")
        group = browser.find_element("id", "group")
    assert "2 份答案" in group.text and "veto_peak_speedup" not in group.text     # alice and bob, one group
    assert "alice" in group.text and "bob" in group.text

    press(browser, "2", "x")                           # 2 points for the group, the veto does not stand
    assert browser.find_element("id", "progress").text == f"2 / {total} 已决定"
    press(browser, "j", "j")                           # move on, then back: decisions stay
    press(browser, "k", "k")
    assert "已决定" in browser.find_element("id", "group").text
    press(browser, "m", "来源已核对")                     # the note, typed after `m` focused it
    from selenium.webdriver.common.keys import Keys
    press(browser, Keys.ESCAPE)
    browser.find_element("id", "reviewer").send_keys("王老师")
    press(browser, Keys.ESCAPE)
    for old in downloads.glob("overrides*"):
        old.unlink()
    press(browser, "e")
    exported = wait_for_file(downloads, "overrides.yml")
    assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]

    target = tmp_path / "overrides.yml"
    assert grader("review", "--apply", exported, "--overrides", target, cwd=tmp_path).returncode == 0
    final = grader("grade", "submissions", "--overrides", target, "--json", "final.json", "--quiet", cwd=tmp_path)
    results = {Path(r["submission"]).parent.name: r
               for r in json.loads((tmp_path / "final.json").read_text(encoding="utf-8"))["results"]}
    for student in ("alice", "bob"):
        r = results[student]
        assert r["vetoes"] == [] and r["vetoes_cleared"][0]["by"] == "王老师" and r["passed"]
        assert r.get("status", "passed") == "passed"
        q1 = next(c for c in r["criteria"] if c.get("overridden"))
        assert q1["points"] == 2 and q1["overridden"]["by"] == "王老师"
        assert "来源已核对" in r["override_note"]
    carol = results["carol"]
    assert not any(c.get("overridden") for c in carol["criteria"]) and carol["vetoes"] == []
    assert final.returncode == 1                       # carol was not decided and still fails


def test_hostile_answers_stay_text(browser, tmp_path):
    answers = {"Q1": "\n".join(HOSTILE)}
    reports = [{"submission": f"submissions/s{n}/lesson07.ipynb", "lesson": "lesson07", "answers": answers,
                "criteria": [{"id": "Q1", "points": 1, "max_points": 2, "needs_review": True, "answer": "Q1",
                              "title": "<b>Q1</b>", "feedback": HOSTILE[1]}],
                "vetoes": [{"id": "veto.x", "answer": "Q1", "evidence": HOSTILE[0], "message": HOSTILE[2]}]}
               for n in range(2)]
    page = tmp_path / "review.html"
    page.write_text(render(build_queue(reports, read_notebooks=False)), encoding="utf-8")
    open_page(browser, page)
    assert browser.execute_script("return window.pwned") is None
    group = browser.find_element("id", "group")
    for text in HOSTILE[:4]:
        assert text in group.text
    assert not browser.find_elements("css selector", "main img, main a, main script, main b")
    press(browser, "1", "v")
    assert browser.execute_script("return window.pwned") is None
    assert browser.find_element("id", "progress").text == "2 / 2 已决定"

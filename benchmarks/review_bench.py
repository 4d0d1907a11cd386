"""Review page at class scale: queue, grouping and render time, page size, time to interactive.

    .venv/bin/python benchmarks/review_bench.py [--submissions 500] [--out DIR] [--no-browser]

Builds `--submissions` reports that follow the JSON contract (four text criteria each; answers
drawn from the lesson-7 development corpus, half verbatim, half lightly edited, so near-duplicate
groups form as they do in a class; about a quarter of the criteria low-confidence, some vetoes and
collusion pairs), then writes review.html and opens it in headless Chromium (selenium, Debian's
chromium-driver) to measure the time to interactive (navigation start -> the page's first render
done) and how long one keystroke takes (next group, points for a group). Prints one table.
"""
from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.review import grouping  # noqa: E402
from grader.review.page import render  # noqa: E402
from grader.review.queue import build_queue  # noqa: E402
from grader.review.queue_file import dump_queue  # noqa: E402

CORPUS = ROOT / "tests" / "lesson07" / "text_corpus" / "dev.yml"
QUESTIONS = {"code.source_map": "code-map", "Q1": "Q1", "Q2": "Q2", "Q3": "Q3"}
EDITS = ["", "。", "（我的理解）", "\n补充：以上是我自己的推导。", "，证毕"]


def pool() -> dict:
    answers: dict = {}
    for item in yaml.safe_load(CORPUS.read_text(encoding="utf-8")):
        answers.setdefault(item["question"], []).append(item["answer"])
    return answers


def reports(n: int, seed: int = 7, distinct: bool = False) -> list[dict]:
    rng = random.Random(seed)
    answers_by_q = pool()
    out = []
    for k in range(n):
        student = f"s{k:04d}"
        answers, criteria, vetoes, collusion = {}, [], [], []
        for cid, answer_id in QUESTIONS.items():
            options = answers_by_q.get(answer_id) or answers_by_q.get("Q1")
            text = rng.choice(options if distinct else options[: max(3, len(options) // 3)])  # popular answers
            if distinct:                                   # every answer its own: the page's worst case
                text = "".join(rng.choice("概率接受拒绝残差分布草稿目标模型采样输出等于因为所以") for _ in range(60)) + text
            elif rng.random() < 0.5:
                text = text + rng.choice(EDITS) + (str(rng.randrange(100)) if rng.random() < 0.3 else "")
            answers[answer_id] = text
            low = rng.random() < 0.25
            top = 1 if cid == "code.source_map" else 2
            criteria.append({"id": cid, "points": rng.randrange(top + 1), "max_points": top, "title": cid,
                             "feedback": "你的证明里，拒绝路径对输出 y 的贡献是怎么得到的？", "needs_review": low,
                             "kind": "text", "answer": answer_id, "confidence": "low" if low else "high",
                             "confidence_reason": "公式无法解析" if low else "",
                             "evidence": {"claims": [{"id": "c1", "label": "接受路径", "found": True,
                                                      "sentence": text[:20], "via": "sentence"}],
                                          "misconceptions": [], "formulas": [], "flags": [], "copy_share": 0.1}})
            if rng.random() < 0.04:
                vetoes.append({"id": "veto.peak_speedup", "evidence": text[:15], "answer": answer_id, "message": "绝对化的加速"})
            if rng.random() < 0.02:
                collusion.append({"answer": answer_id, "other": f"submissions/s{rng.randrange(n):04d}/lesson07.ipynb",
                                  "similarity": 0.91})
        out.append({"submission": f"submissions/{student}/lesson07.ipynb", "student": student, "lesson": "lesson07",
                    "score": 8, "max_score": 10, "threshold": 8, "passed": False, "status": "pending_review",
                    "needs_review": True, "answers": answers, "criteria": criteria, "vetoes": vetoes,
                    "errors": [], "checks": [], "collusion": collusion})
    return out


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,900"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)


KEY = """var t = performance.now();
document.body.dispatchEvent(new KeyboardEvent('keydown', {key: arguments[0], bubbles: true}));
return performance.now() - t;"""


def measure_browser(page: Path, loads: int = 3) -> dict:
    driver = browser()
    try:
        tti, nav = [], []
        for _ in range(loads):
            driver.get("about:blank")
            start = time.perf_counter()
            driver.get(page.as_uri())
            while driver.execute_script("return document.body && document.body.getAttribute('data-ready')") != "1":
                time.sleep(0.01)
            nav.append((time.perf_counter() - start) * 1000)
            tti.append(driver.execute_script("return window.reviewReadyAt"))
            driver.execute_script("window.localStorage.clear()")
        next_ms = [driver.execute_script(KEY, "j") for _ in range(30)]
        points_ms = [driver.execute_script(KEY, "1") for _ in range(30)]
        dom = driver.execute_script("return document.getElementsByTagName('*').length")
    finally:
        driver.quit()
    return {"tti_ms": statistics.median(tti), "get_ms": statistics.median(nav), "next_ms": statistics.median(next_ms),
            "points_ms": statistics.median(points_ms), "dom_nodes": dom}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--submissions", type=int, default=500)
    ap.add_argument("--out", help="keep review.html here (default: a temporary folder)")
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--distinct", action="store_true", help="every answer different (no groups to share a decision)")
    args = ap.parse_args()
    data_in = reports(args.submissions, distinct=args.distinct)
    t0 = time.perf_counter()
    data = build_queue(data_in, read_notebooks=False, source="bench")
    t1 = time.perf_counter()
    page = render(data)
    t2 = time.perf_counter()
    queue = dump_queue(data)
    groups = sum(len(q["groups"]) for q in data["questions"])
    texts = [i["text"] or "" for i in data["items"]]
    g0 = time.perf_counter()
    grouping.group(texts)
    g1 = time.perf_counter()
    folder = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="review_bench."))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "review.html").write_text(page, encoding="utf-8")
    rows = [("submissions", args.submissions), ("answers to review", len(data["items"])), ("groups", groups),
            ("queue + grouping (s)", f"{t1 - t0:.3f}"), ("grouping all answers in one pass (s)", f"{g1 - g0:.3f}"),
            ("render (s)", f"{t2 - t1:.3f}"), ("review.html (KiB)", f"{len(page.encode()) / 1024:.0f}"),
            ("review.yml (KiB)", f"{len(queue.encode()) / 1024:.0f}")]
    if not args.no_browser:
        b = measure_browser(folder / "review.html")
        rows += [("time to interactive, headless Chromium (ms, median of 3)", f"{b['tti_ms']:.0f}"),
                 ("driver.get -> ready (ms, median of 3)", f"{b['get_ms']:.0f}"),
                 ("keystroke: next group (ms, median of 30)", f"{b['next_ms']:.1f}"),
                 ("keystroke: points for a group (ms, median of 30)", f"{b['points_ms']:.1f}"),
                 ("DOM elements after load", b["dom_nodes"])]
    width = max(len(r[0]) for r in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    print(f"page: {folder / 'review.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Helpers for the engine tests (imported by conftest.py and the tests)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOY = ROOT / "tests" / "toy" / "lessons"

SOLUTION_FILLS = {"softmax": ["(x - top) / temperature", "-sum(p * math.log(p) for p in probs if p > 0)"],
                  "argmax": ["logits.index(best)"]}
T1_ANSWER = ("温度趋于 0 时，分布会变成最大 logit 处的 one-hot。"
             "这是因为除以温度后，最大者与其余者的差被放大，指数权重全部集中在最大的 logit 上。")


def grader(*args, cwd=ROOT, timeout=180):
    return subprocess.run([sys.executable, "-m", "grader", *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)

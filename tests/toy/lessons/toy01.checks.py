"""Hidden checks of the toy lesson: `softmax_with_temperature` (scored) and `argmax_with_value` (选做)."""
from __future__ import annotations

import math
import random

from grader.checks import Check, HiddenContext


def oracle(logits: list[float], temperature: float) -> dict:
    top = max(logits)
    weights = [math.exp((x - top) / temperature) for x in logits]
    total = sum(weights)
    probs = [w / total for w in weights]
    return {"probs": probs, "entropy": -sum(p * math.log(p) for p in probs if p > 0)}


def _problem(value, expected: dict, tol: float) -> str:
    if type(value) is not dict or set(value) != {"probs", "entropy"}:
        return "返回值应为含 probs 与 entropy 两个键的字典"
    probs, entropy = value["probs"], value["entropy"]
    if type(probs) is not list or len(probs) != len(expected["probs"]) or not all(type(p) in (int, float) for p in probs):
        return "probs 应为与 logits 等长的数字列表"
    if any(abs(a - b) > tol for a, b in zip(probs, expected["probs"])):
        return "probs 与精确结果不一致"
    if type(entropy) not in (int, float) or abs(entropy - expected["entropy"]) > tol:
        return "entropy 与精确结果不一致"
    return ""


def _judge(tol: float):
    def judge(check: Check, outcomes) -> tuple[bool, str]:
        bad = [(_problem(o.value, e, tol) if o.ok else o.describe()) for o, e in zip(outcomes, check.expected)]
        bad = [b for b in bad if b]
        return (not bad, f"{len(outcomes)} 个用例全部一致" if not bad else f"{len(bad)}/{len(outcomes)} 个用例不一致：{bad[0]}")
    return judge


def _judge_raises(check: Check, outcomes) -> tuple[bool, str]:
    ok = all(not o.ok and o.error == "ValueError" for o in outcomes)
    return ok, "非法温度抛出 ValueError" if ok else "温度 ≤ 0 时没有抛出 ValueError"


def softmax(ctx: HiddenContext) -> list[Check]:
    cases = ctx.settings.get("cases")
    tol = ctx.settings.get("tolerance")
    if type(cases) is not int or cases < 1 or type(tol) is not float:
        raise ValueError("hidden.cases must be a positive int and hidden.tolerance a float")
    rng = random.Random(ctx.seed_for("softmax.random"))
    calls = []
    for _ in range(cases):
        size = rng.randint(1, 40)
        calls.append(([rng.gauss(0.0, 3.0) for _ in range(size)], rng.choice([0.1, 0.5, 1.0, 2.0, rng.uniform(0.05, 5)])))
    calls.append(([1000.0, 0.0, -1000.0], 1.0))        # overflow without the max shift
    return [
        Check("softmax.visible", "可见示例在评分器一侧复算", True, (([0.0, 0.0], 1.0),), _judge(tol),
              (oracle([0.0, 0.0], 1.0),)),
        Check("softmax.random", f"{len(calls)} 组随机 logits 与温度", False, tuple(calls), _judge(tol),
              tuple(oracle(*c) for c in calls)),
        Check("softmax.invalid", "温度 ≤ 0 抛出 ValueError", False, (([1.0], 0.0), ([1.0], -1.0)), _judge_raises),
    ]


def argmax(ctx: HiddenContext) -> list[Check]:
    rng = random.Random(ctx.seed_for("argmax"))
    calls = [([float(rng.randint(0, 3)) for _ in range(rng.randint(1, 8))],) for _ in range(30)]
    expected = tuple((c[0].index(max(c[0])), max(c[0])) for c in calls)

    def judge(check: Check, outcomes):
        bad = sum(1 for o, e in zip(outcomes, check.expected) if not (o.ok and o.value == e))
        return bad == 0, "全部一致" if not bad else f"{bad}/{len(outcomes)} 个用例不一致"
    return [Check("argmax.random", "随机 logits（含并列）", False, tuple(calls), judge, expected)]

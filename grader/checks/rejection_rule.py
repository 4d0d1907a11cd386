"""Hidden checks for lesson 7's `rejection_rule(target_probs, draft_probs, draft_token)`.

p = target, q = draft (the papers' letters). The function returns (α, r): the acceptance
probability min(1, p(x)/q(x)) and the residual distribution max(0, p − q) / Σ max(0, p − q)
(p itself when that sum is 0). The grader computes the same in float64 (`oracle`) and compares on
plain floats: |Δ| ≤ tolerance for α and for each entry of r, every entry of r ≥ 0, and exactly 0
wherever the oracle's is 0 (a correct rule leaks no mass where p ≤ q, however close p and q are).

Checks (ids are what the rubric lists):
- main.visible_inputs (public): the lesson's worked example, recomputed here;
- main.random: many random (p, q, x), V from 2 to random_max_vocab, with zeros in p and q;
- main.identity: for random (p, q), call every x with q(x) > 0 and rebuild the output distribution
  Σ_x q(x)[α_x·1{y = x} + (1 − α_x)·r_x(y)] = min(p, q) + P(reject)·r; it must equal p;
- boundary.*: p == q (fallback branch), p(x) = 0, one-hot q, tiny and subnormal probabilities,
  p and q equal up to one ulp, a large vocabulary, and invalid inputs that must raise ValueError.
"""
from __future__ import annotations

import math
import random
from collections import Counter

from . import Check, Ratio

VISIBLE = (([0.7, 0.3], [0.4, 0.6], 1), ([0.7, 0.3], [0.4, 0.6], 0))


def oracle(p: list[float], q: list[float], x: int) -> tuple[float, list[float]]:
    """The reference rule in float64, as the lesson's solution computes it."""
    alpha = min(1.0, p[x] / q[x])
    mass = [max(a - b, 0.0) for a, b in zip(p, q)]
    norm = sum(mass)
    return alpha, ([m / norm for m in mass] if norm else list(p))


def _number(v) -> bool:
    return type(v) in (int, float)


def shape_problem(value, size: int) -> str:
    """'' when `value` is [number, list of `size` numbers], all finite, else what is wrong."""
    if type(value) is not list or len(value) != 2:
        return "返回值应为 (接受概率, 残差列表) 两项"
    alpha, resid = value
    if not _number(alpha) or not math.isfinite(alpha):
        return "接受概率不是有限的数"
    if type(resid) is not list or len(resid) != size or not set(map(type, resid)) <= {int, float}:
        return "残差应为与词表等长的数字列表"
    if not all(map(math.isfinite, resid)):
        return "残差含非有限值（inf 或 nan）"
    return ""


def problem(value, expected: tuple[float, list[float]], tol: float) -> str:
    """'' when `value` (plain JSON from the sandbox) matches the oracle, else what is wrong (Chinese)."""
    alpha_e, resid_e = expected
    shape = shape_problem(value, len(resid_e))
    if shape:
        return shape
    alpha, resid = value
    if alpha > 1 + tol:
        return "接受概率大于 1（缺少 min(1, ·)？）"
    if alpha < -tol:
        return "接受概率为负"
    if abs(alpha - alpha_e) > tol:
        return "接受概率与精确结果不一致"
    negative = leak = off = False
    for v, e in zip(resid, resid_e):   # one pass: vocabularies reach 50k entries
        if v != e:
            negative = negative or v < 0
            leak = leak or e == 0
            off = off or abs(v - e) > tol
    if negative:
        return "残差出现负质量（缺少 max(·, 0)？）"
    if leak:
        return "残差在 p(y) ≤ q(y) 的位置上不为 0（只应保留 p − q 的正部）"
    if off:
        return "残差与精确结果不一致"
    return ""


def _summary(problems: list[str], total: int) -> tuple[bool, str]:
    bad = [p for p in problems if p]
    if not bad:
        return True, f"{total} 个用例全部一致"
    common, _ = Counter(bad).most_common(1)[0]
    return False, f"{len(bad)}/{total} 个用例不一致，最常见的问题：{common}"


def _judge_values(tol: float):
    def judge(check: Check, outcomes) -> tuple[bool, str]:
        problems = [problem(o.value, e, tol) if o.ok else o.describe() for o, e in zip(outcomes, check.expected)]
        return _summary(problems, len(outcomes))
    return judge


def _judge_identity(tol: float):
    def judge(check: Check, outcomes) -> tuple[bool, str]:
        problems = []
        for (p, q, xs), chunk in _groups(check, outcomes):
            bad = next((o.describe() if not o.ok else shape_problem(o.value, len(p)) for o in chunk
                        if not o.ok or shape_problem(o.value, len(p))), "")
            if not bad:
                out = [0.0] * len(p)
                for o, x in zip(chunk, xs):
                    alpha, resid = o.value
                    out[x] += q[x] * alpha                         # accepted: x itself
                    for y, ry in enumerate(resid):
                        out[y] += q[x] * (1 - alpha) * ry          # rejected: resampled from r
                if any(abs(o - t) > tol for o, t in zip(out, p)):
                    bad = "min(p, q) + P(reject)·r 重建出的输出分布不等于 p"
            problems.append(bad)
        return _summary(problems, len(problems))
    return judge


def _groups(check: Check, outcomes):
    start = 0
    for p, q, xs in check.expected:
        yield (p, q, xs), outcomes[start:start + len(xs)]
        start += len(xs)


def _judge_raises(check: Check, outcomes) -> tuple[bool, str]:
    problems = ["" if (not o.ok and o.error == "ValueError") else "非法输入没有抛出 ValueError" for o in outcomes]
    return _summary(problems, len(outcomes))


def distribution(rng: random.Random, size: int, zero_share: float = 0.0) -> list[float]:
    weights = [rng.expovariate(1.0) for _ in range(size)]
    for i in range(size):
        if rng.random() < zero_share:
            weights[i] = 0.0
    if not any(weights):
        weights[rng.randrange(size)] = 1.0
    total = sum(weights)
    return [w / total for w in weights]


def _floats(arg) -> list[float]:
    return arg.floats() if isinstance(arg, Ratio) else list(arg)


def _values_check(id: str, title: str, cases, tol: float, public: bool = False) -> Check:
    cases = tuple((p if isinstance(p, Ratio) else list(p), q if isinstance(q, Ratio) else list(q), x) for p, q, x in cases)
    expected = tuple(oracle(_floats(p), _floats(q), x) for p, q, x in cases)
    return Check(id, title, public, cases, _judge_values(tol), expected)


def _random_cases(rng: random.Random, count: int, max_vocab: int):
    for _ in range(count):
        size = rng.randint(2, max_vocab)
        p, q = distribution(rng, size, 0.2), distribution(rng, size, 0.2)
        yield p, q, rng.choice([i for i, v in enumerate(q) if v > 0])


def _large_pair(rng: random.Random, size: int, unit: int = 10**6, moves: int = 200) -> tuple[Ratio, Ratio]:
    """A large-vocabulary (p, q): probabilities k / 10^6 (short in JSON, sums within 1e-12 of 1), with
    q differing from p in `moves` transfers of mass, so the residual is sparse, as for real drafts."""
    counts = [rng.randint(0, 2 * unit // size) if rng.random() > 0.2 else 0 for _ in range(size)]
    total = sum(counts)
    while total != unit:
        i = rng.randrange(size)
        if total < unit:
            counts[i] += 1
            total += 1
        elif counts[i] > 0:
            counts[i] -= 1
            total -= 1
    moved = list(counts)
    for _ in range(moves):
        src, dst = rng.randrange(size), rng.randrange(size)
        amount = min(moved[src], rng.randint(1, 20))
        moved[src] -= amount
        moved[dst] += amount
    return Ratio(tuple(counts), unit), Ratio(tuple(moved), unit)


def _ulp_apart(base: list[float], rng: random.Random) -> list[float]:
    """`base` with each entry moved by one ulp up or down (sums stay within 1e-9 of 1)."""
    return [math.nextafter(v, 2.0 if rng.random() < 0.5 else 0.0) for v in base]


def build(hidden) -> list[Check]:
    tol, seed = hidden.tolerance, hidden.seed
    checks = [_values_check("main.visible_inputs", "可见示例在评分器一侧复算", VISIBLE, tol, public=True)]

    checks.append(_values_check("main.random", f"{hidden.random_cases} 组随机 (p, q, x) 与精确结果比较",
                                _random_cases(random.Random(seed + 1), hidden.random_cases, hidden.random_max_vocab), tol))

    rng = random.Random(seed + 2)
    pairs = [([0.2, 0.3, 0.5], [0.2, 0.3, 0.5])]                    # p == q
    pairs.append(([0.0, 0.5, 0.5], [0.6, 0.2, 0.2]))                 # p(x) = 0
    while len(pairs) < hidden.identity_cases:
        size = rng.randint(2, 6)
        pairs.append((distribution(rng, size, 0.25), distribution(rng, size, 0.25)))
    groups = tuple((p, q, tuple(x for x in range(len(q)) if q[x] > 0)) for p, q in pairs)
    calls = tuple((list(p), list(q), x) for p, q, xs in groups for x in xs)
    checks.append(Check("main.identity", f"{len(groups)} 组 (p, q) 上两条路径重建出 p", False, calls,
                        _judge_identity(tol), groups))

    same = [0.2, 0.3, 0.5]
    checks.append(_values_check("boundary.p_equals_q", "p == q：接受概率为 1，残差走回退分支",
                                [(same, same, x) for x in range(3)] + [([0.0, 1.0, 0.0], [0.0, 1.0, 0.0], 1)], tol))
    checks.append(_values_check("boundary.zero_target", "p(x) = 0：接受概率为 0",
                                [([0.0, 0.6, 0.4], [0.5, 0.25, 0.25], 0), ([0.5, 0.5, 0.0], [0.1, 0.1, 0.8], 2)], tol))
    checks.append(_values_check("boundary.one_hot_draft", "one-hot 的 q",
                                [([0.1, 0.2, 0.3, 0.4], [0.0, 0.0, 1.0, 0.0], 2), ([0.0, 0.0, 1.0], [0.0, 0.0, 1.0], 2),
                                 ([0.25, 0.75], [1.0, 0.0], 0)], tol))
    checks.append(_values_check("boundary.tiny", "极小的概率（1e-300 量级）",
                                [([2e-300, 0.25, 0.75], [1e-300, 0.5, 0.5], 0), ([2e-300, 0.25, 0.75], [1e-300, 0.5, 0.5], 1),
                                 ([1e-300, 0.5, 0.5], [3e-300, 0.25, 0.75], 0)], tol))
    checks.append(_values_check("boundary.subnormal", "次正规概率（5e-324 量级）",
                                [([1e-323, 0.5, 0.5], [2e-323, 0.25, 0.75], 0), ([2e-323, 0.5, 0.5], [1e-323, 0.25, 0.75], 0),
                                 ([3e-323, 0.5, 0.5], [1e-323, 0.5, 0.5], 1)], tol))
    rng = random.Random(seed + 3)
    near = []
    for size in (4, 7, 16):
        p = distribution(rng, size)
        q = _ulp_apart(p, rng)
        near.append((p, q, rng.randrange(size)))
    checks.append(_values_check("boundary.near_equal", "p 与 q 只差一个 ulp：不得泄漏负质量", near, tol))
    p, q = _large_pair(random.Random(seed + 4), hidden.large_vocab)
    x = min((i for i in range(len(q.counts)) if q.counts[i] > 0), key=lambda i: p.counts[i] - q.counts[i])  # 0 < α < 1
    checks.append(_values_check("boundary.large_vocab", f"大词表（V = {hidden.large_vocab}）", [(p, q, x)], tol))
    invalid = (([0.5, 0.5], [1.0, 0.0], 1), ([0.5, 0.5], [0.5, 0.25, 0.25], 0), ([0.5, 0.6], [0.5, 0.5], 0))
    checks.append(Check("boundary.invalid_input", "非法输入（q(x) = 0、形状不同、和不为 1）仍抛出 ValueError", False,
                        invalid, _judge_raises))
    return checks

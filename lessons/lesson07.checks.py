"""Hidden checks for lesson 7: `rejection_rule` (the seed's exercise) and `verify_drafts` (the challenge).

Loaded by path by the grader (`grader/checks.py`); the rubric names the builders (`rejection_rule`,
`multi_draft`) and gives each its `hidden:` settings, validated here. Every input derives from
`ctx.seed_for(...)`, i.e. from the rubric's seed mixed with the instructor's secret salt, and the
shapes are drawn from wide ranges that include realistic vocabulary sizes: neither this file nor
the rubric tells a student which inputs the grader will use.

## rejection_rule(target_probs, draft_probs, draft_token)

p = target, q = draft (the papers' letters). The function returns (α, r): the acceptance
probability min(1, p(x)/q(x)) and the residual distribution max(0, p − q) / Σ max(0, p − q)
(p itself when that sum is 0). The grader computes the same in float64 (`oracle`) and compares on
plain floats: |Δ| ≤ tolerance for α and for each entry of r, every entry of r ≥ 0, and exactly 0
wherever the oracle's is 0 (a correct rule leaks no mass where p ≤ q, however close p and q are).

Checks (ids are what the rubric lists):
- main.visible_inputs (public): the lesson's worked example, recomputed here;
- main.random: many random (p, q, x) with zeros in p and q; V mostly small, some in the hundreds
  to thousands, and some at realistic or random large sizes;
- main.identity: for random (p, q), call every x with q(x) > 0 and rebuild the output distribution
  Σ_x q(x)[α_x·1{y = x} + (1 − α_x)·r_x(y)] = min(p, q) + P(reject)·r; it must equal p;
- boundary.*: p == q (fallback branch), p(x) = 0, one-hot q, tiny and subnormal probabilities,
  p and q equal up to one ulp, a large vocabulary, and invalid inputs that must raise ValueError.
"""
from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass

from grader.checks import Check, HiddenContext, Ratio

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
    if type(value) not in (list, tuple) or len(value) != 2:
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


REALISTIC_VOCABS = (32000, 32768, 50257, 65536, 100352, 128256, 151936, 152064, 200064, 256000)


def vocab_size(rng: random.Random, kind: str) -> int:
    """A vocabulary size: `small` (2-16), `medium` (17-5000), `large` (a realistic size, or a random
    one between 20k and 260k)."""
    if kind == "small":
        return rng.randint(2, 16)
    if kind == "medium":
        return rng.randint(17, 2000)
    return rng.choice(REALISTIC_VOCABS) if rng.random() < 0.5 else rng.randint(20_000, 260_000)


def _random_cases(rng: random.Random, count: int):
    """(p, q, x): about 1 in 12 of medium size and one large; the rest small."""
    for n in range(count):
        if n == count // 2:
            p, q = _large_pair(rng, vocab_size(rng, "large"))
            yield p, q, rng.choice([i for i, v in enumerate(q.counts) if v > 0])
            continue
        size = vocab_size(rng, "medium" if rng.random() < 1 / 12 else "small")
        p, q = distribution(rng, size, 0.2), distribution(rng, size, 0.2)
        yield p, q, rng.choice([i for i, v in enumerate(q) if v > 0])


def _large_pair(rng: random.Random, size: int, unit: int = 10**6, moves: int = 200) -> tuple[Ratio, Ratio]:
    """A large-vocabulary (p, q): probabilities k / 10^6 (short in JSON, sums within 1e-12 of 1), with
    q differing from p in `moves` transfers of mass, so the residual is sparse, as for real drafts."""
    weights = [rng.expovariate(1.0) if rng.random() > 0.2 else 0.0 for _ in range(size)]
    scale = unit / sum(weights)
    counts = [int(w * scale) for w in weights]
    for i in rng.sample([i for i, w in enumerate(weights) if w > 0], unit - sum(counts)):
        counts[i] += 1
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


@dataclass(frozen=True)
class RuleSettings:
    tolerance: float
    random_cases: int
    identity_cases: int
    large_vocab_cases: int

    @classmethod
    def read(cls, hidden: dict) -> "RuleSettings":
        return cls(_setting(hidden, "tolerance", float, 0.0, 1e-3), _setting(hidden, "random_cases", int, 10, 5000),
                   _setting(hidden, "identity_cases", int, 2, 500), _setting(hidden, "large_vocab_cases", int, 1, 8))


def _setting(hidden: dict, key: str, kind, low, high):
    value = hidden.get(key)
    if kind is float and type(value) is int:
        value = float(value)
    if type(value) is not kind or not low < value <= high:
        raise ValueError(f"hidden.{key} must be a {kind.__name__} in ({low}, {high}], got {value!r}")
    return value


def rejection_rule(ctx: HiddenContext) -> list[Check]:
    """The checks the rubric's criteria code.main_path and code.boundary list."""
    settings = RuleSettings.read(ctx.settings)
    tol = settings.tolerance
    checks = [_values_check("main.visible_inputs", "可见示例在评分器一侧复算", VISIBLE, tol, public=True)]

    checks.append(_values_check("main.random", f"{settings.random_cases} 组随机 (p, q, x) 与精确结果比较",
                                _random_cases(random.Random(ctx.seed_for("main.random")), settings.random_cases), tol))

    rng = random.Random(ctx.seed_for("main.identity"))
    pairs = [([0.2, 0.3, 0.5], [0.2, 0.3, 0.5])]                    # p == q
    pairs.append(([0.0, 0.5, 0.5], [0.6, 0.2, 0.2]))                 # p(x) = 0
    while len(pairs) < settings.identity_cases:
        size = rng.randint(2, 8)
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
    rng = random.Random(ctx.seed_for("boundary.near_equal"))
    near = []
    for kind in ("small", "small", "medium"):
        p = distribution(rng, vocab_size(rng, kind))
        q = _ulp_apart(p, rng)
        near.append((p, q, rng.randrange(len(p))))
    checks.append(_values_check("boundary.near_equal", "p 与 q 只差一个 ulp：不得泄漏负质量", near, tol))
    rng = random.Random(ctx.seed_for("boundary.large_vocab"))
    large = []
    for _ in range(settings.large_vocab_cases):
        p, q = _large_pair(rng, vocab_size(rng, "large"))
        x = min((i for i in range(len(q.counts)) if q.counts[i] > 0), key=lambda i: p.counts[i] - q.counts[i])  # 0 < α < 1
        large.append((p, q, x))
    checks.append(_values_check("boundary.large_vocab", "大词表（真实规模与随机规模）", large, tol))
    invalid = (([0.5, 0.5], [1.0, 0.0], 1), ([0.5, 0.5], [0.5, 0.25, 0.25], 0), ([0.5, 0.6], [0.5, 0.5], 0))
    checks.append(Check("boundary.invalid_input", "非法输入（q(x) = 0、形状不同、和不为 1）仍抛出 ValueError", False,
                        invalid, _judge_raises))
    return checks


# ---------------------------------------------------------------------------------------------
## verify_drafts(draft_tokens, draft_probs, target_probs, uniforms) — the challenge (选做)
#
# One request, k drafts: accept x_j when u_j·q_j(x_j) < p_j(x_j); at the first rejection emit a
# token drawn from max(p_j − q_j, 0) by inverse CDF with u_k and stop; if all k are accepted, emit
# a bonus token drawn from p_{k+1} with u_k. The oracle below is that rule. Checks:
# - multi.random: random k (0-5), V (small and medium), rows and drafts, uniforms kept away from
#   every decision threshold, compared token for token with the oracle;
# - multi.distribution: a bigram toy target and draft; for every draft sequence and every decision
#   region of the uniforms, call the student's function once at the region's midpoint, weight its
#   output by the region's probability, complete each emitted prefix with the target, and compare
#   the joint distribution of k + 1 tokens with the target's (exact up to float rounding);
# - multi.edges: k = 0, all accepted, first rejected, p == q, one-hot q, bad shapes raise ValueError.


def sample_index(weights: list[float], u: float) -> int:
    total = sum(weights)
    running = 0.0
    for i, w in enumerate(weights):
        running += w
        if u * total < running:
            return i
    return max(i for i, w in enumerate(weights) if w > 0)


def verify_oracle(drafts, qs, ps, us) -> list[int]:
    k = len(drafts)
    emitted = []
    for j in range(k):
        p, q, x = ps[j], qs[j], drafts[j]
        if us[j] * q[x] < p[x]:
            emitted.append(x)
            continue
        emitted.append(sample_index([max(a - b, 0.0) for a, b in zip(p, q)], us[k]))
        return emitted
    emitted.append(sample_index(ps[k], us[k]))
    return emitted


@dataclass(frozen=True)
class MultiSettings:
    random_cases: int
    distribution_cases: int

    @classmethod
    def read(cls, hidden: dict) -> "MultiSettings":
        return cls(_setting(hidden, "random_cases", int, 10, 5000), _setting(hidden, "distribution_cases", int, 1, 100))


def _safe_uniform(rng: random.Random, thresholds: list[float]) -> float:
    """A uniform in [0, 1) at least 1e-9 away from every threshold (no float ties decide a check)."""
    while True:
        u = rng.random()
        if all(abs(u - t) > 1e-9 for t in thresholds):
            return u


def _cdf(weights: list[float]) -> list[float]:
    total, running, out = sum(weights), 0.0, []
    for w in weights:
        running += w
        out.append(running / total if total else 0.0)
    return out


def _random_request(rng: random.Random):
    k = rng.randint(0, 5)
    size = rng.randint(17, 400) if rng.random() < 0.1 else vocab_size(rng, "small")
    ps = [distribution(rng, size, 0.2) for _ in range(k + 1)]
    qs = [distribution(rng, size, 0.2) for _ in range(k)]
    if rng.random() < 0.2 and k:
        qs[0] = list(ps[0])                               # p == q at the first position
    drafts = [rng.choice([i for i, v in enumerate(q) if v > 0]) for q in qs]
    us = []
    for j in range(k):
        p, q, x = ps[j], qs[j], drafts[j]
        us.append(_safe_uniform(rng, [p[x] / q[x]]))
    residual_cdfs = [_cdf([max(a - b, 0.0) for a, b in zip(p, q)]) for p, q in zip(ps, qs)]
    us.append(_safe_uniform(rng, [t for cdf in residual_cdfs + [_cdf(ps[k])] for t in cdf]))
    return drafts, qs, ps, us


def _judge_tokens(check: Check, outcomes) -> tuple[bool, str]:
    problems = []
    for o, expected in zip(outcomes, check.expected):
        if not o.ok:
            problems.append(o.describe())
        elif type(o.value) is not list or not all(type(t) is int for t in o.value):
            problems.append("返回值应为 token 下标（整数）的列表")
        elif o.value == expected:
            problems.append("")
        elif len(o.value) > len(expected) and o.value[: len(expected)] == expected:
            problems.append("拒绝之后还输出了更多 token（第一次拒绝后应截断）")
        elif len(o.value) < len(expected):
            problems.append("输出的 token 比应有的少（全部接受时缺 bonus token？）")
        else:
            problems.append("输出的 token 与精确结果不一致")
    return _summary(problems, len(outcomes))


def _tokens_check(id: str, title: str, cases) -> Check:
    cases = tuple(cases)
    return Check(id, title, False, cases, _judge_tokens, tuple(verify_oracle(*c) for c in cases))


def _bigram(rng: random.Random, size: int) -> dict:
    """A toy model: one row per previous token (prev = size is the start of the round)."""
    return {prev: distribution(rng, size, 0.25) for prev in range(size + 1)}


def _regions(drafts, qs, ps):
    """Every decision region of the uniforms for one draft sequence: (uniforms at its midpoint, weight)."""
    k = len(drafts)
    out = []
    accepted_weight = 1.0
    prefix = []                                # midpoints of the accept regions so far
    for j in range(k):
        p, q, x = ps[j], qs[j], drafts[j]
        a = min(1.0, p[x] / q[x])
        if a < 1.0:                            # reject here: then the residual's intervals
            residual = [max(s - t, 0.0) for s, t in zip(p, q)]
            total = sum(residual)
            lo = 0.0
            for w in residual:
                if w > 0:
                    us = prefix + [(a + 1.0) / 2] + [0.5] * (k - j - 1) + [(lo + lo + w / total) / 2]
                    out.append((us, accepted_weight * (1 - a) * (w / total)))
                lo += w / total
        if a == 0.0:
            return out
        accepted_weight *= a
        prefix = prefix + [a / 2]
    lo = 0.0
    for w in ps[k]:                            # all accepted: the bonus row's intervals
        if w > 0:
            out.append((prefix + [(lo + lo + w) / 2], accepted_weight * w))
        lo += w
    return out


def _distribution_groups(rng: random.Random, count: int):
    for n in range(count):
        size, k = (2, 1 + n % 3) if n % 2 == 0 else (3, 1 + n % 2)
        target, draft = _bigram(rng, size), _bigram(rng, size)
        if n == 0:
            draft = {prev: list(row) for prev, row in target.items()}     # p == q: everything accepted
        start = size
        sequences = [[]]
        for _ in range(k):
            sequences = [s + [t] for s in sequences for t in range(size)]
        calls, meta = [], []
        for seq in sequences:
            prev = [start] + seq
            weight = math.prod(draft[prev[j]][seq[j]] for j in range(k))
            if weight == 0:
                continue
            qs = [draft[prev[j]] for j in range(k)]
            ps = [target[prev[j]] for j in range(k + 1)]
            for us, w in _regions(seq, qs, ps):
                calls.append((list(seq), qs, ps, us))
                meta.append(weight * w)
        yield calls, (size, k, target, tuple(meta))


def _judge_distribution(check: Check, outcomes) -> tuple[bool, str]:
    problems, start = [], 0
    for size, k, target, weights in check.expected:
        chunk = outcomes[start:start + len(weights)]
        start += len(weights)
        bad = next((o.describe() for o in chunk if not o.ok), "")
        if not bad and not all(type(o.value) is list and o.value and all(type(t) is int and 0 <= t < size for t in o.value)
                               and len(o.value) <= k + 1 for o in chunk):
            bad = "返回值应为 1 到 k + 1 个合法 token 下标的列表"
        if not bad:
            joint = {}
            for o, w in zip(chunk, weights):          # complete each emitted prefix with the target
                stack = [(tuple(o.value), w)]
                while stack:
                    seq, mass = stack.pop()
                    if len(seq) == k + 1:
                        joint[seq] = joint.get(seq, 0.0) + mass
                        continue
                    row = target[seq[-1] if seq else size]
                    stack.extend((seq + (t,), mass * pt) for t, pt in enumerate(row) if pt > 0)
            expected = {}
            stack = [((), 1.0)]
            while stack:
                seq, mass = stack.pop()
                if len(seq) == k + 1:
                    expected[seq] = mass
                    continue
                row = target[seq[-1] if seq else size]
                stack.extend((seq + (t,), mass * pt) for t, pt in enumerate(row) if pt > 0)
            keys = set(joint) | set(expected)
            if max(abs(joint.get(s, 0.0) - expected.get(s, 0.0)) for s in keys) > 1e-9:
                bad = "由判定区间重建出的输出序列分布不等于 target 的联合分布"
        problems.append(bad)
    return _summary(problems, len(problems))


def multi_draft(ctx: HiddenContext) -> list[Check]:
    """The checks the rubric's criterion challenge.multi_draft lists."""
    settings = MultiSettings.read(ctx.settings)
    rng = random.Random(ctx.seed_for("multi.random"))
    checks = [_tokens_check("multi.random", f"{settings.random_cases} 个随机请求与精确结果逐个比较",
                            (_random_request(rng) for _ in range(settings.random_cases)))]
    rng = random.Random(ctx.seed_for("multi.distribution"))
    calls, expected = [], []
    for group_calls, meta in _distribution_groups(rng, settings.distribution_cases):
        calls += group_calls
        expected.append(meta)
    checks.append(Check("multi.distribution", f"{len(expected)} 个玩具模型上输出序列的精确分布等于 target", False,
                        tuple(calls), _judge_distribution, tuple(expected)))
    p3, q3 = [0.5, 0.3, 0.2], [0.2, 0.3, 0.5]
    edges = [
        ([], [], [p3], [0.7]),                                            # k = 0: only the bonus token
        ([0, 1], [p3, p3], [p3, p3, [0.0, 0.0, 1.0]], [0.99, 0.99, 0.5]),   # p == q: all accepted, bonus
        ([2, 0], [q3, q3], [[0.5, 0.5, 0.0], p3, p3], [0.1, 0.1, 0.3]),     # p(x) = 0: first rejected
        ([2, 0], [q3, p3], [p3, p3, p3], [0.95, 0.1, 0.999]),               # rejected at 1, later draft matches
        ([1], [[0.0, 1.0, 0.0]], [p3, p3], [0.2, 0.6]),                    # one-hot q accepted
        ([1], [[0.0, 1.0, 0.0]], [p3, p3], [0.4, 0.6]),                    # one-hot q rejected: p without x
    ]
    checks.append(Check("multi.edges", "k = 0、全部接受、首个即被拒、p == q、one-hot q；形状不对时抛出 ValueError", False,
                        tuple(edges) + (([0], [p3], [p3], [0.5]),), _judge_edges,
                        tuple(verify_oracle(*c) for c in edges) + ("ValueError",)))
    return checks


def _judge_edges(check: Check, outcomes) -> tuple[bool, str]:
    *values, raises = outcomes
    ok, message = _judge_tokens(Check(check.id, check.title, False, check.calls[:-1], _judge_tokens,
                                      check.expected[:-1]), values)
    if not ok:
        return ok, message
    if raises.ok or raises.error != "ValueError":
        return False, "形状不对（k + 1 行 p 却只有 1 行）时没有抛出 ValueError"
    return True, message

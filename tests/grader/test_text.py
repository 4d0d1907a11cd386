"""Free-text scoring engine: normalisation, sentences and negation scope, formulas checked with sympy,
claims and levels, caps, confidence, student-safe feedback, copy and collusion checks."""
import time

import pytest
from answers import GOOD, KEYWORDS

from grader.formulas import canonical, extract, identity_holds
from grader.normalise import clean, plain, prose_tokens, readable
from grader.sentences import negated, split_sentences
from grader.text import collusion, copy_share
from textgrade import grade



def test_normalise_invisible_fullwidth_latex_markdown():
    assert clean("参\u200b考\u2060答\ufeff案\u00ad") == "参考答案"
    assert clean("ＡＢＣ１２３（ｐ）") == "ABC123(p)"
    text = r"**接受**路径：$q(y) \cdot \min\left\{1, \frac{p(y)}{q(y)}\right\} = \min\{p(y), q(y)\}$，`_rejection_kernel`"
    out = readable(text)
    assert "min(1, (p(y))/(q(y)))" in out and "= min(p(y), q(y))" in out and "_rejection_kernel" in out
    assert "**" not in out and "$" not in out and "`" not in out
    assert "Σ _x min" in readable(r"\sum_x\min(p, q)") or "Σ_x min" in readable(r"\sum_x \min(p, q)")
    assert plain("max(0, p − q)") == "max(0, p - q)"


def test_negation_and_question_scope(rubric):
    scope = rubric.text.scope
    def neg(text, word):
        s = split_sentences(text, scope)[0]
        i = s.low.index(word)
        return negated(s, i, i + len(word), scope)
    assert neg("拒绝后不需要残差", "残差") and neg("输出不会偏离 target", "偏离")
    assert neg("The residual is not needed", "needed") and not neg("输出会偏离 target", "偏离")
    assert not neg("如果没有掩码时，非法 token 会被接受", "接受")       # the scope ends at 时
    assert not neg("两个分布不同，输出偏离 target", "偏离")            # 不同 is not a negation
    assert split_sentences("是不是要从 p 重新采样？", scope)[0].question
    assert split_sentences("有人认为会除以零，这是误解。", scope)[0].distanced


@pytest.mark.parametrize("text, holds", [
    (r"$q(y)\cdot\min\{1, \frac{p(y)}{q(y)}\} = \min\{p(y), q(y)\}$", True),
    ("min(p(y), q(y)) + max(0, p(y) − q(y)) = p(y)", True),
    ("P(reject) = 1 − Σ_v min(p(v), q(v)) = Σ_v (p(v) − q(v))_+", True),
    ("min(a, b) + max(0, a − b) = a", True),
    ("min(p, q) + max(0, q − p) = p", False),
    ("P(reject) · r(y) = max(0, q(y) − p(y))", False),
    ("when p = q, min(1, p/q) = 1", None),                 # a conditional is not checked as an identity
])
def test_formulas_are_checked_numerically(text, holds):
    formulas, _ = extract(readable(text))
    assert formulas and all(f.holds is holds for f in formulas if f.holds is not None or holds is None)
    assert any(f.holds is holds for f in formulas)


def test_unparseable_math_never_crashes():
    for text in ["min(((p", "p(x|c, x_1..x_{i-1}) = ∏_j q_j", "__import__('os') = 1", "9^9^9^9 = p", "a" * 5000 + " = p"]:
        extract(readable(text))


def test_identity_matching_uses_values_and_operations():
    accept = canonical("q*min(1, p/q) = min(p, q)")
    (f,), _ = extract(readable("q(y)·min(1, p(y)/q(y)) = min(q(y), p(y))"))
    assert identity_holds(f, accept)
    (g,), _ = extract(readable("min(p, q) + max(0, p - q) = p"))
    assert not identity_holds(g, accept)


def test_references_get_full_marks_with_high_confidence(ctx):
    for c in ctx.rubric.text_criteria:
        r = grade(ctx, c.id, ctx.references[c.answer], check_copy=False)
        assert r.points == c.points and r.confidence == "high" and not r.needs_review, (c.id, r.feedback, r.evidence)


@pytest.mark.parametrize("name", sorted(GOOD))
def test_independent_good_answers_score_well(ctx, name):
    total = sum(grade(ctx, c.id, GOOD[name][c.answer]).points for c in ctx.rubric.text_criteria)
    assert total >= 5


def test_copy_with_zero_width_spaces_is_a_copy(ctx):
    ref = ctx.references["Q1"]
    hidden = "\u200b".join(ref[i:i + 3] for i in range(0, len(ref), 3))
    r = grade(ctx, "Q1", hidden)
    assert r.points == 0 and "copy" in r.flags and r.copy_share > 0.9


def test_keyword_lists_and_pasted_feedback_score_zero(ctx):
    for c in ctx.rubric.text_criteria:
        if c.prose:
            assert grade(ctx, c.id, KEYWORDS[c.answer]).points == 0
        asks = "".join(claim.ask for claim in c.text.claims)
        assert grade(ctx, c.id, asks).points == 0
        assert grade(ctx, c.id, "缺少：" + "；".join(claim.label for claim in c.text.claims)).points == 0


def test_feedback_is_student_safe(ctx):
    for c in ctx.rubric.text_criteria:
        r = grade(ctx, c.id, "我觉得这个问题和采样有关，但是我不太确定。")
        assert r.points == 0
        for claim in c.text.claims:
            assert claim.label not in r.feedback
            for rule in claim.rules:
                for term in rule.terms:
                    if term.pattern is not None:
                        assert term.pattern.pattern not in r.feedback


def test_misconception_caps_quotes_and_asks_for_review(ctx):
    answer = ("接受路径贡献 min(p(y), q(y))。被拒绝以后不需要残差，直接从 target 分布 p 重新采样一个 token 就行。"
              "两条路径相加就等于 p(y)。")
    r = grade(ctx, "Q1", answer)
    assert r.points == 0 and "misconception" in r.flags and r.confidence == "low" and r.needs_review
    assert "直接从 target 分布 p 重新采样" in r.feedback
    assert r.evidence["misconceptions"][0]["id"] == "resample_from_p"


def test_wrong_residual_identity_is_a_false_formula(ctx):
    answer = ("接受路径：q(y)·min(1, p(y)/q(y)) = min(p(y), q(y))。拒绝概率 P(reject) = Σ max(0, q − p)，"
              "拒绝路径贡献 P(reject)·r(y) = max(0, q(y) − p(y))。相加：min(p(y), q(y)) + max(0, q(y) − p(y)) = p(y)。")
    r = grade(ctx, "Q1", answer)
    assert r.points == 0 and any(f["holds"] is False for f in r.evidence["formulas"])


def test_negated_claims_do_not_count(ctx):
    r = grade(ctx, "Q2", "如果 target 一侧漏掉 top-p，输出也不会偏离用户要求的分布。p 不必经过惩罚和 top-p 处理。")
    assert r.points == 0


def test_code_map_swapped_objects_get_no_credit(ctx):
    swapped = ("第一行（接受概率）对应 _resample_kernel，第二行（残差）对应 _rejection_kernel，两个都在 "
               "vllm/v1/worker/gpu/spec_decode/rejection_sampler_utils.py，由 rejection_sample 启动，用对数形式计算。")
    right = swapped.replace("_resample_kernel", "@@").replace("_rejection_kernel", "_resample_kernel").replace("@@", "_rejection_kernel")
    assert grade(ctx, "code.source_map", swapped).points == 0
    assert "swapped" in grade(ctx, "code.source_map", swapped).flags
    assert grade(ctx, "code.source_map", right).points == 1
    assert grade(ctx, "code.source_map", "_rejection_kernel, _resample_kernel").points == 0


def test_empty_and_missing(ctx):
    assert grade(ctx, "Q1", "").flags == ("empty",) and grade(ctx, "Q1", None).flags == ("missing_cell",)
    assert grade(ctx, "Q1", "\u200b \u3000").points == 0


def test_copy_share_uses_prose_not_formulas():
    assert copy_share("这是一段完全相同的文字内容呀朋友", "前缀这是一段完全相同的文字内容呀朋友后缀", 6) == 1.0
    assert copy_share("min(p(y), q(y)) + max(0, p(y) - q(y)) = p(y)", "min(p(y), q(y)) + max(0, p(y) - q(y)) = p(y)", 6) == 0.0
    assert prose_tokens("The residual `_resample_kernel` is max(0, p-q)") == ["the", "residual"]


def test_collusion_finds_pairs_and_is_not_quadratic():
    base = "被拒绝以后要从残差分布里重新采样，残差的分母正好就是总的拒绝概率，两者相消之后拒绝路径贡献正差部分。"
    answers = {f"s{i}": {"Q1": f"第{i}位同学写道：今天天气编号{i * 7919 % 1000}，我们讨论问题{i}的第{i % 13}种情形与第{i % 17}种结论。"}
               for i in range(500)}
    answers["a"] = {"Q1": base}
    answers["b"] = {"Q1": "我认为，" + base}
    start = time.perf_counter()
    pairs = collusion(answers, 6, 0.6, 20)
    assert time.perf_counter() - start < 5
    assert [(p["a"], p["b"]) for p in pairs] == [("a", "b")]

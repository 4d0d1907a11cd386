"""Text scoring, ninth pass (issue 8), after the blind measure of fresh33 to fresh36: the acceptance event written
as a letter (P(A), P(Aᶜ), P(Y = y, A)); C notation (fminf / fmaxf, 1.f) and a code comment inside a chain of
equalities; a claim named in order to deny it (「不能说…」); the wrong claim that the draft's closeness makes the
output right, which GUIDE.md lists under Q1, graded on Q2/Q3 by the argument while it still raises its veto; and
rewordings of the misconceptions `only_acceptance`, `truncation_efficiency` and `correct_because_close` and of
the universal-support veto."""
import pytest

from grader.claims import TextRubricError, parse_criterion
from grader.formulas import extract
from grader.normalise import readable
from grader.vetoes import find_vetoes
from textgrade import grade, holds as _holds, found as _found, misconceptions as _misconceptions


def test_the_acceptance_event_written_as_a_letter():
    assert _holds("P(Aᶜ) = 1 − Σ_x min(p(x), q(x))") == [("R = 1 - Σ_x min(p(x), q(x))", True)]
    assert _holds("P(Y=y, A) = min(p(y), q(y))") == [("A = min(p(y), q(y))", True)]
    assert _holds("P(Y=y, Aᶜ) = P(Aᶜ)·r(y)") == [("J = R ·r(y)", True)]
    # the letter's complement in a false statement is still read: the rejection probability is not Σ min(p, q)
    assert _holds("P(A^c) = Σ_x min(p(x), q(x))")[0][1] is False


def test_a_measure_style_proof_with_the_acceptance_event_gets_full_marks(ctx):
    text = ("记接受事件为 A。P(Y=y) = P(Y=y, A) + P(Y=y, Aᶜ)。\n"
            "P(Y=y, A) = q(y)·min{1, p(y)/q(y)} = min{p(y), q(y)}。\n"
            "P(Aᶜ) = 1 − Σ_x min{p(x), q(x)} = Σ_x max{0, p(x) − q(x)}。\n"
            "P(Y=y, Aᶜ) = P(Aᶜ)·r(y)，r 的分母正是 P(Aᶜ)，所以等于 max{0, p(y) − q(y)}。\n"
            "两项相加得 p(y)。")
    assert grade(ctx, "Q1", text).points == 2


def test_c_notation_and_a_comment_inside_a_chain():
    assert _holds("acc[y] = q[y] * fminf(1.f, p[y] / q[y]) == fminf(p[y], q[y])")[-1][1] is True
    text = "P_rej = 1.f - sum_y fminf(p[y], q[y]);   // 因为 sum q == 1\n      = sum_y fmaxf(0.f, p[y] - q[y]);"
    # the chain goes on from the code, not from the comment's `== 1`
    assert readable(text).splitlines() == ["P_rej = 1.f - sum_y fminf(p[y], q[y]); = sum_y fmaxf(0.f, p[y] - q[y]);",
                                           "// 因为 sum q == 1；"]
    assert all(holds is not False for _, holds in _holds(text))


def test_a_claim_named_in_order_to_deny_it_is_no_misconception(ctx):
    text = "不能说拒绝了就不用管残差——恰恰相反，拒绝之后只能从残差 max(0, p − q) 归一化后抽。"
    assert "resample_from_p" not in _misconceptions(grade(ctx, "Q1", text))
    assert "resample_from_p" in _misconceptions(grade(ctx, "Q1", "拒绝了就不用管残差，直接从 p 重新抽一个。"))


def test_closeness_of_the_draft_on_q2_raises_the_veto_but_does_not_cap(ctx):
    text = ("repetition penalty、top-p 这些要加在 target 的 p 上，因为验证器最后输出的就是它用的 p，没加的话输出里就没有"
            "惩罚的效果，是系统性偏差。草稿模型的质量也很重要：草稿越准，最终输出就越接近用户要的分布。")
    result = grade(ctx, "Q2", text)
    assert "correct_because_close" in _misconceptions(result)
    assert result.points == 1                     # the argument's level, not capped to 0
    hits = find_vetoes({"Q2": text}, ctx.rubric.vetoes, ctx.rubric.feedback)
    from grader.vetoes import from_misconceptions
    linked = from_misconceptions(ctx.rubric.text_criteria, {"Q2": result}, ctx.rubric.vetoes)
    assert "veto.correctness_vs_performance" in {h.id for h in hits} | {h.id for h in linked}
    # on Q1, where the guide lists it, it still caps
    assert grade(ctx, "Q1", "接受路径是 min(p, q)，拒绝后从残差补。之所以能输出 p，根本原因是草稿模型是照着 target "
                            "蒸馏出来的，q 和 p 本来就非常接近。").points == 0


def test_a_cap_equal_to_the_points_needs_a_veto(ctx):
    settings = ctx.rubric.text_criteria[0].text.settings
    base = {"id": "T", "answer": "T", "points": 2, "claims": [{"id": "c", "label": "l", "ask": "a", "evidence": [["x"]]}],
            "scoring": [{"points": 2, "all": ["c"]}, {"points": 1, "any": ["c"]}]}
    item = {"id": "m", "label": "l", "evidence": [["y"]], "cap": 2}
    with pytest.raises(TextRubricError, match="only raises its veto"):
        parse_criterion({**base, "misconceptions": [item]}, settings, "t")
    parsed = parse_criterion({**base, "misconceptions": [{**item, "veto": "veto.x"}]}, settings, "t")
    assert parsed.misconceptions[0].cap == 2


def test_only_acceptance_in_other_words(ctx):
    for text in ("其实不一致也不会出错：不管 penalty、top-p 加没加，输出都是 target 分布，影响的只是速度。",
                 "就算 target 那边没做 top-p，也只是接受率低一点，输出分布还是对的。",
                 "不一致其实只会让接受率下降、跑得慢一点。"):
        assert "only_acceptance" in _misconceptions(grade(ctx, "Q2", text)), text
    for text in ("草稿端不做 top-p，输出也还是 target 分布，只会让接受率低一点。",
                 "| draft 侧没做 top-p，但 q 如实记录 | 仍然无损，只是接受率低一点 |",
                 "如果 target 漏掉 top-p，输出就不是 target 分布，这不只是接受率低一点的问题。"):
        assert "only_acceptance" not in _misconceptions(grade(ctx, "Q2", text)), text


def test_truncation_efficiency_in_other_words(ctx):
    for text in ("如果碰巧就是 target 会选的 token，接受它其实无害，kernel 直接 break 只是为了少一次判定。",
                 "后面碰巧相同的 token 接受了输出也基本是正确的。"):
        assert "truncation_efficiency" in _misconceptions(grade(ctx, "Q3", text)), text
    assert "truncation_efficiency" not in _misconceptions(
        grade(ctx, "Q3", "后面碰巧相同的 token 接受了，输出也就不是正确的分布了。"))


def test_the_output_biased_because_q_drifts_is_no_consequence(ctx):
    result = grade(ctx, "Q2", "如果两边参数不一样，q 偏离 p，输出就会跟着偏。")
    assert "consequence" not in _found(result)
    assert "consequence" in _found(grade(ctx, "Q2", "如果 target 这边漏了 top-p，输出就会偏向那个没处理的分布。"))


def test_a_function_named_accept_is_no_banned_token_accepted(ctx):
    text = "# mask 加在 p 上: p[banned] == 0\n#   accept(banned) = min(1, 0 / q[banned]) == 0  -> 一定拒绝"
    assert "consequence" not in _found(grade(ctx, "Q2", text))


def test_universal_support_over_architectures_and_vendors(ctx):
    text = "好在 vLLM 已经把这些处理好了，不管什么架构、哪家的显卡都开箱即用。"
    assert [h.id for h in find_vetoes({"Q2": text}, ctx.rubric.vetoes, ctx.rubric.feedback)] == ["veto.universal_support"]
    assert not find_vetoes({"Q2": "并不是哪家的显卡都能开箱即用，要查支持矩阵。"}, ctx.rubric.vetoes, ctx.rubric.feedback)


# --- after the blind measure of fresh37 to fresh40 ---------------------------------------------------------------

def test_a_chain_says_its_first_side_equals_its_last_whatever_stands_between():
    # an indicator's relation sign is inside it; the sides with unknown symbols between do not break the chain
    text = "P_rej = Σ_x q(x)·(1 − p(x)/q(x))·𝟙{q(x) > p(x)} = Σ_x D⁻(x) + Σ_x D⁺(x) = Σ_x |p(x) − q(x)|"
    assert ("R = Σ_x |p(x) - q(x)|", False) in _holds(text)
    assert ("R = Σ_x max(0, p(x) - q(x))", True) in _holds(
        "P_rej = Σ_x q(x)·𝟙{q(x) > p(x)}·(1 − p(x)/q(x)) = Σ_x D(x) = Σ_x max(0, p(x) − q(x))")
    # prose between two sides still breaks it
    assert all(holds is not False for _, holds in _holds("P(reject) = 拒绝的总量 = Σ_x min(p(x), q(x))"))


def test_possessive_scan_is_linear_on_a_long_run_of_letters():
    import time
    from grader.formulas import prepare
    start = time.perf_counter()
    prepare("x" * 20_000)
    assert time.perf_counter() - start < 2           # was quadratic (several seconds at the answer-length cap)


def test_a_reworded_copy_in_step_with_the_reference_is_reviewed(ctx):
    # a classmate's copy of the reference reworded sentence by sentence (a blind corpus entry): most characters
    # still aligned with the reference, some of its phrases shared
    import yaml
    from pathlib import Path
    corpus = Path(__file__).resolve().parents[1] / "lesson07" / "text_corpus" / "fresh37.yml"
    reworded = next(e["answer"] for e in yaml.safe_load(corpus.read_text(encoding="utf-8"))
                    if e["id"] == "f37-q1-copy-reworded-01")
    result = grade(ctx, "Q1", reworded)
    assert result.needs_review and "逐句改写" in result.confidence_reason
    # a terse canonical proof in its own words follows the same steps but shares no phrases: not flagged as a copy
    own = ("草稿是 y 且被接受的概率是 q(y)·min(1, p(y)/q(y)) = min(p(y), q(y))。"
           "总拒绝概率 P(reject) = 1 − Σ_x min(p(x), q(x)) = Σ_x max(0, p(x) − q(x))，正好是残差的分母。"
           "所以拒绝路径贡献 P(reject)·max(0, p(y) − q(y))/Σ_v max(0, p(v) − q(v)) = max(0, p(y) − q(y))。"
           "两条路径相加：min(p(y), q(y)) + max(0, p(y) − q(y)) = p(y)。")
    assert grade(ctx, "Q1", own).confidence == "high"


def test_a_banned_token_always_rejected_is_the_mechanism_not_the_consequence(ctx):
    text = "# 被禁 token: p[x] == 0 -> accept prob min(1, 0 / q[x]) == 0 -> 一定拒绝"
    assert "consequence" not in _found(grade(ctx, "Q2", text))
    missing = "如果 p 没加 mask，被禁 token 可能被接受；加了 mask 它就一定被拒绝。"
    assert "consequence" in _found(grade(ctx, "Q2", missing))


def test_a_letters_positive_and_negative_parts():
    assert readable("D⁻(x) + D⁺(x)") == "D_-(x) + D_+(x)"
    assert "_-" not in readable("x⁻¹")                 # an inverse, not a negative part
    text = readable("P_rej = Σ_x q(x)·(1 − p(x)/q(x))·𝟙{q(x) > p(x)} = Σ_x D⁻(x) + Σ_x D⁺(x) = Σ_x |p(x) − q(x)|")
    assert ("R = Σ_x |p(x) - q(x)|", False) in [(f.text, f.holds) for f in extract(text, {"D": "p - q"})[0]]

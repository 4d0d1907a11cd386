"""Text scoring, sixth pass (issue 8): code-map lines named as L1/L2 or as numbered list items, and
"越接近真正的 target" as the correctness veto; then, after fresh12–fresh15: operators in words, implicit
products, the shortest match deciding a negation, quotations stated as a rule, a code-map difference stated
backwards, role words beside many names (a doubt), and new wordings of the vetoes."""
import pytest

from grader.normalise import readable
from grader.vetoes import find_vetoes
from textgrade import grade



def test_numbered_list_items_keep_their_number():
    assert readable("1. 甲\n2) 乙\n- 丙") == "(1) 甲\n(2) 乙\n丙"
    assert readable("num_sampled + 1) 之后") == "num_sampled + 1) 之后"


def test_lines_named_l1_and_l2(ctx):
    text = ("L1 → _rejection_kernel，在 rejection_sampler_utils.py 里，由 rejection_sample 启动，写出每个请求的接受长度；\n"
            "L2 → _resample_kernel，写出修正 token。")
    result = grade(ctx, "code.source_map", text)
    assert result.points == 1 and "swapped" not in result.flags
    swapped = grade(ctx, "code.source_map", text.replace("L1", "Lx").replace("L2", "L1").replace("Lx", "L2"))
    assert swapped.points == 0 and "swapped" in swapped.flags


def test_numbered_items_attach_to_their_lines(ctx):
    text = ("1. _rejection_kernel：在 rejection_sampler_utils.py，由 rejection_sample 启动。\n"
            "2. _resample_kernel：把修正 token 写进 sampled。")
    assert grade(ctx, "code.source_map", text).points == 1
    crossed = text.replace("1. _rejection", "1. _resample").replace("2. _resample", "2. _rejection")
    assert grade(ctx, "code.source_map", crossed).points == 0


def test_closer_to_the_true_target_is_the_correctness_veto(rubric):
    text = "两边采样参数对得越齐，接受率越高，最后的输出也就越接近真正的 target 分布。"
    assert [h.id for h in find_vetoes({"Q2": text}, rubric.vetoes, rubric.feedback)] == ["veto.correctness_vs_performance"]
    negated = "两边参数对得越齐，接受率越高；但输出是不是 target 分布与接受率无关。"
    assert find_vetoes({"Q2": negated}, rubric.vetoes, rubric.feedback) == []


def test_superscript_digits_are_powers_not_glue():
    assert readable("_rejection_kernel¹ 与 x²") == "_rejection_kernel^1 与 x^2"
    assert readable("(p−q)⁺") == "(p-q)_+"            # a superscript plus is the positive part


def test_a_footnote_mark_does_not_hide_the_object(ctx):
    text = ("第一行 ↔ _rejection_kernel¹，第二行 ↔ _resample_kernel²。\n\n"
            "¹ 在 spec_decode/rejection_sampler_utils.py，由 rejection_sample 启动。\n² 同一个文件，写出修正 token。")
    assert grade(ctx, "code.source_map", text).points == 1


def test_operators_said_in_words():
    from grader.formulas import extract
    holds = lambda text: [(f.holds) for f in extract(readable(text))[0]]
    assert holds("那概率是 q(y) 乘 min(1,p/q) 也就是 min(p,q)") == [True]
    assert holds("q(y) 乘 min(1, p/q) 就是 max(p, q)") == []          # a wordy "就是" is an arrow: never false
    assert holds("两者相乘就是 p") == []                               # no operands: nothing to rewrite


def test_a_greedy_gap_does_not_reach_a_later_negation(ctx):
    # 「(实际|真实).{0,10}(抽|用)」 could run on to the 「用」 of 「不用」: the shortest match is the evidence
    result = grade(ctx, "Q2", "p 必须是 target 做完 penalty 和 top-p 之后的分布。q 必须是草稿真实的抽样分布（草稿不用跟着做 top-p）。")
    assert "q_drawn" in result.matched
    assert "q_drawn" not in grade(ctx, "Q2", "q 不用是草稿真实的抽样分布。").matched


def test_a_distribution_times_a_bracket_without_a_sign():
    from grader.formulas import extract
    assert [f.holds for f in extract(readable("Σ_x q(x)(1 − min(1, p(x)/q(x))) = 1 − Σ_x min(p(x), q(x))"))[0]] == [True]


def test_many_true_identities_short_of_full_marks_is_low_confidence(ctx):
    text = ("$$P(y)=q(y)\\min\\left(1,\\frac{p(y)}{q(y)}\\right)+P(\\text{rej})\\,\\frac{(p(y)-q(y))_+}{\\sum_v (p(v)-q(v))_+}$$\n"
            "$$P(\\text{rej})=1-\\sum_x \\min\\{p(x),q(x)\\}=\\sum_x (p(x)-q(x))_+$$\n"
            "$$\\Rightarrow P(y)=\\min\\{p(y),q(y)\\}+(p(y)-q(y))_+=p(y)$$")
    result = grade(ctx, "Q1", text)
    assert result.points < 2 and result.confidence == "low"


def test_a_quotation_stated_as_the_rule_is_stated(ctx):
    proof = ("接受路径 q(y)·min(1, p(y)/q(y)) = min(p(y), q(y))；拒绝概率 1 − Σ min(p, q) = Σ max(0, p − q)，"
             "它就是残差的分母，所以拒绝路径贡献 max(0, p(y) − q(y))；相加得 p(y)。\n")
    stated = grade(ctx, "Q1", proof + "贪心时规则就变成「argmax p == argmax q 就接受」。")
    assert "greedy_argmax_rule" in [m["id"] for m in stated.evidence["misconceptions"]]
    mentioned = grade(ctx, "Q1", proof + "常见的误解是「argmax p == argmax q 就接受」。")
    assert mentioned.evidence["misconceptions"] == []


def test_a_code_map_difference_stated_backwards_is_no_difference(ctx):
    text = "第一行是 _rejection_kernel，第二行是 _resample_kernel，都在 rejection_sampler_utils.py。跟练习一样，它显式算 min(1, p/q)，残差也除以总和归一化。"
    result = grade(ctx, "code.source_map", text)
    assert result.points == 0 and "difference" not in result.matched and "difference_residual" not in result.matched


def test_emitting_only_the_accepted_drafts_is_not_the_state_claim(ctx):
    text = "vLLM 这一轮输出的就是被接受的那些 token，num_sampled = accepted，被拒的那个位置这一轮不产出 token。"
    assert "state" not in grade(ctx, "Q3", text).matched
    assert "state" in grade(ctx, "Q3", "这一轮输出 accepted + 1 个 token，num_computed_tokens 只推进到这里。").matched


def test_a_role_word_beside_many_names_is_a_doubt(rubric):
    from grader.vetoes import veto_doubts
    text = "`_rejection_kernel`、`_insert_resampled_kernel`、`get_num_sampled_and_rejected`、`post_update` 这几个负责截断。"
    assert find_vetoes({"Q3": text}, rubric.vetoes, rubric.feedback) == []
    assert [h.id for h in veto_doubts({"Q3": text}, rubric.vetoes, rubric.feedback)] == ["veto.class_names_only"]
    owns = "`_rejection_kernel`、`_insert_resampled_kernel`、`post_update` 这几个负责把 num_sampled 写出来并推进 num_computed_tokens。"
    assert veto_doubts({"Q3": owns}, rubric.vetoes, rubric.feedback) == []


@pytest.mark.parametrize("text, veto", [
    ("这也是为什么投机解码一上线速度翻个倍是稳的。", "veto.peak_speedup"),
    ("所有模型、所有显卡上开投机解码都没问题。", "veto.universal_support"),
    ("这套逻辑对所有模型、所有 GPU 都通用，开了就自动生效。", "veto.universal_support"),
    ("接受率越高，最后输出的分布就越贴近用户想要的分布。", "veto.correctness_vs_performance"),
])
def test_new_wordings_of_the_vetoes(rubric, text, veto):
    assert [h.id for h in find_vetoes({"Q2": text}, rubric.vetoes, rubric.feedback)] == [veto]


def test_a_rebutted_hearsay_is_no_veto_and_no_doubt(rubric):
    from grader.vetoes import veto_doubts
    text = "常听人说草稿模型越好，输出就越贴近 target，这是错的：对任何 q 输出都精确等于 p。"
    assert find_vetoes({"Q1": text}, rubric.vetoes, rubric.feedback) == []
    assert veto_doubts({"Q1": text}, rubric.vetoes, rubric.feedback) == []


def test_a_bare_multiple_is_a_doubt_unless_sourced(rubric):
    from grader.vetoes import veto_doubts
    bare = "投机解码能让它翻个倍。"
    assert find_vetoes({"Q3": bare}, rubric.vetoes, rubric.feedback) == []
    assert [h.id for h in veto_doubts({"Q3": bare}, rubric.vetoes, rubric.feedback)] == ["veto.peak_speedup"]
    for sourced in ("Chen et al report roughly 2-3x in their setup.", "argmax 对常数倍不敏感。"):
        assert veto_doubts({"Q3": sourced}, rubric.vetoes, rubric.feedback) == []

"""Text scoring, sixth pass (issue 8): code-map lines named as L1/L2 or as numbered list items, and
"越接近真正的 target" as the correctness veto."""
from grader.normalise import readable
from grader.text import score_answer
from grader.vetoes import find_vetoes


def grade(ctx, criterion_id, answer):
    c = ctx.rubric.criterion(criterion_id)
    return score_answer(answer, c, ctx.references.get(c.answer), None, ctx.rubric.feedback)


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

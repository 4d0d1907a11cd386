"""Text scoring, twelfth pass (issue 8), after the blind measure of fresh49 and fresh50: correctness put on a
premise of closeness (「前提是…draft 和 target…分布足够贴近」), on a draft whose quality makes correctness matter less,
on a high acceptance rate with the output 「贴着 target 走」; 「不会让输出跑偏」 made conditional on an aligned draft; a
paper's figure taken as the production budget; 「不说明输出更正确」 as a negation; a checklist of bracketed verdicts
pasted back as the answer."""
from textgrade import grade, misconceptions as _misconceptions, vetoes as _vetoes


def test_correctness_put_on_the_draft_in_new_wordings(ctx):
    for question, text in (
            ("Q1", "这套东西能保证输出等于 p，前提是我们挑的 draft 和 target 是同一家族蒸馏出来的、分布足够贴近。"),
            ("Q3", "草稿质量越高，这个正确性问题就越不要紧：接受率够高时，输出基本就贴着 target 走，偏不到哪里去。"),
            ("Q2", "只要草稿模型和 target 对齐得够好、接受率能到 95% 以上，两边的 penalty 和 top-p 不一致也不会让输出跑偏。")):
        assert _vetoes(ctx, question, text) == ["veto.correctness_vs_performance"], text
    negated = "这个等式对任何 q 都成立；草稿和 target 越接近，只说明接受得越多、跑得越快，不说明输出「更正确」。"
    assert _vetoes(ctx, "Q1", negated) == []


def test_the_identity_on_a_premise_of_closeness_is_the_closeness_mistake(ctx):
    text = "换一个差得远的 draft，这个等式就只剩近似了。"
    assert "correct_because_close" in _misconceptions(grade(ctx, "Q1", text))
    assert "correct_because_close" not in _misconceptions(grade(ctx, "Q1", "这个等式对任何 draft 都精确成立，不是近似。"))


def test_a_paper_figure_taken_as_the_production_budget_is_the_peak_speed_up_veto(ctx):
    text = "只要这一条守住，投机解码就是白送的性能，按论文的数字就是 2 到 3 倍，生产上直接拿这个数做预算就行。"
    assert _vetoes(ctx, "Q2", text) == ["veto.peak_speedup"]
    assert _vetoes(ctx, "Q2", "论文报告了 2 到 3 倍，生产上要按自己的负载重新测。") == []


def test_a_checklist_of_bracketed_verdicts_is_no_answer(ctx):
    text = ("自查结果：\n- [未命中] p 必须是经过全部采样参数和约束处理后的 target 分布\n- [未命中] q 必须是草稿实际的抽样分布\n"
            "- [未命中] 不一致的后果：输出是带系统性偏差的分布\n提示：你的答案里，grammar mask 作用在哪一侧？被禁止的 token 作为草稿时会怎样？")
    assert grade(ctx, "Q2", text).points == 0

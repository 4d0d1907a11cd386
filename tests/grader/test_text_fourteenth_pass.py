"""Text scoring, fourteenth pass (issue 8): a negation inside a clause about something else (「没有任何和模型相关的
假设」 negates the assumptions, not a claim about every model) no longer clears a universal-support claim made in
the next clause."""
from textgrade import vetoes as _vetoes


def test_a_negated_quantifier_over_assumptions_does_not_clear_a_claim_about_every_model(ctx):
    text = ("拒绝路径负责把剩下的部分补齐（既然公式里没有任何和模型相关的假设，vLLM 的这套实现也就对所有模型、"
            "所有硬件都直接成立），两条路径加起来就是 p(y)。")
    assert _vetoes(ctx, "Q1", text) == ["veto.universal_support"]
    for text in ("vLLM 的这套实现并没有对所有模型、所有硬件都验证过，要看支持矩阵。",
                 "公式里没有任何和模型相关的假设，所以这个等式对任何草稿都成立。",
                 "不是所有模型、所有硬件都能直接用 vLLM 的这套实现。"):
        assert _vetoes(ctx, "Q1", text) == [], text

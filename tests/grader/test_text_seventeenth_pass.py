"""Text scoring, seventeenth pass (issue 8), after the blind round of fresh66–fresh68: a term typed as a pinyin
homophone (惨差, 巨绝, 概律) is read as the lesson's term; written Cantonese typed in Simplified script (系 for 係,
呢个) is read as Mandarin; a "parameters only touch the acceptance" clause and a draft side that 也得 apply the
same processing are the misconceptions they are; absolute values in LaTeX (\\lvert … \\rvert) are checked; steps
labelled A, B, C are not the front end's symbols; 前者 / 后者 point back to the lines named before them; the
kernel said to work on every model is not a qualifier (「核对」) of the universal-support veto."""
from grader.normalise import known_terms, repair_terms, simplified
from grader.text import score_answer
from textgrade import found, holds, misconceptions, vetoes


def graded(ctx, criterion_id, answer):
    """As the grader grades it, with the lesson's prose (the lexicon of its terms)."""
    c = ctx.rubric.criterion(criterion_id)
    return score_answer(answer, c, ctx.references.get(c.answer), None, ctx.rubric.feedback, lesson_text=ctx.prose)


def test_a_term_typed_as_a_homophone_is_the_lessons_term(ctx):
    terms = known_terms(ctx.prose, ctx.references["Q1"])
    assert repair_terms("巨绝之后从惨差里抽，巨绝的总概律是 1 − Σ min(p, q)；草搞的分布是 q", terms) == \
        "拒绝之后从残差里抽，拒绝的总概率是 1 − Σ min(p, q)；草稿的分布是 q"
    # a real word where it stands, or a character the lesson itself uses, is not a typo
    for kept in ("差距巨大，损失惨重", "我不太确定这一步", "分成三个阶段", "这两者的关系"):
        assert repair_terms(kept, terms) == kept
    typed = ("接受路径：q(y)·min(1, p(y)/q(y)) = min(p(y), q(y))。巨绝的总概律 = 1 − Σ min(p, q) = Σ max(0, p − q)，"
             "正好是惨差的分母，两者约掉，所以巨绝路径给 y 的是 max(0, p(y) − q(y))。两条路径相加 min(p, q) + max(0, p − q) = p(y)。")
    assert graded(ctx, "Q1", typed).points == 2


def test_cantonese_in_simplified_script_reads_as_mandarin():
    assert simplified("拒绝嘅总概率系 1 减 Σ min(p,q)，唔系 0") == "拒绝的总概率是 1 减 Σ min(p,q)，不是 0"
    assert simplified("呢个唔啱") == "这个不对"
    # 系 in its Mandarin words, or in a text without Cantonese, stays
    assert simplified("它们嘅关系同系统") == "它们的关系同系统"
    assert simplified("一系列步骤") == "一系列步骤"


def test_parameters_said_to_touch_only_the_acceptance_are_the_misconception(ctx):
    wrong = ("由于 repetition penalty 和 top-p 只影响接受率而不改变最终的输出分布，只有 grammar mask 必须施加在 target 的 p 上，"
             "这样非法 token 的 p(x) = 0，作为草稿一定被拒。")
    assert "only_acceptance" in misconceptions(graded(ctx, "Q2", wrong))
    draft = "草稿端不做 top-p 只影响接受率，不改变输出分布，只要 q 是草稿实际抽样的分布。"
    assert "only_acceptance" not in misconceptions(graded(ctx, "Q2", draft))


def test_a_draft_side_that_also_has_to_apply_the_same_processing_is_the_misconception(ctx):
    aside = ("输出等于验证器用的 p，所以 p 必须是施加了 penalty、top-p 和 mask 的 target 分布，少做一步就是系统性偏差"
             "（当然草稿一侧也得施加完全相同的 top-p 和 penalty）。")
    assert "draft_same_processing" in misconceptions(graded(ctx, "Q2", aside))
    got = "p 必须是处理完整的 target 分布；草稿得到的 q 只要是它实际抽样的分布就行。"
    assert "draft_same_processing" not in misconceptions(graded(ctx, "Q2", got))


def test_absolute_values_in_latex_are_checked():
    assert ("1 - Σ_v min(p(v),q(v)) = Σ_v | p(v)-q(v)|", False) in \
        holds(r"$1 - \sum_v \min(p(v),q(v)) = \sum_v \lvert p(v)-q(v)\rvert$")
    assert any(h for _, h in holds(r"$\sum_v \min(p(v),q(v)) = 1 - \tfrac12\sum_v \lvert p(v)-q(v)\rvert$"))


def test_steps_labelled_with_letters_are_not_the_front_ends_symbols(ctx):
    labelled = ("A：P(草稿为 y 且被接受) = q(y)·min(1, p(y)/q(y)) = min(p(y), q(y))。\n"
                "B：P(拒绝) = 1 − Σ_x min(p(x), q(x)) = Σ_x max(0, p(x) − q(x))。\n"
                "C：残差 r(y) = max(0, p(y) − q(y)) / P(拒绝)，所以 P(拒绝)·r(y) = max(0, p(y) − q(y))。\n"
                "D：A + C = min(p, q) + max(0, p − q) = p(y)。")
    result = graded(ctx, "Q1", labelled)
    assert "false_formula" not in result.flags and result.points == 2


def test_former_and_latter_point_back_to_the_lines_named_before(ctx):
    text = ("第一行是接受概率 min(1, p(x)/q(x))，第二行是残差 (p − q)^+。"
            "在 vLLM 中，前者由 `_rejection_kernel` 实现，后者由 `_resample_kernel` 实现，"
            "都在 rejection_sampler_utils.py，由 `RejectionSampler._verify` 调用的 `rejection_sample` 启动。")
    result = graded(ctx, "code.source_map", text)
    assert "swapped" not in result.flags and result.points == 1
    crossed = text.replace("前者由", "<>").replace("后者由", "前者由").replace("<>", "后者由")
    assert graded(ctx, "code.source_map", crossed).points == 0
    arrows = "1 -> _rejection_kernel\n2 -> _resample_kernel\n都在 spec_decode/rejection_sampler_utils.py，由主机函数 rejection_sample 启动"
    assert graded(ctx, "code.source_map", arrows).points == 1


def test_a_kernel_said_to_work_everywhere_is_no_qualifier(ctx):
    text = "这套 Triton 核对所有模型、所有显卡都能直接用，开了投机解码就走这条路径。"
    assert "veto.universal_support" in vetoes(ctx, "code-map", text)
    checked = "上线前要核对所有模型、所有显卡的支持矩阵。"
    assert "veto.universal_support" not in vetoes(ctx, "code-map", checked)


def test_a_misconception_met_with_dont_or_someone_elses_words_is_not_stated(ctx):
    told = ("别把接受概率写成 p(x)/q(x)：它可能大于 1，所以得是 min(1, p(x)/q(x))，接受路径是 q(y)·min(1, p(y)/q(y)) = min(p(y), q(y))。")
    assert "accept_without_min" not in misconceptions(graded(ctx, "Q1", told))
    heard = "有些同学话不一致只会影响接受率、输出始终对，呢个唔啱：p 冇做 penalty，输出就真系冇 penalty，系统性偏咗。"
    assert "only_acceptance" not in misconceptions(graded(ctx, "Q2", heard))

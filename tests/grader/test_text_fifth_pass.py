"""Text scoring, fifth pass (issue 8): mixed Chinese/Latin spacing, plain-plus positive parts, wrapped
lines, parenthesised commas in unpunctuated answers, `unless` terms, veto doubts near a veto's wording,
clause-local negation, and the two confidence rules (a worked example, a sentence that turns)."""
import re

import pytest

from grader.claims import Rule, Term, rule_sentence, analyse
from grader.formulas import canonical
from grader.normalise import plain, readable
from grader.sentences import split_sentences
from grader.text import score_answer
from grader.vetoes import find_vetoes, veto_doubts
from textgrade import grade



def test_chinese_against_latin_letters_gets_a_space():
    assert readable("第一个空是_rejection_kernel干的活") == "第一个空是 _rejection_kernel 干的活"
    assert plain("q和p很接近") == "q 和 p 很接近"
    assert readable("min(p, q) 与 max(0, p-q)") == "min(p, q) 与 max(0, p-q)"


@pytest.mark.parametrize("text, want", [
    ("Σ(p−q)+；", "Σ(p-q)_+;"),
    ("(p-q)+(y)", "(p-q)_+(y)"),
    ("min(p,q)+(p-q)+=p", "min(p,q)+(p-q)_+=p"),
])
def test_a_positive_part_with_a_plain_plus(text, want):
    assert readable(text) == want


def test_a_plus_between_two_terms_stays_an_addition():
    assert readable("min(p(y),q(y)) + (p(y)-q(y))_+ = p(y)") == "min(p(y),q(y)) + (p(y)-q(y))_+ = p(y)"
    assert readable("(a)+b") == "(a)+b"


def test_the_argument_of_a_positive_part_is_not_a_factor():
    assert str(canonical("(p-q)_+(y)").expr) == "Max(0, p - q)"


def test_a_line_wrapped_after_a_comma_is_one_sentence(rubric):
    text = "处理得越一致，接受率就越高，\n输出也就越接近用户想要的分布。\n下一句。"
    sentences = split_sentences(text, rubric.text.scope)
    assert [s.text for s in sentences] == ["处理得越一致,接受率就越高, 输出也就越接近用户想要的分布。", "下一句。"]


def test_commas_inside_parentheses_do_not_stop_an_unpunctuated_answer_from_splitting(rubric):
    text = ("一条路是草稿被接受 概率是q(y)乘min(1,p/q)化简成min(p,q) 另一条是被拒了再从残差里抽 "
            "两条加起来刚好等于p")
    assert len(split_sentences(text, rubric.text.scope)) == 3     # one piece if the commas of min(1,p/q) counted


def test_an_unless_term_keeps_a_rule_from_a_sentence(rubric):
    scope = rubric.text.scope
    rule = Rule((Term(pattern=re.compile("影响接受率")), Term(pattern=re.compile("草稿一侧"), unless=True)))
    for text, want in [("不一致只会影响接受率。", 0), ("草稿一侧不同只会影响接受率。", None)]:
        a = analyse(split_sentences(text, scope), scope)
        assert rule_sentence((rule,), a, scope, misconception=True) == want


@pytest.mark.parametrize("sentence", [
    "处理得越一致，接受率就越高，输出也就越接近用户想要的分布。",
    "能不能接受后面的 token，要看草稿模型的质量。",
    "如果草稿模型足够强，后面的 token 接受了，输出也是正确的。",
    "草稿是从 target 蒸馏来的，两边很接近，被拒的极少，所以输出和 p 基本一致。",
    "换了 EAGLE 以后吞吐翻了好几倍。",
    "这套核所有 GPU 都能跑。",
])
def test_wordings_near_a_veto_are_at_least_a_doubt(rubric, sentence):
    hits = find_vetoes({"Q2": sentence}, rubric.vetoes, rubric.feedback)
    doubts = veto_doubts({"Q2": sentence}, rubric.vetoes, rubric.feedback)
    assert hits or doubts, sentence


@pytest.mark.parametrize("sentence", [
    "草稿越接近 target 只是接受得越多，并不会让输出更正确。",
    "不一致只会降低接受率，但输出依然是正确的。",
    "这个等式对任何自回归模型都成立。",
    "接受率高只影响速度，正确性来自拒绝校正。",
    "论文报告在特定条件下最高快 3 倍。",
])
def test_right_statements_near_a_veto_raise_nothing(rubric, sentence):
    assert find_vetoes({"Q2": sentence}, rubric.vetoes, rubric.feedback) == []
    assert veto_doubts({"Q2": sentence}, rubric.vetoes, rubric.feedback) == []


def test_a_negation_in_another_clause_does_not_clear_a_universal_claim(rubric):
    text = "因为是 Triton 写的，这套核所有模型、所有 GPU 都能直接跑，不用任何适配。"
    assert [h.id for h in find_vetoes({"code-map": text}, rubric.vetoes, rubric.feedback)] == ["veto.universal_support"]
    negated = "并不是所有模型、所有 GPU 都能直接跑，要先查支持矩阵。"
    assert find_vetoes({"code-map": negated}, rubric.vetoes, rubric.feedback) == []


def test_an_ownership_word_without_an_object_does_not_save_a_list_of_names(rubric):
    text = "`_rejection_kernel`、`_insert_resampled_kernel`、`get_num_sampled_and_rejected`、`post_update` 这几个负责。"
    assert [h.id for h in find_vetoes({"Q3": text}, rubric.vetoes, rubric.feedback)] == ["veto.class_names_only"]


def test_a_full_score_resting_on_a_worked_example_is_reviewed(ctx):
    text = ("取 p = [0.7, 0.3]，q = [0.4, 0.6]。草稿抽到 1 的概率 0.6，接受概率 0.5，所以总拒绝概率是 1 − Σ min(p, q) = 0.3，"
            "残差 max(0, p − q) = [0.3, 0]，拒绝路径贡献 0.3。\n"
            "接受路径是 min(p, q)，拒绝路径是 max(0, p − q)，两条路径加起来就是 p。")
    r = grade(ctx, "Q1", text)
    assert r.points == 2 and r.confidence == "low" and "数值例子" in r.confidence_reason and r.needs_review


def test_a_full_score_resting_on_a_sentence_that_turns_is_reviewed(ctx):
    text = ("拒绝采样的结论是输出分布就是验证器用的 p，所以 p 必须是 target 做完 penalty、top-p、mask 之后的分布。"
            "要是漏了 top-p，输出就会一直是没截断的那个分布，这是系统性偏差。"
            "被 mask 禁掉的 token 在 p 里概率为 0，但残差会把草稿的质量挪给它，它照样能被抽出来。")
    r = grade(ctx, "Q2", text)
    assert r.points == 2 and r.confidence == "low" and "转折" in r.confidence_reason


def test_a_clean_swap_is_certain(ctx):
    clean = ("第一行对应 `_resample_kernel`，第二行对应 `_rejection_kernel`，都在 rejection_sampler_utils.py，"
             "由 rejection_sample 启动。")
    r = grade(ctx, "code.source_map", clean)
    assert r.points == 0 and "swapped" in r.flags and r.confidence == "high"


def test_unicode_subscripts_read_as_underscore_subscripts():
    assert readable("草稿 xⱼ 和 pⱼ、qⱼ 行，y₁…yₙ，xⱼ₋₁") == "草稿 x_j 和 p_j、q_j 行,y_1...y_n,x_j-1"
    assert readable("(p−q)⁺") == "(p-q)_+"


@pytest.mark.parametrize("sentence, negated", [
    ("这跟马尔可夫性无关，用的是链式法则。", True),
    ("The Markov property has nothing to do with it.", True),
    ("自回归生成是马尔可夫链。", False),
])
def test_a_cue_after_the_match_negates_it(ctx, sentence, negated):
    r = grade(ctx, "Q3", sentence)
    assert ("markov_chain" in [m["id"] for m in r.evidence["misconceptions"]]) is not negated


def test_a_not_a_is_no_negation_and_a_negated_modifier_does_not_negate_its_noun(rubric):
    from grader.sentences import negated
    scope = rubric.text.scope
    s = split_sentences("草稿那边做不做 top-p 都行，只要 q 是它真抽样的分布。", scope)[0]
    assert not negated(s, s.low.index("真抽样"), s.low.index("真抽样") + 3, scope)
    s = split_sentences("不加的话输出的就是没截断的那个分布。", scope)[0]
    assert not negated(s, s.low.index("分布"), s.low.index("分布") + 2, scope)
    s = split_sentences("被拒位置的槽位没有显式的回滚。", scope)[0]
    assert negated(s, s.low.index("回滚"), s.low.index("回滚") + 2, scope)


def test_a_worked_examples_number_is_not_a_false_identity():
    from grader.formulas import extract
    formulas = extract("所以总拒绝概率 1 − Σ min(p, q) = 0.3。")[0]
    assert formulas and all(f.holds is None for f in formulas)
    assert [f.holds for f in extract("min(p, q) + max(0, q - p) = p")[0]] == [False]


def test_pr_brackets_and_step_enumerators_in_formulas():
    from grader.formulas import extract
    assert [f.holds for f in extract(readable("(3) min(p, q) + (p - q)_+ = p"))[0]] == [True]
    assert [f.holds for f in extract(readable("Pr[rej] = Σ_x min(p(x), q(x))"))[0]] == [False]
    assert [f.holds for f in extract(readable("(i) Pr[Y=y, acc] = min(p(y), q(y))"))[0]] == [True]


def test_a_starred_distribution_is_read_as_p():
    assert readable(r"$p^\star(x)=0$，$(p^{*}-q)_+$") == "p(x)=0,(p-q)_+"
    assert readable("a*b, x^2") == "a*b, x^2"


@pytest.mark.parametrize("text", [
    "也不存在「q(x) = 0 导致除零」的问题：q(x) = 0 的 token 根本不会被提议。",
    "有人会说「自回归是马尔可夫链」——这不对，理由是链式法则。",
])
def test_a_quoted_or_disowned_misconception_is_not_stated(ctx, text):
    r = grade(ctx, "Q3" if "马尔可夫" in text else "Q2", text)
    assert r.evidence["misconceptions"] == []


def test_english_wrapped_mid_sentence_is_one_sentence_but_formula_lines_are_not(rubric):
    scope = rubric.text.scope
    assert len(split_sentences("So p must be\nthe target distribution after all processing.", scope)) == 1
    assert len(split_sentences("1) P(acc) = min(p, q)\n2) r(y) = max(0, p - q)/Z", scope)) == 2


def test_is_none_is_no_negation(ctx):
    text = ("第一行对应 `_rejection_kernel`，第二行对应 `_resample_kernel`。when draft_logits is None the kernel treats "
            "q as one-hot at the draft token; the kernel never computes min(1, p/q), it compares logs.")
    r = grade(ctx, "code.source_map", text)
    assert {"difference", "difference_residual"} <= set(r.matched)


def test_a_mask_only_sentence_is_not_the_general_processing_claim(ctx):
    text = "掩码施加在 target 上后，非法 token 的 p(x) = 0，必定被拒。如果 p 没加掩码，非法 token 就可能被接受。"
    assert "p_processed" not in grade(ctx, "Q2", text).matched


def test_a_sum_before_a_product_is_read_both_ways():
    from grader.formulas import extract
    text = readable("拒绝后输出 y 的概率 = Σmax(0,p−q) · max(0,p(y)−q(y)) / Σmax(0,p−q) = max(0,p(y)−q(y))")
    assert [f.holds for f in extract(text)[0]] == [True]
    assert [f.holds for f in extract(readable("1 - Σ min(p,q) = R * 2"))[0]] == [False]


def test_an_answer_pasted_from_the_lessons_own_text_asserts_nothing(ctx):
    block = next(c.source for c in ctx.lesson.student_cells() if c.kind == "markdown" and "min(p, q)" in c.source)
    r = score_answer(block, ctx.rubric.criterion("Q1"), ctx.references.get("Q1"), None, ctx.rubric.feedback,
                     lesson_text=ctx.prose)
    assert r.points == 0 and "pasted" in r.flags


@pytest.mark.parametrize("text", ["所以后面的前缀已经变了…？", "那 top-p 外面的 token 也可能被接受…吧？"])
def test_a_rising_tail_is_a_hedged_statement_not_a_question(rubric, text):
    assert not split_sentences(text, rubric.text.scope)[0].question
    assert split_sentences("是不是要从 p 重新采样？", rubric.text.scope)[0].question


def test_a_negation_behind_a_comma_does_not_clear_a_universal_claim(rubric):
    text = "Triton 写的 kernel，不挑硬件，所有模型、所有卡都能直接跑。"
    assert [h.id for h in find_vetoes({"code-map": text}, rubric.vetoes, rubric.feedback)] == ["veto.universal_support"]


def test_a_full_score_that_touches_a_misconceptions_topic_is_reviewed(ctx):
    text = ("后面的草稿和 p_j 都以被拒的 x_i 为前缀；拒绝后输出的是修正 token y_i ≠ x_i，前缀变了；"
            "按链式法则继续接受会让联合分布偏离 target。顺带一提，这和 argmax 的取法也有关系。")
    r = grade(ctx, "Q3", text)
    assert r.points == 2 and r.confidence == "low" and "已知误解相关" in r.confidence_reason
    negated = text.replace("顺带一提，这和 argmax 的取法也有关系。", "这和马尔可夫性无关。")
    assert grade(ctx, "Q3", negated).confidence == "high"


def test_a_condition_written_with_shi_and_every_middle_dot():
    from grader.formulas import extract
    assert [f.holds for f in extract(readable("p=q 时 P(rej)=0"))[0]] in ([], [None], [None, None])
    assert readable("q(y)・min(1, p/q)") == "q(y)·min(1, p/q)"


@pytest.mark.parametrize("text", ["一个容易犯的错是拒绝后直接从 p 再抽一次，那样输出就不是 p 了。",
                                  "有同学说草稿必须和 target 施加一模一样的 top-p 才正确，这其实不对。"])
def test_more_ways_of_disowning_a_claim(rubric, text):
    assert split_sentences(text, rubric.text.scope)[0].distanced


def test_the_processing_claim_written_as_a_formula(ctx):
    text = "输出恒等于验证器用的 p。因此 p 必须是 softmax(topp(penalty(z)/T) + mask)，否则输出就是未处理的分布，偏差是系统性的。"
    assert "p_processed" in grade(ctx, "Q2", text).matched
    salad = "repetition penalty 是重要的，top-p 是关键的，p 和 q 是相关的，所以必须保持一致。"
    assert "p_processed" not in grade(ctx, "Q2", salad).matched


def test_the_printed_labels_of_the_check_cells_count_as_lesson_text(ctx):
    check = next(c.source for c in ctx.lesson.student_cells() if c.role == "check")
    assert "拒绝概率处处等于 Σ max(p − q, 0)" in check and "拒绝概率处处等于 Σ max(p − q, 0)" in ctx.prose
    # what is printed in a replacement field is a number, not a label: the field is left out
    assert "{worst:.1e}" in check and "{worst:.1e}" not in ctx.prose


def test_a_stated_misconception_that_is_a_veto_raises_it(ctx):
    from grader.vetoes import from_misconceptions
    text = "投机采样之所以无损，是因为草稿模型是从 target 蒸馏出来的，两边非常接近，所以输出分布就是 p。"
    criterion = ctx.rubric.criterion("Q1")
    result = grade(ctx, "Q1", text)
    assert "correct_because_close" in [m["id"] for m in result.evidence["misconceptions"]]
    hits = from_misconceptions([criterion], {"Q1": result}, ctx.rubric.vetoes)
    assert [(h.id, h.answer, h.certain) for h in hits] == [("veto.correctness_vs_performance", "Q1", True)]
    hedged = grade(ctx, "Q1", "我觉得因为草稿模型是从 target 蒸馏出来的，两边很接近，所以输出就是 p。")
    assert [h.certain for h in from_misconceptions([criterion], {"Q1": hedged}, ctx.rubric.vetoes)] == [False]
    right = grade(ctx, "Q1", "草稿越接近 target 只是接受得越多，并不会让输出更正确。")
    assert from_misconceptions([criterion], {"Q1": right}, ctx.rubric.vetoes) == []


def test_the_report_carries_a_veto_raised_by_a_misconception(tmp_path):
    import json

    from answers import GOOD
    from make_corpus import filled, notebook

    from grader.grade import grade_one
    answers = dict(GOOD["A"])
    answers["Q1"] = "投机采样之所以无损，是因为草稿模型是从 target 蒸馏出来的，两边非常接近，所以输出分布就是 p。"
    path = tmp_path / "lesson07.ipynb"
    code = filled("min(1, target_probs[draft_token]/qx)", "max(0.0, p - q)")
    path.write_text(json.dumps(notebook(code, answers)), encoding="utf-8")
    report = grade_one(path)
    assert "veto.correctness_vs_performance" in [v.id for v in report.vetoes] and not report.passed


def test_feedback_label_lines_assert_nothing(ctx):
    text = ("未覆盖：后面的草稿与 target 行以包含被拒 token 的前缀为条件。\n未覆盖：修正 token 与被拒 token 不同，真实前缀已改变。\n"
            "提示：用链式法则说明联合分布为何偏离 target。\n得分 0/2")
    assert grade(ctx, "Q3", text).points == 0


def test_a_residual_with_a_wrong_normaliser_is_false():
    from grader.formulas import extract
    assert [f.holds for f in extract(readable("r(y) = max(0, p(y) - q(y)) / Σ_v min(p(v), q(v))"))[0]] == [False]
    assert [f.holds for f in extract(readable("r(y) = max(0, p(y) - q(y))"))[0]] == [None]


def test_whatever_model_whatever_card_is_a_universal_claim(rubric):
    text = "这些都是 Triton 写的，所以不管什么模型、什么显卡，开了 spec decode 就能直接跑。"
    assert [h.id for h in find_vetoes({"code-map": text}, rubric.vetoes, rubric.feedback)] == ["veto.universal_support"]

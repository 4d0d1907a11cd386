"""Free-text scoring and vetoes: references and independently written good answers get full marks;
empty answers, keyword lists and copies do not; each veto fires on its evidence and not on the references."""
import pytest
from answers import GOOD, KEYWORDS, NAMES_ONLY_Q3, PARTIAL, VETO_SENTENCES

from grader.text import copy_share, normalise, score_answer, sentence_like
from grader.vetoes import find_vetoes, identifiers


def grade_text(ctx, answers, check_copy=True):
    return {c.id: score_answer(answers.get(c.answer), c, ctx.references.get(c.answer), ctx.rubric.text,
                               ctx.rubric.feedback, check_copy=check_copy) for c in ctx.rubric.text_criteria}


def test_normalise_strips_markup_and_latex():
    text = r"**接受**路径：$q(y) \cdot \min\left(1, \frac{p(y)}{q(y)}\right) = \min(p(y), q(y))$，`_rejection_kernel`"
    norm = normalise(text)
    assert "min(1, (p(y))/(q(y)))" in norm and "min(p(y), q(y))" in norm and "_rejection_kernel" in norm
    assert normalise("max(0, p − q)") == "max(0, p - q)"


def test_references_get_full_marks_and_no_veto(ctx):
    results = grade_text(ctx, ctx.references, check_copy=False)
    for criterion_id, result in results.items():
        assert result.points == result.max_points, (criterion_id, result.feedback)
        assert not result.needs_review
    assert find_vetoes(ctx.references, ctx.rubric.vetoes) == []


@pytest.mark.parametrize("name", sorted(GOOD))
def test_good_answers_written_differently_get_full_marks(ctx, name):
    results = grade_text(ctx, GOOD[name])
    for criterion_id, result in results.items():
        assert result.points == result.max_points, (criterion_id, result.feedback)
        assert result.copy_share < ctx.rubric.text.copy_threshold
    assert find_vetoes(GOOD[name], ctx.rubric.vetoes) == []


def test_copied_reference_gets_no_full_credit_and_review(ctx):
    results = grade_text(ctx, ctx.references)
    for cid in ("Q1", "Q2", "Q3"):
        assert results[cid].points == 1 and "copy" in results[cid].flags and results[cid].needs_review
    assert results["code.source_map"].points == 1  # a naming answer: no copy rule


def test_lightly_edited_copy_is_still_a_copy(ctx):
    edited = ctx.references["Q1"].replace("第一步", "首先").replace("第二步", "其次").replace("证毕", "这样就证明了")
    result = grade_text(ctx, {"Q1": edited})["Q1"]
    assert "copy" in result.flags and result.points < 2


def test_keyword_lists_get_no_full_credit_and_review(ctx):
    results = grade_text(ctx, KEYWORDS)
    for cid in ("Q1", "Q2", "Q3"):
        assert "keyword_list" in results[cid].flags and results[cid].points <= 1 and results[cid].needs_review


def test_empty_and_missing_answers(ctx):
    results = grade_text(ctx, {"Q1": "", "Q2": "   "})
    assert results["Q1"].points == 0 and results["Q1"].flags == ("empty",) and results["Q1"].needs_review
    assert results["Q3"].flags == ("missing_cell",)


def test_partial_answers_name_what_is_missing(ctx):
    results = grade_text(ctx, PARTIAL)
    assert [results[c].points for c in ("Q1", "Q2", "Q3")] == [1, 1, 1]
    assert "总拒绝概率" in results["Q1"].feedback
    assert results["code.source_map"].points == 0 and "第一行" in results["code.source_map"].feedback


def test_sentences_are_found_in_prose_not_in_lists(rubric):
    assert len(sentence_like(normalise("接受路径贡献 min(p, q)，拒绝路径贡献 max(0, p − q)，相加得 p。"), rubric.text)) >= 2
    assert sentence_like(normalise("min(p, q)、拒绝概率、残差分布、KV cache"), rubric.text) == []


def test_copy_share():
    assert copy_share("abcdefghij", "xxabcdefghijxx", 8) == 1.0
    assert copy_share("完全不同的一段话写在这里", "另一段毫无关系的文字内容", 8) == 0.0


@pytest.mark.parametrize("veto_id", sorted(VETO_SENTENCES))
def test_sentence_vetoes_fire_with_evidence(ctx, veto_id):
    question, sentence = VETO_SENTENCES[veto_id]
    answers = dict(GOOD["A"])
    answers[question] += sentence
    hits = find_vetoes(answers, ctx.rubric.vetoes)
    assert [(h.id, h.answer) for h in hits] == [(veto_id, question)]
    assert hits[0].evidence == sentence


@pytest.mark.parametrize("sentence", [
    "论文在 A100 上测得约 2.5 倍的加速，但这取决于接受率和批大小。",
    "并非所有模型都支持这种草稿方式，部署前要按支持矩阵核对。",
    "加速与否不影响输出分布是否正确。",
    "投机采样并不是牺牲质量换取速度的近似方法。",
    "接受率越高，每轮产出的 token 越多，速度越快。",
])
def test_qualified_statements_do_not_veto(ctx, sentence):
    answers = dict(GOOD["B"])
    answers["Q2"] += sentence
    assert find_vetoes(answers, ctx.rubric.vetoes) == []


def test_class_names_without_ownership_veto(ctx):
    answers = dict(GOOD["C"])
    answers["Q3"] = NAMES_ONLY_Q3
    hits = find_vetoes(answers, ctx.rubric.vetoes)
    assert [h.id for h in hits] == ["veto.class_names_only"]
    assert "RejectionSampler" in hits[0].evidence


def test_identifiers():
    assert identifiers("`RejectionSampler._verify` 调用 `_rejection_kernel`，num_sampled 加 1，Top-p 不算") == [
        "RejectionSampler._verify", "_rejection_kernel", "num_sampled"]


def test_naming_question_and_state_changes_do_not_trigger_the_class_names_veto(ctx):
    # The code map asks for names; a Q3 that says how counters change names state, not just classes.
    answers = dict(GOOD["A"])
    answers["code-map"] = ("第一行对应 `_rejection_kernel` 中的接受判定（由 `rejection_sample` 启动）；"
                           "第二行对应 `_resample_kernel`，它用 max(p-q,0) 的对数做 Gumbel-max 采样。")
    answers["Q3"] = ("按概率的链式法则，后面每个草稿都以前面的草稿为前缀条件，被拒绝后这些行都是在旧前缀下算的，不能再接受。"
                     "vLLM 里 _rejection_kernel 在第一次拒绝后停止，num_sampled = accepted + 1，num_rejected = k − accepted；"
                     "scheduler 的 update_from_output 把 num_rejected 从 num_computed_tokens 里减掉。")
    assert find_vetoes(answers, ctx.rubric.vetoes) == []

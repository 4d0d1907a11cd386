"""Generalisation of the text scoring (issue 8, second pass): Traditional Chinese, unpunctuated answers,
array notation, event probabilities in words, definitions, arrows, possessive sides, concepts as
data, the reworded-copy check and honest confidence."""
import pytest

from grader.claims import TextRubricError, expand, parse_settings
from grader.formulas import array_notation, extract
from grader.normalise import plain, simplified
from grader.text import aligned_share
from textgrade import grade



def test_traditional_chinese_is_read_as_simplified_with_and_without_the_library():
    text = "總拒絕機率為殘差分佈的分母，聯合分佈會偏離"
    assert simplified(text, use_library=False) == "总拒绝概率为残差分布的分母，联合分布会偏离"   # 機率: the Taiwanese word, read as 概率
    assert "拒绝" in simplified(text) and "联合分布" in simplified(text)
    assert simplified("min(p, q) = ABC") == "min(p, q) = ABC"
    assert "残差" in plain("殘差")


def test_unpunctuated_answer_is_split_at_its_spaces(rubric):
    from grader.sentences import split_sentences
    text = "后面的草稿都是接在被拒的词后面写的 可是被拒以后真正输出的是另一个词 所以前文已经变了"
    assert len(split_sentences(text, rubric.text.scope)) == 3
    punctuated = "后面的草稿都是接在被拒的词后面写的，可是被拒以后真正输出的是另一个词。"
    assert len(split_sentences(punctuated, rubric.text.scope)) == 1


def _holds(text, bindings=None):
    return [(f.text, f.holds) for f in extract(text, bindings)[0]]


def test_array_notation():
    assert array_notation("np.maximum(p - q, 0).sum()") == "Σ(max(p - q, 0))"
    assert array_notation("a == b") == "a = b"
    assert all(h for _, h in _holds("p - np.minimum(p, q) == np.maximum(p - q, 0)"))
    assert all(h for _, h in _holds("torch.clamp(p - q, min=0).sum() == 1 - np.minimum(p, q).sum()"))


def test_event_probabilities_in_words():
    assert _holds("∵ P(接受且输出y)=q(y)min(1,p(y)/q(y))=min(p(y),q(y))") == [
        ("A = q(y)min(1,p(y)/q(y))", True), ("q(y)min(1,p(y)/q(y)) = min(p(y),q(y))", True)]
    assert _holds("∴ P(拒且输出y)=max(0,p(y)-q(y))") == [("J = max(0,p(y)-q(y))", True)]
    assert _holds("P(拒且输出y)=max(0,q(y)-p(y))")[0][1] is False


def test_definitions_carry_across_sentences():
    bindings = {}
    assert _holds("令 β = Σ_x min(p(x), q(x))（接受概率）", bindings) == []
    assert "β" in bindings
    assert _holds("所以 Σ_v max(0,p(v)-q(v)) = 1-β", bindings)[0][1] is True
    bindings = {}
    extract("accept = q * np.minimum(1, p / q)", bindings)
    extract("reject_total = 1 - np.minimum(p, q).sum()", bindings)
    assert _holds("accept + reject_total * np.maximum(p - q, 0) / np.maximum(p - q, 0).sum() == p", bindings)[0][1] is True


def test_prose_continuing_a_side_is_not_an_equation():
    assert _holds("P(拒)=Σ_x max(0,p(x)-q(x))=r 的分母")[-1] == ("R = Σ_x max(0,p(x)-q(x))", True)
    assert not [h for _, h in _holds("the sum is Σ_x max(0, p - q) = the denominator of r") if h is False]


def test_arrows_count_when_true_and_are_never_false():
    assert _holds("接受 y：q(y) · min(1, p(y)/q(y)) → min(p(y), q(y))") == [
        ("q(y) · min(1, p(y)/q(y)) = min(p(y), q(y))", True)]
    assert _holds("p → max(0, q - p)") == []


def test_concepts_expand_and_unknown_ones_are_named():
    assert expand("@a|x", {"a": "b|c"}, "here") == "(?:b|c)|x"
    with pytest.raises(TextRubricError, match="unknown concept @nope"):
        expand("@nope", {}, "criteria[0].claims[0]")


def test_rubric_concepts_are_parsed(rubric):
    assert {"accept", "reject", "later", "prefix", "chain"} <= set(rubric.text.concepts)
    bad = {"min_sentences": 2, "copy_ngram": 6, "copy_threshold": 0.5, "copy_review": 0.3, "copy_certain": 0.8,
           "paraphrase_threshold": 0.7, "pasted_ngram": 4, "copy_min_chars": 80, "collusion_threshold": 0.6,
           "collusion_min_chars": 60, "long_answer_chars": 120, "predicate_words": ["是"], "negation": ["不"],
           "scope_breakers": ["时"], "question": ["吗"], "distancing": ["误解"], "concepts": {"accept": "(unclosed"}}
    with pytest.raises(TextRubricError, match="concepts.accept"):
        parse_settings(bad)


def test_reworded_copy_aligns_with_the_reference(ctx):
    ref = ctx.references["Q1"]
    assert aligned_share(ref, ref) == 1.0
    reworded = ref.replace("接受", "采纳").replace("拒绝", "否决")
    assert aligned_share(reworded, ref) >= 0.85
    r = grade(ctx, "Q1", reworded)
    assert r.points == 0 and "copy" in r.flags and r.needs_review


def test_traditional_full_answer_gets_full_marks(ctx):
    answer = ("對任一 token y：草稿恰好是 y 且被接受的機率為 q(y)·min(1, p(y)/q(y)) = min(p(y), q(y))。\n"
              "總拒絕機率為 1 − Σ_x min(p(x), q(x)) = Σ_x max(0, p(x) − q(x))，這正是殘差分佈的分母。\n"
              "因此拒絕後輸出 y 的機率 = P(拒絕) × max(0, p(y) − q(y)) / Σ_v max(0, p(v) − q(v)) = max(0, p(y) − q(y))。\n"
              "兩者相加：min(p(y), q(y)) + max(0, p(y) − q(y)) = p(y)。")
    r = grade(ctx, "Q1", answer)
    assert r.points == 2 and r.confidence == "high"
    assert "對任一" in r.evidence["claims"][0]["sentence"]      # evidence quotes the answer as written


def test_substantial_answer_at_zero_is_low_confidence(ctx):
    answer = ("我认为这个问题需要从工程实践的角度来看，因为推理系统在真实部署中会遇到很多情况。"
              "团队在上线之前会做大量的测试，所以大家对这个设计都比较有信心，它在很多场景下已经被使用。")
    r = grade(ctx, "Q2", answer)
    assert r.points == 0 and r.confidence == "low" and r.needs_review and r.confidence_reason
    short = grade(ctx, "Q2", "我觉得这个设计很好。")
    assert short.points == 0 and short.confidence == "high"

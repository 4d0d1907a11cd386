"""Vetoes: widened patterns (Chinese numerals, 每种/每块, 越好…越接近), negations and qualifications,
math symbols are not identifiers, and each hit quotes its sentence."""
import pytest

from grader.normalise import readable
from grader.vetoes import find_vetoes, identifiers, veto_doubts


@pytest.mark.parametrize("veto_id, sentence", [
    ("veto.peak_speedup", "实际部署里一般都能快两三倍，是白赚的加速。"),
    ("veto.peak_speedup", "在生产环境中，投机解码总能带来 3 倍的加速。"),
    ("veto.universal_support", "每种模型、每块卡都能直接用，不用担心。"),
    ("veto.correctness_vs_performance", "草稿模型越好，输出就越接近 target。"),
    ("veto.correctness_vs_performance", "因为投机解码速度更快，所以它的输出是无偏的。"),
])
def test_vetoes_fire_and_quote_the_sentence(rubric, veto_id, sentence):
    hits = find_vetoes({"Q2": "这是第一句话。" + sentence}, rubric.vetoes, rubric.feedback)
    assert [h.id for h in hits] == [veto_id]
    assert hits[0].evidence == " ".join(readable(sentence).split())


@pytest.mark.parametrize("sentence", [
    "论文报告在 A100 上最高约 2.5 倍的加速，但这取决于接受率和批大小。",
    "并不是总能快 3 倍。",
    "这只说明源码里有这两个核，不等于所有模型、所有硬件都能直接用它们。",
    "草稿越接近 target 只是接受得越多、越快，并不会让输出更正确。",
    "加速与否不影响输出分布是否正确。",
])
def test_negated_or_qualified_statements_do_not_veto(rubric, sentence):
    assert find_vetoes({"Q1": sentence}, rubric.vetoes, rubric.feedback) == []


def test_math_symbols_are_not_identifiers():
    text = r"对第 j 个位置，$p_j, q_j$ 与 x_j、prod_j、y_{i-1}、sum_v；`RejectionSampler._verify` 调用 `_rejection_kernel`，num_sampled 加 1"
    assert identifiers(text) == ["RejectionSampler._verify", "_rejection_kernel", "num_sampled"]


def test_latex_proof_is_not_a_class_names_veto(rubric):
    proof = (r"记 $p_j, q_j$ 为同一前缀下的分布，$x_j \sim q_j$，$P_j(y) = q_j(y)\min(1, p_j(y)/q_j(y)) + \rho_j r_j(y)$。"
             r"再由 $\prod_j p_j$ 的链式分解，逐位置归纳。")
    assert find_vetoes({"Q1": proof}, rubric.vetoes, rubric.feedback) == []


def test_class_names_only_quotes_a_sentence(rubric):
    text = "RejectionSampler、rejection_sample、_rejection_kernel、_resample_kernel 共同保证输出分布等于 p。"
    hits = find_vetoes({"Q1": text}, rubric.vetoes, rubric.feedback)
    assert [h.id for h in hits] == ["veto.class_names_only"] and "RejectionSampler" in hits[0].evidence


def test_a_concluding_sentence_is_read_with_the_argument_before_it(rubric):
    text = ("因为草稿模型是从 target 蒸馏来的，q 和 p 几乎一样，大部分草稿都会被接受；被拒绝的很少，影响可以忽略。"
            "所以输出分布等于 p。")
    hits = find_vetoes({"Q1": text}, rubric.vetoes, rubric.feedback)
    assert [h.id for h in hits] == ["veto.correctness_vs_performance"]
    assert "所以输出分布等于 p" in hits[0].evidence and "蒸馏" in hits[0].evidence


def test_the_approximation_argument_in_one_sentence_vetoes(rubric):
    text = "q 和 p 非常接近，少数被拒的位置再修正一下，误差可以忽略，所以最终输出就是 p。"
    assert [h.id for h in find_vetoes({"Q1": text}, rubric.vetoes, rubric.feedback)] == ["veto.correctness_vs_performance"]


@pytest.mark.parametrize("sentence", [
    # a contrast: the speed is conceded, the correctness comes from the rejection step
    "草稿不同会被拒绝得多一些，速度慢一点，但拒绝采样总会把输出纠正回 target，所以输出分布依然是正确的。",
    # hedged
    "我觉得草稿模型越好，输出就越接近 target。",
    # quoted
    "有一种说法是“草稿模型越好，输出就越接近 target”。",
])
def test_borderline_hits_are_doubts_not_vetoes(rubric, sentence):
    assert find_vetoes({"Q2": sentence}, rubric.vetoes, rubric.feedback) == []
    doubts = veto_doubts({"Q2": sentence}, rubric.vetoes, rubric.feedback)
    assert [d.id for d in doubts] == ["veto.correctness_vs_performance"] and not doubts[0].certain
    assert doubts[0].evidence == " ".join(readable(sentence).split())


@pytest.mark.parametrize("tail", ["负责这件事。", "这几个对象共同负责这个问题。", "together they keep it working."])
def test_a_vague_ownership_word_does_not_save_a_list_of_names(rubric, tail):
    text = "`_rejection_kernel`、`_insert_resampled_kernel`、`get_num_sampled_and_rejected`、`post_update` " + tail
    assert [h.id for h in find_vetoes({"Q3": text}, rubric.vetoes, rubric.feedback)] == ["veto.class_names_only"]


def test_an_ownership_word_with_a_real_object_saves_the_names(rubric):
    text = "`_rejection_kernel`、`get_num_sampled_and_rejected`、`post_update` 负责 num_computed_tokens 的推进。"
    assert find_vetoes({"Q3": text}, rubric.vetoes, rubric.feedback) == []


def test_names_beside_a_short_argument_are_a_doubt(rubric):
    text = ("`_rejection_kernel`、`get_num_sampled_and_rejected`、`post_update`、`Scheduler`：后面的草稿都是接在被拒的 token "
            "后面生成的，拒绝之后前缀变了，所以它们不能再用。")
    assert find_vetoes({"Q3": text}, rubric.vetoes, rubric.feedback) == []
    assert [d.id for d in veto_doubts({"Q3": text}, rubric.vetoes, rubric.feedback)] == ["veto.class_names_only"]


def test_names_set_as_code_and_acronym_camel_case_are_identifiers():
    assert identifiers("`Scheduler`、`GPUModelRunner`、KVCacheManager 和 `post_update()`；`p_j` 与 `min` 不是") == \
        ["Scheduler", "GPUModelRunner", "KVCacheManager", "post_update"]


def test_pseudo_code_with_an_argument_is_not_a_class_names_veto(rubric):
    text = ("p = softmax(top_p(apply_penalties(target_logits) / T) + mask_bias)\n"
            "q = softmax(draft_logits / T)   # exactly what the drafter sampled from\n"
            "The proof gives out exactly p for whatever p is passed in, so p has to be the line above. If mask_bias is "
            "left out of p, illegal drafts can be accepted and the residual can resample them, so the grammar is broken; "
            "a skipped penalty gives the unpenalised distribution exactly, a systematic bias and not float noise.")
    assert find_vetoes({"Q2": text}, rubric.vetoes, rubric.feedback) == []
    # Many names and no state word: never silent, at most a doubt that a person reads.
    assert [d.id for d in veto_doubts({"Q2": text}, rubric.vetoes, rubric.feedback)] in ([], ["veto.class_names_only"])

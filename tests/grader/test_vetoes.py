"""Vetoes: widened patterns (Chinese numerals, 每种/每块, 越好…越接近), negations and qualifications,
math symbols are not identifiers, and each hit quotes its sentence."""
import pytest

from grader.normalise import readable
from grader.vetoes import find_vetoes, identifiers


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

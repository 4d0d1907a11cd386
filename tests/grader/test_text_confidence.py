"""Honest confidence (issue 8, third pass): review where a doubtful finding decided the points, where a
full score rests on weak evidence, or where a substantial answer scored low; none where the grader is
sure. Also the evidence fixes found on the blind sets: English concept words are whole words, Q1 full
credit needs the reject path derived, code-map line cues written as line1/line2."""
from grader.claims import whole_words
from textgrade import grade



def test_a_misconception_that_decided_nothing_is_reported_but_not_reviewed(ctx):
    answer = "截断主要是为了节省计算：后面的草稿反正大多会被拒绝，继续验证它们只是浪费算力，所以第一次拒绝就停下来。"
    r = grade(ctx, "Q3", answer)
    assert r.points == 0 and "misconception" in r.flags
    assert r.evidence["misconceptions"][0]["id"] == "truncation_efficiency"
    assert "截断主要是为了节省计算" in r.feedback                 # still quoted back to the student
    assert r.confidence == "high" and not r.needs_review


def test_a_misconception_that_lowered_the_points_is_reviewed(ctx):
    answer = ("接受路径贡献 min(p(y), q(y))。被拒绝以后不需要残差，直接从 target 分布 p 重新采样一个 token 就行。"
              "两条路径相加就等于 p(y)。")
    r = grade(ctx, "Q1", answer)
    assert r.points == 0 and r.confidence == "low" and r.needs_review and "误解" in r.confidence_reason


def test_a_full_score_resting_on_a_hedged_sentence_is_reviewed(ctx):
    firm = ("如果 target 这边漏了 top-p，输出就会精确地等于那个没处理的分布，这是系统性的偏差。"
            "p 必须是 target logits 经过这个请求的全部处理之后的分布。"
            "草稿这边不必用同一套 top-p，要求的是公式里的 q 等于草稿实际被抽样时的分布。")
    r = grade(ctx, "Q2", firm)
    assert r.points == 2 and r.confidence == "high"
    hedged = firm.replace("如果 target", "我觉得如果 target").replace("p 必须是", "p 好像必须是")
    r = grade(ctx, "Q2", hedged)
    assert r.points == 2 and r.confidence == "low" and r.needs_review and "p_processed" in r.confidence_reason


def test_a_hedged_claim_with_a_verified_identity_stays_strong(ctx):
    answer = ("草稿是 y 且被接受的概率是 q(y)·min(1, p(y)/q(y)) = min(p(y), q(y))。"
              "总拒绝概率 P(reject) = 1 − Σ_x min(p(x), q(x)) = Σ_x max(0, p(x) − q(x))，正好是残差的分母。"
              "所以拒绝路径贡献 P(reject)·max(0, p(y) − q(y))/Σ_v max(0, p(v) − q(v)) = max(0, p(y) − q(y))。"
              "我觉得最后两条路径相加：min(p(y), q(y)) + max(0, p(y) − q(y)) = p(y)。")
    r = grade(ctx, "Q1", answer)
    assert r.points == 2 and r.confidence == "high", r.confidence_reason


def test_q1_full_credit_needs_the_reject_path_derived(ctx):
    waved = ("accept path 的概率是 q(y)·min(1, p(y)/q(y)) = min(p(y), q(y))。reject 之后从 residual max(0, p − q) "
             "normalize 之后 sample，所以 reject path 就贡献 residual 那部分 mass。两条 path 加起来，"
             "min(p, q) + max(0, p − q) = p(y)，done。")
    r = grade(ctx, "Q1", waved)
    assert r.points == 1 and "cancel" in r.missing and "reject_total" in r.missing
    derived = waved.replace("所以 reject path", "residual 的分母就是 P(reject)，两者约掉，所以 reject path")
    assert grade(ctx, "Q1", derived).points == 2


def test_english_concept_words_are_whole_words(ctx):
    assert whole_words("after|applied|处理|x_i") == "(?<![a-z])after|(?<![a-z])applied|处理|(?<![a-z])x_i"
    assert whole_words("(a|b)c|[x|y]z") == "(a|b)c|[x|y]z"
    concept = ctx.rubric.text.concepts["processed"]
    import re
    assert re.search(concept, "the target distribution after the penalty")
    assert not re.search(concept, "the drafter samples with temperature only")


def test_code_map_line_cues_without_a_space(ctx):
    answer = ("line1 -> `_rejection_kernel` (vllm/v1/worker/gpu/spec_decode/rejection_sampler_utils.py), launched by "
              "`rejection_sample(...)`; it compares target_logp > log(u) + draft_logp, no min().\n"
              "line2 -> `_resample_kernel` (same file): Gumbel-max over the residual, no normalizer.")
    r = grade(ctx, "code.source_map", answer)
    assert r.points == 1 and not r.needs_review


def test_code_map_at_zero_with_both_objects_and_parts_is_reviewed(ctx):
    answer = ("`_rejection_kernel` 和 `_resample_kernel` 都在 vllm/v1/worker/gpu/spec_decode/rejection_sampler_utils.py 里，"
              "由主机函数 rejection_sample 启动；它们用对数形式判定，没有显式的 min。")
    r = grade(ctx, "code.source_map", answer)
    assert r.points == 0 and r.needs_review and "行对应" in r.confidence_reason


def test_bu_dengyu_negates_a_claim_unless_it_is_the_terms_own_word(ctx):
    negated = ("接受路径的概率并不是 min(p(y), q(y))，残差也不是 max(0, p − q) 归一化，两条路径相加也不等于 p(y)；"
               "拒绝概率也不等于 Σ max(0, p − q)。")
    r = grade(ctx, "Q1", negated)
    assert r.points == 0 and not {"sum", "reject_total"} & set(r.matched)
    deviation = "如果 target 这边漏了 top-p，输出的分布就不等于用户要的分布，这是系统性的偏差。"
    assert "consequence" in grade(ctx, "Q2", deviation).matched
    emphatic = "后面的草稿并不是以被拒 token 为条件生成的，所以这里和链式法则没有关系。"
    assert "chain" not in grade(ctx, "Q3", emphatic).matched

"""Text scoring, eighteenth pass (issue 8), after the blind round of fresh69–fresh71: prose hard-wrapped at a fixed
width reads as one text; a table of numbers is no keyword list; 影响 and 改变 are predicates; the output said to stay
right (依旧正确) after the target skipped a step is only_acceptance; a good draft making a later acceptance 基本是对的
is the correctness veto, a claim rebutted (这并不成立) only a doubt; names beside an argument that earned full marks
are no names-only doubt."""
from grader.normalise import readable
from grader.vetoes import argued_beside_names, veto_doubts
from textgrade import found, grade, misconceptions, vetoes, doubts


def test_prose_wrapped_at_a_fixed_width_is_one_text():
    wrapped = ("接受判定对应 _rejection_kernel；残差对应 _resample_kernel。_verify 施加完采样参数后调 rejection_sample(...)\n"
               "启动它们；前者写下每个请求的接受长度。")
    assert "\n" not in readable(wrapped)
    # a line per statement keeps its line breaks
    listed = "接受路径给 min(p, q)，这是第一步\n拒绝路径给 max(0, p − q)\n两条路径相加得到 p"
    assert readable(listed).count("\n") == 2


def test_a_wrapped_caller_is_read(ctx):
    text = ("接受判定 → `_rejection_kernel`；残差 → `_resample_kernel`。`_verify` 施加完采样参数后调 `rejection_sample(...)`\n"
            "启动它们；前者写下每个请求的接受长度，之后 `_insert_resampled_kernel` 让 `num_sampled` 变成接受数 + 1。")
    result = grade(ctx, "code.source_map", text)
    assert "caller" in found(result) and result.points == 1


def test_a_table_of_values_is_no_keyword_list(ctx):
    proof = ("### 接受路径\n对任意 y：P(草稿 = y 且被接受) = q(y) · min(1, p(y)/q(y)) = min(p(y), q(y))。\n"
             "### 拒绝概率\nP(reject) = 1 − Σₓ min(p(x), q(x)) = Σₓ max(0, p(x) − q(x))。\n"
             "### 拒绝路径\nP(reject) · r(y) = P(reject) · max(0, p(y) − q(y)) / Σᵥ max(0, p(v) − q(v)) = max(0, p(y) − q(y))，分母被约掉。\n"
             "### 结论\nP(y) = min(p(y), q(y)) + max(0, p(y) − q(y)) = p(y)。\n"
             "| token | p | q | min | max(0,p−q) |\n|---|---|---|---|---|\n| a | 0.6 | 0.3 | 0.3 | 0.3 |\n"
             "| b | 0.3 | 0.3 | 0.3 | 0 |\n| c | 0.1 | 0.4 | 0.1 | 0 |\n")
    result = grade(ctx, "Q1", proof)
    assert "keyword_list" not in result.flags and result.points == 2
    assert "keyword_list" in grade(ctx, "Q1", "接受路径、拒绝概率、残差、相加").flags


def test_the_output_said_to_stay_right_after_the_target_skipped_a_step(ctx):
    for wrong in ("其实不一致只影响速度。",
                  "就算 target 一侧漏了 top-p，拒绝采样仍然保证无损，只是接受率会有些变化，输出分布依旧正确。"):
        assert "only_acceptance" in misconceptions(grade(ctx, "Q2", wrong)), wrong
    right = "草稿端不做 top-p，输出也依旧正确，只要 q 是它真实抽样的分布。"
    assert "only_acceptance" not in misconceptions(grade(ctx, "Q2", right))


def test_a_good_draft_making_a_later_acceptance_roughly_right_is_the_veto(ctx):
    said = "只要 draft model 足够好、accept rate 够高，后面碰巧一样的 token 其实接受了也基本是对的，误差很小。"
    assert "veto.correctness_vs_performance" in vetoes(ctx, "Q3", said)
    rebutted = "如果草稿模型足够好，输出基本是正确的，这并不成立：正确性来自拒绝校正。"
    assert "veto.correctness_vs_performance" not in vetoes(ctx, "Q3", rebutted)
    assert "veto.correctness_vs_performance" in doubts(ctx, "Q3", rebutted)


def test_names_beside_a_full_argument_are_no_names_only_doubt(ctx):
    criteria = [c for c in ctx.rubric.text_criteria if c.answer == "Q2"]
    full = ("验证器输出的分布就是它所用的 p，所以 p 必须是 target 做完 penalty、top-p 和 grammar mask 之后的分布；"
            "漏掉一步，输出就精确地变成那个少处理的分布，这是系统性偏差。q 必须是草稿实际抽样所用的分布，草稿不必做同样的处理。"
            "在 vLLM 里，p 的处理发生在 `RejectionSampler._verify` 调 `Sampler.apply_sampling_params` 时，然后才进 `rejection_sample`。")
    partial = ("vLLM 的 target 前向按 `cu_num_logits` 拼成 ragged 布局，惩罚项通过 `input_ids` 和 `expanded_local_pos` 感知草稿位置。"
               "验证器里的 p 得是 target 做完 penalty、top-p、mask 之后的分布。")
    for text, kept in ((full, False), (partial, True)):
        results = {c.id: grade(ctx, c.id, text) for c in criteria}
        doubted = veto_doubts({"Q2": text}, ctx.rubric.vetoes, ctx.rubric.feedback)
        assert "veto.class_names_only" in [d.id for d in doubted]
        left = argued_beside_names(doubted, criteria, results, ctx.rubric.vetoes)
        assert ("veto.class_names_only" in [d.id for d in left]) is kept


def test_words_of_rejection_and_prefix_in_new_voices(ctx):
    slang = ("草稿抽到 y 又被收下，概率 q(y)·min(1, p(y)/q(y)) = min(p, q)。草稿被毙的总概率 = 1 − Σ min(p, q) = Σ max(0, p − q)，"
             "正好是残差的分母，一约，被毙后抽到 y 的概率就是 max(0, p(y) − q(y))。两条路一加就是 p(y)。")
    assert "reject_total" in found(grade(ctx, "Q1", slang))
    english = ("Both the draft of the second token and the target's second row were computed for the prefix ending in x_i. "
               "After the rejection the emitted token comes from the residual, so the actual prefix is now different.")
    assert {"conditioned", "replaced"} <= set(found(grade(ctx, "Q3", english)))

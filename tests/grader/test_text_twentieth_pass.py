"""Text scoring, twentieth pass (issue 8), after the blind rounds of fresh75–fresh77 (95.6% exact, no dangerous error)
and fresh78–fresh80 (89.6% exact, 8 dangerous errors, 6 of them copies of the reference in disguise):
a statement struck out (~~…~~) or followed by a correction line (订正：…) is taken back, the correction counts;
the output said not to be biased, the cost only the acceptance, is only_acceptance (not of a draft side that
differs); 第1空 names a line; 无显式回滚 negates; 被收 is an acceptance; wrong every time is systematic; most of the
reference's own formulas, names and numbers in an answer that scores send it to a person;
a draft sent back (退回, 打回) is a rejection; a short topic before a space (「accept 那条 …」) belongs to the run after it;
English prose hard-wrapped at a fixed width is one sentence; the later rows conditioned on a prefix that no longer
exists, or on x_≤i; the premise changed (前提变了) and the token changed to y; code notation with named variants
(p_used, q_drawn, p_want[banned] == 0); no model or card said to need special handling; an imitation that grows with
the correctness of the output is for a person to read."""
from grader.normalise import readable
from grader.sentences import split_sentences
from textgrade import doubts, found, grade, misconceptions, vetoes


def test_a_draft_sent_back_is_a_rejection(ctx):
    result = grade(ctx, "Q1", "学生交上来的字 y 被收下的概率是 q(y)·min(1, p(y)/q(y)) = min(p(y), q(y))。\n"
                              "被退回的总概率是 1 − Σ min(p, q) = Σ max(0, p − q)。\n"
                              "退回以后从 r(y) = max(0, p(y) − q(y)) / Σ max(0, p − q) 里抽，退回概率乘上 r(y)，分母约掉，"
                              "得到 max(0, p(y) − q(y))。\n两条路相加 min(p(y), q(y)) + max(0, p(y) − q(y)) = p(y)。")
    assert {"reject_total", "reject_path", "cancel"} <= set(found(result))
    assert result.points == 2
    # 退回到 (fall back to) is not a rejection
    assert "reject_total" not in found(grade(ctx, "Q1", "出问题就退回到普通解码，总概率是 Σ max(0, p − q)。"))


def test_a_short_topic_before_a_space_goes_with_what_is_said_of_it(ctx):
    result = grade(ctx, "Q1", "accept 那条 每个 y 拿到的是 min(p(y),q(y)) 因为 q(y)*min(1,p/q) 化简就是它")
    assert "accept" in found(result)
    # a run of its own stays a sentence of its own
    sentences = split_sentences("拒绝了就从 max(0,p-q) 归一化那个分布里抽 然后乘一下拒绝概率 差不多就是 max(0,p-q) 了",
                                ctx.rubric.criterion("Q1").text.settings.scope)
    assert len(sentences) == 3


def test_english_prose_wrapped_at_a_fixed_width_is_one_sentence(ctx):
    wrapped = ("The drafts after position i, and the target rows p_j computed for them, are all conditioned on a\n"
               "prefix that contains the rejected token x_i. After the rejection the emitted token is y_i.")
    assert "conditioned on a prefix" in readable(wrapped)
    assert "conditioned" in found(grade(ctx, "Q3", wrapped))
    # a line per statement keeps its breaks
    listed = "accept path gives min(p, q)\nreject path gives max(0, p - q)"
    assert readable(listed).count("\n") == 1


def test_later_rows_on_a_prefix_that_no_longer_exists(ctx):
    for said in ("对 j>i，p_j、q_j 都以一个已经不存在的前缀为条件。", "第 j>i 个位置的 p_j 以 (c, x_≤i) 为条件算出，前缀里含被拒的那个。"):
        assert "conditioned" in found(grade(ctx, "Q3", said)), said


def test_the_premise_changed_and_the_token_changed_to_y(ctx):
    assert "replaced" in found(grade(ctx, "Q3", "第 i 步被判错、改成了 y，后面的前提变了。"))
    assert "replaced" in found(grade(ctx, "Q3", "被拒以后真正的前提已经变了。"))
    assert "replaced" not in found(grade(ctx, "Q3", "前提是草稿和 target 用同一个 tokenizer。"))


def test_code_notation_with_named_variants(ctx):
    result = grade(ctx, "Q2", "p_used = softmax(top_p(penalty(mask(z_target))) / T)   # 必须就是用户要的分布\n"
                              "q_rule == q_drawn   # 草稿只按温度抽，公式里的 q 就得是它\n"
                              "p_used[banned] == 0  ->  accept prob 0, resid mass 0")
    assert {"p_processed", "q_drawn", "mask"} <= set(found(result))


def test_no_model_or_card_said_to_need_special_handling_is_universal_support(ctx):
    assert "veto.universal_support" in vetoes(ctx, "Q3", "被拒的 KV 下一轮覆盖掉，什么模型、什么卡都不用特殊处理。")
    assert "veto.universal_support" not in vetoes(ctx, "Q3", "被拒位置的 KV 下一轮直接覆盖，不用特殊处理。")


def test_an_imitation_that_grows_with_the_output_being_right_is_for_a_person(ctx):
    said = "草稿就像徒弟，徒弟越是跟着师傅的口味（penalty、top-p、mask）下料，做出来的菜就越地道。"
    assert "veto.correctness_vs_performance" in doubts(ctx, "Q2", said)
    assert "veto.correctness_vs_performance" not in doubts(ctx, "Q2", "徒弟越是跟着师傅的口味下料，被师傅收下的就越多。")


def test_a_struck_or_corrected_statement_is_taken_back_and_the_correction_counts(ctx):
    struck = ("1. p 必须是经过 repetition penalty、top-p、mask 处理后的 target 分布。\n"
              "2. ~~否则输出分布会偏~~ 更正：其实不会偏，拒绝采样对任何 q 都成立，只是接受率会下降。")
    assert "only_acceptance" in misconceptions(grade(ctx, "Q2", struck))
    assert "否则输出分布会偏" not in readable(struck)
    corrected = "2. 拒绝后直接从 p 重新采样一个 token。\n订正：拒绝后要从残差 max(0, p − q) 归一化后的分布里抽。"
    assert "resample_from_p" not in misconceptions(grade(ctx, "Q1", corrected))
    # 更正确 is no correction, and a line of its own is kept
    kept = "接受率高并不会让输出更正确。\n草稿好坏只影响速度。"
    assert readable(kept).count("\n") == 1


def test_the_output_said_not_biased_with_only_the_acceptance_to_pay(ctx):
    assert "only_acceptance" in misconceptions(grade(ctx, "Q2", "target 少做一步其实不会偏，最多就是接受率低一点、跑得慢。"))
    for fine in ("q 不做 top-p 也不会偏，只是接受率下降。", "不要求两边同一套参数，差异只降低接受率。",
                 "vLLM 的 drafter 只按温度抽，不做 top-p，照样无损，只是接受率低一点。"):
        assert "only_acceptance" not in misconceptions(grade(ctx, "Q2", fine)), fine


def test_blanks_numbered_in_digits_name_the_lines(ctx):
    result = grade(ctx, "code.source_map", "第1空：_rejection_kernel，它写出每个请求的接受长度，最后成为 num_sampled。\n"
                                    "第2空：_resample_kernel，在 start+accepted_length 那一行造残差 logits 并采样。")
    assert {"accept_line", "residual_line"} <= set(found(result)) and "swapped" not in result.flags


def test_no_explicit_rollback_is_a_negation(ctx):
    for said in ("被拒位置的 KV 下一轮被覆盖（无显式回滚）。", "被拒位置的 KV 下一轮被覆盖，并无显式回滚。"):
        assert "kv_rollback" not in misconceptions(grade(ctx, "Q3", said)), said
    assert "kv_rollback" in misconceptions(grade(ctx, "Q3", "被拒之后要把这些 KV 槽位回滚掉。"))


def test_taken_in_and_wrong_every_time(ctx):
    assert "accept" in found(grade(ctx, "Q1", "草稿刚好抽到 y 然后被收了，概率 q(y) 乘 min(1, p/q)，算出来就是 min(p(y), q(y))。"))
    assert "consequence" in found(grade(ctx, "Q2", "不然印出来的分布就是错的，而且是每次都错，不是偶尔抖一下。"))


def test_most_of_the_references_own_marks_send_an_answer_that_scores_to_a_person(ctx):
    from grader.text import marks_share, score_answer
    c = ctx.rubric.criterion("Q1")
    reference = ctx.references["Q1"]
    assert marks_share(reference, reference, ctx.prose, 6) == 1.0
    own = ("接受路径给 min(p, q)。拒绝总概率是 1 − Σ min(p, q)，也就是残差的分母。拒绝路径乘上残差后分母约掉，"
           "得到 max(0, p − q)。两条相加 min(p, q) + max(0, p − q) = p。")
    assert marks_share(own, reference, ctx.prose, 6) < 0.5
    result = score_answer(own, c, reference, None, ctx.rubric.feedback, lesson_text=ctx.prose)
    assert "参考答案独有" not in result.confidence_reason

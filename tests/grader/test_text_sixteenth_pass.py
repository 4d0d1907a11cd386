"""Text scoring, sixteenth pass (issue 8), after the blind round of fresh63–fresh65: names misread by OCR
(`_rejection_kerneI`, `rejecti0n`) are read as the lesson's names; a question the answer asks itself and then
answers is read with its answer; a step said to be obvious is weak evidence; a line opened by a checker's verdict
label (「未命中：…」, 「[缺] …」) is a report on an answer; terse pseudo-code whose names are its own statements' is a
doubt, not a names-only veto; a good draft as the condition for keeping later drafts is the correctness veto."""
from grader.normalise import known_names, repair_names
from textgrade import doubts, found, grade, vetoes


def test_ocr_misread_names_are_the_lessons_names(ctx):
    names = known_names("`_rejection_kernel` 与 `_resample_kernel`，都在 rejection_sampler_utils.py；RejectionSampler._verify")
    assert repair_names("第1行是 _rejecti0n_kerneI，在 rejection_sampIer_utils.py", names) == \
        "第1行是 _rejection_kernel，在 rejection_sampler_utils.py"
    # a name the lesson does not use, or a short symbol, stays as written
    assert repair_names("x_1 与 top_p1 与 _rejection_sampler", names) == "x_1 与 top_p1 与 _rejection_sampler"
    ocr = ("第一行对应 _rejecti0n_kerneI，在 rejection_sampIer_utils.py 里，按顺序判定草稿，把接受长度写进 num_sampled。\n"
           "第二行对应 _resample_kerne1，用 Gumbel-max 从残差里抽，不显式除以 normalizer。")
    assert grade(ctx, "code.source_map", ocr).points == 1
    swapped = ("第一行对应 _resample_kerne1，在 rejection_sampIer_utils.py 里。\n"
               "第二行对应 _rejecti0n_kerneI，把接受长度写进 num_sampled。")
    assert grade(ctx, "code.source_map", swapped).points == 0


def test_a_question_answered_in_the_next_sentence_is_read_with_its_answer(ctx):
    text = ("y 从哪两条路来？一条是草稿就是 y 且被接受，概率 q(y)·min(1, p(y)/q(y)) = min(p(y), q(y))。"
            "拒绝的总概率是多少？全部草稿不被接受的概率加起来 = 1 − Σ min(p, q) = Σ max(0, p − q)。"
            "残差的分母是什么？正是这个 Σ max(0, p − q)，所以拒绝路径给 y 的是 max(0, p(y) − q(y))，分母约掉。"
            "最后 min(p, q) + max(0, p − q) = p。")
    assert "reject_total" in found(grade(ctx, "Q1", text))
    # a yes/no question is not joined to its answer, and a question waved away stays a question
    skipped = ("接受路径给 min(p(y), q(y))。残差是 max(0, p − q) / Σ max(0, p − q)。为什么分母会约掉？略。"
               "两条路径相加就是 p。")
    assert "cancel" not in found(grade(ctx, "Q1", skipped))
    asked = "接受路径给 min(p(y), q(y))。拒绝之后要从 p 重新抽吗？不用，要从残差 max(0, p − q) 归一化后抽。"
    assert "resample_from_p" not in [m["id"] for m in grade(ctx, "Q1", asked).evidence["misconceptions"]]


def test_a_step_said_to_be_obvious_is_weak_evidence(ctx):
    text = ("后续草稿的 p_j、q_j 都以含被拒 token x_i 的前缀为条件；位置 i 实际写出的是修正 token y_i ≠ x_i。"
            "至于由链式法则推出联合分布偏离 target 的那一步是显然的，略。")
    result = grade(ctx, "Q3", text)
    assert result.points < 2 or result.needs_review


def test_a_line_opened_by_a_verdict_label_is_a_report(ctx):
    for pasted in ("未命中：p 必须是处理后的 target 分布；q 必须是草稿实际抽样的分布；后果是系统性偏差。",
                   "[缺] 接受路径 = min(p, q)\n[缺] 拒绝总概率 = Σ max(0, p − q)\n[缺] 两部分相加 = p"):
        result = grade(ctx, "Q2" if pasted.startswith("未") else "Q1", pasted)
        assert result.points == 0, pasted
    own = "p 必须是经过 penalty、top-p 和 mask 处理后的 target 分布，否则输出就是错的分布，是系统性偏差；q 必须是草稿实际抽样的分布。"
    assert grade(ctx, "Q2", own).points == 2


def test_terse_pseudo_code_with_its_own_names_is_a_doubt_not_a_veto(ctx):
    code = ("p = softmax(apply_penalties(apply_top_p(target_logits)))   # 处理完的\n"
            "q = softmax(draft_logits / T)   # 草稿实际用的\n")
    assert "veto.class_names_only" not in vetoes(ctx, "Q2", code)
    assert "veto.class_names_only" in doubts(ctx, "Q2", code)
    recital = "由 `RejectionSampler`、`rejection_sample`、`_rejection_kernel` 和 `Scheduler.update_from_output` 完成。"
    assert "veto.class_names_only" in vetoes(ctx, "Q3", recital)


def test_a_good_draft_as_the_condition_for_keeping_later_drafts_vetoes(ctx):
    wrong = "如果草稿模型足够强，后面恰好一致的 token 就说明草稿猜对了，照样可以收下。"
    assert "veto.correctness_vs_performance" in vetoes(ctx, "Q3", wrong)
    negated = "就算草稿模型足够强，后面恰好一致的 token 也不能收下：它们的条件前缀已经不存在了。"
    assert "veto.correctness_vs_performance" not in vetoes(ctx, "Q3", negated)

"""Text scoring, fifteenth pass (issue 8): a why left to the reader (「拒绝概率为什么刚好抵消分母，这里略过」) asserts
nothing; a step said to be skipped or obvious (同理可得, 不展开, 易证) is weak evidence, so a full score resting on it
is reviewed; a check cell's printed output pasted back is the lesson's text even where the cell prints numbers."""
from grader.text import score_answer
from textgrade import found, grade

Q1_WITHOUT_CANCEL = ("接受路径：草稿恰为 y 且被接受的概率是 q(y)·min(1, p(y)/q(y)) = min(p(y), q(y))。"
                     "拒绝之后从残差 r(y) = max(0, p(y) − q(y)) / Σ max(0, p − q) 采样。两条路径相加，就得到 p(y)。")


def test_a_why_left_to_the_reader_asserts_nothing(ctx):
    for skip in ("拒绝概率为什么刚好抵消分母，这里略过。", "拒絕機率為什麼剛好抵消分母，這裡略過。",
                 "至于为什么拒绝概率正好约掉归一化常数，此处不展开。"):
        result = grade(ctx, "Q1", Q1_WITHOUT_CANCEL + skip)
        assert "cancel" not in found(result) and result.points == 1, skip
    # the same words stating the step are the step
    stated = Q1_WITHOUT_CANCEL + "拒绝的总概率正好是 Σ max(0, p − q)，刚好抵消分母。"
    assert "cancel" in found(grade(ctx, "Q1", stated)) and grade(ctx, "Q1", stated).points == 2
    # a heading that asks why and then answers is an argument, not a skip
    heading = Q1_WITHOUT_CANCEL + "为什么分母会抵消：拒绝的总概率正好是 Σ max(0, p − q)，和分母相同。"
    assert grade(ctx, "Q1", heading).points == 2


def test_a_step_said_to_be_skipped_is_weak_evidence(ctx):
    text = ("接受路径贡献 q(y)·min(1, p(y)/q(y)) = min(p(y), q(y))。拒绝路径和最后的求和同理可得，拒绝后补上残差，"
            "拒绝的总概率抵消分母，两条路径相加就是 p(y)。")
    result = grade(ctx, "Q1", text)
    assert result.points < 2 or result.needs_review
    honest = ("接受路径贡献 min(p(y), q(y))。拒绝的总概率是 Σ max(0, p − q)，乘以残差 max(0, p(y) − q(y)) / Σ max(0, p − q) "
              "就抵消了分母。两条路径相加：min(p, q) + max(0, p − q) = p。")
    assert grade(ctx, "Q1", honest).points == 2 and not grade(ctx, "Q1", honest).needs_review


def test_a_check_cell_output_pasted_back_is_the_lessons_text(ctx):
    pasted = ("1) 具体演示：输出分布 = [0.7, 0.3]，拒绝概率 = 0.300\n"
              "2) p == q：拒绝概率 = 0.0；各草稿的接受概率 = [1.0, 1.0, 1.0]\n"
              "   残差归一化常数 = Σ max(p − q, 0) = 0.0\n"
              "3) 300 组随机 (p, q)：输出与 p 的最大偏差 = 1.1e-16；拒绝概率处处等于 Σ max(p − q, 0)\n"
              "跑出来都对，所以证明完毕。")
    c = ctx.rubric.criterion("Q1")
    result = score_answer(pasted, c, ctx.references.get(c.answer), None, ctx.rubric.feedback, lesson_text=ctx.prose)
    assert result.points == 0 and "pasted" in result.flags
    own = ("我在具体演示里验证过。接受路径给 min(p, q)。拒绝的总概率是 Σ max(p − q, 0)，残差是 max(p − q, 0) 除以它，"
           "两者相乘分母抵消。两条路径加起来就是 p。")
    result = score_answer(own, c, ctx.references.get(c.answer), None, ctx.rubric.feedback, lesson_text=ctx.prose)
    assert "pasted" not in result.flags and result.points == 2

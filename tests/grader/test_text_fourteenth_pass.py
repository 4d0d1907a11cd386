"""Text scoring, fourteenth pass (issue 8), after the blind measure of fresh56–fresh59: a negation inside a clause
about something else (「没有任何和模型相关的假设」) no longer clears a claim about every model in the next clause;
Japanese terms of students who write Chinese as a second language (確率, 棄却, 同時分布, 1行目); the approximation
argument (high acceptance, so an effect on the output is negligible); closeness words that contain 不 (离得不远,
差不多); correctness as a degree (对得越齐，结果越可靠); a paper's figure budgeted for production; a colleague's
universal claim rebutted; a pasted checklist under a feedback heading; informal wordings of claims."""
from grader.normalise import plain
from textgrade import found, grade, misconceptions as _misconceptions, vetoes as _vetoes


def test_a_negated_quantifier_over_assumptions_does_not_clear_a_claim_about_every_model(ctx):
    text = ("拒绝路径负责把剩下的部分补齐（既然公式里没有任何和模型相关的假设，vLLM 的这套实现也就对所有模型、"
            "所有硬件都直接成立），两条路径加起来就是 p(y)。")
    assert _vetoes(ctx, "Q1", text) == ["veto.universal_support"]
    for text in ("vLLM 的这套实现并没有对所有模型、所有硬件都验证过，要看支持矩阵。",
                 "公式里没有任何和模型相关的假设，所以这个等式对任何草稿都成立。",
                 "不是所有模型、所有硬件都能直接用 vLLM 的这套实现。"):
        assert _vetoes(ctx, "Q1", text) == [], text


def test_japanese_terms_are_read_as_chinese(ctx):
    assert "以概率 p(x)/q(x) 被接受" in plain("草稿 x 以確率 p(x)/q(x) 被接受。")
    assert plain("棄却確率") == "拒绝概率" and plain("同時分布就不对") == "联合分布就不对"
    assert plain("1行目 → A") == "第 1 行 → a"
    assert "accept_without_min" in _misconceptions(grade(ctx, "Q1", "草稿 x 从 q 抽出来，以確率 p(x)/q(x) 被接受。"))
    code_map = ("1行目 → `_rejection_kernel`（spec_decode/rejection_sampler_utils.py），由 `rejection_sample` 启动；"
                "用 log p > log u + log q 判定，没有 min。\n2行目 → `_resample_kernel`，同文件；Gumbel-max，不归一化。")
    assert grade(ctx, "code.source_map", code_map).points == 1
    swapped = code_map.replace("_rejection_kernel", "TMP").replace("_resample_kernel", "_rejection_kernel").replace("TMP", "_resample_kernel")
    assert grade(ctx, "code.source_map", swapped).points == 0


def test_high_acceptance_so_a_negligible_effect_is_the_correctness_veto(ctx):
    text = ("EAGLE-3 的 acceptance 已经 90%+ 了，draft 跟 target 几乎一样。所以第一次 reject 之后，后面碰巧 match 的 token "
            "收下来对输出分布的影响可以忽略，输出照样是 target 分布。")
    assert _vetoes(ctx, "Q3", text) == ["veto.correctness_vs_performance"]
    assert "truncation_efficiency" in _misconceptions(grade(ctx, "Q3", text))
    for text in ("接受率很高，所以浮点误差的影响可以忽略。", "q 和 p 很接近，所以拒绝位置浪费的计算影响可以忽略。",
                 "后面碰巧相同的 token 收下来对输出分布的影响不能忽略，输出就不再是 target 分布。"):
        assert _vetoes(ctx, "Q3", text) == [], text
        assert _misconceptions(grade(ctx, "Q3", text)) == [], text


def test_truncation_as_an_implementations_caution_is_the_efficiency_mistake(ctx):
    assert "truncation_efficiency" in _misconceptions(grade(ctx, "Q3", "vLLM 截断主要是实现上保守。"))
    assert _misconceptions(grade(ctx, "Q3", "截断不是实现上的保守，而是正确性所要求的。")) == []


def test_closeness_words_that_contain_a_negation_are_no_negation(ctx):
    for text in ("上面这个等式能站得住，靠的是 draft 和 target 离得不远。", "草稿和 target 差不多，所以输出就是 p。",
                 "如果两个分布差得太多，拒绝路径那一项就补不齐，输出会慢慢偏离 p。",
                 "选一个和 target 贴得近的草稿模型，本身就是正确性的一部分。"):
        assert "correct_because_close" in _misconceptions(grade(ctx, "Q1", text)), text
    for text in ("这个等式能站得住，靠的不是 draft 和 target 离得不远，而是拒绝校正。",
                 "就算两个分布差得太多，输出也不会偏离 p，只是接受率低。",
                 "选一个和 target 贴得近的草稿模型不是正确性的一部分，只关乎速度。", "残差不是 max(0, q − p)。"):
        assert _misconceptions(grade(ctx, "Q1", text)) == [], text


def test_correctness_as_a_degree_of_alignment_is_the_correctness_veto(ctx):
    text = "要是两边的 top-p 和惩罚对得足够齐，草稿基本都会被收下；对得越齐，结果越可靠，对不齐就只能指望残差去兜。"
    assert _vetoes(ctx, "Q2", text) == ["veto.correctness_vs_performance"]
    for text in ("对得越齐，接受率越高，速度越快；输出始终就是 p，并不会越齐越正确。", "草稿接受得越多，采样次数越多，经验分布越来越接近 p。"):
        assert _vetoes(ctx, "Q2", text) == [], text


def test_a_papers_figure_budgeted_for_production_is_the_peak_speed_up_veto(ctx):
    text = "截断虽然会浪费一点验证算力，但无所谓，按 Leviathan 论文的结论，投机解码怎么都能快上三倍，线上照这个数做预算就行。"
    assert _vetoes(ctx, "Q3", text) == ["veto.peak_speedup"]
    text = "章节里引用 Chen 等人 2–2.5 倍那句，我建议注明是 Chinchilla-70B 分布式部署下的结果，别让读者以为生产环境都能这么快。"
    assert _vetoes(ctx, "Q3", text) == []


def test_a_colleagues_universal_claim_rebutted_is_no_veto(ctx):
    text = ("隔壁组同学说这条流水线换哪个模型、哪张卡都能原样用，我不这么看：我只在 Llama-3.1-8B 和 H100 上跑过，"
            "别的模型和硬件没测过，不能替它们打包票。")
    assert _vetoes(ctx, "Q2", text) == []
    assert _vetoes(ctx, "Q2", "隔壁组同学说得对，这条流水线换哪个模型、哪张卡都能原样用。") == ["veto.universal_support"]


def test_a_pasted_checklist_under_a_feedback_heading_is_no_answer(ctx):
    text = ("自检反馈：\n- [未命中] 第一行应对应 `_rejection_kernel`（rejection_sampler_utils.py）\n"
            "- [未命中] 第二行应对应 `_resample_kernel`\n- [未命中] 说明调用者：`RejectionSampler._verify` → `rejection_sample`\n"
            "- [提示] 可以提到对数域判定、不显式归一化")
    assert grade(ctx, "code.source_map", text).points == 0


def test_informal_wordings_of_claims(ctx):
    q1 = ("reject 的总概率是 1 减掉所有 token 的 min(p, q)，因为 Σp = 1，这个数其实就是 Σ max(0, p − q)——巧了，residual "
          "归一化除的就是这个数，一乘一除没了，路二给 y 的就是 max(0, p(y) − q(y))。")
    assert {"reject_total", "cancel"} <= set(found(grade(ctx, "Q1", q1)))
    assert "sum" in found(grade(ctx, "Q1", "两路一加：min + 正差 = p(y)，稳。"))
    q3 = "后面那些草稿都是站在 x_i 这块石头上算出来的，target 的打分也全是按「你还在 x_i 那条路上」算的。"
    assert "conditioned" in found(grade(ctx, "Q3", q3))
    assert "chain" in found(grade(ctx, "Q3", "链式法则：第 i+1 个 token 应该服从 p(·|…, y_i)，继续接受就是用了 p(·|…, x_i)，联合分布就不对。"))
    assert "consequence" in found(grade(ctx, "Q2", "少做一样，JSON mode 下就会吐出不合法的 token。"))
    assert "q_drawn" in found(grade(ctx, "Q2", "草稿那边随便，只要公式里的 q 真是它抽 token 用的那个分布就行。"))
    assert "q_drawn" not in found(grade(ctx, "Q2", "q 真是草稿分布。"))


def test_an_answer_that_reports_on_an_answer_is_pasted_back(ctx):
    run = ("$ python -m course.selfcheck --lesson 7 --question Q2\n[PASS] 要点：p 必须是 target 经全部采样参数处理后的分布\n"
           "[PASS] 要点：q 必须是草稿实际的抽样分布\n[PASS] 要点：破坏后输出是系统性偏差，而非数值误差\n"
           "[PASS] 要点：grammar mask 使 p(x)=0 的 token 必被拒\nQ2: 2/2 ✔")
    comment = ("【批注】本答案指出了：①后续草稿以被拒 token 为前缀；②修正 token 与被拒草稿不同，真实前缀已改变；③由链式法则，"
               "继续接受会使联合分布偏离 target。建议补充：KV 槽位在下一轮被覆盖而非回滚。评级：A")
    for question, text in (("Q2", run), ("Q3", comment)):
        result = grade(ctx, question, text)
        assert result.points == 0 and "pasted" in result.flags and result.needs_review, text
    labels = "【自检】Q2\n未命中：p 必须是 target 经过全部采样参数处理后的分布\n未命中：破坏对应关系时输出是系统性偏差"
    assert grade(ctx, "Q2", labels).points == 0
    # an answer of its own that mentions a pass or a grade is not a report
    own = ("验证器输出的恰好是它用的 p，所以 p 必须是 target 经过 penalty、top-p 和 grammar mask 处理后的分布；漏了 top-p，"
           "输出就精确地是没截断的分布，这是系统性偏差。我跑了 pytest，全部 pass。")
    assert "pasted" not in grade(ctx, "Q2", own).flags


def test_the_rejection_written_as_a_bare_character(ctx):
    text = ("拒的总概率是 1 减去所有 min 的和，因为 p 加起来也是 1，所以它就等于所有 max(0,p−q) 加起来——巧了，这正好是残差的分母，"
            "乘上 r(y) 分母约掉，剩 max(0,p(y)−q(y))。")
    assert {"reject_total", "cancel"} <= set(found(grade(ctx, "Q1", text)))

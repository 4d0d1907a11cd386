"""Text scoring, eleventh pass (issue 8), after the blind measure of fresh45 to fresh48: vetoes in disguise (a
latency cut to a fraction, a gain in per cent, a paper's figure said to hold once deployed in the next sentence,
rhetorical questions that assert, 「无模不宜、无卡不适」, a dare to name a model it will not run on, a high
acceptance rate or a close draft said to make the output right), two words read inside others (核对 in 「两个核对
每一个模型」, check in checkpoint), zhconv rewriting Simplified text, chat jargon (drf, tgt), and misconceptions in new
wordings (「截不截断，输出都一样对」, 「接受了也不会让输出偏离」, 「一致其实只是性能问题」, argmaxes compared with 是不是)."""
from grader.normalise import plain, simplified
from textgrade import grade, misconceptions as _misconceptions, vetoes as _vetoes, doubts as _doubts


def test_simplified_text_is_left_as_written_and_traditional_text_converted():
    # zhconv's phrase table turns 么正 into 幺正 ("unitary") even in Simplified text
    assert simplified("这两块凭什么正好拼成 p") == "这两块凭什么正好拼成 p"
    assert simplified("這個機率是對的") == "这个概率是对的"


def test_chat_jargon_and_rhetorical_questions_are_read_as_meant():
    assert plain("drf 越贴近 tgt") == "draft 越贴近 target"
    assert plain("还不是因为 q 和 p 差不多") == "就是因为 q 和 p 差不多"
    assert plain("上了线哪回不是稳稳拿到") == "上了线每回都是稳稳拿到"
    assert plain("那次不是这样") == "那次不是这样"       # a plain negation stays one
    assert plain("the tgtx model") == "the tgtx model"     # whole words only


def test_speed_ups_as_fractions_percentages_and_across_two_sentences(ctx):
    for question, text in (("Q1", "所以这东西上生产就是白捡：延迟直接压到原来的三分之一，谁开谁知道。"),
                           ("Q2", "论文里报的是吞吐提升百分之两百。上线以后也就是这个数。"),
                           ("Q3", "截断也不耽误速度：论文那个三倍，上了线哪回不是稳稳拿到？")):
        assert _vetoes(ctx, question, text) == ["veto.peak_speedup"], text
    for question, text in (("Q2", "论文里报的是吞吐提升百分之两百。上线以后能不能到这个数，要在自己的负载上测。"),
                           ("Q2", "论文里报的是 2~3 倍。我们线上测过，大概是这个数的一半。"),
                           ("Q1", "拒绝概率是百分之三十的时候，残差这条路给 y 的贡献就是 max(0, p − q)。")):
        assert _vetoes(ctx, question, text) == [], text


def test_universal_support_read_inside_other_words_no_longer_hides(ctx):
    for question, text in (("code-map", "Triton 的好处是 portable，所以这两个核对每一个模型、每一张卡都是 100% 支持的，不用担心。"),
                           ("Q2", "这套流程跟模型无关，谁家的 checkpoint、哪一代的卡拿过来都能直接跑，不用操心。"),
                           ("Q1", "此理既明，则 vLLM 之验证核无模不宜、无卡不适，取而用之可也。")):
        assert _vetoes(ctx, question, text) == ["veto.universal_support"], text
    # a real check still qualifies it
    assert _vetoes(ctx, "Q2", "上线前要核对每一个模型、每一张卡是否支持。") == []
    dare = "And since that stop lives in a plain Triton kernel, name one model or one GPU it won't run on. You can't."
    assert "veto.universal_support" in _doubts(ctx, "Q3", dare)


def test_a_negated_consequence_and_a_pointer_to_the_docs_qualify_universal_support(ctx):
    text = ("这个证明是纯数学的，对任意 p、q 都成立；但这并不意味着 vLLM 的投机解码对每个模型、每块客户的卡都已经能直接打开——"
            "某个组合支不支持，要看目标版本的文档，再在客户环境里实测。")
    assert _vetoes(ctx, "Q1", text) == []
    assert _vetoes(ctx, "Q1", "每个模型、每块卡都能直接打开，不用看文档。") == ["veto.universal_support"]


def test_correctness_put_on_a_high_acceptance_rate_or_a_close_draft(ctx):
    for question, text in (
            ("Q2", "另外 drf 越贴近 tgt，最终输出也就越接近用户想要的那个分布。"),
            ("Q1", "这两块凭什么正好拼成 p？还不是因为草稿是照着 target 蒸出来的，q 和 p 八九不离十，拼起来自然就是 p 嘛。"),
            ("Q3", "接受率都到百分之九十五了，截不截断，输出都一样对。"),
            ("Q3", "草稿越准，越可以放心多收几个。"),
            ("Q3", "如果草稿和 target 高度对齐，后面碰巧相同的 token 接受了也不会让输出偏离 target。")):
        assert _vetoes(ctx, question, text) == ["veto.correctness_vs_performance"], text
    for question, text in (
            ("Q3", "接受率到了百分之九十五也一样：第一次拒绝之后的草稿不能接受。"),
            ("Q1", "因为 q 和 p 八九不离十，所以接受率很高，速度就快，但输出分布对任何 q 都是 p。"),
            ("Q3", "草稿越准，接受的 token 越多，输出分布始终是 p。")):
        assert _vetoes(ctx, question, text) == [], text
    # an analogy of correctness by closeness is left to a person
    analogy = "至于学徒，他的手艺越接近大厨，端出去的菜就越地道。"
    assert "veto.correctness_vs_performance" in _doubts(ctx, "Q2", analogy)
    assert "veto.correctness_vs_performance" not in _doubts(ctx, "Q2", "草稿越接近 target，接受率越高，加速越多。")


def test_misconceptions_in_new_wordings(ctx):
    for question, text, wrong in (
            ("Q3", "被拒位置之后的草稿是接着 x_i 往下起草的。接受率都到百分之九十五了，截不截断，输出都一样对。", "truncation_efficiency"),
            ("Q3", "后面碰巧相同的 token 其实就是 target 会选的，接受了也不会让输出偏离 target。", "truncation_efficiency"),
            ("Q2", "p 要处理完。所以这个一致其实只是性能问题：不一致的话慢一点，输出还是对的。", "only_acceptance"),
            ("Q2", "drf 那边也必须用一模一样的 top-k / top-p / penalty 处理 q，否则拒绝采样的前提就不成立。", "draft_same_processing"),
            ("Q1", "温度为 0 时规则就变成看 target 的 argmax 和 draft 分布的 argmax 是不是同一个 token，一样就接受。",
             "greedy_argmax_rule")):
        assert wrong in _misconceptions(grade(ctx, question, text)), text
    for question, text, wrong in (
            ("Q3", "截不截断关系到正确性，不是效率问题。", "truncation_efficiency"),
            ("Q3", "被拒位置之后的草稿不会被接受，不会让输出偏离 p。", "truncation_efficiency"),
            ("Q2", "这种一致不只是性能问题：target 侧不一致的话输出就偏了。", "only_acceptance")):
        assert wrong not in _misconceptions(grade(ctx, question, text)), text


def test_a_bare_gain_in_per_cent_or_a_latency_halved_is_left_to_a_person(ctx):
    for text in ("线上延迟降到原来的一半。", "吞吐提升了 80%。"):
        assert "veto.peak_speedup" in _doubts(ctx, "Q1", text), text
    for text in ("拒绝概率是 30% 的时候，残差的分母就是 0.3。", "接受率提升百分之十，这只影响速度。"):
        assert "veto.peak_speedup" not in _doubts(ctx, "Q1", text), text

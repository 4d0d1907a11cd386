"""Text scoring, eighth pass (issue 8), after the blind measure of fresh25 to fresh28: absolute values, sums in
words, expectations and one-letter functions in a proof; LaTeX display environments, escaped underscores and
arrows; markdown tables; phone-typed math (乘, min(p q)); the greedy rule stated in a quotation or as 「看…是否
等于…」; 不然 that is no negation; a why-question left hanging; code-map cues in reading order; vetoes said of any
GPU (「什么显卡都能」), negated with 不代表/不等于, or a paper's figure made the production norm; and the names of
a pseudo-code argument that are its own code, not a recital."""
from grader.codemap import attach, attached_lines
from grader.normalise import readable
from grader.sentences import split_sentences
from grader.vetoes import find_vetoes, identifiers, prose_names, veto_doubts
from textgrade import grade, holds as _holds


def test_an_absolute_value_is_evaluated():
    # Σ|p − q| is twice the rejection probability: a false identity, not an unreadable one
    assert _holds("1 − Σ_x min(p(x), q(x)) = Σ_x |p(x) − q(x)|") == [("1 - Σ_x min(p(x), q(x)) = Σ_x |p(x) - q(x)|", False)]
    assert _holds("P(reject) = 1/2 Σ abs(p - q)") == [("R = 1/2 Σ abs(p - q)", True)]
    # the conditioning bar of p(y | c) is no absolute value
    assert _holds("p(y | c) = min(p(y|c), q(y|c)) + max(0, p(y|c) - q(y|c))")[0][1] is True


def test_a_sum_in_words_and_an_expectation_over_the_draft():
    assert _holds("Reject prob: sum over x of q(x)(1 − min(1, p(x)/q(x))) = Σ (q(x) − min(p(x), q(x)))")[0][1] is True
    assert _holds("P(A^c) = E[1 - min(1, p(X)/q(X))] = 1 - Σ_x min(p(x), q(x))") == [
        ("R = Σ q·[1 - min(1, p(X)/q(X))]", True), ("Σ q·[1 - min(1, p(X)/q(X))] = 1 - Σ_x min(p(x), q(x))", True)]


def test_a_one_letter_function_is_bound_and_applied():
    bindings = {}
    _holds("a(x) = min(1, p(x)/q(x)), and on rejection draw from r.", bindings)
    assert bindings == {"a": "min(1, p(x)/q(x))"}
    assert _holds("q(y)a(y) = min(q(y), p(y)).", bindings) == [("q(y)·(min(1, p(x)/q(x))) = min(q(y), p(y))", True)]
    assert _holds("E[a(X)] = Σ_x min(p(x), q(x))", bindings)[0][1] is True
    # a bound name at the start of a side takes no product sign
    assert _holds("acc + res == p", {"acc": "min(p, q)", "res": "max(p - q, 0)"})[0][1] is True


def test_latex_display_environments_escapes_and_arrows():
    text = "\\begin{aligned} P(y) &= a \\\\ &= b && (note) \\\\ x \\, y \\end{aligned}"
    assert readable(text) == "P(y) = a = b\nx y"
    assert readable(r"\textbf{Blank 1} $\leftrightarrow$ \texttt{\_rejection\_kernel}") == "Blank 1 ↔ _rejection_kernel"
    assert readable(r"$U\sim\mathrm{Unif}(0,1)$, $Y = X\mathbf 1_A$ $\blacksquare$") == "U~ Unif(0,1), Y = X 1_A"
    # an ampersand in prose stays
    assert readable("p & q") == "p & q"


def test_a_markdown_table_row_is_one_sentence_of_clauses():
    text = "| 路径 | 概率 |\n|---|---|\n| 草稿 = y 且接受 | q(y)·min(1, p(y)/q(y)) = **min(p(y), q(y))** |\nok p(x | c) = 1"
    assert readable(text) == "路径，概率\n草稿 = y 且接受，q(y)·min(1, p(y)/q(y)) = min(p(y), q(y))\nok p(x | c) = 1"


def test_phone_typed_math():
    assert readable("接受那条路 q乘min(1 p/q) 就是min(p q) 乘积 p乘以q") == "接受那条路 q·min(1, p/q) 就是 min(p, q) 乘积 p·q"


def test_a_formula_comma_is_no_prose_punctuation(ctx):
    scope = ctx.rubric.text_criteria[0].text.settings.scope
    text = "拒绝总概率是1-Σmin(p,q 因为Σp=1 所以等于Σmax(0,p-q) 残差的分母就是这个 两条加起来就是p"
    assert len(split_sentences(text, scope)) > 1


def test_the_greedy_rule_in_a_quotation_or_as_a_test(ctx):
    for text in ("贪心时更直观：每个位置判定「argmax p_j = argmax q_j」，第一处不等就截断。",
                 "贪心的情况更直观：每个位置就是看 argmax p 是否等于 argmax q，第一个不等的地方就停"):
        assert "greedy_argmax_rule" in [m["id"] for m in grade(ctx, "Q3", text).evidence["misconceptions"]]
    for text in ("草稿和 target 都是贪心时，看 argmax p 是否等于 argmax q。",
                 "有人说「argmax p = argmax q 就接受」，这是误解。"):
        assert not grade(ctx, "Q3", text).evidence["misconceptions"]
    both_ways = "target 贪心时也一样，不论草稿是采样还是贪心，规则都是 argmax p == argmax q 就接受。"
    assert "greedy_argmax_rule" in [m["id"] for m in grade(ctx, "Q3", both_ways).evidence["misconceptions"]]


def test_otherwise_is_no_negation(ctx):
    result = grade(ctx, "Q3", "每一个 token 都得以真实前缀为条件，不然整段的联合分布就歪了。")
    assert "chain" in [c["id"] for c in result.evidence["claims"] if c["found"]]


def test_a_why_question_left_hanging_is_a_question(ctx):
    result = grade(ctx, "Q2", "vLLM 的 drafter 好像只用温度，那它为什么不出错……")
    assert result.points == 0


def _lines(ctx):
    return next(c.text for c in ctx.rubric.text_criteria if c.text.lines).lines


def _attached(ctx, text):
    scope = ctx.rubric.text_criteria[0].text.settings.scope
    ok, swapped = attached_lines(attach(split_sentences(text, scope), _lines(ctx)))
    return sorted(ok), swapped


def test_code_map_cues_in_reading_order(ctx):
    # a cue after each object, inside its parentheses, in one clause
    assert _attached(ctx, "两行分别在 `_rejection_kernel`（接受判定，第一行）和 `_resample_kernel`（残差重采样，第二行）里实现。") == (
        ["accept_line", "residual_line"], False)
    # a cue before each object
    assert _attached(ctx, "Line 1 (the acceptance probability) maps to `_rejection_kernel` and line 2 (the residual "
                          "mass) to `_resample_kernel`.") == (["accept_line", "residual_line"], False)
    assert _attached(ctx, "Blank 1 is `_rejection_kernel`; blank 2 is `_resample_kernel`.") == (["accept_line", "residual_line"], False)
    # the swap is still seen
    assert _attached(ctx, "第一行对应 `_resample_kernel`，第二行对应 `_rejection_kernel`。")[1] is True


def _vetoes(ctx, question, text):
    return ([h.id for h in find_vetoes({question: text}, ctx.rubric.vetoes, ctx.rubric.feedback)],
            [h.id for h in veto_doubts({question: text}, ctx.rubric.vetoes, ctx.rubric.feedback)])


def test_universal_support_said_of_any_gpu_and_its_negations(ctx):
    for text in ("总结一下就是 vLLM 已经把这套核写好了，什么模型什么显卡都能直接开 spec decode。",
                 "vLLM 已经把这套实现成 Triton 核了，所以不管什么模型、什么显卡，开了投机解码都是无损的。"):
        assert _vetoes(ctx, "Q1", text)[0] == ["veto.universal_support"]
    for text in ("Triton 核不代表哪块卡都能跑，我只在课程给的环境里看过。",
                 "这不等于 vLLM 里每个模型、每种草稿方法都已经支持 structured output 加投机解码。",
                 "无论用什么草稿模型，输出都是无损的。", "支持什么模型要查文档。"):
        assert _vetoes(ctx, "Q1", text) == ([], [])


def test_a_paper_figure_made_the_production_norm_is_the_peak_speedup_veto(ctx):
    assert _vetoes(ctx, "Q2", "一致之后照样能拿到论文里的 2~3 倍加速，生产上一般就是这个数。")[0] == ["veto.peak_speedup"]
    assert _vetoes(ctx, "Q2", "论文报告在 A100 上最高 2.5 倍加速，生产环境要自己测。") == ([], [])


def test_the_names_of_a_pseudo_code_argument_are_its_code(ctx):
    code = ("```\np = softmax(top_p(apply_penalties(mask(z_target)) / T))   # 请求要的分布，验证器必须用这个\n"
            "q = softmax(z_draft / T)   # 草稿实际抽样用的分布，vLLM 的草稿只除温度\n"
            "out_dist(p, q) == p   # Q1 对任意 q 成立，只要 q 就是草稿的真实分布\n```\n"
            "如果 target 侧漏了 top_p，输出就精确地等于没截断的分布，这是系统性的偏差，不是噪声，草稿一侧怎么处理都不影响正确性。")
    assert prose_names(code) == []
    assert _vetoes(ctx, "Q2", code) == ([], [])
    # names recited in prose beside an argument stay a doubt
    recital = ("这个问题涉及 RejectionSampler、_rejection_kernel、_insert_resampled_kernel、Scheduler 和 num_computed_tokens 等对象。"
               "第一次拒绝以后，后面的草稿不能再被接受，因为它们的前缀条件已经不对了。按照链式法则，输出必须在第一处拒绝后截断。")
    assert _vetoes(ctx, "Q3", recital) == ([], ["veto.class_names_only"])
    # formats and chips are no names
    assert identifiers("FP32 on an H100, MRV2 path") == []


def test_untested_support_is_a_qualifier(ctx):
    assert _vetoes(ctx, "Q3", "I didn't test whether it works for every model, e.g. Mamba-like layers need more.") == ([], [])
    assert _vetoes(ctx, "Q3", "我没测过是不是每个模型都能用。") == ([], [])
    # an untested remark about something else does not qualify a universal claim
    assert _vetoes(ctx, "Q3", "vLLM 已经支持所有模型，我没测过性能。")[0] == ["veto.universal_support"]


def test_a_rule_simplified_to_a_quotation_is_stated(ctx):
    text = 'Note for greedy requests vLLM simplifies the whole rule to "accept iff argmax p = argmax q".'
    assert "greedy_argmax_rule" in [m["id"] for m in grade(ctx, "Q3", text).evidence["misconceptions"]]


def test_a_negated_purpose_governs_its_whole_phrase(ctx):
    assert "division_by_zero" in [m["id"] for m in grade(ctx, "Q2", "一致是为了避免 q(x)=0 时除以零。").evidence["misconceptions"]]
    assert not grade(ctx, "Q2", "(b) 也不是为了避免 q(x)=0 时除以零。").evidence["misconceptions"]


def test_there_is_no_explicit_rollback(ctx):
    assert not grade(ctx, "Q3", "不存在显式的 KV 回滚或释放，KV 槽下一轮直接被覆盖。").evidence["misconceptions"]
    assert grade(ctx, "Q3", "被拒位置的 KV 要显式回滚。").evidence["misconceptions"]
    # a nonexistent prefix is still a claim word, not a negation
    assert "replaced" in [c["id"] for c in grade(ctx, "Q3", "后面那些概率描述的是一个根本不存在的前缀。").evidence["claims"] if c["found"]]


def test_a_ratio_compared_with_one_is_no_stated_acceptance_probability(ctx):
    text = "a = np.minimum(1, p / q)   # 每个草稿 token 的接受概率（必须取 min，p/q > 1 不是概率）"
    assert not grade(ctx, "Q1", text).evidence["misconceptions"]
    assert grade(ctx, "Q1", "接受概率就是 p/q。").evidence["misconceptions"]


def test_combining_accents_on_letters_go():
    assert readable("Let p̃ = softmax(z) and q̂ be the draft's.") == "Let p = softmax(z) and q be the draft's."


def test_a_bracket_left_open_at_the_relation_sign_is_closed():
    assert _holds("add 2 ways min(p,q) + max(0,p-q = p(y) done") == [("min(p,q) + max(0,p-q) = p(y)", True)]


def test_a_sentence_that_opens_with_but_does_not_turn_inside_itself(ctx):
    from grader.text import _turns
    contrast = ctx.rubric.text_criteria[0].text.settings.contrast
    assert not _turns(contrast, "但位置 i 实际输出的是 y_i,前缀已经换了。")
    assert not _turns(contrast, "however, the prefix changed.")
    assert _turns(contrast, "前缀变了，但其实也没关系。")

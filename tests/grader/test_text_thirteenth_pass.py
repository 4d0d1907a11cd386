"""Text scoring, thirteenth pass (issue 8), after the blind measure of fresh52, fresh53 and fresh55: rhetorical
questions that assert and close with a question mark (「哪一次上线不是稳稳三倍加速？」, 「输出怎么可能还是 p？」); correctness
put on the drafter under other names (an EAGLE head, 「两边分布贴得很紧」) or on high-acceptance models; an
implementation said to hold on every model and GPU; Taiwanese wording (馬可夫鏈, 被打槍, 第一格); "rather than rolled
back" as a negation; measure notation ((p ∧ q)(A), (p ∧ q)(Ω)) and an identity under an underbrace read as
written; true and false identities side by side sent to a person."""
from grader.normalise import spelled_out
from textgrade import found, grade, holds, misconceptions as _misconceptions, vetoes as _vetoes


def test_rhetorical_questions_read_as_the_statements_they_make():
    assert spelled_out("开了以后，哪一次上线不是稳稳三倍加速？截断以后") == "开了以后，每一次上线都是稳稳三倍加速。截断以后"
    assert spelled_out("q 要是离 p 很远，输出怎么可能还是 p？") == "q 要是离 p 很远，输出不可能还是 p。"
    assert spelled_out("还不是因为 eagle 头训练得好？") == "就是因为 eagle 头训练得好。"


def test_a_rhetorical_speed_up_is_the_peak_speed_up_veto(ctx):
    text = "截断当然有代价，但代价不大——开了投机解码以后，哪一次上线不是稳稳三倍加速？"
    assert _vetoes(ctx, "Q3", text) == ["veto.peak_speedup"]
    assert _vetoes(ctx, "Q3", "开了投机解码以后，上线的加速要按自己的负载实测，论文里的三倍是特定条件下的。") == []


def test_correctness_put_on_the_drafter_in_other_names(ctx):
    # the misconception correct_because_close is the correctness veto: stated, the veto fires on its sentence
    for text in ("MRV2 的 draft head 直接吃 target 的 hidden states，两边分布贴得很紧，所以 verify 之后的输出就跟 target 一致。",
                 "这个等式在部署里之所以靠得住，还不是因为 EAGLE 头训练得跟 target 几乎一样？",
                 "q 要是离 p 很远，输出怎么可能还是 p？"):
        assert "correct_because_close" in _misconceptions(grade(ctx, "Q1", text)), text
    text = "在接受率高的模型上，拒绝点之后碰巧相同的 token 接受了，输出照样是 target 分布。"
    assert _vetoes(ctx, "Q3", text) == ["veto.correctness_vs_performance"]
    for text in ("q 和 p 越接近，接受率越高，所以加速越多，输出和 target 的分布一致是由拒绝采样保证的。",
                 "这个等式对任何 q 都成立，哪怕 q 离 p 很远，输出也还是 p。"):
        assert _vetoes(ctx, "Q1", text) == [], text
        assert "correct_because_close" not in _misconceptions(grade(ctx, "Q1", text)), text


def test_an_implementation_said_to_hold_everywhere_is_universal_support(ctx):
    assert _vetoes(ctx, "Q1", "vLLM 的这套实现对所有模型、所有硬件都直接成立。") == ["veto.universal_support"]
    assert _vetoes(ctx, "Q1", "这个等式对所有模型、任何 q 都成立。") == []


def test_taiwanese_wording(ctx):
    markov = "自回歸生成是一條馬可夫鏈，下一個 token 只看上一個 token，所以被拒之後後面的草稿都不能用。"
    assert "markov_chain" in _misconceptions(grade(ctx, "Q3", markov))
    rejected = "打槍的總機率把所有 x 加起來是 1 − Σmin(p,q)，又因為 p 加總是 1，它其實就是 Σ max(0, p − q)。"
    assert "reject_total" in found(grade(ctx, "Q1", rejected))
    code_map = ("第一格其實就是 _rejection_kernel 在做的事，檔案是 rejection_sampler_utils.py，rejection_sample 這個 host 函式把它叫起來。"
                "不過它是取 log 在比，log p > log u + log q，沒寫 min。第二格是同一支檔案的 _resample_kernel，它也不歸一化，直接 Gumbel-max。")
    assert grade(ctx, "code.source_map", code_map).points == 1


def test_negations_of_a_rollback_and_of_the_same_processing(ctx):
    text = "The stale KV slots are simply overwritten next step rather than rolled back."
    assert "kv_rollback" not in _misconceptions(grade(ctx, "Q3", text))
    assert "kv_rollback" in _misconceptions(grade(ctx, "Q3", "The stale KV slots are rolled back after a rejection."))
    same = "q 必须是草稿实际抽样所用的分布——草稿没必要跟 target 做同样的 top-p。"
    assert "draft_same_processing" not in _misconceptions(grade(ctx, "Q2", same))


def test_an_argmax_match_accepted_in_chat_words_is_the_greedy_rule(ctx):
    text = "温度为 0 时直接看 draft 的 argmax 和 target 的 argmax 是不是同一个 token，一致就收，不一致就换成 target 的 argmax。"
    assert "greedy_argmax_rule" in _misconceptions(grade(ctx, "Q2", text))


def test_measure_notation_is_read_as_written():
    # the whole space Ω is a total mass the front end does not read: no equation, not a false one
    assert holds("拒絕機率 = 1 − (p ∧ q)(Ω) = ∫ (p − q)⁺ dν") == []
    # a function at a set or a point, read pointwise as p(y) is
    assert holds("P(輸出 ∈ A) = (p ∧ q)(A) + (p − q)⁺(A) = p(A)") == [("(min(p, q)) + (p - q)_+ = p(A)", True)]
    # a closing mark is no part of the side before it
    assert holds("⇒ P(输出 y) = min(p, q) + (p − q)⁺ = p(y) ∎") == [("min(p, q) + (p - q)_+ = p(y)", True)]
    # a condition in brackets: 「P_rej = 0（即 p = q）时」 is no claim that the rejection probability is 0
    assert not [f for f, ok in holds("补充：P_rej = 0（即 p = q）时残差从不被用到。") if ok is False]


def test_an_identity_under_an_underbrace_is_an_equation(ctx):
    text = (r"$$\Pr[\text{out}=y]=\underbrace{q(y)\min\!\Bigl(1,\tfrac{p(y)}{q(y)}\Bigr)}_{=\,\min(p(y),\,q(y))}"
            r"+\beta\,\tilde r(y)$$")
    assert ("q(y)min (1,(p(y))/(q(y))) = min(p(y), q(y))", True) in holds(text)
    assert "accept" in found(grade(ctx, "Q1", text))


def test_true_and_false_identities_side_by_side_go_to_a_person(ctx):
    text = ("接受部分是 q(y)·min(1, p(y)/q(y)) = min(p(y), q(y))。残差是 r(y) = max(0, p(y) − q(y)) / Σ_v max(0, p(v) − q(v))。"
            "拒绝概率写成 1 − Σ min(p, q) = Σ |p − q|。")
    result = grade(ctx, "Q1", text)
    assert "false_formula" in result.flags and result.points < 2
    assert result.needs_review and "也有" in result.confidence_reason


def test_vetoes_read_an_answer_dictated_without_punctuation_run_by_run(ctx):
    dictated = ("因为 x i 后面的草稿还有 target 的 p q 那几行 都是在含 x i 的前缀上算的 第 i 个被拒以后输出的是 y i 不是 x i 前缀变了 "
                "再接受后面的就是拿旧前缀的条件分布去生成 联合分布就不对了 截断虽然浪费一点算力 但投机解码上生产一般都稳定快两三倍 所以无所谓")
    assert _vetoes(ctx, "Q3", dictated) == ["veto.peak_speedup"]      # 「不是 x i」 many runs earlier negates nothing of it
    close = "嗯这个其实就是说草稿模型是从 target 蒸馏出来的嘛 q 跟 p 非常接近 所以接受率很高 大部分 token 都被接受了 输出分布自然就等于 p"
    assert _vetoes(ctx, "Q1", close) == ["veto.correctness_vs_performance"]
    paper = "然后论文里不是说快两到两点五倍嘛 那上线也就是这个数"
    assert _vetoes(ctx, "Q1", paper) == ["veto.peak_speedup"]
    measured = "然后论文里说快两到两点五倍 那是他们的集群上测的 我们上线要自己测"
    assert _vetoes(ctx, "Q1", measured) == []


def test_an_invariance_after_a_turn_is_no_closeness_claim(ctx):
    text = "q 越接近 p，接受率越高，所以加速越明显，但输出始终等于 p。"
    assert "correct_because_close" not in _misconceptions(grade(ctx, "Q1", text))
    assert _vetoes(ctx, "Q1", text) == []


def test_the_rejection_path_waved_away_a_clause_later_is_the_closeness_mistake(ctx):
    text = "绝大多数 token 都走接受路径，输出自然就等于 p；偶尔被拒的那一点点走残差，影响可以忽略。"
    assert "correct_because_close" in _misconceptions(grade(ctx, "Q1", text))
    for text in ("被拒位置之后的计算浪费，影响可以忽略。", "被拒的概率很小，但拒绝路径的影响不能忽略，没有它输出就不是 p。"):
        assert "correct_because_close" not in _misconceptions(grade(ctx, "Q1", text)), text


def test_a_checklist_of_verdict_marks_is_no_answer(ctx):
    text = ("❌ 缺：p 必须是 target 经过全部采样参数和约束处理后的分布\n❌ 缺：q 必须是草稿实际的抽样分布\n"
            "❌ 缺：破坏时输出是系统性偏差，而不是数值误差\n❓ 你的答案说明了 grammar mask 下被禁 token 的 p(x) 是多少吗？")
    assert grade(ctx, "Q2", text).points == 0


def test_a_mismatch_said_only_to_slow_things_down_is_only_acceptance(ctx):
    text = "penalty / top-p / mask 没对齐只会让 q 和 p 差得更远，接受率下降、速度变慢，结果本身还是对的。"
    assert "only_acceptance" in _misconceptions(grade(ctx, "Q2", text))
    draft_side = "草稿一侧不做 top-p 只会让 q 和 p 差得更远、接受率下降；p 必须是处理完的 target 分布，否则输出有系统性偏差。"
    assert "only_acceptance" not in _misconceptions(grade(ctx, "Q2", draft_side))

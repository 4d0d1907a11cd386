"""Text scoring, seventh pass (issue 8), after the blind measure of fresh17 and fresh18: written Cantonese read
as Mandarin, more math spellings (the fraction slash, LaTeX brace notes, code comments that go on with an
equation, single-letter names bound to a value, possessives in Cantonese and English), abbreviations and `!=`
that do not end a sentence, a conditional "If Z = 0" that is no false identity, a formula-only derivation that is
no copy, 法则 that is no predicate, and new wordings of two vetoes; then, after fresh19 and fresh20: circled step
numbers, measure and lattice notation, code lines outside a fence, one false step capping a proof at 1 (not 0), a
draft-side mismatch with a faithful q, a marker's verdict pasted back, and a multiple sign before a word; then,
after fresh21 to fresh24: dialect and Taiwanese words, accents, a declared exchange of the letters p and q, a
rule a quotation reduces to, "no such problem" as a negation, and a bare predicate in a list of nouns."""
from grader.normalise import plain, readable, simplified
from grader.sentences import split_sentences
from grader.vetoes import find_vetoes
from textgrade import grade, holds as _holds


def test_written_cantonese_reads_as_mandarin():
    assert simplified("p 要係做晒 penalty 嘅 target，唔使同 target 一樣處理。") == "p 要是做完 penalty 的 target，不使同 target 一样处理。"
    assert simplified("佢哋都係喺含 x_i 嘅前綴下計") == "它们都是在含 x_i 的前缀下计"
    assert simplified("冇偏") == "没有偏"
    assert simplified("係咪要回滾？") == "是不是要回滚？"
    # 係 inside a word is no copula: 關係 (relation), 係數 (coefficient)
    assert simplified("關係同係數") == "关系同系数"


def test_a_negation_in_cantonese_is_a_negation(ctx):
    stated = grade(ctx, "Q3", "至於 KV cache，被拒位置要顯式 rollback 或者 free 先得。")
    negated = grade(ctx, "Q3", "至於 KV cache，被拒位置唔使顯式 rollback 或者 free，舊 slot 下一輪自然被覆蓋。")
    assert "misconception" in stated.flags
    assert "misconception" not in negated.flags


def test_slash_characters_divide():
    assert plain("a ⁄ b ∕ c ÷ d") == "a / b / c / d"


def test_a_latex_brace_note_is_a_comment_not_a_term():
    # the note is no term of the equation; a note that is an identity (=…) is written as its own equation after the
    # line (thirteenth pass)
    text = r"$\Pr[y]=\underbrace{q(y)\min\{1,\tfrac{p(y)}{q(y)}\}}_{=\min\{p(y),q(y)\}}+\Pr[\text{rej}]\,r(y)$"
    assert readable(text) == "Pr[y]=q(y)min(1,(p(y))/(q(y)))+Pr[rej] r(y)\nq(y)min(1,(p(y))/(q(y))) =min(p(y),q(y))"
    assert readable(r"$a=\overbrace{b+c}^{\text{two}}$") == "a=b+c"


def test_a_condition_in_capitals_is_still_a_condition():
    assert _holds("If Z = 0 then p = q.", {"Z": "Σ_v max(0, p(v) - q(v))"}) == [("(Σ_v max(0, p(v) - q(v))) = 0", None), ("p = q", None)]


def test_possessives_cut_the_side():
    assert _holds("P_rej == np.maximum(p - q, 0).sum() == r 嘅 normalizer") == [("R = Σ(max(p - q, 0))", True)]
    assert _holds("1 - Σ min(p, q) = r's denominator") == []


def test_a_code_comment_goes_on_with_the_equation_and_a_letter_can_be_bound():
    bindings = {}
    _holds("a = np.minimum(1.0, p / q)   # p/q can be > 1", bindings)
    assert bindings == {"a": "min(1.0, p / q)"}
    assert _holds("acc_path = q * a   # == np.minimum(p, q)", bindings) == [("q * (min(1.0, p / q)) = min(p, q)", True)]
    token = {}
    _holds("x = min(p, q)", token)
    assert token == {}                                  # a token letter is no name being defined


def test_abbreviations_and_not_equal_do_not_end_a_sentence(ctx):
    text = ("Accept path: draft = y w.p. q(y), accepted w.p. min(1, p(y)/q(y)) → min(p(y), q(y)).")
    result = grade(ctx, "Q1", text)
    assert any(c["id"] == "accept" and c["found"] for c in result.evidence["claims"])
    scope = ctx.rubric.criterion("Q3").text.settings.scope
    assert len(split_sentences("y = sample(r)  # y != x[j] since r[x[j]] == 0", scope)) == 1
    assert len(split_sentences("It stops! Then it drafts again.", scope)) == 2


def test_a_formula_only_derivation_is_no_copy(ctx):
    text = ("接受：q(y)·min(1, p(y)/q(y)) = min(p(y), q(y))\n"
            "拒绝：P_rej = Σₓ q(x)·(1 − min(1, p(x)/q(x))) = 1 − Σₓ min(p(x), q(x)) = Σₓ max(0, p(x) − q(x))\n"
            "残差 r(y) = max(0, p(y) − q(y)) / Σᵥ max(0, p(v) − q(v))，分母 = P_rej\n"
            "⇒ P_rej · r(y) = max(0, p(y) − q(y))\n"
            "P(y) = min(p, q) + max(0, p − q) = p(y) ∎")
    result = grade(ctx, "Q1", text)
    assert "copy" not in result.flags and result.points == 2


def test_chain_rule_alone_is_no_sentence(ctx):
    result = grade(ctx, "Q3", "鏈式法則、前綴、y_i≠x_i、截斷、num_sampled")
    assert result.points == 0 and "keyword_list" in result.flags


def test_accept_probability_named_without_min(ctx):
    result = grade(ctx, "Q1", "- accept prob a(x) = p(x)/q(x)\n- accept path: q(y)·a(y) → min(p, q)\n"
                              "- P_rej = 1 − Σ min(p, q) = Σ max(0, p−q) = normaliser of r\n"
                              "- reject path = P_rej · max(0, p−q)/P_rej = max(0, p−q)\n- sum = p")
    assert result.points == 1 and "misconception" in result.flags


def test_new_wordings_of_two_vetoes(rubric):
    def ids(text):
        return [h.id for h in find_vetoes({"Q3": text}, rubric.vetoes, rubric.feedback)]
    assert ids("vLLM 的 _rejection_kernel 在所有模型、所有硬件上都是这么截断的，开就完事。") == ["veto.universal_support"]
    assert ids("并不是所有模型、所有硬件上都这么截断，要查支持矩阵。") == []
    assert ids("draft 越准，这种接受就越安全。") == ["veto.correctness_vs_performance"]
    assert ids("draft 越准，接受得越多，但接受第一次拒绝之后的草稿并不会因此变安全。") == []


# --- after the blind measure of fresh19 and fresh20 ---------------------------------------------------------

def test_circled_step_numbers_are_enumerators():
    assert readable("① 接受：P = 1\n④ P(y) = p(y)") == "(1) 接受:P = 1\n(4) P(y) = p(y)"
    assert _holds("④ P(y) = min(p(y), q(y)) + max(0, p(y) − q(y)) = p(y)")[-1] == ("min(p(y), q(y)) + max(0, p(y) - q(y)) = p(y)", True)


def test_measure_notation():
    assert readable(r"$\mathbb P(A^c)\,r(y)$ and $\mathcal U(0,1)$") == "P(A^c) r(y) and U(0,1)"
    # P(A^c), the complement of the acceptance event, is the probability of a rejection
    assert [holds for _, holds in _holds("Hence P(A^c) r(y) = (p(y) − q(y))^+")] == [True]


def test_lattice_notation_and_caret_positive_parts():
    assert _holds("q(y)·(1 ∧ p(y)/q(y)) = p(y) ∧ q(y)") == [("q(y)·(min(1, p(y)/q(y))) = min(p(y), q(y))", True)]
    assert _holds("p(y) ∧ q(y) + [p(y) − q(y)]^+ = p(y)") == [("min(p(y), q(y)) + [p(y) - q(y)]_+ = p(y)", True)]


def test_code_lines_outside_a_fence_are_statements():
    text = "所以我们算\nacc = np.minimum(p, q)   # x\nrej = 1 - acc.sum()\nP_rej = 1 - Σ min(p,q)\n= Σ max(0, p-q)"
    # (a line that opens with a relation goes on the equation of the line above: test_text_eighth_pass)
    assert readable(text).split("\n") == ["所以我们算；", "acc = np.minimum(p, q) # x；", "rej = 1 - acc.sum()；",
                                          "P_rej = 1 - Σ min(p,q) = Σ max(0, p-q)；"]


def test_one_false_step_caps_a_proof_at_one(ctx):
    text = ("接受路径：P(y, 接受) = q(y)·min(1, p(y)/q(y)) = min(p(y), q(y))。\n"
            "拒绝概率：P(rej) = 1 − Σ_x min(p(x), q(x)) = Σ_x max(0, p(x) − q(x))。\n"
            "拒绝路径：被拒后输出 y 的概率 = r(y) = max(0, p(y) − q(y)) / Σ max(0, p − q)。\n"
            "结论：min(p(y), q(y)) + r(y) = p(y)。")
    result = grade(ctx, "Q1", text)
    assert result.points == 1 and "false_formula" in result.flags


def test_a_draft_side_mismatch_with_a_faithful_q_only_costs_acceptance(ctx):
    text = ("The repetition penalty, top-p and the grammar mask all have to be baked into p. If top-p is missing from p, "
            "tokens outside the nucleus show up in the output: a systematic bias. As long as the verifier's q is exactly "
            "what the draft sampled from, a mismatch only lowers the acceptance rate.")
    result = grade(ctx, "Q2", text)
    assert "misconception" not in result.flags and result.points == 2


def test_a_markers_verdict_is_pasted_feedback(ctx):
    text = "评语：论断 A ✓（后续行以含 x_i 的前缀为条件）；论断 C ✗（未用链式法则说明联合分布的偏差）。"
    assert grade(ctx, "Q3", text).points == 0


def test_a_multiple_sign_before_a_word_is_a_speed_up(rubric):
    def ids(text):
        return [h.id for h in find_vetoes({"Q1": text}, rubric.vetoes, rubric.feedback)]
    assert ids("That's why in production it's basically a free 2–3× speed-up on any deployment.") == ["veto.peak_speedup"]
    assert ids("例如 0.6 × min(0.5, 0.3) = 0.18，在生产环境一定成立。") == []      # a product in a worked example


# --- after the blind measure of fresh21 and fresh22 ---------------------------------------------------------

def test_dialect_question_words():
    assert simplified("不管啥子模型、啥子显卡") == "不管什么模型、什么显卡"
    assert simplified("咋个算") == "怎么算"


def test_universal_support_in_sichuan_wording(rubric):
    text = "这些都是 Triton 写的，所以不管啥子模型、啥子显卡，开了投机解码都能直接跑这两个核。"
    assert [h.id for h in find_vetoes({"Q2": text}, rubric.vetoes, rubric.feedback)] == ["veto.universal_support"]


def test_the_rejections_waved_away_as_a_small_error(ctx):
    result = grade(ctx, "Q1", "偶尔被拒的那一小部分再用残差修正一下，误差可以忽略，输出分布就是 p。")
    assert [m["id"] for m in result.evidence["misconceptions"]] == ["correct_because_close"]
    fine = grade(ctx, "Q1", "浮点误差可以忽略，输出分布就是 p：拒绝校正让等式对任何 q 精确成立。")
    assert fine.evidence["misconceptions"] == []


def test_names_beside_an_argument_are_a_doubt_and_a_bare_chain_is_the_veto(rubric):
    from grader.vetoes import veto_doubts
    argued = ("Reviewer note: invariant is `output == p_used`. Hence (a) p_used must be the fully processed target, "
              "penalties, top-p and the grammar mask, else we emit the wrong distribution exactly (a bias, not noise); "
              "(b) q_used must equal q_drawn, the distribution the drafter really sampled from.")
    assert find_vetoes({"Q2": argued}, rubric.vetoes, rubric.feedback) == []
    assert [h.id for h in veto_doubts({"Q2": argued}, rubric.vetoes, rubric.feedback)] == ["veto.class_names_only"]
    listed = "`_rejection_kernel` → `_insert_resampled_kernel` → `post_update` → `Scheduler.update_from_output`"
    assert [h.id for h in find_vetoes({"Q3": listed}, rubric.vetoes, rubric.feedback)] == ["veto.class_names_only"]


# --- after the blind measure of fresh23 and fresh24 ---------------------------------------------------------

def test_taiwanese_terms_and_latex_accents():
    assert simplified("接受機率與取樣") == "接受概率与采样"
    assert readable(r"残差 $\tilde r(y)$，$P_{\rm rej}$，$\hat{p}$ 而不是 $(q-p)^+$") == "残差 r(y),P_rej, p 而不是 (q-p)_+"


def test_a_line_ending_in_a_lone_letter_ends_its_sentence(ctx):
    scope = ctx.rubric.criterion("Q1").text.settings.scope
    lines = split_sentences("合计 min(p,q) + (p−q)₊ = p\nq 差一点只是接受率低", scope)
    assert [s.text for s in lines] == ["合计 min(p,q) + (p-q)_+ = p", "q 差一点只是接受率低"]
    assert len(split_sentences("the residual is the\nleftover mass", scope)) == 1     # English wrapped mid-sentence


def test_a_declared_exchange_of_the_letters_is_read_back(ctx):
    text = ("（先讲清楚：我沿用 Chen et al. 的记号，q = target、p = draft，跟讲义相反。）\n"
            "接受并输出 y：p(y)·min(1, q(y)/p(y)) = min(p(y), q(y))\n"
            "拒绝概率：P(rej) = 1 − Σ_x min(p(x), q(x)) = Σ_x max(0, q(x) − p(x))\n"
            "拒绝后从 r(y) = max(0, q(y) − p(y)) / Σ_v max(0, q(v) − p(v)) 抽，所以 P(rej)·r(y) = max(0, q(y) − p(y))，分母跟 P(rej) 约掉\n"
            "相加：min(p(y), q(y)) + max(0, q(y) − p(y)) = q(y)，输出分布就是 target q。")
    result = grade(ctx, "Q1", text)
    assert result.points == 2 and result.confidence == "low" and "记号" in result.confidence_reason
    undeclared = grade(ctx, "Q1", text.split("\n", 1)[1])
    assert undeclared.points == 0 and "misconception" in undeclared.flags


def test_a_quotation_the_rule_reduces_to_is_stated(ctx):
    text = ("接受路径：q(y)·min(1, p(y)/q(y)) = min(p(y), q(y))。总拒绝概率 P(rej) = 1 − Σ min(p, q) = Σ max(0, p − q)。"
            "拒绝路径：P(rej)·r(y) = max(0, p(y) − q(y))。两者相加 = p(y)。"
            "特例：贪婪验证时规则就退化成「argmax p 与 argmax q 相同就接受，否则输出 argmax p」。")
    assert grade(ctx, "Q1", text).points == 1


def test_does_not_mean_clears_the_correctness_veto_and_safety_on_the_draft_is_it(rubric):
    def ids(text):
        return [h.id for h in find_vetoes({"Q3": text}, rubric.vetoes, rubric.feedback)]
    assert ids("q 差一点只是接受率低，输出分布照样是 p；接受率高也不代表输出「更正确」。") == []
    assert ids("草稿越准，能安全接受的就越多。") == ["veto.correctness_vs_performance"]


def test_a_remark_on_the_papers_letters_is_no_declared_exchange(ctx):
    remark = ("顺便说一句 Chen 的论文里 p 和 q 的含义是反过来的，q 是 target，p 是草稿。"
              "草稿抽到 y 的概率是 q(y)，以 min(1, p(y)/q(y)) 的概率接受，所以这条路输出 y 的概率是 min(p(y), q(y))。")
    assert "记号" not in grade(ctx, "Q1", remark).confidence_reason
    assert readable(r"$\arg\max p=\arg\max q$") == "argmax p=argmax q"


def test_no_such_problem_is_a_negation(ctx):
    text = ("p 必须是 target 经过全部处理后的分布，q 必须是草稿实际抽样用的分布；p 漏了 top-p，输出就是系统性偏差。"
            "q(x)=0 的 token 根本不会被提议，不存在除零的问题。")
    assert grade(ctx, "Q2", text).evidence["misconceptions"] == []


def test_a_bare_predicate_in_a_list_of_nouns_asserts_nothing(ctx):
    result = grade(ctx, "Q1", "min(p,q)、拒绝概率、残差 max(0,p−q)、归一化、约掉、相加")
    assert result.points == 0 and "keyword_list" in result.flags

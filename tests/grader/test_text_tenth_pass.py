"""Text scoring, tenth pass (issue 8), after the blind measure of fresh41 to fresh44: vetoes in new wordings (a
chip's name read as a multiple, 「不挑模型也不挑卡」, 「哪家的模型放到哪个 GPU 池上都照常工作」, correctness put on
a close draft by 「不会带来偏差」 or by a high acceptance rate); the rejection path waved away as negligible;
Iverson brackets and \\wedge in formulas; the rejection probability named in words inside a formula; a sentence
that goes on from the expression the one before it ended on (「That equals …」); claims in new wordings; and a
reworded copy that swaps every phrase of the reference for a synonym."""
from grader.normalise import readable
from textgrade import grade, holds as _holds, found as _found, misconceptions as _misconceptions, vetoes as _vetoes, doubts as _doubts


def test_a_chip_name_is_no_speed_up_and_a_paper_figure_reached_in_production_is(ctx):
    text = "这套拒绝采样 vLLM 已经实现好了，所以我们那几个机型池（A10、L40S、H200、MI300X）上都能直接打开。"
    assert "veto.peak_speedup" not in _vetoes(ctx, "Q1", text) + _doubts(ctx, "Q1", text)
    assert _vetoes(ctx, "Q3", "要是能不截断，上线以后就能稳稳达到论文里说的三倍加速。") == ["veto.peak_speedup"]
    # the paper as the source of a figure still qualifies it
    assert _vetoes(ctx, "Q3", "论文在它的实验条件下报告了最高三倍的加速，生产上要自己测。") == []


def test_universal_support_in_new_wordings_and_its_negations(ctx):
    for text in ("这两个核是通用实现，不管你部署的是哪一家的模型、用的是哪一代 GPU，打开投机解码就一定能跑起来。",
                 "所以哪家的模型放到哪个 GPU 池上，开投机后结构化输出都照常工作，不用单独测。",
                 "这部分 vLLM 已经处理好了，不挑模型也不挑卡，配上 --speculative-config 就能跑。",
                 "这一整套流程在 vLLM 里对任何模型、任何一块 GPU 都原样生效，不用额外适配。"):
        assert _vetoes(ctx, "Q2", text) == ["veto.universal_support"], text
    for text in ("并不是不管哪家的模型都能直接用，得先按支持矩阵核对。",
                 "我们只在测过的 H200 和 A100 上打开了它，别的卡不需要验证就上线是不行的。"):
        assert _vetoes(ctx, "Q2", text) == [], text


def test_correctness_put_on_a_close_draft_in_new_wordings(ctx):
    for question, text in (
            ("Q3", "只要 draft 模型和 target 足够接近、接受率够高，后面碰巧相同的 token 继续接受其实也不会带来偏差。"),
            ("Q2", "只要草稿模型足够好、跟 target 足够像，两边 penalty、top-p 不一致也没关系，输出基本还是对的。"),
            ("Q2", "接受率高本身就说明输出分布没问题。"),
            ("Q1", "草稿和 target 越像，最终输出的分布就越贴近 target，生成质量越有保证。"),
            ("Q3", "一个跟 target 更合拍、通过率更高的草稿，吐出来的文本也就更忠于 target 的原味。")):
        assert _vetoes(ctx, question, text) == ["veto.correctness_vs_performance"], text
    # the same words where correctness does not depend on the draft
    for question, text in (
            ("Q1", "即使草稿和 target 差得很远，拒绝校正之后也不会带来偏差。"),
            ("Q1", "草稿越像 target，接受率越高，但输出分布始终精确等于 p。"),
            ("Q2", "只要 q 是草稿真正抽样时用的分布，输出就不会有偏差。")):
        assert _vetoes(ctx, question, text) == [], text


def test_the_rejection_path_waved_away_is_the_closeness_mistake(ctx):
    text = ("草稿是从 target 蒸馏出来的，q 和 p 几乎重合，所以几乎每个草稿都会被接受，拒绝那条路可以忽略不计。"
            "既然几乎全是接受，输出的分布自然就等于 p。")
    result = grade(ctx, "Q1", text)
    assert "correct_because_close" in _misconceptions(result) and result.points == 0
    assert "correct_because_close" not in _misconceptions(grade(ctx, "Q1", "拒绝那条路不能忽略：残差正好补上 p 比 q 多出的部分。"))


def test_iverson_brackets_and_wedge_are_read_as_values():
    assert _holds("β = Σ_x [p(x) > q(x)]·(p(x) − q(x)) = Σ_x max(0, p(x) − q(x))")[-1][1] is True
    assert _holds("min(p, q) + [q > p]·(q − p) = p") == [("min(p, q) + (max(0, (q) - (p))/((q) - (p)))·(q - p) = p", False)]
    assert _holds(r"$q(y)\min(1, p(y)/q(y)) = p(y)\wedge q(y)$")[-1][1] is True
    # an index is no bracket: p[x] > q[x] compares two entries
    assert "max(0" not in readable("当 p[x] > q[x] 时").replace(" ", "")


def test_a_reversed_residual_in_iverson_brackets_is_the_misconception(ctx):
    text = ("令 a(x) = min(1, p(x)/q(x))，[·] 为指示函数。\n接受路径：Σ_x q(x)·a(x)·[x = y] = min(p(y), q(y))。\n"
            "残差取 r(y) = [q(y) > p(y)]·(q(y) − p(y)) / β，于是拒绝路径给 y 的是 [q(y) > p(y)]·(q(y) − p(y))。\n"
            "相加：min(p, q) + [q > p]·(q − p) = p。")
    assert "residual_q_minus_p" in _misconceptions(grade(ctx, "Q1", text))


def test_the_rejection_probability_in_words_inside_a_formula():
    # an operand: the word is the quantity
    assert _holds("所以这条路的概率 = 被拒概率 × r(y) = max(0, p(y) − q(y))。")[-1][1] is True
    # a label before its value, or before its symbol: not a factor
    assert _holds("总拒绝概率 1 − Σ_v min(p(v), q(v)) = Σ_v max(0, p(v) − q(v))")[-1][1] is True
    assert _holds("被拒的总概率 P_rej = 1 − Σ_v min(p(v), q(v))") == [("R = 1 - Σ_v min(p(v), q(v))", True)]


def test_a_sentence_that_goes_on_from_the_expression_before_it(ctx):
    text = ("Fix a token y. There are two ways to emit it. Way one: the draft is y. It is accepted. "
            "That has probability q(y)·min(1, p(y)/q(y)). That equals min(p(y), q(y)). Way two: some draft is rejected. "
            "The rejection probability is 1 − Σ_x min(p(x), q(x)). Since p sums to one, this is Σ_x max(0, p(x) − q(x)). "
            "This is also the residual's normaliser. So way two has probability max(0, p(y) − q(y)). "
            "Add the two ways. min(a, b) + max(0, a − b) = a. So P(y) = p(y).")
    result = grade(ctx, "Q1", text)
    assert {"accept", "reject_total", "reject_path", "sum"} <= set(_found(result)) and result.points == 2


def test_claims_in_new_wordings(ctx):
    assert "accept" in _found(grade(ctx, "Q1", "The draft proposes y and we keep it with chance min(1, p(y)/q(y)); "
                                               "multiply and you get min(p(y), q(y))."))
    assert "sum" in _found(grade(ctx, "Q1", "① 是接受路径 min(p(y), q(y))，② 是拒绝路径 max(0, p(y) − q(y))。① + ② = p(y)。"))
    assert "p_processed" in _found(grade(ctx, "Q2", "target 那边 penalty、top-p、mask 一个都不能少，少了输出就是错的分布。"))
    assert "consequence" in _found(grade(ctx, "Q2", "If you skip top-p on the target side, tokens outside the nucleus will show up."))
    assert "conditioned" in _found(grade(ctx, "Q3", "# rows p[i+1], q[i+1] were computed for ctx + x[:i+1] -> wrong conditional"))


def test_misconceptions_in_new_wordings(ctx):
    assert "resample_from_p" in _misconceptions(grade(ctx, "Q1", "被拒以后直接按 p 重新抽一个 token，输出分布同样是 p。"))
    assert "residual_q_minus_p" in _misconceptions(grade(ctx, "Q1", "残差：r(y) = max(0, q(y) − p(y)) / P_rej"))
    assert "greedy_argmax_rule" in _misconceptions(grade(ctx, "Q1", "温度为 0 时规则退化成：只要 argmax p 和 argmax q 是同一个 token 就接受。"))
    assert "only_acceptance" in _misconceptions(grade(ctx, "Q2", "target 那边做不做这些处理都无所谓，影响的只是接受率。"))
    # 「这样不对称」 is not the writer distancing from the sentence (「这样不对」)
    assert "only_acceptance" in _misconceptions(grade(ctx, "Q2", "之所以可以这样不对称，是因为两边处理不一致本来就只会让接受率下降。"))
    # an indirect question (不知道…是否) asserts the sentence it sits in
    assert "truncation_efficiency" in _misconceptions(grade(ctx, "Q3", "截断只是因为我们一般不知道它是否恰好相同，为了省事统一丢掉。"))
    assert "truncation_efficiency" not in _misconceptions(grade(ctx, "Q3", "截断不是为了省事，而是因为后面的行以被拒的 token 为条件。"))


def test_a_difference_from_the_exercise_said_with_bu_yiyang(ctx):
    text = ("L1：`_rejection_kernel`，在 `vllm/v1/worker/gpu/spec_decode/rejection_sampler_utils.py` 里；L2：`_resample_kernel`，"
            "也在这个文件里。和练习不一样的地方：它不显式归一化残差，直接用 Gumbel-max 抽。")
    assert grade(ctx, "code.source_map", text).points == 1


def test_a_reference_with_every_phrase_swapped_for_a_synonym_goes_to_a_person(ctx):
    reference = ctx.references["Q1"]
    swaps = {"设在": "假设在", "草稿一侧给出分布": "草稿那边的分布是", "target 一侧给出分布": "target 那边的分布是",
             "验证器持有一个均匀数": "验证器拿着一个均匀随机数", "时接受": "就接受", "否则从残差": "不然就从残差",
             "要证明的是": "需要证明的是", "对词表中任意": "对词表里任何", "等于": "都是", "第一步，": "第一步看",
             "恰好是": "正好是", "并被接受的概率是": "并且被接受，概率为", "若 ": "如果 ", "不会被提议": "就不会被提出来",
             "仍然成立": "照样成立", "第二步，": "第二步看", "把所有可能的草稿加起来": "对所有可能的草稿求和",
             "因为 ": "由于 ", "所以 ": "因此 ", "第三步，": "第三步看", "只依赖": "只跟", "无关": "没关系",
             "独立抽取": "单独抽", "两者相消": "两者抵消", "第四步，相加": "第四步把两项加起来", "证毕": "证明完毕"}
    text = reference.split("\n\n边界情况")[0]
    for old, new in swaps.items():
        text = text.replace(old, new)
    result = grade(ctx, "Q1", text)
    assert result.needs_review and "逐句改写" in result.confidence_reason


def test_the_rejection_probability_said_to_be_a_formula_is_checked():
    assert _holds("拒绝的概率是 1 − Σ_x min(p(x), q(x))，它就是 r 的分母。") == [("R = 1 - Σ_x min(p(x), q(x))", True)]
    # one token's term is not the total, and Σ|p − q| is twice it
    assert _holds("在位置 y 上拒绝的概率是 1 − min(p(y), q(y))。") == [("R = 1 - min(p(y), q(y))", False)]
    assert _holds("拒绝概率是 Σ|p − q|。")[0][1] is False
    # words after the copula are no formula
    assert _holds("拒绝概率是 p 和 q 的差。") == []


def test_a_claim_in_a_worked_example_is_looked_for_in_the_general_proof_too(ctx):
    text = ("## 先用 V = 3 算一遍\n取 p = (0.5, 0.3, 0.2)，q = (0.2, 0.2, 0.6)。\n"
            "P(拒绝) = 0.6 × (1 − 1/3) = 0.4 = 0.3 + 0.1。\n## 一般证明\n"
            "1. 接受路径：q(y)·min(1, p(y)/q(y)) = min(p(y), q(y))。\n"
            "2. 拒绝概率：P(rej) = 1 − Σ min(p, q) = Σ max(0, p − q)。\n"
            "3. 拒绝后输出 y 的概率是 P(rej)·r(y)，而 r 的归一化常数就是 Σ max(0, p − q) = P(rej)，约掉后剩 max(0, p(y) − q(y))。\n"
            "4. 两路相加：min(p(y), q(y)) + max(0, p(y) − q(y)) = p(y)，对每个 y 都成立。")
    result = grade(ctx, "Q1", text)
    assert result.points == 2 and not result.needs_review, result.confidence_reason


def test_alternatives_of_one_requirement_in_one_sentence_are_not_stuffing(ctx):
    # the normaliser said to be P(reject) is both the total and the cancellation: one requirement, not two claims
    text = ("第一项：q(y)·min(1, p(y)/q(y)) = min(p(y), q(y))。\n"
            "第二项：P(拒绝)·max(0, p(y) − q(y)) / Σ_v max(0, p(v) − q(v))，分母正好等于 P(拒绝)，约掉后剩 max(0, p(y) − q(y))。\n"
            "两项相加：min(p(y), q(y)) + max(0, p(y) − q(y)) = p(y)。")
    result = grade(ctx, "Q1", text)
    assert result.points == 2 and not result.needs_review, result.confidence_reason


def test_a_universal_quantifier_over_models_or_hardware_goes_to_a_person(ctx):
    # whatever it is said to do there: a wording no rule lists still reaches a person as a doubt
    for text in ("这套东西放到哪个集群上都照样好使。", "vLLM 的实现对各类模型一视同仁，部署上去就完事。"):
        assert _doubts(ctx, "Q2", text) == ["veto.universal_support"], text
    # the maths that holds for any model, and a writer who will not claim it, are no doubt
    for text in ("链式法则对任何自回归模型都成立，每个因子以完整前缀为条件。",
                 "I would not claim these kernels run unchanged on every model or backend.",
                 "另外我只读了源码，没有验证过这套在所有模型、所有显卡上都能用。"):
        assert _doubts(ctx, "Q3", text) == [] and _vetoes(ctx, "Q3", text) == [], text


def test_a_degree_of_draft_closeness_beside_the_output_being_right_goes_to_a_person(ctx):
    for text in ("只要 draft 模型和 target 足够接近，后面相同的 token 接受了结果也可靠。", "q 和 p 足够相似时，输出分布就有保证。"):
        assert "veto.correctness_vs_performance" in _vetoes(ctx, "Q3", text) + _doubts(ctx, "Q3", text), text
    for text in ("接受率高低和输出是否正确是两回事，草稿更像 target 只会让接受率更高。",
                 "草稿越接近 target，接受率越高，但输出分布始终精确等于 p。"):
        assert "veto.correctness_vs_performance" not in _vetoes(ctx, "Q3", text) + _doubts(ctx, "Q3", text), text

"""Text scoring, nineteenth pass (issue 8), after the blind round of fresh72–fresh74: vetoes in new disguises (a list of
vendors or model families said all to work, a share of the time saved, a measurement said to hold everywhere, an
English conditional on a good drafter, a quality 够高), their negated twins (a requirement on the draft denied, an
output right in any case), consistency said to serve only the speed-up, and the self-check pasted back as checkboxes,
verdicts closing lines or a table of check marks. Wrapped-line joining leaves table rows and code lines alone."""
from grader.normalise import readable
from textgrade import doubts, grade, misconceptions, vetoes


def test_a_list_of_vendors_or_model_families_said_all_to_work_is_universal_support(ctx):
    for said in ("这个核是用 Triton 写的，所以英伟达、AMD、Intel、华为昇腾的卡都能直接跑。",
                 "所以 vLLM 这套实现对 Llama、Qwen、Mistral、Gemma、DeepSeek 这些模型族都能开箱即用。"):
        assert "veto.universal_support" in vetoes(ctx, "code-map", said), said
    assert "veto.universal_support" not in vetoes(ctx, "code-map", "这并不是说英伟达、AMD、Intel 的卡都能直接跑，要看支持矩阵。")
    assert "veto.universal_support" not in vetoes(ctx, "Q2", "在 Llama 和 Qwen 上测过，接受率大概七成。")


def test_a_share_of_time_saved_or_a_measurement_said_to_hold_everywhere_is_a_peak_speedup(ctx):
    for said in ("投机解码反正总能省下大约七成的解码时间。", "反正实测下来 spec decode 都稳稳快两三倍。"):
        assert "veto.peak_speedup" in vetoes(ctx, "Q3", said), said
    assert "veto.peak_speedup" not in vetoes(ctx, "Q3", "我们在 H100 上实测 Llama-70B 快了 2.1 倍。")


def test_correctness_on_condition_of_a_good_drafter_and_its_negations(ctx):
    for said in ("If the drafter is good enough that most rows pass the first kernel, the emitted tokens follow the target "
                 "distribution.",
                 "如果草稿模型质量够高、接受率在 90% 以上，target 这边有没有做 top-p 其实无所谓，输出就是对的。"):
        assert "veto.correctness_vs_performance" in vetoes(ctx, "Q2", said), said
    for negated in ("Whether the draft is good or bad, the output follows p.",
                    "注意这里没有哪一步要求 q 接近 p：草稿再差，等式照样成立。",
                    "保持一致只是为了让接受率更高、跑得更快，输出本来就是对的。"):
        assert "veto.correctness_vs_performance" not in vetoes(ctx, "Q1", negated), negated
    assert "veto.correctness_vs_performance" in doubts(ctx, "Q1", "If the draft is close to p, more tokens are accepted, "
                                                                   "but the output follows the target either way.")


def test_consistency_said_to_serve_only_the_speed_is_only_acceptance(ctx):
    for wrong in ("保持一致只是为了让接受率更高、跑得更快，输出本来就是对的。",
                  "target 那边如果 top-p 没套上，也不会让输出出错，拒绝采样会自动把分布修正回来。"):
        assert "only_acceptance" in misconceptions(grade(ctx, "Q2", wrong)), wrong


def test_the_self_check_pasted_back_in_new_formats_is_a_report(ctx):
    for pasted, question in (("評分回饋：\n- 「p 必須是處理完的 target」：未提及\n- 「q 必須是草稿真正的抽樣分佈」：未提及", "Q2"),
                             ("[ ] 后面的草稿与 p_j、q_j 以含 x_i 的前缀为条件\n[ ] 修正 token y_i ≠ x_i，真实前缀改变", "Q3"),
                             ("A. 后续草稿以含 x_i 的前缀为条件 —— ✗ 未提及\nB. 修正 token y_i ≠ x_i，真实前缀改变 —— ✗ 未提及", "Q3"),
                             ("| 要点 | 判定 |\n|---|---|\n| A 接受路径 q·min(1,p/q) = min(p,q) | ✅ |\n| D 相加 = p | ✅ |\n\n总评：4/4，满分。", "Q1")):
        result = grade(ctx, question, pasted)
        assert result.points == 0 and "pasted" in result.flags, pasted


def test_table_rows_and_code_lines_are_not_joined_as_wrapped_prose():
    table = ("| 哪一边 | 要什么 |\n|---|---|\n| target 的 p | 全部处理；少做一个处理，输出就是少处理的那个分布，一直偏 |\n"
             "| draft 的 q | 只要是 draft 真的抽样分布 |")
    assert readable(table).count("\n") == 2          # the header and both rows stay apart
    code = ("accept_path = q * np.minimum(1, p / q)          # = np.minimum(p, q)；q == 0 处这一项为 0\n"
            "p_reject = 1 - np.minimum(p, q).sum()")
    assert readable(code).count("\n") == 1


def test_a_ticked_list_of_own_claims_is_no_report(ctx):
    own = ("- [x] 后面的草稿 x_{i+1}… 和 target 的 p_{i+1}… 都是以「包含 x_i」的前缀为条件算出来的\n"
           "- [x] 拒绝后输出的是残差里抽的修正 token y_i，y_i ≠ x_i，所以真实前缀已经换了\n"
           "- [x] 联合分布 = 每一步在真实前缀下的条件概率相乘（链式法则）；继续接受等于用旧前缀的条件分布生成下一个 token，联合分布偏离 target")
    assert "pasted" not in grade(ctx, "Q3", own).flags

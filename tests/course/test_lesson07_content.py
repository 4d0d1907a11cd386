"""Lesson 7's content contract: the exercise kept verbatim, every section present, claims computed."""
import re
from pathlib import Path

import nbformat
import pytest

from grader.build import ROOT
from grader.lesson import load_lesson

LESSON_PATH = ROOT / "lessons" / "lesson07.qmd"
LESSON = load_lesson(LESSON_PATH)
TEXT = LESSON_PATH.read_text(encoding="utf-8")

# The user's exercise, byte for byte (the only verbatim piece of the original material).
EXERCISE = '''def rejection_rule(target_probs, draft_probs, draft_token):
    if len(target_probs) != len(draft_probs) or not target_probs:
        raise ValueError("distribution shapes differ")
    if any(x < 0 for x in target_probs + draft_probs):
        raise ValueError("negative probability")
    if abs(sum(target_probs) - 1.0) > 1e-9 or abs(sum(draft_probs) - 1.0) > 1e-9:
        raise ValueError("distributions must sum to one")
    qx = draft_probs[draft_token]
    if qx <= 0:
        raise ValueError("draft token must have positive proposal mass")

    # TODO：接受概率 min(1,p/q)；拒绝时使用正差 residual。
    accept_probability = ______
    residual_mass = [______ for p, q in zip(target_probs, draft_probs)]
    normalizer = sum(residual_mass)
    residual = ([x / normalizer for x in residual_mass]
                if normalizer else list(target_probs))
    return accept_probability, residual

alpha, residual = rejection_rule([0.7, 0.3], [0.4, 0.6], 1)
assert abs(alpha - 0.5) < 1e-12
assert residual == [1.0, 0.0]
assert rejection_rule([0.7, 0.3], [0.4, 0.6], 0)[0] == 1.0'''

# The challenge exercise's template, as the lead's hidden checks expect it (names and semantics).
MULTI_DRAFT = '''def sample_index(weights, u):
    """逆 CDF 采样：返回第一个使累计权重超过 u × 总权重的下标（u 在 [0, 1) 内）。"""
    total = sum(weights)
    running = 0.0
    for i, w in enumerate(weights):
        running += w
        if u * total < running:
            return i
    return max(i for i, w in enumerate(weights) if w > 0)


def verify_drafts(draft_tokens, draft_probs, target_probs, uniforms):
    """一个请求的多草稿验证。k 个草稿 token、它们的 k 行 q、k + 1 行 p、k + 1 个均匀数；
    返回本轮输出的 token：被接受的前缀，再加一个修正 token 或 bonus token。"""
    k = len(draft_tokens)
    if len(draft_probs) != k or len(target_probs) != k + 1 or len(uniforms) != k + 1:
        raise ValueError("need k draft rows, k + 1 target rows and k + 1 uniforms")
    emitted = []
    for j in range(k):
        p, q, x = target_probs[j], draft_probs[j], draft_tokens[j]
        if uniforms[j] * q[x] < ______:        # 以概率 min(1, p(x)/q(x)) 接受草稿 x
            emitted.append(x)
            continue
        residual = [______ for a, b in zip(p, q)]
        emitted.append(sample_index(residual, uniforms[k]))
        return ______
    emitted.append(sample_index(______, uniforms[k]))
    return emitted


assert verify_drafts([], [], [[0.25, 0.75]], [0.5]) == [1]
assert verify_drafts([0], [[1.0, 0.0]], [[0.5, 0.5], [1.0, 0.0]], [0.9, 0.2]) == [1]
assert verify_drafts([0], [[1.0, 0.0]], [[0.5, 0.5], [1.0, 0.0]], [0.1, 0.2]) == [0, 0]'''
MULTI_DRAFT_FILLS = ["p[x]", "max(a - b, 0.0)", "emitted", "target_probs[k]"]

SECTIONS = ["本课目标与通过标准", "源码版本与阅读路线", "核心概念与运行机制", "它是什么，解决什么问题",
            "它如何工作", "正确性条件与常见误区", "性能与工程取舍", "具体演示", "实践任务", "检查方法",
            "问题", "评分规则", "参考答案与参考资料"]


def code_cells(**options):
    return [c for c in LESSON.cells if c.kind == "code" and all(c.options.get(k) == v for k, v in options.items())]


def test_exercise_is_verbatim_and_the_solution_only_fills_the_blanks():
    exercise = LESSON.exercise("rejection-rule")
    assert exercise.code == EXERCISE
    assert exercise.options == {"course_role": "exercise", "course_id": "rejection-rule", "eval": False}
    filled = (EXERCISE.replace("accept_probability = ______", "accept_probability = min(1.0, target_probs[draft_token] / qx)")
              .replace("[______ for p, q", "[max(p - q, 0.0) for p, q")
              .replace("# TODO：接受概率 min(1,p/q)；", "# 接受概率 min(1, p/q)；"))  # no TODO left in a solution
    assert LESSON.solution("rejection-rule").code == filled


def test_the_solution_passes_its_assertions_and_sums_to_p():
    scope = {}
    exec(LESSON.solution("rejection-rule").code, scope)  # the three assertions run here
    rule = scope["rejection_rule"]
    p, q = [0.2, 0.5, 0.3], [0.6, 0.1, 0.3]
    out = [0.0] * 3
    for x in range(3):
        a, r = rule(p, q, x)
        out[x] += q[x] * a
        for y in range(3):
            out[y] += q[x] * (1 - a) * r[y]
    assert out == pytest.approx(p, abs=1e-12)
    assert rule(p, p, 1) == (1.0, p)  # p == q: the fallback, unreachable since nothing is rejected


def test_challenge_exercise_template_and_solution():
    exercise = LESSON.exercise("multi-draft")
    assert exercise.code == MULTI_DRAFT
    assert exercise.options == {"course_role": "exercise", "course_id": "multi-draft", "eval": False}
    filled = MULTI_DRAFT
    for fill in MULTI_DRAFT_FILLS:
        filled = filled.replace("______", fill, 1)
    assert LESSON.solution("multi-draft").code == filled
    assert LESSON.solution("multi-draft").answer_only
    # it comes after the seed's 检查方法, in its own subsection
    lines = TEXT.splitlines()
    assert lines.index("## 检查方法") < lines.index("### 选做：一个请求的多草稿验证") < lines.index("## 问题")


def test_challenge_solution_emits_the_target_distribution():
    scope = {}
    exec(LESSON.solution("multi-draft").code, scope)  # its three assertions run here
    verify = scope["verify_drafts"]
    # k = 1, V = 2, exact over the decision regions of the two uniforms
    p0, q0, p1 = [0.3, 0.7], [0.6, 0.4], [0.8, 0.2]
    out = {}
    for x, qx in enumerate(q0):
        for u0, w0 in [(0.25, 0.5), (0.75, 0.5)]:          # accept threshold p(0)/q(0) = 0.5; p(1) >= q(1)
            for u1, w1 in [(i / 20 + 0.025, 0.05) for i in range(20)]:  # cuts at 0.8 and 1.0 only
                seq = tuple(verify([x], [q0], [p0, p1], [u0, u1]))
                out[seq] = out.get(seq, 0.0) + qx * w0 * w1
    first = [sum(v for s, v in out.items() if s[0] == y) for y in (0, 1)]
    assert first == pytest.approx(p0, abs=1e-12)
    # x = 0 is rejected half the time and corrected to 1 (the round ends: one token); x = 1 is always
    # accepted and followed by a bonus token drawn from p1
    assert out == pytest.approx({(0, 0): 0.6 * 0.5 * 0.8, (0, 1): 0.6 * 0.5 * 0.2, (1,): 0.6 * 0.5,
                                 (1, 0): 0.4 * 0.8, (1, 1): 0.4 * 0.2}, abs=1e-12)
    with pytest.raises(ValueError):
        verify([0], [], [[1.0]], [0.5])


def test_every_section_is_there_in_order():
    headings = [m.group(1).strip() for m in re.finditer(r"^#{2,3}\s+(.+)$", TEXT, re.M)]
    positions = [headings.index(s) for s in SECTIONS]
    assert positions == sorted(positions)


def test_questions_and_answers():
    assert LESSON.question_ids == ["code-map", "Q1", "Q2", "Q3"]
    for qid in LESSON.question_ids:
        answer = LESSON.reference(qid).source
        assert len(answer) > 400, qid  # full sentences, not a keyword list
    assert "链式法则" in LESSON.reference("Q3").source
    for name in ("_rejection_kernel", "_resample_kernel", "_insert_resampled_kernel", "num_sampled"):
        assert name in LESSON.reference("code-map").source


def test_rubric_is_rendered_from_the_grader_data():
    cells = [c for c in LESSON.cells if c.kind == "code" and "| 编号 | 项目 |" in c.code]
    assert len(cells) == 1
    assert "Markdown(" in cells[0].code and cells[0].options.get("code-fold") is True
    assert "lesson07.rubric.yml" in TEXT
    # The pass requirements are the rubric's pass rule, rendered, not restated by hand (issue 12 item 12).
    (rule,) = [c for c in LESSON.cells if c.kind == "code" and "PASS_RULE" in c.code]
    assert 'RUBRIC.get("pass"' in rule.code and "Markdown(" in rule.code


def test_figure_is_drawn_by_a_cell_with_a_literal_7x_caption():
    # Quarto numbers a book's figures by chapter position (lesson 7 would read 1.1), so lesson 7's
    # figures carry literal captions and explicit anchors, never a `fig-` label.
    (fig,) = [c for c in LESSON.cells if c.kind == "code" and "fig-cap" in c.options]
    assert "speculative_speedup_model.png" in fig.code and "savefig" in fig.code
    assert fig.options["fig-cap"].startswith("图 7-1")
    assert not any(str(c.options.get("label", "")).startswith(("fig-", "tbl-")) for c in LESSON.cells if c.kind == "code")
    assert not re.search(r"@(fig|tbl)-", TEXT)
    for n in (1, 2):
        assert f"::: {{#figure-7-{n}}}" in TEXT
        assert f"图 7-{n}" in TEXT
    for target in re.findall(r"\]\(#([\w-]+)\)", TEXT):
        assert f"{{#{target}}}" in TEXT, target  # every in-page link has its anchor
    assert "![" not in TEXT  # no static images


def test_gpu_cell_never_fails_a_render():
    (gpu,) = LESSON.find("gpu")
    assert "except Exception" in gpu.code and "TRITON_INTERPRET" in gpu.code


def test_no_link_to_a_missing_local_file():
    for target in re.findall(r"\]\(([^)\s]+)\)", TEXT):
        if not re.match(r"https?://|#", target):
            assert (LESSON_PATH.parent / target).exists(), target


def test_vocabulary_sizes_name_the_model():
    for line in TEXT.splitlines():
        for size in ("128256", "151936", "152064"):
            if size in line:
                assert re.search(r"(Llama|Qwen)[\w.-]*", line), line


def test_no_bare_urls_in_the_prose():
    prose = "\n".join(c.source for c in LESSON.cells if c.kind == "markdown")
    assert not re.search(r"<https?://", prose)  # link text instead of autolinks (they overflow the column)
    outside_links = re.sub(r"\]\([^)]*\)", "]", prose)
    assert not re.search(r"(?<![\w/])https?://", outside_links)


def test_markdown_results_instead_of_printed_markdown():
    # `print()` under `output: asis` renders in Quarto but shows raw pipes in Jupyter.
    assert not [c.line for c in LESSON.cells if c.kind == "code" and c.options.get("output") == "asis"]
    tables = [c for c in LESSON.cells if c.kind == "code" and "Markdown(" in c.code]
    assert len(tables) >= 5
    for cell in tables:
        assert not re.search(r"^print\(\"\|", cell.code, re.M), cell.line


def test_facts_the_second_pass_corrected():
    assert "就地处理 target logits" not in TEXT and "就地把原始 target logits" not in TEXT  # a copy, not in place
    assert "未逐字核实" not in TEXT and "未核实" not in TEXT and "行号为重建值" not in TEXT
    assert "`postprocess` 调用" not in TEXT and "postprocess_sampled" in TEXT
    assert "按比例接受" not in TEXT and "多算一次" not in TEXT
    assert "goodput。" not in TEXT and "批大小与 goodput" not in TEXT
    assert "features/spec_decode/" not in TEXT and "features/speculative_decoding/" in TEXT
    assert "采样参数与约束必须一致" not in TEXT
    for name in ("MAX_CHUNK_BYTES", "_copy_request_inputs", "#50910", "block", "synthetic", "allocate_slots",
                 "postprocess_state", "num_accepted_tokens_per_pos"):
        assert name in TEXT, name
    # scheduler recomputes its counts; the objectives no longer say they are passed to it
    assert "传给 model runner 和 scheduler" not in TEXT


def test_vllm_line_links_point_at_the_snapshot_or_a_release_tag():
    links = re.findall(r"https://github\.com/vllm-project/vllm/blob/([^/]+)/([^)#\s]+)(#L\d+-L\d+)?", TEXT)
    assert links
    for ref, path, lines in links:
        assert ref in ("8e958902eee56ca5158728f1dd5a32246f0246f3", "v0.27.1", "v0.28.0"), ref
        if ref.startswith("8e95") and lines:
            assert path.endswith("spec_decode/rejection_sampler.py"), path  # the only reconstructed file


def test_q2_teaches_the_premise_the_proof_needs():
    q2 = LESSON.reference("Q2").source
    assert "并不要求草稿和 target 用同一套参数" in q2
    for idea in ("只按温度", "grammar", "one-hot", "apply_sampling_params", "复制"):
        assert idea in q2, idea
    question = next(c for c in LESSON.cells if c.role == "question" and c.course_id == "Q2").source
    assert "为什么 repetition penalty、top-p 或 grammar mask 必须在 draft/target verification 中保持一致？" in question


def test_editions_are_marked_and_the_student_note_is_student_only():
    assert TEXT.count("{.edition-marker}") == 2
    student = re.findall(r'::: \{\.content-hidden when-profile="answer"\}\n(.*?)\n:::\n:::', TEXT, re.S)
    assert any("学生版" in block and "edition-marker" in block for block in student)
    assert any("学生版不含参考答案" in block for block in student)
    outside = re.sub(r'::: \{\.content-hidden when-profile="answer"\}\n.*?\n:::\n:::', "", TEXT, flags=re.S)
    assert "学生版不含参考答案" not in outside


def test_quarto_only_explorer_has_a_notebook_counterpart():
    assert re.search(r'::: \{\.content-visible when-format="html"\}\n```\{ojs\}', TEXT)
    counterpart = re.search(r'::: \{\.content-hidden when-format="html"\}\n(.*?)\n:::\n', TEXT, re.S)
    assert counterpart and "```{python}" in counterpart.group(1) and "Markdown(" in counterpart.group(1)
    assert "ipywidgets" not in TEXT  # widget outputs would make Quarto load require.js from a CDN


def test_long_cells_are_folded():
    (gpu,) = LESSON.find("gpu")
    assert gpu.options.get("code-fold") is True


def test_no_inflated_claims_from_the_original_material():
    for phrase in ("革命性", "100%", "绝对无偏", "马尔可夫链式"):
        assert phrase not in TEXT


def test_random_draws_are_seeded():
    code = "\n".join(c.code for c in LESSON.cells if c.kind == "code")
    assert "default_rng()" not in code and "np.random.seed" not in code
    assert not re.search(r"np\.random\.(rand|randn|choice|normal|random)\(", code)


def test_committed_solution_shows_the_computed_corrections():
    nb = nbformat.read(ROOT / "solutions" / "lesson07.ipynb", as_version=4)
    text = "\n".join(o.get("text", "") + o.get("data", {}).get("text/markdown", "")
                     for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "约为 1.37×" in text  # c = 0.05, γ = 4, α = 0.4 is still above break-even
    assert "['7/10', '3/10']" in text  # the worked example, exactly

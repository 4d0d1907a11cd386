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
              .replace("[______ for p, q", "[max(p - q, 0.0) for p, q"))
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
    cells = [c for c in code_cells(output="asis") if "RUBRIC[\"criteria\"]" in c.code]
    assert len(cells) == 1
    assert "lesson07.rubric.yml" in TEXT


def test_figure_is_drawn_by_a_cell():
    (fig,) = [c for c in LESSON.cells if c.kind == "code" and c.options.get("label") == "fig-speedup"]
    assert "fig-cap" in fig.options and "speculative_speedup_model.png" in fig.code and "savefig" in fig.code
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


def test_no_inflated_claims_from_the_original_material():
    for phrase in ("革命性", "100%", "绝对无偏", "马尔可夫链式"):
        assert phrase not in TEXT


def test_random_draws_are_seeded():
    code = "\n".join(c.code for c in LESSON.cells if c.kind == "code")
    assert "default_rng()" not in code and "np.random.seed" not in code
    assert not re.search(r"np\.random\.(rand|randn|choice|normal|random)\(", code)


def test_committed_solution_shows_the_computed_corrections():
    nb = nbformat.read(ROOT / "solutions" / "lesson07.ipynb", as_version=4)
    text = "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "约为 1.37×" in text  # c = 0.05, γ = 4, α = 0.4 is still above break-even
    assert "['7/10', '3/10']" in text  # the worked example, exactly

"""Write the grader's corpus: submissions for lesson 7 built from the exercise notebook, and
`expected.yml` with what grading each one must give.

    python tests/grader/make_corpus.py            # writes tests/grader/corpus/
    python tests/grader/make_corpus.py OUT_DIR

Every submission starts from `exercises/lesson07.ipynb` (so it has the real structure and
metadata) with the exercise cell and the answer cells replaced. Files too large to commit (a
notebook with 15 MB of outputs, one over the 20 MB limit) are written by `make_large(folder)` at
test time.
"""
from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from answers import GOOD, KEYWORDS, NAMES_ONLY_Q3, PARTIAL, VETO_SENTENCES  # noqa: E402

from grader.lesson import load_lesson  # noqa: E402

EXERCISE = ROOT / "exercises" / "lesson07.ipynb"
LESSON = ROOT / "lessons" / "lesson07.qmd"
ACCEPT = "accept_probability = ______"
RESIDUAL = "[______ for p, q in zip(target_probs, draft_probs)]"
SOLUTION = ("min(1.0, target_probs[draft_token] / qx)", "max(p - q, 0.0)")
FULL_CODE = ["code.main_path", "code.boundary"]


def template() -> str:
    return load_lesson(LESSON).exercise("rejection-rule").code


def filled(accept: str, residual: str, base: str | None = None) -> str:
    code = base or template()
    assert ACCEPT in code and RESIDUAL in code, "the exercise template changed; update make_corpus.py"
    return code.replace(ACCEPT, "accept_probability = " + accept).replace(RESIDUAL, f"[{residual} for p, q in zip(target_probs, draft_probs)]")


def notebook(code: str | None, answers: dict | None) -> dict:
    nb = json.loads(EXERCISE.read_text(encoding="utf-8"))
    # Keep the graded cells (exercise, questions, answers) and the banner: small files, same structure.
    nb["cells"] = [c for n, c in enumerate(nb["cells"]) if n == 0 or c.get("metadata", {}).get("course_role")
                   in ("exercise", "question", "answer")]
    for cell in nb["cells"]:
        meta = cell.get("metadata", {})
        if meta.get("course_role") == "exercise" and meta.get("course_id") == "rejection-rule" and code is not None:
            cell["source"] = code            # the challenge's cell (multi-draft) stays untouched: not attempted
        if meta.get("course_role") == "answer" and answers is not None:
            cell["source"] = answers.get(meta.get("course_id"), cell["source"])
    return nb


def with_sentence(answers: dict, question: str, sentence: str) -> dict:
    out = dict(answers)
    out[question] = out[question] + sentence
    return out


def corpus() -> dict:
    """name -> (notebook dict, or raw text for broken files; expected result)."""
    good = GOOD["A"]
    ok = {"passed": True, "score": 10, "errors": [], "vetoes": [], "needs_review": False}
    items = {}

    def add(name, content, **expected):
        items[name] = (content, expected)

    # Correct code written differently, with independently written answers.
    add("correct_solution_style", notebook(filled(*SOLUTION), GOOD["A"]), **ok,
        description="the reference fills, answer set A")
    add("correct_min_int", notebook(filled("min(1, target_probs[draft_token]/qx)", "max(0.0, p - q)"), GOOD["B"]), **ok,
        description="min(1, ·) with an int, max(0.0, p - q); answer set B")
    add("correct_ternary", notebook(filled("1.0 if target_probs[draft_token] >= qx else target_probs[draft_token] / qx",
                                           "(p - q) if p > q else 0.0"), GOOD["C"]), **ok,
        description="conditional expressions instead of min/max; answer set C")
    add("correct_reversed", notebook(filled("target_probs[draft_token] / qx if target_probs[draft_token] < qx else 1.0",
                                            "p - min(p, q)"), GOOD["B"]), **ok,
        description="reversed conditional, p - min(p, q)")
    add("correct_halfsum", notebook(filled("min(target_probs[draft_token] / qx, 1.0)", "(p - q + abs(p - q)) / 2"), GOOD["C"]),
        **ok, description="(p - q + |p - q|) / 2 is exactly the positive part")
    edited = filled("min(\n        1.0,  # α 不超过 1\n        target_probs[draft_token] / qx,\n    )", "max(p - q, 0)")
    edited = edited.replace("    # TODO：接受概率 min(1,p/q)；拒绝时使用正差 residual。\n", "    # 我的实现：\n\n")
    edited = edited.replace("    qx = draft_probs[draft_token]\n", "    qx = draft_probs[draft_token]    # q(x)\n\n")
    add("correct_multiline_comments", notebook(edited, GOOD["A"]), **ok,
        description="a multi-line fill, a trailing comma, changed comments and blank lines (tolerated)")
    add("correct_prints_flood", notebook(filled("min(1.0, target_probs[draft_token] / qx) if not print('调试' * 200000) else 0.0",
                                                "max(p - q, 0.0)"), GOOD["C"]), **ok,
        description="prints ~1 MB on every call: output never affects the score")
    no_meta = notebook(filled(*SOLUTION), GOOD["B"])
    for cell in no_meta["cells"]:
        if cell.get("metadata", {}).get("course_role") == "exercise":
            cell["metadata"] = {}
    add("correct_cell_metadata_lost", no_meta, **{**ok, "needs_review": True},
        description="the exercise cell lost its metadata: found by similarity to the template (flagged for review)")

    # Wrong code (good answers, so only the code criteria differ).
    wrong = {"passed": False, "score": 7, "errors": [], "vetoes": []}
    add("wrong_no_min", notebook(filled("target_probs[draft_token] / qx", "max(p - q, 0.0)"), good), **wrong,
        description="α without min(1, ·)")
    add("wrong_abs", notebook(filled(SOLUTION[0], "abs(p - q)"), good), **wrong, description="|p - q| instead of the positive part")
    add("wrong_no_clamp", notebook(filled(SOLUTION[0], "p - q"), good), **wrong, description="p - q without clamping at 0")
    add("wrong_residual_is_p", notebook(filled(SOLUTION[0], "p"), good), **wrong, description="resample from p itself")
    add("wrong_hardcoded_example", notebook(filled("0.5 if draft_token == 1 else 1.0", "max(p - q, 0.0)"), good), **wrong,
        visible_pass=True, description="hard-coded to the visible example: passes the visible assertions")
    add("wrong_ignores_zero_q", notebook(filled(SOLUTION[0], "max(p - q, 0.0) if q > 0 else 0.0"), good), **wrong,
        visible_pass=True, description="drops mass where q = 0: passes the visible assertions, wrong on hidden cases")
    add("wrong_rounded", notebook(filled("round(min(1.0, target_probs[draft_token] / qx), 2)", "max(p - q, 0.0)"), good),
        **wrong, visible_pass=True, description="α rounded to 2 decimals: passes the visible assertions")
    add("wrong_threshold_boundary", notebook(filled(SOLUTION[0], "max(p - q, 0.0) if p - q > 1e-15 else 0.0"), good),
        passed=True, score=9, errors=[], vetoes=[], visible_pass=True, lost=["code.boundary"],
        description="drops tiny positive mass: main path right, boundary (near-equal, tiny, subnormal) wrong")
    add("wrong_reciprocal_subnormal", notebook(filled("min(1.0, target_probs[draft_token] * (1.0 / qx))", "max(p - q, 0.0)"), good),
        passed=True, score=9, errors=[], vetoes=[], visible_pass=True, lost=["code.boundary"],
        description="p * (1/q) overflows for subnormal q: boundary fails")
    add("wrong_raises_systemexit", notebook(filled("(x for x in ()).throw(SystemExit())", "max(p - q, 0.0)"), good), **wrong,
        description="raises SystemExit inside the function: recorded as a failure, the grader goes on")
    add("wrong_recursion", notebook(filled("rejection_rule(target_probs, draft_probs, draft_token)[0]", "max(p - q, 0.0)"), good),
        **wrong, description="infinite recursion: RecursionError on every call")
    add("wrong_returns_string", notebook(filled("str(min(1.0, target_probs[draft_token] / qx))", "max(p - q, 0.0)"), good),
        **wrong, description="returns a str where a number is expected")

    # Tampered: anything but the blanks changed, or fills outside the whitelist.
    base = template()
    tampered = {"passed": False, "score": 7, "vetoes": []}
    add("tamper_deleted_assert", notebook(filled(*SOLUTION, base.replace("assert residual == [1.0, 0.0]\n", "")), good),
        **tampered, errors=["integrity"], description="an assertion deleted")
    add("tamper_loosened_tolerance", notebook(filled(*SOLUTION, base.replace("< 1e-12", "< 1e-1")), good), **tampered,
        errors=["integrity"], description="assertion tolerance loosened")
    add("tamper_validation_changed", notebook(filled(*SOLUTION, base.replace("if qx <= 0:", "if qx < 0:")), good), **tampered,
        errors=["integrity"], description="a validation line changed")
    add("tamper_redefine_min", notebook("min = lambda a, b: 1.0\n" + filled(*SOLUTION), good), **tampered,
        errors=["integrity"], description="a line added that redefines a builtin the template uses")
    add("tamper_wrong_answer_redefines_helper", notebook(filled("target_probs[draft_token] / qx", "max(p - q, 0.0)")
                                                         + "\nabs = lambda x: 0.0\n", good), **tampered,
        errors=["integrity"], description="wrong α plus a helper overridden to make the assertions pass")
    add("tamper_import_os", notebook(filled("__import__('os').system('id') or 1.0", "max(p - q, 0.0)"), good), **tampered,
        errors=["forbidden"], description="a fill that imports os")
    add("tamper_open_rubric", notebook(filled("len(open('lessons/lesson07.rubric.yml').read()) and 1.0", "max(p - q, 0.0)"), good),
        **tampered, errors=["forbidden"], description="a fill that reads the rubric from disk")
    add("tamper_dunder_escape", notebook(filled("print.__self__.open('/etc/passwd') and 1.0", "max(p - q, 0.0)"), good),
        **tampered, errors=["forbidden"], description="a fill that reaches builtins through a dunder attribute")
    add("tamper_walrus", notebook(filled("(m := min(1.0, target_probs[draft_token] / qx))", "max(p - q, 0.0)"), good),
        **tampered, errors=["forbidden"], description="assignment expressions are not allowed in fills")
    add("tamper_exit", notebook(filled("exit()", "max(p - q, 0.0)"), good), **tampered, errors=["forbidden"],
        description="a fill that calls exit()")

    # Hostile: must not hang, crash or fool the grader.
    hostile = {"passed": False, "score": 7, "vetoes": []}
    add("hostile_infinite_generator", notebook(filled("next(x for x in iter(int, 1) if x)", "max(p - q, 0.0)"), good), **hostile,
        errors=[], lost=["code.main_path", "code.boundary"],
        description="a Python-level infinite loop in every call: each call hits its alarm, then the run's time budget "
                    "is spent and the remaining calls are skipped; the checks fail, the batch goes on")
    add("hostile_infinite_c_loop", notebook(filled("sum(iter(int, 1))", "max(p - q, 0.0)"), good), **hostile,
        errors=["timeout"], description="an infinite loop inside C code (no signal checks)")
    add("hostile_memory_bomb", notebook(filled("len([0] * 10**10) and 1.0", "max(p - q, 0.0)"), good), **hostile,
        errors=["memory"], description="allocates 80 GB")
    add("hostile_bytearray_bomb", notebook(filled(SOLUTION[0], "max(p - q, 0.0) + len(bytearray(10**12))"), good), **hostile,
        errors=["memory"], description="allocates a terabyte in the residual fill")
    add("hostile_big_compute", notebook(filled("min(1.0, target_probs[draft_token] / qx) + 0 * sum(range(10**13))",
                                               "max(p - q, 0.0)"), good), **hostile, errors=["timeout"],
        description="a computation that would take hours")

    # Broken files.
    broken = {"passed": False, "score": 0, "vetoes": []}
    add("broken_not_json", "this is not a notebook {", **broken, errors=["invalid_notebook"], description="not JSON")
    add("broken_empty_file", "", **broken, errors=["invalid_notebook"], description="an empty file")
    add("broken_json_list", "[1, 2, 3]", **broken, errors=["invalid_notebook"], description="JSON but not a notebook")
    v3 = notebook(filled(*SOLUTION), good)
    v3["nbformat"], v3["nbformat_minor"] = 3, 0
    add("broken_nbformat3", v3, **broken, errors=["invalid_notebook"], description="nbformat 3")
    no_lesson = notebook(filled(*SOLUTION), good)
    del no_lesson["metadata"]["course"]
    add("broken_missing_metadata", no_lesson, **broken, errors=["missing_metadata"], description="no metadata.course.lesson")
    no_cell = notebook(None, good)
    no_cell["cells"] = [c for c in no_cell["cells"] if c.get("metadata", {}).get("course_role") != "exercise"]
    add("broken_missing_exercise_cell", no_cell, passed=False, score=7, vetoes=[], errors=["missing_cell"],
        description="the exercise cell was deleted: code 0, answers still graded")
    no_answers = notebook(filled(*SOLUTION), good)
    no_answers["cells"] = [c for c in no_answers["cells"] if c.get("metadata", {}).get("course_role") != "answer"]
    add("broken_answer_cells_deleted", no_answers, passed=False, score=3, vetoes=[], errors=["missing_cell"],
        description="the answer cells were deleted")

    # Free text: empty, keyword lists, copies, partial answers, vetoes.
    add("text_empty_answers", notebook(filled(*SOLUTION), None), passed=False, score=3, errors=[], vetoes=[],
        needs_review=False, description="correct code, answers left as the placeholder: 0 with certainty")
    add("text_keyword_lists", notebook(filled(*SOLUTION), KEYWORDS), passed=False, score=3, errors=[], vetoes=[],
        description="bare keyword lists assert nothing: 0 on every text criterion (GUIDE.md)")
    lesson = load_lesson(LESSON)
    references = {c.course_id: c.source for c in lesson.find("reference")}
    add("text_copied_reference", notebook(filled(*SOLUTION), references), passed=False, score=3, errors=[], vetoes=[],
        description="the reference answers copied verbatim: no argument of the student's, 0 (GUIDE.md)")
    add("text_partial", notebook(filled(*SOLUTION), PARTIAL), passed=False, score=[4, 6], errors=[], vetoes=[],
        description="answers with some of the required points (by GUIDE.md 0-1 each; the grader may be a point low)")
    for veto_id, (question, sentence) in VETO_SENTENCES.items():
        add("veto_" + veto_id.split(".", 1)[1], notebook(filled(*SOLUTION), with_sentence(good, question, sentence)),
            passed=False, score=10, errors=[], vetoes=[veto_id], needs_review=True, description=f"triggers {veto_id}")
    names_only = dict(good)
    names_only["Q3"] = NAMES_ONLY_Q3
    add("veto_class_names_only", notebook(filled(*SOLUTION), names_only), passed=False, score=[9, 10], errors=[],
        vetoes=[], needs_review=True,
        description="Q3 recites names without who owns which state, beside a short argument: a veto doubt, so "
                    "pending_review until a person confirms or clears it")
    return items


def make_large(folder: Path) -> dict:
    """Write the two big notebooks (not committed); return their expected results."""
    base = notebook(filled(*SOLUTION), GOOD["A"])
    for name, megabytes in (("large_outputs_15mb", 15), ("huge_outputs_50mb", 50)):
        nb = copy.deepcopy(base)
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "x" * (megabytes * 2**20)}]
                break
        (folder / f"{name}.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    return {
        "large_outputs_15mb.ipynb": {"passed": True, "score": 10, "errors": [], "vetoes": [], "needs_review": False,
                                     "description": "15 MB of outputs: ignored, graded normally"},
        "huge_outputs_50mb.ipynb": {"passed": False, "score": 0, "errors": ["invalid_notebook"], "vetoes": [],
                                    "description": "50 MB: over the 20 MB limit, a clear error"},
    }


def write(folder: Path) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    expected = {}
    for name, (content, result) in corpus().items():
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, indent=1) + "\n"
        (folder / f"{name}.ipynb").write_text(text, encoding="utf-8")
        expected[f"{name}.ipynb"] = result
    header = ("# What grading each corpus submission must give (written by tests/grader/make_corpus.py).\n"
              "# score: an integer or [low, high]; errors / vetoes: the ids, in any order;\n"
              "# visible_pass: the visible assertions pass (the hidden checks must catch it); lost: criteria below full marks.\n")
    (folder / "expected.yml").write_text(header + yaml.safe_dump(expected, allow_unicode=True, sort_keys=True, width=120),
                                         encoding="utf-8")
    return expected


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "corpus"
    written = write(out)
    print(f"wrote {len(written)} submissions and expected.yml to {out}")

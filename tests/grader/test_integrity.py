"""Template integrity: only the blanks may change; fills are whitelisted expressions."""
import pytest
from make_corpus import SOLUTION, filled

from grader.integrity import IntegrityError, check_fill, extract_fills, fill_template, statements


def fills_of(template, code):
    return [f.source for f in extract_fills(template, code)]


def test_solution_fills_are_extracted(template):
    assert fills_of(template, filled(*SOLUTION)) == list(SOLUTION)


def test_untouched_template_has_empty_fills(template):
    fills = extract_fills(template, template)
    assert [f.empty for f in fills] == [True, True]
    assert [f.line for f in fills] == [13, 14]


def test_comments_blank_lines_and_spacing_are_tolerated(template):
    code = filled("min( 1.0,target_probs[ draft_token ]/qx )  # mine", "max(p-q,0)")
    code = code.replace("    qx = draft_probs[draft_token]\n", "\n    # q(x)\n    qx = draft_probs[draft_token]   # comment\n\n")
    code = code.replace("# TODO：接受概率 min(1,p/q)；拒绝时使用正差 residual。", "# 我自己的注释")
    assert fills_of(template, code) == ["min( 1.0,target_probs[ draft_token ]/qx )", "max(p-q,0)"]


def test_multiline_fill_runs_on_its_template_line(template):
    code = filled("min(\n        1.0,\n        target_probs[draft_token] / qx,\n    )", "max(p - q, 0)")
    fills = extract_fills(template, code)
    run = fill_template(template, fills)
    assert run.splitlines()[12].strip() == "accept_probability = (min ( 1.0 , target_probs [ draft_token ] / qx , ))"
    assert len(run.splitlines()) == len(template.splitlines())


def test_nested_comprehension_in_residual_fill(template):
    code = filled("1.0", "sum([max(a - b, 0.0) for a, b in [(p, q)]])")
    assert fills_of(template, code)[1] == "sum([max(a - b, 0.0) for a, b in [(p, q)]])"


@pytest.mark.parametrize("edit, line_text", [
    (lambda c: c.replace("assert residual == [1.0, 0.0]\n", ""), "assert rejection_rule("),
    (lambda c: c.replace("< 1e-12", "< 1e-1"), "assert abs(alpha - 0.5) < 1e-1"),
    (lambda c: c.replace("if qx <= 0:", "if qx < 0:"), "if qx < 0:"),
    (lambda c: "min = max\n" + c, "min = max"),
    (lambda c: c + "\nabs = lambda x: 0.0\n", "abs = lambda x: 0.0"),
    (lambda c: c.replace('raise ValueError("negative probability")', "pass"), "pass"),
    (lambda c: c.replace("    normalizer = sum(residual_mass)\n", "    normalizer = 1.0\n"), "normalizer = 1.0"),
])
def test_changed_lines_are_reported_with_the_offending_line(template, edit, line_text):
    code = edit(filled(*SOLUTION))
    with pytest.raises(IntegrityError) as info:
        extract_fills(template, code)
    assert line_text in info.value.text
    assert info.value.line and code.splitlines()[info.value.line - 1] == info.value.text


def test_truncated_submission_names_the_missing_line(template):
    code = filled(*SOLUTION).rsplit("assert", 1)[0]
    with pytest.raises(IntegrityError, match="缺少"):
        extract_fills(template, code)


def test_unparsable_submission_is_an_integrity_error(template):
    with pytest.raises(IntegrityError):
        extract_fills(template, filled("min(1.0, (", "max(p - q, 0)"))


@pytest.mark.parametrize("fill", [
    "__import__('os').system('id')", "open('/etc/passwd').read()", "print.__self__", "(m := 1.0)", "lambda: 1.0",
    "getattr(qx, 'real')", "type(qx)", "eval('1')", "exit()", "().__class__", "x.gi_frame", "'{0}'.format(qx)",
    "globals()", "vars()", "breakpoint()",
])
def test_forbidden_fills(template, fill):
    fills = extract_fills(template, filled(fill, "max(p - q, 0.0)"))
    with pytest.raises(IntegrityError):
        check_fill(fills[0])


@pytest.mark.parametrize("fill", [
    "min(1.0, target_probs[draft_token] / qx)", "1.0 if target_probs[draft_token] >= qx else target_probs[draft_token] / qx",
    "min(1, max(0, target_probs[draft_token]) / qx)", "sorted([1.0, target_probs[draft_token] / qx])[0]",
    "print(qx) or min(1.0, target_probs[draft_token] / qx)", "sum(iter(int, 1))",
])
def test_allowed_fills(template, fill):
    for f in extract_fills(template, filled(fill, "max(p - q, 0.0)")):
        check_fill(f)


def test_statements_split_the_template(template):
    fills = extract_fills(template, filled(*SOLUTION))
    kinds = [(s.kind, s.line) for s in statements(fill_template(template, fills))]
    assert kinds[0] == ("def", 1)
    assert [k for k, _ in kinds].count("assert") == 3

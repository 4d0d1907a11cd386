"""The rubric file: valid, consistent with the lesson, and clear errors when malformed."""
import copy
import re

import pytest
import yaml

from grader.rubric import RubricError, load_rubric, parse_rubric, rubric_path


def raw():
    return yaml.safe_load(rubric_path("lesson07").read_text(encoding="utf-8"))


def test_lesson07_rubric_matches_the_seed(rubric):
    assert [(c.id, c.points) for c in rubric.scored_criteria] == [
        ("code.main_path", 2), ("code.boundary", 1), ("code.source_map", 1), ("Q1", 2), ("Q2", 2), ("Q3", 2)]
    assert [c.id for c in rubric.optional_criteria] == ["challenge.multi_draft"]   # the challenge: outside the 10
    assert rubric.pass_rule.require == ("code.main_path",)                         # the seed's pass rule
    assert (rubric.max_score, rubric.pass_score) == (10, 8)
    assert [v.id for v in rubric.vetoes] == ["veto.peak_speedup", "veto.universal_support",
                                             "veto.correctness_vs_performance", "veto.class_names_only"]


def test_rendered_keys_are_kept():
    data = raw()
    for item in data["criteria"]:
        assert {"id", "points", "title", "description"} <= set(item)
    for item in data["vetoes"]:
        assert {"id", "title"} <= set(item)


def test_text_criteria_answer_the_lessons_questions(ctx):
    assert {c.answer for c in ctx.rubric.text_criteria} <= set(ctx.lesson.question_ids)
    assert ctx.rubric.exercise.id in ctx.lesson.exercise_ids


def test_every_listed_check_exists(ctx):
    known = {(e.exercise.id, c.id) for e in ctx.exercises for c in e.suite.checks}
    known |= {(e.exercise.id, "visible.assertions") for e in ctx.exercises}
    for criterion in ctx.rubric.code_criteria:
        assert {(criterion.exercise, c) for c in criterion.checks} <= known


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.pop("seed"), "seed: missing"),
    (lambda d: d["exercises"][0].pop("function"), "exercises[0].function: missing"),
    (lambda d: d["criteria"][0].update(exercise="nope"), "unknown exercise"),
    (lambda d: d["pass"].update(require=["Q9"]), "pass.require"),
    (lambda d: d["criteria"][0].update(points=5), "max_score: is 10 but the scored criteria add up to 13"),
    (lambda d: d["criteria"][4]["claims"][0]["evidence"].__setitem__(0, ["min(("]), "bad regular expression"),
    (lambda d: d["criteria"][4]["scoring"][0].update(all=["nope"]), "unknown claim ids"),
    (lambda d: d["criteria"][0].update(kind="essay"), "expected 'code' or 'text'"),
    (lambda d: d["vetoes"][0].update(scope="word"), "scope"),
    (lambda d: d["feedback"].pop("copy"), "feedback.copy"),
    (lambda d: d.update(pass_score=11), "pass_score"),
])
def test_malformed_rubrics_name_the_key(mutate, message, tmp_path):
    data = copy.deepcopy(raw())
    mutate(data)
    with pytest.raises(RubricError, match=re.escape(message)):
        parse_rubric(data, tmp_path / "bad.rubric.yml")


def test_unreadable_rubric(tmp_path):
    (tmp_path / "x.rubric.yml").write_text("a: [", encoding="utf-8")
    with pytest.raises(RubricError, match="not valid YAML"):
        load_rubric(tmp_path / "x.rubric.yml")

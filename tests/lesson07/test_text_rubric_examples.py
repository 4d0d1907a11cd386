"""Every claim and misconception of the lesson-7 rubric carries example sentences: positives must be
found, negatives must not (the rules are data; these are their unit tests)."""
import pytest

from grader.claims import analyse, formula_sentence, rule_sentence
from grader.grade import context
from grader.sentences import split_sentences

RUBRIC = context("lesson07").rubric
ITEMS = [(c.id, kind, item) for c in RUBRIC.text_criteria
         for kind, items in (("claim", c.text.claims), ("misconception", c.text.misconceptions)) for item in items]


def _found(criterion, kind, item, sentence):
    scope = RUBRIC.text.scope
    a = analyse(split_sentences(sentence, scope), scope)
    mis = kind == "misconception"
    if item.rules and rule_sentence(item.rules, a, scope, misconception=mis, prose=criterion.prose) is not None:
        return True
    return bool(item.formulas) and formula_sentence(item.formulas, a, not mis) is not None


def test_every_item_has_examples():
    assert all(item.examples_pos and item.examples_neg for _, _, item in ITEMS)


@pytest.mark.parametrize("cid, kind, item", ITEMS, ids=[f"{c}.{i.id}" for c, _, i in ITEMS])
def test_examples(cid, kind, item):
    criterion = RUBRIC.criterion(cid)
    for sentence in item.examples_pos:
        assert _found(criterion, kind, item, sentence), f"{cid}.{item.id} misses: {sentence}"
    for sentence in item.examples_neg:
        assert not _found(criterion, kind, item, sentence), f"{cid}.{item.id} wrongly finds: {sentence}"

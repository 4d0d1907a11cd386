"""One free-text answer graded as the grader grades it: the lesson's rubric criterion, its reference answer
(for the copy check) and its feedback texts; and what a result or a formula reading shows. Shared by the
text-scoring tests."""
from grader.formulas import extract
from grader.normalise import readable
from grader.text import score_answer


def grade(ctx, criterion_id, answer, check_copy=True):
    c = ctx.rubric.criterion(criterion_id)
    return score_answer(answer, c, ctx.references.get(c.answer), None, ctx.rubric.feedback, check_copy=check_copy)


def holds(text, bindings=None):
    """(formula, holds) for each equation the front end reads in `text`."""
    return [(f.text, f.holds) for f in extract(readable(text), bindings)[0]]


def found(result):
    """The ids of the claims a result found, sorted."""
    return sorted(c["id"] for c in result.evidence["claims"] if c["found"])


def misconceptions(result):
    """The ids of the misconceptions a result found, in order."""
    return [m["id"] for m in result.evidence["misconceptions"]]


def vetoes(ctx, answer_id, text):
    """The ids of the vetoes one answer raises."""
    from grader.vetoes import find_vetoes
    return [h.id for h in find_vetoes({answer_id: text}, ctx.rubric.vetoes, ctx.rubric.feedback)]


def doubts(ctx, answer_id, text):
    """The ids of the vetoes one answer is doubted of (left to a person)."""
    from grader.vetoes import veto_doubts
    return [h.id for h in veto_doubts({answer_id: text}, ctx.rubric.vetoes, ctx.rubric.feedback)]

"""One free-text answer graded as the grader grades it: the lesson's rubric criterion, its reference answer
(for the copy check) and its feedback texts. Shared by the text-scoring tests."""
from grader.text import score_answer


def grade(ctx, criterion_id, answer, check_copy=True):
    c = ctx.rubric.criterion(criterion_id)
    return score_answer(answer, c, ctx.references.get(c.answer), None, ctx.rubric.feedback, check_copy=check_copy)

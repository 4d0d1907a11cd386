"""Nothing of the answers reaches students: not the exercise notebook, not the student edition."""
import re

from grader.notebooks import build_notebook

SENTENCE_END = re.compile(r"(?<=[。！？；!?;])|\n")
MIN_SENTENCE = 12  # shorter fragments ("证毕。", a bare formula) can legitimately recur


def exercise_notebook_text(lesson):
    return "\n".join(c.source for c in build_notebook(lesson, "exercise").cells)


def student_edition_text(lesson):
    return "\n".join(c.source for c in lesson.student_cells())


def solution_only_lines(lesson):
    for cell in lesson.find("solution"):
        given = {line.strip() for line in lesson.exercise(cell.course_id).code.splitlines()}
        for line in cell.code.splitlines():
            if line.strip() and line.strip() not in given:
                yield line.strip()


def reference_sentences(lesson):
    for cell in lesson.find("reference"):
        for sentence in SENTENCE_END.split(cell.source):
            sentence = sentence.strip(" -*>#\t")
            if len(sentence) >= MIN_SENTENCE:
                yield sentence


def test_lesson_has_answers_to_hide(lesson):
    assert list(solution_only_lines(lesson)), "a solution should differ from its exercise"
    assert list(reference_sentences(lesson))


def test_no_solution_line_reaches_students(lesson):
    for text in (exercise_notebook_text(lesson), student_edition_text(lesson)):
        leaked = [line for line in solution_only_lines(lesson) if line in text]
        assert leaked == []


def test_no_reference_sentence_reaches_students(lesson):
    for text in (exercise_notebook_text(lesson), student_edition_text(lesson)):
        leaked = [s for s in reference_sentences(lesson) if s in text]
        assert leaked == []


def test_answer_only_content_is_gone_from_the_exercise_notebook(lesson):
    text = exercise_notebook_text(lesson)
    for cell in lesson.cells:
        if cell.answer_only and cell.kind == "markdown" and len(cell.source.strip()) >= MIN_SENTENCE:
            assert cell.source not in text

"""The lesson parser: conventions are enforced with precise file:line errors."""
from pathlib import Path
import textwrap

import pytest

from grader.lesson import LessonError, parse_attrs, parse_lesson

EXERCISE = """\
```{python}
#| course_role: exercise
#| course_id: ex
#| eval: false
x = ______
```
"""
SOLUTION = """\
::: {.content-visible when-profile="answer"}
```{python}
#| course_role: solution
#| course_id: ex
x = 1
```
:::
"""
QUESTION = """\
::: {.course-question course_id="Q1"}
### Q1
Why?
:::
"""
REFERENCE = """\
::: {.content-visible when-profile="answer"}
::: {.callout-tip collapse="true" title="参考答案"}
::: {.course-reference course_id="Q1"}
Because.
:::
:::
:::
"""


def parse(text: str):
    return parse_lesson(textwrap.dedent(text), Path("lessons/t.qmd"))


def error_of(text: str) -> str:
    with pytest.raises(LessonError) as info:
        parse(text)
    return str(info.value)


def test_a_complete_lesson_parses_in_order():
    lesson = parse("---\ntitle: T\n---\n\n## Intro\n\nText.\n\n" + EXERCISE + SOLUTION + QUESTION + REFERENCE)
    assert lesson.title == "T"
    roles = [(c.role, c.course_id, c.answer_only) for c in lesson.cells if c.role]
    assert roles == [("exercise", "ex", False), ("solution", "ex", True),
                     ("question", "Q1", False), ("reference", "Q1", True)]
    assert lesson.exercise("ex").code == "x = ______"
    assert lesson.reference("Q1").source == "Because."
    assert lesson.question_ids == ["Q1"]
    assert all(not c.answer_only for c in lesson.student_cells())


def test_code_inside_a_fence_is_not_a_div():
    lesson = parse("```markdown\n::: {.course-question course_id=\"Q9\"}\n```\n")
    assert lesson.question_ids == []


@pytest.mark.parametrize("text, expected", [
    ("```{python}\n#| course_role: homework\nx = 1\n```\n", "t.qmd:2: unknown course_role 'homework'"),
    (EXERCISE, "t.qmd:1: exercise 'ex' has no solution cell"),
    (EXERCISE + SOLUTION + SOLUTION, "t.qmd:15: duplicate solution id 'ex' (first at line 8)"),
    (EXERCISE + "```{python}\n#| course_role: solution\n#| course_id: ex\nx = 1\n```\n",
     "t.qmd:7: solution 'ex' would appear in the student edition"),
    (EXERCISE.replace("#| eval: false\n", ""), "t.qmd:1: exercise 'ex' must have `#| eval: false`"),
    (QUESTION, "t.qmd:1: question 'Q1' has no reference answer"),
    (QUESTION + "::: {.course-reference course_id=\"Q1\"}\nA.\n:::\n",
     "t.qmd:5: reference answer 'Q1' would appear in the student edition"),
    ("::: {.callout-note}\ntext\n", "t.qmd:1: div opened here is never closed"),
    ("text\n:::\n", "t.qmd:2: ':::' closes a div that was never opened"),
    ("::: {.course-question}\nQ\n:::\n", "t.qmd:1: a course-question div needs a course_id attribute"),
    ("```{python}\n#| course_role: [unclosed\nx = 1\n```\n", "t.qmd:2: cell options are not valid YAML"),
])
def test_convention_errors_name_file_and_line(text, expected):
    assert expected in error_of(text)


def test_pandoc_attributes():
    assert parse_attrs('.a .b #id key="v w" k2=\'x\' k3=bare') == (
        ("a", "b"), {"id": "id", "key": "v w", "k2": "x", "k3": "bare"})
    with pytest.raises(ValueError):
        parse_attrs('key="unterminated')


def test_callout_titles_follow_their_content():
    solution_in_callout = SOLUTION.replace(
        '::: {.content-visible when-profile="answer"}\n',
        '::: {.content-visible when-profile="answer"}\n::: {.callout-tip collapse="true" title="参考实现"}\n') + ":::\n"
    lesson = parse(EXERCISE + solution_in_callout + QUESTION + REFERENCE + '::: {.callout-note title="提示"}\n正文。\n:::\n')
    texts = [c.source for c in lesson.cells if c.kind == "markdown" and c.role is None]
    assert texts == ["**提示**\n\n正文。"]  # the titles of moved content (solution, reference) are gone


def test_edition_and_format_divs_mark_their_cells():
    text = textwrap.dedent("""\
        ::: {.content-hidden when-profile="answer"}
        学生版才有的说明。
        :::

        ::: {.content-visible when-format="html"}
        ```{ojs}
        x = 1
        ```
        :::

        ```{ojs}
        y = 2
        ```

        ::: {.content-hidden when-format="html"}
        只在笔记本里出现的说明。
        :::
        """)
    cells = parse_lesson(text, Path("t.qmd")).cells
    flags = [(c.source.splitlines()[0], c.student_only, c.web_only, c.answer_only) for c in cells]
    assert flags == [("学生版才有的说明。", True, False, False),
                     ("```ojs", False, True, False),
                     ("```ojs", False, True, False),
                     ("只在笔记本里出现的说明。", False, False, False)]

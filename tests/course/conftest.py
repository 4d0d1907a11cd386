from pathlib import Path

import pytest

from grader.build import ROOT, lesson_paths
from grader.lesson import load_lesson

LESSONS = lesson_paths(ROOT)


@pytest.fixture(params=LESSONS, ids=[p.stem for p in LESSONS])
def lesson(request):
    return load_lesson(request.param)

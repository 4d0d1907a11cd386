"""Fixtures for the grader tests: the lesson-7 context (lesson, rubric, template, hidden suite)."""
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))  # answers.py, make_corpus.py

from grader.grade import context  # noqa: E402


@pytest.fixture(scope="session")
def ctx():
    return context("lesson07")


@pytest.fixture(scope="session")
def rubric(ctx):
    return ctx.rubric


@pytest.fixture(scope="session")
def template(ctx):
    return ctx.template

"""The student release, built once per test session into a temporary folder (grader/release.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from grader import release
from grader.paths import ROOT


@pytest.fixture(scope="session")
def release_files() -> dict[str, bytes]:
    return release.build_files(ROOT)


@pytest.fixture(scope="session")
def release_dir(release_files, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("release") / "course"
    release.write_release(release_files, out, ROOT)
    return out


@pytest.fixture(scope="session")
def release_texts(release_files) -> dict[str, str]:
    """Every release file as text (all of them must be UTF-8: the release ships no binaries)."""
    return {rel: data.decode("utf-8") for rel, data in release_files.items()}

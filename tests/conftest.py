"""Shared test setup. Notebooks under tests/ are grader fixtures, not notebooks for nbval."""


def pytest_ignore_collect(collection_path, config):
    if collection_path.suffix == ".ipynb":
        return True
    return None

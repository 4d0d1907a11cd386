"""The autograde workflow's local equivalent (issue 15 items 1, 3 and 8): a pull request is data.

The workflow (.github/workflows/autograde.yml) lists the PR's notebooks with
scripts/list_submissions.py (git metadata, NUL-separated), copies them out as files and runs
`python -I -m grader grade` from the trusted checkout. Here a "pull request" is a real git commit
that adds, next to its notebooks, a top-level yaml.py and rich.py, a fake grader/ package, a fake
lesson `lessonO7` whose checks always pass, a symlink to a classmate's notebook, a checkpoint and
Chinese folder names. None of it may change a score.
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from answers import GOOD
from make_corpus import SOLUTION, filled, notebook

from grader.build import ROOT

LISTER = ROOT / "scripts" / "list_submissions.py"
MARKER = "ATTACK-RAN"
GIT_ENV = {"GIT_AUTHOR_NAME": "s", "GIT_AUTHOR_EMAIL": "s@example.com", "GIT_COMMITTER_NAME": "s",
           "GIT_COMMITTER_EMAIL": "s@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

# Python that leaves a marker in the working directory when anything imports or runs it.
PLANT = f"import pathlib\npathlib.Path({MARKER!r} + '-' + __name__).write_text('ran')\n"
FAKE_GRADES = ("import json, sys\n" + PLANT +
               "json.dump({'results': [{'passed': True, 'score': 10}]}, open('grades.json', 'w'))\nsys.exit(0)\n")

WRONG = notebook(filled("0.5", "p"), {"code-map": "不会", "Q1": "不会", "Q2": "不会", "Q3": "不会"})
RIGHT = notebook(filled(*SOLUTION), GOOD["A"])


def git(repo, *args):
    run = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, env={**os.environ, **GIT_ENV})
    assert run.returncode == 0, run.stderr.decode()
    return run.stdout.decode().strip()


def put(root: Path, rel: str, content) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False), encoding="utf-8")


def fake_lesson(tree: Path) -> None:
    """lessons/lessonO7.*: the real lesson and rubric under letter O, and checks that always pass."""
    put(tree, "lessons/lessonO7.qmd", (ROOT / "lessons" / "lesson07.qmd").read_text(encoding="utf-8"))
    put(tree, "lessons/lessonO7.rubric.yml",
        (ROOT / "lessons" / "lesson07.rubric.yml").read_text(encoding="utf-8").replace("lesson07", "lessonO7"))
    put(tree, "lessons/lessonO7.checks.py", PLANT + "def rejection_rule(ctx):\n    return []\n")


@pytest.fixture(scope="module")
def pull_request(tmp_path_factory):
    """(repo, base sha, head sha): a base commit with one earlier submission, and the PR's commit."""
    repo = tmp_path_factory.mktemp("pr") / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    put(repo, "submissions/earlier/lesson07.ipynb", RIGHT)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    for name in ("yaml.py", "rich.py", "nbformat.py", "sitecustomize.py", "usercustomize.py"):
        put(repo, name, PLANT)
    put(repo, "grader/__init__.py", PLANT)
    put(repo, "grader/__main__.py", FAKE_GRADES)
    put(repo, "scripts/list_submissions.py", FAKE_GRADES)
    fake_lesson(repo)
    put(repo, "submissions/张三/lesson07.ipynb", WRONG)                     # wrong code, no answers
    put(repo, "submissions/s1 有空格/lesson07.ipynb", RIGHT)
    o7 = json.loads(json.dumps(WRONG))
    o7["metadata"]["course"]["lesson"] = "lessonO7"
    put(repo, "submissions/李四/lesson07.ipynb", o7)                         # names the fake lesson
    (repo / "submissions" / "王五").mkdir()
    os.symlink("../张三/lesson07.ipynb", repo / "submissions" / "王五" / "lesson07.ipynb")
    os.symlink("../../solutions/lesson07.ipynb", repo / "submissions" / "solution.ipynb")
    put(repo, "submissions/张三/.ipynb_checkpoints/lesson07-checkpoint.ipynb", RIGHT)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "pull request")
    return repo, base, git(repo, "rev-parse", "HEAD")


CHANGED = ["submissions/s1 有空格/lesson07.ipynb", "submissions/张三/lesson07.ipynb", "submissions/李四/lesson07.ipynb"]


def lister(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-I", str(LISTER), *map(str, args)], cwd=cwd, capture_output=True, timeout=60)


def listed(run) -> list[str]:
    assert run.returncode == 0, run.stderr.decode()
    out = run.stdout.decode("utf-8")
    assert out.endswith("\0") or not out
    return out.split("\0")[:-1]


def grade_isolated(cwd: Path, *args):
    """Exactly the workflow's invocation: `python -I -m grader grade` in the submissions' folder."""
    return subprocess.run([sys.executable, "-I", "-m", "grader", "grade", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "120"})


def results(path: Path) -> dict:
    return {r["submission"]: r for r in json.loads(path.read_text(encoding="utf-8"))["results"]}


def test_the_listing_is_nul_separated_and_drops_links_and_checkpoints(pull_request):
    repo, base, head = pull_request
    run = lister("--repo", repo, "--head", head, "--base", base)
    assert listed(run) == CHANGED                                       # exact bytes: no quoting of 张三
    notes = run.stderr.decode("utf-8")
    assert "submissions/王五/lesson07.ipynb: a symbolic link" in notes
    assert "submissions/solution.ipynb: a symbolic link" in notes
    # What the old workflow used: git quotes non-ASCII names, and the grader was handed "\345\274\240...".
    quoted = git(repo, "diff", "--name-only", base, head, "--", "submissions/*.ipynb").splitlines()
    assert '"submissions/\\345\\274\\240\\344\\270\\211/lesson07.ipynb"' in quoted


def test_a_new_branch_lists_every_notebook_and_the_index_listing_agrees(pull_request):
    repo, _, head = pull_request
    everything = listed(lister("--repo", repo, "--head", head, "--base", "0" * 40))
    assert everything == sorted(CHANGED + ["submissions/earlier/lesson07.ipynb"])
    assert listed(lister("--repo", repo)) == everything                # git ls-files -z -s of the index


def test_the_pull_request_changes_nothing(pull_request, tmp_path):
    repo, base, head = pull_request
    graded = tmp_path / "graded"
    assert listed(lister("--repo", repo, "--head", head, "--base", base, "--extract", graded)) == CHANGED
    assert sorted(str(p.relative_to(graded)) for p in graded.rglob("*") if p.is_file()) == CHANGED
    out = tmp_path / "out"
    run = grade_isolated(graded, "submissions", "--json", out / "grades.json", "--jobs", "2")
    assert run.returncode == 1, run.stderr
    got = results(out / "grades.json")
    assert got["submissions/s1 有空格/lesson07.ipynb"]["score"] == 10
    wrong = got["submissions/张三/lesson07.ipynb"]
    assert wrong["score"] == 0 and not wrong["passed"]
    assert [e["id"] for e in got["submissions/李四/lesson07.ipynb"]["errors"]] == ["unknown_lesson"]

    # The same notebooks graded by the trusted grader from its own checkout: the same scores.
    trusted = tmp_path / "trusted.json"
    subprocess.run([sys.executable, "-m", "grader", "grade", *[graded / p for p in CHANGED], "--json", trusted],
                   cwd=ROOT, capture_output=True, timeout=300)
    for rel in CHANGED:
        a, b = got[rel], results(trusted)[str(graded / rel)]
        assert (a["score"], a["passed"], [e["id"] for e in a["errors"]]) == (b["score"], b["passed"], [e["id"] for e in b["errors"]])


def test_even_the_whole_pull_request_tree_as_working_directory_changes_nothing(pull_request, tmp_path):
    """Defence in depth: had the workflow checked the PR out and run the grader inside it."""
    repo, _, _ = pull_request
    tree = tmp_path / "tree"
    shutil.copytree(repo, tree, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    run = grade_isolated(tree, "submissions", "--json", tmp_path / "grades.json")
    assert not list(tree.glob(MARKER + "*")), run.stderr
    got = results(tmp_path / "grades.json")
    assert got["submissions/s1 有空格/lesson07.ipynb"]["score"] == 10
    assert got["submissions/earlier/lesson07.ipynb"]["score"] == 10
    assert got["submissions/张三/lesson07.ipynb"]["score"] == 0
    assert [e["id"] for e in got["submissions/李四/lesson07.ipynb"]["errors"]] == ["unknown_lesson"]
    assert [e["id"] for e in got["submissions/王五/lesson07.ipynb"]["errors"]] == ["symlink"]
    assert [e["id"] for e in got["submissions/solution.ipynb"]["errors"]] == ["symlink"]
    assert not any(".ipynb_checkpoints" in k for k in got)


def test_without_isolation_the_attack_is_real(pull_request, tmp_path):
    """The control: `python -m grader` (no -I) in the PR tree runs the PR's own grader/ package."""
    repo, _, _ = pull_request
    tree = tmp_path / "tree"
    shutil.copytree(repo, tree, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    subprocess.run([sys.executable, "-m", "grader", "grade", "submissions", "--json", "grades.json"],
                   cwd=tree, capture_output=True, timeout=120)
    assert (tree / f"{MARKER}-grader").exists() and (tree / f"{MARKER}-__main__").exists()


def test_extraction_refuses_an_existing_folder(pull_request, tmp_path):
    repo, base, head = pull_request
    (tmp_path / "graded").mkdir()
    run = lister("--repo", repo, "--head", head, "--base", base, "--extract", tmp_path / "graded")
    assert run.returncode == 2 and b"error:" in run.stderr


def test_the_workflow_grades_the_way_this_file_tests():
    """The workflow's header and steps are the ones the tests above exercise."""
    text = (ROOT / ".github" / "workflows" / "autograde.yml").read_text(encoding="utf-8")
    flow = yaml.safe_load(text)
    assert set(flow[True]) == {"push", "pull_request_target"}            # PyYAML reads `on:` as True
    assert flow["permissions"] == {"contents": "read"}
    steps = flow["jobs"]["grade"]["steps"]
    checkout = steps[0]["with"]
    assert "base.sha" in checkout["ref"] and checkout["persist-credentials"] is False
    runs = "\n".join(s.get("run", "") for s in steps)
    assert "scripts/list_submissions.py --head" in runs and "--extract" in runs
    assert "python -I -m grader grade submissions" in runs and "git diff" not in runs
    assert "checkout" not in runs                                       # the PR's commit is never checked out
    grade_step = next(s for s in steps if "grader grade" in s.get("run", ""))
    assert "graded" in grade_step["working-directory"]
    assert "THREAT MODEL" in text and "pull_request_target" in text

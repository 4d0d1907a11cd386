#!/usr/bin/env python3
"""List (and copy out) the submitted notebooks of a commit from git's own metadata, as data.

    python scripts/list_submissions.py --head REV [--base REV] [--extract DIR]
    python scripts/list_submissions.py                      # the index (git ls-files -s)

What is a submission: a regular file (git mode 100644 or 100755) named `submissions/**/*.ipynb`
outside any `.ipynb_checkpoints` folder. A symbolic link (mode 120000: `ln -s ../s1/lesson07.ipynb`)
or a submodule (160000) is never a submission: it is dropped with a note on stderr.

- `--head REV`: the files of that commit (`git ls-tree -r -z`); without it, the index
  (`git ls-files -z -s`).
- `--base REV`: only the notebooks added or modified since the merge base of BASE and HEAD
  (`git diff -z --raw --no-renames --diff-filter=AMT`); a BASE that is empty, all zeros (a new
  branch) or not a known commit lists everything.
- Every listing is NUL-separated (`-z`): names are never quoted, so `submissions/张三/...` and names
  with spaces, quotes or newlines come through exactly.
- `--extract DIR`: write each notebook's blob (`git cat-file blob`) to DIR/<path>, in a DIR that
  must not exist yet; nothing from the commit is checked out, run or imported. Paths that could
  leave DIR (absolute, `..`, `.git`) are refused.

Output on stdout: the selected paths, each followed by NUL (with --extract, the same paths,
relative to DIR). Exit status 0 (also when nothing is selected), 2 on a git or usage error.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

FOLDER = "submissions"
CHECKPOINTS = ".ipynb_checkpoints"
REGULAR = {"100644", "100755"}
WHAT = {"120000": "a symbolic link", "160000": "a submodule", "040000": "a folder"}
PATHSPEC = [f":(glob){FOLDER}/**/*.ipynb", f":(exclude,glob){FOLDER}/**/{CHECKPOINTS}/**"]


class ListingError(Exception):
    pass


@dataclass(frozen=True)
class Entry:
    mode: str
    sha: str
    path: str


def git(args: list[str], repo: Path) -> bytes:
    try:
        run = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)
    except OSError as exc:
        raise ListingError(f"cannot run git: {exc}") from None
    if run.returncode != 0:
        raise ListingError(f"git {' '.join(args[:2])} failed: {run.stderr.decode('utf-8', 'replace').strip()}")
    return run.stdout


def _fields(raw: bytes) -> list[str]:
    return [f.decode("utf-8", "surrogateescape") for f in raw.split(b"\0") if f]


def is_commit(rev: str | None, repo: Path) -> bool:
    if not rev or set(rev) == {"0"}:
        return False
    return subprocess.run(["git", "-C", str(repo), "cat-file", "-e", f"{rev}^{{commit}}"],
                          capture_output=True).returncode == 0


def tree_entries(head: str, repo: Path) -> list[Entry]:
    """`git ls-tree -r -z HEAD -- submissions`: `<mode> <type> <sha>\\t<path>`."""
    out = []
    for field in _fields(git(["ls-tree", "-r", "-z", "--full-tree", head, "--", FOLDER], repo)):
        meta, _, path = field.partition("\t")
        mode, _kind, sha = meta.split(" ")
        out.append(Entry(mode, sha, path))
    return out


def index_entries(repo: Path) -> list[Entry]:
    """`git ls-files -z -s`: `<mode> <sha> <stage>\\t<path>`."""
    out = []
    for field in _fields(git(["ls-files", "-z", "-s", "--", *PATHSPEC], repo)):
        meta, _, path = field.partition("\t")
        mode, sha, _stage = meta.split(" ")
        out.append(Entry(mode, sha, path))
    return out


def changed_entries(base: str, head: str, repo: Path) -> list[Entry]:
    """Added or modified since merge-base(base, head): `:<old mode> <new mode> <old> <new> <status>\\0<path>\\0`."""
    merge_base = git(["merge-base", base, head], repo).decode().strip()
    fields = _fields(git(["diff", "-z", "--raw", "--no-renames", "--no-ext-diff", "--no-textconv",
                          "--diff-filter=AMT", merge_base, head, "--", *PATHSPEC], repo))
    out = []
    for meta, path in zip(fields[::2], fields[1::2]):
        _old_mode, new_mode, _old, new_sha, _status = meta.lstrip(":").split(" ")
        out.append(Entry(new_mode, new_sha, path))
    return out


def why_not(entry: Entry) -> str | None:
    """None when `entry` is a submission, else why it is not (for the note on stderr)."""
    parts = PurePosixPath(entry.path).parts
    if not entry.path.endswith(".ipynb") or not parts or parts[0] != FOLDER:
        return "not a submissions/**/*.ipynb notebook"
    if CHECKPOINTS in parts:
        return "a JupyterLab checkpoint (autosave copy)"
    if entry.mode not in REGULAR:
        return WHAT.get(entry.mode, f"not a regular file (git mode {entry.mode})")
    if entry.path.startswith("/") or any(p in ("", ".", "..") or p.lower() == ".git" for p in entry.path.split("/")):
        return "a path that would leave the submissions folder"
    return None


def select(entries: list[Entry]) -> tuple[list[Entry], list[tuple[Entry, str]]]:
    kept, dropped = [], []
    for entry in sorted(entries, key=lambda e: e.path):
        reason = why_not(entry)
        if reason is None:
            kept.append(entry)
        elif entry.path.endswith(".ipynb"):
            dropped.append((entry, reason))
    return kept, dropped


def extract(entries: list[Entry], out: Path, repo: Path) -> None:
    """Each entry's blob to out/<path>; `out` must not exist (nothing already there is trusted)."""
    out.mkdir(parents=True)
    for entry in entries:
        target = out.joinpath(*entry.path.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        data = git(["cat-file", "blob", entry.sha], repo)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--head", help="the commit to list (default: the index)")
    ap.add_argument("--base", help="list only notebooks added or modified since this commit (merge base)")
    ap.add_argument("--extract", metavar="DIR", help="copy the notebooks' blobs into DIR (must not exist)")
    ap.add_argument("--repo", default=".", help="the git repository (default: the current folder)")
    args = ap.parse_args(argv)
    repo = Path(args.repo)
    try:
        if args.head and not is_commit(args.head, repo):
            raise ListingError(f"--head {args.head!r} is not a commit in {repo}")
        if args.base and args.head and is_commit(args.base, repo):
            entries = changed_entries(args.base, args.head, repo)
        elif args.head:
            entries = tree_entries(args.head, repo)
        else:
            entries = index_entries(repo)
        kept, dropped = select(entries)
        for entry, reason in dropped:
            print(f"note: not graded: {entry.path}: {reason}", file=sys.stderr)
        if args.extract:
            extract(kept, Path(args.extract), repo)
    except (ListingError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = sys.stdout.buffer
    for entry in kept:
        out.write(entry.path.encode("utf-8", "surrogateescape") + b"\0")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Writing files so that nobody loses anything: one home for the project's file-writing rules.

- `write_atomic`: render first, then replace the target in one step (a uniquely named temporary
  file in the same folder, then `os.replace`), so a reader never sees half a file and two writers
  (two builds, two grading runs) never clobber each other's temporary file. The file is created
  with mode 0666 minus the umask (0644 under the usual 022), like any file a program creates, so
  a TA can read a report an instructor wrote. A target that exists and is not a regular file
  (`/dev/stdout`, a FIFO) is written to directly.
- `write_new`: the same, but never replaces an existing file (a student's copy of an exercise).
- `backup_path`: a timestamped name for keeping a file before it is regenerated.
"""
from __future__ import annotations

import os
import secrets
import stat
import time
from pathlib import Path

NEW_FILE_MODE = 0o666  # the umask is applied by the kernel when the file is created


def _temporary(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


def _write_temporary(path: Path, text: str) -> Path:
    """`text` in a new file next to `path` (0666 & ~umask); the caller moves it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temporary(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), NEW_FILE_MODE)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace", newline="") as fh:  # odd file names too
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def _is_special(path: Path) -> bool:
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def write_atomic(path: str | Path, text: str) -> None:
    """Replace `path` with `text` (UTF-8) in one step. Raises OSError."""
    path = Path(path)
    if _is_special(path):  # a terminal, a pipe: there is nothing to replace
        with open(path, "w", encoding="utf-8", errors="replace", newline="") as fh:
            fh.write(text)
        return
    tmp = _write_temporary(path, text)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_new(path: str | Path, text: str) -> None:
    """Create `path` with `text`; raises FileExistsError (and changes nothing) if it exists."""
    path = Path(path)
    if path.exists() or path.is_symlink():
        raise FileExistsError(path)
    tmp = _write_temporary(path, text)
    try:
        os.link(tmp, path)  # atomic and never replaces: fails if `path` appeared meanwhile
    except FileExistsError:
        raise
    except OSError:  # a file system without hard links
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, NEW_FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
    finally:
        tmp.unlink(missing_ok=True)


def backup_path(folder: Path, path: Path, now: float | None = None) -> Path:
    """`folder/<stem>-<YYYYmmdd-HHMMSS>[-N]<suffix>`, a name not taken yet."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    candidate = folder / f"{path.stem}-{stamp}{path.suffix}"
    n = 1
    while candidate.exists():
        n += 1
        candidate = folder / f"{path.stem}-{stamp}-{n}{path.suffix}"
    return candidate

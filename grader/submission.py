"""Read a submitted notebook safely: only the exercise cell's code and the answer cells' text.

Outputs, attachments and every other cell are ignored (nothing from the notebook is ever executed
except the blank fills, and those only through the instructor's template). Problems become a
SubmissionError with a report error id: `symlink` (the path, or a folder on a relative path, is a
symbolic link: a link to a classmate's notebook is not a submission), `not_a_file` (a FIFO, a
device, a folder), `invalid_notebook` (too large, not JSON, not nbformat 4, no cells, too many JSON
values), `missing_metadata` (no `metadata.course.lesson` and no --lesson), `missing_cell`.

Reading is `O_NOFOLLOW`-like: a relative path is opened one component at a time relative to the
previous folder, each with O_NOFOLLOW (a symlinked folder is refused, not followed); the file is
opened with O_NOFOLLOW | O_NONBLOCK (a FIFO never blocks the batch) and checked with fstat on the
open descriptor (no check-then-open race). Sizes are capped before anything is parsed.
"""
from __future__ import annotations

import difflib
import errno
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .lesson import ANSWER_PLACEHOLDER

MAX_BYTES = 20 * 1024 * 1024
MAX_JSON_CONTAINERS = 200_000  # "{" and "[" in the file: a 20 MB file of "[{}," would cost GBs once parsed
MAX_ANSWER_CHARS = 20_000     # longer answers are scored on their first 20k characters
MAX_FALLBACK_CELLS = 200      # code cells compared with the template when no cell carries the exercise id
MAX_FALLBACK_LINES = 400      # a cell with more code lines than this is not the exercise (never compared)

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class SubmissionError(Exception):
    def __init__(self, error_id: str, message: str):
        super().__init__(message)
        self.error_id, self.message = error_id, message


@dataclass(frozen=True)
class Notebook:
    """The parts of a notebook the grader reads."""

    lesson: str | None                        # metadata.course.lesson
    cells: tuple[dict, ...] = field(repr=False)


SYMLINK_MESSAGE = ("{what}是符号链接（symlink），不是提交的文件：链接到别人的笔记本不算自己的提交。"
                   "请提交笔记本文件本身（复制而不是链接）")
NOT_A_FILE_MESSAGE = "{path} 不是普通文件（{kind}）：请提交 .ipynb 笔记本文件本身"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "是文件夹"
    if stat.S_ISFIFO(mode):
        return "是命名管道 FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "是设备文件"
    if stat.S_ISSOCK(mode):
        return "是套接字"
    return "不是普通文件"


def _refuse_if_link(name: str, dir_fd: int | None, what: str) -> None:
    try:
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except OSError:
        return                                   # the open below reports it
    if stat.S_ISLNK(mode):
        raise SubmissionError("symlink", SYMLINK_MESSAGE.format(what=what))


def open_regular(path: Path) -> int:
    """A read-only descriptor for `path`, refusing symbolic links and anything but a regular file.

    An absolute path's folders are the instructor's choice and are followed; a relative path (the
    batch's `submissions/<student>/...`) is walked folder by folder with O_NOFOLLOW, so a student's
    symlinked folder is refused too. Raises SubmissionError (`symlink`, `not_a_file`,
    `invalid_notebook` for other OS errors)."""
    parts = path.parts
    folders, name = (parts[:-1], parts[-1]) if parts else ((), "")
    dir_fd = None
    fds = []
    try:
        if not path.is_absolute():
            for n, folder in enumerate(folders):
                if folder in (".", ".."):
                    fd = os.open(folder, os.O_RDONLY | _DIRECTORY, dir_fd=dir_fd)
                else:
                    _refuse_if_link(folder, dir_fd, f"路径中的文件夹 {Path(*folders[:n + 1])}")
                    fd = os.open(folder, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=dir_fd)
                fds.append(fd)
                dir_fd = fd
        else:
            dir_fd = os.open(str(path.parent), os.O_RDONLY | _DIRECTORY)
            fds.append(dir_fd)
        _refuse_if_link(name, dir_fd, f"{path} ")
        try:
            mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
        except OSError:
            mode = None
        if mode is not None and not stat.S_ISREG(mode):   # never open a device: opening may have effects
            raise SubmissionError("not_a_file", NOT_A_FILE_MESSAGE.format(path=path, kind=_kind(mode)))
        fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK, dir_fd=dir_fd)
    except SubmissionError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP:               # O_NOFOLLOW met a link that appeared meanwhile
            raise SubmissionError("symlink", SYMLINK_MESSAGE.format(what=f"{path} ")) from None
        raise SubmissionError("invalid_notebook", f"无法读取文件：{exc.strerror or exc}") from None
    finally:
        for opened in fds:
            os.close(opened)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):                     # swapped for something else after the check above
        os.close(fd)
        raise SubmissionError("not_a_file", NOT_A_FILE_MESSAGE.format(path=path, kind=_kind(mode)))
    return fd


def read_bytes(path: Path, max_bytes: int = MAX_BYTES) -> bytes:
    """The file's bytes (at most `max_bytes`, else SubmissionError), read through `open_regular`."""
    fd = open_regular(path)
    try:
        size = os.fstat(fd).st_size
        if size > max_bytes:
            raise SubmissionError("invalid_notebook", f"文件有 {size / 2**20:.1f} MiB，超过 {max_bytes / 2**20:.0f} MiB 的上限"
                                  "（清除输出后再提交：Kernel → Restart & Clear Output）")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = fh.read(max_bytes + 1)
    except OSError as exc:
        raise SubmissionError("invalid_notebook", f"无法读取文件：{exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(raw) > max_bytes:                       # grew after fstat
        raise SubmissionError("invalid_notebook", f"文件超过 {max_bytes / 2**20:.0f} MiB 的上限")
    return raw


def read_notebook(path: Path, max_bytes: int = MAX_BYTES) -> Notebook:
    raw = read_bytes(Path(path), max_bytes)
    containers = raw.count(b"{") + raw.count(b"[")
    if containers > MAX_JSON_CONTAINERS:
        raise SubmissionError("invalid_notebook", f"笔记本含 {containers} 个 JSON 对象或数组，超过 {MAX_JSON_CONTAINERS} 的上限"
                              "（清除输出后再提交：Kernel → Restart & Clear Output）")
    try:
        text = raw.decode("utf-8-sig")
        del raw                                    # one copy of the file at a time, not three
        data = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise SubmissionError("invalid_notebook", f"不是合法的 JSON 笔记本：{str(exc)[:120]}") from None
    del text
    if not isinstance(data, dict):
        raise SubmissionError("invalid_notebook", "不是 Jupyter 笔记本（顶层不是 JSON 对象）")
    if data.get("nbformat") != 4:
        raise SubmissionError("invalid_notebook", f"需要 nbformat 4 的笔记本，这个文件是 nbformat {data.get('nbformat')!r}")
    cells = data.get("cells")
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        raise SubmissionError("invalid_notebook", "笔记本没有合法的 cells 列表")
    metadata = data.get("metadata")
    course = metadata.get("course") if isinstance(metadata, dict) else None
    lesson = course.get("lesson") if isinstance(course, dict) else None
    # Only the cells' source and metadata are read: outputs and attachments are dropped now, so a
    # batch never holds a notebook's figures while other submissions are graded.
    kept = tuple({k: c[k] for k in ("cell_type", "metadata", "source") if k in c} for c in cells)
    return Notebook(_encodable(lesson) if isinstance(lesson, str) and lesson else None, kept)


def cell_source(cell: dict) -> str:
    source = cell.get("source", "")
    if isinstance(source, list):
        source = "".join(s for s in source if isinstance(s, str))
    return _encodable(source) if isinstance(source, str) else ""


def _encodable(text: str) -> str:
    """JSON may carry lone surrogates ("\\ud800") that cannot be printed or written as UTF-8."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _meta(cell: dict) -> dict:
    meta = cell.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _code_lines(source: str, limit: int) -> list[str] | None:
    """The cell's code lines for the similarity search: comments, blank lines and spacing dropped
    (a cell of 8 KB of spaces has none); None when there are more than `limit`."""
    out = []
    for line in source.splitlines():
        code = " ".join(line.split("#", 1)[0].split())
        if code:
            out.append(code)
            if len(out) > limit:
                return None
    return out


def find_exercise(notebook: Notebook, exercise_id: str, template: str) -> tuple[str, str]:
    """(code, how it was found): by `course_role`/`course_id`, else the code cell most like the template.

    The fallback compares lines, not characters: at most MAX_FALLBACK_CELLS cells of at most
    max(4 × the template's lines, MAX_FALLBACK_LINES) code lines each, so its work is bounded
    whatever the cells hold (200 cells of spaces or of a shuffled template)."""
    for cell in notebook.cells:
        meta = _meta(cell)
        # The solution notebook keeps the same id with role "solution" in the exercise's place.
        if (cell.get("cell_type") == "code" and meta.get("course_role") in ("exercise", "solution")
                and meta.get("course_id") == exercise_id):
            return cell_source(cell), "metadata"
    wanted = _code_lines(template, 10**6) or []
    limit = max(4 * len(wanted), MAX_FALLBACK_LINES)
    best, best_ratio = None, 0.0
    code_cells = [cell for cell in notebook.cells if cell.get("cell_type") == "code"][:MAX_FALLBACK_CELLS]
    for cell in code_cells:
        source = cell_source(cell)
        if not source or len(source) > 4 * len(template) + 1000:
            continue
        lines = _code_lines(source, limit)
        if not lines:
            continue
        matcher = difflib.SequenceMatcher(None, lines, wanted, autojunk=False)
        if matcher.real_quick_ratio() > best_ratio and matcher.quick_ratio() > best_ratio:
            ratio = matcher.ratio()
            if ratio > best_ratio:
                best, best_ratio = source, ratio
    if best is not None and best_ratio >= 0.6:
        return best, "similarity"
    if _turned_into_text(notebook, exercise_id, template):
        raise SubmissionError("missing_cell", f"练习单元 {exercise_id!r} 被改成了 Markdown（或 Raw）单元：把它改回代码（Code）单元"
                              "（选中该单元，按 Esc 再按 Y，或在工具栏的下拉框里选 Code），保存后再自查")
    raise SubmissionError("missing_cell", f"找不到练习单元 {exercise_id!r}（没有带 course_id 的代码单元，也没有与模板相近的代码单元）")


def _turned_into_text(notebook: Notebook, exercise_id: str, template: str) -> bool:
    """A non-code cell that carries the exercise's metadata or the template's first code line."""
    first = next((line.strip() for line in template.splitlines() if line.strip() and not line.lstrip().startswith("#")), None)
    for cell in notebook.cells:
        if cell.get("cell_type") == "code":
            continue
        meta = _meta(cell)
        if meta.get("course_role") == "exercise" and meta.get("course_id") == exercise_id:
            return True
        if first and first in cell_source(cell):
            return True
    return False


def answer_text(source: str) -> str:
    """The student's answer with the placeholder line removed; "" when nothing else is there."""

    source = source[: 4 * MAX_ANSWER_CHARS]    # capped before splitting: 20 MB of newlines is 20 M strings
    lines = [line for line in source.splitlines() if line.strip() != ANSWER_PLACEHOLDER]
    return "\n".join(lines).strip()[:MAX_ANSWER_CHARS]


def find_answers(notebook: Notebook) -> dict:
    """course_id -> answer text ("" when empty); an id is absent when its answer cell is missing."""
    answers = {}
    for cell in notebook.cells:
        meta = _meta(cell)
        if meta.get("course_role") == "answer" and isinstance(meta.get("course_id"), str):
            answers.setdefault(meta["course_id"], answer_text(cell_source(cell)))
    return answers

"""Run one job in its own OS process (`grader/harness.py`) and bring back validated plain JSON.

The child is `python -I -S harness.py` in a fresh empty directory, its own session (so the whole
process group can be killed), a minimal environment, stdout discarded, stderr and the result pipe
read with size caps, and a wall-clock deadline. The harness limits itself (address space, CPU,
file writes, descriptors), drops root to `nobody`, and refuses audited operations once student
code runs. Nothing from the child is unpickled or evaluated: the result is JSON, checked against
the shape the harness promises, or the run is reported as `crash`.
"""
from __future__ import annotations

import importlib.util
import json
import math
import os
import pwd
import selectors
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .wire import PROTOCOL

HARNESS = Path(__file__).with_name("harness.py")


@dataclass(frozen=True)
class Limits:
    timeout_s: float = 10.0        # wall clock for the whole child
    call_timeout_s: float = 2.0    # alarm per statement or call inside the child
    memory_mb: int = 512           # RLIMIT_AS
    max_result_bytes: int = 8 * 1024 * 1024
    max_stderr_bytes: int = 16 * 1024
    drop_to: str = "nobody"        # when the grader runs as root

    @property
    def cpu_s(self) -> int:
        return max(1, math.ceil(self.timeout_s))


@dataclass(frozen=True)
class RunResult:
    """status: "ok" (payload is the validated result), "timeout", "memory", "killed" or "crash"."""

    status: str
    payload: dict | None
    message: str = ""
    returncode: int | None = None
    stderr: str = ""
    wall_s: float = 0.0


def import_search_path(modules) -> tuple[str, ...]:
    """The directories the harness needs on sys.path for an exercise's declared imports (none for
    the standard library, which `python -I -S` already has). Raises ModuleNotFoundError naming a
    module that is not installed."""
    out = []
    stdlib = {Path(sysconfig.get_paths()[k]).resolve() for k in ("stdlib", "platstdlib")}
    for module in modules:
        spec = importlib.util.find_spec(module.partition(".")[0])
        if spec is None:
            raise ModuleNotFoundError(f"the exercise needs the Python package {module!r}", name=module)
        if spec.origin in (None, "built-in", "frozen"):
            continue
        location = Path(spec.origin).resolve().parent
        if spec.submodule_search_locations:
            location = location.parent
        if location not in stdlib and location.parent not in stdlib:
            out.append(str(location))
    return tuple(dict.fromkeys(out))


def _unprivileged(name: str) -> tuple[int, int]:
    if os.geteuid() != 0:
        return -1, -1
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return -1, -1
    return entry.pw_uid, entry.pw_gid


def run(job: dict | bytes, limits: Limits = Limits()) -> RunResult:
    """Execute `job` (see harness.py; a dict or its JSON bytes) in a sandboxed child; never raises for
    anything the child does."""
    payload = job if isinstance(job, bytes) else json.dumps(job).encode()
    uid, gid = _unprivileged(limits.drop_to)
    workdir = tempfile.mkdtemp(prefix="grader-")
    os.chmod(workdir, 0o755)
    read_fd, write_fd = os.pipe()
    start = time.monotonic()
    try:
        try:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", str(HARNESS), str(write_fd), str(limits.memory_mb),
                 str(limits.cpu_s), str(uid), str(gid)],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                pass_fds=(write_fd,), cwd=workdir, env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"},
                start_new_session=True, close_fds=True,
            )
        finally:
            os.close(write_fd)
        with proc:
            result, stderr, timed_out, oversize = _communicate(proc, payload, read_fd, start + limits.timeout_s, limits)
            _kill_group(proc)
            try:
                returncode = proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                returncode = None
    finally:
        os.close(read_fd)
        shutil.rmtree(workdir, ignore_errors=True)
    wall = time.monotonic() - start
    text = stderr.decode("utf-8", errors="replace")
    return _verdict(result, text, returncode, timed_out, oversize, limits, wall)


def _communicate(proc, payload: bytes, read_fd: int, deadline: float, limits: Limits):
    """Feed stdin, drain stderr and the result pipe with caps, until both close or the deadline."""
    result, stderr = bytearray(), bytearray()
    oversize = False
    sel = selectors.DefaultSelector()
    os.set_blocking(proc.stdin.fileno(), False)
    sel.register(proc.stdin, selectors.EVENT_WRITE)
    sel.register(proc.stderr, selectors.EVENT_READ)
    sel.register(read_fd, selectors.EVENT_READ)
    view = memoryview(payload)
    open_readers = 2
    try:
        while open_readers:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return bytes(result), bytes(stderr), True, oversize
            for key, _ in sel.select(timeout=min(remaining, 1.0)):
                if key.fileobj is proc.stdin:
                    try:
                        view = view[os.write(proc.stdin.fileno(), view[:65536]):]
                    except BlockingIOError:
                        continue
                    except (BrokenPipeError, OSError):
                        view = view[len(view):]
                    if not view:
                        sel.unregister(proc.stdin)
                        proc.stdin.close()
                    continue
                fd = key.fd
                chunk = os.read(fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    open_readers -= 1
                    continue
                if fd == read_fd:
                    if len(result) + len(chunk) > limits.max_result_bytes:
                        oversize = True
                        return bytes(result), bytes(stderr), False, True
                    result += chunk
                elif len(stderr) < limits.max_stderr_bytes:
                    stderr += chunk[: limits.max_stderr_bytes - len(stderr)]
        return bytes(result), bytes(stderr), False, oversize
    finally:
        sel.close()
        if proc.stdin and not proc.stdin.closed:
            try:
                proc.stdin.close()
            except OSError:
                pass


def _kill_group(proc) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _verdict(raw: bytes, stderr: str, returncode, timed_out: bool, oversize: bool, limits: Limits, wall: float) -> RunResult:
    tail = stderr[-2000:]
    if timed_out:
        return RunResult("timeout", None, f"no result within {limits.timeout_s:g} s (wall clock); the process group was killed",
                         returncode, tail, wall)
    if returncode == -signal.SIGXCPU and not raw:
        return RunResult("timeout", None, f"killed after {limits.cpu_s} s of CPU time", returncode, tail, wall)
    if returncode == -signal.SIGKILL and not raw:
        if wall >= limits.cpu_s:   # RLIMIT_CPU's hard limit ends in SIGKILL one second after SIGXCPU
            return RunResult("timeout", None, f"killed after {limits.cpu_s} s of CPU time", returncode, tail, wall)
        return RunResult("killed", None, f"killed by SIGKILL after {wall:.1f} s, before any time limit "
                         "(most likely the machine ran out of memory)", returncode, tail, wall)
    if oversize:
        return RunResult("crash", None, f"result larger than {limits.max_result_bytes} bytes", returncode, tail, wall)
    if "MemoryError" in stderr and not raw:
        return RunResult("memory", None, f"ran out of memory (limit {limits.memory_mb} MiB)", returncode, tail, wall)
    if not raw:
        return RunResult("crash", None, f"the process exited (status {returncode}) without a result", returncode, tail, wall)
    try:
        payload = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return RunResult("crash", None, "the result is not valid JSON", returncode, tail, wall)
    problem = validate(payload)
    if problem:
        return RunResult("crash", None, f"malformed result: {problem}", returncode, tail, wall)
    if payload.get("fatal") == "memory":
        return RunResult("memory", None, f"ran out of memory (limit {limits.memory_mb} MiB)", returncode, tail, wall)
    return RunResult("ok", payload, "", returncode, tail, wall)


def _is_error(obj) -> bool:
    return (type(obj) is dict and type(obj.get("type")) is str and type(obj.get("message")) is str
            and (obj.get("line") is None or type(obj.get("line")) is int))


def validate(payload) -> str:
    """'' when `payload` has the shape harness.py promises, else what is wrong."""
    if type(payload) is not dict or payload.get("protocol") != PROTOCOL:
        return f"not a protocol-{PROTOCOL} object"
    if "fatal" in payload:
        return "" if payload["fatal"] == "memory" else "unknown fatal error"
    for key, kind in (("statements", list), ("calls", list), ("memory", bool), ("blocked", list)):
        if type(payload.get(key)) is not kind:
            return f"{key} missing or not a {kind.__name__}"
    for item in payload["statements"]:
        if type(item) is not dict or type(item.get("ok")) is not bool:
            return "a statement result is malformed"
        if not item["ok"] and not _is_error(item.get("error")):
            return "a failed statement has no error"
    for item in payload["calls"]:
        if type(item) is not dict or type(item.get("ok")) is not bool:
            return "a call result is malformed"
        if item["ok"] and "value" not in item:
            return "a call result has no value"
        if not item["ok"] and not (_is_error(item.get("error")) or type(item.get("bad")) is str):
            return "a failed call has neither error nor bad"
    if not all(type(event) is str for event in payload["blocked"]):
        return "blocked events are not strings"
    return ""

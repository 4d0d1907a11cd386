"""The sandbox child: runs one submission's code and reports plain JSON. Standalone on purpose.

`grader/sandbox.py` starts this file as `python -I -S harness.py RESULT_FD MEMORY_MB CPU_S UID GID`,
so it imports nothing from the project and not even site-packages are on the path. In order:

1. set its own resource limits (address space, CPU seconds, no file writes, few descriptors, no
   core files) before it reads any untrusted input;
2. read the whole job from stdin: `{"protocol": 2, "statements": [{"line", "source", "kind"}],
   "function", "calls": [[arg, ...], ...], "call_timeout_s", "run_budget_s", "imports": [name, ...],
   "path": [dir, ...]}` (`run_budget_s`: once the calls have taken this long, the rest are skipped);
   arguments and return values use the typed values of `grader/wire.py` (protocol 2: lists, tagged
   tuples and dicts, and `{"$": "ratio", ...}` for a list of floats k / d); the modules named in
   `imports` (declared by the rubric, e.g. `math`) are imported now, before any limit on imports,
   and bound under their names in the exercise's namespace (the exercise cannot import anything);
3. as root, drop to the unprivileged UID/GID given (then no child processes: RLIMIT_NPROC 0);
4. install an audit hook that refuses every audited operation (open, import, exec, compile,
   subprocess, fork, kill, socket, ctypes, frame introspection, ...) once student code runs, and
   point `print` at a capped sink;
5. exec each top-level statement of the exercise (the instructor's template with the blank fills),
   recording pass/fail per statement, then call the function on each input with a per-call alarm;
6. convert every return value with exact type checks (`type(x) is float`, bounded lists) into
   plain JSON (anything else is reported as a bad value, never trusted) and write it to RESULT_FD.

The grader validates what comes back and compares it with its own oracle; nothing here decides
a score.
"""
import builtins
import json
import os
import resource
import signal
import sys
import time

PROTOCOL = 2
MAX_ITEMS = 200_000          # longest list accepted in a return value
MAX_TEXT = 2_000             # longest string kept (messages, returned strings)
MAX_DEPTH = 8                # nesting of lists / tuples / dicts accepted in a return value
SINK_KEEP = 4_096            # bytes of student output kept (the rest is only counted)
EXACT_INT = 2 ** 53          # larger ints cannot become floats exactly
ALLOWED_EVENTS = frozenset({"builtins.id", "time.sleep"})
_FunctionType = type(lambda: None)
try:
    raise ValueError
except ValueError as _exc:
    _TracebackType = type(_exc.__traceback__)


class _CallTimeout(BaseException):
    """Raised by the alarm inside a call that ran past its budget (BaseException: not catchable by
    `except Exception` in student code)."""


class _Sink:
    """Stands in for sys.stdout/sys.stderr: keeps the first SINK_KEEP bytes, counts the rest."""

    def __init__(self):
        self.kept, self.total = [], 0

    def write(self, text):
        if type(text) is not str:
            text = "<non-str>"
        if self.total < SINK_KEEP:
            self.kept.append(text[: SINK_KEEP - self.total])
        self.total += len(text)
        return len(text)

    def flush(self):
        pass

    def isatty(self):
        return False


def _limit(which, value):
    try:
        resource.setrlimit(which, (value, value))
    except (ValueError, OSError):
        pass


def _set_limits(memory_mb, cpu_s):
    _limit(resource.RLIMIT_AS, memory_mb * 1024 * 1024)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    _limit(resource.RLIMIT_FSIZE, 0)
    _limit(resource.RLIMIT_CORE, 0)
    _limit(resource.RLIMIT_NOFILE, 64)


def _drop_privileges(uid, gid):
    if os.geteuid() != 0 or uid < 0:
        return False
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    if os.getuid() == 0 or os.geteuid() == 0:
        raise SystemExit("could not drop privileges")
    return True


class _Guard:
    """The audit hook and the switch that decides when it applies."""

    def __init__(self):
        self.armed = False
        self.exec_tokens = 0
        self.blocked = []

    def hook(self, event, args):
        if not self.armed or event in ALLOWED_EVENTS:
            return
        if event == "exec" and self.exec_tokens > 0:
            self.exec_tokens -= 1
            return
        if len(self.blocked) < 20:
            self.blocked.append(event)
        raise RuntimeError(f"operation not permitted during grading: {event}")


def _text(value):
    return value[:MAX_TEXT] if type(value) is str else "<unprintable>"


def _type_name(kind):
    """A class's own name, read with type's C getter (a metaclass cannot intercept it)."""
    try:
        return _text(_TYPE_NAME.__get__(kind, type))
    except BaseException:
        return "<unknown>"


_TYPE_NAME = type.__dict__["__name__"]


def _guarded(guard, seconds, action):
    """(True, value) or (False, exception) from `action()` run with the guard armed and an alarm;
    never raises."""
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds)
        guard.armed = True
        try:
            return True, action()
        finally:
            guard.armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
    except BaseException as exc:  # SystemExit, KeyboardInterrupt, the alarm, anything student code raises
        return False, exc


def _describe(exc, guard):
    """type / message / line of an exception from student code, without trusting it."""
    if type(exc) is _CallTimeout:
        return {"type": "Timeout", "message": "call ran past its time budget", "line": None}
    ok, message = _guarded(guard, 0.5, lambda: str(exc))  # str() may run student code
    line = None
    try:  # frame attributes: C getters only, no student code runs here
        tb = exc.__traceback__
        while type(tb) is _TracebackType:
            if tb.tb_frame.f_code.co_filename == "<exercise>":
                line = tb.tb_lineno
            tb = tb.tb_next
    except BaseException:
        line = None
    return {"type": _type_name(type(exc)), "message": _text(message) if ok else "<unprintable>",
            "line": line if type(line) is int else None}


def _plain(value, depth=0):
    """An exact-typed copy in the typed wire form (see grader/wire.py), or raise TypeError naming
    what was refused."""
    kind = type(value)
    if kind is float:
        return value
    if kind is int:
        if -EXACT_INT <= value <= EXACT_INT:
            return value
        raise TypeError("int too large")
    if kind is bool or value is None:
        return value
    if kind is str:
        return value[:MAX_TEXT]
    if depth >= MAX_DEPTH:
        raise TypeError("value nested too deeply")
    if kind is list or kind is tuple:
        if len(value) > MAX_ITEMS:
            raise TypeError(f"{_type_name(kind)} longer than {MAX_ITEMS}")
        if set(map(type, value)) <= {float}:   # the common case, checked in C: a list of exact floats
            items = list(value)
        else:
            items = [_plain(item, depth + 1) for item in value]
        return items if kind is list else {"$": "tuple", "items": items}
    if kind is dict:
        if len(value) > MAX_ITEMS:
            raise TypeError(f"dict longer than {MAX_ITEMS}")
        pairs = []
        for key, item in dict.items(value):
            if type(key) is not str and type(key) is not int:
                raise TypeError("dict keys must be str or int")
            pairs.append([_plain(key, depth + 1), _plain(item, depth + 1)])
        return {"$": "dict", "items": pairs}
    raise TypeError(f"unsupported type {_type_name(kind)}")


def _argument(arg, depth=0):
    """A fresh Python value from one typed wire argument (see grader/wire.py)."""
    if type(arg) is list:
        return [_argument(a, depth + 1) for a in arg]
    if type(arg) is dict:
        tag = arg.get("$")
        if tag == "ratio":
            denominator = arg["denominator"]
            return [k / denominator for k in arg["counts"]]
        if tag == "tuple":
            return tuple(_argument(a, depth + 1) for a in arg["items"])
        if tag == "dict":
            return {k: _argument(v, depth + 1) for k, v in arg["items"]}
        raise ValueError("untagged object in the job")
    return arg


def _is_memory(exc):
    return issubclass(type(exc), MemoryError)


def run(job, guard, modules):
    statements = []
    for item in job["statements"]:
        padded = "\n" * (int(item["line"]) - 1) + item["source"]
        statements.append(compile(padded, "<exercise>", "exec", dont_inherit=True))
    budget = float(job.get("call_timeout_s", 2.0))
    # The whole run's budget for calls: once spent, the remaining calls are reported as skipped
    # (a failed outcome), so a slow wrong fill fails its checks instead of running into the wall clock.
    run_budget = float(job.get("run_budget_s", 1e9))
    started = time.monotonic()
    safe_builtins = dict(builtins.__dict__)
    for name in ("open", "exec", "eval", "compile", "__import__", "breakpoint", "input", "help",
                 "globals", "locals", "vars", "getattr", "setattr", "delattr", "exit", "quit"):
        safe_builtins.pop(name, None)
    namespace = {"__builtins__": safe_builtins, "__name__": "__exercise__"}
    namespace.update(modules)
    memory = False

    def run_statement(code):
        guard.exec_tokens = 1
        exec(code, namespace)

    results = []
    for code in statements:
        ok, outcome = _guarded(guard, budget, lambda: run_statement(code))
        guard.exec_tokens = 0
        if ok:
            results.append({"ok": True})
        else:
            memory = memory or _is_memory(outcome)
            results.append({"ok": False, "error": _describe(outcome, guard)})

    fn = namespace.get(job["function"])
    calls = []
    for args in job["calls"]:
        if time.monotonic() - started > run_budget:
            calls.append({"ok": False, "error": {"type": "Skipped", "line": None,
                                                 "message": "not run: the run's time budget was spent"}})
            continue
        if type(fn) is not _FunctionType:
            calls.append({"ok": False, "error": {"type": "NameError", "line": None,
                                                 "message": f"{job['function']} is not a function"}})
            continue
        fresh = [_argument(a) for a in args]
        ok, outcome = _guarded(guard, budget, lambda: fn(*fresh))
        if not ok:
            memory = memory or _is_memory(outcome)
            calls.append({"ok": False, "error": _describe(outcome, guard)})
            continue
        try:
            calls.append({"ok": True, "value": _plain(outcome)})
        except TypeError as exc:
            calls.append({"ok": False, "bad": str(exc)})
        except (RecursionError, MemoryError):
            calls.append({"ok": False, "bad": "value too large or too deep"})
    return {"protocol": PROTOCOL, "statements": results, "calls": calls, "memory": memory,
            "blocked": list(guard.blocked)}


def main(argv):
    result_fd, memory_mb, cpu_s, uid, gid = (int(a) for a in argv[1:6])
    _set_limits(memory_mb, cpu_s)
    job = json.loads(sys.stdin.buffer.read())
    if job.get("protocol") != PROTOCOL:
        raise SystemExit(f"job protocol {job.get('protocol')!r}, harness protocol {PROTOCOL}")
    sys.path.extend(job.get("path", []))
    modules = {}
    for name in job.get("imports", []):
        __import__(name)
        modules[name.rpartition(".")[2]] = sys.modules[name]
    dropped = _drop_privileges(uid, gid)
    if dropped:
        _limit(resource.RLIMIT_NPROC, 0)
    guard = _Guard()

    def alarm(signum, frame):
        if guard.armed:
            raise _CallTimeout()

    signal.signal(signal.SIGALRM, alarm)
    sink = _Sink()
    sys.stdout = sys.stderr = sink
    sys.addaudithook(guard.hook)
    try:
        result = run(job, guard, modules)
    except MemoryError:
        result = {"protocol": PROTOCOL, "fatal": "memory"}
    guard.armed = False
    result["output_bytes"] = sink.total
    result["privileges_dropped"] = dropped
    data = json.dumps(result, allow_nan=True).encode()
    view = memoryview(data)
    while view:
        view = view[os.write(result_fd, view):]
    os.close(result_fd)


if __name__ == "__main__":
    try:
        main(sys.argv)
    except BaseException as exc:  # the harness itself failed: say so on the real stderr
        os.write(2, f"harness: {type(exc).__name__}: {exc}\n".encode(errors="replace"))
        os._exit(3)
    os._exit(0)

"""The sandbox against hostile code run directly in the harness (bypassing the fill whitelist)."""
import os
import textwrap

import pytest

from grader import sandbox
from grader.paths import ROOT

FAST = sandbox.Limits(timeout_s=5, call_timeout_s=1, memory_mb=256)


def run(code, calls=([1.0],), function="f", limits=FAST, **extra):
    job = {"protocol": sandbox.PROTOCOL, "statements": [{"line": 1, "source": textwrap.dedent(code), "kind": "stmt"}], "function": function,
           "calls": [list(c) for c in calls], "call_timeout_s": limits.call_timeout_s, **extra}
    return sandbox.run(job, limits)


def only_call(result):
    assert result.status == "ok", result
    return result.payload["calls"][0]


def test_plain_values_come_back():
    result = run("def f(x):\n    return [x * 2, [0.5, 1]]")
    assert only_call(result) == {"ok": True, "value": [2.0, [0.5, 1]]}


def test_ratio_arguments_are_rebuilt_as_floats():
    result = run("def f(v):\n    return v", calls=[[{"$": "ratio", "counts": [1, 3, 999999], "denominator": 10**6}]])
    assert only_call(result)["value"] == [1 / 10**6, 3 / 10**6, 999999 / 10**6]


def test_reading_project_files_is_blocked_by_the_audit_hook():
    rubric = ROOT / "lessons" / "lesson07.rubric.yml"
    result = run(f"def f(x):\n    return print.__self__.open({str(rubric)!r}).read()")
    call = only_call(result)
    assert call["ok"] is False and "not permitted" in call["error"]["message"]
    assert "open" in result.payload["blocked"]


@pytest.mark.parametrize("body, event", [
    ("print.__self__.__import__('os').listdir('/')", "os.listdir"),
    ("print.__self__.__import__('sys').modules['os'].system('true')", "os.system"),
    ("print.__self__.__import__('sys').modules['os'].fork()", "os.fork"),
    ("print.__self__.__import__('sys').modules['os'].kill(print.__self__.__import__('sys').modules['os'].getppid(), 9)", "os.kill"),
    ("print.__self__.__import__('socket')", "import"),
    ("print.__self__.__import__('ctypes')", "import"),
    ("print.__self__.__import__('sys')._getframe(1).f_globals", "sys._getframe"),
    ("print.__self__.eval('1 + 1')", "compile"),
    ("print.__self__.__import__('sys').modules['os'].open('/tmp/grader-sandbox-probe', 65)", "open"),
])
def test_dangerous_operations_are_refused(body, event):
    result = run(f"def f(x):\n    return {body}")
    call = only_call(result)
    assert call["ok"] is False and call["error"]["type"] == "RuntimeError"
    assert event in result.payload["blocked"]
    assert not os.path.exists("/tmp/grader-sandbox-probe")


def test_imports_and_open_are_not_even_builtins():
    result = run("import os\ndef f(x):\n    return 1.0")
    assert result.payload["statements"][0]["ok"] is False
    assert result.payload["calls"][0]["error"]["type"] == "NameError"


def test_sys_exit_at_top_level_is_a_failed_statement_not_a_crash():
    result = run("def f(x):\n    return 1.0\nraise SystemExit(3)")
    assert result.status == "ok"
    assert result.payload["statements"][0]["error"]["type"] == "SystemExit"
    assert only_call(result) == {"ok": True, "value": 1.0}


def test_os_exit_is_a_crash_without_a_result():
    result = run("def f(x):\n    return print.__self__.__import__('sys').modules['os']._exit(0)")
    assert result.status == "crash" and "without a result" in result.message


def test_lying_objects_are_refused():
    code = """
    class Liar(float):
        def __eq__(self, other): return True
        def __float__(self): return 0.5
    class Weird:
        def __eq__(self, other): return True
        def __float__(self): return 0.5
        def __len__(self): return 2
    class LyingList(list):
        def __iter__(self): return iter([0.5, [1.0, 0.0]])
    def f(kind):
        return [Liar(0.1), Weird(), LyingList([1, 2]), True][kind]
    """
    result = run(code, calls=[[0], [1], [2], [3]])
    calls = result.payload["calls"]
    assert [c["ok"] for c in calls] == [False, False, False, True]
    assert "unsupported type Liar" in calls[0]["bad"] and "Weird" in calls[1]["bad"] and "LyingList" in calls[2]["bad"]
    assert calls[3]["value"] is True  # bools come back as bools; the grader's checks reject them as numbers


def test_output_flood_is_counted_not_kept():
    result = run("def f(x):\n    print('x' * 50_000_000)\n    return 1.0")
    assert only_call(result) == {"ok": True, "value": 1.0}
    assert result.payload["output_bytes"] >= 50_000_000


def test_python_infinite_loop_hits_the_per_call_alarm():
    result = run("def f(x):\n    while True:\n        pass", calls=[[1.0], [2.0]])
    assert [c["error"]["type"] for c in result.payload["calls"]] == ["Timeout", "Timeout"]


def test_c_level_infinite_loop_hits_the_wall_clock():
    limits = sandbox.Limits(timeout_s=1.5, call_timeout_s=1, memory_mb=256)
    result = run("def f(x):\n    return sum(iter(int, 1))", limits=limits)
    assert result.status == "timeout"
    assert result.wall_s < 5


def test_memory_bomb_is_a_memory_error():
    result = run("def f(x):\n    return len([0] * 10**10)")
    assert result.payload["memory"] is True
    assert only_call(result)["error"]["type"] == "MemoryError"


def test_huge_return_value_is_refused():
    result = run("def f(x):\n    return [0.5] * 300_000")
    assert "longer than" in only_call(result)["bad"]


def test_huge_ints_are_refused():
    result = run("def f(x):\n    return 10 ** 400")
    assert only_call(result)["bad"] == "int too large"


@pytest.mark.skipif(os.geteuid() != 0, reason="privileges are only dropped when the grader runs as root")
def test_root_drops_to_nobody_and_cannot_fork():
    result = run("def f(x):\n    return 1.0")
    assert result.payload["privileges_dropped"] is True


def test_garbage_from_the_child_is_a_crash(monkeypatch, tmp_path):
    fake = tmp_path / "fake_harness.py"
    fake.write_text("import os, sys\nos.write(int(sys.argv[1]), b'{not json')\n")
    monkeypatch.setattr(sandbox, "HARNESS", fake)
    result = run("def f(x):\n    return 1.0")
    assert result.status == "crash" and "not valid JSON" in result.message


def test_oversized_result_is_a_crash(monkeypatch, tmp_path):
    fake = tmp_path / "fake_harness.py"
    fake.write_text("import os, sys\nfd = int(sys.argv[1])\nfor _ in range(100):\n    os.write(fd, b'[' * 1_000_000)\n")
    monkeypatch.setattr(sandbox, "HARNESS", fake)
    result = run("def f(x):\n    return 1.0", limits=sandbox.Limits(timeout_s=5, max_result_bytes=2_000_000))
    assert result.status == "crash" and "larger than" in result.message


@pytest.mark.parametrize("payload, problem", [
    ([], "protocol"),
    ({"protocol": sandbox.PROTOCOL, "statements": [], "calls": [{"ok": True}], "memory": False, "blocked": []}, "no value"),
    ({"protocol": sandbox.PROTOCOL, "statements": [{"ok": False}], "calls": [], "memory": False, "blocked": []}, "no error"),
    ({"protocol": sandbox.PROTOCOL, "statements": [], "calls": [], "memory": "no", "blocked": []}, "memory"),
    ({"protocol": sandbox.PROTOCOL, "statements": [], "calls": [{"ok": False, "error": {"type": 1}}], "memory": False, "blocked": []},
     "neither"),
])
def test_validate_rejects_malformed_results(payload, problem):
    assert problem in sandbox.validate(payload)


def test_calls_after_the_run_budget_are_skipped_not_a_wall_clock_timeout():
    limits = sandbox.Limits(timeout_s=5, call_timeout_s=0.3, memory_mb=256)
    result = run("def f(x):\n    while True:\n        pass", calls=[[1.0]] * 8, limits=limits, run_budget_s=0.5)
    assert result.status == "ok"
    kinds = [c["error"]["type"] for c in result.payload["calls"]]
    assert kinds[0] == "Timeout" and kinds[-1] == "Skipped" and set(kinds) == {"Timeout", "Skipped"}
    assert kinds.count("Timeout") <= 3

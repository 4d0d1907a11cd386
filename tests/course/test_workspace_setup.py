"""scripts/setup.sh: Quarto is opt-in, its attempt is logged with one clear line, nothing is
installed twice, and a real install failure is not mistaken for Quarto's (issue 11 point 8, issue 14).

The environment's Python is a stand-in that records each call, so the script's logic runs for real
without installing anything."""
import os
import subprocess
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
FAKE_PYTHON = """#!/usr/bin/env bash
echo "$*" >> "$CALLS"
case "$*" in
  *requirements-book.txt*) echo "Traceback (most recent call last):"; for i in $(seq 100); do echo "  build step $i"; done
                           [ "${QUARTO_OK:-0}" = 1 ] && exit 0; exit 1 ;;
  *requirements-core.txt*) [ "${CORE_FAILS:-0}" = 1 ] && { echo "ERROR: No matching distribution found for torch" >&2; exit 1; } ;;
esac
exit 0
"""


def setup(tmp_path, **env):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(FAKE_PYTHON, encoding="utf-8")
    python.chmod(0o755)
    calls = tmp_path / "calls"
    run = subprocess.run(["bash", str(ROOT / "scripts" / "setup.sh")], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "VENV": str(venv), "CALLS": str(calls), **env})
    return run, venv, calls.read_text(encoding="utf-8").splitlines() if calls.exists() else []


def test_quarto_is_not_attempted_unless_asked(tmp_path):
    run, venv, calls = setup(tmp_path)
    assert run.returncode == 0, run.stderr
    assert not [c for c in calls if "requirements-book" in c]
    assert len([c for c in calls if "requirements-core" in c]) == 1
    assert "quarto-cli" not in (venv / "requirements-core.txt").read_text(encoding="utf-8")
    assert (venv / ".installed").exists() and "Quarto" not in run.stdout + run.stderr


def test_a_failed_quarto_attempt_is_one_line_and_a_log(tmp_path):
    run, venv, calls = setup(tmp_path, QUARTO="1")
    assert run.returncode == 0, run.stderr
    output = (run.stdout + run.stderr).splitlines()
    quarto = [line for line in output if "Quarto" in line]
    assert len(quarto) == 1 and str(venv / "quarto-install.log") in quarto[0]
    assert "Traceback" not in run.stdout + run.stderr and len(output) <= 3
    assert "build step 100" in (venv / "quarto-install.log").read_text(encoding="utf-8")
    assert len([c for c in calls if "requirements-core" in c]) == 1     # no second install of everything
    assert len([c for c in calls if "requirements-book" in c]) == 1


def test_a_successful_quarto_install_says_so(tmp_path):
    run, venv, _ = setup(tmp_path, QUARTO="1", QUARTO_OK="1")
    assert run.returncode == 0 and "Quarto installed" in run.stdout


def test_a_real_install_failure_stops_with_pips_own_words(tmp_path):
    run, venv, calls = setup(tmp_path, QUARTO="1", CORE_FAILS="1")
    assert run.returncode != 0
    assert "No matching distribution found for torch" in run.stderr and "Quarto" not in run.stdout + run.stderr
    assert not (venv / ".installed").exists() and not [c for c in calls if "requirements-book" in c]

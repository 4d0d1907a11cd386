"""`python -m grader`: run from the project's environment.

The tooling needs the packages in requirements.txt. When they are missing from the Python that
was used (a system `python3`, say) and the project's `.venv` exists, the command is re-run with
that environment's Python; otherwise it says how to set it up instead of printing a traceback.
Only those packages are looked for, before anything runs: a ModuleNotFoundError raised later (a
grader bug, a typo'd import) is a real error and keeps its traceback.
"""
import importlib.util
import os
import sys
from pathlib import Path

VENV_PYTHON = Path(__file__).resolve().parents[1] / ".venv" / "bin" / "python"
REQUIRED = ("yaml", "rich", "markdown_it", "nbformat", "nbclient")   # import names of requirements.txt's tooling


def missing_packages() -> list[str]:
    return [name for name in REQUIRED if importlib.util.find_spec(name) is None]


def main() -> int:
    missing = missing_packages()
    if missing:
        if VENV_PYTHON.is_file() and Path(sys.prefix).resolve() != VENV_PYTHON.parents[1].resolve():
            # Keep the isolation the caller asked for: under -I (CI grading) the working directory must
            # not reach sys.path in the re-run either, or a submission's yaml.py would be imported.
            flags = ["-I"] if sys.flags.isolated else (["-P"] if getattr(sys.flags, "safe_path", False) else [])
            os.execv(str(VENV_PYTHON), [str(VENV_PYTHON), *flags, "-m", "grader", *sys.argv[1:]])
        print(f"error: the Python package(s) {', '.join(missing)} are missing from {sys.executable}; "
              "run `make setup` and use .venv/bin/python (see README)", file=sys.stderr)
        return 2
    from .cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    sys.exit(main())

"""`python -m grader`: run from the project's environment.

The tooling needs the packages in requirements.txt. When they are missing from the Python that
was used (a system `python3`, say) and the project's `.venv` exists, the command is re-run with
that environment's Python; otherwise it says how to set it up instead of printing a traceback.
"""
import os
import sys
from pathlib import Path

VENV_PYTHON = Path(__file__).resolve().parents[1] / ".venv" / "bin" / "python"

try:
    from .cli import main

    sys.exit(main())
except ModuleNotFoundError as exc:
    missing = exc.name
    if VENV_PYTHON.is_file() and Path(sys.prefix).resolve() != VENV_PYTHON.parents[1].resolve():
        os.execv(str(VENV_PYTHON), [str(VENV_PYTHON), "-m", "grader", *sys.argv[1:]])
    print(f"error: the Python package {missing!r} is missing from {sys.executable}; "
          "run `make setup` and use .venv/bin/python (see README)", file=sys.stderr)
    sys.exit(2)

"""`python -m grader` in the student release: say how to install the requirements instead of
printing a traceback when a package is missing."""
import sys

try:
    from .cli import main

    sys.exit(main())
except ModuleNotFoundError as exc:
    if exc.name and exc.name.split(".")[0] == "grader":
        raise
    print(f"error: the Python package {exc.name!r} is missing from {sys.executable}; "
          "run: python -m venv .venv && .venv/bin/pip install -r requirements.txt (see README.md)", file=sys.stderr)
    sys.exit(2)

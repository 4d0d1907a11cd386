"""Run specdec's Triton kernel tests on CPU through the Triton interpreter.

TRITON_INTERPRET is read when `@triton.jit` decorates a function (triton's own library functions
are decorated when triton is first imported) and again at some launches, so:
- at collection, before anything else imports triton, we import the kernel with the variable set;
- each specdec test then runs with TRITON_INTERPRET=1 (autouse fixture), and the variable is
  restored afterwards, so tests elsewhere and their subprocesses see the environment unchanged.
CI may simply set TRITON_INTERPRET=1 for the whole run; that works too.
"""

import importlib.util
import sys

import pytest

from specdec_cases import import_triton_kernel_interpreted


if importlib.util.find_spec("triton") is not None and "triton" not in sys.modules:
    import_triton_kernel_interpreted()


@pytest.fixture(autouse=True)
def _triton_interpreter_env(monkeypatch):
    kernel = sys.modules.get("specdec.triton_kernel")
    if kernel is not None and kernel.INTERPRETED:
        monkeypatch.setenv("TRITON_INTERPRET", "1")
    yield

"""Which way `backend="triton"` would run here, without importing triton's kernels.

The one home of Triton interpreter detection in this project: `triton_interpreter_enabled()`
(tests, benchmarks and the lesson's GPU cell use it), built on `is_interpreted`, which asks
triton's own `InterpretedFunction` class rather than comparing type names.
"""

from __future__ import annotations

import importlib.util
import os
import sys

import torch

__all__ = ["triton_mode", "triton_available", "triton_interpreter_enabled", "is_interpreted"]


def is_interpreted(fn) -> bool:
    """True when fn (a `@triton.jit` function, or one of triton.language's) is in interpreter mode.

    Raises RuntimeError when this triton no longer has `triton.runtime.interpreter.InterpretedFunction`
    (detection broke with a triton upgrade: say so rather than guess).
    """
    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError as error:  # pragma: no cover - depends on the installed triton
        raise RuntimeError(f"cannot detect Triton's interpreter mode with this triton ({error}); "
                           "specdec.backends.is_interpreted needs updating") from error
    return isinstance(fn, InterpretedFunction)


def triton_interpreter_enabled() -> bool:
    """Whether specdec's Triton kernel runs (or, once imported, will run) in Triton's interpreter.

    The interpreter is chosen when triton is first imported (that is when `@triton.jit` reads
    TRITON_INTERPRET, for triton's own library functions too); once imported, what was chosen
    is reported, whatever the variable says now. Before that, TRITON_INTERPRET=1 decides.
    Importing nothing, this never loads triton. False when triton is not installed.
    """
    if importlib.util.find_spec("triton") is None:
        return False
    kernel = sys.modules.get("specdec.triton_kernel")
    if kernel is not None:
        return bool(kernel.INTERPRETED)
    language = sys.modules.get("triton.language")
    if language is not None:
        return is_interpreted(language.max)
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def triton_mode() -> str:
    """"cuda" (compiled for a GPU), "interpreter" (CPU tensors, TRITON_INTERPRET=1) or "unavailable"."""
    if importlib.util.find_spec("triton") is None:
        return "unavailable"
    if triton_interpreter_enabled():
        return "interpreter"
    if torch.cuda.is_available():
        return "cuda"
    return "unavailable"


def triton_available() -> bool:
    """True when `rejection_sample(..., backend="triton")` can run in this process."""
    return triton_mode() != "unavailable"

"""Which way `backend="triton"` would run here, without importing triton's kernels."""

from __future__ import annotations

import importlib.util
import os
import sys

import torch

__all__ = ["triton_mode", "triton_available"]


def triton_mode() -> str:
    """"cuda" (compiled for a GPU), "interpreter" (CPU tensors, TRITON_INTERPRET=1) or "unavailable".

    The interpreter is chosen when triton is first imported (that is when `@triton.jit` reads
    TRITON_INTERPRET, for triton's own library functions too); once imported, what was chosen
    is reported, whatever the variable says now. Importing nothing, this never loads triton.
    """
    if importlib.util.find_spec("triton") is None:
        return "unavailable"
    kernel = sys.modules.get("specdec.triton_kernel")
    language = sys.modules.get("triton.language")
    if kernel is not None:
        interpreted = kernel.INTERPRETED
    elif language is not None:
        interpreted = type(language.max).__name__ == "InterpretedFunction"
    else:
        interpreted = os.environ.get("TRITON_INTERPRET", "0") == "1"
    if interpreted:
        return "interpreter"
    if torch.cuda.is_available():
        return "cuda"
    return "unavailable"


def triton_available() -> bool:
    """True when `rejection_sample(..., backend="triton")` can run in this process."""
    return triton_mode() != "unavailable"

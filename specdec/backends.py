"""Which way `backend="triton"` would run here, without importing triton's kernels."""

from __future__ import annotations

import importlib.util
import os
import sys

import torch

__all__ = ["triton_mode", "triton_available"]


def triton_mode() -> str:
    """"cuda" (compiled for a GPU), "interpreter" (CPU tensors, TRITON_INTERPRET=1) or "unavailable".

    The interpreter is decided when `specdec.triton_kernel` is first imported (that is when
    `@triton.jit` reads TRITON_INTERPRET); once imported, its choice is reported.
    """
    if importlib.util.find_spec("triton") is None:
        return "unavailable"
    kernel = sys.modules.get("specdec.triton_kernel")
    interpreted = kernel.INTERPRETED if kernel is not None else os.environ.get("TRITON_INTERPRET", "0") == "1"
    if interpreted:
        return "interpreter"
    if torch.cuda.is_available():
        return "cuda"
    return "unavailable"


def triton_available() -> bool:
    """True when `rejection_sample(..., backend="triton")` can run in this process."""
    return triton_mode() != "unavailable"

"""specdec: the lesson's speculative-decoding library.

- `reference`: the single-step rule in float64 numpy and exact enumerators (the oracle);
- `sampler`: `rejection_sample`, the batched ragged verifier, and its torch backend;
- `triton_kernel`: the same verifier as a Triton kernel (imported only when used);
- `logits`: `verify_from_logits`, temperature / top-k / top-p / greedy and per-request seeds;
- `rng`: counter-based random numbers keyed by (seed, position), shared by both backends.

Importing this package does not import triton (nor numpy: `reference` loads on first use).
"""

import importlib

from specdec.backends import triton_available, triton_interpreter_enabled, triton_mode
from specdec.logits import process_logits, verify_from_logits
from specdec.sampler import SUM_TOLERANCE, rejection_sample, sum_tolerance

__all__ = [
    "rejection_sample",
    "verify_from_logits",
    "process_logits",
    "triton_available",
    "triton_mode",
    "triton_interpreter_enabled",
    "sum_tolerance",
    "reference",
    "SUM_TOLERANCE",
]


def __getattr__(name):
    if name == "reference":  # numpy-only oracle, loaded on first use
        return importlib.import_module("specdec.reference")
    raise AttributeError(f"module 'specdec' has no attribute {name!r}")

"""Scratch buffers reused across calls, so the torch backend's block loop allocates nothing.

A fresh CPU buffer of a few MB is handed out by the allocator as new pages, and the first
write to each 4 KiB page is a minor page fault: at V = 128256 the block temporaries of one
call cost ~18,000 faults, more time than the arithmetic that fills them. `buffer` keeps one
flat tensor per (name, dtype, device) and thread, grows it when a larger view is asked for,
and returns a view of it: contents are garbage, and the view is valid until the next request
for the same name in the same thread. Nothing returned to a caller of `rejection_sample`
aliases these buffers (its outputs are allocated fresh).

Memory held: what the largest call asked for, per thread (about 6 block-sized buffers: with
the sampler's default block of 2**20 elements, ~22 MB for float32 rows); `release()` frees it.
"""

from __future__ import annotations

import math
import threading

import torch

__all__ = ["buffer", "release", "held_bytes"]

_local = threading.local()


def _cache() -> dict:
    cache = getattr(_local, "buffers", None)
    if cache is None:
        cache = _local.buffers = {}
    return cache


def buffer(name: str, shape: tuple[int, ...], dtype: torch.dtype, device: torch.device | str) -> torch.Tensor:
    """A contiguous tensor of `shape` (uninitialised), a view of this thread's buffer `name`."""
    device = torch.device(device)
    n = math.prod(shape)
    key = (name, dtype, device)
    cache = _cache()
    flat = cache.get(key)
    if flat is None or flat.numel() < n:
        flat = cache[key] = torch.empty(n, dtype=dtype, device=device)
    return flat[:n].view(shape)


def release() -> None:
    """Drop this thread's buffers (the next call allocates, and faults in, new ones)."""
    _cache().clear()


def held_bytes() -> int:
    """Bytes this thread's buffers hold."""
    return sum(t.numel() * t.element_size() for t in _cache().values())

"""Verification from logits, as a serving engine receives them: per-request temperature, top-k
and top-p, greedy requests, and per-request seeds.

The processing (temperature, then top-k, then top-p, then softmax) is applied identically to the
target logits, giving p, and to the draft logits, giving q: the drafter must have drawn its
tokens from that same processed q, otherwise a draft token can have q(x) = 0 and
`rejection_sample` refuses it.

Greedy requests (temperature 0) keep a draft iff it equals argmax p and emit argmax p. They go
through the same sampler: p becomes one-hot at argmax p and q one-hot at the draft token, so
u * 1 < p(x) holds iff x = argmax p, and the residual max(p - q, 0) is one-hot at argmax p.

Random draws depend only on (seed, absolute position) (`rng.py`), so a request's tokens do not
change with the batch it is in, on either backend.
"""

from __future__ import annotations

from typing import Optional, Sequence, Union

import torch

from specdec.sampler import rejection_sample

__all__ = ["process_logits", "verify_from_logits"]

_PerRequest = Union[torch.Tensor, Sequence[float], float, None]


def _per_request(value, B: int, name: str, dtype, device) -> Optional[torch.Tensor]:
    if value is None:
        return None
    t = torch.as_tensor(value, dtype=dtype, device=device)
    if t.dim() == 0:
        t = t.expand(B)
    if t.shape != (B,):
        raise ValueError(f"{name} must be a scalar or have one entry per request [B] = {(B,)}, got {tuple(t.shape)}")
    return t


def process_logits(
    logits: torch.Tensor,
    temperature: torch.Tensor,
    top_k: Optional[torch.Tensor] = None,
    top_p: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """Probabilities after temperature, top-k and top-p, float32 [R, V]; one row per logits row.

    logits: [R, V]; temperature: [R] (0 = greedy: the row becomes one-hot at its argmax);
    top_k: int [R], k <= 0 or k >= V disables it; tokens tied with the k-th largest are kept;
    top_p: float [R] in (0, 1], 1 disables it; keeps the smallest set of most likely tokens
    whose mass reaches top_p (the most likely token always stays), ties broken by token index.
    """
    if logits.dim() != 2:
        raise ValueError(f"logits must be [R, V], got shape {tuple(logits.shape)}")
    R, V = logits.shape
    if temperature.shape != (R,) or (temperature < 0).any() or torch.isnan(temperature).any():
        raise ValueError("temperature must be [R] and >= 0")
    if top_p is not None and ((top_p <= 0).any() or (top_p > 1).any()):
        raise ValueError("top_p must lie in (0, 1]")
    greedy = temperature == 0  # [R]
    x = logits.float() / torch.where(greedy, 1.0, temperature.float())[:, None]  # [R, V]
    if top_k is not None or top_p is not None:
        sorted_x, order = torch.sort(x, dim=-1, descending=True, stable=True)  # [R, V]
        keep = torch.ones_like(sorted_x, dtype=torch.bool)  # [R, V] in sorted order
        if top_k is not None:
            k = top_k.to(torch.int64)
            k = torch.where((k <= 0) | (k >= V), V, k)  # [R]
            kth = sorted_x.gather(1, (k - 1)[:, None])  # [R, 1]
            keep &= sorted_x >= kth
        if top_p is not None:
            probs_sorted = torch.softmax(sorted_x.masked_fill(~keep, float("-inf")), dim=-1)  # [R, V]
            mass_before = torch.cumsum(probs_sorted, dim=-1) - probs_sorted  # [R, V]
            keep &= mass_before < top_p.float()[:, None]
        keep_unsorted = torch.zeros_like(keep).scatter_(1, order, keep)  # [R, V]
        x = x.masked_fill(~keep_unsorted, float("-inf"))
    probs = torch.softmax(x, dim=-1)  # [R, V]
    if greedy.any():
        one_hot = torch.zeros_like(probs)
        one_hot.scatter_(1, logits.argmax(dim=-1, keepdim=True), 1.0)
        probs = torch.where(greedy[:, None], one_hot, probs)
    return probs


def verify_from_logits(
    target_logits: torch.Tensor,
    draft_logits: Optional[torch.Tensor],
    draft_token_ids: torch.Tensor,
    num_draft_tokens: torch.Tensor,
    *,
    temperature: _PerRequest,
    top_k: _PerRequest = None,
    top_p: _PerRequest = None,
    seeds: torch.Tensor,
    positions: Optional[torch.Tensor] = None,
    backend: str = "torch",
) -> tuple[torch.Tensor, torch.Tensor]:
    """Verify drafts from raw logits; returns (token_ids [B, max_i k_i + 1], num_emitted [B]).

    target_logits: [sum_i (k_i + 1), V], laid out as in `rejection_sample`;
    draft_logits: [sum_i k_i, V], or None for one-hot drafts (n-gram, greedy drafters);
    draft_token_ids: int [sum_i k_i]; num_draft_tokens: int [B];
    temperature: [B] (or a scalar), 0 = greedy; top_k: int [B] or None; top_p: float [B] or None;
    seeds: int64 [B], one per request; positions: int64 [B], absolute position of the token
    each request's first row decides (default 0): draws depend only on (seed, position);
    backend: "torch" or "triton", as in `rejection_sample`.
    """
    device = target_logits.device
    B = num_draft_tokens.numel()
    k = num_draft_tokens.to(device=device, dtype=torch.int64)  # [B]
    temperature = _per_request(temperature, B, "temperature", torch.float32, device)
    top_k = _per_request(top_k, B, "top_k", torch.int64, device)
    top_p = _per_request(top_p, B, "top_p", torch.float32, device)
    if temperature is None:
        raise ValueError("temperature is required (0 for greedy)")
    seeds = torch.as_tensor(seeds, device=device)
    N = int(k.sum())
    if target_logits.dim() != 2 or target_logits.shape[0] != N + B:
        raise ValueError(f"target_logits must be [sum_i (k_i + 1), V] = [{N + B}, V], got {tuple(target_logits.shape)}")
    if draft_token_ids.numel() != N:
        raise ValueError(f"draft_token_ids has {draft_token_ids.numel()} entries, expected sum_i k_i = {N}")
    if draft_logits is not None and tuple(draft_logits.shape) != (N, target_logits.shape[1]):
        raise ValueError(f"draft_logits must be [sum_i k_i, V] = {(N, target_logits.shape[1])}, "
                         f"got {tuple(draft_logits.shape)}")
    V = target_logits.shape[1]
    if N and (draft_token_ids.min() < 0 or draft_token_ids.max() >= V):
        raise ValueError(f"draft_token_ids must lie in the vocabulary [0, {V})")

    def expand(t: Optional[torch.Tensor], rows_per_request: torch.Tensor) -> Optional[torch.Tensor]:
        return None if t is None else torch.repeat_interleave(t, rows_per_request)

    p = process_logits(target_logits, expand(temperature, k + 1), expand(top_k, k + 1), expand(top_p, k + 1))
    q = None
    if draft_logits is not None:
        q = process_logits(draft_logits, expand(temperature, k), expand(top_k, k), expand(top_p, k))
        greedy_rows = expand(temperature == 0, k)  # [N]
        if greedy_rows.any():  # greedy: q is one-hot at the draft token, whatever the drafter's logits
            one_hot = torch.zeros_like(q)
            one_hot.scatter_(1, draft_token_ids.to(device=device, dtype=torch.int64)[:, None], 1.0)
            q = torch.where(greedy_rows[:, None], one_hot, q)
    return rejection_sample(p, q, draft_token_ids, num_draft_tokens, seeds=seeds, positions=positions,
                            backend=backend)

"""Verification from logits, as a serving engine receives them: per-request temperature, top-k
and top-p, greedy requests, and per-request seeds.

The processing (temperature, then top-k, then top-p, then softmax) is applied identically to the
target logits, giving p, and to the draft logits, giving q: the drafter must have drawn its
tokens from that same processed q, otherwise a draft token can have q(x) = 0 and
`rejection_sample` refuses it.

Greedy requests (temperature below GREEDY_TEMPERATURE = 1e-5, as in vLLM, 0 included) keep a
draft iff it equals the argmax of the target logits and emit that argmax (the first index on
ties): an argmax path that reads each of their target rows once, with no random numbers and no
softmax. (It is what the sampler would do with p one-hot at the argmax and q one-hot at the
draft: accept iff x = argmax p, residual one-hot at argmax p.) Their draft logits are not used.

Bad logits raise for greedy and sampled requests alike, naming the request and the row: a NaN
or +inf entry, or a row that is -inf everywhere (nothing can be emitted); -inf entries are
otherwise allowed (masked tokens). A sampled request whose largest logit / temperature overflows
float32 raises too.

Random draws depend only on (seed, absolute position) (`rng.py`), so a request's tokens do not
change with the batch it is in, on either backend.
"""

from __future__ import annotations

from typing import Optional, Sequence, Union

import torch

from specdec.sampler import rejection_sample

__all__ = ["process_logits", "verify_from_logits", "GREEDY_TEMPERATURE"]

GREEDY_TEMPERATURE = 1e-5
"""Temperatures below this are greedy (vLLM's threshold): logits / T would overflow or be an argmax anyway."""

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

    logits: [R, V]; temperature: [R] (below GREEDY_TEMPERATURE, 0 included, = greedy: the row
    becomes one-hot at its argmax);
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
    greedy = temperature < GREEDY_TEMPERATURE  # [R]
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
    if bool((temperature < 0).any()) or bool(torch.isnan(temperature).any()):
        raise ValueError("temperature must be >= 0 (below GREEDY_TEMPERATURE = greedy)")
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

    arange_b = torch.arange(B, device=device)
    row_req_t = torch.repeat_interleave(arange_b, k + 1, output_size=N + B)  # [N + B] request of each row
    row_req_d = torch.repeat_interleave(arange_b, k, output_size=N)  # [N]
    _check_logits("target_logits", target_logits, row_req_t, k + 1)
    if draft_logits is not None:
        _check_logits("draft_logits", draft_logits, row_req_d, k)
    greedy = temperature < GREEDY_TEMPERATURE  # [B]
    sampled = ~greedy
    if bool(sampled.any()):
        t_rows = target_logits[sampled[row_req_t]].float()
        t_max = t_rows.amax(dim=1) / torch.repeat_interleave(temperature[sampled], (k + 1)[sampled])
        if not bool(torch.isfinite(t_max).all()):
            r = int(torch.nonzero(~torch.isfinite(t_max))[0, 0])
            i = int(torch.nonzero(sampled)[:, 0][torch.repeat_interleave(
                torch.arange(int(sampled.sum()), device=device), (k + 1)[sampled])[r]])
            raise ValueError(f"request {i}: target logits / temperature overflow float32 "
                             f"(temperature {float(temperature[i]):.3g}); use a larger temperature or 0 for greedy")

    K = int(k.max()) if B else 0
    tokens = torch.full((B, K + 1), -1, dtype=torch.int64, device=device)
    num_emitted = torch.empty(B, dtype=torch.int64, device=device)
    ids = draft_token_ids.to(device=device, dtype=torch.int64)
    cu = torch.zeros(B + 1, dtype=torch.int64, device=device)
    torch.cumsum(k, 0, out=cu[1:])
    if bool(greedy.any()):
        _greedy_path(target_logits, ids, k, cu, greedy, row_req_t, row_req_d, tokens, num_emitted)
    if bool(sampled.any()):
        sel = torch.nonzero(sampled)[:, 0]
        t_sel = sampled[row_req_t]
        d_sel = sampled[row_req_d]
        sub = lambda t: None if t is None else t[sel]  # noqa: E731
        sub_k = k[sel]
        p = process_logits(target_logits[t_sel], torch.repeat_interleave(temperature[sel], sub_k + 1),
                           _expand(sub(top_k), sub_k + 1), _expand(sub(top_p), sub_k + 1))
        q = None
        if draft_logits is not None:
            q = process_logits(draft_logits[d_sel], torch.repeat_interleave(temperature[sel], sub_k),
                               _expand(sub(top_k), sub_k), _expand(sub(top_p), sub_k))
        sub_tokens, sub_n = rejection_sample(p, q, ids[d_sel], sub_k, seeds=seeds[sel],
                                             positions=None if positions is None else torch.as_tensor(positions, device=device)[sel],
                                             backend=backend)
        tokens[sel, : sub_tokens.shape[1]] = sub_tokens
        num_emitted[sel] = sub_n
    return tokens, num_emitted


def _expand(t: Optional[torch.Tensor], rows_per_request: torch.Tensor) -> Optional[torch.Tensor]:
    return None if t is None else torch.repeat_interleave(t, rows_per_request)


def _check_logits(name: str, logits: torch.Tensor, row_req: torch.Tensor, rows_per_request: torch.Tensor) -> None:
    """NaN, +inf and all -inf rows raise, naming the request (one reduction per row)."""
    if not logits.shape[0]:
        return
    row_max = logits.amax(dim=1)  # NaN propagates; +inf if any; -inf iff the whole row is -inf
    bad = torch.isnan(row_max) | (row_max == float("inf")) | (row_max == float("-inf"))
    if bool(bad.any()):
        r = int(torch.nonzero(bad)[0, 0])
        i = int(row_req[r])
        first = int(torch.nonzero(row_req == i)[0, 0])
        what = ("NaN" if bool(torch.isnan(logits[r]).any()) else "+inf" if bool((logits[r] == float("inf")).any())
                else "-inf everywhere")
        raise ValueError(f"request {i}: {name} row {r - first} of its {int(rows_per_request[i])} (row {r} of the "
                         f"batch) has {what} logits")


def _greedy_path(target_logits, ids, k, cu, greedy, row_req_t, row_req_d, tokens, num_emitted):
    """Greedy requests: accept while the draft equals the target argmax, then emit the argmax."""
    device = target_logits.device
    g_rows = greedy[row_req_t]  # [N + B]
    argmax = torch.full((target_logits.shape[0],), -1, dtype=torch.int64, device=device)
    argmax[g_rows] = target_logits[g_rows].argmax(dim=1)  # first index on ties
    N = ids.numel()
    B = k.numel()
    K = tokens.shape[1] - 1
    arange_n = torch.arange(N, device=device)
    local = arange_n - cu[row_req_d]
    match = (ids == argmax[arange_n + row_req_d]) & greedy[row_req_d]  # [N]
    grid = torch.zeros(B, max(K, 1), dtype=torch.int64, device=device)
    grid[row_req_d, local] = match.to(torch.int64)
    n_acc = grid.cumprod(dim=1).sum(dim=1)  # [B]
    g = torch.nonzero(greedy)[:, 0]
    keep = greedy[row_req_d] & (local < n_acc[row_req_d])
    tokens[row_req_d[keep], local[keep]] = ids[keep]
    tokens[g, n_acc[g]] = argmax[cu[:-1][g] + g + n_acc[g]]
    num_emitted[g] = n_acc[g] + 1

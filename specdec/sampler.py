"""Batched, ragged rejection sampling for speculative decoding: the public entry point and its
torch backend, the oracle of the Triton kernel.

The rule (p = target, q = draft). Request i proposed k_i draft tokens x_1..x_k drawn from
q_1..q_k; the target scored them, giving k_i + 1 rows p_1..p_{k+1} (one per draft position,
then the bonus row). For j = 1..k: draw u ~ U[0, 1) and keep x_j while u * q_j(x_j) < p_j(x_j)
(that is u < p/q); at the first rejection emit a token from max(p_j - q_j, 0) and stop; if
every draft is kept, emit a bonus token from p_{k+1}. Either way the request emits
accepted + 1 tokens and their distribution is exactly the target's (see `reference.py`).

Sampling without a normalisation pass, the exponential race: with E(y) ~ Exp(1) i.i.d.,
argmax_y w(y) / E(y) is distributed proportionally to the weights w >= 0. We use it with
w = max(p - q, 0) (recovered token) or w = p (bonus). If w has no mass at all (only possible
when p <= q everywhere, i.e. rows that sum to slightly different totals), we fall back to p,
as `reference.residual` does.

Randomness comes from one of three places, chosen by keyword:
- `uniforms=` [sum k_i] and `noise=` [B, V]: explicit numbers, so that the backends can be
  compared bit for bit (noise row i is the Exp(1) noise of the one row request i samples);
- `seeds=` [B] (and `positions=` [B]): a counter-based hash of (seed, absolute position), see
  `rng.py`, so a request's tokens do not depend on the rest of the batch;
- `generator=`: a torch.Generator (or torch's default one).
"""

from __future__ import annotations

from typing import Callable, Optional

import torch

from specdec import rng as _rng

__all__ = ["rejection_sample", "SUM_TOLERANCE"]

SUM_TOLERANCE = 1e-3
"""Default tolerance on |sum_y p(y) - 1| (and for q) in the input checks."""

_FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
_INT_DTYPES = (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64)


# --------------------------------------------------------------------------------------------
# Input checks
# --------------------------------------------------------------------------------------------


def _check_prob_rows(name: str, probs: torch.Tensor, sum_tol: float) -> None:
    """Rows must be finite, non-negative and sum to 1 within sum_tol."""
    if probs.shape[0] == 0:
        return
    acc = torch.float64 if probs.dtype == torch.float64 else torch.float32  # float32 sums: ~1e-6 error
    row_sum = probs.sum(dim=-1, dtype=acc)  # [rows]; NaN/inf propagate
    row_min = probs.amin(dim=-1)  # [rows]; NaN propagates
    if torch.isnan(row_sum).any() or torch.isnan(row_min).any():
        row = int(torch.nonzero(torch.isnan(row_sum) | torch.isnan(row_min))[0, 0])
        raise ValueError(f"{name} has NaN probabilities (first in row {row})")
    if torch.isinf(row_sum).any():
        row = int(torch.nonzero(torch.isinf(row_sum))[0, 0])
        raise ValueError(f"{name} has infinite probabilities (first in row {row})")
    if (row_min < 0).any():
        row = int(torch.nonzero(row_min < 0)[0, 0])
        raise ValueError(f"{name} has negative probabilities (first in row {row}: min {float(row_min[row]):.3g})")
    bad = (row_sum - 1.0).abs() > sum_tol
    if bad.any():
        row = int(torch.nonzero(bad)[0, 0])
        raise ValueError(
            f"{name} row {row} sums to {float(row_sum[row]):.6f}, not 1 within sum_tol={sum_tol:g} "
            "(were logits passed instead of probabilities?)"
        )


def _validate(target_probs, draft_probs, draft_token_ids, num_draft_tokens, check_values, sum_tol):
    """Check the contract of `rejection_sample`; returns (B, N, V, cu) with cu [B + 1] int64."""
    for name, t in (("target_probs", target_probs), ("draft_token_ids", draft_token_ids),
                    ("num_draft_tokens", num_draft_tokens)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if target_probs.dtype not in _FLOAT_DTYPES:
        raise TypeError(f"target_probs must be a floating tensor, got {target_probs.dtype}")
    if target_probs.dim() != 2:
        raise ValueError(f"target_probs must be [sum_i (k_i + 1), V], got shape {tuple(target_probs.shape)}")
    if num_draft_tokens.dtype not in _INT_DTYPES or num_draft_tokens.dim() != 1:
        raise ValueError(f"num_draft_tokens must be a 1-D integer tensor [B], got {num_draft_tokens.dtype} "
                         f"of shape {tuple(num_draft_tokens.shape)}")
    if draft_token_ids.dtype not in _INT_DTYPES or draft_token_ids.dim() != 1:
        raise ValueError(f"draft_token_ids must be a 1-D integer tensor [sum_i k_i], got "
                         f"{draft_token_ids.dtype} of shape {tuple(draft_token_ids.shape)}")
    device = target_probs.device
    for name, t in (("draft_token_ids", draft_token_ids), ("num_draft_tokens", num_draft_tokens),
                    ("draft_probs", draft_probs)):
        if t is not None and t.device != device:
            raise ValueError(f"{name} is on {t.device} but target_probs is on {device}")
    if (num_draft_tokens < 0).any():
        raise ValueError("num_draft_tokens must be >= 0")
    B = num_draft_tokens.numel()
    k = num_draft_tokens.to(torch.int64)
    cu = torch.zeros(B + 1, dtype=torch.int64, device=device)
    torch.cumsum(k, dim=0, out=cu[1:])
    N = int(cu[-1])
    V = target_probs.shape[1]
    if V == 0:
        raise ValueError("the vocabulary is empty (V = 0)")
    if target_probs.shape[0] != N + B:
        raise ValueError(f"target_probs has {target_probs.shape[0]} rows, expected sum_i (k_i + 1) = {N + B} "
                         f"for num_draft_tokens summing to {N} over B = {B} requests")
    if draft_token_ids.numel() != N:
        raise ValueError(f"draft_token_ids has {draft_token_ids.numel()} entries, expected sum_i k_i = {N}")
    if draft_probs is not None:
        if not isinstance(draft_probs, torch.Tensor) or draft_probs.dtype not in _FLOAT_DTYPES:
            raise TypeError("draft_probs must be a floating torch.Tensor or None")
        if tuple(draft_probs.shape) != (N, V):
            raise ValueError(f"draft_probs must be [sum_i k_i, V] = {(N, V)}, got {tuple(draft_probs.shape)}")
    if check_values:
        if N and (draft_token_ids.min() < 0 or draft_token_ids.max() >= V):
            bad = int(torch.nonzero((draft_token_ids < 0) | (draft_token_ids >= V))[0, 0])
            raise ValueError(f"draft_token_ids[{bad}] = {int(draft_token_ids[bad])} is outside the vocabulary [0, {V})")
        _check_prob_rows("target_probs", target_probs, sum_tol)
        if draft_probs is not None:
            _check_prob_rows("draft_probs", draft_probs, sum_tol)
            if N:
                q_x = draft_probs.gather(1, draft_token_ids.to(torch.int64)[:, None])[:, 0]  # [N]
                if (q_x <= 0).any():
                    bad = int(torch.nonzero(q_x <= 0)[0, 0])
                    raise ValueError(f"draft token {int(draft_token_ids[bad])} (draft row {bad}) has q(x) = 0: "
                                     "it cannot have been drafted from draft_probs")
    return B, N, V, cu


def _check_randoms(uniforms, noise, N, B, V, device, check_values):
    if (uniforms is None) != (noise is None):
        raise ValueError("pass both uniforms= and noise= (explicit random numbers), or neither")
    if uniforms.shape != (N,) or noise.shape != (B, V):
        raise ValueError(f"uniforms must be [sum_i k_i] = {(N,)} and noise [B, V] = {(B, V)}, "
                         f"got {tuple(uniforms.shape)} and {tuple(noise.shape)}")
    if uniforms.device != device or noise.device != device:
        raise ValueError("uniforms and noise must be on the same device as target_probs")
    if check_values:
        if N and ((uniforms < 0).any() or (uniforms >= 1).any() or torch.isnan(uniforms).any()):
            raise ValueError("uniforms must lie in [0, 1)")
        if noise.numel() and not bool((noise > 0).all()):
            raise ValueError("noise must be Exp(1) draws: > 0 (+inf, from -log(0), is allowed) and not NaN")


# --------------------------------------------------------------------------------------------
# The torch backend
# --------------------------------------------------------------------------------------------


def _rejection_sample_torch(
    target_probs: torch.Tensor,  # [N + B, V]
    draft_probs: Optional[torch.Tensor],  # [N, V] or None (one-hot drafts)
    draft_token_ids: torch.Tensor,  # [N]
    num_draft_tokens: torch.Tensor,  # [B]
    cu: torch.Tensor,  # [B + 1] exclusive prefix sum of num_draft_tokens
    uniforms: torch.Tensor,  # [N] in [0, 1)
    noise_fn: Callable[[torch.Tensor], torch.Tensor],  # accepted counts [B] -> Exp(1) noise [B, V]
):
    """Vectorised torch twin of the Triton kernel: same arithmetic (float32), same tie-breaking.

    Memory traffic per line is noted in units of one [B, V] float32 matrix (BV4 bytes); the
    acceptance test itself touches only the gathered p(x), q(x).
    """
    device = target_probs.device
    B = num_draft_tokens.numel()
    N = draft_token_ids.numel()
    k = num_draft_tokens.to(torch.int64)  # [B]
    K = int(k.max()) if B else 0
    x = draft_token_ids.to(torch.int64)  # [N]
    arange_b = torch.arange(B, device=device)  # [B]
    arange_n = torch.arange(N, device=device)  # [N]

    # Acceptance test on gathered scalars only.
    req = torch.repeat_interleave(arange_b, k, output_size=N)  # [N] request of each draft
    local = arange_n - cu[req]  # [N] position j of each draft inside its request
    p_x = target_probs[arange_n + req, x].float()  # [N] target row of draft d is d + req
    q_x = draft_probs[arange_n, x].float() if draft_probs is not None else torch.ones_like(p_x)  # [N]
    accept = uniforms.float() * q_x < p_x  # [N]   u < p(x) / q(x)

    # Leading accepts per request: pad into [B, K], then cumulative product.
    grid = torch.zeros(B, K, dtype=torch.int64, device=device)  # [B, K]
    grid[req, local] = accept.to(torch.int64)
    n_acc = grid.cumprod(dim=1).sum(dim=1)  # [B]
    is_bonus = n_acc == k  # [B]

    # One row per request: the residual at the first rejection, or the bonus row. Large CPU
    # allocations cost page faults, so the [B, V] work is done in place on three buffers.
    p_rows = target_probs.index_select(0, cu[:-1] + arange_b + n_acc).float()  # [B, V]  r 1, w 1
    rejected = ~is_bonus  # [B]
    if draft_probs is not None and N:
        w = draft_probs.index_select(0, (cu[:-1] + n_acc).clamp(max=N - 1)).float()  # [B, V]  r 1, w 1
        torch.sub(p_rows, w, out=w).clamp_(min=0.0)  # [B, V] p - q: r 2, w 1; clamp: r 1, w 1
        if is_bonus.any():
            w[is_bonus] = p_rows[is_bonus]  # the bonus row races over p itself
    else:
        w = p_rows.clone()  # [B, V]  r 1, w 1
        if rejected.any():  # one-hot q: max(p - q, 0) is p with the draft token removed
            rows = arange_b[rejected]
            w[rows, x[cu[:-1][rows] + n_acc[rows]]] = 0.0

    # Exponential race: argmax_y w(y) / E(y), first index on ties.
    noise = noise_fn(n_acc)  # [B, V]  (generator: w 1, then log_ and neg_ r 2, w 2)
    best, token = w.div_(noise).max(dim=1)  # [B]  div: r 2, w 1; max: r 1
    if (best <= 0).any():  # no residual mass: race over p instead (see module docstring)
        empty = torch.nonzero(best <= 0)[:, 0]
        token[empty] = (p_rows[empty] / noise[empty]).max(dim=1).indices

    # Output: accepted drafts, then the recovered/bonus token, padded with -1.
    out = torch.full((B, K + 1), -1, dtype=torch.int64, device=device)  # [B, K + 1]
    keep = local < n_acc[req]  # [N]
    out[req[keep], local[keep]] = x[keep]
    out[arange_b, n_acc] = token
    return out, n_acc + 1


# --------------------------------------------------------------------------------------------
# The public entry point
# --------------------------------------------------------------------------------------------


def rejection_sample(
    target_probs: torch.Tensor,
    draft_probs: Optional[torch.Tensor],
    draft_token_ids: torch.Tensor,
    num_draft_tokens: torch.Tensor,
    *,
    generator: Optional[torch.Generator] = None,
    backend: str = "torch",
    seeds: Optional[torch.Tensor] = None,
    positions: Optional[torch.Tensor] = None,
    uniforms: Optional[torch.Tensor] = None,
    noise: Optional[torch.Tensor] = None,
    validate: bool = True,
    sum_tol: float = SUM_TOLERANCE,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Verify a batch of speculative drafts; returns (token_ids [B, max_i k_i + 1], num_emitted [B]).

    Args:
        target_probs: float [sum_i (k_i + 1), V]. Request i owns k_i rows for its draft
            positions followed by its bonus row, requests in batch order.
        draft_probs: float [sum_i k_i, V], or None for one-hot drafts (n-gram or greedy
            drafters: q(x) = 1 at the draft token, so acceptance is u < p(x) and the residual
            is p with x removed).
        draft_token_ids: int [sum_i k_i], the drafts of request 0, then request 1, ...
        num_draft_tokens: int [B], k_i >= 0 (k_i = 0: the request only samples its bonus row).
        generator: torch.Generator for the random draws (default: torch's global one).
        backend: "torch" (this module) or "triton" (`triton_kernel.py`): CUDA tensors on a GPU,
            or CPU tensors when TRITON_INTERPRET=1 was set before triton was first imported
            (`specdec.triton_mode()` says which applies).
        seeds: int64 [B] per-request seeds. Draws then depend only on (seed, position), so a
            request's tokens do not depend on the rest of the batch (see `rng.py`).
        positions: int64 [B], absolute position of the token decided by each request's first
            row (row j decides position positions[i] + j); default 0. Only with `seeds`.
        uniforms: float [sum_i k_i] in [0, 1), explicit acceptance draws (tests).
        noise: float [B, V] > 0, explicit Exp(1) noise for the one row each request samples
            (+inf allowed: that entry never wins).
        validate: check values as well as shapes (ids in range, probabilities finite,
            non-negative, rows summing to 1 within `sum_tol`, q(x) > 0). Needs a device sync;
            shapes, dtypes and devices are always checked.
        sum_tol: tolerance on each row's sum; default `SUM_TOLERANCE` = 1e-3.

    Returns:
        token_ids: int64 [B, max_i k_i + 1], the accepted drafts then the recovered or bonus
            token, padded with -1.
        num_emitted: int64 [B], accepted + 1.

    Arithmetic is float32 whatever the input dtype. Raises ValueError (or TypeError) with the
    offending row or token on bad input.
    """
    if backend not in ("torch", "triton"):
        raise ValueError(f"backend must be 'torch' or 'triton', got {backend!r}")
    B, N, V, cu = _validate(target_probs, draft_probs, draft_token_ids, num_draft_tokens, validate, sum_tol)
    device = target_probs.device
    explicit = uniforms is not None or noise is not None
    if explicit:
        if seeds is not None or generator is not None:
            raise ValueError("explicit uniforms/noise exclude seeds= and generator=")
        _check_randoms(uniforms, noise, N, B, V, device, validate)
    if seeds is not None:
        if generator is not None:
            raise ValueError("pass seeds= or generator=, not both")
        if not isinstance(seeds, torch.Tensor) or seeds.shape != (B,) or seeds.dtype not in _INT_DTYPES:
            raise ValueError(f"seeds must be an integer tensor [B] = {(B,)}")
        seeds = seeds.to(device=device, dtype=torch.int64)
    if positions is not None:
        if seeds is None:
            raise ValueError("positions= is only used with seeds=")
        if not isinstance(positions, torch.Tensor) or positions.shape != (B,) or positions.dtype not in _INT_DTYPES:
            raise ValueError(f"positions must be an integer tensor [B] = {(B,)}")
        positions = positions.to(device=device, dtype=torch.int64)
    elif seeds is not None:
        positions = torch.zeros(B, dtype=torch.int64, device=device)

    if backend == "triton":
        from specdec import triton_kernel  # imported lazily: it imports triton

        if not explicit and seeds is None:
            # The kernel draws its own numbers from (seed, position); take the seeds from the generator.
            seeds = torch.randint(0, 2**62, (B,), generator=generator,
                                  device=generator.device if generator is not None else "cpu").to(device)
            positions = torch.zeros(B, dtype=torch.int64, device=device)
        return triton_kernel.rejection_sample_triton(
            target_probs, draft_probs, draft_token_ids, cu,
            uniforms=uniforms, noise=noise, seeds=seeds, positions=positions,
        )

    if explicit:
        noise_fn = lambda n_acc: noise.float()  # noqa: E731
    elif seeds is not None:
        req = torch.repeat_interleave(torch.arange(B, device=device), num_draft_tokens.to(torch.int64), output_size=N)
        local = torch.arange(N, device=device) - cu[req]
        keys = _rng.request_keys(seeds)  # [B]
        uniforms = _rng.accept_uniforms(keys[req], positions[req] + local)  # [N]
        noise_fn = lambda n_acc: _rng.exponential_noise(_rng.noise_keys(keys, positions + n_acc), V)  # noqa: E731
    else:
        uniforms = torch.rand(N, generator=generator, device=device)  # [N] in [0, 1)
        # -log(U) with U in [0, 1): > 0 always (U = 0 gives +inf, a weight that never wins).
        noise_fn = lambda n_acc: torch.rand(B, V, generator=generator, device=device).log_().neg_()  # noqa: E731
    return _rejection_sample_torch(target_probs, draft_probs, draft_token_ids, num_draft_tokens, cu,
                                   uniforms, noise_fn)

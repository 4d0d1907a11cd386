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
- `generator=`: a torch.Generator (or torch's default one), which supplies one 64-bit seed
  per request for the same counter-based draws (so both backends use the same noise, with
  float32 resolution in the tail: see `rng.py` for the bias bound).

The torch backend works through blocks of R = 2**20 // V requests (8 at V = 128256): each
sampled row is gathered once into a reused buffer (`workspace.py`: no allocation, no page
faults), its noise is generated in place (never stored), and one division and one vectorised
minimum decide the race. With validate=True (the default; host reads are made anyway) it also
groups residual and bonus requests (bonus rows never read a draft row), computes the
logarithm of the noise only in the chunks of a row that can still win (`_bounded_min`: v <= E
bounds every score, so log1p runs on a few hundred entries instead of V), and reruns the race
over p only in a block where some residual is empty. With validate=False it issues no host
read: every row gets the full race and the rerun.

Cost on the course's 2-core CPU (B = 64, k = 4, V = 128256 float32, `benchmarks/bench_cpu.py`,
ratios within one run). Quiet machine: one read of all input rows 8.6-11 ms, the default call
26-32 ms, i.e. 2.85-3.45x one read in different runs (~16x before the tail-exact noise, as the
issue measured it; ~75x for its first version, on a loaded machine); the sync-free call (full
race) ~3.8-4.7x. On one thread, by CPU time (what the work costs, whatever the load): 2.8-2.9x
one read for the default call, 4.2x for the sync-free torch path. With other processes busy on
the same two cores the wall-time ratio swings to 10-40x: each of the call's few hundred
2-thread torch ops waits for its second thread whenever that thread has no core, while one
read is two memory-bound ops. So 3x is at the edge of what this design reaches in torch
eager, met in some quiet runs and missed by up to 15% in others. What is left is arithmetic, not
memory: the call reads ~55 MB (one target row per request, the draft row after a rejection)
against one read's 296 MB, but makes ~24 passes over the B x V = 8.2 M sampled entries in torch
eager (9 integer passes for the 32-bit hash, 4 to turn bits into -v, gather, residual,
division, vectorised minimum, validation sums and minima), each ~0.07-0.2 ns an entry on one
thread. The floor of this design in torch eager is the hash alone, 9 passes (~1 ns an entry on
one thread: ~4-5 ms on two, about half of one read), plus the gathers of the rows read; a
fused kernel (Triton on a GPU) does the race in one pass over those rows.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Optional

import torch

from specdec import rng as _rng
from specdec import workspace as _ws

__all__ = ["rejection_sample", "sum_tolerance", "SUM_TOLERANCE"]

SUM_TOLERANCE = 1e-3
"""A fixed tolerance on |sum_y p(y) - 1| (the default until the default became `sum_tolerance`)."""

_FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
_INT_DTYPES = (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64)
_ROW_BLOCK_ELEMENTS = 1 << 20  # torch backend: rows per block = this // V (fewer, larger torch ops)
_MIN_CHUNK = 256  # entries per chunk of `_first_min`'s vectorised minimum


def sum_tolerance(dtype: torch.dtype, vocab: int) -> float:
    """Default tolerance on |sum_y p(y) - 1| for a correctly normalised row of `dtype` over V entries.

    A row computed in float32 (softmax) and cast to `dtype` moves each entry by at most a unit
    roundoff u = eps/2 relative (the sum by at most u), entries below the smallest normal by at
    most half the smallest subnormal (fp16: V * 2**-25 in all), and float32 summation adds about
    log2(V) ulps. The default is that bound with float32's share taken 64 times over:

        u(dtype) + V * subnormal(dtype) / 2 + 64 * ceil(log2(V) + 1) * 2**-24

    e.g. 3.9e-3 for bf16 and 6.5e-5 for float32 at V = 128256, 2.3e-2 for fp16 at V = 128256.
    """
    info = torch.finfo(dtype)
    f32 = torch.finfo(torch.float32).eps / 2
    return info.eps / 2 + vocab * info.smallest_normal * 2.0**-info_mantissa(dtype) / 2 + \
        64 * math.ceil(math.log2(max(vocab, 1)) + 1) * f32


def info_mantissa(dtype: torch.dtype) -> int:
    """Explicit mantissa bits of a float dtype (the subnormal spacing is smallest_normal * 2**-bits)."""
    return {torch.float16: 10, torch.bfloat16: 7, torch.float32: 23, torch.float64: 52}[dtype]


# --------------------------------------------------------------------------------------------
# Input checks
# --------------------------------------------------------------------------------------------


def _first(mask: torch.Tensor) -> int:
    return int(torch.nonzero(mask)[0, 0])


def _check_shapes(target_probs, draft_probs, draft_token_ids, num_draft_tokens):
    """Shapes, dtypes and devices (no value is read: no host sync); returns (B, N, V)."""
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
    B = num_draft_tokens.numel()
    N = draft_token_ids.numel()
    V = target_probs.shape[1]
    if V == 0:
        raise ValueError("the vocabulary is empty (V = 0)")
    if target_probs.shape[0] != N + B:
        raise ValueError(f"target_probs has {target_probs.shape[0]} rows, expected sum_i (k_i + 1) = {N + B} "
                         f"for {N} draft tokens over B = {B} requests")
    if draft_probs is not None:
        if not isinstance(draft_probs, torch.Tensor) or draft_probs.dtype not in _FLOAT_DTYPES:
            raise TypeError("draft_probs must be a floating torch.Tensor or None")
        if tuple(draft_probs.shape) != (N, V):
            raise ValueError(f"draft_probs must be [sum_i k_i, V] = {(N, V)}, got {tuple(draft_probs.shape)}")
    return B, N, V


def _check_counts(num_draft_tokens, cu, N, max_num_draft_tokens):
    """Values of the counts (B-sized reads)."""
    if bool((num_draft_tokens < 0).any()):
        raise ValueError("num_draft_tokens must be >= 0")
    total = int(cu[-1])
    if total != N:
        raise ValueError(f"draft_token_ids has {N} entries, expected sum_i k_i = {total}")
    if max_num_draft_tokens is not None and num_draft_tokens.numel():
        k_max = int(num_draft_tokens.max())
        if k_max > max_num_draft_tokens:
            raise ValueError(f"max_num_draft_tokens = {max_num_draft_tokens} but a request has k_i = {k_max}")


def _check_gathered(draft_token_ids, p_x, q_x, V, tol):
    """The scalars the acceptance test reads: ids in range, p(x) and q(x) finite in [0, 1], q(x) > 0."""
    N = draft_token_ids.numel()
    if not N:
        return
    bad = (draft_token_ids < 0) | (draft_token_ids >= V)
    if bool(bad.any()):
        i = _first(bad)
        raise ValueError(f"draft_token_ids[{i}] = {int(draft_token_ids[i])} is outside the vocabulary [0, {V})")
    for name, vals in (("target_probs", p_x), ("draft_probs", q_x)):
        if vals is None:
            continue
        bad = ~torch.isfinite(vals) | (vals < 0) | (vals > 1 + tol)
        if bool(bad.any()):
            i = _first(bad)
            raise ValueError(f"{name} at draft {i} (token {int(draft_token_ids[i])}) is {float(vals[i]):.6g}, "
                             "not a probability in [0, 1] (were logits passed instead of probabilities?)")
    if q_x is not None and bool((q_x <= 0).any()):
        i = _first(q_x <= 0)
        raise ValueError(f"draft token {int(draft_token_ids[i])} (draft row {i}) has q(x) = 0: "
                         "it cannot have been drafted from draft_probs")


def _check_row_stats(name, rows, row_sum, row_min, used, tol):
    """The full rows the sampler read: finite, non-negative, summing to 1 within tol.

    rows [R] (row indices into `name`, for the message), row_sum/row_min [R] float32, used [R] bool.
    """
    if not rows.numel():
        return
    bad = used & ~torch.isfinite(row_sum)
    if bool(bad.any()):
        i = _first(bad)
        raise ValueError(f"{name} row {int(rows[i])} has NaN or infinite probabilities")
    bad = used & (row_min < 0)
    if bool(bad.any()):
        i = _first(bad)
        raise ValueError(f"{name} row {int(rows[i])} has negative probabilities (min {float(row_min[i]):.3g}; "
                         "were logits passed instead of probabilities?)")
    bad = used & ((row_sum - 1.0).abs() > tol)
    if bool(bad.any()):
        i = _first(bad)
        raise ValueError(f"{name} row {int(rows[i])} sums to {float(row_sum[i]):.6f}, not 1 within "
                         f"sum_tol={tol:.3g} (were logits passed instead of probabilities?)")


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


class SeededNoise(NamedTuple):
    """The counter-based noise source of the torch backend: request keys [B, 2] and positions [B]."""

    keys: torch.Tensor
    positions: torch.Tensor


class _Noise:
    """The noise of the rows requests sample: `log(rows, out)` fills out [r, V] with -E for
    requests `rows`; seeded sources also have `neg_uniform(rows, out)` (t = -v, before the log)."""

    def __init__(self, noise, n_acc: torch.Tensor):
        if isinstance(noise, SeededNoise):  # drawn at position positions + n_acc
            self.keys = _rng.noise_keys(noise.keys, noise.positions + n_acc)  # [B], once per call
            self.explicit = None
        else:
            self.keys = None
            self.explicit = noise.to(torch.float32)  # explicit E [B, V]

    @property
    def seeded(self) -> bool:
        return self.keys is not None

    def log(self, rows: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        if self.seeded:
            return _rng.log_noise_block_(self.keys[rows], out)
        return torch.index_select(self.explicit, 0, rows, out=out).neg_()

    def neg_uniform(self, rows: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        return _rng.neg_uniform_block_(self.keys[rows], out)


def _gather_rows(src: torch.Tensor, rows: torch.Tensor, name: str) -> torch.Tensor:
    """src[rows] as float32 [r, V], in this thread's buffer `name` (no allocation for float32 src)."""
    out = _ws.buffer(name, (rows.numel(), src.shape[1]), torch.float32, src.device)
    if src.dtype == torch.float32:
        return torch.index_select(src, 0, rows, out=out)
    stage = _ws.buffer(name + ".stage", tuple(out.shape), src.dtype, src.device)
    return out.copy_(torch.index_select(src, 0, rows, out=stage))


def _chunk_mins(x: torch.Tensor, C: int) -> torch.Tensor:
    """The vectorised minimum of each run of C entries along dim 1 of x [r, V]: [r, ceil(V / C)]
    (the last chunk may be shorter)."""
    V = x.shape[1]
    main = V - V % C
    mins = x[:, :main].unflatten(1, (main // C, C)).amin(dim=2)  # [r, main / C]
    if main < V:
        mins = torch.cat([mins, x[:, main:].amin(dim=1, keepdim=True)], dim=1)
    return mins


def _first_min(score: torch.Tensor, chunk: int = _MIN_CHUNK) -> tuple[torch.Tensor, torch.Tensor]:
    """(min, first index of the min) along dim 1 of a contiguous score [r, V]: argmin's answer.

    torch's min(dim=1) and argmin visit a row one element at a time (~10x the cost of amin on
    this CPU); this takes the vectorised amin of chunks of `chunk` entries, the first chunk that
    holds the row's minimum, and the first index of the minimum inside that chunk.
    """
    V = score.shape[1]
    C = min(chunk, V)
    best, c = _chunk_mins(score, C).min(dim=1)  # the first chunk holding the minimum
    cols = (c[:, None] * C + torch.arange(C, device=score.device)).clamp_(max=V - 1)  # [r, C]
    local = score.gather(1, cols).argmin(dim=1, keepdim=True)  # a short last chunk repeats V - 1: later
    return best, cols.gather(1, local)[:, 0]


_BOUND_SLACK = 2.0**-16  # relative: covers the rounding of w / t, of log1p (1 ulp) and of w / log1p
_BOUND_FLOOR = 2.0**-140  # absolute: covers the same roundings where w / t is subnormal


def _chunk_scores(w, t, rows, chunks, C):
    """Exact race scores w / (-E) of whole chunks: rows, chunks [m] -> (scores [m, C], cols [m, C])."""
    V = w.shape[1]
    cols = (chunks[:, None] * C + torch.arange(C, device=w.device)).clamp_(max=V - 1)  # [m, C]
    flat = rows[:, None] * V + cols
    log_noise = _rng.log_from_neg_uniform_(t.view(-1)[flat])  # -E, as the full row would give it
    return w.view(-1)[flat].div_(log_noise), cols


def _bounded_min(w: torch.Tensor, t: torch.Tensor, bound: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """`_first_min(w / (-E))` without computing E on the whole row: (min [r], first index [r]).

    t = -v [r, V] (the noise before its logarithm, `rng.neg_uniform_block_`); bound = w / t.
    Since v <= E (= -log(1 - v), or 16.6 where v is capped), each score w / (-E) of a positive
    w is at least bound = -w / v (a float rounding aside): only entries whose bound reaches
    below the best score can win. So: take the vectorised minimum of `bound` per chunk of C
    entries; compute exact scores (with log1p) in each row's most promising chunk, whose
    minimum T is an actual score; then exact scores in every chunk whose bound is at most
    T / (1 + slack) (slack 2**-16 covers the roundings, which are a few 2**-24). The winner
    and its ties are in those chunks; every other entry scores strictly more than T. Rows
    without a positive w (bound >= 0 everywhere: an empty residual) return min = bound's
    minimum (>= 0) and token 0, for the caller's rerun. Reads the host (the chunk list).
    """
    r, V = w.shape
    C = min(_MIN_CHUNK, V)
    mins = _chunk_mins(bound, C)  # [r, ceil(V / C)]
    lowest, first_chunk = mins.min(dim=1)  # [r]
    arange_r = torch.arange(r, device=w.device)
    top, _ = _chunk_scores(w, t, arange_r, first_chunk, C)
    limit = top.amin(dim=1) / (1.0 + _BOUND_SLACK) + _BOUND_FLOOR  # [r]; T <= limit
    limit = torch.where(lowest < 0, limit, float("-inf"))  # no positive w: no candidates
    rows, chunks = torch.nonzero(mins <= limit[:, None]).unbind(1)  # [m], sorted by row then chunk
    scores, cols = _chunk_scores(w, t, rows, chunks, C)  # [m, C]
    best = torch.where(lowest < 0, float("inf"), lowest).scatter_reduce_(0, rows, scores.amin(dim=1), "amin")
    first = torch.where(scores == best[rows, None], cols, V).amin(dim=1)  # [m]
    token = torch.full((r,), V, dtype=torch.int64, device=w.device).scatter_reduce_(0, rows, first, "amin")
    return best, token.masked_fill_(token >= V, 0)


def _race(target_probs, draft_probs, x_rej, p_row, q_row, has_residual, noise: _Noise, validate):
    """Exponential race over the one row each request samples, in blocks of R rows.

    p_row [B]: the target row each request samples; q_row [B]: its draft row (read only where
    has_residual); x_rej [B]: the rejected draft token (one-hot drafts); noise: the source of
    -E for those requests. Returns (token [B] int64, stats): stats
    [4, B] float32 = (sum, min) of each request's target row and of its draft row (rows with a
    residual only), when validate.

    The winner is argmax w / E = argmin w / (-E) (the same quotient, negated exactly), with
    w = p - q after a rejection (negative entries cannot win a race whose winner is positive)
    and w = p on the bonus row; if no w / E is positive (empty residual: p <= q everywhere) the
    race is rerun over p, as `reference.residual` does. Per block: the target rows (and the
    draft rows) are gathered into reused buffers, the noise is generated in place, and one
    division and one vectorised minimum decide; nothing is allocated per block.

    With validate (host reads allowed anyway) the requests are grouped first: bonus rows skip
    the draft row, and the rerun over p happens only in a block where some residual is empty.
    Without it (the sync-free path) blocks mix both kinds: the draft rows of bonus requests are
    masked to 0 and the rerun over p is always computed, so no value is read on the host.
    """
    B = p_row.numel()
    V = target_probs.shape[1]
    device = target_probs.device
    token = torch.empty(B, dtype=torch.int64, device=device)
    stats = torch.zeros(4, B, dtype=torch.float32, device=device) if validate else None
    R = max(1, _ROW_BLOCK_ELEMENTS // V)
    if validate:
        groups = [(torch.nonzero(has_residual)[:, 0], True), (torch.nonzero(~has_residual)[:, 0], False)]
    else:
        groups = [(torch.arange(B, device=device), None)]  # None: residual and bonus rows mixed
    for reqs, residual in groups:
        for start in range(0, reqs.numel(), R):
            rows = reqs[start:start + R]  # [r] request indices
            p = _gather_rows(target_probs, p_row[rows], "sampler.p")  # [r, V]
            if validate:
                stats[0, rows] = p.sum(dim=1)
                stats[1, rows] = p.amin(dim=1)
            if residual is False:
                w = p  # bonus rows: race over p (no rerun needed)
            elif draft_probs is not None:
                q = _gather_rows(draft_probs, q_row[rows], "sampler.q")  # [r, V]
                if validate:
                    stats[2, rows] = q.sum(dim=1)
                    stats[3, rows] = q.amin(dim=1)
                if residual is None:
                    q.masked_fill_(~has_residual[rows, None], 0.0)  # bonus rows: p - 0 = p
                w = torch.sub(p, q, out=q)  # p - q (p is kept for the rerun)
            else:  # one-hot q: max(p - q, 0) is p without the rejected draft token
                w = _ws.buffer("sampler.q", tuple(p.shape), torch.float32, device).copy_(p)
                xs = x_rej[rows, None]
                kept = w.gather(1, xs) if residual is None else None
                w.scatter_(1, xs, 0.0 if residual else torch.where(has_residual[rows, None], 0.0, kept))
            e = _ws.buffer("sampler.noise", tuple(p.shape), torch.float32, device)
            if validate and noise.seeded:  # host reads allowed: log1p only where an entry can win
                noise.neg_uniform(rows, e)  # t = -v
                bound = _ws.buffer("sampler.bound", tuple(p.shape), torch.float32, device)
                best, tok = _bounded_min(w, e, torch.div(w, e, out=bound))
                if residual is not False and bool((best >= 0).any()):
                    _, tok_p = _bounded_min(p, e, torch.div(p, e, out=bound))  # empty residual: race over p
                    tok = torch.where(best < 0, tok, tok_p)
            else:
                noise.log(rows, e)  # -E
                best, tok = _first_min(w.div_(e))  # best < 0: some w / E > 0
                if residual is not False and (residual is None or bool((best >= 0).any())):
                    _, tok_p = _first_min(p.div_(e))  # empty residual: race over p
                    tok = torch.where(best < 0, tok, tok_p)
            token[rows] = tok
    return token, stats


def _rejection_sample_torch(
    target_probs: torch.Tensor,  # [N + B, V]
    draft_probs: Optional[torch.Tensor],  # [N, V] or None (one-hot drafts)
    draft_token_ids: torch.Tensor,  # [N]
    num_draft_tokens: torch.Tensor,  # [B]
    cu: torch.Tensor,  # [B + 1] exclusive prefix sum of num_draft_tokens
    K: int,  # max_i k_i (or the caller's bound on it)
    uniforms: torch.Tensor,  # [N] in [0, 1)
    noise,  # explicit Exp(1) noise [B, V], or SeededNoise(keys [B, 2], positions [B])
    validate: bool,
    tol: float,
):
    """Vectorised torch twin of the Triton kernel: same arithmetic (float32), same tie-breaking.

    Issues no host synchronisation unless `validate` (every branch is a torch.where).
    """
    device = target_probs.device
    B = num_draft_tokens.numel()
    N = draft_token_ids.numel()
    k = num_draft_tokens.to(torch.int64)  # [B]
    x = draft_token_ids.to(torch.int64)  # [N]
    arange_b = torch.arange(B, device=device)  # [B]
    arange_n = torch.arange(N, device=device)  # [N]

    # Acceptance test on gathered scalars only.
    if validate and N:
        bad = (x < 0) | (x >= target_probs.shape[1])
        if bool(bad.any()):
            i = _first(bad)
            raise ValueError(f"draft_token_ids[{i}] = {int(x[i])} is outside the vocabulary [0, {target_probs.shape[1]})")
    req = torch.repeat_interleave(arange_b, k, output_size=N)  # [N] request of each draft
    local = arange_n - cu[req]  # [N] position j of each draft inside its request
    p_x = target_probs[arange_n + req, x].float()  # [N] target row of draft d is d + req
    q_x = draft_probs[arange_n, x].float() if draft_probs is not None else None  # [N]
    if validate:
        _check_gathered(draft_token_ids, p_x, q_x, target_probs.shape[1], tol)
    accept = uniforms.float() * (q_x if q_x is not None else 1.0) < p_x  # [N]   u < p(x) / q(x)

    # Leading accepts per request: pad into [B, K], then cumulative product.
    grid = torch.zeros(B, max(K, 1), dtype=torch.int64, device=device)  # [B, K]
    grid[req, local] = accept.to(torch.int64)
    n_acc = grid.cumprod(dim=1).sum(dim=1)  # [B]
    has_residual = n_acc < k  # [B]

    p_row = cu[:-1] + arange_b + n_acc  # [B] the target row each request samples
    q_row = (cu[:-1] + n_acc).clamp(max=max(N - 1, 0))  # [B] its draft row (after a rejection)
    x_rej = x[q_row] if N else torch.zeros(B, dtype=torch.int64, device=device)  # [B]
    token, stats = _race(target_probs, draft_probs if N else None, x_rej, p_row, q_row, has_residual,
                         _Noise(noise, n_acc), validate)
    if validate:
        _check_row_stats("target_probs", p_row, stats[0], stats[1], torch.ones_like(has_residual), tol)
        if draft_probs is not None and N:
            _check_row_stats("draft_probs", q_row, stats[2], stats[3], has_residual, tol)

    # Output: accepted drafts, then the recovered/bonus token, padded with -1.
    out = torch.full((B, K + 1), -1, dtype=torch.int64, device=device)  # [B, K + 1]
    out[req, local] = torch.where(local < n_acc[req], x, -1)
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
    sum_tol: Optional[float] = None,
    max_num_draft_tokens: Optional[int] = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Verify a batch of speculative drafts; returns (token_ids [B, K + 1], num_emitted [B]).

    Args:
        target_probs: float [sum_i (k_i + 1), V]. Request i owns k_i rows for its draft
            positions followed by its bonus row, requests in batch order.
        draft_probs: float [sum_i k_i, V], or None for one-hot drafts (n-gram or greedy
            drafters: q(x) = 1 at the draft token, so acceptance is u < p(x) and the residual
            is p with x removed).
        draft_token_ids: int [sum_i k_i], the drafts of request 0, then request 1, ...
        num_draft_tokens: int [B], k_i >= 0 (k_i = 0: the request only samples its bonus row).
        generator: torch.Generator for the random draws (default: torch's global one on the
            tensors' device). It supplies one 64-bit seed per request; the draws then come from
            the counter-based `rng.py` at positions 0..k_i, as with `seeds=`.
        backend: "torch" (this module) or "triton" (`triton_kernel.py`): CUDA tensors on a GPU,
            or CPU tensors when TRITON_INTERPRET=1 was set before triton was first imported
            (`specdec.triton_mode()` says which applies).
        seeds: int64 [B] per-request seeds (all 64 bits count). Draws then depend only on
            (seed, position), so a request's tokens do not depend on the rest of the batch.
            The verifier draws from `rng.VERIFIER_STREAM`; a drafter using the same seeds must
            draw from another stream (`specdec.rng.draft_sample`).
        positions: int64 [B], absolute position of the token decided by each request's first
            row (row j decides position positions[i] + j); default 0. Only with `seeds`.
            0 <= positions[i] and positions[i] + k_i <= rng.MAX_POSITION (checked when validate).
        uniforms: float [sum_i k_i] in [0, 1), explicit acceptance draws (tests).
        noise: float [B, V] > 0, explicit Exp(1) noise for the one row each request samples
            (+inf allowed: that entry never wins).
        validate: check values as well as shapes (below). Needs host syncs; with
            validate=False and `max_num_draft_tokens` given (and seeds=, explicit randoms or a
            generator on the tensors' device) the call issues no host synchronisation and can
            be captured in a CUDA graph. On a CPU the validating call is the faster one: its
            host reads let the race skip the logarithm where no entry can win (module doc).
        sum_tol: tolerance on each read row's sum; default `sum_tolerance(dtype, V)` (from the
            dtype's epsilon and V: accepts correctly normalised bf16/fp16/fp32 rows).
        max_num_draft_tokens: K >= max_i k_i, the output width minus one. Computed from
            num_draft_tokens when omitted (a host sync).

    What validate checks, reading only what the sampler reads: num_draft_tokens >= 0 and
    summing to len(draft_token_ids) (and <= max_num_draft_tokens); draft ids in [0, V); the
    gathered p(x) and q(x) of every draft finite and in [0, 1], q(x) > 0; every row the sampler
    streams (one target row per request; the draft row at a rejection) finite, non-negative and
    summing to 1 within sum_tol; positions in range; explicit uniforms in [0, 1) and noise > 0.
    Not checked: the target and draft rows the sampler does not read (a row past the first
    rejection, or a draft position's full row when its draft is accepted), whose contents
    cannot change the result. The full rows are checked after the race, so a bad row raises
    without anything having been written to the inputs. Shapes, dtypes and devices are always
    checked.

    Returns:
        token_ids: int64 [B, K + 1] (K = max_num_draft_tokens or max_i k_i), the accepted
            drafts then the recovered or bonus token, padded with -1.
        num_emitted: int64 [B], accepted + 1.

    Arithmetic is float32 whatever the input dtype. Raises ValueError (or TypeError) with the
    offending row or token on bad input.
    """
    if backend not in ("torch", "triton"):
        raise ValueError(f"backend must be 'torch' or 'triton', got {backend!r}")
    B, N, V = _check_shapes(target_probs, draft_probs, draft_token_ids, num_draft_tokens)
    device = target_probs.device
    tol = sum_tolerance(target_probs.dtype, V) if sum_tol is None else float(sum_tol)
    cu = torch.zeros(B + 1, dtype=torch.int64, device=device)
    torch.cumsum(num_draft_tokens.to(torch.int64), dim=0, out=cu[1:])
    if max_num_draft_tokens is not None:
        if not isinstance(max_num_draft_tokens, int) or max_num_draft_tokens < 0:
            raise ValueError(f"max_num_draft_tokens must be an int >= 0, got {max_num_draft_tokens!r}")
    if validate:
        _check_counts(num_draft_tokens, cu, N, max_num_draft_tokens)
    K = max_num_draft_tokens if max_num_draft_tokens is not None else (int(num_draft_tokens.max()) if B else 0)
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
        if validate:
            _rng.check_positions(positions, num_draft_tokens.to(device=device, dtype=torch.int64))
    if not explicit and seeds is None:  # the generator supplies the seeds
        gen_device = generator.device if generator is not None else device
        seeds = torch.randint(-2**63, 2**63 - 1, (B,), generator=generator, device=gen_device,
                              dtype=torch.int64).to(device)
    if seeds is not None and positions is None:
        positions = torch.zeros(B, dtype=torch.int64, device=device)

    if backend == "triton":
        from specdec import triton_kernel  # imported lazily: it imports triton

        return triton_kernel.rejection_sample_triton(
            target_probs, draft_probs, draft_token_ids, cu,
            uniforms=uniforms, noise=noise, seeds=seeds, positions=positions, max_k=K,
            validate=validate, sum_tol=tol,
        )

    if explicit:
        source = noise
    else:
        req = torch.repeat_interleave(torch.arange(B, device=device), num_draft_tokens.to(torch.int64), output_size=N)
        local = torch.arange(N, device=device) - cu[req]
        keys = _rng.request_keys(seeds)  # [B, 2]
        uniforms = _rng.accept_uniforms(keys[req], positions[req] + local)  # [N]
        source = SeededNoise(keys, positions)
    return _rejection_sample_torch(target_probs, draft_probs, draft_token_ids, num_draft_tokens, cu, K,
                                   uniforms, source, validate, tol)

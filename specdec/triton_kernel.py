"""Target verification for speculative decoding as one Triton kernel: batched, ragged rejection
sampling that reads a full vocabulary row only where it needs one.

The rule (p = target, q = draft), for request i with k_i drafts x_1..x_k:

    for j = 1..k:  keep x_j while u_j * q_j(x_j) < p_j(x_j)        (u_j ~ U[0, 1): u < p/q)
    first rejection at j:  emit argmax_y max(p_j(y) - q_j(y), 0) / E(y)      (recovered token)
    all kept:              emit argmax_y p_{k+1}(y) / E(y)                     (bonus token)

with E(y) ~ Exp(1): the exponential race samples proportionally to the weights, so the residual
is never normalised. The request emits accepted + 1 tokens.

**Memory traffic.** The acceptance test needs only the gathered scalars p_j(x_j), q_j(x_j), so
the kernel walks the draft positions reading those scalars and stops at the first rejection;
it then streams exactly one target row (and, after a rejection, the matching draft row). Per
request, with float32 probabilities, int64 ids and a_i accepted drafts (bonus: a_i = k_i):

    moved_i  = m_i * (8 + 4 + 4)            ids and gathered p(x), q(x); m_i = min(a_i + 1, k_i)
             + 4V                            the sampled target row
             + 4V * [rejected and q given]   the draft row at the rejection
             + 8 * (a_i + 1) + 8             tokens and count written
             + 8 * (max_k + 1)               the -1 padding (written on the host side)

Any exact sampler must read those one or two rows (the residual depends on every entry) and the
scalars it tests, so this is the minimum up to the padding; a gathered scalar costs a whole
32-byte DRAM sector on NVIDIA GPUs rather than 4 bytes, and with S vocabulary slices (below)
each slice re-reads the m_i scalars, from L2. The comparison with vLLM's MRV2 verifier must start where
MRV2 starts, from logits: MRV2 computes softmax statistics over the 2 k_i draft-position rows of
target and draft logits and then resamples from one or two rows (about 2 k_i + 1 to 2 k_i + 2
row reads per request); this library needs probabilities, so a caller starting from logits first
runs a softmax over all 2 k_i + 1 rows (a read and a write of each, `logits.process_logits`) and
then this kernel's 1-2 row reads: about 4 k_i + 3 row transfers against MRV2's 2 k_i + 2, so
from logits this path moves more, not less. The kernel alone is at the minimum for inputs that
are already probabilities. With explicit `noise` the kernel also reads a noise row (4V per
request); with seeds (the default) it draws the uniforms and the noise from a counter-based
hash of (seed, position), see `rng.py`, and reads no random numbers at all.
`benchmarks/bench_gpu.py` times it against these floors.

**Parallelism.** Grid (B, S): program (i, s) walks request i's drafts (cheap, the scalars stay
in L2) and races over the s-th slice of the vocabulary; a second tiny kernel picks the winner
across the S slices. S = 1 (the interpreter's default) does it all in one program per request.
Ties go to the lowest vocabulary index, as in torch.max, so with the same random numbers the
kernel and the torch backend (`sampler.py`) return identical tokens.

Nothing runs at import except `@triton.jit` decoration, which reads TRITON_INTERPRET: CPU
tensors need TRITON_INTERPRET=1 set before triton is first imported in the process.
"""

from __future__ import annotations

from typing import Optional

import torch
import triton
import triton.language as tl

from specdec import rng as _rng
from specdec.backends import is_interpreted

__all__ = ["rejection_sample_triton", "INTERPRETED"]

_SHIFT_1: tl.constexpr = tl.constexpr(_rng.SHIFT_1)
_SHIFT_2: tl.constexpr = tl.constexpr(_rng.SHIFT_2)
_SHIFT_3: tl.constexpr = tl.constexpr(_rng.SHIFT_3)
_SHIFT_4: tl.constexpr = tl.constexpr(_rng.SHIFT_4)
_MULT_1: tl.constexpr = tl.constexpr(_rng.MULT_1)
_MULT_2: tl.constexpr = tl.constexpr(_rng.MULT_2)
_MULT_3: tl.constexpr = tl.constexpr(_rng.MULT_3)
_LB_SHIFT_1: tl.constexpr = tl.constexpr(_rng.LB_SHIFT_1)
_LB_SHIFT_2: tl.constexpr = tl.constexpr(_rng.LB_SHIFT_2)
_LB_SHIFT_3: tl.constexpr = tl.constexpr(_rng.LB_SHIFT_3)
_LB_MULT_1: tl.constexpr = tl.constexpr(_rng.LB_MULT_1)
_LB_MULT_2: tl.constexpr = tl.constexpr(_rng.LB_MULT_2)
_SALT_LO: tl.constexpr = tl.constexpr(_rng.SALT_LO)
_VERIFIER_SALT: tl.constexpr = tl.constexpr(_rng.stream_salt(_rng.VERIFIER_STREAM))
_P_ACCEPT_HI: tl.constexpr = tl.constexpr(_rng.P_ACCEPT_HI)
_P_ACCEPT_LO: tl.constexpr = tl.constexpr(_rng.P_ACCEPT_LO)
_P_NOISE: tl.constexpr = tl.constexpr(_rng.P_NOISE)
_MASK32: tl.constexpr = tl.constexpr(_rng.MASK32)
_U_MAX: tl.constexpr = tl.constexpr(_rng.U_MAX)


@triton.jit
def _hash32(x):
    """triple32 on uint32 (wrapping multiply), the same function as `rng.hash32`."""
    x = x ^ (x >> _SHIFT_1)
    x = x * _MULT_1
    x = x ^ (x >> _SHIFT_2)
    x = x * _MULT_2
    x = x ^ (x >> _SHIFT_3)
    x = x * _MULT_3
    return x ^ (x >> _SHIFT_4)


@triton.jit
def _exponential_noise(noise_key, offs):
    """Exp(1) noise of vocabulary entries offs in the row keyed noise_key, as `rng.noise_block_`:
    E = -log1p(-v), v = (m + 1/2) 2**-32 (float32, capped below 1), m = lowbias32(key ^ y).
    log1p by Kahan's formula log(a) * v / (1 - a), a = 1 - v (1 - a is exact), as triton's
    interpreter has no log1p."""
    x = noise_key ^ offs.to(tl.uint32)
    x = x ^ (x >> _LB_SHIFT_1)
    x = x * _LB_MULT_1
    x = x ^ (x >> _LB_SHIFT_2)
    x = x * _LB_MULT_2
    x = x ^ (x >> _LB_SHIFT_3)
    return _exponential_from_bits(x)


@triton.jit
def _exponential_from_bits(x):
    """Exp(1) from 32 bits x (uint32), as `rng.exponential_from_bits`."""
    v = (x.to(tl.int32, bitcast=True).to(tl.float32) + 0.5) * 2.3283064365386963e-10  # 2**-32
    v = tl.where(v < 0.0, v + 1.0, v)  # the bits read unsigned
    v = tl.minimum(v, _U_MAX)
    a = 1.0 - v
    return tl.where(a == 1.0, v, -tl.log(a) * (v / tl.where(a == 1.0, 1.0, 1.0 - a)))


@triton.jit
def _rejection_sample_kernel(
    p_ptr,  # [N + B, V] target probabilities
    q_ptr,  # [N, V] draft probabilities (unused when HAS_Q is False)
    draft_ids_ptr,  # [N] int64 draft tokens
    cu_ptr,  # [B + 1] int64 exclusive prefix sum of k_i
    u_ptr,  # [N] float32 acceptance uniforms (unused when SEEDED)
    noise_ptr,  # [B, V] float32 Exp(1) noise (unused when SEEDED)
    seed_ptr,  # [B] int64 seeds (SEEDED only)
    pos_ptr,  # [B] int64 absolute position of each request's first row (SEEDED only)
    out_ptr,  # [B, K + 1] int64 output tokens, pre-filled with -1
    num_emitted_ptr,  # [B] int64
    part_w_ptr,  # [B, S] float32 best residual score per vocabulary slice (SPLIT only)
    part_wi_ptr,  # [B, S] int32 its index
    part_p_ptr,  # [B, S] float32 best p score per slice (the fallback when the residual is empty)
    part_pi_ptr,  # [B, S] int32 its index
    stats_ptr,  # [B, S, 4] float32 sum and min of the target row, sum and min of the draft row (VALIDATE)
    V,
    split_size,
    stride_p,
    stride_q,
    stride_noise,
    stride_out,
    HAS_Q: tl.constexpr,
    SEEDED: tl.constexpr,
    SPLIT: tl.constexpr,
    VALIDATE: tl.constexpr,
    BLOCK_V: tl.constexpr,
):
    req = tl.program_id(0)
    split = tl.program_id(1)
    d_start = tl.load(cu_ptr + req)  # first draft row of this request
    k = tl.load(cu_ptr + req + 1) - d_start
    t_start = d_start + req  # first target row: request i owns k_i + 1 target rows
    if SEEDED:
        seed = tl.load(seed_ptr + req)
        pos0 = tl.load(pos_ptr + req)
        # Request key K, as `rng.request_keys` (helpers are inlined where the interpreter pays per call).
        key0 = _hash32((seed & _MASK32).to(tl.uint32) ^ _SALT_LO)
        key1 = _hash32(((seed >> 32) & _MASK32).to(tl.uint32) ^ _VERIFIER_SALT)

    # Walk the drafts in order on gathered scalars; stop at the first rejection.
    n_acc = 0
    rejected = 0
    while (n_acc < k) & (rejected == 0):
        x = tl.load(draft_ids_ptr + d_start + n_acc)
        p_x = tl.load(p_ptr + (t_start + n_acc) * stride_p + x).to(tl.float32)
        if HAS_Q:
            q_x = tl.load(q_ptr + (d_start + n_acc) * stride_q + x).to(tl.float32)
        else:
            q_x = 1.0  # one-hot draft
        if SEEDED:
            c = _hash32(key0 ^ ((pos0 + n_acc) & _MASK32).to(tl.uint32)) ^ key1  # as rng.accept_uniforms
            a24 = (_hash32(c ^ _P_ACCEPT_HI) >> 8).to(tl.float32)
            b23 = (_hash32(c ^ _P_ACCEPT_LO) >> 9).to(tl.float32)
            u = tl.minimum(a24 * 5.9604644775390625e-08 + (b23 + 0.5) * 7.105427357601002e-15, _U_MAX)
        else:
            u = tl.load(u_ptr + d_start + n_acc)
        if u * q_x < p_x:  # u < p(x) / q(x)
            tl.store(out_ptr + req * stride_out + n_acc, x, mask=split == 0)
            n_acc += 1
        else:
            rejected = 1

    # Race over this program's slice of the one row it needs.
    has_residual = n_acc < k  # False: bonus row
    s_row = (t_start + n_acc).to(tl.int64)
    q_row = (d_start + n_acc).to(tl.int64)
    x_rej = tl.load(draft_ids_ptr + q_row, mask=has_residual, other=-1)
    if SEEDED:
        c = _hash32(key0 ^ ((pos0 + n_acc) & _MASK32).to(tl.uint32)) ^ key1
        noise_key = _hash32(c ^ _P_NOISE)  # as rng.noise_keys
    v_begin = split * split_size
    v_end = tl.minimum(v_begin + split_size, V)
    q_end = tl.where(has_residual, v_end, 0)  # no draft row on the bonus row
    best_w = -1.0
    best_wi = 0
    p_sum = 0.0
    p_min = float("inf")
    q_sum = 0.0
    q_min = float("inf")
    for v0 in range(v_begin, v_end, BLOCK_V):
        offs = v0 + tl.arange(0, BLOCK_V)  # [BLOCK_V]
        mask = offs < v_end
        p = tl.load(p_ptr + s_row * stride_p + offs, mask=mask, other=0.0).to(tl.float32)
        if HAS_Q:
            q = tl.load(q_ptr + q_row * stride_q + offs, mask=offs < q_end, other=0.0).to(tl.float32)
            w = tl.maximum(p - q, 0.0)  # residual weights (p itself on the bonus row: q masked to 0)
            if VALIDATE:
                q_sum += tl.sum(q, axis=0)
                q_min = tl.minimum(q_min, tl.min(tl.where(offs < q_end, q, float("inf")), axis=0))
        else:
            w = tl.where(offs == x_rej, 0.0, p)  # one-hot q: p without the rejected token
        if SEEDED:
            e = _exponential_noise(noise_key, offs)
        else:
            e = tl.load(noise_ptr + req.to(tl.int64) * stride_noise + offs, mask=mask, other=1.0).to(tl.float32)
        if VALIDATE:
            p_sum += tl.sum(p, axis=0)
            p_min = tl.minimum(p_min, tl.min(tl.where(mask, p, float("inf")), axis=0))
        score = tl.where(mask, tl.math.div_rn(w, e), -1.0)
        blk = tl.max(score, axis=0)
        blk_i = tl.min(tl.where(score == blk, offs, v_end), axis=0)  # first index on ties
        best_wi = tl.where(blk > best_w, blk_i, best_wi)  # strict: an earlier block wins ties
        best_w = tl.maximum(blk, best_w)

    # Empty residual in this slice (only when p <= q on it): race over p, as the reference does.
    # Rare, so it costs a second pass over the slice instead of registers in the first one.
    best_p = -1.0
    best_pi = 0
    if best_w <= 0.0:
        for v0 in range(v_begin, v_end, BLOCK_V):
            offs = v0 + tl.arange(0, BLOCK_V)
            mask = offs < v_end
            p = tl.load(p_ptr + s_row * stride_p + offs, mask=mask, other=0.0).to(tl.float32)
            if SEEDED:
                e = _exponential_noise(noise_key, offs)
            else:
                e = tl.load(noise_ptr + req.to(tl.int64) * stride_noise + offs, mask=mask, other=1.0).to(tl.float32)
            score = tl.where(mask, tl.math.div_rn(p, e), -1.0)
            blk = tl.max(score, axis=0)
            blk_i = tl.min(tl.where(score == blk, offs, v_end), axis=0)
            best_pi = tl.where(blk > best_p, blk_i, best_pi)
            best_p = tl.maximum(blk, best_p)

    if VALIDATE:
        st = (req * tl.num_programs(1) + split) * 4
        tl.store(stats_ptr + st, p_sum)
        tl.store(stats_ptr + st + 1, p_min)
        tl.store(stats_ptr + st + 2, q_sum)
        tl.store(stats_ptr + st + 3, q_min)
    if SPLIT:
        part = req * tl.num_programs(1) + split
        tl.store(part_w_ptr + part, best_w)
        tl.store(part_wi_ptr + part, best_wi)
        tl.store(part_p_ptr + part, best_p)
        tl.store(part_pi_ptr + part, best_pi)
        tl.store(num_emitted_ptr + req, (n_acc + 1).to(tl.int64), mask=split == 0)
    else:
        token = tl.where(best_w > 0.0, best_wi, best_pi)  # empty residual: fall back to p
        tl.store(out_ptr + req * stride_out + n_acc, token.to(tl.int64))
        tl.store(num_emitted_ptr + req, (n_acc + 1).to(tl.int64))


@triton.jit
def _combine_splits_kernel(
    part_w_ptr, part_wi_ptr, part_p_ptr, part_pi_ptr,  # [B, S] per-slice winners
    out_ptr,  # [B, K + 1] int64
    num_emitted_ptr,  # [B] int64
    num_splits,
    stride_out,
    BLOCK_S: tl.constexpr,
):
    req = tl.program_id(0)
    offs = tl.arange(0, BLOCK_S)
    mask = offs < num_splits
    base = req * num_splits
    w = tl.load(part_w_ptr + base + offs, mask=mask, other=-2.0)
    p = tl.load(part_p_ptr + base + offs, mask=mask, other=-2.0)
    best_w = tl.max(w, axis=0)
    split_w = tl.min(tl.where(w == best_w, offs, BLOCK_S), axis=0)  # lowest slice on ties
    best_p = tl.max(p, axis=0)
    split_p = tl.min(tl.where(p == best_p, offs, BLOCK_S), axis=0)
    token_w = tl.load(part_wi_ptr + base + split_w)
    token_p = tl.load(part_pi_ptr + base + split_p)
    token = tl.where(best_w > 0.0, token_w, token_p)
    n = tl.load(num_emitted_ptr + req)
    tl.store(out_ptr + req * stride_out + n - 1, token.to(tl.int64))


@triton.jit
def _noise_from_bits_kernel(bits_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(bits_ptr + offs, mask=mask, other=0).to(tl.uint32)
    tl.store(out_ptr + offs, _exponential_from_bits(x), mask=mask)


def exponential_from_bits_triton(bits: torch.Tensor) -> torch.Tensor:
    """The kernel's own Exp(1) map applied to 32-bit patterns (int64 [n]): for the tail-bias tests."""
    bits = (bits.to(torch.int64) & _rng.MASK32).to(torch.int64).contiguous()
    out = torch.empty(bits.numel(), dtype=torch.float32, device=bits.device)
    block = 1 << 16
    _noise_from_bits_kernel[(triton.cdiv(bits.numel(), block),)](bits, out, bits.numel(), BLOCK=block)
    return out


INTERPRETED = is_interpreted(_rejection_sample_kernel)
"""Whether the kernels above were decorated in interpreter mode (they then run on CPU tensors)."""


def _default_block_v(V: int, interpreted: bool) -> int:
    # The interpreter pays per operation, not per element: one wide block is fastest there.
    cap = 65536 if interpreted else 4096
    return min(triton.next_power_of_2(V), cap)


def rejection_sample_triton(
    target_probs: torch.Tensor,  # [N + B, V]
    draft_probs: Optional[torch.Tensor],  # [N, V] or None
    draft_token_ids: torch.Tensor,  # [N]
    cu: torch.Tensor,  # [B + 1] int64, exclusive prefix sum of num_draft_tokens
    *,
    uniforms: Optional[torch.Tensor] = None,  # [N]
    noise: Optional[torch.Tensor] = None,  # [B, V]
    seeds: Optional[torch.Tensor] = None,  # [B] int64
    positions: Optional[torch.Tensor] = None,  # [B] int64
    block_v: Optional[int] = None,
    num_splits: Optional[int] = None,
    max_k: Optional[int] = None,
    validate: bool = False,
    sum_tol: Optional[float] = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Launch the verification kernel; returns (token_ids [B, K + 1], num_emitted [B]) int64.

    Called by `specdec.rejection_sample(..., backend="triton")`, which has validated the values;
    this launcher checks what the kernel itself relies on (device, layout, which random inputs)
    and picks the block size and the number of vocabulary slices per request. Pass `max_k`
    (max_i k_i) to skip the one device-to-host read it otherwise needs for the output width:
    with it the launch issues no host synchronisation (CUDA-graph capturable).
    validate=True makes the kernel also return the sum and minimum of every row it streams
    (no extra reads), checked afterwards as `rejection_sample` documents (a host sync).
    """
    device = target_probs.device
    if device.type == "cpu" and not INTERPRETED:
        raise RuntimeError(
            "backend='triton' got CPU tensors, but specdec's Triton kernel was compiled for a GPU. "
            "To run it on CPU with the Triton interpreter, set TRITON_INTERPRET=1 in the environment "
            "before triton is first imported in this process; or move the tensors to CUDA."
        )
    if INTERPRETED and not is_interpreted(tl.max):
        raise RuntimeError(
            "specdec's Triton kernel is in interpreter mode but triton.language was imported earlier "
            "without TRITON_INTERPRET=1; set TRITON_INTERPRET=1 before triton is first imported."
        )
    seeded = seeds is not None
    if seeded == (uniforms is not None) or (uniforms is None) != (noise is None):
        raise ValueError("pass either seeds= (and positions=) or both uniforms= and noise=")
    B = cu.numel() - 1
    N = draft_token_ids.numel()
    V = target_probs.shape[1]
    K = max_k if max_k is not None else (int((cu[1:] - cu[:-1]).max()) if B else 0)
    out = torch.full((B, K + 1), -1, dtype=torch.int64, device=device)  # [B, K + 1]
    num_emitted = torch.empty(B, dtype=torch.int64, device=device)  # [B]
    if B == 0:
        return out, num_emitted

    def rows_contiguous(t):
        return t if t.stride(-1) == 1 else t.contiguous()

    p = rows_contiguous(target_probs)
    q = rows_contiguous(draft_probs) if draft_probs is not None and N else None
    ids = draft_token_ids.to(torch.int64).contiguous()
    cu = cu.to(torch.int64).contiguous()
    if seeded:
        seeds = seeds.to(torch.int64).contiguous()
        positions = positions.to(torch.int64).contiguous()
        u = noise_t = p  # unused pointers
    else:
        u = uniforms.to(torch.float32).contiguous()
        noise_t = rows_contiguous(noise.to(torch.float32))
        seeds = positions = cu  # unused pointers

    if block_v is None:
        block_v = _default_block_v(V, INTERPRETED)
    if block_v & (block_v - 1):
        raise ValueError(f"block_v must be a power of two, got {block_v}")
    n_blocks = triton.cdiv(V, block_v)
    if num_splits is None:
        num_splits = 1
        if device.type == "cuda" and not INTERPRETED:
            sms = torch.cuda.get_device_properties(device).multi_processor_count
            num_splits = max(1, min(n_blocks, triton.cdiv(2 * sms, B)))
    num_splits = max(1, min(int(num_splits), n_blocks))
    split_size = triton.cdiv(n_blocks, num_splits) * block_v
    num_splits = triton.cdiv(V, split_size)  # no empty slice
    split = num_splits > 1
    if split:
        part_w = torch.empty(B, num_splits, dtype=torch.float32, device=device)
        part_wi = torch.empty(B, num_splits, dtype=torch.int32, device=device)
        part_p = torch.empty_like(part_w)
        part_pi = torch.empty_like(part_wi)
    else:
        part_w = part_p = u if not seeded else p  # unused pointers
        part_wi = part_pi = cu
    stats = torch.empty(B, num_splits, 4, dtype=torch.float32, device=device) if validate else part_w

    num_warps = 4 if block_v <= 1024 else 8
    _rejection_sample_kernel[(B, num_splits)](
        p, q if q is not None else p, ids, cu,
        u, noise_t, seeds, positions,
        out, num_emitted, part_w, part_wi, part_p, part_pi, stats,
        V, split_size,
        p.stride(0), q.stride(0) if q is not None else 0,
        noise_t.stride(0) if not seeded else 0, out.stride(0),
        HAS_Q=q is not None, SEEDED=seeded, SPLIT=split, VALIDATE=validate, BLOCK_V=block_v,
        num_warps=num_warps,
    )
    if split:
        _combine_splits_kernel[(B,)](
            part_w, part_wi, part_p, part_pi, out, num_emitted, num_splits, out.stride(0),
            BLOCK_S=triton.next_power_of_2(num_splits), num_warps=1,
        )
    if validate:
        _check_stats(stats, num_emitted, cu, target_probs.dtype, V, sum_tol, q is not None)
    return out, num_emitted


def _check_stats(stats, num_emitted, cu, dtype, V, sum_tol, has_q):
    from specdec.sampler import _check_row_stats, sum_tolerance

    tol = sum_tolerance(dtype, V) if sum_tol is None else sum_tol
    p_sum = stats[:, :, 0].sum(dim=1)
    p_min = stats[:, :, 1].amin(dim=1)
    B = num_emitted.numel()
    n_acc = num_emitted - 1
    arange_b = torch.arange(B, device=num_emitted.device)
    _check_row_stats("target_probs", cu[:-1] + arange_b + n_acc, p_sum, p_min,
                     torch.ones(B, dtype=torch.bool, device=num_emitted.device), tol)
    if has_q:
        _check_row_stats("draft_probs", cu[:-1] + n_acc, stats[:, :, 2].sum(dim=1), stats[:, :, 3].amin(dim=1),
                         n_acc < cu[1:] - cu[:-1], tol)

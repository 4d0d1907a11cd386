"""Counter-based random numbers keyed by (seed, stream, position): the same bits in torch and Triton.

A serving engine must give a request the same tokens whatever else is in the batch and in
whatever order, so its random draws may depend only on the request's own seed and on the
absolute position of the token being decided, never on a shared generator's state. We use two
stateless bijections of 32-bit words from Chris Wellons' hash prospector
(https://nullprogram.com/blog/2018/07/31/): H = `triple32` (three multiply-xorshift rounds)
for the few per-request and per-position words, and G = `lowbias32` (two rounds, the
"improved" constants 0x21F0AAAD, 0xD35A2D97 with shifts 16, 15, 15) for the per-vocabulary
words of the noise, which are computed V times per sampled row and so decide its cost:

    request key    (K0, K1) = (H(seed_lo ^ SALT_LO), H(seed_hi ^ S(stream)))   64 bits, a bijection
    position word  C_t      = H(K0 ^ t) ^ K1                                     of the seed per stream
    acceptance     u_t      = min(a24 * 2**-24 + (b23 + 1/2) * 2**-47, 1 - 2**-24)
                              a24 = H(C_t ^ P_ACCEPT_HI) >> 8,  b23 = H(C_t ^ P_ACCEPT_LO) >> 9
    noise key      N_t      = H(C_t ^ P_NOISE)
    noise          E_t(y)   = exponential_from_bits(G(N_t ^ y))                  Exp(1), finite, > 0

t is the absolute position of the token being decided, 0 <= t <= MAX_POSITION; y a vocabulary
index; S(stream) = H(stream ^ STREAM_SALT). Distinct seeds give distinct keys (64-bit seeds, not
folded to 32 bits), and distinct positions distinct position words.

**Exponential noise from 32 bits.** With m the 32 bits read unsigned, v = (m + 1/2) * 2**-32
in (0, 1) (the midpoint grid: never 0 nor 1) rounded to float32 and capped at 1 - 2**-24, and
E = -log1p(-v). Near v = 0 (E close to 0, where a rare token wins) v keeps the grid's full
resolution (for the bits read as a signed int32 x >= 0, v = (x + 1/2) 2**-32 to float32's relative precision) and
log1p keeps float32's relative precision; near v = 1 (large E, which never decides a rare
token's win) v lies on float32's 2**-24 grid. The smallest draw is 2**-33 ~ 1.2e-10, the
largest -log(2**-24) = 16.6 (never +inf). A token whose
weight is a fraction w of its row wins the race with probability w * (1 + b(w)), where
(`tail_bias` computes it) b(w) ~ -(2**-32 / w)**2 / 24 for the midpoint grid:

    |b(w)| < 0.3% for w >= 1e-9,   < 3e-5 for w >= 1e-8,   < 3e-7 for w >= 1e-7.

(The 23-bit noise this replaces had b = -97% at w = 1e-8 and -5.7% at 1e-7; torch.rand's
24-bit `-log(U)` -98% and -27%.) The acceptance uniform has 47 bits: P(u < r) = r within
2**-48 for r < 2**-24 and within a relative 2**-24 above, so a draft the target gives 1e-9 of
the draft's probability is accepted at the right rate too.

**Streams.** The verifier draws from `VERIFIER_STREAM`. A drafter that drew its proposals from
the verifier's own numbers would correlate the draft with the acceptance test and the residual
sample and break exactness (see `tests/specdec/test_specdec_rng.py`); a drafter using the same
seeds must use another stream, e.g. `DRAFTER_STREAM` through `draft_sample`, which refuses the
verifier's stream.

torch has no wrapping uint32 multiply: the per-request words are computed in int64 (`hash32`,
the reference), and the [rows, V] noise with int32 tensors whose multiply wraps modulo 2**32
(`neg_uniform_block_`, checked bit for bit against `lowbias32` and `exponential_from_bits` in
the tests). `triton_kernel.py` evaluates the same formulas with uint32 arithmetic: both
backends draw identical uniforms and identical noise bits; the noise can differ in the last
bit of a logarithm (Triton's interpreter has no log1p), which changes a sampled token only on
an exact near-tie. The same holds within torch: its vectorised log1p and its scalar log1p
(used for the few elements at the end of each thread's share of an array) may differ in the
last bit, so a row's noise can differ in the last bit with the shape of the block it was
computed in.
"""

from __future__ import annotations

import math

import torch

from specdec import workspace as _ws

__all__ = [
    "request_keys", "accept_uniforms", "noise_keys", "exponential_noise", "exponential_from_bits",
    "noise_block_", "log_noise_block_", "neg_uniform_block_", "log_from_neg_uniform_",
    "signed_uniform_block_", "neg_uniform_from_signed_",
    "hash32", "check_positions", "draft_sample", "tail_bias", "accept_bias",
    "VERIFIER_STREAM", "DRAFTER_STREAM", "MAX_POSITION",
]

MASK32 = 0xFFFFFFFF
# triple32 (https://nullprogram.com/blog/2018/07/31/): shifts and odd multipliers (H: keys, positions).
SHIFT_1, MULT_1 = 17, 0xED5AD4BB
SHIFT_2, MULT_2 = 11, 0xAC4C1B51
SHIFT_3, MULT_3 = 15, 0x31848BAB
SHIFT_4 = 14
# lowbias32 (same source, improved constants) (G: the per-vocabulary words of the noise).
LB_SHIFT_1, LB_MULT_1 = 16, 0x21F0AAAD
LB_SHIFT_2, LB_MULT_2 = 15, 0xD35A2D97
LB_SHIFT_3 = 15
SALT_LO = 0x9E3779B9
STREAM_SALT = 0x85EBCA6B
P_ACCEPT_HI = 0x68E31DA4
P_ACCEPT_LO = 0xB5297A4D
P_NOISE = 0x1B56C4E9

VERIFIER_STREAM = 0
"""The stream `rejection_sample` and `verify_from_logits` draw from."""
DRAFTER_STREAM = 1
"""A stream for a drafter that proposes with the same per-request seeds (see `draft_sample`)."""
MAX_POSITION = 2**31 - 1
"""Largest absolute position a draw may be keyed by (positions are checked against it)."""

U_MAX = 1.0 - 2.0**-24  # the largest float32 below 1


def _hash32_int(x: int) -> int:
    """triple32 of one Python int (for per-call constants such as the stream salt)."""
    x &= MASK32
    x ^= x >> SHIFT_1
    x = (x * MULT_1) & MASK32
    x ^= x >> SHIFT_2
    x = (x * MULT_2) & MASK32
    x ^= x >> SHIFT_3
    x = (x * MULT_3) & MASK32
    return x ^ (x >> SHIFT_4)


def stream_salt(stream: int) -> int:
    """S(stream), the word XOR-ed into the high half of the request key."""
    if not isinstance(stream, int) or not 0 <= stream <= MASK32:
        raise ValueError(f"stream must be an int in [0, 2**32), got {stream!r}")
    return _hash32_int(stream ^ STREAM_SALT)


# --------------------------------------------------------------------------------------------
# The hash: int64 reference (per-request words) and int32 fast path (vocabulary noise)
# --------------------------------------------------------------------------------------------


def _mul32_(x: torch.Tensor, c: int) -> torch.Tensor:
    """x <- (x * c) mod 2**32 in place, for x in [0, 2**32) held in int64, without overflow."""
    lo, hi = c & 0xFFFF, c >> 16
    t = (x * hi).bitwise_and_(0xFFFF).bitwise_left_shift_(16)  # high half of c, low 16 bits kept
    return x.mul_(lo).add_(t).bitwise_and_(MASK32)


def hash32(x: torch.Tensor) -> torch.Tensor:
    """triple32 on uint32 values held in an int64 tensor; returns a new tensor in [0, 2**32)."""
    x = x.to(torch.int64) & MASK32
    x.bitwise_xor_(x >> SHIFT_1)
    _mul32_(x, MULT_1)
    x.bitwise_xor_(x >> SHIFT_2)
    _mul32_(x, MULT_2)
    x.bitwise_xor_(x >> SHIFT_3)
    _mul32_(x, MULT_3)
    return x.bitwise_xor_(x >> SHIFT_4)


def _signed32(c: int) -> int:
    return c - (1 << 32) if c >= 1 << 31 else c


def _xorshift_i32_(x: torch.Tensor, shift: int, tmp: torch.Tensor) -> None:
    """x ^= x >>> shift (logical) on int32 bit patterns, in place; tmp: scratch of x's shape."""
    torch.bitwise_right_shift(x, shift, out=tmp)
    tmp.bitwise_and_((1 << (32 - shift)) - 1)  # arithmetic shift -> logical shift
    x.bitwise_xor_(tmp)


def _hash32_i32_(x: torch.Tensor, tmp: torch.Tensor) -> torch.Tensor:
    """triple32 in place on an int32 tensor holding uint32 bit patterns (int32 multiply wraps)."""
    _xorshift_i32_(x, SHIFT_1, tmp)
    x.mul_(_signed32(MULT_1))
    _xorshift_i32_(x, SHIFT_2, tmp)
    x.mul_(_signed32(MULT_2))
    _xorshift_i32_(x, SHIFT_3, tmp)
    x.mul_(_signed32(MULT_3))
    _xorshift_i32_(x, SHIFT_4, tmp)
    return x


# --------------------------------------------------------------------------------------------
# Keys, uniforms, noise
# --------------------------------------------------------------------------------------------


def request_keys(seeds: torch.Tensor, stream: int = VERIFIER_STREAM) -> torch.Tensor:
    """[n] int64 seeds -> [n, 2] request keys (K0, K1), each in [0, 2**32): 64 bits per seed."""
    seeds = seeds.to(torch.int64)
    lo = seeds & MASK32
    hi = (seeds >> 32) & MASK32
    return torch.stack([hash32(lo ^ SALT_LO), hash32(hi ^ stream_salt(stream))], dim=-1)


def check_positions(positions: torch.Tensor, last_offset: torch.Tensor | int = 0) -> None:
    """Raise unless 0 <= positions and positions + last_offset <= MAX_POSITION (reads the values)."""
    positions = positions.to(torch.int64)
    if positions.numel() == 0:
        return
    last = positions + last_offset
    bad = (positions < 0) | (last > MAX_POSITION)
    if bool(bad.any()):
        i = int(torch.nonzero(bad)[0, 0])
        raise ValueError(f"positions[{i}] = {int(positions[i])}: the positions a request decides must lie in "
                         f"[0, MAX_POSITION = 2**31 - 1] (its last is positions[{i}] + k_{i} = {int(last[i])})")


def _position_words(keys: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    return hash32(keys[:, 0] ^ (positions.to(torch.int64) & MASK32)) ^ keys[:, 1]


def accept_uniforms(keys: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Acceptance uniforms u_t in [0, 1), float32 [n], from request keys [n, 2] and positions [n]."""
    c = _position_words(keys, positions)
    a = (hash32(c ^ P_ACCEPT_HI) >> 8).to(torch.float32)  # 24 bits
    b = (hash32(c ^ P_ACCEPT_LO) >> 9).to(torch.float32)  # 23 more bits
    u = a.mul_(2.0**-24).add_(b.add_(0.5).mul_(2.0**-47))
    return u.clamp_(max=U_MAX)


def noise_keys(keys: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Noise keys N_t, int64 [n] in [0, 2**32), from request keys [n, 2] and positions [n]."""
    return hash32(_position_words(keys, positions) ^ P_NOISE)


def _lowbias32_i32_(x: torch.Tensor, tmp: torch.Tensor) -> torch.Tensor:
    """lowbias32 in place on an int32 tensor holding uint32 bit patterns (int32 multiply wraps)."""
    _xorshift_i32_(x, LB_SHIFT_1, tmp)
    x.mul_(_signed32(LB_MULT_1))
    _xorshift_i32_(x, LB_SHIFT_2, tmp)
    x.mul_(_signed32(LB_MULT_2))
    _xorshift_i32_(x, LB_SHIFT_3, tmp)
    return x


def lowbias32(x: torch.Tensor) -> torch.Tensor:
    """lowbias32 on uint32 values held in an int64 tensor (the reference of the int32 fast path)."""
    x = x.to(torch.int64) & MASK32
    x.bitwise_xor_(x >> LB_SHIFT_1)
    _mul32_(x, LB_MULT_1)
    x.bitwise_xor_(x >> LB_SHIFT_2)
    _mul32_(x, LB_MULT_2)
    return x.bitwise_xor_(x >> LB_SHIFT_3)


def exponential_from_bits(bits: torch.Tensor) -> torch.Tensor:
    """Exp(1) draws, float32, from 32 random bits each (any integer dtype; the low 32 bits count).

    The map of the module docstring: v = (m + 1/2) 2**-32 for the bits m read unsigned, v rounded
    to float32 and capped at 1 - 2**-24, E = -log1p(-v). Finite and > 0 for every input.
    """
    x = bits.to(torch.int64) & MASK32
    x = torch.where(x >= 2**31, x - 2**32, x).to(torch.int32)
    return _exponential_from_i32_(x.to(torch.float32))


def _exponential_from_i32_(v: torch.Tensor) -> torch.Tensor:
    """In place: v holds float32(x) for int32 bit patterns x; returns v overwritten with E."""
    v.add_(0.5).mul_(2.0**-32)  # (m + 1/2) 2**-32 for x >= 0; that minus 1 for x < 0
    v.add_(v < 0)  # unsigned: (m + 1/2) 2**-32 in (0, 1), rounded to float32 near 1
    v.clamp_(max=U_MAX)  # never 1 (E = +inf): the largest draw is -log(2**-24) = 16.6
    return v.neg_().log1p_().neg_()


def exponential_noise(keys: torch.Tensor, vocab: int, *, block_elements: int = 1 << 18) -> torch.Tensor:
    """Exp(1) noise E_t(y), float32 [n, V], for rows with noise keys [n]; finite and > 0."""
    keys = keys.to(torch.int64)
    out = torch.empty(keys.numel(), vocab, dtype=torch.float32, device=keys.device)  # [n, V]
    rows = max(1, block_elements // max(vocab, 1))
    for start in range(0, keys.numel(), rows):
        stop = min(start + rows, keys.numel())
        noise_block_(keys[start:stop], out[start:stop])
    return out


def noise_block_(keys: torch.Tensor, out: torch.Tensor, *, scratch: dict | None = None) -> torch.Tensor:
    """Fill out [r, V] (float32, contiguous) with the noise E of the r rows keyed keys [r]; returns out.

    E(y) = exponential_from_bits(lowbias32(N ^ y)), bit for bit (`log_noise_block_`, negated).
    `scratch` is accepted for backward compatibility and unused (see `specdec.workspace`).
    """
    return log_noise_block_(keys, out).neg_()


def log_noise_block_(keys: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """Fill out [r, V] (float32, contiguous) with -E, the negated noise of rows keyed keys [r].

    The race needs only the order of w / E, and w / (-E) = -(w / E) exactly, so the sampler
    races on -E = log1p(-v) (argmin) and saves the final negation. Bit for bit
    `exponential_from_bits(lowbias32(N ^ y))`, negated: `neg_uniform_block_`, then
    `log_from_neg_uniform_` (16 passes over [r, V] in all, no allocation).
    """
    return log_from_neg_uniform_(neg_uniform_block_(keys, out))


def neg_uniform_block_(keys: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """Fill out [r, V] (float32, contiguous) with t = -v, the noise before its cap and logarithm.

    v = (m + 1/2) 2**-32 rounded to float32 for m = lowbias32(N ^ y) (as `exponential_from_bits`,
    which then caps v at 1 - 2**-24 and takes E = -log1p(-v)). 13 passes over [r, V], all on
    this thread's reused buffers (`specdec.workspace`):

    - hash, 9 integer passes: the first xorshift distributes over the key's XOR,
      (N ^ y) ^ ((N ^ y) >>> 16) = (N ^ (N >>> 16)) ^ (y ^ (y >>> 16)), so it is one XOR of a
      per-row word with a cached per-vocabulary row; then multiply, xorshift, multiply,
      xorshift (a logical shift is an arithmetic shift and a mask: torch has no uint32 shift);
    - float, 4 passes: int32 -> float32; -(x + 1/2) 2**-32 as one fused x * (-2**-32) - 2**-33
      (x * 2**-32 is exact, so its single rounding is that of (x + 1/2) then the scaling);
      the unsigned fix, -v = t - ceil(t) for t in (-1/2, 1/2) (t - 0 = t exactly; t - 1 is
      rounded once, as v = s + 1 is).
    """
    ceil = _ws.buffer("rng.tmp", tuple(out.shape), torch.int32, out.device).view(torch.float32)
    return neg_uniform_from_signed_(signed_uniform_block_(keys, out), ceil)


def signed_uniform_block_(keys: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """Fill out [r, V] (float32) with s = -(x + 1/2) 2**-32 in (-1/2, 1/2), x the bits read as int32.

    The first 11 passes of `neg_uniform_block_` (the hash, then two float passes);
    `neg_uniform_from_signed_` turns s into -v.
    """
    r, V = out.shape
    device = out.device
    x = _ws.buffer("rng.bits", (r, V), torch.int32, device)
    tmp = _ws.buffer("rng.tmp", (r, V), torch.int32, device)
    k = _as_int32(keys)
    k = k ^ ((k >> LB_SHIFT_1) & ((1 << (32 - LB_SHIFT_1)) - 1))  # [r]: N ^ (N >>> 16)
    torch.bitwise_xor(k[:, None], _vocab_words(V, device)[None, :], out=x)  # [r, V]: first xorshift done
    x.mul_(_signed32(LB_MULT_1))
    _xorshift_i32_(x, LB_SHIFT_2, tmp)
    x.mul_(_signed32(LB_MULT_2))
    _xorshift_i32_(x, LB_SHIFT_3, tmp)
    out.copy_(x)  # float32(x), rounded to nearest
    return torch.add(_minus_half_step(device), out, alpha=-2.0**-32, out=out)  # -(float32(x) + 1/2) 2**-32


def neg_uniform_from_signed_(s: torch.Tensor, ceil: torch.Tensor) -> torch.Tensor:
    """In place: s (from `signed_uniform_block_`, any shape) -> -v; ceil: float32 scratch like s."""
    torch.ceil(s, out=ceil)  # 1 where s > 0 (x < 0: the bits read unsigned are x + 2**32), else -0 or 0
    return s.sub_(ceil)


def log_from_neg_uniform_(t: torch.Tensor) -> torch.Tensor:
    """In place: t = -v (from `neg_uniform_block_`, any shape) -> -E = log1p(-min(v, 1 - 2**-24))."""
    return t.clamp_(min=-U_MAX).log1p_()  # v never 1: E at most -log(2**-24) = 16.6


def _as_int32(keys: torch.Tensor) -> torch.Tensor:
    """uint32 values held in int64 -> the same bit patterns as int32."""
    keys = keys.to(torch.int64)
    return torch.where(keys >= 2**31, keys - 2**32, keys).to(torch.int32)


_VOCAB_WORDS: dict = {}


def _vocab_words(V: int, device: torch.device) -> torch.Tensor:
    """y ^ (y >>> 16) for y = 0..V-1, int32 on device, cached (the longest so far, sliced)."""
    words = _VOCAB_WORDS.get(device)
    if words is None or words.numel() < V:
        y = torch.arange(V, dtype=torch.int32, device=device)
        words = _VOCAB_WORDS[device] = y ^ (y >> LB_SHIFT_1)  # y >= 0: arithmetic = logical shift
    return words[:V]


_MINUS_HALF_STEP = torch.tensor(-2.0**-33, dtype=torch.float32)
_HALF_STEPS: dict = {}


def _minus_half_step(device: torch.device) -> torch.Tensor:
    """-2**-33 as a 0-dim float32 tensor on device (cached): the addend of the fused scaling."""
    c = _HALF_STEPS.get(device)
    if c is None:
        c = _HALF_STEPS[device] = _MINUS_HALF_STEP.to(device)
    return c


# --------------------------------------------------------------------------------------------
# Drafting from the same seeds, on another stream
# --------------------------------------------------------------------------------------------


def _race_sample(probs: torch.Tensor, seeds: torch.Tensor, positions: torch.Tensor, stream: int) -> torch.Tensor:
    keys = request_keys(seeds, stream)
    noise = exponential_noise(noise_keys(keys, positions), probs.shape[1])
    return (probs.float() / noise).argmax(dim=1)


def draft_sample(probs: torch.Tensor, seeds: torch.Tensor, positions: torch.Tensor,
                 *, stream: int = DRAFTER_STREAM) -> torch.Tensor:
    """Draw one token per row of probs [n, V] from (seed, position) on a drafter's stream.

    For a drafter that proposes with the request seeds the verifier uses: row i is drawn with
    seeds[i] at positions[i] (the position the drafted token would occupy). The verifier's
    stream is refused: drawing the drafts from the verifier's own numbers breaks exactness.
    """
    if stream == VERIFIER_STREAM:
        raise ValueError("draft_sample: stream=VERIFIER_STREAM is the verifier's own stream; a drafter drawing "
                         "from it correlates its drafts with the acceptance test and the residual sample, which "
                         "breaks exactness. Use DRAFTER_STREAM (the default) or another stream id.")
    if probs.dim() != 2 or seeds.shape != (probs.shape[0],) or positions.shape != (probs.shape[0],):
        raise ValueError("draft_sample: probs must be [n, V], seeds and positions [n]")
    check_positions(positions)
    return _race_sample(probs, seeds, positions, stream)


# --------------------------------------------------------------------------------------------
# The bias bound, computed from the noise map itself
# --------------------------------------------------------------------------------------------


def tail_bias(w: float, *, terms: int | None = None, from_bits=None) -> float:
    """Relative bias b(w) of the race for a token of relative weight w, from the noise map itself.

    The token wins iff E < w E' / (1 - w), with E' ~ Exp(1) the rest of the row's race (exact
    for a continuous competitor), so P(win) = sum_x 2**-32 exp(-(1 - w) E(x) / w) over the bit
    patterns x. Only the smallest E(x) matter; they come from s = (m + 1/2) 2**-32, m = 0, 1, ...
    (`exponential_from_bits`, or `from_bits` such as the Triton kernel's map, is evaluated on
    those patterns). Terms beyond contribute at most
    exp(-(1 - w) E_cut / w), which is below 1e-12 * w here.
    """
    if not 0 < w < 0.5:
        raise ValueError("tail_bias: w must lie in (0, 0.5)")
    W = 1.0 - w
    from_bits = exponential_from_bits if from_bits is None else from_bits
    if terms is None:
        terms = int(min(2**31, math.ceil(40 * w * 2**32) + 16))
    total = 0.0
    chunk = 1 << 22
    for start in range(0, terms, chunk):
        m = torch.arange(start, min(start + chunk, terms), dtype=torch.int64)
        e = from_bits(m).double()
        total += float(torch.exp(-W * e / w).sum()) * 2.0**-32
    e_cut = float(from_bits(torch.tensor([terms])).double()[0])
    if W * e_cut / w < 30:
        raise ValueError("tail_bias: too few terms for this w")
    return total / w - 1.0


def accept_bias(r: float) -> float:
    """Relative error of P(u < r) for the 47-bit acceptance uniform, computed from its grid."""
    if not 0 < r < 1:
        raise ValueError("accept_bias: r must lie in (0, 1)")
    # u = a 2**-24 + (b + 1/2) 2**-47 (then rounded to float32); for r < 2**-24 only a = 0 counts.
    if r < 2.0**-24:
        b_count = math.ceil(r * 2**47 - 0.5)  # b with (b + 1/2) 2**-47 < r
        return (b_count * 2.0**-47) / r - 1.0
    a = math.floor(r * 2**24)  # the full cells below r, then the partial one, to float32 rounding
    rest = r - a * 2.0**-24
    b_count = min(2**23, max(0, math.ceil(rest * 2**47 - 0.5)))
    return (a * 2.0**-24 + b_count * 2.0**-47) / r - 1.0

"""Counter-based random numbers keyed by (seed, position): the same bits in torch and in Triton.

A serving engine must give a request the same tokens whatever else is in the batch and in
whatever order, so its random draws may depend only on the request's own seed and on the
absolute position of the token being decided, never on a shared generator's state. We use
a stateless hash of (seed, position[, vocabulary index]):

    request key  K      = H(H(seed_lo ^ SEED_SALT) ^ seed_hi)
    acceptance   u_t    = bits_24(H(K ^ 2t)) * 2**-24                      in [0, 1)
    noise key    N_t    = H(K ^ (2t + 1))
    noise        E_t(y) = -log((bits_23(H(N_t ^ y)) + 1/2) * 2**-23)       Exp(1), > 0

where t is the absolute position of the token being decided (t < 2**31) and y a vocabulary index.
H is Chris Wellons' `triple32` integer hash (a bijection of uint32 with very low bias).
`triton_kernel.py` evaluates the same formulas with uint32 arithmetic, so both backends draw
identical uniforms; the exponential noise can differ in the last bit of the logarithm, which
changes a sampled token only on a near-tie.

torch has no uint32 multiply that wraps, so here uint32 values live in int64 tensors and a
32-bit product is assembled from 16-bit halves of the constant (no intermediate exceeds 2**49).
"""

from __future__ import annotations

import torch

__all__ = ["request_keys", "accept_uniforms", "noise_keys", "exponential_noise", "hash32"]

MASK32 = 0xFFFFFFFF
# triple32 (https://nullprogram.com/blog/2018/07/31/): shifts and odd multipliers.
SHIFT_1, MULT_1 = 17, 0xED5AD4BB
SHIFT_2, MULT_2 = 11, 0xAC4C1B51
SHIFT_3, MULT_3 = 15, 0x31848BAB
SHIFT_4 = 14
SEED_SALT = 0x9E3779B9


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


def request_keys(seeds: torch.Tensor) -> torch.Tensor:
    """[n] int64 seeds -> [n] request keys K in [0, 2**32)."""
    seeds = seeds.to(torch.int64)
    lo = seeds & MASK32
    hi = (seeds >> 32) & MASK32
    return hash32(hash32(lo ^ SEED_SALT) ^ hi)


def accept_uniforms(keys: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Acceptance uniforms u_t in [0, 1), float32 [n], from request keys [n] and positions [n]."""
    bits = hash32(keys ^ ((2 * positions.to(torch.int64)) & MASK32)) >> 8  # 24 random bits
    return bits.to(torch.float32) * (2.0**-24)


def noise_keys(keys: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Noise keys N_t, [n], from request keys [n] and positions [n]."""
    return hash32(keys ^ ((2 * positions.to(torch.int64) + 1) & MASK32))


def exponential_noise(keys: torch.Tensor, vocab: int, *, block_elements: int = 1 << 18) -> torch.Tensor:
    """Exp(1) noise E_t(y), float32 [n, V], for rows with noise keys [n]; always > 0.

    Works through blocks of rows so that the int64 temporaries stay cache-sized.
    """
    keys = keys.to(torch.int64)
    out = torch.empty(keys.numel(), vocab, dtype=torch.float32, device=keys.device)  # [n, V]
    y = torch.arange(vocab, dtype=torch.int64, device=keys.device)  # [V]
    rows = max(1, block_elements // max(vocab, 1))
    for start in range(0, keys.numel(), rows):
        block = keys[start:start + rows, None] ^ y[None, :]  # [rows, V]
        bits = hash32(block).bitwise_right_shift_(9)  # 23 random bits
        u = out[start:start + rows]
        u.copy_(bits).add_(0.5).mul_(2.0**-23)  # (0, 1), exact in float32
        u.log_().neg_()
    return out

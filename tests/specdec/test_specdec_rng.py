"""The random numbers: tail exactness (analytic on both backends, and sampled), 64-bit keys,
position ranges, drafter/verifier stream separation, and the int32 fast path."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import stats

from specdec import rejection_sample
from specdec import rng
from specdec_cases import load_triton_kernel

TAIL_BOUND = {1e-9: 3e-3, 1e-8: 3e-5, 1e-7: 3e-7}  # |b(w)| stated in rng.py's docstring


def old_generator_bias(w):
    """torch.rand's 24-bit -log(U) (values k 2**-24, no half step): b = x / (e^x - 1) - 1, x = 2**-24 / w."""
    x = 2.0**-24 / w
    return x / math.expm1(x) - 1


def old_seeded_bias(w):
    """The previous 23-bit midpoint noise: b = x / (2 sinh(x / 2)) - 1, x = 2**-23 / w."""
    x = 2.0**-23 / w
    return x / (2 * math.sinh(x / 2)) - 1


@pytest.mark.parametrize("w", sorted(TAIL_BOUND))
def test_tail_bias_of_the_torch_noise_map_is_within_the_stated_bound(w):
    b = rng.tail_bias(w)
    assert abs(b) < TAIL_BOUND[w], b
    # The same computation reproduces the numbers for the noise this replaced.
    assert old_generator_bias(1e-8) < -0.97 and old_seeded_bias(1e-7) < -0.05


@pytest.mark.parametrize("w", [1e-9, 1e-8])
def test_tail_bias_of_the_triton_noise_map_is_within_the_stated_bound(w):
    kernel = load_triton_kernel()
    b = rng.tail_bias(w, from_bits=kernel.exponential_from_bits_triton)
    assert abs(b) < TAIL_BOUND[w], b
    m = torch.arange(0, 1 << 12)
    m = torch.cat([m, torch.randint(0, 2**32, (1 << 12,), generator=torch.Generator().manual_seed(0))])
    e_torch = rng.exponential_from_bits(m)
    e_triton = kernel.exponential_from_bits_triton(m)
    torch.testing.assert_close(e_triton, e_torch, rtol=4e-7, atol=0)  # log1p vs Kahan's log1p: last bits


def test_noise_map_extremes_are_finite():
    e = rng.exponential_from_bits(torch.tensor([0, 1, 2**31 - 1, 2**31, 2**32 - 1]))
    assert torch.isfinite(e).all() and (e > 0).all()
    assert float(e[0]) == pytest.approx(2.0**-33, rel=1e-6)  # the smallest draw: float32 resolution near 0
    assert float(e.max()) == pytest.approx(-math.log(2.0**-24), rel=1e-6)


@pytest.mark.parametrize("r", [1e-9, 3e-8, 1e-6, 0.3, 0.999])
def test_acceptance_uniform_is_exact_in_the_tail(r):
    assert abs(rng.accept_bias(r)) < 1e-4
    u = rng.accept_uniforms(rng.request_keys(torch.arange(10_000)), torch.zeros(10_000, dtype=torch.int64))
    assert ((u >= 0) & (u < 1)).all() and u.dtype == torch.float32


@pytest.mark.slow
def test_rare_tokens_are_drawn_at_their_rate_through_the_public_api():
    """1,024 rows, each a head token and 2**20 tail tokens of weight w = 1e-8 (k = 0, default
    generator path): 10.7 tail draws expected; the noise this replaced gives 0.17 (torch.rand)
    or 0.33 (23 bits) expected, so seeing 3 or more would have been a 0.4% event for it."""
    V, w, rows, chunk = 1 + 2**20, 1e-8, 1024, 64
    row = torch.full((V,), w, dtype=torch.float64)
    row[0] = 1 - w * (V - 1)
    p = row.float()[None, :].expand(chunk, V).contiguous()
    k = torch.zeros(chunk, dtype=torch.int64)
    none = torch.zeros(0, dtype=torch.int64)
    g = torch.Generator().manual_seed(2024)
    tail = 0
    for _ in range(rows // chunk):
        tokens, _ = rejection_sample(p, None, none, k, generator=g, validate=False, max_num_draft_tokens=0)
        tail += int((tokens[:, 0] != 0).sum())
    expected = rows * w * (V - 1)
    assert stats.poisson.sf(tail - 1, rows * w * (V - 1) * (1 + old_seeded_bias(w))) < 5e-3 or tail >= 3
    assert tail >= 3, (tail, expected)
    assert stats.poisson.cdf(tail, expected) > 1e-4 and stats.poisson.sf(tail - 1, expected) > 1e-4


def test_request_keys_use_all_64_bits_of_the_seed():
    seeds = torch.tensor([5, 5 + 2**32, 5 - 2**40, -5, 2**63 - 1, -(2**63)])
    keys = rng.request_keys(seeds)
    assert len({tuple(key.tolist()) for key in keys}) == len(seeds)
    assert not torch.equal(rng.request_keys(seeds, rng.DRAFTER_STREAM), keys)


@pytest.mark.parametrize("positions, k", [([2**31], 0), ([-1], 0), ([2**31 - 3], 3), ([-(2**31)], 0)])
def test_positions_out_of_range_raise(positions, k):
    p = torch.full((k + 1, 4), 0.25)
    q = torch.full((k, 4), 0.25)
    with pytest.raises(ValueError, match="MAX_POSITION"):
        rejection_sample(p, q, torch.zeros(k, dtype=torch.int64), torch.tensor([k]), seeds=torch.tensor([1]),
                         positions=torch.tensor(positions))
    rejection_sample(p, q, torch.zeros(k, dtype=torch.int64), torch.tensor([k]), seeds=torch.tensor([1]),
                     positions=torch.tensor([rng.MAX_POSITION - k]))  # the last valid one


def test_int32_fast_path_matches_the_int64_reference():
    x = torch.randint(0, 2**32, (1 << 14,), generator=torch.Generator().manual_seed(1))
    x = torch.cat([x, torch.tensor([0, 1, 2**31 - 1, 2**31, 2**32 - 1])])
    x32 = torch.where(x >= 2**31, x - 2**32, x).to(torch.int32)
    fast = rng._lowbias32_i32_(x32.clone(), torch.empty_like(x32)).to(torch.int64) & rng.MASK32
    assert torch.equal(fast, rng.lowbias32(x))
    fast = rng._hash32_i32_(x32.clone(), torch.empty_like(x32)).to(torch.int64) & rng.MASK32
    assert torch.equal(fast, rng.hash32(x))


def _first_token_frequencies(stream_for_drafts, n=40_000):
    p = torch.tensor([[0.4, 0.3, 0.2, 0.1]])
    q = torch.tensor([[0.1, 0.2, 0.3, 0.4]])
    seeds = torch.arange(n, dtype=torch.int64) * 7 + 1
    positions = torch.full((n,), 100, dtype=torch.int64)
    drafts = rng._race_sample(q.expand(n, 4), seeds, positions, stream_for_drafts)  # x ~ q at position 100
    tokens, _ = rejection_sample(p.expand(2 * n, 4).contiguous(), q.expand(n, 4).contiguous(), drafts,
                                 torch.ones(n, dtype=torch.int64), seeds=seeds, positions=positions)
    counts = np.bincount(tokens[:, 0].numpy(), minlength=4)
    return counts, stats.chisquare(counts, n * np.array([0.4, 0.3, 0.2, 0.1])).pvalue


def test_a_drafter_on_the_verifiers_stream_breaks_exactness_and_is_refused():
    counts, p_value = _first_token_frequencies(rng.VERIFIER_STREAM)
    assert p_value < 1e-6, counts  # the hazard: drafts correlated with the verifier's own draws
    counts, p_value = _first_token_frequencies(rng.DRAFTER_STREAM)
    assert p_value > 1e-4, counts
    q = torch.full((2, 4), 0.25)
    with pytest.raises(ValueError, match="verifier's own stream"):
        rng.draft_sample(q, torch.tensor([1, 2]), torch.tensor([0, 0]), stream=rng.VERIFIER_STREAM)
    assert rng.draft_sample(q, torch.tensor([1, 2]), torch.tensor([0, 0])).shape == (2,)

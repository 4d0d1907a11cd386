"""The torch backend's fast paths give the answers of the plain computation they replace.

- `rng.neg_uniform_block_` / `log_noise_block_` (the distributed first xorshift, the fused
  scaling, the ceil-based unsigned fix) against `lowbias32` + `exponential_from_bits`;
- `sampler._first_min` (vectorised chunk minima) against torch's min / argmin;
- `sampler._bounded_min` (log1p only in the chunks that can win) against the full race;
- the default call (validate=True: grouped rows, bounded race, rerun over p only where needed)
  against the sync-free call (validate=False: mixed blocks, full race, rerun always computed);
- the reused block buffers never leak into results.
"""

from __future__ import annotations

import pytest
import torch

from specdec import rejection_sample, rng, sampler, workspace

EDGE_KEYS = [0, 1, 2**16 - 1, 2**16, 2**31 - 1, 2**31, 2**32 - 1, 0x9E3779B9]


@pytest.mark.parametrize("V", [1, 7, 256, 70_001])  # 70_001 > 2**16: y >>> 16 is not 0
def test_block_noise_is_the_reference_noise_bit_for_bit(V):
    keys = torch.tensor(EDGE_KEYS, dtype=torch.int64)
    y = torch.arange(V, dtype=torch.int64)
    bits = rng.lowbias32(keys[:, None] ^ y[None, :])
    expected = rng.exponential_from_bits(bits)
    got = rng.noise_block_(keys, torch.empty(len(EDGE_KEYS), V))
    assert torch.equal(got, expected)
    t = rng.neg_uniform_block_(keys, torch.empty(len(EDGE_KEYS), V))
    assert bool((t < 0).all()) and bool((t >= -1).all())
    assert torch.equal(rng.log_from_neg_uniform_(t.clone()), -expected)
    assert bool((-t <= expected).all())  # v <= E: the bound the bounded race relies on


def test_block_noise_covers_every_bit_pattern_edge():
    """The float map on the bit patterns where the fused scaling and the unsigned fix could slip:
    0, the int32 sign boundary, float32's 2**24 rounding boundary and the cap near 1."""
    patterns = [0, 1, 2, 2**24 - 1, 2**24, 2**24 + 1, 2**25 + 3, 2**31 - 129, 2**31 - 128, 2**31 - 1, 2**31,
                2**31 + 1, 2**32 - 129, 2**32 - 128, 2**32 - 2, 2**32 - 1]
    x = torch.tensor(patterns, dtype=torch.int64)
    x32 = torch.where(x >= 2**31, x - 2**32, x).to(torch.int32)[None, :]
    out = torch.empty(1, len(patterns))
    # signed_uniform_block_'s float part, applied to given bits (the hash is checked above).
    out.copy_(x32)
    torch.add(rng._MINUS_HALF_STEP, out, alpha=-2.0**-32, out=out)
    t = rng.neg_uniform_from_signed_(out, torch.empty_like(out))
    assert torch.equal(rng.log_from_neg_uniform_(t)[0], -rng.exponential_from_bits(x))


def test_first_min_is_torch_argmin():
    g = torch.Generator().manual_seed(0)
    for V in (1, 2, 255, 256, 257, 1000, 4096, 32003):
        for scale in (1.0, 0.0):  # 0.0: every entry ties
            score = torch.randint(-5, 5, (6, V), generator=g).float() * scale  # many ties
            score[0, -1] = -100.0  # the minimum in a short last chunk
            best, idx = sampler._first_min(score)
            assert torch.equal(best, score.min(dim=1).values)
            assert torch.equal(idx, score.argmin(dim=1)), V


def _full_race(w, t):
    return sampler._first_min(w / rng.log_from_neg_uniform_(t.clone()))


@pytest.mark.parametrize("kind", ["diffuse", "peaked", "residual", "uniform", "tiny", "one_entry"])
@pytest.mark.parametrize("V", [3, 256, 1000, 32003])
def test_bounded_min_is_the_full_races_min(kind, V):
    g = torch.Generator().manual_seed(V)
    r = 5
    logits = torch.randn(r, V, generator=g)
    w = {
        "diffuse": lambda: torch.softmax(logits * 0.5, -1),
        "peaked": lambda: torch.softmax(logits * 8, -1),
        "residual": lambda: torch.softmax(logits * 2, -1) - torch.softmax(torch.randn(r, V, generator=g) * 2, -1),
        "uniform": lambda: torch.full((r, V), 1.0 / V),  # candidates everywhere
        "tiny": lambda: torch.softmax(logits, -1) * 1e-38,  # subnormal weights
        "one_entry": lambda: torch.zeros(r, V).index_fill_(1, torch.tensor([V - 1]), 1.0),
    }[kind]()
    keys = torch.randint(0, 2**32, (r,), generator=g)
    t = rng.neg_uniform_block_(keys, torch.empty(r, V))
    best, tok = sampler._bounded_min(w, t, w / t)
    full_best, full_tok = _full_race(w, t)
    positive = full_best < 0
    assert torch.equal(best < 0, positive)
    assert torch.equal(best[positive], full_best[positive])
    assert torch.equal(tok[positive], full_tok[positive])


def test_bounded_min_reports_rows_without_a_positive_weight():
    w = torch.tensor([[0.0, -0.1, 0.0, -0.2], [0.1, 0.0, 0.3, 0.0]])
    t = rng.neg_uniform_block_(torch.tensor([5, 6]), torch.empty(2, 4))
    best, tok = sampler._bounded_min(w, t, w / t)
    assert best[0] >= 0 and best[1] < 0
    assert tok[1] == _full_race(w, t)[1][1]


def _random_step(ks, V, *, seed, dtype=torch.float32, one_hot=False, close=0.7):
    g = torch.Generator().manual_seed(seed)
    k = torch.tensor(ks, dtype=torch.int64)
    N, B = int(k.sum()), len(ks)
    q_logits = torch.randn(N, V, generator=g) * 2
    p_logits = torch.randn(N + B, V, generator=g) * 2
    rows = torch.arange(N) + torch.repeat_interleave(torch.arange(B), k)
    p_logits[rows] = close * q_logits + (1 - close) * p_logits[rows]
    p, q = torch.softmax(p_logits, -1), torch.softmax(q_logits, -1)
    drafts = torch.multinomial(q, 1, generator=g)[:, 0] if N else torch.zeros(0, dtype=torch.int64)
    seeds = torch.randint(-2**62, 2**62, (B,), generator=g)
    positions = torch.randint(0, 10_000, (B,), generator=g)
    return (p.to(dtype), None if one_hot else q.to(dtype), drafts, k), seeds, positions


@pytest.mark.parametrize("one_hot", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("ks, V", [([3, 0, 2, 4, 1, 2, 4, 4, 0, 3], 1000), ([4] * 12, 32003), ([1, 2], 3),
                                    ([2, 0, 5], 256)])
def test_default_call_matches_the_sync_free_call(ks, V, dtype, one_hot):
    args, seeds, positions = _random_step(ks, V, seed=V + len(ks), dtype=dtype, one_hot=one_hot)
    a = rejection_sample(*args, seeds=seeds, positions=positions)  # grouped rows, bounded race
    b = rejection_sample(*args, seeds=seeds, positions=positions, validate=False)  # mixed blocks, full race
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


def test_small_blocks_give_the_same_tokens(monkeypatch):
    """Block boundaries (and the grouping of residual and bonus rows) do not change any token."""
    args, seeds, positions = _random_step([3, 0, 2, 4, 1, 2, 4, 4], 2000, seed=4)
    expected = rejection_sample(*args, seeds=seeds, positions=positions)
    monkeypatch.setattr(sampler, "_ROW_BLOCK_ELEMENTS", 4000)  # 2 rows per block
    for validate in (True, False):
        got = rejection_sample(*args, seeds=seeds, positions=positions, validate=validate)
        assert torch.equal(got[0], expected[0]) and torch.equal(got[1], expected[1])


def test_empty_residual_rerun_agrees_between_the_paths():
    """q(x) tiny and p(x) = q(x) / 2, p <= q elsewhere: half the first drafts are rejected with an
    empty residual, and the token is then drawn from p, in the bounded and the full race alike."""
    V, n = 300, 64
    g = torch.Generator().manual_seed(7)
    base = torch.softmax(torch.randn(V, generator=g), -1)
    q = base.clone()
    q[0] = 2e-6
    q /= q.sum()
    p = q.clone()
    p[0] = q[0] / 2  # sum(p) = 1 - 1e-6: within float32's default tolerance
    target = torch.stack([p, base]).repeat(n, 1)  # each request: the draft row's target, then a bonus row
    args = (target, q.expand(n, V).contiguous(), torch.zeros(n, dtype=torch.int64), torch.ones(n, dtype=torch.int64))
    seeds = torch.arange(n, dtype=torch.int64) * 977
    a = rejection_sample(*args, seeds=seeds)
    b = rejection_sample(*args, seeds=seeds, validate=False)
    assert torch.equal(a[0], b[0])
    rejected = a[1] == 1
    assert 10 < int(rejected.sum()) < n - 10
    assert bool((a[0][rejected, 0] != 0).any())  # drawn from p over the whole row, not the (empty) residual


def test_results_do_not_alias_the_reused_buffers():
    args, seeds, positions = _random_step([2, 3, 1], 500, seed=1)
    first = rejection_sample(*args, seeds=seeds, positions=positions)
    kept = (first[0].clone(), first[1].clone())
    other, seeds2, positions2 = _random_step([4, 0, 2, 2], 500, seed=2)
    rejection_sample(*other, seeds=seeds2, positions=positions2)
    rejection_sample(*other, seeds=seeds2, positions=positions2, validate=False)
    assert torch.equal(first[0], kept[0]) and torch.equal(first[1], kept[1])
    assert workspace.held_bytes() > 0
    workspace.release()
    assert workspace.held_bytes() == 0
    again = rejection_sample(*args, seeds=seeds, positions=positions)
    assert torch.equal(again[0], kept[0])

"""The logits-level entry point: processing, greedy requests, per-request seeds, exactness."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from specdec import process_logits, verify_from_logits
from specdec.reference import exact_output_distribution
from specdec_cases import check_exact, load_triton_kernel


def numpy_process(logits, temperature, top_k=None, top_p=None):
    """Independent float64 version of the processing, one row at a time."""
    logits = np.asarray(logits, dtype=np.float64)
    if temperature == 0:
        out = np.zeros_like(logits)
        out[np.argmax(logits)] = 1.0
        return out
    x = logits / temperature
    V = x.size
    keep = np.ones(V, dtype=bool)
    if top_k is not None and 0 < top_k < V:
        kth = np.sort(x)[::-1][top_k - 1]
        keep &= x >= kth
    if top_p is not None and top_p < 1:
        probs = np.exp(x - x[keep].max()) * keep
        probs /= probs.sum()
        order = sorted(range(V), key=lambda i: (-probs[i], i))  # most likely first, ties by index
        mass = 0.0
        kept_p = np.zeros(V, dtype=bool)
        for i in order:
            if mass >= top_p or not keep[i]:
                break
            kept_p[i] = True
            mass += probs[i]
        keep &= kept_p
    e = np.where(keep, np.exp(x - x[keep].max()), 0.0)
    return e / e.sum()


@pytest.mark.parametrize(
    "temperature, top_k, top_p",
    [(1.0, None, None), (0.7, None, None), (1.3, 3, None), (1.0, None, 0.8), (0.5, 5, 0.6), (1.0, 0, 1.0),
     (0.0, None, None), (2.0, 1, None), (1.0, 20, 0.3)],
)
def test_process_logits_matches_a_numpy_reference(temperature, top_k, top_p):
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(4, 20, generator=g) * 2
    logits[3, :4] = 5.0  # ties at the top
    R = logits.shape[0]
    probs = process_logits(
        logits,
        torch.full((R,), temperature),
        None if top_k is None else torch.full((R,), top_k),
        None if top_p is None else torch.full((R,), top_p),
    )
    for r in range(R):
        expected = numpy_process(logits[r].numpy(), temperature, top_k, top_p)
        np.testing.assert_allclose(probs[r].numpy(), expected, atol=1e-6)


def test_greedy_requests_accept_iff_the_draft_is_the_target_argmax():
    V = 7
    target = torch.full((4, V), -1.0)  # request 0: k = 3 -> 4 rows
    target[0, 2] = target[1, 5] = target[2, 1] = target[3, 6] = 3.0
    drafts = torch.tensor([2, 5, 4])  # the third draft is wrong: argmax is 1
    for draft_logits in (None, torch.randn(3, V)):
        tokens, n = verify_from_logits(target, draft_logits, drafts, torch.tensor([3]),
                                       temperature=0.0, seeds=torch.tensor([1]))
        assert n.tolist() == [3] and tokens.tolist() == [[2, 5, 1, -1]]
    tokens, n = verify_from_logits(target, None, torch.tensor([2, 5, 1]), torch.tensor([3]),
                                   temperature=0.0, seeds=torch.tensor([1]))
    assert n.tolist() == [4] and tokens.tolist() == [[2, 5, 1, 6]]  # all accepted, bonus = argmax


def _replicated_logits(n, V=6, k=2, seed=0):
    g = torch.Generator().manual_seed(seed)
    target = torch.randn(k + 1, V, generator=g) * 1.5
    draft = target[:k] + torch.randn(k, V, generator=g)
    return target, draft


def test_sampled_requests_are_exact_after_processing():
    """n copies of one request with distinct seeds; the exact distribution is computed from the
    processed p and q (whose processing is checked against numpy above)."""
    n, V, k = 100_000, 6, 2
    target, draft = _replicated_logits(n, V, k)
    T, top_k, top_p = 0.8, 4, 0.9
    p = process_logits(target, torch.full((k + 1,), T), torch.full((k + 1,), top_k), torch.full((k + 1,), top_p))
    q = process_logits(draft, torch.full((k,), T), torch.full((k,), top_k), torch.full((k,), top_p))
    drafts = torch.tensor([int(q[0].argmax()), int(q[1].argmax())])
    exact = exact_output_distribution(p.double().numpy(), q.double().numpy(), drafts.numpy())
    tokens, _ = verify_from_logits(
        target.repeat(n, 1), draft.repeat(n, 1), drafts.repeat(n), torch.full((n,), k),
        temperature=torch.full((n,), T), top_k=torch.full((n,), top_k), top_p=torch.full((n,), top_p),
        seeds=torch.arange(n) + 1000, positions=torch.full((n,), 42),
    )
    result = check_exact(tokens.numpy(), exact)
    assert result.ok, str(result)


def test_a_mixed_batch_matches_each_request_alone():
    """Greedy and sampled requests, different top-k/top-p, one-hot and full drafts: each
    request's tokens are those it gets alone (same seed and position)."""
    V = 50
    g = torch.Generator().manual_seed(1)
    ks = [2, 0, 3, 1]
    temps = [0.0, 1.0, 0.7, 1.2]
    top_k = [0, 10, 5, 0]
    top_p = [1.0, 0.9, 1.0, 0.5]
    target = torch.randn(sum(ks) + len(ks), V, generator=g) * 2
    draft = torch.randn(sum(ks), V, generator=g) * 2
    drafts = torch.cat([process_logits(draft[i:i + 1], torch.tensor([1.0]), torch.tensor([5])).argmax(-1)
                        for i in range(sum(ks))])  # inside every request's top-5 of its draft row
    seeds, positions = torch.tensor([3, 1, 4, 1]), torch.tensor([10, 20, 30, 40])
    kwargs = dict(temperature=torch.tensor(temps), top_k=torch.tensor(top_k), top_p=torch.tensor(top_p),
                  seeds=seeds, positions=positions)
    full_tokens, full_n = verify_from_logits(target, draft, drafts, torch.tensor(ks), **kwargs)
    t0, d0 = 0, 0
    for i, k in enumerate(ks):
        alone_kwargs = {key: value[i:i + 1] for key, value in kwargs.items()}
        tokens, n = verify_from_logits(target[t0:t0 + k + 1], draft[d0:d0 + k], drafts[d0:d0 + k],
                                       torch.tensor([k]), **alone_kwargs)
        assert n[0] == full_n[i] and torch.equal(tokens[0, : n[0]], full_tokens[i, : n[0]])
        t0, d0 = t0 + k + 1, d0 + k


def test_backends_agree_on_logits():
    load_triton_kernel()
    V = 300
    g = torch.Generator().manual_seed(2)
    ks = torch.tensor([3, 1, 0, 2])
    target = torch.randn(int(ks.sum()) + 4, V, generator=g) * 3
    drafts = torch.randint(0, V, (int(ks.sum()),), generator=g)
    kwargs = dict(temperature=torch.tensor([1.0, 0.0, 0.5, 2.0]), top_p=torch.tensor([0.95, 1.0, 1.0, 1.0]),
                  seeds=torch.tensor([9, 8, 7, 6]), positions=torch.tensor([100, 0, 5, 17]))
    a = verify_from_logits(target, None, drafts, ks, **kwargs)
    b = verify_from_logits(target, None, drafts, ks, backend="triton", **kwargs)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


def test_a_draft_outside_the_processed_draft_support_is_refused():
    target, draft = _replicated_logits(1, V=6, k=1)
    draft[0] = torch.tensor([5.0, 4.0, 0.0, 0.0, 0.0, -3.0])
    with pytest.raises(ValueError, match="q\\(x\\) = 0"):
        verify_from_logits(target[:2], draft, torch.tensor([5]), torch.tensor([1]),
                           temperature=1.0, top_k=2, seeds=torch.tensor([0]))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(temperature=-1.0), "temperature"),
        (dict(temperature=1.0, top_p=0.0), "top_p"),
        (dict(temperature=torch.ones(3)), "one entry per request"),
    ],
)
def test_bad_parameters_raise(kwargs, message):
    target, draft = _replicated_logits(1, V=6, k=1)
    with pytest.raises(ValueError, match=message):
        verify_from_logits(target, draft, torch.tensor([0]), torch.tensor([1]), seeds=torch.tensor([0]), **kwargs)

"""The sync-free path, dtype-derived tolerances on real softmax rows, and bad logits."""

from __future__ import annotations

import sys

import pytest
import torch

from specdec import rejection_sample, sum_tolerance, verify_from_logits
from specdec.logits import GREEDY_TEMPERATURE
from specdec_cases import load_triton_kernel

_HOST_READS = ("__bool__", "__int__", "__float__", "__index__", "item", "tolist", "numpy", "cpu")


@pytest.fixture
def host_reads(monkeypatch):
    """Count tensor-to-host conversions made from specdec's own code (each is a sync on a GPU)."""
    calls = []
    for name in _HOST_READS:
        original = getattr(torch.Tensor, name)

        def wrapper(self, *args, _original=original, _name=name, **kwargs):
            caller = sys._getframe(1).f_globals.get("__name__", "")
            if caller.startswith("specdec"):
                calls.append(f"{_name} in {caller}:{sys._getframe(1).f_lineno}")
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(torch.Tensor, name, wrapper)
    return calls


def _batch():
    g = torch.Generator().manual_seed(0)
    k = torch.tensor([3, 0, 2, 1])
    N, B, V = int(k.sum()), 4, 300
    p = torch.softmax(torch.randn(N + B, V, generator=g), -1)
    q = torch.softmax(torch.randn(N, V, generator=g), -1)
    return p, q, torch.randint(0, V, (N,), generator=g), k


@pytest.mark.parametrize("backend", ["torch", "triton"])
@pytest.mark.parametrize("randomness", ["seeds", "explicit", "generator"])
def test_validate_false_with_max_num_draft_tokens_issues_no_host_sync(backend, randomness, host_reads):
    if backend == "triton":
        load_triton_kernel()
    p, q, drafts, k = _batch()
    kwargs = {"seeds": dict(seeds=torch.arange(4), positions=torch.tensor([0, 5, 9, 2])),
              "explicit": dict(uniforms=torch.rand(drafts.numel()), noise=torch.ones(4, 300)),
              "generator": dict(generator=torch.Generator().manual_seed(1))}[randomness]
    host_reads.clear()
    tokens, n = rejection_sample(p, q, drafts, k, validate=False, max_num_draft_tokens=3, backend=backend, **kwargs)
    assert host_reads == []
    assert tokens.shape == (4, 4)
    # The instrumentation sees the syncs of the other paths.
    rejection_sample(p, q, drafts, k, validate=False, backend=backend, **kwargs)  # width computed: one read
    assert host_reads
    with pytest.raises(ValueError, match="max_num_draft_tokens = 2"):
        rejection_sample(p, q, drafts, k, max_num_draft_tokens=2, backend=backend, **kwargs)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_default_tolerance_accepts_softmax_rows_cast_to_low_precision(dtype):
    V = 128256
    g = torch.Generator().manual_seed(3)
    sigma = torch.linspace(1, 4, 24)[:, None]
    probs = torch.softmax(torch.randn(24, V, generator=g) * sigma * 2, dim=-1).to(dtype)  # peaked rows
    err = (probs.float().sum(-1) - 1).abs()
    tol = sum_tolerance(dtype, V)
    assert (err <= tol).all(), (err.max(), tol)
    assert err.max() > 1e-3 or dtype == torch.float16  # the old fixed 1e-3 would have refused bf16 rows
    rejection_sample(probs, None, torch.zeros(0, dtype=torch.int64), torch.zeros(24, dtype=torch.int64),
                     seeds=torch.arange(24))
    small = torch.tensor([[0.1, 0.2, 0.3, 0.4]], dtype=torch.bfloat16)  # sums to 1.001465 in bf16
    rejection_sample(small, None, torch.zeros(0, dtype=torch.int64), torch.tensor([0]), seeds=torch.tensor([1]))


def test_float32_tolerance_is_tight():
    assert sum_tolerance(torch.float32, 128256) < 1e-4
    assert 3.9e-3 < sum_tolerance(torch.bfloat16, 128256) < 5e-3


@pytest.mark.parametrize("temperature", [0.0, 1.0])
@pytest.mark.parametrize("bad, what", [(float("nan"), "NaN"), (float("inf"), "\\+inf"), (None, "-inf everywhere")])
def test_bad_logits_raise_for_greedy_and_sampled_requests(temperature, bad, what):
    V = 6
    target = torch.randn(4, V)  # request 0: k = 1 (2 rows); request 1: k = 1 (2 rows)
    if bad is None:
        target[3] = float("-inf")
    else:
        target[3, 2] = bad
    with pytest.raises(ValueError, match=f"request 1: target_logits row 1 .* has {what} logits"):
        verify_from_logits(target, None, torch.tensor([0, 1]), torch.tensor([1, 1]),
                           temperature=temperature, seeds=torch.tensor([1, 2]))


def test_tiny_temperatures_are_greedy_and_overflow_raises():
    target = torch.tensor([[0.0, 3.0, 1.0], [2.0, 0.0, 1.0]])
    args = (target, None, torch.tensor([1]), torch.tensor([1]))
    greedy = verify_from_logits(*args, temperature=0.0, seeds=torch.tensor([7]))
    for t in (1e-39, GREEDY_TEMPERATURE / 2):
        out = verify_from_logits(*args, temperature=t, seeds=torch.tensor([7]))
        assert torch.equal(out[0], greedy[0]) and out[0].tolist() == [[1, 0]]
    with pytest.raises(ValueError, match="request 0: target logits / temperature overflow"):
        verify_from_logits(target * 1e34, None, torch.tensor([1]), torch.tensor([1]),
                           temperature=GREEDY_TEMPERATURE, seeds=torch.tensor([7]))

"""`rejection_sample`'s contract: shapes, padding, input checks, and properties of its torch backend."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec import SUM_TOLERANCE, rejection_sample, sum_tolerance


def small_batch():
    p = torch.tensor([[0.1, 0.2, 0.7], [0.3, 0.3, 0.4], [0.5, 0.25, 0.25], [0.2, 0.2, 0.6]])  # k = 2, 0 -> 3 + 1 rows
    q = torch.tensor([[0.2, 0.2, 0.6], [0.6, 0.2, 0.2]])
    return p, q, torch.tensor([2, 0]), torch.tensor([2, 0])


def test_output_shapes_padding_and_counts():
    p, q, drafts, k = small_batch()
    # u = 0 accepts every draft with p(x) > 0: request 0 emits both drafts and its bonus token.
    tokens, n = rejection_sample(p, q, drafts, k, uniforms=torch.zeros(2), noise=torch.ones(2, 3))
    assert tokens.dtype == torch.int64 and n.dtype == torch.int64
    assert tokens.shape == (2, 3) and n.tolist() == [3, 1]
    # With E = 1 the race picks argmax: request 0's bonus row [0.5, 0.25, 0.25] -> 0; request 1
    # (k = 0) samples its only row [0.2, 0.2, 0.6] -> 2.
    assert tokens.tolist() == [[2, 0, 0], [2, -1, -1]]


def test_first_rejection_emits_from_the_residual():
    p, q, drafts, k = small_batch()
    # Draft 1 at row 0: p/q = 0.2/0.2 = 1, kept; draft 0 at row 1: p/q = 0.3/0.6, rejected at u = 0.9.
    drafts = torch.tensor([1, 0])
    tokens, n = rejection_sample(p, q, drafts, k, uniforms=torch.tensor([0.9, 0.9]), noise=torch.ones(2, 3))
    assert n.tolist() == [2, 1]
    # residual at row 1: max([0.3, 0.3, 0.4] - [0.6, 0.2, 0.2], 0) = [0, 0.1, 0.2] -> token 2 wins with E = 1
    assert tokens.tolist() == [[1, 2, -1], [2, -1, -1]]


def test_empty_batch():
    tokens, n = rejection_sample(torch.zeros(0, 5), None, torch.zeros(0, dtype=torch.long), torch.zeros(0, dtype=torch.long))
    assert tokens.shape == (0, 1) and n.shape == (0,)


def test_generator_makes_runs_reproducible():
    p, q, drafts, k = small_batch()
    a = rejection_sample(p, q, drafts, k, generator=torch.Generator().manual_seed(3))
    b = rejection_sample(p, q, drafts, k, generator=torch.Generator().manual_seed(3))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


@pytest.mark.parametrize(
    "mutate, error, message",
    [
        (lambda a: a.update(target_probs=a["target_probs"][:3]), ValueError, "expected sum_i \\(k_i \\+ 1\\) = 4"),
        (lambda a: a.update(target_probs=a["target_probs"][:, :2]), ValueError, "draft_probs must be"),
        (lambda a: a.update(draft_probs=a["draft_probs"][:1]), ValueError, "draft_probs must be"),
        (lambda a: a.update(draft_token_ids=torch.tensor([2])), ValueError, "expected sum_i \\(k_i \\+ 1\\) = 3"),
        (lambda a: a.update(draft_token_ids=torch.tensor([2, 3])), ValueError, "outside the vocabulary"),
        (lambda a: a.update(draft_token_ids=torch.tensor([-1, 0])), ValueError, "outside the vocabulary"),
        (lambda a: a.update(draft_token_ids=torch.tensor([2.0, 0.0])), ValueError, "integer tensor"),
        (lambda a: a.update(num_draft_tokens=torch.tensor([3, -1])), ValueError, ">= 0"),
        (lambda a: a.update(num_draft_tokens=torch.tensor([[2, 0]])), ValueError, "1-D integer tensor"),
        # Row 3 is request 1's only row (k_1 = 0): the sampler always reads it in full.
        (lambda a: a["target_probs"].__setitem__((3, 1), float("nan")), ValueError, "row 3 has NaN"),
        (lambda a: a["target_probs"].__setitem__((3, 1), float("inf")), ValueError, "row 3 has NaN or infinite"),
        (lambda a: a["target_probs"].__setitem__((3, slice(None)), torch.tensor([-0.1, 0.4, 0.7])), ValueError,
         "row 3 has negative"),
        (lambda a: a["target_probs"].__setitem__((3, 0), 0.3), ValueError, "row 3 sums to 1.1"),
        # Gathered p(x), q(x) are checked at every draft, read in full or not.
        (lambda a: a["target_probs"].__setitem__((1, 0), float("nan")), ValueError, "target_probs at draft 1"),
        (lambda a: a["draft_probs"].__setitem__((0, 2), 1.5), ValueError, "draft_probs at draft 0"),
        (lambda a: a["draft_probs"].__setitem__((1, slice(None)), torch.tensor([0.0, 0.5, 0.5])), ValueError,
         "q\\(x\\) = 0"),
        (lambda a: a.update(target_probs=torch.log(a["target_probs"])), ValueError, "negative|logits"),
        (lambda a: a.update(target_probs=a["target_probs"].to(torch.int64)), TypeError, "floating"),
        (lambda a: a.update(backend="cuda"), ValueError, "backend must be"),
        (lambda a: a.update(uniforms=torch.zeros(2)), ValueError, "both uniforms= and noise="),
        (lambda a: a.update(uniforms=torch.zeros(3), noise=torch.ones(2, 3)), ValueError, "uniforms must be"),
        (lambda a: a.update(uniforms=torch.ones(2), noise=torch.ones(2, 3)), ValueError, "\\[0, 1\\)"),
        (lambda a: a.update(uniforms=torch.zeros(2), noise=torch.zeros(2, 3)), ValueError, "noise must be"),
        (lambda a: a.update(seeds=torch.tensor([1, 2]), generator=torch.Generator()), ValueError, "not both"),
        (lambda a: a.update(seeds=torch.tensor([1])), ValueError, "seeds must be"),
        (lambda a: a.update(positions=torch.tensor([1, 2])), ValueError, "only used with seeds"),
    ],
)
def test_bad_input_raises_a_clear_error(mutate, error, message):
    p, q, drafts, k = small_batch()
    args = dict(target_probs=p.clone(), draft_probs=q.clone(), draft_token_ids=drafts, num_draft_tokens=k)
    mutate(args)
    with pytest.raises(error, match=message):
        rejection_sample(**args)


def test_sum_tolerance_is_stated_and_adjustable():
    p, q, drafts, k = small_batch()
    tol = sum_tolerance(torch.float32, 3)
    p[3] = torch.tensor([0.2, 0.2, 0.6 + tol / 2])  # request 1's row, always read
    rejection_sample(p, q, drafts, k)  # within the default tolerance
    with pytest.raises(ValueError, match="sum_tol"):
        rejection_sample(p, q, drafts, k, sum_tol=tol / 4)
    p[3] = torch.tensor([0.2, 0.2, 0.6 + SUM_TOLERANCE / 2])
    with pytest.raises(ValueError, match="row 3 sums to"):
        rejection_sample(p, q, drafts, k)  # the old fixed 1e-3 is far looser than float32 needs
    rejection_sample(p, q, drafts, k, sum_tol=SUM_TOLERANCE)


def test_validate_false_skips_value_checks_not_shapes():
    p, q, drafts, k = small_batch()
    q[1] = torch.tensor([0.0, 0.5, 0.5])  # q(x) = 0 at draft 0 of row 1: not checked
    rejection_sample(p, q, drafts, k, validate=False)
    with pytest.raises(ValueError):
        rejection_sample(p[:3], q, drafts, k, validate=False)


@st.composite
def one_step_batches(draw):
    """B requests with k = 1 over a small vocabulary, plus explicit random numbers."""
    B = draw(st.integers(1, 6))
    V = draw(st.integers(2, 9))
    rows = draw(st.lists(st.lists(st.floats(0, 1, allow_subnormal=False), min_size=V, max_size=V),
                         min_size=3 * B, max_size=3 * B))
    w = np.array(rows) + 1e-3
    w = np.where(np.array(rows) < 0.3, 0.0, w)  # zeros: disjoint supports happen
    w[:, 0] += 1e-2  # no empty row
    w = w / w.sum(axis=1, keepdims=True)
    p = torch.tensor(w[: 2 * B], dtype=torch.float32)  # [2B, V]: draft row and bonus row per request
    q = torch.tensor(w[2 * B:], dtype=torch.float32)  # [B, V]
    drafts = torch.tensor([draw(st.sampled_from(np.flatnonzero(w[2 * B + i]).tolist())) for i in range(B)])
    u = torch.tensor(draw(st.lists(st.floats(0, 0.9999999), min_size=B, max_size=B)), dtype=torch.float32)  # < 1 in float32
    e = torch.tensor(draw(st.lists(st.floats(0.01, 20), min_size=B * V, max_size=B * V)), dtype=torch.float32)
    return p, q, drafts, u, e.reshape(B, V)


@settings(max_examples=150, deadline=None)
@given(one_step_batches())
def test_one_step_rule_holds_row_by_row(batch):
    """Accept iff u * q(x) < p(x); on rejection the token is in the residual's support
    (p(y) > q(y)) and wins the race max(p - q, 0) / E; on acceptance the bonus wins p / E."""
    p, q, drafts, u, e = batch
    B = drafts.numel()
    tokens, n = rejection_sample(p, q, drafts, torch.ones(B, dtype=torch.long), uniforms=u, noise=e)
    for i in range(B):
        x, p_row, bonus, q_row = int(drafts[i]), p[2 * i], p[2 * i + 1], q[i]
        accepted = bool(u[i] * q_row[x] < p_row[x])
        assert n[i] == (2 if accepted else 1)
        if accepted:
            assert tokens[i, 0] == x and tokens[i, 1] == int(torch.argmax(bonus / e[i]))
        else:
            w = (p_row - q_row).clamp(min=0)
            y = int(tokens[i, 0])
            if w.sum() > 0:
                assert p_row[y] > q_row[y]
                assert y == int(torch.argmax(w / e[i]))
            else:
                assert y == int(torch.argmax(p_row / e[i]))

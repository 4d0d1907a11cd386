"""The float64 reference: the single-step rule, the residual and the exact enumerators."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from specdec import reference
from specdec.reference import (
    accept_probability,
    exact_output_distribution,
    marginal_output_distribution,
    residual,
    single_step_output_distribution,
    speculative_verify,
)


@st.composite
def distributions(draw, vocab=None, min_vocab=2, max_vocab=12, sparse=True):
    """A float64 probability vector, often with exact zeros."""
    V = vocab if vocab is not None else draw(st.integers(min_vocab, max_vocab))
    weights = draw(st.lists(st.floats(0.0, 1.0, allow_nan=False, allow_subnormal=False), min_size=V, max_size=V))
    w = np.array(weights)
    if sparse:
        w = np.where(w < 0.25, 0.0, w)
    assume(w.sum() > 1e-6)
    return w / w.sum()


@st.composite
def pairs(draw):
    """(p, q) over the same vocabulary."""
    V = draw(st.integers(2, 12))
    return draw(distributions(vocab=V)), draw(distributions(vocab=V))


@settings(max_examples=200, deadline=None)
@given(pairs())
def test_residual_is_a_distribution_zero_where_p_does_not_exceed_q(pq):
    p, q = pq
    r = residual(p, q)
    assert np.all(r >= 0)
    assert math.isclose(r.sum(), 1.0, rel_tol=0, abs_tol=1e-12)
    if np.any(p > q):
        assert np.all(r[p <= q] == 0.0)
        np.testing.assert_allclose(r, np.maximum(p - q, 0) / np.maximum(p - q, 0).sum(), atol=1e-15)
    else:  # p == q (up to rounding): the fallback
        np.testing.assert_array_equal(r, p)


@settings(max_examples=200, deadline=None)
@given(pairs(), st.data())
def test_accept_probability_is_min_one_ratio(pq, data):
    p, q = pq
    x = data.draw(st.sampled_from(np.flatnonzero(q).tolist()))
    a = accept_probability(p, q, x)
    assert 0.0 <= a <= 1.0
    assert a == min(1.0, p[x] / q[x])
    assert (a == 1.0) == (p[x] >= q[x])


@settings(max_examples=200, deadline=None)
@given(pairs())
def test_one_step_emits_exactly_p(pq):
    """The theorem: sum_x q(x) a(x) [y = x] + (1 - beta) r(y) = p(y)."""
    p, q = pq
    np.testing.assert_allclose(single_step_output_distribution(p, q), p, atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(pairs(), st.data())
def test_one_step_by_enumeration_matches_the_rule(pq, data):
    """exact_output_distribution with k = 1, summed over x ~ q, is p on the first token."""
    p, q = pq
    p_bonus = data.draw(distributions(vocab=p.size))
    first = np.zeros(p.size)
    for x in np.flatnonzero(q):
        for seq, prob in exact_output_distribution(np.stack([p, p_bonus]), q[None], [x]).items():
            first[seq[0]] += q[x] * prob
    np.testing.assert_allclose(first, p, atol=1e-12)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 4), st.data())
def test_exact_output_distribution_sums_to_one(k, data):
    V = data.draw(st.integers(2, 7))
    p_rows = np.stack([data.draw(distributions(vocab=V)) for _ in range(k + 1)])
    q_rows = np.stack([data.draw(distributions(vocab=V)) for _ in range(k)]) if k else np.zeros((0, V))
    drafts = [data.draw(st.sampled_from(np.flatnonzero(q).tolist())) for q in q_rows]
    dist = exact_output_distribution(p_rows, q_rows, drafts)
    assert math.isclose(sum(dist.values()), 1.0, abs_tol=1e-12)
    for seq, prob in dist.items():
        assert prob > 0 and 1 <= len(seq) <= k + 1
        assert list(seq[:-1]) == drafts[: len(seq) - 1]  # accepted drafts come first, in order


def test_marginal_first_token_is_the_target():
    """Drafts drawn from a context-dependent q; the first emitted token is still p(. | ())."""
    rng = np.random.default_rng(3)
    V, k = 4, 3
    table_p, table_q = {}, {}

    def row(table, prefix):
        if prefix not in table:
            table[prefix] = rng.dirichlet(np.ones(V))
        return table[prefix]

    dist = marginal_output_distribution(lambda s: row(table_p, s), lambda s: row(table_q, s), k)
    assert math.isclose(sum(dist.values()), 1.0, abs_tol=1e-12)
    first = np.zeros(V)
    for seq, prob in dist.items():
        first[seq[0]] += prob
    np.testing.assert_allclose(first, table_p[()], atol=1e-12)
    # Two tokens deep: P(t1, t2 | at least two emitted) is p(t1) p(t2 | t1) up to the stopping rule,
    # and with every prefix scored, the second token given the first is p(. | (t1,)).
    for t1 in range(V):
        second = np.zeros(V)
        for seq, prob in dist.items():
            if len(seq) >= 2 and seq[0] == t1:
                second[seq[1]] += prob
        if second.sum() > 0:
            np.testing.assert_allclose(second / second.sum(), table_p[(t1,)], atol=1e-12)


def test_one_hot_drafts_enumerate_like_q_equals_a_point_mass():
    p_rows = np.array([[0.2, 0.5, 0.3], [0.6, 0.2, 0.2], [0.1, 0.1, 0.8]])
    one_hot = exact_output_distribution(p_rows, None, [1, 0])
    explicit = exact_output_distribution(p_rows, np.eye(3)[[1, 0]], [1, 0])
    assert one_hot.keys() == explicit.keys()
    for key in one_hot:
        assert math.isclose(one_hot[key], explicit[key])
    assert math.isclose(one_hot[(1, 0, 2)], 0.5 * 0.6 * 0.8)  # accept, accept, bonus 2


def test_speculative_verify_matches_the_enumerator():
    """The plain-Python sampler agrees with the enumerator (10,000 draws, G-test)."""
    from scipy import stats

    rng = np.random.default_rng(5)
    p_rows = rng.dirichlet(np.ones(3), size=3)
    q_rows = rng.dirichlet(np.ones(3), size=2)
    drafts = [0, 2]
    exact = exact_output_distribution(p_rows, q_rows, drafts)
    counts: dict = {}
    n = 10_000
    for _ in range(n):
        seq = tuple(speculative_verify(p_rows, q_rows, drafts, rng))
        counts[seq] = counts.get(seq, 0) + 1
    assert set(counts) <= set(exact)
    keys = sorted(exact)
    f_exp = np.array([exact[key] for key in keys]) * n
    f_obs = np.array([counts.get(key, 0) for key in keys], dtype=float)
    assert stats.chisquare(f_obs, f_exp * f_obs.sum() / f_exp.sum()).pvalue > 1e-4


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: accept_probability([0.5, 0.5], [1.0, 0.0], 1), "q\\(1\\) = 0"),
        (lambda: accept_probability([0.5, 0.5], [0.5, 0.5], 2), "outside the vocabulary"),
        (lambda: residual([0.5, 0.6], [0.5, 0.5]), "sum to 1"),
        (lambda: residual([1.5, -0.5], [0.5, 0.5]), "non-negative"),
        (lambda: residual([0.5, 0.5], [0.2, 0.3, 0.5]), "same shape"),
        (lambda: exact_output_distribution(np.eye(2), None, []), "need k \\+ 1 rows"),
    ],
)
def test_reference_rejects_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_reference_has_no_torch_or_triton():
    assert "torch" not in vars(reference) and "triton" not in vars(reference)

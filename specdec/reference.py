"""The speculative sampling rule, written to be read: float64, plain Python and numpy.

Letters follow Leviathan et al. (2023): **p is the target distribution, q the draft
distribution**. A draft token x was drawn from q. Verification keeps it with probability

    a(x) = min(1, p(x) / q(x))                                   (accept)

and otherwise replaces it by a token drawn from the *residual*

    r(y) = max(p(y) - q(y), 0) / sum_z max(p(z) - q(z), 0)      (recover)

Summed over x ~ q, the token that comes out is distributed exactly as p:
q(y) a(y) + (1 - beta) r(y) = min(p(y), q(y)) + max(p(y) - q(y), 0) = p(y), where
beta = sum_x min(p(x), q(x)) is the acceptance rate.

A verification step over k draft tokens applies the rule position by position, stops at the
first rejection (emitting the recovered token) and, when all k drafts are accepted, emits one
*bonus* token drawn from the target row after the last draft. It therefore emits between 1
and k + 1 tokens.

This module is the oracle for the tests and for the lesson's cells:

- `accept_probability`, `residual`: the single-step rule;
- `single_step_output_distribution`: the distribution of one step's output, summed over x ~ q;
- `speculative_verify`: one request's verification step, sampled with a numpy Generator;
- `exact_output_distribution`: the exact distribution of the emitted tokens of one request
  with fixed draft tokens (what a batched sampler must reproduce);
- `marginal_output_distribution`: the same, also summed over drafts drawn from q.

Nothing here touches torch or triton.
"""

from __future__ import annotations

import itertools
from typing import Callable, Optional, Sequence

import numpy as np

__all__ = [
    "accept_probability",
    "residual",
    "single_step_output_distribution",
    "speculative_verify",
    "exact_output_distribution",
    "marginal_output_distribution",
]


def _as_distribution(x, name: str) -> np.ndarray:
    """Return x as a float64 vector and check that it is a probability vector."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D probability vector, got shape {x.shape}")
    if not np.all(np.isfinite(x)) or np.any(x < 0):
        raise ValueError(f"{name} must be finite and non-negative")
    if abs(x.sum() - 1.0) > 1e-6:
        raise ValueError(f"{name} must sum to 1 (got {x.sum():.9f})")
    return x


def accept_probability(p, q, x: int) -> float:
    """Probability min(1, p(x) / q(x)) that the draft token x is kept.

    p, q: [V] target and draft probabilities; x: the draft token, drawn from q, so q(x) > 0.
    """
    p = _as_distribution(p, "p")
    q = _as_distribution(q, "q")
    if p.shape != q.shape:
        raise ValueError(f"p and q must have the same shape, got {p.shape} and {q.shape}")
    x = int(x)
    if not 0 <= x < p.size:
        raise ValueError(f"draft token {x} is outside the vocabulary [0, {p.size})")
    if q[x] == 0.0:
        raise ValueError(f"q({x}) = 0: token {x} cannot have been drafted from q")
    return float(min(1.0, p[x] / q[x]))


def residual(p, q) -> np.ndarray:
    """The normalised residual max(p - q, 0) / sum(max(p - q, 0)), float64 [V].

    When p == q the residual has no mass. That branch is unreachable in a verification step,
    because rejection then has probability 0 (p(x) / q(x) = 1 for every x); we return p there,
    which is the fallback the lesson's exercise uses and the one the batched samplers use.
    """
    p = _as_distribution(p, "p")
    q = _as_distribution(q, "q")
    if p.shape != q.shape:
        raise ValueError(f"p and q must have the same shape, got {p.shape} and {q.shape}")
    r = np.maximum(p - q, 0.0)  # [V]
    mass = r.sum()
    if mass <= 0.0:
        return p.copy()
    return r / mass


def single_step_output_distribution(p, q) -> np.ndarray:
    """Distribution of the token one verification step emits when x ~ q, float64 [V].

    Equal to p, which is the theorem; the tests check it and the lesson shows it.
    """
    p = _as_distribution(p, "p")
    q = _as_distribution(q, "q")
    accepted = np.minimum(p, q)  # [V] q(y) * min(1, p(y) / q(y))
    rejection_mass = 1.0 - accepted.sum()  # 1 - beta
    return accepted + rejection_mass * residual(p, q)


def _check_request(p_rows, q_rows, draft_tokens):
    """Validate one request: p_rows [k+1, V], q_rows [k, V] or None, draft_tokens [k]."""
    p_rows = np.asarray(p_rows, dtype=np.float64)
    if p_rows.ndim != 2:
        raise ValueError(f"p_rows must be [k + 1, V], got shape {p_rows.shape}")
    k = p_rows.shape[0] - 1
    draft_tokens = [int(t) for t in np.asarray(draft_tokens, dtype=np.int64).reshape(-1)]
    if len(draft_tokens) != k:
        raise ValueError(f"{len(draft_tokens)} draft tokens for {k + 1} target rows (need k + 1 rows for k drafts)")
    for row in p_rows:
        _as_distribution(row, "a target row")
    if q_rows is not None:
        q_rows = np.asarray(q_rows, dtype=np.float64)
        if q_rows.shape != (k, p_rows.shape[1]):
            raise ValueError(f"q_rows must be [k, V] = {(k, p_rows.shape[1])}, got {q_rows.shape}")
        for row in q_rows:
            _as_distribution(row, "a draft row")
    for x in draft_tokens:
        if not 0 <= x < p_rows.shape[1]:
            raise ValueError(f"draft token {x} is outside the vocabulary [0, {p_rows.shape[1]})")
    return p_rows, q_rows, draft_tokens


def _one_hot(x: int, vocab: int) -> np.ndarray:
    q = np.zeros(vocab)
    q[x] = 1.0
    return q


def speculative_verify(p_rows, q_rows, draft_tokens, rng: np.random.Generator) -> list[int]:
    """Sample one request's verification step; returns the emitted tokens (1 to k + 1 of them).

    p_rows: [k + 1, V] target rows (one per draft position, then the bonus row);
    q_rows: [k, V] draft rows, or None for a one-hot draft (q(x) = 1 at the draft token);
    draft_tokens: [k] the draft tokens.
    """
    p_rows, q_rows, draft_tokens = _check_request(p_rows, q_rows, draft_tokens)
    vocab = p_rows.shape[1]
    emitted = []
    for j, x in enumerate(draft_tokens):
        q = q_rows[j] if q_rows is not None else _one_hot(x, vocab)
        if rng.random() < accept_probability(p_rows[j], q, x):
            emitted.append(x)
            continue
        emitted.append(int(rng.choice(vocab, p=residual(p_rows[j], q))))
        return emitted
    emitted.append(int(rng.choice(vocab, p=p_rows[-1])))  # bonus token
    return emitted


def exact_output_distribution(p_rows, q_rows, draft_tokens) -> dict[tuple[int, ...], float]:
    """Exact distribution of the tokens one request's verification step emits.

    p_rows: [k + 1, V] target rows; q_rows: [k, V] draft rows or None (one-hot drafts);
    draft_tokens: [k], fixed (what the sampler was given).

    Returns {emitted tokens: probability} over every outcome with non-zero probability:
    (x_1, ..., x_j, y) for a rejection at position j + 1 and y in the residual's support,
    and (x_1, ..., x_k, y) for the bonus y ~ p_{k+1}. Probabilities sum to 1.
    """
    p_rows, q_rows, draft_tokens = _check_request(p_rows, q_rows, draft_tokens)
    vocab = p_rows.shape[1]
    out: dict[tuple[int, ...], float] = {}
    reach = 1.0  # probability that drafts 1..j were all accepted
    for j, x in enumerate(draft_tokens):
        q = q_rows[j] if q_rows is not None else _one_hot(x, vocab)
        a = accept_probability(p_rows[j], q, x)
        if a < 1.0:
            r = residual(p_rows[j], q)
            prefix = tuple(draft_tokens[:j])
            for y in np.flatnonzero(r):
                out[prefix + (int(y),)] = reach * (1.0 - a) * float(r[y])
        reach *= a
        if reach == 0.0:
            return out
    prefix = tuple(draft_tokens)
    bonus = p_rows[-1]
    for y in np.flatnonzero(bonus):
        out[prefix + (int(y),)] = reach * float(bonus[y])
    return out


def marginal_output_distribution(
    p_fn: Callable[[tuple[int, ...]], Sequence[float]],
    q_fn: Callable[[tuple[int, ...]], Sequence[float]],
    k: int,
) -> dict[tuple[int, ...], float]:
    """Exact distribution of the emitted tokens when the k drafts are themselves drawn from q.

    p_fn(prefix) -> [V] target distribution of the next token after `prefix` (a tuple of the
    tokens already proposed in this step); q_fn(prefix) -> [V] the draft's. The drafter
    proposes x_1 ~ q_fn(()), x_2 ~ q_fn((x_1,)), ...; the target scores every prefix.
    Enumerates all V**k draft sequences, so keep V and k small.

    Its first-token marginal equals p_fn(()) exactly, which is the theorem the lesson shows.
    """
    out: dict[tuple[int, ...], float] = {}
    q0 = _as_distribution(q_fn(()), "q_fn(())")
    vocab = q0.size
    for drafts in itertools.product(range(vocab), repeat=k):
        weight = 1.0
        q_rows = []
        for j in range(k):
            q = _as_distribution(q_fn(drafts[:j]), f"q_fn({drafts[:j]})")
            weight *= q[drafts[j]]
            q_rows.append(q)
            if weight == 0.0:
                break
        if weight == 0.0:
            continue
        p_rows = [p_fn(drafts[:j]) for j in range(k + 1)]
        q_arg: Optional[np.ndarray] = np.array(q_rows) if k else np.zeros((0, vocab))
        for seq, prob in exact_output_distribution(p_rows, q_arg, drafts).items():
            out[seq] = out.get(seq, 0.0) + weight * prob
    return out

"""Shared helpers for the specdec tests: verification cases, replicated sampling, the G-tests.

A *request* is (p_rows [k+1, V], q_rows [k, V] or None, drafts [k]) as float32/int64 tensors.
A *case* is a list of requests that go into one batch together (ragged when their k differ);
the sampler is run on the case replicated n times, and each request's n outputs are compared
with its exact distribution from `specdec.reference.exact_output_distribution`.

How the check decides (`check_exact`):
- an outcome the exact distribution gives probability 0 fails at once;
- a G-test (scipy.stats.power_divergence, log-likelihood) on the emitted sequences, with
  outcomes expected fewer than 5 times lumped into one bin (binomial test when that bin is
  itself rare), and a second such test on the number of emitted tokens (where a biased
  acceptance rule shows most directly); each at ALPHA.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import os
import sys
from typing import Optional

import numpy as np
import pytest
import torch
from scipy import stats

from specdec import rejection_sample
from specdec.backends import is_interpreted, triton_interpreter_enabled
from specdec.reference import exact_output_distribution

ALPHA = 1e-4  # per G-test; two per check. Fixed seeds make every test deterministic.
MIN_EXPECTED = 5.0


# --------------------------------------------------------------------------------------------
# Requests and cases
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Request:
    p_rows: torch.Tensor  # [k + 1, V] float32
    q_rows: Optional[torch.Tensor]  # [k, V] float32, or None (one-hot drafts)
    drafts: torch.Tensor  # [k] int64

    @property
    def k(self) -> int:
        return self.drafts.numel()

    def exact(self) -> dict:
        q = None if self.q_rows is None else self.q_rows.double().numpy()
        return exact_output_distribution(self.p_rows.double().numpy(), q, self.drafts.numpy())


def normalised(x: np.ndarray) -> torch.Tensor:
    """Rows of x normalised, as float32 rows that sum to 1 within float32 rounding."""
    x = np.asarray(x, dtype=np.float64)
    return torch.tensor(x / x.sum(axis=-1, keepdims=True), dtype=torch.float32)


def request(p_rows, q_rows, drafts) -> Request:
    return Request(normalised(p_rows), None if q_rows is None else normalised(q_rows),
                   torch.tensor(drafts, dtype=torch.int64))


def _dirichlet(rng, rows, vocab, alpha=1.0):
    return rng.dirichlet(np.full(vocab, alpha), size=rows)


def make_cases() -> dict[str, list[Request]]:
    """The exactness cases, built from a fixed numpy seed."""
    rng = np.random.default_rng(20240613)
    V = 5
    cases: dict[str, list[Request]] = {}

    # Dense rows, moderate acceptance: the most generic case.
    q = _dirichlet(rng, 3, V)
    cases["dense_k3"] = [request(_dirichlet(rng, 4, V), q, [int(np.argmax(r)) for r in q])]

    # Ragged batch: k = 2, 0, 3, 1 in one batch, over V = 6.
    reqs = []
    for k in (2, 0, 3, 1):
        q = _dirichlet(rng, k, 6)
        drafts = [int(rng.choice(6, p=r)) for r in q]
        reqs.append(request(_dirichlet(rng, k + 1, 6), q if k else np.zeros((0, 6)), drafts))
    cases["ragged_k2_k0_k3_k1"] = reqs

    # k = 0 only: every request samples its bonus row.
    cases["k0_only"] = [request(_dirichlet(rng, 1, V), np.zeros((0, V)), []),
                        request(_dirichlet(rng, 1, V, 0.5), None, [])]

    # p == q at every draft position: always accepted, then the bonus row.
    q = _dirichlet(rng, 3, V)
    cases["p_equals_q"] = [request(np.vstack([q, _dirichlet(rng, 1, V)]), q, [0, 2, 4])]

    # Disjoint supports: q on {0, 1}, p on {2, 3, 4}: rejected at once, recovered from p.
    q = np.array([[0.6, 0.4, 0, 0, 0]] * 2)
    p = np.array([[0, 0, 0.2, 0.3, 0.5], [0, 0, 0.5, 0.25, 0.25], [0, 0, 1 / 3, 1 / 3, 1 / 3]])
    cases["disjoint_supports"] = [request(p, q, [1, 0])]

    # One-hot drafts (n-gram / greedy drafter): accept with probability p(x).
    cases["one_hot_drafts"] = [request(_dirichlet(rng, 4, V), None, [3, 1, 1])]

    # Always accepted: p(x) >= q(x) at each draft, so the bonus row is always sampled.
    q = np.array([[0.4, 0.3, 0.1, 0.1, 0.1], [0.2, 0.2, 0.2, 0.2, 0.2]])
    p = np.array([[0.5, 0.1, 0.1, 0.1, 0.2], [0.1, 0.1, 0.5, 0.2, 0.1], [0.3, 0.05, 0.15, 0.2, 0.3]])
    cases["all_accepted"] = [request(p, q, [0, 2])]

    # First draft always rejected: p(x_1) = 0.
    q = np.array([[0.5, 0.3, 0.2, 0, 0], [0.2, 0.2, 0.2, 0.2, 0.2]])
    p = np.array([[0, 0.1, 0.4, 0.2, 0.3], [0.2, 0.2, 0.2, 0.2, 0.2], [0.2, 0.2, 0.2, 0.2, 0.2]])
    cases["first_rejected"] = [request(p, q, [0, 1])]

    # Acceptance near 1 (p/q = 0.9998) then near 0 (p/q = 0.0002): a 1% shift of either is a
    # fiftyfold change in a rare outcome, visible with few samples. The residual at the second
    # position excludes token 2, which p itself gives 30%.
    q = np.array([[0.50, 0.20, 0.10, 0.10, 0.10], [0.05, 0.60, 0.30, 0.05, 0.00]])
    p = np.array([[0.4999, 0.2001, 0.10, 0.10, 0.10], [0.30, 0.00012, 0.29988, 0.20, 0.20],
                  [0.1, 0.2, 0.3, 0.2, 0.2]])
    cases["skewed_acceptance"] = [request(p, q, [0, 1])]
    return cases


def make_large_vocab_case(V: int = 32003) -> list[Request]:
    """V = 32003 (not a multiple of any block size), k = 2, with a computable exact distribution.

    Each row puts most of its mass on a few head tokens (including token 0 and the last token,
    V - 1, which sits in the ragged last block) and spreads the rest uniformly over the whole
    vocabulary. The tail outcomes are many and rare; the G-test lumps them into one bin, so it
    checks their total mass and every head outcome individually.
    """
    def row(head: dict[int, float], tail_mass: float) -> np.ndarray:
        r = np.full(V, tail_mass / V)
        for token, mass in head.items():
            r[token] += mass
        return r

    last = V - 1
    p = np.stack([row({7: 0.30, 1000: 0.20, last: 0.10}, 0.40),
                  row({1000: 0.45, 20000: 0.25}, 0.30),
                  row({0: 0.30, last: 0.30, 31999: 0.10}, 0.30)])
    q = np.stack([row({7: 0.50, 1000: 0.10, 5: 0.20}, 0.20),
                  row({1000: 0.40, 20000: 0.40}, 0.20)])
    return [request(p, q, [7, 1000])]


# --------------------------------------------------------------------------------------------
# Sampling a replicated case
# --------------------------------------------------------------------------------------------


def replicate(case: list[Request], reps: int):
    """Batch tensors for `reps` copies of the case, requests interleaved (ragged)."""
    p = torch.cat([r.p_rows for r in case]).repeat(reps, 1)  # [reps * sum (k + 1), V]
    one_hot = all(r.q_rows is None for r in case)
    if not one_hot and any(r.q_rows is None and r.k for r in case):
        raise ValueError("a case mixes one-hot and full draft rows")
    q = None if one_hot else torch.cat([r.q_rows if r.q_rows is not None else r.p_rows[:0] for r in case]).repeat(reps, 1)
    drafts = torch.cat([r.drafts for r in case]).repeat(reps)
    k = torch.tensor([r.k for r in case], dtype=torch.int64).repeat(reps)
    return p, q, drafts, k


def sample_case(case: list[Request], n: int, *, backend: str, mode: str, seed: int, chunk: int = 50_000,
                uniform_shift: float = 0.0, residual_from_p: bool = False) -> list[np.ndarray]:
    """Run the sampler on n copies of the case; returns per request an int64 array [n, k + 1].

    mode: "generator" (torch.Generator), "seeds" (per-request seeds, distinct per copy) or
    "explicit" (uniforms and noise drawn here). uniform_shift and residual_from_p build the
    deliberately biased samplers of the power test (explicit mode, torch backend only):
    uniforms u - shift (clamped to [0, 1)) make acceptance min(1, p/q) + shift; residual_from_p
    re-samples a rejected position from p instead of the residual.
    """
    gen = torch.Generator().manual_seed(seed)
    per_request: list[list[np.ndarray]] = [[] for _ in case]
    m = len(case)
    done = 0
    while done < n:
        reps = min(chunk, n - done)
        p, q, drafts, k = replicate(case, reps)
        B, V = k.numel(), p.shape[1]
        kwargs = {}
        if mode == "generator":
            kwargs["generator"] = gen
        elif mode == "seeds":
            kwargs["seeds"] = torch.arange(B, dtype=torch.int64) + done * m + seed * 1_000_003
            kwargs["positions"] = torch.full((B,), 17, dtype=torch.int64)
        elif mode == "explicit":
            u = torch.rand(drafts.numel(), generator=gen)
            u = (u - uniform_shift).clamp(0.0, 1.0 - 2.0**-24)
            kwargs["uniforms"] = u
            kwargs["noise"] = torch.rand(B, V, generator=gen).log_().neg_()  # -log(0) = inf is allowed
        else:
            raise ValueError(mode)
        tokens, num_emitted = rejection_sample(p, q, drafts, k, backend=backend, validate=done == 0, **kwargs)
        if residual_from_p:
            rejected = num_emitted <= k
            rows = torch.nonzero(rejected)[:, 0]
            cu = torch.cumsum(k + 1, 0) - (k + 1)
            p_rows = p[cu[rows] + num_emitted[rows] - 1]  # [R, V] the row the residual came from
            tokens[rows, num_emitted[rows] - 1] = (p_rows / kwargs["noise"][rows]).argmax(dim=1)
        assert torch.equal(num_emitted, (tokens >= 0).sum(dim=1)), "num_emitted disagrees with the tokens"
        for j, r in enumerate(case):
            per_request[j].append(tokens[j::m, : r.k + 1].numpy())
        done += reps
    return [np.concatenate(chunks) for chunks in per_request]


# --------------------------------------------------------------------------------------------
# The statistical check
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass
class CheckResult:
    impossible: list  # outcomes observed that have probability 0
    p_sequences: float
    p_lengths: float

    @property
    def ok(self) -> bool:
        return not self.impossible and self.p_sequences > ALPHA and self.p_lengths > ALPHA

    def __str__(self) -> str:
        return (f"impossible outcomes {self.impossible[:5]}, G-test p-values: sequences "
                f"{self.p_sequences:.3g}, lengths {self.p_lengths:.3g} (alpha {ALPHA:g})")


def _g_test(observed: dict, expected: dict, n: int) -> float:
    """p-value of observed counts against expected probabilities.

    Outcomes expected at least MIN_EXPECTED times are compared by a G-test; the rare ones share
    one bin, which joins the G-test if it is expected MIN_EXPECTED times too, and otherwise gets
    a one-sided binomial test (too many rare outcomes is how a small bias shows in a rare bin).
    The smaller p-value, doubled when there are two tests (Bonferroni), is returned.
    """
    big = [key for key in expected if expected[key] * n >= MIN_EXPECTED]
    small = [key for key in expected if expected[key] * n < MIN_EXPECTED]
    f_exp = [expected[key] * n for key in big]
    f_obs = [observed.get(key, 0) for key in big]
    p_values = []
    if small:
        rest_prob = sum(expected[key] for key in small)
        rest_obs = sum(observed.get(key, 0) for key in small)
        if rest_prob * n >= MIN_EXPECTED:
            f_exp.append(rest_prob * n)
            f_obs.append(rest_obs)
        else:
            p_values.append(stats.binomtest(rest_obs, n, min(rest_prob, 1.0), alternative="greater").pvalue)
    if len(f_exp) >= 2:
        f_exp = np.array(f_exp)
        f_exp *= sum(f_obs) / f_exp.sum()  # the lumped bins' total equals the observed total
        g = stats.power_divergence(np.array(f_obs, dtype=np.float64), f_exp, lambda_="log-likelihood")
        p_values.append(float(g.pvalue))
    if not p_values:
        return 1.0  # a single possible outcome: nothing to test beyond impossibility
    return min(1.0, min(p_values) * len(p_values))


def count_outcomes(tokens: np.ndarray) -> dict:
    """[n, k + 1] int64 rows padded with -1 -> {emitted tuple: count}."""
    rows, counts = np.unique(tokens, axis=0, return_counts=True)
    return {tuple(int(t) for t in row[row >= 0]): int(c) for row, c in zip(rows, counts)}


def check_exact(tokens: np.ndarray, exact: dict) -> CheckResult:
    n = tokens.shape[0]
    observed = count_outcomes(tokens)
    impossible = [key for key in observed if key not in exact]
    len_exp: dict = {}
    for key, prob in exact.items():
        len_exp[len(key)] = len_exp.get(len(key), 0.0) + prob
    len_obs: dict = {}
    for key, c in observed.items():
        len_obs[len(key)] = len_obs.get(len(key), 0) + c
    return CheckResult(impossible, _g_test(observed, exact, n), _g_test(len_obs, len_exp, n))


# --------------------------------------------------------------------------------------------
# Biased reference distributions (for the power test)
# --------------------------------------------------------------------------------------------


def biased_distribution(req: Request, *, accept_shift: float = 0.0, residual_from_p: bool = False) -> dict:
    """What a sampler accepting when u - shift < p/q (u - shift clamped to [0, 1), as in
    `sample_case`: probability p/q + shift clipped to [0, 1], but 0 where p(x) = 0 and 1 where
    p(x) >= q(x)), or with the
    residual replaced by p, would emit: used to tell whether a bias changes a case at all."""
    p_rows = req.p_rows.double().numpy()
    V = p_rows.shape[1]
    drafts = [int(x) for x in req.drafts]
    out: dict = {}
    reach = 1.0
    for j, x in enumerate(drafts):
        q = req.q_rows[j].double().numpy() if req.q_rows is not None else np.eye(V)[x]
        p = p_rows[j]
        ratio = p[x] / q[x]
        # P(u - shift < p/q) with u - shift clamped to [0, 1): never when p(x) = 0, always when p >= q.
        a = 0.0 if ratio == 0 else 1.0 if ratio >= 1 else min(1.0, max(0.0, ratio + accept_shift))
        r = np.maximum(p - q, 0)
        r = p if residual_from_p or r.sum() <= 0 else r / r.sum()
        for y in np.flatnonzero(r):
            key = tuple(drafts[:j]) + (int(y),)
            out[key] = out.get(key, 0.0) + reach * (1 - a) * r[y]
        reach *= a
    for y in np.flatnonzero(p_rows[-1]):
        key = tuple(drafts) + (int(y),)
        out[key] = out.get(key, 0.0) + reach * p_rows[-1][y]
    return {key: v for key, v in out.items() if v > 0}


def total_variation(a: dict, b: dict) -> float:
    return 0.5 * sum(abs(a.get(key, 0.0) - b.get(key, 0.0)) for key in set(a) | set(b))


# --------------------------------------------------------------------------------------------
# The Triton backend in this process
# --------------------------------------------------------------------------------------------


def import_triton_kernel_interpreted():
    """Import specdec.triton_kernel with TRITON_INTERPRET=1 set around the import only."""
    previous = os.environ.get("TRITON_INTERPRET")
    os.environ["TRITON_INTERPRET"] = "1"
    try:
        return importlib.import_module("specdec.triton_kernel")
    finally:
        if previous is None:
            del os.environ["TRITON_INTERPRET"]
        else:
            os.environ["TRITON_INTERPRET"] = previous


def _unavailable(reason: str):
    """Skip on a developer machine; fail in CI (CI is set), where the kernel tests must run."""
    if os.environ.get("CI", "").lower() not in ("", "0", "false"):
        pytest.fail(f"CI: the Triton kernel tests cannot run: {reason}", pytrace=False)
    pytest.skip(reason)


def load_triton_kernel():
    """Return specdec.triton_kernel running in the interpreter, or skip (fail in CI).

    `conftest.py` imports it in interpreter mode before anything else imports triton; if triton
    was imported earlier without TRITON_INTERPRET=1, or interpreter detection
    (`specdec.backends.triton_interpreter_enabled`) broke with a triton upgrade, the
    interpreter cannot be used: the test is skipped with that reason, and fails when CI is set.
    """
    if importlib.util.find_spec("triton") is None:
        _unavailable("triton is not installed")
    if "specdec.triton_kernel" not in sys.modules and "triton" not in sys.modules:
        import_triton_kernel_interpreted()
    try:
        module = importlib.import_module("specdec.triton_kernel")
        enabled = triton_interpreter_enabled() and is_interpreted(sys.modules["triton.language"].max)
    except Exception as error:  # noqa: BLE001 - any failure here means the interpreter cannot be used
        _unavailable(f"Triton interpreter detection failed: {type(error).__name__}: {error}")
    if not enabled:
        _unavailable("triton was imported without TRITON_INTERPRET=1 before these tests; "
                     "run them with TRITON_INTERPRET=1 in the environment")
    os.environ["TRITON_INTERPRET"] = "1"  # read again at launch; conftest's fixture restores it
    return module

"""The Triton kernel (through the interpreter) against its torch twin, and per-request seeds.

Given the same random numbers the two backends must return identical tokens: same float32
arithmetic (u * q(x) < p(x), max(p - q, 0) / E with IEEE division) and the same tie-breaking.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch

from specdec import rejection_sample, triton_mode
from specdec import rng as specdec_rng
from specdec_cases import load_triton_kernel, make_large_vocab_case, replicate

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def random_batch(ks, V, *, one_hot=False, seed=0, close=0.0, dtype=torch.float32):
    """A ragged batch with k_i = ks; `close` in [0, 1) makes p closer to q (more accepts)."""
    g = torch.Generator().manual_seed(seed)
    k = torch.tensor(ks, dtype=torch.int64)
    N, B = int(k.sum()), len(ks)
    q_logits = torch.randn(N, V, generator=g) * 3
    q = torch.softmax(q_logits, dim=-1)
    drafts = torch.multinomial(q, 1, generator=g)[:, 0] if N else torch.zeros(0, dtype=torch.int64)
    p_logits = torch.randn(N + B, V, generator=g) * 3
    # Target rows of draft positions lean towards the draft rows so that some drafts get accepted.
    req = torch.repeat_interleave(torch.arange(B), k)
    rows = torch.arange(N) + req
    p_logits[rows] = close * q_logits + (1 - close) * p_logits[rows]
    if one_hot:
        p_logits[rows] *= 3  # peaked target rows: their argmax has high probability
    p = torch.softmax(p_logits, dim=-1)
    if one_hot and N:  # n-gram style drafts: often the target's favourite token, so some are accepted
        coin = torch.rand(N, generator=g) < close
        drafts = torch.where(coin, p[rows].argmax(dim=-1), drafts)
    uniforms = torch.rand(N, generator=g)
    noise = -torch.rand(B, V, generator=g).log()
    return (p.to(dtype), None if one_hot else q.to(dtype), drafts, k), uniforms, noise


def assert_backends_agree(args, uniforms, noise, sum_tol=1e-3, **triton_kwargs):
    expected = rejection_sample(*args, uniforms=uniforms, noise=noise, sum_tol=sum_tol)
    if triton_kwargs:
        kernel = load_triton_kernel()
        p, q, drafts, k = args
        cu = torch.cat([torch.zeros(1, dtype=torch.int64), torch.cumsum(k, 0)])
        got = kernel.rejection_sample_triton(p, q, drafts, cu, uniforms=uniforms, noise=noise, **triton_kwargs)
    else:
        got = rejection_sample(*args, uniforms=uniforms, noise=noise, backend="triton", sum_tol=sum_tol)
    assert torch.equal(got[1], expected[1]), (got[1], expected[1])
    assert torch.equal(got[0], expected[0]), (got[0], expected[0])
    return expected


@pytest.mark.parametrize(
    "ks, V, one_hot, close",
    [
        ([3, 0, 1, 4, 2], 1000, False, 0.0),  # ragged, with k = 0, first drafts rejected
        ([3, 0, 1, 4, 2, 3, 3], 1000, False, 0.9),  # ragged, rejections at various positions
        ([3, 0, 1, 4, 2, 3, 3], 1000, True, 0.8),  # one-hot drafts
        ([4, 4, 4, 4, 4, 4], 257, False, 0.97),  # mostly accepted: bonus rows
        ([0, 0, 0], 33, False, 0.0),  # bonus rows only
        ([2, 5, 1], 32003, False, 0.9),  # a real vocabulary size
    ],
)
def test_backends_agree_given_the_same_random_numbers(ks, V, one_hot, close):
    load_triton_kernel()
    args, uniforms, noise = random_batch(ks, V, one_hot=one_hot, seed=len(ks) + V, close=close)
    tokens, num_emitted = assert_backends_agree(args, uniforms, noise)
    assert ((num_emitted >= 1) & (num_emitted <= torch.tensor(ks) + 1)).all()


@pytest.mark.parametrize("block_v, num_splits", [(128, 1), (128, 3), (64, 16), (512, 2)])
def test_vocabulary_not_a_multiple_of_the_block(block_v, num_splits):
    """V = 1000 with blocks of 64..512 (masked last block) and 1..16 vocabulary slices per request."""
    load_triton_kernel()
    args, uniforms, noise = random_batch([2, 0, 3, 1], 1000, seed=7, close=0.5)
    assert_backends_agree(args, uniforms, noise, block_v=block_v, num_splits=num_splits)
    # The winner may sit in the ragged last block: make token V - 1 win every race.
    noise[:, -1] = 1e-30
    assert_backends_agree(args, uniforms, noise, block_v=block_v, num_splits=num_splits)


def test_low_precision_inputs_agree():
    load_triton_kernel()
    for dtype in (torch.float16, torch.bfloat16, torch.float64):
        args, uniforms, noise = random_batch([2, 3], 300, seed=3, close=0.8, dtype=dtype)
        assert_backends_agree(args, uniforms, noise, sum_tol=0.05, block_v=128, num_splits=2)


def test_empty_residual_falls_back_to_p():
    """Rows that sum to 1 only within the tolerance can leave p <= q everywhere; a rejection then
    races over p, in both backends and in `reference.residual`."""
    load_triton_kernel()
    p = torch.tensor([[0.5, 0.4995, 0.0], [0.2, 0.3, 0.5]])
    q = torch.tensor([[0.5, 0.5, 0.0]])
    args = (p, q, torch.tensor([1]), torch.tensor([1]))
    for noise in ([1.0, 0.5, 0.1], [0.1, 1.0, 1.0]):
        tokens, _ = assert_backends_agree(args, torch.tensor([0.9999]), torch.tensor([noise]))
        assert tokens[0, 0] == (1 if noise[1] == 0.5 else 0)
        assert_backends_agree(args, torch.tensor([0.9999]), torch.tensor([noise]), block_v=2, num_splits=2)


def test_ties_go_to_the_lowest_token():
    load_triton_kernel()
    p = torch.full((1, 300), 1 / 300)
    args = (p, None, torch.zeros(0, dtype=torch.int64), torch.tensor([0]))
    noise = torch.ones(1, 300)
    tokens, _ = assert_backends_agree(args, torch.zeros(0), noise, block_v=64, num_splits=3)
    assert tokens[0, 0] == 0
    tokens, _ = assert_backends_agree(args, torch.zeros(0), noise)
    assert tokens[0, 0] == 0


def test_seeded_backends_agree():
    """Both backends draw the same (seed, position) uniforms; the exponential noise can differ
    only in the last bit of a logarithm, which does not change these races."""
    load_triton_kernel()
    (p, q, drafts, k), _, _ = random_batch([3, 0, 2, 4, 1, 2], 2000, seed=9, close=0.7)
    seeds = torch.tensor([5, -7, 2**40 + 3, 0, 123456789, 5], dtype=torch.int64)
    positions = torch.tensor([0, 10, 100, 7, 2**20, 3], dtype=torch.int64)
    for q_arg in (q, None):
        a = rejection_sample(p, q_arg, drafts, k, seeds=seeds, positions=positions)
        b = rejection_sample(p, q_arg, drafts, k, seeds=seeds, positions=positions, backend="triton")
        assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


def _batch_without(batch, keep):
    """Sub-batch of the requests `keep` (in that order) of a (p, q, drafts, k) batch."""
    p, q, drafts, k = batch
    cu = torch.cat([torch.zeros(1, dtype=torch.int64), torch.cumsum(k, 0)])
    p_rows = [p[cu[i] + i: cu[i + 1] + i + 1] for i in keep]
    q_rows = [q[cu[i]: cu[i + 1]] for i in keep]
    d = [drafts[cu[i]: cu[i + 1]] for i in keep]
    return torch.cat(p_rows), torch.cat(q_rows), torch.cat(d), k[keep]


@pytest.mark.parametrize("backend", ["torch", "triton"])
def test_a_seeded_request_ignores_the_rest_of_the_batch(backend):
    if backend == "triton":
        load_triton_kernel()
    batch, _, _ = random_batch([2, 3, 1, 4, 0], 500, seed=4, close=0.8)
    seeds = torch.tensor([11, 22, 33, 44, 55])
    positions = torch.tensor([5, 50, 500, 5000, 1])
    full_tokens, full_n = rejection_sample(*batch, seeds=seeds, positions=positions, backend=backend)
    for keep in ([3], [4, 1], [2, 0, 3], [3, 2, 1, 0, 4]):
        sub = _batch_without(batch, keep)
        tokens, n = rejection_sample(*sub, seeds=seeds[keep], positions=positions[keep], backend=backend)
        for j, i in enumerate(keep):
            assert n[j] == full_n[i]
            assert torch.equal(tokens[j, : n[j]], full_tokens[i, : full_n[i]])


def test_seeded_draws_depend_on_seed_and_position_only():
    keys = specdec_rng.request_keys(torch.tensor([1, 1, 2, 2**32 + 1]))  # [n, 2]: 64-bit keys
    assert torch.equal(keys[0], keys[1]) and not torch.equal(keys[0], keys[2])
    assert not torch.equal(keys[0], keys[3]), "seeds differing only in their high 32 bits must differ"
    keys = keys[:3]
    u = specdec_rng.accept_uniforms(keys, torch.tensor([10, 11, 10]))
    assert u[0] != u[1] and u[0] != u[2]
    assert ((u >= 0) & (u < 1)).all()
    e = specdec_rng.exponential_noise(specdec_rng.noise_keys(keys, torch.tensor([3, 3, 3])), 50)
    assert torch.equal(e[0], e[1]) and not torch.equal(e[0], e[2]) and (e > 0).all()


def test_the_large_vocabulary_case_agrees():
    load_triton_kernel()
    p, q, drafts, k = replicate(make_large_vocab_case(), 5)
    g = torch.Generator().manual_seed(1)
    uniforms = torch.rand(drafts.numel(), generator=g)
    noise = -torch.rand(k.numel(), p.shape[1], generator=g).log()
    assert_backends_agree((p, q, drafts, k), uniforms, noise)


def _run(code: str, env_extra: dict) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != "TRITON_INTERPRET"}
    env.update(env_extra)
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=120)


def test_import_specdec_does_not_import_triton():
    result = _run(
        """
        import sys
        import specdec
        from specdec import reference, sampler, logits, rng
        specdec.triton_mode()
        assert "triton" not in sys.modules, "importing specdec imported triton"
        print("ok")
        """,
        {},
    )
    assert result.returncode == 0 and "ok" in result.stdout, result.stderr


def test_cpu_tensors_without_the_interpreter_raise_a_clear_error():
    pytest.importorskip("triton")
    result = _run(
        """
        import torch, specdec
        print(specdec.triton_mode())
        p = torch.full((1, 4), 0.25)
        try:
            specdec.rejection_sample(p, None, torch.zeros(0, dtype=torch.long), torch.tensor([0]), backend="triton")
        except RuntimeError as e:
            print("raised:", e)
        """,
        {},
    )
    assert "raised:" in result.stdout and "TRITON_INTERPRET=1" in result.stdout, result.stdout + result.stderr


def test_triton_mode_reports_the_interpreter_here():
    load_triton_kernel()
    assert triton_mode() == "interpreter"

"""Exactness: replicate requests many times in one batch and compare the emitted sequences
with the exact distribution from `specdec.reference.exact_output_distribution`.

Sample sizes and power (`test_a_one_percent_bias_fails` asserts every claim below, with the
same seeds and sizes as the exactness tests):
- torch backend: N_TORCH = 200,000 copies per small-vocabulary case. Every deliberately biased
  sampler that moves at least 0.5% of a request's output mass fails the check: acceptance
  min(1, p/q) + 0.01, acceptance - 0.01, and a residual replaced by p.
- Triton kernel (interpreter, a few milliseconds per program): N_TRITON = 800 copies. The
  residual-replaced-by-p bias fails on every case it changes, and both 1% acceptance biases
  fail on `skewed_acceptance` (acceptance near 1 and near 0, where a 1% shift multiplies a rare
  outcome). For the other cases the 1% level rests on `test_specdec_agreement.py`: given the
  same random numbers the kernel returns exactly the torch backend's tokens.
- V = 32003: N_TORCH_LARGE_V = 4,000 and N_TRITON_LARGE_V = 400 copies (every draw streams
  a 32003-wide row); these check the ragged last block and the lumped tail, not 1% biases.
The kernel's own random numbers (seeded mode) are the torch backend's `rng.py` draws, bit for
bit for the uniforms (see the agreement tests); the torch seeded mode is checked here at N_TORCH.
"""

from __future__ import annotations

import pytest

from specdec_cases import (
    biased_distribution,
    check_exact,
    load_triton_kernel,
    make_cases,
    make_large_vocab_case,
    sample_case,
    total_variation,
)

N_TORCH = 200_000
N_TORCH_LARGE_V = 4_000
N_TRITON = 800
N_TRITON_LARGE_V = 400
# Copies per case for the Triton kernel: fewer where one copy is several requests.
N_TRITON_CASE = {"ragged_k2_k0_k3_k1": 400, "k0_only": 400}

CASES = make_cases()
LARGE_V = make_large_vocab_case()


def _assert_exact(case, outputs, label):
    for j, (req, tokens) in enumerate(zip(case, outputs)):
        result = check_exact(tokens, req.exact())
        assert result.ok, f"{label}, request {j} (k={req.k}): {result}"


@pytest.mark.parametrize("mode", ["generator", "seeds"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_torch_backend_is_exact(name, mode):
    case = CASES[name]
    _assert_exact(case, sample_case(case, N_TORCH, backend="torch", mode=mode, seed=11), f"{name} [torch, {mode}]")


@pytest.mark.slow
def test_torch_backend_is_exact_on_a_32003_vocabulary():
    outputs = sample_case(LARGE_V, N_TORCH_LARGE_V, backend="torch", mode="generator", seed=12, chunk=1_000)
    _assert_exact(LARGE_V, outputs, "V=32003 [torch]")


@pytest.mark.parametrize("name", sorted(CASES))
def test_triton_kernel_is_exact(name):
    load_triton_kernel()
    case = CASES[name]
    n = N_TRITON_CASE.get(name, N_TRITON)
    outputs = sample_case(case, n, backend="triton", mode="explicit", seed=13)
    _assert_exact(case, outputs, f"{name} [triton]")


def test_triton_kernel_is_exact_with_its_own_random_numbers():
    """The default Triton path: per-request seeds from the generator, draws made in the kernel."""
    load_triton_kernel()
    case = CASES["skewed_acceptance"]
    _assert_exact(case, sample_case(case, N_TRITON, backend="triton", mode="generator", seed=16), "seeded [triton]")


def test_triton_kernel_is_exact_on_a_32003_vocabulary():
    load_triton_kernel()
    outputs = sample_case(LARGE_V, N_TRITON_LARGE_V, backend="triton", mode="explicit", seed=14)
    _assert_exact(LARGE_V, outputs, "V=32003 [triton]")


BIASES = {
    "acceptance +0.01": dict(uniform_shift=0.01),
    "acceptance -0.01": dict(uniform_shift=-0.01),
    "residual replaced by p": dict(residual_from_p=True),
}


def _sizes(name: str, bias: str) -> list[int]:
    """The sample sizes at which the exactness tests claim to catch this bias on this case."""
    sizes = [N_TORCH]
    if bias == "residual replaced by p" or name == "skewed_acceptance":
        sizes.append(N_TRITON_CASE.get(name, N_TRITON))
    return sizes


@pytest.mark.slow
@pytest.mark.parametrize("bias", sorted(BIASES))
def test_a_one_percent_bias_fails(bias):
    """The check has power: a biased sampler fails it wherever the bias changes the output."""
    kwargs = BIASES[bias]
    as_distribution = dict(accept_shift=kwargs.get("uniform_shift", 0.0),
                           residual_from_p=kwargs.get("residual_from_p", False))
    checked = 0
    for name, case in sorted(CASES.items()):
        for n in _sizes(name, bias):
            outputs = sample_case(case, n, backend="torch", mode="explicit", seed=15, **kwargs)
            for j, (req, tokens) in enumerate(zip(case, outputs)):
                exact = req.exact()
                if total_variation(exact, biased_distribution(req, **as_distribution)) < 0.005:
                    continue  # the bias moves < 0.5% of the mass here (e.g. p == q never rejects)
                result = check_exact(tokens, exact)
                assert not result.ok, f"{bias} passed on {name} request {j} with n={n}: {result}"
                checked += 1
    assert checked >= 4

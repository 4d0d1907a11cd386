"""GPU check and benchmark of specdec's Triton verification kernel against its torch backend.

    python benchmarks/bench_gpu.py            # on a machine with a CUDA GPU (torch + triton only)
    python benchmarks/bench_gpu.py --quick    # fewer shapes

1. Correctness first (the script stops if anything fails):
   - with the same explicit random numbers the kernel and the torch backend return identical
     tokens: ragged batches, k_i = 0, one-hot drafts, bf16 inputs, V = 1000 / 32003 / 128256,
     several block sizes and vocabulary slices;
   - with per-request seeds both draw the same (seed, position) numbers: count disagreements
     (a last-bit difference in a logarithm can flip a near-tie; expect none);
   - exactness with the kernel's own random numbers: one request replicated 1,000,000 times,
     a G-test of the emitted sequences against `specdec.reference.exact_output_distribution`.
2. Timing: `triton.testing.do_bench` medians (L2 flushed between runs) of the kernel (seeded, its
   default) and of the torch backend, for several batch sizes and vocabularies (k = 4, float32),
   against the bandwidth floor: the minimum bytes for the step's actual outcome (see
   `specdec/triton_kernel.py`) at this GPU's copy bandwidth, measured in the same run, and the
   floor of a design that reads every row once.

Needs only torch and triton (numpy for the exactness check, skipped without it).
"""

from __future__ import annotations

import argparse
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import triton  # noqa: E402
import triton.testing  # noqa: E402

from specdec import rejection_sample  # noqa: E402


def bench_ms(fn) -> float:
    """Median milliseconds of fn, via triton.testing.do_bench (return_mode was added in triton 3.x)."""
    try:
        return float(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))
    except TypeError:
        return float(triton.testing.do_bench(fn, warmup=25, rep=100, quantiles=[0.5])[0])


def make_step(B, k, V, device, dtype=torch.float32, ks=None, seed=0, draft_noise=0.5):
    """A verification step: target rows [sum (k_i + 1), V], draft rows [sum k_i, V], drafts ~ q."""
    g = torch.Generator(device=device).manual_seed(seed)
    ks = torch.full((B,), k, dtype=torch.int64, device=device) if ks is None else ks.to(device)
    N = int(ks.sum())
    req = torch.repeat_interleave(torch.arange(B, device=device), ks)
    rows = torch.arange(N, device=device) + req  # target row of each draft
    target_logits = torch.randn(N + B, V, device=device, generator=g) * 2.0
    draft_logits = target_logits[rows] + torch.randn(N, V, device=device, generator=g) * draft_noise
    p = torch.softmax(target_logits, dim=-1)
    q = torch.softmax(draft_logits, dim=-1)
    drafts = torch.multinomial(q, 1, generator=g)[:, 0] if N else torch.zeros(0, dtype=torch.int64, device=device)
    return p.to(dtype), q.to(dtype), drafts, ks


def cu_of(ks):
    return torch.cat([torch.zeros(1, dtype=torch.int64, device=ks.device), torch.cumsum(ks, 0)])


# ------------------------------------------------------------------------------------------------
# 1. Correctness
# ------------------------------------------------------------------------------------------------


def check_agreement(device) -> bool:
    from specdec import triton_kernel

    ok = True
    shapes = [
        ("ragged, k=0 included", torch.tensor([3, 0, 1, 4, 2, 5, 0]), 1000, False, torch.float32),
        ("one-hot drafts", torch.tensor([3, 0, 1, 4, 2, 5, 0]), 1000, True, torch.float32),
        ("V=32003", torch.tensor([2, 4, 1] * 5), 32003, False, torch.float32),
        ("V=128256, B=64", torch.full((64,), 4), 128256, False, torch.float32),
        ("bf16 inputs", torch.tensor([4, 1, 3, 0]), 32003, False, torch.bfloat16),
    ]
    for label, ks, V, one_hot, dtype in shapes:
        p, q, drafts, ks = make_step(len(ks), 0, V, device, dtype=dtype, ks=ks, seed=V)
        B, N = ks.numel(), int(ks.sum())
        if one_hot:  # n-gram style: the draft is often the target's favourite token
            q = None
            rows = torch.arange(N, device=device) + torch.repeat_interleave(torch.arange(B, device=device), ks)
            drafts = torch.where(torch.arange(N, device=device) % 3 > 0, p[rows].argmax(dim=-1), drafts)
        g = torch.Generator(device=device).manual_seed(1)
        u = torch.rand(N, device=device, generator=g)
        noise = -torch.rand(B, V, device=device, generator=g).log()
        ref = rejection_sample(p, q, drafts, ks, uniforms=u, noise=noise, sum_tol=0.05)
        variants = [dict()] + [dict(block_v=bv, num_splits=s) for bv, s in ((1024, 1), (512, 7), (4096, 3))]
        shape_ok = True
        for kw in variants:
            got = triton_kernel.rejection_sample_triton(p, q, drafts, cu_of(ks), uniforms=u, noise=noise, **kw)
            same = torch.equal(got[0], ref[0]) and torch.equal(got[1], ref[1])
            shape_ok &= same
            if not same:
                bad = int((got[0] != ref[0]).any(dim=1).sum())
                print(f"  FAIL agreement {label} {kw}: {bad} of {B} requests differ")
        # Seeded: same (seed, position) draws in both backends.
        seeds = torch.arange(B, device=device) * 7919 + 3
        positions = torch.arange(B, device=device) * 11
        a = rejection_sample(p, q, drafts, ks, seeds=seeds, positions=positions, sum_tol=0.05)
        b = rejection_sample(p, q, drafts, ks, seeds=seeds, positions=positions, sum_tol=0.05, backend="triton")
        seeded_diff = int(((a[0] != b[0]).any(dim=1) | (a[1] != b[1])).sum())
        accept = float((ref[1] - 1).sum()) / max(N, 1)
        ok &= shape_ok
        print(f"  {label:<24} explicit randoms: {'identical' if shape_ok else 'DIFFERENT'} over {len(variants)} launch "
              f"configs; seeded: {seeded_diff} of {B} requests differ; acceptance {accept:.2f}")
    return ok


def chi2_sf(stat: float, df: int) -> float:
    """P(chi2_df >= stat) via the regularised upper incomplete gamma function."""
    return float(torch.special.gammaincc(torch.tensor(df / 2, dtype=torch.float64),
                                         torch.tensor(stat / 2, dtype=torch.float64)))


def check_exactness(device, n=1_000_000) -> bool:
    try:
        import numpy as np

        from specdec.reference import exact_output_distribution
    except ImportError:
        print("  exactness: numpy missing, skipped")
        return True
    rng = np.random.default_rng(0)
    V, k = 6, 3
    p_rows = rng.dirichlet(np.ones(V), size=k + 1)
    q_rows = rng.dirichlet(np.ones(V), size=k)
    drafts = [int(np.argmax(r)) for r in q_rows]
    p32 = torch.tensor(p_rows, dtype=torch.float32)
    q32 = torch.tensor(q_rows, dtype=torch.float32)
    exact = exact_output_distribution(p32.double().numpy(), q32.double().numpy(), drafts)
    p = p32.repeat(n, 1).to(device)
    q = q32.repeat(n, 1).to(device)
    d = torch.tensor(drafts).repeat(n).to(device)
    ks = torch.full((n,), k, device=device)
    tokens, _ = rejection_sample(p, q, d, ks, generator=torch.Generator(device=device).manual_seed(5),
                                 backend="triton", validate=False)
    rows, counts = torch.unique(tokens.cpu(), dim=0, return_counts=True)
    observed = {tuple(int(t) for t in row if t >= 0): int(c) for row, c in zip(rows, counts)}
    impossible = [key for key in observed if key not in exact]
    keys = [key for key in exact if exact[key] * n >= 5]
    rest = [key for key in exact if exact[key] * n < 5]
    f_exp = [exact[key] * n for key in keys] + ([sum(exact[key] for key in rest) * n] if rest else [])
    f_obs = [observed.get(key, 0) for key in keys] + ([sum(observed.get(key, 0) for key in rest)] if rest else [])
    g = 2 * sum(o * math.log(o / e) for o, e in zip(f_obs, f_exp) if o > 0)
    p_value = chi2_sf(g, len(f_exp) - 1)
    ok = not impossible and p_value > 1e-4
    print(f"  exactness (kernel RNG, {n:,} copies, V={V}, k={k}): {len(exact)} outcomes, G-test p = {p_value:.3g}, "
          f"impossible outcomes {len(impossible)} -> {'ok' if ok else 'FAIL'}")
    return ok


# ------------------------------------------------------------------------------------------------
# 2. Timing
# ------------------------------------------------------------------------------------------------


def copy_bandwidth(device, nbytes=2**30) -> float:
    src = torch.ones(nbytes // 4, device=device)
    dst = torch.empty_like(src)
    ms = bench_ms(lambda: dst.copy_(src))
    return 2 * nbytes / (ms * 1e-3) / 1e9


def minimum_bytes(B, k, V, num_emitted, elem=4):
    accepted = num_emitted - 1
    visited = torch.clamp(accepted + 1, max=k)
    rejected = accepted < k
    total = int(visited.sum()) * (8 + 2 * elem)  # ids and gathered p(x), q(x)
    total += B * V * elem + int(rejected.sum()) * V * elem  # the target row, the draft row after a rejection
    total += int(num_emitted.sum()) * 8 + B * 8 + B * (k + 1) * 8 + (B + 1) * 8  # outputs, padding, offsets
    return total


def run_benchmarks(device, batches, vocabs, k=4):
    from specdec import triton_kernel

    bw = copy_bandwidth(device)
    props = torch.cuda.get_device_properties(device)
    print(f"\ncopy bandwidth (1 GiB copy_, read + write): {bw:.0f} GB/s on {props.name} ({props.multi_processor_count} SMs)")
    header = (f"{'B':>4} {'V':>7} {'acc':>5} {'triton us':>10} {'public us':>10} {'default us':>11} {'torch us':>9} {'speedup':>8} {'min MB':>8} "
              f"{'floor us':>9} {'GB/s':>7} {'% copy':>7} {'full-read floor us':>19}")
    print(header)
    print("-" * len(header))
    for V in vocabs:
        for B in batches:
            p, q, drafts, ks = make_step(B, k, V, device, seed=B + V)
            cu = cu_of(ks)
            seeds = torch.arange(B, device=device, dtype=torch.int64)
            positions = torch.zeros(B, device=device, dtype=torch.int64)
            g = torch.Generator(device=device).manual_seed(0)

            def kernel():
                return triton_kernel.rejection_sample_triton(p, q, drafts, cu, seeds=seeds, positions=positions, max_k=k)

            def public_sync_free():
                return rejection_sample(p, q, drafts, ks, seeds=seeds, positions=positions, validate=False,
                                        max_num_draft_tokens=k, backend="triton")

            def public_default():
                return rejection_sample(p, q, drafts, ks, backend="triton")

            def torch_backend():
                return rejection_sample(p, q, drafts, ks, generator=g, validate=False)

            _, num_emitted = kernel()
            t_kernel = bench_ms(kernel) * 1e3
            t_torch = bench_ms(torch_backend) * 1e3
            t_public = bench_ms(public_sync_free) * 1e3
            t_default = bench_ms(public_default) * 1e3
            moved = minimum_bytes(B, k, V, num_emitted)
            floor = moved / (bw * 1e9) * 1e6
            full = B * (2 * k + 1) * V * 4 / (bw * 1e9) * 1e6
            acc = float((num_emitted - 1).sum()) / (B * k)
            gbs = moved / (t_kernel * 1e-6) / 1e9
            print(f"{B:>4} {V:>7} {acc:>5.2f} {t_kernel:>10.1f} {t_public:>10.1f} {t_default:>11.1f} {t_torch:>9.1f} {t_torch / t_kernel:>7.1f}x "
                  f"{moved / 1e6:>8.1f} {floor:>9.1f} {gbs:>7.0f} {100 * gbs / bw:>6.0f}% {full:>19.1f}")
    print("\ntriton: the kernel launcher with per-request seeds (its default path), output width given;")
    print("public: rejection_sample(backend='triton', seeds=..., validate=False, max_num_draft_tokens=k), sync-free;")
    print("default: rejection_sample(backend='triton') with validate=True (host syncs for the checks);")
    print("torch: rejection_sample(backend='torch', generator=..., validate=False), host syncs included;")
    print("min MB: bytes an exact sampler must move for this outcome; floor: min MB at the copy bandwidth;")
    print("full-read floor: reading all 2k + 1 rows per request once, as a design that processes every row does.")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer shapes")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("no CUDA device: this script needs a GPU (CPU numbers: benchmarks/bench_cpu.py)")
        return 2
    device = torch.device("cuda")
    print(f"torch {torch.__version__}, triton {triton.__version__}, {torch.cuda.get_device_name(device)}")

    print("\n1. correctness")
    ok = check_agreement(device)
    ok &= check_exactness(device)
    if not ok:
        print("correctness FAILED: no timings")
        return 1

    print("\n2. timing (medians of triton.testing.do_bench, k = 4, float32)")
    batches = [1, 8, 64, 256] if not args.quick else [1, 64]
    vocabs = [32000, 128256, 151936] if not args.quick else [128256]
    run_benchmarks(device, batches, vocabs)
    return 0


if __name__ == "__main__":
    sys.exit(main())

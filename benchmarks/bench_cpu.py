"""CPU benchmark of specdec's torch backend: time, bytes moved, effective bandwidth.

    python benchmarks/bench_cpu.py [--batch 64] [--k 4] [--vocab 128256] [--repeats 11]

One verification step for B requests with k drafts each over a vocabulary of V (float32), with
drafts drawn from a draft distribution close to the target (acceptance around 0.6). For each
mode of randomness it reports the median and best time (a shared machine is noisy), the bytes the torch backend's operations read
and write (counted per operation, as annotated in `specdec/sampler.py`), the effective GB/s,
and that bandwidth as a fraction of this machine's copy bandwidth, measured in the same run.

Two reference sizes are printed alongside:
- minimum bytes: what an exact sampler must move given the outcome (the gathered p(x), q(x) and
  ids of the visited positions, the one target row per request, the draft row after a
  rejection, the outputs) - what `triton_kernel.py` moves;
- full read: the (2k + 1) rows per request a design that processes every row reads once.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from specdec import rejection_sample  # noqa: E402


def make_step(B: int, k: int, V: int, seed: int = 0):
    """Target rows [B(k+1), V], draft rows [B k, V], drafts drawn from q, k_i = k."""
    g = torch.Generator().manual_seed(seed)
    target_logits = torch.randn(B * (k + 1), V, generator=g) * 2.0
    req_rows = (torch.arange(B * k) // k) * (k + 1) + torch.arange(B * k) % k  # target row of each draft
    draft_logits = target_logits[req_rows] + torch.randn(B * k, V, generator=g) * 0.5
    p = torch.softmax(target_logits, dim=-1)
    q = torch.softmax(draft_logits, dim=-1)
    drafts = torch.multinomial(q, 1, generator=g)[:, 0]
    return p, q, drafts, torch.full((B,), k, dtype=torch.int64)


def bytes_torch_backend(B, k, V, num_emitted, mode, elem=4):
    """Bytes the torch backend's operations read + write (see the comments in sampler.py)."""
    N = B * k
    U = B * V * elem  # one [B, V] float32 matrix
    n_bonus = int((num_emitted == k + 1).sum())
    total = 0
    total += N * (8 + 4 + 4 + 4 + 4)  # ids, gathered p(x), q(x), uniforms, accept flags
    total += 2 * U  # index_select p rows: read, write
    total += 2 * U  # index_select q rows
    total += 3 * U  # p - q (out= the q buffer)
    total += 2 * U  # clamp_
    total += 2 * n_bonus * V * elem  # bonus rows copied over the residual
    total += 3 * U  # w / E in place
    total += 1 * U  # max over V
    total += B * (k + 1) * 8 * 2  # output fill and scatter
    if mode == "generator":
        total += 1 * U + 2 * U + 2 * U  # rand, log_, neg_
    return total


def bytes_minimum(B, k, V, num_emitted, elem=4):
    """What the Triton kernel moves in its default mode, given the outcome."""
    accepted = num_emitted - 1
    visited = torch.clamp(accepted + 1, max=k)  # positions whose p(x), q(x) are read
    rejected = accepted < k
    total = int(visited.sum()) * (8 + elem + elem)
    total += B * V * elem  # one target row per request
    total += int(rejected.sum()) * V * elem  # the draft row at the rejection
    total += int((accepted + 1).sum()) * 8 + B * 8 + B * (k + 1) * 8 + (B + 1) * 8
    return total


def timings(fn, repeats: int) -> tuple[float, float]:
    """(median, min) wall time in seconds over `repeats` calls after one warm-up call."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times)


def median_time(fn, repeats: int) -> float:
    return timings(fn, repeats)[0]


def copy_bandwidth(nbytes: int, repeats: int) -> tuple[float, float]:
    """GB/s of a copy into a preallocated tensor and of clone() (which also allocates), read + write."""
    src = torch.ones(nbytes // 4, dtype=torch.float32)
    dst = torch.empty_like(src)
    t_copy = median_time(lambda: dst.copy_(src), repeats)
    t_clone = median_time(lambda: src.clone(), repeats)
    return 2 * nbytes / t_copy / 1e9, 2 * nbytes / t_clone / 1e9


def page_faults() -> int:
    """Minor page faults of this process so far (Linux; 0 where resource is unavailable)."""
    try:
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    except ImportError:  # pragma: no cover
        return 0


def timed_with_faults(fn, repeats):
    """(median s, best s, minor faults per call) after a warm-up call."""
    fn()
    f0 = page_faults()
    t, best = timings(fn, repeats)
    return t, best, (page_faults() - f0) / (repeats + 1)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=128256)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    B, k, V = args.batch, args.k, args.vocab
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; B={B}, k={k}, V={V}, float32")
    p, q, drafts, num_draft = make_step(B, k, V)
    rows_bytes = (p.numel() + q.numel()) * 4
    # Floors, on buffers that are already faulted in (a fresh buffer pays a page fault per 4 KiB).
    dst = torch.empty_like(p)
    t_read, _, _ = timed_with_faults(lambda: (p.sum(), q.sum()), args.repeats)
    t_copy, _, _ = timed_with_faults(lambda: dst.copy_(p), args.repeats)
    t_clone, _, f_clone = timed_with_faults(lambda: p.clone(), args.repeats)
    copy_gbs = 2 * p.numel() * 4 / t_copy / 1e9
    print(f"one read of all input rows ({rows_bytes / 1e6:.0f} MB): {t_read * 1e3:.2f} ms; "
          f"copy_ of the target rows into a preallocated buffer {copy_gbs:.1f} GB/s; clone (fresh buffer) "
          f"{2 * p.numel() * 4 / t_clone / 1e9:.1f} GB/s with {f_clone:.0f} minor faults a call")

    from specdec import rng, sampler

    seeds = torch.arange(B, dtype=torch.int64)
    positions = torch.zeros(B, dtype=torch.int64)
    cu = torch.zeros(B + 1, dtype=torch.int64)
    torch.cumsum(num_draft, 0, out=cu[1:])
    keys = rng.request_keys(seeds)
    req = torch.repeat_interleave(torch.arange(B), num_draft)
    local = torch.arange(B * k) - cu[req]
    uniforms = rng.accept_uniforms(keys[req], local)

    def noise_rows(start, stop, n_acc, out):
        rng.noise_block_(rng.noise_keys(keys[start:stop], positions[start:stop] + n_acc), out)

    g = torch.Generator().manual_seed(1)
    modes = {
        "default call": lambda: rejection_sample(p, q, drafts, num_draft),
        "generator, validate": lambda: rejection_sample(p, q, drafts, num_draft, generator=g),
        "seeds, sync-free": lambda: rejection_sample(p, q, drafts, num_draft, seeds=seeds, validate=False,
                                                     max_num_draft_tokens=k),
        "kernel path": lambda: sampler._rejection_sample_torch(p, q, drafts, num_draft, cu, k, uniforms,
                                                               noise_rows, False, 0.0),
    }
    _, num_emitted = modes["default call"]()
    accept_rate = float((num_emitted - 1).sum()) / (B * k)
    minimum = bytes_minimum(B, k, V, num_emitted)
    print(f"acceptance rate {accept_rate:.2f}; minimum bytes {minimum / 1e6:.1f} MB; all input rows "
          f"{rows_bytes / 1e6:.1f} MB")
    print()
    header = f"{'path':<22} {'median ms':>9} {'best ms':>8} {'faults/call':>11} {'/ one read':>10} {'/ copy':>7}"
    print(header)
    print("-" * len(header))
    t_copy_rows = t_copy  # copy_ of the target rows: read + write of (k + 1) B rows
    for name, fn in [("floor: one read", lambda: (p.sum(), q.sum())), ("floor: copy_", lambda: dst.copy_(p))] + \
            list(modes.items()):
        t, best, faults = timed_with_faults(fn, args.repeats)
        print(f"{name:<22} {t * 1e3:9.2f} {best * 1e3:8.2f} {faults:11.0f} {t / t_read:10.2f} {t / t_copy_rows:7.2f}")
    print()
    print("default call: rejection_sample(p, q, drafts, k) (torch's global generator supplies the seeds, "
          "validate=True);")
    print("kernel path: the torch backend alone (seeded draws prepared, no validation, no host syncs);")
    print("/ one read: time over one read of all input rows (target and draft); / copy: over copy_ of the "
          "target rows (preallocated).")
    print("faults/call: minor page faults per call (large fresh CPU buffers cost one per 4 KiB page); the race "
          "works in cache-sized blocks, so only the outputs are freshly allocated.")


if __name__ == "__main__":
    main()

"""Group near-identical answers so that one decision can cover a group. Pure; no quadratic pass.

1. Normalise (NFKC, lower case, invisible characters, whitespace and punctuation removed) and put
   answers with the same normalised text in one group straight away.
2. For the distinct texts, MinHash signatures over character `SHINGLE`-grams, split into `BANDS`
   bands of `ROWS` rows (locality-sensitive hashing): texts sharing a band are candidates.
3. Exact Jaccard similarity of the shingle sets on the candidates; at or above `threshold` they are
   joined (union-find). Within one LSH bucket each text is compared with the bucket's first text
   and with its predecessor only, so a bucket of m texts costs 2m comparisons, not m².
Work is O(n · BANDS) plus the candidate comparisons: 500 answers group in well under a second.
"""
from __future__ import annotations

import re
import unicodedata
import zlib
from dataclasses import dataclass

import numpy as np

SHINGLE = 3
BANDS = 16
ROWS = 4
THRESHOLD = 0.7
_PRIME = (1 << 31) - 1
_rng = np.random.default_rng(20260707)
_A = _rng.integers(1, _PRIME, size=BANDS * ROWS, dtype=np.uint64)
_B = _rng.integers(0, _PRIME, size=BANDS * ROWS, dtype=np.uint64)
_DROP = re.compile(r"[\s\W_]+", re.UNICODE)
_INVISIBLE = dict.fromkeys(c for c in range(0x2000, 0x2070) if unicodedata.category(chr(c)) in ("Cf", "Zs", "Zl", "Zp"))
_INVISIBLE.update(dict.fromkeys((0x00AD, 0x034F, 0x061C, 0x180E, 0xFEFF)))


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text or "").translate(_INVISIBLE).lower()
    return _DROP.sub("", text)


def shingles(norm: str) -> set[str]:
    if len(norm) <= SHINGLE:
        return {norm}
    return {norm[i:i + SHINGLE] for i in range(len(norm) - SHINGLE + 1)}


def jaccard(a: set, b: set) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def signature(grams: set[str]) -> np.ndarray:
    hashes = np.fromiter((zlib.crc32(g.encode("utf-8")) & _PRIME for g in grams), dtype=np.uint64, count=len(grams))
    return ((np.outer(hashes, _A) + _B) % _PRIME).min(axis=0)


class _Union:
    def __init__(self, n: int):
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def join(self, i: int, j: int) -> None:
        a, b = self.find(i), self.find(j)
        if a != b:
            self.parent[max(a, b)] = min(a, b)


@dataclass(frozen=True)
class Group:
    members: tuple[int, ...]      # indexes into the texts given, first = the representative
    similarity: float             # the lowest similarity of a member to the representative (1.0: identical)


def group(texts: list[str], threshold: float = THRESHOLD) -> list[Group]:
    """Groups of near-identical texts, in order of their first member; every index in exactly one."""
    norms = [normalise(t) for t in texts]
    distinct: dict[str, int] = {}
    first_of = []                                  # text index -> index of its distinct text
    for norm in norms:
        first_of.append(distinct.setdefault(norm, len(distinct)))
    uniques = list(distinct)
    grams = [shingles(u) for u in uniques]
    union = _Union(len(uniques))
    buckets: dict[tuple, list[int]] = {}
    for k, g in enumerate(grams):
        if not uniques[k]:
            continue                               # empty answers only group with each other (step 1)
        sig = signature(g)
        for band in range(BANDS):
            buckets.setdefault((band, *sig[band * ROWS:(band + 1) * ROWS].tolist()), []).append(k)
    seen = set()
    for members in buckets.values():
        for pos in range(1, len(members)):
            for other in {members[0], members[pos - 1]}:
                pair = (other, members[pos])
                if pair in seen:
                    continue
                seen.add(pair)
                if jaccard(grams[other], grams[members[pos]]) >= threshold:
                    union.join(*pair)
    by_root: dict[int, list[int]] = {}
    for index, k in enumerate(first_of):
        by_root.setdefault(union.find(k), []).append(index)
    out = []
    for members in sorted(by_root.values(), key=lambda m: m[0]):
        head = grams[first_of[members[0]]]
        low = min(jaccard(head, grams[first_of[m]]) for m in members)
        out.append(Group(tuple(members), round(low, 3)))
    return out

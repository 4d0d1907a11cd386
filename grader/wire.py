"""The typed values that travel between the grader and the sandbox (`grader/harness.py`), both ways.

Protocol 2. A value is JSON where JSON is unambiguous, and a tagged object where it is not:

    null, true/false, numbers, strings     themselves (floats may be NaN / ±Infinity)
    [v, ...]                               a list
    {"$": "tuple", "items": [v, ...]}      a tuple
    {"$": "dict", "items": [[k, v], ...]}  a dict; keys are strings or integers
    {"$": "ratio", "counts": [k, ...], "denominator": d}
                                           grader → sandbox only: the list of floats k / d, rebuilt
                                           in the sandbox with the same correctly rounded division
                                           (far less JSON than 50k printed floats)

Every JSON object must carry a known tag: a bare object is an error, never guessed at. The harness
is standalone (it imports nothing from the project) and has its own copy of these rules; the tests
round-trip values through both.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

PROTOCOL = 2
MAX_DEPTH = 8


class WireError(ValueError):
    pass


@dataclass(frozen=True)
class Ratio:
    """A list of floats k / denominator, sent to the sandbox as integers."""

    counts: tuple[int, ...]
    denominator: int

    def floats(self) -> list[float]:
        return [k / self.denominator for k in self.counts]


def encode(value, depth: int = 0):
    """A Python value (None, bool, int, float, str, list, tuple, dict, Ratio) as wire JSON."""
    if depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    if value is None or type(value) in (bool, int, float, str):
        return value
    if isinstance(value, Ratio):
        return {"$": "ratio", "counts": list(value.counts), "denominator": value.denominator}
    if type(value) is list:
        return [encode(v, depth + 1) for v in value]
    if type(value) is tuple:
        return {"$": "tuple", "items": [encode(v, depth + 1) for v in value]}
    if type(value) is dict:
        if not all(type(k) in (str, int) for k in value):
            raise WireError("dict keys must be strings or integers")
        return {"$": "dict", "items": [[k, encode(v, depth + 1)] for k, v in value.items()]}
    raise WireError(f"cannot send a {type(value).__name__}")


def decode(value, depth: int = 0):
    """Wire JSON (as `json.loads` gave it) back to Python values; raises WireError on anything else."""
    if depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return value
    if kind is float:
        return value
    if kind is list:
        return [decode(v, depth + 1) for v in value]
    if kind is dict:
        tag = value.get("$")
        if tag == "tuple" and type(value.get("items")) is list:
            return tuple(decode(v, depth + 1) for v in value["items"])
        if tag == "dict" and type(value.get("items")) is list:
            out = {}
            for pair in value["items"]:
                if type(pair) is not list or len(pair) != 2 or type(pair[0]) not in (str, int):
                    raise WireError("malformed dict item")
                out[pair[0]] = decode(pair[1], depth + 1)
            return out
        raise WireError("an object without a known tag")
    raise WireError(f"unexpected JSON value of type {kind.__name__}")


def is_number(value) -> bool:
    """A real number as a judge should accept it: int or float, never bool."""
    return type(value) in (int, float)


def finite(value) -> bool:
    return is_number(value) and math.isfinite(value)

"""Test helpers for the hardening tests."""
import threading


def finishes_within(seconds, fn):
    """A hang guard, not a timing test: the attacks it guards took minutes, hours or forever before their fixes."""
    result = {}
    worker = threading.Thread(target=lambda: result.setdefault("value", fn()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still running after {seconds} s"
    return result["value"]

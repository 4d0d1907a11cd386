"""Course tooling: parse lessons, build notebooks, grade submissions."""

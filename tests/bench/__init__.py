"""Benchmarks: ``python -m tests.bench`` runs them all side by side (not part of the tests)."""

"""Benchmarks: ``python -m mmprog.bench NAME`` (speed lives here, never in timed tests)."""

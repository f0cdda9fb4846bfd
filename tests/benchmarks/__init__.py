"""Benchmark ladder and runner (python -m tests.benchmarks.run); not part of pytest."""

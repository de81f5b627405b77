"""Benchmarks of the native engine against numpy and torch (run: python -m benchmarks)."""

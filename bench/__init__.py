"""Reproducible benchmarks, each printing a table."""

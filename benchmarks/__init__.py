"""Benchmarks: ``python -m benchmarks`` (or ``nox -s bench``)."""

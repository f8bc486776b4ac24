"""Benchmarks of pykbroker beside tansu: throughput, startup time and resident memory.

Run everything with `python -m bench` (or `python bench/run_all.py`); see docs/benchmarks.md.
"""

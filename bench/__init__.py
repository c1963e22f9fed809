"""Benchmarks: how fast joinops answers, how little it asks of the clusters, how well it scales.

`make bench` (`python -m bench`) runs them; see docs/benchmarks.md for how to read the table.
Each figure is measured against a baseline in the same run or a stated floor; loopback only.
"""

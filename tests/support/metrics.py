"""What this test process counted in its Prometheus metrics (emptied before each test by
tests/conftest.py's `metrics_per_test`)."""

from __future__ import annotations

from prometheus_client import REGISTRY


def sample(name: str, **labels: str) -> float:
    """A sample's value, 0 when nothing was counted yet."""
    return REGISTRY.get_sample_value(name, labels) or 0.0

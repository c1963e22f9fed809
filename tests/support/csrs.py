"""Kubelet serving CSRs that come only once joinops looks for them (kubesim holds them)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from kubesim import Cluster, World


@contextmanager
def csrs_held_until_listed(world: World, cluster: Cluster) -> Iterator[None]:
    """Hold the kubelets' serving CSRs until a client lists CSRs in `cluster`: it then finds
    none and must wait for the request (a watch). On leaving, whatever happened, released."""
    world.hold_kubelet_csrs()
    leaving = threading.Event()

    def listed(records: list) -> bool:  # type: ignore[type-arg]
        return leaving.is_set() or any(
            r.resource == "certificatesigningrequests" and r.verb == "list" for r in records
        )

    def release() -> None:
        try:
            cluster.wait_for_requests(listed, timeout=120)
        finally:
            world.hold_kubelet_csrs(False)

    thread = threading.Thread(target=release, name="release-csrs")
    thread.start()
    try:
        yield
    finally:
        leaving.set()
        cluster.request_log.wake()
        thread.join()

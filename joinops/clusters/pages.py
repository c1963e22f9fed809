"""Lists read in pages (`limit`/`continue`), as client-go's pager reads them
(k8s.io/client-go/tools/pager): a cluster of 5,000 nodes and 150,000 pods is never asked for all
of a kind in one answer that the API server must build, and the client hold, at once.

Pages after the first carry the first page's continue token, which names the list's snapshot:
the items are one consistent list. When the server no longer honours a token (410 Expired:
etcd compacted past the snapshot, about 5 minutes on a default kube-apiserver) the list starts
again from its first page, never taking the pages read so far for the whole list; after
`RESTARTS` such restarts it is read in one unpaginated call, which cannot expire (client-go's
pager does that at the first expiry: `FullListIfExpired`).

A list asked with `resource_version="0"` is served from the API server's watch cache (a read
that may be a little stale, and cheap); its pages after the first go without it, since the
server refuses a resourceVersion next to a continue token.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from joinops.errors import ClusterExpired

log = logging.getLogger(__name__)

PAGE_SIZE = 500  # kubectl's and client-go's pager's default chunk size
RESTARTS = 3


@dataclass(frozen=True)
class Listing:
    """A whole list: its items, and the resourceVersion of its snapshot (to watch from)."""

    items: list[Any]
    resource_version: str


class KubeCluster(Protocol):
    """What a list needs of `kube.KubeCluster` (which uses this module): its name, its calls."""

    name: str

    def call(
        self, verb: str, resource: str, fn: Callable[..., Any], *args: Any, **kw: Any
    ) -> Any: ...


class _Expired(Exception):
    """A continue token was refused: the pages read so far are no list."""


def list_all(
    cluster: KubeCluster,
    what: str,
    list_fn: Callable[..., Any],
    *args: Any,
    page_size: int = PAGE_SIZE,
    **selectors: Any,
) -> Listing:
    """Every item `list_fn` (an official-client list call) returns for `selectors`, page by
    page; `what` names the list in errors (`pods on node-7`)."""
    for _ in range(RESTARTS):
        try:
            return _read_pages(cluster, what, list_fn, args, selectors, page_size)
        except _Expired:
            log.info("%s: the list of %s expired between pages; listing again", cluster.name, what)
    whole = cluster.call("list", what, list_fn, *args, **selectors)
    return Listing(list(whole.items or []), str(whole.metadata.resource_version or ""))


def _read_pages(
    cluster: KubeCluster,
    what: str,
    list_fn: Callable[..., Any],
    args: tuple[Any, ...],
    selectors: dict[str, Any],
    page_size: int,
) -> Listing:
    items: list[Any] = []
    version = ""
    token: str | None = None
    while True:
        kwargs = {**selectors, "limit": page_size}
        if token:
            kwargs.pop("resource_version", None)
            kwargs["_continue"] = token
        try:
            page = cluster.call("list", what, list_fn, *args, **kwargs)
        except ClusterExpired as e:
            if token:
                raise _Expired() from e
            raise
        items.extend(page.items or [])
        version = version or str(page.metadata.resource_version or "")
        token = page.metadata._continue
        if not token:
            return Listing(items, version)

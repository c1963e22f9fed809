"""List, then watch from the list's resourceVersion, and list again when the server says so:
what client-go's reflector does (staging/src/k8s.io/client-go/tools/cache/reflector.go).

A watch (or a list carrying a resourceVersion) answered 410 Gone ("too old resource version")
or 504 "Too large resource version" (the API server's watch cache is behind the version asked
for; it waits about 3 s, then gives up with Retry-After 1) is not a failure: the state is read
again with a fresh list (no resourceVersion: served from etcd), and the watch restarts from
that list. Neither ever fails a step. Other API errors are translated into the project's own
(`KubeCluster.translate`); a broken connection is `ClusterUnreachable`.

The list is read in pages (`pages.py`); with `from_cache` its first read is served from the
API server's watch cache (`resourceVersion=0`, as a reflector's first list): the watch that
follows brings every change after it, so a stale start cannot hurt a wait. Watches ask for
bookmarks (`allowWatchBookmarks`): a BOOKMARK event only moves the resourceVersion a later
watch resumes from (so it need not go back to a version the server may have compacted).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import urllib3
from kubernetes import watch
from kubernetes.client.exceptions import ApiException

from joinops.clusters import pages
from joinops.clusters.kube import KubeCluster
from joinops.errors import ClusterUnreachable

RELIST_STATUSES = frozenset({410, 504})
MAX_WATCH_SECONDS = 30.0
BEHIND_BACKOFF_SECONDS = 0.5  # after a 504 the cache is behind: do not hammer it (Retry-After 1)

_event_types: dict[Any, Any] = {}  # list function -> its events' model (see `event_type`)

Matches = Callable[[Any], bool]
Relist = Callable[[], tuple[list[Any], str]]  # the objects now, and the version to watch from


def should_relist(error: ApiException) -> bool:
    """410 Gone or 504 Too large resource version: list afresh and watch again."""
    return (error.status or 0) in RELIST_STATUSES


def wait_for(
    cluster: KubeCluster,
    what: str,
    list_fn: Callable[..., Any],
    *args: Any,
    matches: Matches,
    deadline: float,
    clock: Callable[[], float] = time.time,
    relist: Relist | None = None,
    deletion_ends: bool = False,
    from_cache: bool = False,
    **selectors: Any,
) -> Any | None:
    """The first object (from the list or a watch event) that `matches`; None at the deadline.

    `list_fn` is a list call of the official client (`core.list_node`, ...) taking `selectors`;
    `relist` replaces the fresh list (e.g. a GET by name where only `get` is granted);
    `deletion_ends`: a watched object's deletion ends the wait too (the deleted object is
    returned, whether it matches or not; None when the list no longer has it);
    `from_cache`: the first list may come from the watch cache (relists never do).
    """
    cached = {**selectors, "resource_version": "0"} if from_cache else selectors
    first = relist or (lambda: _list(cluster, what, list_fn, args, cached))
    fresh = relist or (lambda: _list(cluster, what, list_fn, args, selectors))
    resource_version: str | None = None
    listed = False
    while clock() < deadline:
        if resource_version is None:
            items, resource_version = (fresh if listed else first)()
            listed = True
            found = next((item for item in items if matches(item)), None)
            if found is not None:
                return found
            if deletion_ends and not items:
                return None  # gone before the watch began: its deletion was the end
            continue
        try:
            found, resource_version = _watch_once(
                cluster,
                list_fn,
                args,
                selectors,
                resource_version,
                deadline - clock(),
                (lambda obj, kind: kind == "DELETED" or matches(obj))
                if deletion_ends
                else (lambda obj, kind: kind != "DELETED" and matches(obj)),
            )
        except ApiException as e:
            if should_relist(e):
                resource_version = None
                if e.status == 504:
                    time.sleep(min(BEHIND_BACKOFF_SECONDS, max(0.0, deadline - clock())))
                continue
            raise cluster._translate("watch", what, e) from e
        except (urllib3.exceptions.HTTPError, OSError) as e:
            raise ClusterUnreachable(
                cluster.name,
                f"the API server at {cluster.server} did not answer ({type(e).__name__})",
            ) from e
        if found is not None:
            return found
    return None


def event_type(list_fn: Callable[..., Any]) -> Any:
    """The model a watch on `list_fn` deserializes its events into (`V1Pod` for
    `list_namespaced_pod`): found once per list function, as the client finds it (from the
    function's signature or docstring: 5 % of a worker's CPU when done for every watch)."""
    function = getattr(list_fn, "__func__", list_fn)  # the API class's, whichever client
    found = _event_types.get(function)
    if found is None:
        found = _event_types[function] = watch.Watch().get_return_type(list_fn)
    return found


def _list(
    cluster: KubeCluster,
    what: str,
    list_fn: Callable[..., Any],
    args: tuple[Any, ...],
    selectors: dict[str, Any],
) -> tuple[list[Any], str]:
    listing = pages.list_all(cluster, what, list_fn, *args, **selectors)
    return listing.items, listing.resource_version


def _watch_once(
    cluster: KubeCluster,
    list_fn: Callable[..., Any],
    args: tuple[Any, ...],
    selectors: dict[str, Any],
    resource_version: str,
    seconds: float,
    ends: Callable[[Any, str], bool],
) -> tuple[Any | None, str]:
    seconds = max(1.0, min(seconds, MAX_WATCH_SECONDS))
    stream = watch.Watch(return_type=event_type(list_fn))
    for event in stream.stream(
        list_fn,
        *args,
        resource_version=resource_version,
        allow_watch_bookmarks=True,
        timeout_seconds=int(seconds),
        _request_timeout=seconds + cluster.timeout,
        **selectors,
    ):
        if event["type"] == "BOOKMARK":  # no object: only where the watch has got to
            metadata = (event.get("raw_object") or {}).get("metadata") or {}
            resource_version = str(metadata.get("resourceVersion") or resource_version)
            continue
        obj = event["object"]
        resource_version = obj.metadata.resource_version or resource_version
        if ends(obj, event["type"]):
            stream.stop()
            return obj, resource_version
    return None, resource_version

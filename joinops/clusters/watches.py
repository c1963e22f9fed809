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

A watch is read here, not by the official client's `watch.Watch`, which per watch built a new
`ApiClient` (a deep copy of the default configuration), looked at the list function's
signature and docstring, and turned every event's object back into JSON to parse it again:
over 4 % of a worker's CPU in the stitch benchmark. Here each event line is parsed once and its
object built as the official client builds a list's items (`Model.from_dict`); the same
request goes out (`watch=true`, the same parameters), an ERROR event raises the same
`ApiException` with the event's code, and an answer other than 2xx raises as any call does.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import urllib3
from kubernetes import watch
from kubernetes.client.exceptions import ApiException
from kubernetes.watch.watch import iter_resp_lines

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
    since: str | None = None,
    **selectors: Any,
) -> Any | None:
    """The first object (from the list or a watch event) that `matches`; None at the deadline.

    `list_fn` is a list call of the official client (`core.list_node`, ...) taking `selectors`;
    `relist` replaces the fresh list (e.g. a GET by name where only `get` is granted);
    `deletion_ends`: a watched object's deletion ends the wait too (the deleted object is
    returned, whether it matches or not; None when the list no longer has it);
    `from_cache`: the first list may come from the watch cache (relists never do);
    `since`: a resourceVersion the caller has seen the objects at (one it was given by an
    earlier wait): the wait begins with a watch from there, not with a list.
    """
    cached = {**selectors, "resource_version": "0"} if from_cache else selectors
    first = relist or (lambda: _list(cluster, what, list_fn, args, cached))
    fresh = relist or (lambda: _list(cluster, what, list_fn, args, selectors))
    resource_version: str | None = since or None
    listed = resource_version is not None
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
    model = event_type(list_fn)
    response = list_fn(
        *args,
        watch=True,
        _preload_content=False,
        resource_version=resource_version,
        allow_watch_bookmarks=True,
        timeout_seconds=int(seconds),
        _request_timeout=seconds + cluster.timeout,
        **selectors,
    )
    try:
        for kind, raw in _events(response):
            if kind == "BOOKMARK":  # no object: only where the watch has got to
                metadata = raw.get("metadata") or {}
                resource_version = str(metadata.get("resourceVersion") or resource_version)
                continue
            obj = model.from_dict(raw)
            resource_version = obj.metadata.resource_version or resource_version
            if ends(obj, kind):
                return obj, resource_version
    finally:
        response.close()  # a watch left early: its connection is not reused
        response.release_conn()
    return None, resource_version


def _events(response: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """(type, object) of each event line of a watch's answer; an ERROR event (a 410 "too old
    resource version", ...) raises `ApiException` with its code, as the official client's
    watch does when it does not retry (it never does when `timeout_seconds` is given)."""
    for line in iter_resp_lines(response):
        if not line or line.isspace():
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        obj = event.get("object")
        if event.get("type") == "ERROR":
            error = obj if isinstance(obj, dict) else {}
            raise ApiException(
                status=error.get("code"), reason=f"{error.get('reason')}: {error.get('message')}"
            )
        yield str(event.get("type")), obj if isinstance(obj, dict) else {}

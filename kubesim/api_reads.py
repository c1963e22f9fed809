"""The read verbs of the API: get (also as a server-side Table), list in pages, watch."""

from __future__ import annotations

import base64
import json
from typing import Any

from kubesim import tables
from kubesim.api_request import RequestParsing, int_or_bad, int_param
from kubesim.entries import Entry, Watcher, sort_key
from kubesim.errors import ApiError, bad_request, method_not_allowed
from kubesim.http_messages import Request, Response, WatchStream, json_response
from kubesim.resources import Resource
from kubesim.routes import Route


class ReadVerbs(RequestParsing):
    def _get(self, req: Request, route: Route) -> Response:
        res = self._res(route)
        if route.subresource == "eviction":
            raise method_not_allowed()
        entry = self.cluster.store.require(res, route.namespace, route.name)
        if tables.wants_table(req.headers.get("accept", "")):
            meta = {"resourceVersion": entry.meta["resourceVersion"]}
            return self._table(req, res, [entry], meta)
        return Response(200, entry.raw())

    def _table(
        self, req: Request, res: Resource, entries: list[Entry], list_meta: dict[str, Any]
    ) -> Response:
        now = self.cluster.world.clock.time()
        body = tables.table(res.kind, [e.obj for e in entries], list_meta, now)
        include = req.query.get("includeObject", "Metadata")
        for row, entry in zip(body["rows"], entries, strict=True):
            if include == "Object":
                row["object"] = entry.obj
            elif include == "None":
                row.pop("object")
        return json_response(200, body)

    def _list(self, req: Request, route: Route) -> Response:
        res = self._res(route)
        labels, fields = self._selectors(req, res)
        store = self.cluster.store
        limit = int_param(req.query, "limit")
        token = req.query.get("continue")
        if token and req.query.get("resourceVersion"):
            raise bad_request("specifying resource version is not allowed when using continue")
        start, list_rv = _decode_continue(token) if token else ("", 0)
        with store.lock:
            if token and 0 < list_rv < store.compacted:
                return _continue_expired(start)
            entries, remaining = store.page(
                res, route.namespace or None, labels, fields, start, limit if limit else None
            )
            list_rv = store.rv if list_rv <= 0 else list_rv
        list_meta: dict[str, Any] = {"resourceVersion": str(list_rv)}
        if remaining and entries:
            list_meta["continue"] = _encode_continue(sort_key(entries[-1]), list_rv)
            if remaining > 0:  # only known without selectors, as on the real server
                list_meta["remainingItemCount"] = remaining
        if tables.wants_table(req.headers.get("accept", "")):
            return self._table(req, res, entries, list_meta)
        head = {"kind": res.list_kind, "apiVersion": res.api_version, "metadata": list_meta}
        body = json.dumps(head, separators=(",", ":")).encode()[:-1]
        items = b",".join(entry.raw() for entry in entries)
        return Response(200, body + b',"items":[' + items + b"]}")

    def _watch(self, req: Request, route: Route) -> Response:
        res = self._res(route)
        labels, fields = self._selectors(req, res)
        watcher = Watcher(res, route.namespace or None, labels, fields)
        rv_text = req.query.get("resourceVersion") or ""
        since = None if rv_text in ("", "0") else int_or_bad(rv_text, "resourceVersion")
        timeout = float(int_param(req.query, "timeoutSeconds") or self.cluster.world.watch_timeout)
        watcher.bookmarks = req.query.get("allowWatchBookmarks") in ("true", "1")
        oldest = self.cluster.store.watch(watcher, since)
        error = None
        if oldest is not None:
            error = ApiError(
                410, f"too old resource version: {since} ({oldest - 1})", reason="Expired"
            ).status()
        return Response(200, stream=WatchStream(watcher, timeout, error))


def _continue_expired(start: str) -> Response:
    """What the API server answers a continue token older than etcd's compaction (recorded:
    fixtures/real-apiserver/list-410-continue-token-expired.json): 410 Expired, with a token
    that goes on from the same place without the snapshot (rv -1: an inconsistent list)."""
    return json_response(
        410,
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {"continue": _encode_continue(start, -1)},
            "status": "Failure",
            "message": CONTINUE_EXPIRED,
            "reason": "Expired",
            "code": 410,
        },
    )


CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted between "
    "the time the first chunk was returned and now may show up in the list."
)


def _encode_continue(start: str, rv: int) -> str:
    token = {"v": "meta.k8s.io/v1", "rv": rv, "start": start + "\x00"}
    return base64.urlsafe_b64encode(json.dumps(token).encode()).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[str, int]:
    try:
        padded = token + "=" * (-len(token) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded))
        return str(data["start"]).rstrip("\x00"), int(data["rv"])
    except (ValueError, KeyError, TypeError) as exc:
        raise bad_request(f"continue key is not valid: {exc}") from exc

"""What an API request carries, read as the API server reads it: its resource, its object
body and namespace, its selectors and integer parameters."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kubesim.errors import bad_request
from kubesim.http_messages import Request
from kubesim.resources import Resource
from kubesim.routes import Route
from kubesim.selectors import parse_field_selector, parse_label_selector

if TYPE_CHECKING:
    from kubesim.protocols import SimCluster


class RequestParsing:
    cluster: SimCluster

    def _res(self, route: Route) -> Resource:
        assert route.resource is not None
        return route.resource

    def _body(self, req: Request) -> Any:
        try:
            return json.loads(req.body or b"null")
        except ValueError as exc:
            raise bad_request(f"couldn't get version/kind; json parse error: {exc}") from exc

    def _object_body(self, req: Request, res: Resource) -> dict[str, Any]:
        body = self._body(req)
        if not isinstance(body, dict):
            raise bad_request(
                f"the object provided is unrecognized (must be of type {res.kind}): "
                "couldn't get version/kind"
            )
        body.setdefault("metadata", {})
        if not isinstance(body["metadata"], dict):
            raise bad_request("metadata must be an object")
        return body

    def _check_namespace(self, route: Route, obj: dict[str, Any]) -> None:
        res = self._res(route)
        meta = obj["metadata"]
        if not res.namespaced:
            meta.pop("namespace", None)
            return
        given = meta.get("namespace")
        if given and given != route.namespace:
            raise bad_request(
                "the namespace of the provided object does not match the namespace sent on the "
                "request"
            )
        meta["namespace"] = route.namespace

    def _selectors(self, req: Request, res: Resource) -> tuple[Any, Any]:
        labels = parse_label_selector(req.query.get("labelSelector"))
        fields = parse_field_selector(req.query.get("fieldSelector"), res.getters)
        return labels, fields


def int_param(query: Mapping[str, str], name: str) -> int | None:
    value = query.get(name)
    return None if not value else int_or_bad(value, name)


def int_or_bad(value: str, name: str) -> int:
    try:
        return int(value)
    except ValueError as exc:
        raise bad_request(f"invalid value for {name}: {value!r}") from exc

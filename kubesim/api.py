"""The REST semantics of the API server, independent of HTTP: one request in, one answer out."""

from __future__ import annotations

import traceback
from typing import TYPE_CHECKING

from kubesim import discovery, objects
from kubesim.api_reads import ReadVerbs
from kubesim.api_writes import WriteVerbs
from kubesim.errors import ApiError, internal, method_not_allowed
from kubesim.http_messages import Request, Response, error_response, json_response
from kubesim.rbac import Attributes
from kubesim.routes import Route, parse, verb

if TYPE_CHECKING:
    from kubesim.protocols import SimCluster


class Api(ReadVerbs, WriteVerbs):
    """Serves one cluster's API. ``handle`` never raises."""

    def __init__(self, cluster: SimCluster) -> None:
        self.cluster = cluster

    # ---- entry point -------------------------------------------------------------------
    def attributes(self, req: Request) -> tuple[Route | None, Attributes | None]:
        try:
            route = parse(req.path)
        except ApiError:
            return None, None
        if route.resource is None:
            return route, None
        watch = req.query.get("watch") in ("true", "1")
        action = verb(req.method, route, watch)
        name = route.name
        if not name and action in ("list", "watch"):
            name = _selected_name(req.query.get("fieldSelector", ""))
        return route, Attributes(
            action,
            route.resource.group,
            route.resource.name,
            route.subresource,
            route.namespace,
            name,
        )

    def handle(self, req: Request) -> Response:
        try:
            return self._handle(req)
        except ApiError as err:
            return error_response(err)
        except Exception as exc:  # a bug in the simulation: answer 500 and keep the trace
            self.cluster.internal_errors.append(traceback.format_exc())
            return error_response(internal(f"{type(exc).__name__}: {exc}"))

    def _handle(self, req: Request) -> Response:
        token = req.headers.get("authorization", "")
        if token != f"Bearer {self.cluster.token}":
            raise ApiError(401, "Unauthorized")
        route = parse(req.path)
        if route.resource is None:
            return self._non_resource(req, route)
        _, attrs = self.attributes(req)
        assert attrs is not None
        self.cluster.rbac.check(attrs)
        handler = getattr(self, "_" + attrs.verb, None)
        if handler is None or (attrs.verb in ("update", "patch") and not route.name):
            raise method_not_allowed()
        response: Response = handler(req, route)
        return response

    def _non_resource(self, req: Request, route: Route) -> Response:
        if req.method != "GET":
            raise method_not_allowed()
        if route.special == "/version":
            return json_response(200, objects.version_info(self.cluster.version))
        if route.special in ("/healthz", "/readyz", "/livez"):
            return Response(200, b"ok", {"Content-Type": "text/plain; charset=utf-8"})
        if route.special == "/api":
            return json_response(
                200,
                {
                    "kind": "APIVersions",
                    "versions": ["v1"],
                    "serverAddressByClientCIDRs": [
                        {"clientCIDR": "0.0.0.0/0", "serverAddress": self.cluster.host_port}
                    ],
                },
            )
        if route.special == "/apis":
            return json_response(200, discovery.group_list())
        resources = discovery.resource_list(route.special)
        if resources is not None:
            return json_response(200, resources)
        raise ApiError(404, "the server could not find the requested resource", details={})


def _selected_name(field_selector: str) -> str:
    """Like the real request info: a list or watch selecting `metadata.name=X` is about X, so
    RBAC `resourceNames` can allow it."""
    for term in field_selector.split(","):
        key, _, value = term.partition("=")
        if key.strip() == "metadata.name" and value:
            return value.removeprefix("=").strip()
    return ""

"""URL paths to (resource, namespace, name, subresource) and the verb of a request."""

from __future__ import annotations

from dataclasses import dataclass

from kubesim.errors import path_not_found
from kubesim.resources import SUBRESOURCES, Resource, lookup

DISCOVERY = {"/version", "/api", "/apis", "/healthz", "/readyz", "/livez"}


@dataclass(frozen=True)
class Route:
    resource: Resource | None  # None for non-resource paths
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    special: str = ""  # non-resource path, e.g. /version

    @property
    def collection(self) -> bool:
        return self.resource is not None and not self.name


def parse(path: str) -> Route:
    path = path.rstrip("/") or "/"
    if path in DISCOVERY:
        return Route(None, special=path)
    parts = path.strip("/").split("/")
    if parts[0] == "api" and len(parts) >= 2:
        group, version, rest = "", parts[1], parts[2:]
    elif parts[0] == "apis" and len(parts) >= 3:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        raise path_not_found()
    if not rest:
        return Route(None, special=path)
    namespace = ""
    if rest[0] == "namespaces" and len(rest) == 3 and rest[2] in ("status", "finalize"):
        pass  # /api/v1/namespaces/{name}/status is the namespace's own subresource
    elif rest[0] == "namespaces" and len(rest) >= 3:
        namespace, rest = rest[1], rest[2:]
    resource = lookup(group, version, rest[0])
    if resource is None:
        raise path_not_found()
    if namespace and not resource.namespaced:
        raise path_not_found()
    name = rest[1] if len(rest) > 1 else ""
    sub = rest[2] if len(rest) > 2 else ""
    if len(rest) > 3 or (sub and (resource.name, sub) not in SUBRESOURCES):
        raise path_not_found()
    if resource.name == "namespaces" and not namespace:
        # /api/v1/namespaces/{name}[/status]
        return Route(resource, "", name, sub)
    return Route(resource, namespace, name, sub)


def verb(method: str, route: Route, watch: bool) -> str:
    if method == "GET":
        if route.name:
            return "get"
        return "watch" if watch else "list"
    if method == "POST":
        return "create"
    if method == "PUT":
        return "update"
    if method == "PATCH":
        return "patch"
    if method == "DELETE":
        return "delete" if route.name else "deletecollection"
    return method.lower()

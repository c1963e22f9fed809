"""Replaying recorded real-apiserver exchanges against kubesim: load a recording, send the same
request over HTTPS, and compare what a client reads (see fixtures/real-apiserver/README.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from kubesim import Cluster

FIXTURES = Path(__file__).parent / "fixtures" / "real-apiserver"
IGNORED_META = {"uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"}


def recording(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return data


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: Any


def send(
    cluster: Cluster,
    method: str,
    path: str,
    query: dict[str, str] | None = None,
    body: Any = None,
    content_type: str = "application/json",
) -> Answer:
    """One request as the recording client sent it (bearer token, Accept: application/json)."""
    pool = cluster.api_client().rest_client.pool_manager
    url = cluster.server + path + ("?" + urlencode(query) if query else "")
    headers = {
        "Authorization": f"Bearer {cluster.token}",
        "Accept": "application/json",
        "Content-Type": content_type,
    }
    payload = None if body is None else json.dumps(body).encode()
    resp = pool.request(method, url, body=payload, headers=headers, preload_content=True)
    text = resp.data.decode()
    if (query or {}).get("watch") == "true":
        parsed: Any = [json.loads(line) for line in text.splitlines() if line.strip()]
    else:
        parsed = json.loads(text) if text else None
    return Answer(resp.status, {k.lower(): v for k, v in resp.headers.items()}, parsed)


def replay(cluster: Cluster, name: str, **changes: Any) -> tuple[dict[str, Any], Answer]:
    """Send the recorded request (path/body overridable) and return (recording, answer)."""
    rec = recording(name)
    req = rec["request"]
    content_type = (req.get("headers") or {}).get("content-type", "application/json")
    answer = send(
        cluster,
        changes.get("method", req["method"]),
        changes.get("path", req["path"]),
        changes.get("query", req.get("query") or {}),
        changes.get("body", req.get("body")),
        content_type,
    )
    return rec, answer


def pdb_arithmetic(pdb: dict[str, Any]) -> dict[str, Any]:
    """The status fields a client reads from a PodDisruptionBudget."""
    status = pdb.get("status") or {}
    return {
        "currentHealthy": status.get("currentHealthy"),
        "desiredHealthy": status.get("desiredHealthy"),
        "expectedPods": status.get("expectedPods"),
        "disruptionsAllowed": status.get("disruptionsAllowed"),
        "observed": "observedGeneration" in status,
        "disrupted": sorted(status.get("disruptedPods") or {}),
        "conditions": [
            (c.get("type"), c.get("status"), c.get("reason"))
            for c in status.get("conditions") or []
        ],
    }


def deletion_fields(pod: dict[str, Any]) -> tuple[bool, Any]:
    meta = pod["metadata"]
    return "deletionTimestamp" in meta, meta.get("deletionGracePeriodSeconds")


def status_fields(body: dict[str, Any]) -> dict[str, Any]:
    """The Status fields clients match on."""
    details = body.get("details") or {}
    return {
        "kind": body.get("kind"),
        "status": body.get("status"),
        "reason": body.get("reason"),
        "code": body.get("code"),
        "message": body.get("message"),
        "details.name": details.get("name"),
        "details.kind": details.get("kind"),
        "causes": [(c.get("reason"), c.get("field")) for c in details.get("causes") or []],
        "retryAfterSeconds": details.get("retryAfterSeconds"),
    }

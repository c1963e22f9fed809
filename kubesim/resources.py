"""The REST resources the simulated server serves, and their field selectors."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kubesim.selectors import FieldGetter, path_getter

_META = ("metadata.name", "metadata.namespace")


@dataclass(frozen=True)
class Resource:
    name: str  # plural, as in the URL
    kind: str
    group: str = ""
    version: str = "v1"
    namespaced: bool = True
    has_status: bool = False  # has a /status subresource (PUT/PATCH of the main path ignore status)
    has_spec_generation: bool = False  # metadata.generation bumps on spec changes
    fields: tuple[str, ...] = _META
    dns_label_names: bool = False  # names must be a DNS-1123 label (namespaces), else subdomain
    getters: Mapping[str, FieldGetter] = field(default_factory=dict, compare=False)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_kind(self) -> str:
        return self.kind + "List"


def _resource(**kwargs: object) -> Resource:
    res = Resource(**kwargs)  # type: ignore[arg-type]
    object.__setattr__(res, "getters", {f: path_getter(f) for f in res.fields})
    return res


RESOURCES: dict[tuple[str, str], Resource] = {}


def _register(res: Resource) -> Resource:
    RESOURCES[(res.group, res.name)] = res
    return res


NODES = _register(
    _resource(
        name="nodes",
        kind="Node",
        namespaced=False,
        has_status=True,
        fields=("metadata.name", "spec.unschedulable"),
    )
)
NAMESPACES = _register(
    _resource(
        name="namespaces",
        kind="Namespace",
        namespaced=False,
        has_status=True,
        fields=("metadata.name", "status.phase"),
        dns_label_names=True,
    )
)
PODS = _register(
    _resource(
        name="pods",
        kind="Pod",
        has_status=True,
        has_spec_generation=True,
        fields=(
            *_META,
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        ),
    )
)
SECRETS = _register(_resource(name="secrets", kind="Secret", fields=(*_META, "type")))
CONFIGMAPS = _register(_resource(name="configmaps", kind="ConfigMap"))
SERVICEACCOUNTS = _register(_resource(name="serviceaccounts", kind="ServiceAccount"))
EVENTS = _register(
    _resource(
        name="events",
        kind="Event",
        fields=(
            *_META,
            "involvedObject.kind",
            "involvedObject.name",
            "involvedObject.namespace",
            "involvedObject.uid",
            "reason",
            "type",
        ),
    )
)
PDBS = _register(
    _resource(
        name="poddisruptionbudgets",
        kind="PodDisruptionBudget",
        group="policy",
        has_status=True,
        has_spec_generation=True,
    )
)
DAEMONSETS = _register(
    _resource(
        name="daemonsets", kind="DaemonSet", group="apps", has_status=True, has_spec_generation=True
    )
)
REPLICASETS = _register(
    _resource(
        name="replicasets",
        kind="ReplicaSet",
        group="apps",
        has_status=True,
        has_spec_generation=True,
    )
)
DEPLOYMENTS = _register(
    _resource(
        name="deployments",
        kind="Deployment",
        group="apps",
        has_status=True,
        has_spec_generation=True,
    )
)
STATEFULSETS = _register(
    _resource(
        name="statefulsets",
        kind="StatefulSet",
        group="apps",
        has_status=True,
        has_spec_generation=True,
    )
)
JOBS = _register(
    _resource(
        name="jobs",
        kind="Job",
        group="batch",
        has_status=True,
        has_spec_generation=True,
        fields=(*_META, "status.successful"),
    )
)
PERSISTENTVOLUMES = _register(
    _resource(
        name="persistentvolumes",
        kind="PersistentVolume",
        namespaced=False,
        has_status=True,
        fields=("metadata.name",),
    )
)
PVCS = _register(
    _resource(name="persistentvolumeclaims", kind="PersistentVolumeClaim", has_status=True)
)
LEASES = _register(_resource(name="leases", kind="Lease", group="coordination.k8s.io"))
CSRS = _register(
    _resource(
        name="certificatesigningrequests",
        kind="CertificateSigningRequest",
        group="certificates.k8s.io",
        namespaced=False,
        has_status=True,
        fields=("metadata.name", "spec.signerName"),
    )
)
ROLES = _register(_resource(name="roles", kind="Role", group="rbac.authorization.k8s.io"))
ROLEBINDINGS = _register(
    _resource(name="rolebindings", kind="RoleBinding", group="rbac.authorization.k8s.io")
)

SUBRESOURCES = {
    ("pods", "eviction"),
    ("pods", "binding"),
    ("pods", "status"),
    ("nodes", "status"),
    ("namespaces", "status"),
    ("poddisruptionbudgets", "status"),
    ("daemonsets", "status"),
    ("replicasets", "status"),
    ("deployments", "status"),
    ("statefulsets", "status"),
    ("jobs", "status"),
    ("persistentvolumes", "status"),
    ("persistentvolumeclaims", "status"),
    ("certificatesigningrequests", "approval"),
    ("certificatesigningrequests", "status"),
}


def lookup(group: str, version: str, name: str) -> Resource | None:
    res = RESOURCES.get((group, name))
    if res is None or res.version != version:
        return None
    return res


def by_kind(kind: str) -> Resource | None:
    for res in RESOURCES.values():
        if res.kind == kind:
            return res
    return None

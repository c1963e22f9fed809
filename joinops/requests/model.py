"""Domain facts: what joinops knows about nodes and clusters, independent of any API client."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane"
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class Role(StrEnum):
    WORKER = "worker"
    CONTROL_PLANE = "control-plane"


@dataclass(frozen=True, order=True)
class Version:
    """A Kubernetes version, `v1.32.4` (pre-release and build suffixes are kept as text)."""

    major: int
    minor: int
    patch: int
    suffix: str = ""

    @classmethod
    def parse(cls, text: str) -> Version:
        match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.(\d+))?([-+].*)?", text.strip())
        if not match:
            raise ValueError(f"not a Kubernetes version: {text!r}")
        major, minor, patch, suffix = match.groups()
        return cls(int(major), int(minor), int(patch or 0), suffix or "")

    def __str__(self) -> str:
        return f"v{self.major}.{self.minor}.{self.patch}{self.suffix}"

    @property
    def minor_line(self) -> str:
        return f"v{self.major}.{self.minor}"


@dataclass(frozen=True)
class NodeFacts:
    """What a node tells about itself through its cluster's API."""

    name: str
    kubelet_version: Version
    is_control_plane: bool
    architecture: str
    operating_system: str
    os_image: str
    container_runtime: str
    ready: bool
    unschedulable: bool
    internal_ip: str = ""  # status.addresses' InternalIP, as this cluster reports it

    @property
    def runtime_name(self) -> str:
        """`cri-o://1.31.1` -> `cri-o`."""
        return self.container_runtime.split("://", 1)[0]


@dataclass(frozen=True)
class ClusterFacts:
    """What a cluster's API tells about the cluster, read in a constant number of calls."""

    name: str
    version: Version
    control_plane_endpoint: str  # "" when kubeadm was run without one
    server: str  # the API server URL joinops reaches it at
    control_planes: tuple[NodeFacts, ...]
    pod_subnet: str = ""  # kubeadm's networking.podSubnet ("" when none; dual-stack: "v4,v6")
    controller_manager_args: tuple[tuple[str, str], ...] = ()  # kubeadm's extraArgs for it


def node_name_problem(name: str) -> str | None:
    """Why `name` cannot be a Kubernetes node name, or None when it can."""
    if not name:
        return "a node name cannot be empty"
    if len(name) > 253:
        return f"a node name is at most 253 characters (this one has {len(name)})"
    if any(len(label) > 63 for label in name.split(".")):
        return "each dot-separated part of a node name is at most 63 characters"
    if not DNS1123_SUBDOMAIN.match(name):
        return (
            "a node name uses lowercase letters, digits, '-' and '.', "
            "and starts and ends with a letter or digit"
        )
    return None

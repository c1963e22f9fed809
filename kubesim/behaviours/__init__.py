"""Controllers and node-side behaviour, reacting to store changes through the world's timer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubesim.behaviours.certificates import Certificates
from kubesim.behaviours.disruption import DisruptionController
from kubesim.behaviours.host import HostAgent
from kubesim.behaviours.kubelet import Kubelet
from kubesim.behaviours.nodes import NodeLifecycle
from kubesim.behaviours.signer import BootstrapSigner
from kubesim.controllers import Controllers

if TYPE_CHECKING:
    from kubesim.entries import Change
    from kubesim.protocols import SimCluster, SimWorld


class Behaviours:
    def __init__(self, world: SimWorld) -> None:
        self.kubelet = Kubelet(world)
        self.disruption = DisruptionController(world)
        self.signer = BootstrapSigner(world)
        self.hosts = HostAgent(world)
        self.nodes = NodeLifecycle(world)
        self.certificates = Certificates(world)
        self.controllers = Controllers(world)

    def changed(self, cluster: SimCluster, change: Change) -> None:
        self.controllers.changed(cluster, change)
        if change.resource == "pods":
            self.kubelet.on_pod(cluster, change)
            self.disruption.on_pod(cluster, change)
            if change.type == "DELETED":
                namespace = change.new.meta.get("namespace", "")
                cluster.world.schedule(0, lambda: cluster.namespace_emptied(namespace))
        elif change.resource == "nodes":
            self.nodes.on_node(cluster, change)
            self.certificates.on_node(cluster, change)
        elif change.resource == "certificatesigningrequests":
            self.certificates.on_csr(cluster, change)
        elif change.resource == "poddisruptionbudgets":
            self.disruption.on_pdb(cluster, change)
        elif change.resource in ("secrets", "configmaps"):
            self.signer.on_change(cluster, change)

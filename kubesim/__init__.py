"""kubesim: stateful simulated kubeadm clusters served over HTTPS for the official client."""

from kubesim.cluster import Cluster
from kubesim.hosts import Host, NodeSpec
from kubesim.request_log import RequestRecord
from kubesim.world import World, WorldEvent

__all__ = ["Cluster", "Host", "NodeSpec", "RequestRecord", "World", "WorldEvent"]

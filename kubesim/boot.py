"""A fresh machine that boots with a kubeadm JoinConfiguration and runs `kubeadm join` once.

What an Ignition file's first-boot unit does on a real host: the machine belongs to no cluster
yet; after ``world.join_seconds`` it tries to join with the given configuration, through the
same checks as a node agent's join (endpoint, token and its signature, CA hash, version skew,
name, uploaded certificates for a control plane). On success its Node registers NotReady in the
target and turns Ready; on failure the reason is in ``world.join_failure(name)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import yaml

from kubesim.behaviours.join_preflight import JoinAttempt
from kubesim.hosts import Host
from kubesim.kubeadm import find_join_configuration

if TYPE_CHECKING:
    from kubesim.world import World


def boot_host(
    world: World,
    name: str,
    join_config: dict[str, Any] | str,
    *,
    kubelet_version: str = "v1.32.0",
    architecture: str = "amd64",
    os_image: str = "Oracle Linux Server 9.5",
    container_runtime: str = "cri-o://1.32.1",
) -> Host:
    """Boot a new machine called ``name`` (its hostname) with ``join_config`` (a
    JoinConfiguration as a dict, or the YAML text of /etc/kubernetes/kubeadm.conf)."""
    text = join_config if isinstance(join_config, str) else yaml.safe_dump(join_config)
    config = find_join_configuration(text)
    if config is None:
        raise ValueError("no kubeadm JoinConfiguration (kubeadm.k8s.io/v1beta3 or v1beta4) given")
    with world.lock:
        if any(h.name == name for h in world.hosts):
            raise ValueError(f"a host named {name} already exists")
        world.host_count += 1
        n = world.host_count
        host = Host(
            name=name,
            kubelet_version=kubelet_version,
            architecture=architecture,
            operating_system="linux",
            os_image=os_image,
            container_runtime=container_runtime,
            internal_ip=f"10.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}",
            cluster=None,
            kubelet_running=False,
        )
        world.hosts.append(host)
    attempt = JoinAttempt(host, "", config, "kubeadm", [])
    world.record_event("", "host-booted", name, "kubeadm join on first boot")
    world.schedule(world.join_seconds, lambda: world.behaviours.hosts.join(attempt))
    return host

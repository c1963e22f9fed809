"""Ignition (spec 3.4.0) for a new host that joins a kubeadm cluster on first boot. Pure.

`build_ignition(inputs)` returns the config as a dict: the JoinConfiguration at
/etc/kubernetes/kubeadm.conf, a oneshot unit that runs `kubeadm join --config` once, crio and
kubelet enabled, proxy drop-ins, the admin user, the OCK pieces (update service, `ocne.service`
told to join rather than initialise) and, for a control plane behind a virtual IP, keepalived
and the nginx stream proxy. The byo.yaml's extra Ignition is merged last and wins.

Every file is a base64 `data:` URL with its mode and `overwrite: true` (ignition_files); the
merge is ignition_merge, the virtual IP's keepalived and nginx ignition_virtual_ip. See
docs/ignition.md.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import yaml

from joinops.ignition.byo_resolve import ResolvedByo
from joinops.ignition.files import file_contents, file_entry
from joinops.ignition.merge import merge
from joinops.ignition.schema import SPEC_VERSION
from joinops.ignition.virtual_ip import NGINX_UNIT, virtual_ip_pieces
from joinops.requests.model import Role

KUBEADM_CONF = "/etc/kubernetes/kubeadm.conf"
KUBELET_CONF = "/etc/kubernetes/kubelet.conf"
JOIN_UNIT = "joinops-join.service"
WAIT_SCRIPT = "/etc/joinops/wait-for-interface.sh"
REGISTRY_CONF = "/etc/containers/registries.conf.d/50-joinops-registry.conf"
OCK_UPDATE_CONF = "/etc/ocne/update.yaml"
ADMIN_USER = "ocne"
PROXY_DROPIN = "proxy.conf"
WAIT_FOR_INTERFACE_SECONDS = 300


@dataclass(frozen=True)
class IgnitionInputs:
    """Everything the file is made of; read from the cluster and the byo.yaml beforehand."""

    cluster: str
    role: Role
    join_config: dict[str, Any]  # the kubeadm JoinConfiguration
    endpoint: str  # host:port the host joins through
    target_minor: str  # e.g. "1.32": the default OCK update tag
    byo: ResolvedByo | None = None
    control_plane_addresses: tuple[str, ...] = ()  # existing control planes (virtual IP only)
    service_subnet: str = ""
    pod_subnet: str = ""


@dataclass
class Built:
    config: dict[str, Any]
    overridden: list[str] = field(default_factory=list)  # "file /x", "unit y" replaced by extras


# --- building ---


def build_ignition(inputs: IgnitionInputs) -> Built:
    """The whole config, extra Ignition merged last. Not validated here (see ignition_validate)."""
    config = base_config(inputs)
    overridden: list[str] = []
    for extra in inputs.byo.extras if inputs.byo else ():
        config, replaced = merge(config, extra.config)
        overridden += [r for r in replaced if r not in overridden]
    return Built(config, overridden)


def base_config(inputs: IgnitionInputs) -> dict[str, Any]:
    byo = inputs.byo.config if inputs.byo else None
    interface = byo.network_interface if byo else ""
    files = [
        file_entry(KUBEADM_CONF, _kubeadm_conf(inputs), 0o600),
        file_entry(WAIT_SCRIPT, _wait_script(), 0o755),
    ]
    units: list[dict[str, Any]] = [
        {"name": "crio.service", "enabled": True},
        {"name": "kubelet.service", "enabled": True},
        {"name": JOIN_UNIT, "enabled": True, "contents": _join_unit(inputs, interface)},
        {
            "name": "ocne.service",
            "dropins": [_dropin("joinops-join.conf", _ocne_dropin(interface))],
        },
    ]
    if byo and byo.registry:
        files.append(file_entry(REGISTRY_CONF, _registry_conf(byo.registry), 0o644))
    os_update = inputs.byo.os_update if inputs.byo else None
    if os_update is not None:
        transport, registry, tag = os_update
        text = yaml.safe_dump(
            {"registry": registry, "tag": tag or inputs.target_minor, "transport": transport},
            sort_keys=False,
        )
        files.append(file_entry(OCK_UPDATE_CONF, text, 0o644))
        units.append({"name": "ocne-update.service", "enabled": True})
    if byo and byo.virtual_ip and inputs.role is Role.CONTROL_PLANE:
        vip_files, vip_units = virtual_ip_pieces(
            inputs.cluster, byo, inputs.control_plane_addresses
        )
        files += vip_files
        units += vip_units
    if byo and byo.proxy.is_set:
        proxied = ["crio.service", "containerd.service", "kubelet.service"]
        if os_update is not None:
            proxied += ["ocne-update.service", "rpm-ostreed.service"]
        if byo.virtual_ip and inputs.role is Role.CONTROL_PLANE:
            proxied.append(NGINX_UNIT)
        dropin = _dropin(PROXY_DROPIN, _proxy_dropin(inputs))
        for name in proxied:
            unit = next((u for u in units if u["name"] == name), None)
            if unit is None:
                unit = {"name": name}
                units.append(unit)
            unit.setdefault("dropins", []).append(dict(dropin))
    config: dict[str, Any] = {"ignition": {"version": SPEC_VERSION}}
    user = _admin_user(inputs.byo)
    if user is not None:
        config["passwd"] = {"users": [user]}
    config["storage"] = {"files": files}
    config["systemd"] = {"units": units}
    return config


def render(config: dict[str, Any]) -> bytes:
    """The file's bytes: JSON, two-space indent, a final newline."""
    return (json.dumps(config, indent=2) + "\n").encode()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- reading a config back ---


def join_configuration_of(config: dict[str, Any]) -> dict[str, Any] | None:
    """The JoinConfiguration in a config's /etc/kubernetes/kubeadm.conf, or None."""
    raw = file_contents(config, KUBEADM_CONF)
    if raw is None:
        return None
    try:
        docs = list(yaml.safe_load_all(raw.decode()))
    except (yaml.YAMLError, UnicodeDecodeError):
        return None
    for doc in docs:
        if isinstance(doc, dict) and doc.get("kind") == "JoinConfiguration":
            return doc
    return None


# --- the pieces ---


def _kubeadm_conf(inputs: IgnitionInputs) -> str:
    head = (
        f"# Written by joinops: join {inputs.cluster} as a {role_words(inputs.role)} on first\n"
        "# boot"
        f" ({JOIN_UNIT}). Removed once the join succeeded: it holds the join secret.\n"
    )
    return head + yaml.safe_dump(inputs.join_config, sort_keys=False)


def _join_unit(inputs: IgnitionInputs, interface: str) -> str:
    env = f"Environment=NET_INTERFACE={interface}\n" if interface else ""
    return (
        "[Unit]\n"
        f"Description=Join Kubernetes cluster {inputs.cluster} as a {role_words(inputs.role)}"
        " (joinops)\n"
        "Wants=network-online.target\n"
        "After=network-online.target crio.service containerd.service\n"
        f"ConditionPathExists={KUBEADM_CONF}\n"
        f"ConditionPathExists=!{KUBELET_CONF}\n"
        "\n"
        "[Service]\n"
        "Type=oneshot\n"
        "RemainAfterExit=yes\n"
        f"{env}"
        f"ExecStartPre=/bin/sh {WAIT_SCRIPT}\n"
        f"ExecStart=kubeadm join --config {KUBEADM_CONF}\n"
        f"ExecStartPost=rm -f {KUBEADM_CONF}\n"
        "\n"
        "[Install]\n"
        "WantedBy=multi-user.target\n"
    )


def _wait_script() -> str:
    return (
        "#!/bin/sh\n"
        "# joinops: wait until the cluster network interface has an address, so that\n"
        "# kubeadm join does not start before the network. No interface named: no wait.\n"
        '[ -n "${NET_INTERFACE:-}" ] || exit 0\n'
        "waited=0\n"
        f'while [ "$waited" -lt {WAIT_FOR_INTERFACE_SECONDS} ]; do\n'
        '  if ip -o address show dev "$NET_INTERFACE" scope global 2>/dev/null \\\n'
        "      | grep -q inet; then\n"
        "    exit 0\n"
        "  fi\n"
        "  sleep 2\n"
        "  waited=$((waited + 2))\n"
        "done\n"
        f'echo "joinops: $NET_INTERFACE has no address after {WAIT_FOR_INTERFACE_SECONDS} s" >&2\n'
        "exit 1\n"
    )


def _ocne_dropin(interface: str) -> str:
    """On OCK hosts `ocne.service` initialises a cluster of its own unless told to join; it
    runs after our unit, finds the host joined and does nothing (or retries the join)."""
    env = f"Environment=NET_INTERFACE={interface}\n" if interface else ""
    return f"[Unit]\nAfter={JOIN_UNIT}\n\n[Service]\nEnvironment=ACTION=join\n{env}"


def _dropin(name: str, contents: str) -> dict[str, Any]:
    return {"name": name, "contents": contents}


def _registry_conf(registry: str) -> str:
    return (
        "# Written by joinops from byo.yaml `registry`.\n"
        f'unqualified-search-registries = ["{registry}"]\n'
    )


def _proxy_dropin(inputs: IgnitionInputs) -> str:
    assert inputs.byo is not None
    proxy = inputs.byo.config.proxy
    lines = ["[Service]"]
    if proxy.http_proxy:
        lines.append(f'Environment="HTTP_PROXY={proxy.http_proxy}" "http_proxy={proxy.http_proxy}"')
    if proxy.https_proxy:
        lines.append(
            f'Environment="HTTPS_PROXY={proxy.https_proxy}" "https_proxy={proxy.https_proxy}"'
        )
    no_proxy = ",".join(no_proxy_list(inputs))
    lines.append(f'Environment="NO_PROXY={no_proxy}" "no_proxy={no_proxy}"')
    return "\n".join(lines) + "\n"


def no_proxy_list(inputs: IgnitionInputs) -> list[str]:
    """The operator's noProxy, then what must never go through the proxy: the API endpoint's
    host, the service and pod networks, and the host itself."""
    assert inputs.byo is not None
    cfg = inputs.byo.config
    host = inputs.endpoint.rsplit(":", 1)[0].strip("[]")
    items = [x.strip() for x in cfg.proxy.no_proxy.split(",") if x.strip()]
    items += [host, cfg.api_host]
    items += [inputs.service_subnet or cfg.service_subnet, inputs.pod_subnet or cfg.pod_subnet]
    items += ["localhost", "127.0.0.1"]
    return list(dict.fromkeys(x for x in items if x))


def _admin_user(byo: ResolvedByo | None) -> dict[str, Any] | None:
    if byo is None or not (byo.ssh_keys or byo.config.password):
        return None
    user: dict[str, Any] = {"name": ADMIN_USER, "groups": ["wheel"]}
    if byo.ssh_keys:
        user["sshAuthorizedKeys"] = list(byo.ssh_keys)
    if byo.config.password:
        user["passwordHash"] = byo.config.password
    return user


def role_words(role: Role) -> str:
    return "control plane" if role is Role.CONTROL_PLANE else "worker"

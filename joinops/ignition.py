"""Ignition (spec 3.4.0) for a new host that joins a kubeadm cluster on first boot. Pure.

`build_ignition(inputs)` returns the config as a dict: the JoinConfiguration at
/etc/kubernetes/kubeadm.conf, a oneshot unit that runs `kubeadm join --config` once, crio and
kubelet enabled, proxy drop-ins, the admin user, the OCK pieces (update service, `ocne.service`
told to join rather than initialise) and, for a control plane behind a virtual IP, keepalived
and the nginx stream proxy. The byo.yaml's extra Ignition is merged last and wins.

Every file is a base64 `data:` URL with its mode and `overwrite: true`. See docs/ignition.md.
"""

from __future__ import annotations

import base64
import copy
import gzip
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import yaml

from joinops.byo import DEFAULT_CONTAINER_REGISTRY, ResolvedByo
from joinops.ignition_validate import SPEC_VERSION, decode_data_url
from joinops.model import Role

KUBEADM_CONF = "/etc/kubernetes/kubeadm.conf"
KUBELET_CONF = "/etc/kubernetes/kubelet.conf"
JOIN_UNIT = "joinops-join.service"
WAIT_SCRIPT = "/etc/joinops/wait-for-interface.sh"
REGISTRY_CONF = "/etc/containers/registries.conf.d/50-joinops-registry.conf"
OCK_UPDATE_CONF = "/etc/ocne/update.yaml"
KEEPALIVED_CONF = "/etc/keepalived/keepalived.conf"
KEEPALIVED_CHECK = "/etc/keepalived/check_apiserver.sh"
NGINX_DIR = "/etc/ocne/nginx"
NGINX_CONF = f"{NGINX_DIR}/nginx.conf"
NGINX_START = f"{NGINX_DIR}/start.sh"
NGINX_UNIT = "ocne-nginx.service"  # the reference CLI's name, so the fleet looks the same
NGINX_IMAGE = "nginx:1.17.7-1"  # under the byo.yaml's registry (default the reference's)
VRRP_ROUTER_ID = 51  # must match the cluster's other keepalived instances (the reference's)
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
        vip_files, vip_units = _virtual_ip_pieces(inputs)
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


def file_entry(path: str, contents: str | bytes, mode: int) -> dict[str, Any]:
    data = contents.encode() if isinstance(contents, str) else contents
    return {
        "path": path,
        "mode": mode,
        "overwrite": True,
        "contents": {"source": data_url(data)},
    }


def data_url(data: bytes) -> str:
    return "data:;base64," + base64.b64encode(data).decode("ascii")


def render(config: dict[str, Any]) -> bytes:
    """The file's bytes: JSON, two-space indent, a final newline."""
    return (json.dumps(config, indent=2) + "\n").encode()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- merging (extra Ignition last) ---

_KEYED = {
    ("storage", "files"): "path",
    ("storage", "directories"): "path",
    ("storage", "links"): "path",
    ("storage", "disks"): "device",
    ("storage", "raid"): "name",
    ("storage", "filesystems"): "device",
    ("storage", "luks"): "name",
    ("systemd", "units"): "name",
    ("passwd", "users"): "name",
    ("passwd", "groups"): "name",
}
_PATH_KINDS = (("storage", "files"), ("storage", "directories"), ("storage", "links"))


def merge(base: dict[str, Any], extra: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """`extra` over `base`, as Ignition merges a child config: entries keyed by path (files,
    directories, links) or name (units, users...) are merged field by field with the child's
    fields winning; a unit's drop-ins merge by name; list values of users are unioned. A path
    the child declares as another kind (a link where a file was) replaces the parent's entry.
    Returns the merged config and what the child changed ("file /x", "unit y.service")."""
    merged = copy.deepcopy(base)
    changed: list[str] = []
    for key, value in extra.items():
        if key == "ignition":
            section = merged.setdefault("ignition", {})
            for sub, sub_value in (value or {}).items():
                if sub == "version":
                    continue
                if isinstance(sub_value, dict) and isinstance(section.get(sub), dict):
                    section[sub] = {**section[sub], **copy.deepcopy(sub_value)}
                else:
                    section[sub] = copy.deepcopy(sub_value)
        elif key == "kernelArguments":
            section = merged.setdefault(key, {})
            for sub, items in (value or {}).items():
                section[sub] = _union(section.get(sub) or [], items or [])
        elif key in ("storage", "systemd", "passwd"):
            section = merged.setdefault(key, {})
            for sub, items in (value or {}).items():
                id_key = _KEYED.get((key, sub))
                if id_key is None:
                    section[sub] = copy.deepcopy(items)
                    continue
                for item in items or []:
                    label = _merge_item(merged, (key, sub), id_key, item)
                    if label and label not in changed:
                        changed.append(label)
        else:
            merged[key] = copy.deepcopy(value)
    return merged, changed


def _merge_item(
    merged: dict[str, Any], where: tuple[str, str], id_key: str, item: dict[str, Any]
) -> str:
    section, sub = where
    entries: list[dict[str, Any]] = merged[section].setdefault(sub, [])
    ident = item.get(id_key)
    label = ""
    if where in _PATH_KINDS:
        for other in _PATH_KINDS:
            if other == where:
                continue
            others = merged.get(other[0], {}).get(other[1]) or []
            kept = [e for e in others if e.get("path") != ident]
            if len(kept) != len(others):
                merged[other[0]][other[1]] = kept
                label = f"{other[1][:-1]} {ident}"
    existing = next((e for e in entries if e.get(id_key) == ident), None)
    if existing is None:
        entries.append(copy.deepcopy(item))
        return label
    for field_name, value in item.items():
        if field_name == "dropins":
            existing["dropins"] = _merge_dropins(existing.get("dropins") or [], value or [])
        elif field_name in ("sshAuthorizedKeys", "groups") and section == "passwd":
            existing[field_name] = _union(existing.get(field_name) or [], value or [])
        elif field_name == "append":
            existing["append"] = (existing.get("append") or []) + copy.deepcopy(value or [])
        else:
            existing[field_name] = copy.deepcopy(value)
    kind = {"files": "file", "directories": "directory", "links": "link", "units": "unit"}
    return f"{kind.get(sub, sub[:-1])} {ident}"


def _merge_dropins(base: list[dict[str, Any]], extra: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = [dict(d) for d in base]
    for dropin in extra:
        found = next((d for d in out if d.get("name") == dropin.get("name")), None)
        if found is None:
            out.append(dict(dropin))
        else:
            found.update(dropin)
    return out


def _union(base: list[Any], extra: list[Any]) -> list[Any]:
    out = list(base)
    out += [x for x in extra if x not in out]
    return out


# --- reading a config back ---


def file_contents(config: dict[str, Any], path: str) -> bytes | None:
    """The decoded contents of one file of a config (data URLs only), or None."""
    for entry in (config.get("storage") or {}).get("files") or []:
        if entry.get("path") != path:
            continue
        contents = entry.get("contents") or {}
        source = contents.get("source")
        if not isinstance(source, str) or not source.startswith("data:"):
            return None
        data = decode_data_url(source)
        return gzip.decompress(data) if contents.get("compression") == "gzip" else data
    return None


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
    return _union([], [x for x in items if x])


def _admin_user(byo: ResolvedByo | None) -> dict[str, Any] | None:
    if byo is None or not (byo.ssh_keys or byo.config.password):
        return None
    user: dict[str, Any] = {"name": ADMIN_USER, "groups": ["wheel"]}
    if byo.ssh_keys:
        user["sshAuthorizedKeys"] = list(byo.ssh_keys)
    if byo.config.password:
        user["passwordHash"] = byo.config.password
    return user


def _virtual_ip_pieces(inputs: IgnitionInputs) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """keepalived holds the virtual IP on the interface; nginx on every control plane listens
    on the bind port and spreads connections over the control planes' API servers, which
    listen on the alternate port (the reference CLI's layout)."""
    assert inputs.byo is not None
    cfg = inputs.byo.config
    bind, alt = cfg.kube_api_server_bind_port, cfg.kube_api_server_bind_port_alt
    peers = [a for a in inputs.control_plane_addresses if a]
    servers = [_host_port(a, alt) for a in peers] + [_host_port("127.0.0.1", alt)]
    image = f"{(cfg.registry or DEFAULT_CONTAINER_REGISTRY).rstrip('/')}/{NGINX_IMAGE}"
    peer_lines = "".join(f"    {p}\n" for p in peers)
    keepalived = (
        "# Written by joinops: the API server's virtual IP, shared by the control planes.\n"
        "global_defs {\n"
        "  enable_script_security\n"
        "  script_user root\n"
        "}\n"
        "vrrp_script apiserver_lb {\n"
        f'  script "{KEEPALIVED_CHECK}"\n'
        "  interval 5\n"
        "  fall 3\n"
        "  rise 2\n"
        "}\n"
        "vrrp_instance kubernetes_api {\n"
        "  state BACKUP\n"
        f"  interface {cfg.network_interface}\n"
        f"  virtual_router_id {VRRP_ROUTER_ID}\n"
        "  priority 50\n"
        + (f"  unicast_peer {{\n{peer_lines}  }}\n" if peers else "")
        + "  virtual_ipaddress {\n"
        f"    {cfg.virtual_ip}\n"
        "  }\n"
        "  track_script {\n"
        "    apiserver_lb\n"
        "  }\n"
        "}\n"
    )
    check = (
        "#!/bin/sh\n"
        "# joinops: healthy while the local load balancer answers HTTPS on the bind port.\n"
        f"exec curl --silent --insecure --max-time 2 --output /dev/null https://127.0.0.1:{bind}/livez\n"
    )
    upstream = "".join(f"    server {s};\n" for s in servers)
    nginx = (
        "# Written by joinops: TCP load balancing over the control planes' API servers.\n"
        "load_module /usr/lib64/nginx/modules/ngx_stream_module.so;\n"
        "events {\n"
        "  worker_connections 2048;\n"
        "}\n"
        "stream {\n"
        "  upstream kube_apiservers {\n"
        f"{upstream}"
        "  }\n"
        "  server {\n"
        f"    listen {bind};\n"
        "    proxy_connect_timeout 2s;\n"
        "    proxy_pass kube_apiservers;\n"
        "  }\n"
        "}\n"
    )
    start = (
        "#!/bin/sh\n"
        "# joinops: nginx from the host when installed, else from a container image.\n"
        f"conf={NGINX_CONF}\n"
        "if command -v nginx >/dev/null 2>&1; then\n"
        "  exec nginx -c \"$conf\" -g 'daemon off;'\n"
        "fi\n"
        f"exec podman run --rm --network=host --volume={NGINX_DIR}:/etc/nginx:ro {image}\n"
    )
    unit = (
        "[Unit]\n"
        f"Description=Load balancer for the Kubernetes API servers of {inputs.cluster} (joinops)\n"
        "Wants=network-online.target\n"
        "After=network-online.target\n"
        "Before=keepalived.service\n"
        "StartLimitIntervalSec=0\n"
        "\n"
        "[Service]\n"
        f"ExecStart=/bin/sh {NGINX_START}\n"
        "Restart=always\n"
        "RestartSec=2\n"
        "\n"
        "[Install]\n"
        "WantedBy=multi-user.target\n"
    )
    files = [
        file_entry(KEEPALIVED_CONF, keepalived, 0o644),
        file_entry(KEEPALIVED_CHECK, check, 0o755),
        file_entry(NGINX_CONF, nginx, 0o644),
        file_entry(NGINX_START, start, 0o755),
    ]
    units = [
        {"name": NGINX_UNIT, "enabled": True, "contents": unit},
        {"name": "keepalived.service", "enabled": True},
    ]
    return files, units


def role_words(role: Role) -> str:
    return "control plane" if role is Role.CONTROL_PLANE else "worker"


def _host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

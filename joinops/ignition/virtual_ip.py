"""A control plane behind a virtual IP: keepalived holds the address, a local nginx spreads the
API traffic over the control planes (the reference CLI's layout). Pure.

`virtual_ip_pieces(cluster, cfg, control_plane_addresses)` returns the files and units the
Ignition config adds for it.
"""

from __future__ import annotations

from typing import Any

from joinops.ignition.byo import DEFAULT_CONTAINER_REGISTRY, ByoConfig
from joinops.ignition.files import file_entry

KEEPALIVED_CONF = "/etc/keepalived/keepalived.conf"
KEEPALIVED_CHECK = "/etc/keepalived/check_apiserver.sh"
NGINX_DIR = "/etc/ocne/nginx"
NGINX_CONF = f"{NGINX_DIR}/nginx.conf"
NGINX_START = f"{NGINX_DIR}/start.sh"
NGINX_UNIT = "ocne-nginx.service"  # the reference CLI's name, so the fleet looks the same
NGINX_IMAGE = "nginx:1.17.7-1"  # under the byo.yaml's registry (default the reference's)
VRRP_ROUTER_ID = 51  # must match the cluster's other keepalived instances (the reference's)
# Says "this host carries joinops's VIP layout": a node agent that moves the host stops and
# disables keepalived and the local nginx between `kubeadm reset` and `kubeadm join`
# (workers/hostcleanup.py), and its probe ignores the API port nginx holds until then.
VIP_MARKER = "/etc/joinops/virtual-ip"
VIP_UNITS = ("keepalived.service", NGINX_UNIT)


def virtual_ip_pieces(
    cluster: str, cfg: ByoConfig, control_plane_addresses: tuple[str, ...]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """keepalived holds the virtual IP on the interface; nginx on every control plane listens
    on the bind port and spreads connections over the control planes' API servers, which
    listen on the alternate port (the reference CLI's layout)."""
    bind, alt = cfg.kube_api_server_bind_port, cfg.kube_api_server_bind_port_alt
    peers = [a for a in control_plane_addresses if a]
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
        f"Description=Load balancer for the Kubernetes API servers of {cluster} (joinops)\n"
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
        file_entry(
            VIP_MARKER, f"# joinops: keepalived and {NGINX_UNIT} hold {cluster}'s VIP\n", 0o644
        ),
    ]
    units = [
        {"name": NGINX_UNIT, "enabled": True, "contents": unit},
        {"name": "keepalived.service", "enabled": True},
    ]
    return files, units


def _host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

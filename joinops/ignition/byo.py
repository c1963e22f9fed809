"""The reference CLI's cluster configuration file (`byo.yaml`), as joinops reads it.

Operators hand joinops the same file they give `ocne cluster join --config byo.yaml`. Every key
of the reference's cluster configuration is accepted; the ones that matter for joining a new host
are checked, the others (libvirt, OCI, catalogs...) are accepted and ignored. A key the reference
does not know is refused: the reference would ignore a misspelt `networkInterfce` silently.

`load_byo` reads and checks the file (`resolve_byo` in joinops.ignition.byo_resolve then reads
what it points at: SSH key file, extra Ignition). Problems are `UsageError`s with one line per
problem, naming the file and the key.
"""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from joinops.errors import UsageError
from joinops.ignition import texts
from joinops.requests.model import Version

DEFAULT_BIND_PORT = 6443
DEFAULT_BIND_PORT_ALT = 6444  # the API server's port on control planes behind a virtual IP
DEFAULT_OS_REGISTRY = "ostree-unverified-registry:container-registry.oracle.com/olcne/ock-ostree"
DEFAULT_CONTAINER_REGISTRY = "container-registry.oracle.com/olcne"
OSTREE_TRANSPORTS = (
    "ostree-unverified-registry",
    "ostree-unverified-image",
    "ostree-image-signed",
    "ostree-remote-image",
)

# Text that ends up inside unit files, shell scripts and keepalived/nginx configs: no line
# breaks, quotes or shell metacharacters can be smuggled through it.
_SAFE = re.compile(r"^[A-Za-z0-9._:/@%+=,~\[\]-]*$")
_INTERFACE = re.compile(r"^[A-Za-z0-9_.:@-]{1,15}$")
_HOSTNAME = re.compile(
    r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
)
_CRYPT = re.compile(r"^\$(1|2[abxy]?|5|6|7|y|gy|sha1|md5)\$[./A-Za-z0-9$=,;+-]{8,}$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class Proxy(_Strict):
    """`proxy:` — the environment crio, the kubelet and image pulls run with."""

    http_proxy: str = Field(default="", alias="httpProxy")
    https_proxy: str = Field(default="", alias="httpsProxy")
    no_proxy: str = Field(default="", alias="noProxy")

    @field_validator("http_proxy", "https_proxy", "no_proxy")
    @classmethod
    def _one_line(cls, value: str) -> str:
        if not _SAFE.match(value):
            raise ValueError("must be one word: no spaces, quotes or line breaks")
        return value

    @property
    def is_set(self) -> bool:
        return bool(self.http_proxy or self.https_proxy or self.no_proxy)


class ByoProvider(_Strict):
    """`providers.byo:` — the two keys the reference's byo provider reads."""

    network_interface: str = Field(default="", alias="networkInterface")
    automatic_token_creation: bool | None = Field(default=None, alias="automaticTokenCreation")


class Providers(BaseModel):
    """`providers:` — only `byo` is read; the other providers' sections are accepted as they are."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    byo: ByoProvider = ByoProvider()
    libvirt: Any = None
    oci: Any = None
    olvm: Any = None


class ByoConfig(_Strict):
    """One byo.yaml. Field names follow the reference's YAML keys (aliases)."""

    virtual_ip: str = Field(default="", alias="virtualIp")
    load_balancer: str = Field(default="", alias="loadBalancer")
    kube_api_server_bind_port: int = Field(
        default=DEFAULT_BIND_PORT, alias="kubeApiServerBindPort", ge=1, le=65535
    )
    kube_api_server_bind_port_alt: int = Field(
        default=DEFAULT_BIND_PORT_ALT, alias="kubeApiServerBindPortAlt", ge=1, le=65535
    )
    proxy: Proxy = Proxy()
    registry: str = ""
    os_registry: str = Field(default="", alias="osRegistry")
    os_tag: str = Field(default="", alias="osTag")
    kubernetes_version: str = Field(default="", alias="kubernetesVersion")
    ssh_public_key: str = Field(default="", alias="sshPublicKey")
    ssh_public_key_path: str = Field(default="", alias="sshPublicKeyPath")
    password: str = ""
    extra_ignition: str = Field(default="", alias="extraIgnition")
    extra_ignition_inline: str = Field(default="", alias="extraIgnitionInline")
    providers: Providers = Providers()
    provider: str = ""
    pod_subnet: str = Field(default="", alias="podSubnet")
    service_subnet: str = Field(default="", alias="serviceSubnet")

    # Keys of the reference's cluster configuration that joining a host does not use.
    directory: Any = None
    name: Any = None
    kubeconfig: Any = None
    worker_nodes: Any = Field(default=None, alias="workerNodes")
    control_plane_nodes: Any = Field(default=None, alias="controlPlaneNodes")
    certificate_information: Any = Field(default=None, alias="certificateInformation")
    kube_proxy_mode: Any = Field(default=None, alias="kubeProxyMode")
    boot_volume_container_image: Any = Field(default=None, alias="bootVolumeContainerImage")
    cni: Any = None
    headless: Any = None
    catalog: Any = None
    community_catalog: Any = Field(default=None, alias="communityCatalog")
    catalogs: Any = None
    applications: Any = None
    ephemeral_cluster: Any = Field(default=None, alias="ephemeralCluster")
    cipher_suites: Any = Field(default=None, alias="cipherSuites")
    cluster_definition: Any = Field(default=None, alias="clusterDefinition")
    cluster_definition_inline: Any = Field(default=None, alias="clusterDefinitionInline")
    quiet: Any = None
    auto_start_ui: Any = Field(default=None, alias="autoStartUI")

    @field_validator("registry", "os_tag", "pod_subnet", "service_subnet")
    @classmethod
    def _one_word(cls, value: str) -> str:
        if not _SAFE.match(value):
            raise ValueError("must be one word: no spaces, quotes or line breaks")
        return value

    @property
    def network_interface(self) -> str:
        return self.providers.byo.network_interface

    @property
    def automatic_token_creation(self) -> bool | None:
        return self.providers.byo.automatic_token_creation

    @property
    def api_host(self) -> str:
        """The virtual IP or the load balancer: where the API is reached."""
        return self.virtual_ip or self.load_balancer

    def control_plane_bind_port(self) -> int:
        """The port a new control plane's API server listens on: behind a virtual IP the local
        nginx holds `kubeApiServerBindPort` and the API server moves to the alternate port."""
        if self.virtual_ip:
            return self.kube_api_server_bind_port_alt
        return self.kube_api_server_bind_port


# --- reading ---


def load_byo(path: Path) -> ByoConfig:
    """Read and check one byo.yaml; UsageError naming every problem."""
    try:
        text = path.read_text()
    except OSError as e:
        raise UsageError(texts.byo_unreadable(path, e.strerror or str(e))) from None
    return parse_byo(text, str(path))


def parse_byo(text: str, where: str) -> ByoConfig:
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise UsageError(texts.byo_not_yaml(where, _first_line(str(e)))) from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise UsageError(texts.byo_not_mapping(where))
    try:
        config = ByoConfig.model_validate(raw)
    except ValidationError as e:
        raise UsageError("\n".join(_describe(e, where))) from None
    problems = check_byo(config)
    if problems:
        raise UsageError("\n".join(f"{where}: {p}" for p in problems))
    return config


def check_byo(cfg: ByoConfig) -> list[str]:
    """What the reference's byo provider refuses, and what joinops cannot write safely."""
    problems: list[str] = []
    if cfg.provider and cfg.provider != "byo":
        problems.append(texts.byo_wrong_provider(cfg.provider))
    if cfg.virtual_ip and cfg.load_balancer:
        problems.append(texts.BYO_BOTH_VIP_AND_LB)
    elif not cfg.virtual_ip and not cfg.load_balancer:
        problems.append(texts.BYO_NEITHER_VIP_NOR_LB)
    if cfg.virtual_ip and not _is_ip(cfg.virtual_ip):
        problems.append(texts.byo_bad_virtual_ip(cfg.virtual_ip))
    if cfg.load_balancer and not (_is_ip(cfg.load_balancer) or _HOSTNAME.match(cfg.load_balancer)):
        problems.append(texts.byo_bad_load_balancer(cfg.load_balancer))
    if not cfg.network_interface:
        problems.append(texts.BYO_NO_INTERFACE)
    elif not _INTERFACE.match(cfg.network_interface):
        problems.append(texts.byo_bad_interface(cfg.network_interface))
    if cfg.virtual_ip and cfg.kube_api_server_bind_port == cfg.kube_api_server_bind_port_alt:
        problems.append(texts.byo_same_ports(cfg.kube_api_server_bind_port))
    if cfg.ssh_public_key and cfg.ssh_public_key_path:
        problems.append(texts.BYO_BOTH_SSH_KEYS)
    if cfg.password and not _CRYPT.match(cfg.password):
        problems.append(texts.BYO_PASSWORD_NOT_HASH)
    if cfg.kubernetes_version:
        try:
            Version.parse(cfg.kubernetes_version)
        except ValueError:
            problems.append(texts.byo_bad_version(cfg.kubernetes_version))
    if cfg.os_registry:
        try:
            split_os_registry(cfg.os_registry)
        except ValueError as e:
            problems.append(f"osRegistry: {e}")
    return problems


def split_os_registry(value: str) -> tuple[str, str]:
    """`transport:registry/path` (no tag) to (transport, registry/path)."""
    transport, sep, rest = value.partition(":")
    if not sep or transport not in OSTREE_TRANSPORTS:
        transport, rest = OSTREE_TRANSPORTS[0], value
    if transport == "ostree-remote-image":
        _remote, _, rest = rest.partition(":")
    for prefix in ("registry:", "docker://"):
        rest = rest.removeprefix(prefix)
    if not rest or not _SAFE.match(rest):
        raise ValueError(f"{value!r} is not an ostree image reference")
    last = rest.rsplit("/", 1)[-1]
    if ":" in last or "@" in last:
        raise ValueError(f"{value!r} has a tag: give the tag in osTag instead")
    return transport, rest


# --- helpers ---


def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


def _describe(error: ValidationError, where: str) -> list[str]:
    problems = []
    for item in error.errors():
        key = ".".join(str(part) for part in item["loc"]) or "(top level)"
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            message = texts.BYO_UNKNOWN_KEY
        problems.append(f"{where}: {key}: {message}")
    return problems

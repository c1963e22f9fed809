"""The Ignition 3.4.0 checks, the merge of extra Ignition, and the byo.yaml model (pure)."""

from __future__ import annotations

import base64
import gzip
from pathlib import Path

import pytest

from joinops.errors import UsageError
from joinops.ignition.byo import parse_byo, split_os_registry
from joinops.ignition.byo_resolve import resolve_byo
from joinops.ignition.config import IgnitionInputs, build_ignition, render
from joinops.ignition.files import decode_data_url, file_contents, file_entry
from joinops.ignition.merge import merge
from joinops.ignition.validate import fragment_problems, problems
from joinops.requests.model import Role

GOOD = {
    "ignition": {"version": "3.4.0"},
    "storage": {
        "files": [
            {
                "path": "/etc/a",
                "mode": 0o644,
                "overwrite": True,
                "contents": {"source": "data:;base64,aGVsbG8="},
            }
        ],
        "links": [{"path": "/etc/b", "target": "/etc/a"}],
    },
    "systemd": {
        "units": [
            {
                "name": "a.service",
                "enabled": True,
                "contents": "[Unit]\nDescription=a\n[Service]\nExecStart=/bin/true \\\n  --x\n",
                "dropins": [{"name": "x.conf", "contents": "[Service]\nEnvironment=A=1\n"}],
            }
        ]
    },
    "passwd": {"users": [{"name": "ocne", "sshAuthorizedKeys": ["ssh-ed25519 AAAA"]}]},
}


def with_(path: list[str | int], value: object) -> dict:
    import copy

    config = copy.deepcopy(GOOD)
    target = config
    for part in path[:-1]:
        target = target[part]  # type: ignore[index]
    target[path[-1]] = value  # type: ignore[index]
    return config


def test_a_good_config_has_no_problems():
    assert problems(GOOD) == []


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (["ignition", "version"], "3.3.0", "ignition.version: must be '3.4.0'"),
        (["ignition", "version"], None, "ignition.version: is required"),
        (["storage", "files", 0, "path"], "etc/a", "path must be absolute"),
        (["storage", "files", 0, "path"], "/etc//a", "path must be clean"),
        (["storage", "files", 0, "mode"], "0644", "mode: must be an integer"),
        (["storage", "files", 0, "mode"], True, "mode: must be an integer"),
        (["storage", "files", 0, "mode"], 0o17777, "is not a file mode"),
        (["storage", "files", 0, "contents", "source"], "data:;base64,@@", "invalid data URL"),
        (["storage", "files", 0, "contents", "source"], "data:abc", "needs a ','"),
        (["storage", "files", 0, "contents", "source"], "data:,100%", "bad percent-encoding"),
        (["storage", "files", 0, "contents", "source"], "ftp://x/y", "unsupported URL scheme"),
        (["storage", "files", 0, "contents", "source"], None, "overwrite is true but"),
        (["storage", "files", 0, "contents", "compression"], "gzip", "compression is gzip"),
        (["storage", "files", 0, "colour"], "red", "colour: unknown key"),
        (["storage", "links", 0, "path"], "/etc/a", "duplicate path"),
        (["systemd", "units", 0, "name"], "a.serviec", "invalid unit name"),
        (["systemd", "units", 0, "name"], "a/b.service", "invalid unit name"),
        (["systemd", "units", 0, "contents"], "ExecStart=/x\n", "comes before any [Section]"),
        (["systemd", "units", 0, "contents"], "[Unit]\nnonsense\n", "expected Key=Value"),
        (["systemd", "units", 0, "dropins", 0, "name"], "x.txt", "a drop-in name ends in .conf"),
        (["passwd", "users", 0, "sshAuthorizedKeys"], [1], "must be a list of strings"),
        (["passwd", "users", 0, "name"], "", "name is required"),
        (["kernel"], {}, "kernel: unknown key"),
    ],
)
def test_each_rule(path, value, expected):
    found = problems(with_(path, value))
    assert any(expected in p for p in found), found


def test_duplicate_units_and_users():
    config = with_(["systemd", "units"], GOOD["systemd"]["units"] * 2)
    config["passwd"]["users"] *= 2
    found = problems(config)
    assert any("duplicate unit" in p for p in found)
    assert any("duplicate name" in p for p in found)


def test_fragments_accept_any_spec_3_version_and_nothing_else():
    assert fragment_problems(with_(["ignition", "version"], "3.1.0")) == []
    assert fragment_problems(with_(["ignition", "version"], "2.3.0"))
    assert problems(with_(["ignition", "version"], "3.1.0"))


def test_data_urls_decode_both_ways():
    assert decode_data_url("data:,a%20b") == b"a b"
    assert decode_data_url("data:text/plain;charset=utf-8;base64,aGk=") == b"hi"
    packed = base64.b64encode(gzip.compress(b"zipped")).decode()
    config = with_(
        ["storage", "files", 0, "contents"],
        {"source": f"data:;base64,{packed}", "compression": "gzip"},
    )
    assert problems(config) == []
    assert file_contents(config, "/etc/a") == b"zipped"


# --- merging extra Ignition ---


def test_merge_replaces_files_by_path_and_units_field_by_field():
    extra = {
        "ignition": {"version": "3.0.0"},
        "storage": {"files": [file_entry("/etc/a", "new", 0o600)]},
        "systemd": {
            "units": [
                {
                    "name": "a.service",
                    "enabled": False,
                    "dropins": [{"name": "y.conf", "contents": "[Service]\n"}],
                },
                {"name": "b.service", "mask": True},
            ]
        },
        "passwd": {"users": [{"name": "ocne", "sshAuthorizedKeys": ["ssh-rsa BBBB"]}]},
    }
    merged, changed = merge(GOOD, extra)
    assert merged["ignition"]["version"] == "3.4.0"
    assert file_contents(merged, "/etc/a") == b"new"
    unit = merged["systemd"]["units"][0]
    assert unit["enabled"] is False and unit["contents"] == GOOD["systemd"]["units"][0]["contents"]
    assert [d["name"] for d in unit["dropins"]] == ["x.conf", "y.conf"]
    assert merged["systemd"]["units"][1] == {"name": "b.service", "mask": True}
    assert merged["passwd"]["users"][0]["sshAuthorizedKeys"] == ["ssh-ed25519 AAAA", "ssh-rsa BBBB"]
    assert changed == ["file /etc/a", "unit a.service", "user ocne"]
    assert problems(merged) == []
    assert GOOD["storage"]["files"][0]["mode"] == 0o644  # the base is not modified


def test_merge_a_path_of_another_kind_replaces_the_entry():
    extra = {"ignition": {"version": "3.4.0"}, "storage": {"directories": [{"path": "/etc/b"}]}}
    merged, changed = merge(GOOD, extra)
    assert merged["storage"]["links"] == []
    assert changed == ["link /etc/b"]
    assert problems(merged) == []


# --- building ---


def inputs(
    byo_text: str | None, role: Role = Role.WORKER, tmp: Path | None = None
) -> IgnitionInputs:
    byo = None
    if byo_text is not None:
        byo = resolve_byo(parse_byo(byo_text, "byo.yaml"), "byo.yaml", tmp)
    return IgnitionInputs(
        cluster="c1",
        role=role,
        join_config={
            "apiVersion": "kubeadm.k8s.io/v1beta4",
            "kind": "JoinConfiguration",
            "discovery": {
                "bootstrapToken": {
                    "apiServerEndpoint": "10.0.0.9:6443",
                    "token": "abcdef.0123456789abcdef",
                    "caCertHashes": ["sha256:00"],
                }
            },
        },
        endpoint="10.0.0.9:6443",
        target_minor="1.32",
        byo=byo,
        control_plane_addresses=("10.0.0.1", "fd00::2"),
    )


IFACE = "providers: {byo: {networkInterface: eth0}}\n"
BYO = "virtualIp: 10.0.0.9\nproviders:\n  byo:\n    networkInterface: eth1\n"


def test_built_files_are_the_same_for_the_same_inputs_and_always_valid():
    first = render(build_ignition(inputs(BYO, Role.CONTROL_PLANE)).config)
    second = render(build_ignition(inputs(BYO, Role.CONTROL_PLANE)).config)
    assert first == second
    for role in Role:
        for text in (None, BYO):
            assert problems(build_ignition(inputs(text, role)).config) == []


def test_ipv6_control_planes_are_bracketed_for_nginx():
    config = build_ignition(inputs(BYO, Role.CONTROL_PLANE)).config
    nginx = file_contents(config, "/etc/ocne/nginx/nginx.conf").decode()
    assert "server [fd00::2]:6444;" in nginx and "server 10.0.0.1:6444;" in nginx


# --- the byo.yaml model ---


def test_every_reference_key_is_accepted():
    text = """
directory: /tmp/x
name: mycluster
provider: byo
kubeconfig: /tmp/kc
workerNodes: 3
controlPlaneNodes: 3
virtualIp: 192.168.1.10
kubeApiServerBindPort: 6443
kubeApiServerBindPortAlt: 6444
podSubnet: 10.244.0.0/16
serviceSubnet: 10.96.0.0/12
certificateInformation: {country: US}
osTag: "1.32"
osRegistry: ostree-unverified-registry:container-registry.oracle.com/olcne/ock-ostree
kubeProxyMode: iptables
bootVolumeContainerImage: container-registry.oracle.com/olcne/ock:1.32
cni: flannel
headless: true
catalog: true
communityCatalog: false
catalogs: []
applications: []
ephemeralCluster: {name: eph}
kubernetesVersion: "1.32"
cipherSuites: TLS_AES_128_GCM_SHA256
quiet: true
autoStartUI: "false"
registry: container-registry.oracle.com/olcne
proxy: {httpProxy: "http://p:3128", httpsProxy: "http://p:3128", noProxy: "localhost"}
providers:
  libvirt: {uri: "qemu:///system"}
  byo: {networkInterface: enp1s0, automaticTokenCreation: false}
"""
    config = parse_byo(text, "byo.yaml")
    assert config.network_interface == "enp1s0" and config.automatic_token_creation is False
    assert config.control_plane_bind_port() == 6444


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "virtualIp: 1.2.3.4\nproviders: {byo: {networkInterface: 'eth0; rm -rf /'}}\n",
            "not a network interface name",
        ),
        (
            "virtualIp: vip.example\nproviders: {byo: {networkInterface: eth0}}\n",
            "is not an IP address",
        ),
        (
            "loadBalancer: http://lb\nproviders: {byo: {networkInterface: eth0}}\n",
            "is not a host name",
        ),
        (
            "provider: oci\nvirtualIp: 1.2.3.4\nproviders: {byo: {networkInterface: eth0}}\n",
            "byo provider only",
        ),
        (
            "virtualIp: 1.2.3.4\nregistry: 'a b'\nproviders: {byo: {networkInterface: eth0}}\n",
            "registry: must be one word",
        ),
        (
            'virtualIp: 1.2.3.4\nproxy: {httpProxy: "http://p\\n[Service]"}\n' + IFACE,
            "must be one word",
        ),
        (
            "virtualIp: 1.2.3.4\nosRegistry: ostree-unverified-registry:r.example/ock:1.32\n"
            + IFACE,
            "has a tag",
        ),
        (
            "virtualIp: 1.2.3.4\nkubeApiServerBindPortAlt: 6443\n" + IFACE,
            "need different ports",
        ),
        (
            "virtualIp: 1.2.3.4\n"
            "providers: {byo: {networkInterface: eth0, automaticTokenCreation: maybe}}\n",
            "automaticTokenCreation",
        ),
        ("- a list\n", "must hold a mapping"),
        ("virtualIp: [1\n", "not valid YAML"),
    ],
)
def test_byo_problems(text, expected):
    with pytest.raises(UsageError) as caught:
        parse_byo(text, "byo.yaml")
    assert expected in str(caught.value)


def test_ssh_key_files_are_read_relative_to_the_byo_yaml(tmp_path):
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "id.pub").write_text(
        "# ops\nssh-ed25519 AAAAC3Nza ops@x\n\nssh-rsa AAAAB3Nza other\n"
    )
    config = parse_byo(BYO + "sshPublicKeyPath: keys/id.pub\n", "byo.yaml")
    resolved = resolve_byo(config, "byo.yaml", tmp_path)
    assert resolved.ssh_keys == ("ssh-ed25519 AAAAC3Nza ops@x", "ssh-rsa AAAAB3Nza other")
    with pytest.raises(UsageError, match="no directory to take it from"):
        resolve_byo(config, "byo.yaml", None)


def test_os_registry_forms():
    assert split_os_registry("container-registry.oracle.com/olcne/ock-ostree") == (
        "ostree-unverified-registry",
        "container-registry.oracle.com/olcne/ock-ostree",
    )
    assert split_os_registry("ostree-image-signed:docker://r.example/ock") == (
        "ostree-image-signed",
        "r.example/ock",
    )
    assert split_os_registry("ostree-unverified-registry:r.example:5000/ock") == (
        "ostree-unverified-registry",
        "r.example:5000/ock",
    )

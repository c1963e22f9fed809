"""`joinops ignition`: files that validate and make a fresh simulated host join; --no-create;
bad input exits 2 with nothing written to the cluster; no secret on stderr."""

from __future__ import annotations

import json
import os
import re
import stat
import time
from pathlib import Path

import pytest
import yaml

from joinops.ignition.config import JOIN_UNIT, KUBEADM_CONF, join_configuration_of, sha256
from joinops.ignition.files import file_contents
from joinops.ignition.validate import problems
from joinops.joinmaterial import BootstrapToken
from joinops.settings import parse_duration
from kubesim import World
from kubesim.boot import boot_host
from tests.ignition.conftest import SSH_KEY, base_byo, ignition_of, run_cli, writes
from tests.support.clusters import registry_for
from workers import material


def wait_ready(world: World, cluster: str, node: str) -> None:
    def ready() -> bool:
        failure = world.join_failure(node)
        assert failure is None, failure
        return any(
            e.kind == "host-joined" and e.subject == node and e.cluster == cluster
            for e in world.events
        ) and _node_ready(world, cluster, node)

    world.wait_for(ready, timeout=10)


def _node_ready(world: World, cluster: str, node: str) -> bool:
    from kubesim.node_objects import node_state
    from kubesim.resources import NODES

    entry = world.cluster(cluster).store.get(NODES, "", node)
    return entry is not None and node_state(entry.obj) == "ready"


def secrets_of(config: dict) -> list[str]:
    join = join_configuration_of(config)
    assert join is not None
    found = [join["discovery"]["bootstrapToken"]["token"].split(".")[1]]
    key = (join.get("controlPlane") or {}).get("certificateKey")
    return [*found, key] if key else found


# --- files that validate and join ---


def test_worker_file_validates_and_a_fresh_host_joins(configured, byo):
    world = configured
    code, out, err = run_cli("ignition", "--cluster", "clusterB", "--config", str(byo(base_byo())))
    assert code == 0, err
    config = ignition_of(out)
    assert problems(config) == []
    assert config["ignition"]["version"] == "3.4.0"
    join = join_configuration_of(config)
    assert join is not None and "nodeRegistration" not in join and "controlPlane" not in join
    assert join["discovery"]["bootstrapToken"]["apiServerEndpoint"] == "cp.b.test:6443"
    boot_host(
        world, "fresh-w-1", file_contents(config, KUBEADM_CONF).decode(), kubelet_version="v1.32.2"
    )
    wait_ready(world, "clusterB", "fresh-w-1")
    # Only a token was created: no certificate upload for a worker.
    assert writes(world, "clusterB") == ["POST /api/v1/namespaces/kube-system/secrets"]
    assert f"SHA-256 of the file: {sha256(out.encode())}" in err


def test_control_plane_file_validates_and_a_fresh_host_joins_as_control_plane(configured, byo):
    world = configured
    code, out, err = run_cli(
        "ignition",
        "--cluster",
        "clusterB",
        "--as",
        "control-plane",
        "--config",
        str(byo(base_byo())),
    )
    assert code == 0, err
    config = ignition_of(out)
    assert problems(config) == []
    join = join_configuration_of(config)
    assert join is not None
    # Behind a virtual IP the local nginx holds 6443; the API server takes the alternate port.
    assert join["controlPlane"]["localAPIEndpoint"] == {"bindPort": 6444}
    assert re.fullmatch(r"[0-9a-f]{64}", join["controlPlane"]["certificateKey"])
    keepalived = file_contents(config, "/etc/keepalived/keepalived.conf").decode()
    assert "interface enp1s0" in keepalived and "192.168.50.10" in keepalived
    nginx = file_contents(config, "/etc/ocne/nginx/nginx.conf").decode()
    assert "listen 6443;" in nginx and "127.0.0.1:6444" in nginx
    units = {u["name"]: u for u in config["systemd"]["units"]}
    assert units["keepalived.service"]["enabled"] and units["ocne-nginx.service"]["enabled"]
    assert "certs-uploaded" in [e.kind for e in world.events]
    boot_host(
        world, "fresh-cp-1", file_contents(config, KUBEADM_CONF).decode(), kubelet_version="v1.32.2"
    )
    wait_ready(world, "clusterB", "fresh-cp-1")
    # kubeadm's order: Ready first, then the control-plane-join phase marks it
    assert world.wait_for(lambda: world.host("fresh-cp-1").role == "control-plane")
    assert "two hours after the upload" in err
    assert "Valid until" in err


def test_the_pieces_every_file_has(configured, byo):
    cfg = base_byo(
        proxy={"httpsProxy": "http://proxy.example.com:3128", "noProxy": ".example.com"},
        registry="registry.example.com/olcne",
        osRegistry="ostree-unverified-registry:registry.example.com/olcne/ock-ostree",
        password="$6$rounds=4096$saltsalt$Jc0sCw8l2N7O2bQ8Jv1vAfzQ0cJ8P1S4o1mJ3Pq2V2k",
    )
    code, out, err = run_cli("ignition", "--cluster", "clusterB", "--config", str(byo(cfg)))
    assert code == 0, err
    config = ignition_of(out)
    for entry in config["storage"]["files"]:
        assert entry["overwrite"] is True and isinstance(entry["mode"], int)
        assert entry["contents"]["source"].startswith("data:")
    units = {u["name"]: u for u in config["systemd"]["units"]}
    join_unit = units[JOIN_UNIT]["contents"]
    assert f"ExecStart=kubeadm join --config {KUBEADM_CONF}" in join_unit
    assert "ConditionPathExists=!/etc/kubernetes/kubelet.conf" in join_unit
    assert "Type=oneshot" in join_unit and units[JOIN_UNIT]["enabled"]
    assert units["crio.service"]["enabled"] and units["kubelet.service"]["enabled"]
    for name in ("crio.service", "kubelet.service", "ocne-update.service"):
        proxy = next(d for d in units[name]["dropins"] if d["name"] == "proxy.conf")["contents"]
        assert "HTTPS_PROXY=http://proxy.example.com:3128" in proxy
        assert "cp.b.test" in proxy and ".example.com" in proxy
    ocne = units["ocne.service"]["dropins"][0]["contents"]
    assert "ACTION=join" in ocne and f"After={JOIN_UNIT}" in ocne
    user = config["passwd"]["users"][0]
    assert user["name"] == "ocne" and user["sshAuthorizedKeys"] == [SSH_KEY]
    assert user["passwordHash"].startswith("$6$")
    registries = file_contents(config, "/etc/containers/registries.conf.d/50-joinops-registry.conf")
    assert b'unqualified-search-registries = ["registry.example.com/olcne"]' in registries
    update = yaml.safe_load(file_contents(config, "/etc/ocne/update.yaml"))
    assert update == {
        "registry": "registry.example.com/olcne/ock-ostree",
        "tag": "1.32",
        "transport": "ostree-unverified-registry",
    }
    # No keepalived for a worker, nor behind a load balancer.
    assert file_contents(config, "/etc/keepalived/keepalived.conf") is None
    assert "keepalived.service" not in units


def test_load_balancer_control_plane_binds_the_bind_port_without_keepalived(configured, byo):
    cfg = base_byo(kubeApiServerBindPort=6443)
    del cfg["virtualIp"]
    cfg["loadBalancer"] = "lb.b.test"
    code, out, err = run_cli(
        "ignition", "--cluster", "clusterB", "--as", "control-plane", "--config", str(byo(cfg))
    )
    assert code == 0, err
    config = ignition_of(out)
    assert join_configuration_of(config)["controlPlane"]["localAPIEndpoint"] == {"bindPort": 6443}
    assert file_contents(config, "/etc/keepalived/keepalived.conf") is None
    assert "loadBalancer lb.b.test is not the host of the cluster's endpoint" in err


def test_without_a_byo_yaml_the_file_is_minimal_and_still_joins(configured):
    world = configured
    code, out, err = run_cli("ignition", "--cluster", "clusterB")
    assert code == 0, err
    config = ignition_of(out)
    assert problems(config) == [] and "passwd" not in config
    boot_host(
        world, "fresh-w-2", file_contents(config, KUBEADM_CONF).decode(), kubelet_version="v1.31.9"
    )
    wait_ready(world, "clusterB", "fresh-w-2")


def test_no_secret_on_stderr(configured, byo):
    for role in ("worker", "control-plane"):
        code, out, err = run_cli(
            "ignition", "--cluster", "clusterB", "--as", role, "--config", str(byo(base_byo()))
        )
        assert code == 0, err
        for secret in secrets_of(ignition_of(out)):
            assert secret not in err
        token_id = join_configuration_of(ignition_of(out))["discovery"]["bootstrapToken"][
            "token"
        ].split(".")[0]
        assert f"bootstrap-token-{token_id}" in err  # the Secret's name is not secret


def test_the_token_secret_has_the_requested_expiry(configured, byo):
    world = configured
    code, out, err = run_cli(
        "ignition", "--cluster", "clusterB", "--ttl", "45m", "--config", str(byo(base_byo()))
    )
    assert code == 0, err
    token_id = join_configuration_of(ignition_of(out))["discovery"]["bootstrapToken"][
        "token"
    ].split(".")[0]
    secret = world.cluster("clusterB").secret_values("kube-system", f"bootstrap-token-{token_id}")
    from kubesim.clock import parse_rfc3339

    left = parse_rfc3339(secret["expiration"]) - world.clock.time()
    assert 44 * 60 < left <= 45 * 60
    assert "(45 min from now)" in err


# --- extra Ignition ---


def test_extra_ignition_is_merged_last_and_overrides(configured, byo, tmp_path):
    extra = {
        "ignition": {"version": "3.2.0"},
        "storage": {
            "files": [
                {
                    "path": "/etc/joinops/wait-for-interface.sh",
                    "mode": 0o700,
                    "overwrite": True,
                    "contents": {"source": "data:,%23!%2Fbin%2Fsh%0Aexit%200%0A"},
                },
                {
                    "path": "/etc/motd",
                    "mode": 0o644,
                    "contents": {"source": "data:,welcome"},
                },
            ]
        },
        "systemd": {
            "units": [
                {
                    "name": "crio.service",
                    "dropins": [
                        {"name": "limits.conf", "contents": "[Service]\nLimitNOFILE=1048576\n"}
                    ],
                }
            ]
        },
    }
    (tmp_path / "extra").mkdir()
    (tmp_path / "extra" / "10-extra.ign").write_text(json.dumps(extra))
    inline = json.dumps(
        {
            "ignition": {"version": "3.4.0"},
            "storage": {
                "files": [
                    {
                        "path": "/etc/motd",
                        "mode": 0o600,
                        "overwrite": True,
                        "contents": {"source": "data:,inline%20wins"},
                    }
                ]
            },
        }
    )
    cfg = base_byo(extraIgnition="extra", extraIgnitionInline=inline)
    code, out, err = run_cli("ignition", "--cluster", "clusterB", "--config", str(byo(cfg)))
    assert code == 0, err
    config = ignition_of(out)
    assert problems(config) == []
    paths = [f["path"] for f in config["storage"]["files"]]
    assert len(paths) == len(set(paths))
    assert file_contents(config, "/etc/joinops/wait-for-interface.sh") == b"#!/bin/sh\nexit 0\n"
    assert file_contents(config, "/etc/motd") == b"inline wins"
    motd = next(f for f in config["storage"]["files"] if f["path"] == "/etc/motd")
    assert motd["mode"] == 0o600
    crio = next(u for u in config["systemd"]["units"] if u["name"] == "crio.service")
    assert crio["enabled"] is True and [d["name"] for d in crio["dropins"]] == ["limits.conf"]
    assert "file /etc/joinops/wait-for-interface.sh" in err and "unit crio.service" in err


def test_extra_ignition_replacing_the_join_configuration_is_pointed_out(configured, byo):
    inline = json.dumps(
        {
            "ignition": {"version": "3.4.0"},
            "storage": {
                "files": [
                    {
                        "path": KUBEADM_CONF,
                        "mode": 0o600,
                        "overwrite": True,
                        "contents": {"source": "data:,mine"},
                    }
                ]
            },
        }
    )
    code, _out, err = run_cli(
        "ignition",
        "--cluster",
        "clusterB",
        "--config",
        str(byo(base_byo(extraIgnitionInline=inline))),
    )
    assert code == 0, err
    assert f"Warning: extra Ignition replaces file {KUBEADM_CONF}" in err


# --- --no-create ---


def test_no_create_creates_nothing_and_writes_the_commands(configured, byo, tmp_path):
    world = configured
    world.cluster("clusterB").reset_requests()
    code, out, err = run_cli(
        "ignition",
        "--cluster",
        "clusterB",
        "--as",
        "control-plane",
        "--no-create",
        "--config",
        str(byo(base_byo())),
    )
    assert code == 0, err
    assert writes(world, "clusterB") == []
    assert world.cluster("clusterB").requests, "the cluster was read"
    config = ignition_of(out)
    assert problems(config) == []
    join = join_configuration_of(config)
    token = join["discovery"]["bootstrapToken"]["token"]
    key = join["controlPlane"]["certificateKey"]
    token_id = token.split(".")[0]
    assert "Nothing was created in clusterB (--no-create)" in err
    assert f"kubeadm token create {token_id}.<secret> --ttl 2h0m0s" in err
    assert "kubeadm init phase upload-certs --upload-certs --certificate-key" in err
    for secret in secrets_of(config):
        assert secret not in err
    script = tmp_path / f"joinops-clusterB-{token_id}.sh"
    assert str(script.name) in err
    assert stat.S_IMODE(os.stat(script).st_mode) == 0o600
    text = script.read_text()
    assert f"kubeadm token create {token} --ttl 2h0m0s" in text
    assert f"kubeadm init phase upload-certs --upload-certs --certificate-key {key}" in text

    # The commands make the file valid: run them (as the simulator's kubeadm would) and boot.
    run_commands(world, tmp_path, text)
    boot_host(
        world, "fresh-cp-2", file_contents(config, KUBEADM_CONF).decode(), kubelet_version="v1.32.2"
    )
    wait_ready(world, "clusterB", "fresh-cp-2")


def run_commands(world: World, tmp_path: Path, script: str) -> None:
    """What `kubeadm token create` and `kubeadm init phase upload-certs` do, through the API."""
    (tmp_path / "run").mkdir(exist_ok=True)
    target = registry_for(world, tmp_path / "run").get("clusterB")
    created = re.search(r"kubeadm token create ([a-z0-9]{6})\.([a-z0-9]{16}) --ttl (\S+)", script)
    assert created
    material.create_token(
        target,
        BootstrapToken(created.group(1), created.group(2)),
        parse_duration(created.group(3)),
        "kubeadm token create",
        {},
        now=time.time(),
    )
    upload = re.search(r"--certificate-key ([0-9a-f]{64})", script)
    if upload:
        material.upload_certs(
            target,
            namespace="kube-system",
            request_id="req-operator",
            node="b-cp-1",
            image="busybox",
            certificate_key=upload.group(1),
            timeout=10,
        )


def test_automatic_token_creation_false_in_byo_yaml_means_no_create(configured, byo):
    world = configured
    cfg = base_byo(
        providers={"byo": {"networkInterface": "enp1s0", "automaticTokenCreation": False}}
    )
    path = byo(cfg)
    world.cluster("clusterB").reset_requests()
    code, _out, err = run_cli("ignition", "--cluster", "clusterB", "--config", str(path))
    assert code == 0, err
    assert writes(world, "clusterB") == []
    assert "automaticTokenCreation is false" in err
    # The command line wins over the file.
    code, _out, err = run_cli(
        "ignition", "--cluster", "clusterB", "--create", "--config", str(path)
    )
    assert code == 0, err
    assert writes(world, "clusterB") == ["POST /api/v1/namespaces/kube-system/secrets"]


def test_no_create_refuses_to_overwrite_a_commands_file(configured, byo, tmp_path):
    existing = tmp_path / "cmds.sh"
    existing.write_text("keep me")
    code, out, err = run_cli(
        "ignition", "--cluster", "clusterB", "--no-create", "--commands-file", str(existing)
    )
    assert code == 2 and out == ""
    assert "already exists" in err and existing.read_text() == "keep me"


# --- bad input: exit 2, a specific message, nothing written to the cluster ---

BAD_INPUTS = [
    pytest.param(
        ["--cluster", "clusterX"], None, "unknown cluster 'clusterX'", id="unknown-cluster"
    ),
    pytest.param(
        [],
        base_byo(loadBalancer="lb.b.test"),
        "virtualIp and loadBalancer are both set",
        id="both-vip-and-lb",
    ),
    pytest.param(
        [],
        {k: v for k, v in base_byo().items() if k != "virtualIp"},
        "neither virtualIp nor loadBalancer is set",
        id="neither-vip-nor-lb",
    ),
    pytest.param(
        [],
        base_byo(providers={"byo": {"automaticTokenCreation": True}}),
        "providers.byo.networkInterface is required",
        id="missing-network-interface",
    ),
    pytest.param(
        [],
        {
            **{k: v for k, v in base_byo().items() if k != "sshPublicKey"},
            "sshPublicKeyPath": "nope/id.pub",
        },
        "cannot read the SSH public key file",
        id="unreadable-ssh-key",
    ),
    pytest.param(
        [],
        base_byo(
            extraIgnitionInline=json.dumps(
                {
                    "ignition": {"version": "3.4.0"},
                    "storage": {
                        "files": [{"path": "etc/x", "contents": {"source": "data:;base64,!!"}}]
                    },
                }
            )
        ),
        "path must be absolute",
        id="invalid-extra-ignition",
    ),
    pytest.param(
        [],
        base_byo(extraIgnitionInline="variant: fcos\nversion: 1.5.0\n"),
        "Butane is not read by joinops",
        id="butane-extra-ignition",
    ),
    pytest.param(
        [],
        base_byo(extraIgnitionInline='{"ignition": {"version": "2.2.0"}}'),
        "is not a spec 3 version",
        id="spec-2-extra-ignition",
    ),
    pytest.param(
        [],
        base_byo(networkInterfce="enp1s0"),
        "networkInterfce: unknown key",
        id="misspelt-key",
    ),
    pytest.param(
        [],
        base_byo(password="hunter2"),
        "password must be a crypt(3) password hash",
        id="clear-text-password",
    ),
    pytest.param(
        [],
        base_byo(sshPublicKey="-----BEGIN OPENSSH PRIVATE KEY-----"),
        "this is a private key",
        id="private-ssh-key",
    ),
    pytest.param(
        [],
        base_byo(sshPublicKeyPath="/etc/hostname"),
        "sshPublicKey and sshPublicKeyPath are both set",
        id="both-ssh-keys",
    ),
    pytest.param(["--ttl", "3d"], None, "--ttl '3d'", id="bad-ttl"),
    pytest.param(["--ttl", "48h"], None, "must be between 5 min and 24 h", id="ttl-too-long"),
]


@pytest.mark.parametrize(("argv", "config", "message"), BAD_INPUTS)
def test_bad_input_exits_2_with_a_specific_message_and_writes_nothing(
    configured, byo, argv, config, message
):
    world = configured
    args = ["ignition", *argv]
    if "--cluster" not in argv:
        args += ["--cluster", "clusterB", "--as", "control-plane"]
    if config is not None:
        args += ["--config", str(byo(config))]
    code, out, err = run_cli(*args)
    assert code == 2, err
    assert message in err
    assert out == ""
    assert "Traceback" not in err
    for name in world.clusters:
        assert writes(world, name) == [], name


def test_unreadable_byo_yaml_exits_2(configured, tmp_path):
    code, _out, err = run_cli(
        "ignition", "--cluster", "clusterB", "--config", str(tmp_path / "missing.yaml")
    )
    assert code == 2 and "cannot read the byo configuration" in err


def test_control_plane_for_a_cluster_without_endpoint_is_refused(configured):
    world = configured
    code, out, err = run_cli("ignition", "--cluster", "clusterC", "--as", "control-plane")
    assert code == 1 and out == ""
    assert "clusterC has no controlPlaneEndpoint" in err
    assert writes(world, "clusterC") == []


def test_a_kubernetes_version_the_cluster_cannot_take_is_refused(configured, byo):
    world = configured
    code, out, err = run_cli(
        "ignition",
        "--cluster",
        "clusterB",
        "--config",
        str(byo(base_byo(kubernetesVersion="1.30"))),
    )
    assert code == 1 and out == ""
    assert "kubernetesVersion v1.30 cannot join a cluster at v1.32.2" in err
    assert writes(world, "clusterB") == []


def test_a_busy_control_plane_is_not_disturbed(configured, byo, redis_client):
    world = configured
    redis_client.set("joinops:lock:control-plane:clusterB", "req-migrating")
    code, out, err = run_cli(
        "ignition",
        "--cluster",
        "clusterB",
        "--as",
        "control-plane",
        "--config",
        str(byo(base_byo())),
    )
    assert code == 1 and out == ""
    assert "being changed by req-migrating" in err
    assert writes(world, "clusterB") == []


# --- --check ---


def test_check_accepts_a_generated_file_and_refuses_a_broken_one(configured, tmp_path):
    code, out, err = run_cli("ignition", "--cluster", "clusterB")
    good = tmp_path / "worker.ign"
    good.write_text(out)
    code, out, err = run_cli("ignition", "--check", str(good))
    assert code == 0 and "valid Ignition 3.4.0" in out and "joins cp.b.test:6443 as a worker" in out
    broken = json.loads(good.read_text())
    broken["ignition"]["version"] = "3.5.0"
    broken["storage"]["files"][0]["mode"] = "0600"
    bad = tmp_path / "broken.ign"
    bad.write_text(json.dumps(broken))
    code, out, err = run_cli("ignition", "--check", str(bad))
    assert code == 2
    assert "ignition.version: must be '3.4.0'" in err and "mode: must be an integer" in err


def test_an_unreachable_cluster_exits_1_without_a_traceback(configured):
    world = configured
    world.cluster("clusterB").faults.add(reachable=False)
    code, out, err = run_cli("ignition", "--cluster", "clusterB")
    assert code == 1 and out == ""
    assert err.startswith("joinops: clusterB: ") and "did not answer" in err
    assert "Traceback" not in err


def test_a_host_one_minor_below_the_cluster_can_read_the_file(configured, byo):
    """clusterC runs 1.31: a 1.30 host may join it, and kubeadm 1.30 reads only v1beta3."""
    world = configured
    code, out, err = run_cli("ignition", "--cluster", "clusterC")
    assert code == 0, err
    config = ignition_of(out)
    assert join_configuration_of(config)["apiVersion"] == "kubeadm.k8s.io/v1beta3"
    boot_host(
        world, "old-w-1", file_contents(config, KUBEADM_CONF).decode(), kubelet_version="v1.30.9"
    )
    wait_ready(world, "clusterC", "old-w-1")
    # Told the host runs 1.31, joinops writes the newer API.
    cfg = base_byo(kubernetesVersion="1.31")
    code, out, err = run_cli("ignition", "--cluster", "clusterC", "--config", str(byo(cfg)))
    assert code == 0, err
    assert join_configuration_of(ignition_of(out))["apiVersion"] == "kubeadm.k8s.io/v1beta4"

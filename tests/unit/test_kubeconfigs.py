"""One kubeconfig holding many clusters: each cluster's client gets its own context, and a file
rewritten with new content is read anew even when its size and modification time are kept."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from joinops.clusters import kubeconfigs


def _kubeconfig(servers: dict[str, str]) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": next(iter(servers)),
            "clusters": [{"name": n, "cluster": {"server": s}} for n, s in servers.items()],
            "users": [{"name": n, "user": {"token": f"token-{n}"}} for n in servers],
            "contexts": [{"name": n, "context": {"cluster": n, "user": n}} for n in servers],
        }
    )


def test_each_context_of_one_file_gets_its_own_server_and_credentials(tmp_path: Path):
    path = tmp_path / "kubeconfig"
    path.write_text(_kubeconfig({f"c{i}": f"https://10.0.0.{i}:6443" for i in range(1, 65)}))
    for i in (1, 37, 64):
        configuration = kubeconfigs.load(str(path), f"c{i}")
        assert configuration.host == f"https://10.0.0.{i}:6443"
        assert configuration.api_key["BearerToken"] == f"Bearer token-c{i}"


def test_a_file_rewritten_with_the_same_size_and_time_is_read_anew(tmp_path: Path):
    path = tmp_path / "kubeconfig"
    path.write_text(_kubeconfig({"a": "https://10.0.0.1:6443"}))
    assert kubeconfigs.load(str(path), "a").host == "https://10.0.0.1:6443"
    before = os.stat(path)
    path.write_text(_kubeconfig({"a": "https://10.0.0.2:6443"}))  # same length
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(path).st_size == before.st_size
    assert kubeconfigs.load(str(path), "a").host == "https://10.0.0.2:6443"


def test_a_token_without_an_expiry_is_sent_as_read_with_no_refresh_before_each_request(
    tmp_path: Path,
):
    path = tmp_path / "kubeconfig"
    path.write_text(_kubeconfig({"a": "https://10.0.0.1:6443"}))
    configuration = kubeconfigs.load(str(path), "a")
    assert configuration.refresh_api_key_hook is None  # it would only set the same values again
    for _ in range(2):
        assert configuration.auth_settings()["BearerToken"]["value"] == "Bearer token-a"


def test_an_exec_plugins_expiring_token_is_still_fetched_again_once_expired(tmp_path: Path):
    """client-go's exec credential plugin protocol (ExecCredential, client.authentication.k8s.io):
    a token whose expirationTimestamp is near is fetched again before the next request."""
    plugin, calls = tmp_path / "plugin.sh", tmp_path / "calls"
    soon = "2000-01-01T00:00:00Z"  # already expired: every request asks the plugin again
    plugin.write_text(
        "#!/bin/sh\n"
        f"echo x >> {calls}\n"
        f"n=$(wc -l < {calls} | tr -d ' ')\n"
        'printf \'{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", '
        f'"status": {{"token": "exec-%s", "expirationTimestamp": "{soon}"}}}}\' "$n"\n'
    )
    plugin.chmod(0o755)
    exec_user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": str(plugin),
            "interactiveMode": "Never",
        }
    }
    document = yaml.safe_load(_kubeconfig({"a": "https://10.0.0.1:6443"}))
    document["users"][0]["user"] = exec_user
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(document))
    configuration = kubeconfigs.load(str(path), "a")
    first = configuration.auth_settings()["BearerToken"]["value"]
    second = configuration.auth_settings()["BearerToken"]["value"]
    assert first.startswith("Bearer exec-")
    assert second != first

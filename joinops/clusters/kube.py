"""Access to one Kubernetes cluster through the official client.

`KubeCluster` is built once per cluster (see `registry.py`) and passed to whoever needs it. Every
call goes through `KubeCluster.call`, which puts a timeout on it and turns what the client raises
into the project's own errors (`errors.py`), naming the cluster, verb and resource. Under it, the
client honours the servers' Retry-After and names joinops as the field manager of its writes
(`retry_after.py`), whoever makes the call; large lists are read in pages (`pages.py`). A
worker's client keeps the cluster's version, kubeadm ClusterConfiguration and API server port
a few seconds (`steady.py` says why that is safe, and what is never kept).
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable
from typing import Any, TypeVar

import urllib3
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from pydantic import ValidationError

from joinops import yamltext
from joinops.clusters import pages, retry_after
from joinops.clusters import texts as cluster_texts
from joinops.clusters.steady import SteadyReads
from joinops.errors import (
    ClusterConflict,
    ClusterError,
    ClusterExpired,
    ClusterForbidden,
    ClusterInvalid,
    ClusterNotFound,
    ClusterRateLimited,
    ClusterUnreachable,
)
from joinops.metrics import KUBE_ERRORS
from joinops.requests.model import CONTROL_PLANE_LABEL, ClusterFacts, NodeFacts, Version

T = TypeVar("T")


class KubeCluster:
    """One managed cluster: its name, its API client, and the reads the rules need."""

    def __init__(
        self,
        name: str,
        api_client: client.ApiClient,
        timeout_seconds: float,
        retry_after_cap: float = retry_after.DEFAULT_CAP_SECONDS,
        steady_seconds: float = 0.0,
    ) -> None:
        """`steady_seconds`: how long the reads `steady.py` names are kept (0: not at all)."""
        self.name = name
        self.steady = SteadyReads(steady_seconds)
        self._facts = SteadyReads(0)  # `facts` as a whole: kept by a `keeping` view only
        retry_after.install(api_client, name, retry_after_cap)
        self.api_client = api_client
        self.timeout = timeout_seconds
        self.core = client.CoreV1Api(api_client)
        self.policy = client.PolicyV1Api(api_client)
        self.version_api = client.VersionApi(api_client)

    @property
    def server(self) -> str:
        return str(self.api_client.configuration.host)

    def call(self, verb: str, resource: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run one API call with a timeout; translate failures. `resource` e.g. `nodes/node-7`."""
        kwargs.setdefault("_request_timeout", self.timeout)
        try:
            return fn(*args, **kwargs)
        except ApiException as e:
            error = self._translate(verb, resource, e)
            KUBE_ERRORS.labels(self.name, type(error).__name__).inc()
            raise error from e
        except (urllib3.exceptions.HTTPError, OSError) as e:
            KUBE_ERRORS.labels(self.name, "ClusterUnreachable").inc()
            raise ClusterUnreachable(
                self.name, f"the API server at {self.server} did not answer ({type(e).__name__})"
            ) from e
        except ValidationError as e:
            raise ClusterError(
                self.name,
                f"the answer to {verb} {resource} did not parse: "
                f"{e.error_count()} field(s) invalid",
            ) from e

    def call_json(
        self, verb: str, resource: str, fn: Callable[..., Any], *args: Any, **kwargs: Any
    ) -> dict[str, Any]:
        """`call`, with the answer as plain JSON ({} when it is not an object), not built into
        the client's model: for a write whose answer is not used as an object, or a read of a
        field or two. Building a pod's model costs about what its request costs. Errors are
        `call`'s."""

        def plain(*args: Any, **kwargs: Any) -> dict[str, Any]:
            response = fn(*args, _preload_content=False, **kwargs)
            try:
                body = response.data
            finally:
                response.release_conn()
            try:
                answer = json.loads(body) if body else {}
            except ValueError:
                return {}
            return answer if isinstance(answer, dict) else {}

        return self.call(verb, resource, plain, *args, **kwargs)

    def keeping(self) -> KubeCluster:
        """A view of this client that keeps what it read of the cluster's settings and facts
        (`version`, kubeadm-config, the API server's port, kubelet-config, `facts`,
        `get_node`) for as long as its holder keeps it: a run's check and the join material
        built from it (workers/runner.py), never across runs or requests. It shares this
        client's connections."""
        view = copy.copy(self)
        view.steady = view._facts = SteadyReads(math.inf)
        return view

    def _translate(self, verb: str, resource: str, e: ApiException) -> ClusterError:
        message = _status_message(e)
        status = e.status or 0
        if status == 403 and "violates PodSecurity" in message:  # admission, not RBAC
            return ClusterForbidden(
                self.name,
                verb,
                resource,
                cluster_texts.pod_security_refused(self.name, verb, resource, message),
            )
        if status in (401, 403):
            return ClusterForbidden(
                self.name,
                verb,
                resource,
                f"the credentials for {self.name} may not {verb} {resource} ({message})",
            )
        if status == 404:
            return ClusterNotFound(self.name, f"{resource} not found")
        if status == 409:
            return ClusterConflict(self.name, f"{verb} {resource}: {message}")
        if status == 410:
            return ClusterExpired(self.name, f"{verb} {resource}: {message}")
        if status == 422:
            return ClusterInvalid(self.name, f"{verb} {resource} was rejected: {message}")
        if status == 429:
            return ClusterRateLimited(
                self.name,
                cluster_texts.still_throttled(verb, resource, message, retry_after.MAX_RETRIES),
            )
        if status == 0 or status >= 500:
            return ClusterUnreachable(
                self.name, f"{verb} {resource} failed: HTTP {status} {message}"
            )
        return ClusterError(self.name, f"{verb} {resource}: HTTP {status} {message}")

    # --- reads used by the rules: a call or a few pages, whatever the cluster's size ---

    def version(self) -> Version:
        return self.steady.get("version", self._read_version)

    def _read_version(self) -> Version:
        info = self.call("get", "version", self.version_api.get_code)
        return Version.parse(info.git_version)

    def get_node(self, name: str) -> NodeFacts | None:
        """The node's facts (None: no such node); kept only by a `keeping` view, as `facts`."""
        return self._facts.get(f"nodes/{name}", lambda: self._read_node(name))

    def _read_node(self, name: str) -> NodeFacts | None:
        try:
            node = self.call("get", f"nodes/{name}", self.core.read_node, name)
        except ClusterNotFound:
            return None
        return node_facts(node)

    def control_planes(self) -> list[NodeFacts]:
        nodes = pages.list_all(
            self, "nodes", self.core.list_node, label_selector=CONTROL_PLANE_LABEL
        )
        return [node_facts(node) for node in nodes.items]

    def control_plane_pods(self) -> dict[str, bool]:
        """kube-system's control-plane pods (kubeadm's `tier=control-plane` static pods, as
        mirrored): name -> Running and Ready. One call."""
        pods = self.call(
            "list",
            "pods (kube-system, tier=control-plane)",
            self.core.list_namespaced_pod,
            "kube-system",
            label_selector="tier=control-plane",
        )
        return {str(pod.metadata.name): pod_running_ready(pod) for pod in pods.items}

    def api_server_port(self) -> int | None:
        """The kube-apiservers' `--secure-port` (kubeadm's static pod), None when unknown."""
        return self.steady.get("api-server-port", self._read_api_server_port)

    def _read_api_server_port(self) -> int | None:
        pods = self.call(
            "list",
            "pods (kube-system, component=kube-apiserver)",
            self.core.list_namespaced_pod,
            "kube-system",
            label_selector="component=kube-apiserver",
            limit=1,
        )
        for pod in pods.items:
            for container in pod.spec.containers or []:
                for word in (container.command or []) + (container.args or []):
                    flag, _, value = word.partition("=")
                    if flag == "--secure-port" and value.isdigit():
                        return int(value)
        return None

    def has_nodes_besides(self, name: str) -> bool:
        """Is there any node other than `name`? Reads at most two nodes."""
        page = self.call("list", "nodes", self.core.list_node, limit=2)
        return any(node.metadata.name != name for node in page.items) or bool(
            page.metadata._continue
        )

    def kubeadm_cluster_configuration(self) -> dict[str, Any]:
        """kube-system/kubeadm-config's ClusterConfiguration, or {} when there is none (a copy:
        the caller may change it)."""
        kept = self.steady.get("kubeadm-config", self._read_kubeadm_cluster_configuration)
        return copy.deepcopy(kept)

    def _read_kubeadm_cluster_configuration(self) -> dict[str, Any]:
        try:
            cm = self.call(
                "get",
                "configmaps/kubeadm-config",
                self.core.read_namespaced_config_map,
                "kubeadm-config",
                "kube-system",
            )
        except ClusterNotFound:
            return {}
        try:
            parsed = yamltext.load((cm.data or {}).get("ClusterConfiguration", "")) or {}
        except yaml.YAMLError:
            return {}
        return parsed if isinstance(parsed, dict) else {}

    def facts(self) -> ClusterFacts:
        """Version, endpoint, control planes, pod subnet: what the rules and the join material
        read of a target (kept only by a `keeping` view: the control planes are never kept
        otherwise)."""
        return self._facts.get("facts", self._read_facts)

    def _read_facts(self) -> ClusterFacts:
        kubeadm = self.kubeadm_cluster_configuration()
        return ClusterFacts(
            name=self.name,
            version=self.version(),
            control_plane_endpoint=str(kubeadm.get("controlPlaneEndpoint") or ""),
            server=self.server,
            control_planes=tuple(self.control_planes()),
            pod_subnet=str((kubeadm.get("networking") or {}).get("podSubnet") or ""),
            controller_manager_args=tuple(extra_args(kubeadm.get("controllerManager")).items()),
        )


def extra_args(section: Any) -> dict[str, str]:
    """A ClusterConfiguration component's extraArgs: a map (v1beta3) or a list of {name,
    value} (v1beta4)."""
    args = section.get("extraArgs") if isinstance(section, dict) else None
    if isinstance(args, dict):
        return {str(k): str(v) for k, v in args.items()}
    if isinstance(args, list):
        return {
            str(a["name"]): str(a.get("value", ""))
            for a in args
            if isinstance(a, dict) and a.get("name")
        }
    return {}


def node_facts(node: Any) -> NodeFacts:
    info = node.status.node_info
    labels = node.metadata.labels or {}
    conditions = node.status.conditions or []
    ready = any(c.type == "Ready" and c.status == "True" for c in conditions)
    return NodeFacts(
        name=node.metadata.name,
        kubelet_version=Version.parse(info.kubelet_version),
        is_control_plane=CONTROL_PLANE_LABEL in labels,
        architecture=info.architecture,
        operating_system=info.operating_system,
        os_image=info.os_image,
        container_runtime=info.container_runtime_version,
        ready=ready,
        unschedulable=bool(node.spec and node.spec.unschedulable),
        internal_ip=next(
            (a.address for a in node.status.addresses or [] if a.type == "InternalIP"), ""
        ),
    )


def pod_running_ready(pod: Any) -> bool:
    status = pod.status
    if status is None or status.phase != "Running" or pod.metadata.deletion_timestamp:
        return False
    return any(c.type == "Ready" and c.status == "True" for c in status.conditions or [])


def _status_message(e: ApiException) -> str:
    """The Status message of an API error, truncated: bodies can be long."""
    try:
        body = json.loads(e.body or "{}")
        message = str(body.get("message") or e.reason or "")
    except (ValueError, AttributeError):
        message = str(e.reason or "")
    return message[:300]


def warm_up() -> None:
    """Load the client's API and model classes now (about a second), not in the first job."""
    for name in (
        "CoreV1Api",
        "PolicyV1Api",
        "VersionApi",
        "V1Node",
        "V1Pod",
        "V1Eviction",
        "V1Secret",
        "V1ConfigMap",
        "V1Namespace",
        "V1PodList",
        "V1NodeList",
    ):
        getattr(client, name)

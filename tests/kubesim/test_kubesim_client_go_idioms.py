"""What a busy or large real API server does to a client that uses it as client-go does: API
Priority and Fairness answers 429 with Retry-After; a list read in pages whose continue token
etcd has compacted past answers 410 Expired; a watch asked for bookmarks gets BOOKMARK events;
writes record their field manager in managedFields. Through the official client, as joinops."""

from __future__ import annotations

import base64
import json
import threading
from typing import Any

import pytest
from ksim_support import Apis, apis_for
from kubernetes import client, watch
from replay_support import recording, send, status_fields

from kubesim import Cluster
from kubesim.flow_control import MESSAGE


def no_retries(cluster: Cluster) -> client.CoreV1Api:
    """The official client with urllib3's own retries off (it would honour a read's
    Retry-After by itself): each call is one request."""
    raw = cluster.api_client()
    raw.configuration.retries = 0
    return client.CoreV1Api(client.ApiClient(raw.configuration))


def test_priority_and_fairness_drops_a_users_request_beyond_its_seats(
    cluster_a: Cluster,
) -> None:
    """kube-apiserver's APF filter (and max-in-flight) answer a request they will not serve with
    `http.Error`: a plain-text body, Retry-After, the matched FlowSchema's UID."""
    core = no_retries(cluster_a)
    assert core.list_node().items  # the client's classes loaded: the next call is quick
    cluster_a.flow_control.limit = 1
    cluster_a.faults.add(latency_seconds=3.0, path_contains="/version")  # holds the one seat
    holder = threading.Thread(target=lambda: client.VersionApi(cluster_a.api_client()).get_code())
    holder.start()
    cluster_a.flow_control.wait_in_flight(1)
    with pytest.raises(client.ApiException) as refused:
        core.list_node()
    holder.join()
    error = refused.value
    assert error.status == 429 and error.reason == "Too Many Requests"
    assert error.body == MESSAGE == "Too many requests, please try again later.\n"
    assert error.headers["Retry-After"] == "1"
    assert error.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert error.headers["X-Kubernetes-PF-FlowSchema-UID"]
    assert core.list_node().items  # the seat is free again


def test_priority_and_fairness_can_drop_every_third_request(cluster_a: Cluster) -> None:
    cluster_a.flow_control.reject_every = 3
    core = no_retries(cluster_a)
    answers = []
    for _ in range(6):
        try:
            core.list_namespace()
            answers.append(200)
        except client.ApiException as e:
            answers.append(e.status)
    assert answers == [200, 200, 429, 200, 200, 429]
    assert cluster_a.flow_control.rejected == 2


def pages_of_nodes(cluster: Cluster, token: str) -> Any:
    return send(cluster, "GET", "/api/v1/nodes", {"limit": "1", "continue": token})


def test_a_continue_token_older_than_the_compaction_answers_the_real_410(
    cluster_a: Cluster,
) -> None:
    first = send(cluster_a, "GET", "/api/v1/nodes", {"limit": "1"}).body
    token = first["metadata"]["continue"]
    assert pages_of_nodes(cluster_a, token).status == 200  # not compacted yet: served
    cluster_a.store.compact()  # the API server's compactor (every 5 min on a real one)

    expired = pages_of_nodes(cluster_a, token)
    real = recording("list-410-continue-token-expired")["response"]
    assert expired.status == real["status"] == 410
    assert status_fields(expired.body) == status_fields(real["body"])
    # a token to go on without consistency (rv -1), from the same place
    fresh = json.loads(base64.urlsafe_b64decode(expired.body["metadata"]["continue"] + "=="))
    assert fresh["rv"] == -1
    rest = pages_of_nodes(cluster_a, expired.body["metadata"]["continue"])
    assert rest.status == 200 and rest.body["items"][0]["metadata"]["name"] == "a-w-1"


def test_a_continue_token_with_a_resource_version_is_refused(cluster_a: Cluster) -> None:
    token = send(cluster_a, "GET", "/api/v1/nodes", {"limit": "1"}).body["metadata"]["continue"]
    answer = send(cluster_a, "GET", "/api/v1/nodes", {"continue": token, "resourceVersion": "0"})
    assert answer.status == 400
    assert answer.body["message"] == (
        "specifying resource version is not allowed when using continue"
    )


def test_the_compaction_fault_expires_the_list_under_way(apis: Apis, cluster_a: Cluster) -> None:
    cluster_a.faults.add_compaction()  # before the next request carrying a continue token
    first = apis.core.list_node(limit=2)
    with pytest.raises(client.ApiException) as expired:
        apis.core.list_node(limit=2, _continue=first.metadata._continue)
    assert expired.value.status == 410 and json.loads(expired.value.body)["reason"] == "Expired"
    again = apis.core.list_node(limit=2)  # a new list is served, at the compacted revision
    assert [n.metadata.name for n in again.items] == [n.metadata.name for n in first.items]


def test_a_watch_asked_for_bookmarks_gets_them_and_one_that_did_not_gets_none(
    cluster_a: Cluster,
) -> None:
    core = apis_for(cluster_a).core
    start = core.list_node().metadata.resource_version
    cluster_a.add_configmap("default", "moved-on", {"a": "b"})  # the revision moves on

    def kinds(**asked: Any) -> list[tuple[str, str]]:
        events = watch.Watch().stream(
            core.list_node, resource_version=start, timeout_seconds=2, **asked
        )
        return [(e["type"], e["raw_object"]["metadata"]["resourceVersion"]) for e in events]

    with_bookmarks = kinds(allow_watch_bookmarks=True)
    now = str(cluster_a.store.rv)
    assert with_bookmarks and {kind for kind, _ in with_bookmarks} == {"BOOKMARK"}
    assert with_bookmarks[-1][1] == now  # where the watch got to: past the list it began from
    assert kinds() == []


def test_writes_record_their_field_manager_in_managed_fields(
    apis: Apis, cluster_a: Cluster
) -> None:
    cm = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="named"), data={"k": "v"})
    apis.core.create_namespaced_config_map("default", cm, field_manager="joinops")
    apis.core.patch_namespaced_config_map(
        "named", "default", {"metadata": {"labels": {"x": "y"}}}, field_manager="joinops"
    )
    apis.core.patch_node("a-w-1", {"metadata": {"labels": {"by": "default"}}})

    entries = cluster_a.configmap("default", "named")["metadata"]["managedFields"]
    assert [(e["manager"], e["operation"]) for e in entries] == [("joinops", "Update")]
    assert set(entries[0]["fieldsV1"]) == {"f:data", "f:metadata"}
    assert entries[0]["fieldsV1"]["f:metadata"] == {"f:labels": {"f:x": {}}}
    # no fieldManager: the server names the client's user agent, as the real one does
    node_entries = cluster_a.node("a-w-1")["metadata"]["managedFields"]
    assert [e["manager"] for e in node_entries] == ["OpenAPI-Generator"]
